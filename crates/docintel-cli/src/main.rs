//! `docintel`: ask a PDF a question and get a typed answer whose every claim
//! cites the exact source lines.
//!
//! This binary parses arguments, calls the facade, prints, and maps failures
//! to exit codes (`PipelineError::exit_code`). The environment is read by the
//! facade's `Config::from_env` (and `RUST_LOG` here).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use docintel::schema::{AskOutput, BBox, ChunkStrategy, DocumentFormat, ParsedDocument};
use docintel::{AskOptions, Config, EXIT_FAILURE, Engine, LlmFlags, PipelineError};

mod kb;
mod serve;

const EXIT_CODES_HELP: &str = "\
Exit codes:
  0  answered (an honest \"not found\" is an answer), or the command succeeded
  1  internal failure (a bug, a trace or output file that cannot be written)
  2  usage error (bad arguments, --highlight on a non-PDF input)
  3  bad input (missing file, not a PDF, encrypted, unreadable, not a trace folder,
     a trace of an older format for replay; for kb: not a knowledge base, one of
     another format (re-index with `kb add KB`), an unknown document, a missing,
     bad or wrong key of an encrypted one, or a file `kb add` could not ingest,
     the others being added)

Logging: RUST_LOG (e.g. RUST_LOG=debug or RUST_LOG=docintel=info) filters the
logs, which always go to stderr; stdout carries only the requested output.";

#[derive(Parser)]
#[command(
    name = "docintel",
    version,
    about = "Grounded, typed answers about documents, with line-level citations",
    after_help = EXIT_CODES_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Answer a question about a PDF.
    Ask(Box<AskArgs>),
    /// Parse a document (PDF, TXT, Markdown) and print its profile, TOC and line table.
    Parse(ParseArgs),
    /// Read a stored audit trail.
    #[command(subcommand)]
    Trace(TraceCommand),
    /// A knowledge base: ingest documents once, ask many questions.
    #[command(subcommand)]
    Kb(kb::KbCommand),
    /// Serve knowledge bases over HTTP: a JSON API (`/v1/openapi.json`) and a web page.
    Serve(serve::ServeArgs),
}

#[derive(Subcommand)]
enum TraceCommand {
    /// Print the decision path of one question folder
    /// (`<out>/<document>/questions/<question>-<hash>/`).
    Show(TraceShowArgs),
    /// Rebuild the prompts (LLM) or the answer (extractive) of one question
    /// folder from its stored parsed question and passages, re-reading the
    /// document, and check they are byte-identical to what was recorded
    /// (exit 1 when any differs).
    Replay(TraceReplayArgs),
}

#[derive(Args)]
struct TraceReplayArgs {
    /// The question folder (holds parsed_question.json, pipeline_trace.json, answer.json).
    dir: PathBuf,
    /// Print exactly one JSON summary object on stdout.
    #[arg(long)]
    json: bool,
    /// Password of the traced document when it is an encrypted PDF (never stored in a trace).
    #[arg(long, value_name = "PASSWORD")]
    password: Option<String>,
}

#[derive(Args)]
struct TraceShowArgs {
    /// The question folder (holds parsed_question.json, pipeline_trace.json, answer.json).
    dir: PathBuf,
    /// Print exactly one JSON summary object on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct AskArgs {
    /// `FILE QUESTION`: the document (PDF, TXT, Markdown, DOCX) and the
    /// question in natural language; with `--corpus DIR`, only `QUESTION`.
    #[arg(value_name = "FILE> <QUESTION", num_args = 1..=2, required = true)]
    positional: Vec<std::ffi::OsString>,
    /// Ask a folder of documents instead of one file: the router first picks
    /// the file(s) from a list of names and summaries, then walks each
    /// picked file's own table of contents.
    #[arg(long, value_name = "DIR")]
    corpus: Option<PathBuf>,
    /// Print exactly one JSON object on stdout.
    #[arg(long)]
    json: bool,

    /// Parsing: password of an encrypted PDF (the empty password is always
    /// tried first).
    #[arg(long, value_name = "PASSWORD", help_heading = "Parsing")]
    password: Option<String>,

    /// Question: expert dictionary CSV (`concept,language,keyword,weight`)
    /// replacing the built-in one.
    #[arg(long, value_name = "FILE", help_heading = "Question")]
    dictionary: Option<PathBuf>,

