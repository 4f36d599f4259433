//! Layer 1 of retrieval, the line search: passages ranked for a set of
//! prepared keywords over a page scope ([`Searcher::search`]).
//!
//! One pass finds the keywords each line in scope matches; each keyword gets
//! an IDF weight over those lines (a keyword on every line counts less than a
//! rare one); an exact identifier pins its lines above any score unless it
//! names the document (found on too many pages); two consecutive question
//! words side by side score again; a line carrying the kind of value asked
//! scores more; hits become windows on their page, merged; and a window
//! holding no value of the kind asked reaches down its page to one. Every
//! stage that searches (the first search, the coverage pass, named sections,
//! the outside route, page ranking) calls it.

use std::collections::{BTreeMap, BTreeSet};

use docintel_schema::{ParsedDocument, Passage};
use regex::Regex;

use crate::matching::{Candidate, Form, PreparedKeyword, contains_word_with, form, merge_all, merge_into, page_bounds};

/// A keyword on more than half the lines in scope tells lines apart no better
/// than chance: `ln(1 + 1)` is the IDF of a keyword on exactly half of them.
const BASELINE_IDF: f64 = std::f64::consts::LN_2;

/// Under this many lines in scope, document frequencies say nothing about
/// chance and the baseline rule is not applied.
const BASELINE_MIN_LINES: usize = 20;

/// An identifier found on more than this share of the pages in scope (and
/// on more than [`PIN_MIN_PAGES`] pages) names the document — a running
/// header like "NIST SP 800-53 Rev. 5" — and does not pin.
const PIN_MAX_PAGE_SHARE: f64 = 0.2;
/// Below this many pages an identifier always pins.
const PIN_MIN_PAGES: usize = 3;

/// Share of two consecutive question words' score added again when a line
/// has them side by side.
const PHRASE_BONUS: f64 = 0.5;

/// Score boost for a line that carries the kind of thing asked for.
const KIND_BONUS: f64 = 0.5;

/// How far (in lines, same page) a passage may be extended to reach a value
/// of the kind asked for.
const KIND_REACH: u32 = 8;

/// What a search reads: the document (the row view's) with its normalised
/// lines, and the retriever's window and page-evidence weight.
#[derive(Clone, Copy)]
pub(crate) struct Searcher<'a> {
    /// The document searched.
    pub(crate) document: &'a ParsedDocument,
    /// Its lines normalised, by line index.
    pub(crate) normalized: &'a [String],
    /// Lines of context added on each side of a hit (same page only).
    pub(crate) window: u32,
    /// Weight of the page's keyword coverage in each line's score (see
    /// `KeywordRetriever::with_page_evidence`); 0 scores lines alone.
    pub(crate) page_evidence: f64,
}

/// One search over a page scope.
pub(crate) struct Search {
    /// Ranked, merged passages (pinned first, then score, then document order).
    pub(crate) candidates: Vec<Candidate>,
    /// Lines with at least one keyword.
    pub(crate) lines_matched: usize,
    /// IDF of each keyword over the scope.
    pub(crate) idf: Vec<f64>,
    /// Passages extended down their page to reach a value of the kind asked.
    pub(crate) extended: usize,
    /// Identifiers that did not pin because they name the document rather
    /// than a passage (found on too many pages of the scope), with the count.
    pub(crate) unpinned: Vec<(String, usize)>,
}

/// The keywords each line in scope matches.
struct Matches {
    /// Lines in scope.
    n_lines: usize,
    /// Lines in scope matching each keyword.
    df: Vec<usize>,
    /// Each line in scope matching at least one keyword (its index in the
    /// document's lines), with the keywords it matches.
    lines: Vec<(usize, Vec<usize>)>,
}

/// What a line's score is made of, over the scope.
struct Weights {
    /// IDF of each keyword.
    idf: Vec<f64>,
    /// Whether each keyword pins (an identifier that does not name the
    /// document).
    pins: Vec<bool>,
    /// Fewer lines in scope than [`BASELINE_MIN_LINES`].
    small_scope: bool,
    /// Consecutive question words, with every form of the pair side by side.
    phrases: Vec<(usize, usize, Vec<Form>)>,
    /// The IDF-weighted distinct keywords found on each page.
    page_evidence: BTreeMap<u32, f64>,
    /// The best page's evidence.
    best_page: f64,
}

