//! docintel-parse: the document parsing brick.
//!
//! Turns a PDF (or a text / Markdown file, see [`parse_file`]) into the
//! tables every later brick reads (see [`docintel_schema::ParsedDocument`]):
//! a **line table** (global 1-based `line_id`, page, line within page, text,
//! bounding box in PDF points), a **page table** (size, line and character
//! counts, text-layer flag, images, vector paths, figure flags and decorative
//! image hashes), a **TOC table** from the native outline or, without one,
//! rebuilt from numbered / styled headings, a **document profile** (with
//! languages), and **diagnostics** for whatever was lost on the way.
//! [`chunk_document`] cuts a parsed document into token-sized chunks and
//! [`vision_candidates`] lists the pages a vision model should look at.
//!
//! Text comes from `pdf-extract`, whose glyphs are collected and grouped into
//! lines here (baseline changes, backward jumps and wide gaps break lines;
//! small gaps become spaces; ligatures are expanded). Lines are sorted top to
//! bottom, then left to right.
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
mod figures;
mod headings;
mod highlight;
mod lang;
mod objects;
mod output;
mod textdoc;
mod toc;

pub use chunk::{ChunkConfig, chars_per_token, chunk_document};
pub use highlight::{HighlightError, highlight_pdf};
pub use output::{
    DOCUMENT_FILES, DocumentFolder, OutputError, content_hash, document_folder, is_up_to_date, write_tables,
};
pub use textdoc::parse_file;

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use docintel_schema::{
    Diagnostic, DocumentFormat, DocumentProfile, Line, PageInfo, ParsedDocument, Severity, TocEntry,
};
use pdf_extract::{Document, ObjectId};

use crate::collect::{GlyphCollector, RawLine};

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
    #[error("{path}: encrypted PDF (cannot be opened without a password)")]
    Encrypted {
        /// The path or name as given.
        path: String,
    },
    /// lopdf could not load the file.
    #[error("{path}: malformed PDF ({reason})")]
    Malformed {
        /// The path or name as given.
        path: String,
        /// What the loader reported.
        reason: String,
    },
    /// The file is a Word document; DOCX input is not implemented yet.
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
    let path = name.to_string();
    let head = &bytes[..bytes.len().min(1024)];
    if !head.windows(5).any(|w| w == b"%PDF-") {
        return Err(ParseError::NotPdf { path });
    }
    let doc = load(name, bytes)?;

    let pages: Vec<(u32, ObjectId)> = match catch_unwind(AssertUnwindSafe(|| doc.get_pages())) {
        Ok(map) => map.into_iter().collect(),
        Err(panic) => {
            return Err(ParseError::Malformed { path, reason: format!("page tree: {}", panic_message(&panic)) });
        }
    };
    if pages.is_empty() {
        return Err(ParseError::NoReadablePage { path, reason: "the page tree is empty".into() });
    }

    let mut diagnostics = Vec::new();
    let mut lines: Vec<Line> = Vec::new();
    let mut page_infos: Vec<PageInfo> = Vec::with_capacity(pages.len());
    let mut first_failure: Option<String> = None;
    let mut n_failed = 0usize;
    // Parse-internal side table: each line's dominant font size.
    let mut font_sizes: Vec<f32> = Vec::new();
    let mut graphics: Vec<Option<figures::PageGraphics>> = Vec::with_capacity(pages.len());
    for (index, &(page_key, page_id)) in pages.iter().enumerate() {
        let page_no = (index + 1) as u32;
        let (width, height) = objects::page_size(&doc, page_id);
        graphics.push(scan_graphics(&doc, page_id, width * height, page_no, &mut diagnostics));
        let raw = match extract_page(&doc, page_key) {
            Ok(raw) => raw,
            Err(message) => {
                n_failed += 1;
                first_failure.get_or_insert_with(|| format!("page {page_no}: {message}"));
                diagnostics.push(Diagnostic {
                    severity: Severity::Warning,
                    page: Some(page_no),
                    message: format!("page {page_no}: text extraction failed: {message}"),
                });
                Vec::new()
            }
        };
        let mut n_chars = 0u32;
        for (i, l) in raw.into_iter().enumerate() {
            n_chars += l.text.chars().count() as u32;
            font_sizes.push(l.font_size);
            lines.push(Line {
                line_id: (lines.len() + 1) as u32,
                page: page_no,
                line_in_page: (i + 1) as u32,
                text: l.text,
                bbox: l.bbox,
            });
        }
        let n_lines = lines.iter().rev().take_while(|l| l.page == page_no).count() as u32;
        // Figure columns are filled once every page is scanned (decoration
        // needs the whole document).
        page_infos.push(PageInfo::from_text(page_no, n_lines, n_chars, width, height));
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
    let mut toc = read_toc(&doc, &pages, n_pages, &mut diagnostics);
    // A single page (an invoice, a letter) gets no rebuilt TOC: its bold
    // labels are not sections.
    if toc.is_empty() && n_pages >= 2 {
        let heading_lines: Vec<headings::HeadingLine<'_>> = lines
            .iter()
            .zip(&font_sizes)
            .map(|(l, &font_size)| headings::HeadingLine { text: &l.text, page: l.page, font_size })
            .collect();
        toc = headings::toc_from_headings(&heading_lines, n_pages);
        if !toc.is_empty() {
            diagnostics.push(Diagnostic {
                severity: Severity::Info,
                page: None,
                message: format!("no outline: {} TOC entries rebuilt from headings", toc.len()),
            });
        }
    }
    let profile = profile(&lines, &page_infos, &toc);
    let parsed = ParsedDocument { source: path, profile, lines, pages: page_infos, toc, diagnostics };
    debug_assert!(parsed.check_invariants().is_ok());
    Ok(parsed)
}

