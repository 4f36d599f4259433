//! The TOC walk, one level at a time.
//!
//! The walk shows a [`Router`] the top level of the TOC as compact
//! [`RouterLine`]s, opens the picked branch(es) and repeats on their children.
//! It stops at a leaf, at a section small enough to read whole
//! ([`RoutingConfig::small_section_pages`]), or when a listing question wants
//! everything under the heading it reached (no title below it matches the
//! question better). Depth is bounded by the tree: every level is strictly
//! deeper than the previous one.

use std::collections::{BTreeMap, BTreeSet};

use docintel_schema::text::normalize;
use docintel_schema::{
    AnswerShape, KeywordEvidence, ParsedDocument, ParsedQuestion, Router, RouterLine, TocEntry, TraceEvent, TraceSink,
};
use serde_json::json;

use super::RoutingConfig;
use crate::matching::PreparedKeyword;

/// What the walk decided.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RouteOutcome {
    /// TOC rows where the walk stopped, with the stop reason.
    pub(crate) sections: Vec<(u32, String)>,
    /// The pages of those sections.
    pub(crate) pages: BTreeSet<u32>,
    /// Router lines shown over all levels.
    pub(crate) lines_shown: usize,
    /// Levels walked.
    pub(crate) levels: usize,
}

/// Per-keyword, per-page counts of matching lines, as prefix sums, so the
/// evidence of any page range is two lookups.
struct PageCounts {
    /// `prefix[k][p]`: lines matching keyword `k` on pages `1..=p`.
    prefix: Vec<Vec<u32>>,
    /// `lines[p]`: lines on pages `1..=p`.
    lines: Vec<u32>,
}

impl PageCounts {
    fn new(document: &ParsedDocument, normalized: &[String], keywords: &[PreparedKeyword]) -> PageCounts {
        let n_pages = document.pages.len().max(document.lines.last().map_or(0, |l| l.page as usize));
        let mut per_page = vec![vec![0u32; n_pages + 1]; keywords.len()];
        let mut lines = vec![0u32; n_pages + 1];
        for (line, text) in document.lines.iter().zip(normalized) {
            let page = line.page as usize;
            if page > n_pages {
                continue;
            }
            lines[page] += 1;
            for (k, keyword) in keywords.iter().enumerate() {
                if keyword.matches(text) {
                    per_page[k][page] += 1;
                }
            }
        }
        let prefix_of = |v: &mut Vec<u32>| {
            for p in 1..v.len() {
                v[p] += v[p - 1];
            }
        };
        per_page.iter_mut().for_each(prefix_of);
        prefix_of(&mut lines);
        PageCounts { prefix: per_page, lines }
    }

    fn range(v: &[u32], start: u32, end: u32) -> u32 {
        let hi = (end as usize).min(v.len().saturating_sub(1));
        let lo = (start as usize).saturating_sub(1).min(hi);
        v[hi] - v[lo]
    }
}

/// The TOC as a tree.
struct Tree<'a> {
    entries: BTreeMap<u32, &'a TocEntry>,
    children: BTreeMap<Option<u32>, Vec<u32>>,
}

