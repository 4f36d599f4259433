//! [`EmbeddingRetriever`]: the document's chunks ranked by cosine similarity
//! to the question, floored against the unrelated-pair baseline, returned as
//! page-bounded passages.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError};

use docintel_schema::text::normalize;
use docintel_schema::{Chunk, Line, ParsedDocument, ParsedQuestion, Passage, Retrieval, TraceEvent, TraceSink};
use serde_json::json;

use super::floor::{Baseline, FloorConfig, MINILM_UNRELATED, apply_floor};
use super::{EmbedError, Embedder, cosine};

/// Documents whose chunk vectors are kept in memory at once.
const CACHE_DOCUMENTS: usize = 8;

/// How many passages the embedding retriever returns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EmbedConfig {
    /// Chunks shown (a chunk crossing a page gives one passage per page).
    pub top_k: usize,
    /// Further chunks ranked and kept for a next batch.
    pub reserve: usize,
    /// The relevance floor.
    pub floor: FloorConfig,
    /// The unrelated-pair baseline when the document has too few chunks to
    /// estimate one.
    pub fallback_baseline: Baseline,
}

impl EmbedConfig {
    /// Five chunks shown, ten in reserve, the standard floor.
    pub const STANDARD: EmbedConfig =
        EmbedConfig { top_k: 5, reserve: 10, floor: FloorConfig::STANDARD, fallback_baseline: MINILM_UNRELATED };
}

impl Default for EmbedConfig {
    fn default() -> Self {
        EmbedConfig::STANDARD
    }
}

/// Ranks a document's chunks by embedding similarity to the question.
///
/// Chunk vectors are cached in memory per document (keyed by a hash of the
/// embedder name and the chunks), so several questions on one document embed
/// its chunks once.
pub struct EmbeddingRetriever<E: Embedder> {
    embedder: E,
    config: EmbedConfig,
    cache: Mutex<HashMap<u64, Arc<Vec<Vec<f32>>>>>,
}

impl<E: Embedder> std::fmt::Debug for EmbeddingRetriever<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddingRetriever")
            .field("embedder", &self.embedder.name())
            .field("config", &self.config)
            .finish()
    }
}

/// The text embedded for a chunk: its context header (title and section
/// path), then its text.
fn chunk_input(chunk: &Chunk) -> String {
    if chunk.context_header.trim().is_empty() {
        chunk.text.clone()
    } else {
        format!("{}\n{}", chunk.context_header, chunk.text)
    }
}

impl<E: Embedder> EmbeddingRetriever<E> {
    /// A retriever over `embedder`.
    pub fn new(embedder: E, config: EmbedConfig) -> EmbeddingRetriever<E> {
        EmbeddingRetriever { embedder, config, cache: Mutex::new(HashMap::new()) }
    }

    /// The embedder.
    pub fn embedder(&self) -> &E {
        &self.embedder
    }

    /// The settings.
    pub fn config(&self) -> EmbedConfig {
        self.config
    }

    /// Name and version for the audit trail.
    pub fn name(&self) -> String {
        format!("embedding/0.1 ({})", self.embedder.name())
    }

    fn cache_key(&self, chunks: &[Chunk]) -> u64 {
        let mut hasher = DefaultHasher::new();
        self.embedder.name().hash(&mut hasher);
        for chunk in chunks {
            (chunk.line_start, chunk.line_end, &chunk.context_header, &chunk.text).hash(&mut hasher);
        }
        hasher.finish()
    }

