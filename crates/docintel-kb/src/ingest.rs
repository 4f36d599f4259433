//! `kb add`: files and folders into the knowledge base. Each file is hashed;
//! one already stored with the same bytes and parser build is skipped; the
//! others are parsed on worker threads (each under `catch_unwind`: a bad file
//! is recorded in the manifest's failures and the rest go on), stored, and
//! indexed. Every [`COMMIT_EVERY`] documents and at the end the index is
//! committed and then the manifest written, so a killed `kb add` loses at
//! most the documents since the last commit. Each stored document's fields
//! are proposed as it is stored (`structured`), and the structured index is
//! rebuilt from them at the end.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use docintel::schema::ParsedDocument;
use docintel::{PARSER_BUILD, ParseOptions};

use crate::error::{KbError, io_error};
use crate::index::{FullText, INDEX, Writer};
use crate::manifest::{self, DocEntry, Failure, Manifest};
use crate::seal::{KbKey, KeyCheck};
use crate::store::{self, DOCS};
use crate::structured::{self, StructuredReport};

/// Documents indexed between two commits.
pub const COMMIT_EVERY: usize = 8;

/// What `kb add` did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct AddReport {
    /// Ids of the documents parsed and stored.
    pub added: Vec<String>,
    /// Ids of the documents already stored with the same bytes (not parsed again).
    pub skipped: Vec<String>,
    /// Ids of earlier versions of an added file, removed.
    pub replaced: Vec<String>,
    /// The files that could not be ingested.
    pub failed: Vec<Failure>,
    /// Whether the knowledge base was of another format and was re-indexed.
    pub reindexed: bool,
    /// The structured index rebuilt after the add: fields kept and dropped.
    pub structured: Option<StructuredReport>,
    /// Wall time, seconds.
    pub seconds: f64,
}

/// One file to ingest.
struct Pending {
    path: PathBuf,
    id: String,
    sha256: String,
}

/// Progress of `kb add`: (files done, files to parse, the file just done).
pub type Progress<'a> = &'a mut dyn FnMut(usize, usize, &Path);

/// Adds `inputs` (files, and the readable documents of folders, not
/// recursive) to the knowledge base in `kb`, creating it when missing. A
/// knowledge base of another format is re-indexed first from the sources its
/// manifest records. `threads` parse in parallel (at least one).
pub fn add(kb: &Path, inputs: &[PathBuf], threads: usize, progress: Progress<'_>) -> Result<AddReport, KbError> {
    add_keyed(kb, inputs, threads, None, progress)
}

/// [`add`] with a tenant's key: a knowledge base created with a key is
/// encrypted (`store`, `seal`) and every later `kb add` needs the same key
/// ([`KbError::KeyRequired`], [`KbError::WrongKey`], checked before anything
/// is written); a key given to a knowledge base created without one is
/// [`KbError::NotEncrypted`].
pub fn add_keyed(
    kb: &Path,
    inputs: &[PathBuf],
    threads: usize,
    key: Option<&KbKey>,
    progress: Progress<'_>,
) -> Result<AddReport, KbError> {
    let started = Instant::now();
    std::fs::create_dir_all(kb).map_err(io_error(kb))?;
    let mut report = AddReport::default();
    let mut inputs = inputs.to_vec();
    let mut manifest = match manifest::load_any(kb) {
        Ok(old) if old.check_format().is_ok() => {
            if old.reading_key(kb, key)?.is_none() && key.is_some() {
                return Err(KbError::NotEncrypted { dir: kb.display().to_string() });
            }
            old
        }
        Ok(old) => {
            // The new format keeps the old one's encryption (and needs its key).
            if old.encryption.is_some() {
                old.reading_key(kb, key)?;
            } else if key.is_some() {
                return Err(KbError::NotEncrypted { dir: kb.display().to_string() });
            }
            // Another format: nothing stored is read; the recorded sources are parsed again.
            tracing::warn!("{}: of another format ({}): re-indexing", kb.display(), old.format_version);
            report.reindexed = true;
            inputs.extend(old.documents.iter().map(|d| PathBuf::from(&d.source)));
            for dir in [DOCS, INDEX] {
                let path = kb.join(dir);
                if path.exists() {
                    std::fs::remove_dir_all(&path).map_err(io_error(&path))?;
                }
            }
            Manifest::new()
        }
        Err(KbError::NotAKb { .. }) => Manifest::new(),
        Err(error) => return Err(error),
    };
    if manifest.encryption.is_none()
        && let Some(key) = key
    {
        manifest.encryption = Some(KeyCheck::new(key)?);
    }
    let text = FullText::open_with(kb, true, key.is_none())?;
    let mut writer = text.writer()?;
    // An empty knowledge base is still one: the manifest exists from here on.
    manifest::save(kb, &manifest)?;

    let mut pending: Vec<Pending> = Vec::new();
    for file in expand(&inputs, &mut report) {
        match classify(kb, &manifest, &file, key.is_some()) {
            Ok(Classified::Stored(id)) => report.skipped.push(id),
            Ok(Classified::New(p)) if !pending.iter().any(|q| q.id == p.id) => pending.push(p),
            Ok(Classified::New(_)) => {}
            Err(failure) => report.failed.push(failure),
        }
    }

    let mut since_commit = 0;
    let mut obsolete = Vec::new();
    let dictionary = docintel::ExpertDictionary::builtin();
    parse_all(&pending, threads.max(1), progress, &mut |p, result| {
        let document = match result {
            Ok(document) => document,
            Err(error) => {
                report.failed.push(Failure { source: p.path.display().to_string(), error });
                return Ok(());
            }
        };
        let entry = store_one(kb, &mut writer, p, &document, key, &dictionary)?;
        // An earlier version of the same file (other bytes) leaves the index in this commit.
        for old in manifest.documents.iter().filter(|d| d.source == entry.source && d.id != entry.id) {
            writer.delete(&old.id);
            obsolete.push(old.id.clone());
        }
        manifest.documents.retain(|d| !(d.source == entry.source && d.id != entry.id));
        report.added.push(entry.id.clone());
        manifest.upsert(entry);
        since_commit += 1;
        if since_commit == COMMIT_EVERY {
            writer.commit()?;
            manifest::save(kb, &manifest)?;
            since_commit = 0;
        }
        Ok(())
    })?;
    for failure in &report.failed {
        manifest.record_failure(failure.clone());
    }
    writer.finish()?;
    manifest::save(kb, &manifest)?;
    for id in &obsolete {
        store::remove_document(kb, id)?;
    }
    report.structured = Some(structured::rebuild(kb, &manifest, key)?);
    report.replaced = obsolete;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// The files named by `inputs`: a file as it is, a folder's readable
/// documents (`docintel::corpus_files`); a path that is neither is a failure.
fn expand(inputs: &[PathBuf], report: &mut AddReport) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for input in inputs {
        let found = if input.is_dir() {
            docintel::corpus_files(input).map_err(|e| e.to_string())
        } else if input.is_file() {
            Ok(vec![input.clone()])
        } else {
            Err(format!("{}: no such file or folder", input.display()))
        };
        match found {
            Ok(found) => files.extend(found.into_iter().map(|f| std::fs::canonicalize(&f).unwrap_or(f))),
            Err(error) => report.failed.push(Failure { source: input.display().to_string(), error }),
        }
    }
    files.dedup();
    files
}

