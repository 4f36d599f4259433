//! Page graphics: image and vector-path counts, image hashes, figure flags.
//!
//! Each page's content streams, decoded once for all the page walkers (see
//! [`crate::objects::page_content`]), are walked, following Form XObjects
//! (bounded depth, no cycles):
//! - an **image** is a `Do` of an Image XObject or an inline image (`BI`);
//!   its stream bytes are hashed (SHA-256, first 16 hex digits) and the share
//!   of the page it covers is taken from the current transformation matrix
//!   (an image fills the unit square of its CTM, so its area is `|det CTM|`;
//!   only the determinant is tracked through `q`/`Q`/`cm` and form matrices,
//!   clipping and off-page placement are ignored);
//! - a **vector path** is a painting operator (`S s f F f* B B* b b*`; `n`,
//!   which paints nothing, is excluded).
//!
//! At document level, an image hash seen on at least [`DECOR_MIN_PAGES`]
//! pages and on at least half of the pages is **decoration** (logos, page
//! templates). A page then has a figure when it shows a montage (at least
//! [`MONTAGE_MIN_IMAGES`] non-decorative images each covering at least
//! [`MONTAGE_MIN_SHARE`] of the page), a large image (a non-decorative image
//! covering at least [`IMAGE_MIN_SHARE`]), or many vector paths (at least
//! [`VECTOR_MIN_PATHS`]; ruled tables also reach this: a known limit).

use std::collections::{HashMap, HashSet};

use pdf_extract::content::Content;
use pdf_extract::{ContentCache, Dictionary, Document, Object, ObjectId};
use sha2::{Digest, Sha256};

use crate::objects::{PageContent, as_dict, as_number, deref};

/// Decorative: the same image on at least this many pages…
pub(crate) const DECOR_MIN_PAGES: usize = 3;
/// …and on at least this share of the pages.
pub(crate) const DECOR_MIN_PAGE_SHARE: f64 = 0.5;
/// A page with at least this many vector paths has a `vector` figure.
pub(crate) const VECTOR_MIN_PATHS: u32 = 50;
/// A non-decorative image covering this share of the page is an `image` figure.
pub(crate) const IMAGE_MIN_SHARE: f32 = 0.2;
/// At least this many non-decorative images make a `montage`…
pub(crate) const MONTAGE_MIN_IMAGES: usize = 4;
/// …each covering at least this share of the page.
pub(crate) const MONTAGE_MIN_SHARE: f32 = 0.01;
/// Form XObjects nested deeper than this are not followed.
const MAX_FORM_DEPTH: u32 = 8;

/// One image drawn on a page.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ImageUse {
    /// Content hash of the image bytes, when they could be read.
    pub(crate) hash: Option<String>,
    /// Share of the page area the image covers (0..=1).
    pub(crate) share: f32,
}

/// What one page draws besides text.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PageGraphics {
    /// Vector path painting operations.
    pub(crate) n_paths: u32,
    /// Images drawn, in drawing order.
    pub(crate) images: Vec<ImageUse>,
}

/// The figure columns of one page-table row.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FigureInfo {
    pub(crate) n_images: u32,
    pub(crate) n_vector_paths: u32,
    pub(crate) has_figure: bool,
    pub(crate) figure_kind: Option<String>,
    pub(crate) decorative_image_hashes: Vec<String>,
    /// The largest share of the page any image covers.
    pub(crate) max_image_share: f32,
}

/// Walks one page's content streams (`content`, already read and decoded,
/// see [`crate::objects::page_content`]). `page_area` is in square points.
/// Forms are decoded through `forms`, shared by the page threads.
pub(crate) fn scan_page(
    doc: &Document,
    page_id: ObjectId,
    page_area: f32,
    content: &PageContent,
    forms: &ContentCache,
) -> Result<PageGraphics, String> {
    let content = content.as_ref().map_err(|e| format!("content stream: {}", e.display))?;
    // Not lopdf's `get_page_resources`: it recurses up `/Parent` without a bound.
    let resources = crate::objects::page_resources(doc, page_id);
    let content = content.as_ref().map_err(|e| format!("content stream: {}", e.display))?;
    let mut walker = Walker {
        doc,
        forms,
        page_area: f64::from(page_area.max(1.0)),
        out: PageGraphics::default(),
        on_path: HashSet::new(),
    };
    walker.walk(content, &resources, 1.0, 0);
    Ok(walker.out)
}

