//! `cargo xtask eval`: gold questions over real documents, scored.
//!
//! `eval [--shared DIR] [--sets a,b] [--csv FILE] [--shared-csv FILE]
//! [--min-accuracy F]` runs the project's invoices (always) and, with
//! `--shared`, the shared invoices plus the sets of [`crate::eval_sets`].
//! `eval retrieval ...` is [`crate::eval_retrieval`], `eval generation ...`
//! [`crate::eval_generation`], `eval llm ...` [`crate::eval_llm`], `eval ocr ...`
//! [`crate::eval_ocr`].
//!
//! Today's gold sets are invoices: each `<name>.pdf` with a `<name>.json`
//! listing expected fields (invoice2data format). For every invoice the eval
//! asks for the total amount and the invoice date, plus one question the
//! document cannot answer, and scores the typed values, the currency, the
//! honesty of the refusal and the citation checks.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use docintel::schema::{AnswerValue, AskOutput};
use docintel::{AskOptions, QuestionParser, answer_parsed, parse_pdf, question_parser};
use serde_json::Value;

/// A question the invoices cannot answer: the right answer is "not found".
const UNANSWERABLE: &str = "What is the name of the CEO's dog?";

struct Row {
    set: String,
    task: String,
    field: &'static str,
    expected: String,
    got: String,
    correct: bool,
    citations_verified: bool,
    ms: u128,
    /// The document's file name.
    doc: String,
    refused: bool,
    should_refuse: bool,
    confidence: f64,
}

