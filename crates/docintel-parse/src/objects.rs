//! Small, panic-free helpers over lopdf objects.

use std::collections::{HashMap, HashSet};

use pdf_extract::{ContentError, DecodedContent, Dictionary, Document, Object, ObjectId, Stream};

/// Default page size (US Letter) when no MediaBox can be found.
pub(crate) const DEFAULT_PAGE_SIZE: (f32, f32) = (612.0, 792.0);

/// Maximum depth when walking `/Parent` chains and trees.
const MAX_INHERIT_DEPTH: usize = 64;

/// Follows references (bounded by lopdf's own limit); `None` if dangling.
pub(crate) fn deref<'a>(doc: &'a Document, obj: &'a Object) -> Option<&'a Object> {
    doc.dereference(obj).ok().map(|(_, o)| o)
}

/// The dictionary behind `obj` (directly or through references).
pub(crate) fn as_dict<'a>(doc: &'a Document, obj: &'a Object) -> Option<&'a Dictionary> {
    match deref(doc, obj)? {
        Object::Dictionary(d) => Some(d),
        Object::Stream(s) => Some(&s.dict),
        _ => None,
    }
}

/// A number (integer or real) behind `obj`.
pub(crate) fn as_number(doc: &Document, obj: &Object) -> Option<f64> {
    match deref(doc, obj)? {
        Object::Integer(i) => Some(*i as f64),
        Object::Real(r) => Some(f64::from(*r)),
        _ => None,
    }
}

/// Page width and height from the MediaBox, inherited from the page tree
/// parents when absent; [`DEFAULT_PAGE_SIZE`] when nothing usable is found.
pub(crate) fn page_size(doc: &Document, page_id: ObjectId) -> (f32, f32) {
    let mut dict = doc.get_dictionary(page_id).ok();
    let mut depth = 0;
    while let Some(d) = dict {
        if let Some(size) = d.get(b"MediaBox").ok().and_then(|mb| media_box_size(doc, mb)) {
            return size;
        }
        depth += 1;
        if depth > MAX_INHERIT_DEPTH {
            break;
        }
        dict = d.get(b"Parent").ok().and_then(|p| as_dict(doc, p));
    }
    DEFAULT_PAGE_SIZE
}

/// The visible area of a page in default user space: the CropBox (default:
/// the MediaBox) clipped to the MediaBox, both inherited through `/Parent`,
/// as `[x0, y0, x1, y1]` with `x0 <= x1`, `y0 <= y1`. `None` when no usable
/// MediaBox is found (then nothing is cropped).
pub(crate) fn visible_box(doc: &Document, page_id: ObjectId) -> Option<[f32; 4]> {
    let media = inherited_box(doc, page_id, b"MediaBox")?;
    let Some(crop) = inherited_box(doc, page_id, b"CropBox") else { return Some(media) };
    let b = [media[0].max(crop[0]), media[1].max(crop[1]), media[2].min(crop[2]), media[3].min(crop[3])];
    // A crop box that misses the media box is ignored, as viewers do.
    (b[0] < b[2] && b[1] < b[3]).then_some(b).or(Some(media))
}

/// The `/Resources` dictionaries of a page and of its page tree ancestors, nearest first
/// (at most [`MAX_INHERIT_DEPTH`] levels up; a dictionary met twice is listed once).
pub(crate) fn page_resources(doc: &Document, page_id: ObjectId) -> Vec<&Dictionary> {
    let mut out: Vec<&Dictionary> = Vec::new();
    let mut dict = doc.get_dictionary(page_id).ok();
    let mut depth = 0;
    while let Some(d) = dict {
        if let Some(r) = d.get(b"Resources").ok().and_then(|r| as_dict(doc, r))
            && !out.iter().any(|seen| std::ptr::eq(*seen, r))
        {
            out.push(r);
        }
        depth += 1;
        if depth > MAX_INHERIT_DEPTH {
            break;
        }
        dict = d.get(b"Parent").ok().and_then(|p| as_dict(doc, p));
    }
    out
}

/// A rectangle attribute of a page (`/MediaBox`, `/CropBox`), inherited.
fn inherited_box(doc: &Document, page_id: ObjectId, key: &[u8]) -> Option<[f32; 4]> {
    let mut dict = doc.get_dictionary(page_id).ok();
    let mut depth = 0;
    while let Some(d) = dict {
        if let Some(b) = d.get(key).ok().and_then(|o| rect(doc, o)) {
            return Some(b);
        }
        depth += 1;
        if depth > MAX_INHERIT_DEPTH {
            break;
        }
        dict = d.get(b"Parent").ok().and_then(|p| as_dict(doc, p));
    }
    None
}

