//! The structured index: one row per document, built from the fields the
//! documents already print as label and value ("Invoice Number: 42183017",
//! "Sum Insured: INR 10,00,000"), so counting, filtering and grouping
//! questions are answered over every document (`tabulate`) instead of the
//! few passages a search finds.
//!
//! Fields are proposed by reading each document's first [`HEADER_PAGES`]
//! pages ([`extract`]): a line `Label: value`, or a line `Label:` and the
//! line printed right of it on the same row (else the next line). A label is
//! one to [`MAX_LABEL_WORDS`] words of letters; it is named by the concept of
//! the question brick's expert dictionary it holds ("Invoice No" and
//! "Invoice Number" are both `invoice_number`, "Sum Insured" is
//! `coverage_limit`), else by itself, folded. The value is the text after
//! the colon, copied character for character from its line, with its page
//! and line id; nothing is generated or rewritten. The first occurrence of a
//! field in a document wins.
//!
//! Then the proposals are checked against the whole collection ([`build`]):
//! a field is kept only when at least a fifth of the knowledge base's
//! documents hold it (and at least two: a field of one document is shared by
//! none); the others are dropped and reported ([`StructuredReport`]),
//! because filtering on them would silently leave out the rest. When no
//! field is kept the knowledge base has no structured index and says so;
//! the rows (document, type, first line) still answer "How many documents".
//!
//! Storage: every document's proposals are `docs/<id>/fields.json` (written
//! when it is stored, so a rebuild reads no document again); the index is
//! `structured.jsonl` (the rows; duckdb: `read_json_auto('KB/structured.jsonl')`)
//! and `structured.json` (the report), rebuilt after every `kb add` and `kb
//! remove`. Field values are document text: in an encrypted knowledge base
//! they are `docs/<id>/fields.sealed` and `structured.sealed` (one sealed
//! record each, bound to what it is), and no plaintext table is written.

use std::collections::BTreeMap;
use std::path::Path;

use docintel::ExpertDictionary;
use docintel::schema::rows::on_one_row;
use docintel::schema::{Line, ParsedDocument};
use serde::{Deserialize, Serialize};

use crate::error::{KbError, io_error};
use crate::manifest::{Manifest, write_atomic};
use crate::seal::KbKey;
use crate::store;

/// The rows of the structured index, one JSON object per line.
pub const STRUCTURED_TABLE: &str = "structured.jsonl";
/// What the structured index kept and dropped.
pub const STRUCTURED_REPORT: &str = "structured.json";
/// Both, sealed, in an encrypted knowledge base.
pub const STRUCTURED_SEALED: &str = "structured.sealed";
/// A document's proposed fields, in its folder.
const FIELDS_JSON: &str = "fields.json";
/// The same, sealed.
const FIELDS_SEALED: &str = "fields.sealed";

/// Pages read for fields: a document's header fields are on its first pages.
pub const HEADER_PAGES: u32 = 2;
/// Longest label, in words; longer text before a colon is a sentence.
pub const MAX_LABEL_WORDS: usize = 5;
/// A field is kept when at least 1/`SHARE_DIVISOR` of the documents hold it.
pub const SHARE_DIVISOR: usize = 5;

/// One field's value in one document, as printed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldValue {
    /// The label as printed (`Invoice Number`); empty for a document's first line.
    pub label: String,
    /// The value, copied character for character from its line.
    pub value: String,
    /// Page (1-based).
    pub page: u32,
    /// Global line id of the line holding the value.
    pub line_id: u32,
}

/// What [`extract`] proposes for one document.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DocFields {
    /// The profile's document type (`invoice`, `policy`, ...).
    pub doc_type: Option<String>,
    /// The first visible line with a letter: what a count cites for a
    /// document no condition names.
    pub first_line: Option<FieldValue>,
    /// Field name → its first value.
    pub fields: BTreeMap<String, FieldValue>,
}

/// One row of the structured index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructuredRow {
    /// The document's id.
    pub document_id: String,
    /// Its file name.
    pub name: String,
    /// Its document type.
    pub doc_type: Option<String>,
    /// Its first line (see [`DocFields::first_line`]).
    pub first_line: Option<FieldValue>,
    /// The kept fields it holds.
    pub fields: BTreeMap<String, FieldValue>,
}

