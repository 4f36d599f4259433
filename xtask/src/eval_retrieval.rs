//! `cargo xtask eval-retrieval [--shared DIR] [--only nist|financebench] [--limit N] [--no-cache]
//! [--page-evidence F] [--verbose]`
//! (also `cargo xtask eval retrieval ...`): retrieval measured on two gold sets.
//!
//! - NIST SP 800-53 catalog rendering (native outline, 50 gold questions):
//!   does any passage shown (top 5) sit on the gold page, with TOC routing
//!   and, as the baseline, without (flat keyword retrieval); how many router
//!   lines were shown; how long question parsing plus retrieval took with the
//!   parsed document cached (p50, p95).
//! - FinanceBench (the rows whose PDF is present): evidence-page recall@5 of
//!   our retrieval (the first 5 distinct pages in our rank order — passages
//!   shown, then the reserve — include an evidence page)
//!   against a flat Okapi BM25 over page texts (k1 = 1.2, b = 0.75, the
//!   question's tokens) computed in the same run, per question type too.
//!   Every PDF is parsed once; the parsed documents are cached as JSON under
//!   `target/eval-cache/` keyed by the PDF's content hash and the parser's
//!   source stamp ([`docintel::PARSER_BUILD`]), so changed parser code
//!   re-parses (`--no-cache` always re-parses).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use docintel::schema::{ParsedDocument, ParsedQuestion, QuestionParser, Retriever, TraceEvent};
use docintel::{KeywordRetriever, RetrieveConfig, RuleParser, parse_pdf};
use serde_json::Value;

const PDF: &str = "core/nist_sp800-53r5_catalog_rendered.pdf";
const QA: &str = "core/nist_sp800-53r5_rendered_qa.json";
const FINANCEBENCH: &str = "financebench/financebench_with_local_pdfs.jsonl";

/// Passages (and baseline pages) counted for recall.
const TOP_K: usize = 5;

struct Outcome {
    hit: bool,
    lines_shown: usize,
    micros: u128,
    pages: Vec<u32>,
    events: Vec<TraceEvent>,
}

/// One rule parser for the whole run: building one compiles its regexes,
/// which is not part of answering a question.
fn parser() -> &'static RuleParser {
    static PARSER: std::sync::OnceLock<RuleParser> = std::sync::OnceLock::new();
    PARSER.get_or_init(RuleParser::new)
}

fn run_one(
    retriever: &KeywordRetriever,
    document: &ParsedDocument,
    question: &str,
    gold: &[u32],
    toc: bool,
) -> anyhow::Result<Outcome> {
    let clock = Instant::now();
    let mut parsed: ParsedQuestion = parser().parse(question, &document.profile)?;
    parsed.activations.use_toc_navigation &= toc;
    let mut events: Vec<TraceEvent> = Vec::new();
    let retrieval = retriever.retrieve(&parsed, document, &mut events)?;
    let micros = clock.elapsed().as_micros();
    let lines_shown =
        events.iter().filter(|e| e.step == "toc_level").map(|e| e.detail["lines"].as_array().map_or(0, Vec::len)).sum();
    // Recall@k over pages, like the BM25-over-pages baseline: the first k
    // distinct pages in our rank order (passages shown, then the reserve).
    let mut pages: Vec<u32> = Vec::new();
    for passage in retrieval.passages.iter().chain(&retrieval.reserve) {
        if pages.len() == TOP_K {
            break;
        }
        if !pages.contains(&passage.page) {
            pages.push(passage.page);
        }
    }
    Ok(Outcome { hit: pages.iter().any(|p| gold.contains(p)), lines_shown, micros, pages, events })
}

fn percentile(sorted: &[u128], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[index] as f64 / 1000.0
}

struct Args {
    shared: PathBuf,
    verbose: bool,
    only: Option<String>,
    limit: Option<usize>,
    cache: bool,
    page_evidence: Option<f64>,
}

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let mut parsed = Args {
        shared: crate::tidy::project_root().join("../shared/fixtures"),
        verbose: false,
        only: None,
        limit: None,
        cache: true,
        page_evidence: None,
    };
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--shared" => parsed.shared = PathBuf::from(iter.next().context("--shared needs a value")?),
            "--verbose" => parsed.verbose = true,
            "--no-cache" => parsed.cache = false,
            "--page-evidence" => {
                parsed.page_evidence = Some(iter.next().context("--page-evidence needs a value")?.parse()?)
            }
            "--only" => {
                let which = iter.next().context("--only needs nist or financebench")?;
                if which != "nist" && which != "financebench" {
                    bail!("--only takes nist or financebench, not {which}");
                }
                parsed.only = Some(which.clone());
            }
            "--limit" => parsed.limit = Some(iter.next().context("--limit needs a value")?.parse()?),
            other => bail!("unknown eval-retrieval argument {other}"),
        }
    }
    if parsed.only.as_deref() != Some("financebench") {
        nist(&parsed)?;
    }
    if parsed.only.as_deref() != Some("nist") {
        if parsed.only.is_none() {
            println!();
        }
        financebench(&parsed)?;
    }
    Ok(())
}

