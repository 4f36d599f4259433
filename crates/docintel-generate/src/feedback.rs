//! What the facade needs to run `iterate_on_feedback`: the generator cannot
//! call retrieval (bricks depend only on the schema), so it exposes the
//! decision and the keywords, and the facade runs the loop.
//!
//! Loop contract (the facade's side):
//! 1. iteration 1: retrieve, generate, [`crate::verify_citations`];
//! 2. call [`retry_hint`] with the generation, the citation problems, the
//!    iteration number, the question's `max_iterations` and the keywords the
//!    question already has; `None` ends the loop (answer sufficient, no
//!    iterations left, `iterate_on_feedback` off, or no new keyword — a retry
//!    with the same query would retrieve the same passages);
//! 3. on `Some(hint)`: add `hint.keywords` to the parsed question as
//!    [`docintel_schema::KeywordSource::Llm`] keywords, retrieve again, generate
//!    again, record the hint's `reason` in the trace and `_meta`, and go to 2
//!    with iteration + 1;
//! 4. return the last generation whose answer was found with verified
//!    citations, else the last one; `_meta.iterations` counts the rounds.
//!
//! ```
//! use docintel_generate::feedback::retry_hint;
//! use docintel_schema::{Answer, AnswerFeedback, AnswerShape, ExtractionMethod};
//! let mut feedback = AnswerFeedback::not_found("no total on this page");
//! feedback.llm_discovered_keywords = vec!["Amount Due".into(), "total".into()];
//! let answer = Answer {
//!     answer_shape: AnswerShape::Single, answer_type: "amount".into(), items: vec![],
//!     extraction_method: ExtractionMethod::Llm, feedback,
//! };
//! let hint = retry_hint(&answer, &[], 1, 2, &["total".to_owned()]).unwrap();
//! assert_eq!(hint.keywords, ["amount due"]);
//! assert!(retry_hint(&answer, &[], 2, 2, &[]).is_none(), "no iterations left");
//! ```

use docintel_schema::{Answer, CitationProblem, text};

/// Why and with what to retry retrieval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryHint {
    /// New keywords (normalised, deduplicated, none already known), in the
    /// model's order.
    pub keywords: Vec<String>,
    /// Why the answer is insufficient, in plain words.
    pub reason: String,
}

/// Whether `answer` is insufficient: not found, incomplete, or with a
/// citation that did not verify.
pub fn insufficient(answer: &Answer, problems: &[CitationProblem]) -> Option<String> {
    let feedback = &answer.feedback;
    if !feedback.answer_found {
        Some("answer not found in the passages shown".to_owned())
    } else if !problems.is_empty() {
        Some(format!("{} citation problem(s)", problems.len()))
    } else if !feedback.complete_answer_found {
        Some("answer incomplete".to_owned())
    } else {
        None
    }
}

/// The retry to run after `iteration` (1-based), or `None` when the loop
/// stops. `known` are the question's keywords (any case).
pub fn retry_hint(
    answer: &Answer,
    problems: &[CitationProblem],
    iteration: u32,
    max_iterations: u32,
    known: &[String],
) -> Option<RetryHint> {
    if iteration >= max_iterations {
        return None;
    }
    let reason = insufficient(answer, problems)?;
    let known: Vec<String> = known.iter().map(|k| text::normalize(k)).collect();
    let mut keywords: Vec<String> = Vec::new();
    for keyword in &answer.feedback.llm_discovered_keywords {
        let keyword = text::normalize(keyword).trim().to_owned();
        if keyword.is_empty() || known.contains(&keyword) || keywords.contains(&keyword) {
            continue;
        }
        keywords.push(keyword);
    }
    if keywords.is_empty() {
        return None;
    }
    Some(RetryHint { reason: format!("{reason}; retrying retrieval with {}", keywords.join(", ")), keywords })
}

#[cfg(test)]
mod tests {
    use super::*;
    use docintel_schema::{AnswerFeedback, AnswerShape, ExtractionMethod};

    fn answer(found: bool, complete: bool, discovered: &[&str]) -> Answer {
        let mut feedback = AnswerFeedback::not_found("w");
        feedback.answer_found = found;
        feedback.complete_answer_found = complete;
        feedback.llm_discovered_keywords = discovered.iter().map(|s| (*s).to_owned()).collect();
        Answer {
            answer_shape: AnswerShape::Single,
            answer_type: "text".into(),
            items: vec![],
            extraction_method: ExtractionMethod::Llm,
            feedback,
        }
    }

    #[test]
    fn a_sufficient_answer_never_retries() {
        assert_eq!(retry_hint(&answer(true, true, &["x"]), &[], 1, 3, &[]), None);
    }

    #[test]
    fn incomplete_or_unverified_answers_retry_with_new_keywords_only() {
        let hint = retry_hint(&answer(true, false, &["Due Date", "due  date", "DATE"]), &[], 1, 3, &["date".into()]);
        let hint = hint.unwrap();
        assert_eq!(hint.keywords, ["due date"]);
        assert!(hint.reason.starts_with("answer incomplete"), "{}", hint.reason);
        let problem = CitationProblem { item: 0, span: 0, problem: "quote not found".into() };
        let hint = retry_hint(&answer(true, true, &["iban"]), &[problem], 2, 3, &[]).unwrap();
        assert!(hint.reason.starts_with("1 citation problem"), "{}", hint.reason);
    }

    #[test]
    fn the_loop_ends_without_new_keywords_or_iterations() {
        assert_eq!(retry_hint(&answer(false, false, &[]), &[], 1, 3, &[]), None);
        assert_eq!(retry_hint(&answer(false, false, &["total"]), &[], 1, 3, &["Total".into()]), None);
        assert_eq!(retry_hint(&answer(false, false, &["balance"]), &[], 3, 3, &[]), None);
        assert!(retry_hint(&answer(false, false, &["balance"]), &[], 2, 3, &[]).is_some());
    }
}
