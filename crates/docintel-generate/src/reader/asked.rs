//! The question as the reader reads it: [`Asked`], one asked question (or
//! one part of a compound one) with its kind, terms, focus, constraints and
//! the intents and year it carries; a part that refers back by a pronoun
//! ("and how old is HE?") is read near what an earlier part answered.

use docintel_schema::{AnswerShape, KeywordSource, ParsedDocument, ParsedQuestion};

use super::answerable::{self, Constraint};
use super::evidence::{self, Terms, focus_words, word_matches, words_of};
use super::kinds::{AmountIntent, DateIntent, Group, Kind};
use super::stats::DocStats;
use crate::keywords::{KeywordSet, is_generic, label_form};

/// Words by which a part of a compound question refers to what another
/// part names.
const ANAPHORS: &[&str] = &[
    "he", "she", "it", "its", "they", "them", "their", "his", "her", "him", "that", "this", "these", "those", "there",
    "il", "elle", "ils", "elles", "son", "sa", "ses", "leur", "leurs", "er", "sie", "es", "sein", "seine", "ihr",
    "ihre",
];
/// Pronouns by which a part refers to the person or the organisation an
/// earlier part answered ("and how old is HE?", "in which city did IT
/// sign ITS report?"), with the kinds they can stand for.
const REFERRING: &[(&str, &[Kind])] = &[
    ("he", &[Kind::Person]),
    ("she", &[Kind::Person]),
    ("his", &[Kind::Person]),
    ("him", &[Kind::Person]),
    ("her", &[Kind::Person]),
    ("it", &[Kind::Organisation]),
    ("its", &[Kind::Organisation]),
    ("il", &[Kind::Person, Kind::Organisation]),
    ("elle", &[Kind::Person, Kind::Organisation]),
    ("er", &[Kind::Person]),
];

/// `text` read as a calendar year ("2019").
pub(crate) fn calendar_year(text: &str) -> Option<u32> {
    text.parse::<u32>().ok().filter(|y| (1950..2100).contains(y))
}

/// The year a constraint names, when it names nothing else ("2019",
/// "fiscal 2019", "FY2019").
fn restrict_year(folded: &str) -> Option<u32> {
    let mut year = None;
    for word in folded.split_whitespace() {
        match calendar_year(word) {
            Some(y) if year.is_none() => year = Some(y),
            _ if matches!(word, "fiscal" | "fy" | "year" | "calendar") => {}
            _ => return None,
        }
    }
    year
}

/// One asked question (or part of a compound one), ready to read.
#[derive(Debug, Clone)]
pub(crate) struct Asked {
    pub(crate) text: String,
    pub(crate) kind: Kind,
    pub(crate) shape: AnswerShape,
    pub(crate) terms: Terms,
    pub(crate) focus: Vec<String>,
    pub(crate) constraints: Vec<Constraint>,
    pub(super) amount: AmountIntent,
    pub(super) date: DateIntent,
    /// The first year the question names: the statement column it reads.
    pub(super) year: Option<u32>,
    /// The question's one year constraint, with its text, when it has
    /// exactly one ("in fiscal 2019"): a figure given for another year
    /// lacks it.
    pub(super) sole_year: Option<(u32, String)>,
    /// Identifiers whose heading the question asks for ("the title of AC-2").
    pub(super) heading_of: Vec<String>,
    /// Whether the question asks a figure of a named document part.
    pub(super) names_part: bool,
    /// The currency the question asks for (`EUR`).
    pub(super) currency: Option<String>,
    /// The pairs of terms the question writes side by side, in order
    /// ([`evidence::term_pairs`]).
    pub(crate) pairs: Vec<(usize, usize)>,
    /// The numbers the question writes.
    pub(super) numbers: Vec<f64>,
}

impl Asked {
    /// The model group that scores this question's candidates: the kind's,
    /// with the amount due apart from other amounts.
    pub(crate) fn group(&self) -> Group {
        if self.kind == Kind::Amount && self.amount.total && !self.amount.sub && !self.amount.tax {
            Group::AmountDue
        } else {
            self.kind.group()
        }
    }

