//! Identifier-like values found by regular expression: e-mail addresses,
//! IBANs (checked with the ISO 13616 mod-97 rule) and URLs.

use std::sync::LazyLock;

use regex::Regex;

/// A value found in a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternToken {
    /// The normalised value (an IBAN without spaces).
    pub value: String,
    /// Byte offset in the line.
    pub start: usize,
    /// Byte offset just past the value.
    pub end: usize,
}

static EMAIL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b").expect("email"));
static IBAN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,32}\b").expect("iban"));
static URL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:https?://|www\.)[^\s<>()]+|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|gov|edu|io|fr|de|nl|be|es|it|uk|in|eu)\b(?:/[^\s<>()]*)?",
    )
    .expect("url")
});

/// E-mail addresses in a line.
pub fn find_emails(line: &str) -> Vec<PatternToken> {
    EMAIL
        .find_iter(line)
        .map(|m| PatternToken { value: m.as_str().to_owned(), start: m.start(), end: m.end() })
        .collect()
}

/// Whether a compact IBAN passes the mod-97 check.
pub fn iban_checksum_ok(iban: &str) -> bool {
    if !(15..=34).contains(&iban.len()) || !iban.is_ascii() {
        return false;
    }
    let (head, tail) = iban.split_at(4);
    let mut remainder: u32 = 0;
    for c in tail.chars().chain(head.chars()) {
        let Some(v) = c.to_digit(36) else { return false };
        let digits = if v >= 10 { 100 } else { 10 };
        remainder = (remainder * digits + v) % 97;
    }
    remainder == 1
}

/// IBANs in a line (spaces allowed inside; a candidate swallowing the next
/// word is shortened word by word until the checksum passes).
pub fn find_ibans(line: &str) -> Vec<PatternToken> {
    let mut out = Vec::new();
    for m in IBAN.find_iter(line) {
        let mut end = m.end();
        loop {
            let text = &line[m.start()..end];
            let compact: String = text.chars().filter(|c| *c != ' ').collect();
            if iban_checksum_ok(&compact) {
                out.push(PatternToken { value: compact, start: m.start(), end });
                break;
            }
            match text.rfind(' ') {
                Some(space) => end = m.start() + space,
                None => break,
            }
        }
    }
    out
}

/// URLs and bare web domains in a line (not the domain of an e-mail address).
pub fn find_urls(line: &str) -> Vec<PatternToken> {
    let emails = find_emails(line);
    URL.find_iter(line)
        .filter(|m| !emails.iter().any(|e| m.start() < e.end && e.start < m.end()))
        .map(|m| {
            let text = m.as_str().trim_end_matches(['.', ',', ';', ':']);
            PatternToken { value: text.to_owned(), start: m.start(), end: m.start() + text.len() }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(found: Vec<PatternToken>, expect: &[&str]) {
        let values: Vec<String> = found.into_iter().map(|t| t.value).collect();
        assert_eq!(values, expect);
    }

    #[test]
    fn emails() {
        check(find_emails("Mail: verkoop-nl@saeco.com of bel"), &["verkoop-nl@saeco.com"]);
        check(find_emails("no address here @ all"), &[]);
    }

    #[test]
    fn ibans() {
        check(
            find_ibans("IBAN : FR76 1010 7002 4500 6170 5231 739 - BIC : BREDFRPP"),
            &["FR7610107002450061705231739"],
        );
        check(find_ibans("IBAN NL58RABO0198723202 BIC RABONL2U"), &["NL58RABO0198723202"]);
        check(find_ibans("NL58RABO0198723203"), &[]);
    }

    #[test]
    fn urls() {
        check(find_urls("visit aws.amazon.com/contact-us/ today"), &["aws.amazon.com/contact-us/"]);
        check(find_urls("see https://example.org/a?b=1."), &["https://example.org/a?b=1"]);
        check(find_urls("write to annonce@publicationannoncelegale.fr"), &[]);
    }
}
