//! The full-text index (tantivy, `<kb>/index/`): one index document per
//! stored document — its id (stored), file name and the text of its visible
//! lines — ranked by BM25 to route a question to the few
//! documents worth opening. Writes go through one `IndexWriter` (tantivy's
//! lock file refuses a second writer) and become visible at `commit`; a
//! reader sees the last commit, so `kb ask` during `kb add` is safe and a
//! killed `kb add` leaves the last commit.
//!
//! In an encrypted knowledge base the body is indexed without positions
//! (terms and their frequencies only), so the index cannot give back the
//! text's word order; a keyword of several words then asks for all its words
//! in the body instead of the phrase.

use std::path::{Path, PathBuf};

use docintel::schema::ParsedDocument;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, DisjunctionMaxQuery, Occur, PhraseQuery, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, STORED, STRING, Schema, TEXT, TextFieldIndexing, TextOptions, Value};
use tantivy::{Index, IndexWriter, ReloadPolicy, TantivyDocument, TantivyError, Term};

use crate::error::{KbError, io_error};

/// The index folder in a knowledge base.
pub(crate) const INDEX: &str = "index";

/// The writer's memory budget (tantivy's minimum per thread is 15 MB).
const WRITER_HEAP: usize = 50_000_000;

/// Field weights: a keyword in the file name says most about which document
/// answers. The summary and TOC titles are left out: short fields score a
/// match high, and the section names every filing shares ("statements of cash
/// flows") then outweighed the company the question names (FinanceBench, 111
/// questions: the evidence document among the 3 candidates 62 times with them
/// at boosts 2 and 1.5, 94 at 0.5, 96 without; they are in the body anyway).
const FIELD_BOOSTS: [(&str, f32); 2] = [("name", 3.0), ("body", 1.0)];

/// The index's fields.
#[derive(Debug, Clone, Copy)]
struct Fields {
    id: Field,
    name: Field,
    body: Field,
}

/// The schema; `positions` false for an encrypted knowledge base (the body's
/// terms and frequencies only).
fn schema(positions: bool) -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let id = builder.add_text_field("id", STRING | STORED);
    let name = builder.add_text_field("name", TEXT);
    let body = if positions {
        builder.add_text_field("body", TEXT)
    } else {
        let indexing =
            TextFieldIndexing::default().set_tokenizer("default").set_index_option(IndexRecordOption::WithFreqs);
        builder.add_text_field("body", TextOptions::default().set_indexing_options(indexing))
    };
    (builder.build(), Fields { id, name, body })
}

/// An opened full-text index.
pub(crate) struct FullText {
    index: Index,
    fields: Fields,
    dir: PathBuf,
    /// Whether the body has positions (phrases); not in an encrypted knowledge base.
    positions: bool,
}

/// A search hit: the document id and its BM25 score.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Hit {
    pub(crate) id: String,
    pub(crate) score: f32,
}

impl FullText {
    /// Opens `<kb>/index`, creating an empty index when `create` and there
    /// is none (with positions: not encrypted).
    pub(crate) fn open(kb: &Path, create: bool) -> Result<FullText, KbError> {
        FullText::open_with(kb, create, true)
    }

    /// [`FullText::open`]; a new index has body positions when `positions`,
    /// an existing one keeps its own.
    pub(crate) fn open_with(kb: &Path, create: bool, positions: bool) -> Result<FullText, KbError> {
        let dir = kb.join(INDEX);
        let index = if dir.join("meta.json").is_file() {
            Index::open_in_dir(&dir)
        } else if create {
            std::fs::create_dir_all(&dir).map_err(io_error(&dir))?;
            Index::create_in_dir(&dir, schema(positions).0)
        } else {
            return Err(KbError::Corrupt { path: dir.display().to_string(), reason: "no full-text index".into() });
        }
        .map_err(index_error(&dir))?;
        // The fields as the index on disk numbers them (the same names, or not ours).
        let on_disk = index.schema();
        let positions = body_positions(&on_disk).unwrap_or(positions);
        let (schema, fields) = schema(positions);
        let same = schema
            .fields()
            .all(|(_, entry)| on_disk.get_field(entry.name()).ok() == schema.get_field(entry.name()).ok())
            && on_disk.num_fields() == schema.num_fields();
        if !same {
            return Err(KbError::Corrupt {
                path: dir.display().to_string(),
                reason: "a full-text index of another layout (remove the folder and add the files again)".into(),
            });
        }
        Ok(FullText { index, fields, dir, positions })
    }

