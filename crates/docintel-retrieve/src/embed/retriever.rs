//! [`EmbeddingRetriever`]: the document's chunks ranked by cosine similarity
//! to the question, floored against the unrelated-pair baseline, returned as
//! page-bounded passages.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use docintel_schema::text::normalize;
use docintel_schema::{Chunk, Line, ParsedDocument, ParsedQuestion, Passage, Retrieval, TraceEvent, TraceSink};
use serde_json::json;

use super::floor::{Baseline, FloorConfig, MINILM_UNRELATED, apply_floor};
use super::store::{self, Loaded, VectorKey};
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

/// Where a chunk set's vectors came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VectorSource {
    /// The retriever's in-memory cache (embedded earlier in this process).
    Memory,
    /// The vector file in the store directory (embedded by an earlier run).
    Disk,
    /// The embedder, just now.
    Computed,
}

impl VectorSource {
    /// `memory`, `disk` or `computed`: the trace's `chunk_vectors` value.
    pub fn as_str(self) -> &'static str {
        match self {
            VectorSource::Memory => "memory",
            VectorSource::Disk => "disk",
            VectorSource::Computed => "computed",
        }
    }
}

/// The vectors of a chunk set (one per chunk, in order) and where they came
/// from.
#[derive(Debug, Clone)]
pub struct ChunkVectors {
    /// One unit vector per chunk.
    pub vectors: Arc<Vec<Vec<f32>>>,
    /// Memory, disk or the embedder.
    pub source: VectorSource,
    /// The vector file of this chunk set when a store directory was given
    /// (read, written, or — on a memory hit — left alone).
    pub file: Option<PathBuf>,
    /// Problems with the file, each naming it: a damaged file that was
    /// recomputed and overwritten, or a file that could not be written (the
    /// vectors then live in memory only).
    pub problems: Vec<String>,
}

/// What an embedding search looks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EmbedQuery<'a> {
    /// The query texts (main query, then rewrites); a chunk scores its best
    /// cosine to any of them.
    pub texts: Vec<&'a str>,
    /// Keywords: only reported in `matched_keywords` and used to pick the
    /// anchor line.
    pub keywords: Vec<String>,
    /// Page hint: restricts the chunks when any chunk is on these pages.
    pub pages: Vec<u32>,
}

/// Ranks a document's chunks by embedding similarity to the question.
///
/// Chunk vectors are cached in memory per chunk set (keyed by a SHA-256 of
/// the embedder name, its dimension and every chunk's embedding input), so
/// several questions on one document embed its chunks once. Given a store
/// directory, they are also kept on disk under the same key (`<key>.f32`,
/// see `store.rs`), so a later process reads them instead of embedding again.
pub struct EmbeddingRetriever<E: Embedder> {
    embedder: E,
    config: EmbedConfig,
    cache: Mutex<HashMap<VectorKey, Arc<Vec<Vec<f32>>>>>,
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

