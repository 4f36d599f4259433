//! The extractive generator: typed values read from the passage lines by rule,
//! no model.
//!
//! For every passage examined it lists *candidates* (a typed value, the line it
//! was read on, a score) and keeps the best one (or all, for listings).
//!
//! **Scoring.** A candidate scores the weights of the question keywords on its
//! line, plus half of those on the line just above (labels often sit on their
//! own line), plus a type-specific *label* bonus:
//! - amounts: for "total" questions +2 on lines labelled total (`total`,
//!   `grand total`, `TTC`, `totaal`, `amount due`...) and −1.5 on sub-total or
//!   untaxed lines (`subtotal`, `HT`, `excl.`) unless the question asks for those;
//!   +0.3 when the currency is written next to the number, +0.5 when it is the
//!   currency the question asks for, +0.1 for the last amount of its line;
//!   ties go to the largest amount for total questions;
//! - dates: +1.5 on issue-date labels (`date`, `invoice date`, `factuurdatum`...),
//!   −2 on due/order/delivery/period labels, or +2.5 when the question asks
//!   for that kind of date;
//! - every candidate loses 0.05 per rank of its passage.
//!
//! **Eligibility.** A typed value (amount, date, e-mail, IBAN, URL) is kept
//! only if its line (or the line above) carries a salient question keyword or a
//! label bonus, or its passage covers at least half of the salient keyword
//! weight. A text or boolean answer needs a line with at least one salient
//! keyword in a passage covering at least half of the salient weight. Nothing
//! eligible → an honest not-found with a warning.
//!
//! **Confidence** (documented heuristic, in [0, 1]): with `c` the share of the
//! salient keyword weight found on the chosen line and the one above,
//! typed values get `0.4 + 0.4c + 0.2s` (`s` = 1 when the value is labelled and
//! an amount has a currency), text `0.2 + 0.6c`, booleans `0.1 + 0.5c`; times
//! 0.8 when another candidate scores as high with a different value.

use std::collections::BTreeSet;

use docintel_schema::{
    Amount, Answer, AnswerFeedback, AnswerShape, AnswerValue, ChunkStrategy, DateValue, ExtractionMethod, Generation,
    Generator, Item, Line, ParsedDocument, ParsedQuestion, Passage, Span, TraceEvent, TraceSink, Usage,
};
use serde_json::json;

use crate::extract::amount::{self, MoneyToken};
use crate::extract::date::{self, DayMonthOrder};
use crate::extract::pattern::{self, PatternToken};
use crate::keywords::{KeywordSet, has_any, label_form};

/// Name and template version of the extractive generator.
pub const EXTRACTIVE_VERSION: &str = "extractive/0.1";

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
/// lines, cites the line it read, and says "not found" rather than guess.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExtractiveGenerator;

impl ExtractiveGenerator {
    /// A new extractive generator.
    pub fn new() -> ExtractiveGenerator {
        ExtractiveGenerator
    }
}

/// What the question asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Amount,
    Date,
    Boolean,
    Email,
    Iban,
    Url,
    Text,
}

impl Kind {
    fn of(answer_type: &str) -> Kind {
        match answer_type {
            "amount" | "money" | "price" | "premium" => Kind::Amount,
            "date" => Kind::Date,
            "boolean" => Kind::Boolean,
            "email" => Kind::Email,
            "iban" => Kind::Iban,
            "url" => Kind::Url,
            _ => Kind::Text,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Kind::Amount => "amount",
            Kind::Date => "date",
            Kind::Boolean => "statement answering the question",
            Kind::Email => "e-mail address",
            Kind::Iban => "IBAN",
            Kind::Url => "URL",
            Kind::Text => "line matching enough of the question keywords",
        }
    }
}

/// Kinds of dates a question can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DateKind {
    Issue,
    Due,
    Order,
    Delivery,
    Period,
}

const TOTAL_LABELS: &[&str] = &[
    "total",
    "totaal",
    "totale",
    "gesamt",
    "gesamtbetrag",
    "summe",
    "ttc",
    "grand total",
    "amount due",
    "balance due",
    "total due",
    "to pay",
    "à payer",
    "a payer",
    "net à payer",
    "te betalen",
    "endbetrag",
    "rechnungsbetrag",
    "amount payable",
    "importe total",
    "montant",
];
const SUB_LABELS: &[&str] = &[
    "subtotal",
    "sub-total",
    "sub total",
    "subtotaal",
    "zwischensumme",
    "ht",
    "hors taxe",
    "hors taxes",
    "excl",
    "excluding",
    "exclusief",
    "untaxed",
    "before tax",
    "net amount",
    "netto",
];
const AMOUNTISH: &[&str] = &[
    "amount", "invoice", "bill", "montant", "bedrag", "betrag", "pay", "paid", "due", "cost", "price", "sum",
    "charged", "charges", "much", "owe", "invoiced", "facture", "factuur", "rechnung", "factura", "importe", "betalen",
    "hoeveel", "payer", "combien", "zahlen", "cuánto", "cuanto",
];
const ISSUE_LABELS: &[&str] = &[
    "date",
    "dated",
    "datum",
    "fecha",
    "data",
    "invoice date",
    "date of issue",
    "issue date",
    "issued",
    "factuurdatum",
    "factuur datum",
    "rechnungsdatum",
    "date de facture",
    "date facture",
    "billing date",
    "invoice",
    "factuur",
    "facture",
    "rechnung",
    "factura",
];
const DUE_LABELS: &[&str] = &[
    "due",
    "due date",
    "échéance",
    "echeance",
    "vervaldatum",
    "fällig",
    "fälligkeit",
    "faellig",
    "payable by",
    "pay by",
    "vencimiento",
    "date limite",
];
const ORDER_LABELS: &[&str] =
    &["order", "ordered", "order date", "bestelldatum", "besteldatum", "bestelling", "commande", "pedido"];
