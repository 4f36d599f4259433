//! Integration tests of the LLM question parser: the composed prompt and
//! strict schema (insta snapshots), recorded OpenAI chat-completion replies
//! replayed in order from `tests/data/llm_parse/` for the worked examples,
//! and every fallback to the rule parser. No network.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use docintel_question::llm::{FULL_PARSE_SCHEMA_NAME, build_system_prompt, build_user_prompt, full_parse_schema};
use docintel_question::{LLM_PARSER_NAME, LlmQuestionParser, RuleParser, Satellites};
use docintel_schema::{
    AnswerContext, AnswerShape, DecompositionPattern, DocumentFormat, DocumentProfile, KeywordSource, LanguageModel,
    LlmRequest, LlmResponse, ParsedQuestion, QuestionParser, TraceEvent, Usage,
};
use serde_json::{Value, json};

// ---------------------------------------------------------------- helpers

fn pdf_profile() -> DocumentProfile {
    DocumentProfile {
        format: DocumentFormat::Pdf,
        n_pages: Some(40),
        has_toc: true,
        has_tables: true,
        languages: vec!["en".to_owned()],
        is_scanned: false,
        doc_type: Some("policy".to_owned()),
        typical_fields: Vec::new(),
        summary: None,
    }
}

fn docx_profile() -> DocumentProfile {
    DocumentProfile {
        format: DocumentFormat::Docx,
        n_pages: None,
        has_toc: false,
        has_tables: false,
        languages: vec!["en".to_owned()],
        is_scanned: false,
        doc_type: Some("contract".to_owned()),
        typical_fields: Vec::new(),
        summary: None,
    }
}

#[derive(Debug)]
enum ReplayError {
    Exhausted,
    Down,
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplayError::Exhausted => write!(f, "no recorded reply left"),
            ReplayError::Down => write!(f, "connection refused (127.0.0.1:9)"),
        }
    }
}

impl std::error::Error for ReplayError {}

/// A test-only [`LanguageModel`]: replays recorded OpenAI chat-completion
/// bodies in order, turning each into an [`LlmResponse`] the way a transport
/// does (first choice's content, finish reason, usage with cached tokens),
/// and keeps the requests it was sent.
struct Replay {
    replies: RefCell<VecDeque<Value>>,
    requests: RefCell<Vec<LlmRequest>>,
    down: bool,
}

impl Replay {
    fn files(names: &[&str]) -> Replay {
        let replies = names
            .iter()
            .map(|name| {
                let path = data_dir().join(format!("{name}.json"));
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            })
            .collect();
        Replay { replies: RefCell::new(replies), requests: RefCell::new(Vec::new()), down: false }
    }

    fn bodies(bodies: Vec<Value>) -> Replay {
        Replay { replies: RefCell::new(bodies.into()), requests: RefCell::new(Vec::new()), down: false }
    }

    fn down() -> Replay {
        Replay { down: true, ..Replay::bodies(Vec::new()) }
    }
}

impl LanguageModel for Replay {
    type Error = ReplayError;

    fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, ReplayError> {
        self.requests.borrow_mut().push(request.clone());
        if self.down {
            return Err(ReplayError::Down);
        }
        let raw = self.replies.borrow_mut().pop_front().ok_or(ReplayError::Exhausted)?;
        let choice = &raw["choices"][0];
        let tokens = |pointer: &str| raw.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
        Ok(LlmResponse {
            id: raw["id"].as_str().unwrap_or_default().to_owned(),
            model: raw["model"].as_str().unwrap_or_default().to_owned(),
            content: choice["message"]["content"].as_str().unwrap_or_default().to_owned(),
            finish_reason: choice["finish_reason"].as_str().unwrap_or_default().to_owned(),
            usage: Usage {
                input_tokens: tokens("/usage/prompt_tokens"),
                output_tokens: tokens("/usage/completion_tokens"),
                cached_tokens: tokens("/usage/prompt_tokens_details/cached_tokens"),
            },
            raw,
        })
    }
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/llm_parse")
}

/// A chat-completion body whose message content is `content`.
fn body(content: &str, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-inline", "object": "chat.completion", "created": 1764450000, "model": "gpt-4.1-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 1200, "completion_tokens": 40, "total_tokens": 1240}
    })
}

