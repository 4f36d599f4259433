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

#[cfg(feature = "embeddings")]
mod hybrid;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub use docintel_schema as schema;
pub use docintel_schema::QuestionParser;
use docintel_schema::{
    AskOutput, Generator, Meta, ParsedDocument, ParsedQuestion, Retriever, Severity, SkippedStep, TraceEvent,
    TraceSink, Usage,
};
use docintel_trace::TraceRecorder;

pub use docintel_generate::{ExtractiveGenerator, LlmGenerator};
pub use docintel_llm::{ApiKey, OpenAiConfig, OpenAiTransport};
pub use docintel_parse::{
    ChunkConfig, ParseError, ParseOptions, chunk_document, parse_file, parse_file_with_options, parse_pdf,
    vision_candidates,
};
pub use docintel_parse::{
    DocumentFolder, OutputError, PARSER_BUILD, content_hash, document_folder, is_up_to_date, write_tables,
};
pub use docintel_question::type_model::FALLBACK as TYPE_FALLBACK;
pub use docintel_question::{
    DictionaryError, ExpertDictionary, LLM_PARSER_NAME, LlmQuestionParser, RuleParser, SatelliteError, Satellites,
    TypeModel, TypeVerdict, type_features,
};
pub use docintel_retrieve::{CorpusFile, KeywordRetriever, KeywordRouter, LlmRouter, RetrieveConfig, RoutingConfig};

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
    /// Model calls: the time one question's calls (question parse, routing, generation,
    /// retries included) may take; past it no call starts. Default 600 s.
    pub llm_time_budget: std::time::Duration,
    /// The instant that budget ends, set when the question starts (`pdf_qa`, `corpus_qa`,
    /// `answer_document`) unless the caller set one.
    pub llm_deadline: Option<Instant>,
    /// Model calls: the model's context window in tokens, when the caller
    /// knows it (else the server is asked, then the models table).
    pub llm_context: Option<u64>,
    /// Retrieval: lines of context around each hit.
    pub window: u32,
    /// Retrieval: restrict to these pages (overrides the question's hint).
    pub pages: Option<Vec<u32>>,
    /// Retrieval: allow TOC navigation (the dispatcher may still turn it off).
    pub use_toc: bool,
    /// Pipeline: where to write the per-question trace (`<out>/<document
    /// stem>/questions/...`), and the caches later runs reuse: parsed
    /// questions, and with embeddings the document's chunk vectors
    /// (`<out>/<document key>/embeddings/<key>.f32`). `None` writes none
    /// (chunk vectors are then cached in memory only).
    pub out_dir: Option<PathBuf>,
    /// Generation: which generator answers.
    pub generator: GeneratorChoice,
    /// Question: a folder of satellite tables replacing the built-in ones
    /// (answer types, concepts, concept keywords, models...).
    pub satellites_dir: Option<PathBuf>,
    /// Question: an expert dictionary CSV (`concept,language,keyword,weight`)
    /// replacing the built-in one.
    pub dictionary: Option<PathBuf>,
    /// Generation: the chunk strategy to execute, overriding the cascade's
    /// choice (noted in the parsing notes).
    pub strategy: Option<docintel_schema::ChunkStrategy>,
    /// Parsing: the password of an encrypted PDF (never logged or traced).
    pub password: Option<String>,
    /// Question: with an LLM generator, parse the question with the model
    /// too ([`LlmQuestionParser`], which falls back to the rules on any bad
    /// reply). `false` keeps the rule parser.
    pub llm_question: bool,
    /// Retrieval: with an LLM generator, pick TOC branches with the model
    /// too ([`LlmRouter`], keyword fallback on invalid replies). `false`
    /// keeps the keyword router.
    pub llm_router: bool,
    /// Generation: a JSON Schema file replacing the registry's answer schema
    /// (it must carry the feedback fields; model generation only). The reply
    /// is returned as `custom_answer`.
    pub schema: Option<PathBuf>,
    /// Generation: retry retrieval with the model's discovered keywords when
    /// the answer is insufficient, up to this many rounds in all (turns the
    /// question's `iterate_on_feedback` on; `None` keeps the dispatcher's
    /// choice). Only model generators discover keywords.
    pub iterate: Option<u32>,
    /// Generation: a JSONL bank of validated examples; the closest ones
    /// become the few-shot fragment of the model's prompt.
    pub examples: Option<PathBuf>,
    /// Retrieval: the all-MiniLM-L6-v2 model directory; when set, embedding
    /// retrieval runs beside the keyword search and the two are fused (needs
    /// a build with the `embeddings` feature; otherwise reported as skipped).
    pub embeddings: Option<PathBuf>,
}

impl AskOptions {
    /// Options with `top_k` passages, a 2-line window, no page override,
    /// TOC allowed, no trace written, and the offline extractive generator.
    pub fn new(top_k: usize) -> AskOptions {
        AskOptions {
            top_k,
            llm_time_budget: std::time::Duration::from_secs(600),
            llm_deadline: None,
            llm_context: None,
            window: 2,
            pages: None,
            use_toc: true,
            out_dir: None,
            generator: GeneratorChoice::Extractive,
            satellites_dir: None,
            dictionary: None,
            strategy: None,
            password: None,
            llm_question: true,
            llm_router: true,
            schema: None,
            iterate: None,
            examples: None,
            embeddings: None,
        }
    }

    /// These options with the model-call deadline of a question starting now (kept when set).
    fn for_question(&self) -> std::borrow::Cow<'_, AskOptions> {
        if self.llm_deadline.is_some() {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut options = self.clone();
        options.llm_deadline = Instant::now().checked_add(self.llm_time_budget);
        std::borrow::Cow::Owned(options)
    }

    /// The embedding model directory of the environment
    /// (`$DOCINTEL_EMBED_MODEL_DIR`), for callers that want it by default.
    pub fn embeddings_from_env() -> Option<PathBuf> {
        std::env::var_os("DOCINTEL_EMBED_MODEL_DIR").filter(|v| !v.is_empty()).map(PathBuf::from)
    }

