//! Where a question's record goes: the document's folder key, the trace's
//! record of which document was read, and writing the question folder
//! (parsed question, trace, answer) once the run succeeded.

use std::path::Path;

use docintel_schema::trace::{DocumentRead, Event};
use docintel_schema::{AskOutput, DocumentProfile, ParsedQuestion, TraceEvent};

use crate::PipelineError;

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
pub(crate) fn document_event(path: &Path, sha256: &str, key: &str) -> TraceEvent {
    let absolute =
        std::fs::canonicalize(path).or_else(|_| std::path::absolute(path)).unwrap_or_else(|_| path.to_owned());
    Event::Document(DocumentRead {
        path: absolute.display().to_string(),
        sha256: sha256.to_owned(),
        key: key.to_owned(),
    })
    .into()
}

/// Writes the question folder `<out>/<key>/questions/<question and turns>` — the parsed
/// question when `parsed` is given (with the profile it was parsed for), then
/// the trace and the answer — and returns the answer with its `trace_dir`. A
/// failed write is [`PipelineError::NotWritten`], carrying the answer (its
/// `trace_dir` unset) for the caller to print.
pub(crate) fn write_trace(
    out_dir: &Path,
    key: &str,
    question: &str,
    previous_turns: &[String],
    parsed: Option<(&DocumentProfile, &ParsedQuestion)>,
    events: &[TraceEvent],
    mut output: AskOutput,
) -> Result<AskOutput, PipelineError> {
    let dir = docintel_trace::question_dir(out_dir, key, question, previous_turns);
    output.meta.trace_dir = Some(dir.display().to_string());
    let written = match parsed {
        Some((profile, parsed)) => {
            { docintel_question::save_parsed_question(out_dir, key, profile, previous_turns, parsed) }
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
        None => Ok(()),
    }
    .and_then(|()| docintel_trace::write_question_trace(&dir, events, &output).map_err(|e| e.to_string()));
    match written {
        Ok(()) => Ok(output),
        Err(message) => {
            output.meta.trace_dir = None;
            Err(PipelineError::NotWritten { message, output: Box::new(output) })
        }
    }
}

/// The question folder of an answer no document gave (a knowledge base's count from its
/// structured index): `<out>/<key>/questions/<question and turns>` with `events` and the
/// answer, `key` naming what answered ([`docintel_schema::slug::document_key`] of a name
/// and a hash), with the parsed question and the profile it was parsed for (so `docintel
/// trace show` reads the folder back). A failed write is [`PipelineError::NotWritten`], as
/// for a document's.
pub fn write_answer_trace(
    out_dir: &Path,
    key: &str,
    previous_turns: &[String],
    parsed: (&DocumentProfile, &ParsedQuestion),
    events: &[TraceEvent],
    output: AskOutput,
) -> Result<AskOutput, PipelineError> {
    let question = output.question.clone();
    write_trace(out_dir, key, &question, previous_turns, Some(parsed), events, output)
}
