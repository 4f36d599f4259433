//! Stage `named_sections`: the question points to a part of the document by what it
//! is ("shown in the balance sheet"), which the parser reports as the titles
//! a document prints over that part (`ScopeFilters::sections`, alternatives
//! joined by ` | `). A filing's table of contents rarely lists its financial
//! statements, and their words are on a hundred pages; the statement itself
//! is the page *headed* by the title and full of figures.
//!
//! A page qualifies when one of its first [`HEAD_ROWS`] rows is a heading for
//! a title: short ([`MAX_TITLE_WORDS`]), not a sentence, mostly the title
//! (compared with every space removed, so "Cash Flow s" as extracted still
//! reads "cash flows"), with no word that makes it a table *about* the part
//! ("Selected Income Statement Data"); and when at least
//! [`MIN_FIGURE_ROWS`] of its rows carry a figure, which tells the statement
//! from the index page listing it and from notes that mention it. Of the
//! qualifying pages, the first whose heading says "consolidated" wins (a
//! parent-only or guarantor copy comes later), else the first; the next page
//! joins it when it continues the statement under its title. Each page
//! found goes first, whole, in the place of the passages found on it.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use docintel_schema::text::{normalize, squash};
use docintel_schema::{Line, ParsedDocument, Passage, TraceEvent, TraceSink};
use regex::Regex;
use serde_json::json;

use super::{Ctx, RankingState};
use crate::error::RetrieveError;
use crate::matching::{Candidate, page_bounds, page_range};

/// Named sections ("shown in the balance sheet"): the page headed by the
/// part's title goes first, with its best-matching lines. Off with a pages
/// hint.
pub(crate) fn run(state: &mut RankingState, ctx: &Ctx<'_>, trace: &mut dyn TraceSink) -> Result<(), RetrieveError> {
    if !state.hinted.is_empty() {
        return Ok(());
    }
    let sections = &ctx.question.retrieval.scope.sections;
    let named = find(ctx.document, sections);
    if named.is_empty() {
        if !sections.is_empty() {
            state
                .notes
                .push(format!("no page headed by the section(s) the question points to: {}", sections.join("; ")));
        }
        return Ok(());
    }
    let mut front: Vec<Candidate> = Vec::new();
    for page in &named {
        // The page whole replaces the passages found on it.
        state.ranked.retain(|c| c.passage.page != page.page);
        state.held_back.retain(|c| c.passage.page != page.page);
        front.push(page_passage(state, ctx, page));
    }
    trace.record(TraceEvent {
        brick: "retrieve".to_owned(),
        step: "named_section".to_owned(),
        detail: json!({
            "sections": sections,
            "pages": named.iter().map(|p| json!({"section": p.section, "page": p.page, "heading": p.title, "figure_rows": p.figure_rows})).collect::<Vec<_>>(),
        }),
    });
    state.notes.push(format!(
        "named section(s) put first: {}",
        named.iter().map(|p| format!("p. {} '{}'", p.page, p.title)).collect::<Vec<_>>().join(", ")
    ));
    state.methods_used.push("named_section".to_owned());
    front.append(&mut state.ranked);
    state.ranked = front;
    Ok(())
}

/// The passage shown for a named section's page: the whole page (a
/// statement is read whole: its header row of years says which column
/// is which), anchored on its best keyword match, else its heading.
fn page_passage(state: &RankingState, ctx: &Ctx<'_>, page: &NamedPage) -> Candidate {
    let scope = BTreeSet::from([page.page]);
    let search = ctx.searcher.search(&state.keywords, Some(&scope), ctx.kind_re(), None);
    let (first, last) = page_bounds(ctx.document, page.page);
    let best = search.candidates.into_iter().next();
    Candidate {
        passage: Passage {
            line_start: first,
            line_end: last,
            page: page.page,
            score: best.as_ref().map_or(0.0, |c| c.passage.score),
            anchor_line: best.as_ref().map_or(page.heading, |c| c.passage.anchor_line),
            matched_keywords: best.as_ref().map(|c| c.passage.matched_keywords.clone()).unwrap_or_default(),
            pinned: true,
        },
        discriminating: true,
        coverage: false,
    }
}

