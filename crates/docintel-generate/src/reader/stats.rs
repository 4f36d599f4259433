//! What the reader needs from the whole document, computed once per
//! document and kept for every question asked of it: each page's words (for
//! how rare a question term is, and whether a constraint is printed at all)
//! and the running headers and footers (the same short line at the top or
//! foot of several pages, never an answer), and the words it writes in
//! lower case (a capitalised word it also writes so is a common word, not a
//! name).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, LazyLock, Mutex};

use docintel_schema::ParsedDocument;

use super::evidence::words_of;

/// A line repeated on at least this many pages is a running header/footer.
const RUNNING_MIN_PAGES: usize = 3;
/// A running header or footer is among this many lines at the top or the
/// foot of its page (a name repeated in a signature block and an officers'
/// table is none).
const RUNNING_EDGE_LINES: usize = 3;
/// A running header or footer is at most this many characters.
const RUNNING_MAX_CHARS: usize = 160;
/// Documents kept in the cache (the most recent ones).
const CACHE_DOCUMENTS: usize = 8;

/// Recent documents' facts, by fingerprint.
type Cache = Mutex<Vec<(u64, Arc<DocStats>)>>;

/// Per-document facts.
#[derive(Debug)]
pub(crate) struct DocStats {
    /// Pages of the document (with at least one line).
    pub(crate) n_pages: usize,
    /// For each word, the pages it is on.
    pages_of: HashMap<String, BTreeSet<u32>>,
    /// The folded text of each page, words joined by one space, with a
    /// space at both ends (phrase look-ups).
    page_text: Vec<(u32, String)>,
    /// Folded texts of the running lines.
    running: HashSet<String>,
    /// Words written in lower case somewhere in the document.
    lowercase: HashSet<String>,
    /// The printed page numbers: (page, text) of a page's first or last
    /// line that is only its number (see [`page_numbers`]).
    page_numbers: HashSet<(u32, String)>,
    /// Words printed after a title ("Mr. Schlesinger" → `schlesinger`):
    /// the surnames the document calls people by.
    titled: HashSet<String>,
    /// Words of two letters or more printed in capitals only ("AGM",
    /// "NAV"), folded: the acronyms the document writes.
    capitals: HashSet<String>,
}

/// Titles a person is called by before the surname (folded).
const HONORIFICS: &[&str] = &["mr", "mrs", "ms", "miss", "dr", "prof", "mme", "mlle", "herr", "frau", "dhr", "mevr"];

impl DocStats {
    fn new(document: &ParsedDocument) -> DocStats {
        let mut pages_of: HashMap<String, BTreeSet<u32>> = HashMap::new();
        let mut page_text: Vec<(u32, String)> = Vec::new();
        let mut line_pages: HashMap<String, BTreeSet<u32>> = HashMap::new();
        let mut lowercase: HashSet<String> = HashSet::new();
        let mut capitals: HashSet<String> = HashSet::new();
        let mut lines_on: HashMap<u32, u32> = HashMap::new();
        for line in &document.lines {
            let n = lines_on.entry(line.page).or_default();
            *n = (*n).max(line.line_in_page);
        }
        for line in &document.lines {
            let words = words_of(&line.text);
            if page_text.last().is_none_or(|(p, _)| *p != line.page) {
                page_text.push((line.page, " ".to_owned()));
            }
            let text = &mut page_text.last_mut().expect("pushed").1;
            for w in &words {
                text.push_str(&w.norm);
                text.push(' ');
                pages_of.entry(w.norm.clone()).or_default().insert(line.page);
                let raw = &line.text[w.start..w.end];
                if raw.chars().all(|c| !c.is_alphabetic() || c.is_lowercase()) && raw.chars().any(char::is_alphabetic) {
                    lowercase.insert(w.norm.clone());
                }
                if raw.chars().count() >= 2 && raw.chars().all(|c| c.is_alphabetic() && c.is_uppercase()) {
                    capitals.insert(w.norm.clone());
                }
            }
            let last = lines_on.get(&line.page).copied().unwrap_or(0);
            let at_edge = line.line_in_page as usize <= RUNNING_EDGE_LINES
                || ((last - line.line_in_page.min(last)) as usize) < RUNNING_EDGE_LINES;
            let trimmed = line.text.trim();
            // A figure repeated on several pages (a statement total quoted
            // again in a summary) is no running line: those carry words.
            let wordy = words.iter().any(|w| w.norm.chars().any(char::is_alphabetic));
            if at_edge && trimmed.chars().count() >= 4 && trimmed.chars().count() <= RUNNING_MAX_CHARS && wordy {
                let key: Vec<&str> = words.iter().map(|w| w.norm.as_str()).collect();
                line_pages.entry(key.join(" ")).or_default().insert(line.page);
            }
        }
        let running = line_pages.into_iter().filter(|(_, p)| p.len() >= RUNNING_MIN_PAGES).map(|(k, _)| k).collect();
        let page_numbers = page_numbers(document);
        let titled = page_text
            .iter()
            .flat_map(|(_, text)| {
                let words: Vec<&str> = text.split_whitespace().collect();
                words.windows(2).filter(|w| HONORIFICS.contains(&w[0])).map(|w| w[1].to_owned()).collect::<Vec<_>>()
            })
            .collect();
        DocStats {
            n_pages: page_text.len().max(1),
            pages_of,
            page_text,
            running,
            lowercase,
            page_numbers,
            titled,
            capitals,
        }
    }

