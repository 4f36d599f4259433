//! docintel-question: turns the user's question into a typed
//! [`ParsedQuestion`], deterministically, with rules and no model.
//!
//! [`RuleParser`] (`rules/0.1`) implements [`QuestionParser`]:
//! - **clean-up**: whitespace collapsed and trimmed (typos are left alone);
//!   language by a stop-word vote among en, fr, es, de and ru;
//! - **keywords**: content words (stop words and question-frame words
//!   removed) and **anchors** found by regex — identifiers (`AC-2`,
//!   `IA-5(1)`, `L131-1`, `ISO 9408`), section references (`Article 18`,
//!   `§4.2`), amounts (`$4.11`, `1,939.00 EUR`) and dates (`2014-08-03`,
//!   `August 3, 2014`);
//! - **answer type and shape** from the wording (`amount`, `date`,
//!   `boolean`, `number`, `email`, `iban`, `address`, `text`; single,
//!   listing, table);
//! - **decomposition**: split only when each side is a question on its own;
//!   "exclusions and limits" stays whole;
//! - **structural hints**: pages ("page 3", "pp. 5–7", "Seite 3",
//!   "странице 2"), a section to route to, a layout element, a summary
//!   request, and how much context the answer needs;
//! - **format constraints** ("in EUR", "in YYYY-MM-DD", "in thousands") go to
//!   the generation brief only, never to the keywords or the retrieval query;
//! - **expert dictionary**: a question naming a concept of
//!   `data/concept_keywords.csv` (total amount, invoice date, premium, ...)
//!   gains that concept's words in every language, as `expert_dictionary`
//!   keywords with their weights;
//! - **distractors** ("the limit, not the deductible");
//! - **activations** decided by [`decide_activations`] from the question and
//!   the document profile, every downgrade explained in `parsing_notes`.
//!
//! Around the parser: [`Satellites`] (the six data tables of `data/`, loaded
//! once, foreign keys checked, overridable per project with
//! [`Satellites::from_dir`]); the [`cascade`]s that fill `answer_context`,
//! `chunk_strategy` and `suggested_model` (concept > shape/type > project,
//! the deciding level noted); a clarification for a bare generic term
//! ("What's the limit?"); [`persist`] (the record on disk, keyed by the
//! document profile); [`follow_up`] rewrites for retrieval
//! ([`RuleParser::parse_with_history`]); [`aggregate`] tells counting,
//! filtering and grouping questions about a collection ("How many invoices
//! are from 2023?") from passage questions, for a knowledge base's
//! structured index.
//!
//! [`LlmQuestionParser`] (`llm/0.1`, module [`llm`]) fills the same record
//! with one structured model call (types, shapes and concepts in its prompt
//! and schema come from the satellite tables); the anchors, the dictionary,
//! the cascades and the dispatcher still run in code, and any model failure
//! falls back to the [`RuleParser`] record with a note.
//!
//! ```
//! use docintel_question::RuleParser;
//! use docintel_schema::{AnswerShape, DocumentFormat, DocumentProfile, QuestionParser};
//!
//! let profile = DocumentProfile {
//!     format: DocumentFormat::Pdf, n_pages: Some(12), has_toc: true, has_tables: false,
//!     languages: vec!["en".into()], is_scanned: false, doc_type: None, typical_fields: vec![], summary: None,
//! };
//! let parsed = RuleParser::new().parse("What is the total amount in EUR on page 3?", &profile).unwrap();
//! assert_eq!((parsed.answer_shape, parsed.answer_type.as_str()), (AnswerShape::Single, "amount"));
//! assert_eq!(parsed.structural_hints.pages_hint, [3]);
//! assert_eq!(parsed.generation.format_constraints["currency"], "EUR");
//! assert_eq!(parsed.retrieval.main_query, "What is the total amount on page 3?");
//! let words: Vec<&str> = parsed.keywords.iter().map(|k| k.text.as_str()).collect();
//! assert_eq!(words[..2], ["total", "amount"]);
//! // The expert dictionary adds the concept's words in other languages.
//! assert_eq!(parsed.matched_concept.as_deref(), Some("total_amount"));
//! assert!(words.contains(&"montant total"));
//! ```

#![warn(missing_docs)]

pub mod aggregate;
mod anchors;
pub mod cascade;
mod classify;
mod constraints;
mod decompose;
mod dictionary;
mod dispatch;
pub mod follow_up;
mod framing;
mod hints;
mod lexicon;
pub mod llm;
mod parse;
mod parts;
pub mod persist;
mod quotient;
mod restrict;
pub mod satellites;
mod table;
pub mod type_model;

use std::fmt;

use docintel_schema::{AnswerContext, ChunkStrategy, DocumentProfile, ParsedQuestion, QuestionParser};

