//! Reading a question folder back: [`load_question_trace`] loads what
//! [`crate::write_question_trace`] (and the question brick) wrote, and
//! [`render`] / [`summary`] print the decision path for a human or as one
//! JSON object (`docintel trace show <DIR> [--json]`).
//!
//! Reading is strict about the three files every traced question has
//! (`parsed_question.json`, `pipeline_trace.json`, `answer.json`): a missing
//! one is a [`TraceError::Missing`] naming the folder and the files, a file
//! that is not what it should be is a [`TraceError::Corrupt`]. The LLM log
//! (`llm_responses.jsonl`) is optional: offline answers have none.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use docintel_schema::trace::{Event, TRACE_FORMAT_VERSION};
use docintel_schema::{AskOutput, ParsedQuestion, TraceEvent};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::{LLM_RESPONSES_FILE, TraceError};

/// The parsed question file inside a question folder.
pub const PARSED_QUESTION_FILE: &str = "parsed_question.json";
/// The ordered decisions file inside a question folder.
pub const PIPELINE_TRACE_FILE: &str = "pipeline_trace.json";
/// The answer (`AskOutput`) file inside a question folder.
pub const ANSWER_FILE: &str = "answer.json";

/// Everything stored for one question, read back from its folder.
#[derive(Debug, Clone)]
pub struct QuestionTrace {
    /// The folder read.
    pub dir: PathBuf,
    /// The parsed question as the question brick saved it.
    pub parsed_question: ParsedQuestion,
    /// The format of `pipeline_trace.json` (1 when it names none).
    pub format_version: u32,
    /// Every recorded decision, in order, as written.
    pub events: Vec<TraceEvent>,
    /// The answer and its `_meta`.
    pub output: AskOutput,
    /// The lines of `llm_responses.jsonl` (empty when the file is absent).
    pub llm_responses: Vec<Value>,
}

/// The `format_version` and `events` parts of `pipeline_trace.json`.
#[derive(serde::Deserialize)]
struct PipelineTraceFile {
    #[serde(default = "first_format")]
    format_version: u32,
    events: Vec<TraceEvent>,
}

/// The format of a trace that names none.
fn first_format() -> u32 {
    1
}

impl QuestionTrace {
    /// The decisions as typed [`Event`]s; a trace of another format than
    /// [`TRACE_FORMAT_VERSION`] is a [`TraceError::Version`], a typed step
    /// whose detail does not fit a [`TraceError::Corrupt`].
    pub fn typed_events(&self) -> Result<Vec<Event>, TraceError> {
        let path = self.dir.join(PIPELINE_TRACE_FILE);
        if self.format_version != TRACE_FORMAT_VERSION {
            return Err(TraceError::Version { path, found: self.format_version });
        }
        self.events
            .iter()
            .map(|event| {
                Event::try_from(event.clone())
                    .map_err(|e| TraceError::Corrupt { path: path.clone(), message: e.to_string() })
            })
            .collect()
    }

    /// The conversation up to and including this question, oldest first: the
    /// earlier turns it was asked after (`_meta.follow_up`), then its own
    /// question. What a follow-up of it is asked after (`docintel ask
    /// --follow-up DIR`).
    pub fn conversation(&self) -> Vec<String> {
        let earlier = self.output.meta.follow_up.iter().flat_map(|f| f.previous_turns.iter().cloned());
        earlier.chain(std::iter::once(self.output.question.clone())).collect()
    }
}

