//! Embedding retrieval (cargo feature `embeddings`): chunks ranked by cosine
//! similarity of sentence embeddings, a relevance floor judged against the
//! unrelated-pair baseline, and reciprocal-rank fusion with the keyword
//! retriever.
//!
//! - [`Embedder`]: texts in, L2-normalised vectors out. [`MiniLmEmbedder`] runs
//!   all-MiniLM-L6-v2 offline through candle (BERT, mean pooling over the
//!   attention mask, L2 normalisation: what sentence-transformers returns),
//!   from a directory holding `config.json`, `tokenizer.json` and
//!   `model.safetensors` (`cargo xtask fetch-model minilm` installs them).
//! - [`EmbeddingRetriever`]: ranks the document's chunks (the facade passes
//!   them in, from the parse brick's `chunk_document`), caches their vectors
//!   per chunk set in memory and, given a store directory, on disk (one
//!   `<key>.f32` file per chunk set, `store.rs`), returns the same
//!   [`Retrieval`](docintel_schema::Retrieval) the keyword retriever returns
//!   (passages never cross a page).
//! - [`apply_floor`]: fewer passages rather than padding; the nearest is
//!   always kept.
//! - [`fuse_rrf`]: hybrid ranking; pinned passages stay on top.

mod floor;
mod fusion;
mod minilm;
mod retriever;
mod store;

pub use floor::{Baseline, FloorConfig, FloorDecision, MIN_BACKGROUND, MINILM_UNRELATED, apply_floor};
pub use fusion::{FusionConfig, fuse_rrf};
pub use minilm::{DEFAULT_MAX_SEQ_LENGTH, MiniLmEmbedder};
pub use retriever::{ChunkVectors, EmbedConfig, EmbedQuery, EmbeddingRetriever, VectorSource};

use std::fmt;
use std::path::PathBuf;

/// Turns texts into unit-length vectors, one per text, in order.
pub trait Embedder {
    /// Embeds `texts`; every vector has [`Embedder::dimension`] values and
    /// L2 norm 1 (a zero vector only for a text with no tokens).
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// Length of the vectors.
    fn dimension(&self) -> usize;
    /// Name and version for the audit trail and the cache key.
    fn name(&self) -> String;
}

/// What can go wrong while loading or running an embedding model.
#[derive(Debug)]
pub enum EmbedError {
    /// A model file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A model file is not what the loader expects.
    BadModelFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The tokenizer failed on the input.
    Tokenize(String),
    /// The model failed to run.
    Inference(String),
    /// The embedder returned a different number of vectors than texts, or
    /// vectors of the wrong length.
    Shape(String),
}

impl fmt::Display for EmbedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmbedError::Io { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            EmbedError::BadModelFile { path, reason } => write!(f, "bad model file {}: {reason}", path.display()),
            EmbedError::Tokenize(reason) => write!(f, "tokenizer failed: {reason}"),
            EmbedError::Inference(reason) => write!(f, "embedding model failed: {reason}"),
            EmbedError::Shape(reason) => write!(f, "embedder returned the wrong shape: {reason}"),
        }
    }
}

impl std::error::Error for EmbedError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EmbedError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Cosine similarity of two vectors (0 when either is zero or lengths differ).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 { 0.0 } else { dot / (na.sqrt() * nb.sqrt()) }
}