fn llm_parse(file: &str, question: &str, turns: &[String], profile: &DocumentProfile) -> ParsedQuestion {
    let parser = LlmQuestionParser::new(Replay::files(&[file]), "gpt-4.1-mini");
    let mut trace: Vec<TraceEvent> = Vec::new();
    let outcome = parser.parse_traced(question, turns, profile, &mut trace).unwrap();
    assert_eq!(outcome.fallback, None, "{file}: {:?}", outcome.parsed.parsing_notes);
    assert_eq!(outcome.parsed.parser, LLM_PARSER_NAME, "{file}");
    assert!(outcome.usage.input_tokens > 0 && outcome.usage.output_tokens > 0, "{file}");
    assert_eq!((trace.len(), trace[0].step.as_str()), (1, "llm_parse"));
    assert_eq!(trace[0].detail["usage"]["input_tokens"], outcome.usage.input_tokens);
    assert!(trace[0].detail["raw"]["choices"].is_array());
    assert_eq!(parser.model().requests.borrow().len(), 1);
    outcome.parsed
}

fn texts(parsed: &ParsedQuestion, source: KeywordSource) -> Vec<&str> {
    parsed.keywords.iter().filter(|k| k.source == source && !k.is_regex).map(|k| k.text.as_str()).collect()
}

// ---------------------------------------------------------------- prompt and schema

const SNAPSHOT_QUESTION: &str = "Quel est le montant de la prime annuelle ?";

#[test]
fn prompt_snapshot() {
    let parser = LlmQuestionParser::new(Replay::down(), "gpt-4.1-mini");
    let request = parser.request(SNAPSHOT_QUESTION, &["What is the deductible?".to_owned()], &pdf_profile());
    let prompt: Vec<String> =
        request.messages.iter().map(|m| format!("===== {} =====\n{}", m.role.to_uppercase(), m.content)).collect();
    insta::assert_snapshot!("llm_parse_prompt", prompt.join("\n"));
    insta::assert_json_snapshot!("llm_parse_schema", request.schema);
}

#[test]
fn request_is_strict_at_temperature_zero() {
    let parser = LlmQuestionParser::new(Replay::down(), "gpt-4.1-mini").with_max_output_tokens(Some(800));
    let request = parser.request(SNAPSHOT_QUESTION, &[], &pdf_profile());
    assert_eq!(request.model, "gpt-4.1-mini");
    assert_eq!(request.temperature, 0.0);
    assert_eq!(request.max_output_tokens, Some(800));
    assert_eq!(request.schema_name, FULL_PARSE_SCHEMA_NAME);
    assert_eq!(request.messages.iter().map(|m| m.role.as_str()).collect::<Vec<_>>(), ["system", "user"]);
    assert_eq!(request.messages[1].content, build_user_prompt(SNAPSHOT_QUESTION, &[], &pdf_profile()));
    let mut problems = Vec::new();
    strict_violations(&request.schema, "", &mut problems);
    assert!(problems.is_empty(), "{problems:?}");
    assert!(request.schema.get("$schema").is_none());
    // The enumerations come from the tables.
    let satellites = Satellites::builtin();
    let types: Vec<&str> = satellites.answer_types().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(enum_of(&request.schema, "answer_type"), types);
    assert_eq!(enum_of(&request.schema, "answer_shape"), ["single", "listing", "table", "tree", "nested_json"]);
    let concepts = &request.schema["properties"]["matched_concept"]["enum"];
    assert_eq!(concepts.as_array().map(Vec::len), Some(satellites.concepts().len() + 1));
    assert!(concepts.as_array().is_some_and(|c| c.contains(&Value::Null) && c.contains(&json!("premium"))));
}

