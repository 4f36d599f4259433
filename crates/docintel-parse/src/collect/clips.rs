//! The second walk of a page's content that pdf-extract does not do: for
//! every string shown, the visible rectangle then in force (crop box and
//! clipping paths) and how it is painted, and what else is painted around it
//! (shapes, shadings, images), for the collector to tell hidden glyphs apart.

use std::time::Instant;

use docintel_schema::BBox;
use pdf_extract::content::Content;
use pdf_extract::{ContentCache, Dictionary, Document, Object, ObjectId};

use crate::objects::{PageContent, as_dict, as_number, deref};

/// Colours closer than this on every RGB channel (0-1) are the same to a reader.
const SAME_COLOUR: f64 = 0.03;

/// An axis-aligned rectangle in user space (points).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rect {
    pub(crate) x0: f64,
    pub(crate) y0: f64,
    pub(crate) x1: f64,
    pub(crate) y1: f64,
}

/// How far (points) a glyph box may lie outside a clip and still show.
const CLIP_TOLERANCE: f64 = 0.5;

impl Rect {
    /// Nothing is visible.
    const EMPTY: Rect = Rect { x0: 0.0, y0: 0.0, x1: -1.0, y1: -1.0 };

    fn intersect(self, other: Rect) -> Rect {
        Rect {
            x0: self.x0.max(other.x0),
            y0: self.y0.max(other.y0),
            x1: self.x1.min(other.x1),
            y1: self.y1.min(other.y1),
        }
    }

    fn add_point(rect: Option<Rect>, (x, y): (f64, f64)) -> Option<Rect> {
        if !(x.is_finite() && y.is_finite()) {
            return rect;
        }
        Some(match rect {
            Some(r) => Rect { x0: r.x0.min(x), y0: r.y0.min(y), x1: r.x1.max(x), y1: r.y1.max(y) },
            None => Rect { x0: x, y0: y, x1: x, y1: y },
        })
    }

    pub(super) fn contains(&self, (x, y): (f64, f64)) -> bool {
        self.x0 <= x && x <= self.x1 && self.y0 <= y && y <= self.y1
    }

    /// Whether `inner` lies inside (within the clip tolerance).
    pub(super) fn contains_rect(&self, inner: Rect) -> bool {
        let t = CLIP_TOLERANCE;
        self.x0 - t <= inner.x0 && inner.x1 <= self.x1 + t && self.y0 - t <= inner.y0 && inner.y1 <= self.y1 + t
    }

    /// The bounding box of the unit square under `m` (an image's placement).
    fn unit_square(m: &Matrix) -> Option<Rect> {
        [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)]
            .into_iter()
            .fold(None, |r, (x, y)| Rect::add_point(r, apply(m, x, y)))
    }

    /// Whether a glyph box overlaps the rectangle (within the tolerance).
    pub(crate) fn meets(&self, b: BBox) -> bool {
        let t = CLIP_TOLERANCE;
        f64::from(b.x1) >= self.x0 - t
            && f64::from(b.x0) <= self.x1 + t
            && f64::from(b.y1) >= self.y0 - t
            && f64::from(b.y0) <= self.y1 + t
    }
}

/// An sRGB colour, channels 0-1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rgb(f64, f64, f64);

/// The colour of a blank page.
pub(super) const WHITE: Rgb = Rgb(1.0, 1.0, 1.0);
const BLACK: Rgb = Rgb(0.0, 0.0, 0.0);

impl Rgb {
    pub(super) fn same_as(self, other: Rgb) -> bool {
        (self.0 - other.0).abs() <= SAME_COLOUR
            && (self.1 - other.1).abs() <= SAME_COLOUR
            && (self.2 - other.2).abs() <= SAME_COLOUR
    }

    /// A colour from the operands of `g`/`rg`/`k` (or `sc` in a device space), `None` for
    /// any other operand count or a value outside 0-1.
    fn from_components(c: &[f64]) -> Option<Rgb> {
        if c.iter().any(|v| !(0.0..=1.0).contains(v)) {
            return None;
        }
        match *c {
            [g] => Some(Rgb(g, g, g)),
            [r, g, b] => Some(Rgb(r, g, b)),
            [c, m, y, k] => Some(Rgb((1.0 - c) * (1.0 - k), (1.0 - m) * (1.0 - k), (1.0 - y) * (1.0 - k))),
            _ => None,
        }
    }
}

