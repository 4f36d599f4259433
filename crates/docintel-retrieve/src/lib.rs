//! docintel-retrieve: given a parsed question and a parsed document, which
//! lines matter?
//!
//! [`KeywordRetriever`] is the deterministic retriever: pages hint first
//! (hinted pages survive even without a keyword match), TOC routing one level
//! at a time ([`KeywordRouter`], or any [`Router`] through
//! [`KeywordRetriever::retrieve_with_router`], such as [`LlmRouter`], whose
//! invalid replies fall back to the keyword router) with a fallback to the whole
//! document, exact identifier pinning, weighted lexical scoring over lines
//! with an IDF weight per keyword, windows on the same page, merged; then a
//! relevance floor (the nearest passage always kept), a coverage second pass
//! decided in code, the answer context the question asks for, and a reserve
//! served once as the next batch ([`RetrievalState`]). It reads the
//! document's row view ([`docintel_schema::RowView`]: the pieces of each
//! printed line, split by the parser at tab-stop gaps, joined), so window
//! sizes count printed lines and a row's words score together; passages come
//! back in the line table's ids, each run whole.
//!
//! ```
//! use docintel_retrieve::{KeywordRetriever, RetrieveConfig, RoutingConfig};
//! let retriever = KeywordRetriever::new(RetrieveConfig { top_k: 5, window: 2, reserve: 10, read_pages_whole: false })
//!     .with_routing(RoutingConfig { small_section_pages: 3, ..RoutingConfig::STANDARD });
//! assert_eq!(retriever.config().top_k, 5);
//! assert_eq!(retriever.routing().small_section_pages, 3);
//! ```
//!
//! [`Router`]: docintel_schema::Router

#![warn(missing_docs)]

// The layers, arrows pointing down only (`cargo xtask tidy` checks that no
// two modules import each other): `error`, `config` and `bm25` at the
// bottom; `matching` (layer 0); `search` and `routing` (layer 1); `stages`
// (layer 2); `retriever` (layer 3), and beside it `corpus` and `batch`,
// which run before and after a retrieval.
mod batch;
pub mod bm25;
mod config;
mod corpus;
#[cfg(feature = "embeddings")]
pub mod embed;
mod error;
mod matching;
mod retriever;
mod routing;
mod search;
mod stages;
#[cfg(test)]
mod test_support;

pub use batch::RetrievalState;
pub use config::RetrieveConfig;
pub use corpus::{CorpusFile, CorpusRoute, corpus_lines, route_corpus};
pub use error::RetrieveError;
pub use retriever::{KeywordRetriever, PAGE_EVIDENCE, RELEVANCE_FLOOR};
pub use routing::{KeywordRouter, LlmRouter, LlmRouterError, ROUTER_SCHEMA_NAME, RoutingConfig};
pub use stages::context::MAX_SECTION_PAGES;
