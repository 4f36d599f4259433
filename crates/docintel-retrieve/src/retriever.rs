//! Layer 3 of retrieval, the retriever: [`KeywordRetriever`] prepares the
//! question's keywords, reads the document's row view and normalised lines
//! (cached), and runs the stages ([`STAGES`], in order) over one ranking;
//! then it maps the passages back to the document's line ids and records
//! the `keyword_search` trace event.

use docintel_schema::{ParsedDocument, ParsedQuestion, Passage, Retrieval, Retriever, Router, TraceEvent, TraceSink};
use serde_json::json;

use crate::config::RetrieveConfig;
use crate::error::RetrieveError;
use crate::matching::{LineCache, kind_pattern, prepare};
use crate::routing::{KeywordRouter, RoutingConfig};
use crate::search::Searcher;
use crate::stages::toc::Boxed;
use crate::stages::{
    Ctx, RankingState, Stage, context, coverage, document_words, first_search, floor, named, outside, page_ranking,
    pages_hint, parts, reserve, toc, whole_pages,
};

/// The deterministic lexical retriever.
#[derive(Debug, Clone)]
pub struct KeywordRetriever {
    config: RetrieveConfig,
    routing: RoutingConfig,
    floor: f64,
    /// Weight of the page's keyword coverage in each line's score.
    page_evidence: f64,
    /// Normalised lines of the last documents seen (shared by clones).
    lines: LineCache,
}

/// A passage scoring below this share of the best one is dropped from the
/// passages shown (it stays in the reserve) unless it is pinned.
pub const RELEVANCE_FLOOR: f64 = 0.25;

/// The standard page-evidence weight (see
/// [`KeywordRetriever::with_page_evidence`]): off, as 1.0 measured 0.28 vs
/// 0.30 recall@5 on FinanceBench.
pub const PAGE_EVIDENCE: f64 = 0.0;

/// The stages, by name, in the order they run. Until `reserve`, they build
/// [`RankingState::ranked`] (best first); `reserve` cuts it into the passages
/// shown (the first `top_k`) and the reserve; the stages after it shape
/// those passages. A stage that reorders the ranking once it is built (a
/// reranker) goes just before `reserve`.
const STAGES: &[(&str, Stage)] = &[
    ("document_words", document_words::run),
    ("pages_hint", pages_hint::filter),
    ("toc", toc::run),
    ("first_search", first_search::run),
    ("floor", floor::run),
    ("coverage", coverage::run),
    ("named_sections", named::run),
    ("hinted_pages", pages_hint::keep_unmatched),
    ("outside_route", outside::run),
    ("page_ranking", page_ranking::run),
    // A reranker goes here.
    ("parts", parts::run),
    ("reserve", reserve::run),
    ("context", context::run),
    ("whole_pages", whole_pages::run),
];

impl KeywordRetriever {
    /// A retriever with this configuration, the standard routing knobs
    /// ([`RoutingConfig::STANDARD`]) and the standard floor
    /// ([`RELEVANCE_FLOOR`]).
    pub fn new(config: RetrieveConfig) -> KeywordRetriever {
        KeywordRetriever {
            config,
            routing: RoutingConfig::STANDARD,
            floor: RELEVANCE_FLOOR,
            page_evidence: PAGE_EVIDENCE,
            lines: LineCache::default(),
        }
    }

    /// The same retriever (sharing its cache of normalised lines) with
    /// other passage counts and window.
    pub fn with_config(mut self, config: RetrieveConfig) -> KeywordRetriever {
        self.config = config;
        self
    }

    /// The same retriever with other routing knobs.
    pub fn with_routing(mut self, routing: RoutingConfig) -> KeywordRetriever {
        self.routing = routing;
        self
    }

    /// The same retriever with another relevance floor (share of the best
    /// score under which an unpinned passage is not shown; 0 turns it off).
    pub fn with_floor(mut self, floor: f64) -> KeywordRetriever {
        self.floor = floor;
        self
    }

