//! Task framing: the parts of a question that instruct the answerer rather
//! than say what to look for ("Assume that you are a public equities
//! analyst.", "Give a response to the question by relying on the details
//! shown in the cash flow statement.", "Round your answer to two decimal
//! places.").
//!
//! Their words are not searched for: "relying", "response", "analyst" are
//! rare in a filing, so they would weigh more than the figure asked for.
//! What they carry is kept elsewhere: a named part becomes a section hint
//! (`parts`), a rounding or unit instruction a format constraint.
//!
//! A clause is framing when a persona pattern matches it, or when every
//! content word in it is framing vocabulary or part of a part's name. A
//! clause with any other content word is never framing, and nothing is
//! masked when it would leave the question without a content clause.

use std::ops::Range;

use regex::Regex;

use crate::constraints::FormatHit;
use crate::lexicon::{is_stop, strip_clitic, tokenize};

/// Words that describe the task, not the document (English).
#[rustfmt::skip]
const VOCABULARY: &[&str] = &[
    "answer", "answers", "answered", "answering", "question", "questions", "asked", "respond", "response", "reply",
    "rely", "relying", "relied", "utilize", "utilizing", "utilise", "utilising", "use", "using", "used", "base",
    "based", "basing", "referencing", "reference", "considering", "consider", "drawing", "draw", "conclusions",
    "conclusion", "taking", "take", "account", "agreement", "judgment", "judgments", "judgement", "judgements",
    "information", "details", "detail", "data", "line", "items", "provided", "shown", "outlined", "stated",
    "displayed", "presented", "primarily", "mainly", "solely", "clearly", "plainly", "best", "abilities", "ability",
    "resource", "resources", "access", "help", "compute", "calculate", "extract", "approach", "address", "solution",
    "need", "want", "reasonable", "approximation", "exact", "number", "possible", "financial", "metric", "metrics",
    "following", "here", "here's", "let's", "assume", "assuming", "perspective", "standpoint", "analyst", "off",
    "units", "unit", "decimal", "places", "place", "round", "rounded", "percents", "percent", "percentage",
    "millions", "billions", "thousands", "usd", "make", "sure", "work", "statement", "statements", "utilization",
    "located", "found", "refer", "referring", "million", "billion", "thousand", "integer", "integers", "format",
    "formatted", "ascending", "descending", "give", "return", "write", "nearest", "decimals", "digits",
    "appropriate", "float",
];

/// Words that open a question.
const QUESTION_WORDS: &[&str] = &["how", "what", "which", "who", "whom", "whose", "when", "where", "why"];

/// The compiled framing patterns.
#[derive(Debug, Clone)]
pub(crate) struct FramingRules {
    persona: Vec<Regex>,
    rounding: Regex,
    units_of: Regex,
    currency_unit: Regex,
    clause: Regex,
}

impl FramingRules {
    pub(crate) fn new() -> FramingRules {
        let compile = |source: &str| Regex::new(source).expect("framing regex compiles");
        FramingRules {
            persona: vec![
                compile(
                    r"(?i)\b(?:assume|imagine|suppose|pretend)\s+(?:that\s+)?you\s+(?:are|were|have|only)\b[^.?!:;]*",
                ),
                compile(r"(?i)(?:^|[.?!:;]\s*)(you\s+are\s+(?:a|an)\s+[^.?!:;]*)"),
                compile(r"(?i)\bas\s+if\s+you\s+(?:are|were)\b[^.?!:;]*"),
                compile(
                    r"(?i)\b(?:by\s+)?(?:adopting|assuming|taking)\s+the\s+(?:perspective|standpoint|viewpoint|role|position)\s+of\b[^.?!:;]*",
                ),
                // What to answer when the thing asked is absent or does not
                // apply: "If operating margin is not a useful metric for a
                // company like this, then please state that and explain
                // why." The condition restates the question's own subject;
                // the imperative must follow the comma or "then" directly.
                compile(
                    r"(?i)\bif\s+[^.?!:;]*?\b(?:not|no)\b[^.?!:;]*?(?:,|\bthen\b)\s*(?:then\s+)?(?:please\s+)?(?:just\s+)?(?:state|say|explain|answer|respond|reply|return|write|indicate|mention|note)\b[^.?!:;]*",
                ),
            ],
            rounding: compile(
                r"(?i)\bround(?:ed|ing)?\s+(?:(?:your|the)\s+)?(?:(?:final\s+)?(?:answer|result|value|figure)\s+)?(?:to\s+)?(?:the\s+nearest\s+)?(zero|one|two|three|four|\d)\s+decimal(?:\s+places?|s)?",
            ),
            units_of: compile(
                r"(?i)\bin\s+(?:the\s+)?units?\s+of\s+(percents?|percentages?|millions|billions|thousands)\b",
            ),
            currency_unit: compile(r"(?i)\b(?:usd|us\s+dollars|eur|euros|gbp|\$)\s*(millions|billions|thousands)\b"),
            clause: compile(r"[^.?!:;,()]+"),
        }
    }

