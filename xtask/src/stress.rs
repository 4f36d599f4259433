//! `cargo xtask stress`: every stress fixture parsed in its own child process.
//!
//! Each file under `<shared>/stress` (recursively, any extension: the parser
//! decides what it is) and the damaged Arogya policy in `<shared>/insurance`
//! is parsed by `xtask bench parse-one FILE` with a per-file timeout. One line
//! per file: `ok` with pages and lines (and failed pages, if any), `error`
//! with the parser's message (a clean refusal), `PANIC` (the child died: a
//! panic escaped, or a signal such as a stack overflow) or `HANG` (killed at
//! the timeout). With PyMuPDF importable (`--python PY`, default `python3`,
//! `xtask/scripts/pymupdf_bench.py`), each line also gives the characters kept
//! against PyMuPDF's (`bench parse`'s multiset measure) and marks `SILENT LOSS`
//! where under 95% are kept and the parser gave no warning. Totals at the end;
//! the target is 0 panics, 0 hangs, 0 silent losses.
//!
//! `--mutate N [--seed S]` then parses N mutants of those PDFs: each copy
//! gets one deterministic damage (random bytes flipped, cut short, a chunk
//! repeated, or a number inside the file — an offset, a length, an object
//! number — replaced by a huge or zero one). This is a mutation smoke test,
//! not coverage-guided fuzzing (that is the cargo-fuzz target in `fuzz/`,
//! which needs a nightly toolchain this machine does not have). A mutant
//! that panics or hangs is kept under `target/stress-mutants/` to reproduce.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::child::{Outcome, run_child};

const USAGE: &str = "usage: cargo xtask stress [--shared DIR] [--timeout SECS] [--mutate N] [--seed S] [--python PY]";

/// Under this share of PyMuPDF's characters, a file without a warning lost text silently.
const SILENT_LOSS_BELOW: f64 = 0.95;

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot list (use --shared DIR)", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_files(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let mut shared = crate::bench::default_shared();
    let mut timeout = Duration::from_secs(60);
    let mut mutants = 0usize;
    let mut seed = 0x5eed_d0c5_u64;
    let mut python = "python3".to_owned();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).with_context(|| format!("{} needs a value\n{USAGE}", args[i]));
        match args[i].as_str() {
            "--shared" => shared = PathBuf::from(value?),
            "--timeout" => timeout = Duration::from_secs(value?.parse().context("--timeout SECS")?),
            "--mutate" => mutants = value?.parse().context("--mutate N")?,
            "--seed" => seed = value?.parse().context("--seed S")?,
            "--python" => python = value?.clone(),
            other => bail!("unknown argument {other}\n{USAGE}"),
        }
        i += 2;
    }
    let mut files = Vec::new();
    collect_files(&shared.join("stress"), &mut files)?;
    let insurance = shared.join("insurance");
    let mut arogya: Vec<PathBuf> = std::fs::read_dir(&insurance)
        .with_context(|| format!("{}: cannot list", insurance.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("Arogya")))
        .collect();
    arogya.sort();
    files.extend(arogya);

    let exe = std::env::current_exe().context("locating the xtask binary")?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pymupdf_bench.py");
    let has_pymupdf = Command::new(&python).args(["-c", "import pymupdf"]).output().is_ok_and(|o| o.status.success());
    if !has_pymupdf {
        println!("({python} cannot import pymupdf: characters are not compared; `pip install pymupdf`)");
    }
    let mut tally = Tally::default();
    let started = Instant::now();
    for file in &files {
        let shown = file.strip_prefix(&shared).unwrap_or(file).display().to_string();
        let (_, mut line) = parse_in_child(&exe, file, timeout, &mut tally)?;
        if has_pymupdf && let Some((ours, warned)) = tally.last.take() {
            let mut cmd = Command::new(&python);
            cmd.arg(&script).arg(file);
            let theirs = crate::bench::run_json(cmd, timeout);
            line.push_str(&chars_column(&ours, &theirs, warned, &mut tally));
        }
        println!("{shown:<70} {line}");
    }
    println!("{} files in {:.1} s: {}", files.len(), started.elapsed().as_secs_f64(), tally.summary());
    if has_pymupdf {
        println!(
            "characters kept vs PyMuPDF over {} compared file(s): {}; {} file(s) under {:.0}% without a warning (silent loss)",
            tally.compared,
            crate::bench::ratio(tally.chars_common, tally.chars_theirs),
            tally.silent_losses,
            SILENT_LOSS_BELOW * 100.0
        );
    }

    if mutants > 0 {
        mutate_and_parse(&exe, &files, mutants, seed, timeout)?;
    }
    Ok(())
}