fn enum_of<'a>(schema: &'a Value, field: &str) -> Vec<&'a str> {
    schema["properties"][field]["enum"]
        .as_array()
        .map(|v| v.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// What OpenAI strict mode rejects: an object without
/// `additionalProperties: false` or with a property not required, `$schema`,
/// `oneOf`, numeric `format`s.
fn strict_violations(value: &Value, path: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for key in ["oneOf", "default"] {
                if map.contains_key(key) {
                    out.push(format!("{path}: {key}"));
                }
            }
            let numeric =
                map.get("type").is_some_and(|t| t.to_string().contains("integer") || t.to_string().contains("number"));
            if numeric && map.contains_key("format") {
                out.push(format!("{path}: numeric format"));
            }
            if let Some(Value::Object(properties)) = map.get("properties") {
                if map.get("additionalProperties") != Some(&Value::Bool(false)) {
                    out.push(format!("{path}: additionalProperties"));
                }
                let required: Vec<&str> = map
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                for key in properties.keys().filter(|k| !required.contains(&k.as_str())) {
                    out.push(format!("{path}: {key} not required"));
                }
            }
            for (key, child) in map {
                strict_violations(child, &format!("{path}/{key}"), out);
            }
        }
        Value::Array(items) => {
            items.iter().enumerate().for_each(|(i, c)| strict_violations(c, &format!("{path}/{i}"), out))
        }
        _ => {}
    }
}

#[test]
fn a_new_answer_type_row_changes_prompt_schema_and_parse() {
    let dir = docintel_test_support::temp_dir("question-llm-types");
    let builtin = include_str!("../data/answer_types.csv");
    let row = "policy_number,\"\\bpolicy\\s+(?:number|no)\\b\",,,text,gpt-4.1-nano,\"A policy identifier.\"\n";
    std::fs::write(dir.path().join("answer_types.csv"), format!("{builtin}{row}")).unwrap();
    let satellites = Satellites::from_dir(dir.path()).unwrap();

    let builtin = Satellites::builtin();
    let line = "- policy_number: A policy identifier.\n";
    assert!(build_system_prompt(&satellites).contains(line));
    assert!(!build_system_prompt(&builtin).contains(line));
    assert_eq!(enum_of(&full_parse_schema(&satellites), "answer_type").last(), Some(&"policy_number"));
    assert!(!enum_of(&full_parse_schema(&builtin), "answer_type").contains(&"policy_number"));

    // The same recorded reply: accepted with the row, a fallback without it.
    let question = "What is the policy number?";
    let with_row = LlmQuestionParser::new(Replay::files(&["policy_number_type"]), "gpt-4.1-mini")
        .with_rules(RuleParser::new().with_satellites(satellites));
    let parsed = with_row.parse(question, &pdf_profile()).unwrap();
    assert_eq!((parsed.parser.as_str(), parsed.answer_type.as_str()), (LLM_PARSER_NAME, "policy_number"));
    assert_eq!(parsed.suggested_model, "gpt-4.1-nano");
    let without = LlmQuestionParser::new(Replay::files(&["policy_number_type"]), "gpt-4.1-mini");
    let parsed = without.parse(question, &pdf_profile()).unwrap();
    assert_eq!(parsed.parser, "rules/0.1");
    assert!(parsed.parsing_notes[0].contains("unknown answer type 'policy_number'"), "{:?}", parsed.parsing_notes);
}

// ---------------------------------------------------------------- replayed worked examples

/// One recorded reply and what the mapped record must show.
struct Case {
    file: &'static str,
    question: &'static str,
    turns: &'static [&'static str],
    profile: fn() -> DocumentProfile,
    checks: fn(&ParsedQuestion),
}

