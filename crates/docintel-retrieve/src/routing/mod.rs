//! Layer 1 of retrieval, TOC routing: which sections of a document a
//! question is about, decided one TOC level at a time ([`walk`]) by a
//! [`Router`](docintel_schema::Router): the deterministic [`KeywordRouter`]
//! or an [`LlmRouter`] (which falls back to it). The `toc` stage narrows the
//! first search to the pages routed; the corpus level (`corpus.rs`) shows
//! the same routers a folder's file list.

mod keyword_router;
mod llm_router;
mod walk;

pub use keyword_router::KeywordRouter;
pub use llm_router::{LlmRouter, LlmRouterError, ROUTER_SCHEMA_NAME};
pub(crate) use walk::walk;

/// Knobs of the TOC walk and of the keyword router.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoutingConfig {
    /// A picked section spanning at most this many pages is read whole (the
    /// walk stops descending there).
    pub small_section_pages: u32,
    /// At most this many branches picked per level.
    pub max_picks: usize,
    /// Branches scoring at least this share of the best are near-ties and
    /// picked too.
    pub near_tie: f64,
}

impl RoutingConfig {
    /// The values the offline pipeline uses: read sections of up to 2 pages
    /// whole, pick at most 3 branches per level, near-ties within 85%.
    pub const STANDARD: RoutingConfig = RoutingConfig { small_section_pages: 2, max_picks: 3, near_tie: 0.85 };
}
