//! Table detection for the profile's `has_tables`: aligned columns on a page.
//!
//! The glyph collector breaks a line at wide horizontal gaps, so the cells of a table row come
//! out as separate lines on one baseline. Lines of a page are grouped into **rows** (same
//! baseline within [`BASELINE_TOLERANCE`] of the line height); a run of at least [`MIN_ROWS`]
//! consecutive rows with two or more cells is a table when its cells start (or, for numbers,
//! end) at shared x-positions — an anchor is shared when at least [`ANCHOR_SHARE`] of the
//! run's rows (and at least [`MIN_ROWS`]) have a cell there, within [`X_TOLERANCE`] points —
//! and either
//! - there are three or more shared anchors, or
//! - there are two and the cells are table-like: most rows carry a numeric cell after the
//!   first, or the cells are short (median width under [`SHORT_CELL`] of the page width).
//!
//! The second condition keeps two-column prose (two long cells per row) from counting.
//! Text documents count Markdown pipe tables and runs of tab-separated rows.

use docintel_schema::{Line, PageInfo};

/// Rows in a run before it can be a table.
pub(crate) const MIN_ROWS: usize = 3;
/// Share of a run's rows that must have a cell at an anchor.
pub(crate) const ANCHOR_SHARE: f32 = 0.6;
/// How far apart (points) two cell edges can be and still align.
pub(crate) const X_TOLERANCE: f32 = 3.0;
/// Baseline difference, as a share of line height, within which lines share a row.
pub(crate) const BASELINE_TOLERANCE: f32 = 0.4;
/// Cells narrower than this share of the page width are short.
pub(crate) const SHORT_CELL: f32 = 0.25;

/// One cell of a row: left and right edges and whether it reads as a number.
#[derive(Debug, Clone, Copy)]
struct Cell {
    x0: f32,
    x1: f32,
    numeric: bool,
}

/// Pages (1-based, ascending) on which a table is detected.
pub(crate) fn table_pages(lines: &[Line], pages: &[PageInfo]) -> Vec<u32> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < lines.len() {
        let page = lines[start].page;
        let end = start + lines[start..].iter().take_while(|l| l.page == page).count();
        let width = pages
            .iter()
            .find(|p| p.page == page)
            .map(|p| p.width)
            .filter(|w| *w > 0.0)
            .unwrap_or_else(|| lines[start..end].iter().map(|l| l.bbox.x1).fold(0.0, f32::max));
        if page_has_table(&lines[start..end], width) {
            out.push(page);
        }
        start = end;
    }
    out
}

/// Whether one page's lines hold an aligned table.
fn page_has_table(lines: &[Line], page_width: f32) -> bool {
    let rows = rows_of(lines);
    let mut i = 0;
    while i < rows.len() {
        if rows[i].len() < 2 {
            i += 1;
            continue;
        }
        let j = i + rows[i..].iter().take_while(|r| r.len() >= 2).count();
        if j - i >= MIN_ROWS && run_is_table(&rows[i..j], page_width) {
            return true;
        }
        i = j;
    }
    false
}

/// Groups a page's lines into rows by baseline, each row's cells sorted left to right.
fn rows_of(lines: &[Line]) -> Vec<Vec<Cell>> {
    let mut sorted: Vec<&Line> = lines.iter().collect();
    sorted.sort_by(|a, b| b.bbox.y0.total_cmp(&a.bbox.y0).then(a.bbox.x0.total_cmp(&b.bbox.x0)));
    let mut rows: Vec<(f32, Vec<Cell>)> = Vec::new();
    for line in sorted {
        let height = (line.bbox.y1 - line.bbox.y0).abs().max(1.0);
        let cell = Cell { x0: line.bbox.x0, x1: line.bbox.x1, numeric: is_numeric(&line.text) };
        match rows.last_mut() {
            Some((baseline, cells)) if (*baseline - line.bbox.y0).abs() <= BASELINE_TOLERANCE * height => {
                cells.push(cell)
            }
            _ => rows.push((line.bbox.y0, vec![cell])),
        }
    }
    rows.into_iter()
        .map(|(_, mut cells)| {
            cells.sort_by(|a, b| a.x0.total_cmp(&b.x0));
            cells
        })
        .collect()
}

fn run_is_table(rows: &[Vec<Cell>], page_width: f32) -> bool {
    let needed = ((rows.len() as f32 * ANCHOR_SHARE).ceil() as usize).max(MIN_ROWS);
    let lefts = shared_anchors(rows, |c| Some(c.x0), needed);
    // Right edges count only for numeric cells (right-aligned figures).
    let rights = shared_anchors(rows, |c| c.numeric.then_some(c.x1), needed);
    let anchors = lefts + rights;
    if anchors >= 3 {
        return true;
    }
    if anchors < 2 {
        return false;
    }
    let numeric_rows = rows.iter().filter(|r| r.iter().skip(1).any(|c| c.numeric)).count();
    if numeric_rows * 2 >= rows.len() {
        return true;
    }
    let mut widths: Vec<f32> = rows.iter().flatten().map(|c| c.x1 - c.x0).collect();
    widths.sort_by(f32::total_cmp);
    let median = widths.get(widths.len() / 2).copied().unwrap_or(0.0);
    page_width > 0.0 && median < SHORT_CELL * page_width
}

