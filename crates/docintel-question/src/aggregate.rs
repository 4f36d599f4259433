//! Questions about a collection, not a passage: counting ("How many
//! invoices are from 2023?"), numeric filtering ("Which policies have a sum
//! insured above INR 10 lakh?") and grouping ("How many documents per
//! issuer?"). Full-text search cannot answer them (it finds a few passages,
//! not every document), so a knowledge base answers them from its
//! structured index; [`parse_aggregate`] decides, in code, which questions
//! go there and what they ask.
//!
//! A question is an aggregate one when it opens with a counting frame
//! ("how many", "count", "number of") or a listing frame ("which", "what",
//! "list", "show") followed within three words by a noun for documents
//! ("documents", "files", or a document type's noun: "invoices",
//! "policies", "reports", "filings", "contracts", ...). A listing question
//! also needs a condition or a grouping ("Which policy covers floods?" asks
//! for a passage). What follows the noun is read as conditions: a year
//! ("from 2023", "in 2023", "dated 2023"), a comparison with a number
//! ("above", "over", "more than", "below", "under", "less than", "at
//! least", "at most", "between N and M"; currencies and the scale words
//! thousand, lakh, crore, million, billion read), a value ("from Amazon",
//! "issued by Amazon"), and a grouping ("per issuer", "by year", "for each
//! issuer"). The words before a comparison or a year name the field it
//! applies to ("a sum insured above" → `sum insured`). Words left over are
//! kept in [`AggregateQuestion::unread`], so the caller can refuse rather
//! than count something else.

use docintel_schema::text::normalize;
use serde::{Deserialize, Serialize};

/// What an aggregate question asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// How many documents ("how many", "count", "number of").
    Count,
    /// Which documents ("which", "what", "list", "show").
    List,
}

/// A comparison with a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Comparison {
    /// Strictly greater ("above", "over", "more than", "exceeding").
    Above,
    /// Strictly less ("below", "under", "less than").
    Below,
    /// Greater or equal ("at least", "between N and …").
    AtLeast,
    /// Less or equal ("at most", "between … and M").
    AtMost,
}

impl Comparison {
    /// Whether `value` passes the comparison with `bound`.
    pub fn holds(self, value: f64, bound: f64) -> bool {
        match self {
            Comparison::Above => value > bound,
            Comparison::Below => value < bound,
            Comparison::AtLeast => value >= bound,
            Comparison::AtMost => value <= bound,
        }
    }

    /// How the comparison reads ("above").
    pub fn as_str(self) -> &'static str {
        match self {
            Comparison::Above => "above",
            Comparison::Below => "below",
            Comparison::AtLeast => "at least",
            Comparison::AtMost => "at most",
        }
    }
}

/// One condition a counted document must meet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Condition {
    /// A date field falls in this year; `field` as the question names it
    /// (`None`: the caller picks the date field).
    Year {
        /// The field's words in the question, if any.
        field: Option<String>,
        /// The year.
        year: i32,
    },
    /// A numeric field compared with a number.
    Compare {
        /// The field's words in the question (`sum insured`); `None` when
        /// the question names none ("Which invoices are above 100 EUR?").
        field: Option<String>,
        /// The comparison.
        op: Comparison,
        /// The number, scale words applied (`10 lakh` → 1,000,000).
        value: f64,
        /// The currency named with it (lower-cased code or symbol), if any.
        currency: Option<String>,
    },
    /// A field's value holds these words ("from Amazon Web Services").
    Matches {
        /// The field's words in the question, if any.
        field: Option<String>,
        /// The words, folded (`docintel_schema::text::normalize`).
        text: String,
    },
}

/// A counting, filtering or grouping question, as [`parse_aggregate`] read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AggregateQuestion {
    /// Count or list.
    pub measure: Measure,
    /// The document noun as written, folded (`invoices`).
    pub noun: String,
    /// The document type it names (the profile's `doc_type`: `invoice`,
    /// `policy`, ...); `None` for any document ("documents", "files").
    pub doc_type: Option<String>,
    /// Conditions every counted document meets.
    pub conditions: Vec<Condition>,
    /// The field to group by ("per issuer" → `issuer`), if any.
    pub group_by: Option<String>,
    /// Words not understood (neither a condition, a grouping nor a filler):
    /// the caller should refuse rather than ignore them.
    pub unread: Vec<String>,
}