    /// The document's facts, from the cache when it was seen before.
    pub(crate) fn of(document: &ParsedDocument) -> Arc<DocStats> {
        static CACHE: LazyLock<Cache> = LazyLock::new(|| Mutex::new(Vec::new()));
        let key = fingerprint(document);
        if let Some((_, stats)) = CACHE.lock().expect("stats cache").iter().find(|(k, _)| *k == key) {
            return Arc::clone(stats);
        }
        let stats = Arc::new(DocStats::new(document));
        let mut cache = CACHE.lock().expect("stats cache");
        cache.retain(|(k, _)| *k != key);
        cache.push((key, Arc::clone(&stats)));
        if cache.len() > CACHE_DOCUMENTS {
            cache.remove(0);
        }
        stats
    }

    /// Whether a line is its page's printed number ("6" at the foot of
    /// page 6): never an answer.
    pub(crate) fn is_page_number(&self, page: u32, text: &str) -> bool {
        let text = text.trim();
        is_page_number_text(text) && self.page_numbers.contains(&(page, text.to_owned()))
    }

    /// On how many pages a (folded) word is.
    pub(crate) fn page_count(&self, word: &str) -> usize {
        self.pages_of.get(word).map_or(0, BTreeSet::len)
    }

    /// The pages holding a (folded, space-joined) phrase.
    pub(crate) fn pages_with(&self, phrase: &str) -> Vec<u32> {
        if phrase.is_empty() {
            return Vec::new();
        }
        let needle = format!(" {phrase} ");
        self.page_text.iter().filter(|(_, t)| t.contains(&needle)).map(|(p, _)| *p).collect()
    }

    /// The pages holding a run of words whose initials spell `acronym`
    /// (folded: `ncd` → "no claim discount"), short joining words skipped.
    pub(crate) fn pages_spelling(&self, acronym: &str) -> Vec<u32> {
        self.page_text.iter().filter(|(_, text)| spells(text, acronym)).map(|(p, _)| *p).collect()
    }

    /// The pages naming a person `first … last` with at most one word
    /// between (a middle initial or name: "edward a schlesinger").
    pub(crate) fn pages_with_name(&self, first: &str, last: &str) -> Vec<u32> {
        let (first, last) = (format!(" {first} "), format!(" {last} "));
        self.page_text
            .iter()
            .filter(|(_, t)| {
                t.match_indices(&first).any(|(at, _)| {
                    let rest = &t[at + first.len() - 1..];
                    let skip_one = rest[1..].find(' ').map(|k| &rest[k + 1..]);
                    rest.starts_with(&last) || skip_one.is_some_and(|r| r.starts_with(&last))
                })
            })
            .map(|(p, _)| *p)
            .collect()
    }

    /// Whether the document calls someone by title and this (folded)
    /// surname ("Mr. Schlesinger").
    pub(crate) fn called_by_title(&self, surname: &str) -> bool {
        self.titled.contains(surname)
    }

    /// Whether the document writes a (folded) word in lower case somewhere:
    /// a common word ("Health Care" in a heading), not only a name.
    pub(crate) fn written_lowercase(&self, word: &str) -> bool {
        self.lowercase.contains(word)
    }

    /// Whether the document prints a (folded) word in capitals only
    /// somewhere: an acronym it uses ("AGM").
    pub(crate) fn written_in_capitals(&self, word: &str) -> bool {
        self.capitals.contains(word)
    }

    /// Whether a line (its folded words) is a running header or footer.
    pub(crate) fn is_running(&self, folded: &str) -> bool {
        self.running.contains(folded)
    }
}

