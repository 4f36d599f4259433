//! Numbers as documents write them: digits with US or EU separators
//! (`1,853`, `76,700`, `0.1`, `3,5`), negative in parentheses or with a
//! minus, spelled out in English or French up to the hundreds
//! (`thirty-six`, `trente`), each with what sits around it: a percent sign
//! or word after it, a currency marker before or after it, a time unit after
//! it (`30 days`, `thirty-six (36) months`).
//!
//! A number glued to letters on its left (`AC-2`, `OD3041`, `Pdrop`...`1`)
//! is part of an identifier, not a number; `h = 8` and `(36)` are numbers.

use std::sync::LazyLock;

use regex::Regex;

use super::amount::parse_number;

/// A number found in a line.
#[derive(Debug, Clone, PartialEq)]
pub struct NumberToken {
    /// The value (negative for `(12)` and `-12`).
    pub value: f64,
    /// Byte offset in the line.
    pub start: usize,
    /// Byte offset just past the number and what belongs to it (a `%`, a
    /// unit word).
    pub end: usize,
    /// Written without a decimal part.
    pub integer: bool,
    /// Spelled out (`thirty-six`).
    pub spelled: bool,
    /// Followed by `%`, `percent`, `per cent` or `pour cent`.
    pub percent: bool,
    /// Next to a currency marker.
    pub money: bool,
    /// A time unit after it, singular: `day`, `week`, `month`, `year`,
    /// `hour`, `minute` (any language folded to English).
    pub time_unit: Option<&'static str>,
    /// The unit as written (`%`, `months`, `jours`), when there is one.
    pub unit_text: Option<String>,
    /// Four digits from 1900 to 2099 without separators.
    pub year_like: bool,
}

static DIGITS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\(?-?(?:[0-9]{1,3}(?:[,.'\u{00A0}][0-9]{3})+(?:[.,][0-9]+)?|[0-9]+(?:\.[0-9]+)?[eE][-+−]?[0-9]{1,3}\b|[0-9]+(?:[.,][0-9]+)?)\)?")
        .expect("digits regex")
});

static PERCENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s?(?:%|percent\b|per\s?cent\b|pour\s?cent\b|prozent\b|procent\b)").expect("percent")
});

static CURRENCY_BEFORE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)(?:us\$|\$|€|£|₹|\brs\.?|\binr|\busd|\beur|\bgbp|\bchf)\s?$").expect("cur"));
static CURRENCY_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s?(?:€|zł|euros?\b|eur\b|usd\b|dollars?\b|gbp\b|inr\b|rupees?\b|chf\b)").expect("cur after")
});

/// Time units by the forms documents write them in.
const TIME_UNITS: &[(&str, &str)] = &[
    ("days", "day"),
    ("day", "day"),
    ("weeks", "week"),
    ("week", "week"),
    ("months", "month"),
    ("month", "month"),
    ("years", "year"),
    ("year", "year"),
    ("yrs", "year"),
    ("hours", "hour"),
    ("hour", "hour"),
    ("hrs", "hour"),
    ("minutes", "minute"),
    ("minute", "minute"),
    ("jours", "day"),
    ("jour", "day"),
    ("semaines", "week"),
    ("semaine", "week"),
    ("mois", "month"),
    ("ans", "year"),
    ("an", "year"),
    ("années", "year"),
    ("année", "year"),
    ("heures", "hour"),
    ("heure", "hour"),
    ("tage", "day"),
    ("tagen", "day"),
    ("tag", "day"),
    ("wochen", "week"),
    ("monate", "month"),
    ("monaten", "month"),
    ("monat", "month"),
    ("jahre", "year"),
    ("jahren", "year"),
    ("jahr", "year"),
    ("stunden", "hour"),
    ("dagen", "day"),
    ("dag", "day"),
    ("weken", "week"),
    ("maanden", "month"),
    ("maand", "month"),
    ("jaar", "year"),
    ("jaren", "year"),
    ("uur", "hour"),
    ("días", "day"),
    ("dias", "day"),
    ("día", "day"),
    ("meses", "month"),
    ("mes", "month"),
    ("años", "year"),
    ("año", "year"),
    ("horas", "hour"),
];

