//! docintel: answers questions about documents with typed answers whose every
//! claim cites the exact source lines.
//!
//! This crate is the thin facade that wires the bricks together; it holds no
//! logic a brick could own. [`pdf_qa`] runs the whole path on one PDF:
//!
//! ```text
//! PDF ─parse→ ParsedDocument ─retrieve→ Vec<Passage> ─generate→ Answer ─verify→ AskOutput
//!                 │ profile                 ▲                      ▲
//! question ─question parse + dispatch→ ParsedQuestion ─────────────┘
//!                         (trace records every arrow)
//! ```
//!
//! ```no_run
//! use docintel::{AskOptions, pdf_qa};
//! let options = AskOptions::new(5);
//! let output = pdf_qa("fixtures/invoices/AmazonWebServices.pdf".as_ref(), "What is the total amount?", &options)?;
//! println!("{}", serde_json::to_string_pretty(&output).unwrap());
//! # Ok::<(), docintel::PipelineError>(())
//! ```

#![warn(missing_docs)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub use docintel_schema as schema;
pub use docintel_schema::QuestionParser;
use docintel_schema::{
    AskOutput, Generator, Meta, ParsedDocument, ParsedQuestion, Retriever, Severity, SkippedStep, TraceEvent, TraceSink,
};
use docintel_trace::TraceRecorder;

pub use docintel_generate::{ExtractiveGenerator, LlmGenerator};
pub use docintel_llm::{ApiKey, OpenAiConfig, OpenAiTransport};
pub use docintel_parse::{ChunkConfig, ParseError, chunk_document, parse_file, parse_pdf, vision_candidates};
pub use docintel_parse::{DocumentFolder, OutputError, content_hash, document_folder, is_up_to_date, write_tables};
pub use docintel_question::{RuleParser, SatelliteError, Satellites};
pub use docintel_retrieve::{KeywordRetriever, RetrieveConfig};

/// Which generator answers: the closed set of implementations.
#[derive(Debug, Clone)]
pub enum GeneratorChoice {
    /// The deterministic extractive generator (offline, the default).
    Extractive,
    /// A language model behind an OpenAI-compatible endpoint.
    Llm {
        /// How to reach the server.
        config: OpenAiConfig,
        /// The model name sent with every request.
        model: String,
    },
}

/// Per-question overrides, grouped by the brick they affect. Defaults come
/// from the dispatcher; no override is needed for a sensible answer.
#[derive(Debug, Clone)]
pub struct AskOptions {
    /// Retrieval: passages shown to the generator.
    pub top_k: usize,
    /// Retrieval: lines of context around each hit.
    pub window: u32,
    /// Retrieval: restrict to these pages (overrides the question's hint).
    pub pages: Option<Vec<u32>>,
    /// Retrieval: allow TOC navigation (the dispatcher may still turn it off).
    pub use_toc: bool,
    /// Pipeline: where to write the per-question trace; `None` writes none.
    pub out_dir: Option<PathBuf>,
    /// Generation: which generator answers.
    pub generator: GeneratorChoice,
    /// Question: a folder of satellite tables replacing the built-in ones
    /// (answer types, concepts, concept keywords, models...).
    pub satellites_dir: Option<PathBuf>,
}

impl AskOptions {
    /// Options with `top_k` passages, a 2-line window, no page override,
    /// TOC allowed, no trace written, and the offline extractive generator.
    pub fn new(top_k: usize) -> AskOptions {
        AskOptions {
            top_k,
            window: 2,
            pages: None,
            use_toc: true,
            out_dir: None,
            generator: GeneratorChoice::Extractive,
            satellites_dir: None,
        }
    }
}

/// Why a question could not be answered at all. An honest "not found" is an
/// answer, not an error.
#[derive(Debug)]
#[non_exhaustive]
pub enum PipelineError {
    /// The document could not be read.
    Parse(ParseError),
    /// A brick failed (a bug or a transport failure); the message says which.
    Brick {
        /// The brick (`question`, `retrieve`, `generate`).
        brick: &'static str,
        /// The brick's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The trace could not be written.
    Trace(docintel_trace::TraceError),
    /// The satellite tables given by the caller do not load.
    Satellites(SatelliteError),
}

impl std::fmt::Display for PipelineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PipelineError::Parse(e) => write!(f, "{e}"),
            PipelineError::Brick { brick, .. } => write!(f, "the {brick} brick failed"),
            PipelineError::Trace(e) => write!(f, "{e}"),
            PipelineError::Satellites(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for PipelineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Parse and trace errors are complete one-line messages (file and
            // cause); chaining them again would print the cause twice.
            PipelineError::Parse(_) | PipelineError::Trace(_) | PipelineError::Satellites(_) => None,
            PipelineError::Brick { source, .. } => Some(source.as_ref()),
        }
    }
}

fn brick_error(brick: &'static str) -> impl FnOnce(Box<dyn std::error::Error + Send + Sync>) -> PipelineError {
    move |source| PipelineError::Brick { brick, source }
}

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
}