    /// The whole question, or one part of it (`part`: its text, answer
    /// type, focus and constraints; the question's keywords found in the
    /// part's text are its terms). `earlier`: the values earlier parts
    /// answered, as written.
    pub(crate) fn new(
        question: &ParsedQuestion,
        part: Option<&docintel_schema::AskedPart>,
        earlier: &[(String, Kind)],
        document: &ParsedDocument,
        stats: &DocStats,
    ) -> Asked {
        let mut q = question.clone();
        // The person or organisation an earlier part answered that this
        // part refers to by a pronoun: its value is read where they are named.
        let mut referred: Vec<String> = Vec::new();
        if let Some(part) = part {
            q.corrected_question = part.question.clone();
            q.answer_type = part.answer_type.clone();
            q.answer_shape = AnswerShape::Single;
            q.generation.answer_focus = part.answer_focus.clone();
            q.generation.constraints = part.constraints.clone();
            let words: Vec<String> = words_of(&part.question).into_iter().map(|w| w.norm).collect();
            let own = |k: &docintel_schema::Keyword| {
                k.semantic_group.is_some()
                    || k.is_regex
                    || words_of(&k.text).iter().all(|w| words.iter().any(|p| word_matches(p, &w.norm)))
            };
            // A part that leans on the rest of the question ("and how old
            // is HE?", "and since what year?") keeps its keywords: they say
            // where its answer is.
            // A role is always someone's: "who signed, and in what
            // capacity?" asks the signer's.
            let role = Kind::of(&part.answer_type) == Kind::Role;
            let refers_back = role || words.iter().any(|w| ANAPHORS.contains(&w.as_str()));
            let own_content = q.keywords.iter().filter(|k| own(k) && !k.is_regex).count();
            if !refers_back && own_content >= 2 {
                q.keywords.retain(own);
            }
            // What it leans on is the value an earlier part answered: "how
            // old was HE" is read near the officer's name, "his title
            // THERE" near the employer.
            if refers_back {
                q.keywords.extend(
                    earlier
                        .iter()
                        .filter(|(e, _)| !words_of(e).is_empty())
                        .map(|(e, _)| docintel_schema::Keyword::direct(e)),
                );
                let mut kinds: Vec<Kind> = REFERRING
                    .iter()
                    .filter(|(pronoun, _)| words.iter().any(|w| w == pronoun))
                    .flat_map(|(_, kinds)| kinds.iter().copied())
                    .collect();
                if role {
                    kinds.push(Kind::Person);
                }
                referred.extend(earlier.iter().filter(|(_, kind)| kinds.contains(kind)).map(|(e, _)| e.clone()));
            }
        }
        let keywords = KeywordSet::from_question(&q);
        let terms = Terms::new(&q, &keywords, stats);
        let kind = Kind::of(&q.answer_type);
        let qtext = label_form(&q.corrected_question);
        let ungrouped: Vec<&str> = keywords.ungrouped_salient_norms().collect();
        let groups: Vec<&str> = keywords.groups().collect();
        let salient: Vec<&str> = keywords.salient_norms().collect();
        let constraints = {
            let mut constraints = answerable::constraints(&q.generation.constraints, document, stats);
            // The title a person question asks for is on the holder's
            // own row or beside it, and never names the document.
            // "President and Chief Operating Officer" keeps its "and": each
            // title must hold ([`answerable::Constraint::conjuncts`]).
            let role_words: Vec<String> = q
                .generation
                .answer_focus
                .as_deref()
                .map(|f| words_of(f).into_iter().map(|w| w.norm).filter(|w| w == "and" || !is_generic(w)).collect())
                .unwrap_or_default();
            let role = answerable::role(&role_words, kind == Kind::Person);
            constraints.extend(answerable::constraints(role.as_slice(), document, stats).into_iter().map(|mut c| {
                c.local = true;
                c.names_document = false;
                c
            }));
            // "How old is HE?": on the row that names him, or beside it.
            constraints.extend(answerable::constraints(&referred, document, stats).into_iter().map(|mut c| {
                c.local = true;
                c.names_document = false;
                c
            }));
            constraints
        };
        let mut years = constraints.iter().filter_map(|c| restrict_year(&c.folded).map(|y| (y, c.text.clone())));
        let sole_year = match (years.next(), years.next()) {
            (Some(one), None) => Some(one),
            _ => None,
        };
        Asked {
            text: q.corrected_question.clone(),
            kind,
            shape: q.answer_shape,
            focus: focus_words(&q),
            constraints,
            sole_year,
            amount: AmountIntent::of(&qtext, &ungrouped, &groups),
            date: DateIntent::of(&qtext, &salient),
            year: q
                .keywords
                .iter()
                .filter(|k| k.source == KeywordSource::Direct && k.text.len() == 4)
                .map(|k| k.text.as_str())
                .chain(q.generation.constraints.iter().map(String::as_str))
                .find_map(calendar_year),
            heading_of: if q.structural_hints.layout_hint.as_deref() == Some("heading") {
                q.keywords
                    .iter()
                    .filter(|k| k.source == KeywordSource::Anchor && !k.is_regex)
                    .map(|k| k.text.to_lowercase())
                    .collect()
            } else {
                Vec::new()
            },
            names_part: !q.retrieval.scope.sections.is_empty(),
            currency: q.generation.format_constraints.get("currency").map(|c| c.to_uppercase()),
            pairs: evidence::term_pairs(&terms.hits(&q.corrected_question, &words_of(&q.corrected_question))),
            numbers: crate::extract::number::find_numbers(&q.corrected_question).iter().map(|t| t.value).collect(),
            terms,
        }
    }
}
