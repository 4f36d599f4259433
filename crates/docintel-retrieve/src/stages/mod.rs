//! Layer 2 of retrieval, the stages: each a function over one ranking
//! ([`RankingState`]: the candidates, what was held back, the notes and the
//! methods used) given the facts of the retrieval ([`Ctx`]). A stage
//! searches through `search` (layer 1) and matches through `matching`
//! (layer 0); it never calls another stage. The retriever (`retriever.rs`)
//! lists them in the order they run; a new stage (a reranker, say) is one
//! file here and one line in that list.

pub(crate) mod context;
pub(crate) mod coverage;
pub(crate) mod document_words;
pub(crate) mod first_search;
pub(crate) mod floor;
pub(crate) mod named;
pub(crate) mod outside;
pub(crate) mod page_ranking;
pub(crate) mod pages_hint;
pub(crate) mod parts;
pub(crate) mod reserve;
mod state;
pub(crate) mod toc;
pub(crate) mod whole_pages;

pub(crate) use state::{Ctx, RankingState, Stage};