/// How a shown string is painted (page coordinates known).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Look {
    /// Fill colour, `None` when not a device colour (a pattern, a separation…).
    pub(crate) fill: Option<Rgb>,
    /// Stroke colour, likewise.
    pub(crate) stroke: Option<Rgb>,
    /// Text render mode (`Tr`): 3 and 7 paint nothing.
    pub(crate) render_mode: i64,
}

/// Something painted on the page in page coordinates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Paint {
    /// Its bounding box.
    pub(crate) rect: Rect,
    /// Its colour; `None` for a shading or an unknown colour space.
    pub(crate) colour: Option<Rgb>,
    /// An opaque filled rectangle (it hides what it covers).
    pub(crate) covers: bool,
    /// How many strings were shown before it.
    pub(crate) order: usize,
}

/// What [`scan_clips`] learns about a page for the collector.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PageScan {
    /// Visible rectangle per shown string.
    pub(crate) clips: Vec<Option<Rect>>,
    /// Paint state per shown string; `None` where page coordinates are not known.
    pub(crate) looks: Vec<Option<Look>>,
    /// Filled shapes and shadings, in drawing order.
    pub(crate) paints: Vec<Paint>,
    /// Where images are drawn.
    pub(crate) images: Vec<Rect>,
    /// An image was drawn where its place is not known (inside a transformed form).
    pub(crate) unplaced_images: bool,
    /// Form XObjects nested deeper than [`MAX_FORM_DEPTH`] were skipped (a cycle?).
    pub(crate) forms_skipped: bool,
    /// Strings shown before the first shape, shading or image whose place is not known:
    /// what lies under a later string is then unknown.
    pub(crate) unplaced_paints: Option<usize>,
}

/// The graphics state the scan follows (saved by `q`, restored by `Q`).
#[derive(Debug, Clone, Copy)]
struct Gs {
    ctm: Matrix,
    clip: Option<Rect>,
    fill: Option<Rgb>,
    stroke: Option<Rgb>,
    /// Components of the fill / stroke colour space (1, 3, 4), 0 when not a device space.
    fill_space: usize,
    stroke_space: usize,
    render_mode: i64,
    /// No transparency (fill alpha, soft mask, blend mode) set by `gs`.
    opaque: bool,
    /// Stroke width in user space (`w` times the CTM's scale when set).
    line_width: f64,
}

/// Components of a device colour space named by `cs`/`CS`, 0 for any other.
fn device_components(name: &[u8]) -> usize {
    match name {
        b"DeviceGray" | b"G" | b"CalGray" => 1,
        b"DeviceRGB" | b"RGB" | b"CalRGB" => 3,
        b"DeviceCMYK" | b"CMYK" => 4,
        _ => 0,
    }
}

/// Form XObjects nested deeper than this are skipped, as the vendored pdf-extract skips them
/// (a cycle would otherwise recurse until the stack overflows).
const MAX_FORM_DEPTH: u32 = pdf_extract::FORM_DEPTH_LIMIT;
/// Operators between two deadline checks.
const DEADLINE_EVERY: usize = 1024;

/// Why [`scan_clips`] gave up on a page.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ScanError {
    /// A content stream could not be decoded.
    Content(String),
    /// Form XObjects nested too deep (likely a cycle).
    TooDeep,
    /// The deadline passed.
    Deadline,
}

impl std::fmt::Display for ScanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScanError::Content(e) => write!(f, "content stream: {e}"),
            ScanError::TooDeep => write!(f, "Form XObjects nested deeper than {MAX_FORM_DEPTH} (a cycle?)"),
            ScanError::Deadline => write!(f, "time budget exceeded"),
        }
    }
}

