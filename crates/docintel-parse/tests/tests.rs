//! Integration tests over the real invoice fixtures, broken inputs and a
//! synthetic PDF built here (outline, named destinations, a broken page).

use docintel_parse::{
    ChunkConfig, ParseError, chunk_document, parse_file, parse_pdf, parse_pdf_bytes, vision_candidates,
};
use docintel_schema::{DocumentFormat, ParsedDocument, Severity, TocSource};
use docintel_test_support::{invoice, scratch_file};
use pdf_extract::{Dictionary, Document, Object, ObjectId, Stream};

fn parse_fixture(name: &str) -> ParsedDocument {
    let doc = parse_pdf(&invoice(name)).unwrap_or_else(|e| panic!("{e}"));
    doc.check_invariants().unwrap();
    doc
}

fn find<'a>(doc: &'a ParsedDocument, needle: &str) -> &'a docintel_schema::Line {
    doc.lines.iter().find(|l| l.text.contains(needle)).unwrap_or_else(|| panic!("no line contains {needle:?}"))
}

#[test]
fn aws_invoice_lines_pages_and_profile() {
    let doc = parse_fixture("AmazonWebServices.pdf");
    assert!(doc.source.ends_with("AmazonWebServices.pdf"));
    assert_eq!(doc.pages.len(), 1);
    let page = &doc.pages[0];
    assert_eq!((page.width, page.height), (612.0, 792.0));
    assert!(page.has_text_layer);
    assert_eq!(page.n_lines as usize, doc.lines.len());
    assert_eq!(page.n_chars as usize, doc.lines.iter().map(|l| l.text.chars().count()).sum::<usize>());

    // The title is the first line, as one line, near the top of the page.
    let title = &doc.lines[0];
    assert_eq!(title.text, "Amazon Web Services Invoice");
    let b = title.bbox;
    assert!(b.x0 > 200.0 && b.x1 < 612.0 && b.y0 > 650.0 && b.y1 < 792.0 && b.y0 < b.y1, "{b:?}");

    // The total: the label and the amount sit on the same row, label first.
    let label = find(&doc, "Total for this invoice");
    let amount = &doc.lines[label.line_id as usize];
    assert_eq!(amount.text, "$4.11");
    assert!((amount.bbox.y0 - label.bbox.y0).abs() < 2.0 && amount.bbox.x0 > label.bbox.x1);
    assert_eq!(find(&doc, "Invoice Number:").text, "Invoice Number:");
    assert!(doc.lines.iter().any(|l| l.text == "42183017"));
    assert!(doc.lines.iter().all(|l| !l.text.trim().is_empty() && l.text == l.text.trim_end()));

    // Every box lies inside the page.
    for l in &doc.lines {
        let b = l.bbox;
        assert!(b.x0 >= 0.0 && b.y0 >= 0.0 && b.x1 <= 612.0 && b.y1 <= 792.0 && b.x0 < b.x1 && b.y0 < b.y1, "{l:?}");
    }
    // Reading order: top to bottom (by line centre, with a row tolerance).
    for pair in doc.lines.windows(2) {
        let c = |l: &docintel_schema::Line| (l.bbox.y0 + l.bbox.y1) / 2.0;
        assert!(c(&pair[1]) <= c(&pair[0]) + 8.0, "{:?} before {:?}", pair[0], pair[1]);
    }

    let p = &doc.profile;
    assert_eq!(p.format, DocumentFormat::Pdf);
    assert_eq!(p.n_pages, Some(1));
    assert_eq!(p.doc_type.as_deref(), Some("invoice"));
    assert_eq!(p.typical_fields, ["total amount", "invoice date", "invoice number", "issuer", "due date"]);
    assert!(!p.is_scanned && !p.has_toc);
    let summary = p.summary.as_deref().unwrap_or_default();
    assert!(summary.ends_with("— invoice, 1 page"), "{summary}");
    assert!(p.has_tables, "the invoice's line items are aligned columns");
    assert_eq!(p.languages, ["en"]);
    // The invoice draws its logo once and rules its tables with many paths
    // (reported as a vector figure: ruled tables are a known false positive).
    assert_eq!((page.n_images, page.n_vector_paths), (1, 110));
    assert!(page.decorative_image_hashes.is_empty());
    assert!(doc.toc.is_empty());
    let messages: Vec<&str> = doc.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(messages, ["tables (aligned columns) detected on pages 1"]);
}

