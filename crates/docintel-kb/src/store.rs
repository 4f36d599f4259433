//! The stored documents: `docs/<id>/document.json` is the parsed document as
//! the parser returned it (serde JSON of `ParsedDocument`, read back
//! identical), what `kb ask` answers from without parsing again. With the
//! feature `parquet` the folder also holds the tables `docintel parse --out`
//! writes (`lines.parquet`, `pages.parquet`, `toc.parquet`, `chunks.parquet`,
//! `profile.json`), so duckdb or polars read `docs/*/lines.parquet` as one
//! table.
//!
//! In an encrypted knowledge base the folder holds `document.sealed` alone
//! (no Parquet tables, no `profile.json`: they are plaintext): the document
//! with every line's text emptied (its skeleton), then its line texts in
//! blocks of [`LINES_PER_BLOCK`], each sealed apart (`seal`) with associated
//! data naming the document, the block and the block count, so a block can
//! be opened alone (the layout lets a reader decrypt only the blocks of the
//! passages it shows) and a block swapped, dropped or moved does not open.

use std::path::{Path, PathBuf};

use docintel::schema::ParsedDocument;

use crate::error::{KbError, io_error};
use crate::manifest::write_atomic;
use crate::seal::KbKey;

/// The folder of the stored documents in a knowledge base.
pub(crate) const DOCS: &str = "docs";
/// The stored parsed document's file name in its folder.
pub(crate) const DOCUMENT_JSON: &str = "document.json";

/// The sealed document's file name in its folder (an encrypted knowledge base).
pub(crate) const DOCUMENT_SEALED: &str = "document.sealed";
/// Lines per sealed block of `document.sealed`.
pub(crate) const LINES_PER_BLOCK: usize = 64;
const SEALED_MAGIC: &[u8] = b"DIKBSEALED1\n";

/// `<kb>/docs/<id>`.
pub(crate) fn document_dir(kb: &Path, id: &str) -> PathBuf {
    kb.join(DOCS).join(id)
}

/// Writes the document's folder; `document.json` goes last (temporary file
/// and rename), so a folder holding it is complete.
/// With `key`, `document.sealed` alone.
pub(crate) fn write_document(
    kb: &Path,
    id: &str,
    sha256: &str,
    document: &ParsedDocument,
    key: Option<&KbKey>,
) -> Result<(), KbError> {
    let dir = document_dir(kb, id);
    std::fs::create_dir_all(&dir).map_err(io_error(&dir))?;
    if let Some(key) = key {
        return write_atomic(&dir.join(DOCUMENT_SEALED), &seal_document(id, document, key)?);
    }
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

/// Whether the document's folder is complete (sealed when `sealed`).
pub(crate) fn has_document(kb: &Path, id: &str, sealed: bool) -> bool {
    document_dir(kb, id).join(if sealed { DOCUMENT_SEALED } else { DOCUMENT_JSON }).is_file()
}

/// Reads the stored parsed document back (opening `document.sealed` with `key`).
pub(crate) fn read_document(kb: &Path, id: &str, key: Option<&KbKey>) -> Result<ParsedDocument, KbError> {
    let path = document_dir(kb, id).join(if key.is_some() { DOCUMENT_SEALED } else { DOCUMENT_JSON });
    let bytes = std::fs::read(&path).map_err(io_error(&path))?;
    let corrupt = |reason: String| KbError::Corrupt { path: path.display().to_string(), reason };
    match key {
        Some(key) => open_document(id, &bytes, key).map_err(corrupt),
        None => serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string())),
    }
}

/// Associated data of the skeleton (`block` `None`) or of a block of line texts.
fn associated_data(id: &str, block: Option<usize>, blocks: usize) -> Vec<u8> {
    match block {
        None => format!("docintel-kb/doc/{id}/skeleton/{blocks}"),
        Some(b) => format!("docintel-kb/doc/{id}/lines/{b}/{blocks}"),
    }
    .into_bytes()
}