/// A field and how many documents hold it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldCount {
    /// The field's name.
    pub field: String,
    /// Documents holding it.
    pub documents: usize,
}

/// What the structured index kept and dropped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructuredReport {
    /// Documents in the knowledge base.
    pub documents: usize,
    /// Documents a field must be found in to be kept (a fifth, at least 2).
    pub min_documents: usize,
    /// Fields kept, most shared first.
    pub kept: Vec<FieldCount>,
    /// Fields found in fewer documents, dropped, most shared first.
    pub dropped: Vec<FieldCount>,
}

impl StructuredReport {
    /// Whether there is a structured index (a field was kept).
    pub fn has_index(&self) -> bool {
        !self.kept.is_empty()
    }

    /// One line for people: the fields kept, or that there is no index.
    pub fn summary(&self) -> String {
        let list = |fields: &[FieldCount]| {
            fields.iter().map(|f| format!("{} ({}/{})", f.field, f.documents, self.documents)).collect::<Vec<_>>()
        };
        let mut out = if self.has_index() {
            format!("structured index: {}", list(&self.kept).join(", "))
        } else {
            format!(
                "no structured index: no field is shared by {} of the {} document(s)",
                self.min_documents, self.documents
            )
        };
        if !self.dropped.is_empty() {
            let dropped = list(&self.dropped);
            let shown = dropped.len().min(12);
            out.push_str(&format!(
                "; dropped (in fewer than {} documents): {}{}",
                self.min_documents,
                dropped[..shown].join(", "),
                if dropped.len() > shown { format!(" and {} more", dropped.len() - shown) } else { String::new() }
            ));
        }
        out
    }
}

/// The structured index: its report and rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructuredIndex {
    /// What was kept and dropped.
    pub report: StructuredReport,
    /// One row per document, in the manifest's order.
    pub rows: Vec<StructuredRow>,
}

/// The label and the value of `text` when it reads `Label: value`, with the
/// value's byte offset; a label alone (`Label:`) gives an empty value.
fn split_label(text: &str) -> Option<(&str, usize)> {
    let colon = text.find(':')?;
    let label = text[..colon].trim();
    let n_words = label.split_whitespace().count();
    let label_like = label.chars().any(char::is_alphabetic)
        && label.chars().all(|c| c.is_alphabetic() || matches!(c, ' ' | '-' | '.' | '#' | '&' | '\'' | '/' | '°'));
    if !label_like || !(1..=MAX_LABEL_WORDS).contains(&n_words) {
        return None;
    }
    let rest = &text[colon + 1..];
    // A time or a URL is no label ("10:30", "https://").
    if rest.starts_with("//") {
        return None;
    }
    let start = colon + 1 + (rest.len() - rest.trim_start().len());
    Some((label, start))
}

/// Words of a text, folded.
fn folded_words(text: &str) -> Vec<String> {
    docintel::schema::text::normalize(text)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The field name of a label: the expert dictionary's concept whose keyword
/// makes at least two thirds of the label's words ("Invoice No",
/// "Total Amount Due"; not "VAT/TIN" nor "Uw BTW nummer"), else the label
/// folded, its words joined by `_`.
pub(crate) fn field_name(label: &str, dictionary: &ExpertDictionary) -> String {
    let words = folded_words(label);
    if let Some((concept, keyword)) = dictionary.concept_named_in(label)
        && 3 * folded_words(keyword).len() >= 2 * words.len()
    {
        return concept.to_owned();
    }
    words.join("_")
}

/// Whether `line` has a layout box (formats without layout have none).
fn has_box(line: &Line) -> bool {
    line.bbox.x1 > line.bbox.x0 && line.bbox.y1 > line.bbox.y0
}

/// The line holding the value of the label `lines[i]` (a label alone on its
/// line): the first of the next lines printed on its row to its right, else
/// the first below it in its column (a header table: labels on one row,
/// values under them), within [`VALUE_LOOKAHEAD`] lines; without layout,
/// the next line.
fn value_line<'l>(lines: &[&'l Line], i: usize) -> Option<&'l Line> {
    let label = lines[i];
    let next = lines.iter().skip(i + 1).take(VALUE_LOOKAHEAD).filter(|l| l.page == label.page);
    if !has_box(label) {
        return lines.get(i + 1).copied().filter(|l| l.page == label.page);
    }
    let right = next.clone().find(|l| on_one_row(label, l) && l.bbox.x0 >= label.bbox.x1 - 1.0);
    right
        .or_else(|| {
            next.filter(|l| !on_one_row(label, l))
                .find(|l| l.bbox.x0 < label.bbox.x1 && l.bbox.x1 > label.bbox.x0 && l.bbox.y1 <= label.bbox.y0 + 1.0)
        })
        .copied()
}

