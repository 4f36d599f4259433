//! The extractive generator: the [`crate::reader`] behind the
//! [`Generator`] contract, no model.
//!
//! It reads the passages retrieval ranked (all of them, or in sequential
//! mode until a candidate reaches the stop probability), answers with the
//! reader's chosen values — one item per part for a compound question,
//! every eligible value for a listing, the labelled list a listing names
//! ([`crate::labelled`]) — each citing its value line and the label line
//! read with it, and otherwise answers "not found" with the reader's reason.
//! Confidence is the fitted probability of the answer (the lowest over the
//! parts of a compound question).

use docintel_schema::{
    Answer, AnswerFeedback, AnswerShape, AnswerValue, AskedPart, ChunkStrategy, Computed, ExtractionMethod, Generation,
    Generator, Item, ParsedDocument, ParsedQuestion, Passage, RowView, Span, TraceEvent, TraceSink, Usage,
};
use serde_json::json;

use crate::keywords::KeywordSet;
use crate::reader::stats::DocStats;
use crate::reader::{self, Asked, Candidate, Reading};

/// Name and template version of the extractive generator.
pub const EXTRACTIVE_VERSION: &str = "extractive/0.2";

/// Why generation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GenerateError {
    /// A passage names lines the document does not have (a caller bug).
    #[error("passage {index} (lines {line_start}-{line_end}) is outside the document ({n_lines} lines)")]
    PassageOutOfDocument {
        /// Index of the passage in the input.
        index: usize,
        /// Its first line.
        line_start: u32,
        /// Its last line.
        line_end: u32,
        /// Lines in the document.
        n_lines: usize,
    },
}

/// Deterministic generator: reads typed values straight from the passage
/// lines, cites the lines it read, and says "not found" rather than guess.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExtractiveGenerator;

impl ExtractiveGenerator {
    /// A new extractive generator.
    pub fn new() -> ExtractiveGenerator {
        ExtractiveGenerator
    }

    /// Every candidate the reader scored for `question` (each part of a
    /// compound question in turn), with its features: what `cargo xtask
    /// fit-reader` fits the scoring model on, and what an audit can inspect.
    pub fn candidates(
        &self,
        question: &ParsedQuestion,
        document: &ParsedDocument,
        passages: &[Passage],
    ) -> Result<Vec<ScoredCandidate>, GenerateError> {
        check_passages(document, passages)?;
        let stats = DocStats::of(document);
        let (rows, in_view) = reader::view_of(document, passages);
        let view = rows.document();
        let mut out = Vec::new();
        // As generation reads them: a later part answers another value.
        let mut taken: Vec<String> = Vec::new();
        let mut earlier: Vec<(String, reader::kinds::Kind)> = Vec::new();
        for (part, asked_part) in parts(question, &stats).into_iter().enumerate() {
            let asked = Asked::new(question, asked_part, &earlier, view, &stats);
            let reading = reader::read(&asked, &rows, document, &in_view, &stats, &taken);
            taken.extend(reading.chosen.iter().map(|&i| reading.candidates[i].key.clone()));
            earlier.extend(reading.chosen.iter().map(|&i| {
                let c = &reading.candidates[i];
                (c.text.trim().to_owned(), c.kind)
            }));
            for c in &reading.candidates {
                let span = span_of(c, &rows, view, passages);
                out.push(ScoredCandidate {
                    part,
                    group: asked.group().as_str(),
                    features: c.features.to_vec().to_vec(),
                    probability: c.probability,
                    value: c.value.clone(),
                    text: c.text.clone(),
                    span,
                    missing: c.missing.clone(),
                    absent: reading.absent.clone(),
                    list: c.list.iter().flatten().map(|(_, t)| t.clone()).collect(),
                });
            }
        }
        Ok(out)
    }
}

/// A candidate value as [`ExtractiveGenerator::candidates`] reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredCandidate {
    /// Which part of a compound question (0 for a single one).
    pub part: usize,
    /// The kind group whose model scored it (`numeric`, `date`, `named`, `text`).
    pub group: &'static str,
    /// Its features, in the model's order (see [`reader_features`]).
    pub features: Vec<f64>,
    /// The model's probability that it is the answer.
    pub probability: f64,
    /// The typed value.
    pub value: AnswerValue,
    /// As written.
    pub text: String,
    /// Where it was read (with its label line).
    pub span: Span,
    /// Question constraints its evidence lacks.
    pub missing: Vec<String>,
    /// Question constraints the whole document lacks.
    pub absent: Vec<String>,
    /// The items of the bulleted list its row introduces or belongs to
    /// (what a listing question is answered with when this candidate wins).
    pub list: Vec<String>,
}

