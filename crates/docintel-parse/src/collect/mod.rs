//! Glyph collection and line grouping.
//!
//! [`GlyphCollector`] implements pdf-extract's [`OutputDev`]: it receives every
//! glyph of a page with its text-rendering matrix, advance width and font size,
//! and groups the glyphs into lines itself. Geometry is done along each glyph's
//! own baseline direction, so rotated text still forms lines.
//!
//! pdf-extract ignores clipping, so [`scan_clips`] (submodule `clips`) walks the page's decoded
//! content (decoded once per page, forms once per document) a second time, mirroring pdf-extract's own operator walk, and
//! records for every string it shows the visible rectangle then in force (the
//! crop box intersected with the bounding boxes of the clipping paths).
//! Glyphs whose box does not meet that rectangle are hidden and dropped.
//!
//! [`GlyphCollector::finish`] then (submodule `order`) finds a column gutter per page (an x band
//! crossed by few lines, with long lines on both sides), splits the lines
//! that span it at their word gap, and emits each band of the page between
//! full-width lines as left column, then right column.

use std::borrow::Cow;
use std::time::Instant;

use docintel_schema::BBox;
use pdf_extract::{MediaBox, OutputDev, OutputError, Transform};

mod clips;
mod order;

pub(crate) use clips::{PageScan, ScanError, scan_clips};
use clips::{Rect, Rgb, WHITE};
pub(crate) use order::reading_order;

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
    fn backward_jump_starts_new_line() {
        let mut c = GlyphCollector::default();
        feed(&mut c, "abc", 100.0, 500.0, 10.0);
        feed(&mut c, "xyz", 50.0, 500.0, 10.0);
        let lines = c.finish();
        let texts: Vec<_> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["xyz", "abc"]);
    }
}
