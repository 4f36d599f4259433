//! The extractive generator: typed values read from the passage lines by rule,
//! no model.
//!
//! For every passage examined it lists *candidates* (a typed value, the line it
//! was read on, a score) and keeps the best one (or all, for listings).
//!
//! **Rows.** Lines are read on the document's row view
//! ([`docintel_schema::RowView`]): the pieces the parser split a printed line
//! into at its tab-stop gaps (`Total:` and `$12.34`, `AC-2` and its title) are
//! one line again, cut at the passage bounds; every span is mapped back to the
//! line table, each run whole.
//!
//! **Label lines.** A value is often labelled by another line: the line
//! before it in reading order, its *row label* (left on the same visual row)
//! or the *label above* it in its column (see [`crate::layout`]: line boxes,
//! at most three line heights away). A label alone on its line followed by a
//! value alone on its line counts fully; a looser link counts half. A column
//! *header* reached across value cells (a table column) only adds tax cues
//! (`HT`, `TTC`, `TVA`), never keyword support, and may lie outside the
//! passage because it is never cited; every other label line must be inside
//! the passage, and the span then runs from the label to the value.
//!
//! **Scoring.** A candidate scores the weights of the question keywords on its
//! line plus those on its label lines (times their factor, each keyword once),
//! plus a type-specific *label* bonus, the strongest positive cue of its line
//! and label lines plus the strongest negative one:
//! - amounts, for "total" questions: +2.5 on final-amount labels (`grand
//!   total`, `amount due`, `à payer`, `te betalen`, `total TTC`...), +2 on other
//!   total labels (`total`, `totaal`, `TTC`, `montant`); +0.5 on tax-included
//!   markers (`TTC`, `incl. VAT`, `incl. BTW`, `brutto`, `to pay`...); −1.5 on
//!   sub-total or untaxed markers (`subtotal`, `HT`, `excl. VAT`, `netto`) and
//!   on the tax itself (`TVA`, `VAT`, `MwSt`) unless the question asks for those;
//!   +0.3 when the currency is written next to the number, +0.5 when it is the
//!   currency the question asks for, +0.1 for the last amount of its line;
//!   ties go to the largest amount for total questions;
//! - dates: +1.5 on issue-date labels (`date`, `invoice date`, `factuurdatum`...),
//!   −2 on due/order/delivery/period labels, or +2.5 when the question asks
//!   for that kind of date;
//! - every candidate loses 0.05 per rank of its passage.
//!
//! Question keywords of every source count by their weight; expert-dictionary
//! keywords of one concept (`semantic_group`) are alternatives, so matching
//! one of them covers the concept (see [`crate::keywords`]).
//!
//! **Sequential reading** stops at the first passage whose best candidate is
//! *decisive* (amounts and dates: supported and labelled with a bonus of at
//! least 1; other kinds: any eligible candidate); otherwise every passage is
//! read and the best candidate overall wins.
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
    Generator, Item, Line, ParsedDocument, ParsedQuestion, Passage, RowView, Span, TraceEvent, TraceSink, Usage,
};
use serde_json::json;

use crate::extract::amount::{self, MoneyToken};
use crate::extract::date::{self, DayMonthOrder};
use crate::extract::pattern::{self, PatternToken};
use crate::keywords::{KeywordSet, has_any, label_form};
use crate::layout::PageLayout;
use crate::statement;

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

/// Labels of the amount due. The ones in [`STRONG_TOTAL_LABELS`] name the
/// final amount (they beat a plain `total` row of a table).
const TOTAL_LABELS: &[&str] = &[
    "total",
    "totaal",
    "totale",
    "gesamt",
    "gesamtbetrag",
    "summe",
    "ttc",
    "montant",
    "importe total",
    "endbetrag",
    "rechnungsbetrag",
];
const STRONG_TOTAL_LABELS: &[&str] = &[
    "grand total",
    "total amount",
    "invoice total",
    "amount due",
    "balance due",
    "total due",
    "amount payable",
    "total to pay",
    "to pay",
    "à payer",
    "a payer",
    "net à payer",
    "net a payer",
    "montant total",
    "total ttc",
    "te betalen",
    "totaalbedrag",
    "factuur totaal",
    "factuurtotaal",
    "zu zahlen",
    "gesamtbetrag",
    "gesamtsumme",
    "rechnungsbetrag",
    "endbetrag",
    "total a pagar",
    "importe total",
];
/// Tax-included markers: for a total question the amount due is the taxed one.
const TAXED_LABELS: &[&str] = &[
    "ttc",
    "toutes taxes comprises",
    "incl. vat",
    "incl vat",
    "including vat",
    "inc. vat",
    "vat included",
    "incl. tax",
    "including tax",
    "tax included",
    "incl. btw",
    "incl btw",
    "inclusief btw",
    "inkl. mwst",
    "inkl mwst",
    "incl. mwst",
    "brutto",
    "bruto",
    "to pay",
    "à payer",
    "a payer",
    "te betalen",
    "zu zahlen",
];
/// The tax itself (a `TVA` column, a `Tax` row): not the amount due, unless
/// the question asks for the tax.
const TAX_LABELS: &[&str] = &[
    "tax",
    "taxes",
    "vat",
    "tva",
    "btw",
    "mwst",
    "mwst.",
    "ust",
    "umsatzsteuer",
    "iva",
    "gst",
    "cst",
    "igst",
    "cgst",
    "sgst",
];
/// Sub-totals and untaxed markers.
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
    "excl.",
    "excl. vat",
    "excl. btw",
    "excluding",
    "exclusief",
    "exkl",
    "exkl.",
    "ohne mwst",
    "untaxed",
    "before tax",
    "net amount",
    "netto",
    "nettobetrag",
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

/// Words a value cell may carry besides its value (`29.99 € TTC`, `1 PCS`).
const VALUE_WORDS: &[&str] =
    &["eur", "euro", "euros", "usd", "inr", "gbp", "chf", "pln", "rs", "ttc", "ht", "pcs", "stk", "st", "x"];

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
    /// The question asks for the tax (`VAT`, `TVA`...).
    tax_question: bool,
    date_intent: DateKind,
    currency_preference: Option<String>,
    /// Running headers and footers (the same line on several pages): never
    /// a text answer, whatever keywords they carry.
    running: BTreeSet<u64>,
    /// Identifiers whose heading the question asks for (layout hint
    /// `heading`: "the title of AC-2"), lower-cased: the line one of them
    /// opens is the answer.
    heading_of: Vec<String>,
    /// The first year the question names (`FY2018` searches `2018`): the
    /// column read on a financial statement.
    year: Option<u32>,
    /// Expert-dictionary groups naming a part the question points to (a
    /// group with one of its titles, `cash_flow_statement`): their words say
    /// which statement, not which row of it.
    part_groups: Vec<String>,
}

