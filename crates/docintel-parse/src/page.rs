//! One page of a PDF: its graphics scan and its text extraction, each under
//! `catch_unwind` (and the text under a time budget, [`PAGE_TIME_BUDGET`]), so
//! a page that fails becomes a message and the other pages still parse.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use pdf_extract::{ContentCache, Document, FontCache, ObjectId};

use crate::collect::{self, GlyphCollector, RawLine, ScanError};
use crate::workers::panic_message;
use crate::{figures, objects};

/// Scans one page's graphics; a failure or a panic becomes `Err(message)`
/// (the page then counts no images and no paths).
pub(crate) fn scan_graphics(
    doc: &Document,
    page_id: ObjectId,
    area: f32,
    content: &objects::PageContent,
    forms: &ContentCache,
) -> Result<figures::PageGraphics, String> {
    match catch_unwind(AssertUnwindSafe(|| figures::scan_page(doc, page_id, area, content, forms))) {
        Ok(result) => result,
        Err(panic) => Err(format!("scanner panicked: {}", panic_message(&panic))),
    }
}

/// One page to extract: its number in the page tree, its object and its
/// decoded content.
pub(crate) struct Page<'a> {
    pub(crate) key: u32,
    pub(crate) id: ObjectId,
    pub(crate) content: &'a objects::PageContent,
}

/// Longest time one page's text extraction may take; a page that needs more
/// fails with a diagnostic and the other pages still parse.
pub const PAGE_TIME_BUDGET: Duration = Duration::from_secs(20);

/// One page's lines and how many of its glyphs gave no text.
#[derive(Debug, PartialEq)]
pub(crate) struct PageText {
    pub(crate) lines: Vec<RawLine>,
    /// Glyphs shown (spaces included).
    pub(crate) glyphs: usize,
    /// Glyphs whose font has no Unicode mapping for them (their text is lost).
    pub(crate) unmapped: usize,
    /// Form XObjects nested too deep (a cycle) were skipped.
    pub(crate) forms_skipped: bool,
}

/// Below this share of unmapped glyphs (and under [`UNMAPPED_MIN`] of them) a page's loss
/// is not reported (a stray symbol).
pub(crate) const UNMAPPED_SHARE: f64 = 0.02;
pub(crate) const UNMAPPED_MIN: usize = 10;

/// Extracts one page's lines; a panic, an error or an exceeded time budget
/// becomes `Err(message)`.
pub(crate) fn extract_page<'a>(
    doc: &'a Document,
    page: &Page<'_>,
    fonts: &FontCache<'a>,
    forms: &ContentCache,
    budget: Duration,
) -> Result<PageText, String> {
    let deadline = Instant::now().checked_add(budget);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // Clip rectangles per shown string; a page whose content cannot be
        // walked is left to pdf-extract unfiltered, except for form cycles
        // and the deadline.
        let scan = match collect::scan_clips(doc, page.id, page.content, forms, deadline) {
            Ok(scan) => scan,
            Err(e @ (ScanError::TooDeep | ScanError::Deadline)) => return Err(e.to_string()),
            Err(ScanError::Content(_)) => collect::PageScan::default(),
        };
        // Where pdf-extract would have panicked reading or decoding the
        // content, it still does, with the same message.
        let content = match page.content {
            Ok(Ok(content)) => Ok(content),
            Ok(Err(e)) | Err(e) => Err(e.unwrap_message()),
        };
        let forms_skipped = scan.forms_skipped;
        let mut collector = GlyphCollector::new(scan, deadline);
        match pdf_extract::output_page_content(doc, &mut collector, page.key, page.id, content, fonts, forms) {
            Ok(()) => {
                let (glyphs, unmapped) = (collector.n_glyphs, collector.n_unmapped);
                Ok(PageText { lines: collector.finish(), glyphs, unmapped, forms_skipped })
            }
            Err(_) if collector.timed_out => Err(format!("time budget of {} s exceeded", budget.as_secs_f32())),
            Err(e) => Err(e.to_string()),
        }
    }));
    match outcome {
        Ok(result) => result,
        Err(panic) => Err(format!("extractor panicked: {}", panic_message(&panic))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-page document drawing `text` in Helvetica.
    fn one_page(text: &str) -> (Document, ObjectId) {
        use pdf_extract::{Dictionary, Object, Stream};
        let set = |entries: Vec<(&str, Object)>| {
            let mut d = Dictionary::new();
            for (k, v) in entries {
                d.set(k, v);
            }
            d
        };
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font = doc.add_object(set(vec![
            ("Type", Object::Name(b"Font".to_vec())),
            ("Subtype", Object::Name(b"Type1".to_vec())),
            ("BaseFont", Object::Name(b"Helvetica".to_vec())),
        ]));
        let content = format!("BT /F1 10 Tf 72 700 Td ({text}) Tj ET");
        let content = doc.add_object(Stream::new(Dictionary::new(), content.into_bytes()));
        let page = doc.add_object(set(vec![
            ("Type", Object::Name(b"Page".to_vec())),
            ("Parent", pages_id.into()),
            ("Contents", content.into()),
            ("Resources", set(vec![("Font", set(vec![("F1", font.into())]).into())]).into()),
            ("MediaBox", Object::Array(vec![0.into(), 0.into(), 595.into(), 842.into()])),
        ]));
        doc.objects.insert(
            pages_id,
            set(vec![
                ("Type", Object::Name(b"Pages".to_vec())),
                ("Kids", Object::Array(vec![page.into()])),
                ("Count", 1.into()),
            ])
            .into(),
        );
        let catalog =
            doc.add_object(set(vec![("Type", Object::Name(b"Catalog".to_vec())), ("Pages", pages_id.into())]));
        doc.trailer.set("Root", catalog);
        (doc, page)
    }

    /// Extracts page 1 (object `id`) with fresh caches.
    fn extract(doc: &Document, id: ObjectId, budget: Duration) -> Result<Vec<RawLine>, String> {
        let content = objects::page_content(doc, id);
        let page = Page { key: 1, id, content: &content };
        extract_page(doc, &page, &FontCache::new(), &ContentCache::new(), budget).map(|p| p.lines)
    }

    #[test]
    fn a_page_over_its_time_budget_fails_with_a_message() {
        let (doc, page) = one_page("Some text");
        let lines = extract(&doc, page, PAGE_TIME_BUDGET).expect("within budget");
        assert_eq!(lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>(), ["Some text"]);
        let err = extract(&doc, page, Duration::ZERO).expect_err("no time at all");
        assert!(err.contains("time budget"), "{err}");
    }

    #[test]
    fn prepared_documents_extract_the_same_text() {
        let (mut doc, page) = one_page("Prepared text");
        let before = extract(&doc, page, PAGE_TIME_BUDGET).expect("parses");
        assert!(objects::prepare_for_text(&mut doc).is_empty());
        assert_eq!(extract(&doc, page, PAGE_TIME_BUDGET).expect("parses"), before);
    }
}