    /// The vectors of `chunks` (one per chunk, in order), from the cache when
    /// these chunks were embedded before. The second value tells whether the
    /// cache answered.
    pub fn chunk_vectors(&self, chunks: &[Chunk]) -> Result<(Arc<Vec<Vec<f32>>>, bool), EmbedError> {
        let key = self.cache_key(chunks);
        if let Some(hit) = self.cache.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
            return Ok((Arc::clone(hit), true));
        }
        let inputs: Vec<String> = chunks.iter().map(chunk_input).collect();
        let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        let vectors = self.embedder.embed(&refs)?;
        self.check_shape(&vectors, chunks.len())?;
        let vectors = Arc::new(vectors);
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if cache.len() >= CACHE_DOCUMENTS {
            cache.clear();
        }
        cache.insert(key, Arc::clone(&vectors));
        Ok((vectors, false))
    }

    fn check_shape(&self, vectors: &[Vec<f32>], expected: usize) -> Result<(), EmbedError> {
        if vectors.len() != expected {
            return Err(EmbedError::Shape(format!("{} vectors for {expected} texts", vectors.len())));
        }
        let dimension = self.embedder.dimension();
        if let Some(bad) = vectors.iter().find(|v| v.len() != dimension) {
            return Err(EmbedError::Shape(format!("a vector of length {} (expected {dimension})", bad.len())));
        }
        Ok(())
    }

    /// Ranks `chunks` (the document's, from the parse brick's
    /// `chunk_document`) for `question`: the main query and its rewrites are
    /// embedded, a chunk scores its best cosine to any of them. Pages named
    /// in the question restrict the chunks when any chunk is on them.
    pub fn retrieve(
        &self,
        question: &ParsedQuestion,
        document: &ParsedDocument,
        chunks: &[Chunk],
        trace: &mut dyn TraceSink,
    ) -> Result<Retrieval, EmbedError> {
        let main = if question.retrieval.main_query.trim().is_empty() {
            question.corrected_question.as_str()
        } else {
            question.retrieval.main_query.as_str()
        };
        let mut queries = vec![main];
        queries.extend(question.retrieval.rewrites.iter().map(String::as_str).filter(|r| !r.trim().is_empty()));
        let keywords: Vec<String> = question.plain_keywords().map(|k| k.text.clone()).collect();
        self.retrieve_queries(&queries, &keywords, &question.retrieval.pages, document, chunks, trace)
    }

    /// [`retrieve`](Self::retrieve) with the query texts, keywords (only
    /// reported in `matched_keywords` and used to pick the anchor line) and
    /// page hint given directly.
    pub fn retrieve_queries(
        &self,
        queries: &[&str],
        keywords: &[String],
        pages: &[u32],
        document: &ParsedDocument,
        chunks: &[Chunk],
        trace: &mut dyn TraceSink,
    ) -> Result<Retrieval, EmbedError> {
        let methods_used = vec!["embedding".to_owned()];
        if chunks.is_empty() || queries.is_empty() {
            let note = "embedding search skipped: no chunks or no query".to_owned();
            return Ok(Retrieval { passages: Vec::new(), reserve: Vec::new(), methods_used, notes: vec![note] });
        }
        let (vectors, cached) = self.chunk_vectors(chunks)?;
        let query_vectors = self.embedder.embed(queries)?;
        self.check_shape(&query_vectors, queries.len())?;
        let similarities: Vec<f32> = vectors
            .iter()
            .map(|v| query_vectors.iter().map(|q| cosine(q, v)).fold(f32::NEG_INFINITY, f32::max))
            .collect();

        let on_hinted = |c: &Chunk| pages.iter().any(|p| (c.page_start..=c.page_end).contains(p));
        let hinted = !pages.is_empty() && chunks.iter().any(on_hinted);
        let mut ranking: Vec<usize> = (0..chunks.len()).filter(|&i| !hinted || on_hinted(&chunks[i])).collect();
        ranking.sort_by(|&a, &b| similarities[b].total_cmp(&similarities[a]).then(a.cmp(&b)));

        let (baseline, baseline_source) = match Baseline::from_background(&similarities) {
            Some(b) => (b, "document background"),
            None => (self.config.fallback_baseline, "fixed model baseline"),
        };
        let sorted: Vec<f32> = ranking.iter().map(|&i| similarities[i]).collect();
        let decision = apply_floor(&sorted, baseline, self.config.floor);
        let shown = decision.keep.min(self.config.top_k.max(1));
        let in_reserve = (ranking.len() - shown).min(self.config.reserve);

        let query_words = query_words(queries);
        let to_passages = |indices: &[usize]| -> Vec<Passage> {
            indices
                .iter()
                .flat_map(|&i| {
                    let chunk = &chunks[i];
                    page_segments(document, chunk)
                        .into_iter()
                        .filter(|segment| !hinted || segment.first().is_some_and(|l| pages.contains(&l.page)))
                        .map(|segment| passage(segment, f64::from(similarities[i]), keywords, &query_words))
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        let passages = to_passages(&ranking[..shown]);
        let reserve = to_passages(&ranking[shown..shown + in_reserve]);

        let top: Vec<serde_json::Value> = ranking
            .iter()
            .take(10)
            .map(|&i| json!({"chunk_id": chunks[i].chunk_id, "pages": [chunks[i].page_start, chunks[i].page_end], "similarity": similarities[i]}))
            .collect();
        trace.record(TraceEvent {
            brick: "retrieve".to_owned(),
            step: "embedding_search".to_owned(),
            detail: json!({
                "embedder": self.embedder.name(),
                "chunks": chunks.len(),
                "candidates": ranking.len(),
                "chunk_vectors_cached": cached,
                "pages_hint": hinted,
                "baseline": {"source": baseline_source, "center": baseline.center, "spread": baseline.spread},
                "threshold": decision.threshold,
                "kept_by_floor": decision.keep,
                "gap_cut": decision.gap_cut,
                "shown_chunks": shown,
                "reserve_chunks": in_reserve,
                "reason": decision.reason,
                "top": top,
            }),
        });
        let mut notes = vec![format!(
            "embedding floor ({baseline_source} {:.3} ± {:.3}): {}",
            baseline.center, baseline.spread, decision.reason
        )];
        if hinted {
            notes.push(format!("embedding search restricted to the chunks on pages {pages:?}"));
        }
        Ok(Retrieval { passages, reserve, methods_used, notes })
    }
}

/// The chunk's lines split where the page changes (passages never cross a
/// page); lines outside the document are dropped.
fn page_segments<'d>(document: &'d ParsedDocument, chunk: &Chunk) -> Vec<&'d [Line]> {
    let lines = document.line_range(chunk.line_start, chunk.line_end);
    lines.chunk_by(|a, b| a.page == b.page).collect()
}

