//! The extractive reader: typed candidates, scored by a fitted model, and an
//! answer only when the evidence holds what the question asks for.
//!
//! For each passage (in retrieval order), on the document's row view:
//! 1. **Candidates** of the asked [`Kind`]: every typed value of that kind on
//!    a row ([`kinds`]), never a span made of the question's own words.
//! 2. **Evidence** around each ([`evidence`]): the question's terms on its
//!    row, the rows around it, its labels (by text and by layout), its column
//!    header, its section heading; the focus words; the constraints.
//! 3. **Features** ([`features`]) and a probability from the fitted model of
//!    the kind's group ([`model`]).
//!
//! Then the best candidate whose evidence carries every constraint of the
//! question ([`answerable`]) is the answer when its probability reaches the
//! group's threshold; otherwise the answer is "not found", naming what is
//! missing (a constraint the document never mentions, one the evidence
//! lacks, or no value of the kind), with the best candidate offered as a
//! suggestion only. The answer's confidence is its probability.
//!
//! A compound question ("How many X, and what percentage Y?") is read part
//! by part ([`docintel_schema::GenerationBrief::parts`]), one item per part.

pub(crate) mod answerable;
pub(crate) mod evidence;
pub(crate) mod features;
pub(crate) mod kinds;

pub(crate) mod model;
mod respective;
pub(crate) mod stats;

use std::collections::BTreeMap;

use docintel_schema::{
    AnswerShape, AnswerValue, KeywordSource, Line, ParsedDocument, ParsedQuestion, Passage, RowView, TocEntry,
};

use crate::extract::amount;
use crate::extract::date::DayMonthOrder;
use crate::keywords::{KeywordSet, label_form};
use crate::layout::PageLayout;
use crate::statement;
use crate::table::Tables;
use answerable::Constraint;
use evidence::{Hit, Terms, Word, focus_words, folded, word_matches, words_of};
use features::Features;
use kinds::{AmountIntent, DateIntent, FindContext, Found, Group, Kind};
use stats::DocStats;

/// Most items of a listing answer.
const MAX_LIST_ITEMS: usize = 25;
/// How far after a value (characters) a defined term may open.
const DEFINED_REACH: usize = 80;
/// A parenthesis opening a quoted term: `("Company")`, `(the “Agent”)`,
/// `(hereinafter "Licensor")`, after at most [`DEFINED_REACH`] characters
/// without another parenthesis (", a Delaware corporation" may come first).
static DEFINED_TERM: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    let pattern = format!(
        r#"(?i)^[^()]{{0,{DEFINED_REACH}}}?\(\s*(?:the\s+|hereinafter\s+|collectively\s+|each\s+a\s+|ci-après\s+)?["“'‘«]"#
    );
    regex::Regex::new(&pattern).expect("defined-term pattern")
});
/// Words by which a part of a compound question refers to what another
/// part names.
const ANAPHORS: &[&str] = &[
    "he", "she", "it", "its", "they", "them", "their", "his", "her", "him", "that", "this", "these", "those", "there",
    "il", "elle", "ils", "elles", "son", "sa", "ses", "leur", "leurs", "er", "sie", "es", "sein", "seine", "ihr",
    "ihre",
];
/// Pronouns by which a part refers to the person or the organisation an
/// earlier part answered ("and how old is HE?", "in which city did IT
/// sign ITS report?"), with the kinds they can stand for.
const REFERRING: &[(&str, &[Kind])] = &[
    ("he", &[Kind::Person]),
    ("she", &[Kind::Person]),
    ("his", &[Kind::Person]),
    ("him", &[Kind::Person]),
    ("her", &[Kind::Person]),
    ("it", &[Kind::Organisation]),
    ("its", &[Kind::Organisation]),
    ("il", &[Kind::Person, Kind::Organisation]),
    ("elle", &[Kind::Person, Kind::Organisation]),
    ("er", &[Kind::Person]),
];
/// How many words after a value `focus_after` looks at.
const AFTER_WORDS: usize = 6;

/// `text` read as a calendar year ("2019").
pub(crate) fn calendar_year(text: &str) -> Option<u32> {
    text.parse::<u32>().ok().filter(|y| (1950..2100).contains(y))
}

/// The year a constraint names, when it names nothing else ("2019",
/// "fiscal 2019", "FY2019").
fn restrict_year(folded: &str) -> Option<u32> {
    let mut year = None;
    for word in folded.split_whitespace() {
        match calendar_year(word) {
            Some(y) if year.is_none() => year = Some(y),
            _ if matches!(word, "fiscal" | "fy" | "year" | "calendar") => {}
            _ => return None,
        }
    }
    year
}

/// One asked question (or part of a compound one), ready to read.
#[derive(Debug, Clone)]
pub(crate) struct Asked {
    pub(crate) text: String,
    pub(crate) kind: Kind,
    pub(crate) shape: AnswerShape,
    pub(crate) terms: Terms,
    pub(crate) focus: Vec<String>,
    pub(crate) constraints: Vec<Constraint>,
    amount: AmountIntent,
    date: DateIntent,
    /// The first year the question names: the statement column it reads.
    year: Option<u32>,
    /// The question's one year constraint, with its text, when it has
    /// exactly one ("in fiscal 2019"): a figure given for another year
    /// lacks it.
    sole_year: Option<(u32, String)>,
    /// Identifiers whose heading the question asks for ("the title of AC-2").
    heading_of: Vec<String>,
    /// Whether the question asks a figure of a named document part.
    names_part: bool,
    /// The currency the question asks for (`EUR`).
    currency: Option<String>,
    /// The pairs of terms the question writes side by side, in order
    /// ([`evidence::term_pairs`]).
    pub(crate) pairs: Vec<(usize, usize)>,
    /// The numbers the question writes.
    numbers: Vec<f64>,
}

impl Asked {
    /// The model group that scores this question's candidates: the kind's,
    /// with the amount due apart from other amounts.
    pub(crate) fn group(&self) -> Group {
        if self.kind == Kind::Amount && self.amount.total && !self.amount.sub && !self.amount.tax {
            Group::AmountDue
        } else {
            self.kind.group()
        }
    }

