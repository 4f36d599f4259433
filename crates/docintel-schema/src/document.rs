//! The parsed document: line, page and TOC tables plus the document profile.
//!
//! These are the tables the parse brick produces and every later brick reads.
//! Numbering is fixed here, once, for the whole project:
//! - `line_id` is **global and 1-based**: the first line of the document is 1.
//!   This is the number every citation (`Span::line_start`) uses.
//! - `page` is 1-based.
//! - `line_in_page` is 1-based within its page.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A rectangle in PDF user-space points, origin at the bottom-left of the page
/// (the PDF convention), so `y0 < y1`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct BBox {
    /// Left edge.
    pub x0: f32,
    /// Bottom edge.
    pub y0: f32,
    /// Right edge.
    pub x1: f32,
    /// Top edge.
    pub y1: f32,
}

impl BBox {
    /// The smallest box holding both.
    pub fn union(self, other: BBox) -> BBox {
        BBox {
            x0: self.x0.min(other.x0),
            y0: self.y0.min(other.y0),
            x1: self.x1.max(other.x1),
            y1: self.y1.max(other.y1),
        }
    }
}

/// One row of the line table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Line {
    /// Global line number, 1-based, unique in the document.
    pub line_id: u32,
    /// Page number, 1-based.
    pub page: u32,
    /// Line number within its page, 1-based.
    pub line_in_page: u32,
    /// The text as extracted (ligatures expanded, nothing else changed).
    pub text: String,
    /// Where the line sits on its page, for highlighting.
    pub bbox: BBox,
}

/// One row of the page table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PageInfo {
    /// Page number, 1-based.
    pub page: u32,
    /// Number of lines extracted from the page.
    pub n_lines: u32,
    /// Number of characters extracted from the page.
    pub n_chars: u32,
    /// Whether the page has any extractable text.
    pub has_text_layer: bool,
    /// Images drawn on the page.
    pub n_images: u32,
    /// Vector path painting operations on the page.
    pub n_vector_paths: u32,
    /// Whether the page carries a real figure (not template decoration).
    pub has_figure: bool,
    /// What kind of figure (`vector`, `image`, `montage`), when there is one.
    pub figure_kind: Option<String>,
    /// Content hashes of images that repeat on many pages (decoration).
    pub decorative_image_hashes: Vec<String>,
    /// Page width in points (from the media box).
    pub width: f32,
    /// Page height in points (from the media box).
    pub height: f32,
}

/// A token-sized piece of the document for embedding retrieval. The stored
/// `text` is the document's own; `context_header` is prepended only when
/// embedding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Chunk {
    /// Chunk id, 0-based in document order.
    pub chunk_id: u32,
    /// First line (global line id).
    pub line_start: u32,
    /// Last line, inclusive.
    pub line_end: u32,
    /// Page of the first line.
    pub page_start: u32,
    /// Page of the last line.
    pub page_end: u32,
    /// The lines' text joined with newlines.
    pub text: String,
    /// Document title and section path, for the embedding input only.
    pub context_header: String,
    /// Estimated tokens of `text`.
    pub n_tokens_est: u32,
}

impl PageInfo {
    /// A page row from its text counts and size, with the graphics columns
    /// empty (no images, no paths, no figure) until a graphics scan fills them.
    pub fn from_text(page: u32, n_lines: u32, n_chars: u32, width: f32, height: f32) -> PageInfo {
        PageInfo {
            page,
            n_lines,
            n_chars,
            has_text_layer: n_chars > 0,
            n_images: 0,
            n_vector_paths: 0,
            has_figure: false,
            figure_kind: None,
            decorative_image_hashes: Vec::new(),
            width,
            height,
        }
    }
}

/// Where a TOC row comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TocSource {
    /// The PDF's native outline (bookmarks).
    Outline,
    /// Rebuilt from a printed contents page.
    ContentsPage,
    /// Rebuilt from numbered or styled headings.
    Headings,
}

