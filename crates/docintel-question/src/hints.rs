//! Structural hints: pages named in the question, a section to route to, a
//! layout element, and the phrases that triggered them.

use std::ops::Range;

use regex::Regex;

use crate::anchors::SECTION_WORDS;

/// Ranges wider than this are capped (a typo like "pages 1-9999" must not
/// expand to ten thousand pages).
pub(crate) const MAX_RANGE: u32 = 500;

const PAGE_WORD: &str =
    r"(?:pages?|pp\.?|p\.|pgs?\.|p[aá]ginas?|p[aá]g\.|seiten?|S\.|страниц(?:ами|ах|ам|а|е|ы|у|и)?|стр\.?)";
const RANGE_SEP: &str = r"(?:-|–|—|to|through|thru|à|au|a|al|bis|до|по)";
const LIST_SEP: &str = r"(?:,|&|and|or|et|ou|y|o|und|oder|и|или)";

/// Pages found in the question.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PageHints {
    /// Pages, ascending, deduplicated.
    pub(crate) pages: Vec<u32>,
    /// The matched phrases with their spans.
    pub(crate) phrases: Vec<(Range<usize>, String)>,
    /// Notes on capped ranges.
    pub(crate) notes: Vec<String>,
}

/// A section the question points to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SectionHint {
    /// The section reference or title ("section 4.2", "exclusions").
    pub(crate) hint: String,
    /// The phrase that triggered it.
    pub(crate) phrase: String,
    /// Whether it came from "the section on X" (a title, not a number).
    pub(crate) by_topic: bool,
}

/// The compiled hint regexes.
#[derive(Debug, Clone)]
pub(crate) struct HintRules {
    page_phrase: Regex,
    page_item: Regex,
    section_ref: Regex,
    section_topic: Regex,
    layout: Regex,
    period: Regex,
    period_year: Regex,
    document_itself: Regex,
}

/// Nouns a document calls itself by, in the languages of [`HintRules`].
const DOCUMENT_NOUNS: &str = r"agreements?|contracts?|documents?|polic(?:y|ies)|papers?|reports?|articles?|stud(?:y|ies)|invoices?|receipts?|letters?|leases?|amendments?|certificates?|forms?|r[ée]sum[ée]s?|cvs?|filings?|brochures?|guides?|manuals?|publications?|notices?|contrats?|avenants?|rapports?|factures?|polices?|conventions?|contratos?|documentos?|p[óo]lizas?|informes?|facturas?|acuerdos?|vertrag|dokument|bericht|rechnung|договор\p{L}*|документ\p{L}*|отч[её]т\p{L}*";

impl HintRules {
    pub(crate) fn new() -> HintRules {
        let item = format!(r"\d+(?:\s*{RANGE_SEP}\s*(?:{PAGE_WORD}\s*)?\d+)?");
        let page_phrase = format!(r"(?i)\b{PAGE_WORD}\s*{item}(?:\s*{LIST_SEP}\s*(?:{PAGE_WORD}\s*)?{item})*");
        let page_item = format!(r"(?i)(\d+)(?:\s*{RANGE_SEP}\s*(?:{PAGE_WORD}\s*)?(\d+))?");
        let section_ref = format!(
            r"(?i)\b(?:{SECTION_WORDS})\s*(?:n°\s*|no\.\s*)?(?:[a-z]{{0,2}}\d+(?:[.\-]\d+)*(?:\([0-9a-z]+\))*|[ivxlc]+\b|[a-z]\b)|§\s*\d+(?:\.\d+)*(?:\([0-9a-z]+\))*"
        );
        let section_topic = r"(?i)\b(?:sections?|chapters?|part|clauses?|chapitre|partie|rubrique|secci[oó]n|cap[ií]tulo|apartado|abschnitt|kapitel|teil|раздел|разделе|глава|главе)\s+(?:on|about|regarding|concerning|dealing\s+with|titled|entitled|called|named|sur|concernant|relative?\s+(?:à|aux?)|sobre|acerca\s+de|über|zu|zum|zur|о|об|про)\s+(?:(?:the|les?|la|l'|los|las|el|die|der|das|den|dem)\s+)?([\p{L}\p{N}][\p{L}\p{N}\-' ]*?)(?:\s+(?:say|says|said|state|states|mention|mentions|contain|contains|describe|describes|cover|covers|include|includes|tell|tells|about|regarding|for|of|in|on|and|dit|indique|prévoit|dice|sagt|говорит)\b|\s*[?,.;:!]|$)";
        let layout = r"(?i)\b(?:the|this|that|le|la|du|de\s+la|el|la|der|die|den|dem|в)\s+(table|tableau|tabla|tabelle|таблице|footnotes?|footer|header|figure|chart|graph|diagram|signature)\b|\b(table|tableau|tabla|tabelle|figure|abbildung|fig\.)\s*\d+|\b(notes?\s+de\s+bas\s+de\s+page|pie\s+de\s+p[aá]gina|fußnoten?|сноск\p{L}*)";
        let compile = |source: &str| Regex::new(source).expect("hint regex compiles");
        HintRules {
            page_phrase: compile(&page_phrase),
            page_item: compile(&page_item),
            section_ref: compile(&section_ref),
            section_topic: compile(section_topic),
            layout: compile(layout),
            period: compile(
                r"(?i)\bFY\s?\d{2,4}\b|\bQ[1-4]\s?(?:19|20)\d{2}\b|\b(?:19|20)\d{2}\s*[-–]\s*(?:19|20)\d{2}\b",
            ),
            period_year: compile(r"(?i)\b(?:in|for|during|en|pour|im|für|во?|durante|pendant)\s+((?:19|20)\d{2})\b"),
            // "this agreement", "the present contract", "ce contrat", "la
            // présente police", "este contrato", "dieser Vertrag", "этот
            // договор": the document speaking of itself.
            document_itself: compile(&format!(
                r"(?i)\b(?:this|the\s+present|the\s+attached|ce|cet|cette|ces|l[ae]\s+pr[ée]sente?|les\s+pr[ée]sente?s|este|esta|estos|estas|el\s+presente|la\s+presente|diese[rsmn]?|эт(?:от|ого|ом|а|ой|и|их)|данн(?:ый|ого|ом|ая|ой))\s+(?:[\p{{L}}-]+\s+)?(?:{DOCUMENT_NOUNS})\b"
            )),
        }
    }