#[test]
fn netpresse_invoice_has_french_amounts() {
    let doc = parse_fixture("NetpresseInvoice.pdf");
    assert_eq!(doc.pages.len(), 1);
    assert!(find(&doc, "Facture n°").text.contains("2022089083"));
    let total = find(&doc, "Total TTC");
    let amount = &doc.lines[total.line_id as usize];
    assert!(amount.text.starts_with("56,02"), "{amount:?}");
    assert!(doc.lines.iter().any(|l| l.text.starts_with("46,68")));
    assert_eq!(doc.profile.doc_type.as_deref(), Some("invoice"));
    assert_eq!(doc.profile.languages, ["fr"]);
}

#[test]
fn flipkart_and_saeco_invoices() {
    let doc = parse_fixture("FlipkartInvoice.pdf");
    assert!(find(&doc, "Invoice No").text.contains("BLR_WFLD20151000982590"));
    assert!(doc.lines.iter().any(|l| l.text.contains("OD304175096047380001")));
    assert_eq!(doc.profile.doc_type.as_deref(), Some("invoice"));

    let doc = parse_fixture("saeco.pdf");
    assert!(doc.lines.iter().any(|l| l.text == "VF1005193039"));
    assert!(find(&doc, "Factuur totaal").text.contains("EUR"));
    assert_eq!(doc.profile.doc_type.as_deref(), Some("invoice"));
    // saeco carries a one-entry native outline.
    assert_eq!(doc.toc.len(), 1);
    assert!(doc.profile.has_toc);
    let entry = &doc.toc[0];
    assert_eq!((entry.level, entry.parent, entry.start_page, entry.end_page), (1, None, 1, 1));
    assert_eq!(entry.source, TocSource::Outline);
}

