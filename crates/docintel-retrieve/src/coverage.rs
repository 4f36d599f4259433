//! Coverage second pass, decided in code.
//!
//! After the first search two string checks run on the passages shown:
//! (a) every salient question keyword (direct or anchor; a dictionary synonym
//! counts for its concept) appears in some passage; (b) the kind of thing
//! asked for appears (a currency-looking token for amounts, a date for dates,
//! an email or URL for contacts). Either failing triggers ONE more search with
//! the missing terms (or for lines carrying the missing kind), merged into the
//! passages. Once, never a loop: nothing here calls itself.

use std::collections::BTreeSet;

use docintel_schema::ParsedDocument;
use docintel_schema::text::normalize;
use regex::Regex;

use crate::keyword::{Candidate, KeywordRetriever, PreparedKeyword};

/// What the first search missed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CoverageCheck {
    /// Concept groups of salient keywords found in no passage shown.
    pub(crate) missing_terms: Vec<String>,
    /// The kind of value asked for, when no passage shown carries one.
    pub(crate) missing_kind: Option<&'static str>,
}

impl CoverageCheck {
    /// Runs both checks on the passages shown.
    pub(crate) fn run(
        keywords: &[PreparedKeyword],
        kind: Option<&(&'static str, Regex)>,
        document: &ParsedDocument,
        shown: &[Candidate],
    ) -> CoverageCheck {
        let lines: Vec<(&str, String)> = shown
            .iter()
            .flat_map(|c| document.line_range(c.passage.line_start, c.passage.line_end))
            .map(|l| (l.text.as_str(), normalize(&l.text)))
            .collect();
        let salient_groups: BTreeSet<&str> =
            keywords.iter().filter(|k| k.salient && !k.is_regex()).map(|k| k.group.as_str()).collect();
        let missing_terms = salient_groups
            .into_iter()
            .filter(|group| {
                !keywords.iter().filter(|k| k.group == *group).any(|k| lines.iter().any(|(_, n)| k.matches(n)))
            })
            .map(str::to_owned)
            .collect();
        let missing_kind = kind.filter(|(_, re)| !lines.iter().any(|(raw, _)| re.is_match(raw))).map(|(name, _)| *name);
        CoverageCheck { missing_terms, missing_kind }
    }

    /// Whether either check failed.
    pub(crate) fn failed(&self) -> bool {
        !self.missing_terms.is_empty() || self.missing_kind.is_some()
    }
}

fn overlaps(a: &Candidate, b: &Candidate) -> bool {
    a.passage.page == b.passage.page
        && a.passage.line_start <= b.passage.line_end
        && b.passage.line_start <= a.passage.line_end
}

/// The one extra search: the best passage for each missing term, and the best
/// passage carrying the missing kind of value, not already shown. `text` is
/// the document with its normalised lines.
pub(crate) fn second_pass(
    retriever: &KeywordRetriever,
    check: &CoverageCheck,
    keywords: &[PreparedKeyword],
    text: (&ParsedDocument, &[String]),
    scope: Option<&BTreeSet<u32>>,
    kind: Option<&(&'static str, Regex)>,
    shown: &[Candidate],
) -> Vec<Candidate> {
    let (document, normalized) = text;
    let mut added: Vec<Candidate> = Vec::new();
    let is_new = |c: &Candidate, added: &[Candidate]| !shown.iter().chain(added).any(|s| overlaps(s, c));
    let kind_re = kind.map(|(_, re)| re);
    if !check.missing_terms.is_empty() {
        let missing: Vec<PreparedKeyword> =
            keywords.iter().filter(|k| check.missing_terms.contains(&k.group)).cloned().collect();
        let search = retriever.search(&missing, document, normalized, scope, kind_re, None);
        for group in &check.missing_terms {
            let labels: Vec<&str> = missing.iter().filter(|k| &k.group == group).map(|k| k.label.as_str()).collect();
            let best = search
                .candidates
                .iter()
                .find(|c| c.passage.matched_keywords.iter().any(|m| labels.contains(&m.as_str())) && is_new(c, &added));
            if let Some(best) = best {
                added.push(Candidate { coverage: true, ..best.clone() });
            }
        }
    }
    if let Some(re) = kind_re.filter(|_| check.missing_kind.is_some()) {
        let search = retriever.search(keywords, document, normalized, scope, None, Some(re));
        if let Some(best) = search.candidates.iter().find(|c| is_new(c, &added)) {
            added.push(Candidate { coverage: true, ..best.clone() });
        }
    }
    added
}
