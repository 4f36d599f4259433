//! Named document parts: a question that points to a part of the document by
//! what it is ("using the balance sheet", "from the statement of cash
//! flows") or asks for a figure read off one ("capex", "quick ratio").
//!
//! The table (`data/document_parts.csv`) lists, per part, the titles a
//! document prints over it, the other ways a question names it, and the
//! figures it carries. The parser reports the parts in
//! `ScopeFilters::sections` as their titles joined by ` | `; the retriever
//! looks for a page headed by one of them.

use std::ops::Range;

use regex::Regex;

use crate::table::Table;

const BUILTIN: &str = include_str!("../data/document_parts.csv");

/// How a phrase relates to its part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum PartKind {
    /// Printed as the part's heading.
    Title,
    /// Names the part in a question; not a heading.
    Mention,
    /// A figure read off the part.
    Implied,
}

#[derive(Clone)]
struct Phrase {
    part: String,
    kind: PartKind,
    text: String,
    pattern: Regex,
}

/// One part a question points to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PartHit {
    /// The part (a concept name: `balance_sheet`).
    pub(crate) part: String,
    /// Whether the question names the part (title or mention) rather than a
    /// figure it carries.
    pub(crate) named: bool,
    /// The phrase as written in the question.
    pub(crate) phrase: String,
    /// Byte span of the phrase in the question.
    pub(crate) span: Range<usize>,
}

/// What [`DocumentParts::find`] read in a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PartScan {
    /// The parts pointed to, named ones first.
    pub(crate) parts: Vec<PartHit>,
    /// Every span naming a part.
    pub(crate) named_spans: Vec<Range<usize>>,
}

/// The compiled parts table.
#[derive(Clone)]
pub(crate) struct DocumentParts {
    phrases: Vec<Phrase>,
}

impl std::fmt::Debug for DocumentParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DocumentParts").field("phrases", &self.phrases.len()).finish()
    }
}

impl DocumentParts {
    /// The table shipped with docintel (validated by a test).
    pub(crate) fn builtin() -> DocumentParts {
        DocumentParts::from_csv(BUILTIN).expect("the built-in parts table is validated by a test")
    }

    fn from_csv(text: &str) -> Result<DocumentParts, String> {
        let table = Table::parse("document_parts.csv", text, &["part", "language", "kind", "phrase"])
            .map_err(|e| e.to_string())?;
        let mut phrases = Vec::new();
        for row in &table.rows {
            let (part, kind, phrase) = (table.cell(row, "part"), table.cell(row, "kind"), table.cell(row, "phrase"));
            let kind = match kind {
                "title" => PartKind::Title,
                "mention" => PartKind::Mention,
                "implied" => PartKind::Implied,
                other => return Err(table.error(row, "kind", format!("unknown kind {other:?}")).to_string()),
            };
            if phrase.is_empty() || part.is_empty() {
                return Err(table.error(row, "phrase", "empty part or phrase").to_string());
            }
            phrases.push(Phrase {
                part: part.to_owned(),
                kind,
                text: phrase.to_owned(),
                pattern: phrase_regex(phrase),
            });
        }
        Ok(DocumentParts { phrases })
    }

    /// The parts `text` points to: named parts first (in question order),
    /// then parts implied by a figure; one hit per part, at most `max`. With
    /// them, every span naming a part (titles and mentions, not implied
    /// figures), for the framing check.
    pub(crate) fn find(&self, text: &str, max: usize) -> PartScan {
        let mut hits: Vec<(bool, usize, PartHit)> = Vec::new();
        let mut named_spans: Vec<Range<usize>> = Vec::new();
        for phrase in &self.phrases {
            for c in phrase.pattern.captures_iter(text) {
                let m = c.get(1).expect("phrase group");
                let named = phrase.kind != PartKind::Implied;
                if named {
                    named_spans.push(m.range());
                }
                let hit = PartHit { part: phrase.part.clone(), named, phrase: m.as_str().to_owned(), span: m.range() };
                hits.push((!named, m.start(), hit));
            }
        }
        hits.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(b.2.span.len().cmp(&a.2.span.len())));
        let mut parts: Vec<PartHit> = Vec::new();
        for (_, _, hit) in hits {
            if !parts.iter().any(|p| p.part == hit.part) {
                parts.push(hit);
            }
        }
        parts.truncate(max);
        PartScan { parts, named_spans }
    }

    /// The titles of `part`, joined by ` | ` (the form the retriever reads).
    pub(crate) fn titles(&self, part: &str) -> String {
        self.phrases
            .iter()
            .filter(|p| p.part == part && p.kind == PartKind::Title)
            .map(|p| p.text.as_str())
            .collect::<Vec<_>>()
            .join(" | ")
    }

    #[cfg(test)]
    fn parts(&self) -> Vec<&str> {
        let mut parts: Vec<&str> = self.phrases.iter().map(|p| p.part.as_str()).collect();
        parts.sort_unstable();
        parts.dedup();
        parts
    }
}

