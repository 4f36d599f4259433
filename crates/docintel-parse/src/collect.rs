//! Glyph collection and line grouping.
//!
//! [`GlyphCollector`] implements pdf-extract's [`OutputDev`]: it receives every
//! glyph of a page with its text-rendering matrix, advance width and font size,
//! and groups the glyphs into lines itself. Geometry is done along each glyph's
//! own baseline direction, so rotated text still forms lines.
//!
//! pdf-extract ignores clipping, so [`scan_clips`] walks the page's decoded
//! content (decoded once per page, forms once per document) a second time, mirroring pdf-extract's own operator walk, and
//! records for every string it shows the visible rectangle then in force (the
//! crop box intersected with the bounding boxes of the clipping paths).
//! Glyphs whose box does not meet that rectangle are hidden and dropped.
//!
//! [`GlyphCollector::finish`] then finds a column gutter per page (an x band
//! crossed by few lines, with long lines on both sides), splits the lines
//! that span it at their word gap, and emits each band of the page between
//! full-width lines as left column, then right column.

use std::borrow::Cow;
use std::time::Instant;

use docintel_schema::BBox;
use pdf_extract::content::Content;
use pdf_extract::{ContentCache, Dictionary, Document, MediaBox, Object, ObjectId, OutputDev, OutputError, Transform};

use crate::objects::{PageContent, as_dict, as_number, deref};

/// A new line starts when the baseline moves by more than this many ems.
const BASELINE_BREAK_EM: f64 = 0.5;
/// A new line starts when the pen jumps back by more than this many ems.
const BACKWARD_BREAK_EM: f64 = 0.5;
/// A new line starts when the horizontal gap exceeds this many ems. Word
/// spaces, even justified ones, stay below half an em; PyMuPDF (MuPDF's
/// stext device) likewise starts a new line past 0.8 em, so a section number
/// and its title, a run-in heading and its paragraph, or two table cells are
/// separate lines.
const GAP_BREAK_EM: f64 = 0.8;
/// A space is inserted when the horizontal gap exceeds this many ems.
const SPACE_EM: f64 = 0.15;
/// A glyph repeated this close to the previous identical glyph is a fake-bold
/// overprint and is dropped.
const OVERPRINT_EM: f64 = 0.1;

/// A line of text as collected, before reading-order sorting and numbering.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawLine {
    /// The text (ligatures expanded, trailing whitespace removed).
    pub(crate) text: String,
    /// Union of the glyph boxes, PDF user space.
    pub(crate) bbox: BBox,
    /// Dominant rendered font size (em in user space, points) by glyph count.
    pub(crate) font_size: f32,
    /// Word gaps of a horizontal line, left to right (empty otherwise).
    pub(crate) gaps: Vec<Gap>,
    /// Why the line does not show on the rendered page, if it does not.
    pub(crate) hidden: Option<Hidden>,
}

/// Why a glyph is in the content stream but not on the rendered page. Only decided where the
/// collector is sure (page coordinates known); anything else counts as visible.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Hidden {
    /// Text render mode 3 or 7 (neither filled nor stroked) with no image under it (an OCR
    /// layer over a scanned image is visible: the image shows the same text).
    RenderMode,
    /// Drawn in the colour of what lies under it (white on the white page, say).
    SameColour,
    /// Rendered smaller than [`MIN_VISIBLE_EM`].
    Tiny,
    /// Under an opaque filled rectangle drawn after it.
    Covered,
}

impl Hidden {
    /// How a diagnostic names it.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Hidden::RenderMode => "invisible render mode",
            Hidden::SameColour => "same colour as its background",
            Hidden::Tiny => "smaller than 1 pt",
            Hidden::Covered => "covered by a filled shape drawn over it",
        }
    }
}

/// Text rendered smaller than this (em in points) cannot be read on the page.
pub(crate) const MIN_VISIBLE_EM: f64 = 1.0;
/// Colours closer than this on every RGB channel (0-1) are the same to a reader.
const SAME_COLOUR: f64 = 0.03;

/// A word gap inside a horizontal line: where the text may be split.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Gap {
    /// Byte offset of the space in the line's text.
    pub(crate) at: usize,
    /// Right edge of the word before the gap.
    pub(crate) x_end: f32,
    /// Left edge of the word after the gap.
    pub(crate) x_start: f32,
}

