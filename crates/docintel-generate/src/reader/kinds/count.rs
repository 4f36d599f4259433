//! Counts ("how many attention heads" → `8`, "how many employees" →
//! `76,700`): whole numbers, digits or spelled, that are not money, a
//! percentage or a year.

use docintel_schema::{AnswerValue, Quantity};

use super::{FindContext, Found, numbers};

pub(super) fn find(text: &str, row: usize, ctx: &FindContext) -> Vec<Found> {
    numbers(text, ctx)
        .into_iter()
        .filter(|t| !t.percent)
        .map(|t| {
            let fit = if t.money || t.value < 0.0 {
                0.15
            } else if t.year_like {
                0.2
            } else if !t.integer {
                0.3
            } else if t.time_unit.is_some() {
                0.7
            } else {
                1.0
            };
            let value = AnswerValue::Quantity(Quantity { quantity: t.value, unit: None });
            Found::new(t.start, t.end, row, value, &text[t.start..t.end], fit)
        })
        .collect()
}