/// A normalised `[x0 y0 x1 y1]` rectangle with a positive area.
fn rect(doc: &Document, obj: &Object) -> Option<[f32; 4]> {
    let Object::Array(items) = deref(doc, obj)? else { return None };
    if items.len() != 4 {
        return None;
    }
    let n: Vec<f64> = items.iter().map(|o| as_number(doc, o)).collect::<Option<_>>()?;
    let b = [n[0].min(n[2]) as f32, n[1].min(n[3]) as f32, n[0].max(n[2]) as f32, n[1].max(n[3]) as f32];
    (b.iter().all(|v| v.is_finite()) && b[0] < b[2] && b[1] < b[3]).then_some(b)
}

fn media_box_size(doc: &Document, obj: &Object) -> Option<(f32, f32)> {
    let Object::Array(items) = deref(doc, obj)? else { return None };
    if items.len() != 4 {
        return None;
    }
    let n: Vec<f64> = items.iter().map(|o| as_number(doc, o)).collect::<Option<_>>()?;
    let (w, h) = ((n[2] - n[0]).abs() as f32, (n[3] - n[1]).abs() as f32);
    (w.is_finite() && h.is_finite() && w > 0.0 && h > 0.0).then_some((w, h))
}

/// A page's content streams, concatenated and decoded once for every walker
/// of the page (graphics, clips, text); the outer `Err` is a page whose
/// content could not be read at all.
pub(crate) type PageContent = Result<DecodedContent, ContentError>;

/// Reads and decodes a page's content streams (see [`PageContent`]).
pub(crate) fn page_content(doc: &Document, page_id: ObjectId) -> PageContent {
    doc.get_page_content(page_id).map(|bytes| pdf_extract::decode_content(&bytes)).map_err(|e| ContentError::new(&e))
}

/// Pre-digests a document for the page walks, which would otherwise re-read
/// streams on every page: once per document instead,
/// - image XObjects are left as stored (their raw bytes are what the page
///   graphics hash; the text walk does not enter images),
/// - embedded TrueType programs (`/FontFile2`) are emptied (pdf-extract
///   inflates and then ignores them),
/// - embedded Type 1 programs (`/FontFile`) keep only their clear-text part
///   (`/Length1` bytes, or up to `eexec`): the built-in encoding pdf-extract
///   parses lives there, the encrypted glyph programs are never read,
/// - every other stream (content streams, forms, `/ToUnicode` CMaps, CFF
///   programs) is inflated once, in place.
///
/// A stream that cannot be inflated is left as it is.
pub(crate) fn prepare_for_text(doc: &mut Document) {
    let mut truetype: HashSet<ObjectId> = HashSet::new();
    let mut type1: HashSet<ObjectId> = HashSet::new();
    for obj in doc.objects.values() {
        let Object::Dictionary(d) = obj else { continue };
        if d.get(b"Type").ok().and_then(|t| t.as_name().ok()) != Some(b"FontDescriptor".as_slice()) {
            continue;
        }
        if let Ok(Object::Reference(id)) = d.get(b"FontFile2") {
            truetype.insert(*id);
        }
        if let Ok(Object::Reference(id)) = d.get(b"FontFile") {
            type1.insert(*id);
        }
    }
    let is_image =
        |stream: &Stream| stream.dict.get(b"Subtype").ok().and_then(|t| t.as_name().ok()) == Some(b"Image".as_slice());
    // Inflate on the worker threads (what `Stream::decompress` does, in two
    // steps: the bytes in parallel, then the dictionary updates here).
    let to_inflate: Vec<ObjectId> = doc
        .objects
        .iter()
        .filter(|(id, obj)| {
            matches!(obj, Object::Stream(s) if !is_image(s) && !truetype.contains(*id) && s.is_compressed())
        })
        .map(|(id, _)| *id)
        .collect();
    let inflated = crate::par_map(&to_inflate, |_, id| match doc.objects.get(id) {
        Some(Object::Stream(s)) => s.decompressed_content().ok(),
        _ => None,
    });
    let mut inflated: HashMap<ObjectId, Option<Vec<u8>>> =
        to_inflate.into_iter().zip(inflated).map(|(id, data)| (id, data.flatten())).collect();
    for (id, obj) in doc.objects.iter_mut() {
        let Object::Stream(stream) = obj else { continue };
        if is_image(stream) {
            continue;
        }
        if truetype.contains(id) {
            stream.set_plain_content(Vec::new());
            continue;
        }
        if let Some(data) = inflated.remove(id) {
            // A stream that cannot be inflated is left as it is.
            let Some(data) = data else { continue };
            stream.dict.remove(b"DecodeParms");
            stream.dict.remove(b"Filter");
            stream.set_content(data);
        }
        if type1.contains(id) {
            let clear = stream
                .dict
                .get(b"Length1")
                .ok()
                .and_then(|l| l.as_i64().ok())
                .and_then(|l| usize::try_from(l).ok())
                .filter(|&l| {
                    l > 0 && l <= stream.content.len() && stream.content[..l].windows(5).any(|w| w == b"eexec")
                })
                .or_else(|| stream.content.windows(5).position(|w| w == b"eexec").map(|p| p + 5));
            if let Some(len) = clear {
                stream.content.truncate(len);
                let n = stream.content.len() as i64;
                stream.dict.set("Length", n);
            }
        }
    }
}

