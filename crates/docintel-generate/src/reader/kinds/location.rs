//! Places ("in which city" → `Portland, Oregon`, "where" → `Chennai`): see
//! [`crate::extract::names::find_places`].

use docintel_schema::AnswerValue;

use super::Found;
use super::person::clean;
use crate::extract::names::find_places;

pub(super) fn find(text: &str, row: usize) -> Vec<Found> {
    find_places(text)
        .into_iter()
        .map(|t| Found::new(t.start, t.end, row, AnswerValue::Text(clean(&t.value)), &t.value, t.fit))
        .collect()
}