/// The names of the reader's features, in model order.
pub fn reader_features() -> &'static [&'static str] {
    &reader::features::FEATURES
}

/// The features the reader's confidence reads beside the best candidate's
/// log-odds and margin, in calibration order.
pub fn reader_evidence_features() -> &'static [&'static str] {
    &reader::features::EVIDENCE
}

/// The kind groups of the reader's model.
pub fn reader_groups() -> Vec<&'static str> {
    reader::kinds::Group::ALL.iter().map(|g| g.as_str()).collect()
}

fn check_passages(document: &ParsedDocument, passages: &[Passage]) -> Result<(), GenerateError> {
    match crate::first_passage_out_of_document(document, passages) {
        Some(bad) => Err(GenerateError::PassageOutOfDocument {
            index: bad.index,
            line_start: bad.line_start,
            line_end: bad.line_end,
            n_lines: bad.n_lines,
        }),
        None => Ok(()),
    }
}

/// The parts to read: each part of a compound question, else the question.
/// A pair the parts distribute that the document prints as one term
/// ("research and development") is no pair: the question is read whole.
fn parts<'q>(question: &'q ParsedQuestion, stats: &DocStats) -> Vec<Option<&'q AskedPart>> {
    let term = question
        .generation
        .coordination
        .as_deref()
        .is_some_and(|pair| !stats.pages_with(&reader::evidence::folded(pair)).is_empty());
    if question.generation.parts.len() >= 2 && question.answer_shape == AnswerShape::Single && !term {
        question.generation.parts.iter().map(Some).collect()
    } else {
        vec![None]
    }
}

/// Longest quote of one row; a longer row is quoted around the value.
const MAX_QUOTE: usize = 300;

fn quote_window(text: &str, start: usize, end: usize) -> String {
    if text.len() <= MAX_QUOTE {
        return text.trim().to_owned();
    }
    let mut lo = start.saturating_sub(160);
    while !text.is_char_boundary(lo) {
        lo -= 1;
    }
    let mut hi = (end + 80).min(text.len());
    while !text.is_char_boundary(hi) {
        hi += 1;
    }
    text[lo..hi].trim().to_owned()
}

/// The citation of a candidate: its value rows and its label row, in
/// document line ids, inside its passage; the quote holds the value (and the
/// label when it is the line just before or after).
fn span_of(c: &Candidate, rows: &RowView<'_>, view: &ParsedDocument, passages: &[Passage]) -> Span {
    let line_text = |id: u32| view.line(id).map_or(String::new(), |l| l.text.clone());
    let mut quote = if c.last_row > c.row {
        (c.row..=c.last_row).map(|id| line_text(id).trim().to_owned()).collect::<Vec<_>>().join(" ")
    } else {
        quote_window(&line_text(c.row), c.start, c.end)
    };
    let (mut first, mut last) = (c.row, c.last_row);
    if let Some(label) = c.label_row {
        first = first.min(label);
        last = last.max(label);
        let label_text = line_text(label);
        if label + 1 == c.row && label_text.len() <= MAX_QUOTE {
            quote = format!("{} {quote}", label_text.trim());
        } else if label == c.last_row + 1 && label_text.len() <= MAX_QUOTE {
            quote = format!("{quote} {}", label_text.trim());
        }
    }
    let (start, end) = rows.to_document(first, last);
    let passage = &passages[c.rank];
    Span { line_start: start.max(passage.line_start), line_end: end.min(passage.line_end), page: c.page, quote }
}

