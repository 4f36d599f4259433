//! Years ("in what year" → `2015`): four-digit years standing alone fit
//! fully, the year of a full date less.

use docintel_schema::{AnswerValue, Quantity};

use super::{FindContext, Found, numbers};
use crate::extract::date::find_dates;

pub(super) fn find(text: &str, row: usize, ctx: &FindContext) -> Vec<Found> {
    let mut out: Vec<Found> = numbers(text, ctx)
        .into_iter()
        .filter(|t| t.year_like)
        .map(|t| {
            let value = AnswerValue::Quantity(Quantity { quantity: t.value, unit: None });
            Found::new(t.start, t.end, row, value, &text[t.start..t.end], 1.0)
        })
        .collect();
    for d in find_dates(text, ctx.order) {
        if let Some(year) = d.iso.get(..4).and_then(|y| y.parse::<f64>().ok()) {
            let value = AnswerValue::Quantity(Quantity { quantity: year, unit: None });
            out.push(Found::new(d.start, d.end, row, value, &d.original, 0.6));
        }
    }
    out
}
