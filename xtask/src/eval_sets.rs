//! The shared gold sets of `cargo xtask eval --shared DIR`: NIST SP 800-53
//! rendered QA, FinanceBench (rows whose PDF is present), the French
//! insurance golden set (asked of the whole folder in corpus mode, with its
//! must-refuse question) and CUAD contract clauses.
//!
//! Every question becomes one [`GoldRow`]; [`summarize`] prints per set the
//! typed-answer accuracy (overall and by answer type), the cited-page hit
//! rate, refusal precision and recall, the share of answers whose citations
//! verified, tokens and cost per question, and latency p50/p95.
//!
//! Scoring rules, per set:
//! - NIST: `lookup` correct when the gold title is in the answer; `list`
//!   when at least 80% of the gold control ids are; page hit when a cited
//!   page is the gold page or the next one (the related-controls line may
//!   sit there).
//! - FinanceBench: page hit when a cited page is an evidence page; answer
//!   scored only when the gold answer is one number, correct when a number
//!   of the answer is within 1% of it (also after a thousands/millions
//!   rescale).
//! - French insurance: correct when at least half of the gold keywords
//!   appear in the answer or its cited lines; page hit = the answering file
//!   is the expected one (by its document code); the `critique` question
//!   must be refused.
//! - CUAD: agreement name, governing law (containment), agreement date
//!   (same calendar date), parties (one party name in the answer).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use docintel::schema::{AnswerValue, AskOutput, ParsedDocument};
use docintel::{AskOptions, QuestionParser, RuleParser, answer_parsed, parse_file};
use serde_json::Value;

use crate::split::Split;

/// One gold question's outcome.
#[derive(Debug, Clone)]
pub(crate) struct GoldRow {
    pub(crate) set: &'static str,
    pub(crate) task: String,
    pub(crate) answer_type: String,
    pub(crate) expected: String,
    pub(crate) got: String,
    /// `None`: the answer is not scored (only the page is).
    pub(crate) correct: Option<bool>,
    /// `None`: the set has no page gold for this row.
    pub(crate) page_hit: Option<bool>,
    pub(crate) should_refuse: bool,
    pub(crate) refused: bool,
    pub(crate) citations_verified: bool,
    pub(crate) tokens_in: u64,
    pub(crate) tokens_out: u64,
    pub(crate) cost_usd: f64,
    pub(crate) ms: u128,
    /// The document asked (path relative to the shared fixtures; empty for
    /// a corpus-level question).
    pub(crate) doc: String,
    /// `tuning`, `validation` or `unsplit` (see [`crate::split::Split`]).
    pub(crate) part: String,
    /// The answer's confidence.
    pub(crate) confidence: f64,
    /// The answer's first warning (why it refused, when it did).
    pub(crate) note: String,
}

impl GoldRow {
    pub(crate) fn new(set: &'static str, task: String, expected: String, output: &AskOutput, ms: u128) -> GoldRow {
        GoldRow {
            set,
            task,
            answer_type: format!("{}/{}", output.answer.answer_shape.as_str(), output.answer.answer_type),
            expected,
            got: answer_text(output),
            correct: None,
            page_hit: None,
            should_refuse: false,
            refused: !output.answer.feedback.answer_found || output.answer.items.is_empty(),
            citations_verified: output.citations_verified,
            tokens_in: output.meta.tokens_in,
            tokens_out: output.meta.tokens_out,
            cost_usd: output.meta.cost_usd,
            ms,
            doc: String::new(),
            part: "tuning".to_owned(),
            confidence: output.answer.feedback.confidence,
            note: output.answer.feedback.warnings.first().cloned().unwrap_or_default(),
        }
    }
}

/// Reads a gold file as JSON; the error names the file.
fn read_json(path: &Path) -> anyhow::Result<Value> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not valid JSON", path.display()))
}

/// Asks one question of one parsed document.
pub(crate) fn ask(
    parser: &RuleParser,
    options: &AskOptions,
    document: &ParsedDocument,
    question: &str,
) -> anyhow::Result<(AskOutput, u128)> {
    let clock = Instant::now();
    let parsed = parser.parse(question, &document.profile)?;
    let run = answer_parsed(document, parsed, parser, options)?;
    Ok((run.output, clock.elapsed().as_millis()))
}