impl<'a> Context<'a> {
    fn new(question: &'a ParsedQuestion, document: &'a ParsedDocument) -> Context<'a> {
        let keywords = KeywordSet::from_question(question);
        let qtext = label_form(&question.corrected_question);
        let kind = Kind::of(&question.answer_type);
        let sub_question = has_any(&qtext, SUB_LABELS);
        let tax_question = has_any(&qtext, TAX_LABELS);
        // Expert-dictionary keywords are alternative wordings of a concept:
        // the question's own words say what kind of amount it asks for, and a
        // `total` concept makes it a total question.
        let salient_amountish = keywords
            .ungrouped_salient_norms()
            .all(|k| has_any(k, AMOUNTISH) || has_any(k, TOTAL_LABELS) || has_any(k, STRONG_TOTAL_LABELS));
        let total_concept = keywords.groups().any(|g| g.split('_').any(|w| w == "total"));
        let total_question = has_any(&qtext, TOTAL_LABELS)
            || has_any(&qtext, STRONG_TOTAL_LABELS)
            || (!sub_question && (salient_amountish || total_concept));
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
            tax_question,
            date_intent,
            currency_preference,
            running: if matches!(kind, Kind::Text | Kind::Boolean) { running_lines(document) } else { BTreeSet::new() },
            heading_of: if kind == Kind::Text && question.structural_hints.layout_hint.as_deref() == Some("heading") {
                question
                    .keywords
                    .iter()
                    .filter(|k| k.source == docintel_schema::KeywordSource::Anchor && !k.is_regex)
                    .map(|k| k.text.to_lowercase())
                    .collect()
            } else {
                Vec::new()
            },
            year: question
                .keywords
                .iter()
                .filter(|k| k.source == docintel_schema::KeywordSource::Direct && k.text.len() == 4)
                .find_map(|k| k.text.parse::<u32>().ok().filter(|y| (1950..2100).contains(y))),
            part_groups: {
                let titles: Vec<String> =
                    question.retrieval.scope.sections.iter().flat_map(|s| s.split(" | ")).map(label_form).collect();
                let mut groups: Vec<String> = question
                    .keywords
                    .iter()
                    .filter(|k| titles.contains(&label_form(&k.text)))
                    .filter_map(|k| k.semantic_group.clone())
                    .collect();
                groups.dedup();
                groups
            },
        }
    }
}

/// The lines of `page` (the line table is in page order).
fn page_lines(document: &ParsedDocument, page: u32) -> &[Line] {
    let start = document.lines.partition_point(|l| l.page < page);
    let end = document.lines.partition_point(|l| l.page <= page);
    &document.lines[start..end.max(start)]
}

/// Score added to the statement cell in the question's year column on a row
/// labelled by the question's words (taken from the row's other years):
/// above any sentence that mentions an amount, as the question named the
/// statement.
const STATEMENT_BONUS: f64 = 10.0;
/// Up to this much more for a row label made only of the question's words.
const STATEMENT_LABEL_WEIGHT: f64 = 2.0;

/// Score added to the line an asked-for identifier opens (see
/// [`Context::heading_of`]): above any keyword evidence.
const HEADING_BONUS: f64 = 100.0;

/// A running header or footer is at most this many visible characters.
const RUNNING_MAX_CHARS: usize = 160;

/// A line repeated on at least this many pages is a running header/footer.
const RUNNING_MIN_PAGES: usize = 3;

/// The keys ([`running_key`]) of lines found on [`RUNNING_MIN_PAGES`] or
/// more distinct pages.
fn running_lines(document: &ParsedDocument) -> BTreeSet<u64> {
    let mut pages: std::collections::HashMap<u64, (u32, usize)> = std::collections::HashMap::new();
    for line in &document.lines {
        let Some(key) = running_key(&line.text) else { continue };
        let entry = pages.entry(key).or_insert((0, 0));
        if entry.0 != line.page {
            entry.0 = line.page;
            entry.1 += 1;
        }
    }
    pages.into_iter().filter(|(_, (_, n))| *n >= RUNNING_MIN_PAGES).map(|(k, _)| k).collect()
}

/// A hash of the line with whitespace runs collapsed and letters lowercased,
/// computed without allocating (it runs on every line of the document for
/// every text question); `None` for lines of fewer than 4 visible characters.
fn running_key(text: &str) -> Option<u64> {
    // FNV-1a over the folded characters: this runs on every line of the
    // document for every text question, so it must be cheap; a line longer
    // than any running header stops early.
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut hash = OFFSET;
    let mut feed = |c: char| {
        for byte in (c as u32).to_le_bytes() {
            hash = (hash ^ u64::from(byte)).wrapping_mul(PRIME);
        }
    };
    let mut visible = 0usize;
    let mut pending_space = false;
    for c in text.trim().chars() {
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if pending_space {
            feed(' ');
            pending_space = false;
        }
        visible += 1;
        if visible > RUNNING_MAX_CHARS {
            return None;
        }
        if c.is_ascii() {
            feed(c.to_ascii_lowercase());
        } else {
            c.to_lowercase().for_each(&mut feed);
        }
    }
    (visible >= 4).then_some(hash)
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
    /// Labelled clearly enough to stop a sequential read.
    decisive: bool,
    /// For tie-breaks between amounts.
    magnitude: f64,
    key: String,
}

/// What one line offers to candidates: its keyword matches and label scores.
struct LineView<'d> {
    line: &'d Line,
    below: Option<&'d Line>,
    own: Vec<usize>,
    context: Vec<usize>,
    keyword_score: f64,
    salient_here: bool,
}

/// The span of a value read on `line` at `start..end`, with its label line
/// when it has one: `(line_start, line_end, quote)`. Adjacent lines are quoted
/// together (`Grand Total 319.00`); a label further away is covered by the
/// range and the quote keeps to the value's line, so it always verifies.
fn cite(line: &Line, label: Option<&Line>, start: usize, end: usize) -> (u32, u32, String) {
    let window = quote_window(&line.text, start, end);
    let Some(label) = label else { return (line.line_id, line.line_id, window) };
    let (lo, hi) = (label.line_id.min(line.line_id), label.line_id.max(line.line_id));
    let whole = window == line.text.trim();
    let quote = if hi - lo == 1 && whole && label.text.len() <= 300 {
        if label.line_id < line.line_id {
            format!("{} {}", label.text.trim(), window)
        } else {
            format!("{} {}", window, label.text.trim())
        }
    } else {
        window
    };
    (lo, hi, quote)
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

/// What a label says, split so that the strongest positive cue and the
/// strongest negative cue of several label lines combine (a `Total` row under
/// an `HT` column is an untaxed total).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct LabelScore {
    pos: f64,
    neg: f64,
}

impl LabelScore {
    fn value(self) -> f64 {
        self.pos + self.neg
    }

    fn scaled(self, factor: f64) -> LabelScore {
        LabelScore { pos: self.pos * factor, neg: self.neg * factor }
    }

    fn combine(self, other: LabelScore) -> LabelScore {
        LabelScore { pos: self.pos.max(other.pos), neg: self.neg.min(other.neg) }
    }
}

/// A line that may label a value line, and how much it counts.
#[derive(Debug, Clone, Copy)]
struct Source<'d> {
    line: &'d Line,
    /// 1 for a label the value clearly belongs to, 0.5 for a weaker link.
    factor: f64,
    /// A column header reached across value cells (possibly outside the
    /// passage): it only adds label cues (`TTC`, `HT`, `total`), never keyword
    /// support, and is never cited.
    header: bool,
}

