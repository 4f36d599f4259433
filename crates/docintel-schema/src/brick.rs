//! The brick contracts. Implementations live in the brick crates; every brick
//! has a deterministic one, and LLM-backed ones sit behind the same trait.
//!
//! Each trait has an associated error type so every brick keeps its own
//! error enum (one variant per cause of failure).

use serde::{Deserialize, Serialize};

use crate::answer::Answer;
use crate::document::{DocumentProfile, ParsedDocument};
use crate::question::ParsedQuestion;
use crate::retrieval::{Passage, Retrieval};

/// Turns the user's string into a [`ParsedQuestion`].
pub trait QuestionParser {
    /// The brick's error type.
    type Error: std::error::Error + Send + Sync + 'static;
    /// Parses `question` for a document with this profile (the profile drives
    /// activation downgrades: no TOC → no TOC navigation, and so on).
    fn parse(&self, question: &str, profile: &DocumentProfile) -> Result<ParsedQuestion, Self::Error>;
    /// Name and version for the audit trail (`rules/0.1`).
    fn name(&self) -> String;
}

/// Selects candidate passages for a parsed question.
pub trait Retriever {
    /// The brick's error type.
    type Error: std::error::Error + Send + Sync + 'static;
    /// Ranks passages of `document` for `question`.
    fn retrieve(
        &self,
        question: &ParsedQuestion,
        document: &ParsedDocument,
        trace: &mut dyn TraceSink,
    ) -> Result<Retrieval, Self::Error>;
    /// Name and version for the audit trail.
    fn name(&self) -> String;
}

/// Answers from the passages shown, with spans.
pub trait Generator {
    /// The brick's error type.
    type Error: std::error::Error + Send + Sync + 'static;
    /// Produces a typed answer from `passages` (all inside `document`).
    fn generate(
        &self,
        question: &ParsedQuestion,
        document: &ParsedDocument,
        passages: &[Passage],
        trace: &mut dyn TraceSink,
    ) -> Result<Generation, Self::Error>;
    /// Name and version for the audit trail.
    fn name(&self) -> String;
}

/// What a generator returns: the answer plus what it did to get it.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    /// The typed answer (citations not yet verified).
    pub answer: Answer,
    /// The strategy executed (`combined`, `sequential`).
    pub strategy_executed: String,
    /// Why it stopped: `sufficient` (a reply found a complete, cleanly cited
    /// answer), `exhausted` (no passage left), `gathered` (a list split to
    /// fit the model's context, gathered from every call), `token_budget` or
    /// `time_budget` (the caller's budget would be or was exceeded).
    pub exit: String,
    /// Iterations (model calls or extraction rounds).
    pub iterations: u32,
    /// Passages actually shown (sequential may stop early).
    pub passages_shown: Vec<Passage>,
    /// Prompt fragments applied.
    pub fragments_applied: Vec<String>,
    /// Template version.
    pub template_version: String,
    /// The model that answered, if any.
    pub model: Option<String>,
    /// Token usage.
    pub usage: Usage,
    /// One record per model call, in order (empty for generators without a model).
    pub calls: Vec<GenerationCall>,
    /// Decisions taken while generating (a strategy switch for headroom, a
    /// budget exit), in plain words.
    pub notes: Vec<String>,
    /// The answer as the model returned it, when a caller-supplied (custom)
    /// schema was used: the typed [`Answer`] then holds each item's value as
    /// compact JSON text.
    pub answer_json: Option<serde_json::Value>,
}

/// What one model call of a generation cost and said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenerationCall {
    /// 1-based call index.
    pub call: u32,
    /// Passages shown in this call.
    pub passages: usize,
    /// Input tokens estimated from the request text before sending.
    pub estimated_input_tokens: u64,
    /// Usage the transport reported.
    pub usage: Usage,
    /// Whether this reply found an answer.
    pub answer_found: bool,
    /// Whether this reply said the answer is complete.
    pub complete_answer_found: bool,
}

/// Token usage of one or more model calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's cache.
    pub cached_tokens: u64,
}

/// A chat message for a language model.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// Message text.
    pub content: String,
}

