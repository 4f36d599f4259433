//! Hybrid fusion: reciprocal-rank fusion (RRF) of a keyword retrieval and an
//! embedding retrieval, with pinned passages kept on top, untouched.
//!
//! Each input is read as one ranking (shown passages, then the reserve). A
//! passage's fused score is the sum over the rankings it appears in of
//! `1 / (k + rank)` (rank 1-based). The two retrievers cut passages
//! differently (keyword windows, embedding chunks), so an embedding passage
//! that overlaps a keyword passage on the same page is the same evidence: it
//! credits that keyword passage (the narrower, anchored range is kept) instead
//! of standing on its own. Pinned passages (exact identifiers, page hints)
//! come first in their own order; fusion never moves them, and an embedding
//! passage overlapping one is dropped as already shown.

use docintel_schema::{Passage, Retrieval};

/// Fusion settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusionConfig {
    /// The RRF constant (60 in the original paper): larger flattens the ranks.
    pub k: f64,
    /// Passages to show; the rest of the fused ranking becomes the reserve.
    pub top_k: usize,
}

impl FusionConfig {
    /// k = 60, five passages shown.
    pub const STANDARD: FusionConfig = FusionConfig { k: 60.0, top_k: 5 };
}

impl Default for FusionConfig {
    fn default() -> Self {
        FusionConfig::STANDARD
    }
}

fn overlaps(a: &Passage, b: &Passage) -> bool {
    a.page == b.page && a.line_start <= b.line_end && b.line_start <= a.line_end
}

