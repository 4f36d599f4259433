//! Question sets in one JSONL form, scored by answer type (the tuning /
//! validation split they are reported by is [`crate::split`]).
//!
//! A set is a file `fixtures/eval/dev/<name>.jsonl` (one question a line:
//! `id`, `doc` relative to the shared fixtures, `question`, `answer_type`,
//! `answer` or `null` when the document cannot answer, `aliases`, `pages`,
//! `answerable`, `missing`, `kind`), plus MMLongBench-Doc read from its own
//! `questions.jsonl` (questions whose evidence is a chart or a figure are the
//! set `mmlongbench_vision`, reported apart: they need the page image).
//!
//! Scoring (see [`score`]): numbers, counts, percentages and years by value
//! (1% tolerance), amounts by value with a thousands/millions rescale, dates
//! by ISO day (or year and month when the gold gives no day), yes/no by
//! polarity, names and short phrases by folded containment with a length
//! bound (a whole line that happens to hold the name is not the name), text
//! by containment, lists and compound answers when at least 80% of the parts
//! are found. A question the document cannot answer is right when refused.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use docintel::schema::{AnswerValue, AskOutput, ParsedDocument};
use docintel::{AskOptions, RuleParser, parse_file};
use serde_json::Value;

use crate::eval_sets::{GoldRow, contains_folded, fold, numbers_in};
use crate::split::Split;

/// One question of a JSONL set.
#[derive(Debug, Clone)]
pub(crate) struct DevQuestion {
    pub(crate) set: String,
    pub(crate) id: String,
    pub(crate) doc: String,
    pub(crate) question: String,
    pub(crate) answer_type: String,
    /// Gold answer; parts joined by ` | ` for lists and compound questions.
    pub(crate) answer: Option<String>,
    pub(crate) aliases: Vec<String>,
    pub(crate) pages: Vec<u32>,
    pub(crate) answerable: bool,
    pub(crate) kind: String,
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect()).unwrap_or_default()
}

/// Reads one JSONL set; the set name is the file stem unless the id names
/// one (`papers-attn-01` → `papers`).
pub(crate) fn read_jsonl(path: &Path) -> anyhow::Result<Vec<DevQuestion>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let item: Value =
            serde_json::from_str(line).with_context(|| format!("{}:{}: not valid JSON", path.display(), i + 1))?;
        let id = item["id"].as_str().unwrap_or_default().to_owned();
        let set = id.split('-').next().filter(|s| !s.is_empty()).unwrap_or(&stem).to_owned();
        out.push(DevQuestion {
            set,
            doc: item["doc"].as_str().unwrap_or_default().to_owned(),
            question: item["question"].as_str().unwrap_or_default().to_owned(),
            answer_type: item["answer_type"].as_str().unwrap_or("text").to_owned(),
            answer: item["answer"].as_str().map(str::to_owned).filter(|a| !a.trim().is_empty()),
            aliases: strings(&item["aliases"]),
            pages: item["pages"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_u64).map(|p| p as u32).collect())
                .unwrap_or_default(),
            answerable: item["answerable"].as_bool().unwrap_or(true),
            kind: item["kind"].as_str().unwrap_or("lookup").to_owned(),
            id,
        });
    }
    Ok(out)
}

/// MMLongBench-Doc's questions in the common form. `Int`/`Float` answers are
/// numbers, `Str` text, `List` a list (a Python-style list in the answer),
/// `None` unanswerable; chart and figure evidence goes to the vision set.
fn read_mmlongbench(shared: &Path) -> anyhow::Result<Vec<DevQuestion>> {
    let path = shared.join("mmlongbench/questions.jsonl");
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let item: Value = serde_json::from_str(line).with_context(|| format!("{}: not valid JSON", path.display()))?;
        let sources = strings(&item["evidence_sources"]);
        let vision = sources.iter().any(|s| s == "Chart" || s == "Figure");
        let answerable = item["answerable"].as_bool().unwrap_or(true);
        let format = item["answer_format"].as_str().unwrap_or("Str");
        let raw = match &item["answer"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let answer_type = match format {
            "Int" | "Float" => "number",
            "List" => "list",
            _ => "text",
        };
        let answer = match format {
            "List" => Some(python_list(&raw).join(" | ")),
            "None" => None,
            _ => Some(raw),
        };
        out.push(DevQuestion {
            set: if vision { "mmlongbench_vision" } else { "mmlongbench" }.to_owned(),
            id: format!("mmlb-{}", item["id"].as_u64().map_or_else(|| item["id"].to_string(), |n| n.to_string())),
            doc: item["doc"].as_str().unwrap_or_default().to_owned(),
            question: item["question"].as_str().unwrap_or_default().to_owned(),
            answer_type: answer_type.to_owned(),
            answer,
            aliases: Vec::new(),
            pages: item["evidence_pages"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_u64).map(|p| p as u32).collect())
                .unwrap_or_default(),
            answerable: answerable && format != "None",
            kind: if answerable { "lookup" } else { "unanswerable" }.to_owned(),
        });
    }
    Ok(out)
}