fn nist(args: &Args) -> anyhow::Result<()> {
    let shared = &args.shared;
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
    let retriever = retriever(args);

    let (mut hits, mut flat_hits) = (0, 0);
    let mut lines = Vec::new();
    let mut micros = Vec::new();
    for item in items {
        let question = item["question"].as_str().context("item without question")?;
        let gold = item["evidence_page_1based_in_rendered_pdf"].as_u64().context("item without gold page")? as u32;
        let routed = run_one(&retriever, &document, question, &[gold], true)?;
        let flat = run_one(&retriever, &document, question, &[gold], false)?;
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
            if args.verbose && !routed.hit {
                print_events(&routed.events);
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

/// The retriever measured: the standard one, or another page-evidence weight.
fn retriever(args: &Args) -> KeywordRetriever {
    let retriever =
        KeywordRetriever::new(RetrieveConfig { top_k: TOP_K, window: 2, reserve: 10, read_pages_whole: false });
    match args.page_evidence {
        Some(weight) => retriever.with_page_evidence(weight),
        None => retriever,
    }
}

fn print_events(events: &[TraceEvent]) {
    for event in events {
        let mut detail = event.detail.clone();
        if let Some(lines) = detail.get_mut("lines").and_then(Value::as_array_mut) {
            lines.truncate(8);
        }
        println!("    {}: {detail}", event.step);
    }
}

/// One FinanceBench row whose PDF is present.
struct Row {
    id: String,
    question_type: String,
    question: String,
    pdf: String,
    evidence_pages: Vec<u32>,
}

fn financebench_rows(shared: &Path) -> anyhow::Result<Vec<Row>> {
    let path = shared.join(FINANCEBENCH);
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut rows = Vec::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let row: Value = serde_json::from_str(line).with_context(|| format!("{} line {}", path.display(), n + 1))?;
        if row["pdf_present"].as_bool() != Some(true) {
            continue;
        }
        let pdf = row["pdf_path"].as_str().with_context(|| format!("line {}: no pdf_path", n + 1))?;
        let evidence_pages: Vec<u32> = row["evidence"]
            .as_array()
            .map(|e| e.iter().filter_map(|e| e["evidence_page_1based"].as_u64()).map(|p| p as u32).collect())
            .unwrap_or_default();
        if evidence_pages.is_empty() || !shared.join(pdf).is_file() {
            continue;
        }
        rows.push(Row {
            id: row["financebench_id"].as_str().unwrap_or("?").to_owned(),
            question_type: row["question_type"].as_str().unwrap_or("?").to_owned(),
            question: row["question"].as_str().unwrap_or_default().to_owned(),
            pdf: pdf.to_owned(),
            evidence_pages,
        });
    }
    Ok(rows)
}

/// Parses `pdf`, or loads the parsed document cached under `cache_dir` for
/// the same bytes.
///
/// The key also carries [`docintel::PARSER_BUILD`]: changed parser code
/// never reads tables cached by an older one.
fn load_document(pdf: &Path, cache_dir: Option<&Path>) -> anyhow::Result<(ParsedDocument, bool)> {
    let Some(cache_dir) = cache_dir else {
        return Ok((parse_pdf(pdf)?, false));
    };
    let bytes = std::fs::read(pdf).with_context(|| format!("reading {}", pdf.display()))?;
    let stem = pdf.file_stem().and_then(|s| s.to_str()).unwrap_or("document");
    let cached =
        cache_dir.join(format!("{stem}-{}-{}.json", &docintel::content_hash(&bytes)[..12], docintel::PARSER_BUILD));
    if let Ok(text) = std::fs::read_to_string(&cached)
        && let Ok(document) = serde_json::from_str::<ParsedDocument>(&text)
    {
        return Ok((document, true));
    }
    let document = parse_pdf(pdf)?;
    std::fs::create_dir_all(cache_dir)?;
    let tmp = cached.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_vec(&document)?)?;
    std::fs::rename(&tmp, &cached)?;
    Ok((document, false))
}

/// A PDF and its parsed document (and whether it came from the cache).
type Loaded = (String, anyhow::Result<(ParsedDocument, bool)>);

/// Parses every PDF once (two threads), from the cache when it can.
fn load_documents(
    shared: &Path,
    pdfs: &[String],
    cache_dir: Option<&Path>,
) -> anyhow::Result<HashMap<String, ParsedDocument>> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(2);
    let results: Vec<Vec<Loaded>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(pdf) = pdfs.get(i) else { break };
                        out.push((pdf.clone(), load_document(&shared.join(pdf), cache_dir)));
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
    });
    let mut documents = HashMap::new();
    let mut from_cache = 0;
    for (pdf, result) in results.into_iter().flatten() {
        match result {
            Ok((document, cached)) => {
                from_cache += usize::from(cached);
                documents.insert(pdf, document);
            }
            Err(error) => println!("skipped {pdf}: {error:#}"),
        }
    }
    println!("{} of {} PDFs loaded ({from_cache} from the cache)", documents.len(), pdfs.len());
    Ok(documents)
}