/// The line being built.
#[derive(Debug)]
struct Current {
    text: String,
    bbox: Option<BBox>,
    em: f64,
    /// Pen position after the last glyph.
    end: (f64, f64),
    /// Unit baseline direction.
    dir: (f64, f64),
    /// Origin of the last visible glyph (overprint detection)…
    last_glyph: Option<(f64, f64)>,
    /// …and its text (a buffer reused from glyph to glyph).
    last_text: String,
    /// Glyph counts per rendered size (tenths of a point).
    sizes: Vec<(i64, usize)>,
    /// Right edge of the last visible glyph (x, user space).
    last_x_end: f32,
    /// Word gaps recorded so far (horizontal lines only).
    gaps: Vec<Gap>,
    /// Visibility shared by every glyph of the line (a change breaks the line).
    hidden: Option<Hidden>,
}

/// Collects the glyphs of one page into [`RawLine`]s.
#[derive(Debug, Default)]
pub(crate) struct GlyphCollector {
    current: Option<Current>,
    lines: Vec<RawLine>,
    /// Number of glyphs received (including spaces).
    pub(crate) n_glyphs: usize,
    /// Visible glyphs whose up vector points down the page / up the page.
    flipped_glyphs: usize,
    upright_glyphs: usize,
    /// Visible rectangle and paint state per shown string, in pdf-extract's
    /// order, and what was painted around them (see [`scan_clips`]); `None`
    /// entries, or strings past the end, are not filtered.
    scan: PageScan,
    /// Strings shown so far (pdf-extract calls `begin_word` once per string).
    shows: usize,
    /// Glyphs dropped as clipped or outside the crop box.
    pub(crate) n_hidden: usize,
    /// Glyphs kept but marked not visible (see [`Hidden`]).
    pub(crate) n_invisible: usize,
    /// Glyphs shown whose font gave no text for them (no Unicode mapping): text lost.
    pub(crate) n_unmapped: usize,
    /// Extraction stops with an error once this instant has passed.
    deadline: Option<Instant>,
    /// Set when the deadline stopped the extraction.
    pub(crate) timed_out: bool,
}

impl GlyphCollector {
    /// A collector that hides glyphs outside `clips` (one entry per shown
    /// string) and gives up once `deadline` has passed.
    pub(crate) fn new(scan: PageScan, deadline: Option<Instant>) -> Self {
        Self { scan, deadline, ..Self::default() }
    }

    /// Finishes the page and returns its lines in reading order.
    ///
    /// When most glyphs stand upside down in user space (a y-flipped page
    /// whose flip lives in a CTM that pdf-extract does not carry into Form
    /// XObjects, as in browser-printed PDFs), the page is mirrored vertically
    /// within its text extent first, so reading order is top to bottom.
    pub(crate) fn finish(mut self) -> Vec<RawLine> {
        self.flush();
        if self.flipped_glyphs > self.upright_glyphs {
            let lo = self.lines.iter().map(|l| l.bbox.y0).fold(f32::MAX, f32::min);
            let hi = self.lines.iter().map(|l| l.bbox.y1).fold(f32::MIN, f32::max);
            for line in &mut self.lines {
                let (y0, y1) = (lo + hi - line.bbox.y1, lo + hi - line.bbox.y0);
                line.bbox.y0 = y0;
                line.bbox.y1 = y1;
            }
        }
        reading_order(self.lines)
    }

    /// The visible rectangle of the string being shown, if any.
    fn current_clip(&self) -> Option<Rect> {
        self.shows.checked_sub(1).and_then(|i| self.scan.clips.get(i).copied().flatten())
    }

