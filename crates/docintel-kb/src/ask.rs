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

use docintel::schema::{AskOutput, DocumentFormat, DocumentProfile, ParsedQuestion};
use docintel::{AskOptions, Corpus, Engine, PipelineError};
use serde::Serialize;

use crate::error::KbError;
use crate::index::FullText;
use crate::manifest::{self, DocEntry, Manifest};
use crate::questions::{self, QuestionRow};
use crate::seal::KbKey;
use crate::store;
use crate::structured;
use crate::tabulate::{self, StructuredAnswer, TABULATE_NAME};

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
    /// A counting, filtering or grouping question: what the structured
    /// index answered (`tabulate`); then the answer lists every counted
    /// document and `document_id` / `document_name` are empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<StructuredAnswer>,
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
    // Counting, filtering and grouping questions go to the structured index
    // (decided in code by the question brick), never to the full-text search.
    if let Some(aggregate) = docintel::aggregate::parse_aggregate(question) {
        let index = structured::load(kb, &manifest, key)?;
        let search_ms = started.elapsed().as_millis() as u64;
        let mut answer = structured_answer(kb, &manifest, &index, &aggregate, &parsed, question, search_ms);
        if let Some(out_dir) = &options.out_dir {
            answer.output = write_structured_trace(kb, out_dir, &aggregate, &parsed, &answer, &options.previous_turns)?;
        }
        append_row(kb, &answer, &parsed, question, keywords, asked, key);
        return Ok(answer);
    }
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
        structured: None,
    };
    let answer = KbAnswer { output, kb: kb_meta };
    append_row(kb, &answer, &parsed, question, keywords, asked, key);
    Ok(answer)
}

/// The question folder of a structured answer, under `out_dir`'s folder of the knowledge
/// base's structured index (`structured-<hash of the knowledge base's path>`): one
/// `kb/structured_index` event with the question as the question brick read it, the
/// count, groups, fields read and documents not counted, and the answer. Returns the
/// answer with its `trace_dir`.
fn write_structured_trace(
    kb: &Path,
    out_dir: &Path,
    aggregate: &docintel::aggregate::AggregateQuestion,
    parsed: &ParsedQuestion,
    answer: &KbAnswer,
    previous_turns: &[String],
) -> Result<AskOutput, PipelineError> {
    let path = std::path::absolute(kb).unwrap_or_else(|_| kb.to_owned());
    let key = docintel::schema::slug::document_key(
        "structured",
        &docintel::content_hash(path.display().to_string().as_bytes()),
    );
    let event = docintel::schema::TraceEvent {
        brick: "kb".into(),
        step: "structured_index".into(),
        detail: serde_json::json!({
            "knowledge_base": path.display().to_string(),
            "aggregate": aggregate,
            "structured": answer.kb.structured,
            "counted_documents": answer.kb.candidates,
        }),
    };
    let profile = neutral_profile();
    docintel::write_answer_trace(out_dir, &key, previous_turns, (&profile, parsed), &[event], answer.output.clone())
}

/// Appends the question's row to the question table; the answer stands
/// even when the table cannot be written (a read-only copy).
fn append_row(
    kb: &Path,
    answer: &KbAnswer,
    parsed: &ParsedQuestion,
    question: &str,
    keywords: Vec<(String, f32)>,
    asked: Instant,
    key: Option<&KbKey>,
) {
    let (time, unix_ms) = questions::now();
    let feedback = &answer.output.answer.feedback;
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
        candidates: answer.kb.candidates.iter().map(|c| c.id.clone()).collect(),
        document_id: answer.kb.document_id.clone(),
        document_name: answer.kb.document_name.clone(),
        outcome: if feedback.answer_found { "answered" } else { "not_found" }.into(),
        confidence: feedback.confidence,
        citations_verified: answer.output.citations_verified,
        ms: asked.elapsed().as_millis() as u64,
    };
    if let Err(error) = questions::append(kb, row, key) {
        tracing::warn!("question table not written: {error}");
    }
}

