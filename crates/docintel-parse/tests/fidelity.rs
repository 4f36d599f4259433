//! Fidelity of the PDF line table on small PDFs written here with lopdf:
//! two-column reading order, text hidden by clipping paths or outside the
//! crop box, Form XObject cycles, determinism across worker threads.

use docintel_parse::parse_pdf_bytes;
use pdf_extract::{Dictionary, Document, Object, ObjectId, Stream};

fn name(n: &str) -> Object {
    Object::Name(n.as_bytes().to_vec())
}

fn dict(entries: Vec<(&str, Object)>) -> Dictionary {
    let mut d = Dictionary::new();
    for (k, v) in entries {
        d.set(k, v);
    }
    d
}

fn rect(r: [i64; 4]) -> Object {
    Object::Array(r.iter().map(|&v| v.into()).collect())
}

/// One page: its content stream, extra page entries, and Form XObjects
/// (name, content, whether the form draws itself).
#[derive(Default)]
struct PageSpec {
    content: String,
    extra: Vec<(&'static str, Object)>,
    self_drawing_form: bool,
}

/// A PDF of A4 pages in Helvetica (`/F1`).
fn build_pdf(pages: Vec<PageSpec>) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dict(vec![
        ("Type", name("Font")),
        ("Subtype", name("Type1")),
        ("BaseFont", name("Helvetica")),
        ("Encoding", name("WinAnsiEncoding")),
    ]));
    let mut kids: Vec<Object> = Vec::new();
    for spec in pages {
        let mut resources = dict(vec![("Font", dict(vec![("F1", font_id.into())]).into())]);
        if spec.self_drawing_form {
            let form_id: ObjectId = doc.new_object_id();
            let mut form_dict =
                dict(vec![("Type", name("XObject")), ("Subtype", name("Form")), ("BBox", rect([0, 0, 595, 842]))]);
            form_dict.set("Resources", dict(vec![("XObject", dict(vec![("Fx", form_id.into())]).into())]));
            doc.objects.insert(form_id, Object::Stream(Stream::new(form_dict, b"/Fx Do".to_vec())));
            resources.set("XObject", dict(vec![("Fx", form_id.into())]));
        }
        let content = doc.add_object(Stream::new(Dictionary::new(), spec.content.into_bytes()));
        let mut page = dict(vec![
            ("Type", name("Page")),
            ("Parent", pages_id.into()),
            ("Contents", content.into()),
            ("Resources", resources.into()),
            ("MediaBox", rect([0, 0, 595, 842])),
        ]);
        for (k, v) in spec.extra {
            page.set(k, v);
        }
        kids.push(doc.add_object(page).into());
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        dict(vec![("Type", name("Pages")), ("Kids", Object::Array(kids)), ("Count", count.into())]).into(),
    );
    let catalog = doc.add_object(dict(vec![("Type", name("Catalog")), ("Pages", pages_id.into())]));
    doc.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).expect("writing a PDF to memory");
    bytes
}

fn page(content: String) -> PageSpec {
    PageSpec { content, ..PageSpec::default() }
}

fn texts(doc: &docintel_schema::ParsedDocument, page: u32) -> Vec<String> {
    doc.lines.iter().filter(|l| l.page == page).map(|l| l.text.clone()).collect()
}

const LEFT: [&str; 10] = [
    "Left column line one of text",
    "Left column line two of text",
    "Left column line three text",
    "Left column line four of text",
    "Left column line five of text",
    "Left column line six of text",
    "Left column line seven text",
    "Left column line eight text",
    "Left column line nine of text",
    "Left column line ten of text",
];
const RIGHT: [&str; 10] = [
    "Right column line one text",
    "Right column line two text",
    "Right column line three txt",
    "Right column line four text",
    "Right column line five text",
    "Right column line six text",
    "Right column line seven tx",
    "Right column line eight tx",
    "Right column line nine text",
    "Right column line ten text",
];

/// A two-column page written row by row (as Word and browsers do): the
/// right column starts at x = 232, about 2.5 em after the longest left line,
/// a jump narrower than the line-break gap, so each row arrives as one run.
fn two_column_page() -> String {
    let mut s = String::from("BT /F1 16 Tf 90 780 Td (A Title Spanning Both Columns Of The Page) Tj ET\n");
    for (i, (l, r)) in LEFT.iter().zip(RIGHT).enumerate() {
        let y = 740 - 14 * i as i64;
        s.push_str(&format!("BT /F1 10 Tf 1 0 0 1 72 {y} Tm ({l}) Tj 1 0 0 1 232 {y} Tm ({r}) Tj ET\n"));
    }
    s.push_str("BT /F1 10 Tf 72 580 Td (A closing paragraph line that runs across the full width of the page) Tj ET\n");
    s
}

#[test]
fn two_column_page_reads_left_column_then_right_column() {
    let doc = parse_pdf_bytes("two-column.pdf", &build_pdf(vec![page(two_column_page())])).expect("parses");
    let got = texts(&doc, 1);
    let mut want = vec!["A Title Spanning Both Columns Of The Page".to_owned()];
    want.extend(LEFT.iter().map(|s| (*s).to_owned()));
    want.extend(RIGHT.iter().map(|s| (*s).to_owned()));
    want.push("A closing paragraph line that runs across the full width of the page".to_owned());
    assert_eq!(got, want);
    // Split parts keep boxes on their own side of the gutter.
    let left_box = doc.lines.iter().find(|l| l.text == LEFT[0]).expect("left line").bbox;
    let right_box = doc.lines.iter().find(|l| l.text == RIGHT[0]).expect("right line").bbox;
    assert!(left_box.x1 < right_box.x0, "{left_box:?} vs {right_box:?}");
    assert!(doc.check_invariants().is_ok());
}

