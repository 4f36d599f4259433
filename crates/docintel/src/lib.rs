//! docintel: answers questions about documents with typed answers whose every
//! claim cites the exact source lines.
//!
//! This crate is the thin facade that wires the bricks together; it holds no
//! logic a brick could own. An [`Engine`] (built once, shared by every
//! question: see its docs) runs the whole path on one document; [`pdf_qa`] and
//! the other free functions build one per call:
//!
//! ```text
//! PDF ─parse→ ParsedDocument ─retrieve→ Vec<Passage> ─generate→ Answer ─verify→ AskOutput
//!                 │ profile                 ▲                      ▲
//! question ─question parse + dispatch→ ParsedQuestion ─────────────┘
//!                         (trace records every arrow)
//! ```
//!
//! Modules: [`options`](AskOptions), [`config`] (the environment, read in one
//! place), `error` ([`PipelineError`] and its exit codes), `engine`, `bricks`
//! (what one question runs with), `ask` (one question's steps and rounds),
//! `meta` (`_meta` and cost), `corpus`, `replay`, `record` (the question
//! folder), `vision` (a model describes figure pages, before the question).
//!
//! ```no_run
//! use docintel::{AskOptions, pdf_qa};
//! let options = AskOptions::new(5);
//! let output = pdf_qa("fixtures/invoices/AmazonWebServices.pdf".as_ref(), "What is the total amount?", &options)?;
//! println!("{}", serde_json::to_string_pretty(&output).unwrap());
//! # Ok::<(), docintel::PipelineError>(())
//! ```

#![warn(missing_docs)]

mod ask;
mod bricks;
pub mod config;
mod corpus;
mod engine;
mod error;
#[cfg(feature = "embeddings")]
mod hybrid;
mod meta;
mod options;
mod record;
mod replay;
mod vision;

use std::path::Path;

pub use docintel_schema as schema;
pub use docintel_schema::QuestionParser;
use docintel_schema::{AskOutput, ParsedDocument, ParsedQuestion, TraceEvent};

pub use config::{Config, LlmFlags};
pub use corpus::{CORPUS_EXTENSIONS, Corpus, corpus_files, load_corpus};
pub use engine::{Engine, question_parser};
pub use error::{EXIT_BAD_INPUT, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, PipelineError};
pub use options::{AskOptions, GeneratorChoice, MAX_PREVIOUS_TURNS, VisionSettings};
pub use record::write_answer_trace;
pub use replay::{ReplayCheck, ReplayReport, replay_question, replay_question_with_options};
pub use vision::VISION_CACHE_DIR;

pub use docintel_generate::{ExtractiveGenerator, LlmGenerator};
pub use docintel_llm::{ApiKey, OpenAiConfig, OpenAiTransport};
/// The document folder's Parquet tables (feature `parquet`, on by default).
#[cfg(feature = "parquet")]
pub use docintel_parse::write_tables;
pub use docintel_parse::{
    ChunkConfig, OcrOptions, PageImage, ParseError, ParseOptions, chunk_document, parse_file, parse_file_with_options,
    parse_pdf, render_page, vision_candidates, vision_pages,
};
pub use docintel_parse::{DocumentFolder, OutputError, PARSER_BUILD, content_hash, document_folder, is_up_to_date};
pub use docintel_question::aggregate;
pub use docintel_question::type_model::FALLBACK as TYPE_FALLBACK;
pub use docintel_question::{
    DictionaryError, ExpertDictionary, LLM_PARSER_NAME, LlmQuestionParser, RuleParser, SatelliteError, Satellites,
    TypeModel, TypeVerdict, type_features,
};
pub use docintel_retrieve::{CorpusFile, KeywordRetriever, KeywordRouter, LlmRouter, RetrieveConfig, RoutingConfig};

/// Everything one question produced: the output printed to the user, the
/// parsed question and the recorded trace events.
#[derive(Debug, Clone)]
pub struct QaRun {
    /// The `docintel ask --json` object.
    pub output: AskOutput,
    /// The parsed question.
    pub parsed_question: ParsedQuestion,
    /// Every decision recorded, in order.
    pub events: Vec<TraceEvent>,
    /// The passages retrieval handed to generation (last round), in rank
    /// order: what an evaluation re-reads to score candidates.
    pub passages: Vec<docintel_schema::Passage>,
}

/// Answers `question` about the PDF at `path`: rule-based question parser,
/// keyword retriever, and the generator `options.generator` names (the
/// offline extractive one by default); verifies the citations, and writes
/// the trace when `options.out_dir` is set. Builds an [`Engine`] for this one
/// question: to ask many, build one and call [`Engine::ask`].
pub fn pdf_qa(path: &Path, question: &str, options: &AskOptions) -> Result<AskOutput, PipelineError> {
    pdf_qa_with_document(path, question, options).map(|(output, _)| output)
}

/// [`pdf_qa`], also returning the parsed document (its line table carries
/// the boxes `docintel ask --highlight` draws).
pub fn pdf_qa_with_document(
    path: &Path,
    question: &str,
    options: &AskOptions,
) -> Result<(AskOutput, ParsedDocument), PipelineError> {
    Engine::new(options)?.ask_with_document(path, question, options)
}

/// Answers `question` about an already parsed document (no trace written;
/// with embeddings and `options.out_dir`, the chunk vectors are cached there).
/// See [`Engine::answer_document`].
pub fn answer_document(
    document: &ParsedDocument,
    question: &str,
    options: &AskOptions,
) -> Result<QaRun, PipelineError> {
    Engine::new(options)?.answer_document(document, question, options)
}

/// Runs retrieval, generation and validation for an already parsed question
/// with the caller's rule parser, applying the caller's overrides on top of
/// the dispatcher's decisions. See [`Engine::answer_parsed`].
pub fn answer_parsed(
    document: &ParsedDocument,
    parsed: ParsedQuestion,
    parser: &RuleParser,
    options: &AskOptions,
) -> Result<QaRun, PipelineError> {
    let llm = bricks::LlmClient::build(&options.generator)?;
    let bricks = bricks::Bricks { parser, llm: llm.as_ref() };
    ask::answer(bricks, document, ask::QuestionRun::rules(parsed), options)
}

/// Answers `question` over a folder of documents: the corpus level shows the
/// router one line per file (name, summary, keyword hits), then the picked
/// files are answered in pick order — each through its own TOC — until one
/// gives a found, complete answer with verified citations (top-1 first).
/// With no file picked, the file with the most keyword hits is answered (an
/// honest "not found" when nothing matches). `_meta.corpus` records the
/// level; the trace, when `options.out_dir` is set, goes under the answering
/// file's folder. The corpus level itself routes on the rule parse of the
/// question (file names and summaries need no model); each tried file's
/// parse uses the model when one is configured, like [`pdf_qa`].
pub fn corpus_qa(corpus: &Corpus, question: &str, options: &AskOptions) -> Result<AskOutput, PipelineError> {
    Engine::new(options)?.corpus_qa(corpus, question, options)
}

/// Whether `base_url` can be a model server's base URL (http or https with a host); the
/// reason when not, with any key in it redacted.
pub fn openai_url(base_url: &str) -> Result<(), String> {
    docintel_llm::openai::chat_completions_url(base_url).map(|_| ())
}

// Audit trail and highlighting for the CLI: re-exports only, so `docintel-cli`
// keeps depending on the facade alone.
pub use docintel_parse::{HighlightError, highlight_pdf};
pub use docintel_trace::{QuestionTrace, TraceError, load_question_trace};
/// Reading a stored question folder back (`docintel trace show`).
pub mod trace {
    pub use docintel_trace::{render, summary};
}
