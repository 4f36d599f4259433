//! Lexical retrieval over the line table, and the retrieval pipeline around
//! it: pages hint, TOC routing (with fallback), first search, relevance floor
//! (nearest passage always kept), coverage second pass, answer context,
//! reserve.

use std::collections::BTreeSet;

use docintel_schema::text::normalize;
use docintel_schema::{
    KeywordSource, ParsedDocument, ParsedQuestion, Passage, Retrieval, Retriever, Router, TraceEvent, TraceSink,
    ValueKind,
};
use regex::Regex;
use serde_json::json;

use crate::context::expand_context;
use crate::coverage::{self, CoverageCheck};
use crate::lines::LineCache;
use crate::named;
use crate::pages::PageIndex;
use crate::toc::{self, KeywordRouter, RoutingConfig};

/// Knobs of the keyword retriever. No `Default`: the caller (CLI, facade)
/// chooses the values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetrieveConfig {
    /// Passages shown to the generator.
    pub top_k: usize,
    /// Lines of context added on each side of a hit (same page only).
    pub window: u32,
    /// Further ranked passages kept for a "next batch" request.
    pub reserve: usize,
    /// Also read whole pages: a page the question names, in the place of
    /// its windows (a table row they missed is on it), and every page of a
    /// document of one or two pages, after the ranked passages (an invoice's
    /// or a résumé's value is read even when the question does not word its
    /// label: "the candidate's name").
    pub read_pages_whole: bool,
}

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

/// The deterministic lexical retriever.
#[derive(Debug, Clone)]
pub struct KeywordRetriever {
    config: RetrieveConfig,
    routing: RoutingConfig,
    floor: f64,
    /// Weight of the page's keyword coverage in each line's score.
    page_evidence: f64,
    /// Normalised lines of the last documents seen (shared by clones).
    lines: LineCache,
}

/// A passage scoring below this share of the best one is dropped from the
/// passages shown (it stays in the reserve) unless it is pinned.
pub const RELEVANCE_FLOOR: f64 = 0.25;

/// The standard page-evidence weight (see
/// [`KeywordRetriever::with_page_evidence`]): off, as 1.0 measured 0.28 vs
/// 0.30 recall@5 on FinanceBench.
pub const PAGE_EVIDENCE: f64 = 0.0;

/// A keyword on more than half the lines in scope tells lines apart no better
/// than chance: `ln(1 + 1)` is the IDF of a keyword on exactly half of them.
const BASELINE_IDF: f64 = std::f64::consts::LN_2;

/// Under this many lines in scope, document frequencies say nothing about
/// chance and the baseline rule is not applied.
const BASELINE_MIN_LINES: usize = 20;