/// Number of x-positions (clusters within [`X_TOLERANCE`]) at which at least `needed` rows
/// have a cell edge.
fn shared_anchors(rows: &[Vec<Cell>], edge: impl Fn(&Cell) -> Option<f32>, needed: usize) -> usize {
    let edge = &edge;
    let mut edges: Vec<(f32, usize)> = rows
        .iter()
        .enumerate()
        .flat_map(|(r, cells)| cells.iter().filter_map(move |c| edge(c).map(|x| (x, r))))
        .collect();
    edges.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut count = 0;
    let mut i = 0;
    while i < edges.len() {
        let mut j = i + 1;
        while j < edges.len() && edges[j].0 - edges[j - 1].0 <= X_TOLERANCE {
            j += 1;
        }
        let mut row_ids: Vec<usize> = edges[i..j].iter().map(|e| e.1).collect();
        row_ids.dedup();
        row_ids.sort_unstable();
        row_ids.dedup();
        if row_ids.len() >= needed {
            count += 1;
        }
        i = j;
    }
    count
}

/// `1,234.50`, `(12)`, `-3 %`, `$ 40`, `12.5%`: digits with number punctuation only.
fn is_numeric(text: &str) -> bool {
    let t = text.trim();
    t.chars().any(|c| c.is_ascii_digit())
        && t.chars().all(|c| c.is_ascii_digit() || " .,%()+-−–$€£¥'\u{a0}\u{202f}".contains(c))
}

/// Text documents: a Markdown pipe table (a header row, a `|---|` separator, a row) or
/// [`MIN_ROWS`] consecutive rows with the same number (two or more) of tab-separated cells.
pub(crate) fn text_has_table<'a>(lines: impl Iterator<Item = &'a str>) -> bool {
    let lines: Vec<&str> = lines.map(str::trim).collect();
    let is_separator =
        |l: &str| l.contains('-') && l.contains('|') && l.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'));
    let pipe_table = lines.windows(3).any(|w| w[0].contains('|') && is_separator(w[1]) && w[2].contains('|'));
    let tab_cells = |l: &str| l.split('\t').filter(|c| !c.trim().is_empty()).count();
    let tab_table = lines.windows(MIN_ROWS).any(|w| {
        let n = tab_cells(w[0]);
        n >= 2 && w.iter().all(|l| tab_cells(l) == n)
    });
    pipe_table || tab_table
}

#[cfg(test)]
mod tests {
    use super::*;
    use docintel_schema::BBox;

    fn line(page: u32, x0: f32, x1: f32, y0: f32, text: &str) -> Line {
        Line { line_id: 0, page, line_in_page: 0, text: text.into(), bbox: BBox { x0, y0, x1, y1: y0 + 10.0 } }
    }

    #[test]
    fn numbers_and_markdown() {
        assert!(is_numeric("1,234.50"));
        assert!(is_numeric("(12) %"));
        assert!(!is_numeric("Total"));
        assert!(!is_numeric("-"));
        assert!(text_has_table(["| a | b |", "|---|:-:|", "| 1 | 2 |"].into_iter()));
        assert!(text_has_table(["a\tb", "1\t2", "3\t4"].into_iter()));
        assert!(!text_has_table(["a\tb", "1\t2", "prose"].into_iter()));
        assert!(!text_has_table(["a | b", "prose", "c | d"].into_iter()));
    }

    #[test]
    fn aligned_numbers_are_a_table_two_column_prose_is_not() {
        // Label column at 72, figures right-aligned at 400.
        let mut table = Vec::new();
        for (i, (label, amount)) in
            [("Revenue", "1,200"), ("Costs", "(300)"), ("Tax", "45"), ("Net", "855")].into_iter().enumerate()
        {
            let y = 700.0 - 14.0 * i as f32;
            table.push(line(1, 72.0, 72.0 + 6.0 * label.len() as f32, y, label));
            table.push(line(1, 400.0 - 6.0 * amount.len() as f32, 400.0, y, amount));
        }
        let prose: Vec<Line> = (0..6)
            .flat_map(|i| {
                let y = 700.0 - 12.0 * i as f32;
                [
                    line(2, 72.0, 290.0, y, "a long line of prose in the left column of text"),
                    line(2, 310.0, 530.0, y, "and another long line in the right-hand column"),
                ]
            })
            .collect();
        let pages = [PageInfo::from_text(1, 8, 60, 595.0, 842.0), PageInfo::from_text(2, 12, 500, 595.0, 842.0)];
        let all: Vec<Line> = table.iter().chain(&prose).cloned().collect();
        assert_eq!(table_pages(&all, &pages), vec![1]);
        // Two rows are not enough.
        assert!(table_pages(&table[..4], &pages).is_empty());
    }
}