#[test]
fn replayed_worked_examples() {
    let cases = [
        // Seed 001, example 1: French annual premium. The model names the
        // concept; the code's dictionary still adds the other languages'
        // words and the amount regex.
        Case {
            file: "french_annual_premium",
            question: "Quel est le montant de la prime annuelle ?",
            turns: &[],
            profile: pdf_profile,
            checks: |p| {
                assert_eq!((p.answer_shape, p.answer_type.as_str()), (AnswerShape::Single, "amount"));
                assert_eq!(p.language.as_deref(), Some("fr"));
                assert_eq!(texts(p, KeywordSource::Direct), ["montant", "prime annuelle"]);
                assert_eq!(
                    texts(p, KeywordSource::LlmExpansion),
                    ["cotisation annuelle", "prime TTC", "montant de la prime"]
                );
                let dictionary = texts(p, KeywordSource::ExpertDictionary);
                assert!(dictionary.contains(&"premium") && dictionary.contains(&"prämie"), "{dictionary:?}");
                assert!(
                    p.keywords
                        .iter()
                        .filter(|k| k.source == KeywordSource::ExpertDictionary)
                        .all(|k| k.semantic_group.as_deref() == Some("premium"))
                );
                let regex: Vec<_> = p.keywords.iter().filter(|k| k.is_regex).collect();
                assert_eq!(regex.len(), 1);
                let currency = regex::Regex::new(&format!("(?i){}", regex[0].text)).unwrap();
                assert!(currency.is_match("Prime annuelle : 1 250,00 €") && !currency.is_match("Article 12"));
                assert_eq!(p.matched_concept.as_deref(), Some("premium"));
                assert_eq!(p.suggested_model, "gpt-4.1-nano");
                assert!(p.parsing_notes.iter().any(|n| n.starts_with("expert dictionary: concept(s) premium")));
            },
        },
        // Example 2: compound question, two independent sub-questions; the
        // dispatcher (code) turns decomposition on.
        Case {
            file: "compound_premium_exclusions",
            question: "What is the annual premium and what are the main exclusions?",
            turns: &[],
            profile: pdf_profile,
            checks: |p| {
                assert_eq!(p.decomposition.pattern, DecompositionPattern::Independent);
                assert_eq!(
                    p.decomposition.sub_questions,
                    ["What is the annual premium?", "What are the main exclusions?"]
                );
                assert!(p.activations.decompose_compound);
                assert_eq!(p.matched_concept.as_deref(), Some("premium"));
                // Both concepts were recognised by the dictionary in code.
                let groups: Vec<&str> = p.keywords.iter().filter_map(|k| k.semantic_group.as_deref()).collect();
                assert!(groups.contains(&"exclusions") && groups.contains(&"premium"), "{groups:?}");
                assert!(p.suggested_clarification.is_none());
            },
        },
        // Example 3: "What's the limit?": the model's clarification.
        Case {
            file: "whats_the_limit",
            question: "What's the limit?",
            turns: &[],
            profile: pdf_profile,
            checks: |p| {
                assert_eq!(p.matched_concept, None);
                assert!(p.ambiguity_reason.as_deref().is_some_and(|r| r.contains("sublimit")));
                assert_eq!(
                    p.suggested_clarification.as_deref(),
                    Some(
                        "Which limit do you mean: the coverage limit, a sublimit, the deductible or the aggregate limit?"
                    )
                );
                assert_eq!(texts(p, KeywordSource::Direct), ["limit"]);
                assert!(texts(p, KeywordSource::ExpertDictionary).is_empty());
            },
        },
        // Example 4: page 3 of a Word contract: the dispatcher switches page
        // numbers off and says why; the hint is kept as a location.
        Case {
            file: "docx_page_3",
            question: "What does it say on page 3 of the contract?",
            turns: &[],
            profile: docx_profile,
            checks: |p| {
                assert_eq!(p.structural_hints.pages_hint, [3]);
                assert!(p.retrieval.pages.is_empty());
                assert!(!p.activations.extract_page_numbers && !p.activations.use_toc_navigation);
                assert_eq!(p.structural_hints.answer_context, AnswerContext::Page);
                assert!(
                    p.parsing_notes.iter().any(|n| n.contains("names page 3 but a docx document has no fixed pages")),
                    "{:?}",
                    p.parsing_notes
                );
                assert!(p.parsing_notes.iter().any(|n| n.contains("answer_context=page (question)")));
            },
        },
        // The model left the identifiers out: the regexes put them back.
        Case {
            file: "anchors_left_to_code",
            question: "Is AC-2 implemented as described in section 4.2?",
            turns: &[],
            profile: pdf_profile,
            checks: |p| {
                assert_eq!(p.retrieval.anchor_keywords, ["AC-2", "section 4.2"]);
                assert!(
                    p.keywords
                        .iter()
                        .filter(|k| k.source == KeywordSource::Anchor)
                        .all(|k| k.weight == docintel_question::ANCHOR_WEIGHT)
                );
                assert_eq!(p.answer_type, "boolean");
                assert_eq!(p.retrieval.section_hint.as_deref(), Some("section 4.2"));
            },
        },
        // A follow-up: the model's rewrite goes to retrieval only; the
        // dictionary runs on it in code.
        Case {
            file: "follow_up_due",
            question: "When is it due?",
            turns: &["What is the annual premium?"],
            profile: pdf_profile,
            checks: |p| {
                assert_eq!(p.retrieval.rewrites, ["When is the annual premium due?"]);
                assert_eq!(p.retrieval.main_query, "When is it due?");
                assert_eq!(p.generation.original_question, "When is it due?");
                assert_eq!(p.matched_concept.as_deref(), Some("premium"));
                assert_eq!(p.answer_type, "date");
                assert!(
                    p.parsing_notes.iter().any(|n| n.starts_with("follow-up rewritten for retrieval only (model)"))
                );
            },
        },
    ];
    for case in cases {
        let turns: Vec<String> = case.turns.iter().map(|t| (*t).to_owned()).collect();
        let parsed = llm_parse(case.file, case.question, &turns, &(case.profile)());
        (case.checks)(&parsed);
        // Whatever the model wrote, format phrases never reach retrieval and
        // the record survives a JSON round trip.
        let json = serde_json::to_string(&parsed).unwrap();
        assert_eq!(serde_json::from_str::<ParsedQuestion>(&json).unwrap(), parsed, "{}", case.file);
    }
}

