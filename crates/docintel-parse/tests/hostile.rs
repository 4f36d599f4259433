//! Hostile and broken PDFs (issue 16), written byte by byte here the way the probe's
//! `make_repros.py` writes them: each must give lines or a clear error, never an abort.

use docintel_parse::{ParseError, parse_pdf_bytes};
use docintel_schema::ParsedDocument;

/// A PDF with `objects` numbered from 1 (1 is the catalog), a classic xref table and a trailer.
fn raw_pdf(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::with_capacity(objects.len());
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).as_bytes(),
    );
    out
}

fn stream(data: &[u8], extra: &str) -> Vec<u8> {
    let mut s = format!("<< /Length {}{extra} >>\nstream\n", data.len()).into_bytes();
    s.extend_from_slice(data);
    s.extend_from_slice(b"\nendstream");
    s
}

const FONT: &str = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";
const TEXT: &[u8] = b"BT /F1 12 Tf 72 720 Td (Invoice total: 42.00 USD) Tj ET";

fn page(parent: usize, font: usize, contents: usize) -> Vec<u8> {
    format!(
        "<< /Type /Page /Parent {parent} 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 {font} 0 R >> >> /Contents {contents} 0 R >>"
    )
    .into_bytes()
}

fn texts(doc: &ParsedDocument) -> Vec<&str> {
    doc.lines.iter().map(|l| l.text.as_str()).collect()
}

// ------------------------------------------------------------ item 1: aborts

#[test]
fn a_pages_node_claiming_four_billion_pages_parses_its_real_pages() {
    // sibling_count_abort.pdf: lopdf's get_pages reserved room for 2^32 pages (51 GB, exit 134).
    let pdf = raw_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [6 0 R 7 0 R] /Count 2 >>".to_vec(),
        page(6, 5, 4),
        stream(TEXT, ""),
        FONT.as_bytes().to_vec(),
        b"<< /Type /Pages /Parent 2 0 R /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Pages /Parent 2 0 R /Kids [8 0 R] /Count 4294967296 >>".to_vec(),
        page(7, 5, 4),
    ]);
    let doc = parse_pdf_bytes("sibling_count_abort.pdf", &pdf).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(doc.pages.len(), 2);
    assert_eq!(texts(&doc), ["Invoice total: 42.00 USD", "Invoice total: 42.00 USD"]);
}

#[test]
fn a_page_tree_50000_nodes_deep_parses_on_a_small_stack() {
    // deep_page_tree_chain_50000.pdf: a stack overflow (exit 134) before.
    const DEPTH: usize = 50_000;
    let mut objects = vec![b"<< /Type /Catalog /Pages 2 0 R >>".to_vec()];
    for level in 0..DEPTH {
        let me = 2 + level;
        let parent = if level == 0 { String::new() } else { format!(" /Parent {} 0 R", me - 1) };
        objects.push(format!("<< /Type /Pages /Kids [{} 0 R] /Count 1{parent} >>", me + 1).into_bytes());
    }
    let leaf = 2 + DEPTH;
    objects.push(page(leaf - 1, leaf + 2, leaf + 1));
    objects.push(stream(TEXT, ""));
    objects.push(FONT.as_bytes().to_vec());
    let pdf = raw_pdf(&objects);
    // A 2 MiB stack, as the CLI's main thread might have: no recursion may depend on the depth.
    let doc = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || parse_pdf_bytes("deep.pdf", &pdf))
        .unwrap()
        .join()
        .expect("no panic")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(texts(&doc), ["Invoice total: 42.00 USD"]);
}

#[test]
fn a_parent_cycle_without_a_media_box_fails_its_page_not_the_process() {
    // Page 3's /Parent is node 2 whose /Parent is page 3: inherited lookups must stop.
    let pdf = raw_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 /Parent 3 0 R >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>".to_vec(),
        stream(TEXT, ""),
    ]);
    match parse_pdf_bytes("cycle.pdf", &pdf) {
        Ok(doc) => assert_eq!(doc.pages.len(), 1),
        Err(e) => assert!(matches!(e, ParseError::NoReadablePage { .. }), "{e}"),
    }
}

// ------------------------------------------------------------ item 2: invisible text

