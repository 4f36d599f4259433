//! Stage `context`: expand each passage, shown or in the reserve, to the
//! answer context the question needs.
//!
//! `line` keeps the window; `paragraph` grows the passage to its paragraph
//! (a vertical gap clearly larger than the page's usual line spacing, from
//! the line boxes; without boxes, a short line ending a sentence); `page`
//! takes the whole page; `section` and `chapter` take the pages of the
//! deepest (or top-level) TOC entry holding the hit, one passage per page,
//! at most [`MAX_SECTION_PAGES`]. Passages never cross a page.

use docintel_schema::{AnswerContext, Line, ParsedDocument, Passage, TocEntry, TraceSink};

use super::{Ctx, RankingState};
use crate::error::RetrieveError;
use crate::matching::page_bounds;

/// At most this many pages are added for a section or chapter context.
pub const MAX_SECTION_PAGES: u32 = 5;

/// At most this many lines are added on each side for a paragraph.
const MAX_PARAGRAPH_REACH: usize = 30;

/// For each line of a page, whether a paragraph starts there.
pub(crate) fn paragraph_starts(lines: &[Line]) -> Vec<bool> {
    let mut starts = vec![false; lines.len()];
    if let Some(first) = starts.first_mut() {
        *first = true;
    }
    let has_boxes = lines.iter().filter(|l| l.bbox.y1 > l.bbox.y0).count() * 2 > lines.len();
    if has_boxes {
        let gaps: Vec<f32> = lines.windows(2).map(|w| w[0].bbox.y0 - w[1].bbox.y1).collect();
        let mut positive: Vec<f32> = gaps.iter().copied().filter(|g| *g > 0.0).collect();
        positive.sort_by(f32::total_cmp);
        let median = positive.get(positive.len() / 2).copied().unwrap_or(0.0);
        let threshold = (median * 1.6).max(median + 3.0);
        for (i, gap) in gaps.iter().enumerate() {
            starts[i + 1] = *gap > threshold;
        }
    } else {
        let longest = lines.iter().map(|l| l.text.trim().chars().count()).max().unwrap_or(0);
        for i in 1..lines.len() {
            let previous = lines[i - 1].text.trim();
            let short_end =
                previous.ends_with(['.', ':', '!', '?']) && (previous.chars().count() as f64) < 0.75 * longest as f64;
            starts[i] = previous.is_empty() || lines[i].text.trim().is_empty() || short_end;
        }
    }
    starts
}

fn paragraph(document: &ParsedDocument, passage: &Passage) -> Passage {
    let (first, last) = page_bounds(document, passage.page);
    let lines = document.line_range(first, last);
    let starts = paragraph_starts(lines);
    let index = |id: u32| (id - first) as usize;
    let (lo, hi) = (index(passage.line_start), index(passage.line_end));
    let mut start = lo;
    while start > 0 && !starts[start] && lo - start < MAX_PARAGRAPH_REACH {
        start -= 1;
    }
    let mut end = hi;
    while end + 1 < lines.len() && !starts[end + 1] && end - hi < MAX_PARAGRAPH_REACH {
        end += 1;
    }
    Passage { line_start: first + start as u32, line_end: first + end as u32, ..passage.clone() }
}

fn whole_page(document: &ParsedDocument, passage: &Passage) -> Passage {
    let (first, last) = page_bounds(document, passage.page);
    Passage { line_start: first, line_end: last, ..passage.clone() }
}

/// The deepest TOC entry holding `page` (or the top-level one for a chapter).
fn section_of(toc: &[TocEntry], page: u32, chapter: bool) -> Option<&TocEntry> {
    toc.iter()
        .filter(|e| (e.start_page..=e.end_page).contains(&page))
        .filter(|e| !chapter || e.parent.is_none())
        .max_by_key(|e| if chapter { 0 } else { e.level })
}

/// The hit's page plus the other pages of its section, one passage each.
fn section(document: &ParsedDocument, passage: &Passage, chapter: bool) -> Option<Vec<Passage>> {
    let entry = section_of(&document.toc, passage.page, chapter)?;
    let from = entry.start_page.max(passage.page.saturating_sub(MAX_SECTION_PAGES - 1));
    let to = entry.end_page.min(from + MAX_SECTION_PAGES - 1);
    let mut out = vec![whole_page(document, passage)];
    for page in (from..=to).filter(|p| *p != passage.page) {
        let (first, last) = page_bounds(document, page);
        if first <= last {
            out.push(Passage {
                line_start: first,
                line_end: last,
                page,
                anchor_line: first,
                matched_keywords: Vec::new(),
                pinned: false,
                ..passage.clone()
            });
        }
    }
    Some(out)
}

fn overlap(a: &Passage, b: &Passage) -> bool {
    a.page == b.page && a.line_start <= b.line_end && b.line_start <= a.line_end
}

/// Merges overlapping passages (same page), keeping the first one's rank.
fn merge(passages: Vec<Passage>) -> Vec<Passage> {
    let mut out: Vec<Passage> = Vec::with_capacity(passages.len());
    for p in passages {
        if let Some(existing) = out.iter_mut().find(|e| overlap(e, &p)) {
            existing.line_start = existing.line_start.min(p.line_start);
            existing.line_end = existing.line_end.max(p.line_end);
            existing.pinned |= p.pinned;
            for k in p.matched_keywords {
                if !existing.matched_keywords.contains(&k) {
                    existing.matched_keywords.push(k);
                }
            }
        } else {
            out.push(p);
        }
    }
    out
}

