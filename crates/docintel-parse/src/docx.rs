//! DOCX (Word 2007+ `.docx`) input into the same tables as a PDF.
//!
//! The archive is opened with `zip` and `word/document.xml` / `word/styles.xml` are read with
//! `roxmltree` (no DTDs, so no entity expansion). The body is walked in document order:
//! - a **paragraph** becomes one line (runs' `w:t` joined, `w:tab` → tab; a manual line break
//!   `w:br` / `w:cr` starts a new line); deleted text (`w:delText`), field codes and the
//!   `mc:Fallback` copy of drawings are skipped; text boxes follow their paragraph;
//! - a **table** row becomes one line with its cells tab-separated (a cell's paragraphs joined
//!   by spaces; nested tables flattened into their cell), and the profile says `has_tables`;
//! - content controls (`w:sdt`) and custom XML wrappers are walked through.
//!
//! A paragraph is a **heading** when its own `w:outlineLvl`, or its style's (following
//! `w:basedOn`), gives an outline level, or its style is named `heading N` / `Title` (or has
//! the id `HeadingN` / `Title` when `styles.xml` is missing). Heading N is TOC level N, Title
//! level 1; source = `Headings`.
//!
//! DOCX has **no real pages**: `n_pages` is `None` and a diagnostic says page numbers are
//! approximate. Pages are cut where Word last rendered a page break (`w:lastRenderedPageBreak`)
//! when the file has any; otherwise at explicit page breaks (`w:br w:type="page"`,
//! `w:pageBreakBefore`); otherwise every [`CHARS_PER_PAGE`] characters at a paragraph
//! boundary. Bounding boxes are synthetic rows as for text files, with one blank row between
//! blocks so paragraph breaks survive for the chunker.

use std::collections::HashMap;
use std::io::{Cursor, Read};

use docintel_schema::{
    BBox, Diagnostic, DocumentFormat, DocumentProfile, Line, PageInfo, ParsedDocument, Severity, TocSource,
};
use roxmltree::{Document as Xml, Node};

use crate::ParseError;
use crate::headings::toc_rows;
use crate::textdoc::ROW_HEIGHT;

/// Characters per synthetic page when the file records no page break at all.
pub(crate) const CHARS_PER_PAGE: usize = 3000;
/// Largest XML part read (guards zip bombs).
const MAX_PART_BYTES: u64 = 256 * 1024 * 1024;
/// Width of one character in the synthetic bbox, in points.
const CHAR_WIDTH: f32 = 6.0;
/// Deepest `w:basedOn` chain followed.
const MAX_STYLE_DEPTH: usize = 16;
/// Deepest element nesting walked.
const MAX_DEPTH: usize = 64;

/// Parses DOCX bytes; `name` is used as the source and in errors.
pub(crate) fn parse_docx_bytes(name: &str, bytes: &[u8]) -> Result<ParsedDocument, ParseError> {
    let bad = |reason: String| ParseError::BadDocx { path: name.to_string(), reason };
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| bad(format!("not a ZIP archive: {e}")))?;
    let document = read_part(&mut archive, "word/document.xml")
        .map_err(bad)?
        .ok_or_else(|| bad("no word/document.xml in the archive".into()))?;
    let styles_xml = read_part(&mut archive, "word/styles.xml").map_err(bad)?;
    let mut diagnostics = Vec::new();
    let styles = match styles_xml.as_deref().map(Xml::parse) {
        Some(Ok(xml)) => Styles::read(&xml),
        Some(Err(e)) => {
            diagnostics.push(Diagnostic::new(
                Severity::Warning,
                None,
                format!("{name}: word/styles.xml unreadable ({e}); headings from style ids only"),
            ));
            Styles::default()
        }
        None => Styles::default(),
    };
    let xml = Xml::parse(&document).map_err(|e| bad(format!("word/document.xml: {e}")))?;
    let body = xml
        .root_element()
        .children()
        .find(|n| is_w(n, "body"))
        .ok_or_else(|| bad("word/document.xml has no w:body".into()))?;
    let rendered_breaks = xml.descendants().any(|n| is_w(&n, "lastRenderedPageBreak"));
    let mut walker = Walker { styles: &styles, rendered_breaks, blocks: Vec::new(), current: Block::default() };
    walker.blocks_of(body, 0);
    walker.flush();
    Ok(assemble(name, walker.blocks, rendered_breaks, diagnostics))
}