#[test]
fn missing_file_is_not_found() {
    let path = invoice("does-not-exist.pdf");
    let err = parse_pdf(&path).unwrap_err();
    assert!(matches!(err, ParseError::NotFound { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("does-not-exist.pdf") && msg.contains("not found"), "{msg}");
    assert!(!msg.contains('\n'));
}

#[test]
fn directory_is_an_io_error() {
    let dir = std::env::temp_dir();
    let err = parse_pdf(&dir).unwrap_err();
    assert!(matches!(err, ParseError::Io { .. }), "{err:?}");
    assert!(err.to_string().starts_with(&dir.display().to_string()));
}

#[test]
fn text_file_renamed_pdf_is_not_a_pdf() {
    let path = scratch_file("notes.pdf", b"just some text\nnothing to see\n");
    let err = parse_pdf(&path).unwrap_err();
    assert!(matches!(err, ParseError::NotPdf { .. }), "{err:?}");
    assert_eq!(err.to_string(), format!("{}: not a PDF (no %PDF- header)", path.display()));
}

#[test]
fn empty_file_is_not_a_pdf() {
    let path = scratch_file("empty.pdf", b"");
    let err = parse_pdf(&path).unwrap_err();
    assert!(matches!(err, ParseError::NotPdf { .. }), "{err:?}");
    assert!(err.to_string().contains("empty.pdf"));
}

#[test]
fn truncated_pdf_is_malformed() {
    let bytes = std::fs::read(invoice("AmazonWebServices.pdf")).unwrap();
    let err = parse_pdf_bytes("truncated.pdf", &bytes[..300]).unwrap_err();
    assert!(matches!(err, ParseError::Malformed { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.starts_with("truncated.pdf: malformed PDF"), "{msg}");
    assert!(!msg.contains('\n'));
}

#[test]
fn garbage_after_header_is_malformed() {
    let mut bytes = b"%PDF-1.7\n".to_vec();
    bytes.extend((0..4000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    let err = parse_pdf_bytes("garbage.pdf", &bytes).unwrap_err();
    assert!(matches!(err, ParseError::Malformed { .. }), "{err:?}");
    assert!(err.to_string().contains("garbage.pdf"));
}

#[test]
fn appended_garbage_after_a_valid_pdf_still_parses() {
    let original = std::fs::read(invoice("AmazonWebServices.pdf")).unwrap();
    let mut bytes = original.clone();
    bytes.extend_from_slice(b"\n\x00\x01garbage trailing bytes\xff\xfe");
    let doc = parse_pdf_bytes("appended.pdf", &bytes).unwrap_or_else(|e| panic!("bytes after %%EOF: {e}"));
    doc.check_invariants().unwrap();
    // The bytes after the end of the file change nothing that was read.
    let clean = parse_pdf_bytes("clean.pdf", &original).unwrap();
    let lines = |d: &ParsedDocument| d.lines.iter().map(|l| (l.page, l.text.clone())).collect::<Vec<_>>();
    assert!(!doc.lines.is_empty());
    assert_eq!(lines(&doc), lines(&clean));
    assert_eq!(doc.pages.len(), clean.pages.len());
}

// ---------------------------------------------------------------------------
// A synthetic document: 4 pages, an outline with duplicate titles, named
// destinations (name tree and /Dests dictionary), a GoTo action, a broken
// destination, a cycle, and a page whose extraction fails (no MediaBox).

fn name(s: &str) -> Object {
    Object::Name(s.as_bytes().to_vec())
}

fn dict(entries: Vec<(&str, Object)>) -> Dictionary {
    let mut d = Dictionary::new();
    for (k, v) in entries {
        d.set(k, v);
    }
    d
}

fn media_box() -> Object {
    Object::Array(vec![0.into(), 0.into(), 595.into(), 842.into()])
}

fn synthetic_pdf() -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dict(vec![
        ("Type", name("Font")),
        ("Subtype", name("Type1")),
        ("BaseFont", name("Helvetica")),
        ("Encoding", name("WinAnsiEncoding")),
    ]));
    let resources = dict(vec![("Font", dict(vec![("F1", font_id.into())]).into())]);
    let texts = [
        "BT /F1 12 Tf 72 770 Td (Chapter One) Tj ET BT /F1 10 Tf 72 740 Td (The \\223nal o\\236ce \\(draft\\)) Tj ET",
        "BT /F1 10 Tf 300 700 Td (right) Tj ET BT /F1 10 Tf 72 700 Td (left) Tj ET",
        "BT /F1 10 Tf 72 500 Td (Page three) Tj ET",
        "BT /F1 10 Tf 72 500 Td (Lost page) Tj ET",
    ];
    let mut page_ids: Vec<ObjectId> = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        let content = doc.add_object(Stream::new(Dictionary::new(), text.as_bytes().to_vec()));
        let mut page = dict(vec![
            ("Type", name("Page")),
            ("Parent", pages_id.into()),
            ("Contents", content.into()),
            ("Resources", resources.clone().into()),
        ]);
        if i < 3 {
            page.set("MediaBox", media_box());
        }
        page_ids.push(doc.add_object(page));
    }
    // The last page has no MediaBox anywhere in its chain: pdf-extract panics
    // on it, the parser must keep the rest.
    let kids: Vec<Object> = page_ids.iter().map(|&id| id.into()).collect();
    doc.objects.insert(
        pages_id,
        dict(vec![("Type", name("Pages")), ("Kids", Object::Array(kids)), ("Count", 4.into())]).into(),
    );

    let dest = |page: ObjectId| Object::Array(vec![page.into(), name("XYZ"), Object::Null, Object::Null, Object::Null]);
    let outlines_id = doc.new_object_id();
    let ids: Vec<ObjectId> = (0..6).map(|_| doc.new_object_id()).collect();
    let (intro, intro2, sub, broken, end, child_of_broken) = (ids[0], ids[1], ids[2], ids[3], ids[4], ids[5]);
    let item = |title: &[u8], parent: ObjectId, extra: Vec<(&str, Object)>| {
        let mut d = dict(vec![("Title", Object::string_literal(title.to_vec())), ("Parent", parent.into())]);
        for (k, v) in extra {
            d.set(k, v);
        }
        Object::Dictionary(d)
    };
    doc.objects.insert(intro, item(b"Intro", outlines_id, vec![("Dest", dest(page_ids[0])), ("Next", intro2.into())]));
    // Same title, reached through the /Names /Dests name tree; UTF-16 title.
    let utf16_intro: Vec<u8> =
        [0xFE, 0xFF].into_iter().chain("Intro".encode_utf16().flat_map(u16::to_be_bytes)).collect();
    doc.objects.insert(
        intro2,
        item(
            &utf16_intro,
            outlines_id,
            vec![
                ("Dest", Object::string_literal("sec2")),
                ("Next", broken.into()),
                ("First", sub.into()),
                ("Last", sub.into()),
            ],
        ),
    );
    let goto = dict(vec![("S", name("GoTo")), ("D", dest(page_ids[1]))]);
    doc.objects.insert(sub, item(b"Sub", intro2, vec![("A", goto.into())]));
    // Points at a missing page object: skipped; its child is kept one level up.
    doc.objects.insert(
        broken,
        item(
            b"Broken",
            outlines_id,
            vec![
                ("Dest", dest((999, 0))),
                ("Next", end.into()),
                ("First", child_of_broken.into()),
                ("Last", child_of_broken.into()),
            ],
        ),
    );
    doc.objects.insert(child_of_broken, item(b"Orphan", broken, vec![("Dest", dest(page_ids[2]))]));
    // Named destination from the catalog's /Dests dictionary; PDFDocEncoding
    // title; /Next loops back to the first entry (a cycle).
    doc.objects.insert(end, item(b"Fin\xe9", outlines_id, vec![("Dest", name("the-end")), ("Next", intro.into())]));
    doc.objects.insert(
        outlines_id,
        dict(vec![("Type", name("Outlines")), ("First", intro.into()), ("Last", end.into())]).into(),
    );

    let name_tree_leaf =
        doc.add_object(dict(vec![("Names", Object::Array(vec![Object::string_literal("sec2"), dest(page_ids[1])]))]));
    let name_tree_root = doc.add_object(dict(vec![("Kids", Object::Array(vec![name_tree_leaf.into()]))]));
    let dests = dict(vec![("the-end", dict(vec![("D", dest(page_ids[2]))]).into())]);
    let catalog = doc.add_object(dict(vec![
        ("Type", name("Catalog")),
        ("Pages", pages_id.into()),
        ("Outlines", outlines_id.into()),
        ("Names", dict(vec![("Dests", name_tree_root.into())]).into()),
        ("Dests", dests.into()),
    ]));
    doc.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    bytes
}

#[test]
fn synthetic_document_lines_pages_and_failed_page() {
    let doc = parse_pdf_bytes("synthetic.pdf", &synthetic_pdf()).unwrap();
    doc.check_invariants().unwrap();
    assert_eq!(doc.source, "synthetic.pdf");
    let texts: Vec<(u32, u32, &str)> = doc.lines.iter().map(|l| (l.page, l.line_in_page, l.text.as_str())).collect();
    // WinAnsi 0x93 is a left double quote; 0x9E is ž. The ligature-free text
    // survives as is.
    assert_eq!(texts[0], (1, 1, "Chapter One"));
    assert_eq!(texts[1].0, 1);
    assert!(texts[1].2.starts_with("The \u{201C}nal o\u{017E}ce (draft)"), "{:?}", texts[1]);
    // Page 2: "left" was drawn after "right" but reads first.
    assert_eq!(&texts[2..4], &[(2, 1, "left"), (2, 2, "right")]);
    assert_eq!(texts[4], (3, 1, "Page three"));
    assert_eq!(texts.len(), 5);

    assert_eq!(doc.pages.len(), 4);
    assert_eq!((doc.pages[0].width, doc.pages[0].height), (595.0, 842.0));
    assert_eq!(doc.pages[1].n_lines, 2);
    let lost = &doc.pages[3];
    assert_eq!((lost.n_lines, lost.n_chars, lost.has_text_layer), (0, 0, false));
    assert_eq!((lost.width, lost.height), (612.0, 792.0));
    let warning = doc.diagnostics.iter().find(|d| d.severity == Severity::Warning).expect("a page warning");
    assert_eq!(warning.page, Some(4));
    assert!(!doc.profile.is_scanned);
    assert_eq!(doc.profile.n_pages, Some(4));
    assert_eq!(doc.profile.doc_type, None);
    assert!(doc.profile.typical_fields.is_empty());
}

/// (id, parent, level, title, start_page, end_page)
type TocRow<'a> = (u32, Option<u32>, u32, &'a str, u32, u32);

#[test]
fn synthetic_document_outline() {
    let doc = parse_pdf_bytes("synthetic.pdf", &synthetic_pdf()).unwrap();
    let rows: Vec<TocRow<'_>> =
        doc.toc.iter().map(|t| (t.id, t.parent, t.level, t.title.as_str(), t.start_page, t.end_page)).collect();
    assert_eq!(
        rows,
        [
            (0, None, 1, "Intro", 1, 1),
            (1, None, 1, "Intro", 2, 2),
            (2, Some(1), 2, "Sub", 2, 2),
            (3, None, 1, "Orphan", 3, 2),
            (4, None, 1, "Finé", 3, 4),
        ]
        .map(|(id, parent, level, title, start, end)| (id, parent, level, title, start, end.max(start)))
    );
    assert!(doc.toc.iter().all(|t| t.source == TocSource::Outline));
    assert!(doc.profile.has_toc);
    let info = doc.diagnostics.iter().find(|d| d.severity == Severity::Info).expect("an info diagnostic");
    assert!(info.message.contains("1 outline entries skipped"), "{info:?}");
}

// ---------------------------------------------------------------------------
// Graphics and headings: a synthetic document without an outline. A 1×1
// logo image on every page (decoration), a full-width photo on page 2, an
// inline-image montage on page 3, 60 stroked paths on page 4, and numbered
// headings set larger than the body.

fn graphics_pdf() -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dict(vec![
        ("Type", name("Font")),
        ("Subtype", name("Type1")),
        ("BaseFont", name("Helvetica")),
        ("Encoding", name("WinAnsiEncoding")),
    ]));
    let image = |bytes: &[u8]| {
        Stream::new(
            dict(vec![
                ("Type", name("XObject")),
                ("Subtype", name("Image")),
                ("Width", 1.into()),
                ("Height", 1.into()),
                ("ColorSpace", name("DeviceGray")),
                ("BitsPerComponent", 8.into()),
            ]),
            bytes.to_vec(),
        )
    };
    let logo = doc.add_object(image(b"\x80"));
    let photo = doc.add_object(image(b"\x10"));
    // A form that draws the logo (followed by the scanner).
    let form = doc.add_object(Stream::new(
        dict(vec![
            ("Type", name("XObject")),
            ("Subtype", name("Form")),
            ("BBox", Object::Array(vec![0.into(), 0.into(), 100.into(), 100.into()])),
            ("Resources", dict(vec![("XObject", dict(vec![("L", logo.into())]).into())]).into()),
        ]),
        b"q 40 0 0 20 0 0 cm /L Do Q".to_vec(),
    ));
    let resources = dict(vec![
        ("Font", dict(vec![("F1", font_id.into())]).into()),
        ("XObject", dict(vec![("Logo", form.into()), ("Photo", photo.into())]).into()),
    ]);
    let body = |y: u32, text: &str| format!("BT /F1 10 Tf 72 {y} Td ({text}) Tj ET ");
    let heading = |y: u32, text: &str| format!("BT /F1 14 Tf 72 {y} Td ({text}) Tj ET ");
    let filler = "This is ordinary body text that runs on for a while in the body size";
    let inline = "q 100 0 0 100 72 100 cm BI /W 1 /H 1 /CS /G /BPC 8 ID \x01 EI Q ";
    let mut contents = vec![
        format!("/Logo Do {}{}{}", heading(760, "1 Introduction"), body(740, filler), body(726, filler)),
        format!("/Logo Do q 500 0 0 400 50 50 cm /Photo Do Q {}{}", heading(760, "2 Method"), body(740, filler)),
        format!("/Logo Do {}{}{}", heading(760, "2.1 Data"), body(740, filler), inline.repeat(4)),
        format!("/Logo Do {}{}", body(740, filler), "10 10 m 20 20 l S ".repeat(60)),
    ];
    contents.push(format!("/Logo Do {}{}", heading(760, "3 Results"), body(740, filler)));
    let mut page_ids: Vec<ObjectId> = Vec::new();
    for text in &contents {
        let content = doc.add_object(Stream::new(Dictionary::new(), text.as_bytes().to_vec()));
        page_ids.push(doc.add_object(dict(vec![
            ("Type", name("Page")),
            ("Parent", pages_id.into()),
            ("Contents", content.into()),
            ("Resources", resources.clone().into()),
            ("MediaBox", media_box()),
        ])));
    }
    let kids: Vec<Object> = page_ids.iter().map(|&id| id.into()).collect();
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        dict(vec![("Type", name("Pages")), ("Kids", Object::Array(kids)), ("Count", count.into())]).into(),
    );
    let catalog = doc.add_object(dict(vec![("Type", name("Catalog")), ("Pages", pages_id.into())]));
    doc.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    bytes
}

