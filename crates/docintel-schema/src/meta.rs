//! `_meta`: the summary of the audit trail carried by every answer, and the
//! top-level JSON contract of `docintel ask --json`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::answer::Answer;
use crate::question::{ChunkStrategy, DecompositionPattern, ExecutionPlan};

/// A pipeline step that did not run, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkippedStep {
    /// The step (`toc_navigation`, `embeddings`, ...).
    pub step: String,
    /// Why it was skipped.
    pub reason: String,
}

/// A problem found while checking an answer's citations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CitationProblem {
    /// Index of the item.
    pub item: usize,
    /// Index of the span within the item.
    pub span: usize,
    /// What is wrong.
    pub problem: String,
}

/// The model calls of one step of a question (`question`, `routing`,
/// `generation`) and what they spent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepUsage {
    /// Model calls made (retries of the transport not counted apart).
    pub calls: u32,
    /// Input tokens the server reported.
    pub input_tokens: u64,
    /// Output tokens the server reported.
    pub output_tokens: u64,
    /// Input tokens the server served from its prompt cache.
    pub cached_tokens: u64,
    /// Cost in US dollars at the models table's prices (0 when the model is not in it).
    pub cost_usd: f64,
}

/// The conversation a question was asked in (`_meta.follow_up`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FollowUp {
    /// The earlier questions, oldest first.
    pub previous_turns: Vec<String>,
    /// The self-contained wording retrieval read beside the question (also in
    /// `retrieval_rewrites`); `None` when the question refers to nothing
    /// earlier or no earlier turn could resolve it. Generation and its
    /// prompt keep the user's words.
    pub rewrite: Option<String>,
}

/// The summary of everything the pipeline decided for one answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// docintel version.
    pub docintel_version: String,
    /// Decomposition pattern of the question.
    pub decomposition: DecompositionPattern,
    /// The activations the dispatcher decided.
    pub activations: ExecutionPlan,
    /// The chunk strategy the question asked for (cascade result).
    pub chunk_strategy: ChunkStrategy,
    /// The model the cascade suggested.
    pub suggested_model: String,
    /// The concept matched in the concepts table.
    pub matched_concept: Option<String>,
    /// Why the question was judged ambiguous.
    pub ambiguity_reason: Option<String>,
    /// A clarifying question to offer the user.
    pub suggested_clarification: Option<String>,
    /// Self-contained rewrites used for retrieval (follow-ups).
    pub retrieval_rewrites: Vec<String>,
    /// A question asked after earlier ones: those turns and the follow-up
    /// rewrite made from them (absent for a question asked alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow_up: Option<FollowUp>,
    /// Whether the parsed question came from the on-disk cache.
    pub parsed_question_cached: bool,
    /// Steps skipped and why.
    pub skipped: Vec<SkippedStep>,
    /// Notes from the question parser.
    pub parsing_notes: Vec<String>,
    /// Notes from retrieval.
    pub retrieval_notes: Vec<String>,
    /// Notes from generation: the model's context window and where it was
    /// learned, passages split or calls refused to fit it, budgets spent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generation_notes: Vec<String>,
    /// Generation iterations run.
    pub iterations: u32,
    /// Retrieval methods that ran.
    pub retrieval_methods_used: Vec<String>,
    /// Implementations used per brick (`question` → `rules/0.1`, ...).
    pub implementations: BTreeMap<String, String>,
    /// The model that answered, `None` offline.
    pub model: Option<String>,
    /// Prompt or template versions per brick.
    pub prompt_versions: BTreeMap<String, String>,
    /// Prompt fragments applied (empty for the extractive generator).
    pub fragments_applied: Vec<String>,
    /// The chunk strategy the generator executed.
    pub chunk_strategy_executed: String,
    /// Why generation stopped (`sufficient`, `exhausted`, `budget`).
    pub exit: String,
    /// Passages shown to the generator, as `p<page> l<start>-<end>`.
    pub passages_shown: Vec<String>,
    /// Input tokens spent.
    pub tokens_in: u64,
    /// Output tokens spent.
    pub tokens_out: u64,
    /// Cost in US dollars.
    pub cost_usd: f64,
    /// Model calls, tokens and cost per step (question parse, routing,
    /// generation); empty offline. `tokens_in`, `tokens_out` and `cost_usd`
    /// are their sums.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub llm_usage: BTreeMap<String, StepUsage>,
    /// Wall time per stage in milliseconds.
    pub timings_ms: BTreeMap<String, u64>,
    /// Problems the parser reported for this document.
    pub document_diagnostics: Vec<String>,
    /// Problems found in the citations (empty when all verified).
    pub citation_problems: Vec<CitationProblem>,
    /// Per answer item, in order: whether its quoted lines hold its value
    /// (the number, the date, the name's words), the check a citation must
    /// pass beyond the quote being on its lines.
    #[serde(default)]
    pub citation_value_checks: Vec<bool>,
    /// Where the trace was written, if it was.
    pub trace_dir: Option<String>,
    /// Corpus mode only: which files the corpus level showed, picked and
    /// tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corpus: Option<CorpusMeta>,
    /// The vision step of the document (figure pages and badly read scans described by
    /// a model); absent when it did not run (no model, or vision turned off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision: Option<VisionMeta>,
    /// The cited line ranges whose text is not printed text on the page (a vision
    /// model's description, or OCR), one per span and source; empty when every cited
    /// line is the text layer's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cited_sources: Vec<CitedSource>,
}

/// What the vision step did for one document (`_meta.vision`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct VisionMeta {
    /// The pages described (by a call or from the cache), ascending.
    pub pages: Vec<u32>,
    /// Model calls made for this document (0 when every image was in the cache).
    pub calls: u32,
    /// Pages whose description came from the cache.
    pub cached: u32,
    /// The most calls one document may make.
    pub max_calls: u32,
    /// What was not described and why (the bound reached, the model reads no images,
    /// a page that could not be drawn).
    pub notes: Vec<String>,
}

/// A cited line range and where its text comes from (`_meta.cited_sources`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CitedSource {
    /// The answer item (0-based).
    pub item: usize,
    /// The page.
    pub page: u32,
    /// First line of the range (global id).
    pub line_start: u32,
    /// Last line, inclusive.
    pub line_end: u32,
    /// `vision` or `ocr`.
    pub source: crate::LineSource,
}

/// The corpus level of `docintel ask --corpus`: the file list shown to the
/// router, its pick, and the files answered in order until one sufficed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CorpusMeta {
    /// The corpus folder.
    pub folder: String,
    /// The router that picked.
    pub router: String,
    /// The lines shown, one per file (file name, summary, keyword hits).
    pub lines_shown: Vec<String>,
    /// The files picked, in pick order.
    pub picked: Vec<String>,
    /// The router's reason.
    pub reason: String,
    /// The files answered, in order, with the outcome of each.
    pub tried: Vec<String>,
    /// Files that could not be read, with the cause.
    pub unreadable: Vec<String>,
}

/// The whole output of one question: the `docintel ask --json` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AskOutput {
    /// The question as asked.
    pub question: String,
    /// The document path as given.
    pub document: String,
    /// The typed answer.
    pub answer: Answer,
    /// Whether every span lies in the passages shown and every quote was found
    /// in its cited lines.
    pub citations_verified: bool,
    /// With a caller's JSON Schema (`ask --schema`): the model's reply in
    /// that schema, as returned (its spans are checked like the answer's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_answer: Option<serde_json::Value>,
    /// The audit summary.
    #[serde(rename = "_meta")]
    pub meta: Meta,
}
