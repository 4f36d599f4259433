//! The LLM question parser (`llm/0.1`): one structured call fills a
//! [`FullParse`] record, then code does everything that must be
//! deterministic.
//!
//! - **Request**: a strict JSON Schema derived from [`FullParse`] (schemars,
//!   then [`docintel_schema::registry::to_strict`]), temperature 0, with the
//!   allowed answer types, shapes and concepts taken from the [`Satellites`]
//!   twice: listed in the system prompt and as `enum` values in the schema.
//!   A new answer type is one row of `answer_types.csv`, no code.
//! - **Code after the model**: the regex anchors and the expert-dictionary
//!   expansion run on the question exactly as in [`RuleParser`]; the format
//!   phrases are taken out of the retrieval query by the same regexes; the
//!   cascades fill `chunk_strategy`, `suggested_model` and (unless the
//!   wording decided it) `answer_context`; [`decide_activations`] decides the
//!   execution plan. The model fills fields; code decides routing.
//! - **Failure is a value**: a transport error, a reply cut at the token
//!   limit, invalid JSON, or an answer type or shape outside the tables gives
//!   the [`RuleParser`] record (`parser: rules/0.1`) with a parsing note
//!   saying why. Only an empty or too-long question is an error, as for the
//!   rule parser, and it is refused before any call.
//!
//! Every call goes to the trace (`question` / `llm_parse`: model, usage, raw
//! reply, fallback reason) through [`LlmQuestionParser::parse_traced`].

use std::collections::HashSet;

use docintel_schema::registry::to_strict;
use docintel_schema::text::normalize;
use docintel_schema::{
    AnswerContext, AnswerShape, ChatMessage, ChunkStrategy, Decomposition, DecompositionPattern, Distinction,
    DocumentFormat, DocumentProfile, Keyword, KeywordSource, LanguageModel, LlmRequest, LlmResponse, NullSink,
    ParsedQuestion, QuestionParser, TraceEvent, TraceSink, Usage, ValueKind,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::cascade::{CascadeLevel, Resolved, resolve_answer_context, resolve_chunk_strategy, resolve_model};
use crate::satellites::Satellites;
use crate::{ANCHOR_WEIGHT, QuestionError, RuleParser, chunk_name, context_name};

/// Name and version of the LLM parser, recorded in `ParsedQuestion::parser`.
pub const LLM_PARSER_NAME: &str = "llm/0.1";

/// Name of the strict schema sent with the request.
pub const FULL_PARSE_SCHEMA_NAME: &str = "full_parse";

/// The format-constraint keys the model may fill (the rule parser's keys).
pub const FORMAT_KEYS: [&str; 4] = ["currency", "date_format", "unit", "answer_language"];

/// Weight given to a model keyword whose weight is out of range.
const DEFAULT_LLM_WEIGHT: f32 = 1.0;

/// A keyword proposed by the model, with its weight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LlmKeyword {
    /// A word or short phrase.
    pub text: String,
    /// Relative weight: 1.0 is an ordinary content word, up to 2.0 for the
    /// word the question is about, 0.5 to 1.0 for document wording.
    pub weight: f32,
}

/// One output-format request of the question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FormatConstraint {
    /// `currency`, `date_format`, `unit` or `answer_language`.
    pub key: String,
    /// The value asked for (`EUR`, `YYYY-MM-DD`, `thousands`, `fr`).
    pub value: String,
}

