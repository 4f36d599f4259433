//! One question's path through the bricks, as named steps:
//!
//! ```text
//! parse_question → answer: withhold_invisible → apply_overrides → plan_steps
//!   → build_generator → rounds of { retrieve → generate → validate → feedback }
//!   → flag_instruction_lines → meta::build
//! ```
//!
//! Retrieval, generation and validation run in rounds: with
//! `iterate_on_feedback`, an insufficient answer whose model named new keywords
//! sends retrieval out again with them (`feedback::retry_hint`).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use docintel_generate::{ExtractiveGenerator, LlmGenerator};
use docintel_llm::OpenAiTransport;
use docintel_question::LlmQuestionParser;
use docintel_retrieve::{KeywordRetriever, LlmRouter, RetrieveConfig, RoutingConfig};
use docintel_schema::trace::{
    Event, FeedbackRetry, FewShot, FewShotPick, InstructionLines, LineNote, LlmRoute, PassageRef, RoundPassages,
    Validation,
};
use docintel_schema::{
    DocumentProfile, Generation, Generator, ParsedDocument, ParsedQuestion, Retrieval, Retriever, SkippedStep,
    TraceEvent, TraceSink,
};
use docintel_trace::TraceRecorder;

use crate::bricks::Bricks;
use crate::error::brick_error;
use crate::meta::{self, ModelUse, Outcome};
use crate::{AskOptions, PipelineError, QaRun};

/// A parsed question with what parsing it cost: the model's trace events
/// (`question` / `llm_parse`, raw reply included) and token usage, both
/// empty for the rule parser.
pub(crate) struct QuestionRun {
    pub(crate) parsed: ParsedQuestion,
    events: Vec<TraceEvent>,
    usage: ModelUse,
    /// Time the parse took.
    ms: u64,
}

impl QuestionRun {
    /// A question parsed by the rules (or read back from a cache): no model call.
    pub(crate) fn rules(parsed: ParsedQuestion) -> QuestionRun {
        QuestionRun { parsed, events: Vec::new(), usage: ModelUse::default(), ms: 0 }
    }
}

/// Parses `question` with the model when one is configured and the options
/// allow it for the question brick, else with the rules; after
/// `options.previous_turns`, the rule parser's follow-up step rewrites it for
/// retrieval (the model is asked without the turns: none reaches a prompt).
pub(crate) fn parse_question(
    bricks: Bricks<'_>,
    question: &str,
    profile: &DocumentProfile,
    options: &AskOptions,
) -> Result<QuestionRun, PipelineError> {
    match bricks.llm {
        Some(llm) if options.llm_question => {
            let transport = llm.transport(options.llm_deadline);
            let parser = LlmQuestionParser::with_rule_parser(transport, &llm.model, bricks.parser.clone());
            let mut events: Vec<TraceEvent> = Vec::new();
            let clock = Instant::now();
            let run = parser
                .parse_traced(question, &[], profile, &mut events)
                .map_err(|e| brick_error("question")(Box::new(e)))?;
            let parsed = bricks
                .parser
                .resolve_follow_up(run.parsed, &options.previous_turns, profile)
                .map_err(|e| brick_error("question")(Box::new(e)))?;
            let calls = events.iter().filter(|e| e.step == "llm_parse").count() as u32;
            let ms = clock.elapsed().as_millis() as u64;
            Ok(QuestionRun { parsed, events, usage: ModelUse { usage: run.usage, calls }, ms })
        }
        _ => {
            let clock = Instant::now();
            let parsed = bricks
                .parser
                .parse_with_history(question, &options.previous_turns, profile)
                .map_err(|e| brick_error("question")(Box::new(e)))?;
            Ok(QuestionRun { ms: clock.elapsed().as_millis() as u64, ..QuestionRun::rules(parsed) })
        }
    }
}