/// The answer's values, `; `-joined (empty when nothing was found).
fn answer_text(output: &AskOutput) -> String {
    output.answer.items.iter().map(|i| i.value.to_string()).collect::<Vec<_>>().join("; ")
}

/// The text of every cited line.
fn cited_text(output: &AskOutput, document: &ParsedDocument) -> String {
    let mut out = String::new();
    for span in output.answer.items.iter().flat_map(|i| &i.spans) {
        for line in document.line_range(span.line_start, span.line_end) {
            out.push_str(&line.text);
            out.push('\n');
        }
    }
    out
}

pub(crate) fn cited_pages(output: &AskOutput) -> Vec<u32> {
    output.answer.items.iter().flat_map(|i| &i.spans).map(|s| s.page).collect()
}

/// Lowercase alphanumerics, every other run of characters one space: the
/// form in which gold and answers are compared.
pub(crate) fn fold(text: &str) -> String {
    let mut out = String::new();
    let mut space = true;
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() || c == '%' {
            out.push(c);
            space = false;
        } else if !space {
            out.push(' ');
            space = true;
        }
    }
    out.trim_end().to_owned()
}

pub(crate) fn contains_folded(haystack: &str, needle: &str) -> bool {
    let needle = fold(needle);
    !needle.is_empty() && format!(" {} ", fold(haystack)).contains(&format!(" {needle} "))
}

// ---------------------------------------------------------------------------
// NIST SP 800-53 rendered QA
// ---------------------------------------------------------------------------

pub(crate) fn nist(
    shared: &Path,
    parser: &RuleParser,
    options: &AskOptions,
    split: &Split,
) -> anyhow::Result<Vec<GoldRow>> {
    let relative = "core/nist_sp800-53r5_catalog_rendered.pdf";
    let pdf = shared.join(relative);
    let gold_path = shared.join("core/nist_sp800-53r5_rendered_qa.json");
    let gold: Value = read_json(&gold_path)?;
    let document = parse_file(&pdf)?;
    let mut rows = Vec::new();
    for item in gold["items"].as_array().context("NIST QA: no items")? {
        let question = item["question"].as_str().unwrap_or_default();
        let expected = item["answer"].as_str().unwrap_or_default();
        let page = item["evidence_page_1based_in_rendered_pdf"].as_u64().unwrap_or(0) as u32;
        let kind = item["kind"].as_str().unwrap_or_default();
        let (output, ms) = ask(parser, options, &document, question)?;
        let text = answer_text(&output);
        let correct = match kind {
            "list" => {
                let ids: Vec<&str> = expected.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
                let found = ids.iter().filter(|id| contains_folded(&text, id)).count();
                !ids.is_empty() && found * 5 >= ids.len() * 4
            }
            _ => contains_folded(&text, expected),
        };
        let mut row = GoldRow::new(
            "nist",
            format!("{} {kind}", item["control_id"].as_str().unwrap_or("?")),
            expected.to_owned(),
            &output,
            ms,
        );
        row.correct = Some(correct);
        row.doc = relative.to_owned();
        row.part = split.part(relative);
        row.page_hit = Some(cited_pages(&output).iter().any(|&p| p == page || p == page + 1));
        rows.push(row);
    }
    Ok(rows)
}

// ---------------------------------------------------------------------------
// FinanceBench
// ---------------------------------------------------------------------------

/// The single number of a gold answer like `$1577.00`, `8.70`, `-0.02` or
/// `65.4%`; `None` for prose answers.
fn gold_number(answer: &str) -> Option<f64> {
    let trimmed = answer.trim();
    if trimmed.is_empty() || !trimmed.chars().all(|c| c.is_ascii_digit() || "$-.,%() ".contains(c)) {
        return None;
    }
    let negative = trimmed.starts_with('-') || trimmed.starts_with('(');
    let digits: String = trimmed.chars().filter(|c| c.is_ascii_digit() || *c == '.').collect();
    let value: f64 = digits.parse().ok()?;
    Some(if negative { -value } else { value })
}

