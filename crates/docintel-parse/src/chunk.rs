//! Token-sized chunks for embedding retrieval.
//!
//! Tokens are estimated from characters with a ratio taken from the
//! document itself ([`chars_per_token`]: ≈4 for Latin text, ≈1 for CJK,
//! interpolated linearly on the share of CJK characters). Lines are grouped
//! into **paragraphs**, broken by a page change, a heading (a line whose text
//! is a TOC title on that TOC row's start page), or a vertical gap larger than
//! [`PARAGRAPH_GAP`] line heights (or a jump upwards, a new column).
//! Paragraphs are packed whole into chunks of at most `max_tokens`; a
//! paragraph too large alone is cut hard at line boundaries (a single line
//! too large is cut into character pieces). Each new chunk starts with the
//! previous chunk's last whole lines worth at most `overlap_tokens`.
//! `context_header` (for the embedding input only) is the document title and
//! the section path from the TOC, joined with ` > `.

use docintel_schema::{Chunk, Line, ParsedDocument};

/// A vertical gap above this many line heights starts a paragraph.
pub(crate) const PARAGRAPH_GAP: f32 = 1.5;

/// How to cut a document into chunks. There is no default: the caller
/// chooses for its embedding model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkConfig {
    /// Upper bound of a chunk's estimated tokens (at least 1).
    pub max_tokens: u32,
    /// Tokens of whole lines repeated from the previous chunk (clamped to
    /// half of `max_tokens`).
    pub overlap_tokens: u32,
}

/// Characters per token for this text: 4 − 3 × (share of CJK characters
/// among non-whitespace characters); 4 for empty text.
pub fn chars_per_token<'a>(texts: impl IntoIterator<Item = &'a str>) -> f64 {
    let (mut cjk, mut total) = (0usize, 0usize);
    for text in texts {
        for c in text.chars().filter(|c| !c.is_whitespace()) {
            total += 1;
            cjk += usize::from(is_cjk(c));
        }
    }
    if total == 0 {
        return 4.0;
    }
    4.0 - 3.0 * cjk as f64 / total as f64
}

/// Han, Hiragana, Katakana, Hangul, CJK punctuation and full-width forms.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3000..=0x303F | 0x3040..=0x30FF | 0x3100..=0x312F | 0x3400..=0x4DBF | 0x4E00..=0x9FFF
        | 0xAC00..=0xD7AF | 0x1100..=0x11FF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF | 0x20000..=0x2FA1F)
}

/// One piece of text a chunk is made of: a whole line or a cut of one.
#[derive(Debug, Clone)]
struct Unit<'a> {
    line: &'a Line,
    text: &'a str,
    tokens: f64,
}

