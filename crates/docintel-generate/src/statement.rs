//! Reading a figure off a financial statement: a page that is a table of
//! figures under a header row of years ("(Millions) 2018 2017 2016") or of
//! the periods' closing dates ("January 28, 2023 January 29, 2022"). The
//! parser cuts such a table into pieces (the row label, then one piece per
//! cell); here the pieces are put back on their grid by their boxes: a cell
//! belongs to the year whose header is nearest above it horizontally, and to
//! the row label left of it on the same visual row.
//!
//! The extractive generator uses it when the question points to a named
//! part of the document (`ScopeFilters::sections`, "shown in the cash flow
//! statement") and asks for an amount: the cell in the question's year
//! column, on a row whose label carries the question's words, is the answer;
//! the same row's other years are not.

use std::sync::LazyLock;

use docintel_schema::Line;
use regex::Regex;

use crate::layout::{PageLayout, same_row};

/// Rows carrying a figure on a statement page, at least.
pub(crate) const MIN_FIGURE_ROWS: usize = 12;

/// A figure cell alone on its piece: `1,577`, `(1,577)`, `$ 5,363`, `12.5`;
/// the next column's lone `$` may stick to it (`59,268 $`).
static CELL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*[$€£]?\s*\(?\s*[$€£]?\s*(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\s*\)?\s*%?\s*[$€£]?\s*$")
        .expect("static pattern compiles")
});
/// A figure anywhere in a line (for counting figure rows).
static FIGURE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\d{1,3}(?:,\d{3})+|\(\d[\d.,]*\)|\d+\.\d+").expect("static pattern compiles"));
/// A column header naming a year alone: `2018`, `Fiscal 2019`, `FY2020`,
/// or the closing date of the period (`January 28, 2023`, `Dec. 31, 2018`,
/// `31 December 2018`), optionally after "year(s) ended".
static YEAR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?ix)^\s*
        (?:fiscal\s+|fy\s*)?
        (?:(?:fiscal\s+)?(?:years?|quarters?|periods?)\s+ended\s+)?
        (?:[a-z]{3,9}\.?\s+\d{1,2},?\s+|\d{1,2}\s+[a-z]{3,9}\.?,?\s+)?
        (19[5-9]\d|20\d\d)\s*$",
    )
    .expect("static pattern compiles")
});

/// The year a column header names (see [`YEAR`]), when it names one alone.
pub(crate) fn column_year(text: &str) -> Option<u32> {
    let c = YEAR.captures(text)?;
    // A date's month word is a month, not any word ("Note 2018").
    let words: Vec<&str> = text.split(|c: char| !c.is_alphabetic()).filter(|w| !w.is_empty()).collect();
    let month_or_cue = |w: &&str| {
        let w = w.to_lowercase();
        crate::extract::date::month_number(&w).is_some()
            || matches!(
                w.as_str(),
                "fiscal" | "fy" | "year" | "years" | "quarter" | "quarters" | "period" | "periods" | "ended"
            )
    };
    words.iter().all(month_or_cue).then(|| c[1].parse().ok()).flatten()
}

/// A statement's scale note: "(Millions)", "(In millions, except per share
/// amounts)", "(Dollars in thousands)".
static SCALE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\(\s*(?:(?:in|dollars\s+in|\$\s*in|amounts\s+in|usd\s+in)\s+)?(millions|thousands|billions)\b")
        .expect("static pattern compiles")
});

/// The scale a statement page states for its figures (`million`, ...).
pub(crate) fn scale(page: &[Line]) -> Option<&'static str> {
    page.iter().find_map(|l| SCALE.captures(&l.text)).map(|c| match c[1].to_lowercase().as_str() {
        "thousands" => "thousand",
        "billions" => "billion",
        _ => "million",
    })
}

/// Whether `text` is one figure cell.
pub(crate) fn is_cell(text: &str) -> bool {
    CELL.is_match(text) && text.chars().any(|c| c.is_ascii_digit())
}

