//! The typed trace: [`Event`], one enum of the decisions a question's audit
//! trail records, and [`TRACE_FORMAT_VERSION`], the format of
//! `pipeline_trace.json` (written by docintel-trace).
//!
//! On disk every event keeps the shape of a [`TraceEvent`] record —
//! `{"brick", "step", "detail"}` — so a reader that only lists decisions
//! (`docintel trace show`) reads any format. The steps the pipeline reads back
//! (replay) have a typed detail; every other brick decision is
//! [`Event::Other`], its detail kept as written. Serde goes through the record:
//! (brick, step) names the variant, the detail is its payload.
//!
//! Format history: 1 (no `format_version` field) stored the passages of a model
//! call as `"p<page> l<start>-<end>"` labels and the passages shown only in
//! `_meta`; 2 stores them as [`PassageRef`] structs, and the passages shown in
//! the `validate` event.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{CitationProblem, ParsedQuestion, Passage, TraceEvent, Usage};

/// The format of `pipeline_trace.json` this build writes and replays.
pub const TRACE_FORMAT_VERSION: u32 = 2;

/// A passage as a line range on a page (what a trace records of the passages a
/// model was shown).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassageRef {
    /// The page the passage is on.
    pub page: u32,
    /// First line (global line id).
    pub line_start: u32,
    /// Last line, inclusive.
    pub line_end: u32,
}

impl From<&Passage> for PassageRef {
    fn from(p: &Passage) -> PassageRef {
        PassageRef { page: p.page, line_start: p.line_start, line_end: p.line_end }
    }
}

impl PassageRef {
    /// The passage these lines make (no score, anchored on its first line, no
    /// keyword matched): what a prompt or a citation check needs of it.
    pub fn to_passage(self) -> Passage {
        Passage {
            line_start: self.line_start,
            line_end: self.line_end,
            page: self.page,
            score: 0.0,
            anchor_line: self.line_start,
            matched_keywords: Vec::new(),
            pinned: false,
        }
    }
}

/// One decision of a question's audit trail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "TraceEvent", into = "TraceEvent")]
pub enum Event {
    /// `parse/document`: which document was read.
    Document(DocumentRead),
    /// `parse/invisible_lines`: lines withheld because they do not show on the page.
    InvisibleLines(LineNote),
    /// `question/parse`: the question as parsed, the caller's overrides applied.
    QuestionParsed(Box<ParsedQuestion>),
    /// `generate/few_shot`: the examples picked from the caller's bank.
    FewShot(FewShot),
    /// `generate/passages`: the passages generation read in one round, whole.
    Passages(RoundPassages),
    /// `generate/llm_response`: one model call of generation, prompts and raw reply.
    LlmResponse(Box<LlmCall>),
    /// `retrieve/llm_route`: one model call of TOC routing.
    LlmRoute(LlmRoute),
    /// `generate/validate`: the citation check of one round.
    Validate(Validation),
    /// `generate/feedback_retry`: another round, with the keywords the model discovered.
    FeedbackRetry(FeedbackRetry),
    /// `generate/instruction_like_text`: shown lines that read like instructions to a model.
    InstructionLikeText(InstructionLines),
    /// Any other brick decision, its detail as the brick wrote it.
    Other(TraceEvent),
}

/// `parse/document`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentRead {
    /// The absolute path read.
    pub path: String,
    /// The SHA-256 of its bytes.
    pub sha256: String,
    /// Its folder key.
    pub key: String,
}

/// Lines and why they are noted (`parse/invisible_lines`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineNote {
    /// The global line ids.
    pub line_ids: Vec<u32>,
    /// What was done with them.
    pub note: String,
}

/// `generate/few_shot`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FewShot {
    /// The bank file.
    pub bank: String,
    /// Examples in the bank.
    pub bank_size: usize,
    /// The tags the picks were matched on.
    pub tags: Vec<String>,
    /// The examples picked, best first.
    pub picked: Vec<FewShotPick>,
}

/// One example picked for the prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FewShotPick {
    /// Its line in the bank (0-based).
    pub index: usize,
    /// Its similarity score.
    pub score: f64,
    /// The example question.
    pub question: String,
    /// The example answer, as JSON text.
    pub answer_json: String,
}

/// `generate/passages`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundPassages {
    /// The round (1-based).
    pub round: u32,
    /// The passages, in rank order, scores and anchors included.
    pub passages: Vec<Passage>,
}

/// `generate/llm_response`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmCall {
    /// The call (1-based).
    pub call: u32,
    /// The answer schema's name.
    pub schema: String,
    /// The passages shown in this call.
    pub passages: Vec<PassageRef>,
    /// The prompt's estimated size.
    pub estimated_input_tokens: u64,
    /// What the server counted.
    pub usage: Usage,
    /// The reply's feedback.
    pub answer_found: bool,
    /// The reply's feedback.
    pub complete_answer_found: bool,
    /// Spans of the reply that did not check out.
    pub span_problems: usize,
    /// Whether the reply was cut at the output token limit.
    pub cut_at_token_limit: bool,
    /// What was sent, verbatim.
    pub request: LlmRequestSent,
    /// The server's reply, verbatim.
    pub raw: Value,
}

/// The messages of one model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmRequestSent {
    /// The system prompt.
    pub system: Option<String>,
    /// The user prompt.
    pub user: Option<String>,
    /// The correction asked after a reply that did not follow the schema.
    pub correction: Option<String>,
    /// The schema's name in the request.
    pub schema_name: String,
    /// Few-shot examples in the system prompt.
    pub few_shot_examples: usize,
}