    /// The whole question, or one part of it (`part`: its text, answer
    /// type, focus and constraints; the question's keywords found in the
    /// part's text are its terms). `earlier`: the values earlier parts
    /// answered, as written.
    pub(crate) fn new(
        question: &ParsedQuestion,
        part: Option<&docintel_schema::AskedPart>,
        earlier: &[(String, Kind)],
        document: &ParsedDocument,
        stats: &DocStats,
    ) -> Asked {
        let mut q = question.clone();
        // The person or organisation an earlier part answered that this
        // part refers to by a pronoun: its value is read where they are named.
        let mut referred: Vec<String> = Vec::new();
        if let Some(part) = part {
            q.corrected_question = part.question.clone();
            q.answer_type = part.answer_type.clone();
            q.answer_shape = AnswerShape::Single;
            q.generation.answer_focus = part.answer_focus.clone();
            q.generation.constraints = part.constraints.clone();
            let words: Vec<String> = words_of(&part.question).into_iter().map(|w| w.norm).collect();
            let own = |k: &docintel_schema::Keyword| {
                k.semantic_group.is_some()
                    || k.is_regex
                    || words_of(&k.text).iter().all(|w| words.iter().any(|p| word_matches(p, &w.norm)))
            };
            // A part that leans on the rest of the question ("and how old
            // is HE?", "and since what year?") keeps its keywords: they say
            // where its answer is.
            let refers_back = words.iter().any(|w| ANAPHORS.contains(&w.as_str()));
            let own_content = q.keywords.iter().filter(|k| own(k) && !k.is_regex).count();
            if !refers_back && own_content >= 2 {
                q.keywords.retain(own);
            }
            // What it leans on is the value an earlier part answered: "how
            // old was HE" is read near the officer's name, "his title
            // THERE" near the employer.
            if refers_back {
                q.keywords.extend(
                    earlier
                        .iter()
                        .filter(|(e, _)| !words_of(e).is_empty())
                        .map(|(e, _)| docintel_schema::Keyword::direct(e)),
                );
                let kinds: Vec<Kind> = REFERRING
                    .iter()
                    .filter(|(pronoun, _)| words.iter().any(|w| w == pronoun))
                    .flat_map(|(_, kinds)| kinds.iter().copied())
                    .collect();
                referred.extend(earlier.iter().filter(|(_, kind)| kinds.contains(kind)).map(|(e, _)| e.clone()));
            }
        }
        let keywords = KeywordSet::from_question(&q);
        let terms = Terms::new(&q, &keywords, stats);
        let kind = Kind::of(&q.answer_type);
        let qtext = label_form(&q.corrected_question);
        let ungrouped: Vec<&str> = keywords.ungrouped_salient_norms().collect();
        let groups: Vec<&str> = keywords.groups().collect();
        let salient: Vec<&str> = keywords.salient_norms().collect();
        let constraints = {
            let mut constraints = answerable::constraints(&q.generation.constraints, document, stats);
            // The title a person question asks for is on the holder's
            // own row or beside it, and never names the document.
            let role = answerable::role(&focus_words(&q), kind == Kind::Person);
            constraints.extend(answerable::constraints(role.as_slice(), document, stats).into_iter().map(|mut c| {
                c.local = true;
                c.names_document = false;
                c
            }));
            // "How old is HE?": on the row that names him, or beside it.
            constraints.extend(answerable::constraints(&referred, document, stats).into_iter().map(|mut c| {
                c.local = true;
                c.names_document = false;
                c
            }));
            constraints
        };
        let mut years = constraints.iter().filter_map(|c| restrict_year(&c.folded).map(|y| (y, c.text.clone())));
        let sole_year = match (years.next(), years.next()) {
            (Some(one), None) => Some(one),
            _ => None,
        };
        Asked {
            text: q.corrected_question.clone(),
            kind,
            shape: q.answer_shape,
            focus: focus_words(&q),
            constraints,
            sole_year,
            amount: AmountIntent::of(&qtext, &ungrouped, &groups),
            date: DateIntent::of(&qtext, &salient),
            year: q
                .keywords
                .iter()
                .filter(|k| k.source == KeywordSource::Direct && k.text.len() == 4)
                .map(|k| k.text.as_str())
                .chain(q.generation.constraints.iter().map(String::as_str))
                .find_map(calendar_year),
            heading_of: if q.structural_hints.layout_hint.as_deref() == Some("heading") {
                q.keywords
                    .iter()
                    .filter(|k| k.source == KeywordSource::Anchor && !k.is_regex)
                    .map(|k| k.text.to_lowercase())
                    .collect()
            } else {
                Vec::new()
            },
            names_part: !q.retrieval.scope.sections.is_empty(),
            currency: q.generation.format_constraints.get("currency").map(|c| c.to_uppercase()),
            pairs: evidence::term_pairs(&terms.hits(&q.corrected_question, &words_of(&q.corrected_question))),
            numbers: crate::extract::number::find_numbers(&q.corrected_question).iter().map(|t| t.value).collect(),
            terms,
        }
    }
}

/// A scored candidate.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub(crate) value: AnswerValue,
    /// As written.
    pub(crate) text: String,
    /// Rank of its passage.
    pub(crate) rank: usize,
    pub(crate) page: u32,
    /// View lines: the value's first and last row, and the label row cited
    /// with it.
    pub(crate) row: u32,
    pub(crate) last_row: u32,
    pub(crate) label_row: Option<u32>,
    /// Byte range of the value in its first row.
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) features: Features,
    pub(crate) log_odds: f64,
    pub(crate) probability: f64,
    /// Constraints its evidence lacks (and that do not name the document).
    pub(crate) missing: Vec<String>,
    /// Identity of the value, for agreement between candidates.
    pub(crate) key: String,
    /// The bulleted list its row introduces or belongs to: `(view line,
    /// item text)` per item.
    pub(crate) list: Option<Vec<(u32, String)>>,
    /// The kind whose finder read it.
    pub(crate) kind: Kind,
}