/// Reads the question folder `dir`. Fails with [`TraceError::Missing`]
/// (naming the folder and every missing file) or [`TraceError::Corrupt`].
pub fn load_question_trace(dir: &Path) -> Result<QuestionTrace, TraceError> {
    if !dir.is_dir() {
        return Err(TraceError::Missing { dir: dir.to_owned(), files: Vec::new() });
    }
    let missing: Vec<String> = [PARSED_QUESTION_FILE, PIPELINE_TRACE_FILE, ANSWER_FILE]
        .iter()
        .filter(|name| !dir.join(name).is_file())
        .map(|name| (*name).to_owned())
        .collect();
    if !missing.is_empty() {
        return Err(TraceError::Missing { dir: dir.to_owned(), files: missing });
    }
    let parsed_question: ParsedQuestion = read_json(&dir.join(PARSED_QUESTION_FILE))?;
    let trace: PipelineTraceFile = read_json(&dir.join(PIPELINE_TRACE_FILE))?;
    let output: AskOutput = read_json(&dir.join(ANSWER_FILE))?;
    let llm_path = dir.join(LLM_RESPONSES_FILE);
    let mut llm_responses = Vec::new();
    if llm_path.is_file() {
        let text = fs::read_to_string(&llm_path).map_err(|source| TraceError::Io { path: llm_path.clone(), source })?;
        for (index, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let value = serde_json::from_str(line).map_err(|e| TraceError::Corrupt {
                path: llm_path.clone(),
                message: format!("line {}: {e}", index + 1),
            })?;
            llm_responses.push(value);
        }
    }
    Ok(QuestionTrace {
        dir: dir.to_owned(),
        parsed_question,
        format_version: trace.format_version,
        events: trace.events,
        output,
        llm_responses,
    })
}

fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, TraceError> {
    let text = fs::read_to_string(path).map_err(|source| TraceError::Io { path: path.to_owned(), source })?;
    serde_json::from_str(&text).map_err(|e| TraceError::Corrupt { path: path.to_owned(), message: e.to_string() })
}

/// A serde enum as its JSON name (`expert_dictionary`, `single`, ...).
fn name_of<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => "?".to_owned(),
    }
}

/// The keywords' texts grouped by their source, in first-seen order of sources.
fn keywords_by_source(parsed: &ParsedQuestion) -> Vec<(String, Vec<String>)> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for keyword in &parsed.keywords {
        let source = name_of(&keyword.source);
        let text = if keyword.is_regex { format!("/{}/", keyword.text) } else { keyword.text.clone() };
        match groups.iter_mut().find(|(s, _)| *s == source) {
            Some((_, texts)) => texts.push(text),
            None => groups.push((source, vec![text])),
        }
    }
    groups
}

/// One passage a retrieval event reported.
struct PassageRow {
    method: String,
    page: Option<u64>,
    lines: Option<(u64, u64)>,
    score: Option<f64>,
    pinned: bool,
}

/// The passages listed by `retrieve` events (any step with a `passages` array).
fn retrieval_passages(events: &[TraceEvent]) -> Vec<PassageRow> {
    let mut rows = Vec::new();
    for event in events.iter().filter(|e| e.brick == "retrieve") {
        let Some(passages) = event.detail.get("passages").and_then(Value::as_array) else { continue };
        for p in passages {
            let lines = p
                .get("lines")
                .and_then(Value::as_array)
                .and_then(|l| Some((l.first()?.as_u64()?, l.get(1)?.as_u64()?)));
            let lines = lines.or_else(|| Some((p.get("line_start")?.as_u64()?, p.get("line_end")?.as_u64()?)));
            rows.push(PassageRow {
                method: event.step.clone(),
                page: p.get("page").and_then(Value::as_u64),
                lines,
                score: p.get("score").and_then(Value::as_f64),
                pinned: p.get("pinned").and_then(Value::as_bool).unwrap_or(false),
            });
        }
    }
    rows
}

/// The response id and request id of one `llm_responses.jsonl` line.
fn llm_ids(line: &Value) -> (String, Option<String>) {
    let id = line.get("response_id").and_then(Value::as_str).unwrap_or("?").to_owned();
    let request = line.get("request_id").and_then(Value::as_str).map(str::to_owned);
    (id, request)
}

