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
    include_str!("../../data/first_names.txt")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(str::split_whitespace)
        .map(str::to_lowercase)
        .collect()
});
static PLACES: LazyLock<HashSet<String>> = LazyLock::new(|| {
    include_str!("../../data/places.txt")
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
    for line in include_str!("../../data/places.txt").lines() {
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
    let all = word_list(include_str!("../../data/org_suffixes.txt"));
    let prefixes = all.iter().filter_map(|w| w.strip_suffix('>')).map(str::to_owned).collect();
    let suffixes = all.into_iter().filter(|w| !w.ends_with('>')).collect();
    (suffixes, prefixes)
});

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
struct Word<'a> {
    text: &'a str,
    start: usize,
    end: usize,
}

/// Words: runs of letters and digits with inner `.`, `-`, `'`, `’`, `&`; a
/// trailing `.` is kept for initials and abbreviations (`G.`, `Inc.`).
fn words(line: &str) -> Vec<Word<'_>> {
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

/// Legal-form words that may follow a name after a comma (`NIKE, Inc.`).
const LEGAL_FORMS: &[&str] = &[
    "inc",
    "incorporated",
    "corp",
    "co",
    "llc",
    "l.l.c",
    "ltd",
    "limited",
    "llp",
    "lp",
    "plc",
    "gmbh",
    "ag",
    "sa",
    "s.a",
    "sas",
    "bv",
    "b.v",
    "nv",
    "n.v",
    "pvt",
];

/// People's names of a line.
pub fn find_people(line: &str) -> Vec<NameToken> {
    let ws = words(line);
    let mut out = Vec::new();
    let mut i = 0;
    while i < ws.len() {
        let honorific = HONORIFICS.contains(&bare(ws[i].text).as_str())
            && ws[i].text.chars().next().is_some_and(char::is_uppercase);
        if glued_name(ws[i].text) {
            out.push(NameToken { value: ws[i].text.to_owned(), start: ws[i].start, end: ws[i].end, fit: 0.8 });
            i += 1;
            continue;
        }
        let first = if honorific { i + 1 } else { i };
        // "Mr. S.V. Shanbhag": initials may open a name after an honorific.
        let opens_with_initials = honorific
            && first + 1 < ws.len()
            && is_initials(ws[first].text)
            && person_word(ws[first + 1].text)
            && gap_is_space(line, &ws[first], &ws[first + 1]);
        if first >= ws.len()
            || !(person_word(ws[first].text) || opens_with_initials)
            || (honorific && !gap_is_space(line, &ws[i], &ws[first]))
        {
            i += 1;
            continue;
        }
        let mut end = first + 1;
        let mut initials = usize::from(opens_with_initials);
        while end < ws.len() && end - first < 4 && gap_is_space(line, &ws[end - 1], &ws[end]) {
            if person_word(ws[end].text) {
                end += 1;
            } else if (is_initial(ws[end].text) || is_initials(ws[end].text))
                && initials == 0
                && end + 1 < ws.len()
                && person_word(ws[end + 1].text)
            {
                initials += 1;
                end += 1;
            } else {
                break;
            }
        }
        let n = end - first;
        let known_first = FIRST_NAMES.contains(&bare(ws[first].text));
        let fit = if n >= 2 && known_first {
            1.0
        } else if n >= 3 && initials == 1 {
            0.9
        } else if honorific {
            0.8
        } else if n >= 2 {
            0.45
        } else {
            0.0
        };
        if fit > 0.0 {
            let (start, stop) = (ws[first].start, ws[end - 1].end);
            out.push(NameToken { value: line[start..stop].to_owned(), start, end: stop, fit });
            i = end;
        } else {
            i += 1;
        }
    }
    if let Some(name) = labelled_name(line)
        && !out.iter().any(|t| t.start < name.end && name.start < t.end)
    {
        out.push(name);
    }
    out
}

