//! The question table, `<kb>/questions.jsonl`: one JSON row per `kb ask`
//! (time, the parsed question's columns, the document picked, the outcome),
//! appended with one `write` of the whole line to a file opened in append
//! mode, so concurrent `kb ask`s never interleave or overwrite rows (O_APPEND
//! moves to the end and writes atomically on a local file system). duckdb
//! reads it as it is: `SELECT * FROM read_json_auto('KB/questions.jsonl')`.
//! In an encrypted knowledge base the question's words (the question and its
//! keywords) are sealed in `sealed`, and `question` and `keywords` are null.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{KbError, io_error};
use crate::seal::{KbKey, from_hex, to_hex};

/// The question table's file name in the knowledge base folder.
pub const QUESTIONS: &str = "questions.jsonl";

/// One row of the question table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionRow {
    /// When the question was answered, UTC, ISO 8601 (`2026-12-06T01:20:00Z`).
    pub time: String,
    /// The same, milliseconds since the Unix epoch.
    pub unix_ms: u64,
    /// The question as asked (null in an encrypted knowledge base: in `sealed`).
    pub question: Option<String>,
    /// The parsed question's answer shape (`single`, `list`, …).
    pub answer_shape: String,
    /// The parsed question's answer type (`amount`, `date`, …).
    pub answer_type: String,
    /// The parsed question's keywords (null when encrypted: in `sealed`).
    pub keywords: Option<Vec<String>>,
    /// Encrypted knowledge base: hex of the sealed `{question, keywords}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed: Option<String>,
    /// The documents the index proposed (ids, best first).
    pub candidates: Vec<String>,
    /// The answering document's id.
    pub document_id: String,
    /// Its file name.
    pub document_name: String,
    /// `answered` or `not_found`.
    pub outcome: String,
    /// The answer's confidence.
    pub confidence: f64,
    /// Whether its citations verified.
    pub citations_verified: bool,
    /// Wall time of the question, ms.
    pub ms: u64,
}

/// The words of a question, sealed together in an encrypted knowledge base.
#[derive(Serialize, Deserialize)]
struct Words {
    question: Option<String>,
    keywords: Option<Vec<String>>,
}

fn associated_data(unix_ms: u64) -> Vec<u8> {
    format!("docintel-kb/questions/{unix_ms}").into_bytes()
}

/// Appends `row` to the question table (sealing its words with `key`): one
/// write of one line.
pub(crate) fn append(kb: &Path, mut row: QuestionRow, key: Option<&KbKey>) -> Result<(), KbError> {
    if let Some(key) = key {
        let words = Words { question: row.question.take(), keywords: row.keywords.take() };
        let plain = serde_json::to_vec(&words).map_err(|e| KbError::Sealing(e.to_string()))?;
        row.sealed = Some(to_hex(&key.seal(&plain, &associated_data(row.unix_ms))?));
    }
    let path = kb.join(QUESTIONS);
    let mut line = serde_json::to_vec(&row).map_err(|e| KbError::Sealing(e.to_string()))?;
    line.push(b'\n');
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&path).map_err(io_error(&path))?;
    file.write_all(&line).map_err(io_error(&path))
}

/// The question table's rows, oldest first; with the knowledge base's key the
/// sealed words are opened back into `question` and `keywords`. A missing
/// table is empty; a line that does not read (a write cut by a crash) is skipped.
pub fn questions(kb: &Path, key: Option<&KbKey>) -> Result<Vec<QuestionRow>, KbError> {
    let path = kb.join(QUESTIONS);
    let text = match std::fs::read_to_string(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        other => other.map_err(io_error(&path))?,
    };
    let mut rows: Vec<QuestionRow> = text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
    if let Some(key) = key {
        for row in &mut rows {
            let opened =
                row.sealed.as_deref().and_then(from_hex).and_then(|s| key.open(&s, &associated_data(row.unix_ms)));
            if let Some(words) = opened.and_then(|plain| serde_json::from_slice::<Words>(&plain).ok()) {
                row.question = words.question;
                row.keywords = words.keywords;
            }
        }
    }
    Ok(rows)
}

/// Now: (ISO 8601 UTC to the second, milliseconds since the epoch).
pub(crate) fn now() -> (String, u64) {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    (iso_utc(ms / 1000), ms)
}

/// `YYYY-MM-DDThh:mm:ssZ` of Unix seconds (Howard Hinnant's civil-from-days).
fn iso_utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rest = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest % 3600 / 60, rest % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_iso() {
        assert_eq!(iso_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso_utc(1_796_520_000), "2026-12-06T01:20:00Z");
    }

    #[test]
    fn rows_appended_from_threads_all_read_back_and_sealed_words_open_only_with_the_key() {
        let kb = docintel_test_support::temp_dir("kb-questions");
        let key = KbKey::from_bytes([3; 32]);
        let row = |i: u64| QuestionRow {
            time: iso_utc(i),
            unix_ms: i,
            question: Some(format!("question {i}")),
            answer_shape: "single".into(),
            answer_type: "amount".into(),
            keywords: Some(vec!["total".into()]),
            sealed: None,
            candidates: vec!["a".into()],
            document_id: "a".into(),
            document_name: "a.pdf".into(),
            outcome: "answered".into(),
            confidence: 0.5,
            citations_verified: true,
            ms: 1,
        };
        std::thread::scope(|scope| {
            for t in 0..4 {
                let kb = kb.path();
                scope.spawn(move || (0..50).for_each(|i| append(kb, row(t * 100 + i), None).unwrap()));
            }
        });
        assert_eq!(questions(kb.path(), None).unwrap().len(), 200);
        append(kb.path(), row(7), Some(&key)).unwrap();
        let raw = questions(kb.path(), None).unwrap().pop().unwrap();
        assert!(raw.question.is_none() && raw.keywords.is_none() && raw.sealed.is_some());
        assert_eq!(questions(kb.path(), Some(&key)).unwrap().pop().unwrap().question.as_deref(), Some("question 7"));
    }
}