/// Okapi BM25 over the pages of one document (the flat baseline).
struct PageBm25 {
    index: docintel_retrieve::bm25::Bm25,
}

impl PageBm25 {
    fn new(document: &ParsedDocument) -> PageBm25 {
        let n_pages = document.pages.len().max(document.lines.last().map_or(0, |l| l.page as usize));
        let mut pages: Vec<Vec<String>> = vec![Vec::new(); n_pages];
        for line in &document.lines {
            let Some(index) = (line.page as usize).checked_sub(1).filter(|&i| i < n_pages) else { continue };
            pages[index].extend(crate::bm25::tokens(&line.text));
        }
        PageBm25 { index: docintel_retrieve::bm25::Bm25::new(pages) }
    }

    /// The `k` best pages (1-based) for the question's tokens, ties in page order.
    fn top(&self, question: &str, k: usize) -> Vec<u32> {
        crate::bm25::top(&self.index, question, k).into_iter().map(|(i, _)| i as u32 + 1).collect()
    }
}

#[derive(Default)]
struct Tally {
    n: usize,
    ours: usize,
    /// Ours without TOC routing (the same search over the whole document).
    no_toc: usize,
    bm25: usize,
}

fn financebench(args: &Args) -> anyhow::Result<()> {
    let mut rows = financebench_rows(&args.shared)?;
    if let Some(limit) = args.limit {
        rows.truncate(limit);
    }
    let mut pdfs: Vec<String> = rows.iter().map(|r| r.pdf.clone()).collect();
    pdfs.sort();
    pdfs.dedup();
    println!("FinanceBench: {} questions with their PDF present, {} PDFs", rows.len(), pdfs.len());
    let cache_dir = crate::tidy::project_root().join("target/eval-cache/financebench");
    let clock = Instant::now();
    let documents = load_documents(&args.shared, &pdfs, args.cache.then_some(cache_dir.as_path()))?;
    println!("documents ready in {:.1} s", clock.elapsed().as_secs_f64());
    let baselines: HashMap<&str, PageBm25> = documents.iter().map(|(k, d)| (k.as_str(), PageBm25::new(d))).collect();
    let retriever = retriever(args);

    let mut total = Tally::default();
    let mut by_type: BTreeMap<String, Tally> = BTreeMap::new();
    let mut micros = Vec::new();
    for row in &rows {
        let (Some(document), Some(bm25)) = (documents.get(&row.pdf), baselines.get(row.pdf.as_str())) else {
            continue;
        };
        let ours = run_one(&retriever, document, &row.question, &row.evidence_pages, true)?;
        let no_toc = run_one(&retriever, document, &row.question, &row.evidence_pages, false)?;
        let flat = bm25.top(&row.question, TOP_K);
        let flat_hit = flat.iter().any(|p| row.evidence_pages.contains(p));
        micros.push(ours.micros);
        for tally in [&mut total, by_type.entry(row.question_type.clone()).or_default()] {
            tally.n += 1;
            tally.ours += usize::from(ours.hit);
            tally.no_toc += usize::from(no_toc.hit);
            tally.bm25 += usize::from(flat_hit);
        }
        if !ours.hit && (args.verbose || flat_hit) {
            println!(
                "miss {} ours {:?} no-TOC {}{:?} bm25 {}{:?} gold {:?}: {}",
                row.id,
                ours.pages,
                if no_toc.hit { "hit " } else { "" },
                no_toc.pages,
                if flat_hit { "hit " } else { "" },
                flat,
                row.evidence_pages,
                row.question.chars().take(140).collect::<String>()
            );
            if args.verbose {
                print_events(&ours.events);
            }
        }
    }
    micros.sort_unstable();
    let share = |hits: usize, n: usize| hits as f64 / n.max(1) as f64;
    println!();
    println!("evidence-page recall@{TOP_K}           ours    no TOC  BM25 pages");
    for (name, t) in by_type.iter().chain([(&"all".to_owned(), &total)]) {
        println!(
            "  {name:<22} n={:<4} {:.2}    {:.2}    {:.2}   ({}/{} vs {}/{} vs {}/{})",
            t.n,
            share(t.ours, t.n),
            share(t.no_toc, t.n),
            share(t.bm25, t.n),
            t.ours,
            t.n,
            t.no_toc,
            t.n,
            t.bm25,
            t.n
        );
    }
    println!(
        "latency (question parse + retrieve, document cached)  p50 {:.1} ms, p95 {:.1} ms",
        percentile(&micros, 0.50),
        percentile(&micros, 0.95)
    );
    Ok(())
}