#[test]
fn page_table_counts_images_paths_and_figures() {
    let doc = parse_pdf_bytes("graphics.pdf", &graphics_pdf()).unwrap();
    doc.check_invariants().unwrap();
    let rows: Vec<(u32, u32, Option<&str>, usize)> = doc
        .pages
        .iter()
        .map(|p| (p.n_images, p.n_vector_paths, p.figure_kind.as_deref(), p.decorative_image_hashes.len()))
        .collect();
    assert_eq!(
        rows,
        [
            (1, 0, None, 1),
            (2, 0, Some("image"), 1),
            (5, 0, Some("montage"), 1),
            (1, 60, Some("vector"), 1),
            (1, 0, None, 1)
        ]
    );
    assert!(doc.pages.iter().all(|p| p.has_figure == p.figure_kind.is_some()));
    // The same logo hash on every page.
    let logo = &doc.pages[0].decorative_image_hashes[0];
    assert!(doc.pages.iter().all(|p| &p.decorative_image_hashes[0] == logo));
    assert_eq!(logo.len(), 16);
    assert_eq!(vision_candidates(&doc), (vec![2, 3, 4], vec![]));
}

#[test]
fn headings_rebuild_the_toc_without_an_outline() {
    let doc = parse_pdf_bytes("graphics.pdf", &graphics_pdf()).unwrap();
    let rows: Vec<(u32, Option<u32>, &str, u32, u32)> =
        doc.toc.iter().map(|t| (t.level, t.parent, t.title.as_str(), t.start_page, t.end_page)).collect();
    assert_eq!(
        rows,
        [
            (1, None, "1 Introduction", 1, 1),
            (1, None, "2 Method", 2, 4),
            (2, Some(1), "2.1 Data", 3, 4),
            (1, None, "3 Results", 5, 5),
        ]
    );
    assert!(doc.toc.iter().all(|t| t.source == TocSource::Headings));
    assert!(doc.profile.has_toc);
    assert!(doc.diagnostics.iter().any(|d| d.message.contains("rebuilt from headings")));

    // Chunks carry the section path of their lines.
    let chunks = chunk_document(&doc, &ChunkConfig { max_tokens: 20, overlap_tokens: 0 });
    let data = chunks.iter().find(|c| c.page_start == 3 && c.text.contains("ordinary")).expect("page 3 body");
    assert_eq!(data.context_header, "graphics > 2 Method > 2.1 Data");
}

