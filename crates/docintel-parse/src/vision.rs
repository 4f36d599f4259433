//! Vision: a model describes the pages whose meaning is in a picture.
//!
//! [`vision_pages`] picks the figure pages of [`crate::vision_candidates`] (a real figure,
//! never an image repeated on every page: a logo costs nothing) and the scanned pages OCR
//! read badly (mean line confidence under [`LOW_OCR_CONFIDENCE`], or no OCR line at all).
//! [`describe_pages`] draws each at [`VISION_DPI`] (the renderer OCR uses), hashes the PNG
//! (SHA-256), and asks the model once per distinct image — never when the cache folder
//! already holds the reply for that image, model and prompt — for the lines of a faithful
//! description ([`vision_request`], schema [`VISION_SCHEMA_NAME`]). The lines go after the
//! page's own, marked by an info diagnostic's `vision_lines`
//! ([`docintel_schema::LineSource::Vision`]): retrieval, citation checks and highlighting
//! read them like any line, and nothing takes them for printed text. At most
//! [`VisionOptions::max_calls`] calls per document; a model that refuses images is said
//! once and the document is read without vision. Knows nothing of the transport: any
//! [`LanguageModel`] (an OpenAI-compatible server, recorded replies).

use std::collections::HashMap;
use std::path::PathBuf;

use docintel_schema::{
    BBox, ChatMessage, Diagnostic, LanguageModel, LlmRequest, LlmResponse, ParsedDocument, Severity, Usage,
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The version of the vision prompt and reply schema (part of every cache key).
pub const VISION_PROMPT_VERSION: &str = "vision/0.1";
/// The reply schema's name.
pub const VISION_SCHEMA_NAME: &str = "page_description";
/// Model calls one document may make unless the caller says otherwise.
pub const DEFAULT_VISION_MAX_CALLS: usize = 20;
/// A scanned page whose OCR lines' mean confidence is under this is shown to the model.
pub const LOW_OCR_CONFIDENCE: f32 = 0.6;
/// The resolution pages are drawn at for the model (a US Letter page is 850 × 1100 px).
pub const VISION_DPI: u32 = 100;
/// Lines kept of one reply, and characters of one line.
const MAX_LINES: usize = 40;
const MAX_LINE_CHARS: usize = 400;

/// How the vision step runs for one document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VisionOptions {
    /// The model asked (the request's `model`, and part of the cache key).
    pub model: String,
    /// The most model calls for one document (cache hits are free).
    pub max_calls: usize,
    /// A folder holding one reply per image (`<key>.json`); `None`: no cache.
    pub cache_dir: Option<PathBuf>,
}

/// Why a page is shown to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageKind {
    /// A page with a text layer and a real figure.
    Figure,
    /// A scanned page OCR read badly (or not at all).
    Scan,
}

/// What the vision step did for one document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VisionRun {
    /// The pages described (by a call or from the cache), ascending.
    pub pages: Vec<u32>,
    /// Model calls made.
    pub calls: u32,
    /// Pages described from the cache.
    pub cached: u32,
    /// Tokens the calls spent.
    pub usage: Usage,
    /// What was not described and why.
    pub notes: Vec<String>,
    /// One trace detail per page looked at: `page`, `kind`, `image_sha256`, `cached`,
    /// `line_ids`, and for a call the request's prompt version, `usage` and the verbatim
    /// `raw` reply.
    pub events: Vec<Value>,
}

/// The pages the vision step looks at, ascending, each with why: pages whose figure is a
/// picture (an `image` or a `montage`), pages whose `vector` figure the page captions as a
/// figure ("Figure 3:", "Fig. 2", [`is_figure_caption`]), and scanned pages whose OCR
/// confidence is low.
///
/// An uncaptioned `vector` figure is not looked at: ruled tables reach that rule too (an
/// invoice's grid would cost a model call per page and add nothing its text does not
/// say), while a chart drawn with paths is captioned in the documents that print one.
pub fn vision_pages(doc: &ParsedDocument) -> Vec<(u32, PageKind)> {
    let (figures, scanned) = crate::vision_candidates(doc);
    let kind_of = |page: u32| doc.pages.iter().find(|p| p.page == page).and_then(|p| p.figure_kind.as_deref());
    let captioned = |page: u32| doc.lines.iter().any(|l| l.page == page && is_figure_caption(&l.text));
    let shown = |page: u32| match kind_of(page) {
        Some("image" | "montage") => true,
        Some("vector") => captioned(page),
        _ => false,
    };
    let mut pages: Vec<(u32, PageKind)> =
        figures.into_iter().filter(|&p| shown(p)).map(|p| (p, PageKind::Figure)).collect();
    for page in scanned {
        let confidences: Vec<f32> =
            doc.lines.iter().filter(|l| l.page == page).filter_map(|l| doc.ocr_confidence(l.line_id)).collect();
        let mean =
            if confidences.is_empty() { 0.0 } else { confidences.iter().sum::<f32>() / confidences.len() as f32 };
        if mean < LOW_OCR_CONFIDENCE {
            pages.push((page, PageKind::Scan));
        }
    }
    pages.sort_unstable_by_key(|&(page, _)| page);
    pages
}