/// One row of the TOC table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TocEntry {
    /// Row id, 0-based in document order.
    pub id: u32,
    /// The parent row, `None` at the top level.
    pub parent: Option<u32>,
    /// Depth, 1 for top-level entries.
    pub level: u32,
    /// Entry title as decoded.
    pub title: String,
    /// First page of the section, 1-based.
    pub start_page: u32,
    /// Last page of the section (inclusive).
    pub end_page: u32,
    /// Where the row comes from.
    pub source: TocSource,
}

/// Input formats docintel knows about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DocumentFormat {
    /// Portable Document Format.
    Pdf,
    /// Word document.
    Docx,
    /// Plain text or Markdown.
    Txt,
    /// HTML page.
    Html,
    /// Spreadsheet.
    Xlsx,
}

/// What kind of document this is, so routing can adapt to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DocumentProfile {
    /// File format.
    pub format: DocumentFormat,
    /// Number of pages; `None` for formats without real pages.
    pub n_pages: Option<u32>,
    /// Whether the document has a usable table of contents.
    pub has_toc: bool,
    /// Whether tables were detected.
    pub has_tables: bool,
    /// Detected languages (ISO 639-1), most frequent first.
    pub languages: Vec<String>,
    /// Whether most pages have no text layer.
    pub is_scanned: bool,
    /// Document type (cv, contract, invoice, policy, standard, paper, report...).
    pub doc_type: Option<String>,
    /// Fields typically asked of this document type.
    pub typical_fields: Vec<String>,
    /// A short summary of the document.
    pub summary: Option<String>,
}

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; nothing was lost.
    Info,
    /// Something was lost or degraded (e.g. a page could not be read).
    Warning,
}

/// Something the parser noticed while reading a document that did not stop it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Diagnostic {
    /// How bad it is.
    pub severity: Severity,
    /// The page concerned, if any.
    pub page: Option<u32>,
    /// Human-readable message.
    pub message: String,
    /// Global line ids this diagnostic marks as not visible on the rendered page (white on
    /// white, under a size a reader can see, covered by a filled shape drawn after it, or
    /// drawn in the invisible render mode): they stay in the line table for the audit trail
    /// but are never an answer (see [`ParsedDocument::is_visible`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invisible_lines: Vec<u32>,
    /// Lines this diagnostic marks as read by OCR from the page image (a scanned page with
    /// no text layer), each with its confidence: their source is [`LineSource::Ocr`] (see
    /// [`ParsedDocument::line_source`]); every other line comes from the text layer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ocr_lines: Vec<OcrLine>,
    /// Lines this diagnostic marks as a vision model's description of the page image (a
    /// figure, or a scanned page OCR read badly): their source is [`LineSource::Vision`],
    /// never printed text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vision_lines: Vec<u32>,
}

impl Diagnostic {
    /// A diagnostic that marks no line.
    pub fn new(severity: Severity, page: Option<u32>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity,
            page,
            message: message.into(),
            invisible_lines: Vec::new(),
            ocr_lines: Vec::new(),
            vision_lines: Vec::new(),
        }
    }
}

/// Where a line's text comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LineSource {
    /// The PDF's text layer (or the text of a TXT, Markdown or DOCX file).
    #[default]
    TextLayer,
    /// Read by OCR from the rendered page image.
    Ocr,
    /// A vision model's description of the rendered page image: what a figure shows, not
    /// text printed on the page.
    Vision,
}

impl LineSource {
    /// The name used in tables and `_meta`: `text_layer`, `ocr`, `vision`.
    pub fn as_str(self) -> &'static str {
        match self {
            LineSource::TextLayer => "text_layer",
            LineSource::Ocr => "ocr",
            LineSource::Vision => "vision",
        }
    }
}

/// A line read by OCR and how sure the engine was of it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OcrLine {
    /// Global line id.
    pub line_id: u32,
    /// The mean of the line's word confidences, 0 to 1.
    pub confidence: f32,
}

/// Everything the parse brick produces for one document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ParsedDocument {
    /// The path or name the document was read from.
    pub source: String,
    /// The document profile.
    pub profile: DocumentProfile,
    /// The line table, in reading order; `lines[i].line_id == i + 1`.
    pub lines: Vec<Line>,
    /// The page table, one row per page in order.
    pub pages: Vec<PageInfo>,
    /// The TOC table (possibly empty).
    pub toc: Vec<TocEntry>,
    /// What went wrong without stopping the parse.
    pub diagnostics: Vec<Diagnostic>,
}

