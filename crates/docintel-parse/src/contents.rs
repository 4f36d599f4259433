//! TOC reconstruction from a printed contents page, for PDFs without an outline.
//!
//! 1. **Find the page**: within the first [`SEARCH_PAGES`] pages, a line that reads as a
//!    contents header only ("Contents", "Table of Contents", "Table des matières", "Sommaire",
//!    "Índice", "Inhalt", "Inhaltsverzeichnis", "Содержание", "Оглавление"...).
//! 2. **Read the entries** after it, on that page and the following ones (up to
//!    [`MAX_CONTENTS_PAGES`], stopping at a page that yields none): `1.2 Title ....... 14`,
//!    leaders optional (at least a space before the number), roman page numbers for front
//!    matter. A page number the collector split off onto its own line (same baseline) is
//!    joined back, and a title wrapped onto two lines is joined. The level comes from the
//!    numbering (`3.2.1` → 3; `Part`/`Chapter`/`Appendix` and unnumbered entries → 1,
//!    `Section`/`Article` → 2 when chapters are present).
//! 3. **Map printed to physical pages**: each entry's title is looked up among the lines of the
//!    pages after the contents (whole-line match, with or without its number, case and
//!    punctuation ignored). Every page it is found on votes for the offset physical − printed;
//!    the offset with most entries behind it wins (ties: the smaller). Roman-numbered entries
//!    keep their number as the physical page.
//!
//! The result is used only when it is **consistent**: at least [`MIN_ENTRIES`] entries, printed
//! numbers ascending for at least [`MIN_ASCENDING`] of consecutive pairs, and an offset backed
//! by at least two entries (one when there are fewer than four). Source = `ContentsPage`.

use std::collections::HashMap;
use std::sync::LazyLock;

use docintel_schema::{Line, TocEntry, TocSource};
use regex::Regex;

use crate::headings::toc_rows;

/// Pages searched for a contents header.
pub(crate) const SEARCH_PAGES: u32 = 12;
/// Pages a contents listing may span.
pub(crate) const MAX_CONTENTS_PAGES: u32 = 8;
/// Entries needed.
pub(crate) const MIN_ENTRIES: usize = 3;
/// Share of consecutive entry pairs whose printed pages must not go down.
pub(crate) const MIN_ASCENDING: f32 = 0.8;

/// Headers of a contents page, normalised (see [`key`]).
const HEADERS: [&str; 20] = [
    "contents",
    "table of contents",
    "contents page",
    "brief contents",
    "table des matieres",
    "table des matières",
    "sommaire",
    "indice",
    "índice",
    "indice general",
    "índice general",
    "contenido",
    "contenidos",
    "inhalt",
    "inhaltsverzeichnis",
    "содержание",
    "оглавление",
    "sumário",
    "sumario",
    "indice generale",
];

static ENTRY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<title>.*?\S)(?:\s*[.·…_\u{2024}\u{2025}]{2,}\s*|\s+)(?P<page>\d{1,4}|[ivxlcdm]{1,7})$")
        .expect("static regex")
});
static NUMBERED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?P<num>\d{1,3}(?:\.\d{1,3})*)\.?\s+(?P<rest>\S.*)$").expect("static regex"));
static KEYWORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^(?P<kw>part|partie|teil|parte|часть|chapter|chapitre|kapitel|cap[ií]tulo|глава|appendix|annex|annexe|anhang|anexo|приложение|section|article|art[ií]culo|artikel|статья|раздел)\b",
    )
    .expect("static regex")
});

/// A TOC rebuilt from a contents page, with what the mapping found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ContentsToc {
    /// The TOC rows (source `ContentsPage`).
    pub(crate) toc: Vec<TocEntry>,
    /// The page the contents header is on.
    pub(crate) contents_page: u32,
    /// Physical page − printed page.
    pub(crate) offset: i64,
    /// Entries whose title was found on the page the offset predicts.
    pub(crate) confirmed: usize,
}

