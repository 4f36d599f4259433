//! Byte-level repairs lopdf does not do itself: a cross-reference table rebuilt from the
//! `N G obj` markers, and an empty file identifier for encrypted files that lack one.
//!
//! Both work the same way: the original bytes are kept and a new cross-reference section and
//! trailer are appended (as an incremental update would), so lopdf reads the file through the
//! new table. Offsets are counted from the `%PDF-` header, as lopdf counts them.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::LazyLock;

use regex::bytes::Regex;

/// Object numbers above this are ignored (guards hostile files).
const MAX_OBJECT_NUMBER: u32 = 8_000_000;
/// How far after an object marker a `/Type /Catalog` is looked for.
const CATALOG_WINDOW: usize = 4096;

static OBJ_MARKER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[\x00\t\n\x0C\r ])(\d{1,10})[\x00\t\n\x0C\r ]+(\d{1,5})[\x00\t\n\x0C\r ]+obj\b")
        .expect("static regex")
});
static ROOT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"/Root\s*(\d{1,10})\s+(\d{1,5})\s+R").expect("static regex"));
static INFO: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"/Info\s*(\d{1,10})\s+(\d{1,5})\s+R").expect("static regex"));
static ENCRYPT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"/Encrypt\s*(\d{1,10})\s+(\d{1,5})\s+R").expect("static regex"));
static FILE_ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"/ID\s*\[\s*<[0-9A-Fa-f\s]*>\s*<[0-9A-Fa-f\s]*>\s*\]").expect("static regex"));
static CATALOG: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"/Type\s*/Catalog\b").expect("static regex"));
static XREF_W: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"/W\s*\[\s*(\d{1,20})\s+(\d{1,20})\s+(\d{1,20})\s*\]").expect("static regex"));
static XREF_TYPE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"/Type\s*/XRef\b").expect("static regex"));
/// Cross-reference stream field widths above this are damage (8 bytes hold
/// any offset): lopdf allocates a buffer of each width before reading, and a
/// width of 10^11 aborts the process on the failed allocation.
const MAX_XREF_FIELD_WIDTH: u64 = 8;
/// How far around a `/W` array a `/Type /XRef` is looked for (CID fonts have
/// `/W` arrays too, with large numbers that are CIDs).
const XREF_DICT_WINDOW: usize = 512;
static STARTXREF: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"startxref\s+(\d{1,12})").expect("static regex"));

/// A file with a rebuilt cross-reference table.
#[derive(Debug)]
pub(crate) struct Rebuilt {
    /// The original bytes plus the new table and trailer.
    pub(crate) bytes: Vec<u8>,
    /// How many objects the new table lists.
    pub(crate) n_objects: usize,
}

/// Why the cross-reference streams of `bytes` must not reach lopdf's
/// reader (a field width no offset needs), or `None`. Such a file is read
/// through a rebuilt table instead.
pub(crate) fn oversized_xref_stream(bytes: &[u8]) -> Option<String> {
    for caps in XREF_W.captures_iter(bytes) {
        let whole = caps.get(0)?;
        let widths: Vec<u64> =
            (1..=3).filter_map(|i| caps.get(i)).map(|g| parse_num::<u64>(g.as_bytes()).unwrap_or(u64::MAX)).collect();
        if widths.iter().all(|&w| w <= MAX_XREF_FIELD_WIDTH) {
            continue;
        }
        let from = whole.start().saturating_sub(XREF_DICT_WINDOW);
        let to = (whole.end() + XREF_DICT_WINDOW).min(bytes.len());
        if XREF_TYPE.is_match(&bytes[from..to]) {
            return Some(format!(
                "cross-reference stream with field widths {widths:?} (at most {MAX_XREF_FIELD_WIDTH} bytes make sense)"
            ));
        }
    }
    None
}

