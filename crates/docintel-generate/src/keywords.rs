//! Question keywords matched against lines, with [`docintel_schema::text::normalize`]
//! on both sides so generation agrees with retrieval.
//!
//! A plain keyword matches where it starts a word of the line; keywords of four
//! characters or more may also match a longer word (`charge` → `charges`),
//! shorter ones must match whole words (`ht` does not match `htm`). Regex
//! keywords are matched case-insensitively on the raw line.
//!
//! *Salient* keywords are the non-generic ones: question words and words every
//! document has (`what`, `name`, `document`...) are not salient. When a
//! question comes with no keywords at all (an unparsed question), the content
//! words of the question itself are used.

use docintel_schema::ParsedQuestion;
use docintel_schema::text::normalize;
use regex::Regex;

/// Words that say little about where the answer is.
const GENERIC: &[&str] = &[
    "what",
    "which",
    "who",
    "whom",
    "whose",
    "when",
    "where",
    "why",
    "how",
    "is",
    "are",
    "was",
    "were",
    "the",
    "a",
    "an",
    "of",
    "for",
    "in",
    "on",
    "to",
    "this",
    "that",
    "these",
    "those",
    "does",
    "do",
    "did",
    "document",
    "pdf",
    "file",
    "page",
    "value",
    "please",
    "give",
    "tell",
    "me",
    "show",
    "find",
    "list",
    "all",
    "state",
    "stated",
    "mentioned",
    "according",
    "there",
    "any",
    "it",
    "its",
    "name",
    "named",
    "and",
    "or",
    "with",
    "from",
    "by",
    "be",
    "has",
    "have",
    "le",
    "la",
    "les",
    "de",
    "du",
    "des",
    "est",
    "quel",
    "quelle",
    "der",
    "die",
    "das",
    "ist",
    "het",
    "een",
    "wat",
    "van",
    "moet",
    "ik",
    "je",
    "wie",
    "welke",
    "welk",
    "wo",
    "wann",
    "was",
    "qui",
    "que",
    "quoi",
];

/// Whether a (normalised) word is generic.
pub(crate) fn is_generic(word: &str) -> bool {
    GENERIC.contains(&word)
}

/// One question keyword in match form.
#[derive(Debug, Clone)]
pub(crate) struct Kw {
    /// The keyword as the question parser wrote it.
    pub(crate) original: String,
    norm: String,
    pub(crate) regex: Option<Regex>,
    /// Weight in scoring.
    pub(crate) weight: f64,
    /// Whether it is a content keyword (see the module docs).
    pub(crate) salient: bool,
    /// The concept it stands for (expert dictionary): keywords of one group
    /// are alternative wordings of one thing.
    pub(crate) group: Option<String>,
}

/// The keywords of one question.
#[derive(Debug, Clone, Default)]
pub(crate) struct KeywordSet {
    pub(crate) keywords: Vec<Kw>,
}

impl KeywordSet {
    /// The question's keywords, or its content words when it has none.
    pub(crate) fn from_question(question: &ParsedQuestion) -> KeywordSet {
        let mut keywords = Vec::new();
        for k in &question.keywords {
            let norm = label_form(&k.text);
            if norm.is_empty() || keywords.iter().any(|x: &Kw| x.norm == norm) {
                continue;
            }
            let regex = if k.is_regex {
                match Regex::new(&format!("(?i){}", k.text)) {
                    Ok(r) => Some(r),
                    Err(_) => continue,
                }
            } else {
                None
            };
            let salient = k.is_regex || !norm.split(' ').all(is_generic);
            keywords.push(Kw {
                original: k.text.clone(),
                norm,
                regex,
                weight: f64::from(k.weight.max(0.0)),
                salient,
                group: k.semantic_group.clone(),
            });
        }
        if keywords.is_empty() {
            let text = label_form(&question.corrected_question);
            for word in text.split(|c: char| !c.is_alphanumeric()) {
                if word.chars().count() < 3 || is_generic(word) || keywords.iter().any(|x: &Kw| x.norm == word) {
                    continue;
                }
                keywords.push(Kw {
                    original: word.to_owned(),
                    norm: word.to_owned(),
                    regex: None,
                    weight: 1.0,
                    salient: true,
                    group: None,
                });
            }
        }
        KeywordSet { keywords }
    }

    /// Indices of the keywords found in a line (raw text).
    pub(crate) fn matches(&self, raw: &str) -> Vec<usize> {
        let norm = label_form(raw);
        (0..self.keywords.len()).filter(|&i| self.keywords[i].is_in(raw, &norm)).collect()
    }

