//! Telephone numbers and identifiers (invoice, order and booking numbers,
//! VAT and registration numbers, control ids, tickers) found by their form.
//!
//! A phone number is seven to fifteen digits in groups separated by spaces,
//! dots, hyphens or parentheses, optionally after `+` and a country code. An
//! identifier is a token of four characters or more that mixes letters and
//! digits (`IBZY2087`, `NL810433941B01`, `OD304175096047380001`), a digit
//! string of five digits or more (`42183017`), spaced digit groups after a
//! country prefix (`DE 232 446 240`), or a short all-capitals code in quotes or
//! parentheses (`“NFLX”`, `(LMT)`, a ticker). Each comes with a fit.

use std::sync::LazyLock;

use regex::Regex;

/// A value found in a line, with how surely it is of the kind.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeToken {
    /// The value as written.
    pub value: String,
    /// Byte offset in the line.
    pub start: usize,
    /// Byte offset just past the value.
    pub end: usize,
    /// In [0, 1].
    pub fit: f64,
}

static PHONE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:\+\d{1,3}[\s.\-]?)?(?:\(\d{1,5}\)[\s.\-]{0,6})?\d[\d\s.\-\u{00AD}\u{2010}\u{2011}]{5,18}\d")
        .expect("phone")
});
static CODE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b[A-Za-z0-9][A-Za-z0-9\-/_.]{2,40}[A-Za-z0-9]\b").expect("code"));
static SPACED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b[A-Z]{2}\s?\d{2,4}(?:\s\d{2,4}){2,5}\b|\b\d{3,4}(?:\s\d{3,4}){2,5}\b").expect("spaced")
});
static TICKER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#"[“"(‘']([A-Z]{1,5})[”")’']"#).expect("ticker"));

/// Telephone numbers of a line.
pub fn find_phones(line: &str) -> Vec<CodeToken> {
    let mut out = Vec::new();
    for m in PHONE.find_iter(line) {
        let text = m.as_str().trim_end_matches(['.', '-', ' ']);
        let digits = text.chars().filter(char::is_ascii_digit).count();
        if !(7..=15).contains(&digits) {
            continue;
        }
        // A date, an amount or a plain big number is not a phone number.
        let separated = text.contains([' ', '-', '.', '(', '\u{2010}', '\u{2011}']) || text.starts_with('+');
        // A group with two decimals ("278.61") is money, a comma a figure.
        let amount_like = text.contains(',')
            || text.split([' ', '-']).any(|g| g.split_once('.').is_some_and(|(a, b)| !a.is_empty() && b.len() == 2));
        if amount_like {
            continue;
        }
        let fit = if text.starts_with('+') || text.starts_with('(') || (separated && digits >= 10) {
            1.0
        } else if separated {
            0.7
        } else {
            0.4
        };
        out.push(CodeToken { value: text.to_owned(), start: m.start(), end: m.start() + text.len(), fit });
    }
    out
}

/// Identifiers of a line.
pub fn find_codes(line: &str) -> Vec<CodeToken> {
    let mut out: Vec<CodeToken> = Vec::new();
    for m in SPACED.find_iter(line) {
        out.push(CodeToken { value: m.as_str().to_owned(), start: m.start(), end: m.end(), fit: 0.8 });
    }
    for m in CODE.find_iter(line) {
        if out.iter().any(|t| t.start < m.end() && m.start() < t.end) {
            continue;
        }
        let text = m.as_str();
        let digits = text.chars().filter(char::is_ascii_digit).count();
        let letters = text.chars().filter(|c| c.is_alphabetic()).count();
        // Dates and decimal numbers are not identifiers.
        let numeric_like = letters == 0 && (text.contains('.') || text.contains(',') || text.matches('/').count() == 2);
        if numeric_like || digits == 0 {
            continue;
        }
        let len = text.chars().count();
        let fit = if letters > 0 && digits >= 2 && len >= 4 {
            // Mixed: a word with a digit inside ("h2o") is weak, a short
            // code ("FR76", "Q3") less sure than a long one.
            let coded = text.chars().filter(|c| c.is_uppercase()).count() + digits >= len / 2;
            match (coded, len >= 7) {
                (true, true) => 1.0,
                (true, false) => 0.5,
                _ => 0.3,
            }
        } else if letters == 0 && digits >= 5 {
            0.8
        } else if letters == 0 && digits >= 3 {
            0.35
        } else {
            0.15
        };
        out.push(CodeToken { value: text.to_owned(), start: m.start(), end: m.end(), fit });
    }
    for caps in TICKER.captures_iter(line) {
        let m = caps.get(1).expect("group");
        if !out.iter().any(|t| t.start < m.end() && m.start() < t.end) && m.as_str().len() >= 2 {
            out.push(CodeToken { value: m.as_str().to_owned(), start: m.start(), end: m.end(), fit: 0.6 });
        }
    }
    out.sort_by_key(|t| t.start);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phones() {
        let values = |l: &str| find_phones(l).into_iter().map(|t| t.value).collect::<Vec<_>>();
        assert_eq!(values("(909)    555-\u{2010}5555"), ["(909)    555-\u{2010}5555"]);
        assert_eq!(values("Call 1- 877-571-1700 now"), ["1- 877-571-1700"]);
        assert_eq!(values("Tel: +49 6051 5389-0"), ["+49 6051 5389-0"]);
        assert!(values("Total 1,234,567.00").is_empty());
        assert!(values("1 278.61 14.50").is_empty());
    }

    #[test]
    fn codes() {
        let values = |l: &str| find_codes(l).into_iter().map(|t| (t.value, t.fit)).collect::<Vec<_>>();
        assert_eq!(values("IBZY2087"), [("IBZY2087".to_owned(), 1.0)]);
        assert_eq!(values("Invoice Number: 42183017"), [("42183017".to_owned(), 0.8)]);
        assert_eq!(values("USt-IdNr.: DE 232 446 240")[0], ("DE 232 446 240".to_owned(), 0.8));
        assert_eq!(values("under the symbol “NFLX”."), [("NFLX".to_owned(), 0.6)]);
        assert!(values("on 12/03/2020 for 4.11").is_empty());
    }
}