    /// Whether (and why) a glyph of the string being shown, with box `gbox` and rendered
    /// size `em`, does not show on the page.
    fn hidden(&self, gbox: BBox, em: f64) -> Option<Hidden> {
        let index = self.shows.checked_sub(1)?;
        let look = self.scan.looks.get(index).copied().flatten()?;
        let glyph =
            Rect { x0: f64::from(gbox.x0), y0: f64::from(gbox.y0), x1: f64::from(gbox.x1), y1: f64::from(gbox.y1) };
        let centre = ((glyph.x0 + glyph.x1) / 2.0, (glyph.y0 + glyph.y1) / 2.0);
        let under_image = self.scan.unplaced_images || self.scan.images.iter().any(|r| r.contains(centre));
        if matches!(look.render_mode, 3 | 7) {
            return (!under_image).then_some(Hidden::RenderMode);
        }
        if em < MIN_VISIBLE_EM {
            return Some(Hidden::Tiny);
        }
        // Painted after the string: an opaque rectangle over the whole glyph hides it.
        if self.scan.paints.iter().any(|p| p.order > index && p.covers && p.rect.contains_rect(glyph)) {
            return Some(Hidden::Covered);
        }
        // Painted before: the last shape under the glyph's centre is its background (the
        // page is white); an image, a shading or an unknown colour there means visible.
        let background = match self.scan.paints.iter().rev().find(|p| p.order <= index && p.rect.contains(centre)) {
            _ if self.scan.unplaced_paints.is_some_and(|first| first <= index) => None,
            Some(p) => p.colour,
            None if under_image => None,
            None => Some(WHITE),
        };
        let background = background?;
        let same = |c: Option<Rgb>| c.is_some_and(|c| c.same_as(background));
        let invisible = match look.render_mode {
            1 | 5 => same(look.stroke),
            2 | 6 => same(look.fill) && same(look.stroke),
            _ => same(look.fill),
        };
        invisible.then_some(Hidden::SameColour)
    }

    fn flush(&mut self) {
        if let Some(cur) = self.current.take() {
            let text = cur.text.trim_end_matches(is_pdf_space).to_string();
            if let Some(bbox) = cur.bbox
                && !text.chars().all(char::is_whitespace)
            {
                let font_size = dominant_size(&cur.sizes);
                let len = text.len();
                let gaps = cur.gaps.into_iter().filter(|g| g.at < len).collect();
                self.lines.push(RawLine { text, bbox, font_size, gaps, hidden: cur.hidden });
            }
        }
    }

    fn add_glyph(&mut self, trm: &Transform, width: f64, font_size: f64, text: &str) {
        self.n_glyphs += 1;
        // Text space → user space: the glyph's origin and its em/advance vectors.
        let origin = (trm.m31, trm.m32);
        let em_vec = (trm.m11 * font_size, trm.m12 * font_size);
        let up_vec = (trm.m21 * font_size, trm.m22 * font_size);
        let det = (trm.m11 * trm.m22 - trm.m12 * trm.m21).abs();
        let mut em = det.sqrt() * font_size.abs();
        if !em.is_finite() || em <= 1e-6 {
            em = 1.0;
        }
        let em_len = (em_vec.0 * em_vec.0 + em_vec.1 * em_vec.1).sqrt();
        let dir = if em_len.is_finite() && em_len > 1e-9 { (em_vec.0 / em_len, em_vec.1 / em_len) } else { (1.0, 0.0) };
        let width = if width.is_finite() && width >= 0.0 { width } else { 0.0 };
        let advance = if em_len.is_finite() { width * em_len } else { width * em };
        let end = (origin.0 + dir.0 * advance, origin.1 + dir.1 * advance);
        if !origin.0.is_finite() || !origin.1.is_finite() || !end.0.is_finite() || !end.1.is_finite() {
            return;
        }

        let is_space = !text.is_empty() && text.chars().all(is_pdf_space);
        // Most glyphs need no cleaning: no copy for them.
        let cleaned: Cow<'_, str> = if text.chars().all(|c| !needs_cleaning(c)) {
            Cow::Borrowed(text)
        } else {
            Cow::Owned(clean_glyph_text(text))
        };
        if !is_space && cleaned.is_empty() {
            self.n_unmapped += 1;
            return;
        }