/// Runs retrieval, generation and validation for a parsed question, applying
/// the caller's overrides on top of the dispatcher's decisions.
pub(crate) fn answer(
    bricks: Bricks<'_>,
    document: &ParsedDocument,
    question_run: QuestionRun,
    options: &AskOptions,
) -> Result<QaRun, PipelineError> {
    let QuestionRun { mut parsed, events, usage: question_usage, ms: question_ms } = question_run;
    let mut trace = TraceRecorder::new();
    for event in events {
        trace.record(event);
    }
    let (document, invisible_note) = withhold_invisible(document, &mut trace);
    let document: &ParsedDocument = &document;
    let mut implementations = BTreeMap::new();
    implementations.insert("question".to_owned(), parsed.parser.clone());
    let question = parsed.original_question.clone();

    let clock = Instant::now();
    apply_overrides(&mut parsed, document, options)?;
    // The parse (a model call, with a model) and the caller's overrides.
    let mut timings = BTreeMap::new();
    timings.insert("question".to_owned(), question_ms + clock.elapsed().as_millis() as u64);
    trace.record(Event::QuestionParsed(Box::new(parsed.clone())).into());
    let (mut skipped, embed_dir) = plan_steps(&mut parsed, options);
    let (llm_generator, generation_notes) = build_generator(bricks, &parsed, options, &mut trace)?;

    let retriever = shared_retriever(RetrieveConfig {
        top_k: options.top_k,
        window: options.window,
        reserve: options.top_k * 2,
        read_pages_whole: true,
    });
    implementations.insert("retrieve".to_owned(), retriever.name());
    let mut rounds = Rounds {
        bricks,
        options,
        document,
        retriever,
        embed_dir,
        generator: llm_generator.as_ref(),
        trace: &mut trace,
        implementations: &mut implementations,
        timings: &mut timings,
        routing: ModelUse::default(),
        generation: ModelUse::default(),
        feedback_notes: Vec::new(),
    };
    let (retrieval, generation, problems) = rounds.run(&mut parsed)?;
    let Rounds { routing, generation: generation_use, feedback_notes, .. } = rounds;
    let instruction_note = flag_instruction_lines(&generation, document, &mut trace);

    let priced_model = bricks.llm.map(|llm| llm.model.as_str());
    let usage = meta::llm_usage(
        priced_model,
        bricks.parser.satellites(),
        [question_usage, routing, generation_use],
        &mut skipped,
    );
    let meta = meta::build(Outcome {
        parsed: &parsed,
        document,
        retrieval: &retrieval,
        generation: &generation,
        problems: problems.clone(),
        skipped,
        usage,
        notes: [invisible_note, feedback_notes, instruction_note, generation_notes],
        implementations,
        timings,
        previous_turns: &options.previous_turns,
    });
    let output = docintel_schema::AskOutput {
        question,
        document: document.source.clone(),
        citations_verified: problems.is_empty(),
        answer: generation.answer,
        custom_answer: generation.answer_json,
        meta,
    };
    Ok(QaRun { output, parsed_question: parsed, events: trace.events().to_vec(), passages: retrieval.passages })
}

/// Lines that do not show on the page (white on white, tiny, covered) are withheld from
/// retrieval, generation and citation checks: their text is emptied, their ids kept. The
/// document as the other steps see it, and the note saying what was withheld.
fn withhold_invisible<'d>(
    document: &'d ParsedDocument,
    trace: &mut TraceRecorder,
) -> (Cow<'d, ParsedDocument>, Vec<String>) {
    let invisible = document.invisible_lines();
    let visible_document = document.answerable();
    let invisible_note = (!invisible.is_empty()).then(|| {
        format!(
            "{} line(s) that do not show on the page withheld from retrieval and generation: {}",
            invisible.len(),
            invisible.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        )
    });
    if let Some(note) = &invisible_note {
        trace.record(Event::InvisibleLines(LineNote { line_ids: invisible.clone(), note: note.clone() }).into());
    }
    (visible_document, invisible_note.into_iter().collect())
}

