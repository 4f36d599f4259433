//! The expert dictionary: concept → the words it goes by in each language,
//! kept as data (`data/concept_keywords.csv`) so a domain expert adds a
//! synonym with one row. A project can load its own file instead.

use std::fmt;

use docintel_schema::text::normalize;
use docintel_schema::{Keyword, KeywordSource};

use crate::table::Table;

/// The dictionary shipped with docintel.
const BUILTIN: &str = include_str!("../data/concept_keywords.csv");
const BUILTIN_NAME: &str = "concept_keywords.csv (built in)";

/// One row of the dictionary.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    concept: String,
    language: String,
    /// Normalised keyword text.
    keyword: String,
    weight: f32,
    /// 1-based line number in the source file (for foreign-key errors).
    row: usize,
}

/// A dictionary row that does not load: names the file, row and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DictionaryError {
    /// The file (or a description of the source).
    pub file: String,
    /// 1-based line number in the file.
    pub row: usize,
    /// The column at fault.
    pub column: &'static str,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for DictionaryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: row {}, column {}: {}", self.file, self.row, self.column, self.message)
    }
}

impl std::error::Error for DictionaryError {}

/// Concept keywords, per language, with weights.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpertDictionary {
    entries: Vec<Entry>,
}

/// What the dictionary added to a question.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Expansion {
    /// Concepts triggered, in question order.
    pub(crate) concepts: Vec<String>,
    /// Keywords to add (source `expert_dictionary`).
    pub(crate) keywords: Vec<Keyword>,
}

impl ExpertDictionary {
    /// The dictionary shipped with docintel.
    pub fn builtin() -> ExpertDictionary {
        ExpertDictionary::from_csv(BUILTIN_NAME, BUILTIN).expect("the built-in dictionary is validated by a test")
    }

    /// Loads a dictionary from CSV text with the header
    /// `concept,language,keyword,weight` (lines starting with `#` ignored; a
    /// keyword holding a comma is double-quoted).
    pub fn from_csv(file: &str, text: &str) -> Result<ExpertDictionary, DictionaryError> {
        let error = |row, column, message: String| DictionaryError { file: file.to_owned(), row, column, message };
        let table = Table::parse(file, text, &["concept", "language", "keyword", "weight"]).map_err(|e| {
            let column = if e.column == "header" { "header" } else { "row" };
            error(e.row, column, e.message)
        })?;
        let mut entries = Vec::new();
        for line in &table.rows {
            let row = line.line;
            let cell = |column| table.cell(line, column);
            let concept = cell("concept");
            if concept.is_empty() || !concept.chars().all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit())
            {
                return Err(error(row, "concept", format!("{concept:?} is not a snake_case name")));
            }
            let language = cell("language");
            if language.len() != 2 || !language.chars().all(|c| c.is_ascii_lowercase()) {
                return Err(error(row, "language", format!("{language:?} is not an ISO 639-1 code")));
            }
            let keyword = normalize(cell("keyword"));
            if keyword.is_empty() {
                return Err(error(row, "keyword", "empty keyword".to_owned()));
            }
            let weight: f32 = cell("weight")
                .parse()
                .map_err(|_| error(row, "weight", format!("{:?} is not a number", cell("weight"))))?;
            if !(weight > 0.0 && weight <= 5.0) {
                return Err(error(row, "weight", format!("{weight} is outside (0, 5]")));
            }
            if entries.iter().any(|e: &Entry| e.concept == concept && e.keyword == keyword) {
                return Err(error(row, "keyword", format!("{keyword:?} is listed twice for {concept}")));
            }
            entries.push(Entry { concept: concept.to_owned(), language: language.to_owned(), keyword, weight, row });
        }
        Ok(ExpertDictionary { entries })
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the dictionary has no rows.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The concepts whose keywords occur in `question` (word-bounded, folded),
    /// and every other keyword of those concepts, not already in `existing`.
    pub(crate) fn expand(&self, question: &str, existing: &[Keyword]) -> Expansion {
        let folded = normalize(question);
        let mut triggered: Vec<(usize, &str)> = Vec::new();
        for entry in &self.entries {
            if let Some(at) = find_word(&folded, &entry.keyword)
                && !triggered.iter().any(|(_, c)| *c == entry.concept)
            {
                triggered.push((at, &entry.concept));
            }
        }
        triggered.sort();
        let mut have: Vec<String> = existing.iter().map(|k| normalize(&k.text)).collect();
        let mut keywords = Vec::new();
        for (_, concept) in &triggered {
            for entry in self.entries.iter().filter(|e| e.concept == *concept) {
                if have.contains(&entry.keyword) || find_word(&folded, &entry.keyword).is_some() {
                    continue;
                }
                have.push(entry.keyword.clone());
                keywords.push(Keyword {
                    text: entry.keyword.clone(),
                    weight: entry.weight,
                    source: KeywordSource::ExpertDictionary,
                    is_regex: false,
                    semantic_group: Some((*concept).to_owned()),
                });
            }
        }
        Expansion { concepts: triggered.into_iter().map(|(_, c)| c.to_owned()).collect(), keywords }
    }