/// Everything the model fills in one call. `answer_type`, `answer_shape`
/// and `matched_concept` are strings here; the request's schema restricts
/// them to the rows of the satellite tables ([`full_parse_schema`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FullParse {
    /// The question with whitespace and obvious typos fixed, same meaning.
    pub corrected_question: String,
    /// ISO 639-1 code of the question's language.
    pub language: Option<String>,
    /// Content words and noun phrases of the question to search for.
    pub keywords: Vec<LlmKeyword>,
    /// How the answer is likely worded in the document (its vocabulary).
    pub rewritten_keywords: Vec<LlmKeyword>,
    /// A row of the answer types table.
    pub answer_type: String,
    /// A row of the answer shapes table.
    pub answer_shape: String,
    /// A row of the concepts table, or null.
    pub matched_concept: Option<String>,
    /// How the question splits.
    pub decomposition: Decomposition,
    /// Pages the question names (1-based); empty when none.
    pub pages_hint: Vec<u32>,
    /// A section the question names ("Article 18", "the exclusions section").
    pub toc_section_hint: Option<String>,
    /// A layout element the question names (table, footnote, header, ...).
    pub layout_hint: Option<String>,
    /// How much context the answer needs, when the wording says so; else null.
    pub answer_context: Option<AnswerContext>,
    /// Whether the question asks for a summary.
    pub needs_summary: bool,
    /// A period the question is limited to ("FY2022", "2019-2021").
    pub period: Option<String>,
    /// Why the question is ambiguous, or null.
    pub ambiguity_reason: Option<String>,
    /// A short question to ask the user back, or null.
    pub suggested_clarification: Option<String>,
    /// One sentence saying which sense is meant, or null.
    pub disambiguation: Option<String>,
    /// Pairs the answer must keep apart ("the limit, not the deductible").
    pub must_distinguish: Vec<Distinction>,
    /// Output-format requests; never search words.
    pub format_constraints: Vec<FormatConstraint>,
    /// The question rewritten self-contained when it leans on an earlier
    /// turn; null otherwise.
    pub follow_up_rewrite: Option<String>,
}

/// The strict JSON Schema of [`FullParse`] for these tables: the schemars
/// schema in OpenAI strict form, with `answer_type`, `answer_shape`,
/// `matched_concept` and the format keys restricted to the tables' rows.
pub fn full_parse_schema(satellites: &Satellites) -> Value {
    let mut schema = to_strict(schemars::schema_for!(FullParse).to_value());
    let types: Vec<Value> = satellites.answer_types().iter().map(|t| Value::from(t.name.as_str())).collect();
    let shapes: Vec<Value> = satellites.answer_shapes().iter().map(|s| Value::from(s.shape.as_str())).collect();
    let mut concepts: Vec<Value> = satellites.concepts().iter().map(|c| Value::from(c.name.as_str())).collect();
    concepts.push(Value::Null);
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        for (field, values) in [("answer_type", types), ("answer_shape", shapes), ("matched_concept", concepts)] {
            if let Some(Value::Object(property)) = properties.get_mut(field) {
                property.insert("enum".to_owned(), Value::Array(values));
            }
        }
    }
    let keys: Vec<Value> = FORMAT_KEYS.iter().map(|k| Value::from(*k)).collect();
    if let Some(Value::Object(key)) = schema.pointer_mut("/$defs/FormatConstraint/properties/key") {
        key.insert("enum".to_owned(), Value::Array(keys));
    }
    schema
}

