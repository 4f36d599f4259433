//! Tables read by layout: the column header and the row label of a cell.
//!
//! A table's text layer comes out as pieces: a row label, then one piece per
//! cell, each with its box (`BBox`, PDF points, origin bottom-left). Here a
//! page's pieces are grouped into visual rows, and for a cell:
//!
//! - its **row** is its visual row, its **row label** the leftmost piece of
//!   that row when it is words (not a figure) and not the cell itself;
//! - its **block** is the run of visual rows above it that stays close
//!   (gaps under [`MAX_GAP`] row heights) and is not cut by a wide line
//!   starting at the label column (a caption, a heading, a paragraph);
//! - the wide line that cuts the block is the table's **caption** (its
//!   title, or the heading it sits under);
//! - the block's **header zone** is its rows above the first data row (a
//!   row with a figure that is not a year, or a labelled row of several
//!   pieces below the first): "Garantie | Tiers Simple | Tiers+", "BLEU" over
//!   "EN-DE | EN-FR", "(Millions) 2018 2017 2016";
//! - its **column headers** are, in each header row, the piece whose centre
//!   is nearest the cell's, right of the label column (a spanning header
//!   such as "BLEU" over two columns is the nearest for both), when it stands
//!   over the cell's column (apart by at most half their widths together).
//!
//! A cell under a header whose words the question names, on a row whose
//! label names the rest ("the plafond bris de glace in formule Tiers+", "the
//! EN-DE BLEU of GNMT + RL") is what a table answers; the reader weighs it
//! (features `header_cov`, `cell_both`).

use docintel_schema::Line;

use crate::layout::{has_box, same_row};

/// Largest vertical gap inside a table, in row heights.
const MAX_GAP: f32 = 2.0;
/// Most rows walked above a cell.
const MAX_ROWS: usize = 60;

/// One visual row: pieces left to right.
#[derive(Debug)]
struct VisualRow<'d> {
    pieces: Vec<&'d Line>,
    /// Lowest bottom and highest top of its pieces.
    bottom: f32,
    top: f32,
}

impl VisualRow<'_> {
    fn height(&self) -> f32 {
        self.pieces.iter().map(|l| (l.bbox.y1 - l.bbox.y0).max(1.0)).fold(1.0, f32::max)
    }
}

/// Where a cell sits in its table.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cell<'d> {
    /// The leftmost piece of its row, when words.
    pub(crate) row_label: Option<&'d Line>,
    /// Its column headers, top to bottom.
    pub(crate) headers: Vec<&'d Line>,
    /// The wide line right above the table (its title or the heading it
    /// sits under), when one cut the block.
    pub(crate) caption: Option<&'d Line>,
}

/// The visual rows of one page.
#[derive(Debug)]
pub(crate) struct Tables<'d> {
    rows: Vec<VisualRow<'d>>,
}

fn centre(l: &Line) -> f32 {
    (l.bbox.x0 + l.bbox.x1) / 2.0
}

/// A year standing alone ("2018", "Fiscal 2019", "FY2020", "January 28,
/// 2023"): a column header of a statement, not a figure.
fn year_like(text: &str) -> bool {
    crate::statement::column_year(text).is_some()
}