impl Row {
    /// The row in the form of the shared sets' report.
    fn gold_row(&self, split: &crate::split::Split) -> crate::eval_sets::GoldRow {
        crate::eval_sets::GoldRow {
            set: "invoices",
            task: format!("{} {}", self.task, self.field),
            answer_type: self.field.to_owned(),
            expected: self.expected.clone(),
            got: self.got.clone(),
            correct: Some(self.correct),
            page_hit: None,
            should_refuse: self.should_refuse,
            refused: self.refused,
            citations_verified: self.citations_verified,
            tokens_in: 0,
            tokens_out: 0,
            cost_usd: 0.0,
            ms: self.ms,
            part: split.part(&self.doc),
            doc: self.doc.clone(),
            confidence: self.confidence,
            note: String::new(),
        }
    }
}

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    match args.first().map(String::as_str) {
        Some("retrieval") => return crate::eval_retrieval::run(&args[1..]),
        Some("generation") => return crate::eval_generation::run(&args[1..]),
        Some("llm") => return crate::eval_llm::run(&args[1..]),
        Some("ocr") => return crate::eval_ocr::run(&args[1..]),
        Some("invoices" | "sets") | None => {}
        Some(other) if !other.starts_with("--") => bail!("unknown eval kind {other} (retrieval, or options)"),
        Some(_) => {}
    }
    let mut shared: Option<PathBuf> = None;
    let mut csv: Option<PathBuf> = None;
    let mut shared_csv: Option<PathBuf> = None;
    let mut only: Vec<String> = Vec::new();
    let mut min_accuracy = 0.0;
    let mut iter = args.iter().skip_while(|a| !a.starts_with("--"));
    while let Some(arg) = iter.next() {
        let mut value = || iter.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--shared" => shared = Some(PathBuf::from(value()?)),
            "--csv" => csv = Some(PathBuf::from(value()?)),
            "--shared-csv" => shared_csv = Some(PathBuf::from(value()?)),
            "--sets" => only = value()?.split(',').map(str::to_owned).collect(),
            "--min-accuracy" => min_accuracy = value()?.parse().context("--min-accuracy takes a number")?,
            other => bail!("unknown eval argument {other}"),
        }
    }
    let root = crate::tidy::project_root();
    let mut sets = vec![("fixtures/invoices".to_owned(), root.join("fixtures/invoices"))];
    if let Some(shared) = &shared
        && (only.is_empty() || only.iter().any(|s| s == "invoices"))
    {
        sets.push(("shared/invoices".to_owned(), shared.join("invoices")));
    }

    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for (set, dir) in &sets {
        eval_invoices(set, dir, &mut rows, &mut failures)?;
    }

    let mut report = String::new();
    writeln!(report, "{:<18} {:<28} {:<8} {:<7} {:<26} {:<26} cited", "set", "task", "field", "ok", "expected", "got")?;
    for row in &rows {
        writeln!(
            report,
            "{:<18} {:<28} {:<8} {:<7} {:<26} {:<26} {}",
            row.set,
            row.task,
            row.field,
            if row.correct { "yes" } else { "NO" },
            truncate(&row.expected, 26),
            truncate(&row.got, 26),
            if row.citations_verified { "verified" } else { "NOT verified" },
        )?;
    }
    print!("{report}");
    println!();
    let mut total_correct = 0;
    for (set, _) in &sets {
        for field in ["amount", "currency", "date", "refusal"] {
            let of: Vec<&Row> = rows.iter().filter(|r| &r.set == set && r.field == field).collect();
            if of.is_empty() {
                continue;
            }
            let correct = of.iter().filter(|r| r.correct).count();
            println!("{set:<18} {field:<9} {correct}/{} correct", of.len());
        }
        let of: Vec<&Row> = rows.iter().filter(|r| &r.set == set).collect();
        let verified = of.iter().filter(|r| r.citations_verified).count();
        let mean_ms = of.iter().map(|r| r.ms).sum::<u128>() / of.len().max(1) as u128;
        println!("{set:<18} citations verified {verified}/{} · mean {mean_ms} ms per question", of.len());
        total_correct += of.iter().filter(|r| r.correct).count();
    }
    for failure in &failures {
        println!("error: {failure}");
    }
    if let Some(csv) = csv {
        std::fs::write(&csv, csv_text(&rows)).with_context(|| format!("cannot write {}", csv.display()))?;
    }
    let accuracy = total_correct as f64 / rows.len().max(1) as f64;
    println!("invoices accuracy {:.3} ({total_correct}/{})", accuracy, rows.len());
    let mut under = Vec::new();
    if accuracy < min_accuracy {
        under.push(format!("invoices {accuracy:.3}"));
    }
    if let Some(shared) = &shared {
        println!();
        let split = crate::split::Split::load()?;
        let options = AskOptions::new(5);
        let mut gold = crate::eval_sets::run_sets(shared, &only, &options, &split)?;
        for set in crate::eval_sets::SETS {
            if gold.iter().any(|r| r.set == set) {
                let set_accuracy = crate::eval_sets::summarize(set, &gold);
                if set_accuracy < min_accuracy {
                    under.push(format!("{set} {set_accuracy:.3}"));
                }
            }
        }
        // The field and refusal rows of the shared invoices join the report
        // (the project's copies of four of them are the same documents).
        gold.extend(rows.iter().filter(|r| r.set == "shared/invoices").map(|r| r.gold_row(&split)));
        let parser = question_parser(&options)?;
        gold.extend(crate::eval_dev::run(shared, &parser, &options, &split, &only)?);
        crate::eval_report::print(&gold);
        let path = shared_csv.unwrap_or_else(crate::eval_sets::default_csv);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, crate::eval_sets::csv(&gold))
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("per-question CSV: {}", path.display());
    }
    if !under.is_empty() {
        bail!("under --min-accuracy {min_accuracy}: {}", under.join(", "));
    }
    Ok(())
}

