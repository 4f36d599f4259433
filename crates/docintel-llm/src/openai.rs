//! The OpenAI-compatible chat-completions transport (OpenAI, Azure OpenAI,
//! vLLM, llama.cpp `llama-server`, Ollama). The request body is
//! async-openai's typed `CreateChatCompletionRequest`; it is sent with
//! reqwest directly (see [`OpenAiTransport`] for why).
//!
//! One request is one `POST {base_url}/chat/completions` with
//! `response_format: json_schema` (strict), the request's temperature and an
//! output cap. The call is synchronous: the transport owns a current-thread
//! tokio runtime and blocks on it, so it must not be called from inside
//! another tokio runtime.
//!
//! Failure policy:
//! - HTTP 429, HTTP 5xx, connection failures and timeouts are retried up to
//!   `max_retries` times, waiting `backoff_base * 2^attempt` (capped at
//!   [`MAX_BACKOFF`]) between attempts; then [`LlmError::RetriesExhausted`].
//! - Any other 4xx fails at once ([`LlmError::Status`]): resending the same
//!   request cannot fix it.
//! - `finish_reason: length` is [`LlmError::Truncated`]: a cut reply is not an
//!   answer.
//! - A body that is not a chat completion is [`LlmError::InvalidReply`]. A
//!   reply whose *content* is not valid JSON is returned as is: judging the
//!   content against the schema is the caller's job (the generator turns it
//!   into an honest failure answer and keeps the raw response in its trace).
//!
//! The API key is never printed: [`ApiKey`]'s `Debug` is redacted, and every
//! error message and the raw body are scrubbed of the key before they leave
//! this module.

use std::fmt;
use std::time::Duration;

use async_openai::types::chat::{
    ChatCompletionRequestAssistantMessage, ChatCompletionRequestMessage, ChatCompletionRequestSystemMessage,
    ChatCompletionRequestUserMessage, CreateChatCompletionRequest, ResponseFormat, ResponseFormatJsonSchema,
};
use docintel_schema::{ContextOverflow, LanguageModel, LlmRequest, LlmResponse, Usage};
use serde_json::Value;

use crate::LlmError;

/// The longest wait between two attempts, whatever the backoff base.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// An API key. Its `Debug` output is redacted; the text is only read when the
/// request headers are built.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

/// How to reach an OpenAI-compatible server. Every field is explicit: there
/// is no default endpoint and nothing is read from the environment here (the
/// CLI does that).
#[derive(Clone)]
pub struct OpenAiConfig {
    /// API base including the version path, e.g. `https://api.openai.com/v1`
    /// or `http://127.0.0.1:8080/v1`; `/chat/completions` is appended.
    pub base_url: String,
    /// Bearer token; `None` for local servers that need none.
    pub api_key: Option<ApiKey>,
    /// Whole-request timeout (connect, send, wait, read).
    pub timeout: Duration,
    /// Retries after the first attempt (0 = one attempt only).
    pub max_retries: u32,
    /// Wait before the first retry; doubled for each further retry.
    pub backoff_base: Duration,
    /// Also send the legacy `max_tokens` next to `max_completion_tokens`, for
    /// servers that only know the old name. OpenAI reasoning models reject
    /// `max_tokens`, so leave it off for api.openai.com.
    pub send_legacy_max_tokens: bool,
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The base URL may carry a key (userinfo, `?key=`): never printed as is.
        f.debug_struct("OpenAiConfig")
            .field("base_url", &redact_url(&self.base_url))
            .field("api_key", &self.api_key)
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("backoff_base", &self.backoff_base)
            .field("send_legacy_max_tokens", &self.send_legacy_max_tokens)
            .finish()
    }
}

