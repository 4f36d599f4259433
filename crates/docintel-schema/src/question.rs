//! `ParsedQuestion`: the one typed record that retrieval and generation read.
//!
//! The question brick fills it; nothing downstream sees the raw string except
//! through `original_question`. Two derived briefs, [`RetrievalQuery`] and
//! [`GenerationBrief`], give each consumer only what it needs: format
//! constraints (currency, date format) live in the generation brief and never
//! reach the retrieval query.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a keyword comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeywordSource {
    /// A content word of the question itself.
    Direct,
    /// Found by a deterministic regex: an identifier, amount or date.
    Anchor,
    /// Proposed by a language model.
    LlmExpansion,
    /// From the expert dictionary (concept keywords table).
    ExpertDictionary,
}

/// A typed search keyword.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Keyword {
    /// The keyword text, or a regex when `is_regex`.
    pub text: String,
    /// Relative weight in lexical scoring (1.0 is a plain content word).
    pub weight: f32,
    /// Where it comes from.
    pub source: KeywordSource,
    /// Whether `text` is a regular expression.
    pub is_regex: bool,
    /// Keywords of one concept share a group (e.g. "premium" / "prime").
    pub semantic_group: Option<String>,
}

impl Keyword {
    /// A plain content keyword taken from the question.
    pub fn direct(text: impl Into<String>) -> Keyword {
        Keyword { text: text.into(), weight: 1.0, source: KeywordSource::Direct, is_regex: false, semantic_group: None }
    }
}

/// The structure the answer is expected to have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnswerShape {
    /// One value.
    Single,
    /// A list of values of one type.
    Listing,
    /// Rows and columns.
    Table,
    /// A hierarchy.
    Tree,
    /// Several named fields at once.
    NestedJson,
}

impl AnswerShape {
    /// Every shape, in registry order.
    pub const ALL: [AnswerShape; 5] =
        [AnswerShape::Single, AnswerShape::Listing, AnswerShape::Table, AnswerShape::Tree, AnswerShape::NestedJson];

    /// The snake_case name used in JSON and data files.
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerShape::Single => "single",
            AnswerShape::Listing => "listing",
            AnswerShape::Table => "table",
            AnswerShape::Tree => "tree",
            AnswerShape::NestedJson => "nested_json",
        }
    }
}

/// How a compound question splits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecompositionPattern {
    /// One question.
    Single,
    /// Several questions that can be answered separately.
    Independent,
    /// A later part needs the answer of an earlier one.
    Sequential,
    /// Several words for one thing ("exclusions and limits"): keep it whole.
    Unified,
    /// "If X, then what is Y?"
    Conditional,
}

/// The question's decomposition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Decomposition {
    /// The pattern.
    pub pattern: DecompositionPattern,
    /// The sub-questions, empty for `single` and `unified`.
    pub sub_questions: Vec<String>,
}

/// How much context around a hit the answer needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnswerContext {
    /// The matching line alone.
    Line,
    /// The paragraph around it.
    Paragraph,
    /// The whole page.
    Page,
    /// The TOC section.
    Section,
    /// The chapter (top-level section).
    Chapter,
    /// The whole document.
    Document,
}

/// Where in the document the question points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StructuralHints {
    /// Pages named in the question, 1-based, ascending, deduplicated.
    pub pages_hint: Vec<u32>,
    /// A section named in the question ("section 4.2", "Article 12").
    pub toc_section_hint: Option<String>,
    /// A layout element named in the question ("table", "footnote", "header").
    pub layout_hint: Option<String>,
    /// The phrase that triggered a hint, for the audit trail.
    pub detection_context: Option<String>,
    /// How much context around a hit the answer needs.
    pub answer_context: AnswerContext,
    /// Whether the question asks for a summary.
    pub needs_summary: bool,
    /// Whether the question asks about the document itself ("the date of
    /// this agreement", "the title of this paper"): its opening page, where
    /// a document states its title, date and parties, is read.
    #[serde(default)]
    pub about_document: bool,
}

/// Restrictions on which documents or parts of them are in scope.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct ScopeFilters {
    /// Document names or types the question is limited to (corpus mode).
    pub documents: Vec<String>,
    /// Parts of the document the question points to ("the balance sheet"),
    /// one entry per part: the titles a document may print over it, joined
    /// by ` | `. The retriever puts a page headed by one of them first.
    pub sections: Vec<String>,
    /// A period the question is limited to ("FY2022", "2019-2021").
    pub period: Option<String>,
}

/// How generation sends candidate passages to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChunkStrategy {
    /// All candidates in one call.
    Combined,
    /// Top-1 first; stop as soon as the evidence suffices.
    Sequential,
}

