//! docintel-serve: `docintel serve`, the knowledge base over HTTP.
//!
//! One knowledge base per tenant; a request's `Authorization: Bearer KEY`
//! names the tenant (`keys`: only the keys' SHA-256 are stored, in
//! `KB/api-keys.json`). The JSON API (described by `openapi.json`, served at
//! `/v1/openapi.json`): `GET /healthz`, `GET|POST /v1/documents`, `POST
//! /v1/ask` (the `docintel kb ask --json` object), `GET
//! /v1/documents/{id}/pages/{n}` (a PNG drawn by hayro) and `.../lines` (the
//! page's line boxes), `GET /v1/traces/{id}` (an answer's audit trail, with
//! `--traces`: `traces`); the web page at `/` (`web`).
//!
//! The pipeline stays synchronous: every ask, ingest and render runs on
//! tokio's blocking pool behind a semaphore (`state::blocking`: 429 when every
//! permit is taken, 504 past the request timeout). Errors are JSON with a
//! stable `code` (`error`), and so are the router's own 4xx answers
//! (`json_errors`). A document id is checked for shape and must be in the
//! tenant's manifest (`pages::check_id`); uploads are written under
//! `KB/uploads/` with a sanitised name (`api::upload_name`).
//!
//! Modules: `error`, `keys`, `state` (tenants, limits, the `Tenant`
//! extractor, the blocking runner), `api`, `pages`, `traces`, `web`.

#![warn(missing_docs)]

mod api;
mod error;
mod keys;
mod pages;
mod state;
mod traces;
mod web;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

pub use api::UPLOADS;
pub use error::ApiError;
pub use keys::{KEYS_FILE, KeyError, KeyFile, StoredKey, add_key, key_hash, load_keys};
pub use pages::DEFAULT_DPI;
pub use state::{AppState, Limits, TenantKb};
pub use traces::{TRACE_HEADER, TRACES};
pub use web::OPENAPI;

/// The HTTP routes over `state`.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/", get(web::index))
        .route("/app.js", get(web::app_js))
        .route("/style.css", get(web::style_css))
        .route("/healthz", get(api::healthz))
        .route("/v1/openapi.json", get(web::openapi))
        .route("/v1/documents", get(api::list_documents).post(api::upload))
        .route("/v1/ask", axum::routing::post(api::ask))
        .route("/v1/documents/{id}/pages/{page}", get(pages::page_png))
        .route("/v1/documents/{id}/pages/{page}/lines", get(pages::page_lines))
        .route("/v1/traces/{id}", get(traces::trace))
        .fallback(|| async { ApiError::not_found("no such endpoint (see /v1/openapi.json)") })
        .layer(axum::middleware::map_response(json_errors))
        .with_state(state)
}

/// The router's own error answers (a 405, a path or query it cannot read)
/// are plain text; they become the API's JSON error, code by status.
async fn json_errors(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let text = axum::body::to_bytes(response.into_body(), 4096).await.unwrap_or_default();
    let code = match status {
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::PAYLOAD_TOO_LARGE => "too_large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        s if s.is_server_error() => "internal",
        _ => "bad_request",
    };
    let message = String::from_utf8_lossy(&text).trim().to_owned();
    let message = if message.is_empty() { status.canonical_reason().unwrap_or("error").to_owned() } else { message };
    ApiError::new(status, code, message).into_response()
}

/// A server running on its own thread and runtime; dropping it stops it.
pub struct Server {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl Server {
    /// The address it listens on (the port the system chose for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves until the process ends (or the server fails).
    pub fn wait(mut self) -> std::io::Result<()> {
        self.thread
            .take()
            .map_or(Ok(()), |t| t.join().unwrap_or_else(|_| Err(std::io::Error::other("the server panicked"))))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Binds `addr` and serves `state` on a new thread with a multi-threaded
/// tokio runtime (2 workers; the blocking pool sized to the concurrency limit).
pub fn start(addr: SocketAddr, state: AppState) -> std::io::Result<Server> {
    let blocking_threads = state.limits.max_concurrent.max(1) + 2;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(blocking_threads)
        .enable_io()
        .enable_time()
        .thread_name("docintel-serve")
        .build()?;
    let listener = runtime.block_on(tokio::net::TcpListener::bind(addr))?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let app = router(Arc::new(state));
    let thread = std::thread::Builder::new().name("docintel-serve".into()).spawn(move || {
        runtime.block_on(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await
        })
    })?;
    Ok(Server { addr, stop: Some(stop), thread: Some(thread) })
}