/// The caller's overrides (pages, chunk strategy, TOC navigation) on top of
/// the dispatcher's decisions, each noted. Pages the document does not have
/// are a mistake, never a silent fallback.
fn apply_overrides(
    parsed: &mut ParsedQuestion,
    document: &ParsedDocument,
    options: &AskOptions,
) -> Result<(), PipelineError> {
    if let Some(pages) = &options.pages {
        if let Some(n) = document.profile.n_pages {
            let outside: Vec<u32> = pages.iter().copied().filter(|&p| p == 0 || p > n).collect();
            if !outside.is_empty() && outside.len() == pages.len() {
                return Err(PipelineError::Config(format!(
                    "--pages {}: {} has {n} page(s)",
                    outside.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
                    document.source
                )));
            }
            if !outside.is_empty() {
                parsed
                    .parsing_notes
                    .push(format!("pages {outside:?} are not in the document ({n} pages): ignored, the others kept"));
            }
        }
        parsed.retrieval.pages = pages.clone();
        parsed.structural_hints.pages_hint = pages.clone();
        parsed.parsing_notes.push(format!("pages {pages:?} set by the caller"));
    }
    if let Some(strategy) = options.strategy
        && strategy != parsed.chunk_strategy
    {
        parsed.parsing_notes.push(format!(
            "chunk strategy {} set by the caller (the cascade chose {})",
            format!("{strategy:?}").to_lowercase(),
            format!("{:?}", parsed.chunk_strategy).to_lowercase()
        ));
        parsed.chunk_strategy = strategy;
    }
    if !options.use_toc && parsed.activations.use_toc_navigation {
        parsed.activations.use_toc_navigation = false;
        parsed.parsing_notes.push("TOC navigation turned off by the caller".to_owned());
    }
    Ok(())
}

/// Which optional steps run: steps the dispatcher or caller turned off, and
/// steps this build cannot run, are reported, never silently dropped; the
/// caller's embedding folder and feedback rounds turn those steps on. Returns
/// the skipped steps and the embedding model folder when embedding retrieval runs.
fn plan_steps<'o>(parsed: &mut ParsedQuestion, options: &'o AskOptions) -> (Vec<SkippedStep>, Option<&'o Path>) {
    let mut skipped = Vec::new();
    if !parsed.activations.use_toc_navigation {
        skipped.push(SkippedStep {
            step: "toc_navigation".into(),
            reason: "turned off by the dispatcher or caller".into(),
        });
    }
    if let Some(dir) = &options.embeddings
        && !parsed.activations.use_embeddings
    {
        parsed.activations.use_embeddings = true;
        parsed.parsing_notes.push(format!("embedding retrieval turned on by the caller (model {})", dir.display()));
    }
    let embed_dir = options.embeddings.as_deref().filter(|_| parsed.activations.use_embeddings);
    if parsed.activations.use_embeddings && (embed_dir.is_none() || !cfg!(feature = "embeddings")) {
        let reason = if cfg!(feature = "embeddings") {
            "no embedding model directory given (--embeddings DIR or DOCINTEL_EMBED_MODEL_DIR)"
        } else {
            "this build has no embedding model (build docintel with --features embeddings)"
        };
        skipped.push(SkippedStep { step: "embeddings".into(), reason: reason.into() });
    }
    if let Some(rounds) = options.iterate {
        parsed.activations.iterate_on_feedback = rounds > 1;
        parsed.activations.max_iterations = rounds.max(1);
        parsed.parsing_notes.push(format!("feedback rounds set to {} by the caller", rounds.max(1)));
    }
    (skipped, embed_dir)
}

