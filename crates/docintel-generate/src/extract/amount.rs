//! Money tokens: a number with an optional currency marker before or after it
//! and an optional scale word, in US (`1,234.56`) or EU (`1.234,56`) style.
//!
//! Rules, in order:
//! - A token is money when it carries a currency marker (`$`, `€`, `£`, `₹`,
//!   `Rs.`, `zł`, an ISO code, `euros`, `dollars`...) or, without one, when it
//!   has a decimal part or thousands groups (`319.00`, `1,939`). Bare integers
//!   (`1`, `2014`, a quantity) are not money.
//! - A number glued to letters (`OD3041`), to `/` or followed by `%` is not money.
//! - Separators: when both `.` and `,` appear the last one is the decimal mark;
//!   a single separator followed by exactly three digits is a thousands mark
//!   (`1,939`, `1.234`) unless the integer part is `0`; otherwise it is the
//!   decimal mark (`56,02`, `4.11`). Apostrophes and non-breaking spaces are
//!   thousands marks; a plain space never is (`1 278.61` is a quantity then a price).

use std::sync::LazyLock;

use regex::Regex;

/// A monetary amount found in a line.
#[derive(Debug, Clone, PartialEq)]
pub struct MoneyToken {
    /// The number as written, scaled by nothing (see `unit`).
    pub value: f64,
    /// ISO 4217 code of the marker next to the number, if any.
    pub currency: Option<&'static str>,
    /// Scale word right after the number (`thousand`, `million`, `billion`).
    pub unit: Option<&'static str>,
    /// Byte offset of the token in the line.
    pub start: usize,
    /// Byte offset just past the token.
    pub end: usize,
    /// The token as written (`$4.11`, `56,02 €`).
    pub text: String,
}

const PRE: &str = r"(?P<pre>us\$|\$|€|£|₹|\brs\.?|\binr\b|\busd\b|\beur\b|\bgbp\b|\bpln\b|\bchf\b)";
const NUM: &str = r"(?P<num>[0-9]{1,3}(?:[,.'\u{00A0}\u{202F}][0-9]{3})+(?:[.,][0-9]{1,2})?|[0-9]+(?:[.,][0-9]{1,2})?)";
const SCALE: &str = r"(?P<scale>thousands?|millions?|billions?|bn|mn)\b";
const POST: &str = r"(?P<post>€|zł|\beuros?\b|\beur\b|\busd\b|\bdollars?\b|\bgbp\b|\bpounds?\b|\binr\b|\brupees?\b|\bpln\b|\bzl\b|\bchf\b)";

static MONEY: LazyLock<Regex> = LazyLock::new(|| {
    let sp = r"[ \u{00A0}\u{202F}]*";
    Regex::new(&format!("(?i){PRE}?{sp}(?P<sign>-)?{sp}{NUM}(?:{sp}{SCALE})?(?:{sp}{POST})?")).expect("money regex")
});

static MARKER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)us\$|\$|€|£|₹|zł|\brs\.?[ ]?-?[ ]?[0-9]|\b(?:inr|usd|eur|gbp|pln|chf|euros?|us dollars?|dollars?|rupees?)\b",
    )
    .expect("marker regex")
});

static SCALE_CUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bin\s+(?:(?:us\$|\$|€|£|eur|usd|gbp)\s*)?(thousands|millions|billions)\b").expect("scale regex")
});

/// The ISO 4217 code of a currency marker (`$`, `Rs.`, `euros`...).
pub fn currency_code(marker: &str) -> Option<&'static str> {
    let lower = marker.trim().trim_end_matches(['.', ' ', '-']).to_lowercase();
    let lower = lower.trim_end_matches(|c: char| c.is_ascii_digit() || c == ' ' || c == '-' || c == '.');
    Some(match lower {
        "$" | "us$" | "usd" | "dollar" | "dollars" | "us dollar" | "us dollars" => "USD",
        "€" | "eur" | "euro" | "euros" => "EUR",
        "£" | "gbp" | "pound" | "pounds" => "GBP",
        "₹" | "rs" | "inr" | "rupee" | "rupees" => "INR",
        "zł" | "zl" | "pln" => "PLN",
        "chf" => "CHF",
        _ => return None,
    })
}

