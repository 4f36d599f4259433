//! docintel-parse: the document parsing brick.
//!
//! Turns a PDF (or a text, Markdown or DOCX file, see [`parse_file`]) into the
//! tables every later brick reads (see [`docintel_schema::ParsedDocument`]):
//! a **line table** (global 1-based `line_id`, page, line within page, text,
//! bounding box in PDF points), a **page table** (size, line and character
//! counts, text-layer flag, images, vector paths, figure flags and decorative
//! image hashes), a **TOC table** from the native outline or, without one,
//! rebuilt from a printed contents page or from numbered / styled headings, a
//! **document profile** (languages, tables, doc type, typical fields, a
//! one-line summary), and **diagnostics** for whatever was lost on the way.
//! Encrypted PDFs open with the empty password or [`ParseOptions::password`];
//! a broken cross-reference table is rebuilt from the object markers.
//! [`chunk_document`] cuts a parsed document into token-sized chunks,
//! [`vision_candidates`] lists the pages a vision model should look at and
//! [`describe_pages`] has a model describe them (see `vision.rs`).
//!
//! Text comes from `pdf-extract`, whose glyphs are collected and grouped into
//! lines here (baseline changes, backward jumps and wide gaps break lines;
//! small gaps become spaces; ligatures are expanded). Glyphs hidden by a
//! clipping path or outside the crop box are dropped. Lines are sorted top to
//! bottom, then left to right; on a two-column page (a gutter found from the
//! lines' x extents) each band between full-width lines reads left column,
//! then right column.
//!
//! Pages are parsed in parallel (scoped threads, one per core) and assembled
//! in page order, so the output does not depend on thread timing. Streams
//! are inflated once per document; each page's content is decoded once and
//! walked for graphics, clips and text; fonts and Form XObjects are built
//! once per document and shared by the workers (pdf-extract is vendored in
//! `vendor/pdf-extract` for this, see its `DOCINTEL-CHANGES.md`). Each page
//! has a time budget ([`PAGE_TIME_BUDGET`]).
//!
//! The parser never panics and never prints to stdout: every page is
//! extracted under `catch_unwind`, and a page that fails becomes a
//! [`Diagnostic`] with no lines. (A panic inside a dependency is still
//! reported on stderr by the default panic hook; this crate installs nothing
//! global.)
//!
//! ```no_run
//! use std::path::Path;
//!
//! let doc = docintel_parse::parse_pdf(Path::new("fixtures/invoices/AmazonWebServices.pdf"))?;
//! assert!(doc.check_invariants().is_ok());
//! for line in doc.lines.iter().take(3) {
//!     eprintln!("{} p{} {}", line.line_id, line.page, line.text);
//! }
//! # Ok::<(), docintel_parse::ParseError>(())
//! ```
#![warn(missing_docs)]

mod chunk;
mod collect;
mod contents;
mod dispatch;
mod doctype;
mod docx;
mod encrypt;
mod figures;
mod headings;
mod highlight;
mod lang;
mod objects;
mod ocr;
mod output;
mod page;
mod page_tree;
#[cfg(feature = "parquet")]
mod parquet_tables;
mod repair;
mod shared_pages;
mod tables;
mod textdoc;
mod toc;
mod vision;
mod workers;

pub use chunk::{ChunkConfig, chars_per_token, chunk_document};
pub use dispatch::{parse_file, parse_file_with_options};
pub use encrypt::ParseOptions;
pub use highlight::{HighlightError, highlight_pdf};
pub use ocr::{DEFAULT_OCR_DPI, DEFAULT_OCR_MAX_PAGES, OcrOptions, PageImage, render_page};
pub use output::{
    DOCUMENT_FILES, DocumentFolder, OutputError, PARSER_BUILD, content_hash, document_folder, is_up_to_date,
};
pub use page::PAGE_TIME_BUDGET;
#[cfg(feature = "parquet")]
pub use parquet_tables::write_tables;
pub use vision::{
    DEFAULT_VISION_MAX_CALLS, LOW_OCR_CONFIDENCE, PageKind, VISION_DPI, VISION_PROMPT_VERSION, VISION_SCHEMA_NAME,
    VisionOptions, VisionRun, describe_pages, is_figure_caption, vision_pages, vision_request,
};

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use docintel_schema::{
    Diagnostic, DocumentFormat, DocumentProfile, Line, OcrLine, PageInfo, ParsedDocument, Severity, TocEntry,
};
use pdf_extract::{ContentCache, Document, FontCache, ObjectId};

