//! Row runs: the line table read with the pieces of one printed line joined.
//!
//! The parser starts a new line at a horizontal gap of 0.8 em, as PyMuPDF
//! does, so a section number and its title, a label and the value printed a
//! tab stop to its right, or the cells of a table row are separate lines, each
//! with its own box. That is the faithful line table (and what a highlight or
//! an LLM prompt should show), but text matching that needs the words of a row
//! together — keyword retrieval scoring `total` and an amount on one line, the
//! extractive generator pairing `Total:` with `$12.34`, a control id with its
//! title — reads a [`RowView`] instead: the same document with each *run*
//! joined into one line.
//!
//! A run is a maximal sequence of consecutive lines of one page on one visual
//! row (bottom edges within half an em, vertical ranges overlapping by half
//! the smaller height), each starting at most [`RUN_JOIN_EM`] ems after the
//! previous one ends (and not more than half an em before it): the tab-stop
//! gaps the collector broke lines at before it followed PyMuPDF. The em of a
//! pair is the larger of the two box heights (a line box spans 1 em of its
//! font). Lines without a box (formats without layout) are never joined.
//!
//! The view keeps the document's pages, TOC, profile and source; its line ids
//! are its own (1-based, in order), and map both ways: a view line covers the
//! document lines `first..=last` of its run, so a span cited in the view is a
//! valid span of the document whose quote (the run's texts joined by single
//! spaces) verifies against those lines (quotes are compared without
//! whitespace, see [`crate::text::squash`]).

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::ops::Range;

use crate::document::{BBox, Line, ParsedDocument};
use crate::retrieval::Passage;

/// Two lines of one row join into one run when the gap between them is at
/// most this many ems (the collector's line-break gap before it followed
/// PyMuPDF's 0.8 em).
pub const RUN_JOIN_EM: f32 = 3.0;

/// A line may start this many ems before the previous one ends and still
/// continue it (kerning, overhanging glyph boxes).
const RUN_OVERLAP_EM: f32 = 0.5;

fn has_box(b: &BBox) -> bool {
    b.x1 > b.x0 && b.y1 > b.y0
}

/// Whether two lines are printed on one visual row of one page, whatever
/// the gap between them (see the module docs).
pub fn on_one_row(prev: &Line, next: &Line) -> bool {
    let (a, b) = (&prev.bbox, &next.bbox);
    if prev.page != next.page || !has_box(a) || !has_box(b) {
        return false;
    }
    let (ha, hb) = (a.y1 - a.y0, b.y1 - b.y0);
    let overlap = a.y1.min(b.y1) - a.y0.max(b.y0);
    overlap >= 0.5 * ha.min(hb) && (a.y0 - b.y0).abs() <= 0.5 * ha.max(hb)
}

/// Whether `next` continues `prev` on its printed line (see the module docs).
pub fn continues_run(prev: &Line, next: &Line) -> bool {
    if !on_one_row(prev, next) {
        return false;
    }
    let (a, b) = (&prev.bbox, &next.bbox);
    let em = (a.y1 - a.y0).max(b.y1 - b.y0);
    let gap = b.x0 - a.x1;
    (-RUN_OVERLAP_EM * em..=RUN_JOIN_EM * em).contains(&gap)
}

/// The document read with every run of lines joined (see the module docs).
/// When no run joins two lines the view borrows the document as it is.
#[derive(Debug, Clone, PartialEq)]
pub struct RowView<'a> {
    /// The joined document: one line per run, ids 1-based in order.
    document: Cow<'a, ParsedDocument>,
    /// Per view line (index = id − 1): the first document line of its run
    /// (empty when the view is the document).
    first: Vec<u32>,
    /// Per view line: the last document line of its run.
    last: Vec<u32>,
    /// Per document line (index = id − 1): the view line holding it.
    view_of: Vec<u32>,
}

/// The runs of `lines` (a page's or a document's, in reading order) as index
/// ranges, in order, covering every line once.
pub fn runs(lines: &[Line]) -> Vec<Range<usize>> {
    runs_cut(lines, &BTreeSet::new())
}

/// [`runs`], with a run also ending before every line whose id is in `cuts`.
fn runs_cut(lines: &[Line], cuts: &BTreeSet<u32>) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        match out.last_mut() {
            Some(run) if i > 0 && !cuts.contains(&line.line_id) && continues_run(&lines[i - 1], line) => {
                run.end = i + 1
            }
            _ => out.push(i..i + 1),
        }
    }
    out
}