/// Reads one part of the archive as UTF-8; `Ok(None)` when it is absent.
fn read_part(archive: &mut zip::ZipArchive<Cursor<&[u8]>>, part: &str) -> Result<Option<String>, String> {
    let file = match archive.by_name(part) {
        Ok(file) => file,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(format!("{part}: {e}")),
    };
    let mut bytes = Vec::new();
    file.take(MAX_PART_BYTES + 1).read_to_end(&mut bytes).map_err(|e| format!("{part}: {e}"))?;
    if bytes.len() as u64 > MAX_PART_BYTES {
        return Err(format!("{part}: larger than {MAX_PART_BYTES} bytes"));
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    String::from_utf8(bytes.to_vec()).map(Some).map_err(|_| format!("{part}: not UTF-8"))
}

fn is_w(node: &Node<'_, '_>, local: &str) -> bool {
    node.is_element() && node.tag_name().name() == local
}

/// `w:val` (any namespace prefix) of an element.
fn val<'a>(node: &Node<'a, '_>) -> Option<&'a str> {
    node.attributes().find(|a| a.name() == "val").map(|a| a.value())
}

fn child<'a, 'i>(node: &Node<'a, 'i>, local: &str) -> Option<Node<'a, 'i>> {
    node.children().find(|n| is_w(n, local))
}

/// Paragraph styles: id → (heading level, based-on id).
#[derive(Debug, Default)]
struct Styles {
    styles: HashMap<String, (Option<u32>, Option<String>)>,
}

impl Styles {
    fn read(xml: &Xml<'_>) -> Styles {
        let mut styles = HashMap::new();
        for style in xml.descendants().filter(|n| is_w(n, "style")) {
            let Some(id) = style.attributes().find(|a| a.name() == "styleId").map(|a| a.value()) else { continue };
            let name = child(&style, "name").and_then(|n| val(&n)).unwrap_or("");
            let outline = child(&style, "pPr").and_then(|p| child(&p, "outlineLvl")).and_then(|o| outline_level(&o));
            let level = outline.or_else(|| level_from_name(name)).or_else(|| level_from_name(id));
            let based_on = child(&style, "basedOn").and_then(|b| val(&b)).map(String::from);
            styles.insert(id.to_string(), (level, based_on));
        }
        Styles { styles }
    }

    /// Heading level of a style id, following `basedOn`.
    fn level(&self, id: &str) -> Option<u32> {
        let mut current = id;
        for _ in 0..MAX_STYLE_DEPTH {
            let Some((level, based_on)) = self.styles.get(current) else {
                return level_from_name(current);
            };
            if level.is_some() {
                return *level;
            }
            current = based_on.as_deref()?;
        }
        None
    }
}

/// `w:outlineLvl w:val="0"` → 1; 9 (body text) or junk → none.
fn outline_level(node: &Node<'_, '_>) -> Option<u32> {
    val(node).and_then(|v| v.parse::<u32>().ok()).filter(|&v| v < 9).map(|v| v + 1)
}

/// `heading 2` / `Heading2` → 2, `Title` → 1.
fn level_from_name(name: &str) -> Option<u32> {
    let lower = name.to_ascii_lowercase();
    if lower == "title" {
        return Some(1);
    }
    let rest = lower.strip_prefix("heading")?.trim_start();
    rest.parse::<u32>().ok().filter(|n| (1..=9).contains(n))
}

/// What a block (paragraph or table row) contributes.
#[derive(Debug, Default, Clone)]
struct Block {
    /// Lines of text (a manual break starts a new one), with a page break before each.
    lines: Vec<(String, bool)>,
    /// Heading level when the paragraph is a heading.
    heading: Option<u32>,
    /// A table row.
    is_table_row: bool,
    /// The block begins on a new page.
    page_break_before: bool,
    /// No blank row before this block (rows of one table).
    tight: bool,
}

struct Walker<'s> {
    styles: &'s Styles,
    rendered_breaks: bool,
    blocks: Vec<Block>,
    current: Block,
}

