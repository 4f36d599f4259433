//! Plain-text and Markdown input.
//!
//! Text documents have no real pages: every line is on **page 1**, the page
//! table has one row, `n_pages` is `None` and the profile notes it. Each
//! non-empty source line becomes one line-table row (text kept as is, trailing
//! whitespace removed). Its bbox is synthetic: one row of
//! [`ROW_HEIGHT`] points per *source* line number, counted from the top, so a
//! blank line shows as a vertical gap (paragraph breaks survive for the
//! chunker). Markdown headings (`#`… ATX and `===`/`---` setext, outside
//! fenced code blocks) become TOC rows with source `Headings`, start and end
//! page 1, level from the `#` count (setext: `=` 1, `-` 2). The setext
//! underline itself stays a line: it is the document's text.

use docintel_schema::{
    BBox, Diagnostic, DocumentFormat, DocumentProfile, Line, PageInfo, ParsedDocument, Severity, TocSource,
};

use crate::headings::toc_rows;

/// Height of one synthetic text row, in points.
pub(crate) const ROW_HEIGHT: f32 = 12.0;
/// Width of one character in the synthetic bbox, in points.
const CHAR_WIDTH: f32 = 6.0;

/// Parses text held in memory; `markdown` turns heading recognition on.
/// Invalid UTF-8 is replaced (U+FFFD) and reported as a diagnostic.
pub(crate) fn parse_text_bytes(name: &str, bytes: &[u8], markdown: bool) -> ParsedDocument {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut diagnostics = Vec::new();
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t.to_string(),
        Err(_) => {
            diagnostics.push(Diagnostic::new(
                Severity::Warning,
                None,
                format!("{name}: not valid UTF-8; invalid bytes replaced by U+FFFD"),
            ));
            String::from_utf8_lossy(bytes).into_owned()
        }
    };
    let source_lines: Vec<&str> = text.lines().collect();
    let n_rows = source_lines.len().max(1) as f32;
    let top = n_rows * ROW_HEIGHT;

    let mut lines: Vec<Line> = Vec::new();
    let mut headings: Vec<(u32, String, u32)> = Vec::new();
    let mut in_fence = false;
    let mut width = 0.0f32;
    for (row, raw) in source_lines.iter().enumerate() {
        let trimmed = raw.trim_end();
        if markdown {
            let t = trimmed.trim_start();
            if t.starts_with("```") || t.starts_with("~~~") {
                in_fence = !in_fence;
            } else if !in_fence {
                if let Some((level, title)) = atx_heading(trimmed) {
                    headings.push((level, title.to_string(), 1));
                } else if let Some(level) = setext_level(trimmed)
                    && row > 0
                    && !source_lines[row - 1].trim().is_empty()
                    && setext_level(source_lines[row - 1]).is_none()
                    && !source_lines[row - 1].trim_start().starts_with(['`', '~'])
                    && atx_heading(source_lines[row - 1].trim_end()).is_none()
                {
                    headings.push((level, source_lines[row - 1].trim().to_string(), 1));
                }
            }
        }
        if trimmed.trim().is_empty() {
            continue;
        }
        let n_chars = trimmed.chars().count() as f32;
        width = width.max(n_chars * CHAR_WIDTH);
        let y1 = top - row as f32 * ROW_HEIGHT;
        let id = (lines.len() + 1) as u32;
        lines.push(Line {
            line_id: id,
            page: 1,
            line_in_page: id,
            text: trimmed.to_string(),
            bbox: BBox { x0: 0.0, y0: y1 - ROW_HEIGHT * 0.8, x1: n_chars * CHAR_WIDTH, y1 },
        });
    }
    if lines.is_empty() {
        diagnostics.push(Diagnostic::new(Severity::Warning, None, format!("{name}: no text")));
    }
    let toc = toc_rows(&headings, 1, TocSource::Headings);
    let n_chars: usize = lines.iter().map(|l| l.text.chars().count()).sum();
    let page = PageInfo::from_text(1, lines.len() as u32, n_chars as u32, width, top);
    let description = crate::doctype::describe(&lines, &toc, None);
    let profile = DocumentProfile {
        format: DocumentFormat::Txt,
        n_pages: None,
        has_toc: !toc.is_empty(),
        has_tables: crate::tables::text_has_table(lines.iter().map(|l| l.text.as_str())),
        languages: crate::lang::detect_languages(lines.iter().map(|l| l.text.as_str())),
        is_scanned: false,
        doc_type: description.doc_type.map(String::from),
        typical_fields: description.typical_fields,
        summary: description.summary,
    };
    diagnostics.push(Diagnostic::new(Severity::Info, None, "text document: no real pages; every line is on page 1"));
    ParsedDocument { source: name.to_string(), profile, lines, pages: vec![page], toc, diagnostics }
}

