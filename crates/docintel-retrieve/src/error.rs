//! Why retrieval fails: the crate's one error type, at the bottom of its
//! layers (preparing the keywords and the TOC stage both return it).

/// Why retrieval failed. Retrieval over a well-formed document does not fail;
/// an error means the question carried an unusable regex or the router failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum RetrieveError {
    /// A keyword marked `is_regex` does not compile.
    BadRegex {
        /// The pattern.
        pattern: String,
        /// The regex error.
        source: regex::Error,
    },
    /// The TOC router failed (an LLM router's transport, for instance).
    Router(Box<dyn std::error::Error + Send + Sync>),
}

impl std::fmt::Display for RetrieveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RetrieveError::BadRegex { pattern, .. } => write!(f, "keyword regex {pattern:?} does not compile"),
            RetrieveError::Router(_) => write!(f, "the TOC router failed"),
        }
    }
}

impl std::error::Error for RetrieveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RetrieveError::BadRegex { source, .. } => Some(source),
            RetrieveError::Router(source) => Some(source.as_ref()),
        }
    }
}
