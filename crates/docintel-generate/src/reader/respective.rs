//! The year a figure in running text is given for, when the sentence lists
//! figures and years side by side: "34%, 31%, and 31% of our annual revenue
//! during the fourth quarter of 2017, 2018, and 2019"; "As of December 31,
//! 2022 and 2021, ... 156,000 and 142,000"; "For fiscal 2021, ... 61%,
//! compared to 61% and 59% for fiscal 2020 and fiscal 2019". A list of n
//! figures of one form pairs, in order, with a list of n years on the same
//! row; a figure of that form outside the list goes with the one year the
//! row names outside any list. The reader holds a question's year to it: a
//! figure the row gives for another year is not the asked year's value.

use std::sync::LazyLock;

use regex::Regex;

/// A year, or a figure: an optional currency, digits with separators, an
/// optional percent.
static TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:[$€£¥]\s?)?\d[\d,.]*\d(?:\s?(?:%|percent\b))?|(?:[$€£¥]\s?)?\d(?:\s?(?:%|percent\b))?")
        .expect("figure pattern")
});

/// What may stand between two items of one list.
fn joins(gap: &str, years: bool) -> bool {
    let words: Vec<String> =
        gap.split(|c: char| c.is_whitespace() || c == ',').filter(|w| !w.is_empty()).map(str::to_lowercase).collect();
    let joining =
        |w: &str| matches!(w, "and" | "&" | "or") || (years && matches!(w, "fiscal" | "fy" | "year" | "years"));
    (gap.contains(',') || !words.is_empty()) && words.iter().all(|w| joining(w))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Form {
    Year,
    Percent,
    Money,
    Plain,
}

#[derive(Debug, Clone, Copy)]
struct Item {
    start: usize,
    end: usize,
    form: Form,
    year: u32,
}

fn items(text: &str) -> Vec<Item> {
    TOKEN
        .find_iter(text)
        .filter(|m| {
            // Not inside a word or an identifier ("F-35", "10-K", "Q4").
            let before = text[..m.start()].chars().next_back();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '-')
        })
        .map(|m| {
            let s = m.as_str();
            let year = super::calendar_year(s);
            let form = if year.is_some() {
                Form::Year
            } else if s.ends_with('%') || s.to_lowercase().ends_with("percent") {
                Form::Percent
            } else if s.starts_with(['$', '€', '£', '¥']) {
                Form::Money
            } else {
                Form::Plain
            };
            Item { start: m.start(), end: m.end(), form, year: year.unwrap_or(0) }
        })
        .collect()
}

/// Runs of two or more items of one form joined as a list.
fn lists(text: &str, items: &[Item]) -> Vec<Vec<Item>> {
    let mut out: Vec<Vec<Item>> = Vec::new();
    let mut run: Vec<Item> = Vec::new();
    for item in items {
        let continues = run.last().is_some_and(|last: &Item| {
            last.form == item.form && joins(&text[last.end..item.start], item.form == Form::Year)
        });
        if !continues {
            if run.len() >= 2 {
                out.push(std::mem::take(&mut run));
            }
            run.clear();
        }
        run.push(*item);
    }
    if run.len() >= 2 {
        out.push(run);
    }
    out
}

/// The year the figure at `start..end` of `text` is given for, when the
/// row pairs its figures with years (see the module docs).
pub(crate) fn year_of(text: &str, start: usize, end: usize) -> Option<u32> {
    let items = items(text);
    let lists = lists(text, &items);
    let (years, figures): (Vec<&Vec<Item>>, Vec<&Vec<Item>>) = lists.iter().partition(|l| l[0].form == Form::Year);
    let overlaps = |i: &Item| i.start < end && start < i.end;
    let nearest_years = |list: &Vec<Item>| {
        years.iter().filter(|y| y.len() == list.len()).min_by_key(|y| y[0].start.abs_diff(list[0].start)).copied()
    };
    if let Some(list) = figures.iter().find(|l| l.iter().any(overlaps)) {
        let at = list.iter().position(overlaps)?;
        return nearest_years(list).map(|y| y[at].year);
    }
    // A figure outside the lists: the one year the row names alone, when a
    // list of its form pairs with years.
    let own = items.iter().find(|i| overlaps(i))?;
    let paired = figures.iter().any(|l| l[0].form == own.form && nearest_years(l).is_some());
    let listed = |i: &Item| years.iter().any(|l| l.iter().any(|y| y.start == i.start));
    let mut alone = items.iter().filter(|i| i.form == Form::Year && !listed(i));
    match (paired, alone.next(), alone.next()) {
        (true, Some(year), None) => Some(year.year),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::year_of;

    fn year(text: &str, figure: &str, nth: usize) -> Option<u32> {
        let (start, _) = text.match_indices(figure).nth(nth).expect("figure in text");
        year_of(text, start, start + figure.len())
    }

    #[test]
    fn parallel_lists_pair_in_order() {
        let t = "recognized 34%, 31%, and 31% of our annual revenue during the fourth quarter of 2017, 2018, and 2019.";
        assert_eq!(year(t, "34%", 0), Some(2017));
        assert_eq!(year(t, "31%", 0), Some(2018));
        assert_eq!(year(t, "31%", 1), Some(2019));
        let t = "As of December 31, 2022 and 2021, Boeing's total workforce was approximately 156,000 and 142,000 with 13% and 12% located outside of the";
        assert_eq!(year(t, "156,000", 0), Some(2022));
        assert_eq!(year(t, "12%", 0), Some(2021));
    }

    #[test]
    fn a_figure_outside_the_list_takes_the_lone_year() {
        let t = "For fiscal 2021, non-U.S. NIKE Brand and Converse sales accounted for approximately 61% of total revenues, compared to 61% and 59% for fiscal 2020 and fiscal 2019,";
        assert_eq!(year(t, "61%", 0), Some(2021));
        assert_eq!(year(t, "61%", 1), Some(2020));
        assert_eq!(year(t, "59%", 0), Some(2019));
    }

    #[test]
    fn rows_without_paired_lists_say_nothing() {
        assert_eq!(year("Revenue grew 12% to $4.1 billion in 2021.", "12%", 0), None);
        assert_eq!(year("Special cash dividends per share (1) 0.45", "0.45", 0), None);
        // Lists of different lengths do not pair.
        assert_eq!(year("sales of $3 and $4 and $5 in 2020 and 2021", "$4", 0), None);
    }
}