#[test]
fn one_column_page_and_tables_keep_row_order() {
    // Label/value rows: the values are short, so no gutter is found and each
    // row stays label, value.
    let mut s = String::new();
    for i in 0..12 {
        let y = 760 - 14 * i;
        s.push_str(&format!("BT /F1 10 Tf 72 {y} Td (Revenue line item number {i}) Tj ET "));
        s.push_str(&format!("BT /F1 10 Tf 420 {y} Td ({i}00.00) Tj ET\n"));
    }
    let doc = parse_pdf_bytes("table.pdf", &build_pdf(vec![page(s)])).expect("parses");
    let got = texts(&doc, 1);
    assert_eq!(got.len(), 24);
    for i in 0..12 {
        assert_eq!(got[2 * i], format!("Revenue line item number {i}"));
        assert_eq!(got[2 * i + 1], format!("{i}00.00"));
    }
}

#[test]
fn text_hidden_by_a_clipping_rectangle_is_dropped() {
    let content = "q 0 0 100 100 re W n BT /F1 10 Tf 300 500 Td (Stale hidden draft) Tj ET Q \
                   q 250 480 200 40 re W n BT /F1 10 Tf 300 500 Td (Clipped but visible) Tj ET Q \
                   BT /F1 10 Tf 72 700 Td (Visible after restore) Tj ET"
        .to_owned();
    let doc = parse_pdf_bytes("clip.pdf", &build_pdf(vec![page(content)])).expect("parses");
    assert_eq!(texts(&doc, 1), ["Visible after restore", "Clipped but visible"]);
}

#[test]
fn nested_clips_intersect_and_q_restores() {
    // Two overlapping clip rectangles: only their intersection shows.
    let content = "q 0 0 300 842 re W n 200 0 395 842 re W n \
                   BT /F1 10 Tf 100 500 Td (Left of both) Tj ET \
                   BT /F1 10 Tf 220 400 Td (In the overlap) Tj ET \
                   BT /F1 10 Tf 400 300 Td (Right of both) Tj ET Q \
                   BT /F1 10 Tf 400 200 Td (Unclipped again) Tj ET"
        .to_owned();
    let doc = parse_pdf_bytes("nested.pdf", &build_pdf(vec![page(content)])).expect("parses");
    assert_eq!(texts(&doc, 1), ["In the overlap", "Unclipped again"]);
}

#[test]
fn text_outside_the_crop_box_or_media_box_is_dropped() {
    let content = "BT /F1 10 Tf 72 100 Td (Inside the crop box) Tj ET \
                   BT /F1 10 Tf 400 500 Td (Outside the crop box) Tj ET \
                   BT /F1 10 Tf -900 -900 Td (Far off the page) Tj ET"
        .to_owned();
    let cropped = PageSpec { content, extra: vec![("CropBox", rect([0, 0, 300, 300]))], ..PageSpec::default() };
    let doc = parse_pdf_bytes("crop.pdf", &build_pdf(vec![cropped])).expect("parses");
    assert_eq!(texts(&doc, 1), ["Inside the crop box"]);
}

#[test]
fn a_form_that_draws_itself_is_skipped_and_the_page_kept() {
    let looping = PageSpec {
        content: "BT /F1 10 Tf 72 700 Td (Before the loop) Tj ET /Fx Do".to_owned(),
        self_drawing_form: true,
        ..PageSpec::default()
    };
    let fine = page("BT /F1 10 Tf 72 700 Td (Second page) Tj ET".to_owned());
    let doc = parse_pdf_bytes("cycle.pdf", &build_pdf(vec![looping, fine])).expect("the second page parses");
    // The text before the loop is kept (pdfminer's issue-1113-evil-xobjects.pdf lost its page).
    assert_eq!(texts(&doc, 1), ["Before the loop"]);
    assert_eq!(texts(&doc, 2), ["Second page"]);
    assert!(
        doc.diagnostics.iter().any(|d| d.page == Some(1) && d.message.contains("nested deeper")),
        "{:?}",
        doc.diagnostics
    );
}

#[test]
fn many_pages_parse_in_order_and_deterministically() {
    let pages: Vec<PageSpec> = (1..=24)
        .map(|i| {
            let mut s = format!("BT /F1 12 Tf 72 810 Td (Page {i} heading) Tj ET\n");
            if i % 3 == 0 {
                s.push_str(&two_column_page());
            } else {
                for j in 0..20 {
                    s.push_str(&format!("BT /F1 10 Tf 72 {} Td (Body line {j} of page {i}) Tj ET\n", 740 - 14 * j));
                }
            }
            page(s)
        })
        .collect();
    let bytes = build_pdf(pages);
    let first = parse_pdf_bytes("many.pdf", &bytes).expect("parses");
    for p in 1..=24u32 {
        assert_eq!(texts(&first, p).first().map(String::as_str), Some(format!("Page {p} heading").as_str()));
    }
    for _ in 0..3 {
        let again = parse_pdf_bytes("many.pdf", &bytes).expect("parses");
        assert_eq!(again.lines, first.lines);
        assert_eq!(again.pages, first.pages);
    }
    assert!(first.check_invariants().is_ok());
}
