//! A parsed document's tables on disk, one folder per document: its name,
//! its files and whether it is complete. `write_tables` (feature `parquet`,
//! on by default; `parquet_tables.rs`) writes them.
//!
//! A document folder is `<out>/<slug of the file stem>-<first 12 hex of the
//! SHA-256 of the file's bytes>` (see [`document_folder`]) and holds:
//!
//! | file              | rows / content                                                        |
//! |-------------------|-----------------------------------------------------------------------|
//! | `lines.parquet`   | `line_id, page, line_in_page, text, x0, y0, x1, y1, visible, source, ocr_confidence` |
//! | `pages.parquet`   | every `PageInfo` column; `decorative_image_hashes` is `list<string>`  |
//! | `toc.parquet`     | `id, parent (nullable), level, title, start_page, end_page, source`   |
//! | `chunks.parquet`  | every `Chunk` field                                                   |
//! | `profile.json`    | `source`, `content_hash` (full SHA-256 hex), `parser_build`, `profile`, `diagnostics` |
//!
//! Integers are `uint32`, coordinates `float32`, booleans `bool`, text
//! `utf8`; `figure_kind`, `parent` and `ocr_confidence` (0 to 1, lines read by OCR only) are
//! nullable; TOC `source` is the snake_case name (`outline`, `contents_page`, `headings`), line
//! `source` `text_layer` or `ocr`. Parquet pages are
//! Snappy-compressed. Every file is written to a temporary name in the folder
//! and renamed into place; `profile.json` is written last, so a folder whose
//! `profile.json` exists with the right hash is complete (see
//! [`is_up_to_date`]).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The five files of a complete document folder.
pub const DOCUMENT_FILES: [&str; 5] =
    ["lines.parquet", "pages.parquet", "toc.parquet", "chunks.parquet", "profile.json"];

/// How many hex digits of the content hash name the folder.
const HASH_PREFIX_LEN: usize = 12;
/// Longest slug kept from the file stem.
const MAX_SLUG_LEN: usize = 60;

/// A written document folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentFolder {
    /// The folder.
    pub dir: PathBuf,
    /// The files written, in [`DOCUMENT_FILES`] order.
    pub files: Vec<PathBuf>,
}

/// Why the tables could not be written. Every message names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// Creating, writing or renaming a file failed.
    #[error("{path}: I/O error: {source}")]
    Io {
        /// The file or folder.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Building or encoding a table failed (a bug).
    #[error("{path}: cannot encode table: {reason}")]
    Encode {
        /// The file.
        path: String,
        /// What the encoder reported.
        reason: String,
    },
}

/// The SHA-256 of `bytes` as lowercase hex.
pub fn content_hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The folder of one document: `<out>/<slug of the file stem>-<first 12 hex
/// of the SHA-256 of bytes>`. The slug is the stem lowercased, every run of
/// non-alphanumeric characters turned into one `-`, at most 60 characters
/// (`document` when nothing is left).
pub fn document_folder(out: &Path, file: &Path, bytes: &[u8]) -> PathBuf {
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let hash = content_hash(bytes);
    out.join(format!("{}-{}", slug(&stem), &hash[..HASH_PREFIX_LEN]))
}

fn slug(stem: &str) -> String {
    let mut s = String::new();
    for c in stem.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            s.push(c);
        } else if !s.is_empty() && !s.ends_with('-') {
            s.push('-');
        }
    }
    let mut s: String = s.chars().take(MAX_SLUG_LEN).collect();
    while s.ends_with('-') {
        s.pop();
    }
    if s.is_empty() { "document".to_owned() } else { s }
}

/// A hash of the parser's sources (this crate and the vendored pdf-extract
/// fork, see `build.rs`), written to `profile.json` as `parser_build`: tables
/// written by other parser code are stale even when the document is not.
pub const PARSER_BUILD: &str = env!("DOCINTEL_PARSE_SOURCE_STAMP");

/// True when all five files are present in `folder`, `profile.json`'s
/// `content_hash` starts with the hash suffix of the folder name, and its
/// `parser_build` is this build's [`PARSER_BUILD`].
pub fn is_up_to_date(folder: &Path) -> bool {
    if !DOCUMENT_FILES.iter().all(|f| folder.join(f).is_file()) {
        return false;
    }
    let Some(suffix) = folder.file_name().and_then(|n| n.to_str()).and_then(|n| n.rsplit_once('-')).map(|(_, h)| h)
    else {
        return false;
    };
    if suffix.len() != HASH_PREFIX_LEN {
        return false;
    }
    let Ok(text) = std::fs::read_to_string(folder.join("profile.json")) else { return false };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else { return false };
    json.get("content_hash").and_then(|h| h.as_str()).is_some_and(|h| h.len() == 64 && h.starts_with(suffix))
        && json.get("parser_build").and_then(|b| b.as_str()) == Some(PARSER_BUILD)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_folders() {
        assert_eq!(slug("Amazon Web Services (2023)"), "amazon-web-services-2023");
        assert_eq!(slug("__"), "document");
        let folder = document_folder(Path::new("out"), Path::new("dir/My File.pdf"), b"abc");
        // SHA-256("abc") = ba7816bf8f01cfea...
        assert_eq!(folder, Path::new("out/my-file-ba7816bf8f01"));
    }
}
