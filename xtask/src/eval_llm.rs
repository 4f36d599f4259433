//! `cargo xtask eval llm --shared DIR [--model small|tiny] [--base-url URL --model-name NAME]
//! [--per-set N] [--refuse-per-set M] [--sets a,b] [--ids a,b] [--csv FILE] [--out DIR]`: the model path measured end
//! to end against the offline reader, on the same questions.
//!
//! The questions are a fixed stratified subset of the dev sets' **validation** part (see
//! [`crate::split::Split`]; MMLongBench-Doc text/table included, its vision questions
//! left out): per set, the first `N` answerable questions (default 2) and the first `M` the
//! document cannot answer (default 2), in the order of a hash of their ids (so a set's
//! questions come from several of its documents, and the pick never depends on the run).
//!
//! Every question is asked twice through the facade, as `docintel ask` would: offline, and
//! with the model for generation (question parse and routing by rules, so the two runs read
//! the same passages and differ only in the reader). Without `--base-url`, the local
//! llama.cpp server of `cargo xtask llama` is built or reused and started with the `--model`
//! GGUF (default `small`, Qwen2.5-Coder 0.5B, 8,192-token context, every core).
//!
//! One CSV row per question (default `fixtures/eval/llm-<model>.csv`): the answers, right?,
//! refused?, citations verified?, whether every answer value is in its cited lines, the
//! model calls, input and output tokens and seconds. Printed: answers right with verified
//! citations, refusals right, answers whose value is not in their cited lines, tokens and
//! seconds per question, model next to offline. `--out DIR` keeps every model run's audit
//! trail (prompts and raw replies) under `DIR`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use docintel::schema::{AskOutput, ParsedDocument};
use docintel::{AskOptions, GeneratorChoice, QuestionParser, parse_file, question_parser};
use docintel_llm::OpenAiConfig;
use sha2::{Digest, Sha256};

use crate::eval_dev::DevQuestion;
use crate::split::Split;

/// One question's outcome on one path.
#[derive(Debug, Default, Clone)]
struct Outcome {
    answer: String,
    right: bool,
    refused: bool,
    verified: bool,
    /// Every item's value is in its cited lines.
    value_in_cited: bool,
    calls: u32,
    tokens_in: u64,
    tokens_out: u64,
    seconds: f64,
    note: String,
}

fn outcome(q: &DevQuestion, result: anyhow::Result<(AskOutput, u128)>) -> Outcome {
    match result {
        Ok((output, ms)) => {
            let refused = !output.answer.feedback.answer_found || output.answer.items.is_empty();
            Outcome {
                answer: output.answer.items.iter().map(|i| i.value.to_string()).collect::<Vec<_>>().join("; "),
                right: crate::eval_dev::score(q, &output),
                refused,
                verified: output.citations_verified,
                value_in_cited: output.meta.citation_value_checks.iter().all(|ok| *ok),
                calls: if output.answer.extraction_method == docintel::schema::ExtractionMethod::Llm {
                    output.meta.iterations
                } else {
                    0
                },
                tokens_in: output.meta.tokens_in,
                tokens_out: output.meta.tokens_out,
                seconds: ms as f64 / 1000.0,
                note: output.answer.feedback.warnings.first().cloned().unwrap_or_default(),
            }
        }
        Err(error) => Outcome { refused: true, note: format!("error: {error:#}"), ..Outcome::default() },
    }
}

