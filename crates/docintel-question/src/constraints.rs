//! Format constraints ("in EUR", "in YYYY-MM-DD", "in thousands") and
//! distractors ("the limit, not the deductible").
//!
//! Format constraints belong to generation only: their phrases are removed
//! from the retrieval query and never become keywords.

use std::ops::Range;

use regex::Regex;

use crate::lexicon::{Token, is_stop, strip_clitic};

/// One format constraint found in the question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FormatHit {
    /// `currency`, `date_format`, `unit`, `answer_language` or `decimals`.
    pub(crate) key: &'static str,
    /// The normalised value (`EUR`, `YYYY-MM-DD`, `thousands`, `fr`).
    pub(crate) value: String,
    /// Byte span of the phrase in the corrected question.
    pub(crate) span: Range<usize>,
}

/// One "X, not Y" distinction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DistractorHit {
    /// What the question asks for (may be empty when nothing precedes).
    pub(crate) wanted: String,
    /// What the answer must not be.
    pub(crate) not_this: String,
    /// Byte span covering the marker and the distractor words.
    pub(crate) span: Range<usize>,
}

/// The compiled constraint regexes.
#[derive(Debug, Clone)]
pub(crate) struct ConstraintRules {
    currency: Regex,
    date_pattern: Regex,
    date_iso: Regex,
    unit: Regex,
    answer_language: Regex,
    distractor: Regex,
}

impl ConstraintRules {
    pub(crate) fn new() -> ConstraintRules {
        let compile = |source: &str| Regex::new(source).expect("constraint regex compiles");
        ConstraintRules {
            currency: compile(
                r"(?i)(?:\b(?:expressed|converted|given|stated|shown)\s+)?\b(?:in|into|en|на|в)\s+(?:the\s+)?(?:(?:thousands|millions|billions|milliers|miles|millones|tausend|millionen)\s+(?:of\s+|d'|de\s+)?)?(?:(eur|euros?|usd|us\s+dollars?|dollars?|d[oó]lares|gbp|pounds?(?:\s+sterling)?|livres?\s+sterling|libras?|chf|swiss\s+francs?|francs?\s+suisses?|jpy|yen|cad|canadian\s+dollars?|rub|rubles?|roubles?|рублях|евро|долларах|фунтах)\b|(€|\$|£))",
            ),
            date_pattern: compile(
                r"(?i)(?:\b(?:in|as|using|with|au\s+format|en\s+formato|im\s+format|format)\s+)?(?:(?:the|le|el)\s+)?\b(yyyy-mm-dd|dd/mm/yyyy|mm/dd/yyyy|dd\.mm\.yyyy|dd-mm-yyyy|yyyy/mm/dd)\b(?:\s+format)?",
            ),
            date_iso: compile(
                r"(?i)(?:\b(?:in|as|using|with|au|en|im)\s+)?(?:(?:the|an?|le|el)\s+)?\b(?:iso[\s-]?8601(?:\s+(?:date\s+)?format)?|iso\s+(?:date\s+)?format|format(?:o)?\s+iso(?:[\s-]?8601)?|iso-format)\b",
            ),
            unit: compile(
                r"(?i)\b(?:in|en|в)\s+(thousands|millions|billions|milliers|milliards|miles|millones|tausend|millionen|milliarden|тысячах|миллионах|миллиардах|percent|percentage|per\s?cent|pourcentage|porcentaje|prozent|процентах)\b",
            ),
            answer_language: compile(
                r"(?i)\b(?:answer|reply|respond|r[ée]pon(?:ds|dez|dre)|responde|antworte)\s+(?:me\s+)?(?:in|en|auf)\s+(english|french|spanish|german|russian|anglais|fran[çc]ais|espagnol|allemand|russe|ingl[ée]s|franc[ée]s|espa[ñn]ol|alem[áa]n|ruso|englisch|franz[öo]sisch|spanisch|deutsch|russisch)\b",
            ),
            distractor: compile(
                r"(?i),\s*(?:but\s+|and\s+)?not\s+|\bbut\s+not\s+|\band\s+not\s+|\bnot\s+(?:the|a|an)\s+|\brather\s+than\s+|\binstead\s+of\s+|\bas\s+opposed\s+to\s+|\bexcluding\s+|\bexcept(?:\s+for)?\s+|\bother\s+than\s+|\bapart\s+from\s+|,\s*(?:et\s+|mais\s+)?(?:non|pas)\s+|\bmais\s+pas\s+|\bet\s+non\s+(?:pas\s+)?|\bhors\s+|\bsauf\s+|\bà\s+l'exclusion\s+(?:de|du|des)\s+|\bplutôt\s+que\s+|,\s*(?:pero\s+)?no\s+|\bpero\s+no\s+|\by\s+no\s+|\bexcepto\s+|\bsalvo\s+|\bexcluyendo\s+|\ben\s+lugar\s+de\s+|,\s*(?:aber\s+)?nicht\s+|\baber\s+nicht\s+|\bund\s+nicht\s+|\baußer\s+|\bausgenommen\s+|\banstatt\s+|\bstatt\s+|,\s*(?:а\s+)?не\s+|\bкроме\s+|\bза\s+исключением\s+|\bвместо\s+",
            ),
        }
    }

