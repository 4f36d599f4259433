//! Places: listed places, and `City, State` / `City, ST` pairs.

use super::{NameToken, PLACES, bare, capitalised, gap_is_space, person_word, words};

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
