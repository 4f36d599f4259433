//! `cargo xtask eval-retrieval [--shared DIR] [--verbose]`: retrieval measured on the
//! NIST SP 800-53 catalog rendering (native outline) with its 50 gold
//! questions.
//!
//! For every question: does any passage shown (top 5) sit on the gold page,
//! with TOC routing and, as the baseline, without (flat keyword retrieval);
//! how many router lines were shown; how long question parsing plus
//! retrieval took with the parsed document cached (p50, p95).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use docintel::schema::{ParsedQuestion, QuestionParser, Retriever, TraceEvent};
use docintel::{KeywordRetriever, RetrieveConfig, RuleParser, parse_pdf};
use serde_json::Value;

const PDF: &str = "core/nist_sp800-53r5_catalog_rendered.pdf";
const QA: &str = "core/nist_sp800-53r5_rendered_qa.json";

struct Outcome {
    hit: bool,
    lines_shown: usize,
    micros: u128,
    pages: Vec<u32>,
    events: Vec<TraceEvent>,
}

fn run_one(
    retriever: &KeywordRetriever,
    document: &docintel::schema::ParsedDocument,
    question: &str,
    gold: u32,
    toc: bool,
) -> anyhow::Result<Outcome> {
    let clock = Instant::now();
    let mut parsed: ParsedQuestion = RuleParser::new().parse(question, &document.profile)?;
    parsed.activations.use_toc_navigation = toc;
    let mut events: Vec<TraceEvent> = Vec::new();
    let retrieval = retriever.retrieve(&parsed, document, &mut events)?;
    let micros = clock.elapsed().as_micros();
    let lines_shown =
        events.iter().filter(|e| e.step == "toc_level").map(|e| e.detail["lines"].as_array().map_or(0, Vec::len)).sum();
    let pages: Vec<u32> = retrieval.passages.iter().map(|p| p.page).collect();
    Ok(Outcome { hit: pages.contains(&gold), lines_shown, micros, pages, events })
}

fn percentile(sorted: &[u128], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[index] as f64 / 1000.0
}

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let mut shared = crate::tidy::project_root().join("../shared/fixtures");
    let mut verbose = false;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--shared" => shared = PathBuf::from(iter.next().context("--shared needs a value")?),
            "--verbose" => verbose = true,
            other => bail!("unknown eval-retrieval argument {other}"),
        }
    }
    let qa: Value = serde_json::from_str(
        &std::fs::read_to_string(shared.join(QA)).with_context(|| format!("reading {}", shared.join(QA).display()))?,
    )?;
    let items = qa["items"].as_array().context("QA file has no items")?;
    let clock = Instant::now();
    let document = parse_pdf(&shared.join(PDF))?;
    let parse_ms = clock.elapsed().as_millis();
    println!(
        "{PDF}: {} pages, {} lines, {} TOC entries (parsed once in {parse_ms} ms, cached)",
        document.pages.len(),
        document.lines.len(),
        document.toc.len()
    );
    let retriever = KeywordRetriever::new(RetrieveConfig { top_k: 5, window: 2, reserve: 10 });

    let (mut hits, mut flat_hits) = (0, 0);
    let mut lines = Vec::new();
    let mut micros = Vec::new();
    for item in items {
        let question = item["question"].as_str().context("item without question")?;
        let gold = item["evidence_page_1based_in_rendered_pdf"].as_u64().context("item without gold page")? as u32;
        let routed = run_one(&retriever, &document, question, gold, true)?;
        let flat = run_one(&retriever, &document, question, gold, false)?;
        hits += usize::from(routed.hit);
        flat_hits += usize::from(flat.hit);
        lines.push(routed.lines_shown);
        micros.push(routed.micros);
        if !routed.hit || !flat.hit {
            println!(
                "{:<6} routed {:<4} {:?} flat {:<4} {:?} gold p.{gold}: {question}",
                "miss",
                if routed.hit { "hit" } else { "MISS" },
                routed.pages,
                if flat.hit { "hit" } else { "MISS" },
                flat.pages,
            );
            if verbose && !routed.hit {
                for event in &routed.events {
                    let mut detail = event.detail.clone();
                    if let Some(lines) = detail.get_mut("lines").and_then(Value::as_array_mut) {
                        lines.truncate(8);
                    }
                    println!("    {}: {detail}", event.step);
                }
            }
        }
    }
    let n = items.len().max(1) as f64;
    micros.sort_unstable();
    let mean_lines = lines.iter().sum::<usize>() as f64 / n;
    let max_lines = lines.iter().copied().max().unwrap_or(0);
    println!();
    println!("questions                         {}", items.len());
    println!("gold page hit, TOC routing        {:.2} ({hits}/{})", hits as f64 / n, items.len());
    println!("gold page hit, flat (no TOC)      {:.2} ({flat_hits}/{})", flat_hits as f64 / n, items.len());
    println!("router lines shown per question   mean {mean_lines:.1}, max {max_lines}");
    println!(
        "latency (question parse + retrieve, document cached)  p50 {:.1} ms, p95 {:.1} ms",
        percentile(&micros, 0.50),
        percentile(&micros, 0.95)
    );
    Ok(())
}