/// The system prompt: the task, one rule per field, and the allowed answer
/// types, shapes and concepts listed from the satellite tables.
pub fn build_system_prompt(satellites: &Satellites) -> String {
    let mut prompt = String::from(
        "You read one question about a document and describe it as JSON following the given schema. \
         Do not answer the question. Code uses your record to search the document; it decides the \
         search steps itself, you only fill the fields.\n\n\
         Fields:\n\
         - corrected_question: the question with whitespace and obvious typos fixed. Same meaning, same \
         language, no added words.\n\
         - language: ISO 639-1 code of the question's language.\n\
         - keywords: the content words and noun phrases of the question worth searching for, as written \
         in the question. No question words, no stop words, no format instructions. Weight 1.0, up to \
         2.0 for what the question is about.\n\
         - rewritten_keywords: up to 5 short phrases the document is likely to use where the answer is \
         (its vocabulary, in the document's language), weight 0.5 to 1.0.\n\
         - answer_type: the value each element of the answer carries, one of the answer types below.\n\
         - answer_shape: the structure of the answer, one of the answer shapes below. \"List the annual \
         premiums\" is (listing, amount); \"What is the premium?\" is (single, amount).\n\
         - matched_concept: the concept below the question asks about, or null. Null when a generic \
         word could mean several of them.\n\
         - decomposition: pattern single, independent (parts answerable separately), sequential (a part \
         needs an earlier part's answer), unified (several words for one thing: \"exclusions and limits\" \
         is one question) or conditional (\"if X, what is Y?\"); sub_questions are self-contained \
         questions for independent, sequential and conditional, empty otherwise. Split only when each \
         part is a question of its own.\n\
         - pages_hint: the page numbers the question names (\"pages 5 to 7\" is [5, 6, 7]); [] when it \
         names none. Never guess a page.\n\
         - toc_section_hint: a section, article or chapter the question names, else null.\n\
         - layout_hint: a layout element the question names (table, footnote, header, figure), else null.\n\
         - answer_context: line, paragraph, page, section, chapter or document when the wording says how \
         much text the answer needs (\"summarize the section\", \"what does page 3 say\"); else null.\n\
         - needs_summary: true when the question asks for a summary or overview.\n\
         - period: a period the question is limited to (\"FY2022\", \"2019-2021\"), else null.\n\
         - ambiguity_reason and suggested_clarification: when the question names only a generic word \
         that several concepts below answer to, or names nothing to look for: why, and a short question \
         to ask the user back. Null otherwise.\n\
         - disambiguation and must_distinguish: for \"the limit, not the deductible\": one sentence, and \
         the pair wanted \"limit\", not_this \"deductible\". Null and [] otherwise.\n\
         - format_constraints: how the answer must be written (currency, date_format, unit, \
         answer_language) with the value asked for, e.g. currency EUR, date_format YYYY-MM-DD. These \
         are never keywords.\n\
         - follow_up_rewrite: when earlier turns are shown and the question leans on them (\"and when \
         is it due?\"), the question rewritten to stand alone; null otherwise.\n",
    );
    prompt.push_str("\nAnswer types (answer_type):\n");
    for row in satellites.answer_types() {
        prompt.push_str(&format!("- {}: {}\n", row.name, row.definition));
    }
    prompt.push_str("\nAnswer shapes (answer_shape):\n");
    for row in satellites.answer_shapes() {
        prompt.push_str(&format!("- {}: {}\n", row.shape.as_str(), row.definition));
    }
    prompt.push_str("\nConcepts (matched_concept):\n");
    for row in satellites.concepts() {
        prompt.push_str(&format!("- {} ({}): {}\n", row.name, row.document_type, row.definition));
    }
    prompt
}

/// The user prompt: the document's profile, the earlier turns (oldest
/// first) and the question.
pub fn build_user_prompt(question: &str, previous_turns: &[String], profile: &DocumentProfile) -> String {
    let pages = profile.n_pages.map_or_else(|| "no fixed pages".to_owned(), |n| format!("{n} pages"));
    let languages = if profile.languages.is_empty() { "unknown".to_owned() } else { profile.languages.join(", ") };
    let mut prompt = format!(
        "DOCUMENT: {}, {pages}, table of contents: {}, languages: {languages}, type: {}\n",
        format_label(profile.format),
        if profile.has_toc { "yes" } else { "no" },
        profile.doc_type.as_deref().unwrap_or("unknown"),
    );
    if !previous_turns.is_empty() {
        prompt.push_str("EARLIER TURNS (oldest first):\n");
        for (i, turn) in previous_turns.iter().enumerate() {
            prompt.push_str(&format!("{}. {}\n", i + 1, turn.trim()));
        }
    }
    prompt.push_str(&format!("QUESTION: {}\n", question.trim()));
    prompt
}

fn format_label(format: DocumentFormat) -> String {
    serde_json::to_value(format).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_else(|| "unknown".into())
}

/// What one LLM parse produced, with what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmParse {
    /// The record (`parser` is `llm/0.1`, or `rules/0.1` after a fallback).
    pub parsed: ParsedQuestion,
    /// Token usage of the call (zero when the transport failed).
    pub usage: Usage,
    /// The model's reply, when one came back.
    pub response: Option<LlmResponse>,
    /// Why the rule parser's record was used instead, if it was.
    pub fallback: Option<String>,
}

/// The LLM question parser: one structured call, then the code steps of
/// [`RuleParser`] (anchors, dictionary, cascades, dispatcher).
#[derive(Debug, Clone)]
pub struct LlmQuestionParser<L> {
    model: L,
    model_name: String,
    rules: RuleParser,
    max_output_tokens: Option<u32>,
}

impl<L: LanguageModel> QuestionParser for LlmQuestionParser<L> {
    type Error = QuestionError;