/// The model generator, built once for every round (`None`: the extractive
/// one), with its context window (the caller's, else the server's word, else
/// the models table), the caller's answer schema and few-shot examples; and
/// the generation notes that says which window.
fn build_generator(
    bricks: Bricks<'_>,
    parsed: &ParsedQuestion,
    options: &AskOptions,
    trace: &mut TraceRecorder,
) -> Result<(Option<LlmGenerator<OpenAiTransport>>, Vec<String>), PipelineError> {
    let Some(llm) = bricks.llm else {
        if let Some(path) = &options.schema {
            return Err(PipelineError::Schema(format!(
                "{}: a custom answer schema needs a model (set DOCINTEL_LLM_BASE_URL or OPENAI_API_KEY)",
                path.display()
            )));
        }
        return Ok((None, Vec::new()));
    };
    let model = &llm.model;
    let transport = llm.transport(options.llm_deadline);
    let window = match options.llm_context {
        Some(tokens) => Some((tokens, "set by the caller (DOCINTEL_LLM_CONTEXT or --llm-context)".to_owned())),
        None => transport.context_window(model).or_else(|| {
            bricks.parser.satellites().model(model).map(|row| (row.context_window, "the models table".to_owned()))
        }),
    };
    let note = match &window {
        Some((tokens, source)) => format!("context window {tokens} tokens ({source})"),
        None => "context window unknown (not set, not reported by the server, model not in the models table):                          prompts are split only if the server refuses one as too long"
            .to_owned(),
    };
    let dispatch =
        docintel_generate::DispatchOptions { context_window: window.map(|(tokens, _)| tokens), ..Default::default() };
    let mut generator = LlmGenerator::new(transport, model.clone()).with_options(dispatch);
    if let Some(path) = &options.schema {
        let custom = docintel_generate::CustomSchema::from_file(path)
            .map_err(|e| PipelineError::Schema(format!("{}: {e}", path.display())))?;
        generator = generator.with_custom_schema(custom);
    }
    if let Some(path) = &options.examples {
        let bank = docintel_generate::ExampleBank::load(path)
            .map_err(|e| PipelineError::Config(format!("example bank {}: {e}", path.display())))?;
        // Tags: the answer type and, when matched, the concept.
        let tags: Vec<String> =
            std::iter::once(parsed.answer_type.clone()).chain(parsed.matched_concept.clone()).collect();
        let picked = bank.select(&parsed.original_question, &tags, &Default::default());
        let picks = picked
            .iter()
            .map(|p| FewShotPick {
                index: p.index,
                score: p.score,
                question: p.example.question.clone(),
                answer_json: p.example.answer_json.clone(),
            })
            .collect();
        trace.record(
            Event::FewShot(FewShot { bank: path.display().to_string(), bank_size: bank.len(), tags, picked: picks })
                .into(),
        );
        generator = generator.with_examples(picked.into_iter().map(|p| p.example).collect());
    }
    Ok((Some(generator), vec![note]))
}

/// A keyword retriever whose cache of normalised lines lives as long as the
/// process: the second question about a document does not normalise its
/// lines again (14,484 lines of NIST SP 800-53 took most of a question's
/// retrieval time).
fn shared_retriever(config: RetrieveConfig) -> KeywordRetriever {
    static BASE: std::sync::OnceLock<KeywordRetriever> = std::sync::OnceLock::new();
    BASE.get_or_init(|| KeywordRetriever::new(config)).clone().with_config(config)
}

/// A keyword a feedback round adds to the question (the model discovered
/// it); the replay adds the same one when it meets the round in the trace.
pub(crate) fn feedback_keyword(text: &str) -> docintel_schema::Keyword {
    docintel_schema::Keyword {
        text: text.to_owned(),
        weight: 1.0,
        source: docintel_schema::KeywordSource::LlmExpansion,
        is_regex: false,
        semantic_group: None,
    }
}