/// Cuts `doc` into chunks (see the module doc). Chunk ids are 0-based.
pub fn chunk_document(doc: &ParsedDocument, config: &ChunkConfig) -> Vec<Chunk> {
    let max = f64::from(config.max_tokens.max(1));
    let overlap = f64::from(config.overlap_tokens).min(max / 2.0);
    let cpt = chars_per_token(doc.lines.iter().map(|l| l.text.as_str()));
    let tokens_of = |s: &str| (s.chars().count() as f64 + 1.0) / cpt;
    let anchors = heading_anchors(doc);

    // Paragraphs of units.
    let mut paragraphs: Vec<Vec<Unit<'_>>> = Vec::new();
    let mut previous: Option<&Line> = None;
    for line in &doc.lines {
        let new_para = match previous {
            None => true,
            Some(p) => p.page != line.page || anchors.iter().any(|a| a.0 == line.line_id) || gap_breaks(p, line),
        };
        if new_para {
            paragraphs.push(Vec::new());
        }
        let para = paragraphs.last_mut().expect("pushed above");
        if tokens_of(&line.text) <= max {
            para.push(Unit { line, text: &line.text, tokens: tokens_of(&line.text) });
        } else {
            // A single oversized line: cut into pieces of whole characters.
            let per = ((max * cpt) as usize).saturating_sub(1).max(1);
            let mut start = 0;
            let bounds: Vec<usize> = line.text.char_indices().map(|(i, _)| i).chain([line.text.len()]).collect();
            while start + 1 < bounds.len() {
                let end = (start + per).min(bounds.len() - 1);
                let text = &line.text[bounds[start]..bounds[end]];
                para.push(Unit { line, text, tokens: tokens_of(text) });
                start = end;
            }
        }
        previous = Some(line);
    }

    let title = document_title(doc);
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut current: Vec<Unit<'_>> = Vec::new();
    let mut tokens = 0.0;
    let mut fresh = false; // whether `current` holds more than the overlap
    let mut n_overlap = 0usize; // leading units of `current` repeated from the previous chunk
    let mut emit = |current: &mut Vec<Unit<'_>>, tokens: &mut f64, fresh: &mut bool, n_overlap: &mut usize| {
        if !*fresh || current.is_empty() {
            return;
        }
        let header_line = current[(*n_overlap).min(current.len() - 1)].line;
        chunks.push(make_chunk(chunks.len() as u32, current, header_line, &title, doc, &anchors, cpt));
        // Keep the last whole lines worth at most `overlap` tokens.
        let mut kept = 0.0;
        let mut keep = 0;
        for unit in current.iter().rev() {
            if kept + unit.tokens > overlap || unit.text.len() != unit.line.text.len() {
                break;
            }
            kept += unit.tokens;
            keep += 1;
        }
        current.drain(..current.len() - keep);
        *n_overlap = keep;
        *tokens = kept;
        *fresh = false;
    };
    for para in paragraphs {
        let ptok: f64 = para.iter().map(|u| u.tokens).sum();
        if tokens + ptok > max {
            emit(&mut current, &mut tokens, &mut fresh, &mut n_overlap);
        }
        if ptok <= max {
            // Drop overlap lines until the paragraph fits whole.
            while tokens + ptok > max && !current.is_empty() {
                tokens -= current.remove(0).tokens;
                n_overlap = n_overlap.saturating_sub(1);
            }
            tokens += ptok;
            current.extend(para);
            fresh = true;
            continue;
        }
        // Oversized paragraph: cut hard between units.
        for unit in para {
            if tokens + unit.tokens > max {
                emit(&mut current, &mut tokens, &mut fresh, &mut n_overlap);
                while tokens + unit.tokens > max && !current.is_empty() {
                    tokens -= current.remove(0).tokens;
                    n_overlap = n_overlap.saturating_sub(1);
                }
            }
            tokens += unit.tokens;
            current.push(unit);
            fresh = true;
        }
    }
    emit(&mut current, &mut tokens, &mut fresh, &mut n_overlap);
    chunks
}

/// Whether the vertical geometry between two lines of a page marks a new
/// paragraph: a gap above [`PARAGRAPH_GAP`] line heights, or a jump up.
fn gap_breaks(prev: &Line, line: &Line) -> bool {
    let height = (prev.bbox.y1 - prev.bbox.y0).max(line.bbox.y1 - line.bbox.y0).max(1.0);
    let centre = |l: &Line| (l.bbox.y0 + l.bbox.y1) / 2.0;
    let drop = centre(prev) - centre(line);
    drop > PARAGRAPH_GAP * height || drop < -0.5 * height
}

/// `(line_id, toc index)` of each TOC row found as a line on its start page.
fn heading_anchors(doc: &ParsedDocument) -> Vec<(u32, usize)> {
    let mut out = Vec::new();
    let mut from = 0usize;
    for (i, entry) in doc.toc.iter().enumerate() {
        let want = docintel_schema::text::squash(&entry.title);
        if want.is_empty() {
            continue;
        }
        let found = doc.lines[from..].iter().position(|l| {
            l.page == entry.start_page && {
                let got = docintel_schema::text::squash(&l.text);
                got == want
                    || got
                        .trim_start_matches(|c: char| !c.is_alphabetic())
                        .eq(want.trim_start_matches(|c: char| !c.is_alphabetic()))
            }
        });
        if let Some(k) = found {
            out.push((doc.lines[from + k].line_id, i));
            from += k + 1;
        }
    }
    out
}

