//! Integration tests of the generation brick's LLM path: prompt snapshots
//! (one fixture per case under `tests/prompts/`) and the [`LlmGenerator`]
//! over a small in-crate fake transport (replies inline or from
//! `tests/data/`). No network.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

use docintel_generate::fields::FieldOutcome;
use docintel_generate::prompt::{build_system_prompt_with_examples, build_user_prompt};
use docintel_generate::{
    CustomSchema, DispatchOptions, ExampleBank, FewShotExample, FewShotSelection, InvoiceFields, LlmGenerateError,
    LlmGenerator, TEMPLATE_VERSION, estimate_input_tokens, extract_fields, sequential_batches, verify_citations,
};
use docintel_schema::{
    AnswerShape, AnswerValue, ChunkStrategy, Decomposition, Distinction, Generator, Keyword, LanguageModel, LlmRequest,
    LlmResponse, ParsedDocument, ParsedQuestion, Passage, TraceEvent, Usage,
};
use serde::Deserialize;
use serde_json::{Value, json};

// ---------------------------------------------------------------- helpers

fn document(rows: &[(String, u32)]) -> ParsedDocument {
    docintel_test_support::rows(rows).build()
}

fn passage(line_start: u32, line_end: u32, page: u32) -> Passage {
    Passage { line_start, line_end, page, score: 1.0, anchor_line: line_start, matched_keywords: vec![], pinned: false }
}

// ---------------------------------------------------------- prompt snapshots

#[derive(Deserialize)]
struct PromptCase {
    question: String,
    answer_shape: AnswerShape,
    answer_type: String,
    keywords: Vec<String>,
    #[serde(default)]
    format_constraints: BTreeMap<String, String>,
    #[serde(default)]
    must_distinguish: Vec<Distinction>,
    #[serde(default)]
    distractors: Vec<String>,
    #[serde(default)]
    disambiguation: Option<String>,
    #[serde(default)]
    decomposition: Option<Decomposition>,
    #[serde(default)]
    examples: Vec<Example>,
    lines: Vec<(String, u32)>,
    passages: Vec<(u32, u32, u32)>,
}

#[derive(Deserialize)]
struct Example {
    question: String,
    answer_json: String,
}

impl PromptCase {
    fn parsed(&self) -> ParsedQuestion {
        let mut q = ParsedQuestion::unparsed(&self.question, "fixture");
        q.answer_shape = self.answer_shape;
        q.answer_type = self.answer_type.clone();
        q.keywords = self.keywords.iter().map(Keyword::direct).collect();
        q.generation.format_constraints = self.format_constraints.clone();
        q.generation.must_distinguish = self.must_distinguish.clone();
        q.generation.disambiguation = self.disambiguation.clone();
        q.distractors = self.distractors.clone();
        if let Some(d) = &self.decomposition {
            q.decomposition = d.clone();
        }
        q
    }
}

#[test]
fn prompt_snapshots() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/prompts");
    let mut cases: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    cases.retain(|p| p.extension().is_some_and(|e| e == "json"));
    cases.sort();
    assert!(cases.len() >= 6, "expected the prompt fixtures in {}", dir.display());
    for path in cases {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let case: PromptCase = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let parsed = case.parsed();
        let doc = document(&case.lines);
        let passages: Vec<Passage> = case.passages.iter().map(|&(s, e, p)| passage(s, e, p)).collect();
        let examples: Vec<FewShotExample> = case
            .examples
            .iter()
            .map(|e| FewShotExample { question: e.question.clone(), answer_json: e.answer_json.clone() })
            .collect();
        let (system, fragments) = build_system_prompt_with_examples(&parsed, &examples);
        let user = build_user_prompt(&parsed, &doc, &passages);
        let composed = format!(
            "template: {TEMPLATE_VERSION}\nfragments: {}\n\n===== SYSTEM =====\n{system}\n\n===== USER =====\n{user}",
            fragments.join(", ")
        );
        insta::with_settings!({snapshot_suffix => name.clone(), omit_expression => true, prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!("prompt", composed);
        });
    }
}

#[test]
fn fragments_follow_the_question_and_nothing_else() {
    let mut q = ParsedQuestion::unparsed("What is the premium?", "t");
    q.answer_type = "amount".into();
    let (_, plain) = build_system_prompt_with_examples(&q, &[]);
    assert_eq!(plain, ["base", "shape:single", "value:amount"]);

    q.generation.format_constraints.insert("currency".into(), "EUR".into());
    q.generation.must_distinguish.push(Distinction { wanted: "premium".into(), not_this: "tax".into() });
    q.decomposition = Decomposition { pattern: docintel_schema::DecompositionPattern::Unified, sub_questions: vec![] };
    let example = FewShotExample { question: "q".into(), answer_json: "{}".into() };
    let (text, all) = build_system_prompt_with_examples(&q, &[example]);
    assert_eq!(
        all,
        ["base", "shape:single", "value:amount", "format", "distinctions", "decomposition:unified", "few_shot"]
    );
    assert!(text.contains("currency: EUR"));
}

#[test]
fn user_prompt_rows_carry_global_line_ids_and_keep_columns() {
    let doc = document(&[("page one".into(), 1), ("Total\t$4.11".into(), 2), ("next".into(), 2)]);
    let q = ParsedQuestion::unparsed("What is the total?", "t");
    let user = build_user_prompt(&q, &doc, &[passage(2, 3, 2)]);
    assert!(user.contains("GLOBAL_LINE\tpage\tline_in_page\ttext\n"), "{user}");
    assert!(user.contains("\n2\t2\t1\tTotal $4.11\n"), "global 2, line_in_page 1, tab replaced: {user}");
    assert!(!user.contains("page one"));
    assert!(user.ends_with("(end of passages)\n"), "{user}");
}

#[test]
fn text_that_does_not_show_on_the_page_never_reaches_the_model() {
    let mut doc = document(&[("Total $4.11".into(), 1), ("Total $999.00".into(), 1)]);
    let mut hidden = docintel_schema::Diagnostic::new(docintel_schema::Severity::Warning, Some(1), "white text");
    hidden.invisible_lines = vec![2];
    doc.diagnostics.push(hidden);
    let q = ParsedQuestion::unparsed("What is the total?", "t");
    let user = build_user_prompt(&q, &doc, &[passage(1, 2, 1)]);
    assert!(user.contains("Total $4.11") && !user.contains("999"), "{user}");
}

// ------------------------------------------------------------ fake transport