/// A line matching at least one keyword, scored.
struct Hit {
    index: usize,
    score: f64,
    /// The score from keywords other than exact identifiers.
    evidence: f64,
    matched: Vec<String>,
    pinned: bool,
    /// A pinning identifier opens the line (a heading or a row keyed
    /// by it, not a mention).
    heads: bool,
    discriminating: bool,
}

fn in_scope(scope: Option<&BTreeSet<u32>>, page: u32) -> bool {
    scope.is_none_or(|s| s.contains(&page))
}

impl Searcher<'_> {
    /// Ranks passages for `keywords` over the pages in `scope` (all pages
    /// when `None`). With `require`, only lines matching it count as hits.
    pub(crate) fn search(
        &self,
        keywords: &[PreparedKeyword],
        scope: Option<&BTreeSet<u32>>,
        kind_re: Option<&Regex>,
        require: Option<&Regex>,
    ) -> Search {
        let matches = self.match_lines(keywords, scope);
        let (pins, unpinned) = self.pins(keywords, &matches, scope);
        // Inverse document frequency over lines in scope, so that a keyword on
        // every line ("invoice") counts less than a rare one ("total").
        let n = matches.n_lines.max(1) as f64;
        let idf: Vec<f64> =
            matches.df.iter().map(|&df| (1.0 + (n - df as f64 + 0.5) / (df as f64 + 0.5)).ln()).collect();
        let page_evidence = self.page_evidence(keywords, &matches, &idf);
        let best_page = page_evidence.values().copied().fold(f64::MIN_POSITIVE, f64::max);
        let weights = Weights {
            idf,
            pins,
            small_scope: matches.n_lines < BASELINE_MIN_LINES,
            phrases: phrases(keywords),
            page_evidence,
            best_page,
        };
        let mut hits: Vec<Hit> = matches
            .lines
            .iter()
            .filter(|(index, _)| require.is_none_or(|re| re.is_match(&self.document.lines[*index].text)))
            .filter_map(|(index, matched)| self.score_line(keywords, &weights, *index, matched, kind_re))
            .collect();
        rank(&mut hits);
        let mut candidates = self.windows(&hits);
        let mut extended = 0;
        if let Some(re) = kind_re {
            extended = self.reach_kind(&mut candidates, re);
            // Extensions may now overlap a later passage: merge them, keeping
            // the better-ranked one first.
            candidates = merge_all(candidates);
        }
        Search { candidates, lines_matched: hits.len(), idf: weights.idf, extended, unpinned }
    }

    /// One pass over the lines in scope: which keywords each line matches
    /// (for the document frequencies and for the hits).
    fn match_lines(&self, keywords: &[PreparedKeyword], scope: Option<&BTreeSet<u32>>) -> Matches {
        let mut n_lines = 0usize;
        let mut df = vec![0usize; keywords.len()];
        let mut lines: Vec<(usize, Vec<usize>)> = Vec::new();
        for (index, line) in self.document.lines.iter().enumerate() {
            if !in_scope(scope, line.page) {
                continue;
            }
            n_lines += 1;
            let Some(text) = self.normalized.get(index) else { continue };
            let matched: Vec<usize> = (0..keywords.len()).filter(|&k| keywords[k].matches(text)).collect();
            if matched.is_empty() {
                continue;
            }
            for &k in &matched {
                df[k] += 1;
            }
            lines.push((index, matched));
        }
        Matches { n_lines, df, lines }
    }

    /// Which identifiers pin, and those that do not with their page count.
    /// Identifiers on too many pages name the document, not a passage: they
    /// still score, but do not pin.
    fn pins(
        &self,
        keywords: &[PreparedKeyword],
        matches: &Matches,
        scope: Option<&BTreeSet<u32>>,
    ) -> (Vec<bool>, Vec<(String, usize)>) {
        let document = self.document;
        let mut pages_in_scope: BTreeSet<u32> = BTreeSet::new();
        let mut keyword_pages: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); keywords.len()];
        for line in document.lines.iter().filter(|l| in_scope(scope, l.page)) {
            pages_in_scope.insert(line.page);
        }
        for (index, matched) in &matches.lines {
            for &k in matched {
                if keywords[k].pinning {
                    keyword_pages[k].insert(document.lines[*index].page);
                }
            }
        }
        let page_limit = (pages_in_scope.len() as f64 * PIN_MAX_PAGE_SHARE).floor() as usize;
        let pins: Vec<bool> = (0..keywords.len())
            .map(|k| keywords[k].pinning && (keyword_pages[k].len() <= PIN_MIN_PAGES.max(page_limit)))
            .collect();
        let unpinned: Vec<(String, usize)> = (0..keywords.len())
            .filter(|&k| keywords[k].pinning && !pins[k])
            .map(|k| (keywords[k].label.clone(), keyword_pages[k].len()))
            .collect();
        (pins, unpinned)
    }

    /// Page evidence: the distinct keywords found on each page, weighted
    /// (empty when the page-evidence weight is off).
    fn page_evidence(&self, keywords: &[PreparedKeyword], matches: &Matches, idf: &[f64]) -> BTreeMap<u32, f64> {
        let mut page_evidence: BTreeMap<u32, f64> = BTreeMap::new();
        if self.page_evidence > 0.0 {
            let mut seen: BTreeSet<(u32, usize)> = BTreeSet::new();
            for (index, matched) in &matches.lines {
                let page = self.document.lines[*index].page;
                for &k in matched {
                    if seen.insert((page, k)) {
                        *page_evidence.entry(page).or_default() += keywords[k].weight * idf[k];
                    }
                }
            }
        }
        page_evidence
    }

    /// The score of the line at `index`, which matches `matched_keywords`
    /// (`None` when they weigh nothing).
    fn score_line(
        &self,
        keywords: &[PreparedKeyword],
        weights: &Weights,
        index: usize,
        matched_keywords: &[usize],
        kind_re: Option<&Regex>,
    ) -> Option<Hit> {
        let (idf, pins) = (&weights.idf, &weights.pins);
        let text = self.normalized.get(index).map(String::as_str).unwrap_or_default();
        let mut score = 0.0;
        let mut evidence = 0.0;
        let mut matched = Vec::new();
        let mut pinned = false;
        let mut heads = false;
        let mut discriminating = weights.small_scope;
        for &k in matched_keywords {
            let keyword = &keywords[k];
            score += keyword.weight * idf[k];
            if !pins[k] {
                evidence += keyword.weight * idf[k];
            }
            matched.push(keyword.label.clone());
            pinned |= pins[k];
            heads |= pins[k] && keyword.opens(text);
            discriminating |= idf[k] > BASELINE_IDF || pins[k];
        }
        if score == 0.0 {
            return None;
        }
        for (a, b, forms) in &weights.phrases {
            if matched_keywords.contains(a)
                && matched_keywords.contains(b)
                && forms.iter().any(|(phrase, finder)| contains_word_with(text, phrase, finder))
            {
                let bonus = PHRASE_BONUS * (keywords[*a].weight * idf[*a] + keywords[*b].weight * idf[*b]);
                score += bonus;
                evidence += bonus;
            }
        }
        let line = &self.document.lines[index];
        if kind_re.is_some_and(|re| re.is_match(&line.text)) {
            score += KIND_BONUS * score.min(1.0);
        }
        // Multiplicative, relative to the best-covered page: the order
        // of lines on one page (and the floor between them) is unchanged.
        let page_share = weights.page_evidence.get(&line.page).copied().unwrap_or(0.0) / weights.best_page;
        score *= 1.0 + self.page_evidence * page_share;
        Some(Hit { index, score, evidence, matched, pinned, heads, discriminating })
    }

    /// Hits expanded to windows on their page, overlapping ones merged.
    fn windows(&self, hits: &[Hit]) -> Vec<Candidate> {
        let document = self.document;
        let window = self.window;
        let mut candidates: Vec<Candidate> = Vec::new();
        for hit in hits {
            let line = &document.lines[hit.index];
            let (first, last) = page_bounds(document, line.page);
            let start = line.line_id.saturating_sub(window).max(first);
            let end = (line.line_id + window).min(last);
            let candidate = Candidate {
                passage: Passage {
                    line_start: start,
                    line_end: end,
                    page: line.page,
                    score: hit.score,
                    anchor_line: line.line_id,
                    matched_keywords: hit.matched.clone(),
                    pinned: hit.pinned,
                },
                discriminating: hit.discriminating,
                coverage: false,
            };
            if !merge_into(&mut candidates, &candidate) {
                candidates.push(candidate);
            }
        }
        candidates
    }

    /// A label is often separated from its value by layout: "Invoice date"
    /// in a header row, the date a few lines further down the same column.
    /// When the question asks for a kind of value (amount, date) and a
    /// passage holds none, extend it forward on its page until one shows,
    /// by at most [`KIND_REACH`] lines. Returns how many were extended.
    fn reach_kind(&self, candidates: &mut [Candidate], re: &Regex) -> usize {
        let document = self.document;
        let mut extended = 0;
        for candidate in candidates {
            let passage = &mut candidate.passage;
            if document.line_range(passage.line_start, passage.line_end).iter().any(|l| re.is_match(&l.text)) {
                continue;
            }
            let reach_end = passage.line_end + KIND_REACH;
            let next = document
                .lines
                .iter()
                .skip(passage.line_end as usize)
                .take_while(|l| l.page == passage.page && l.line_id <= reach_end)
                .find(|l| re.is_match(&l.text));
            if let Some(line) = next {
                passage.line_end = line.line_id;
                extended += 1;
            }
        }
        extended
    }
}