impl Walker<'_> {
    fn flush(&mut self) {
        let block = std::mem::take(&mut self.current);
        if block.lines.iter().any(|(t, _)| !t.trim().is_empty()) || block.page_break_before {
            self.blocks.push(block);
        }
    }

    /// Walks block-level content (body, cell, content control, text box).
    fn blocks_of(&mut self, node: Node<'_, '_>, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        for child in node.children().filter(Node::is_element) {
            match child.tag_name().name() {
                "p" => self.paragraph(child, depth),
                "tbl" => self.table(child, depth),
                "sdt" => {
                    if let Some(content) = self::child(&child, "sdtContent") {
                        self.blocks_of(content, depth + 1);
                    }
                }
                "customXml" | "ins" | "smartTag" => self.blocks_of(child, depth + 1),
                _ => {}
            }
        }
    }

    fn paragraph(&mut self, p: Node<'_, '_>, depth: usize) {
        self.flush();
        let ppr = child(&p, "pPr");
        let own_level = ppr.and_then(|ppr| child(&ppr, "outlineLvl")).and_then(|o| outline_level(&o));
        let style_level =
            ppr.and_then(|ppr| child(&ppr, "pStyle")).and_then(|s| val(&s)).and_then(|id| self.styles.level(id));
        self.current.heading = own_level.or(style_level);
        self.current.page_break_before =
            !self.rendered_breaks && ppr.and_then(|ppr| child(&ppr, "pageBreakBefore")).is_some_and(|b| is_on(&b));
        self.current.lines.push((String::new(), false));
        let mut boxes = Vec::new();
        self.inline(p, &mut boxes, depth + 1);
        self.flush();
        // Text boxes anchored in the paragraph follow it.
        for text_box in boxes {
            self.blocks_of(text_box, depth + 1);
        }
    }

    /// Walks run-level content, appending to the current block.
    fn inline<'a, 'i>(&mut self, node: Node<'a, 'i>, boxes: &mut Vec<Node<'a, 'i>>, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        for n in node.children().filter(Node::is_element) {
            match n.tag_name().name() {
                "t" => self.push_text(n.text().unwrap_or("")),
                "tab" if !is_w(&node, "tabs") => self.push_text("\t"),
                "noBreakHyphen" => self.push_text("-"),
                "br" | "cr" => {
                    let page = n.attributes().any(|a| a.name() == "type" && a.value() == "page");
                    if page && self.rendered_breaks {
                        continue;
                    }
                    self.current.lines.push((String::new(), page));
                }
                "lastRenderedPageBreak" => self.current.lines.push((String::new(), true)),
                "txbxContent" => boxes.push(n),
                // Deleted text, field codes, properties, the VML copy of a drawing.
                "delText" | "instrText" | "pPr" | "rPr" | "Fallback" | "del" | "moveFrom" => {}
                "tbl" | "p" => {} // block content where inline is expected: skipped
                _ => self.inline(n, boxes, depth + 1),
            }
        }
    }

    fn push_text(&mut self, text: &str) {
        if let Some((line, _)) = self.current.lines.last_mut() {
            line.push_str(text);
        } else {
            self.current.lines.push((text.to_string(), false));
        }
    }

    fn table(&mut self, tbl: Node<'_, '_>, depth: usize) {
        self.flush();
        let mut first = true;
        for row in rows_of(tbl) {
            let cells: Vec<String> = cells_of(row).map(|cell| cell_text(cell, depth + 1)).collect();
            if cells.iter().all(|c| c.is_empty()) {
                continue;
            }
            let text = cells.join("\t").trim_end().to_string();
            self.current = Block {
                lines: vec![(text, false)],
                heading: None,
                is_table_row: true,
                page_break_before: false,
                tight: !first,
            };
            self.flush();
            first = false;
        }
    }
}