#[derive(Default)]
struct Tally {
    ok: usize,
    errors: usize,
    panics: usize,
    hangs: usize,
    failed_pages: u64,
    /// The last parsed file's result and whether it warned (for the PyMuPDF comparison).
    last: Option<(crate::bench::Run, bool)>,
    compared: usize,
    chars_common: u64,
    chars_theirs: u64,
    silent_losses: usize,
}

/// ` chars ours/theirs kept P%` (and ` SILENT LOSS`), counted in `tally`; empty when
/// PyMuPDF failed on the file too.
fn chars_column(ours: &crate::bench::Run, theirs: &crate::bench::Run, warned: bool, tally: &mut Tally) -> String {
    if theirs.error.is_some() {
        return "  (pymupdf: error)".to_owned();
    }
    let c = crate::bench::compare(ours, theirs);
    if c.chars_theirs == 0 {
        return format!("  chars {}/0", c.chars_ours);
    }
    tally.compared += 1;
    tally.chars_common += c.chars_common;
    tally.chars_theirs += c.chars_theirs;
    let kept = c.chars_common as f64 / c.chars_theirs as f64;
    let silent = kept < SILENT_LOSS_BELOW && !warned;
    if silent {
        tally.silent_losses += 1;
    }
    format!(
        "  chars {}/{} kept {:.1}%{}{}",
        c.chars_ours,
        c.chars_theirs,
        kept * 100.0,
        if kept < SILENT_LOSS_BELOW && warned { " (loss warned)" } else { "" },
        if silent { "  SILENT LOSS" } else { "" }
    )
}

impl Tally {
    fn summary(&self) -> String {
        format!(
            "{} parsed ({} page(s) failed inside them), {} clean errors, {} panics, {} hangs",
            self.ok, self.failed_pages, self.errors, self.panics, self.hangs
        )
    }
}

/// Parses `file` in a child (`xtask bench parse-one`); returns whether it
/// ended cleanly (parsed or refused) and the report line.
fn parse_in_child(exe: &Path, file: &Path, timeout: Duration, tally: &mut Tally) -> anyhow::Result<(bool, String)> {
    let mut cmd = Command::new(exe);
    cmd.arg("bench").arg("parse-one").arg(file);
    let t0 = Instant::now();
    let outcome = run_child(cmd, timeout);
    let secs = t0.elapsed().as_secs_f64();
    let (clean, line) = match outcome {
        Outcome::Exited { code: 0, stdout, .. } => {
            match stdout.lines().rev().find(|l| l.starts_with('{')).map(serde_json::from_str::<Value>) {
                Some(Ok(v)) if v["error"].is_string() => {
                    tally.errors += 1;
                    (true, format!("error  {}", v["error"].as_str().unwrap_or("")))
                }
                Some(Ok(v)) => {
                    tally.ok += 1;
                    let warned = v["warnings"].as_array().is_some_and(|w| !w.is_empty());
                    tally.last = Some((crate::bench::Run::from_json(&v), warned));
                    let failed = v["failed_pages"].as_u64().unwrap_or(0);
                    tally.failed_pages += failed;
                    let lines = v["lines"].as_array().map_or(0, Vec::len);
                    let failed = if failed > 0 { format!(", {failed} page(s) failed") } else { String::new() };
                    (true, format!("ok     pages={} lines={lines}{failed}", v["pages"]))
                }
                _ => {
                    tally.panics += 1;
                    (false, "PANIC  no result printed".to_owned())
                }
            }
        }
        Outcome::Exited { code, stderr, .. } => {
            tally.panics += 1;
            (false, format!("PANIC  exit {code}: {}", last_line(&stderr)))
        }
        Outcome::Signalled { stderr } => {
            tally.panics += 1;
            (false, format!("PANIC  killed by a signal: {}", last_line(&stderr)))
        }
        Outcome::TimedOut => {
            tally.hangs += 1;
            (false, format!("HANG   no result after {} s", timeout.as_secs()))
        }
        Outcome::SpawnFailed(e) => bail!("cannot start {}: {e}", exe.display()),
    };
    Ok((clean, format!("{secs:>6.2}s  {line}")))
}

