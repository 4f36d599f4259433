//! What the reader measures about each candidate value. Every feature is a
//! number in [0, 1] (`statement` in [-1, 1]); the fitted model
//! ([`super::model`]) weighs them. The list and its order are part of the
//! model file: a feature added here needs a refit (`cargo xtask fit-reader`).
//!
//! | feature | what it measures |
//! |---|---|
//! | `fit` | how surely the span is a value of the asked kind (see [`super::kinds`]) |
//! | `cov_row` | share of the question's term weight on the value's own row (terms inside the value excluded, except for text answers) |
//! | `cov_near` | the same over the row, the rows around it and its labels, each term discounted by its distance in words to the value (`exp(-d/4)`) |
//! | `cov_window` | share of the term weight on the row, the rows around it, its labels and column header |
//! | `cov_passage` | share of the term weight in the whole passage |
//! | `cov_section` | share of the term weight in the heading of the value's section (the TOC entry over its page, the passage's heading line) |
//! | `focus_near` | mean nearness of the question's focus words ("attention heads", "rate") to the value (`exp(-d/3)` per word at its nearest, 0 for a word not around it) |
//! | `focus_phrase` | nearness of the whole focus phrase, its words in a row ("chief executive officer"), to the value (counted from the phrase's last word when it comes first) |
//! | `focus_after` | share of the focus words among the six words after the value on its row (what a number counts: "8 parallel attention layers, or heads") |
//! | `defined` | a term the document defines follows the value: `Equifax Inc. ("Equifax")`, `TruckThat LLC (the "Consultant")` |
//! | `focus_in_value` | the value itself holds a focus word ("University of ...") |
//! | `label_cov` | share of the term weight in the value's label (words before it on its row, the row label or label above it by layout, a label line before it) |
//! | `value_cell` | the value is most of its row (a table cell, a value under its label) |
//! | `in_question` | share of the value's words that are the question's own words (a figure the question writes, "Table 2", "with 8 heads", is no candidate at all) |
//! | `rank` | `1 / (1 + rank)` of the passage in the retrieval order |
//! | `repeat` | how many other rows give the same value |
//! | `constraints` | share of the question's constraints found in the value's evidence (1 when there are none) |
//! | `cue_pos`, `cue_neg` | the kind's label cues for and against (amounts: total / sub-total, tax; dates: the kind of date) |
//! | `currency` | a currency is written next to an amount |
//! | `currency_match` | the amount's currency is the one the question asks for |
//! | `statement` | on a financial statement page: +1 in the question's year column on a row labelled by its terms, -1 in another year's column |
//! | `heading` | the row opens the identifier whose title the question asks for |
//! | `running` | the row is a running header or footer |
//! | `row_len` | how long the row is (`ln(1 + words) / ln 60`) |
//! | `position` | where on its row the value starts (0 at the start, 1 at the end) |
//! | `first_in_row` | the first value of its kind on its row |
//! | `bias_kind` | 1 for the kinds of its group that read a typed value (a count, a date), 0 for the looser ones (a plain number, a sentence) |
//! | `last_in_row` | the last value of its kind on its row (a total's place) |
//! | `largest` | the largest number among the question's candidates (amounts, counts, numbers) |
//! | `anchor` | nearness of the value's row to the line retrieval ranked best in its passage (`exp(-d/3)` in lines) |
//! | `passage_score` | the passage's retrieval score over the best passage's |
//! | `kind_other` | the value is of another kind than the asked one (see [`super::kinds::Kind::also`]) |
//! | `header_cov` | share of the term weight in the value's column headers, when it is a table cell (see [`crate::table`]) |
//! | `cell_both` | the smaller of `header_cov` and the same share in its row label: a cell the question names by both axes |
//! | `cell_cov` | share of the term weight in a table cell's row label, column headers and caption together (0 outside a table) |
//! | `pairs_row` | share of the question's phrases (pairs of its terms side by side, in order) on the value's row |
//! | `pairs_near` | the same on the row, the rows around it and its labels |
//! | `rel_*` | the candidate's `cov_row`, `cov_near`, `cov_window`, `focus_near`, `label_cov`, `fit` minus the highest among all candidates of the question (0 for the best): how it compares with its rivals |

/// The feature names, in model order.
pub(crate) const FEATURES: [&str; 44] = [
    "fit",
    "cov_row",
    "cov_near",
    "cov_window",
    "cov_passage",
    "cov_section",
    "focus_near",
    "focus_phrase",
    "focus_after",
    "defined",
    "focus_in_value",
    "label_cov",
    "value_cell",
    "in_question",
    "rank",
    "repeat",
    "constraints",
    "cue_pos",
    "cue_neg",
    "currency",
    "currency_match",
    "statement",
    "heading",
    "running",
    "row_len",
    "position",
    "first_in_row",
    "bias_kind",
    "last_in_row",
    "largest",
    "anchor",
    "passage_score",
    "kind_other",
    "header_cov",
    "cell_both",
    "cell_cov",
    "pairs_row",
    "pairs_near",
    "rel_cov_row",
    "rel_cov_near",
    "rel_cov_window",
    "rel_focus_near",
    "rel_label_cov",
    "rel_fit",
];