fn eval_invoices(set: &str, dir: &Path, rows: &mut Vec<Row>, failures: &mut Vec<String>) -> anyhow::Result<()> {
    let mut pdfs: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "pdf"))
        .collect();
    pdfs.sort();
    let options = AskOptions::new(5);
    // One parser for the whole run: its rules and tables load once.
    let parser = question_parser(&options)?;
    for pdf in pdfs {
        let task = pdf.file_stem().unwrap_or_default().to_string_lossy().into_owned();
        let gold: Value = match std::fs::read_to_string(pdf.with_extension("json")) {
            Ok(text) => serde_json::from_str::<Value>(&text)?.get(0).cloned().unwrap_or(Value::Null),
            Err(_) => Value::Null,
        };
        let document = match parse_pdf(&pdf) {
            Ok(document) => document,
            Err(error) => {
                failures.push(format!("{error}"));
                continue;
            }
        };
        let ask = |question: &str| -> anyhow::Result<(AskOutput, u128)> {
            let clock = Instant::now();
            let parsed = parser.parse(question, &document.profile)?;
            let run = answer_parsed(&document, parsed, &parser, &options)?;
            Ok((run.output, clock.elapsed().as_millis()))
        };
        let row = |field, expected: String, got: String, correct, output: &AskOutput, ms| Row {
            set: set.to_owned(),
            task: task.clone(),
            field,
            expected,
            got,
            correct,
            citations_verified: output.citations_verified,
            ms,
            doc: pdf.file_name().unwrap_or_default().to_string_lossy().into_owned(),
            refused: !output.answer.feedback.answer_found || output.answer.items.is_empty(),
            should_refuse: field == "refusal",
            confidence: output.answer.feedback.confidence,
        };
        if let Some(gold_amount) = gold.get("amount").and_then(Value::as_f64) {
            let (output, ms) = ask("What is the total amount?")?;
            let got = first_value(&output);
            let (value, currency) = match &got {
                Some(AnswerValue::Amount(a)) => (Some(a.value), a.currency.clone()),
                _ => (None, None),
            };
            let correct = value.is_some_and(|v| (v - gold_amount).abs() < 0.005);
            rows.push(row("amount", gold_amount.to_string(), describe(&got), correct, &output, ms));
            if let Some(gold_currency) = gold.get("currency").and_then(Value::as_str) {
                let got_currency = currency.clone().unwrap_or_else(|| "-".into());
                rows.push(row(
                    "currency",
                    gold_currency.to_owned(),
                    got_currency.clone(),
                    got_currency == gold_currency,
                    &output,
                    0,
                ));
            }
        }
        if let Some(gold_date) = gold.get("date").and_then(Value::as_str) {
            let (output, ms) = ask("What is the invoice date?")?;
            let got = first_value(&output);
            let correct = matches!(&got, Some(AnswerValue::Date(d)) if d.iso == gold_date);
            rows.push(row("date", gold_date.to_owned(), describe(&got), correct, &output, ms));
        }
        let (output, ms) = ask(UNANSWERABLE)?;
        let refused = !output.answer.feedback.answer_found && output.answer.items.is_empty();
        rows.push(row(
            "refusal",
            "not found".into(),
            if refused { "not found".into() } else { describe(&first_value(&output)) },
            refused,
            &output,
            ms,
        ));
    }
    Ok(())
}

/// The per-task CSV: deterministic (no timings), so it can be committed and
/// diffed like a snapshot.
fn csv_text(rows: &[Row]) -> String {
    let mut out = String::from("set,task,field,expected,got,correct,citations_verified\n");
    for r in rows {
        out.push_str(&format!(
            "{},{},{},{},{},{},{}\n",
            r.set,
            r.task,
            r.field,
            quote(&r.expected),
            quote(&r.got),
            r.correct,
            r.citations_verified
        ));
    }
    out
}

fn first_value(output: &AskOutput) -> Option<AnswerValue> {
    output.answer.items.first().map(|item| item.value.clone())
}

fn describe(value: &Option<AnswerValue>) -> String {
    match value {
        None => "not found".into(),
        Some(AnswerValue::Amount(a)) => format!("{} {}", a.value, a.currency.as_deref().unwrap_or("-")),
        Some(AnswerValue::Date(d)) => d.iso.clone(),
        Some(other) => serde_json::to_string(other).unwrap_or_default(),
    }
}

fn truncate(text: &str, n: usize) -> String {
    if text.chars().count() <= n { text.to_owned() } else { text.chars().take(n - 1).collect::<String>() + "…" }
}

fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The project's own gold set runs in every `cargo test`; its per-task
    /// results are committed in `fixtures/eval/invoices.csv` and any change,
    /// better or worse, shows up as a diff to review. Regenerate with
    /// `cargo xtask eval --csv fixtures/eval/invoices.csv`.
    #[test]
    fn project_eval_matches_the_committed_csv() {
        let root = crate::tidy::project_root();
        let mut rows = Vec::new();
        let mut failures = Vec::new();
        eval_invoices("fixtures/invoices", &root.join("fixtures/invoices"), &mut rows, &mut failures).unwrap();
        assert!(failures.is_empty(), "{failures:?}");
        let expected = std::fs::read_to_string(root.join("fixtures/eval/invoices.csv")).unwrap();
        let got = csv_text(&rows);
        if got != expected {
            let diff: Vec<String> = expected
                .lines()
                .zip(got.lines())
                .filter(|(a, b)| a != b)
                .map(|(a, b)| format!("- {a}\n+ {b}"))
                .collect();
            panic!(
                "eval results changed (regenerate with `cargo xtask eval --csv fixtures/eval/invoices.csv` if intended):\n{}\n(lines: {} expected, {} now)",
                diff.join("\n"),
                expected.lines().count(),
                got.lines().count()
            );
        }
        assert!(rows.iter().all(|r| r.citations_verified), "every citation of the gold set verifies");
    }
}