/// `url` with its userinfo and every query value replaced by `[redacted]` (a key passed as
/// `?key=...` or `https://user:key@host`), for anything printed or stored; a text that is
/// not a URL is returned with everything after `?` and before `@` redacted.
pub fn redact_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            if !parsed.username().is_empty() {
                let _ = parsed.set_username("[redacted]");
            }
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("[redacted]"));
            }
            if parsed.query().is_some() {
                let pairs: Vec<(String, String)> =
                    parsed.query_pairs().map(|(k, _)| (k.into_owned(), String::new())).collect();
                let query: Vec<String> = pairs.iter().map(|(k, _)| format!("{k}=[redacted]")).collect();
                parsed.set_query(Some(&query.join("&")));
            }
            parsed.to_string().replace("%5Bredacted%5D", "[redacted]")
        }
        Err(_) => {
            let text = url.split('?').next().unwrap_or_default();
            match text.rsplit_once('@') {
                Some((_, host)) => format!("[redacted]@{host}"),
                None => text.to_owned(),
            }
        }
    }
}

/// The chat-completions endpoint under `base_url`: `/chat/completions` appended to the path,
/// the query (if any) kept after it.
pub fn chat_completions_url(base_url: &str) -> Result<reqwest::Url, String> {
    let mut url =
        reqwest::Url::parse(base_url.trim()).map_err(|e| format!("{} is not a URL ({e})", redact_url(base_url)))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(format!("{} is not an http(s) URL with a host", redact_url(base_url)));
    }
    url.path_segments_mut()
        .map_err(|()| format!("{} cannot take a path", redact_url(base_url)))?
        .pop_if_empty()
        .push("chat")
        .push("completions");
    Ok(url)
}

/// Longest wait for one answer of [`OpenAiTransport::context_window`]'s questions.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// The context Ollama gives a model without a `num_ctx` (its documented default on
/// machines with less than 24 GiB of VRAM; longer prompts are cut silently).
pub const OLLAMA_DEFAULT_CONTEXT: u64 = 4096;

/// Most time one [`LanguageModel::complete`] call may take, retries and waits included:
/// past it no new attempt starts (a hung server costs one timeout per attempt otherwise).
pub const MAX_CALL_TIME: Duration = Duration::from_secs(300);

/// A [`LanguageModel`] speaking OpenAI chat completions with strict
/// structured output.
///
/// Why reqwest and not async-openai's `Client`: async-openai 0.43's client
/// wraps every call in its own fixed retry layer (3 retries on 429/5xx/connect,
/// 100 ms-8 s backoff) that can only be replaced through its `middleware`
/// feature and a tower stack, so `max_retries` and `backoff_base` could not
/// mean what they say; it also turns an error status whose body is not an
/// OpenAI error object into a deserialisation error, losing the status (a
/// proxy's HTML 429 would not be retried). One POST with reqwest, which
/// async-openai's client is built on anyway, keeps the status, the verbatim
/// body and the retry policy in our hands; async-openai still provides the
/// request types, so the body follows the OpenAI specification.
///
/// Built once, shared: the HTTP client and the runtime live behind an `Arc`, so a
/// clone is cheap and shares them (each clone with its own deadline, see
/// [`Self::with_deadline`]). The transport is `Send + Sync`; calls from several
/// threads at once share the current-thread runtime (tokio lets `block_on` run
/// concurrently on one), and none may come from inside another tokio runtime.
#[derive(Clone)]
pub struct OpenAiTransport {
    shared: std::sync::Arc<Shared>,
    /// No attempt starts after this instant, and none runs past it (see [`Self::with_deadline`]).
    deadline: Option<std::time::Instant>,
}

/// What every clone of one transport shares: built once by [`OpenAiTransport::new`].
struct Shared {
    config: OpenAiConfig,
    http: reqwest::Client,
    url: reqwest::Url,
    runtime: tokio::runtime::Runtime,
}

impl fmt::Debug for OpenAiTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiTransport").field("config", &self.shared.config).finish_non_exhaustive()
    }
}