/// Rows from the top of a page searched for the title.
pub(crate) const HEAD_ROWS: usize = 12;
/// A heading row has at most this many words.
pub(crate) const MAX_TITLE_WORDS: usize = 14;
/// The title is at least this share (percent) of the heading row.
const MIN_TITLE_SHARE: usize = 35;
/// Rows carrying a figure on a statement page, at least.
pub(crate) const MIN_FIGURE_ROWS: usize = 12;

/// A page found for one named section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NamedPage {
    /// Index of the section in the question's list.
    pub(crate) section: usize,
    /// The page.
    pub(crate) page: u32,
    /// The heading row's line id.
    pub(crate) heading: u32,
    /// The heading row's text.
    pub(crate) title: String,
    /// Rows on the page carrying a figure.
    pub(crate) figure_rows: usize,
}

/// A figure in a row: `1,577`, `(370)`, `12.5`, `$ 5`.
static FIGURE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\d{1,3}(?:,\d{3})+|\(\d[\d.,]*\)|\d+\.\d+|\$\s*\d").expect("static pattern compiles")
});

/// The pages of `document` headed by each of `sections` (see the module
/// docs), in section order.
pub(crate) fn find(document: &ParsedDocument, sections: &[String]) -> Vec<NamedPage> {
    if sections.is_empty() {
        return Vec::new();
    }
    let titles: Vec<Vec<String>> =
        sections.iter().map(|s| s.split(" | ").map(squash).filter(|t| !t.is_empty()).collect()).collect();
    // One pass over the pages: each page's head rows squashed once, its
    // figure rows counted once, whatever the number of sections.
    let mut hits: Vec<Vec<NamedPage>> = vec![Vec::new(); titles.len()];
    for page in document.pages.iter().map(|p| p.page) {
        let lines = &document.lines[page_range(document, page)];
        let head: Vec<(&Line, String)> = lines.iter().take(HEAD_ROWS).map(|l| (l, squash(&l.text))).collect();
        let mut figure_rows: Option<usize> = None;
        for (section, alternatives) in titles.iter().enumerate() {
            let Some((heading, _)) = head.iter().find(|(l, squashed)| is_heading(&l.text, squashed, alternatives))
            else {
                continue;
            };
            let figure_rows =
                *figure_rows.get_or_insert_with(|| lines.iter().filter(|l| FIGURE.is_match(&l.text)).count());
            if figure_rows >= MIN_FIGURE_ROWS {
                hits[section].push(NamedPage {
                    section,
                    page,
                    heading: heading.line_id,
                    title: heading.text.clone(),
                    figure_rows,
                });
            }
        }
    }
    let mut found: Vec<NamedPage> = Vec::new();
    for hits in hits {
        // The primary statement is the consolidated one when the document
        // has several (a parent-only or guarantor copy comes later).
        let consolidated = |hit: &&NamedPage| {
            let title = normalize(&hit.title);
            title.contains("consolidated") || title.contains("combined")
        };
        let Some(primary) = hits.iter().find(consolidated).or_else(|| hits.first()).cloned() else {
            continue;
        };
        // The statement continues on the next page under its title.
        let next = hits.iter().find(|h| h.page == primary.page + 1).cloned();
        found.push(primary);
        found.extend(next);
    }
    // Section order, then page order.
    found.sort_by_key(|p| (p.section, p.page));
    found.dedup_by_key(|p| p.page);
    found
}

/// Words that make a row a table or discussion *about* the part, not the
/// part itself ("Selected Income Statement Data", "Off-balance sheet
/// arrangements", "Statement of Income for Obligor Group").
const QUALIFIERS: &[&str] = &[
    "data",
    "selected",
    "key",
    "summary",
    "summarized",
    "condensed",
    "obligor",
    "guarantor",
    "parent",
    "supplemental",
    "supplementary",
    "pro",
    "quarterly",
    "segment",
    "segments",
    "highlights",
    "analysis",
    "discussion",
    "notes",
    "note",
    "off",
    "arrangements",
    "index",
    "see",
];

