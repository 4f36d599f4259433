//! The evidence around a candidate value: the words of its row and of the
//! rows before and after it, its label (the words before it on its row, the
//! row label or the label above it by layout, a label-only line just
//! before), its column header, the heading of its section; and the question
//! terms found there, with their distance to the value.
//!
//! Words are runs of letters or digits (a letter–digit boundary splits them,
//! `2015Invoice` → `2015`, `invoice`; a bound prefix keeps its word over the
//! hyphen, `E-mail` → `email`) in [`docintel_schema::text::normalize`]
//! form; a question term matches a word it equals, a word it starts when it
//! has four letters or more (`charge` → `charges`), or its plural or
//! singular.

use docintel_schema::text::{is_bound_prefix, normalize};
use docintel_schema::{KeywordSource, ParsedQuestion};
use regex::Regex;

use super::stats::DocStats;
use crate::keywords::{KeywordSet, is_generic};

/// A word of a text with its byte range.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Word {
    pub(crate) norm: String,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Hyphens a bound prefix is written with.
const HYPHENS: [char; 2] = ['-', '‐'];

/// The words of `text` (see the module docs).
pub(crate) fn words_of(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut prev: Option<char> = None;
    let flush = |start: &mut Option<usize>, end: usize, out: &mut Vec<Word>| {
        if let Some(s) = start.take() {
            let norm = normalize(&text[s..end].replace(HYPHENS, ""));
            // One spelling for both sides of the Atlantic.
            let norm = match docintel_schema::text::american_spelling(&norm) {
                std::borrow::Cow::Owned(american) => american,
                std::borrow::Cow::Borrowed(_) => norm,
            };
            if !norm.is_empty() {
                out.push(Word { norm, start: s, end });
            }
        }
    };
    for (at, c) in text.char_indices() {
        // "e-mail" is "email", "co-payment" "copayment": a bound prefix
        // goes on over its hyphen into the word it is part of.
        if HYPHENS.contains(&c)
            && let Some(s) = start
            && is_bound_prefix(&text[s..at])
            && text[at + c.len_utf8()..].chars().next().is_some_and(char::is_alphabetic)
        {
            prev = Some(c);
            continue;
        }
        let word_char = c.is_alphanumeric();
        let boundary = matches!(prev, Some(p) if p.is_alphanumeric() && word_char
            && (p.is_ascii_digit() != c.is_ascii_digit()));
        if !word_char || boundary {
            flush(&mut start, at, &mut out);
        }
        if word_char && start.is_none() {
            start = Some(at);
        }
        prev = Some(c);
    }
    flush(&mut start, text.len(), &mut out);
    out
}

/// The folded words of `text` joined by single spaces.
pub(crate) fn folded(text: &str) -> String {
    words_of(text).into_iter().map(|w| w.norm).collect::<Vec<_>>().join(" ")
}

/// Whether word `w` of a text is a form of the term word `t`.
pub(crate) fn word_matches(w: &str, t: &str) -> bool {
    if w == t {
        return true;
    }
    let chars = t.chars().count();
    (chars >= 4 && w.starts_with(t))
        || w.strip_suffix('s').is_some_and(|s| s == t)
        || t.strip_suffix('s').is_some_and(|s| s == w && chars >= 4)
        || w.strip_suffix("es").is_some_and(|s| s == t)
        || (w.ends_with("ies") && t.ends_with('y') && w[..w.len() - 3] == t[..t.len() - 1])
        || abbreviated_number(w, t)
}

/// The words for "number" a compound ends in (German and Dutch write
/// "Kundennummer", "factuurnummer").
const NUMBER_WORDS: &[&str] = &["nummer", "number", "numero", "numéro"];
/// Their abbreviations at the end of a printed label ("Kundennr.",
/// "Factuurnr").
const NUMBER_ABBREVIATIONS: &[&str] = &["nr", "no", "num", "nro"];

/// Whether `w` is the compound `t` with its word for "number" abbreviated:
/// "kundennr" for "kundennummer".
fn abbreviated_number(w: &str, t: &str) -> bool {
    NUMBER_WORDS.iter().filter_map(|n| t.strip_suffix(n)).any(|stem| {
        stem.chars().count() >= 3 && w.strip_prefix(stem).is_some_and(|rest| NUMBER_ABBREVIATIONS.contains(&rest))
    })
}

/// Whether the words `phrase` occur in `words` starting at `at`.
fn phrase_at(words: &[Word], at: usize, phrase: &[String]) -> bool {
    phrase.len() <= words.len() - at && phrase.iter().enumerate().all(|(k, t)| word_matches(&words[at + k].norm, t))
}

