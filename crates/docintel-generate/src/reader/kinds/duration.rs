//! Durations ("the grace period" → `thirty days`, "waiting period" →
//! `thirty-six (36) months`): a number followed by a time unit; a bare
//! number hardly fits.

use docintel_schema::{AnswerValue, Quantity};

use super::{FindContext, Found, numbers};

pub(super) fn find(text: &str, row: usize, ctx: &FindContext) -> Vec<Found> {
    numbers(text, ctx)
        .into_iter()
        .filter(|t| !t.percent && !t.money && !t.year_like && t.value >= 0.0)
        .map(|t| {
            let fit = if t.time_unit.is_some() { 1.0 } else { 0.15 };
            let value = AnswerValue::Quantity(Quantity { quantity: t.value, unit: t.unit_text.clone() });
            Found::new(t.start, t.end, row, value, &text[t.start..t.end], fit)
        })
        .collect()
}
