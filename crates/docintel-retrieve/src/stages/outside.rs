//! Stage `outside_route`: wider than the route. When TOC routing narrowed
//! the search, a passage the whole-document search ranks among its top ones
//! but the route left out takes one of the last places shown (a section
//! title does not always say what the section holds), and the best others
//! go to the reserve, so that "not in this section" leads elsewhere instead
//! of nowhere. Also [`show_outside`], which the `page_ranking` stage shares.

use docintel_schema::TraceSink;

use super::{Ctx, RankingState};
use crate::error::RetrieveError;
use crate::matching::{Candidate, overlaps};

/// Places shown to passages the whole-document search ranks in its top but
/// TOC routing left out.
const OUTSIDE_SHOWN: usize = 2;

/// Searches the whole document when the first search covered the route
/// only: its best passages outside the route are shown or held for the
/// reserve.
pub(crate) fn run(state: &mut RankingState, ctx: &Ctx<'_>, _: &mut dyn TraceSink) -> Result<(), RetrieveError> {
    let (Some(routed_pages), Some(_)) = (state.routed.as_ref(), state.scope.as_ref()) else {
        return Ok(());
    };
    let top_k = ctx.config.top_k;
    let ranked = &mut state.ranked;
    let wide = ctx.searcher.search(&state.keywords, None, ctx.kind_re(), None);
    let mut top: Vec<Candidate> = Vec::new();
    let mut left_out: Vec<Candidate> = Vec::new();
    for (rank, candidate) in wide.candidates.into_iter().enumerate() {
        if routed_pages.contains(&candidate.passage.page) {
            continue;
        }
        if ranked.iter().any(|c| overlaps(&c.passage, &candidate.passage)) {
            continue;
        }
        if rank < top_k && top.len() < OUTSIDE_SHOWN && !ranked.is_empty() {
            top.push(candidate);
        } else {
            left_out.push(candidate);
        }
    }
    let (shown, not_shown) = show_outside(ranked, top, top_k, &|_| false);
    left_out.extend(not_shown);
    if shown > 0 {
        state.notes.push(format!(
            "{shown} passage(s) outside the routed sections shown: among the whole document's top {top_k}"
        ));
        state.methods_used.push("wide_shown".to_owned());
    }
    state.outside = left_out.into_iter().map(|c| c.passage).take(ctx.config.reserve.div_ceil(2)).collect();
    Ok(())
}

/// Puts `outside` passages among the first `top_k` of `ranked`: free places
/// first, then the last places held by plain passages — never the first
/// (the route's best), a pinned passage or one the coverage pass added. The
/// passages they replace move to the head of the rest. Returns how many were
/// placed and those that found no place.
pub(crate) fn show_outside(
    ranked: &mut Vec<Candidate>,
    outside: Vec<Candidate>,
    top_k: usize,
    keep: &dyn Fn(&Candidate) -> bool,
) -> (usize, Vec<Candidate>) {
    let wanted = outside.len();
    let mut outside = outside.into_iter();
    while ranked.len() < top_k {
        let Some(candidate) = outside.next() else { break };
        ranked.push(candidate);
    }
    let mut displaced: Vec<Candidate> = Vec::new();
    for at in (1..top_k.min(ranked.len())).rev() {
        if ranked[at].passage.pinned || ranked[at].coverage || keep(&ranked[at]) {
            continue;
        }
        let Some(candidate) = outside.next() else { break };
        displaced.push(std::mem::replace(&mut ranked[at], candidate));
    }
    let not_shown: Vec<Candidate> = outside.collect();
    displaced.reverse();
    let at = top_k.min(ranked.len());
    ranked.splice(at..at, displaced);
    (wanted - not_shown.len(), not_shown)
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn passages_from_outside_the_route_never_displace_the_best_a_pin_or_a_coverage_addition() {
        let candidate = |page: u32, pinned: bool, coverage: bool| Candidate {
            passage: crate::test_support::one_line(page, page, pinned),
            discriminating: true,
            coverage,
        };
        let pages = |c: &[Candidate]| c.iter().map(|c| c.passage.page).collect::<Vec<_>>();
        // Free places are filled first.
        let mut ranked = vec![candidate(1, false, false), candidate(2, false, false)];
        let (shown, rest) = show_outside(&mut ranked, vec![candidate(9, false, false)], 3, &|_| false);
        assert_eq!((shown, pages(&ranked), rest.len()), (1, vec![1, 2, 9], 0));
        // Full: the last plain passage gives way; the pinned one and the
        // coverage addition stay; the displaced one heads the rest.
        let mut ranked = vec![
            candidate(1, false, false),
            candidate(2, false, false),
            candidate(3, true, false),
            candidate(4, false, true),
            candidate(5, false, false),
        ];
        let (shown, rest) =
            show_outside(&mut ranked, vec![candidate(8, false, false), candidate(9, false, false)], 4, &|_| false);
        assert_eq!(shown, 1, "only one plain place after the best: {:?}", pages(&ranked));
        assert_eq!(pages(&ranked), [1, 8, 3, 4, 2, 5]);
        assert_eq!(pages(&rest), [9]);
        // Never before the route's best passage.
        let mut ranked = vec![candidate(1, false, false)];
        let (shown, rest) = show_outside(&mut ranked, vec![candidate(9, false, false)], 1, &|_| false);
        assert_eq!((shown, pages(&ranked), pages(&rest)), (0, vec![1], vec![9]));
    }
}
