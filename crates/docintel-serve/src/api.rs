//! The JSON endpoints: `GET /healthz`, `GET /v1/documents`, `POST
//! /v1/documents` (a PDF upload, ingested into the tenant's knowledge base),
//! `POST /v1/ask` (the `docintel kb ask --json` object, from
//! `docintel_kb::ask` or, with `document`, `docintel_kb::ask_document`; with
//! `--traces`, its trace written under `KB/traces/`, see `traces`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::state::{AppState, Tenant, blocking};

/// The longest question, characters (as the CLI's).
const MAX_QUESTION_CHARS: usize = 4000;
/// The folder of a knowledge base that holds uploaded PDFs.
pub const UPLOADS: &str = "uploads";

/// `GET /healthz`.
pub(crate) async fn healthz() -> Json<serde_json::Value> {
    Json(serde_json::json!({ "status": "ok" }))
}

/// A document as the API lists it (no server path).
#[derive(Debug, Serialize)]
pub(crate) struct DocumentView {
    id: String,
    name: String,
    sha256: String,
    pages: u32,
    lines: u32,
    summary: Option<String>,
}

impl From<&docintel_kb::DocEntry> for DocumentView {
    fn from(d: &docintel_kb::DocEntry) -> Self {
        Self {
            id: d.id.clone(),
            name: d.name.clone(),
            sha256: d.sha256.clone(),
            pages: d.pages,
            lines: d.lines,
            summary: d.summary.clone(),
        }
    }
}

/// `GET /v1/documents`: the tenant's documents (an empty list for a new knowledge base).
pub(crate) async fn list_documents(
    State(state): State<Arc<AppState>>,
    Tenant(t): Tenant,
) -> Result<Response, ApiError> {
    let shared = state.clone();
    let documents = blocking(&state, move || {
        let kb = &shared.tenants[t].kb;
        if !kb.join(docintel_kb::MANIFEST).is_file() {
            return Ok(Vec::new());
        }
        let manifest = docintel_kb::list(kb)?;
        Ok(manifest.documents.iter().map(DocumentView::from).collect::<Vec<_>>())
    })
    .await?;
    Ok(Json(serde_json::json!({ "documents": documents })).into_response())
}

/// `POST /v1/documents?name=FILE.pdf`'s query.
#[derive(Debug, Deserialize)]
pub(crate) struct UploadQuery {
    name: Option<String>,
}

/// `POST /v1/documents?name=FILE.pdf`, the body the PDF's bytes: stored as
/// `KB/uploads/<sha256 prefix>-<name>` and added to the knowledge base
/// (nothing parsed again when those bytes are there already). 201 with the
/// document, 413 over the size limit, 415 not a PDF, 422 a PDF that cannot be read.
pub(crate) async fn upload(
    State(state): State<Arc<AppState>>,
    Tenant(t): Tenant,
    Query(query): Query<UploadQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let limit = state.limits.max_upload_bytes;
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!("the upload is over the limit of {limit} bytes (or was cut)"),
        )
    };
    // A declared length over the limit is refused before anything is read.
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let bytes = tokio::time::timeout(state.limits.request_timeout, axum::body::to_bytes(body, limit))
        .await
        .map_err(|_| ApiError::new(StatusCode::REQUEST_TIMEOUT, "timeout", "the upload took too long"))?
        .map_err(|_| too_large())?;
    check_pdf(&bytes)?;
    let name = upload_name(query.name.as_deref());
    let shared = state.clone();
    let (status, entry) = blocking(&state, move || ingest(&shared.tenants[t], &name, &bytes)).await?;
    let code = if status == "added" { StatusCode::CREATED } else { StatusCode::OK };
    Ok((code, Json(serde_json::json!({ "status": status, "document": DocumentView::from(&entry) }))).into_response())
}

/// 415 unless `bytes` start like a PDF (the header may follow a little junk, as readers allow).
fn check_pdf(bytes: &Bytes) -> Result<(), ApiError> {
    let head = &bytes[..bytes.len().min(1024)];
    if head.windows(5).any(|w| w == b"%PDF-") {
        Ok(())
    } else {
        Err(ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "not_a_pdf", "the body is not a PDF (no %PDF- header)"))
    }
}

