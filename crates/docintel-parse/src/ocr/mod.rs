//! OCR of scanned pages (issue 21): a PDF page with no text layer that draws an image, or
//! whose text layer lost most of its text (fonts without a Unicode map: the glyphs show, the
//! text behind them is unknown), is rendered in process (`render.rs`, hayro), read by the
//! `tesseract` program (`tesseract.rs`), and its words grouped into lines with boxes in the
//! page's PDF space and a confidence each. Pages with a readable text layer are never read
//! this way.
//!
//! Tesseract absent: one diagnostic, the text layer only. A page that fails to render or to
//! be read: a diagnostic naming the file and page. At most [`OcrOptions::max_pages`] pages
//! per document are read (a diagnostic lists the others).

mod render;
mod tesseract;

pub use render::{PageImage, render_page};

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use docintel_schema::{BBox, Diagnostic, Severity};

use crate::collect::{Gap, RawLine, reading_order};
use crate::workers::{panic_message, par_map};

/// Pages read by OCR per document unless [`OcrOptions::max_pages`] says otherwise: at
/// about 3 s a page on one core, a 50-page scan takes a minute or so on two cores.
pub const DEFAULT_OCR_MAX_PAGES: usize = 50;
/// The resolution pages are drawn at for OCR (Tesseract reads 10-12 pt text best at 300 dpi).
pub const DEFAULT_OCR_DPI: u32 = 300;
/// The most one page's `tesseract` run may take before it is stopped.
const PAGE_OCR_LIMIT: Duration = Duration::from_secs(120);
/// A page whose text layer has fewer visible characters than this is read by OCR (a
/// stray page number on a scan is no text layer).
const MIN_LAYER_CHARS: usize = 3;
/// The share of the page its images must cover, together, for an OCR read.
const MIN_IMAGE_SHARE: f32 = 0.05;
/// A text layer that gives no text for at least this share of the glyphs it shows has lost
/// most of the page's text (what it gives is scraps: "ˇ", "#˜$%& '"): the page is read by OCR.
const LOST_TEXT_SHARE: f32 = 0.5;
/// Fewer glyphs than this are no text layer to judge (a page number, a stray symbol).
const MIN_GLYPHS: usize = 20;

/// How scanned pages are read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OcrOptions {
    /// Read scanned pages at all.
    pub enabled: bool,
    /// The tesseract program; `None`: `tesseract` on `PATH`.
    pub tesseract: Option<PathBuf>,
    /// At most this many pages read per document (the first ones); 0 reads none.
    pub max_pages: usize,
    /// Resolution the pages are drawn at, dots per inch.
    pub dpi: u32,
}

impl Default for OcrOptions {
    fn default() -> OcrOptions {
        OcrOptions { enabled: true, tesseract: None, max_pages: DEFAULT_OCR_MAX_PAGES, dpi: DEFAULT_OCR_DPI }
    }
}

impl OcrOptions {
    /// No OCR at all.
    pub fn disabled() -> OcrOptions {
        OcrOptions { enabled: false, ..OcrOptions::default() }
    }

    /// These options with `program` as the tesseract to run.
    pub fn with_tesseract(self, program: impl Into<PathBuf>) -> OcrOptions {
        OcrOptions { tesseract: Some(program.into()), ..self }
    }

    /// These options reading at most `pages` pages per document (0: none).
    pub fn with_max_pages(self, pages: usize) -> OcrOptions {
        OcrOptions { max_pages: pages, ..self }
    }
}

/// One line read from a page image.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ReadLine {
    pub(crate) text: String,
    pub(crate) bbox: BBox,
    /// Mean word confidence, 0 to 1.
    pub(crate) confidence: f32,
    /// The font size (points) its words' boxes show, see [`em_size`].
    pub(crate) font_size: f32,
}

/// What OCR gave for one document: lines per page (1-based) and what to report.
#[derive(Debug, Default)]
pub(crate) struct OcrResult {
    pub(crate) pages: BTreeMap<u32, Vec<ReadLine>>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// `tesseract, eng+fra, 300 dpi`: how the lines were read, for the summary.
    pub(crate) engine: String,
    /// Wall time of the OCR pass.
    pub(crate) elapsed: Duration,
}

/// What the parser found of a page's text layer: the page's number (1-based), the visible
/// characters of its text layer, the share of the page its images cover, and the glyphs its
/// text operators show with those that gave no text (no Unicode mapping).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageText {
    pub(crate) page: u32,
    pub(crate) layer_chars: usize,
    pub(crate) image_share: f32,
    pub(crate) glyphs: usize,
    pub(crate) unmapped: usize,
}

