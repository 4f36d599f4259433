//! The viewer's endpoints: `GET /v1/documents/{id}/pages/{n}` (the page drawn
//! by hayro, through `docintel::render_page`, as a grey PNG) and `GET
//! /v1/documents/{id}/pages/{n}/lines` (the page's size in PDF points and its
//! lines with their boxes, to draw highlights on the PNG). A document id is
//! checked for shape, then must be one the tenant's manifest lists: a request
//! never names a path, and another tenant's document is 404.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::state::{AppState, Tenant, blocking};

/// The resolution a page is drawn at unless `?dpi=` says otherwise.
pub const DEFAULT_DPI: u32 = 110;

/// 404 unless `id` has the shape of a document id (`[a-z0-9._-]`, not
/// starting with a dot, at most 200 bytes): what reaches the manifest lookup.
pub(crate) fn check_id(id: &str) -> Result<(), ApiError> {
    let shaped = !id.is_empty()
        && id.len() <= 200
        && !id.starts_with('.')
        && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-'));
    if shaped { Ok(()) } else { Err(ApiError::not_found("no such document")) }
}

/// The page number of a path segment (404 when it is not one).
fn page_number(segment: &str) -> Result<u32, ApiError> {
    segment.parse::<u32>().ok().filter(|&n| n >= 1).ok_or_else(|| ApiError::not_found(format!("no page {segment:?}")))
}

/// `?dpi=`.
#[derive(Debug, Deserialize)]
pub(crate) struct RenderQuery {
    dpi: Option<u32>,
}

/// `GET /v1/documents/{id}/pages/{n}`: the page as a PNG (8-bit grey).
pub(crate) async fn page_png(
    State(state): State<Arc<AppState>>,
    Tenant(t): Tenant,
    Path((id, page)): Path<(String, String)>,
    Query(query): Query<RenderQuery>,
) -> Result<Response, ApiError> {
    check_id(&id)?;
    let page = page_number(&page)?;
    let dpi = query.dpi.unwrap_or(DEFAULT_DPI).clamp(36, 300);
    let shared = state.clone();
    let png = blocking(&state, move || {
        let tenant = &shared.tenants[t];
        let (entry, document) = docintel_kb::stored_document_keyed(&tenant.kb, &id, tenant.key.as_ref())?;
        if !document.pages.iter().any(|p| p.page == page) {
            return Err(ApiError::not_found(format!("the document has no page {page}")));
        }
        // The source the manifest recorded (never a path from the request), checked to be the
        // bytes that were ingested.
        let bytes = std::fs::read(&entry.source).map_err(|_| source_gone())?;
        let sha: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
        if sha != entry.sha256 {
            return Err(source_gone());
        }
        let image = docintel::render_page(&bytes, None, page, dpi).map_err(|reason| {
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "render_failed", format!("page {page}: {reason}"))
        })?;
        encode_png(image.width, image.height, &image.gray)
    })
    .await?;
    Ok(([(header::CONTENT_TYPE, "image/png"), (header::CACHE_CONTROL, "private, max-age=3600")], png).into_response())
}

fn source_gone() -> ApiError {
    ApiError::new(
        StatusCode::GONE,
        "source_changed",
        "the document's file is gone or changed since it was added; add it again",
    )
}

/// An 8-bit grey PNG.
fn encode_png(width: u32, height: u32, gray: &[u8]) -> Result<Vec<u8>, ApiError> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::Eight);
    encoder
        .write_header()
        .and_then(|mut writer| writer.write_image_data(gray))
        .map_err(|e| ApiError::internal(format!("PNG encoding: {e}")))?;
    Ok(out)
}

/// `GET /v1/documents/{id}/pages/{n}/lines`: `{page, width, height, lines:
/// [{line_id, line_in_page, text, bbox: {x0, y0, x1, y1}}]}`, boxes in PDF
/// points with the origin at the bottom left of the media box.
pub(crate) async fn page_lines(
    State(state): State<Arc<AppState>>,
    Tenant(t): Tenant,
    Path((id, page)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    check_id(&id)?;
    let page = page_number(&page)?;
    let shared = state.clone();
    let body = blocking(&state, move || {
        let tenant = &shared.tenants[t];
        let (_, document) = docintel_kb::stored_document_keyed(&tenant.kb, &id, tenant.key.as_ref())?;
        let info = document
            .pages
            .iter()
            .find(|p| p.page == page)
            .ok_or_else(|| ApiError::not_found(format!("the document has no page {page}")))?;
        let lines: Vec<_> = document
            .lines
            .iter()
            .filter(|l| l.page == page)
            .map(|l| serde_json::json!({ "line_id": l.line_id, "line_in_page": l.line_in_page, "text": l.text, "bbox": l.bbox }))
            .collect();
        Ok(serde_json::json!({ "page": page, "width": info.width, "height": info.height, "lines": lines }))
    })
    .await?;
    Ok(Json(body).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_could_be_paths_are_refused() {
        for bad in ["", "..", "../x", "a/b", ".hidden", "A", "a b", "a%2f", &"a".repeat(201)] {
            assert!(check_id(bad).is_err(), "{bad:?}");
        }
        check_id("amazonwebservices-2e21d50f59a9").unwrap();
    }

    #[test]
    fn a_png_round_trips() {
        let png = encode_png(3, 2, &[0, 128, 255, 255, 128, 0]).unwrap();
        assert!(png.starts_with(b"\x89PNG"));
    }
}
