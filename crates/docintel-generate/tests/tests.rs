//! Integration tests of the generation brick's LLM path: prompt snapshots
//! (one fixture per case under `tests/prompts/`) and the [`LlmGenerator`]
//! over a small in-crate fake transport (replies inline or from
//! `tests/data/`). No network.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

use docintel_generate::prompt::{build_system_prompt_with_examples, build_user_prompt};
use docintel_generate::{FewShotExample, LlmGenerateError, LlmGenerator, TEMPLATE_VERSION, verify_citations};
use docintel_schema::{
    AnswerShape, AnswerValue, BBox, ChunkStrategy, Decomposition, Distinction, DocumentFormat, DocumentProfile,
    Generator, Keyword, LanguageModel, Line, LlmRequest, LlmResponse, ParsedDocument, ParsedQuestion, Passage,
    TraceEvent, Usage,
};
use serde::Deserialize;
use serde_json::{Value, json};

// ---------------------------------------------------------------- helpers

fn document(rows: &[(String, u32)]) -> ParsedDocument {
    let mut lines: Vec<Line> = Vec::new();
    for (i, (text, page)) in rows.iter().enumerate() {
        let line_in_page = match lines.last() {
            Some(prev) if prev.page == *page => prev.line_in_page + 1,
            _ => 1,
        };
        lines.push(Line {
            line_id: i as u32 + 1,
            page: *page,
            line_in_page,
            text: text.clone(),
            bbox: BBox::default(),
        });
    }
    ParsedDocument {
        source: "test.pdf".into(),
        profile: DocumentProfile {
            format: DocumentFormat::Pdf,
            n_pages: lines.last().map(|l| l.page),
            has_toc: false,
            has_tables: false,
            languages: vec![],
            is_scanned: false,
            doc_type: None,
            typical_fields: vec![],
            summary: None,
        },
        lines,
        pages: vec![],
        toc: vec![],
        diagnostics: vec![],
    }
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
}

// ------------------------------------------------------------ fake transport

/// Replays canned reply contents in order and records every request. Input
/// tokens are estimated as user-prompt characters / 4, so a call showing more
/// passages costs more.
struct FakeModel {
    replies: RefCell<VecDeque<Reply>>,
    requests: RefCell<Vec<LlmRequest>>,
}

enum Reply {
    Content(String),
    Truncated,
}

#[derive(Debug, thiserror::Error)]
#[error("fake transport: {0}")]
struct FakeError(String);

impl FakeModel {
    fn new(replies: Vec<Reply>) -> FakeModel {
        FakeModel { replies: RefCell::new(replies.into()), requests: RefCell::new(Vec::new()) }
    }
    fn calls(&self) -> usize {
        self.requests.borrow().len()
    }
}

impl LanguageModel for &FakeModel {
    type Error = FakeError;
    fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, FakeError> {
        self.requests.borrow_mut().push(request.clone());
        let n = self.requests.borrow().len();
        let reply = self.replies.borrow_mut().pop_front().ok_or_else(|| FakeError("no more replies".into()))?;
        let content = match reply {
            Reply::Content(content) => content,
            Reply::Truncated => return Err(FakeError(format!("response fake-{n} was cut at the output token limit"))),
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
    // Passage order puts the answer last.
    let passages = vec![passage(4, 15, 2), passage(16, 27, 3), passage(1, 3, 1)];
    let fake = FakeModel::new(vec![
        Reply::Content(not_found("page 2 lists usage rows, no total")),
        Reply::Content(not_found("page 3 lists usage rows, no total")),
        Reply::Content(data("aws_total_found.json")),
    ]);
    let generation = LlmGenerator::new(&fake, "m")
        .generate(&amount_question(ChunkStrategy::Sequential), &doc, &passages, &mut Vec::new())
        .unwrap();
    assert_eq!((fake.calls(), generation.iterations, generation.exit.as_str()), (3, 3, "sufficient"));
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
    let fake = FakeModel::new(vec![Reply::Content("The total is $4.11.".into())]);
    let mut trace: Vec<TraceEvent> = Vec::new();
    let generation = LlmGenerator::new(&fake, "m")
        .generate(&amount_question(ChunkStrategy::Combined), &doc, &three_passages(), &mut trace)
        .unwrap();
    let answer = &generation.answer;
    assert!(!answer.feedback.answer_found && answer.items.is_empty());
    assert!(answer.feedback.warnings[0].contains("not valid JSON"), "{:?}", answer.feedback.warnings);
    assert_eq!(generation.exit, "exhausted");
    assert_eq!(
        trace.iter().find(|e| e.step == "llm_response").unwrap().detail["raw"]["choices"][0]["message"]["content"],
        "The total is $4.11."
    );

    // Valid JSON of the wrong shape is no better.
    let fake = FakeModel::new(vec![Reply::Content(r#"{"items": "4.11"}"#.into())]);
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
    let fake = FakeModel::new(vec![Reply::Truncated]);
    let error = LlmGenerator::new(&fake, "m")
        .generate(&amount_question(ChunkStrategy::Combined), &doc, &three_passages(), &mut Vec::new())
        .unwrap_err();
    assert!(matches!(error, LlmGenerateError::Model { call: 1, .. }), "{error:?}");
    assert!(error.to_string().contains("cut at the output token limit"), "{error}");
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