/// One parsed contents entry.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    level: u32,
    title: String,
    /// The title without its numbering.
    bare: String,
    printed: Printed,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Printed {
    Arabic(u32),
    Roman(u32),
}

/// Rebuilds the TOC from a printed contents page; `None` when there is none or it is not
/// consistent (see the module doc).
pub(crate) fn toc_from_contents(lines: &[Line], n_pages: u32) -> Option<ContentsToc> {
    let header = lines.iter().position(|l| l.page <= SEARCH_PAGES && HEADERS.contains(&key(&l.text).as_str()))?;
    let contents_page = lines[header].page;
    let (entries, last_page) = read_entries(&lines[header + 1..], contents_page);
    if entries.len() < MIN_ENTRIES {
        return None;
    }
    let arabic: Vec<u32> = entries
        .iter()
        .filter_map(|e| match e.printed {
            Printed::Arabic(p) => Some(p),
            Printed::Roman(_) => None,
        })
        .collect();
    let pairs = arabic.len().saturating_sub(1);
    let ascending = arabic.windows(2).filter(|w| w[1] >= w[0]).count();
    if arabic.len() < MIN_ENTRIES || (ascending as f32) < MIN_ASCENDING * pairs as f32 {
        return None;
    }

    // Where each title appears after the contents.
    let mut pages_of: HashMap<String, Vec<u32>> = HashMap::new();
    for line in lines.iter().filter(|l| l.page > last_page) {
        let full = key(&line.text);
        if let Some(caps) = NUMBERED.captures(line.text.trim()) {
            pages_of.entry(key(&caps["rest"])).or_default().push(line.page);
        }
        pages_of.entry(full).or_default().push(line.page);
    }
    let mut votes: HashMap<i64, usize> = HashMap::new();
    for entry in &entries {
        let Printed::Arabic(printed) = entry.printed else { continue };
        let mut offsets: Vec<i64> = [key(&entry.title), key(&entry.bare)]
            .iter()
            .filter(|k| k.chars().filter(|c| c.is_alphabetic()).count() >= 3)
            .filter_map(|k| pages_of.get(k))
            .flatten()
            .map(|&page| i64::from(page) - i64::from(printed))
            .collect();
        offsets.sort_unstable();
        offsets.dedup();
        for offset in offsets {
            *votes.entry(offset).or_default() += 1;
        }
    }
    let (offset, confirmed) =
        votes.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.abs().cmp(&a.0.abs())).then(b.0.cmp(&a.0)))?;
    let needed = if entries.len() < 4 { 1 } else { 2 };
    if confirmed < needed {
        return None;
    }

    let rows: Vec<(u32, String, u32)> = entries
        .into_iter()
        .filter_map(|e| {
            let physical = match e.printed {
                Printed::Arabic(p) => i64::from(p) + offset,
                Printed::Roman(p) => i64::from(p),
            };
            (1..=i64::from(n_pages)).contains(&physical).then_some((e.level, e.title, physical as u32))
        })
        .collect();
    if rows.len() < MIN_ENTRIES {
        return None;
    }
    Some(ContentsToc { toc: toc_rows(&rows, n_pages, TocSource::ContentsPage), contents_page, offset, confirmed })
}

