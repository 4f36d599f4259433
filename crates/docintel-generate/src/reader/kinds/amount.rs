//! Amounts of money ("what is the total" → `$4.11`, "net income for 2017" →
//! `558,929` in the statement's thousands): money tokens of
//! [`crate::extract::amount`], in the currency written next to them or the
//! passage's; negative in parentheses as statements print them.
//!
//! Cues, from the value's row and label lines: for a question about the
//! total, final-amount labels (`grand total`, `amount due`, `à payer`, `te
//! betalen`, `total TTC`) and other total labels count for it, sub-totals,
//! untaxed amounts and the tax itself against it (unless the question asks
//! for those); tax-included markers (`TTC`, `incl. VAT`) count for a total.
//! How much each counts is learned, not set here.

use docintel_schema::{Amount, AnswerValue};

use super::{FindContext, Found};
use crate::extract::amount::find_amounts;
use crate::extract::date::find_dates;
use crate::keywords::has_any;

const TOTAL_LABELS: &[&str] = &[
    "total",
    "totaal",
    "totale",
    "gesamt",
    "gesamtbetrag",
    "summe",
    "ttc",
    "montant",
    "importe total",
    "endbetrag",
    "rechnungsbetrag",
];
const STRONG_TOTAL_LABELS: &[&str] = &[
    "grand total",
    "total amount",
    "invoice total",
    "amount due",
    "balance due",
    "total due",
    "amount payable",
    "total to pay",
    "to pay",
    "à payer",
    "a payer",
    "net à payer",
    "net a payer",
    "montant total",
    "total ttc",
    "te betalen",
    "totaalbedrag",
    "factuur totaal",
    "factuurtotaal",
    "zu zahlen",
    "gesamtbetrag",
    "gesamtsumme",
    "rechnungsbetrag",
    "endbetrag",
    "total a pagar",
    "importe total",
];
const TAXED_LABELS: &[&str] = &[
    "ttc",
    "toutes taxes comprises",
    "incl. vat",
    "incl vat",
    "including vat",
    "inc. vat",
    "vat included",
    "incl. tax",
    "including tax",
    "tax included",
    "incl. btw",
    "incl btw",
    "inclusief btw",
    "inkl. mwst",
    "inkl mwst",
    "incl. mwst",
    "brutto",
    "bruto",
    "to pay",
    "à payer",
    "a payer",
    "te betalen",
    "zu zahlen",
];
const TAX_LABELS: &[&str] = &[
    "tax",
    "taxes",
    "vat",
    "tva",
    "btw",
    "mwst",
    "mwst.",
    "ust",
    "umsatzsteuer",
    "iva",
    "gst",
    "cst",
    "igst",
    "cgst",
    "sgst",
];
const SUB_LABELS: &[&str] = &[
    "subtotal",
    "sub-total",
    "sub total",
    "subtotaal",
    "zwischensumme",
    "ht",
    "hors taxe",
    "hors taxes",
    "excl",
    "excl.",
    "excl. vat",
    "excl. btw",
    "excluding",
    "exclusief",
    "exkl",
    "exkl.",
    "ohne mwst",
    "untaxed",
    "before tax",
    "net amount",
    "netto",
    "nettobetrag",
];
const AMOUNTISH: &[&str] = &[
    "amount", "invoice", "bill", "montant", "bedrag", "betrag", "pay", "paid", "due", "cost", "price", "sum",
    "charged", "charges", "much", "owe", "invoiced", "facture", "factuur", "rechnung", "factura", "importe", "betalen",
    "hoeveel", "payer", "combien", "zahlen", "cuánto", "cuanto",
];

/// What kind of amount a question asks for.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct AmountIntent {
    /// The amount due ("total", "how much is the invoice").
    pub(crate) total: bool,
    /// A sub-total or untaxed amount.
    pub(crate) sub: bool,
    /// The tax itself.
    pub(crate) tax: bool,
}

impl AmountIntent {
    /// The intent of a question (its text in label form, its salient
    /// keywords that belong to no concept, and its concept groups).
    pub(crate) fn of(question: &str, ungrouped: &[&str], groups: &[&str]) -> AmountIntent {
        let sub = has_any(question, SUB_LABELS);
        let tax = has_any(question, TAX_LABELS);
        let amountish = ungrouped
            .iter()
            .all(|k| has_any(k, AMOUNTISH) || has_any(k, TOTAL_LABELS) || has_any(k, STRONG_TOTAL_LABELS));
        let total_concept = groups.iter().any(|g| g.split('_').any(|w| w == "total"));
        // "Total current assets", "total debt": a line item the question
        // names, not the amount a bill asks for.
        let total = has_any(question, STRONG_TOTAL_LABELS)
            || (has_any(question, TOTAL_LABELS) && !names_line_item(question))
            || (!sub && (amountish || total_concept));
        AmountIntent { total, sub, tax }
    }
}

