//! Quotients: "what is current liabilities to total liabilities for Costco
//! in FY2021?", "the ratio of long-term debt to total liabilities", "the
//! debt-to-equity ratio". The question asks for one figure divided by
//! another; it is read as two parts, each figure asked for with the
//! question's own restrictions ("for Costco in FY2021"), and the answer is
//! their quotient (see `GenerationBrief::quotient`).
//!
//! Only a question that says it wants a ratio is split: the word "ratio",
//! or an instruction to round to decimals or to answer in percent. "What is
//! the amount payable to the insured?" names no ratio and stays whole.

use std::sync::LazyLock;

use docintel_schema::Computed;
use regex::Regex;

/// Most words of either side: a line item, not a clause.
const MAX_SIDE_WORDS: usize = 7;

/// Words that make a side something other than a figure's name ("the change
/// from 2019 to 2020", "the increase to").
const NOT_A_FIGURE: &[&str] = &[
    "from",
    "change",
    "changes",
    "increase",
    "decrease",
    "growth",
    "difference",
    "compared",
    "relative",
    "ratio",
    "ratios",
    "how",
    "what",
    "which",
    "who",
    "when",
    "where",
    "why",
    "is",
    "are",
    "was",
    "were",
    "does",
    "did",
];

/// The start of the restrictions after the denominator ("for Costco in FY2021").
const TAIL: &str = r"for|in|at|during|as\s+of|as\s+at|over";

static RATIO_OF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)^\s*(?:what\s+(?:is|was|were|are)|what's|calculate|compute|give|find)\s+(?:the\s+)?(?P<lead>[^?]*?)\bratio\s+(?:of|between)\s+(?P<a>.+?)\s+(?:to|and)\s+(?P<b>.+?)(?P<tail>\s+(?:{TAIL})\b[^?]*)?\s*\??\s*$"
    ))
    .expect("ratio regex compiles")
});

static A_TO_B: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)^\s*(?:what\s+(?:is|was|were|are)|what's|calculate|compute|give|find)\s+(?:the\s+)?(?P<a>.+?)(?:\s+to\s+|-to-)(?P<b>.+?)(?:\s+ratio)?(?P<tail>\s+(?:{TAIL})\b[^?]*)?\s*\??\s*$"
    ))
    .expect("a-to-b regex compiles")
});

/// A ratio the question defines: "Define working capital ratio as total
/// current assets divided by total current liabilities."
static DEFINED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\bdefine(?:d|s)?\b[^.?]*?\bas:?\s+(?P<a>[^.?/()]+?)\s*(?:\bdivided\s+by\b|/|\bover\b)\s*(?P<b>[^.?/()]+?)\s*(?:[.?]|$)",
    )
    .expect("definition regex compiles")
});

/// A growth between two years: "the year-over-year change in revenue from
/// FY2016 to FY2017", "the FY2019 - FY2020 total revenue growth rate".
static GROWTH_FROM_TO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:year[- ]over[- ]year\s+)?(?:growth(?:\s+rate)?|(?:percentage\s+|percent\s+)?change|increase|decrease)\s+(?:of|in)\s+(?:the\s+)?(?P<x>[^?.]+?)\s+(?:from|between)\s+(?P<y1>(?:fy\s?)?(?:19|20)\d{2})\s+(?:to|and)\s+(?P<y2>(?:fy\s?)?(?:19|20)\d{2})\b")
        .expect("growth regex compiles")
});
static GROWTH_SPAN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?P<y1>(?:fy\s?)?(?:19|20)\d{2})\s*(?:-|–|to)\s*(?P<y2>(?:fy\s?)?(?:19|20)\d{2})\s+(?:the\s+)?(?P<x>[^?.]+?)\s+growth(?:\s+rate)?\b")
        .expect("growth span regex compiles")
});
/// "the growth rate of advertising cost for 3M in FY2018": from the year
/// before.
static GROWTH_IN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bgrowth(?:\s+rate)?\s+(?:of|in)\s+(?:the\s+)?(?P<x>[^?.]+?)\s+(?:for\s+[^?.]+?\s+)?in\s+(?P<y2>(?:fy\s?)?(?:19|20)\d{2})\b")
        .expect("growth-in regex compiles")
});