    /// The model transport and name when the LLM generator is chosen.
    fn llm(&self) -> Option<(&OpenAiConfig, &str)> {
        match &self.generator {
            GeneratorChoice::Llm { config, model } => Some((config, model.as_str())),
            GeneratorChoice::Extractive => None,
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
    /// The trace could not be read (replay).
    Trace(docintel_trace::TraceError),
    /// The question was answered but its audit trail could not be written: the answer is
    /// here, to print before the failure.
    NotWritten {
        /// What could not be written, and why.
        message: String,
        /// The answer (its `_meta.trace_dir` is `None`).
        output: Box<AskOutput>,
    },
    /// The satellite tables given by the caller do not load.
    Satellites(SatelliteError),
    /// The expert dictionary given by the caller does not load.
    Dictionary(DictionaryError),
    /// The caller's answer schema does not load, lacks the feedback fields,
    /// or was given without a model to fill it.
    Schema(String),
    /// Another file or folder the caller named (an example bank, an
    /// embedding model) does not load; the message names it and the cause.
    Config(String),
    /// A corpus folder holds no readable document.
    EmptyCorpus {
        /// The folder.
        folder: String,
        /// The files that could not be read, with the cause.
        unreadable: Vec<String>,
    },
}

impl std::fmt::Display for PipelineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PipelineError::Parse(e) => write!(f, "{e}"),
            PipelineError::Brick { brick, .. } => write!(f, "the {brick} brick failed"),
            PipelineError::Trace(e) => write!(f, "{e}"),
            PipelineError::NotWritten { message, .. } => write!(
                f,
                "the answer was not recorded: {message} (give a writable --out DIR, or --no-trace to answer without an audit trail)"
            ),
            PipelineError::Satellites(e) => write!(f, "{e}"),
            PipelineError::Dictionary(e) => write!(f, "{e}"),
            PipelineError::Schema(message) => write!(f, "answer schema {message}"),
            PipelineError::Config(message) => write!(f, "{message}"),
            PipelineError::EmptyCorpus { folder, unreadable } => {
                write!(f, "{folder}: no readable document (pdf, txt, md, docx)")?;
                for line in unreadable {
                    write!(f, "; {line}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for PipelineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Parse and trace errors are complete one-line messages (file and
            // cause); chaining them again would print the cause twice.
            PipelineError::Parse(_)
            | PipelineError::Trace(_)
            | PipelineError::NotWritten { .. }
            | PipelineError::Satellites(_)
            | PipelineError::Dictionary(_)
            | PipelineError::Schema(_)
            | PipelineError::Config(_)
            | PipelineError::EmptyCorpus { .. } => None,
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
    /// The passages retrieval handed to generation (last round), in rank
    /// order: what an evaluation re-reads to score candidates.
    pub passages: Vec<docintel_schema::Passage>,
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
    let options = &*options.for_question();
    let started = Instant::now();
    let document = parse_file_with_options(path, &parse_options(options)).map_err(PipelineError::Parse)?;
    let parse_ms = started.elapsed().as_millis() as u64;
    let parser = question_parser(options)?;

    // Parse the question once per document profile: with an output folder,
    // a record saved by an earlier run (same question, same profile, same
    // parser) is reused.
    let expected_parser = match options.llm() {
        Some(_) if options.llm_question => LLM_PARSER_NAME.to_owned(),
        _ => parser.name(),
    };
    let (key, sha256) = document_key_of(path);
    let cached = match &options.out_dir {
        Some(out) => docintel_question::load_parsed_question(out, &key, &document.profile, question)
            .ok()
            .flatten()
            .filter(|parsed| parsed.parser == expected_parser),
        None => None,
    };
    let was_cached = cached.is_some();
    let question_run = match cached {
        Some(parsed) => QuestionRun::rules(parsed),
        None => parse_question(&parser, question, &document.profile, options)?,
    };
    let parsed_to_save = (!was_cached).then(|| question_run.parsed.clone());

    // Nothing is written before the run succeeded: a failed run leaves an existing folder as
    // it was.
    let mut run = answer_parsed_after(&document, question_run, &parser, options)?;
    run.output.meta.parsed_question_cached = was_cached;
    run.output.meta.timings_ms.insert("parse".into(), parse_ms);
    run.events.insert(0, document_event(path, &sha256, &key));
    if let Some(out_dir) = &options.out_dir {
        let dir = docintel_trace::question_dir(out_dir, &key, question);
        run.output.meta.trace_dir = Some(dir.display().to_string());
        let written = match &parsed_to_save {
            Some(parsed) => docintel_question::save_parsed_question(out_dir, &key, &document.profile, parsed)
                .map(|_| ())
                .map_err(|e| e.to_string()),
            None => Ok(()),
        }
        .and_then(|()| docintel_trace::write_question_trace(&dir, &run.events, &run.output).map_err(|e| e.to_string()));
        if let Err(message) = written {
            run.output.meta.trace_dir = None;
            return Err(PipelineError::NotWritten { message, output: Box::new(run.output) });
        }
    }
    Ok((run.output, document))
}

/// Whether `base_url` can be a model server's base URL (http or https with a host); the
/// reason when not, with any key in it redacted.
pub fn openai_url(base_url: &str) -> Result<(), String> {
    docintel_llm::openai::chat_completions_url(base_url).map(|_| ())
}

/// The folder key of the document at `path` ([`docintel_schema::slug::document_key`]: its
/// name and the SHA-256 of its bytes) and that SHA-256 (of the path itself when the file
/// cannot be read).
pub(crate) fn document_key_of(path: &Path) -> (String, String) {
    let sha256 = match std::fs::read(path) {
        Ok(bytes) => docintel_parse::content_hash(&bytes),
        Err(_) => docintel_parse::content_hash(path.display().to_string().as_bytes()),
    };
    (docintel_schema::slug::document_key(&path.display().to_string(), &sha256), sha256)
}

/// The trace's record of which document was read: its absolute path, the SHA-256 of its
/// bytes and its folder key (replay reads that path and checks that hash).
fn document_event(path: &Path, sha256: &str, key: &str) -> TraceEvent {
    let absolute =
        std::fs::canonicalize(path).or_else(|_| std::path::absolute(path)).unwrap_or_else(|_| path.to_owned());
    TraceEvent {
        brick: "parse".into(),
        step: "document".into(),
        detail: serde_json::json!({ "path": absolute.display().to_string(), "sha256": sha256, "key": key }),
    }
}

/// A keyword a feedback round adds to the question (the model discovered
/// it); the replay adds the same one when it meets the round in the trace.
fn feedback_keyword(text: &str) -> docintel_schema::Keyword {
    docintel_schema::Keyword {
        text: text.to_owned(),
        weight: 1.0,
        source: docintel_schema::KeywordSource::LlmExpansion,
        is_regex: false,
        semantic_group: None,
    }
}

/// A keyword retriever whose cache of normalised lines lives as long as the
/// process: the second question about a document does not normalise its
/// lines again (14,484 lines of NIST SP 800-53 took most of a question's
/// retrieval time).
fn shared_retriever(config: RetrieveConfig) -> KeywordRetriever {
    static BASE: std::sync::OnceLock<KeywordRetriever> = std::sync::OnceLock::new();
    BASE.get_or_init(|| KeywordRetriever::new(config)).clone().with_config(config)
}

/// The parse brick's options from the caller's (the password).
fn parse_options(options: &AskOptions) -> ParseOptions {
    match &options.password {
        Some(password) => ParseOptions::with_password(password.clone()),
        None => ParseOptions::default(),
    }
}

/// A parsed question with what parsing it cost: the model's trace events
/// (`question` / `llm_parse`, raw reply included) and token usage, both
/// empty for the rule parser.
struct QuestionRun {
    parsed: ParsedQuestion,
    events: Vec<TraceEvent>,
    usage: Usage,
    /// Model calls made (0 for the rules or a cached parse).
    calls: u32,
    /// Time the parse took.
    ms: u64,
}

impl QuestionRun {
    /// A question parsed by the rules (or read back from a cache): no model call.
    fn rules(parsed: ParsedQuestion) -> QuestionRun {
        QuestionRun { parsed, events: Vec::new(), usage: Usage::default(), calls: 0, ms: 0 }
    }
}

/// Parses `question` with the model when the options choose an LLM and
/// allow it for the question brick, else with the rules.
fn parse_question(
    rules: &RuleParser,
    question: &str,
    profile: &docintel_schema::DocumentProfile,
    options: &AskOptions,
) -> Result<QuestionRun, PipelineError> {
    match options.llm() {
        Some((config, model)) if options.llm_question => {
            let transport = OpenAiTransport::new(config.clone())
                .map_err(|e| brick_error("llm")(Box::new(e)))?
                .with_deadline(options.llm_deadline);
            let parser = LlmQuestionParser::new(transport, model).with_rules(rules.clone());
            let mut events: Vec<TraceEvent> = Vec::new();
            let clock = Instant::now();
            let run = parser
                .parse_traced(question, &[], profile, &mut events)
                .map_err(|e| brick_error("question")(Box::new(e)))?;
            let calls = events.iter().filter(|e| e.step == "llm_parse").count() as u32;
            let ms = clock.elapsed().as_millis() as u64;
            Ok(QuestionRun { parsed: run.parsed, events, usage: run.usage, calls, ms })
        }
        _ => {
            let clock = Instant::now();
            let parsed = rules.parse(question, profile).map_err(|e| brick_error("question")(Box::new(e)))?;
            Ok(QuestionRun { ms: clock.elapsed().as_millis() as u64, ..QuestionRun::rules(parsed) })
        }
    }
}

/// The question parser the options ask for (built-in or a folder of
/// satellite tables).
pub fn question_parser(options: &AskOptions) -> Result<RuleParser, PipelineError> {
    let mut parser = RuleParser::new();
    if let Some(dir) = &options.satellites_dir {
        parser = parser.with_satellites(Satellites::from_dir(dir).map_err(PipelineError::Satellites)?);
    }
    if let Some(file) = &options.dictionary {
        let name = file.display().to_string();
        let text = std::fs::read_to_string(file)
            .map_err(|e| PipelineError::Parse(ParseError::Io { path: name.clone(), source: e }))?;
        parser = parser.with_dictionary(ExpertDictionary::from_csv(&name, &text).map_err(PipelineError::Dictionary)?);
    }
    Ok(parser)
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

/// Answers `question` about an already parsed document (no trace written;
/// with embeddings and `options.out_dir`, the chunk vectors are cached there).
pub fn answer_document(
    document: &ParsedDocument,
    question: &str,
    options: &AskOptions,
) -> Result<QaRun, PipelineError> {
    let options = &*options.for_question();
    let parser = question_parser(options)?;
    let run = parse_question(&parser, question, &document.profile, options)?;
    answer_parsed_after(document, run, &parser, options)
}

/// Runs retrieval, generation and validation for an already parsed question,
/// applying the caller's overrides on top of the dispatcher's decisions.
pub fn answer_parsed(
    document: &ParsedDocument,
    parsed: ParsedQuestion,
    parser: &RuleParser,
    options: &AskOptions,
) -> Result<QaRun, PipelineError> {
    answer_parsed_after(document, QuestionRun::rules(parsed), parser, options)
}

fn answer_parsed_after(
    document: &ParsedDocument,
    question_run: QuestionRun,
    parser: &RuleParser,
    options: &AskOptions,
) -> Result<QaRun, PipelineError> {
    let QuestionRun {
        mut parsed,
        events: question_events,
        usage: question_usage,
        calls: question_calls,
        ms: question_ms,
    } = question_run;
    let mut trace = TraceRecorder::new();
    for event in question_events {
        trace.record(event);
    }
    // Lines that do not show on the page (white on white, tiny, covered) are withheld from
    // retrieval, generation and citation checks: their text is emptied, their ids kept.
    let invisible = document.invisible_lines();
    let visible_document = document.answerable();
    let document: &ParsedDocument = &visible_document;
    let invisible_note = (!invisible.is_empty()).then(|| {
        format!(
            "{} line(s) that do not show on the page withheld from retrieval and generation: {}",
            invisible.len(),
            invisible.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        )
    });
    if let Some(note) = &invisible_note {
        trace.record(TraceEvent {
            brick: "parse".into(),
            step: "invisible_lines".into(),
            detail: serde_json::json!({ "line_ids": invisible, "note": note }),
        });
    }
    let mut timings = BTreeMap::new();
    let mut implementations = BTreeMap::new();
    implementations.insert("question".to_owned(), parsed.parser.clone());
    let question = parsed.original_question.clone();

    // The caller's overrides go on top of the dispatcher's decisions, each
    // noted.
    let clock = Instant::now();
    if let Some(pages) = &options.pages {
        // Pages the document does not have are a mistake, never a silent fallback.
        if let Some(n) = document.profile.n_pages {
            let outside: Vec<u32> = pages.iter().copied().filter(|&p| p == 0 || p > n).collect();
            if !outside.is_empty() && outside.len() == pages.len() {
                return Err(PipelineError::Config(format!(
                    "--pages {}: {} has {n} page(s)",
                    outside.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
                    document.source
                )));
            }
            if !outside.is_empty() {
                parsed
                    .parsing_notes
                    .push(format!("pages {outside:?} are not in the document ({n} pages): ignored, the others kept"));
            }
        }
        parsed.retrieval.pages = pages.clone();
        parsed.structural_hints.pages_hint = pages.clone();
        parsed.parsing_notes.push(format!("pages {pages:?} set by the caller"));
    }
    if let Some(strategy) = options.strategy
        && strategy != parsed.chunk_strategy
    {
        parsed.parsing_notes.push(format!(
            "chunk strategy {} set by the caller (the cascade chose {})",
            format!("{strategy:?}").to_lowercase(),
            format!("{:?}", parsed.chunk_strategy).to_lowercase()
        ));
        parsed.chunk_strategy = strategy;
    }
    if !options.use_toc && parsed.activations.use_toc_navigation {
        parsed.activations.use_toc_navigation = false;
        parsed.parsing_notes.push("TOC navigation turned off by the caller".to_owned());
    }
    // The parse (a model call, with a model) and the caller's overrides.
    timings.insert("question".to_owned(), question_ms + clock.elapsed().as_millis() as u64);
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
    if let Some(dir) = &options.embeddings
        && !parsed.activations.use_embeddings
    {
        parsed.activations.use_embeddings = true;
        parsed.parsing_notes.push(format!("embedding retrieval turned on by the caller (model {})", dir.display()));
    }
    let embed_dir = options.embeddings.as_ref().filter(|_| parsed.activations.use_embeddings);
    if parsed.activations.use_embeddings && (embed_dir.is_none() || !cfg!(feature = "embeddings")) {
        let reason = if cfg!(feature = "embeddings") {
            "no embedding model directory given (--embeddings DIR or DOCINTEL_EMBED_MODEL_DIR)"
        } else {
            "this build has no embedding model (build docintel with --features embeddings)"
        };
        skipped.push(SkippedStep { step: "embeddings".into(), reason: reason.into() });
    }

    if let Some(rounds) = options.iterate {
        parsed.activations.iterate_on_feedback = rounds > 1;
        parsed.activations.max_iterations = rounds.max(1);
        parsed.parsing_notes.push(format!("feedback rounds set to {} by the caller", rounds.max(1)));
    }

    // The generator chosen by the caller, built once for every round.
    let mut generation_notes: Vec<String> = Vec::new();
    let llm_generator = match &options.generator {
        GeneratorChoice::Extractive => {
            if let Some(path) = &options.schema {
                return Err(PipelineError::Schema(format!(
                    "{}: a custom answer schema needs a model (set DOCINTEL_LLM_BASE_URL or OPENAI_API_KEY)",
                    path.display()
                )));
            }
            None
        }
        GeneratorChoice::Llm { config, model } => {
            let transport = OpenAiTransport::new(config.clone())
                .map_err(|e| brick_error("llm")(Box::new(e)))?
                .with_deadline(options.llm_deadline);
            // The model's context window: the caller's, else the server's
            // word, else the models table; generation fits every call in it.
            let window = match options.llm_context {
                Some(tokens) => Some((tokens, "set by the caller (DOCINTEL_LLM_CONTEXT or --llm-context)".to_owned())),
                None => transport.context_window(model).or_else(|| {
                    parser.satellites().model(model).map(|row| (row.context_window, "the models table".to_owned()))
                }),
            };
            generation_notes.push(match &window {
                Some((tokens, source)) => format!("context window {tokens} tokens ({source})"),
                None => "context window unknown (not set, not reported by the server, model not in the models table):                          prompts are split only if the server refuses one as too long"
                    .to_owned(),
            });
            let dispatch = docintel_generate::DispatchOptions {
                context_window: window.map(|(tokens, _)| tokens),
                ..Default::default()
            };
            let mut generator = LlmGenerator::new(transport, model.clone()).with_options(dispatch);
            if let Some(path) = &options.schema {
                let custom = docintel_generate::CustomSchema::from_file(path)
                    .map_err(|e| PipelineError::Schema(format!("{}: {e}", path.display())))?;
                generator = generator.with_custom_schema(custom);
            }
            if let Some(path) = &options.examples {
                let bank = docintel_generate::ExampleBank::load(path)
                    .map_err(|e| PipelineError::Config(format!("example bank {}: {e}", path.display())))?;
                // Tags: the answer type and, when matched, the concept.
                let tags: Vec<String> =
                    std::iter::once(parsed.answer_type.clone()).chain(parsed.matched_concept.clone()).collect();
                let picked = bank.select(&parsed.original_question, &tags, &Default::default());
                trace.record(TraceEvent {
                    brick: "generate".into(),
                    step: "few_shot".into(),
                    detail: serde_json::json!({
                        "bank": path.display().to_string(),
                        "bank_size": bank.len(),
                        "tags": tags,
                        "picked": picked.iter().map(|p| serde_json::json!({"index": p.index, "score": p.score, "question": p.example.question, "answer_json": p.example.answer_json})).collect::<Vec<_>>(),
                    }),
                });
                generator = generator.with_examples(picked.into_iter().map(|p| p.example).collect());
            }
            Some(generator)
        }
    };

    // Retrieval, generation and validation, in rounds: with
    // iterate_on_feedback, an insufficient answer whose model named new
    // keywords sends retrieval out again with them (feedback::retry_hint).
    let retriever = shared_retriever(RetrieveConfig {
        top_k: options.top_k,
        window: options.window,
        reserve: options.top_k * 2,
        read_pages_whole: true,
    });
    implementations.insert("retrieve".to_owned(), retriever.name());
    let mut router_usage = Usage::default();
    let mut router_calls = 0u32;
    let mut generation_usage = Usage::default();
    let mut generation_calls = 0u32;
    let mut feedback_notes = Vec::new();
    let mut round = 1u32;
    let (retrieval, generation, problems) = loop {
        // Retrieval brick.
        let clock = Instant::now();
        let retrieval = match options.llm() {
            Some((config, model)) if options.llm_router && parsed.activations.use_toc_navigation => {
                let transport = OpenAiTransport::new(config.clone())
                    .map_err(|e| brick_error("llm")(Box::new(e)))?
                    .with_deadline(options.llm_deadline);
                let router = LlmRouter::new(transport, model, RoutingConfig::STANDARD);
                implementations.insert("route".to_owned(), docintel_schema::Router::name(&router));
                let retrieval = retriever
                    .retrieve_with_router(&router, &parsed, document, &mut trace)
                    .map_err(|e| brick_error("retrieve")(Box::new(e)))?;
                for (i, response) in router.responses().into_iter().enumerate() {
                    router_calls += 1;
                    router_usage.input_tokens += response.usage.input_tokens;
                    router_usage.output_tokens += response.usage.output_tokens;
                    router_usage.cached_tokens += response.usage.cached_tokens;
                    trace.record(TraceEvent {
                        brick: "retrieve".into(),
                        step: "llm_route".into(),
                        detail: serde_json::json!({
                            "call": i + 1,
                            "round": round,
                            "model": model,
                            "usage": response.usage,
                            "raw": response.raw,
                        }),
                    });
                }
                retrieval
            }
            _ => retriever.retrieve(&parsed, document, &mut trace).map_err(|e| brick_error("retrieve")(Box::new(e)))?,
        };
        // Embedding retrieval beside the keyword search, fused by rank.
        #[cfg(feature = "embeddings")]
        let retrieval = match embed_dir {
            Some(dir) => {
                implementations.insert("embed".to_owned(), "minilm-l6-v2/rrf".to_owned());
                let store = options.out_dir.as_deref().map(|out| hybrid::store_dir(out, document));
                hybrid::fuse(dir, &parsed, document, &retrieval, options.top_k, store.as_deref(), &mut trace)
                    .map_err(PipelineError::Config)?
            }
            None => retrieval,
        };
        #[cfg(not(feature = "embeddings"))]
        let _ = embed_dir;
        *timings.entry("retrieve".to_owned()).or_default() += clock.elapsed().as_millis() as u64;

        // Generation brick. The passages it reads are recorded whole (scores
        // and anchors included: the reader weighs them), so replay reads
        // exactly what it read.
        trace.record(TraceEvent {
            brick: "generate".into(),
            step: "passages".into(),
            detail: serde_json::json!({ "round": round, "passages": retrieval.passages }),
        });
        let clock = Instant::now();
        let generation = match &llm_generator {
            None => run_generator(
                &ExtractiveGenerator::new(),
                &parsed,
                document,
                &retrieval,
                &mut trace,
                &mut implementations,
            )?,
            Some(generator) => {
                run_generator(generator, &parsed, document, &retrieval, &mut trace, &mut implementations)?
            }
        };
        *timings.entry("generate".to_owned()).or_default() += clock.elapsed().as_millis() as u64;
        generation_usage.input_tokens += generation.usage.input_tokens;
        generation_usage.output_tokens += generation.usage.output_tokens;
        generation_usage.cached_tokens += generation.usage.cached_tokens;
        generation_calls += generation.iterations;

        // Validation: every span inside a passage shown, every quote in its lines.
        let problems = docintel_generate::verify_citations(&generation.answer, document, &generation.passages_shown);
        trace.record(TraceEvent {
            brick: "generate".into(),
            step: "validate".into(),
            detail: serde_json::json!({ "round": round, "citations_verified": problems.is_empty(), "problems": problems }),
        });

        let hint = if parsed.activations.iterate_on_feedback {
            let known: Vec<String> = parsed.keywords.iter().map(|k| k.text.clone()).collect();
            docintel_generate::feedback::retry_hint(
                &generation.answer,
                &problems,
                round,
                parsed.activations.max_iterations,
                &known,
            )
        } else {
            None
        };
        let Some(hint) = hint else { break (retrieval, generation, problems) };
        trace.record(TraceEvent {
            brick: "generate".into(),
            step: "feedback_retry".into(),
            detail: serde_json::json!({ "round": round, "reason": hint.reason, "keywords": hint.keywords }),
        });
        feedback_notes.push(format!("feedback round {}: {}", round + 1, hint.reason));
        parsed.keywords.extend(hint.keywords.iter().map(|k| feedback_keyword(k)));
        round += 1;
    };
    let citations_verified = problems.is_empty();
    // Lines shown to the generator that read like instructions to a model are flagged (the
    // generator must treat them as data; a citation of one is suspect).
    let instruction_lines: Vec<u32> = {
        let mut ids: Vec<u32> = generation
            .passages_shown
            .iter()
            .flat_map(|p| document.line_range(p.line_start, p.line_end))
            .filter(|l| docintel_schema::text::looks_like_instruction(&l.text))
            .map(|l| l.line_id)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    };
    let mut instruction_note = None;
    if !instruction_lines.is_empty() {
        let cited: Vec<u32> = generation
            .answer
            .items
            .iter()
            .flat_map(|i| &i.spans)
            .flat_map(|s| s.line_start..=s.line_end)
            .filter(|id| instruction_lines.contains(id))
            .collect();
        let note = format!(
            "passages shown hold {} line(s) that read like instructions to a model (lines {}){}",
            instruction_lines.len(),
            instruction_lines.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
            if cited.is_empty() { String::new() } else { "; the answer cites one".to_owned() }
        );
        trace.record(TraceEvent {
            brick: "generate".into(),
            step: "instruction_like_text".into(),
            detail: serde_json::json!({ "line_ids": instruction_lines, "cited": cited, "note": note }),
        });
        instruction_note = Some(note);
    }

    // Cost from the models table: tokens times the listed prices of the model
    // we asked for (servers may answer with a dated variant of the name).
    let priced_model = match &options.generator {
        GeneratorChoice::Extractive => None,
        GeneratorChoice::Llm { model, .. } => Some(model),
    };
    // Every model call of the question counts: parsing, routing, generation.
    let tokens_in = question_usage.input_tokens + router_usage.input_tokens + generation_usage.input_tokens;
    let tokens_out = question_usage.output_tokens + router_usage.output_tokens + generation_usage.output_tokens;
    let price = priced_model.and_then(|model| parser.satellites().model(model));
    if let (Some(model), None) = (priced_model, price) {
        skipped.push(SkippedStep {
            step: "cost".into(),
            reason: format!("model {model} is not in the models table: cost unknown (reported as 0)"),
        });
    }
    let cost_of = |usage: &Usage| {
        price.map_or(0.0, |row| {
            (usage.input_tokens as f64 * row.price_in_per_1m + usage.output_tokens as f64 * row.price_out_per_1m)
                / 1_000_000.0
        })
    };
    let mut llm_usage = BTreeMap::new();
    if priced_model.is_some() {
        for (step, calls, usage) in [
            ("question", question_calls, &question_usage),
            ("routing", router_calls, &router_usage),
            ("generation", generation_calls, &generation_usage),
        ] {
            llm_usage.insert(
                step.to_owned(),
                docintel_schema::StepUsage {
                    calls,
                    input_tokens: usage.input_tokens,
                    output_tokens: usage.output_tokens,
                    cached_tokens: usage.cached_tokens,
                    cost_usd: cost_of(usage),
                },
            );
        }
    }
    let cost_usd = llm_usage.values().map(|u| u.cost_usd).sum::<f64>();
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
        retrieval_notes: invisible_note
            .iter()
            .chain(&retrieval.notes)
            .chain(&feedback_notes)
            .chain(&instruction_note)
            .cloned()
            .collect(),
        generation_notes: generation_notes.into_iter().chain(generation.notes.iter().cloned()).collect(),
        iterations: generation_calls,
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
        tokens_in,
        tokens_out,
        cost_usd,
        llm_usage,
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
        citation_value_checks: docintel_generate::citation_value_checks(&generation.answer),
        citation_problems: problems,
        trace_dir: None,
        corpus: None,
    };
    let output = AskOutput {
        question,
        document: document.source.clone(),
        answer: generation.answer,
        citations_verified,
        custom_answer: generation.answer_json,
        meta,
    };
    Ok(QaRun { output, parsed_question: parsed, events: trace.events().to_vec(), passages: retrieval.passages.clone() })
}

/// File extensions `corpus_qa` reads from a folder.
pub const CORPUS_EXTENSIONS: [&str; 5] = ["pdf", "txt", "md", "markdown", "docx"];

/// The readable documents of a corpus folder (not recursive), sorted by
/// name.
pub fn corpus_files(dir: &Path) -> Result<Vec<PathBuf>, PipelineError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| PipelineError::Parse(ParseError::Io { path: dir.display().to_string(), source: e }))?;
    // A symbolic link to a file outside the folder is not part of the corpus.
    let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_owned());
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .filter(|p| {
            let inside = std::fs::canonicalize(p).is_ok_and(|target| target.starts_with(&root));
            if !inside {
                tracing::warn!("{}: a link to a file outside {}: skipped", p.display(), dir.display());
            }
            inside
        })
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| CORPUS_EXTENSIONS.iter().any(|x| e.eq_ignore_ascii_case(x)))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// A parsed corpus: the documents that could be read, and the files that
/// could not, with the cause.
#[derive(Debug, Clone, Default)]
pub struct Corpus {
    /// The folder.
    pub folder: PathBuf,
    /// `(path, document)` for every readable file, in name order.
    pub documents: Vec<(PathBuf, ParsedDocument)>,
    /// One line per unreadable file: its error (which names the file).
    pub unreadable: Vec<String>,
}

/// Parses every document of `dir` (see [`corpus_files`]); a file that cannot
/// be read is listed in [`Corpus::unreadable`] and the others still load.
/// `progress` is called after each file with (done, total, path).
pub fn load_corpus(
    dir: &Path,
    options: &AskOptions,
    mut progress: impl FnMut(usize, usize, &Path),
) -> Result<Corpus, PipelineError> {
    let files = corpus_files(dir)?;
    let mut corpus = Corpus { folder: dir.to_owned(), ..Corpus::default() };
    let parse_options = parse_options(options);
    for (i, path) in files.iter().enumerate() {
        // One bad file never ends the corpus: an error or a panic (the parser should never
        // panic; this is the second wall) leaves it out, named in `unreadable`.
        let parsed =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parse_file_with_options(path, &parse_options)));
        match parsed {
            Ok(Ok(document)) => corpus.documents.push((path.clone(), document)),
            Ok(Err(error)) => corpus.unreadable.push(error.to_string()),
            Err(_) => corpus.unreadable.push(format!("{}: the parser panicked on this file", path.display())),
        }
        progress(i + 1, files.len(), path);
    }
    Ok(corpus)
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
    let options = &*options.for_question();
    let Some((_, first)) = corpus.documents.first() else {
        return Err(PipelineError::EmptyCorpus {
            folder: corpus.folder.display().to_string(),
            unreadable: corpus.unreadable.clone(),
        });
    };
    let started = Instant::now();
    let parser = question_parser(options)?;
    let routing_question = parser.parse(question, &first.profile).map_err(|e| brick_error("question")(Box::new(e)))?;
    let names: Vec<String> = corpus
        .documents
        .iter()
        .map(|(path, _)| {
            path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
        })
        .collect();
    let files: Vec<CorpusFile<'_>> =
        corpus.documents.iter().zip(&names).map(|((_, document), name)| CorpusFile { name, document }).collect();
    let router = KeywordRouter::new(RoutingConfig::STANDARD);
    let mut trace = TraceRecorder::new();
    let route = docintel_retrieve::route_corpus(&router, &routing_question, &files, &mut trace)
        .map_err(brick_error("retrieve"))?;
    let mut order = route.picked_files();
    if order.is_empty() {
        let best = (0..route.lines.len()).max_by_key(|&i| (route.lines[i].keyword_hits, std::cmp::Reverse(i)));
        order.extend(best);
    }
    let routing_ms = started.elapsed().as_millis() as u64;

    let mut tried = Vec::new();
    let mut best: Option<(AskOutput, Vec<TraceEvent>, ParsedQuestion, usize)> = None;
    for &index in &order {
        let (path, document) = &corpus.documents[index];
        // Each file's question parse sees its own profile (pages, TOC); with
        // a model configured it is the model's parse, as in `pdf_qa`.
        let question_run = parse_question(&parser, question, &document.profile, options)?;
        let run = answer_parsed_after(document, question_run, &parser, options)?;
        let feedback = &run.output.answer.feedback;
        let sufficient = feedback.answer_found && feedback.complete_answer_found && run.output.citations_verified;
        tried.push(format!(
            "{}: {}",
            names[index],
            if sufficient {
                "answered"
            } else if feedback.answer_found {
                "partial answer"
            } else {
                "not found"
            }
        ));
        let better = match &best {
            None => true,
            Some((current, ..)) => feedback.answer_found && !current.answer.feedback.answer_found,
        };
        if better {
            let mut output = run.output;
            output.document = path.display().to_string();
            best = Some((output, run.events, run.parsed_question, index));
        }
        if sufficient {
            break;
        }
    }
    let Some((mut output, events, parsed, index)) = best else {
        return Err(PipelineError::EmptyCorpus {
            folder: corpus.folder.display().to_string(),
            unreadable: corpus.unreadable.clone(),
        });
    };
    output.meta.timings_ms.insert("corpus_routing".into(), routing_ms);
    output.meta.corpus = Some(docintel_schema::CorpusMeta {
        folder: corpus.folder.display().to_string(),
        router: docintel_schema::Router::name(&router),
        lines_shown: route.lines.iter().map(|l| l.render()).collect(),
        picked: route.picked_files().iter().map(|&i| names[i].clone()).collect(),
        reason: route.pick.reason.clone(),
        tried,
        unreadable: corpus.unreadable.clone(),
    });
    if let Some(out_dir) = &options.out_dir {
        let path = &corpus.documents[index].0;
        let (key, sha256) = document_key_of(path);
        let mut all_events = vec![document_event(path, &sha256, &key)];
        all_events.extend(trace.events().iter().cloned());
        all_events.extend(events);
        let dir = docintel_trace::question_dir(out_dir, &key, question);
        output.meta.trace_dir = Some(dir.display().to_string());
        let written =
            docintel_question::save_parsed_question(out_dir, &key, &corpus.documents[index].1.profile, &parsed)
                .map(|_| ())
                .map_err(|e| e.to_string())
                .and_then(|()| {
                    docintel_trace::write_question_trace(&dir, &all_events, &output).map_err(|e| e.to_string())
                });
        if let Err(message) = written {
            output.meta.trace_dir = None;
            return Err(PipelineError::NotWritten { message, output: Box::new(output) });
        }
    }
    Ok(output)
}