/// Words that may follow "total" in a question about the amount due
/// ("the total for order 5561", "total TTC", "total to pay").
const AFTER_TOTAL: &[&str] = &[
    "of",
    "for",
    "the",
    "to",
    "on",
    "in",
    "is",
    "was",
    "due",
    "a",
    "an",
    "ttc",
    "ht",
    "incl",
    "including",
    "with",
    "and",
    "or",
    "de",
    "du",
    "des",
    "la",
    "le",
    "van",
    "der",
    "from",
    "paid",
    "payable",
    "charged",
    "billed",
];

/// Whether `question` (label form) names a line item after "total": a
/// content word follows it ("total current assets", "total debt"), not an
/// amount word or a preposition.
fn names_line_item(question: &str) -> bool {
    let words: Vec<&str> = question.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    words.windows(2).any(|pair| {
        let next = pair[1];
        pair[0] == "total"
            && next.chars().all(char::is_alphabetic)
            && next.chars().count() >= 3
            && !AFTER_TOTAL.contains(&next)
            && !has_any(next, AMOUNTISH)
    })
}

pub(super) fn find(text: &str, row: usize, ctx: &FindContext) -> Vec<Found> {
    let dates = find_dates(text, ctx.order);
    // "Earnings per share", "revenue per user": a figure per unit is no
    // total, so the passage's scale ("in millions, except per share data")
    // is not its own.
    let per_unit = ctx.focus.iter().any(|w| w == "per");
    find_amounts(text)
        .into_iter()
        .filter(|t| !dates.iter().any(|d| t.start < d.end && d.start < t.end))
        .filter(|t| {
            t.currency.is_some() || ctx.mid_line || !crate::extract::number::is_leading_label(text, t.start, t.end)
        })
        .filter(|t| t.currency.is_some() || !crate::extract::number::is_footnote_mark(text, t.start, t.end))
        .map(|t| {
            let currency = t.currency.or(ctx.currency);
            let negative = t.value > 0.0
                && text[..t.start].trim_end().trim_end_matches(['$', '€', '£']).trim_end().ends_with('(')
                && text[t.end..].trim_start().starts_with(')');
            let value = if negative { -t.value } else { t.value };
            let fit = if t.currency.is_some() {
                1.0
            } else if currency.is_some() {
                0.8
            } else {
                0.6
            };
            let scale = if per_unit { None } else { ctx.scale };
            let amount =
                Amount { value, currency: currency.map(str::to_owned), unit: t.unit.or(scale).map(str::to_owned) };
            let mut found = Found::new(t.start, t.end, row, AnswerValue::Amount(amount), &t.text, fit);
            found.currency_written = t.currency.is_some();
            found
        })
        .collect()
}

/// `(positive, negative)` cues of the labels (folded text, whether a column
/// header), each in [0, 1]. A column header only says which kind of amount
/// its column holds (taxed, untaxed, the tax); the row says whether it is a
/// total.
pub(super) fn cues(labels: &[(String, bool)], intent: &AmountIntent) -> (f64, f64) {
    let (mut pos, mut neg) = (0.0f64, 0.0f64);
    for (norm, header) in labels {
        let strong = !header && has_any(norm, STRONG_TOTAL_LABELS);
        let total = strong || (!header && has_any(norm, TOTAL_LABELS));
        let sub = has_any(norm, SUB_LABELS);
        let taxed = has_any(norm, TAXED_LABELS);
        let tax = !taxed && !sub && has_any(norm, TAX_LABELS);
        if intent.total && total {
            pos = pos.max(if strong { 1.0 } else { 0.8 });
        }
        if intent.sub {
            if sub {
                pos = pos.max(0.8);
            }
            if taxed && !sub {
                neg = neg.max(0.5);
            }
        } else if intent.total {
            if sub {
                neg = neg.max(0.75);
            }
            if taxed && !sub {
                pos = pos.max(0.2);
            }
            if tax && !intent.tax {
                neg = neg.max(0.75);
            }
        }
        if intent.tax && tax {
            pos = pos.max(0.8);
        }
    }
    (pos, neg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_total_line_item_is_not_the_amount_due() {
        let of = |q: &str, ungrouped: &[&str]| AmountIntent::of(q, ungrouped, &[]).total;
        assert!(!of("what is total current assets in fy 2023", &["total", "current", "assets"]));
        assert!(!of("what is the total debt of costco", &["total", "debt", "costco"]));
        assert!(of("what is the total for order 5561", &["total", "order"]));
        assert!(of("what is the total amount of the invoice", &["total", "amount", "invoice"]));
        assert!(of("quel est le total ttc", &["total", "ttc"]));
    }

    #[test]
    fn a_figure_per_unit_does_not_take_the_passage_scale() {
        let unit = |focus: &[&str]| {
            let ctx = FindContext { scale: Some("million"), ..FindContext::with_focus(focus) };
            match &find("Diluted $ 3.56 $ 2.90", 0, &ctx)[0].value {
                AnswerValue::Amount(a) => a.unit.clone(),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(unit(&["diluted", "earnings", "per", "share"]), None);
        assert_eq!(unit(&["net", "earnings"]).as_deref(), Some("million"));
    }
}
