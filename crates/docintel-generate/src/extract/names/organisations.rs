//! Organisations' names: capitalised words ending in a legal or
//! institutional word, joined by `of`, `and`, `&`…, or an acronym.

use super::{NameToken, ORG_WORDS, bare, capitalised, words};

/// Legal-form words that may follow a name after a comma (`NIKE, Inc.`).
const LEGAL_FORMS: &[&str] = &[
    "inc",
    "incorporated",
    "corp",
    "co",
    "llc",
    "l.l.c",
    "ltd",
    "limited",
    "llp",
    "lp",
    "plc",
    "gmbh",
    "ag",
    "sa",
    "s.a",
    "sas",
    "bv",
    "b.v",
    "nv",
    "n.v",
    "pvt",
];

/// Words that may join the capitalised words of an organisation's name.
/// The most letters an acronym standing for a name has.
const MAX_ACRONYM: usize = 5;

const ORG_JOINERS: &[&str] = &["of", "and", "&", "de", "du", "des", "für", "for", "the", "la", "le", "et", "y"];

fn org_word(word: &str) -> bool {
    (capitalised(word)
        || word.chars().next().is_some_and(|c| c.is_ascii_digit()) && word.chars().any(char::is_alphabetic))
        && !NOT_ORG_WORDS.contains(&bare(word).as_str())
}

/// Words that a capital makes look like part of a name: articles, document
/// parts, and function words at the start of a sentence or a heading ("If
/// Company fails", "Each Party", "NOW, THEREFORE"): never an organisation's
/// word.
const NOT_ORG_WORDS: &[&str] = &[
    "the",
    "a",
    "an",
    "this",
    "our",
    "we",
    "page",
    "table",
    "section",
    "if",
    "each",
    "either",
    "neither",
    "any",
    "such",
    "these",
    "those",
    "that",
    "now",
    "whereas",
    "whereby",
    "therefore",
    "hereby",
    "herein",
    "upon",
    "when",
    "where",
    "while",
    "unless",
    "except",
    "notwithstanding",
    "as",
    "at",
    "by",
    "in",
    "on",
    "to",
    "with",
    "from",
    "under",
    "both",
    "every",
    "its",
    "his",
    "her",
    "their",
    "your",
    "my",
    "si",
    "chaque",
    "lorsque",
];

/// Organisations' names of a line.
pub fn find_organisations(line: &str) -> Vec<NameToken> {
    let (suffixes, prefixes) = &*ORG_WORDS;
    let ws = words(line);
    let mut out: Vec<NameToken> = Vec::new();
    let mut i = 0;
    while i < ws.len() {
        // "The NASDAQ ...": the article belongs to the name only when a
        // capitalised word follows.
        let lead_the = bare(ws[i].text) == "the" && capitalised(ws[i].text);
        let first = if lead_the { i + 1 } else { i };
        if first >= ws.len() || !org_word(ws[first].text) {
            i += 1;
            continue;
        }
        let mut end = first + 1;
        let mut last_good = end;
        while end < ws.len() && end - first < 8 {
            let gap = &line[ws[end - 1].end..ws[end].start];
            let plain_gap = gap.chars().all(char::is_whitespace) && !gap.is_empty() && gap.chars().count() <= 6;
            let comma_suffix = gap.trim() == "," && LEGAL_FORMS.contains(&bare(ws[end].text).as_str());
            if !(plain_gap || comma_suffix) {
                break;
            }
            // Every word of a name is capitalised: "Company services as"
            // ends before "services", and "as" is the Norwegian "AS" only
            // when written so.
            if org_word(ws[end].text) {
                end += 1;
                last_good = end;
            } else if ORG_JOINERS.contains(&bare(ws[end].text).as_str())
                && end + 1 < ws.len()
                && org_word(ws[end + 1].text)
            {
                end += 1;
            } else {
                break;
            }
        }
        let end = last_good;
        let names: Vec<String> = ws[first..end].iter().map(|w| bare(w.text)).collect();
        let suffix = names.last().is_some_and(|w| suffixes.contains(w)) && names.len() >= 2;
        let prefix = prefixes.contains(&names[0]) && names.len() >= 3 && names[1] == "of";
        // An acronym is short (`SEC`, `NASDQ`, `AT&T`); a longer word in
        // capitals is a heading or a shouted word (`WHEREAS`, `EXHIBIT`).
        let letters = ws[first].text.chars().filter(|c| c.is_alphabetic()).count();
        let acronym = names.len() == 1
            && (3..=MAX_ACRONYM).contains(&letters)
            && ws[first].text.chars().all(|c| c.is_uppercase() || c == '&');
        // "a Delaware corporation", "an Indian company": a description of
        // a party, not its name.
        let described = first > 0 && matches!(bare(ws[first - 1].text).as_str(), "a" | "an");
        let fit = if described {
            0.0
        } else if suffix || prefix {
            1.0
        } else if acronym {
            0.5
        } else if names.len() >= 2 {
            0.25
        } else {
            0.0
        };
        if fit > 0.0 {
            let start = if lead_the && (suffix || prefix) { ws[i].start } else { ws[first].start };
            let stop = ws[end - 1].end;
            out.push(NameToken { value: line[start..stop].to_owned(), start, end: stop, fit });
            i = end;
        } else {
            i += 1;
        }
    }
    out
}