impl OpenAiTransport {
    /// Builds the HTTP client (with the configured timeout) and the runtime.
    pub fn new(config: OpenAiConfig) -> Result<OpenAiTransport, LlmError> {
        // reqwest is built without a crypto provider (its default, aws-lc-rs, is a C
        // build): ring's becomes the process default, unless the application installed
        // one already (then reqwest uses that one, and this changes nothing).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout)
            .build()
            .map_err(|e| LlmError::Setup { reason: format!("HTTP client: {e}") })?;
        let url = chat_completions_url(&config.base_url).map_err(|reason| LlmError::Setup { reason })?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| LlmError::Setup { reason: format!("tokio runtime: {e}") })?;
        Ok(OpenAiTransport { shared: std::sync::Arc::new(Shared { http, url, runtime, config }), deadline: None })
    }

    /// The transport with a deadline shared by every call made through it (and by other
    /// transports given the same instant): past it no attempt starts, and an attempt's
    /// timeout is cut to the time left. A question's model calls then end in bounded time.
    pub fn with_deadline(mut self, deadline: Option<std::time::Instant>) -> OpenAiTransport {
        self.deadline = deadline;
        self
    }

    /// The model's context window as the server reports it, and where it was
    /// read, asking in turn (each question waits at most [`PROBE_TIMEOUT`]):
    /// llama.cpp's `GET /props` (`default_generation_settings.n_ctx`, a slot's
    /// share), vLLM's `GET {base}/models` (`max_model_len` of `model`), Ollama's
    /// `GET /api/ps` (`context_length` of the loaded model), then `POST
    /// /api/show` (its `num_ctx` parameter, else Ollama's default of
    /// [`OLLAMA_DEFAULT_CONTEXT`], which it truncates past silently). `None`
    /// when the server says nothing (hosted APIs: the caller's models table
    /// knows them); api.openai.com and Azure are not asked.
    pub fn context_window(&self, model: &str) -> Option<(u64, String)> {
        let host = self.shared.url.host_str().unwrap_or_default().to_ascii_lowercase();
        if host == "api.openai.com" || host.ends_with(".openai.azure.com") {
            return None;
        }
        let mut root = self.shared.url.clone();
        root.set_query(None);
        let base = {
            let mut base = self.shared.url.clone();
            if let Ok(mut segments) = base.path_segments_mut() {
                segments.pop().pop();
            }
            base
        };
        root.set_path("/");
        let join = |url: &reqwest::Url, path: &str| -> reqwest::Url {
            let mut url = url.clone();
            let prefix = url.path().trim_end_matches('/').to_owned();
            url.set_path(&format!("{prefix}/{path}"));
            url
        };
        // The chat endpoint is {base}/chat/completions; the server's root has /props, /api/*.
        let positive = |v: Option<&Value>| v.and_then(Value::as_u64).filter(|n| *n > 0);
        if let Some(props) = self.probe(join(&root, "props"), None)
            && let Some(n_ctx) =
                positive(props.pointer("/default_generation_settings/n_ctx")).or_else(|| positive(props.get("n_ctx")))
        {
            return Some((n_ctx, "the server's /props (llama.cpp n_ctx)".to_owned()));
        }
        if let Some(models) = self.probe(join(&base, "models"), None) {
            let listed = models.get("data").and_then(Value::as_array).cloned().unwrap_or_default();
            let entry = listed.iter().find(|m| m.get("id").and_then(Value::as_str) == Some(model));
            if let Some(len) = positive(entry.or(listed.first()).and_then(|m| m.get("max_model_len"))) {
                return Some((len, "the server's /models (max_model_len)".to_owned()));
            }
        }
        if let Some(ps) = self.probe(join(&root, "api/ps"), None) {
            let loaded = ps.get("models").and_then(Value::as_array).cloned().unwrap_or_default();
            let entry = loaded.iter().find(|m| {
                m.get("name")
                    .or(m.get("model"))
                    .and_then(Value::as_str)
                    .is_some_and(|n| n == model || n.starts_with(&format!("{model}:")))
            });
            if let Some(len) = positive(entry.and_then(|m| m.get("context_length"))) {
                return Some((len, "Ollama's /api/ps (context_length of the loaded model)".to_owned()));
            }
            let shown = self.probe(join(&root, "api/show"), Some(serde_json::json!({"model": model})));
            let num_ctx = shown.as_ref().and_then(|v| v.get("parameters")).and_then(Value::as_str).and_then(|p| {
                p.lines().find_map(|line| line.trim().strip_prefix("num_ctx")?.trim().parse::<u64>().ok())
            });
            return Some(match num_ctx {
                Some(n) if n > 0 => (n, "Ollama's /api/show (num_ctx parameter)".to_owned()),
                _ => (OLLAMA_DEFAULT_CONTEXT, "Ollama's default context (no num_ctx set for the model)".to_owned()),
            });
        }
        None
    }

    /// One short GET (or POST of `body`) whose JSON reply is returned; `None` on any failure.
    fn probe(&self, url: reqwest::Url, body: Option<Value>) -> Option<Value> {
        if self.deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            return None;
        }
        self.shared.runtime.block_on(async {
            let mut request = match &body {
                Some(body) => self
                    .shared
                    .http
                    .post(url)
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(body.to_string()),
                None => self.shared.http.get(url),
            };
            request = request.timeout(PROBE_TIMEOUT.min(self.shared.config.timeout));
            if let Some(ApiKey(key)) = &self.shared.config.api_key {
                request = request.bearer_auth(key);
            }
            let response = request.send().await.ok()?;
            if !response.status().is_success() || response.content_length().is_some_and(|n| n > 1 << 20) {
                return None;
            }
            let bytes = response.bytes().await.ok()?;
            serde_json::from_slice(&bytes).ok()
        })
    }

    /// The configuration in use.
    pub fn config(&self) -> &OpenAiConfig {
        &self.shared.config
    }

    /// The chat-completions body sent for `request`.
    pub fn chat_request(&self, request: &LlmRequest) -> Result<CreateChatCompletionRequest, LlmError> {
        let messages = request
            .messages
            .iter()
            .map(|m| match m.role.as_str() {
                "system" => Ok(ChatCompletionRequestMessage::System(ChatCompletionRequestSystemMessage::from(
                    m.content.as_str(),
                ))),
                "user" => {
                    Ok(ChatCompletionRequestMessage::User(ChatCompletionRequestUserMessage::from(m.content.as_str())))
                }
                "assistant" => Ok(ChatCompletionRequestMessage::Assistant(ChatCompletionRequestAssistantMessage {
                    content: Some(m.content.clone().into()),
                    ..Default::default()
                })),
                other => Err(LlmError::InvalidRequest { reason: format!("unknown message role {other:?}") }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if messages.is_empty() {
            return Err(LlmError::InvalidRequest { reason: "no messages".to_owned() });
        }
        Ok(CreateChatCompletionRequest {
            model: request.model.clone(),
            messages,
            temperature: Some(request.temperature),
            max_completion_tokens: request.max_output_tokens,
            // Deprecated by OpenAI, still the only name some servers read.
            #[allow(deprecated)]
            max_tokens: if self.shared.config.send_legacy_max_tokens { request.max_output_tokens } else { None },
            response_format: Some(ResponseFormat::JsonSchema {
                json_schema: ResponseFormatJsonSchema {
                    description: None,
                    name: request.schema_name.clone(),
                    schema: request.schema.clone(),
                    strict: Some(true),
                },
            }),
            ..Default::default()
        })
    }

    /// The chat-completions body sent for `request` with `png_images` shown after the text
    /// of its last user message: that message's content becomes an array of a `text` part
    /// and one `image_url` part per image, each a `data:image/png;base64,` URL.
    pub fn chat_request_with_images(
        &self,
        request: &LlmRequest,
        png_images: &[Vec<u8>],
    ) -> Result<CreateChatCompletionRequest, LlmError> {
        use async_openai::types::chat::{
            ChatCompletionRequestMessageContentPartImage, ChatCompletionRequestMessageContentPartText,
            ChatCompletionRequestUserMessageContent, ChatCompletionRequestUserMessageContentPart, ImageUrl,
        };
        use base64::Engine as _;
        let mut body = self.chat_request(request)?;
        let Some(ChatCompletionRequestMessage::User(user)) =
            body.messages.iter_mut().rev().find(|m| matches!(m, ChatCompletionRequestMessage::User(_)))
        else {
            return Err(LlmError::InvalidRequest { reason: "images need a user message to go with".to_owned() });
        };
        let text = match &user.content {
            ChatCompletionRequestUserMessageContent::Text(text) => text.clone(),
            ChatCompletionRequestUserMessageContent::Array(_) => String::new(),
        };
        let mut parts =
            vec![ChatCompletionRequestUserMessageContentPart::Text(ChatCompletionRequestMessageContentPartText {
                text,
                prompt_cache_breakpoint: None,
            })];
        for png in png_images {
            let url = format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(png));
            parts.push(ChatCompletionRequestUserMessageContentPart::ImageUrl(
                ChatCompletionRequestMessageContentPartImage {
                    image_url: ImageUrl { url, detail: None },
                    prompt_cache_breakpoint: None,
                },
            ));
        }
        user.content = ChatCompletionRequestUserMessageContent::Array(parts);
        Ok(body)
    }

    /// The wait before retry number `attempt` (0-based).
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.min(16));
        self.shared.config.backoff_base.saturating_mul(factor).min(MAX_BACKOFF)
    }

    /// Removes the API key from any text leaving the transport.
    fn scrub(&self, text: &str) -> String {
        match &self.shared.config.api_key {
            Some(ApiKey(key)) if !key.is_empty() => text.replace(key.as_str(), "[redacted]"),
            _ => text.to_owned(),
        }
    }

    fn scrub_value(&self, value: Value) -> Value {
        match &self.shared.config.api_key {
            Some(ApiKey(key)) if !key.is_empty() && value.to_string().contains(key.as_str()) => {
                serde_json::from_str(&self.scrub(&value.to_string())).unwrap_or(Value::Null)
            }
            _ => value,
        }
    }

    /// One HTTP attempt: the reply body as JSON, verbatim, or why not.
    fn attempt(&self, body: &[u8]) -> Result<Value, Attempt> {
        self.shared.runtime.block_on(async {
            let mut request = self
                .shared
                .http
                .post(self.shared.url.clone())
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_vec());
            if let Some(deadline) = self.deadline {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                request = request.timeout(left.min(self.shared.config.timeout));
            }
            if let Some(ApiKey(key)) = &self.shared.config.api_key {
                request = request.bearer_auth(key);
            }
            let response = request.send().await.map_err(|e| self.transport_error(&e))?;
            let status = response.status();
            // Read at most MAX_REPLY_BYTES: a structured answer is a few KiB, and a server that
            // streams hundreds of megabytes would otherwise fill memory and the trace files.
            if response.content_length().is_some_and(|n| n > MAX_REPLY_BYTES as u64) {
                return Err(Attempt::Fail(too_large()));
            }
            let mut response = response;
            let mut bytes: Vec<u8> = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| self.transport_error(&e))? {
                if bytes.len() + chunk.len() > MAX_REPLY_BYTES {
                    return Err(Attempt::Fail(too_large()));
                }
                bytes.extend_from_slice(&chunk);
            }
            if !status.is_success() {
                let message = self.scrub(&format!("HTTP {}: {}", status.as_u16(), error_message(&bytes)));
                return Err(if status.as_u16() == 429 || status.is_server_error() {
                    Attempt::Retry(message)
                } else {
                    Attempt::Fail(LlmError::Status { status: status.as_u16(), message })
                });
            }
            serde_json::from_slice(&bytes).map_err(|e| {
                Attempt::Fail(LlmError::InvalidReply {
                    reason: self.scrub(&format!(
                        "response body is not JSON ({e}): {}",
                        docintel_schema::text::truncate_chars(&String::from_utf8_lossy(&bytes), 200)
                    )),
                })
            })
        })
    }

    fn transport_error(&self, error: &reqwest::Error) -> Attempt {
        // reqwest names the URL in its messages: it may carry a key.
        let url = redact_url(self.shared.url.as_str());
        if error.is_builder() {
            return Attempt::Fail(LlmError::InvalidRequest { reason: self.scrub(&format!("{url}: {error}")) });
        }
        let stalled = error.is_timeout() && !error.is_connect();
        let kind = if error.is_timeout() {
            "timeout"
        } else if error.is_connect() {
            "connection failed"
        } else {
            "transport error"
        };
        // reqwest's Display omits the cause chain; keep it for the operator.
        let mut text = format!("{kind} ({url}): {}", bare_message(error));
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            text.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        let text = self.scrub(&text);
        // A server that accepted the request and never answered is not retried: the next
        // attempt would wait the whole timeout again.
        if stalled { Attempt::Stalled(text) } else { Attempt::Retry(text) }
    }
}