    /// The same retriever with another page-evidence weight `w`: a line's
    /// score is multiplied by `1 + w * c / c_max`, where `c` is its page's
    /// keyword coverage (the IDF-weighted sum of the distinct question
    /// keywords found anywhere on the page) and `c_max` the best page's, so a
    /// line on a page where the question's words meet outranks the same line
    /// on a page where they do not. 0 scores lines alone.
    pub fn with_page_evidence(mut self, weight: f64) -> KeywordRetriever {
        self.page_evidence = weight.max(0.0);
        self
    }

    /// The configuration.
    pub fn config(&self) -> RetrieveConfig {
        self.config
    }

    /// The routing knobs.
    pub fn routing(&self) -> RoutingConfig {
        self.routing
    }

    /// Retrieval with a chosen TOC router (the deterministic
    /// [`KeywordRouter`] or an LLM router implementing the same [`Router`]
    /// step). [`Retriever::retrieve`] uses the keyword router.
    pub fn retrieve_with_router<R: Router>(
        &self,
        router: &R,
        question: &ParsedQuestion,
        document: &ParsedDocument,
        trace: &mut dyn TraceSink,
    ) -> Result<Retrieval, RetrieveError> {
        self.run(&Boxed(router), question, document, trace, STAGES)
    }

    /// Runs `stages` over one ranking.
    fn run(
        &self,
        router: &dyn Router<Error = toc::RouterFailure>,
        question: &ParsedQuestion,
        document: &ParsedDocument,
        trace: &mut dyn TraceSink,
        stages: &[(&str, Stage)],
    ) -> Result<Retrieval, RetrieveError> {
        let keywords = prepare(question)?;
        // Everything below reads the row view (the pieces of each printed
        // line joined, see `docintel_schema::rows`); the passages go back to
        // the document's line ids at the end, each run whole.
        let (rows, normalized, page_index) = self.lines.get(document);
        let document = rows.document();
        let ctx = Ctx {
            question,
            document,
            rows: &rows,
            normalized: &normalized,
            page_index: &page_index,
            searcher: Searcher {
                document,
                normalized: &normalized,
                window: self.config.window,
                page_evidence: self.page_evidence,
            },
            kind: kind_pattern(&question.answer_type),
            config: self.config,
            routing: self.routing,
            floor: self.floor,
            router,
        };
        let mut state = RankingState { keywords, ..RankingState::default() };
        for (_, stage) in stages {
            stage(&mut state, &ctx, trace)?;
        }
        Ok(finish(state, &ctx, trace))
    }
}

/// The passages and the reserve in the document's line ids, each run
/// whole, with the `keyword_search` trace event.
fn finish(state: RankingState, ctx: &Ctx<'_>, trace: &mut dyn TraceSink) -> Retrieval {
    let RankingState { keywords, scope, idf, lines_matched, passages, reserve, notes, methods_used, .. } = state;
    let (rows, kind) = (ctx.rows, &ctx.kind);
    let context = ctx.question.structural_hints.answer_context;
    let passages: Vec<Passage> = passages.iter().map(|p| rows.passage_to_document(p)).collect();
    let reserve: Vec<Passage> = reserve.iter().map(|p| rows.passage_to_document(p)).collect();
    trace.record(TraceEvent {
        brick: "retrieve".to_owned(),
        step: "keyword_search".to_owned(),
        detail: json!({
            "keywords": keywords.iter().zip(&idf).map(|(k, idf)| json!({"keyword": k.label, "weight": k.weight, "idf": idf, "names_document": k.names_document})).collect::<Vec<_>>(),
            "pages_in_scope": match &scope { None => json!("all"), Some(pages) if pages.len() > 40 => json!(format!("{} pages", pages.len())), Some(pages) => json!(pages) },
            "lines_matched": lines_matched,
            "kind_boost": kind.as_ref().map(|(name, _)| *name),
            "answer_context": context,
            "passages": passages.iter().map(|p| json!({"page": p.page, "lines": [p.line_start, p.line_end], "score": p.score, "pinned": p.pinned, "matched": p.matched_keywords})).collect::<Vec<_>>(),
            "reserve": reserve.len(),
        }),
    });
    Retrieval { passages, reserve, methods_used, notes }
}

