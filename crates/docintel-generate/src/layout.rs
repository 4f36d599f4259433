//! Label → value by layout: where a label's value sits on the page.
//!
//! Invoices put a value to the right of its label on the same visual row
//! (`Rechnungsdatum   7. Mai 2014`) or under it in the same column (a header
//! row `Factuur datum` over a value row `8-9-2022`), and the reading order of
//! the extracted lines does not always keep the two together. These helpers
//! read the line boxes ([`docintel_schema::BBox`], PDF points, origin
//! bottom-left) of one page:
//!
//! - **row label** of a value line: the nearest line to its left on the same
//!   row (vertical ranges overlapping by half the smaller height), walking
//!   across value cells (`24.99`, `5.00`) to the first line with words;
//! - **label above**: the nearest line above it whose horizontal range
//!   overlaps, at most [`MAX_GAP_LINES`] line heights away; value cells on the
//!   way are walked across (a table column), in which case the line reached is
//!   the column *header*;
//! - **value of a label** (text answers): the nearest line to the right on the
//!   same row, else the nearest line directly below within the same distance.
//!
//! Lines without a box (zero area: formats without layout, hand-built test
//! documents) have no layout neighbours; callers fall back to reading order.

use docintel_schema::{BBox, Line};

/// How far below a label its value may sit, in line heights.
pub(crate) const MAX_GAP_LINES: f32 = 3.0;

/// The least vertical overlap, in the smaller line height, of a one-line
/// cell with the lines of a taller cell on its table row.
const CELL_OVERLAP: f32 = 0.2;

/// Whether a box carries layout (non-zero area).
pub(crate) fn has_box(b: &BBox) -> bool {
    b.x1 > b.x0 && b.y1 > b.y0
}

fn height(b: &BBox) -> f32 {
    (b.y1 - b.y0).max(1.0)
}

/// Same visual row: vertical ranges overlap by half the smaller height.
/// Whether two boxes sit on one visual row.
pub(crate) fn same_row(a: &BBox, b: &BBox) -> bool {
    let overlap = a.y1.min(b.y1) - a.y0.max(b.y0);
    overlap >= 0.5 * height(a).min(height(b))
}

/// Same column: horizontal ranges overlap.
fn same_column(a: &BBox, b: &BBox) -> bool {
    a.x1.min(b.x1) - a.x0.max(b.x0) > 0.0
}

/// A label found above a line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Above<'d> {
    /// The label line.
    pub(crate) line: &'d Line,
    /// Whether value cells lie between (the label is a column header).
    pub(crate) header: bool,
}

/// The lines of one page, for layout look-ups.
pub(crate) struct PageLayout<'d> {
    lines: Vec<&'d Line>,
}

impl<'d> PageLayout<'d> {
    /// The boxed lines of `page`.
    pub(crate) fn new(lines: &'d [Line], page: u32) -> PageLayout<'d> {
        PageLayout { lines: lines.iter().filter(|l| l.page == page && has_box(&l.bbox)).collect() }
    }

    /// The nearest line to the left of `line` on its row that is not a value
    /// cell, walking across value cells.
    pub(crate) fn row_label(&self, line: &Line, is_value_cell: impl Fn(&Line) -> bool) -> Option<&'d Line> {
        if !has_box(&line.bbox) {
            return None;
        }
        let b = &line.bbox;
        let tolerance = 0.5 * height(b);
        let mut left: Vec<&'d Line> = self
            .lines
            .iter()
            .copied()
            .filter(|k| k.line_id != line.line_id && same_row(&k.bbox, b) && k.bbox.x1 <= b.x0 + tolerance)
            .collect();
        left.sort_by(|p, q| q.bbox.x1.total_cmp(&p.bbox.x1));
        left.into_iter().find(|k| !is_value_cell(k))
    }