/// The answer of a counting, filtering or grouping question from the
/// structured index: `kb ask`'s object with one item per counted document,
/// each span citing the value it was counted on, `kb.citations` naming the
/// document of each, and `kb.structured` the count, the groups and the
/// fields read (or why the question was refused).
#[allow(clippy::too_many_arguments)]
fn structured_answer(
    kb: &Path,
    manifest: &Manifest,
    index: &structured::StructuredIndex,
    aggregate: &docintel::aggregate::AggregateQuestion,
    parsed: &ParsedQuestion,
    question: &str,
    search_ms: u64,
) -> KbAnswer {
    let started = Instant::now();
    let tabulated = tabulate::tabulate(index, aggregate);
    let mut citations = Vec::new();
    // One item per counted document, in the same order.
    for (counted, item) in tabulated.counted.iter().zip(&tabulated.answer.items) {
        for span in &item.spans {
            citations.push(Citation {
                document_id: counted.row.document_id.clone(),
                document: counted.row.name.clone(),
                page: span.page,
                line_start: span.line_start,
                line_end: span.line_end,
            });
        }
    }
    let mut implementations = std::collections::BTreeMap::new();
    implementations.insert("question".to_owned(), parsed.parser.clone());
    // The tabulator both finds the rows and gives the answer (what `trace show` names).
    for brick in ["kb", "retrieve", "generate"] {
        implementations.insert(brick.to_owned(), TABULATE_NAME.to_owned());
    }
    let mut timings = std::collections::BTreeMap::new();
    timings.insert("structured_index".to_owned(), started.elapsed().as_millis() as u64);
    let meta = docintel::schema::Meta {
        docintel_version: env!("CARGO_PKG_VERSION").to_owned(),
        decomposition: parsed.decomposition.pattern,
        activations: parsed.activations.clone(),
        chunk_strategy: parsed.chunk_strategy,
        suggested_model: parsed.suggested_model.clone(),
        matched_concept: parsed.matched_concept.clone(),
        ambiguity_reason: None,
        suggested_clarification: None,
        retrieval_rewrites: Vec::new(),
        follow_up: None,
        parsed_question_cached: false,
        skipped: Vec::new(),
        parsing_notes: parsed.parsing_notes.clone(),
        retrieval_notes: vec![format!(
            "counting, filtering or grouping question: answered from the structured index ({}), every document checked",
            index.report.summary()
        )],
        generation_notes: Vec::new(),
        iterations: 0,
        retrieval_methods_used: vec!["structured_index".to_owned()],
        implementations,
        model: None,
        prompt_versions: std::collections::BTreeMap::new(),
        fragments_applied: Vec::new(),
        chunk_strategy_executed: "structured_index".to_owned(),
        exit: if tabulated.structured.refused.is_some() { "not_found" } else { "sufficient" }.to_owned(),
        passages_shown: Vec::new(),
        tokens_in: 0,
        tokens_out: 0,
        cost_usd: 0.0,
        llm_usage: std::collections::BTreeMap::new(),
        timings_ms: timings,
        document_diagnostics: Vec::new(),
        citation_problems: Vec::new(),
        citation_value_checks: vec![true; tabulated.answer.items.len()],
        trace_dir: None,
        corpus: None,
        vision: None,
        cited_sources: Vec::new(),
    };
    let output = AskOutput {
        question: question.to_owned(),
        document: kb.display().to_string(),
        answer: tabulated.answer,
        // Every quote is the value copied from its cited line when the index was built.
        citations_verified: true,
        custom_answer: None,
        meta,
    };
    let candidates = manifest
        .documents
        .iter()
        .filter(|d| tabulated.counted.iter().any(|c| c.row.document_id == d.id))
        .map(|d| Candidate { id: d.id.clone(), name: d.name.clone(), score: 0.0 })
        .collect();
    KbAnswer {
        output,
        kb: KbMeta {
            dir: kb.display().to_string(),
            document_id: String::new(),
            document_name: String::new(),
            candidates,
            citations,
            search_ms,
            load_ms: 0,
            structured: Some(tabulated.structured),
        },
    }
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