/// Loads the document (lopdf decrypts with the empty user password itself).
fn load(name: &str, bytes: &[u8]) -> Result<Document, ParseError> {
    let path = name.to_string();
    let mut doc = match catch_unwind(AssertUnwindSafe(|| Document::load_mem(bytes))) {
        Ok(Ok(doc)) => doc,
        Ok(Err(e)) if is_encryption_error(&e) => return Err(ParseError::Encrypted { path }),
        Ok(Err(e)) => return Err(ParseError::Malformed { path, reason: e.to_string() }),
        Err(panic) => {
            return Err(ParseError::Malformed { path, reason: format!("loader panicked: {}", panic_message(&panic)) });
        }
    };
    // Encrypted but not decrypted at load time: lopdf could not authenticate
    // the empty user password. Try once more explicitly.
    // (When authentication fails at load, lopdf returns a document whose
    // objects are missing, so `/Encrypt` in the trailer is the reliable cue.)
    if doc.trailer.get(b"Encrypt").is_ok() && !doc.was_encrypted() {
        let decrypted = doc.is_encrypted()
            && catch_unwind(AssertUnwindSafe(|| doc.decrypt(""))).map(|r| r.is_ok()).unwrap_or(false);
        if !decrypted {
            return Err(ParseError::Encrypted { path });
        }
    }
    Ok(doc)
}

fn is_encryption_error(e: &pdf_extract::Error) -> bool {
    matches!(
        e,
        pdf_extract::Error::Decryption(_) | pdf_extract::Error::InvalidPassword | pdf_extract::Error::AlreadyEncrypted
    )
}

/// Scans one page's graphics; a failure or a panic becomes a diagnostic and
/// `None` (the page then counts no images and no paths).
fn scan_graphics(
    doc: &Document,
    page_id: ObjectId,
    area: f32,
    page_no: u32,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<figures::PageGraphics> {
    let message = match catch_unwind(AssertUnwindSafe(|| figures::scan_page(doc, page_id, area))) {
        Ok(Ok(graphics)) => return Some(graphics),
        Ok(Err(message)) => message,
        Err(panic) => format!("scanner panicked: {}", panic_message(&panic)),
    };
    diagnostics.push(Diagnostic {
        severity: Severity::Info,
        page: Some(page_no),
        message: format!("page {page_no}: images and paths not counted: {message}"),
    });
    None
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

/// Extracts one page's lines; a panic or an error becomes `Err(message)`.
fn extract_page(doc: &Document, page_key: u32) -> Result<Vec<RawLine>, String> {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut collector = GlyphCollector::default();
        pdf_extract::output_doc_page(doc, &mut collector, page_key).map(|()| collector.finish())
    }));
    match outcome {
        Ok(Ok(lines)) => Ok(lines),
        Ok(Err(e)) => Err(e.to_string()),
        Err(panic) => Err(format!("extractor panicked: {}", panic_message(&panic))),
    }
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
            diagnostics.push(Diagnostic {
                severity: Severity::Warning,
                page: None,
                message: format!("outline could not be read: {}", panic_message(&panic)),
            });
            Vec::new()
        }
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Words on the first page that mark an invoice.
const INVOICE_CUES: [&str; 5] = ["invoice", "rechnung", "factuur", "facture", "factura"];

fn profile(lines: &[Line], pages: &[PageInfo], toc: &[TocEntry]) -> DocumentProfile {
    let n_pages = pages.len() as u32;
    let no_text = pages.iter().filter(|p| !p.has_text_layer).count();
    let doc_type = detect_doc_type(lines.iter().filter(|l| l.page == 1).map(|l| l.text.as_str()));
    let typical_fields = typical_fields(doc_type);
    DocumentProfile {
        format: DocumentFormat::Pdf,
        n_pages: Some(n_pages),
        has_toc: !toc.is_empty(),
        has_tables: false,
        languages: lang::detect_languages(lines.iter().map(|l| l.text.as_str())),
        is_scanned: no_text * 2 > pages.len(),
        doc_type: doc_type.map(String::from),
        typical_fields,
        summary: None,
    }
}

/// Fields typically asked of a document type.
fn typical_fields(doc_type: Option<&str>) -> Vec<String> {
    match doc_type {
        Some("invoice") => {
            ["total amount", "invoice date", "invoice number", "issuer", "due date"].map(String::from).to_vec()
        }
        _ => Vec::new(),
    }
}

/// A deterministic document-type cue from the first page's text.
fn detect_doc_type<'a>(texts: impl Iterator<Item = &'a str>) -> Option<&'static str> {
    let mut joined = String::new();
    for t in texts {
        joined.push(' ');
        joined.push_str(&t.to_lowercase());
    }
    let words: Vec<&str> = joined.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let is_invoice = words.iter().any(|w| INVOICE_CUES.iter().any(|cue| w.starts_with(cue)))
        || words.windows(2).any(|pair| pair == ["bill", "to"]);
    is_invoice.then_some("invoice")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_type_cues() {
        assert_eq!(detect_doc_type(["Tax INVOICE", "x"].into_iter()), Some("invoice"));
        assert_eq!(detect_doc_type(["Rechnungsnummer: 12"].into_iter()), Some("invoice"));
        assert_eq!(detect_doc_type(["Bill  To:", "ACME"].into_iter()), Some("invoice"));
        assert_eq!(detect_doc_type(["Annual report", "billing totals"].into_iter()), None);
    }

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
