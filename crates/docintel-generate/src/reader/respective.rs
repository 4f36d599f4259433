//! The year a figure in running text is given for, when the sentence lists
//! figures and years side by side: "34%, 31%, and 31% of our annual revenue
//! during the fourth quarter of 2017, 2018, and 2019"; "As of December 31,
//! 2022 and 2021, ... 156,000 and 142,000"; "For fiscal 2021, ... 61%,
//! compared to 61% and 59% for fiscal 2020 and fiscal 2019". A list of n
//! figures of one form pairs, in order, with a list of n years on the same
//! row; a figure of that form outside the list goes with the one year the
//! row names outside any list. The reader holds a question's year to it: a
//! figure the row gives for another year is not the asked year's value.
//!
//! Names pair the same way when the sentence says "respectively":
//! "PetSmart and Petco accounted for 36 percent and 14 percent,
//! respectively" gives 14 percent for Petco, not for PetSmart
//! ([`goes_with_name`]).

use std::sync::LazyLock;

use regex::Regex;

/// A year, or a figure: an optional currency, digits with separators, an
/// optional percent or scale word ("$932 million, $871 million and $787
/// million" is one list).
static TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:[$€£¥]\s?)?(?:\d[\d,.]*\d|\d)(?:\s?(?:%|percent\b|(?:thousand|million|billion|trillion)\b))?")
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

/// One name of a list: up to four words, each opening with a capital.
const NAME: &str = r"\p{Lu}[\w&.'’-]*(?:\s+\p{Lu}[\w&.'’-]*){0,3}";

/// A name closing the text, after a list separator.
static NAME_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"({NAME})(?:\s*,\s*(?:and|or)|\s*,|\s+(?:and|or))\s*$")).expect("name pattern")
});
/// A list separator, then a name, opening the text.
static NAME_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"^(?:\s*,\s*(?:and|or)\s+|\s*,\s*|\s+(?:and|or)\s+)({NAME})")).expect("name pattern")
});

/// Whether the figure at `start..end` of `text` is given for `name`, when
/// the row lists names and as many figures side by side and says so
/// (`respectively`: the row or the one after says "respectively"):
/// `Some(true)` when the figure's place in its list is the name's place in
/// its list, `Some(false)` when it is another name's place, `None` when the
/// row pairs nothing.
pub(crate) fn goes_with_name(text: &str, start: usize, end: usize, name: &str, respectively: bool) -> Option<bool> {
    if !respectively || name.trim().is_empty() {
        return None;
    }
    let items = items(text);
    let lists = lists(text, &items);
    let overlaps = |i: &Item| i.start < end && start < i.end;
    let figures = lists.iter().find(|l| l[0].form != Form::Year && l.iter().any(overlaps))?;
    let at = figures.iter().position(overlaps)?;
    let pattern = Regex::new(&format!(r"(?i)\b{}\b", regex::escape(name.trim()))).ok()?;
    for m in pattern.find_iter(text) {
        let mut before = 0;
        let mut head = &text[..m.start()];
        while let Some(c) = NAME_BEFORE.captures(head) {
            before += 1;
            head = &head[..c.get(1).map_or(0, |g| g.start())];
        }
        let mut after = 0;
        let mut tail = &text[m.end()..];
        while let Some(c) = NAME_AFTER.captures(tail) {
            after += 1;
            tail = &tail[c.get(0).map_or(tail.len(), |g| g.end())..];
        }
        if before + after > 0 && before + 1 + after == figures.len() {
            return Some(before == at);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{goes_with_name, year_of};

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

    #[test]
    fn million_figures_make_one_list() {
        let t = "During the years ended December 31, 2022, 2021 and 2020, total dividends paid to common shareholders were $932 million, $871 million and $787 million,";
        assert_eq!(year(t, "$787 million", 0), Some(2020));
        assert_eq!(year(t, "$932 million", 0), Some(2022));
    }

    #[test]
    fn names_pair_with_figures_when_the_row_says_respectively() {
        let t =
            "PetSmart and Petco accounted for 36 percent and 14 percent, respectively, of our Pet segment’s net sales";
        let at = |figure: &str, name: &str, respectively: bool| {
            let start = t.find(figure).expect("figure in text");
            goes_with_name(t, start, start + figure.len(), name, respectively)
        };
        assert_eq!(at("36 percent", "PetSmart", true), Some(true));
        assert_eq!(at("14 percent", "PetSmart", true), Some(false));
        assert_eq!(at("14 percent", "petco", true), Some(true));
        // Without "respectively" nothing is paired; a name outside any
        // list says nothing either.
        assert_eq!(at("14 percent", "PetSmart", false), None);
        assert_eq!(at("14 percent", "Pet", true), None);
    }
}
