//! What the stages share: the facts of one retrieval ([`Ctx`]: the question,
//! the document as matching reads it, the knobs, the router), the ranking
//! they build in turn ([`RankingState`]), and the shape of a stage
//! ([`Stage`]).

use std::collections::BTreeSet;

use docintel_schema::{ParsedDocument, ParsedQuestion, Passage, Router, RowView, TraceSink};
use regex::Regex;

use super::toc::RouterFailure;
use crate::config::RetrieveConfig;
use crate::error::RetrieveError;
use crate::matching::{Candidate, PageIndex, PreparedKeyword};
use crate::routing::RoutingConfig;
use crate::search::Searcher;

/// One stage: reads the facts, updates the ranking, records its trace
/// events. The retriever runs its list of stages in order.
pub(crate) type Stage = fn(&mut RankingState, &Ctx<'_>, &mut dyn TraceSink) -> Result<(), RetrieveError>;

/// The facts of one retrieval, the same for every stage.
pub(crate) struct Ctx<'a> {
    /// The question.
    pub(crate) question: &'a ParsedQuestion,
    /// The document as matching reads it: its row view's (the pieces of
    /// each printed line joined). Passages use its line ids until the
    /// retriever maps them back to the document's.
    pub(crate) document: &'a ParsedDocument,
    /// The row view, for the document's line ids in trace events.
    pub(crate) rows: &'a RowView<'static>,
    /// The document's lines normalised, by line index.
    pub(crate) normalized: &'a [String],
    /// BM25 over the document's pages.
    pub(crate) page_index: &'a PageIndex,
    /// The line search over this document.
    pub(crate) searcher: Searcher<'a>,
    /// The kind of value the question asks for: its name and pattern.
    pub(crate) kind: Option<(&'static str, Regex)>,
    /// Passage counts and window.
    pub(crate) config: RetrieveConfig,
    /// Knobs of the TOC walk.
    pub(crate) routing: RoutingConfig,
    /// The relevance floor (share of the best score).
    pub(crate) floor: f64,
    /// The TOC router, its error boxed.
    pub(crate) router: &'a dyn Router<Error = RouterFailure>,
}

impl Ctx<'_> {
    /// The pattern of the kind of value asked for.
    pub(crate) fn kind_re(&self) -> Option<&Regex> {
        self.kind.as_ref().map(|(_, re)| re)
    }
}

/// The ranking the stages build in turn, and what they say about it.
#[derive(Default)]
pub(crate) struct RankingState {
    /// The question's keywords, prepared (the `document_words` stage marks
    /// those that name the document).
    pub(crate) keywords: Vec<PreparedKeyword>,
    /// The pages the question names that exist.
    pub(crate) hinted: BTreeSet<u32>,
    /// The pages TOC routing chose, when it routed.
    pub(crate) routed: Option<BTreeSet<u32>>,
    /// The pages the first search covered (`None`: all of them).
    pub(crate) scope: Option<BTreeSet<u32>>,
    /// The first search's IDF of each keyword.
    pub(crate) idf: Vec<f64>,
    /// The lines the first search matched.
    pub(crate) lines_matched: usize,
    /// The candidates, best first: the first `top_k` are shown.
    pub(crate) ranked: Vec<Candidate>,
    /// Candidates held back from the ranking, for the reserve.
    pub(crate) held_back: Vec<Candidate>,
    /// Passages shown after the first `top_k` (a compound question's parts'
    /// own best passages, `parts` stage).
    pub(crate) extra_shown: Vec<Candidate>,
    /// Passages from outside the routed sections, for the reserve.
    pub(crate) outside: Vec<Passage>,
    /// The passages shown, once the ranking is cut (`reserve` stage).
    pub(crate) passages: Vec<Passage>,
    /// The next batch, once the ranking is cut.
    pub(crate) reserve: Vec<Passage>,
    /// What retrieval did, in words.
    pub(crate) notes: Vec<String>,
    /// The methods used, by name.
    pub(crate) methods_used: Vec<String>,
}
