//! docintel-llm: how does a request reach a language model?
//!
//! Transports implement the schema crate's [`LanguageModel`] trait:
//! - [`OpenAiTransport`] talks to any OpenAI-compatible server (OpenAI, Azure,
//!   vLLM, llama.cpp server, Ollama) with strict structured output, bounded
//!   retries and the raw reply kept verbatim (see [`openai`]).
//! - [`ReplayTransport`] answers from responses recorded on disk, matched by a
//!   hash of the request; tests of LLM-backed bricks run on it, with no
//!   network.
//!
//! ```
//! use docintel_llm::request_key;
//! use docintel_schema::{ChatMessage, LlmRequest};
//! let request = LlmRequest {
//!     model: "m".into(),
//!     messages: vec![ChatMessage { role: "user".into(), content: "hi".into() }],
//!     schema_name: "s".into(),
//!     schema: serde_json::json!({"type": "object"}),
//!     temperature: 0.0,
//!     max_output_tokens: None,
//! };
//! assert_eq!(request_key(&request).len(), 64);
//! ```

#![warn(missing_docs)]

use std::fs;
use std::path::{Path, PathBuf};

use docintel_schema::{ContextOverflow, LanguageModel, LlmRequest, LlmResponse};
use sha2::{Digest, Sha256};

pub mod openai;

pub use openai::{ApiKey, OpenAiConfig, OpenAiTransport};

/// Why a transport call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum LlmError {
    /// The replay directory holds no response for this request.
    NotRecorded {
        /// The request key (hex SHA-256 of the request).
        key: String,
        /// The directory searched.
        dir: PathBuf,
    },
    /// A recording could not be read or written.
    Io {
        /// The file concerned.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A recording is not a valid response.
    Malformed {
        /// The file concerned.
        path: PathBuf,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// The model stopped at the token limit: the reply is cut, not an answer.
    Truncated {
        /// The response id.
        id: String,
        /// The cut reply as received (kept for the audit trail).
        raw: Box<serde_json::Value>,
    },
    /// The HTTP client or runtime could not be built.
    Setup {
        /// What failed.
        reason: String,
    },
    /// The request cannot be sent as it is (unknown role, no messages, ...).
    InvalidRequest {
        /// What is wrong.
        reason: String,
    },
    /// The server refused the request with a status that retrying cannot fix
    /// (a 4xx other than 429).
    Status {
        /// HTTP status code.
        status: u16,
        /// The server's message (API key scrubbed).
        message: String,
    },
    /// Every attempt failed with a retryable cause (429, 5xx, connection,
    /// timeout).
    RetriesExhausted {
        /// Attempts made, the first included.
        attempts: u32,
        /// The last failure.
        last: String,
    },
    /// The server's reply is not a usable chat completion.
    InvalidReply {
        /// What is wrong with it.
        reason: String,
    },
}

impl std::fmt::Display for LlmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LlmError::NotRecorded { key, dir } => {
                write!(f, "no recorded response for request {key} in {}", dir.display())
            }
            LlmError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            LlmError::Malformed { path, source } => write!(f, "{}: not a recorded response: {source}", path.display()),
            LlmError::Truncated { id, .. } => write!(f, "response {id} was cut at the output token limit"),
            LlmError::Setup { reason } => write!(f, "cannot set up the LLM transport: {reason}"),
            LlmError::InvalidRequest { reason } => write!(f, "invalid LLM request: {reason}"),
            LlmError::Status { status, message } => {
                write!(f, "LLM server refused the request (HTTP {status}): {message}")
            }
            LlmError::RetriesExhausted { attempts, last } => {
                write!(f, "LLM server still failing after {attempts} attempts; last error: {last}")
            }
            LlmError::InvalidReply { reason } => write!(f, "unusable LLM reply: {reason}"),
        }
    }
}

impl LlmError {
    /// Whether this is a server refusing image content: a 4xx other than 429 whose message
    /// names images, vision or multimodal input (OpenAI's `image_url is only supported by
    /// certain models`, vLLM's `not a multimodal model`, llama.cpp's `image input is not
    /// supported`). A model that reads no images: the caller goes on without them.
    pub fn rejects_images(&self) -> bool {
        let LlmError::Status { status, message } = self else { return false };
        let lower = message.to_lowercase();
        (400..500).contains(status)
            && *status != 429
            && ["image", "vision", "multimodal", "multi-modal"].iter().any(|w| lower.contains(w))
    }

    /// Whether this is a server refusing a prompt longer than the model's
    /// context, and the window its message names. Read off the messages of
    /// OpenAI and vLLM (`maximum context length is N tokens`), llama.cpp
    /// (`exceeds the available context size`, `n_ctx`) and the
    /// `context_length_exceeded` code: an HTTP 400 or 413 that says so.
    pub fn context_overflow(&self) -> Option<ContextOverflow> {
        let LlmError::Status { status: 400 | 413, message } = self else { return None };
        let lower = message.to_lowercase();
        let says = lower.contains("context_length_exceeded")
            || lower.contains("exceed_context_size")
            || (lower.contains("context")
                && ["exceed", "too long", "too large", "maximum", "longer than", "larger than"]
                    .iter()
                    .any(|w| lower.contains(w)));
        if !says {
            return None;
        }
        let number_after = |marker: &str| -> Option<u64> {
            let at = lower.find(marker)? + marker.len();
            let digits: String =
                lower[at..].trim_start().chars().take_while(|c| c.is_ascii_digit() || *c == ',').collect();
            digits.replace(',', "").parse().ok().filter(|n| *n > 0)
        };
        let window = number_after("maximum context length is").or_else(|| number_after("n_ctx"));
        Some(ContextOverflow { window })
    }
}

