//! IBANs (checked with the mod-97 rule by the finder).

use docintel_schema::AnswerValue;

use super::Found;
use crate::extract::pattern::find_ibans;

pub(super) fn find(text: &str, row: usize) -> Vec<Found> {
    find_ibans(text)
        .into_iter()
        .map(|t| Found::new(t.start, t.end, row, AnswerValue::Text(t.value.clone()), &text[t.start..t.end], 1.0))
        .collect()
}
