//! The LLM generator: the same [`Generator`] contract as the extractive one,
//! answered by any [`LanguageModel`] with strict structured output.
//!
//! It picks the registry schema for the question's (shape, type), composes
//! the prompt ([`crate::prompt`]), and executes the question's chunk
//! strategy:
//! - **combined**: one call with every passage;
//! - **sequential**: the top passage first; stop as soon as a reply says
//!   `answer_found && complete_answer_found` with every span inside the
//!   passage shown (exit `sufficient`), else the next batch, each twice the
//!   size of the one before (1, 2, 4, ... passages, in rank order: a late
//!   hit or a refusal costs a few calls, not one call per passage); when the
//!   passages run out, exit `exhausted` (a not-found answer is an answer).
//!   With a known context window, no batch grows past the headroom.
//!
//! The caller (the dispatcher, through the facade) may set [`DispatchOptions`]:
//! a token budget and a time budget (exits `token_budget` / `time_budget`,
//! checked before each call), and the model's context window. A call's input
//! limit is `headroom` (75%) of the window and never more than the window less
//! the reply cap: a passage whose prompt alone would pass it is read in line
//! pieces that fit; a combined prompt that would pass it switches to
//! sequential, and a list or table split so is gathered from every call (exit
//! `gathered`). A prompt the server still refuses as too long
//! ([`LanguageModel::context_overflow`]) is split in two and asked again.
//! Each is said in [`Generation::notes`]. Every call is
//! recorded in [`Generation::calls`] with its estimated and reported tokens.
//!
//! A caller-supplied schema ([`crate::custom::CustomSchema`]) replaces the
//! registry's: the reply is kept as JSON in [`Generation::answer_json`] and its
//! spans are checked the same way.
//!
//! Every raw reply goes to the trace verbatim (`generate` / `llm_response`).
//! A reply that is not valid JSON for the schema becomes an honest not-found
//! answer with a warning; spans outside the passages shown or outside the
//! document are kept (so [`crate::verify_citations`] flags them) and named in
//! the warnings. A transport failure (server down, timeout after the
//! retries) is an error: the caller decides whether to fall back.
//! A reply cut at the output token limit (see [`LanguageModel::cut_reply`])
//! is kept in the trace and read as an unusable reply (an honest not-found
//! for that call, a warning naming the reply); sequential goes on.
//!
//! The generator and its requests are here; [`dispatch`] runs the chunk
//! strategy, [`replies`] reads and checks what the model answers.

mod dispatch;
mod replies;

use std::time::Duration;

use docintel_schema::registry::RegistryEntry;
use docintel_schema::{
    Answer, AnswerShape, ChatMessage, LanguageModel, LlmRequest, ParsedDocument, ParsedQuestion, Passage,
};
use serde_json::Value;

use crate::custom::CustomSchema;
use crate::prompt::{self, FewShotExample};

/// Default share of the model's context window a combined prompt may fill.
pub const DEFAULT_HEADROOM: f64 = 0.75;

/// Default characters per token for estimates (English prose with BPE
/// tokenizers is close to 4).
pub const DEFAULT_CHARS_PER_TOKEN: f64 = 4.0;

/// Limits the dispatcher sets for one generation. The default has no budget
/// and no known context window (so no headroom switch).
#[derive(Debug, Clone, PartialEq)]
pub struct DispatchOptions {
    /// Tokens (input + output, summed over calls) generation may spend; a
    /// call whose estimated input would cross it is not sent (exit
    /// `token_budget`).
    pub token_budget: Option<u64>,
    /// Wall-clock time generation may take; no call starts after it ran out
    /// (exit `time_budget`).
    pub time_budget: Option<Duration>,
    /// The model's context window in tokens (the models table's
    /// `context_window`), when known.
    pub context_window: Option<u64>,
    /// Share of the context window a combined prompt may fill before
    /// generation switches to sequential.
    pub headroom: f64,
    /// Characters per token for input estimates.
    pub chars_per_token: f64,
}

impl Default for DispatchOptions {
    fn default() -> DispatchOptions {
        DispatchOptions {
            token_budget: None,
            time_budget: None,
            context_window: None,
            headroom: DEFAULT_HEADROOM,
            chars_per_token: DEFAULT_CHARS_PER_TOKEN,
        }
    }
}

/// Estimated input tokens of `request`: characters of every message divided
/// by `chars_per_token`, rounded up (the schema sent as response format is
/// not counted: servers differ on whether it is).
pub fn estimate_input_tokens(request: &LlmRequest, chars_per_token: f64) -> u64 {
    let chars: usize = request.messages.iter().map(|m| m.content.chars().count()).sum();
    let per_token = if chars_per_token.is_finite() && chars_per_token > 0.0 { chars_per_token } else { 4.0 };
    (chars as f64 / per_token).ceil() as u64
}