/// `## Title ##` → (2, "Title"); up to 6 `#`, followed by a space or the end.
fn atx_heading(line: &str) -> Option<(u32, &str)> {
    let t = line.trim_start();
    if line.len() - t.len() > 3 {
        return None; // indented code
    }
    let hashes = t.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &t[hashes..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    let title = rest.trim().trim_end_matches('#').trim_end();
    (!title.is_empty()).then_some((hashes as u32, title))
}

/// `===` → 1, `---` → 2 (a setext underline).
fn setext_level(line: &str) -> Option<u32> {
    let t = line.trim();
    if t.is_empty() || line.len() - line.trim_start().len() > 3 {
        return None;
    }
    if t.bytes().all(|b| b == b'=') {
        Some(1)
    } else if t.bytes().all(|b| b == b'-') {
        Some(2)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Markdown → (lines, toc rows as (level, parent, title)).
    fn check(text: &str, lines: &[&str], toc: &[(u32, Option<u32>, &str)]) {
        let doc = parse_text_bytes("t.md", text.as_bytes(), true);
        doc.check_invariants().unwrap();
        let got: Vec<&str> = doc.lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(got, lines);
        let got: Vec<(u32, Option<u32>, &str)> =
            doc.toc.iter().map(|t| (t.level, t.parent, t.title.as_str())).collect();
        assert_eq!(got, toc);
        assert!(doc.toc.iter().all(|t| (t.start_page, t.end_page, t.source) == (1, 1, TocSource::Headings)));
        assert!(doc.lines.iter().all(|l| l.page == 1));
    }

    #[test]
    fn markdown_headings_become_toc_rows() {
        check(
            "# Guide\n\nIntro text.\n\n## Setup ##\nRun it.\n```\n# not a heading\n```\nOther\n-----\n\n#hashtag\n",
            &[
                "# Guide",
                "Intro text.",
                "## Setup ##",
                "Run it.",
                "```",
                "# not a heading",
                "```",
                "Other",
                "-----",
                "#hashtag",
            ],
            &[(1, None, "Guide"), (2, Some(0), "Setup"), (2, Some(0), "Other")],
        );
        check("Title\n=====\n\n---\nbody", &["Title", "=====", "---", "body"], &[(1, None, "Title")]);
        check("", &[], &[]);
    }

    #[test]
    fn blank_lines_leave_vertical_gaps_and_profile_says_no_pages() {
        let doc = parse_text_bytes("t.txt", b"\xEF\xBB\xBFone\ntwo\n\nthree\n# plain\n", false);
        let [a, b, c, _] = &doc.lines[..] else { panic!("{:?}", doc.lines) };
        assert_eq!(a.text, "one");
        assert!((a.bbox.y0 - b.bbox.y0 - ROW_HEIGHT).abs() < 1e-3);
        assert!((b.bbox.y0 - c.bbox.y0 - 2.0 * ROW_HEIGHT).abs() < 1e-3);
        assert!(doc.toc.is_empty(), "plain text has no Markdown headings");
        assert_eq!((doc.profile.format, doc.profile.n_pages), (DocumentFormat::Txt, None));
        assert!(doc.diagnostics.iter().any(|d| d.message.contains("no real pages")));
        let bad = parse_text_bytes("b.txt", b"caf\xe9\n", false);
        assert_eq!(bad.lines[0].text, "caf\u{FFFD}");
        assert!(bad.diagnostics.iter().any(|d| d.severity == Severity::Warning));
    }
}