/// The decision path, readable: question, parse, retrieval, generation,
/// validation and the answer with its citations.
pub fn render(trace: &QuestionTrace) -> String {
    let q = &trace.parsed_question;
    let out = &trace.output;
    let meta = &out.meta;
    let mut s = String::new();
    // `write!` into a String cannot fail.
    let _ = writeln!(s, "trace {}", trace.dir.display());
    let _ = writeln!(s, "question: {}", out.question);
    if q.corrected_question != q.original_question {
        let _ = writeln!(s, "  corrected: {}", q.corrected_question);
    }
    if let Some(follow_up) = &meta.follow_up {
        let _ = writeln!(s, "  after: {}", follow_up.previous_turns.join(" | "));
        if let Some(rewrite) = &follow_up.rewrite {
            let _ = writeln!(s, "  searched as: {rewrite}");
        }
    }
    let _ = writeln!(s, "document: {}", out.document);

    let _ = writeln!(s, "\n== question parse ({})", q.parser);
    let _ = writeln!(
        s,
        "type {} · shape {} · decomposition {} · chunk strategy {} · language {}",
        q.answer_type,
        name_of(&q.answer_shape),
        name_of(&q.decomposition.pattern),
        name_of(&q.chunk_strategy),
        q.language.as_deref().unwrap_or("?")
    );
    if let Some(concept) = &q.matched_concept {
        let _ = writeln!(s, "concept: {concept}");
    }
    let _ = writeln!(s, "keywords:");
    for (source, texts) in keywords_by_source(q) {
        let _ = writeln!(s, "  {source} ({}): {}", texts.len(), texts.join(", "));
    }
    let activations = serde_json::to_value(&q.activations).unwrap_or_default();
    if let Value::Object(map) = &activations {
        let on: Vec<String> = map
            .iter()
            .filter_map(|(k, v)| match v {
                Value::Bool(true) => Some(k.clone()),
                Value::Bool(false) => None,
                other => Some(format!("{k}={other}")),
            })
            .collect();
        let _ = writeln!(s, "activations: {}", on.join(", "));
    }
    for note in &meta.parsing_notes {
        let _ = writeln!(s, "  note: {note}");
    }
    for skipped in &meta.skipped {
        let _ = writeln!(s, "  skipped {}: {}", skipped.step, skipped.reason);
    }
    if let Some(reason) = &meta.ambiguity_reason {
        let _ = writeln!(s, "  ambiguous: {reason}");
    }
    if let Some(clarification) = &meta.suggested_clarification {
        let _ = writeln!(s, "  clarification: {clarification}");
    }

    let _ = writeln!(s, "\n== retrieval ({})", meta.implementations.get("retrieve").map(String::as_str).unwrap_or("?"));
    let _ = writeln!(s, "methods: {}", meta.retrieval_methods_used.join(", "));
    for row in retrieval_passages(&trace.events) {
        let lines = row.lines.map(|(a, b)| format!("l.{a}-{b}")).unwrap_or_else(|| "l.?".to_owned());
        let page = row.page.map(|p| format!("p.{p}")).unwrap_or_else(|| "p.?".to_owned());
        let score = row.score.map(|x| format!("score {x:.2}")).unwrap_or_default();
        let pinned = if row.pinned { " · pinned" } else { "" };
        let _ = writeln!(s, "  [{}] {page} {lines} {score}{pinned}", row.method);
    }
    for note in &meta.retrieval_notes {
        let _ = writeln!(s, "  note: {note}");
    }
    let _ = writeln!(s, "shown to the generator: {}", meta.passages_shown.join(", "));

    let _ =
        writeln!(s, "\n== generation ({})", meta.implementations.get("generate").map(String::as_str).unwrap_or("?"));
    let _ = writeln!(
        s,
        "strategy {} · exit {} · iterations {} · model {} · tokens {} in / {} out · cost ${:.4}",
        meta.chunk_strategy_executed,
        meta.exit,
        meta.iterations,
        meta.model.as_deref().unwrap_or("none (offline)"),
        meta.tokens_in,
        meta.tokens_out,
        meta.cost_usd
    );
    if !meta.fragments_applied.is_empty() {
        let _ = writeln!(s, "fragments: {}", meta.fragments_applied.join(", "));
    }
    if !meta.prompt_versions.is_empty() {
        let versions: Vec<String> = meta.prompt_versions.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(s, "templates: {}", versions.join(", "));
    }
    for line in &trace.llm_responses {
        let (id, request) = llm_ids(line);
        let request = request.map(|r| format!(" (request {r})")).unwrap_or_default();
        let _ = writeln!(s, "  llm response {id}{request}");
    }

    let _ = writeln!(s, "\n== validation");
    let verified = if out.citations_verified { "verified" } else { "NOT verified" };
    let _ = writeln!(s, "citations {verified}");
    for problem in &meta.citation_problems {
        let _ = writeln!(s, "  item {} span {}: {}", problem.item, problem.span, problem.problem);
    }
    for diagnostic in &meta.document_diagnostics {
        let _ = writeln!(s, "  document: {diagnostic}");
    }

    let answer = &out.answer;
    let _ = writeln!(s, "\n== answer (confidence {:.2})", answer.feedback.confidence);
    if !answer.feedback.answer_found || answer.items.is_empty() {
        let _ = writeln!(s, "No answer found in the document.");
    }
    for item in &answer.items {
        let _ = writeln!(s, "{}", item.value);
        for span in &item.spans {
            let _ = writeln!(s, "  p.{} l.{}-{}: \"{}\"", span.page, span.line_start, span.line_end, span.quote);
        }
    }
    for warning in &answer.feedback.warnings {
        let _ = writeln!(s, "note: {warning}");
    }
    s
}