/// A normalised word or phrase with its searcher built once (a keyword is
/// tried on every line of the document).
type Form = (String, Box<memchr::memmem::Finder<'static>>);

fn form(text: String) -> Form {
    let finder = Box::new(memchr::memmem::Finder::new(text.as_bytes()).into_owned());
    (text, finder)
}

/// A keyword prepared for matching.
#[derive(Clone)]
pub(crate) enum Matcher {
    /// The keyword as written first, then its other English inflections
    /// ([`crate::inflect`]); a line matches when it has any of them.
    Text(Vec<Form>),
    Regex(Regex),
}

/// A question keyword ready to match normalized lines.
#[derive(Clone)]
pub(crate) struct PreparedKeyword {
    /// The keyword as the question carries it.
    pub(crate) label: String,
    /// Its weight.
    pub(crate) weight: f64,
    /// Whether it is an exact identifier (pins its passage).
    pub(crate) pinning: bool,
    /// The concept group it counts for (dictionary synonyms share one).
    pub(crate) group: String,
    /// Whether it is salient for the coverage check (direct or anchor).
    pub(crate) salient: bool,
    /// Whether it names the document rather than a part of it (see
    /// [`mark_document_words`]).
    pub(crate) names_document: bool,
    matcher: Matcher,
}

impl PreparedKeyword {
    /// Whether the keyword occurs in a normalized text.
    pub(crate) fn matches(&self, normalized_line: &str) -> bool {
        match &self.matcher {
            Matcher::Text(forms) => {
                forms.iter().any(|(needle, finder)| contains_word_with(normalized_line, needle, finder))
            }
            Matcher::Regex(re) => re.is_match(normalized_line),
        }
    }

    /// Whether the (plain-text) keyword opens the line, on a word boundary.
    pub(crate) fn opens(&self, normalized_line: &str) -> bool {
        match &self.matcher {
            Matcher::Text(forms) => {
                let line = normalized_line.trim_start();
                forms.iter().any(|(needle, _)| {
                    line.starts_with(needle.as_str())
                        && !line[needle.len()..].chars().next().is_some_and(|c| c.is_alphanumeric() || c == '-')
                })
            }
            Matcher::Regex(_) => false,
        }
    }

    /// Its forms, when every one is a single word of letters and digits
    /// (what the page index holds), else `None`.
    pub(crate) fn single_words(&self) -> Option<Vec<&str>> {
        match &self.matcher {
            Matcher::Text(forms)
                if forms.iter().all(|(f, _)| !f.is_empty() && f.chars().all(char::is_alphanumeric)) =>
            {
                Some(forms.iter().map(|(f, _)| f.as_str()).collect())
            }
            _ => None,
        }
    }

    /// Whether the keyword is a regular expression.
    pub(crate) fn is_regex(&self) -> bool {
        matches!(self.matcher, Matcher::Regex(_))
    }
}

/// A keyword found on at least this share of a document's pages names the
/// document (its issuer, its year: "3M", "company", "2022" in 3M's 2022
/// 10-K), not a part of it.
pub(crate) const DOCUMENT_WORD_SHARE: f64 = 0.4;

/// Documents with fewer pages than this have no "document words": on a
/// two-page invoice every keyword is on half the pages.
const DOCUMENT_WORD_MIN_PAGES: usize = 8;

/// Marks the plain (non-identifier) keywords found on at least
/// [`DOCUMENT_WORD_SHARE`] of the document's pages with text. In TOC routing
/// they get no weight: a title like "3M COMPANY AND CONSOLIDATED
/// SUBSIDIARIES" would otherwise win on the company's name alone. Line
/// scores keep their IDF weight (measured on FinanceBench, scaling them down
/// there too lost 2 to 4 questions of 111). Identifiers keep their own rule
/// (pinning off on too many pages). Returns the marked labels.
pub(crate) fn mark_document_words(
    keywords: &mut [PreparedKeyword],
    document: &ParsedDocument,
    normalized: &[String],
    index: &PageIndex,
) -> Vec<String> {
    let n_pages = index.n_pages();
    if n_pages < DOCUMENT_WORD_MIN_PAGES {
        return Vec::new();
    }
    let mut marked = Vec::new();
    for keyword in keywords.iter_mut().filter(|k| !k.pinning && !k.is_regex()) {
        // A word's pages come from the page index; a phrase's from a scan
        // of the lines that skips the rest of a page once it is found there.
        let pages = match keyword.single_words() {
            Some(words) => index.pages_with_any(&words),
            None => {
                let mut pages = 0;
                let mut last: Option<u32> = None;
                for (line, text) in document.lines.iter().zip(normalized) {
                    if last != Some(line.page) && keyword.matches(text) {
                        pages += 1;
                        last = Some(line.page);
                    }
                }
                pages
            }
        };
        if pages as f64 / n_pages as f64 >= DOCUMENT_WORD_SHARE {
            keyword.names_document = true;
            marked.push(keyword.label.clone());
        }
    }
    marked
}

/// Whether `needle` occurs in `haystack` starting and ending on word
/// boundaries (so "total" matches "total:" but not "subtotal").
#[cfg(test)]
fn contains_word(haystack: &str, needle: &str) -> bool {
    contains_word_with(haystack, needle, &memchr::memmem::Finder::new(needle.as_bytes()))
}

/// [`contains_word`] with the needle's searcher prepared.
fn contains_word_with(haystack: &str, needle: &str, finder: &memchr::memmem::Finder<'_>) -> bool {
    if needle.is_empty() {
        return false;
    }
    let is_word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    // Byte offsets of a UTF-8 needle found in UTF-8 text are char boundaries.
    finder.find_iter(haystack.as_bytes()).any(|start| {
        let before = haystack[..start].chars().next_back();
        let after = haystack[start + needle.len()..].chars().next();
        let needle_first = needle.chars().next();
        let needle_last = needle.chars().next_back();
        (!is_word(before) || !is_word(needle_first)) && (!is_word(after) || !is_word(needle_last))
    })
}

/// Puts `outside` passages among the first `top_k` of `ranked`: free places
/// first, then the last places held by plain passages — never the first
/// (the route's best), a pinned passage or one the coverage pass added. The
/// passages they replace move to the head of the rest. Returns how many were
/// placed and those that found no place.
pub(crate) fn show_outside(
    ranked: &mut Vec<Candidate>,
    outside: Vec<Candidate>,
    top_k: usize,
    keep: &dyn Fn(&Candidate) -> bool,
) -> (usize, Vec<Candidate>) {
    let wanted = outside.len();
    let mut outside = outside.into_iter();
    while ranked.len() < top_k {
        let Some(candidate) = outside.next() else { break };
        ranked.push(candidate);
    }
    let mut displaced: Vec<Candidate> = Vec::new();
    for at in (1..top_k.min(ranked.len())).rev() {
        if ranked[at].passage.pinned || ranked[at].coverage || keep(&ranked[at]) {
            continue;
        }
        let Some(candidate) = outside.next() else { break };
        displaced.push(std::mem::replace(&mut ranked[at], candidate));
    }
    let not_shown: Vec<Candidate> = outside.collect();
    displaced.reverse();
    let at = top_k.min(ranked.len());
    ranked.splice(at..at, displaced);
    (wanted - not_shown.len(), not_shown)
}

/// Tokens that look like what an answer of this kind needs: a currency-looking
/// token for amounts, a date for dates, an email or URL for contacts.
pub(crate) fn kind_pattern(answer_type: &str) -> Option<(&'static str, Regex)> {
    let (name, pattern) = match (ValueKind::for_answer_type(answer_type), answer_type) {
        (ValueKind::Amount, _) => {
            ("amount", r"(?i)([$€£₹]|\b(usd|eur|gbp|inr|pln|chf|rs\.?|euros?|dollars?)\b)|\d[.,]\d{2}\b")
        }
        (ValueKind::Date, _) => (
            "date",
            r"(?i)\b\d{1,4}[-/.]\d{1,2}[-/.]\d{2,4}\b|\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|janv|févr|mars|avr|mai|juin|juil|août|sept|déc|januar|februar|märz|mai|juni|juli|oktober|dezember|maart|mei|okt)[a-zé]*\.?\s+\d{1,2}|\b\d{1,2}\.?\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|janv|févr|mars|avr|mai|juin|juil|août|sept|déc|maart|mei|okt)[a-zéû]*\.?\s+\d{4}",
        ),
        (_, "email" | "url" | "website" | "contact") => {
            ("contact", r"(?i)[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}|\bhttps?://\S+|\bwww\.[a-z0-9-]+\.[a-z]{2,}")
        }
        _ => return None,
    };
    Some((name, Regex::new(pattern).expect("static pattern compiles")))
}

/// Places shown to passages the whole-document search ranks in its top but
/// TOC routing left out.
const OUTSIDE_SHOWN: usize = 2;

/// The page ranking's first pages (BM25 over whole pages): when none of them
/// is shown, they take places among the passages shown. Measured on
/// FinanceBench (recall@5, 111 questions): adding them even when one was
/// shown lost 2 to 5 questions the line ranking had right; 1 page or 3
/// pages checked instead of 2 lost 1 to 3.
const PAGE_LEADERS: usize = 2;

/// A passage shown on one of the page ranking's first this many pages keeps
/// its place when the leaders come in (without it: 2 questions lost).
const PAGE_KEPT: usize = 3;

/// Share of two consecutive question words' score added again when a line
/// has them side by side.
const PHRASE_BONUS: f64 = 0.5;

/// Score boost for a line that carries the kind of thing asked for.
const KIND_BONUS: f64 = 0.5;

/// How far (in lines, same page) a passage may be extended to reach a value
/// of the kind asked for.
const KIND_REACH: u32 = 8;

/// A ranked passage and what the pipeline knows about it.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub(crate) passage: Passage,
    /// Matched at least one keyword that tells lines apart (IDF above the
    /// baseline of a keyword on half the lines).
    pub(crate) discriminating: bool,
    /// Added by the coverage second pass (exempt from the floor).
    pub(crate) coverage: bool,
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

/// An identifier found on more than this share of the pages in scope (and
/// on more than [`PIN_MIN_PAGES`] pages) names the document — a running
/// header like "NIST SP 800-53 Rev. 5" — and does not pin.
const PIN_MAX_PAGE_SHARE: f64 = 0.2;
/// Below this many pages an identifier always pins.
const PIN_MIN_PAGES: usize = 3;

/// Merges `passage` into an overlapping one on the same page, if any.
fn merge_into(passages: &mut [Candidate], passage: &Candidate) -> bool {
    let Some(existing) = passages.iter_mut().find(|c| overlaps(&c.passage, &passage.passage)) else {
        return false;
    };
    let e = &mut existing.passage;
    e.line_start = e.line_start.min(passage.passage.line_start);
    e.line_end = e.line_end.max(passage.passage.line_end);
    e.pinned |= passage.passage.pinned;
    existing.discriminating |= passage.discriminating;
    existing.coverage |= passage.coverage;
    for keyword in &passage.passage.matched_keywords {
        if !e.matched_keywords.contains(keyword) {
            e.matched_keywords.push(keyword.clone());
        }
    }
    true
}

/// Merges overlapping passages on a page, keeping the better-ranked first.
pub(crate) fn merge_all(candidates: Vec<Candidate>) -> Vec<Candidate> {
    let mut merged: Vec<Candidate> = Vec::with_capacity(candidates.len());
    for candidate in candidates {
        if !merge_into(&mut merged, &candidate) {
            merged.push(candidate);
        }
    }
    merged
}

impl KeywordRetriever {
    /// A retriever with this configuration, the standard routing knobs
    /// ([`RoutingConfig::STANDARD`]) and the standard floor
    /// ([`RELEVANCE_FLOOR`]).
    pub fn new(config: RetrieveConfig) -> KeywordRetriever {
        KeywordRetriever {
            config,
            routing: RoutingConfig::STANDARD,
            floor: RELEVANCE_FLOOR,
            page_evidence: PAGE_EVIDENCE,
            lines: LineCache::default(),
        }
    }

    /// The same retriever (sharing its cache of normalised lines) with
    /// other passage counts and window.
    pub fn with_config(mut self, config: RetrieveConfig) -> KeywordRetriever {
        self.config = config;
        self
    }

    /// The same retriever with other routing knobs.
    pub fn with_routing(mut self, routing: RoutingConfig) -> KeywordRetriever {
        self.routing = routing;
        self
    }

    /// The same retriever with another relevance floor (share of the best
    /// score under which an unpinned passage is not shown; 0 turns it off).
    pub fn with_floor(mut self, floor: f64) -> KeywordRetriever {
        self.floor = floor;
        self
    }

    /// The same retriever with another page-evidence weight `w`: a line's
    /// score is multiplied by `1 + w * c / c_max`, where `c` is its page's
    /// keyword coverage (the IDF-weighted sum of the distinct question
    /// keywords found anywhere on the page) and `c_max` the best page's, so a
    /// line on a page where the question's words meet outranks the same line
    /// on a page where they do not. 0 scores lines alone.
    pub fn with_page_evidence(mut self, weight: f64) -> KeywordRetriever {
        self.page_evidence = weight.max(0.0);
        self
    }

    /// The configuration.
    pub fn config(&self) -> RetrieveConfig {
        self.config
    }

    /// The routing knobs.
    pub fn routing(&self) -> RoutingConfig {
        self.routing
    }

    pub(crate) fn prepare(question: &ParsedQuestion) -> Result<Vec<PreparedKeyword>, RetrieveError> {
        let mut seen = BTreeSet::new();
        let mut prepared = Vec::new();
        // Inflections are English rules: other languages match as written.
        let english = question.language.as_deref().is_none_or(|l| l == "en");
        // A form the question carries as a keyword of its own
        // ("acquisitions" and "acquisition") counts once, there.
        let own: BTreeSet<String> =
            question.keywords.iter().filter(|k| !k.is_regex).map(|k| normalize(&k.text)).collect();
        for keyword in &question.keywords {
            let matcher = if keyword.is_regex {
                let re = Regex::new(&format!("(?i){}", keyword.text))
                    .map_err(|source| RetrieveError::BadRegex { pattern: keyword.text.clone(), source })?;
                Matcher::Regex(re)
            } else {
                let text = normalize(&keyword.text);
                if text.is_empty() || !seen.insert(text.clone()) {
                    continue;
                }
                let mut forms = vec![form(text.clone())];
                if keyword.source == KeywordSource::Direct && english {
                    forms.extend(
                        crate::inflect::english_forms(&text).into_iter().filter(|f| !own.contains(f)).map(form),
                    );
                    // The other side of the Atlantic: "pre-hospitalisation"
                    // finds "Pre-Hospitalization".
                    if let Some(other) = crate::inflect::other_spelling(&text) {
                        forms.extend(crate::inflect::english_forms(&other).into_iter().map(form));
                        forms.push(form(other));
                    }
                }
                Matcher::Text(forms)
            };
            prepared.push(PreparedKeyword {
                label: keyword.text.clone(),
                weight: f64::from(keyword.weight.max(0.0)),
                pinning: keyword.source == KeywordSource::Anchor && !keyword.is_regex,
                group: keyword.semantic_group.clone().unwrap_or_else(|| normalize(&keyword.text)),
                salient: matches!(keyword.source, KeywordSource::Direct | KeywordSource::Anchor),
                names_document: false,
                matcher,
            });
        }
        Ok(prepared)
    }

    /// Ranks passages for `keywords` over the pages in `scope` (all pages
    /// when `None`). With `require`, only lines matching it count as hits.
    pub(crate) fn search(
        &self,
        keywords: &[PreparedKeyword],
        document: &ParsedDocument,
        normalized: &[String],
        scope: Option<&BTreeSet<u32>>,
        kind_re: Option<&Regex>,
        require: Option<&Regex>,
    ) -> Search {
        let in_scope = |page: u32| scope.is_none_or(|s| s.contains(&page));
        // One pass over the lines in scope: which keywords each line matches
        // (for the document frequencies and for the hits).
        let mut n_lines = 0usize;
        let mut df = vec![0usize; keywords.len()];
        let mut matching: Vec<(usize, Vec<usize>)> = Vec::new();
        for (index, line) in document.lines.iter().enumerate() {
            if !in_scope(line.page) {
                continue;
            }
            n_lines += 1;
            let Some(text) = normalized.get(index) else { continue };
            let matched: Vec<usize> = (0..keywords.len()).filter(|&k| keywords[k].matches(text)).collect();
            if matched.is_empty() {
                continue;
            }
            for &k in &matched {
                df[k] += 1;
            }
            matching.push((index, matched));
        }
        // Inverse document frequency over lines in scope, so that a keyword on
        // every line ("invoice") counts less than a rare one ("total").
        // Identifiers on too many pages name the document, not a passage:
        // they still score, but do not pin.
        let mut pages_in_scope: BTreeSet<u32> = BTreeSet::new();
        let mut keyword_pages: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); keywords.len()];
        for line in document.lines.iter().filter(|l| in_scope(l.page)) {
            pages_in_scope.insert(line.page);
        }
        for (index, matched) in &matching {
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
        let n = n_lines.max(1) as f64;
        let small_scope = n_lines < BASELINE_MIN_LINES;
        let idf: Vec<f64> = df.iter().map(|&df| (1.0 + (n - df as f64 + 0.5) / (df as f64 + 0.5)).ln()).collect();
        // Page evidence: the distinct keywords found on each page, weighted.
        let mut page_evidence: std::collections::BTreeMap<u32, f64> = std::collections::BTreeMap::new();
        if self.page_evidence > 0.0 {
            let mut seen: BTreeSet<(u32, usize)> = BTreeSet::new();
            for (index, matched) in &matching {
                let page = document.lines[*index].page;
                for &k in matched {
                    if seen.insert((page, k)) {
                        *page_evidence.entry(page).or_default() += keywords[k].weight * idf[k];
                    }
                }
            }
        }
        let best_page = page_evidence.values().copied().fold(f64::MIN_POSITIVE, f64::max);
        // Phrases: two consecutive question words ("effective tax", "tax
        // rate") found side by side in a line score again, so the line that
        // names the thing outranks one that has its words apart.
        let words: Vec<usize> = (0..keywords.len())
            .filter(|&k| keywords[k].salient && !keywords[k].pinning && !keywords[k].is_regex())
            .collect();
        // Any form of each word ("card members" finds "Card Member").
        let phrases: Vec<(usize, usize, Vec<Form>)> = words
            .windows(2)
            .filter_map(|pair| {
                let (Matcher::Text(a), Matcher::Text(b)) = (&keywords[pair[0]].matcher, &keywords[pair[1]].matcher)
                else {
                    return None;
                };
                let forms = a.iter().flat_map(|(a, _)| b.iter().map(move |(b, _)| form(format!("{a} {b}")))).collect();
                Some((pair[0], pair[1], forms))
            })
            .collect();

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
        let mut hits: Vec<Hit> = Vec::new();
        for (index, matched_keywords) in &matching {
            if require.is_some_and(|re| !re.is_match(&document.lines[*index].text)) {
                continue;
            }
            let mut score = 0.0;
            let mut evidence = 0.0;
            let mut matched = Vec::new();
            let mut pinned = false;
            let mut heads = false;
            let mut discriminating = small_scope;
            for &k in matched_keywords {
                let keyword = &keywords[k];
                score += keyword.weight * idf[k];
                if !pins[k] {
                    evidence += keyword.weight * idf[k];
                }
                matched.push(keyword.label.clone());
                pinned |= pins[k];
                heads |= pins[k] && keyword.opens(normalized.get(*index).map(String::as_str).unwrap_or_default());
                discriminating |= idf[k] > BASELINE_IDF || pins[k];
            }
            if score == 0.0 {
                continue;
            }
            let text = normalized.get(*index).map(String::as_str).unwrap_or_default();
            for (a, b, forms) in &phrases {
                if matched_keywords.contains(a)
                    && matched_keywords.contains(b)
                    && forms.iter().any(|(phrase, finder)| contains_word_with(text, phrase, finder))
                {
                    let bonus = PHRASE_BONUS * (keywords[*a].weight * idf[*a] + keywords[*b].weight * idf[*b]);
                    score += bonus;
                    evidence += bonus;
                }
            }
            if kind_re.is_some_and(|re| re.is_match(&document.lines[*index].text)) {
                score += KIND_BONUS * score.min(1.0);
            }
            // Multiplicative, relative to the best-covered page: the order
            // of lines on one page (and the floor between them) is unchanged.
            let page_share = page_evidence.get(&document.lines[*index].page).copied().unwrap_or(0.0) / best_page;
            score *= 1.0 + self.page_evidence * page_share;
            hits.push(Hit { index: *index, score, evidence, matched, pinned, heads, discriminating });
        }

        // Pinned (exact identifier) first, then score, then document order:
        // a stable, deterministic ranking. Within the pinned group the
        // identifier says nothing more (every pinned line carries it), so
        // pinned lines are ordered by their distance (in lines) to the best
        // keyword evidence other than identifiers, then document order.
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

        // Expand hits to windows on their page and merge overlapping ones.
        let window = self.config.window;
        let mut candidates: Vec<Candidate> = Vec::new();
        for hit in &hits {
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

        // A label is often separated from its value by layout: "Invoice date"
        // in a header row, the date a few lines further down the same column.
        // When the question asks for a kind of value (amount, date) and a
        // passage holds none, extend it forward on its page until one shows,
        // by at most KIND_REACH lines.
        let mut extended = 0;
        if let Some(re) = kind_re {
            for candidate in &mut candidates {
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
            // Extensions may now overlap a later passage: merge them, keeping
            // the better-ranked one first.
            candidates = merge_all(candidates);
        }
        Search { candidates, lines_matched: hits.len(), idf, extended, unpinned }
    }

    /// Retrieval with a chosen TOC router (the deterministic
    /// [`KeywordRouter`] or an LLM router implementing the same [`Router`]
    /// step). [`Retriever::retrieve`] uses the keyword router.
    pub fn retrieve_with_router<R: Router>(
        &self,
        router: &R,
        question: &ParsedQuestion,
        document: &ParsedDocument,
        trace: &mut dyn TraceSink,
    ) -> Result<Retrieval, RetrieveError> {
        let mut keywords = Self::prepare(question)?;
        // Everything below reads the row view (the pieces of each printed
        // line joined, see `docintel_schema::rows`); the passages go back to
        // the document's line ids at the end, each run whole.
        let (rows, normalized, page_index) = self.lines.get(document);
        let document = rows.document();
        let mut notes = Vec::new();
        let document_words = mark_document_words(&mut keywords, document, &normalized, &page_index);
        if !document_words.is_empty() {
            notes.push(format!(
                "{document_words:?} on at least {:.0}% of the pages: they name the document, not a part of it (no weight in TOC routing)",
                DOCUMENT_WORD_SHARE * 100.0
            ));
        }
        let mut methods_used = Vec::new();

        // Pages hint first: the user pinned these pages.
        let n_pages = document.pages.len() as u32;
        let hinted: BTreeSet<u32> =
            question.retrieval.pages.iter().copied().filter(|p| (1..=n_pages).contains(p)).collect();
        let dropped: Vec<u32> = question.retrieval.pages.iter().copied().filter(|p| !hinted.contains(p)).collect();
        if !dropped.is_empty() {
            notes.push(format!("pages {dropped:?} named in the question do not exist (the document has {n_pages})"));
        }
        if !hinted.is_empty() {
            methods_used.push("pages_hint".to_owned());
        }

        // TOC routing, one level at a time: restricts the search to the
        // routed pages (not pinned: nothing is kept without a match).
        let mut routed: Option<BTreeSet<u32>> = None;
        if question.activations.use_toc_navigation && !document.toc.is_empty() && !keywords.is_empty() {
            if !hinted.is_empty() {
                notes.push("TOC routing skipped: the question names its pages".to_owned());
            } else {
                let outcome = toc::walk(router, question, document, &normalized, &keywords, self.routing, trace)
                    .map_err(|e| RetrieveError::Router(Box::new(e)))?;
                match outcome {
                    Some(outcome) => {
                        methods_used.push("toc".to_owned());
                        notes.push(format!(
                            "TOC routing: {} level(s), {} router line(s) shown, read {} ({} page(s))",
                            outcome.levels,
                            outcome.lines_shown,
                            outcome
                                .sections
                                .iter()
                                .map(|(id, why)| format!("[{id}] {why}"))
                                .collect::<Vec<_>>()
                                .join(", "),
                            outcome.pages.len()
                        ));
                        routed = Some(outcome.pages);
                    }
                    None => notes
                        .push("TOC routing found no branch with keyword evidence: whole document searched".to_owned()),
                }
            }
        }

        let kind = kind_pattern(&question.answer_type);
        let kind_re = kind.as_ref().map(|(_, re)| re);
        let mut scope: Option<BTreeSet<u32>> = if hinted.is_empty() { routed.clone() } else { Some(hinted.clone()) };
        let mut search = self.search(&keywords, document, &normalized, scope.as_ref(), kind_re, None);
        if routed.is_some() && search.candidates.is_empty() {
            notes.push("TOC routing landed on pages with no keyword hit: fell back to the whole document".to_owned());
            methods_used.push("toc_fallback".to_owned());
            trace.record(TraceEvent {
                brick: "retrieve".to_owned(),
                step: "toc_fallback".to_owned(),
                detail: json!({"routed_pages": routed, "reason": "no keyword hit on the routed pages"}),
            });
            scope = None;
            search = self.search(&keywords, document, &normalized, None, kind_re, None);
        }
        if !keywords.is_empty() {
            methods_used.push("keyword".to_owned());
        }
        if search.candidates.iter().any(|c| c.passage.pinned) {
            methods_used.push("identifier_pinning".to_owned());
        }
        for (identifier, pages) in &search.unpinned {
            notes.push(format!(
                "identifier {identifier:?} is on {pages} pages: it names the document, not a passage, so it does not pin"
            ));
        }
        if search.extended > 0 {
            notes.push(format!(
                "{} passage(s) extended down their page to reach the first {} after the matched label",
                search.extended,
                kind.as_ref().map_or("value", |(name, _)| name)
            ));
        }

        // Relevance floor: fewer passages rather than padding.
        let (mut ranked, mut held_back) = self.apply_floor(std::mem::take(&mut search.candidates), &mut notes);

        // Coverage second pass, decided in code, once.
        let top_k = self.config.top_k;
        let check = CoverageCheck::run(&keywords, kind.as_ref(), document, &ranked[..top_k.min(ranked.len())]);
        if !ranked.is_empty() && check.failed() {
            // The safety net for the router: the second search covers the
            // whole document (or the pages the user pinned).
            let net = (!hinted.is_empty()).then_some(&hinted);
            let added =
                coverage::second_pass(self, &check, &keywords, (document, &normalized), net, kind.as_ref(), &ranked);
            trace.record(TraceEvent {
                brick: "retrieve".to_owned(),
                step: "coverage_pass".to_owned(),
                detail: json!({
                    "missing_terms": check.missing_terms,
                    "missing_kind": check.missing_kind,
                    "added": added.iter().map(|c| json!({"page": c.passage.page, "lines": rows.to_document(c.passage.line_start, c.passage.line_end), "matched": c.passage.matched_keywords})).collect::<Vec<_>>(),
                }),
            });
            methods_used.push("coverage_pass".to_owned());
            notes.push(format!(
                "coverage second pass: missing {}{}; {} passage(s) added",
                if check.missing_terms.is_empty() {
                    "no term".to_owned()
                } else {
                    format!("{:?}", check.missing_terms)
                },
                check.missing_kind.map(|k| format!(" and no {k} in the passages")).unwrap_or_default(),
                added.len()
            ));
            // Merged: the added passages take the last places shown (the top
            // match always stays); the displaced ones go to the reserve.
            let room = top_k.saturating_sub(1).min(added.len());
            let keep = top_k.saturating_sub(room).min(ranked.len());
            let displaced = ranked.split_off(keep);
            ranked.extend(added);
            ranked.extend(displaced);
        }

        // Named sections ("shown in the balance sheet"): the page headed by
        // the part's title goes first, with its best-matching lines.
        if hinted.is_empty() {
            let named = named::find(document, &question.retrieval.scope.sections);
            if !named.is_empty() {
                let mut front: Vec<Candidate> = Vec::new();
                for page in &named {
                    // The page whole replaces the passages found on it.
                    ranked.retain(|c| c.passage.page != page.page);
                    held_back.retain(|c| c.passage.page != page.page);
                    front.push(self.named_page_passage(&keywords, document, &normalized, page, kind_re));
                }
                trace.record(TraceEvent {
                    brick: "retrieve".to_owned(),
                    step: "named_section".to_owned(),
                    detail: json!({
                        "sections": question.retrieval.scope.sections,
                        "pages": named.iter().map(|p| json!({"section": p.section, "page": p.page, "heading": p.title, "figure_rows": p.figure_rows})).collect::<Vec<_>>(),
                    }),
                });
                notes.push(format!(
                    "named section(s) put first: {}",
                    named.iter().map(|p| format!("p. {} '{}'", p.page, p.title)).collect::<Vec<_>>().join(", ")
                ));
                methods_used.push("named_section".to_owned());
                front.append(&mut ranked);
                ranked = front;
            } else if !question.retrieval.scope.sections.is_empty() {
                notes.push(format!(
                    "no page headed by the section(s) the question points to: {}",
                    question.retrieval.scope.sections.join("; ")
                ));
            }
        }

        // Hinted pages survive even when no keyword matched on them.
        for &page in &hinted {
            if ranked.iter().any(|c| c.passage.page == page) {
                continue;
            }
            let (first, last) = page_bounds(document, page);
            if first > last {
                notes.push(format!("page {page} named in the question has no text"));
                continue;
            }
            notes.push(format!("page {page} kept whole: named in the question, no keyword matched on it"));
            ranked.push(Candidate {
                passage: Passage {
                    line_start: first,
                    line_end: last,
                    page,
                    score: 0.0,
                    anchor_line: first,
                    matched_keywords: Vec::new(),
                    pinned: true,
                },
                discriminating: true,
                coverage: false,
            });
        }

        if ranked.is_empty() {
            notes.push("no line matched any question keyword".to_owned());
        }
        // Wider than the route: when routing narrowed the search, a passage
        // the whole-document search ranks among its top ones but the route
        // left out takes one of the last places shown (a section title does
        // not always say what the section holds), and the best others go to
        // the reserve, so that "not in this section" leads elsewhere
        // instead of nowhere.
        let mut outside: Vec<Passage> = Vec::new();
        if let (Some(routed_pages), Some(_)) = (routed.as_ref(), scope.as_ref()) {
            let wide = self.search(&keywords, document, &normalized, None, kind_re, None);
            let mut top: Vec<Candidate> = Vec::new();
            let mut left_out: Vec<Candidate> = Vec::new();
            for (rank, candidate) in wide.candidates.into_iter().enumerate() {
                if routed_pages.contains(&candidate.passage.page) {
                    continue;
                }
                if ranked.iter().any(|c| overlaps(&c.passage, &candidate.passage)) {
                    continue;
                }
                if rank < top_k && top.len() < OUTSIDE_SHOWN && !ranked.is_empty() {
                    top.push(candidate);
                } else {
                    left_out.push(candidate);
                }
            }
            let (shown, not_shown) = show_outside(&mut ranked, top, top_k, &|_| false);
            left_out.extend(not_shown);
            if shown > 0 {
                notes.push(format!(
                    "{shown} passage(s) outside the routed sections shown: among the whole document's top {top_k}"
                ));
                methods_used.push("wide_shown".to_owned());
            }
            outside = left_out.into_iter().map(|c| c.passage).take(self.config.reserve.div_ceil(2)).collect();
        }
        // Page evidence: BM25 over whole pages (`pages.rs`) finds the page
        // where the question's words meet even when no single line holds
        // more than one of them. When neither of its two best pages is
        // shown, the line ranking and the page ranking disagree: those two
        // pages take the last places shown, anchored on their best line —
        // never in place of the best passage, a pinned passage, a coverage
        // addition or a passage on the page ranking's third page. When they
        // agree, nothing moves. The user's pages hint turns it off, and so
        // does an exact identifier pinned (it already says where).
        let identifier_pinned = methods_used.iter().any(|m| m == "identifier_pinning");
        if hinted.is_empty() && !ranked.is_empty() && !identifier_pinned {
            let shown: BTreeSet<u32> = ranked.iter().take(top_k).map(|c| c.passage.page).collect();
            let top_pages: Vec<(u32, f64)> = page_index.rank(&keywords).into_iter().take(PAGE_KEPT).collect();
            let leaders = &top_pages[..PAGE_LEADERS.min(top_pages.len())];
            let agree = leaders.iter().any(|(page, _)| shown.contains(page));
            let mut extra: Vec<Candidate> = Vec::new();
            if !agree {
                // On one page, the words that name the document ("Activision
                // Blizzard" on every page of its 10-K) are as rare as any:
                // the page's passage is chosen by the others, as TOC routing
                // does (unless nothing else is left).
                let page_keywords: Vec<PreparedKeyword> = if keywords.iter().any(|k| !k.names_document) {
                    keywords
                        .iter()
                        .map(|k| PreparedKeyword { weight: if k.names_document { 0.0 } else { k.weight }, ..k.clone() })
                        .collect()
                } else {
                    keywords.clone()
                };
                for &(page, _) in leaders {
                    let on_page = BTreeSet::from([page]);
                    let search = self.search(&page_keywords, document, &normalized, Some(&on_page), kind_re, None);
                    if let Some(best) = search.candidates.into_iter().next() {
                        ranked.retain(|c| !overlaps(&c.passage, &best.passage));
                        held_back.retain(|c| !overlaps(&c.passage, &best.passage));
                        outside.retain(|p| !overlaps(p, &best.passage));
                        extra.push(best);
                    }
                }
            }
            if !top_pages.is_empty() {
                trace.record(TraceEvent {
                    brick: "retrieve".to_owned(),
                    step: "page_ranking".to_owned(),
                    detail: json!({
                        "top_pages": top_pages.iter().map(|(p, s)| json!({"page": p, "bm25": (s * 100.0).round() / 100.0})).collect::<Vec<_>>(),
                        "shown_pages": shown,
                        "agree": agree,
                        "added": extra.iter().map(|c| json!({"page": c.passage.page, "lines": rows.to_document(c.passage.line_start, c.passage.line_end), "matched": c.passage.matched_keywords})).collect::<Vec<_>>(),
                    }),
                });
            }
            // A passage on one of the page ranking's first pages keeps its place.
            let best: BTreeSet<u32> = top_pages.iter().map(|(page, _)| *page).collect();
            let (placed, not_placed) = show_outside(&mut ranked, extra, top_k, &|c| best.contains(&c.passage.page));
            held_back.extend(not_placed);
            if placed > 0 {
                notes.push(format!(
                    "{placed} passage(s) shown from the pages where the question's words meet most (BM25 over pages {:?}), none of which was shown",
                    top_pages.iter().map(|(p, _)| *p).collect::<Vec<_>>()
                ));
                methods_used.push("page_ranking".to_owned());
            }
        }
        let mut passages: Vec<Passage> = ranked.into_iter().map(|c| c.passage).collect();
        let mut rest = passages.split_off(top_k.min(passages.len()));
        rest.extend(held_back.drain(..).map(|c| c.passage));
        if !outside.is_empty() {
            rest.truncate(self.config.reserve - outside.len());
            notes.push(format!(
                "next batch: {} passage(s) from outside the routed sections held in the reserve",
                outside.len()
            ));
            methods_used.push("wide_reserve".to_owned());
            rest.extend(outside);
        }
        rest.truncate(self.config.reserve);

        // Answer context: line, paragraph, page or section, as asked.
        let context = question.structural_hints.answer_context;
        let (mut passages, reserve) = expand_context(document, context, passages, rest, &mut notes);
        // A page the question names is read whole, in the place of its best
        // window: the user said where the answer is, and a table row the
        // windows missed ("On page 34, what were King's MAUs") is on it.
        if self.config.read_pages_whole {
            let whole = read_named_pages_whole(document, &hinted, &mut passages);
            if whole > 0 {
                notes.push(format!("{whole} page(s) named in the question read whole"));
                methods_used.push("named_page_whole".to_owned());
            }
        }
        // A document of a page or two (an invoice, a résumé) is short enough
        // to read whole: each page not already shown whole follows the
        // ranked passages, so a value whose label the question does not
        // word ("the candidate's name") is still read.
        if self.config.read_pages_whole && n_pages as usize <= SMALL_DOCUMENT_PAGES && hinted.is_empty() {
            let mut added = 0;
            for page in 1..=n_pages {
                if let Some(whole) = whole_page(document, page, &passages) {
                    passages.push(whole);
                    added += 1;
                }
            }
            if added > 0 {
                notes.push(format!("a document of {n_pages} page(s): {added} page(s) also read whole"));
                methods_used.push("small_document".to_owned());
            }
        }
        // A question about the document itself ("the date of this
        // agreement") is answered where a document states its title, date
        // and parties: its first page follows the ranked passages.
        if question.structural_hints.about_document
            && hinted.is_empty()
            && let Some(opening) = opening_passage(document, &passages)
        {
            notes.push("the question asks about the document itself: its first page is also read".to_owned());
            methods_used.push("document_opening".to_owned());
            passages.push(opening);
        }
        let passages: Vec<Passage> = passages.iter().map(|p| rows.passage_to_document(p)).collect();
        let reserve: Vec<Passage> = reserve.iter().map(|p| rows.passage_to_document(p)).collect();

        trace.record(TraceEvent {
            brick: "retrieve".to_owned(),
            step: "keyword_search".to_owned(),
            detail: json!({
                "keywords": keywords.iter().zip(&search.idf).map(|(k, idf)| json!({"keyword": k.label, "weight": k.weight, "idf": idf, "names_document": k.names_document})).collect::<Vec<_>>(),
                "pages_in_scope": match &scope { None => json!("all"), Some(pages) if pages.len() > 40 => json!(format!("{} pages", pages.len())), Some(pages) => json!(pages) },
                "lines_matched": search.lines_matched,
                "kind_boost": kind.as_ref().map(|(name, _)| *name),
                "answer_context": context,
                "passages": passages.iter().map(|p| json!({"page": p.page, "lines": [p.line_start, p.line_end], "score": p.score, "pinned": p.pinned, "matched": p.matched_keywords})).collect::<Vec<_>>(),
                "reserve": reserve.len(),
            }),
        });

        Ok(Retrieval { passages, reserve, methods_used, notes })
    }

    /// The passage shown for a named section's page: the whole page (a
    /// statement is read whole: its header row of years says which column
    /// is which), anchored on its best keyword match, else its heading.
    fn named_page_passage(
        &self,
        keywords: &[PreparedKeyword],
        document: &ParsedDocument,
        normalized: &[String],
        page: &named::NamedPage,
        kind_re: Option<&Regex>,
    ) -> Candidate {
        let scope = BTreeSet::from([page.page]);
        let search = self.search(keywords, document, normalized, Some(&scope), kind_re, None);
        let (first, last) = page_bounds(document, page.page);
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

    /// Cuts unpinned passages scoring under the floor share of the best one
    /// and passages matched only by keywords on more than half of the lines
    /// (no better than the unrelated baseline). The top passage is always
    /// kept. Returns (kept, held back for the reserve).
    fn apply_floor(&self, candidates: Vec<Candidate>, notes: &mut Vec<String>) -> (Vec<Candidate>, Vec<Candidate>) {
        let best = candidates.iter().map(|c| c.passage.score).fold(0.0, f64::max);
        let mut kept = Vec::new();
        let mut held = Vec::new();
        let (mut below, mut baseline) = (0, 0);
        for (rank, candidate) in candidates.into_iter().enumerate() {
            let p = &candidate.passage;
            if rank == 0 || p.pinned {
                kept.push(candidate);
            } else if !candidate.discriminating {
                baseline += 1;
                held.push(candidate);
            } else if p.score < self.floor * best {
                below += 1;
                held.push(candidate);
            } else {
                kept.push(candidate);
            }
        }
        if below > 0 {
            notes.push(format!(
                "relevance floor: {below} passage(s) under {:.0}% of the best score not shown",
                self.floor * 100.0
            ));
        }
        if baseline > 0 {
            notes.push(format!(
                "relevance floor: {baseline} passage(s) matched only by keywords on most lines not shown"
            ));
        }
        if kept.first().is_some_and(|c| !c.discriminating && !c.passage.pinned) {
            notes.push("nearest passage kept although its keywords are on most lines".to_owned());
        }
        (kept, held)
    }
}

/// Index range of the lines of `page` in `document.lines` (empty for a page
/// without text).
pub(crate) fn page_range(document: &ParsedDocument, page: u32) -> std::ops::Range<usize> {
    let start = document.lines.partition_point(|l| l.page < page);
    let end = document.lines.partition_point(|l| l.page <= page);
    start..end.max(start)
}

/// First and last line ids of a page (`(u32::MAX, 0)` for a page without text).
pub(crate) fn page_bounds(document: &ParsedDocument, page: u32) -> (u32, u32) {
    let range = page_range(document, page);
    if range.is_empty() {
        return (u32::MAX, 0);
    }
    (document.lines[range.start].line_id, document.lines[range.end - 1].line_id)
}

/// Documents of at most this many pages are also read whole.
const SMALL_DOCUMENT_PAGES: usize = 2;

/// The document's first page with text, whole, unless a passage already
/// shows it whole.
fn opening_passage(document: &ParsedDocument, passages: &[Passage]) -> Option<Passage> {
    let page = document.pages.iter().map(|p| p.page).find(|&page| {
        let (first, last) = page_bounds(document, page);
        first <= last
    })?;
    whole_page(document, page, passages)
}

/// Replaces the passages on each page of `pages` by the whole page, at the
/// place of the first of them (with its score and anchor line); a named
/// page no passage shows is left to the hinted-page rule. Returns how many
/// pages were widened.
fn read_named_pages_whole(document: &ParsedDocument, pages: &BTreeSet<u32>, passages: &mut Vec<Passage>) -> usize {
    let mut widened = 0;
    for &page in pages {
        let Some(at) = passages.iter().position(|p| p.page == page) else { continue };
        let Some(whole) = whole_page(document, page, passages) else { continue };
        passages[at] = Passage { line_start: whole.line_start, line_end: whole.line_end, ..passages[at].clone() };
        let mut index = 0;
        passages.retain(|p| {
            let keep = p.page != page || index == at;
            index += 1;
            keep
        });
        widened += 1;
    }
    widened
}

/// Page `page` whole as a passage, unless it has no text or a passage
/// already shows it whole.
fn whole_page(document: &ParsedDocument, page: u32, passages: &[Passage]) -> Option<Passage> {
    let (first, last) = page_bounds(document, page);
    if first > last || passages.iter().any(|p| p.page == page && p.line_start <= first && p.line_end >= last) {
        return None;
    }
    Some(Passage {
        line_start: first,
        line_end: last,
        page,
        score: 0.0,
        anchor_line: first,
        matched_keywords: Vec::new(),
        pinned: false,
    })
}

/// Whether two passages share a page and at least one line.
fn overlaps(a: &Passage, b: &Passage) -> bool {
    a.page == b.page && a.line_start <= b.line_end && b.line_start <= a.line_end
}

impl Retriever for KeywordRetriever {
    type Error = RetrieveError;

    fn name(&self) -> String {
        "keyword/0.2".to_owned()
    }

    fn retrieve(
        &self,
        question: &ParsedQuestion,
        document: &ParsedDocument,
        trace: &mut dyn TraceSink,
    ) -> Result<Retrieval, RetrieveError> {
        self.retrieve_with_router(&KeywordRouter::new(self.routing), question, document, trace)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use docintel_schema::{BBox, Keyword, NullSink};

    /// One slice of line texts per page (the shared test builder, with a page table).
    pub(crate) fn document(pages: &[&[&str]]) -> ParsedDocument {
        docintel_test_support::pages(pages).build()
    }

    #[test]
    fn a_named_page_is_read_whole_in_the_place_of_its_windows() {
        let document = document(&[&["a", "b", "c"], &["d", "e", "f", "g", "h"]]);
        let window = |page: u32, start: u32, end: u32, score: f64| Passage {
            line_start: start,
            line_end: end,
            page,
            score,
            anchor_line: start,
            matched_keywords: Vec::new(),
            pinned: false,
        };
        let mut passages = vec![window(2, 4, 4, 3.0), window(1, 1, 2, 2.0), window(2, 7, 8, 1.0)];
        let widened = read_named_pages_whole(&document, &BTreeSet::from([2]), &mut passages);
        assert_eq!(widened, 1);
        let shown: Vec<(u32, u32, u32)> = passages.iter().map(|p| (p.page, p.line_start, p.line_end)).collect();
        assert_eq!(shown, [(2, 4, 8), (1, 1, 2)]);
        assert_eq!((passages[0].score, passages[0].anchor_line), (3.0, 4));
        // A named page no window shows, or one already shown whole, is left.
        assert_eq!(read_named_pages_whole(&document, &BTreeSet::from([1, 2]), &mut passages), 1);
        assert_eq!(passages[1].line_end, 3);
    }

    pub(crate) fn question(keywords: &[&str], answer_type: &str, pages: &[u32]) -> ParsedQuestion {
        let mut q = ParsedQuestion::unparsed("test", "test");
        q.keywords = keywords.iter().map(|k| Keyword::direct(*k)).collect();
        q.answer_type = answer_type.to_owned();
        q.retrieval.pages = pages.to_vec();
        q
    }

    fn check(doc: &ParsedDocument, q: &ParsedQuestion, top_k: usize) -> Retrieval {
        let retriever = KeywordRetriever::new(RetrieveConfig { top_k, window: 1, reserve: 5, read_pages_whole: false });
        let retrieval = retriever.retrieve(q, doc, &mut NullSink).unwrap();
        for p in &retrieval.passages {
            assert!(p.line_start <= p.anchor_line && p.anchor_line <= p.line_end);
            let lines = doc.line_range(p.line_start, p.line_end);
            assert!(lines.iter().all(|l| l.page == p.page), "passage crosses a page: {p:?}");
        }
        retrieval
    }

    #[test]
    fn a_line_marked_invisible_is_never_matched() {
        // hidden_white_text.pdf: white-on-white "TOTAL AMOUNT DUE: $999.00" under the real total.
        let mut doc = document(&[&["Invoice 42", "Total: $1,234.56", "TOTAL AMOUNT DUE: $999.00"]]);
        let q = question(&["total", "amount", "due"], "amount", &[]);
        assert_eq!(check(&doc, &q, 3).passages[0].anchor_line, 3, "the hidden line wins when visible");
        let mut hidden = docintel_schema::Diagnostic::new(docintel_schema::Severity::Warning, Some(1), "hidden");
        hidden.invisible_lines = vec![3];
        doc.diagnostics.push(hidden);
        let r = check(&doc, &q, 3);
        assert!(r.passages.iter().all(|p| p.anchor_line != 3 && p.matched_keywords.len() < 3), "{r:?}");
        assert_eq!(r.passages[0].anchor_line, 2, "{r:?}");
    }

    #[test]
    fn a_question_about_the_document_itself_reads_its_first_page() {
        // The date of the agreement is stated once, in its opening; the
        // question's words meet on later pages.
        let doc = document(&[
            &["COOPERATION AGREEMENT", "This Agreement, dated as of June 27, 2017, is made by The Meet Group, Inc."],
            &["The date of this Agreement is the date first above written.", "filler"],
            &["A date set by the Board under this Agreement.", "filler"],
        ]);
        let mut q = question(&["date", "agreement"], "date", &[]);
        let r = check(&doc, &q, 1);
        assert!(r.passages.iter().all(|p| p.page != 1), "{r:?}");
        q.structural_hints.about_document = true;
        let r = check(&doc, &q, 1);
        let opening = r.passages.last().unwrap();
        assert_eq!((opening.page, opening.line_start, opening.line_end), (1, 1, 2), "{r:?}");
        assert!(r.methods_used.contains(&"document_opening".to_owned()), "{r:?}");
    }

    #[test]
    fn rare_keyword_with_amount_ranks_first() {
        let doc = document(&[&["Invoice 42", "Subtotal $3.00", "Invoice date 2014-08-03", "Total $4.11", "Thank you"]]);
        let r = check(&doc, &question(&["total", "amount"], "amount", &[]), 3);
        assert_eq!(r.passages[0].anchor_line, 4, "{r:?}");
        // "total" must not match inside "subtotal".
        assert!(!r.passages.iter().any(|p| p.anchor_line == 2));
    }

    #[test]
    fn passages_from_outside_the_route_never_displace_the_best_a_pin_or_a_coverage_addition() {
        let candidate = |page: u32, pinned: bool, coverage: bool| Candidate {
            passage: Passage {
                line_start: page,
                line_end: page,
                page,
                score: 1.0,
                anchor_line: page,
                matched_keywords: vec![],
                pinned,
            },
            discriminating: true,
            coverage,
        };
        let pages = |c: &[Candidate]| c.iter().map(|c| c.passage.page).collect::<Vec<_>>();
        // Free places are filled first.
        let mut ranked = vec![candidate(1, false, false), candidate(2, false, false)];
        let (shown, rest) = show_outside(&mut ranked, vec![candidate(9, false, false)], 3, &|_| false);
        assert_eq!((shown, pages(&ranked), rest.len()), (1, vec![1, 2, 9], 0));
        // Full: the last plain passage gives way; the pinned one and the
        // coverage addition stay; the displaced one heads the rest.
        let mut ranked = vec![
            candidate(1, false, false),
            candidate(2, false, false),
            candidate(3, true, false),
            candidate(4, false, true),
            candidate(5, false, false),
        ];
        let (shown, rest) =
            show_outside(&mut ranked, vec![candidate(8, false, false), candidate(9, false, false)], 4, &|_| false);
        assert_eq!(shown, 1, "only one plain place after the best: {:?}", pages(&ranked));
        assert_eq!(pages(&ranked), [1, 8, 3, 4, 2, 5]);
        assert_eq!(pages(&rest), [9]);
        // Never before the route's best passage.
        let mut ranked = vec![candidate(1, false, false)];
        let (shown, rest) = show_outside(&mut ranked, vec![candidate(9, false, false)], 1, &|_| false);
        assert_eq!((shown, pages(&ranked), pages(&rest)), (0, vec![1], vec![9]));
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
    fn the_pieces_of_a_printed_line_are_passed_on_together() {
        // The parser split each row at its tab-stop gap: "Total" and its
        // amount, "Subtotal" and its amount are lines of their own.
        let mut doc = document(&[&["Subtotal", "$3.00", "Total", "$4.11", "Thank you for your order"]]);
        let boxes = [(72.0, 100.0, 700.0), (115.0, 140.0, 700.0), (72.0, 95.0, 686.0), (115.0, 140.0, 686.0)];
        for (line, (x0, x1, y0)) in doc.lines.iter_mut().zip(boxes) {
            line.bbox = BBox { x0, y0, x1, y1: y0 + 10.0 };
        }
        doc.lines[4].bbox = BBox { x0: 72.0, y0: 600.0, x1: 300.0, y1: 610.0 };
        let retriever =
            KeywordRetriever::new(RetrieveConfig { top_k: 3, window: 0, reserve: 5, read_pages_whole: false });
        // A text question: no reaching down for an amount, the row alone.
        let r = retriever.retrieve(&question(&["total"], "text", &[]), &doc, &mut NullSink).unwrap();
        let p = &r.passages[0];
        assert_eq!((p.line_start, p.line_end, p.anchor_line), (3, 4, 3), "{r:?}");
        assert_eq!(r.passages.len(), 1, "{r:?}");
    }

    #[test]
    fn pages_hint_filters_and_keeps_unmatched_pages() {
        let doc = document(&[&["premium 100 EUR"], &["premium 200 EUR"], &["nothing relevant here"]]);
        let r = check(&doc, &question(&["premium"], "amount", &[2, 3, 9]), 5);
        let pages: Vec<u32> = r.passages.iter().map(|p| p.page).collect();
        assert_eq!(pages, vec![2, 3]);
        assert!(r.passages[1].pinned);
        assert!(r.notes.iter().any(|n| n.contains("[9]")), "{:?}", r.notes);
        assert_eq!(r.methods_used[0], "pages_hint");
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

    fn anchor(q: &mut ParsedQuestion, text: &str) {
        q.keywords.push(Keyword {
            text: text.into(),
            weight: 3.0,
            source: KeywordSource::Anchor,
            is_regex: false,
            semantic_group: None,
        });
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
    fn coverage_pass_adds_a_missing_term_for_a_text_question() {
        // "plan" dominates by weight and fills the passages shown; "refund"
        // is once on page 2, under the floor.
        let mut first = filler(30, "filler");
        for i in [2, 9, 16, 23] {
            first[i] = format!("plan option {i}");
        }
        let refs: Vec<&str> = first.iter().map(String::as_str).collect();
        let doc = document(&[&refs, &["refund within 30 days"]]);
        let mut q = question(&["plan", "refund"], "text", &[]);
        q.keywords[0].weight = 20.0;
        let retriever =
            KeywordRetriever::new(RetrieveConfig { top_k: 3, window: 0, reserve: 5, read_pages_whole: false });
        let mut events = Vec::new();
        let r = retriever.retrieve(&q, &doc, &mut events).unwrap();
        assert!(r.passages.iter().any(|p| p.page == 2), "{r:?}");
        let pass: Vec<&TraceEvent> = events.iter().filter(|e| e.step == "coverage_pass").collect();
        assert_eq!(pass.len(), 1);
        assert_eq!(pass[0].detail["missing_terms"], json!(["refund"]));
        assert!(pass[0].detail["missing_kind"].is_null());
    }

    #[test]
    fn the_reserve_is_served_once_as_the_next_batch() {
        let pages: Vec<Vec<&str>> = (0..6).map(|_| vec!["fee 10 EUR"]).collect();
        let refs: Vec<&[&str]> = pages.iter().map(|p| p.as_slice()).collect();
        let doc = document(&refs);
        let r = check(&doc, &question(&["fee"], "amount", &[]), 2);
        let mut state = crate::RetrievalState::new(&r);
        let batch = state.next_batch().unwrap();
        assert_eq!(batch.iter().map(|p| p.page).collect::<Vec<_>>(), vec![3, 4, 5, 6]);
        assert!(batch.iter().all(|b| !r.passages.iter().any(|p| p.page == b.page)), "never a shown passage again");
        assert_eq!(state.next_batch(), None);
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
    fn a_small_document_is_also_read_whole() {
        let doc = document(&[&["Leo Leopard", "University of La Verne", "GPA: 3.5"]]);
        let q = question(&["candidate", "name"], "person", &[]);
        let retriever =
            KeywordRetriever::new(RetrieveConfig { top_k: 3, window: 1, reserve: 5, read_pages_whole: true });
        let r = retriever.retrieve(&q, &doc, &mut NullSink).unwrap();
        assert_eq!(r.passages.len(), 1, "{r:?}");
        assert_eq!((r.passages[0].line_start, r.passages[0].line_end), (1, 3));
        assert!(r.methods_used.contains(&"small_document".to_owned()));
        // Off: nothing matches, nothing is read.
        let r = check(&doc, &q, 3);
        assert!(r.passages.is_empty());
    }

    #[test]
    fn nothing_matches_gives_no_passages_and_a_note() {
        let doc = document(&[&["alpha", "beta"]]);
        let r = check(&doc, &question(&["gamma"], "text", &[]), 3);
        assert!(r.passages.is_empty());
        assert_eq!(r.notes, vec!["no line matched any question keyword".to_owned()]);
    }

    #[test]
    fn overflow_goes_to_the_reserve() {
        let pages: Vec<Vec<&str>> = (0..6).map(|_| vec!["fee 10 EUR"]).collect();
        let refs: Vec<&[&str]> = pages.iter().map(|p| p.as_slice()).collect();
        let doc = document(&refs);
        let r = check(&doc, &question(&["fee"], "amount", &[]), 2);
        assert_eq!(r.passages.len(), 2);
        assert_eq!(r.reserve.len(), 4);
        assert_eq!(r.passages[0].page, 1, "ties break in document order");
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

    fn filler(n: usize, text: &str) -> Vec<String> {
        (0..n).map(|i| format!("{text} {i}")).collect()
    }

    #[test]
    fn relevance_floor_returns_fewer_passages_than_top_k() {
        // "premium" is rare and strong; "note" on one other line is weak.
        let mut page: Vec<String> = filler(30, "filler");
        page[3] = "annual premium 100 EUR premium".into();
        page[20] = "note".into();
        let refs: Vec<&str> = page.iter().map(String::as_str).collect();
        let doc = document(&[&refs]);
        // "note" is a dictionary synonym of the concept "premium": covered
        // by "premium", so no coverage pass brings it back.
        let mut q = question(&["premium"], "text", &[]);
        q.keywords[0].weight = 5.0;
        q.keywords.push(Keyword {
            text: "note".into(),
            weight: 1.0,
            source: KeywordSource::ExpertDictionary,
            is_regex: false,
            semantic_group: Some("premium".into()),
        });
        let r = check(&doc, &q, 5);
        assert_eq!(r.passages.len(), 1, "{r:?}");
        assert!(r.notes.iter().any(|n| n.contains("relevance floor")), "{:?}", r.notes);
        assert_eq!(r.reserve.len(), 1, "the cut passage waits in the reserve");
        // Floor off: padded back to both.
        let off = KeywordRetriever::new(RetrieveConfig { top_k: 5, window: 1, reserve: 5, read_pages_whole: false })
            .with_floor(0.0);
        assert_eq!(off.retrieve(&q, &doc, &mut NullSink).unwrap().passages.len(), 2);
    }

    #[test]
    fn nearest_passage_is_kept_when_only_baseline_keywords_match() {
        // "policy" is on every line: no better than chance, yet the nearest
        // passage stays.
        let page: Vec<String> = filler(40, "policy line");
        let refs: Vec<&str> = page.iter().map(String::as_str).collect();
        let doc = document(&[&refs]);
        let r = check(&doc, &question(&["policy"], "text", &[]), 5);
        assert_eq!(r.passages.len(), 1, "{r:?}");
        assert_eq!(r.passages[0].anchor_line, 1);
        assert!(r.notes.iter().any(|n| n.contains("nearest passage kept")), "{:?}", r.notes);
    }

    #[test]
    fn coverage_pass_adds_the_missing_term_and_the_missing_kind() {
        // "starter" is everywhere on page 1; the price is on page 2 with
        // "price" only.
        let doc = document(&[
            &["Starter plan", "for small teams", "onboarding", "help", "Starter support", "more", "about us"],
            &["Contact", "about", "price: $49 per month"],
        ]);
        let mut q = question(&["starter", "price"], "amount", &[]);
        q.keywords[0].weight = 10.0;
        let r = check(&doc, &q, 2);
        assert!(r.methods_used.contains(&"coverage_pass".to_owned()), "{r:?}");
        assert!(r.passages.iter().any(|p| p.page == 2), "{r:?}");
        assert_eq!(r.passages[0].page, 1, "the top match stays first");
        let mut events = Vec::new();
        let retriever =
            KeywordRetriever::new(RetrieveConfig { top_k: 2, window: 0, reserve: 5, read_pages_whole: false });
        retriever.retrieve(&q, &doc, &mut events).unwrap();
        let pass: Vec<&TraceEvent> = events.iter().filter(|e| e.step == "coverage_pass").collect();
        assert_eq!(pass.len(), 1, "once, never a loop");
        assert_eq!(pass[0].detail["missing_kind"], "amount");
        // Nothing missing: no second pass.
        let q = question(&["price"], "amount", &[]);
        assert!(!check(&doc, &q, 2).methods_used.contains(&"coverage_pass".to_owned()));
    }

    #[test]
    fn toc_routing_restricts_the_search_and_falls_back_when_it_finds_nothing() {
        let mut doc =
            document(&[&["Fees", "fee 10 EUR", "account fee"], &["Limits", "fee 20 EUR", "limit of the account"]]);
        let entry = |id: u32, title: &str, page: u32| docintel_schema::TocEntry {
            id,
            parent: None,
            level: 1,
            title: title.to_owned(),
            start_page: page,
            end_page: page,
            source: docintel_schema::TocSource::Outline,
        };
        doc.toc = vec![entry(0, "Fees", 1), entry(1, "Limits", 2)];
        let r = check(&doc, &question(&["limits", "fee"], "text", &[1]), 5);
        assert!(!r.methods_used.contains(&"toc".to_owned()), "a pages hint skips routing: {r:?}");
        let r = check(&doc, &question(&["limits", "fee"], "text", &[]), 5);
        assert!(r.methods_used.contains(&"toc".to_owned()), "{r:?}");
        // The route's best passage first; a passage among the whole
        // document's top ones that the route left out takes a last place.
        assert_eq!(r.passages[0].page, 2, "{r:?}");
        assert!(r.methods_used.contains(&"wide_shown".to_owned()), "{r:?}");
        assert!(r.passages.iter().any(|p| p.page == 1), "{r:?}");
        let r = check(&doc, &question(&["limits", "fee"], "text", &[]), 1);
        assert!(r.passages.iter().all(|p| p.page == 2), "{r:?}");
        // The next batch reaches outside the route: page 1's fee lines wait
        // in the reserve, after what the routed pages held back.
        assert!(r.methods_used.contains(&"wide_reserve".to_owned()), "{r:?}");
        assert!(r.reserve.iter().any(|p| p.page == 1), "{r:?}");
        assert!(r.notes.iter().any(|n| n.contains("outside the routed sections")), "{:?}", r.notes);
        // Without TOC navigation both pages compete.
        let mut q = question(&["limits", "fee"], "text", &[]);
        q.activations.use_toc_navigation = false;
        assert!(check(&doc, &q, 5).passages.iter().any(|p| p.page == 1));
        // A regex router that lands on a page without any hit falls back.
        struct FirstRouter;
        impl Router for FirstRouter {
            type Error = std::convert::Infallible;
            fn route(
                &self,
                lines: &[docintel_schema::RouterLine],
                _: &ParsedQuestion,
            ) -> Result<docintel_schema::RouterPick, Self::Error> {
                Ok(docintel_schema::RouterPick { ids: vec![lines[0].id], reason: "always the first".into() })
            }
            fn name(&self) -> String {
                "first".into()
            }
        }
        let retriever =
            KeywordRetriever::new(RetrieveConfig { top_k: 5, window: 0, reserve: 5, read_pages_whole: false });
        let r = retriever
            .retrieve_with_router(&FirstRouter, &question(&["limit"], "text", &[]), &doc, &mut NullSink)
            .unwrap();
        assert!(r.methods_used.contains(&"toc_fallback".to_owned()), "{r:?}");
        assert_eq!(r.passages[0].page, 2);
    }

    #[test]
    fn a_plural_in_the_question_finds_the_singular_in_the_document() {
        // Without number forms, page 1 ("members") and page 2 ("card") tie
        // and document order puts page 1 first.
        let doc = document(&[
            &["The members of the board met twice.", "filler"],
            &["Card Member retention remained high.", "filler"],
        ]);
        let r = check(&doc, &question(&["card", "members"], "text", &[]), 2);
        assert_eq!(r.passages[0].page, 2, "{r:?}");
        assert_eq!(r.passages[0].matched_keywords, ["card", "members"], "{r:?}");
        // Other languages match as written.
        let mut q = question(&["card", "members"], "text", &[]);
        q.language = Some("fr".to_owned());
        assert_eq!(check(&doc, &q, 2).passages[0].page, 1);
    }

    /// Ten pages with the company's name in every footer; the results on
    /// page 5; the list of subsidiaries on page 10, under a TOC title that
    /// carries the company's name.
    fn annual_report() -> ParsedDocument {
        let mut pages: Vec<Vec<&str>> = Vec::new();
        pages.push(vec!["Acme Corp annual report 2022", "filler"]);
        for page in 2..=9 {
            pages.push(match page {
                5 => vec!["Operating margin rose to 12% on lower costs.", "Acme Corp"],
                _ => vec!["Discussion of the year.", "Acme Corp"],
            });
        }
        pages.push(vec!["Acme Corp and subsidiaries", "Acme Tools Ltd", "Acme Finance BV"]);
        let borrowed: Vec<&[&str]> = pages.iter().map(Vec::as_slice).collect();
        let mut doc = document(&borrowed);
        let entry = |id: u32, title: &str, pages: (u32, u32)| docintel_schema::TocEntry {
            id,
            parent: None,
            level: 1,
            title: title.to_owned(),
            start_page: pages.0,
            end_page: pages.1,
            source: docintel_schema::TocSource::Outline,
        };
        doc.toc = vec![entry(0, "Results of operations", (1, 9)), entry(1, "Acme Corp and subsidiaries", (10, 10))];
        doc
    }

    #[test]
    fn a_word_on_most_pages_names_the_document_and_does_not_route() {
        let doc = annual_report();
        let q = question(&["acme", "margin"], "text", &[]);
        let r = check(&doc, &q, 3);
        // The company's name in the exhibit's title would win the route
        // (and lose the margin) if it counted there.
        assert!(r.methods_used.contains(&"toc".to_owned()), "{r:?}");
        assert_eq!(r.passages[0].page, 5, "{r:?}");
        assert!(r.notes.iter().any(|n| n.contains("[\"acme\"]") && n.contains("name the document")), "{:?}", r.notes);
        // A short document has no document words.
        let short = document(&[&["Acme Corp invoice", "Total 4.11"], &["Acme Corp", "Thank you"]]);
        let mut keywords = KeywordRetriever::prepare(&q).unwrap();
        let normalized: Vec<String> = short.lines.iter().map(|l| normalize(&l.text)).collect();
        let index = PageIndex::build(&short, &normalized);
        assert!(mark_document_words(&mut keywords, &short, &normalized, &index).is_empty());
        let normalized: Vec<String> = doc.lines.iter().map(|l| normalize(&l.text)).collect();
        let index = PageIndex::build(&doc, &normalized);
        assert_eq!(mark_document_words(&mut keywords, &doc, &normalized, &index), ["acme"]);
        // A phrase is counted by its pages too.
        let mut phrase = KeywordRetriever::prepare(&question(&["acme corp"], "text", &[])).unwrap();
        assert_eq!(mark_document_words(&mut phrase, &doc, &normalized, &index), ["acme corp"]);
    }

    #[test]
    fn the_pages_where_the_question_words_meet_are_shown_when_the_line_ranking_missed_them() {
        // Pages 1-5 name both words once, on one line: the line ranking
        // shows them first. Pages 8-10 hold each word three times, one per
        // line (a table under its heading): the page ranking puts them
        // first, and none of them is shown.
        let mut pages: Vec<Vec<&str>> = Vec::new();
        for page in 1..=12 {
            pages.push(match page {
                1..=5 => vec![
                    "Pension plans for retirees are described below.",
                    "filler",
                    "filler",
                    "filler",
                    "filler",
                    "filler",
                ],
                8..=10 => vec![
                    "Pension benefits",
                    "pension 2022",
                    "pension 2023",
                    "paid to retirees",
                    "retirees in 2024",
                    "retirees later",
                ],
                _ => vec!["filler", "filler", "filler", "filler", "filler", "filler"],
            });
        }
        let borrowed: Vec<&[&str]> = pages.iter().map(Vec::as_slice).collect();
        let doc = document(&borrowed);
        let r = check(&doc, &question(&["pension", "retirees"], "text", &[]), 5);
        let shown: Vec<u32> = r.passages.iter().map(|p| p.page).collect();
        assert!(r.methods_used.contains(&"page_ranking".to_owned()), "{r:?}");
        assert!(shown.contains(&8) && shown.contains(&9), "{shown:?}");
        // The best passage stays first.
        assert_eq!(shown[0], 1, "{shown:?}");
        // The user's pages hint turns it off.
        let r = check(&doc, &question(&["pension", "retirees"], "text", &[1, 2, 3]), 5);
        assert!(!r.methods_used.contains(&"page_ranking".to_owned()), "{r:?}");
        // When a page the page ranking puts first is shown, nothing moves.
        let r = check(&doc, &question(&["pension", "retirees"], "text", &[]), 12);
        assert!(!r.methods_used.contains(&"page_ranking".to_owned()), "{r:?}");
    }

    #[test]
    fn word_boundaries() {
        assert!(contains_word("total: 4.11", "total"));
        assert!(!contains_word("subtotal 3", "total"));
        assert!(contains_word("see ac-2 now", "ac-2"));
        assert!(!contains_word("see ac-20 now", "ac-2"));
        assert!(contains_word("ia-5(1) x", "ia-5(1)"));
    }
}
