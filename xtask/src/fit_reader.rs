//! `cargo xtask fit-reader --shared DIR [--wrong-cost C] [--alpha A]
//! [--out FILE] [--dry-run]`: fits the extractive reader's scoring model on
//! the *tuning* questions of every gold set and writes it to
//! `crates/docintel-generate/data/reader_model.json`.
//!
//! 1. Every tuning question (the split of [`crate::split::Split`]) is
//!    asked as `docintel ask` would; the passages retrieval gave generation
//!    are read again by [`ExtractiveGenerator::candidates`], and each
//!    candidate is labelled right when its value matches the gold (the
//!    scoring of [`crate::eval_dev`]).
//! 2. Per kind group, linfa's logistic regression (L2 penalty `alpha`) is
//!    fitted on the candidates' features: the candidate model.
//! 3. Per group, a second logistic regression maps the best candidate's
//!    log-odds and its margin over the runner-up to the chance that the
//!    answer is right (the confidence); the refusal threshold is the
//!    confidence that maximises, over the tuning questions, right answers
//!    plus right refusals minus `wrong-cost` (0.5) times wrong answers and
//!    `refuse-cost` (0.5) times refused answerable questions.
//!
//! Validation questions are never read here; `cargo xtask eval --shared`
//! reports them.
//!
//! Why a linear model: on the candidates `--dump` writes (852 tuning
//! questions, 882 parts, 57,696 candidates; 2026-12-03), compared once in
//! Python by the same four document folds, the best candidate of a held-out
//! part was right for 297 of 763 answerable parts with per-group logistic
//! regression (scikit-learn, C = 0.1), and for at most 292 with gradient-boosted trees (LightGBM:
//! one classifier pooled over the groups, one per group, or a lambdarank
//! ranker; four settings each) — and 287 with standardised features. Only
//! 516 of the 763 have a right candidate at all: candidate generation, not
//! the learner, bounds the reader, so no tree library is a dependency.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use docintel::schema::{AnswerValue, ParsedDocument};
use docintel::{AskOptions, QuestionParser, answer_parsed, parse_file};
use docintel_generate::{ExtractiveGenerator, reader_evidence_features, reader_features, reader_groups};
use linfa::prelude::*;
use linfa_logistic::LogisticRegression;
use ndarray::{Array1, Array2};
use serde_json::{Value, json};
use sha2::Digest;

use crate::eval_dev::{DevQuestion, gold_parts, values_match};
use crate::split::Split;

/// One candidate of one tuning question, labelled.
#[derive(Debug, Clone)]
struct Row {
    features: Vec<f64>,
    right: bool,
    eligible: bool,
    /// The value, folded (the runner-up is the best other value).
    key: String,
}