impl PageText {
    /// Whether the text layer lost most of the text it shows (see [`LOST_TEXT_SHARE`]).
    fn lost_text(&self) -> bool {
        self.glyphs >= MIN_GLYPHS && self.unmapped as f32 >= LOST_TEXT_SHARE * self.glyphs as f32
    }
}

/// Whether a page should be read by OCR: a scan (no text layer, an image drawn) or a page
/// whose text layer lost most of its text.
pub(crate) fn wants_ocr(page: &PageText) -> bool {
    (page.layer_chars < MIN_LAYER_CHARS && page.image_share >= MIN_IMAGE_SHARE) || page.lost_text()
}

/// Reads the pages that want it (see [`wants_ocr`]) of the PDF `bytes` named `name`.
pub(crate) fn read_pages(
    name: &str,
    bytes: &[u8],
    password: Option<&str>,
    pages: &[PageText],
    options: &OcrOptions,
) -> OcrResult {
    let started = Instant::now();
    let mut result = OcrResult::default();
    let wanted: Vec<u32> = pages.iter().filter(|p| wants_ocr(p)).map(|p| p.page).collect();
    if wanted.is_empty() || !options.enabled {
        return result;
    }
    let tesseract = match tesseract::find(options.tesseract.as_deref()) {
        Ok(t) => t,
        Err(why) => {
            result.diagnostics.push(Diagnostic::new(
                Severity::Warning,
                wanted.first().copied(),
                format!(
                    "{name}: OCR unavailable: {why} (install it with scripts/setup.sh, or set DOCINTEL_TESSERACT): {} page(s) with no readable text layer left unread: {}",
                    wanted.len(),
                    page_list(&wanted)
                ),
            ));
            return result;
        }
    };
    let (read, skipped) = wanted.split_at(wanted.len().min(options.max_pages));
    if !skipped.is_empty() {
        result.diagnostics.push(Diagnostic::new(
            Severity::Warning,
            skipped.first().copied(),
            format!(
                "{name}: OCR limited to {} page(s) per document: {} more page(s) with no readable text layer left unread: {}",
                options.max_pages,
                skipped.len(),
                page_list(skipped)
            ),
        ));
    }
    let data = Arc::new(bytes.to_vec());
    let outcomes = par_map(read, |_, &page| read_page(&data, password, page, &tesseract, options.dpi));
    for (&page, outcome) in read.iter().zip(outcomes) {
        match outcome.unwrap_or_else(|| Err("the OCR worker died".into())) {
            Ok(lines) => {
                result.pages.insert(page, lines);
            }
            Err(why) => result.diagnostics.push(Diagnostic::new(
                Severity::Warning,
                Some(page),
                format!("{name}: page {page}: OCR failed, the page has no text: {why}"),
            )),
        }
    }
    result.engine = format!("tesseract, {}, {} dpi", tesseract.languages, options.dpi);
    result.elapsed = started.elapsed();
    result
}

/// Renders and reads one page (1-based); a panic in the renderer is an error, not an abort.
fn read_page(
    data: &Arc<Vec<u8>>,
    password: Option<&str>,
    page: u32,
    tesseract: &tesseract::Tesseract,
    dpi: u32,
) -> Result<Vec<ReadLine>, String> {
    let drawn = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        render::draw(data, password, page as usize - 1, dpi as f32)
    }))
    .map_err(|panic| format!("the renderer panicked: {}", panic_message(&panic)))?
    .map_err(|why| format!("cannot render the page: {why}"))?;
    let words = tesseract.words(&drawn.image.pgm(), drawn.image.dpi, PAGE_OCR_LIMIT)?;
    // Lines are ordered as the page shows (points, y up, origin bottom-left of the image),
    // which is not PDF space on a page turned by `/Rotate`; then their boxes go to PDF space.
    let points = 72.0 / f64::from(drawn.image.dpi);
    let height = f64::from(drawn.image.height);
    let shown = |l: f64, t: f64, r: f64, b: f64| BBox {
        x0: (l * points) as f32,
        y0: ((height - b) * points) as f32,
        x1: (r * points) as f32,
        y1: ((height - t) * points) as f32,
    };
    let lines = in_reading_order(group_lines(&words, shown));
    let pixels = |v: f32| f64::from(v) / points;
    Ok(lines
        .into_iter()
        .map(|line| {
            let b = line.bbox;
            let bbox = drawn.pdf_box(pixels(b.x0), height - pixels(b.y1), pixels(b.x1), height - pixels(b.y0));
            ReadLine { bbox, ..line }
        })
        .collect())
}