/// The decision path as one JSON object (`docintel trace show --json`).
pub fn summary(trace: &QuestionTrace) -> Value {
    let q = &trace.parsed_question;
    let out = &trace.output;
    let meta = &out.meta;
    let keywords: BTreeMap<String, Vec<String>> = keywords_by_source(q).into_iter().collect();
    let passages: Vec<Value> = retrieval_passages(&trace.events)
        .into_iter()
        .map(|row| {
            json!({
                "method": row.method,
                "page": row.page,
                "line_start": row.lines.map(|l| l.0),
                "line_end": row.lines.map(|l| l.1),
                "score": row.score,
                "pinned": row.pinned,
            })
        })
        .collect();
    let llm: Vec<Value> = trace
        .llm_responses
        .iter()
        .map(|line| {
            let (id, request) = llm_ids(line);
            json!({ "response_id": id, "request_id": request })
        })
        .collect();
    json!({
        "dir": trace.dir.display().to_string(),
        "question": out.question,
        "document": out.document,
        "parse": {
            "parser": q.parser,
            "answer_type": q.answer_type,
            "answer_shape": q.answer_shape,
            "decomposition": q.decomposition.pattern,
            "chunk_strategy": q.chunk_strategy,
            "matched_concept": q.matched_concept,
            "keywords_by_source": keywords,
            "activations": q.activations,
            "parsing_notes": meta.parsing_notes,
            "skipped": meta.skipped,
        },
        "retrieval": {
            "implementation": meta.implementations.get("retrieve"),
            "methods": meta.retrieval_methods_used,
            "passages": passages,
            "notes": meta.retrieval_notes,
            "passages_shown": meta.passages_shown,
        },
        "generation": {
            "implementation": meta.implementations.get("generate"),
            "strategy": meta.chunk_strategy_executed,
            "exit": meta.exit,
            "iterations": meta.iterations,
            "fragments_applied": meta.fragments_applied,
            "prompt_versions": meta.prompt_versions,
            "model": meta.model,
            "tokens_in": meta.tokens_in,
            "tokens_out": meta.tokens_out,
            "cost_usd": meta.cost_usd,
            "llm_responses": llm,
        },
        "validation": {
            "citations_verified": out.citations_verified,
            "citation_problems": meta.citation_problems,
        },
        "answer": out.answer,
        "events": trace.events.len(),
    })
}