/// Lines read after a label for its value.
const VALUE_LOOKAHEAD: usize = 8;

/// The fields `document` prints on its first pages (see the module docs).
pub fn extract(document: &ParsedDocument, dictionary: &ExpertDictionary) -> DocFields {
    let document = document.answerable();
    let lines: Vec<&Line> = document.lines.iter().filter(|l| l.page <= HEADER_PAGES).collect();
    let mut out = DocFields { doc_type: document.profile.doc_type.clone(), ..DocFields::default() };
    out.first_line = lines.iter().find(|l| l.text.chars().any(char::is_alphabetic)).map(|l| FieldValue {
        label: String::new(),
        value: l.text.trim().to_owned(),
        page: l.page,
        line_id: l.line_id,
    });
    for (i, line) in lines.iter().enumerate() {
        let (label, value, source, concept) = match split_label(&line.text) {
            Some((label, start)) => {
                let own = line.text[start..].trim_end();
                if own.is_empty() {
                    // `Label:` alone: the value is printed beside or under it.
                    match value_line(&lines, i) {
                        Some(next) if split_label(&next.text).is_none() => (label, next.text.trim(), next, None),
                        _ => continue,
                    }
                } else {
                    (label, own, *line, None)
                }
            }
            // No colon: a line opening with a dictionary keyword ("TOTAL
            // AMOUNT DUE ON …", "Factuur datum") labels the value printed
            // beside it (or under it, when the line is the label alone).
            None => {
                let words = folded_words(&line.text);
                let Some((concept, keyword)) = dictionary.concept_named_in(&line.text) else { continue };
                let keyword_words = folded_words(keyword);
                if !words.starts_with(&keyword_words) || words.len() > MAX_LABEL_WORDS + 3 {
                    continue;
                }
                let Some(next) = value_line(&lines, i) else { continue };
                let beside = has_box(line) && on_one_row(line, next);
                let alone = 3 * keyword_words.len() >= 2 * words.len();
                if !(beside || alone)
                    || split_label(&next.text).is_some()
                    || !next.text.chars().any(|c| c.is_ascii_digit())
                {
                    continue;
                }
                (line.text.trim(), next.text.trim(), next, Some(concept))
            }
        };
        if value.is_empty() || !value.chars().any(char::is_alphanumeric) {
            continue;
        }
        let name = concept.map_or_else(|| field_name(label, dictionary), str::to_owned);
        if name.is_empty() {
            continue;
        }
        out.fields.entry(name).or_insert_with(|| FieldValue {
            label: label.to_owned(),
            value: value.to_owned(),
            page: source.page,
            line_id: source.line_id,
        });
    }
    out
}

/// Associated data of a sealed fields file or of the sealed index.
fn associated_data(what: Option<&str>) -> Vec<u8> {
    match what {
        Some(id) => format!("docintel-kb/doc/{id}/fields"),
        None => "docintel-kb/structured".to_owned(),
    }
    .into_bytes()
}

fn encode<T: Serialize>(value: &T, path: &Path) -> Result<Vec<u8>, KbError> {
    serde_json::to_vec(value)
        .map_err(|e| KbError::Corrupt { path: path.display().to_string(), reason: format!("cannot encode: {e}") })
}