/// A file given to `kb add`.
enum Classified {
    /// Stored already with the same bytes and parser build: its id.
    Stored(String),
    /// To parse.
    New(Pending),
}

/// Whether `file` is stored already, or why it cannot be read.
fn classify(kb: &Path, manifest: &Manifest, file: &Path, sealed: bool) -> Result<Classified, Failure> {
    let bytes = std::fs::read(file).map_err(|e| Failure {
        source: file.display().to_string(),
        error: format!("{}: cannot read: {e}", file.display()),
    })?;
    let sha256 = docintel::content_hash(&bytes);
    let id = docintel::document_folder(Path::new(""), file, &bytes).display().to_string();
    let stored = manifest
        .document(&id)
        .is_some_and(|entry| entry.parser_build == PARSER_BUILD && store::has_document(kb, &id, sealed));
    Ok(if stored { Classified::Stored(id) } else { Classified::New(Pending { path: file.to_owned(), id, sha256 }) })
}

/// One file's parse: the document, or why it could not be read.
type Parsed = Result<ParsedDocument, String>;

/// Parses every pending file on `threads` workers and hands each result to
/// `handle` on this thread as it comes (so at most `threads` parsed documents
/// wait in memory); the first error of `handle` stops the workers.
fn parse_all(
    pending: &[Pending],
    threads: usize,
    progress: Progress<'_>,
    handle: &mut dyn FnMut(&Pending, Parsed) -> Result<(), KbError>,
) -> Result<(), KbError> {
    let next = AtomicUsize::new(0);
    let (sender, receiver) = mpsc::sync_channel(threads);
    std::thread::scope(|scope| {
        for _ in 0..threads.min(pending.len()) {
            let sender = sender.clone();
            let next = &next;
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(p) = pending.get(i) else { break };
                    if sender.send((i, parse_one(&p.path))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        // Owned here: dropped on an early return, so a blocked worker's send fails and it stops.
        let receiver = receiver;
        for (done, (i, result)) in receiver.iter().enumerate() {
            progress(done + 1, pending.len(), &pending[i].path);
            if let Err(error) = handle(&pending[i], result) {
                // Workers see the closed channel after their current file.
                next.store(pending.len(), Ordering::Relaxed);
                return Err(error);
            }
        }
        Ok(())
    })
}

/// One file parsed; an error or a panic (the parser should never panic; this
/// is the second wall) as a message naming the file.
fn parse_one(path: &Path) -> Parsed {
    let parsed = std::panic::catch_unwind(|| docintel::parse_file_with_options(path, &ParseOptions::default()));
    match parsed {
        Ok(Ok(document)) => Ok(document),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!("{}: the parser panicked on this file", path.display())),
    }
}

/// Stores and indexes one parsed document; its manifest entry (without the
/// summary, document text, when encrypted).
fn store_one(
    kb: &Path,
    writer: &mut Writer<'_>,
    p: &Pending,
    document: &ParsedDocument,
    key: Option<&KbKey>,
    dictionary: &docintel::ExpertDictionary,
) -> Result<DocEntry, KbError> {
    store::write_document(kb, &p.id, &p.sha256, document, key)?;
    structured::write_fields(kb, &p.id, &structured::extract(document, dictionary), key)?;
    let name = p.path.file_name().map_or_else(|| p.path.display().to_string(), |n| n.to_string_lossy().into_owned());
    writer.add(&p.id, &name, document)?;
    Ok(DocEntry {
        id: p.id.clone(),
        name,
        source: p.path.display().to_string(),
        sha256: p.sha256.clone(),
        parser_build: PARSER_BUILD.to_owned(),
        pages: document.profile.n_pages.unwrap_or(0),
        lines: document.lines.len() as u32,
        summary: if key.is_some() { None } else { document.profile.summary.clone() },
    })
}