use crate::page::{Page, UNMAPPED_MIN, UNMAPPED_SHARE, extract_page, scan_graphics};
use crate::workers::{panic_message, par_map};

/// An OCR line read with a lower mean word confidence is never a heading (its size is not
/// given to the heading detector): on scans, low confidence marks logos, stamps and specks
/// read as letters ("aT ict SX i 4"), and a line's size is read from its word boxes, which
/// such marks distort.
const HEADING_MIN_OCR_CONFIDENCE: f32 = 0.8;

/// Why a PDF could not be parsed at all. Every message names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The path does not exist.
    #[error("{path}: file not found")]
    NotFound {
        /// The path as given.
        path: String,
    },
    /// The file exists but could not be read.
    #[error("{path}: I/O error: {source}")]
    Io {
        /// The path as given.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The bytes do not start (within the first KiB) with a `%PDF-` header.
    #[error("{path}: not a PDF (no %PDF- header)")]
    NotPdf {
        /// The path or name as given.
        path: String,
    },
    /// The PDF is encrypted and cannot be opened with an empty user password.
    #[error("{path}: encrypted PDF: a password is needed to open it (none was given; use --password)")]
    Encrypted {
        /// The path or name as given.
        path: String,
    },
    /// The PDF is encrypted and the password given does not open it.
    #[error("{path}: encrypted PDF: the password given does not open it")]
    WrongPassword {
        /// The path or name as given.
        path: String,
    },
    /// The file is named or shaped like a Word document but cannot be read as one.
    #[error("{path}: malformed DOCX ({reason})")]
    BadDocx {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// lopdf could not load the file.
    #[error("{path}: malformed PDF ({reason})")]
    Malformed {
        /// The path or name as given.
        path: String,
        /// What the loader reported.
        reason: String,
    },
    /// Kept for API compatibility; no longer produced (DOCX is read).
    #[error("{path}: DOCX input is not supported yet")]
    DocxNotSupported {
        /// The path as given.
        path: String,
    },
    /// The file is neither a PDF nor text (nor a known format).
    #[error("{path}: unsupported format ({reason})")]
    UnsupportedFormat {
        /// The path as given.
        path: String,
        /// What the bytes look like.
        reason: String,
    },
    /// The document has no page, or no page could be processed at all.
    #[error("{path}: no readable page ({reason})")]
    NoReadablePage {
        /// The path or name as given.
        path: String,
        /// Why (no pages, or the first page's failure).
        reason: String,
    },
}

/// Parses the PDF at `path`. `ParsedDocument::source` is `path` as displayed.
pub fn parse_pdf(path: &Path) -> Result<ParsedDocument, ParseError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => ParseError::NotFound { path: name.clone() },
        _ => ParseError::Io { path: name.clone(), source },
    })?;
    parse_pdf_bytes(&name, &bytes)
}

/// Parses a PDF held in memory; `name` is used as the source and in errors.
pub fn parse_pdf_bytes(name: &str, bytes: &[u8]) -> Result<ParsedDocument, ParseError> {
    parse_pdf_bytes_with_options(name, bytes, &ParseOptions::default())
}