/// One check of [`replay_question`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ReplayCheck {
    /// What was rebuilt (`answer`, `call 1 system prompt`, ...).
    pub what: String,
    /// Whether the rebuilt bytes equal the recorded ones.
    pub identical: bool,
    /// A short explanation (first difference, or what was compared).
    pub detail: String,
}

/// What [`replay_question`] found.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ReplayReport {
    /// The question folder replayed.
    pub dir: String,
    /// The document re-read.
    pub document: String,
    /// One entry per rebuilt artefact.
    pub checks: Vec<ReplayCheck>,
}

impl ReplayReport {
    /// Whether every check matched.
    pub fn all_identical(&self) -> bool {
        !self.checks.is_empty() && self.checks.iter().all(|c| c.identical)
    }
}

/// `p<page> l<start>-<end>` (the `_meta.passages_shown` form) as a passage.
fn passage_from_label(label: &str) -> Option<docintel_schema::Passage> {
    let (page, lines) = label.strip_prefix('p')?.split_once(" l")?;
    let (start, end) = lines.split_once('-')?;
    let (page, line_start, line_end) = (page.parse().ok()?, start.parse().ok()?, end.parse().ok()?);
    Some(docintel_schema::Passage {
        line_start,
        line_end,
        page,
        score: 0.0,
        anchor_line: line_start,
        matched_keywords: Vec::new(),
        pinned: false,
    })
}

