//! Replay: rebuild what one stored question sent and produced (the prompts
//! of a model, or the extractive answer) from its stored parsed question and
//! passages, re-reading the document, and compare byte for byte. It reads the
//! trace's typed events (`docintel_schema::trace::Event`); a trace of another
//! format than `TRACE_FORMAT_VERSION` is refused with its version named.

use std::path::{Path, PathBuf};

use docintel_parse::ParseOptions;
use docintel_schema::trace::Event;
use docintel_schema::{Generator, ParsedQuestion, Passage};
use docintel_trace::QuestionTrace;

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
    // Typed events, or a clear refusal of a trace of another format.
    let events = trace.typed_events().map_err(PipelineError::Trace)?;
    let parsed = events
        .iter()
        .find_map(|e| match e {
            Event::QuestionParsed(parsed) => Some((**parsed).clone()),
            _ => None,
        })
        .unwrap_or_else(|| trace.parsed_question.clone());
    // The document the trace recorded (absolute path and SHA-256 of its bytes).
    let recorded = events.iter().find_map(|e| match e {
        Event::Document(read) => Some(read),
        _ => None,
    });
    let document_path = PathBuf::from(recorded.map_or(trace.output.document.as_str(), |r| r.path.as_str()));
    let document = parse_file_with_options(&document_path, options).map_err(PipelineError::Parse)?;
    // As the ask saw it (see `ask::answer`).
    let document = document.answerable().into_owned();
    // The passages the last round's generator was shown.
    let shown: Vec<Passage> = events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::Validate(validation) => Some(validation.passages_shown.iter().map(|p| p.to_passage()).collect()),
            _ => None,
        })
        .unwrap_or_default();

    let mut checks =
        vec![document_check(&document_path, recorded.map(|r| r.sha256.as_str())), question_check(dir, &trace, &parsed)];
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
        checks.push(extractive_check(&events, &trace.output.answer, &parsed, &document, &shown, &generator)?);
    }
    checks.extend(prompt_checks(&events, parsed, &document));
    if checks.len() == 1 && !generator.starts_with("extractive") {
        checks.push(ReplayCheck {
            what: format!("generation ({generator})"),
            identical: false,
            detail: "no generation step recorded that can be rebuilt".into(),
        });
    }
    Ok(ReplayReport { dir: dir.display().to_string(), document: trace.output.document.clone(), checks })
}

/// The document re-read must have the bytes the trace recorded.
fn document_check(path: &Path, recorded_hash: Option<&str>) -> ReplayCheck {
    let (_, sha256) = document_key_of(path);
    ReplayCheck {
        what: format!("document {} (SHA-256 of its bytes)", path.display()),
        identical: recorded_hash.is_none_or(|h| h == sha256),
        detail: match recorded_hash {
            None => "no hash recorded (the trace has no document record)".into(),
            Some(h) if h == sha256 => format!("{} as recorded", &sha256[..12]),
            Some(h) => format!("the file changed: recorded {}, now {}", &h[..h.len().min(12)], &sha256[..12]),
        },
    }
}

/// The question the trace answers: the same text in the answer, the parsed question and
/// the trace folder's name.
fn question_check(dir: &Path, trace: &QuestionTrace, parsed: &ParsedQuestion) -> ReplayCheck {
    let folder = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let turns = trace.output.meta.follow_up.as_ref().map(|f| f.previous_turns.clone()).unwrap_or_default();
    let same_question = trace.output.question == parsed.original_question
        && trace.parsed_question.original_question == parsed.original_question
        && folder == docintel_schema::slug::turns_slug(&parsed.original_question, &turns);
    ReplayCheck {
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
    }
}

/// The extractive answer rebuilt from the passages as the reader read them
/// (scores and anchors: the last round's record) must be byte-identical.
fn extractive_check(
    events: &[Event],
    recorded_answer: &docintel_schema::Answer,
    parsed: &ParsedQuestion,
    document: &docintel_schema::ParsedDocument,
    shown: &[Passage],
    generator: &str,
) -> Result<ReplayCheck, PipelineError> {
    let read: Vec<Passage> = events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::Passages(round) => Some(round.passages.clone()),
            _ => None,
        })
        .unwrap_or_else(|| shown.to_vec());
    let mut sink = docintel_schema::NullSink;
    let generation = ExtractiveGenerator::new()
        .generate(parsed, document, &read, &mut sink)
        .map_err(|e| brick_error("generate")(Box::new(e)))?;
    let recorded = serde_json::to_string_pretty(recorded_answer).unwrap_or_default();
    let rebuilt = serde_json::to_string_pretty(&generation.answer).unwrap_or_default();
    Ok(ReplayCheck {
        what: format!("answer ({generator}) from {} stored passage(s)", shown.len()),
        identical: recorded == rebuilt,
        detail: if recorded == rebuilt {
            format!("{} bytes identical", recorded.len())
        } else {
            first_difference(&recorded, &rebuilt)
        },
    })
}

/// Every model call's system and user prompt rebuilt from the stored question
/// and passages must be byte-identical to what was sent. The prompts change
/// with the trace: few-shot picks join the system prompt, feedback rounds add
/// keywords before the calls that follow.
fn prompt_checks(
    events: &[Event],
    mut parsed: ParsedQuestion,
    document: &docintel_schema::ParsedDocument,
) -> Vec<ReplayCheck> {
    let mut checks = Vec::new();
    let mut examples: Vec<docintel_generate::FewShotExample> = Vec::new();
    for event in events {
        let call = match event {
            Event::FewShot(few_shot) => {
                examples = few_shot
                    .picked
                    .iter()
                    .map(|p| docintel_generate::FewShotExample {
                        question: p.question.clone(),
                        answer_json: p.answer_json.clone(),
                    })
                    .collect();
                continue;
            }
            Event::FeedbackRetry(retry) => {
                parsed.keywords.extend(retry.keywords.iter().map(|k| feedback_keyword(k)));
                continue;
            }
            Event::LlmResponse(call) => call,
            _ => continue,
        };
        let passages: Vec<Passage> = call.passages.iter().map(|p| p.to_passage()).collect();
        let (system, _) = docintel_generate::prompt::build_system_prompt_with_examples(&parsed, &examples);
        let user = docintel_generate::build_user_prompt(&parsed, document, &passages);
        for (name, recorded, rebuilt) in [("system", &call.request.system, system), ("user", &call.request.user, user)]
        {
            let what = format!("call {} {name} prompt", call.call);
            checks.push(match recorded {
                Some(recorded) => ReplayCheck {
                    what,
                    identical: *recorded == rebuilt,
                    detail: if *recorded == rebuilt {
                        format!("{} bytes identical", rebuilt.len())
                    } else {
                        first_difference(recorded, &rebuilt)
                    },
                },
                None => {
                    ReplayCheck { what, identical: false, detail: "the trace does not hold the prompt sent".into() }
                }
            });
        }
    }
    checks
}