/// The column headers of a statement page: years and the horizontal centre
/// of each.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Grid {
    /// (year, centre x), left to right.
    pub(crate) columns: Vec<(u32, f32)>,
    /// Top of the header row: cells are below it.
    pub(crate) header_top: f32,
}

fn centre_x(line: &Line) -> f32 {
    (line.bbox.x0 + line.bbox.x1) / 2.0
}

/// The grids of a page's pieces, when the page is a statement (enough rows
/// with figures): one per visual row of at least two distinct years alone
/// on their pieces, in reading order. A page may print two tables with
/// their columns in different places (share repurchases, then dividends
/// per share).
pub(crate) fn grids(page: &[Line]) -> Vec<Grid> {
    if page.iter().filter(|l| FIGURE.is_match(&l.text)).count() < MIN_FIGURE_ROWS {
        return Vec::new();
    }
    let years: Vec<(&Line, u32)> = page.iter().filter_map(|l| column_year(&l.text).map(|y| (l, y))).collect();
    let mut out: Vec<Grid> = Vec::new();
    for (first, _) in &years {
        let mut columns: Vec<(u32, f32)> =
            years.iter().filter(|(l, _)| same_row(&l.bbox, &first.bbox)).map(|(l, y)| (*y, centre_x(l))).collect();
        columns.sort_by(|a, b| a.1.total_cmp(&b.1));
        let mut distinct: Vec<u32> = columns.iter().map(|c| c.0).collect();
        distinct.sort_unstable();
        distinct.dedup();
        let grid = Grid { columns, header_top: first.bbox.y1.max(first.bbox.y0) };
        if distinct.len() >= 2 && distinct.len() == grid.columns.len() && !out.contains(&grid) {
            out.push(grid);
        }
    }
    out
}

/// The grid whose header row is nearest above `line`.
pub(crate) fn grid_over<'g>(grids: &'g [Grid], line: &Line) -> Option<&'g Grid> {
    let top = line.bbox.y1.max(line.bbox.y0);
    grids.iter().filter(|g| top < g.header_top).min_by(|a, b| a.header_top.total_cmp(&b.header_top))
}

impl Grid {
    /// The year of the column at `x` on `line`, for a line below the header
    /// row.
    pub(crate) fn year_at(&self, line: &Line, x: f32) -> Option<u32> {
        if line.bbox.y1.max(line.bbox.y0) >= self.header_top {
            return None;
        }
        self.columns.iter().min_by(|a, b| (a.1 - x).abs().total_cmp(&(b.1 - x).abs())).map(|c| c.0)
    }

    /// The column the question's `year` reads: that year's, else the first.
    pub(crate) fn wanted(&self, year: Option<u32>) -> u32 {
        year.filter(|y| self.columns.iter().any(|c| c.0 == *y)).unwrap_or(self.columns[0].0)
    }
}

/// Where a figure at `start..end` of `line` stands horizontally: the line's
/// box shared out by characters (a row label and its figures may be one
/// line when they sit close).
pub(crate) fn figure_x(line: &Line, start: usize, end: usize) -> f32 {
    let total = line.text.chars().count().max(1) as f32;
    let a = line.text[..start].chars().count() as f32;
    let b = line.text[..end].chars().count() as f32;
    line.bbox.x0 + (line.bbox.x1 - line.bbox.x0) * ((a + b) / 2.0) / total
}

/// The words opening `line` before its first figure, when it has any (a
/// row label the parser kept with its first figures because they sit
/// close).
pub(crate) fn own_label(line: &Line, first_figure: usize) -> Option<&str> {
    let own = line.text[..first_figure].trim_end_matches(|c: char| !c.is_alphanumeric());
    own.chars().any(char::is_alphabetic).then_some(own)
}