/// The items of a Python-style list literal (`['a', "b", 3]`), unquoted.
fn python_list(raw: &str) -> Vec<String> {
    let inner = raw.trim().trim_start_matches('[').trim_end_matches(']');
    let mut items = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for c in inner.chars() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, ',') => {
                items.push(std::mem::take(&mut current));
            }
            _ => current.push(c),
        }
    }
    items.push(current);
    items.into_iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect()
}

/// The JSONL sets under `fixtures/eval/dev/`, sorted by path.
pub(crate) fn dev_files() -> anyhow::Result<Vec<PathBuf>> {
    let dir = crate::tidy::project_root().join("fixtures/eval/dev");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    Ok(files)
}

/// Every JSONL set under `fixtures/eval/dev/` plus MMLongBench-Doc.
pub(crate) fn load_all(shared: &Path) -> anyhow::Result<Vec<DevQuestion>> {
    let mut files = dev_files()?;
    // `DOCINTEL_EVAL_DEV_FILES=a,b` keeps the sets of those file stems only
    // (comparing runs on a fixed set while new sets are being written).
    if let Ok(only) = std::env::var("DOCINTEL_EVAL_DEV_FILES") {
        let only: Vec<&str> = only.split(',').map(str::trim).collect();
        files.retain(|f| f.file_stem().is_some_and(|s| only.contains(&s.to_string_lossy().as_ref())));
    }
    let mut out = Vec::new();
    for file in files {
        out.extend(read_jsonl(&file)?);
    }
    if shared.join("mmlongbench/questions.jsonl").is_file() {
        out.extend(read_mmlongbench(shared)?);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// Scoring
// ---------------------------------------------------------------------------

fn close(a: f64, b: f64) -> bool {
    let scale = a.abs().max(b.abs()).max(1e-9);
    (a - b).abs() / scale <= 0.01
}

/// The numbers an answer value states: an amount or quantity its value, a
/// date its year (and day/month), text the numbers written in it.
fn value_numbers(value: &AnswerValue) -> Vec<f64> {
    match value {
        AnswerValue::Amount(a) => vec![a.value],
        AnswerValue::Quantity(q) => vec![q.quantity],
        AnswerValue::Date(d) => numbers_in(&d.iso.replace('-', " ")),
        other => numbers_in(&other.to_string()),
    }
}

/// Words of a folded text.
fn words(text: &str) -> usize {
    fold(text).split(' ').filter(|w| !w.is_empty()).count()
}

/// Spelled-out small numbers, so that "thirty days" and "30 days" compare.
fn spelled(text: &str) -> String {
    const UNITS: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 8] = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"];
    let folded = fold(&text.replace('-', " "));
    let tokens: Vec<&str> = folded.split(' ').collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i];
        if let Some(n) = UNITS.iter().position(|u| *u == t) {
            out.push(n.to_string());
        } else if let Some(n) = TENS.iter().position(|u| *u == t) {
            let mut value = 20 + 10 * n;
            if let Some(u) = tokens.get(i + 1).and_then(|next| UNITS[1..10].iter().position(|u| u == next)) {
                value += u + 1;
                i += 1;
            }
            out.push(value.to_string());
        } else {
            out.push(t.to_owned());
        }
        i += 1;
    }
    out.join(" ")
}

/// Whether `part` (a gold value of type `answer_type`) is among `values`.
pub(crate) fn part_found(part: &str, answer_type: &str, values: &[&AnswerValue]) -> bool {
    let answer: String = values.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("; ");
    match answer_type {
        "count" | "number" | "percentage" | "year" | "amount" => {
            let Some(gold) = numbers_in(part).first().copied() else {
                return contains_folded(&answer, part);
            };
            let gold =
                if part.trim_start().starts_with('-') || part.trim_start().starts_with('(') { -gold } else { gold };
            let scales: &[f64] = if answer_type == "amount" { &[1.0, 1e3, 1e-3, 1e6, 1e-6] } else { &[1.0] };
            values.iter().any(|value| {
                let numbers = value_numbers(value);
                // A value is one number: a line that holds many is not it.
                numbers.len() <= 3
                    && numbers.iter().any(|&n| scales.iter().any(|s| close(n * s, gold) || close(-n * s, gold)))
            })
        }
        "date" => values.iter().any(|value| match value {
            AnswerValue::Date(d) => d.iso == part || (part.len() < 10 && d.iso.starts_with(part)),
            other => contains_folded(&other.to_string(), part),
        }),
        "boolean" => {
            let want = matches!(fold(part).as_str(), "yes" | "true" | "oui");
            values.iter().any(|value| match value {
                AnswerValue::Boolean(b) => *b == want,
                other => fold(&other.to_string()).starts_with(if want { "yes" } else { "no" }),
            })
        }
        "text" | "list" => contains_folded(&spelled(&answer), &spelled(part)),
        // Names, places, identifiers, durations, short phrases: the gold in
        // the answer, and the answer not much longer than the gold.
        _ => {
            let (a, g) = (spelled(&answer), spelled(part));
            let bound = (2 * words(part)).max(words(part) + 6);
            contains_folded(&a, &g) && words(&answer) <= bound || (!a.is_empty() && contains_folded(&g, &a))
        }
    }
}