/// [`parse_pdf_bytes`] with options (a password for encrypted files, see [`ParseOptions`]).
pub fn parse_pdf_bytes_with_options(
    name: &str,
    bytes: &[u8],
    options: &ParseOptions,
) -> Result<ParsedDocument, ParseError> {
    let path = name.to_string();
    let head = &bytes[..bytes.len().min(1024)];
    if !head.windows(5).any(|w| w == b"%PDF-") {
        return Err(ParseError::NotPdf { path });
    }
    if let Some((at, _)) = objects::object_stream_bomb(bytes) {
        return Err(ParseError::Malformed {
            path,
            reason: format!(
                "the object stream at byte {at} decodes to more than {} MiB (a decompression bomb): not loaded",
                objects::MAX_STREAM_BYTES >> 20
            ),
        });
    }
    let (doc, load_notes) = encrypt::load(name, bytes, options)?;

    // Our own walk, not lopdf's `get_pages` (see `page_tree`: no capacity from `/Count`, no
    // recursion, a node budget).
    let tree = match catch_unwind(AssertUnwindSafe(|| page_tree::walk(&doc))) {
        Ok(tree) => tree,
        Err(panic) => {
            return Err(ParseError::Malformed { path, reason: format!("page tree: {}", panic_message(&panic)) });
        }
    };
    if tree.pages.is_empty() {
        let reason = tree.note().map_or_else(|| "the page tree is empty".into(), |n| format!("no page found ({n})"));
        return Err(ParseError::NoReadablePage { path, reason });
    }
    let mut diagnostics = load_notes;
    if let Some(note) = tree.note() {
        diagnostics.push(Diagnostic::new(Severity::Warning, None, note));
    }
    let pages: Vec<(u32, ObjectId)> = tree.pages.iter().enumerate().map(|(i, &id)| ((i + 1) as u32, id)).collect();

    let mut lines: Vec<Line> = Vec::new();
    let mut page_infos: Vec<PageInfo> = Vec::with_capacity(pages.len());
    let mut first_failure: Option<String> = None;
    let mut n_failed = 0usize;
    // Parse-internal side table: each line's dominant font size, and whether it is an
    // estimate (an OCR line's, from its word boxes) rather than the size the PDF sets.
    let mut font_sizes: Vec<(f32, bool)> = Vec::new();
    let sizes: Vec<(f32, f32)> = pages.iter().map(|&(_, id)| objects::page_size(&doc, id)).collect();
    // Pages are independent: each page's content is read and decoded once,
    // then walked for graphics, clips and text on a pre-digested document;
    // fonts and forms are built once per document, shared by the workers.
    // Results are kept in page order, so the output does not depend on
    // thread timing.
    let mut doc = doc;
    let page_ids: Vec<ObjectId> = pages.iter().map(|&(_, id)| id).collect();
    let repaired = objects::repair_content_lengths(&mut doc, bytes, &page_ids);
    if !repaired.is_empty() {
        let list: Vec<String> = repaired.iter().map(|(n, g)| format!("{n} {g} R")).collect();
        diagnostics.push(Diagnostic::new(
            Severity::Warning,
            None,
            format!("content stream(s) {} read up to `endstream` (their /Length is missing or wrong)", list.join(", ")),
        ));
    }
    for note in objects::prepare_for_text(&mut doc) {
        diagnostics.push(Diagnostic::new(Severity::Warning, None, note));
    }
    let doc = doc;
    let fonts = FontCache::new();
    let forms = ContentCache::new();
    let results = par_map(&pages, |i, &(page_key, page_id)| {
        let (width, height) = sizes[i];
        let content = objects::page_content(&doc, page_id);
        let scan = scan_graphics(&doc, page_id, width * height, &content, &forms);
        let page = Page { key: page_key, id: page_id, content: &content };
        let text = extract_page(&doc, &page, &fonts, &forms, PAGE_TIME_BUDGET);
        (scan, text)
    });
    let (scans, texts): (Vec<_>, Vec<_>) = results
        .into_iter()
        .map(|r| match r {
            Some((scan, text)) => (Some(scan), Some(text)),
            None => (None, None),
        })
        .unzip();
    // Pages with no text layer that draw an image, or whose text layer lost most of its
    // text, are read by OCR (`ocr`), in parallel.
    let page_texts: Vec<ocr::PageText> = scans
        .iter()
        .zip(&texts)
        .enumerate()
        .filter_map(|(i, (scan, text))| {
            let (Some(Ok(graphics)), Some(Ok(text))) = (scan, text) else { return None };
            let visible = text.lines.iter().filter(|l| l.hidden.is_none());
            Some(ocr::PageText {
                page: (i + 1) as u32,
                layer_chars: visible.map(|l| l.text.chars().filter(|c| !c.is_whitespace()).count()).sum(),
                image_share: graphics.images.iter().map(|image| image.share).sum(),
                glyphs: text.glyphs,
                unmapped: text.unmapped,
            })
        })
        .collect();
    let mut read = ocr::read_pages(name, bytes, options.password.as_deref(), &page_texts, &options.ocr);
    diagnostics.append(&mut read.diagnostics);
    let mut ocr_marks: Vec<OcrLine> = Vec::new();
    let mut graphics: Vec<Option<figures::PageGraphics>> = Vec::with_capacity(pages.len());
    // Pages whose fonts gave no text for some glyphs: (page, unmapped glyphs, glyphs).
    let mut unmapped_pages: Vec<(u32, usize, usize)> = Vec::new();
    // Pages whose lines come from OCR.
    let mut read_by_ocr: Vec<u32> = Vec::new();
    for (index, (scan, text)) in scans.into_iter().zip(texts).enumerate() {
        let page_no = (index + 1) as u32;
        let (width, height) = sizes[index];
        let scan = scan.unwrap_or_else(|| Err("worker thread lost the page".into()));
        graphics.push(match scan {
            Ok(g) => Some(g),
            Err(message) => {
                diagnostics.push(Diagnostic::new(
                    Severity::Info,
                    Some(page_no),
                    format!("page {page_no}: images and paths not counted: {message}"),
                ));
                None
            }
        });
        let raw = match text.unwrap_or_else(|| Err("worker thread lost the page".into())) {
            Ok(page) => {
                if page.forms_skipped {
                    diagnostics.push(Diagnostic::new(
                        Severity::Warning,
                        Some(page_no),
                        format!(
                            "page {page_no}: Form XObjects nested deeper than {} (a form drawing itself?) skipped: what they draw is lost",
                            pdf_extract::FORM_DEPTH_LIMIT
                        ),
                    ));
                }
                let unmapped = page.unmapped;
                if unmapped >= UNMAPPED_MIN || (unmapped > 0 && unmapped as f64 >= UNMAPPED_SHARE * page.glyphs as f64)
                {
                    unmapped_pages.push((page_no, unmapped, page.glyphs));
                }
                page.lines
            }
            Err(message) => {
                n_failed += 1;
                first_failure.get_or_insert_with(|| format!("page {page_no}: {message}"));
                diagnostics.push(Diagnostic::new(
                    Severity::Warning,
                    Some(page_no),
                    format!("page {page_no}: text extraction failed: {message}"),
                ));
                Vec::new()
            }
        };
        let unreadable = objects::unreadable_contents(&doc, pages[index].1);
        if !unreadable.is_empty() {
            let list: Vec<String> = unreadable.iter().map(|(n, g)| format!("{n} {g} R")).collect();
            diagnostics.push(Diagnostic::new(
                Severity::Warning,
                Some(page_no),
                format!(
                    "page {page_no}: content stream(s) {} unreadable (missing, a wrong /Length, or data that does not decode): their text is lost",
                    list.join(", ")
                ),
            ));
        }
        let annotated = objects::annotations_with_text(&doc, pages[index].1);
        if annotated > 0 {
            diagnostics.push(Diagnostic::new(
                Severity::Warning,
                Some(page_no),
                format!(
                    "page {page_no}: {annotated} annotation(s) or form field(s) draw text that is not read (appearance streams are not extracted)"
                ),
            ));
        }
        let mut n_chars = 0u32;
        let mut hidden: Vec<(u32, collect::Hidden)> = Vec::new();
        // A page read by OCR: its lines instead of the (at most two characters of) text layer.
        let ocr_lines = read.pages.remove(&page_no);
        if ocr_lines.is_some() {
            read_by_ocr.push(page_no);
        }
        let raw = if ocr_lines.is_some() { Vec::new() } else { raw };
        for (i, l) in ocr_lines.iter().flatten().enumerate() {
            n_chars += l.text.chars().count() as u32;
            // A line read with low confidence (a logo, a stamp, specks read as letters) has no
            // size the heading detector may use: its text is no title. Nor has a lone word:
            // Tesseract may give it the whole line's box, ascenders and descenders included,
            // so one box is no measure ("Cataract" would read 1.5 times its size).
            let measured = l.confidence >= HEADING_MIN_OCR_CONFIDENCE && l.text.split_whitespace().nth(1).is_some();
            font_sizes.push((if measured { l.font_size } else { 0.0 }, true));
            let line_id = (lines.len() + 1) as u32;
            ocr_marks.push(OcrLine { line_id, confidence: l.confidence });
            lines.push(Line {
                line_id,
                page: page_no,
                line_in_page: (i + 1) as u32,
                text: l.text.clone(),
                bbox: l.bbox,
            });
        }
        for (i, l) in raw.into_iter().enumerate() {
            n_chars += l.text.chars().count() as u32;
            font_sizes.push((l.font_size, false));
            if let Some(why) = l.hidden {
                hidden.push(((lines.len() + 1) as u32, why));
            }
            lines.push(Line {
                line_id: (lines.len() + 1) as u32,
                page: page_no,
                line_in_page: (i + 1) as u32,
                text: l.text,
                bbox: l.bbox,
            });
        }
        if !hidden.is_empty() {
            diagnostics.push(invisible_text_diagnostic(page_no, &hidden, &lines));
        }
        let n_lines = lines.iter().rev().take_while(|l| l.page == page_no).count() as u32;
        // Figure columns are filled once every page is scanned (decoration
        // needs the whole document).
        let mut info = PageInfo::from_text(page_no, n_lines, n_chars, width, height);
        // Text read from the page image is no text layer.
        info.has_text_layer &= ocr_lines.is_none();
        page_infos.push(info);
    }
    if !ocr_marks.is_empty() {
        diagnostics.push(ocr_diagnostic(&lines, ocr_marks, &read.engine));
    }
    if !unmapped_pages.is_empty() {
        let lost: usize = unmapped_pages.iter().map(|p| p.1).sum();
        let shown: usize = unmapped_pages.iter().map(|p| p.2).sum();
        let list: Vec<String> = unmapped_pages.iter().take(20).map(|p| p.0.to_string()).collect();
        let more =
            if unmapped_pages.len() > 20 { format!(" and {} more", unmapped_pages.len() - 20) } else { String::new() };
        let recovered: Vec<String> =
            unmapped_pages.iter().filter(|p| read_by_ocr.contains(&p.0)).map(|p| p.0.to_string()).collect();
        let recovered = if recovered.is_empty() {
            String::new()
        } else {
            format!("; page(s) {} read by OCR instead", recovered.join(", "))
        };
        diagnostics.push(Diagnostic::new(
            Severity::Warning,
            unmapped_pages.first().map(|p| p.0),
            format!(
                "text lost: {lost} of {shown} glyphs on page(s) {}{more} have no Unicode mapping in their font (no ToUnicode map, or a predefined CMap not supported){recovered}",
                list.join(", ")
            ),
        ));
    }
    if n_failed == pages.len() {
        let reason = first_failure.unwrap_or_default();
        return Err(ParseError::NoReadablePage { path, reason });
    }

    for (info, fig) in page_infos.iter_mut().zip(figures::classify(&graphics)) {
        info.n_images = fig.n_images;
        info.n_vector_paths = fig.n_vector_paths;
        info.has_figure = fig.has_figure;
        info.figure_kind = fig.figure_kind;
        info.decorative_image_hashes = fig.decorative_image_hashes;
    }

    let n_pages = pages.len() as u32;
    // The contents page, headings, tables and the profile read whole printed
    // lines: the pieces the collector split at tab-stop gaps (a section
    // number and its title, a contents entry and its page number) joined
    // again (`docintel_schema::rows`), each with its longest piece's size.
    // Lines that read like instructions to a model (a prompt injection?) are listed, not
    // dropped: they may be the document's own words.
    let instructions: Vec<&Line> =
        lines.iter().filter(|l| docintel_schema::text::looks_like_instruction(&l.text)).collect();
    if !instructions.is_empty() {
        let quoted: Vec<String> =
            instructions.iter().take(3).map(|l| format!("line {} {:?}", l.line_id, l.text)).collect();
        diagnostics.push(Diagnostic::new(
            Severity::Warning,
            instructions.first().map(|l| l.page),
            format!(
                "{} line(s) read like instructions to a model (a prompt injection?): {}{}",
                instructions.len(),
                quoted.join(", "),
                if instructions.len() > 3 { " …" } else { "" }
            ),
        ));
    }
    // Invisible lines take no part in the structure either (a hidden heading, summary line
    // or contents entry is not the document's).
    let invisible: Vec<u32> = diagnostics.iter().flat_map(|d| d.invisible_lines.iter().copied()).collect();
    let shown: std::borrow::Cow<'_, [Line]> = if invisible.is_empty() {
        std::borrow::Cow::Borrowed(&lines)
    } else {
        let mut copy = lines.clone();
        for id in &invisible {
            if let Some(line) = copy.get_mut(*id as usize - 1) {
                line.text.clear();
            }
        }
        std::borrow::Cow::Owned(copy)
    };
    let (joined, joined_sizes) = join_runs(&shown, &font_sizes);
    let mut toc = read_toc(&doc, &pages, n_pages, &mut diagnostics);
    // Without an outline, a printed contents page that maps consistently onto
    // the pages comes before headings.
    if toc.is_empty()
        && n_pages >= 2
        && let Some(found) = contents::toc_from_contents(&joined, n_pages)
    {
        diagnostics.push(Diagnostic::new(Severity::Info, Some(found.contents_page), format!(
                "no outline: {} TOC entries read from the contents page (page {}), printed page + {} = physical page ({} titles found there)",
                found.toc.len(),
                found.contents_page,
                found.offset,
                found.confirmed
            )));
        toc = found.toc;
    }
    // A single page (an invoice, a letter) gets no rebuilt TOC: its bold
    // labels are not sections.
    if toc.is_empty() && n_pages >= 2 {
        let heading_lines: Vec<headings::HeadingLine<'_>> = joined
            .iter()
            .zip(&joined_sizes)
            .map(|(l, &(font_size, estimated))| headings::HeadingLine {
                text: &l.text,
                page: l.page,
                font_size,
                estimated,
            })
            .collect();
        toc = headings::toc_from_headings(&heading_lines, n_pages);
        if !toc.is_empty() {
            diagnostics.push(Diagnostic::new(
                Severity::Info,
                None,
                format!("no outline: {} TOC entries rebuilt from headings", toc.len()),
            ));
        }
    }
    shared_pages::extend_into_shared_pages(&mut toc, &joined);
    let table_pages = tables::table_pages(&joined, &page_infos);
    if !table_pages.is_empty() {
        let list: Vec<String> = table_pages.iter().map(u32::to_string).collect();
        diagnostics.push(Diagnostic::new(
            Severity::Info,
            None,
            format!("tables (aligned columns) detected on pages {}", list.join(", ")),
        ));
    }
    let mut profile = profile(&joined, &page_infos, &toc);
    profile.has_tables = !table_pages.is_empty();
    let parsed = ParsedDocument { source: path, profile, lines, pages: page_infos, toc, diagnostics };
    debug_assert!(parsed.check_invariants().is_ok());
    Ok(parsed)
}