    /// Question: folder of satellite tables (CSV) replacing the built-in ones:
    /// answer_types, answer_shapes, concepts, concept_keywords, models, model_tiers.
    #[arg(long, value_name = "DIR", help_heading = "Question")]
    satellites: Option<PathBuf>,
    /// Question: who parses the question when a model is configured: `llm`
    /// (the default then; the rules fill what code can decide and take over
    /// on any bad reply) or `rules` (no model call for parsing).
    #[arg(long, value_parser = ["llm", "rules"], help_heading = "Question")]
    question_parser: Option<String>,
    /// Question: ask after the question of this trace folder (and the ones it
    /// followed): a follow-up ("When is it due?") is rewritten for retrieval
    /// from them; the answer and the model's prompts keep your words.
    #[arg(long, value_name = "TRACE_DIR", help_heading = "Question")]
    follow_up: Option<PathBuf>,

    /// Retrieval: number of passages shown to the generator.
    #[arg(long, default_value_t = 5, help_heading = "Retrieval")]
    top_k: usize,
    /// Retrieval: restrict to these pages (1-based, comma-separated).
    #[arg(long, value_delimiter = ',', help_heading = "Retrieval")]
    pages: Option<Vec<u32>>,
    /// Retrieval: never navigate the table of contents.
    #[arg(long, help_heading = "Retrieval")]
    no_toc: bool,
    /// Retrieval: who picks table-of-contents branches when a model is
    /// configured: `llm` (the default then; keyword fallback on invalid
    /// replies) or `keyword` (no model call for routing).
    #[arg(long, value_parser = ["llm", "keyword"], help_heading = "Retrieval")]
    router: Option<String>,
    /// Retrieval: the all-MiniLM-L6-v2 model directory (default:
    /// $DOCINTEL_EMBED_MODEL_DIR; fetch it with `cargo xtask fetch-model
    /// minilm`); embedding retrieval then runs beside the keyword search and
    /// the rankings are fused. Needs a build with `--features embeddings`.
    #[arg(long, value_name = "DIR", help_heading = "Retrieval")]
    embeddings: Option<PathBuf>,

    /// Generation: how candidates are shown to the generator, overriding the
    /// question's cascade: `sequential` (top-1 first, stop when it suffices)
    /// or `combined` (all passages in one call).
    #[arg(long, value_parser = ["sequential", "combined"], help_heading = "Generation")]
    strategy: Option<String>,
    /// Generation: a JSON Schema file replacing the registry's answer schema
    /// (needs a model; it must carry the feedback fields answer_found,
    /// complete_answer_found, warnings); the reply is printed as custom_answer.
    #[arg(long, value_name = "FILE", help_heading = "Generation")]
    schema: Option<PathBuf>,
    /// Generation: up to N rounds in all; when the model's answer is not
    /// found, incomplete or badly cited, retrieval runs again with the
    /// keywords the model discovered (needs a model; each round costs a
    /// generation).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=5), help_heading = "Generation")]
    iterate: Option<u32>,
    /// Generation: a JSONL bank of validated examples (`{"question", "answer",
    /// "tags"}` per line); the 3-5 closest become few-shot examples in the
    /// model's prompt (needs a model).
    #[arg(long, value_name = "FILE", help_heading = "Generation")]
    examples: Option<PathBuf>,
    /// Generation: model name (default: $DOCINTEL_LLM_MODEL, else gpt-4.1-mini).
    #[arg(long, help_heading = "Generation")]
    model: Option<String>,
    /// Generation: OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1
    /// (default: $DOCINTEL_LLM_BASE_URL; with only $OPENAI_API_KEY set, OpenAI).
    #[arg(long, help_heading = "Generation")]
    llm_base_url: Option<String>,
    /// Generation: the model's context window in tokens (default:
    /// $DOCINTEL_LLM_CONTEXT, else what the server reports — llama.cpp,
    /// vLLM, Ollama — else the models table); every call is fitted in it.
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(256..), help_heading = "Generation")]
    llm_context: Option<u64>,
    /// Generation: answer offline with the extractive generator even when an
    /// endpoint is configured.
    #[arg(long, help_heading = "Generation")]
    offline: bool,
    /// Generation: write a copy of the PDF with the cited lines highlighted
    /// (one highlight annotation per cited line, the quote as its note).
    #[arg(long, value_name = "OUT.pdf", help_heading = "Generation")]
    highlight: Option<PathBuf>,

    /// Pipeline: folder for the per-question audit trail and the caches the
    /// next run reuses (parsed questions; with --embeddings, the document's
    /// chunk vectors in `<out>/<document>/embeddings/`).
    #[arg(long, default_value = "docintel-out", help_heading = "Pipeline")]
    out: PathBuf,
    /// Pipeline: write nothing to disk, neither the audit trail nor the caches
    /// (`_meta` is still printed).
    #[arg(long, help_heading = "Pipeline")]
    no_trace: bool,
}

