//! Names read by their form: people (`Mark G. Parker`, `Mr. Wadhwani`),
//! organisations (`WS Retail Services Pvt. Ltd.`, `University of La Verne`,
//! `The NASDAQ Global Select Market`) and places (`Portland, Oregon`,
//! `Chennai`, `United States`).
//!
//! Each finder gives byte ranges into the line and a *fit* in [0, 1]: how
//! surely the span is a name of that kind (a known given name or a middle
//! initial for a person; a legal or institutional word for an organisation;
//! a listed place or a `City, State` pair for a place). Weaker shapes (two
//! capitalised words) are kept with a low fit: the reader's learned scoring
//! weighs the fit with the rest of the evidence. The word lists are general
//! data (`data/first_names.txt`, `data/org_suffixes.txt`, `data/places.txt`).
//!
//! The finders are [`find_people`], [`find_organisations`] and
//! [`find_places`], one submodule each; the word lists and the word
//! shapes they share are here.

mod organisations;
mod people;
mod places;
#[cfg(test)]
mod tests;

pub use organisations::find_organisations;
pub(crate) use people::LABELLED_NAME_FIT;
pub use people::find_people;
pub use places::find_places;

use std::collections::HashSet;
use std::sync::LazyLock;

/// A name found in a line.
#[derive(Debug, Clone, PartialEq)]
pub struct NameToken {
    /// The name as written (without a leading honorific).
    pub value: String,
    /// Byte offset in the line.
    pub start: usize,
    /// Byte offset just past the name.
    pub end: usize,
    /// How surely it is a name of the kind asked (see the module docs).
    pub fit: f64,
}

fn word_list(text: &str) -> HashSet<String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(
            |l| if l.contains(' ') && !l.contains("  ") { vec![l.trim()] } else { l.split_whitespace().collect() },
        )
        .map(|w| w.trim().to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

static FIRST_NAMES: LazyLock<HashSet<String>> = LazyLock::new(|| {
    include_str!("../../../data/first_names.txt")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(str::split_whitespace)
        .map(str::to_lowercase)
        .collect()
});
static PLACES: LazyLock<HashSet<String>> = LazyLock::new(|| {
    include_str!("../../../data/places.txt")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.trim().to_lowercase())
        .filter(|l| !l.is_empty())
        .collect()
});
/// Each listed place with the scale of its section (`# scale: city`).
static PLACE_SCALES: LazyLock<std::collections::HashMap<String, &'static str>> = LazyLock::new(|| {
    let mut scale = "";
    let mut out = std::collections::HashMap::new();
    for line in include_str!("../../../data/places.txt").lines() {
        if let Some(rest) = line.strip_prefix("# scale: ") {
            scale = rest.split_whitespace().next().unwrap_or_default();
        } else if !line.starts_with('#') && !line.trim().is_empty() {
            out.entry(line.trim().to_lowercase()).or_insert(scale);
        }
    }
    out
});

/// The scale of a listed place: `country`, `region`, `state` or `city`.
pub(crate) fn place_scale(name: &str) -> Option<&'static str> {
    PLACE_SCALES.get(&name.trim().trim_end_matches('.').to_lowercase()).copied().filter(|s| !s.is_empty())
}

static ORG_WORDS: LazyLock<(HashSet<String>, HashSet<String>)> = LazyLock::new(|| {
    let all = word_list(include_str!("../../../data/org_suffixes.txt"));
    let prefixes = all.iter().filter_map(|w| w.strip_suffix('>')).map(str::to_owned).collect();
    let suffixes = all.into_iter().filter(|w| !w.ends_with('>')).collect();
    (suffixes, prefixes)
});

/// Whether a folded word is one an organisation's name ends or begins with
/// (`university`, `exchange`, `bank`, `llp`): the word that says a name is
/// an institution, unlike a heading's words (`accounting`, `firm`).
pub(crate) fn institution_word(word: &str) -> bool {
    let (suffixes, prefixes) = &*ORG_WORDS;
    suffixes.contains(word) || prefixes.contains(word)
}

