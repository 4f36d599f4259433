//! Audit trails over HTTP: with `docintel serve --traces` (`AppState::traces`)
//! every ask writes its trace as `docintel kb ask --out KB/traces` would
//! (`KB/traces/<document key>/questions/<question>/`: `answer.json`,
//! `pipeline_trace.json`, `parsed_question.json`, `llm_responses.jsonl` when a
//! model was called), the answer's `_meta.trace_dir` is that folder relative
//! to the KB (no server path) and the `X-Docintel-Trace` header gives its id,
//! `<document key>~<question folder>`; `GET /v1/traces/{id}` returns the
//! stored files as one JSON object. Each part of an id is checked for shape
//! (`pages::check_id`) and the folder is looked up in the tenant's
//! `KB/traces/` only, so another tenant's trace is 404 like a missing one.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::error::ApiError;
use crate::state::{AppState, Tenant, blocking};

/// The folder of a knowledge base the server writes traces into.
pub const TRACES: &str = "traces";
/// The response header that names an answer's trace.
pub const TRACE_HEADER: &str = "x-docintel-trace";

/// The trace id and KB-relative folder of a trace written under
/// `KB/traces/` (`None` for a folder elsewhere).
pub(crate) fn trace_id(kb: &Path, trace_dir: &Path) -> Option<(String, String)> {
    let relative = trace_dir.strip_prefix(kb.join(TRACES)).ok()?;
    let parts: Vec<&str> = relative.iter().map(|p| p.to_str()).collect::<Option<_>>()?;
    match parts.as_slice() {
        [key, "questions", question] => {
            Some((format!("{key}~{question}"), format!("{TRACES}/{key}/questions/{question}")))
        }
        _ => None,
    }
}

/// The folder of trace `id` in `kb` (404 unless the id has the right shape).
fn trace_folder(kb: &Path, id: &str) -> Result<PathBuf, ApiError> {
    let not_found = || ApiError::not_found("no such trace");
    let (key, question) = id.split_once('~').ok_or_else(not_found)?;
    crate::pages::check_id(key).map_err(|_| not_found())?;
    crate::pages::check_id(question).map_err(|_| not_found())?;
    Ok(kb.join(TRACES).join(key).join("questions").join(question))
}

/// A stored JSON file of a trace (`None` when absent).
fn read_json(path: &Path) -> Result<Option<Value>, ApiError> {
    match std::fs::read(path) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes).map(Some).map_err(|e| ApiError::internal(format!("{}: {e}", path.display())))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ApiError::internal(format!("{}: {e}", path.display()))),
    }
}

/// `GET /v1/traces/{id}`: `{id, answer, pipeline_trace, parsed_question,
/// llm_responses}` (`parsed_question` null when absent, `llm_responses` one
/// element per line).
pub(crate) async fn trace(
    State(state): State<Arc<AppState>>,
    Tenant(t): Tenant,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, ApiError> {
    let dir = trace_folder(&state.tenants[t].kb, &id)?;
    let body = blocking(&state, move || {
        let answer = read_json(&dir.join("answer.json"))?;
        let pipeline = read_json(&dir.join("pipeline_trace.json"))?;
        let (Some(answer), Some(pipeline)) = (answer, pipeline) else {
            return Err(ApiError::not_found("no such trace"));
        };
        let parsed = read_json(&dir.join("parsed_question.json"))?;
        let responses: Vec<Value> = match std::fs::read_to_string(dir.join("llm_responses.jsonl")) {
            Ok(text) => {
                text.lines().filter(|l| !l.trim().is_empty()).filter_map(|l| serde_json::from_str(l).ok()).collect()
            }
            Err(_) => Vec::new(),
        };
        Ok(serde_json::json!({
            "id": id,
            "answer": answer,
            "pipeline_trace": pipeline,
            "parsed_question": parsed,
            "llm_responses": responses,
        }))
    })
    .await?;
    Ok(Json(body).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_id_names_a_folder_under_the_kb_traces_only() {
        let kb = Path::new("/kb");
        let dir = kb.join("traces/aws-2e21d50f59a9/questions/what-is-the-total-988ffcab");
        let (id, relative) = trace_id(kb, &dir).unwrap();
        assert_eq!(id, "aws-2e21d50f59a9~what-is-the-total-988ffcab");
        assert_eq!(relative, "traces/aws-2e21d50f59a9/questions/what-is-the-total-988ffcab");
        assert_eq!(trace_folder(kb, &id).unwrap(), dir);
        assert!(trace_id(kb, Path::new("/elsewhere/aws/questions/q")).is_none());
        for bad in ["", "nokey", "..~x", "a~../b", "a~b/c", "A~b", "a~"] {
            assert!(trace_folder(kb, bad).is_err(), "{bad:?}");
        }
    }
}