/// The visible rectangle for every string pdf-extract will show on the page,
/// in its order (`Tj` with a string operand; each string of a `TJ` array;
/// Form XObjects followed where pdf-extract follows them).
///
/// pdf-extract starts every Form XObject with an identity CTM and ignores its
/// `/Matrix`, so glyph positions inside a form are only comparable with page
/// coordinates when the CTM at the `Do` is the identity and the form has no
/// matrix; elsewhere the entry is `None` (not filtered).
pub(crate) fn scan_clips(
    doc: &Document,
    page_id: ObjectId,
    content: &PageContent,
    forms: &ContentCache,
    deadline: Option<Instant>,
) -> Result<PageScan, ScanError> {
    let content = match content {
        Ok(Ok(content)) => content,
        Ok(Err(e)) | Err(e) => return Err(ScanError::Content(e.display.clone())),
    };
    let resources = inherited(doc, page_id, b"Resources").and_then(|r| as_dict(doc, r));
    let crop = crate::objects::visible_box(doc, page_id).map(|[x0, y0, x1, y1]| Rect {
        x0: f64::from(x0),
        y0: f64::from(y0),
        x1: f64::from(x1),
        y1: f64::from(y1),
    });
    let mut scan = ClipScan { doc, forms, out: PageScan::default(), deadline, ops: 0 };
    let gs = Gs {
        ctm: IDENTITY,
        clip: crop,
        fill: Some(BLACK),
        stroke: Some(BLACK),
        fill_space: 1,
        stroke_space: 1,
        render_mode: 0,
        opaque: true,
        line_width: 1.0,
    };
    scan.walk(content, resources, gs, true, 0)?;
    Ok(scan.out)
}

/// A page attribute, inherited through `/Parent`.
fn inherited<'a>(doc: &'a Document, page_id: ObjectId, key: &[u8]) -> Option<&'a Object> {
    let mut dict = doc.get_dictionary(page_id).ok();
    for _ in 0..64 {
        let d = dict?;
        if let Ok(v) = d.get(key) {
            return Some(v);
        }
        dict = d.get(b"Parent").ok().and_then(|p| as_dict(doc, p));
    }
    None
}

type Matrix = [f64; 6];
const IDENTITY: Matrix = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];

/// `m` applied first, then `ctm` (PDF `cm` semantics).
fn concat(m: Matrix, ctm: Matrix) -> Matrix {
    [
        m[0] * ctm[0] + m[1] * ctm[2],
        m[0] * ctm[1] + m[1] * ctm[3],
        m[2] * ctm[0] + m[3] * ctm[2],
        m[2] * ctm[1] + m[3] * ctm[3],
        m[4] * ctm[0] + m[5] * ctm[2] + ctm[4],
        m[4] * ctm[1] + m[5] * ctm[3] + ctm[5],
    ]
}

fn apply(m: &Matrix, x: f64, y: f64) -> (f64, f64) {
    (m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5])
}

fn matrix_of(doc: &Document, operands: &[Object]) -> Option<Matrix> {
    if operands.len() != 6 {
        return None;
    }
    let mut m = [0.0; 6];
    for (slot, o) in m.iter_mut().zip(operands) {
        *slot = as_number(doc, o)?;
    }
    m.iter().all(|v| v.is_finite()).then_some(m)
}

struct ClipScan<'a> {
    doc: &'a Document,
    forms: &'a ContentCache,
    out: PageScan,
    deadline: Option<Instant>,
    ops: usize,
}

