//! Dynamic few-shot: the validated examples closest to a question, picked
//! from an example bank, become the prompt's few-shot fragment.
//!
//! The bank is a JSONL file, one example per line:
//! `{"question": "...", "answer": {...validated answer JSON...}, "tags": ["amount", "invoice"]}`
//! (blank lines and lines starting with `#` are skipped).
//!
//! The scorer is a small IDF-weighted word overlap over the bank (the
//! retrieval brick's scorer is out of reach: bricks depend only on the
//! schema crate, and a bank holds tens of examples, not a document): the
//! share of the question's IDF mass (question words plus the caller's tags,
//! stop words dropped) that an example's question and tags contain, in
//! [0, 1]. Words the bank never uses count against every example, so a
//! question about something the bank does not cover scores low and gets no
//! examples. At most [`FewShotSelection::max`] examples at or above
//! [`FewShotSelection::threshold`] are kept, best first, ties in bank order.
//!
//! ```
//! use docintel_generate::fewshot::{ExampleBank, FewShotSelection};
//! let bank = ExampleBank::from_jsonl(r#"{"question": "What is the invoice total?", "answer": {"items": []}, "tags": ["amount"]}
//! {"question": "Who signed the lease?", "answer": {"items": []}}"#).unwrap();
//! let picked = bank.select("What is the total of this invoice?", &[], &FewShotSelection::default());
//! assert_eq!(picked.len(), 1);
//! assert!(bank.select("Which river floods?", &[], &FewShotSelection::default()).is_empty());
//! ```

use std::collections::BTreeSet;
use std::path::Path;

use docintel_schema::text;
use serde::Deserialize;
use serde_json::Value;

use crate::prompt::FewShotExample;

/// One example of the bank.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BankExample {
    /// The example question.
    pub question: String,
    /// The validated answer JSON.
    pub answer: Value,
    /// Free tags (answer type, concept, document kind).
    #[serde(default)]
    pub tags: Vec<String>,
}

/// Why a bank could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BankError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The bank file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A line is not a valid example.
    #[error("example bank line {line}: {reason}")]
    BadLine {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

/// How many examples, and how close they must be.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FewShotSelection {
    /// At most this many examples (3-5 is the useful range).
    pub max: usize,
    /// Minimum score in [0, 1].
    pub threshold: f64,
}

impl Default for FewShotSelection {
    fn default() -> FewShotSelection {
        FewShotSelection { max: 5, threshold: 0.35 }
    }
}

/// An example with its score.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredExample {
    /// Index in the bank.
    pub index: usize,
    /// Score in [0, 1].
    pub score: f64,
    /// The example as a prompt fragment entry.
    pub example: FewShotExample,
}

/// A loaded example bank.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExampleBank {
    examples: Vec<BankExample>,
    /// Per example, its distinct words (question + tags).
    words: Vec<BTreeSet<String>>,
}

const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "does", "do", "for", "from", "how", "in", "is", "it", "of", "on",
    "or", "the", "this", "that", "to", "was", "what", "when", "where", "which", "who", "whom", "why", "with", "le",
    "la", "les", "de", "des", "du", "et", "est", "quel", "quelle", "der", "die", "das", "und", "el", "los", "las",
];

fn words(text_in: &str) -> BTreeSet<String> {
    text::normalize(text_in)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP_WORDS.contains(w))
        .map(str::to_owned)
        .collect()
}

