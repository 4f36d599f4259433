//! Highlighting cited lines in a copy of the PDF.
//!
//! [`highlight_pdf`] reads a PDF with lopdf (the version `pdf-extract`
//! re-exports, so there is one lopdf in the build), adds one `/Highlight`
//! annotation per box on its page — `/Rect`, `/QuadPoints`, a yellow `/C`,
//! `/Contents` (the note, usually the cited quote) and an `/AP` appearance
//! stream that multiplies yellow over the text, so viewers that do not build
//! appearances themselves still show it — and writes the result to another
//! path (temporary file, then rename).
//!
//! Boxes are line bounding boxes from the line table: PDF points in default
//! user space, origin bottom-left, which is also the space annotations live
//! in. A box that does not lie within its page's media box (for example a
//! line from a page the parser had to mirror, whose coordinates are not page
//! coordinates) is skipped, never drawn somewhere wrong: the count returned
//! says how many were added, and the caller warns about the rest.

use std::path::Path;

use docintel_schema::BBox;
use pdf_extract::{Dictionary, Document, Object, ObjectId, Stream, StringFormat};

/// Why a highlighted copy could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HighlightError {
    /// The input PDF could not be read by lopdf.
    #[error("{path}: cannot read the PDF to highlight: {message}")]
    Read {
        /// The input path.
        path: String,
        /// lopdf's error.
        message: String,
    },
    /// The input is encrypted; a highlighted copy would need re-encryption.
    #[error("{path}: encrypted PDFs cannot be highlighted")]
    Encrypted {
        /// The input path.
        path: String,
    },
    /// A box names a page the PDF does not have.
    #[error("{path}: no page {page} to highlight (the PDF has {n_pages})")]
    NoSuchPage {
        /// The input path.
        path: String,
        /// The page asked for (1-based).
        page: u32,
        /// Pages in the PDF.
        n_pages: usize,
    },
    /// The output could not be written.
    #[error("{path}: cannot write the highlighted PDF: {message}")]
    Write {
        /// The output path.
        path: String,
        /// The cause.
        message: String,
    },
}

/// Highlight colour (RGB, 0-1): a marker yellow.
const COLOUR: [f32; 3] = [1.0, 0.9, 0.2];
/// Padding around a line box, in points, so the marker covers ascenders and
/// descenders.
const PAD: f32 = 1.0;
/// How far (points) a box may stick out of the media box and still count as
/// on the page.
const TOLERANCE: f32 = 2.0;

/// Writes a copy of `input` to `output` with one highlight annotation per
/// `(page, bbox, note)` box (page 1-based, bbox in PDF points, origin
/// bottom-left, note shown as the annotation's text). Returns the number of
/// annotations added; boxes outside their page's media box (or empty) are
/// skipped. `input` and `output` may be the same path.
pub fn highlight_pdf(input: &Path, output: &Path, boxes: &[(u32, BBox, String)]) -> Result<usize, HighlightError> {
    let in_name = input.display().to_string();
    let mut doc =
        Document::load(input).map_err(|e| HighlightError::Read { path: in_name.clone(), message: e.to_string() })?;
    if doc.is_encrypted() || doc.was_encrypted() {
        return Err(HighlightError::Encrypted { path: in_name });
    }
    let pages: std::collections::BTreeMap<u32, ObjectId> =
        crate::page_tree::walk(&doc).pages.into_iter().enumerate().map(|(i, id)| ((i + 1) as u32, id)).collect();
    let mut added = 0;
    for (page, bbox, note) in boxes {
        let Some(&page_id) = pages.get(page) else {
            return Err(HighlightError::NoSuchPage { path: in_name, page: *page, n_pages: pages.len() });
        };
        let Some(media) = media_box(&doc, page_id) else { continue };
        let Some(rect) = page_rect(bbox, media) else { continue };
        let annotation = annotation(&mut doc, page_id, rect, note);
        let annotation_id = doc.add_object(annotation);
        add_to_annots(&mut doc, page_id, annotation_id);
        added += 1;
    }
    let out_name = output.display().to_string();
    let write_error = |message: String| HighlightError::Write { path: out_name.clone(), message };
    let file_name = output.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = output.with_file_name(format!(".{file_name}.{}.tmp", std::process::id()));
    doc.save(&tmp).map_err(|e| write_error(e.to_string()))?;
    std::fs::rename(&tmp, output).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        write_error(e.to_string())
    })?;
    Ok(added)
}