const DELIVERY_LABELS: &[&str] = &[
    "delivery",
    "delivered",
    "shipped",
    "shipping",
    "ship date",
    "dispatch",
    "livraison",
    "leverdatum",
    "levering",
    "lieferdatum",
    "entrega",
];
const PERIOD_LABELS: &[&str] =
    &["period", "période", "periode", "zeitraum", "valid until", "expires", "expiry", "expiration"];
const NEGATIONS: &[&str] = &[
    "not", "no", "none", "never", "excluded", "exclude", "excludes", "without", "cannot", "can't", "isn't", "aren't",
    "doesn't", "don't", "won't", "pas", "non", "aucun", "aucune", "nicht", "kein", "keine", "geen", "niet", "nooit",
    "sin", "ningún", "ninguna",
];

fn date_kind_labels(kind: DateKind) -> &'static [&'static str] {
    match kind {
        DateKind::Issue => ISSUE_LABELS,
        DateKind::Due => DUE_LABELS,
        DateKind::Order => ORDER_LABELS,
        DateKind::Delivery => DELIVERY_LABELS,
        DateKind::Period => PERIOD_LABELS,
    }
}

const OTHER_DATE_KINDS: [DateKind; 4] = [DateKind::Due, DateKind::Order, DateKind::Delivery, DateKind::Period];

/// Everything derived once from the question and document.
struct Context<'a> {
    question: &'a ParsedQuestion,
    document: &'a ParsedDocument,
    keywords: KeywordSet,
    kind: Kind,
    order: DayMonthOrder,
    total_question: bool,
    sub_question: bool,
    date_intent: DateKind,
    currency_preference: Option<String>,
}

impl<'a> Context<'a> {
    fn new(question: &'a ParsedQuestion, document: &'a ParsedDocument) -> Context<'a> {
        let keywords = KeywordSet::from_question(question);
        let qtext = label_form(&question.corrected_question);
        let kind = Kind::of(&question.answer_type);
        let sub_question = has_any(&qtext, SUB_LABELS);
        let salient_amountish = keywords.salient_norms().all(|k| has_any(k, AMOUNTISH) || has_any(k, TOTAL_LABELS));
        let total_question = has_any(&qtext, TOTAL_LABELS) || (!sub_question && salient_amountish);
        let date_intent = OTHER_DATE_KINDS
            .into_iter()
            .find(|k| {
                has_any(&qtext, date_kind_labels(*k))
                    || keywords.salient_norms().any(|w| has_any(w, date_kind_labels(*k)))
            })
            .unwrap_or(DateKind::Issue);
        let currency_preference = question.generation.format_constraints.get("currency").map(|c| c.to_uppercase());
        Context {
            question,
            document,
            keywords,
            kind,
            order: day_month_order(document),
            total_question,
            sub_question,
            date_intent,
            currency_preference,
        }
    }
}

/// Month-first only for documents that look American: English (or unknown
/// language) and quoting dollars; every other document is day-first.
fn day_month_order(document: &ParsedDocument) -> DayMonthOrder {
    let english_or_unknown = document.profile.languages.first().is_none_or(|l| l == "en");
    let dollars = amount::dominant_currency(document.lines.iter().map(|l| l.text.as_str())) == Some("USD");
    if english_or_unknown && dollars { DayMonthOrder::MonthFirst } else { DayMonthOrder::DayFirst }
}

/// A typed value read from a line.
#[derive(Debug, Clone)]
struct Candidate {
    rank: usize,
    line_start: u32,
    line_end: u32,
    page: u32,
    quote: String,
    value: AnswerValue,
    text: String,
    score: f64,
    /// The support is on the value's own line (not only the line above).
    supported_here: bool,
    eligible: bool,
    /// Salient keyword coverage of the line and the one above.
    coverage: f64,
    /// Labelled, and for amounts with a currency.
    strong: bool,
    /// For tie-breaks between amounts.
    magnitude: f64,
    key: String,
}

/// What one line offers to candidates: its keyword matches and label scores.
struct LineView<'d> {
    line: &'d Line,
    above: Option<&'d Line>,
    below: Option<&'d Line>,
    own: Vec<usize>,
    context: Vec<usize>,
    keyword_score: f64,
    salient_here: bool,
}

