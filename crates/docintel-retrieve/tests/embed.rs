//! Embedding retrieval with the real all-MiniLM-L6-v2 (feature `embeddings`).
//!
//! Model tests need the model directory (`cargo xtask fetch-model minilm`
//! installs it in `target/models/all-minilm-l6-v2`; `DOCINTEL_EMBED_MODEL_DIR`
//! points elsewhere). They are `#[ignore]`d, so `cargo test` lists them as
//! ignored instead of passing without checking anything; run them with
//! `cargo test -p docintel-retrieve --features embeddings -- --include-ignored`,
//! where a missing model fails them. The reference vectors in
//! `tests/data/minilm_reference.json` were produced once by
//! `tests/data/minilm_reference.py` (a numpy re-implementation of the
//! sentence-transformers pipeline, independent of candle; see its header).
//! Tests that need no model always run.

#![cfg(feature = "embeddings")]

use std::sync::OnceLock;

use docintel_retrieve::embed::{
    Baseline, EmbedConfig, EmbedError, Embedder, EmbeddingRetriever, FloorConfig, FusionConfig, MINILM_UNRELATED,
    MiniLmEmbedder, apply_floor, cosine, fuse_rrf,
};
use docintel_schema::{Chunk, Line, ParsedDocument, ParsedQuestion, Passage, Retrieval};
use docintel_test_support::{minilm_dir, pages, temp_dir};

/// The model, loaded once for all tests. Its absence fails the test that
/// asked for it: a model test never passes without the model.
fn model() -> &'static MiniLmEmbedder {
    static MODEL: OnceLock<MiniLmEmbedder> = OnceLock::new();
    MODEL.get_or_init(|| {
        let dir = minilm_dir();
        assert!(
            dir.join("model.safetensors").is_file(),
            "no all-MiniLM-L6-v2 in {} (run `cargo xtask fetch-model minilm` or set DOCINTEL_EMBED_MODEL_DIR)",
            dir.display()
        );
        MiniLmEmbedder::from_dir(&dir).expect("the installed model loads")
    })
}

#[test]
#[ignore = "needs all-MiniLM-L6-v2 (cargo xtask fetch-model minilm); run with --include-ignored"]
fn matches_the_independent_reference_vectors() {
    let model = model();
    let reference: serde_json::Value =
        serde_json::from_str(include_str!("data/minilm_reference.json")).expect("reference JSON");
    let sentences = reference["sentences"].as_array().expect("sentences");
    assert_eq!(sentences.len(), 3);
    let texts: Vec<&str> = sentences.iter().map(|s| s["text"].as_str().expect("text")).collect();
    let vectors = model.embed(&texts).expect("embeds");
    for (sentence, vector) in sentences.iter().zip(&vectors) {
        let expected: Vec<f32> = sentence["embedding"]
            .as_array()
            .expect("embedding")
            .iter()
            .map(|v| v.as_f64().unwrap_or(0.0) as f32)
            .collect();
        assert_eq!(vector.len(), 384);
        let similarity = cosine(vector, &expected);
        assert!(similarity >= 0.999, "{}: cosine {similarity}", sentence["text"]);
        let max_diff = vector.iter().zip(&expected).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
        assert!(max_diff < 1e-4, "{}: max difference {max_diff}", sentence["text"]);
        let n_ids = sentence["token_ids"].as_array().expect("ids").len();
        assert_eq!(model.token_count(sentence["text"].as_str().expect("text")).expect("tokens"), n_ids);
    }
}

#[test]
#[ignore = "needs all-MiniLM-L6-v2 (cargo xtask fetch-model minilm); run with --include-ignored"]
fn batching_and_padding_do_not_change_vectors() {
    let model = model();
    let texts = [
        "short",
        "A considerably longer sentence about the audit of account management events in the system.",
        "Medium length text on access control.",
    ];
    let batched = model.embed(&texts).expect("embeds");
    for (text, vector) in texts.iter().zip(&batched) {
        let alone = model.embed(&[text]).expect("embeds");
        assert!(cosine(vector, &alone[0]) > 0.99999, "{text}");
        let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{text}: norm {norm}");
    }
}

