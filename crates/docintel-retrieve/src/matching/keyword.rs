//! Question keywords prepared for matching: each keyword once, normalised,
//! with its English inflections and other spelling ([`super::inflect`]), or
//! its regex compiled, and what the stages need to know about it (weight,
//! identifier, concept group, salience, whether it names the document).

use std::collections::BTreeSet;

use docintel_schema::text::normalize;
use docintel_schema::{KeywordSource, ParsedQuestion};
use regex::Regex;

use super::inflect;
use super::words::{Form, contains_word_with, form};
use crate::error::RetrieveError;

/// A keyword prepared for matching.
#[derive(Clone)]
enum Matcher {
    /// The keyword as written first, then its other English inflections
    /// ([`super::inflect`]); a line matches when it has any of them.
    Text(Vec<Form>),
    Regex(Regex),
}

/// A question keyword ready to match normalized lines.
#[derive(Clone)]
pub(crate) struct PreparedKeyword {
    /// The keyword as the question carries it.
    pub(crate) label: String,
    /// Its weight.
    pub(crate) weight: f64,
    /// Whether it is an exact identifier (pins its passage).
    pub(crate) pinning: bool,
    /// The concept group it counts for (dictionary synonyms share one).
    pub(crate) group: String,
    /// Whether it is salient for the coverage check (direct or anchor).
    pub(crate) salient: bool,
    /// Whether it names the document rather than a part of it (see
    /// `stages::document_words`).
    pub(crate) names_document: bool,
    matcher: Matcher,
}

impl PreparedKeyword {
    /// Whether the keyword occurs in a normalized text.
    pub(crate) fn matches(&self, normalized_line: &str) -> bool {
        match &self.matcher {
            Matcher::Text(forms) => {
                forms.iter().any(|(needle, finder)| contains_word_with(normalized_line, needle, finder))
            }
            Matcher::Regex(re) => re.is_match(normalized_line),
        }
    }

    /// Whether the (plain-text) keyword opens the line, on a word boundary.
    pub(crate) fn opens(&self, normalized_line: &str) -> bool {
        match &self.matcher {
            Matcher::Text(forms) => {
                let line = normalized_line.trim_start();
                forms.iter().any(|(needle, _)| {
                    line.starts_with(needle.as_str())
                        && !line[needle.len()..].chars().next().is_some_and(|c| c.is_alphanumeric() || c == '-')
                })
            }
            Matcher::Regex(_) => false,
        }
    }

    /// Its forms, when every one is a single word of letters and digits
    /// (what the page index holds), else `None`.
    pub(crate) fn single_words(&self) -> Option<Vec<&str>> {
        match &self.matcher {
            Matcher::Text(forms)
                if forms.iter().all(|(f, _)| !f.is_empty() && f.chars().all(char::is_alphanumeric)) =>
            {
                Some(forms.iter().map(|(f, _)| f.as_str()).collect())
            }
            _ => None,
        }
    }

    /// Its forms (as written first, then its inflections), `None` for a
    /// regular expression.
    pub(crate) fn forms(&self) -> Option<&[Form]> {
        match &self.matcher {
            Matcher::Text(forms) => Some(forms),
            Matcher::Regex(_) => None,
        }
    }

    /// The same keyword with another weight.
    pub(crate) fn with_weight(&self, weight: f64) -> PreparedKeyword {
        PreparedKeyword { weight, ..self.clone() }
    }

    /// Whether the keyword is a regular expression.
    pub(crate) fn is_regex(&self) -> bool {
        matches!(self.matcher, Matcher::Regex(_))
    }
}

/// The question's keywords prepared for matching, in question order; a
/// plain keyword the question repeats counts once.
pub(crate) fn prepare(question: &ParsedQuestion) -> Result<Vec<PreparedKeyword>, RetrieveError> {
    let mut seen = BTreeSet::new();
    let mut prepared = Vec::new();
    // Inflections are English rules: other languages match as written.
    let english = question.language.as_deref().is_none_or(|l| l == "en");
    // A form the question carries as a keyword of its own
    // ("acquisitions" and "acquisition") counts once, there.
    let own: BTreeSet<String> = question.keywords.iter().filter(|k| !k.is_regex).map(|k| normalize(&k.text)).collect();
    for keyword in &question.keywords {
        let matcher = if keyword.is_regex {
            let re = Regex::new(&format!("(?i){}", keyword.text))
                .map_err(|source| RetrieveError::BadRegex { pattern: keyword.text.clone(), source })?;
            Matcher::Regex(re)
        } else {
            let text = normalize(&keyword.text);
            if text.is_empty() || !seen.insert(text.clone()) {
                continue;
            }
            let mut forms = vec![form(text.clone())];
            if keyword.source == KeywordSource::Direct && english {
                forms.extend(inflect::english_forms(&text).into_iter().filter(|f| !own.contains(f)).map(form));
                // The other side of the Atlantic: "pre-hospitalisation"
                // finds "Pre-Hospitalization".
                if let Some(other) = inflect::other_spelling(&text) {
                    forms.extend(inflect::english_forms(&other).into_iter().map(form));
                    forms.push(form(other));
                }
            }
            Matcher::Text(forms)
        };
        prepared.push(PreparedKeyword {
            label: keyword.text.clone(),
            weight: f64::from(keyword.weight.max(0.0)),
            pinning: keyword.source == KeywordSource::Anchor && !keyword.is_regex,
            group: keyword.semantic_group.clone().unwrap_or_else(|| normalize(&keyword.text)),
            salient: matches!(keyword.source, KeywordSource::Direct | KeywordSource::Anchor),
            names_document: false,
            matcher,
        });
    }
    Ok(prepared)
}

#[cfg(test)]
mod tests {
    use crate::test_support::{check, document, question};

    #[test]
    fn a_plural_in_the_question_finds_the_singular_in_the_document() {
        // Without number forms, page 1 ("members") and page 2 ("card") tie
        // and document order puts page 1 first.
        let doc = document(&[
            &["The members of the board met twice.", "filler"],
            &["Card Member retention remained high.", "filler"],
        ]);
        let r = check(&doc, &question(&["card", "members"], "text", &[]), 2);
        assert_eq!(r.passages[0].page, 2, "{r:?}");
        assert_eq!(r.passages[0].matched_keywords, ["card", "members"], "{r:?}");
        // Other languages match as written.
        let mut q = question(&["card", "members"], "text", &[]);
        q.language = Some("fr".to_owned());
        assert_eq!(check(&doc, &q, 2).passages[0].page, 1);
    }
}