/// The lines in the text layer's reading order (`collect::reading_order`: rows top to
/// bottom, or columns at a gutter), so a row's label and value read as they would from a
/// text layer; each keeps the confidence of the OCR line it comes from.
fn in_reading_order(lines: Vec<(RawLine, f32)>) -> Vec<ReadLine> {
    let raw: Vec<RawLine> = lines.iter().map(|(line, _)| line.clone()).collect();
    let mean = lines.iter().map(|(_, c)| c).sum::<f32>() / lines.len().max(1) as f32;
    reading_order(raw)
        .into_iter()
        .map(|line| {
            // A line split at a column gutter is a piece of one OCR line: the one holding it.
            let (cx, cy) = ((line.bbox.x0 + line.bbox.x1) / 2.0, (line.bbox.y0 + line.bbox.y1) / 2.0);
            let confidence = lines
                .iter()
                .find(|(l, _)| {
                    l.text.contains(line.text.as_str())
                        && (l.bbox.x0..=l.bbox.x1).contains(&cx)
                        && (l.bbox.y0..=l.bbox.y1).contains(&cy)
                })
                .map_or(mean, |(_, c)| *c);
            ReadLine { text: line.text, bbox: line.bbox, confidence, font_size: line.font_size }
        })
        .collect()
}

/// A gap between two words of one Tesseract line wider than this share of the line's
/// height (about 1.2 ems) starts a new line, as the text layer starts one past 0.8 em
/// (`collect::GAP_BREAK_EM`): Tesseract reads a row of a two-column list or of a table
/// as one line ("Cataract   m. Surgery of gall bladder"), where a text layer holds each
/// cell as its own line. Word spaces, even justified ones, stay well under it.
const OCR_BREAK_HEIGHTS: f64 = 1.0;

/// Tesseract's words grouped by (block, paragraph, line) and cut at gaps wider than
/// [`OCR_BREAK_HEIGHTS`] and at table rules ([`is_rule`]), as the text layer's lines are
/// collected (text, box, size, word gaps), with their mean confidence; lines with no letter
/// or digit (specks) are dropped.
fn group_lines(words: &[tesseract::Word], pdf_box: impl Fn(f64, f64, f64, f64) -> BBox) -> Vec<(RawLine, f32)> {
    let mut lines: Vec<(RawLine, f32)> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let key = words[i].line_key;
        let end = words[i..].iter().position(|w| w.line_key != key).map_or(words.len(), |n| i + n);
        let group = &words[i..end];
        i = end;
        let glued = email_glue(&group.iter().map(|w| w.text.as_str()).collect::<Vec<_>>());
        let top = group.iter().map(|w| w.top).fold(f64::INFINITY, f64::min);
        let bottom = group.iter().map(|w| w.top + w.height).fold(f64::NEG_INFINITY, f64::max);
        let widest_space = OCR_BREAK_HEIGHTS * (bottom - top);
        let mut from = 0;
        for j in 0..=group.len() {
            let rule = j < group.len() && is_rule(&group[j].text);
            let breaks = j == group.len()
                || rule
                || (j > from && !glued[j] && group[j].left - (group[j - 1].left + group[j - 1].width) > widest_space);
            if breaks {
                if j > from {
                    lines.extend(one_line(&group[from..j], &glued[from..j], &pdf_box));
                }
                from = if rule { j + 1 } else { j };
            }
        }
    }
    lines
}

/// A table's vertical rule read as a word (`|`, `¦`, `│`): a cell boundary, which the text
/// layer has as a drawn line, not text. The line is cut there and the rule dropped
/// ("hospitalisation | Within fifteen days" is two cells).
fn is_rule(word: &str) -> bool {
    !word.is_empty() && word.chars().all(|c| matches!(c, '|' | '¦' | '│' | '┃'))
}