impl<'d> Tables<'d> {
    /// The visual rows of the boxed lines of `page` (one page's lines).
    pub(crate) fn new(page: &'d [Line]) -> Tables<'d> {
        let mut lines: Vec<&'d Line> = page.iter().filter(|l| has_box(&l.bbox)).collect();
        lines.sort_by(|a, b| {
            let ca = (a.bbox.y0 + a.bbox.y1) / 2.0;
            let cb = (b.bbox.y0 + b.bbox.y1) / 2.0;
            cb.total_cmp(&ca).then(a.bbox.x0.total_cmp(&b.bbox.x0))
        });
        let mut rows: Vec<VisualRow<'d>> = Vec::new();
        for line in lines {
            match rows.last_mut() {
                Some(row) if row.pieces.iter().any(|p| same_row(&p.bbox, &line.bbox)) => {
                    row.pieces.push(line);
                    row.bottom = row.bottom.min(line.bbox.y0);
                    row.top = row.top.max(line.bbox.y1);
                }
                _ => rows.push(VisualRow { pieces: vec![line], bottom: line.bbox.y0, top: line.bbox.y1 }),
            }
        }
        for row in &mut rows {
            row.pieces.sort_by(|a, b| a.bbox.x0.total_cmp(&b.bbox.x0).then(a.line_id.cmp(&b.line_id)));
        }
        Tables { rows }
    }

    /// The place of `line` in its table: row label and column headers
    /// (`None` for a line that is no cell: alone on its row, or the row's
    /// label itself; the first value of a row without a label is a cell).
    /// `is_value` tells a figure cell from words.
    pub(crate) fn cell(&self, line: &Line, is_value: impl Fn(&Line) -> bool) -> Option<Cell<'d>> {
        let r = self.rows.iter().position(|row| row.pieces.iter().any(|p| p.line_id == line.line_id))?;
        let row = &self.rows[r];
        if row.pieces.len() < 2 {
            return None;
        }
        let first = row.pieces[0];
        let row_label =
            (!is_value(first) || first.text.chars().filter(|c| c.is_alphabetic()).count() >= 2).then_some(first);
        // The row's label is no cell; a row of values only ("03/20/2023
        // 04/04/2023 CUSTREF123" under "Invoice Date: Due Date: Reference:")
        // has its first value under a header like the others.
        if row_label.is_some() && first.line_id == line.line_id {
            return None;
        }
        let label_x0 = first.bbox.x0;
        let label_right = row_label.map_or(label_x0, |l| l.bbox.x1);
        let right = row.pieces.iter().map(|p| p.bbox.x1).fold(f32::MIN, f32::max);
        let width = (right - label_x0).max(1.0);
        let tolerance = 0.5 * row.height();
        // The block: rows above while close, not cut by a wide line at the
        // label column.
        let mut block: Vec<usize> = Vec::new();
        let mut caption: Option<&'d Line> = None;
        let mut below = r;
        for k in (0..r).rev().take(MAX_ROWS) {
            let above = &self.rows[k];
            let gap = above.bottom - self.rows[below].top;
            if gap > MAX_GAP * above.height().max(self.rows[below].height()) {
                break;
            }
            let wide = above.pieces.len() == 1 && {
                let p = above.pieces[0];
                p.bbox.x0 <= label_x0 + 0.25 * width && p.bbox.x1 - p.bbox.x0 >= 0.5 * width
            };
            if wide {
                caption = Some(above.pieces[0]);
                break;
            }
            block.push(k);
            below = k;
        }
        block.reverse();
        // The header zone: the block's rows above its first data row.
        let is_data = |k: usize, topmost: bool| {
            let pieces = &self.rows[k].pieces;
            pieces.iter().any(|p| is_value(p) && !year_like(&p.text))
                || (!topmost && pieces.len() >= 2 && (pieces[0].bbox.x0 - label_x0).abs() <= tolerance)
        };
        let zone: Vec<usize> =
            block.iter().enumerate().take_while(|&(n, &k)| !is_data(k, n == 0)).map(|(_, &k)| k).collect();
        let mid = centre(line);
        let headers: Vec<&'d Line> = zone
            .iter()
            .filter_map(|&k| {
                self.rows[k]
                    .pieces
                    .iter()
                    .copied()
                    // Right of the label column: a sub-heading printed in
                    // it ("Current assets") heads rows, not columns.
                    .filter(|p| p.bbox.x1 > label_right + tolerance)
                    .filter(|p| row_label.is_none() || p.bbox.x0 > label_x0 + tolerance)
                    .min_by(|a, b| (centre(a) - mid).abs().total_cmp(&(centre(b) - mid).abs()))
                    // The nearest piece of a header row heads the cell only
                    // when it stands over its column: "Years" printed over
                    // the last column alone heads no cell of the first.
                    .filter(|p| {
                        let gap = (p.bbox.x0 - line.bbox.x1).max(line.bbox.x0 - p.bbox.x1);
                        gap <= 0.5 * ((p.bbox.x1 - p.bbox.x0) + (line.bbox.x1 - line.bbox.x0)) + tolerance
                    })
            })
            .collect();
        Some(Cell { row_label, headers, caption })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use docintel_schema::BBox;

    fn piece(id: u32, text: &str, x0: f32, y0: f32, x1: f32) -> Line {
        Line { line_id: id, page: 1, line_in_page: id, text: text.to_owned(), bbox: BBox { x0, y0, x1, y1: y0 + 9.0 } }
    }

    /// Figures, and at most one word of more than three letters.
    fn value(l: &Line) -> bool {
        let long_words =
            l.text.split_whitespace().filter(|w| w.chars().filter(|c| c.is_alphabetic()).count() > 3).count();
        l.text.chars().any(|c| c.is_ascii_digit()) && long_words <= 1
    }

    fn headers<'d>(cell: &Cell<'d>) -> Vec<&'d str> {
        cell.headers.iter().map(|l| l.text.as_str()).collect()
    }

    #[test]
    fn a_cell_reads_its_column_headers_and_row_label() {
        // A results table: a spanning header over two sub-headers, a
        // caption above, a label column.
        let lines = vec![
            piece(
                1,
                "Table 2: The Transformer achieves better BLEU scores than previous models on the",
                108.0,
                711.0,
                504.0,
            ),
            piece(2, "BLEU", 311.0, 685.0, 337.0),
            piece(3, "Training Cost (FLOPs)", 383.0, 685.0, 475.0),
            piece(4, "Model", 137.0, 676.0, 163.0),
            piece(5, "EN-DE", 289.0, 669.0, 319.0),
            piece(6, "EN-FR", 331.0, 669.0, 359.0),
            piece(7, "EN-DE", 387.0, 669.0, 417.0),
            piece(8, "EN-FR", 440.0, 669.0, 469.0),
            piece(9, "ByteNet [18]", 137.0, 657.0, 189.0),
            piece(10, "23.75", 292.0, 657.0, 315.0),
            piece(11, "GNMT + RL [38]", 137.0, 635.0, 208.0),
            piece(12, "24.6", 295.0, 635.0, 312.0),
            piece(13, "39.92", 334.0, 635.0, 356.0),
            piece(14, "2.3 · 1019", 383.0, 635.0, 421.0),
        ];
        let tables = Tables::new(&lines);
        let cell = tables.cell(&lines[11], value).expect("a cell");
        assert_eq!(cell.row_label.map(|l| l.text.as_str()), Some("GNMT + RL [38]"));
        assert_eq!(headers(&cell), ["BLEU", "EN-DE"]);
        assert_eq!(headers(&tables.cell(&lines[12], value).unwrap()), ["BLEU", "EN-FR"]);
        assert_eq!(headers(&tables.cell(&lines[13], value).unwrap()), ["Training Cost (FLOPs)", "EN-DE"]);
        assert!(tables.cell(&lines[10], value).is_none(), "a row label is no cell");
        assert_eq!(cell.caption.map(|l| l.line_id), Some(1), "the caption cut the block");
        assert!(tables.cell(&lines[0], value).is_none(), "a caption is no cell");
    }

    #[test]
    fn a_header_printed_over_another_column_heads_none_of_this_one() {
        // An officers table: "Years / With the / Company" stacked over the
        // last column, "Age" over the second.
        let lines = vec![
            piece(1, "Years", 558.0, 705.0, 577.0),
            piece(2, "With the", 554.0, 697.0, 582.0),
            piece(3, "Name", 19.0, 689.0, 37.0),
            piece(4, "Age", 168.0, 689.0, 182.0),
            piece(5, "Position", 200.0, 689.0, 240.0),
            piece(6, "Company", 552.0, 689.0, 583.0),
            piece(7, "Mathew R. Watson", 19.0, 676.0, 90.0),
            piece(8, "46", 169.0, 676.0, 178.0),
            piece(9, "Chief Accounting Officer", 200.0, 676.0, 300.0),
            piece(10, "11", 563.0, 676.0, 575.0),
        ];
        let tables = Tables::new(&lines);
        let age = headers(&tables.cell(&lines[7], value).unwrap());
        assert!(!age.contains(&"Years") && !age.contains(&"With the"), "{age:?}");
        let years = headers(&tables.cell(&lines[9], value).unwrap());
        assert_eq!(years[..2], ["Years", "With the"]);
    }

    #[test]
    fn text_cells_under_a_header_row_and_a_heading_above() {
        // A benefit table whose cells are words as often as figures.
        let lines = vec![
            piece(1, "Article 2.2 — Plafonds de garantie par formule", 62.0, 555.0, 326.0),
            piece(2, "Garantie", 102.0, 533.0, 138.0),
            piece(3, "Tiers Simple", 207.0, 533.0, 260.0),
            piece(4, "Tiers+", 305.0, 533.0, 332.0),
            piece(5, "Intermédiaire", 382.0, 533.0, 439.0),
            piece(6, "Incendie / Explosion", 55.0, 511.0, 131.0),
            piece(7, "—", 197.0, 511.0, 205.0),
            piece(8, "Valeur Argus", 282.0, 511.0, 331.0),
            piece(9, "Valeur Argus", 367.0, 511.0, 416.0),
            piece(10, "Bris de glace", 55.0, 489.0, 104.0),
            piece(11, "—", 197.0, 489.0, 205.0),
            piece(12, "2 000 €", 282.0, 489.0, 310.0),
            piece(13, "2 000 €", 367.0, 489.0, 395.0),
        ];
        let tables = Tables::new(&lines);
        let cell = tables.cell(&lines[11], value).expect("a cell");
        assert_eq!(cell.row_label.map(|l| l.text.as_str()), Some("Bris de glace"));
        assert_eq!(headers(&cell), ["Tiers+"]);
        assert_eq!(headers(&tables.cell(&lines[12], value).unwrap()), ["Intermédiaire"]);
    }

    #[test]
    fn year_headers_and_far_rows() {
        let lines = vec![
            piece(1, "(Millions)", 50.0, 700.0, 100.0),
            piece(2, "2018", 400.0, 700.0, 424.0),
            piece(3, "2017", 460.0, 700.0, 484.0),
            piece(4, "Net income", 50.0, 688.0, 110.0),
            piece(5, "5,363", 396.0, 688.0, 426.0),
            piece(6, "4,858", 456.0, 688.0, 486.0),
            // Far below: another table without a header.
            piece(7, "Other", 50.0, 400.0, 80.0),
            piece(8, "12", 400.0, 400.0, 412.0),
        ];
        let tables = Tables::new(&lines);
        assert_eq!(headers(&tables.cell(&lines[5], value).unwrap()), ["2017"]);
        assert!(headers(&tables.cell(&lines[7], value).unwrap()).is_empty(), "nothing close above");
    }
}
