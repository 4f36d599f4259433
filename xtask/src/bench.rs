//! `cargo xtask bench parse`: our PDF parser against PyMuPDF, same files, same run.
//!
//! Every file is parsed twice, each time in a fresh child process so peak RSS
//! is per file: by this binary (`xtask bench parse-one FILE`, the parse brick
//! in-process, timed from reading the file to the finished tables) and by
//! `xtask/scripts/pymupdf_bench.py` (`page.get_text("dict")` lines and
//! `doc.get_toc()`, timed from `pymupdf.open`). Per file and in total it
//! prints pages/s of both and their ratio, peak RSS, characters kept
//! (multiset of non-whitespace characters, ligatures expanded, dashes and
//! spaces folded: `sum min(ours, theirs) / theirs`), extra characters
//! (`(ours - common) / theirs`), the share of PyMuPDF lines found verbatim
//! among ours (whitespace collapsed, same folding, case kept) and outline
//! entries equal (level + title + page multiset, duplicates included, over
//! the larger of the two outlines).
//!
//! Run a release build: `cargo run --release -p xtask -- bench parse`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use docintel::schema::{ParsedDocument, TocSource};
use serde_json::{Value, json};

use crate::child::{self, Outcome};

const USAGE: &str = "usage: cargo xtask bench parse [--files FILE...] [--shared DIR] [--python PY] [--timeout SECS]";

/// Per-file limit for either parser.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    match args.first().map(String::as_str) {
        Some("parse") => bench_parse(&args[1..]),
        // Hidden: the child process of `bench parse` and `stress`.
        Some("parse-one") => {
            let file = args.get(1).context("parse-one needs a FILE")?;
            println!("{}", parse_one(Path::new(file)));
            Ok(())
        }
        _ => bail!("{USAGE}"),
    }
}

/// The shared fixtures folder next to the workspace (`../shared/fixtures`).
pub(crate) fn default_shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures")
}

/// Peak resident set size of this process, KiB (`VmHWM`), 0 if unknown.
fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Parses one file with the parse brick and describes the result as JSON.
fn parse_one(path: &Path) -> Value {
    let start = Instant::now();
    let result = docintel::parse_file(path);
    let seconds = start.elapsed().as_secs_f64();
    match result {
        Ok(doc) => describe(&doc, seconds),
        Err(e) => json!({"error": e.to_string(), "seconds": seconds, "peak_rss_kb": peak_rss_kb()}),
    }
}

fn describe(doc: &ParsedDocument, seconds: f64) -> Value {
    let toc: Vec<Value> = doc
        .toc
        .iter()
        .filter(|t| t.source == TocSource::Outline)
        .map(|t| json!([t.level, t.title, t.start_page]))
        .collect();
    let failed_pages = doc.diagnostics.iter().filter(|d| d.message.contains("text extraction failed")).count();
    let warnings: Vec<&str> = doc
        .diagnostics
        .iter()
        .filter(|d| d.severity == docintel::schema::Severity::Warning)
        .map(|d| d.message.as_str())
        .collect();
    json!({
        "pages": doc.profile.n_pages.unwrap_or(doc.pages.len() as u32),
        "seconds": seconds,
        "lines": doc.lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>(),
        "toc": toc,
        "diagnostics": doc.diagnostics.len(),
        "failed_pages": failed_pages,
        "warnings": warnings,
        "peak_rss_kb": peak_rss_kb(),
    })
}

/// One side's result for one file.
#[derive(Debug, Default)]
pub(crate) struct Run {
    pages: u64,
    seconds: f64,
    rss_kb: u64,
    pub(crate) lines: Vec<String>,
    toc: Vec<(i64, String, i64)>,
    pub(crate) error: Option<String>,
}

