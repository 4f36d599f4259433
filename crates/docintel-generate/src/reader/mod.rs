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
//!
//! The question (or part) is read into an [`Asked`] ([`asked`]); each passage
//! by a [`passage`] reader, each value's features in [`candidate`]; this
//! module ranks the candidates and chooses the answer.

pub(crate) mod answerable;
mod asked;
mod candidate;
pub(crate) mod evidence;
pub(crate) mod features;
pub(crate) mod kinds;

pub(crate) mod model;
mod passage;
mod respective;
pub(crate) mod stats;

use std::collections::BTreeMap;

use docintel_schema::{AnswerShape, AnswerValue, Line, ParsedDocument, Passage, RowView};

use crate::extract::amount;
use crate::extract::date::DayMonthOrder;
pub(crate) use asked::Asked;
use asked::calendar_year;
use evidence::folded;
use features::Features;
use kinds::Kind;
use passage::PassageReader;
use stats::DocStats;

/// Most items of a listing answer.
const MAX_LIST_ITEMS: usize = 25;

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
    /// On a statement: how well its row label names the asked line item
    /// (`candidate::label_fit`), else 0.
    pub(crate) label_fit: f64,
    /// On a statement: its row label, as the statement prints it.
    pub(crate) statement_label: Option<String>,
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

/// Reads `passages` (view passages, retrieval order) for one asked question;
/// a single answer is none of the values in `taken` (the values earlier
/// parts of a compound question answered: two parts ask for two things).
///
/// A question whose wording types nothing ("which NIST SP…", "under which
/// grant…") asks for a code when the passages print one right after its
/// head noun ("SP 800-37", "grant IIS-00325657"): it is read for that code
/// first ([`kinds::identifier::names_series`]), and for a passage of text
/// when no code reaches the threshold.
///
/// `rows` is the document's row view (`view` is its document), `document`
/// the line table it joins: a table cell is placed in its table by its own
/// piece, not by the joined row ("ConvS2S Ensemble 26.36 41.29 …" is one
/// row of five cells under five column headers).
pub(crate) fn read(
    asked: &Asked,
    rows: &RowView<'_>,
    document: &ParsedDocument,
    passages: &[Passage],
    stats: &DocStats,
    taken: &[String],
) -> Reading {
    let view = rows.document();
    let source = Source { rows, document };
    if asked.kind == Kind::Text && asked.shape == AnswerShape::Single {
        let texts: Vec<&str> =
            passages.iter().flat_map(|p| view.line_range(p.line_start, p.line_end)).map(|l| l.text.as_str()).collect();
        if kinds::identifier::names_series(&texts, &asked.focus) {
            let coded = Asked { kind: Kind::Identifier, ..asked.clone() };
            let reading = read_as(&coded, &source, passages, stats, taken);
            if !reading.chosen.is_empty() {
                return reading;
            }
        }
    }
    read_as(asked, &source, passages, stats, taken)
}

/// The row view read and the line table it joins.
#[derive(Clone, Copy)]
pub(crate) struct Source<'a> {
    pub(crate) rows: &'a RowView<'a>,
    pub(crate) document: &'a ParsedDocument,
}

impl<'a> Source<'a> {
    /// The piece of the line table that holds byte `at` of view line `row`
    /// (the view joins a run's pieces with single spaces); `row` itself when
    /// the view does not join it or its text is not its pieces'.
    pub(crate) fn piece(&self, row: &'a Line, at: usize) -> &'a Line {
        let (first, last) = self.rows.run(row.line_id);
        let mut offset = 0;
        for id in first..=last {
            let Some(line) = self.document.line(id) else { return row };
            let end = offset + line.text.len();
            if row.text.get(offset..end) != Some(line.text.as_str()) {
                return row;
            }
            if at <= end {
                return line;
            }
            offset = end + 1;
        }
        row
    }
}

fn read_as(asked: &Asked, source: &Source<'_>, passages: &[Passage], stats: &DocStats, taken: &[String]) -> Reading {
    let view = source.rows.document();
    let best_score = passages.iter().map(|p| p.score).fold(0.0, f64::max);
    let reader = PassageReader { asked, view, source: *source, stats, order: day_month_order(view), best_score };
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
    // A statement's cell in the asked year column stands for the row whose
    // label names the asked line item best: "total assets" is the row
    // "Total assets", not "Total current assets" beside it.
    let best_fit = all.iter().filter(|c| c.features.statement > 0.0).map(|c| c.label_fit).fold(0.0, f64::max);
    for c in all.iter_mut().filter(|c| c.features.statement > 0.0 && c.label_fit < best_fit) {
        c.features.statement = 0.0;
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

/// Whether a candidate gives a value an earlier part answered: the same
/// value, or a passage of text that holds it ("linkedin.com/in/john-doe
/// WORK EXPERIENCE ABC Company" after "ABC Company" answered the employer).
fn restates(c: &Candidate, taken: &[String]) -> bool {
    taken.iter().any(|t| {
        c.key == *t || (c.kind == Kind::Text && !t.is_empty() && format!(" {} ", c.key).contains(&format!(" {t} ")))
    })
}
