//! Telephone and fax numbers: see [`crate::extract::phone::find_phones`].

use docintel_schema::AnswerValue;

use super::Found;
use crate::extract::phone::find_phones;

pub(super) fn find(text: &str, row: usize) -> Vec<Found> {
    find_phones(text)
        .into_iter()
        .map(|t| Found::new(t.start, t.end, row, AnswerValue::Text(t.value.clone()), &t.value, t.fit))
        .collect()
}