/// Capitalised words that do not start or continue a person's name.
const NOT_PERSON: &[&str] = &[
    "the",
    "this",
    "that",
    "these",
    "our",
    "we",
    "a",
    "an",
    "and",
    "of",
    "for",
    "in",
    "on",
    "at",
    "to",
    "by",
    "as",
    "president",
    "chief",
    "executive",
    "officer",
    "vice",
    "senior",
    "director",
    "directors",
    "chairman",
    "chair",
    "board",
    "financial",
    "operating",
    "technology",
    "technical",
    "marketing",
    "human",
    "resources",
    "general",
    "counsel",
    "secretary",
    "treasurer",
    "global",
    "north",
    "south",
    "east",
    "west",
    "united",
    "states",
    "america",
    "american",
    "new",
    "york",
    "university",
    "college",
    "school",
    "street",
    "avenue",
    "road",
    "suite",
    "page",
    "table",
    "section",
    "item",
    "part",
    "note",
    "notes",
    "total",
    "annual",
    "report",
    "form",
    "inc",
    "corp",
    "corporation",
    "company",
    "group",
    "llc",
    "ltd",
    "bank",
    "fund",
    "trust",
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "fiscal",
    "year",
    "quarter",
    "consolidated",
    "statement",
    "statements",
    "balance",
    "sheet",
    "income",
    "cash",
    "flows",
    "net",
    "revenue",
    "sales",
    "policy",
    "insurance",
    "plan",
    "article",
    "schedule",
    "exhibit",
    "agreement",
    "contract",
    "section",
    "chapter",
    "appendix",
    "figure",
    "fig",
    "invoice",
    "date",
    "number",
    "amount",
    "address",
    "phone",
    "email",
    "customer",
    "client",
    "service",
    "services",
    "product",
    "products",
    "market",
    "markets",
    "business",
    "segment",
    "brand",
    "digital",
    "media",
    "experience",
    "cloud",
    "data",
    "information",
    "security",
    "control",
    "controls",
    "access",
    "management",
    "system",
    "systems",
    "program",
    "office",
    "operations",
    "strategy",
    "officers",
    "member",
    "members",
    "committee",
    "audit",
    "risk",
    "legal",
    "affairs",
    "communications",
    "supply",
    "chain",
    "product",
    "engineering",
    "research",
    "development",
    "sciences",
    "science",
    "sector",
    "international",
    "worldwide",
    "region",
    "regional",
    "division",
    "group",
    "team",
    "head",
    "lead",
    "manager",
    "principal",
    "partner",
    "founder",
    "co-founder",
    "executive",
    "administrative",
    "accounting",
    "controller",
    "investor",
    "relations",
    "governance",
    "ethics",
    "compliance",
    "human",
    "people",
    "talent",
    "culture",
    "transformation",
    "innovation",
    "retail",
    "wholesale",
    "consumer",
    "commercial",
    "enterprise",
    "platform",
    "solutions",
    "networks",
    "wireless",
    "business",
    "objective",
    "education",
    "experience",
    "skills",
    "summary",
    "profile",
    "projects",
    "awards",
    "honors",
    "volunteer",
    "involvement",
    "references",
    "gpa",
    "bachelor",
    "master",
    "arts",
    "science",
    "degree",
    "expected",
    "graduation",
    "present",
    "current",
    "mr",
    "ms",
    "mrs",
    "dr",
    "prof",
    "sir",
    "madam",
];

const HONORIFICS: &[&str] = &["mr", "ms", "mrs", "dr", "prof", "sir", "mme", "m", "herr", "frau"];

/// A word of a line with its byte range.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Word<'a> {
    pub(crate) text: &'a str,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Words: runs of letters and digits with inner `.`, `-`, `'`, `’`, `&`; a
/// trailing `.` is kept for initials and abbreviations (`G.`, `Inc.`).
pub(crate) fn words(line: &str) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].1.is_alphanumeric() && chars[i].1 != '&' {
            i += 1;
            continue;
        }
        let start = chars[i].0;
        let mut j = i + 1;
        while j < chars.len() {
            let c = chars[j].1;
            let next_alnum = chars.get(j + 1).is_some_and(|(_, n)| n.is_alphanumeric());
            if c.is_alphanumeric() || (matches!(c, '.' | '-' | '\'' | '’' | '&') && next_alnum) {
                j += 1;
            } else {
                break;
            }
        }
        // A trailing dot after a short word (an initial, "Inc.", "Ltd.").
        let mut end = chars.get(j).map_or(line.len(), |&(at, _)| at);
        let len = line[start..end].chars().count();
        if chars.get(j).is_some_and(|(_, c)| *c == '.') && len <= 4 {
            end += 1;
            j += 1;
        }
        out.push(Word { text: &line[start..end], start, end });
        i = j;
    }
    out
}

fn bare(word: &str) -> String {
    word.trim_end_matches('.').to_lowercase()
}

fn capitalised(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(char::is_uppercase) && word.chars().filter(|c| c.is_alphabetic()).count() >= 1
}

fn is_initial(word: &str) -> bool {
    let mut chars = word.chars();
    matches!((chars.next(), chars.next(), chars.next()), (Some(c), Some('.'), None) if c.is_uppercase())
}

/// One to three initials written together: `J.`, `S.V.`, `R.A.K.`.
fn is_initials(word: &str) -> bool {
    let chars: Vec<char> = word.chars().collect();
    chars.len().is_multiple_of(2)
        && (2..=6).contains(&chars.len())
        && chars.chunks(2).all(|pair| pair[0].is_uppercase() && pair[1] == '.')
}

/// A name written without spaces after its honorific: `Mr.R.A.Shah`,
/// `Dr.K.Rao` (annual reports set them so).
fn glued_name(word: &str) -> bool {
    let Some((title, rest)) = word.split_once('.') else { return false };
    if !HONORIFICS.contains(&title.to_lowercase().as_str()) || !capitalised(title) {
        return false;
    }
    let Some(dot) = rest.rfind('.') else { return false };
    let (initials, surname) = (&rest[..=dot], &rest[dot + 1..]);
    is_initials(initials) && person_word(surname)
}

/// A word shaped like part of a person's name: `Parker`, `O'Brien`,
/// `Jean-Pierre`, `McDonald` (not all capitals, not a listed non-name).
fn person_word(word: &str) -> bool {
    capitalised(word)
        && word.chars().count() >= 2
        && word.chars().all(|c| c.is_alphabetic() || matches!(c, '-' | '\'' | '’'))
        && word.chars().skip(1).any(char::is_lowercase)
        && !NOT_PERSON.contains(&bare(word).as_str())
}

/// Whether two words are neighbours in a name: whitespace only between them
/// (PDF text spaces words out, several spaces at a time), not a column gap.
fn gap_is_space(line: &str, a: &Word<'_>, b: &Word<'_>) -> bool {
    let gap = &line[a.end..b.start];
    !gap.is_empty() && gap.chars().all(char::is_whitespace) && gap.chars().count() <= 6
}
