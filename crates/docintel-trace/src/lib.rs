//! docintel-trace: what did the pipeline decide, and can we show it later?
//!
//! [`TraceRecorder`] implements the schema crate's `TraceSink`: bricks push
//! decisions into it as they make them. [`write_question_trace`] then writes,
//! per question, under the document's output folder:
//!
//! ```text
//! <out>/<document-stem>/questions/<question-prefix>-<hash>/
//!     pipeline_trace.json    every recorded decision, in order
//!     answer.json            the AskOutput (answer + _meta)
//! ```
//!
//! (`parsed_question.json` sits in the same folder; the question brick writes
//! it, with its cache key.)
//!
//! Writes are atomic (temporary file, then rename) and secrets never reach
//! disk: keys named like credentials and strings shaped like API keys are
//! redacted before anything is written.
//!
//! ```
//! use std::path::Path;
//! let dir = docintel_trace::question_dir(Path::new("out"), Path::new("a/invoice.pdf"), "What is the total?");
//! assert!(dir.starts_with("out/invoice/questions/what-is-the-total-"));
//! ```

#![warn(missing_docs)]

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use docintel_schema::slug::question_slug;
use docintel_schema::{AskOutput, TraceEvent, TraceSink};
use serde::Serialize;
use serde_json::{Value, json};

/// Collects trace events in memory, in order.
#[derive(Debug, Default, Clone)]
pub struct TraceRecorder {
    events: Vec<TraceEvent>,
}

impl TraceRecorder {
    /// An empty recorder.
    pub fn new() -> TraceRecorder {
        TraceRecorder::default()
    }
    /// The events recorded so far.
    pub fn events(&self) -> &[TraceEvent] {
        &self.events
    }
}

impl TraceSink for TraceRecorder {
    fn record(&mut self, event: TraceEvent) {
        self.events.push(event);
    }
}

/// Why writing a trace failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum TraceError {
    /// A file or folder could not be written.
    Io {
        /// The path concerned.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceError::Io { path, source } => write!(f, "{}: cannot write trace: {source}", path.display()),
        }
    }
}

impl std::error::Error for TraceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TraceError::Io { source, .. } => Some(source),
        }
    }
}

/// The folder of one question's trace: `<out>/<document-stem>/questions/<slug>`.
pub fn question_dir(out_root: &Path, document: &Path, question: &str) -> PathBuf {
    let stem = document.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "document".into());
    out_root.join(stem).join("questions").join(question_slug(question))
}

/// Writes `pipeline_trace.json` and `answer.json` into `dir` (created if
/// needed), atomically and with secrets redacted.
pub fn write_question_trace(dir: &Path, events: &[TraceEvent], output: &AskOutput) -> Result<(), TraceError> {
    fs::create_dir_all(dir).map_err(|source| TraceError::Io { path: dir.to_owned(), source })?;
    let trace = json!({
        "question": output.question,
        "document": output.document,
        "events": events,
    });
    write_json_atomic(&dir.join("pipeline_trace.json"), &trace)?;
    write_json_atomic(&dir.join("answer.json"), output)
}

/// Serialises `value` (redacted) to `path` through a temporary file and a
/// rename, so a reader never sees half a file.
pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> Result<(), TraceError> {
    let io = |source| TraceError::Io { path: path.to_owned(), source };
    let mut value = serde_json::to_value(value).map_err(|e| io(std::io::Error::other(e)))?;
    redact(&mut value);
    let mut bytes = serde_json::to_vec_pretty(&value).map_err(|e| io(std::io::Error::other(e)))?;
    bytes.push(b'\n');
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{file_name}.{}.tmp", std::process::id()));
    let mut file = fs::File::create(&tmp).map_err(io)?;
    file.write_all(&bytes).map_err(io)?;
    file.sync_all().map_err(io)?;
    drop(file);
    fs::rename(&tmp, path).map_err(io)
}

/// Key names whose values are credentials.
fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase().replace('-', "_");
    ["authorization", "api_key", "apikey", "x_api_key", "openai_api_key", "password", "secret", "bearer", "token"]
        .iter()
        .any(|s| key == *s || key.ends_with(&format!("_{s}")))
}

/// Whether a string looks like a credential (`sk-...`, `Bearer ...`).
fn looks_secret(text: &str) -> bool {
    let t = text.trim();
    let long_token =
        |rest: &str| rest.len() >= 16 && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    t.strip_prefix("sk-").is_some_and(long_token) || t.strip_prefix("Bearer ").is_some_and(long_token)
}

/// Replaces credentials anywhere in a JSON value with `"[redacted]"`.
pub fn redact(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if is_secret_key(key) && !child.is_null() {
                    *child = Value::String("[redacted]".into());
                } else {
                    redact(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        Value::String(text) if looks_secret(text) => *text = "[redacted]".into(),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_reach_disk() {
        let dir = std::env::temp_dir().join(format!("docintel-trace-test-{}", std::process::id()));
        let mut events = TraceRecorder::new();
        events.record(TraceEvent {
            brick: "llm".into(),
            step: "request".into(),
            detail: json!({
                "headers": {"Authorization": "Bearer abcdefghijklmnopqrstuvwxyz", "content-type": "application/json"},
                "api_key": "sk-proj-1234567890abcdefghij",
                "note": "sk-proj-1234567890abcdefghij",
                "kept": "sk-short",
            }),
        });
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.json");
        write_json_atomic(&path, &events.events()).unwrap();
        let written = fs::read_to_string(&path).unwrap();
        assert!(!written.contains("abcdefghijklmnop"), "{written}");
        assert!(!written.contains("1234567890abcdefghij"), "{written}");
        assert!(written.contains("application/json"));
        assert!(written.contains("sk-short"));
        // No temporary file is left behind.
        let leftovers: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }
}
