//! `kb ask`: the question's keywords (the rule parser's, as for the corpus
//! router; a follow-up's are its rewrite's, from `AskOptions::previous_turns`)
//! search the full-text index; the best few documents are read back
//! from their stored parsed documents (never parsed again, never every
//! document) and answered by the facade's corpus path (`Engine::corpus_qa`:
//! the router's one line per document, then each picked document through its
//! own TOC, top-1 first), so the answer is the one `docintel ask FILE` gives
//! on the document it comes from.

use std::path::{Path, PathBuf};
use std::time::Instant;

use docintel::schema::{AskOutput, DocumentFormat, DocumentProfile};
use docintel::{AskOptions, Corpus, Engine, PipelineError};
use serde::Serialize;

use crate::error::KbError;
use crate::index::FullText;
use crate::manifest::{self, DocEntry, Manifest};
use crate::questions::{self, QuestionRow};
use crate::seal::KbKey;
use crate::store;

/// Documents opened per question by default.
pub const DEFAULT_CANDIDATES: usize = 3;

/// `kb ask`'s answer: the `docintel ask --json` object, plus `kb`.
#[derive(Debug, Clone, Serialize)]
pub struct KbAnswer {
    /// The answer, as `docintel ask` gives it; `document` is the answering
    /// document's source path.
    #[serde(flatten)]
    pub output: AskOutput,
    /// Which documents the index proposed and which one answered.
    pub kb: KbMeta,
}

/// What the knowledge base decided for one question.
#[derive(Debug, Clone, Serialize)]
pub struct KbMeta {
    /// The knowledge base folder.
    pub dir: String,
    /// The answering document's id.
    pub document_id: String,
    /// Its file name.
    pub document_name: String,
    /// The documents the full-text index proposed, best first (the ones opened).
    pub candidates: Vec<Candidate>,
    /// One per cited span, in the answer's order: the document it cites.
    pub citations: Vec<Citation>,
    /// Time in the full-text search and in reading the stored documents, ms.
    pub search_ms: u64,
    /// See `search_ms`.
    pub load_ms: u64,
}

/// A document the index proposed.
#[derive(Debug, Clone, Serialize)]
pub struct Candidate {
    /// Its id.
    pub id: String,
    /// Its file name.
    pub name: String,
    /// Its BM25 score.
    pub score: f32,
}

/// A cited span and its document.
#[derive(Debug, Clone, Serialize)]
pub struct Citation {
    /// The document's id.
    pub document_id: String,
    /// The document's file name.
    pub document: String,
    /// Page (1-based).
    pub page: u32,
    /// First global line id.
    pub line_start: u32,
    /// Last global line id.
    pub line_end: u32,
}

/// Answers `question` from the knowledge base in `kb`, opening at most
/// `candidates` stored documents (at least one).
pub fn ask(
    kb: &Path,
    engine: &Engine,
    question: &str,
    options: &AskOptions,
    candidates: usize,
) -> Result<KbAnswer, KbError> {
    ask_keyed(kb, engine, question, options, candidates, None)
}

