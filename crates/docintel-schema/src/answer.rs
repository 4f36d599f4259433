//! The answer schema family: spans, typed values, the feedback fields every
//! answer carries, and multi-field extraction.
//!
//! Two views of one contract:
//! - [`TypedAnswer<V>`] is what a model (or the extractive generator) fills for
//!   one registry entry; its JSON Schema is what structured output enforces.
//! - [`Answer`] is the runtime value every brick passes around and the CLI
//!   prints, with the value as the closed enum [`AnswerValue`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A citation: the source lines an item was read from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Span {
    /// First cited line (global line id, the GLOBAL_LINE column).
    pub line_start: u32,
    /// Last cited line, inclusive.
    pub line_end: u32,
    /// The page of `line_start`, 1-based.
    pub page: u32,
    /// Verbatim text from the cited lines.
    pub quote: String,
}

/// A monetary amount.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Amount {
    /// The number, in `unit`s.
    pub value: f64,
    /// ISO 4217 code (`USD`, `EUR`, `INR`), `None` when the document names none.
    pub currency: Option<String>,
    /// Scale word when the document states one: `thousand`, `million`, `billion`.
    pub unit: Option<String>,
}

/// A number read from a document that is not money: a count, a rate or
/// percentage, a measure, a duration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Quantity {
    /// The number as printed (a percentage in percent: `5` for `5%`).
    pub quantity: f64,
    /// The unit as printed, singular or plural as the document writes it
    /// (`%`, `days`, `months`, `heads`); `None` for a bare number.
    pub unit: Option<String>,
}

/// A calendar date.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DateValue {
    /// `YYYY-MM-DD`.
    pub iso: String,
    /// The date as written in the document.
    pub original: String,
}

/// A table answer. Rectangular by construction: every row has one cell per
/// header ([`TableValue::new`] checks; deserialisation goes through it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(try_from = "UncheckedTable")]
pub struct TableValue {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

#[derive(Deserialize, JsonSchema)]
struct UncheckedTable {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl TryFrom<UncheckedTable> for TableValue {
    type Error = String;
    fn try_from(raw: UncheckedTable) -> Result<Self, String> {
        TableValue::new(raw.headers, raw.rows)
    }
}

impl TableValue {
    /// Builds a table, refusing ragged rows.
    pub fn new(headers: Vec<String>, rows: Vec<Vec<String>>) -> Result<TableValue, String> {
        if let Some((index, row)) = rows.iter().enumerate().find(|(_, row)| row.len() != headers.len()) {
            return Err(format!("table row {index} has {} cells but there are {} headers", row.len(), headers.len()));
        }
        Ok(TableValue { headers, rows })
    }
    /// Column names.
    pub fn headers(&self) -> &[String] {
        &self.headers
    }
    /// Rows, each as long as `headers`.
    pub fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }
}

/// A typed answer value at run time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AnswerValue {
    /// `{"value": number, "currency": "USD", "unit": null}`.
    Amount(Amount),
    /// `{"quantity": number, "unit": "%"}`.
    Quantity(Quantity),
    /// `{"iso": "YYYY-MM-DD", "original": "..."}`.
    Date(DateValue),
    /// `{"headers": [...], "rows": [[...]]}`.
    Table(TableValue),
    /// `true` / `false`.
    Boolean(bool),
    /// A string.
    Text(String),
}

impl std::fmt::Display for AnswerValue {
    /// The value as a person reads it: `4.11 million USD`, `2014-08-03 (Aug 3, 2014)`,
    /// `yes`, the text, or a table as `header | header / cell | cell`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnswerValue::Amount(a) => {
                write!(f, "{}", Figure(a.value))?;
                for part in [&a.unit, &a.currency].into_iter().flatten() {
                    write!(f, " {part}")?;
                }
                Ok(())
            }
            AnswerValue::Quantity(q) => match q.unit.as_deref() {
                Some("%") => write!(f, "{}%", Figure(q.quantity)),
                Some(unit) => write!(f, "{} {unit}", Figure(q.quantity)),
                None => write!(f, "{}", Figure(q.quantity)),
            },
            AnswerValue::Date(d) => write!(f, "{} ({})", d.iso, d.original),
            AnswerValue::Boolean(b) => f.write_str(if *b { "yes" } else { "no" }),
            AnswerValue::Text(t) => f.write_str(t),
            AnswerValue::Table(t) => {
                f.write_str(&t.headers().join(" | "))?;
                for row in t.rows() {
                    write!(f, " / {}", row.join(" | "))?;
                }
                Ok(())
            }
        }
    }
}

/// A number as a person reads it: plain digits for everyday magnitudes, a
/// power of ten past a quadrillion or under a millionth (`1.2e21` FLOPs,
/// `1e-9`), where plain digits run to a line of zeros.
struct Figure(f64);

impl std::fmt::Display for Figure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = self.0;
        if v != 0.0 && v.is_finite() && !(1e-6..1e15).contains(&v.abs()) {
            write!(f, "{v:e}")
        } else {
            write!(f, "{v}")
        }
    }
}