fn quote_window(text: &str, start: usize, end: usize) -> String {
    const MAX: usize = 300;
    if text.len() <= MAX {
        return text.trim().to_owned();
    }
    let mut lo = start.saturating_sub(120);
    while !text.is_char_boundary(lo) {
        lo -= 1;
    }
    let mut hi = (end + 40).min(text.len());
    while !text.is_char_boundary(hi) {
        hi += 1;
    }
    text[lo..hi].trim().to_owned()
}

impl Context<'_> {
    fn amount_label(&self, norm: &str) -> f64 {
        let mut score = 0.0;
        let total = has_any(norm, TOTAL_LABELS);
        let sub = has_any(norm, SUB_LABELS);
        if self.total_question && total {
            score += 2.0;
        }
        if sub && (self.total_question || self.sub_question) {
            score += if self.sub_question { 2.0 } else { -1.5 };
        }
        score
    }

    fn date_label(&self, norm: &str) -> f64 {
        let mut score = 0.0;
        for kind in OTHER_DATE_KINDS {
            if has_any(norm, date_kind_labels(kind)) {
                score += if kind == self.date_intent { 2.5 } else { -2.0 };
            }
        }
        if self.date_intent == DateKind::Issue && has_any(norm, ISSUE_LABELS) {
            score += 1.5;
        }
        score
    }

    fn label(&self, text: &str) -> f64 {
        let norm = label_form(text);
        match self.kind {
            Kind::Amount => self.amount_label(&norm),
            Kind::Date => self.date_label(&norm),
            _ => 0.0,
        }
    }

    /// All candidates of one passage.
    fn candidates(&self, rank: usize, passage: &Passage) -> (Vec<Candidate>, Vec<usize>) {
        let lines = self.document.line_range(passage.line_start, passage.line_end);
        let matches: Vec<Vec<usize>> = lines.iter().map(|l| self.keywords.matches(&l.text)).collect();
        let mut passage_matches: Vec<usize> = matches.iter().flatten().copied().collect();
        passage_matches.sort_unstable();
        passage_matches.dedup();
        let passage_coverage = self.keywords.salient_coverage(&passage_matches);
        let has_salient = self.keywords.has_salient();
        let passage_ok = !has_salient || passage_coverage >= 0.5;
        let texts = || lines.iter().map(|l| l.text.as_str());
        let passage_currency = amount::dominant_currency(texts());
        let page_currency = amount::dominant_currency(
            self.document.lines.iter().filter(|l| l.page == passage.page).map(|l| l.text.as_str()),
        );
        let passage_scale = texts().find_map(amount::scale_cue);
        let mut out = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let own = matches[i].clone();
            let above_matches: Vec<usize> =
                if i > 0 { matches[i - 1].iter().filter(|k| !own.contains(k)).copied().collect() } else { Vec::new() };
            let mut context = own.clone();
            context.extend(&above_matches);
            let salient = |ks: &[usize]| ks.iter().any(|&k| self.keywords.keywords[k].salient);
            let view = LineView {
                line,
                above: i.checked_sub(1).map(|j| &lines[j]),
                below: lines.get(i + 1),
                keyword_score: self.keywords.weight(&own) + 0.5 * self.keywords.weight(&above_matches),
                salient_here: salient(&own) || (!has_salient && !own.is_empty()),
                context,
                own,
            };
            let context_salient = salient(&view.context) || (!has_salient && !view.context.is_empty());
            let coverage = self.keywords.salient_coverage(&view.context);
            let base = |value, text: String, start, end, score: f64, label: f64, strong: bool, magnitude| {
                let supported = context_salient || label > 0.0;
                // The label sits on the line above when the line itself says nothing.
                let use_above = view.above.is_some() && view.own.is_empty() && self.label(&line.text).abs() < 1e-12;
                let (line_start, quote) = match (use_above, view.above) {
                    (true, Some(above)) => {
                        (above.line_id, format!("{} {}", above.text.trim(), quote_window(&line.text, start, end)))
                    }
                    _ => (line.line_id, quote_window(&line.text, start, end)),
                };
                Candidate {
                    rank,
                    line_start,
                    line_end: line.line_id,
                    page: passage.page,
                    quote,
                    key: text_key(&value),
                    value,
                    text,
                    score: score - 0.05 * rank as f64,
                    supported_here: view.salient_here || self.label(&line.text) > 0.0,
                    eligible: supported || passage_ok,
                    coverage,
                    strong: strong && label >= 0.0 && (supported || label > 0.0),
                    magnitude,
                }
            };
            let label = self.label(&line.text) + view.above.map_or(0.0, |a| 0.5 * self.label(&a.text));
            match self.kind {
                Kind::Amount => {
                    let dates = date::find_dates(&line.text, self.order);
                    let tokens: Vec<MoneyToken> = amount::find_amounts(&line.text)
                        .into_iter()
                        .filter(|t| !dates.iter().any(|d| t.start < d.end && d.start < t.end))
                        .collect();
                    let line_currency = amount::dominant_currency([line.text.as_str()]);
                    let n = tokens.len();
                    for (j, token) in tokens.into_iter().enumerate() {
                        let currency = token.currency.or(line_currency).or(passage_currency).or(page_currency);
                        let mut score = view.keyword_score + label;
                        if token.currency.is_some() {
                            score += 0.3;
                        }
                        if currency.is_some() && currency.map(str::to_owned) == self.currency_preference {
                            score += 0.5;
                        }
                        if j + 1 == n {
                            score += 0.1;
                        }
                        let value = AnswerValue::Amount(Amount {
                            value: token.value,
                            currency: currency.map(str::to_owned),
                            unit: token.unit.or(passage_scale).map(str::to_owned),
                        });
                        out.push(base(
                            value,
                            token.text.clone(),
                            token.start,
                            token.end,
                            score,
                            label,
                            currency.is_some(),
                            token.value,
                        ));
                    }
                }
                Kind::Date => {
                    for token in date::find_dates(&line.text, self.order) {
                        let value = AnswerValue::Date(DateValue { iso: token.iso, original: token.original.clone() });
                        let score = view.keyword_score + label;
                        out.push(base(value, token.original, token.start, token.end, score, label, true, 0.0));
                    }
                }
                Kind::Email | Kind::Iban | Kind::Url => {
                    let tokens: Vec<PatternToken> = match self.kind {
                        Kind::Email => pattern::find_emails(&line.text),
                        Kind::Iban => pattern::find_ibans(&line.text),
                        _ => pattern::find_urls(&line.text),
                    };
                    for token in tokens {
                        let text = line.text[token.start..token.end].to_owned();
                        let value = AnswerValue::Text(token.value);
                        out.push(base(value, text, token.start, token.end, view.keyword_score, 0.0, true, 0.0));
                    }
                }
                Kind::Text | Kind::Boolean => {
                    if !view.salient_here {
                        continue;
                    }
                    if let Some(candidate) = self.text_candidate(rank, passage, &view, passage_ok) {
                        out.push(candidate);
                    }
                }
            }
        }
        (out, passage_matches)
    }

    fn text_candidate(
        &self,
        rank: usize,
        passage: &Passage,
        view: &LineView<'_>,
        passage_ok: bool,
    ) -> Option<Candidate> {
        let line = view.line;
        let coverage = self.keywords.salient_coverage(&view.own);
        let score = self.keywords.weight(&view.own) - 0.05 * rank as f64;
        let (value, line_end, quote) = if self.kind == Kind::Boolean {
            let norm = label_form(&line.text);
            (AnswerValue::Boolean(!has_any(&norm, NEGATIONS)), line.line_id, line.text.trim().to_owned())
        } else {
            let (label, rest) = line.text.split_once(':').unwrap_or(("", ""));
            let label_matches = !label.is_empty() && !self.keywords.matches(label).is_empty();
            let rest = rest.trim();
            match (label_matches, rest.is_empty(), view.below) {
                (true, false, _) => (AnswerValue::Text(rest.to_owned()), line.line_id, line.text.trim().to_owned()),
                (true, true, Some(below)) if !below.text.trim().is_empty() => (
                    AnswerValue::Text(below.text.trim().to_owned()),
                    below.line_id,
                    format!("{} {}", line.text.trim(), below.text.trim()),
                ),
                _ => (AnswerValue::Text(line.text.trim().to_owned()), line.line_id, line.text.trim().to_owned()),
            }
        };
        let text = match &value {
            AnswerValue::Text(t) => t.clone(),
            _ => line.text.trim().to_owned(),
        };
        Some(Candidate {
            rank,
            line_start: line.line_id,
            line_end,
            page: passage.page,
            quote,
            key: text_key(&value),
            value,
            text,
            score,
            supported_here: true,
            eligible: passage_ok,
            coverage,
            strong: false,
            magnitude: 0.0,
        })
    }

    fn confidence(&self, best: &Candidate, conflicting: bool) -> f64 {
        let c = best.coverage;
        let raw = match self.kind {
            Kind::Text => 0.2 + 0.6 * c,
            Kind::Boolean => 0.1 + 0.5 * c,
            _ => 0.4 + 0.4 * c + if best.strong { 0.2 } else { 0.0 },
        };
        let raw = if conflicting { raw * 0.8 } else { raw };
        (raw.clamp(0.0, 1.0) * 100.0).round() / 100.0
    }

    /// Orders eligible candidates best first.
    fn rank(&self, candidates: &[Candidate]) -> Vec<Candidate> {
        let mut eligible: Vec<Candidate> = candidates.iter().filter(|c| c.eligible).cloned().collect();
        let prefer_large = self.kind == Kind::Amount && self.total_question;
        eligible.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(
                    || if prefer_large { b.magnitude.total_cmp(&a.magnitude) } else { std::cmp::Ordering::Equal },
                )
                .then_with(|| a.rank.cmp(&b.rank))
                .then_with(|| a.line_start.cmp(&b.line_start))
        });
        eligible
    }
}

