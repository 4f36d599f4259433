//! docintel-kb: a knowledge base — ingest documents once, ask many questions.
//!
//! A knowledge base is a folder:
//!
//! ```text
//! KB/manifest.json            format version, parsed-document layout, documents, failures
//! KB/docs/<id>/document.json  the parsed document as the parser returned it
//! KB/docs/<id>/*.parquet      its line, page, TOC and chunk tables (feature `parquet`)
//! KB/docs/<id>/document.sealed  instead, encrypted (`--key-file`): see `seal`, `store`
//! KB/index/                   the tantivy full-text index, one entry per document
//! KB/questions.jsonl          the question table, one row per `kb ask`
//! KB/structured.jsonl         the structured index, one row per document (`structured`)
//! KB/structured.json          its report: fields kept and dropped
//! KB/docs/<id>/fields.json    the fields proposed for one document
//! ```
//!
//! [`add`] parses each new file once (`ingest`); [`ask`] searches the index
//! for the question's keywords, reads back only the best few stored
//! documents and answers through the facade's corpus path (`ask`). A file
//! is ingested once per content and parser build; a knowledge base of
//! another format is re-indexed by [`add`], never misread.
//!
//! Safety: the index has one writer at a time (tantivy's lock; a second
//! `kb add` is [`KbError::Busy`]) and readers see its last commit; a stored
//! document is written before the commit that indexes it, and the manifest
//! (written through a temporary file and a rename) after it. `ask` only
//! opens documents both the index and the manifest hold, so a `kb add`
//! killed at any point leaves a knowledge base that answers from what was
//! committed.
//!
//! Modules: `error` ([`KbError`]), `manifest`, `store` (the stored
//! documents), `index` (tantivy), `ingest` ([`add`]), `ask` ([`ask`]),
//! `seal` ([`KbKey`]: encryption at rest), `questions` (the question table),
//! `scoped` (one named document: [`stored_document`], [`ask_document`]),
//! `structured` (the structured index: fields proposed per document, kept
//! when a fifth of the documents hold them) and `tabulate` (counting,
//! filtering and grouping questions answered from it).

#![warn(missing_docs)]

mod ask;
mod error;
mod index;
mod ingest;
mod manifest;
mod questions;
mod scoped;
mod seal;
mod store;
mod structured;
mod tabulate;

use std::path::Path;

pub use ask::{Candidate, Citation, DEFAULT_CANDIDATES, KbAnswer, KbMeta, ask, ask_keyed};
pub use error::KbError;
pub use ingest::{AddReport, COMMIT_EVERY, Progress, add, add_keyed};
pub use manifest::{DocEntry, Failure, KB_FORMAT_VERSION, MANIFEST, Manifest, document_schema};
pub use questions::{QUESTIONS, QuestionRow, questions};
pub use scoped::{ask_document, ask_document_keyed, stored_document, stored_document_keyed};
pub use seal::{AEAD, KEY_BYTES, KbKey, KeyCheck};
pub use structured::{
    DocFields, FieldCount, FieldValue, HEADER_PAGES, MAX_LABEL_WORDS, SHARE_DIVISOR, STRUCTURED_REPORT,
    STRUCTURED_SEALED, STRUCTURED_TABLE, StructuredIndex, StructuredReport, StructuredRow, extract,
    report as structured_report,
};
pub use tabulate::{Group, StructuredAnswer, TABULATE_NAME};

/// The key among `keys` that opens the knowledge base at `kb`: `None` for one that is not
/// encrypted (no key is needed), else the first key its manifest accepts
/// ([`KbError::KeyRequired`] when `keys` is empty, [`KbError::WrongKey`] when none fits).
/// A folder with no manifest yet (nothing added) needs no key.
pub fn key_for(kb: &Path, keys: &[KbKey]) -> Result<Option<KbKey>, KbError> {
    let manifest = match manifest::load_any(kb) {
        Ok(manifest) => manifest,
        Err(KbError::NotAKb { .. }) => return Ok(None),
        Err(error) => return Err(error),
    };
    if manifest.encryption.is_none() {
        return Ok(None);
    }
    let mut last = KbError::KeyRequired { dir: kb.display().to_string() };
    for key in keys {
        match manifest.reading_key(kb, Some(key)) {
            Ok(_) => return Ok(Some(key.clone())),
            Err(error) => last = error,
        }
    }
    Err(last)
}

/// The knowledge base's manifest: its documents and the files that failed.
pub fn list(kb: &Path) -> Result<Manifest, KbError> {
    manifest::load(kb)
}

/// Removes the document `doc` names — its id, its file name or its source
/// path — from the knowledge base; returns its entry. The manifest drops it
/// first (so no question opens it again), then the index and its stored
/// folder; the structured index is rebuilt without it.
pub fn remove(kb: &Path, doc: &str) -> Result<DocEntry, KbError> {
    let mut manifest = manifest::load(kb)?;
    let matching: Vec<&DocEntry> =
        manifest.documents.iter().filter(|d| d.id == doc || d.name == doc || d.source == doc).collect();
    let entry = match matching.as_slice() {
        [entry] => (*entry).clone(),
        [] => {
            return Err(KbError::UnknownDocument(format!(
                "{}: no document {doc:?} (see `docintel kb list`)",
                kb.display()
            )));
        }
        several => {
            let ids: Vec<&str> = several.iter().map(|d| d.id.as_str()).collect();
            return Err(KbError::UnknownDocument(format!(
                "{}: {doc:?} names {} documents ({}); give the id",
                kb.display(),
                several.len(),
                ids.join(", ")
            )));
        }
    };
    let text = index::FullText::open(kb, false)?;
    let mut writer = text.writer()?;
    manifest.documents.retain(|d| d.id != entry.id);
    manifest::save(kb, &manifest)?;
    writer.delete(&entry.id);
    writer.finish()?;
    store::remove_document(kb, &entry.id)?;
    // The structured index without it: rebuilt (plain); an encrypted one
    // cannot be opened without the key, so it is removed and the next
    // question rebuilds it in memory from the documents' sealed fields.
    if manifest.encryption.is_none() {
        structured::rebuild(kb, &manifest, None)?;
    } else {
        structured::forget(kb)?;
    }
    Ok(entry)
}

/// The document ids in the full-text index's last commit (a check that it
/// agrees with the manifest).
pub fn indexed_ids(kb: &Path) -> Result<Vec<String>, KbError> {
    index::FullText::open(kb, false)?.ids()
}
