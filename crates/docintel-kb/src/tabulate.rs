//! Counting, filtering and grouping questions answered from the structured
//! index (`structured`): the question brick reads the question
//! (`docintel::aggregate::parse_aggregate`, decided in code), every row of
//! the index is checked, and the answer lists every counted document, each
//! citing the values it was counted on (document, page, line id and the
//! value as printed), so a count is a statement about the collection, not
//! about the few documents a search found.
//!
//! A field named by the question is found among the index's kept fields by
//! the concept it names (the expert dictionary: "sum insured" is
//! `coverage_limit`), else by its words ("total" → `total_amount`); a field
//! the index does not hold is refused by name, listing the fields it holds
//! (not found is an answer). A year with no field named reads the date
//! field named after the document type (`invoice_date` for invoices), else
//! the date field most documents hold. Documents lacking a field a
//! condition needs, or whose value reads as no number or year, are not
//! counted and are listed apart (`StructuredAnswer::not_counted`); so is a
//! value in another currency than the one the question names, or naming
//! none (no conversion).

use std::collections::BTreeMap;

use docintel::ExpertDictionary;
use docintel::aggregate::{AggregateQuestion, Condition, parse_number, year_in};
use docintel::schema::text::normalize;
use docintel::schema::{Answer, AnswerFeedback, AnswerShape, AnswerValue, ExtractionMethod, Item, Span};
use serde::Serialize;

use crate::structured::{FieldValue, StructuredIndex, StructuredRow};

/// The implementation name recorded in `_meta.implementations["kb"]`.
pub const TABULATE_NAME: &str = "structured-index/0.1";

/// What the structured index answered (`kb.structured` of `kb ask --json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StructuredAnswer {
    /// The question as the question brick read it.
    pub question: AggregateQuestion,
    /// The answer in one line ("3 invoices from 2023").
    pub summary: String,
    /// Documents counted (listed in the answer's items, one each).
    pub count: usize,
    /// The fields the answer read (index field names).
    pub fields: Vec<String>,
    /// With a grouping: one group per value, largest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<Group>,
    /// Documents of the asked type left out because a field a condition
    /// needs is missing or unreadable, with why.
    pub not_counted: Vec<String>,
    /// Why the question was refused (a field the index lacks, words not
    /// understood, no structured index), if it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// One group of a grouping question.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    /// The value as first printed (a year for `by year`); `None` for the
    /// documents without it.
    pub value: Option<String>,
    /// Documents in the group.
    pub count: usize,
    /// Their ids.
    pub documents: Vec<String>,
}

/// A document counted, and the values it was counted on.
pub(crate) struct Counted<'a> {
    pub(crate) row: &'a StructuredRow,
    pub(crate) cited: Vec<(String, &'a FieldValue)>,
}

/// The answer: the typed answer (one item per counted document) and what
/// the index decided; the counted rows for the citations.
pub(crate) struct Tabulated<'a> {
    pub(crate) answer: Answer,
    pub(crate) structured: StructuredAnswer,
    pub(crate) counted: Vec<Counted<'a>>,
}

/// A field resolved for one condition or grouping.
enum Resolved {
    Field(String),
    /// The year of this date field.
    YearOf(String),
}