/// Every number written in `text` (thousands separators removed).
pub(crate) fn numbers_in(text: &str) -> Vec<f64> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() || (c == '.' && !current.is_empty()) {
            current.push(c);
        } else if c == ',' && !current.is_empty() {
            // a thousands separator: keep reading
        } else if !current.is_empty() {
            if let Ok(v) = current.trim_end_matches('.').parse::<f64>() {
                out.push(v);
            }
            current.clear();
        }
    }
    out
}

fn close(a: f64, b: f64) -> bool {
    let scale = a.abs().max(b.abs()).max(1e-9);
    (a - b).abs() / scale <= 0.01
}

pub(crate) fn financebench(
    shared: &Path,
    parser: &RuleParser,
    options: &AskOptions,
    split: &Split,
) -> anyhow::Result<Vec<GoldRow>> {
    let gold_path = shared.join("financebench/financebench_with_local_pdfs.jsonl");
    let text = std::fs::read_to_string(&gold_path).with_context(|| format!("cannot read {}", gold_path.display()))?;
    let mut documents: BTreeMap<String, Option<ParsedDocument>> = BTreeMap::new();
    let mut rows = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let item: Value = serde_json::from_str(line)?;
        if item["pdf_present"].as_bool() != Some(true) {
            continue;
        }
        let relative = item["pdf_path"].as_str().unwrap_or_default().to_owned();
        let document = documents.entry(relative.clone()).or_insert_with(|| parse_file(&shared.join(&relative)).ok());
        let Some(document) = document.as_ref() else { continue };
        let question = item["question"].as_str().unwrap_or_default();
        let expected = item["answer"].as_str().unwrap_or_default();
        let evidence: Vec<u32> = item["evidence"]
            .as_array()
            .map(|e| e.iter().filter_map(|x| x["evidence_page_1based"].as_u64()).map(|p| p as u32).collect())
            .unwrap_or_default();
        let (output, ms) = ask(parser, options, document, question)?;
        let mut row = GoldRow::new(
            "financebench",
            item["financebench_id"].as_str().unwrap_or("?").trim_start_matches("financebench_id_").to_owned(),
            expected.chars().take(60).collect(),
            &output,
            ms,
        );
        row.doc = relative.clone();
        row.part = split.part(&relative);
        row.page_hit = Some(cited_pages(&output).iter().any(|p| evidence.contains(p)));
        if let Some(gold) = gold_number(expected) {
            let got: Vec<f64> = output
                .answer
                .items
                .iter()
                .flat_map(|i| match &i.value {
                    AnswerValue::Amount(a) => vec![a.value],
                    AnswerValue::Quantity(q) => vec![q.quantity],
                    // A value is one number: a line holding many is not it.
                    other => Some(numbers_in(&other.to_string())).filter(|n| n.len() <= 3).unwrap_or_default(),
                })
                .collect();
            let scaled = |g: f64, gold: f64| {
                [1.0, 1e3, 1e-3, 1e6, 1e-6].iter().any(|scale| close(g * scale, gold) || close(-g * scale, gold))
            };
            let correct = got.iter().any(|&g| scaled(g, gold));
            row.correct = Some(correct);
            // A direct lookup: the gold figure is printed in the evidence
            // (the others are computed from several figures).
            let printed =
                item["evidence"].as_array().into_iter().flatten().any(|e| {
                    numbers_in(e["evidence_text"].as_str().unwrap_or_default()).iter().any(|&n| scaled(n, gold))
                });
            if printed {
                let mut lookup = row.clone();
                lookup.set = "financebench_lookup";
                rows.push(lookup);
            }
        }
        rows.push(row);
    }
    Ok(rows)
}

// ---------------------------------------------------------------------------
// French insurance golden set (corpus mode)
// ---------------------------------------------------------------------------

