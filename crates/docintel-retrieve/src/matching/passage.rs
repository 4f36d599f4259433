//! Passages and the candidates the stages rank: a run of lines on one page,
//! with what the pipeline knows about it; merging overlapping ones; the
//! lines of a page.

use docintel_schema::{ParsedDocument, Passage};

/// A ranked passage and what the pipeline knows about it.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub(crate) passage: Passage,
    /// Matched at least one keyword that tells lines apart (IDF above the
    /// baseline of a keyword on half the lines).
    pub(crate) discriminating: bool,
    /// Added by the coverage second pass (exempt from the floor).
    pub(crate) coverage: bool,
}

/// Merges `passage` into an overlapping one on the same page, if any.
pub(crate) fn merge_into(passages: &mut [Candidate], passage: &Candidate) -> bool {
    let Some(existing) = passages.iter_mut().find(|c| overlaps(&c.passage, &passage.passage)) else {
        return false;
    };
    let e = &mut existing.passage;
    e.line_start = e.line_start.min(passage.passage.line_start);
    e.line_end = e.line_end.max(passage.passage.line_end);
    e.pinned |= passage.passage.pinned;
    existing.discriminating |= passage.discriminating;
    existing.coverage |= passage.coverage;
    for keyword in &passage.passage.matched_keywords {
        if !e.matched_keywords.contains(keyword) {
            e.matched_keywords.push(keyword.clone());
        }
    }
    true
}

/// Merges overlapping passages on a page, keeping the better-ranked first.
pub(crate) fn merge_all(candidates: Vec<Candidate>) -> Vec<Candidate> {
    let mut merged: Vec<Candidate> = Vec::with_capacity(candidates.len());
    for candidate in candidates {
        if !merge_into(&mut merged, &candidate) {
            merged.push(candidate);
        }
    }
    merged
}

/// Whether two passages share a page and at least one line.
pub(crate) fn overlaps(a: &Passage, b: &Passage) -> bool {
    a.page == b.page && a.line_start <= b.line_end && b.line_start <= a.line_end
}

/// Index range of the lines of `page` in `document.lines` (empty for a page
/// without text).
pub(crate) fn page_range(document: &ParsedDocument, page: u32) -> std::ops::Range<usize> {
    let start = document.lines.partition_point(|l| l.page < page);
    let end = document.lines.partition_point(|l| l.page <= page);
    start..end.max(start)
}

/// First and last line ids of a page (`(u32::MAX, 0)` for a page without text).
pub(crate) fn page_bounds(document: &ParsedDocument, page: u32) -> (u32, u32) {
    let range = page_range(document, page);
    if range.is_empty() {
        return (u32::MAX, 0);
    }
    (document.lines[range.start].line_id, document.lines[range.end - 1].line_id)
}

/// The whole of a page as one passage, anchored on its first line (`None`
/// for a page without text).
pub(crate) fn whole_page(document: &ParsedDocument, page: u32, pinned: bool) -> Option<Passage> {
    let (first, last) = page_bounds(document, page);
    (first <= last).then(|| Passage {
        line_start: first,
        line_end: last,
        page,
        score: 0.0,
        anchor_line: first,
        matched_keywords: Vec::new(),
        pinned,
    })
}