/// The page's media box `[x0, y0, x1, y1]`, inherited from the page tree
/// when the page has none of its own.
fn media_box(doc: &Document, page_id: ObjectId) -> Option<[f32; 4]> {
    let mut id = page_id;
    for _ in 0..32 {
        let dict = doc.get_dictionary(id).ok()?;
        if let Ok(object) = dict.get(b"MediaBox") {
            let (_, object) = doc.dereference(object).ok()?;
            let numbers: Vec<f32> = object.as_array().ok()?.iter().filter_map(|o| o.as_float().ok()).collect();
            if let [a, b, c, d] = numbers[..] {
                return Some([a.min(c), b.min(d), a.max(c), b.max(d)]);
            }
            return None;
        }
        id = dict.get(b"Parent").and_then(Object::as_reference).ok()?;
    }
    None
}

/// The padded annotation rectangle, or `None` when the box is empty or not
/// on the page.
fn page_rect(bbox: &BBox, media: [f32; 4]) -> Option<[f32; 4]> {
    let finite = [bbox.x0, bbox.y0, bbox.x1, bbox.y1].iter().all(|v| v.is_finite());
    if !finite || bbox.x1 <= bbox.x0 || bbox.y1 <= bbox.y0 {
        return None;
    }
    let inside = bbox.x0 >= media[0] - TOLERANCE
        && bbox.y0 >= media[1] - TOLERANCE
        && bbox.x1 <= media[2] + TOLERANCE
        && bbox.y1 <= media[3] + TOLERANCE;
    inside.then(|| {
        [
            (bbox.x0 - PAD).max(media[0]),
            (bbox.y0 - PAD).max(media[1]),
            (bbox.x1 + PAD).min(media[2]),
            (bbox.y1 + PAD).min(media[3]),
        ]
    })
}

fn reals(values: &[f32]) -> Object {
    Object::Array(values.iter().map(|v| Object::Real(*v)).collect())
}

/// A PDF text string: literal when ASCII, else UTF-16BE with a byte-order mark.
fn text_string(text: &str) -> Object {
    if text.is_ascii() {
        Object::String(text.as_bytes().to_vec(), StringFormat::Literal)
    } else {
        let mut bytes = vec![0xFE, 0xFF];
        bytes.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
        Object::String(bytes, StringFormat::Hexadecimal)
    }
}

/// The annotation dictionary, with its appearance stream added to `doc`.
fn annotation(doc: &mut Document, page_id: ObjectId, rect: [f32; 4], note: &str) -> Dictionary {
    let [x0, y0, x1, y1] = rect;
    let mut state = Dictionary::new();
    state.set("Type", Object::Name(b"ExtGState".to_vec()));
    state.set("BM", Object::Name(b"Multiply".to_vec()));
    let mut states = Dictionary::new();
    states.set("GS0", Object::Dictionary(state));
    let mut resources = Dictionary::new();
    resources.set("ExtGState", Object::Dictionary(states));
    let mut form = Dictionary::new();
    form.set("Type", Object::Name(b"XObject".to_vec()));
    form.set("Subtype", Object::Name(b"Form".to_vec()));
    form.set("BBox", reals(&rect));
    form.set("Resources", Object::Dictionary(resources));
    let [r, g, b] = COLOUR;
    let content = format!("/GS0 gs {r} {g} {b} rg {x0} {y0} {} {} re f\n", x1 - x0, y1 - y0);
    let appearance = doc.add_object(Stream::new(form, content.into_bytes()));
    let mut ap = Dictionary::new();
    ap.set("N", Object::Reference(appearance));

    let mut annot = Dictionary::new();
    annot.set("Type", Object::Name(b"Annot".to_vec()));
    annot.set("Subtype", Object::Name(b"Highlight".to_vec()));
    annot.set("Rect", reals(&rect));
    annot.set("QuadPoints", reals(&[x0, y1, x1, y1, x0, y0, x1, y0]));
    annot.set("C", reals(&COLOUR));
    annot.set("Contents", text_string(note));
    annot.set("T", text_string("docintel"));
    // Print flag: the highlight shows when the page is printed too.
    annot.set("F", Object::Integer(4));
    annot.set("P", Object::Reference(page_id));
    annot.set("AP", Object::Dictionary(ap));
    annot
}

