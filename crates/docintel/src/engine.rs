//! [`Engine`]: what every question shares, built once — the rule question
//! parser (its ~80 regexes and satellite tables) and, with a model, the HTTP
//! transport and its runtime — and the entry points that answer with it.

use std::path::Path;
use std::time::Instant;

use docintel_question::{ExpertDictionary, LLM_PARSER_NAME, RuleParser, Satellites};
use docintel_schema::{AskOutput, ParsedDocument, ParsedQuestion, QuestionParser};

use crate::ask::{self, QuestionRun};
use crate::bricks::{Bricks, LlmClient};
use crate::record::{document_event, document_key_of, write_trace};
use crate::{AskOptions, Corpus, ParseError, PipelineError, QaRun};

/// A long-lived question answerer: build it once, ask it many questions.
///
/// What is costly to set up and the same for every question is built by
/// [`Engine::new`]: the rule question parser with its satellite tables and
/// expert dictionary, and with a model the HTTP transport and its runtime
/// (each question gets a clone carrying its own deadline). Everything else
/// comes per question from the [`AskOptions`] given to each method; their
/// `generator`, `satellites_dir` and `dictionary` fields are the engine's and
/// are not read again.
///
/// `Engine` is `Send + Sync`: a server shares one behind an `Arc` and calls it
/// from worker threads. Its methods block (parsing, model calls on the
/// transport's own current-thread runtime), so from async code call them in
/// `spawn_blocking`, never on a tokio worker thread.
///
/// ```no_run
/// use docintel::{AskOptions, Engine};
/// let options = AskOptions::new(5);
/// let engine = std::sync::Arc::new(Engine::new(&options)?);
/// for question in ["What is the total amount?", "What is the invoice date?"] {
///     let output = engine.ask("fixtures/invoices/AmazonWebServices.pdf".as_ref(), question, &options)?;
///     println!("{}", output.answer.feedback.answer_found);
/// }
/// # Ok::<(), docintel::PipelineError>(())
/// ```
#[derive(Debug)]
pub struct Engine {
    parser: RuleParser,
    llm: Option<LlmClient>,
}

impl Engine {
    /// Builds the question parser `options.satellites_dir` and
    /// `options.dictionary` ask for and, when `options.generator` is a model,
    /// its transport.
    pub fn new(options: &AskOptions) -> Result<Engine, PipelineError> {
        let parser = question_parser(options)?;
        let llm = LlmClient::build(&options.generator)?;
        Ok(Engine { parser, llm })
    }

    /// The rule question parser every question starts from.
    pub fn question_parser(&self) -> &RuleParser {
        &self.parser
    }