/// Document nouns and the document type each names (`None`: any document).
/// The types are the parser's profile types (`docintel-parse`'s doctype).
const DOCUMENT_NOUNS: &[(&str, Option<&str>)] = &[
    ("document", None),
    ("documents", None),
    ("doc", None),
    ("docs", None),
    ("file", None),
    ("files", None),
    ("pdf", None),
    ("pdfs", None),
    ("invoice", Some("invoice")),
    ("invoices", Some("invoice")),
    ("bill", Some("invoice")),
    ("bills", Some("invoice")),
    ("policy", Some("policy")),
    ("policies", Some("policy")),
    ("report", Some("financial_report")),
    ("reports", Some("financial_report")),
    ("filing", Some("financial_report")),
    ("filings", Some("financial_report")),
    ("contract", Some("contract")),
    ("contracts", Some("contract")),
    ("agreement", Some("contract")),
    ("agreements", Some("contract")),
    ("regulation", Some("regulation")),
    ("regulations", Some("regulation")),
    ("standard", Some("standard")),
    ("standards", Some("standard")),
    ("paper", Some("paper")),
    ("papers", Some("paper")),
    ("cv", Some("cv")),
    ("cvs", Some("cv")),
    ("resume", Some("cv")),
    ("resumes", Some("cv")),
];

/// Words that carry no condition: verbs, articles, and the names of the
/// collection itself ("in the knowledge base").
const FILLERS: &[&str] = &[
    "a",
    "an",
    "the",
    "are",
    "is",
    "were",
    "was",
    "be",
    "there",
    "do",
    "does",
    "did",
    "have",
    "has",
    "had",
    "with",
    "whose",
    "where",
    "that",
    "which",
    "their",
    "its",
    "of",
    "in",
    "on",
    "we",
    "i",
    "you",
    "my",
    "our",
    "your",
    "this",
    "these",
    "all",
    "any",
    "stored",
    "held",
    "here",
    "knowledge",
    "base",
    "kb",
    "collection",
    "corpus",
    "folder",
    "library",
    "altogether",
    "overall",
    "dated",
    "issued",
    "listed",
    "there?",
];

/// Words that open a counting question, then a listing one.
const COUNT_FRAMES: &[&[&str]] =
    &[&["how", "many"], &["count"], &["number", "of"], &["what", "is", "the", "number", "of"]];
const LIST_FRAMES: &[&[&str]] = &[
    &["which"],
    &["what"],
    &["list"],
    &["show"],
    &["list", "all"],
    &["show", "all"],
    &["list", "the"],
    &["show", "the"],
    &["give", "me", "the"],
    &["name", "the"],
];

