//! TOC routing, one level at a time.
//!
//! The walk shows a [`Router`] the top level of the TOC as compact
//! [`RouterLine`]s, opens the picked branch(es) and repeats on their children.
//! It stops at a leaf, at a section small enough to read whole
//! ([`RoutingConfig::small_section_pages`]), or when a listing question wants
//! everything under the heading it reached (no title below it matches the
//! question better). Depth is bounded by the tree: every level is strictly
//! deeper than the previous one.
//!
//! [`KeywordRouter`] is the deterministic router: BM25-style keyword evidence
//! per branch (body lines, titles weighted higher, sub-titles in between);
//! when the question carries an exact identifier, only branches containing it
//! compete.

use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;

use docintel_schema::text::normalize;
use docintel_schema::{
    AnswerShape, KeywordEvidence, ParsedDocument, ParsedQuestion, Router, RouterLine, RouterPick, TocEntry, TraceEvent,
    TraceSink,
};
use serde_json::json;

use crate::bm25::{B, K1, idf};
use crate::keyword::PreparedKeyword;

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

/// The deterministic router (`keyword-router/0.1`): scores each line from its
/// keyword evidence and picks the best branch plus near-ties.
#[derive(Debug, Clone, Copy)]
pub struct KeywordRouter {
    max_picks: usize,
    near_tie: f64,
}

/// A keyword in the entry's own title counts this much more than body text.
const TITLE_WEIGHT: f64 = 3.0;
/// A keyword in a title below the entry.
const SUB_TITLE_WEIGHT: f64 = 1.5;

fn saturate(tf: f64, length_ratio: f64) -> f64 {
    if tf <= 0.0 {
        return 0.0;
    }
    tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length_ratio))
}

impl KeywordRouter {
    /// A router picking at most `max_picks` branches, near-ties within
    /// `near_tie` of the best score.
    pub fn new(config: RoutingConfig) -> KeywordRouter {
        KeywordRouter { max_picks: config.max_picks.max(1), near_tie: config.near_tie }
    }

    /// The score of each line, BM25-style over the lines of one level.
    pub fn scores(lines: &[RouterLine]) -> Vec<f64> {
        let n = lines.len() as f64;
        let avg_len = (lines.iter().map(|l| f64::from(l.n_lines)).sum::<f64>() / n.max(1.0)).max(1.0);
        let n_keywords = lines.first().map_or(0, |l| l.evidence.len());
        let mut scores = vec![0.0; lines.len()];
        for k in 0..n_keywords {
            let df_body = lines.iter().filter(|l| l.evidence[k].in_body > 0).count() as f64;
            let df_title = lines.iter().filter(|l| l.evidence[k].in_title).count() as f64;
            let df_sub = lines.iter().filter(|l| l.evidence[k].in_sub_titles > 0).count() as f64;
            for (score, line) in scores.iter_mut().zip(lines) {
                let e = &line.evidence[k];
                let ratio = f64::from(line.n_lines) / avg_len;
                let mut s = idf(n, df_body) * saturate(f64::from(e.in_body), ratio);
                if e.in_title {
                    s += TITLE_WEIGHT * idf(n, df_title);
                }
                s += SUB_TITLE_WEIGHT * idf(n, df_sub) * saturate(f64::from(e.in_sub_titles), 1.0);
                *score += e.weight * s;
            }
        }
        scores
    }
}

impl Router for KeywordRouter {
    type Error = Infallible;

    fn name(&self) -> String {
        "keyword-router/0.1".to_owned()
    }

    fn route(&self, lines: &[RouterLine], _question: &ParsedQuestion) -> Result<RouterPick, Infallible> {
        // Exact identifiers are identity, not meaning: only the branches
        // holding the most of the question's identifiers compete (a running
        // header naming the standard is in every branch; the control asked
        // for is not).
        let identifiers = |l: &RouterLine| {
            l.evidence.iter().filter(|e| e.identifier && (e.in_title || e.in_sub_titles > 0 || e.in_body > 0)).count()
        };
        let most = lines.iter().map(identifiers).max().unwrap_or(0);
        let with_identifier = if most == 0 { 0 } else { lines.iter().filter(|l| identifiers(l) == most).count() };
        let scores = Self::scores(lines);
        let mut order: Vec<usize> = (0..lines.len())
            .filter(|&i| most == 0 || identifiers(&lines[i]) == most)
            .filter(|&i| scores[i] > 0.0)
            .collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        let Some(&best) = order.first() else {
            return Ok(RouterPick {
                ids: vec![],
                reason: "no keyword evidence in any branch at this level".to_owned(),
            });
        };
        let cut = scores[best] * self.near_tie;
        let picked: Vec<usize> = order.into_iter().take_while(|&i| scores[i] >= cut).take(self.max_picks).collect();
        let mut reasons = Vec::new();
        if with_identifier > 0 {
            reasons.push(format!("{with_identifier} of {} branches hold {most} question identifier(s)", lines.len()));
        }
        for &i in &picked {
            let line = &lines[i];
            let in_title: Vec<&str> = line.evidence.iter().filter(|e| e.in_title).map(|e| e.keyword.as_str()).collect();
            let in_sub: Vec<&str> =
                line.evidence.iter().filter(|e| e.in_sub_titles > 0).map(|e| e.keyword.as_str()).collect();
            let mut why = format!("[{}] score {:.2}", line.id, scores[i]);
            if !in_title.is_empty() {
                why.push_str(&format!(", title has {in_title:?}"));
            }
            if !in_sub.is_empty() {
                why.push_str(&format!(", titles below have {in_sub:?}"));
            }
            why.push_str(&format!(", {} keyword hits inside", line.keyword_hits));
            reasons.push(why);
        }
        if picked.len() > 1 {
            reasons.push(format!("near-ties within {:.0}% of the best kept", self.near_tie * 100.0));
        }
        Ok(RouterPick { ids: picked.iter().map(|&i| lines[i].id).collect(), reason: reasons.join("; ") })
    }
}

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
                    // apart (see `keyword::mark_document_words`).
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
pub(crate) fn walk<R: Router>(
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
    use super::*;
    use crate::keyword::tests::{document, question};
    use docintel_schema::{Keyword, KeywordSource, TocSource};

    fn entry(id: u32, parent: Option<u32>, level: u32, title: &str, pages: (u32, u32)) -> TocEntry {
        TocEntry {
            id,
            parent,
            level,
            title: title.to_owned(),
            start_page: pages.0,
            end_page: pages.1,
            source: TocSource::Outline,
        }
    }

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
        let keywords = crate::keyword::KeywordRetriever::prepare(q).unwrap();
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

    #[test]
    fn titles_weigh_more_than_body_mentions() {
        let line = |id: u32, in_title: bool, in_body: u32| RouterLine {
            id,
            title: String::new(),
            start_page: 1,
            end_page: 1,
            n_children: 0,
            n_lines: 10,
            keyword_hits: in_body,
            show_hits: true,
            evidence: vec![KeywordEvidence {
                keyword: "audit".into(),
                weight: 1.0,
                identifier: false,
                in_title,
                in_sub_titles: 0,
                in_body,
            }],
        };
        let lines = [line(0, false, 3), line(1, true, 1), line(2, false, 0)];
        let pick = KeywordRouter::new(RoutingConfig::STANDARD).route(&lines, &question(&[], "text", &[])).unwrap();
        assert_eq!(pick.ids, vec![1], "{pick:?}");
        assert!(lines[1].render().contains("1 keyword hits"));
    }
}
