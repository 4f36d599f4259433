//! Normalised lines per document, computed once.
//!
//! Matching runs on [`normalize`]d line texts. Normalising every line of a
//! 300-page document again for each question (and again for the TOC walk and
//! the coverage pass) dominated retrieval time, so a retriever keeps the
//! normalised lines of the last few documents it saw, keyed by a fingerprint
//! of the document (its source, its line count and a hash of every line's
//! page and text): a changed document never reuses stale lines.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use docintel_schema::ParsedDocument;
use docintel_schema::text::normalize;

/// Documents whose normalised lines are kept.
const CACHED_DOCUMENTS: usize = 4;

/// The normalised text of every line of a document, by line index.
pub(crate) type NormalizedLines = Arc<Vec<String>>;

/// A small most-recently-used cache of normalised lines, shared by clones of
/// a retriever.
#[derive(Debug, Clone, Default)]
pub(crate) struct LineCache {
    entries: Arc<Mutex<Vec<(u64, NormalizedLines)>>>,
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
    hasher.finish()
}

impl LineCache {
    /// The normalised lines of `document`, from the cache when the same
    /// document was seen before.
    pub(crate) fn get(&self, document: &ParsedDocument) -> NormalizedLines {
        let key = fingerprint(document);
        // A poisoned lock only means another thread panicked mid-update of a
        // cache: recompute rather than fail.
        if let Ok(mut entries) = self.entries.lock()
            && let Some(position) = entries.iter().position(|(k, _)| *k == key)
        {
            let entry = entries.remove(position);
            let lines = Arc::clone(&entry.1);
            entries.insert(0, entry);
            return lines;
        }
        let lines: NormalizedLines = Arc::new(document.lines.iter().map(|l| normalize(&l.text)).collect());
        if let Ok(mut entries) = self.entries.lock() {
            entries.insert(0, (key, Arc::clone(&lines)));
            entries.truncate(CACHED_DOCUMENTS);
        }
        lines
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
    use crate::keyword::tests::document;

    #[test]
    fn same_document_is_served_from_the_cache_and_a_changed_one_is_not() {
        let cache = LineCache::default();
        let mut doc = document(&[&["Total  DUE", "x"]]);
        let first = cache.get(&doc);
        assert_eq!(first.as_slice(), ["total due", "x"]);
        let again = cache.get(&doc);
        assert!(Arc::ptr_eq(&first, &again), "the second call reuses the lines");
        doc.lines[1].text = "Y".into();
        let changed = cache.get(&doc);
        assert_eq!(changed.as_slice(), ["total due", "y"]);
        assert_eq!(cache.len(), 2);
        for i in 0..10 {
            doc.lines[1].text = format!("{i}");
            cache.get(&doc);
        }
        assert_eq!(cache.len(), CACHED_DOCUMENTS);
    }
}