/// Reads `question` as a counting, filtering or grouping question about the
/// documents of a collection; `None` when it is not one (the question then
/// takes the passage path).
///
/// ```
/// use docintel_question::aggregate::{Comparison, Condition, Measure, parse_aggregate};
///
/// let q = parse_aggregate("Which policies have a sum insured above INR 10 lakh?").unwrap();
/// assert_eq!((q.measure, q.doc_type.as_deref()), (Measure::List, Some("policy")));
/// assert_eq!(q.conditions, [Condition::Compare {
///     field: Some("sum insured".into()), op: Comparison::Above, value: 1_000_000.0, currency: Some("inr".into()),
/// }]);
/// assert_eq!(parse_aggregate("How many documents per issuer?").unwrap().group_by.as_deref(), Some("issuer"));
/// assert!(parse_aggregate("What is the total amount?").is_none());
/// ```
pub fn parse_aggregate(question: &str) -> Option<AggregateQuestion> {
    let words = tokens(question);
    let (measure, after_frame) = frame(&words)?;
    // The document noun, within three words of the frame ("how many insurance policies").
    let (at, noun, doc_type) = words.iter().enumerate().skip(after_frame).take(3).find_map(|(i, w)| {
        DOCUMENT_NOUNS.iter().find(|(n, _)| n == w).map(|(n, t)| (i, (*n).to_owned(), t.map(str::to_owned)))
    })?;
    let mut parsed =
        AggregateQuestion { measure, noun, doc_type, conditions: Vec::new(), group_by: None, unread: Vec::new() };
    // Words between the frame and the noun qualify it ("insurance policies"):
    // kept as unread only when they are no filler.
    for w in &words[after_frame..at] {
        if !FILLERS.contains(&w.as_str()) && !matches!(w.as_str(), "insurance" | "financial" | "annual" | "tax") {
            parsed.unread.push(w.clone());
        }
    }
    read_conditions(&words[at + 1..], &mut parsed);
    if measure == Measure::List && parsed.conditions.is_empty() && parsed.group_by.is_none() {
        return None;
    }
    Some(parsed)
}

/// The question's words, folded, without the punctuation around them (a
/// number keeps its inner separators: `1,000.50`, `10,00,000`).
fn tokens(question: &str) -> Vec<String> {
    normalize(question)
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| matches!(c, '?' | '!' | ',' | ';' | ':' | '"' | '(' | ')' | '\'')))
        .map(|w| w.strip_suffix('.').unwrap_or(w))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The frame the question opens with and the index of the word after it.
fn frame(words: &[String]) -> Option<(Measure, usize)> {
    let opens = |frame: &[&str]| frame.len() <= words.len() && frame.iter().zip(words).all(|(f, w)| f == w);
    let longest = |frames: &[&[&str]]| frames.iter().filter(|f| opens(f)).map(|f| f.len()).max();
    if let Some(n) = longest(COUNT_FRAMES) {
        return Some((Measure::Count, n));
    }
    longest(LIST_FRAMES).map(|n| (Measure::List, n))
}

/// Comparison words, longest first, with the comparison they make.
const COMPARATORS: &[(&[&str], Comparison)] = &[
    (&["more", "than"], Comparison::Above),
    (&["greater", "than"], Comparison::Above),
    (&["higher", "than"], Comparison::Above),
    (&["larger", "than"], Comparison::Above),
    (&["bigger", "than"], Comparison::Above),
    (&["less", "than"], Comparison::Below),
    (&["lower", "than"], Comparison::Below),
    (&["smaller", "than"], Comparison::Below),
    (&["at", "least"], Comparison::AtLeast),
    (&["at", "most"], Comparison::AtMost),
    (&["no", "more", "than"], Comparison::AtMost),
    (&["no", "less", "than"], Comparison::AtLeast),
    (&["above"], Comparison::Above),
    (&["over"], Comparison::Above),
    (&["exceeding"], Comparison::Above),
    (&["exceeds"], Comparison::Above),
    (&["exceed"], Comparison::Above),
    (&["below"], Comparison::Below),
    (&["under"], Comparison::Below),
];

/// Words that open a grouping, longest first.
const GROUPINGS: &[&[&str]] =
    &[&["grouped", "by"], &["broken", "down", "by"], &["for", "each"], &["for", "every"], &["per"], &["by"], &["each"]];

