//! Writing a parsed document's four Parquet tables and `profile.json` (see
//! [`crate::output`] for the folder and its files). Only with the `parquet`
//! feature (on by default): arrow and parquet are about a quarter of a cold
//! build of the workspace, and only `docintel parse --out` writes tables.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, BooleanArray, Float32Array, RecordBatch, StringArray, UInt32Array};
use arrow_schema::{Field, Schema};
use docintel_schema::{Chunk, ParsedDocument, TocSource};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::output::{DOCUMENT_FILES, DocumentFolder, OutputError, PARSER_BUILD};

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
        ("source", strings(l.iter().map(|l| doc.line_source(l.line_id).as_str())), false),
        ("ocr_confidence", Arc::new(Float32Array::from_iter(l.iter().map(|l| doc.ocr_confidence(l.line_id)))), true),
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