/// One element of an answer: a value with the spans it was read from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Item<V> {
    /// The typed value.
    pub value: V,
    /// The value as it reads in the document (or a short paraphrase).
    pub text: Option<String>,
    /// Where it was read; at least one span per item. Bounded in the schema
    /// so a small model cannot loop on spans until its token cap.
    #[schemars(length(min = 1, max = 4))]
    pub spans: Vec<Span>,
}

/// How an answer was produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExtractionMethod {
    /// Deterministic extraction from the passages, no model.
    Extractive,
    /// A language model with structured output.
    Llm,
}

/// The feedback fields every answer carries next to its items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AnswerFeedback {
    /// Whether an answer was found in the passages.
    pub answer_found: bool,
    /// Whether the answer is complete (false when only part was found).
    pub complete_answer_found: bool,
    /// Confidence in [0, 1].
    pub confidence: f64,
    /// What was and was not found, in plain words.
    #[schemars(length(max = 8))]
    pub warnings: Vec<String>,
    /// Question keywords found in the passages.
    #[schemars(length(max = 8))]
    pub keywords_found: Vec<String>,
    /// Words the generator saw in the passages that would help a retry.
    #[schemars(length(max = 8))]
    pub llm_discovered_keywords: Vec<String>,
    /// Whether the passages disagree.
    pub conflicting_evidence: bool,
    /// Whether the passages were well-formed enough to read.
    pub context_structured: bool,
    /// A clarifying question to offer the user.
    pub suggested_clarification: Option<String>,
}

impl AnswerFeedback {
    /// The feedback of an honest "not found".
    pub fn not_found(warning: impl Into<String>) -> AnswerFeedback {
        AnswerFeedback {
            answer_found: false,
            complete_answer_found: false,
            confidence: 0.0,
            warnings: vec![warning.into()],
            keywords_found: Vec::new(),
            llm_discovered_keywords: Vec::new(),
            conflicting_evidence: false,
            context_structured: true,
            suggested_clarification: None,
        }
    }
}

/// The schema a generator fills for one registry entry: items of one value
/// type plus the feedback fields. `extraction_method` and the shape/type are
/// filled by the pipeline, not the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TypedAnswer<V> {
    /// The answer items; empty when nothing was found.
    pub items: Vec<Item<V>>,
    /// Feedback fields.
    #[serde(flatten)]
    pub feedback: AnswerFeedback,
}

/// The runtime answer: the JSON contract under `"answer"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// `single`, `listing`, ...
    pub answer_shape: crate::AnswerShape,
    /// `amount`, `date`, `text`, ...
    pub answer_type: String,
    /// The items.
    pub items: Vec<Item<AnswerValue>>,
    /// How it was produced.
    pub extraction_method: ExtractionMethod,
    /// Feedback fields.
    #[serde(flatten)]
    pub feedback: AnswerFeedback,
}

impl Answer {
    /// Converts a typed answer into the runtime form.
    pub fn from_typed<V: Into<AnswerValue>>(
        shape: crate::AnswerShape,
        answer_type: impl Into<String>,
        method: ExtractionMethod,
        typed: TypedAnswer<V>,
    ) -> Answer {
        Answer {
            answer_shape: shape,
            answer_type: answer_type.into(),
            items: typed
                .items
                .into_iter()
                .map(|item| Item { value: item.value.into(), text: item.text, spans: item.spans })
                .collect(),
            extraction_method: method,
            feedback: typed.feedback,
        }
    }

    /// Every span of every item.
    pub fn spans(&self) -> impl Iterator<Item = &Span> {
        self.items.iter().flat_map(|item| item.spans.iter())
    }
}

impl From<Amount> for AnswerValue {
    fn from(v: Amount) -> Self {
        AnswerValue::Amount(v)
    }
}
impl From<Quantity> for AnswerValue {
    fn from(v: Quantity) -> Self {
        AnswerValue::Quantity(v)
    }
}
impl From<DateValue> for AnswerValue {
    fn from(v: DateValue) -> Self {
        AnswerValue::Date(v)
    }
}
impl From<TableValue> for AnswerValue {
    fn from(v: TableValue) -> Self {
        AnswerValue::Table(v)
    }
}
impl From<bool> for AnswerValue {
    fn from(v: bool) -> Self {
        AnswerValue::Boolean(v)
    }
}
impl From<String> for AnswerValue {
    fn from(v: String) -> Self {
        AnswerValue::Text(v)
    }
}

/// One field of a multi-field extraction, with its own evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExtractedField<V> {
    /// The value, `None` when not found.
    pub value: Option<V>,
    /// Whether the field was found.
    pub found: bool,
    /// Verbatim text the value was read from.
    pub quote: Option<String>,
    /// Page of the quote, 1-based.
    pub page: Option<u32>,
    /// First line of the quote (global line id).
    pub line_start: Option<u32>,
    /// Last line of the quote (global line id).
    pub line_end: Option<u32>,
    /// Why it is missing or doubtful.
    pub warning: Option<String>,
}

