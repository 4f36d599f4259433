//! The parsed question on disk: the full [`ParsedQuestion`] as JSON under
//! `<out>/<document-stem>/questions/<slug>/parsed_question.json`, the slug
//! being [`docintel_schema::slug::turns_slug`] of the user's question and the
//! earlier turns it was asked after.
//!
//! The file is a `ParsedQuestion` object with one extra key, `_cache`, that
//! holds the cache key: the hash of the document profile the question was
//! parsed for, the [`QUESTION_BUILD`] stamp of the rules that parsed it and,
//! for a question asked after others, those earlier turns
//! (`previous_turns`, absent when there were none).
//! The same question parses differently on a PDF and on a DOCX (pages,
//! TOC), differently again once the rules change, and differently after
//! other turns (a follow-up's rewrite), so a record saved for another
//! profile, by another build or after other turns — or a record without
//! `_cache`, such as one written by the trace — is a cache miss.
//! Writes go through a temporary file and a rename: a reader never sees
//! half a file.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use docintel_schema::slug::turns_slug;
use docintel_schema::{DocumentProfile, ParsedQuestion};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The file name inside the question folder.
pub const PARSED_QUESTION_FILE: &str = "parsed_question.json";

/// A hash of this crate's sources and data files (see `build.rs`): a parsed
/// question saved by other rules is not reused.
pub const QUESTION_BUILD: &str = env!("DOCINTEL_QUESTION_SOURCE_STAMP");

/// The key under which the cache key is stored.
const CACHE_KEY: &str = "_cache";
/// The cache key's earlier turns (absent: none).
const TURNS_KEY: &str = "previous_turns";

/// Why a parsed question could not be written or read.
#[derive(Debug)]
#[non_exhaustive]
pub enum PersistError {
    /// A file or folder could not be written or read.
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file exists but is not a parsed question.
    Corrupt {
        /// The path.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl fmt::Display for PersistError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PersistError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            PersistError::Corrupt { path, message } => {
                write!(f, "{}: not a parsed question: {message}", path.display())
            }
        }
    }
}

impl std::error::Error for PersistError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PersistError::Io { source, .. } => Some(source),
            PersistError::Corrupt { .. } => None,
        }
    }
}

/// A stable hash of the document profile (16 hex digits of the SHA-256 of
/// its JSON form): the part of the cache key that tells a PDF from a DOCX.
pub fn profile_hash(profile: &DocumentProfile) -> String {
    let json = serde_json::to_vec(profile).expect("a profile serialises");
    Sha256::digest(&json).iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// `<out_dir>/<document key>/questions/<slug>/parsed_question.json` (the key:
/// [`docintel_schema::slug::document_key`]; the slug:
/// [`docintel_schema::slug::turns_slug`] of the question and the earlier turns).
pub fn parsed_question_path(out_dir: &Path, document_key: &str, question: &str, previous_turns: &[String]) -> PathBuf {
    out_dir.join(document_key).join("questions").join(turns_slug(question, previous_turns)).join(PARSED_QUESTION_FILE)
}

/// Writes `parsed` (keyed by its `original_question`) for `document_path`
/// parsed with `profile` after `previous_turns` (oldest first; empty for a
/// question asked alone), atomically; returns the file written.
pub fn save_parsed_question(
    out_dir: &Path,
    document_key: &str,
    profile: &DocumentProfile,
    previous_turns: &[String],
    parsed: &ParsedQuestion,
) -> Result<PathBuf, PersistError> {
    let path = parsed_question_path(out_dir, document_key, &parsed.original_question, previous_turns);
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| PersistError::Io { path, source }
    };
    let dir = path.parent().expect("a question folder");
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let mut value = serde_json::to_value(parsed).expect("a parsed question serialises");
    if let Value::Object(map) = &mut value {
        let mut key =
            json!({ "profile_hash": profile_hash(profile), "parser": parsed.parser, "build": QUESTION_BUILD });
        if !previous_turns.is_empty() {
            key[TURNS_KEY] = json!(previous_turns);
        }
        map.insert(CACHE_KEY.to_owned(), key);
    }
    let mut bytes = serde_json::to_vec_pretty(&value).expect("JSON serialises");
    bytes.push(b'\n');
    let tmp = dir.join(format!(".{PARSED_QUESTION_FILE}.{}.tmp", std::process::id()));
    let mut file = std::fs::File::create(&tmp).map_err(io(&tmp))?;
    file.write_all(&bytes).map_err(io(&tmp))?;
    file.sync_all().map_err(io(&tmp))?;
    drop(file);
    std::fs::rename(&tmp, &path).map_err(io(&path))?;
    Ok(path)
}

