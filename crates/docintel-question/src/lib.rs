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

mod anchors;
mod classify;
mod constraints;
mod decompose;
mod dictionary;
mod dispatch;
mod hints;
mod lexicon;

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::ops::Range;

use docintel_schema::{
    AnswerContext, Decomposition, DecompositionPattern, Distinction, DocumentProfile, GenerationBrief, Keyword,
    KeywordSource, ParsedQuestion, QuestionParser, RetrievalQuery, ScopeFilters, StructuralHints,
};

pub use dictionary::{DictionaryError, ExpertDictionary};
pub use dispatch::{decide_activations, default_plan};

use crate::anchors::AnchorRules;
use crate::classify::ClassifyRules;
use crate::constraints::{ConstraintRules, DistractorHit};
use crate::decompose::DecomposeRules;
use crate::hints::HintRules;
use crate::lexicon::{collapse_whitespace, detect_language, is_stop, masked, strip_clitic, tokenize};

/// Name and version of this parser, recorded in `ParsedQuestion::parser`.
pub const PARSER_NAME: &str = "rules/0.1";

/// The model suggested to generation. A placeholder until the models table
/// exists.
pub const DEFAULT_MODEL: &str = "gpt-4.1-mini";

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
    dictionary: ExpertDictionary,
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
            dictionary: ExpertDictionary::builtin(),
        }
    }

    /// The same parser with another expert dictionary (a project's own file).
    pub fn with_dictionary(mut self, dictionary: ExpertDictionary) -> RuleParser {
        self.dictionary = dictionary;
        self
    }

    fn parse_question(&self, question: &str, profile: &DocumentProfile) -> Result<ParsedQuestion, QuestionError> {
        let corrected = collapse_whitespace(question);
        if !corrected.chars().any(char::is_alphanumeric) {
            return Err(QuestionError::Empty);
        }
        let chars = corrected.chars().count();
        if chars > MAX_QUESTION_CHARS {
            return Err(QuestionError::TooLong { chars, max: MAX_QUESTION_CHARS });
        }
        let tokens = tokenize(&corrected);
        let language = detect_language(&corrected, &tokens);
        let mut notes = Vec::new();
        if language.is_none() {
            notes.push("no language detected: stop words of every known language removed".to_owned());
        }

        // Format constraints: generation only.
        let formats = self.constraints.formats(&corrected);
        let format_spans: Vec<Range<usize>> = formats.iter().map(|f| f.span.clone()).collect();
        let mut format_constraints = BTreeMap::new();
        for hit in &formats {
            let phrase = &corrected[hit.span.clone()];
            match format_constraints.get(hit.key) {
                Some(kept) if kept != &hit.value => {
                    notes.push(format!("conflicting {} '{}' ignored: kept {kept}", hit.key, phrase));
                }
                Some(_) => {}
                None => {
                    notes.push(format!(
                        "format constraint {}={} ('{phrase}') kept for generation only",
                        hit.key, hit.value
                    ));
                    format_constraints.insert(hit.key.to_owned(), hit.value.clone());
                }
            }
        }
        let main_query = remove_spans(&corrected, &format_spans);

        // Pages, section, layout, period.
        let page_hints = self.hints.pages(&corrected);
        notes.extend(page_hints.notes.iter().cloned());
        let mut pages = page_hints.pages.clone();
        if let Some(n_pages) = profile.n_pages {
            let beyond: Vec<String> = pages.iter().filter(|&&p| p > n_pages).map(u32::to_string).collect();
            if !beyond.is_empty() {
                notes.push(format!("page(s) {} beyond the document's {n_pages} pages dropped", beyond.join(", ")));
                pages.retain(|&p| p <= n_pages);
            }
        }
        let page_spans: Vec<Range<usize>> = page_hints.phrases.iter().map(|(span, _)| span.clone()).collect();
        let section = self.hints.section(&corrected);
        let layout = self.hints.layout(&corrected);
        let period = self.hints.period(&corrected);

        // Anchors and distractors.
        let mut exclude = format_spans.clone();
        exclude.extend(page_spans.iter().cloned());
        let anchors = self.anchors.find(&corrected, &exclude);
        let mut distractors = self.constraints.distractors(&corrected, &tokens, language);

        // Keywords: anchors and content words, in question order.
        let mut masks = exclude;
        masks.extend(anchors.iter().map(|a| a.span.clone()));
        masks.extend(distractors.iter().map(|d| d.span.clone()));
        // "as a table" asks for a shape; "table" is not something to look for.
        masks.extend(self.classify.table_phrase(&corrected));
        let mut positioned: Vec<(usize, Keyword)> = anchors
            .iter()
            .map(|a| {
                let keyword = Keyword {
                    text: a.text.clone(),
                    weight: ANCHOR_WEIGHT,
                    source: KeywordSource::Anchor,
                    is_regex: false,
                    semantic_group: None,
                };
                (a.span.start, keyword)
            })
            .collect();
        for token in &tokens {
            if masked(&token.span(), &masks) {
                continue;
            }
            let lower = token.lower();
            let word = strip_clitic(&lower);
            let single_letter = word.chars().count() == 1 && !word.chars().all(|c| c.is_ascii_digit());
            if single_letter || is_stop(word, language) {
                continue;
            }
            positioned.push((token.start, Keyword::direct(word)));
        }
        positioned.sort_by_key(|(at, _)| *at);
        let mut seen = HashSet::new();
        let keywords: Vec<Keyword> =
            positioned.into_iter().map(|(_, k)| k).filter(|k| seen.insert(k.text.to_lowercase())).collect();
        // "X in Article 18, not Y": nothing adjacent precedes the marker, so the
        // wanted side falls back to the first content word.
        for hit in distractors.iter_mut().filter(|d| d.wanted.is_empty()) {
            if let Some(first) = keywords.iter().find(|k| k.source == KeywordSource::Direct && k.text != hit.not_this) {
                hit.wanted = first.text.clone();
            }
        }
        // Expert dictionary: the concept's words in every language, on the
        // question without format phrases or distractors.
        let mut dictionary_spans = format_spans.clone();
        dictionary_spans.extend(distractors.iter().map(|d| d.span.clone()));
        let expansion = self.dictionary.expand(&remove_spans(&corrected, &dictionary_spans), &keywords);
        if !expansion.concepts.is_empty() {
            notes.push(format!(
                "expert dictionary: concept(s) {} added {} keyword(s)",
                expansion.concepts.join(", "),
                expansion.keywords.len()
            ));
        }
        let matched_concept = expansion.concepts.first().cloned();
        let mut keywords = keywords;
        keywords.extend(expansion.keywords);
        let anchor_keywords: Vec<String> =
            keywords.iter().filter(|k| k.source == KeywordSource::Anchor).map(|k| k.text.clone()).collect();

        // Decomposition (of the question without format phrases), then type
        // and shape on the question without format phrases and distractors
        // (the first sub-question for a compound).
        let (decomposition, decomposition_notes) = self.decompose.decompose(&main_query, language);
        notes.extend(decomposition_notes);
        let mut focus_spans = format_spans.clone();
        focus_spans.extend(distractors.iter().map(|d| d.span.clone()));
        let focus = remove_spans(&corrected, &focus_spans);
        let answer_type = self.answer_type(&focus, &decomposition, language, &mut notes);
        let answer_shape = self.classify.answer_shape(&focus, &answer_type);

        // Structural hints.
        let needs_summary = self.classify.needs_summary(&corrected);
        let answer_context = if section.as_ref().is_some_and(|s| s.by_topic) {
            AnswerContext::Section
        } else if !pages.is_empty() && (needs_summary || self.classify.asks_page_content(&corrected)) {
            AnswerContext::Page
        } else if needs_summary && section.is_some() {
            AnswerContext::Section
        } else if needs_summary {
            AnswerContext::Document
        } else if answer_type == "text" && self.classify.asks_explanation(&corrected) {
            AnswerContext::Paragraph
        } else {
            AnswerContext::Line
        };
        let mut triggers: Vec<String> = page_hints.phrases.iter().map(|(_, phrase)| phrase.clone()).collect();
        triggers.extend(section.iter().map(|s| s.phrase.clone()));
        triggers.extend(layout.iter().map(|(_, phrase)| phrase.clone()));
        let structural_hints = StructuralHints {
            pages_hint: pages.clone(),
            toc_section_hint: section.as_ref().map(|s| s.hint.clone()),
            layout_hint: layout.map(|(element, _)| element),
            detection_context: (!triggers.is_empty()).then(|| triggers.join("; ")),
            answer_context,
            needs_summary,
        };

        // Distinctions.
        let disambiguation = disambiguation_sentence(&distractors);
        let must_distinguish: Vec<Distinction> = distractors
            .iter()
            .map(|d| Distinction { wanted: d.wanted.clone(), not_this: d.not_this.clone() })
            .collect();

        // A question with nothing to look for.
        let direct_count = keywords.iter().filter(|k| k.source == KeywordSource::Direct).count();
        let (ambiguity_reason, suggested_clarification) = if direct_count == 0
            && anchor_keywords.is_empty()
            && pages.is_empty()
            && section.is_none()
            && !needs_summary
        {
            (
                Some("the question names nothing to look for".to_owned()),
                Some("What information are you looking for in the document?".to_owned()),
            )
        } else {
            (None, None)
        };

        let scope = ScopeFilters { period, ..ScopeFilters::default() };
        let chunk_strategy = dispatch::chunk_strategy(answer_shape, needs_summary);
        let mut parsed = ParsedQuestion {
            original_question: question.to_owned(),
            corrected_question: corrected.clone(),
            language: language.map(str::to_owned),
            keywords,
            answer_shape,
            answer_type,
            matched_concept,
            decomposition,
            scope_filters: scope.clone(),
            structural_hints,
            chunk_strategy,
            suggested_model: DEFAULT_MODEL.to_owned(),
            disambiguation: disambiguation.clone(),
            distractors: distractors.iter().map(|d| d.not_this.clone()).collect(),
            activations: default_plan(),
            parsing_notes: Vec::new(),
            suggested_clarification,
            ambiguity_reason,
            parser: PARSER_NAME.to_owned(),
            retrieval: RetrievalQuery {
                main_query,
                rewrites: Vec::new(),
                anchor_keywords,
                section_hint: section.map(|s| s.hint),
                pages,
                scope,
            },
            generation: GenerationBrief {
                original_question: question.to_owned(),
                format_constraints,
                disambiguation,
                must_distinguish,
            },
        };
        let (plan, activation_notes) = decide_activations(&parsed, profile);
        if !plan.extract_page_numbers {
            parsed.retrieval.pages.clear();
        }
        parsed.activations = plan;
        notes.extend(activation_notes);
        parsed.parsing_notes = notes;
        Ok(parsed)
    }

    /// The answer type of the question, or of its first sub-question when it
    /// splits into independent ones (with a note when the parts differ).
    fn answer_type(
        &self,
        focus: &str,
        decomposition: &Decomposition,
        language: Option<&str>,
        notes: &mut Vec<String>,
    ) -> String {
        if decomposition.pattern != DecompositionPattern::Independent || decomposition.sub_questions.is_empty() {
            return self.classify.answer_type(focus, language).to_owned();
        }
        let types: Vec<&str> =
            decomposition.sub_questions.iter().map(|q| self.classify.answer_type(q, language)).collect();
        if types.iter().any(|t| *t != types[0]) {
            notes.push(format!(
                "sub-questions expect different answer types ({}): answer_type is the first one's",
                types.join(", ")
            ));
        }
        types[0].to_owned()
    }
}

