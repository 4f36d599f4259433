//! docintel-trace: what did the pipeline decide, and can we show it later?
//!
//! [`TraceRecorder`] implements the schema crate's `TraceSink`: bricks push
//! decisions into it as they make them. [`write_question_trace`] then writes,
//! per question, under the document's output folder:
//!
//! ```text
//! <out>/<document stem>-<content hash>/questions/<question-prefix>-<hash>/
//!     pipeline_trace.json    every recorded decision, in order, with the trace
//!                            format version (docintel_schema::trace)
//!     answer.json            the AskOutput (answer + _meta)
//!     llm_responses.jsonl    every raw LLM response, one JSON object a line,
//!                            append-only, keyed by response (and request) id
//! ```
//!
//! (`parsed_question.json` sits in the same folder; the question brick writes
//! it, with its cache key.)
//!
//! Writes are atomic (temporary file, then rename) and secrets never reach
//! disk: keys named like credentials and strings shaped like API keys are
//! redacted before anything is written. `llm_responses.jsonl` is the one
//! append-only file: it is opened in append mode and each line goes out in a
//! single `write_all`, so runs add to it and never rewrite it.
//!
//! [`load_question_trace`] reads a question folder back and [`render`] /
//! [`summary`] print its decision path (`docintel trace show`).
//!
//! ```
//! use std::path::Path;
//! let key = docintel_schema::slug::document_key("a/invoice.pdf", &"ab".repeat(32));
//! let dir = docintel_trace::question_dir(Path::new("out"), &key, "What is the total?", &[]);
//! assert!(dir.to_string_lossy().starts_with("out/invoice-abababababab/questions/what-is-the-total-"));
//! ```

#![warn(missing_docs)]

mod show;

pub use show::{
    ANSWER_FILE, PARSED_QUESTION_FILE, PIPELINE_TRACE_FILE, QuestionTrace, load_question_trace, render, summary,
};

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use docintel_schema::slug::turns_slug;
use docintel_schema::trace::TRACE_FORMAT_VERSION;
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
    /// A question folder lacks files a trace always has.
    Missing {
        /// The folder read.
        dir: PathBuf,
        /// The files that are not there (empty: the folder itself is not).
        files: Vec<String>,
    },
    /// The trace was written in a format this build does not replay.
    Version {
        /// The `pipeline_trace.json` read.
        path: PathBuf,
        /// Its format (1: written before traces carried a version).
        found: u32,
    },
    /// A trace file is not what it should be (not JSON, wrong shape).
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceError::Io { path, source } => write!(f, "{}: trace I/O error: {source}", path.display()),
            TraceError::Missing { dir, files } if files.is_empty() => {
                write!(f, "{}: no such question trace folder", dir.display())
            }
            TraceError::Missing { dir, files } => {
                write!(f, "{}: not a question trace folder (missing {})", dir.display(), files.join(", "))
            }
            TraceError::Corrupt { path, message } => write!(f, "{}: unreadable trace file: {message}", path.display()),
            TraceError::Version { path, found } => write!(
                f,
                "{}: trace format {found}{}, this docintel reads format {TRACE_FORMAT_VERSION}: ask the question again to record a new trace",
                path.display(),
                if *found == 1 { " (written before traces carried a format version)" } else { "" }
            ),
        }
    }
}

impl std::error::Error for TraceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TraceError::Io { source, .. } => Some(source),
            TraceError::Missing { .. } | TraceError::Corrupt { .. } | TraceError::Version { .. } => None,
        }
    }
}

/// The folder of one document's outputs: `<out>/<document key>` (its question traces, and
/// with embeddings its vector files); the key is
/// [`docintel_schema::slug::document_key`] (readable stem and content hash), never a path
/// that leaves `out_root`.
pub fn document_dir(out_root: &Path, document_key: &str) -> PathBuf {
    out_root.join(document_key)
}

/// The folder of one question's trace: `<out>/<document key>/questions/<slug>`,
/// the slug keyed by the question and the earlier turns it was asked after
/// ([`docintel_schema::slug::turns_slug`]; none for a question asked alone).
pub fn question_dir(out_root: &Path, document_key: &str, question: &str, previous_turns: &[String]) -> PathBuf {
    document_dir(out_root, document_key).join("questions").join(turns_slug(question, previous_turns))
}

/// Writes `pipeline_trace.json` and `answer.json` into `dir` (created if
/// needed), atomically and with secrets redacted, and appends every
/// `llm_response` event to `llm_responses.jsonl` (see
/// [`append_llm_responses`]).
pub fn write_question_trace(dir: &Path, events: &[TraceEvent], output: &AskOutput) -> Result<(), TraceError> {
    fs::create_dir_all(dir).map_err(|source| TraceError::Io { path: dir.to_owned(), source })?;
    let trace = json!({
        "format_version": TRACE_FORMAT_VERSION,
        "question": output.question,
        "document": output.document,
        "events": events,
    });
    write_json_atomic(&dir.join(PIPELINE_TRACE_FILE), &trace)?;
    append_llm_responses(dir, events)?;
    write_json_atomic(&dir.join(ANSWER_FILE), output)
}

/// The append-only log of raw LLM responses inside a question folder.
pub const LLM_RESPONSES_FILE: &str = "llm_responses.jsonl";

/// The trace step under which a generator records a raw LLM response.
pub const LLM_RESPONSE_STEP: &str = "llm_response";

/// Whether `event` carries a model reply: a generation `llm_response`, or
/// any other step (question `llm_parse`, retrieval `llm_route`) whose detail
/// holds the verbatim `raw` response object.
fn is_model_reply(event: &TraceEvent) -> bool {
    event.step == LLM_RESPONSE_STEP || event.detail.get("raw").is_some_and(Value::is_object)
}

