//! Reading the model's replies: each parsed against its schema (the
//! registry's or a caller's) with its spans checked against the passages
//! shown, then the answer chosen among the replies, or gathered from all
//! of them for a list read in pieces.

use docintel_schema::registry::RegistryEntry;
use docintel_schema::{
    Amount, Answer, AnswerFeedback, AnswerShape, AnswerValue, DateValue, ExtractionMethod, Item, LlmResponse,
    ParsedDocument, ParsedQuestion, Passage, Quantity, Span, TableValue, TypedAnswer, ValueKind,
};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Reply;
use crate::custom::CustomSchema;
use crate::validate::verify_span;

/// The answer to return: the sufficient reply, else the first reply that
/// found something with clean spans, else the first that found anything,
/// else the last (a not-found); warnings of not-found replies are kept.
pub(super) fn choose(
    question: &ParsedQuestion,
    schema_name: &str,
    mut replies: Vec<Reply>,
    no_passages: bool,
) -> (Answer, Option<Value>) {
    if replies.is_empty() {
        let why = if no_passages { "no passages were retrieved, so the model was not called" } else { "no reply" };
        return (failure(question, schema_name, why.to_owned()), None);
    }
    let pick = replies
        .iter()
        .position(Reply::sufficient)
        .or_else(|| replies.iter().position(|r| r.answer.feedback.answer_found && r.span_problems == 0))
        .or_else(|| replies.iter().position(|r| r.answer.feedback.answer_found))
        .unwrap_or(replies.len() - 1);
    let others: Vec<String> = replies
        .iter()
        .enumerate()
        .filter(|(i, r)| *i != pick && !r.answer.feedback.answer_found)
        .flat_map(|(i, r)| r.answer.feedback.warnings.iter().map(move |w| format!("call {}: {w}", i + 1)))
        .collect();
    let chosen = replies.swap_remove(pick);
    let mut answer = chosen.answer;
    for warning in others {
        if !answer.feedback.warnings.contains(&warning) {
            answer.feedback.warnings.push(warning);
        }
    }
    (answer, chosen.json)
}

/// The message that answers a reply not following `entry`'s schema: what
/// was wrong, and what the value must be.
pub(super) fn correction_text(entry: &RegistryEntry, why: &str) -> String {
    let value = match entry.value {
        ValueKind::Text => "a string copied from the passages",
        ValueKind::Amount => {
            "an object: value (a number, no currency sign or separators), currency (ISO 4217 code or null), unit (thousand, million, billion or null)"
        }
        ValueKind::Quantity => "an object: quantity (a number, never a sentence) and unit (or null)",
        ValueKind::Date => "an object: iso (YYYY-MM-DD) and original (the date as written)",
        ValueKind::Boolean => "true or false",
        ValueKind::Table => "an object: headers (strings) and rows (lists of strings, one per header)",
    };
    format!(
        "Your reply does not follow the answer schema: {}. Reply again with JSON that follows the schema exactly; each item's value is {value}. If the passages do not give such a value, the answer is not found.",
        docintel_schema::text::truncate_chars(why, 200)
    )
}

/// Whether an answer of this shape is gathered from every call when the
/// passages had to be split to fit the window.
pub(super) fn gathers(shape: AnswerShape) -> bool {
    matches!(shape, AnswerShape::Listing | AnswerShape::Table)
}

/// One answer from the replies of a list read in pieces: every found item,
/// once (same value), in document order; complete when some reply found
/// items and none of the calls reports a missing part it could have seen;
/// every warning kept, prefixed by its call.
pub(super) fn gather(question: &ParsedQuestion, schema_name: &str, replies: Vec<Reply>) -> Answer {
    let found: Vec<&Reply> = replies.iter().filter(|r| r.answer.feedback.answer_found).collect();
    if found.is_empty() {
        let (answer, _) = choose(question, schema_name, replies, false);
        return answer;
    }
    let mut items: Vec<Item<AnswerValue>> = Vec::new();
    for reply in &found {
        for item in &reply.answer.items {
            let key = docintel_schema::text::squash(&item.value.to_string());
            if !items.iter().any(|kept| docintel_schema::text::squash(&kept.value.to_string()) == key) {
                items.push(item.clone());
            }
        }
    }
    items.sort_by_key(|item| item.spans.first().map_or(u32::MAX, |s| s.line_start));
    let mut feedback = found[0].answer.feedback.clone();
    feedback.answer_found = true;
    feedback.complete_answer_found = found.iter().any(|r| r.answer.feedback.complete_answer_found);
    feedback.confidence = found.iter().map(|r| r.answer.feedback.confidence).fold(1.0, f64::min);
    feedback.conflicting_evidence = found.iter().any(|r| r.answer.feedback.conflicting_evidence);
    feedback.warnings = replies
        .iter()
        .enumerate()
        .flat_map(|(i, r)| r.answer.feedback.warnings.iter().map(move |w| format!("call {}: {w}", i + 1)))
        .collect();
    feedback.warnings.insert(
        0,
        format!(
            "the passages did not fit the model's context in one call: {} items gathered from {} call(s)",
            items.len(),
            replies.len()
        ),
    );
    for reply in &found[1..] {
        for word in &reply.answer.feedback.keywords_found {
            if !feedback.keywords_found.contains(word) {
                feedback.keywords_found.push(word.clone());
            }
        }
    }
    Answer {
        answer_shape: question.answer_shape,
        answer_type: question.answer_type.clone(),
        items,
        extraction_method: ExtractionMethod::Llm,
        feedback,
    }
}

