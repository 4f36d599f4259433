//! `cargo xtask fit-types --shared DIR [--dry-run] [--dump FILE]`: fits the
//! question brick's learned answer-type model on the *tuning* questions and
//! writes it to `crates/docintel-question/data/type_model.json`.
//!
//! Every gold question with a type the answer types table knows is typed by
//! the rules alone ([`docintel::RuleParser::rule_answer_type`]); its features
//! ([`docintel_question::type_features`]: words, word pairs, the first two
//! words, the rules' type) are kept when they occur in two tuning questions
//! or more. linfa's multinomial logistic regression is fitted on them; it
//! speaks only where the rules fell back to `text`. The
//! penalty and the override threshold are chosen together by the held-out
//! type accuracy over four document folds of the tuning split (ties go to
//! the higher threshold: the rules stay unless the model is sure).
//! Only the dev sets (`fixtures/eval/dev/`, typed by hand) are read:
//! MMLongBench-Doc's `Int`/`Float`/`Str` say too little, and the older
//! template sets type coarsely (a contract's title and its governing law
//! are `text` there, FinanceBench's ratios `amount`); list golds are left
//! out too (a list says nothing of its items' type). Validation
//! questions are only scored, never fitted on.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::split::Split;
use anyhow::{Context, bail};
use docintel::AskOptions;
use docintel::{TYPE_FALLBACK, TypeModel, TypeVerdict, type_features};
use linfa::prelude::*;
use linfa_logistic::MultiLogisticRegression;
use ndarray::{Array1, Array2};
use serde_json::json;
// The reader's document folds: a document is in the same fold for both fits.
use crate::fit_reader::{FOLDS, fold_of};

/// One typed question.
struct Sample {
    set: String,
    id: String,
    doc: String,
    question: String,
    gold: String,
    rule: String,
    part: String,
    fold: usize,
}

const ALPHAS: [f64; 4] = [0.01, 0.1, 1.0, 10.0];
const THRESHOLDS: [f64; 9] = [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9];

/// A fitted model: the question brick's own [`TypeModel`], so scoring and
/// the override rule are the ones `docintel ask` runs.
struct Fitted(TypeModel);

impl Fitted {
    fn predict(&self, sample: &Sample) -> TypeVerdict {
        self.0.predict(&sample.question, &sample.rule)
    }

    /// The type used at threshold `tau` ([`TypeModel::decide`]).
    fn decide(&self, sample: &Sample, tau: f64) -> String {
        let model = TypeModel { threshold: tau, ..self.0.clone() };
        model.decide(&sample.question, &sample.rule).map_or_else(|| sample.rule.clone(), |v| v.answer_type)
    }
}

fn fit(samples: &[&Sample], alpha: f64) -> anyhow::Result<Fitted> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for s in samples {
        for f in type_features(&s.question, &s.rule) {
            *counts.entry(f).or_default() += 1;
        }
    }
    let vocab: Vec<String> = counts.into_iter().filter(|(_, n)| *n >= 2).map(|(f, _)| f).collect();
    let index: BTreeMap<&str, usize> = vocab.iter().enumerate().map(|(i, f)| (f.as_str(), i)).collect();
    let classes: Vec<String> = samples.iter().map(|s| s.gold.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    if classes.len() < 2 {
        bail!("cannot fit the type model: {} class(es)", classes.len());
    }
    let mut x = Array2::<f64>::zeros((samples.len(), vocab.len()));
    for (row, s) in samples.iter().enumerate() {
        for f in type_features(&s.question, &s.rule) {
            if let Some(&col) = index.get(f.as_str()) {
                x[[row, col]] = 1.0;
            }
        }
    }
    let y: Array1<usize> = samples.iter().map(|s| classes.iter().position(|c| *c == s.gold).unwrap_or(0)).collect();
    let model = MultiLogisticRegression::default().alpha(alpha).max_iterations(300).fit(&Dataset::new(x, y))?;
    // linfa orders its classes by label value; map them back to names.
    let order: Vec<usize> = model.classes().to_vec();
    let params = model.params();
    let weights = vocab
        .iter()
        .enumerate()
        .map(|(i, f)| (f.clone(), (0..order.len()).map(|k| params[[i, k]]).collect()))
        .collect();
    Ok(Fitted(TypeModel {
        classes: order.iter().map(|&c| classes[c].clone()).collect(),
        weights,
        intercepts: model.intercept().to_vec(),
        threshold: 1.0,
        provenance: serde_json::Value::Null,
    }))
}