impl<'a> Tree<'a> {
    fn new(toc: &'a [TocEntry]) -> Tree<'a> {
        let entries: BTreeMap<u32, &TocEntry> = toc.iter().map(|e| (e.id, e)).collect();
        let mut children: BTreeMap<Option<u32>, Vec<u32>> = BTreeMap::new();
        for entry in toc {
            // A parent that does not exist makes the entry a root; a parent
            // not strictly shallower would allow cycles: treat it as a root.
            let parent = entry.parent.filter(|p| entries.get(p).is_some_and(|pe| pe.level < entry.level));
            children.entry(parent).or_default().push(entry.id);
        }
        Tree { entries, children }
    }

    fn children(&self, id: Option<u32>) -> &[u32] {
        self.children.get(&id).map_or(&[], Vec::as_slice)
    }

    fn descendants(&self, id: u32, out: &mut Vec<u32>) {
        for &child in self.children(Some(id)) {
            out.push(child);
            self.descendants(child, out);
        }
    }
}

fn title_score(title: &str, keywords: &[PreparedKeyword]) -> f64 {
    let text = normalize(title);
    keywords.iter().filter(|k| k.matches(&text)).map(|k| k.weight).sum()
}

/// Builds the compact lines of one level.
fn level_lines(tree: &Tree<'_>, ids: &[u32], keywords: &[PreparedKeyword], counts: &PageCounts) -> Vec<RouterLine> {
    let mut lines: Vec<RouterLine> = ids
        .iter()
        .map(|&id| {
            let entry = tree.entries[&id];
            let title = normalize(&entry.title);
            let mut below = Vec::new();
            tree.descendants(id, &mut below);
            let below_titles: Vec<String> = below.iter().map(|d| normalize(&tree.entries[d].title)).collect();
            let evidence: Vec<KeywordEvidence> = keywords
                .iter()
                .enumerate()
                .map(|(k, keyword)| KeywordEvidence {
                    keyword: keyword.label.clone(),
                    // A word naming the whole document tells no branch
                    // apart (see `stages::document_words`).
                    weight: if keyword.names_document { 0.0 } else { keyword.weight },
                    identifier: keyword.pinning,
                    in_title: keyword.matches(&title),
                    in_sub_titles: below_titles.iter().filter(|t| keyword.matches(t)).count() as u32,
                    in_body: PageCounts::range(&counts.prefix[k], entry.start_page, entry.end_page),
                })
                .collect();
            let keyword_hits = evidence.iter().map(|e| e.in_body + e.in_sub_titles).sum();
            RouterLine {
                id,
                title: entry.title.clone(),
                start_page: entry.start_page,
                end_page: entry.end_page,
                n_children: tree.children(Some(id)).len() as u32,
                n_lines: PageCounts::range(&counts.lines, entry.start_page, entry.end_page),
                keyword_hits,
                show_hits: false,
                evidence,
            }
        })
        .collect();
    // Titles alone are ambiguous when none, or several, carry a keyword.
    let titled = lines.iter().filter(|l| l.evidence.iter().any(|e| e.in_title)).count();
    let ambiguous = titled != 1;
    for line in &mut lines {
        line.show_hits = ambiguous;
    }
    lines
}

/// Walks the TOC of `document` one level at a time with `router`. Returns
/// `None` when the document has no TOC or the router picked nothing at the
/// top level. Records one `toc_level` trace event per level.
pub(crate) fn walk<R: Router + ?Sized>(
    router: &R,
    question: &ParsedQuestion,
    document: &ParsedDocument,
    normalized: &[String],
    keywords: &[PreparedKeyword],
    config: RoutingConfig,
    trace: &mut dyn TraceSink,
) -> Result<Option<RouteOutcome>, R::Error> {
    if document.toc.is_empty() {
        return Ok(None);
    }
    let tree = Tree::new(&document.toc);
    let counts = PageCounts::new(document, normalized, keywords);
    let document_words: Vec<&str> = keywords.iter().filter(|k| k.names_document).map(|k| k.label.as_str()).collect();
    let listing = question.answer_shape == AnswerShape::Listing;
    let mut level: Vec<u32> = tree.children(None).to_vec();
    let mut opened: Vec<u32> = Vec::new();
    let mut sections: Vec<(u32, String)> = Vec::new();
    let mut lines_shown = 0;
    let mut depth = 0;
    while !level.is_empty() {
        depth += 1;
        let lines = level_lines(&tree, &level, keywords, &counts);
        lines_shown += lines.len();
        let pick = router.route(&lines, question)?;
        let mut next = Vec::new();
        let mut decisions = Vec::new();
        let picked: Vec<u32> = pick.ids.iter().copied().filter(|id| level.contains(id)).collect();
        if picked.is_empty() {
            // Nothing at this level relates: read what was opened whole.
            for &id in &opened {
                sections.push((id, "no child relates to the question: read the opened section whole".to_owned()));
            }
        }
        for &id in &picked {
            let entry = tree.entries[&id];
            let kids = tree.children(Some(id));
            let span = entry.end_page.saturating_sub(entry.start_page) + 1;
            let stop = if kids.is_empty() {
                Some("leaf".to_owned())
            } else if span <= config.small_section_pages {
                Some(format!("small enough to read whole ({span} pages)"))
            } else if listing {
                let own = title_score(&entry.title, keywords);
                let mut below = Vec::new();
                tree.descendants(id, &mut below);
                let best_below =
                    below.iter().map(|d| title_score(&tree.entries[d].title, keywords)).fold(0.0, f64::max);
                (best_below <= own).then(|| "listing: no title below matches better, read the whole section".to_owned())
            } else {
                None
            };
            match stop {
                Some(reason) => {
                    decisions.push(json!({"id": id, "stop": reason}));
                    sections.push((id, reason));
                }
                None => {
                    decisions.push(json!({"id": id, "open": kids.len()}));
                    next.extend_from_slice(kids);
                }
            }
        }
        trace.record(TraceEvent {
            brick: "retrieve".to_owned(),
            step: "toc_level".to_owned(),
            detail: json!({
                "router": router.name(),
                "depth": depth,
                "lines": lines.iter().map(RouterLine::render).collect::<Vec<_>>(),
                "pick": picked,
                "reason": pick.reason,
                "decisions": decisions,
                "document_words": document_words,
            }),
        });
        opened = picked.into_iter().filter(|id| !sections.iter().any(|(s, _)| s == id)).collect();
        level = next;
    }
    if sections.is_empty() {
        return Ok(None);
    }
    let pages = sections
        .iter()
        .flat_map(|(id, _)| {
            let entry = tree.entries[id];
            entry.start_page..=entry.end_page
        })
        .collect();
    Ok(Some(RouteOutcome { sections, pages, lines_shown, levels: depth }))
}
#[cfg(test)]
mod tests {
    use docintel_schema::{Keyword, KeywordSource};