/// Rebuilds the cross-reference table from the object markers; `None` when no object or no
/// catalog can be found (nothing to rebuild from).
pub(crate) fn rebuild_xref(bytes: &[u8]) -> Option<Rebuilt> {
    let base = header_offset(bytes)?;
    let body = &bytes[base..];
    // Later definitions win, as in an incremental update.
    let mut objects: BTreeMap<u32, (u16, usize)> = BTreeMap::new();
    for caps in OBJ_MARKER.captures_iter(body) {
        let (Some(num), Some(generation)) = (caps.get(1), caps.get(2)) else { continue };
        let (Some(n), Some(g)) = (parse_num::<u32>(num.as_bytes()), parse_num::<u16>(generation.as_bytes())) else {
            continue;
        };
        if n == 0 || n > MAX_OBJECT_NUMBER {
            continue;
        }
        objects.insert(n, (g, num.start()));
    }
    if objects.is_empty() {
        return None;
    }
    let root = last_reference(&ROOT, body).filter(|(n, _)| objects.contains_key(n)).or_else(|| {
        // No usable trailer: the last object that declares itself the catalog.
        objects
            .iter()
            .filter(|(_, (_, offset))| {
                let end = (*offset + CATALOG_WINDOW).min(body.len());
                let window = &body[*offset..end];
                let window = window.windows(6).position(|w| w == b"endobj").map_or(window, |p| &window[..p]);
                CATALOG.is_match(window)
            })
            .map(|(&n, &(g, _))| (n, g))
            .next_back()
    })?;
    let mut trailer = format!("/Root {} {} R", root.0, root.1);
    for (key, regex) in [("Info", &*INFO), ("Encrypt", &*ENCRYPT)] {
        if let Some((n, g)) = last_reference(regex, body).filter(|(n, _)| objects.contains_key(n)) {
            let _ = write!(trailer, " /{key} {n} {g} R");
        }
    }
    if let Some(id) = FILE_ID.find_iter(body).last() {
        trailer.push(' ');
        trailer.push_str(&String::from_utf8_lossy(id.as_bytes()));
    }
    let n_objects = objects.len();
    let entries: Vec<(u32, u16, usize)> = objects.into_iter().map(|(n, (g, offset))| (n, g, offset)).collect();
    Some(Rebuilt { bytes: append_section(bytes, base, &entries, &trailer, None), n_objects })
}

/// For an encrypted file whose trailer has no `/ID`: the bytes with an appended trailer that
/// repeats `/Root`, `/Encrypt` and `/Info` and adds an empty identifier. `None` when the file
/// is not encrypted or already has an identifier.
pub(crate) fn with_empty_file_id(bytes: &[u8]) -> Option<Vec<u8>> {
    let base = header_offset(bytes)?;
    let body = &bytes[base..];
    if FILE_ID.is_match(body) || memchr_find(body, b"/ID").is_some() {
        return None;
    }
    let encrypt = last_reference(&ENCRYPT, body)?;
    let root = last_reference(&ROOT, body)?;
    let prev: usize = STARTXREF.captures_iter(body).last().and_then(|c| parse_num(c.get(1)?.as_bytes()))?;
    let mut trailer = format!("/Root {} {} R /Encrypt {} {} R", root.0, root.1, encrypt.0, encrypt.1);
    if let Some((n, g)) = last_reference(&INFO, body) {
        let _ = write!(trailer, " /Info {n} {g} R");
    }
    trailer.push_str(" /ID [<> <>]");
    Some(append_section(bytes, base, &[], &trailer, Some(prev)))
}

/// For a file whose trailer holds its `/Encrypt` dictionary directly (lopdf authenticates only
/// one given by reference): the bytes with an incremental update that writes `encrypt` as a new
/// object and a trailer repeating `trailer` (already serialised entries, without `/Encrypt`,
/// `/Size` and `/Prev`) plus `/Encrypt N 0 R`. `None` without a `startxref` to chain to.
pub(crate) fn with_encrypt_object(bytes: &[u8], encrypt: &str, trailer: &str, size: u32) -> Option<Vec<u8>> {
    let base = header_offset(bytes)?;
    let body = &bytes[base..];
    let prev: usize = STARTXREF.captures_iter(body).last().and_then(|c| parse_num(c.get(1)?.as_bytes()))?;
    let number = size.max(max_marker(body) + 1);
    let mut out = bytes.to_vec();
    if !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    let offset = out.len() - base;
    out.extend_from_slice(format!("{number} 0 obj\n{encrypt}\nendobj\n").as_bytes());
    let trailer = format!("{trailer} /Encrypt {number} 0 R");
    Some(append_section(&out, base, &[(number, 0, offset)], &trailer, Some(prev)))
}

/// Appends `xref` (entry 0 plus `entries` as `(number, generation, offset)`, ascending) and a
/// trailer with `trailer_entries` (and `/Prev`), then `startxref` and `%%EOF`.
fn append_section(
    bytes: &[u8],
    base: usize,
    entries: &[(u32, u16, usize)],
    trailer_entries: &str,
    prev: Option<usize>,
) -> Vec<u8> {
    let mut out = bytes.to_vec();
    if !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    let xref_at = out.len() - base;
    let mut table = String::from("xref\n0 1\n0000000000 65535 f\r\n");
    // Contiguous runs of object numbers become subsections.
    let mut i = 0;
    while i < entries.len() {
        let mut j = i + 1;
        while j < entries.len() && entries[j].0 == entries[j - 1].0 + 1 {
            j += 1;
        }
        let _ = writeln!(table, "{} {}", entries[i].0, j - i);
        for &(_, g, offset) in &entries[i..j] {
            let _ = write!(table, "{offset:010} {g:05} n\r\n");
        }
        i = j;
    }
    let size = entries.last().map_or(1, |e| e.0 + 1);
    let size = match prev {
        // An update keeps the old numbering: take the largest marker seen.
        Some(_) => size.max(max_marker(&bytes[base..]) + 1),
        None => size,
    };
    let _ = write!(table, "trailer\n<< /Size {size} {trailer_entries}");
    if let Some(prev) = prev {
        let _ = write!(table, " /Prev {prev}");
    }
    let _ = write!(table, " >>\nstartxref\n{xref_at}\n%%EOF\n");
    out.extend_from_slice(table.as_bytes());
    out
}