/// The two questions of a growth (the earlier year's figure first), when
/// `text` asks for one in percent.
fn growth(text: &str) -> Option<[String; 2]> {
    let number = |y: &str| y.chars().filter(char::is_ascii_digit).collect::<String>().parse::<u32>().ok();
    let (x, first, second) = if let Some(c) = GROWTH_FROM_TO.captures(text).or_else(|| GROWTH_SPAN.captures(text)) {
        (c.name("x")?.as_str().to_owned(), c.name("y1")?.as_str().to_owned(), c.name("y2")?.as_str().to_owned())
    } else {
        let c = GROWTH_IN.captures(text)?;
        let later = c.name("y2")?.as_str();
        let fy = later.to_lowercase().starts_with("fy");
        let earlier = number(later)? - 1;
        (
            c.name("x")?.as_str().to_owned(),
            if fy { format!("FY{earlier}") } else { earlier.to_string() },
            later.to_owned(),
        )
    };
    if number(&first)? + 1 != number(&second)? {
        return None;
    }
    let figure = figure_name(&x)?;
    Some([format!("What is the {figure} in {first}?"), format!("What is the {figure} in {second}?")])
}

/// A year written in a side ("FY2021", "2020"): moved to the restrictions.
static YEAR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b(?:fy\s?)?(?:19|20)\d{2}\b").expect("year regex compiles"));

/// The two questions whose answers' quotient `text` asks for (numerator
/// first), or `None` when it asks for no ratio. `ratio_wanted` is whether
/// the question's format instructions ask for decimals or a percent.
pub(crate) fn split(text: &str, ratio_wanted: bool, percent: bool) -> Option<(Computed, [String; 2])> {
    if percent && let Some(parts) = growth(text) {
        return Some((Computed::Growth, parts));
    }
    quotient(text, ratio_wanted).map(|parts| (Computed::Quotient, parts))
}

fn quotient(text: &str, ratio_wanted: bool) -> Option<[String; 2]> {
    let says_ratio = text.to_lowercase().split(|c: char| !c.is_alphanumeric()).any(|w| w == "ratio");
    if !says_ratio && !ratio_wanted {
        return None;
    }
    // A definition the question gives wins; it is restricted by the years
    // the question names.
    if let Some(captures) = DEFINED.captures(text) {
        let side = |name: &str| captures.name(name).and_then(|m| figure_name(m.as_str()));
        let (numerator, denominator) = (side("a")?, side("b")?);
        let mut years: Vec<String> = Vec::new();
        for year in YEAR.find_iter(text).map(|m| m.as_str().to_owned()) {
            if !years.iter().any(|y| y.eq_ignore_ascii_case(&year)) {
                years.push(year);
            }
        }
        // One period: a definition over several years averages or
        // compares them, which is no quotient of two figures.
        if years.len() > 1 {
            return None;
        }
        let restriction = years.first().map(|y| format!(" in {y}")).unwrap_or_default();
        return Some([
            format!("What is the {numerator}{restriction}?"),
            format!("What is the {denominator}{restriction}?"),
        ]);
    }
    // The question sentence, not the instructions after it.
    let text = text.split_inclusive('?').next().unwrap_or(text);
    let captures = RATIO_OF.captures(text).or_else(|| A_TO_B.captures(text))?;
    let lead = captures.name("lead").map_or("", |m| m.as_str()).trim();
    let tail = captures.name("tail").map_or("", |m| m.as_str()).trim();
    let mut years: Vec<String> = YEAR.find_iter(lead).map(|m| m.as_str().to_owned()).collect();
    let mut side = |name: &str| -> Option<String> {
        let raw = captures.name(name)?.as_str();
        years.extend(YEAR.find_iter(raw).map(|m| m.as_str().to_owned()));
        figure_name(raw)
    };
    let numerator = side("a")?;
    let denominator = side("b")?;
    if numerator.eq_ignore_ascii_case(&denominator) {
        return None;
    }
    let mut restriction = tail.trim_end_matches('?').trim().to_owned();
    for year in years {
        if !restriction.to_lowercase().contains(&year.to_lowercase()) {
            restriction = format!("{restriction} in {year}").trim().to_owned();
        }
    }
    let ask = |figure: &str| match restriction.is_empty() {
        true => format!("What is the {figure}?"),
        false => format!("What is the {figure} {restriction}?"),
    };
    Some([ask(&numerator), ask(&denominator)])
}