/// The warning for a page's lines that do not show (see [`collect::Hidden`]): how many, why,
/// and the first few quoted, with their ids in `invisible_lines`.
fn invisible_text_diagnostic(page: u32, hidden: &[(u32, collect::Hidden)], lines: &[Line]) -> Diagnostic {
    let mut reasons: Vec<collect::Hidden> = hidden.iter().map(|&(_, why)| why).collect();
    reasons.sort();
    reasons.dedup();
    let reasons: Vec<String> = reasons
        .iter()
        .map(|&r| format!("{} {}", hidden.iter().filter(|&&(_, why)| why == r).count(), r.describe()))
        .collect();
    let quoted: Vec<String> = hidden
        .iter()
        .take(3)
        .filter_map(|&(id, _)| lines.get(id as usize - 1).map(|l| format!("line {id} {:?}", l.text)))
        .collect();
    let more = if hidden.len() > 3 { format!(" and {} more", hidden.len() - 3) } else { String::new() };
    let mut diagnostic = Diagnostic::new(
        Severity::Warning,
        Some(page),
        format!(
            "page {page}: {} line(s) of text that does not show on the page ({}), kept out of answers: {}{more}",
            hidden.len(),
            reasons.join(", "),
            quoted.join(", ")
        ),
    );
    diagnostic.invisible_lines = hidden.iter().map(|&(id, _)| id).collect();
    diagnostic
}