    fn parse(&self, question: &str, profile: &DocumentProfile) -> Result<ParsedQuestion, QuestionError> {
        Ok(self.parse_traced(question, &[], profile, &mut NullSink)?.parsed)
    }

    fn name(&self) -> String {
        LLM_PARSER_NAME.to_owned()
    }
}

impl<L: LanguageModel> LlmQuestionParser<L> {
    /// A parser calling `model_name` through `model`, with the built-in
    /// tables and a 1024-token output cap.
    pub fn new(model: L, model_name: impl Into<String>) -> LlmQuestionParser<L> {
        LlmQuestionParser::with_rule_parser(model, model_name, RuleParser::new())
    }

    /// [`Self::new`] with the caller's rule parser (see [`Self::with_rules`]), without
    /// building the built-in one first: a caller that keeps a rule parser for many
    /// questions hands it a copy.
    pub fn with_rule_parser(model: L, model_name: impl Into<String>, rules: RuleParser) -> LlmQuestionParser<L> {
        LlmQuestionParser { model, model_name: model_name.into(), rules, max_output_tokens: Some(1024) }
    }

    /// The same parser with another rule parser: its satellite tables feed
    /// the prompt and the schema, its defaults the cascades, and it is the
    /// fallback.
    pub fn with_rules(mut self, rules: RuleParser) -> LlmQuestionParser<L> {
        self.rules = rules;
        self
    }

    /// Sets the output token cap (`None`: the server's default).
    pub fn with_max_output_tokens(mut self, cap: Option<u32>) -> LlmQuestionParser<L> {
        self.max_output_tokens = cap;
        self
    }

    /// The rule parser used for the code steps and as fallback.
    pub fn rules(&self) -> &RuleParser {
        &self.rules
    }

    /// The transport.
    pub fn model(&self) -> &L {
        &self.model
    }

    /// The request for `question` (pure: no call).
    pub fn request(&self, question: &str, previous_turns: &[String], profile: &DocumentProfile) -> LlmRequest {
        LlmRequest {
            model: self.model_name.clone(),
            messages: vec![
                ChatMessage { role: "system".to_owned(), content: build_system_prompt(self.rules.satellites()) },
                ChatMessage { role: "user".to_owned(), content: build_user_prompt(question, previous_turns, profile) },
            ],
            schema_name: FULL_PARSE_SCHEMA_NAME.to_owned(),
            schema: full_parse_schema(self.rules.satellites()),
            temperature: 0.0,
            max_output_tokens: self.max_output_tokens,
        }
    }

    /// Parses `question` asked after `previous_turns` (oldest first).
    pub fn parse_with_history(
        &self,
        question: &str,
        previous_turns: &[String],
        profile: &DocumentProfile,
    ) -> Result<ParsedQuestion, QuestionError> {
        Ok(self.parse_traced(question, previous_turns, profile, &mut NullSink)?.parsed)
    }

    /// Parses `question` with one model call, recording the call in `trace`
    /// (`question` / `llm_parse`). Errors only on an empty or too-long
    /// question; every model problem falls back to the rule parser.
    pub fn parse_traced(
        &self,
        question: &str,
        previous_turns: &[String],
        profile: &DocumentProfile,
        trace: &mut dyn TraceSink,
    ) -> Result<LlmParse, QuestionError> {
        // The rule parse validates the question, gives the code-side fields
        // and is the fallback.
        let rules = self.rules.parse_with_history(question, previous_turns, profile)?;
        let request = self.request(question, previous_turns, profile);
        let (outcome, response) = match self.model.complete(&request) {
            Err(error) => (Err(format!("transport error: {error}")), None),
            Ok(response) => (self.read_reply(&response), Some(response)),
        };
        let usage = response.as_ref().map(|r| r.usage).unwrap_or_default();
        let (parsed, fallback) = match outcome {
            Ok(full) => (self.merge(question, previous_turns, profile, rules, full, usage), None),
            Err(reason) => {
                let mut parsed = rules;
                parsed.parsing_notes.insert(
                    0,
                    format!("{LLM_PARSER_NAME} with {} failed ({reason}): rule-based record used", self.model_name),
                );
                (parsed, Some(reason))
            }
        };
        trace.record(TraceEvent {
            brick: "question".to_owned(),
            step: "llm_parse".to_owned(),
            detail: json!({
                "parser": parsed.parser,
                "model": self.model_name,
                "usage": usage,
                "fallback": fallback,
                "raw": response.as_ref().map(|r| r.raw.clone()),
            }),
        });
        Ok(LlmParse { parsed, usage, response, fallback })
    }

