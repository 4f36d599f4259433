//! Sections that share a page: a TOC entry ends on the page before the next
//! entry of the same or a higher level starts — unless that next heading
//! sits below some of the page's text, in which case the text above it is
//! the end of this section and the page belongs to both.
//!
//! Catalogues and contracts start headings mid-page all the time ("AU-2
//! Event Logging" on page 44, its "Related Controls" line on page 45 above
//! "AU-3"); without this, a section read "whole" lost its last lines.
//! Running headers and footers (the same text, digits aside, at the top or
//! bottom of several pages) do not count as text above the heading.

use std::collections::{HashMap, HashSet};

use docintel_schema::{Line, TocEntry, text};

/// A top or bottom line repeated on this many pages is page furniture.
const FURNITURE_MIN_PAGES: usize = 3;
/// Lines at each end of a page looked at for furniture.
const FURNITURE_EDGE: usize = 2;
/// Characters of the squashed title compared with the start of a line.
const TITLE_PREFIX: usize = 24;

fn furniture_key(text_in: &str) -> String {
    text::squash(text_in).chars().filter(|c| !c.is_ascii_digit()).collect()
}

/// Texts (squashed, digits removed) at the top or bottom of at least
/// [`FURNITURE_MIN_PAGES`] pages.
fn furniture(pages: &HashMap<u32, &[Line]>) -> HashSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for lines in pages.values() {
        let mut keys: HashSet<String> = HashSet::new();
        let n = lines.len();
        for (i, line) in lines.iter().enumerate() {
            if i < FURNITURE_EDGE || i + FURNITURE_EDGE >= n {
                keys.insert(furniture_key(&line.text));
            }
        }
        for key in keys {
            *seen.entry(key).or_default() += 1;
        }
    }
    seen.into_iter().filter(|(k, n)| *n >= FURNITURE_MIN_PAGES && !k.is_empty()).map(|(k, _)| k).collect()
}

/// Extends `end_page` of every entry whose successor's heading starts below
/// text on the successor's first page. `lines` are in page order.
pub(crate) fn extend_into_shared_pages(toc: &mut [TocEntry], lines: &[Line]) {
    if toc.len() < 2 || lines.is_empty() {
        return;
    }
    let pages: HashMap<u32, &[Line]> =
        lines.chunk_by(|a, b| a.page == b.page).map(|page| (page[0].page, page)).collect();
    let furniture = furniture(&pages);
    // Whether the heading titled `title` on `page` has body text above it.
    let below_text = |title: &str, page: u32| -> bool {
        let Some(lines) = pages.get(&page) else { return false };
        let wanted: String = text::squash(title).chars().take(TITLE_PREFIX).collect();
        if wanted.is_empty() {
            return false;
        }
        let Some(at) = lines.iter().position(|l| {
            let line = text::squash(&l.text);
            line.starts_with(&wanted) || (line.chars().count() >= 8 && wanted.starts_with(&line))
        }) else {
            return false;
        };
        lines[..at].iter().any(|l| {
            let key = furniture_key(&l.text);
            !key.is_empty() && !furniture.contains(&key)
        })
    };
    for i in 0..toc.len() {
        let level = toc[i].level;
        let Some(next) = toc[i + 1..].iter().find(|e| e.level <= level) else { continue };
        let (next_page, next_title) = (next.start_page, next.title.clone());
        if next_page == toc[i].end_page + 1 && next_page > toc[i].start_page && below_text(&next_title, next_page) {
            toc[i].end_page = next_page;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use docintel_schema::{BBox, TocSource};

    fn lines(pages: &[&[&str]]) -> Vec<Line> {
        let mut out = Vec::new();
        for (p, texts) in pages.iter().enumerate() {
            for (i, t) in texts.iter().enumerate() {
                out.push(Line {
                    line_id: out.len() as u32 + 1,
                    page: p as u32 + 1,
                    line_in_page: i as u32 + 1,
                    text: (*t).to_owned(),
                    bbox: BBox::default(),
                });
            }
        }
        out
    }

    fn entry(id: u32, title: &str, start_page: u32, end_page: u32) -> TocEntry {
        TocEntry { id, parent: None, level: 1, title: title.into(), start_page, end_page, source: TocSource::Outline }
    }

    #[test]
    fn a_heading_below_body_text_shares_its_page_with_the_section_before() {
        let doc = lines(&[
            &["Catalog header", "AU-1 Policy", "body", "1"],
            &["Catalog header", "more AU-1 body", "AU-2 Event Logging", "body", "2"],
            &["Catalog header", "AU-3 Content of Audit Records", "body", "3"],
            &["Catalog header", "AU-4 Storage", "body", "4"],
        ]);
        let mut toc = vec![
            entry(0, "AU-1 Policy", 1, 1),
            entry(1, "AU-2 Event Logging", 2, 2),
            entry(2, "AU-3 Content of Audit Records", 3, 3),
            entry(3, "AU-4 Storage", 4, 4),
        ];
        extend_into_shared_pages(&mut toc, &doc);
        let ends: Vec<u32> = toc.iter().map(|e| e.end_page).collect();
        // AU-1's body runs onto page 2 above AU-2; AU-3 and AU-4 open their
        // pages under the running header only.
        assert_eq!(ends, [2, 2, 3, 4]);
    }

    #[test]
    fn an_unfound_title_changes_nothing() {
        let doc = lines(&[&["x", "a", "b"], &["y", "text", "Something else"], &["z"]]);
        let mut toc = vec![entry(0, "Intro", 1, 1), entry(1, "Chapter 2", 2, 3)];
        extend_into_shared_pages(&mut toc, &doc);
        assert_eq!(toc[0].end_page, 1);
    }
}
