//! `cargo xtask bench kb`: the knowledge base against corpus mode, same
//! folder, same run, through the release `docintel` binary (build it first:
//! `cargo build --release -p docintel-cli`), so the figures do not depend on
//! xtask's own profile.
//!
//! On `<shared>/financebench/pdfs`: `kb add` into a new temporary knowledge
//! base (wall time, pages/s), `kb add` again (every file unchanged), `kb ask`
//! on the first N FinanceBench questions (p50, p95, and how often the
//! evidence document is among the candidates and answers), and `ask --corpus`
//! on the first question, then the ratio of the two ask times. With
//! `--encrypted`, the same `kb add` and `kb ask` measures again on a second
//! knowledge base encrypted with a new key (`kb key new`), and the ratios of
//! the two (what encryption at rest costs). `--pdfs DIR` measures another
//! folder (a subset of the filings; the questions stay FinanceBench's).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail, ensure};
use serde_json::Value;

const USAGE: &str =
    "usage: cargo xtask bench kb [--shared DIR] [--binary PATH] [--questions N] [--encrypted] [--pdfs DIR]";

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let mut shared = crate::bench::default_shared();
    let root = crate::tidy::project_root();
    let mut binary = root.join("target/release/docintel");
    let mut questions = 10usize;
    let mut encrypted = false;
    let mut pdfs = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().with_context(|| format!("{arg} needs a value; {USAGE}"));
        match arg.as_str() {
            "--shared" => shared = PathBuf::from(value()?),
            "--binary" => binary = PathBuf::from(value()?),
            "--questions" => questions = value()?.parse().context("--questions N")?,
            "--encrypted" => encrypted = true,
            "--pdfs" => pdfs = Some(PathBuf::from(value()?)),
            _ => bail!("{USAGE}"),
        }
    }
    ensure!(binary.is_file(), "{} missing: run `cargo build --release -p docintel-cli` first", binary.display());
    let pdfs = pdfs.unwrap_or_else(|| shared.join("financebench/pdfs"));
    let gold = std::fs::read_to_string(shared.join("financebench/financebench_with_local_pdfs.jsonl"))
        .context("the FinanceBench questions")?;
    let gold: Vec<(String, String)> = gold
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["pdf_present"].as_bool() != Some(false))
        .filter_map(|v| Some((v["question"].as_str()?.to_owned(), v["doc_name"].as_str()?.to_owned())))
        .take(questions.max(1))
        .collect();
    ensure!(!gold.is_empty(), "no FinanceBench question found");

    let kb = std::env::temp_dir().join(format!("docintel-bench-kb-{}", std::process::id()));
    let outcome = bench(&binary, &kb, &pdfs, &gold, encrypted);
    let _ = std::fs::remove_dir_all(&kb);
    outcome
}

/// The measures on knowledge bases under `kb` (a new folder).
fn bench(binary: &Path, kb: &Path, pdfs: &Path, gold: &[(String, String)], encrypted: bool) -> anyhow::Result<()> {
    let plain = measure(binary, &kb.join("plain"), pdfs, gold, None)?;
    if !encrypted {
        return Ok(());
    }
    std::fs::create_dir_all(kb)?;
    let key = kb.join("tenant.key");
    let key_arg = key.to_str().context("a UTF-8 temporary path")?;
    timed(binary, &["kb", "key", "new", key_arg])?;
    let sealed = measure(binary, &kb.join("sealed"), pdfs, gold, Some(key_arg))?;
    println!(
        "  encrypted / plain: kb add {:.2}x ({:.2} s vs {:.2} s), kb ask p50 {:.2}x ({:.3} s vs {:.3} s)",
        sealed.add_s / plain.add_s,
        sealed.add_s,
        plain.add_s,
        sealed.p50 / plain.p50,
        sealed.p50,
        plain.p50
    );
    Ok(())
}

/// What [`measure`] found that the comparison needs.
struct Figures {
    add_s: f64,
    p50: f64,
}