/// Reads what follows the document noun.
fn read_conditions(words: &[String], parsed: &mut AggregateQuestion) {
    let mut pending: Vec<String> = Vec::new();
    let mut i = 0;
    let starts = |i: usize, phrase: &[&str]| {
        phrase.len() <= words.len() - i && phrase.iter().zip(&words[i..]).all(|(p, w)| p == w)
    };
    while i < words.len() {
        let word = words[i].as_str();
        // "in total" at the end frames the count, it names no field.
        if word == "in" && i + 2 == words.len() && words[i + 1] == "total" {
            break;
        }
        let field = |pending: &mut Vec<String>| -> Option<String> {
            let kept: Vec<String> = pending.drain(..).filter(|w| !FILLERS.contains(&w.as_str())).collect();
            (!kept.is_empty()).then(|| kept.join(" "))
        };
        // between N and M
        if word == "between"
            && let Some((low, currency_low, used)) = amount(&words[i + 1..])
            && words.get(i + 1 + used).is_some_and(|w| w == "and")
            && let Some((high, currency_high, used_high)) = amount(&words[i + 2 + used..])
        {
            let field = field(&mut pending);
            let currency = currency_low.or(currency_high);
            parsed.conditions.push(Condition::Compare {
                field: field.clone(),
                op: Comparison::AtLeast,
                value: low,
                currency: currency.clone(),
            });
            parsed.conditions.push(Condition::Compare { field, op: Comparison::AtMost, value: high, currency });
            i += 2 + used + used_high;
            continue;
        }
        if let Some((phrase, op)) = COMPARATORS.iter().find(|(p, _)| starts(i, p))
            && let Some((value, currency, used)) = amount(&words[i + phrase.len()..])
        {
            let field = field(&mut pending);
            parsed.conditions.push(Condition::Compare { field, op: *op, value, currency });
            i += phrase.len() + used;
            continue;
        }
        if matches!(word, "from" | "in" | "during" | "dated" | "for" | "of")
            && let Some(year) = words.get(i + 1).and_then(|w| year(w))
        {
            let field = field(&mut pending);
            parsed.conditions.push(Condition::Year { field, year });
            i += 2;
            continue;
        }
        if let Some(phrase) = GROUPINGS.iter().find(|p| starts(i, p)) {
            let rest: Vec<&str> = words[i + phrase.len()..].iter().map(String::as_str).collect();
            let taken: Vec<&str> = rest.iter().copied().take_while(|w| !is_boundary(w)).collect();
            let is_by_value = *phrase == ["by"] && pending.last().is_some_and(|w| w.ends_with("ed"));
            if is_by_value && !taken.is_empty() {
                // "issued by Amazon": a value, not a grouping.
                let field = field(&mut pending);
                parsed.conditions.push(Condition::Matches { field, text: taken.join(" ") });
                i += phrase.len() + taken.len();
                continue;
            }
            let group: Vec<&str> = taken.iter().copied().filter(|w| !FILLERS.contains(w)).collect();
            if !group.is_empty() {
                pending.retain(|w| FILLERS.contains(&w.as_str()));
                parsed.group_by = Some(group.join(" "));
                i += phrase.len() + taken.len();
                continue;
            }
        }
        if word == "from" {
            let taken: Vec<&str> = words[i + 1..].iter().map(String::as_str).take_while(|w| !is_boundary(w)).collect();
            let text: Vec<&str> = taken.iter().copied().filter(|w| !FILLERS.contains(w)).collect();
            if !text.is_empty() {
                let field = field(&mut pending);
                parsed.conditions.push(Condition::Matches { field, text: text.join(" ") });
                i += 1 + taken.len();
                continue;
            }
        }
        pending.push(word.to_owned());
        i += 1;
    }
    parsed.unread.extend(pending.into_iter().filter(|w| !FILLERS.contains(&w.as_str())));
}

/// A word that ends a value or a grouping's field words.
fn is_boundary(word: &str) -> bool {
    matches!(word, "and" | "with" | "whose" | "where" | "that" | "per" | "in" | "from" | "above" | "below" | "over")
        || COMPARATORS.iter().any(|(p, _)| p[0] == word)
}

/// A year of four digits between 1900 and 2100.
fn year(word: &str) -> Option<i32> {
    let year: i32 = (word.len() == 4 && word.chars().all(|c| c.is_ascii_digit())).then(|| word.parse().ok())??;
    (1900..=2100).contains(&year).then_some(year)
}

/// Currency words and symbols read beside a number (folded).
const CURRENCIES: &[&str] = &[
    "$", "€", "£", "¥", "₹", "usd", "eur", "gbp", "inr", "rs", "jpy", "chf", "cad", "aud", "pln", "rupees", "dollars",
    "euros", "euro",
];