/// reqwest's message for `error` without the URL it would print.
fn bare_message(error: &reqwest::Error) -> String {
    let text = error.to_string();
    match text.split_once(" for url (") {
        Some((head, _)) => head.to_owned(),
        None => text,
    }
}

/// Largest reply body read from a server; a larger one is refused ([`LlmError::InvalidReply`]).
pub const MAX_REPLY_BYTES: usize = 4 << 20;

fn too_large() -> LlmError {
    LlmError::InvalidReply {
        reason: format!("the reply is larger than {} MiB (refused, not read further)", MAX_REPLY_BYTES >> 20),
    }
}

/// The message of an error body: `error.message` of an OpenAI error object,
/// else the body text, clipped.
fn error_message(bytes: &[u8]) -> String {
    let parsed: Option<Value> = serde_json::from_slice(bytes).ok();
    match parsed.as_ref().and_then(|v| v.pointer("/error/message")).and_then(Value::as_str) {
        // llama.cpp names the context size beside the message, not in it.
        Some(message) => match parsed.as_ref().and_then(|v| v.pointer("/error/n_ctx")).and_then(Value::as_u64) {
            Some(n_ctx) => format!("{} (n_ctx {n_ctx})", docintel_schema::text::truncate_chars(message, 300)),
            None => docintel_schema::text::truncate_chars(message, 300),
        },
        None => docintel_schema::text::truncate_chars(String::from_utf8_lossy(bytes).trim(), 300),
    }
}