    /// The nearest label above `line` in its column (see the module docs).
    pub(crate) fn label_above(&self, line: &Line, is_value_cell: impl Fn(&Line) -> bool) -> Option<Above<'d>> {
        if !has_box(&line.bbox) {
            return None;
        }
        let column = &line.bbox;
        let max_gap = MAX_GAP_LINES * height(column);
        let mut current = *column;
        let mut header = false;
        for _ in 0..self.lines.len() {
            let tolerance = 0.3 * height(&current);
            let next = self
                .lines
                .iter()
                .copied()
                .filter(|k| k.line_id != line.line_id && same_column(&k.bbox, column))
                .filter(|k| k.bbox.y0 >= current.y1 - tolerance && k.bbox.y1 > current.y1)
                .min_by(|p, q| p.bbox.y0.total_cmp(&q.bbox.y0).then(p.line_id.cmp(&q.line_id)))?;
            if next.bbox.y0 - current.y1 > max_gap {
                return None;
            }
            if !is_value_cell(next) {
                return Some(Above { line: next, header });
            }
            header = true;
            current = next.bbox;
        }
        None
    }

    /// The other lines on `line`'s visual row, left to right: the cells of
    /// its table row.
    pub(crate) fn row_mates(&self, line: &Line) -> Vec<&'d Line> {
        self.mates(line, same_row)
    }

    /// The row mates of a one-line cell set beside a taller cell: the lines
    /// of other columns whose height it overlaps at all. A name printed
    /// against the middle of a three-line description ("Kevin G.
    /// McAllister | 55 | Executive Vice President, … / since November
    /// 2016. …") sits between two of its lines, on the row of neither.
    pub(crate) fn cell_mates(&self, line: &Line) -> Vec<&'d Line> {
        self.mates(line, |a, b| {
            let overlap = a.y1.min(b.y1) - a.y0.max(b.y0);
            overlap >= CELL_OVERLAP * height(a).min(height(b)) && !same_column(a, b)
        })
    }

    fn mates(&self, line: &Line, mate: impl Fn(&BBox, &BBox) -> bool) -> Vec<&'d Line> {
        if !has_box(&line.bbox) {
            return Vec::new();
        }
        let mut mates: Vec<&'d Line> =
            self.lines.iter().copied().filter(|k| k.line_id != line.line_id && mate(&k.bbox, &line.bbox)).collect();
        mates.sort_by(|a, b| a.bbox.x0.total_cmp(&b.bbox.x0));
        mates
    }

    /// The line right under `line` in its column (at most one line height
    /// below it): the caption a signature block prints under a name ("Mark
    /// G. Parker" over "Chairman, President and Chief Executive Officer").
    pub(crate) fn caption_below(&self, line: &Line) -> Option<&'d Line> {
        if !has_box(&line.bbox) {
            return None;
        }
        let b = &line.bbox;
        self.lines
            .iter()
            .copied()
            .filter(|k| k.line_id != line.line_id && same_column(&k.bbox, b) && k.bbox.y1 <= b.y0 + 0.3 * height(b))
            .filter(|k| b.y0 - k.bbox.y1 <= height(b))
            .max_by(|p, q| p.bbox.y1.total_cmp(&q.bbox.y1).then(q.line_id.cmp(&p.line_id)))
    }

    /// Where the value of the label `line` sits: the nearest line to its
    /// right on the same row, else the nearest line directly below (within
    /// [`MAX_GAP_LINES`] line heights).
    pub(crate) fn value_of_label(&self, line: &Line) -> Option<&'d Line> {
        if !has_box(&line.bbox) {
            return None;
        }
        let b = &line.bbox;
        let tolerance = 0.5 * height(b);
        let right = self
            .lines
            .iter()
            .copied()
            .filter(|k| k.line_id != line.line_id && same_row(&k.bbox, b) && k.bbox.x0 >= b.x1 - tolerance)
            .min_by(|p, q| p.bbox.x0.total_cmp(&q.bbox.x0));
        if right.is_some() {
            return right;
        }
        self.lines
            .iter()
            .copied()
            .filter(|k| k.line_id != line.line_id && same_column(&k.bbox, b) && k.bbox.y1 <= b.y0 + 0.3 * height(b))
            .filter(|k| b.y0 - k.bbox.y1 <= MAX_GAP_LINES * height(b))
            .max_by(|p, q| p.bbox.y1.total_cmp(&q.bbox.y1).then(q.line_id.cmp(&p.line_id)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn line(id: u32, text: &str, x0: f32, y0: f32, x1: f32, y1: f32) -> Line {
        Line { line_id: id, page: 1, line_in_page: id, text: text.to_owned(), bbox: BBox { x0, y0, x1, y1 } }
    }

    fn numeric(l: &Line) -> bool {
        l.text.chars().any(|c| c.is_ascii_digit()) && !l.text.chars().any(char::is_alphabetic)
    }

    #[test]
    fn row_label_walks_across_value_cells() {
        // free_fiber: "Total facture  24.99  5.00  29.99"
        let lines = vec![
            line(1, "Total facture", 40.0, 407.9, 111.0, 417.9),
            line(2, "24.99", 335.0, 407.9, 366.6, 417.9),
            line(3, "5.00", 430.6, 407.9, 455.2, 417.9),
            line(4, "29.99", 530.0, 407.9, 561.6, 417.9),
            line(5, "Other row", 40.0, 393.9, 231.7, 403.9),
        ];
        let layout = PageLayout::new(&lines, 1);
        assert_eq!(layout.row_label(&lines[3], numeric).map(|l| l.line_id), Some(1));
        assert_eq!(layout.row_label(&lines[0], numeric).map(|l| l.line_id), None);
        assert_eq!(layout.value_of_label(&lines[0]).map(|l| l.line_id), Some(2));
    }

    #[test]
    fn label_above_and_column_header() {
        // saeco: header row then value row; free_fiber: a column of amounts.
        let lines = vec![
            line(1, "Factuur datum", 314.9, 552.1, 374.3, 560.1),
            line(2, "SCONL000000444", 143.9, 539.9, 210.9, 547.9),
            line(3, "8-9-2022", 338.3, 539.9, 370.8, 547.9),
            line(4, "Montant EUR TTC", 487.0, 460.3, 565.9, 468.3),
            line(5, "29.99", 530.0, 443.9, 558.5, 453.9),
            line(6, "0.00", 535.5, 433.9, 557.7, 443.9),
            line(7, "0.00", 535.5, 423.9, 557.7, 433.9),
            line(8, "29.99", 530.0, 407.9, 561.6, 417.9),
            line(9, "far below", 530.0, 100.0, 561.6, 110.0),
        ];
        let layout = PageLayout::new(&lines, 1);
        let above = |i: usize| layout.label_above(&lines[i], numeric).map(|a| (a.line.line_id, a.header));
        assert_eq!(above(2), Some((1, false)));
        assert_eq!(above(4), Some((4, false)));
        assert_eq!(above(7), Some((4, true)));
        assert_eq!(above(8), None, "more than three line heights away");
        assert_eq!(layout.value_of_label(&lines[0]).map(|l| l.line_id), Some(3));
    }

    #[test]
    fn a_one_line_cell_meets_the_lines_of_the_taller_cell_beside_it() {
        // BOEING_2018_10K p.123: the name faces the middle of its description.
        let lines = vec![
            line(
                1,
                "Executive Vice President, President and Chief Executive Officer, Boeing Commercial Airplanes",
                209.25,
                560.52,
                591.38,
                569.3,
            ),
            line(2, "Kevin G. McAllister", 18.9, 555.12, 93.01, 563.89),
            line(3, "55", 180.08, 555.12, 189.83, 563.89),
            line(
                4,
                "since November 2016. Mr. McAllister served as President and Chief Executive Officer of GE",
                209.25,
                549.72,
                591.8,
                558.5,
            ),
            line(5, "Marketing of GE Aviation from June 2008 to January 2014.", 209.25, 528.12, 437.51, 536.9),
            line(6, "Dennis A. Muilenburg", 18.9, 509.22, 102.61, 518.0),
        ];
        let layout = PageLayout::new(&lines, 1);
        let ids = |mates: Vec<&Line>| mates.iter().map(|l| l.line_id).collect::<Vec<_>>();
        assert_eq!(ids(layout.row_mates(&lines[1])), [3]);
        assert_eq!(ids(layout.cell_mates(&lines[1])), [3, 1, 4]);
        assert_eq!(ids(layout.cell_mates(&lines[5])), Vec::<u32>::new());
    }

    #[test]
    fn no_box_no_layout() {
        let lines = vec![line(1, "Total", 0.0, 0.0, 0.0, 0.0), line(2, "4.11", 0.0, 0.0, 0.0, 0.0)];
        let layout = PageLayout::new(&lines, 1);
        assert!(layout.row_label(&lines[1], numeric).is_none());
        assert!(layout.label_above(&lines[1], numeric).is_none());
        assert!(layout.value_of_label(&lines[0]).is_none());
    }
}
