//! Stage `toc`: TOC routing, one level at a time, restricts the first search
//! to the pages of the sections routed (not pinned: nothing is kept without
//! a match). Skipped when the question names its pages; the walk itself is
//! `routing::walk`, with the router the retriever was given.

use std::fmt;

use docintel_schema::{ParsedQuestion, Router, RouterLine, RouterPick, TraceSink};

use super::{Ctx, RankingState};
use crate::error::RetrieveError;
use crate::routing::walk;

/// A router's error, boxed the way [`RetrieveError::Router`] carries it.
#[derive(Debug)]
pub(crate) struct RouterFailure(Box<dyn std::error::Error + Send + Sync>);

impl fmt::Display for RouterFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for RouterFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// Any router seen through one type (its error boxed), so that the stages
/// take it as a `&dyn Router`.
pub(crate) struct Boxed<'r, R>(pub(crate) &'r R);

impl<R: Router> Router for Boxed<'_, R> {
    type Error = RouterFailure;

    fn route(&self, lines: &[RouterLine], question: &ParsedQuestion) -> Result<RouterPick, RouterFailure> {
        self.0.route(lines, question).map_err(|e| RouterFailure(Box::new(e)))
    }

    fn name(&self) -> String {
        self.0.name()
    }
}

/// Walks the TOC with the router and keeps the pages of the sections it
/// reached as the route.
pub(crate) fn run(state: &mut RankingState, ctx: &Ctx<'_>, trace: &mut dyn TraceSink) -> Result<(), RetrieveError> {
    let (question, document) = (ctx.question, ctx.document);
    if !question.activations.use_toc_navigation || document.toc.is_empty() || state.keywords.is_empty() {
        return Ok(());
    }
    if !state.hinted.is_empty() {
        state.notes.push("TOC routing skipped: the question names its pages".to_owned());
        return Ok(());
    }
    let outcome = walk(ctx.router, question, document, ctx.normalized, &state.keywords, ctx.routing, trace)
        .map_err(|RouterFailure(e)| RetrieveError::Router(e))?;
    match outcome {
        Some(outcome) => {
            state.methods_used.push("toc".to_owned());
            state.notes.push(format!(
                "TOC routing: {} level(s), {} router line(s) shown, read {} ({} page(s))",
                outcome.levels,
                outcome.lines_shown,
                outcome.sections.iter().map(|(id, why)| format!("[{id}] {why}")).collect::<Vec<_>>().join(", "),
                outcome.pages.len()
            ));
            state.routed = Some(outcome.pages);
        }
        None => {
            state.notes.push("TOC routing found no branch with keyword evidence: whole document searched".to_owned())
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use docintel_schema::{NullSink, ParsedQuestion, Router};

    use crate::test_support::{check, document, question};
    use crate::{KeywordRetriever, RetrieveConfig};

    #[test]
    fn toc_routing_restricts_the_search_and_falls_back_when_it_finds_nothing() {
        let mut doc =
            document(&[&["Fees", "fee 10 EUR", "account fee"], &["Limits", "fee 20 EUR", "limit of the account"]]);
        let entry = |id: u32, title: &str, page: u32| docintel_schema::TocEntry {
            id,
            parent: None,
            level: 1,
            title: title.to_owned(),
            start_page: page,
            end_page: page,
            source: docintel_schema::TocSource::Outline,
        };
        doc.toc = vec![entry(0, "Fees", 1), entry(1, "Limits", 2)];
        let r = check(&doc, &question(&["limits", "fee"], "text", &[1]), 5);
        assert!(!r.methods_used.contains(&"toc".to_owned()), "a pages hint skips routing: {r:?}");
        let r = check(&doc, &question(&["limits", "fee"], "text", &[]), 5);
        assert!(r.methods_used.contains(&"toc".to_owned()), "{r:?}");
        // The route's best passage first; a passage among the whole
        // document's top ones that the route left out takes a last place.
        assert_eq!(r.passages[0].page, 2, "{r:?}");
        assert!(r.methods_used.contains(&"wide_shown".to_owned()), "{r:?}");
        assert!(r.passages.iter().any(|p| p.page == 1), "{r:?}");
        let r = check(&doc, &question(&["limits", "fee"], "text", &[]), 1);
        assert!(r.passages.iter().all(|p| p.page == 2), "{r:?}");
        // The next batch reaches outside the route: page 1's fee lines wait
        // in the reserve, after what the routed pages held back.
        assert!(r.methods_used.contains(&"wide_reserve".to_owned()), "{r:?}");
        assert!(r.reserve.iter().any(|p| p.page == 1), "{r:?}");
        assert!(r.notes.iter().any(|n| n.contains("outside the routed sections")), "{:?}", r.notes);
        // Without TOC navigation both pages compete.
        let mut q = question(&["limits", "fee"], "text", &[]);
        q.activations.use_toc_navigation = false;
        assert!(check(&doc, &q, 5).passages.iter().any(|p| p.page == 1));
        // A regex router that lands on a page without any hit falls back.
        struct FirstRouter;
        impl Router for FirstRouter {
            type Error = std::convert::Infallible;
            fn route(
                &self,
                lines: &[docintel_schema::RouterLine],
                _: &ParsedQuestion,
            ) -> Result<docintel_schema::RouterPick, Self::Error> {
                Ok(docintel_schema::RouterPick { ids: vec![lines[0].id], reason: "always the first".into() })
            }
            fn name(&self) -> String {
                "first".into()
            }
        }
        let retriever =
            KeywordRetriever::new(RetrieveConfig { top_k: 5, window: 0, reserve: 5, read_pages_whole: false });
        let r = retriever
            .retrieve_with_router(&FirstRouter, &question(&["limit"], "text", &[]), &doc, &mut NullSink)
            .unwrap();
        assert!(r.methods_used.contains(&"toc_fallback".to_owned()), "{r:?}");
        assert_eq!(r.passages[0].page, 2);
    }
}