/// Answers `question` about the PDF at `path`: rule-based question parser,
/// keyword retriever, and the generator `options.generator` names (the
/// offline extractive one by default); verifies the citations, and writes
/// the trace when `options.out_dir` is set.
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
    let started = Instant::now();
    let document = parse_file(path).map_err(PipelineError::Parse)?;
    let parse_ms = started.elapsed().as_millis() as u64;
    let parser = question_parser(options)?;

    // Parse the question once per document profile: with an output folder,
    // a record saved by an earlier run (same question, same profile, same
    // parser) is reused.
    let cached = match &options.out_dir {
        Some(out) => docintel_question::load_parsed_question(out, path, &document.profile, question)
            .ok()
            .flatten()
            .filter(|parsed| parsed.parser == parser.name()),
        None => None,
    };
    let was_cached = cached.is_some();
    let parsed = match cached {
        Some(parsed) => parsed,
        None => parser.parse(question, &document.profile).map_err(|e| brick_error("question")(Box::new(e)))?,
    };
    if let (Some(out), false) = (&options.out_dir, was_cached) {
        docintel_question::save_parsed_question(out, path, &document.profile, &parsed)
            .map_err(|e| brick_error("question")(Box::new(e)))?;
    }

    let mut run = answer_parsed(&document, parsed, &parser, options)?;
    run.output.meta.parsed_question_cached = was_cached;
    run.output.meta.timings_ms.insert("parse".into(), parse_ms);
    if let Some(out_dir) = &options.out_dir {
        let dir = docintel_trace::question_dir(out_dir, path, question);
        run.output.meta.trace_dir = Some(dir.display().to_string());
        docintel_trace::write_question_trace(&dir, &run.events, &run.output).map_err(PipelineError::Trace)?;
    }
    Ok((run.output, document))
}

/// The question parser the options ask for (built-in or a folder of
/// satellite tables).
pub fn question_parser(options: &AskOptions) -> Result<RuleParser, PipelineError> {
    let parser = RuleParser::new();
    match &options.satellites_dir {
        Some(dir) => Ok(parser.with_satellites(Satellites::from_dir(dir).map_err(PipelineError::Satellites)?)),
        None => Ok(parser),
    }
}

fn run_generator<G: Generator>(
    generator: &G,
    parsed: &ParsedQuestion,
    document: &ParsedDocument,
    retrieval: &docintel_schema::Retrieval,
    trace: &mut TraceRecorder,
    implementations: &mut BTreeMap<String, String>,
) -> Result<docintel_schema::Generation, PipelineError> {
    implementations.insert("generate".to_owned(), generator.name());
    generator.generate(parsed, document, &retrieval.passages, trace).map_err(|e| brick_error("generate")(Box::new(e)))
}

/// Answers `question` about an already parsed document (no trace written).
pub fn answer_document(
    document: &ParsedDocument,
    question: &str,
    options: &AskOptions,
) -> Result<QaRun, PipelineError> {
    let parser = question_parser(options)?;
    let parsed = parser.parse(question, &document.profile).map_err(|e| brick_error("question")(Box::new(e)))?;
    answer_parsed(document, parsed, &parser, options)
}