/// The probe's invoice page: a visible total, then `body` (the hidden one).
fn invoice_with(body: &str) -> Vec<u8> {
    let content = format!(
        "BT /F1 14 Tf 72 770 Td (ACME Supplies Ltd - Invoice INV-2024-0042) Tj ET \
         BT /F1 11 Tf 72 730 Td (Widgets 10 $100.00) Tj 0 -18 Td (Gadgets 2 $117.28) Tj 0 -18 Td (Total: $1,234.56) Tj ET {body}"
    );
    raw_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> \
          /XObject << /Im1 6 0 R >> >> /Contents 4 0 R >>"
            .to_vec(),
        stream(content.as_bytes(), ""),
        FONT.as_bytes().to_vec(),
        stream(
            b"\x00",
            " /Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8",
        ),
    ])
}

/// The texts of the lines marked invisible, and the warning that marks them.
fn invisible(doc: &ParsedDocument) -> (Vec<&str>, String) {
    let ids = doc.invisible_lines();
    let texts = ids.iter().filter_map(|&id| doc.line(id)).map(|l| l.text.as_str()).collect();
    let messages = doc.diagnostics.iter().filter(|d| !d.invisible_lines.is_empty()).map(|d| d.message.clone());
    (texts, messages.collect::<Vec<_>>().join("; "))
}

#[test]
fn white_tiny_and_covered_text_is_kept_but_marked_invisible() {
    for (name, body, why) in [
        ("white", "1 1 1 rg BT /F1 11 Tf 72 676 Td (TOTAL AMOUNT DUE: $999.00) Tj ET", "same colour"),
        ("tiny", "BT /F1 0.5 Tf 72 676 Td (TOTAL AMOUNT DUE: $999.00) Tj ET", "smaller than 1 pt"),
        ("covered", "BT /F1 11 Tf 72 676 Td (TOTAL AMOUNT DUE: $999.00) Tj ET 1 1 1 rg 60 672 400 16 re f", "covered"),
        ("render mode 3", "BT 3 Tr /F1 11 Tf 72 676 Td (TOTAL AMOUNT DUE: $999.00) Tj ET", "render mode"),
        ("white in CMYK", "0 0 0 0 k BT /F1 11 Tf 72 676 Td (TOTAL AMOUNT DUE: $999.00) Tj ET", "same colour"),
    ] {
        let doc = parse_pdf_bytes(&format!("hidden_{name}.pdf"), &invoice_with(body)).unwrap_or_else(|e| panic!("{e}"));
        assert!(texts(&doc).contains(&"TOTAL AMOUNT DUE: $999.00"), "{name}: kept in the table: {:?}", texts(&doc));
        let (hidden, message) = invisible(&doc);
        assert_eq!(hidden, ["TOTAL AMOUNT DUE: $999.00"], "{name}");
        assert!(message.contains(why) && message.contains("kept out of answers"), "{name}: {message}");
        // The answering bricks never see it.
        let answerable = doc.answerable();
        assert!(!answerable.lines.iter().any(|l| l.text.contains("999")), "{name}");
        assert_eq!(answerable.lines.len(), doc.lines.len());
    }
}

#[test]
fn visible_look_alikes_stay_visible() {
    for (name, body) in [
        // White on a dark box drawn first (a table header): visible.
        (
            "white on black",
            "0 0 0 rg 60 672 400 16 re f 1 1 1 rg BT /F1 11 Tf 72 676 Td (TOTAL AMOUNT DUE: $999.00) Tj ET",
        ),
        // An OCR layer: render mode 3 over a scanned image shows the image's text.
        ("ocr layer", "q 612 0 0 792 0 0 cm /Im1 Do Q BT 3 Tr /F1 11 Tf 72 676 Td (TOTAL AMOUNT DUE: $999.00) Tj ET"),
        // A box drawn under the text (order matters).
        ("box under", "0.9 0.9 0.9 rg 60 672 400 16 re f 0 g BT /F1 11 Tf 72 676 Td (TOTAL AMOUNT DUE: $999.00) Tj ET"),
        ("small but readable", "BT /F1 4 Tf 72 676 Td (TOTAL AMOUNT DUE: $999.00) Tj ET"),
        ("grey", "0.5 g BT /F1 11 Tf 72 676 Td (TOTAL AMOUNT DUE: $999.00) Tj ET"),
        ("q restores black", "q 1 1 1 rg Q BT /F1 11 Tf 72 676 Td (TOTAL AMOUNT DUE: $999.00) Tj ET"),
    ] {
        let doc = parse_pdf_bytes(&format!("{name}.pdf"), &invoice_with(body)).unwrap_or_else(|e| panic!("{e}"));
        assert!(texts(&doc).contains(&"TOTAL AMOUNT DUE: $999.00"), "{name}: {:?}", texts(&doc));
        assert_eq!(invisible(&doc), (vec![], String::new()), "{name}");
    }
}