/// The batches of a sequential read: the top passage alone, then batches
/// doubling in size (1, 2, 4, ...) in rank order. A batch stops growing early
/// when `fits` says the next passage would push it over the headroom; a
/// single passage is always a batch of its own.
pub fn sequential_batches(passages: &[Passage], fits: impl Fn(&[Passage]) -> bool) -> Vec<&[Passage]> {
    let mut batches = Vec::new();
    let (mut start, mut size) = (0usize, 1usize);
    while start < passages.len() {
        let mut end = start + 1;
        while end < passages.len() && end - start < size && fits(&passages[start..end + 1]) {
            end += 1;
        }
        batches.push(&passages[start..end]);
        start = end;
        size *= 2;
    }
    batches
}

/// Output tokens a one-value reply may take: a well-formed one is 100-300;
/// a small model that starts repeating itself is cut here rather than at 1024
/// (measured with Qwen2.5 0.5B on 2 cores: ~10 tokens/s, so each token is
/// time the user waits).
pub const SINGLE_OUTPUT_TOKENS: u32 = 512;

/// Name of the LLM generator for the audit trail.
pub const LLM_GENERATOR_VERSION: &str = "llm/0.1";

/// Why LLM generation failed.
#[derive(Debug, thiserror::Error)]
pub enum LlmGenerateError {
    /// The registry has no schema for this shape (tree, nested_json).
    #[error("no answer schema for shape {shape:?} and type {answer_type:?}")]
    NoSchema {
        /// The shape asked for.
        shape: AnswerShape,
        /// The answer type asked for.
        answer_type: String,
    },
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
    /// A field-extraction reply is not valid JSON for its schema.
    #[error("field extraction reply {id} does not follow the schema: {reason}")]
    InvalidFieldReply {
        /// The response id.
        id: String,
        /// The parse error.
        reason: String,
    },
    /// The model call failed (transport error, reply cut at the limit, ...).
    #[error("model call {call} failed: {source}")]
    Model {
        /// 1-based index of the call in this generation.
        call: u32,
        /// The transport's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// A generator backed by a language model.
#[derive(Debug, Clone)]
pub struct LlmGenerator<L> {
    model: L,
    model_name: String,
    max_output_tokens: Option<u32>,
    /// The cap for one-value answers.
    single_output_tokens: Option<u32>,
    examples: Vec<FewShotExample>,
    options: DispatchOptions,
    custom: Option<CustomSchema>,
}

impl<L: LanguageModel> LlmGenerator<L> {
    /// A generator calling `model_name` through `model`, with an output cap
    /// of [`SINGLE_OUTPUT_TOKENS`] for one value and 1024 for lists and
    /// tables, and no few-shot examples.
    pub fn new(model: L, model_name: impl Into<String>) -> LlmGenerator<L> {
        LlmGenerator {
            model,
            model_name: model_name.into(),
            max_output_tokens: Some(1024),
            single_output_tokens: Some(SINGLE_OUTPUT_TOKENS),
            examples: Vec::new(),
            options: DispatchOptions::default(),
            custom: None,
        }
    }

    /// Sets budgets, context window and headroom.
    pub fn with_options(mut self, options: DispatchOptions) -> LlmGenerator<L> {
        self.options = options;
        self
    }

    /// Answers with a caller-supplied schema instead of the registry's.
    pub fn with_custom_schema(mut self, schema: CustomSchema) -> LlmGenerator<L> {
        self.custom = Some(schema);
        self
    }

    /// The dispatch options in force.
    pub fn options(&self) -> &DispatchOptions {
        &self.options
    }

    /// Sets the output token cap for every shape (`None`: the server's default).
    pub fn with_max_output_tokens(mut self, cap: Option<u32>) -> LlmGenerator<L> {
        self.max_output_tokens = cap;
        self.single_output_tokens = cap;
        self
    }

    /// Adds few-shot examples to every prompt (already chosen by the caller).
    pub fn with_examples(mut self, examples: Vec<FewShotExample>) -> LlmGenerator<L> {
        self.examples = examples;
        self
    }

    /// The transport.
    pub fn model(&self) -> &L {
        &self.model
    }

    /// The request for one call over `passages`, and the fragments applied.
    pub fn request(
        &self,
        question: &ParsedQuestion,
        entry: &RegistryEntry,
        document: &ParsedDocument,
        passages: &[Passage],
    ) -> (LlmRequest, Vec<String>) {
        self.request_for(question, entry.name, entry.json_schema(), document, passages)
    }

    /// Input tokens one call may carry in a `window`-token context: its
    /// headroom share, and never more than the window less the reply cap.
    fn input_limit(&self, window: Option<u64>) -> Option<u64> {
        let window = window?;
        let share = (window as f64 * self.options.headroom).floor() as u64;
        let reply = self.max_output_tokens.map_or(0, u64::from);
        Some(share.min(window.saturating_sub(reply)).max(1))
    }

    /// `passages` with every passage whose prompt alone would pass `limit`
    /// cut into consecutive line ranges that fit (a line too long on its own
    /// is a piece by itself), and how many passages were cut.
    fn fit_passages(
        &self,
        question: &ParsedQuestion,
        target: &Target<'_>,
        document: &ParsedDocument,
        passages: &[Passage],
        limit: u64,
    ) -> (Vec<Passage>, usize) {
        let cpt = self.options.chars_per_token;
        let estimate = |batch: &[Passage]| {
            let (request, _) = self.request_for(question, target.name(), target.schema(), document, batch);
            estimate_input_tokens(&request, cpt)
        };
        let overhead = estimate(&[]);
        let mut out = Vec::new();
        let mut split = 0;
        for passage in passages {
            if estimate(std::slice::from_ref(passage)) <= limit {
                out.push(passage.clone());
                continue;
            }
            split += 1;
            // A row costs its text and its three number columns.
            let row_tokens = |id: u32| {
                document.line(id).map_or(0.0, |l| (l.text.chars().count() + 16) as f64 / cpt.max(0.5)).ceil() as u64
            };
            let header = (64.0 / cpt.max(0.5)).ceil() as u64;
            let (mut start, mut used) = (passage.line_start, overhead + header);
            for id in passage.line_start..=passage.line_end {
                let cost = row_tokens(id);
                if id > start && used + cost > limit {
                    out.push(piece(document, passage, start, id - 1));
                    (start, used) = (id, overhead + header);
                }
                used += cost;
            }
            out.push(piece(document, passage, start, passage.line_end));
        }
        (out, split)
    }

    /// `batch` fitted under `limit` and packed, in order, into as few calls
    /// as fit.
    fn pack(
        &self,
        question: &ParsedQuestion,
        target: &Target<'_>,
        document: &ParsedDocument,
        batch: &[Passage],
        limit: Option<u64>,
    ) -> Vec<Vec<Passage>> {
        let Some(limit) = limit else { return vec![batch.to_vec()] };
        let (pieces, _) = self.fit_passages(question, target, document, batch, limit);
        let mut out: Vec<Vec<Passage>> = Vec::new();
        for piece in pieces {
            let grows = out.last().is_some_and(|last| {
                let mut grown = last.clone();
                grown.push(piece.clone());
                let (request, _) = self.request_for(question, target.name(), target.schema(), document, &grown);
                estimate_input_tokens(&request, self.options.chars_per_token) <= limit
            });
            match out.last_mut() {
                Some(last) if grows => last.push(piece),
                _ => out.push(vec![piece]),
            }
        }
        out
    }

    fn request_for(
        &self,
        question: &ParsedQuestion,
        schema_name: &str,
        schema: Value,
        document: &ParsedDocument,
        passages: &[Passage],
    ) -> (LlmRequest, Vec<String>) {
        let (system, fragments) = prompt::build_system_prompt_with_examples(question, &self.examples);
        let user = prompt::build_user_prompt(question, document, passages);
        let request = LlmRequest {
            model: self.model_name.clone(),
            messages: vec![
                ChatMessage { role: "system".to_owned(), content: system },
                ChatMessage { role: "user".to_owned(), content: user },
            ],
            schema_name: schema_name.to_owned(),
            schema,
            temperature: 0.0,
            max_output_tokens: if question.answer_shape == AnswerShape::Single {
                self.single_output_tokens
            } else {
                self.max_output_tokens
            },
        };
        (request, fragments)
    }
}

/// The schema one generation answers with.
enum Target<'a> {
    Registry(&'static RegistryEntry),
    Custom(&'a CustomSchema),
}

impl Target<'_> {
    fn name(&self) -> &str {
        match self {
            Target::Registry(entry) => entry.name,
            Target::Custom(custom) => custom.name(),
        }
    }
    fn schema(&self) -> Value {
        match self {
            Target::Registry(entry) => entry.json_schema(),
            Target::Custom(custom) => custom.schema().clone(),
        }
    }
}

/// One call's outcome.
struct Reply {
    answer: Answer,
    /// The reply as JSON, for custom schemas.
    json: Option<Value>,
    /// Spans with problems (outside the passages of this call or the document).
    span_problems: usize,
    /// Why the reply does not follow the registry schema, when it does not.
    schema_error: Option<String>,
}

impl Reply {
    fn sufficient(&self) -> bool {
        self.answer.feedback.answer_found && self.answer.feedback.complete_answer_found && self.span_problems == 0
    }
}

/// A batch the server refused, in two halves: by passages when it has
/// several, else the one passage by lines; `None` for a single line.
fn split_batch(document: &ParsedDocument, batch: &[Passage]) -> Option<(Vec<Passage>, Vec<Passage>)> {
    if batch.len() > 1 {
        let half = batch.len() / 2;
        return Some((batch[..half].to_vec(), batch[half..].to_vec()));
    }
    let passage = batch.first()?;
    if passage.line_start >= passage.line_end {
        return None;
    }
    let middle = passage.line_start + (passage.line_end - passage.line_start) / 2;
    Some((
        vec![piece(document, passage, passage.line_start, middle)],
        vec![piece(document, passage, middle + 1, passage.line_end)],
    ))
}

/// Lines `start..=end` of `passage` as a passage of their own (on the page of
/// their first line, anchored inside them).
fn piece(document: &ParsedDocument, passage: &Passage, start: u32, end: u32) -> Passage {
    Passage {
        line_start: start,
        line_end: end,
        page: document.line(start).map_or(passage.page, |l| l.page),
        anchor_line: passage.anchor_line.clamp(start, end),
        ..passage.clone()
    }
}