impl std::error::Error for LlmError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LlmError::Io { source, .. } => Some(source),
            LlmError::Malformed { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The replay key of a request: hex SHA-256 of its JSON form. Any change to
/// the prompt, schema, model or parameters changes the key.
pub fn request_key(request: &LlmRequest) -> String {
    let bytes = serde_json::to_vec(request).expect("an LlmRequest always serialises");
    hex(&Sha256::digest(&bytes))
}

/// The replay key of `request` sent with `png_images`: the hex SHA-256 of the
/// request's key and each image's SHA-256 (no image: [`request_key`]).
pub fn request_key_with_images(request: &LlmRequest, png_images: &[Vec<u8>]) -> String {
    let key = request_key(request);
    if png_images.is_empty() {
        return key;
    }
    let mut hasher = Sha256::new();
    hasher.update(key.as_bytes());
    for image in png_images {
        hasher.update(b"\nimage ");
        hasher.update(hex(&Sha256::digest(image)).as_bytes());
    }
    hex(&hasher.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Answers requests from responses recorded in a directory, one
/// `<request_key>.json` file (an [`LlmResponse`]) per request.
#[derive(Debug, Clone)]
pub struct ReplayTransport {
    dir: PathBuf,
}

impl ReplayTransport {
    /// A transport replaying from `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> ReplayTransport {
        ReplayTransport { dir: dir.into() }
    }

    /// Stores `response` as the answer to `request` (used to record fixtures).
    pub fn record(&self, request: &LlmRequest, response: &LlmResponse) -> Result<PathBuf, LlmError> {
        let path = self.path_for(request);
        let io = |source| LlmError::Io { path: path.clone(), source };
        fs::create_dir_all(&self.dir).map_err(io)?;
        let json = serde_json::to_vec_pretty(response).map_err(|e| io(std::io::Error::other(e)))?;
        fs::write(&path, json).map_err(io)?;
        Ok(path)
    }

    /// Stores `response` as the answer to `request` sent with `png_images`.
    pub fn record_with_images(
        &self,
        request: &LlmRequest,
        png_images: &[Vec<u8>],
        response: &LlmResponse,
    ) -> Result<PathBuf, LlmError> {
        let path = self.dir.join(format!("{}.json", request_key_with_images(request, png_images)));
        let io = |source| LlmError::Io { path: path.clone(), source };
        fs::create_dir_all(&self.dir).map_err(io)?;
        let json = serde_json::to_vec_pretty(response).map_err(|e| io(std::io::Error::other(e)))?;
        fs::write(&path, json).map_err(io)?;
        Ok(path)
    }

    fn path_for(&self, request: &LlmRequest) -> PathBuf {
        self.dir.join(format!("{}.json", request_key(request)))
    }

    fn replay(&self, key: String) -> Result<LlmResponse, LlmError> {
        let path = self.dir.join(format!("{key}.json"));
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(LlmError::NotRecorded { key, dir: self.dir.clone() });
            }
            Err(source) => return Err(LlmError::Io { path, source }),
        };
        let response: LlmResponse =
            serde_json::from_slice(&bytes).map_err(|source| LlmError::Malformed { path: path.clone(), source })?;
        if response.finish_reason == "length" {
            return Err(LlmError::Truncated { id: response.id, raw: Box::new(response.raw) });
        }
        Ok(response)
    }

    /// The directory replayed from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl LanguageModel for ReplayTransport {
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
        self.replay(request_key(request))
    }

    /// Replays the response recorded with [`ReplayTransport::record_with_images`].
    fn complete_with_images(
        &self,
        request: &LlmRequest,
        png_images: &[Vec<u8>],
    ) -> Option<Result<LlmResponse, LlmError>> {
        Some(self.replay(request_key_with_images(request, png_images)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use docintel_schema::{ChatMessage, Usage};
    use serde_json::json;

    fn request(content: &str) -> LlmRequest {
        LlmRequest {
            model: "test-model".into(),
            messages: vec![ChatMessage { role: "user".into(), content: content.into() }],
            schema_name: "single_text".into(),
            schema: json!({"type": "object"}),
            temperature: 0.0,
            max_output_tokens: Some(256),
        }
    }

    fn response(finish_reason: &str) -> LlmResponse {
        LlmResponse {
            id: "resp-1".into(),
            model: "test-model".into(),
            content: r#"{"items":[]}"#.into(),
            finish_reason: finish_reason.into(),
            usage: Usage { input_tokens: 10, output_tokens: 3, cached_tokens: 0 },
            raw: json!({"id": "resp-1", "choices": []}),
        }
    }

    #[test]
    fn replays_what_was_recorded_and_only_that() {
        let dir = docintel_test_support::temp_dir("llm-replay");
        let transport = ReplayTransport::new(dir.path());
        transport.record(&request("hello"), &response("stop")).unwrap();
        assert_eq!(transport.complete(&request("hello")).unwrap(), response("stop"));
        let missing = transport.complete(&request("hello!")).unwrap_err();
        assert!(matches!(missing, LlmError::NotRecorded { .. }), "{missing}");
    }

    #[test]
    fn a_truncated_reply_is_an_error() {
        let dir = docintel_test_support::temp_dir("llm-truncated");
        let transport = ReplayTransport::new(dir.path());
        transport.record(&request("long"), &response("length")).unwrap();
        assert!(matches!(transport.complete(&request("long")), Err(LlmError::Truncated { .. })));
    }

    #[test]
    fn keys_change_with_every_field() {
        let base = request("q");
        let mut other = base.clone();
        other.temperature = 0.5;
        assert_ne!(request_key(&base), request_key(&other));
        assert_eq!(request_key(&base), request_key(&request("q")));
    }
}