    /// Every keyword of `concept` not already in `existing`: the expansion of
    /// a concept recognised otherwise than by a word of the question (the LLM
    /// parser's `matched_concept`).
    pub(crate) fn expand_concept(&self, concept: &str, existing: &[Keyword]) -> Vec<Keyword> {
        let mut have: Vec<String> = existing.iter().map(|k| normalize(&k.text)).collect();
        let mut keywords = Vec::new();
        for entry in self.entries.iter().filter(|e| e.concept == concept) {
            if have.contains(&entry.keyword) {
                continue;
            }
            have.push(entry.keyword.clone());
            keywords.push(Keyword {
                text: entry.keyword.clone(),
                weight: entry.weight,
                source: KeywordSource::ExpertDictionary,
                is_regex: false,
                semantic_group: Some(concept.to_owned()),
            });
        }
        keywords
    }

    /// Every row's concept with its 1-based line number, in file order (for
    /// the foreign-key check against the concepts table).
    pub(crate) fn concept_rows(&self) -> impl Iterator<Item = (usize, &str)> {
        self.entries.iter().map(|e| (e.row, e.concept.as_str()))
    }

    /// The concepts with a keyword equal to `text` (folded), in file order.
    pub(crate) fn concepts_named(&self, text: &str) -> Vec<&str> {
        let folded = normalize(text);
        let mut concepts: Vec<&str> = Vec::new();
        for entry in self.entries.iter().filter(|e| e.keyword == folded) {
            if !concepts.contains(&entry.concept.as_str()) {
                concepts.push(&entry.concept);
            }
        }
        concepts
    }

    /// The concept a short text (a field label: "Invoice No", "Total Amount
    /// Due", "Sum Insured") names, and the keyword found: the concept whose
    /// longest keyword occurs in it, word-bounded and folded; the earlier
    /// row on ties. `None` when no keyword occurs.
    pub fn concept_named_in(&self, text: &str) -> Option<(&str, &str)> {
        let folded = normalize(text);
        let mut best: Option<&Entry> = None;
        for entry in &self.entries {
            if find_word(&folded, &entry.keyword).is_some()
                && best.is_none_or(|b| entry.keyword.chars().count() > b.keyword.chars().count())
            {
                best = Some(entry);
            }
        }
        best.map(|e| (e.concept.as_str(), e.keyword.as_str()))
    }

    /// Languages present in the dictionary (for documentation and checks).
    pub fn languages(&self) -> Vec<&str> {
        let mut languages: Vec<&str> = self.entries.iter().map(|e| e.language.as_str()).collect();
        languages.sort_unstable();
        languages.dedup();
        languages
    }
}