/// Replays canned reply contents in order and records every request. Input
/// tokens are estimated as user-prompt characters / 4, so a call showing more
/// passages costs more.
struct FakeModel {
    replies: RefCell<VecDeque<Reply>>,
    requests: RefCell<Vec<LlmRequest>>,
    /// Time each call takes.
    delay: std::time::Duration,
    /// Requests estimated (characters / 4) above this many tokens are
    /// refused as a server refuses a prompt longer than its context.
    context: Option<u64>,
}

enum Reply {
    Content(String),
    /// A listing reply citing the first passage row of the request, as a
    /// model reading what it was shown would.
    FirstRow,
    Truncated,
    /// A transport failure such as a timeout after the retries.
    Fail(&'static str),
}

#[derive(Debug, thiserror::Error)]
#[error("fake transport: {0}")]
struct FakeError(String, Option<Value>, Option<docintel_schema::ContextOverflow>);

impl FakeModel {
    fn new(replies: Vec<Reply>) -> FakeModel {
        FakeModel {
            replies: RefCell::new(replies.into()),
            requests: RefCell::new(Vec::new()),
            delay: std::time::Duration::ZERO,
            context: None,
        }
    }
    fn calls(&self) -> usize {
        self.requests.borrow().len()
    }
}

impl LanguageModel for &FakeModel {
    type Error = FakeError;
    fn cut_reply(error: &FakeError) -> Option<&Value> {
        error.1.as_ref()
    }
    fn context_overflow(error: &FakeError) -> Option<docintel_schema::ContextOverflow> {
        error.2
    }
    fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, FakeError> {
        self.requests.borrow_mut().push(request.clone());
        std::thread::sleep(self.delay);
        let n = self.requests.borrow().len();
        let chars: usize = request.messages.iter().map(|m| m.content.chars().count()).sum();
        if self.context.is_some_and(|context| chars as u64 / 4 > context) {
            let overflow = docintel_schema::ContextOverflow { window: None };
            return Err(FakeError("the request exceeds the available context size".into(), None, Some(overflow)));
        }
        let reply =
            self.replies.borrow_mut().pop_front().ok_or_else(|| FakeError("no more replies".into(), None, None))?;
        let content = match reply {
            Reply::Content(content) => content,
            Reply::FirstRow => first_row_reply(&request.messages[1].content),
            Reply::Truncated => {
                let raw = json!({"id": format!("fake-{n}"), "model": "fake-model",
                                 "choices": [{"message": {"content": "{\"items\": [{\"value\": \"aaaa"}, "finish_reason": "length"}],
                                 "usage": {"prompt_tokens": 700, "completion_tokens": 1024}});
                return Err(FakeError(format!("response fake-{n} was cut at the output token limit"), Some(raw), None));
            }
            Reply::Fail(why) => return Err(FakeError(why.to_owned(), None, None)),
        };
        let input_tokens = (request.messages.iter().map(|m| m.content.len()).sum::<usize>() / 4) as u64;
        let usage = Usage { input_tokens, output_tokens: (content.len() / 4) as u64, cached_tokens: 0 };
        Ok(LlmResponse {
            id: format!("fake-{n}"),
            model: "fake-model".into(),
            content: content.clone(),
            finish_reason: "stop".into(),
            usage,
            raw: json!({"id": format!("fake-{n}"), "model": "fake-model", "choices": [{"message": {"content": content}}]}),
        })
    }
}

/// A listing reply whose one item is the first passage row of `user`.
fn first_row_reply(user: &str) -> String {
    let row = user.lines().find_map(|line| {
        let mut columns = line.splitn(4, '\t');
        let (id, page, _, text) = (columns.next()?, columns.next()?, columns.next()?, columns.next()?);
        Some((id.parse::<u32>().ok()?, page.parse::<u32>().ok()?, text.to_owned()))
    });
    let Some((id, page, text)) = row else { return not_found("no rows") };
    json!({
        "items": [{"value": text, "text": null, "spans": [{"line_start": id, "line_end": id, "page": page, "quote": text}]}],
        "answer_found": true, "complete_answer_found": true, "confidence": 0.8, "warnings": [],
        "keywords_found": [], "llm_discovered_keywords": [], "conflicting_evidence": false,
        "context_structured": true, "suggested_clarification": null
    })
    .to_string()
}

fn data(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)).unwrap()
}

fn not_found(warning: &str) -> String {
    json!({
        "items": [], "answer_found": false, "complete_answer_found": false, "confidence": 0.0,
        "warnings": [warning], "keywords_found": [], "llm_discovered_keywords": ["balance"],
        "conflicting_evidence": false, "context_structured": true, "suggested_clarification": null
    })
    .to_string()
}

/// Three pages; the total is on page 1 (line 3), pages 2 and 3 are filler.
fn aws() -> ParsedDocument {
    let mut rows: Vec<(String, u32)> = vec![
        ("Invoice Number: 42183017".into(), 1),
        ("Invoice Date: August 3 , 2014".into(), 1),
        ("Total Amount $4.11".into(), 1),
    ];
    for page in 2..=3 {
        for i in 0..12 {
            rows.push((format!("Usage detail row {i} for region eu-west-{page}: 0.00 GB transferred"), page));
        }
    }
    document(&rows)
}

fn amount_question(strategy: ChunkStrategy) -> ParsedQuestion {
    let mut q = ParsedQuestion::unparsed("What is the total amount?", "t");
    q.answer_type = "amount".into();
    q.keywords = vec![Keyword::direct("total"), Keyword::direct("amount")];
    q.chunk_strategy = strategy;
    q
}

fn three_passages() -> Vec<Passage> {
    vec![passage(1, 3, 1), passage(4, 15, 2), passage(16, 27, 3)]
}

// ------------------------------------------------------------ generator tests