#[derive(Args)]
struct ParseArgs {
    /// The PDF to parse.
    file: PathBuf,
    /// Print the whole parsed document as one JSON object.
    #[arg(long)]
    json: bool,
    /// Password of an encrypted PDF (the empty password is always tried first).
    #[arg(long, value_name = "PASSWORD")]
    password: Option<String>,
    /// Also write the tables as Parquet (lines, pages, toc, chunks) plus
    /// profile.json to `<DIR>/<file stem>-<content hash>/`; a folder already
    /// written for the same bytes is reused.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

fn main() -> ExitCode {
    init_tracing();
    // The PDF libraries can panic on hostile input; the parse brick catches
    // those panics per page and turns them into diagnostics. The default hook
    // would still print each one to stderr, so panics are logged at debug
    // level instead, and one that escapes is reported below as a bug.
    std::panic::set_hook(Box::new(|info| tracing::debug!("caught panic: {info}")));
    let cli = Cli::parse();
    let outcome = std::panic::catch_unwind(|| match cli.command {
        Command::Ask(args) => ask(*args),
        Command::Parse(args) => parse(args),
        Command::Trace(TraceCommand::Show(args)) => trace_show(args),
        Command::Trace(TraceCommand::Replay(args)) => trace_replay(args),
        Command::Kb(command) => kb::run(command),
        Command::Serve(args) => serve::run(args),
    });
    let result = match outcome {
        Ok(result) => result,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            eprintln!("docintel: internal error (this is a bug): {message}");
            return ExitCode::from(EXIT_FAILURE);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // `docintel parse BIG | head -1`: the reader left, nothing to report.
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            let code = exit_code(&error);
            eprintln!("docintel: {error:#}");
            ExitCode::from(code)
        }
    }
}

/// Whether the failure is stdout's reader having gone away.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .is_some_and(|e| e.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe))
    })
}

/// The exit code for a failure (see `EXIT_CODES_HELP`): the facade's or the
/// knowledge base's error says; anything else (a replay that differs, stdout
/// gone) is 1.
fn exit_code(error: &anyhow::Error) -> u8 {
    error
        .downcast_ref::<PipelineError>()
        .map(PipelineError::exit_code)
        .or_else(|| kb::exit_code(error))
        .unwrap_or(EXIT_FAILURE)
}

/// Logs go to stderr, filtered by `RUST_LOG` (default: our warnings; the PDF
/// libraries' font warnings only at error level), so stdout stays one JSON
/// object under `--json`.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,pdf_extract=error,lopdf=error"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
}

/// Whether the file starts (within its first KiB) with a `%PDF-` header; an unreadable file
/// counts as one (the parse then reports it).
fn looks_like_pdf(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = Vec::new();
    match std::fs::File::open(path) {
        Ok(file) => {
            let _ = file.take(1024).read_to_end(&mut head);
            head.windows(5).any(|w| w == b"%PDF-")
        }
        Err(_) => true,
    }
}

/// Longest question accepted, in characters.
const MAX_QUESTION_CHARS: usize = 4000;

