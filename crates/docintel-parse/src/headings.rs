//! TOC reconstruction from headings, for PDFs without an outline.
//!
//! A line is a heading candidate when it is short (at most [`MAX_WORDS`]
//! words, no sentence-final period) and either
//! - **numbered**: `1`, `1.1`, `3.2.1` (followed by a capitalised title; the
//!   numbers must run forward through the document, which rejects numbered
//!   list items and table rows), `Chapter 3`, `Part II`, `Section 4`,
//!   `Article 12`, `Appendix A`, or a control id like `AC-2` / `AC-2(1)`;
//!   numbered candidates must not be set smaller than the body text;
//! - **styled**: its dominant font size is at least [`STYLED_MIN_RATIO`] times
//!   the body size (the character-weighted median font size of the document).
//!
//! Lines whose text repeats on [`RUNNING_MIN_PAGES`] or more pages (running
//! heads) are ignored. Levels come from the numbering depth (`3.2.1` → 3;
//! `Part`/`Chapter` above `Section`/`Article`; `AC-2(1)` → 2) and, for
//! unnumbered headings, from font-size ranks: when numbered headings exist,
//! an unnumbered heading at least as large as the level-1 numbered ones is
//! level 1 and smaller ones take the level below; otherwise distinct sizes
//! (0.5 pt apart) rank from 1. `start_page` is the heading's page and
//! `end_page` the page before the next heading of the same or a higher level
//! (at least `start_page`), as for outlines; source = `Headings`.

use std::collections::HashMap;

use docintel_schema::{TocEntry, TocSource};

/// A heading has at most this many words.
pub(crate) const MAX_WORDS: usize = 12;
/// A heading has at most this many characters.
const MAX_CHARS: usize = 100;
/// Styled headings are at least this much larger than the body text.
pub(crate) const STYLED_MIN_RATIO: f32 = 1.15;
/// Text repeated on this many pages is a running head, not a heading.
pub(crate) const RUNNING_MIN_PAGES: usize = 3;
/// How far an estimated size (an OCR line's) may be off, as a share of the body size: the
/// tests against the body size widen by it, "not smaller" and "styled" alike. Letter shapes
/// differ by font (cap height 0.66 em in Times, 0.73 in DejaVu Sans), and the estimate
/// assumes one shape for all.
const ESTIMATED_SIZE_SLACK: f32 = 0.1;
/// Deepest level produced.
const MAX_LEVEL: u32 = 6;

/// What the heading detector needs of a line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct HeadingLine<'a> {
    /// The line text.
    pub(crate) text: &'a str,
    /// 1-based page.
    pub(crate) page: u32,
    /// Dominant font size in points (0 when unknown).
    pub(crate) font_size: f32,
    /// The size is an estimate, within about [`ESTIMATED_SIZE_SLACK`] of the true one (an
    /// OCR line's, measured from its word boxes), not the size the PDF sets.
    pub(crate) estimated: bool,
}

/// How a candidate is numbered.
#[derive(Debug, Clone, PartialEq)]
enum Numbering {
    /// `3.2.1`-style, one number per component.
    Dotted(Vec<u32>),
    /// A keyword heading: its rank (0 = Part/Chapter, 1 = Section/Article/
    /// Appendix…) and the dotted depth of its number.
    Keyword(u32, u32),
    /// `AC-2` (depth 1) or `AC-2(1)` (depth 2).
    Control(u32),
    /// No numbering: a styled heading.
    None,
}

/// A heading found, with its line index in the input.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Heading {
    /// Index into the input lines.
    pub(crate) index: usize,
    /// Level, 1 at the top.
    pub(crate) level: u32,
}