/// The stored file name of an upload: the given name's last component, its
/// characters outside `[A-Za-z0-9._-]` replaced, at most 80 of them, ending
/// in `.pdf`; never empty, never hidden, never a path.
pub(crate) fn upload_name(given: Option<&str>) -> String {
    let last = given.unwrap_or("").rsplit(['/', '\\']).next().unwrap_or("");
    let mut name: String = last
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .take(80)
        .collect();
    name = name.trim_start_matches(['.', '-']).to_owned();
    if name.to_ascii_lowercase().ends_with(".pdf") {
        name.truncate(name.len() - 4);
    }
    if name.is_empty() {
        name = "upload".into();
    }
    format!("{name}.pdf")
}

/// Writes the upload under `KB/uploads/` and adds it; ("added" | "unchanged", its entry).
fn ingest(
    tenant: &crate::state::TenantKb,
    name: &str,
    bytes: &[u8],
) -> Result<(&'static str, docintel_kb::DocEntry), ApiError> {
    let kb = &tenant.kb;
    // The upload would be kept under KB/uploads/ in plaintext, beside text sealed per key.
    if tenant.key.is_some() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "encrypted_kb",
            "uploads to an encrypted knowledge base are not supported (the file would be stored unsealed); \
             add it with `docintel kb add KB FILE --key-file KEY`"
                .to_owned(),
        ));
    }
    let _writer = tenant.writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let sha: String = Sha256::digest(bytes).iter().take(6).map(|b| format!("{b:02x}")).collect();
    let dir = kb.join(UPLOADS);
    std::fs::create_dir_all(&dir).map_err(|e| ApiError::internal(format!("{}: {e}", dir.display())))?;
    let path: PathBuf = dir.join(format!("{sha}-{name}"));
    if !path.is_file() {
        let temporary = dir.join(format!(".{sha}-{name}.tmp"));
        std::fs::write(&temporary, bytes)
            .and_then(|()| std::fs::rename(&temporary, &path))
            .map_err(|e| ApiError::internal(format!("{}: {e}", path.display())))?;
    }
    let report = docintel_kb::add(kb, std::slice::from_ref(&path), 1, &mut |_, _, _| {})?;
    if let Some(failure) = report.failed.first() {
        let _ = std::fs::remove_file(&path);
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "unreadable_pdf",
            failure.error.replace(&*kb.display().to_string(), "KB"),
        ));
    }
    let status = if report.added.is_empty() { "unchanged" } else { "added" };
    let entry = find_source(kb, &path)?;
    Ok((status, entry))
}

/// The manifest entry whose source is `path`.
fn find_source(kb: &Path, path: &Path) -> Result<docintel_kb::DocEntry, ApiError> {
    let manifest = docintel_kb::list(kb)?;
    let wanted = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    manifest
        .documents
        .iter()
        .find(|d| Path::new(&d.source) == wanted || Path::new(&d.source) == path)
        .cloned()
        .ok_or_else(|| ApiError::internal("the upload was added but the manifest does not list it (this is a bug)"))
}

/// `POST /v1/ask`'s body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AskRequest {
    question: String,
    /// Ask this document only (its id).
    document: Option<String>,
    /// Documents the index may open (default 3, at most 10).
    candidates: Option<usize>,
    /// The conversation's earlier questions, oldest first (at most
    /// [`docintel::MAX_PREVIOUS_TURNS`], each checked as a question): a
    /// follow-up is rewritten from them for retrieval only.
    #[serde(default)]
    history: Vec<String>,
}