/// A question the pipeline can parse: UTF-8, some letter or digit, not over-long.
fn checked_question(question: &std::ffi::OsStr) -> Result<String, PipelineError> {
    let question = question.to_str().ok_or_else(|| PipelineError::Usage("the question is not valid UTF-8".into()))?;
    if question.trim().is_empty() {
        return Err(PipelineError::Usage("the question is empty".into()));
    }
    if !question.chars().any(char::is_alphanumeric) {
        return Err(PipelineError::Usage(format!("the question {:?} has no word in it", escape_controls(question))));
    }
    let n = question.chars().count();
    if n > MAX_QUESTION_CHARS {
        return Err(PipelineError::Usage(format!(
            "the question is {n} characters long (at most {MAX_QUESTION_CHARS})"
        )));
    }
    Ok(question.to_owned())
}

/// `text` with control characters (ESC, CR, backspace, bidirectional overrides...) shown as
/// `\u{..}` escapes, so document or model text cannot move the cursor or rewrite what the
/// terminal shows; newlines and tabs are kept.
fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let bidi = matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}');
        if (c.is_control() && c != '\n' && c != '\t') || bidi {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

fn ask(args: AskArgs) -> anyhow::Result<()> {
    let config = Config::from_env();
    let mut options = AskOptions::new(args.top_k);
    let flags =
        LlmFlags { base_url: args.llm_base_url.as_deref(), model: args.model.as_deref(), offline: args.offline };
    options.generator = config.generator(flags)?;
    options.llm_context = config.llm_context(args.llm_context)?;
    options.satellites_dir = args.satellites.clone();
    options.dictionary = args.dictionary.clone();
    options.strategy = match args.strategy.as_deref() {
        Some("sequential") => Some(ChunkStrategy::Sequential),
        Some("combined") => Some(ChunkStrategy::Combined),
        _ => None,
    };
    options.pages = args.pages.clone();
    options.password = args.password.clone();
    options.ocr = config.ocr()?;
    options.vision = config.vision()?;
    options.use_toc = !args.no_toc;
    options.llm_question = args.question_parser.as_deref() != Some("rules");
    options.llm_router = args.router.as_deref() != Some("keyword");
    options.schema = args.schema.clone();
    options.iterate = args.iterate;
    options.examples = args.examples.clone();
    options.embeddings = config.embed_model_dir(args.embeddings.as_deref());
    options.out_dir = (!args.no_trace).then(|| args.out.clone());
    if let Some(dir) = &args.follow_up {
        options.previous_turns = follow_up_turns(dir)?;
    }
    // The answer is printed first; a trace or highlight that cannot be written is reported
    // after it (and the exit code says so).
    let print = |output: &AskOutput| -> anyhow::Result<()> {
        let mut stdout = std::io::stdout().lock();
        if args.json {
            serde_json::to_writer_pretty(&mut stdout, output)?;
            writeln!(stdout)?;
        } else {
            write!(stdout, "{}", escape_controls(&render_answer(output)))?;
        }
        Ok(())
    };
    let answered = |result: Result<AskOutput, PipelineError>| -> anyhow::Result<AskOutput> {
        match result {
            Ok(output) => {
                print(&output)?;
                Ok(output)
            }
            Err(PipelineError::NotWritten { message, output }) => {
                print(&output)?;
                Err(PipelineError::NotWritten { message, output }.into())
            }
            Err(error) => Err(error.into()),
        }
    };
    let highlighted = match (&args.corpus, args.positional.as_slice()) {
        (Some(dir), [question]) => {
            let question = checked_question(question)?;
            let corpus = load_corpus(dir, &options)?;
            let engine = Engine::new(&options)?;
            let output = answered(engine.corpus_qa(&corpus, &question, &options))?;
            match &args.highlight {
                Some(target) => {
                    let (path, document) = corpus
                        .documents
                        .iter()
                        .find(|(path, _)| path.display().to_string() == output.document)
                        .ok_or_else(|| anyhow::anyhow!("the answering file is not in the corpus"))?;
                    Some((target, highlight(path, target, &output, document)?))
                }
                None => None,
            }
        }
        (None, [file, question]) => {
            let question = checked_question(question)?;
            let file = PathBuf::from(file);
            // A usage mistake is reported before any work (the highlight needs a PDF).
            if args.highlight.is_some() && !looks_like_pdf(&file) {
                return Err(PipelineError::Usage(format!(
                    "--highlight needs a PDF input; {} is not one",
                    file.display()
                ))
                .into());
            }
            let engine = Engine::new(&options)?;
            let spinner = spinner(format!("reading {} and answering", file.display()));
            let result = engine.ask_with_document(&file, &question, &options);
            if let Some(spinner) = spinner {
                spinner.finish_and_clear();
            }
            let (result, document) = match result {
                Ok((output, document)) => (Ok(output), Some(document)),
                Err(error) => (Err(error), None),
            };
            let output = answered(result)?;
            match (&args.highlight, document) {
                (Some(target), Some(document)) => Some((target, highlight(&file, target, &output, &document)?)),
                _ => None,
            }
        }
        (Some(_), _) => return Err(PipelineError::Usage("with --corpus DIR, give only the question".into()).into()),
        (None, _) => {
            return Err(PipelineError::Usage("give the document and the question: ask <FILE> <QUESTION>".into()).into());
        }
    };
    if let Some((target, n)) = highlighted
        && !args.json
    {
        writeln!(std::io::stdout().lock(), "highlighted {n} cited line(s) in {}", target.display())?;
    }
    Ok(())
}

/// Parses every document of a corpus folder, with a progress bar on an
/// interactive terminal (never when stdout is piped or under `--json` in a
/// pipe).
fn load_corpus(dir: &Path, options: &AskOptions) -> anyhow::Result<docintel::Corpus> {
    let corpus = with_progress(|tick| docintel::load_corpus(dir, options, tick))?;
    for line in &corpus.unreadable {
        tracing::warn!("skipped: {line}");
    }
    Ok(corpus)
}

/// A spinner with the elapsed time on stderr for one long step (a large
/// document takes seconds to parse), only when both stdout and stderr are
/// terminals.
fn spinner(message: String) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !(std::io::stdout().is_terminal() && std::io::stderr().is_terminal()) {
        return None;
    }
    let spinner = indicatif::ProgressBar::new_spinner();
    let style = indicatif::ProgressStyle::with_template("{spinner} {wide_msg} {elapsed}")
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner());
    spinner.set_style(style);
    spinner.set_message(message);
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    Some(spinner)
}

