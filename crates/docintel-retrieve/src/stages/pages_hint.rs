//! The pages hint: the user named the pages where the answer is ("on page
//! 34"). Stage `pages_hint` keeps those that exist (the first search covers
//! them only, and TOC routing is skipped); stage `hinted_pages`, after the
//! ranking is built, keeps each one no passage is on, whole and pinned, even
//! without a keyword match on it.

use std::collections::BTreeSet;

use docintel_schema::TraceSink;

use super::{Ctx, RankingState};
use crate::error::RetrieveError;
use crate::matching::{Candidate, whole_page};

/// Pages hint first: the user pinned these pages.
pub(crate) fn filter(state: &mut RankingState, ctx: &Ctx<'_>, _: &mut dyn TraceSink) -> Result<(), RetrieveError> {
    let question = ctx.question;
    let n_pages = ctx.document.pages.len() as u32;
    let hinted: BTreeSet<u32> =
        question.retrieval.pages.iter().copied().filter(|p| (1..=n_pages).contains(p)).collect();
    let dropped: Vec<u32> = question.retrieval.pages.iter().copied().filter(|p| !hinted.contains(p)).collect();
    if !dropped.is_empty() {
        state.notes.push(format!("pages {dropped:?} named in the question do not exist (the document has {n_pages})"));
    }
    if !hinted.is_empty() {
        state.methods_used.push("pages_hint".to_owned());
    }
    state.hinted = hinted;
    Ok(())
}

/// Hinted pages survive even when no keyword matched on them: a page no
/// passage is on is kept whole, pinned, after the ranking. Then, when
/// nothing is ranked, says so.
pub(crate) fn keep_unmatched(
    state: &mut RankingState,
    ctx: &Ctx<'_>,
    _: &mut dyn TraceSink,
) -> Result<(), RetrieveError> {
    let document = ctx.document;
    for &page in &state.hinted {
        if state.ranked.iter().any(|c| c.passage.page == page) {
            continue;
        }
        let Some(passage) = whole_page(document, page, true) else {
            state.notes.push(format!("page {page} named in the question has no text"));
            continue;
        };
        state.notes.push(format!("page {page} kept whole: named in the question, no keyword matched on it"));
        state.ranked.push(Candidate { passage, discriminating: true, coverage: false });
    }
    if state.ranked.is_empty() {
        state.notes.push("no line matched any question keyword".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::test_support::{check, document, question};

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
    fn nothing_matches_gives_no_passages_and_a_note() {
        let doc = document(&[&["alpha", "beta"]]);
        let r = check(&doc, &question(&["gamma"], "text", &[]), 3);
        assert!(r.passages.is_empty());
        assert_eq!(r.notes, vec!["no line matched any question keyword".to_owned()]);
    }
}