/// Fuses `keyword` and `embedding` by reciprocal rank; see the module docs.
/// Ties break in document order. Methods and notes of both inputs are kept,
/// plus `rrf_fusion` and a note.
pub fn fuse_rrf(keyword: &Retrieval, embedding: &Retrieval, config: FusionConfig) -> Retrieval {
    let keyword_ranking: Vec<&Passage> = keyword.passages.iter().chain(&keyword.reserve).collect();
    let embedding_ranking: Vec<&Passage> = embedding.passages.iter().chain(&embedding.reserve).collect();
    let pinned: Vec<Passage> = keyword_ranking.iter().chain(&embedding_ranking).filter(|p| p.pinned).fold(
        Vec::new(),
        |mut acc: Vec<Passage>, p| {
            if !acc.iter().any(|q| q.page == p.page && q.line_start == p.line_start && q.line_end == p.line_end) {
                acc.push((*p).clone());
            }
            acc
        },
    );
    let rrf = |rank: usize| 1.0 / (config.k + rank as f64 + 1.0);

    // (passage, fused score) for the unpinned candidates.
    let mut fused: Vec<(Passage, f64)> = Vec::new();
    for (rank, p) in keyword_ranking.iter().enumerate().filter(|(_, p)| !p.pinned) {
        fused.push(((*p).clone(), rrf(rank)));
    }
    let n_keyword = fused.len();
    let mut embedding_credit = vec![false; n_keyword];
    let mut credited = 0usize;
    let mut dropped = 0usize;
    for (rank, p) in embedding_ranking.iter().enumerate().filter(|(_, p)| !p.pinned) {
        if pinned.iter().any(|q| overlaps(q, p)) {
            dropped += 1;
            continue;
        }
        // Credit the best-ranked keyword passage it overlaps (each keyword
        // passage credited once: the first embedding rank that reaches it).
        if let Some(index) = fused[..n_keyword].iter().position(|(q, _)| overlaps(q, p)) {
            if !embedding_credit[index] {
                embedding_credit[index] = true;
                fused[index].1 += rrf(rank);
            }
            credited += 1;
            continue;
        }
        if fused[n_keyword..].iter().any(|(q, _)| overlaps(q, p)) {
            continue;
        }
        fused.push(((*p).clone(), rrf(rank)));
    }
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.line_start.cmp(&b.0.line_start)));

    let mut passages = pinned;
    let mut reserve = Vec::new();
    for (mut p, score) in fused {
        p.score = score;
        if passages.len() < config.top_k.max(1) { passages.push(p) } else { reserve.push(p) }
    }
    let mut methods_used = keyword.methods_used.clone();
    for m in &embedding.methods_used {
        if !methods_used.contains(m) {
            methods_used.push(m.clone());
        }
    }
    methods_used.push("rrf_fusion".to_owned());
    let mut notes = keyword.notes.clone();
    notes.extend(embedding.notes.iter().cloned());
    notes.push(format!(
        "reciprocal-rank fusion (k = {}): {} keyword and {} embedding passages, {credited} embedding hits credited to \
         overlapping keyword passages, {dropped} dropped under pinned passages",
        config.k,
        keyword_ranking.len(),
        embedding_ranking.len()
    ));
    Retrieval { passages, reserve, methods_used, notes }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(page: u32, start: u32, end: u32, pinned: bool) -> Passage {
        Passage {
            line_start: start,
            line_end: end,
            page,
            score: 1.0,
            anchor_line: start,
            matched_keywords: Vec::new(),
            pinned,
        }
    }

    fn retrieval(passages: Vec<Passage>, reserve: Vec<Passage>, method: &str) -> Retrieval {
        Retrieval { passages, reserve, methods_used: vec![method.to_owned()], notes: Vec::new() }
    }

    fn ranges(r: &[Passage]) -> Vec<(u32, u32)> {
        r.iter().map(|p| (p.line_start, p.line_end)).collect()
    }

    #[test]
    fn agreement_of_both_rankings_wins() {
        // Keyword: A(10) B(20) C(30); embedding: C'(overlaps C) D(40) A'(overlaps A).
        let keyword = retrieval(vec![p(1, 10, 12, false), p(2, 20, 22, false), p(3, 30, 32, false)], vec![], "keyword");
        let embedding =
            retrieval(vec![p(3, 28, 35, false), p(4, 40, 45, false), p(1, 8, 14, false)], vec![], "embedding");
        let fused = fuse_rrf(&keyword, &embedding, FusionConfig { k: 60.0, top_k: 3 });
        // C: 1/63 + 1/61; A: 1/61 + 1/63 (tie: document order puts A first).
        assert_eq!(ranges(&fused.passages), vec![(10, 12), (30, 32), (20, 22)]);
        assert_eq!(ranges(&fused.reserve), vec![(40, 45)]);
        assert!(fused.passages[0].score > fused.passages[2].score);
        assert_eq!(fused.methods_used, vec!["keyword", "embedding", "rrf_fusion"]);
    }

    #[test]
    fn pinned_passages_stay_on_top_whatever_the_ranks() {
        // The pinned row is last in the keyword ranking and absent from the
        // embedding ranking, whose neighbouring row (one digit off) is first
        // in both: fusion must not move the pinned row.
        let keyword = retrieval(vec![p(5, 51, 51, false), p(5, 52, 52, true)], vec![], "keyword");
        let embedding = retrieval(vec![p(5, 51, 51, false), p(6, 60, 70, false)], vec![], "embedding");
        let fused = fuse_rrf(&keyword, &embedding, FusionConfig::STANDARD);
        assert_eq!(ranges(&fused.passages), vec![(52, 52), (51, 51), (60, 70)]);
        assert!(fused.passages[0].pinned);
    }

    #[test]
    fn embedding_hit_overlapping_a_pinned_passage_is_dropped() {
        let keyword = retrieval(vec![p(2, 10, 12, true)], vec![], "keyword");
        let embedding = retrieval(vec![p(2, 5, 15, false), p(3, 30, 31, false)], vec![], "embedding");
        let fused = fuse_rrf(&keyword, &embedding, FusionConfig::STANDARD);
        assert_eq!(ranges(&fused.passages), vec![(10, 12), (30, 31)]);
    }

    #[test]
    fn reserve_ranks_count_in_the_fusion() {
        let keyword = retrieval(vec![p(1, 1, 5, false)], vec![p(2, 6, 9, false)], "keyword");
        let embedding = retrieval(vec![p(2, 6, 9, false)], vec![], "embedding");
        let fused = fuse_rrf(&keyword, &embedding, FusionConfig { k: 60.0, top_k: 1 });
        // (6, 9): 1/62 + 1/61 beats (1, 5): 1/61.
        assert_eq!(ranges(&fused.passages), vec![(6, 9)]);
        assert_eq!(ranges(&fused.reserve), vec![(1, 5)]);
    }

    #[test]
    fn empty_inputs_give_an_empty_retrieval() {
        let fused = fuse_rrf(
            &retrieval(vec![], vec![], "keyword"),
            &retrieval(vec![], vec![], "embedding"),
            FusionConfig::STANDARD,
        );
        assert!(fused.passages.is_empty() && fused.reserve.is_empty());
    }
}
