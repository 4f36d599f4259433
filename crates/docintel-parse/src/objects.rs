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

/// Content streams lopdf read empty although the file holds bytes between their `stream` and
/// `endstream` keywords (a `/Length` missing or wrong: lopdf then keeps nothing): their data
/// is taken from the file up to `endstream`, as viewers do. Only `/Contents` streams of
/// `pages` of an unencrypted file; returns the repaired objects.
pub(crate) fn repair_content_lengths(doc: &mut Document, bytes: &[u8], pages: &[ObjectId]) -> Vec<ObjectId> {
    if doc.was_encrypted() || doc.trailer.get(b"Encrypt").is_ok() {
        return Vec::new();
    }
    let Some(base) = bytes.windows(5).position(|w| w == b"%PDF-") else { return Vec::new() };
    let mut ids: Vec<ObjectId> = Vec::new();
    for &page in pages {
        let Ok(dict) = doc.get_dictionary(page) else { continue };
        match dict.get(b"Contents") {
            Ok(Object::Reference(id)) => ids.push(*id),
            Ok(Object::Array(items)) => ids.extend(items.iter().filter_map(|o| o.as_reference().ok())),
            _ => {}
        }
    }
    ids.sort_unstable();
    ids.dedup();
    let mut repaired = Vec::new();
    for id in ids {
        let empty = matches!(doc.objects.get(&id), Some(Object::Stream(s)) if s.content.is_empty());
        if !empty {
            continue;
        }
        let Some(pdf_extract::xref::XrefEntry::Normal { offset, .. }) = doc.reference_table.get(id.0).cloned() else {
            continue;
        };
        let Some(at) = usize::try_from(offset).ok().and_then(|o| o.checked_add(base)).filter(|&o| o < bytes.len())
        else {
            continue;
        };
        let window = &bytes[at..bytes.len().min(at + (64 << 20))];
        let Some(data) = raw_stream_data(window) else { continue };
        let data = data.trim_ascii_end().to_vec();
        if data.is_empty() {
            continue;
        }
        if let Some(Object::Stream(stream)) = doc.objects.get_mut(&id) {
            stream.set_content(data);
            repaired.push(id);
        }
    }
    repaired
}

/// The page's `/Contents` streams that give no content: missing, not a stream (lopdf drops a
/// stream whose `/Length` is missing or wrong), or still compressed after
/// [`prepare_for_text`] (its data does not inflate). Their text is lost.
pub(crate) fn unreadable_contents(doc: &Document, page_id: ObjectId) -> Vec<ObjectId> {
    let Ok(page) = doc.get_dictionary(page_id) else { return Vec::new() };
    let refs: Vec<ObjectId> = match page.get(b"Contents") {
        Ok(Object::Reference(id)) => match doc.objects.get(id) {
            Some(Object::Array(items)) => items.iter().filter_map(|o| o.as_reference().ok()).collect(),
            _ => vec![*id],
        },
        Ok(Object::Array(items)) => items.iter().filter_map(|o| o.as_reference().ok()).collect(),
        _ => Vec::new(),
    };
    refs.into_iter()
        .filter(|id| match doc.objects.get(id) {
            Some(Object::Stream(s)) => s.is_compressed(),
            _ => true,
        })
        .collect()
}