    /// Rounding and unit instructions, for the format constraints.
    pub(crate) fn formats(&self, text: &str) -> Vec<FormatHit> {
        let mut found = Vec::new();
        for c in self.rounding.captures_iter(text) {
            let word = c.get(1).expect("group").as_str().to_lowercase();
            let digits = match word.as_str() {
                "zero" => "0",
                "one" => "1",
                "two" => "2",
                "three" => "3",
                "four" => "4",
                other => other,
            };
            found.push(FormatHit { key: "decimals", value: digits.to_owned(), span: c.get(0).expect("m").range() });
        }
        for c in self.units_of.captures_iter(text).chain(self.currency_unit.captures_iter(text)) {
            let word = c.get(1).expect("group").as_str().to_lowercase();
            let unit = if word.starts_with("percent") { "percent" } else { word.as_str() };
            found.push(FormatHit { key: "unit", value: unit.to_owned(), span: c.get(1).expect("g").range() });
        }
        found
    }

    /// Spans of `text` that frame the task. `part_spans` are the spans naming
    /// document parts (they count as framing words inside a framing clause).
    pub(crate) fn spans(&self, text: &str, part_spans: &[Range<usize>], language: Option<&str>) -> Vec<Range<usize>> {
        if language.is_some_and(|l| l != "en") {
            return Vec::new();
        }
        let mut spans: Vec<Range<usize>> = Vec::new();
        for re in &self.persona {
            for c in re.captures_iter(text) {
                spans.push(c.get(1).unwrap_or_else(|| c.get(0).expect("match")).range());
            }
        }
        let mut content_clause = false;
        // A comma or point inside a figure or an abbreviation ("1,000,000",
        // "U.S.") ends no clause: the same text with those bytes masked.
        let bytes = text.as_bytes();
        let joined: String = text
            .char_indices()
            .map(|(at, c)| {
                let inner = matches!(c, ',' | '.')
                    && at > 0
                    && bytes.get(at + 1).is_some_and(u8::is_ascii_alphanumeric)
                    && bytes[at - 1].is_ascii_alphanumeric()
                    && (c == '.' || (bytes[at - 1].is_ascii_digit() && bytes[at + 1].is_ascii_digit()));
                if inner { '_' } else { c }
            })
            .collect();
        for found in self.clause.find_iter(&joined) {
            let range = found.range();
            let clause = &text[range.clone()];
            if spans.iter().any(|s| s.start <= range.start && range.end <= s.end) {
                continue;
            }
            // A second question joined to the first ("and how many were
            // based in the U.S.") is a question, whatever its words.
            let tokens = tokenize(clause);
            let words: Vec<String> = tokens.iter().take(2).map(|t| t.lower()).collect();
            if words.len() == 2
                && matches!(words[0].as_str(), "and" | "or")
                && QUESTION_WORDS.contains(&words[1].as_str())
            {
                content_clause = true;
                continue;
            }
            let mut framing_words = 0;
            let mut content = 0;
            for token in tokens {
                let at = range.start + token.start;
                if part_spans.iter().any(|p| p.start <= at && at < p.end) {
                    framing_words += 1;
                    continue;
                }
                // Words left over from a persona span cut mid-clause.
                if spans.iter().any(|s| s.start <= at && at < s.end) {
                    continue;
                }
                let lower = token.lower();
                let word = strip_clitic(&lower);
                if is_stop(word, language) || word.chars().count() == 1 {
                    continue;
                }
                if VOCABULARY.contains(&word) {
                    framing_words += 1;
                } else {
                    content += 1;
                }
            }
            if content == 0 && framing_words > 0 {
                spans.push(range);
            } else if content > 0 {
                content_clause = true;
            }
        }
        if !content_clause {
            return Vec::new();
        }
        spans.sort_by_key(|s| s.start);
        spans
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parts::DocumentParts;

    fn masked(question: &str) -> String {
        let parts = DocumentParts::builtin().find(question, 3).named_spans;
        let spans = FramingRules::new().spans(question, &parts, Some("en"));
        let mut kept = String::new();
        for (at, c) in question.char_indices() {
            if !spans.iter().any(|s| s.contains(&at)) {
                kept.push(c);
            }
        }
        kept.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn a_second_question_is_never_framing() {
        let q = "How many people did Pfizer employ worldwide at the end of 2021, and how many were based in the U.S.?";
        assert_eq!(masked(q), q);
        let q =
            "What is the out-patient physiotherapy benefit limit on the highest tier (USD 1,000,000 in-patient limit)?";
        assert_eq!(masked(q), q);
    }

    #[test]
    fn persona_and_source_instructions_are_framing() {
        assert_eq!(
            masked(
                "What is the FY2018 capital expenditure amount (in USD millions) for 3M? Give a response to the question by relying on the details shown in the cash flow statement."
            ),
            "What is the FY2018 capital expenditure amount () for 3M?."
        );
        assert_eq!(
            masked(
                "Assume that you are a public equities analyst. Answer the following question by primarily using information that is shown in the balance sheet: what is the year end FY2018 net PPNE for 3M? Answer in USD billions."
            ),
            ".: what is the year end FY2018 net PPNE for 3M?."
        );
        assert_eq!(
            masked(
                "When primarily referencing the income statement and the statement of financial position, what is the FY2021 inventory turnover ratio for Nike?"
            ),
            ", what is the FY2021 inventory turnover ratio for Nike?"
        );
    }

    #[test]
    fn what_to_answer_when_the_thing_is_absent_is_framing() {
        assert_eq!(
            masked(
                "What drove operating margin change as of FY2022 for 3M? If operating margin is not a useful metric for a company like this, then please state that and explain why."
            ),
            "What drove operating margin change as of FY2022 for 3M? ."
        );
        assert_eq!(
            masked(
                "What is the quantity of restructuring costs directly outlined in Pepsico's income statements for FY2022? If restructuring costs are not explicitly outlined then state 0."
            ),
            "What is the quantity of restructuring costs directly outlined in Pepsico's income statements for FY2022? ."
        );
        // A condition that is the question itself stays.
        let question = "If the premium is not paid, what does the policy say about cancellation?";
        assert_eq!(masked(question), question);
    }

    #[test]
    fn a_clause_with_content_is_never_framing() {
        let question = "What was the largest liability in American Express's Balance Sheet in 2022?";
        assert_eq!(masked(question), question);
        // Nothing but framing words: the question itself, kept.
        assert_eq!(masked("What information is provided?"), "What information is provided?");
        assert_eq!(
            masked("Which controls are listed as related to SC-1?"),
            "Which controls are listed as related to SC-1?"
        );
    }

    #[test]
    fn how_to_write_the_answer_is_framing() {
        assert_eq!(
            masked("What is total current assets in FY2023? Answer in million."),
            "What is total current assets in FY2023?."
        );
        assert_eq!(
            masked("How many square miles does the county cover? Give me an appropriate integer."),
            "How many square miles does the county cover?."
        );
    }

    #[test]
    fn rounding_and_units_become_formats() {
        let rules = FramingRules::new();
        let found: Vec<(&str, String)> = rules
            .formats("Round your answer to two decimal places. Answer in units of percents. In USD millions.")
            .into_iter()
            .map(|f| (f.key, f.value))
            .collect();
        assert_eq!(
            found,
            [("decimals", "2".to_owned()), ("unit", "percent".to_owned()), ("unit", "millions".to_owned())]
        );
    }
}
