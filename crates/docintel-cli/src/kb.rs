//! `docintel kb`: a knowledge base folder — `add` files once, `ask` many
//! questions, `list`, `remove` (the `docintel-kb` crate does the work).

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use docintel::{AskOptions, Config, EXIT_BAD_INPUT, Engine, LlmFlags};
use docintel_kb::KbError;

use crate::{checked_question, escape_controls, render_answer, with_progress};

#[derive(Subcommand)]
pub(crate) enum KbCommand {
    /// Parse files (and the documents of folders, not recursive) into the
    /// knowledge base, creating it: a file stored already with the same bytes
    /// is skipped; a file that cannot be read is recorded and the others go on
    /// (exit 3 when any failed).
    Add(KbAddArgs),
    /// Answer a question from the knowledge base: the full-text index picks
    /// the few documents to open, read back without parsing again.
    Ask(KbAskArgs),
    /// List the documents and the files that could not be ingested.
    List(KbListArgs),
    /// Remove a document (its id, file name or source path).
    Remove(KbRemoveArgs),
    /// Keys: a tenant's encryption key file (`new`), an API key for
    /// `docintel serve` (`add`).
    #[command(subcommand)]
    Key(KbKeyCommand),
}

#[derive(Subcommand)]
pub(crate) enum KbKeyCommand {
    /// Write a new random key (32 bytes from the operating system) to FILE,
    /// readable by its owner only; an existing file is never overwritten.
    New {
        /// The key file to create.
        file: PathBuf,
    },
    /// Make a new API key and print it (the only time it is shown); only its
    /// SHA-256 is stored, in `KB/api-keys.json`.
    Add(KbKeyAddArgs),
}

#[derive(Args)]
pub(crate) struct KbKeyAddArgs {
    /// The knowledge base folder.
    kb: PathBuf,
}

/// The environment variable naming the key file when `--key-file` is not given.
const KEY_FILE_ENV: &str = "DOCINTEL_KB_KEY_FILE";

/// The tenant's key: `--key-file`, else `DOCINTEL_KB_KEY_FILE`, else none.
pub(crate) fn key(key_file: Option<&PathBuf>) -> Result<Option<docintel_kb::KbKey>, KbError> {
    let path =
        key_file.cloned().or_else(|| std::env::var_os(KEY_FILE_ENV).filter(|v| !v.is_empty()).map(PathBuf::from));
    path.map(|p| docintel_kb::KbKey::from_file(&p)).transpose()
}

#[derive(Args)]
pub(crate) struct KbAddArgs {
    /// The knowledge base folder.
    kb: PathBuf,
    /// Files and folders to add (none: only re-index a knowledge base of another format).
    paths: Vec<PathBuf>,
    /// Files parsed at once (default: the CPUs).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    threads: Option<u32>,
    /// Print exactly one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// The tenant's key (32 bytes, or 64 hex digits; `docintel kb key new
    /// FILE`): a new knowledge base is encrypted with it, an encrypted one
    /// needs it (default: $DOCINTEL_KB_KEY_FILE).
    #[arg(long, value_name = "FILE")]
    key_file: Option<PathBuf>,
}

#[derive(Args)]
pub(crate) struct KbAskArgs {
    /// The knowledge base folder.
    kb: PathBuf,
    /// The question in natural language.
    question: std::ffi::OsString,
    /// Print exactly one JSON object on stdout: `docintel ask --json`'s, plus
    /// `kb` (candidates, the answering document, the document of each citation).
    #[arg(long)]
    json: bool,
    /// Documents the full-text index proposes and the question may open.
    #[arg(long, value_name = "N", default_value_t = docintel_kb::DEFAULT_CANDIDATES)]
    candidates: usize,
    /// Retrieval: number of passages shown to the generator.
    #[arg(long, default_value_t = 5)]
    top_k: usize,
    /// Answer offline with the extractive generator even when an endpoint is configured.
    #[arg(long)]
    offline: bool,
    /// Folder for the per-question audit trail (as `docintel ask --out`).
    #[arg(long, default_value = "docintel-out")]
    out: PathBuf,
    /// Write no audit trail.
    #[arg(long)]
    no_trace: bool,
    /// Ask after the question of this trace folder (as `docintel ask --follow-up`).
    #[arg(long, value_name = "TRACE_DIR")]
    follow_up: Option<PathBuf>,
    /// The key of an encrypted knowledge base (default: $DOCINTEL_KB_KEY_FILE).
    #[arg(long, value_name = "FILE")]
    key_file: Option<PathBuf>,
}

#[derive(Args)]
pub(crate) struct KbListArgs {
    /// The knowledge base folder.
    kb: PathBuf,
    /// Print the manifest as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub(crate) struct KbRemoveArgs {
    /// The knowledge base folder.
    kb: PathBuf,
    /// The document: its id, file name or source path.
    doc: String,
}

/// Some files given to `kb add` could not be ingested (exit 3; the others were).
#[derive(Debug)]
pub(crate) struct SomeFilesFailed(usize);

impl std::fmt::Display for SomeFilesFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} file(s) could not be added (recorded in the manifest; `docintel kb list` shows them)", self.0)
    }
}

impl std::error::Error for SomeFilesFailed {}

/// The exit code of a `kb` failure, when it is one.
pub(crate) fn exit_code(error: &anyhow::Error) -> Option<u8> {
    error
        .downcast_ref::<KbError>()
        .map(KbError::exit_code)
        .or_else(|| error.downcast_ref::<SomeFilesFailed>().map(|_| EXIT_BAD_INPUT))
}