#[test]
fn sequential_stops_after_the_first_passage_when_it_suffices() {
    let doc = aws();
    let fake = FakeModel::new(vec![Reply::Content(data("aws_total_found.json"))]);
    let mut trace: Vec<TraceEvent> = Vec::new();
    let generation = LlmGenerator::new(&fake, "fake-model")
        .generate(&amount_question(ChunkStrategy::Sequential), &doc, &three_passages(), &mut trace)
        .unwrap();

    assert_eq!(fake.calls(), 1);
    assert_eq!((generation.exit.as_str(), generation.iterations), ("sufficient", 1));
    assert_eq!(generation.strategy_executed, "sequential");
    assert_eq!(generation.passages_shown, vec![passage(1, 3, 1)]);
    assert_eq!(generation.template_version, TEMPLATE_VERSION);
    assert_eq!(generation.fragments_applied, ["base", "shape:single", "value:amount"]);
    assert_eq!(generation.model.as_deref(), Some("fake-model"));
    match &generation.answer.items[0].value {
        AnswerValue::Amount(a) => assert_eq!((a.value, a.currency.as_deref()), (4.11, Some("USD"))),
        other => panic!("{other:?}"),
    }
    assert_eq!(generation.answer.extraction_method, docintel_schema::ExtractionMethod::Llm);
    assert!(verify_citations(&generation.answer, &doc, &generation.passages_shown).is_empty());

    // The request: strict registry schema, temperature 0, one passage shown.
    let request = &fake.requests.borrow()[0];
    assert_eq!(request.schema_name, "single_amount");
    assert_eq!(request.schema["additionalProperties"], false);
    assert_eq!(request.temperature, 0.0);
    assert!(request.messages[1].content.contains("3\t1\t3\tTotal Amount $4.11"));
    assert!(!request.messages[1].content.contains("eu-west"));

    // The raw reply is in the trace verbatim.
    let responses: Vec<&TraceEvent> = trace.iter().filter(|e| e.step == "llm_response").collect();
    assert_eq!(responses.len(), 1);
    assert_eq!(responses[0].brick, "generate");
    assert_eq!(responses[0].detail["raw"]["id"], "fake-1");

    // Against combined on the same passages: far fewer input tokens.
    let combined_fake = FakeModel::new(vec![Reply::Content(data("aws_total_found.json"))]);
    let combined = LlmGenerator::new(&combined_fake, "fake-model")
        .generate(&amount_question(ChunkStrategy::Combined), &doc, &three_passages(), &mut Vec::new())
        .unwrap();
    assert_eq!(
        generation.usage.input_tokens,
        fake.requests.borrow()[0].messages.iter().map(|m| m.content.len() as u64).sum::<u64>() / 4
    );
    assert!(
        generation.usage.input_tokens * 10 < combined.usage.input_tokens * 8,
        "sequential {} vs combined {}",
        generation.usage.input_tokens,
        combined.usage.input_tokens
    );
}

#[test]
fn sequential_moves_on_until_found_and_exits_on_exhaustion() {
    let doc = aws();
    // Passage order puts the answer last: call 1 shows the top passage
    // alone, call 2 the next two together (batches double).
    let passages = vec![passage(4, 15, 2), passage(16, 27, 3), passage(1, 3, 1)];
    let fake = FakeModel::new(vec![
        Reply::Content(not_found("page 2 lists usage rows, no total")),
        Reply::Content(data("aws_total_found.json")),
    ]);
    let generation = LlmGenerator::new(&fake, "m")
        .generate(&amount_question(ChunkStrategy::Sequential), &doc, &passages, &mut Vec::new())
        .unwrap();
    assert_eq!((fake.calls(), generation.iterations, generation.exit.as_str()), (2, 2, "sufficient"));
    assert_eq!(generation.calls.iter().map(|c| c.passages).collect::<Vec<_>>(), vec![1, 2]);
    let second = &fake.requests.borrow()[1].messages[1].content;
    assert!(second.contains("Usage detail row 0 for region eu-west-3") && second.contains("Total Amount $4.11"));
    assert!(!second.contains("eu-west-2"), "the first passage is not sent twice");
    assert!(generation.answer.feedback.answer_found);
    let sum: u64 =
        fake.requests.borrow().iter().map(|r| r.messages.iter().map(|m| m.content.len() as u64).sum::<u64>() / 4).sum();
    assert_eq!(generation.usage.input_tokens, sum, "usage is summed over calls");

    let fake = FakeModel::new(vec![
        Reply::Content(not_found("no total on page 2")),
        Reply::Content(not_found("no total on page 3")),
    ]);
    let generation = LlmGenerator::new(&fake, "m")
        .generate(&amount_question(ChunkStrategy::Sequential), &doc, &passages[..2], &mut Vec::new())
        .unwrap();
    assert_eq!((fake.calls(), generation.exit.as_str()), (2, "exhausted"));
    assert!(!generation.answer.feedback.answer_found && generation.answer.items.is_empty());
    let warnings = generation.answer.feedback.warnings.join(" | ");
    assert!(warnings.contains("page 2") && warnings.contains("page 3"), "{warnings}");
}

#[test]
fn sequential_batches_double_and_respect_the_headroom() {
    let passages: Vec<Passage> = (1..=7).map(|i| passage(i, i, 1)).collect();
    let sizes = |batches: Vec<&[Passage]>| batches.iter().map(|b| b.len()).collect::<Vec<_>>();
    assert_eq!(sizes(sequential_batches(&passages, |_| true)), vec![1, 2, 4]);
    assert_eq!(sizes(sequential_batches(&passages[..5], |_| true)), vec![1, 2, 2]);
    assert_eq!(sizes(sequential_batches(&passages, |b| b.len() <= 2)), vec![1, 2, 2, 2]);
    assert_eq!(sizes(sequential_batches(&passages[..3], |_| false)), vec![1, 1, 1]);
    assert!(sequential_batches(&passages[..0], |_| true).is_empty());
}

#[test]
fn combined_makes_one_call_with_every_passage() {
    let doc = aws();
    let fake = FakeModel::new(vec![Reply::Content(data("aws_total_found.json"))]);
    let generation = LlmGenerator::new(&fake, "m")
        .generate(&amount_question(ChunkStrategy::Combined), &doc, &three_passages(), &mut Vec::new())
        .unwrap();
    assert_eq!((fake.calls(), generation.iterations), (1, 1));
    assert_eq!(generation.strategy_executed, "combined");
    assert_eq!(generation.passages_shown.len(), 3);
    let user = &fake.requests.borrow()[0].messages[1].content;
    assert!(user.contains("# passage 3 (page 3"), "{user}");
}

