//! [`DocumentBuilder`]: a [`ParsedDocument`] built by hand, the way the parser
//! numbers one (global line ids 1..=n in reading order, `line_in_page` from 1
//! on each page, no boxes), for the bricks' tests.

use docintel_schema::{BBox, DocumentFormat, DocumentProfile, Line, PageInfo, ParsedDocument};

/// The size of every page table row: US Letter, in points.
const LETTER: (f32, f32) = (612.0, 792.0);

/// A document under construction: [`pages`] or [`rows`] give its lines, the
/// methods its source, format and languages, [`DocumentBuilder::build`] the
/// [`ParsedDocument`] (no TOC, no diagnostics, no tables; set those fields on
/// the result when a test needs them).
#[derive(Debug, Clone)]
#[must_use]
pub struct DocumentBuilder {
    lines: Vec<Line>,
    n_pages: Option<u32>,
    page_table: bool,
    source: String,
    format: DocumentFormat,
    languages: Vec<String>,
}

/// One slice of line texts per page, page 1 first (an empty slice is a page
/// without text). The document has a page table: one row per page, its line
/// and character counts, a text layer when it has characters, US Letter.
pub fn pages(pages: &[&[&str]]) -> DocumentBuilder {
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
    DocumentBuilder::new(lines, Some(pages.len() as u32), true)
}

/// `(text, page)` rows in reading order; `line_in_page` restarts at 1 where
/// the page changes, and the page count is the last row's page. Lines only:
/// the document has no page table.
pub fn rows<S: AsRef<str>>(rows: &[(S, u32)]) -> DocumentBuilder {
    let mut lines: Vec<Line> = Vec::new();
    for (text, page) in rows {
        let line_in_page = match lines.last() {
            Some(previous) if previous.page == *page => previous.line_in_page + 1,
            _ => 1,
        };
        lines.push(Line {
            line_id: lines.len() as u32 + 1,
            page: *page,
            line_in_page,
            text: text.as_ref().to_owned(),
            bbox: BBox::default(),
        });
    }
    let n_pages = lines.last().map(|l| l.page);
    DocumentBuilder::new(lines, n_pages, false)
}

impl DocumentBuilder {
    fn new(lines: Vec<Line>, n_pages: Option<u32>, page_table: bool) -> DocumentBuilder {
        DocumentBuilder {
            lines,
            n_pages,
            page_table,
            source: "test.pdf".to_owned(),
            format: DocumentFormat::Pdf,
            languages: Vec::new(),
        }
    }

    /// The document's source path (default `test.pdf`).
    pub fn source(mut self, source: &str) -> DocumentBuilder {
        source.clone_into(&mut self.source);
        self
    }

    /// The profile's format (default PDF).
    pub fn format(mut self, format: DocumentFormat) -> DocumentBuilder {
        self.format = format;
        self
    }

    /// The profile's detected languages (default none).
    pub fn languages(mut self, languages: &[&str]) -> DocumentBuilder {
        self.languages = languages.iter().map(|l| (*l).to_owned()).collect();
        self
    }

    /// The document.
    pub fn build(self) -> ParsedDocument {
        let pages = if self.page_table {
            (1..=self.n_pages.unwrap_or(0))
                .map(|page| {
                    let on_page = self.lines.iter().filter(|l| l.page == page);
                    let n_lines = on_page.clone().count() as u32;
                    let n_chars = on_page.map(|l| l.text.chars().count() as u32).sum();
                    PageInfo::from_text(page, n_lines, n_chars, LETTER.0, LETTER.1)
                })
                .collect()
        } else {
            Vec::new()
        };
        ParsedDocument {
            source: self.source,
            profile: DocumentProfile {
                format: self.format,
                n_pages: self.n_pages,
                has_toc: false,
                has_tables: false,
                languages: self.languages,
                is_scanned: false,
                doc_type: None,
                typical_fields: Vec::new(),
                summary: None,
            },
            lines: self.lines,
            pages,
            toc: Vec::new(),
            diagnostics: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_number_lines_globally_and_per_page_with_a_page_table() {
        let doc = pages(&[&["a", "bb"], &[], &["ccc"]]).source("x.txt").format(DocumentFormat::Txt).build();
        let ids: Vec<(u32, u32, u32)> = doc.lines.iter().map(|l| (l.line_id, l.page, l.line_in_page)).collect();
        assert_eq!(ids, [(1, 1, 1), (2, 1, 2), (3, 3, 1)]);
        assert_eq!(doc.profile.n_pages, Some(3));
        assert_eq!((doc.source.as_str(), doc.profile.format), ("x.txt", DocumentFormat::Txt));
        let table: Vec<(u32, u32, u32, bool)> =
            doc.pages.iter().map(|p| (p.page, p.n_lines, p.n_chars, p.has_text_layer)).collect();
        assert_eq!(table, [(1, 2, 3, true), (2, 0, 0, false), (3, 1, 3, true)]);
        doc.check_invariants().unwrap();
    }

    #[test]
    fn rows_restart_line_in_page_per_page_without_a_page_table() {
        let doc = rows(&[("a", 1), ("b", 1), ("c", 2)]).languages(&["fr"]).build();
        let ids: Vec<(u32, u32, u32)> = doc.lines.iter().map(|l| (l.line_id, l.page, l.line_in_page)).collect();
        assert_eq!(ids, [(1, 1, 1), (2, 1, 2), (3, 2, 1)]);
        assert_eq!(doc.profile.n_pages, Some(2));
        assert_eq!(doc.profile.languages, ["fr"]);
        assert!(doc.pages.is_empty());
        assert_eq!(rows::<&str>(&[]).build().profile.n_pages, None);
        let owned = rows(&[("x".to_owned(), 1)]).build();
        assert_eq!((owned.source.as_str(), owned.lines[0].text.as_str()), ("test.pdf", "x"));
    }
}