/// The rounds of one question and what they add up: retrieval, generation,
/// validation, then feedback or stop.
struct Rounds<'a, 'o> {
    bricks: Bricks<'a>,
    options: &'o AskOptions,
    document: &'a ParsedDocument,
    retriever: KeywordRetriever,
    #[cfg_attr(not(feature = "embeddings"), allow(dead_code))]
    embed_dir: Option<&'o Path>,
    generator: Option<&'a LlmGenerator<OpenAiTransport>>,
    trace: &'a mut TraceRecorder,
    implementations: &'a mut BTreeMap<String, String>,
    timings: &'a mut BTreeMap<String, u64>,
    /// Model calls of TOC routing, every round.
    routing: ModelUse,
    /// Model calls of generation, every round.
    generation: ModelUse,
    feedback_notes: Vec<String>,
}

impl Rounds<'_, '_> {
    /// Runs rounds until an answer needs no other: the last round's retrieval,
    /// generation and citation problems.
    fn run(
        &mut self,
        parsed: &mut ParsedQuestion,
    ) -> Result<(Retrieval, Generation, Vec<docintel_schema::CitationProblem>), PipelineError> {
        let mut round = 1u32;
        loop {
            let clock = Instant::now();
            let retrieval = self.retrieve(parsed, round)?;
            *self.timings.entry("retrieve".to_owned()).or_default() += clock.elapsed().as_millis() as u64;
            let generation = self.generate(parsed, &retrieval, round)?;
            let problems = self.validate(&generation, round);
            if !self.feedback(parsed, &generation, &problems, round) {
                return Ok((retrieval, generation, problems));
            }
            round += 1;
        }
    }

    /// The retrieval brick (with a model, TOC levels picked by it), then
    /// embedding retrieval beside the keyword search, fused by rank.
    fn retrieve(&mut self, parsed: &ParsedQuestion, round: u32) -> Result<Retrieval, PipelineError> {
        let retrieval = match self.bricks.llm {
            Some(llm) if self.options.llm_router && parsed.activations.use_toc_navigation => {
                let router =
                    LlmRouter::new(llm.transport(self.options.llm_deadline), &llm.model, RoutingConfig::STANDARD);
                self.implementations.insert("route".to_owned(), docintel_schema::Router::name(&router));
                let retrieval = self
                    .retriever
                    .retrieve_with_router(&router, parsed, self.document, self.trace)
                    .map_err(|e| brick_error("retrieve")(Box::new(e)))?;
                for (i, response) in router.responses().into_iter().enumerate() {
                    self.routing.add(&response.usage, 1);
                    self.trace.record(
                        Event::LlmRoute(LlmRoute {
                            call: i + 1,
                            round,
                            model: llm.model.clone(),
                            usage: response.usage,
                            raw: response.raw,
                        })
                        .into(),
                    );
                }
                retrieval
            }
            _ => self
                .retriever
                .retrieve(parsed, self.document, self.trace)
                .map_err(|e| brick_error("retrieve")(Box::new(e)))?,
        };
        #[cfg(feature = "embeddings")]
        let retrieval = match self.embed_dir {
            Some(dir) => {
                self.implementations.insert("embed".to_owned(), "minilm-l6-v2/rrf".to_owned());
                let store = self.options.out_dir.as_deref().map(|out| crate::hybrid::store_dir(out, self.document));
                crate::hybrid::fuse(
                    dir,
                    parsed,
                    self.document,
                    &retrieval,
                    self.options.top_k,
                    store.as_deref(),
                    self.trace,
                )
                .map_err(PipelineError::Config)?
            }
            None => retrieval,
        };
        Ok(retrieval)
    }

    /// The generation brick. The passages it reads are recorded whole (scores
    /// and anchors included: the reader weighs them), so replay reads exactly
    /// what it read.
    fn generate(
        &mut self,
        parsed: &ParsedQuestion,
        retrieval: &Retrieval,
        round: u32,
    ) -> Result<Generation, PipelineError> {
        self.trace.record(Event::Passages(RoundPassages { round, passages: retrieval.passages.clone() }).into());
        let clock = Instant::now();
        let generation = match self.generator {
            None => self.run_generator(&ExtractiveGenerator::new(), parsed, retrieval)?,
            Some(generator) => self.run_generator(generator, parsed, retrieval)?,
        };
        *self.timings.entry("generate".to_owned()).or_default() += clock.elapsed().as_millis() as u64;
        self.generation.add(&generation.usage, generation.iterations);
        Ok(generation)
    }