fn accuracy<'a>(samples: impl Iterator<Item = (&'a Sample, String)>) -> (usize, usize) {
    samples.fold((0, 0), |(right, n), (s, got)| (right + usize::from(got == s.gold), n + 1))
}

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let mut shared: Option<PathBuf> = None;
    let mut dry_run = false;
    let mut dump: Option<PathBuf> = None;
    let mut out = crate::tidy::project_root().join("crates/docintel-question/data/type_model.json");
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let mut value = || iter.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--shared" => shared = Some(PathBuf::from(value()?)),
            "--dry-run" => dry_run = true,
            "--dump" => dump = Some(PathBuf::from(value()?)),
            "--out" => out = PathBuf::from(value()?),
            other => bail!("unknown fit-types argument {other}"),
        }
    }
    let shared = shared.context("fit-types needs --shared DIR (the gold sets)")?;
    let split = Split::load()?;
    let mut questions = crate::eval_dev::load_all(&shared)?;
    questions.retain(|q| !q.set.starts_with("mmlongbench"));
    let parser = docintel::question_parser(&AskOptions::new(5))?;
    let mut seen = BTreeSet::new();
    let mut samples = Vec::new();
    for q in questions {
        if parser.satellites().answer_type(&q.answer_type).is_none() {
            continue;
        }
        // Template questions (one per invoice, per contract) count once.
        if !seen.insert((q.question.clone(), q.answer_type.clone())) {
            continue;
        }
        samples.push(Sample {
            rule: parser.rule_answer_type(&q.question),
            part: split.part(&q.doc),
            fold: fold_of(&q.doc),
            set: q.set,
            id: q.id,
            doc: q.doc,
            question: q.question,
            gold: q.answer_type,
        });
    }
    if let Some(path) = &dump {
        let mut writer = csv::Writer::from_path(path)?;
        writer.write_record(["set", "id", "doc", "part", "fold", "gold", "rule", "question"])?;
        for s in &samples {
            writer.write_record([
                &s.set,
                &s.id,
                &s.doc,
                &s.part,
                &s.fold.to_string(),
                &s.gold,
                &s.rule,
                &s.question,
            ])?;
        }
        writer.flush()?;
        eprintln!("fit-types: {} questions written to {}", samples.len(), path.display());
    }
    let tuning: Vec<&Sample> = samples.iter().filter(|s| s.part == "tuning").collect();
    let validation: Vec<&Sample> = samples.iter().filter(|s| s.part == "validation").collect();
    eprintln!("fit-types: {} tuning, {} validation questions", tuning.len(), validation.len());

    // Held-out predictions per penalty, then the best (penalty, threshold).
    let mut best: Option<(usize, f64, f64)> = None;
    let rules_right = tuning.iter().filter(|s| s.rule == s.gold).count();
    for alpha in ALPHAS {
        let mut held: Vec<(&Sample, TypeVerdict)> = Vec::new();
        for fold in 0..FOLDS {
            let train: Vec<&Sample> = tuning.iter().copied().filter(|s| s.fold != fold).collect();
            let model = fit(&train, alpha)?;
            held.extend(tuning.iter().copied().filter(|s| s.fold == fold).map(|s| (s, model.predict(s))));
        }
        for tau in THRESHOLDS {
            let right = held
                .iter()
                .filter(|(s, v)| {
                    let overrides = s.rule == TYPE_FALLBACK && v.answer_type != s.rule && v.probability >= tau;
                    *if overrides { &v.answer_type } else { &s.rule } == s.gold
                })
                .count();
            eprintln!("  alpha {alpha:>5}: threshold {tau:.2}: {right} of {} held out typed right", held.len());
            if best.is_none_or(|(r, _, t)| right > r || (right == r && tau > t)) {
                best = Some((right, alpha, tau));
            }
        }
    }
    let (held_right, alpha, tau) = best.context("no fit")?;
    let model = fit(&tuning, alpha)?;
    let (val_model, val_n) = accuracy(validation.iter().map(|s| (*s, model.decide(s, tau))));
    let (val_rules, _) = accuracy(validation.iter().map(|s| (*s, s.rule.clone())));
    println!(
        "fit-types: alpha {alpha}, threshold {tau}: tuning (held out by document fold) {held_right}/{} typed right \
         (rules alone {rules_right}); validation {val_model}/{val_n} (rules alone {val_rules})",
        tuning.len()
    );
    let changed: Vec<&&Sample> = validation.iter().filter(|s| model.decide(s, tau) != s.rule).collect();
    for s in &changed {
        let got = model.decide(s, tau);
        println!(
            "  validation {} {}: rules {} → model {} (gold {}){}",
            s.set,
            s.id,
            s.rule,
            got,
            s.gold,
            if got == s.gold { "" } else { "  WRONG" }
        );
    }
    if dry_run {
        return Ok(());
    }
    let file = json!({
        "provenance": {
            "command": "cargo xtask fit-types --shared ../shared/fixtures",
            "alpha": alpha,
            "tuning_questions": tuning.len(),
            "held_out_typed_right": held_right,
            "rules_alone_typed_right": rules_right,
            "features": model.0.weights.len(),
        },
        "classes": model.0.classes,
        "intercepts": model.0.intercepts.iter().map(|v| (v * 1e4).round() / 1e4).collect::<Vec<_>>(),
        "threshold": tau,
        "weights": model.0.weights.iter().map(|(f, w)| (f.clone(), w.iter().map(|v| (v * 1e4).round() / 1e4).collect::<Vec<_>>())).collect::<BTreeMap<_, _>>(),
    });
    std::fs::write(&out, serde_json::to_string_pretty(&file)? + "\n")
        .with_context(|| format!("cannot write {}", out.display()))?;
    eprintln!("fit-types: wrote {}", out.display());
    Ok(())
}