/// `w:pageBreakBefore` without `w:val`, or with a true value.
fn is_on(node: &Node<'_, '_>) -> bool {
    !matches!(val(node), Some("0" | "false" | "off"))
}

fn rows_of<'a, 'i>(tbl: Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    tbl.children().filter(Node::is_element).flat_map(|n| -> Vec<Node<'a, 'i>> {
        match n.tag_name().name() {
            "tr" => vec![n],
            "sdt" | "customXml" => n.descendants().filter(|d| is_w(d, "tr")).collect(),
            _ => Vec::new(),
        }
    })
}

fn cells_of<'a, 'i>(row: Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    row.children().filter(Node::is_element).flat_map(|n| -> Vec<Node<'a, 'i>> {
        match n.tag_name().name() {
            "tc" => vec![n],
            "sdt" | "customXml" => n.descendants().filter(|d| is_w(d, "tc")).collect(),
            _ => Vec::new(),
        }
    })
}

/// A cell's text: its paragraphs (and nested tables' cells) joined by single spaces.
fn cell_text(cell: Node<'_, '_>, depth: usize) -> String {
    let styles = Styles::default();
    let mut walker = Walker { styles: &styles, rendered_breaks: true, blocks: Vec::new(), current: Block::default() };
    walker.blocks_of(cell, depth);
    walker.flush();
    let mut parts: Vec<String> = Vec::new();
    for block in walker.blocks {
        for (line, _) in block.lines {
            let squashed = line.split_whitespace().collect::<Vec<_>>().join(" ");
            if !squashed.is_empty() {
                parts.push(squashed);
            }
        }
    }
    parts.join(" ")
}