#[test]
fn scanned_pages_are_vision_candidates() {
    let doc = parse_pdf_bytes("graphics.pdf", &graphics_pdf()).unwrap();
    let mut doc = doc;
    // A page with images and no text layer is a scan to transcribe.
    doc.pages[1].has_text_layer = false;
    assert_eq!(vision_candidates(&doc), (vec![3, 4], vec![2]));
}

#[test]
fn parse_file_dispatches_on_bytes_and_extension() {
    let md = scratch_file("guide.md", b"# Guide\n\nIntro.\n\n## Install\nRun the installer.\n");
    let doc = parse_file(&md).unwrap();
    doc.check_invariants().unwrap();
    assert_eq!((doc.profile.format, doc.profile.n_pages), (DocumentFormat::Txt, None));
    let titles: Vec<&str> = doc.toc.iter().map(|t| t.title.as_str()).collect();
    assert_eq!(titles, ["Guide", "Install"]);
    assert_eq!(doc.lines.len(), 4);

    let txt = scratch_file("notes", "Plain notes\nsecond line\n".as_bytes());
    let doc = parse_file(&txt).unwrap();
    assert_eq!(doc.profile.format, DocumentFormat::Txt);
    assert!(doc.toc.is_empty());

    // A PDF under another name is still a PDF.
    let pdf = scratch_file("invoice.bin", &std::fs::read(invoice("AmazonWebServices.pdf")).unwrap());
    assert_eq!(parse_file(&pdf).unwrap().profile.format, DocumentFormat::Pdf);

    let docx = scratch_file("contract.docx", b"PK\x03\x04 not really a docx");
    let err = parse_file(&docx).unwrap_err();
    assert!(matches!(err, ParseError::BadDocx { .. }), "{err:?}");
    assert!(err.to_string().starts_with(&format!("{}: malformed DOCX", docx.display())), "{err}");

    let binary = scratch_file("blob.dat", b"\x00\x01\x02\xff");
    let err = parse_file(&binary).unwrap_err();
    assert!(matches!(err, ParseError::UnsupportedFormat { .. }), "{err:?}");
    assert!(err.to_string().contains("blob.dat"));

    let fake_pdf = scratch_file("fake.pdf", b"hello");
    assert!(matches!(parse_file(&fake_pdf).unwrap_err(), ParseError::NotPdf { .. }));
    assert!(matches!(parse_file(&invoice("missing.md")).unwrap_err(), ParseError::NotFound { .. }));
}