/// The parsed question saved for `question` asked after `previous_turns` on
/// `document_path` with this `profile`, or `None` on a cache miss: no file, a
/// file saved for another profile, by another build of the rules
/// ([`QUESTION_BUILD`]), after other turns (none counts) or for another
/// question (slug collision), or a file without a cache key. A file that
/// exists but is not JSON of a parsed question is an error.
pub fn load_parsed_question(
    out_dir: &Path,
    document_key: &str,
    profile: &DocumentProfile,
    question: &str,
    previous_turns: &[String],
) -> Result<Option<ParsedQuestion>, PersistError> {
    let path = parsed_question_path(out_dir, document_key, question, previous_turns);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(PersistError::Io { path, source }),
    };
    let corrupt = |message: String| PersistError::Corrupt { path: path.clone(), message };
    let mut value: Value = serde_json::from_str(&text).map_err(|e| corrupt(e.to_string()))?;
    let stored = |key: &str| value.get(CACHE_KEY).and_then(|c| c.get(key)).and_then(Value::as_str).map(str::to_owned);
    let (stored_hash, stored_build) = (stored("profile_hash"), stored("build"));
    let stored_turns: Option<Vec<String>> = match value.get(CACHE_KEY).and_then(|c| c.get(TURNS_KEY)) {
        None => Some(Vec::new()),
        Some(turns) => serde_json::from_value(turns.clone()).ok(),
    };
    if let Value::Object(map) = &mut value {
        map.remove(CACHE_KEY);
    }
    let parsed: ParsedQuestion = serde_json::from_value(value).map_err(|e| corrupt(e.to_string()))?;
    let hit = stored_hash.as_deref() == Some(profile_hash(profile).as_str())
        && stored_build.as_deref() == Some(QUESTION_BUILD)
        && stored_turns.as_deref() == Some(previous_turns)
        && parsed.original_question == question;
    Ok(hit.then_some(parsed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RuleParser;
    use crate::test_support::{docx_profile, pdf_profile};
    use docintel_schema::QuestionParser;

    fn scratch(name: &str) -> docintel_test_support::TempDir {
        docintel_test_support::temp_dir(&format!("persist-{name}"))
    }

    /// Saves the parse of `question` on `saved_for`, loads it back for
    /// `loaded_for` and `asked`, and checks hit or miss.
    fn check(
        name: &str,
        question: &str,
        saved_for: &DocumentProfile,
        loaded_for: &DocumentProfile,
        asked: &str,
        hit: bool,
    ) {
        let dir = scratch(name);
        let out = dir.path().to_path_buf();
        let document = "policy-v2-0123456789ab";
        let parsed = RuleParser::new().parse(question, saved_for).unwrap();
        let path = save_parsed_question(&out, document, saved_for, &[], &parsed).unwrap();
        assert!(path.starts_with(out.join("policy-v2-0123456789ab").join("questions")), "{}", path.display());
        assert!(path.ends_with(PARSED_QUESTION_FILE));
        let loaded = load_parsed_question(&out, document, loaded_for, asked, &[]).unwrap();
        assert_eq!(loaded.as_ref(), hit.then_some(&parsed), "{name}");
        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn round_trip_and_cache_key() {
        let q = "What is the limit on page 3, not the deductible, in EUR? And when is it due?";
        check("hit", q, &pdf_profile(), &pdf_profile(), q, true);
        check("other-profile", q, &pdf_profile(), &docx_profile(), q, false);
        let fewer_pages = DocumentProfile { n_pages: Some(2), ..pdf_profile() };
        check("other-page-count", q, &pdf_profile(), &fewer_pages, q, false);
        check("other-question", q, &pdf_profile(), &pdf_profile(), "What is the premium?", false);
    }

    #[test]
    fn a_parse_after_other_turns_is_a_miss() {
        let dir = scratch("turns");
        let out = dir.path().to_path_buf();
        let document = "invoice-0123456789ab";
        let question = "When is it due?";
        let total = vec!["What is the total amount?".to_owned()];
        let premium = vec!["What is the annual premium?".to_owned()];
        let parser = RuleParser::new();
        let alone = parser.parse(question, &pdf_profile()).unwrap();
        let after_total = parser.parse_with_history(question, &total, &pdf_profile()).unwrap();
        assert_ne!(alone, after_total, "the follow-up's rewrite changes the record");
        let load = |turns: &[String]| load_parsed_question(&out, document, &pdf_profile(), question, turns).unwrap();
        // A follow-up's record is served only to the same question after the same turns.
        let path = save_parsed_question(&out, document, &pdf_profile(), &total, &after_total).unwrap();
        assert_eq!(load(&total), Some(after_total.clone()));
        assert_eq!(load(&[]), None, "a question asked alone never gets a follow-up's record");
        assert_eq!(load(&premium), None, "nor one made after other turns");
        let json: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(json["_cache"]["previous_turns"], json!(total));
        // The record of the question alone has its own folder: each record is
        // served to its own turns, and neither replaces the other.
        let alone_path = save_parsed_question(&out, document, &pdf_profile(), &[], &alone).unwrap();
        assert_ne!(alone_path, path);
        assert_eq!(load(&[]), Some(alone));
        assert_eq!(load(&total), Some(after_total));
        assert_eq!(load(&premium), None);
        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn a_parse_saved_by_other_rules_is_a_miss() {
        let dir = scratch("other-build");
        let out = dir.path().to_path_buf();
        let document = "doc-0123456789ab";
        let question = "What is the title of control AC-2?";
        let parsed = RuleParser::new().parse(question, &pdf_profile()).unwrap();
        let path = save_parsed_question(&out, document, &pdf_profile(), &[], &parsed).unwrap();
        assert_eq!(load_parsed_question(&out, document, &pdf_profile(), question, &[]).unwrap(), Some(parsed));
        let saved = std::fs::read_to_string(&path).unwrap();
        assert_eq!(QUESTION_BUILD.len(), 16);
        assert!(saved.contains(QUESTION_BUILD));
        std::fs::write(&path, saved.replace(QUESTION_BUILD, "0123456789abcdef")).unwrap();
        assert_eq!(load_parsed_question(&out, document, &pdf_profile(), question, &[]).unwrap(), None);
        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn a_file_without_cache_key_is_a_miss_and_garbage_is_an_error() {
        let dir = scratch("foreign");
        let out = dir.path().to_path_buf();
        let document = "doc-0123456789ab";
        let question = "What is the total?";
        let path = parsed_question_path(&out, document, question, &[]);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let parsed = RuleParser::new().parse(question, &pdf_profile()).unwrap();
        std::fs::write(&path, serde_json::to_string(&parsed).unwrap()).unwrap();
        assert_eq!(load_parsed_question(&out, document, &pdf_profile(), question, &[]).unwrap(), None);
        std::fs::write(&path, "{ not json").unwrap();
        let error = load_parsed_question(&out, document, &pdf_profile(), question, &[]).unwrap_err();
        assert!(matches!(error, PersistError::Corrupt { .. }), "{error}");
        assert!(error.to_string().contains("parsed_question.json: not a parsed question"), "{error}");
        std::fs::remove_dir_all(&out).unwrap();
        assert_eq!(load_parsed_question(&out, document, &pdf_profile(), question, &[]).unwrap(), None, "no file");
    }

    #[test]
    fn paths_are_stable() {
        let path = parsed_question_path(Path::new("out"), "contract-0123456789ab", "What's the limit?", &[]);
        assert_eq!(
            path,
            Path::new("out/contract-0123456789ab/questions/what-s-the-limit-9a877ee4/parsed_question.json")
        );
        assert_eq!(profile_hash(&pdf_profile()), profile_hash(&pdf_profile()));
        assert_ne!(profile_hash(&pdf_profile()), profile_hash(&docx_profile()));
        assert_eq!(profile_hash(&pdf_profile()).len(), 16);
    }

    #[test]
    fn no_temporary_file_is_left_behind() {
        let dir = scratch("tmp");
        let out = dir.path().to_path_buf();
        let parsed = RuleParser::new().parse("What is the premium?", &pdf_profile()).unwrap();
        let path = save_parsed_question(&out, "x-0123456789ab", &pdf_profile(), &[], &parsed).unwrap();
        let names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [PARSED_QUESTION_FILE]);
        let json: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(json["_cache"]["profile_hash"], profile_hash(&pdf_profile()));
        assert!(json["_cache"].get("previous_turns").is_none(), "no turns, no key: older records read the same");
        assert_eq!(json["original_question"], "What is the premium?");
        std::fs::remove_dir_all(&out).unwrap();
    }
}
