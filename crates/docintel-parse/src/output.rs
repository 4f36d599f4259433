//! Writing a parsed document's tables to disk, one folder per document.
//!
//! A document folder is `<out>/<slug of the file stem>-<first 12 hex of the
//! SHA-256 of the file's bytes>` (see [`document_folder`]) and holds:
//!
//! | file              | rows / content                                                        |
//! |-------------------|-----------------------------------------------------------------------|
//! | `lines.parquet`   | `line_id, page, line_in_page, text, x0, y0, x1, y1, visible`          |
//! | `pages.parquet`   | every `PageInfo` column; `decorative_image_hashes` is `list<string>`  |
//! | `toc.parquet`     | `id, parent (nullable), level, title, start_page, end_page, source`   |
//! | `chunks.parquet`  | every `Chunk` field                                                   |
//! | `profile.json`    | `source`, `content_hash` (full SHA-256 hex), `parser_build`, `profile`, `diagnostics` |
//!
//! Integers are `uint32`, coordinates `float32`, booleans `bool`, text
//! `utf8`; `figure_kind` and `parent` are nullable; TOC `source` is the
//! snake_case name (`outline`, `contents_page`, `headings`). Parquet pages are
//! Snappy-compressed. Every file is written to a temporary name in the folder
//! and renamed into place; `profile.json` is written last, so a folder whose
//! `profile.json` exists with the right hash is complete (see
//! [`is_up_to_date`]).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, BooleanArray, Float32Array, RecordBatch, StringArray, UInt32Array};
use arrow_schema::{Field, Schema};
use docintel_schema::{Chunk, ParsedDocument, TocSource};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
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

/// Writes the document's tables to `dir` (created if needed):
/// `lines.parquet`, `pages.parquet`, `toc.parquet`, `chunks.parquet`, then
/// `profile.json` with `source_bytes_hash` (the full SHA-256 hex of the
/// source file, see [`content_hash`]). Each file is replaced atomically.
pub fn write_tables(
    doc: &ParsedDocument,
    chunks: &[Chunk],
    source_bytes_hash: &str,
    dir: &Path,
) -> Result<DocumentFolder, OutputError> {
    std::fs::create_dir_all(dir).map_err(|source| io_error(dir, source))?;
    let batches = [lines_batch(doc), pages_batch(doc), toc_batch(doc), chunks_batch(chunks)];
    let mut files = Vec::with_capacity(DOCUMENT_FILES.len());
    for (name, batch) in DOCUMENT_FILES.iter().zip(batches) {
        let path = dir.join(name);
        let batch =
            batch.map_err(|e| OutputError::Encode { path: path.display().to_string(), reason: e.to_string() })?;
        write_atomically(&path, |file| write_parquet(file, &batch, &path))?;
        files.push(path);
    }
    let profile = serde_json::json!({
        "source": doc.source,
        "content_hash": source_bytes_hash,
        "parser_build": PARSER_BUILD,
        "profile": doc.profile,
        "diagnostics": doc.diagnostics,
    });
    let path = dir.join(DOCUMENT_FILES[4]);
    write_atomically(&path, |file| {
        serde_json::to_writer_pretty(&mut *file, &profile)
            .map_err(|e| OutputError::Encode { path: path.display().to_string(), reason: e.to_string() })?;
        file.write_all(b"\n").map_err(|source| io_error(&path, source))
    })?;
    files.push(path);
    Ok(DocumentFolder { dir: dir.to_path_buf(), files })
}

fn io_error(path: &Path, source: std::io::Error) -> OutputError {
    OutputError::Io { path: path.display().to_string(), source }
}