/// Answer context: line, paragraph, page or section, as asked.
pub(crate) fn run(state: &mut RankingState, ctx: &Ctx<'_>, _: &mut dyn TraceSink) -> Result<(), RetrieveError> {
    let context = ctx.question.structural_hints.answer_context;
    let (passages, reserve) = expand_context(
        ctx.document,
        context,
        std::mem::take(&mut state.passages),
        std::mem::take(&mut state.reserve),
        &mut state.notes,
    );
    state.passages = passages;
    state.reserve = reserve;
    Ok(())
}

/// Expands the passages shown and the reserve to `context`; the reserve keeps
/// nothing the passages shown already hold.
fn expand_context(
    document: &ParsedDocument,
    context: AnswerContext,
    passages: Vec<Passage>,
    reserve: Vec<Passage>,
    notes: &mut Vec<String>,
) -> (Vec<Passage>, Vec<Passage>) {
    let mut no_section = false;
    let mut expand = |list: Vec<Passage>| -> Vec<Passage> {
        let expanded: Vec<Passage> = list
            .iter()
            .flat_map(|p| match context {
                AnswerContext::Line => vec![p.clone()],
                AnswerContext::Paragraph => vec![paragraph(document, p)],
                AnswerContext::Page | AnswerContext::Document => vec![whole_page(document, p)],
                AnswerContext::Section | AnswerContext::Chapter => {
                    section(document, p, context == AnswerContext::Chapter).unwrap_or_else(|| {
                        no_section = true;
                        vec![whole_page(document, p)]
                    })
                }
            })
            .collect();
        merge(expanded)
    };
    let shown = expand(passages);
    let reserve: Vec<Passage> = expand(reserve).into_iter().filter(|r| !shown.iter().any(|s| overlap(s, r))).collect();
    match context {
        AnswerContext::Line => {}
        AnswerContext::Document => notes.push("answer context: document capped to the pages of the hits".to_owned()),
        _ if no_section => {
            notes.push("answer context: no TOC section holds some hits, their page was taken".to_owned())
        }
        other => notes.push(format!("answer context: hits expanded to their {}", context_name(other))),
    }
    (shown, reserve)
}

fn context_name(context: AnswerContext) -> &'static str {
    match context {
        AnswerContext::Line => "line",
        AnswerContext::Paragraph => "paragraph",
        AnswerContext::Page => "page",
        AnswerContext::Section => "section (TOC range)",
        AnswerContext::Chapter => "chapter (top-level TOC range)",
        AnswerContext::Document => "document",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::document;
    use docintel_schema::BBox;

    fn hit(doc: &ParsedDocument, line: u32) -> Passage {
        crate::test_support::one_line(doc.line(line).unwrap().page, line, false)
    }

    fn check(doc: &ParsedDocument, context: AnswerContext, line: u32) -> Vec<(u32, u32, u32)> {
        let mut notes = Vec::new();
        let (shown, _) = expand_context(doc, context, vec![hit(doc, line)], vec![], &mut notes);
        shown.iter().map(|p| (p.page, p.line_start, p.line_end)).collect()
    }

    #[test]
    fn paragraph_from_vertical_gaps() {
        let mut doc = document(&[&["Title", "first para a", "first para b", "second para a", "second para b"]]);
        // Lines 12 pt apart, with a 30 pt gap before "second para a".
        let tops = [700.0, 680.0, 668.0, 626.0, 614.0];
        for (line, top) in doc.lines.iter_mut().zip(tops) {
            line.bbox = BBox { x0: 0.0, y0: top - 10.0, x1: 100.0, y1: top };
        }
        assert_eq!(check(&doc, AnswerContext::Paragraph, 5), vec![(1, 4, 5)]);
        assert_eq!(check(&doc, AnswerContext::Line, 5), vec![(1, 5, 5)]);
    }

    #[test]
    fn paragraph_from_text_without_boxes() {
        let doc = document(&[&[
            "A long opening line of the first paragraph goes on",
            "and ends here.",
            "The second paragraph starts with a long line of text",
            "and continues on this line",
            "before it ends.",
        ]]);
        assert_eq!(check(&doc, AnswerContext::Paragraph, 4), vec![(1, 3, 5)]);
    }

    #[test]
    fn page_and_section() {
        let mut doc = document(&[&["intro"], &["s1 a", "s1 b"], &["s1 c"], &["s2"]]);
        assert_eq!(check(&doc, AnswerContext::Page, 2), vec![(2, 2, 3)]);
        let entry = |id: u32, pages| crate::test_support::toc_entry(id, None, 1, &format!("S{id}"), pages);
        doc.toc = vec![entry(0, (1, 1)), entry(1, (2, 3)), entry(2, (4, 4))];
        assert_eq!(check(&doc, AnswerContext::Section, 2), vec![(2, 2, 3), (3, 4, 4)]);
        // Without a TOC a section context falls back to the page.
        doc.toc.clear();
        assert_eq!(check(&doc, AnswerContext::Section, 2), vec![(2, 2, 3)]);
    }
}
