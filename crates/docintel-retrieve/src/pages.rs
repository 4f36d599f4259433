//! Page evidence: Okapi BM25 over whole pages for the question's words.
//!
//! Line windows find the line that says the thing; a page ranking finds the
//! page where the question's words meet, even when no single line holds
//! more than one of them (a table whose header says "Pension Benefits",
//! whose rows say "2024", under a sentence about "retirees"). The retriever
//! gives the best pages of this ranking a place among the passages shown
//! (see `KeywordRetriever::retrieve_with_router`), anchored on their best
//! line.

use std::collections::HashMap;

use docintel_schema::ParsedDocument;
use docintel_schema::text::normalize;

use crate::keyword::PreparedKeyword;

/// BM25 term-frequency saturation.
const K1: f64 = 1.2;
/// BM25 length normalisation.
const B: f64 = 0.75;

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty())
}

/// The words of every page, indexed once per document: for each word, the
/// pages holding it with their counts, and each page's length in words.
#[derive(Debug, Default)]
pub(crate) struct PageIndex {
    vocabulary: HashMap<String, usize>,
    /// Per word: (index into `pages`, occurrences on that page).
    postings: Vec<Vec<(usize, u32)>>,
    /// Page numbers (1-based), in document order.
    pages: Vec<u32>,
    /// Words per page.
    lengths: Vec<f64>,
}

impl PageIndex {
    /// Indexes `document`, whose lines `normalized` holds as [`normalize`]
    /// gives them.
    pub(crate) fn build(document: &ParsedDocument, normalized: &[String]) -> PageIndex {
        let mut index = PageIndex::default();
        let mut counts: HashMap<usize, u32> = HashMap::new();
        let flush = |index: &mut PageIndex, counts: &mut HashMap<usize, u32>| {
            let page = index.pages.len() - 1;
            let mut words: Vec<(usize, u32)> = counts.drain().collect();
            words.sort_unstable();
            for (word, n) in words {
                index.postings[word].push((page, n));
            }
        };
        for (line, text) in document.lines.iter().zip(normalized) {
            if index.pages.last() != Some(&line.page) {
                if !index.pages.is_empty() {
                    flush(&mut index, &mut counts);
                }
                index.pages.push(line.page);
                index.lengths.push(0.0);
            }
            for word in words(text) {
                *index.lengths.last_mut().expect("pushed") += 1.0;
                let next = index.vocabulary.len();
                let id = *index.vocabulary.entry(word.to_owned()).or_insert(next);
                if id == index.postings.len() {
                    index.postings.push(Vec::new());
                }
                *counts.entry(id).or_default() += 1;
            }
        }
        if !index.pages.is_empty() {
            flush(&mut index, &mut counts);
        }
        index
    }

    /// Pages with any text.
    pub(crate) fn n_pages(&self) -> usize {
        self.pages.len()
    }

    /// Pages holding at least one of `words`.
    pub(crate) fn pages_with_any(&self, words: &[&str]) -> usize {
        let mut pages: Vec<usize> = words
            .iter()
            .filter_map(|w| self.vocabulary.get(*w))
            .flat_map(|&id| self.postings[id].iter().map(|(page, _)| *page))
            .collect();
        pages.sort_unstable();
        pages.dedup();
        pages.len()
    }

    /// Pages (1-based) in decreasing BM25 score for the distinct words of
    /// the plain keywords (identifiers pin on their own; regexes are not
    /// words), pages without any of them left out, ties in page order.
    pub(crate) fn rank(&self, keywords: &[PreparedKeyword]) -> Vec<(u32, f64)> {
        let mut terms: Vec<usize> = keywords
            .iter()
            .filter(|k| !k.pinning && !k.is_regex())
            .flat_map(|k| {
                words(&normalize(&k.label)).filter_map(|w| self.vocabulary.get(w).copied()).collect::<Vec<_>>()
            })
            .collect();
        terms.sort_unstable();
        terms.dedup();
        let n = self.pages.len() as f64;
        let avg = (self.lengths.iter().sum::<f64>() / n.max(1.0)).max(1.0);
        let mut scores = vec![0.0; self.pages.len()];
        for &term in &terms {
            let postings = &self.postings[term];
            let df = postings.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(page, tf) in postings {
                let tf = f64::from(tf);
                let norm = K1 * (1.0 - B + B * self.lengths[page] / avg);
                scores[page] += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        let mut scored: Vec<(u32, f64)> =
            scores.into_iter().enumerate().filter(|(_, s)| *s > 0.0).map(|(i, s)| (self.pages[i], s)).collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyword::KeywordRetriever;
    use crate::keyword::tests::{document, question};

    #[test]
    fn pages_rank_by_bm25_over_their_words() {
        let doc = document(&[
            &["pension plan", "filler words here"],
            &["pension benefits", "pension paid to retirees", "retirees"],
            &["nothing relevant"],
        ]);
        let normalized: Vec<String> = doc.lines.iter().map(|l| normalize(&l.text)).collect();
        let index = PageIndex::build(&doc, &normalized);
        let keywords = KeywordRetriever::prepare(&question(&["pension", "retirees"], "text", &[])).unwrap();
        let ranked = index.rank(&keywords);
        assert_eq!(ranked.iter().map(|(p, _)| *p).collect::<Vec<_>>(), [2, 1]);
        assert!(ranked[0].1 > ranked[1].1);
        let none = KeywordRetriever::prepare(&question(&["absent"], "text", &[])).unwrap();
        assert!(index.rank(&none).is_empty());
    }
}