/// One alternative wording of a term.
#[derive(Debug, Clone)]
enum Form {
    Words(Vec<String>),
    Regex(Regex),
}

/// A question term: a salient keyword, or a group of expert-dictionary
/// keywords that are alternatives of one concept.
#[derive(Debug, Clone)]
pub(crate) struct Term {
    forms: Vec<(Form, f64)>,
    /// Keyword weight times how rare the term is in the document.
    pub(crate) weight: f64,
    /// Of an expert-dictionary group (alternatives of a concept).
    pub(crate) grouped: bool,
}

/// A term found in a text: which term, at which word, with which share of
/// the term's weight (a lighter alternative counts less).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Hit {
    pub(crate) term: usize,
    pub(crate) word: usize,
    pub(crate) share: f64,
}

/// The question's terms.
#[derive(Debug, Clone)]
pub(crate) struct Terms {
    pub(crate) terms: Vec<Term>,
    /// Total weight of the ungrouped terms.
    plain_total: f64,
    /// Every question word (folded), to tell a value made of them.
    pub(crate) question_words: Vec<String>,
}

impl Terms {
    /// The salient keywords of `question`, weighted by keyword weight times
    /// inverse page frequency in the document.
    pub(crate) fn new(question: &ParsedQuestion, keywords: &KeywordSet, stats: &DocStats) -> Terms {
        let n = stats.n_pages as f64;
        let idf = |forms: &[String]| -> f64 {
            let df = match forms {
                [one] => stats.page_count(one),
                many => stats.pages_with(&many.join(" ")).len(),
            };
            (1.0 + n / (1.0 + df as f64)).ln().max(0.1)
        };
        // A group that names a part of the document the question points to
        // (the balance sheet) locates a page; its other keywords are that
        // page's line items ("total assets", "total current liabilities"):
        // the question's siblings, not its words. Only its titles count.
        let titles: Vec<String> = question
            .scope_filters
            .sections
            .iter()
            .flat_map(|s| s.split(" | "))
            .map(normalize)
            .filter(|t| !t.is_empty())
            .collect();
        let title_of = |k: &crate::keywords::Kw| titles.contains(&normalize(&k.original));
        let part_groups: Vec<&str> =
            keywords.keywords.iter().filter(|k| title_of(k)).filter_map(|k| k.group.as_deref()).collect();
        let mut terms: Vec<Term> = Vec::new();
        let mut groups: Vec<(String, usize)> = Vec::new();
        for k in keywords.keywords.iter().filter(|k| k.salient && k.weight > 0.0) {
            if k.group.as_deref().is_some_and(|g| part_groups.contains(&g)) && !title_of(k) {
                continue;
            }
            let (form, rarity) = match &k.regex {
                Some(regex) => (Form::Regex(regex.clone()), 1.0),
                None => {
                    let words: Vec<String> = words_of(&k.original).into_iter().map(|w| w.norm).collect();
                    if words.is_empty() || words.iter().all(|w| is_generic(w)) {
                        continue;
                    }
                    let rarity = idf(&words);
                    (Form::Words(words), rarity)
                }
            };
            let weight = k.weight * rarity;
            match &k.group {
                Some(group) => match groups.iter().find(|(g, _)| g == group) {
                    Some((_, at)) => {
                        let term = &mut terms[*at];
                        term.forms.push((form, weight));
                        term.weight = term.weight.max(weight);
                    }
                    None => {
                        groups.push((group.clone(), terms.len()));
                        terms.push(Term { forms: vec![(form, weight)], weight, grouped: true });
                    }
                },
                None => terms.push(Term { forms: vec![(form, weight)], weight, grouped: false }),
            }
        }
        let plain_total = terms.iter().filter(|t| !t.grouped).map(|t| t.weight).sum();
        let mut question_words: Vec<String> =
            words_of(&question.corrected_question).into_iter().map(|w| w.norm).collect();
        question_words.extend(
            question
                .keywords
                .iter()
                .filter(|k| k.source == KeywordSource::Direct)
                .flat_map(|k| words_of(&k.text))
                .map(|w| w.norm),
        );
        Terms { terms, plain_total, question_words }
    }