/// Several named fields extracted in one call (a CV, an invoice): `T` is a
/// struct whose fields are [`ExtractedField`]s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FieldExtraction<T> {
    /// The fields.
    pub fields: T,
    /// Feedback fields for the extraction as a whole.
    #[serde(flatten)]
    pub feedback: AnswerFeedback,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AnswerShape;

    fn span() -> Span {
        Span { line_start: 3, line_end: 4, page: 1, quote: "Total 4.11".into() }
    }

    #[test]
    fn figures_read_as_a_person_writes_them() {
        let q = |quantity: f64| AnswerValue::Quantity(Quantity { quantity, unit: None }).to_string();
        assert_eq!(q(4.11), "4.11");
        assert_eq!(q(76_700.0), "76700");
        assert_eq!(q(1.2e21), "1.2e21");
        assert_eq!(q(1e-9), "1e-9");
        assert_eq!(q(0.0001), "0.0001");
        assert_eq!(q(0.0), "0");
    }

    #[test]
    fn answer_json_contract_round_trips() {
        let typed = TypedAnswer {
            items: vec![Item {
                value: Amount { value: 4.11, currency: Some("USD".into()), unit: None },
                text: Some("$4.11".into()),
                spans: vec![span()],
            }],
            feedback: AnswerFeedback {
                answer_found: true,
                complete_answer_found: true,
                ..AnswerFeedback::not_found("")
            },
        };
        let answer = Answer::from_typed(AnswerShape::Single, "amount", ExtractionMethod::Extractive, typed);
        let value = serde_json::to_value(&answer).unwrap();
        assert_eq!(value["items"][0]["value"], serde_json::json!({"value": 4.11, "currency": "USD", "unit": null}));
        assert_eq!(value["answer_found"], true);
        assert_eq!(value["answer_shape"], "single");
        assert_eq!(value["extraction_method"], "extractive");
        let back: Answer = serde_json::from_value(value).unwrap();
        assert_eq!(back, answer);
    }

    #[test]
    fn untagged_values_deserialize_to_the_right_variant() {
        let check = |json: &str, expected: AnswerValue| {
            assert_eq!(serde_json::from_str::<AnswerValue>(json).unwrap(), expected, "{json}");
        };
        check(
            r#"{"iso":"2014-08-03","original":"Aug 3, 2014"}"#,
            DateValue { iso: "2014-08-03".into(), original: "Aug 3, 2014".into() }.into(),
        );
        check("true", AnswerValue::Boolean(true));
        check(r#"{"quantity":36,"unit":"months"}"#, Quantity { quantity: 36.0, unit: Some("months".into()) }.into());
        check(r#"{"quantity":0.1,"unit":null}"#, Quantity { quantity: 0.1, unit: None }.into());
        check(r#""hello""#, AnswerValue::Text("hello".into()));
        check(
            r#"{"value":1.5,"currency":null,"unit":"million"}"#,
            Amount { value: 1.5, currency: None, unit: Some("million".into()) }.into(),
        );
    }

    #[test]
    fn tables_must_be_rectangular() {
        assert!(TableValue::new(vec!["a".into(), "b".into()], vec![vec!["1".into(), "2".into()]]).is_ok());
        let ragged = TableValue::new(vec!["a".into(), "b".into()], vec![vec!["1".into()]]);
        assert!(ragged.unwrap_err().contains("row 0 has 1 cells"));
        let json = r#"{"headers":["a","b"],"rows":[["1","2"],["3"]]}"#;
        assert!(serde_json::from_str::<TableValue>(json).is_err());
    }

    #[test]
    fn field_extraction_round_trips() {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
        struct Invoice {
            total: ExtractedField<Amount>,
            number: ExtractedField<String>,
        }
        let extraction = FieldExtraction {
            fields: Invoice {
                total: ExtractedField {
                    value: Some(Amount { value: 56.02, currency: Some("EUR".into()), unit: None }),
                    found: true,
                    quote: Some("Total TTC 56,02 €".into()),
                    page: Some(1),
                    line_start: Some(20),
                    line_end: Some(20),
                    warning: None,
                },
                number: ExtractedField {
                    value: None,
                    found: false,
                    quote: None,
                    page: None,
                    line_start: None,
                    line_end: None,
                    warning: Some("no invoice number".into()),
                },
            },
            feedback: AnswerFeedback::not_found("partial"),
        };
        let json = serde_json::to_string(&extraction).unwrap();
        assert_eq!(serde_json::from_str::<FieldExtraction<Invoice>>(&json).unwrap(), extraction);
        let schema = crate::registry::to_strict(schemars::schema_for!(FieldExtraction<Invoice>).to_value());
        assert_eq!(schema["additionalProperties"], false);
    }
}