/// The outcome of a failed attempt.
enum Attempt {
    /// Worth another try (429, 5xx, connection); the message says why.
    Retry(String),
    /// The server took the request and did not answer within the timeout: not retried.
    Stalled(String),
    /// Final.
    Fail(LlmError),
}

impl LanguageModel for OpenAiTransport {
    type Error = LlmError;

    fn cut_reply(error: &LlmError) -> Option<&serde_json::Value> {
        match error {
            LlmError::Truncated { raw, .. } => Some(raw),
            _ => None,
        }
    }

    fn context_overflow(error: &LlmError) -> Option<ContextOverflow> {
        error.context_overflow()
    }

    fn rejects_images(error: &LlmError) -> bool {
        error.rejects_images()
    }

    fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        self.send(&self.chat_request(request)?)
    }

    fn complete_with_images(
        &self,
        request: &LlmRequest,
        png_images: &[Vec<u8>],
    ) -> Option<Result<LlmResponse, LlmError>> {
        Some(self.chat_request_with_images(request, png_images).and_then(|body| self.send(&body)))
    }
}

impl OpenAiTransport {
    /// Posts `body` with the retry policy of the module docs and reads the reply.
    fn send(&self, body: &CreateChatCompletionRequest) -> Result<LlmResponse, LlmError> {
        let body = serde_json::to_vec(body)
            .map_err(|e| LlmError::InvalidRequest { reason: format!("cannot serialise the request: {e}") })?;
        let mut attempt = 0;
        let started = std::time::Instant::now();
        let raw = loop {
            if self.deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return Err(LlmError::RetriesExhausted {
                    attempts: attempt,
                    last: "the question's time budget for model calls is spent: no call made".to_owned(),
                });
            }
            match self.attempt(&body) {
                Ok(raw) => break raw,
                Err(Attempt::Fail(error)) => return Err(error),
                Err(Attempt::Stalled(last)) => {
                    return Err(LlmError::RetriesExhausted {
                        attempts: attempt + 1,
                        last: format!("{last} (the server accepted the request and did not answer: not retried)"),
                    });
                }
                Err(Attempt::Retry(last)) => {
                    let wait = self.backoff(attempt);
                    // A deadline over the attempts: no retry that could not finish in time.
                    let out_of_time = started.elapsed() + wait + self.shared.config.timeout > MAX_CALL_TIME
                        || self.deadline.is_some_and(|d| std::time::Instant::now() + wait >= d);
                    if attempt >= self.shared.config.max_retries || out_of_time {
                        let last = if out_of_time && attempt < self.shared.config.max_retries {
                            format!("{last} (no retry: the call's {} s budget would pass)", MAX_CALL_TIME.as_secs())
                        } else {
                            last
                        };
                        return Err(LlmError::RetriesExhausted { attempts: attempt + 1, last });
                    }
                    std::thread::sleep(wait);
                    attempt += 1;
                }
            }
        };
        response_from_raw(self.scrub_value(raw))
    }
}