    pub(crate) fn bricks(&self) -> Bricks<'_> {
        Bricks { parser: &self.parser, llm: self.llm.as_ref() }
    }

    /// Answers `question` about the document at `path` (PDF, text, Markdown,
    /// DOCX): see [`crate::pdf_qa`].
    pub fn ask(&self, path: &Path, question: &str, options: &AskOptions) -> Result<AskOutput, PipelineError> {
        self.ask_with_document(path, question, options).map(|(output, _)| output)
    }

    /// [`Engine::ask`], also returning the parsed document (its line table
    /// carries the boxes `docintel ask --highlight` draws).
    pub fn ask_with_document(
        &self,
        path: &Path,
        question: &str,
        options: &AskOptions,
    ) -> Result<(AskOutput, ParsedDocument), PipelineError> {
        let options = &*options.for_question();
        let started = Instant::now();
        let mut document =
            crate::parse_file_with_options(path, &options.parse_options()).map_err(PipelineError::Parse)?;
        let parse_ms = started.elapsed().as_millis() as u64;
        // With a model, figure pages and badly read scans get its description as lines.
        let vision_started = Instant::now();
        let vision = crate::vision::describe(self.llm.as_ref(), path, &mut document, options);
        let vision_ms = vision_started.elapsed().as_millis() as u64;

        // Parse the question once per document profile: with an output folder,
        // a record saved by an earlier run (same question, same earlier turns,
        // same profile, same parser) is reused.
        let expected_parser = match &self.llm {
            Some(_) if options.llm_question => LLM_PARSER_NAME.to_owned(),
            _ => self.parser.name(),
        };
        let (key, sha256) = document_key_of(path);
        let cached = match &options.out_dir {
            Some(out) => {
                docintel_question::load_parsed_question(out, &key, &document.profile, question, &options.previous_turns)
                    .ok()
                    .flatten()
                    .filter(|parsed| parsed.parser == expected_parser)
            }
            None => None,
        };
        let was_cached = cached.is_some();
        let question_run = match cached {
            Some(parsed) => QuestionRun::rules(parsed),
            None => ask::parse_question(self.bricks(), question, &document.profile, options)?,
        };
        let parsed_to_save = (!was_cached).then(|| question_run.parsed.clone());

        // Nothing is written before the run succeeded: a failed run leaves an existing folder as
        // it was.
        let mut run = ask::answer(self.bricks(), &document, question_run, options)?;
        run.output.meta.parsed_question_cached = was_cached;
        run.output.meta.timings_ms.insert("parse".into(), parse_ms);
        if let Some(vision) = vision {
            let model = self.llm.as_ref().map(|llm| llm.model.as_str());
            run.output.meta.timings_ms.insert("vision".into(), vision_ms);
            crate::meta::add_vision(&mut run.output.meta, model, self.parser.satellites(), vision.usage, vision.meta);
            run.events.splice(0..0, vision.events);
        }
        run.events.insert(0, document_event(path, &sha256, &key));
        let output = match &options.out_dir {
            Some(out_dir) => {
                let saved = parsed_to_save.as_ref().map(|parsed| (&document.profile, parsed));
                write_trace(out_dir, &key, question, &options.previous_turns, saved, &run.events, run.output)?
            }
            None => run.output,
        };
        Ok((output, document))
    }

    /// Answers `question` about an already parsed document (no trace written;
    /// with embeddings and `options.out_dir`, the chunk vectors are cached there).
    pub fn answer_document(
        &self,
        document: &ParsedDocument,
        question: &str,
        options: &AskOptions,
    ) -> Result<QaRun, PipelineError> {
        let options = &*options.for_question();
        let run = ask::parse_question(self.bricks(), question, &document.profile, options)?;
        ask::answer(self.bricks(), document, run, options)
    }

    /// Runs retrieval, generation and validation for an already parsed
    /// question, applying the caller's overrides on top of the dispatcher's
    /// decisions (the model-call deadline is `options.llm_deadline`, unset by
    /// default).
    pub fn answer_parsed(
        &self,
        document: &ParsedDocument,
        parsed: ParsedQuestion,
        options: &AskOptions,
    ) -> Result<QaRun, PipelineError> {
        ask::answer(self.bricks(), document, QuestionRun::rules(parsed), options)
    }

    /// Answers `question` over a parsed corpus: see [`crate::corpus_qa`].
    pub fn corpus_qa(&self, corpus: &Corpus, question: &str, options: &AskOptions) -> Result<AskOutput, PipelineError> {
        crate::corpus::answer(self.bricks(), corpus, question, options)
    }
}

/// The question parser the options ask for (built-in or a folder of
/// satellite tables, and the expert dictionary).
pub fn question_parser(options: &AskOptions) -> Result<RuleParser, PipelineError> {
    let mut parser = RuleParser::new();
    if let Some(dir) = &options.satellites_dir {
        parser = parser.with_satellites(Satellites::from_dir(dir).map_err(PipelineError::Satellites)?);
    }
    if let Some(file) = &options.dictionary {
        let name = file.display().to_string();
        let text = std::fs::read_to_string(file)
            .map_err(|e| PipelineError::Parse(ParseError::Io { path: name.clone(), source: e }))?;
        parser = parser.with_dictionary(ExpertDictionary::from_csv(&name, &text).map_err(PipelineError::Dictionary)?);
    }
    Ok(parser)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_can_be_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<Engine>();
    }
}
