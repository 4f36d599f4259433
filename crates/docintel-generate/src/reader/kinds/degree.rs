//! Academic degrees ("which degree does the candidate hold" → `Bachelor of
//! Science in Computer Science`): a degree's name as printed, with its
//! field when the row gives one ("in Computer Science", ", Business
//! Administration"); an abbreviation (`MBA`, `Ph.D.`, `B.Sc.`) fits less
//! than a spelled-out name.

use std::sync::LazyLock;

use docintel_schema::AnswerValue;
use regex::Regex;

use super::{FindContext, Found};
use crate::extract::date::month_number;

/// A spelled-out degree: its level, then `of`/`in` and capitalised words
/// (the discipline), then an optional field after `in` or a comma.
static SPELLED: LazyLock<Regex> = LazyLock::new(|| {
    let field = r"(?:[A-Z][\w&'-]*|and|of|&)(?:\s+(?:[A-Z][\w&'-]*|and|of|&))*";
    Regex::new(&format!(
        r"\b(?:(?:Bachelor|Master|Doctor|Associate)(?:['’]s)?(?:\s+degree)?\s+(?:of|in)\s+{field}|(?:Licence|Doctorat|Dipl[ôo]me\s+d['’]\w+)(?:\s+(?:en|de|d['’])\s*{field})?)(?:(?:\s+in|,)\s+{field})?"
    ))
    .expect("degree pattern")
});

/// A degree's abbreviation, standing alone.
static ABBREVIATED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:MBA|Ph\.\s?D\.?|PhD|B\.\s?Sc\.?|M\.\s?Sc\.?|BSc|MSc|B\.\s?[AS]\.|M\.\s?[AS]\.|B\.\s?Tech|M\.\s?Tech|LL\.\s?[BM]\.?|J\.D\.|M\.Eng|B\.Eng)(?:\s+in\s+[A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*)*)?")
        .expect("degree abbreviation pattern")
});

/// Fit of an abbreviation: surely a degree, but terser than its name.
const ABBREVIATION_FIT: f64 = 0.8;

pub(super) fn find(text: &str, row: usize, _ctx: &FindContext) -> Vec<Found> {
    let mut out: Vec<Found> = Vec::new();
    for m in SPELLED.find_iter(text) {
        // The field ends before a month ("... Computer Science May 2023").
        let mut value = m.as_str();
        if let Some(cut) = value
            .split_whitespace()
            .skip(2)
            .find(|w| month_number(w).is_some())
            .and_then(|w| value.find(&format!(" {w}")))
        {
            value = &value[..cut];
        }
        let value = value.trim_end_matches([',', ' ']).to_owned();
        out.push(Found::new(m.start(), m.start() + value.len(), row, AnswerValue::Text(value.clone()), &value, 1.0));
    }
    for m in ABBREVIATED.find_iter(text) {
        if out.iter().any(|f| f.start < m.end() && m.start() < f.end) {
            continue;
        }
        let value = m.as_str().to_owned();
        out.push(Found::new(m.start(), m.end(), row, AnswerValue::Text(value.clone()), &value, ABBREVIATION_FIT));
    }
    out.sort_by_key(|f| f.start);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn degrees(text: &str) -> Vec<(String, f64)> {
        find(text, 0, &FindContext::with_focus(&["degree"])).into_iter().map(|f| (f.text, f.fit)).collect()
    }

    #[test]
    fn a_degree_is_read_with_its_field() {
        assert_eq!(
            degrees("XYZ University - Bachelor of Science in Computer Science May 2023"),
            [("Bachelor of Science in Computer Science".to_owned(), 1.0)]
        );
        assert_eq!(
            degrees("Bachelor of Arts, Business Administration"),
            [("Bachelor of Arts, Business Administration".to_owned(), 1.0)]
        );
        assert_eq!(degrees("He holds an MBA from Wharton."), [("MBA".to_owned(), ABBREVIATION_FIT)]);
        assert_eq!(degrees("Ph.D. in Physics, 2010"), [("Ph.D. in Physics".to_owned(), ABBREVIATION_FIT)]);
        // Words that only look like a level are no degree.
        assert!(degrees("The Master agreement of the parties and the bachelor party.").is_empty());
    }
}
