//! `_meta`: what every brick decided for one question, and what its model
//! calls cost (tokens times the models table's prices, summed over question
//! parse, TOC routing and generation, each also apart in `_meta.llm_usage`).

use std::collections::BTreeMap;

use docintel_question::Satellites;
use docintel_schema::{
    Answer, CitationProblem, CitedSource, FollowUp, Generation, LineSource, Meta, ParsedDocument, ParsedQuestion,
    Retrieval, Severity, SkippedStep, StepUsage, Usage, VisionMeta,
};

/// The model calls of one step and the tokens they spent.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ModelUse {
    pub(crate) usage: Usage,
    pub(crate) calls: u32,
}

impl ModelUse {
    /// Adds `calls` calls that spent `usage`.
    pub(crate) fn add(&mut self, usage: &Usage, calls: u32) {
        self.usage.input_tokens += usage.input_tokens;
        self.usage.output_tokens += usage.output_tokens;
        self.usage.cached_tokens += usage.cached_tokens;
        self.calls += calls;
    }
}

/// The question's model use, priced.
pub(crate) struct LlmUsage {
    /// Per step (`question`, `routing`, `generation`); empty without a model.
    steps: BTreeMap<String, StepUsage>,
    tokens_in: u64,
    tokens_out: u64,
    /// Generation's model calls (`_meta.iterations`).
    generation_calls: u32,
}

/// Prices the model use of `[question, routing, generation]` with the models
/// table's row for `model` (the one asked for: servers may answer with a
/// dated variant of the name). A model not in the table costs 0, reported in
/// `skipped`.
pub(crate) fn llm_usage(
    model: Option<&str>,
    satellites: &Satellites,
    [question, routing, generation]: [ModelUse; 3],
    skipped: &mut Vec<SkippedStep>,
) -> LlmUsage {
    let price = model.and_then(|model| satellites.model(model));
    if let (Some(model), None) = (model, price) {
        skipped.push(SkippedStep {
            step: "cost".into(),
            reason: format!("model {model} is not in the models table: cost unknown (reported as 0)"),
        });
    }
    let cost_of = |usage: &Usage| {
        price.map_or(0.0, |row| {
            (usage.input_tokens as f64 * row.price_in_per_1m + usage.output_tokens as f64 * row.price_out_per_1m)
                / 1_000_000.0
        })
    };
    let mut steps = BTreeMap::new();
    if model.is_some() {
        for (step, used) in [("question", &question), ("routing", &routing), ("generation", &generation)] {
            steps.insert(
                step.to_owned(),
                StepUsage {
                    calls: used.calls,
                    input_tokens: used.usage.input_tokens,
                    output_tokens: used.usage.output_tokens,
                    cached_tokens: used.usage.cached_tokens,
                    cost_usd: cost_of(&used.usage),
                },
            );
        }
    }
    // Every model call of the question counts: parsing, routing, generation.
    let all = [question, routing, generation];
    LlmUsage {
        steps,
        tokens_in: all.iter().map(|u| u.usage.input_tokens).sum(),
        tokens_out: all.iter().map(|u| u.usage.output_tokens).sum(),
        generation_calls: generation.calls,
    }
}

/// Adds the document's vision step to `meta`: `_meta.vision`, and its calls as the
/// `vision` step of `_meta.llm_usage`, priced like the others and counted in the totals.
pub(crate) fn add_vision(
    meta: &mut Meta,
    model: Option<&str>,
    satellites: &Satellites,
    used: ModelUse,
    vision: VisionMeta,
) {
    let price = model.and_then(|model| satellites.model(model));
    let cost_usd = price.map_or(0.0, |row| {
        (used.usage.input_tokens as f64 * row.price_in_per_1m + used.usage.output_tokens as f64 * row.price_out_per_1m)
            / 1_000_000.0
    });
    meta.llm_usage.insert(
        "vision".to_owned(),
        StepUsage {
            calls: used.calls,
            input_tokens: used.usage.input_tokens,
            output_tokens: used.usage.output_tokens,
            cached_tokens: used.usage.cached_tokens,
            cost_usd,
        },
    );
    meta.tokens_in += used.usage.input_tokens;
    meta.tokens_out += used.usage.output_tokens;
    meta.cost_usd += cost_usd;
    meta.vision = Some(vision);
}