    /// The writer (one at a time per knowledge base: [`KbError::Busy`] otherwise).
    pub(crate) fn writer(&self) -> Result<Writer<'_>, KbError> {
        let writer = self.index.writer_with_num_threads(1, WRITER_HEAP).map_err(|e| match e {
            TantivyError::LockFailure(..) => KbError::Busy { dir: self.dir.display().to_string() },
            e => index_error(&self.dir)(e),
        })?;
        Ok(Writer { writer, text: self })
    }

    /// The `limit` best documents for the weighted keywords (a keyword of
    /// several words is a phrase), best first.
    pub(crate) fn search(&self, keywords: &[(String, f32)], limit: usize) -> Result<Vec<Hit>, KbError> {
        let error = index_error(&self.dir);
        let mut fields = Vec::new();
        for (name, boost) in FIELD_BOOSTS {
            let field = self.index.schema().get_field(name).map_err(&error)?;
            let phrases = self.positions || field != self.fields.body;
            fields.push((field, boost, phrases, self.index.tokenizer_for_field(field).map_err(&error)?));
        }
        // One clause per keyword: its best field counts (a phrase in the
        // file name and in the body is one match, not two).
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (keyword, weight) in keywords {
            let mut disjuncts: Vec<Box<dyn Query>> = Vec::new();
            for (field, boost, phrases, analyzer) in &mut fields {
                let mut terms = Vec::new();
                let mut stream = analyzer.token_stream(keyword);
                while stream.advance() {
                    terms.push(Term::from_field_text(*field, &stream.token().text));
                }
                let query: Box<dyn Query> = match terms.len() {
                    0 => continue,
                    1 => Box::new(TermQuery::new(terms.remove(0), IndexRecordOption::WithFreqs)),
                    _ if *phrases => Box::new(PhraseQuery::new(terms)),
                    _ => Box::new(BooleanQuery::new(
                        terms
                            .into_iter()
                            .map(|t| -> (Occur, Box<dyn Query>) {
                                (Occur::Must, Box::new(TermQuery::new(t, IndexRecordOption::WithFreqs)))
                            })
                            .collect(),
                    )),
                };
                disjuncts.push(Box::new(BoostQuery::new(query, *boost)));
            }
            if !disjuncts.is_empty() {
                let best = DisjunctionMaxQuery::new(disjuncts);
                clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(best), weight.max(0.1)))));
            }
        }
        if clauses.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let query = BooleanQuery::new(clauses);
        let reader = self.index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into().map_err(&error)?;
        let searcher = reader.searcher();
        let top = searcher.search(&query, &TopDocs::with_limit(limit).order_by_score()).map_err(&error)?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, address) in top {
            let document: TantivyDocument = searcher.doc(address).map_err(&error)?;
            if let Some(id) = document.get_first(self.fields.id).and_then(|v| v.as_str()) {
                hits.push(Hit { id: id.to_owned(), score });
            }
        }
        Ok(hits)
    }

    /// Every document id in the last commit (tests and checks).
    pub(crate) fn ids(&self) -> Result<Vec<String>, KbError> {
        let error = index_error(&self.dir);
        let reader = self.index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into().map_err(&error)?;
        let searcher = reader.searcher();
        let mut ids = Vec::new();
        for segment in searcher.segment_readers() {
            let store = segment.get_store_reader(1).map_err(|e| error(e.into()))?;
            for doc in segment.doc_ids_alive() {
                let document: TantivyDocument = store.get(doc).map_err(&error)?;
                ids.extend(document.get_first(self.fields.id).and_then(|v| v.as_str()).map(str::to_owned));
            }
        }
        ids.sort();
        Ok(ids)
    }
}

