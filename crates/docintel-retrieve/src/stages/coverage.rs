//! Stage `coverage`: the coverage second pass, decided in code.
//!
//! After the first search two string checks run on the passages shown:
//! (a) every salient question keyword (direct or anchor; a dictionary synonym
//! counts for its concept) appears in some passage; (b) the kind of thing
//! asked for appears (a currency-looking token for amounts, a date for dates,
//! an email or URL for contacts). Either failing triggers ONE more search with
//! the missing terms (or for lines carrying the missing kind), merged into the
//! passages. Once, never a loop: nothing here calls itself.

use std::collections::BTreeSet;

use docintel_schema::text::normalize;
use docintel_schema::{ParsedDocument, TraceEvent, TraceSink};
use regex::Regex;
use serde_json::json;

use super::{Ctx, RankingState};
use crate::error::RetrieveError;
use crate::matching::{Candidate, PreparedKeyword, overlaps};
use crate::search::Searcher;

/// Runs the check on the candidates shown and, when it fails, the second
/// pass once: its passages take the last places shown (the top match always
/// stays), the displaced ones go down the ranking.
pub(crate) fn run(state: &mut RankingState, ctx: &Ctx<'_>, trace: &mut dyn TraceSink) -> Result<(), RetrieveError> {
    let top_k = ctx.config.top_k;
    let ranked = &mut state.ranked;
    let check =
        CoverageCheck::run(&state.keywords, ctx.kind.as_ref(), ctx.document, &ranked[..top_k.min(ranked.len())]);
    if ranked.is_empty() || !check.failed() {
        return Ok(());
    }
    // The safety net for the router: the second search covers the
    // whole document (or the pages the user pinned).
    let net = (!state.hinted.is_empty()).then_some(&state.hinted);
    let added = second_pass(&ctx.searcher, &check, &state.keywords, net, ctx.kind.as_ref(), ranked);
    let rows = ctx.rows;
    trace.record(TraceEvent {
        brick: "retrieve".to_owned(),
        step: "coverage_pass".to_owned(),
        detail: json!({
            "missing_terms": check.missing_terms,
            "missing_kind": check.missing_kind,
            "added": added.iter().map(|c| json!({"page": c.passage.page, "lines": rows.to_document(c.passage.line_start, c.passage.line_end), "matched": c.passage.matched_keywords})).collect::<Vec<_>>(),
        }),
    });
    state.methods_used.push("coverage_pass".to_owned());
    state.notes.push(format!(
        "coverage second pass: missing {}{}; {} passage(s) added",
        if check.missing_terms.is_empty() { "no term".to_owned() } else { format!("{:?}", check.missing_terms) },
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
    Ok(())
}

/// What the first search missed.
#[derive(Debug, Clone, PartialEq)]
struct CoverageCheck {
    /// Concept groups of salient keywords found in no passage shown.
    missing_terms: Vec<String>,
    /// The kind of value asked for, when no passage shown carries one.
    missing_kind: Option<&'static str>,
}

impl CoverageCheck {
    /// Runs both checks on the passages shown.
    fn run(
        keywords: &[PreparedKeyword],
        kind: Option<&(&'static str, Regex)>,
        document: &ParsedDocument,
        shown: &[Candidate],
    ) -> CoverageCheck {
        let lines: Vec<(&str, String)> = shown
            .iter()
            .flat_map(|c| document.line_range(c.passage.line_start, c.passage.line_end))
            .map(|l| (l.text.as_str(), normalize(&l.text)))
            .collect();
        let salient_groups: BTreeSet<&str> =
            keywords.iter().filter(|k| k.salient && !k.is_regex()).map(|k| k.group.as_str()).collect();
        let missing_terms = salient_groups
            .into_iter()
            .filter(|group| {
                !keywords.iter().filter(|k| k.group == *group).any(|k| lines.iter().any(|(_, n)| k.matches(n)))
            })
            .map(str::to_owned)
            .collect();
        let missing_kind = kind.filter(|(_, re)| !lines.iter().any(|(raw, _)| re.is_match(raw))).map(|(name, _)| *name);
        CoverageCheck { missing_terms, missing_kind }
    }

    /// Whether either check failed.
    fn failed(&self) -> bool {
        !self.missing_terms.is_empty() || self.missing_kind.is_some()
    }
}

/// The one extra search: the best passage for each missing term, and the best
/// passage carrying the missing kind of value, not already shown.
fn second_pass(
    searcher: &Searcher<'_>,
    check: &CoverageCheck,
    keywords: &[PreparedKeyword],
    scope: Option<&BTreeSet<u32>>,
    kind: Option<&(&'static str, Regex)>,
    shown: &[Candidate],
) -> Vec<Candidate> {
    let mut added: Vec<Candidate> = Vec::new();
    let is_new =
        |c: &Candidate, added: &[Candidate]| !shown.iter().chain(added).any(|s| overlaps(&s.passage, &c.passage));
    let kind_re = kind.map(|(_, re)| re);
    if !check.missing_terms.is_empty() {
        let missing: Vec<PreparedKeyword> =
            keywords.iter().filter(|k| check.missing_terms.contains(&k.group)).cloned().collect();
        let search = searcher.search(&missing, scope, kind_re, None);
        for group in &check.missing_terms {
            let labels: Vec<&str> = missing.iter().filter(|k| &k.group == group).map(|k| k.label.as_str()).collect();
            let best = search
                .candidates
                .iter()
                .find(|c| c.passage.matched_keywords.iter().any(|m| labels.contains(&m.as_str())) && is_new(c, &added));
            if let Some(best) = best {
                added.push(Candidate { coverage: true, ..best.clone() });
            }
        }
    }
    if let Some(re) = kind_re.filter(|_| check.missing_kind.is_some()) {
        let search = searcher.search(keywords, scope, None, Some(re));
        if let Some(best) = search.candidates.iter().find(|c| is_new(c, &added)) {
            added.push(Candidate { coverage: true, ..best.clone() });
        } else if let Some(nearest) = check
            .missing_kind
            .filter(|kind| SPARSE_KINDS.contains(kind))
            .and_then(|_| nearest_kind_line(searcher, re, keywords))
        {
            // No line with a question word carries one ("Tel: 01983 873655"
            // for "the telephone no"): the one nearest a line that does.
            if is_new(&nearest, &added) {
                added.push(nearest);
            }
        }
    }
    added
}

/// The kinds rare enough in a document that the one nearest a question
/// word is likely the one asked for: telephones, emails and web addresses.
/// Amounts and dates fill every statement and schedule; for them nearness
/// alone says nothing.
const SPARSE_KINDS: &[&str] = &["phone", "contact"];

/// How far (in lines, on one page) a line of the kind may be from a line
/// with a question word to be taken for its value: a label block ("The
/// Limes Residential Home / address / Tel: …") is a few lines tall.
const KIND_NEAR: u32 = 10;

/// The line of the kind nearest a line carrying a question word on the same
/// page (the first such pair in the document on a tie), as a passage of it
/// and its neighbours.
fn nearest_kind_line(searcher: &Searcher<'_>, re: &Regex, keywords: &[PreparedKeyword]) -> Option<Candidate> {
    let document = searcher.document;
    let salient: Vec<&PreparedKeyword> = keywords.iter().filter(|k| k.salient && !k.is_regex()).collect();
    let worded: Vec<(u32, u32)> = document
        .lines
        .iter()
        .zip(searcher.normalized)
        .filter(|(_, n)| salient.iter().any(|k| k.matches(n)))
        .map(|(l, _)| (l.page, l.line_id))
        .collect();
    let (_, line) = document
        .lines
        .iter()
        .filter(|l| re.is_match(&l.text))
        .filter_map(|l| {
            let distance =
                worded.iter().filter(|(page, _)| *page == l.page).map(|(_, id)| id.abs_diff(l.line_id)).min()?;
            (distance <= KIND_NEAR).then_some((distance, l))
        })
        .min_by_key(|(distance, l)| (*distance, l.line_id))?;
    // Line ids count from 1: line `id` is `lines[id - 1]`.
    let on_page = |id: u32| id >= 1 && document.lines.get(id as usize - 1).is_some_and(|l| l.page == line.page);
    let start = if on_page(line.line_id - 1) { line.line_id - 1 } else { line.line_id };
    let end = if on_page(line.line_id + 1) { line.line_id + 1 } else { line.line_id };
    Some(Candidate {
        passage: docintel_schema::Passage {
            line_start: start,
            line_end: end,
            page: line.page,
            score: 0.0,
            anchor_line: line.line_id,
            matched_keywords: Vec::new(),
            pinned: false,
        },
        discriminating: false,
        coverage: true,
    })
}

#[cfg(test)]
mod tests {
    use docintel_schema::{Retriever, TraceEvent};
    use serde_json::json;

    use crate::test_support::{check, document, filler, question};
    use crate::{KeywordRetriever, RetrieveConfig};

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
    fn a_phone_on_no_line_with_a_question_word_is_found_next_to_one() {
        // The home's number heads page 2 with the label "Tel" (not the
        // question's "telephone"), its name three lines under it, beyond the
        // window and the forward reach; page 1 fills the passages shown with
        // the name.
        let home = ["Limes Home report", "Limes Home staff", "Limes Home rooms", "Limes Home visits", "other"];
        let doc = document(&[&home, &["Tel: 01983 873655", "12 High Street", "Ventnor", "The Limes Home"]]);
        let q = question(&["telephone", "limes", "home"], "phone", &[]);
        let r = check(&doc, &q, 3);
        let shown: Vec<String> =
            r.passages.iter().flat_map(|p| doc.line_range(p.line_start, p.line_end)).map(|l| l.text.clone()).collect();
        assert!(shown.iter().any(|t| t.starts_with("Tel:")), "{shown:?}");
        // A bare digit run near the name is no telephone.
        let doc = document(&[&home, &["Rooms 2019 2018", "12 High Street", "Ventnor", "The Limes Home"]]);
        let r = check(&doc, &q, 3);
        assert!(
            r.passages
                .iter()
                .all(|p| p.page == 1
                    || !doc.line_range(p.line_start, p.line_end).iter().any(|l| l.text.contains("2019"))),
            "{r:?}"
        );
    }
}