/// Writes `obj` in PDF syntax (strings as hex, names escaped); a stream writes its dictionary
/// only (callers serialise dictionaries: an `/Encrypt` dictionary, trailer entries).
pub(crate) fn write_object(obj: &Object, out: &mut String) {
    use std::fmt::Write as _;
    match obj {
        Object::Null => out.push_str("null"),
        Object::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        Object::Integer(i) => {
            let _ = write!(out, "{i}");
        }
        Object::Real(r) => {
            let _ = write!(out, "{}", if r.is_finite() { *r } else { 0.0 });
        }
        Object::Name(name) => write_name(name, out),
        Object::String(bytes, _) => {
            out.push('<');
            for b in bytes {
                let _ = write!(out, "{b:02X}");
            }
            out.push('>');
        }
        Object::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_object(item, out);
            }
            out.push(']');
        }
        Object::Dictionary(dict) => write_dictionary(dict, out),
        Object::Stream(stream) => write_dictionary(&stream.dict, out),
        Object::Reference((n, g)) => {
            let _ = write!(out, "{n} {g} R");
        }
    }
}

fn write_dictionary(dict: &Dictionary, out: &mut String) {
    out.push_str("<<");
    for (key, value) in dict.iter() {
        write_name(key, out);
        out.push(' ');
        write_object(value, out);
        out.push(' ');
    }
    out.push_str(">>");
}

fn write_name(name: &[u8], out: &mut String) {
    use std::fmt::Write as _;
    out.push('/');
    for &b in name {
        if b.is_ascii_alphanumeric() || b"-_.+*:,;".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "#{b:02X}");
        }
    }
}

/// Decodes a PDF text string: UTF-16BE with BOM, UTF-8 with BOM, else
/// PDFDocEncoding.
pub(crate) fn decode_text_string(bytes: &[u8]) -> String {
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        let units: Vec<u16> = rest.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
        return String::from_utf16_lossy(&units);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return String::from_utf8_lossy(rest).into_owned();
    }
    bytes.iter().map(|&b| pdf_doc_char(b)).collect()
}

/// PDFDocEncoding: Latin-1 except for 0x18–0x1F and 0x80–0x9F.
fn pdf_doc_char(b: u8) -> char {
    const HIGH: [char; 32] = [
        '\u{2022}', '\u{2020}', '\u{2021}', '\u{2026}', '\u{2014}', '\u{2013}', '\u{0192}', '\u{2044}', '\u{2039}',
        '\u{203A}', '\u{2212}', '\u{2030}', '\u{201E}', '\u{201C}', '\u{201D}', '\u{2018}', '\u{2019}', '\u{201A}',
        '\u{2122}', '\u{FB01}', '\u{FB02}', '\u{0141}', '\u{0152}', '\u{0160}', '\u{0178}', '\u{017D}', '\u{0131}',
        '\u{0142}', '\u{0153}', '\u{0161}', '\u{017E}', '\u{FFFD}',
    ];
    const LOW: [char; 8] =
        ['\u{02D8}', '\u{02C7}', '\u{02C6}', '\u{02D9}', '\u{02DD}', '\u{02DB}', '\u{02DA}', '\u{02DC}'];
    match b {
        0x18..=0x1F => LOW[usize::from(b - 0x18)],
        0x80..=0x9F => HIGH[usize::from(b - 0x80)],
        0xA0 => '\u{20AC}',
        _ => char::from(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_text_strings() {
        assert_eq!(decode_text_string(b"Chapter 1"), "Chapter 1");
        assert_eq!(decode_text_string(&[0xFE, 0xFF, 0x00, 0x41, 0x00, 0xE9]), "Aé");
        assert_eq!(decode_text_string(&[0x43, 0x61, 0x66, 0xE9]), "Café");
        assert_eq!(decode_text_string(&[0x93]), "\u{FB01}");
        assert_eq!(decode_text_string(&[0xEF, 0xBB, 0xBF, 0xC3, 0xA9]), "é");
    }
}
