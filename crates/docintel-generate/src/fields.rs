//! Multi-field extraction in one model call: a [`FieldExtraction<T>`] whose
//! every field ([`ExtractedField`]) carries its own value and evidence, and
//! [`verify_field_citations`], which walks every field and lists the quotes
//! not found in the cited source lines.
//!
//! `T` is any struct of [`ExtractedField`]s (nested structs are walked too);
//! [`InvoiceFields`] is a ready-made one. The field descriptions sent to the
//! model are the doc comments of `T` (schemars puts them in the schema).

use docintel_schema::registry::to_strict;
use docintel_schema::{
    Amount, ChatMessage, DateValue, ExtractedField, FieldExtraction, LanguageModel, LlmRequest, LlmResponse,
    ParsedDocument, ParsedQuestion, Passage, Span, TraceEvent, TraceSink,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::llm::LlmGenerateError;
use crate::prompt;
use crate::validate::verify_span;

/// Version of the field-extraction prompt; bump on any wording change.
pub const FIELDS_TEMPLATE_VERSION: &str = "llm-fields/0.1";

/// The contract of a field-extraction call.
pub const FIELDS_BASE: &str = "\
You read numbered lines of a document and fill the named fields of the given JSON schema.

Rules:
1. Use only the passages in the user message. No outside knowledge, no guessing.
2. For every field: if the passages state it, set found to true, value to the value, quote to text copied character for character from the cited lines, line_start and line_end to numbers from the GLOBAL_LINE column (the first column, never line_in_page), page to the page column of line_start, and warning to null.
3. If a field is not in the passages: found is false, value, quote, page, line_start and line_end are null, and warning says what you looked for.
4. answer_found is true when at least one field was found; complete_answer_found is true only when every field was found. warnings lists what is missing or doubtful.
5. Amounts: value without thousands separators, currency as an ISO 4217 code or null. Dates: iso is YYYY-MM-DD, original as written.
6. keywords_found lists question keywords present in the passages; llm_discovered_keywords lists words that would help a new search find a missing field; confidence is between 0 and 1; conflicting_evidence and context_structured as the passages warrant; suggested_clarification is null.";

/// The four usual fields of an invoice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InvoiceFields {
    /// The invoice number (identifier printed as "Invoice No", "Invoice Number", "Facture n°"...).
    pub number: ExtractedField<String>,
    /// The invoice date (issue date, not the due date nor the order date).
    pub date: ExtractedField<DateValue>,
    /// The total amount to pay, taxes included.
    pub total: ExtractedField<Amount>,
    /// The company that issued the invoice (seller), not the customer.
    pub vendor: ExtractedField<String>,
}

/// One field whose evidence did not verify.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldProblem {
    /// Dotted path of the field (`total`, `address.city`).
    pub field: String,
    /// What is wrong.
    pub problem: String,
}

/// The outcome of one field-extraction call.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldOutcome<T> {
    /// The fields as the model filled them.
    pub extraction: FieldExtraction<T>,
    /// Evidence problems (empty: every found field verified).
    pub problems: Vec<FieldProblem>,
    /// The model's reply (usage, raw body).
    pub response: LlmResponse,
    /// The request sent.
    pub request: LlmRequest,
}

/// The request for extracting `T` from `passages`: [`FIELDS_BASE`] as the
/// system prompt, the usual passage table as the user prompt, the strict
/// schema of `FieldExtraction<T>` as the response format.
pub fn field_request<T: JsonSchema>(
    model_name: &str,
    question: &ParsedQuestion,
    document: &ParsedDocument,
    passages: &[Passage],
    max_output_tokens: Option<u32>,
) -> LlmRequest {
    let schema = to_strict(schemars::schema_for!(FieldExtraction<T>).to_value());
    let name = format!("fields_{}", sanitize(&T::schema_name()));
    LlmRequest {
        model: model_name.to_owned(),
        messages: vec![
            ChatMessage { role: "system".to_owned(), content: FIELDS_BASE.to_owned() },
            ChatMessage { role: "user".to_owned(), content: prompt::build_user_prompt(question, document, passages) },
        ],
        schema_name: name,
        schema,
        temperature: 0.0,
        max_output_tokens,
    }
}

fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

/// Extracts `T` in one call and verifies every field's evidence. A reply that
/// does not parse is [`LlmGenerateError::InvalidFieldReply`] (a field
/// extraction has no honest empty value to fall back on); the raw reply is in
/// the trace either way.
pub fn extract_fields<T, L>(
    model: &L,
    model_name: &str,
    question: &ParsedQuestion,
    document: &ParsedDocument,
    passages: &[Passage],
    trace: &mut dyn TraceSink,
) -> Result<FieldOutcome<T>, LlmGenerateError>
where
    T: JsonSchema + DeserializeOwned + Serialize,
    L: LanguageModel,
{
    if let Some(bad) = crate::first_passage_out_of_document(document, passages) {
        return Err(LlmGenerateError::PassageOutOfDocument {
            index: bad.index,
            line_start: bad.line_start,
            line_end: bad.line_end,
            n_lines: bad.n_lines,
        });
    }
    let request = field_request::<T>(model_name, question, document, passages, Some(1024));
    let response = model.complete(&request).map_err(|e| LlmGenerateError::Model { call: 1, source: Box::new(e) })?;
    trace.record(TraceEvent {
        brick: "generate".to_owned(),
        step: "llm_fields_response".to_owned(),
        detail: json!({"schema": request.schema_name, "template": FIELDS_TEMPLATE_VERSION, "usage": response.usage, "raw": response.raw}),
    });
    let extraction: FieldExtraction<T> = serde_json::from_str(&response.content)
        .map_err(|e| LlmGenerateError::InvalidFieldReply { id: response.id.clone(), reason: e.to_string() })?;
    let problems = verify_field_citations(&extraction, document, passages);
    trace.record(TraceEvent {
        brick: "generate".to_owned(),
        step: "validate_fields".to_owned(),
        detail: json!({"problems": problems}),
    });
    Ok(FieldOutcome { extraction, problems, response, request })
}