/// An answer item: the value with its citation. A label a few lines away
/// from its value (a header row over a value row) is cited as a span of
/// its own, so the auditor reads "Booking ID" and "IBZY2087", not the lines
/// between.
fn item_of(c: &Candidate, rows: &RowView<'_>, view: &ParsedDocument, passages: &[Passage]) -> Item<AnswerValue> {
    let mut spans = vec![span_of(c, rows, view, passages)];
    if let Some(label) = c.label_row
        && label + 1 != c.row
        && label != c.last_row + 1
        && let Some(line) = view.line(label)
    {
        let passage = &passages[c.rank];
        let (start, end) = rows.to_document(label, label);
        let (vstart, vend) = rows.to_document(c.row, c.last_row);
        let label_span = Span {
            line_start: start.max(passage.line_start),
            line_end: end.min(passage.line_end),
            page: c.page,
            quote: quote_window(&line.text, 0, line.text.len()),
        };
        spans[0].line_start = vstart.max(passage.line_start);
        spans[0].line_end = vend.min(passage.line_end);
        spans = if label < c.row { vec![label_span, spans.remove(0)] } else { vec![spans.remove(0), label_span] };
    }
    Item { value: c.value.clone(), text: Some(c.text.trim().to_owned()), spans }
}

/// The words that name a statement figure: folded, content words only, a
/// plural as its singular; "total" and "net" say how it sums, not what.
fn figure_words(text: &str) -> std::collections::BTreeSet<String> {
    docintel_schema::text::normalize(text)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().any(char::is_alphabetic) && !w.chars().any(|c| c.is_ascii_digit()))
        .filter(|w| !crate::keywords::is_generic(w) && !matches!(*w, "total" | "net" | "fy" | "usd" | "eur"))
        .filter(|w| !crate::validate::is_filler(w))
        .map(|w| if w.len() > 3 { w.strip_suffix('s').unwrap_or(w) } else { w }.to_owned())
        .collect()
}

/// Whether the row a figure was read on names `focus` exactly (its label
/// line, and its own row up to the figure): `Ok`, else `Err` with the label.
fn names_figure(view: &ParsedDocument, c: &Candidate, focus: &str) -> Result<(), String> {
    let mut label = c.statement_label.clone().unwrap_or_default();
    if let Some(row) = c.label_row.filter(|&r| r != c.row && label.is_empty())
        && let Some(line) = view.line(row)
    {
        label.push_str(&line.text);
        label.push(' ');
    }
    if c.statement_label.is_none()
        && let Some(line) = view.line(c.row)
    {
        let mut cut = c.start.min(line.text.len());
        while !line.text.is_char_boundary(cut) {
            cut -= 1;
        }
        label.push_str(&line.text[..cut]);
    }
    let wanted = figure_words(focus);
    if !wanted.is_empty() && figure_words(&label) == wanted {
        Ok(())
    } else {
        Err(docintel_schema::text::truncate_chars(label.trim(), 60).to_owned())
    }
}

/// A figure's value in units (an amount's scale word applied).
fn figure(value: &AnswerValue) -> Option<f64> {
    match value {
        AnswerValue::Amount(a) => {
            let scale = match a.unit.as_deref().map(str::to_lowercase).as_deref() {
                Some("thousand" | "thousands") => 1e3,
                Some("million" | "millions") => 1e6,
                Some("billion" | "billions") => 1e9,
                _ => 1.0,
            };
            Some(a.value * scale)
        }
        AnswerValue::Quantity(q) if q.unit.as_deref() != Some("%") => Some(q.quantity),
        _ => None,
    }
}

/// The item answering a computed question: the first figure divided by
/// the second (a quotient), or the relative change from the first to the
/// second (a growth), rounded to the decimals the question asks for (three
/// when it names none), in percent when it asks for percent. Its text is the
/// computation as read ("29441 / 41190", "(1042 - 1141) / 1141"), which the
/// citation check recomputes; its spans are both figures' citations.
fn computed_item(
    question: &ParsedQuestion,
    computed: Computed,
    numerator: &Item<AnswerValue>,
    denominator: &Item<AnswerValue>,
) -> Option<Item<AnswerValue>> {
    // A statement prints its scale once, in its header: a figure read
    // without one is in the same scale as the other ("7,531" beside
    // "4,561 million"), so scales count only when both figures state one.
    let scaled = |item: &Item<AnswerValue>| matches!(&item.value, AnswerValue::Amount(x) if x.unit.is_some());
    let both = scaled(numerator) && scaled(denominator);
    let plain = |value: &AnswerValue| match value {
        AnswerValue::Amount(x) if !both => Some(x.value),
        other => figure(other),
    };
    let (a, b) = (plain(&numerator.value)?, plain(&denominator.value)?);
    if b == 0.0 || !a.is_finite() || !b.is_finite() {
        return None;
    }
    let formats = &question.generation.format_constraints;
    let percent = formats.get("unit").is_some_and(|u| u == "percent");
    let decimals: i32 = formats.get("decimals").and_then(|d| d.parse().ok()).unwrap_or(3).min(6);
    let scale = 10f64.powi(decimals);
    let (top, bottom) = match computed {
        Computed::Quotient => (a, b),
        // From the first year's figure to the second's.
        Computed::Growth => (b - a, a),
    };
    if bottom == 0.0 {
        return None;
    }
    let raw = if percent { top / bottom * 100.0 } else { top / bottom };
    let quantity = (raw * scale).round() / scale;
    // A quotient that rounds to nothing reads two figures of unlike size.
    if quantity == 0.0 && computed == Computed::Quotient {
        return None;
    }
    let mut spans: Vec<Span> = numerator.spans.iter().chain(&denominator.spans).cloned().collect();
    spans.truncate(4);
    Some(Item {
        value: AnswerValue::Quantity(docintel_schema::Quantity { quantity, unit: percent.then(|| "%".to_owned()) }),
        text: Some(match computed {
            Computed::Quotient => format!("{} / {}", numerator.value, denominator.value),
            Computed::Growth => format!("({} - {}) / {}", denominator.value, numerator.value, numerator.value),
        }),
        spans,
    })
}

