//! Calendar dates in the forms invoices and reports use, normalised to
//! `YYYY-MM-DD`.
//!
//! Forms: ISO `2014-08-03`; numeric `03/08/2014`, `03.08.2014`, `8-9-2022`
//! (two-digit years map to 20yy below 70, else 19yy); `August 3, 2014`,
//! `Aug 3 , 2014`, `3 August 2014`, `20-Oct-2015`, `19. April 2014`,
//! `1er janvier 2020`, `5 de mayo de 2020`, with month names in English,
//! French, German, Dutch and Spanish.
//!
//! Numeric day/month order: when one of the two numbers is above 12 it is the
//! day. Otherwise `.` separators are day-first (the European convention), and
//! `/` or `-` follow the caller's [`DayMonthOrder`] (the generator derives it
//! from the document: the order its unambiguous dates prove, see
//! [`evident_order`]; failing that, month-first only for English documents
//! quoting dollars).

use std::sync::LazyLock;

use regex::Regex;

/// How to read an ambiguous numeric date such as `03/08/2014`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DayMonthOrder {
    /// `03/08/2014` is 3 August.
    DayFirst,
    /// `03/08/2014` is March 8 (US).
    MonthFirst,
}

/// A date found in a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DateToken {
    /// `YYYY-MM-DD`.
    pub iso: String,
    /// The date as written.
    pub original: String,
    /// Byte offset in the line.
    pub start: usize,
    /// Byte offset just past the date.
    pub end: usize,
}

const MONTHS: &[(&str, u32)] = &[
    // English
    ("january", 1),
    ("february", 2),
    ("march", 3),
    ("april", 4),
    ("may", 5),
    ("june", 6),
    ("july", 7),
    ("august", 8),
    ("september", 9),
    ("october", 10),
    ("november", 11),
    ("december", 12),
    ("jan", 1),
    ("feb", 2),
    ("mar", 3),
    ("apr", 4),
    ("jun", 6),
    ("jul", 7),
    ("aug", 8),
    ("sep", 9),
    ("sept", 9),
    ("oct", 10),
    ("nov", 11),
    ("dec", 12),
    // French
    ("janvier", 1),
    ("février", 2),
    ("fevrier", 2),
    ("mars", 3),
    ("avril", 4),
    ("mai", 5),
    ("juin", 6),
    ("juillet", 7),
    ("août", 8),
    ("aout", 8),
    ("septembre", 9),
    ("octobre", 10),
    ("novembre", 11),
    ("décembre", 12),
    ("decembre", 12),
    ("janv", 1),
    ("févr", 2),
    ("fevr", 2),
    ("avr", 4),
    ("juil", 7),
    ("déc", 12),
    // German
    ("januar", 1),
    ("jänner", 1),
    ("februar", 2),
    ("märz", 3),
    ("maerz", 3),
    ("juni", 6),
    ("juli", 7),
    ("oktober", 10),
    ("dezember", 12),
    ("mär", 3),
    ("okt", 10),
    ("dez", 12),
    // Dutch
    ("januari", 1),
    ("februari", 2),
    ("maart", 3),
    ("mei", 5),
    ("augustus", 8),
    ("mrt", 3),
    // Spanish
    ("enero", 1),
    ("febrero", 2),
    ("marzo", 3),
    ("abril", 4),
    ("mayo", 5),
    ("junio", 6),
    ("julio", 7),
    ("agosto", 8),
    ("septiembre", 9),
    ("setiembre", 9),
    ("octubre", 10),
    ("noviembre", 11),
    ("diciembre", 12),
    ("ene", 1),
    ("abr", 4),
    ("ago", 8),
    ("dic", 12),
];

fn month_alternation() -> String {
    let mut names: Vec<&str> = MONTHS.iter().map(|(name, _)| *name).collect();
    names.sort_by_key(|n| std::cmp::Reverse(n.chars().count()));
    names.dedup();
    format!(r"\b(?:{})\b", names.iter().map(|n| regex::escape(n)).collect::<Vec<_>>().join("|"))
}