#[test]
fn chunks_cover_every_invoice_line_within_budget() {
    for name in ["AmazonWebServices.pdf", "NetpresseInvoice.pdf", "FlipkartInvoice.pdf", "saeco.pdf"] {
        let doc = parse_fixture(name);
        let config = ChunkConfig { max_tokens: 64, overlap_tokens: 16 };
        let chunks = chunk_document(&doc, &config);
        assert!(!chunks.is_empty(), "{name}");
        let mut next = 1;
        for c in &chunks {
            assert!(c.n_tokens_est <= config.max_tokens, "{name}: {c:?}");
            assert!(c.line_start <= next && c.line_end + 1 >= next, "{name}: {c:?}");
            next = c.line_end + 1;
            assert!(!c.context_header.is_empty());
        }
        assert_eq!(next as usize, doc.lines.len() + 1, "{name}");
    }
}

/// `write_tables` (feature `parquet`, on by default).
#[cfg(feature = "parquet")]
mod parquet_tables {
    use std::path::Path;

    use docintel_test_support::temp_dir;

    use super::*;

    /// Reads one Parquet file back into a single record batch.
    fn read_parquet(path: &Path) -> arrow_array::RecordBatch {
        let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        let schema = builder.schema().clone();
        let batches: Vec<arrow_array::RecordBatch> = builder.build().unwrap().map(Result::unwrap).collect();
        // Small files come back as one batch, an empty table as none.
        assert!(batches.len() <= 1, "{}: expected one batch", path.display());
        batches.into_iter().next().unwrap_or_else(|| arrow_array::RecordBatch::new_empty(schema))
    }