impl ExampleBank {
    /// Reads a JSONL bank file.
    pub fn load(path: &Path) -> Result<ExampleBank, BankError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| BankError::Io { path: path.display().to_string(), source })?;
        ExampleBank::from_jsonl(&text)
    }

    /// Parses a JSONL bank.
    pub fn from_jsonl(jsonl: &str) -> Result<ExampleBank, BankError> {
        let mut examples = Vec::new();
        for (index, line) in jsonl.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let example: BankExample = serde_json::from_str(line)
                .map_err(|e| BankError::BadLine { line: index + 1, reason: e.to_string() })?;
            if example.question.trim().is_empty() {
                return Err(BankError::BadLine { line: index + 1, reason: "empty question".to_owned() });
            }
            examples.push(example);
        }
        Ok(ExampleBank::new(examples))
    }

    /// A bank from examples.
    pub fn new(examples: Vec<BankExample>) -> ExampleBank {
        let words = examples
            .iter()
            .map(|e| {
                let mut w = words(&e.question);
                for tag in &e.tags {
                    w.extend(words(tag));
                }
                w
            })
            .collect();
        ExampleBank { examples, words }
    }

    /// Number of examples.
    pub fn len(&self) -> usize {
        self.examples.len()
    }

    /// Whether the bank is empty.
    pub fn is_empty(&self) -> bool {
        self.examples.is_empty()
    }

    fn idf(&self, word: &str) -> f64 {
        let n = self.examples.len() as f64;
        let df = self.words.iter().filter(|w| w.contains(word)).count() as f64;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// Every example's score for `question` and `tags`, in bank order.
    pub fn scores(&self, question: &str, tags: &[String]) -> Vec<f64> {
        let mut query = words(question);
        for tag in tags {
            query.extend(words(tag));
        }
        let weights: Vec<(&String, f64)> = query.iter().map(|w| (w, self.idf(w))).collect();
        let total: f64 = weights.iter().map(|(_, idf)| idf).sum();
        self.words
            .iter()
            .map(|have| {
                if total <= 0.0 {
                    return 0.0;
                }
                weights.iter().filter(|(w, _)| have.contains(*w)).map(|(_, idf)| idf).sum::<f64>() / total
            })
            .collect()
    }

    /// The closest examples, best first; empty when the bank is empty or no
    /// example reaches the threshold.
    pub fn select(&self, question: &str, tags: &[String], selection: &FewShotSelection) -> Vec<ScoredExample> {
        let mut scored: Vec<(usize, f64)> = self
            .scores(question, tags)
            .into_iter()
            .enumerate()
            .filter(|(_, score)| *score >= selection.threshold && *score > 0.0)
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(selection.max);
        scored
            .into_iter()
            .map(|(index, score)| {
                let example = &self.examples[index];
                ScoredExample {
                    index,
                    score,
                    example: FewShotExample {
                        question: example.question.clone(),
                        answer_json: example.answer.to_string(),
                    },
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bank() -> ExampleBank {
        ExampleBank::from_jsonl(
            r#"# invoices
{"question": "What is the total amount due?", "answer": {"items": [1]}, "tags": ["amount", "invoice"]}
{"question": "What is the invoice date?", "answer": {"items": [2]}, "tags": ["date", "invoice"]}

{"question": "Who is the landlord of the lease?", "answer": {"items": [3]}, "tags": ["text", "lease"]}
{"question": "What is the total premium of the policy?", "answer": {"items": [4]}, "tags": ["amount", "insurance"]}"#,
        )
        .unwrap()
    }

    #[test]
    fn closest_examples_come_first_and_far_ones_are_dropped() {
        let bank = bank();
        assert_eq!(bank.len(), 4);
        let picked = bank.select("What is the total amount of the invoice?", &["amount".into()], &Default::default());
        let order: Vec<usize> = picked.iter().map(|p| p.index).collect();
        assert_eq!(order[0], 0, "{picked:?}");
        assert!(!order.contains(&2), "the lease example is not close: {picked:?}");
        assert!(picked.windows(2).all(|w| w[0].score >= w[1].score));
        assert_eq!(picked[0].example.answer_json, r#"{"items":[1]}"#);
    }

    #[test]
    fn nothing_close_or_an_empty_bank_gives_no_examples() {
        let bank = bank();
        assert!(bank.select("How many employees work in Lyon?", &[], &Default::default()).is_empty());
        assert!(ExampleBank::default().select("What is the total?", &[], &Default::default()).is_empty());
        assert!(bank.select("what is the", &[], &Default::default()).is_empty(), "stop words only");
    }

    #[test]
    fn max_caps_the_selection() {
        let bank = bank();
        let loose = FewShotSelection { max: 2, threshold: 0.0 };
        assert_eq!(bank.select("total invoice amount date premium", &[], &loose).len(), 2);
    }

    #[test]
    fn bad_lines_are_named() {
        let error = ExampleBank::from_jsonl("{\"question\": \"q\", \"answer\": 1}\n{oops").unwrap_err();
        assert!(error.to_string().starts_with("example bank line 2"), "{error}");
        let error = ExampleBank::from_jsonl(r#"{"question": " ", "answer": 1}"#).unwrap_err();
        assert!(error.to_string().contains("empty question"), "{error}");
    }
}
