//! Identifiers: invoice, order and booking numbers, VAT numbers, tickers,
//! control ids ([`crate::extract::phone::find_codes`]); and the code a
//! question's head noun names in the row ([`series`]).

use std::sync::LazyLock;

use docintel_schema::{AnswerValue, Line};
use regex::Regex;

use super::{FindContext, Found};
use crate::extract::phone::find_codes;
use crate::reader::evidence::{word_matches, words_of};

pub(super) fn find(rows: &[&Line], row: usize, ctx: &FindContext) -> Vec<Found> {
    let text = rows[row].text.as_str();
    let mut out = series(text, row, &ctx.focus);
    // A code the line broke after a hyphen ("SP 800-" / "37, Risk …") goes
    // on at the start of the next row.
    if let Some(last) = out.last_mut()
        && last.end == text.trim_end().len()
        && text.trim_end().ends_with(['-', '‐', '–'])
        && let Some(next) = rows.get(row + 1)
    {
        let rest = next.text.trim_start();
        let piece: String = rest.chars().take_while(char::is_ascii_alphanumeric).collect();
        if !piece.is_empty() && !rest[piece.len()..].starts_with(|c: char| c.is_alphanumeric()) {
            if let AnswerValue::Text(value) = &mut last.value {
                value.push_str(&piece);
            }
            last.text.push_str(&piece);
            last.last_row = row + 1;
        }
    }
    for t in find_codes(text) {
        match out.iter_mut().find(|s| s.start < t.end && t.start < s.end) {
            // A code the shape alone reads keeps the fit of its shape: a
            // label word before it ("Related Controls: AT-2") says less
            // than the code's own form.
            Some(named) => named.fit = t.fit,
            None => out.push(Found::new(t.start, t.end, row, AnswerValue::Text(t.value.clone()), &t.value, t.fit)),
        }
    }
    out.sort_by_key(|f| f.start);
    out
}

/// A code as printed after the noun that names its series: an optional
/// letter prefix, then a digit, then letters, digits and inner `.-/`
/// separators (a hyphen may be followed by a space where a line broke:
/// "800- 37"), then an optional parenthesised number ("IR-4(11)").
static SERIES_CODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[A-Z]{1,5}[.\-]?)?\d[0-9A-Za-z]*(?:(?:[./]|[-‐–]\s?)[0-9A-Za-z]+)*(?:\(\d{1,3}\))?")
        .expect("series code")
});

/// What may stand between a series noun and its code: a number sign or
/// word ("No.", "n°", "#", "number"), a colon.
static NUMBER_SIGN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\s*(?:[:#]|(?i:n°|no\.|nr\.|no\b|nr\b|number\b|numéro\b|num\b|nummer\b)))*\s*")
        .expect("number sign")
});

/// The codes the question's head noun (the last of its focus words) names
/// in `text`: "SP 800-37" after "which NIST SP", "IIS-00325657" after
/// "which NSF grant" ("… NSF grant IIS-00325657"), "L.113-8" after "quel
/// article" ("l'article L.113-8"). A series noun printed capitalised is part
/// of the code's name ("Executive Order 13587"), with the focus words
/// capitalised before it. A quantity is no code: a bare number of one or
/// two digits, a year, or a number followed by `%` or a word in lower case
/// ("180 days").
pub(super) fn series(text: &str, row: usize, focus: &[String]) -> Vec<Found> {
    let Some(head) = focus.last() else { return Vec::new() };
    let words = words_of(text);
    let mut out: Vec<Found> = Vec::new();
    for (j, word) in words.iter().enumerate() {
        if !word_matches(&word.norm, head) || word.norm.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let after = &text[word.end..];
        let skip = NUMBER_SIGN.find(after).map_or(0, |m| m.end());
        if skip == 0 && !after.is_empty() {
            // The code is set apart from its noun by a space at least.
            continue;
        }
        let at = word.end + skip;
        let Some(m) = SERIES_CODE.find(&text[at..]) else { continue };
        let code = m.as_str().trim_end_matches(['.', '-', '/']);
        // A hyphen that ends the row is where the line broke the code.
        let broken = matches!(text[at + code.len()..].trim_end(), "-" | "‐" | "–");
        if code.is_empty() || text[at + code.len()..].starts_with(|c: char| c.is_alphanumeric()) {
            continue;
        }
        let plain = code.chars().all(|c| c.is_ascii_digit()) && !broken;
        let tail = &text[at + code.len()..];
        let rest = tail.trim_start();
        // "515,2012": a number written in groups.
        let grouped =
            tail.len() > 1 && tail.starts_with([',', '.']) && tail[1..].starts_with(|c: char| c.is_ascii_digit());
        let year = plain && code.parse::<u32>().is_ok_and(|y| (1900..2100).contains(&y));
        let quantity = plain
            && (code.len() <= 2
                || year
                || grouped
                || rest.starts_with('%')
                || rest.chars().next().is_some_and(char::is_lowercase));
        if quantity {
            continue;
        }
        // The series noun, with the focus words before it, names the code
        // when the document capitalises it and prints the code right after
        // it ("SP 800-37", "FIPS Publication 201"; not "grant IIS-…", not
        // "Policy No.: …").
        let mut start = at;
        if text[word.start..].starts_with(char::is_uppercase) && text[word.end..at].trim().is_empty() {
            start = word.start;
            let mut k = j;
            while k > 0
                && focus.iter().any(|f| word_matches(&words[k - 1].norm, f))
                && text[words[k - 1].start..].starts_with(char::is_uppercase)
                && text[words[k - 1].end..words[k].start].trim().is_empty()
            {
                k -= 1;
                start = words[k].start;
            }
        }
        let end = if broken { text.trim_end().len() } else { at + code.len() };
        if out.iter().any(|f| f.start < end && start < f.end) {
            continue;
        }
        let written = &text[start..end];
        // One spelling for a code broken over a line ("800- 37").
        let value: String = {
            let mut v = String::with_capacity(written.len());
            let mut chars = written.chars().peekable();
            while let Some(c) = chars.next() {
                v.push(c);
                if matches!(c, '-' | '‐' | '–') && chars.peek() == Some(&' ') {
                    chars.next();
                }
            }
            v
        };
        out.push(Found::new(start, end, row, AnswerValue::Text(value), written, 1.0));
    }
    out
}

