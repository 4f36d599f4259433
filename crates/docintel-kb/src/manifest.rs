//! `manifest.json`: the knowledge base's format, its documents and the files
//! that could not be ingested. Written whole to a temporary file and renamed
//! into place, so a reader sees the old manifest or the new one, never half.

use std::path::Path;

use docintel::schema::ParsedDocument;
use serde::{Deserialize, Serialize};

use crate::error::{KbError, io_error};
use crate::seal::{KbKey, KeyCheck};

/// The layout of a knowledge base folder this build reads and writes; a
/// manifest of another version is re-indexed by `kb add`, never read.
pub const KB_FORMAT_VERSION: u32 = 1;

/// The manifest file's name in the knowledge base folder.
pub const MANIFEST: &str = "manifest.json";

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`KB_FORMAT_VERSION`] when written.
    pub format_version: u32,
    /// The fingerprint of the stored parsed document's layout
    /// ([`document_schema`]): a build whose `ParsedDocument` changed re-indexes.
    pub document_schema: String,
    /// The documents, sorted by id.
    pub documents: Vec<DocEntry>,
    /// The files that could not be ingested, the latest failure per file.
    pub failures: Vec<Failure>,
    /// When the knowledge base is encrypted (`kb add --key-file`): the AEAD
    /// and a known token sealed with the tenant's key, never the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption: Option<KeyCheck>,
}

/// One document of the knowledge base.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocEntry {
    /// `<slug of the file name>-<first 12 hex of its SHA-256>`: its folder
    /// under `docs/` and its key in the full-text index.
    pub id: String,
    /// The file name.
    pub name: String,
    /// The absolute path it was read from.
    pub source: String,
    /// The SHA-256 of its bytes (hex).
    pub sha256: String,
    /// The parser build that read it (`docintel::PARSER_BUILD`).
    pub parser_build: String,
    /// Pages (0 for a format without pages).
    pub pages: u32,
    /// Lines of the line table.
    pub lines: u32,
    /// The parser's one-line summary.
    pub summary: Option<String>,
}

/// A file that could not be ingested.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// The path as given (absolute when it exists).
    pub source: String,
    /// Why (the parser's error, naming the file).
    pub error: String,
}

impl Manifest {
    /// An empty manifest of this build's format.
    pub fn new() -> Manifest {
        Manifest {
            format_version: KB_FORMAT_VERSION,
            document_schema: document_schema(),
            documents: Vec::new(),
            failures: Vec::new(),
            encryption: None,
        }
    }

    /// Whether this build can read the knowledge base as it is; `Err` holds
    /// the format found, for the message.
    pub fn check_format(&self) -> Result<(), String> {
        if self.format_version != KB_FORMAT_VERSION {
            return Err(format!("format version {}", self.format_version));
        }
        if self.document_schema != document_schema() {
            return Err(format!("parsed-document layout {}", short(&self.document_schema)));
        }
        Ok(())
    }

    /// The key to read this knowledge base with: `None` when it is not
    /// encrypted (a key given is then not needed); [`KbError::KeyRequired`]
    /// or [`KbError::WrongKey`] before anything is read otherwise.
    pub(crate) fn reading_key<'k>(&self, dir: &Path, key: Option<&'k KbKey>) -> Result<Option<&'k KbKey>, KbError> {
        let Some(check) = &self.encryption else { return Ok(None) };
        let dir = dir.display().to_string();
        let key = key.ok_or_else(|| KbError::KeyRequired { dir: dir.clone() })?;
        if check.accepts(key) { Ok(Some(key)) } else { Err(KbError::WrongKey { dir }) }
    }

    /// The document with this id.
    pub fn document(&self, id: &str) -> Option<&DocEntry> {
        self.documents.iter().find(|d| d.id == id)
    }

    /// Records `entry`, replacing one of the same id.
    pub(crate) fn upsert(&mut self, entry: DocEntry) {
        self.failures.retain(|f| f.source != entry.source);
        self.documents.retain(|d| d.id != entry.id);
        self.documents.push(entry);
        self.documents.sort_by(|a, b| a.id.cmp(&b.id));
    }

    /// Records `failure`, replacing an earlier one of the same file.
    pub(crate) fn record_failure(&mut self, failure: Failure) {
        self.failures.retain(|f| f.source != failure.source);
        self.failures.push(failure);
        self.failures.sort_by(|a, b| a.source.cmp(&b.source));
    }
}

