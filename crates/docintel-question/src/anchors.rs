//! Anchors: identifiers, section references, amounts and dates, found by
//! deterministic regexes and matched downstream as exact text.

use std::ops::Range;

use regex::Regex;

use crate::lexicon::masked;

/// What kind of anchor a match is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AnchorKind {
    /// A date (`2014-08-03`, `August 3, 2014`).
    Date,
    /// An amount with a currency (`$4.11`, `1,939.00 EUR`).
    Amount,
    /// A section reference (`Article 18`, `section 4.2`, `§4.2`).
    Section,
    /// A code (`AC-2`, `IA-5(1)`, `L131-1`, `ISO 9408`).
    Identifier,
    /// A formatted number (`1,939.00`, `4.11`).
    Number,
}

/// One anchor found in the question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Anchor {
    /// The text as written.
    pub(crate) text: String,
    /// Byte span in the corrected question.
    pub(crate) span: Range<usize>,
    /// Its kind.
    pub(crate) kind: AnchorKind,
}

const MONTHS: &str = "january|february|march|april|may|june|july|august|september|october|november|december|\
jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec|\
janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|décembre|decembre|\
enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre|\
januar|februar|märz|maerz|juni|juli|oktober|dezember|\
января|февраля|марта|апреля|мая|июня|июля|августа|сентября|октября|ноября|декабря";

/// Words introducing a numbered part of a document.
pub(crate) const SECTION_WORDS: &str = "sections?|sect\\.|articles?|art\\.|chapters?|chapitres?|cap[ií]tulos?|\
art[ií]culos?|secci[oó]n|apartado|kapitel|abschnitt|artikel|clauses?|annex|annexe|appendix|anhang|anexo|schedule|\
paragraphs?|paragraphe|paragraf|статья|статье|статьи|раздел|разделе|глава|главе|пункт|пункте";

/// The compiled anchor regexes, in priority order.
#[derive(Debug, Clone)]
pub(crate) struct AnchorRules {
    rules: Vec<(AnchorKind, Regex)>,
}

impl AnchorRules {
    pub(crate) fn new() -> AnchorRules {
        let num = r"(?:\d{1,3}(?:[,.\u{00A0}\u{202F} ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?)";
        let sources: Vec<(AnchorKind, String)> = vec![
            (AnchorKind::Date, r"\b\d{4}-\d{1,2}-\d{1,2}\b".to_owned()),
            (AnchorKind::Date, r"\b\d{1,2}[/.\-]\d{1,2}[/.\-](?:\d{4}|\d{2})\b".to_owned()),
            (AnchorKind::Date, format!(r"(?i)\b(?:{MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b")),
            (
                AnchorKind::Date,
                format!(r"(?i)\b\d{{1,2}}(?:st|nd|rd|th|er|\.)?\s+(?:de\s+)?(?:{MONTHS})\.?,?\s+(?:de\s+)?\d{{4}}\b"),
            ),
            (AnchorKind::Date, format!(r"(?i)\b(?:{MONTHS})\s+(?:de\s+)?\d{{4}}\b")),
            (AnchorKind::Amount, format!(r"(?:\b(?:US|CA|AU|A|C)\$|[$€£¥])\s?{num}")),
            (
                AnchorKind::Amount,
                format!(r"\b{num}\s?(?:(?:EUR|USD|GBP|CHF|JPY|CAD|RUB|[Ee]uros?|[Dd]ollars?)\b|[€£$])"),
            ),
            (
                AnchorKind::Section,
                format!(
                    r"(?i)\b(?:{SECTION_WORDS})\s*(?:n°\s*|no\.\s*)?(?:[a-z]{{0,2}}\d+(?:[.\-]\d+)*(?:\([0-9a-z]+\))*|[ivxlc]+\b|[a-z]\b)"
                ),
            ),
            (AnchorKind::Section, r"§\s*\d+(?:\.\d+)*(?:\([0-9a-z]+\))*".to_owned()),
            (AnchorKind::Identifier, r"\b[A-Z]{1,6}\d*(?:[-.]\d+)+(?:\([0-9A-Za-z]+\))*".to_owned()),
            (
                AnchorKind::Identifier,
                r"\b(?:ISO|IEC|EN|NF|DIN|BS|ANSI|IEEE|NIST|RFC|SP|CFR|EU)(?:/[A-Z]+)*\s?\d+(?:[-:.]\d+)*\b".to_owned(),
            ),
            (
                AnchorKind::Number,
                r"\b\d{1,3}(?:,\d{3})+(?:\.\d+)?\b|\b\d{1,3}(?:\.\d{3})+,\d{2}\b|\b\d+\.\d{2}\b".to_owned(),
            ),
        ];
        let rules = sources
            .into_iter()
            .map(|(kind, source)| (kind, Regex::new(&source).expect("anchor regex compiles")))
            .collect();
        AnchorRules { rules }
    }