/// A progress bar on stderr when both stdout and stderr are terminals.
/// Runs `work` with a progress callback (files done, files in all, the
/// file) that drives [`progress_bar`], cleared when the work ends.
pub(crate) fn with_progress<T>(work: impl FnOnce(&mut dyn FnMut(usize, usize, &Path)) -> T) -> T {
    let bar = progress_bar();
    let mut tick = |done: usize, total: usize, path: &Path| {
        if let Some(bar) = &bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            bar.set_message(path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
        }
    };
    let out = work(&mut tick);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    out
}

fn progress_bar() -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !(std::io::stdout().is_terminal() && std::io::stderr().is_terminal()) {
        return None;
    }
    let bar = indicatif::ProgressBar::new(0);
    let style = indicatif::ProgressStyle::with_template("{spinner} parsing {pos}/{len} {wide_msg}")
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    Some(bar)
}

/// The boxes to highlight: every line of every cited span, once, with the
/// span's quote as the note. Spans whose lines are not on the cited page are
/// left out (verification already flagged them).
fn cited_boxes(output: &AskOutput, document: &ParsedDocument) -> Vec<(u32, BBox, String)> {
    let mut boxes: Vec<(u32, BBox, String)> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for span in output.answer.items.iter().flat_map(|item| &item.spans) {
        for line_id in span.line_start..=span.line_end {
            let Some(line) = line_id.checked_sub(1).and_then(|i| document.lines.get(i as usize)) else { continue };
            if line.page == span.page && seen.insert(line_id) {
                boxes.push((line.page, line.bbox, span.quote.clone()));
            }
        }
    }
    boxes
}

/// Writes the highlighted copy; returns the number of lines highlighted.
fn highlight(input: &Path, target: &Path, output: &AskOutput, document: &ParsedDocument) -> anyhow::Result<usize> {
    if document.profile.format != DocumentFormat::Pdf {
        return Err(
            PipelineError::Usage(format!("--highlight needs a PDF input; {} is not one", input.display())).into()
        );
    }
    let boxes = cited_boxes(output, document);
    if boxes.is_empty() {
        tracing::warn!("no cited line to highlight; {} is an unmarked copy", target.display());
    }
    let added = docintel::highlight_pdf(input, target, &boxes).map_err(PipelineError::Highlight)?;
    if added < boxes.len() {
        tracing::warn!(
            "{} cited line(s) not highlighted: their box is not on the page (a page the parser mirrored?)",
            boxes.len() - added
        );
    }
    Ok(added)
}

