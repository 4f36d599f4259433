//! Citation verification: every span must point at real lines inside a passage
//! that was shown, on the right page, and its quote must read in those lines.
//!
//! Quotes are compared in [`text::squash`] form (folded, lower-cased, all
//! whitespace removed), the same normalisation retrieval matches with, so a
//! quote that differs from the source only in spacing or line breaks verifies
//! and any changed character does not.

use docintel_schema::text;
use docintel_schema::{Answer, CitationProblem, ParsedDocument, Passage, Span};

/// Checks every span of every item of `answer` against `document` and the
/// passages `shown` to the generator. Returns one problem per failed check;
/// an empty list means every citation verified.
///
/// An item without spans is a problem (reported with span index 0).
pub fn verify_citations(answer: &Answer, document: &ParsedDocument, shown: &[Passage]) -> Vec<CitationProblem> {
    let mut problems = Vec::new();
    for (item_index, item) in answer.items.iter().enumerate() {
        if item.spans.is_empty() {
            problems.push(CitationProblem { item: item_index, span: 0, problem: "item has no spans".to_owned() });
        }
        for (span_index, span) in item.spans.iter().enumerate() {
            for problem in verify_span(span, document, shown) {
                problems.push(CitationProblem { item: item_index, span: span_index, problem });
            }
        }
    }
    problems
}

/// The problems of one span, in plain words (empty when it verifies). Shared
/// by every walk over evidence (answer items, extracted fields).
pub fn verify_span(span: &Span, document: &ParsedDocument, shown: &[Passage]) -> Vec<String> {
    let mut problems = Vec::new();
    let (start, end) = (span.line_start, span.line_end);
    if start > end {
        problems.push(format!("reversed range: line_start {start} > line_end {end}"));
    }
    let first = document.line(start);
    if first.is_none() {
        problems.push(format!("line {start} does not exist (document has {} lines)", document.lines.len()));
    }
    if document.line(end).is_none() {
        problems.push(format!("line {end} does not exist (document has {} lines)", document.lines.len()));
    }
    if start <= end && !shown.iter().any(|p| p.line_start <= start && end <= p.line_end) {
        problems.push(format!("lines {start}-{end} are not inside one passage shown"));
    }
    if let Some(first) = first
        && first.page != span.page
    {
        problems.push(format!("page {} cited but line {start} is on page {}", span.page, first.page));
    }
    let quote = text::squash(&span.quote);
    if quote.is_empty() {
        problems.push("empty quote".to_owned());
    } else if start <= end && first.is_some() && document.line(end).is_some() {
        let cited: Vec<&str> = document.line_range(start, end).iter().map(|l| l.text.as_str()).collect();
        if !text::squash(&cited.join(" ")).contains(&quote) {
            problems.push(format!(
                "quote {:?} not found in lines {start}-{end}",
                docintel_schema::text::truncate_chars(&span.quote, 80)
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{doc, passage};
    use docintel_schema::{AnswerFeedback, AnswerShape, AnswerValue, ExtractionMethod, Item};

    fn answer(spans: Vec<Vec<Span>>) -> Answer {
        Answer {
            answer_shape: AnswerShape::Single,
            answer_type: "text".to_owned(),
            items: spans
                .into_iter()
                .map(|spans| Item { value: AnswerValue::Text("x".to_owned()), text: None, spans })
                .collect(),
            extraction_method: ExtractionMethod::Extractive,
            feedback: AnswerFeedback::not_found("test"),
        }
    }

    fn span(line_start: u32, line_end: u32, page: u32, quote: &str) -> Span {
        Span { line_start, line_end, page, quote: quote.to_owned() }
    }

    /// Checks one span; `expect` lists substrings of the expected problems, in order.
    fn check(s: Span, expect: &[&str]) {
        let document = doc(&[
            ("Invoice Number: 42183017", 1),
            ("Invoice Date: August 3 , 2014", 1),
            ("Total  for this invoice $4.11", 1),
            ("Page two header", 2),
            ("Grand Total 319.00", 2),
        ]);
        let shown = [passage(1, 3, 1), passage(4, 5, 2)];
        let problems = verify_citations(&answer(vec![vec![s.clone()]]), &document, &shown);
        let texts: Vec<&str> = problems.iter().map(|p| p.problem.as_str()).collect();
        assert_eq!(texts.len(), expect.len(), "{s:?}: {texts:?}");
        for (got, want) in texts.iter().zip(expect) {
            assert!(got.contains(want), "{s:?}: {got:?} lacks {want:?}");
        }
    }

    #[test]
    fn good_spans_verify() {
        check(span(3, 3, 1, "Total for this invoice $4.11"), &[]);
        check(span(2, 3, 1, "August 3, 2014 Total for"), &[]);
        check(span(3, 3, 1, "TOTAL FOR THIS INVOICE"), &[]);
        check(span(5, 5, 2, "319.00"), &[]);
    }

    #[test]
    fn bad_spans_fail() {
        check(span(3, 3, 1, "Total for this invoice $4.17"), &["not found in lines 3-3"]);
        check(span(3, 2, 1, "Total"), &["reversed range"]);
        check(span(3, 3, 2, "$4.11"), &["page 2 cited but line 3 is on page 1"]);
        check(span(3, 4, 1, "$4.11"), &["not inside one passage shown"]);
        check(span(3, 123_456_789, 1, "$4.11"), &["line 123456789 does not exist", "not inside one passage"]);
        check(span(0, 1, 1, "Invoice"), &["line 0 does not exist", "not inside one passage"]);
        check(span(1, 1, 1, "  "), &["empty quote"]);
    }

    #[test]
    fn span_outside_shown_passages_fails() {
        let document = doc(&[("a 1.00", 1), ("b 2.00", 1), ("c 3.00", 1)]);
        let shown = [passage(1, 1, 1)];
        let problems = verify_citations(&answer(vec![vec![span(3, 3, 1, "c 3.00")]]), &document, &shown);
        assert_eq!(problems.len(), 1);
        assert_eq!((problems[0].item, problems[0].span), (0, 0));
    }

    #[test]
    fn item_without_spans_is_a_problem() {
        let document = doc(&[("a", 1)]);
        let problems = verify_citations(&answer(vec![vec![]]), &document, &[passage(1, 1, 1)]);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].problem, "item has no spans");
    }
}