    /// Every anchor of `text`, in question order; a span already claimed by an
    /// earlier rule (or inside `exclude`) is skipped.
    pub(crate) fn find(&self, text: &str, exclude: &[Range<usize>]) -> Vec<Anchor> {
        let mut found: Vec<Anchor> = Vec::new();
        for (kind, regex) in &self.rules {
            for m in regex.find_iter(text) {
                let span = m.range();
                let taken: Vec<Range<usize>> = found.iter().map(|a| a.span.clone()).collect();
                if masked(&span, exclude) || masked(&span, &taken) {
                    continue;
                }
                let trimmed = m.as_str().trim_end();
                let span = span.start..span.start + trimmed.len();
                found.push(Anchor { text: trimmed.to_owned(), span, kind: *kind });
            }
        }
        found.sort_by_key(|a| a.span.start);
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(question: &str, expect: &[(&str, AnchorKind)]) {
        let rules = AnchorRules::new();
        let got: Vec<(String, AnchorKind)> = rules.find(question, &[]).into_iter().map(|a| (a.text, a.kind)).collect();
        let want: Vec<(String, AnchorKind)> = expect.iter().map(|(t, k)| ((*t).to_owned(), *k)).collect();
        assert_eq!(got, want, "{question}");
    }

    #[test]
    fn identifiers() {
        check("What does AC-2 require?", &[("AC-2", AnchorKind::Identifier)]);
        check("Is IA-5(1) implemented?", &[("IA-5(1)", AnchorKind::Identifier)]);
        check("What does L131-1 say?", &[("L131-1", AnchorKind::Identifier)]);
        check("Which tests does ISO 9408 describe?", &[("ISO 9408", AnchorKind::Identifier)]);
        check("Is this an e-mail or a pre-2010 form?", &[]);
    }

    #[test]
    fn sections() {
        check("What does Article 18 say?", &[("Article 18", AnchorKind::Section)]);
        check("Summarize §4.2", &[("§4.2", AnchorKind::Section)]);
        check("What is in section 4.2?", &[("section 4.2", AnchorKind::Section)]);
        check("Que dit l'article L131-1 ?", &[("article L131-1", AnchorKind::Section)]);
        check("What is in Annex B?", &[("Annex B", AnchorKind::Section)]);
        check("What does the section on exclusions say?", &[]);
    }

    #[test]
    fn amounts_and_dates() {
        check("Which invoice totals $4.11?", &[("$4.11", AnchorKind::Amount)]);
        check("Who paid 1,939.00 EUR?", &[("1,939.00 EUR", AnchorKind::Amount)]);
        check("Who paid 1,939.00?", &[("1,939.00", AnchorKind::Number)]);
        check("What happened on 2014-08-03?", &[("2014-08-03", AnchorKind::Date)]);
        check("What happened on 03/08/2014?", &[("03/08/2014", AnchorKind::Date)]);
        check("What happened on August 3, 2014?", &[("August 3, 2014", AnchorKind::Date)]);
        check("Que s'est-il passé le 3 août 2014 ?", &[("3 août 2014", AnchorKind::Date)]);
        check("What is the total in EUR?", &[]);
    }
}
