//! The stored documents: `docs/<id>/document.json` is the parsed document as
//! the parser returned it (serde JSON of `ParsedDocument`, read back
//! identical), what `kb ask` answers from without parsing again. With the
//! feature `parquet` the folder also holds the tables `docintel parse --out`
//! writes (`lines.parquet`, `pages.parquet`, `toc.parquet`, `chunks.parquet`,
//! `profile.json`), so duckdb or polars read `docs/*/lines.parquet` as one
//! table.

use std::path::{Path, PathBuf};

use docintel::schema::ParsedDocument;

use crate::error::{KbError, io_error};
use crate::manifest::write_atomic;

/// The folder of the stored documents in a knowledge base.
pub(crate) const DOCS: &str = "docs";
/// The stored parsed document's file name in its folder.
pub(crate) const DOCUMENT_JSON: &str = "document.json";

/// `<kb>/docs/<id>`.
pub(crate) fn document_dir(kb: &Path, id: &str) -> PathBuf {
    kb.join(DOCS).join(id)
}

/// Writes the document's folder; `document.json` goes last (temporary file
/// and rename), so a folder holding it is complete.
pub(crate) fn write_document(kb: &Path, id: &str, sha256: &str, document: &ParsedDocument) -> Result<(), KbError> {
    let dir = document_dir(kb, id);
    std::fs::create_dir_all(&dir).map_err(io_error(&dir))?;
    write_tables(&dir, sha256, document)?;
    let path = dir.join(DOCUMENT_JSON);
    let bytes = serde_json::to_vec(document)
        .map_err(|e| KbError::Corrupt { path: path.display().to_string(), reason: format!("cannot encode: {e}") })?;
    write_atomic(&path, &bytes)
}

/// Chunk sizes of `chunks.parquet` (those of `docintel parse --out`).
#[cfg(feature = "parquet")]
const TABLE_CHUNKS: docintel::ChunkConfig = docintel::ChunkConfig { max_tokens: 256, overlap_tokens: 32 };

#[cfg(feature = "parquet")]
fn write_tables(dir: &Path, sha256: &str, document: &ParsedDocument) -> Result<(), KbError> {
    let chunks = docintel::chunk_document(document, &TABLE_CHUNKS);
    docintel::write_tables(document, &chunks, sha256, dir)
        .map(|_| ())
        .map_err(|e| KbError::Corrupt { path: dir.display().to_string(), reason: e.to_string() })
}

#[cfg(not(feature = "parquet"))]
fn write_tables(_dir: &Path, _sha256: &str, _document: &ParsedDocument) -> Result<(), KbError> {
    Ok(())
}

/// Whether the document's folder is complete.
pub(crate) fn has_document(kb: &Path, id: &str) -> bool {
    document_dir(kb, id).join(DOCUMENT_JSON).is_file()
}

/// Reads the stored parsed document back.
pub(crate) fn read_document(kb: &Path, id: &str) -> Result<ParsedDocument, KbError> {
    let path = document_dir(kb, id).join(DOCUMENT_JSON);
    let bytes = std::fs::read(&path).map_err(io_error(&path))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| KbError::Corrupt { path: path.display().to_string(), reason: e.to_string() })
}

/// Removes the document's folder (a folder already gone is fine).
pub(crate) fn remove_document(kb: &Path, id: &str) -> Result<(), KbError> {
    let dir = document_dir(kb, id);
    match std::fs::remove_dir_all(&dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_error(&dir)(e)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_document_reads_back_identical() {
        let kb = docintel_test_support::temp_dir("kb-store");
        for file in [
            docintel_test_support::invoice("FlipkartInvoice.pdf"),
            docintel_test_support::fixture("nist/nist_csf_2.0_excerpt.pdf"),
        ] {
            let document = docintel::parse_file(&file).unwrap();
            write_document(kb.path(), "doc", "0123", &document).unwrap();
            assert!(has_document(kb.path(), "doc"));
            assert_eq!(read_document(kb.path(), "doc").unwrap(), document, "{}", file.display());
        }
        remove_document(kb.path(), "doc").unwrap();
        assert!(!has_document(kb.path(), "doc"));
        remove_document(kb.path(), "doc").unwrap();
    }
}