/// `retrieve/llm_route`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmRoute {
    /// The call within the round (1-based).
    pub call: usize,
    /// The round (1-based).
    pub round: u32,
    /// The model asked.
    pub model: String,
    /// What the server counted.
    pub usage: Usage,
    /// The server's reply, verbatim.
    pub raw: Value,
}

/// `generate/validate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Validation {
    /// The round (1-based).
    pub round: u32,
    /// Whether every citation checked out.
    pub citations_verified: bool,
    /// The problems found.
    pub problems: Vec<CitationProblem>,
    /// The passages the generator was shown (what the citations were checked against).
    pub passages_shown: Vec<PassageRef>,
}

/// `generate/feedback_retry`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedbackRetry {
    /// The round that was insufficient.
    pub round: u32,
    /// Why another round runs.
    pub reason: String,
    /// The keywords added to the question.
    pub keywords: Vec<String>,
}

/// `generate/instruction_like_text`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstructionLines {
    /// The lines shown that read like instructions.
    pub line_ids: Vec<u32>,
    /// Those the answer cites.
    pub cited: Vec<u32>,
    /// The note in `_meta`.
    pub note: String,
}

impl Event {
    /// The brick and step the event is recorded under.
    pub fn brick_step(&self) -> (&str, &str) {
        match self {
            Event::Document(_) => ("parse", "document"),
            Event::InvisibleLines(_) => ("parse", "invisible_lines"),
            Event::QuestionParsed(_) => ("question", "parse"),
            Event::FewShot(_) => ("generate", "few_shot"),
            Event::Passages(_) => ("generate", "passages"),
            Event::LlmResponse(_) => ("generate", "llm_response"),
            Event::LlmRoute(_) => ("retrieve", "llm_route"),
            Event::Validate(_) => ("generate", "validate"),
            Event::FeedbackRetry(_) => ("generate", "feedback_retry"),
            Event::InstructionLikeText(_) => ("generate", "instruction_like_text"),
            Event::Other(event) => (&event.brick, &event.step),
        }
    }
}

impl From<Event> for TraceEvent {
    fn from(event: Event) -> TraceEvent {
        let (brick, step) = event.brick_step();
        let (brick, step) = (brick.to_owned(), step.to_owned());
        let detail = match event {
            Event::Other(event) => return event,
            Event::Document(d) => serde_json::to_value(d),
            Event::InvisibleLines(d) => serde_json::to_value(d),
            Event::QuestionParsed(d) => serde_json::to_value(d),
            Event::FewShot(d) => serde_json::to_value(d),
            Event::Passages(d) => serde_json::to_value(d),
            Event::LlmResponse(d) => serde_json::to_value(d),
            Event::LlmRoute(d) => serde_json::to_value(d),
            Event::Validate(d) => serde_json::to_value(d),
            Event::FeedbackRetry(d) => serde_json::to_value(d),
            Event::InstructionLikeText(d) => serde_json::to_value(d),
        };
        // These types hold no map with non-string keys: serialising them cannot fail.
        TraceEvent { brick, step, detail: detail.unwrap_or_default() }
    }
}

/// A record whose (brick, step) names a typed event but whose detail is not that event's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventError {
    /// `brick/step`.
    pub step: String,
    /// What does not fit.
    pub message: String,
}

impl std::fmt::Display for EventError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "trace event {}: {}", self.step, self.message)
    }
}

impl std::error::Error for EventError {}

impl TryFrom<TraceEvent> for Event {
    type Error = EventError;

    fn try_from(event: TraceEvent) -> Result<Event, EventError> {
        fn typed<T: serde::de::DeserializeOwned>(event: &TraceEvent) -> Result<T, EventError> {
            T::deserialize(&event.detail)
                .map_err(|e| EventError { step: format!("{}/{}", event.brick, event.step), message: e.to_string() })
        }
        Ok(match (event.brick.as_str(), event.step.as_str()) {
            ("parse", "document") => Event::Document(typed(&event)?),
            ("parse", "invisible_lines") => Event::InvisibleLines(typed(&event)?),
            ("question", "parse") => Event::QuestionParsed(typed(&event)?),
            ("generate", "few_shot") => Event::FewShot(typed(&event)?),
            ("generate", "passages") => Event::Passages(typed(&event)?),
            ("generate", "llm_response") => Event::LlmResponse(typed(&event)?),
            ("retrieve", "llm_route") => Event::LlmRoute(typed(&event)?),
            ("generate", "validate") => Event::Validate(typed(&event)?),
            ("generate", "feedback_retry") => Event::FeedbackRetry(typed(&event)?),
            ("generate", "instruction_like_text") => Event::InstructionLikeText(typed(&event)?),
            _ => Event::Other(event),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_event_is_written_as_a_record_and_read_back() {
        let event = Event::Validate(Validation {
            round: 2,
            citations_verified: true,
            problems: Vec::new(),
            passages_shown: vec![PassageRef { page: 1, line_start: 12, line_end: 13 }],
        });
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"brick": "generate", "step": "validate", "detail": {
                "round": 2, "citations_verified": true, "problems": [],
                "passages_shown": [{"page": 1, "line_start": 12, "line_end": 13}]}})
        );
        assert_eq!(serde_json::from_value::<Event>(json).unwrap(), event);
        // Another brick's decision stays as written.
        let other = serde_json::json!({"brick": "retrieve", "step": "keyword_search", "detail": {"hits": 3}});
        assert!(matches!(serde_json::from_value::<Event>(other).unwrap(), Event::Other(_)));
        // A typed step whose detail does not fit is an error naming it.
        let bad = serde_json::json!({"brick": "generate", "step": "validate", "detail": {"round": "two"}});
        let error = serde_json::from_value::<Event>(bad).unwrap_err().to_string();
        assert!(error.contains("generate/validate"), "{error}");
    }
}