/// The index's writer: adds and deletes become visible together at [`Writer::commit`].
pub(crate) struct Writer<'a> {
    writer: IndexWriter,
    text: &'a FullText,
}

impl Writer<'_> {
    /// Indexes `document` under `id` (any earlier version of `id` is deleted first).
    pub(crate) fn add(&mut self, id: &str, name: &str, document: &ParsedDocument) -> Result<(), KbError> {
        let fields = self.text.fields;
        self.delete(id);
        let mut indexed = TantivyDocument::default();
        indexed.add_text(fields.id, id);
        indexed.add_text(fields.name, name.replace(['_', '-', '.'], " "));
        let invisible = document.invisible_lines();
        let body: Vec<&str> = document
            .lines
            .iter()
            .filter(|l| invisible.binary_search(&l.line_id).is_err())
            .map(|l| l.text.as_str())
            .collect();
        indexed.add_text(fields.body, body.join("\n"));
        self.writer.add_document(indexed).map_err(index_error(&self.text.dir))?;
        Ok(())
    }

    /// Deletes the document `id` (at the next commit).
    pub(crate) fn delete(&mut self, id: &str) {
        self.writer.delete_term(Term::from_field_text(self.text.fields.id, id));
    }

    /// Makes every add and delete so far visible to readers, atomically.
    pub(crate) fn commit(&mut self) -> Result<(), KbError> {
        self.writer.commit().map(|_| ()).map_err(index_error(&self.text.dir))
    }

    /// Commits and waits for the merges, releasing the lock.
    pub(crate) fn finish(mut self) -> Result<(), KbError> {
        self.commit()?;
        self.writer.wait_merging_threads().map_err(index_error(&self.text.dir))
    }
}

/// Whether the index of `schema` has body positions.
fn body_positions(schema: &Schema) -> Option<bool> {
    let body = schema.get_field("body").ok()?;
    match schema.get_field_entry(body).field_type() {
        tantivy::schema::FieldType::Str(options) => {
            Some(options.get_indexing_options()?.index_option() == IndexRecordOption::WithFreqsAndPositions)
        }
        _ => None,
    }
}

fn index_error(dir: &Path) -> impl Fn(TantivyError) -> KbError + '_ {
    move |source| KbError::Index { dir: dir.display().to_string(), source }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_writer_at_a_time_and_readers_see_the_last_commit() {
        let kb = docintel_test_support::temp_dir("kb-index");
        let text = FullText::open(kb.path(), true).unwrap();
        let document = docintel::parse_file(&docintel_test_support::invoice("saeco.pdf")).unwrap();
        let mut writer = text.writer().unwrap();
        assert!(matches!(text.writer(), Err(KbError::Busy { .. })), "a second writer is refused");
        writer.add("saeco-1", "saeco.pdf", &document).unwrap();
        let keywords = [("saeco".to_owned(), 1.0)];
        assert!(text.search(&keywords, 3).unwrap().is_empty(), "not committed, not seen");
        writer.commit().unwrap();
        assert_eq!(text.search(&keywords, 3).unwrap()[0].id, "saeco-1");
        writer.delete("saeco-1");
        writer.finish().unwrap();
        assert!(text.ids().unwrap().is_empty());
        assert!(text.writer().is_ok(), "the lock is released");
    }

    #[test]
    fn without_positions_a_phrase_asks_for_all_its_words() {
        let kb = docintel_test_support::temp_dir("kb-index-nopos");
        let text = FullText::open_with(kb.path(), true, false).unwrap();
        let document = docintel::parse_file(&docintel_test_support::invoice("saeco.pdf")).unwrap();
        let mut writer = text.writer().unwrap();
        writer.add("saeco-1", "saeco.pdf", &document).unwrap();
        writer.finish().unwrap();
        let reopened = FullText::open(kb.path(), false).unwrap();
        assert!(!reopened.positions, "the layout on disk wins");
        let phrase = [("saeco invoice".to_owned(), 1.0)];
        assert_eq!(reopened.search(&phrase, 3).unwrap()[0].id, "saeco-1");
    }
}
