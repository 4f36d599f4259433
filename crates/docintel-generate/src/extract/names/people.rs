//! People's names: given names from the list, middle initials, honorifics,
//! and the one-word name a form writes after its label.

use super::{
    FIRST_NAMES, HONORIFICS, NameToken, bare, gap_is_space, glued_name, is_initial, is_initials, person_word, words,
};

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
    for name in signed_names(line) {
        out.retain(|t| !(t.start < name.end && name.start < t.end));
        out.push(name);
    }
    out.sort_by_key(|t| t.start);
    out
}

/// A conformed signature ("By: /s/ JAMES R. LUSSIOR") or the name label of
/// a signature block ("NAME: S.K. Vereschagin"), then the name.
static SIGNED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"(?:/[sS]/|\b(?i:name|signed\s+by|signatory)\s*:)[ \t]*").expect("signature pattern")
});

/// The names a signature block gives: after `/s/` or a name label, two to
/// five capitalised words or initials, up to the row's next label ("BY:",
/// "TITLE:"). Whatever their shape ("S.K. Vereschagin"), they name the
/// person who signed.
fn signed_names(line: &str) -> Vec<NameToken> {
    let mut out = Vec::new();
    for m in SIGNED.find_iter(line) {
        let rest = &line[m.end()..];
        let (mut end, mut count, mut offset) = (0, 0, 0);
        for word in rest.split(' ') {
            let capitalised = word.chars().next().is_some_and(char::is_uppercase);
            if word.is_empty() || !capitalised || word.ends_with(':') || count == 5 {
                break;
            }
            end = offset + word.trim_end_matches(',').len();
            offset += word.len() + 1;
            count += 1;
            if word.ends_with(',') {
                break;
            }
        }
        let value = &rest[..end];
        let worded =
            value.split_whitespace().any(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 2 && !w.ends_with('.'));
        if count >= 2 && worded {
            let start = m.end();
            out.push(NameToken { value: value.to_owned(), start, end: start + end, fit: 1.0 });
        }
    }
    out
}

/// The fit of a one-word name read from a label ([`labelled_name`]); the
/// names fitting less were read from capitalised words alone.
pub(crate) const LABELLED_NAME_FIT: f64 = 0.6;

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
    Some(NameToken { value: value_trimmed.to_owned(), start, end: start + value_trimmed.len(), fit: LABELLED_NAME_FIT })
}