/// The note marking the lines read by OCR: how many, on which pages, how, how sure.
fn ocr_diagnostic(lines: &[Line], marks: Vec<OcrLine>, engine: &str) -> Diagnostic {
    let mut pages: Vec<u32> = marks.iter().filter_map(|m| lines.get(m.line_id as usize - 1)).map(|l| l.page).collect();
    pages.dedup();
    let mean = marks.iter().map(|m| m.confidence).sum::<f32>() / marks.len() as f32;
    let mut diagnostic = Diagnostic::new(
        Severity::Info,
        pages.first().copied(),
        format!(
            "{} line(s) on {} page(s) with no readable text layer read by OCR ({engine}; mean confidence {mean:.2}): page(s) {}",
            marks.len(),
            pages.len(),
            pages.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        ),
    );
    diagnostic.ocr_lines = marks;
    diagnostic
}

/// The lines with each run (`docintel_schema::rows::runs`) joined into one,
/// and each joined line's font size: that of its longest piece.
fn join_runs(lines: &[Line], font_sizes: &[(f32, bool)]) -> (Vec<Line>, Vec<(f32, bool)>) {
    let runs = docintel_schema::rows::runs(lines);
    let mut joined = Vec::with_capacity(runs.len());
    let mut sizes = Vec::with_capacity(runs.len());
    for run in runs {
        let longest = run.clone().max_by_key(|&i| (lines[i].text.chars().count(), std::cmp::Reverse(i)));
        sizes.push(longest.and_then(|i| font_sizes.get(i)).copied().unwrap_or((0.0, false)));
        joined.extend(docintel_schema::rows::join_run(&lines[run]));
    }
    (joined, sizes)
}