impl<'a> ClipScan<'a> {
    fn walk(
        &mut self,
        content: &Content,
        resources: Option<&'a Dictionary>,
        start: Gs,
        trusted: bool,
        depth: u32,
    ) -> Result<(), ScanError> {
        if depth > MAX_FORM_DEPTH {
            return Err(ScanError::TooDeep);
        }
        // pdf-extract starts every form with an identity CTM (see `scan_clips`).
        let mut gs = Gs { ctm: IDENTITY, ..start };
        let mut stack: Vec<Gs> = Vec::new();
        let mut path: Option<Rect> = None;
        // The current path's subpaths, each with whether it is an `re` rectangle (one that
        // can cover text): a filled path paints each, not their common bounding box (two
        // thin rules at the top and bottom of a page are no black page).
        let mut subpaths: Vec<(Rect, bool)> = Vec::new();
        let mut open: Option<Rect> = None;
        let mut clip_pending = false;
        let doc = self.doc;
        let num = |ops: &[Object], i: usize| ops.get(i).and_then(|o| as_number(doc, o));
        let numbers = |ops: &[Object]| ops.iter().map(|o| as_number(doc, o)).collect::<Option<Vec<f64>>>();
        for op in &content.operations {
            self.ops += 1;
            if self.ops.is_multiple_of(DEADLINE_EVERY) && self.deadline.is_some_and(|d| Instant::now() > d) {
                return Err(ScanError::Deadline);
            }
            let ops = &op.operands;
            let operator = op.operator.as_str();
            match operator {
                "q" => stack.push(gs),
                "Q" => {
                    if let Some(saved) = stack.pop() {
                        gs = saved;
                    }
                }
                "cm" => {
                    if let Some(m) = matrix_of(self.doc, ops) {
                        gs.ctm = concat(m, gs.ctm);
                    }
                }
                "g" | "rg" | "k" | "G" | "RG" | "K" => {
                    let colour = numbers(ops).and_then(|c| Rgb::from_components(&c));
                    let n = match operator {
                        "g" | "G" => 1,
                        "rg" | "RG" => 3,
                        _ => 4,
                    };
                    if operator.chars().all(|c| c.is_ascii_lowercase()) {
                        (gs.fill, gs.fill_space) = (colour, n);
                    } else {
                        (gs.stroke, gs.stroke_space) = (colour, n);
                    }
                }
                "cs" | "CS" => {
                    let n = ops.first().and_then(|o| o.as_name().ok()).map_or(0, device_components);
                    let initial = (n > 0).then_some(BLACK);
                    if operator == "cs" {
                        (gs.fill, gs.fill_space) = (initial, n);
                    } else {
                        (gs.stroke, gs.stroke_space) = (initial, n);
                    }
                }
                "sc" | "scn" | "SC" | "SCN" => {
                    let fill = operator.starts_with('s');
                    let space = if fill { gs.fill_space } else { gs.stroke_space };
                    let colour =
                        numbers(ops).filter(|c| space > 0 && c.len() == space).and_then(|c| Rgb::from_components(&c));
                    if fill {
                        gs.fill = colour;
                    } else {
                        gs.stroke = colour;
                    }
                }
                "w" => {
                    if let Some(w) = num(ops, 0) {
                        let scale = (gs.ctm[0] * gs.ctm[3] - gs.ctm[1] * gs.ctm[2]).abs().sqrt();
                        gs.line_width = (w * scale).abs();
                    }
                }
                "Tr" => {
                    if let Some(mode) = num(ops, 0) {
                        gs.render_mode = mode as i64;
                    }
                }
                "gs" => {
                    let state = ops
                        .first()
                        .and_then(|o| o.as_name().ok())
                        .and_then(|name| {
                            resources
                                .and_then(|r| r.get(b"ExtGState").ok())
                                .and_then(|x| as_dict(doc, x))?
                                .get(name)
                                .ok()
                        })
                        .and_then(|o| as_dict(doc, o));
                    if let Some(state) = state {
                        let alpha = state.get(b"ca").ok().and_then(|a| as_number(doc, a));
                        let mask = state.get(b"SMask").ok().and_then(|m| deref(doc, m));
                        let blend = state.get(b"BM").ok().and_then(|m| deref(doc, m));
                        if alpha.is_some_and(|a| a < 1.0)
                            || mask.is_some_and(|m| !matches!(m, Object::Name(n) if n == b"None"))
                            || blend
                                .is_some_and(|b| !matches!(b, Object::Name(n) if n == b"Normal" || n == b"Compatible"))
                        {
                            gs.opaque = false;
                        }
                    }
                }
                "m" | "l" | "c" | "v" | "y" => {
                    if operator == "m"
                        && let Some(done) = open.take()
                    {
                        subpaths.push((done, false));
                    }
                    for i in (0..ops.len()).step_by(2) {
                        if let (Some(x), Some(y)) = (num(ops, i), num(ops, i + 1)) {
                            let point = apply(&gs.ctm, x, y);
                            path = Rect::add_point(path, point);
                            open = Rect::add_point(open, point);
                        }
                    }
                }
                "re" => {
                    if let Some(done) = open.take() {
                        subpaths.push((done, false));
                    }
                    let axis_aligned = gs.ctm[1] == 0.0 && gs.ctm[2] == 0.0;
                    if let (Some(x), Some(y), Some(w), Some(h)) = (num(ops, 0), num(ops, 1), num(ops, 2), num(ops, 3)) {
                        let mut rect = None;
                        for (px, py) in [(x, y), (x + w, y), (x, y + h), (x + w, y + h)] {
                            let point = apply(&gs.ctm, px, py);
                            path = Rect::add_point(path, point);
                            rect = Rect::add_point(rect, point);
                        }
                        subpaths.extend(rect.map(|r| (r, axis_aligned)));
                    }
                }
                "W" | "W*" => clip_pending = true,
                "n" | "S" | "s" | "f" | "F" | "f*" | "B" | "B*" | "b" | "b*" => {
                    let fills = !matches!(operator, "n" | "S" | "s");
                    let strokes = !matches!(operator, "n" | "f" | "F" | "f*");
                    subpaths.extend(open.take().map(|r| (r, false)));
                    if (fills || strokes) && !trusted && !subpaths.is_empty() {
                        self.out.unplaced_paints.get_or_insert(self.out.clips.len());
                    }
                    if trusted {
                        let order = self.out.clips.len();
                        // Nested subpaths (a frame: an outer and an inner rectangle) may leave
                        // holes: what shows inside is unknown.
                        let nested = subpaths.iter().enumerate().any(|(i, (a, _))| {
                            subpaths.iter().enumerate().any(|(j, (b, _))| i != j && a.contains_rect(*b))
                        });
                        let single = subpaths.len() == 1;
                        for &(rect, is_rect) in &subpaths {
                            if fills {
                                let rect = gs.clip.map_or(rect, |c| c.intersect(rect));
                                // Only a rectangle's colour is known all over its box.
                                let known = gs.opaque && !nested && is_rect;
                                self.out.paints.push(Paint {
                                    rect,
                                    colour: if known { gs.fill } else { None },
                                    covers: single && is_rect && known && gs.fill.is_some(),
                                    order,
                                });
                            }
                            if strokes {
                                // A straight band (a thick rule) has its colour all over its box.
                                let band = (rect.x1 - rect.x0).min(rect.y1 - rect.y0) <= gs.line_width;
                                let half = gs.line_width / 2.0;
                                let rect = Rect {
                                    x0: rect.x0 - half,
                                    y0: rect.y0 - half,
                                    x1: rect.x1 + half,
                                    y1: rect.y1 + half,
                                };
                                let rect = gs.clip.map_or(rect, |c| c.intersect(rect));
                                let colour = if gs.opaque && single && !is_rect && band { gs.stroke } else { None };
                                self.out.paints.push(Paint { rect, colour, covers: false, order });
                            }
                        }
                    }
                    subpaths.clear();
                    if clip_pending {
                        let area = path.unwrap_or(Rect::EMPTY);
                        gs.clip = Some(gs.clip.map_or(area, |c| c.intersect(area)));
                    }
                    clip_pending = false;
                    path = None;
                }
                "sh" => match gs.clip.filter(|_| trusted) {
                    Some(rect) => {
                        self.out.paints.push(Paint { rect, colour: None, covers: false, order: self.out.clips.len() })
                    }
                    None => {
                        self.out.unplaced_paints.get_or_insert(self.out.clips.len());
                    }
                },
                // An inline image (lopdf decodes `BI … ID … EI` as one `BI` operation).
                "BI" => self.image(&gs, trusted),
                "Tj" => {
                    if matches!(ops.first(), Some(Object::String(..))) {
                        self.show(&gs, trusted);
                    }
                }
                // Next line, then show (the vendored pdf-extract shows these too).
                "'" | "\"" => {
                    if matches!(ops.last(), Some(Object::String(..))) {
                        self.show(&gs, trusted);
                    }
                }
                "TJ" => {
                    if let Some(Object::Array(items)) = ops.first() {
                        for item in items {
                            if matches!(item, Object::String(..)) {
                                self.show(&gs, trusted);
                            }
                        }
                    }
                }
                "Do" => {
                    let Some(name) = ops.first().and_then(|o| o.as_name().ok()) else { continue };
                    let Some(xobjects) =
                        resources.and_then(|r| r.get(b"XObject").ok()).and_then(|x| as_dict(self.doc, x))
                    else {
                        continue;
                    };
                    let Some(Object::Stream(stream)) = xobjects.get(name).ok().and_then(|o| deref(self.doc, o)) else {
                        continue;
                    };
                    let subtype = stream.dict.get(b"Subtype").ok().and_then(|s| deref(self.doc, s));
                    if matches!(subtype, Some(Object::Name(n)) if n == b"Image") {
                        self.image(&gs, trusted);
                        continue;
                    }
                    let has_matrix = match stream.dict.get(b"Matrix").ok().and_then(|m| deref(self.doc, m)) {
                        Some(Object::Array(items)) => matrix_of(self.doc, items).is_some_and(|m| m != IDENTITY),
                        _ => false,
                    };
                    let inner_trusted = trusted && gs.ctm == IDENTITY && !has_matrix;
                    let inner_resources =
                        stream.dict.get(b"Resources").ok().and_then(|r| as_dict(self.doc, r)).or(resources);
                    let inner = Gs { clip: if inner_trusted { gs.clip } else { None }, ..gs };
                    if depth + 1 > MAX_FORM_DEPTH {
                        self.out.forms_skipped = true;
                        continue;
                    }
                    match &*self.forms.form(stream) {
                        Ok(form) => self.walk(form, inner_resources, inner, inner_trusted, depth + 1)?,
                        Err(e) => return Err(ScanError::Content(e.display.clone())),
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// One string shown in state `gs`.
    fn show(&mut self, gs: &Gs, trusted: bool) {
        self.out.clips.push(gs.clip.filter(|_| trusted));
        let look = Look { fill: gs.fill, stroke: gs.stroke, render_mode: gs.render_mode };
        self.out.looks.push(trusted.then_some(look));
    }

    /// An image drawn in state `gs` (the unit square under the CTM).
    fn image(&mut self, gs: &Gs, trusted: bool) {
        match Rect::unit_square(&gs.ctm).filter(|_| trusted) {
            Some(rect) => {
                let rect = gs.clip.map_or(rect, |c| c.intersect(rect));
                self.out.images.push(rect);
                self.out.paints.push(Paint { rect, colour: None, covers: false, order: self.out.clips.len() });
            }
            None => {
                self.out.unplaced_images = true;
                self.out.unplaced_paints.get_or_insert(self.out.clips.len());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_rectangles_meet_glyph_boxes_with_tolerance() {
        let clip = Rect { x0: 0.0, y0: 0.0, x1: 100.0, y1: 100.0 };
        let inside = BBox { x0: 10.0, y0: 10.0, x1: 20.0, y1: 20.0 };
        let touching = BBox { x0: 100.2, y0: 10.0, x1: 110.0, y1: 20.0 };
        let outside = BBox { x0: 102.0, y0: 10.0, x1: 110.0, y1: 20.0 };
        assert!(clip.meets(inside) && clip.meets(touching) && !clip.meets(outside));
        assert!(!Rect::EMPTY.meets(inside));
        assert_eq!(concat([2.0, 0.0, 0.0, 2.0, 10.0, 0.0], IDENTITY), [2.0, 0.0, 0.0, 2.0, 10.0, 0.0]);
        // Scale then translate: (1, 1) → (2, 2) → (12, 2).
        let m = concat([2.0, 0.0, 0.0, 2.0, 0.0, 0.0], [1.0, 0.0, 0.0, 1.0, 10.0, 0.0]);
        assert_eq!(apply(&m, 1.0, 1.0), (12.0, 2.0));
    }
}