/// Byte offset of `needle` in `haystack` on word boundaries.
fn find_word(haystack: &str, needle: &str) -> Option<usize> {
    let is_word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    haystack.match_indices(needle).map(|(at, _)| at).find(|&at| {
        !is_word(haystack[..at].chars().next_back()) && !is_word(haystack[at + needle.len()..].chars().next())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(question: &str, concepts: &[&str], some_keywords: &[&str]) {
        let expansion = ExpertDictionary::builtin().expand(question, &[]);
        assert_eq!(expansion.concepts, concepts, "{question}");
        let texts: Vec<&str> = expansion.keywords.iter().map(|k| k.text.as_str()).collect();
        for keyword in some_keywords {
            assert!(texts.contains(keyword), "{question}: {keyword} not in {texts:?}");
        }
        assert!(expansion.keywords.iter().all(|k| k.source == KeywordSource::ExpertDictionary));
    }

    #[test]
    fn a_label_is_named_by_the_concept_of_its_longest_keyword() {
        let dictionary = ExpertDictionary::builtin();
        assert_eq!(dictionary.concept_named_in("Invoice No."), Some(("invoice_number", "invoice no")));
        assert_eq!(dictionary.concept_named_in("INVOICE NUMBER").map(|c| c.0), Some("invoice_number"));
        assert_eq!(dictionary.concept_named_in("Total Amount Due"), Some(("total_amount", "total amount")));
        assert_eq!(dictionary.concept_named_in("Sum Insured").map(|c| c.0), Some("coverage_limit"));
        assert_eq!(dictionary.concept_named_in("Date of issue").map(|c| c.0), Some("invoice_date"));
        assert_eq!(dictionary.concept_named_in("Policy Holder"), None);
        assert_eq!(dictionary.concept_named_in("Invoicenumber"), None, "word-bounded");
    }

    #[test]
    fn the_builtin_dictionary_loads() {
        let dictionary = ExpertDictionary::builtin();
        assert!(dictionary.len() > 50);
        assert_eq!(dictionary.languages(), ["de", "en", "es", "fr", "nl", "ru"]);
    }

    #[test]
    fn concepts_expand_across_languages() {
        check("What is the total amount?", &["total_amount"], &["totaal", "gesamtbetrag", "montant total", "итого"]);
        check("What is the invoice date?", &["invoice_date"], &["factuurdatum", "rechnungsdatum", "date de facture"]);
        check("Quelle est la prime annuelle ?", &["premium"], &["premium", "cotisation"]);
        check("What is the premium and the deductible?", &["premium", "deductible"], &["prime", "franchise"]);
    }

    #[test]
    fn a_word_inside_another_does_not_trigger() {
        // "date" alone is not the invoice date; "vat" is not inside "private".
        check("What is the date?", &[], &[]);
        check("Is this a private contract?", &[], &[]);
    }

    #[test]
    fn keywords_already_present_are_not_repeated() {
        let existing = [Keyword::direct("totaal")];
        let expansion = ExpertDictionary::builtin().expand("What is the total amount?", &existing);
        assert!(!expansion.keywords.iter().any(|k| k.text == "totaal"));
        assert!(!expansion.keywords.iter().any(|k| k.text == "total amount"), "phrases of the question are not added");
    }

    #[test]
    fn bad_rows_name_file_row_and_column() {
        let check_error = |text: &str, row, column| {
            let error = ExpertDictionary::from_csv("mine.csv", text).unwrap_err();
            assert_eq!((error.row, error.column), (row, column), "{error}");
            assert!(error.to_string().starts_with("mine.csv: row"));
        };
        check_error("concept,language,keyword\n", 1, "header");
        check_error("concept,language,keyword,weight\npremium,english,prime,1\n", 2, "language");
        check_error("concept,language,keyword,weight\npremium,fr,prime,heavy\n", 2, "weight");
        check_error("concept,language,keyword,weight\n# c\npremium,fr,prime,1\npremium,fr,Prime,1\n", 4, "keyword");
        check_error("concept,language,keyword,weight\nPremium,fr,prime,1\n", 2, "concept");
        check_error("", 1, "header");
        check_error("concept,language,keyword,weight\npremium,fr,prime\n", 2, "row");
    }

    #[test]
    fn a_quoted_keyword_may_hold_a_comma() {
        let text = "# c\nconcept,language,keyword,weight\nequity,en,\"total liabilities, and equity\",1.0\nequity,en,equity,1\n";
        let dictionary = ExpertDictionary::from_csv("mine.csv", text).unwrap();
        assert_eq!(dictionary.len(), 2);
        assert_eq!(dictionary.concepts_named("Total liabilities, and equity"), ["equity"]);
        assert_eq!(dictionary.concept_rows().collect::<Vec<_>>(), [(3, "equity"), (4, "equity")]);
    }
}
