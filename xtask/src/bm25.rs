//! The flat BM25 baselines the evals measure against (pages for `eval
//! retrieval`, chunks for `eval generation`), as a plain RAG stack would rank
//! them: docintel-retrieve's [`Bm25`] over a whole text's tokens, asked with
//! the question's distinct tokens.

use docintel::schema::text::normalize;
use docintel_retrieve::bm25::{self, Bm25};

/// The tokens BM25 sees: normalised text split on anything not a letter or
/// digit.
pub(crate) fn tokens(text: &str) -> Vec<String> {
    bm25::words(&normalize(text)).map(str::to_owned).collect()
}

/// The `k` best texts of `index` (indices) with their scores for the
/// distinct tokens of `query` (added up in sorted order), texts without any
/// left out, ties in index order.
pub(crate) fn top(index: &Bm25, query: &str, k: usize) -> Vec<(usize, f64)> {
    let mut words = tokens(query);
    words.sort();
    words.dedup();
    let terms: Vec<usize> = words.iter().filter_map(|w| index.term(w)).collect();
    let mut ranked = index.ranked(&terms);
    ranked.truncate(k);
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_with_the_rare_term_ranks_first() {
        let texts = ["the total amount due", "the invoice date", "the the the"];
        let index = Bm25::new(texts.iter().map(|t| tokens(t)));
        let top = top(&index, "What is the total?", 3);
        // "total" decides; among the others, "the" three times in a short
        // text outweighs it once.
        assert_eq!(top.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [0, 2, 1]);
        assert!(top[0].1 > top[1].1);
        assert!(super::top(&index, "absent", 3).is_empty());
    }
}
