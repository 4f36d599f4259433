//! The LLM generator: the same [`Generator`] contract as the extractive one,
//! answered by any [`LanguageModel`] with strict structured output.
//!
//! It picks the registry schema for the question's (shape, type), composes
//! the prompt ([`crate::prompt`]), and executes the question's chunk
//! strategy:
//! - **combined**: one call with every passage;
//! - **sequential**: the top passage first; stop as soon as a reply says
//!   `answer_found && complete_answer_found` with every span inside the
//!   passage shown (exit `sufficient`), else the next passage; when the
//!   passages run out, exit `exhausted` (a not-found answer is an answer).
//!
//! Every raw reply goes to the trace verbatim (`generate` / `llm_response`).
//! A reply that is not valid JSON for the schema becomes an honest not-found
//! answer with a warning; spans outside the passages shown or outside the
//! document are kept (so [`crate::verify_citations`] flags them) and named in
//! the warnings. A transport failure (server down, reply cut at the token
//! limit) is an error: the caller decides whether to fall back.

use docintel_schema::registry::{self, RegistryEntry};
use docintel_schema::{
    Amount, Answer, AnswerFeedback, AnswerShape, ChatMessage, ChunkStrategy, DateValue, ExtractionMethod, Generation,
    Generator, LanguageModel, LlmRequest, LlmResponse, ParsedDocument, ParsedQuestion, Passage, TableValue, TraceEvent,
    TraceSink, TypedAnswer, Usage, ValueKind,
};
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::prompt::{self, FewShotExample, TEMPLATE_VERSION};
use crate::validate::verify_span;

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
    examples: Vec<FewShotExample>,
}

impl<L: LanguageModel> LlmGenerator<L> {
    /// A generator calling `model_name` through `model`, with a 1024-token
    /// output cap and no few-shot examples.
    pub fn new(model: L, model_name: impl Into<String>) -> LlmGenerator<L> {
        LlmGenerator { model, model_name: model_name.into(), max_output_tokens: Some(1024), examples: Vec::new() }
    }

    /// Sets the output token cap (`None`: the server's default).
    pub fn with_max_output_tokens(mut self, cap: Option<u32>) -> LlmGenerator<L> {
        self.max_output_tokens = cap;
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
        let (system, fragments) = prompt::build_system_prompt_with_examples(question, &self.examples);
        let user = prompt::build_user_prompt(question, document, passages);
        let request = LlmRequest {
            model: self.model_name.clone(),
            messages: vec![
                ChatMessage { role: "system".to_owned(), content: system },
                ChatMessage { role: "user".to_owned(), content: user },
            ],
            schema_name: entry.name.to_owned(),
            schema: entry.json_schema(),
            temperature: 0.0,
            max_output_tokens: self.max_output_tokens,
        };
        (request, fragments)
    }
}

/// One call's outcome.
struct Reply {
    answer: Answer,
    /// Spans with problems (outside the passages of this call or the document).
    span_problems: usize,
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
        let entry = registry::lookup(question.answer_shape, &question.answer_type).ok_or_else(|| {
            LlmGenerateError::NoSchema { shape: question.answer_shape, answer_type: question.answer_type.clone() }
        })?;
        let (_, fragments) = prompt::build_system_prompt_with_examples(question, &self.examples);
        let sequential = question.chunk_strategy == ChunkStrategy::Sequential;
        let batches: Vec<&[Passage]> = if sequential {
            passages.chunks(1).collect()
        } else if passages.is_empty() {
            Vec::new()
        } else {
            vec![passages]
        };