    fn run_generator<G: Generator>(
        &mut self,
        generator: &G,
        parsed: &ParsedQuestion,
        retrieval: &Retrieval,
    ) -> Result<Generation, PipelineError> {
        self.implementations.insert("generate".to_owned(), generator.name());
        generator
            .generate(parsed, self.document, &retrieval.passages, self.trace)
            .map_err(|e| brick_error("generate")(Box::new(e)))
    }

    /// Validation: every span inside a passage shown, every quote in its lines.
    fn validate(&mut self, generation: &Generation, round: u32) -> Vec<docintel_schema::CitationProblem> {
        let problems =
            docintel_generate::verify_citations(&generation.answer, self.document, &generation.passages_shown);
        self.trace.record(
            Event::Validate(Validation {
                round,
                citations_verified: problems.is_empty(),
                problems: problems.clone(),
                passages_shown: generation.passages_shown.iter().map(PassageRef::from).collect(),
            })
            .into(),
        );
        problems
    }

    /// With `iterate_on_feedback`, whether another round runs: an insufficient
    /// answer whose model named new keywords adds them to the question.
    fn feedback(
        &mut self,
        parsed: &mut ParsedQuestion,
        generation: &Generation,
        problems: &[docintel_schema::CitationProblem],
        round: u32,
    ) -> bool {
        if !parsed.activations.iterate_on_feedback {
            return false;
        }
        let known: Vec<String> = parsed.keywords.iter().map(|k| k.text.clone()).collect();
        let hint = docintel_generate::feedback::retry_hint(
            &generation.answer,
            problems,
            round,
            parsed.activations.max_iterations,
            &known,
        );
        let Some(hint) = hint else { return false };
        self.trace.record(
            Event::FeedbackRetry(FeedbackRetry { round, reason: hint.reason.clone(), keywords: hint.keywords.clone() })
                .into(),
        );
        self.feedback_notes.push(format!("feedback round {}: {}", round + 1, hint.reason));
        parsed.keywords.extend(hint.keywords.iter().map(|k| feedback_keyword(k)));
        true
    }
}

/// Lines shown to the generator that read like instructions to a model are flagged (the
/// generator must treat them as data; a citation of one is suspect): the note, if any.
fn flag_instruction_lines(
    generation: &Generation,
    document: &ParsedDocument,
    trace: &mut TraceRecorder,
) -> Vec<String> {
    let mut instruction_lines: Vec<u32> = generation
        .passages_shown
        .iter()
        .flat_map(|p| document.line_range(p.line_start, p.line_end))
        .filter(|l| docintel_schema::text::looks_like_instruction(&l.text))
        .map(|l| l.line_id)
        .collect();
    instruction_lines.sort_unstable();
    instruction_lines.dedup();
    if instruction_lines.is_empty() {
        return Vec::new();
    }
    let cited: Vec<u32> = generation
        .answer
        .items
        .iter()
        .flat_map(|i| &i.spans)
        .flat_map(|s| s.line_start..=s.line_end)
        .filter(|id| instruction_lines.contains(id))
        .collect();
    let note = format!(
        "passages shown hold {} line(s) that read like instructions to a model (lines {}){}",
        instruction_lines.len(),
        instruction_lines.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
        if cited.is_empty() { String::new() } else { "; the answer cites one".to_owned() }
    );
    trace.record(
        Event::InstructionLikeText(InstructionLines { line_ids: instruction_lines, cited, note: note.clone() }).into(),
    );
    vec![note]
}
