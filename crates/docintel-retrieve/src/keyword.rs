//! Lexical retrieval over the line table.

use std::collections::BTreeSet;

use docintel_schema::text::normalize;
use docintel_schema::{
    KeywordSource, ParsedDocument, ParsedQuestion, Passage, Retrieval, Retriever, TraceEvent, TraceSink, ValueKind,
};
use regex::Regex;
use serde_json::json;

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
}

/// Why retrieval failed. Retrieval over a well-formed document does not fail;
/// an error means the question carried an unusable regex.
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
}

impl std::fmt::Display for RetrieveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RetrieveError::BadRegex { pattern, .. } => write!(f, "keyword regex {pattern:?} does not compile"),
        }
    }
}

impl std::error::Error for RetrieveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RetrieveError::BadRegex { source, .. } => Some(source),
        }
    }
}

/// The deterministic lexical retriever.
#[derive(Debug, Clone)]
pub struct KeywordRetriever {
    config: RetrieveConfig,
}

/// A keyword prepared for matching.
enum Matcher {
    Text(String),
    Regex(Regex),
}

struct PreparedKeyword {
    label: String,
    weight: f64,
    pinning: bool,
    matcher: Matcher,
}

impl PreparedKeyword {
    fn matches(&self, normalized_line: &str) -> bool {
        match &self.matcher {
            Matcher::Text(needle) => contains_word(normalized_line, needle),
            Matcher::Regex(re) => re.is_match(normalized_line),
        }
    }
}

/// Whether `needle` occurs in `haystack` starting and ending on word
/// boundaries (so "total" matches "total:" but not "subtotal").
fn contains_word(haystack: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let is_word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    haystack.match_indices(needle).any(|(start, _)| {
        let before = haystack[..start].chars().next_back();
        let after = haystack[start + needle.len()..].chars().next();
        let needle_first = needle.chars().next();
        let needle_last = needle.chars().next_back();
        (!is_word(before) || !is_word(needle_first)) && (!is_word(after) || !is_word(needle_last))
    })
}

/// Tokens that look like what an answer of this kind needs.
fn kind_pattern(kind: ValueKind) -> Option<Regex> {
    let pattern = match kind {
        ValueKind::Amount => r"(?i)([$€£₹]|\b(usd|eur|gbp|inr|pln|chf|rs\.?|euros?|dollars?)\b)|\d[.,]\d{2}\b",
        ValueKind::Date => {
            r"(?i)\b\d{1,4}[-/.]\d{1,2}[-/.]\d{2,4}\b|\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|janv|févr|mars|avr|mai|juin|juil|août|sept|déc|januar|februar|märz|mai|juni|juli|oktober|dezember|maart|mei|okt)[a-zé]*\.?\s+\d{1,2}|\b\d{1,2}\.?\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|janv|févr|mars|avr|mai|juin|juil|août|sept|déc|maart|mei|okt)[a-zéû]*\.?\s+\d{4}"
        }
        _ => return None,
    };
    Some(Regex::new(pattern).expect("static pattern compiles"))
}

/// Score boost for a line that carries the kind of thing asked for.
const KIND_BONUS: f64 = 0.5;

/// How far (in lines, same page) a passage may be extended to reach a value
/// of the kind asked for.
const KIND_REACH: u32 = 8;

impl KeywordRetriever {
    /// A retriever with this configuration.
    pub fn new(config: RetrieveConfig) -> KeywordRetriever {
        KeywordRetriever { config }
    }

    /// The configuration.
    pub fn config(&self) -> RetrieveConfig {
        self.config
    }

    fn prepare(question: &ParsedQuestion) -> Result<Vec<PreparedKeyword>, RetrieveError> {
        let mut seen = BTreeSet::new();
        let mut prepared = Vec::new();
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
                Matcher::Text(text)
            };
            prepared.push(PreparedKeyword {
                label: keyword.text.clone(),
                weight: f64::from(keyword.weight.max(0.0)),
                pinning: keyword.source == KeywordSource::Anchor && !keyword.is_regex,
                matcher,
            });
        }
        Ok(prepared)
    }
}

impl Retriever for KeywordRetriever {
    type Error = RetrieveError;

    fn name(&self) -> String {
        "keyword/0.1".to_owned()
    }