/// How many of the page's annotations (form fields, free text) draw text in their normal
/// appearance stream: the page text walk does not read appearance streams.
pub(crate) fn annotations_with_text(doc: &Document, page_id: ObjectId) -> usize {
    let Some(annots) = doc.get_dictionary(page_id).ok().and_then(|p| p.get(b"Annots").ok()).and_then(|a| deref(doc, a))
    else {
        return 0;
    };
    let Object::Array(annots) = annots else { return 0 };
    annots
        .iter()
        .take(10_000)
        .filter_map(|a| as_dict(doc, a))
        .filter(|a| {
            let normal = a.get(b"AP").ok().and_then(|ap| as_dict(doc, ap)).and_then(|ap| ap.get(b"N").ok());
            let stream = match normal.and_then(|n| deref(doc, n)) {
                Some(Object::Stream(s)) => Some(s),
                // Appearance states (a check box): one stream per state.
                Some(Object::Dictionary(states)) => states.iter().find_map(|(_, v)| match deref(doc, v) {
                    Some(Object::Stream(s)) => Some(s),
                    _ => None,
                }),
                _ => None,
            };
            // A text field's value, shown by viewers even without an appearance stream.
            let value =
                matches!(a.get(b"V").ok().and_then(|v| deref(doc, v)), Some(Object::String(v, _)) if !v.is_empty());
            value
                || stream.is_some_and(|s| {
                    let data = s.decompressed_content().unwrap_or_else(|_| s.content.clone());
                    data.windows(2).any(|w| w == b"Tj" || w == b"TJ") && data.windows(2).any(|w| w == b"BT")
                })
        })
        .count()
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
/// A stream that cannot be inflated is left as it is; one past a size limit is cut (see
/// [`inflate_within_limits`]), and the returned notes say which.
pub(crate) fn prepare_for_text(doc: &mut Document) -> Vec<String> {
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
    let (mut inflated, notes) = inflate_within_limits(doc, &to_inflate, Limits::STANDARD);
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
    notes
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

/// Most bytes one stream may decode to; past it the stream is cut (see [`inflate_within_limits`]).
pub(crate) const MAX_STREAM_BYTES: usize = 128 << 20;
/// Most decoded stream bytes per document; streams past it are emptied.
pub(crate) const MAX_DOCUMENT_STREAM_BYTES: usize = 512 << 20;
/// Deflate expands at most about 1032 to 1: a stream shorter than `MAX_STREAM_BYTES / this`
/// cannot pass the per-stream limit, and is not measured first.
const MAX_DEFLATE_RATIO: usize = 1100;
/// Worst-case decoded bytes inflated at once (one parallel batch).
const BATCH_BYTES: usize = 256 << 20;

/// How many decoded bytes one stream and one document may have.
#[derive(Debug, Clone, Copy)]
struct Limits {
    stream: usize,
    document: usize,
}

impl Limits {
    const STANDARD: Limits = Limits { stream: MAX_STREAM_BYTES, document: MAX_DOCUMENT_STREAM_BYTES };
}

/// What inflating one stream gave.
enum Inflated {
    /// Its decoded bytes (lopdf's decoding).
    Whole(Vec<u8>),
    /// Over [`MAX_STREAM_BYTES`]: what is kept of it (the first bytes of a plain Flate stream,
    /// else nothing).
    Cut(Vec<u8>),
    /// Not decodable: left as it is.
    Failed,
}

/// Decoded bytes of a Flate stream's data, counted without keeping them, up to `limit + 1`;
/// like lopdf, raw deflate after the 2-byte header when the zlib stream yields nothing.
fn flate_size(data: &[u8], limit: usize) -> usize {
    use std::io::Read as _;
    let count = |reader: &mut dyn std::io::Read| {
        let mut sink = reader.take(limit as u64 + 1);
        std::io::copy(&mut sink, &mut std::io::sink()).unwrap_or(0) as usize
    };
    let mut counted = 0usize;
    let mut zlib = flate2::read::ZlibDecoder::new(data);
    let mut buffer = vec![0u8; 64 << 10];
    loop {
        match zlib.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                counted += n;
                if counted > limit {
                    return counted;
                }
            }
            Err(_) => break,
        }
    }
    if counted == 0 && data.len() > 2 {
        return count(&mut flate2::read::DeflateDecoder::new(&data[2..]));
    }
    counted
}

/// The raw data of the stream whose object (or dictionary) `window` starts with: the bytes
/// after its own `stream` keyword (before its `endobj`) and end of line, up to the next
/// `endstream`.
fn raw_stream_data(window: &[u8]) -> Option<&[u8]> {
    use memchr::memmem::find;
    let end_obj = find(window, b"endobj").unwrap_or(window.len());
    let mut data_start = find(&window[..end_obj], b"stream")? + b"stream".len();
    if window.get(data_start) == Some(&b'\r') {
        data_start += 1;
    }
    if window.get(data_start) == Some(&b'\n') {
        data_start += 1;
    }
    let len = find(&window[data_start..], b"endstream")?;
    Some(&window[data_start..data_start + len])
}