impl ParsedDocument {
    /// The line with this global id, if it exists.
    pub fn line(&self, line_id: u32) -> Option<&Line> {
        let index = usize::try_from(line_id).ok()?.checked_sub(1)?;
        self.lines.get(index).filter(|line| line.line_id == line_id)
    }

    /// The lines from `start` to `end` inclusive (clamped to the table).
    pub fn line_range(&self, start: u32, end: u32) -> &[Line] {
        let n = self.lines.len();
        let lo = (start.max(1) as usize - 1).min(n);
        let hi = (end as usize).min(n).max(lo);
        &self.lines[lo..hi]
    }

    /// Whether the line shows on the rendered page (no diagnostic marks it invisible).
    pub fn is_visible(&self, line_id: u32) -> bool {
        !self.diagnostics.iter().any(|d| d.invisible_lines.contains(&line_id))
    }

    /// Where the line's text comes from: [`LineSource::Ocr`] or [`LineSource::Vision`] when
    /// a diagnostic marks it so (see [`Diagnostic::ocr_lines`], [`Diagnostic::vision_lines`]),
    /// else the text layer.
    pub fn line_source(&self, line_id: u32) -> LineSource {
        if self.ocr_confidence(line_id).is_some() {
            LineSource::Ocr
        } else if self.diagnostics.iter().any(|d| d.vision_lines.contains(&line_id)) {
            LineSource::Vision
        } else {
            LineSource::TextLayer
        }
    }

    /// The OCR confidence (0 to 1) of a line read by OCR; `None` for a text-layer line.
    pub fn ocr_confidence(&self, line_id: u32) -> Option<f32> {
        self.diagnostics.iter().flat_map(|d| &d.ocr_lines).find(|l| l.line_id == line_id).map(|l| l.confidence)
    }

    /// Puts `texts` as new lines after the last line of `page` (each with box `bbox`),
    /// renumbering the lines after them and every line id a diagnostic marks, so the table
    /// invariants hold. Returns the new lines' ids; none for a page the document lacks.
    pub fn insert_page_lines(&mut self, page: u32, texts: &[String], bbox: BBox) -> Vec<u32> {
        let Some(info) = self.pages.iter_mut().find(|p| p.page == page) else { return Vec::new() };
        let at = self.lines.iter().position(|l| l.page > page).unwrap_or(self.lines.len());
        let first_id = at as u32 + 1;
        let n = texts.len() as u32;
        let in_page = self.lines[..at].iter().filter(|l| l.page == page).count() as u32;
        info.n_lines += n;
        let shift = |id: &mut u32| {
            if *id >= first_id {
                *id += n;
            }
        };
        for d in &mut self.diagnostics {
            d.invisible_lines.iter_mut().for_each(shift);
            d.ocr_lines.iter_mut().for_each(|l| shift(&mut l.line_id));
            d.vision_lines.iter_mut().for_each(shift);
        }
        for line in &mut self.lines[at..] {
            line.line_id += n;
        }
        let new = texts.iter().enumerate().map(|(i, text)| Line {
            line_id: first_id + i as u32,
            page,
            line_in_page: in_page + 1 + i as u32,
            text: text.clone(),
            bbox,
        });
        self.lines.splice(at..at, new);
        (first_id..first_id + n).collect()
    }