/// The measures on one knowledge base in `kb` (a new folder), encrypted
/// with the key file `key` when given.
fn measure(
    binary: &Path,
    kb: &Path,
    pdfs: &Path,
    gold: &[(String, String)],
    key: Option<&str>,
) -> anyhow::Result<Figures> {
    let kb_arg = kb.to_str().context("a UTF-8 temporary path")?;
    let pdfs_arg = pdfs.to_str().context("a UTF-8 fixtures path")?;
    let keyed = |args: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        if let Some(key) = key {
            args.extend(["--key-file".to_owned(), key.to_owned()]);
        }
        args
    };
    let (add_s, _) = timed(binary, &keyed(&["kb", "add", kb_arg, pdfs_arg]))?;
    let (readd_s, _) = timed(binary, &keyed(&["kb", "add", kb_arg, pdfs_arg]))?;
    let (_, list) = timed(binary, &["kb", "list", kb_arg, "--json"])?;
    let documents = list["documents"].as_array().map_or(0, Vec::len);
    let pages: u64 = list["documents"].as_array().into_iter().flatten().filter_map(|d| d["pages"].as_u64()).sum();

    let mut ask_times = Vec::new();
    let (mut in_candidates, mut answering) = (0, 0);
    for (question, doc_name) in gold {
        let (seconds, answer) = timed(binary, &keyed(&["kb", "ask", kb_arg, question, "--json", "--no-trace"]))?;
        ask_times.push(seconds);
        let stem = |name: &str| name.trim_end_matches(".pdf").to_owned();
        let candidates = answer["kb"]["candidates"].as_array().cloned().unwrap_or_default();
        in_candidates +=
            usize::from(candidates.iter().any(|c| c["name"].as_str().map(stem).as_deref() == Some(doc_name)));
        answering += usize::from(answer["kb"]["document_name"].as_str().map(stem).as_deref() == Some(doc_name));
    }
    ask_times.sort_by(f64::total_cmp);
    let (p50, p95) = (percentile(&ask_times, 0.5), percentile(&ask_times, 0.95));
    let what = if key.is_some() { "encrypted (--key-file)" } else { "not encrypted" };
    println!("bench kb, {what}: {documents} documents, {pages} pages ({})", pdfs.display());
    println!("  kb add              {add_s:>8.2} s  ({:.0} pages/s)", pages as f64 / add_s);
    println!("  kb add, unchanged   {readd_s:>8.2} s");
    println!("  kb ask p50 / p95    {p50:>8.2} s / {p95:.2} s over {} questions", ask_times.len());
    println!("  evidence document   {in_candidates}/{} among the candidates, {answering} answering", gold.len());
    if key.is_none() {
        let (corpus_s, _) = timed(binary, &keyed(&["ask", "--corpus", pdfs_arg, &gold[0].0, "--json", "--no-trace"]))?;
        println!("  ask --corpus        {corpus_s:>8.2} s  (first question)");
        println!(
            "  ask --corpus / kb ask p50: {:.0}x; kb add / ask --corpus: {:.1} questions",
            corpus_s / p50,
            add_s / corpus_s
        );
    }
    Ok(Figures { add_s, p50 })
}

/// Runs `binary args` and returns its wall time and its stdout as JSON
/// (`Null` when it is not JSON); fails on a non-zero exit.
fn timed<S: AsRef<std::ffi::OsStr>>(binary: &Path, args: &[S]) -> anyhow::Result<(f64, Value)> {
    let started = Instant::now();
    let out = Command::new(binary)
        .args(args)
        .env_remove("DOCINTEL_LLM_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("DOCINTEL_KB_KEY_FILE")
        .output()
        .with_context(|| format!("running {}", binary.display()))?;
    let seconds = started.elapsed().as_secs_f64();
    let shown: Vec<String> = args.iter().map(|a| a.as_ref().to_string_lossy().into_owned()).collect();
    ensure!(out.status.success(), "docintel {} failed: {}", shown.join(" "), String::from_utf8_lossy(&out.stderr));
    Ok((seconds, serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)))
}

/// The `q` quantile of sorted `values` (nearest rank).
pub(crate) fn percentile(sorted: &[f64], q: f64) -> f64 {
    let rank = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let values = [1.0, 2.0, 3.0, 4.0, 10.0];
        assert_eq!(percentile(&values, 0.5), 3.0);
        assert_eq!(percentile(&values, 0.95), 10.0);
        assert_eq!(percentile(&[7.0], 0.5), 7.0);
    }
}
