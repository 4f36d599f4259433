//! One named document of the knowledge base: its stored parsed document
//! ([`stored_document`], e.g. for a viewer's line boxes) and a question asked
//! of it alone ([`ask_document`], `docintel serve`'s `POST /v1/ask` with a
//! `document`): the same [`KbAnswer`] as [`crate::ask`], with that one
//! document as the only candidate, so the JSON contract is the same.

use std::path::{Path, PathBuf};

use docintel::schema::ParsedDocument;
use docintel::{AskOptions, Corpus, Engine};

use crate::ask::{Candidate, KbAnswer, KbMeta};
use crate::error::KbError;
use crate::manifest::{self, DocEntry};
use crate::seal::KbKey;
use crate::store;

/// The manifest entry and stored parsed document of the document with id
/// `id`; [`KbError::UnknownDocument`] when the manifest holds no such id
/// (only ids the manifest names are opened: `id` never builds a path).
pub fn stored_document(kb: &Path, id: &str) -> Result<(DocEntry, ParsedDocument), KbError> {
    stored_document_keyed(kb, id, None)
}

/// [`stored_document`] of an encrypted knowledge base, with the tenant's key
/// ([`KbError::KeyRequired`] without one, [`KbError::WrongKey`] with another).
pub fn stored_document_keyed(kb: &Path, id: &str, key: Option<&KbKey>) -> Result<(DocEntry, ParsedDocument), KbError> {
    let manifest = manifest::load(kb)?;
    let entry = manifest
        .document(id)
        .cloned()
        .ok_or_else(|| KbError::UnknownDocument(format!("{}: no document with id {id:?}", kb.display())))?;
    let key = manifest.reading_key(kb, key)?;
    let document = store::read_document(kb, &entry.id, key)?;
    Ok((entry, document))
}

/// Answers `question` from the one document with id `id` (no index search):
/// [`crate::ask`]'s answer with that document as the only candidate.
pub fn ask_document(
    kb: &Path,
    engine: &Engine,
    question: &str,
    options: &AskOptions,
    id: &str,
) -> Result<KbAnswer, KbError> {
    ask_document_keyed(kb, engine, question, options, id, None)
}

/// [`ask_document`] of an encrypted knowledge base, with the tenant's key.
pub fn ask_document_keyed(
    kb: &Path,
    engine: &Engine,
    question: &str,
    options: &AskOptions,
    id: &str,
    key: Option<&KbKey>,
) -> Result<KbAnswer, KbError> {
    let started = std::time::Instant::now();
    let (entry, document) = stored_document_keyed(kb, id, key)?;
    let load_ms = started.elapsed().as_millis() as u64;
    let corpus = Corpus {
        folder: kb.to_owned(),
        documents: vec![(PathBuf::from(&entry.source), document)],
        ..Corpus::default()
    };
    let output = engine.corpus_qa(&corpus, question, options)?;
    let citations = crate::ask::citations(&output, &entry);
    let kb_meta = KbMeta {
        dir: kb.display().to_string(),
        document_id: entry.id.clone(),
        document_name: entry.name.clone(),
        candidates: vec![Candidate { id: entry.id.clone(), name: entry.name.clone(), score: 0.0 }],
        citations,
        search_ms: 0,
        load_ms,
        structured: None,
    };
    Ok(KbAnswer { output, kb: kb_meta })
}
