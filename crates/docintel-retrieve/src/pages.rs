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

/// Pages (1-based) in decreasing BM25 score for the distinct words of the
/// plain keywords (identifiers pin on their own; regexes are not words),
/// pages without any of them left out. `normalized` holds the document's
/// lines as [`normalize`] gives them.
pub(crate) fn rank(keywords: &[PreparedKeyword], document: &ParsedDocument, normalized: &[String]) -> Vec<(u32, f64)> {
    let mut terms: Vec<String> = keywords
        .iter()
        .filter(|k| !k.pinning && !k.is_regex())
        .flat_map(|k| words(&normalize(&k.label)).map(str::to_owned).collect::<Vec<_>>())
        .collect();
    terms.sort();
    terms.dedup();
    if terms.is_empty() {
        return Vec::new();
    }
    let index: HashMap<&str, usize> = terms.iter().enumerate().map(|(i, t)| (t.as_str(), i)).collect();
    // Term frequencies and lengths per page, in page order.
    let mut pages: Vec<(u32, Vec<u32>, f64)> = Vec::new();
    for (line, text) in document.lines.iter().zip(normalized) {
        if pages.last().is_none_or(|(page, _, _)| *page != line.page) {
            pages.push((line.page, vec![0; terms.len()], 0.0));
        }
        let (_, tf, length) = pages.last_mut().expect("pushed");
        for word in words(text) {
            *length += 1.0;
            if let Some(&t) = index.get(word) {
                tf[t] += 1;
            }
        }
    }
    let n = pages.len() as f64;
    let avg = (pages.iter().map(|(_, _, l)| l).sum::<f64>() / n.max(1.0)).max(1.0);
    let df: Vec<f64> = (0..terms.len()).map(|t| pages.iter().filter(|(_, tf, _)| tf[t] > 0).count() as f64).collect();
    let idf: Vec<f64> = df.iter().map(|&df| (1.0 + (n - df + 0.5) / (df + 0.5)).ln()).collect();
    let mut scored: Vec<(u32, f64)> = pages
        .iter()
        .map(|(page, tf, length)| {
            let norm = K1 * (1.0 - B + B * length / avg);
            let score = tf
                .iter()
                .zip(&idf)
                .filter(|(tf, _)| **tf > 0)
                .map(|(&tf, idf)| idf * f64::from(tf) * (K1 + 1.0) / (f64::from(tf) + norm))
                .sum();
            (*page, score)
        })
        .filter(|(_, score)| *score > 0.0)
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored
}