pub(crate) fn french_insurance(shared: &Path, options: &AskOptions, split: &Split) -> anyhow::Result<Vec<GoldRow>> {
    let folder = shared.join("insurance/fr_aresia_fictional");
    let gold_path = folder.join("golden_set_fr.json");
    let gold: Value = read_json(&gold_path)?;
    let mut corpus = docintel::load_corpus(&folder, options, |_, _, _| {})?;
    // The folder also holds the test questions as Markdown: asking it would
    // be reading the answer key. The corpus is the four PDFs.
    corpus.documents.retain(|(path, _)| path.extension().is_some_and(|e| e.eq_ignore_ascii_case("pdf")));
    let mut rows = Vec::new();
    for item in gold.as_array().context("golden set: not a list")? {
        let question = item["question"].as_str().unwrap_or_default();
        let source = item["source_attendue"].as_str().unwrap_or_default();
        // "Article 4.1 — CG-PREV-INV-2024": the code after the dash names
        // the document; "AUCUNE" means nothing answers.
        let code = source.rsplit('—').next().map(str::trim).unwrap_or_default();
        let keywords: Vec<&str> =
            item["mots_cles"].as_array().map(|k| k.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        let must_refuse = item["critique"].as_bool() == Some(true) || source.trim() == "AUCUNE";
        let clock = Instant::now();
        let output = docintel::corpus_qa(&corpus, question, options)?;
        let ms = clock.elapsed().as_millis();
        let answering = corpus.documents.iter().find(|(path, _)| path.display().to_string() == output.document);
        let mut row = GoldRow::new(
            "fr_insurance",
            item["id"].as_str().unwrap_or("?").to_owned(),
            if must_refuse { "refuse".to_owned() } else { keywords.join(" | ") },
            &output,
            ms,
        );
        row.should_refuse = must_refuse;
        // The part is the expected document's (the one printing the code);
        // the must-refuse question asks the whole corpus: tuning.
        if let Some((path, _)) =
            corpus.documents.iter().find(|(_, d)| !must_refuse && d.lines.iter().any(|l| l.text.contains(code)))
        {
            row.doc = path.strip_prefix(shared).unwrap_or(path).display().to_string();
            row.part = split.part(&row.doc);
        }
        if let Some((path, document)) = answering {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            row.got = format!("[{name}] {}", row.got);
            if !must_refuse {
                let evidence = format!("{}\n{}", answer_text(&output), cited_text(&output, document));
                let found = keywords.iter().filter(|k| contains_folded(&evidence, k)).count();
                row.correct = Some(!row.refused && found * 2 >= keywords.len().max(1));
                let holds_code = document.lines.iter().any(|l| l.text.contains(code));
                row.page_hit = Some(!row.refused && holds_code);
            } else {
                row.correct = Some(row.refused);
            }
        }
        rows.push(row);
    }
    Ok(rows)
}

// ---------------------------------------------------------------------------
// CUAD
// ---------------------------------------------------------------------------

/// `12/14/97` or `5/22/2020` (CUAD's normalised form) as ISO.
fn cuad_date(text: &str) -> Option<String> {
    let parts: Vec<u32> = text.trim().split('/').map(|p| p.trim().parse().ok()).collect::<Option<_>>()?;
    let [month, day, year] = parts.as_slice() else { return None };
    let year = match *year {
        y if y >= 1000 => y,
        y if y >= 50 => 1900 + y,
        y => 2000 + y,
    };
    ((1..=12).contains(month) && (1..=31).contains(day)).then(|| format!("{year:04}-{month:02}-{day:02}"))
}

/// CUAD's `m/d/yy` date as ISO (for the reader's fit).
pub(crate) fn cuad_date_iso(text: &str) -> Option<String> {
    cuad_date(text)
}

pub(crate) fn cuad(
    shared: &Path,
    parser: &RuleParser,
    options: &AskOptions,
    split: &Split,
) -> anyhow::Result<Vec<GoldRow>> {
    let gold_path = shared.join("contracts/cuad/cuad_subset_gold.json");
    let gold: Value = read_json(&gold_path)?;
    let mut rows = Vec::new();
    for contract in gold.as_array().context("CUAD gold: not a list")? {
        let relative = contract["pdf"].as_str().unwrap_or_default();
        let Ok(document) = parse_file(&shared.join(relative)) else { continue };
        let name: String =
            Path::new(relative).file_stem().map(|s| s.to_string_lossy().chars().take(24).collect()).unwrap_or_default();
        let labels = &contract["labels"];
        let label = |key: &str| labels[key].as_str().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
        let questions: [(&str, &str, Option<String>); 4] = [
            ("name", "What is the title of this agreement?", label("Document Name-Answer")),
            ("law", "Which state's law governs this agreement?", label("Governing Law-Answer")),
            ("date", "What is the date of this agreement?", label("Agreement Date-Answer")),
            ("parties", "Who are the parties to this agreement?", label("Parties-Answer")),
        ];
        for (field, question, expected) in questions {
            let Some(expected) = expected else { continue };
            let (output, ms) = ask(parser, options, &document, question)?;
            let text = answer_text(&output);
            let correct = match field {
                "date" => {
                    let iso = cuad_date(&expected);
                    output
                        .answer
                        .items
                        .iter()
                        .any(|i| matches!(&i.value, AnswerValue::Date(d) if Some(&d.iso) == iso.as_ref()))
                }
                "parties" => expected
                    .split(';')
                    .map(|p| p.split('(').next().unwrap_or_default().trim())
                    .filter(|p| p.len() > 2)
                    .any(|p| contains_folded(&text, p)),
                _ => {
                    contains_folded(&text, &expected) || (!fold(&text).is_empty() && contains_folded(&expected, &text))
                }
            };
            let mut row = GoldRow::new("cuad", format!("{name} {field}"), expected.clone(), &output, ms);
            row.correct = Some(correct);
            row.doc = relative.to_owned();
            row.part = split.part(relative);
            rows.push(row);
        }
    }
    Ok(rows)
}

// ---------------------------------------------------------------------------
// Summary and CSV
// ---------------------------------------------------------------------------

fn share(n: usize, of: usize) -> String {
    if of == 0 { "-".to_owned() } else { format!("{:.3} ({n}/{of})", n as f64 / of as f64) }
}

fn percentile(sorted: &[u128], p: f64) -> u128 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Prints the metrics of one set; returns its answer accuracy (scored rows).
pub(crate) fn summarize(set: &str, rows: &[GoldRow]) -> f64 {
    let rows: Vec<&GoldRow> = rows.iter().filter(|r| r.set == set).collect();
    if rows.is_empty() {
        println!("{set}: no rows (set missing?)");
        return 0.0;
    }
    let scored: Vec<&&GoldRow> = rows.iter().filter(|r| r.correct.is_some()).collect();
    let correct = scored.iter().filter(|r| r.correct == Some(true)).count();
    let paged: Vec<&&GoldRow> = rows.iter().filter(|r| r.page_hit.is_some()).collect();
    let hits = paged.iter().filter(|r| r.page_hit == Some(true)).count();
    let refused = rows.iter().filter(|r| r.refused).count();
    let refused_right = rows.iter().filter(|r| r.refused && r.should_refuse).count();
    let must_refuse = rows.iter().filter(|r| r.should_refuse).count();
    let verified = rows.iter().filter(|r| r.citations_verified).count();
    let mut ms: Vec<u128> = rows.iter().map(|r| r.ms).collect();
    ms.sort_unstable();
    let n = rows.len() as f64;
    println!("{set}: {} questions", rows.len());
    println!("  answer accuracy     {}", share(correct, scored.len()));
    let mut by_type: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for r in &scored {
        let e = by_type.entry(r.answer_type.as_str()).or_default();
        e.1 += 1;
        if r.correct == Some(true) {
            e.0 += 1;
        }
    }
    for (answer_type, (ok, of)) in &by_type {
        println!("    {answer_type:<22} {}", share(*ok, *of));
    }
    println!("  cited-page hit      {}", share(hits, paged.len()));
    println!(
        "  refusals            {refused} · precision {} · recall {}",
        share(refused_right, refused),
        share(refused_right, must_refuse)
    );
    println!("  citations verified  {}", share(verified, rows.len()));
    println!(
        "  tokens/question     in {:.0} out {:.0} · cost/question ${:.5}",
        rows.iter().map(|r| r.tokens_in).sum::<u64>() as f64 / n,
        rows.iter().map(|r| r.tokens_out).sum::<u64>() as f64 / n,
        rows.iter().map(|r| r.cost_usd).sum::<f64>() / n
    );
    println!("  latency             p50 {} ms · p95 {} ms", percentile(&ms, 0.5), percentile(&ms, 0.95));
    if scored.is_empty() { 0.0 } else { correct as f64 / scored.len() as f64 }
}

/// One CSV row per gold question (timings excluded so reruns diff cleanly).
pub(crate) fn csv(rows: &[GoldRow]) -> String {
    let flag = |b: Option<bool>| b.map_or(String::new(), |b| b.to_string());
    let quote = |t: &str| format!("\"{}\"", t.replace('"', "\"\"").replace('\n', " "));
    let mut out = String::from(
        "set,part,doc,task,answer_type,expected,got,correct,page_hit,should_refuse,refused,confidence,citations_verified,tokens_in,tokens_out,note\n",
    );
    for r in rows {
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{:.2},{},{},{},{}\n",
            r.set,
            r.part,
            quote(&r.doc),
            quote(&r.task),
            r.answer_type,
            quote(&r.expected),
            quote(&r.got.chars().take(200).collect::<String>()),
            flag(r.correct),
            flag(r.page_hit),
            r.should_refuse,
            r.refused,
            r.confidence,
            r.citations_verified,
            r.tokens_in,
            r.tokens_out,
            quote(&r.note.chars().take(200).collect::<String>())
        ));
    }
    out
}

