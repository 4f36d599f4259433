//! Stage `page_ranking`: page evidence. BM25 over whole pages
//! ([`crate::matching::PageIndex`]) finds the page where the question's words
//! meet even when no single line holds more than one of them. When neither
//! of its two best pages is shown, the line ranking and the page ranking
//! disagree: those two pages take the last places shown, anchored on their
//! best line — never in place of the best passage, a pinned passage, a
//! coverage addition or a passage on the page ranking's third page. When
//! they agree, nothing moves. The user's pages hint turns it off, and so
//! does an exact identifier pinned (it already says where).

use std::collections::BTreeSet;

use docintel_schema::{TraceEvent, TraceSink};
use serde_json::json;

use super::outside::show_outside;
use super::{Ctx, RankingState};
use crate::error::RetrieveError;
use crate::matching::{Candidate, PreparedKeyword, overlaps};

/// The page ranking's first pages (BM25 over whole pages): when none of them
/// is shown, they take places among the passages shown. Measured on
/// FinanceBench (recall@5, 111 questions): adding them even when one was
/// shown lost 2 to 5 questions the line ranking had right; 1 page or 3
/// pages checked instead of 2 lost 1 to 3.
const PAGE_LEADERS: usize = 2;

/// A passage shown on one of the page ranking's first this many pages keeps
/// its place when the leaders come in (without it: 2 questions lost).
const PAGE_KEPT: usize = 3;

/// Shows the page ranking's leaders when none of them is shown.
pub(crate) fn run(state: &mut RankingState, ctx: &Ctx<'_>, trace: &mut dyn TraceSink) -> Result<(), RetrieveError> {
    let identifier_pinned = state.methods_used.iter().any(|m| m == "identifier_pinning");
    if !state.hinted.is_empty() || state.ranked.is_empty() || identifier_pinned {
        return Ok(());
    }
    let top_k = ctx.config.top_k;
    let shown: BTreeSet<u32> = state.ranked.iter().take(top_k).map(|c| c.passage.page).collect();
    let top_pages: Vec<(u32, f64)> = ctx.page_index.rank(&state.keywords).into_iter().take(PAGE_KEPT).collect();
    let leaders = &top_pages[..PAGE_LEADERS.min(top_pages.len())];
    let agree = leaders.iter().any(|(page, _)| shown.contains(page));
    let extra: Vec<Candidate> = if agree { Vec::new() } else { leader_passages(state, ctx, leaders) };
    if !top_pages.is_empty() {
        let rows = ctx.rows;
        trace.record(TraceEvent {
            brick: "retrieve".to_owned(),
            step: "page_ranking".to_owned(),
            detail: json!({
                "top_pages": top_pages.iter().map(|(p, s)| json!({"page": p, "bm25": (s * 100.0).round() / 100.0})).collect::<Vec<_>>(),
                "shown_pages": shown,
                "agree": agree,
                "added": extra.iter().map(|c| json!({"page": c.passage.page, "lines": rows.to_document(c.passage.line_start, c.passage.line_end), "matched": c.passage.matched_keywords})).collect::<Vec<_>>(),
            }),
        });
    }
    // A passage on one of the page ranking's first pages keeps its place.
    let best: BTreeSet<u32> = top_pages.iter().map(|(page, _)| *page).collect();
    let (placed, not_placed) = show_outside(&mut state.ranked, extra, top_k, &|c| best.contains(&c.passage.page));
    state.held_back.extend(not_placed);
    if placed > 0 {
        state.notes.push(format!(
            "{placed} passage(s) shown from the pages where the question's words meet most (BM25 over pages {:?}), none of which was shown",
            top_pages.iter().map(|(p, _)| *p).collect::<Vec<_>>()
        ));
        state.methods_used.push("page_ranking".to_owned());
    }
    Ok(())
}

/// The best passage on each leading page, taken out of the ranking, the
/// held-back candidates and the passages outside the route it overlaps.
fn leader_passages(state: &mut RankingState, ctx: &Ctx<'_>, leaders: &[(u32, f64)]) -> Vec<Candidate> {
    // On one page, the words that name the document ("Activision
    // Blizzard" on every page of its 10-K) are as rare as any:
    // the page's passage is chosen by the others, as TOC routing
    // does (unless nothing else is left).
    let keywords = &state.keywords;
    let page_keywords: Vec<PreparedKeyword> = if keywords.iter().any(|k| !k.names_document) {
        keywords.iter().map(|k| k.with_weight(if k.names_document { 0.0 } else { k.weight })).collect()
    } else {
        keywords.clone()
    };
    let mut extra: Vec<Candidate> = Vec::new();
    for &(page, _) in leaders {
        let on_page = BTreeSet::from([page]);
        let search = ctx.searcher.search(&page_keywords, Some(&on_page), ctx.kind_re(), None);
        if let Some(best) = search.candidates.into_iter().next() {
            state.ranked.retain(|c| !overlaps(&c.passage, &best.passage));
            state.held_back.retain(|c| !overlaps(&c.passage, &best.passage));
            state.outside.retain(|p| !overlaps(p, &best.passage));
            extra.push(best);
        }
    }
    extra
}

#[cfg(test)]
mod tests {
    use crate::test_support::{check, document, question};

    #[test]
    fn the_pages_where_the_question_words_meet_are_shown_when_the_line_ranking_missed_them() {
        // Pages 1-5 name both words once, on one line: the line ranking
        // shows them first. Pages 8-10 hold each word three times, one per
        // line (a table under its heading): the page ranking puts them
        // first, and none of them is shown.
        let mut pages: Vec<Vec<&str>> = Vec::new();
        for page in 1..=12 {
            pages.push(match page {
                1..=5 => vec![
                    "Pension plans for retirees are described below.",
                    "filler",
                    "filler",
                    "filler",
                    "filler",
                    "filler",
                ],
                8..=10 => vec![
                    "Pension benefits",
                    "pension 2022",
                    "pension 2023",
                    "paid to retirees",
                    "retirees in 2024",
                    "retirees later",
                ],
                _ => vec!["filler", "filler", "filler", "filler", "filler", "filler"],
            });
        }
        let borrowed: Vec<&[&str]> = pages.iter().map(Vec::as_slice).collect();
        let doc = document(&borrowed);
        let r = check(&doc, &question(&["pension", "retirees"], "text", &[]), 5);
        let shown: Vec<u32> = r.passages.iter().map(|p| p.page).collect();
        assert!(r.methods_used.contains(&"page_ranking".to_owned()), "{r:?}");
        assert!(shown.contains(&8) && shown.contains(&9), "{shown:?}");
        // The best passage stays first.
        assert_eq!(shown[0], 1, "{shown:?}");
        // The user's pages hint turns it off.
        let r = check(&doc, &question(&["pension", "retirees"], "text", &[1, 2, 3]), 5);
        assert!(!r.methods_used.contains(&"page_ranking".to_owned()), "{r:?}");
        // When a page the page ranking puts first is shown, nothing moves.
        let r = check(&doc, &question(&["pension", "retirees"], "text", &[]), 12);
        assert!(!r.methods_used.contains(&"page_ranking".to_owned()), "{r:?}");
    }
}
