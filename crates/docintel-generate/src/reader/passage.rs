//! Reading one passage: [`PassageReader::candidates`] finds the values of
//! the asked kind (and of the kinds read with it) on each row, and
//! [`PassageReader::labels`] the labels of a value, by text and by layout;
//! [`super::candidate`] weighs each value found into a candidate.

use docintel_schema::{AnswerValue, Line, ParsedDocument, Passage, TocEntry};

use super::evidence::{self, Hit, Word, folded, words_of};
use super::kinds::{self, FindContext, Found, Kind};
use super::stats::DocStats;
use super::{Asked, Candidate, answerable, page_lines};
use crate::extract::amount;
use crate::extract::date::DayMonthOrder;
use crate::extract::names::LABELLED_NAME_FIT;
use crate::layout::PageLayout;
use crate::statement;
use crate::table::Tables;

/// The deepest TOC entry over `page`.
fn section_of(toc: &[TocEntry], page: u32) -> Option<&TocEntry> {
    toc.iter().filter(|e| e.start_page <= page && page <= e.end_page).max_by_key(|e| (e.level, e.start_page))
}

/// A line made only of values (numbers, amounts, dates, codes) and at most
/// one short word: a table cell, never a label.
pub(super) fn is_value_cell(line: &Line) -> bool {
    let words = words_of(&line.text);
    !words.is_empty()
        && words.iter().any(|w| w.norm.chars().any(|c| c.is_ascii_digit()))
        && words.iter().filter(|w| w.norm.chars().all(char::is_alphabetic) && w.norm.chars().count() > 3).count() <= 1
}

/// A line with words and no digits: a label on its own.
pub(super) fn is_label_only(line: &Line) -> bool {
    let words = words_of(&line.text);
    !words.is_empty() && !line.text.chars().any(|c| c.is_ascii_digit()) && words.len() <= 8
}

/// A label of a value: its folded words, hits, whether a column header, and
/// the view line to cite (none for the value's own row or a header).
pub(super) struct Label {
    pub(super) words: Vec<Word>,
    pub(super) text: String,
    pub(super) header: bool,
    pub(super) cite: Option<u32>,
    pub(super) distance: f64,
}

/// Reads one passage: its candidates (unscored).
pub(super) struct PassageReader<'a> {
    pub(super) asked: &'a Asked,
    pub(super) view: &'a ParsedDocument,
    /// The view's row view and line table (tables are read on its pieces).
    pub(super) source: super::Source<'a>,
    pub(super) stats: &'a DocStats,
    pub(super) order: DayMonthOrder,
    /// The highest retrieval score among the passages.
    pub(super) best_score: f64,
}

/// Per-row facts of a passage.
pub(super) struct RowFacts {
    pub(super) words: Vec<Word>,
    pub(super) hits: Vec<Hit>,
    pub(super) folded: String,
    /// Its term pairs ([`evidence::term_pairs`]).
    pub(super) pairs: Vec<(usize, usize)>,
}

/// Capitalised words of which the document writes one in lower case.
const COMMON_WORDS_NAME_FIT: f64 = 0.3;