    /// The reply as a [`FullParse`] whose type and shape are rows of the
    /// tables, or why not.
    fn read_reply(&self, response: &LlmResponse) -> Result<FullParse, String> {
        if response.finish_reason == "length" {
            return Err("reply cut at the output token limit".to_owned());
        }
        let full: FullParse =
            serde_json::from_str(&response.content).map_err(|e| format!("reply is not a FullParse JSON: {e}"))?;
        let satellites = self.rules.satellites();
        if satellites.answer_type(&full.answer_type).is_none() {
            return Err(format!("unknown answer type '{}'", full.answer_type));
        }
        if shape_named(satellites, &full.answer_shape).is_none() {
            return Err(format!("unknown answer shape '{}'", full.answer_shape));
        }
        Ok(full)
    }

    /// The model's record mapped into a [`ParsedQuestion`], then the code
    /// steps: anchors, dictionary, cascades, activations.
    fn merge(
        &self,
        question: &str,
        previous_turns: &[String],
        profile: &DocumentProfile,
        rules: ParsedQuestion,
        full: FullParse,
        usage: Usage,
    ) -> ParsedQuestion {
        let satellites = self.rules.satellites();
        let mut notes = vec![format!(
            "parsed by {LLM_PARSER_NAME} with {} ({} tokens in, {} out); anchors, expert dictionary, cascades \
             and activations by code",
            self.model_name, usage.input_tokens, usage.output_tokens
        )];
        let user_text = rules.corrected_question.clone();
        let llm_text = collapse(&full.corrected_question);
        let corrected = if llm_text.is_empty() { user_text.clone() } else { llm_text };
        let language = full
            .language
            .as_deref()
            .map(str::to_lowercase)
            .filter(|l| l.len() == 2 && l.chars().all(|c| c.is_ascii_lowercase()))
            .or(rules.language.clone());

        // Format constraints: the code's regexes first, the model's for the
        // other keys. Generation only.
        let mut format_constraints = rules.generation.format_constraints.clone();
        notes.extend(
            rules
                .parsing_notes
                .iter()
                .filter(|n| n.starts_with("format constraint") || n.starts_with("conflicting"))
                .cloned(),
        );
        for constraint in &full.format_constraints {
            let (key, value) = (constraint.key.trim(), constraint.value.trim());
            if !FORMAT_KEYS.contains(&key) || value.is_empty() {
                notes.push(format!("model format constraint '{key}={value}' ignored: unknown key or empty value"));
                continue;
            }
            match format_constraints.get(key) {
                Some(kept) if kept != value => {
                    notes.push(format!("model format constraint {key}={value} ignored: the question says {kept}"));
                }
                Some(_) => {}
                None => {
                    notes.push(format!("format constraint {key}={value} (model) kept for generation only"));
                    format_constraints.insert(key.to_owned(), value.to_owned());
                }
            }
        }

        // Retrieval texts: the user's question without format phrases; the
        // corrected and follow-up wordings as rewrites, also without them.
        let main_query = rules.retrieval.main_query.clone();
        let mut rewrites: Vec<String> = Vec::new();
        let push_rewrite = |text: String, rewrites: &mut Vec<String>| {
            if !text.is_empty() && text != main_query && !rewrites.contains(&text) {
                rewrites.push(text);
            }
        };
        if corrected != user_text {
            notes.push(format!("model corrected the question to '{corrected}' (a retrieval rewrite)"));
            push_rewrite(self.rules.without_formats(&corrected), &mut rewrites);
        }
        let follow_up = match (&full.follow_up_rewrite, previous_turns.is_empty()) {
            (Some(rewrite), false) if !collapse(rewrite).is_empty() => {
                let rewrite = collapse(rewrite);
                notes.push(format!("follow-up rewritten for retrieval only (model): '{rewrite}'"));
                push_rewrite(self.rules.without_formats(&rewrite), &mut rewrites);
                Some(rewrite)
            }
            (Some(_), true) => {
                notes.push("model follow-up rewrite ignored: no earlier turn".to_owned());
                None
            }
            _ => None,
        };
        if follow_up.is_none() {
            // The rule parser's own follow-up rewrite, if it made one.
            for rewrite in &rules.retrieval.rewrites {
                push_rewrite(rewrite.clone(), &mut rewrites);
            }
        }

        // Keywords: the model's, then anchors by regex over every text the
        // retrieval reads, then the expert dictionary.
        let texts: Vec<String> = std::iter::once(user_text.clone()).chain(rewrites.iter().cloned()).collect();
        let mut keywords: Vec<Keyword> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        let folded_question = normalize(&texts.join(" \n "));
        for text in texts.iter() {
            for anchor in self.rules.anchor_keywords(text) {
                if seen.insert(normalize(&anchor.text)) {
                    keywords.push(anchor);
                }
            }
        }
        let formats_folded: Vec<String> = format_constraints.values().map(|v| normalize(v)).collect();
        for (list, expansion) in [(&full.keywords, false), (&full.rewritten_keywords, true)] {
            for keyword in list {
                let text = collapse(&keyword.text);
                let folded = normalize(&text);
                if folded.is_empty() || formats_folded.contains(&folded) || !seen.insert(folded.clone()) {
                    continue;
                }
                let in_question = contains_word(&folded_question, &folded);
                let source =
                    if !expansion && in_question { KeywordSource::Direct } else { KeywordSource::LlmExpansion };
                let weight = if keyword.weight.is_finite() && keyword.weight > 0.0 && keyword.weight <= ANCHOR_WEIGHT {
                    keyword.weight
                } else {
                    DEFAULT_LLM_WEIGHT
                };
                keywords.push(Keyword { text, weight, source, is_regex: false, semantic_group: None });
            }
        }
        let dictionary = satellites.dictionary();
        let mut concepts: Vec<String> = Vec::new();
        for text in &texts {
            let expansion = dictionary.expand(&self.rules.dictionary_text(text), &keywords);
            for concept in expansion.concepts {
                if !concepts.contains(&concept) {
                    concepts.push(concept);
                }
            }
            keywords.extend(expansion.keywords);
        }
        if !concepts.is_empty() {
            notes.push(format!("expert dictionary: concept(s) {} found in the question", concepts.join(", ")));
        }
        let llm_concept = match full.matched_concept.as_deref().map(str::trim) {
            Some(name) if satellites.concept(name).is_some() => Some(name.to_owned()),
            Some(name) => {
                notes.push(format!("model concept '{name}' is not in the concepts table: ignored"));
                None
            }
            None => None,
        };
        let matched_concept = match (concepts.first(), llm_concept) {
            (Some(code), Some(model)) if *code != model => {
                notes.push(format!("model concept '{model}' differs from the dictionary's '{code}': dictionary kept"));
                Some(code.clone())
            }
            (Some(code), _) => Some(code.clone()),
            (None, Some(model)) => {
                let added = dictionary.expand_concept(&model, &keywords);
                notes.push(format!("expert dictionary: concept {model} (model) added {} keyword(s)", added.len()));
                keywords.extend(added);
                Some(model)
            }
            (None, None) => None,
        };

        // Type and shape (checked against the tables in read_reply). A value
        // kind the rules read off the wording (a number, a date, an amount)
        // is not given up for free text: code decides what code can.
        let typed_by_rules = ValueKind::for_answer_type(&rules.answer_type) != ValueKind::Text;
        let answer_type = if typed_by_rules && ValueKind::for_answer_type(&full.answer_type) == ValueKind::Text {
            notes.push(format!(
                "model typed the answer '{}' (free text); the rules' '{}' kept",
                full.answer_type, rules.answer_type
            ));
            rules.answer_type.clone()
        } else {
            full.answer_type.clone()
        };
        let answer_shape = shape_named(satellites, &full.answer_shape).unwrap_or(rules.answer_shape);
        if let Some((keyword, note)) = self.rules.type_pattern_keyword(&answer_type, matched_concept.as_deref()) {
            keywords.push(keyword);
            notes.push(note);
        }
        if (answer_type.as_str(), answer_shape) != (rules.answer_type.as_str(), rules.answer_shape) {
            notes.push(format!(
                "model: ({}, {answer_type}); rules would say ({}, {})",
                answer_shape.as_str(),
                rules.answer_shape.as_str(),
                rules.answer_type
            ));
        }
        let decomposition = checked_decomposition(full.decomposition.clone(), &mut notes);

        // Pages: the regex's, and the model's that the question writes (a
        // page restriction the question never states is dropped: it would
        // hide the answer), inside the document.
        let mut pages: Vec<u32> = full.pages_hint.iter().copied().filter(|&p| p >= 1).collect();
        let regex_pages = &rules.structural_hints.pages_hint;
        let written: Vec<u32> =
            question.split(|c: char| !c.is_ascii_digit()).filter_map(|t| t.parse::<u32>().ok()).collect();
        let unstated: Vec<String> =
            pages.iter().filter(|p| !regex_pages.contains(p) && !written.contains(p)).map(u32::to_string).collect();
        if !unstated.is_empty() {
            notes.push(format!("page(s) {} named by the model but not in the question: dropped", unstated.join(", ")));
            pages.retain(|p| regex_pages.contains(p) || written.contains(p));
        }
        let only_model: Vec<String> = pages.iter().filter(|p| !regex_pages.contains(p)).map(u32::to_string).collect();
        if !only_model.is_empty() {
            notes.push(format!("page(s) {} named by the model only", only_model.join(", ")));
        }
        pages.extend(regex_pages.iter().copied());
        pages.sort_unstable();
        pages.dedup();
        if let Some(n_pages) = profile.n_pages {
            let beyond: Vec<String> = pages.iter().filter(|&&p| p > n_pages).map(u32::to_string).collect();
            if !beyond.is_empty() {
                notes.push(format!("page(s) {} beyond the document's {n_pages} pages dropped", beyond.join(", ")));
                pages.retain(|&p| p <= n_pages);
            }
        }

        // Cascades: the wording (model) decides the context when it says
        // something; chunk strategy and model by the tables.
        let concept = matched_concept.as_deref();
        let defaults = self.rules.defaults();
        let context = match full.answer_context {
            Some(value) => Resolved { value, level: CascadeLevel::Question },
            None => resolve_answer_context(satellites, answer_shape, concept, defaults),
        };
        let chunk = if full.needs_summary {
            Resolved { value: ChunkStrategy::Combined, level: CascadeLevel::Question }
        } else {
            resolve_chunk_strategy(satellites, answer_shape, concept, defaults)
        };
        let model = resolve_model(satellites, &answer_type, concept, defaults);
        notes.push(format!(
            "defaults: answer_context={} ({}), chunk_strategy={} ({}), model={} ({})",
            context_name(context.value),
            context.level,
            chunk_name(chunk.value),
            chunk.level,
            model.value,
            model.level
        ));

        // Distinctions: the model's pairs, then the regex's not yet there.
        let mut must_distinguish: Vec<Distinction> = full
            .must_distinguish
            .iter()
            .map(|d| Distinction { wanted: collapse(&d.wanted), not_this: collapse(&d.not_this) })
            .filter(|d| !d.not_this.is_empty())
            .collect();
        for pair in &rules.generation.must_distinguish {
            if !must_distinguish.iter().any(|d| normalize(&d.not_this) == normalize(&pair.not_this)) {
                must_distinguish.push(pair.clone());
            }
        }
        let disambiguation = non_empty(full.disambiguation.as_deref()).or_else(|| rules.disambiguation.clone());

        // Clarification: the model's; the rule's bare-term check when the
        // model saw none.
        let (ambiguity_reason, suggested_clarification) =
            match (non_empty(full.ambiguity_reason.as_deref()), non_empty(full.suggested_clarification.as_deref())) {
                (None, None) if rules.suggested_clarification.is_some() && follow_up.is_none() => {
                    notes.push("model saw no ambiguity; the rule-based clarification is kept".to_owned());
                    (rules.ambiguity_reason.clone(), rules.suggested_clarification.clone())
                }
                (reason, Some(clarification)) => {
                    (Some(reason.unwrap_or_else(|| "ambiguous (model)".to_owned())), Some(clarification))
                }
                (Some(reason), None) => {
                    notes.push(format!("model ambiguity '{reason}' without a clarification question: dropped"));
                    (None, None)
                }
                (None, None) => (None, None),
            };

        let mut hints = rules.structural_hints.clone();
        hints.pages_hint = pages.clone();
        hints.toc_section_hint = non_empty(full.toc_section_hint.as_deref()).or(hints.toc_section_hint);
        hints.layout_hint = non_empty(full.layout_hint.as_deref()).or(hints.layout_hint);
        hints.answer_context = context.value;
        hints.needs_summary = full.needs_summary;
        let mut scope = rules.scope_filters.clone();
        scope.period = non_empty(full.period.as_deref()).or(scope.period);

        let anchor_keywords: Vec<String> =
            keywords.iter().filter(|k| k.source == KeywordSource::Anchor).map(|k| k.text.clone()).collect();
        let parsed = ParsedQuestion {
            original_question: question.to_owned(),
            corrected_question: corrected,
            language,
            keywords,
            answer_shape,
            answer_type,
            matched_concept,
            decomposition,
            scope_filters: scope.clone(),
            structural_hints: hints.clone(),
            chunk_strategy: chunk.value,
            suggested_model: model.value,
            disambiguation: disambiguation.clone(),
            distractors: must_distinguish.iter().map(|d| d.not_this.clone()).collect(),
            activations: rules.activations.clone(),
            parsing_notes: Vec::new(),
            suggested_clarification,
            ambiguity_reason,
            parser: LLM_PARSER_NAME.to_owned(),
            retrieval: docintel_schema::RetrievalQuery {
                main_query,
                rewrites,
                anchor_keywords,
                section_hint: hints.toc_section_hint.clone(),
                pages,
                scope,
                follow_up_keywords: Vec::new(),
            },
            generation: docintel_schema::GenerationBrief {
                original_question: question.to_owned(),
                format_constraints,
                disambiguation,
                must_distinguish,
                // What is asked and what restricts it are read in code,
                // whichever parser filled the rest.
                answer_focus: rules.generation.answer_focus.clone(),
                constraints: rules.generation.constraints.clone(),
                parts: rules.generation.parts.clone(),
                coordination: rules.generation.coordination.clone(),
                computed: rules.generation.computed,
            },
        };
        crate::finish_dispatch(parsed, notes, profile)
    }
}