/// Whether a code the question's head noun names is on any of `rows`.
pub(crate) fn names_series(rows: &[&str], focus: &[String]) -> bool {
    rows.iter().enumerate().any(|(i, r)| !series(r, i, focus).is_empty())
}

#[cfg(test)]
mod tests {
    use super::series;

    fn codes(text: &str, focus: &[&str]) -> Vec<String> {
        let focus: Vec<String> = focus.iter().map(|f| (*f).to_owned()).collect();
        series(text, 0, &focus)
            .into_iter()
            .map(|f| match f.value {
                docintel_schema::AnswerValue::Text(t) => t,
                other => other.to_string(),
            })
            .collect()
    }

    #[test]
    fn the_code_a_series_noun_names() {
        assert_eq!(
            codes("programs, such as SP 800- 37, Risk Management Framework, and SP 800-30, Guide", &["nist", "sp"]),
            ["SP 800-37", "SP 800-30"]
        );
        assert_eq!(codes("supported by the NSF grant IIS-00325657.", &["nsf", "grant"]), ["IIS-00325657"]);
        assert_eq!(codes("en application de l'article L.113-8 du Code", &["article"]), ["L.113-8"]);
        assert_eq!(
            codes("required by Executive Order 13587, Structural", &["executive", "order"]),
            ["Executive Order 13587"]
        );
        assert_eq!(codes("Policy No.: P-2231/77 issued", &["policy"]), ["P-2231/77"]);
        assert_eq!(codes("see NIST IR 8286D, Using", &["nist", "ir"]), ["NIST IR 8286D"]);
    }

    #[test]
    fn a_code_the_line_broke_goes_on_on_the_next_row() {
        let line = |id: u32, text: &str| docintel_schema::Line {
            line_id: id,
            page: 1,
            line_in_page: id,
            text: text.to_owned(),
            bbox: docintel_schema::BBox { x0: 10.0, y0: 10.0 * id as f32, x1: 500.0, y1: 10.0 * id as f32 + 8.0 },
        };
        let (a, b) = (line(1, "assessment programs, such as SP 800-"), line(2, "37, Risk Management Framework"));
        let ctx = crate::reader::kinds::FindContext::with_focus(&["nist", "sp"]);
        let found = super::find(&[&a, &b], 0, &ctx);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].value, docintel_schema::AnswerValue::Text("SP 800-37".to_owned()));
        assert_eq!(found[0].last_row, 1);
    }

    #[test]
    fn a_quantity_after_the_noun_is_no_code() {
        assert!(codes("a waiting period 180 days long", &["period"]).is_empty());
        assert!(codes("grade 12 students", &["grade"]).is_empty());
        assert!(codes("in fiscal year 2019 the", &["year"]).is_empty());
        assert!(codes("the discount 15% applies", &["discount"]).is_empty());
        assert!(codes("Case Number 515,2012", &["number"]).is_empty(), "a number in groups");
        assert!(codes("the SPA800 unit", &["sp"]).is_empty(), "a word that only begins with the noun");
    }
}