/// Reads entries from the lines after the header; returns them and the last contents page.
fn read_entries(lines: &[Line], contents_page: u32) -> (Vec<Entry>, u32) {
    let mut entries: Vec<Entry> = Vec::new();
    let mut last_page = contents_page;
    let mut page = contents_page;
    let mut found_on_page = 0usize;
    let mut pending: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        if line.page != page {
            if found_on_page == 0 && page != contents_page {
                break;
            }
            if found_on_page > 0 {
                last_page = page;
            }
            if line.page > contents_page + MAX_CONTENTS_PAGES {
                break;
            }
            page = line.page;
            found_on_page = 0;
            pending = None;
        }
        let mut text = line.text.trim().to_string();
        // A page number split off onto its own line, on the same baseline.
        if let Some(next) = lines.get(i + 1)
            && next.page == line.page
            && ENTRY.captures(&text).is_none()
            && is_page_number(next.text.trim())
            && (next.bbox.y0 - line.bbox.y0).abs() <= 0.5 * (line.bbox.y1 - line.bbox.y0).abs().max(1.0)
        {
            text = format!("{text} {}", next.text.trim());
            i += 1;
        }
        i += 1;
        let Some(entry) = parse_entry(&text, pending.as_deref()) else {
            // A title wrapped onto the next line keeps its first part.
            pending = (text.chars().any(char::is_alphabetic) && text.chars().count() <= 120).then_some(text);
            continue;
        };
        pending = None;
        entries.push(entry);
        found_on_page += 1;
    }
    if found_on_page > 0 {
        last_page = page;
    }
    let has_chapters = entries.iter().any(|e| e.level == 1 && KEYWORD.is_match(&e.title));
    if !has_chapters {
        for e in &mut entries {
            if e.level == 2 && KEYWORD.is_match(&e.title) {
                e.level = 1;
            }
        }
    }
    (entries, last_page)
}

fn parse_entry(text: &str, pending: Option<&str>) -> Option<Entry> {
    let caps = ENTRY.captures(text)?;
    let mut title =
        caps["title"].trim_end_matches(|c: char| c.is_whitespace() || ".·…_".contains(c)).trim().to_string();
    if !title.chars().any(char::is_alphabetic) {
        return None;
    }
    // A wrapped title: the previous line was its first part unless this line is numbered.
    if let Some(first) = pending
        && !NUMBERED.is_match(&title)
        && !KEYWORD.is_match(&title)
        && NUMBERED.is_match(first)
    {
        title = format!("{first} {title}");
    }
    let page = &caps["page"];
    let printed = match page.parse::<u32>() {
        Ok(p) => Printed::Arabic(p),
        Err(_) => Printed::Roman(roman(page)?),
    };
    let (level, bare) = match NUMBERED.captures(&title) {
        Some(c) => (c["num"].split('.').count() as u32, c["rest"].to_string()),
        None => match KEYWORD.captures(&title).map(|c| c["kw"].to_lowercase()) {
            Some(kw)
                if ["section", "article", "artículo", "articulo", "artikel", "статья", "раздел"]
                    .contains(&kw.as_str()) =>
            {
                (2, title.clone())
            }
            _ => (1, title.clone()),
        },
    };
    Some(Entry { level: level.min(6), title, bare, printed })
}

fn is_page_number(text: &str) -> bool {
    (!text.is_empty() && text.len() <= 4 && text.bytes().all(|b| b.is_ascii_digit()))
        || (text.bytes().all(|b| b.is_ascii_lowercase()) && roman(text).is_some())
}

/// `xiv` → 14 (lowercase or uppercase, at most 7 letters, values up to 3999).
fn roman(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 7 {
        return None;
    }
    let value = |c: char| match c.to_ascii_lowercase() {
        'i' => Some(1),
        'v' => Some(5),
        'x' => Some(10),
        'l' => Some(50),
        'c' => Some(100),
        'd' => Some(500),
        'm' => Some(1000),
        _ => None,
    };
    let digits: Vec<u32> = text.chars().map(value).collect::<Option<_>>()?;
    let mut total = 0i64;
    for (i, &d) in digits.iter().enumerate() {
        if digits.get(i + 1).is_some_and(|&next| next > d) {
            total -= i64::from(d);
        } else {
            total += i64::from(d);
        }
    }
    u32::try_from(total).ok().filter(|&t| t > 0)
}

