//! Stage `whole_pages`: pages read whole, after the answer context. A page
//! the question names is read whole in the place of its best window (with
//! `RetrieveConfig::read_pages_whole`); so is every page of a document of
//! one or two pages, after the ranked passages; and a question about the
//! document itself ("the date of this agreement") also reads its first page.

use std::collections::BTreeSet;

use docintel_schema::{ParsedDocument, Passage, TraceSink};

use super::{Ctx, RankingState};
use crate::error::RetrieveError;
use crate::matching::{self, page_bounds};

/// Documents of at most this many pages are also read whole.
const SMALL_DOCUMENT_PAGES: usize = 2;

/// Reads the named pages, a small document's pages and, for a question
/// about the document, its first page whole.
pub(crate) fn run(state: &mut RankingState, ctx: &Ctx<'_>, _: &mut dyn TraceSink) -> Result<(), RetrieveError> {
    let (document, hinted) = (ctx.document, &state.hinted);
    let n_pages = document.pages.len() as u32;
    let passages = &mut state.passages;
    // A page the question names is read whole, in the place of its best
    // window: the user said where the answer is, and a table row the
    // windows missed ("On page 34, what were King's MAUs") is on it.
    if ctx.config.read_pages_whole {
        let whole = read_named_pages_whole(document, hinted, passages);
        if whole > 0 {
            state.notes.push(format!("{whole} page(s) named in the question read whole"));
            state.methods_used.push("named_page_whole".to_owned());
        }
    }
    // A document of a page or two (an invoice, a résumé) is short enough
    // to read whole: each page not already shown whole follows the
    // ranked passages, so a value whose label the question does not
    // word ("the candidate's name") is still read.
    if ctx.config.read_pages_whole && n_pages as usize <= SMALL_DOCUMENT_PAGES && hinted.is_empty() {
        let mut added = 0;
        for page in 1..=n_pages {
            if let Some(whole) = whole_page(document, page, passages) {
                passages.push(whole);
                added += 1;
            }
        }
        if added > 0 {
            state.notes.push(format!("a document of {n_pages} page(s): {added} page(s) also read whole"));
            state.methods_used.push("small_document".to_owned());
        }
    }
    // A question about the document itself ("the date of this
    // agreement") is answered where a document states its title, date
    // and parties: its first page follows the ranked passages.
    if ctx.question.structural_hints.about_document
        && hinted.is_empty()
        && let Some(opening) = opening_passage(document, passages)
    {
        state.notes.push("the question asks about the document itself: its first page is also read".to_owned());
        state.methods_used.push("document_opening".to_owned());
        passages.push(opening);
    }
    Ok(())
}

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
    let whole = matching::whole_page(document, page, false)?;
    let covered =
        passages.iter().any(|p| p.page == page && p.line_start <= whole.line_start && p.line_end >= whole.line_end);
    (!covered).then_some(whole)
}

#[cfg(test)]
mod tests {
    use docintel_schema::{NullSink, Retriever};

    use super::*;
    use crate::test_support::{check, document, question};
    use crate::{KeywordRetriever, RetrieveConfig};

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
}