/// The sets by name, in run order.
pub(crate) const SETS: [&str; 4] = ["nist", "financebench", "fr_insurance", "cuad"];

/// Runs the named shared sets; a set whose files are missing is reported
/// and skipped.
pub(crate) fn run_sets(
    shared: &Path,
    names: &[String],
    options: &AskOptions,
    split: &Split,
) -> anyhow::Result<Vec<GoldRow>> {
    let parser = docintel::question_parser(options)?;
    let mut rows = Vec::new();
    for set in SETS {
        if !names.is_empty() && !names.iter().any(|n| n == set) {
            continue;
        }
        let clock = Instant::now();
        let result = match set {
            "nist" => nist(shared, &parser, options, split),
            "financebench" => financebench(shared, &parser, options, split),
            "fr_insurance" => french_insurance(shared, options, split),
            _ => cuad(shared, &parser, options, split),
        };
        match result {
            Ok(mut set_rows) => {
                eprintln!("{set}: {} questions in {:.1} s", set_rows.len(), clock.elapsed().as_secs_f64());
                rows.append(&mut set_rows);
            }
            Err(error) => println!("{set}: skipped: {error:#}"),
        }
    }
    Ok(rows)
}

/// Where the shared-set CSV goes by default.
pub(crate) fn default_csv() -> PathBuf {
    crate::tidy::project_root().join("target/eval/shared.csv")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_and_numbers() {
        assert!(contains_folded("PM-23 DATA GOVERNANCE BODY", "Data Governance Body"));
        assert!(!contains_folded("Data Governance Bodyguard", "Data Governance Body"));
        assert!(contains_folded("franchise de 30 jours", "30 jours"));
        assert_eq!(gold_number("$1577.00"), Some(1577.0));
        assert_eq!(gold_number("65.4%"), Some(65.4));
        assert_eq!(gold_number("-0.02"), Some(-0.02));
        assert_eq!(gold_number("No, the company"), None);
        assert_eq!(numbers_in("capex $1,577 million in 2018"), vec![1577.0, 2018.0]);
        assert_eq!(cuad_date("12/14/97").as_deref(), Some("1997-12-14"));
        assert_eq!(cuad_date("5/22/2020").as_deref(), Some("2020-05-22"));
        assert_eq!(cuad_date("Delaware"), None);
    }

    #[test]
    fn percentiles() {
        assert_eq!(percentile(&[1, 2, 3, 4], 0.5), 2);
        assert_eq!(percentile(&[1, 2, 3, 4], 0.95), 4);
        assert_eq!(percentile(&[], 0.5), 0);
    }
}