/// An object stream (`/Type /ObjStm`) of the raw file whose Flate data decodes to more than
/// [`MAX_STREAM_BYTES`]: lopdf inflates object streams whole while it loads the file, before
/// any cap of ours applies, so such a file is refused first. Counted by a streaming inflate
/// that keeps nothing; only streams whose compressed size could pass the cap are counted.
/// Returns the offset of the stream's dictionary and its decoded size (at least the cap).
pub(crate) fn object_stream_bomb(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(at) = memchr::memmem::find(&bytes[from..], b"/ObjStm").map(|p| p + from) {
        from = at + b"/ObjStm".len();
        let Some(data) = raw_stream_data(&bytes[at..]) else { continue };
        if data.len().saturating_mul(MAX_DEFLATE_RATIO) <= MAX_STREAM_BYTES {
            continue;
        }
        let size = flate_size(data, MAX_STREAM_BYTES);
        if size > MAX_STREAM_BYTES {
            return Some((at, size));
        }
    }
    None
}

/// The first `limit` decoded bytes of a Flate stream's data.
fn flate_prefix(data: &[u8], limit: usize) -> Vec<u8> {
    use std::io::Read as _;
    let mut out = Vec::new();
    let _ = flate2::read::ZlibDecoder::new(data).take(limit as u64).read_to_end(&mut out);
    if out.is_empty() && data.len() > 2 {
        let _ = flate2::read::DeflateDecoder::new(&data[2..]).take(limit as u64).read_to_end(&mut out);
    }
    out
}

fn inflate_one(stream: &Stream, cap: usize) -> Inflated {
    let filters = stream.filters().unwrap_or_default();
    let first_is_flate = filters.first().is_some_and(|f| *f == b"FlateDecode");
    if first_is_flate && stream.content.len().saturating_mul(MAX_DEFLATE_RATIO) > cap {
        let size = flate_size(&stream.content, cap);
        if size > cap {
            let plain = filters.len() == 1 && stream.dict.get(b"DecodeParms").is_err();
            return Inflated::Cut(if plain { flate_prefix(&stream.content, cap) } else { Vec::new() });
        }
    }
    match stream.decompressed_content() {
        Ok(data) if data.len() > cap => Inflated::Cut(Vec::new()),
        // lopdf answers a stream that does not inflate at all with no bytes: that is a failure
        // (the stream stays as it is, and a content stream so is reported unreadable).
        Ok(data) if data.is_empty() && !stream.content.is_empty() && first_is_flate => Inflated::Failed,
        Ok(data) => Inflated::Whole(data),
        Err(_) => Inflated::Failed,
    }
}

/// Inflates the streams `ids` (in parallel, batch by batch) within [`MAX_STREAM_BYTES`] per
/// stream and [`MAX_DOCUMENT_STREAM_BYTES`] per document, counted in object order so the
/// outcome does not depend on thread timing. A stream over a limit keeps what fits (or
/// nothing) and its filters are removed, so nothing inflates it again later; each such stream
/// gets a note. `None` for a stream that could not be inflated.
fn inflate_within_limits(
    doc: &Document,
    ids: &[ObjectId],
    limits: Limits,
) -> (HashMap<ObjectId, Option<Vec<u8>>>, Vec<String>) {
    let mut out = HashMap::with_capacity(ids.len());
    let mut notes = Vec::new();
    let mut total = 0usize;
    let worst = |id: &ObjectId| match doc.objects.get(id) {
        Some(Object::Stream(s)) => s.content.len().saturating_mul(MAX_DEFLATE_RATIO).min(limits.stream),
        _ => 0,
    };
    let mut start = 0;
    while start < ids.len() {
        let mut end = start + 1;
        let mut budget = worst(&ids[start]);
        while end < ids.len() && budget.saturating_add(worst(&ids[end])) <= BATCH_BYTES {
            budget += worst(&ids[end]);
            end += 1;
        }
        let batch = &ids[start..end];
        let over_document = total >= limits.document;
        let results = crate::workers::par_map(batch, |_, id| match doc.objects.get(id) {
            Some(Object::Stream(s)) if !over_document => inflate_one(s, limits.stream),
            _ => Inflated::Failed,
        });
        for (&id, result) in batch.iter().zip(results) {
            let (n, g) = id;
            let data = match result {
                _ if over_document || total >= limits.document => {
                    notes.push(format!(
                        "stream {n} {g} R not decoded: the document's streams passed {} decoded",
                        mib(limits.document)
                    ));
                    Some(Vec::new())
                }
                Some(Inflated::Whole(data)) => Some(data),
                Some(Inflated::Cut(kept)) => {
                    notes.push(format!(
                        "stream {n} {g} R decodes to more than {}: {} (what follows is lost)",
                        mib(limits.stream),
                        if kept.is_empty() {
                            "dropped".to_owned()
                        } else {
                            format!("its first {} kept", mib(kept.len()))
                        }
                    ));
                    Some(kept)
                }
                Some(Inflated::Failed) | None => None,
            };
            if let Some(data) = &data {
                total = total.saturating_add(data.len());
            }
            out.insert(id, data);
        }
        start = end;
    }
    (out, notes)
}