/// Scale words and their factor.
const SCALES: &[(&str, f64)] = &[
    ("thousand", 1e3),
    ("k", 1e3),
    ("lakh", 1e5),
    ("lakhs", 1e5),
    ("lac", 1e5),
    ("crore", 1e7),
    ("crores", 1e7),
    ("million", 1e6),
    ("mn", 1e6),
    ("m", 1e6),
    ("billion", 1e9),
    ("bn", 1e9),
];

/// An amount at the start of `words`: optional currency, a number (a
/// currency symbol may be stuck to it: `$1,000`), optional scale word,
/// optional currency. Returns the value, the currency and the words read.
fn amount(words: &[String]) -> Option<(f64, Option<String>, usize)> {
    let mut i = 0;
    let mut currency = None;
    if let Some(w) = words.first()
        && CURRENCIES.contains(&w.as_str())
    {
        currency = Some(w.clone());
        i += 1;
    }
    let word = words.get(i)?;
    let symbol = CURRENCIES.iter().find(|c| word.starts_with(**c));
    let digits = match symbol {
        Some(c) if !word[c.len()..].is_empty() && word[c.len()..].starts_with(|ch: char| ch.is_ascii_digit()) => {
            currency = Some((*c).to_owned());
            &word[c.len()..]
        }
        _ => word.as_str(),
    };
    let mut value = parse_number(digits)?;
    // The whole word must be the number (not "2023-01-01").
    if !digits.chars().all(|c| c.is_ascii_digit() || c == ',' || c == '.') {
        return None;
    }
    i += 1;
    if let Some((_, factor)) = words.get(i).and_then(|w| SCALES.iter().find(|(s, _)| s == w)) {
        value *= factor;
        i += 1;
    }
    if currency.is_none()
        && let Some(w) = words.get(i)
        && CURRENCIES.contains(&w.as_str())
    {
        currency = Some(w.clone());
        i += 1;
    }
    Some((value, currency, i))
}

/// The first number written in `text`: digits with `,` or `.` separators
/// (`1,939.00`, `1.939,00`, `10,00,000`, `4.11`); a separator followed by
/// exactly three digits and not last-of-two-kinds groups thousands, the
/// other is the decimal point. A leading minus sign is read. `None` when
/// `text` holds no digit.
pub fn parse_number(text: &str) -> Option<f64> {
    let start = text.find(|c: char| c.is_ascii_digit())?;
    let negative = text[..start].trim_end().ends_with('-');
    let run: String =
        text[start..].chars().take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.').collect::<String>();
    let run = run.trim_end_matches([',', '.']);
    let last_dot = run.rfind('.');
    let last_comma = run.rfind(',');
    let decimal = match (last_dot, last_comma) {
        (Some(d), Some(c)) => Some(d.max(c)),
        (Some(p), None) | (None, Some(p)) => {
            let sep = run.as_bytes()[p];
            let several = run.bytes().filter(|&b| b == sep).count() > 1;
            let three_after = run.len() - p - 1 == 3;
            (!several && !three_after).then_some(p)
        }
        (None, None) => None,
    };
    let mut plain = String::with_capacity(run.len());
    for (i, c) in run.char_indices() {
        if c.is_ascii_digit() {
            plain.push(c);
        } else if Some(i) == decimal {
            plain.push('.');
        }
    }
    let value: f64 = plain.parse().ok()?;
    Some(if negative { -value } else { value })
}

