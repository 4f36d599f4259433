//! docintel-retrieve: given a parsed question and a parsed document, which
//! lines matter?
//!
//! [`KeywordRetriever`] is the deterministic retriever: pages hint first
//! (hinted pages survive even without a keyword match), exact identifier
//! pinning, then weighted lexical scoring over lines with an IDF weight per
//! keyword, expanded to small windows on the same page and merged.
//!
//! ```
//! use docintel_retrieve::{KeywordRetriever, RetrieveConfig};
//! let retriever = KeywordRetriever::new(RetrieveConfig { top_k: 5, window: 2, reserve: 10 });
//! assert_eq!(retriever.config().top_k, 5);
//! ```

#![warn(missing_docs)]

mod keyword;

pub use keyword::{KeywordRetriever, RetrieveConfig, RetrieveError};