/// Phrases: two consecutive question words ("effective tax", "tax rate")
/// found side by side in a line score again, so the line that names the
/// thing outranks one that has its words apart. Any form of each word
/// ("card members" finds "Card Member").
fn phrases(keywords: &[PreparedKeyword]) -> Vec<(usize, usize, Vec<Form>)> {
    let words: Vec<usize> = (0..keywords.len())
        .filter(|&k| keywords[k].salient && !keywords[k].pinning && !keywords[k].is_regex())
        .collect();
    words
        .windows(2)
        .filter_map(|pair| {
            let (Some(a), Some(b)) = (keywords[pair[0]].forms(), keywords[pair[1]].forms()) else {
                return None;
            };
            let forms = a.iter().flat_map(|(a, _)| b.iter().map(move |(b, _)| form(format!("{a} {b}")))).collect();
            Some((pair[0], pair[1], forms))
        })
        .collect()
}

/// Pinned (exact identifier) first, then score, then document order:
/// a stable, deterministic ranking. Within the pinned group the
/// identifier says nothing more (every pinned line carries it), so
/// pinned lines are ordered by their distance (in lines) to the best
/// keyword evidence other than identifiers, then document order.
fn rank(hits: &mut [Hit]) {
    let best_evidence = hits
        .iter()
        .filter(|h| h.evidence > 0.0)
        .min_by(|a, b| b.evidence.total_cmp(&a.evidence).then(a.index.cmp(&b.index)))
        .map(|h| h.index);
    let distance = |h: &Hit| best_evidence.map_or(0, |best| h.index.abs_diff(best));
    // A pinned line the identifier opens (its heading, its table row)
    // comes before lines that only mention it.
    hits.sort_by(|a, b| {
        b.pinned.cmp(&a.pinned).then_with(|| {
            if a.pinned && b.pinned {
                b.heads.cmp(&a.heads).then_with(|| distance(a).cmp(&distance(b)))
            } else {
                b.score.total_cmp(&a.score)
            }
            .then(a.index.cmp(&b.index))
        })
    });
}

