//! Okapi BM25 (k1 = 1.2, b = 0.75) over a fixed list of texts given as their
//! words: the page evidence of the retriever (`pages.rs`) and the flat
//! baselines `cargo xtask eval` measures against (pages, ~512-token chunks).
//! The TOC router's BM25-style score (`toc.rs`) shares the constants and
//! [`idf`].

use std::collections::HashMap;

/// BM25 term-frequency saturation.
pub const K1: f64 = 1.2;
/// BM25 length normalisation.
pub const B: f64 = 0.75;

/// The inverse document frequency of a term found in `df` of `n` texts
/// (the "plus one" form, never negative).
pub fn idf(n: f64, df: f64) -> f64 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// The words BM25 sees in an already [`normalize`]d text: runs of letters
/// and digits.
///
/// [`normalize`]: docintel_schema::text::normalize
pub fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty())
}

/// An index over a fixed list of texts: for each term, the texts holding it
/// with their counts, and each text's length in words.
#[derive(Debug, Default)]
pub struct Bm25 {
    vocabulary: HashMap<String, usize>,
    /// Per term: (index of the text, occurrences in it), texts in order.
    postings: Vec<Vec<(usize, u32)>>,
    /// Words per text.
    lengths: Vec<f64>,
}

impl Bm25 {
    /// Indexes `texts`, each given as its words (an empty text counts in the
    /// number of texts and the average length).
    pub fn new<T, W>(texts: impl IntoIterator<Item = T>) -> Bm25
    where
        T: IntoIterator<Item = W>,
        W: AsRef<str>,
    {
        let mut index = Bm25::default();
        let mut counts: HashMap<usize, u32> = HashMap::new();
        for (text, words) in texts.into_iter().enumerate() {
            let mut length = 0.0;
            for word in words {
                let word = word.as_ref();
                length += 1.0;
                let id = match index.vocabulary.get(word) {
                    Some(&id) => id,
                    None => {
                        let id = index.postings.len();
                        index.vocabulary.insert(word.to_owned(), id);
                        index.postings.push(Vec::new());
                        id
                    }
                };
                *counts.entry(id).or_default() += 1;
            }
            index.lengths.push(length);
            for (term, n) in counts.drain() {
                index.postings[term].push((text, n));
            }
        }
        index
    }

    /// Number of texts.
    pub fn len(&self) -> usize {
        self.lengths.len()
    }

    /// Whether there is no text.
    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// The term id of `word`, when some text holds it.
    pub fn term(&self, word: &str) -> Option<usize> {
        self.vocabulary.get(word).copied()
    }

    /// Texts holding at least one of `words`.
    pub fn texts_with_any(&self, words: &[&str]) -> usize {
        let mut texts: Vec<usize> = words
            .iter()
            .filter_map(|w| self.term(w))
            .flat_map(|id| self.postings[id].iter().map(|(text, _)| *text))
            .collect();
        texts.sort_unstable();
        texts.dedup();
        texts.len()
    }

    /// Each text's score for `terms` (ids from [`Bm25::term`]; a term listed
    /// twice counts twice), added up in the order of `terms`.
    pub fn scores(&self, terms: &[usize]) -> Vec<f64> {
        let n = self.lengths.len() as f64;
        let avg = (self.lengths.iter().sum::<f64>() / n.max(1.0)).max(1.0);
        let mut scores = vec![0.0; self.lengths.len()];
        for &term in terms {
            let postings = &self.postings[term];
            let idf = idf(n, postings.len() as f64);
            for &(text, tf) in postings {
                let tf = f64::from(tf);
                let norm = K1 * (1.0 - B + B * self.lengths[text] / avg);
                scores[text] += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        scores
    }

    /// The texts (indices) scoring above zero for `terms`, best first, ties
    /// in text order.
    pub fn ranked(&self, terms: &[usize]) -> Vec<(usize, f64)> {
        let mut scored: Vec<(usize, f64)> =
            self.scores(terms).into_iter().enumerate().filter(|(_, s)| *s > 0.0).collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_with_the_rare_term_ranks_first() {
        let texts = ["the total amount due", "the invoice date", "the the the", ""];
        let index = Bm25::new(texts.iter().map(|t| words(t)));
        assert_eq!(index.len(), 4);
        let terms: Vec<usize> = ["the", "total"].iter().filter_map(|w| index.term(w)).collect();
        let top = index.ranked(&terms);
        // "total" decides; among the others, "the" three times in a short
        // text outweighs it once.
        assert_eq!(top.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [0, 2, 1]);
        assert!(top[0].1 > top[1].1);
        assert!(index.term("absent").is_none());
        assert_eq!(index.texts_with_any(&["total", "date", "absent"]), 2);
    }

    #[test]
    fn scores_follow_the_okapi_formula() {
        let index = Bm25::new([vec!["a", "b"], vec!["b"]]);
        let a = index.term("a").unwrap();
        // n = 2, df = 1, avg length 1.5, text 0 of length 2.
        let expected = idf(2.0, 1.0) * (K1 + 1.0) / (1.0 + K1 * (1.0 - B + B * 2.0 / 1.5));
        assert_eq!(index.scores(&[a]), [expected, 0.0]);
    }
}
