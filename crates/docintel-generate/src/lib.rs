//! The docintel generation brick: typed answers whose every claim cites the
//! exact source lines, and the check that the citations hold.
//!
//! - [`ExtractiveGenerator`] implements [`docintel_schema::Generator`] without a
//!   model: it reads amounts, dates, booleans, e-mail addresses, IBANs, URLs and
//!   text lines straight from the passages retrieval ranked, cites the line it
//!   read, and answers "not found" (with a warning saying what it looked for)
//!   rather than guess.
//! - [`verify_citations`] checks any answer (extractive or from a model)
//!   against the document and the passages shown: real lines, inside one shown
//!   passage, right page, quote present in the cited lines.
//! - [`extract`] holds the value finders (money, dates, patterns) on their own.
//! - [`LlmGenerator`] implements the same contract with any
//!   [`docintel_schema::LanguageModel`] (strict structured output, combined or
//!   sequential with a sufficiency exit, token/time budgets and a headroom
//!   switch, see [`DispatchOptions`]); [`prompt`] composes its prompts;
//!   [`fewshot`] picks examples from a bank; [`custom`] checks a
//!   caller-supplied answer schema; [`fields`] extracts several named fields
//!   in one call with per-field evidence; [`feedback`] tells the facade when
//!   and with what to retry retrieval (`iterate_on_feedback`).
//!
//! ```
//! use docintel_generate::{ExtractiveGenerator, verify_citations};
//! use docintel_schema::{
//!     AnswerValue, BBox, DocumentFormat, DocumentProfile, Generator, Keyword, Line, NullSink, ParsedDocument,
//!     ParsedQuestion, Passage,
//! };
//!
//! let texts = ["Invoice Date: August 3 , 2014", "Subtotal $3.70", "Total for this invoice $4.11"];
//! let lines = texts
//!     .iter()
//!     .enumerate()
//!     .map(|(i, t)| Line { line_id: i as u32 + 1, page: 1, line_in_page: i as u32 + 1, text: t.to_string(), bbox: BBox::default() })
//!     .collect();
//! let profile = DocumentProfile {
//!     format: DocumentFormat::Pdf, n_pages: Some(1), has_toc: false, has_tables: false, languages: vec![],
//!     is_scanned: false, doc_type: None, typical_fields: vec![], summary: None,
//! };
//! let document = ParsedDocument { source: "aws.pdf".into(), profile, lines, pages: vec![], toc: vec![], diagnostics: vec![] };
//! let passage = Passage {
//!     line_start: 1, line_end: 3, page: 1, score: 1.0, anchor_line: 3, matched_keywords: vec![], pinned: false,
//! };
//!
//! let mut question = ParsedQuestion::unparsed("What is the total amount?", "example");
//! question.answer_type = "amount".into();
//! question.keywords = vec![Keyword::direct("total"), Keyword::direct("amount")];
//!
//! let generation = ExtractiveGenerator::new().generate(&question, &document, &[passage], &mut NullSink).unwrap();
//! let answer = &generation.answer;
//! match &answer.items[0].value {
//!     AnswerValue::Amount(amount) => {
//!         assert_eq!(amount.value, 4.11);
//!         assert_eq!(amount.currency.as_deref(), Some("USD"));
//!     }
//!     other => panic!("{other:?}"),
//! }
//! assert!(verify_citations(answer, &document, &generation.passages_shown).is_empty());
//! ```

#![warn(missing_docs)]

pub mod custom;
pub mod extract;
mod extractive;
pub mod feedback;
pub mod fewshot;
pub mod fields;
mod keywords;
mod labelled;
mod layout;
pub mod llm;
pub mod prompt;
mod reader;
pub mod reply;
mod statement;
mod table;
pub mod validate;

pub use custom::{CustomSchema, CustomSchemaError};
pub use extractive::{
    EXTRACTIVE_VERSION, ExtractiveGenerator, GenerateError, ScoredCandidate, reader_evidence_features, reader_features,
    reader_groups,
};
pub use feedback::{RetryHint, retry_hint};
pub use fewshot::{ExampleBank, FewShotSelection};
pub use fields::{InvoiceFields, extract_fields, verify_field_citations};
pub use llm::{
    DispatchOptions, LLM_GENERATOR_VERSION, LlmGenerateError, LlmGenerator, estimate_input_tokens, sequential_batches,
};
pub use prompt::{FewShotExample, TEMPLATE_VERSION, build_system_prompt, build_user_prompt};
pub use validate::{citation_value_checks, quote_holds_value, verify_citations, verify_span};

/// A passage whose line range does not fit the document (a caller bug).
pub(crate) struct BadPassage {
    pub(crate) index: usize,
    pub(crate) line_start: u32,
    pub(crate) line_end: u32,
    pub(crate) n_lines: usize,
}

/// The first passage that is empty, reversed or beyond the line table: both
/// generators refuse to read such input rather than index out of range.
pub(crate) fn first_passage_out_of_document(
    document: &docintel_schema::ParsedDocument,
    passages: &[docintel_schema::Passage],
) -> Option<BadPassage> {
    let n_lines = document.lines.len();
    passages.iter().enumerate().find_map(|(index, p)| {
        (p.line_start == 0 || p.line_start > p.line_end || p.line_end as usize > n_lines).then_some(BadPassage {
            index,
            line_start: p.line_start,
            line_end: p.line_end,
            n_lines,
        })
    })
}

#[cfg(test)]
pub(crate) mod test_support {
    use docintel_schema::{BBox, ParsedDocument, Passage};

    /// A document from `(text, page)` rows, line ids 1..=n (the shared
    /// test builder: no page table).
    pub(crate) fn doc(rows: &[(&str, u32)]) -> ParsedDocument {
        docintel_test_support::rows(rows).build()
    }

    /// A document with detected languages.
    pub(crate) fn doc_in(rows: &[(&str, u32)], languages: &[&str]) -> ParsedDocument {
        docintel_test_support::rows(rows).languages(languages).build()
    }

    /// A one-page document from `(text, [x0, y0, x1, y1])` rows (PDF points,
    /// origin bottom-left), line ids 1..=n.
    pub(crate) fn doc_boxed(rows: &[(&str, [f32; 4])]) -> ParsedDocument {
        let mut document = doc(&rows.iter().map(|(text, _)| (*text, 1)).collect::<Vec<_>>());
        for (line, (_, [x0, y0, x1, y1])) in document.lines.iter_mut().zip(rows) {
            line.bbox = BBox { x0: *x0, y0: *y0, x1: *x1, y1: *y1 };
        }
        document
    }

    /// A passage over lines `start..=end` of `page`.
    pub(crate) fn passage(start: u32, end: u32, page: u32) -> Passage {
        Passage {
            line_start: start,
            line_end: end,
            page,
            score: 1.0,
            anchor_line: start,
            matched_keywords: Vec::new(),
            pinned: false,
        }
    }

    /// One passage per page, covering the whole page, in page order.
    pub(crate) fn page_passages(document: &ParsedDocument) -> Vec<Passage> {
        let mut out: Vec<Passage> = Vec::new();
        for line in &document.lines {
            match out.last_mut() {
                Some(p) if p.page == line.page => p.line_end = line.line_id,
                _ => out.push(passage(line.line_id, line.line_id, line.page)),
            }
        }
        out
    }
}