/// Rebuilds a TOC from headings; empty when fewer than 2 headings are found.
pub(crate) fn toc_from_headings(lines: &[HeadingLine<'_>], n_pages: u32) -> Vec<TocEntry> {
    let found = detect_headings(lines);
    if found.len() < 2 {
        return Vec::new();
    }
    let rows: Vec<(u32, String, u32)> =
        found.iter().map(|h| (h.level, lines[h.index].text.trim().to_string(), lines[h.index].page)).collect();
    toc_rows(&rows, n_pages, TocSource::Headings)
}

/// Builds TOC entries (parents, end pages) from `(level, title, start_page)`
/// rows in document order.
pub(crate) fn toc_rows(rows: &[(u32, String, u32)], n_pages: u32, source: TocSource) -> Vec<TocEntry> {
    let mut out: Vec<TocEntry> = Vec::with_capacity(rows.len());
    let mut open: Vec<u32> = Vec::new(); // ids of the current ancestors
    for (i, (level, title, start)) in rows.iter().enumerate() {
        while let Some(&top) = open.last() {
            if out[top as usize].level >= *level {
                open.pop();
            } else {
                break;
            }
        }
        let parent = open.last().copied();
        let level = parent.map_or(1, |p| out[p as usize].level + 1).min(*level).max(1);
        let end = rows[i + 1..]
            .iter()
            .find(|r| r.0 <= rows[i].0)
            .map(|r| r.2.saturating_sub(1))
            .unwrap_or(n_pages)
            .max(*start);
        out.push(TocEntry {
            id: i as u32,
            parent,
            level,
            title: title.clone(),
            start_page: *start,
            end_page: end,
            source,
        });
        open.push(i as u32);
    }
    out
}

/// The heading lines of a document, in order, with their levels.
pub(crate) fn detect_headings(lines: &[HeadingLine<'_>]) -> Vec<Heading> {
    let body = body_size(lines);
    let running = running_heads(lines);
    let mut candidates: Vec<(usize, Numbering, f32)> = Vec::new();
    let mut last_dotted: Option<Vec<u32>> = None;
    for (index, line) in lines.iter().enumerate() {
        let text = line.text.trim();
        if !is_heading_shaped(text) || running.contains_key(text) {
            continue;
        }
        let size = line.font_size;
        let slack = if line.estimated { ESTIMATED_SIZE_SLACK } else { 0.0 };
        let not_smaller = body == 0.0 || size >= body * (0.97 - slack);
        let numbering = numbering(text);
        match numbering {
            Numbering::Dotted(ref parts) => {
                if !not_smaller || !follows(last_dotted.as_deref(), parts) {
                    continue;
                }
                last_dotted = Some(parts.clone());
            }
            Numbering::Keyword(..) | Numbering::Control(_) => {
                if !not_smaller {
                    continue;
                }
            }
            Numbering::None => {
                let styled = body > 0.0 && size >= body * (STYLED_MIN_RATIO + slack);
                if !styled || text.chars().filter(|c| c.is_alphabetic()).count() < 2 {
                    continue;
                }
            }
        }
        candidates.push((index, numbering, size));
    }
    assign_levels(&candidates)
}

fn assign_levels(candidates: &[(usize, Numbering, f32)]) -> Vec<Heading> {
    let keyword_ranks: Vec<u32> = {
        let mut r: Vec<u32> = candidates
            .iter()
            .filter_map(|(_, n, _)| match n {
                Numbering::Keyword(rank, _) => Some(*rank),
                _ => None,
            })
            .collect();
        r.sort_unstable();
        r.dedup();
        r
    };
    // The size of level-1 numbered headings (smallest of them).
    let top_numbered = candidates
        .iter()
        .filter(|(_, n, _)| matches!(n, Numbering::Dotted(p) if p.len() == 1) || matches!(n, Numbering::Keyword(..)))
        .map(|c| c.2)
        .fold(None, |acc: Option<f32>, s| Some(acc.map_or(s, |a| a.min(s))));
    // Distinct sizes of unnumbered headings, largest first.
    let mut sizes: Vec<f32> = candidates.iter().filter(|(_, n, _)| matches!(n, Numbering::None)).map(|c| c.2).collect();
    sizes.sort_by(|a, b| b.total_cmp(a));
    let mut ranks: Vec<f32> = Vec::new();
    for s in sizes {
        if ranks.last().is_none_or(|&r| r - s > 0.5) {
            ranks.push(s);
        }
    }
    candidates
        .iter()
        .map(|(index, numbering, size)| {
            let level = match numbering {
                Numbering::Dotted(parts) => parts.len() as u32,
                Numbering::Keyword(rank, depth) => {
                    keyword_ranks.iter().position(|r| r == rank).unwrap_or(0) as u32 + depth
                }
                Numbering::Control(depth) => *depth,
                Numbering::None => match top_numbered {
                    Some(top) if *size >= top - 0.25 => 1,
                    Some(_) => 2,
                    None => ranks.iter().position(|&r| r - size <= 0.5).unwrap_or(0) as u32 + 1,
                },
            };
            Heading { index: *index, level: level.clamp(1, MAX_LEVEL) }
        })
        .collect()
}

/// Short, not a sentence, has a letter.
fn is_heading_shaped(text: &str) -> bool {
    !text.is_empty()
        && text.chars().count() <= MAX_CHARS
        && text.split_whitespace().count() <= MAX_WORDS
        && (!text.ends_with('.') || text.ends_with(".."))
        && !text.ends_with(',')
        && !text.ends_with(';')
        && text.chars().any(char::is_alphabetic)
}

/// Whether dotted number `next` plausibly follows `last` in a document's
/// numbering: strictly greater, no big jump in its last component.
fn follows(last: Option<&[u32]>, next: &[u32]) -> bool {
    let Some(last) = last else { return next[0] <= 2 && next[1..].iter().all(|&n| n <= 2) };
    if next <= last {
        return false;
    }
    let k = next.len() - 1;
    // Same prefix: the last component advances by at most 3.
    if last.len() >= k && last[..k] == next[..k] {
        let previous = last.get(k).copied().unwrap_or(0);
        return next[k] > previous && next[k] <= previous + 3;
    }
    // A new parent: it must itself advance by little, children restart low.
    next[0] <= last[0] + 2 && next[1..].iter().all(|&n| n <= 3)
}

/// Parses the numbering at the start of a heading-shaped line.
fn numbering(text: &str) -> Numbering {
    let mut words = text.split_whitespace();
    let Some(first) = words.next() else { return Numbering::None };
    let rest: Vec<&str> = words.collect();
    let title_starts_upper = rest.first().and_then(|w| w.chars().next()).is_some_and(|c| c.is_uppercase());

    // 3.2.1 Title / 3. Title
    let digits = first.strip_suffix('.').unwrap_or(first);
    if !digits.is_empty()
        && digits.split('.').all(|p| !p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit()))
    {
        let parts: Vec<u32> = digits.split('.').filter_map(|p| p.parse().ok()).collect();
        if parts.len() <= MAX_LEVEL as usize
            && title_starts_upper
            && rest.iter().any(|w| w.chars().any(char::is_alphabetic))
        {
            return Numbering::Dotted(parts);
        }
        return Numbering::None;
    }

    // Chapter 3 / ARTICLE 12 / Appendix A
    let lower = first.to_lowercase();
    let rank = match lower.as_str() {
        "part" | "chapter" => Some(0),
        "section" | "article" | "appendix" | "annex" | "schedule" | "clause" => Some(1),
        _ => None,
    };
    if let Some(rank) = rank
        && let Some(id) = rest.first()
    {
        let id = id.trim_end_matches(['.', ':']);
        let numeric = !id.is_empty()
            && id.split('.').all(|p| !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()));
        let roman = !id.is_empty() && id.len() <= 6 && id.chars().all(|c| "IVXLC".contains(c));
        let letter = id.len() == 1 && id.chars().all(|c| c.is_ascii_uppercase());
        if numeric || roman || letter {
            let depth = if numeric { id.split('.').count() as u32 } else { 1 };
            return Numbering::Keyword(rank, depth);
        }
    }

    // AC-2 / AC-2(1) followed by a title (or alone).
    if let Some((family, number)) = first.split_once('-')
        && (2..=3).contains(&family.len())
        && family.bytes().all(|b| b.is_ascii_uppercase())
        && (rest.is_empty() || title_starts_upper)
    {
        let (base, enhancement) = match number.split_once('(') {
            Some((b, e)) => (b, Some(e.trim_end_matches(')'))),
            None => (number, None),
        };
        let is_num = |s: &str| !s.is_empty() && s.len() <= 3 && s.bytes().all(|b| b.is_ascii_digit());
        if is_num(base) && enhancement.is_none_or(is_num) {
            return Numbering::Control(if enhancement.is_some() { 2 } else { 1 });
        }
    }
    Numbering::None
}