/// Answers `question` over `index`.
pub(crate) fn tabulate<'a>(index: &'a StructuredIndex, question: &AggregateQuestion) -> Tabulated<'a> {
    let dictionary = ExpertDictionary::builtin();
    let kept: Vec<&str> = index.report.kept.iter().map(|f| f.field.as_str()).collect();
    let of_type: Vec<&StructuredRow> = index
        .rows
        .iter()
        .filter(|row| question.doc_type.as_deref().is_none_or(|t| row.doc_type.as_deref() == Some(t)))
        .collect();
    let refuse = |reason: String| refused(question, reason);
    if !question.unread.is_empty() {
        return refuse(format!(
            "the structured index counts, filters and groups on fields; \"{}\" is not a field condition it can read{}",
            question.unread.join(" "),
            fields_held(&kept)
        ));
    }
    let needs_fields = !question.conditions.is_empty() || question.group_by.is_some();
    if needs_fields && !index.report.has_index() {
        return refuse(format!(
            "this knowledge base has no structured index: its {} document(s) share no field (a field must be found in {} of them)",
            index.report.documents, index.report.min_documents
        ));
    }
    let subject_rows: Vec<&StructuredRow> = of_type.clone();
    // Resolve every condition's field first: a missing one refuses the question.
    let mut resolved = Vec::new();
    for condition in &question.conditions {
        let field = match condition {
            Condition::Year { field, .. } => match field {
                Some(words) => resolve(words, &kept, &dictionary).map(Resolved::Field),
                None => date_field(question, &kept, &subject_rows).map(Resolved::YearOf),
            },
            Condition::Compare { field: Some(words), .. } => resolve(words, &kept, &dictionary).map(Resolved::Field),
            Condition::Compare { field: None, .. } => {
                return refuse(format!(
                    "the question compares a number but names no field to compare{}",
                    fields_held(&kept)
                ));
            }
            Condition::Matches { field: Some(words), .. } => resolve(words, &kept, &dictionary).map(Resolved::Field),
            // Any field may hold the words: checked per row.
            Condition::Matches { field: None, .. } => Some(Resolved::Field(String::new())),
        };
        match field {
            Some(field) => resolved.push(field),
            None => {
                let named = match condition {
                    Condition::Year { field: None, .. } => "a date".to_owned(),
                    Condition::Year { field: Some(w), .. }
                    | Condition::Compare { field: Some(w), .. }
                    | Condition::Matches { field: Some(w), .. } => format!("\"{w}\""),
                    Condition::Compare { field: None, .. } | Condition::Matches { field: None, .. } => String::new(),
                };
                return refuse(format!("the structured index holds no field {named}{}", fields_held(&kept)));
            }
        }
    }
    let group = match &question.group_by {
        None => None,
        Some(words) if matches!(words.as_str(), "year" | "years") => match date_field(question, &kept, &subject_rows) {
            Some(field) => Some(Resolved::YearOf(field)),
            None => return refuse(format!("the structured index holds no date field{}", fields_held(&kept))),
        },
        Some(words) => match resolve(words, &kept, &dictionary) {
            Some(field) => Some(Resolved::Field(field)),
            None => {
                return refuse(format!("the structured index holds no field \"{words}\"{}", fields_held(&kept)));
            }
        },
    };

    let mut counted: Vec<Counted<'_>> = Vec::new();
    let mut not_counted = Vec::new();
    'rows: for row in &subject_rows {
        let mut cited: Vec<(String, &FieldValue)> = Vec::new();
        for (condition, field) in question.conditions.iter().zip(&resolved) {
            let name = match field {
                Resolved::Field(name) | Resolved::YearOf(name) => name.as_str(),
            };
            if let Condition::Matches { field: None, text } = condition {
                match row.fields.iter().find(|(_, v)| holds_words(&v.value, text)) {
                    Some((name, value)) => {
                        cited.push((name.clone(), value));
                        continue;
                    }
                    None => continue 'rows,
                }
            }
            let Some(value) = row.fields.get(name) else {
                not_counted.push(format!("{}: no {}", row.name, display(name)));
                continue 'rows;
            };
            let holds = match condition {
                Condition::Year { year, .. } => match year_in(&value.value) {
                    Some(found) => found == *year,
                    None => {
                        not_counted.push(format!("{}: {} \"{}\" holds no year", row.name, display(name), value.value));
                        continue 'rows;
                    }
                },
                Condition::Compare { currency: Some(asked), .. } if currency_of(&value.value) != currency_of(asked) => {
                    // No conversion: a value in another currency, or naming
                    // none, is not compared with an amount in this one.
                    let why = if currency_of(&value.value).is_some() {
                        "is in another currency than"
                    } else {
                        "names no currency, asked in"
                    };
                    not_counted.push(format!(
                        "{}: {} \"{}\" {why} {}",
                        row.name,
                        display(name),
                        value.value,
                        asked.to_uppercase()
                    ));
                    continue 'rows;
                }
                Condition::Compare { op, value: bound, .. } => match parse_number(&value.value) {
                    Some(number) => op.holds(number, *bound),
                    None => {
                        not_counted.push(format!("{}: {} \"{}\" is no number", row.name, display(name), value.value));
                        continue 'rows;
                    }
                },
                Condition::Matches { text, .. } => holds_words(&value.value, text),
            };
            if !holds {
                continue 'rows;
            }
            cited.push((name.to_owned(), value));
        }
        if let Some(Resolved::Field(name) | Resolved::YearOf(name)) = &group
            && let Some(value) = row.fields.get(name.as_str())
            && !cited.iter().any(|(n, _)| n == name)
        {
            cited.push((name.clone(), value));
        }
        counted.push(Counted { row, cited });
    }

    let mut groups: Vec<Group> = Vec::new();
    if let Some(group) = &group {
        let mut by_key: BTreeMap<Option<String>, Group> = BTreeMap::new();
        for c in &counted {
            let (key, shown) = match group {
                Resolved::Field(name) => match c.row.fields.get(name.as_str()) {
                    Some(v) => (Some(normalize(&v.value)), Some(v.value.clone())),
                    None => (None, None),
                },
                Resolved::YearOf(name) => match c.row.fields.get(name.as_str()).and_then(|v| year_in(&v.value)) {
                    Some(year) => (Some(year.to_string()), Some(year.to_string())),
                    None => (None, None),
                },
            };
            let entry = by_key.entry(key).or_insert_with(|| Group { value: shown, count: 0, documents: Vec::new() });
            entry.count += 1;
            entry.documents.push(c.row.document_id.clone());
        }
        groups = by_key.into_values().collect();
        groups.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.value.is_none().cmp(&b.value.is_none())));
        // Items in group order.
        let order: Vec<&String> = groups.iter().flat_map(|g| &g.documents).collect();
        counted.sort_by_key(|c| order.iter().position(|id| **id == c.row.document_id));
    }

    let mut fields: Vec<String> = Vec::new();
    for field in resolved.iter().chain(&group) {
        let (Resolved::Field(name) | Resolved::YearOf(name)) = field;
        if !name.is_empty() && !fields.contains(name) {
            fields.push(name.clone());
        }
    }
    let items = counted.iter().map(item).collect();
    let summary = summary(question, counted.len(), &groups, &fields);
    let mut feedback = AnswerFeedback {
        answer_found: true,
        complete_answer_found: not_counted.is_empty(),
        confidence: 1.0,
        warnings: Vec::new(),
        keywords_found: Vec::new(),
        llm_discovered_keywords: Vec::new(),
        conflicting_evidence: false,
        context_structured: true,
        suggested_clarification: None,
    };
    feedback.warnings.push(summary.clone());
    if !not_counted.is_empty() {
        feedback.warnings.push(format!("{} document(s) not counted: {}", not_counted.len(), not_counted.join("; ")));
    }
    feedback.warnings.truncate(8);
    let answer = Answer {
        answer_shape: AnswerShape::Listing,
        answer_type: "text".into(),
        items,
        extraction_method: ExtractionMethod::Extractive,
        feedback,
    };
    let structured = StructuredAnswer {
        question: question.clone(),
        summary,
        count: counted.len(),
        fields,
        groups,
        not_counted,
        refused: None,
    };
    Tabulated { answer, structured, counted }
}