/// Writes a document's proposed fields beside it (sealed with `key`).
pub(crate) fn write_fields(kb: &Path, id: &str, fields: &DocFields, key: Option<&KbKey>) -> Result<(), KbError> {
    let dir = store::document_dir(kb, id);
    match key {
        Some(key) => {
            let path = dir.join(FIELDS_SEALED);
            write_atomic(&path, &key.seal(&encode(fields, &path)?, &associated_data(Some(id)))?)
        }
        None => {
            let path = dir.join(FIELDS_JSON);
            write_atomic(&path, &encode(fields, &path)?)
        }
    }
}

/// A document's proposed fields: its fields file, else (a document stored
/// before it, or a `kb add` killed between the two) read from the stored
/// document.
fn read_fields(kb: &Path, id: &str, key: Option<&KbKey>, dictionary: &ExpertDictionary) -> Result<DocFields, KbError> {
    let dir = store::document_dir(kb, id);
    let path = dir.join(if key.is_some() { FIELDS_SEALED } else { FIELDS_JSON });
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(extract(&store::read_document(kb, id, key)?, dictionary));
        }
        Err(e) => return Err(io_error(&path)(e)),
    };
    let corrupt = |reason: String| KbError::Corrupt { path: path.display().to_string(), reason };
    let plain = match key {
        Some(key) => key
            .open(&bytes, &associated_data(Some(id)))
            .ok_or_else(|| corrupt("does not open: altered, moved or another key".into()))?,
        None => bytes,
    };
    serde_json::from_slice(&plain).map_err(|e| corrupt(e.to_string()))
}

/// The structured index of the manifest's documents (see the module docs).
pub(crate) fn build(kb: &Path, manifest: &Manifest, key: Option<&KbKey>) -> Result<StructuredIndex, KbError> {
    let dictionary = ExpertDictionary::builtin();
    let mut proposals = Vec::with_capacity(manifest.documents.len());
    for entry in &manifest.documents {
        proposals.push((entry, read_fields(kb, &entry.id, key, &dictionary)?));
    }
    let n = proposals.len();
    let min_documents = n.div_ceil(SHARE_DIVISOR).max(2);
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, fields) in &proposals {
        for name in fields.fields.keys() {
            *counts.entry(name.as_str()).or_default() += 1;
        }
    }
    let mut ranked: Vec<FieldCount> = counts
        .iter()
        .map(|(field, documents)| FieldCount { field: (*field).to_owned(), documents: *documents })
        .collect();
    ranked.sort_by(|a, b| b.documents.cmp(&a.documents).then_with(|| a.field.cmp(&b.field)));
    let (kept, dropped): (Vec<FieldCount>, Vec<FieldCount>) =
        ranked.into_iter().partition(|f| f.documents >= min_documents);
    let rows = proposals
        .into_iter()
        .map(|(entry, mut fields)| {
            fields.fields.retain(|name, _| kept.iter().any(|k| &k.field == name));
            StructuredRow {
                document_id: entry.id.clone(),
                name: entry.name.clone(),
                doc_type: fields.doc_type,
                first_line: fields.first_line,
                fields: fields.fields,
            }
        })
        .collect();
    Ok(StructuredIndex { report: StructuredReport { documents: n, min_documents, kept, dropped }, rows })
}

/// Rebuilds and writes the structured index of the manifest's documents;
/// returns its report.
pub(crate) fn rebuild(kb: &Path, manifest: &Manifest, key: Option<&KbKey>) -> Result<StructuredReport, KbError> {
    let index = build(kb, manifest, key)?;
    match key {
        Some(key) => {
            let path = kb.join(STRUCTURED_SEALED);
            write_atomic(&path, &key.seal(&encode(&index, &path)?, &associated_data(None))?)?;
        }
        None => {
            let mut table = Vec::new();
            for row in &index.rows {
                table.extend(encode(row, &kb.join(STRUCTURED_TABLE))?);
                table.push(b'\n');
            }
            write_atomic(&kb.join(STRUCTURED_TABLE), &table)?;
            let path = kb.join(STRUCTURED_REPORT);
            let report = serde_json::to_vec_pretty(&index.report)
                .map_err(|e| KbError::Corrupt { path: path.display().to_string(), reason: e.to_string() })?;
            write_atomic(&path, &report)?;
        }
    }
    Ok(index.report)
}