    fn retrieve(
        &self,
        question: &ParsedQuestion,
        document: &ParsedDocument,
        trace: &mut dyn TraceSink,
    ) -> Result<Retrieval, RetrieveError> {
        let keywords = Self::prepare(question)?;
        let mut notes = Vec::new();
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
        let in_scope = |page: u32| hinted.is_empty() || hinted.contains(&page);

        // Inverse document frequency over lines in scope, so that a keyword on
        // every line ("invoice") counts less than a rare one ("total").
        let scope_lines: Vec<(usize, String)> = document
            .lines
            .iter()
            .enumerate()
            .filter(|(_, line)| in_scope(line.page))
            .map(|(index, line)| (index, normalize(&line.text)))
            .collect();
        let n = scope_lines.len().max(1) as f64;
        let idf: Vec<f64> = keywords
            .iter()
            .map(|k| {
                let df = scope_lines.iter().filter(|(_, text)| k.matches(text)).count() as f64;
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();

        let kind = ValueKind::for_answer_type(&question.answer_type);
        let kind_re = kind_pattern(kind);

        struct Hit {
            index: usize,
            score: f64,
            matched: Vec<String>,
            pinned: bool,
        }
        let mut hits: Vec<Hit> = Vec::new();
        for (index, text) in &scope_lines {
            let mut score = 0.0;
            let mut matched = Vec::new();
            let mut pinned = false;
            for (k, keyword) in keywords.iter().enumerate() {
                if keyword.matches(text) {
                    score += keyword.weight * idf[k];
                    matched.push(keyword.label.clone());
                    pinned |= keyword.pinning;
                }
            }
            if score == 0.0 {
                continue;
            }
            if kind_re.as_ref().is_some_and(|re| re.is_match(&document.lines[*index].text)) {
                score += KIND_BONUS * score.min(1.0);
            }
            hits.push(Hit { index: *index, score, matched, pinned });
        }
        if !keywords.is_empty() {
            methods_used.push("keyword".to_owned());
        }

        // Pinned (exact identifier) first, then score, then document order:
        // a stable, deterministic ranking.
        hits.sort_by(|a, b| b.pinned.cmp(&a.pinned).then(b.score.total_cmp(&a.score)).then(a.index.cmp(&b.index)));
        if hits.iter().any(|h| h.pinned) {
            methods_used.push("identifier_pinning".to_owned());
        }

        // Expand hits to windows on their page and merge overlapping ones.
        let window = self.config.window;
        let mut passages: Vec<Passage> = Vec::new();
        for hit in &hits {
            let line = &document.lines[hit.index];
            let page_lines = document.lines.iter().filter(|l| l.page == line.page);
            let (first, last) = page_lines.fold((u32::MAX, 0), |(lo, hi), l| (lo.min(l.line_id), hi.max(l.line_id)));
            let start = line.line_id.saturating_sub(window).max(first);
            let end = (line.line_id + window).min(last);
            if let Some(existing) =
                passages.iter_mut().find(|p| p.page == line.page && p.line_start <= end && start <= p.line_end)
            {
                existing.line_start = existing.line_start.min(start);
                existing.line_end = existing.line_end.max(end);
                for keyword in &hit.matched {
                    if !existing.matched_keywords.contains(keyword) {
                        existing.matched_keywords.push(keyword.clone());
                    }
                }
                continue;
            }
            passages.push(Passage {
                line_start: start,
                line_end: end,
                page: line.page,
                score: hit.score,
                anchor_line: line.line_id,
                matched_keywords: hit.matched.clone(),
                pinned: hit.pinned,
            });
        }

        // A label is often separated from its value by layout: "Invoice date"
        // in a header row, the date a few lines further down the same column.
        // When the question asks for a kind of value (amount, date) and a
        // passage holds none, extend it forward on its page until one shows,
        // by at most KIND_REACH lines.
        let mut extended = 0;
        if let Some(re) = &kind_re {
            for passage in &mut passages {
                let has_kind =
                    |p: &Passage| document.line_range(p.line_start, p.line_end).iter().any(|l| re.is_match(&l.text));
                if has_kind(passage) {
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
            let mut merged: Vec<Passage> = Vec::with_capacity(passages.len());
            for passage in passages {
                if let Some(existing) = merged.iter_mut().find(|p| {
                    p.page == passage.page && p.line_start <= passage.line_end && passage.line_start <= p.line_end
                }) {
                    existing.line_start = existing.line_start.min(passage.line_start);
                    existing.line_end = existing.line_end.max(passage.line_end);
                    existing.pinned |= passage.pinned;
                    for keyword in passage.matched_keywords {
                        if !existing.matched_keywords.contains(&keyword) {
                            existing.matched_keywords.push(keyword);
                        }
                    }
                } else {
                    merged.push(passage);
                }
            }
            passages = merged;
        }
        if extended > 0 {
            notes.push(format!(
                "{extended} passage(s) extended down their page to reach the first {} after the matched label",
                kind.as_str()
            ));
        }

        // Hinted pages survive even when no keyword matched on them.
        for &page in &hinted {
            if passages.iter().any(|p| p.page == page) {
                continue;
            }
            let mut lines = document.lines.iter().filter(|l| l.page == page);
            if let Some(first) = lines.next() {
                let last = lines.next_back().unwrap_or(first);
                notes.push(format!("page {page} kept whole: named in the question, no keyword matched on it"));
                passages.push(Passage {
                    line_start: first.line_id,
                    line_end: last.line_id,
                    page,
                    score: 0.0,
                    anchor_line: first.line_id,
                    matched_keywords: Vec::new(),
                    pinned: true,
                });
            } else {
                notes.push(format!("page {page} named in the question has no text"));
            }
        }

        if passages.is_empty() {
            notes.push("no line matched any question keyword".to_owned());
        }
        let reserve_end = (self.config.top_k + self.config.reserve).min(passages.len());
        let reserve = passages[self.config.top_k.min(passages.len())..reserve_end].to_vec();
        passages.truncate(self.config.top_k);

        trace.record(TraceEvent {
            brick: "retrieve".to_owned(),
            step: "keyword_search".to_owned(),
            detail: json!({
                "keywords": keywords.iter().zip(&idf).map(|(k, idf)| json!({"keyword": k.label, "weight": k.weight, "idf": idf})).collect::<Vec<_>>(),
                "pages_in_scope": if hinted.is_empty() { json!("all") } else { json!(hinted) },
                "lines_matched": hits.len(),
                "kind_boost": kind_re.is_some().then(|| kind.as_str()),
                "passages": passages.iter().map(|p| json!({"page": p.page, "lines": [p.line_start, p.line_end], "score": p.score, "pinned": p.pinned, "matched": p.matched_keywords})).collect::<Vec<_>>(),
                "reserve": reserve.len(),
            }),
        });

        Ok(Retrieval { passages, reserve, methods_used, notes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use docintel_schema::{BBox, DocumentFormat, DocumentProfile, Keyword, Line, NullSink, PageInfo};

    fn document(pages: &[&[&str]]) -> ParsedDocument {
        let mut lines = Vec::new();
        let mut infos = Vec::new();
        for (p, page_lines) in pages.iter().enumerate() {
            let page = p as u32 + 1;
            for (i, text) in page_lines.iter().enumerate() {
                lines.push(Line {
                    line_id: lines.len() as u32 + 1,
                    page,
                    line_in_page: i as u32 + 1,
                    text: (*text).to_owned(),
                    bbox: BBox::default(),
                });
            }
            infos.push(PageInfo {
                page,
                n_lines: page_lines.len() as u32,
                n_chars: 0,
                has_text_layer: !page_lines.is_empty(),
                n_images: 0,
                n_vector_paths: 0,
                has_figure: false,
                figure_kind: None,
                decorative_image_hashes: vec![],
                width: 612.0,
                height: 792.0,
            });
        }
        ParsedDocument {
            source: "test.pdf".into(),
            profile: DocumentProfile {
                format: DocumentFormat::Pdf,
                n_pages: Some(pages.len() as u32),
                has_toc: false,
                has_tables: false,
                languages: vec![],
                is_scanned: false,
                doc_type: None,
                typical_fields: vec![],
                summary: None,
            },
            lines,
            pages: infos,
            toc: vec![],
            diagnostics: vec![],
        }
    }

    fn question(keywords: &[&str], answer_type: &str, pages: &[u32]) -> ParsedQuestion {
        let mut q = ParsedQuestion::unparsed("test", "test");
        q.keywords = keywords.iter().map(|k| Keyword::direct(*k)).collect();
        q.answer_type = answer_type.to_owned();
        q.retrieval.pages = pages.to_vec();
        q
    }

    fn check(doc: &ParsedDocument, q: &ParsedQuestion, top_k: usize) -> Retrieval {
        let retriever = KeywordRetriever::new(RetrieveConfig { top_k, window: 1, reserve: 5 });
        let retrieval = retriever.retrieve(q, doc, &mut NullSink).unwrap();
        for p in &retrieval.passages {
            assert!(p.line_start <= p.anchor_line && p.anchor_line <= p.line_end);
            let lines = doc.line_range(p.line_start, p.line_end);
            assert!(lines.iter().all(|l| l.page == p.page), "passage crosses a page: {p:?}");
        }
        retrieval
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

    #[test]
    fn word_boundaries() {
        assert!(contains_word("total: 4.11", "total"));
        assert!(!contains_word("subtotal 3", "total"));
        assert!(contains_word("see ac-2 now", "ac-2"));
        assert!(!contains_word("see ac-20 now", "ac-2"));
        assert!(contains_word("ia-5(1) x", "ia-5(1)"));
    }
}