impl Default for Manifest {
    fn default() -> Self {
        Manifest::new()
    }
}

/// What this build's format is called in messages.
pub(crate) fn this_format() -> String {
    format!("format version {KB_FORMAT_VERSION}, parsed-document layout {}", short(&document_schema()))
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// The SHA-256 of `ParsedDocument`'s JSON Schema: changes whenever a field of
/// the stored parsed document does, so an old `document.json` is never
/// misread as a new one.
pub fn document_schema() -> String {
    let schema = schemars::schema_for!(ParsedDocument);
    docintel::content_hash(serde_json::to_string(&schema).unwrap_or_default().as_bytes())
}

/// Reads `<dir>/manifest.json`: [`KbError::NotAKb`] when it is missing,
/// [`KbError::Stale`] when it is not of this build's format.
pub(crate) fn load(dir: &Path) -> Result<Manifest, KbError> {
    let manifest = load_any(dir)?;
    manifest.check_format().map_err(|found| KbError::Stale {
        dir: dir.display().to_string(),
        found,
        expected: this_format(),
    })?;
    Ok(manifest)
}

/// Reads `<dir>/manifest.json` whatever its format (the documents' sources
/// are what a re-index needs); a manifest too old to have them reads as empty.
pub(crate) fn load_any(dir: &Path) -> Result<Manifest, KbError> {
    let path = dir.join(MANIFEST);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(KbError::NotAKb { dir: dir.display().to_string() });
        }
        Err(e) => return Err(io_error(&path)(e)),
    };
    let corrupt = |reason: String| KbError::Corrupt { path: path.display().to_string(), reason };
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| corrupt(e.to_string()))?;
    let version = value.get("format_version").and_then(serde_json::Value::as_u64).unwrap_or(0);
    if version == u64::from(KB_FORMAT_VERSION) {
        return serde_json::from_value(value).map_err(|e| corrupt(e.to_string()));
    }
    // Another version: keep what can be read for the re-index.
    let mut manifest: Manifest = serde_json::from_value(value).unwrap_or_else(|_| Manifest::new());
    manifest.format_version = u32::try_from(version).unwrap_or(0);
    Ok(manifest)
}

/// Writes `<dir>/manifest.json` through a temporary file and a rename.
pub(crate) fn save(dir: &Path, manifest: &Manifest) -> Result<(), KbError> {
    let text = serde_json::to_vec_pretty(manifest).map_err(|e| KbError::Corrupt {
        path: dir.join(MANIFEST).display().to_string(),
        reason: format!("cannot encode the manifest: {e}"),
    })?;
    write_atomic(&dir.join(MANIFEST), &text)
}

/// Writes `bytes` to `path` through `<path>.tmp` and a rename, so a killed
/// process leaves the old file or the new one.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), KbError> {
    let mut temp = path.as_os_str().to_owned();
    temp.push(".tmp");
    let temp = std::path::PathBuf::from(temp);
    std::fs::write(&temp, bytes).map_err(io_error(&temp))?;
    std::fs::rename(&temp, path).map_err(io_error(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_format_is_refused_and_its_documents_kept_for_the_re_index() {
        let temp = docintel_test_support::temp_dir("kb-manifest");
        let dir = temp.path().to_owned();
        let mut manifest = Manifest::new();
        manifest.upsert(DocEntry {
            id: "a-0123456789ab".into(),
            name: "a.pdf".into(),
            source: "/x/a.pdf".into(),
            sha256: "0123456789ab".into(),
            parser_build: "p".into(),
            pages: 1,
            lines: 2,
            summary: None,
        });
        save(&dir, &manifest).unwrap();
        assert_eq!(load(&dir).unwrap(), manifest);

        manifest.document_schema = "0000".into();
        save(&dir, &manifest).unwrap();
        assert!(matches!(load(&dir), Err(KbError::Stale { .. })));

        let mut old = serde_json::to_value(&manifest).unwrap();
        old["format_version"] = 0.into();
        std::fs::write(dir.join(MANIFEST), old.to_string()).unwrap();
        let error = load(&dir).unwrap_err();
        assert!(error.to_string().contains("format version 0"), "{error}");
        assert_eq!(load_any(&dir).unwrap().documents.len(), 1);
        std::fs::remove_file(dir.join(MANIFEST)).unwrap();
        assert!(matches!(load(&dir), Err(KbError::NotAKb { .. })));
    }
}