/// Runs retrieval, generation and validation for an already parsed question,
/// applying the caller's overrides on top of the dispatcher's decisions.
pub fn answer_parsed(
    document: &ParsedDocument,
    mut parsed: ParsedQuestion,
    parser: &RuleParser,
    options: &AskOptions,
) -> Result<QaRun, PipelineError> {
    let mut trace = TraceRecorder::new();
    let mut timings = BTreeMap::new();
    let mut implementations = BTreeMap::new();
    implementations.insert("question".to_owned(), parser.name());
    let question = parsed.original_question.clone();

    // The caller's overrides go on top of the dispatcher's decisions, each
    // noted.
    let clock = Instant::now();
    if let Some(pages) = &options.pages {
        parsed.retrieval.pages = pages.clone();
        parsed.structural_hints.pages_hint = pages.clone();
        parsed.parsing_notes.push(format!("pages {pages:?} set by the caller"));
    }
    if !options.use_toc && parsed.activations.use_toc_navigation {
        parsed.activations.use_toc_navigation = false;
        parsed.parsing_notes.push("TOC navigation turned off by the caller".to_owned());
    }
    timings.insert("question".to_owned(), clock.elapsed().as_millis() as u64);
    trace.record(TraceEvent {
        brick: "question".into(),
        step: "parse".into(),
        detail: serde_json::to_value(&parsed).unwrap_or_default(),
    });

    // Steps the dispatcher or caller turned off, and steps this build cannot
    // run, are reported, never silently dropped.
    let mut skipped = Vec::new();
    if !parsed.activations.use_toc_navigation {
        skipped.push(SkippedStep {
            step: "toc_navigation".into(),
            reason: "turned off by the dispatcher or caller".into(),
        });
    }
    if parsed.activations.use_embeddings {
        skipped.push(SkippedStep { step: "embeddings".into(), reason: "no embedding model in this build".into() });
    }

    // Retrieval brick.
    let clock = Instant::now();
    let retriever = KeywordRetriever::new(RetrieveConfig {
        top_k: options.top_k,
        window: options.window,
        reserve: options.top_k * 2,
    });
    implementations.insert("retrieve".to_owned(), retriever.name());
    let retrieval =
        retriever.retrieve(&parsed, document, &mut trace).map_err(|e| brick_error("retrieve")(Box::new(e)))?;
    timings.insert("retrieve".to_owned(), clock.elapsed().as_millis() as u64);

    // Generation brick: the implementation chosen by the caller.
    let clock = Instant::now();
    let generation = match &options.generator {
        GeneratorChoice::Extractive => {
            run_generator(&ExtractiveGenerator::new(), &parsed, document, &retrieval, &mut trace, &mut implementations)?
        }
        GeneratorChoice::Llm { config, model } => {
            let transport = OpenAiTransport::new(config.clone()).map_err(|e| brick_error("llm")(Box::new(e)))?;
            let generator = LlmGenerator::new(transport, model.clone());
            run_generator(&generator, &parsed, document, &retrieval, &mut trace, &mut implementations)?
        }
    };
    timings.insert("generate".to_owned(), clock.elapsed().as_millis() as u64);

    // Validation: every span inside a passage shown, every quote in its lines.
    let problems = docintel_generate::verify_citations(&generation.answer, document, &generation.passages_shown);
    let citations_verified = problems.is_empty();
    trace.record(TraceEvent {
        brick: "generate".into(),
        step: "validate".into(),
        detail: serde_json::json!({ "citations_verified": citations_verified, "problems": problems }),
    });

    // Cost from the models table: tokens times the listed prices of the model
    // we asked for (servers may answer with a dated variant of the name).
    let priced_model = match &options.generator {
        GeneratorChoice::Extractive => None,
        GeneratorChoice::Llm { model, .. } => Some(model),
    };
    let cost_usd = match priced_model {
        None => 0.0,
        Some(model) => match parser.satellites().model(model) {
            Some(row) => {
                (generation.usage.input_tokens as f64 * row.price_in_per_1m
                    + generation.usage.output_tokens as f64 * row.price_out_per_1m)
                    / 1_000_000.0
            }
            None => {
                skipped.push(SkippedStep {
                    step: "cost".into(),
                    reason: format!("model {model} is not in the models table: cost unknown (reported as 0)"),
                });
                0.0
            }
        },
    };
    let mut prompt_versions = BTreeMap::new();
    prompt_versions.insert("question_parsing".to_owned(), parsed.parser.clone());
    prompt_versions.insert("generation".to_owned(), generation.template_version.clone());
    let meta = Meta {
        docintel_version: env!("CARGO_PKG_VERSION").to_owned(),
        decomposition: parsed.decomposition.pattern,
        activations: parsed.activations.clone(),
        chunk_strategy: parsed.chunk_strategy,
        suggested_model: parsed.suggested_model.clone(),
        matched_concept: parsed.matched_concept.clone(),
        ambiguity_reason: parsed.ambiguity_reason.clone(),
        suggested_clarification: parsed.suggested_clarification.clone(),
        retrieval_rewrites: parsed.retrieval.rewrites.clone(),
        parsed_question_cached: false,
        skipped,
        parsing_notes: parsed.parsing_notes.clone(),
        retrieval_notes: retrieval.notes.clone(),
        iterations: generation.iterations,
        retrieval_methods_used: retrieval.methods_used.clone(),
        implementations,
        model: generation.model.clone(),
        prompt_versions,
        fragments_applied: generation.fragments_applied.clone(),
        chunk_strategy_executed: generation.strategy_executed.clone(),
        exit: generation.exit.clone(),
        passages_shown: generation
            .passages_shown
            .iter()
            .map(|p| format!("p{} l{}-{}", p.page, p.line_start, p.line_end))
            .collect(),
        tokens_in: generation.usage.input_tokens,
        tokens_out: generation.usage.output_tokens,
        cost_usd,
        timings_ms: timings,
        document_diagnostics: document
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .map(|d| match d.page {
                Some(page) => format!("p.{page}: {}", d.message),
                None => d.message.clone(),
            })
            .collect(),
        citation_problems: problems,
        trace_dir: None,
    };
    let output =
        AskOutput { question, document: document.source.clone(), answer: generation.answer, citations_verified, meta };
    Ok(QaRun { output, parsed_question: parsed, events: trace.events().to_vec() })
}

// ---------------------------------------------------------------------------
// Audit trail and highlighting for the CLI (issue 7, added by the trace/CLI
// session): re-exports only, so `docintel-cli` keeps depending on the facade
// alone. `pdf_qa_with_document` above is the other addition.
// ---------------------------------------------------------------------------

pub use docintel_parse::{HighlightError, highlight_pdf};
pub use docintel_trace::{QuestionTrace, TraceError, load_question_trace};
/// Reading a stored question folder back (`docintel trace show`).
pub mod trace {
    pub use docintel_trace::{render, summary};
}