/// The character-weighted median font size (0 when sizes are unknown).
fn body_size(lines: &[HeadingLine<'_>]) -> f32 {
    let sizes = lines.iter().filter(|l| l.font_size > 0.0).map(|l| (l.font_size, l.text.chars().count()));
    weighted_median(sizes.collect()).unwrap_or(0.0)
}

/// The median of `(value, weight)` pairs: the smallest value with at least half the total
/// weight at or below it; `None` when there are none.
pub(crate) fn weighted_median(mut values: Vec<(f32, usize)>) -> Option<f32> {
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: usize = values.iter().map(|v| v.1).sum();
    let mut seen = 0;
    values
        .iter()
        .find(|(_, weight)| {
            seen += weight;
            2 * seen >= total
        })
        .map(|v| v.0)
}

/// Texts that appear on [`RUNNING_MIN_PAGES`] or more distinct pages.
fn running_heads<'a>(lines: &[HeadingLine<'a>]) -> HashMap<&'a str, usize> {
    let mut pages: HashMap<&'a str, (u32, usize)> = HashMap::new();
    for line in lines {
        let entry = pages.entry(line.text.trim()).or_insert((0, 0));
        if entry.0 != line.page {
            *entry = (line.page, entry.1 + 1);
        }
    }
    pages.into_iter().filter(|(_, (_, n))| *n >= RUNNING_MIN_PAGES).map(|(t, (_, n))| (t, n)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(text, page, size)` lines → `(level, title, start, end)` rows.
    fn check(lines: &[(&str, u32, f32)], n_pages: u32, expected: &[(u32, &str, u32, u32)]) {
        let input: Vec<HeadingLine<'_>> = lines
            .iter()
            .map(|&(text, page, font_size)| HeadingLine { text, page, font_size, estimated: false })
            .collect();
        let toc = toc_from_headings(&input, n_pages);
        let got: Vec<(u32, &str, u32, u32)> =
            toc.iter().map(|t| (t.level, t.title.as_str(), t.start_page, t.end_page)).collect();
        assert_eq!(got, expected);
        assert!(toc.iter().all(|t| t.source == TocSource::Headings));
        for t in &toc {
            if let Some(p) = t.parent {
                assert!(p < t.id && toc[p as usize].level < t.level, "{t:?}");
            } else {
                assert_eq!(t.level, 1);
            }
        }
    }

    const BODY: &str = "This is ordinary body text that runs on for a while and is set in the body size";

    #[test]
    fn numbered_headings_nest_by_depth() {
        check(
            &[
                ("Attention Is All You Need", 1, 17.0),
                (BODY, 1, 10.0),
                ("1 Introduction", 1, 12.0),
                (BODY, 1, 10.0),
                ("2 Background", 2, 12.0),
                (BODY, 2, 10.0),
                // A numbered list item in the body: smaller than headings, but
                // not smaller than body; it does not follow 2 → rejected.
                ("7 Samples were used", 2, 10.0),
                ("3 Model Architecture", 2, 12.0),
                ("3.1 Encoder and Decoder Stacks", 3, 11.0),
                ("3.2 Attention", 3, 11.0),
                ("3.2.1 Scaled Dot-Product Attention", 4, 10.0),
                // A footnote, smaller than body: not a heading.
                ("4 Footnote about something", 4, 8.0),
                (BODY, 4, 10.0),
                ("4 Why Self-Attention", 5, 12.0),
                (BODY, 5, 10.0),
                (BODY, 6, 10.0),
            ],
            6,
            &[
                (1, "Attention Is All You Need", 1, 1),
                (1, "1 Introduction", 1, 1),
                (1, "2 Background", 2, 1),
                (1, "3 Model Architecture", 2, 4),
                (2, "3.1 Encoder and Decoder Stacks", 3, 2),
                (2, "3.2 Attention", 3, 4),
                (3, "3.2.1 Scaled Dot-Product Attention", 4, 4),
                (1, "4 Why Self-Attention", 5, 6),
            ]
            .map(|(l, t, s, e)| (l, t, s, (e as u32).max(s))),
        );
    }

    #[test]
    fn an_estimated_size_is_read_with_its_slack() {
        let line = |text, page, font_size, estimated| HeadingLine { text, page, font_size, estimated };
        let titles = |lines: &[HeadingLine<'_>]| -> Vec<String> {
            detect_headings(lines).iter().map(|h| lines[h.index].text.to_string()).collect()
        };
        // Numbered headings measured 8% under the body: an OCR estimate may be, a set size not.
        let numbered = |estimated| {
            vec![
                line("1 PREAMBLE", 1, 9.2, estimated),
                line(BODY, 1, 10.0, estimated),
                line("2 DEFINITIONS", 2, 9.2, estimated),
                line(BODY, 2, 10.0, estimated),
            ]
        };
        assert_eq!(titles(&numbered(true)), ["1 PREAMBLE", "2 DEFINITIONS"]);
        assert!(titles(&numbered(false)).is_empty());
        // A line 20% over the body is styled when its size is set, not when it is estimated.
        let styled = |estimated| {
            vec![
                line("Schedule of Benefits", 1, 12.0, estimated),
                line(BODY, 1, 10.0, estimated),
                line(BODY, 2, 10.0, estimated),
            ]
        };
        assert_eq!(titles(&styled(false)), ["Schedule of Benefits"]);
        assert!(titles(&styled(true)).is_empty());
    }

    #[test]
    fn styled_headings_rank_by_size_and_running_heads_are_ignored() {
        check(
            &[
                ("ACME Annual Report", 1, 11.0),
                ("Overview", 1, 18.0),
                (BODY, 1, 10.0),
                ("Revenue", 1, 14.0),
                (BODY, 1, 10.0),
                ("ACME Annual Report", 2, 11.0),
                (BODY, 2, 10.0),
                ("Outlook", 3, 18.0),
                ("ACME Annual Report", 3, 11.0),
                (BODY, 3, 10.0),
                // Large but a sentence: not a heading.
                ("We grew.", 3, 18.0),
            ],
            3,
            &[(1, "Overview", 1, 2), (2, "Revenue", 1, 2), (1, "Outlook", 3, 3)],
        );
    }

    #[test]
    fn keyword_and_control_numbering() {
        check(
            &[
                ("CHAPTER 1 General", 1, 10.0),
                (BODY, 1, 10.0),
                ("Article 1", 1, 10.0),
                (BODY, 1, 10.0),
                ("Article 2 Definitions", 2, 10.0),
                (BODY, 2, 10.0),
                ("Chapter II", 3, 10.0),
                (BODY, 3, 10.0),
            ],
            3,
            &[
                (1, "CHAPTER 1 General", 1, 2),
                (2, "Article 1", 1, 1),
                (2, "Article 2 Definitions", 2, 2),
                (1, "Chapter II", 3, 3),
            ],
        );
        check(
            &[
                ("AC-2 ACCOUNT MANAGEMENT", 1, 10.0),
                (BODY, 1, 10.0),
                ("AC-2(1) AUTOMATED SYSTEM", 2, 10.0),
                ("AC-3 ACCESS ENFORCEMENT", 3, 10.0),
            ],
            3,
            &[
                (1, "AC-2 ACCOUNT MANAGEMENT", 1, 2),
                (2, "AC-2(1) AUTOMATED SYSTEM", 2, 2),
                (1, "AC-3 ACCESS ENFORCEMENT", 3, 3),
            ],
        );
        // One heading is not a TOC.
        check(&[("1 Introduction", 1, 12.0), (BODY, 1, 10.0)], 1, &[]);
    }

    #[test]
    fn numbering_follows() {
        assert!(follows(None, &[1]));
        assert!(!follows(None, &[7]));
        assert!(follows(Some(&[3]), &[3, 1]));
        assert!(follows(Some(&[3, 2, 3]), &[3, 3]));
        assert!(follows(Some(&[3, 5]), &[4]));
        assert!(!follows(Some(&[3, 5]), &[3, 2]));
        assert!(!follows(Some(&[2]), &[9]));
    }
}
