//! Input classes beyond plain PDFs: DOCX, password-protected and empty-password encryption,
//! encryption without a file identifier, broken cross-reference tables, printed contents pages
//! and table detection. Fixtures are generated here or by `tests/data/make_fixtures.py`.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use docintel_parse::{ParseError, ParseOptions, parse_file, parse_file_with_options, parse_pdf_bytes};
use docintel_schema::{DocumentFormat, ParsedDocument, Severity, TocSource};
use docintel_test_support::scratch_file;
use pdf_extract::{Dictionary, Document, Object, Stream};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn texts(doc: &ParsedDocument) -> Vec<&str> {
    doc.lines.iter().map(|l| l.text.as_str()).collect()
}

fn toc(doc: &ParsedDocument) -> Vec<(u32, &str, u32, u32)> {
    doc.toc.iter().map(|t| (t.level, t.title.as_str(), t.start_page, t.end_page)).collect()
}

// ---------------------------------------------------------------- DOCX

#[test]
fn docx_headings_tables_and_paragraphs() {
    let doc = parse_file(&data("sample.docx")).unwrap_or_else(|e| panic!("{e}"));
    doc.check_invariants().expect("invariants");
    assert_eq!((doc.profile.format, doc.profile.n_pages), (DocumentFormat::Docx, None));
    assert!(doc.profile.has_tables && doc.profile.has_toc);
    assert_eq!(
        texts(&doc),
        [
            "Service Agreement",
            "This agreement is made between Acme Ltd and Beta GmbH.",
            "1. Definitions",
            "Services means the consulting services described in Annex A.",
            "1.1 Fees",
            "Item\tQuantity\tPrice",
            "Audit\t2\t1,200.00",
            "Training\t1\t800.00",
            "Fees are due within 30 days.",
            "2. Term",
            "The term is two years",
            "and renews once.",
        ]
    );
    // The explicit page break starts approximate page 2.
    assert_eq!(doc.line(10).map(|l| l.page), Some(2));
    assert_eq!(
        toc(&doc),
        [(1, "Service Agreement", 1, 1), (1, "1. Definitions", 1, 1), (2, "1.1 Fees", 1, 1), (1, "2. Term", 2, 2)]
    );
    assert!(doc.toc.iter().all(|t| t.source == TocSource::Headings));
    assert_eq!(doc.toc[2].parent, Some(1));
    assert!(doc.diagnostics.iter().any(|d| d.message.contains("page numbers are approximate")));
    assert_eq!(doc.pages.len(), 2);
    assert_eq!(doc.profile.languages.first().map(String::as_str), Some("en"));
}

/// A DOCX written here: only `word/document.xml`.
fn docx_bytes(document_xml: &str) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut out);
    let options = zip::write::SimpleFileOptions::default();
    zip.start_file("[Content_Types].xml", options).expect("zip");
    zip.write_all(b"<Types/>").expect("zip");
    zip.start_file("word/document.xml", options).expect("zip");
    zip.write_all(document_xml.as_bytes()).expect("zip");
    zip.finish().expect("zip");
    out.into_inner()
}

#[test]
fn docx_without_styles_outline_levels_controls_and_tracked_changes() {
    let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>
  <w:p><w:pPr><w:pStyle w:val="Heading2"/></w:pPr><w:r><w:t>Scope</w:t></w:r></w:p>
  <w:p><w:r><w:t xml:space="preserve">Kept </w:t></w:r><w:del><w:r><w:delText>deleted </w:delText></w:r></w:del><w:ins><w:r><w:t>inserted</w:t></w:r></w:ins><w:r><w:tab/><w:t>after tab</w:t></w:r></w:p>
  <w:sdt><w:sdtContent>
    <w:p><w:pPr><w:outlineLvl w:val="0"/></w:pPr><w:r><w:t>Annex</w:t></w:r></w:p>
  </w:sdtContent></w:sdt>
  <w:tbl><w:tr><w:tc><w:p><w:r><w:t>a</w:t></w:r></w:p><w:p><w:r><w:t>b</w:t></w:r></w:p></w:tc><w:tc><w:p/></w:tc><w:tc><w:p><w:r><w:t>c</w:t></w:r></w:p></w:tc></w:tr></w:tbl>
  <w:p><w:r><w:lastRenderedPageBreak/><w:t>Second page</w:t></w:r></w:p>
</w:body></w:document>"#;
    let path = scratch_file("written.docx", &docx_bytes(xml));
    let doc = parse_file(&path).unwrap_or_else(|e| panic!("{e}"));
    doc.check_invariants().expect("invariants");
    assert_eq!(texts(&doc), ["Scope", "Kept inserted\tafter tab", "Annex", "a b\t\tc", "Second page"]);
    assert_eq!(toc(&doc), [(1, "Scope", 1, 1), (1, "Annex", 1, 2)], "Heading2 alone is clamped to level 1");
    assert_eq!(doc.line(5).map(|l| l.page), Some(2), "Word's rendered page break");
    assert!(doc.profile.has_tables);
    // The same bytes under another name are recognised as DOCX by content.
    let renamed = scratch_file("written.bin", &docx_bytes(xml));
    assert_eq!(parse_file(&renamed).map(|d| d.profile.format).ok(), Some(DocumentFormat::Docx));
}