/// Appends the annotation to the page's `/Annots`, wherever that array lives
/// (inline, behind a reference, or not there yet).
fn add_to_annots(doc: &mut Document, page_id: ObjectId, annotation: ObjectId) {
    let existing = doc.get_dictionary(page_id).ok().and_then(|d| d.get(b"Annots").ok().cloned());
    match existing {
        Some(Object::Reference(array_id)) => {
            if let Ok(Object::Array(items)) = doc.get_object_mut(array_id) {
                items.push(Object::Reference(annotation));
                return;
            }
            // A dangling or non-array reference: replace it with an inline array.
            set_annots(doc, page_id, vec![Object::Reference(annotation)]);
        }
        Some(Object::Array(mut items)) => {
            items.push(Object::Reference(annotation));
            set_annots(doc, page_id, items);
        }
        _ => set_annots(doc, page_id, vec![Object::Reference(annotation)]),
    }
}

fn set_annots(doc: &mut Document, page_id: ObjectId, items: Vec<Object>) {
    if let Ok(page) = doc.get_dictionary_mut(page_id) {
        page.set("Annots", Object::Array(items));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use docintel_test_support::{invoice, temp_dir};

    #[test]
    fn cited_lines_become_highlight_annotations_on_their_page() {
        let input = invoice("AmazonWebServices.pdf");
        let parsed = crate::parse_pdf(&input).unwrap();
        let line = parsed.lines.iter().find(|l| l.text.contains("4.11")).expect("a line with the total");
        let dir = temp_dir("highlight");
        let output = dir.path().join("out.pdf");
        let off_page = BBox { x0: 5000.0, y0: 5000.0, x1: 5100.0, y1: 5010.0 };
        let boxes =
            vec![(line.page, line.bbox, "TOTAL é $4.11".to_owned()), (line.page, off_page, "nowhere".to_owned())];
        assert_eq!(highlight_pdf(&input, &output, &boxes).unwrap(), 1);

        let doc = Document::load(&output).unwrap();
        let pages = doc.get_pages();
        let page_id = pages[&line.page];
        let media = media_box(&doc, page_id).unwrap();
        let annots = doc.get_page_annotations(page_id).unwrap();
        let highlights: Vec<&Dictionary> = annots
            .into_iter()
            .filter(|a| a.get(b"Subtype").and_then(Object::as_name).ok() == Some(b"Highlight".as_slice()))
            .collect();
        assert_eq!(highlights.len(), 1);
        let rect: Vec<f32> =
            highlights[0].get(b"Rect").unwrap().as_array().unwrap().iter().map(|o| o.as_float().unwrap()).collect();
        assert!(rect[0] >= media[0] && rect[1] >= media[1] && rect[2] <= media[2] && rect[3] <= media[3], "{rect:?}");
        // The rectangle covers the cited line.
        assert!(
            rect[0] <= line.bbox.x0 && rect[2] >= line.bbox.x1 && rect[1] <= line.bbox.y0 && rect[3] >= line.bbox.y1
        );
        assert_eq!(highlights[0].get(b"QuadPoints").unwrap().as_array().unwrap().len(), 8);
        let Object::String(contents, _) = highlights[0].get(b"Contents").unwrap() else { panic!("no /Contents") };
        assert_eq!(&contents[..2], &[0xFE, 0xFF], "non-ASCII notes are UTF-16BE");
        // Other pages carry no highlight of ours.
        for (number, id) in &pages {
            if *number != line.page {
                assert!(doc.get_page_annotations(*id).unwrap_or_default().is_empty());
            }
        }

        let missing = highlight_pdf(&input, &output, &[(99, line.bbox, String::new())]).unwrap_err();
        assert!(matches!(missing, HighlightError::NoSuchPage { page: 99, .. }), "{missing}");
    }
}
