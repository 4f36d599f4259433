//! Answerability, decided in code: every constraint of the question (the
//! entities, periods and qualifiers the question brick read from its
//! wording, [`docintel_schema::GenerationBrief::constraints`]) must be in the
//! answer's evidence, or name the document as a whole.
//!
//! - A constraint printed nowhere in the document makes the question
//!   unanswerable from it: "the document never mentions 'Antarctica'".
//! - A constraint is *in the evidence* of a value when it is on the value's
//!   row or the rows around it, in its labels or column header (a statement
//!   column's year counts), in the heading of its section, or in the first
//!   rows of its page (a table's title).
//! - A constraint *names the document* when it is in the document's file
//!   name or first lines (its title), or, in a document of three pages or
//!   more, on its first page or on at least 40% of its pages: "Nike" in
//!   Nike's 10-K, "Transformer" in the paper, a party on a contract's first
//!   page.

use docintel_schema::ParsedDocument;

use super::evidence::{folded, words_of};
use super::stats::{DocStats, is_acronym_joiner, spells};

/// Share of the pages a constraint must be on to name the document.
const DOCUMENT_SHARE: f64 = 0.4;
/// The document's title lines.
const TITLE_LINES: usize = 5;

/// One constraint of a question.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Constraint {
    /// As the question wrote it.
    pub(crate) text: String,
    /// Folded words, space-joined.
    pub(crate) folded: String,
    /// Printed somewhere in the document.
    pub(crate) in_document: bool,
    /// Names the document as a whole (see the module docs).
    pub(crate) names_document: bool,
    /// Must be on the value's own row, its labels or its neighbour rows
    /// (a title asked for: [`role`]), not anywhere before it.
    pub(crate) local: bool,
    /// The folded sides of a coordination ("President and CEO" →
    /// `president`, `ceo`): the constraint also holds where each side does,
    /// an acronym side where its words are spelled out. Empty when the
    /// constraint joins nothing. Each side with whether it is written as an
    /// acronym.
    pub(crate) conjuncts: Vec<(String, bool)>,
    /// The pages of a caption reference ("Table 3", "Figure 1"): a value
    /// on one of them is in the table or figure the question names, its
    /// caption above or below it. Empty for other constraints.
    pub(crate) caption_pages: Vec<u32>,
    /// A person's name printed in the document ("Edward Schlesinger" as
    /// "Edward A. Schlesinger"): its folded surname, which then names the
    /// person in the evidence too ("Mr. Schlesinger was appointed …").
    pub(crate) surname: Option<String>,
    /// A spelled-out name the document writes as its acronym only
    /// ("Annual General Meeting" where it prints "AGM"): that acronym,
    /// folded, which then stands for the name in the evidence too.
    pub(crate) acronym: Option<String>,
}

/// Whether a constraint names a table or figure by its number: "Table 3",
/// "Figure 1", "Fig. 2", "Tableau 4", "Table1".
pub(crate) fn is_caption(text: &str) -> bool {
    let lower = text.to_lowercase();
    let rest = ["tableau", "tabelle", "table", "figure", "fig.", "fig", "abbildung"]
        .iter()
        .find_map(|name| lower.strip_prefix(name))
        .map(str::trim_start);
    rest.is_some_and(|r| {
        r.starts_with(|c: char| c.is_ascii_digit()) && r.chars().all(|c| c.is_ascii_digit() || c == '.' || c == '-')
    })
}

/// The sides of a coordination in a constraint, folded: "Python and
/// PyTorch" → `python`, `pytorch`.
fn conjuncts(text: &str) -> Vec<(String, bool)> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let joins = |w: &str| matches!(w.to_lowercase().as_str(), "and" | "&" | "et" | "und" | "y");
    if !words.iter().any(|w| joins(w)) {
        return Vec::new();
    }
    let sides: Vec<(String, bool)> = words
        .split(|w| joins(w))
        .map(|side| (folded(&side.join(" ")), side.len() == 1 && is_acronym(side[0])))
        .collect();
    if sides.len() < 2 || sides.iter().any(|(side, _)| side.is_empty()) { Vec::new() } else { sides }
}

/// Whether a constraint is written as a person's name: two or three
/// capitalised words of letters ("Liangming Pan", "Felix Leeb", "Eric D.
/// Sprunk"), an initial among them, no word in capitals only.
pub(crate) fn is_person_name(text: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().collect();
    let word = |w: &&str| {
        let mut chars = w.trim_end_matches('.').chars();
        chars.next().is_some_and(char::is_uppercase) && chars.all(char::is_lowercase)
    };
    let full = words.iter().filter(|w| w.trim_end_matches('.').chars().count() > 1).count();
    (2..=3).contains(&words.len()) && words.iter().all(word) && full >= 2
}