#[test]
fn broken_docx_is_a_clear_error() {
    let not_zip = scratch_file("contract.docx", b"PK\x03\x04 not really a docx");
    let err = parse_file(&not_zip).expect_err("not a zip");
    assert!(matches!(err, ParseError::BadDocx { .. }), "{err:?}");
    assert!(err.to_string().starts_with(&format!("{}: malformed DOCX (not a ZIP archive", not_zip.display())));

    let mut out = std::io::Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut out);
    zip.start_file("hello.txt", zip::write::SimpleFileOptions::default()).expect("zip");
    zip.write_all(b"hi").expect("zip");
    zip.finish().expect("zip");
    let no_body = scratch_file("empty.docx", &out.into_inner());
    let err = parse_file(&no_body).expect_err("no document part");
    assert!(err.to_string().contains("no word/document.xml"), "{err}");

    let bad_xml = scratch_file("bad.docx", &docx_bytes("<w:document><w:body><w:p></w:body>"));
    let err = parse_file(&bad_xml).expect_err("bad xml");
    assert!(matches!(err, ParseError::BadDocx { .. }) && err.to_string().contains("word/document.xml"), "{err}");
}

// ---------------------------------------------------------------- PDF builders

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

/// A PDF whose pages hold `(x, y, font size, text)` runs in Helvetica.
fn build_pdf(pages: &[Vec<(f32, f32, f32, String)>]) -> Document {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dict(vec![
        ("Type", name("Font")),
        ("Subtype", name("Type1")),
        ("BaseFont", name("Helvetica")),
        ("Encoding", name("WinAnsiEncoding")),
    ]));
    let resources = dict(vec![("Font", dict(vec![("F1", font_id.into())]).into())]);
    let mut kids = Vec::new();
    for runs in pages {
        let mut content = String::new();
        for (x, y, size, text) in runs {
            content.push_str(&format!("BT /F1 {size} Tf {x} {y} Td ({text}) Tj ET\n"));
        }
        let stream = doc.add_object(Stream::new(Dictionary::new(), content.into_bytes()));
        let page = doc.add_object(dict(vec![
            ("Type", name("Page")),
            ("Parent", pages_id.into()),
            ("Contents", stream.into()),
            ("Resources", resources.clone().into()),
            ("MediaBox", Object::Array(vec![0.into(), 0.into(), 595.into(), 842.into()])),
        ]));
        kids.push(Object::from(page));
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        dict(vec![("Type", name("Pages")), ("Kids", Object::Array(kids)), ("Count", count.into())]).into(),
    );
    let catalog = doc.add_object(dict(vec![("Type", name("Catalog")), ("Pages", pages_id.into())]));
    doc.trailer.set("Root", catalog);
    doc
}

fn save(mut doc: Document) -> Vec<u8> {
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).expect("save");
    bytes
}

fn run(x: f32, y: f32, size: f32, text: &str) -> (f32, f32, f32, String) {
    (x, y, size, text.to_string())
}

fn prose_pdf() -> Document {
    build_pdf(&[vec![
        run(72.0, 760.0, 14.0, "Recovered heading"),
        run(72.0, 730.0, 10.0, "The quick brown fox jumps over the lazy dog near the river bank."),
        run(72.0, 716.0, 10.0, "A second sentence of plain prose follows on the next line here."),
    ]])
}

// ---------------------------------------------------------------- encryption

