//! `cargo xtask bench serve`: `docintel serve` under load, against the same
//! questions answered in process without HTTP, in the same run.
//!
//! A new temporary knowledge base of the PDFs of `--pdfs DIR` (default: the
//! project's invoices, `fixtures/invoices`), one API key, and the server
//! started in this process on 127.0.0.1 (port 0) with the limits `docintel
//! serve` starts with (`--max-concurrent N` changes the 429 limit). Then, for
//! 1, 4 and 8 clients (`--clients 1,4,8`): `--questions N` questions (the
//! list below, in turn) first answered in process by as many threads
//! (`docintel_kb::ask`, what the server calls), then over HTTP by as many
//! clients (`POST /v1/ask`; HTTP/1.1 over `std::net::TcpStream`,
//! `Connection: close`; no client crate). Per concurrency: p50 / p95 latency
//! and throughput of each, and HTTP / in-process ratios. A 429 `busy` (every
//! permit of the server taken) is counted and reported, never a latency: the
//! client waits 20 ms and asks again, and the latency is that of the attempt
//! that was answered. Both sides run in xtask's profile (a dev build unless
//! `cargo run --release -p xtask -- bench serve`), so the ratios compare
//! like with like.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use docintel::{AskOptions, Engine};
use docintel_serve::{AppState, Limits, TenantKb};

use crate::bench_kb::percentile;

const USAGE: &str =
    "usage: cargo xtask bench serve [--pdfs DIR] [--questions N] [--clients 1,4,8] [--max-concurrent N]";

/// The questions asked, in turn (invoice questions: the default PDFs).
const QUESTIONS: &[&str] = &[
    "What is the total amount?",
    "What is the invoice date?",
    "What is the invoice number?",
    "Who issued the invoice?",
    "What is the amount before tax?",
    "What is the currency of the invoice?",
];

/// How long a client waits after a 429 before asking again.
const BUSY_WAIT: Duration = Duration::from_millis(20);

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let root = crate::tidy::project_root();
    let mut pdfs = root.join("fixtures/invoices");
    let mut questions = 96usize;
    let mut clients = vec![1usize, 4, 8];
    let mut max_concurrent = Limits::default().max_concurrent;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().with_context(|| format!("{arg} needs a value; {USAGE}"));
        match arg.as_str() {
            "--pdfs" => pdfs = PathBuf::from(value()?),
            "--questions" => questions = value()?.parse().context("--questions N")?,
            "--clients" => {
                clients =
                    value()?.split(',').map(|c| c.trim().parse()).collect::<Result<_, _>>().context("--clients")?
            }
            "--max-concurrent" => max_concurrent = value()?.parse().context("--max-concurrent N")?,
            _ => bail!("{USAGE}"),
        }
    }
    ensure!(questions > 0 && clients.iter().all(|&c| c > 0) && max_concurrent > 0, "{USAGE}");
    let kb = std::env::temp_dir().join(format!("docintel-bench-serve-{}", std::process::id()));
    let outcome = bench(&kb, &pdfs, questions, &clients, max_concurrent);
    let _ = std::fs::remove_dir_all(&kb);
    outcome
}

/// One run of `questions` questions by `clients` threads.
struct Run {
    /// The answered questions' latencies, seconds, sorted.
    latencies: Vec<f64>,
    /// Each question's time from its first attempt to its answer (the 429s
    /// and waits included), seconds, sorted.
    to_answer: Vec<f64>,
    /// 429 replies (asked again).
    busy: usize,
    /// Wall time of the whole run, seconds.
    wall: f64,
}

impl Run {
    fn p(&self, q: f64) -> f64 {
        percentile(&self.latencies, q)
    }

    fn throughput(&self) -> f64 {
        self.latencies.len() as f64 / self.wall
    }
}

/// What one attempt at a question gave.
enum Attempt {
    Answered,
    Busy,
}