/// The constraints of a question, checked against the whole document.
pub(crate) fn constraints(texts: &[String], document: &ParsedDocument, stats: &DocStats) -> Vec<Constraint> {
    let title: String = document.lines.iter().take(TITLE_LINES).map(|l| folded(&l.text)).collect::<Vec<_>>().join(" ");
    let stem = std::path::Path::new(&document.source)
        .file_stem()
        .map(|s| split_camel(&s.to_string_lossy()))
        .unwrap_or_default();
    let title = format!(" {title} {} ", folded(&stem));
    texts
        .iter()
        .filter_map(|text| {
            let folded = folded(text);
            if folded.is_empty() {
                return None;
            }
            // The last word in the singular or the plural ("Recorded
            // Demonstration" for a section printed "Recorded Demonstrations").
            let mut pages = stats.pages_with(&folded);
            if pages.is_empty() && folded.contains(' ') {
                pages = number_forms(&folded).iter().flat_map(|f| stats.pages_with(f)).collect();
                pages.sort_unstable();
                pages.dedup();
            }
            // An acronym the document spells out ("NCD" for No Claim
            // Discount) is in it.
            if pages.is_empty() && is_acronym(text) {
                pages = stats.pages_spelling(&folded);
            }
            // A spelled-out name the document writes as its acronym
            // ("Annual General Meeting" for a report's "AGM").
            let mut acronym = None;
            if pages.is_empty()
                && let Some(initials) = initials(text).filter(|i| stats.written_in_capitals(i))
            {
                pages = stats.pages_with(&initials);
                acronym = Some(initials);
            }
            let conjuncts = conjuncts(text);
            // "President and CEO" where the document writes "President and
            // Chief Executive Officer": each side is in it.
            if pages.is_empty() && !conjuncts.is_empty() {
                let side_pages = |(side, acronym): &(String, bool)| {
                    let mut pages = stats.pages_with(side);
                    if *acronym {
                        pages.extend(stats.pages_spelling(side));
                    }
                    pages
                };
                let sides: Vec<Vec<u32>> = conjuncts.iter().map(side_pages).collect();
                if sides.iter().all(|p| !p.is_empty()) {
                    pages =
                        sides.into_iter().flatten().collect::<std::collections::BTreeSet<u32>>().into_iter().collect();
                }
            }
            // A person's name printed with a middle initial or name
            // ("Edward A. Schlesinger" for "Edward Schlesinger").
            let person = is_person_name(text).then(|| folded.split_whitespace().collect::<Vec<_>>());
            if pages.is_empty()
                && let Some([first, .., last]) = person.as_deref()
            {
                pages = stats.pages_with_name(first, last);
            }
            // The surname alone names the person where the document calls
            // someone by title and that surname ("Mr. Schlesinger"); a
            // two-word name of something else ("Hurricane Katrina",
            // "Imperial Plan") never is.
            let surname = person
                .as_deref()
                .and_then(|words| words.last())
                .filter(|last| !pages.is_empty() && stats.called_by_title(last))
                .map(|last| (*last).to_owned());
            // "EPS Code AR01" where the document prints "AR01" in a column
            // headed "EPS Code": a code ending the constraint stands for it
            // when the label words before it are each in the document.
            let (text, folded) = match labelled_code(text) {
                Some(code) if pages.is_empty() => {
                    let code_folded = super::evidence::folded(code);
                    let label_words = folded.split_whitespace().take_while(|w| *w != code_folded);
                    let labelled = label_words.into_iter().all(|w| !stats.pages_with(w).is_empty());
                    let code_pages = stats.pages_with(&code_folded);
                    if labelled && !code_pages.is_empty() {
                        pages = code_pages;
                        (code.to_owned(), code_folded)
                    } else {
                        (text.clone(), folded)
                    }
                }
                _ => (text.clone(), folded),
            };
            let caption_pages = if is_caption(&text) { pages.clone() } else { Vec::new() };
            let share = pages.len() as f64 / stats.n_pages.max(1) as f64;
            let first_page = pages.first().is_some_and(|p| *p == 1);
            let names_document = (stats.n_pages >= 3 && (share >= DOCUMENT_SHARE || first_page))
                || title.contains(&format!(" {folded} "));
            Some(Constraint {
                text,
                folded,
                in_document: !pages.is_empty(),
                names_document,
                local: false,
                conjuncts,
                caption_pages,
                surname,
                acronym,
            })
        })
        .collect()
}

