//! E-mail addresses.

use docintel_schema::AnswerValue;

use super::Found;
use crate::extract::pattern::find_emails;

pub(super) fn find(text: &str, row: usize) -> Vec<Found> {
    find_emails(text)
        .into_iter()
        .map(|t| Found::new(t.start, t.end, row, AnswerValue::Text(t.value.clone()), &text[t.start..t.end], 1.0))
        .collect()
}