/// Writes `path` through a temporary sibling, synced then renamed.
fn write_atomically(path: &Path, write: impl FnOnce(&mut File) -> Result<(), OutputError>) -> Result<(), OutputError> {
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(format!(".tmp{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let result = (|| {
        let mut file = File::create(&tmp).map_err(|source| io_error(&tmp, source))?;
        write(&mut file)?;
        file.sync_all().map_err(|source| io_error(&tmp, source))?;
        std::fs::rename(&tmp, path).map_err(|source| io_error(path, source))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn write_parquet(file: &mut File, batch: &RecordBatch, path: &Path) -> Result<(), OutputError> {
    let encode = |e: parquet::errors::ParquetError| OutputError::Encode {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    let props = WriterProperties::builder().set_compression(Compression::SNAPPY).build();
    let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(props)).map_err(encode)?;
    writer.write(batch).map_err(encode)?;
    writer.close().map_err(encode)?;
    Ok(())
}

type Column = (&'static str, ArrayRef, bool);

fn batch(columns: Vec<Column>) -> Result<RecordBatch, arrow_schema::ArrowError> {
    let fields: Vec<Field> =
        columns.iter().map(|(name, array, nullable)| Field::new(*name, array.data_type().clone(), *nullable)).collect();
    let arrays = columns.into_iter().map(|(_, array, _)| array).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)
}

fn u32s(values: impl Iterator<Item = u32>) -> ArrayRef {
    Arc::new(UInt32Array::from_iter_values(values))
}

fn f32s(values: impl Iterator<Item = f32>) -> ArrayRef {
    Arc::new(Float32Array::from_iter_values(values))
}

fn strings<'a>(values: impl Iterator<Item = &'a str>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(values))
}

fn lines_batch(doc: &ParsedDocument) -> Result<RecordBatch, arrow_schema::ArrowError> {
    let l = &doc.lines;
    let hidden = doc.invisible_lines();
    batch(vec![
        ("line_id", u32s(l.iter().map(|l| l.line_id)), false),
        ("page", u32s(l.iter().map(|l| l.page)), false),
        ("line_in_page", u32s(l.iter().map(|l| l.line_in_page)), false),
        ("text", strings(l.iter().map(|l| l.text.as_str())), false),
        ("x0", f32s(l.iter().map(|l| l.bbox.x0)), false),
        ("y0", f32s(l.iter().map(|l| l.bbox.y0)), false),
        ("x1", f32s(l.iter().map(|l| l.bbox.x1)), false),
        ("y1", f32s(l.iter().map(|l| l.bbox.y1)), false),
        (
            "visible",
            Arc::new(BooleanArray::from_iter(l.iter().map(|l| Some(hidden.binary_search(&l.line_id).is_err())))),
            false,
        ),
    ])
}

fn pages_batch(doc: &ParsedDocument) -> Result<RecordBatch, arrow_schema::ArrowError> {
    let p = &doc.pages;
    let mut hashes = ListBuilder::new(StringBuilder::new());
    for page in p {
        for h in &page.decorative_image_hashes {
            hashes.values().append_value(h);
        }
        hashes.append(true);
    }
    batch(vec![
        ("page", u32s(p.iter().map(|p| p.page)), false),
        ("n_lines", u32s(p.iter().map(|p| p.n_lines)), false),
        ("n_chars", u32s(p.iter().map(|p| p.n_chars)), false),
        ("has_text_layer", Arc::new(BooleanArray::from_iter(p.iter().map(|p| Some(p.has_text_layer)))), false),
        ("n_images", u32s(p.iter().map(|p| p.n_images)), false),
        ("n_vector_paths", u32s(p.iter().map(|p| p.n_vector_paths)), false),
        ("has_figure", Arc::new(BooleanArray::from_iter(p.iter().map(|p| Some(p.has_figure)))), false),
        ("figure_kind", Arc::new(StringArray::from_iter(p.iter().map(|p| p.figure_kind.as_deref()))), true),
        ("decorative_image_hashes", Arc::new(hashes.finish()), false),
        ("width", f32s(p.iter().map(|p| p.width)), false),
        ("height", f32s(p.iter().map(|p| p.height)), false),
    ])
}

fn toc_source(source: TocSource) -> &'static str {
    match source {
        TocSource::Outline => "outline",
        TocSource::ContentsPage => "contents_page",
        TocSource::Headings => "headings",
    }
}

fn toc_batch(doc: &ParsedDocument) -> Result<RecordBatch, arrow_schema::ArrowError> {
    let t = &doc.toc;
    batch(vec![
        ("id", u32s(t.iter().map(|t| t.id)), false),
        ("parent", Arc::new(UInt32Array::from_iter(t.iter().map(|t| t.parent))), true),
        ("level", u32s(t.iter().map(|t| t.level)), false),
        ("title", strings(t.iter().map(|t| t.title.as_str())), false),
        ("start_page", u32s(t.iter().map(|t| t.start_page)), false),
        ("end_page", u32s(t.iter().map(|t| t.end_page)), false),
        ("source", strings(t.iter().map(|t| toc_source(t.source))), false),
    ])
}

fn chunks_batch(chunks: &[Chunk]) -> Result<RecordBatch, arrow_schema::ArrowError> {
    let c = chunks;
    batch(vec![
        ("chunk_id", u32s(c.iter().map(|c| c.chunk_id)), false),
        ("line_start", u32s(c.iter().map(|c| c.line_start)), false),
        ("line_end", u32s(c.iter().map(|c| c.line_end)), false),
        ("page_start", u32s(c.iter().map(|c| c.page_start)), false),
        ("page_end", u32s(c.iter().map(|c| c.page_end)), false),
        ("text", strings(c.iter().map(|c| c.text.as_str())), false),
        ("context_header", strings(c.iter().map(|c| c.context_header.as_str())), false),
        ("n_tokens_est", u32s(c.iter().map(|c| c.n_tokens_est)), false),
    ])
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
