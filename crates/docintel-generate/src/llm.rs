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

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use docintel_schema::registry::{self, RegistryEntry};
use docintel_schema::trace::{Event, LlmCall, LlmRequestSent, PassageRef};
use docintel_schema::{
    Amount, Answer, AnswerFeedback, AnswerShape, AnswerValue, ChatMessage, ChunkStrategy, DateValue, ExtractionMethod,
    Generation, GenerationCall, Generator, Item, LanguageModel, LlmRequest, LlmResponse, ParsedDocument,
    ParsedQuestion, Passage, Quantity, Span, TableValue, TraceEvent, TraceSink, TypedAnswer, Usage, ValueKind,
};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::custom::CustomSchema;
use crate::prompt::{self, FewShotExample, TEMPLATE_VERSION};
use crate::validate::verify_span;

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

impl<L: LanguageModel> Generator for LlmGenerator<L> {
    type Error = LlmGenerateError;

    fn generate(
        &self,
        question: &ParsedQuestion,
        document: &ParsedDocument,
        passages: &[Passage],
        trace: &mut dyn TraceSink,
    ) -> Result<Generation, LlmGenerateError> {
        if let Some(bad) = crate::first_passage_out_of_document(document, passages) {
            return Err(LlmGenerateError::PassageOutOfDocument {
                index: bad.index,
                line_start: bad.line_start,
                line_end: bad.line_end,
                n_lines: bad.n_lines,
            });
        }
        let target =
            match &self.custom {
                Some(custom) => Target::Custom(custom),
                None => Target::Registry(registry::lookup(question.answer_shape, &question.answer_type).ok_or_else(
                    || LlmGenerateError::NoSchema {
                        shape: question.answer_shape,
                        answer_type: question.answer_type.clone(),
                    },
                )?),
            };
        let schema = target.schema();
        let (system_prompt, fragments) = prompt::build_system_prompt_with_examples(question, &self.examples);
        // What a warning may not merely repeat: the rules and the passages' header.
        let system_prompt = format!("{system_prompt}\n{}", prompt::PASSAGES_INTRO);
        let options = &self.options;
        let mut notes: Vec<String> = Vec::new();
        let estimate_for = |batch: &[Passage]| {
            let (request, _) = self.request_for(question, target.name(), schema.clone(), document, batch);
            estimate_input_tokens(&request, options.chars_per_token)
        };
        // With a known window, a passage whose prompt alone would not fit is
        // read in consecutive pieces that do.
        let mut limit = self.input_limit(options.context_window);
        let mut cut_passages = false;
        let fitted: Vec<Passage> = match limit {
            Some(limit) => {
                let (pieces, split) = self.fit_passages(question, &target, document, passages, limit);
                cut_passages = split > 0;
                if split > 0 {
                    notes.push(format!(
                        "{split} passage(s) longer than the ~{limit}-token input limit of the {}-token context window read in {} piece(s)",
                        options.context_window.unwrap_or_default(),
                        pieces.len() - (passages.len() - split)
                    ));
                }
                pieces
            }
            None => passages.to_vec(),
        };
        let mut sequential = question.chunk_strategy == ChunkStrategy::Sequential;
        // Passages cut, or a combined question read in several calls, only
        // because of the window: a list or table is gathered from every
        // call, not from the first that suffices.
        let mut split_for_context = cut_passages;
        if !sequential
            && fitted.len() > 1
            && let (Some(window), Some(limit)) = (options.context_window, limit)
        {
            let estimate = estimate_for(&fitted);
            if estimate > limit {
                sequential = true;
                split_for_context = true;
                notes.push(format!(
                    "combined prompt ~{estimate} tokens would fill {:.0}% of the {window}-token context window \
                     (input limit ~{limit} tokens): switched to sequential",
                    estimate as f64 * 100.0 / window.max(1) as f64,
                ));
            }
        }
        let mut queue: VecDeque<Vec<Passage>> = if sequential {
            let fits = |batch: &[Passage]| limit.is_none_or(|limit| estimate_for(batch) <= limit);
            sequential_batches(&fitted, fits).into_iter().map(<[Passage]>::to_vec).collect()
        } else if fitted.is_empty() {
            VecDeque::new()
        } else {
            VecDeque::from([fitted.clone()])
        };

        let started = Instant::now();
        let mut usage = Usage::default();
        let mut shown: Vec<Passage> = Vec::new();
        let mut replies: Vec<Reply> = Vec::new();
        let mut calls: Vec<GenerationCall> = Vec::new();
        let mut model_used: Option<String> = None;
        let mut exit = "exhausted";
        let mut call = 0u32;
        let mut refused = 0u32;
        // A reply that does not follow the schema is answered once with the
        // reply and what was wrong with it, the value's type stated.
        let mut correction: Option<(String, String)> = None;
        while let Some(batch) = queue.pop_front() {
            call += 1;
            let (mut request, _) = self.request_for(question, target.name(), schema.clone(), document, &batch);
            let correcting = correction.take();
            if let (Some((content, why)), Target::Registry(entry)) = (&correcting, &target) {
                request.messages.push(ChatMessage { role: "assistant".to_owned(), content: content.clone() });
                request.messages.push(ChatMessage { role: "user".to_owned(), content: correction_text(entry, why) });
            }
            let estimate = estimate_input_tokens(&request, options.chars_per_token);
            let unshown = batch.len() + queue.iter().map(Vec::len).sum::<usize>();
            if let Some(budget) = options.time_budget
                && started.elapsed() >= budget
            {
                exit = "time_budget";
                notes.push(format!(
                    "time budget of {} ms spent after {} call(s): {unshown} passage(s) not shown",
                    budget.as_millis(),
                    call - 1,
                ));
                break;
            }
            let spent = usage.input_tokens + usage.output_tokens;
            if let Some(budget) = options.token_budget
                && spent + estimate > budget
            {
                exit = "token_budget";
                notes.push(format!(
                    "token budget {budget}: {spent} spent, call {call} needs ~{estimate} input tokens: {unshown} passage(s) not shown"
                ));
                break;
            }
            if let Some(limit) = limit
                && estimate > limit
            {
                notes.push(format!("call {call}: prompt ~{estimate} tokens is over the ~{limit}-token input limit"));
            }
            // A reply cut at the output token limit reached us but is not
            // an answer: it is recorded and read as an unusable reply (the
            // next batch may still answer). A prompt the server refused as
            // longer than its context is split in two and asked again. Any
            // other failure aborts.
            let (response, cut) = match self.model.complete(&request) {
                Ok(response) => (response, false),
                Err(error) => match (L::cut_reply(&error), L::context_overflow(&error)) {
                    (Some(raw), _) => (LlmResponse::cut(raw), true),
                    (None, Some(overflow)) => {
                        let Some((first, second)) = split_batch(document, &batch) else {
                            return Err(LlmGenerateError::Model { call, source: Box::new(error) });
                        };
                        refused += 1;
                        // What the server named, else a quarter under what it refused.
                        let learned = match overflow.window {
                            Some(window) => self.input_limit(Some(window)),
                            None => Some(estimate.saturating_mul(3) / 4),
                        };
                        limit = match (limit, learned) {
                            (Some(a), Some(b)) => Some(a.min(b)),
                            (a, b) => a.or(b),
                        };
                        notes.push(format!(
                            "call {call}: the server refused a prompt of ~{estimate} tokens as longer than the model's context{}: split in two and asked again",
                            overflow.window.map(|w| format!(" ({w} tokens)")).unwrap_or_default()
                        ));
                        trace.record(TraceEvent {
                            brick: "generate".to_owned(),
                            step: "llm_context_overflow".to_owned(),
                            detail: json!({
                                "call": call,
                                "estimated_input_tokens": estimate,
                                "window": overflow.window,
                                "passages": batch.iter().map(PassageRef::from).collect::<Vec<_>>(),
                                "error": error.to_string(),
                            }),
                        });
                        if !sequential {
                            sequential = true;
                            split_for_context = true;
                        }
                        // The rest is packed again under the learned limit.
                        let rest: Vec<Vec<Passage>> = queue.drain(..).collect();
                        queue.push_back(first);
                        queue.push_back(second);
                        for later in rest {
                            queue.extend(self.pack(question, &target, document, &later, limit));
                        }
                        call -= 1;
                        continue;
                    }
                    (None, None) => return Err(LlmGenerateError::Model { call, source: Box::new(error) }),
                },
            };
            shown.extend(batch.iter().filter(|p| !shown.contains(p)).cloned().collect::<Vec<_>>());
            usage.input_tokens += response.usage.input_tokens;
            usage.output_tokens += response.usage.output_tokens;
            usage.cached_tokens += response.usage.cached_tokens;
            if !response.model.is_empty() {
                model_used = Some(response.model.clone());
            }
            let reply = match &target {
                _ if cut => Reply {
                    answer: failure(
                        question,
                        target.name(),
                        format!("the model reply {} was cut at the output token limit and is not used", response.id),
                    ),
                    json: None,
                    span_problems: 0,
                    schema_error: None,
                },
                Target::Registry(entry) => parse_reply(question, entry, &response, document, &batch, &system_prompt),
                Target::Custom(custom) => {
                    parse_custom_reply(question, custom, &response, document, &batch, &system_prompt)
                }
            };
            calls.push(GenerationCall {
                call,
                passages: batch.len(),
                estimated_input_tokens: estimate,
                usage: response.usage,
                answer_found: reply.answer.feedback.answer_found,
                complete_answer_found: reply.answer.feedback.complete_answer_found,
            });
            let content = |i: usize| request.messages.get(i).map(|m| m.content.clone());
            trace.record(
                Event::LlmResponse(Box::new(LlmCall {
                    call,
                    schema: target.name().to_owned(),
                    passages: batch.iter().map(PassageRef::from).collect(),
                    estimated_input_tokens: estimate,
                    usage: response.usage,
                    answer_found: reply.answer.feedback.answer_found,
                    complete_answer_found: reply.answer.feedback.complete_answer_found,
                    span_problems: reply.span_problems,
                    cut_at_token_limit: cut,
                    // What was sent, verbatim: `docintel trace replay`
                    // rebuilds both from the stored question and passages.
                    request: LlmRequestSent {
                        system: content(0),
                        user: content(1),
                        correction: content(3),
                        schema_name: request.schema_name.clone(),
                        few_shot_examples: self.examples.len(),
                    },
                    raw: response.raw.clone(),
                }))
                .into(),
            );
            let done = reply.sufficient();
            if let (Some(why), None) = (&reply.schema_error, &correcting) {
                notes.push(format!(
                    "call {call}: the reply did not follow the answer schema ({why}): asked once more, the type stated"
                ));
                correction = Some((response.content.clone(), why.clone()));
                queue.push_front(batch.clone());
            }
            replies.push(reply);
            if done && !(split_for_context && gathers(question.answer_shape)) {
                exit = "sufficient";
                break;
            }
        }
        let n_calls = replies.len() as u32;
        let strategy = if sequential { "sequential" } else { "combined" };
        let gathered = split_for_context && gathers(question.answer_shape) && replies.len() > 1;
        let (mut answer, answer_json) = if gathered {
            (gather(question, target.name(), replies), None)
        } else {
            choose(question, target.name(), replies, passages.is_empty())
        };
        if gathered && exit == "exhausted" {
            exit = if answer.feedback.answer_found { "gathered" } else { "exhausted" };
        }
        if exit == "token_budget" || exit == "time_budget" {
            for note in &notes {
                if note.contains("budget") && !answer.feedback.warnings.contains(note) {
                    answer.feedback.warnings.push(note.clone());
                }
            }
            answer.feedback.complete_answer_found &= answer.feedback.answer_found;
        }
        trace.record(TraceEvent {
            brick: "generate".to_owned(),
            step: "llm_exit".to_owned(),
            detail: json!({
                "strategy": strategy,
                "exit": exit,
                "calls": n_calls,
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "tokens_per_call": calls.iter().map(|c| c.usage.input_tokens).collect::<Vec<_>>(),
                "context_refusals": refused,
                "split_for_context": split_for_context,
                "notes": notes,
            }),
        });
        Ok(Generation {
            answer,
            strategy_executed: strategy.to_owned(),
            exit: exit.to_owned(),
            iterations: n_calls,
            passages_shown: shown,
            fragments_applied: fragments,
            template_version: TEMPLATE_VERSION.to_owned(),
            model: model_used.or_else(|| Some(self.model_name.clone())),
            usage,
            calls,
            notes,
            answer_json,
        })
    }