const ONES: &[(&str, u32)] = &[
    ("zero", 0),
    ("one", 1),
    ("two", 2),
    ("three", 3),
    ("four", 4),
    ("five", 5),
    ("six", 6),
    ("seven", 7),
    ("eight", 8),
    ("nine", 9),
    ("ten", 10),
    ("eleven", 11),
    ("twelve", 12),
    ("thirteen", 13),
    ("fourteen", 14),
    ("fifteen", 15),
    ("sixteen", 16),
    ("seventeen", 17),
    ("eighteen", 18),
    ("nineteen", 19),
    ("un", 1),
    ("une", 1),
    ("deux", 2),
    ("trois", 3),
    ("quatre", 4),
    ("cinq", 5),
    ("six", 6),
    ("sept", 7),
    ("huit", 8),
    ("neuf", 9),
    ("dix", 10),
    ("onze", 11),
    ("douze", 12),
    ("treize", 13),
    ("quatorze", 14),
    ("quinze", 15),
    ("seize", 16),
];
const TENS: &[(&str, u32)] = &[
    ("twenty", 20),
    ("thirty", 30),
    ("forty", 40),
    ("fifty", 50),
    ("sixty", 60),
    ("seventy", 70),
    ("eighty", 80),
    ("ninety", 90),
    ("vingt", 20),
    ("trente", 30),
    ("quarante", 40),
    ("cinquante", 50),
    ("soixante", 60),
];

/// The word at `text[at..]` (letters only) and its end.
fn word_at(text: &str, at: usize) -> Option<(&str, usize)> {
    let rest = &text[at..];
    let len = rest.find(|c: char| !c.is_alphabetic()).unwrap_or(rest.len());
    (len > 0).then(|| (&rest[..len], at + len))
}

/// What follows a number at byte `end`: percent, currency, a time unit
/// (possibly after a parenthesised copy: `thirty (30) days`).
fn tail(line: &str, token: &mut NumberToken) {
    let rest = &line[token.end..];
    if let Some(m) = PERCENT.find(rest) {
        // "99.995%": a share, so the point is a decimal point, not a
        // thousands group (which would make it 99,995 percent); a comma
        // stays a group ("1,250%").
        let raw = &line[token.start..token.end];
        if token.value.abs() > 100.0
            && raw.matches('.').count() == 1
            && !raw.contains(',')
            && let Ok(decimal) = raw.trim_start_matches(['(', '-']).trim_end_matches(')').parse::<f64>()
            && decimal.abs() <= 100.0
        {
            token.value = decimal.copysign(token.value);
            token.integer = false;
        }
        token.percent = true;
        token.unit_text = Some("%".to_owned());
        token.end += m.end();
        return;
    }
    if CURRENCY_AFTER.is_match(rest) || CURRENCY_BEFORE.is_match(&line[..token.start]) {
        token.money = true;
    }
    // Skip a parenthesised copy of the number: "thirty-six (36) months".
    let mut at = token.end;
    let trimmed = rest.trim_start();
    if trimmed.starts_with('(')
        && let Some(close) = trimmed.find(')')
        && trimmed[1..close].trim().chars().all(|c| c.is_ascii_digit())
        && close > 1
    {
        at = token.end + (rest.len() - trimmed.len()) + close + 1;
    }
    let gap = line[at..].len() - line[at..].trim_start().len();
    if gap > 2 {
        return;
    }
    if let Some((word, end)) = word_at(line, at + gap) {
        let lower = word.to_lowercase();
        if let Some((_, unit)) = TIME_UNITS.iter().find(|(form, _)| *form == lower) {
            token.time_unit = Some(unit);
            token.unit_text = Some(word.to_owned());
            token.end = end;
        }
    }
}