    /// The line ids marked invisible, ascending.
    pub fn invisible_lines(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = self.diagnostics.iter().flat_map(|d| d.invisible_lines.iter().copied()).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// The document as the answering bricks must see it: every invisible line's text
    /// emptied (ids, pages and boxes kept, so line numbering is unchanged), so nothing can
    /// retrieve it, quote it or have a citation of it verified. Borrowed when every line
    /// is visible.
    pub fn answerable(&self) -> std::borrow::Cow<'_, ParsedDocument> {
        let hidden = self.invisible_lines();
        if hidden.is_empty() {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut doc = self.clone();
        for id in hidden {
            if let Some(line) =
                usize::try_from(id).ok().and_then(|i| i.checked_sub(1)).and_then(|i| doc.lines.get_mut(i))
            {
                line.text.clear();
            }
        }
        std::borrow::Cow::Owned(doc)
    }

    /// Checks the table invariants: ids are 1..=n in order, pages ascend, and
    /// line_in_page restarts at 1 on every page. Returns the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut previous: Option<&Line> = None;
        for (index, line) in self.lines.iter().enumerate() {
            if line.line_id as usize != index + 1 {
                return Err(format!("line {} has line_id {}", index + 1, line.line_id));
            }
            let expected_in_page = match previous {
                Some(p) if p.page == line.page => p.line_in_page + 1,
                Some(p) if p.page > line.page => {
                    return Err(format!("line {} goes back from page {} to {}", line.line_id, p.page, line.page));
                }
                _ => 1,
            };
            if line.line_in_page != expected_in_page {
                return Err(format!(
                    "line {} has line_in_page {}, expected {}",
                    line.line_id, line.line_in_page, expected_in_page
                ));
            }
            previous = Some(line);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(pages: &[&[&str]]) -> ParsedDocument {
        let mut lines = Vec::new();
        for (p, texts) in pages.iter().enumerate() {
            for (i, text) in texts.iter().enumerate() {
                lines.push(Line {
                    line_id: lines.len() as u32 + 1,
                    page: p as u32 + 1,
                    line_in_page: i as u32 + 1,
                    text: (*text).to_owned(),
                    bbox: BBox::default(),
                });
            }
        }
        ParsedDocument {
            source: "t.pdf".into(),
            profile: DocumentProfile {
                format: DocumentFormat::Pdf,
                n_pages: Some(pages.len() as u32),
                has_toc: false,
                has_tables: false,
                languages: Vec::new(),
                is_scanned: false,
                doc_type: None,
                typical_fields: Vec::new(),
                summary: None,
            },
            pages: pages
                .iter()
                .enumerate()
                .map(|(p, texts)| PageInfo::from_text(p as u32 + 1, texts.len() as u32, 10, 612.0, 792.0))
                .collect(),
            lines,
            toc: Vec::new(),
            diagnostics: Vec::new(),
        }
    }

    #[test]
    fn lines_put_on_a_page_renumber_the_rest_and_their_marks() {
        let mut doc = document(&[&["a1", "a2"], &["b1"], &["c1", "c2"]]);
        let mut marks = Diagnostic::new(Severity::Info, None, "marks");
        marks.invisible_lines = vec![1, 4];
        marks.ocr_lines = vec![OcrLine { line_id: 5, confidence: 0.5 }];
        doc.diagnostics.push(marks);
        let ids = doc.insert_page_lines(2, &["v1".to_owned(), "v2".to_owned()], BBox::default());
        assert_eq!(ids, [4, 5]);
        doc.check_invariants().unwrap();
        let texts: Vec<(&str, u32, u32)> =
            doc.lines.iter().map(|l| (l.text.as_str(), l.page, l.line_in_page)).collect();
        assert_eq!(
            texts,
            [("a1", 1, 1), ("a2", 1, 2), ("b1", 2, 1), ("v1", 2, 2), ("v2", 2, 3), ("c1", 3, 1), ("c2", 3, 2)]
        );
        // The marks follow their lines: c1 was 4, c2 was 5.
        assert_eq!(doc.diagnostics[0].invisible_lines, [1, 6]);
        assert_eq!(doc.diagnostics[0].ocr_lines[0].line_id, 7);
        assert_eq!(doc.pages[1].n_lines, 3);
        doc.diagnostics[0].vision_lines = ids;
        assert_eq!(doc.line_source(4), LineSource::Vision);
        assert_eq!(doc.line_source(3), LineSource::TextLayer);
        assert_eq!(doc.line_source(7), LineSource::Ocr);
        assert!(doc.insert_page_lines(9, &["x".to_owned()], BBox::default()).is_empty());
    }
}
