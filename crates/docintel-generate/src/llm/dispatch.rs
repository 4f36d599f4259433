//! The chunk strategy run: [`Generator::generate`] for [`LlmGenerator`]
//! (combined or sequential batches, budgets, the headroom switch, a
//! refused batch split in two, a schema correction asked once).

use std::collections::VecDeque;
use std::time::Instant;

use docintel_schema::registry;
use docintel_schema::trace::{Event, LlmCall, LlmRequestSent, PassageRef};
use docintel_schema::{
    ChatMessage, ChunkStrategy, Generation, GenerationCall, Generator, LanguageModel, LlmResponse, ParsedDocument,
    ParsedQuestion, Passage, TraceEvent, TraceSink, Usage,
};
use serde_json::json;

use super::replies::{choose, correction_text, failure, gather, gathers, parse_custom_reply, parse_reply};
use super::{
    LLM_GENERATOR_VERSION, LlmGenerateError, LlmGenerator, Reply, Target, estimate_input_tokens, sequential_batches,
    split_batch,
};
use crate::prompt::{self, TEMPLATE_VERSION};

impl<L: LanguageModel> Generator for LlmGenerator<L> {
    type Error = LlmGenerateError;

    fn generate(
        &self,
        question: &ParsedQuestion,
        document: &ParsedDocument,
        passages: &[Passage],
        trace: &mut dyn TraceSink,
    ) -> Result<Generation, LlmGenerateError> {
        if let Some(bad) = crate::first_passage_out_of_document(document, passages) {
            return Err(LlmGenerateError::PassageOutOfDocument {
                index: bad.index,
                line_start: bad.line_start,
                line_end: bad.line_end,
                n_lines: bad.n_lines,
            });
        }
        let target =
            match &self.custom {
                Some(custom) => Target::Custom(custom),
                None => Target::Registry(registry::lookup(question.answer_shape, &question.answer_type).ok_or_else(
                    || LlmGenerateError::NoSchema {
                        shape: question.answer_shape,
                        answer_type: question.answer_type.clone(),
                    },
                )?),
            };
        let schema = target.schema();
        let (system_prompt, fragments) = prompt::build_system_prompt_with_examples(question, &self.examples);
        // What a warning may not merely repeat: the rules and the passages' header.
        let system_prompt = format!("{system_prompt}\n{}", prompt::PASSAGES_INTRO);
        let options = &self.options;
        let mut notes: Vec<String> = Vec::new();
        let estimate_for = |batch: &[Passage]| {
            let (request, _) = self.request_for(question, target.name(), schema.clone(), document, batch);
            estimate_input_tokens(&request, options.chars_per_token)
        };
        // With a known window, a passage whose prompt alone would not fit is
        // read in consecutive pieces that do.
        let mut limit = self.input_limit(options.context_window);
        let mut cut_passages = false;
        let fitted: Vec<Passage> = match limit {
            Some(limit) => {
                let (pieces, split) = self.fit_passages(question, &target, document, passages, limit);
                cut_passages = split > 0;
                if split > 0 {
                    notes.push(format!(
                        "{split} passage(s) longer than the ~{limit}-token input limit of the {}-token context window read in {} piece(s)",
                        options.context_window.unwrap_or_default(),
                        pieces.len() - (passages.len() - split)
                    ));
                }
                pieces
            }
            None => passages.to_vec(),
        };
        let mut sequential = question.chunk_strategy == ChunkStrategy::Sequential;
        // Passages cut, or a combined question read in several calls, only
        // because of the window: a list or table is gathered from every
        // call, not from the first that suffices.
        let mut split_for_context = cut_passages;
        if !sequential
            && fitted.len() > 1
            && let (Some(window), Some(limit)) = (options.context_window, limit)
        {
            let estimate = estimate_for(&fitted);
            if estimate > limit {
                sequential = true;
                split_for_context = true;
                notes.push(format!(
                    "combined prompt ~{estimate} tokens would fill {:.0}% of the {window}-token context window \
                     (input limit ~{limit} tokens): switched to sequential",
                    estimate as f64 * 100.0 / window.max(1) as f64,
                ));
            }
        }
        let mut queue: VecDeque<Vec<Passage>> = if sequential {
            let fits = |batch: &[Passage]| limit.is_none_or(|limit| estimate_for(batch) <= limit);
            sequential_batches(&fitted, fits).into_iter().map(<[Passage]>::to_vec).collect()
        } else if fitted.is_empty() {
            VecDeque::new()
        } else {
            VecDeque::from([fitted.clone()])
        };

        let started = Instant::now();
        let mut usage = Usage::default();
        let mut shown: Vec<Passage> = Vec::new();
        let mut replies: Vec<Reply> = Vec::new();
        let mut calls: Vec<GenerationCall> = Vec::new();
        let mut model_used: Option<String> = None;
        let mut exit = "exhausted";
        let mut call = 0u32;
        let mut refused = 0u32;
        // A reply that does not follow the schema is answered once with the
        // reply and what was wrong with it, the value's type stated.
        let mut correction: Option<(String, String)> = None;
        while let Some(batch) = queue.pop_front() {
            call += 1;
            let (mut request, _) = self.request_for(question, target.name(), schema.clone(), document, &batch);
            let correcting = correction.take();
            if let (Some((content, why)), Target::Registry(entry)) = (&correcting, &target) {
                request.messages.push(ChatMessage { role: "assistant".to_owned(), content: content.clone() });
                request.messages.push(ChatMessage { role: "user".to_owned(), content: correction_text(entry, why) });
            }
            let estimate = estimate_input_tokens(&request, options.chars_per_token);
            let unshown = batch.len() + queue.iter().map(Vec::len).sum::<usize>();
            if let Some(budget) = options.time_budget
                && started.elapsed() >= budget
            {
                exit = "time_budget";
                notes.push(format!(
                    "time budget of {} ms spent after {} call(s): {unshown} passage(s) not shown",
                    budget.as_millis(),
                    call - 1,
                ));
                break;
            }
            let spent = usage.input_tokens + usage.output_tokens;
            if let Some(budget) = options.token_budget
                && spent + estimate > budget
            {
                exit = "token_budget";
                notes.push(format!(
                    "token budget {budget}: {spent} spent, call {call} needs ~{estimate} input tokens: {unshown} passage(s) not shown"
                ));
                break;
            }
            if let Some(limit) = limit
                && estimate > limit
            {
                notes.push(format!("call {call}: prompt ~{estimate} tokens is over the ~{limit}-token input limit"));
            }
            // A reply cut at the output token limit reached us but is not
            // an answer: it is recorded and read as an unusable reply (the
            // next batch may still answer). A prompt the server refused as
            // longer than its context is split in two and asked again. Any
            // other failure aborts.
            let (response, cut) = match self.model.complete(&request) {
                Ok(response) => (response, false),
                Err(error) => match (L::cut_reply(&error), L::context_overflow(&error)) {
                    (Some(raw), _) => (LlmResponse::cut(raw), true),
                    (None, Some(overflow)) => {
                        let Some((first, second)) = split_batch(document, &batch) else {
                            return Err(LlmGenerateError::Model { call, source: Box::new(error) });
                        };
                        refused += 1;
                        // What the server named, else a quarter under what it refused.
                        let learned = match overflow.window {
                            Some(window) => self.input_limit(Some(window)),
                            None => Some(estimate.saturating_mul(3) / 4),
                        };
                        limit = match (limit, learned) {
                            (Some(a), Some(b)) => Some(a.min(b)),
                            (a, b) => a.or(b),
                        };
                        notes.push(format!(
                            "call {call}: the server refused a prompt of ~{estimate} tokens as longer than the model's context{}: split in two and asked again",
                            overflow.window.map(|w| format!(" ({w} tokens)")).unwrap_or_default()
                        ));
                        trace.record(TraceEvent {
                            brick: "generate".to_owned(),
                            step: "llm_context_overflow".to_owned(),
                            detail: json!({
                                "call": call,
                                "estimated_input_tokens": estimate,
                                "window": overflow.window,
                                "passages": batch.iter().map(PassageRef::from).collect::<Vec<_>>(),
                                "error": error.to_string(),
                            }),
                        });
                        if !sequential {
                            sequential = true;
                            split_for_context = true;
                        }
                        // The rest is packed again under the learned limit.
                        let rest: Vec<Vec<Passage>> = queue.drain(..).collect();
                        queue.push_back(first);
                        queue.push_back(second);
                        for later in rest {
                            queue.extend(self.pack(question, &target, document, &later, limit));
                        }
                        call -= 1;
                        continue;
                    }
                    (None, None) => return Err(LlmGenerateError::Model { call, source: Box::new(error) }),
                },
            };
            shown.extend(batch.iter().filter(|p| !shown.contains(p)).cloned().collect::<Vec<_>>());
            usage.input_tokens += response.usage.input_tokens;
            usage.output_tokens += response.usage.output_tokens;
            usage.cached_tokens += response.usage.cached_tokens;
            if !response.model.is_empty() {
                model_used = Some(response.model.clone());
            }
            let reply = match &target {
                _ if cut => Reply {
                    answer: failure(
                        question,
                        target.name(),
                        format!("the model reply {} was cut at the output token limit and is not used", response.id),
                    ),
                    json: None,
                    span_problems: 0,
                    schema_error: None,
                },
                Target::Registry(entry) => parse_reply(question, entry, &response, document, &batch, &system_prompt),
                Target::Custom(custom) => {
                    parse_custom_reply(question, custom, &response, document, &batch, &system_prompt)
                }
            };
            calls.push(GenerationCall {
                call,
                passages: batch.len(),
                estimated_input_tokens: estimate,
                usage: response.usage,
                answer_found: reply.answer.feedback.answer_found,
                complete_answer_found: reply.answer.feedback.complete_answer_found,
            });
            let content = |i: usize| request.messages.get(i).map(|m| m.content.clone());
            trace.record(
                Event::LlmResponse(Box::new(LlmCall {
                    call,
                    schema: target.name().to_owned(),
                    passages: batch.iter().map(PassageRef::from).collect(),
                    estimated_input_tokens: estimate,
                    usage: response.usage,
                    answer_found: reply.answer.feedback.answer_found,
                    complete_answer_found: reply.answer.feedback.complete_answer_found,
                    span_problems: reply.span_problems,
                    cut_at_token_limit: cut,
                    // What was sent, verbatim: `docintel trace replay`
                    // rebuilds both from the stored question and passages.
                    request: LlmRequestSent {
                        system: content(0),
                        user: content(1),
                        correction: content(3),
                        schema_name: request.schema_name.clone(),
                        few_shot_examples: self.examples.len(),
                    },
                    raw: response.raw.clone(),
                }))
                .into(),
            );
            let done = reply.sufficient();
            if let (Some(why), None) = (&reply.schema_error, &correcting) {
                notes.push(format!(
                    "call {call}: the reply did not follow the answer schema ({why}): asked once more, the type stated"
                ));
                correction = Some((response.content.clone(), why.clone()));
                queue.push_front(batch.clone());
            }
            replies.push(reply);
            if done && !(split_for_context && gathers(question.answer_shape)) {
                exit = "sufficient";
                break;
            }
        }
        let n_calls = replies.len() as u32;
        let strategy = if sequential { "sequential" } else { "combined" };
        let gathered = split_for_context && gathers(question.answer_shape) && replies.len() > 1;
        let (mut answer, answer_json) = if gathered {
            (gather(question, target.name(), replies), None)
        } else {
            choose(question, target.name(), replies, passages.is_empty())
        };
        if gathered && exit == "exhausted" {
            exit = if answer.feedback.answer_found { "gathered" } else { "exhausted" };
        }
        if exit == "token_budget" || exit == "time_budget" {
            for note in &notes {
                if note.contains("budget") && !answer.feedback.warnings.contains(note) {
                    answer.feedback.warnings.push(note.clone());
                }
            }
            answer.feedback.complete_answer_found &= answer.feedback.answer_found;
        }
        trace.record(TraceEvent {
            brick: "generate".to_owned(),
            step: "llm_exit".to_owned(),
            detail: json!({
                "strategy": strategy,
                "exit": exit,
                "calls": n_calls,
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "tokens_per_call": calls.iter().map(|c| c.usage.input_tokens).collect::<Vec<_>>(),
                "context_refusals": refused,
                "split_for_context": split_for_context,
                "notes": notes,
            }),
        });
        Ok(Generation {
            answer,
            strategy_executed: strategy.to_owned(),
            exit: exit.to_owned(),
            iterations: n_calls,
            passages_shown: shown,
            fragments_applied: fragments,
            template_version: TEMPLATE_VERSION.to_owned(),
            model: model_used.or_else(|| Some(self.model_name.clone())),
            usage,
            calls,
            notes,
            answer_json,
        })
    }

    fn name(&self) -> String {
        format!("{LLM_GENERATOR_VERSION} ({})", self.model_name)
    }
}
