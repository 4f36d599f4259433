//! Plain numbers and measures ("what BLEU score" → `28.4`): any number, a
//! percentage or money fitting less, a year-like figure least.

use docintel_schema::{AnswerValue, Quantity};

use super::{FindContext, Found, numbers};

pub(super) fn find(text: &str, row: usize, ctx: &FindContext) -> Vec<Found> {
    numbers(text, ctx)
        .into_iter()
        .map(|t| {
            let fit = if t.year_like {
                0.3
            } else if t.money {
                0.5
            } else if t.percent {
                0.7
            } else {
                1.0
            };
            let value = AnswerValue::Quantity(Quantity { quantity: t.value, unit: t.unit_text.clone() });
            Found::new(t.start, t.end, row, value, &text[t.start..t.end], fit)
        })
        .collect()
}