        // Glyph box: [0, advance] along the baseline, [-0.2, 0.8] em across it.
        let up_len = (up_vec.0 * up_vec.0 + up_vec.1 * up_vec.1).sqrt();
        let up = if up_len.is_finite() && up_len > 1e-9 {
            (up_vec.0 / up_len * em, up_vec.1 / up_len * em)
        } else {
            (-dir.1 * em, dir.0 * em)
        };
        let corners = [
            (origin.0 - 0.2 * up.0, origin.1 - 0.2 * up.1),
            (end.0 - 0.2 * up.0, end.1 - 0.2 * up.1),
            (origin.0 + 0.8 * up.0, origin.1 + 0.8 * up.1),
            (end.0 + 0.8 * up.0, end.1 + 0.8 * up.1),
        ];
        let mut gbox = BBox { x0: f32::MAX, y0: f32::MAX, x1: f32::MIN, y1: f32::MIN };
        for (x, y) in corners {
            gbox.x0 = gbox.x0.min(x as f32);
            gbox.y0 = gbox.y0.min(y as f32);
            gbox.x1 = gbox.x1.max(x as f32);
            gbox.y1 = gbox.y1.max(y as f32);
        }
        if !(gbox.x0.is_finite() && gbox.y0.is_finite() && gbox.x1.is_finite() && gbox.y1.is_finite()) {
            return;
        }
        // Hidden by a clipping path or outside the crop box: not text.
        if let Some(clip) = self.current_clip()
            && !clip.meets(gbox)
        {
            self.n_hidden += 1;
            return;
        }
        let hidden = if is_space { self.current.as_ref().and_then(|c| c.hidden) } else { self.hidden(gbox, em) };
        if hidden.is_some() && !is_space {
            self.n_invisible += 1;
        }

        // Decide whether the glyph continues the current line.
        let mut need_space = false;
        if let Some(cur) = &self.current {
            let dx = origin.0 - cur.end.0;
            let dy = origin.1 - cur.end.1;
            let along = dx * cur.dir.0 + dy * cur.dir.1;
            let across = -dx * cur.dir.1 + dy * cur.dir.0;
            let ref_em = cur.em.max(em);
            let same_dir = (cur.dir.0 * dir.0 + cur.dir.1 * dir.1) > 0.9;
            let breaks = !same_dir
                || cur.hidden != hidden
                || across.abs() > BASELINE_BREAK_EM * ref_em
                || along < -BACKWARD_BREAK_EM * ref_em
                || along > GAP_BREAK_EM * ref_em;
            if breaks {
                // An overprinted duplicate glyph (fake bold) is dropped, not a break.
                if let Some(last_origin) = &cur.last_glyph
                    && cur.last_text == cleaned
                    && (origin.0 - last_origin.0).hypot(origin.1 - last_origin.1) < OVERPRINT_EM * ref_em
                {
                    return;
                }
                self.flush();
            } else {
                if let Some(last_origin) = &cur.last_glyph
                    && cur.last_text == cleaned
                    && !is_space
                    && (origin.0 - last_origin.0).hypot(origin.1 - last_origin.1) < OVERPRINT_EM * ref_em
                {
                    return;
                }
                need_space = along > SPACE_EM * ref_em;
            }
        }

        if is_space {
            // A space glyph only advances the pen of an existing line.
            if let Some(cur) = &mut self.current {
                if !cur.text.is_empty() && !cur.text.ends_with(' ') {
                    cur.text.push(' ');
                }
                cur.end = end;
            }
            return;
        }

        if up.1 < 0.0 && up.1.abs() > up.0.abs() {
            self.flipped_glyphs += 1;
        } else if up.1 > 0.0 && up.1.abs() > up.0.abs() {
            self.upright_glyphs += 1;
        }
        let cur = self.current.get_or_insert_with(|| Current {
            text: String::new(),
            bbox: None,
            em,
            end,
            dir,
            last_glyph: None,
            last_text: String::new(),
            sizes: Vec::new(),
            last_x_end: gbox.x1,
            gaps: Vec::new(),
            hidden,
        });
        if need_space && !cur.text.is_empty() && !cur.text.ends_with(' ') {
            cur.text.push(' ');
        }
        // A word gap on a left-to-right horizontal line is a possible column cut.
        if cur.text.ends_with(' ') && cur.dir.0 > 0.99 && dir.0 > 0.99 {
            cur.gaps.push(Gap { at: cur.text.len() - 1, x_end: cur.last_x_end, x_start: gbox.x0 });
        }
        cur.text.push_str(&cleaned);
        cur.bbox = Some(cur.bbox.map_or(gbox, |b| b.union(gbox)));
        cur.end = end;
        cur.last_x_end = gbox.x1;
        cur.last_glyph = Some(origin);
        cur.last_text.clear();
        cur.last_text.push_str(&cleaned);
        let key = (em * 10.0).round() as i64;
        match cur.sizes.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += 1,
            None => cur.sizes.push((key, 1)),
        }
    }
}