/// The one-word name a form writes after its label ("Guest Name: Sanjay",
/// "Insured: Meera"): a label of at most four words, a colon, and a single
/// name-shaped word closing the line. Two-word names need no label; a lone
/// capitalised word anywhere else is no name.
fn labelled_name(line: &str) -> Option<NameToken> {
    let (label, value) = line.split_once(':')?;
    let label_words = label.split_whitespace().count();
    if label_words == 0 || label_words > 4 || !label.chars().any(char::is_alphabetic) {
        return None;
    }
    let value_trimmed = value.trim().trim_end_matches(['.', ',']);
    if value_trimmed.split_whitespace().count() != 1 || !person_word(value_trimmed) {
        return None;
    }
    let start = label.len() + 1 + (value.len() - value.trim_start().len());
    Some(NameToken { value: value_trimmed.to_owned(), start, end: start + value_trimmed.len(), fit: 0.6 })
}

/// Words that may join the capitalised words of an organisation's name.
/// The most letters an acronym standing for a name has.
const MAX_ACRONYM: usize = 5;

const ORG_JOINERS: &[&str] = &["of", "and", "&", "de", "du", "des", "für", "for", "the", "la", "le", "et", "y"];

fn org_word(word: &str) -> bool {
    (capitalised(word)
        || word.chars().next().is_some_and(|c| c.is_ascii_digit()) && word.chars().any(char::is_alphabetic))
        && !NOT_ORG_WORDS.contains(&bare(word).as_str())
}

/// Words that a capital makes look like part of a name: articles, document
/// parts, and function words at the start of a sentence or a heading ("If
/// Company fails", "Each Party", "NOW, THEREFORE"): never an organisation's
/// word.
const NOT_ORG_WORDS: &[&str] = &[
    "the",
    "a",
    "an",
    "this",
    "our",
    "we",
    "page",
    "table",
    "section",
    "if",
    "each",
    "either",
    "neither",
    "any",
    "such",
    "these",
    "those",
    "that",
    "now",
    "whereas",
    "whereby",
    "therefore",
    "hereby",
    "herein",
    "upon",
    "when",
    "where",
    "while",
    "unless",
    "except",
    "notwithstanding",
    "as",
    "at",
    "by",
    "in",
    "on",
    "to",
    "with",
    "from",
    "under",
    "both",
    "every",
    "its",
    "his",
    "her",
    "their",
    "your",
    "my",
    "si",
    "chaque",
    "lorsque",
];