/// Pages a vision model should look at: `(figure pages, scanned pages)`.
///
/// Figure pages have a real figure (see the page table's `has_figure`) and a
/// text layer; scanned pages have no text layer but draw at least one image
/// (they need transcription, which covers their figures too). Page numbers
/// are 1-based, ascending.
pub fn vision_candidates(doc: &ParsedDocument) -> (Vec<u32>, Vec<u32>) {
    let scanned: Vec<u32> = doc.pages.iter().filter(|p| !p.has_text_layer && p.n_images > 0).map(|p| p.page).collect();
    let figures: Vec<u32> =
        doc.pages.iter().filter(|p| p.has_figure && !scanned.contains(&p.page)).map(|p| p.page).collect();
    (figures, scanned)
}

fn read_toc(
    doc: &Document,
    pages: &[(u32, ObjectId)],
    n_pages: u32,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<TocEntry> {
    let page_of: HashMap<ObjectId, u32> = pages.iter().enumerate().map(|(i, &(_, id))| (id, (i + 1) as u32)).collect();
    let mut toc_diags = Vec::new();
    match catch_unwind(AssertUnwindSafe(|| toc::read_outline(doc, &page_of, n_pages, &mut toc_diags))) {
        Ok(toc) => {
            diagnostics.append(&mut toc_diags);
            toc
        }
        Err(panic) => {
            diagnostics.push(Diagnostic::new(
                Severity::Warning,
                None,
                format!("outline could not be read: {}", panic_message(&panic)),
            ));
            Vec::new()
        }
    }
}

fn profile(lines: &[Line], pages: &[PageInfo], toc: &[TocEntry]) -> DocumentProfile {
    let n_pages = pages.len() as u32;
    let no_text = pages.iter().filter(|p| !p.has_text_layer).count();
    let description = doctype::describe(lines, toc, Some(n_pages));
    DocumentProfile {
        format: DocumentFormat::Pdf,
        n_pages: Some(n_pages),
        has_toc: !toc.is_empty(),
        has_tables: false,
        languages: lang::detect_languages(lines.iter().map(|l| l.text.as_str())),
        is_scanned: no_text * 2 > pages.len(),
        doc_type: description.doc_type.map(String::from),
        typical_fields: description.typical_fields,
        summary: description.summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_check_and_messages() {
        let err = parse_pdf_bytes("x.pdf", b"hello").unwrap_err();
        assert!(matches!(err, ParseError::NotPdf { .. }));
        assert_eq!(err.to_string(), "x.pdf: not a PDF (no %PDF- header)");
        let err = parse_pdf_bytes("y.pdf", b"%PDF-1.4\ngarbage garbage").unwrap_err();
        assert!(matches!(err, ParseError::Malformed { .. }), "{err:?}");
        assert!(err.to_string().starts_with("y.pdf: malformed PDF"));
    }
}