/// The year written in `text`: the first run of exactly four digits
/// between 1900 and 2100 (`2014-08-03`, `August 3, 2014`, `03/08/2014`).
pub fn year_in(text: &str) -> Option<i32> {
    text.split(|c: char| !c.is_ascii_digit()).find_map(year)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(q: &str) -> AggregateQuestion {
        parse_aggregate(q).unwrap_or_else(|| panic!("{q:?} is an aggregate question"))
    }

    #[test]
    fn counting_questions_are_recognised_with_their_noun_and_type() {
        let q = parse("How many documents are in the knowledge base?");
        assert_eq!((q.measure, q.noun.as_str(), q.doc_type.as_deref()), (Measure::Count, "documents", None));
        assert!(q.conditions.is_empty() && q.group_by.is_none() && q.unread.is_empty(), "{q:?}");
        let q = parse("How many invoices are from 2023?");
        assert_eq!(q.doc_type.as_deref(), Some("invoice"));
        assert_eq!(q.conditions, [Condition::Year { field: None, year: 2023 }]);
        let q = parse("How many documents are there in total?");
        assert!(q.conditions.is_empty() && q.unread.is_empty(), "{q:?}");
        let q = parse("How many insurance policies are there?");
        assert_eq!((q.doc_type.as_deref(), q.unread.len()), (Some("policy"), 0), "{q:?}");
        let q = parse("Count the invoices with an invoice date in 2014");
        assert_eq!(q.conditions, [Condition::Year { field: Some("invoice date".into()), year: 2014 }]);
    }

    #[test]
    fn comparisons_read_the_field_the_number_its_scale_and_currency() {
        let q = parse("Which invoices have a total above 100?");
        assert_eq!(q.measure, Measure::List);
        assert_eq!(
            q.conditions,
            [Condition::Compare { field: Some("total".into()), op: Comparison::Above, value: 100.0, currency: None }]
        );
        let q = parse("How many invoices with a total amount of less than $1,000.50?");
        assert_eq!(
            q.conditions,
            [Condition::Compare {
                field: Some("total amount".into()),
                op: Comparison::Below,
                value: 1000.5,
                currency: Some("$".into())
            }]
        );
        let q = parse("Which policies have a sum insured between 5 lakh and 1 crore INR?");
        let bounds: Vec<(Comparison, f64)> = q
            .conditions
            .iter()
            .map(|c| match c {
                Condition::Compare { op, value, .. } => (*op, *value),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(bounds, [(Comparison::AtLeast, 500_000.0), (Comparison::AtMost, 10_000_000.0)]);
    }

    #[test]
    fn groupings_and_values() {
        let q = parse("How many documents per issuer?");
        assert_eq!(q.group_by.as_deref(), Some("issuer"));
        assert!(q.unread.is_empty(), "{q:?}");
        assert_eq!(parse("How many invoices for each year?").group_by.as_deref(), Some("year"));
        let q = parse("How many invoices were issued by Amazon Web Services?");
        assert_eq!(q.group_by, None);
        assert_eq!(q.conditions, [Condition::Matches { field: None, text: "amazon web services".into() }]);
        let q = parse("How many invoices mention a late fee?");
        assert_eq!(q.unread, ["mention", "late", "fee"], "words not understood are kept, not dropped");
    }

    #[test]
    fn passage_questions_are_not_aggregate_ones() {
        for q in [
            "What is the total amount?",
            "How many pages does the policy have?",
            "How many employees does the company have?",
            "Which policy covers floods?",
            "What is the invoice number?",
            "Which controls are listed as related to SC-1?",
        ] {
            assert_eq!(parse_aggregate(q), None, "{q:?}");
        }
    }

    #[test]
    fn numbers_and_years_in_values() {
        for (text, value) in [
            ("$4.11", 4.11),
            ("1,939.00 EUR", 1939.0),
            ("1.939,00 €", 1939.0),
            ("₹ 10,00,000", 1_000_000.0),
            ("Rs. 12,500", 12500.0),
            ("-3.5", -3.5),
            ("1.000", 1000.0),
        ] {
            assert_eq!(parse_number(text), Some(value), "{text:?}");
        }
        assert_eq!(parse_number("none"), None);
        assert_eq!(year_in("August 3, 2014"), Some(2014));
        assert_eq!(year_in("03/08/2014"), Some(2014));
        assert_eq!(year_in("2014-08-03"), Some(2014));
        assert_eq!(year_in("42183017"), None);
    }
}