    use super::*;
    use crate::matching::prepare;
    use crate::routing::KeywordRouter;
    use crate::test_support::{document, question};

    use crate::test_support::toc_entry as entry;

    /// A small standard: a front page, a chapter of two families of
    /// controls, each control on its own page.
    fn standard() -> ParsedDocument {
        let mut doc = document(&[
            &["Catalog of controls", "Security and privacy"],
            &["AC-1 Policy", "access control policy", "Related Controls: AU-2"],
            &["AC-2 Account Management", "manage accounts", "Related Controls: AU-2"],
            &["AC-3 Access Enforcement", "enforce access", "Related Controls: AC-2"],
            &["AU-1 Policy", "audit policy", "Related Controls: AC-2"],
            &["AU-2 Event Logging", "log events", "Related Controls: AC-3"],
        ]);
        doc.toc = vec![
            entry(0, None, 1, "Catalog of controls", (1, 1)),
            entry(1, None, 1, "Chapter Three: The Controls", (2, 6)),
            entry(2, Some(1), 2, "3.1 Access Control", (2, 4)),
            entry(3, Some(2), 3, "AC-1 Policy", (2, 2)),
            entry(4, Some(2), 3, "AC-2 Account Management", (3, 3)),
            entry(5, Some(2), 3, "AC-3 Access Enforcement", (4, 4)),
            entry(6, Some(1), 2, "3.2 Audit and Accountability", (5, 6)),
            entry(7, Some(6), 3, "AU-1 Policy", (5, 5)),
            entry(8, Some(6), 3, "AU-2 Event Logging", (6, 6)),
        ];
        doc
    }

