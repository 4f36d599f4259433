//! Web addresses.

use docintel_schema::AnswerValue;

use super::Found;
use crate::extract::pattern::find_urls;

pub(super) fn find(text: &str, row: usize) -> Vec<Found> {
    find_urls(text)
        .into_iter()
        .map(|t| {
            let fit = if t.value.contains("://") || t.value.starts_with("www.") { 1.0 } else { 0.7 };
            Found::new(t.start, t.end, row, AnswerValue::Text(t.value.clone()), &text[t.start..t.end], fit)
        })
        .collect()
}