    fn name(&self) -> String {
        format!("{LLM_GENERATOR_VERSION} ({})", self.model_name)
    }
}

/// The answer to return: the sufficient reply, else the first reply that
/// found something with clean spans, else the first that found anything,
/// else the last (a not-found); warnings of not-found replies are kept.
fn choose(
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
fn correction_text(entry: &RegistryEntry, why: &str) -> String {
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
fn gathers(shape: AnswerShape) -> bool {
    matches!(shape, AnswerShape::Listing | AnswerShape::Table)
}

/// One answer from the replies of a list read in pieces: every found item,
/// once (same value), in document order; complete when some reply found
/// items and none of the calls reports a missing part it could have seen;
/// every warning kept, prefixed by its call.
fn gather(question: &ParsedQuestion, schema_name: &str, replies: Vec<Reply>) -> Answer {
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

fn failure(question: &ParsedQuestion, schema_name: &str, warning: String) -> Answer {
    Answer {
        answer_shape: question.answer_shape,
        answer_type: question.answer_type.clone(),
        items: Vec::new(),
        extraction_method: ExtractionMethod::Llm,
        feedback: AnswerFeedback::not_found(format!("{warning} ({schema_name})")),
    }
}

fn typed<V>(content: &str) -> Result<TypedAnswer<V>, serde_json::Error>
where
    V: DeserializeOwned,
{
    serde_json::from_str(content)
}

/// Parses one reply into an [`Answer`] and checks its spans against the
/// passages of this call.
fn parse_reply(
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
fn check_spans(
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

fn parse_custom_reply(
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
