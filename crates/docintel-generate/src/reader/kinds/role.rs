//! Roles ("who signed, and in what capacity?" → `President`; "what is the
//! signer's title?" → `Director, Finance`): the value of a title label in a
//! signature block or a form ("Title: Vice President Business
//! Operations", "Fonction : Gérant"), else a run of capitalised words that
//! holds a role noun ("BRIAN HAYEK, President", "Chief Financial Officer").
//! A labelled value fits fully; a role phrase without its label fits less.

use std::sync::LazyLock;

use docintel_schema::AnswerValue;
use regex::Regex;

use super::{FindContext, Found};

/// A label that introduces a person's role, with its colon.
static LABEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:title|job\s+title|position|capacity|designation|its|fonction|qualit[ée]|titre|titel|funktion|cargo|puesto|functie)\s*:\s*",
    )
    .expect("role label pattern")
});

/// Nouns that name a role (lower case).
#[rustfmt::skip]
const ROLE_NOUNS: &[&str] = &[
    "president", "vice-president", "chairman", "chairwoman", "chairperson", "chair", "director", "officer",
    "manager", "secretary", "treasurer", "partner", "member", "founder", "co-founder", "cofounder", "owner",
    "controller", "comptroller", "counsel", "trustee", "ceo", "cfo", "coo", "cto", "cio", "cmo", "principal",
    "head", "attorney", "administrator", "representative", "agent", "executive", "superintendent", "dean",
    "provost", "registrar", "engineer", "analyst", "consultant", "associate", "assistant", "coordinator",
    "supervisor", "lead", "intern", "gérant", "président", "directeur", "directrice", "administrateur",
    "geschäftsführer", "vorstand", "prokurist", "directeur-général", "bestuurder", "directeur-generaal",
];

/// Words that qualify a role in front of it ("VICE President", "CHIEF
/// Financial Officer", "SENIOR Vice President").
#[rustfmt::skip]
const ROLE_QUALIFIERS: &[&str] = &[
    "vice", "senior", "executive", "chief", "deputy", "assistant", "associate", "general", "managing", "acting",
    "interim", "co", "lead", "principal", "regional", "group", "corporate", "founding", "authorized", "authorised",
];

/// Small words a role's name may hold ("Head OF Sales", "Research AND
/// Development").
const LINKS: &[&str] = &["of", "and", "&", "for", "de", "du", "des", "der", "für"];

/// Most words a role holds.
const MAX_WORDS: usize = 8;

/// Fit of a role phrase found without its label.
const PHRASE_FIT: f64 = 0.8;

pub(super) fn find(text: &str, row: usize, _ctx: &FindContext) -> Vec<Found> {
    let mut out: Vec<Found> = Vec::new();
    let labels: Vec<(usize, usize)> = LABEL.find_iter(text).map(|m| (m.start(), m.end())).collect();
    for (k, &(_, value_start)) in labels.iter().enumerate() {
        // The value runs to the next label of the row ("TITLE: Director,
        // Finance TITLE: President" prints two blocks side by side) or to
        // another label of a signature block ("Date:").
        let end = labels.get(k + 1).map_or(text.len(), |next| next.0);
        let mut value = &text[value_start..end];
        if let Some(m) = OTHER_LABEL.find(value) {
            value = &value[..m.start()];
        }
        let value = value.trim().trim_end_matches([',', ';']);
        if value.is_empty() || value.split_whitespace().count() > MAX_WORDS || value.chars().all(|c| !c.is_alphabetic())
        {
            continue;
        }
        let start = value_start + text[value_start..].find(value).unwrap_or(0);
        out.push(Found::new(start, start + value.len(), row, AnswerValue::Text(value.to_owned()), value, 1.0));
    }
    for (start, end) in phrases(text) {
        if out.iter().any(|f| f.start < end && start < f.end) {
            continue;
        }
        let value = &text[start..end];
        out.push(Found::new(start, end, row, AnswerValue::Text(value.to_owned()), value, PHRASE_FIT));
    }
    out.sort_by_key(|f| f.start);
    out
}

