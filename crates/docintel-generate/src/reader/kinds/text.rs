//! Text answers: the value of a label (`Payment Mode: Cash at Hotel`), or the
//! sentence that carries the question's terms, continued over the next
//! rows of the passage until it ends ("For the base model, we use a rate of"
//! / "Pdrop = 0.1.").

use docintel_schema::{AnswerValue, Line};

use super::Found;

/// Rows a sentence may continue over.
const MAX_CONTINUATION: usize = 2;

/// Whether a text ends a sentence.
fn ends_sentence(text: &str) -> bool {
    text.trim_end().ends_with(['.', '!', '?', ';', ':', '»', '"', '”']) || text.trim().is_empty()
}

/// A short title-like text: at most eight words, most of them capitalised.
fn heading_like(text: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().filter(|w| w.chars().any(char::is_alphabetic)).collect();
    let capital =
        words.iter().filter(|w| w.chars().next().is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())).count();
    !words.is_empty() && words.len() <= 8 && capital * 10 >= words.len() * 6
}

/// Whether a row opens with a label of its own (`Control:`, `Note:`).
fn opens_field(text: &str) -> bool {
    text.split_whitespace()
        .take(3)
        .position(|w| w.ends_with(':'))
        .is_some_and(|_| text.chars().next().is_some_and(char::is_uppercase))
}