/// Role nouns that head a title a question asks the holder of ("chief
/// technology OFFICER", "managing DIRECTOR", "grievance OFFICER").
const ROLE_HEADS: &[&str] = &[
    "officer",
    "director",
    "president",
    "chairman",
    "chairwoman",
    "chairperson",
    "chair",
    "secretary",
    "treasurer",
    "counsel",
    "controller",
    "manager",
    "head",
    "auditor",
    "ombudsman",
    "directeur",
    "directrice",
    "président",
    "présidente",
    "responsable",
    "geschäftsführer",
    "vorstand",
];

/// The title a question asks the holder of, as a constraint: a person
/// question whose asked phrase is two words or more headed by a role noun
/// ("Who is Adobe's chief technology officer?"). Its qualifying words are
/// what tells one officer from another, so a document that never prints the
/// title cannot answer, and a name whose evidence lacks it is not the
/// answer.
pub(crate) fn role(focus: &[String], person: bool) -> Option<String> {
    let last = focus.last()?;
    (person && focus.len() >= 2 && ROLE_HEADS.contains(&last.as_str())).then(|| focus.join(" "))
}

/// A file name's words: `FlipkartInvoice` → `Flipkart Invoice`,
/// `NIKE_2019_10K` → `NIKE 2019 10K`.
fn split_camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    let mut prev: Option<char> = None;
    for c in name.chars() {
        if let Some(p) = prev
            && p.is_lowercase()
            && c.is_uppercase()
        {
            out.push(' ');
        }
        out.push(if c.is_alphanumeric() { c } else { ' ' });
        prev = Some(c);
    }
    out
}

/// The code ending a constraint of two words or more, when it is one: letters
/// and digits mixed ("EPS Code AR01" → `AR01`, "Exhibit P-10" → `P-10`),
/// never a year or a plain number ("fiscal 2019", "Table 3").
fn labelled_code(text: &str) -> Option<&str> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let last = *words.last()?;
    let code = last.trim_end_matches(['.', ',', '?']);
    let is_code = code.chars().count() >= 2
        && code.chars().any(|c| c.is_ascii_digit())
        && code.chars().any(|c| c.is_alphabetic())
        && code.chars().all(|c| c.is_alphanumeric() || c == '-');
    (words.len() >= 2 && is_code).then_some(code)
}

/// Fewest words a spelled-out name needs before its initials are taken for
/// an acronym: two-letter initials ("Plan B" → `pb`) collide with too many
/// unrelated capitals.
const ACRONYM_WORDS: usize = 3;

/// The folded initials of a name of [`ACRONYM_WORDS`] capitalised words or
/// more, short joining words skipped ("Annual General Meeting" → `agm`,
/// "Department of Homeland Security" → `dhs`); `None` for anything else.
fn initials(text: &str) -> Option<String> {
    let words: Vec<&str> = text.split_whitespace().filter(|w| !is_acronym_joiner(&w.to_lowercase())).collect();
    let capitalised = |w: &&str| w.chars().next().is_some_and(char::is_uppercase) && w.chars().all(char::is_alphabetic);
    (words.len() >= ACRONYM_WORDS && words.iter().all(capitalised))
        .then(|| words.iter().filter_map(|w| w.chars().next()).flat_map(char::to_lowercase).collect())
}

/// Two to six capitals (`NCD`, `PED`, `CTO`).
fn is_acronym(text: &str) -> bool {
    let n = text.chars().count();
    (2..=6).contains(&n) && text.chars().all(|c| c.is_ascii_uppercase())
}

/// Whether `constraint` is in `evidence` (folded texts, each one line or
/// label).
///
/// A mention under a negating prefix is not the constraint: "non-U.S.
/// sales" are not U.S. sales, a "non-GAAP" figure is not the GAAP one.
pub(crate) fn found_in(constraint: &Constraint, evidence: &[String]) -> bool {
    let holds = |phrase: &str| evidence.iter().any(|e| affirms(e, phrase) || plural_match(e, phrase));
    holds(&constraint.folded)
        // "CEO" where the evidence writes "Chief Executive Officer".
        || (is_acronym(&constraint.text) && evidence.iter().any(|e| spells(e, &constraint.folded)))
        || constraint.surname.as_deref().is_some_and(holds)
        || constraint.acronym.as_deref().is_some_and(holds)
        || (!constraint.conjuncts.is_empty()
            && constraint
                .conjuncts
                .iter()
                .all(|(side, acronym)| holds(side) || (*acronym && evidence.iter().any(|e| spells(e, side)))))
}