/// What `--follow-up DIR` asks after: the conversation of the trace folder
/// `dir` (the turns it followed, then its question), its last
/// [`docintel::MAX_PREVIOUS_TURNS`]. A folder that is no trace is bad input (exit 3).
pub(crate) fn follow_up_turns(dir: &Path) -> Result<Vec<String>, PipelineError> {
    let trace = docintel::load_question_trace(dir).map_err(PipelineError::Trace)?;
    let mut turns = trace.conversation();
    turns.drain(..turns.len().saturating_sub(docintel::MAX_PREVIOUS_TURNS));
    Ok(turns)
}

fn trace_show(args: TraceShowArgs) -> anyhow::Result<()> {
    let trace = docintel::load_question_trace(&args.dir).map_err(PipelineError::Trace)?;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut stdout, &docintel::trace::summary(&trace))?;
        writeln!(stdout)?;
    } else {
        write!(stdout, "{}", escape_controls(&docintel::trace::render(&trace)))?;
    }
    Ok(())
}

/// A replay whose rebuilt artefacts differ from the recorded ones (exit 1).
#[derive(Debug)]
struct ReplayDiffers(usize);

impl std::fmt::Display for ReplayDiffers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "replay differs from the recorded trace in {} check(s)", self.0)
    }
}

impl std::error::Error for ReplayDiffers {}

fn trace_replay(args: TraceReplayArgs) -> anyhow::Result<()> {
    let options = match &args.password {
        Some(password) => docintel::ParseOptions::with_password(password.clone()),
        None => docintel::ParseOptions::default(),
    };
    let options = options.with_ocr(Config::from_env().ocr()?);
    let report = docintel::replay_question_with_options(&args.dir, &options)?;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut stdout, &report)?;
        writeln!(stdout)?;
    } else {
        writeln!(stdout, "replay of {} (document {})", report.dir, report.document)?;
        for check in &report.checks {
            let mark = if check.identical { "identical" } else { "DIFFERS" };
            writeln!(stdout, "  {mark:<9} {}: {}", escape_controls(&check.what), escape_controls(&check.detail))?;
        }
    }
    let differing = report.checks.iter().filter(|c| !c.identical).count();
    if differing > 0 || report.checks.is_empty() {
        return Err(ReplayDiffers(differing).into());
    }
    Ok(())
}

fn parse(args: ParseArgs) -> anyhow::Result<()> {
    let options = match &args.password {
        Some(password) => docintel::ParseOptions::with_password(password.clone()),
        None => docintel::ParseOptions::default(),
    };
    let options = options.with_ocr(Config::from_env().ocr()?);
    let spinner = spinner(format!("parsing {}", args.file.display()));
    let document = docintel::parse_file_with_options(&args.file, &options).map_err(PipelineError::Parse);
    if let Some(spinner) = spinner {
        spinner.finish_and_clear();
    }
    let document = document?;
    if let Some(out) = &args.out {
        write_document_folder(out, &args.file, &document)?;
    }
    let mut stdout = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut stdout, &document)?;
        writeln!(stdout)?;
    } else {
        write!(stdout, "{}", escape_controls(&render_document(&document)))?;
    }
    Ok(())
}

/// Chunk sizes for the `chunks.parquet` table written by `parse --out`.
#[cfg(feature = "parquet")]
const OUT_CHUNKS: docintel::ChunkConfig = docintel::ChunkConfig { max_tokens: 256, overlap_tokens: 32 };

/// Writes the document folder under `out` unless one for the same bytes is
/// already complete; reports the folder on stderr.
#[cfg(feature = "parquet")]
fn write_document_folder(out: &Path, file: &Path, document: &ParsedDocument) -> anyhow::Result<()> {
    let bytes = std::fs::read(file).map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", file.display()))?;
    let folder = docintel::document_folder(out, file, &bytes);
    if docintel::is_up_to_date(&folder) {
        eprintln!("up to date: {}", folder.display());
        return Ok(());
    }
    let chunks = docintel::chunk_document(document, &OUT_CHUNKS);
    docintel::write_tables(document, &chunks, &docintel::content_hash(&bytes), &folder)?;
    eprintln!("wrote: {}", folder.display());
    Ok(())
}