/// Whether a line opens a figure's caption: a figure word ("Figure", "Fig.", "Figura",
/// "Abbildung", "Abb.", "Graphique") and its number ("Figure 3: …", "Fig. 2b", "FIGURE 1").
pub fn is_figure_caption(text: &str) -> bool {
    let lower = text.trim_start().to_lowercase();
    ["figure", "figura", "fig.", "fig", "abbildung", "abb.", "graphique"]
        .iter()
        .find_map(|word| lower.strip_prefix(word))
        .map(str::trim_start)
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// The request that asks `model` to describe one page image (sent with the image).
pub fn vision_request(model: &str, kind: PageKind) -> LlmRequest {
    let task = match kind {
        PageKind::Figure => {
            "The image is one page of a document. Its printed text is already known; describe its figures \
             (charts, diagrams, photographs, drawings, tables drawn as pictures): what each shows, and every \
             label, number, unit, axis, legend entry and trend you can read in it."
        }
        PageKind::Scan => {
            "The image is one scanned page of a document whose text could not be read reliably. Transcribe \
             the text you can read, in reading order, then describe any figure on it: what it shows, and \
             every label, number and unit you can read in it."
        }
    };
    let system = "You describe document page images for a question-answering system that cites its sources. \
                  Be faithful: write only what the image shows, never a guess or outside knowledge; when \
                  something cannot be read, say so. Reply with JSON: {\"lines\": [...]}, one short \
                  self-contained sentence or transcribed line per entry, at most 40 entries.";
    LlmRequest {
        model: model.to_owned(),
        messages: vec![
            ChatMessage { role: "system".to_owned(), content: system.to_owned() },
            ChatMessage { role: "user".to_owned(), content: task.to_owned() },
        ],
        schema_name: VISION_SCHEMA_NAME.to_owned(),
        schema: json!({
            "type": "object",
            "properties": {"lines": {"type": "array", "items": {"type": "string"}}},
            "required": ["lines"],
            "additionalProperties": false
        }),
        temperature: 0.0,
        max_output_tokens: Some(1500),
    }
}

/// Describes the [`vision_pages`] of `doc` (drawn from `pdf`, the document's bytes) with
/// `model` and puts the descriptions on their pages (see the module docs).
pub fn describe_pages<M: LanguageModel>(
    doc: &mut ParsedDocument,
    pdf: &[u8],
    password: Option<&str>,
    model: &M,
    options: &VisionOptions,
) -> VisionRun {
    let mut run = VisionRun::default();
    let mut seen: HashMap<String, Vec<String>> = HashMap::new();
    let pages = vision_pages(doc);
    let mut over_bound = Vec::new();
    for (index, &(page, kind)) in pages.iter().enumerate() {
        let png = match crate::render_page(pdf, password, page, VISION_DPI).and_then(|image| encode_png(&image)) {
            Ok(png) => png,
            Err(reason) => {
                run.notes.push(format!("p.{page}: not described: the page could not be drawn: {reason}"));
                continue;
            }
        };
        let image_sha256 = hex(&Sha256::digest(&png));
        let key = cache_key(&image_sha256, &options.model, kind);
        let mut event = json!({
            "page": page,
            "kind": match kind { PageKind::Figure => "figure", PageKind::Scan => "scan" },
            "image_sha256": image_sha256,
            "prompt_version": VISION_PROMPT_VERSION,
        });
        // The same image on two pages (or a page asked about before) costs nothing.
        let lines = if let Some(lines) = seen.get(&key).cloned().or_else(|| read_cache(options, &key)) {
            run.cached += 1;
            event["cached"] = json!(true);
            lines
        } else {
            if run.calls as usize >= options.max_calls {
                over_bound.extend(pages[index..].iter().map(|&(p, _)| p));
                break;
            }
            let request = vision_request(&options.model, kind);
            let reply = match model.complete_with_images(&request, std::slice::from_ref(&png)) {
                None => {
                    run.notes.push("vision skipped: the model transport cannot send images".to_owned());
                    break;
                }
                Some(reply) => reply,
            };
            run.calls += 1;
            let response = match reply {
                Ok(response) => response,
                Err(error) if M::rejects_images(&error) => {
                    run.notes.push(format!(
                        "vision skipped: the model {} does not read images ({error}); the document is read without it",
                        options.model
                    ));
                    break;
                }
                Err(error) => {
                    run.notes.push(format!("p.{page}: not described: the vision call failed: {error}"));
                    continue;
                }
            };
            add_usage(&mut run.usage, &response.usage);
            let Some(lines) = reply_lines(&response.content) else {
                run.notes.push(format!("p.{page}: not described: the vision reply is not {{\"lines\": [...]}}"));
                event["raw"] = response.raw.clone();
                run.events.push(event);
                continue;
            };
            write_cache(options, &key, &response);
            event["cached"] = json!(false);
            event["usage"] = json!(response.usage);
            event["raw"] = response.raw.clone();
            lines
        };
        seen.insert(key, lines.clone());
        let ids = put_on_page(doc, page, &lines, &options.model, &image_sha256);
        event["line_ids"] = json!(ids);
        if !ids.is_empty() {
            run.pages.push(page);
        }
        run.events.push(event);
    }
    if !over_bound.is_empty() {
        run.notes.push(format!(
            "{} page(s) not described: the bound of {} vision call(s) per document was reached (pages {})",
            over_bound.len(),
            options.max_calls,
            over_bound.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        ));
    }
    run
}

/// The reply's lines, trimmed, empty ones dropped, at most [`MAX_LINES`]; `None` when the
/// reply is not `{"lines": [string, ...]}`.
fn reply_lines(content: &str) -> Option<Vec<String>> {
    let value: Value = serde_json::from_str(content).ok()?;
    let lines = value.get("lines")?.as_array()?;
    let mut out = Vec::new();
    for line in lines {
        // One entry may hold several lines: each is its own line in the table.
        for piece in line.as_str()?.lines() {
            let piece = piece.split_whitespace().collect::<Vec<_>>().join(" ");
            if !piece.is_empty() && out.len() < MAX_LINES {
                out.push(piece.chars().take(MAX_LINE_CHARS).collect());
            }
        }
    }
    Some(out)
}

/// Puts `lines` after the page's own, the whole page as their box, marked as vision.
fn put_on_page(doc: &mut ParsedDocument, page: u32, lines: &[String], model: &str, image_sha256: &str) -> Vec<u32> {
    let Some(info) = doc.pages.iter().find(|p| p.page == page) else { return Vec::new() };
    let bbox = BBox { x0: 0.0, y0: 0.0, x1: info.width, y1: info.height };
    let ids = doc.insert_page_lines(page, lines, bbox);
    if !ids.is_empty() {
        let mut diagnostic = Diagnostic::new(
            Severity::Info,
            Some(page),
            format!(
                "{} line(s) describe the page image (vision model {model}, image sha256 {}): not printed text",
                ids.len(),
                &image_sha256[..16]
            ),
        );
        diagnostic.vision_lines.clone_from(&ids);
        doc.diagnostics.push(diagnostic);
    }
    ids
}

fn cache_key(image_sha256: &str, model: &str, kind: PageKind) -> String {
    let kind = match kind {
        PageKind::Figure => "figure",
        PageKind::Scan => "scan",
    };
    hex(&Sha256::digest(format!("{VISION_PROMPT_VERSION}\n{model}\n{kind}\n{image_sha256}").as_bytes()))
}

fn read_cache(options: &VisionOptions, key: &str) -> Option<Vec<String>> {
    let path = options.cache_dir.as_ref()?.join(format!("{key}.json"));
    let response: LlmResponse = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    reply_lines(&response.content)
}

/// Stores the reply; a cache that cannot be written only costs a call next time.
fn write_cache(options: &VisionOptions, key: &str, response: &LlmResponse) {
    let Some(dir) = &options.cache_dir else { return };
    let Ok(json) = serde_json::to_vec_pretty(response) else { return };
    if std::fs::create_dir_all(dir).is_ok() {
        let tmp = dir.join(format!("{key}.json.tmp"));
        if std::fs::write(&tmp, json).is_ok() {
            let _ = std::fs::rename(&tmp, dir.join(format!("{key}.json")));
        }
    }
}

fn add_usage(total: &mut Usage, usage: &Usage) {
    total.input_tokens += usage.input_tokens;
    total.output_tokens += usage.output_tokens;
    total.cached_tokens += usage.cached_tokens;
}

fn encode_png(image: &crate::PageImage) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, image.width, image.height);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::Eight);
    encoder
        .write_header()
        .and_then(|mut writer| writer.write_image_data(&image.gray))
        .map_err(|e| format!("PNG encoding: {e}"))?;
    Ok(out)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
