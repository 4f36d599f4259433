//! `cargo xtask stress`: every stress fixture parsed in its own child process.
//!
//! Each file under `<shared>/stress` (recursively, any extension: the parser
//! decides what it is) and the damaged Arogya policy in `<shared>/insurance`
//! is parsed by `xtask bench parse-one FILE` with a per-file timeout. One line
//! per file: `ok` with pages and lines (and failed pages, if any), `error`
//! with the parser's message (a clean refusal), `PANIC` (the child died: a
//! panic escaped, or a signal such as a stack overflow) or `HANG` (killed at
//! the timeout). Totals at the end; the target is 0 panics, 0 hangs.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

const USAGE: &str = "usage: cargo xtask stress [--shared DIR] [--timeout SECS]";

/// How a child process ended.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// It exited with a code.
    Exited { code: i32, stdout: String, stderr: String },
    /// It was killed by a signal (abort, segfault, stack overflow).
    Signalled { stderr: String },
    /// It was still running at the timeout and was killed.
    TimedOut,
    /// It could not be started.
    SpawnFailed(String),
}

/// Runs `cmd` with piped output, killing it (by its own handle) at `timeout`.
pub(crate) fn run_child(mut cmd: Command, timeout: Duration) -> Outcome {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => return Outcome::SpawnFailed(e.to_string()),
    };
    // Drain both pipes on threads so a chatty child cannot block.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() < timeout => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    match status {
        None => Outcome::TimedOut,
        Some(status) => match status.code() {
            Some(code) => Outcome::Exited { code, stdout, stderr },
            None => Outcome::Signalled { stderr },
        },
    }
}

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
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).with_context(|| format!("{} needs a value\n{USAGE}", args[i]));
        match args[i].as_str() {
            "--shared" => shared = PathBuf::from(value?),
            "--timeout" => timeout = Duration::from_secs(value?.parse().context("--timeout SECS")?),
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
    let (mut ok, mut errors, mut panics, mut hangs, mut failed_pages) = (0, 0, 0, 0, 0u64);
    let started = Instant::now();
    for file in &files {
        let shown = file.strip_prefix(&shared).unwrap_or(file).display().to_string();
        let mut cmd = Command::new(&exe);
        cmd.arg("bench").arg("parse-one").arg(file);
        let t0 = Instant::now();
        let outcome = run_child(cmd, timeout);
        let secs = t0.elapsed().as_secs_f64();
        let line = match outcome {
            Outcome::Exited { code: 0, stdout, .. } => {
                match stdout.lines().rev().find(|l| l.starts_with('{')).map(serde_json::from_str::<Value>) {
                    Some(Ok(v)) if v["error"].is_string() => {
                        errors += 1;
                        format!("error  {}", v["error"].as_str().unwrap_or(""))
                    }
                    Some(Ok(v)) => {
                        ok += 1;
                        let failed = v["failed_pages"].as_u64().unwrap_or(0);
                        failed_pages += failed;
                        let lines = v["lines"].as_array().map_or(0, Vec::len);
                        let failed = if failed > 0 { format!(", {failed} page(s) failed") } else { String::new() };
                        format!("ok     pages={} lines={lines}{failed}", v["pages"])
                    }
                    _ => {
                        panics += 1;
                        "PANIC  no result printed".to_owned()
                    }
                }
            }
            Outcome::Exited { code, stderr, .. } => {
                panics += 1;
                format!("PANIC  exit {code}: {}", last_line(&stderr))
            }
            Outcome::Signalled { stderr } => {
                panics += 1;
                format!("PANIC  killed by a signal: {}", last_line(&stderr))
            }
            Outcome::TimedOut => {
                hangs += 1;
                format!("HANG   no result after {} s", timeout.as_secs())
            }
            Outcome::SpawnFailed(e) => bail!("cannot start {}: {e}", exe.display()),
        };
        println!("{shown:<70} {secs:>6.2}s  {line}");
    }
    println!(
        "{} files in {:.1} s: {ok} parsed ({failed_pages} page(s) failed inside them), {errors} clean errors, \
         {panics} panics, {hangs} hangs",
        files.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn last_line(text: &str) -> &str {
    text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("")
}