fn text_key(value: &AnswerValue) -> String {
    match value {
        AnswerValue::Amount(a) => format!("{}|{:?}|{:?}", a.value, a.currency, a.unit),
        AnswerValue::Date(d) => d.iso.clone(),
        AnswerValue::Boolean(b) => b.to_string(),
        AnswerValue::Text(t) => docintel_schema::text::squash(t),
        AnswerValue::Table(t) => format!("{:?}", t.rows()),
    }
}

fn item_of(candidate: &Candidate) -> Item<AnswerValue> {
    Item {
        value: candidate.value.clone(),
        text: Some(candidate.text.clone()),
        spans: vec![Span {
            line_start: candidate.line_start,
            line_end: candidate.line_end,
            page: candidate.page,
            quote: candidate.quote.clone(),
        }],
    }
}

fn passage_label(p: &Passage) -> String {
    format!("p{} l{}-{}", p.page, p.line_start, p.line_end)
}

/// What an examination of passages produced.
struct Selection {
    items: Vec<Item<AnswerValue>>,
    best: Option<Candidate>,
    conflicting: bool,
}

impl Context<'_> {
    fn select(&self, candidates: &[Candidate]) -> Selection {
        let ranked = self.rank(candidates);
        let Some(best) = ranked.first().cloned() else {
            return Selection { items: Vec::new(), best: None, conflicting: false };
        };
        if self.question.answer_shape == AnswerShape::Listing {
            let any_supported = ranked.iter().any(|c| c.supported_here);
            let mut keep: Vec<&Candidate> = ranked.iter().filter(|c| c.supported_here || !any_supported).collect();
            keep.sort_by_key(|c| (c.rank, c.line_start, c.line_end));
            let mut seen = BTreeSet::new();
            let items = keep.into_iter().filter(|c| seen.insert(c.key.clone())).map(item_of).collect();
            return Selection { items, best: Some(best), conflicting: false };
        }
        let conflicting = ranked.iter().skip(1).any(|c| c.score >= best.score - 1e-9 && c.key != best.key);
        Selection { items: vec![item_of(&best)], best: Some(best), conflicting }
    }
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
        let n_lines = document.lines.len();
        for (index, p) in passages.iter().enumerate() {
            if p.line_start == 0 || p.line_start > p.line_end || p.line_end as usize > n_lines {
                return Err(GenerateError::PassageOutOfDocument {
                    index,
                    line_start: p.line_start,
                    line_end: p.line_end,
                    n_lines,
                });
            }
        }
        let ctx = Context::new(question, document);
        let sequential = question.chunk_strategy == ChunkStrategy::Sequential;
        let mut shown: Vec<Passage> = Vec::new();
        let mut candidates: Vec<Candidate> = Vec::new();
        let mut keyword_pages: Vec<(usize, u32)> = Vec::new();
        let mut selection = Selection { items: Vec::new(), best: None, conflicting: false };
        for (rank, passage) in passages.iter().enumerate() {
            shown.push(passage.clone());
            let (found, matched) = ctx.candidates(rank, passage);
            for k in matched {
                if !keyword_pages.contains(&(k, passage.page)) {
                    keyword_pages.push((k, passage.page));
                }
            }
            let mut best_here = ctx.rank(&found);
            best_here.truncate(3);
            trace.record(TraceEvent {
                brick: "generate".to_owned(),
                step: "candidate".to_owned(),
                detail: json!({
                    "passage": passage_label(passage),
                    "rank": rank,
                    "looking_for": ctx.kind.describe(),
                    "candidates": found.len(),
                    "eligible": found.iter().filter(|c| c.eligible).count(),
                    "best": best_here.iter().map(|c| json!({
                        "text": c.text,
                        "line": c.line_end,
                        "score": (c.score * 100.0).round() / 100.0,
                    })).collect::<Vec<_>>(),
                }),
            });
            candidates.extend(found);
            if sequential {
                selection = ctx.select(&candidates);
                if !selection.items.is_empty() {
                    break;
                }
            }
        }
        if !sequential {
            selection = ctx.select(&candidates);
        }
        let found = !selection.items.is_empty();
        let exit = if found { "sufficient" } else { "exhausted" };
        let iterations = if sequential { shown.len() as u32 } else { u32::from(!passages.is_empty()) };

        let mut keywords_found: Vec<String> = Vec::new();
        for (k, _) in &keyword_pages {
            let original = &ctx.keywords.keywords[*k].original;
            if !keywords_found.contains(original) {
                keywords_found.push(original.clone());
            }
        }
        let feedback = match &selection.best {
            Some(best) if found => {
                let mut warnings = Vec::new();
                if let AnswerValue::Amount(a) = &best.value {
                    if a.currency.is_none() {
                        warnings.push("no currency stated on or near the amount".to_owned());
                    }
                    if let (Some(want), Some(got)) = (&ctx.currency_preference, &a.currency)
                        && want != got
                    {
                        warnings
                            .push(format!("the question asks for {want}; the document states {got} (not converted)"));
                    }
                }
                if selection.conflicting {
                    warnings.push("other passages give a different value with the same support".to_owned());
                }
                AnswerFeedback {
                    answer_found: true,
                    complete_answer_found: true,
                    confidence: ctx.confidence(best, selection.conflicting),
                    warnings,
                    keywords_found,
                    llm_discovered_keywords: Vec::new(),
                    conflicting_evidence: selection.conflicting,
                    context_structured: true,
                    suggested_clarification: None,
                }
            }
            _ => {
                let mut feedback =
                    AnswerFeedback::not_found(not_found_warning(&ctx, &shown, &candidates, &keyword_pages));
                feedback.keywords_found = keywords_found;
                feedback.suggested_clarification = question.suggested_clarification.clone();
                feedback
            }
        };
        let answer = Answer {
            answer_shape: question.answer_shape,
            answer_type: question.answer_type.clone(),
            items: selection.items,
            extraction_method: ExtractionMethod::Extractive,
            feedback,
        };
        Ok(Generation {
            answer,
            strategy_executed: if sequential { "sequential" } else { "combined" }.to_owned(),
            exit: exit.to_owned(),
            iterations,
            passages_shown: shown,
            fragments_applied: Vec::new(),
            template_version: EXTRACTIVE_VERSION.to_owned(),
            model: None,
            usage: Usage::default(),
        })
    }

    fn name(&self) -> String {
        EXTRACTIVE_VERSION.to_owned()
    }
}

