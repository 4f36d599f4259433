//! Replay: rebuild what one stored question sent and produced (the prompts
//! of a model, or the extractive answer) from its stored parsed question and
//! passages, re-reading the document, and compare byte for byte.

use std::path::{Path, PathBuf};

use docintel_parse::ParseOptions;
use docintel_schema::{Generator, ParsedQuestion};

use crate::ask::feedback_keyword;
use crate::error::brick_error;
use crate::record::document_key_of;
use crate::{ExtractiveGenerator, PipelineError, parse_file_with_options};

/// One check of [`replay_question`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ReplayCheck {
    /// What was rebuilt (`answer`, `call 1 system prompt`, ...).
    pub what: String,
    /// Whether the rebuilt bytes equal the recorded ones.
    pub identical: bool,
    /// A short explanation (first difference, or what was compared).
    pub detail: String,
}

/// What [`replay_question`] found.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ReplayReport {
    /// The question folder replayed.
    pub dir: String,
    /// The document re-read.
    pub document: String,
    /// One entry per rebuilt artefact.
    pub checks: Vec<ReplayCheck>,
}

impl ReplayReport {
    /// Whether every check matched.
    pub fn all_identical(&self) -> bool {
        !self.checks.is_empty() && self.checks.iter().all(|c| c.identical)
    }
}

/// `p<page> l<start>-<end>` (the `_meta.passages_shown` form) as a passage.
fn passage_from_label(label: &str) -> Option<docintel_schema::Passage> {
    let (page, lines) = label.strip_prefix('p')?.split_once(" l")?;
    let (start, end) = lines.split_once('-')?;
    let (page, line_start, line_end) = (page.parse().ok()?, start.parse().ok()?, end.parse().ok()?);
    Some(docintel_schema::Passage {
        line_start,
        line_end,
        page,
        score: 0.0,
        anchor_line: line_start,
        matched_keywords: Vec::new(),
        pinned: false,
    })
}

/// Where two texts first differ, for a replay report.
fn first_difference(recorded: &str, rebuilt: &str) -> String {
    let at = recorded.chars().zip(rebuilt.chars()).take_while(|(a, b)| a == b).count();
    let around = |t: &str| t.chars().skip(at.saturating_sub(20)).take(60).collect::<String>();
    format!(
        "first difference at char {at}: recorded {:?}, rebuilt {:?} ({} vs {} chars)",
        around(recorded),
        around(rebuilt),
        recorded.chars().count(),
        rebuilt.chars().count()
    )
}

/// Rebuilds what one stored question sent and produced, from its stored
/// parsed question and passages, re-reading the document, and compares:
/// with an LLM generator, every call's system and user prompt must be
/// byte-identical to what was sent (recorded in the `llm_response` events);
/// with the extractive generator, the answer itself must be (it is
/// deterministic). The stored citations are verified again against the
/// document as it is now.
pub fn replay_question(dir: &Path) -> Result<ReplayReport, PipelineError> {
    replay_question_with_options(dir, &ParseOptions::default())
}