impl Context<'_> {
    /// A column header (`header`) only says which kind of amount its column
    /// holds (taxed, untaxed, the tax): the row says whether it is a total.
    fn amount_label(&self, norm: &str, header: bool) -> LabelScore {
        let mut score = LabelScore::default();
        let strong = !header && has_any(norm, STRONG_TOTAL_LABELS);
        let total = strong || (!header && has_any(norm, TOTAL_LABELS));
        let sub = has_any(norm, SUB_LABELS);
        let taxed = has_any(norm, TAXED_LABELS);
        if self.total_question && total {
            score.pos += if strong { 2.5 } else { 2.0 };
        }
        if self.sub_question {
            if sub {
                score.pos += 2.0;
            }
            if taxed && !sub {
                score.neg -= 1.0;
            }
        } else if self.total_question {
            if sub {
                score.neg -= 1.5;
            }
            if taxed && !sub {
                score.pos += 0.5;
            }
            if !self.tax_question && !taxed && !sub && has_any(norm, TAX_LABELS) {
                score.neg -= 1.5;
            }
        }
        score
    }

    fn date_label(&self, norm: &str) -> LabelScore {
        let mut score = LabelScore::default();
        for kind in OTHER_DATE_KINDS {
            if has_any(norm, date_kind_labels(kind)) {
                if kind == self.date_intent {
                    score.pos += 2.5;
                } else {
                    score.neg -= 2.0;
                }
            }
        }
        if self.date_intent == DateKind::Issue && has_any(norm, ISSUE_LABELS) {
            score.pos += 1.5;
        }
        score
    }

    fn label_score(&self, text: &str) -> LabelScore {
        self.source_label(text, false)
    }

    fn source_label(&self, text: &str, header: bool) -> LabelScore {
        let norm = label_form(text);
        match self.kind {
            Kind::Amount => self.amount_label(&norm, header),
            Kind::Date => self.date_label(&norm),
            _ => LabelScore::default(),
        }
    }

    /// Values of the asked kind on a line, as byte ranges.
    fn value_ranges(&self, text: &str) -> Vec<(usize, usize)> {
        match self.kind {
            Kind::Amount => amount::find_amounts(text).into_iter().map(|t| (t.start, t.end)).collect(),
            Kind::Date => date::find_dates(text, self.order).into_iter().map(|t| (t.start, t.end)).collect(),
            _ => Vec::new(),
        }
    }

    /// A line holding only values (numbers, amounts, dates, currency codes):
    /// a table cell, never a label.
    fn is_value_cell(&self, line: &Line) -> bool {
        let text = &line.text;
        if !text.chars().any(|c| c.is_ascii_digit()) {
            return false;
        }
        let mut ranges: Vec<(usize, usize)> =
            amount::find_amounts(text).into_iter().map(|t| (t.start, t.end)).collect();
        ranges.extend(date::find_dates(text, self.order).into_iter().map(|t| (t.start, t.end)));
        let mut rest = String::with_capacity(text.len());
        for (i, c) in text.char_indices() {
            rest.push(if ranges.iter().any(|&(a, b)| a <= i && i < b) { ' ' } else { c });
        }
        label_form(&rest)
            .split(|c: char| !c.is_alphabetic())
            .filter(|w| w.chars().count() >= 2)
            .all(|w| VALUE_WORDS.contains(&w))
    }

    /// A line with words and no value of the asked kind: a label on its own.
    fn is_label_only(&self, line: &Line) -> bool {
        self.value_ranges(&line.text).is_empty()
            && label_form(&line.text).split(|c: char| !c.is_alphabetic()).any(|w| w.chars().count() >= 2)
    }

    /// The lines that may label `line` (see the module docs): the line
    /// before it in reading order, its row label and the label above it in
    /// its column (both by layout), at most one source per line.
    fn sources<'d>(&self, lines: &'d [Line], i: usize, layout: &PageLayout<'d>, passage: &Passage) -> Vec<Source<'d>> {
        let line = &lines[i];
        let value_only = self.is_value_cell(line);
        let mut sources: Vec<Source<'d>> = Vec::new();
        let mut add = |source: Source<'d>| match sources.iter_mut().find(|s| s.line.line_id == source.line.line_id) {
            Some(s) => {
                s.factor = s.factor.max(source.factor);
                s.header &= source.header;
            }
            None => sources.push(source),
        };
        if let Some(prev) = i.checked_sub(1).map(|j| &lines[j]) {
            let factor = if value_only && self.is_label_only(prev) { 1.0 } else { 0.5 };
            add(Source { line: prev, factor, header: false });
        }
        let cell = |l: &Line| self.is_value_cell(l);
        if let Some(row) = layout.row_label(line, cell)
            && passage.contains(row.line_id)
        {
            add(Source { line: row, factor: 1.0, header: false });
        }
        if let Some(above) = layout.label_above(line, cell) {
            if above.header {
                add(Source { line: above.line, factor: 1.0, header: true });
            } else if passage.contains(above.line.line_id) && self.is_label_only(above.line) {
                add(Source { line: above.line, factor: if value_only { 1.0 } else { 0.5 }, header: false });
            }
        }
        sources
    }

    /// All candidates of one passage.
    fn candidates(&self, rank: usize, passage: &Passage) -> (Vec<Candidate>, Vec<usize>) {
        let lines = self.document.line_range(passage.line_start, passage.line_end);
        let page_lines = page_lines(self.document, passage.page);
        let layout = PageLayout::new(page_lines, passage.page);
        let matches: Vec<Vec<usize>> = lines.iter().map(|l| self.keywords.matches(&l.text)).collect();
        let matches_of = |id: u32| -> &[usize] {
            match id.checked_sub(passage.line_start) {
                Some(j) if (j as usize) < matches.len() => &matches[j as usize],
                _ => &[],
            }
        };
        let mut passage_matches: Vec<usize> = matches.iter().flatten().copied().collect();
        passage_matches.sort_unstable();
        passage_matches.dedup();
        let passage_coverage = self.keywords.salient_coverage(&passage_matches);
        let has_salient = self.keywords.has_salient();
        let passage_ok = !has_salient || passage_coverage >= 0.5;
        let texts = || lines.iter().map(|l| l.text.as_str());
        let passage_currency = amount::dominant_currency(texts());
        let page_currency = amount::dominant_currency(page_lines.iter().map(|l| l.text.as_str()));
        let passage_scale = texts().find_map(amount::scale_cue);
        // A financial statement the question points to: figures on a grid
        // under a header row of years (see `statement`).
        let statement = (self.kind == Kind::Amount && !self.question.retrieval.scope.sections.is_empty())
            .then(|| statement::grid(page_lines))
            .flatten();
        let typed = matches!(self.kind, Kind::Amount | Kind::Date | Kind::Email | Kind::Iban | Kind::Url);
        let mut out = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let own = matches[i].clone();
            let sources = if typed { self.sources(lines, i, &layout, passage) } else { Vec::new() };
            // Keywords on label lines count with the label's factor (once each).
            let mut context = own.clone();
            let mut keyword_score = self.keywords.weight(&own);
            let mut label = self.label_score(&line.text);
            for source in &sources {
                label = label.combine(self.source_label(&source.line.text, source.header).scaled(source.factor));
            }
            let mut extra: Vec<(usize, f64)> = Vec::new();
            for source in sources.iter().filter(|s| !s.header) {
                for &k in matches_of(source.line.line_id) {
                    if own.contains(&k) {
                        continue;
                    }
                    match extra.iter_mut().find(|(j, _)| *j == k) {
                        Some((_, f)) => *f = f.max(source.factor),
                        None => extra.push((k, source.factor)),
                    }
                }
            }
            for (k, factor) in extra {
                keyword_score += factor * self.keywords.keywords[k].weight;
                context.push(k);
            }
            let salient = |ks: &[usize]| ks.iter().any(|&k| self.keywords.keywords[k].salient);
            let own_label = self.label_score(&line.text);
            // The label line to cite with the value, when the value's own line
            // says nothing: the source giving the most support.
            let cited_label = if own.is_empty() && own_label == LabelScore::default() {
                sources
                    .iter()
                    .filter(|s| !s.header && passage.contains(s.line.line_id))
                    .map(|s| {
                        let support =
                            self.keywords.weight(matches_of(s.line.line_id)) + self.label_score(&s.line.text).pos;
                        (s, s.factor * support)
                    })
                    .filter(|(_, support)| *support > 0.0)
                    .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.line.line_id.cmp(&a.0.line.line_id)))
                    .map(|(s, _)| s.line)
                    .or_else(|| i.checked_sub(1).map(|j| &lines[j]))
            } else {
                None
            };
            let view = LineView {
                line,
                below: lines.get(i + 1),
                keyword_score,
                salient_here: salient(&own) || (!has_salient && !own.is_empty()),
                context,
                own,
            };
            let context_salient = salient(&view.context) || (!has_salient && !view.context.is_empty());
            let coverage = self.keywords.salient_coverage(&view.context);
            let label_value = label.value();
            let base = |value, text: String, start, end, score: f64, strong: bool, magnitude| {
                let supported = context_salient || label_value > 0.0;
                let (line_start, line_end, quote) = cite(line, cited_label, start, end);
                Candidate {
                    rank,
                    line_start,
                    line_end,
                    page: passage.page,
                    quote,
                    key: text_key(&value),
                    value,
                    text,
                    score: score - 0.05 * rank as f64,
                    supported_here: view.salient_here || own_label.value() > 0.0,
                    eligible: supported || passage_ok,
                    coverage,
                    strong: strong && label_value >= 0.0 && (supported || label_value > 0.0),
                    decisive: supported && label_value >= 1.0,
                    magnitude,
                }
            };
            match self.kind {
                Kind::Amount => {
                    let dates = date::find_dates(&line.text, self.order);
                    let tokens: Vec<MoneyToken> = amount::find_amounts(&line.text)
                        .into_iter()
                        .filter(|t| !dates.iter().any(|d| t.start < d.end && d.start < t.end))
                        .collect();
                    let line_currency = amount::dominant_currency([line.text.as_str()]);
                    let n = tokens.len();
                    let first_figure = tokens.first().map_or(0, |t| t.start);
                    for (j, token) in tokens.into_iter().enumerate() {
                        let currency = token.currency.or(line_currency).or(passage_currency).or(page_currency);
                        // On a statement, a figure whose row label carries the
                        // question's words is read in the question's year
                        // column: that figure is the answer, the row's other
                        // years are not. Scored on its label alone, without
                        // the words naming the statement, which every row
                        // shares.
                        let statement_score = statement.as_ref().and_then(|grid| {
                            let year = if statement::own_label(line, first_figure).is_some() {
                                statement::year_by_order(grid, line, j)?
                            } else {
                                grid.year_at(line, statement::figure_x(line, token.start, token.end))?
                            };
                            let label = statement::label_of(&layout, line, token.start)?;
                            let (precision, weight) = self.row_label_support(&label)?;
                            Some(if year == grid.wanted(self.year) {
                                STATEMENT_BONUS + STATEMENT_LABEL_WEIGHT * precision + weight
                            } else {
                                weight - STATEMENT_BONUS
                            })
                        });
                        // (The invoice label cues — "total", "amount due" —
                        // do not apply to a statement's rows.)
                        let mut score = statement_score.unwrap_or(view.keyword_score + label_value);
                        if token.currency.is_some() {
                            score += 0.3;
                        }
                        if currency.is_some() && currency.map(str::to_owned) == self.currency_preference {
                            score += 0.5;
                        }
                        if j + 1 == n {
                            score += 0.1;
                        }
                        // A statement cell reads as printed: negative in
                        // parentheses, in the statement's scale.
                        let (value, unit) = match &statement {
                            Some(_) if statement_score.is_some_and(|s| s > 0.0) => (
                                if statement::parenthesized(&line.text, token.start, token.end) {
                                    -token.value.abs()
                                } else {
                                    token.value
                                },
                                token.unit.or_else(|| statement::scale(page_lines)).or(passage_scale),
                            ),
                            _ => (token.value, token.unit.or(passage_scale)),
                        };
                        let value = AnswerValue::Amount(Amount {
                            value,
                            currency: currency.map(str::to_owned),
                            unit: unit.map(str::to_owned),
                        });
                        out.push(base(
                            value,
                            token.text.clone(),
                            token.start,
                            token.end,
                            score,
                            currency.is_some(),
                            token.value,
                        ));
                    }
                }
                Kind::Date => {
                    for token in date::find_dates(&line.text, self.order) {
                        let value = AnswerValue::Date(DateValue { iso: token.iso, original: token.original.clone() });
                        let score = view.keyword_score + label_value;
                        out.push(base(value, token.original, token.start, token.end, score, true, 0.0));
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
                        out.push(base(value, text, token.start, token.end, view.keyword_score, true, 0.0));
                    }
                }
                Kind::Text | Kind::Boolean => {
                    if !view.salient_here {
                        continue;
                    }
                    if let Some(candidate) = self.text_candidate(rank, passage, &view, &layout, passage_ok) {
                        out.push(candidate);
                    }
                }
            }
        }
        (out, passage_matches)
    }

    /// How much of a statement row label the question's words make up (0 to
    /// 1; "Total assets" for "total assets" is 1, "Total current assets" 2/3)
    /// and their weight, when it carries at least one of them. Keywords of
    /// the part's own concept (`balance_sheet`: "total current assets" is
    /// one of its words) do not count: they say which statement, not which
    /// row.
    fn row_label_support(&self, label: &str) -> Option<(f64, f64)> {
        let norm = label_form(label);
        let words: Vec<&str> = norm.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
        let matched: Vec<usize> = self
            .keywords
            .matches(label)
            .into_iter()
            .filter(|&k| self.keywords.keywords[k].group.as_ref().is_none_or(|g| !self.part_groups.contains(g)))
            .collect();
        if matched.is_empty() || words.is_empty() {
            return None;
        }
        let covered = words
            .iter()
            .filter(|w| matched.iter().any(|&k| self.keywords.keywords[k].norm().split(' ').any(|kw| kw == **w)))
            .count();
        Some((covered as f64 / words.len() as f64, self.keywords.weight(&matched)))
    }

    fn text_candidate(
        &self,
        rank: usize,
        passage: &Passage,
        view: &LineView<'_>,
        layout: &PageLayout<'_>,
        passage_ok: bool,
    ) -> Option<Candidate> {
        let line = view.line;
        if running_key(&line.text).is_some_and(|key| self.running.contains(&key)) {
            return None;
        }
        // The heading an asked-for identifier opens answers a "title of"
        // question outright, whatever else the question says.
        let heading = self.opens_heading(&line.text);
        let coverage = if heading { 1.0 } else { self.keywords.salient_coverage(&view.own) };
        let score = self.keywords.weight(&view.own) - 0.05 * rank as f64 + if heading { HEADING_BONUS } else { 0.0 };
        let passage_ok = passage_ok || heading;
        let whole = |l: &Line| (l.line_id, l.line_id, l.text.trim().to_owned());
        let (value, (line_start, line_end, quote)) = if self.kind == Kind::Boolean {
            let norm = label_form(&line.text);
            (AnswerValue::Boolean(!has_any(&norm, NEGATIONS)), whole(line))
        } else {
            let (label, rest) = line.text.split_once(':').unwrap_or(("", ""));
            let label_matches = !label.is_empty() && !self.keywords.matches(label).is_empty();
            let rest = rest.trim();
            // A label alone on its line: its value is where the layout puts
            // it (right on the row, or below in the column), else the next
            // line; only a line of the passage can be cited.
            let partner = match layout.value_of_label(line) {
                Some(partner) if passage.contains(partner.line_id) => Some(partner),
                Some(_) => None,
                None => view.below,
            };
            match (label_matches, rest.is_empty(), partner) {
                (true, false, _) => (AnswerValue::Text(rest.to_owned()), whole(line)),
                (true, true, Some(partner)) if !partner.text.trim().is_empty() => (
                    AnswerValue::Text(partner.text.trim().to_owned()),
                    cite(partner, Some(line), 0, partner.text.len()),
                ),
                _ => (AnswerValue::Text(line.text.trim().to_owned()), whole(line)),
            }
        };
        let text = match &value {
            AnswerValue::Text(t) => t.clone(),
            _ => line.text.trim().to_owned(),
        };
        Some(Candidate {
            rank,
            line_start,
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
            decisive: true,
            magnitude: 0.0,
        })
    }

    /// Whether `text` opens with one of [`Context::heading_of`] followed by
    /// a space (not `AC-2(1)`, an enhancement, nor `AC-20`).
    fn opens_heading(&self, text: &str) -> bool {
        let line = text.trim_start().to_lowercase();
        self.heading_of.iter().any(|id| {
            line.strip_prefix(id.as_str())
                .is_some_and(|rest| rest.starts_with(char::is_whitespace) && rest.trim().len() > 1)
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
        AnswerValue::Quantity(q) => format!("{}|{:?}", q.quantity, q.unit),
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
        if let Some(bad) = crate::first_passage_out_of_document(document, passages) {
            return Err(GenerateError::PassageOutOfDocument {
                index: bad.index,
                line_start: bad.line_start,
                line_end: bad.line_end,
                n_lines: bad.n_lines,
            });
        }
        // Values are read on the row view (the pieces of each printed line
        // joined: `Total:` and `$12.34`, `AC-2` and its title), cut at the
        // passage bounds so every passage is whole view lines; spans go back
        // to the document's line ids, each run whole.
        let cuts: BTreeSet<u32> = passages.iter().flat_map(|p| [p.line_start, p.line_end.saturating_add(1)]).collect();
        let rows = RowView::cut(document, &cuts);
        let in_view: Vec<Passage> = passages.iter().map(|p| rows.passage_to_view(p)).collect();
        let ctx = Context::new(question, rows.document());
        let sequential = question.chunk_strategy == ChunkStrategy::Sequential;
        let mut shown: Vec<Passage> = Vec::new();
        let mut candidates: Vec<Candidate> = Vec::new();
        let mut keyword_pages: Vec<(usize, u32)> = Vec::new();
        let mut selection = Selection { items: Vec::new(), best: None, conflicting: false };
        for (rank, (passage, original)) in in_view.iter().zip(passages).enumerate() {
            shown.push(original.clone());
            let (mut found, matched) = ctx.candidates(rank, passage);
            for candidate in &mut found {
                let (start, end) = rows.to_document(candidate.line_start, candidate.line_end);
                candidate.line_start = start.max(original.line_start);
                candidate.line_end = end.min(original.line_end);
            }
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
                    "passage": passage_label(original),
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
                if selection.best.as_ref().is_some_and(|b| b.decisive) {
                    break;
                }
            }
        }
        if !sequential {
            selection = ctx.select(&candidates);
        }
        // A listing that names a labelled field is answered by that label's
        // list (one item per element), not by every line with a keyword.
        let labelled = (question.answer_shape == AnswerShape::Listing && ctx.kind == Kind::Text)
            .then(|| crate::labelled::labelled_list(question, document, &shown))
            .flatten();
        if let Some(list) = &labelled {
            trace.record(TraceEvent {
                brick: "generate".to_owned(),
                step: "labelled_list".to_owned(),
                detail: json!({
                    "label": list.label,
                    "items": list.items.len(),
                    "line": list.items.first().map(|i| i.spans[0].line_start),
                }),
            });
        }
        let found = !selection.items.is_empty() || labelled.is_some();
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
            _ if labelled.is_some() => AnswerFeedback {
                answer_found: true,
                complete_answer_found: true,
                confidence: 0.8,
                warnings: Vec::new(),
                keywords_found,
                llm_discovered_keywords: Vec::new(),
                conflicting_evidence: false,
                context_structured: true,
                suggested_clarification: None,
            },
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
            items: labelled.map_or(selection.items, |list| list.items),
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
            calls: Vec::new(),
            notes: Vec::new(),
            answer_json: None,
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
    // Missing keywords, with an expert-dictionary concept named once rather
    // than as its dozens of synonyms (and not at all when one of them was seen).
    let found_groups: Vec<&str> =
        keyword_pages.iter().filter_map(|(k, _)| ctx.keywords.keywords[*k].group.as_deref()).collect();
    let mut missing: Vec<String> = Vec::new();
    for (i, k) in ctx.keywords.keywords.iter().enumerate() {
        if !k.salient || keyword_pages.iter().any(|(j, _)| *j == i) {
            continue;
        }
        let label = match &k.group {
            Some(group) if found_groups.contains(&group.as_str()) => continue,
            Some(group) => format!("concept '{group}' (in any language)"),
            None => format!("'{}'", k.original),
        };
        if !missing.contains(&label) {
            missing.push(label);
        }
    }
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
    use crate::test_support::{doc, doc_boxed, doc_in, page_passages, passage};
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

    #[test]
    fn running_headers_are_never_the_text_answer() {
        // The header carries every question keyword and sits first on each
        // page; the control's own heading carries fewer. Without the
        // running-line rule the header wins.
        let rows: &[(&str, u32)] = &[
            ("NIST SP 800-53 control catalog", 1),
            ("AC-1 POLICY AND PROCEDURES", 1),
            ("NIST SP 800-53 control catalog", 2),
            ("PM-23 DATA GOVERNANCE BODY", 2),
            ("NIST SP 800-53 control catalog", 3),
            ("SI-4 SYSTEM MONITORING", 3),
        ];
        let q = question("What is the title of NIST SP 800-53 control PM-23?", "text", &["NIST", "control", "PM-23"]);
        check(rows, &q, Some("PM-23 DATA GOVERNANCE BODY"));
        // Two pages only: not a running line, the rule stays out of the way.
        check(&rows[..4], &q, Some("NIST SP 800-53 control catalog"));
    }

    /// A cash flow statement page: a header of years, the capex row (label
    /// and first figure close, as the parser keeps them together; the
    /// other years apart), a dividends row and filler rows of figures.
    fn cash_flow_statement() -> ParsedDocument {
        let mut rows: Vec<(String, [f32; 4])> = vec![
            ("Consolidated Statement of Cash Flows".to_owned(), [200.0, 760.0, 400.0, 769.0]),
            ("(Millions)".to_owned(), [50.0, 740.0, 100.0, 749.0]),
            ("2018".to_owned(), [400.0, 740.0, 424.0, 749.0]),
            ("2017".to_owned(), [460.0, 740.0, 484.0, 749.0]),
            ("2016".to_owned(), [520.0, 740.0, 544.0, 749.0]),
            ("Purchases of property, plant and equipment (1,577)".to_owned(), [50.0, 720.0, 432.0, 729.0]),
            ("(1,373)".to_owned(), [456.0, 720.0, 490.0, 729.0]),
            ("(1,420)".to_owned(), [516.0, 720.0, 550.0, 729.0]),
            ("Dividends paid to shareholders".to_owned(), [50.0, 708.0, 200.0, 717.0]),
            ("(3,193)".to_owned(), [396.0, 708.0, 430.0, 717.0]),
            ("(2,803)".to_owned(), [456.0, 708.0, 490.0, 717.0]),
            ("(2,678)".to_owned(), [516.0, 708.0, 550.0, 717.0]),
        ];
        for i in 0..12 {
            let y = 690.0 - 12.0 * i as f32;
            rows.push((format!("Other item {i}"), [50.0, y, 150.0, y + 9.0]));
            rows.push((format!("1,{i:03}"), [400.0, y, 424.0, y + 9.0]));
            rows.push((format!("2,{i:03}"), [460.0, y, 484.0, y + 9.0]));
        }
        let rows: Vec<(&str, [f32; 4])> = rows.iter().map(|(t, b)| (t.as_str(), *b)).collect();
        crate::test_support::doc_boxed(&rows)
    }

    #[test]
    fn a_statement_is_read_by_row_label_and_year_column() {
        let doc = cash_flow_statement();
        let page = Passage {
            line_start: 1,
            line_end: doc.lines.len() as u32,
            page: 1,
            score: 1.0,
            anchor_line: 6,
            matched_keywords: vec![],
            pinned: true,
        };
        let mut q = expert(
            "What was the capex in FY2017?",
            "amount",
            &["capex", "2017"],
            "capital_expenditure",
            &[("purchases of property", 1.5)],
        );
        // Words of the statement's own concept: every row of it shares them.
        for text in ["dividends paid", "statement of cash flows"] {
            q.keywords.push(Keyword {
                text: text.to_owned(),
                weight: 1.0,
                source: docintel_schema::KeywordSource::ExpertDictionary,
                is_regex: false,
                semantic_group: Some("cash_flow_statement".to_owned()),
            });
        }
        // Without a named part, no statement reading: whatever the invoice
        // rules pick, it is not the 2017 capex cell.
        let plain = run(&q, &doc, std::slice::from_ref(&page));
        let value = |g: &Generation| g.answer.items.first().map(|i| i.value.to_string());
        assert_ne!(value(&plain).as_deref(), Some("-1373 million"), "{:?}", plain.answer);
        // The question points to the cash flow statement: the 2017 column of
        // the capex row, negative as printed, in millions; the dividends row
        // (a word of the statement's own concept) is not the answer.
        q.retrieval.scope.sections = vec!["statement of cash flows | statements of cash flows".to_owned()];
        let read = run(&q, &doc, std::slice::from_ref(&page));
        let item = read.answer.items.first().expect("an answer");
        match &item.value {
            AnswerValue::Amount(a) => {
                assert_eq!((a.value, a.unit.as_deref()), (-1373.0, Some("million")), "{:?}", read.answer)
            }
            other => panic!("{other:?}"),
        }
        assert!(item.spans[0].quote.contains("(1,373)"), "{:?}", item.spans);
        // No year named: the first column.
        q.keywords.retain(|k| k.text != "2017");
        let first = run(&q, &doc, std::slice::from_ref(&page));
        assert!(
            matches!(&first.answer.items[0].value, AnswerValue::Amount(a) if a.value == -1577.0),
            "{:?}",
            first.answer
        );
    }

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
            AnswerValue::Quantity(q) => AnswerValue::Quantity(q.clone()).to_string(),
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
    fn the_title_of_an_identifier_is_the_line_it_opens() {
        let document = doc(&[
            ("Related Controls: AC-2, AC-20, control title conventions.", 1),
            ("AC-2(1) ACCOUNT MANAGEMENT | AUTOMATED SYSTEM ACCOUNT MANAGEMENT", 1),
            ("AC-2 Account Management", 1),
            ("Control: a. Define and document the types of accounts allowed;", 1),
        ]);
        let mut q = question("What is the title of control AC-2?", "text", &["control"]);
        q.keywords.push(Keyword {
            text: "AC-2".to_owned(),
            weight: 3.0,
            source: docintel_schema::KeywordSource::Anchor,
            is_regex: false,
            semantic_group: None,
        });
        q.structural_hints.layout_hint = Some("heading".to_owned());
        let generation = run(&q, &document, &page_passages(&document));
        let item = &generation.answer.items[0];
        assert_eq!(item.text.as_deref(), Some("AC-2 Account Management"));
        assert_eq!(item.spans[0].line_start, 3);
        // Without the hint, the line with the most question words wins.
        q.structural_hints.layout_hint = None;
        let generation = run(&q, &document, &page_passages(&document));
        assert_ne!(generation.answer.items.first().and_then(|i| i.text.as_deref()), Some("AC-2 Account Management"));
    }

    #[test]
    fn pieces_of_one_printed_line_read_together() {
        // The parser starts a new line at a tab-stop gap (0.8 em): a control
        // id and its title, a label and its amount are lines of their own on
        // one row. They are read as one printed line and cited together.
        let document = doc_boxed(&[
            ("AC-2", [72.0, 700.0, 95.0, 710.0]),
            ("ACCOUNT MANAGEMENT", [110.0, 700.0, 220.0, 710.0]),
            ("Control: define the types of accounts allowed.", [72.0, 686.0, 300.0, 696.0]),
            ("Total:", [72.0, 600.0, 100.0, 610.0]),
            ("$12.34", [115.0, 600.0, 145.0, 610.0]),
        ]);
        let mut q = question("What is the title of control AC-2?", "text", &["control"]);
        q.keywords.push(Keyword {
            text: "AC-2".to_owned(),
            weight: 3.0,
            source: docintel_schema::KeywordSource::Anchor,
            is_regex: false,
            semantic_group: None,
        });
        q.structural_hints.layout_hint = Some("heading".to_owned());
        let found = answer_of(&q, &document, &[passage(1, 5, 1)]);
        assert_eq!(found.as_ref().map(|f| f.0.as_str()), Some("AC-2 ACCOUNT MANAGEMENT"));
        assert_eq!(span_of(&found), (1, 2, "AC-2 ACCOUNT MANAGEMENT"));
        let found = answer_of(&total(), &document, &[passage(1, 5, 1)]);
        assert_eq!(found.as_ref().map(|f| f.0.as_str()), Some("12.34 USD"));
        assert_eq!(span_of(&found), (4, 5, "Total: $12.34"));
        // Passages that cut a row keep to their own lines: the amount alone
        // has no label inside its passage, and nothing is cited outside one.
        let found = answer_of(&total(), &document, &[passage(1, 4, 1), passage(5, 5, 1)]);
        assert!(found.is_none(), "{found:?}");
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

    /// A question with expert-dictionary keywords of one concept.
    fn expert(text: &str, answer_type: &str, direct: &[&str], concept: &str, words: &[(&str, f32)]) -> ParsedQuestion {
        let mut q = question(text, answer_type, direct);
        for (word, weight) in words {
            q.keywords.push(Keyword {
                text: (*word).to_owned(),
                weight: *weight,
                source: docintel_schema::KeywordSource::ExpertDictionary,
                is_regex: false,
                semantic_group: Some(concept.to_owned()),
            });
        }
        q
    }

    fn invoice_date_expert() -> ParsedQuestion {
        let words = [("rechnungsdatum", 0.9), ("factuurdatum", 0.9), ("factuur datum", 0.9), ("date de facture", 0.9)];
        expert("What is the invoice date?", "date", &["invoice", "date"], "invoice_date", &words)
    }

    fn total_expert() -> ParsedQuestion {
        let words =
            [("grand total", 0.9), ("totaal", 0.8), ("factuur totaal", 0.9), ("ttc", 0.7), ("total facture", 0.9)];
        expert("What is the total amount?", "amount", &["total", "amount"], "total_amount", &words)
    }

    /// Runs `q` over `passages` of `document` and returns the first item's
    /// value (rendered) and its span.
    fn answer_of(q: &ParsedQuestion, document: &ParsedDocument, passages: &[Passage]) -> Option<(String, Span)> {
        let generation = run(q, document, passages);
        let item = generation.answer.items.first()?;
        let value = match &item.value {
            AnswerValue::Amount(a) => format!("{} {}", a.value, a.currency.as_deref().unwrap_or("-")),
            AnswerValue::Date(d) => d.iso.clone(),
            AnswerValue::Text(t) => t.clone(),
            other => format!("{other:?}"),
        };
        Some((value, item.spans[0].clone()))
    }

    fn span_of(found: &Option<(String, Span)>) -> (u32, u32, &str) {
        let span = &found.as_ref().expect("an answer").1;
        (span.line_start, span.line_end, span.quote.as_str())
    }

    #[test]
    fn label_left_on_the_same_row() {
        // QualityHosting: the label, then its value to the right on the same baseline.
        let document = doc_boxed(&[
            ("Rechnungsnr.", [53.9, 526.8, 109.9, 535.8]),
            ("30064443", [148.3, 526.8, 188.4, 535.8]),
            ("Kundennr.", [368.8, 526.8, 410.3, 535.8]),
            ("47774", [464.1, 526.8, 489.1, 535.8]),
            ("Rechnungsdatum", [53.9, 514.8, 124.4, 523.8]),
            ("7. Mai 2014", [148.3, 514.8, 195.4, 523.8]),
            ("01.05.14-31.05.14", [150.3, 372.0, 215.3, 380.0]),
        ]);
        let found = answer_of(&invoice_date_expert(), &document, &[passage(3, 7, 1)]);
        assert_eq!(found.as_ref().map(|f| f.0.as_str()), Some("2014-05-07"));
        assert_eq!(span_of(&found), (5, 6, "Rechnungsdatum 7. Mai 2014"));
        // Without the expert keyword the German label still reads as a date label.
        let q = question("What is the invoice date?", "date", &["invoice", "date"]);
        assert_eq!(answer_of(&q, &document, &[passage(1, 7, 1)]).map(|f| f.0), Some("2014-05-07".to_owned()));
    }

    #[test]
    fn label_above_in_the_same_column() {
        // saeco: a header row, then the value row; reading order interleaves
        // the other cells, so the value is five lines after its label.
        let document = doc_boxed(&[
            ("Kopie factuur", [44.1, 566.1, 139.2, 580.1]),
            ("Klant", [44.1, 552.7, 65.3, 560.7]),
            ("Order", [143.9, 552.7, 167.3, 560.7]),
            ("Factuur datum", [314.9, 552.1, 374.3, 560.1]),
            ("Factuur", [432.1, 552.7, 463.0, 560.7]),
            ("Vervaldatum", [500.3, 552.7, 552.1, 560.7]),
            ("SCONL0303006280999", [44.1, 539.9, 129.2, 547.9]),
            ("SCONL000000444", [143.9, 539.9, 210.9, 547.9]),
            ("8-9-2022", [338.3, 539.9, 370.8, 547.9]),
            ("VF1005193039", [409.4, 539.9, 463.9, 547.9]),
            ("22-9-2022", [511.7, 539.9, 548.8, 547.9]),
        ]);
        let found = answer_of(&invoice_date_expert(), &document, &[passage(1, 11, 1)]);
        assert_eq!(found.as_ref().map(|f| f.0.as_str()), Some("2022-09-08"));
        // The span covers the label and the value; the quote keeps to the value line.
        assert_eq!(span_of(&found), (4, 9, "8-9-2022"));
        // The due date sits under its own label.
        let due = question("When is payment due?", "date", &["due", "payment"]);
        assert_eq!(answer_of(&due, &document, &[passage(1, 11, 1)]).map(|f| f.0), Some("2022-09-22".to_owned()));
        // A value outside the passages is never cited, even when its label is shown.
        let generation = run(&invoice_date_expert(), &document, &[passage(2, 6, 1)]);
        assert!(!generation.answer.feedback.answer_found);
    }

    /// free_fiber, page 1: an HT / TVA / TTC table with a "Total facture" row,
    /// then the amount to pay.
    fn free_fiber() -> ParsedDocument {
        doc_boxed(&[
            ("Date limite de paiement le 05 Juillet 2015", [40.0, 491.9, 273.5, 501.9]),
            ("29.99 € TTC", [498.0, 491.9, 563.7, 501.9]),
            ("Montant EUR HT", [296.9, 460.3, 370.9, 468.3]),
            ("Montant TVA", [401.7, 460.3, 459.8, 468.3]),
            ("Montant EUR TTC", [487.0, 460.3, 565.9, 468.3]),
            ("Abonnements, forfaits et options", [40.0, 443.9, 204.0, 453.9]),
            ("24.99", [335.0, 443.9, 363.5, 453.9]),
            ("5.00", [430.6, 443.9, 452.8, 453.9]),
            ("29.99", [530.0, 443.9, 558.5, 453.9]),
            ("Total facture", [40.0, 407.9, 111.0, 417.9]),
            ("24.99", [335.0, 407.9, 366.6, 417.9]),
            ("5.00", [430.6, 407.9, 455.2, 417.9]),
            ("29.99", [530.0, 407.9, 561.6, 417.9]),
            ("TVA 20% payée sur les encaissements", [40.0, 393.9, 231.7, 403.9]),
            ("5.00", [430.6, 393.9, 452.8, 403.9]),
            ("Somme à payer", [40.0, 343.3, 103.5, 351.3]),
            ("29.99 € TTC", [503.0, 343.3, 553.6, 351.3]),
        ])
    }

    #[test]
    fn taxed_beats_untaxed_for_a_total() {
        let document = free_fiber();
        // The whole table shown: the TTC cell of the total row.
        let found = answer_of(&total_expert(), &document, &[passage(3, 13, 1)]);
        assert_eq!(found.as_ref().map(|f| f.0.as_str()), Some("29.99 EUR"));
        assert_eq!(span_of(&found).0, 10, "{found:?}");
        // Only the total row shown (its column headers are not): the HT and
        // TVA cells are still known by their headers and do not settle a
        // sequential read, the amount to pay does.
        let mut q = total_expert();
        q.chunk_strategy = ChunkStrategy::Sequential;
        let generation = run(&q, &document, &[passage(10, 12, 1), passage(14, 17, 1)]);
        assert_eq!(generation.passages_shown.len(), 2);
        match &generation.answer.items[0].value {
            AnswerValue::Amount(a) => assert_eq!(a.value, 29.99),
            other => panic!("{other:?}"),
        }
        // Asked for the untaxed amount, the HT column answers.
        let ht = question("What is the amount excluding tax (HT)?", "amount", &["ht"]);
        assert_eq!(answer_of(&ht, &document, &[passage(3, 13, 1)]).map(|f| f.0), Some("24.99 EUR".to_owned()));
        // Lines without layout: the TTC line beats the HT line.
        let rows = &[("Total HT 24,99 €", 1), ("TVA 5,00 €", 1), ("Total TTC 29,99 €", 1)];
        check(rows, &total(), Some("29.99 EUR"));
        check(
            &[("Montant EUR HT", 1), ("24.99", 1), ("Montant EUR TTC", 1), ("29.99", 1)],
            &total(),
            Some("29.99 EUR"),
        );
    }

    #[test]
    fn grand_total_beats_a_total_row() {
        // Flipkart: the table's "Total" row (qty, price, tax, total), then
        // "Grand Total" with its value on the next line to the right.
        let document = doc_boxed(&[
            ("Qty Price", [344.7, 646.8, 399.1, 655.8]),
            ("Tax(%) Tax", [435.3, 646.8, 501.3, 655.8]),
            ("Total", [533.7, 646.8, 555.2, 655.8]),
            ("1 278.61 14.50%", [354.7, 622.8, 464.8, 631.8]),
            ("40.39 319.00", [493.3, 622.8, 569.7, 631.8]),
            ("Price is inclusive of Promotional Discount of Rs -40.00,", [114.6, 600.0, 271.9, 607.0]),
            ("Total 1 278.61", [304.6, 560.9, 413.6, 573.3]),
            ("40.39 319.00", [485.8, 560.9, 569.7, 572.9]),
            ("Grand Total", [385.6, 518.4, 464.8, 533.4]),
            ("319.00", [523.8, 516.5, 569.7, 531.5]),
        ]);
        let found = answer_of(&total(), &document, &[passage(6, 10, 1)]);
        assert_eq!(found.as_ref().map(|f| f.0.as_str()), Some("319 INR"));
        assert_eq!(span_of(&found), (9, 10, "Grand Total 319.00"));
        let found = answer_of(&total_expert(), &document, &page_passages(&document));
        assert_eq!(span_of(&found).0, 9);
        // Reading order alone: a label line followed by its value line counts fully.
        let rows = &[("Total 1 278.61", 1), ("40.39 319.00", 1), ("Grand Total", 1), ("300.00", 1)];
        check(rows, &total(), Some("300 -"));
    }

    #[test]
    fn expert_keywords_find_foreign_labels() {
        // coolblue: Dutch labels left of their values; only expert keywords match.
        let document = doc_boxed(&[
            ("Factuurdatum:", [45.0, 647.8, 100.6, 655.8]),
            ("19 april 2014", [104.3, 647.8, 152.6, 655.8]),
            ("Ordernummer:", [45.0, 633.6, 102.4, 641.6]),
            ("12572103", [105.0, 633.6, 141.4, 641.6]),
            ("Orderdatum:", [45.0, 619.3, 94.4, 627.3]),
            ("18 april 2014", [97.5, 619.3, 145.8, 627.3]),
            ("Exclusief BTW", [62.3, 253.0, 114.1, 261.0]),
            ("€ 593,36", [147.7, 253.0, 179.2, 261.0]),
            ("Subtotaal", [426.4, 253.0, 462.4, 261.0]),
            ("€ 717,97", [518.3, 253.0, 549.8, 261.0]),
            ("BTW 21%", [80.7, 241.7, 115.6, 249.7]),
            ("€ 124,61", [147.7, 241.7, 179.2, 249.7]),
            ("Totaal", [437.0, 231.2, 462.1, 239.2]),
            ("€ 717,97", [518.2, 231.2, 549.8, 239.2]),
        ]);
        let found = answer_of(&invoice_date_expert(), &document, &page_passages(&document));
        assert_eq!(found.as_ref().map(|f| f.0.as_str()), Some("2014-04-19"));
        assert_eq!(span_of(&found), (1, 2, "Factuurdatum: 19 april 2014"));
        let generation = run(&total_expert(), &document, &[passage(7, 14, 1)]);
        let item = &generation.answer.items[0];
        assert_eq!(item.value, AnswerValue::Amount(Amount { value: 717.97, currency: Some("EUR".into()), unit: None }));
        assert_eq!((item.spans[0].line_start, item.spans[0].line_end), (13, 14));
        // One matched concept word is full coverage, not a fraction of every synonym.
        assert!(generation.answer.feedback.confidence >= 0.9, "{}", generation.answer.feedback.confidence);
    }

    #[test]
    fn text_label_value_by_layout() {
        // AWS: "Account number:" with its value below, but another column's
        // line comes first in reading order.
        let document = doc_boxed(&[
            ("Account number:", [36.0, 689.1, 95.7, 697.1]),
            ("Invoice Summary", [257.0, 681.5, 344.8, 692.5]),
            ("296664039561", [36.0, 671.0, 142.8, 687.0]),
            ("Invoice Number:", [257.0, 666.5, 313.3, 674.5]),
            ("42183017", [535.4, 666.5, 571.0, 674.5]),
        ]);
        let q = question("What is the account number?", "text", &["account number"]);
        let found = answer_of(&q, &document, &page_passages(&document));
        assert_eq!(found.as_ref().map(|f| f.0.as_str()), Some("296664039561"));
        assert_eq!(span_of(&found), (1, 3, "296664039561"));
        let q = question("What is the invoice number?", "text", &["invoice number"]);
        let found = answer_of(&q, &document, &page_passages(&document));
        assert_eq!(found.as_ref().map(|f| f.0.as_str()), Some("42183017"));
        assert_eq!(span_of(&found), (4, 5, "Invoice Number: 42183017"));
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