#[test]
fn format_constraints_stay_out_of_retrieval() {
    let reply = json!({
        "corrected_question": "What is the total amount in EUR?", "language": "en",
        "keywords": [{"text": "total amount", "weight": 2.0}, {"text": "EUR", "weight": 1.0}],
        "rewritten_keywords": [], "answer_type": "amount", "answer_shape": "single", "matched_concept": "total_amount",
        "decomposition": {"pattern": "single", "sub_questions": []}, "pages_hint": [], "toc_section_hint": null,
        "layout_hint": null, "answer_context": null, "needs_summary": false, "period": null, "ambiguity_reason": null,
        "suggested_clarification": null, "disambiguation": null, "must_distinguish": [],
        "format_constraints": [{"key": "currency", "value": "EUR"}, {"key": "date_format", "value": "DD/MM/YYYY"}],
        "follow_up_rewrite": null
    });
    let parser = LlmQuestionParser::new(Replay::bodies(vec![body(&reply.to_string(), "stop")]), "m");
    let parsed = parser.parse("What is the total amount in EUR?", &pdf_profile()).unwrap();
    assert_eq!(parsed.parser, LLM_PARSER_NAME);
    assert_eq!(parsed.retrieval.main_query, "What is the total amount?");
    assert!(parsed.keywords.iter().all(|k| k.text != "EUR"), "{:?}", parsed.keywords);
    assert_eq!(parsed.generation.format_constraints["currency"], "EUR");
    assert_eq!(parsed.generation.format_constraints["date_format"], "DD/MM/YYYY");
}

#[test]
fn the_rules_type_and_the_questions_pages_stand_against_the_model() {
    // The model types a score question as free text and invents a page restriction.
    let reply = json!({
        "corrected_question": "What BLEU score does the base model reach?", "language": "en",
        "keywords": [{"text": "BLEU score", "weight": 2.0}],
        "rewritten_keywords": [], "answer_type": "text", "answer_shape": "single", "matched_concept": null,
        "decomposition": {"pattern": "single", "sub_questions": []}, "pages_hint": [10], "toc_section_hint": null,
        "layout_hint": null, "answer_context": null, "needs_summary": false, "period": null, "ambiguity_reason": null,
        "suggested_clarification": null, "disambiguation": null, "must_distinguish": [],
        "format_constraints": [], "follow_up_rewrite": null
    });
    let question = "How many BLEU points does the base model reach?";
    let rules = RuleParser::new().parse(question, &pdf_profile()).unwrap();
    assert_ne!(docintel_schema::ValueKind::for_answer_type(&rules.answer_type), docintel_schema::ValueKind::Text);
    let parser = LlmQuestionParser::new(Replay::bodies(vec![body(&reply.to_string(), "stop")]), "m");
    let parsed = parser.parse(question, &pdf_profile()).unwrap();
    assert_eq!(parsed.answer_type, rules.answer_type, "{:?}", parsed.parsing_notes);
    assert!(parsed.structural_hints.pages_hint.is_empty(), "{:?}", parsed.structural_hints.pages_hint);
    let notes = parsed.parsing_notes.join(" | ");
    assert!(notes.contains("rules' '") && notes.contains("not in the question: dropped"), "{notes}");

    // A page the question writes is kept.
    let reply = reply.to_string().replace("[10]", "[4]");
    let parser = LlmQuestionParser::new(Replay::bodies(vec![body(&reply, "stop")]), "m");
    let parsed = parser.parse("How many BLEU points does table 4 give?", &pdf_profile()).unwrap();
    assert_eq!(parsed.structural_hints.pages_hint, [4]);
}