/// A refusal: no item, the reason as the answer's warning.
fn refused<'a>(question: &AggregateQuestion, reason: String) -> Tabulated<'a> {
    let answer = Answer {
        answer_shape: AnswerShape::Listing,
        answer_type: "text".into(),
        items: Vec::new(),
        extraction_method: ExtractionMethod::Extractive,
        feedback: AnswerFeedback::not_found(reason.clone()),
    };
    let structured = StructuredAnswer {
        question: question.clone(),
        summary: format!("not answered: {reason}"),
        count: 0,
        fields: Vec::new(),
        groups: Vec::new(),
        not_counted: Vec::new(),
        refused: Some(reason),
    };
    Tabulated { answer, structured, counted: Vec::new() }
}

/// A field name for people (`invoice_date` → `invoice date`).
fn display(name: &str) -> String {
    name.replace('_', " ")
}

/// "; it holds: a, b, c" (or that it holds none).
fn fields_held(kept: &[&str]) -> String {
    if kept.is_empty() {
        "; the knowledge base has no structured index (its documents share no field)".to_owned()
    } else {
        let names: Vec<String> = kept.iter().map(|k| display(k)).collect();
        format!("; its fields: {}", names.join(", "))
    }
}

/// A word without a plural `s`.
fn stem(word: &str) -> &str {
    match word.strip_suffix('s') {
        Some(stem) if stem.len() >= 3 && !stem.ends_with('s') => stem,
        _ => word,
    }
}

fn words(text: &str) -> Vec<String> {
    normalize(text)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| stem(w).to_owned())
        .collect()
}

/// The kept field the question's words name: the concept they name, else
/// the field holding all of them (the one with the fewest other words).
fn resolve(asked: &str, kept: &[&str], dictionary: &ExpertDictionary) -> Option<String> {
    if let Some((concept, _)) = dictionary.concept_named_in(asked)
        && kept.contains(&concept)
    {
        return Some(concept.to_owned());
    }
    let asked = words(asked);
    kept.iter()
        .filter_map(|field| {
            let have = words(&display(field));
            asked.iter().all(|w| have.contains(w)).then(|| (have.len() - asked.len().min(have.len()), *field))
        })
        .min()
        .map(|(_, field)| field.to_owned())
}

/// The date field a year reads when the question names none: the kept
/// field with `date` in its name that holds the document type's noun
/// (`invoice_date`), else the one most of the asked documents hold.
fn date_field(question: &AggregateQuestion, kept: &[&str], rows: &[&StructuredRow]) -> Option<String> {
    let dates: Vec<&str> = kept.iter().copied().filter(|f| words(&display(f)).iter().any(|w| w == "date")).collect();
    let noun = stem(&question.noun).to_owned();
    if let Some(field) = dates.iter().find(|f| words(&display(f)).contains(&noun)) {
        return Some((*field).to_owned());
    }
    dates
        .iter()
        .map(|f| (std::cmp::Reverse(rows.iter().filter(|r| r.fields.contains_key(*f)).count()), *f))
        .min()
        .map(|(_, f)| f.to_owned())
}