/// What reading one asked question produced.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reading {
    /// Every candidate, best first.
    pub(crate) candidates: Vec<Candidate>,
    /// Indices into `candidates` of the answer's items.
    pub(crate) chosen: Vec<usize>,
    /// Passages read (a sequential read stops early).
    pub(crate) passages_read: usize,
    /// Why there is no answer, when there is none.
    pub(crate) refusal: Option<String>,
    /// The confidence of each chosen item (same order as `chosen`).
    pub(crate) confidence: Vec<f64>,
    /// The confidence of the best complete candidate when it was too low.
    pub(crate) refusal_confidence: Option<f64>,
    /// The one chosen candidate stands for its bulleted list: the answer is
    /// the list's items.
    pub(crate) list: bool,
    /// Constraints the document never mentions.
    pub(crate) absent: Vec<String>,
}

/// The words of a folded person name without honorifics or initials
/// ("mr st john" → `["st", "john"]` is two words; "mark g parker" →
/// `["mark", "parker"]`).
fn person_words(key: &str) -> Vec<String> {
    key.split_whitespace()
        .filter(|w| {
            !matches!(*w, "mr" | "mrs" | "ms" | "dr" | "sir" | "m" | "mme" | "herr" | "frau") && w.chars().count() > 1
        })
        .map(str::to_owned)
        .collect()
}

/// A value's identity: amounts and quantities by number, dates by day, text
/// folded.
pub(crate) fn value_key(value: &AnswerValue) -> String {
    match value {
        AnswerValue::Amount(a) => format!("amount {}", a.value),
        AnswerValue::Quantity(q) => format!("quantity {}", q.quantity),
        AnswerValue::Date(d) => d.iso.clone(),
        AnswerValue::Boolean(b) => b.to_string(),
        AnswerValue::Text(t) => folded(t),
        AnswerValue::Table(t) => format!("{:?}", t.rows()),
    }
}

/// The order the document's own unambiguous dates prove (`03/25/2020`);
/// when none do, month-first only for documents that look American:
/// English (or unknown language) and quoting dollars; every other document
/// is day-first.
pub(crate) fn day_month_order(document: &ParsedDocument) -> DayMonthOrder {
    if let Some(order) = crate::extract::date::evident_order(document.lines.iter().map(|l| l.text.as_str())) {
        return order;
    }
    let english_or_unknown = document.profile.languages.first().is_none_or(|l| l == "en");
    let dollars = amount::dominant_currency(document.lines.iter().map(|l| l.text.as_str())) == Some("USD");
    if english_or_unknown && dollars { DayMonthOrder::MonthFirst } else { DayMonthOrder::DayFirst }
}

/// The lines of `page` (the line table is in page order).
pub(crate) fn page_lines(document: &ParsedDocument, page: u32) -> &[Line] {
    let start = document.lines.partition_point(|l| l.page < page);
    let end = document.lines.partition_point(|l| l.page <= page);
    &document.lines[start..end.max(start)]
}

/// The deepest TOC entry over `page`.
fn section_of(toc: &[TocEntry], page: u32) -> Option<&TocEntry> {
    toc.iter().filter(|e| e.start_page <= page && page <= e.end_page).max_by_key(|e| (e.level, e.start_page))
}

/// A line made only of values (numbers, amounts, dates, codes) and at most
/// one short word: a table cell, never a label.
fn is_value_cell(line: &Line) -> bool {
    let words = words_of(&line.text);
    !words.is_empty()
        && words.iter().any(|w| w.norm.chars().any(|c| c.is_ascii_digit()))
        && words.iter().filter(|w| w.norm.chars().all(char::is_alphabetic) && w.norm.chars().count() > 3).count() <= 1
}

/// A line with words and no digits: a label on its own.
fn is_label_only(line: &Line) -> bool {
    let words = words_of(&line.text);
    !words.is_empty() && !line.text.chars().any(|c| c.is_ascii_digit()) && words.len() <= 8
}

/// A label of a value: its folded words, hits, whether a column header, and
/// the view line to cite (none for the value's own row or a header).
struct Label {
    words: Vec<Word>,
    text: String,
    header: bool,
    cite: Option<u32>,
    distance: f64,
}

/// Reads one passage: its candidates (unscored).
struct PassageReader<'a> {
    asked: &'a Asked,
    view: &'a ParsedDocument,
    stats: &'a DocStats,
    order: DayMonthOrder,
    /// The highest retrieval score among the passages.
    best_score: f64,
}

/// Per-row facts of a passage.
struct RowFacts {
    words: Vec<Word>,
    hits: Vec<Hit>,
    folded: String,
    /// Its term pairs ([`evidence::term_pairs`]).
    pairs: Vec<(usize, usize)>,
}