#[cfg(test)]
mod tests {
    use docintel_schema::{Keyword, KeywordSource, NullSink, Retrieval, Retriever};

    use super::*;
    use crate::test_support::{anchor, check, document, filler, question};
    use crate::{KeywordRetriever, RetrieveConfig};

    #[test]
    fn rare_keyword_with_amount_ranks_first() {
        let doc = document(&[&["Invoice 42", "Subtotal $3.00", "Invoice date 2014-08-03", "Total $4.11", "Thank you"]]);
        let r = check(&doc, &question(&["total", "amount"], "amount", &[]), 3);
        assert_eq!(r.passages[0].anchor_line, 4, "{r:?}");
        // "total" must not match inside "subtotal".
        assert!(!r.passages.iter().any(|p| p.anchor_line == 2));
    }

    #[test]
    fn question_words_side_by_side_outrank_the_same_words_apart() {
        // Same words on both lines; only the second has them as the
        // question puts them. Without the phrase bonus, document order
        // would put line 1 first.
        let doc = document(&[
            &["The rate of interest is fixed; the tax is paid yearly.", "filler"],
            &["Our effective tax rate was 21%.", "filler"],
        ]);
        let r = check(&doc, &question(&["effective", "tax", "rate"], "text", &[]), 2);
        assert_eq!(r.passages[0].page, 2, "{r:?}");
        let doc =
            document(&[&["The tax is paid yearly at a fixed rate.", "filler"], &["The tax rate is fixed.", "filler"]]);
        let r = check(&doc, &question(&["tax", "rate"], "text", &[]), 2);
        assert_eq!(r.passages[0].page, 2, "{r:?}");
    }