/// Words that negate the term they prefix ("non-U.S.", "non GAAP").
const NEGATING: &[&str] = &["non"];

/// Whether folded `evidence` holds the folded `phrase` at least once other
/// than under a negating prefix.
fn affirms(evidence: &str, phrase: &str) -> bool {
    let text = format!(" {evidence} ");
    let needle = format!(" {phrase} ");
    text.match_indices(&needle).any(|(at, _)| !NEGATING.iter().any(|n| text[..=at].ends_with(&format!(" {n} "))))
}

/// A phrase with its last word in the other number: "recorded
/// demonstration" → "recorded demonstrations" (and back).
fn number_forms(folded: &str) -> Vec<String> {
    match folded.strip_suffix('s') {
        Some(singular) if !singular.ends_with('s') => vec![format!("{folded}s"), singular.to_owned()],
        _ => vec![format!("{folded}s")],
    }
}

/// `Japanese` in `... japanese ...`, allowing a final `s` on either side,
/// not under a negating prefix; a phrase with its last word so.
fn plural_match(evidence: &str, folded: &str) -> bool {
    if folded.contains(' ') {
        return number_forms(folded).iter().any(|form| affirms(evidence, form));
    }
    let words = words_of(evidence);
    words.iter().enumerate().any(|(i, w)| {
        (w.norm == folded
            || w.norm.strip_suffix('s').is_some_and(|s| s == folded)
            || folded.strip_suffix('s').is_some_and(|s| s == w.norm))
            && !(i > 0 && NEGATING.contains(&words[i - 1].norm.as_str()))
    })
}

#[cfg(test)]
mod tests {
    use super::super::evidence::folded;
    use super::{Constraint, conjuncts, found_in, is_caption, is_person_name, labelled_code};

    #[test]
    fn a_code_ends_a_labelled_constraint_never_a_year_or_a_number() {
        assert_eq!(labelled_code("EPS Code AR01"), Some("AR01"));
        assert_eq!(labelled_code("Exhibit P-10"), Some("P-10"));
        for other in ["AR01", "fiscal 2019", "Table 3", "Plan B", "Q3 2019"] {
            assert_eq!(labelled_code(other), None, "{other}");
        }
    }

    #[test]
    fn captions_are_told_from_other_constraints() {
        for caption in ["Table 3", "Figure 1", "Fig. 2", "Table1", "Tableau 4", "Table 1-1"] {
            assert!(is_caption(caption), "{caption}");
        }
        for other in ["Table", "Plan B", "Tables of Contents", "Figure A", "2019"] {
            assert!(!is_caption(other), "{other}");
        }
    }

    #[test]
    fn a_coordination_holds_where_each_side_does() {
        assert_eq!(conjuncts("President and CEO"), [("president".to_owned(), false), ("ceo".to_owned(), true)]);
        assert_eq!(conjuncts("Python and PyTorch"), [("python".to_owned(), false), ("pytorch".to_owned(), false)]);
        assert!(conjuncts("Plan B").is_empty());
        assert!(conjuncts("Bath and").is_empty());
    }

    #[test]
    fn a_negated_mention_is_not_the_constraint() {
        let us = Constraint {
            text: "U.S".to_owned(),
            folded: folded("U.S"),
            in_document: true,
            names_document: false,
            local: false,
            conjuncts: Vec::new(),
            caption_pages: Vec::new(),
            surname: None,
            acronym: None,
        };
        let line = |t: &str| vec![folded(t)];
        assert!(!found_in(&us, &line("non-U.S. NIKE Brand and Converse sales accounted for 58%")));
        assert!(found_in(&us, &line("U.S. and non-U.S. sales")));
        assert!(found_in(&us, &line("sales in the U.S. accounted for 42%")));
        let gaap = Constraint { text: "GAAP".to_owned(), folded: folded("GAAP"), ..us.clone() };
        assert!(!found_in(&gaap, &line("Non-GAAP earnings per share")));
        assert!(found_in(&gaap, &line("GAAP earnings per share")));
    }