/// Turns the blocks into the line, page and TOC tables.
fn assemble(name: &str, blocks: Vec<Block>, rendered_breaks: bool, mut diagnostics: Vec<Diagnostic>) -> ParsedDocument {
    let any_break = blocks.iter().any(|b| b.page_break_before || b.lines.iter().any(|(_, brk)| *brk));
    // (page, row on page, text, table row?) rows; headings as (level, title, page).
    let mut page = 1u32;
    let mut row = 0u32;
    let mut page_chars = 0usize;
    let mut placed: Vec<(u32, u32, String)> = Vec::new();
    let mut headings: Vec<(u32, String, u32)> = Vec::new();
    let mut has_tables = false;
    let new_page = |page: &mut u32, row: &mut u32, page_chars: &mut usize| {
        if *row > 0 {
            *page += 1;
            *row = 0;
            *page_chars = 0;
        }
    };
    for block in blocks {
        if block.page_break_before {
            new_page(&mut page, &mut row, &mut page_chars);
        }
        if !any_break && !block.tight && page_chars >= CHARS_PER_PAGE {
            new_page(&mut page, &mut row, &mut page_chars);
        }
        if row > 0 && !block.tight {
            row += 1; // a blank row between blocks
        }
        let mut heading_text = String::new();
        let mut heading_page = None;
        for (text, break_before) in block.lines {
            if break_before {
                new_page(&mut page, &mut row, &mut page_chars);
            }
            let text = text.trim_end();
            if text.trim().is_empty() {
                continue;
            }
            has_tables |= block.is_table_row;
            page_chars += text.chars().count();
            if block.heading.is_some() {
                heading_page.get_or_insert(page);
                if !heading_text.is_empty() {
                    heading_text.push(' ');
                }
                heading_text.push_str(text.trim());
            }
            placed.push((page, row, text.to_string()));
            row += 1;
        }
        if let (Some(level), Some(start)) = (block.heading, heading_page) {
            headings.push((level, heading_text, start));
        }
    }

    let n_pages = placed.last().map_or(1, |p| p.0);
    let mut lines: Vec<Line> = Vec::with_capacity(placed.len());
    let mut pages: Vec<PageInfo> = Vec::new();
    for page_no in 1..=n_pages {
        let on_page: Vec<&(u32, u32, String)> = placed.iter().filter(|p| p.0 == page_no).collect();
        let n_rows = on_page.last().map_or(1, |p| p.1 + 1) as f32;
        let top = n_rows * ROW_HEIGHT;
        let mut width = 0.0f32;
        let mut n_chars = 0u32;
        for (i, (_, row, text)) in on_page.iter().enumerate() {
            let chars = text.chars().count();
            n_chars += chars as u32;
            width = width.max(chars as f32 * CHAR_WIDTH);
            let y1 = top - *row as f32 * ROW_HEIGHT;
            lines.push(Line {
                line_id: (lines.len() + 1) as u32,
                page: page_no,
                line_in_page: (i + 1) as u32,
                text: text.clone(),
                bbox: BBox { x0: 0.0, y0: y1 - ROW_HEIGHT * 0.8, x1: chars as f32 * CHAR_WIDTH, y1 },
            });
        }
        pages.push(PageInfo::from_text(page_no, on_page.len() as u32, n_chars, width, top));
    }
    if lines.is_empty() {
        diagnostics.push(Diagnostic::new(Severity::Warning, None, format!("{name}: no text")));
    }
    let toc = toc_rows(&headings, n_pages, TocSource::Headings);
    let description = crate::doctype::describe(&lines, &toc, None);
    let profile = DocumentProfile {
        format: DocumentFormat::Docx,
        n_pages: None,
        has_toc: !toc.is_empty(),
        has_tables,
        languages: crate::lang::detect_languages(lines.iter().map(|l| l.text.as_str())),
        is_scanned: false,
        doc_type: description.doc_type.map(String::from),
        typical_fields: description.typical_fields,
        summary: description.summary,
    };
    let how = if rendered_breaks {
        "cut where Word last rendered page breaks"
    } else if any_break {
        "cut at explicit page breaks"
    } else {
        "cut every ~3000 characters"
    };
    diagnostics.push(Diagnostic::new(
        Severity::Info,
        None,
        format!("DOCX: no real pages; page numbers are approximate ({how})"),
    ));
    ParsedDocument { source: name.to_string(), profile, lines, pages, toc, diagnostics }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn style_names_and_outline_levels() {
        assert_eq!(level_from_name("heading 2"), Some(2));
        assert_eq!(level_from_name("Heading1"), Some(1));
        assert_eq!(level_from_name("Title"), Some(1));
        assert_eq!(level_from_name("Heading"), None);
        assert_eq!(level_from_name("Normal"), None);
        let xml = Xml::parse(
            r#"<w:styles xmlns:w="x">
              <w:style w:type="paragraph" w:styleId="Titre1"><w:name w:val="heading 1"/></w:style>
              <w:style w:type="paragraph" w:styleId="Mine"><w:name w:val="Mine"/><w:basedOn w:val="Titre1"/></w:style>
              <w:style w:type="paragraph" w:styleId="Deep"><w:name w:val="Deep"/>
                <w:pPr><w:outlineLvl w:val="2"/></w:pPr></w:style>
              <w:style w:type="paragraph" w:styleId="Body"><w:name w:val="Body"/>
                <w:pPr><w:outlineLvl w:val="9"/></w:pPr></w:style>
              <w:style w:type="paragraph" w:styleId="Loop"><w:basedOn w:val="Loop"/></w:style>
            </w:styles>"#,
        )
        .expect("xml");
        let styles = Styles::read(&xml);
        assert_eq!(styles.level("Titre1"), Some(1));
        assert_eq!(styles.level("Mine"), Some(1), "inherited through basedOn");
        assert_eq!(styles.level("Deep"), Some(3));
        assert_eq!(styles.level("Body"), None);
        assert_eq!(styles.level("Loop"), None, "a basedOn cycle ends");
        assert_eq!(styles.level("Heading4"), Some(4), "unknown id falls back to its name");
    }
}
