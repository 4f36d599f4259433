//! Calendar dates ("when was the invoice issued" → `2014-08-03`; "since
//! when" → `2019-08` for "since August 2019"), read by
//! [`crate::extract::date`] in the document's day/month order.
//!
//! Cues: a label naming the kind of date the question asks for (issue,
//! due, order, delivery, period end) counts for it; a label naming another
//! kind counts against it.

use docintel_schema::{AnswerValue, DateValue};

use super::{FindContext, Found};
use crate::extract::date::{find_dates, find_months};
use crate::keywords::has_any;

/// Kinds of dates a question can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum DateIntent {
    #[default]
    Issue,
    Due,
    Order,
    Delivery,
    Period,
}

const ISSUE_LABELS: &[&str] = &[
    "date",
    "dated",
    "datum",
    "fecha",
    "data",
    "invoice date",
    "date of issue",
    "issue date",
    "issued",
    "factuurdatum",
    "factuur datum",
    "rechnungsdatum",
    "date de facture",
    "date facture",
    "billing date",
    "invoice",
    "factuur",
    "facture",
    "rechnung",
    "factura",
];
const DUE_LABELS: &[&str] = &[
    "due",
    "due date",
    "échéance",
    "echeance",
    "vervaldatum",
    "fällig",
    "fälligkeit",
    "faellig",
    "payable by",
    "pay by",
    "vencimiento",
    "date limite",
];
const ORDER_LABELS: &[&str] =
    &["order", "ordered", "order date", "bestelldatum", "besteldatum", "bestelling", "commande", "pedido"];
const DELIVERY_LABELS: &[&str] = &[
    "delivery",
    "delivered",
    "shipped",
    "shipping",
    "ship date",
    "dispatch",
    "livraison",
    "leverdatum",
    "levering",
    "lieferdatum",
    "entrega",
];
const PERIOD_LABELS: &[&str] =
    &["period", "période", "periode", "zeitraum", "valid until", "expires", "expiry", "expiration"];

const OTHER_KINDS: [DateIntent; 4] = [DateIntent::Due, DateIntent::Order, DateIntent::Delivery, DateIntent::Period];

fn labels_of(kind: DateIntent) -> &'static [&'static str] {
    match kind {
        DateIntent::Issue => ISSUE_LABELS,
        DateIntent::Due => DUE_LABELS,
        DateIntent::Order => ORDER_LABELS,
        DateIntent::Delivery => DELIVERY_LABELS,
        DateIntent::Period => PERIOD_LABELS,
    }
}

impl DateIntent {
    /// The kind of date a question asks for (its text in label form and its
    /// salient keywords).
    pub(crate) fn of(question: &str, keywords: &[&str]) -> DateIntent {
        OTHER_KINDS
            .into_iter()
            .find(|k| has_any(question, labels_of(*k)) || keywords.iter().any(|w| has_any(w, labels_of(*k))))
            .unwrap_or_default()
    }
}

/// Full dates (fit 1), then months written with their year and no day
/// (`YYYY-MM`, fit 0.7: a date question may want the day).
pub(super) fn find(text: &str, row: usize, ctx: &FindContext) -> Vec<Found> {
    let full = find_dates(text, ctx.order);
    let months = find_months(text, &full);
    full.into_iter()
        .map(|t| (t, 1.0))
        .chain(months.into_iter().map(|t| (t, 0.7)))
        .map(|(t, fit)| {
            let value = AnswerValue::Date(DateValue { iso: t.iso.clone(), original: t.original.clone() });
            Found::new(t.start, t.end, row, value, &t.original, fit)
        })
        .collect()
}

/// `(positive, negative)` label cues in [0, 1].
pub(super) fn cues(labels: &[(String, bool)], intent: &DateIntent) -> (f64, f64) {
    let (mut pos, mut neg) = (0.0f64, 0.0f64);
    for (norm, _) in labels {
        for kind in OTHER_KINDS {
            if has_any(norm, labels_of(kind)) {
                if kind == *intent {
                    pos = pos.max(1.0);
                } else {
                    neg = neg.max(1.0);
                }
            }
        }
        if *intent == DateIntent::Issue && has_any(norm, ISSUE_LABELS) {
            pos = pos.max(0.6);
        }
    }
    (pos, neg)
}