/// One sentence per distinction, for the generation brief.
fn disambiguation_sentence(distractors: &[DistractorHit]) -> Option<String> {
    let sentences: Vec<String> = distractors
        .iter()
        .map(|d| {
            if d.wanted.is_empty() {
                format!("The answer must not be the {}.", d.not_this)
            } else {
                format!("The question asks for the {}, not the {}.", d.wanted, d.not_this)
            }
        })
        .collect();
    (!sentences.is_empty()).then(|| sentences.join(" "))
}

/// `text` without the byte ranges `spans`, tidied: no space or comma left
/// before a closing punctuation mark, no dangling conjunction at the end.
fn remove_spans(text: &str, spans: &[Range<usize>]) -> String {
    let mut spans: Vec<Range<usize>> = spans.to_vec();
    spans.sort_by_key(|s| s.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for span in spans {
        if span.end <= at {
            continue;
        }
        out.push_str(&text[at..span.start.max(at)]);
        at = span.end;
        let rest = &text[at..];
        if rest.is_empty() || rest.starts_with(['?', '!', '.', ',', ';', ':']) {
            let trimmed = out.trim_end().trim_end_matches([',', ';', ':']).trim_end().len();
            out.truncate(trimmed);
        }
    }
    out.push_str(&text[at..]);
    let mut out = collapse_whitespace(&out);
    for conjunction in [" and", " et", " y", " und", " и"] {
        if let Some(stripped) = out.strip_suffix(conjunction) {
            out = stripped.to_owned();
        }
    }
    out
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

#[cfg(test)]
mod tests;