/// The structured index as last written; built in memory (nothing written)
/// when the knowledge base has none yet, so a question never waits for a
/// `kb add`, or when it does not hold exactly the manifest's documents.
pub(crate) fn load(kb: &Path, manifest: &Manifest, key: Option<&KbKey>) -> Result<StructuredIndex, KbError> {
    let stored =
        match key {
            Some(key) => {
                let path = kb.join(STRUCTURED_SEALED);
                match std::fs::read(&path) {
                    Ok(bytes) => {
                        let plain = key.open(&bytes, &associated_data(None)).ok_or_else(|| KbError::Corrupt {
                            path: path.display().to_string(),
                            reason: "does not open: altered or another key".into(),
                        })?;
                        Some(serde_json::from_slice::<StructuredIndex>(&plain).map_err(|e| KbError::Corrupt {
                            path: path.display().to_string(),
                            reason: e.to_string(),
                        })?)
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                    Err(e) => return Err(io_error(&path)(e)),
                }
            }
            None => match (report(kb)?, std::fs::read_to_string(kb.join(STRUCTURED_TABLE))) {
                (Some(report), Ok(text)) => {
                    let path = kb.join(STRUCTURED_TABLE);
                    let rows = text
                        .lines()
                        .filter(|l| !l.trim().is_empty())
                        .map(serde_json::from_str)
                        .collect::<Result<Vec<StructuredRow>, _>>()
                        .map_err(|e| KbError::Corrupt { path: path.display().to_string(), reason: e.to_string() })?;
                    Some(StructuredIndex { report, rows })
                }
                _ => None,
            },
        };
    // Stale (a killed `kb add`, a `kb remove` of an encrypted knowledge
    // base) or missing: built again in memory.
    let current = |index: &StructuredIndex| {
        index.rows.len() == manifest.documents.len()
            && index.rows.iter().zip(&manifest.documents).all(|(row, entry)| row.document_id == entry.id)
    };
    match stored {
        Some(index) if current(&index) => Ok(index),
        _ => build(kb, manifest, key),
    }
}

/// Removes the written structured index (the next question builds it in memory).
pub(crate) fn forget(kb: &Path) -> Result<(), KbError> {
    for name in [STRUCTURED_SEALED, STRUCTURED_TABLE, STRUCTURED_REPORT] {
        let path = kb.join(name);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io_error(&path)(e)),
            _ => {}
        }
    }
    Ok(())
}

/// The report of the structured index of a plain knowledge base, as last
/// written (`None` when there is none yet, or the knowledge base is
/// encrypted: its report is sealed with the index).
pub fn report(kb: &Path) -> Result<Option<StructuredReport>, KbError> {
    let path = kb.join(STRUCTURED_REPORT);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| KbError::Corrupt { path: path.display().to_string(), reason: e.to_string() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(&path)(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(texts: &[&str]) -> ParsedDocument {
        docintel_test_support::pages(&[texts]).build()
    }

    #[test]
    fn labels_and_values_are_read_as_printed_with_their_line() {
        let dictionary = ExpertDictionary::builtin();
        let doc = document(&[
            "ACME Ltd",
            "Invoice No.: INV-0042",
            "Date of issue:",
            "12 March 2023",
            "Sum Insured: INR 10,00,000",
            "Meeting at 10:30 today",
            "see https://example.com",
            "Invoice Number: 99",
        ]);
        let fields = extract(&doc, &dictionary);
        let got: Vec<(&str, &str, &str, u32)> =
            fields.fields.iter().map(|(k, v)| (k.as_str(), v.label.as_str(), v.value.as_str(), v.line_id)).collect();
        assert_eq!(
            got,
            [
                ("coverage_limit", "Sum Insured", "INR 10,00,000", 5),
                ("invoice_date", "Date of issue", "12 March 2023", 4),
                ("invoice_number", "Invoice No.", "INV-0042", 2),
            ],
            "the first value of a field wins; times and URLs are no labels"
        );
        for value in fields.fields.values() {
            assert!(doc.lines[value.line_id as usize - 1].text.contains(&value.value), "copied from its line");
        }
        assert_eq!(fields.first_line.unwrap().value, "ACME Ltd");
        assert_eq!(field_name("Policy Holder", &dictionary), "policy_holder");
    }
}