    fn column<'a, T: 'static>(batch: &'a arrow_array::RecordBatch, name: &str) -> &'a T {
        batch
            .column_by_name(name)
            .unwrap_or_else(|| panic!("no column {name}"))
            .as_any()
            .downcast_ref::<T>()
            .unwrap_or_else(|| panic!("column {name} has type {:?}", batch.column_by_name(name).unwrap().data_type()))
    }

    #[test]
    fn aws_invoice_tables_round_trip_through_parquet() {
        use arrow_array::{Float32Array, ListArray, StringArray, UInt32Array};

        let path = invoice("AmazonWebServices.pdf");
        let bytes = std::fs::read(&path).unwrap();
        let doc = parse_fixture("AmazonWebServices.pdf");
        let chunks = chunk_document(&doc, &ChunkConfig { max_tokens: 64, overlap_tokens: 8 });
        assert!(!chunks.is_empty());
        let out_guard = temp_dir("parse-output");
        let out = out_guard.path();
        let dir = docintel_parse::document_folder(out, &path, &bytes);
        let hash = docintel_parse::content_hash(&bytes);
        assert!(dir.file_name().unwrap().to_str().unwrap().starts_with("amazonwebservices-"));
        assert!(dir.to_str().unwrap().ends_with(&hash[..12]));
        assert!(!docintel_parse::is_up_to_date(&dir));

        let folder = docintel_parse::write_tables(&doc, &chunks, &hash, &dir).unwrap();
        assert_eq!(folder.dir, dir);
        assert_eq!(folder.files.len(), 5);
        assert!(docintel_parse::is_up_to_date(&dir));
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 5);

        let lines = read_parquet(&dir.join("lines.parquet"));
        assert_eq!(lines.num_rows(), doc.lines.len());
        assert_eq!(lines.num_columns(), 11);
        assert!(column::<arrow_array::BooleanArray>(&lines, "visible").iter().all(|v| v == Some(true)));
        assert!(column::<StringArray>(&lines, "source").iter().all(|v| v == Some("text_layer")));
        assert!(column::<Float32Array>(&lines, "ocr_confidence").iter().all(|v| v.is_none()));
        assert_eq!(column::<UInt32Array>(&lines, "line_id").value(0), 1);
        assert_eq!(column::<StringArray>(&lines, "text").value(0), doc.lines[0].text);
        let last = doc.lines.len() - 1;
        assert_eq!(column::<StringArray>(&lines, "text").value(last), doc.lines[last].text);
        assert_eq!(column::<Float32Array>(&lines, "y1").value(0), doc.lines[0].bbox.y1);

        let pages = read_parquet(&dir.join("pages.parquet"));
        assert_eq!(pages.num_rows(), doc.pages.len());
        assert_eq!(pages.num_columns(), 11);
        assert_eq!(column::<Float32Array>(&pages, "width").value(0), 612.0);
        assert_eq!(column::<UInt32Array>(&pages, "n_lines").value(0), doc.pages[0].n_lines);
        let hashes = column::<ListArray>(&pages, "decorative_image_hashes");
        assert_eq!(hashes.value_length(0) as usize, doc.pages[0].decorative_image_hashes.len());

        let toc = read_parquet(&dir.join("toc.parquet"));
        assert_eq!(toc.num_rows(), doc.toc.len());
        assert_eq!(toc.num_columns(), 7);
        assert!(toc.schema().field_with_name("parent").unwrap().is_nullable());

        let chunk_table = read_parquet(&dir.join("chunks.parquet"));
        assert_eq!(chunk_table.num_rows(), chunks.len());
        assert_eq!(chunk_table.num_columns(), 8);
        assert_eq!(column::<StringArray>(&chunk_table, "text").value(0), chunks[0].text);
        assert_eq!(column::<UInt32Array>(&chunk_table, "line_end").value(0), chunks[0].line_end);

        let profile: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("profile.json")).unwrap()).unwrap();
        assert_eq!(profile["content_hash"], hash.as_str());
        assert_eq!(profile["parser_build"], docintel_parse::PARSER_BUILD);
        assert_eq!(docintel_parse::PARSER_BUILD.len(), 16);
        assert_eq!(profile["source"], doc.source.as_str());
        assert_eq!(profile["profile"]["doc_type"], "invoice");
        assert_eq!(profile["diagnostics"].as_array().unwrap().len(), doc.diagnostics.len());

        // Rewriting in place works (rename over existing files).
        docintel_parse::write_tables(&doc, &chunks, &hash, &dir).unwrap();
        assert!(docintel_parse::is_up_to_date(&dir));
        std::fs::remove_file(dir.join("toc.parquet")).unwrap();
        assert!(!docintel_parse::is_up_to_date(&dir));
        // Tables written by another parser build are stale.
        let profile_path = dir.join("profile.json");
        let written = std::fs::read_to_string(&profile_path).unwrap();
        std::fs::write(&profile_path, written.replace(docintel_parse::PARSER_BUILD, "0123456789abcdef")).unwrap();
        assert!(!docintel_parse::is_up_to_date(&dir));
        docintel_parse::write_tables(&doc, &chunks, &hash, &dir).unwrap();
        assert!(docintel_parse::is_up_to_date(&dir));
        // A profile with another hash is stale too.
        docintel_parse::write_tables(&doc, &chunks, &"0".repeat(64), &dir).unwrap();
        assert!(!docintel_parse::is_up_to_date(&dir));
    }
}