fn round2(x: f64) -> f64 {
    (x.clamp(0.0, 1.0) * 100.0).round() / 100.0
}

fn trace_reading(trace: &mut dyn TraceSink, part: usize, asked: &Asked, reading: &Reading, passages: &[Passage]) {
    let best: Vec<serde_json::Value> = reading
        .candidates
        .iter()
        .take(5)
        .map(|c| {
            json!({
                "text": c.text.chars().take(120).collect::<String>(),
                "page": c.page,
                "passage": c.rank,
                "probability": round2(c.probability),
                "missing": c.missing,
            })
        })
        .collect();
    trace.record(TraceEvent {
        brick: "generate".to_owned(),
        step: "read".to_owned(),
        detail: json!({
            "part": part,
            "question": asked.text,
            "looking_for": asked.kind.describe(),
            "passages_read": passages.iter().take(reading.passages_read).map(|p| format!("p{} l{}-{}", p.page, p.line_start, p.line_end)).collect::<Vec<_>>(),
            "candidates": reading.candidates.len(),
            "best": best,
            "constraints": asked.constraints.iter().map(|c| json!({"text": c.text, "in_document": c.in_document, "names_document": c.names_document})).collect::<Vec<_>>(),
            "chosen": reading.chosen.len(),
            "refusal": reading.refusal,
        }),
    });
}

impl Generator for ExtractiveGenerator {
    type Error = GenerateError;