/// Labels of a signature block that end a role's value.
static OTHER_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\s(?:date|name|by|signature|nom|datum|fecha|email|e-mail|tel|phone)\s*:").expect("label pattern")
});

/// Byte ranges of role phrases: capitalised words (or links between them)
/// that hold a role noun, starting at a qualifier or the noun; a comma and
/// one capitalised word may close it at the end of the row ("Director,
/// Finance").
fn phrases(text: &str) -> Vec<(usize, usize)> {
    let words: Vec<(usize, usize)> = crate::extract::names::words(text).iter().map(|w| (w.start, w.end)).collect();
    // Without an abbreviation's or a sentence's final stop ("President.").
    let lower: Vec<String> = words.iter().map(|&(s, e)| text[s..e].trim_end_matches('.').to_lowercase()).collect();
    let capitalised = |k: usize| text[words[k].0..].chars().next().is_some_and(char::is_uppercase);
    let is_role = |k: usize| ROLE_NOUNS.contains(&lower[k].as_str());
    let opens = |k: usize| capitalised(k) && (is_role(k) || ROLE_QUALIFIERS.contains(&lower[k].as_str()));
    let mut out = Vec::new();
    let mut k = 0;
    while k < words.len() {
        if !opens(k) {
            k += 1;
            continue;
        }
        let first = k;
        let mut last = k;
        let mut j = k + 1;
        while j < words.len() && j - first < MAX_WORDS {
            let gap = &text[words[j - 1].1..words[j].0];
            if !gap.chars().all(|c| c.is_whitespace()) {
                break;
            }
            if capitalised(j) {
                last = j;
            } else if !LINKS.contains(&lower[j].as_str()) {
                break;
            }
            j += 1;
        }
        if (first..=last).any(is_role) {
            // A sentence's final stop is not the role's.
            let end_of = |k: usize| words[k].0 + text[words[k].0..words[k].1].trim_end_matches('.').len();
            let mut end = end_of(last);
            // "Director, Finance" closing the row.
            if last + 2 == words.len() && text[end..words[last + 1].0].trim() == "," && capitalised(last + 1) {
                end = end_of(last + 1);
            }
            out.push((words[first].0, end));
        }
        k = last + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles(text: &str) -> Vec<(String, f64)> {
        find(text, 0, &FindContext::with_focus(&["capacity"])).into_iter().map(|f| (f.text, f.fit)).collect()
    }

    #[test]
    fn a_title_label_gives_the_role() {
        assert_eq!(
            roles("Title: Vice President Business Operations"),
            [("Vice President Business Operations".to_owned(), 1.0)]
        );
        // Two signature blocks printed side by side.
        assert_eq!(
            roles("TITLE: Director, Finance TITLE: President POS/Barocoding"),
            [("Director, Finance".to_owned(), 1.0), ("President POS/Barocoding".to_owned(), 1.0)]
        );
        assert_eq!(roles("Its: Chief Executive Officer Date: 5/1/2020"), [("Chief Executive Officer".to_owned(), 1.0)]);
    }

    #[test]
    fn a_role_phrase_is_read_after_a_name() {
        assert_eq!(roles("BRIAN HAYEK, President"), [("President".to_owned(), PHRASE_FIT)]);
        assert_eq!(
            roles("Andrew Campion, Executive Vice President and Chief Financial Officer"),
            [("Executive Vice President and Chief Financial Officer".to_owned(), PHRASE_FIT)]
        );
        assert_eq!(
            roles("Mathew R. Watson, Vice President, Finance"),
            [("Vice President, Finance".to_owned(), PHRASE_FIT)]
        );
        // Capitalised words without a role noun are no role; a role noun in
        // lower case in running text is none either.
        assert!(roles("Driven Deliveries, Inc.").is_empty());
        assert!(roles("the president of the board shall sign").is_empty());
        assert_eq!(
            roles("He was appointed Chief Operating Officer."),
            [("Chief Operating Officer".to_owned(), PHRASE_FIT)]
        );
    }
}