/// `document.sealed`: the magic, the record count (u32 LE), then each record
/// as its length (u32 LE) and bytes: the sealed skeleton, then the sealed
/// line-text blocks (JSON arrays of strings) in order.
fn seal_document(id: &str, document: &ParsedDocument, key: &KbKey) -> Result<Vec<u8>, KbError> {
    let encode = |e: serde_json::Error| KbError::Sealing(format!("cannot encode: {e}"));
    let blocks = document.lines.len().div_ceil(LINES_PER_BLOCK);
    let mut skeleton = document.clone();
    for line in &mut skeleton.lines {
        line.text.clear();
    }
    let mut records =
        vec![key.seal(&serde_json::to_vec(&skeleton).map_err(encode)?, &associated_data(id, None, blocks))?];
    for (b, lines) in document.lines.chunks(LINES_PER_BLOCK).enumerate() {
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        records.push(key.seal(&serde_json::to_vec(&texts).map_err(encode)?, &associated_data(id, Some(b), blocks))?);
    }
    let mut out = SEALED_MAGIC.to_vec();
    out.extend_from_slice(&(records.len() as u32).to_le_bytes());
    for record in records {
        out.extend_from_slice(&(record.len() as u32).to_le_bytes());
        out.extend_from_slice(&record);
    }
    Ok(out)
}

/// The document [`seal_document`] sealed.
fn open_document(id: &str, bytes: &[u8], key: &KbKey) -> Result<ParsedDocument, String> {
    let records = sealed_records(bytes).ok_or("not a sealed document")?;
    let blocks = records.len().saturating_sub(1);
    let unsealed = |record: &[u8], block: Option<usize>| {
        key.open(record, &associated_data(id, block, blocks))
            .ok_or_else(|| format!("a sealed block does not open ({block:?}): altered, moved or another key"))
    };
    let skeleton = unsealed(records.first().ok_or("no skeleton")?, None)?;
    let mut document: ParsedDocument = serde_json::from_slice(&skeleton).map_err(|e| e.to_string())?;
    if document.lines.len().div_ceil(LINES_PER_BLOCK) != blocks {
        return Err("the block count does not match the line table".into());
    }
    for (b, (record, lines)) in records[1..].iter().zip(document.lines.chunks_mut(LINES_PER_BLOCK)).enumerate() {
        let texts: Vec<String> = serde_json::from_slice(&unsealed(record, Some(b))?).map_err(|e| e.to_string())?;
        if texts.len() != lines.len() {
            return Err(format!("block {b} holds {} lines, not {}", texts.len(), lines.len()));
        }
        for (line, text) in lines.iter_mut().zip(texts) {
            line.text = text;
        }
    }
    Ok(document)
}

/// The records of a sealed document, or `None` when it is not one.
fn sealed_records(bytes: &[u8]) -> Option<Vec<&[u8]>> {
    let mut rest = bytes.strip_prefix(SEALED_MAGIC)?;
    let mut take = |n: usize| -> Option<&[u8]> {
        let (head, tail) = (rest.get(..n)?, rest.get(n..)?);
        rest = tail;
        Some(head)
    };
    let count = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
    let mut records = Vec::with_capacity(count.min(1 << 20));
    for _ in 0..count {
        let len = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
        records.push(take(len)?);
    }
    Some(records)
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
            write_document(kb.path(), "doc", "0123", &document, None).unwrap();
            assert!(has_document(kb.path(), "doc", false));
            assert_eq!(read_document(kb.path(), "doc", None).unwrap(), document, "{}", file.display());
        }
        remove_document(kb.path(), "doc").unwrap();
        assert!(!has_document(kb.path(), "doc", false));
        remove_document(kb.path(), "doc").unwrap();
    }

    #[test]
    fn a_sealed_document_reads_back_identical_and_only_with_its_key_and_id() {
        let kb = docintel_test_support::temp_dir("kb-store-sealed");
        let key = KbKey::from_bytes([1; 32]);
        let document = docintel::parse_file(&docintel_test_support::fixture("nist/nist_csf_2.0_excerpt.pdf")).unwrap();
        assert!(document.lines.len() > LINES_PER_BLOCK, "several blocks");
        write_document(kb.path(), "doc", "0123", &document, Some(&key)).unwrap();
        assert!(has_document(kb.path(), "doc", true) && !has_document(kb.path(), "doc", false));
        assert_eq!(read_document(kb.path(), "doc", Some(&key)).unwrap(), document);
        let other = KbKey::from_bytes([2; 32]);
        assert!(matches!(read_document(kb.path(), "doc", Some(&other)), Err(KbError::Corrupt { .. })));
        // Moved under another id: the associated data differs, nothing opens.
        let moved = document_dir(kb.path(), "moved");
        std::fs::create_dir_all(&moved).unwrap();
        std::fs::copy(document_dir(kb.path(), "doc").join(DOCUMENT_SEALED), moved.join(DOCUMENT_SEALED)).unwrap();
        assert!(read_document(kb.path(), "moved", Some(&key)).is_err());
    }
}