/// `POST /v1/ask`: `{question, document?, candidates?, history?}` → the
/// object `docintel kb ask --json` prints for the tenant's knowledge base.
pub(crate) async fn ask(
    State(state): State<Arc<AppState>>,
    Tenant(t): Tenant,
    body: Bytes,
) -> Result<Response, ApiError> {
    let request: AskRequest = serde_json::from_slice(&body).map_err(|e| {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_json", format!("the body is not an ask request: {e}"))
    })?;
    let question = checked_question(&request.question)?;
    let history = checked_history(&request.history)?;
    if let Some(id) = &request.document {
        crate::pages::check_id(id)?;
    }
    let candidates = request.candidates.unwrap_or(docintel_kb::DEFAULT_CANDIDATES).clamp(1, 10);
    let shared = state.clone();
    let (answer, trace) = blocking(&state, move || {
        let (kb, key) = (&shared.tenants[t].kb, shared.tenants[t].key.as_ref());
        // With `--traces`, the trace goes where `kb ask --out KB/traces` would write it.
        let mut options = docintel::AskOptions { previous_turns: history, ..shared.options.clone() };
        if shared.traces {
            options.out_dir = Some(kb.join(crate::traces::TRACES));
        }
        let options = &options;
        let mut answer = match &request.document {
            Some(id) => docintel_kb::ask_document_keyed(kb, &shared.engine, &question, options, id, key)?,
            None => docintel_kb::ask_keyed(kb, &shared.engine, &question, options, candidates, key)?,
        };
        // No server path in the answer: the trace folder relative to the KB, and its id.
        let trace = answer.output.meta.trace_dir.take().and_then(|dir| crate::traces::trace_id(kb, Path::new(&dir)));
        answer.output.meta.trace_dir = trace.as_ref().map(|(_, relative)| relative.clone());
        // Encoded as the CLI encodes it (an f32 score stays `2.4715323`, not its f64 widening).
        let body =
            serde_json::to_vec(&answer).map_err(|e| ApiError::internal(format!("the answer does not encode: {e}")))?;
        Ok((body, trace.map(|(id, _)| id)))
    })
    .await?;
    let mut response = ([(header::CONTENT_TYPE, "application/json")], answer).into_response();
    if let Some(value) = trace.and_then(|id| header::HeaderValue::from_str(&id).ok()) {
        response.headers_mut().insert(crate::traces::TRACE_HEADER, value);
    }
    Ok(response)
}

/// The question, checked as the CLI checks it (400 `bad_question`).
fn checked_question(question: &str) -> Result<String, ApiError> {
    let bad = |message: String| ApiError::new(StatusCode::BAD_REQUEST, "bad_question", message);
    if !question.chars().any(char::is_alphanumeric) {
        return Err(bad("the question has no word in it".into()));
    }
    let n = question.chars().count();
    if n > MAX_QUESTION_CHARS {
        return Err(bad(format!("the question is {n} characters long (at most {MAX_QUESTION_CHARS})")));
    }
    Ok(question.to_owned())
}

/// The earlier questions of `history`, each checked as a question (400
/// `bad_history` naming the turn), at most [`docintel::MAX_PREVIOUS_TURNS`].
fn checked_history(history: &[String]) -> Result<Vec<String>, ApiError> {
    let bad = |message: String| ApiError::new(StatusCode::BAD_REQUEST, "bad_history", message);
    if history.len() > docintel::MAX_PREVIOUS_TURNS {
        return Err(bad(format!(
            "the history holds {} questions (at most {})",
            history.len(),
            docintel::MAX_PREVIOUS_TURNS
        )));
    }
    history
        .iter()
        .enumerate()
        .map(|(i, turn)| checked_question(turn).map_err(|e| bad(format!("history[{i}]: {}", e.message))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upload_names_never_leave_the_uploads_folder() {
        assert_eq!(upload_name(Some("invoice.PDF")), "invoice.pdf");
        assert_eq!(upload_name(Some("../../etc/passwd")), "passwd.pdf");
        assert_eq!(upload_name(Some("..")), "upload.pdf");
        assert_eq!(upload_name(Some("C:\\a\\b c.pdf")), "b_c.pdf");
        assert_eq!(upload_name(Some(".hidden.pdf")), "hidden.pdf");
        assert_eq!(upload_name(None), "upload.pdf");
        assert_eq!(upload_name(Some("é.pdf")), "_.pdf");
    }
}