    /// Every format constraint of `text`, in question order.
    pub(crate) fn formats(&self, text: &str) -> Vec<FormatHit> {
        let mut hits = Vec::new();
        for c in self.currency.captures_iter(text) {
            let word = c.get(1).or_else(|| c.get(2)).map_or(String::new(), |m| m.as_str().to_lowercase());
            if let Some(code) = currency_code(&word) {
                hits.push(FormatHit {
                    key: "currency",
                    value: code.to_owned(),
                    span: c.get(0).expect("match").range(),
                });
            }
        }
        for c in self.date_pattern.captures_iter(text) {
            let value = c.get(1).expect("group").as_str().to_uppercase();
            hits.push(FormatHit { key: "date_format", value, span: c.get(0).expect("match").range() });
        }
        for m in self.date_iso.find_iter(text) {
            hits.push(FormatHit { key: "date_format", value: "YYYY-MM-DD".to_owned(), span: m.range() });
        }
        for c in self.unit.captures_iter(text) {
            let word = c.get(1).expect("group").as_str().to_lowercase();
            let unit = match word.as_str() {
                "thousands" | "milliers" | "miles" | "tausend" | "тысячах" => "thousands",
                "millions" | "millones" | "millionen" | "миллионах" => "millions",
                "billions" | "milliards" | "milliarden" | "миллиардах" => "billions",
                _ => "percent",
            };
            hits.push(FormatHit { key: "unit", value: unit.to_owned(), span: c.get(0).expect("match").range() });
        }
        for c in self.answer_language.captures_iter(text) {
            let word = c.get(1).expect("group").as_str().to_lowercase();
            let starts = |prefixes: &[&str]| prefixes.iter().any(|p| word.starts_with(p));
            let code = if starts(&["engl", "angl", "ingl"]) {
                "en"
            } else if starts(&["fren", "fran"]) {
                "fr"
            } else if starts(&["span", "espa"]) {
                "es"
            } else if starts(&["germ", "alle", "alem", "deut"]) {
                "de"
            } else {
                "ru"
            };
            hits.push(FormatHit {
                key: "answer_language",
                value: code.to_owned(),
                span: c.get(0).expect("match").range(),
            });
        }
        hits.sort_by_key(|h| h.span.start);
        hits
    }