/// One line of words: the words with a space between them (none where `glued`), each
/// space's byte offset with the words' edges around it, the box around them all and their
/// mean confidence; `None` for a line with no letter or digit.
fn one_line(
    words: &[tesseract::Word],
    glued: &[bool],
    pdf_box: &impl Fn(f64, f64, f64, f64) -> BBox,
) -> Option<(RawLine, f32)> {
    let boxes: Vec<BBox> = words.iter().map(|w| pdf_box(w.left, w.top, w.left + w.width, w.top + w.height)).collect();
    let mut text = String::new();
    let mut gaps: Vec<Gap> = Vec::new();
    for (j, w) in words.iter().enumerate() {
        if j > 0 && !glued[j] {
            gaps.push(Gap { at: text.len(), x_end: boxes[j - 1].x1, x_start: boxes[j].x0 });
            text.push(' ');
        }
        text.push_str(&w.text);
    }
    if !text.chars().any(char::is_alphanumeric) {
        return None;
    }
    let left = words.iter().map(|w| w.left).fold(f64::INFINITY, f64::min);
    let top = words.iter().map(|w| w.top).fold(f64::INFINITY, f64::min);
    let right = words.iter().map(|w| w.left + w.width).fold(f64::NEG_INFINITY, f64::max);
    let bottom = words.iter().map(|w| w.top + w.height).fold(f64::NEG_INFINITY, f64::max);
    let confidence = words.iter().map(|w| w.confidence).sum::<f32>() / words.len() as f32 / 100.0;
    let bbox = pdf_box(left, top, right, bottom);
    let font_size = em_size(words.iter().zip(&boxes).map(|(w, b)| (w.text.as_str(), b.y1 - b.y0)))
        // No letter or digit to measure: the box holds ascenders and descenders, about 1.2 ems.
        .unwrap_or((bbox.y1 - bbox.y0) / 1.2);
    Some((RawLine { text, bbox, font_size, gaps, hidden: None }, confidence.clamp(0.0, 1.0)))
}

/// Where a Latin glyph's ink reaches, in ems: capitals, digits and ascenders ("PREAMBLE",
/// "1", "bd") to about 0.72 above the baseline, lower-case letters without one ("acme") to
/// the x-height, about 0.5; descenders ("gpy") and brackets about 0.21 below it.
const CAP_HEIGHT_EM: f32 = 0.72;
const X_HEIGHT_EM: f32 = 0.5;
const DESCENDER_EM: f32 = 0.21;

/// The font size of a line from its words' box heights (points) and the letters in them: each
/// word's height over the part of an em its letters reach ([`CAP_HEIGHT_EM`]…), their median
/// weighted by characters. A box's height alone says a line in capitals ("1 PREAMBLE") is set
/// smaller than the prose around it, and one with descenders larger, which misleads the heading
/// detector. `None` when no word has a letter or digit.
fn em_size<'a>(words: impl Iterator<Item = (&'a str, f32)>) -> Option<f32> {
    let sizes = words
        .filter_map(|(text, height)| {
            let inked = text.chars().filter(|c| c.is_alphanumeric()).count();
            if inked == 0 || height <= 0.0 {
                return None;
            }
            let tall = |c: char| {
                c.is_uppercase() || c.is_numeric() || "bdfhiklt".contains(c) || (c.is_alphabetic() && !c.is_ascii())
            };
            let top = if text.chars().any(|c| tall(c) || "()[]{}|%$&#@?!/".contains(c)) {
                CAP_HEIGHT_EM
            } else {
                X_HEIGHT_EM
            };
            let bottom = if text.chars().any(|c| "gjpqy()[]{}|".contains(c)) { DESCENDER_EM } else { 0.0 };
            Some((height / (top + bottom), inked))
        })
        .collect();
    crate::headings::weighted_median(sizes)
}

/// For each word, whether it joins the word before it with no space: Tesseract reads the
/// wide `@` of an e-mail address as a word boundary (`customer.relations @nic.co.in`,
/// `bimalokpal.kolkata @ cioins.co.in`). A word is glued only where the joined text is an
/// address: a name before the `@`, a dotted domain after it.
fn email_glue(words: &[&str]) -> Vec<bool> {
    let name_end = |w: &str| w.chars().last().is_some_and(|c| c.is_alphanumeric() || c == '_');
    let domain = |w: &str| {
        let w = w.trim_end_matches(|c: char| !c.is_alphanumeric());
        let tld = w.rsplit('.').next().unwrap_or("");
        w.chars().next().is_some_and(char::is_alphanumeric)
            && w.contains('.')
            && tld.len() >= 2
            && tld.chars().all(char::is_alphabetic)
    };
    let mut glue = vec![false; words.len()];
    for j in 1..words.len() {
        let (before, word) = (words[j - 1], words[j]);
        if word == "@" {
            if name_end(before) && words.get(j + 1).is_some_and(|next| domain(next)) {
                glue[j] = true;
                glue[j + 1] = true;
            }
        } else if let Some(rest) = word.strip_prefix('@') {
            glue[j] |= name_end(before) && !before.contains('@') && domain(rest);
        } else if let Some(name) = before.strip_suffix('@') {
            glue[j] |= name_end(name) && !name.contains('@') && domain(word);
        }
    }
    glue
}