/// Which pipeline steps run (decided by the dispatcher, in code).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExecutionPlan {
    /// Walk the TOC one level at a time.
    pub use_toc_navigation: bool,
    /// Lexical retrieval over lines.
    pub use_keyword_retrieval: bool,
    /// Embedding retrieval.
    pub use_embeddings: bool,
    /// Follow "see section X" references.
    pub follow_cross_references: bool,
    /// Answer sub-questions separately.
    pub decompose_compound: bool,
    /// Retry with feedback when the evidence is insufficient.
    pub iterate_on_feedback: bool,
    /// Upper bound on generation iterations.
    pub max_iterations: u32,
    /// Whether page numbers are meaningful for this document.
    pub extract_page_numbers: bool,
}

/// What retrieval needs, and nothing else.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RetrievalQuery {
    /// The main query text (the corrected question without format constraints).
    pub main_query: String,
    /// Alternative phrasings (e.g. a follow-up rewritten self-contained).
    pub rewrites: Vec<String>,
    /// Identifiers, amounts and dates to match as exact text.
    pub anchor_keywords: Vec<String>,
    /// A section to route to, if the question names one.
    pub section_hint: Option<String>,
    /// Pages to restrict to (the user pinned them).
    pub pages: Vec<u32>,
    /// Scope restrictions.
    pub scope: ScopeFilters,
    /// Keywords that came from a follow-up's rewrite only (not from the
    /// user's own words): retrieval searches them, no prompt shows them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub follow_up_keywords: Vec<String>,
}

/// A pair of things the answer must not confuse.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Distinction {
    /// What the question asks for.
    pub wanted: String,
    /// What it must not be confused with.
    pub not_this: String,
}

/// What generation needs, and nothing else.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GenerationBrief {
    /// The user's wording, verbatim.
    pub original_question: String,
    /// Format constraints: `currency` → `EUR`, `date_format` → `YYYY-MM-DD`, ...
    pub format_constraints: BTreeMap<String, String>,
    /// A sentence telling the model which sense is meant.
    pub disambiguation: Option<String>,
    /// Pairs the answer must keep apart.
    pub must_distinguish: Vec<Distinction>,
    /// The noun phrase the question asks for, as worded ("dropout rate",
    /// "attention heads", "chief executive officer"): what the value is a
    /// value of. `None` when the wording names none.
    #[serde(default)]
    pub answer_focus: Option<String>,
    /// What the question restricts the answer to, as worded: named entities,
    /// periods, qualifiers ("Antarctica", "2019", "Plan B", "Japanese"). An
    /// answer whose evidence lacks one of them is not an answer.
    #[serde(default)]
    pub constraints: Vec<String>,
    /// The parts of a compound question asked independently ("How many X,
    /// and what percentage Y?"), each with its own type, focus and
    /// constraints; empty for a single question.
    #[serde(default)]
    pub parts: Vec<AskedPart>,
    /// The coordination the parts stand for when they distribute one asked
    /// phrase ("record date and the payment date"), as written: where the
    /// document prints it as one term ("research and development"), the
    /// question is read whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordination: Option<String>,
    /// The answer is computed from the two parts' figures, rounded as
    /// `format_constraints` asks (`decimals`, a `percent` unit), and cites
    /// both figures; `None` for an answer read as printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub computed: Option<Computed>,
}

/// How an answer is computed from the two figures its parts read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Computed {
    /// The first figure divided by the second ("current liabilities to
    /// total liabilities").
    Quotient,
    /// The relative change from the first figure to the second ("revenue
    /// growth from FY2016 to FY2017"): (second - first) / first.
    Growth,
}

/// One independently asked part of a compound question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AskedPart {
    /// The part, as a self-contained question.
    pub question: String,
    /// Its answer type (a row of the answer types table).
    pub answer_type: String,
    /// Its focus (see [`GenerationBrief::answer_focus`]).
    pub answer_focus: Option<String>,
    /// Its constraints (see [`GenerationBrief::constraints`]).
    pub constraints: Vec<String>,
}