pub(crate) fn month_number(name: &str) -> Option<u32> {
    let lower = name.to_lowercase();
    MONTHS.iter().find(|(n, _)| *n == lower).map(|(_, m)| *m)
}

static ISO: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"([0-9]{4})([-/.])([0-9]{1,2})([-/.])([0-9]{1,2})").expect("iso regex"));
static NUMERIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"([0-9]{1,2})([./-])([0-9]{1,2})([./-])([0-9]{4}|[0-9]{2})").expect("numeric date regex")
});
static DAY_MONTH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\b([0-9]{{1,2}})(?:st|nd|rd|th|er|\.)?[\s\-]*(?:day\s+of\s+|of\s+|de\s+)?(?P<m>{})\.?[\s,\-]*(?:de\s+)?([0-9]{{4}})",
        month_alternation()
    ))
    .expect("day month regex")
});
static MONTH_DAY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"(?i)(?P<m>{})\.?\s*([0-9]{{1,2}})(?:st|nd|rd|th)?\s*,?\s*([0-9]{{4}})", month_alternation()))
        .expect("month day regex")
});

/// A month and its year with no day: `August 2019`, `juin 2016`, `Sept. 2020`.
static MONTH_YEAR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"(?i)(?P<m>{})\.?,?\s+(?:of\s+|de\s+)?([0-9]{{4}})\b", month_alternation()))
        .expect("month year regex")
});

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => 0,
    }
}

/// `YYYY-MM-DD` when the parts make a real date between 1900 and 2100.
pub fn iso(year: i32, month: u32, day: u32) -> Option<String> {
    let valid = (1900..=2100).contains(&year) && (1..=12).contains(&month) && day >= 1;
    (valid && day <= days_in_month(year, month)).then(|| format!("{year:04}-{month:02}-{day:02}"))
}

fn digit_at(line: &str, before: usize, after: usize) -> bool {
    let prev = line[..before].chars().next_back();
    let next = line[after..].chars().next();
    prev.is_some_and(|c| c.is_ascii_digit()) || next.is_some_and(|c| c.is_ascii_digit())
}

/// Every date in a line, left to right.
pub fn find_dates(line: &str, order: DayMonthOrder) -> Vec<DateToken> {
    let mut out: Vec<DateToken> = Vec::new();
    let push = |out: &mut Vec<DateToken>, start: usize, end: usize, iso: Option<String>| {
        let Some(iso) = iso else { return };
        if out.iter().any(|t| start < t.end && t.start < end) {
            return;
        }
        out.push(DateToken { iso, original: line[start..end].trim().to_owned(), start, end });
    };
    for c in ISO.captures_iter(line) {
        let whole = c.get(0).expect("match");
        if c[2] != c[4] || digit_at(line, whole.start(), whole.end()) {
            continue;
        }
        let (y, m, d) = (c[1].parse().ok(), c[3].parse().ok(), c[5].parse().ok());
        if let (Some(y), Some(m), Some(d)) = (y, m, d) {
            push(&mut out, whole.start(), whole.end(), iso(y, m, d));
        }
    }
    for c in DAY_MONTH.captures_iter(line) {
        let whole = c.get(0).expect("match");
        if digit_at(line, whole.start(), whole.end()) {
            continue;
        }
        let day = c[1].parse().ok();
        let month = month_number(&c["m"]);
        let year = c[3].parse().ok();
        if let (Some(d), Some(m), Some(y)) = (day, month, year) {
            push(&mut out, whole.start(), whole.end(), iso(y, m, d));
        }
    }
    for c in MONTH_DAY.captures_iter(line) {
        let whole = c.get(0).expect("match");
        if digit_at(line, whole.start(), whole.end()) {
            continue;
        }
        let month = month_number(&c["m"]);
        let (day, year) = (c[2].parse().ok(), c[3].parse().ok());
        if let (Some(d), Some(m), Some(y)) = (day, month, year) {
            push(&mut out, whole.start(), whole.end(), iso(y, m, d));
        }
    }
    for c in NUMERIC.captures_iter(line) {
        let whole = c.get(0).expect("match");
        let prev = line[..whole.start()].chars().next_back();
        if c[2] != c[4]
            || digit_at(line, whole.start(), whole.end())
            || prev.is_some_and(|p| matches!(p, '.' | '/' | '-'))
        {
            continue;
        }
        let (Ok(a), Ok(b)) = (c[1].parse::<u32>(), c[3].parse::<u32>()) else { continue };
        let year_text = &c[5];
        let Ok(mut year) = year_text.parse::<i32>() else { continue };
        if year_text.len() == 2 {
            if &c[2] == "-" {
                continue;
            }
            year += if year < 70 { 2000 } else { 1900 };
        }
        let day_first = match (a > 12, b > 12) {
            (true, false) => true,
            (false, true) => false,
            (true, true) => continue,
            (false, false) => &c[2] == "." || order == DayMonthOrder::DayFirst,
        };
        let (day, month) = if day_first { (a, b) } else { (b, a) };
        push(&mut out, whole.start(), whole.end(), iso(year, month, day));
    }
    out.sort_by_key(|t| t.start);
    out
}