/// Appends each model reply of `events` (see [`is_model_reply`]) to `dir/llm_responses.jsonl`
/// as one redacted JSON line: `{"response_id", "request_id", "recorded_at",
/// "brick", "step", "detail"}`, the detail (with the verbatim `raw`
/// response) unchanged but for redaction. The response id is the provider's
/// (`detail.raw.id`); the request id is `detail.request_id`, or the
/// provider's `raw.request_id`, when either is present. The file is opened
/// in append mode and each line is written with one `write_all`, so
/// concurrent or repeated runs add lines and never rewrite earlier ones.
/// Returns the number of lines appended (no file is created for none).
pub fn append_llm_responses(dir: &Path, events: &[TraceEvent]) -> Result<usize, TraceError> {
    let responses: Vec<&TraceEvent> = events.iter().filter(|e| is_model_reply(e)).collect();
    if responses.is_empty() {
        return Ok(0);
    }
    let path = dir.join(LLM_RESPONSES_FILE);
    let io = |source| TraceError::Io { path: path.clone(), source };
    let recorded_at =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let mut file = fs::OpenOptions::new().create(true).append(true).open(&path).map_err(io)?;
    for event in &responses {
        let detail = &event.detail;
        let raw = detail.get("raw");
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        let response_id = text(raw.and_then(|r| r.get("id"))).or_else(|| text(detail.get("response_id")));
        let request_id = text(detail.get("request_id")).or_else(|| text(raw.and_then(|r| r.get("request_id"))));
        let mut line = json!({
            "response_id": response_id,
            "request_id": request_id,
            "recorded_at": recorded_at,
            "brick": event.brick,
            "step": event.step,
            "detail": detail,
        });
        redact(&mut line);
        let mut bytes = serde_json::to_vec(&line).map_err(|e| io(std::io::Error::other(e)))?;
        bytes.push(b'\n');
        file.write_all(&bytes).map_err(io)?;
    }
    file.sync_all().map_err(io)?;
    Ok(responses.len())
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
        let tmp_dir = docintel_test_support::temp_dir("trace-test");
        let dir = tmp_dir.path().to_owned();
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
    }

    fn llm_event(id: &str, key: &str) -> TraceEvent {
        TraceEvent {
            brick: "generate".into(),
            step: LLM_RESPONSE_STEP.into(),
            detail: json!({
                "call": 1,
                "request_id": format!("req-{id}"),
                "raw": {
                    "id": id,
                    "model": "gpt-4.1-mini",
                    "choices": [{"message": {"content": "{\"items\": []}"}, "finish_reason": "stop"}],
                    "echo": {"Authorization": format!("Bearer {key}")},
                    "leaked": key,
                },
            }),
        }
    }

    #[test]
    fn llm_responses_are_appended_one_line_each_keyed_and_redacted() {
        let tmp_dir = docintel_test_support::temp_dir("trace-llm");
        let dir = tmp_dir.path().to_owned();
        let key = "sk-proj-abcdefghijklmnopqrstuvwx";
        let other = TraceEvent { brick: "retrieve".into(), step: "keyword_search".into(), detail: json!({}) };
        let first = [llm_event("chatcmpl-1", key), other.clone(), llm_event("chatcmpl-2", key)];
        assert_eq!(append_llm_responses(&dir, &first).unwrap(), 2);
        // A second run appends; it never rewrites what is there.
        let before = fs::read_to_string(dir.join(LLM_RESPONSES_FILE)).unwrap();
        assert_eq!(append_llm_responses(&dir, &[llm_event("chatcmpl-3", key)]).unwrap(), 1);
        let after = fs::read_to_string(dir.join(LLM_RESPONSES_FILE)).unwrap();
        assert!(after.starts_with(&before));
        let lines: Vec<Value> = after.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let ids: Vec<&str> = lines.iter().map(|l| l["response_id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["chatcmpl-1", "chatcmpl-2", "chatcmpl-3"]);
        assert_eq!(lines[0]["request_id"], "req-chatcmpl-1");
        // The raw response is kept verbatim apart from credentials.
        assert_eq!(lines[1]["detail"]["raw"]["choices"][0]["finish_reason"], "stop");
        assert!(!after.contains("abcdefghijklmnop"), "{after}");
        assert_eq!(lines[0]["detail"]["raw"]["echo"]["Authorization"], "[redacted]");
        // No LLM event, no file.
        let empty = dir.join("offline");
        fs::create_dir_all(&empty).unwrap();
        assert_eq!(append_llm_responses(&empty, &[other]).unwrap(), 0);
        assert!(!empty.join(LLM_RESPONSES_FILE).exists());
    }

    #[test]
    fn loading_a_folder_without_trace_files_names_the_folder_and_the_files() {
        let tmp_dir = docintel_test_support::temp_dir("trace-missing");
        let dir = tmp_dir.path().to_owned();
        fs::write(dir.join(ANSWER_FILE), "{}").unwrap();
        let error = load_question_trace(&dir).unwrap_err().to_string();
        assert!(error.contains(&dir.display().to_string()), "{error}");
        assert!(error.contains(PARSED_QUESTION_FILE) && error.contains(PIPELINE_TRACE_FILE), "{error}");
        assert!(!error.contains("missing answer.json") && !error.contains(", answer.json"), "{error}");
        // All present but not what they should be: the file is named.
        fs::write(dir.join(PARSED_QUESTION_FILE), "not json").unwrap();
        fs::write(dir.join(PIPELINE_TRACE_FILE), "{\"events\": []}").unwrap();
        let error = load_question_trace(&dir).unwrap_err();
        assert!(matches!(&error, TraceError::Corrupt { path, .. } if path.ends_with(PARSED_QUESTION_FILE)), "{error}");
    }
}