    #[test]
    fn exact_identifier_is_pinned_above_higher_scores() {
        let doc = document(&[&[
            "AC-20 account management account access control",
            "filler",
            "filler",
            "filler",
            "AC-2 Account Management",
        ]]);
        let mut q = question(&["account", "access", "control"], "text", &[]);
        q.keywords.push(Keyword {
            text: "AC-2".into(),
            weight: 3.0,
            source: KeywordSource::Anchor,
            is_regex: false,
            semantic_group: None,
        });
        let r = check(&doc, &q, 2);
        assert_eq!(r.passages[0].anchor_line, 5, "{r:?}");
        assert!(r.passages[0].pinned);
        assert!(!r.passages[1].pinned, "AC-20 must not match the identifier AC-2");
    }

    #[test]
    fn pinning_beats_the_neighbouring_row_differing_by_one_digit() {
        // Adjacent table rows: the wrong row carries more of the question's
        // words; only the exact identifier tells them apart.
        for (wrong, right, id) in [
            ("AC-21 Account access control sharing", "AC-2 Management", "AC-2"),
            ("4.2.11 Account access control sharing", "4.2.1 Management", "4.2.1"),
        ] {
            let doc = document(&[&[wrong, right]]);
            let mut q = question(&["account", "access", "control", "sharing"], "text", &[]);
            anchor(&mut q, id);
            let retriever =
                KeywordRetriever::new(RetrieveConfig { top_k: 2, window: 0, reserve: 5, read_pages_whole: false });
            let r = retriever.retrieve(&q, &doc, &mut NullSink).unwrap();
            assert_eq!(r.passages[0].anchor_line, 2, "{id}: {r:?}");
            assert!(r.passages[0].pinned);
            assert!(r.passages.iter().chain(&r.reserve).filter(|p| p.anchor_line == 1).all(|p| !p.pinned), "{id}");
        }
    }

    #[test]
    fn pinned_passages_are_ordered_by_distance_to_the_best_evidence() {
        // "AC-2" is cited early (line 2) and defined later (line 12), next to
        // the question's other words (line 13).
        let mut page = filler(20, "filler");
        page[1] = "See also AC-2".into();
        page[11] = "AC-2 Account Management".into();
        page[12] = "the organization manages system accounts".into();
        let refs: Vec<&str> = page.iter().map(String::as_str).collect();
        let doc = document(&[&refs]);
        let mut q = question(&["accounts", "organization"], "text", &[]);
        anchor(&mut q, "AC-2");
        let retriever =
            KeywordRetriever::new(RetrieveConfig { top_k: 3, window: 0, reserve: 5, read_pages_whole: false });
        let r = retriever.retrieve(&q, &doc, &mut NullSink).unwrap();
        let pinned: Vec<u32> = r.passages.iter().filter(|p| p.pinned).map(|p| p.anchor_line).collect();
        assert_eq!(pinned, vec![12, 2], "{r:?}");
        // Without other evidence, the line the identifier opens (its
        // heading) before the line that only mentions it.
        let mut q = question(&[], "text", &[]);
        anchor(&mut q, "AC-2");
        let r = retriever.retrieve(&q, &doc, &mut NullSink).unwrap();
        let pinned: Vec<u32> = r.passages.iter().filter(|p| p.pinned).map(|p| p.anchor_line).collect();
        assert_eq!(pinned, vec![12, 2], "{r:?}");
        // Two mentions and no heading: document order.
        let mut page = filler(20, "filler");
        page[1] = "See also AC-2".into();
        page[11] = "related: AC-2".into();
        let refs: Vec<&str> = page.iter().map(String::as_str).collect();
        let r = retriever.retrieve(&q, &document(&[&refs]), &mut NullSink).unwrap();
        let pinned: Vec<u32> = r.passages.iter().filter(|p| p.pinned).map(|p| p.anchor_line).collect();
        assert_eq!(pinned, vec![2, 12], "{r:?}");
    }