/// The cited line ranges whose lines are not the text layer's (a vision description,
/// OCR): one entry per span and source, in answer order.
fn cited_sources(answer: &Answer, document: &ParsedDocument) -> Vec<CitedSource> {
    let mut out = Vec::new();
    for (item, entry) in answer.items.iter().enumerate() {
        for span in &entry.spans {
            let mut sources: Vec<LineSource> = (span.line_start..=span.line_end.max(span.line_start))
                .map(|id| document.line_source(id))
                .filter(|s| *s != LineSource::TextLayer)
                .collect();
            sources.dedup();
            for source in sources {
                out.push(CitedSource {
                    item,
                    page: span.page,
                    line_start: span.line_start,
                    line_end: span.line_end,
                    source,
                });
            }
        }
    }
    out
}

/// Everything `_meta` is built from, at the end of a question's rounds.
pub(crate) struct Outcome<'a> {
    pub(crate) parsed: &'a ParsedQuestion,
    /// The document as the bricks saw it (invisible lines withheld).
    pub(crate) document: &'a ParsedDocument,
    /// The last round's retrieval and generation.
    pub(crate) retrieval: &'a Retrieval,
    pub(crate) generation: &'a Generation,
    pub(crate) problems: Vec<CitationProblem>,
    pub(crate) skipped: Vec<SkippedStep>,
    pub(crate) usage: LlmUsage,
    /// Notes: invisible lines withheld, feedback rounds, instruction-like
    /// lines (all three retrieval notes, around the retriever's own), and the
    /// facade's generation notes (before the generator's own).
    pub(crate) notes: [Vec<String>; 4],
    pub(crate) implementations: BTreeMap<String, String>,
    pub(crate) timings: BTreeMap<String, u64>,
    /// The earlier turns the question was asked after (`AskOptions::previous_turns`).
    pub(crate) previous_turns: &'a [String],
}

/// The `_meta` object of one answer (`parsed_question_cached`, `trace_dir`
/// and `corpus` are the caller's to fill).
pub(crate) fn build(outcome: Outcome<'_>) -> Meta {
    let Outcome {
        parsed,
        document,
        retrieval,
        generation,
        problems,
        skipped,
        usage,
        notes,
        implementations,
        timings,
        previous_turns,
    } = outcome;
    let [invisible_note, feedback_notes, instruction_note, generation_notes] = notes;
    let mut prompt_versions = BTreeMap::new();
    prompt_versions.insert("question_parsing".to_owned(), parsed.parser.clone());
    prompt_versions.insert("generation".to_owned(), generation.template_version.clone());
    Meta {
        docintel_version: env!("CARGO_PKG_VERSION").to_owned(),
        decomposition: parsed.decomposition.pattern,
        activations: parsed.activations.clone(),
        chunk_strategy: parsed.chunk_strategy,
        suggested_model: parsed.suggested_model.clone(),
        matched_concept: parsed.matched_concept.clone(),
        ambiguity_reason: parsed.ambiguity_reason.clone(),
        suggested_clarification: parsed.suggested_clarification.clone(),
        retrieval_rewrites: parsed.retrieval.rewrites.clone(),
        follow_up: (!previous_turns.is_empty()).then(|| FollowUp {
            previous_turns: previous_turns.to_vec(),
            rewrite: docintel_question::follow_up_rewrite(&parsed.original_question, previous_turns),
        }),
        parsed_question_cached: false,
        skipped,
        parsing_notes: parsed.parsing_notes.clone(),
        retrieval_notes: invisible_note
            .into_iter()
            .chain(retrieval.notes.iter().cloned())
            .chain(feedback_notes)
            .chain(instruction_note)
            .collect(),
        generation_notes: generation_notes.into_iter().chain(generation.notes.iter().cloned()).collect(),
        iterations: usage.generation_calls,
        retrieval_methods_used: retrieval.methods_used.clone(),
        implementations,
        model: generation.model.clone(),
        prompt_versions,
        fragments_applied: generation.fragments_applied.clone(),
        chunk_strategy_executed: generation.strategy_executed.clone(),
        exit: generation.exit.clone(),
        passages_shown: generation
            .passages_shown
            .iter()
            .map(|p| format!("p{} l{}-{}", p.page, p.line_start, p.line_end))
            .collect(),
        tokens_in: usage.tokens_in,
        tokens_out: usage.tokens_out,
        cost_usd: usage.steps.values().map(|u| u.cost_usd).sum::<f64>(),
        llm_usage: usage.steps,
        timings_ms: timings,
        document_diagnostics: document
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .map(|d| match d.page {
                Some(page) => format!("p.{page}: {}", d.message),
                None => d.message.clone(),
            })
            .collect(),
        citation_value_checks: docintel_generate::citation_value_checks(&generation.answer),
        citation_problems: problems,
        trace_dir: None,
        corpus: None,
        vision: None,
        cited_sources: cited_sources(&generation.answer, document),
    }
}
