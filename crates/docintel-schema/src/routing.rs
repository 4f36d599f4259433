//! TOC routing contract: what a router sees at one level of the table of
//! contents, and what it picks.
//!
//! Retrieval walks the TOC top-down and shows a [`Router`] ONE level at a
//! time: each entry is one compact [`RouterLine`] (title, page range and, when
//! titles alone are ambiguous, a count of question keywords found inside the
//! branch). The router answers with a [`RouterPick`]. A deterministic router
//! (keyword evidence) and an LLM router (structured pick with reasons)
//! implement the same trait, so the walk and its trace do not depend on which
//! one ran.

use serde::{Deserialize, Serialize};

use crate::question::ParsedQuestion;

/// Evidence for one question keyword inside one branch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeywordEvidence {
    /// The keyword as the question carries it.
    pub keyword: String,
    /// Its weight in the question (1.0 is a plain content word).
    pub weight: f64,
    /// Whether it is an exact identifier (an anchor keyword such as `AC-2`).
    pub identifier: bool,
    /// Whether the entry's own title contains it.
    pub in_title: bool,
    /// Titles of entries below this one that contain it.
    pub in_sub_titles: u32,
    /// Lines of the branch's pages that contain it.
    pub in_body: u32,
}

/// One TOC entry as shown to a router: one compact line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouterLine {
    /// The TOC row id (`TocEntry::id`).
    pub id: u32,
    /// The entry title.
    pub title: String,
    /// First page of the branch.
    pub start_page: u32,
    /// Last page of the branch (inclusive).
    pub end_page: u32,
    /// Number of entries directly below this one.
    pub n_children: u32,
    /// Lines of text inside the branch's pages (the branch length).
    pub n_lines: u32,
    /// Question keywords found inside the branch (lines and sub-titles); shown
    /// on the line only when `show_hits` is set.
    pub keyword_hits: u32,
    /// Whether the count is shown (titles alone are ambiguous at this level).
    pub show_hits: bool,
    /// Per-keyword evidence, for deterministic routers; an LLM router reads
    /// only [`RouterLine::render`].
    pub evidence: Vec<KeywordEvidence>,
}

impl RouterLine {
    /// The compact text of the line: `[id] title · pp. a-b (· n hits)`.
    pub fn render(&self) -> String {
        let pages = if self.start_page == self.end_page {
            format!("p. {}", self.start_page)
        } else {
            format!("pp. {}-{}", self.start_page, self.end_page)
        };
        let mut line = format!("[{}] {} · {}", self.id, self.title, pages);
        if self.show_hits {
            line.push_str(&format!(" · {} keyword hits", self.keyword_hits));
        }
        line
    }
}

/// What a router picked at one level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouterPick {
    /// TOC row ids picked (a few at most), best first; empty when nothing at
    /// this level relates to the question.
    pub ids: Vec<u32>,
    /// Why, in plain words.
    pub reason: String,
}

/// Picks the branch(es) of one TOC level that answer a question.
pub trait Router {
    /// The router's error type.
    type Error: std::error::Error + Send + Sync + 'static;
    /// Picks among `lines` (one level of the TOC, in document order).
    fn route(&self, lines: &[RouterLine], question: &ParsedQuestion) -> Result<RouterPick, Self::Error>;
    /// Name and version for the audit trail.
    fn name(&self) -> String;
}