struct Walker<'a> {
    doc: &'a Document,
    forms: &'a ContentCache,
    page_area: f64,
    out: PageGraphics,
    /// Forms on the current recursion path (cycle guard).
    on_path: HashSet<ObjectId>,
}

impl<'a> Walker<'a> {
    /// Walks a decoded content stream whose CTM determinant starts at `det`.
    fn walk(&mut self, content: &Content, resources: &[&'a Dictionary], det: f64, depth: u32) {
        let mut stack: Vec<f64> = Vec::new();
        let mut det = det;
        for op in &content.operations {
            match op.operator.as_str() {
                "q" => stack.push(det),
                "Q" => det = stack.pop().unwrap_or(det),
                "cm" => {
                    if let Some(m) = matrix_det(self.doc, &op.operands) {
                        det *= m;
                    }
                }
                "S" | "s" | "f" | "F" | "f*" | "B" | "B*" | "b" | "b*" => self.out.n_paths += 1,
                "BI" => {
                    let hash = match op.operands.first() {
                        Some(Object::Stream(s)) if !s.content.is_empty() => Some(hash_bytes(&s.content)),
                        _ => None,
                    };
                    self.push_image(hash, det);
                }
                "Do" => {
                    let Some(name) = op.operands.first().and_then(|o| o.as_name().ok()) else { continue };
                    let Some((id, obj)) = find_xobject(self.doc, resources, name) else { continue };
                    let Object::Stream(stream) = obj else { continue };
                    let subtype = stream
                        .dict
                        .get(b"Subtype")
                        .ok()
                        .and_then(|s| deref(self.doc, s))
                        .and_then(|s| s.as_name().ok());
                    match subtype {
                        Some(b"Image") => self.push_image(Some(hash_bytes(&stream.content)), det),
                        Some(b"Form") if depth < MAX_FORM_DEPTH => {
                            if let Some(id) = id
                                && !self.on_path.insert(id)
                            {
                                continue;
                            }
                            let form_det = stream
                                .dict
                                .get(b"Matrix")
                                .ok()
                                .and_then(|m| match deref(self.doc, m) {
                                    Some(Object::Array(items)) => matrix_det(self.doc, items),
                                    _ => None,
                                })
                                .unwrap_or(1.0);
                            let mut inner: Vec<&'a Dictionary> = Vec::new();
                            if let Some(r) = stream.dict.get(b"Resources").ok().and_then(|r| as_dict(self.doc, r)) {
                                inner.push(r);
                            }
                            inner.extend_from_slice(resources);
                            // A broken form costs only its own drawing.
                            if let Ok(form) = &*self.forms.form(stream) {
                                self.walk(form, &inner, det * form_det, depth + 1);
                            }
                            if let Some(id) = id {
                                self.on_path.remove(&id);
                            }
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
    }

    fn push_image(&mut self, hash: Option<String>, det: f64) {
        let share = (det.abs() / self.page_area).min(1.0);
        let share = if share.is_finite() { share as f32 } else { 0.0 };
        self.out.images.push(ImageUse { hash, share });
    }
}

/// The determinant of a 6-number PDF matrix `[a b c d e f]`.
fn matrix_det(doc: &Document, operands: &[Object]) -> Option<f64> {
    if operands.len() != 6 {
        return None;
    }
    let n: Vec<f64> = operands[..4].iter().map(|o| as_number(doc, o)).collect::<Option<_>>()?;
    let det = n[0] * n[3] - n[1] * n[2];
    det.is_finite().then_some(det)
}

/// Looks `name` up in the `/XObject` dictionaries of `resources`, in order.
fn find_xobject<'a>(
    doc: &'a Document,
    resources: &[&'a Dictionary],
    name: &[u8],
) -> Option<(Option<ObjectId>, &'a Object)> {
    for res in resources {
        let Some(xobjects) = res.get(b"XObject").ok().and_then(|x| as_dict(doc, x)) else { continue };
        let Ok(entry) = xobjects.get(name) else { continue };
        let id = match entry {
            Object::Reference(id) => Some(*id),
            _ => None,
        };
        if let Some(obj) = deref(doc, entry) {
            return Some((id, obj));
        }
    }
    None
}

/// First 16 hex digits of the SHA-256 of `bytes`.
pub(crate) fn hash_bytes(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Turns per-page graphics (`None` for a page that could not be scanned)
/// into the figure columns of the page table.
pub(crate) fn classify(pages: &[Option<PageGraphics>]) -> Vec<FigureInfo> {
    let mut pages_of: HashMap<&str, HashSet<usize>> = HashMap::new();
    for (i, page) in pages.iter().enumerate() {
        for image in page.iter().flat_map(|p| &p.images) {
            if let Some(hash) = &image.hash {
                pages_of.entry(hash.as_str()).or_default().insert(i);
            }
        }
    }
    let n_pages = pages.len().max(1) as f64;
    let decorative: HashSet<&str> = pages_of
        .iter()
        .filter(|(_, on)| on.len() >= DECOR_MIN_PAGES && on.len() as f64 >= DECOR_MIN_PAGE_SHARE * n_pages)
        .map(|(hash, _)| *hash)
        .collect();
    pages
        .iter()
        .map(|page| {
            let Some(page) = page else { return FigureInfo::default() };
            let mut decor: Vec<String> = Vec::new();
            let mut real: Vec<f32> = Vec::new();
            for image in &page.images {
                match &image.hash {
                    Some(h) if decorative.contains(h.as_str()) => {
                        if !decor.contains(h) {
                            decor.push(h.clone());
                        }
                    }
                    _ => real.push(image.share),
                }
            }
            let kind = if real.iter().filter(|&&s| s >= MONTAGE_MIN_SHARE).count() >= MONTAGE_MIN_IMAGES {
                Some("montage")
            } else if real.iter().any(|&s| s >= IMAGE_MIN_SHARE) {
                Some("image")
            } else if page.n_paths >= VECTOR_MIN_PATHS {
                Some("vector")
            } else {
                None
            };
            FigureInfo {
                n_images: page.images.len() as u32,
                n_vector_paths: page.n_paths,
                has_figure: kind.is_some(),
                figure_kind: kind.map(String::from),
                decorative_image_hashes: decor,
                max_image_share: page.images.iter().map(|i| i.share).fold(0.0, f32::max),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(n_paths: u32, images: &[(&str, f32)]) -> Option<PageGraphics> {
        Some(PageGraphics {
            n_paths,
            images: images.iter().map(|&(h, share)| ImageUse { hash: Some(h.to_string()), share }).collect(),
        })
    }

    fn check(pages: &[Option<PageGraphics>], expected: &[(Option<&str>, &[&str])]) {
        let got = classify(pages);
        let got: Vec<(Option<&str>, Vec<&str>)> = got
            .iter()
            .map(|f| {
                assert_eq!(f.has_figure, f.figure_kind.is_some());
                (f.figure_kind.as_deref(), f.decorative_image_hashes.iter().map(String::as_str).collect())
            })
            .collect();
        let expected: Vec<(Option<&str>, Vec<&str>)> = expected.iter().map(|(k, d)| (*k, d.to_vec())).collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn decoration_versus_figures() {
        // A large logo on every page is decoration, not a figure.
        check(
            &[page(0, &[("logo", 0.3)]), page(60, &[("logo", 0.3)]), page(0, &[("logo", 0.3), ("photo", 0.4)]), None],
            &[(None, &["logo"]), (Some("vector"), &["logo"]), (Some("image"), &["logo"]), (None, &[])],
        );
        // Two pages only: a repeated image is not decoration (fewer than 3 pages).
        check(&[page(0, &[("a", 0.5)]), page(0, &[("a", 0.5)])], &[(Some("image"), &[]), (Some("image"), &[])]);
        // On 3 of 8 pages: below half the pages, still content.
        let mut pages = vec![page(0, &[("a", 0.5)]); 3];
        pages.extend(vec![page(0, &[]); 5]);
        let got = classify(&pages);
        assert!(got[..3].iter().all(|f| f.figure_kind.as_deref() == Some("image")));
        assert!(got[3..].iter().all(|f| !f.has_figure));
    }

    #[test]
    fn montage_small_images_and_path_threshold() {
        check(&[page(0, &[("a", 0.05), ("b", 0.05), ("c", 0.05), ("d", 0.05)])], &[(Some("montage"), &[])]);
        // Icons below the montage share do not make a montage.
        check(&[page(0, &[("a", 0.001), ("b", 0.001), ("c", 0.001), ("d", 0.001)])], &[(None, &[])]);
        check(&[page(VECTOR_MIN_PATHS - 1, &[])], &[(None, &[])]);
        check(&[page(VECTOR_MIN_PATHS, &[])], &[(Some("vector"), &[])]);
    }

    #[test]
    fn hashes_are_stable_and_short() {
        assert_eq!(hash_bytes(b"abc"), "ba7816bf8f01cfea");
        assert_ne!(hash_bytes(b"abc"), hash_bytes(b"abd"));
    }
}