/// The size with the most glyphs (ties: the first seen), in points.
fn dominant_size(sizes: &[(i64, usize)]) -> f32 {
    let mut best: Option<(i64, usize)> = None;
    for &(key, n) in sizes {
        if best.is_none_or(|(_, m)| n > m) {
            best = Some((key, n));
        }
    }
    best.map_or(0.0, |(key, _)| key as f32 / 10.0)
}

impl OutputDev for GlyphCollector {
    fn begin_page(
        &mut self,
        _page_num: u32,
        _media_box: &MediaBox,
        _art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        Ok(())
    }
    fn end_page(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        char: &str,
    ) -> Result<(), OutputError> {
        if self.n_glyphs.is_multiple_of(64)
            && let Some(deadline) = self.deadline
            && Instant::now() > deadline
        {
            self.timed_out = true;
            return Err(OutputError::FormatError(std::fmt::Error));
        }
        self.add_glyph(trm, width, font_size, char);
        Ok(())
    }
    fn begin_word(&mut self) -> Result<(), OutputError> {
        self.shows += 1;
        Ok(())
    }
    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}

/// Whitespace that separates words (NBSP is *not* one: it is kept as text).
fn is_pdf_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{000C}')
}

/// Whether [`clean_glyph_text`] would change `c`.
fn needs_cleaning(c: char) -> bool {
    (is_pdf_space(c) && c != ' ') || c.is_control() || docintel_schema::text::expand_ligature(c).is_some()
}

/// Expands ligatures and drops control characters; other text is kept as is.
pub(crate) fn clean_glyph_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if let Some(letters) = docintel_schema::text::expand_ligature(c) {
            out.push_str(letters);
            continue;
        }
        match c {
            c if is_pdf_space(c) => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Puts a page's lines in reading order: with a column gutter, lines that
/// span it at a word gap are split there and each band between full-width
/// lines reads left column, then right column; otherwise rows top to bottom.
pub(crate) fn reading_order(lines: Vec<RawLine>) -> Vec<RawLine> {
    match find_gutter(&lines) {
        Some(gutter) => column_order(split_at_gutter(lines, gutter), gutter),
        None => row_order(lines),
    }
}

/// Sorts lines top to bottom, then left to right. Lines whose vertical
/// centres are within half a line height of a row's first line share the row.
fn row_order(mut lines: Vec<RawLine>) -> Vec<RawLine> {
    let key = |l: &RawLine| (l.bbox.y0 + l.bbox.y1) / 2.0;
    lines.sort_by(|a, b| key(b).total_cmp(&key(a)).then(a.bbox.x0.total_cmp(&b.bbox.x0)));
    let mut out = Vec::with_capacity(lines.len());
    let mut row: Vec<RawLine> = Vec::new();
    let mut row_centre = 0.0f32;
    let mut row_tol = 0.0f32;
    for line in lines {
        let centre = key(&line);
        let height = (line.bbox.y1 - line.bbox.y0).max(1.0);
        if !row.is_empty() && (row_centre - centre).abs() > row_tol.min(height / 2.0) {
            row.sort_by(|a, b| a.bbox.x0.total_cmp(&b.bbox.x0));
            out.append(&mut row);
        }
        if row.is_empty() {
            row_centre = centre;
            row_tol = height / 2.0;
        }
        row.push(line);
    }
    row.sort_by(|a, b| a.bbox.x0.total_cmp(&b.bbox.x0));
    out.append(&mut row);
    out
}

/// Fewer lines than this on a page: no column detection.
const GUTTER_MIN_LINES: usize = 9;
/// Each column needs at least this many lines (or line parts).
const GUTTER_MIN_SIDE_LINES: usize = 8;
/// At most this share of the line parts may cross the gutter (titles, figures).
const GUTTER_MAX_CROSSING_SHARE: f32 = 0.25;
/// The gutter lies within this central share of the text extent.
const GUTTER_CENTRAL: (f32, f32) = (0.3, 0.7);
/// Narrowest accepted gutter, in points.
const GUTTER_MIN_WIDTH: f32 = 4.0;
/// Column lines are long: median part width at least this share of the column.
const GUTTER_MIN_FILL: f32 = 0.5;

/// A word gap this wide (in ems of the line's font) may be a column gutter;
/// narrower ones are ordinary (even justified) word spaces.
const GUTTER_MIN_GAP_EM: f32 = 0.8;

/// Whether a gap of `line` is wide enough to be a gutter.
fn is_wide(line: &RawLine, gap: &Gap) -> bool {
    gap.x_start - gap.x_end >= GUTTER_MIN_GAP_EM * line.font_size.max(1.0)
}

/// The x extents of a line's text runs (its box cut at its wide gaps).
fn word_spans(line: &RawLine) -> Vec<(f32, f32)> {
    let mut spans = Vec::with_capacity(line.gaps.len() + 1);
    let mut x0 = line.bbox.x0;
    for gap in line.gaps.iter().filter(|g| is_wide(line, g)) {
        spans.push((x0, gap.x_end));
        x0 = gap.x_start;
    }
    spans.push((x0, line.bbox.x1));
    spans
}

fn median(mut values: Vec<f32>) -> f32 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f32::total_cmp);
    values[values.len() / 2]
}