/// A side as the name of one figure ("total current assets"), without its
/// years and articles; `None` when it reads as something else (a clause, a
/// change, a number).
fn figure_name(raw: &str) -> Option<String> {
    let cleaned = YEAR.replace_all(raw, " ");
    let words: Vec<&str> = cleaned
        .split_whitespace()
        .filter(|w| !matches!(w.to_lowercase().as_str(), "the" | "a" | "an" | "company's" | "its"))
        .collect();
    let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    let figure = !words.is_empty()
        && words.len() <= MAX_SIDE_WORDS
        && !lower.iter().any(|w| NOT_A_FIGURE.contains(&w.as_str()))
        && words.iter().any(|w| w.chars().any(char::is_alphabetic))
        && !words.iter().any(|w| w.chars().any(|c| c.is_ascii_digit()));
    figure.then(|| words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::split;
    use docintel_schema::Computed;

    fn parts(text: &str, wanted: bool) -> Option<[String; 2]> {
        split(text, wanted, false).map(|(computed, parts)| {
            assert_eq!(computed, Computed::Quotient);
            parts
        })
    }

    #[test]
    fn a_growth_in_percent_reads_the_figure_in_both_years() {
        let growth = |text: &str| split(text, true, true).filter(|(c, _)| *c == Computed::Growth).map(|(_, p)| p);
        let years =
            |x: &str, a: &str, b: &str| Some([format!("What is the {x} in {a}?"), format!("What is the {x} in {b}?")]);
        assert_eq!(
            growth("What is Acme's year-over-year change in revenue from FY2016 to FY2017 (in units of percents)?"),
            years("revenue", "FY2016", "FY2017")
        );
        assert_eq!(
            growth("What is the FY2019 - FY2020 total revenue growth rate for Acme?"),
            years("total revenue", "FY2019", "FY2020")
        );
        assert_eq!(
            growth("What is the growth rate of advertising and merchandising cost for 3M in FY2018?"),
            years("advertising and merchandising cost", "FY2017", "FY2018")
        );
        // Years that are not consecutive: an average growth, not this.
        assert_eq!(growth("What is the change in revenue from 2015 to 2019?"), None);
        // Not in percent: no growth asked.
        assert_eq!(split("What is the change in revenue from 2019 to 2020?", false, false), None);
    }

    #[test]
    fn a_figure_to_a_figure_is_a_quotient_when_a_ratio_is_wanted() {
        assert_eq!(
            parts("what is current liabilities to total liabilities for COSTCO in FY2021?", true),
            Some([
                "What is the current liabilities for COSTCO in FY2021?".to_owned(),
                "What is the total liabilities for COSTCO in FY2021?".to_owned()
            ])
        );
        assert_eq!(
            parts("What is the ratio of long-term debt to total liabilities for Acme in 2020?", false),
            Some([
                "What is the long-term debt for Acme in 2020?".to_owned(),
                "What is the total liabilities for Acme in 2020?".to_owned()
            ])
        );
        assert_eq!(
            parts("What is the FY2019 debt-to-equity ratio? Round your answer to two decimals.", false),
            Some(["What is the debt in FY2019?".to_owned(), "What is the equity in FY2019?".to_owned()])
        );
        assert_eq!(
            parts(
                "what is Gross Profit to Total Assets ratio for Best Buy for the fiscal year ending January 28, 2023?",
                false
            ),
            Some([
                "What is the Gross Profit for Best Buy for the fiscal year ending January 28, 2023?".to_owned(),
                "What is the Total Assets for Best Buy for the fiscal year ending January 28, 2023?".to_owned()
            ])
        );
    }

    #[test]
    fn a_ratio_the_question_defines_is_its_quotient() {
        let question = "Considering the data in the balance sheet, what is Acme's FY2016 working capital ratio? Define working capital ratio as total current assets divided by total current liabilities. Round your answer to two decimal places.";
        assert_eq!(
            parts(question, true),
            Some([
                "What is the total current assets in FY2016?".to_owned(),
                "What is the total current liabilities in FY2016?".to_owned()
            ])
        );
        // An average over two years is no quotient of two figures.
        let question = "What is the FY2019 fixed asset turnover ratio? Fixed asset turnover ratio is defined as: FY2019 revenue / (average PP&E between FY2018 and FY2019).";
        assert_eq!(parts(question, true), None);
    }

    #[test]
    fn no_ratio_asked_no_quotient() {
        // No "ratio", no decimals or percent asked: "to" is a preposition.
        assert_eq!(parts("What is the maximum amount payable to the insured?", false), None);
        // A change between years is no quotient.
        assert_eq!(parts("What is the change in revenue from 2019 to 2020?", true), None);
        // A named ratio without two figures.
        assert_eq!(parts("What is the current ratio for Costco in FY2021?", false), None);
        assert_eq!(parts("How many employees report to the CEO?", true), None);
    }
}