    /// Pages named in `text`: single pages, ranges and lists, in en, fr, es,
    /// de and ru.
    pub(crate) fn pages(&self, text: &str) -> PageHints {
        let mut hints = PageHints::default();
        for phrase in self.page_phrase.find_iter(text) {
            hints.phrases.push((phrase.range(), phrase.as_str().to_owned()));
            for item in self.page_item.captures_iter(phrase.as_str()) {
                let Some(first) = item.get(1).and_then(|m| m.as_str().parse::<u32>().ok()) else { continue };
                let last = item.get(2).and_then(|m| m.as_str().parse::<u32>().ok()).unwrap_or(first);
                let (mut lo, mut hi) = (first.min(last), first.max(last));
                lo = lo.max(1);
                if hi == 0 {
                    continue;
                }
                if hi - lo >= MAX_RANGE {
                    hints.notes.push(format!(
                        "page range {lo}-{hi} capped to {lo}-{} ({MAX_RANGE} pages at most)",
                        lo + MAX_RANGE - 1
                    ));
                    hi = lo + MAX_RANGE - 1;
                }
                hints.pages.extend(lo..=hi);
            }
        }
        hints.pages.sort_unstable();
        hints.pages.dedup();
        hints
    }

    /// The section the question points to: a numbered reference ("section
    /// 4.2", "Article 12", "§4.2") first, else "the section on X".
    pub(crate) fn section(&self, text: &str) -> Option<SectionHint> {
        if let Some(m) = self.section_ref.find(text) {
            let hint = m.as_str().trim().to_owned();
            return Some(SectionHint { phrase: hint.clone(), hint, by_topic: false });
        }
        self.section_topic.captures(text).and_then(|c| {
            let topic = c.get(1)?.as_str().trim();
            if topic.is_empty() {
                return None;
            }
            let phrase = text[c.get(0)?.start()..c.get(1)?.end()].to_owned();
            Some(SectionHint { hint: topic.to_owned(), phrase, by_topic: true })
        })
    }

    /// A period the question is limited to ("FY2022", "Q3 2021", "2019-2021",
    /// "in 2019"); a full date ("in 2019-03-01") is not a period.
    pub(crate) fn period(&self, text: &str) -> Option<String> {
        if let Some(m) = self.period.find(text) {
            return Some(m.as_str().to_owned());
        }
        for c in self.period_year.captures_iter(text) {
            let whole = c.get(0).expect("match");
            let rest = &text[whole.end()..];
            if rest.starts_with(['-', '/', '.']) && rest[1..].starts_with(|ch: char| ch.is_ascii_digit()) {
                continue;
            }
            return Some(c.get(1).unwrap_or(whole).as_str().to_owned());
        }
        None
    }

    /// The phrase by which the question speaks of the document itself
    /// ("this agreement", "cette police", "the present contract").
    pub(crate) fn document_itself(&self, text: &str) -> Option<String> {
        self.document_itself.find(text).map(|m| m.as_str().to_owned())
    }