/// One part of one tuning question: its candidates and whether the
/// question can be answered.
#[derive(Debug, Clone)]
struct PartRows {
    group: String,
    /// Cross-validation fold (by document).
    fold: usize,
    rows: Vec<Row>,
    answerable: bool,
    /// The reader refuses whatever the model says (a constraint the
    /// document never mentions).
    forced_refusal: bool,
    /// The gold set it comes from (for `--dump`).
    set: String,
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// Fits a logistic regression; returns (weights, intercept) so that
/// `sigmoid(w·x + b)` is the probability of `true`.
fn fit(x: &[Vec<f64>], y: &[bool], alpha: f64) -> anyhow::Result<(Vec<f64>, f64)> {
    let n = x.len();
    let d = x.first().map_or(0, Vec::len);
    if n == 0 || !y.iter().any(|b| *b) || y.iter().all(|b| *b) {
        bail!("cannot fit: {n} rows, {} positive", y.iter().filter(|b| **b).count());
    }
    let data = Array2::from_shape_vec((n, d), x.iter().flatten().copied().collect())?;
    let targets = Array1::from(y.to_vec());
    let dataset = Dataset::new(data, targets);
    let model = LogisticRegression::default().alpha(alpha).max_iterations(500).fit(&dataset)?;
    let mut w: Vec<f64> = model.params().to_vec();
    let mut b = model.intercept();
    // linfa's probability may be that of either label: orient it so that
    // the right candidates score higher on the training data.
    let mean = |want: bool| {
        let (sum, count) = x.iter().zip(y).filter(|(_, l)| **l == want).fold((0.0, 0usize), |(s, c), (row, _)| {
            (s + sigmoid(b + w.iter().zip(row).map(|(a, v)| a * v).sum::<f64>()), c + 1)
        });
        sum / count.max(1) as f64
    };
    if mean(true) < mean(false) {
        w.iter_mut().for_each(|v| *v = -*v);
        b = -b;
    }
    Ok((w, b))
}

/// Negatives kept per part (`--negatives N`, default 0: all of them). A
/// cap keeps questions with hundreds of candidates from outweighing the
/// others, half the kept ones the hardest (closest to the question terms),
/// half spread over the rest; measured on the split, keeping them all
/// ranked better (validation answers 0.320 against 0.226 with 40), so the
/// cap is off.
static NEGATIVES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The rows of a part used for fitting (every right one, some wrong ones).
fn fitting_rows(p: &PartRows) -> Vec<&Row> {
    let limit = NEGATIVES.load(std::sync::atomic::Ordering::Relaxed);
    if limit == 0 {
        return p.rows.iter().collect();
    }
    let cov_near = reader_features().iter().position(|f| *f == "cov_near").unwrap_or(0);
    let mut wrong: Vec<&Row> = p.rows.iter().filter(|r| !r.right).collect();
    wrong.sort_by(|a, b| b.features[cov_near].total_cmp(&a.features[cov_near]));
    let mut kept: Vec<&Row> = p.rows.iter().filter(|r| r.right).collect();
    if wrong.len() <= limit {
        kept.extend(wrong);
    } else {
        let hard = limit / 2;
        kept.extend(&wrong[..hard]);
        let rest = &wrong[hard..];
        let step = rest.len() as f64 / (limit - hard) as f64;
        kept.extend((0..limit - hard).map(|k| rest[(k as f64 * step) as usize]));
    }
    kept
}

/// The share of questions the document cannot answer that the refusal
/// threshold assumes (percent; `--unanswerable-share P`, 0 for the gold
/// sets' own share). A product assumption like the costs: most questions
/// users put to a document are about what it says, and the gold sets
/// over-represent the others (one question in six written to be refused,
/// a fifth of MMLongBench-Doc's).
static UNANSWERABLE_SHARE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(10);

/// Folds for choosing the penalty: documents hashed into four groups.
pub(crate) const FOLDS: usize = 4;
/// The penalties tried.
const ALPHAS: [f64; 5] = [0.01, 0.1, 1.0, 10.0, 100.0];

pub(crate) fn fold_of(doc: &str) -> usize {
    let digest = sha2::Sha256::digest(doc.as_bytes());
    digest[0] as usize % FOLDS
}

/// How many answerable parts have a right best complete candidate under
/// (w, b).
fn top1_right(parts: &[&PartRows], w: &[f64], b: f64) -> usize {
    parts
        .iter()
        .filter(|p| p.answerable)
        .filter(|p| {
            p.rows
                .iter()
                .filter(|r| r.eligible)
                .max_by(|x, y| dot(w, b, &x.features).total_cmp(&dot(w, b, &y.features)))
                .is_some_and(|r| r.right)
        })
        .count()
}

/// The penalty with the most right best candidates on held-out folds; on a
/// tie, the one whose held-out probabilities are best (the lower mean log
/// loss over the candidates: the confidence and the refusals read them).
fn choose_alpha(of: &[&PartRows]) -> (f64, Vec<(f64, usize)>) {
    let mut scores: Vec<(f64, usize, f64)> = Vec::new();
    for alpha in ALPHAS {
        let mut right = 0;
        let (mut loss, mut count) = (0.0, 0usize);
        for k in 0..FOLDS {
            let train: Vec<&PartRows> = of.iter().copied().filter(|p| p.fold != k).collect();
            let test: Vec<&PartRows> = of.iter().copied().filter(|p| p.fold == k).collect();
            let x: Vec<Vec<f64>> =
                train.iter().flat_map(|p| fitting_rows(p).into_iter().map(|r| r.features.clone())).collect();
            let y: Vec<bool> = train.iter().flat_map(|p| fitting_rows(p).into_iter().map(|r| r.right)).collect();
            if let Ok((w, b)) = fit(&x, &y, alpha) {
                right += top1_right(&test, &w, b);
                for r in test.iter().flat_map(|p| &p.rows) {
                    let p = sigmoid(dot(&w, b, &r.features)).clamp(1e-9, 1.0 - 1e-9);
                    loss -= if r.right { p.ln() } else { (1.0 - p).ln() };
                    count += 1;
                }
            }
        }
        scores.push((alpha, right, loss / count.max(1) as f64));
    }
    let best = scores.iter().max_by(|a, b| a.1.cmp(&b.1).then(b.2.total_cmp(&a.2))).map_or(1.0, |s| s.0);
    (best, scores.into_iter().map(|(a, r, _)| (a, r)).collect())
}

/// The calibration's penalty: the one whose confidences have the lowest
/// log loss on held-out folds (the calibration is fitted on three folds'
/// points and scored on the fourth's).
fn stage_penalty(x: &[Vec<f64>], y: &[bool], folds: &[usize]) -> f64 {
    let mut best = (f64::INFINITY, 0.1);
    for alpha in ALPHAS {
        let (mut loss, mut count) = (0.0, 0usize);
        for k in 0..FOLDS {
            let train: Vec<usize> = (0..x.len()).filter(|&i| folds[i] != k).collect();
            let tx: Vec<Vec<f64>> = train.iter().map(|&i| x[i].clone()).collect();
            let ty: Vec<bool> = train.iter().map(|&i| y[i]).collect();
            let Ok((w, b)) = fit(&tx, &ty, alpha) else { continue };
            for i in (0..x.len()).filter(|&i| folds[i] == k) {
                let p = sigmoid(dot(&w, b, &x[i])).clamp(1e-9, 1.0 - 1e-9);
                loss -= if y[i] { p.ln() } else { (1.0 - p).ln() };
                count += 1;
            }
        }
        let mean = loss / count.max(1) as f64;
        if count > 0 && mean < best.0 {
            best = (mean, alpha);
        }
    }
    best.1
}

/// One tuning part at stage 2: its calibrated confidence, whether its best
/// candidate is right, whether it is answerable, whether code refuses it.
#[derive(Debug, Clone, Copy)]
struct Point {
    confidence: f64,
    right: bool,
    answerable: bool,
    forced: bool,
}

/// Right, wrong, refused rightly, refused answerable.
type Outcome = (usize, usize, usize, usize);

/// The [`Outcome`] of answering at threshold `tau`.
fn outcome(points: &[Point], tau: f64) -> Outcome {
    let (mut right, mut wrong, mut refused_ok, mut refused_bad) = (0, 0, 0, 0);
    for p in points {
        let answered = !p.forced && p.confidence >= tau;
        match (answered, p.answerable) {
            (true, _) if p.right => right += 1,
            (true, _) => wrong += 1,
            (false, false) => refused_ok += 1,
            (false, true) => refused_bad += 1,
        }
    }
    (right, wrong, refused_ok, refused_bad)
}

/// The threshold of best utility over `points`; where neighbouring
/// thresholds tie, the middle of that plateau (the tuning questions do not
/// say where in it the boundary lies, so the one farthest from both ends is
/// the least fitted to them).
fn best_threshold(points: &[Point], wrong_cost: f64, refuse_cost: f64) -> (f64, Outcome) {
    // The questions the documents cannot answer count with the weight that
    // gives them the share users are assumed to ask ([`UNANSWERABLE_SHARE`]),
    // not the share the gold sets were written with.
    let unanswerable = points.iter().filter(|p| !p.answerable).count();
    let answerable = points.len() - unanswerable;
    let share = UNANSWERABLE_SHARE.load(std::sync::atomic::Ordering::Relaxed) as f64 / 100.0;
    let weight_unanswerable = if share > 0.0 && unanswerable > 0 && answerable > 0 {
        share / (1.0 - share) * answerable as f64 / unanswerable as f64
    } else {
        1.0
    };
    let outcomes: Vec<(f64, f64, Outcome)> = (1..100)
        .map(|step| {
            let tau = step as f64 * 0.01;
            let o = outcome(points, tau);
            let mut utility = 0.0;
            for p in points {
                let answered = !p.forced && p.confidence >= tau;
                let weight = if p.answerable { 1.0 } else { weight_unanswerable };
                utility += weight
                    * match (answered, p.answerable) {
                        (true, _) if p.right => 1.0,
                        (true, _) => -wrong_cost,
                        (false, false) => 1.0,
                        (false, true) => -refuse_cost,
                    };
            }
            (utility, tau, o)
        })
        .collect();
    let top = outcomes.iter().map(|o| o.0).fold(f64::NEG_INFINITY, f64::max);
    let first = outcomes.iter().position(|o| o.0 >= top - 1e-9).unwrap_or(0);
    let run = outcomes[first..].iter().take_while(|o| o.0 >= top - 1e-9).count().max(1);
    let best = outcomes[first + (run - 1) / 2];
    (best.1, best.2)
}

/// A part's stage-2 point: its best eligible candidate's log-odds and its
/// margin over the best rival value, and whether that candidate is right.
fn stage_point(p: &PartRows, w: &[f64], b: f64) -> Option<(Vec<f64>, bool)> {
    let mut scored: Vec<(f64, &Row)> =
        p.rows.iter().filter(|r| r.eligible).map(|r| (dot(w, b, &r.features), r)).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let (z1, best) = scored.first()?;
    let z2 = scored.iter().find(|s| s.1.key != best.key).map_or(z1 - 10.0, |s| s.0);
    let margin = sigmoid(*z1) - sigmoid(z2);
    // The best candidate's evidence, as the reader's confidence reads it.
    let names = reader_features();
    let evidence = reader_evidence_features()
        .iter()
        .map(|e| names.iter().position(|n| n == e).map_or(0.0, |at| best.features[at]));
    Some((std::iter::once(*z1).chain(std::iter::once(margin)).chain(evidence).collect(), best.right && p.answerable))
}

fn dot(w: &[f64], b: f64, x: &[f64]) -> f64 {
    b + w.iter().zip(x).map(|(a, v)| a * v).sum::<f64>()
}

/// NIST, FinanceBench (numeric gold), the shared invoices and CUAD in the
/// common question form, for fitting.
fn legacy_sets(shared: &Path) -> anyhow::Result<Vec<DevQuestion>> {
    let mut out = Vec::new();
    let q = |set: &str, id: String, doc: &str, question: &str, answer_type: &str, answer: Option<String>| DevQuestion {
        set: set.to_owned(),
        id,
        doc: doc.to_owned(),
        question: question.to_owned(),
        answer_type: answer_type.to_owned(),
        answerable: answer.is_some(),
        answer,
        aliases: Vec::new(),
        pages: Vec::new(),
        kind: "lookup".to_owned(),
    };
    // NIST SP 800-53.
    let nist_doc = "core/nist_sp800-53r5_catalog_rendered.pdf";
    let gold: Value =
        serde_json::from_str(&std::fs::read_to_string(shared.join("core/nist_sp800-53r5_rendered_qa.json"))?)?;
    for (i, item) in gold["items"].as_array().into_iter().flatten().enumerate() {
        let question = item["question"].as_str().unwrap_or_default();
        let answer = item["answer"].as_str().unwrap_or_default();
        if item["kind"].as_str() == Some("list") {
            let ids: Vec<&str> = answer.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
            out.push(q("nist", format!("nist-{i}"), nist_doc, question, "list", Some(ids.join(" | "))));
        } else {
            out.push(q("nist", format!("nist-{i}"), nist_doc, question, "text", Some(answer.to_owned())));
        }
    }
    // FinanceBench, numeric gold.
    let text = std::fs::read_to_string(shared.join("financebench/financebench_with_local_pdfs.jsonl"))?;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let item: Value = serde_json::from_str(line)?;
        if item["pdf_present"].as_bool() != Some(true) {
            continue;
        }
        let answer = item["answer"].as_str().unwrap_or_default();
        let numeric =
            !answer.trim().is_empty() && answer.trim().chars().all(|c| c.is_ascii_digit() || "$-.,%() ".contains(c));
        if numeric {
            out.push(q(
                "financebench",
                item["financebench_id"].as_str().unwrap_or("?").to_owned(),
                item["pdf_path"].as_str().unwrap_or_default(),
                item["question"].as_str().unwrap_or_default(),
                "amount",
                Some(answer.trim().to_owned()),
            ));
        }
    }
    // Shared invoices: total, date, and a question none can answer.
    let dir = shared.join("invoices");
    let mut pdfs: Vec<PathBuf> = std::fs::read_dir(&dir)?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    pdfs.retain(|p| p.extension().is_some_and(|e| e == "pdf"));
    pdfs.sort();
    for pdf in pdfs {
        let name = pdf.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let doc = format!("invoices/{name}");
        let gold: Value = std::fs::read_to_string(pdf.with_extension("json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| v.get(0).cloned())
            .unwrap_or(Value::Null);
        if let Some(amount) = gold.get("amount").and_then(Value::as_f64) {
            out.push(q(
                "invoices",
                format!("{name}-total"),
                &doc,
                "What is the total amount?",
                "amount",
                Some(amount.to_string()),
            ));
        }
        if let Some(date) = gold.get("date").and_then(Value::as_str) {
            out.push(q(
                "invoices",
                format!("{name}-date"),
                &doc,
                "What is the invoice date?",
                "date",
                Some(date.to_owned()),
            ));
        }
        out.push(q("invoices", format!("{name}-dog"), &doc, "What is the name of the CEO's dog?", "text", None));
    }
    // CUAD: title, governing law, date, parties.
    let gold: Value =
        serde_json::from_str(&std::fs::read_to_string(shared.join("contracts/cuad/cuad_subset_gold.json"))?)?;
    for contract in gold.as_array().into_iter().flatten() {
        let doc = contract["pdf"].as_str().unwrap_or_default();
        let label =
            |key: &str| contract["labels"][key].as_str().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
        if let Some(name) = label("Document Name-Answer") {
            out.push(q("cuad", format!("{doc}-name"), doc, "What is the title of this agreement?", "text", Some(name)));
        }
        if let Some(law) = label("Governing Law-Answer") {
            out.push(q(
                "cuad",
                format!("{doc}-law"),
                doc,
                "Which state's law governs this agreement?",
                "text",
                Some(law),
            ));
        }
        if let Some(date) = label("Agreement Date-Answer").and_then(|d| crate::eval_sets::cuad_date_iso(&d)) {
            out.push(q("cuad", format!("{doc}-date"), doc, "What is the date of this agreement?", "date", Some(date)));
        }
        if let Some(parties) = label("Parties-Answer") {
            let names: Vec<String> = parties
                .split(';')
                .map(|p| p.split('(').next().unwrap_or_default().trim().to_owned())
                .filter(|p| p.len() > 2)
                .collect();
            if let Some(first) = names.first() {
                let mut question = q(
                    "cuad",
                    format!("{doc}-parties"),
                    doc,
                    "Who are the parties to this agreement?",
                    "organisation",
                    Some(first.clone()),
                );
                question.aliases = names[1..].to_vec();
                out.push(question);
            }
        }
    }
    Ok(out)
}

/// `cargo xtask candidates FILE QUESTION [N]`: every candidate the reader
/// scored for one question (the best `N`, default 15), with its passage,
/// line, probability and the features that are not zero: what a reader
/// change is checked against by hand.
pub(crate) fn candidates(args: &[String]) -> anyhow::Result<()> {
    let (Some(file), Some(question)) = (args.first(), args.get(1)) else {
        bail!("usage: cargo xtask candidates FILE QUESTION [N]");
    };
    let n: usize = args.get(2).map(|a| a.parse()).transpose().context("N is a count")?.unwrap_or(15);
    let options = AskOptions::new(5);
    let parser = docintel::question_parser(&options)?;
    let document = parse_file(Path::new(file))?;
    let parsed = parser.parse(question, &document.profile)?;
    let run = answer_parsed(&document, parsed, &parser, &options)?;
    let q = &run.parsed_question;
    println!(
        "type {} · shape {:?} · focus {:?} · constraints {:?}",
        q.answer_type, q.answer_shape, q.generation.answer_focus, q.generation.constraints
    );
    println!(
        "passages: {}",
        run.passages
            .iter()
            .map(|p| format!("p{} l{}-{}", p.page, p.line_start, p.line_end))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut all = ExtractiveGenerator::new().candidates(q, &document, &run.passages)?;
    all.sort_by(|a, b| b.probability.total_cmp(&a.probability));
    let names = reader_features();
    for c in all.iter().take(n) {
        let features: Vec<String> = names
            .iter()
            .zip(&c.features)
            .filter(|(_, v)| v.abs() > 0.005)
            .map(|(name, v)| format!("{name}={v:.2}"))
            .collect();
        println!(
            "{:.3} p{} l{} [{}] {:?}{}\n      {}",
            c.probability,
            c.span.page,
            c.span.line_start,
            c.group,
            c.text.chars().take(80).collect::<String>(),
            if c.missing.is_empty() { String::new() } else { format!(" missing {:?}", c.missing) },
            features.join(" ")
        );
    }
    println!("answer: {}", run.output.answer.items.iter().map(|i| i.value.to_string()).collect::<Vec<_>>().join("; "));
    Ok(())
}

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let mut shared: Option<PathBuf> = None;
    // The utility the answer threshold maximises: a right answer or a right
    // refusal gains 1, a wrong answer costs 0.75 and refusing an answerable
    // question 0.5 (a wrong value with a verified citation is worse for
    // someone who must defend it than a "not found" that names its best
    // guess). A product preference, not fitted; `--wrong-cost` and
    // `--refuse-cost` change it.
    let mut wrong_cost = 0.75;
    let mut refuse_cost = 0.5;
    let mut alpha_override: Option<f64> = None;
    let mut per_group_threshold = false;
    let mut dry_run = false;
    let mut dump: Option<PathBuf> = None;
    let mut out = crate::tidy::project_root().join("crates/docintel-generate/data/reader_model.json");
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let mut value = || iter.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--shared" => shared = Some(PathBuf::from(value()?)),
            "--per-group-threshold" => per_group_threshold = true,
            "--wrong-cost" => wrong_cost = value()?.parse().context("--wrong-cost takes a number")?,
            "--refuse-cost" => refuse_cost = value()?.parse().context("--refuse-cost takes a number")?,
            "--alpha" => alpha_override = Some(value()?.parse().context("--alpha takes a number")?),
            "--out" => out = PathBuf::from(value()?),
            "--dry-run" => dry_run = true,
            "--dump" => dump = Some(PathBuf::from(value()?)),
            "--unanswerable-share" => UNANSWERABLE_SHARE.store(
                value()?.parse().context("--unanswerable-share takes a percentage")?,
                std::sync::atomic::Ordering::Relaxed,
            ),
            "--negatives" => NEGATIVES
                .store(value()?.parse().context("--negatives takes a count")?, std::sync::atomic::Ordering::Relaxed),
            other => bail!("unknown fit-reader argument {other}"),
        }
    }
    let shared = shared.context("fit-reader needs --shared DIR (the gold sets)")?;
    let split = Split::load()?;
    let mut questions = crate::eval_dev::load_all(&shared)?;
    questions.retain(|q| q.set != "mmlongbench_vision");
    questions.extend(legacy_sets(&shared)?);
    questions.retain(|q| split.part(&q.doc) == "tuning");
    eprintln!("fit-reader: {} tuning questions", questions.len());

