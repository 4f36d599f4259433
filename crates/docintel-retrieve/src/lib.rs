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

mod batch;
pub mod bm25;
mod context;
mod corpus;
mod coverage;
#[cfg(feature = "embeddings")]
pub mod embed;
mod inflect;
mod keyword;
mod lines;
mod llm_router;
mod named;
mod pages;
mod toc;

pub use batch::RetrievalState;
pub use context::MAX_SECTION_PAGES;
pub use corpus::{CorpusFile, CorpusRoute, corpus_lines, route_corpus};
pub use keyword::{KeywordRetriever, PAGE_EVIDENCE, RELEVANCE_FLOOR, RetrieveConfig, RetrieveError};
pub use llm_router::{LlmRouter, LlmRouterError, ROUTER_SCHEMA_NAME};
pub use toc::{KeywordRouter, RoutingConfig};