fn order_key(id: &str) -> String {
    let digest = Sha256::digest(id.as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The subset: per set, `per_set` answerable and `refuse_per_set` unanswerable validation
/// questions, by the hash order of their ids.
fn pick(questions: Vec<DevQuestion>, split: &Split, per_set: usize, refuse_per_set: usize) -> Vec<DevQuestion> {
    let mut by_set: BTreeMap<String, Vec<DevQuestion>> = BTreeMap::new();
    for q in questions {
        if q.set.ends_with("_vision") || split.part(&q.doc) != "validation" {
            continue;
        }
        by_set.entry(q.set.clone()).or_default().push(q);
    }
    let mut out = Vec::new();
    for (_, mut questions) in by_set {
        questions.sort_by_key(|q| order_key(&q.id));
        out.extend(questions.iter().filter(|q| q.answerable).take(per_set).cloned());
        out.extend(questions.iter().filter(|q| !q.answerable).take(refuse_per_set).cloned());
    }
    out
}

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let (mut shared, mut model, mut base_url, mut model_name) = (None, "small".to_owned(), None, None);
    let (mut per_set, mut refuse_per_set, mut csv_path, mut only) = (2usize, 2usize, None, Vec::<String>::new());
    let mut out_dir: Option<PathBuf> = None;
    let mut ids: Vec<String> = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let mut value = || iter.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--shared" => shared = Some(PathBuf::from(value()?)),
            "--model" => model = value()?.clone(),
            "--base-url" => base_url = Some(value()?.clone()),
            "--model-name" => model_name = Some(value()?.clone()),
            "--per-set" => per_set = value()?.parse().context("--per-set takes a number")?,
            "--refuse-per-set" => refuse_per_set = value()?.parse().context("--refuse-per-set takes a number")?,
            "--csv" => csv_path = Some(PathBuf::from(value()?)),
            "--sets" => only = value()?.split(',').map(str::to_owned).collect(),
            "--out" => out_dir = Some(PathBuf::from(value()?)),
            "--ids" => ids = value()?.split(',').map(str::to_owned).collect(),
            other => bail!("unknown eval llm argument {other}"),
        }
    }
    let shared = shared.context("eval llm needs --shared DIR (the shared fixtures)")?;
    let split = Split::load()?;
    let mut questions = pick(crate::eval_dev::load_all(&shared)?, &split, per_set, refuse_per_set);
    if !only.is_empty() {
        questions.retain(|q| only.iter().any(|s| s == &q.set));
    }
    // Some questions of the subset again (after a change, say).
    if !ids.is_empty() {
        questions.retain(|q| ids.iter().any(|id| id == &q.id));
    }
    // The local server lives as long as this run.
    let (_server, base_url, name) = match base_url {
        Some(url) => (None, url, model_name.clone().unwrap_or_else(|| model.clone())),
        None => {
            let clock = Instant::now();
            let (server, alias) = crate::llama::local_server(&model)?;
            eprintln!("llama-server with model {model} healthy in {:.1} s", clock.elapsed().as_secs_f64());
            let url = server.base_url();
            (Some(server), url, alias.to_owned())
        }
    };
    let offline = AskOptions::new(5);
    let mut with_model = AskOptions::new(5);
    with_model.generator = GeneratorChoice::Llm {
        config: OpenAiConfig {
            base_url: base_url.clone(),
            api_key: None,
            timeout: std::time::Duration::from_secs(300),
            max_retries: 1,
            backoff_base: std::time::Duration::from_millis(500),
            send_legacy_max_tokens: true,
        },
        model: name.clone(),
    };
    with_model.llm_question = false;
    with_model.llm_router = false;

    let parser = question_parser(&offline)?;
    eprintln!(
        "{} questions ({} answerable), model {name} at {base_url}",
        questions.len(),
        questions.iter().filter(|q| q.answerable).count()
    );

    let mut documents: BTreeMap<String, Option<ParsedDocument>> = BTreeMap::new();
    let mut rows: Vec<(DevQuestion, Outcome, Outcome)> = Vec::new();
    let clock = Instant::now();
    for (i, q) in questions.iter().enumerate() {
        let document = documents.entry(q.doc.clone()).or_insert_with(|| parse_file(&shared.join(&q.doc)).ok());
        let Some(document) = document.as_ref() else {
            eprintln!("{}: cannot parse, skipped", q.doc);
            continue;
        };
        let off = outcome(q, crate::eval_sets::ask(&parser, &offline, document, &q.question));
        let llm = outcome(q, ask_kept(&parser, &with_model, document, q, out_dir.as_deref()));
        eprintln!(
            "[{}/{}] {} {}: offline {} · model {} ({} call(s), {} in, {:.0} s){}",
            i + 1,
            questions.len(),
            q.set,
            q.id,
            verdict(q, &off),
            verdict(q, &llm),
            llm.calls,
            llm.tokens_in,
            llm.seconds,
            if llm.note.starts_with("error") { format!(" {}", llm.note) } else { String::new() }
        );
        rows.push((q.clone(), off, llm));
    }
    let path = csv_path.unwrap_or_else(|| crate::tidy::project_root().join(format!("fixtures/eval/llm-{model}.csv")));
    write_csv(&path, &rows, &name)?;
    print_summary(&rows, &name, clock.elapsed().as_secs_f64());
    println!("per-question CSV: {}", path.display());
    Ok(())
}

