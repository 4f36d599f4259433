//! People ("who is the chief financial officer" → `Andrew Campion`): name
//! shapes of [`crate::extract::names::find_people`].

use docintel_schema::AnswerValue;

use super::Found;
use crate::extract::names::find_people;

pub(super) fn find(text: &str, row: usize) -> Vec<Found> {
    find_people(text)
        .into_iter()
        .map(|t| Found::new(t.start, t.end, row, AnswerValue::Text(clean(&t.value)), &t.value, t.fit))
        .collect()
}

/// The name with its inner whitespace runs collapsed (PDFs space words out).
pub(super) fn clean(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}
