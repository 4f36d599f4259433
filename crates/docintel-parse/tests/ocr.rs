//! OCR of scanned pages (needs `tesseract` on `PATH` with English data: `scripts/setup.sh`,
//! which `.ci/run` runs first). The scanned fixture is the AWS invoice drawn as an image
//! with no text layer (`fixtures/README.md`), so its OCR lines can be checked against
//! the original's text layer; the lost-text fixture is a printed notice whose fonts have no
//! Unicode maps (its glyphs show, its text layer gives no text); the scanned policy is two
//! printed pages drawn as images, with numbered headings and a two-column list.

use docintel_parse::{OcrOptions, ParseOptions, parse_file_with_options, parse_pdf};
use docintel_schema::{Line, LineSource, ParsedDocument};
use docintel_test_support::{fixture, invoice};

fn scanned() -> std::path::PathBuf {
    fixture("ocr/aws_invoice_scanned.pdf")
}

fn parse_with(path: &std::path::Path, ocr: OcrOptions) -> ParsedDocument {
    let doc = parse_file_with_options(path, &ParseOptions::default().with_ocr(ocr)).unwrap_or_else(|e| panic!("{e}"));
    doc.check_invariants().unwrap();
    doc
}

fn centre(line: &Line) -> (f32, f32) {
    ((line.bbox.x0 + line.bbox.x1) / 2.0, (line.bbox.y0 + line.bbox.y1) / 2.0)
}

#[test]
fn a_scanned_page_becomes_ocr_lines_where_the_text_is_printed() {
    let doc = parse_pdf(&scanned()).unwrap_or_else(|e| panic!("{e}"));
    doc.check_invariants().unwrap();
    let page = &doc.pages[0];
    assert!(doc.lines.len() >= 20, "{:#?}", doc.diagnostics);
    assert!(!page.has_text_layer && doc.profile.is_scanned, "OCR text is no text layer");
    assert_eq!(page.n_lines as usize, doc.lines.len());
    for line in &doc.lines {
        assert_eq!(doc.line_source(line.line_id), LineSource::Ocr, "{line:?}");
        let confidence = doc.ocr_confidence(line.line_id).unwrap();
        assert!((0.0..=1.0).contains(&confidence), "{line:?}: {confidence}");
        let b = line.bbox;
        assert!(0.0 <= b.x0 && b.x0 < b.x1 && b.x1 <= page.width, "{line:?}");
        assert!(0.0 <= b.y0 && b.y0 < b.y1 && b.y1 <= page.height, "{line:?}");
    }
    let marked: usize = doc.diagnostics.iter().map(|d| d.ocr_lines.len()).sum();
    assert_eq!(marked, doc.lines.len());

    // The same words sit where the original's text layer has them (PDF space, y up).
    let original = parse_pdf(&invoice("AmazonWebServices.pdf")).unwrap();
    for phrase in ["Amazon Web Services Invoice", "Total for this invoice"] {
        let printed = original.lines.iter().find(|l| l.text.contains(phrase)).unwrap();
        let read = doc
            .lines
            .iter()
            .find(|l| l.text.contains(phrase))
            .unwrap_or_else(|| panic!("OCR did not read {phrase:?}: {:#?}", doc.lines));
        let ((px, py), (rx, ry)) = (centre(printed), centre(read));
        assert!((py - ry).abs() < 6.0, "{phrase:?}: printed at y {py}, read at y {ry}");
        // The OCR line may hold more of the row than the text layer's piece: its left edge.
        assert!((printed.bbox.x0 - read.bbox.x0).abs() < 6.0, "{phrase:?}: x {} vs {}", printed.bbox.x0, read.bbox.x0);
        assert!(rx > 0.0 && px > 0.0);
    }
    assert!(doc.lines.iter().any(|l| l.text.contains("$4.11")), "{:#?}", doc.lines);
}

#[test]
fn pages_with_a_text_layer_are_never_read_by_ocr() {
    let path = invoice("AmazonWebServices.pdf");
    let with = parse_with(&path, OcrOptions::default());
    let without = parse_with(&path, OcrOptions::disabled());
    assert_eq!(with, without);
    assert!(with.lines.iter().all(|l| with.line_source(l.line_id) == LineSource::TextLayer));
}

#[test]
fn a_page_whose_text_layer_lost_its_text_is_read_by_ocr() {
    let path = fixture("ocr/lost_text_notice.pdf");
    let doc = parse_with(&path, OcrOptions::default());
    let texts: Vec<&str> = doc.lines.iter().map(|l| l.text.as_str()).collect();
    for printed in ["Policy number: HX-20417", "1,840.00 EUR", "renewals@example.org"] {
        assert!(texts.iter().any(|t| t.contains(printed)), "OCR did not read {printed:?}: {texts:#?}");
    }
    assert!(doc.lines.iter().all(|l| doc.line_source(l.line_id) == LineSource::Ocr));
    let lost = doc.diagnostics.iter().find(|d| d.message.starts_with("text lost")).expect("the loss is reported");
    assert!(lost.message.ends_with("page(s) 1 read by OCR instead"), "{}", lost.message);
    // Without OCR the text layer's scraps are all there is, and the loss is still reported.
    let unread = parse_with(&path, OcrOptions::disabled());
    assert!(!unread.lines.iter().any(|l| l.text.contains("HX-20417")), "{:#?}", unread.lines);
    assert!(unread.diagnostics.iter().any(|d| d.message.starts_with("text lost") && !d.message.contains("OCR")));
}