// ------------------------------------------------------------ item 6: memory caps

#[test]
fn a_deflate_bomb_is_cut_at_the_stream_limit_with_a_warning() {
    use std::io::Write as _;
    // flate_bomb_1GB.pdf inflated to 1 GiB and reached 3.2 GB resident; this one inflates to
    // 200 MiB (the text first), shared by two pages.
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(TEXT).unwrap();
    let spaces = vec![b' '; 1 << 20];
    for _ in 0..200 {
        encoder.write_all(&spaces).unwrap();
    }
    let bomb = encoder.finish().unwrap();
    assert!(bomb.len() < 1 << 20, "{}", bomb.len());
    let pdf = raw_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R 6 0 R] /Count 2 >>".to_vec(),
        page(2, 5, 4),
        stream(&bomb, " /Filter /FlateDecode"),
        FONT.as_bytes().to_vec(),
        page(2, 5, 4),
    ]);
    let doc = parse_pdf_bytes("bomb.pdf", &pdf).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(texts(&doc), ["Invoice total: 42.00 USD", "Invoice total: 42.00 USD"]);
    let warning = doc.diagnostics.iter().find(|d| d.message.contains("decodes to more than 128 MiB"));
    assert!(warning.is_some_and(|d| d.message.contains("first 128 MiB kept")), "{:?}", doc.diagnostics);
}

// ------------------------------------------------------------ item 13: text loss made visible

/// One page drawing `content` with Helvetica as /F1 and, as /F2, a CID font with no ToUnicode
/// map and no embedded program (jo.pdf, kampo.pdf: PyMuPDF reads them, pdf-extract has no
/// text for their glyphs).
fn page_with_fonts(content: &str) -> Vec<u8> {
    raw_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> /Contents 4 0 R >>".to_vec(),
        stream(content.as_bytes(), ""),
        FONT.as_bytes().to_vec(),
        b"<< /Type /Font /Subtype /Type0 /BaseFont /Mincho /Encoding /Identity-H /DescendantFonts [7 0 R] >>".to_vec(),
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Mincho /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor 8 0 R /DW 1000 >>".to_vec(),
        b"<< /Type /FontDescriptor /FontName /Mincho /Flags 4 /FontBBox [0 0 1000 1000] /ItalicAngle 0 /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 >>".to_vec(),
    ])
}

#[test]
fn glyphs_without_a_unicode_mapping_are_reported_as_lost_text() {
    let content = "BT /F1 12 Tf 72 720 Td (Heading in Latin) Tj ET \
                   BT /F2 12 Tf 72 700 Td <0041004200430044004500460047004800490050> Tj ET";
    let doc = parse_pdf_bytes("cid.pdf", &page_with_fonts(content)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(texts(&doc), ["Heading in Latin"]);
    let lost = doc.diagnostics.iter().find(|d| d.message.starts_with("text lost"));
    assert!(lost.is_some_and(|d| d.message.contains("10 of") && d.page == Some(1)), "{:?}", doc.diagnostics);
    // A page whose every glyph maps says nothing.
    let fine = parse_pdf_bytes("latin.pdf", &page_with_fonts("BT /F1 12 Tf 72 720 Td (All mapped) Tj ET")).unwrap();
    assert!(!fine.diagnostics.iter().any(|d| d.message.starts_with("text lost")), "{:?}", fine.diagnostics);
}

#[test]
fn the_quote_operators_show_their_lines() {
    // zen_of_python_corrupted.pdf writes every line but the first with `'` (next line, show):
    // 122 characters read where PyMuPDF reads 770.
    let content = "BT /F1 12 Tf 14 TL 72 720 Td (First line) Tj (Second line) ' 2 0.5 (Third line) \" ET";
    let doc = parse_pdf_bytes("quotes.pdf", &page_with_fonts(content)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(texts(&doc), ["First line", "Second line", "Third line"]);
    let ys: Vec<f32> = doc.lines.iter().map(|l| l.bbox.y0).collect();
    assert!(ys[0] > ys[1] && ys[1] > ys[2], "each on its own line: {ys:?}");
}

#[test]
fn a_content_stream_without_its_length_is_read_up_to_endstream() {
    // pdf.js's issue1293r.pdf: `<< >>` for the stream dictionary; lopdf keeps no data.
    let pdf = raw_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        page(2, 5, 4),
        [b"<< >>\nstream\n".as_slice(), TEXT, b"\nendstream"].concat(),
        FONT.as_bytes().to_vec(),
    ]);
    let doc = parse_pdf_bytes("no-length.pdf", &pdf).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(texts(&doc), ["Invoice total: 42.00 USD"]);
    assert!(doc.diagnostics.iter().any(|d| d.message.contains("read up to `endstream`")), "{:?}", doc.diagnostics);
}