/// The shape of the tables named `name`.
fn shape_named(satellites: &Satellites, name: &str) -> Option<AnswerShape> {
    satellites.answer_shapes().iter().map(|row| row.shape).find(|shape| shape.as_str() == name.trim())
}

/// The model's decomposition made consistent: sub-questions only where the
/// pattern has them, at least two for an independent split.
fn checked_decomposition(mut decomposition: Decomposition, notes: &mut Vec<String>) -> Decomposition {
    decomposition.sub_questions =
        decomposition.sub_questions.iter().map(|q| collapse(q)).filter(|q| !q.is_empty()).collect();
    match decomposition.pattern {
        DecompositionPattern::Single | DecompositionPattern::Unified if !decomposition.sub_questions.is_empty() => {
            notes.push("model sub-questions dropped: the pattern has none".to_owned());
            decomposition.sub_questions.clear();
        }
        DecompositionPattern::Independent | DecompositionPattern::Sequential
            if decomposition.sub_questions.len() < 2 =>
        {
            notes.push("model split into fewer than two sub-questions: kept as a single question".to_owned());
            decomposition = Decomposition { pattern: DecompositionPattern::Single, sub_questions: Vec::new() };
        }
        _ => {}
    }
    decomposition
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn non_empty(text: Option<&str>) -> Option<String> {
    text.map(collapse).filter(|t| !t.is_empty())
}

/// Whether the folded `needle` occurs in the folded `haystack` on word
/// boundaries.
fn contains_word(haystack: &str, needle: &str) -> bool {
    let is_word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    haystack.match_indices(needle).any(|(at, _)| {
        !is_word(haystack[..at].chars().next_back()) && !is_word(haystack[at + needle.len()..].chars().next())
    })
}