#[test]
fn password_protected_pdf_needs_its_password() {
    let path = data("encrypted_user_pw.pdf");
    let err = parse_file(&path).expect_err("locked");
    assert!(matches!(err, ParseError::Encrypted { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("{}: encrypted PDF: a password is needed to open it (none was given; use --password)", path.display())
    );
    let err = parse_file_with_options(&path, &ParseOptions::with_password("wrong")).expect_err("wrong password");
    assert!(matches!(err, ParseError::WrongPassword { .. }), "{err:?}");
    assert!(err.to_string().contains("the password given does not open it"));
    for password in ["secret", "owner-secret"] {
        let doc = parse_file_with_options(&path, &ParseOptions::with_password(password))
            .unwrap_or_else(|e| panic!("{password}: {e}"));
        assert_eq!(texts(&doc), ["Confidential memo", "The launch code is 4711."], "{password}");
    }
}

#[test]
fn empty_user_password_encryption_opens() {
    let doc = parse_file(&data("encrypted_rc4_empty_user.pdf")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(texts(&doc), ["Confidential memo", "The launch code is 4711."]);
    // A password given for a file that needs none does no harm.
    let again = parse_file_with_options(&data("encrypted_rc4_empty_user.pdf"), &ParseOptions::with_password("x"));
    assert_eq!(again.map(|d| d.lines.len()).ok(), Some(2));
}

#[test]
fn encrypted_without_file_identifier_opens_with_an_empty_one() {
    let mut doc = prose_pdf();
    // Encrypt under an empty identifier, then drop /ID as some writers do.
    doc.trailer.set("ID", Object::Array(vec![Object::string_literal(""), Object::string_literal("")]));
    let version = pdf_extract::encryption::EncryptionVersion::V2 {
        document: &doc,
        owner_password: "owner",
        user_password: "",
        key_length: 128,
        permissions: pdf_extract::encryption::Permissions::all(),
    };
    let state = pdf_extract::encryption::EncryptionState::try_from(version).expect("state");
    doc.encrypt(&state).expect("encrypt");
    doc.trailer.remove(b"ID");
    let bytes = save(doc);
    assert!(!bytes.windows(3).any(|w| w == b"/ID"), "the file has no /ID");
    let parsed = parse_pdf_bytes("no-id.pdf", &bytes).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(parsed.lines.first().map(|l| l.text.as_str()), Some("Recovered heading"));
    assert!(parsed.diagnostics.iter().any(|d| d.message.contains("file identifier")));
}

/// `prose_pdf` encrypted by lopdf with user password `baz` and owner password `foo` in one of
/// the standard security handler's revisions, the `/Encrypt` dictionary by reference or, as
/// pdfminer's samples write it, inline in the trailer.
fn encrypted_prose(revision: u32, inline: bool) -> Vec<u8> {
    use pdf_extract::encryption::crypt_filters::{Aes128CryptFilter, Aes256CryptFilter, CryptFilter};
    use pdf_extract::encryption::{EncryptionState, EncryptionVersion, Permissions};
    use std::collections::BTreeMap;
    use std::sync::Arc;
    let mut doc = prose_pdf();
    doc.trailer.set(
        "ID",
        Object::Array(vec![Object::string_literal("0123456789abcdef"), Object::string_literal("0123456789abcdef")]),
    );
    let (owner_password, user_password, permissions) = ("foo", "baz", Permissions::all());
    let key = [7u8; 32];
    let filters = |f: Arc<dyn CryptFilter>| BTreeMap::from([(b"StdCF".to_vec(), f)]);
    let version = match revision {
        2 => EncryptionVersion::V1 { document: &doc, owner_password, user_password, permissions },
        3 => EncryptionVersion::V2 { document: &doc, owner_password, user_password, key_length: 128, permissions },
        4 => EncryptionVersion::V4 {
            document: &doc,
            encrypt_metadata: true,
            crypt_filters: filters(Arc::new(Aes128CryptFilter)),
            stream_filter: b"StdCF".to_vec(),
            string_filter: b"StdCF".to_vec(),
            owner_password,
            user_password,
            permissions,
        },
        _ => EncryptionVersion::V5 {
            encrypt_metadata: true,
            crypt_filters: filters(Arc::new(Aes256CryptFilter)),
            file_encryption_key: &key,
            stream_filter: b"StdCF".to_vec(),
            string_filter: b"StdCF".to_vec(),
            owner_password,
            user_password,
            permissions,
        },
    };
    let state = EncryptionState::try_from(version).expect("state");
    doc.encrypt(&state).expect("encrypt");
    let bytes = save(doc);
    if !inline {
        return bytes;
    }
    // Move the dictionary of `/Encrypt N 0 R` into the trailer (the object stays, unused).
    let find = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).position(|w| w == needle);
    let at = bytes.windows(9).rposition(|w| w == b"/Encrypt ").expect("an /Encrypt entry");
    let reference_end = at + find(&bytes[at..], b" R").expect("a reference") + 2;
    let number: String = bytes[at + 9..].iter().take_while(|b| b.is_ascii_digit()).map(|&b| char::from(b)).collect();
    let marker = format!("\n{number} 0 obj");
    let start = find(&bytes, marker.as_bytes()).expect("the object") + marker.len();
    let end = start + find(&bytes[start..], b"endobj").expect("endobj");
    let mut out = bytes[..at].to_vec();
    out.extend_from_slice(b"/Encrypt ");
    out.extend_from_slice(bytes[start..end].trim_ascii());
    out.extend_from_slice(&bytes[reference_end..]);
    out
}

#[test]
fn user_and_owner_passwords_open_every_revision_by_reference_or_inline() {
    // pdfminer's aes-128.pdf, aes-256.pdf, rc4-40.pdf (user baz, owner foo) and pdf.js's
    // issue6010_1.pdf were refused with their right passwords: lopdf reads only an /Encrypt
    // given by reference, and keys an owner password of revisions 2-4 as if it were the user's.
    for revision in [2, 3, 4, 6] {
        for inline in [false, true] {
            let what = format!("R{revision}{}", if inline { " inline" } else { "" });
            let path = scratch_file(&format!("encrypted-r{revision}-{inline}.pdf"), &encrypted_prose(revision, inline));
            for password in ["baz", "foo"] {
                let doc = parse_file_with_options(&path, &ParseOptions::with_password(password))
                    .unwrap_or_else(|e| panic!("{what} {password}: {e}"));
                assert_eq!(texts(&doc).first(), Some(&"Recovered heading"), "{what} {password}");
            }
            let err = parse_file_with_options(&path, &ParseOptions::with_password("nope")).expect_err("wrong");
            assert!(matches!(err, ParseError::WrongPassword { .. }), "{what}: {err:?}");
            let err = parse_file(&path).expect_err("no password");
            assert!(matches!(err, ParseError::Encrypted { .. }), "{what}: {err:?}");
        }
    }
}

// ---------------------------------------------------------------- broken xref

#[test]
fn broken_xref_is_rebuilt_from_object_markers() {
    let good = save(prose_pdf());
    let text = |d: &ParsedDocument| d.lines.first().map(|l| l.text.clone());
    let repaired = |d: &ParsedDocument| {
        d.diagnostics.iter().any(|n| n.severity == Severity::Warning && n.message.contains("rebuilt from"))
    };
    // startxref points past the end of the file.
    let at = good.windows(10).rposition(|w| w == b"startxref\n").expect("startxref") + 10;
    let mut broken = good.clone();
    for b in broken[at..].iter_mut().take_while(|b| b.is_ascii_digit()) {
        *b = b'9';
    }
    let doc = parse_pdf_bytes("bad-startxref.pdf", &broken).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(text(&doc).as_deref(), Some("Recovered heading"));
    assert!(repaired(&doc), "{:?}", doc.diagnostics);
    // The `xref` keyword is missing.
    if let Some(at) = good.windows(6).rposition(|w| w == b"\nxref\n") {
        let mut broken = good.clone();
        broken[at + 1..at + 5].copy_from_slice(b"xxxx");
        let doc = parse_pdf_bytes("no-xref-keyword.pdf", &broken).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(text(&doc).as_deref(), Some("Recovered heading"));
        assert!(repaired(&doc));
    }

    // Cut after the last object: no table, no trailer; the catalog is found by its type.
    let last_endobj = good.windows(6).rposition(|w| w == b"endobj").expect("objects");
    let truncated = &good[..last_endobj + 6];
    let doc = parse_pdf_bytes("truncated.pdf", truncated).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(doc.lines.len(), 3);

    // Nothing to rebuild from: a clear error naming the file.
    let err = parse_pdf_bytes("hopeless.pdf", b"%PDF-1.7\n1 0 obj\n(just a string)\nendobj\n").expect_err("hopeless");
    assert!(matches!(err, ParseError::Malformed { .. }), "{err:?}");
    assert!(err.to_string().starts_with("hopeless.pdf: malformed PDF"), "{err}");
}

// ---------------------------------------------------------------- contents page

#[test]
fn printed_contents_page_becomes_the_toc() {
    // Cover, contents, then four numbered pages whose printed number is physical − 2.
    let mut pages = vec![
        vec![run(72.0, 700.0, 24.0, "Annual Report 2026")],
        vec![
            run(72.0, 760.0, 16.0, "Table of Contents"),
            run(72.0, 730.0, 11.0, "1 Introduction ........................................ 1"),
            run(72.0, 715.0, 11.0, "2 Market overview ..................................... 2"),
            run(72.0, 700.0, 11.0, "2.1 Regional demand"),
            run(500.0, 700.0, 11.0, "3"),
            run(72.0, 685.0, 11.0, "3 Outlook ............................................. 4"),
        ],
    ];
    for (printed, heading) in
        [(1, "1 Introduction"), (2, "2 Market overview"), (3, "2.1 Regional demand"), (4, "3 Outlook")]
    {
        pages.push(vec![
            run(72.0, 760.0, 14.0, heading),
            run(72.0, 730.0, 10.0, "Body text of this section, written in plain sentences."),
            run(297.0, 40.0, 9.0, &printed.to_string()),
        ]);
    }
    let doc = parse_pdf_bytes("report.pdf", &save(build_pdf(&pages))).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        toc(&doc),
        [
            (1, "1 Introduction", 3, 3),
            (1, "2 Market overview", 4, 5),
            (2, "2.1 Regional demand", 5, 5),
            (1, "3 Outlook", 6, 6),
        ]
    );
    assert!(doc.toc.iter().all(|t| t.source == TocSource::ContentsPage));
    assert!(doc.diagnostics.iter().any(|d| d.message.contains("contents page (page 2)")));
}

// ---------------------------------------------------------------- tables

#[test]
fn aligned_columns_set_has_tables_prose_does_not() {
    let mut rows = vec![run(72.0, 760.0, 14.0, "Price list")];
    for (i, (item, qty, price)) in
        [("Item", "Qty", "Price"), ("Audit", "2", "1,200.00"), ("Training", "1", "800.00"), ("Support", "12", "95.50")]
            .into_iter()
            .enumerate()
    {
        let y = 720.0 - 16.0 * i as f32;
        rows.push(run(72.0, y, 10.0, item));
        rows.push(run(250.0, y, 10.0, qty));
        rows.push(run(400.0, y, 10.0, price));
    }
    let doc = parse_pdf_bytes("prices.pdf", &save(build_pdf(&[rows]))).unwrap_or_else(|e| panic!("{e}"));
    assert!(texts(&doc).contains(&"1,200.00"), "cells are separate lines: {:?}", texts(&doc));
    assert!(doc.profile.has_tables);
    assert!(doc.diagnostics.iter().any(|d| d.message.contains("tables (aligned columns) detected on pages 1")));

    let doc = parse_pdf_bytes("prose.pdf", &save(prose_pdf())).unwrap_or_else(|e| panic!("{e}"));
    assert!(!doc.profile.has_tables);
    // Two columns of prose side by side are not a table.
    let two_columns: Vec<_> = (0..8)
        .flat_map(|i| {
            let y = 760.0 - 12.0 * i as f32;
            [
                run(72.0, y, 10.0, "Left column prose continues with more words"),
                run(340.0, y, 10.0, "Right column prose continues with other words"),
            ]
        })
        .collect();
    let doc = parse_pdf_bytes("columns.pdf", &save(build_pdf(&[two_columns]))).unwrap_or_else(|e| panic!("{e}"));
    assert!(!doc.profile.has_tables);
}

#[test]
fn markdown_tables_set_has_tables() {
    let md = scratch_file("t.md", b"# Prices\n\n| Item | Price |\n|---|---:|\n| Audit | 1,200 |\n");
    assert!(parse_file(&md).expect("md").profile.has_tables);
    let plain = scratch_file("p.md", b"# Notes\n\nJust prose.\n");
    assert!(!parse_file(&plain).expect("md").profile.has_tables);
}