/// [`crate::eval_sets::ask`], writing the run's events (prompts, raw replies) as
/// `<out>/<set>-<id>.json` when `out` is given.
fn ask_kept(
    parser: &docintel::RuleParser,
    options: &AskOptions,
    document: &ParsedDocument,
    q: &DevQuestion,
    out: Option<&std::path::Path>,
) -> anyhow::Result<(AskOutput, u128)> {
    let clock = Instant::now();
    let parsed = parser.parse(&q.question, &document.profile)?;
    let run = docintel::answer_parsed(document, parsed, parser, options)?;
    if let Some(out) = out {
        std::fs::create_dir_all(out)?;
        let name: String = format!("{}-{}", q.set, q.id)
            .chars()
            .map(|c| if c.is_alphanumeric() || c == '-' { c } else { '_' })
            .collect();
        let kept = serde_json::json!({"output": run.output, "events": run.events});
        std::fs::write(out.join(format!("{name}.json")), serde_json::to_string_pretty(&kept)?)?;
    }
    Ok((run.output, clock.elapsed().as_millis()))
}

fn verdict(q: &DevQuestion, o: &Outcome) -> &'static str {
    match (q.answerable, o.refused, o.right) {
        (true, false, true) if o.verified => "right",
        (true, false, true) => "right (citations not verified)",
        (true, false, false) => "wrong",
        (true, true, _) => "refused",
        (false, true, _) => "refused (right)",
        (false, false, _) => "answered (should refuse)",
    }
}

fn write_csv(path: &std::path::Path, rows: &[(DevQuestion, Outcome, Outcome)], model: &str) -> anyhow::Result<()> {
    let mut writer = csv::Writer::from_path(path).with_context(|| format!("cannot write {}", path.display()))?;
    writer.write_record([
        "set",
        "id",
        "doc",
        "answerable",
        "question",
        "gold",
        "path",
        "model",
        "answer",
        "right",
        "refused",
        "citations_verified",
        "value_in_cited_lines",
        "calls",
        "tokens_in",
        "tokens_out",
        "seconds",
        "note",
    ])?;
    for (q, off, llm) in rows {
        for (name, o) in [("offline", off), ("model", llm)] {
            let flag = |b: bool| if b { "1" } else { "0" }.to_owned();
            writer.write_record([
                q.set.clone(),
                q.id.clone(),
                q.doc.clone(),
                flag(q.answerable),
                q.question.clone(),
                q.answer.clone().unwrap_or_default(),
                name.to_owned(),
                if name == "model" { model.to_owned() } else { "extractive".to_owned() },
                docintel::schema::text::truncate_chars(&o.answer, 200).to_owned(),
                flag(o.right),
                flag(o.refused),
                flag(o.verified),
                flag(o.value_in_cited),
                o.calls.to_string(),
                o.tokens_in.to_string(),
                o.tokens_out.to_string(),
                format!("{:.1}", o.seconds),
                docintel::schema::text::truncate_chars(&o.note, 200).to_owned(),
            ])?;
        }
    }
    writer.flush()?;
    Ok(())
}