/// Parses a number written with US or EU separators (see the module rules).
pub fn parse_number(raw: &str) -> Option<f64> {
    let cleaned: String = raw.chars().filter(|c| !matches!(c, '\'' | '\u{00A0}' | '\u{202F}' | ' ')).collect();
    let last_dot = cleaned.rfind('.');
    let last_comma = cleaned.rfind(',');
    let normal = match (last_dot, last_comma) {
        (Some(d), Some(c)) => {
            let (decimal, thousands) = if d > c { ('.', ',') } else { (',', '.') };
            cleaned.replace(thousands, "").replace(decimal, ".")
        }
        (Some(i), None) | (None, Some(i)) => {
            let sep = if last_dot.is_some() { '.' } else { ',' };
            let count = cleaned.matches(sep).count();
            let after = cleaned.len() - i - 1;
            let int_part = &cleaned[..cleaned.find(sep).unwrap_or(0)];
            if count > 1 || (after == 3 && int_part != "0") {
                cleaned.replace(sep, "")
            } else {
                cleaned.replace(sep, ".")
            }
        }
        (None, None) => cleaned,
    };
    normal.parse::<f64>().ok()
}

fn normal_scale(word: &str) -> Option<&'static str> {
    match word.to_lowercase().as_str() {
        "thousand" | "thousands" => Some("thousand"),
        "million" | "millions" | "mn" => Some("million"),
        "billion" | "billions" | "bn" => Some("billion"),
        _ => None,
    }
}

/// Thousands grouped by plain spaces before a currency written after the
/// number, as French and other European documents print them
/// (`1 500 000 €`, `2 000 EUR`, `80 000 euros`).
static SPACED_MONEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?P<num>\b[0-9]{1,3}(?:[ \u{00A0}\u{202F}][0-9]{3})+(?:,[0-9]{1,2})?)[ \u{00A0}\u{202F}]?(?P<post>€|\beuros?\b|\beur\b|\bchf\b)")
        .expect("spaced money regex")
});

/// Every money token of a line, left to right.
pub fn find_amounts(line: &str) -> Vec<MoneyToken> {
    let mut out: Vec<MoneyToken> = Vec::new();
    for caps in SPACED_MONEY.captures_iter(line) {
        let (Some(num), Some(post)) = (caps.name("num"), caps.name("post")) else { continue };
        let before = line[..num.start()].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || matches!(c, '.' | ',')) {
            continue;
        }
        let digits: String = num.as_str().chars().filter(|c| !c.is_whitespace()).collect();
        let Some(value) = parse_number(&digits.replace(',', ".")) else { continue };
        let (start, end) = (num.start(), post.end());
        out.push(MoneyToken {
            value,
            currency: currency_code(post.as_str()),
            unit: None,
            start,
            end,
            text: line[start..end].trim().to_owned(),
        });
    }
    for caps in MONEY.captures_iter(line) {
        let Some(num) = caps.name("num") else { continue };
        let pre = caps.name("pre");
        let post = caps.name("post");
        let before = line[..num.start()].chars().next_back();
        if pre.is_none() && before.is_some_and(|c| c.is_alphanumeric() || matches!(c, '/' | '.' | ',' | '_' | '#')) {
            continue;
        }
        let tail_end = caps.name("post").or(caps.name("scale")).map_or(num.end(), |m| m.end());
        let after = line[tail_end..].chars().next();
        if after.is_some_and(|c| c.is_alphanumeric() || matches!(c, '%' | '/')) && post.is_none() {
            continue;
        }
        if after == Some('%') {
            continue;
        }
        let digits = num.as_str();
        let explicit = pre.is_some() || post.is_some();
        let looks_money = digits.contains(['.', ',', '\'', '\u{00A0}', '\u{202F}']);
        if !explicit && !looks_money {
            continue;
        }
        let Some(mut value) = parse_number(digits) else { continue };
        if caps.name("sign").is_some() {
            value = -value;
        }
        let currency = pre.or(post).and_then(|m| currency_code(m.as_str()));
        let unit = caps.name("scale").and_then(|m| normal_scale(m.as_str()));
        let start = pre.or(caps.name("sign")).map_or(num.start(), |m| m.start());
        let end = tail_end;
        if out.iter().any(|t| t.start < end && start < t.end) {
            continue;
        }
        out.push(MoneyToken { value, currency, unit, start, end, text: line[start..end].trim().to_owned() });
    }
    out.sort_by_key(|t| t.start);
    out
}

/// Every currency mentioned in a text (markers next to numbers and currency
/// words such as `All amounts in US Dollars`), as ISO codes, in order.
pub fn currency_mentions(text: &str) -> Vec<&'static str> {
    MARKER.find_iter(text).filter_map(|m| currency_code(m.as_str())).collect()
}