/// Walks every field of `extraction` (nested objects too) and checks the
/// evidence of each: a found field needs a quote and line numbers, and the
/// span must verify ([`verify_span`]: real lines, inside one passage shown,
/// right page, quote in the lines); a field marked not found must not carry a
/// value.
pub fn verify_field_citations<T: Serialize>(
    extraction: &FieldExtraction<T>,
    document: &ParsedDocument,
    shown: &[Passage],
) -> Vec<FieldProblem> {
    let mut problems = Vec::new();
    match serde_json::to_value(&extraction.fields) {
        Ok(fields) => walk(&fields, "", document, shown, &mut problems),
        Err(e) => {
            problems.push(FieldProblem { field: String::new(), problem: format!("fields do not serialise: {e}") })
        }
    }
    problems
}

fn walk(node: &Value, path: &str, document: &ParsedDocument, shown: &[Passage], out: &mut Vec<FieldProblem>) {
    let Some(object) = node.as_object() else { return };
    if let Some(found) = object.get("found").and_then(Value::as_bool) {
        let mut push = |problem: String| out.push(FieldProblem { field: path.to_owned(), problem });
        let value_present = !object.get("value").is_none_or(Value::is_null);
        if !found {
            if value_present {
                push("a value is given but found is false".to_owned());
            }
            return;
        }
        if !value_present {
            push("found is true but there is no value".to_owned());
        }
        let line = |key: &str| object.get(key).and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok());
        let quote = object.get("quote").and_then(Value::as_str);
        match (line("line_start"), quote) {
            (Some(line_start), Some(quote)) => {
                let line_end = line("line_end").unwrap_or(line_start);
                let page = line("page").or_else(|| document.line(line_start).map(|l| l.page)).unwrap_or(0);
                let span = Span { line_start, line_end, page, quote: quote.to_owned() };
                for problem in verify_span(&span, document, shown) {
                    push(problem);
                }
            }
            _ => push("found but without quote and line numbers".to_owned()),
        }
        return;
    }
    for (key, child) in object {
        let child_path = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
        walk(child, &child_path, document, shown, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{doc, passage};
    use docintel_schema::AnswerFeedback;

    fn field<V>(value: Option<V>, line: Option<u32>, quote: Option<&str>) -> ExtractedField<V> {
        ExtractedField {
            found: value.is_some(),
            value,
            quote: quote.map(str::to_owned),
            page: line.map(|_| 1),
            line_start: line,
            line_end: line,
            warning: None,
        }
    }

    #[test]
    fn every_field_is_walked_and_bad_quotes_are_listed() {
        let document = doc(&[("ACME Ltd", 1), ("Invoice No 1234", 1), ("Date 2024-01-05", 1), ("Total EUR 10.00", 1)]);
        let shown = [passage(1, 4, 1)];
        let extraction = FieldExtraction {
            fields: InvoiceFields {
                number: field(Some("1234".to_owned()), Some(2), Some("Invoice No 1234")),
                date: field(
                    Some(DateValue { iso: "2024-01-05".into(), original: "2024-01-05".into() }),
                    Some(3),
                    Some("Date 2024-01-06"),
                ),
                total: field(
                    Some(Amount { value: 10.0, currency: Some("EUR".into()), unit: None }),
                    Some(9),
                    Some("10.00"),
                ),
                vendor: field(Some("ACME".to_owned()), None, None),
            },
            feedback: AnswerFeedback::not_found("x"),
        };
        let problems = verify_field_citations(&extraction, &document, &shown);
        let fields: Vec<&str> = problems.iter().map(|p| p.field.as_str()).collect();
        assert!(!fields.contains(&"number"), "{problems:?}");
        assert!(
            problems.iter().any(|p| p.field == "date" && p.problem.contains("not found in lines 3-3")),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(|p| p.field == "total" && p.problem.contains("line 9 does not exist")),
            "{problems:?}"
        );
        assert!(problems.iter().any(|p| p.field == "vendor" && p.problem.contains("without quote")), "{problems:?}");
    }

    #[test]
    fn not_found_fields_must_not_carry_values() {
        let document = doc(&[("a", 1)]);
        let mut number = field(Some("1".to_owned()), None, None);
        number.found = false;
        let extraction = FieldExtraction {
            fields: json!({"number": number, "nested": {"city": field::<String>(None, None, None)}}),
            feedback: AnswerFeedback::not_found("x"),
        };
        let problems = verify_field_citations(&extraction, &document, &[passage(1, 1, 1)]);
        assert_eq!(
            problems,
            [FieldProblem { field: "number".into(), problem: "a value is given but found is false".into() }]
        );
    }
}
