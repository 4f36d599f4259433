//! Stage `document_words`: words found on at least [`DOCUMENT_WORD_SHARE`]
//! of a document's pages (its issuer, its year: "3M", "company", "2022" in
//! 3M's 2022 10-K) name the document, not a part of it. They get no weight
//! in TOC routing nor in choosing the line a ranked page is shown from.

use docintel_schema::{ParsedDocument, TraceSink};

use super::{Ctx, RankingState};
use crate::error::RetrieveError;
use crate::matching::{PageIndex, PreparedKeyword};

/// A keyword found on at least this share of a document's pages names the
/// document (its issuer, its year: "3M", "company", "2022" in 3M's 2022
/// 10-K), not a part of it.
const DOCUMENT_WORD_SHARE: f64 = 0.4;

/// Documents with fewer pages than this have no "document words": on a
/// two-page invoice every keyword is on half the pages.
const DOCUMENT_WORD_MIN_PAGES: usize = 8;

/// Marks the keywords that name the document, with a note.
pub(crate) fn run(state: &mut RankingState, ctx: &Ctx<'_>, _: &mut dyn TraceSink) -> Result<(), RetrieveError> {
    let document_words = mark_document_words(&mut state.keywords, ctx.document, ctx.normalized, ctx.page_index);
    if !document_words.is_empty() {
        state.notes.push(format!(
            "{document_words:?} on at least {:.0}% of the pages: they name the document, not a part of it (no weight in TOC routing)",
            DOCUMENT_WORD_SHARE * 100.0
        ));
    }
    Ok(())
}

/// Marks the plain (non-identifier) keywords found on at least
/// [`DOCUMENT_WORD_SHARE`] of the document's pages with text. In TOC routing
/// they get no weight: a title like "3M COMPANY AND CONSOLIDATED
/// SUBSIDIARIES" would otherwise win on the company's name alone. Line
/// scores keep their IDF weight (measured on FinanceBench, scaling them down
/// there too lost 2 to 4 questions of 111). Identifiers keep their own rule
/// (pinning off on too many pages). Returns the marked labels.
fn mark_document_words(
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

#[cfg(test)]
mod tests {
    use docintel_schema::text::normalize;

    use super::*;
    use crate::matching::prepare;
    use crate::test_support::{check, document, question};

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
        let mut keywords = prepare(&q).unwrap();
        let normalized: Vec<String> = short.lines.iter().map(|l| normalize(&l.text)).collect();
        let index = PageIndex::build(&short, &normalized);
        assert!(mark_document_words(&mut keywords, &short, &normalized, &index).is_empty());
        let normalized: Vec<String> = doc.lines.iter().map(|l| normalize(&l.text)).collect();
        let index = PageIndex::build(&doc, &normalized);
        assert_eq!(mark_document_words(&mut keywords, &doc, &normalized, &index), ["acme"]);
        // A phrase is counted by its pages too.
        let mut phrase = prepare(&question(&["acme corp"], "text", &[])).unwrap();
        assert_eq!(mark_document_words(&mut phrase, &doc, &normalized, &index), ["acme corp"]);
    }
}