    #[test]
    fn an_acronym_holds_where_its_words_are_spelled_out() {
        let document = docintel_test_support::pages(&[
            &["Verizon annual report", "Employees"],
            &[
                "We work with the Communications Workers of America and the International",
                "Brotherhood of Electrical Workers.",
            ],
            &["Kathryn McLay, President and Chief Executive Officer, Sam's Club"],
        ])
        .build();
        let stats = super::DocStats::of(&document);
        let found = super::constraints(&["CWA and IBEW".to_owned(), "CEO".to_owned()], &document, &stats);
        // Each side spelled out, IBEW across a line break: in the document.
        assert!(found[0].in_document, "{:?}", found[0]);
        assert!(found[1].in_document, "{:?}", found[1]);
        let line = |t: &str| vec![folded(t)];
        assert!(found_in(&found[1], &line("Kathryn McLay, President and Chief Executive Officer, Sam's Club")));
        assert!(!found_in(&found[1], &line("Kathryn McLay, Chief Financial Officer, Sam's Club")));
    }

    #[test]
    fn a_name_spelled_out_holds_where_the_document_writes_its_acronym() {
        let document = docintel_test_support::pages(&[
            &["Report and Accounts 2007", "Contents"],
            &["AGM Details", "Date Friday, 27th July, 2007", "Venue Science City, Kolkata"],
            &["The agm of the club is informal.", "The GM plant reopened."],
        ])
        .build();
        let stats = super::DocStats::of(&document);
        let texts = ["Annual General Meeting", "Extraordinary General Meeting", "General Meeting"].map(str::to_owned);
        let found = super::constraints(&texts, &document, &stats);
        assert!(found[0].in_document, "{:?}", found[0]);
        let line = |t: &str| vec![folded(t)];
        assert!(found_in(&found[0], &line("AGM Details Date Friday, 27th July, 2007")));
        assert!(!found_in(&found[0], &line("Venue Science City, Kolkata")));
        // Other initials, or too few words to take initials from: absent.
        assert!(!found[1].in_document, "{:?}", found[1]);
        assert!(!found[2].in_document, "{:?}", found[2]);
    }

    #[test]
    fn a_phrase_holds_with_its_last_word_in_either_number() {
        let document =
            docintel_test_support::pages(&[&["Contents"], &["Recorded Demonstrations", "Five videos"]]).build();
        let stats = super::DocStats::of(&document);
        let found = super::constraints(&["Recorded Demonstration".to_owned()], &document, &stats);
        assert!(found[0].in_document, "{:?}", found[0]);
        assert!(found_in(&found[0], &[folded("Recorded Demonstrations")]));
        assert!(!found_in(&found[0], &[folded("Recorded videos")]));
    }

    #[test]
    fn a_person_is_named_with_a_middle_initial_or_by_surname() {
        let document = docintel_test_support::pages(&[
            &["Corning annual report", "Executive officers"],
            &["Edward A. Schlesinger  Senior Vice President and Corporate Controller"],
            &["On December 7, 2021, the Board appointed Mr. Schlesinger as chief financial officer."],
        ])
        .build();
        let stats = super::DocStats::of(&document);
        let found =
            super::constraints(&["Edward Schlesinger".to_owned(), "Anna Schlesinger".to_owned()], &document, &stats);
        assert!(found[0].in_document, "{:?}", found[0]);
        let line = |t: &str| vec![folded(t)];
        assert!(found_in(&found[0], &line("the Board appointed Mr. Schlesinger as chief financial officer")));
        // Another first name is another person: not in the document.
        assert!(!found[1].in_document, "{:?}", found[1]);
        assert!(!found_in(&found[1], &line("the Board appointed Mr. Schlesinger as chief financial officer")));
        // Two capitalised words that nobody is called by as a surname.
        let storm =
            docintel_test_support::pages(&[&["Hurricane Katrina hit the coast"], &["Katrina made landfall"]]).build();
        let stats = super::DocStats::of(&storm);
        let found = super::constraints(&["Hurricane Katrina".to_owned()], &storm, &stats);
        assert!(found[0].in_document && found[0].surname.is_none(), "{:?}", found[0]);
        assert!(!found_in(&found[0], &line("Katrina made landfall")));
    }

    #[test]
    fn person_names_are_told_from_other_constraints() {
        for name in ["Liangming Pan", "Felix Leeb", "Eric D. Sprunk"] {
            assert!(is_person_name(name), "{name}");
        }
        for other in ["Plan A", "NIKE", "QualityHosting AG", "Table 2", "Medical Emergency Reunion Benefit", "2019"] {
            assert!(!is_person_name(other), "{other}");
        }
    }
}