/// Whether `value` holds `text`'s words in order, word-bounded (folded).
fn holds_words(value: &str, text: &str) -> bool {
    let have = words(value).join(" ");
    let want = words(text).join(" ");
    !want.is_empty() && format!(" {have} ").contains(&format!(" {want} "))
}

/// One counted document: its name, the values it was counted on, each
/// cited (the first line when no field was read).
fn item(counted: &Counted<'_>) -> Item<AnswerValue> {
    let row = counted.row;
    let mut spans: Vec<Span> = Vec::new();
    let mut parts = Vec::new();
    for (name, value) in &counted.cited {
        parts.push(format!("{}: {}", display(name), value.value));
        if !spans.iter().any(|s| s.line_start == value.line_id) && spans.len() < 4 {
            spans.push(span(value));
        }
    }
    if spans.is_empty()
        && let Some(first) = &row.first_line
    {
        spans.push(span(first));
    }
    let text = if parts.is_empty() { row.name.clone() } else { format!("{} — {}", row.name, parts.join("; ")) };
    Item { value: AnswerValue::Text(text.clone()), text: Some(text), spans }
}

/// Currency words and symbols, and the ISO code each names.
const CURRENCIES: &[(&str, &str)] = &[
    ("$", "USD"),
    ("usd", "USD"),
    ("dollars", "USD"),
    ("€", "EUR"),
    ("eur", "EUR"),
    ("euro", "EUR"),
    ("euros", "EUR"),
    ("£", "GBP"),
    ("gbp", "GBP"),
    ("₹", "INR"),
    ("inr", "INR"),
    ("rs", "INR"),
    ("rupees", "INR"),
    ("¥", "JPY"),
    ("jpy", "JPY"),
    ("chf", "CHF"),
    ("pln", "PLN"),
    ("zł", "PLN"),
];

/// The currency `text` names (a code as a word, or a symbol anywhere).
fn currency_of(text: &str) -> Option<&'static str> {
    let folded = normalize(text);
    CURRENCIES.iter().find_map(|(mark, code)| {
        let found = if mark.chars().all(char::is_alphabetic) {
            folded.split(|c: char| !c.is_alphanumeric()).any(|w| w == *mark)
        } else {
            folded.contains(mark)
        };
        found.then_some(*code)
    })
}

fn span(value: &FieldValue) -> Span {
    Span { line_start: value.line_id, line_end: value.line_id, page: value.page, quote: value.value.clone() }
}

/// "3 invoices from 2023", "2 policies with coverage limit above 1000000",
/// "4 documents in 2 groups by issuer".
fn summary(question: &AggregateQuestion, count: usize, groups: &[Group], fields: &[String]) -> String {
    let noun = if count == 1 { singular(&question.noun) } else { plural(&question.noun) };
    let mut out = format!("{count} {noun}");
    let mut conditions = Vec::new();
    for condition in &question.conditions {
        conditions.push(match condition {
            Condition::Year { year, .. } => format!("from {year}"),
            Condition::Compare { op, value, currency, .. } => {
                let currency = currency.as_deref().map(|c| format!(" {}", c.to_uppercase())).unwrap_or_default();
                format!("{} {value}{currency}", op.as_str())
            }
            Condition::Matches { text, .. } => format!("matching \"{text}\""),
        });
    }
    if !conditions.is_empty() {
        out.push(' ');
        out.push_str(&conditions.join(", "));
    }
    if !groups.is_empty() {
        let by = question.group_by.as_deref().unwrap_or_default();
        let shown: Vec<String> =
            groups.iter().map(|g| format!("{}: {}", g.value.as_deref().unwrap_or("(none)"), g.count)).collect();
        out.push_str(&format!(" per {by}: {}", shown.join("; ")));
    }
    if !fields.is_empty() {
        let names: Vec<String> = fields.iter().map(|f| display(f)).collect();
        out.push_str(&format!(" (fields read: {})", names.join(", ")));
    }
    out
}

fn singular(noun: &str) -> String {
    match noun {
        "policies" => "policy".into(),
        n if n.ends_with('s') => n[..n.len() - 1].to_owned(),
        n => n.to_owned(),
    }
}

fn plural(noun: &str) -> String {
    match noun {
        "policy" => "policies".into(),
        n if n.ends_with('s') => n.to_owned(),
        n => format!("{n}s"),
    }
}
