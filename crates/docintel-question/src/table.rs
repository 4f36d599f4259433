//! The satellite CSV files as tables: `#` comment lines and blank lines
//! skipped, one header row naming the columns, cells read by the `csv` crate
//! (a double-quoted cell may hold commas; `""` is a literal quote) and
//! trimmed. Every row keeps its 1-based line number so errors can name it.

use std::fmt;

/// A satellite row that does not load, or a foreign key that does not
/// resolve: names the file, the 1-based line and the column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableError {
    /// The file (a path, or `name.csv (built in)`).
    pub file: String,
    /// 1-based line number in the file.
    pub row: usize,
    /// The column at fault (`header` or `row` for structural problems).
    pub column: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: row {}, column {}: {}", self.file, self.row, self.column, self.message)
    }
}

impl std::error::Error for TableError {}

/// One data row: its line number and its cells, in header order.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub(crate) line: usize,
    cells: Vec<String>,
}

/// A parsed file: its name, its header and its rows.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    pub(crate) file: String,
    header: Vec<String>,
    pub(crate) rows: Vec<Row>,
}

impl Table {
    /// Parses `text`; the header must list exactly `columns`, in that order.
    pub(crate) fn parse(file: &str, text: &str, columns: &[&str]) -> Result<Table, TableError> {
        let error = |row: usize, column: &str, message: String| TableError {
            file: file.to_owned(),
            row,
            column: column.to_owned(),
            message,
        };
        // Comment and blank lines (after trimming) become empty lines, which
        // the csv reader skips, and a quote in a comment opens nothing. Each
        // record is one line (a cell running past its line is refused), so
        // the k-th record is the k-th line left: its number names it in errors.
        let lines: Vec<&str> = text.lines().collect();
        let kept: Vec<&str> =
            lines.iter().map(|l| if l.trim().is_empty() || l.trim().starts_with('#') { "" } else { l }).collect();
        let numbers: Vec<usize> = (1..=kept.len()).filter(|&n| !kept[n - 1].is_empty()).collect();
        let kept = kept.join("\n");
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .trim(csv::Trim::All)
            .terminator(csv::Terminator::Any(b'\n'))
            .from_reader(kept.as_bytes());
        let mut header: Option<Vec<String>> = None;
        let mut rows = Vec::new();
        for (k, record) in reader.records().enumerate() {
            let number = numbers.get(k).copied().unwrap_or(lines.len().max(1));
            let record = record.map_err(|e| error(number, "row", e.to_string()))?;
            let cells: Vec<String> = record.iter().map(str::to_owned).collect();
            if let Some(at) = cells.iter().position(|c| c.contains('\n')) {
                return Err(error(
                    number,
                    "row",
                    format!("cell {} runs past the end of its line (unterminated quote?)", at + 1),
                ));
            }
            match &header {
                None => {
                    if cells != columns {
                        let line = lines.get(number - 1).map_or("", |l| l.trim());
                        return Err(error(number, "header", format!("expected {}, got {line}", columns.join(","))));
                    }
                    header = Some(cells);
                }
                Some(names) => {
                    if cells.len() != names.len() {
                        return Err(error(
                            number,
                            "row",
                            format!("expected {} cells, got {}", names.len(), cells.len()),
                        ));
                    }
                    rows.push(Row { line: number, cells });
                }
            }
        }
        let header = header.ok_or_else(|| error(1, "header", "no header row".to_owned()))?;
        Ok(Table { file: file.to_owned(), header, rows })
    }

    /// The cell of `row` in `column` (trimmed). Panics on a column name the
    /// caller did not declare: that is a programming error.
    pub(crate) fn cell<'a>(&self, row: &'a Row, column: &str) -> &'a str {
        let at = self.header.iter().position(|c| c == column).expect("declared column");
        row.cells[at].as_str()
    }

    /// An error about `row`'s `column`.
    pub(crate) fn error(&self, row: &Row, column: &str, message: impl Into<String>) -> TableError {
        TableError { file: self.file.clone(), row: row.line, column: column.to_owned(), message: message.into() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(text: &str) -> Result<Vec<Vec<String>>, TableError> {
        let table = Table::parse("t.csv", text, &["x", "y", "z"])?;
        Ok(table.rows.iter().map(|r| r.cells.clone()).collect())
    }

    #[test]
    fn cells_split_on_commas_outside_quotes() {
        let got = cells("x,y,z\na, b ,c\na,,c\na,\"b, with comma\",c\n\"say \"\"hi\"\"\",x,y\n").unwrap();
        assert_eq!(got[0], ["a", "b", "c"]);
        assert_eq!(got[1], ["a", "", "c"]);
        assert_eq!(got[2], ["a", "b, with comma", "c"]);
        assert_eq!(got[3], [r#"say "hi""#, "x", "y"]);
        let error = cells("x,y,z\na,\"open,c\nd,e,f\n").unwrap_err();
        assert_eq!((error.row, error.column.as_str()), (2, "row"), "{error}");
        assert!(error.message.contains("unterminated quote"), "{error}");
    }

    #[test]
    fn comment_and_blank_lines_are_skipped_and_counted() {
        // An indented comment is a comment, and a quote in it opens nothing.
        let text = "# a \"quoted, comment\nx,y,z\n\n   \n  # indented, \"too\n1,2,3\r\n4,\"5,6\",7\n";
        let table = Table::parse("t.csv", text, &["x", "y", "z"]).unwrap();
        let lines: Vec<usize> = table.rows.iter().map(|r| r.line).collect();
        assert_eq!(lines, [6, 7]);
        assert_eq!(table.cell(&table.rows[1], "y"), "5,6");
    }

    #[test]
    fn header_and_width_are_checked() {
        let error = Table::parse("t.csv", "# c\nx,y\n1,2\n3\n", &["x", "y"]).unwrap_err();
        assert_eq!((error.row, error.column.as_str()), (4, "row"), "{error}");
        let error = Table::parse("t.csv", "x,z\n", &["x", "y"]).unwrap_err();
        assert_eq!((error.row, error.column.as_str()), (1, "header"));
        let error = Table::parse("t.csv", "# only comments\n", &["x"]).unwrap_err();
        assert_eq!(error.to_string(), "t.csv: row 1, column header: no header row");
        let table = Table::parse("t.csv", "x,y\n\n1,\"2\"\n", &["x", "y"]).unwrap();
        assert_eq!(table.rows.len(), 1);
        assert_eq!((table.rows[0].line, table.cell(&table.rows[0], "y")), (3, "2"));
    }
}