fn not_found_warning(
    ctx: &Context<'_>,
    shown: &[Passage],
    candidates: &[Candidate],
    keyword_pages: &[(usize, u32)],
) -> String {
    if shown.is_empty() {
        return format!("no passages to read; no {} found", ctx.kind.describe());
    }
    let mut warning = format!("no {} found in {} passage(s)", ctx.kind.describe(), shown.len());
    if !candidates.is_empty() && matches!(ctx.kind, Kind::Amount | Kind::Date | Kind::Email | Kind::Iban | Kind::Url) {
        let seen: Vec<&str> = candidates.iter().take(3).map(|c| c.text.as_str()).collect();
        warning.push_str(&format!(
            " on a line matching the question ({} {} value(s) seen elsewhere, e.g. {})",
            candidates.len(),
            ctx.kind.describe(),
            seen.join(", ")
        ));
    }
    let mut found: Vec<String> = Vec::new();
    for (k, page) in keyword_pages {
        found.push(format!("'{}' on p.{page}", ctx.keywords.keywords[*k].original));
    }
    let missing: Vec<String> = ctx
        .keywords
        .keywords
        .iter()
        .enumerate()
        .filter(|(i, k)| k.salient && !keyword_pages.iter().any(|(j, _)| j == i))
        .map(|(_, k)| format!("'{}'", k.original))
        .collect();
    if !found.is_empty() {
        warning.push_str(&format!("; keywords {} found", found.join(", ")));
    }
    if !missing.is_empty() {
        warning.push_str(&format!("; {} not found", missing.join(", ")));
    }
    warning
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{doc, doc_in, page_passages, passage};
    use crate::verify_citations;
    use docintel_schema::Keyword;

    const AWS: &[(&str, u32)] = &[
        ("All charges and prices are in US Dollars", 1),
        ("Amazon Web Services Invoice", 1),
        ("Invoice Number: 42183017", 1),
        ("Invoice Date: August 3 , 2014", 1),
        ("TOTAL AMOUNT DUE ON August 3 , 2014 $4.11", 1),
        ("This invoice is for the billing period July 1 - July 31 , 2014", 1),
        ("AWS Service Charges $4.11", 1),
        ("Credits $0.00", 1),
        ("Tax * $0.00", 1),
        ("Total for this invoice $4.11", 1),
        ("Account number:", 1),
        ("296664039561", 1),
    ];
    const FLIPKART: &[(&str, u32)] = &[
        ("Order ID: OD304175096047380001", 1),
        (" 15-10-2015Order Date:", 1),
        ("  20-10-2015Invoice Date:", 1),
        ("Price is inclusive of Promotional Discount of Rs -40.00,", 1),
        (" 1 278.61 14.50%", 1),
        ("CST 40.39 319.00", 1),
        ("Total 1 278.61 40.39 319.00", 1),
        ("Grand Total  319.00", 1),
    ];
    const NETPRESSE: &[(&str, u32)] = &[
        ("  Facture n° 2022089083 ", 1),
        ("    Date : 28/11/2022  ", 1),
        ("  le-tout-lyon.fr du 06/12/2022 45,93 €", 1),
        ("   Justificatif PDF 1 0,75 € 0,75 €", 1),
        ("  Total HT : 46,68 €", 1),
        ("  TVA 20% : 9,34 €", 1),
        ("  Total TTC : 56,02 €", 1),
        ("IBAN : FR76 10107 00245 00617052317 39 - BIC : BREDFRPP", 1),
    ];
    const SAECO: &[(&str, u32)] = &[
        ("Prijzen zijn inclusief BTW Factuur totaal EUR 49,99", 1),
        ("Kopie factuur", 1),
        (" 8-9-2022", 1),
        ("Klant Order FactuurFactuur datum", 1),
        (" Vervaldatum", 1),
        ("22-9-2022", 1),
        ("21 % 41,31 8,68 49,99", 1),
        ("Mail: verkoop-nl@saeco.com", 1),
    ];

    fn question(text: &str, answer_type: &str, keywords: &[&str]) -> ParsedQuestion {
        let mut q = ParsedQuestion::unparsed(text, "test");
        q.answer_type = answer_type.to_owned();
        q.keywords = keywords.iter().map(|k| Keyword::direct(*k)).collect();
        q
    }

    fn run(q: &ParsedQuestion, document: &ParsedDocument, passages: &[Passage]) -> Generation {
        let mut trace: Vec<TraceEvent> = Vec::new();
        let generation = ExtractiveGenerator::new().generate(q, document, passages, &mut trace).expect("generate");
        assert_eq!(trace.len(), generation.passages_shown.len());
        let problems = verify_citations(&generation.answer, document, &generation.passages_shown);
        assert!(problems.is_empty(), "{problems:?}");
        generation
    }

    /// Runs `q` over the whole document (one passage per page) and compares
    /// the first item's value (rendered) with `expect` (`None` = not found).
    fn check(rows: &[(&str, u32)], q: &ParsedQuestion, expect: Option<&str>) {
        let document = doc(rows);
        let generation = run(q, &document, &page_passages(&document));
        let answer = &generation.answer;
        let got = answer.items.first().map(|item| match &item.value {
            AnswerValue::Amount(a) => {
                format!(
                    "{} {}{}",
                    a.value,
                    a.currency.as_deref().unwrap_or("-"),
                    a.unit.as_ref().map_or(String::new(), |u| format!(" {u}"))
                )
            }
            AnswerValue::Date(d) => format!("{} ({})", d.iso, d.original),
            AnswerValue::Boolean(b) => b.to_string(),
            AnswerValue::Text(t) => t.clone(),
            AnswerValue::Table(_) => "table".to_owned(),
        });
        assert_eq!(got.as_deref(), expect, "{}: {:?}", q.original_question, answer.feedback.warnings);
        assert_eq!(answer.feedback.answer_found, expect.is_some());
        if expect.is_none() {
            assert_eq!(answer.feedback.confidence, 0.0);
            assert!(!answer.feedback.warnings.is_empty());
        }
    }

    fn total() -> ParsedQuestion {
        question("What is the total amount?", "amount", &["total", "amount"])
    }

    #[test]
    fn invoice_totals() {
        check(AWS, &total(), Some("4.11 USD"));
        check(FLIPKART, &total(), Some("319 INR"));
        check(NETPRESSE, &total(), Some("56.02 EUR"));
        check(SAECO, &total(), Some("49.99 EUR"));
        check(SAECO, &question("Hoeveel moet ik betalen?", "amount", &[]), Some("49.99 EUR"));
    }

    #[test]
    fn subtotal_and_tax_questions() {
        let rows = &[("Subtotal $10.00", 1), ("Tax $1.00", 1), ("Total $11.00", 1)];
        check(rows, &total(), Some("11 USD"));
        check(rows, &question("What is the subtotal?", "amount", &["subtotal"]), Some("10 USD"));
        check(rows, &question("How much tax?", "amount", &["tax"]), Some("1 USD"));
        check(NETPRESSE, &question("Montant HT ?", "amount", &["montant", "ht"]), Some("46.68 EUR"));
    }

    #[test]
    fn amount_currency_and_scale_from_context() {
        let rows = &[("Currency: EUR", 1), ("Grand total 1.234,56", 1)];
        check(rows, &total(), Some("1234.56 EUR"));
        let rows = &[("(in millions)", 1), ("Total revenue $1,234.56", 1)];
        check(rows, &question("Total revenue?", "amount", &["revenue"]), Some("1234.56 USD million"));
        check(&[("Total 12.00", 1)], &total(), Some("12 -"));
        let mut q = total();
        q.generation.format_constraints.insert("currency".to_owned(), "EUR".to_owned());
        check(&[("Total $5.00", 1), ("Total 4,00 €", 1)], &q, Some("4 EUR"));
    }

    #[test]
    fn invoice_dates() {
        let q = question("What is the invoice date?", "date", &["invoice date", "date"]);
        check(AWS, &q, Some("2014-08-03 (August 3 , 2014)"));
        check(FLIPKART, &q, Some("2015-10-20 (20-10-2015)"));
        check(NETPRESSE, &q, Some("2022-11-28 (28/11/2022)"));
        check(
            SAECO,
            &question("Wat is de factuurdatum?", "date", &["factuurdatum", "datum"]),
            Some("2022-09-08 (8-9-2022)"),
        );
        check(SAECO, &question("When is payment due?", "date", &["due", "payment"]), Some("2022-09-22 (22-9-2022)"));
        check(FLIPKART, &question("What is the order date?", "date", &["order date"]), Some("2015-10-15 (15-10-2015)"));
    }

    #[test]
    fn ambiguous_dates_follow_the_document() {
        let q = question("What is the date?", "date", &["date"]);
        check(&[("Date: 08/03/2014", 1), ("Total $3.00", 1)], &q, Some("2014-08-03 (08/03/2014)"));
        check(&[("Date: 08/03/2014", 1), ("Total 3,00 €", 1)], &q, Some("2014-03-08 (08/03/2014)"));
        let document = doc_in(&[("Date: 08/03/2014", 1), ("Total $3.00", 1)], &["fr"]);
        let generation = run(&q, &document, &page_passages(&document));
        assert_eq!(
            generation.answer.items[0].value,
            AnswerValue::Date(DateValue { iso: "2014-03-08".into(), original: "08/03/2014".into() })
        );
    }

    #[test]
    fn patterns_and_text() {
        check(SAECO, &question("What is the e-mail address?", "email", &["mail"]), Some("verkoop-nl@saeco.com"));
        check(NETPRESSE, &question("IBAN?", "iban", &["iban"]), Some("FR7610107002450061705231739"));
        check(AWS, &question("What is the invoice number?", "text", &["invoice number"]), Some("42183017"));
        check(AWS, &question("What is the account number?", "text", &["account number"]), Some("296664039561"));
    }

    #[test]
    fn booleans() {
        let rows = &[("** This is not a VAT invoice", 1), ("Prices include shipping", 1)];
        check(rows, &question("Is this a VAT invoice?", "boolean", &["vat invoice"]), Some("false"));
        check(rows, &question("Do prices include shipping?", "boolean", &["shipping"]), Some("true"));
        check(rows, &question("Is there a warranty?", "boolean", &["warranty"]), None);
    }

    #[test]
    fn honest_not_found() {
        let dog = question("What is the name of the CEO's dog?", "text", &["name", "ceo", "dog"]);
        check(AWS, &dog, None);
        check(AWS, &question("What is the name of the CEO's dog?", "text", &[]), None);
        check(AWS, &question("What is the CEO's salary?", "amount", &["ceo", "salary"]), None);
        check(NETPRESSE, &question("What is the delivery date?", "date", &["delivery date"]), None);
        check(&[("Nothing here", 1)], &total(), None);
        let document = doc(AWS);
        let generation = run(&dog, &document, &page_passages(&document));
        let warning = &generation.answer.feedback.warnings[0];
        assert!(warning.contains("'ceo'") && warning.contains("1 passage"), "{warning}");
        assert_eq!(generation.exit, "exhausted");
    }

    #[test]
    fn listings_dedupe() {
        let mut q = question("List the charges", "amount", &["charges"]);
        q.answer_shape = AnswerShape::Listing;
        let document = doc(&[("Charges $0.01", 1), ("VAT $0.00", 1), ("Charges $1.87", 1), ("Charges $0.01", 1)]);
        let generation = run(&q, &document, &page_passages(&document));
        assert_eq!(generation.answer.items.len(), 2);
        assert!(generation.answer.feedback.complete_answer_found);
    }

    #[test]
    fn sequential_stops_at_the_first_passage_that_answers() {
        let document = doc(&[("Intro text", 1), ("Total $9.00", 2), ("Total $9.00", 3)]);
        let passages = [passage(1, 1, 1), passage(2, 2, 2), passage(3, 3, 3)];
        let mut q = total();
        q.chunk_strategy = ChunkStrategy::Sequential;
        let generation = run(&q, &document, &passages);
        assert_eq!(generation.passages_shown.len(), 2);
        assert_eq!((generation.exit.as_str(), generation.iterations), ("sufficient", 2));
        assert_eq!(generation.strategy_executed, "sequential");
        q.chunk_strategy = ChunkStrategy::Combined;
        let generation = run(&q, &document, &passages);
        assert_eq!(generation.passages_shown.len(), 3);
        assert_eq!((generation.exit.as_str(), generation.iterations), ("sufficient", 1));
        assert!(!generation.answer.feedback.conflicting_evidence);
        assert_eq!(generation.answer.feedback.keywords_found, ["total"]);
    }

    #[test]
    fn bad_passages_are_an_error() {
        let document = doc(&[("a", 1)]);
        let result = ExtractiveGenerator::new().generate(&total(), &document, &[passage(1, 9, 1)], &mut Vec::new());
        assert!(matches!(result, Err(GenerateError::PassageOutOfDocument { index: 0, .. })));
    }

    #[test]
    fn generation_metadata() {
        let document = doc(AWS);
        let generation = run(&total(), &document, &page_passages(&document));
        assert_eq!(ExtractiveGenerator::new().name(), "extractive/0.1");
        assert_eq!(generation.template_version, "extractive/0.1");
        assert_eq!(generation.model, None);
        assert_eq!(generation.usage, Usage::default());
        assert_eq!(generation.answer.extraction_method, ExtractionMethod::Extractive);
        let confidence = generation.answer.feedback.confidence;
        assert!((0.5..=1.0).contains(&confidence), "{confidence}");
    }
}
