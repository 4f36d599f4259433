//! Stage `floor`: the relevance floor, fewer passages rather than padding.
//! An unpinned candidate scoring under the floor share of the best one, or
//! matched only by keywords on more than half of the lines (no better than
//! chance), is held back for the reserve; the best candidate always stays.

use docintel_schema::TraceSink;

use super::{Ctx, RankingState};
use crate::error::RetrieveError;
use crate::matching::Candidate;

/// Holds back the candidates under the floor.
pub(crate) fn run(state: &mut RankingState, ctx: &Ctx<'_>, _: &mut dyn TraceSink) -> Result<(), RetrieveError> {
    let (ranked, held_back) = apply_floor(ctx.floor, std::mem::take(&mut state.ranked), &mut state.notes);
    state.ranked = ranked;
    state.held_back = held_back;
    Ok(())
}

/// Cuts unpinned passages scoring under the floor share of the best one
/// and passages matched only by keywords on more than half of the lines
/// (no better than the unrelated baseline). The top passage is always
/// kept. Returns (kept, held back for the reserve).
fn apply_floor(floor: f64, candidates: Vec<Candidate>, notes: &mut Vec<String>) -> (Vec<Candidate>, Vec<Candidate>) {
    let best = candidates.iter().map(|c| c.passage.score).fold(0.0, f64::max);
    let mut kept = Vec::new();
    let mut held = Vec::new();
    let (mut below, mut baseline) = (0, 0);
    for (rank, candidate) in candidates.into_iter().enumerate() {
        let p = &candidate.passage;
        if rank == 0 || p.pinned {
            kept.push(candidate);
        } else if !candidate.discriminating {
            baseline += 1;
            held.push(candidate);
        } else if p.score < floor * best {
            below += 1;
            held.push(candidate);
        } else {
            kept.push(candidate);
        }
    }
    if below > 0 {
        notes.push(format!(
            "relevance floor: {below} passage(s) under {:.0}% of the best score not shown",
            floor * 100.0
        ));
    }
    if baseline > 0 {
        notes.push(format!("relevance floor: {baseline} passage(s) matched only by keywords on most lines not shown"));
    }
    if kept.first().is_some_and(|c| !c.discriminating && !c.passage.pinned) {
        notes.push("nearest passage kept although its keywords are on most lines".to_owned());
    }
    (kept, held)
}

#[cfg(test)]
mod tests {
    use docintel_schema::{Keyword, KeywordSource, NullSink, Retriever};

    use crate::test_support::{check, document, filler, question};
    use crate::{KeywordRetriever, RetrieveConfig};

    #[test]
    fn relevance_floor_returns_fewer_passages_than_top_k() {
        // "premium" is rare and strong; "note" on one other line is weak.
        let mut page: Vec<String> = filler(30, "filler");
        page[3] = "annual premium 100 EUR premium".into();
        page[20] = "note".into();
        let refs: Vec<&str> = page.iter().map(String::as_str).collect();
        let doc = document(&[&refs]);
        // "note" is a dictionary synonym of the concept "premium": covered
        // by "premium", so no coverage pass brings it back.
        let mut q = question(&["premium"], "text", &[]);
        q.keywords[0].weight = 5.0;
        q.keywords.push(Keyword {
            text: "note".into(),
            weight: 1.0,
            source: KeywordSource::ExpertDictionary,
            is_regex: false,
            semantic_group: Some("premium".into()),
        });
        let r = check(&doc, &q, 5);
        assert_eq!(r.passages.len(), 1, "{r:?}");
        assert!(r.notes.iter().any(|n| n.contains("relevance floor")), "{:?}", r.notes);
        assert_eq!(r.reserve.len(), 1, "the cut passage waits in the reserve");
        // Floor off: padded back to both.
        let off = KeywordRetriever::new(RetrieveConfig { top_k: 5, window: 1, reserve: 5, read_pages_whole: false })
            .with_floor(0.0);
        assert_eq!(off.retrieve(&q, &doc, &mut NullSink).unwrap().passages.len(), 2);
    }

    #[test]
    fn nearest_passage_is_kept_when_only_baseline_keywords_match() {
        // "policy" is on every line: no better than chance, yet the nearest
        // passage stays.
        let page: Vec<String> = filler(40, "policy line");
        let refs: Vec<&str> = page.iter().map(String::as_str).collect();
        let doc = document(&[&refs]);
        let r = check(&doc, &question(&["policy"], "text", &[]), 5);
        assert_eq!(r.passages.len(), 1, "{r:?}");
        assert_eq!(r.passages[0].anchor_line, 1);
        assert!(r.notes.iter().any(|n| n.contains("nearest passage kept")), "{:?}", r.notes);
    }
}