/// [`ask`] with the tenant's key of an encrypted knowledge base (checked
/// against the manifest before anything is read: [`KbError::KeyRequired`],
/// [`KbError::WrongKey`]); only the candidate documents are decrypted. A key
/// given to a knowledge base that is not encrypted is not needed. The
/// question is appended to the question table (`questions`).
pub fn ask_keyed(
    kb: &Path,
    engine: &Engine,
    question: &str,
    options: &AskOptions,
    candidates: usize,
    key: Option<&KbKey>,
) -> Result<KbAnswer, KbError> {
    let asked = Instant::now();
    let manifest = manifest::load(kb)?;
    let key = manifest.reading_key(kb, key)?;
    if manifest.documents.is_empty() {
        return Err(KbError::Empty { dir: kb.display().to_string() });
    }
    let started = Instant::now();
    let parsed = engine
        .question_parser()
        .parse_with_history(question, &options.previous_turns, &neutral_profile())
        .map_err(|e| KbError::Pipeline(PipelineError::Brick { brick: "question", source: Box::new(e) }))?;
    let keywords: Vec<(String, f32)> = parsed.plain_keywords().map(|k| (k.text.clone(), k.weight)).collect();
    let hits = search(kb, &manifest, &keywords, candidates.max(1))?;
    let search_ms = started.elapsed().as_millis() as u64;

    let started = Instant::now();
    let mut corpus = Corpus { folder: kb.to_owned(), ..Corpus::default() };
    for hit in &hits {
        let entry = manifest.document(&hit.id).expect("hits are filtered to the manifest");
        corpus.documents.push((PathBuf::from(&entry.source), store::read_document(kb, &entry.id, key)?));
    }
    let load_ms = started.elapsed().as_millis() as u64;

    let output = engine.corpus_qa(&corpus, question, options)?;
    let answering =
        hits.iter().filter_map(|h| manifest.document(&h.id)).find(|d| d.source == output.document).ok_or_else(
            || KbError::Corrupt {
                path: output.document.clone(),
                reason: "the answering document is not a candidate (this is a bug)".into(),
            },
        )?;
    let citations = citations(&output, answering);
    let kb_meta = KbMeta {
        dir: kb.display().to_string(),
        document_id: answering.id.clone(),
        document_name: answering.name.clone(),
        candidates: hits
            .iter()
            .map(|h| Candidate {
                id: h.id.clone(),
                name: manifest.document(&h.id).map(|d| d.name.clone()).unwrap_or_default(),
                score: h.score,
            })
            .collect(),
        citations,
        search_ms,
        load_ms,
    };
    let (time, unix_ms) = questions::now();
    let feedback = &output.answer.feedback;
    let row = QuestionRow {
        time,
        unix_ms,
        question: Some(question.to_owned()),
        answer_shape: serde_json::to_value(parsed.answer_shape)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        answer_type: parsed.answer_type.clone(),
        keywords: Some(keywords.into_iter().map(|(k, _)| k).collect()),
        sealed: None,
        candidates: kb_meta.candidates.iter().map(|c| c.id.clone()).collect(),
        document_id: kb_meta.document_id.clone(),
        document_name: kb_meta.document_name.clone(),
        outcome: if feedback.answer_found { "answered" } else { "not_found" }.into(),
        confidence: feedback.confidence,
        citations_verified: output.citations_verified,
        ms: asked.elapsed().as_millis() as u64,
    };
    // The answer stands even when the table cannot be written (a read-only copy).
    if let Err(error) = questions::append(kb, row, key) {
        tracing::warn!("question table not written: {error}");
    }
    Ok(KbAnswer { output, kb: kb_meta })
}

/// The stored documents to open: the index's best `limit` for the question's
/// keywords, among the manifest's documents (an index entry a killed `kb add`
/// committed before writing the manifest is left out). With no hit, the
/// first document, so the answer is an honest "not found" naming what the
/// question asks that the documents lack.
fn search(
    kb: &Path,
    manifest: &Manifest,
    keywords: &[(String, f32)],
    limit: usize,
) -> Result<Vec<crate::index::Hit>, KbError> {
    tracing::debug!("index search keywords: {keywords:?}");
    let text = FullText::open(kb, false)?;
    // Asked for more than needed: hits outside the manifest are dropped.
    let mut hits: Vec<_> =
        text.search(keywords, limit + 4)?.into_iter().filter(|hit| manifest.document(&hit.id).is_some()).collect();
    hits.truncate(limit);
    if hits.is_empty() {
        hits.push(crate::index::Hit { id: manifest.documents[0].id.clone(), score: 0.0 });
    }
    Ok(hits)
}

/// The profile the question is parsed against for the index search: a PDF
/// with nothing known (the keywords do not depend on it).
fn neutral_profile() -> DocumentProfile {
    DocumentProfile {
        format: DocumentFormat::Pdf,
        n_pages: None,
        has_toc: false,
        has_tables: false,
        languages: Vec::new(),
        is_scanned: false,
        doc_type: None,
        typical_fields: Vec::new(),
        summary: None,
    }
}

/// The answer's citations, each naming `answering`, the document that
/// answered.
pub(crate) fn citations(output: &AskOutput, answering: &DocEntry) -> Vec<Citation> {
    output
        .answer
        .items
        .iter()
        .flat_map(|item| &item.spans)
        .map(|span| Citation {
            document_id: answering.id.clone(),
            document: answering.name.clone(),
            page: span.page,
            line_start: span.line_start,
            line_end: span.line_end,
        })
        .collect()
}