#[test]
fn text_drawn_only_by_form_field_appearances_is_reported_unread() {
    // AcroForm_TEST.pdf: field values live in annotation appearance streams.
    let appearance = b"BT /F1 12 Tf 2 4 Td (Field value) Tj ET";
    let pdf = raw_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R /Annots [6 0 R] >>".to_vec(),
        stream(TEXT, ""),
        FONT.as_bytes().to_vec(),
        b"<< /Type /Annot /Subtype /Widget /Rect [72 600 272 620] /FT /Tx /V (Field value) /AP << /N 7 0 R >> >>".to_vec(),
        stream(appearance, " /Type /XObject /Subtype /Form /BBox [0 0 200 20] /Resources << /Font << /F1 5 0 R >> >>"),
    ]);
    let doc = parse_pdf_bytes("form.pdf", &pdf).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(texts(&doc), ["Invoice total: 42.00 USD"]);
    assert!(
        doc.diagnostics.iter().any(|d| d.page == Some(1) && d.message.contains("1 annotation(s) or form field(s)")),
        "{:?}",
        doc.diagnostics
    );
}

/// One page drawing `content` with /F2, a composite font of encoding `encoding` over an
/// Adobe collection `ordering` (no ToUnicode map).
fn cjk_pdf(encoding: &str, ordering: &str, content: &str) -> Vec<u8> {
    let font =
        format!("<< /Type /Font /Subtype /Type0 /BaseFont /CJK /Encoding /{encoding} /DescendantFonts [7 0 R] >>");
    let cid = format!(
        "<< /Type /Font /Subtype /CIDFontType0 /BaseFont /CJK /CIDSystemInfo << /Registry (Adobe) /Ordering ({ordering}) /Supplement 2 >> /FontDescriptor 8 0 R /DW 1000 >>"
    );
    raw_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F2 6 0 R >> >> /Contents 4 0 R >>".to_vec(),
        stream(content.as_bytes(), ""),
        FONT.as_bytes().to_vec(),
        font.into_bytes(),
        cid.into_bytes(),
        b"<< /Type /FontDescriptor /FontName /CJK /Flags 4 /FontBBox [0 0 1000 1000] /ItalicAngle 0 /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 >>".to_vec(),
    ])
}

#[test]
fn predefined_cjk_cmaps_decode_without_a_to_unicode_map() {
    // pdf.js's noembed-sjis.pdf (90ms-RKSJ-H) and issue3521.pdf (GBKp-EUC-H) panicked with
    // "unsupported encoding": no readable page.
    for (encoding, ordering, bytes, want) in
        [("90ms-RKSJ-H", "Japan1", "82A082A282A4", "あいう"), ("GBKp-EUC-H", "GB1", "CED2C3C7", "我们")]
    {
        let pdf = cjk_pdf(encoding, ordering, &format!("BT /F2 12 Tf 72 700 Td <{bytes}> Tj ET"));
        let doc = parse_pdf_bytes(&format!("{encoding}.pdf"), &pdf).unwrap_or_else(|e| panic!("{encoding}: {e}"));
        assert_eq!(texts(&doc), [want], "{encoding}");
    }
}

