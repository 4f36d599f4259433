//! What every request shares: the tenants (one knowledge base each, with the
//! hashes of its API keys), the one `Engine`, the ask options, the limits and
//! the permits of the blocking pool; and the `Tenant` extractor, which turns
//! `Authorization: Bearer KEY` into the tenant it belongs to (401 otherwise).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::request::Parts;
use docintel::{AskOptions, Engine};
use tokio::sync::Semaphore;

use crate::error::ApiError;
use crate::keys;

/// The server's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest upload, bytes.
    pub max_upload_bytes: usize,
    /// Pipeline jobs (ask, ingest, render) running at once; one more is 429.
    pub max_concurrent: usize,
    /// How long a request may take before it is answered 504 (its work, which
    /// cannot be stopped, keeps its permit until it ends).
    pub request_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self { max_upload_bytes: 32 << 20, max_concurrent: 4, request_timeout: Duration::from_secs(120) }
    }
}

/// One tenant: its knowledge base and the hashes of its keys.
#[derive(Debug)]
pub struct TenantKb {
    /// The knowledge base folder.
    pub kb: PathBuf,
    /// SHA-256 (hex) of each key.
    pub key_hashes: Vec<String>,
    /// The key of an encrypted knowledge base (`docintel serve --key-file`); `None` for
    /// one that is not encrypted.
    pub key: Option<docintel_kb::KbKey>,
    /// Held while an upload writes the knowledge base (one writer at a time).
    pub(crate) writer: Mutex<()>,
}

impl TenantKb {
    /// The tenant of `kb`, with the keys stored there.
    pub fn load(kb: PathBuf) -> Result<Self, keys::KeyError> {
        let key_hashes = keys::load_keys(&kb)?.keys.into_iter().map(|k| k.sha256).collect();
        Ok(Self { kb, key_hashes, key: None, writer: Mutex::new(()) })
    }

    /// This tenant, opening its encrypted knowledge base with `key`.
    pub fn with_key(mut self, key: Option<docintel_kb::KbKey>) -> Self {
        self.key = key;
        self
    }
}

/// The server's shared state.
pub struct AppState {
    /// The tenants, in `--kb` order.
    pub tenants: Vec<TenantKb>,
    /// Shared by every question (it is `Send + Sync`).
    pub engine: Engine,
    /// The options every question is asked with.
    pub options: AskOptions,
    /// The limits.
    pub limits: Limits,
    /// Write each answer's trace under `KB/traces/` and serve it at
    /// `GET /v1/traces/{id}` (`docintel serve --traces`; off by default).
    pub traces: bool,
    pub(crate) permits: Arc<Semaphore>,
}

impl AppState {
    /// The state for these tenants; the engine is built from `options`.
    pub fn new(tenants: Vec<TenantKb>, options: AskOptions, limits: Limits) -> Result<Self, docintel::PipelineError> {
        let engine = Engine::new(&options)?;
        let permits = Arc::new(Semaphore::new(limits.max_concurrent.max(1)));
        Ok(Self { tenants, engine, options, limits, traces: false, permits })
    }
}

/// The tenant a request's API key belongs to (an index into `AppState::tenants`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tenant(pub(crate) usize);

impl FromRequestParts<Arc<AppState>> for Tenant {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<AppState>) -> Result<Self, Self::Rejection> {
        let header = parts.headers.get(axum::http::header::AUTHORIZATION).ok_or_else(ApiError::unauthorized)?;
        let key = header
            .to_str()
            .ok()
            .and_then(|value| value.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|key| !key.is_empty())
            .ok_or_else(ApiError::unauthorized)?;
        let hash = keys::key_hash(key);
        state
            .tenants
            .iter()
            .position(|tenant| tenant.key_hashes.contains(&hash))
            .map(Tenant)
            .ok_or_else(ApiError::unauthorized)
    }
}

/// Runs blocking pipeline work on tokio's blocking pool, behind the
/// concurrency limit (429 `busy` when every permit is taken) and the request
/// timeout (504 `timeout`; the work keeps its permit until it ends).
pub(crate) async fn blocking<T: Send + 'static>(
    state: &AppState,
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let permit = state.permits.clone().try_acquire_owned().map_err(|_| {
        ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "busy",
            format!("{} requests are being worked on; try again shortly", state.limits.max_concurrent),
        )
    })?;
    let task = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        work()
    });
    match tokio::time::timeout(state.limits.request_timeout, task).await {
        Err(_) => Err(ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            "timeout",
            format!("the request took longer than {} s", state.limits.request_timeout.as_secs_f32()),
        )),
        Ok(Err(join)) => Err(ApiError::internal(format!("the work failed (this is a bug): {join}"))),
        Ok(Ok(result)) => result,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(limits: Limits) -> AppState {
        let mut options = AskOptions::new(5);
        options.out_dir = None;
        AppState::new(Vec::new(), options, limits).unwrap()
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_time().build().unwrap()
    }

    #[test]
    fn a_full_pool_is_429_busy() {
        let state = state(Limits { max_concurrent: 1, ..Limits::default() });
        let held = state.permits.clone().try_acquire_owned().unwrap();
        let busy = runtime().block_on(blocking(&state, || Ok(()))).unwrap_err();
        assert_eq!((busy.status, busy.code), (StatusCode::TOO_MANY_REQUESTS, "busy"));
        drop(held);
        runtime().block_on(blocking(&state, || Ok(()))).unwrap();
    }

    #[test]
    fn work_past_the_timeout_is_504_and_keeps_its_permit_until_it_ends() {
        let state =
            state(Limits { max_concurrent: 1, request_timeout: Duration::from_millis(50), ..Limits::default() });
        let runtime = runtime();
        let (done, finished) = std::sync::mpsc::channel();
        let slow = runtime
            .block_on(blocking(&state, move || {
                std::thread::sleep(Duration::from_millis(400));
                let _ = done.send(());
                Ok(())
            }))
            .unwrap_err();
        assert_eq!((slow.status, slow.code), (StatusCode::GATEWAY_TIMEOUT, "timeout"));
        // The slow work still runs and holds the only permit.
        assert_eq!(runtime.block_on(blocking(&state, || Ok(()))).unwrap_err().code, "busy");
        finished.recv().unwrap();
        // The permit goes back when the work returns, a moment after it said it was done.
        let freed = (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            runtime.block_on(blocking(&state, || Ok(()))).is_ok()
        });
        assert!(freed, "the permit came back");
    }
}
