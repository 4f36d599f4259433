//! Layer 0 of retrieval, matching: the question's keywords prepared once
//! ([`prepare`]: inflections, regexes, identifiers), found on word boundaries
//! in the normalised lines of a document's row view (cached per document,
//! [`LineCache`], with its [`PageIndex`]), the kind of value asked for
//! ([`kind_pattern`]), and the passages and candidates the layers above
//! rank. Nothing here ranks, and nothing here uses the layers above it
//! (`search`, `routing`, `stages`, the retriever).

mod inflect;
mod keyword;
mod kind;
mod lines;
mod page_index;
mod passage;
mod words;

pub(crate) use keyword::{PreparedKeyword, prepare};
pub(crate) use kind::kind_pattern;
pub(crate) use lines::LineCache;
pub(crate) use page_index::PageIndex;
pub(crate) use passage::{Candidate, merge_all, merge_into, overlaps, page_bounds, page_range, whole_page};
pub(crate) use words::{Form, contains_word_with, form};