/// A byte count in MiB, as messages show it.
fn mib(bytes: usize) -> String {
    format!("{} MiB", (bytes as f64 / f64::from(1 << 20)).round())
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

    fn flate_stream(data: &[u8]) -> Object {
        use std::io::Write as _;
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(data).unwrap();
        let mut dict = Dictionary::new();
        dict.set("Filter", Object::Name(b"FlateDecode".to_vec()));
        Object::Stream(Stream::new(dict, encoder.finish().unwrap()))
    }

    #[test]
    fn streams_past_the_limits_are_cut_in_object_order() {
        let mut doc = Document::with_version("1.7");
        let text = b"BT (kept) Tj ET ".repeat(4096);
        let small = doc.add_object(flate_stream(b"BT (small) Tj ET"));
        let mut bomb_data = text.clone();
        bomb_data.extend(std::iter::repeat_n(b' ', 3 << 20));
        let bomb = doc.add_object(flate_stream(&bomb_data));
        let (a, b, c) = (
            doc.add_object(flate_stream(&vec![b' '; 900 << 10])),
            doc.add_object(flate_stream(&vec![b' '; 900 << 10])),
            doc.add_object(flate_stream(&vec![b' '; 900 << 10])),
        );
        let ids = [small, bomb, a, b, c];
        let limits = Limits { stream: 1 << 20, document: 4 << 20 };
        let (out, notes) = inflate_within_limits(&doc, &ids, limits);
        assert_eq!(out[&small].as_deref(), Some(b"BT (small) Tj ET".as_slice()));
        // Cut at 1 MiB: the text at its start survives.
        let kept = out[&bomb].as_ref().unwrap();
        assert_eq!(kept.len(), 1 << 20);
        assert!(kept.starts_with(&text));
        // 1 MiB + 3 x 900 KiB stays under the document limit of 4 MiB.
        for id in [a, b, c] {
            assert_eq!(out[&id].as_ref().map(Vec::len), Some(900 << 10));
        }
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("decodes to more than 1 MiB: its first 1 MiB kept"), "{notes:?}");
        // A fourth 900 KiB passes it; the stream after is not decoded at all.
        let d = doc.add_object(flate_stream(&vec![b' '; 900 << 10]));
        let e = doc.add_object(flate_stream(b"BT (late) Tj ET"));
        let (out, notes) = inflate_within_limits(&doc, &[small, bomb, a, b, c, d, e], limits);
        assert_eq!(out[&d].as_ref().map(Vec::len), Some(900 << 10));
        assert_eq!(out[&e].as_deref(), Some(b"".as_slice()));
        assert!(notes.last().unwrap().contains("passed 4 MiB decoded"), "{notes:?}");
    }

    #[test]
    fn decodes_text_strings() {
        assert_eq!(decode_text_string(b"Chapter 1"), "Chapter 1");
        assert_eq!(decode_text_string(&[0xFE, 0xFF, 0x00, 0x41, 0x00, 0xE9]), "Aé");
        assert_eq!(decode_text_string(&[0x43, 0x61, 0x66, 0xE9]), "Café");
        assert_eq!(decode_text_string(&[0x93]), "\u{FB01}");
        assert_eq!(decode_text_string(&[0xEF, 0xBB, 0xBF, 0xC3, 0xA9]), "é");
    }
}