/// Finds a column gutter: an x in the central part of the text extent that
/// few lines' words cover, with enough long lines (or line parts) on each
/// side. Returns the middle of the widest such band.
fn find_gutter(lines: &[RawLine]) -> Option<f32> {
    if lines.len() < GUTTER_MIN_LINES {
        return None;
    }
    let xmin = lines.iter().map(|l| l.bbox.x0).fold(f32::MAX, f32::min);
    let xmax = lines.iter().map(|l| l.bbox.x1).fold(f32::MIN, f32::max);
    let width = xmax - xmin;
    if !(width.is_finite() && width > 4.0 * GUTTER_MIN_WIDTH) {
        return None;
    }
    let spans: Vec<Vec<(f32, f32)>> = lines.iter().map(word_spans).collect();
    let covered = |g: f32| spans.iter().filter(|s| s.iter().any(|&(a, b)| a < g && g < b)).count();
    // Coverage on a 1-point grid over the central part.
    let lo = xmin + GUTTER_CENTRAL.0 * width;
    let hi = xmin + GUTTER_CENTRAL.1 * width;
    let steps = ((hi - lo).max(0.0) as usize).min(2000);
    let coverage: Vec<(f32, usize)> = (0..=steps).map(|i| lo + i as f32).map(|g| (g, covered(g))).collect();
    let best = coverage.iter().map(|&(_, c)| c).min()?;
    // The widest run of grid points at the minimal coverage.
    let mut run: Option<(f32, f32)> = None;
    let mut widest: Option<(f32, f32)> = None;
    for &(g, c) in &coverage {
        if c == best {
            run = Some(run.map_or((g, g), |(a, _)| (a, g)));
            if let Some((a, b)) = run
                && widest.is_none_or(|(wa, wb)| b - a > wb - wa)
            {
                widest = Some((a, b));
            }
        } else {
            run = None;
        }
    }
    let (a, b) = widest?;
    if b - a + 1.0 < GUTTER_MIN_WIDTH {
        return None;
    }
    let g = (a + b) / 2.0;
    // Parts on each side of g, from lines not covering it.
    let mut left = Vec::new();
    let mut right = Vec::new();
    for s in &spans {
        if s.iter().any(|&(a, b)| a < g && g < b) {
            continue;
        }
        let l: Vec<&(f32, f32)> = s.iter().filter(|&&(_, b)| b <= g).collect();
        let r: Vec<&(f32, f32)> = s.iter().filter(|&&(a, _)| a >= g).collect();
        if let (Some(first), Some(last)) = (l.first(), l.last()) {
            left.push(last.1 - first.0);
        }
        if let (Some(first), Some(last)) = (r.first(), r.last()) {
            right.push(last.1 - first.0);
        }
    }
    if left.len() < GUTTER_MIN_SIDE_LINES || right.len() < GUTTER_MIN_SIDE_LINES {
        return None;
    }
    if best as f32 > GUTTER_MAX_CROSSING_SHARE * (left.len() + right.len() + best) as f32 {
        return None;
    }
    let (ml, mr) = (median(left), median(right));
    if ml < GUTTER_MIN_FILL * (g - xmin) || mr < GUTTER_MIN_FILL * (xmax - g) {
        return None;
    }
    Some(g)
}