/// Organisations' names of a line.
pub fn find_organisations(line: &str) -> Vec<NameToken> {
    let (suffixes, prefixes) = &*ORG_WORDS;
    let ws = words(line);
    let mut out: Vec<NameToken> = Vec::new();
    let mut i = 0;
    while i < ws.len() {
        // "The NASDAQ ...": the article belongs to the name only when a
        // capitalised word follows.
        let lead_the = bare(ws[i].text) == "the" && capitalised(ws[i].text);
        let first = if lead_the { i + 1 } else { i };
        if first >= ws.len() || !org_word(ws[first].text) {
            i += 1;
            continue;
        }
        let mut end = first + 1;
        let mut last_good = end;
        while end < ws.len() && end - first < 8 {
            let gap = &line[ws[end - 1].end..ws[end].start];
            let plain_gap = gap.chars().all(char::is_whitespace) && !gap.is_empty() && gap.chars().count() <= 6;
            let comma_suffix = gap.trim() == "," && LEGAL_FORMS.contains(&bare(ws[end].text).as_str());
            if !(plain_gap || comma_suffix) {
                break;
            }
            // Every word of a name is capitalised: "Company services as"
            // ends before "services", and "as" is the Norwegian "AS" only
            // when written so.
            if org_word(ws[end].text) {
                end += 1;
                last_good = end;
            } else if ORG_JOINERS.contains(&bare(ws[end].text).as_str())
                && end + 1 < ws.len()
                && org_word(ws[end + 1].text)
            {
                end += 1;
            } else {
                break;
            }
        }
        let end = last_good;
        let names: Vec<String> = ws[first..end].iter().map(|w| bare(w.text)).collect();
        let suffix = names.last().is_some_and(|w| suffixes.contains(w)) && names.len() >= 2;
        let prefix = prefixes.contains(&names[0]) && names.len() >= 3 && names[1] == "of";
        // An acronym is short (`SEC`, `NASDQ`, `AT&T`); a longer word in
        // capitals is a heading or a shouted word (`WHEREAS`, `EXHIBIT`).
        let letters = ws[first].text.chars().filter(|c| c.is_alphabetic()).count();
        let acronym = names.len() == 1
            && (3..=MAX_ACRONYM).contains(&letters)
            && ws[first].text.chars().all(|c| c.is_uppercase() || c == '&');
        // "a Delaware corporation", "an Indian company": a description of
        // a party, not its name.
        let described = first > 0 && matches!(bare(ws[first - 1].text).as_str(), "a" | "an");
        let fit = if described {
            0.0
        } else if suffix || prefix {
            1.0
        } else if acronym {
            0.5
        } else if names.len() >= 2 {
            0.25
        } else {
            0.0
        };
        if fit > 0.0 {
            let start = if lead_the && (suffix || prefix) { ws[i].start } else { ws[first].start };
            let stop = ws[end - 1].end;
            out.push(NameToken { value: line[start..stop].to_owned(), start, end: stop, fit });
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

/// US state and Canadian province codes, for `City, ST`.
const REGION_CODES: &[&str] = &[
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY", "LA", "ME",
    "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH", "OK", "OR", "PA",
    "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY", "DC", "ON", "QC", "BC", "AB",
];

/// Places of a line.
pub fn find_places(line: &str) -> Vec<NameToken> {
    let ws = words(line);
    let mut out: Vec<NameToken> = Vec::new();
    let mut i = 0;
    while i < ws.len() {
        if !capitalised(ws[i].text) {
            i += 1;
            continue;
        }
        // The longest listed place starting here (up to four words).
        let mut listed: Option<usize> = None;
        for n in (1..=4).rev() {
            if i + n > ws.len() {
                continue;
            }
            let phrase: Vec<String> = ws[i..i + n].iter().map(|w| w.text.to_lowercase()).collect();
            if PLACES.contains(&phrase.join(" ")) && ws[i..i + n].windows(2).all(|p| gap_is_space(line, &p[0], &p[1])) {
                listed = Some(n);
                break;
            }
        }
        // A capitalised run, then ", ST" or ", <listed place>".
        let mut run = i + 1;
        while run < ws.len() && run - i < 3 && capitalised(ws[run].text) && gap_is_space(line, &ws[run - 1], &ws[run]) {
            run += 1;
        }
        let after_comma = ws.get(run).filter(|w| line[ws[run - 1].end..w.start].trim() == ",");
        let region = after_comma.and_then(|w| {
            if REGION_CODES.contains(&w.text) {
                return Some(run + 1);
            }
            (1..=3).rev().find_map(|n| {
                let phrase: Vec<String> = ws.get(run..run + n)?.iter().map(|w| w.text.to_lowercase()).collect();
                (PLACES.contains(&phrase.join(" ")) && capitalised(ws[run].text)).then_some(run + n)
            })
        });
        if let Some(stop) = region
            && ws[i..run].iter().all(|w| person_word(w.text) || PLACES.contains(&w.text.to_lowercase()))
        {
            let (start, end) = (ws[i].start, ws[stop - 1].end);
            out.push(NameToken { value: line[start..end].to_owned(), start, end, fit: 1.0 });
            i = stop;
            continue;
        }
        if let Some(n) = listed {
            let (start, end) = (ws[i].start, ws[i + n - 1].end);
            out.push(NameToken { value: line[start..end].to_owned(), start, end, fit: 1.0 });
            i += n;
            continue;
        }
        // After "in", "at", "from": a capitalised run may be a place.
        let before = i.checked_sub(1).map(|p| bare(ws[p].text));
        if before.as_deref().is_some_and(|b| matches!(b, "in" | "at" | "from" | "near" | "à" | "en"))
            && person_word(ws[i].text)
        {
            let (start, end) = (ws[i].start, ws[run - 1].end);
            out.push(NameToken { value: line[start..end].to_owned(), start, end, fit: 0.3 });
            i = run;
            continue;
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_label_names_a_one_word_person() {
        let names = find_people("Guest Name: Sanjay");
        let name = names.iter().find(|t| t.value == "Sanjay").expect("the labelled name");
        assert_eq!(&"Guest Name: Sanjay"[name.start..name.end], "Sanjay");
        assert!(find_people("Rooms: Deluxe suite with view").is_empty());
        assert!(find_people("Sanjay").is_empty());
        assert!(find_people("This is a sentence: Note").len() <= 1);
        assert!(find_people("A long label of many words here: Sanjay").is_empty());
    }

    fn values(tokens: Vec<NameToken>) -> Vec<(String, f64)> {
        tokens.into_iter().map(|t| (t.value, t.fit)).collect()
    }

    #[test]
    fn people() {
        let line = "Mark G. Parker , Chairman, President and Chief Executive Officer — Mr. Parker, 63, was appointed";
        assert_eq!(values(find_people(line)), [("Mark G. Parker".to_owned(), 1.0), ("Parker".to_owned(), 0.8)]);
        assert_eq!(values(find_people("Leo    Leopard")), [("Leo    Leopard".to_owned(), 1.0)]);
        assert!(find_people("Chief Executive Officer").is_empty());
        assert!(find_people("Digital Media business").is_empty());
        // Initials written together, after an honorific or glued to it.
        assert_eq!(values(find_people("Company Secretary Mr. S.V. Shanbhag")), [("S.V. Shanbhag".to_owned(), 0.8)]);
        assert_eq!(
            values(find_people("Mr.R.A.Shah, Mr. Lalit Bhasin")),
            [("Mr.R.A.Shah".to_owned(), 0.8), ("Lalit Bhasin".to_owned(), 0.8)]
        );
        assert!(find_people("Mr.Chairman").is_empty());
    }

    #[test]
    fn organisations() {
        assert_eq!(
            values(find_organisations("University of La Verne, La Verne, CA"))[0],
            ("University of La Verne".to_owned(), 1.0)
        );
        assert_eq!(
            values(find_organisations("Sold by: WS Retail Services Pvt. Ltd."))[0],
            ("WS Retail Services Pvt. Ltd.".to_owned(), 1.0)
        );
        let nasdaq = find_organisations("Our common stock is traded on The NASDAQ Global Select Market under");
        assert_eq!(nasdaq[0].value, "The NASDAQ Global Select Market");
        assert_eq!(find_organisations("NIKE, Inc. is")[0].value, "NIKE, Inc.");
        // Contract prose: a description, a shouted heading and a lowercase
        // "as" are no names; the defined party is.
        let line = "WHEREAS, Equifax Inc., a Georgia corporation, and the Agent as defined below. If Company fails";
        let names: Vec<String> = find_organisations(line).into_iter().map(|t| t.value).collect();
        assert_eq!(names, vec!["Equifax Inc."]);
        assert_eq!(values(find_organisations("filed with the SEC")), vec![("SEC".to_owned(), 0.5)]);
    }

    #[test]
    fn places() {
        assert_eq!(
            values(find_places("PricewaterhouseCoopers LLP Portland, Oregon July 23, 2019"))[0],
            ("Portland, Oregon".to_owned(), 1.0)
        );
        assert_eq!(
            find_places("25,Vembuliamman Koil Street,, Pazhavanthangal, Chennai")[0].value,
            "Pazhavanthangal, Chennai"
        );
        assert_eq!(find_places("La Verne, CA")[0].value, "La Verne, CA");
        assert_eq!(find_places("sales in the United States grew")[0].value, "United States");
    }
}
