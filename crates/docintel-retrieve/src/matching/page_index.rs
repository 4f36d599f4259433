//! Page evidence: Okapi BM25 over whole pages for the question's words.
//!
//! Line windows find the line that says the thing; a page ranking finds the
//! page where the question's words meet, even when no single line holds
//! more than one of them (a table whose header says "Pension Benefits",
//! whose rows say "2024", under a sentence about "retirees"). The retriever
//! gives the best pages of this ranking a place among the passages shown
//! (the `page_ranking` stage), anchored on their best line.

use docintel_schema::ParsedDocument;
use docintel_schema::text::normalize;

use super::keyword::PreparedKeyword;
use crate::bm25::{Bm25, words};

/// The words of every page, indexed once per document ([`Bm25`] over the
/// pages), with each indexed page's number.
#[derive(Debug, Default)]
pub(crate) struct PageIndex {
    index: Bm25,
    /// Page numbers (1-based), in document order: one per run of lines on
    /// the same page.
    pages: Vec<u32>,
}

impl PageIndex {
    /// Indexes `document`, whose lines `normalized` holds as [`normalize`]
    /// gives them.
    pub(crate) fn build(document: &ParsedDocument, normalized: &[String]) -> PageIndex {
        let lines: Vec<(u32, &str)> =
            document.lines.iter().zip(normalized).map(|(line, text)| (line.page, text.as_str())).collect();
        let runs: Vec<&[(u32, &str)]> = lines.chunk_by(|a, b| a.0 == b.0).collect();
        let pages = runs.iter().map(|run| run[0].0).collect();
        let index = Bm25::new(runs.iter().map(|run| run.iter().flat_map(|(_, text)| words(text))));
        PageIndex { index, pages }
    }

    /// Pages with any text.
    pub(crate) fn n_pages(&self) -> usize {
        self.pages.len()
    }

    /// Pages holding at least one of `words`.
    pub(crate) fn pages_with_any(&self, words: &[&str]) -> usize {
        self.index.texts_with_any(words)
    }

    /// Pages (1-based) in decreasing BM25 score for the distinct words of
    /// the plain keywords (identifiers pin on their own; regexes are not
    /// words), pages without any of them left out, ties in page order.
    pub(crate) fn rank(&self, keywords: &[PreparedKeyword]) -> Vec<(u32, f64)> {
        let mut terms: Vec<usize> = keywords
            .iter()
            .filter(|k| !k.pinning && !k.is_regex())
            .flat_map(|k| words(&normalize(&k.label)).filter_map(|w| self.index.term(w)).collect::<Vec<_>>())
            .collect();
        terms.sort_unstable();
        terms.dedup();
        let mut scored: Vec<(u32, f64)> =
            self.index.ranked(&terms).into_iter().map(|(i, s)| (self.pages[i], s)).collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matching::prepare;
    use crate::test_support::{document, question};

    #[test]
    fn pages_rank_by_bm25_over_their_words() {
        let doc = document(&[
            &["pension plan", "filler words here"],
            &["pension benefits", "pension paid to retirees", "retirees"],
            &["nothing relevant"],
        ]);
        let normalized: Vec<String> = doc.lines.iter().map(|l| normalize(&l.text)).collect();
        let index = PageIndex::build(&doc, &normalized);
        let keywords = prepare(&question(&["pension", "retirees"], "text", &[])).unwrap();
        let ranked = index.rank(&keywords);
        assert_eq!(ranked.iter().map(|(p, _)| *p).collect::<Vec<_>>(), [2, 1]);
        assert!(ranked[0].1 > ranked[1].1);
        let none = prepare(&question(&["absent"], "text", &[])).unwrap();
        assert!(index.rank(&none).is_empty());
    }
}