/// Every month written with its year and no day ("since August 2019",
/// "June 2012 – Present"), left to right, as `YYYY-MM` (ISO 8601's month
/// precision: no day is made up). A month that is part of a full date of
/// [`find_dates`] (`full`, the line's full dates the caller already found)
/// is not one; nor is the English verb "may".
pub fn find_months(line: &str, full: &[DateToken]) -> Vec<DateToken> {
    let mut out = Vec::new();
    for c in MONTH_YEAR.captures_iter(line) {
        let whole = c.get(0).expect("match");
        let month_text = &c["m"];
        if full.iter().any(|t| whole.start() < t.end && t.start < whole.end())
            || digit_at(line, whole.start(), whole.end())
            || month_text == "may"
            || line[..whole.start()].trim_end().ends_with(|ch: char| ch.is_ascii_digit())
        {
            continue;
        }
        let (Some(month), Ok(year)) = (month_number(month_text), c[2].parse::<i32>()) else { continue };
        if !(1900..=2100).contains(&year) {
            continue;
        }
        out.push(DateToken {
            iso: format!("{year:04}-{month:02}"),
            original: whole.as_str().trim().to_owned(),
            start: whole.start(),
            end: whole.end(),
        });
    }
    out
}

/// The order a text's own numeric dates prove: `03/25/2020` can only be
/// month-first, `25/03/2020` only day-first. `None` when no date of the
/// text decides, or as many decide each way. Only `/` and `-` dates count
/// (`.` is always day-first).
pub fn evident_order<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<DayMonthOrder> {
    let (mut day_first, mut month_first) = (0usize, 0usize);
    for line in lines {
        for c in NUMERIC.captures_iter(line) {
            let whole = c.get(0).expect("match");
            if c[2] != c[4] || &c[2] == "." || digit_at(line, whole.start(), whole.end()) {
                continue;
            }
            let (Ok(a), Ok(b)) = (c[1].parse::<u32>(), c[3].parse::<u32>()) else { continue };
            match (a > 12 && a <= 31 && (1..=12).contains(&b), b > 12 && b <= 31 && (1..=12).contains(&a)) {
                (true, false) => day_first += 1,
                (false, true) => month_first += 1,
                _ => {}
            }
        }
    }
    match day_first.cmp(&month_first) {
        std::cmp::Ordering::Greater => Some(DayMonthOrder::DayFirst),
        std::cmp::Ordering::Less => Some(DayMonthOrder::MonthFirst),
        std::cmp::Ordering::Equal => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_month_with_its_year_is_a_month_precision_date() {
        let months = |line: &str| -> Vec<String> {
            find_months(line, &find_dates(line, DayMonthOrder::DayFirst)).into_iter().map(|t| t.iso).collect()
        };
        assert_eq!(months("has served as our Chief People Officer since August 2019."), ["2019-08"]);
        assert_eq!(months("LionLike MindState, Pomona, CA June 2012 – Present"), ["2012-06"]);
        assert_eq!(months("en vigueur depuis juin 2016"), ["2016-06"]);
        // A full date is no month; "may" is a verb.
        assert!(months("signed on August 3, 2019").is_empty());
        assert!(months("the 3 August 2019 meeting").is_empty());
        assert!(months("we may 2019 be wrong").is_empty());
    }

    #[test]
    fn the_documents_own_dates_decide_the_order() {
        assert_eq!(evident_order(["Signed 03/25/2020", "due 9/10/2020"]), Some(DayMonthOrder::MonthFirst));
        assert_eq!(evident_order(["Facture du 25/03/2020", "échéance 9/10/2020"]), Some(DayMonthOrder::DayFirst));
        // Ambiguous dates and dotted dates prove nothing.
        assert_eq!(evident_order(["9/10/2020", "25.03.2020"]), None);
        assert_eq!(evident_order(["03/25/2020", "25/03/2020"]), None);
    }

    fn check(input: &str, expect: &[(&str, &str)]) {
        check_with(input, DayMonthOrder::DayFirst, expect);
    }

    fn check_with(input: &str, order: DayMonthOrder, expect: &[(&str, &str)]) {
        let found: Vec<(String, String)> = find_dates(input, order).into_iter().map(|t| (t.iso, t.original)).collect();
        let expect: Vec<(String, String)> = expect.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        assert_eq!(found, expect, "{input}");
    }

    #[test]
    fn iso_and_numeric() {
        check("Date: 2014-08-03", &[("2014-08-03", "2014-08-03")]);
        check("Date : 28/11/2022", &[("2022-11-28", "28/11/2022")]);
        check("03.08.2014", &[("2014-08-03", "03.08.2014")]);
        check(" 8-9-2022", &[("2022-09-08", "8-9-2022")]);
        check("  20-10-2015Invoice Date:", &[("2015-10-20", "20-10-2015")]);
        check("le 03/08/14", &[("2014-08-03", "03/08/14")]);
    }

    #[test]
    fn ambiguous_order_follows_the_hint() {
        check_with("08/03/2014", DayMonthOrder::MonthFirst, &[("2014-08-03", "08/03/2014")]);
        check_with("08/03/2014", DayMonthOrder::DayFirst, &[("2014-03-08", "08/03/2014")]);
        // A number above 12 decides whatever the hint.
        check_with("28/11/2022", DayMonthOrder::MonthFirst, &[("2022-11-28", "28/11/2022")]);
        check_with("11/28/2022", DayMonthOrder::DayFirst, &[("2022-11-28", "11/28/2022")]);
        // Dots are day-first.
        check_with("08.03.2014", DayMonthOrder::MonthFirst, &[("2014-03-08", "08.03.2014")]);
    }

    #[test]
    fn month_names() {
        check("Invoice Date: August 3 , 2014", &[("2014-08-03", "August 3 , 2014")]);
        check("Aug 3, 2014", &[("2014-08-03", "Aug 3, 2014")]);
        check("3 August 2014", &[("2014-08-03", "3 August 2014")]);
        check("20-Oct-2015", &[("2015-10-20", "20-Oct-2015")]);
        check("le 28 novembre 2022", &[("2022-11-28", "28 novembre 2022")]);
        check("18 april 2014", &[("2014-04-18", "18 april 2014")]);
        check("Berlin, 19. April 2014", &[("2014-04-19", "19. April 2014")]);
        check("1er janvier 2020", &[("2020-01-01", "1er janvier 2020")]);
        check("5 de mayo de 2020", &[("2020-05-05", "5 de mayo de 2020")]);
        check("am 3. März 2021", &[("2021-03-03", "3. März 2021")]);
        check("Sept. 30, 2021", &[("2021-09-30", "Sept. 30, 2021")]);
        // The form of a contract's opening clause.
        check("entered into on the 20th day of November, 2018 (the", &[("2018-11-20", "20th day of November, 2018")]);
    }

    #[test]
    fn not_dates() {
        check("Phone: 8756390642", &[]);
        check("3/64, Vishwas Khand", &[]);
        check("31/02/2022", &[]);
        check("version 1.2.3", &[]);
        check("This invoice is for the billing period July 1 - July 31 , 2014", &[("2014-07-31", "July 31 , 2014")]);
    }
}