impl Run {
    pub(crate) fn from_json(v: &Value) -> Run {
        let toc = v["toc"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|e| {
                        (
                            e[0].as_i64().unwrap_or(0),
                            e[1].as_str().unwrap_or("").trim().to_owned(),
                            e[2].as_i64().unwrap_or(0),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        Run {
            pages: v["pages"].as_u64().unwrap_or(0),
            seconds: v["seconds"].as_f64().unwrap_or(0.0),
            rss_kb: v["peak_rss_kb"].as_u64().unwrap_or(0),
            lines: v["lines"]
                .as_array()
                .map(|a| a.iter().filter_map(|l| l.as_str().map(str::to_owned)).collect())
                .unwrap_or_default(),
            toc,
            error: v["error"].as_str().map(str::to_owned),
        }
    }

    fn failed(error: String) -> Run {
        Run { error: Some(error), ..Run::default() }
    }
}

/// Runs a child that prints one JSON object on its last stdout line.
pub(crate) fn run_json(cmd: std::process::Command, timeout: Duration) -> Run {
    match child::run_child(cmd, timeout) {
        Outcome::Exited { code: 0, stdout, .. } => {
            match stdout.lines().rev().find(|l| l.trim_start().starts_with('{')).map(serde_json::from_str::<Value>) {
                Some(Ok(v)) => Run::from_json(&v),
                _ => Run::failed("no JSON on stdout".into()),
            }
        }
        Outcome::Exited { code, stderr, .. } => {
            Run::failed(format!("exit {code}: {}", stderr.lines().last().unwrap_or("")))
        }
        Outcome::Signalled { stderr, .. } => {
            Run::failed(format!("killed by a signal: {}", stderr.lines().last().unwrap_or("")))
        }
        Outcome::TimedOut => Run::failed(format!("timed out after {} s", timeout.as_secs())),
        Outcome::SpawnFailed(e) => Run::failed(format!("cannot start: {e}")),
    }
}

/// Folds one character for comparison; `None` for whitespace.
fn fold(c: char, out: &mut String) {
    if let Some(letters) = docintel::schema::text::expand_ligature(c) {
        out.push_str(letters);
        return;
    }
    match c {
        c if c.is_whitespace() => out.push(' '),
        // Control characters are no text (a terminal escape sequence in a text file, which
        // PyMuPDF shows as U+FFFD).
        c if c.is_control() || c == '\u{FFFD}' => {}
        '\u{200B}' | '\u{FEFF}' | '\u{00AD}' => {}
        '\u{2010}' | '\u{2011}' => out.push('-'),
        c => out.push(c),
    }
}

/// Whitespace-collapsed, folded form of a line.
fn line_key(text: &str) -> String {
    let mut folded = String::with_capacity(text.len());
    for c in text.chars() {
        fold(c, &mut folded);
    }
    folded.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn char_counts(lines: &[String]) -> HashMap<char, u64> {
    let mut counts = HashMap::new();
    let mut folded = String::new();
    for line in lines {
        folded.clear();
        for c in line.chars() {
            fold(c, &mut folded);
        }
        for c in folded.chars().filter(|c| !c.is_whitespace()) {
            *counts.entry(c).or_insert(0) += 1;
        }
    }
    counts
}

/// Comparison of one file.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Compare {
    pub(crate) chars_theirs: u64,
    pub(crate) chars_ours: u64,
    pub(crate) chars_common: u64,
    lines_theirs: u64,
    lines_found: u64,
    toc_max: u64,
    toc_equal: u64,
}

pub(crate) fn compare(ours: &Run, theirs: &Run) -> Compare {
    let (co, ct) = (char_counts(&ours.lines), char_counts(&theirs.lines));
    let chars_theirs = ct.values().sum();
    let chars_ours = co.values().sum();
    let chars_common = ct.iter().map(|(c, n)| (*n).min(co.get(c).copied().unwrap_or(0))).sum();
    let our_lines: std::collections::HashSet<String> = ours.lines.iter().map(|l| line_key(l)).collect();
    let their_keys: Vec<String> = theirs.lines.iter().map(|l| line_key(l)).filter(|k| !k.is_empty()).collect();
    let lines_found = their_keys.iter().filter(|k| our_lines.contains(*k)).count() as u64;
    let mut our_toc: HashMap<&(i64, String, i64), u64> = HashMap::new();
    for e in &ours.toc {
        *our_toc.entry(e).or_insert(0) += 1;
    }
    let mut toc_equal = 0;
    for e in &theirs.toc {
        if let Some(n) = our_toc.get_mut(e)
            && *n > 0
        {
            *n -= 1;
            toc_equal += 1;
        }
    }
    Compare {
        chars_theirs,
        chars_ours,
        chars_common,
        lines_theirs: their_keys.len() as u64,
        lines_found,
        toc_max: ours.toc.len().max(theirs.toc.len()) as u64,
        toc_equal,
    }
}

pub(crate) fn ratio(a: u64, b: u64) -> String {
    if b == 0 { "-".into() } else { format!("{:.4}", a as f64 / b as f64) }
}

fn pages_per_s(pages: u64, seconds: f64) -> f64 {
    if seconds > 0.0 { pages as f64 / seconds } else { 0.0 }
}

fn bench_parse(args: &[String]) -> anyhow::Result<()> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut shared = default_shared();
    let mut python = "python3".to_owned();
    let mut timeout = DEFAULT_TIMEOUT;
    let mut i = 0;
    while i < args.len() {
        let value = |i: usize| args.get(i + 1).with_context(|| format!("{} needs a value\n{USAGE}", args[i]));
        match args[i].as_str() {
            "--files" => {
                while let Some(f) = args.get(i + 1).filter(|a| !a.starts_with("--")) {
                    files.push(PathBuf::from(f));
                    i += 1;
                }
            }
            "--shared" => {
                shared = PathBuf::from(value(i)?);
                i += 1;
            }
            "--python" => {
                python = value(i)?.clone();
                i += 1;
            }
            "--timeout" => {
                timeout = Duration::from_secs(value(i)?.parse().context("--timeout SECS")?);
                i += 1;
            }
            other => bail!("unknown argument {other}\n{USAGE}"),
        }
        i += 1;
    }
    if files.is_empty() {
        for dir in [shared.join("core"), shared.join("financebench/pdfs")] {
            let mut pdfs: Vec<PathBuf> = std::fs::read_dir(&dir)
                .with_context(|| format!("{}: cannot list (use --shared DIR or --files)", dir.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("pdf")))
                .collect();
            pdfs.sort();
            files.extend(pdfs);
        }
    }
    let exe = std::env::current_exe().context("locating the xtask binary")?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pymupdf_bench.py");
    if cfg!(debug_assertions) {
        eprintln!("note: a debug build; run `cargo run --release -p xtask -- bench parse` for real figures");
    }

    println!(
        "{:<48} {:>5} {:>9} {:>9} {:>6} {:>7} {:>7} {:>7} {:>7} {:>7} {:>9}",
        "file", "pages", "ours p/s", "mupdf p/s", "ratio", "ours MB", "mupdf MB", "chars", "extra", "lines", "outline"
    );
    let (mut pages_ours, mut secs_ours, mut pages_theirs, mut secs_theirs) = (0u64, 0f64, 0u64, 0f64);
    let mut total = Compare::default();
    let (mut max_rss_ours, mut max_rss_theirs) = (0u64, 0u64);
    let mut failures = Vec::new();
    for file in &files {
        let mut ours_cmd = std::process::Command::new(&exe);
        ours_cmd.arg("bench").arg("parse-one").arg(file);
        let ours = run_json(ours_cmd, timeout);
        let mut theirs_cmd = std::process::Command::new(&python);
        theirs_cmd.arg(&script).arg(file);
        let theirs = run_json(theirs_cmd, timeout);
        let name = file.file_name().map_or_else(|| file.display().to_string(), |n| n.to_string_lossy().into_owned());
        let short: String = name.chars().take(48).collect();
        if ours.error.is_some() || theirs.error.is_some() {
            println!(
                "{short:<48} ours: {} | pymupdf: {}",
                ours.error.as_deref().unwrap_or("ok"),
                theirs.error.as_deref().unwrap_or("ok")
            );
            failures.push(name);
            continue;
        }
        let c = compare(&ours, &theirs);
        let (po, pt) = (pages_per_s(ours.pages, ours.seconds), pages_per_s(theirs.pages, theirs.seconds));
        println!(
            "{short:<48} {:>5} {:>9.1} {:>9.1} {:>6.2} {:>7.1} {:>7.1} {:>7} {:>7} {:>7} {:>9}",
            ours.pages,
            po,
            pt,
            if pt > 0.0 { po / pt } else { 0.0 },
            ours.rss_kb as f64 / 1024.0,
            theirs.rss_kb as f64 / 1024.0,
            ratio(c.chars_common, c.chars_theirs),
            ratio(c.chars_ours - c.chars_common, c.chars_theirs),
            ratio(c.lines_found, c.lines_theirs),
            format!("{}/{}", c.toc_equal, c.toc_max),
        );
        pages_ours += ours.pages;
        secs_ours += ours.seconds;
        pages_theirs += theirs.pages;
        secs_theirs += theirs.seconds;
        max_rss_ours = max_rss_ours.max(ours.rss_kb);
        max_rss_theirs = max_rss_theirs.max(theirs.rss_kb);
        total.chars_theirs += c.chars_theirs;
        total.chars_ours += c.chars_ours;
        total.chars_common += c.chars_common;
        total.lines_theirs += c.lines_theirs;
        total.lines_found += c.lines_found;
        total.toc_max += c.toc_max;
        total.toc_equal += c.toc_equal;
    }
    let (po, pt) = (pages_per_s(pages_ours, secs_ours), pages_per_s(pages_theirs, secs_theirs));
    println!(
        "{:<48} {:>5} {:>9.1} {:>9.1} {:>6.2} {:>7.1} {:>7.1} {:>7} {:>7} {:>7} {:>9}",
        format!("TOTAL ({} files compared)", files.len() - failures.len()),
        pages_ours,
        po,
        pt,
        if pt > 0.0 { po / pt } else { 0.0 },
        max_rss_ours as f64 / 1024.0,
        max_rss_theirs as f64 / 1024.0,
        ratio(total.chars_common, total.chars_theirs),
        ratio(total.chars_ours - total.chars_common, total.chars_theirs),
        ratio(total.lines_found, total.lines_theirs),
        format!("{}/{}", total.toc_equal, total.toc_max),
    );
    println!(
        "seconds: ours {secs_ours:.2}, pymupdf {secs_theirs:.2}; MB columns are peak RSS (TOTAL: the largest); \
         {} file(s) not compared{}",
        failures.len(),
        if failures.is_empty() { String::new() } else { format!(": {}", failures.join(", ")) }
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: &[&str], toc: &[(i64, &str, i64)]) -> Run {
        Run {
            lines: lines.iter().map(|s| (*s).to_owned()).collect(),
            toc: toc.iter().map(|(l, t, p)| (*l, (*t).to_owned(), *p)).collect(),
            ..Run::default()
        }
    }

    #[test]
    fn compares_chars_lines_and_outline() {
        let ours = run(&["e\u{FB03}cient  tax", "extra"], &[(1, "A", 1), (1, "A", 2)]);
        let theirs = run(&["efficient tax", "lost line"], &[(1, "A", 1), (1, "A", 2), (2, "B", 3)]);
        let c = compare(&ours, &theirs);
        assert_eq!(c.lines_theirs, 2);
        assert_eq!(c.lines_found, 1);
        // "efficienttax" (12) + "lostline" (8): common = 12 + l,o,s,t,i,n,e shared with "extra" / ours.
        assert_eq!(c.chars_theirs, 20);
        assert!(c.chars_common >= 12 && c.chars_common < 20, "{c:?}");
        assert_eq!((c.toc_equal, c.toc_max), (2, 3));
    }
}