    /// The normalised salient keywords that belong to no semantic group.
    pub(crate) fn ungrouped_salient_norms(&self) -> impl Iterator<Item = &str> {
        self.keywords.iter().filter(|k| k.salient && k.group.is_none()).map(|k| k.norm.as_str())
    }

    /// The semantic groups (concepts) of the keywords.
    pub(crate) fn groups(&self) -> impl Iterator<Item = &str> {
        self.keywords.iter().filter_map(|k| k.group.as_deref())
    }

    /// The normalised salient keywords.
    pub(crate) fn salient_norms(&self) -> impl Iterator<Item = &str> {
        self.keywords.iter().filter(|k| k.salient).map(|k| k.norm.as_str())
    }
}

impl Kw {
    fn is_in(&self, raw: &str, norm: &str) -> bool {
        if let Some(regex) = &self.regex {
            return regex.is_match(raw);
        }
        contains_word(norm, &self.norm, self.norm.chars().count() >= 4)
    }
}

/// [`normalize`] plus a space wherever a digit touches a letter, so labels
/// glued to values by PDF extraction (`20-10-2015Invoice Date:`) still match.
pub(crate) fn label_form(raw: &str) -> String {
    let norm = normalize(raw);
    let mut out = String::with_capacity(norm.len() + 4);
    let mut prev: Option<char> = None;
    for c in norm.chars() {
        if let Some(p) = prev
            && ((p.is_ascii_digit() && c.is_alphabetic()) || (p.is_alphabetic() && c.is_ascii_digit()))
        {
            out.push(' ');
        }
        out.push(c);
        prev = Some(c);
    }
    out
}

/// Whether `needle` occurs in `hay` starting at a word start; with
/// `allow_suffix` the occurrence may continue into a longer word.
pub(crate) fn contains_word(hay: &str, needle: &str, allow_suffix: bool) -> bool {
    if needle.is_empty() {
        return false;
    }
    hay.match_indices(needle).any(|(at, _)| {
        let before_ok = hay[..at].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
        let after_ok = allow_suffix || hay[at + needle.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric());
        before_ok && after_ok
    })
}

/// Whether the normalised `text` contains any of the (normalised) phrases as words.
pub(crate) fn has_any(text: &str, phrases: &[&str]) -> bool {
    phrases.iter().any(|p| contains_word(text, p, false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use docintel_schema::Keyword;

    fn set(question: &str, keywords: &[&str]) -> KeywordSet {
        let mut q = ParsedQuestion::unparsed(question, "test");
        q.keywords = keywords.iter().map(|k| Keyword::direct(*k)).collect();
        KeywordSet::from_question(&q)
    }

    fn check(keywords: &[&str], line: &str, expect: &[&str]) {
        let s = set("q", keywords);
        let found: Vec<&str> = s.matches(line).into_iter().map(|i| s.keywords[i].original.as_str()).collect();
        assert_eq!(found, expect, "{line}");
    }

    #[test]
    fn word_matching() {
        check(&["total", "amount"], "TOTAL AMOUNT DUE", &["total", "amount"]);
        check(&["total"], "Subtotal 3.00", &[]);
        check(&["charge"], "Service Charges $4.11", &["charge"]);
        check(&["ht"], "Total HT : 46,68 €", &["ht"]);
        check(&["ht"], "see the htm file", &[]);
        check(&["invoice date"], "Invoice\u{00A0}Date: August 3", &["invoice date"]);
    }

    #[test]
    fn salience_and_fallback() {
        let s = set("What is the name of the CEO's dog?", &["name", "ceo", "dog"]);
        assert_eq!(s.salient_norms().collect::<Vec<_>>(), ["ceo", "dog"]);
        let s = set("What is the name of the CEO's dog?", &[]);
        assert_eq!(s.salient_norms().collect::<Vec<_>>(), ["ceo", "dog"]);
    }

    #[test]
    fn expert_keywords_are_salient_alternatives() {
        let mut q = ParsedQuestion::unparsed("What is the total amount?", "test");
        q.keywords = vec![Keyword::direct("total"), Keyword::direct("amount")];
        for (text, weight) in [("totaal", 0.8), ("gesamtbetrag", 0.9), ("ttc", 0.7)] {
            q.keywords.push(Keyword {
                text: text.to_owned(),
                weight,
                source: docintel_schema::KeywordSource::ExpertDictionary,
                is_regex: false,
                semantic_group: Some("total_amount".to_owned()),
            });
        }
        let s = KeywordSet::from_question(&q);
        assert_eq!(s.salient_norms().count(), 5);
        let found = s.matches("Factuur totaal EUR");
        assert_eq!(found, [2]);
        assert_eq!(s.groups().next(), Some("total_amount"));
        assert_eq!(s.ungrouped_salient_norms().collect::<Vec<_>>(), ["total", "amount"]);
    }
}
