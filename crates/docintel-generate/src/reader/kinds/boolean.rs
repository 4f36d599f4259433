//! Yes/no ("does the policy cover maternity") : the row carrying the
//! question's terms is the clause that decides it; its polarity is `no`
//! when it negates or excludes.

use docintel_schema::{AnswerValue, Line};

use super::Found;
use crate::keywords::{has_any, label_form};

const NEGATIONS: &[&str] = &[
    "not",
    "no",
    "none",
    "never",
    "excluded",
    "exclude",
    "excludes",
    "without",
    "cannot",
    "can't",
    "isn't",
    "aren't",
    "doesn't",
    "don't",
    "won't",
    "pas",
    "non",
    "aucun",
    "aucune",
    "nicht",
    "kein",
    "keine",
    "geen",
    "niet",
    "nooit",
    "sin",
    "ningún",
    "ninguna",
    "exclusion",
    "exclusions",
];

pub(super) fn find(rows: &[&Line], i: usize) -> Vec<Found> {
    let text = rows[i].text.as_str();
    let trimmed = text.trim();
    if trimmed.split_whitespace().count() < 3 {
        return Vec::new();
    }
    let start = text.len() - text.trim_start().len();
    let yes = !has_any(&label_form(text), NEGATIONS);
    vec![Found::new(start, start + trimmed.len(), i, AnswerValue::Boolean(yes), trimmed, 1.0)]
}