    fn check(doc: &ParsedDocument, q: &ParsedQuestion, small: u32) -> (Option<RouteOutcome>, Vec<TraceEvent>) {
        let keywords = prepare(q).unwrap();
        let normalized: Vec<String> = doc.lines.iter().map(|l| normalize(&l.text)).collect();
        let config = RoutingConfig { small_section_pages: small, ..RoutingConfig::STANDARD };
        let mut events = Vec::new();
        let outcome = walk(&KeywordRouter::new(config), q, doc, &normalized, &keywords, config, &mut events).unwrap();
        if let Some(o) = &outcome {
            assert_eq!(
                o.lines_shown,
                events.iter().map(|e| e.detail["lines"].as_array().unwrap().len()).sum::<usize>()
            );
        }
        (outcome, events)
    }

    fn identifier(q: &mut ParsedQuestion, id: &str) {
        q.keywords.push(Keyword {
            text: id.into(),
            weight: 3.0,
            source: KeywordSource::Anchor,
            is_regex: false,
            semantic_group: None,
        });
    }

    #[test]
    fn descends_one_level_at_a_time_to_the_identified_leaf() {
        let doc = standard();
        let mut q = question(&["title", "control"], "text", &[]);
        identifier(&mut q, "AC-2");
        let (outcome, events) = check(&doc, &q, 0);
        let outcome = outcome.unwrap();
        assert_eq!(outcome.sections, vec![(4, "leaf".to_owned())]);
        assert_eq!(outcome.pages, BTreeSet::from([3]));
        // 2 top entries, 2 families, 3 controls: never the whole TOC at once.
        let shown: Vec<usize> = events.iter().map(|e| e.detail["lines"].as_array().unwrap().len()).collect();
        assert_eq!(shown, vec![2, 2, 3]);
        assert_eq!(events[0].step, "toc_level");
        assert_eq!(events[0].detail["pick"], json!([1]));
    }

    #[test]
    fn stops_at_a_section_small_enough_to_read_whole() {
        let doc = standard();
        let q = question(&["audit", "policy", "log", "events"], "text", &[]);
        let (outcome, _) = check(&doc, &q, 2);
        let outcome = outcome.unwrap();
        assert_eq!(outcome.sections.len(), 1, "{outcome:?}");
        assert_eq!(outcome.sections[0].0, 6);
        assert!(outcome.sections[0].1.contains("small enough"));
        // With a smaller threshold the walk goes on to a control.
        let (outcome, _) = check(&doc, &q, 1);
        assert_ne!(outcome.unwrap().sections[0].0, 6);
    }

    #[test]
    fn a_listing_stops_at_the_heading_it_names() {
        let doc = standard();
        let mut q = question(&["access", "control", "family"], "text", &[]);
        q.answer_shape = AnswerShape::Listing;
        let (outcome, _) = check(&doc, &q, 0);
        let outcome = outcome.unwrap();
        assert_eq!(outcome.sections[0].0, 2, "{outcome:?}");
        assert!(outcome.sections[0].1.starts_with("listing"));
        // The same words as a single-value question descend further.
        q.answer_shape = AnswerShape::Single;
        let (outcome, _) = check(&doc, &q, 0);
        assert_ne!(outcome.unwrap().sections[0].0, 2);
    }

    #[test]
    fn the_branch_holding_more_identifiers_wins_over_a_matching_title() {
        let mut doc = standard();
        doc.toc[0].title = "Catalog SP 800-53 of controls security privacy".into();
        for line in doc.lines.iter_mut() {
            line.text.push_str(" SP 800-53");
        }
        let mut q = question(&["catalog", "security", "privacy", "controls"], "text", &[]);
        identifier(&mut q, "SP 800-53");
        identifier(&mut q, "AU-2");
        let (outcome, events) = check(&doc, &q, 0);
        assert_eq!(events[0].detail["pick"], json!([1]), "{events:?}");
        assert_eq!(outcome.unwrap().sections[0].0, 8);
    }

    #[test]
    fn no_evidence_gives_no_route() {
        let doc = standard();
        let (outcome, events) = check(&doc, &question(&["zebra"], "text", &[]), 0);
        assert!(outcome.is_none());
        assert_eq!(events.len(), 1);
        let mut no_toc = standard();
        no_toc.toc.clear();
        assert!(check(&no_toc, &question(&["audit"], "text", &[]), 0).0.is_none());
    }
}
