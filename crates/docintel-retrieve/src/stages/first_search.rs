//! Stage `first_search`: the line search over the pages hinted, else the
//! pages routed, else the whole document; when the route holds no keyword
//! hit, the search falls back to the whole document. Its candidates start
//! the ranking.

use docintel_schema::{TraceEvent, TraceSink};
use serde_json::json;

use super::{Ctx, RankingState};
use crate::error::RetrieveError;

/// Searches the scope and starts the ranking with what it found.
pub(crate) fn run(state: &mut RankingState, ctx: &Ctx<'_>, trace: &mut dyn TraceSink) -> Result<(), RetrieveError> {
    let kind_re = ctx.kind_re();
    let mut scope = if state.hinted.is_empty() { state.routed.clone() } else { Some(state.hinted.clone()) };
    let mut search = ctx.searcher.search(&state.keywords, scope.as_ref(), kind_re, None);
    if state.routed.is_some() && search.candidates.is_empty() {
        state.notes.push("TOC routing landed on pages with no keyword hit: fell back to the whole document".to_owned());
        state.methods_used.push("toc_fallback".to_owned());
        trace.record(TraceEvent {
            brick: "retrieve".to_owned(),
            step: "toc_fallback".to_owned(),
            detail: json!({"routed_pages": state.routed, "reason": "no keyword hit on the routed pages"}),
        });
        scope = None;
        search = ctx.searcher.search(&state.keywords, None, kind_re, None);
    }
    if !state.keywords.is_empty() {
        state.methods_used.push("keyword".to_owned());
    }
    if search.candidates.iter().any(|c| c.passage.pinned) {
        state.methods_used.push("identifier_pinning".to_owned());
    }
    for (identifier, pages) in &search.unpinned {
        state.notes.push(format!(
            "identifier {identifier:?} is on {pages} pages: it names the document, not a passage, so it does not pin"
        ));
    }
    if search.extended > 0 {
        state.notes.push(format!(
            "{} passage(s) extended down their page to reach the first {} after the matched label",
            search.extended,
            ctx.kind.as_ref().map_or("value", |(name, _)| name)
        ));
    }
    state.scope = scope;
    state.idf = search.idf;
    state.lines_matched = search.lines_matched;
    state.ranked = search.candidates;
    Ok(())
}