pub(super) fn failure(question: &ParsedQuestion, schema_name: &str, warning: String) -> Answer {
    Answer {
        answer_shape: question.answer_shape,
        answer_type: question.answer_type.clone(),
        items: Vec::new(),
        extraction_method: ExtractionMethod::Llm,
        feedback: AnswerFeedback::not_found(format!("{warning} ({schema_name})")),
    }
}

pub(super) fn typed<V>(content: &str) -> Result<TypedAnswer<V>, serde_json::Error>
where
    V: DeserializeOwned,
{
    serde_json::from_str(content)
}

/// Parses one reply into an [`Answer`] and checks its spans against the
/// passages of this call.
pub(super) fn parse_reply(
    question: &ParsedQuestion,
    entry: &RegistryEntry,
    response: &LlmResponse,
    document: &ParsedDocument,
    shown: &[Passage],
    prompt: &str,
) -> Reply {
    let (shape, answer_type, method) = (question.answer_shape, question.answer_type.clone(), ExtractionMethod::Llm);
    // A table whose rows do not all fit its headers keeps the rows that do.
    let mut repairs = Vec::new();
    let repaired;
    let content = match serde_json::from_str::<Value>(&response.content) {
        Ok(mut json) if entry.value == ValueKind::Table => {
            repairs = crate::reply::repair_table_rows(&mut json);
            repaired = json.to_string();
            if repairs.is_empty() { response.content.as_str() } else { repaired.as_str() }
        }
        _ => response.content.as_str(),
    };
    let parsed = match entry.value {
        ValueKind::Text => typed::<String>(content).map(|t| Answer::from_typed(shape, answer_type, method, t)),
        ValueKind::Amount => typed::<Amount>(content).map(|t| Answer::from_typed(shape, answer_type, method, t)),
        ValueKind::Quantity => typed::<Quantity>(content).map(|t| Answer::from_typed(shape, answer_type, method, t)),
        ValueKind::Date => typed::<DateValue>(content).map(|t| Answer::from_typed(shape, answer_type, method, t)),
        ValueKind::Boolean => typed::<bool>(content).map(|t| Answer::from_typed(shape, answer_type, method, t)),
        ValueKind::Table => typed::<TableValue>(content).map(|t| Answer::from_typed(shape, answer_type, method, t)),
    };
    let answer = match parsed {
        Ok(answer) => answer,
        Err(error) => {
            let reply_id = if response.id.is_empty() { String::new() } else { format!(" {}", response.id) };
            let answer = failure(
                question,
                entry.name,
                format!("the model reply{reply_id} is not valid JSON for the answer schema: {error}"),
            );
            return Reply { answer, json: None, span_problems: 0, schema_error: Some(error.to_string()) };
        }
    };
    let mut answer = answer;
    answer.feedback.warnings.extend(repairs);
    check_spans(answer, None, document, shown, prompt)
}

