//! Row runs and normalised lines per document, computed once.
//!
//! Matching runs on the [`normalize`]d lines of the document's [`RowView`]
//! (the pieces of one printed line joined: a label and its value, a control
//! id and its title), so a question's words still meet on one line after the
//! parser split the row at its tab-stop gaps. Normalising every line of a
//! 300-page document again for each question (and again for the TOC walk and
//! the coverage pass) dominated retrieval time, so a retriever keeps the
//! view and normalised lines of the last few documents it saw, keyed by a fingerprint
//! of the document (its source, its line count and a hash of every line's
//! page and text, and which lines are invisible): a changed document never reuses stale
//! lines. Lines the parser marked invisible (`ParsedDocument::invisible_lines`) are matched
//! as empty.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use docintel_schema::text::normalize;
use docintel_schema::{ParsedDocument, RowView};

use super::page_index::PageIndex;

/// Documents whose normalised lines are kept.
const CACHED_DOCUMENTS: usize = 4;

/// The normalised text of every line of a row view, by line index.
pub(crate) type NormalizedLines = Arc<Vec<String>>;

/// A document's row view, its normalised lines and its page index
/// (`page_index.rs`, every question reads it).
pub(crate) type Rows = (Arc<RowView<'static>>, NormalizedLines, Arc<PageIndex>);

/// A small most-recently-used cache of normalised lines, shared by clones of
/// a retriever.
#[derive(Debug, Clone, Default)]
pub(crate) struct LineCache {
    entries: Arc<Mutex<Vec<(u64, Rows)>>>,
}

/// A fingerprint of the document's text: source, line count, and every
/// line's page and text.
fn fingerprint(document: &ParsedDocument) -> u64 {
    let mut hasher = DefaultHasher::new();
    document.source.hash(&mut hasher);
    document.lines.len().hash(&mut hasher);
    for line in &document.lines {
        line.page.hash(&mut hasher);
        line.text.hash(&mut hasher);
    }
    document.invisible_lines().hash(&mut hasher);
    hasher.finish()
}

impl LineCache {
    /// The row view of `document` and its normalised lines, from the cache
    /// when the same document was seen before.
    pub(crate) fn get(&self, document: &ParsedDocument) -> Rows {
        let key = fingerprint(document);
        // A poisoned lock only means another thread panicked mid-update of a
        // cache: recompute rather than fail.
        if let Ok(mut entries) = self.entries.lock()
            && let Some(position) = entries.iter().position(|(k, _)| *k == key)
        {
            let entry = entries.remove(position);
            let rows = (Arc::clone(&entry.1.0), Arc::clone(&entry.1.1), Arc::clone(&entry.1.2));
            entries.insert(0, entry);
            return rows;
        }
        // Lines that do not show on the page are never matched (their text is emptied).
        let answerable = document.answerable();
        let view = Arc::new(RowView::of(&answerable).into_owned());
        let lines: NormalizedLines = Arc::new(view.document().lines.iter().map(|l| normalize(&l.text)).collect());
        let index = Arc::new(PageIndex::build(view.document(), &lines));
        if let Ok(mut entries) = self.entries.lock() {
            entries.insert(0, (key, (Arc::clone(&view), Arc::clone(&lines), Arc::clone(&index))));
            entries.truncate(CACHED_DOCUMENTS);
        }
        (view, lines, index)
    }

    /// Documents currently cached.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.lock().map_or(0, |e| e.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::document;
    use crate::test_support::{check, question};

    #[test]
    fn same_document_is_served_from_the_cache_and_a_changed_one_is_not() {
        let cache = LineCache::default();
        let mut doc = document(&[&["Total  DUE", "x"]]);
        let (_, first, first_index) = cache.get(&doc);
        assert_eq!(first.as_slice(), ["total due", "x"]);
        let (_, again, again_index) = cache.get(&doc);
        assert!(Arc::ptr_eq(&first, &again), "the second call reuses the lines");
        assert!(Arc::ptr_eq(&first_index, &again_index), "and the page index");
        doc.lines[1].text = "Y".into();
        let (_, changed, _) = cache.get(&doc);
        assert_eq!(changed.as_slice(), ["total due", "y"]);
        assert_eq!(cache.len(), 2);
        for i in 0..10 {
            doc.lines[1].text = format!("{i}");
            cache.get(&doc);
        }
        assert_eq!(cache.len(), CACHED_DOCUMENTS);
    }

    #[test]
    fn a_line_marked_invisible_is_never_matched() {
        // hidden_white_text.pdf: white-on-white "TOTAL AMOUNT DUE: $999.00" under the real total.
        let mut doc = document(&[&["Invoice 42", "Total: $1,234.56", "TOTAL AMOUNT DUE: $999.00"]]);
        let q = question(&["total", "amount", "due"], "amount", &[]);
        assert_eq!(check(&doc, &q, 3).passages[0].anchor_line, 3, "the hidden line wins when visible");
        let mut hidden = docintel_schema::Diagnostic::new(docintel_schema::Severity::Warning, Some(1), "hidden");
        hidden.invisible_lines = vec![3];
        doc.diagnostics.push(hidden);
        let r = check(&doc, &q, 3);
        assert!(r.passages.iter().all(|p| p.anchor_line != 3 && p.matched_keywords.len() < 3), "{r:?}");
        assert_eq!(r.passages[0].anchor_line, 2, "{r:?}");
    }
}