fn print_summary(rows: &[(DevQuestion, Outcome, Outcome)], model: &str, seconds: f64) {
    let answerable = rows.iter().filter(|(q, _, _)| q.answerable).count();
    let refuse = rows.len() - answerable;
    println!("eval llm: {} questions ({answerable} answerable, {refuse} to refuse) in {seconds:.0} s", rows.len());
    for (name, pick) in [("offline", 0usize), (model, 1usize)] {
        let of = |r: &(DevQuestion, Outcome, Outcome)| if pick == 0 { r.1.clone() } else { r.2.clone() };
        let outcomes: Vec<(bool, Outcome)> = rows.iter().map(|r| (r.0.answerable, of(r))).collect();
        let right_verified = outcomes.iter().filter(|(a, o)| *a && !o.refused && o.right && o.verified).count();
        let right = outcomes.iter().filter(|(a, o)| *a && !o.refused && o.right).count();
        let wrong = outcomes.iter().filter(|(a, o)| *a && !o.refused && !o.right).count();
        let refusals_right = outcomes.iter().filter(|(a, o)| !*a && o.refused).count();
        let answered: Vec<&Outcome> = outcomes.iter().filter(|(_, o)| !o.refused).map(|(_, o)| o).collect();
        let absent = answered.iter().filter(|o| !o.value_in_cited).count();
        let errors = outcomes.iter().filter(|(_, o)| o.note.starts_with("error")).count();
        let mut secs: Vec<f64> = outcomes.iter().map(|(_, o)| o.seconds).collect();
        secs.sort_by(f64::total_cmp);
        let median = secs.get(secs.len() / 2).copied().unwrap_or(0.0);
        let max = secs.last().copied().unwrap_or(0.0);
        let n = outcomes.len().max(1) as f64;
        let tokens_in = outcomes.iter().map(|(_, o)| o.tokens_in).sum::<u64>() as f64 / n;
        let tokens_out = outcomes.iter().map(|(_, o)| o.tokens_out).sum::<u64>() as f64 / n;
        let calls = outcomes.iter().map(|(_, o)| o.calls as u64).sum::<u64>() as f64 / n;
        println!(
            "{name:<40} right with verified citations {right_verified}/{answerable} (right {right}, wrong {wrong}) · \
             refusals right {refusals_right}/{refuse} · answers whose value is not in their cited lines {absent}/{} · \
             errors {errors} · per question: {calls:.2} calls, {tokens_in:.0} in / {tokens_out:.0} out tokens, \
             median {median:.1} s, max {max:.1} s",
            answered.len()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(set: &str, id: &str, answerable: bool) -> DevQuestion {
        DevQuestion {
            set: set.into(),
            id: id.into(),
            doc: format!("{set}/{id}.pdf"),
            question: "q".into(),
            answer_type: "text".into(),
            answer: None,
            aliases: Vec::new(),
            pages: Vec::new(),
            answerable,
            kind: String::new(),
        }
    }

    #[test]
    fn the_subset_is_fixed_and_stratified() {
        let split = Split::default();
        // Nothing is in the validation part of an empty split.
        assert!(pick(vec![question("a", "1", true)], &split, 2, 2).is_empty());
        let mut split = Split::default();
        let questions: Vec<DevQuestion> = (0..10)
            .map(|i| question(if i % 2 == 0 { "a" } else { "b" }, &format!("q{i}"), i % 3 != 0))
            .chain([question("a_vision", "v", true)])
            .collect();
        for q in &questions {
            split.insert(&q.doc, "validation");
        }
        let picked = pick(questions.clone(), &split, 2, 1);
        let again = pick(questions.into_iter().rev().collect(), &split, 2, 1);
        let ids = |p: &[DevQuestion]| p.iter().map(|q| q.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&picked), ids(&again), "the order of the input does not matter");
        for set in ["a", "b"] {
            let of: Vec<&DevQuestion> = picked.iter().filter(|q| q.set == set).collect();
            assert_eq!(of.iter().filter(|q| q.answerable).count(), 2);
            assert_eq!(of.iter().filter(|q| !q.answerable).count(), 1);
        }
        assert!(picked.iter().all(|q| !q.set.ends_with("_vision")));
    }
}