/// The gold parts of a question (one for a single answer) and the type
/// each is scored as.
pub(crate) fn gold_parts(q: &DevQuestion) -> Vec<(String, String)> {
    let Some(answer) = &q.answer else { return Vec::new() };
    if q.answer_type == "list" || q.kind == "compound" || answer.contains(" | ") {
        let part_type = if q.answer_type == "list" { "text" } else { q.answer_type.as_str() };
        return answer
            .split(" | ")
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| (p.to_owned(), part_type.to_owned()))
            .collect();
    }
    vec![(answer.clone(), q.answer_type.clone())]
}

/// Whether `values` answer gold part `part` of `q` (its aliases count for a
/// single answer).
pub(crate) fn values_match(q: &DevQuestion, part: &(String, String), values: &[&AnswerValue]) -> bool {
    let single = gold_parts(q).len() == 1;
    part_found(&part.0, &part.1, values)
        || (single && q.aliases.iter().any(|alias| part_found(alias, &q.answer_type, values)))
}

/// Whether the answer is right (see the module docs).
pub(crate) fn score(q: &DevQuestion, output: &AskOutput) -> bool {
    let refused = !output.answer.feedback.answer_found || output.answer.items.is_empty();
    if !q.answerable {
        return refused;
    }
    if refused {
        return false;
    }
    let values: Vec<&AnswerValue> = output.answer.items.iter().map(|i| &i.value).collect();
    let parts = gold_parts(q);
    if parts.is_empty() {
        return false;
    }
    let found = parts.iter().filter(|p| values_match(q, p, &values)).count();
    if parts.len() == 1 { found == 1 } else { found * 5 >= parts.len() * 4 }
}

// ---------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------

/// Asks every question of the JSONL sets (and MMLongBench-Doc); a document
/// that cannot be parsed is reported once and its questions skipped.
pub(crate) fn run(
    shared: &Path,
    parser: &RuleParser,
    options: &AskOptions,
    split: &Split,
    only: &[String],
) -> anyhow::Result<Vec<GoldRow>> {
    let questions = load_all(shared)?;
    let mut documents: BTreeMap<String, Option<ParsedDocument>> = BTreeMap::new();
    let mut rows = Vec::new();
    let clock = Instant::now();
    for q in questions {
        let family = q.set.trim_end_matches("_vision");
        if !only.is_empty() && !only.iter().any(|s| s == &q.set || s == family) {
            continue;
        }
        let document = documents.entry(q.doc.clone()).or_insert_with(|| match parse_file(&shared.join(&q.doc)) {
            Ok(d) => Some(d),
            Err(error) => {
                eprintln!("{}: cannot parse: {error}", q.doc);
                None
            }
        });
        let Some(document) = document.as_ref() else { continue };
        let (output, ms) = crate::eval_sets::ask(parser, options, document, &q.question)?;
        let set: &'static str = Box::leak(q.set.clone().into_boxed_str());
        let mut row =
            GoldRow::new(set, q.id.clone(), q.answer.clone().unwrap_or_else(|| "refuse".to_owned()), &output, ms);
        row.doc = q.doc.clone();
        row.part = split.part(&q.doc);
        row.should_refuse = !q.answerable;
        row.correct = Some(score(&q, &output));
        if q.answerable && !q.pages.is_empty() {
            row.page_hit = Some(crate::eval_sets::cited_pages(&output).iter().any(|p| q.pages.contains(p)));
        }
        rows.push(row);
    }
    eprintln!("dev sets: {} questions in {:.1} s", rows.len(), clock.elapsed().as_secs_f64());
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_lists_unquote() {
        assert_eq!(python_list("['Circle', 'Rectangle']"), vec!["Circle", "Rectangle"]);
        assert_eq!(python_list("[\"it's\", 3]"), vec!["it's", "3"]);
    }

    #[test]
    fn spelled_numbers_compare() {
        assert_eq!(spelled("thirty-six (36) months"), "36 36 months");
        assert_eq!(spelled("Thirty days"), "30 days");
        assert!(contains_folded(&spelled("a grace period of thirty days"), &spelled("30 days")));
    }
}