/// The lines of one run joined: texts separated by one space, boxes united;
/// id, page and line-in-page of the first line.
pub fn join_run(run: &[Line]) -> Option<Line> {
    let (head, tail) = run.split_first()?;
    let mut joined = head.clone();
    for line in tail {
        joined.text.push(' ');
        joined.text.push_str(line.text.trim_start());
        joined.bbox = joined.bbox.union(line.bbox);
    }
    Some(joined)
}

impl<'a> RowView<'a> {
    /// The view of `document`.
    pub fn of(document: &'a ParsedDocument) -> RowView<'a> {
        RowView::cut(document, &BTreeSet::new())
    }

    /// The view of `document` with runs also cut before every line id in
    /// `cuts`: a range of document lines that starts at a cut and ends just
    /// before one maps onto whole view lines and back to itself.
    pub fn cut(document: &'a ParsedDocument, cuts: &BTreeSet<u32>) -> RowView<'a> {
        let runs = runs_cut(&document.lines, cuts);
        if runs.len() == document.lines.len() {
            return RowView {
                document: Cow::Borrowed(document),
                first: Vec::new(),
                last: Vec::new(),
                view_of: Vec::new(),
            };
        }
        let mut lines: Vec<Line> = Vec::with_capacity(runs.len());
        let mut first = Vec::with_capacity(runs.len());
        let mut last = Vec::with_capacity(runs.len());
        let mut view_of = Vec::with_capacity(document.lines.len());
        for run in runs {
            let members = &document.lines[run];
            let Some(mut joined) = join_run(members) else { continue };
            joined.line_in_page = match lines.last() {
                Some(previous) if previous.page == joined.page => previous.line_in_page + 1,
                _ => 1,
            };
            joined.line_id = lines.len() as u32 + 1;
            first.push(members[0].line_id);
            last.push(members[members.len() - 1].line_id);
            view_of.extend(std::iter::repeat_n(joined.line_id, members.len()));
            lines.push(joined);
        }
        let document = ParsedDocument {
            source: document.source.clone(),
            profile: document.profile.clone(),
            lines,
            pages: document.pages.clone(),
            toc: document.toc.clone(),
            diagnostics: document.diagnostics.clone(),
        };
        RowView { document: Cow::Owned(document), first, last, view_of }
    }

    /// The view as a document of its own (its line ids are the view's).
    pub fn document(&self) -> &ParsedDocument {
        &self.document
    }

    /// The view owning its document (a copy when it borrowed it).
    pub fn into_owned(self) -> RowView<'static> {
        RowView {
            document: Cow::Owned(self.document.into_owned()),
            first: self.first,
            last: self.last,
            view_of: self.view_of,
        }
    }

    /// Whether every run is a single line (the view is the document).
    pub fn is_identity(&self) -> bool {
        self.view_of.is_empty()
    }

    /// The view line holding document line `line_id` (clamped to the table).
    pub fn to_view(&self, line_id: u32) -> u32 {
        let n = self.view_of.len();
        if n == 0 {
            return line_id;
        }
        self.view_of[(line_id.max(1) as usize).min(n) - 1]
    }

    /// The document lines `(first, last)` of view line `view_id` (clamped).
    pub fn run(&self, view_id: u32) -> (u32, u32) {
        let n = self.first.len();
        if n == 0 {
            return (view_id, view_id);
        }
        let i = (view_id.max(1) as usize).min(n) - 1;
        (self.first[i], self.last[i])
    }

    /// The document range covering view lines `start..=end`.
    pub fn to_document(&self, start: u32, end: u32) -> (u32, u32) {
        (self.run(start).0, self.run(end).1)
    }

    /// A document passage in view line ids (runs it cuts are taken whole).
    pub fn passage_to_view(&self, passage: &Passage) -> Passage {
        Passage {
            line_start: self.to_view(passage.line_start),
            line_end: self.to_view(passage.line_end),
            anchor_line: self.to_view(passage.anchor_line),
            ..passage.clone()
        }
    }

    /// A view passage in document line ids (every run it holds, whole).
    pub fn passage_to_document(&self, passage: &Passage) -> Passage {
        let (line_start, line_end) = self.to_document(passage.line_start, passage.line_end);
        Passage { line_start, line_end, anchor_line: self.run(passage.anchor_line).0, ..passage.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{DocumentFormat, DocumentProfile};

    fn line(id: u32, page: u32, text: &str, x0: f32, y0: f32, x1: f32) -> Line {
        Line { line_id: id, page, line_in_page: 0, text: text.into(), bbox: BBox { x0, y0, x1, y1: y0 + 10.0 } }
    }

    fn document(mut lines: Vec<Line>) -> ParsedDocument {
        let mut previous_page = 0;
        let mut in_page = 0;
        for line in &mut lines {
            in_page = if line.page == previous_page { in_page + 1 } else { 1 };
            previous_page = line.page;
            line.line_in_page = in_page;
        }
        ParsedDocument {
            source: "t".into(),
            profile: DocumentProfile {
                format: DocumentFormat::Pdf,
                n_pages: Some(2),
                has_toc: false,
                has_tables: false,
                languages: vec![],
                is_scanned: false,
                doc_type: None,
                typical_fields: vec![],
                summary: None,
            },
            lines,
            pages: vec![],
            toc: vec![],
            diagnostics: vec![],
        }
    }

    #[test]
    fn runs_join_tab_stop_gaps_on_one_row_only() {
        let doc = document(vec![
            // "AC-2" then its title 1.5 em to the right: one run.
            line(1, 1, "AC-2", 72.0, 700.0, 95.0),
            line(2, 1, "ACCOUNT MANAGEMENT", 110.0, 700.0, 220.0),
            // A label and a value far to the right (30 em): two runs.
            line(3, 1, "Total:", 72.0, 680.0, 100.0),
            line(4, 1, "$12.34", 400.0, 680.0, 430.0),
            // The next row: a run of its own even though it is close.
            line(5, 1, "next row", 72.0, 668.0, 120.0),
            // Same position on the next page: never joined across pages.
            line(6, 2, "page two", 125.0, 668.0, 170.0),
            // No box: never joined.
            Line { line_id: 7, page: 2, line_in_page: 2, text: "boxless".into(), bbox: BBox::default() },
        ]);
        let view = RowView::of(&doc);
        let texts: Vec<&str> = view.document().lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["AC-2 ACCOUNT MANAGEMENT", "Total:", "$12.34", "next row", "page two", "boxless"]);
        assert!(view.document().check_invariants().is_ok());
        assert!(!view.is_identity());
        assert_eq!(view.document().lines[0].bbox, BBox { x0: 72.0, y0: 700.0, x1: 220.0, y1: 710.0 });
        assert_eq!(view.document().lines[4].line_in_page, 1);
        assert_eq!((view.to_view(1), view.to_view(2), view.to_view(3), view.to_view(7)), (1, 1, 2, 6));
        assert_eq!(view.run(1), (1, 2));
        assert_eq!(view.to_document(1, 3), (1, 4));
        let passage = Passage {
            line_start: 2,
            line_end: 3,
            page: 1,
            score: 1.0,
            anchor_line: 2,
            matched_keywords: vec![],
            pinned: false,
        };
        let in_view = view.passage_to_view(&passage);
        assert_eq!((in_view.line_start, in_view.line_end, in_view.anchor_line), (1, 2, 1));
        let back = view.passage_to_document(&in_view);
        assert_eq!((back.line_start, back.line_end, back.anchor_line), (1, 3, 1));
    }

    #[test]
    fn cuts_keep_a_range_whole() {
        let doc = document(vec![
            line(1, 1, "Total:", 72.0, 600.0, 100.0),
            line(2, 1, "$12.34", 115.0, 600.0, 145.0),
            line(3, 1, "EUR", 160.0, 600.0, 180.0),
        ]);
        assert_eq!(RowView::of(&doc).document().lines.len(), 1);
        let view = RowView::cut(&doc, &BTreeSet::from([2, 3]));
        let texts: Vec<&str> = view.document().lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["Total:", "$12.34", "EUR"]);
        assert_eq!(view.to_document(view.to_view(2), view.to_view(2)), (2, 2));
    }

    #[test]
    fn a_document_without_split_rows_is_its_own_view() {
        let doc = document(vec![line(1, 1, "one", 72.0, 700.0, 95.0), line(2, 1, "two", 72.0, 688.0, 95.0)]);
        let view = RowView::of(&doc);
        assert!(view.is_identity());
        assert_eq!(view.document(), &doc);
    }
}