/// Sentence pieces of a row: byte ranges cut after `.`, `;`, `!`, `?` that
/// are followed by a space (not inside `3.5`, `U.S.`), and before a label
/// that opens a new field inside the row (`AC-2 ACCOUNT MANAGEMENT Control:
/// define...` → the heading, then the field).
fn pieces(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (word_start, word) in text.match_indices(|c: char| c.is_alphabetic()).filter_map(|(at, _)| {
        let before = text[..at].chars().next_back();
        (before.is_none_or(char::is_whitespace)).then(|| {
            let end = text[at..].find(|c: char| !c.is_alphanumeric()).map_or(text.len(), |e| at + e);
            (at, &text[at..end])
        })
    }) {
        let labelled = word.chars().next().is_some_and(char::is_uppercase)
            && text[word_start + word.len()..].starts_with(':')
            && word_start > start
            && !text[start..word_start].trim().is_empty();
        if labelled && !text[start..word_start].trim_end().ends_with([',', '-', '(']) {
            out.push((start, word_start));
            start = word_start;
        }
    }
    let labels = std::mem::take(&mut out);
    let mut cuts: Vec<usize> = labels.iter().map(|p| p.1).collect();
    start = 0;
    for (at, c) in text.char_indices() {
        if matches!(c, '.' | ';' | '!' | '?') {
            let next = bytes.get(at + 1).copied();
            let prev_short = text[start..at].split_whitespace().next_back().is_some_and(|w| w.chars().count() <= 2);
            if next == Some(b' ') && !prev_short {
                cuts.push(at + 1);
            }
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    for cut in cuts {
        if cut > start {
            out.push((start, cut));
            start = cut;
        }
    }
    if start < text.len() && !text[start..].trim().is_empty() {
        out.push((start, text.len()));
    }
    out.into_iter()
        .map(|(a, b)| {
            let lead = text[a..b].len() - text[a..b].trim_start().len();
            let trail = text[a..b].len() - text[a..b].trim_end().len();
            (a + lead, b - trail)
        })
        .filter(|(a, b)| a < b)
        .collect()
}

pub(super) fn find(rows: &[&Line], i: usize) -> Vec<Found> {
    let text = rows[i].text.as_str();
    let mut out = Vec::new();
    // The value of a short label: "Payment Mode: Cash at Hotel".
    if let Some(colon) = text.find(':') {
        let label = &text[..colon];
        let rest = text[colon + 1..].trim();
        if !rest.is_empty() && label.split_whitespace().count() <= 6 {
            let start = colon + 1 + (text[colon + 1..].len() - text[colon + 1..].trim_start().len());
            let value = rest.to_owned();
            out.push(Found::new(start, start + rest.len(), i, AnswerValue::Text(value), rest, 0.9));
        }
    }
    // A row that introduces what follows ("... known as:", "Aeronautics'
    // major programs include:"): the next row is the value, read with it.
    if text.trim_end().ends_with(':')
        && let Some(next) = rows.get(i + 1)
        && bullet_item(&next.text).is_none()
        && !next.text.trim().is_empty()
    {
        let t = next.text.trim();
        let start = next.text.len() - next.text.trim_start().len();
        let mut found = Found::new(start, start + t.len(), i + 1, AnswerValue::Text(t.to_owned()), t, 0.9);
        found.intro = Some(i);
        out.push(found);
    }
    let parts = pieces(text);
    let n = parts.len();
    for (k, (a, b)) in parts.into_iter().enumerate() {
        let mut value = text[a..b].to_owned();
        let mut last_row = i;
        // The last piece of a row that does not end its sentence continues
        // on the next rows, unless it is a heading or the next row opens a
        // field of its own ("Control: ...").
        if k + 1 == n && !ends_sentence(&value) && !heading_like(&value) {
            for next in rows.iter().skip(i + 1).take(MAX_CONTINUATION) {
                let t = next.text.trim();
                if t.is_empty() || opens_field(t) || bullet_item(t).is_some() {
                    break;
                }
                let cut = pieces(t).first().map_or(t.len(), |p| p.1);
                value.push(' ');
                value.push_str(&t[..cut]);
                last_row += 1;
                if cut < t.len() || ends_sentence(&t[..cut]) {
                    break;
                }
            }
        }
        let words = value.split_whitespace().count();
        let fit = if words >= 4 { 1.0 } else { 0.5 };
        let mut found = Found::new(a, b, i, AnswerValue::Text(value.clone()), &value, fit);
        found.last_row = last_row;
        out.push(found);
    }
    out
}

/// The item text of a bulleted or enumerated row (`• Digital Media`,
/// `(b) a sentence`, `2. Scope`), without its marker; `None` for other rows.
pub(crate) fn bullet_item(text: &str) -> Option<&str> {
    let t = text.trim_start();
    for marker in ['•', '·', '◦', '▪', '‣', '●', '○', '■', '□', '\u{f0b7}', '–', '—', '-', '*', '➢', '✓']
    {
        if let Some(rest) = t.strip_prefix(marker) {
            let rest = rest.trim_start();
            return (!rest.is_empty() && rest.len() < t.len()).then_some(rest);
        }
    }
    // "(a)", "a)", "(iv)", "1.", "2)" followed by a space.
    let (marker, rest) = t.split_once(' ')?;
    let inner = marker.trim_start_matches('(').trim_end_matches([')', '.']);
    let closed = marker.ends_with(')') || (marker.ends_with('.') && inner.chars().all(|c| c.is_ascii_digit()));
    let short = !inner.is_empty()
        && inner.chars().count() <= 4
        && (inner.chars().all(|c| c.is_ascii_digit()) || inner.chars().all(|c| c.is_ascii_lowercase()));
    (closed && short && !rest.trim().is_empty()).then(|| rest.trim_start())
}

/// A bulleted list: the row introducing it and its items `(row, text)`.
pub(crate) type BulletList = (Option<usize>, Vec<(usize, String)>);

/// The bulleted lists of a passage: for each, the row before its first item
/// (the list's introduction, if any) and its items as `(row, text)`. A list
/// has at least two items in a row.
pub(crate) fn bullet_lists(rows: &[&Line]) -> Vec<BulletList> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < rows.len() {
        let mut items: Vec<(usize, String)> = Vec::new();
        let mut j = i;
        while j < rows.len() {
            match bullet_item(&rows[j].text) {
                Some(item) => items.push((j, item.trim().to_owned())),
                None => break,
            }
            j += 1;
        }
        if items.len() >= 2 {
            out.push((i.checked_sub(1), items));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use docintel_schema::BBox;

    fn line(text: &str) -> Line {
        Line { line_id: 1, page: 1, line_in_page: 1, text: text.to_owned(), bbox: BBox::default() }
    }

    #[test]
    fn sentences_continue_on_the_next_row() {
        let rows = [
            line("encodings in both stacks. For the base model, we use a rate of"),
            line("Pdrop = 0.1."),
            line("Next."),
        ];
        let refs: Vec<&Line> = rows.iter().collect();
        let found = find(&refs, 0);
        let texts: Vec<&str> = found.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(texts, ["encodings in both stacks.", "For the base model, we use a rate of Pdrop = 0.1."]);
        assert_eq!(found[1].last_row, 1);
        let heading = find(&[&line("AC-2 ACCOUNT MANAGEMENT Control: define the types of accounts allowed.")], 0);
        let texts: Vec<&str> = heading.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "define the types of accounts allowed.",
                "AC-2 ACCOUNT MANAGEMENT",
                "Control: define the types of accounts allowed."
            ]
        );
        let labelled = find(&[&line("Payment Mode: Cash at Hotel")], 0);
        assert_eq!(labelled[0].text, "Cash at Hotel");
    }

    #[test]
    fn bullets() {
        assert_eq!(bullet_item("• Digital Media;"), Some("Digital Media;"));
        assert_eq!(bullet_item("(b) the Insured"), Some("the Insured"));
        assert_eq!(bullet_item("12. Termination"), Some("Termination"));
        assert_eq!(bullet_item("2.35 Room Rent means"), None);
        assert_eq!(bullet_item("Our business"), None);
        let rows = [line("Aeronautics’ major programs include:"), line("• F-35"), line("• C-130"), line("Other text")];
        let refs: Vec<&Line> = rows.iter().collect();
        let lists = bullet_lists(&refs);
        assert_eq!(lists.len(), 1);
        assert_eq!(lists[0].0, Some(0));
        assert_eq!(lists[0].1, [(1, "F-35".to_owned()), (2, "C-130".to_owned())]);
    }
}