    /// The vectors of `chunks` (one per chunk, in order): from memory when
    /// this process embedded these chunks before, else from the vector file
    /// in `store` (a directory; `None` keeps them in memory only) when it is
    /// there and well-formed, else from the embedder — then written to
    /// `store`. A damaged file is recomputed and overwritten, and a file
    /// that cannot be written leaves the vectors in memory; both are
    /// reported in [`ChunkVectors::problems`], never as an error.
    pub fn chunk_vectors(&self, chunks: &[Chunk], store: Option<&Path>) -> Result<ChunkVectors, EmbedError> {
        let inputs: Vec<String> = chunks.iter().map(chunk_input).collect();
        let dimension = self.embedder.dimension();
        let key = VectorKey::new(&self.embedder.name(), dimension, &inputs);
        let file = store.map(|dir| key.file_in(dir));
        let found = |vectors, source, problems| ChunkVectors { vectors, source, file: file.clone(), problems };
        if let Some(hit) = self.cache.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
            return Ok(found(Arc::clone(hit), VectorSource::Memory, Vec::new()));
        }
        let mut problems = Vec::new();
        if let Some(path) = &file {
            match store::read(path, &key, dimension, chunks.len()) {
                Loaded::Vectors(vectors) => {
                    return Ok(found(self.remember(key, vectors), VectorSource::Disk, problems));
                }
                Loaded::Missing => {}
                Loaded::Invalid(reason) => problems.push(format!("chunk vectors recomputed: {reason}")),
            }
        }
        let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        let vectors = self.embedder.embed(&refs)?;
        self.check_shape(&vectors, chunks.len())?;
        if let Some(path) = &file
            && let Err(reason) = store::write(path, &key, dimension, &vectors)
        {
            problems.push(format!("chunk vectors kept in memory only: {reason}"));
        }
        Ok(found(self.remember(key, vectors), VectorSource::Computed, problems))
    }

    fn remember(&self, key: VectorKey, vectors: Vec<Vec<f32>>) -> Arc<Vec<Vec<f32>>> {
        let vectors = Arc::new(vectors);
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if cache.len() >= CACHE_DOCUMENTS {
            cache.clear();
        }
        cache.insert(key, Arc::clone(&vectors));
        vectors
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
    /// in the question restrict the chunks when any chunk is on them. The
    /// chunk vectors come from memory, the `store` directory or the embedder
    /// (see [`chunk_vectors`](Self::chunk_vectors)).
    pub fn retrieve(
        &self,
        question: &ParsedQuestion,
        document: &ParsedDocument,
        chunks: &[Chunk],
        store: Option<&Path>,
        trace: &mut dyn TraceSink,
    ) -> Result<Retrieval, EmbedError> {
        let main = if question.retrieval.main_query.trim().is_empty() {
            question.corrected_question.as_str()
        } else {
            question.retrieval.main_query.as_str()
        };
        let mut texts = vec![main];
        texts.extend(question.retrieval.rewrites.iter().map(String::as_str).filter(|r| !r.trim().is_empty()));
        let query = EmbedQuery {
            texts,
            keywords: question.plain_keywords().map(|k| k.text.clone()).collect(),
            pages: question.retrieval.pages.clone(),
        };
        self.retrieve_queries(&query, document, chunks, store, trace)
    }

    /// [`retrieve`](Self::retrieve) with the query texts, keywords and page
    /// hint given directly.
    pub fn retrieve_queries(
        &self,
        query: &EmbedQuery<'_>,
        document: &ParsedDocument,
        chunks: &[Chunk],
        store: Option<&Path>,
        trace: &mut dyn TraceSink,
    ) -> Result<Retrieval, EmbedError> {
        let EmbedQuery { texts: queries, keywords, pages } = query;
        let methods_used = vec!["embedding".to_owned()];
        if chunks.is_empty() || queries.is_empty() {
            let note = "embedding search skipped: no chunks or no query".to_owned();
            return Ok(Retrieval { passages: Vec::new(), reserve: Vec::new(), methods_used, notes: vec![note] });
        }
        let chunk_vectors = self.chunk_vectors(chunks, store)?;
        let vectors = &chunk_vectors.vectors;
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
                "chunk_vectors": chunk_vectors.source.as_str(),
                "chunk_vectors_file": chunk_vectors.file.as_ref().map(|f| f.display().to_string()),
                "chunk_vectors_problems": chunk_vectors.problems,
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
        let mut notes = chunk_vectors.problems.clone();
        notes.push(format!(
            "embedding floor ({baseline_source} {:.3} ± {:.3}): {}",
            baseline.center, baseline.spread, decision.reason
        ));
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

    use docintel_schema::{Keyword, NullSink};
    use docintel_test_support::{pages, temp_dir};

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
        name: &'static str,
    }

    impl BagOfWords {
        fn new() -> BagOfWords {
            BagOfWords::named("bag-of-words")
        }

        fn named(name: &'static str) -> BagOfWords {
            BagOfWords { calls: Cell::new(0), name }
        }
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
            self.name.to_owned()
        }
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
        let doc = pages(&[
            &["Introduction", "password rotation policy requires changing passwords every ninety days"],
            &FILLER[..3],
            &FILLER[3..6],
            &FILLER[6..],
            &["password rotation policy exceptions", "weather forecast rain tomorrow"],
        ])
        .build();
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
        let retriever = EmbeddingRetriever::new(BagOfWords::new(), EmbedConfig::STANDARD);
        let mut events = Vec::new();
        let r =
            retriever.retrieve(&question("password rotation policy"), &doc, &chunks, None, &mut events).expect("ok");
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
        let retriever = EmbeddingRetriever::new(BagOfWords::new(), EmbedConfig::STANDARD);
        // Only the crossing chunk (lines 10-12, pages 4-5) is indexed.
        let r = retriever.retrieve(&question("password policy exceptions"), &doc, &chunks[12..], None, &mut NullSink);
        let r = r.expect("ok");
        let spans: Vec<(u32, u32, u32)> = r.passages.iter().map(|p| (p.page, p.line_start, p.line_end)).collect();
        assert_eq!(spans, vec![(4, 10, 10), (5, 11, 12)]);
        assert_eq!(r.passages[1].anchor_line, 11);
    }

    #[test]
    fn chunk_vectors_are_cached_per_document() {
        let (doc, chunks) = fixture();
        let retriever = EmbeddingRetriever::new(BagOfWords::new(), EmbedConfig::STANDARD);
        retriever.retrieve(&question("password"), &doc, &chunks, None, &mut NullSink).expect("ok");
        let mut events = Vec::new();
        retriever.retrieve(&question("garden roses"), &doc, &chunks, None, &mut events).expect("ok");
        // 1 chunk batch + 2 query batches.
        assert_eq!(retriever.embedder().calls.get(), 3);
        assert_eq!(events[0].detail["chunk_vectors"], "memory");
        assert_eq!(events[0].detail["chunk_vectors_file"], serde_json::Value::Null);
    }

    #[test]
    fn pages_hint_restricts_the_chunks() {
        let (doc, chunks) = fixture();
        let retriever = EmbeddingRetriever::new(BagOfWords::new(), EmbedConfig::STANDARD);
        let mut q = question("password rotation policy");
        q.retrieval.pages = vec![3];
        let r = retriever.retrieve(&q, &doc, &chunks, None, &mut NullSink).expect("ok");
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
        let err = retriever.retrieve(&question("password"), &doc, &chunks, None, &mut NullSink).expect_err("shape");
        assert!(matches!(err, EmbedError::Shape(_)), "{err}");
    }

    /// Every entry of `dir`, sorted (temporary files included, to catch
    /// leftovers).
    fn entries(dir: &Path) -> Vec<PathBuf> {
        let mut entries: Vec<PathBuf> =
            std::fs::read_dir(dir).expect("store directory").map(|e| e.expect("entry").path()).collect();
        entries.sort();
        entries
    }

    /// One question on a fresh retriever over `embedder` with `store`:
    /// the retrieval, the embedding_search event and the embedder calls.
    fn ask_fresh(embedder: BagOfWords, store: &Path) -> (Retrieval, TraceEvent, usize) {
        let (doc, chunks) = fixture();
        let retriever = EmbeddingRetriever::new(embedder, EmbedConfig::STANDARD);
        let mut events = Vec::new();
        let r = retriever
            .retrieve(&question("password rotation policy"), &doc, &chunks, Some(store), &mut events)
            .expect("retrieves");
        assert_eq!(events.len(), 1);
        (r, events.remove(0), retriever.embedder().calls.get())
    }

    #[test]
    fn second_retriever_reads_the_chunk_vectors_from_disk_without_embedding_them() {
        let tmp = temp_dir("embed-reuse");
        let store = tmp.path().join("doc").join("embeddings");
        let (first, event, calls) = ask_fresh(BagOfWords::new(), &store);
        // 1 chunk batch + 1 query batch.
        assert_eq!(calls, 2);
        assert_eq!(event.detail["chunk_vectors"], "computed");
        let files = entries(&store);
        assert_eq!(files.len(), 1, "one vector file, no temporary left: {files:?}");
        assert_eq!(event.detail["chunk_vectors_file"], files[0].display().to_string());
        assert_eq!(files[0].extension().and_then(|e| e.to_str()), Some(store::EXTENSION));
        let (_, chunks) = fixture();
        let size = std::fs::metadata(&files[0]).expect("file").len() as usize;
        assert_eq!(size, 64 + chunks.len() * VOCABULARY.len() * 4);

        let (second, event, calls) = ask_fresh(BagOfWords::new(), &store);
        // Only the question is embedded: the chunk vectors came from the file.
        assert_eq!(calls, 1);
        assert_eq!(event.detail["chunk_vectors"], "disk");
        assert_eq!(event.detail["chunk_vectors_problems"], json!([]));
        assert_eq!(second, first);
    }

    #[test]
    fn damaged_vector_file_is_recomputed_and_overwritten_without_panic() {
        let tmp = temp_dir("embed-damaged");
        let store = tmp.path().join("embeddings");
        let (good, _, _) = ask_fresh(BagOfWords::new(), &store);
        let path = entries(&store).remove(0);
        let original = std::fs::read(&path).expect("vector file");
        let (_, chunks) = fixture();
        let inputs: Vec<String> = chunks.iter().map(chunk_input).collect();
        let key = VectorKey::new("bag-of-words", VOCABULARY.len(), &inputs);
        let damages: [(&str, &dyn Fn()); 4] = [
            ("truncated", &|| std::fs::write(&path, &original[..original.len() / 2]).expect("write")),
            ("bad magic", &|| std::fs::write(&path, "not vectors at all, just some text. ".repeat(4)).expect("write")),
            ("checksum", &|| {
                let mut bytes = original.clone();
                let last = bytes.len() - 1;
                bytes[last] ^= 0x40;
                std::fs::write(&path, bytes).expect("write")
            }),
            ("dimension 3, expected 40", &|| {
                store::write(&path, &key, 3, &vec![vec![0.6, 0.8, 0.0]; chunks.len()]).expect("write")
            }),
        ];
        for (reason, damage) in damages {
            damage();
            let (r, event, calls) = ask_fresh(BagOfWords::new(), &store);
            assert_eq!(calls, 2, "{reason}: the chunks were embedded again");
            assert_eq!(event.detail["chunk_vectors"], "computed", "{reason}");
            let problem = event.detail["chunk_vectors_problems"][0].as_str().unwrap_or_default().to_owned();
            assert!(problem.contains(&path.display().to_string()) && problem.contains(reason), "{problem}");
            assert!(r.notes.contains(&problem), "{reason}: {:?}", r.notes);
            assert_eq!(r.passages, good.passages, "{reason}");
            assert_eq!(std::fs::read(&path).expect("rewritten"), original, "{reason}: the file was overwritten");
            let (_, event, calls) = ask_fresh(BagOfWords::new(), &store);
            assert_eq!((calls, event.detail["chunk_vectors"].as_str()), (1, Some("disk")), "{reason}");
        }
    }

    #[test]
    fn another_embedder_name_does_not_reuse_the_file() {
        let tmp = temp_dir("embed-other-embedder");
        let store = tmp.path().join("embeddings");
        ask_fresh(BagOfWords::new(), &store);
        let (_, event, calls) = ask_fresh(BagOfWords::named("bag-of-words/2"), &store);
        assert_eq!(calls, 2);
        assert_eq!(event.detail["chunk_vectors"], "computed");
        assert_eq!(event.detail["chunk_vectors_problems"], json!([]));
        assert_eq!(entries(&store).len(), 2, "one file per embedder");
    }

    #[test]
    fn unwritable_store_keeps_the_vectors_in_memory_with_a_note() {
        let tmp = temp_dir("embed-unwritable");
        // A directory cannot be created under a plain file (root included).
        let blocker = tmp.path().join("out");
        std::fs::write(&blocker, "a file, not a folder").expect("write");
        let store = blocker.join("embeddings");
        let (doc, chunks) = fixture();
        let retriever = EmbeddingRetriever::new(BagOfWords::new(), EmbedConfig::STANDARD);
        let mut events = Vec::new();
        let r = retriever.retrieve(&question("password"), &doc, &chunks, Some(&store), &mut events).expect("answers");
        assert!(!r.passages.is_empty());
        let note = &r.notes[0];
        assert!(
            note.starts_with("chunk vectors kept in memory only") && note.contains(&store.display().to_string()),
            "{note}"
        );
        assert_eq!(events[0].detail["chunk_vectors"], "computed");
        retriever.retrieve(&question("garden"), &doc, &chunks, Some(&store), &mut events).expect("answers");
        assert_eq!(events[1].detail["chunk_vectors"], "memory");
        assert_eq!(retriever.embedder().calls.get(), 3);
    }

    #[test]
    fn no_chunks_gives_no_passages() {
        let (doc, _) = fixture();
        let retriever = EmbeddingRetriever::new(BagOfWords::new(), EmbedConfig::STANDARD);
        let r = retriever.retrieve(&question("password"), &doc, &[], None, &mut NullSink).expect("ok");
        assert!(r.passages.is_empty());
    }
}