fn query_words(queries: &[&str]) -> Vec<String> {
    let mut words: Vec<String> = queries
        .iter()
        .flat_map(|q| normalize(q).split(|c: char| !c.is_alphanumeric()).map(str::to_owned).collect::<Vec<_>>())
        .filter(|w| w.chars().count() >= 3)
        .collect();
    words.sort();
    words.dedup();
    words
}

/// A passage over `segment` (non-empty lines of one page). The anchor is the
/// line sharing the most query words (the first line when none does).
fn passage(segment: &[Line], score: f64, keywords: &[String], query_words: &[String]) -> Passage {
    let first = segment.first().map_or(0, |l| l.line_id);
    let last = segment.last().map_or(0, |l| l.line_id);
    let page = segment.first().map_or(0, |l| l.page);
    let mut anchor = (first, 0usize);
    for line in segment {
        let text = normalize(&line.text);
        let shared = query_words.iter().filter(|w| text.contains(w.as_str())).count();
        if shared > anchor.1 {
            anchor = (line.line_id, shared);
        }
    }
    let joined = normalize(&segment.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join(" "));
    let matched_keywords =
        keywords.iter().filter(|k| !k.trim().is_empty() && joined.contains(&normalize(k))).cloned().collect();
    Passage { line_start: first, line_end: last, page, score, anchor_line: anchor.0, matched_keywords, pinned: false }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use docintel_schema::{BBox, DocumentFormat, DocumentProfile, Keyword, NullSink, PageInfo};

    use super::*;

    const VOCABULARY: [&str; 40] = [
        "introduction",
        "password",
        "rotation",
        "policy",
        "requires",
        "changing",
        "passwords",
        "every",
        "ninety",
        "days",
        "exceptions",
        "weather",
        "forecast",
        "rain",
        "tomorrow",
        "football",
        "match",
        "score",
        "goal",
        "cooking",
        "recipe",
        "pasta",
        "tomato",
        "garden",
        "flowers",
        "spring",
        "roses",
        "train",
        "station",
        "platform",
        "delay",
        "music",
        "concert",
        "guitar",
        "drums",
        "mountain",
        "hiking",
        "trail",
        "summit",
        "painting",
    ];

    /// Bag of words over a fixed vocabulary (one dimension per word, other
    /// words ignored): texts sharing words are close, others orthogonal.
    struct BagOfWords {
        calls: Cell<usize>,
    }

    impl Embedder for BagOfWords {
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.calls.set(self.calls.get() + 1);
            Ok(texts
                .iter()
                .map(|t| {
                    let mut v = vec![0f32; VOCABULARY.len()];
                    for word in normalize(t).split(|c: char| !c.is_alphanumeric()) {
                        if let Some(i) = VOCABULARY.iter().position(|w| *w == word) {
                            v[i] += 1.0;
                        }
                    }
                    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-9);
                    v.iter().map(|x| x / n).collect()
                })
                .collect())
        }
        fn dimension(&self) -> usize {
            VOCABULARY.len()
        }
        fn name(&self) -> String {
            "bag-of-words".to_owned()
        }
    }

    fn document(pages: &[&[&str]]) -> ParsedDocument {
        let mut lines = Vec::new();
        for (p, page_lines) in pages.iter().enumerate() {
            for (i, text) in page_lines.iter().enumerate() {
                lines.push(Line {
                    line_id: lines.len() as u32 + 1,
                    page: p as u32 + 1,
                    line_in_page: i as u32 + 1,
                    text: (*text).to_owned(),
                    bbox: BBox::default(),
                });
            }
        }
        let profile = DocumentProfile {
            format: DocumentFormat::Txt,
            n_pages: Some(pages.len() as u32),
            has_toc: false,
            has_tables: false,
            languages: vec![],
            is_scanned: false,
            doc_type: None,
            typical_fields: vec![],
            summary: None,
        };
        let pages = (1..=pages.len() as u32).map(|p| PageInfo::from_text(p, 1, 1, 612.0, 792.0)).collect();
        ParsedDocument { source: "test.txt".into(), profile, lines, pages, toc: vec![], diagnostics: vec![] }
    }

    fn chunk(doc: &ParsedDocument, id: u32, start: u32, end: u32) -> Chunk {
        let lines = doc.line_range(start, end);
        Chunk {
            chunk_id: id,
            line_start: start,
            line_end: end,
            page_start: lines[0].page,
            page_end: lines[lines.len() - 1].page,
            text: lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join("\n"),
            context_header: String::new(),
            n_tokens_est: 10,
        }
    }

    const FILLER: [&str; 8] = [
        "weather forecast rain tomorrow",
        "football match score goal",
        "cooking recipe pasta tomato",
        "garden flowers spring roses",
        "train station platform delay",
        "music concert guitar drums",
        "mountain hiking trail summit",
        "painting museum canvas artist",
    ];

    fn fixture() -> (ParsedDocument, Vec<Chunk>) {
        // Page 1: the relevant text; pages 2-4: unrelated filler; a chunk
        // crossing pages 4-5 ends with a second relevant line.
        let doc = document(&[
            &["Introduction", "password rotation policy requires changing passwords every ninety days"],
            &FILLER[..3],
            &FILLER[3..6],
            &FILLER[6..],
            &["password rotation policy exceptions", "weather forecast rain tomorrow"],
        ]);
        let mut chunks = Vec::new();
        for (id, line) in (1..=doc.lines.len() as u32).enumerate() {
            chunks.push(chunk(&doc, id as u32, line, line));
        }
        let n = doc.lines.len() as u32;
        chunks.push(chunk(&doc, n, 10, 12));
        (doc, chunks)
    }

    fn question(text: &str) -> ParsedQuestion {
        let mut q = ParsedQuestion::unparsed(text, "test");
        q.retrieval.main_query = text.to_owned();
        q.keywords = vec![Keyword::direct("password")];
        q
    }

    #[test]
    fn nearest_chunk_first_and_unrelated_chunks_cut_by_the_floor() {
        let (doc, chunks) = fixture();
        let retriever = EmbeddingRetriever::new(BagOfWords { calls: Cell::new(0) }, EmbedConfig::STANDARD);
        let mut events = Vec::new();
        let r = retriever.retrieve(&question("password rotation policy"), &doc, &chunks, &mut events).expect("ok");
        // Line 11 (3 of its 4 words asked) first, then line 2, then the chunk
        // crossing pages 4-5 (one passage per page); the filler lines share
        // no word with the question and stay under the floor.
        let spans: Vec<(u32, u32)> = r.passages.iter().map(|p| (p.line_start, p.line_end)).collect();
        assert_eq!(spans, vec![(11, 11), (2, 2), (10, 10), (11, 12)], "{r:?}");
        assert!(r.passages[0].score > r.passages[1].score);
        assert!(r.passages.iter().all(|p| !p.pinned));
        assert_eq!(r.methods_used, vec!["embedding"]);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].step, "embedding_search");
        assert_eq!(r.passages[0].matched_keywords, vec!["password"]);
    }

    #[test]
    fn chunk_crossing_a_page_becomes_one_passage_per_page() {
        let (doc, chunks) = fixture();
        let retriever = EmbeddingRetriever::new(BagOfWords { calls: Cell::new(0) }, EmbedConfig::STANDARD);
        // Only the crossing chunk (lines 10-12, pages 4-5) is indexed.
        let r = retriever.retrieve(&question("password policy exceptions"), &doc, &chunks[12..], &mut NullSink);
        let r = r.expect("ok");
        let spans: Vec<(u32, u32, u32)> = r.passages.iter().map(|p| (p.page, p.line_start, p.line_end)).collect();
        assert_eq!(spans, vec![(4, 10, 10), (5, 11, 12)]);
        assert_eq!(r.passages[1].anchor_line, 11);
    }

    #[test]
    fn chunk_vectors_are_cached_per_document() {
        let (doc, chunks) = fixture();
        let retriever = EmbeddingRetriever::new(BagOfWords { calls: Cell::new(0) }, EmbedConfig::STANDARD);
        retriever.retrieve(&question("password"), &doc, &chunks, &mut NullSink).expect("ok");
        let mut events = Vec::new();
        retriever.retrieve(&question("garden roses"), &doc, &chunks, &mut events).expect("ok");
        // 1 chunk batch + 2 query batches.
        assert_eq!(retriever.embedder().calls.get(), 3);
        assert_eq!(events[0].detail["chunk_vectors_cached"], true);
    }

    #[test]
    fn pages_hint_restricts_the_chunks() {
        let (doc, chunks) = fixture();
        let retriever = EmbeddingRetriever::new(BagOfWords { calls: Cell::new(0) }, EmbedConfig::STANDARD);
        let mut q = question("password rotation policy");
        q.retrieval.pages = vec![3];
        let r = retriever.retrieve(&q, &doc, &chunks, &mut NullSink).expect("ok");
        assert!(!r.passages.is_empty());
        assert!(r.passages.iter().chain(&r.reserve).all(|p| p.page == 3), "{r:?}");
    }

    #[test]
    fn wrong_shaped_embedder_output_is_an_error_not_a_panic() {
        struct Broken;
        impl Embedder for Broken {
            fn embed(&self, _texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
                Ok(vec![vec![1.0; 3]])
            }
            fn dimension(&self) -> usize {
                3
            }
            fn name(&self) -> String {
                "broken".to_owned()
            }
        }
        let (doc, chunks) = fixture();
        let retriever = EmbeddingRetriever::new(Broken, EmbedConfig::STANDARD);
        let err = retriever.retrieve(&question("password"), &doc, &chunks, &mut NullSink).expect_err("shape");
        assert!(matches!(err, EmbedError::Shape(_)), "{err}");
    }

    #[test]
    fn no_chunks_gives_no_passages() {
        let (doc, _) = fixture();
        let retriever = EmbeddingRetriever::new(BagOfWords { calls: Cell::new(0) }, EmbedConfig::STANDARD);
        let r = retriever.retrieve(&question("password"), &doc, &[], &mut NullSink).expect("ok");
        assert!(r.passages.is_empty());
    }
}