        let mut usage = Usage::default();
        let mut shown: Vec<Passage> = Vec::new();
        let mut replies: Vec<Reply> = Vec::new();
        let mut model_used: Option<String> = None;
        let mut exit = "exhausted";
        for (index, batch) in batches.iter().enumerate() {
            let call = index as u32 + 1;
            let (request, _) = self.request(question, entry, document, batch);
            let response =
                self.model.complete(&request).map_err(|e| LlmGenerateError::Model { call, source: Box::new(e) })?;
            shown.extend(batch.iter().cloned());
            usage.input_tokens += response.usage.input_tokens;
            usage.output_tokens += response.usage.output_tokens;
            usage.cached_tokens += response.usage.cached_tokens;
            if !response.model.is_empty() {
                model_used = Some(response.model.clone());
            }
            let reply = parse_reply(question, entry, &response, document, batch);
            trace.record(TraceEvent {
                brick: "generate".to_owned(),
                step: "llm_response".to_owned(),
                detail: json!({
                    "call": call,
                    "schema": entry.name,
                    "passages": batch.iter().map(|p| format!("p{} l{}-{}", p.page, p.line_start, p.line_end)).collect::<Vec<_>>(),
                    "usage": response.usage,
                    "answer_found": reply.answer.feedback.answer_found,
                    "complete_answer_found": reply.answer.feedback.complete_answer_found,
                    "span_problems": reply.span_problems,
                    "raw": response.raw,
                }),
            });
            let done = reply.sufficient();
            replies.push(reply);
            if done {
                exit = "sufficient";
                break;
            }
        }

        let calls = replies.len() as u32;
        let answer = choose(question, entry, replies, passages.is_empty());
        trace.record(TraceEvent {
            brick: "generate".to_owned(),
            step: "llm_exit".to_owned(),
            detail: json!({
                "strategy": if sequential { "sequential" } else { "combined" },
                "exit": exit,
                "calls": calls,
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
            }),
        });
        Ok(Generation {
            answer,
            strategy_executed: if sequential { "sequential" } else { "combined" }.to_owned(),
            exit: exit.to_owned(),
            iterations: calls,
            passages_shown: shown,
            fragments_applied: fragments,
            template_version: TEMPLATE_VERSION.to_owned(),
            model: model_used.or_else(|| Some(self.model_name.clone())),
            usage,
        })
    }

    fn name(&self) -> String {
        format!("{LLM_GENERATOR_VERSION} ({})", self.model_name)
    }
}

/// The answer to return: the sufficient reply, else the first reply that
/// found something with clean spans, else the first that found anything,
/// else the last (a not-found); warnings of not-found replies are kept.
fn choose(question: &ParsedQuestion, entry: &RegistryEntry, mut replies: Vec<Reply>, no_passages: bool) -> Answer {
    if replies.is_empty() {
        let why = if no_passages { "no passages were retrieved, so the model was not called" } else { "no reply" };
        return failure(question, entry, why.to_owned());
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
    let mut answer = replies.swap_remove(pick).answer;
    for warning in others {
        if !answer.feedback.warnings.contains(&warning) {
            answer.feedback.warnings.push(warning);
        }
    }
    answer
}

fn failure(question: &ParsedQuestion, entry: &RegistryEntry, warning: String) -> Answer {
    Answer {
        answer_shape: question.answer_shape,
        answer_type: question.answer_type.clone(),
        items: Vec::new(),
        extraction_method: ExtractionMethod::Llm,
        feedback: AnswerFeedback::not_found(format!("{} ({})", warning, entry.name)),
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
) -> Reply {
    let (shape, answer_type, method) = (question.answer_shape, question.answer_type.clone(), ExtractionMethod::Llm);
    let parsed = match entry.value {
        ValueKind::Text => {
            typed::<String>(&response.content).map(|t| Answer::from_typed(shape, answer_type, method, t))
        }
        ValueKind::Amount => {
            typed::<Amount>(&response.content).map(|t| Answer::from_typed(shape, answer_type, method, t))
        }
        ValueKind::Date => {
            typed::<DateValue>(&response.content).map(|t| Answer::from_typed(shape, answer_type, method, t))
        }
        ValueKind::Boolean => {
            typed::<bool>(&response.content).map(|t| Answer::from_typed(shape, answer_type, method, t))
        }
        ValueKind::Table => {
            typed::<TableValue>(&response.content).map(|t| Answer::from_typed(shape, answer_type, method, t))
        }
    };
    let mut answer = match parsed {
        Ok(answer) => answer,
        Err(error) => {
            let reply_id = if response.id.is_empty() { String::new() } else { format!(" {}", response.id) };
            let answer = failure(
                question,
                entry,
                format!("the model reply{reply_id} is not valid JSON for the answer schema: {error}"),
            );
            return Reply { answer, span_problems: 0 };
        }
    };
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
    Reply { answer, span_problems }
}