#[test]
fn a_scanned_policy_keeps_its_headings_and_its_columns_apart() {
    let doc = parse_with(&fixture("ocr/scanned_policy.pdf"), OcrOptions::default());
    assert!(doc.lines.iter().all(|l| doc.line_source(l.line_id) == LineSource::Ocr));
    // Headings in capitals set at the body size: their boxes are shorter than the prose's,
    // their size is not.
    let toc: Vec<(u32, &str, u32)> = doc.toc.iter().map(|t| (t.level, t.title.as_str(), t.start_page)).collect();
    assert_eq!(toc, [(1, "1 PREAMBLE", 1), (1, "2 DEFINITIONS", 1), (1, "3 EXCLUSIONS", 2), (1, "4 CONTACT", 2)]);
    // Tesseract reads each row of the two-column list as one line; the text layer would
    // hold each item apart, and so do the OCR lines.
    let texts: Vec<&str> = doc.lines.iter().map(|l| l.text.as_str()).collect();
    for item in ["a. Cataract", "e. Hernia of any type", "b. Sinusitis", "f. Joint replacement surgery"] {
        assert!(texts.contains(&item), "{item:?} is not a line of its own: {texts:#?}");
    }
    assert!(texts.iter().any(|t| t.contains("claims.desk@example.org")), "{texts:#?}");
}

#[test]
fn without_tesseract_one_diagnostic_says_so_and_the_parse_goes_on() {
    let doc = parse_with(&scanned(), OcrOptions::default().with_tesseract("/nonexistent/tesseract"));
    assert!(doc.lines.is_empty());
    let notes: Vec<&str> =
        doc.diagnostics.iter().map(|d| d.message.as_str()).filter(|m| m.contains("tesseract")).collect();
    assert_eq!(notes.len(), 1, "{:#?}", doc.diagnostics);
    assert!(notes[0].contains("OCR unavailable") && notes[0].contains("aws_invoice_scanned.pdf"), "{}", notes[0]);
}

#[test]
fn the_page_limit_leaves_pages_unread_with_a_diagnostic() {
    let doc = parse_with(&scanned(), OcrOptions::default().with_max_pages(0));
    assert!(doc.lines.is_empty());
    assert!(
        doc.diagnostics.iter().any(|d| d.message.contains("OCR limited to 0 page(s)") && d.page == Some(1)),
        "{:#?}",
        doc.diagnostics
    );
}

#[test]
fn a_page_whose_standard_fonts_are_not_embedded_is_drawn_with_its_text() {
    // The Flipkart invoice names Helvetica, Helvetica-Bold and Times-Italic without embedding
    // them: hayro draws them with its substitutes (`embed-fonts`), else the page is blank where
    // the text is, and an image-only copy of such a PDF has nothing to read.
    let path = invoice("FlipkartInvoice.pdf");
    let doc = parse_with(&path, OcrOptions::disabled());
    let bytes = std::fs::read(&path).unwrap();
    let image = docintel_parse::render_page(&bytes, None, 1, 100).unwrap_or_else(|e| panic!("{e}"));
    let page = &doc.pages[0];
    let scale = image.width as f32 / page.width;
    let dark_share = |line: &Line| {
        let (x0, x1) = ((line.bbox.x0 * scale) as usize, (line.bbox.x1 * scale).ceil() as usize);
        let (y0, y1) =
            (((page.height - line.bbox.y1) * scale) as usize, ((page.height - line.bbox.y0) * scale).ceil() as usize);
        let (x1, y1) = (x1.min(image.width as usize), y1.min(image.height as usize));
        let pixels: Vec<u8> = (y0..y1)
            .flat_map(|y| (x0..x1).map(move |x| (x, y)))
            .map(|(x, y)| image.gray[y * image.width as usize + x])
            .collect();
        pixels.iter().filter(|&&g| g < 128).count() as f32 / pixels.len().max(1) as f32
    };
    let worded: Vec<&Line> = doc
        .lines
        .iter()
        .filter(|l| l.page == 1 && l.text.chars().filter(|c| c.is_alphanumeric()).count() >= 3)
        .collect();
    assert!(worded.len() >= 20, "{:#?}", doc.lines);
    let inked: Vec<&&Line> = worded.iter().filter(|l| dark_share(l) >= 0.03).collect();
    assert!(inked.len() * 10 >= worded.len() * 9, "{} of {} text lines drawn", inked.len(), worded.len());
}