#[test]
#[ignore = "needs all-MiniLM-L6-v2 (cargo xtask fetch-model minilm); run with --include-ignored"]
fn long_text_is_truncated_not_refused() {
    let model = model();
    let long = "security control baseline ".repeat(400);
    assert_eq!(model.token_count(&long).expect("tokens"), model.max_seq_length());
    let vectors = model.embed(&[long.as_str(), ""]).expect("embeds");
    assert_eq!(vectors.len(), 2);
    assert!(vectors.iter().all(|v| v.len() == 384 && v.iter().all(|x| x.is_finite())));
}

/// Query / passage pairs on unrelated topics.
const UNRELATED: [(&str, &str); 8] = [
    ("How often must passwords be changed?", "The recipe calls for two cups of flour and a pinch of salt."),
    ("What is the invoice total?", "Migrating birds follow the coastline during autumn."),
    ("Who is responsible for incident response?", "The football match ended in a draw after extra time."),
    ("When does the lease expire?", "Photosynthesis converts light energy into chemical energy."),
    ("Which encryption algorithm is required?", "The orchestra rehearsed the symphony for three weeks."),
    ("What is the deductible for water damage?", "Volcanic eruptions can change the local climate for years."),
    ("How many vacation days do employees get?", "The telescope observed a distant galaxy cluster."),
    ("What are the audit logging requirements?", "Fresh basil should be added at the end of cooking."),
];

#[test]
#[ignore = "needs all-MiniLM-L6-v2 (cargo xtask fetch-model minilm); run with --include-ignored"]
fn unrelated_pairs_sit_near_the_fixed_baseline() {
    let model = model();
    let sims: Vec<f32> = UNRELATED
        .iter()
        .map(|(q, p)| {
            let v = model.embed(&[q, p]).expect("embeds");
            cosine(&v[0], &v[1])
        })
        .collect();
    let mean = sims.iter().sum::<f32>() / sims.len() as f32;
    let sd = (sims.iter().map(|s| (s - mean).powi(2)).sum::<f32>() / sims.len() as f32).sqrt();
    eprintln!("unrelated pairs: mean {mean:.3}, sd {sd:.3}, values {sims:.3?}");
    // The fixed baseline was measured here; every unrelated pair stays under
    // its floor.
    assert!((mean - MINILM_UNRELATED.center).abs() < 0.03, "mean {mean}");
    let floor = MINILM_UNRELATED.center + FloorConfig::STANDARD.margin_spreads * MINILM_UNRELATED.spread;
    assert!(sims.iter().all(|&s| s < floor), "{sims:?} vs floor {floor}");
    // A related pair clears it.
    let v = model
        .embed(&["How often must passwords be changed?", "Users shall change their passwords every 90 days."])
        .expect("embeds");
    assert!(cosine(&v[0], &v[1]) > floor + 0.1, "related pair {}", cosine(&v[0], &v[1]));
}

/// One chunk per page.
fn page_chunks(doc: &ParsedDocument) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    for page in 1..=doc.pages.len() as u32 {
        let lines: Vec<&Line> = doc.lines.iter().filter(|l| l.page == page).collect();
        let (Some(first), Some(last)) = (lines.first(), lines.last()) else { continue };
        chunks.push(Chunk {
            chunk_id: chunks.len() as u32,
            line_start: first.line_id,
            line_end: last.line_id,
            page_start: page,
            page_end: page,
            text: lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join("\n"),
            context_header: "Company handbook".to_owned(),
            n_tokens_est: 30,
        });
    }
    chunks
}

const HANDBOOK: [&[&str]; 6] = [
    &["Holidays", "Employees receive twenty-five days of paid vacation per calendar year."],
    &[
        "Passwords",
        "Users shall change their login credentials every ninety days.",
        "Reuse of the last five is barred.",
    ],
    &["Travel", "Economy class is booked for flights shorter than six hours."],
    &["Office", "The cafeteria opens at eight and serves lunch until two."],
    &["Equipment", "Laptops are replaced every four years by the IT department."],
    &["Parking", "Visitors park in the north lot and register at reception."],
];