impl Retriever for KeywordRetriever {
    type Error = RetrieveError;

    fn name(&self) -> String {
        "keyword/0.2".to_owned()
    }

    fn retrieve(
        &self,
        question: &ParsedQuestion,
        document: &ParsedDocument,
        trace: &mut dyn TraceSink,
    ) -> Result<Retrieval, RetrieveError> {
        self.retrieve_with_router(&KeywordRouter::new(self.routing), question, document, trace)
    }
}

#[cfg(test)]
mod tests {
    use docintel_schema::{BBox, NullSink};

    use super::*;
    use crate::test_support::{document, question};

    #[test]
    fn the_pieces_of_a_printed_line_are_passed_on_together() {
        // The parser split each row at its tab-stop gap: "Total" and its
        // amount, "Subtotal" and its amount are lines of their own.
        let mut doc = document(&[&["Subtotal", "$3.00", "Total", "$4.11", "Thank you for your order"]]);
        let boxes = [(72.0, 100.0, 700.0), (115.0, 140.0, 700.0), (72.0, 95.0, 686.0), (115.0, 140.0, 686.0)];
        for (line, (x0, x1, y0)) in doc.lines.iter_mut().zip(boxes) {
            line.bbox = BBox { x0, y0, x1, y1: y0 + 10.0 };
        }
        doc.lines[4].bbox = BBox { x0: 72.0, y0: 600.0, x1: 300.0, y1: 610.0 };
        let retriever =
            KeywordRetriever::new(RetrieveConfig { top_k: 3, window: 0, reserve: 5, read_pages_whole: false });
        // A text question: no reaching down for an amount, the row alone.
        let r = retriever.retrieve(&question(&["total"], "text", &[]), &doc, &mut NullSink).unwrap();
        let p = &r.passages[0];
        assert_eq!((p.line_start, p.line_end, p.anchor_line), (3, 4, 3), "{r:?}");
        assert_eq!(r.passages.len(), 1, "{r:?}");
    }

    /// A stage that puts the ranking upside down, as a reranker would
    /// reorder it.
    fn upside_down(state: &mut RankingState, _: &Ctx<'_>, _: &mut dyn TraceSink) -> Result<(), RetrieveError> {
        state.ranked.reverse();
        state.methods_used.push("upside_down".to_owned());
        Ok(())
    }

    #[test]
    fn a_stage_before_the_cut_reorders_what_is_shown() {
        let doc = document(&[&["fee 10 EUR"], &["fee 20 EUR"], &["fee 30 EUR"]]);
        let q = question(&["fee"], "amount", &[]);
        let retriever =
            KeywordRetriever::new(RetrieveConfig { top_k: 2, window: 0, reserve: 5, read_pages_whole: false });
        let router = KeywordRouter::new(retriever.routing);
        let pages = |r: &Retrieval| r.passages.iter().chain(&r.reserve).map(|p| p.page).collect::<Vec<_>>();
        let plain = retriever.run(&Boxed(&router), &q, &doc, &mut NullSink, STAGES).unwrap();
        assert_eq!(pages(&plain), [1, 2, 3]);
        let at = STAGES.iter().position(|(name, _)| *name == "reserve").unwrap();
        let stages = [&STAGES[..at], &[("upside_down", upside_down as Stage)], &STAGES[at..]].concat();
        let reranked = retriever.run(&Boxed(&router), &q, &doc, &mut NullSink, &stages).unwrap();
        assert_eq!(pages(&reranked), [3, 2, 1]);
        assert_eq!(reranked.passages.len(), 2);
        assert!(reranked.methods_used.contains(&"upside_down".to_owned()));
    }
}