/// A case-insensitive, word-bounded pattern for `phrase`, flexible on
/// spaces and apostrophes; group 1 is the phrase.
fn phrase_regex(phrase: &str) -> Regex {
    let words: Vec<String> = phrase
        .split_whitespace()
        .map(|w| regex::escape(w).replace('\'', "['\u{2019}]").replace("\\-", "[-\u{2010}\u{2011} ]?"))
        .collect();
    Regex::new(&format!(r"(?i)(?:^|[^\p{{L}}\p{{N}}])({})(?:$|[^\p{{L}}\p{{N}}])", words.join(r"\s+")))
        .expect("escaped phrase compiles")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(question: &str) -> Vec<(String, bool)> {
        DocumentParts::builtin().find(question, 3).parts.into_iter().map(|h| (h.part, h.named)).collect()
    }

    #[test]
    fn the_builtin_table_loads_and_names_concepts() {
        let table = DocumentParts::builtin();
        assert_eq!(table.parts(), ["balance_sheet", "cash_flow_statement", "income_statement"]);
        let concepts = include_str!("../data/concepts.csv");
        for part in table.parts() {
            assert!(concepts.lines().any(|l| l.starts_with(&format!("{part},"))), "{part} is not in concepts.csv");
            assert!(!table.titles(part).is_empty(), "{part} has no title");
        }
    }

    #[test]
    fn named_parts_come_first_then_implied_ones() {
        assert_eq!(
            parts("What is the FY2018 capex for 3M? Use the details shown in the cash flow statement."),
            [("cash_flow_statement".to_owned(), true)]
        );
        assert_eq!(
            parts("Based on the balance sheet and the statement of income, what is the ROA?"),
            [("balance_sheet".to_owned(), true), ("income_statement".to_owned(), true)]
        );
        assert_eq!(
            parts("Does Corning have positive working capital based on FY2022 data?"),
            [("balance_sheet".to_owned(), false)]
        );
        assert_eq!(parts("According to the P&L statement, what is the COGS?"), [("income_statement".to_owned(), true)]);
        assert!(parts("What is the deductible for flood damage?").is_empty());
    }

    #[test]
    fn phrases_match_whole_words_only() {
        // "revenues" must not match inside "prerevenues"; "p&l" must not
        // match inside "pp&l".
        assert!(parts("What is the prerevenues figure in pp&l?").is_empty());
        assert_eq!(
            parts("Is this company capital intensive?"),
            [("cash_flow_statement".to_owned(), false), ("balance_sheet".to_owned(), false)]
        );
        assert_eq!(parts("What is the company’s shareholders’ equity?"), [("balance_sheet".to_owned(), false)]);
    }

    #[test]
    fn a_quoted_phrase_may_hold_a_comma() {
        let text = "# c\npart,language,kind,phrase\nequity,en,implied,\"liabilities, and equity\"\n";
        let table = DocumentParts::from_csv(text).unwrap();
        let scan = table.find("What are the liabilities, and equity?", 3);
        assert_eq!(scan.parts.iter().map(|h| h.phrase.as_str()).collect::<Vec<_>>(), ["liabilities, and equity"]);
        let error = DocumentParts::from_csv("part,language,kind,phrase\nequity,en,heading,equity\n").unwrap_err();
        assert!(error.starts_with("document_parts.csv: row 2, column kind"), "{error}");
    }
}