#[test]
#[ignore = "needs all-MiniLM-L6-v2 (cargo xtask fetch-model minilm); run with --include-ignored"]
fn semantic_match_without_shared_keywords_is_found_and_unrelated_pages_are_floored() {
    let model = model();
    let doc = pages(&HANDBOOK).build();
    let chunks = page_chunks(&doc);
    let retriever = EmbeddingRetriever::new(model_ref(model), EmbedConfig::STANDARD);
    let mut q = ParsedQuestion::unparsed("How often do I need to update my password?", "test");
    q.retrieval.main_query = q.corrected_question.clone();
    let mut events = Vec::new();
    let r = retriever.retrieve(&q, &doc, &chunks, None, &mut events).expect("retrieves");
    assert_eq!(r.passages[0].page, 2, "{r:?}");
    assert_eq!(r.passages[0].anchor_line, 3, "the line sharing a query word anchors the passage");
    assert!(r.passages.len() < chunks.len(), "the floor cut unrelated pages: {r:?}\n{events:?}");
    assert_eq!(events[0].detail["baseline"]["source"], "fixed model baseline");
}

/// Borrowing adapter: the retriever owns its embedder; tests share one model.
struct Shared(&'static MiniLmEmbedder);

fn model_ref(model: &'static MiniLmEmbedder) -> Shared {
    Shared(model)
}

impl Embedder for Shared {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.0.embed(texts)
    }
    fn dimension(&self) -> usize {
        self.0.dimension()
    }
    fn name(&self) -> String {
        self.0.name()
    }
}

#[test]
fn missing_model_directory_is_an_error_naming_the_file() {
    let err = MiniLmEmbedder::from_dir("/nonexistent/minilm").expect_err("no model there");
    assert!(matches!(err, EmbedError::Io { .. }), "{err}");
    assert!(err.to_string().contains("/nonexistent/minilm/config.json"), "{err}");
}

#[test]
#[ignore = "needs all-MiniLM-L6-v2 (cargo xtask fetch-model minilm); run with --include-ignored"]
fn corrupt_weights_are_an_error_not_a_panic() {
    model();
    let dir = temp_dir("embed-corrupt");
    for name in ["config.json", "tokenizer.json"] {
        std::fs::copy(minilm_dir().join(name), dir.path().join(name)).expect("copy");
    }
    std::fs::write(dir.path().join("model.safetensors"), b"not a safetensors file").expect("write");
    let err = MiniLmEmbedder::from_dir(dir.path()).expect_err("corrupt");
    assert!(matches!(err, EmbedError::BadModelFile { .. }), "{err}");
}

fn passage(page: u32, start: u32, end: u32, pinned: bool) -> Passage {
    Passage { line_start: start, line_end: end, page, score: 1.0, anchor_line: start, matched_keywords: vec![], pinned }
}

#[test]
fn public_pure_functions_work_without_a_model() {
    // Pinned identifier row stays first after fusion even though the
    // embedding ranking prefers its neighbour, one digit off.
    let keyword = Retrieval {
        passages: vec![passage(7, 70, 70, true), passage(7, 71, 71, false)],
        reserve: vec![],
        methods_used: vec!["keyword".into()],
        notes: vec![],
    };
    let embedding = Retrieval {
        passages: vec![passage(7, 71, 71, false), passage(9, 90, 95, false)],
        reserve: vec![],
        methods_used: vec!["embedding".into()],
        notes: vec![],
    };
    let fused = fuse_rrf(&keyword, &embedding, FusionConfig::STANDARD);
    assert_eq!(fused.passages.iter().map(|p| p.line_start).collect::<Vec<_>>(), vec![70, 71, 90]);
    // Floor over synthetic similarities: a clear gap after the second hit.
    let baseline = Baseline::from_background(&[0.1; 20]).expect("baseline");
    let d = apply_floor(&[0.8, 0.78, 0.4, 0.38, 0.36], baseline, FloorConfig::STANDARD);
    assert_eq!(d.keep, 2, "{d:?}");
}
