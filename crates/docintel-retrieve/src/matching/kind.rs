//! The kind of value a question asks for, as a pattern over raw line text:
//! a currency-looking token for amounts, a date for dates, an email or URL
//! for contacts. The search boosts lines carrying one and reaches down to
//! one; the coverage check asks that some passage shown carries one.

use docintel_schema::ValueKind;
use regex::Regex;

/// Tokens that look like what an answer of this kind needs: a currency-looking
/// token for amounts, a date for dates, an email or URL for contacts.
pub(crate) fn kind_pattern(answer_type: &str) -> Option<(&'static str, Regex)> {
    let (name, pattern) = match (ValueKind::for_answer_type(answer_type), answer_type) {
        (ValueKind::Amount, _) => {
            ("amount", r"(?i)([$€£₹]|\b(usd|eur|gbp|inr|pln|chf|rs\.?|euros?|dollars?)\b)|\d[.,]\d{2}\b")
        }
        (ValueKind::Date, _) => (
            "date",
            r"(?i)\b\d{1,4}[-/.]\d{1,2}[-/.]\d{2,4}\b|\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|janv|févr|mars|avr|mai|juin|juil|août|sept|déc|januar|februar|märz|mai|juni|juli|oktober|dezember|maart|mei|okt)[a-zé]*\.?\s+\d{1,2}|\b\d{1,2}\.?\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|janv|févr|mars|avr|mai|juin|juil|août|sept|déc|maart|mei|okt)[a-zéû]*\.?\s+\d{4}",
        ),
        (_, "email" | "url" | "website" | "contact") => {
            ("contact", r"(?i)[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}|\bhttps?://\S+|\bwww\.[a-z0-9-]+\.[a-z]{2,}")
        }
        _ => return None,
    };
    Some((name, Regex::new(pattern).expect("static pattern compiles")))
}
