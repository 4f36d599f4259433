//! Identifiers: invoice, order and booking numbers, VAT numbers, tickers,
//! control ids; see [`crate::extract::phone::find_codes`].

use docintel_schema::AnswerValue;

use super::Found;
use crate::extract::phone::find_codes;

pub(super) fn find(text: &str, row: usize) -> Vec<Found> {
    find_codes(text)
        .into_iter()
        .map(|t| Found::new(t.start, t.end, row, AnswerValue::Text(t.value.clone()), &t.value, t.fit))
        .collect()
}