/// One damage applied to `bytes`; returns its description.
fn mutate(bytes: &mut Vec<u8>, rng: &mut fastrand::Rng) -> String {
    let len = bytes.len().max(1);
    match rng.usize(..4) {
        0 => {
            let n = 1 + rng.usize(..16);
            for _ in 0..n {
                let at = rng.usize(..len);
                if let Some(b) = bytes.get_mut(at) {
                    *b ^= 1 << rng.u8(..8);
                }
            }
            format!("{n} bit(s) flipped")
        }
        1 => {
            let at = rng.usize(..len);
            bytes.truncate(at);
            format!("cut at byte {at}")
        }
        2 => {
            let at = rng.usize(..len);
            let n = (1 + rng.usize(..4096)).min(bytes.len() - at.min(bytes.len()));
            let chunk = bytes[at..at + n].to_vec();
            let to = rng.usize(..len);
            bytes.splice(to..to, chunk);
            format!("{n} byte(s) from {at} repeated at {to}")
        }
        _ => {
            // A run of digits (an offset, a /Length, an object number)
            // replaced by an extreme value.
            let starts: Vec<usize> =
                (1..bytes.len()).filter(|&i| bytes[i].is_ascii_digit() && !bytes[i - 1].is_ascii_digit()).collect();
            if starts.is_empty() {
                bytes.truncate(len / 2);
                return "no number: cut in half".to_owned();
            }
            let at = starts[rng.usize(..starts.len())];
            let end = at + bytes[at..].iter().take_while(|b| b.is_ascii_digit()).count();
            let value: &[u8] = match rng.usize(..3) {
                0 => b"0",
                1 => b"99999999999",
                _ => b"4294967295",
            };
            bytes.splice(at..end, value.iter().copied());
            format!("number at byte {at} set to {}", String::from_utf8_lossy(value))
        }
    }
}

fn mutate_and_parse(exe: &Path, files: &[PathBuf], n: usize, seed: u64, timeout: Duration) -> anyhow::Result<()> {
    let sources: Vec<(&PathBuf, Vec<u8>)> = files
        .iter()
        .filter_map(|f| std::fs::read(f).ok().map(|b| (f, b)))
        .filter(|(_, b)| b.starts_with(b"%PDF") && b.len() <= 8 << 20)
        .collect();
    if sources.is_empty() {
        bail!("no PDF under 8 MiB to mutate");
    }
    let dir = crate::tidy::project_root().join("target/stress-mutants");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut tally = Tally::default();
    let started = Instant::now();
    for i in 0..n {
        let (source, bytes) = &sources[rng.usize(..sources.len())];
        let mut bytes = bytes.clone();
        let damage = mutate(&mut bytes, &mut rng);
        let name = source.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let path = dir.join(format!("{i:04}-{name}"));
        std::fs::write(&path, &bytes).with_context(|| format!("writing {}", path.display()))?;
        let (clean, line) = parse_in_child(exe, &path, timeout, &mut tally)?;
        if clean {
            let _ = std::fs::remove_file(&path);
        } else {
            println!("mutant {i:04} of {name} ({damage}): {line}  kept: {}", path.display());
        }
    }
    println!("{n} mutants (seed {seed}) in {:.1} s: {}", started.elapsed().as_secs_f64(), tally.summary());
    Ok(())
}

fn last_line(text: &str) -> &str {
    text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("")
}