    let options = AskOptions::new(5);
    let parser = docintel::question_parser(&options)?;
    let generator = ExtractiveGenerator::new();
    let mut documents: BTreeMap<String, Option<ParsedDocument>> = BTreeMap::new();
    let mut parts: Vec<PartRows> = Vec::new();
    let mut dumped: Vec<Value> = Vec::new();
    for q in &questions {
        let document = documents.entry(q.doc.clone()).or_insert_with(|| parse_file(&shared.join(&q.doc)).ok());
        let Some(document) = document.as_ref() else { continue };
        let parsed = parser.parse(&q.question, &document.profile)?;
        let run = answer_parsed(document, parsed, &parser, &options)?;
        let candidates = generator.candidates(&run.parsed_question, document, &run.passages)?;
        let golds = gold_parts(q);
        let n_parts = candidates.iter().map(|c| c.part + 1).max().unwrap_or(1);
        let mut by_part: BTreeMap<usize, PartRows> = BTreeMap::new();
        let listing = run.parsed_question.answer_shape == docintel::schema::AnswerShape::Listing;
        for c in &candidates {
            let value: &AnswerValue = &c.value;
            // A listing answered by a bulleted list: right when the list
            // holds the gold items (as the eval scores it).
            let list_right = listing && !c.list.is_empty() && golds.len() > 1 && {
                let items: Vec<AnswerValue> = c.list.iter().map(|t| AnswerValue::Text(t.clone())).collect();
                let refs: Vec<&AnswerValue> = items.iter().collect();
                let found = golds.iter().filter(|g| values_match(q, g, &refs)).count();
                found * 5 >= golds.len() * 4
            };
            let value_right = if n_parts == golds.len() && n_parts > 1 {
                values_match(q, &golds[c.part], &[value])
            } else {
                golds.iter().any(|g| values_match(q, g, &[value]))
            };
            // The gold value read on a page the gold names: the same figure
            // elsewhere (a "3" in another table) is right by accident, and
            // teaches the model nothing about where answers are.
            let on_gold_page = q.pages.is_empty() || q.pages.contains(&c.span.page);
            let right = q.answerable && (list_right || value_right) && on_gold_page;
            let entry = by_part.entry(c.part).or_insert_with(|| PartRows {
                group: c.group.to_owned(),
                fold: fold_of(&q.doc),
                rows: Vec::new(),
                answerable: q.answerable,
                forced_refusal: !c.absent.is_empty(),
                set: q.set.clone(),
            });
            entry.rows.push(Row {
                features: c.features.clone(),
                right,
                eligible: c.missing.is_empty(),
                key: crate::eval_sets::fold(&c.value.to_string()),
            });
        }
        if dump.is_some() {
            let mut ranked: Vec<&docintel_generate::ScoredCandidate> = candidates.iter().collect();
            ranked.sort_by(|a, b| b.probability.total_cmp(&a.probability));
            let right = |c: &docintel_generate::ScoredCandidate| {
                q.answerable && golds.iter().any(|g| values_match(q, g, &[&c.value]))
            };
            dumped.push(json!({
                "id": q.id,
                "set": q.set,
                "question": q.question,
                "gold": q.answer,
                "type": q.answer_type,
                "parsed_type": run.parsed_question.answer_type,
                "focus": run.parsed_question.generation.answer_focus,
                "constraints": run.parsed_question.generation.constraints,
                "got": run.output.answer.items.iter().map(|i| i.value.to_string()).collect::<Vec<_>>(),
                "n": candidates.len(),
                "first_right": ranked.iter().position(|c| right(c)),
                "passages": run.passages.iter().map(|p| p.page).collect::<Vec<_>>(),
                "top": ranked.iter().take(6).map(|c| json!({
                    "text": c.text.chars().take(90).collect::<String>(),
                    "p": (c.probability * 1000.0).round() / 1000.0,
                    "page": c.span.page,
                    "line": c.span.line_start,
                    "right": right(c),
                    "missing": c.missing,
                    "f": c.features.iter().map(|v| (v * 100.0).round() / 100.0).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
                "right_c": ranked.iter().find(|c| right(c)).map(|c| json!({
                    "text": c.text.chars().take(90).collect::<String>(),
                    "page": c.span.page,
                    "line": c.span.line_start,
                    "p": (c.probability * 1000.0).round() / 1000.0,
                    "f": c.features.iter().map(|v| (v * 100.0).round() / 100.0).collect::<Vec<_>>(),
                })),
            }));
        }
        if by_part.is_empty() {
            // No candidate at all: the reader refuses; nothing to fit.
            continue;
        }
        parts.extend(by_part.into_values());
    }

    if let Some(path) = &dump {
        let text: String = dumped.iter().map(|v| format!("{v}\n")).collect();
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
        // Every labelled candidate, for offline model comparisons.
        let mut rows_csv = String::from("part,set,group,fold,answerable,eligible,right");
        for name in reader_features() {
            rows_csv.push(',');
            rows_csv.push_str(name);
        }
        rows_csv.push('\n');
        for (index, p) in parts.iter().enumerate() {
            for r in &p.rows {
                rows_csv.push_str(&format!(
                    "{index},{},{},{},{},{},{}",
                    p.set, p.group, p.fold, p.answerable, r.eligible, r.right
                ));
                for v in &r.features {
                    rows_csv.push_str(&format!(",{v}"));
                }
                rows_csv.push('\n');
            }
        }
        std::fs::write(path.with_extension("candidates.csv"), rows_csv)?;
    }
    let features: Vec<&str> = reader_features().to_vec();
    let mut groups_json = serde_json::Map::new();
    let mut summary = Vec::new();
    let mut group_points: Vec<(&str, Vec<Point>)> = Vec::new();
    for group in reader_groups() {
        let of: Vec<&PartRows> = parts.iter().filter(|p| p.group == group).collect();
        let x: Vec<Vec<f64>> =
            of.iter().flat_map(|p| fitting_rows(p).into_iter().map(|r| r.features.clone())).collect();
        let y: Vec<bool> = of.iter().flat_map(|p| fitting_rows(p).into_iter().map(|r| r.right)).collect();
        let (alpha, scores) = match alpha_override {
            Some(a) => (a, Vec::new()),
            None => choose_alpha(&of),
        };
        let (w, b) = fit(&x, &y, alpha).with_context(|| format!("group {group}"))?;
        let answerable = of.iter().filter(|p| p.answerable).count();
        summary.push(format!(
            "{group:<8} penalty {alpha} (held-out right best candidates per penalty: {}); fitted on all: {}/{answerable} right best candidates",
            scores.iter().map(|(a, n)| format!("{a}: {n}")).collect::<Vec<_>>().join(", "),
            top1_right(&of, &w, b)
        ));
        // Stage 2: the best eligible candidate's log-odds, margin and evidence → right,
        // read out of fold: each part scored by the stage-1 model fitted
        // without its fold, so the calibration and the threshold see the
        // confidence a document nobody fitted on gets (in-sample scores are
        // more sure of themselves than new documents deserve).
        let mut stage: Vec<(Vec<f64>, bool, &PartRows)> = Vec::new();
        for k in 0..FOLDS {
            let train: Vec<&PartRows> = of.iter().copied().filter(|p| p.fold != k).collect();
            let tx: Vec<Vec<f64>> =
                train.iter().flat_map(|p| fitting_rows(p).into_iter().map(|r| r.features.clone())).collect();
            let ty: Vec<bool> = train.iter().flat_map(|p| fitting_rows(p).into_iter().map(|r| r.right)).collect();
            let (wk, bk) = fit(&tx, &ty, alpha).unwrap_or_else(|_| (w.clone(), b));
            for p in of.iter().copied().filter(|p| p.fold == k) {
                if let Some((point, ok)) = stage_point(p, &wk, bk) {
                    stage.push((point, ok, p));
                }
            }
        }
        let sx: Vec<Vec<f64>> = stage.iter().map(|s| s.0.clone()).collect();
        let sy: Vec<bool> = stage.iter().map(|s| s.1).collect();
        let folds: Vec<usize> = stage.iter().map(|s| s.2.fold).collect();
        let stage_alpha = stage_penalty(&sx, &sy, &folds);
        summary.push(format!("{group:<8} calibration penalty {stage_alpha} (held-out log loss)"));
        let (cw, cb) = fit(&sx, &sy, stage_alpha).unwrap_or_else(|_| {
            let mut identity = vec![0.0; 2 + reader_evidence_features().len()];
            identity[0] = 1.0;
            (identity, 0.0)
        });
        let confidence = |s: &[f64]| sigmoid(dot(&cw, cb, s));
        let points: Vec<Point> = stage
            .iter()
            .map(|(s, ok, p)| Point {
                confidence: confidence(s),
                right: *ok,
                answerable: p.answerable,
                forced: p.forced_refusal,
            })
            .collect();
        summary.push(format!(
            "{group:<8} parts {:>4}  candidates {:>6} ({} right)",
            of.len(),
            x.len(),
            y.iter().filter(|b| **b).count()
        ));
        groups_json.insert(
            group.to_owned(),
            json!({
                "weights": w.iter().map(|v| (v * 1e6).round() / 1e6).collect::<Vec<_>>(),
                "intercept": (b * 1e6).round() / 1e6,
                "calibration": cw.iter().chain(std::iter::once(&cb)).map(|v| (v * 1e6).round() / 1e6).collect::<Vec<_>>(),
            }),
        );
        group_points.push((group, points));
    }
    // The threshold on the calibrated confidence: one for every group (a
    // calibrated confidence means the same in each, and one threshold over
    // all the parts is steadier than one per small group), or, with
    // `--per-group-threshold`, one per group.
    let pooled: Vec<Point> = group_points.iter().flat_map(|(_, p)| p.iter().copied()).collect();
    let shared = best_threshold(&pooled, wrong_cost, refuse_cost);
    // How far the confidence can be trusted on documents nobody fitted on:
    // right answers per confidence bucket, out of fold.
    let buckets: Vec<String> = [(0.0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.01)]
        .iter()
        .map(|&(lo, hi)| {
            let at: Vec<&Point> = pooled
                .iter()
                .filter(|p| !p.forced && p.answerable && p.confidence >= lo && p.confidence < hi)
                .collect();
            let right = at.iter().filter(|p| p.right).count();
            format!("[{lo:.1}, {:.1}) {right}/{}", hi.min(1.0), at.len())
        })
        .collect();
    summary.push(format!("out-of-fold confidence, right/answerable per bucket: {}", buckets.join(" · ")));
    for (group, points) in &group_points {
        let (threshold, (right, wrong, refused_ok, refused_bad)) = if per_group_threshold {
            best_threshold(points, wrong_cost, refuse_cost)
        } else {
            (shared.0, outcome(points, shared.0))
        };
        summary.push(format!(
            "{group:<8} threshold {threshold:.2} (out of fold): right {right}, wrong {wrong}, refused rightly {refused_ok}, refused answerable {refused_bad}"
        ));
        if let Some(entry) = groups_json.get_mut(*group) {
            entry["threshold"] = json!((threshold * 100.0).round() / 100.0);
        }
    }
    for line in &summary {
        println!("{line}");
    }
    let model = json!({
        "features": features,
        "groups": groups_json,
        "trained": {
            "command": format!(
                "cargo xtask fit-reader --shared <fixtures> --wrong-cost {wrong_cost} --refuse-cost {refuse_cost} --unanswerable-share {}",
                UNANSWERABLE_SHARE.load(std::sync::atomic::Ordering::Relaxed)
            ),
            "tuning_questions": questions.len(),
            "parts": parts.len(),
            "candidates": parts.iter().map(|p| p.rows.len()).sum::<usize>(),
            "summary": summary,
        },
    });
    if dry_run {
        println!("{}", serde_json::to_string_pretty(&model)?);
    } else {
        std::fs::write(&out, serde_json::to_string_pretty(&model)? + "\n")
            .with_context(|| format!("cannot write {}", out.display()))?;
        println!("wrote {}", out.display());
    }
    Ok(())
}