/// The title: the largest line among the first lines of page 1 when it is
/// clearly larger than the median line there (bbox height stands for the font
/// size) and does not start with a digit (a numbered section heading is not
/// a title), else the file stem of the source.
fn document_title(doc: &ParsedDocument) -> String {
    let first: Vec<&Line> = doc.lines.iter().filter(|l| l.page == 1).take(15).collect();
    let height = |l: &Line| l.bbox.y1 - l.bbox.y0;
    let mut heights: Vec<f32> = first.iter().map(|l| height(l)).collect();
    heights.sort_by(f32::total_cmp);
    if let Some(&median) = heights.get(heights.len() / 2)
        && let Some(best) = first.iter().copied().reduce(|a, b| if height(b) > height(a) { b } else { a })
        && height(best) >= 1.2 * median
        && !best.text.trim_start().starts_with(|c: char| c.is_ascii_digit())
    {
        return best.text.trim().to_string();
    }
    std::path::Path::new(&doc.source).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The TOC section path in effect at `line`: the last anchored entry at or
/// before the line, else the last entry starting on an earlier page, plus its
/// ancestors.
fn section_path(doc: &ParsedDocument, anchors: &[(u32, usize)], line: &Line) -> Vec<String> {
    let anchored = anchors.iter().rev().find(|a| a.0 <= line.line_id).map(|a| a.1);
    let by_page = doc.toc.iter().rposition(|t| t.start_page < line.page);
    let index = match (anchored, by_page) {
        (Some(a), Some(p)) => Some(a.max(p)),
        (a, p) => a.or(p),
    };
    let mut path = Vec::new();
    let mut next = index;
    while let Some(i) = next {
        let Some(entry) = doc.toc.get(i) else { break };
        path.push(entry.title.clone());
        next = entry.parent.map(|p| p as usize).filter(|&p| p < i);
    }
    path.reverse();
    path
}

/// Builds a chunk; its section path is the one in effect at `header_line`
/// (the first line that is not overlap).
fn make_chunk(
    id: u32,
    units: &[Unit<'_>],
    header_line: &Line,
    title: &str,
    doc: &ParsedDocument,
    anchors: &[(u32, usize)],
    cpt: f64,
) -> Chunk {
    let mut text = String::new();
    let mut last_line = 0u32;
    for unit in units {
        if !text.is_empty() && unit.line.line_id != last_line {
            text.push('\n');
        }
        text.push_str(unit.text);
        last_line = unit.line.line_id;
    }
    let (first, last) = (units[0].line, units[units.len() - 1].line);
    let mut header = vec![title.to_string()];
    header.extend(section_path(doc, anchors, header_line));
    header.retain(|h| !h.is_empty());
    header.dedup();
    Chunk {
        chunk_id: id,
        line_start: first.line_id,
        line_end: last.line_id,
        page_start: first.page,
        page_end: last.page,
        n_tokens_est: (text.chars().count() as f64 / cpt).ceil() as u32,
        text,
        context_header: header.join(" > "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::textdoc::parse_text_bytes;

    /// Chunks `text` (Markdown) and checks the invariants every chunking must
    /// hold; returns the chunks for specific checks.
    fn check(text: &str, max_tokens: u32, overlap_tokens: u32) -> Vec<Chunk> {
        let doc = parse_text_bytes("notes.md", text.as_bytes(), true);
        let chunks = chunk_document(&doc, &ChunkConfig { max_tokens, overlap_tokens });
        let cpt = chars_per_token(doc.lines.iter().map(|l| l.text.as_str()));
        let mut covered = 0u32;
        for (i, c) in chunks.iter().enumerate() {
            assert_eq!(c.chunk_id as usize, i);
            assert!(c.n_tokens_est <= max_tokens, "{c:?}");
            assert_eq!(c.n_tokens_est, (c.text.chars().count() as f64 / cpt).ceil() as u32);
            assert!(c.line_start <= c.line_end && c.page_start <= c.page_end);
            // Chunks move forward and leave no line out.
            assert!(c.line_start <= covered + 1, "gap before {c:?}");
            assert!(c.line_end >= covered, "{c:?}");
            covered = c.line_end;
            // The text is the document's own.
            for piece in c.text.split('\n') {
                assert!(doc.lines.iter().any(|l| l.text.contains(piece)), "{piece:?}");
            }
        }
        assert_eq!(covered as usize, doc.lines.len());
        chunks
    }

    #[test]
    fn ratio_follows_the_cjk_share() {
        assert_eq!(chars_per_token(["abcd"]), 4.0);
        assert_eq!(chars_per_token(["文書の解析"]), 1.0);
        assert_eq!(chars_per_token(["ab", "文書"]), 2.5);
        assert_eq!(chars_per_token([" "]), 4.0);
    }

    #[test]
    fn latin_paragraphs_kept_whole_with_overlap_and_headers() {
        let para = |w: &str| format!("{w} one two three four five six seven eight nine ten eleven twelve\n").repeat(3);
        let text = format!("# Guide\n\n## Setup\n{}\n{}\n## Usage\n{}", para("alpha"), para("beta"), para("gamma"));
        let chunks = check(&text, 80, 20);
        // Each paragraph (3 lines × ~16 tokens) fits whole; two do not fit together.
        for word in ["alpha", "beta", "gamma"] {
            let whole = chunks.iter().any(|c| c.text.lines().filter(|l| l.starts_with(word)).count() == 3);
            assert!(whole, "{word} paragraph split: {chunks:#?}");
        }
        let beta = chunks.iter().find(|c| c.text.contains("beta")).unwrap();
        assert_eq!(beta.context_header, "notes > Guide > Setup");
        // Overlap: the beta chunk starts with the last alpha line.
        assert!(beta.text.starts_with("alpha"), "{beta:?}");
        let gamma = chunks.iter().find(|c| c.text.contains("gamma")).unwrap();
        assert_eq!(gamma.context_header, "notes > Guide > Usage");
        // No overlap configured: chunks do not share lines.
        let plain = check(&text, 80, 0);
        assert!(plain.windows(2).all(|w| w[0].line_end < w[1].line_start));
    }

    #[test]
    fn cjk_and_mixed_text_use_their_own_ratio() {
        let cjk = "本文書は保険契約の条件を定めるものであり、被保険者の権利と義務を説明する。\n".repeat(10);
        let chunks = check(&cjk, 50, 0);
        // ~38 characters a line at 1 char/token: one line per chunk.
        assert_eq!(chunks.len(), 10);
        let latin = "The policy defines the conditions of cover for the insured person.\n".repeat(10);
        assert!(check(&latin, 50, 0).len() < 10);
        // Mixed: one ratio for the whole document, between the two.
        let mixed = format!("{cjk}{latin}");
        let cpt = chars_per_token(mixed.lines());
        assert!(cpt > 2.0 && cpt < 3.0, "{cpt}");
        // CJK lines (39 chars) ≈ 15 tokens → 3 a chunk; Latin lines (67) ≈ 25 → 2.
        let n_mixed = check(&mixed, 50, 0).len();
        assert_eq!(n_mixed, 4 + 5);
    }

    #[test]
    fn oversized_paragraphs_and_lines_are_cut_hard() {
        let long_line = "x".repeat(1000);
        let chunks = check(&format!("{long_line}\nshort tail\n"), 50, 10);
        assert!(chunks.len() >= 5);
        assert!(chunks.iter().all(|c| c.line_start == 1 || c.text.contains("short tail")));
        let block = "word ".repeat(12).trim_end().to_string() + "\n";
        check(&block.repeat(40), 30, 10);
        assert!(check("", 10, 0).is_empty());
    }
}