fn bench(kb: &Path, pdfs: &Path, questions: usize, clients: &[usize], max_concurrent: usize) -> anyhow::Result<()> {
    let started = Instant::now();
    let report = docintel_kb::add(kb, &[pdfs.to_owned()], 2, &mut |_, _, _| {})?;
    ensure!(report.failed.is_empty(), "could not add {:?}", report.failed);
    let add_s = started.elapsed().as_secs_f64();
    let listed = docintel_kb::list(kb)?.documents;
    let pages: u64 = listed.iter().map(|d| u64::from(d.pages)).sum();
    let key = docintel_serve::add_key(kb)?;
    let options = AskOptions::new(5);
    let limits = Limits { max_concurrent, ..Limits::default() };
    let state = AppState::new(vec![TenantKb::load(kb.to_owned())?], options.clone(), limits)?;
    let server = docintel_serve::start("127.0.0.1:0".parse()?, state)?;
    let addr = server.addr();
    let engine = Engine::new(&options)?;
    let asked: Vec<&str> = (0..questions).map(|i| QUESTIONS[i % QUESTIONS.len()]).collect();

    let in_process = |question: &str| -> anyhow::Result<Attempt> {
        docintel_kb::ask(kb, &engine, question, &options, docintel_kb::DEFAULT_CANDIDATES)?;
        Ok(Attempt::Answered)
    };
    let over_http = |question: &str| -> anyhow::Result<Attempt> {
        let body = serde_json::json!({ "question": question }).to_string();
        let (status, reply) = post(addr, "/v1/ask", &key, &body)?;
        match status {
            200 if reply.contains("\"answer\"") => Ok(Attempt::Answered),
            429 => Ok(Attempt::Busy),
            _ => bail!("POST /v1/ask {question:?}: {status} {reply}"),
        }
    };
    // Warm up both paths (index readers, the page cache) outside the figures.
    for question in QUESTIONS {
        in_process(question)?;
        over_http(question)?;
    }

    let profile = if cfg!(debug_assertions) {
        "dev build: workspace crates unoptimised, dependencies opt-level 2"
    } else {
        "release build"
    };
    println!(
        "bench serve: {} documents, {pages} pages ({}, kb add {add_s:.2} s), {questions} questions per run, server --max-concurrent {max_concurrent}, {profile}",
        listed.len(),
        pdfs.display()
    );
    println!(
        "{:>7}  {:<10} {:>9} {:>9} {:>8} {:>6}   HTTP / in-process",
        "clients", "path", "p50 ms", "p95 ms", "q/s", "429s"
    );
    for &n in clients {
        let reference = load(n, &asked, &in_process)?;
        let http = load(n, &asked, &over_http)?;
        for (name, run) in [("in-process", &reference), ("HTTP", &http)] {
            print!(
                "{n:>7}  {name:<10} {:>9.1} {:>9.1} {:>8.2} {:>6}",
                run.p(0.5) * 1e3,
                run.p(0.95) * 1e3,
                run.throughput(),
                run.busy
            );
            if std::ptr::eq(run, &http) {
                print!(
                    "   p50 {:.2}x, p95 {:.2}x, throughput {:.2}x",
                    http.p(0.5) / reference.p(0.5),
                    http.p(0.95) / reference.p(0.95),
                    http.throughput() / reference.throughput()
                );
            }
            println!();
        }
        if http.busy > 0 {
            println!(
                "{:>7}  {:<10} {:>9.1} {:>9.1}   (HTTP, first attempt to answer: the 429s and waits included)",
                "",
                "",
                percentile(&http.to_answer, 0.5) * 1e3,
                percentile(&http.to_answer, 0.95) * 1e3
            );
        }
    }
    println!(
        "(429s: replies `busy` when every one of the server's {max_concurrent} permits was taken; not latencies: the client asked again after {} ms)",
        BUSY_WAIT.as_millis()
    );
    drop(server);
    Ok(())
}

/// Asks every question of `asked` once, `clients` at a time, each thread
/// taking the next question; times each answered attempt.
fn load(clients: usize, asked: &[&str], ask: &(dyn Fn(&str) -> anyhow::Result<Attempt> + Sync)) -> anyhow::Result<Run> {
    let next = AtomicUsize::new(0);
    let busy = AtomicUsize::new(0);
    let latencies = Mutex::new(Vec::new());
    let to_answer = Mutex::new(Vec::new());
    let started = Instant::now();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let workers: Vec<_> = (0..clients)
            .map(|_| {
                scope.spawn(|| -> anyhow::Result<()> {
                    while let Some(question) = asked.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let first = Instant::now();
                        loop {
                            let attempt = Instant::now();
                            match ask(question)? {
                                Attempt::Answered => {
                                    let seconds = attempt.elapsed().as_secs_f64();
                                    latencies.lock().expect("no client panicked").push(seconds);
                                    to_answer.lock().expect("no client panicked").push(first.elapsed().as_secs_f64());
                                    break;
                                }
                                Attempt::Busy => {
                                    busy.fetch_add(1, Ordering::Relaxed);
                                    std::thread::sleep(BUSY_WAIT);
                                }
                            }
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        for worker in workers {
            worker.join().map_err(|_| anyhow::anyhow!("a client panicked"))??;
        }
        Ok(())
    })?;
    let wall = started.elapsed().as_secs_f64();
    let sorted = |values: Mutex<Vec<f64>>| {
        let mut values = values.into_inner().expect("no client panicked");
        values.sort_by(f64::total_cmp);
        values
    };
    Ok(Run { latencies: sorted(latencies), to_answer: sorted(to_answer), busy: busy.into_inner(), wall })
}

/// `POST path` with a JSON body over HTTP/1.1 (`Connection: close`): the
/// status and the body as text.
fn post(addr: SocketAddr, path: &str, key: &str, body: &str) -> anyhow::Result<(u16, String)> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(300)))?;
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").context("no header block in the reply")?;
    let status_line = String::from_utf8_lossy(&raw[..split]);
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .with_context(|| format!("no status in {status_line:?}"))?;
    Ok((status, String::from_utf8_lossy(&raw[split + 4..]).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_reply_is_counted_and_asked_again_not_timed() {
        let calls = AtomicUsize::new(0);
        // Every other attempt is a 429.
        let ask = |_: &str| -> anyhow::Result<Attempt> {
            let n = calls.fetch_add(1, Ordering::Relaxed);
            Ok(if n.is_multiple_of(2) { Attempt::Busy } else { Attempt::Answered })
        };
        let run = load(2, &["a", "b", "c"], &ask).unwrap();
        assert_eq!(run.latencies.len(), 3);
        assert_eq!(run.busy, 3);
        assert_eq!(calls.into_inner(), 6);
        // A latency is one answered attempt, never the 20 ms waits after a 429.
        assert!(run.p(1.0) < BUSY_WAIT.as_secs_f64(), "{:?}", run.latencies);
    }
}
