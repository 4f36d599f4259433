//! API errors: every failure is a JSON body `{"error": {"code", "message"}}`
//! with a stable `code` and the matching HTTP status; bad input is a 4xx,
//! never a 500 (a 500 is `internal`, a bug or a broken disk).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use docintel_kb::KbError;

/// One API error: its HTTP status, stable code and readable message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The stable, machine-readable code (`unauthorized`, `not_found`, …).
    pub code: &'static str,
    /// What went wrong, for a person.
    pub message: String,
}

impl ApiError {
    /// An error of this status and code.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into() }
    }

    /// 400 `bad_request`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// 404 `not_found`: also what a document of another tenant gets.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 401 `unauthorized`.
    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "missing or unknown API key: send `Authorization: Bearer KEY` (`docintel kb key add KB` prints one)",
        )
    }

    /// 500 `internal`: a bug or a broken disk, never bad input.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::warn!("{} {}: {}", self.status, self.code, self.message);
        }
        let body = serde_json::json!({ "error": { "code": self.code, "message": self.message } });
        (self.status, axum::Json(body)).into_response()
    }
}

impl From<KbError> for ApiError {
    fn from(error: KbError) -> Self {
        let message = error.to_string();
        match &error {
            KbError::UnknownDocument(_) => Self::not_found(message),
            KbError::Empty { .. } | KbError::NotAKb { .. } => Self::new(StatusCode::CONFLICT, "empty_kb", message),
            KbError::Stale { .. } => Self::new(StatusCode::CONFLICT, "kb_stale", message),
            KbError::Busy { .. } => Self::new(StatusCode::SERVICE_UNAVAILABLE, "kb_busy", message),
            // The server holds no tenant encryption key yet: an encrypted
            // knowledge base is a configuration it cannot serve, not a bug.
            KbError::KeyRequired { .. } | KbError::WrongKey { .. } | KbError::NotEncrypted { .. } => {
                Self::new(StatusCode::CONFLICT, "key_required", message)
            }
            KbError::Pipeline(pipeline) if pipeline.exit_code() == docintel::EXIT_BAD_INPUT => {
                Self::new(StatusCode::UNPROCESSABLE_ENTITY, "bad_input", message)
            }
            _ => Self::internal(message),
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;
    use docintel_kb::KbError;

    use super::ApiError;

    #[test]
    fn an_encrypted_knowledge_base_is_a_conflict_not_an_internal_error() {
        let error = ApiError::from(KbError::KeyRequired { dir: "kb".to_owned() });
        assert_eq!((error.status, error.code), (StatusCode::CONFLICT, "key_required"));
    }
}