pub use cascade::{
    CascadeLevel, ProjectDefaults, Resolved, resolve_answer_context, resolve_chunk_strategy, resolve_model,
};
pub use dictionary::{DictionaryError, ExpertDictionary};
pub use dispatch::{decide_activations, default_plan};
pub use follow_up::{follow_up_rewrite, is_follow_up, rewrite_follow_up};
pub use llm::{FullParse, LLM_PARSER_NAME, LlmParse, LlmQuestionParser};
pub use persist::{
    PersistError, QUESTION_BUILD, load_parsed_question, parsed_question_path, profile_hash, save_parsed_question,
};
pub use satellites::{SatelliteError, Satellites};
pub use table::TableError;
pub use type_model::{TypeModel, TypeVerdict, type_features};

use crate::anchors::AnchorRules;
use crate::classify::ClassifyRules;
use crate::constraints::ConstraintRules;
use crate::decompose::DecomposeRules;
use crate::framing::FramingRules;
use crate::hints::HintRules;
use crate::lexicon::{detect_language, tokenize};
use crate::parts::DocumentParts;

/// Name and version of this parser, recorded in `ParsedQuestion::parser`.
pub const PARSER_NAME: &str = "rules/0.1";

/// The project fallback model, used when neither the matched concept nor the
/// answer type names one (see [`ProjectDefaults`]).
pub const DEFAULT_MODEL: &str = "gpt-4.1-mini";

/// Weight of an answer type's confirmation regex added as a keyword.
pub const TYPE_PATTERN_WEIGHT: f32 = 0.8;

/// `ambiguity_reason` of a question naming only a generic term that several
/// concepts answer to ("What's the limit?").
pub const AMBIGUOUS_TERM: &str = "single_term_with_multiple_referents";

/// Longest question accepted, in characters.
pub const MAX_QUESTION_CHARS: usize = 2000;

/// Weight of an anchor keyword (a plain content word weighs 1.0).
pub const ANCHOR_WEIGHT: f32 = 3.0;

/// Why a question could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum QuestionError {
    /// The question is empty or has no letter or digit.
    Empty,
    /// The question is longer than [`MAX_QUESTION_CHARS`].
    TooLong {
        /// Its length in characters.
        chars: usize,
        /// The limit.
        max: usize,
    },
}

impl fmt::Display for QuestionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuestionError::Empty => write!(f, "the question is empty"),
            QuestionError::TooLong { chars, max } => {
                write!(f, "the question is {chars} characters long, more than the {max} accepted")
            }
        }
    }
}

impl std::error::Error for QuestionError {}

/// The deterministic, rule-based question parser (`rules/0.1`). Its regexes
/// are compiled once, in [`RuleParser::new`]; build one and reuse it.
#[derive(Debug, Clone)]
pub struct RuleParser {
    anchors: AnchorRules,
    classify: ClassifyRules,
    constraints: ConstraintRules,
    decompose: DecomposeRules,
    hints: HintRules,
    framing: FramingRules,
    parts: DocumentParts,
    satellites: Satellites,
    defaults: ProjectDefaults,
}

impl Default for RuleParser {
    fn default() -> Self {
        RuleParser::new()
    }
}

impl QuestionParser for RuleParser {
    type Error = QuestionError;

    fn parse(&self, question: &str, profile: &DocumentProfile) -> Result<ParsedQuestion, QuestionError> {
        self.parse_question(question, profile)
    }

    fn name(&self) -> String {
        PARSER_NAME.to_owned()
    }
}

impl RuleParser {
    /// Compiles the rules.
    pub fn new() -> RuleParser {
        RuleParser {
            anchors: AnchorRules::new(),
            classify: ClassifyRules::new(),
            constraints: ConstraintRules::new(),
            decompose: DecomposeRules::new(),
            hints: HintRules::new(),
            framing: FramingRules::new(),
            parts: DocumentParts::builtin(),
            satellites: Satellites::builtin(),
            defaults: ProjectDefaults::default(),
        }
    }

    /// The same parser with another expert dictionary (a project's own file).
    /// Its concepts are not checked against the concepts table: prefer
    /// [`RuleParser::with_satellites`], which checks every foreign key.
    pub fn with_dictionary(mut self, dictionary: ExpertDictionary) -> RuleParser {
        self.satellites.set_dictionary(dictionary);
        self
    }

    /// The same parser with other satellite tables (e.g.
    /// [`Satellites::from_dir`] on a project's directory).
    pub fn with_satellites(mut self, satellites: Satellites) -> RuleParser {
        self.satellites = satellites;
        self
    }

    /// The same parser with other project fallbacks for the cascades.
    pub fn with_defaults(mut self, defaults: ProjectDefaults) -> RuleParser {
        self.defaults = defaults;
        self
    }

    /// The satellite tables in use.
    pub fn satellites(&self) -> &Satellites {
        &self.satellites
    }

    /// The project fallbacks in use.
    pub fn defaults(&self) -> &ProjectDefaults {
        &self.defaults
    }