    /// A layout element the question names, in English (`table`, `footnote`,
    /// `header`, `footer`, `figure`, `chart`, `signature`), with its phrase.
    pub(crate) fn layout(&self, text: &str) -> Option<(String, String)> {
        let c = self.layout.captures(text)?;
        let word = c.iter().skip(1).flatten().next()?.as_str().to_lowercase();
        let element = match word.as_str() {
            w if w.starts_with("tab") || w.starts_with("табл") => "table",
            w if w.starts_with("footnote") || w.starts_with("note") || w.starts_with("fußnote") => "footnote",
            w if w.starts_with("сноск") => "footnote",
            w if w.starts_with("pie") || w == "footer" => "footer",
            "header" => "header",
            "figure" | "abbildung" | "fig." => "figure",
            "chart" | "graph" | "diagram" => "chart",
            "signature" => "signature",
            _ => return None,
        };
        Some((element.to_owned(), c.get(0)?.as_str().to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static RULES: std::sync::LazyLock<HintRules> = std::sync::LazyLock::new(HintRules::new);

    fn check(question: &str, expect: &[u32]) {
        let rules = &*RULES;
        assert_eq!(rules.pages(question).pages, expect, "{question}");
    }

    #[test]
    fn page_forms() {
        check("What is on page 3?", &[3]);
        check("Summarize pages 5 to 7", &[5, 6, 7]);
        check("Summarize pages 5-7", &[5, 6, 7]);
        check("See pp. 5–7", &[5, 6, 7]);
        check("Compare page 2 and page 7", &[2, 7]);
        check("Compare pages 2 and 7", &[2, 7]);
        check("Compare pages 7, 2 and 2", &[2, 7]);
        check("What is stated on p. 4?", &[4]);
        check("Que dit la page 3 ?", &[3]);
        check("¿Qué dice la página 3?", &[3]);
        check("Was steht auf Seite 3?", &[3]);
        check("Was steht auf S. 3?", &[3]);
        check("Что на странице 2?", &[2]);
        check("Что написано на страница 2?", &[2]);
        check("Что на стр. 2?", &[2]);
        check("from page 5 to page 7", &[5, 6, 7]);
        check("páginas 5 a 7", &[5, 6, 7]);
        check("Seiten 5 bis 7", &[5, 6, 7]);
        check("How many pages does it have?", &[]);
        check("What is the total?", &[]);
    }

    #[test]
    fn ranges_are_capped() {
        let hints = HintRules::new().pages("pages 1-100000");
        assert_eq!(hints.pages.len(), MAX_RANGE as usize);
        assert_eq!(hints.notes.len(), 1);
        assert_eq!(hints.phrases[0].1, "pages 1-100000");
    }

    #[test]
    fn sections() {
        let rules = HintRules::new();
        let hint = rules.section("What does section 4.2 require?").unwrap();
        assert_eq!((hint.hint.as_str(), hint.by_topic), ("section 4.2", false));
        assert_eq!(rules.section("Summarize Article 12").unwrap().hint, "Article 12");
        assert_eq!(rules.section("What is in chapter 3?").unwrap().hint, "chapter 3");
        let topic = rules.section("What does the section on exclusions say about floods?").unwrap();
        assert_eq!((topic.hint.as_str(), topic.by_topic), ("exclusions", true));
        assert_eq!(topic.phrase, "section on exclusions");
        assert_eq!(rules.section("Summarize the section about water damage").unwrap().hint, "water damage");
        assert_eq!(rules.section("What is the total?"), None);
    }

    #[test]
    fn periods() {
        let rules = HintRules::new();
        assert_eq!(rules.period("What was revenue in FY2022?").as_deref(), Some("FY2022"));
        assert_eq!(rules.period("Revenue for 2019-2021").as_deref(), Some("2019-2021"));
        assert_eq!(rules.period("What was revenue in 2019?").as_deref(), Some("2019"));
        assert_eq!(rules.period("What happened in 2019-03-01?"), None);
        assert_eq!(rules.period("What is the total?"), None);
    }

    #[test]
    fn document_itself() {
        for (question, expect) in [
            ("What is the date of this agreement?", Some("this agreement")),
            ("Who are the parties to this Distribution Agreement?", Some("this Distribution Agreement")),
            ("What is the title of this paper?", Some("this paper")),
            ("Quelle est la date d'effet de la présente police ?", Some("la présente police")),
            ("¿Quién firma este contrato?", Some("este contrato")),
            ("What is the total amount due?", None),
            ("What does this section say about fees?", None),
        ] {
            assert_eq!(RULES.document_itself(question).as_deref(), expect, "{question}");
        }
    }

    #[test]
    fn layout() {
        let rules = HintRules::new();
        assert_eq!(rules.layout("What is the total in the table?").unwrap().0, "table");
        assert_eq!(rules.layout("What does the footnote say?").unwrap().0, "footnote");
        assert_eq!(rules.layout("Show the premiums as a table"), None);
    }
}