// ---------------------------------------------------------------- fallbacks

#[test]
fn every_model_failure_falls_back_to_the_rules() {
    let valid = std::fs::read_to_string(data_dir().join("whats_the_limit.json")).unwrap();
    let valid: Value = serde_json::from_str(&valid).unwrap();
    let valid_content = valid["choices"][0]["message"]["content"].as_str().unwrap().to_owned();
    let cases: Vec<(&str, Replay, &str)> = vec![
        ("transport", Replay::down(), "transport error: connection refused"),
        ("exhausted", Replay::bodies(Vec::new()), "transport error: no recorded reply left"),
        ("not json", Replay::bodies(vec![body("Sure! The limit is", "stop")]), "reply is not a FullParse JSON"),
        ("missing field", Replay::bodies(vec![body("{\"corrected_question\": \"x\"}", "stop")]), "missing field"),
        ("cut", Replay::bodies(vec![body(&valid_content, "length")]), "reply cut at the output token limit"),
        ("unknown type", Replay::files(&["unknown_answer_type"]), "unknown answer type 'colour'"),
        (
            "unknown shape",
            Replay::bodies(vec![body(
                &valid_content.replace("\"answer_shape\":\"single\"", "\"answer_shape\":\"graph\""),
                "stop",
            )]),
            "unknown answer shape 'graph'",
        ),
    ];
    let question = "What's the limit?";
    let rules = RuleParser::new().parse(question, &pdf_profile()).unwrap();
    for (name, replay, reason) in cases {
        let parser = LlmQuestionParser::new(replay, "gpt-4.1-mini");
        let mut trace: Vec<TraceEvent> = Vec::new();
        let outcome = parser.parse_traced(question, &[], &pdf_profile(), &mut trace).unwrap();
        assert!(outcome.fallback.as_deref().is_some_and(|f| f.contains(reason)), "{name}: {:?}", outcome.fallback);
        let parsed = outcome.parsed;
        assert_eq!(parsed.parser, "rules/0.1", "{name}");
        assert!(parsed.parsing_notes[0].starts_with("llm/0.1 with gpt-4.1-mini failed ("), "{name}");
        assert!(parsed.parsing_notes[0].contains(reason), "{name}: {}", parsed.parsing_notes[0]);
        // Apart from that note, the record is the rule parser's.
        let mut without_note = parsed.clone();
        without_note.parsing_notes.remove(0);
        assert_eq!(without_note, rules, "{name}");
        assert_eq!(trace[0].detail["fallback"].as_str().map(|f| f.contains(reason)), Some(true), "{name}");
    }
    // The same reply, complete, is accepted.
    let parser = LlmQuestionParser::new(Replay::bodies(vec![body(&valid_content, "stop")]), "gpt-4.1-mini");
    assert_eq!(parser.parse(question, &pdf_profile()).unwrap().parser, LLM_PARSER_NAME);
}

#[test]
fn bad_questions_are_refused_before_any_call() {
    let parser = LlmQuestionParser::new(Replay::down(), "gpt-4.1-mini");
    assert!(parser.parse("  ?? ", &pdf_profile()).is_err());
    assert!(parser.model().requests.borrow().is_empty());
    assert_eq!(parser.name(), LLM_PARSER_NAME);
}
