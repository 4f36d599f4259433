//! A small reader for the satellite CSV files: `#` comment lines and blank
//! lines skipped, one header row naming the columns, cells optionally
//! double-quoted (a quoted cell may hold commas; `""` is a literal quote).
//! Every row keeps its 1-based line number so errors can name it.

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
        let mut header: Option<Vec<String>> = None;
        let mut rows = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let number = index + 1;
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let error = |column: &str, message: String| TableError {
                file: file.to_owned(),
                row: number,
                column: column.to_owned(),
                message,
            };
            let cells = split_cells(trimmed).map_err(|message| error("row", message))?;
            match &header {
                None => {
                    if cells != columns {
                        return Err(error("header", format!("expected {}, got {trimmed}", columns.join(","))));
                    }
                    header = Some(cells);
                }
                Some(names) => {
                    if cells.len() != names.len() {
                        return Err(error("row", format!("expected {} cells, got {}", names.len(), cells.len())));
                    }
                    rows.push(Row { line: number, cells });
                }
            }
        }
        let header = header.ok_or_else(|| TableError {
            file: file.to_owned(),
            row: 1,
            column: "header".to_owned(),
            message: "no header row".to_owned(),
        })?;
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

/// Splits one CSV line into trimmed cells, honouring double quotes.
fn split_cells(line: &str) -> Result<Vec<String>, String> {
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut was_quoted = false;
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    cell.push('"');
                } else {
                    quoted = false;
                }
            } else {
                cell.push(c);
            }
        } else if c == '"' && cell.trim().is_empty() && !was_quoted {
            cell.clear();
            quoted = true;
            was_quoted = true;
        } else if c == ',' {
            cells.push(finish(&cell, was_quoted));
            cell.clear();
            was_quoted = false;
        } else if was_quoted && !c.is_whitespace() {
            return Err(format!("text after a closing quote in cell {}", cells.len() + 1));
        } else {
            cell.push(c);
        }
    }
    if quoted {
        return Err(format!("unterminated quote in cell {}", cells.len() + 1));
    }
    cells.push(finish(&cell, was_quoted));
    Ok(cells)
}

fn finish(cell: &str, quoted: bool) -> String {
    if quoted { cell.to_owned() } else { cell.trim().to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(line: &str, expect: Result<&[&str], &str>) {
        let got = split_cells(line);
        match expect {
            Ok(cells) => assert_eq!(
                got.as_deref(),
                Ok(cells.iter().map(|c| (*c).to_owned()).collect::<Vec<_>>().as_slice()),
                "{line}"
            ),
            Err(fragment) => assert!(got.as_ref().is_err_and(|e| e.contains(fragment)), "{line}: {got:?}"),
        }
    }

    #[test]
    fn cells_split_on_commas_outside_quotes() {
        check("a, b ,c", Ok(&["a", "b", "c"]));
        check("a,,c", Ok(&["a", "", "c"]));
        check(r#"a,"b, with comma",c"#, Ok(&["a", "b, with comma", "c"]));
        check(r#""say ""hi""",x"#, Ok(&[r#"say "hi""#, "x"]));
        check(r#"a,"open"#, Err("unterminated quote in cell 2"));
        check(r#""a"b,c"#, Err("text after a closing quote in cell 1"));
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
