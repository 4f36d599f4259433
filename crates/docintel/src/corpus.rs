//! Corpus mode: a folder of documents. [`load_corpus`] parses every readable
//! file; the corpus level shows the router one line per file (name, summary,
//! keyword hits), then the picked files are answered in pick order — each
//! through its own TOC — until one gives a found, complete answer with
//! verified citations (top-1 first).

use std::path::{Path, PathBuf};
use std::time::Instant;

use docintel_retrieve::{CorpusFile, KeywordRouter, RoutingConfig};
use docintel_schema::{AskOutput, ParsedDocument, ParsedQuestion, TraceEvent};
use docintel_trace::TraceRecorder;

use crate::ask;
use crate::bricks::Bricks;
use crate::error::brick_error;
use crate::record::{document_event, document_key_of, write_trace};
use crate::{AskOptions, ParseError, PipelineError, parse_file_with_options};

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
    let parse_options = options.parse_options();
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

/// Answers `question` over a parsed corpus with `bricks` (see [`crate::corpus_qa`]).
pub(crate) fn answer(
    bricks: Bricks<'_>,
    corpus: &Corpus,
    question: &str,
    options: &AskOptions,
) -> Result<AskOutput, PipelineError> {
    let options = &*options.for_question();
    let Some((_, first)) = corpus.documents.first() else {
        return Err(PipelineError::EmptyCorpus {
            folder: corpus.folder.display().to_string(),
            unreadable: corpus.unreadable.clone(),
        });
    };
    let started = Instant::now();
    let routing_question = bricks
        .parser
        .parse_with_history(question, &options.previous_turns, &first.profile)
        .map_err(|e| brick_error("question")(Box::new(e)))?;
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
        let question_run = ask::parse_question(bricks, question, &document.profile, options)?;
        let run = ask::answer(bricks, document, question_run, options)?;
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
    match &options.out_dir {
        Some(out_dir) => {
            let (path, document) = &corpus.documents[index];
            let (key, sha256) = document_key_of(path);
            let mut all_events = vec![document_event(path, &sha256, &key)];
            all_events.extend(trace.events().iter().cloned());
            all_events.extend(events);
            write_trace(
                out_dir,
                &key,
                question,
                &options.previous_turns,
                Some((&document.profile, &parsed)),
                &all_events,
                output,
            )
        }
        None => Ok(output),
    }
}