impl PassageReader<'_> {
    pub(super) fn candidates(&self, rank: usize, passage: &Passage) -> Vec<Candidate> {
        let asked = self.asked;
        let lines = self.view.line_range(passage.line_start, passage.line_end);
        let rows: Vec<&Line> = lines.iter().collect();
        if rows.is_empty() {
            return Vec::new();
        }
        let page = page_lines(self.view, passage.page);
        let layout = PageLayout::new(page, passage.page);
        // A table's cells by their own pieces: the view joins a row's close
        // cells into one line.
        let tables = Tables::new(page_lines(self.source.document, passage.page));
        let facts: Vec<RowFacts> = rows
            .iter()
            .map(|l| {
                let words = words_of(&l.text);
                let hits = asked.terms.hits(&l.text, &words);
                let folded = words.iter().map(|w| w.norm.as_str()).collect::<Vec<_>>().join(" ");
                let pairs = evidence::term_pairs(&hits);
                RowFacts { words, hits, folded, pairs }
            })
            .collect();
        let passage_hits: Vec<Hit> = facts.iter().flat_map(|f| f.hits.iter().copied()).collect();
        let cov_passage = asked.terms.coverage(&passage_hits, |_| 1.0);
        // The section heading: the TOC entry over the page, and the
        // passage's first row when it reads as a heading.
        let mut section = String::new();
        if let Some(entry) = section_of(&self.view.toc, passage.page) {
            section.push_str(&entry.title);
            section.push(' ');
        }
        if let Some(first) = rows.first()
            && first.text.split_whitespace().count() <= 12
            && !first.text.trim_end().ends_with('.')
        {
            section.push_str(&first.text);
        }
        let section_words = words_of(&section);
        let section_hits = asked.terms.hits(&section, &section_words);
        let cov_section = asked.terms.coverage(&section_hits, |_| 1.0);
        let page_head: Vec<String> = page.iter().take(5).map(|l| folded(&l.text)).collect();
        let texts = || rows.iter().map(|l| l.text.as_str());
        let ctx = FindContext {
            order: self.order,
            currency: amount::dominant_currency(texts())
                .or_else(|| amount::dominant_currency(page.iter().map(|l| l.text.as_str()))),
            scale: texts().find_map(amount::scale_cue).or_else(|| statement::scale(page)),
            focus: asked.focus.clone(),
            mid_line: false,
        };
        let grids = if matches!(asked.kind, Kind::Amount | Kind::Number) { statement::grids(page) } else { Vec::new() };
        let lists = kinds::text::bullet_lists(&rows);
        let mut out = Vec::new();
        for i in 0..rows.len() {
            let mut found = kinds::find(asked.kind, &rows, i, &ctx);
            // A text answer may be the value a label-only row points to by
            // layout (beside it, or under it).
            if asked.kind == Kind::Text
                && i > 0
                && let Some(label) = rows.iter().position(|l| {
                    is_label_only(l)
                        && l.line_id != rows[i].line_id
                        && layout.value_of_label(l).is_some_and(|v| v.line_id == rows[i].line_id)
                })
                && label != i - 1
            {
                let text = rows[i].text.trim();
                let start = rows[i].text.len() - rows[i].text.trim_start().len();
                let mut f = Found::new(start, start + text.len(), i, AnswerValue::Text(text.to_owned()), text, 0.9);
                f.kind = Kind::Text;
                found.push(f);
            }
            // The other kinds the question is read for: their values where
            // the asked kind found none (a sentence holds values: those are
            // read apart).
            // The question's focus names what the asked kind is ("which
            // UNIVERSITY"), not the other kinds' values: a title holding a
            // person question's focus ("chief executive officer") is no
            // organisation for it.
            let other_ctx = FindContext { focus: Vec::new(), ..ctx.clone() };
            for &other in asked.kind.also() {
                let taken: Vec<(usize, usize, usize)> =
                    found.iter().filter(|f| f.kind != Kind::Text).map(|f| (f.row, f.start, f.end)).collect();
                found.extend(kinds::find(other, &rows, i, &other_ctx).into_iter().filter(|f| {
                    !taken.iter().any(|&(row, start, end)| row == f.row && f.start < end && start < f.end)
                }));
            }
            // Capitalised words read as a person by their shape alone: the
            // document tells a heading from a name when it writes one of
            // the words in lower case elsewhere ("Health Care", "Amendment
            // Effective"). The converse proves little: a short document
            // never writes "hotel" in lower case either.
            for f in found.iter_mut().filter(|f| f.kind == Kind::Person && f.fit < LABELLED_NAME_FIT) {
                let words = words_of(&f.text);
                if words.iter().any(|w| w.norm.chars().count() > 1 && self.stats.written_lowercase(&w.norm)) {
                    f.fit = f.fit.min(COMMON_WORDS_NAME_FIT);
                }
            }
            // Order and count within each kind: a value's place among the
            // values of its kind on its row.
            let mut places: Vec<(usize, usize)> = Vec::with_capacity(found.len());
            for (k, f) in found.iter().enumerate() {
                let before = found[..k].iter().filter(|o| o.kind == f.kind).count();
                let all = found.iter().filter(|o| o.kind == f.kind && o.row == i).count();
                places.push((before, all));
            }
            for (f, (n, on_row)) in found.into_iter().zip(places) {
                let i = f.row;
                if let Some(mut c) =
                    self.candidate(rank, passage, &rows, &facts, i, n, f, &layout, &tables, &grids, &page_head)
                {
                    c.features.cov_passage = cov_passage;
                    c.features.cov_section = cov_section;
                    c.features.last_in_row = f64::from(n + 1 == on_row);
                    // A yes/no is decided by a clause about what is asked: one
                    // that names none of the question's terms decides nothing.
                    if asked.kind == Kind::Boolean && !asked.terms.terms.is_empty() && c.features.cov_row == 0.0 {
                        continue;
                    }
                    let anchor = passage.anchor_line;
                    let d = if (c.row..=c.last_row).contains(&anchor) {
                        0.0
                    } else {
                        f64::from(anchor.abs_diff(c.row).min(anchor.abs_diff(c.last_row)))
                    };
                    c.features.anchor = (-d / 3.0).exp();
                    c.features.passage_score =
                        if self.best_score > 0.0 { (passage.score / self.best_score).clamp(0.0, 1.0) } else { 0.0 };
                    c.list = lists
                        .iter()
                        .find(|(intro, items)| *intro == Some(i) || items.iter().any(|(r, _)| *r == i))
                        .map(|(_, items)| items.iter().map(|(r, t)| (rows[*r].line_id, t.clone())).collect());
                    out.push(c);
                }
            }
        }
        // Constraints in the section heading count as evidence too.
        let section_folded = folded(&section);
        for c in &mut out {
            c.missing.retain(|m| {
                let constraint = asked.constraints.iter().find(|k| &k.text == m && !k.local);
                !constraint.is_some_and(|k| answerable::found_in(k, std::slice::from_ref(&section_folded)))
            });
            let found = asked.constraints.iter().filter(|k| !c.missing.contains(&k.text)).count();
            c.features.constraints =
                if asked.constraints.is_empty() { 1.0 } else { found as f64 / asked.constraints.len() as f64 };
        }
        out
    }

    /// The labels of a value at `found` on row `i` (see [`Label`]).
    pub(super) fn labels(
        &self,
        rows: &[&Line],
        facts: &[RowFacts],
        i: usize,
        found: &Found,
        layout: &PageLayout<'_>,
    ) -> Vec<Label> {
        let row = rows[i];
        let mut out: Vec<Label> = Vec::new();
        // The words before the value on its row, when short or ended by ':'.
        let prefix = &row.text[..found.start];
        let prefix_words = words_of(prefix);
        if !prefix_words.is_empty() && (prefix.trim_end().ends_with(':') || prefix_words.len() <= 8) {
            out.push(Label { text: prefix.to_owned(), words: prefix_words, header: false, cite: None, distance: 1.0 });
        }
        let in_passage = |id: u32| rows.iter().any(|l| l.line_id == id);
        if let Some(left) = layout.row_label(row, is_value_cell)
            && left.line_id != row.line_id
        {
            out.push(Label {
                words: words_of(&left.text),
                text: left.text.clone(),
                header: false,
                cite: in_passage(left.line_id).then_some(left.line_id),
                distance: 1.0,
            });
        }
        if let Some(above) = layout.label_above(row, is_value_cell) {
            let cite = (!above.header && in_passage(above.line.line_id) && is_label_only(above.line))
                .then_some(above.line.line_id);
            if above.header || cite.is_some() {
                out.push(Label {
                    words: words_of(&above.line.text),
                    text: above.line.text.clone(),
                    header: above.header,
                    cite,
                    distance: if above.header { 2.0 } else { 1.0 },
                });
            }
        }
        // The other cells of its table row (same visual row, by layout):
        // evidence, not cited. A value that is its whole line is a cell:
        // the lines of a taller cell beside it are its row's too.
        let mates = if found_covers_row(row, found) { layout.cell_mates(row) } else { layout.row_mates(row) };
        for mate in mates {
            if out.iter().any(|l| l.cite == Some(mate.line_id)) {
                continue;
            }
            out.push(Label {
                words: words_of(&mate.text),
                text: mate.text.clone(),
                header: false,
                cite: None,
                distance: 2.0,
            });
        }
        // The row introducing the value ("... known as:").
        if let Some(intro) = found.intro {
            out.push(Label {
                words: facts[intro].words.clone(),
                text: rows[intro].text.clone(),
                header: false,
                cite: Some(rows[intro].line_id),
                distance: 1.0,
            });
        }
        // A value alone on its row whose next row in reading order is
        // another column's reads the caption under it in its own column
        // (a signature block: two names, then their two titles).
        let next_elsewhere = rows.get(found.last_row + 1).is_some_and(|next| !same_column(next, rows[found.last_row]));
        if (next_elsewhere || found.last_row + 1 >= rows.len())
            && found_covers_row(row, found)
            && let Some(caption) = layout.caption_below(row)
            && is_label_only(caption)
            && !out.iter().any(|l| l.text == caption.text)
        {
            out.push(Label {
                words: words_of(&caption.text),
                text: caption.text.clone(),
                header: false,
                cite: in_passage(caption.line_id).then_some(caption.line_id),
                distance: 1.0,
            });
        }
        // A label-only line just before a value alone on its row, unless
        // the layout placed the value under or beside another label.
        let by_layout = out.iter().any(|l| l.cite.is_some() || l.header);
        if !by_layout && i > 0 && is_label_only(rows[i - 1]) && found_covers_row(row, found) {
            out.push(Label {
                words: facts[i - 1].words.clone(),
                text: rows[i - 1].text.clone(),
                header: false,
                cite: Some(rows[i - 1].line_id),
                distance: 1.0,
            });
        }
        out
    }
}

/// Whether two rows share a column: their boxes overlap horizontally (rows
/// without a box are taken to).
pub(super) fn same_column(a: &Line, b: &Line) -> bool {
    !crate::layout::has_box(&a.bbox)
        || !crate::layout::has_box(&b.bbox)
        || a.bbox.x1.min(b.bbox.x1) - a.bbox.x0.max(b.bbox.x0) > 0.0
}

/// Whether the value covers most of its row (a cell, a value alone).
pub(super) fn found_covers_row(row: &Line, found: &Found) -> bool {
    let visible = row.text.chars().filter(|c| !c.is_whitespace()).count().max(1);
    let value = row.text[found.start..found.end.min(row.text.len())].chars().filter(|c| !c.is_whitespace()).count();
    value * 10 >= visible * 6
}
