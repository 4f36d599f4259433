//! all-MiniLM-L6-v2 through candle: BERT forward pass, mean pooling over the
//! attention mask, L2 normalisation — the sentence-transformers recipe for
//! this model, checked against an independent reference in `tests/embed.rs`.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::{EmbedError, Embedder};

/// Tokens per text when `sentence_bert_config.json` does not say
/// (sentence-transformers' `max_seq_length` for all-MiniLM-L6-v2).
pub const DEFAULT_MAX_SEQ_LENGTH: usize = 256;

/// Texts per forward pass.
const BATCH: usize = 16;

/// all-MiniLM-L6-v2 (or any BERT sentence encoder with mean pooling) loaded
/// from a directory.
pub struct MiniLmEmbedder {
    model: BertModel,
    tokenizer: Tokenizer,
    dimension: usize,
    max_seq_length: usize,
    dir: PathBuf,
}

impl std::fmt::Debug for MiniLmEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLmEmbedder")
            .field("dir", &self.dir)
            .field("dimension", &self.dimension)
            .field("max_seq_length", &self.max_seq_length)
            .finish()
    }
}

fn read(path: &Path) -> Result<Vec<u8>, EmbedError> {
    std::fs::read(path).map_err(|source| EmbedError::Io { path: path.to_owned(), source })
}

fn bad(path: &Path, reason: impl std::fmt::Display) -> EmbedError {
    EmbedError::BadModelFile { path: path.to_owned(), reason: reason.to_string() }
}

fn inference(error: candle_core::Error) -> EmbedError {
    EmbedError::Inference(error.to_string())
}

impl MiniLmEmbedder {
    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` from
    /// `dir` (and `max_seq_length` from `sentence_bert_config.json` when
    /// present, else [`DEFAULT_MAX_SEQ_LENGTH`]). Runs on the CPU.
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<MiniLmEmbedder, EmbedError> {
        let dir = dir.as_ref();
        let config_path = dir.join("config.json");
        let config: Config = serde_json::from_slice(&read(&config_path)?).map_err(|e| bad(&config_path, e))?;

        let st_path = dir.join("sentence_bert_config.json");
        let max_seq_length = match std::fs::read(&st_path) {
            Ok(bytes) => serde_json::from_slice::<serde_json::Value>(&bytes)
                .map_err(|e| bad(&st_path, e))?
                .get("max_seq_length")
                .and_then(serde_json::Value::as_u64)
                .map_or(DEFAULT_MAX_SEQ_LENGTH, |n| n as usize),
            Err(_) => DEFAULT_MAX_SEQ_LENGTH,
        }
        .clamp(2, config.max_position_embeddings);

        let tokenizer_path = dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_bytes(read(&tokenizer_path)?).map_err(|e| bad(&tokenizer_path, e))?;
        // The shipped tokenizer.json pads and truncates to a fixed 128; do
        // what sentence-transformers does instead: pad to the longest text of
        // the batch, truncate at max_seq_length.
        let pad_id = u32::try_from(config.pad_token_id).map_err(|e| bad(&config_path, e))?;
        let pad_token = tokenizer.id_to_token(pad_id).unwrap_or_else(|| "[PAD]".to_owned());
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            pad_id,
            pad_token,
            ..PaddingParams::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: max_seq_length, ..TruncationParams::default() }))
            .map_err(|e| bad(&tokenizer_path, e))?;

        let weights_path = dir.join("model.safetensors");
        let vb = VarBuilder::from_buffered_safetensors(read(&weights_path)?, DType::F32, &Device::Cpu)
            .map_err(|e| bad(&weights_path, e))?;
        let model = BertModel::load(vb, &config).map_err(|e| bad(&weights_path, e))?;
        Ok(MiniLmEmbedder { model, tokenizer, dimension: config.hidden_size, max_seq_length, dir: dir.to_owned() })
    }

    /// Tokens per text (longer texts are truncated).
    pub fn max_seq_length(&self) -> usize {
        self.max_seq_length
    }

    /// Number of tokens of `text` after truncation, special tokens included.
    pub fn token_count(&self, text: &str) -> Result<usize, EmbedError> {
        let mut encoding = self.tokenizer.encode(text, true).map_err(|e| EmbedError::Tokenize(e.to_string()))?;
        // Single-text padding is a no-op with BatchLongest.
        encoding.truncate(self.max_seq_length, 0, tokenizers::TruncationDirection::Right);
        Ok(encoding.get_attention_mask().iter().filter(|&&m| m == 1).count())
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encodings =
            self.tokenizer.encode_batch(texts.to_vec(), true).map_err(|e| EmbedError::Tokenize(e.to_string()))?;
        let n = encodings.len();
        let width = encodings.first().map_or(0, |e| e.get_ids().len());
        if n == 0 || width == 0 {
            return Ok(vec![vec![0.0; self.dimension]; n]);
        }
        let mut ids = Vec::with_capacity(n * width);
        let mut types = Vec::with_capacity(n * width);
        let mut mask = Vec::with_capacity(n * width);
        for encoding in &encodings {
            if encoding.get_ids().len() != width {
                return Err(EmbedError::Tokenize("padding produced rows of different lengths".to_owned()));
            }
            ids.extend_from_slice(encoding.get_ids());
            types.extend_from_slice(encoding.get_type_ids());
            mask.extend_from_slice(encoding.get_attention_mask());
        }
        let device = &self.model.device;
        let ids = Tensor::from_vec(ids, (n, width), device).map_err(inference)?;
        let types = Tensor::from_vec(types, (n, width), device).map_err(inference)?;
        let mask = Tensor::from_vec(mask, (n, width), device).map_err(inference)?;
        let hidden = self.model.forward(&ids, &types, Some(&mask)).map_err(inference)?;
        // Mean over the real tokens: sum(h * mask) / sum(mask).
        let mask = mask.to_dtype(DType::F32).and_then(|m| m.unsqueeze(2)).map_err(inference)?;
        let summed = hidden.broadcast_mul(&mask).and_then(|h| h.sum(1)).map_err(inference)?;
        let counts = mask.sum(1).and_then(|c| c.clamp(1e-9f32, f32::MAX)).map_err(inference)?;
        let pooled = summed.broadcast_div(&counts).map_err(inference)?;
        let mut rows: Vec<Vec<f32>> = pooled.to_vec2().map_err(inference)?;
        for row in &mut rows {
            let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 1e-12 {
                row.iter_mut().for_each(|x| *x /= norm);
            }
        }
        Ok(rows)
    }
}

impl Embedder for MiniLmEmbedder {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        // Batch texts of similar length together (less padding), then put
        // the vectors back in input order.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| (texts[i].len(), i));
        let mut out = vec![Vec::new(); texts.len()];
        for group in order.chunks(BATCH) {
            let batch: Vec<&str> = group.iter().map(|&i| texts[i]).collect();
            let vectors = self.embed_batch(&batch)?;
            if vectors.len() != group.len() {
                return Err(EmbedError::Shape(format!("{} vectors for {} texts", vectors.len(), group.len())));
            }
            for (&i, vector) in group.iter().zip(vectors) {
                out[i] = vector;
            }
        }
        Ok(out)
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn name(&self) -> String {
        format!("all-MiniLM-L6-v2/candle-0.11 (max {} tokens)", self.max_seq_length)
    }
}
