//! What one question runs with: the rule parser and, with a model, the
//! [`LlmClient`] (transport and model name), borrowed as [`Bricks`] from an
//! `Engine` (or, for `answer_parsed`, from the caller's parser).

use std::time::Instant;

use docintel_llm::OpenAiTransport;
use docintel_question::RuleParser;

use crate::error::brick_error;
use crate::{GeneratorChoice, PipelineError};

/// The model every question of an engine asks: one transport (HTTP client and
/// runtime, shared by its clones) and the model name.
#[derive(Debug, Clone)]
pub(crate) struct LlmClient {
    transport: OpenAiTransport,
    pub(crate) model: String,
}

impl LlmClient {
    /// The client `choice` names (`None` for the extractive generator).
    pub(crate) fn build(choice: &GeneratorChoice) -> Result<Option<LlmClient>, PipelineError> {
        match choice {
            GeneratorChoice::Extractive => Ok(None),
            GeneratorChoice::Llm { config, model } => {
                let transport = OpenAiTransport::new(config.clone()).map_err(|e| brick_error("llm")(Box::new(e)))?;
                Ok(Some(LlmClient { transport, model: model.clone() }))
            }
        }
    }

    /// The transport for one question's calls: a cheap clone sharing the
    /// client and runtime, with the question's deadline.
    pub(crate) fn transport(&self, deadline: Option<Instant>) -> OpenAiTransport {
        self.transport.clone().with_deadline(deadline)
    }
}

/// The bricks one question runs with, borrowed from an [`crate::Engine`] (or, for
/// [`crate::answer_parsed`], from the caller's parser).
#[derive(Clone, Copy)]
pub(crate) struct Bricks<'e> {
    pub(crate) parser: &'e RuleParser,
    pub(crate) llm: Option<&'e LlmClient>,
}