/// Source, line count, and a hash of every line's text: a changed document
/// never reads another's facts.
fn fingerprint(document: &ParsedDocument) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut hash = OFFSET;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash = (hash ^ u64::from(*b)).wrapping_mul(PRIME);
        }
    };
    feed(document.source.as_bytes());
    feed(&(document.lines.len() as u64).to_le_bytes());
    for line in &document.lines {
        feed(line.text.as_bytes());
        feed(&line.page.to_le_bytes());
    }
    hash
}

/// Whether a run of words of `text` (folded) has initials spelling
/// `acronym` (folded: `ncd` → "no claim discount"), short joining words
/// skipped.
/// A short joining word an acronym skips ("Department OF Homeland
/// Security" is DHS), folded.
pub(crate) fn is_acronym_joiner(word: &str) -> bool {
    matches!(word, "and" | "of" | "the" | "for" | "de" | "des" | "du" | "et")
}

pub(crate) fn spells(text: &str, acronym: &str) -> bool {
    let letters: Vec<char> = acronym.chars().collect();
    let skip = is_acronym_joiner;
    let words: Vec<&str> = text.split_whitespace().collect();
    (0..words.len()).any(|start| {
        let mut k = 0;
        for w in &words[start..] {
            if k == letters.len() {
                break;
            }
            if k > 0 && skip(w) {
                continue;
            }
            if w.starts_with(letters[k]) {
                k += 1;
            } else {
                break;
            }
        }
        k == letters.len()
    })
}

/// A line that could be a printed page number: one to four digits.
fn is_page_number_text(text: &str) -> bool {
    (1..=4).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit())
}

/// Pages that agree on a printed page number's offset before it counts.
const PAGE_NUMBER_MIN_PAGES: usize = 3;

/// The printed page numbers of a document: a page's first or last line
/// made of one whole number, where the number minus the page's index is
/// the same on at least [`PAGE_NUMBER_MIN_PAGES`] pages (a front matter
/// shifts the numbering; the shift is the same on every page).
fn page_numbers(document: &ParsedDocument) -> HashSet<(u32, String)> {
    let mut ends: Vec<(u32, &str, i64)> = Vec::new();
    for lines in document.lines.chunk_by(|a, b| a.page == b.page) {
        let (first, last) = (&lines[0], &lines[lines.len() - 1]);
        let page_ends = if lines.len() == 1 { vec![first] } else { vec![first, last] };
        for line in page_ends {
            let text = line.text.trim();
            if is_page_number_text(text)
                && let Ok(number) = text.parse::<i64>()
            {
                ends.push((line.page, text, number - i64::from(line.page)));
            }
        }
    }
    let mut offsets: HashMap<i64, usize> = HashMap::new();
    for (_, _, offset) in &ends {
        *offsets.entry(*offset).or_default() += 1;
    }
    ends.into_iter()
        .filter(|(_, _, offset)| offsets.get(offset).is_some_and(|n| *n >= PAGE_NUMBER_MIN_PAGES))
        .map(|(page, text, _)| (page, text.to_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{DocStats, page_numbers};
    use crate::test_support::doc;

    #[test]
    fn a_running_line_sits_at_the_page_edge_and_common_words_are_written_in_lower_case() {
        // A header on every page; a name in the middle of three pages (an
        // officers' table, then two signature pages).
        let mut rows: Vec<(&str, u32)> = Vec::new();
        for page in 1..=3 {
            rows.extend([
                ("ACME Corp Annual Report", page),
                ("the health care segment grew", page),
                ("Executive officers", page),
                ("Monish Patolawala", page),
                ("Chief Financial Officer, Health Care", page),
                ("filler", page),
                ("more filler", page),
                ("end", page),
            ]);
        }
        let stats = DocStats::new(&doc(&rows));
        assert!(stats.is_running("acme corp annual report"));
        assert!(!stats.is_running("monish patolawala"), "in the middle of its pages");
        assert!(stats.written_lowercase("health") && stats.written_lowercase("care"));
        assert!(!stats.written_lowercase("monish") && !stats.written_lowercase("patolawala"));
    }

    #[test]
    fn printed_page_numbers_share_one_offset() {
        // Front matter: page 3 prints 1, page 4 prints 2 ... ; a lone "3" in
        // a table on page 2 is no page number.
        let rows: &[(&str, u32)] = &[
            ("Title", 1),
            ("Contents", 2),
            ("3", 2),
            ("Introduction", 3),
            ("1", 3),
            ("Results", 4),
            ("2", 4),
            ("Discussion", 5),
            ("3", 5),
        ];
        let numbers = page_numbers(&doc(rows));
        for (page, text) in [(3, "1"), (4, "2"), (5, "3")] {
            assert!(numbers.contains(&(page, text.to_owned())), "page {page}");
        }
        assert!(!numbers.contains(&(2, "3".to_owned())));
    }
}