fn max_marker(body: &[u8]) -> u32 {
    OBJ_MARKER
        .captures_iter(body)
        .filter_map(|c| parse_num::<u32>(c.get(1)?.as_bytes()))
        .filter(|&n| n <= MAX_OBJECT_NUMBER)
        .max()
        .unwrap_or(0)
}

fn header_offset(bytes: &[u8]) -> Option<usize> {
    bytes.windows(5).position(|w| w == b"%PDF-")
}

fn memchr_find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn last_reference(regex: &Regex, body: &[u8]) -> Option<(u32, u16)> {
    let caps = regex.captures_iter(body).last()?;
    Some((parse_num(caps.get(1)?.as_bytes())?, parse_num(caps.get(2)?.as_bytes())?))
}

fn parse_num<T: std::str::FromStr>(digits: &[u8]) -> Option<T> {
    std::str::from_utf8(digits).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_xref_stream_with_an_absurd_field_width_is_caught_and_cid_widths_are_not() {
        let damaged = b"%PDF-1.5\n9 0 obj\n<< /Type /XRef /Size 10 /W [1 99999999999 2] /Length 30 >>\nstream\n";
        let reason = oversized_xref_stream(damaged).unwrap();
        assert!(reason.contains("99999999999"), "{reason}");
        let sane = b"%PDF-1.5\n9 0 obj\n<< /Type /XRef /Size 10 /W [1 4 2] /Length 30 >>\nstream\n";
        assert_eq!(oversized_xref_stream(sane), None);
        // A CID font's widths: CIDs 1 to 99999 are 500 units wide.
        let font = b"%PDF-1.5\n5 0 obj\n<< /Type /Font /Subtype /CIDFontType2 /W [1 99999 500] >>\nendobj\n";
        assert_eq!(oversized_xref_stream(font), None);
    }

    const BODY: &str = "%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n\
        2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n5 0 obj\n(x)\nendobj\n";

    #[test]
    fn rebuilds_a_table_from_markers_and_finds_the_catalog() {
        let rebuilt = rebuild_xref(BODY.as_bytes()).expect("rebuilt");
        assert_eq!(rebuilt.n_objects, 3);
        let text = String::from_utf8_lossy(&rebuilt.bytes);
        let tail = &text[BODY.len()..];
        assert!(tail.contains("1 2\n0000000009 00000 n\r\n"), "{tail}");
        assert!(tail.contains("5 1\n"), "{tail}");
        assert!(tail.contains("/Size 6 /Root 1 0 R"), "{tail}");
        let xref_at = BODY.len();
        assert!(tail.ends_with(&format!("startxref\n{xref_at}\n%%EOF\n")), "{tail}");
        assert!(rebuild_xref(b"%PDF-1.4\nno objects at all").is_none());
        assert!(rebuild_xref(b"%PDF-1.4\n3 0 obj\n(no catalog)\nendobj\n").is_none());
    }

    #[test]
    fn offsets_count_from_the_header() {
        let mut junk = b"JUNK".to_vec();
        junk.extend_from_slice(BODY.as_bytes());
        let rebuilt = rebuild_xref(&junk).expect("rebuilt");
        let text = String::from_utf8_lossy(&rebuilt.bytes);
        assert!(text.contains("1 2\n0000000009 00000 n"), "{text}");
        assert!(text.ends_with(&format!("startxref\n{}\n%%EOF\n", BODY.len())));
    }

    #[test]
    fn empty_file_id_only_for_encrypted_files_without_one() {
        let encrypted = format!("{BODY}trailer\n<< /Root 1 0 R /Encrypt 5 0 R >>\nstartxref\n123\n%%EOF\n");
        let patched = with_empty_file_id(encrypted.as_bytes()).expect("patched");
        let tail = String::from_utf8_lossy(&patched[encrypted.len()..]).into_owned();
        assert!(tail.contains("/Root 1 0 R /Encrypt 5 0 R /ID [<> <>] /Prev 123"), "{tail}");
        assert!(with_empty_file_id(BODY.as_bytes()).is_none(), "not encrypted");
        let with_id = encrypted.replace(">>\nstartxref", "/ID [<AB> <AB>] >>\nstartxref");
        assert!(with_empty_file_id(with_id.as_bytes()).is_none());
    }
}