/// Splits every line that has a word gap around `gutter` into its two parts.
fn split_at_gutter(lines: Vec<RawLine>, gutter: f32) -> Vec<RawLine> {
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        let cut = line.gaps.iter().position(|g| g.x_end <= gutter && gutter <= g.x_start && is_wide(&line, g));
        let Some(i) = cut else {
            out.push(line);
            continue;
        };
        let gap = line.gaps[i];
        let (Some(head), Some(tail)) = (line.text.get(..gap.at), line.text.get(gap.at..)) else {
            out.push(line);
            continue;
        };
        let (head, tail) = (head.trim_end().to_string(), tail.trim_start().to_string());
        if head.is_empty() || tail.is_empty() {
            out.push(line);
            continue;
        }
        let shift = line.text.len() - tail.len();
        let left_gaps = line.gaps[..i].to_vec();
        let right_gaps =
            line.gaps[i + 1..].iter().filter_map(|g| g.at.checked_sub(shift).map(|at| Gap { at, ..*g })).collect();
        let bbox = line.bbox;
        out.push(RawLine {
            text: head,
            bbox: BBox { x1: gap.x_end.max(bbox.x0), ..bbox },
            font_size: line.font_size,
            gaps: left_gaps,
            hidden: line.hidden,
        });
        out.push(RawLine {
            text: tail,
            bbox: BBox { x0: gap.x_start.min(bbox.x1), ..bbox },
            font_size: line.font_size,
            gaps: right_gaps,
            hidden: line.hidden,
        });
    }
    out
}