/// Whether `row` (`squashed`: [`squash`] of it) heads a part titled by one
/// of `titles` (squashed): a short row, not a sentence, mostly the title,
/// with no qualifier word.
fn is_heading(row: &str, squashed: &str, titles: &[String]) -> bool {
    if row.split_whitespace().count() > MAX_TITLE_WORDS || row.trim_end().ends_with('.') {
        return false;
    }
    let Some(title) = titles.iter().filter(|t| squashed.contains(t.as_str())).max_by_key(|t| t.len()) else {
        return false;
    };
    if title.len() * 100 < squashed.len() * MIN_TITLE_SHARE {
        return false;
    }
    let words = normalize(row);
    !words.split(|c: char| !c.is_alphanumeric()).any(|w| QUALIFIERS.contains(&w))
}

#[cfg(test)]
mod tests {
    use docintel_schema::{NullSink, Retriever};

    use super::*;
    use crate::test_support::{document, question};
    use crate::{KeywordRetriever, RetrieveConfig};

    const BALANCE_SHEET: &str = "balance sheet | balance sheets | statement of financial position";

    /// A page headed by `title` with `rows` figure rows.
    fn page(title: &str, rows: usize) -> Vec<String> {
        let mut lines = vec!["Table of Contents".to_owned(), title.to_owned(), "(In millions)".to_owned()];
        lines.extend((0..rows).map(|i| format!("Line item {i} 1,{i:03} 2,{i:03}")));
        lines
    }

    fn filing() -> ParsedDocument {
        let pages: Vec<Vec<String>> = vec![
            // The index lists the statement: a heading-like row, few figures.
            vec![
                "Index to Consolidated Financial Statements".to_owned(),
                "Consolidated Balance Sheets 4".to_owned(),
                "Consolidated Statements of Income 6".to_owned(),
            ],
            page("Off-Balance Sheet Arrangements", 20),
            page("Selected Balance Sheet Data", 20),
            page("Consolidated Balance Sheets", 20),
            page("Consolidated Balance Sheets (continued)", 20),
            page("Condensed Balance Sheets of the Parent", 20),
            vec!["Notes".to_owned(), "The balance sheet shows total assets of 1,000 and total assets grew.".to_owned()],
        ];
        let pages: Vec<Vec<&str>> = pages.iter().map(|p| p.iter().map(String::as_str).collect()).collect();
        let pages: Vec<&[&str]> = pages.iter().map(Vec::as_slice).collect();
        document(&pages)
    }

    #[test]
    fn the_statement_page_is_found_not_the_index_or_a_table_about_it() {
        let found = find(&filing(), &[BALANCE_SHEET.to_owned()]);
        let pages: Vec<(u32, &str)> = found.iter().map(|p| (p.page, p.title.as_str())).collect();
        assert_eq!(pages, [(4, "Consolidated Balance Sheets"), (5, "Consolidated Balance Sheets (continued)")]);
        assert!(find(&filing(), &["statement of cash flows".to_owned()]).is_empty());
        assert!(find(&filing(), &[]).is_empty());
    }

    #[test]
    fn a_named_section_goes_first_and_fails_without_it() {
        let doc = filing();
        let retriever =
            KeywordRetriever::new(RetrieveConfig { top_k: 3, window: 1, reserve: 5, read_pages_whole: false });
        let mut q = question(&["total", "assets"], "amount", &[]);
        let without = retriever.retrieve(&q, &doc, &mut NullSink).unwrap();
        assert_eq!(without.passages[0].page, 7, "the notes page has the words: {without:?}");
        q.retrieval.scope.sections = vec![BALANCE_SHEET.to_owned()];
        let with = retriever.retrieve(&q, &doc, &mut NullSink).unwrap();
        let pages: Vec<u32> = with.passages.iter().map(|p| p.page).collect();
        assert_eq!(pages[..2], [4, 5], "{with:?}");
        assert!(with.passages[..2].iter().all(|p| p.pinned));
        assert!(with.methods_used.contains(&"named_section".to_owned()));
    }
}