/// Spelled numbers of a line (`thirty-six`, `two`, `vingt`), as
/// `(value, start, end)`.
fn spelled(line: &str) -> Vec<(f64, usize, usize)> {
    let mut out = Vec::new();
    let lower = line.to_lowercase();
    if lower.len() != line.len() {
        // Offsets would not map back; spelled numbers are rare in such lines.
        return out;
    }
    let mut at = 0;
    while at < lower.len() {
        let Some((word, end)) = word_at(&lower, at) else {
            at += lower[at..].chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let starts_word = at == 0 || !lower[..at].chars().next_back().is_some_and(char::is_alphanumeric);
        if !starts_word {
            at = end;
            continue;
        }
        if let Some((_, tens)) = TENS.iter().find(|(w, _)| *w == word) {
            let mut value = *tens;
            let mut stop = end;
            if lower[end..].starts_with(['-', ' '])
                && let Some((next, next_end)) = word_at(&lower, end + 1)
                && let Some((_, one)) = ONES.iter().find(|(w, v)| *w == next && (1..10).contains(v))
            {
                value += one;
                stop = next_end;
            }
            out.push((f64::from(value), at, stop));
            at = stop;
            continue;
        }
        if let Some((_, one)) = ONES.iter().find(|(w, _)| *w == word) {
            // "one" and "un(e)" are too often articles or pronouns, unless a
            // time unit follows ("one year", "un mois").
            let unit_next = || {
                let gap = lower[end..].len() - lower[end..].trim_start().len();
                (1..=2).contains(&gap)
                    && word_at(&lower, end + gap).is_some_and(|(w, _)| TIME_UNITS.iter().any(|(form, _)| *form == w))
            };
            if !matches!(word, "one" | "un" | "une") || unit_next() {
                out.push((f64::from(*one), at, end));
            }
        }
        at = end;
    }
    out
}

/// Whether byte `at` sits inside `[...]` made of numbers and commas.
fn in_brackets(line: &str, at: usize) -> bool {
    let Some(open) = line[..at].rfind('[') else { return false };
    let Some(close) = line[at..].find(']') else { return false };
    line[open + 1..at + close].chars().all(|c| c.is_ascii_digit() || c == ',' || c == ' ' || c == '-')
}

/// Whether the number at `start..end` opens its line as a clause or item
/// number (`3.1 Hospital means`, `12. Termination`, `(b) ...`): a label of
/// the line, not a value in it.
pub fn is_leading_label(line: &str, start: usize, end: usize) -> bool {
    let before = line[..start].trim();
    let opens =
        before.is_empty() || matches!(before, "•" | "-" | "–" | "(" | "*" | "§" | "Article" | "Section" | "Clause");
    let after = &line[end..];
    let next_word = after.trim_start_matches([')', '.', ':']).trim_start();
    let spaced = after.starts_with([' ', '\t', ')', '.']) && next_word.chars().next().is_some_and(char::is_alphabetic);
    opens && spaced && !line[start..end].contains(['%', '$', '€', '£'])
}

/// Whether the number at `start..end` is a footnote mark: one digit in
/// parentheses right after a word (`Special cash dividends per share (1)`),
/// not a negative figure (`(159)`, `$ (1)`), which follows a figure, a
/// currency or the row's start.
pub fn is_footnote_mark(line: &str, start: usize, end: usize) -> bool {
    let token = &line[start..end];
    let digits = token.trim_matches(['(', ')']).trim();
    if digits.len() != 1 || !digits.chars().all(|c| c.is_ascii_digit()) {
        return false;
    }
    let open = token.starts_with('(') || line[..start].trim_end().ends_with('(');
    let close = token.ends_with(')') || line[end..].trim_start().starts_with(')');
    let before = line[..start].trim_end();
    let before = before.strip_suffix('(').unwrap_or(before).trim_end();
    open && close && before.chars().next_back().is_some_and(char::is_alphabetic)
}

impl NumberToken {
    /// Whether this number opens `line` as its clause or item number
    /// ([`is_leading_label`]). A whole number with a time unit written in
    /// lower case is a quantity wherever it stands: "48 heures après
    /// constat" or "30 days from receipt" opening a table cell or a wrapped
    /// line, while a clause title is capitalised ("2 Day Care Treatment")
    /// or numbered with a decimal ("3.1 Hospital means").
    pub fn opens_as_label(&self, line: &str) -> bool {
        let quantity = self.integer
            && self.time_unit.is_some()
            && self.unit_text.as_deref().is_some_and(|u| u.starts_with(char::is_lowercase));
        !quantity && is_leading_label(line, self.start, self.end)
    }
}

/// A number in scientific notation (`1e-4`, `2.5E+3`, `1e−5` with a
/// typographic minus), as papers print learning rates and small constants.
fn parse_scientific(raw: &str) -> Option<f64> {
    if !raw.contains(['e', 'E']) {
        return None;
    }
    raw.replace('−', "-").parse().ok()
}

/// Every number of a line, left to right.
pub fn find_numbers(line: &str) -> Vec<NumberToken> {
    let mut out: Vec<NumberToken> = Vec::new();
    for m in DIGITS.find_iter(line) {
        let mut raw = m.as_str();
        let mut start = m.start();
        let mut end = m.end();
        let parenthesised = raw.starts_with('(') && raw.ends_with(')');
        if !parenthesised {
            if let Some(stripped) = raw.strip_prefix('(') {
                raw = stripped;
                start += 1;
            }
            if let Some(stripped) = raw.strip_suffix(')') {
                raw = stripped;
                end -= 1;
            }
        }
        let before = line[..start].chars().next_back();
        // A hyphen between two words or figures ("2014-08", "AC-2") is no
        // minus sign.
        if raw.starts_with('-') && before.is_some_and(char::is_alphanumeric) {
            continue;
        }
        // A reference marker ("[36]", "[3, 4]") is not a number of the text.
        if before == Some('[') || (before.is_some_and(|c| c == ',' || c == ' ') && in_brackets(line, start)) {
            continue;
        }
        // Glued to letters on either side: a code ("OD3041", "3M"), an
        // ordinal ("12th") or a label stuck to a value; "5x" stays a number.
        if before.is_some_and(|c| c.is_alphabetic() || c == '_' || c == '/')
            || word_at(line, end).is_some_and(|(w, _)| !w.eq_ignore_ascii_case("x"))
        {
            continue;
        }
        if before == Some('-') && line[..start - 1].chars().next_back().is_some_and(char::is_alphanumeric) {
            // "AC-2", "2014-08-03": a code or a date part.
            continue;
        }
        // "2.3 · 1019": a text layer that lost the superscript prints
        // 2.3 · 10^19 so; the power of ten belongs to the number before it.
        if raw.len() >= 3
            && raw.len() <= 4
            && raw.starts_with("10")
            && raw.bytes().all(|b| b.is_ascii_digit())
            && let Some(prev) = out.last_mut()
            && line[prev.end..start].trim().chars().count() == 1
            && line[prev.end..start].trim().starts_with(['·', '×', '*'])
            && let Ok(power) = raw[2..].parse::<i32>()
        {
            // Parsed as one literal: multiplying by 10^n rounds (1.4 · 10^20
            // became 139999999999999980000).
            prev.value = format!("{}e{power}", prev.value).parse().unwrap_or(prev.value * 10f64.powi(power));
            prev.end = end;
            prev.integer = prev.value.fract() == 0.0;
            continue;
        }
        let inner = raw.trim_start_matches('(').trim_end_matches(')');
        let negative_sign = inner.starts_with('-');
        let digits = inner.trim_start_matches('-');
        let Some(mut value) = parse_scientific(digits).or_else(|| parse_number(digits)) else { continue };
        if parenthesised || negative_sign {
            value = -value;
        }
        let integer =
            !digits.contains(['.', ',']) || parse_number(digits).is_some_and(|v| v.fract() == 0.0 && digits.len() > 4);
        let year_like =
            digits.len() == 4 && digits.bytes().all(|b| b.is_ascii_digit()) && (1900..2100).contains(&(value as i64));
        let mut token = NumberToken {
            value,
            start,
            end,
            integer,
            spelled: false,
            percent: false,
            money: false,
            time_unit: None,
            unit_text: None,
            year_like: year_like && !parenthesised && !negative_sign,
        };
        tail(line, &mut token);
        out.push(token);
    }
    for (value, start, end) in spelled(line) {
        if out.iter().any(|t| t.start < end && start < t.end) {
            continue;
        }
        let mut token = NumberToken {
            value,
            start,
            end,
            integer: true,
            spelled: true,
            percent: false,
            money: false,
            time_unit: None,
            unit_text: None,
            year_like: false,
        };
        tail(line, &mut token);
        out.push(token);
    }
    // A parenthesised copy right after a spelled number is the same number:
    // keep the spelled one, which carries the unit.
    out.sort_by_key(|t| t.start);
    let mut kept: Vec<NumberToken> = Vec::new();
    for token in out {
        if let Some(prev) = kept.last()
            && prev.spelled
            && prev.value == token.value.abs()
            && token.start >= prev.start
            && token.end <= prev.end
        {
            continue;
        }
        kept.push(token);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(line: &str) -> Vec<f64> {
        find_numbers(line).iter().map(|t| t.value).collect()
    }

    #[test]
    fn digits_and_separators() {
        assert_eq!(values("we employed 29,239 people, of which 51% were"), [29239.0, 51.0]);
        assert_eq!(values("Pdrop = 0.1."), [0.1]);
        assert_eq!(values("In this work we employ h = 8 parallel attention layers"), [8.0]);
        assert_eq!(values("net loss of (1,577) million"), [-1577.0]);
        // A date's parts after its year are no minus signs (dates are told
        // apart by the date finder).
        assert_eq!(values("see AC-2 and OD3041, table 2014-08-03"), [2014.0]);
        assert_eq!(values("taux de 7,5 %"), [7.5]);
        assert_eq!(values("label smoothing of value 0.1 [36]. This [3, 4] h = 8"), [0.1, 8.0]);
        // A power of ten whose superscript the text layer lost.
        assert_eq!(values("27.3 38.1 3.3 · 1018"), [27.3, 38.1, 3.3e18]);
    }

    #[test]
    fn what_follows_a_number() {
        let t = &find_numbers("a waiting period of thirty-six (36) months of continuous coverage")[0];
        assert_eq!((t.value, t.time_unit, t.spelled), (36.0, Some("month"), true));
        assert_eq!(&"a waiting period of thirty-six (36) months of"[t.start..t.end], "thirty-six (36) months");
        let t = &find_numbers("A grace period of thirty days is provided")[0];
        assert_eq!((t.value, t.time_unit), (30.0, Some("day")));
        let t = &find_numbers("No Claim Discount of 5% on the base premium")[0];
        assert!(t.percent);
        let t = &find_numbers("franchise de 30 jours")[0];
        assert_eq!(t.time_unit, Some("day"));
        let t = &find_numbers("Total $4.11")[0];
        assert!(t.money);
        assert!(find_numbers("fiscal 2019 results")[0].year_like);
        assert!(!find_numbers("1,939 rooms")[0].year_like);
        let clause = "3.1 Hospital means any institution";
        let t = &find_numbers(clause)[0];
        assert!(is_leading_label(clause, t.start, t.end));
        let value = "5% on the base premium";
        let t = &find_numbers(value)[0];
        assert!(!is_leading_label(value, t.start, t.end));
        // A footnote mark after a row label; a negative figure after another.
        let row = "Special cash dividends per share (1) 0.45 0.51";
        let at = row.find("(1)").expect("mark");
        assert!(is_footnote_mark(row, at, at + 3));
        assert!(is_footnote_mark(row, at + 1, at + 2), "the digit alone, its parentheses around it");
        let negative = "Other income 12 (1) 4";
        let at = negative.find("(1)").expect("figure");
        assert!(!is_footnote_mark(negative, at, at + 3));
        let money = "Net change $ (1)";
        let at = money.find("(1)").expect("figure");
        assert!(!is_footnote_mark(money, at, at + 3));
        assert!(!is_footnote_mark("Interest expense (159)", 17, 22));
        let t = &find_numbers("the learning rate as 1e-4.")[0];
        assert!((t.value - 1e-4).abs() < 1e-12, "{t:?}");
        assert_eq!(find_numbers("rounds of 2.5E+3 steps")[0].value, 2500.0);
        let t = &find_numbers("designed availability of 99.995%")[0];
        assert!(t.percent && (t.value - 99.995).abs() < 1e-9, "{t:?}");
        assert_eq!(find_numbers("a growth of 1,250%")[0].value, 1250.0);
        let t = &find_numbers("at least one year prior to expiry")[0];
        assert_eq!((t.value, t.time_unit), (1.0, Some("year")));
        assert!(find_numbers("one of the parties").is_empty());
        // A quantity opening a cell or a wrapped line is no clause number;
        // a capitalised clause title after a whole number still is.
        for (line, label) in [
            ("48 heures après constat", false),
            ("30 days from the date of receipt", false),
            ("3.1 Hospital means any institution", true),
            ("2 Day Care Treatment means", true),
            ("12. Termination", true),
        ] {
            let t = &find_numbers(line)[0];
            assert_eq!(t.opens_as_label(line), label, "{line}");
        }
    }
}
