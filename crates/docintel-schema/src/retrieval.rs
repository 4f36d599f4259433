//! What retrieval hands to generation: ranked passages as line ranges.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A candidate passage: a contiguous range of lines on one page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Passage {
    /// First line (global line id).
    pub line_start: u32,
    /// Last line, inclusive.
    pub line_end: u32,
    /// The page the passage is on.
    pub page: u32,
    /// Relevance score (higher is better; comparable within one retrieval only).
    pub score: f64,
    /// The line that matched best, inside the range.
    pub anchor_line: u32,
    /// Question keywords found in the passage.
    pub matched_keywords: Vec<String>,
    /// Whether the passage was pinned (exact identifier or user page hint).
    pub pinned: bool,
}

impl Passage {
    /// Whether a line id falls inside the passage.
    pub fn contains(&self, line_id: u32) -> bool {
        (self.line_start..=self.line_end).contains(&line_id)
    }
}

/// The result of one retrieval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Retrieval {
    /// Passages to show, best first.
    pub passages: Vec<Passage>,
    /// Further ranked passages kept for a "next batch" request.
    pub reserve: Vec<Passage>,
    /// Methods that actually ran (`pages_hint`, `keyword`, `toc`, ...).
    pub methods_used: Vec<String>,
    /// Plain-words notes on what retrieval decided.
    pub notes: Vec<String>,
}
