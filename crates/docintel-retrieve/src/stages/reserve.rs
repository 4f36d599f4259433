//! Stage `reserve`: the ranking cut. The first `top_k` candidates are the
//! passages shown; the rest, then the candidates held back, then the
//! passages from outside the routed sections wait in the reserve, served
//! once as the next batch ([`crate::RetrievalState`]). A stage that
//! reorders the ranking (a reranker) runs before this one.

use docintel_schema::{Passage, TraceSink};

use super::{Ctx, RankingState};
use crate::error::RetrieveError;
use crate::matching::overlaps;

/// Cuts the ranking into the passages shown and the reserve.
pub(crate) fn run(state: &mut RankingState, ctx: &Ctx<'_>, _: &mut dyn TraceSink) -> Result<(), RetrieveError> {
    let top_k = ctx.config.top_k;
    let mut passages: Vec<Passage> = std::mem::take(&mut state.ranked).into_iter().map(|c| c.passage).collect();
    let mut rest = passages.split_off(top_k.min(passages.len()));
    let extra: Vec<Passage> = state.extra_shown.drain(..).map(|c| c.passage).collect();
    rest.retain(|r| !extra.iter().any(|e| overlaps(e, r)));
    passages.extend(extra);
    rest.extend(state.held_back.drain(..).map(|c| c.passage));
    let outside = std::mem::take(&mut state.outside);
    if !outside.is_empty() {
        rest.truncate(ctx.config.reserve - outside.len());
        state.notes.push(format!(
            "next batch: {} passage(s) from outside the routed sections held in the reserve",
            outside.len()
        ));
        state.methods_used.push("wide_reserve".to_owned());
        rest.extend(outside);
    }
    rest.truncate(ctx.config.reserve);
    state.passages = passages;
    state.reserve = rest;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::test_support::{check, document, question};

    #[test]
    fn overflow_goes_to_the_reserve() {
        let pages: Vec<Vec<&str>> = (0..6).map(|_| vec!["fee 10 EUR"]).collect();
        let refs: Vec<&[&str]> = pages.iter().map(|p| p.as_slice()).collect();
        let doc = document(&refs);
        let r = check(&doc, &question(&["fee"], "amount", &[]), 2);
        assert_eq!(r.passages.len(), 2);
        assert_eq!(r.reserve.len(), 4);
        assert_eq!(r.passages[0].page, 1, "ties break in document order");
    }
}