/// The year of the `index`-th figure (from the left) of a line that opens
/// with its row label: the label and the first figures sit close, so they
/// are the first columns, in order.
pub(crate) fn year_by_order(grid: &Grid, line: &Line, index: usize) -> Option<u32> {
    if line.bbox.y1.max(line.bbox.y0) >= grid.header_top {
        return None;
    }
    grid.columns.get(index).map(|c| c.0)
}

/// The label of the figure at `start` of `line`: the words before it on the
/// line, else the row label left of the line on its visual row (across
/// other figures and lone currency marks).
pub(crate) fn label_of(layout: &PageLayout<'_>, line: &Line, start: usize) -> Option<String> {
    if let Some(own) = own_label(line, start) {
        // Only the words: figures of earlier columns are not part of it.
        let words: String = own.split_whitespace().take_while(|w| !is_cell(w)).collect::<Vec<_>>().join(" ");
        return (!words.is_empty()).then_some(words);
    }
    layout.row_label(line, |l| is_cell(&l.text) || !l.text.chars().any(char::is_alphabetic)).map(|l| l.text.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use docintel_schema::BBox;

    /// A piece at column `x` (left edge) on row `row` (top to bottom).
    fn piece(id: u32, text: &str, x: f32, row: u32) -> Line {
        let y0 = 700.0 - 12.0 * row as f32;
        Line {
            line_id: id,
            page: 1,
            line_in_page: id,
            text: text.to_owned(),
            bbox: BBox { x0: x, y0, x1: x + 6.0 * text.len() as f32, y1: y0 + 9.0 },
        }
    }

    fn statement() -> Vec<Line> {
        let mut lines = vec![
            piece(1, "Consolidated Statement of Cash Flows", 200.0, 0),
            piece(2, "(Millions)", 50.0, 1),
            piece(3, "2018", 400.0, 1),
            piece(4, "2017", 460.0, 1),
            piece(5, "2016", 520.0, 1),
            piece(6, "Purchases of property, plant and equipment (PP&E)", 50.0, 2),
            piece(7, "(1,577)", 396.0, 2),
            piece(8, "(1,373)", 456.0, 2),
            piece(9, "(1,420)", 516.0, 2),
        ];
        for i in 0..12u32 {
            let id = 10 + 4 * i;
            lines.push(piece(id, &format!("Item {i}"), 50.0, 3 + i));
            lines.push(piece(id + 1, &format!("1,{i:03}"), 400.0, 3 + i));
            lines.push(piece(id + 2, &format!("2,{i:03}"), 460.0, 3 + i));
            lines.push(piece(id + 3, &format!("3,{i:03}"), 520.0, 3 + i));
        }
        lines
    }

    #[test]
    fn cells_find_their_year_and_their_row_label() {
        let lines = statement();
        let grid = grids(&lines).into_iter().next().expect("a statement page");
        assert_eq!(grid.columns.iter().map(|c| c.0).collect::<Vec<_>>(), [2018, 2017, 2016]);
        assert_eq!(grid.year_at(&lines[6], centre_x(&lines[6])), Some(2018));
        assert_eq!(grid.year_at(&lines[7], centre_x(&lines[7])), Some(2017));
        assert_eq!(grid.year_at(&lines[2], centre_x(&lines[2])), None, "the header itself is no cell");
        let layout = PageLayout::new(&lines, 1);
        assert_eq!(label_of(&layout, &lines[8], 0).as_deref(), Some(lines[5].text.as_str()));
        assert_eq!(grid.wanted(Some(2017)), 2017);
        assert_eq!(grid.wanted(Some(2001)), 2018);
        assert_eq!(grid.wanted(None), 2018);
        // Too few figure rows: not a statement.
        assert_eq!(super::grids(&lines[..12]), Vec::new());
    }

    #[test]
    fn a_cell_reads_the_header_row_nearest_above_it() {
        // A second table lower on the page, its year columns further left.
        let mut lines = statement();
        lines.push(piece(100, "2017", 370.0, 16));
        lines.push(piece(101, "2016", 430.0, 16));
        lines.push(piece(102, "Special cash dividends per share", 50.0, 17));
        lines.push(piece(103, "0.45", 375.0, 17));
        lines.push(piece(104, "0.51", 435.0, 17));
        let grids = grids(&lines);
        assert_eq!(grids.len(), 2);
        let first = &lines[6];
        assert_eq!(grid_over(&grids, first).map(|g| g.columns[0].0), Some(2018));
        let (a, b) = (&lines[lines.len() - 2], &lines[lines.len() - 1]);
        let below = grid_over(&grids, a).expect("the second header");
        assert_eq!(below.year_at(a, centre_x(a)), Some(2017));
        assert_eq!(below.year_at(b, centre_x(b)), Some(2016));
        assert!(grid_over(&grids, &lines[2]).is_none(), "the first header row has no header above it");
    }

    #[test]
    fn a_column_header_names_its_year_alone_or_closing_a_date() {
        for (text, year) in [
            ("2018", Some(2018)),
            ("Fiscal 2019", Some(2019)),
            ("FY2020", Some(2020)),
            ("January 28, 2023", Some(2023)),
            ("Dec. 31, 2018", Some(2018)),
            ("31 December 2018", Some(2018)),
            ("Year ended June 30, 2020", Some(2020)),
            ("Note 2018", None),
            ("1,577", None),
            ("Total 2019 revenue", None),
        ] {
            assert_eq!(column_year(text), year, "{text}");
        }
        // A balance sheet's header row of closing dates is its grid.
        let mut lines = statement();
        lines[2].text = "January 28, 2023".to_owned();
        lines[3].text = "January 29, 2022".to_owned();
        lines[4].text = "January 30, 2021".to_owned();
        let grid = grids(&lines).into_iter().next().expect("a statement page");
        assert_eq!(grid.columns.iter().map(|c| c.0).collect::<Vec<_>>(), [2023, 2022, 2021]);
    }

    #[test]
    fn a_label_and_its_figures_on_one_line() {
        let lines = statement();
        let layout = PageLayout::new(&lines, 1);
        let grid = grids(&lines).into_iter().next().unwrap();
        // "Total assets 1,000" kept as one line (label and first figure
        // close), the other columns apart: figures count from the left.
        let row = piece(99, "Total assets 1,000 2,000", 50.0, 20);
        let second = row.text.find("2,000").unwrap();
        assert_eq!(own_label(&row, row.text.find("1,000").unwrap()), Some("Total assets"));
        assert_eq!(year_by_order(&grid, &row, 1), Some(2017));
        assert_eq!(year_by_order(&grid, &lines[2], 0), None, "the header row is no data row");
        assert_eq!(label_of(&layout, &row, second).as_deref(), Some("Total assets"));
        // Two cells joined without a label: placed by their share of the box.
        let mut cells = piece(98, "1,000 2,000", 390.0, 21);
        cells.bbox.x1 = 475.0;
        assert_eq!(grid.year_at(&cells, figure_x(&cells, 6, 11)), Some(2017));
        assert_eq!(own_label(&cells, 0), None);
        // A cell alone: the label is the piece left of it.
        assert_eq!(
            label_of(&layout, &lines[7], 0).as_deref(),
            Some("Purchases of property, plant and equipment (PP&E)")
        );
    }

    #[test]
    fn scale_and_sign_as_printed() {
        let lines = statement();
        assert_eq!(scale(&lines), Some("million"));
        assert_eq!(scale(&lines[..1]), None);
    }

    #[test]
    fn cells_are_figures_alone() {
        for cell in ["1,577", "(1,577)", "$ 5,363", "$5,363", "12.5", "(12.5)", "7", "59,268 $"] {
            assert!(is_cell(cell), "{cell}");
        }
        for text in ["Net income", "Note 5", "2018 and 2017", ""] {
            assert!(!is_cell(text), "{text}");
        }
    }
}