    #[test]
    fn an_identifier_on_most_pages_names_the_document_and_does_not_pin() {
        // Every page carries the running header "NIST SP 800-53 Rev. 5";
        // "AC-2" opens one line on page 7.
        let pages: Vec<Vec<String>> = (1..=10)
            .map(|n| {
                let mut page = filler(12, "filler");
                page[0] = "NIST SP 800-53 Rev. 5".into();
                if n == 7 {
                    page[5] = "AC-2 Account Management".into();
                }
                page
            })
            .collect();
        let refs: Vec<Vec<&str>> = pages.iter().map(|p| p.iter().map(String::as_str).collect()).collect();
        let refs: Vec<&[&str]> = refs.iter().map(Vec::as_slice).collect();
        let doc = document(&refs);
        let mut q = question(&["title"], "text", &[]);
        anchor(&mut q, "SP 800-53");
        anchor(&mut q, "AC-2");
        let retriever =
            KeywordRetriever::new(RetrieveConfig { top_k: 3, window: 0, reserve: 5, read_pages_whole: false });
        let r = retriever.retrieve(&q, &doc, &mut NullSink).unwrap();
        let pinned: Vec<(u32, u32)> = r.passages.iter().filter(|p| p.pinned).map(|p| (p.page, p.anchor_line)).collect();
        assert_eq!(pinned, vec![(7, 78)], "only AC-2 pins: {r:?}");
        assert_eq!(r.passages[0].page, 7);
        assert!(r.notes.iter().any(|n| n.contains("\"SP 800-53\" is on 10 pages")), "{:?}", r.notes);
        // Without the running header, SP 800-53 pins again.
        let mut q = question(&[], "text", &[]);
        anchor(&mut q, "SP 800-53");
        let r = retriever.retrieve(&q, &document(&refs[..3]), &mut NullSink).unwrap();
        assert!(r.passages.iter().all(|p| p.pinned), "3 pages are under the floor of {PIN_MIN_PAGES}: {r:?}");
    }

    #[test]
    fn a_line_on_the_page_where_the_question_words_meet_ranks_first() {
        let mut one = filler(12, "note");
        one[4] = "Capital expenditures 100".into();
        let mut two = filler(12, "item");
        two[0] = "Consolidated cash flow statement".into();
        two[6] = "Capital expenditures 120".into();
        let (one, two): (Vec<&str>, Vec<&str>) =
            (one.iter().map(String::as_str).collect(), two.iter().map(String::as_str).collect());
        let doc = document(&[&one, &two]);
        let q = question(&["capital expenditures", "cash flow"], "text", &[]);
        let rank_of = |r: &Retrieval, page: u32| {
            r.passages.iter().position(|p| p.page == page && p.matched_keywords == ["capital expenditures"])
        };
        let base = KeywordRetriever::new(RetrieveConfig { top_k: 5, window: 0, reserve: 5, read_pages_whole: false });
        let r = base.clone().with_page_evidence(1.0).retrieve(&q, &doc, &mut NullSink).unwrap();
        assert!(rank_of(&r, 2).is_some() && rank_of(&r, 2) < rank_of(&r, 1), "{r:?}");
        // Lines scored alone: a tie, broken in document order.
        let r = base.with_page_evidence(0.0).retrieve(&q, &doc, &mut NullSink).unwrap();
        assert!(rank_of(&r, 1).is_some() && rank_of(&r, 1) < rank_of(&r, 2), "{r:?}");
    }

    #[test]
    fn a_passage_reaches_down_to_the_value_of_the_kind_asked() {
        let doc = document(&[&[
            "Factuur datum",
            "Factuur",
            "Vervaldatum",
            "SCONL0303006280999",
            "SCONL000000444",
            "8-9-2022",
            "VF1005193039",
        ]]);
        let r = check(&doc, &question(&["factuur datum"], "date", &[]), 3);
        assert_eq!((r.passages[0].line_start, r.passages[0].line_end), (1, 6), "{r:?}");
        assert!(r.notes.iter().any(|n| n.contains("extended")), "{:?}", r.notes);
        // A text question is not extended.
        let r = check(&doc, &question(&["factuur datum"], "text", &[]), 3);
        assert_eq!((r.passages[0].line_start, r.passages[0].line_end), (1, 2));
    }
}