/// The checks of [`crate::reply`], then the spans: a self-contradicting
/// reply becomes a not-found; quotes with copied row columns are repaired;
/// items whose cited lines do not hold their value are dropped; items
/// without spans and spans outside `shown` or the document are flagged.
pub(super) fn check_spans(
    mut answer: Answer,
    json: Option<Value>,
    document: &ParsedDocument,
    shown: &[Passage],
    prompt: &str,
) -> Reply {
    use crate::reply;
    let parroted = reply::drop_parroted(&mut answer, prompt);
    if parroted > 0 {
        answer
            .feedback
            .warnings
            .push(format!("{parroted} warning(s) of the model repeated the prompt's rules and were left out"));
    }
    if let Some(reason) = reply::contradiction(&answer) {
        reply::refuse(&mut answer, reason);
        return Reply { answer, json, span_problems: 0, schema_error: None };
    }
    let mut repairs = Vec::new();
    for (i, item) in answer.items.iter_mut().enumerate() {
        for (j, span) in item.spans.iter_mut().enumerate() {
            if let Some(quote) = reply::repair_quote(span, document, shown) {
                repairs.push(format!(
                    "item {i} span {j}: the quote carried the prompt's line-number columns; read without them"
                ));
                span.quote = quote;
            } else if let Some(moved) = reply::relocate_span(span, document, shown) {
                repairs.push(format!(
                    "item {i} span {j}: the quote is not on lines {}-{} but on line {} (the one shown line that holds it)",
                    span.line_start, span.line_end, moved.line_start
                ));
                *span = moved;
            }
        }
    }
    answer.feedback.warnings.extend(repairs);
    reply::hold_values(&mut answer, document, shown);
    reply::unclaimed(&mut answer, document, shown);
    let shape = answer.answer_shape;
    let mut span_problems = 0;
    let mut warnings = Vec::new();
    for (i, item) in answer.items.iter().enumerate() {
        if item.spans.is_empty() {
            span_problems += 1;
            warnings.push(format!("item {i}: the model cited no span"));
        }
        for (j, span) in item.spans.iter().enumerate() {
            let problems = verify_span(span, document, shown);
            if !problems.is_empty() {
                span_problems += 1;
                warnings.push(format!("item {i} span {j}: {}", problems.join("; ")));
            }
        }
    }
    if span_problems > 0 {
        answer.feedback.confidence = answer.feedback.confidence.min(0.2);
        answer.feedback.warnings.extend(warnings);
    }
    if shape == AnswerShape::Single && answer.items.len() > 1 {
        answer.feedback.warnings.push(format!("the model returned {} items for a single answer", answer.items.len()));
    }
    answer.feedback.confidence = answer.feedback.confidence.clamp(0.0, 1.0);
    Reply { answer, json, span_problems, schema_error: None }
}

/// A custom-schema reply: the feedback fields the schema must carry, the
/// rest optional; items keep their JSON.
#[derive(Deserialize)]
struct LooseReply {
    items: Vec<LooseItem>,
    answer_found: bool,
    complete_answer_found: bool,
    warnings: Vec<String>,
    #[serde(default)]
    confidence: Option<f64>,
    #[serde(default)]
    keywords_found: Vec<String>,
    #[serde(default)]
    llm_discovered_keywords: Vec<String>,
    #[serde(default)]
    conflicting_evidence: bool,
    #[serde(default)]
    context_structured: Option<bool>,
    #[serde(default)]
    suggested_clarification: Option<String>,
}

#[derive(Deserialize)]
struct LooseItem {
    spans: Vec<Span>,
    #[serde(default)]
    text: Option<String>,
    #[serde(flatten)]
    rest: serde_json::Map<String, Value>,
}

pub(super) fn parse_custom_reply(
    question: &ParsedQuestion,
    custom: &CustomSchema,
    response: &LlmResponse,
    document: &ParsedDocument,
    shown: &[Passage],
    prompt: &str,
) -> Reply {
    let parsed = serde_json::from_str::<Value>(&response.content)
        .and_then(|json| serde_json::from_value::<LooseReply>(json.clone()).map(|loose| (json, loose)));
    let (json, loose) = match parsed {
        Ok(ok) => ok,
        Err(error) => {
            let reply_id = if response.id.is_empty() { String::new() } else { format!(" {}", response.id) };
            let answer = failure(
                question,
                custom.name(),
                format!("the model reply{reply_id} is not valid JSON for the custom schema: {error}"),
            );
            return Reply { answer, json: None, span_problems: 0, schema_error: None };
        }
    };
    let items = loose
        .items
        .into_iter()
        .map(|item| {
            // The item's value: its `value` property when the schema has one,
            // else every property but spans and text.
            let value = match item.rest.get("value") {
                Some(value) => value.clone(),
                None => Value::Object(item.rest),
            };
            Item { value: AnswerValue::Text(value.to_string()), text: item.text, spans: item.spans }
        })
        .collect();
    let answer = Answer {
        answer_shape: question.answer_shape,
        answer_type: custom.name().to_owned(),
        items,
        extraction_method: ExtractionMethod::Llm,
        feedback: AnswerFeedback {
            answer_found: loose.answer_found,
            complete_answer_found: loose.complete_answer_found,
            confidence: loose.confidence.unwrap_or(if loose.answer_found { 0.5 } else { 0.0 }),
            warnings: loose.warnings,
            keywords_found: loose.keywords_found,
            llm_discovered_keywords: loose.llm_discovered_keywords,
            conflicting_evidence: loose.conflicting_evidence,
            context_structured: loose.context_structured.unwrap_or(true),
            suggested_clarification: loose.suggested_clarification,
        },
    };
    check_spans(answer, Some(json), document, shown, prompt)
}