    fn generate(
        &self,
        question: &ParsedQuestion,
        document: &ParsedDocument,
        passages: &[Passage],
        trace: &mut dyn TraceSink,
    ) -> Result<Generation, GenerateError> {
        check_passages(document, passages)?;
        let stats = DocStats::of(document);
        let (rows, in_view) = reader::view_of(document, passages);
        let view = rows.document();
        let sequential = question.chunk_strategy == ChunkStrategy::Sequential;
        let mut items: Vec<Item<AnswerValue>> = Vec::new();
        let mut warnings: Vec<String> = Vec::new();
        let mut confidences: Vec<f64> = Vec::new();
        let mut conflicting = false;
        let mut read_max = 0;
        let parts = parts(question, &stats);
        let mut found_parts = 0;
        // Values earlier parts answered: a later part answers another one.
        let mut taken: Vec<String> = Vec::new();
        // The same values as written: a later part that refers back
        // ("and how old was he?") is read near them.
        let mut earlier: Vec<(String, reader::kinds::Kind)> = Vec::new();
        // The kind of the one value answered, when the reader found it as
        // another kind than the question's wording asked (a percentage for
        // "what fee"): the answer says so.
        let mut answered_kind: Option<reader::kinds::Kind> = None;
        // A constraint the document never mentions ("AT-7" in a catalogue
        // that ends at AT-6) makes the question unanswerable whatever else
        // could be read.
        let mut absent = false;
        for (index, part) in parts.iter().enumerate() {
            let asked = Asked::new(question, *part, &earlier, view, &stats);
            let reading = reader::read(&asked, &rows, document, &in_view, &stats, &taken);
            trace_reading(trace, index, &asked, &reading, passages);
            absent |= !reading.absent.is_empty();
            read_max = read_max.max(reading.passages_read);
            if reading.chosen.is_empty() {
                let reason = reading.refusal.clone().unwrap_or_else(|| "no answer found".to_owned());
                warnings.push(match part {
                    Some(p) => format!("{}: {reason}", p.question),
                    None => reason,
                });
                continue;
            }
            let chosen: Vec<&Candidate> = reading.chosen.iter().map(|&i| &reading.candidates[i]).collect();
            // A quotient multiplies a misread: each figure must be read on
            // a row that names it, no more and no less.
            if question.generation.computed.is_some()
                && let (Some(part), [only]) = (part, chosen.as_slice())
                && let Some(focus) = part.answer_focus.as_deref()
                && let Err(label) = names_figure(view, only, focus)
            {
                warnings.push(format!("{}: the figure read is labelled '{label}', not '{focus}'", part.question));
                continue;
            }
            found_parts += 1;
            taken.extend(chosen.iter().map(|c| c.key.clone()));
            earlier.extend(chosen.iter().map(|c| (c.text.trim().to_owned(), c.kind)));
            if parts.len() == 1
                && let [only] = chosen.as_slice()
                && only.kind != asked.kind
                && !reading.list
            {
                answered_kind = Some(only.kind);
            }
            confidences.push(reading.confidence.iter().sum::<f64>() / reading.confidence.len().max(1) as f64);
            if asked.shape != AnswerShape::Listing
                && let Some(top) = chosen.first()
            {
                let rival = reading
                    .candidates
                    .iter()
                    .find(|c| c.key != top.key && c.missing.is_empty() && c.probability >= top.probability - 0.05);
                if let Some(rival) = rival {
                    conflicting = true;
                    warnings.push(format!(
                        "another passage gives a different value with nearly the same support: '{}' (p.{})",
                        docintel_schema::text::truncate_chars(rival.text.trim(), 60),
                        rival.page
                    ));
                }
                if let AnswerValue::Amount(a) = &top.value {
                    if a.currency.is_none() {
                        warnings.push("no currency stated on or near the amount".to_owned());
                    }
                    if let (Some(want), Some(got)) =
                        (question.generation.format_constraints.get("currency"), &a.currency)
                        && !want.eq_ignore_ascii_case(got)
                    {
                        warnings.push(format!(
                            "the question asks for {}; the document states {got} (not converted)",
                            want.to_uppercase()
                        ));
                    }
                }
            }
            if reading.list
                && let Some(top) = chosen.first()
                && let Some(list) = &top.list
            {
                // Each item of the bulleted list, citing its own row.
                let passage = &passages[top.rank];
                for (row, text) in list {
                    let (start, end) = rows.to_document(*row, *row);
                    let quote = view.line(*row).map_or(String::new(), |l| quote_window(&l.text, 0, l.text.len()));
                    items.push(Item {
                        value: AnswerValue::Text(text.trim_end_matches([';', ',', '.']).to_owned()),
                        text: Some(text.clone()),
                        spans: vec![Span {
                            line_start: start.max(passage.line_start),
                            line_end: end.min(passage.line_end),
                            page: top.page,
                            quote,
                        }],
                    });
                }
            } else {
                items.extend(chosen.iter().map(|c| item_of(c, &rows, view, passages)));
            }
        }
        // "Current liabilities to total liabilities": the two figures read,
        // the answer is their quotient, citing both.
        if let Some(computed) = question.generation.computed
            && parts.len() == 2
        {
            match (found_parts, items.as_slice()) {
                (2, [numerator, denominator]) => match computed_item(question, computed, numerator, denominator) {
                    Some(item) => {
                        warnings.push(format!(
                            "computed ({}) from {} and {}",
                            match computed {
                                Computed::Quotient => "quotient",
                                Computed::Growth => "growth",
                            },
                            item.spans.first().map_or("", |s| s.quote.as_str()).chars().take(60).collect::<String>(),
                            item.spans.last().map_or("", |s| s.quote.as_str()).chars().take(60).collect::<String>()
                        ));
                        items = vec![item];
                    }
                    None => {
                        warnings.push("the two figures read are not numbers that divide".to_owned());
                        items.clear();
                    }
                },
                _ => {
                    // Half a quotient is no answer.
                    items.clear();
                }
            }
        }
        // A listing that names a labelled field is answered by that label's
        // list (one item per element).
        let shown_all: Vec<Passage> = passages.iter().take(read_max.max(1).min(passages.len())).cloned().collect();
        let labelled = (question.answer_shape == AnswerShape::Listing
            && reader::kinds::Kind::of(&question.answer_type) == reader::kinds::Kind::Text
            && !absent)
            .then(|| crate::labelled::labelled_list(question, document, &shown_all))
            .flatten();
        let labelled_list = labelled.is_some();
        if let Some(list) = labelled {
            trace.record(TraceEvent {
                brick: "generate".to_owned(),
                step: "labelled_list".to_owned(),
                detail: json!({
                    "label": list.label,
                    "items": list.items.len(),
                    "line": list.items.first().map(|i| i.spans[0].line_start),
                }),
            });
            items = list.items;
            found_parts = parts.len();
            warnings.clear();
            confidences = vec![confidences.first().copied().unwrap_or(0.8)];
        }
        let shown: Vec<Passage> = passages.iter().take(read_max.min(passages.len())).cloned().collect();
        let keywords = KeywordSet::from_question(question);
        let mut keywords_found: Vec<String> = Vec::new();
        for line in shown.iter().flat_map(|p| document.line_range(p.line_start, p.line_end)) {
            for k in keywords.matches(&line.text) {
                let original = &keywords.keywords[k].original;
                if !keywords_found.contains(original) {
                    keywords_found.push(original.clone());
                }
            }
        }
        keywords_found.truncate(8);
        warnings.truncate(8);
        let found = !items.is_empty();
        let feedback = if found {
            AnswerFeedback {
                answer_found: true,
                complete_answer_found: found_parts == parts.len(),
                confidence: round2(confidences.iter().copied().fold(1.0, f64::min)),
                warnings,
                keywords_found,
                llm_discovered_keywords: Vec::new(),
                conflicting_evidence: conflicting,
                context_structured: true,
                suggested_clarification: None,
            }
        } else {
            let mut feedback = AnswerFeedback::not_found(warnings.join("; "));
            if shown.is_empty() && passages.is_empty() {
                feedback.warnings = vec![no_passages_note(document)];
            }
            feedback.keywords_found = keywords_found;
            feedback.suggested_clarification = question.suggested_clarification.clone();
            feedback
        };
        let iterations = if sequential { shown.len() as u32 } else { u32::from(!passages.is_empty()) };
        let answer = Answer {
            answer_shape: question.answer_shape,
            answer_type: match answered_kind {
                Some(kind) if !labelled_list => kind.answer_type().to_owned(),
                _ => question.answer_type.clone(),
            },
            items,
            extraction_method: ExtractionMethod::Extractive,
            feedback,
        };
        Ok(Generation {
            answer,
            strategy_executed: if sequential { "sequential" } else { "combined" }.to_owned(),
            exit: if found { "sufficient" } else { "exhausted" }.to_owned(),
            iterations,
            passages_shown: shown,
            fragments_applied: Vec::new(),
            template_version: EXTRACTIVE_VERSION.to_owned(),
            model: None,
            usage: Usage::default(),
            calls: Vec::new(),
            notes: Vec::new(),
            answer_json: None,
        })
    }

    fn name(&self) -> String {
        EXTRACTIVE_VERSION.to_owned()
    }
}

/// Why there was nothing to read: a document without text (scanned pages
/// this build cannot read) says so, naming its pages.
fn no_passages_note(document: &ParsedDocument) -> String {
    let without: Vec<u32> = document.pages.iter().filter(|p| !p.has_text_layer).map(|p| p.page).collect();
    // A page image under a one- or two-line text layer (a court stamp, a
    // running header) is a page whose text is in the image.
    let imaged = document.pages.iter().filter(|p| !p.has_text_layer || (p.has_figure && p.n_lines <= 2)).count();
    if document.lines.is_empty() && !without.is_empty() {
        format!(
            "the document has no text to read: {} of its {} page(s) are images without a text layer (scanned or rendered); this build reads no page images",
            without.len(),
            document.pages.len()
        )
    } else if imaged * 2 >= document.pages.len().max(1) {
        format!(
            "no passages to read: {imaged} of the document's {} page(s) are images whose text layer holds at most a header line (scanned or rendered); this build reads no page images",
            document.pages.len()
        )
    } else {
        "no passages to read".to_owned()
    }
}

#[cfg(test)]
mod tests;
