//! Reading order: a page's lines sorted into rows, or, with a column gutter
//! (an x band crossed by few lines, with long lines on both sides), split at
//! it and read band by band, left column then right column.

use docintel_schema::BBox;

use super::{Gap, RawLine};

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