#[test]
fn invalid_json_becomes_an_honest_failure() {
    let doc = aws();
    // Asked once more with the schema's type stated, the same again.
    let fake = FakeModel::new(vec![
        Reply::Content("The total is $4.11.".into()),
        Reply::Content("The total is $4.11.".into()),
    ]);
    let mut trace: Vec<TraceEvent> = Vec::new();
    let generation = LlmGenerator::new(&fake, "m")
        .generate(&amount_question(ChunkStrategy::Combined), &doc, &three_passages(), &mut trace)
        .unwrap();
    assert_eq!(fake.calls(), 2);
    let answer = &generation.answer;
    assert!(!answer.feedback.answer_found && answer.items.is_empty());
    assert!(answer.feedback.warnings[0].contains("not valid JSON"), "{:?}", answer.feedback.warnings);
    assert_eq!(generation.exit, "exhausted");
    assert_eq!(
        trace.iter().find(|e| e.step == "llm_response").unwrap().detail["raw"]["choices"][0]["message"]["content"],
        "The total is $4.11."
    );

    // Valid JSON of the wrong shape is no better.
    let fake = FakeModel::new(vec![Reply::Content(r#"{"items": "4.11"}"#.into()), Reply::Content("{}".into())]);
    let generation = LlmGenerator::new(&fake, "m")
        .generate(&amount_question(ChunkStrategy::Combined), &doc, &three_passages(), &mut Vec::new())
        .unwrap();
    assert!(!generation.answer.feedback.answer_found);
}

#[test]
fn spans_outside_the_passages_are_flagged_and_do_not_stop_the_walk() {
    let doc = aws();
    let mut bogus: Value = serde_json::from_str(&data("aws_total_found.json")).unwrap();
    bogus["items"][0]["spans"][0]["line_start"] = json!(123_456_789);
    bogus["items"][0]["spans"][0]["line_end"] = json!(123_456_789);
    let fake = FakeModel::new(vec![Reply::Content(bogus.to_string()), Reply::Content(not_found("nothing here"))]);
    let generation = LlmGenerator::new(&fake, "m")
        .generate(&amount_question(ChunkStrategy::Sequential), &doc, &three_passages()[..2], &mut Vec::new())
        .unwrap();
    assert_eq!(fake.calls(), 2, "a reply with bad spans is not sufficient");
    assert_eq!(generation.exit, "exhausted");
    let answer = &generation.answer;
    assert_eq!(answer.items.len(), 1, "the item is kept so the check can flag it");
    assert!(answer.feedback.confidence <= 0.2);
    assert!(answer.feedback.warnings.iter().any(|w| w.contains("does not exist")), "{:?}", answer.feedback.warnings);
    let problems = verify_citations(answer, &doc, &generation.passages_shown);
    assert!(!problems.is_empty());
}

#[test]
fn a_transport_failure_is_an_error_not_an_answer() {
    let doc = aws();
    let fake = FakeModel::new(vec![Reply::Fail("LLM server still failing after 3 attempts; last error: HTTP 500")]);
    let error = LlmGenerator::new(&fake, "m")
        .generate(&amount_question(ChunkStrategy::Combined), &doc, &three_passages(), &mut Vec::new())
        .unwrap_err();
    assert!(matches!(error, LlmGenerateError::Model { call: 1, .. }), "{error:?}");
    assert!(error.to_string().contains("HTTP 500"), "{error}");
}

#[test]
fn a_reply_cut_at_the_token_limit_is_recorded_and_read_as_not_found() {
    let doc = aws();
    // Combined: the only call is cut: an honest not-found naming the reply.
    let fake = FakeModel::new(vec![Reply::Truncated]);
    let mut trace = Vec::new();
    let generation = LlmGenerator::new(&fake, "m")
        .generate(&amount_question(ChunkStrategy::Combined), &doc, &three_passages(), &mut trace)
        .unwrap();
    assert!(!generation.answer.feedback.answer_found && generation.answer.items.is_empty());
    let warnings = generation.answer.feedback.warnings.join(" | ");
    assert!(warnings.contains("fake-1 was cut at the output token limit"), "{warnings}");
    assert_eq!((generation.usage.input_tokens, generation.usage.output_tokens), (700, 1024), "usage still counts");
    let event = trace.iter().find(|e| e.step == "llm_response").expect("the cut reply is traced");
    assert_eq!(event.detail["cut_at_token_limit"], true);
    assert_eq!(event.detail["raw"]["choices"][0]["finish_reason"], "length");
    // Sequential: the cut top-1 call does not stop the read; the next batch answers.
    let fake = FakeModel::new(vec![Reply::Truncated, Reply::Content(data("aws_total_found.json"))]);
    let passages = vec![passage(4, 15, 2), passage(1, 3, 1)];
    let generation = LlmGenerator::new(&fake, "m")
        .generate(&amount_question(ChunkStrategy::Sequential), &doc, &passages, &mut Vec::new())
        .unwrap();
    assert_eq!((fake.calls(), generation.exit.as_str()), (2, "sufficient"));
    assert!(generation.answer.feedback.answer_found);
}

#[test]
fn no_passages_means_no_call_and_an_honest_not_found() {
    let doc = aws();
    let fake = FakeModel::new(vec![]);
    let generation = LlmGenerator::new(&fake, "m")
        .generate(&amount_question(ChunkStrategy::Combined), &doc, &[], &mut Vec::new())
        .unwrap();
    assert_eq!((fake.calls(), generation.iterations), (0, 0));
    assert!(!generation.answer.feedback.answer_found);
}

#[test]
fn shapes_without_a_schema_are_refused() {
    let doc = aws();
    let fake = FakeModel::new(vec![]);
    let mut q = amount_question(ChunkStrategy::Combined);
    q.answer_shape = AnswerShape::Tree;
    let error = LlmGenerator::new(&fake, "m").generate(&q, &doc, &three_passages(), &mut Vec::new()).unwrap_err();
    assert!(matches!(error, LlmGenerateError::NoSchema { .. }), "{error:?}");
}

// ------------------------------------------------- dispatch: budgets, headroom

#[test]
fn every_call_is_recorded_with_its_tokens() {
    let doc = aws();
    let passages = vec![passage(4, 15, 2), passage(1, 3, 1)];
    let fake =
        FakeModel::new(vec![Reply::Content(not_found("no total")), Reply::Content(data("aws_total_found.json"))]);
    let generation = LlmGenerator::new(&fake, "m")
        .generate(&amount_question(ChunkStrategy::Sequential), &doc, &passages, &mut Vec::new())
        .unwrap();
    assert_eq!(generation.calls.len(), 2);
    for (call, request) in generation.calls.iter().zip(fake.requests.borrow().iter()) {
        let chars: usize = request.messages.iter().map(|m| m.content.chars().count()).sum();
        assert_eq!(call.estimated_input_tokens, chars.div_ceil(4) as u64);
        assert_eq!(call.passages, 1);
    }
    assert_eq!((generation.calls[0].answer_found, generation.calls[1].answer_found), (false, true));
    assert_eq!(generation.calls.iter().map(|c| c.usage.input_tokens).sum::<u64>(), generation.usage.input_tokens);
    assert!(generation.notes.is_empty(), "{:?}", generation.notes);
}

#[test]
fn combined_switches_to_sequential_when_the_prompt_would_crowd_the_context_window() {
    let doc = aws();
    let question = amount_question(ChunkStrategy::Combined);
    let (combined, _) = {
        let probe = FakeModel::new(vec![]);
        let generator = LlmGenerator::new(&probe, "m");
        let entry = docintel_schema::registry::lookup(AnswerShape::Single, "amount").unwrap();
        generator.request(&question, entry, &doc, &three_passages())
    };
    let combined_tokens = estimate_input_tokens(&combined, 4.0);

    // A window the combined prompt would fill to more than 75%: switch.
    let window = combined_tokens * 100 / 80;
    let options = DispatchOptions { context_window: Some(window), ..DispatchOptions::default() };
    let fake = FakeModel::new(vec![Reply::Content(data("aws_total_found.json"))]);
    let mut trace: Vec<TraceEvent> = Vec::new();
    // (A small reply cap: the window is tiny, and the cap is taken from it.)
    let generation = LlmGenerator::new(&fake, "m")
        .with_options(options)
        .with_max_output_tokens(Some(64))
        .generate(&question, &doc, &three_passages(), &mut trace)
        .unwrap();
    assert_eq!(generation.strategy_executed, "sequential");
    assert_eq!((fake.calls(), generation.exit.as_str()), (1, "sufficient"));
    assert!(generation.notes[0].contains("switched to sequential"), "{:?}", generation.notes);
    let exit = trace.iter().find(|e| e.step == "llm_exit").unwrap();
    assert_eq!(exit.detail["strategy"], "sequential");

    // A window with room to spare: combined as asked.
    let options = DispatchOptions { context_window: Some(combined_tokens * 2), ..DispatchOptions::default() };
    let fake = FakeModel::new(vec![Reply::Content(data("aws_total_found.json"))]);
    let generation = LlmGenerator::new(&fake, "m")
        .with_options(options)
        .generate(&question, &doc, &three_passages(), &mut Vec::new())
        .unwrap();
    assert_eq!((generation.strategy_executed.as_str(), generation.passages_shown.len()), ("combined", 3));
    assert!(generation.notes.is_empty());
}

#[test]
fn a_token_budget_stops_before_the_call_that_would_cross_it() {
    let doc = aws();
    let passages = vec![passage(4, 15, 2), passage(16, 27, 3), passage(1, 3, 1)];
    // Measure one call, then allow a bit more than one.
    let probe = FakeModel::new(vec![Reply::Content(not_found("no total on page 2"))]);
    let one = LlmGenerator::new(&probe, "m")
        .generate(&amount_question(ChunkStrategy::Sequential), &doc, &passages[..1], &mut Vec::new())
        .unwrap();
    let spent_one = one.usage.input_tokens + one.usage.output_tokens;

    let fake = FakeModel::new(vec![
        Reply::Content(not_found("no total on page 2")),
        Reply::Content(not_found("no total on page 3")),
        Reply::Content(data("aws_total_found.json")),
    ]);
    let options = DispatchOptions { token_budget: Some(spent_one + 10), ..DispatchOptions::default() };
    let generation = LlmGenerator::new(&fake, "m")
        .with_options(options)
        .generate(&amount_question(ChunkStrategy::Sequential), &doc, &passages, &mut Vec::new())
        .unwrap();
    assert_eq!((fake.calls(), generation.exit.as_str()), (1, "token_budget"));
    assert_eq!(generation.passages_shown.len(), 1);
    assert!(!generation.answer.feedback.answer_found);
    assert!(generation.answer.feedback.warnings.iter().any(|w| w.contains("token budget")), "{:?}", generation.answer);

    // A budget too small for the first call: no call at all, honest not-found.
    let fake = FakeModel::new(vec![]);
    let options = DispatchOptions { token_budget: Some(5), ..DispatchOptions::default() };
    let generation = LlmGenerator::new(&fake, "m")
        .with_options(options)
        .generate(&amount_question(ChunkStrategy::Sequential), &doc, &passages, &mut Vec::new())
        .unwrap();
    assert_eq!((fake.calls(), generation.exit.as_str()), (0, "token_budget"));
    assert!(!generation.answer.feedback.answer_found);
}

#[test]
fn a_time_budget_stops_further_calls() {
    let doc = aws();
    let mut fake = FakeModel::new(vec![
        Reply::Content(not_found("no total on page 2")),
        Reply::Content(not_found("no total on page 3")),
    ]);
    fake.delay = std::time::Duration::from_millis(40);
    let options = DispatchOptions { time_budget: Some(std::time::Duration::from_millis(20)), ..Default::default() };
    let passages = vec![passage(4, 15, 2), passage(16, 27, 3), passage(1, 3, 1)];
    let generation = LlmGenerator::new(&fake, "m")
        .with_options(options)
        .generate(&amount_question(ChunkStrategy::Sequential), &doc, &passages, &mut Vec::new())
        .unwrap();
    assert_eq!((fake.calls(), generation.exit.as_str()), (1, "time_budget"));
    assert!(generation.notes.iter().any(|n| n.contains("2 passage(s) not shown")), "{:?}", generation.notes);
}

#[test]
fn a_timeout_from_the_transport_is_an_error_naming_the_call() {
    let doc = aws();
    let fake = FakeModel::new(vec![
        Reply::Content(not_found("no total on page 2")),
        Reply::Fail("LLM server still failing after 3 attempts; last error: timeout"),
    ]);
    let error = LlmGenerator::new(&fake, "m")
        .generate(
            &amount_question(ChunkStrategy::Sequential),
            &doc,
            &[passage(4, 15, 2), passage(1, 3, 1)],
            &mut Vec::new(),
        )
        .unwrap_err();
    assert!(matches!(error, LlmGenerateError::Model { call: 2, .. }), "{error:?}");
    assert!(error.to_string().contains("timeout"), "{error}");
}

// ------------------------------------------------------------ custom schema

fn address_doc() -> ParsedDocument {
    document(&[
        ("Netpresse SARL".into(), 1),
        ("12 rue des Lilas".into(), 1),
        ("75011 Paris".into(), 1),
        ("Facture n° 2019-0042".into(), 1),
    ])
}

fn address_question() -> ParsedQuestion {
    let mut q = ParsedQuestion::unparsed("What is the seller's address?", "t");
    q.answer_type = "address".into();
    q.keywords = vec![Keyword::direct("address")];
    q
}

#[test]
fn a_custom_schema_is_sent_strict_and_its_answer_kept_as_json_with_verified_spans() {
    let custom =
        CustomSchema::from_file(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/address.schema.json")).unwrap();
    let doc = address_doc();
    let fake = FakeModel::new(vec![Reply::Content(data("address_found.json"))]);
    let generation = LlmGenerator::new(&fake, "m")
        .with_custom_schema(custom.clone())
        .generate(&address_question(), &doc, &[passage(1, 4, 1)], &mut Vec::new())
        .unwrap();
    let request = &fake.requests.borrow()[0];
    assert_eq!(request.schema_name, "address");
    assert_eq!(&request.schema, custom.schema());
    assert_eq!(request.schema["additionalProperties"], false);

    let json = generation.answer_json.as_ref().unwrap();
    assert_eq!(json["items"][0]["city"], "Paris");
    let answer = &generation.answer;
    assert_eq!((answer.answer_type.as_str(), generation.exit.as_str()), ("address", "sufficient"));
    match &answer.items[0].value {
        AnswerValue::Text(text) => {
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(value["street"], "12 rue des Lilas");
            assert!(value.get("spans").is_none());
        }
        other => panic!("{other:?}"),
    }
    assert!(verify_citations(answer, &doc, &generation.passages_shown).is_empty());

    // A misquoted address that its quote does not hold is dropped, with the reason.
    let mut bad: Value = serde_json::from_str(&data("address_found.json")).unwrap();
    bad["items"][0]["spans"][0]["quote"] = json!("12 rue des Roses");
    let fake = FakeModel::new(vec![Reply::Content(bad.to_string())]);
    let generation = LlmGenerator::new(&fake, "m")
        .with_custom_schema(custom.clone())
        .generate(&address_question(), &doc, &[passage(1, 4, 1)], &mut Vec::new())
        .unwrap();
    assert!(generation.answer.items.is_empty() && !generation.answer.feedback.answer_found);
    assert!(generation.answer.feedback.warnings.iter().any(|w| w.contains("does not read in its cited lines")));
    // One that holds the value but is not on its lines is kept and flagged.
    let mut moved: Value = serde_json::from_str(&data("address_found.json")).unwrap();
    let quote = moved["items"][0]["spans"][0]["quote"].as_str().unwrap().to_owned();
    moved["items"][0]["spans"][0]["quote"] = json!(format!("{quote} Cedex"));
    let fake = FakeModel::new(vec![Reply::Content(moved.to_string())]);
    let generation = LlmGenerator::new(&fake, "m")
        .with_custom_schema(custom)
        .generate(&address_question(), &doc, &[passage(1, 4, 1)], &mut Vec::new())
        .unwrap();
    let problems = verify_citations(&generation.answer, &doc, &generation.passages_shown);
    assert!(problems.iter().any(|p| p.problem.contains("not found in lines")), "{problems:?}");
}

#[test]
fn a_custom_schema_without_the_base_fields_is_refused() {
    let schema = json!({"type": "object", "properties": {"items": {"type": "array", "items": {"type": "object", "properties": {"street": {"type": "string"}}}}, "answer_found": {"type": "boolean"}, "complete_answer_found": {"type": "boolean"}, "warnings": {"type": "array", "items": {"type": "string"}}}});
    let error = CustomSchema::from_json("address", schema).unwrap_err();
    assert!(error.to_string().contains("items.items.spans is missing"), "{error}");
}

#[test]
fn a_custom_reply_missing_the_feedback_fields_is_an_honest_failure() {
    let custom =
        CustomSchema::from_file(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/address.schema.json")).unwrap();
    let fake = FakeModel::new(vec![Reply::Content(r#"{"items": [{"street": "12 rue des Lilas"}]}"#.into())]);
    let generation = LlmGenerator::new(&fake, "m")
        .with_custom_schema(custom)
        .generate(&address_question(), &address_doc(), &[passage(1, 4, 1)], &mut Vec::new())
        .unwrap();
    assert!(!generation.answer.feedback.answer_found && generation.answer.items.is_empty());
    assert!(generation.answer.feedback.warnings[0].contains("not valid JSON for the custom schema"));
    assert_eq!(generation.answer_json, None);
}

// --------------------------------------------------------- field extraction

fn invoice_doc() -> ParsedDocument {
    document(&[
        ("Amazon Web Services, Inc.".into(), 1),
        ("Invoice Number: 42183017".into(), 1),
        ("Invoice Date: August 3 , 2014".into(), 1),
        ("Total Amount $4.11".into(), 1),
    ])
}

#[test]
fn invoice_fields_come_from_one_call_with_evidence_per_field() {
    let doc = invoice_doc();
    let fake = FakeModel::new(vec![Reply::Content(data("invoice_fields.json"))]);
    let question = ParsedQuestion::unparsed("Extract the invoice number, date, total and vendor.", "t");
    let mut trace: Vec<TraceEvent> = Vec::new();
    let outcome: FieldOutcome<InvoiceFields> =
        extract_fields(&&fake, "m", &question, &doc, &[passage(1, 4, 1)], &mut trace).unwrap();
    assert_eq!(fake.calls(), 1);
    assert!(outcome.problems.is_empty(), "{:?}", outcome.problems);
    let fields = &outcome.extraction.fields;
    assert_eq!(fields.number.value.as_deref(), Some("42183017"));
    assert_eq!(fields.date.value.as_ref().map(|d| d.iso.as_str()), Some("2014-08-03"));
    assert_eq!(fields.total.value.as_ref().map(|a| a.value), Some(4.11));
    assert_eq!(fields.vendor.line_start, Some(1));
    let request = &fake.requests.borrow()[0];
    assert_eq!(request.schema_name, "fields_InvoiceFields");
    assert_eq!(request.schema["additionalProperties"], false);
    let field_props = &request.schema["$defs"]["InvoiceFields"]["properties"];
    assert!(field_props["total"].is_object(), "{}", request.schema);
    assert!(trace.iter().any(|e| e.step == "llm_fields_response"));

    // A field quoting a line it does not come from is listed, the others pass.
    let mut bad: Value = serde_json::from_str(&data("invoice_fields.json")).unwrap();
    bad["fields"]["total"]["line_start"] = json!(2);
    bad["fields"]["total"]["line_end"] = json!(2);
    let fake = FakeModel::new(vec![Reply::Content(bad.to_string())]);
    let outcome: FieldOutcome<InvoiceFields> =
        extract_fields(&&fake, "m", &question, &doc, &[passage(1, 4, 1)], &mut Vec::new()).unwrap();
    assert_eq!(outcome.problems.len(), 1, "{:?}", outcome.problems);
    assert_eq!(outcome.problems[0].field, "total");
    assert!(outcome.problems[0].problem.contains("not found in lines 2-2"));
}

#[test]
fn a_field_reply_that_is_not_json_is_an_error_not_a_crash() {
    let fake = FakeModel::new(vec![Reply::Content("Invoice 42183017, total $4.11".into())]);
    let question = ParsedQuestion::unparsed("Extract the invoice fields.", "t");
    let error = extract_fields::<InvoiceFields, _>(
        &&fake,
        "m",
        &question,
        &invoice_doc(),
        &[passage(1, 4, 1)],
        &mut Vec::new(),
    )
    .unwrap_err();
    assert!(matches!(error, LlmGenerateError::InvalidFieldReply { .. }), "{error:?}");
}

// ------------------------------------------------------------ dynamic few-shot

#[test]
fn few_shot_examples_from_the_bank_become_a_fragment() {
    let bank = ExampleBank::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fewshot_bank.jsonl")).unwrap();
    let question = amount_question(ChunkStrategy::Combined);
    let tags = vec!["amount".to_owned(), "invoice".to_owned()];
    let picked = bank.select(&question.generation.original_question, &tags, &FewShotSelection::default());
    assert!((1..=5).contains(&picked.len()), "{picked:?}");
    assert!(picked.iter().all(|p| p.score >= 0.35));
    let examples: Vec<FewShotExample> = picked.iter().map(|p| p.example.clone()).collect();
    let (system, fragments) = build_system_prompt_with_examples(&question, &examples);
    assert_eq!(fragments.last().map(String::as_str), Some("few_shot"));
    let scores: Vec<String> = picked.iter().map(|p| format!("{} {:.2}", p.index, p.score)).collect();
    let composed = format!("picked: {}\nfragments: {}\n\n{system}", scores.join(", "), fragments.join(", "));
    insta::assert_snapshot!("few_shot_prompt", composed);

    // A question the bank knows nothing about: no fragment.
    let picked = bank.select("Which river runs through the city?", &[], &FewShotSelection::default());
    assert!(picked.is_empty(), "{picked:?}");
}

// ------------------------------------------------- replies checked (issue 17)

/// The AWS total reply with `edit` applied to its JSON.
fn aws_reply(edit: impl FnOnce(&mut Value)) -> String {
    let mut reply: Value = serde_json::from_str(&data("aws_total_found.json")).unwrap();
    edit(&mut reply);
    reply.to_string()
}

/// One combined call over the AWS invoice's first passage with `reply`.
fn one_reply(question: &ParsedQuestion, document: &ParsedDocument, reply: String) -> docintel_schema::Generation {
    let fake = FakeModel::new(vec![Reply::Content(reply)]);
    let passages = [passage(1, 3, 1)];
    LlmGenerator::new(&fake, "fake-model").generate(question, document, &passages, &mut Vec::new()).unwrap()
}

#[test]
fn a_reply_that_denies_its_own_answer_is_not_found_with_the_models_words() {
    let reply = aws_reply(|r| {
        r["complete_answer_found"] = json!(false);
        r["warnings"] = json!(["The passage does not give the total amount; $4.11 is a usage charge."]);
    });
    let generation = one_reply(&amount_question(ChunkStrategy::Combined), &aws(), reply);
    let answer = &generation.answer;
    assert!(!answer.feedback.answer_found && answer.items.is_empty(), "{answer:?}");
    assert!(answer.feedback.warnings[0].contains("its own warnings say"), "{:?}", answer.feedback.warnings);
    assert!(answer.feedback.warnings.iter().any(|w| w.contains("$4.11 is a usage charge")));
}

#[test]
fn a_value_its_quote_does_not_hold_is_dropped_whether_a_word_or_the_prompts_example() {
    // A one-word quote for a sentence answer.
    let mut sentence = ParsedQuestion::unparsed("What does the invoice say about the total?", "t");
    sentence.chunk_strategy = ChunkStrategy::Combined;
    let reply = aws_reply(|r| {
        r["items"][0]["value"] = json!("The total amount of this invoice is four dollars and eleven cents");
        r["items"][0]["spans"][0]["quote"] = json!("Total");
    });
    let generation = one_reply(&sentence, &aws(), reply);
    assert!(!generation.answer.feedback.answer_found, "{:?}", generation.answer);
    assert!(generation.answer.feedback.warnings.iter().any(|w| w.contains("item 0 dropped")));

    // A value from the prompt's format example, cited on a line without it.
    let reply = aws_reply(|r| r["items"][0]["value"]["value"] = json!(1234.56));
    let generation = one_reply(&amount_question(ChunkStrategy::Combined), &aws(), reply);
    assert!(!generation.answer.feedback.answer_found, "{:?}", generation.answer);
    assert!(generation.answer.feedback.warnings.iter().any(|w| w.contains("\"1234.56")));

    // The system prompt carries no sample amount a model could copy.
    let (system, _) = build_system_prompt_with_examples(&amount_question(ChunkStrategy::Combined), &[]);
    assert!(!system.contains("1234.56") && !system.contains("1.234,56"), "{system}");
}

#[test]
fn quotes_with_copied_line_columns_and_short_table_rows_are_repaired() {
    let doc = aws();
    let reply = aws_reply(|r| r["items"][0]["spans"][0]["quote"] = json!("3\t1\t3\tTotal Amount $4.11"));
    let generation = one_reply(&amount_question(ChunkStrategy::Combined), &doc, reply);
    assert!(generation.answer.feedback.answer_found, "{:?}", generation.answer);
    assert_eq!(generation.answer.items[0].spans[0].quote, "Total Amount $4.11");
    assert!(verify_citations(&generation.answer, &doc, &generation.passages_shown).is_empty());
    assert!(generation.answer.feedback.warnings.iter().any(|w| w.contains("line-number columns")));

    let mut table = ParsedQuestion::unparsed("List the invoice fields as a table", "t");
    table.answer_shape = AnswerShape::Table;
    table.answer_type = "table".into();
    table.chunk_strategy = ChunkStrategy::Combined;
    let reply = aws_reply(|r| {
        r["items"][0]["value"] = json!({
            "headers": ["field", "value"],
            "rows": [["Invoice Number", "42183017"], ["Invoice Date"], ["Total Amount", "$4.11"]]
        });
        r["items"][0]["spans"] =
            json!([{"line_start": 1, "line_end": 3, "page": 1, "quote": "Invoice Number: 42183017"}]);
    });
    let generation = one_reply(&table, &doc, reply);
    assert!(generation.answer.feedback.answer_found, "{:?}", generation.answer);
    match &generation.answer.items[0].value {
        AnswerValue::Table(t) => assert_eq!(t.rows().len(), 2),
        other => panic!("{other:?}"),
    }
    assert!(generation.answer.feedback.warnings.iter().any(|w| w.contains("1 of 3 table row(s)")));
}

/// A 60-line section of controls, one page.
fn long_section() -> (ParsedDocument, ParsedQuestion) {
    let rows: Vec<(String, u32)> = (1..=60)
        .map(|i| (format!("AC-{i} Access control policy and procedures for system component number {i}"), 1))
        .collect();
    let mut question = ParsedQuestion::unparsed("List the access controls of the section", "t");
    question.answer_shape = AnswerShape::Listing;
    question.chunk_strategy = ChunkStrategy::Combined;
    (document(&rows), question)
}

#[test]
fn a_section_longer_than_the_window_is_read_in_pieces_that_fit_and_the_list_gathered() {
    let (doc, question) = long_section();
    let window = 1_600;
    let options = DispatchOptions { context_window: Some(window), ..DispatchOptions::default() };
    let fake = FakeModel::new((0..20).map(|_| Reply::FirstRow).collect());
    let generator = LlmGenerator::new(&fake, "m").with_options(options.clone()).with_max_output_tokens(Some(256));
    let generation = generator.generate(&question, &doc, &[passage(1, 60, 1)], &mut Vec::new()).unwrap();
    let limit = (window as f64 * docintel_generate::llm::DEFAULT_HEADROOM) as u64;
    let requests = fake.requests.borrow();
    assert!(requests.len() >= 3, "{} call(s)", requests.len());
    for request in requests.iter() {
        assert!(estimate_input_tokens(request, 4.0) <= limit, "{}", estimate_input_tokens(request, 4.0));
    }
    // Every piece was read (a list is gathered, not stopped at the first reply).
    let shown: u32 = generation.passages_shown.iter().map(|p| p.line_end - p.line_start + 1).sum();
    assert_eq!(shown, 60);
    assert_eq!(generation.answer.items.len(), requests.len());
    assert_eq!(generation.exit, "gathered");
    assert!(generation.notes.iter().any(|n| n.contains("read in")), "{:?}", generation.notes);
    assert!(verify_citations(&generation.answer, &doc, &generation.passages_shown).is_empty());
    drop(requests);

    // Asked sequentially, the cut passage is still read whole: its pieces are one passage.
    let mut sequential = question.clone();
    sequential.chunk_strategy = ChunkStrategy::Sequential;
    let fake = FakeModel::new((0..20).map(|_| Reply::FirstRow).collect());
    let generator = LlmGenerator::new(&fake, "m").with_options(options).with_max_output_tokens(Some(256));
    let generation = generator.generate(&sequential, &doc, &[passage(1, 60, 1)], &mut Vec::new()).unwrap();
    let shown: u32 = generation.passages_shown.iter().map(|p| p.line_end - p.line_start + 1).sum();
    assert_eq!((shown, generation.exit.as_str()), (60, "gathered"));
}

#[test]
fn a_prompt_the_server_refuses_as_too_long_is_split_and_asked_again() {
    let (doc, question) = long_section();
    // No window known: the server's refusal is the only signal.
    let mut fake = FakeModel::new((0..20).map(|_| Reply::FirstRow).collect());
    fake.context = Some(900);
    let mut trace: Vec<TraceEvent> = Vec::new();
    let generation = LlmGenerator::new(&fake, "m").generate(&question, &doc, &[passage(1, 60, 1)], &mut trace).unwrap();
    assert!(generation.answer.feedback.answer_found, "{:?}", generation.answer);
    assert!(generation.notes.iter().any(|n| n.contains("refused a prompt")), "{:?}", generation.notes);
    assert!(trace.iter().any(|e| e.step == "llm_context_overflow"));
    let shown: u32 = generation.passages_shown.iter().map(|p| p.line_end - p.line_start + 1).sum();
    assert_eq!(shown, 60, "every line read once the pieces fit");
    assert!(verify_citations(&generation.answer, &doc, &generation.passages_shown).is_empty());
    // A single line longer than the context cannot be split: an error, not a loop.
    let mut tiny = FakeModel::new(vec![Reply::FirstRow]);
    tiny.context = Some(10);
    let error = LlmGenerator::new(&tiny, "m").generate(&question, &doc, &[passage(1, 60, 1)], &mut Vec::new());
    assert!(error.is_err());
    assert!(tiny.calls() <= 8, "{} calls", tiny.calls());
}

#[test]
fn a_sentence_where_a_number_was_asked_is_rejected_and_asked_once_more_with_the_type() {
    let sentence = aws_reply(|r| r["items"][0]["value"] = json!("The total amount is four dollars and eleven cents"));
    let fake = FakeModel::new(vec![
        Reply::Content(sentence.clone()),
        Reply::Content(data("aws_total_found.json")),
        Reply::Content(sentence.clone()),
    ]);
    let generation = LlmGenerator::new(&fake, "m")
        .generate(&amount_question(ChunkStrategy::Combined), &aws(), &[passage(1, 3, 1)], &mut Vec::new())
        .unwrap();
    assert_eq!(fake.calls(), 2, "one retry, no more");
    let requests = fake.requests.borrow();
    assert_eq!(requests[1].messages.len(), 4);
    assert_eq!(requests[1].messages[2].content, sentence, "the bad reply is shown back");
    assert!(requests[1].messages[3].content.contains("a number"), "{}", requests[1].messages[3].content);
    assert!(generation.answer.feedback.answer_found, "{:?}", generation.answer);
    assert!(generation.notes.iter().any(|n| n.contains("asked once more")), "{:?}", generation.notes);
    drop(requests);

    // A second sentence is not asked a third time: not found.
    let fake = FakeModel::new(vec![Reply::Content(sentence.clone()), Reply::Content(sentence.clone())]);
    let generation = LlmGenerator::new(&fake, "m")
        .generate(&amount_question(ChunkStrategy::Combined), &aws(), &[passage(1, 3, 1)], &mut Vec::new())
        .unwrap();
    assert_eq!(fake.calls(), 2);
    assert!(!generation.answer.feedback.answer_found);
}