/// The parsed question: every decision the question brick made, typed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ParsedQuestion {
    /// The raw input, kept for audit.
    pub original_question: String,
    /// The question after whitespace clean-up (typos are left alone, not guessed).
    pub corrected_question: String,
    /// The detected language (ISO 639-1), if any.
    pub language: Option<String>,
    /// Typed keywords.
    pub keywords: Vec<Keyword>,
    /// Expected answer structure.
    pub answer_shape: AnswerShape,
    /// Expected value type: a row of the answer types table
    /// (`text`, `amount`, `date`, `boolean`, `iban`, `address`, ...).
    pub answer_type: String,
    /// The concept matched in the concepts table, if any.
    pub matched_concept: Option<String>,
    /// How the question splits.
    pub decomposition: Decomposition,
    /// Scope restrictions.
    pub scope_filters: ScopeFilters,
    /// Pages, sections and context size.
    pub structural_hints: StructuralHints,
    /// How generation sends passages (cascade: concept > shape/type > project).
    pub chunk_strategy: ChunkStrategy,
    /// The model to use (a row of the models table).
    pub suggested_model: String,
    /// Which sense is meant, when the question is ambiguous.
    pub disambiguation: Option<String>,
    /// Things the answer must not be ("not the deductible").
    pub distractors: Vec<String>,
    /// Which pipeline steps run.
    pub activations: ExecutionPlan,
    /// What the parser noticed about its own choices, in plain words.
    pub parsing_notes: Vec<String>,
    /// A clarifying question to offer the user.
    pub suggested_clarification: Option<String>,
    /// Why the question was judged ambiguous.
    pub ambiguity_reason: Option<String>,
    /// Which parser produced this record and its version (`rules/0.1`).
    pub parser: String,
    /// The brief for retrieval.
    pub retrieval: RetrievalQuery,
    /// The brief for generation.
    pub generation: GenerationBrief,
}

impl ParsedQuestion {
    /// Keywords that are not regular expressions, as plain strings.
    pub fn plain_keywords(&self) -> impl Iterator<Item = &Keyword> {
        self.keywords.iter().filter(|k| !k.is_regex)
    }
}

impl ExecutionPlan {
    /// The plan before the dispatcher adapts it to a document: every
    /// retrieval step a PDF supports, no embeddings, one iteration.
    pub fn baseline() -> ExecutionPlan {
        ExecutionPlan {
            use_toc_navigation: true,
            use_keyword_retrieval: true,
            use_embeddings: false,
            follow_cross_references: false,
            decompose_compound: false,
            iterate_on_feedback: false,
            max_iterations: 1,
            extract_page_numbers: true,
        }
    }
}

impl ParsedQuestion {
    /// A record with nothing parsed yet: the question as a single text
    /// question, no keywords, baseline activations. Parsers start from it;
    /// tests build records from it.
    pub fn unparsed(question: &str, parser: &str) -> ParsedQuestion {
        let corrected = question.split_whitespace().collect::<Vec<_>>().join(" ");
        ParsedQuestion {
            original_question: question.to_owned(),
            corrected_question: corrected.clone(),
            language: None,
            keywords: Vec::new(),
            answer_shape: AnswerShape::Single,
            answer_type: "text".to_owned(),
            matched_concept: None,
            decomposition: Decomposition { pattern: DecompositionPattern::Single, sub_questions: Vec::new() },
            scope_filters: ScopeFilters::default(),
            structural_hints: StructuralHints {
                pages_hint: Vec::new(),
                toc_section_hint: None,
                layout_hint: None,
                detection_context: None,
                answer_context: AnswerContext::Line,
                needs_summary: false,
                about_document: false,
            },
            chunk_strategy: ChunkStrategy::Sequential,
            suggested_model: String::new(),
            disambiguation: None,
            distractors: Vec::new(),
            activations: ExecutionPlan::baseline(),
            parsing_notes: Vec::new(),
            suggested_clarification: None,
            ambiguity_reason: None,
            parser: parser.to_owned(),
            retrieval: RetrievalQuery {
                main_query: corrected,
                rewrites: Vec::new(),
                anchor_keywords: Vec::new(),
                section_hint: None,
                pages: Vec::new(),
                scope: ScopeFilters::default(),
                follow_up_keywords: Vec::new(),
            },
            generation: GenerationBrief {
                original_question: question.to_owned(),
                format_constraints: BTreeMap::new(),
                disambiguation: None,
                must_distinguish: Vec::new(),
                answer_focus: None,
                constraints: Vec::new(),
                parts: Vec::new(),
                coordination: None,
                computed: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsed_question_round_trips_through_json() {
        let mut parsed = ParsedQuestion::unparsed("  What is   the premium on page 3? ", "test");
        parsed.keywords.push(Keyword::direct("premium"));
        parsed.keywords.push(Keyword {
            text: "prime".into(),
            weight: 0.8,
            source: KeywordSource::ExpertDictionary,
            is_regex: false,
            semantic_group: Some("premium".into()),
        });
        parsed.structural_hints.pages_hint = vec![3];
        parsed.generation.format_constraints.insert("currency".into(), "EUR".into());
        parsed.generation.must_distinguish.push(Distinction { wanted: "limit".into(), not_this: "deductible".into() });
        assert_eq!(parsed.corrected_question, "What is the premium on page 3?");
        let json = serde_json::to_string(&parsed).unwrap();
        let back: ParsedQuestion = serde_json::from_str(&json).unwrap();
        assert_eq!(back, parsed);
        assert!(json.contains("\"source\":\"expert_dictionary\""));
    }
}