/// Where two texts first differ, for a replay report.
fn first_difference(recorded: &str, rebuilt: &str) -> String {
    let at = recorded.chars().zip(rebuilt.chars()).take_while(|(a, b)| a == b).count();
    let around = |t: &str| t.chars().skip(at.saturating_sub(20)).take(60).collect::<String>();
    format!(
        "first difference at char {at}: recorded {:?}, rebuilt {:?} ({} vs {} chars)",
        around(recorded),
        around(rebuilt),
        recorded.chars().count(),
        rebuilt.chars().count()
    )
}

/// Rebuilds what one stored question sent and produced, from its stored
/// parsed question and passages, re-reading the document, and compares:
/// with an LLM generator, every call's system and user prompt must be
/// byte-identical to what was sent (recorded in the `llm_response` events);
/// with the extractive generator, the answer itself must be (it is
/// deterministic). The stored citations are verified again against the
/// document as it is now.
pub fn replay_question(dir: &Path) -> Result<ReplayReport, PipelineError> {
    replay_question_with_options(dir, &ParseOptions::default())
}

/// [`replay_question`] re-reading the document with `options` (the password of an encrypted
/// PDF: passwords are never stored in a trace).
pub fn replay_question_with_options(dir: &Path, options: &ParseOptions) -> Result<ReplayReport, PipelineError> {
    let trace = docintel_trace::load_question_trace(dir).map_err(PipelineError::Trace)?;
    let parsed: ParsedQuestion = trace
        .events
        .iter()
        .find(|e| e.brick == "question" && e.step == "parse")
        .and_then(|e| serde_json::from_value(e.detail.clone()).ok())
        .unwrap_or_else(|| trace.parsed_question.clone());
    // The document the trace recorded (absolute path and SHA-256 of its bytes); traces
    // written before that record keep the path as typed.
    let recorded = trace.events.iter().find(|e| e.brick == "parse" && e.step == "document").map(|e| &e.detail);
    let recorded_path = recorded.and_then(|d| d.get("path")).and_then(serde_json::Value::as_str);
    let recorded_hash = recorded.and_then(|d| d.get("sha256")).and_then(serde_json::Value::as_str);
    let document_path = PathBuf::from(recorded_path.unwrap_or(&trace.output.document));
    let document = parse_file_with_options(&document_path, options).map_err(PipelineError::Parse)?;
    // As the ask saw it (see `answer_parsed_after`).
    let document = document.answerable().into_owned();
    let shown: Vec<docintel_schema::Passage> =
        trace.output.meta.passages_shown.iter().filter_map(|l| passage_from_label(l)).collect();
    let mut checks = Vec::new();
    let (_, sha256) = document_key_of(&document_path);
    checks.push(ReplayCheck {
        what: format!("document {} (SHA-256 of its bytes)", document_path.display()),
        identical: recorded_hash.is_none_or(|h| h == sha256),
        detail: match recorded_hash {
            None => "no hash recorded (a trace from an older build)".into(),
            Some(h) if h == sha256 => format!("{} as recorded", &sha256[..12]),
            Some(h) => format!("the file changed: recorded {}, now {}", &h[..h.len().min(12)], &sha256[..12]),
        },
    });
    // The question the trace answers: the same text in the answer, the parsed question and
    // the trace folder's name.
    let folder = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let same_question = trace.output.question == parsed.original_question
        && trace.parsed_question.original_question == parsed.original_question
        && folder == docintel_schema::slug::question_slug(&parsed.original_question);
    checks.push(ReplayCheck {
        what: "question".into(),
        identical: same_question,
        detail: if same_question {
            format!("{:?}", parsed.original_question)
        } else {
            format!(
                "answer.json asks {:?}, parsed_question.json {:?}, the folder is {folder}",
                trace.output.question, trace.parsed_question.original_question
            )
        },
    });

    let problems = docintel_generate::verify_citations(&trace.output.answer, &document, &shown);
    checks.push(ReplayCheck {
        what: "citations against the document now".into(),
        identical: problems.is_empty() == trace.output.citations_verified,
        detail: if problems.is_empty() {
            "every stored quote is still in its cited lines".into()
        } else {
            format!("{} problem(s): {}", problems.len(), problems[0].problem)
        },
    });

    let generator = trace.output.meta.implementations.get("generate").cloned().unwrap_or_default();
    if generator.starts_with("extractive") {
        // The passages as the reader read them (scores and anchors), from the
        // last round's record; a trace from an older build has only labels.
        let read: Vec<docintel_schema::Passage> = trace
            .events
            .iter()
            .rev()
            .find(|e| e.brick == "generate" && e.step == "passages")
            .and_then(|e| serde_json::from_value(e.detail["passages"].clone()).ok())
            .unwrap_or_else(|| shown.clone());
        let mut sink = docintel_schema::NullSink;
        let generation = ExtractiveGenerator::new()
            .generate(&parsed, &document, &read, &mut sink)
            .map_err(|e| brick_error("generate")(Box::new(e)))?;
        let recorded = serde_json::to_string_pretty(&trace.output.answer).unwrap_or_default();
        let rebuilt = serde_json::to_string_pretty(&generation.answer).unwrap_or_default();
        checks.push(ReplayCheck {
            what: format!("answer ({generator}) from {} stored passage(s)", shown.len()),
            identical: recorded == rebuilt,
            detail: if recorded == rebuilt {
                format!("{} bytes identical", recorded.len())
            } else {
                first_difference(&recorded, &rebuilt)
            },
        });
    }
    // The prompts change with the trace: few-shot picks join the system
    // prompt, feedback rounds add keywords before the calls that follow.
    let mut parsed = parsed;
    let mut examples: Vec<docintel_generate::FewShotExample> = Vec::new();
    let mut seen_calls = 0usize;
    for event in &trace.events {
        match (event.brick.as_str(), event.step.as_str()) {
            ("generate", "few_shot") => {
                examples = event.detail["picked"]
                    .as_array()
                    .map(|picked| {
                        picked
                            .iter()
                            .map(|p| docintel_generate::FewShotExample {
                                question: p["question"].as_str().unwrap_or_default().to_owned(),
                                answer_json: p["answer_json"].as_str().unwrap_or_default().to_owned(),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                continue;
            }
            ("generate", "feedback_retry") => {
                let added = event.detail["keywords"].as_array().into_iter().flatten().filter_map(|k| k.as_str());
                parsed.keywords.extend(added.map(feedback_keyword));
                continue;
            }
            (_, "llm_response") => seen_calls += 1,
            _ => continue,
        }
        let call = event.detail.get("call").and_then(serde_json::Value::as_u64).unwrap_or(seen_calls as u64);
        let passages: Vec<docintel_schema::Passage> = event
            .detail
            .get("passages")
            .and_then(serde_json::Value::as_array)
            .map(|a| a.iter().filter_map(|v| v.as_str().and_then(passage_from_label)).collect())
            .unwrap_or_default();
        let request = event.detail.get("request");
        let recorded = |key: &str| request.and_then(|r| r.get(key)).and_then(serde_json::Value::as_str);
        let (system, _) = docintel_generate::prompt::build_system_prompt_with_examples(&parsed, &examples);
        let user = docintel_generate::build_user_prompt(&parsed, &document, &passages);
        for (name, rebuilt) in [("system", system), ("user", user)] {
            let check = match recorded(name) {
                Some(recorded) => ReplayCheck {
                    what: format!("call {call} {name} prompt"),
                    identical: recorded == rebuilt,
                    detail: if recorded == rebuilt {
                        format!("{} bytes identical", rebuilt.len())
                    } else {
                        first_difference(recorded, &rebuilt)
                    },
                },
                None => ReplayCheck {
                    what: format!("call {call} {name} prompt"),
                    identical: false,
                    detail: "the trace does not hold the prompt sent (recorded by an older docintel)".into(),
                },
            };
            checks.push(check);
        }
    }
    if checks.len() == 1 && !generator.starts_with("extractive") {
        checks.push(ReplayCheck {
            what: format!("generation ({generator})"),
            identical: false,
            detail: "no generation step recorded that can be rebuilt".into(),
        });
    }
    Ok(ReplayReport { dir: dir.display().to_string(), document: trace.output.document.clone(), checks })
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