/// One structured-output request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmRequest {
    /// Model name (a row of the models table).
    pub model: String,
    /// The conversation.
    pub messages: Vec<ChatMessage>,
    /// Schema name.
    pub schema_name: String,
    /// Strict JSON Schema the reply must follow.
    pub schema: serde_json::Value,
    /// Sampling temperature (docintel always sends 0).
    pub temperature: f32,
    /// Output token cap.
    pub max_output_tokens: Option<u32>,
}

/// One model reply, with the raw response kept verbatim for the trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmResponse {
    /// Provider's response id.
    pub id: String,
    /// Model that answered.
    pub model: String,
    /// The JSON text of the reply.
    pub content: String,
    /// Why generation stopped (`stop`, `length`, ...).
    pub finish_reason: String,
    /// Token usage.
    pub usage: Usage,
    /// The raw response body, verbatim.
    pub raw: serde_json::Value,
}

impl LlmResponse {
    /// The response of a reply cut at the output token limit (see
    /// [`LanguageModel::cut_reply`]), read leniently from its raw body: id,
    /// model and usage; no content is trusted.
    pub fn cut(raw: &serde_json::Value) -> LlmResponse {
        let text = |key: &str| raw.get(key).and_then(serde_json::Value::as_str).unwrap_or_default().to_owned();
        let count = |pointer: &str| raw.pointer(pointer).and_then(serde_json::Value::as_u64).unwrap_or(0);
        LlmResponse {
            id: text("id"),
            model: text("model"),
            content: String::new(),
            finish_reason: "length".to_owned(),
            usage: Usage {
                input_tokens: count("/usage/prompt_tokens"),
                output_tokens: count("/usage/completion_tokens"),
                cached_tokens: count("/usage/prompt_tokens_details/cached_tokens"),
            },
            raw: raw.clone(),
        }
    }
}

/// A language-model transport (OpenAI-compatible server, replay, ...).
pub trait LanguageModel {
    /// The transport's error type.
    type Error: std::error::Error + Send + Sync + 'static;
    /// Sends one request and returns the reply.
    fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, Self::Error>;

    /// When `error` is a reply cut at the output token limit, that reply's
    /// raw body. Such a reply reached us but is not an answer: a caller may
    /// record it and treat the call like an unusable reply instead of
    /// aborting. The default says no error is of that kind.
    fn cut_reply(error: &Self::Error) -> Option<&serde_json::Value> {
        let _ = error;
        None
    }

    /// When `error` is the server refusing a prompt longer than the model's
    /// context: the window it named, if it named one. A caller may split the
    /// passages and ask again instead of failing the question. The default
    /// says no error is of that kind.
    fn context_overflow(error: &Self::Error) -> Option<ContextOverflow> {
        let _ = error;
        None
    }

    /// Sends `request` with `png_images` (PNG files) shown after the text of
    /// its last user message (OpenAI-compatible `image_url` content parts).
    /// `None` when the transport cannot show images at all (the default): the
    /// caller goes on without them.
    fn complete_with_images(
        &self,
        request: &LlmRequest,
        png_images: &[Vec<u8>],
    ) -> Option<Result<LlmResponse, Self::Error>> {
        let _ = (request, png_images);
        None
    }

    /// Whether `error` is the server refusing image content (a model that
    /// does not read images). The default says no error is of that kind.
    fn rejects_images(error: &Self::Error) -> bool {
        let _ = error;
        false
    }
}

/// A prompt the server refused as longer than the model's context window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextOverflow {
    /// The context window in tokens, when the server's message gives it.
    pub window: Option<u64>,
}

/// One decision recorded in the audit trail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceEvent {
    /// The brick that decided (`parse`, `question`, `retrieve`, `generate`, `pipeline`).
    pub brick: String,
    /// The step within the brick (`keyword_search`, `validate`, ...).
    pub step: String,
    /// Structured detail.
    pub detail: serde_json::Value,
}

/// Receives decisions as they are made (shaped like ripgrep's `Sink`).
pub trait TraceSink {
    /// Records one event.
    fn record(&mut self, event: TraceEvent);
}

/// A sink that drops everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct NullSink;

impl TraceSink for NullSink {
    fn record(&mut self, _event: TraceEvent) {}
}

impl TraceSink for Vec<TraceEvent> {
    fn record(&mut self, event: TraceEvent) {
        self.push(event);
    }
}
