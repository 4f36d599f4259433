//! Builders shared by the crate's unit tests: a document from the texts of
//! its pages, a question from its keywords, an identifier keyword, filler
//! lines, a TOC entry, a one-line passage, and a retrieval run that checks
//! what every retrieval promises.

use docintel_schema::{
    Keyword, KeywordSource, NullSink, ParsedDocument, ParsedQuestion, Passage, Retrieval, Retriever, TocEntry,
    TocSource,
};

use crate::{KeywordRetriever, RetrieveConfig};

/// One slice of line texts per page (the shared test builder, with a page table).
pub(crate) fn document(pages: &[&[&str]]) -> ParsedDocument {
    docintel_test_support::pages(pages).build()
}

pub(crate) fn question(keywords: &[&str], answer_type: &str, pages: &[u32]) -> ParsedQuestion {
    let mut q = ParsedQuestion::unparsed("test", "test");
    q.keywords = keywords.iter().map(|k| Keyword::direct(*k)).collect();
    q.answer_type = answer_type.to_owned();
    q.retrieval.pages = pages.to_vec();
    q
}

/// Retrieval with a window of 1 line and a reserve of 5, checking that each
/// passage holds its anchor line and stays on its page.
pub(crate) fn check(doc: &ParsedDocument, q: &ParsedQuestion, top_k: usize) -> Retrieval {
    let retriever = KeywordRetriever::new(RetrieveConfig { top_k, window: 1, reserve: 5, read_pages_whole: false });
    let retrieval = retriever.retrieve(q, doc, &mut NullSink).unwrap();
    for p in &retrieval.passages {
        assert!(p.line_start <= p.anchor_line && p.anchor_line <= p.line_end);
        let lines = doc.line_range(p.line_start, p.line_end);
        assert!(lines.iter().all(|l| l.page == p.page), "passage crosses a page: {p:?}");
    }
    retrieval
}

/// Adds the exact identifier `text` to the question's keywords.
pub(crate) fn anchor(q: &mut ParsedQuestion, text: &str) {
    q.keywords.push(Keyword {
        text: text.into(),
        weight: 3.0,
        source: KeywordSource::Anchor,
        is_regex: false,
        semantic_group: None,
    });
}

/// `n` distinct lines of `text`.
pub(crate) fn filler(n: usize, text: &str) -> Vec<String> {
    (0..n).map(|i| format!("{text} {i}")).collect()
}

/// An outline TOC entry.
pub(crate) fn toc_entry(id: u32, parent: Option<u32>, level: u32, title: &str, pages: (u32, u32)) -> TocEntry {
    TocEntry {
        id,
        parent,
        level,
        title: title.to_owned(),
        start_page: pages.0,
        end_page: pages.1,
        source: TocSource::Outline,
    }
}

/// A passage of one line, `line`, on `page`, scored 1.
pub(crate) fn one_line(page: u32, line: u32, pinned: bool) -> Passage {
    Passage { line_start: line, line_end: line, page, score: 1.0, anchor_line: line, matched_keywords: vec![], pinned }
}
