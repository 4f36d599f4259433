//! Percentages and rates ("what share" → `44%`, "what dropout rate" →
//! `0.1`): a number with `%` or `percent` fits fully, a bare decimal between
//! 0 and 1 (a rate written as a fraction) half, any other number hardly.

use docintel_schema::{AnswerValue, Quantity};

use super::{FindContext, Found, numbers};

pub(super) fn find(text: &str, row: usize, ctx: &FindContext) -> Vec<Found> {
    numbers(text, ctx)
        .into_iter()
        .filter(|t| !t.year_like && !t.money)
        .map(|t| {
            let fit = if t.percent {
                1.0
            } else if !t.integer && t.value > 0.0 && t.value <= 1.0 {
                0.5
            } else {
                0.1
            };
            let unit = t.percent.then(|| "%".to_owned());
            let value = AnswerValue::Quantity(Quantity { quantity: t.value, unit });
            Found::new(t.start, t.end, row, value, &text[t.start..t.end], fit)
        })
        .collect()
}
