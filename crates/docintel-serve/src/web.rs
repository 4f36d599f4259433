//! The files the binary carries: the web page (`web/index.html`, `app.js`,
//! `style.css`; no external request, no build step) and the OpenAPI 3
//! description of the API (`openapi.json`, served at `/v1/openapi.json`).

use axum::http::header;
use axum::response::{IntoResponse, Response};

/// The API's OpenAPI 3 description.
pub const OPENAPI: &str = include_str!("../openapi.json");
const INDEX_HTML: &str = include_str!("../web/index.html");
const APP_JS: &str = include_str!("../web/app.js");
const STYLE_CSS: &str = include_str!("../web/style.css");

/// Security headers of the page: nothing is loaded from elsewhere.
const CSP: &str = "default-src 'self'; img-src 'self' blob:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

fn file(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type), (header::CONTENT_SECURITY_POLICY, CSP)], body).into_response()
}

/// `GET /`.
pub(crate) async fn index() -> Response {
    file("text/html; charset=utf-8", INDEX_HTML)
}

/// `GET /app.js`.
pub(crate) async fn app_js() -> Response {
    file("text/javascript; charset=utf-8", APP_JS)
}

/// `GET /style.css`.
pub(crate) async fn style_css() -> Response {
    file("text/css; charset=utf-8", STYLE_CSS)
}

/// `GET /v1/openapi.json`.
pub(crate) async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}