pub(crate) fn run(command: KbCommand) -> anyhow::Result<()> {
    match command {
        KbCommand::Add(args) => add(args),
        KbCommand::Ask(args) => ask(args),
        KbCommand::List(args) => list(args),
        KbCommand::Remove(args) => remove(args),
        KbCommand::Key(KbKeyCommand::New { file }) => new_key(&file),
        KbCommand::Key(KbKeyCommand::Add(args)) => key_add(args),
    }
}

fn new_key(file: &std::path::Path) -> anyhow::Result<()> {
    let bytes = docintel_kb::KbKey::generate_bytes()?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let not_written = |e: std::io::Error| KbError::KeyFile {
        path: file.display().to_string(),
        reason: format!("cannot create (an existing file is never overwritten): {e}"),
    };
    let mut out = options.open(file).map_err(not_written)?;
    out.write_all(&bytes).map_err(not_written)?;
    writeln!(
        std::io::stdout().lock(),
        "wrote a new {}-byte key to {} (keep it apart from the knowledge base: lost, the knowledge base cannot be read)",
        docintel_kb::KEY_BYTES,
        file.display()
    )?;
    Ok(())
}

fn add(args: KbAddArgs) -> anyhow::Result<()> {
    let threads = args
        .threads
        .map_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get), |n| n as usize);
    let key = key(args.key_file.as_ref())?;
    let report = with_progress(|tick| docintel_kb::add_keyed(&args.kb, &args.paths, threads, key.as_ref(), tick))?;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut stdout, &report)?;
        writeln!(stdout)?;
    } else {
        if report.reindexed {
            writeln!(stdout, "re-indexed: the knowledge base was of another format")?;
        }
        for failure in &report.failed {
            writeln!(stdout, "failed: {}", escape_controls(&failure.error))?;
        }
        if let Some(structured) = &report.structured {
            writeln!(stdout, "{}", escape_controls(&structured.summary()))?;
        }
        writeln!(
            stdout,
            "{}: added {}, unchanged {}, replaced {}, failed {} ({:.1} s)",
            args.kb.display(),
            report.added.len(),
            report.skipped.len(),
            report.replaced.len(),
            report.failed.len(),
            report.seconds
        )?;
    }
    if !report.failed.is_empty() {
        return Err(SomeFilesFailed(report.failed.len()).into());
    }
    Ok(())
}

fn ask(args: KbAskArgs) -> anyhow::Result<()> {
    let question = checked_question(&args.question)?;
    let config = Config::from_env();
    let mut options = AskOptions::new(args.top_k);
    options.generator = config.generator(LlmFlags { base_url: None, model: None, offline: args.offline })?;
    options.out_dir = (!args.no_trace).then(|| args.out.clone());
    if let Some(dir) = &args.follow_up {
        options.previous_turns = crate::follow_up_turns(dir)?;
    }
    let key = key(args.key_file.as_ref())?;
    let engine = Engine::new(&options)?;
    let answer = docintel_kb::ask_keyed(&args.kb, &engine, &question, &options, args.candidates, key.as_ref())?;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut stdout, &answer)?;
        writeln!(stdout)?;
    } else {
        let candidates: Vec<&str> = answer.kb.candidates.iter().map(|c| c.name.as_str()).collect();
        if let Some(structured) = &answer.kb.structured {
            // A counting question: the count, then every counted document, cited.
            // A refusal (a field the index lacks) was answered from nothing.
            let trailer = if structured.refused.is_none() {
                "answered from the structured index (every document checked)\n"
            } else {
                ""
            };
            let text = format!("{}\n{}{trailer}", structured.summary, crate::render_answer_of(&answer.output, true));
            write!(stdout, "{}", escape_controls(&text))?;
            return Ok(());
        }
        let text = format!(
            "{}document: {} ({}) · candidates: {}\n",
            render_answer(&answer.output),
            answer.kb.document_name,
            answer.kb.document_id,
            candidates.join(", ")
        );
        write!(stdout, "{}", escape_controls(&text))?;
    }
    Ok(())
}

fn list(args: KbListArgs) -> anyhow::Result<()> {
    let manifest = docintel_kb::list(&args.kb)?;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut stdout, &manifest)?;
        writeln!(stdout)?;
        return Ok(());
    }
    let mut text = String::from("id\tpages\tlines\tname\n");
    for d in &manifest.documents {
        text.push_str(&format!("{}\t{}\t{}\t{}\n", d.id, d.pages, d.lines, d.name));
    }
    for f in &manifest.failures {
        text.push_str(&format!("failed: {}\n", f.error));
    }
    text.push_str(&format!("{} document(s), {} failed file(s)\n", manifest.documents.len(), manifest.failures.len()));
    if let Some(encryption) = &manifest.encryption {
        text.push_str(&format!("encrypted ({}): line and chunk text sealed per tenant key\n", encryption.aead));
        text.push_str("structured index: sealed with the key (its fields are document text)\n");
    } else if let Some(report) = docintel_kb::structured_report(&args.kb)? {
        text.push_str(&format!("{}\n", report.summary()));
    }
    write!(stdout, "{}", escape_controls(&text))?;
    Ok(())
}

fn remove(args: KbRemoveArgs) -> anyhow::Result<()> {
    let entry = docintel_kb::remove(&args.kb, &args.doc)?;
    writeln!(std::io::stdout().lock(), "removed {} ({})", entry.id, escape_controls(&entry.name))?;
    Ok(())
}

fn key_add(args: KbKeyAddArgs) -> anyhow::Result<()> {
    if !args.kb.join(docintel_kb::MANIFEST).is_file() {
        return Err(KbError::NotAKb { dir: args.kb.display().to_string() }.into());
    }
    let key = docintel_serve::add_key(&args.kb)?;
    writeln!(std::io::stdout().lock(), "{key}")?;
    Ok(())
}