/// Lowercase, alphanumerics only, single spaces; a trailing colon or leaders are dropped.
fn key(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use docintel_schema::BBox;

    /// One line per text; a text starting with `>` sits on the previous line's baseline, right.
    fn doc(pages: &[&[&str]]) -> Vec<Line> {
        let mut out: Vec<Line> = Vec::new();
        for (p, texts) in pages.iter().enumerate() {
            let mut row = 0;
            for t in texts.iter() {
                let (same_row, text) = match t.strip_prefix('>') {
                    Some(rest) => (true, rest),
                    None => (false, *t),
                };
                if !same_row && out.last().is_some_and(|l| l.page == p as u32 + 1) {
                    row += 1;
                }
                let y0 = 700.0 - 14.0 * row as f32;
                let x0 = if same_row { 400.0 } else { 72.0 };
                let in_page = out.iter().filter(|l| l.page == p as u32 + 1).count() as u32 + 1;
                out.push(Line {
                    line_id: out.len() as u32 + 1,
                    page: p as u32 + 1,
                    line_in_page: in_page,
                    text: text.into(),
                    bbox: BBox { x0, y0, x1: x0 + 200.0, y1: y0 + 10.0 },
                });
            }
        }
        out
    }

    #[test]
    fn entries_levels_and_romans() {
        let e = parse_entry("1.2 Scope and purpose ........ 14", None).expect("entry");
        assert_eq!(
            (e.level, e.title.as_str(), e.bare.as_str(), e.printed),
            (2, "1.2 Scope and purpose", "Scope and purpose", Printed::Arabic(14))
        );
        let e = parse_entry("Preface . . . . . xi", None).expect("roman");
        assert_eq!((e.level, e.printed), (1, Printed::Roman(11)));
        let e = parse_entry("Chapter 3 Results 40", None).expect("keyword");
        assert_eq!(e.level, 1);
        assert_eq!(parse_entry("Part II", None), None, "capital roman numerals are not page numbers");
        assert!(parse_entry("12 34", None).is_none(), "no letters");
        assert_eq!(roman("XIV"), Some(14));
        assert_eq!(roman("mix"), Some(1009));
        assert_eq!(roman("abc"), None);
        assert_eq!(key("Table of Contents:"), "table of contents");
    }

    #[test]
    fn printed_pages_map_to_physical_pages() {
        // Cover, contents, then printed page 1 is physical page 3.
        let lines = doc(&[
            &["A Report"],
            &[
                "Table of Contents",
                "1 Introduction ....... 1",
                "2 Method",
                ">2",
                "2.1 Data sources . . . 2",
                "3 Results 3",
            ],
            &["1 Introduction", "Some text."],
            &["2 Method", "2.1 Data sources", "More text."],
            &["3 Results", "Numbers."],
        ]);
        let found = toc_from_contents(&lines, 5).expect("contents toc");
        assert_eq!((found.contents_page, found.offset, found.confirmed), (2, 2, 4));
        let rows: Vec<(u32, Option<u32>, &str, u32, u32)> =
            found.toc.iter().map(|t| (t.level, t.parent, t.title.as_str(), t.start_page, t.end_page)).collect();
        assert_eq!(
            rows,
            [
                (1, None, "1 Introduction", 3, 3),
                (1, None, "2 Method", 4, 4),
                (2, Some(1), "2.1 Data sources", 4, 4),
                (1, None, "3 Results", 5, 5),
            ]
        );
        assert!(found.toc.iter().all(|t| t.source == TocSource::ContentsPage));
    }

    #[test]
    fn no_header_or_titles_nowhere_gives_none() {
        let no_header = doc(&[&["Intro 1", "Method 2", "Results 3"], &["Intro"], &["Method"], &["Results"]]);
        assert!(toc_from_contents(&no_header, 4).is_none());
        let unconfirmed = doc(&[
            &["Contents", "Alpha part 1", "Beta part 2", "Gamma part 3", "Delta part 4"],
            &["x"],
            &["y"],
            &["z"],
        ]);
        assert!(toc_from_contents(&unconfirmed, 4).is_none());
    }
}
