//! Language detection for the document profile.
//!
//! Samples the text (windows of consecutive lines spread over the whole
//! document), runs `whatlang` on each window, keeps only reliable detections
//! and reports ISO 639-1 codes, most frequent first. A language must carry at
//! least [`MIN_SHARE`] of the reliable windows to be listed, so one stray
//! quotation does not make a document bilingual.

use std::collections::HashMap;

/// Characters per sample window.
const WINDOW_CHARS: usize = 600;
/// At most this many windows are examined.
const MAX_WINDOWS: usize = 40;
/// Share of the reliable windows a language needs to be listed.
const MIN_SHARE: f64 = 0.15;
/// A window shorter than this (in letters) is not examined.
const MIN_LETTERS: usize = 40;

/// Detected languages (ISO 639-1), most frequent first; empty when nothing
/// was detected with confidence.
pub(crate) fn detect_languages<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<String> {
    // Build windows of consecutive lines.
    let mut windows: Vec<String> = Vec::new();
    let mut current = String::new();
    for text in lines {
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(text);
        if current.len() >= WINDOW_CHARS {
            windows.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        windows.push(current);
    }
    // Spread the examined windows over the document.
    let step = windows.len().div_ceil(MAX_WINDOWS).max(1);
    let mut counts: HashMap<&'static str, usize> = HashMap::new();
    let mut first_seen: HashMap<&'static str, usize> = HashMap::new();
    let mut reliable = 0usize;
    for (i, window) in windows.iter().enumerate().step_by(step) {
        if window.chars().filter(|c| c.is_alphabetic()).count() < MIN_LETTERS {
            continue;
        }
        let Some(info) = whatlang::detect(window) else { continue };
        if !info.is_reliable() {
            continue;
        }
        let Some(code) = iso639_1(info.lang().code()) else { continue };
        reliable += 1;
        *counts.entry(code).or_default() += 1;
        first_seen.entry(code).or_insert(i);
    }
    let mut ranked: Vec<(&'static str, usize)> =
        counts.into_iter().filter(|&(_, n)| n as f64 >= MIN_SHARE * reliable as f64).collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(first_seen[a.0].cmp(&first_seen[b.0])));
    ranked.into_iter().map(|(code, _)| code.to_string()).collect()
}

/// ISO 639-3 (as whatlang names its languages) → ISO 639-1.
fn iso639_1(code3: &str) -> Option<&'static str> {
    Some(match code3 {
        "epo" => "eo",
        "eng" => "en",
        "rus" => "ru",
        "cmn" => "zh",
        "spa" => "es",
        "por" => "pt",
        "ita" => "it",
        "ben" => "bn",
        "fra" => "fr",
        "deu" => "de",
        "ukr" => "uk",
        "kat" => "ka",
        "ara" => "ar",
        "hin" => "hi",
        "jpn" => "ja",
        "heb" => "he",
        "yid" => "yi",
        "pol" => "pl",
        "amh" => "am",
        "jav" => "jv",
        "kor" => "ko",
        "nob" => "nb",
        "dan" => "da",
        "swe" => "sv",
        "fin" => "fi",
        "tur" => "tr",
        "nld" => "nl",
        "hun" => "hu",
        "ces" => "cs",
        "ell" => "el",
        "bul" => "bg",
        "bel" => "be",
        "mar" => "mr",
        "kan" => "kn",
        "ron" => "ro",
        "slv" => "sl",
        "hrv" => "hr",
        "srp" => "sr",
        "mkd" => "mk",
        "lit" => "lt",
        "lav" => "lv",
        "est" => "et",
        "tam" => "ta",
        "vie" => "vi",
        "urd" => "ur",
        "tha" => "th",
        "guj" => "gu",
        "uzb" => "uz",
        "pan" => "pa",
        "aze" => "az",
        "ind" => "id",
        "tel" => "te",
        "pes" => "fa",
        "mal" => "ml",
        "ori" => "or",
        "mya" => "my",
        "nep" => "ne",
        "sin" => "si",
        "khm" => "km",
        "tuk" => "tk",
        "aka" => "ak",
        "zul" => "zu",
        "sna" => "sn",
        "afr" => "af",
        "lat" => "la",
        "slk" => "sk",
        "cat" => "ca",
        "tgl" => "tl",
        "hye" => "hy",
        "cym" => "cy",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(lines: &[&str], expected: &[&str]) {
        assert_eq!(detect_languages(lines.iter().copied()), expected, "{lines:?}");
    }

    const EN: &str = "The committee reviewed the annual report and approved the budget for the next financial year after a long discussion.";
    const FR: &str = "Le comité a examiné le rapport annuel et a approuvé le budget pour le prochain exercice après une longue discussion.";

    #[test]
    fn detects_confident_languages_most_frequent_first() {
        check(&[EN; 12], &["en"]);
        let mut mixed: Vec<&str> = vec![EN; 12];
        mixed.extend([FR; 24]);
        check(&mixed, &["fr", "en"]);
        // Too short to be confident: nothing, not a guess.
        check(&["Total 4.11"], &[]);
        check(&[], &[]);
    }

    #[test]
    fn every_whatlang_language_maps_to_two_letters() {
        for lang in whatlang::Lang::all() {
            let code = iso639_1(lang.code());
            assert!(code.is_some_and(|c| c.len() == 2), "{lang:?}");
        }
    }
}