/// [`replay_question`] re-reading the document with `options` (the password of an encrypted
/// PDF: passwords are never stored in a trace).
pub fn replay_question_with_options(dir: &Path, options: &ParseOptions) -> Result<ReplayReport, PipelineError> {
    let trace = docintel_trace::load_question_trace(dir).map_err(PipelineError::Trace)?;
    let parsed: ParsedQuestion = trace
        .events
        .iter()
        .find(|e| e.brick == "question" && e.step == "parse")
        .and_then(|e| serde_json::from_value(e.detail.clone()).ok())
        .unwrap_or_else(|| trace.parsed_question.clone());
    // The document the trace recorded (absolute path and SHA-256 of its bytes); traces
    // written before that record keep the path as typed.
    let recorded = trace.events.iter().find(|e| e.brick == "parse" && e.step == "document").map(|e| &e.detail);
    let recorded_path = recorded.and_then(|d| d.get("path")).and_then(serde_json::Value::as_str);
    let recorded_hash = recorded.and_then(|d| d.get("sha256")).and_then(serde_json::Value::as_str);
    let document_path = PathBuf::from(recorded_path.unwrap_or(&trace.output.document));
    let document = parse_file_with_options(&document_path, options).map_err(PipelineError::Parse)?;
    // As the ask saw it (see `ask::answer`).
    let document = document.answerable().into_owned();
    let shown: Vec<docintel_schema::Passage> =
        trace.output.meta.passages_shown.iter().filter_map(|l| passage_from_label(l)).collect();
    let mut checks = Vec::new();
    let (_, sha256) = document_key_of(&document_path);
    checks.push(ReplayCheck {
        what: format!("document {} (SHA-256 of its bytes)", document_path.display()),
        identical: recorded_hash.is_none_or(|h| h == sha256),
        detail: match recorded_hash {
            None => "no hash recorded (a trace from an older build)".into(),
            Some(h) if h == sha256 => format!("{} as recorded", &sha256[..12]),
            Some(h) => format!("the file changed: recorded {}, now {}", &h[..h.len().min(12)], &sha256[..12]),
        },
    });
    // The question the trace answers: the same text in the answer, the parsed question and
    // the trace folder's name.
    let folder = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let same_question = trace.output.question == parsed.original_question
        && trace.parsed_question.original_question == parsed.original_question
        && folder == docintel_schema::slug::question_slug(&parsed.original_question);
    checks.push(ReplayCheck {
        what: "question".into(),
        identical: same_question,
        detail: if same_question {
            format!("{:?}", parsed.original_question)
        } else {
            format!(
                "answer.json asks {:?}, parsed_question.json {:?}, the folder is {folder}",
                trace.output.question, trace.parsed_question.original_question
            )
        },
    });

    let problems = docintel_generate::verify_citations(&trace.output.answer, &document, &shown);
    checks.push(ReplayCheck {
        what: "citations against the document now".into(),
        identical: problems.is_empty() == trace.output.citations_verified,
        detail: if problems.is_empty() {
            "every stored quote is still in its cited lines".into()
        } else {
            format!("{} problem(s): {}", problems.len(), problems[0].problem)
        },
    });

    let generator = trace.output.meta.implementations.get("generate").cloned().unwrap_or_default();
    if generator.starts_with("extractive") {
        // The passages as the reader read them (scores and anchors), from the
        // last round's record; a trace from an older build has only labels.
        let read: Vec<docintel_schema::Passage> = trace
            .events
            .iter()
            .rev()
            .find(|e| e.brick == "generate" && e.step == "passages")
            .and_then(|e| serde_json::from_value(e.detail["passages"].clone()).ok())
            .unwrap_or_else(|| shown.clone());
        let mut sink = docintel_schema::NullSink;
        let generation = ExtractiveGenerator::new()
            .generate(&parsed, &document, &read, &mut sink)
            .map_err(|e| brick_error("generate")(Box::new(e)))?;
        let recorded = serde_json::to_string_pretty(&trace.output.answer).unwrap_or_default();
        let rebuilt = serde_json::to_string_pretty(&generation.answer).unwrap_or_default();
        checks.push(ReplayCheck {
            what: format!("answer ({generator}) from {} stored passage(s)", shown.len()),
            identical: recorded == rebuilt,
            detail: if recorded == rebuilt {
                format!("{} bytes identical", recorded.len())
            } else {
                first_difference(&recorded, &rebuilt)
            },
        });
    }
    // The prompts change with the trace: few-shot picks join the system
    // prompt, feedback rounds add keywords before the calls that follow.
    let mut parsed = parsed;
    let mut examples: Vec<docintel_generate::FewShotExample> = Vec::new();
    let mut seen_calls = 0usize;
    for event in &trace.events {
        match (event.brick.as_str(), event.step.as_str()) {
            ("generate", "few_shot") => {
                examples = event.detail["picked"]
                    .as_array()
                    .map(|picked| {
                        picked
                            .iter()
                            .map(|p| docintel_generate::FewShotExample {
                                question: p["question"].as_str().unwrap_or_default().to_owned(),
                                answer_json: p["answer_json"].as_str().unwrap_or_default().to_owned(),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                continue;
            }
            ("generate", "feedback_retry") => {
                let added = event.detail["keywords"].as_array().into_iter().flatten().filter_map(|k| k.as_str());
                parsed.keywords.extend(added.map(feedback_keyword));
                continue;
            }
            (_, "llm_response") => seen_calls += 1,
            _ => continue,
        }
        let call = event.detail.get("call").and_then(serde_json::Value::as_u64).unwrap_or(seen_calls as u64);
        let passages: Vec<docintel_schema::Passage> = event
            .detail
            .get("passages")
            .and_then(serde_json::Value::as_array)
            .map(|a| a.iter().filter_map(|v| v.as_str().and_then(passage_from_label)).collect())
            .unwrap_or_default();
        let request = event.detail.get("request");
        let recorded = |key: &str| request.and_then(|r| r.get(key)).and_then(serde_json::Value::as_str);
        let (system, _) = docintel_generate::prompt::build_system_prompt_with_examples(&parsed, &examples);
        let user = docintel_generate::build_user_prompt(&parsed, &document, &passages);
        for (name, rebuilt) in [("system", system), ("user", user)] {
            let check = match recorded(name) {
                Some(recorded) => ReplayCheck {
                    what: format!("call {call} {name} prompt"),
                    identical: recorded == rebuilt,
                    detail: if recorded == rebuilt {
                        format!("{} bytes identical", rebuilt.len())
                    } else {
                        first_difference(recorded, &rebuilt)
                    },
                },
                None => ReplayCheck {
                    what: format!("call {call} {name} prompt"),
                    identical: false,
                    detail: "the trace does not hold the prompt sent (recorded by an older docintel)".into(),
                },
            };
            checks.push(check);
        }
    }
    if checks.len() == 1 && !generator.starts_with("extractive") {
        checks.push(ReplayCheck {
            what: format!("generation ({generator})"),
            identical: false,
            detail: "no generation step recorded that can be rebuilt".into(),
        });
    }
    Ok(ReplayReport { dir: dir.display().to_string(), document: trace.output.document.clone(), checks })
}