    /// The terms found in `words` (of `raw`).
    pub(crate) fn hits(&self, raw: &str, words: &[Word]) -> Vec<Hit> {
        let mut out = Vec::new();
        for (index, term) in self.terms.iter().enumerate() {
            for (form, weight) in &term.forms {
                let share = if term.weight > 0.0 { weight / term.weight } else { 1.0 };
                match form {
                    Form::Words(phrase) => {
                        for at in 0..words.len() {
                            if phrase_at(words, at, phrase) {
                                out.push(Hit { term: index, word: at, share });
                            }
                        }
                    }
                    Form::Regex(regex) => {
                        for m in regex.find_iter(raw) {
                            let at =
                                words.iter().position(|w| w.end > m.start()).unwrap_or(words.len().saturating_sub(1));
                            out.push(Hit { term: index, word: at, share });
                        }
                    }
                }
            }
        }
        out
    }

    /// The coverage of a set of hits, each discounted by `discount(hit)` in
    /// [0, 1]: the share of the ungrouped terms' weight, or a group's best
    /// alternative, whichever is higher (alternatives of one concept do not
    /// add up). 1 when the question has no terms.
    pub(crate) fn coverage(&self, hits: &[Hit], discount: impl Fn(&Hit) -> f64) -> f64 {
        if self.terms.is_empty() {
            return 1.0;
        }
        let mut best_per_term = vec![0.0f64; self.terms.len()];
        for hit in hits {
            let value = hit.share * discount(hit);
            best_per_term[hit.term] = best_per_term[hit.term].max(value);
        }
        let plain = if self.plain_total > 0.0 {
            self.terms.iter().zip(&best_per_term).filter(|(t, _)| !t.grouped).map(|(t, v)| t.weight * v).sum::<f64>()
                / self.plain_total
        } else {
            0.0
        };
        let group =
            self.terms.iter().zip(&best_per_term).filter(|(t, _)| t.grouped).map(|(_, v)| *v).fold(0.0, f64::max);
        plain.max(group).min(1.0)
    }
}

/// Words apart two terms may stand and still read as one phrase ("chief
/// digital AND technology officer").
const BIGRAM_GAP: usize = 3;

/// The ordered pairs of terms that follow each other in a text (at most
/// [`BIGRAM_GAP`] words apart): its phrases, as the question's terms spell
/// them.
pub(crate) fn term_pairs(hits: &[Hit]) -> Vec<(usize, usize)> {
    let mut sorted: Vec<&Hit> = hits.iter().collect();
    sorted.sort_by_key(|h| (h.word, h.term));
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (k, a) in sorted.iter().enumerate() {
        for b in sorted[k + 1..].iter().take_while(|b| b.word <= a.word + BIGRAM_GAP) {
            if b.term != a.term && b.word > a.word && !out.contains(&(a.term, b.term)) {
                out.push((a.term, b.term));
            }
        }
    }
    out
}

/// The focus words of a question (the noun phrase it asks for), folded.
pub(crate) fn focus_words(question: &ParsedQuestion) -> Vec<String> {
    question
        .generation
        .answer_focus
        .as_deref()
        .map(|f| words_of(f).into_iter().map(|w| w.norm).filter(|w| !is_generic(w)).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_at_letter_digit_boundaries() {
        let w: Vec<String> = words_of("20-10-2015Invoice Date: Pdrop=0.1").into_iter().map(|w| w.norm).collect();
        assert_eq!(w, ["20", "10", "2015", "invoice", "date", "pdrop", "0", "1"]);
        assert_eq!(folded("  Leo    Leopard\u{00A0}"), "leo leopard");
    }

    #[test]
    fn a_bound_prefix_is_one_word_with_its_hyphen_or_without() {
        assert_eq!(folded("E-mail: a@b.com"), folded("Email: a@b.com"));
        assert_eq!(folded("Co-payment and sub-limit"), "copayment and sublimit");
        assert_eq!(folded("Pre-existing"), folded("preexisting"));
        // Other hyphens still part words; a code keeps its parts.
        assert_eq!(folded("English-to-Japanese AC-2 A-1"), "english to japanese ac 2 a 1");
        assert_eq!(folded("non-GAAP U.S.-based"), "non gaap u s based");
    }

    #[test]
    fn forms_of_a_term() {
        assert!(word_matches("charges", "charge"));
        assert!(word_matches("heads", "head"));
        assert!(word_matches("head", "heads"));
        assert!(word_matches("parties", "party"));
        assert!(!word_matches("htm", "ht"));
        // A compound's word for "number", abbreviated on the label.
        assert!(word_matches("kundennr", "kundennummer"));
        assert!(word_matches("factuurnr", "factuurnummer"));
        assert!(!word_matches("kundennr", "vertragsnummer"));
        assert!(!word_matches("no", "number"), "a bare abbreviation is no compound");
        assert!(!word_matches("at", "ats"));
    }
}