    /// Every "X, not Y" / "excluding Y" distinction of `text`.
    pub(crate) fn distractors(&self, text: &str, tokens: &[Token<'_>], language: Option<&str>) -> Vec<DistractorHit> {
        let content = |t: &Token<'_>| {
            let word = t.lower();
            !is_stop(strip_clitic(&word), language) && !t.text.chars().all(|c| c.is_ascii_digit())
        };
        let adjacent = |a: &Token<'_>, b: &Token<'_>| text[a.end..b.start].chars().all(|c| c.is_whitespace());
        let mut hits = Vec::new();
        for marker in self.distractor.find_iter(text) {
            // After the marker: skip leading stop words, then up to 3 adjacent content words.
            let after: Vec<&Token<'_>> = tokens.iter().filter(|t| t.start >= marker.end()).collect();
            let mut not_this: Vec<&Token<'_>> = Vec::new();
            for token in after {
                if !content(token) {
                    if not_this.is_empty() {
                        continue;
                    }
                    break;
                }
                if let Some(last) = not_this.last()
                    && (!adjacent(last, token) || not_this.len() == 3)
                {
                    break;
                }
                not_this.push(token);
            }
            let (Some(first), Some(last)) = (not_this.first(), not_this.last()) else { continue };
            if !text[marker.end()..first.start].chars().all(|c| c.is_alphanumeric() || c.is_whitespace() || c == '\'') {
                continue;
            }
            // Before the marker: adjacent content words, through "of"/"for"
            // ("deductible for water damage"), 5 words at most.
            let mut wanted: Vec<&Token<'_>> = Vec::new();
            let before: Vec<&Token<'_>> = tokens.iter().rev().filter(|t| t.end <= marker.start()).collect();
            for (index, token) in before.iter().enumerate() {
                if wanted.len() == 5 || wanted.last().is_some_and(|next| !adjacent(token, next)) {
                    break;
                }
                let connector = CONNECTORS.contains(&token.lower().as_str())
                    && !wanted.is_empty()
                    && before.get(index + 1).is_some_and(|t| content(t) && adjacent(t, token));
                if !content(token) && !connector {
                    break;
                }
                wanted.push(token);
            }
            wanted.reverse();
            let join = |words: &[&Token<'_>]| words.iter().map(|t| t.lower()).collect::<Vec<_>>().join(" ");
            hits.push(DistractorHit {
                wanted: join(&wanted),
                not_this: join(&not_this),
                span: marker.start()..last.end,
            });
        }
        hits
    }
}

/// Prepositions that may join the words of the wanted phrase.
const CONNECTORS: &[&str] = &["of", "for", "de", "du", "des", "del", "für", "von"];

fn currency_code(word: &str) -> Option<&'static str> {
    let code = match word {
        "€" => "EUR",
        "$" => "USD",
        "£" => "GBP",
        w if w.starts_with("eur") || w == "евро" => "EUR",
        w if w.starts_with("cad") || w.starts_with("canadian") => "CAD",
        w if w.starts_with("usd") || w.starts_with("us") || w.contains("dollar") || w.contains("dólar") => "USD",
        w if w.contains("доллар") => "USD",
        w if w.starts_with("gbp") || w.starts_with("pound") || w.starts_with("livre") || w.starts_with("libra") => {
            "GBP"
        }
        "фунтах" => "GBP",
        w if w.starts_with("chf") || w.contains("franc") => "CHF",
        "jpy" | "yen" => "JPY",
        w if w.starts_with("rub") || w.starts_with("roub") || w.starts_with("рубл") => "RUB",
        _ => return None,
    };
    Some(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexicon::tokenize;

    fn check(question: &str, expect: &[(&str, &str)]) {
        let rules = ConstraintRules::new();
        let got: Vec<(&str, String)> = rules.formats(question).into_iter().map(|h| (h.key, h.value)).collect();
        let want: Vec<(&str, String)> = expect.iter().map(|(k, v)| (*k, (*v).to_owned())).collect();
        assert_eq!(got, want, "{question}");
    }

    #[test]
    fn formats() {
        check("What is the total in EUR?", &[("currency", "EUR")]);
        check("What is the total in euros?", &[("currency", "EUR")]);
        check("What is the total in dollars?", &[("currency", "USD")]);
        check("What is the total in USD?", &[("currency", "USD")]);
        check("Quel est le total en euros ?", &[("currency", "EUR")]);
        check("When was it signed, in YYYY-MM-DD?", &[("date_format", "YYYY-MM-DD")]);
        check("Give the date in ISO format", &[("date_format", "YYYY-MM-DD")]);
        check("What is revenue in thousands?", &[("unit", "thousands")]);
        check("Revenue in millions of euros", &[("currency", "EUR"), ("unit", "millions")]);
        check("Summarize it and answer in French", &[("answer_language", "fr")]);
        check("What does ISO 9408 say?", &[]);
        check("What is the total in the table?", &[]);
    }

    fn distinctions(question: &str) -> Vec<(String, String)> {
        let rules = ConstraintRules::new();
        rules
            .distractors(question, &tokenize(question), Some("en"))
            .into_iter()
            .map(|h| (h.wanted, h.not_this))
            .collect()
    }

    #[test]
    fn distractors() {
        let pair = |a: &str, b: &str| vec![(a.to_owned(), b.to_owned())];
        assert_eq!(distinctions("What is the limit, not the deductible?"), pair("limit", "deductible"));
        assert_eq!(distinctions("What is the limit but not the deductible?"), pair("limit", "deductible"));
        assert_eq!(distinctions("What is the total amount excluding taxes?"), pair("total amount", "taxes"));
        assert_eq!(
            distinctions("What is the net premium rather than the gross premium?"),
            pair("net premium", "gross premium")
        );
        assert_eq!(
            distinctions("What is the deductible for water damage, not the limit?"),
            pair("deductible for water damage", "limit")
        );
        assert!(distinctions("Is water damage not covered?").is_empty());
        assert!(distinctions("What is the total?").is_empty());
    }
}
