//! Embedding retrieval fused with the keyword ranking (feature `embeddings`):
//! all-MiniLM-L6-v2 through candle over the document's chunks, then
//! reciprocal-rank fusion with the keyword passages (identifier pins survive
//! fusion: see `docintel_retrieve::embed::fusion`).
//!
//! The model is loaded once per process and directory; chunk vectors are
//! cached in memory per document by the embedding retriever and, when the
//! caller gives an output folder, on disk in `<out>/<document>/embeddings/`
//! (one `<key>.f32` per embedder and chunk set), so the next process reads
//! them instead of embedding the whole document again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use docintel_parse::{ChunkConfig, chunk_document};
use docintel_retrieve::embed::{EmbedConfig, EmbeddingRetriever, FusionConfig, MiniLmEmbedder, fuse_rrf};
use docintel_schema::{ParsedDocument, ParsedQuestion, Retrieval, TraceSink};

/// Chunks embedded: what `cargo xtask eval-embeddings` measures by default.
const CHUNKS: ChunkConfig = ChunkConfig { max_tokens: 200, overlap_tokens: 25 };

type Shared = Arc<EmbeddingRetriever<MiniLmEmbedder>>;

fn retriever_for(dir: &Path, top_k: usize) -> Result<Shared, String> {
    static LOADED: OnceLock<Mutex<HashMap<PathBuf, Shared>>> = OnceLock::new();
    let mut loaded = LOADED.get_or_init(Default::default).lock().map_err(|_| "embedding model cache poisoned")?;
    if let Some(retriever) = loaded.get(dir) {
        return Ok(retriever.clone());
    }
    let embedder = MiniLmEmbedder::from_dir(dir).map_err(|e| {
        format!(
            "{}: cannot load the embedding model ({e}); fetch it with `cargo xtask fetch-model minilm`",
            dir.display()
        )
    })?;
    let retriever = Arc::new(EmbeddingRetriever::new(embedder, EmbedConfig { top_k, ..EmbedConfig::STANDARD }));
    loaded.insert(dir.to_owned(), retriever.clone());
    Ok(retriever)
}

/// The folder of `document`'s vector files under the output folder `out`:
/// `<out>/<document key>/embeddings` (next to its question traces).
pub(crate) fn store_dir(out: &Path, document: &ParsedDocument) -> PathBuf {
    docintel_trace::document_dir(out, &crate::record::document_key_of(Path::new(&document.source)).0).join("embeddings")
}

/// The keyword retrieval fused with an embedding retrieval over `document`.
/// `store` is the folder of the document's vector files (`None`: memory
/// only).
pub(crate) fn fuse(
    dir: &Path,
    question: &ParsedQuestion,
    document: &ParsedDocument,
    keyword: &Retrieval,
    top_k: usize,
    store: Option<&Path>,
    trace: &mut dyn TraceSink,
) -> Result<Retrieval, String> {
    let retriever = retriever_for(dir, top_k)?;
    let chunks = chunk_document(document, &CHUNKS);
    let embedding = retriever.retrieve(question, document, &chunks, store, trace).map_err(|e| e.to_string())?;
    Ok(fuse_rrf(keyword, &embedding, FusionConfig { top_k, ..FusionConfig::STANDARD }))
}
