//! Flat Okapi BM25 (k1 = 1.2, b = 0.75) over token lists: the baselines
//! the evals measure against (pages for `eval retrieval`, chunks for `eval
//! generation`), as a plain RAG stack would rank them.

use std::collections::HashMap;

use docintel::schema::text::normalize;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The tokens BM25 sees: normalised text split on anything not a letter or
/// digit.
pub(crate) fn tokens(text: &str) -> Vec<String> {
    normalize(text).split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).map(str::to_owned).collect()
}

/// An index over a fixed list of texts.
pub(crate) struct Bm25 {
    /// Term frequencies per text.
    texts: Vec<HashMap<String, u32>>,
    /// Tokens per text.
    lengths: Vec<f64>,
    /// Texts containing each term.
    df: HashMap<String, u32>,
    avg_len: f64,
}

impl Bm25 {
    /// Indexes `texts`, each given as its tokens.
    pub(crate) fn new(texts: impl IntoIterator<Item = Vec<String>>) -> Bm25 {
        let mut tfs = Vec::new();
        let mut lengths = Vec::new();
        let mut df: HashMap<String, u32> = HashMap::new();
        for tokens in texts {
            lengths.push(tokens.len() as f64);
            let mut tf: HashMap<String, u32> = HashMap::new();
            for token in tokens {
                *tf.entry(token).or_default() += 1;
            }
            for term in tf.keys() {
                *df.entry(term.clone()).or_default() += 1;
            }
            tfs.push(tf);
        }
        let avg_len = (lengths.iter().sum::<f64>() / lengths.len().max(1) as f64).max(1.0);
        Bm25 { texts: tfs, lengths, df, avg_len }
    }

    /// The `k` best texts (indices) with their scores for the distinct tokens
    /// of `query`, texts without any left out, ties in index order.
    pub(crate) fn top(&self, query: &str, k: usize) -> Vec<(usize, f64)> {
        let mut terms = tokens(query);
        terms.sort();
        terms.dedup();
        let n = self.texts.len() as f64;
        let mut scores: Vec<(usize, f64)> = self
            .texts
            .iter()
            .enumerate()
            .map(|(i, tf)| {
                let norm = K1 * (1.0 - B + B * self.lengths[i] / self.avg_len);
                let score = terms
                    .iter()
                    .filter_map(|t| {
                        let tf = f64::from(*tf.get(t)?);
                        let df = f64::from(self.df.get(t).copied().unwrap_or(0));
                        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                        Some(idf * tf * (K1 + 1.0) / (tf + norm))
                    })
                    .sum();
                (i, score)
            })
            .filter(|(_, score)| *score > 0.0)
            .collect();
        scores.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scores.truncate(k);
        scores
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_with_the_rare_term_ranks_first() {
        let texts = ["the total amount due", "the invoice date", "the the the"];
        let index = Bm25::new(texts.iter().map(|t| tokens(t)));
        let top = index.top("What is the total?", 3);
        // "total" decides; among the others, "the" three times in a short
        // text outweighs it once.
        assert_eq!(top.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [0, 2, 1]);
        assert!(top[0].1 > top[1].1);
        assert!(index.top("absent", 3).is_empty());
    }
}