/// Left column, then right column, within each band between full-width lines.
fn column_order(lines: Vec<RawLine>, gutter: f32) -> Vec<RawLine> {
    let centre = |l: &RawLine| (l.bbox.y0 + l.bbox.y1) / 2.0;
    let (mut full, parts): (Vec<RawLine>, Vec<RawLine>) =
        lines.into_iter().partition(|l| l.bbox.x0 < gutter && gutter < l.bbox.x1);
    full.sort_by(|a, b| centre(b).total_cmp(&centre(a)).then(a.bbox.x0.total_cmp(&b.bbox.x0)));
    let n_bands = full.len() + 1;
    let mut left: Vec<Vec<RawLine>> = vec![Vec::new(); n_bands];
    let mut right: Vec<Vec<RawLine>> = vec![Vec::new(); n_bands];
    for line in parts {
        let c = centre(&line);
        let band = full.iter().filter(|f| centre(f) > c).count();
        if line.bbox.x1 <= gutter {
            left[band].push(line);
        } else {
            right[band].push(line);
        }
    }
    let mut out = Vec::new();
    let mut full = full.into_iter();
    for (l, r) in left.into_iter().zip(right) {
        out.extend(row_order(l));
        out.extend(row_order(r));
        out.extend(full.next());
    }
    out
}

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

    fn contains(&self, (x, y): (f64, f64)) -> bool {
        self.x0 <= x && x <= self.x1 && self.y0 <= y && y <= self.y1
    }

    /// Whether `inner` lies inside (within the clip tolerance).
    fn contains_rect(&self, inner: Rect) -> bool {
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
const WHITE: Rgb = Rgb(1.0, 1.0, 1.0);
const BLACK: Rgb = Rgb(0.0, 0.0, 0.0);

impl Rgb {
    fn same_as(self, other: Rgb) -> bool {
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

    fn trm(x: f64, y: f64) -> Transform {
        Transform::row_major(1.0, 0.0, 0.0, 1.0, x, y)
    }

    /// Feeds `text` as glyphs of `size` points, each 0.5 em wide, from (x, y).
    fn feed(c: &mut GlyphCollector, text: &str, x: f64, y: f64, size: f64) {
        let mut x = x;
        for ch in text.chars() {
            c.add_glyph(&trm(x, y), 0.5, size, &ch.to_string());
            x += 0.5 * size;
        }
    }

    #[test]
    fn groups_glyphs_into_words_and_lines() {
        let mut c = GlyphCollector::default();
        feed(&mut c, "Total", 100.0, 700.0, 10.0);
        // Gap of half an em → a space, same line.
        feed(&mut c, "due", 130.0, 700.0, 10.0);
        // Gap of 1 em (over 0.8, a tab stop) → a new line on the same row.
        feed(&mut c, "4.11", 155.0, 700.0, 10.0);
        // Next line below.
        feed(&mut c, "Second line", 100.0, 686.0, 10.0);
        let lines = c.finish();
        let texts: Vec<_> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["Total due", "4.11", "Second line"]);
        assert_eq!(lines[0].font_size, 10.0);
        let b = lines[0].bbox;
        assert!(b.x0 >= 99.0 && b.x0 <= 100.5 && b.x1 > 140.0 && b.y0 < 700.0 && b.y1 > 700.0, "{b:?}");
    }

    #[test]
    fn large_gap_splits_and_rows_sort_left_to_right() {
        let mut c = GlyphCollector::default();
        // Emitted right column first; reading order must put the left one first.
        feed(&mut c, "4.11", 400.0, 500.0, 10.0);
        feed(&mut c, "Total", 100.0, 500.5, 10.0);
        feed(&mut c, "Header", 100.0, 600.0, 10.0);
        let lines = c.finish();
        let texts: Vec<_> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["Header", "Total", "4.11"]);
    }

    #[test]
    fn ligatures_expand_and_nbsp_is_kept() {
        assert_eq!(clean_glyph_text("\u{FB01}ne \u{FB03}x"), "fine ffix");
        assert_eq!(clean_glyph_text("a\u{00A0}b\u{0000}"), "a\u{00A0}b");
    }

    #[test]
    fn whitespace_only_lines_are_dropped_and_overprint_removed() {
        let mut c = GlyphCollector::default();
        c.add_glyph(&trm(10.0, 10.0), 0.25, 10.0, " ");
        c.add_glyph(&trm(10.0, 300.0), 0.5, 10.0, "A");
        c.add_glyph(&trm(10.3, 300.0), 0.5, 10.0, "A");
        let lines = c.finish();
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].text, "A");
    }

    #[test]
    fn upside_down_page_reads_top_down() {
        let mut c = GlyphCollector::default();
        let flipped = |x: f64, y: f64| Transform::row_major(1.0, 0.0, 0.0, -1.0, x, y);
        // y grows downward: "first" at y=100 is the top line.
        for (i, ch) in "second".chars().enumerate() {
            c.add_glyph(&flipped(100.0 + 5.0 * i as f64, 130.0), 0.5, 10.0, &ch.to_string());
        }
        for (i, ch) in "first".chars().enumerate() {
            c.add_glyph(&flipped(100.0 + 5.0 * i as f64, 100.0), 0.5, 10.0, &ch.to_string());
        }
        let lines = c.finish();
        let texts: Vec<_> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["first", "second"]);
        assert!(lines.iter().all(|l| l.bbox.y0 < l.bbox.y1));
    }

    #[test]
    fn columns_split_at_wide_gaps_but_titles_stay_whole() {
        let mut c = GlyphCollector::default();
        let title = "Title words spanning the whole page width here";
        feed(&mut c, title, 72.0, 780.0, 10.0);
        for i in 0..10 {
            let y = 740.0 - 14.0 * f64::from(i);
            // 24 characters per column: left 72..192, right 214..334.
            feed(&mut c, &format!("left column row {i:02} text"), 72.0, y, 10.0);
            feed(&mut c, &format!("right column row {i:02} tx"), 214.0, y, 10.0);
        }
        let lines = c.finish();
        let texts: Vec<_> = lines.iter().map(|l| l.text.as_str()).collect();
        let mut want = vec![title.to_owned()];
        want.extend((0..10).map(|i| format!("left column row {i:02} text")));
        want.extend((0..10).map(|i| format!("right column row {i:02} tx")));
        assert_eq!(texts, want);
        let right = &lines[11];
        assert!(right.bbox.x0 >= 213.0 && right.bbox.x1 <= 335.0, "{:?}", right.bbox);
    }

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

    #[test]
    fn backward_jump_starts_new_line() {
        let mut c = GlyphCollector::default();
        feed(&mut c, "abc", 100.0, 500.0, 10.0);
        feed(&mut c, "xyz", 50.0, 500.0, 10.0);
        let lines = c.finish();
        let texts: Vec<_> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["xyz", "abc"]);
    }
}