/// `1-3, 7, 9`: ascending page numbers with runs collapsed (the first 20 runs).
fn page_list(pages: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &p in pages {
        match runs.last_mut() {
            Some(run) if run.1 + 1 == p => run.1 = p,
            _ => runs.push((p, p)),
        }
    }
    let shown: Vec<String> =
        runs.iter().take(20).map(|&(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") }).collect();
    let more = if runs.len() > 20 { " …" } else { "" };
    format!("{}{more}", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(key: (u32, u32, u32), left: f64, text: &str, confidence: f32) -> tesseract::Word {
        tesseract::Word { line_key: key, left, top: 100.0, width: 50.0, height: 20.0, confidence, text: text.into() }
    }

    /// The words grouped into lines, pixel boxes kept as they are.
    fn read(words: &[tesseract::Word]) -> Vec<(RawLine, f32)> {
        group_lines(words, |l, t, r, b| BBox { x0: l as f32, y0: t as f32, x1: r as f32, y1: b as f32 })
    }

    fn texts(lines: &[(RawLine, f32)]) -> Vec<&str> {
        lines.iter().map(|(l, _)| l.text.as_str()).collect()
    }

    #[test]
    fn words_become_lines_with_their_mean_confidence_and_specks_are_dropped() {
        let words = vec![
            word((1, 1, 1), 10.0, "Total", 90.0),
            word((1, 1, 1), 70.0, "due", 80.0),
            word((1, 1, 2), 10.0, "|", 30.0),
            word((2, 1, 1), 10.0, "4.11", 70.0),
        ];
        let lines = read(&words);
        assert_eq!(texts(&lines), ["Total due", "4.11"]);
        assert!((lines[0].1 - 0.85).abs() < 1e-6);
        assert_eq!(lines[0].0.bbox, BBox { x0: 10.0, y0: 100.0, x1: 120.0, y1: 120.0 });
        assert_eq!(lines[0].0.gaps, [Gap { at: 5, x_end: 60.0, x_start: 70.0 }]);
    }

    #[test]
    fn a_line_is_cut_where_its_words_stand_a_column_apart() {
        // Words 20 px high: a 10 px space keeps the line, a 140 px gap cuts it.
        let words = vec![
            word((1, 1, 1), 10.0, "Cataract", 90.0),
            word((1, 1, 1), 200.0, "m.", 80.0),
            word((1, 1, 1), 260.0, "Surgery", 70.0),
        ];
        let lines = read(&words);
        assert_eq!(texts(&lines), ["Cataract", "m. Surgery"]);
        assert_eq!(lines[1].0.bbox, BBox { x0: 200.0, y0: 100.0, x1: 310.0, y1: 120.0 });
        assert_eq!(lines[1].0.gaps, [Gap { at: 2, x_end: 250.0, x_start: 260.0 }]);
        assert!((lines[1].1 - 0.75).abs() < 1e-6);
        // A table rule read as a word is a cell boundary, and no text.
        let words = vec![
            word((1, 1, 1), 10.0, "Reimbursement", 90.0),
            word((1, 1, 1), 70.0, "|", 40.0),
            word((1, 1, 1), 130.0, "Within", 90.0),
            word((1, 1, 1), 190.0, "15", 90.0),
            word((1, 1, 1), 250.0, "days", 90.0),
            word((1, 1, 1), 310.0, "||", 40.0),
        ];
        let lines = read(&words);
        assert_eq!(texts(&lines), ["Reimbursement", "Within 15 days"]);
    }

    #[test]
    fn a_line_size_reads_its_letters_not_only_its_box() {
        // A 10-point font: capitals 7.2 pt tall, prose with descenders 9.3 pt, x-height 5 pt.
        let size = |words: &[(&str, f32)]| em_size(words.iter().copied()).unwrap();
        assert!((size(&[("1", 7.2), ("PREAMBLE", 7.2)]) - 10.0).abs() < 0.01);
        assert!((size(&[("Benign", 9.3), ("prostatic", 9.3), ("hypertrophy", 9.3)]) - 10.0).abs() < 0.01);
        assert!((size(&[("acme", 5.0), ("ones", 5.0)]) - 10.0).abs() < 0.01);
        // The median, weighted by letters: one odd box does not move it.
        assert!((size(&[("The", 7.2), ("Grace", 14.0), ("period", 9.3), ("applies", 9.3)]) - 10.0).abs() < 0.01);
        assert_eq!(em_size([(".", 3.0), ("—", 1.0)].into_iter()), None);
    }

    #[test]
    fn an_address_cut_at_its_at_sign_is_joined_again() {
        let words = vec![
            word((1, 1, 1), 10.0, "email:", 90.0),
            word((1, 1, 1), 70.0, "customer.relations", 90.0),
            word((1, 1, 1), 130.0, "@nic.co.in,", 90.0),
            word((1, 1, 1), 190.0, "griho@", 90.0),
            word((1, 1, 1), 250.0, "nic.co.in", 90.0),
            word((1, 1, 2), 10.0, "bimalokpal.kolkata", 90.0),
            word((1, 1, 2), 70.0, "@", 90.0),
            word((1, 1, 2), 130.0, "cioins.co.in", 90.0),
            word((1, 1, 3), 10.0, "meet", 90.0),
            word((1, 1, 3), 70.0, "@", 90.0),
            word((1, 1, 3), 130.0, "5pm.", 90.0),
            word((1, 1, 3), 190.0, "in", 90.0),
            word((1, 1, 3), 250.0, "@home", 90.0),
        ];
        let lines = read(&words);
        assert_eq!(
            texts(&lines),
            [
                "email: customer.relations@nic.co.in, griho@nic.co.in",
                "bimalokpal.kolkata@cioins.co.in",
                "meet @ 5pm. in @home"
            ]
        );
        // The first line keeps its two real spaces, each gap at its byte offset.
        assert_eq!(
            lines[0].0.gaps,
            [Gap { at: 6, x_end: 60.0, x_start: 70.0 }, Gap { at: 36, x_end: 180.0, x_start: 190.0 }]
        );
        assert!(lines[1].0.gaps.is_empty());
        assert_eq!(lines[2].0.gaps.len(), 4);
    }

    #[test]
    fn lines_are_put_in_rows_top_to_bottom_keeping_their_confidence() {
        // PDF space (y up): a value read as its own block sits on its label's row.
        let line = |text: &str, x0: f32, y0: f32| RawLine {
            text: text.into(),
            bbox: BBox { x0, y0, x1: x0 + 60.0, y1: y0 + 10.0 },
            font_size: 8.0,
            gaps: Vec::new(),
            hidden: None,
        };
        let read = vec![
            (line("Total", 10.0, 500.0), 0.9),
            (line("Charges", 10.0, 480.0), 0.8),
            (line("$4.11", 300.0, 501.0), 0.7),
        ];
        let ordered = in_reading_order(read);
        let texts: Vec<(&str, f32)> = ordered.iter().map(|l| (l.text.as_str(), l.confidence)).collect();
        assert_eq!(texts, [("Total", 0.9), ("$4.11", 0.7), ("Charges", 0.8)]);
    }

    #[test]
    fn only_pages_without_readable_text_are_read() {
        let page = |layer_chars, image_share| PageText { page: 1, layer_chars, image_share, glyphs: 0, unmapped: 0 };
        assert!(wants_ocr(&page(0, 0.9)));
        assert!(wants_ocr(&page(2, 0.9)), "a stray page number is no text layer");
        assert!(!wants_ocr(&page(40, 0.9)), "a page with a text layer is never read by OCR");
        assert!(!wants_ocr(&page(0, 0.0)), "a blank page has nothing to read");
        // A text layer whose fonts have no Unicode map for most glyphs shows text it cannot
        // give: the page is read, images or not; a few unmapped symbols are no such loss.
        let lost = |glyphs, unmapped| PageText { page: 1, layer_chars: 300, image_share: 0.0, glyphs, unmapped };
        assert!(wants_ocr(&lost(2000, 1400)));
        assert!(!wants_ocr(&lost(2000, 60)), "a few symbols without text are no lost page");
        assert!(!wants_ocr(&lost(12, 12)), "too few glyphs to judge");
    }

    #[test]
    fn page_lists_collapse_runs() {
        assert_eq!(page_list(&[1, 2, 3, 7, 9, 10]), "1-3, 7, 9-10");
    }
}