/// Without the `parquet` feature there is no table writer: `parse --out` is
/// refused with this message, nothing written.
#[cfg(not(feature = "parquet"))]
fn write_document_folder(_out: &Path, _file: &Path, _document: &ParsedDocument) -> anyhow::Result<()> {
    anyhow::bail!("parse --out writes Parquet tables: this docintel was built without the `parquet` feature")
}

/// The human form: the value, then each citation as
/// `p.<page> l.<line_start>-<line_end>: "<quote>"`.
fn render_answer(output: &AskOutput) -> String {
    render_answer_of(output, false)
}

/// [`render_answer`]; `counted`: the answer is a count from the structured index, so
/// no item is an answer too (a count of 0), not a "not found".
fn render_answer_of(output: &AskOutput, counted: bool) -> String {
    let answer = &output.answer;
    let mut s = String::new();
    if !answer.feedback.answer_found || (answer.items.is_empty() && !counted) {
        s.push_str("No answer found in the document.\n");
    }
    for item in &answer.items {
        s.push_str(&format!("{}\n", item.value));
        for span in &item.spans {
            s.push_str(&format!("  p.{} l.{}-{}: \"{}\"\n", span.page, span.line_start, span.line_end, span.quote));
        }
    }
    for warning in &answer.feedback.warnings {
        s.push_str(&format!("note: {warning}\n"));
    }
    let verified = if output.citations_verified { "verified" } else { "NOT verified" };
    s.push_str(&format!(
        "[{} {} · confidence {:.2} · citations {verified}",
        answer.answer_shape.as_str(),
        answer.answer_type,
        answer.feedback.confidence
    ));
    if let Some(dir) = &output.meta.trace_dir {
        s.push_str(&format!(" · trace {dir}"));
    }
    s.push_str("]\n");
    s
}

fn render_document(document: &ParsedDocument) -> String {
    let profile = &document.profile;
    let mut s = format!(
        "{}: {} pages, {} lines, {} TOC entries, doc_type {}\n",
        document.source,
        profile.n_pages.unwrap_or(0),
        document.lines.len(),
        document.toc.len(),
        profile.doc_type.as_deref().unwrap_or("unknown"),
    );
    if !profile.languages.is_empty() {
        s.push_str(&format!("languages: {}\n", profile.languages.join(", ")));
    }
    let (figures, scanned) = docintel::vision_candidates(document);
    if !figures.is_empty() || !scanned.is_empty() {
        s.push_str(&format!("pages with figures: {figures:?}; scanned pages: {scanned:?}\n"));
    }
    if !document.toc.is_empty() {
        s.push_str("TOC (level, pages, title, source):\n");
        for entry in &document.toc {
            s.push_str(&format!(
                "{}{} p.{}-{} {} [{:?}]\n",
                "  ".repeat(entry.level as usize),
                entry.level,
                entry.start_page,
                entry.end_page,
                entry.title,
                entry.source
            ));
        }
    }
    for d in &document.diagnostics {
        s.push_str(&format!("diagnostic: {}{}\n", d.page.map(|p| format!("p.{p}: ")).unwrap_or_default(), d.message));
    }
    s.push_str("GLOBAL_LINE\tpage\tline_in_page\tvisible\tsource\ttext\n");
    let invisible = document.invisible_lines();
    for line in &document.lines {
        let visible = if invisible.binary_search(&line.line_id).is_ok() { "no" } else { "yes" };
        // `ocr:0.91`: read by OCR, with its confidence; `vision`: a model's description of the page image.
        let source = match (document.ocr_confidence(line.line_id), document.line_source(line.line_id)) {
            (Some(confidence), _) => format!("ocr:{confidence:.2}"),
            (None, docintel::schema::LineSource::Vision) => "vision".to_owned(),
            (None, _) => "text".to_owned(),
        };
        s.push_str(&format!(
            "{}\t{}\t{}\t{visible}\t{source}\t{}\n",
            line.line_id, line.page, line.line_in_page, line.text
        ));
    }
    s
}