impl PassageReader<'_> {
    fn candidates(&self, rank: usize, passage: &Passage) -> Vec<Candidate> {
        let asked = self.asked;
        let lines = self.view.line_range(passage.line_start, passage.line_end);
        let rows: Vec<&Line> = lines.iter().collect();
        if rows.is_empty() {
            return Vec::new();
        }
        let page = page_lines(self.view, passage.page);
        let layout = PageLayout::new(page, passage.page);
        let tables = Tables::new(page);
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
        let grid = matches!(asked.kind, Kind::Amount | Kind::Number).then(|| statement::grid(page)).flatten();
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
                    self.candidate(rank, passage, &rows, &facts, i, n, f, &layout, &tables, &grid, &page_head)
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
    fn labels(
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
        // evidence, not cited.
        for mate in layout.row_mates(row) {
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

    #[allow(clippy::too_many_arguments)]
    fn candidate(
        &self,
        rank: usize,
        passage: &Passage,
        rows: &[&Line],
        facts: &[RowFacts],
        i: usize,
        n: usize,
        found: Found,
        layout: &PageLayout<'_>,
        tables: &Tables<'_>,
        grid: &Option<statement::Grid>,
        page_head: &[String],
    ) -> Option<Candidate> {
        let asked = self.asked;
        let terms = &asked.terms;
        let row = rows[i];
        if self.stats.is_page_number(row.page, &row.text) {
            return None;
        }
        let own = &facts[i];
        let text_kind = found.kind.group() == Group::Text;
        // The value's own words.
        let first = own.words.iter().position(|w| w.end > found.start).unwrap_or(own.words.len());
        let mut last = own.words.iter().rposition(|w| w.start < found.end).map_or(first, |p| p + 1);
        if found.last_row > i {
            last = own.words.len();
        }
        let inside = |w: usize| w >= first && w < last;
        let value_words: Vec<&Word> = own.words[first..last.max(first)].iter().collect();
        // A value made of the question's words is no answer: a name, a
        // code, or a sentence that only repeats the question (a heading).
        let is_question_word = |w: &&Word| terms.question_words.iter().any(|q| word_matches(&w.norm, q));
        if !value_words.is_empty() {
            let content: Vec<&&Word> = value_words.iter().filter(|w| !crate::keywords::is_generic(&w.norm)).collect();
            let own = content.iter().filter(|w| is_question_word(w)).count();
            if found.kind.is_named() && value_words.iter().all(is_question_word) {
                return None;
            }
            if text_kind && found.kind == Kind::Text && !content.is_empty() && own * 10 >= content.len() * 8 {
                return None;
            }
        }
        let len = own.words.len();
        let distance = |hit_word: usize| -> f64 {
            if hit_word < first {
                (first - hit_word) as f64
            } else if hit_word >= last {
                (hit_word + 1 - last) as f64
            } else {
                0.0
            }
        };
        // Hits outside the value on its row; inside count for text answers.
        let row_hits: Vec<(Hit, f64)> =
            own.hits.iter().filter(|h| text_kind || !inside(h.word)).map(|h| (*h, distance(h.word))).collect();
        // The rows before and after in reading order are its neighbours when
        // they sit in its column: in a multi-column block (a signature
        // block's two names, then their two titles) the next row read may be
        // another column's.
        let next_index = found.last_row + 1;
        let has_prev = i > 0 && same_column(rows[i - 1], row);
        let has_next = next_index < rows.len() && same_column(rows[next_index], rows[found.last_row]);
        let prev_hits: Vec<(Hit, f64)> = if has_prev {
            let plen = facts[i - 1].words.len();
            facts[i - 1].hits.iter().map(|h| (*h, (plen - h.word) as f64 + first as f64 + 2.0)).collect()
        } else {
            Vec::new()
        };
        let next_hits: Vec<(Hit, f64)> = if has_next {
            let tail = if found.last_row > i { 0 } else { len.saturating_sub(last) };
            facts[next_index].hits.iter().map(|h| (*h, tail as f64 + h.word as f64 + 2.0)).collect()
        } else {
            Vec::new()
        };
        // Rows inside a multi-row value (a continued sentence).
        let mut inner_hits: Vec<(Hit, f64)> = Vec::new();
        for f in facts.iter().take(found.last_row + 1).skip(i + 1) {
            inner_hits.extend(f.hits.iter().map(|h| (*h, 0.0)));
        }
        let mut labels = self.labels(rows, facts, i, &found, layout);
        // Its place in a table: the column headers (evidence like any
        // label) and the row label, weighed together.
        let cell = tables.cell(row, is_value_cell).unwrap_or_default();
        for header in &cell.headers {
            if !labels.iter().any(|l| l.text == header.text) {
                labels.push(Label {
                    words: words_of(&header.text),
                    text: header.text.clone(),
                    header: true,
                    cite: None,
                    distance: 2.0,
                });
            }
        }
        // A figure per share is a unit price, outside the scale the
        // statement states for its totals ("in millions, except per share
        // amounts"): $6.31, not 6.31 million.
        let mut found = found;
        if let AnswerValue::Amount(a) = &mut found.value
            && a.unit.is_some()
            && amount::find_amounts(&found.text).first().is_none_or(|t| t.unit.is_none())
            && (per_share(&row.text)
                || labels.iter().any(|l| per_share(&l.text))
                || statement::label_of(layout, row, found.start).is_some_and(|l| per_share(&l)))
        {
            a.unit = None;
        }
        // The question's phrases (pairs of its terms side by side) on the
        // value's row, and around it.
        let share_of = |pairs: &[(usize, usize)]| {
            if asked.pairs.is_empty() {
                0.0
            } else {
                asked.pairs.iter().filter(|p| pairs.contains(p)).count() as f64 / asked.pairs.len() as f64
            }
        };
        let mut own_pairs: Vec<(usize, usize)> = own.pairs.clone();
        for f in facts.iter().take(found.last_row + 1).skip(i + 1) {
            own_pairs.extend(&f.pairs);
        }
        let pairs_row = share_of(&own_pairs);
        let mut near_pairs = own_pairs;
        if has_prev {
            near_pairs.extend(&facts[i - 1].pairs);
        }
        if has_next {
            near_pairs.extend(&facts[next_index].pairs);
        }
        for label in &labels {
            near_pairs.extend(evidence::term_pairs(&terms.hits(&label.text, &label.words)));
        }
        let pairs_near = share_of(&near_pairs);
        let header_text: String = cell.headers.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join(" ");
        let header_cov = terms.coverage(&terms.hits(&header_text, &words_of(&header_text)), |_| 1.0);
        let row_label_cov =
            cell.row_label.map_or(0.0, |l| terms.coverage(&terms.hits(&l.text, &words_of(&l.text)), |_| 1.0));
        // A cell's whole context: its row label, its column headers and the
        // table's caption together.
        let cell_cov = if cell.headers.is_empty() {
            0.0
        } else {
            let context: String = cell
                .row_label
                .into_iter()
                .chain(cell.headers.iter().copied())
                .chain(cell.caption)
                .map(|l| l.text.as_str())
                .collect::<Vec<_>>()
                .join(" \u{2016} ");
            terms.coverage(&terms.hits(&context, &words_of(&context)), |_| 1.0)
        };
        let mut label_hits: Vec<(Hit, f64)> = Vec::new();
        for label in &labels {
            let hits = terms.hits(&label.text, &label.words);
            label_hits.extend(hits.into_iter().map(|h| (h, label.distance)));
        }
        let only = |v: &[(Hit, f64)]| v.iter().map(|(h, _)| *h).collect::<Vec<_>>();
        let cov_row =
            terms.coverage(&only(&row_hits).into_iter().chain(only(&inner_hits)).collect::<Vec<_>>(), |_| 1.0);
        let near: Vec<(Hit, f64)> = row_hits
            .iter()
            .chain(&prev_hits)
            .chain(&next_hits)
            .chain(&label_hits)
            .chain(&inner_hits)
            .copied()
            .collect();
        let near_hits: Vec<Hit> = near.iter().map(|(h, _)| *h).collect();
        // Each hit discounted by its own distance to the value.
        let cov_near = terms.coverage(&near_hits, |h| {
            let d = near.iter().filter(|(x, _)| x == h).map(|(_, d)| *d).fold(f64::INFINITY, f64::min);
            (-d / 4.0).exp()
        });
        let cov_window = terms.coverage(&near_hits, |_| 1.0);
        let label_cov = terms.coverage(&only(&label_hits), |_| 1.0);
        // Focus words: nearest occurrence around the value.
        let focus_in_value = if asked.focus.is_empty() {
            0.0
        } else {
            f64::from(value_words.iter().any(|w| asked.focus.iter().any(|f| word_matches(&w.norm, f))))
        };
        let mut focus_d = f64::INFINITY;
        if !asked.focus.is_empty() {
            let is_focus = |w: &Word| asked.focus.iter().any(|f| word_matches(&w.norm, f));
            for (k, w) in own.words.iter().enumerate() {
                if is_focus(w) && !inside(k) {
                    focus_d = focus_d.min(distance(k));
                }
            }
            if has_prev {
                let plen = facts[i - 1].words.len();
                for (k, w) in facts[i - 1].words.iter().enumerate() {
                    if is_focus(w) {
                        focus_d = focus_d.min((plen - k) as f64 + first as f64 + 2.0);
                    }
                }
            }
            if has_next {
                for (k, w) in facts[next_index].words.iter().enumerate() {
                    if is_focus(w) {
                        focus_d = focus_d.min(len.saturating_sub(last) as f64 + k as f64 + 2.0);
                    }
                }
            }
            for label in &labels {
                if label.words.iter().any(is_focus) {
                    focus_d = focus_d.min(label.distance);
                }
            }
            if focus_in_value > 0.0 && found.kind.is_named() {
                focus_d = 0.0;
            }
        }
        let focus_near = if focus_d.is_finite() { (-focus_d / 3.0).exp() } else { 0.0 };
        // A term the document defines right after the value: `Equifax Inc.
        // ("Equifax")`, `TruckThat LLC (the "Consultant")`: how a contract
        // names its parties.
        let defined = {
            let tail = if found.last_row > i { "" } else { row.text.get(found.end..).unwrap_or("") };
            let next = rows.get(found.last_row + 1).map_or("", |l| l.text.as_str());
            let tail = if tail.len() < DEFINED_REACH { format!("{tail} {next}") } else { tail.to_owned() };
            f64::from(DEFINED_TERM.is_match(&tail))
        };
        // What follows a number names what it counts or measures ("8
        // parallel attention layers, or heads", "three different ways"):
        // the share of the focus words among the words after the value.
        let focus_after = if asked.focus.is_empty() || last >= len {
            0.0
        } else {
            let after = &own.words[last..(last + AFTER_WORDS).min(len)];
            asked.focus.iter().filter(|f| after.iter().any(|w| word_matches(&w.norm, f))).count() as f64
                / asked.focus.len() as f64
        };
        // The whole focus phrase, its words in a row ("chief executive
        // officer", not "chief financial officer"): on the value's row (by
        // distance), else on the rows around it or in its labels.
        let phrase_at = |words: &[Word]| -> Vec<usize> {
            let f = &asked.focus;
            if f.len() < 2 || words.len() < f.len() {
                return Vec::new();
            }
            (0..=words.len() - f.len())
                .filter(|&at| f.iter().enumerate().all(|(k, t)| word_matches(&words[at + k].norm, t)))
                .collect()
        };
        let mut phrase_d = phrase_at(&own.words)
            .into_iter()
            .map(|at| if at < first { (first - at) as f64 } else { at.saturating_sub(last) as f64 + 1.0 })
            .fold(f64::INFINITY, f64::min);
        if phrase_d.is_infinite() {
            let around = (has_prev && !phrase_at(&facts[i - 1].words).is_empty())
                || (has_next && !phrase_at(&facts[next_index].words).is_empty())
                || labels.iter().any(|l| !phrase_at(&l.words).is_empty());
            if around {
                phrase_d = 3.0;
            }
        }
        let focus_phrase = if phrase_d.is_finite() { (-phrase_d / 3.0).exp() } else { 0.0 };
        let in_question = if matches!(found.kind.group(), Group::Numeric | Group::Amount | Group::AmountDue) {
            // A figure the question itself writes ("Table 2", "Rung 3",
            // "with 8 heads") names what is asked, it is not the answer.
            let number = match &found.value {
                AnswerValue::Quantity(q) => Some(q.quantity),
                AnswerValue::Amount(a) => Some(a.value),
                _ => None,
            };
            f64::from(number.is_some_and(|n| asked.numbers.iter().any(|q| (q - n).abs() < 1e-9)))
        } else if value_words.is_empty() {
            0.0
        } else {
            value_words.iter().filter(|w| terms.question_words.iter().any(|q| word_matches(&w.norm, q))).count() as f64
                / value_words.len() as f64
        };
        // A figure the question writes is what it asks about, never its
        // answer (issue 15: no span of the question's own words).
        if in_question > 0.0 && matches!(found.kind.group(), Group::Numeric | Group::Amount | Group::AmountDue) {
            return None;
        }
        // Kind cues from the row and labels.
        let mut cue_labels: Vec<(String, bool)> = vec![(label_form(&row.text), false)];
        cue_labels.extend(labels.iter().map(|l| (label_form(&l.text), l.header)));
        let (cue_pos, cue_neg) = kinds::cues(found.kind, &cue_labels, &asked.amount, &asked.date);
        // A financial statement: the value's year column and row label.
        let mut statement_year: Option<u32> = None;
        let statement_feature = grid.as_ref().map_or(0.0, |grid| {
            let first_figure = crate::extract::amount::find_amounts(&row.text).first().map_or(found.start, |t| t.start);
            let index = crate::extract::amount::find_amounts(&row.text)
                .iter()
                .position(|t| t.start == found.start)
                .unwrap_or(n);
            let year = if statement::own_label(row, first_figure).is_some() {
                statement::year_by_order(grid, row, index)
            } else {
                grid.year_at(row, statement::figure_x(row, found.start, found.end))
            };
            let Some(year) = year else { return 0.0 };
            statement_year = Some(year);
            let label = statement::label_of(layout, row, found.start).unwrap_or_default();
            let label_words = words_of(&label);
            let supported = !terms.hits(&label, &label_words).is_empty();
            if year == grid.wanted(asked.year) { if supported { 1.0 } else { 0.0 } } else { -1.0 }
        });
        let heading = !asked.heading_of.is_empty() && {
            let line = row.text.trim_start().to_lowercase();
            asked.heading_of.iter().any(|id| {
                line.strip_prefix(id.as_str())
                    .is_some_and(|rest| rest.starts_with(char::is_whitespace) && rest.trim().len() > 1)
            })
        };
        // Constraints in the evidence.
        // The passage up to the row after the value: a table's title and
        // column headers, the clause a sentence belongs to.
        let mut evidence: Vec<String> = Vec::new();
        for f in facts.iter().take((found.last_row + 2).min(rows.len())) {
            evidence.push(f.folded.clone());
        }
        evidence.extend(labels.iter().map(|l| folded(&l.text)));
        evidence.extend(page_head.iter().cloned());
        if let Some(year) = statement_year {
            evidence.push(year.to_string());
        }
        // What the value's own row, its labels and its column neighbours
        // say (a local constraint is read there only).
        let mut near: Vec<String> = facts[i..=found.last_row].iter().map(|f| f.folded.clone()).collect();
        near.extend(labels.iter().map(|l| folded(&l.text)));
        if has_prev {
            near.push(facts[i - 1].folded.clone());
        }
        if has_next {
            near.push(facts[next_index].folded.clone());
        }
        // A row that pairs its figures with years ("34%, 31% and 31% ... in
        // 2017, 2018 and 2019") gives this one for its own year only.
        let row_year =
            if matches!(found.kind.group(), Group::Numeric | Group::Amount | Group::AmountDue) && found.last_row == i {
                respective::year_of(&row.text, found.start, found.end)
            } else {
                None
            };
        let other_year = match (row_year, &asked.sole_year) {
            (Some(year), Some((wanted, text))) if year != *wanted => Some(text),
            _ => None,
        };
        let missing: Vec<String> = asked
            .constraints
            .iter()
            .filter(|c| {
                !c.names_document
                    && !c.caption_pages.contains(&passage.page)
                    && !answerable::found_in(c, if c.local { &near } else { &evidence })
                    || other_year == Some(&c.text)
            })
            .map(|c| c.text.clone())
            .collect();
        let row_chars = row.text.trim().chars().count().max(1);
        let features = Features {
            fit: found.fit,
            cov_row,
            cov_near,
            cov_window,
            cov_passage: 0.0,
            cov_section: 0.0,
            focus_near,
            focus_phrase,
            focus_after,
            defined,
            focus_in_value,
            label_cov,
            value_cell: f64::from(found_covers_row(row, &found)),
            in_question,
            rank: 1.0 / (1.0 + rank as f64),
            repeat: 0.0,
            constraints: 1.0,
            cue_pos,
            cue_neg,
            currency: f64::from(found.currency_written),
            currency_match: f64::from(matches!(
                (&found.value, &asked.currency),
                (AnswerValue::Amount(a), Some(want)) if a.currency.as_deref() == Some(want.as_str())
            )),
            statement: if asked.names_part || asked.year.is_some() {
                statement_feature
            } else {
                statement_feature.min(0.0)
            },
            heading: f64::from(heading),
            running: f64::from(self.stats.is_running(&own.folded)),
            row_len: ((1.0 + len as f64).ln() / 60f64.ln()).min(1.0),
            position: row.text[..found.start].chars().count() as f64 / row_chars as f64,
            first_in_row: f64::from(n == 0),
            bias_kind: f64::from(
                matches!(
                    found.kind,
                    Kind::Count | Kind::Percentage | Kind::Amount | Kind::Date | Kind::Duration | Kind::Boolean
                ) || found.kind.is_named(),
            ),
            kind_other: f64::from(found.kind != asked.kind),
            header_cov,
            cell_both: header_cov.min(row_label_cov),
            cell_cov,
            pairs_row,
            pairs_near,
            ..Features::default()
        };
        // The label row cited with the value: the nearest one inside the
        // passage, at most three lines away.
        let label_row = labels
            .iter()
            .filter_map(|l| l.cite)
            .filter(|id| id.abs_diff(row.line_id) <= 3)
            .min_by_key(|id| id.abs_diff(row.line_id));
        let last_line = rows[found.last_row].line_id;
        Some(Candidate {
            kind: found.kind,
            key: value_key(&found.value),
            value: found.value,
            text: found.text,
            rank,
            page: passage.page,
            row: row.line_id,
            last_row: last_line,
            label_row,
            start: found.start,
            end: found.end,
            features,
            log_odds: 0.0,
            probability: 0.0,
            missing,
            list: None,
        })
    }
}

/// A month the passages also give to the day ("November 2018" and
/// "11/20/18") is that day: the month alone is the less precise reading of
/// the same date, not a rival answer.
fn refine_months(all: &mut Vec<Candidate>) {
    let full_months: Vec<String> = all
        .iter()
        .filter_map(|c| match &c.value {
            AnswerValue::Date(d) if d.iso.len() == 10 => Some(d.iso[..7].to_owned()),
            _ => None,
        })
        .collect();
    all.retain(|c| !matches!(&c.value, AnswerValue::Date(d) if d.iso.len() == 7 && full_months.contains(&d.iso)));
}

/// A person's e-mail address: where the document's addresses carry their
/// holders' names (one of them holds a word of the asked name), an address
/// that holds none is someone else's, however close to the name it is
/// printed (an author block, a signature list).
fn rule_out_other_addresses(asked: &Asked, all: &mut [Candidate]) {
    let address = |c: &Candidate| folded(&c.text).replace(' ', "");
    for constraint in asked.constraints.iter().filter(|c| answerable::is_person_name(&c.text)) {
        let holds = |c: &Candidate| {
            let address = address(c);
            constraint.folded.split_whitespace().any(|w| w.chars().count() >= 3 && address.contains(w))
        };
        if all.iter().any(|c| c.kind == Kind::Email && holds(c)) {
            for c in all.iter_mut().filter(|c| c.kind == Kind::Email && !holds(c)) {
                if !c.missing.contains(&constraint.text) {
                    c.missing.push(constraint.text.clone());
                }
            }
        }
    }
}

/// A person named by surname ("Campion", "Mr. St. John") is the one the
/// passages name in full with that surname: one value, not two rivals.
fn join_surnames(all: &mut [Candidate]) {
    let full_names: Vec<(Vec<String>, String)> = all
        .iter()
        .filter(|c| c.kind == Kind::Person)
        .map(|c| (person_words(&c.key), c.key.clone()))
        .filter(|(words, _)| words.len() >= 2)
        .collect();
    for c in all.iter_mut().filter(|c| c.kind == Kind::Person) {
        let words = person_words(&c.key);
        if words.len() == 1
            && let Some((_, full)) = full_names.iter().find(|(f, _)| f.last() == words.last())
        {
            c.key = full.clone();
        }
    }
}

/// Whether two rows share a column: their boxes overlap horizontally (rows
/// without a box are taken to).
fn same_column(a: &Line, b: &Line) -> bool {
    !crate::layout::has_box(&a.bbox)
        || !crate::layout::has_box(&b.bbox)
        || a.bbox.x1.min(b.bbox.x1) - a.bbox.x0.max(b.bbox.x0) > 0.0
}

/// Whether the value covers most of its row (a cell, a value alone).
fn found_covers_row(row: &Line, found: &Found) -> bool {
    let visible = row.text.chars().filter(|c| !c.is_whitespace()).count().max(1);
    let value = row.text[found.start..found.end.min(row.text.len())].chars().filter(|c| !c.is_whitespace()).count();
    value * 10 >= visible * 6
}

/// Reads `passages` (view passages, retrieval order) for one asked question;
/// a single answer is none of the values in `taken` (the values earlier
/// parts of a compound question answered: two parts ask for two things).
pub(crate) fn read(
    asked: &Asked,
    view: &ParsedDocument,
    passages: &[Passage],
    stats: &DocStats,
    taken: &[String],
) -> Reading {
    let best_score = passages.iter().map(|p| p.score).fold(0.0, f64::max);
    let reader = PassageReader { asked, view, stats, order: day_month_order(view), best_score };
    let model = &*model::MODEL;
    let group = asked.group();
    let threshold = model.threshold(group);
    let mut reading = Reading {
        absent: asked
            .constraints
            .iter()
            .filter(|c| !c.in_document && !c.names_document)
            .map(|c| c.text.clone())
            .collect(),
        ..Reading::default()
    };
    // Every passage is read (a few milliseconds): the candidates compete
    // across passages, and their features compare them with each other.
    let mut all: Vec<Candidate> = Vec::new();
    for (rank, passage) in passages.iter().enumerate() {
        reading.passages_read = rank + 1;
        all.extend(reader.candidates(rank, passage));
    }
    refine_months(&mut all);
    if asked.kind == Kind::Email {
        rule_out_other_addresses(asked, &mut all);
    }
    join_surnames(&mut all);
    // Agreement between rows: the same value elsewhere.
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for c in &all {
        *counts.entry(c.key.clone()).or_default() += 1;
    }
    for c in &mut all {
        let others = counts.get(&c.key).copied().unwrap_or(1) - 1;
        c.features.repeat = ((1.0 + others as f64).ln() / 4f64.ln()).min(1.0);
    }
    // The largest number among the candidates (a total is the largest).
    let magnitude = |v: &AnswerValue| match v {
        AnswerValue::Amount(a) => Some(a.value),
        AnswerValue::Quantity(q) => Some(q.quantity),
        _ => None,
    };
    let largest = all.iter().filter_map(|c| magnitude(&c.value)).fold(f64::NEG_INFINITY, f64::max);
    for c in &mut all {
        c.features.largest = f64::from(magnitude(&c.value).is_some_and(|v| v == largest));
    }
    let mut features: Vec<Features> = all.iter().map(|c| c.features).collect();
    features::set_relative(&mut features);
    for (c, f) in all.iter_mut().zip(features) {
        c.features = f;
        c.log_odds = model.log_odds(group, &c.features);
        c.probability = 1.0 / (1.0 + (-c.log_odds).exp());
    }
    all.sort_by(|a, b| {
        b.probability
            .total_cmp(&a.probability)
            .then(a.rank.cmp(&b.rank))
            .then(a.row.cmp(&b.row))
            .then(a.start.cmp(&b.start))
    });
    reading.candidates = all;
    if !reading.absent.is_empty() {
        reading.refusal = Some(format!(
            "the document never mentions {}",
            reading.absent.iter().map(|a| format!("'{a}'")).collect::<Vec<_>>().join(", ")
        ));
        return reading;
    }
    let mut guess: Option<usize> = None;
    // The confidence of a candidate: its log-odds and its margin over the
    // best other value with complete evidence.
    let confidence_of = |i: usize, candidates: &[Candidate]| {
        let c = &candidates[i];
        let runner = candidates.iter().find(|o| o.missing.is_empty() && o.key != c.key).map(|o| o.log_odds);
        model.confidence(group, c.log_odds, runner, &c.features.evidence())
    };
    // A list question whose best evidence is a bulleted list (its
    // introduction or one of its items) is answered by the whole list.
    let top_list = reading
        .candidates
        .iter()
        .position(|c| c.missing.is_empty())
        .filter(|&i| reading.candidates[i].list.is_some() && asked.kind == Kind::Text);
    if asked.shape == AnswerShape::Listing
        && let Some(i) = top_list
        && model.confidence(group, reading.candidates[i].log_odds, None, &reading.candidates[i].features.evidence())
            >= threshold
    {
        reading.chosen = vec![i];
        reading.confidence = vec![model.confidence(
            group,
            reading.candidates[i].log_odds,
            None,
            &reading.candidates[i].features.evidence(),
        )];
        reading.list = true;
    } else if asked.shape == AnswerShape::Listing && asked.kind != Kind::Text {
        // A text question's list with no bulleted list to read is answered
        // by its best line (an enumeration is printed in one sentence):
        // text candidates picked one by one are line fragments, not items.
        let mut seen: Vec<&str> = Vec::new();
        let mut chosen: Vec<(usize, f64)> = Vec::new();
        for (i, c) in reading.candidates.iter().enumerate() {
            if !c.missing.is_empty() || seen.contains(&c.key.as_str()) || chosen.len() >= MAX_LIST_ITEMS {
                continue;
            }
            let confidence = model.confidence(group, c.log_odds, None, &c.features.evidence());
            if confidence >= threshold {
                seen.push(&c.key);
                chosen.push((i, confidence));
            }
        }
        chosen.sort_by_key(|&(i, _)| (reading.candidates[i].row, reading.candidates[i].start));
        reading.confidence = chosen.iter().map(|c| c.1).collect();
        reading.chosen = chosen.into_iter().map(|c| c.0).collect();
    } else if let Some(i) = reading
        .candidates
        .iter()
        // The title of an identifier is the line it opens ("AC-2 Account
        // Management"), decided by the structure when the document has one.
        .position(|c| c.missing.is_empty() && !restates(c, taken) && c.features.heading > 0.0)
        .filter(|_| !asked.heading_of.is_empty())
        .or_else(|| reading.candidates.iter().position(|c| c.missing.is_empty() && !restates(c, taken)))
        // The person in full, when the best reading named them by surname.
        .map(|i| {
            let best = &reading.candidates[i];
            if best.kind != Kind::Person || person_words(&folded(&best.text)).len() > 1 {
                return i;
            }
            reading
                .candidates
                .iter()
                .position(|c| c.key == best.key && c.missing.is_empty() && person_words(&folded(&c.text)).len() > 1)
                .unwrap_or(i)
        })
    {
        let confidence = confidence_of(i, &reading.candidates);
        if confidence >= threshold {
            reading.chosen = vec![i];
            reading.confidence = vec![confidence];
        } else {
            reading.refusal_confidence = Some(confidence);
            guess = Some(i);
        }
    }
    if reading.chosen.is_empty() {
        let describe = asked.kind.describe();
        // The best guess is the candidate whose confidence fell short, when
        // one was weighed; else the best overall.
        let best = guess.map_or(reading.candidates.first(), |i| reading.candidates.get(i));
        reading.refusal = Some(match best {
            None => format!("no {describe} found in the {} passage(s) read", reading.passages_read),
            Some(best) if !best.missing.is_empty() => {
                let lacking = reading.candidates.iter().take(5).flat_map(|c| c.missing.iter()).fold(
                    Vec::<&String>::new(),
                    |mut v, m| {
                        if !v.contains(&m) {
                            v.push(m);
                        }
                        v
                    },
                );
                format!(
                    "no {describe} in the passages read comes with {} (best guess '{}' on p.{}, not given as the answer)",
                    lacking.iter().map(|m| format!("'{m}'")).collect::<Vec<_>>().join(", "),
                    truncate(&best.text, 80),
                    best.page
                )
            }
            Some(best) => format!(
                "no {describe} with enough support in the {} passage(s) read (best guess '{}' on p.{} at confidence {:.2}, under the {:.2} needed)",
                reading.passages_read,
                truncate(&best.text, 80),
                best.page,
                // Rounded down: a confidence just under the threshold never
                // reads as equal to it.
                (reading.refusal_confidence.unwrap_or(best.probability) * 100.0).floor() / 100.0,
                threshold
            ),
        });
    }
    reading
}

fn truncate(text: &str, n: usize) -> String {
    docintel_schema::text::truncate_chars(text.trim(), n)
}

/// The view of `document` cut at the passages' bounds, and the passages in
/// view ids (see [`RowView::cut`]).
pub(crate) fn view_of<'d>(document: &'d ParsedDocument, passages: &[Passage]) -> (RowView<'d>, Vec<Passage>) {
    let cuts: std::collections::BTreeSet<u32> =
        passages.iter().flat_map(|p| [p.line_start, p.line_end.saturating_add(1)]).collect();
    let rows = RowView::cut(document, &cuts);
    let in_view: Vec<Passage> = passages.iter().map(|p| rows.passage_to_view(p)).collect();
    (rows, in_view)
}

/// Whether a label speaks of a figure per share: "Basic earnings per
/// share", "dividends declared per common share", "per ordinary share".
/// The scale note itself ("in millions, except per share amounts") is no
/// such label.
fn per_share(text: &str) -> bool {
    if amount::scale_cue(text).is_some() {
        return false;
    }
    let words: Vec<String> = words_of(text).into_iter().map(|w| w.norm).collect();
    // "except per share": the scale note's tail, split off its line.
    !words.iter().any(|w| w == "except")
        && words.iter().enumerate().any(|(k, w)| {
            w == "per" && words[k + 1..].iter().take(3).any(|n| n == "share" || n == "shares" || n == "unit")
        })
}

/// Whether a candidate gives a value an earlier part answered: the same
/// value, or a passage of text that holds it ("linkedin.com/in/john-doe
/// WORK EXPERIENCE ABC Company" after "ABC Company" answered the employer).
fn restates(c: &Candidate, taken: &[String]) -> bool {
    taken.iter().any(|t| {
        c.key == *t || (c.kind == Kind::Text && !t.is_empty() && format!(" {} ", c.key).contains(&format!(" {t} ")))
    })
}