/// Reads an [`LlmResponse`] out of a chat-completion body, keeping the body
/// verbatim in `raw`.
pub fn response_from_raw(raw: Value) -> Result<LlmResponse, LlmError> {
    let invalid = |reason: &str| LlmError::InvalidReply { reason: reason.to_owned() };
    let id = raw.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
    let model = raw.get("model").and_then(Value::as_str).unwrap_or_default().to_owned();
    let choice = raw
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|choices| choices.first())
        .ok_or_else(|| invalid("reply has no choices"))?;
    let finish_reason = choice.get("finish_reason").and_then(Value::as_str).unwrap_or_default().to_owned();
    if finish_reason == "length" {
        return Err(LlmError::Truncated { id, raw: Box::new(raw.clone()) });
    }
    let message = choice.get("message").ok_or_else(|| invalid("reply choice has no message"))?;
    let content = match message.get("content").and_then(Value::as_str) {
        Some(content) => content.to_owned(),
        None => {
            let refusal = message.get("refusal").and_then(Value::as_str);
            return Err(invalid(&match refusal {
                Some(refusal) => format!("model refused: {}", docintel_schema::text::truncate_chars(refusal, 200)),
                None => "reply message has no text content".to_owned(),
            }));
        }
    };
    let usage = raw.get("usage");
    let count = |path: &[&str]| {
        let mut node = usage;
        for key in path {
            node = node.and_then(|n| n.get(*key));
        }
        node.and_then(Value::as_u64).unwrap_or(0)
    };
    let usage = Usage {
        input_tokens: count(&["prompt_tokens"]),
        output_tokens: count(&["completion_tokens"]),
        cached_tokens: count(&["prompt_tokens_details", "cached_tokens"]),
    };
    Ok(LlmResponse { id, model, content, finish_reason, usage, raw })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(key: Option<&str>) -> OpenAiConfig {
        OpenAiConfig {
            base_url: "http://127.0.0.1:9/v1/".into(),
            api_key: key.map(ApiKey::new),
            timeout: Duration::from_secs(1),
            max_retries: 3,
            backoff_base: Duration::from_millis(100),
            send_legacy_max_tokens: false,
        }
    }

    #[test]
    fn debug_output_never_shows_the_key() {
        let transport = OpenAiTransport::new(config(Some("sk-secret-123"))).unwrap();
        let debug = format!("{transport:?}");
        assert!(!debug.contains("sk-secret-123"), "{debug}");
        assert!(debug.contains("[redacted]"), "{debug}");
        assert_eq!(transport.scrub("bad key sk-secret-123"), "bad key [redacted]");
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let transport = OpenAiTransport::new(config(None)).unwrap();
        assert_eq!(transport.backoff(0), Duration::from_millis(100));
        assert_eq!(transport.backoff(1), Duration::from_millis(200));
        assert_eq!(transport.backoff(3), Duration::from_millis(800));
        assert_eq!(transport.backoff(40), MAX_BACKOFF);
    }

    #[test]
    fn usage_and_cached_tokens_are_read_from_the_body() {
        let raw = json!({
            "id": "c1", "model": "m", "extra": {"kept": true},
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "{}"}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 32}}
        });
        let response = response_from_raw(raw.clone()).unwrap();
        assert_eq!(response.usage, Usage { input_tokens: 50, output_tokens: 7, cached_tokens: 32 });
        assert_eq!(response.raw, raw);
        assert!(matches!(response_from_raw(json!({"id": "x"})), Err(LlmError::InvalidReply { .. })));
    }
}