#[test]
fn a_content_stream_that_does_not_inflate_is_reported() {
    // pdf.js's issue7665.pdf: lopdf inflates its content to nothing and the page was silently empty.
    let pdf = raw_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        page(2, 5, 4),
        stream(b"\xb1Y\xfd_\xe5\x01\x10\x85\xa6-k\x9d\xa5c\xce\xbc\xb2R\x04\x16", " /Filter /FlateDecode"),
        FONT.as_bytes().to_vec(),
    ]);
    let doc = parse_pdf_bytes("garbled.pdf", &pdf).unwrap_or_else(|e| panic!("{e}"));
    assert!(doc.lines.is_empty());
    assert!(
        doc.diagnostics.iter().any(|d| d.page == Some(1) && d.message.contains("4 0 R unreadable")),
        "{:?}",
        doc.diagnostics
    );
}

#[test]
fn a_content_stream_opening_with_a_comment_is_read() {
    // pdf.js's multiple-filters-length-zero.pdf: a producer's `% CANON_…` line first;
    // lopdf's decoder stopped there and the page read as empty, with no warning.
    let content = "% a producer's note\n%% and another (with a paren\nBT /F1 12 Tf 72 720 Td (After the comments) Tj ET\n\
                   BT /F1 12 Tf 72 700 Td (100% \\(kept\\)) Tj ET % trailing note";
    let doc = parse_pdf_bytes("comment.pdf", &page_with_fonts(content)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(texts(&doc), ["After the comments", "100% (kept)"]);
}

#[test]
fn an_xobject_that_is_missing_or_no_stream_draws_nothing_and_the_page_is_read() {
    // The same file draws an image whose stream lopdf cannot read (`/Length 0` with two
    // filters): the page panicked "wrong type" and lost its text.
    let pdf = raw_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> /XObject << /Im1 6 0 R >> >> /Contents 4 0 R >>".to_vec(),
        stream(b"q 612 0 0 792 0 0 cm /Im1 Do /Missing Do Q BT /F1 12 Tf 72 720 Td (Still read) Tj ET", ""),
        FONT.as_bytes().to_vec(),
        b"<< /Type /XObject /Subtype /Image /Width 10 /Height 10 >>".to_vec(),
    ]);
    let doc = parse_pdf_bytes("xobject.pdf", &pdf).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(texts(&doc), ["Still read"]);
}

#[test]
fn vertical_writing_moves_down_the_column() {
    // pdf.js's vertical.pdf (Identity-V): each glyph advanced right by its width, so the
    // column's glyphs piled over the next column's and three of eight were lost.
    let pdf = cjk_pdf("Identity-V", "Japan1", "BT /F2 12 Tf 1 0 0 1 300 700 Tm [<034b034d034f>] TJ ET");
    let doc = parse_pdf_bytes("vertical.pdf", &pdf).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(texts(&doc), ["あ", "い", "う"]);
    let ys: Vec<f32> = doc.lines.iter().map(|l| l.bbox.y0).collect();
    let xs: Vec<f32> = doc.lines.iter().map(|l| l.bbox.x0).collect();
    assert!(ys[0] > ys[1] && ys[1] > ys[2], "down the column: {ys:?}");
    assert!(xs.iter().all(|x| (x - xs[0]).abs() < 1.0), "one column: {xs:?}");
}

#[test]
fn an_object_stream_bomb_is_refused_before_it_is_loaded() {
    use std::io::Write as _;
    // lopdf inflates object streams whole while it loads the file, before any cap of ours:
    // 200 MiB of an object stream reached memory whole. Now the file is refused, naming why.
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(b"7 0 ").unwrap();
    let spaces = vec![b' '; 1 << 20];
    for _ in 0..200 {
        encoder.write_all(&spaces).unwrap();
    }
    let bomb = encoder.finish().unwrap();
    let with_object_stream = |data: &[u8]| {
        raw_pdf(&[
            b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
            page(2, 5, 4),
            stream(TEXT, ""),
            FONT.as_bytes().to_vec(),
            stream(data, " /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode"),
        ])
    };
    match parse_pdf_bytes("objstm-bomb.pdf", &with_object_stream(&bomb)) {
        Err(e @ ParseError::Malformed { .. }) => {
            assert!(e.to_string().contains("decodes to more than 128 MiB"), "{e}");
        }
        other => panic!("expected a refusal, got {:?}", other.map(|d| d.lines.len())),
    }
    // A small object stream is no bomb.
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(b"7 0 (x)").unwrap();
    let small = encoder.finish().unwrap();
    let doc = parse_pdf_bytes("objstm.pdf", &with_object_stream(&small)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(texts(&doc), ["Invoice total: 42.00 USD"]);
}