    /// Parses `question` asked after `previous_turns` (oldest first): the
    /// plain parse, then [`RuleParser::resolve_follow_up`].
    pub fn parse_with_history(
        &self,
        question: &str,
        previous_turns: &[String],
        profile: &DocumentProfile,
    ) -> Result<ParsedQuestion, QuestionError> {
        let parsed = self.parse_question(question, profile)?;
        self.resolve_follow_up(parsed, previous_turns, profile)
    }

    /// The follow-up step of [`RuleParser::parse_with_history`], on a record
    /// parsed without the turns (this parser's, or [`LlmQuestionParser`]'s
    /// asked with none, so that no earlier turn reaches a model's prompt).
    /// When the question (`parsed.original_question`) leans on an earlier
    /// turn ([`is_follow_up`]) and [`rewrite_follow_up`] can make it
    /// self-contained, the rewrite goes to `retrieval.rewrites` and its
    /// keywords, anchors and concept replace the question's; the generation
    /// brief keeps the user's words. Otherwise the record is returned as it
    /// came (plus a note when a turn was there but nothing could be resolved).
    pub fn resolve_follow_up(
        &self,
        mut parsed: ParsedQuestion,
        previous_turns: &[String],
        profile: &DocumentProfile,
    ) -> Result<ParsedQuestion, QuestionError> {
        if previous_turns.is_empty() || !is_follow_up(&lexicon::collapse_whitespace(&parsed.original_question)) {
            return Ok(parsed);
        }
        let Some(rewrite) = follow_up_rewrite(&parsed.original_question, previous_turns) else {
            parsed.parsing_notes.push(
                "follow-up: a referring expression but no earlier noun phrase to resolve it; original wording kept"
                    .to_owned(),
            );
            return Ok(parsed);
        };
        let resolved = self.parse_question(&rewrite, profile)?;
        // The user's own words stay what a prompt may show; what only the
        // rewrite brought is searched, never shown.
        let own: std::collections::HashSet<String> = parsed.keywords.iter().map(|k| k.text.to_lowercase()).collect();
        parsed.retrieval.follow_up_keywords = resolved
            .keywords
            .iter()
            .filter(|k| !own.contains(&k.text.to_lowercase()))
            .map(|k| k.text.clone())
            .collect();
        parsed.keywords = resolved.keywords;
        parsed.matched_concept = resolved.matched_concept;
        parsed.retrieval.anchor_keywords = resolved.retrieval.anchor_keywords;
        if resolved.suggested_clarification.is_none() {
            parsed.suggested_clarification = None;
            parsed.ambiguity_reason = None;
        }
        parsed.parsing_notes.push(format!("follow-up rewritten for retrieval only: '{rewrite}'"));
        parsed.retrieval.rewrites.push(rewrite);
        Ok(parsed)
    }

    /// The answer type the rules alone give `text` (no learned model), with
    /// the language detected from `text`: what `cargo xtask fit-types`
    /// fits the type model on.
    pub fn rule_answer_type(&self, text: &str) -> String {
        let tokens = tokenize(text);
        let language = detect_language(text, &tokens);
        self.classify.answer_type(text, language, &self.satellites).to_owned()
    }
}

fn context_name(context: AnswerContext) -> &'static str {
    match context {
        AnswerContext::Line => "line",
        AnswerContext::Paragraph => "paragraph",
        AnswerContext::Page => "page",
        AnswerContext::Section => "section",
        AnswerContext::Chapter => "chapter",
        AnswerContext::Document => "document",
    }
}

fn chunk_name(strategy: ChunkStrategy) -> &'static str {
    match strategy {
        ChunkStrategy::Combined => "combined",
        ChunkStrategy::Sequential => "sequential",
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use docintel_schema::{DocumentFormat, DocumentProfile};

    /// A 40-page PDF with a TOC.
    pub(crate) fn pdf_profile() -> DocumentProfile {
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

    /// A Word document: no pages, no TOC.
    pub(crate) fn docx_profile() -> DocumentProfile {
        DocumentProfile {
            format: DocumentFormat::Docx,
            n_pages: None,
            has_toc: false,
            has_tables: false,
            languages: vec!["en".to_owned()],
            is_scanned: false,
            doc_type: None,
            typical_fields: Vec::new(),
            summary: None,
        }
    }
}

/// The dispatcher's last step, shared by every parser: the activations are
/// decided in code from the record and the profile, page numbers are dropped
/// where the profile has none, and the dispatcher's notes follow the
/// parser's.
pub(crate) fn finish_dispatch(
    mut parsed: ParsedQuestion,
    mut notes: Vec<String>,
    profile: &DocumentProfile,
) -> ParsedQuestion {
    let (plan, activation_notes) = decide_activations(&parsed, profile);
    if !plan.extract_page_numbers {
        parsed.retrieval.pages.clear();
    }
    parsed.activations = plan;
    notes.extend(activation_notes);
    parsed.parsing_notes = notes;
    parsed
}

#[cfg(test)]
mod tests;
