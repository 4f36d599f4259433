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