/// The most frequent currency in `texts`, `None` when there is none or a tie.
pub fn dominant_currency<'a>(texts: impl IntoIterator<Item = &'a str>) -> Option<&'static str> {
    let mut counts: Vec<(&'static str, usize)> = Vec::new();
    for text in texts {
        for code in currency_mentions(text) {
            match counts.iter_mut().find(|(c, _)| *c == code) {
                Some((_, n)) => *n += 1,
                None => counts.push((code, 1)),
            }
        }
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    match counts.as_slice() {
        [] => None,
        [(code, _)] => Some(code),
        [(code, a), (_, b), ..] => (a > b).then_some(code),
    }
}

/// A scale stated for a whole passage (`in millions`, `(in thousands of euros)`).
pub fn scale_cue(text: &str) -> Option<&'static str> {
    SCALE_CUE.captures(text).and_then(|c| c.get(1)).and_then(|m| normal_scale(m.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expect: &[(f64, Option<&str>, Option<&str>)]) {
        let found: Vec<(f64, Option<&str>, Option<&str>)> =
            find_amounts(input).into_iter().map(|t| (t.value, t.currency, t.unit)).collect();
        assert_eq!(found, expect, "{input}");
    }

    #[test]
    fn symbols_codes_and_words() {
        check("Total: $4.11", &[(4.11, Some("USD"), None)]);
        check("TOTAL 56,02 €", &[(56.02, Some("EUR"), None)]);
        check("Grand Total ₹ 319.00", &[(319.0, Some("INR"), None)]);
        check("Rs. 1,939", &[(1939.0, Some("INR"), None)]);
        check("Rs -40.00", &[(-40.0, Some("INR"), None)]);
        check("1.234,56 EUR", &[(1234.56, Some("EUR"), None)]);
        check("EUR 49,99", &[(49.99, Some("EUR"), None)]);
        check("£12.50 and 30 euros", &[(12.5, Some("GBP"), None), (30.0, Some("EUR"), None)]);
        check("1 250,00 zł", &[(250.0, Some("PLN"), None)]);
        check("CHF 1'250.50", &[(1250.5, Some("CHF"), None)]);
        check("INR 500", &[(500.0, Some("INR"), None)]);
        check("US$ 7", &[(7.0, Some("USD"), None)]);
    }

    #[test]
    fn scale_words() {
        check("$1,234.56 million", &[(1234.56, Some("USD"), Some("million"))]);
        check("revenue of 3.2 billion dollars", &[(3.2, Some("USD"), Some("billion"))]);
        assert_eq!(scale_cue("(in millions, except per share data)"), Some("million"));
        assert_eq!(scale_cue("All figures in € thousands"), Some("thousand"));
        assert_eq!(scale_cue("in the meantime"), None);
    }

    #[test]
    fn no_currency_needs_a_decimal_part() {
        check("Total 1 278.61 40.39 319.00", &[(278.61, None, None), (40.39, None, None), (319.0, None, None)]);
        check("Grand Total  319.00", &[(319.0, None, None)]);
        check("Qty 1 year 2014", &[]);
        check("Order ID: OD304175096047380001", &[]);
        check("1 278.61 14.50%", &[(278.61, None, None)]);
        check("3/64, Vishwas Khand", &[]);
    }

    #[test]
    fn space_grouped_thousands_before_a_currency() {
        check("Plafond RC Pro : 1 500 000 € par sinistre", &[(1_500_000.0, Some("EUR"), None)]);
        check("franchise de 2 000 EUR ou 150 €", &[(2000.0, Some("EUR"), None), (150.0, Some("EUR"), None)]);
        check("Qty 1 278.61 14.50%", &[(278.61, None, None)]);
    }

    #[test]
    fn number_styles() {
        assert_eq!(parse_number("1,234.56"), Some(1234.56));
        assert_eq!(parse_number("1.234,56"), Some(1234.56));
        assert_eq!(parse_number("56,02"), Some(56.02));
        assert_eq!(parse_number("1,939"), Some(1939.0));
        assert_eq!(parse_number("0,750"), Some(0.75));
        assert_eq!(parse_number("1,234,567"), Some(1234567.0));
        assert_eq!(parse_number("1\u{00A0}234,5"), Some(1234.5));
    }

    #[test]
    fn currency_cues() {
        assert_eq!(dominant_currency(["All charges and prices are in US Dollars"]), Some("USD"));
        assert_eq!(dominant_currency(["Currency: EUR", "Total 12.00"]), Some("EUR"));
        assert_eq!(dominant_currency(["Price incl. Promotional Discount of Rs -40.00"]), Some("INR"));
        assert_eq!(dominant_currency(["$1 and €2"]), None);
        assert_eq!(dominant_currency(["Hours worked 10"]), None);
    }
}