/// The features of the best candidate the confidence reads beside its
/// log-odds and its margin (see [`super::model::ReaderModel::confidence`]):
/// how much of the question its evidence carries, how surely it is a value
/// of the kind, where retrieval ranked it. A best candidate that wins among
/// weak rivals on thin evidence is not a sure answer.
pub(crate) const EVIDENCE: [&str; 6] = ["cov_window", "pairs_near", "focus_near", "cov_row", "rank", "fit"];

/// One candidate's features.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Features {
    pub(crate) fit: f64,
    pub(crate) cov_row: f64,
    pub(crate) cov_near: f64,
    pub(crate) cov_window: f64,
    pub(crate) cov_passage: f64,
    pub(crate) cov_section: f64,
    pub(crate) focus_near: f64,
    pub(crate) focus_phrase: f64,
    pub(crate) focus_after: f64,
    pub(crate) defined: f64,
    pub(crate) focus_in_value: f64,
    pub(crate) label_cov: f64,
    pub(crate) value_cell: f64,
    pub(crate) in_question: f64,
    pub(crate) rank: f64,
    pub(crate) repeat: f64,
    pub(crate) constraints: f64,
    pub(crate) cue_pos: f64,
    pub(crate) cue_neg: f64,
    pub(crate) currency: f64,
    pub(crate) currency_match: f64,
    pub(crate) statement: f64,
    pub(crate) heading: f64,
    pub(crate) running: f64,
    pub(crate) row_len: f64,
    pub(crate) position: f64,
    pub(crate) first_in_row: f64,
    /// 1 for the kinds of its group that read a typed value (a count, a
    /// date), 0 for the looser ones (a plain number, a sentence): lets one
    /// group's model tell them apart.
    pub(crate) bias_kind: f64,
    pub(crate) last_in_row: f64,
    pub(crate) largest: f64,
    pub(crate) anchor: f64,
    pub(crate) passage_score: f64,
    pub(crate) kind_other: f64,
    pub(crate) header_cov: f64,
    pub(crate) cell_both: f64,
    pub(crate) cell_cov: f64,
    pub(crate) pairs_row: f64,
    pub(crate) pairs_near: f64,
    pub(crate) rel_cov_row: f64,
    pub(crate) rel_cov_near: f64,
    pub(crate) rel_cov_window: f64,
    pub(crate) rel_focus_near: f64,
    pub(crate) rel_label_cov: f64,
    pub(crate) rel_fit: f64,
}

impl Features {
    /// The values of [`EVIDENCE`], in its order.
    pub(crate) fn evidence(&self) -> [f64; EVIDENCE.len()] {
        [self.cov_window, self.pairs_near, self.focus_near, self.cov_row, self.rank, self.fit]
    }

    /// The values in [`FEATURES`] order.
    pub(crate) fn to_vec(self) -> [f64; FEATURES.len()] {
        [
            self.fit,
            self.cov_row,
            self.cov_near,
            self.cov_window,
            self.cov_passage,
            self.cov_section,
            self.focus_near,
            self.focus_phrase,
            self.focus_after,
            self.defined,
            self.focus_in_value,
            self.label_cov,
            self.value_cell,
            self.in_question,
            self.rank,
            self.repeat,
            self.constraints,
            self.cue_pos,
            self.cue_neg,
            self.currency,
            self.currency_match,
            self.statement,
            self.heading,
            self.running,
            self.row_len,
            self.position,
            self.first_in_row,
            self.bias_kind,
            self.last_in_row,
            self.largest,
            self.anchor,
            self.passage_score,
            self.kind_other,
            self.header_cov,
            self.cell_both,
            self.cell_cov,
            self.pairs_row,
            self.pairs_near,
            self.rel_cov_row,
            self.rel_cov_near,
            self.rel_cov_window,
            self.rel_focus_near,
            self.rel_label_cov,
            self.rel_fit,
        ]
    }
}

/// Sets the `rel_*` features of every candidate of a question: each minus
/// the highest of its kind among them.
pub(crate) fn set_relative(all: &mut [Features]) {
    let max = |get: fn(&Features) -> f64, all: &[Features]| all.iter().map(get).fold(f64::NEG_INFINITY, f64::max);
    let m_row = max(|f| f.cov_row, all);
    let m_near = max(|f| f.cov_near, all);
    let m_window = max(|f| f.cov_window, all);
    let m_focus = max(|f| f.focus_near, all);
    let m_label = max(|f| f.label_cov, all);
    let m_fit = max(|f| f.fit, all);
    for f in all {
        f.rel_cov_row = f.cov_row - m_row;
        f.rel_cov_near = f.cov_near - m_near;
        f.rel_cov_window = f.cov_window - m_window;
        f.rel_focus_near = f.focus_near - m_focus;
        f.rel_label_cov = f.label_cov - m_label;
        f.rel_fit = f.fit - m_fit;
    }
}
