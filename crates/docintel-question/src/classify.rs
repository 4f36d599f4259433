//! Answer type, answer shape and the wording cues behind answer context
//! (summary, explanation, "what is on page N").

use docintel_schema::AnswerShape;
use regex::Regex;

use crate::lexicon::{Token, is_stop, strip_clitic, tokenize};
use crate::satellites::TypeCue;

#[rustfmt::skip]
const AMOUNT_NOUNS: &[&str] = &[
    "total", "totals", "amount", "amounts", "price", "prices", "cost", "costs", "premium", "premiums", "fee", "fees",
    "sum", "sums", "balance", "charge", "charges", "deductible", "deductibles", "subtotal", "tax", "vat", "rent",
    "salary", "revenue", "revenues", "montant", "montants", "prix", "coût", "coûts", "cout", "couts", "somme",
    "sommes", "prime", "primes", "frais", "tarif", "tarifs", "franchise", "loyer", "salaire", "tva", "solde",
    "importe", "importes", "precio", "precios", "coste", "costes", "costo", "costos", "suma", "prima", "primas",
    "tarifa", "tarifas", "cuota", "cuotas", "deducible", "franquicia", "saldo", "iva", "alquiler", "salario",
    "betrag", "beträge", "betrages", "preis", "preise", "kosten", "prämie", "prämien", "gebühr", "gebühren", "summe",
    "selbstbeteiligung", "miete", "gehalt", "steuer", "mwst", "сумма", "сумму", "суммы", "цена", "цену", "стоимость",
    "премия", "взнос", "плата", "платёж", "платеж", "итого", "налог", "ндс",
];
const AMOUNT_SUFFIXES: &[&str] = &["betrag", "summe", "preis", "kosten", "gebühr", "prämie"];

#[rustfmt::skip]
const DATE_NOUNS: &[&str] = &[
    "date", "dates", "deadline", "deadlines", "expiry", "expiration", "birthday", "échéance", "échéances", "fecha",
    "fechas", "plazo", "vencimiento", "datum", "frist", "termin", "fälligkeit", "stichtag", "дата", "дату", "даты",
    "срок",
];
const DATE_SUFFIXES: &[&str] = &["datum"];

/// The compiled classification regexes.
#[derive(Debug, Clone)]
pub(crate) struct ClassifyRules {
    polite: Regex,
    polite_verb: Regex,
    boolean_start: Regex,
    french_wh: Regex,
    french_inversion: Regex,
    russian_li: Regex,
    strong_date: Regex,
    strong_amount: Regex,
    count: Regex,
    listing_start: Regex,
    listing_any: Regex,
    aggregate: Regex,
    table: Regex,
    summary: Regex,
    explain: Regex,
    page_ask: Regex,
}

impl ClassifyRules {
    pub(crate) fn new() -> ClassifyRules {
        let compile = |source: &str| Regex::new(source).expect("classify regex compiles");
        ClassifyRules {
            polite: compile(
                r"(?i)^[¿¡]?\s*(?:(?:please|kindly)\s*,?\s*)?(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:tell\s+me|let\s+me\s+know|check)\s*|(?:pouvez-vous|peux-tu|pourriez-vous)\s+(?:me\s+)?(?:dire|indiquer)\s*|(?:puedes|puede|podr[ií]as?)\s+(?:decirme|indicarme)\s*|(?:k[öo]nnen|k[öo]nnten)\s+sie\s+(?:mir\s+)?sagen\s*,?\s*|kannst\s+du\s+(?:mir\s+)?sagen\s*,?\s*|(?:tell|show)\s+me\s+|i\s+(?:want|would\s+like|need)\s+to\s+know\s+)?",
            ),
            polite_verb: compile(
                r"(?i)^(?:can|could|would|will)\s+you\s+(?:please\s+)?(tell|list|give|show|find|summari[sz]e|explain|describe|provide|extract|enumerate|name|identify|state)\b",
            ),
            boolean_start: compile(
                r"(?i)^[¿¡]?\s*(?:is|are|was|were|does|do|did|can|could|has|have|had|will|would|should|shall|must|may|might|if|whether|est-ce|est-il|est-elle|y\s+a-t-il|peut-on|puis-je|si|es|est[aá]|est[aá]n|son|hay|existe|tiene|tienen|puede|pueden|incluye|cubre|ist|sind|war|gibt\s+es|hat|haben|kann|k[öo]nnen|muss|wird|werden|deckt|ob|есть\s+ли|является\s+ли)\b",
            ),
            french_wh: compile(
                r"(?i)^(?:quel|quelle|quels|quelles|quand|où|comment|combien|pourquoi|que|qu'|qui|lequel|laquelle|à\s+quel)",
            ),
            french_inversion: compile(r"(?i)\b\p{L}+-(?:t-)?(?:il|elle|on|ils|elles)\b"),
            russian_li: compile(r"(?i)\s+ли\b"),
            strong_date: compile(
                r"(?i)\b(?:when|what\s+date|which\s+date|what\s+day|by\s+when|until\s+when|quand|quelle\s+date|cu[aá]ndo|qu[eé]\s+fecha|wann|welchem\s+(?:tag|datum)|когда|какого\s+числа)\b",
            ),
            strong_amount: compile(
                r"(?i)\b(?:how\s+much|combien\s+(?:co[uû]te|vaut|dois|doit|faut|est|payer|d'euros|de\s+dollars)|cu[aá]nto|cu[aá]nta|wie\s+viel\b|wieviel\b|wie\s+hoch|сколько\s+стоит|какова\s+сумма|какая\s+сумма)",
            ),
            count: compile(
                r"(?i)\b(?:how\s+many|number\s+of\s+\p{L}+s\b|combien\s+(?:de|d')|cu[aá]nt[oa]s|wie\s+viele|сколько)",
            ),
            listing_start: compile(
                r"(?i)^[¿¡]?\s*(?:list|enumerate|name\s+(?:all|the|every|each)|what\s+are|what\s+were|which\s+are|which\s+were|quels\s+sont|quelles\s+sont|liste[rz]?|[ée]num[ée]r\p{L}*|cu[aá]les\s+son|enumer[ae]|lista|welche\s+\p{L}+\s+sind|welche\s+sind|nenne\s+alle|перечисли\p{L}*|какие)\b|(?i)^which\s+\p{L}+(?:\s+\p{L}+)?\s+(?:are|were)\b",
            ),
            listing_any: compile(
                r"(?i)\b(?:all\s+(?:the|of\s+the)|every|each\s+of|list\s+of|tous\s+les|toutes\s+les|liste\s+des|todos\s+los|todas\s+las|lista\s+de|alle|все|всех)\b",
            ),
            aggregate: compile(r"(?i)\b(?:total|sum|somme|suma|summe|итого|сумма)\b"),
            table: compile(
                r"(?i)\b(?:tabulate|as\s+a\s+table|in\s+(?:a\s+)?table(?:\s+form)?|in\s+tabular\s+form|tabular|table\s+of\s+(?:\p{L}+)|(?:make|create|build|give|produce|draw|generate)\s+(?:me\s+)?a\s+table|sous\s+forme\s+de\s+tableau|en\s+tableau|en\s+(?:forma\s+de\s+)?tabla|als\s+tabelle|in\s+einer\s+tabelle|в\s+виде\s+таблицы)\b",
            ),
            summary: compile(
                r"(?i)\b(?:summari[sz]e|summary|overview|sum\s+up|r[ée]sum[ée]r?|r[ée]sumez|resumen|resume|resumir|zusammenfassung|zusammenfassen|fasse|кратко|резюм\p{L}*|обзор)\b",
            ),
            explain: compile(
                r"(?i)\b(?:why|explain|describe|how\s+(?:does|do|did|is|are|was|were|can|should)|what\s+happens|pourquoi|expliqu\p{L}*|d[ée]cri\p{L}*|comment|por\s*qu[eé]|explica\p{L}*|describ\p{L}*|warum|wieso|weshalb|erkl[äa]r\p{L}*|beschreib\p{L}*|почему|объясн\p{L}*|опиш\p{L}*|опис\p{L}*)\b",
            ),
            page_ask: compile(
                r"(?i)\bwhat(?:'s|\s+is|\s+appears|\s+is\s+written)?\s+(?:on|in)\s+(?:the\s+)?(?:pages?|p\.)|\bwhat\s+(?:does|do)\s+(?:the\s+)?pages?\s*\d+|\b(?:content|contents)\s+of\s+(?:the\s+)?pages?|\bdescribe\s+(?:the\s+)?pages?|\bque\s+(?:dit|contient|disent|contiennent)\s+(?:la|les)\s+pages?|\bcontenu\s+(?:de\s+la|des)\s+pages?|\bqu[eé]\s+(?:dice|contiene|dicen|contienen)\s+(?:la|las)\s+p[aá]ginas?|\bcontenido\s+de\s+la\s+p[aá]gina|\bwas\s+steht\s+auf\s+(?:seite|s\.)|\binhalt\s+(?:von|der)\s+seite|\bчто\s+(?:на|написано\s+на)\s+стр",
            ),
        }
    }

    /// The question without a polite prefix ("Can you tell me", "Please").
    pub(crate) fn strip_polite<'a>(&self, text: &'a str) -> &'a str {
        let end = self.polite.find(text).map_or(0, |m| m.end());
        if end == 0
            && let Some(c) = self.polite_verb.captures(text)
        {
            return &text[c.get(1).expect("group").start()..];
        }
        text[end..].trim_start()
    }

    /// Whether the question asks for a yes/no answer.
    pub(crate) fn is_boolean(&self, text: &str, language: Option<&str>) -> bool {
        let core = self.strip_polite(text);
        if self.boolean_start.is_match(core) {
            let first = tokenize(core).first().map(|t| t.lower()).unwrap_or_default();
            // German "Was ist ...?" is "what is", Spanish "Son ..." is rare as a question opener.
            return !(language == Some("de") && first == "was");
        }
        if language == Some("fr") && !self.french_wh.is_match(core) && self.french_inversion.is_match(core) {
            return true;
        }
        language == Some("ru") && self.russian_li.is_match(core)
    }

    /// The answer type from the wording: `boolean`; else the first answer
    /// type of the satellite table whose question cue matches (`email`,
    /// `iban`, `address` in the built-in table); else `amount`, `date`,
    /// `number` or `text` by the built-in rules.
    pub(crate) fn answer_type<'a>(&self, text: &str, language: Option<&str>, cues: &'a [TypeCue]) -> &'a str {
        if self.is_boolean(text, language) {
            return "boolean";
        }
        if let Some(cue) = cues.iter().find(|cue| cue.regex.is_match(text)) {
            return &cue.name;
        }
        let strong = [
            (self.strong_amount.find(text), "amount"),
            (self.strong_date.find(text), "date"),
            (self.count.find(text), "number"),
        ];
        if let Some((_, kind)) =
            strong.iter().filter_map(|(m, kind)| m.map(|m| (m.start(), *kind))).min_by_key(|(start, _)| *start)
        {
            return kind;
        }
        if self.explain.is_match(text) {
            return "text";
        }
        let tokens = tokenize(text);
        if let Some(kind) = noun_phrase_type(&tokens, text, language) {
            return kind;
        }
        "text"
    }

    /// The answer shape: table, listing or single.
    pub(crate) fn answer_shape(&self, text: &str, answer_type: &str) -> AnswerShape {
        if answer_type == "boolean" || answer_type == "number" {
            return AnswerShape::Single;
        }
        let core = self.strip_polite(text);
        if self.table_phrase(core).is_some() {
            return AnswerShape::Table;
        }
        if self.listing_start.is_match(core) || (self.listing_any.is_match(core) && !self.aggregate.is_match(core)) {
            return AnswerShape::Listing;
        }
        AnswerShape::Single
    }

    /// The phrase asking for a table answer ("as a table", "tabulate"), if
    /// any; "table of contents" is not one.
    pub(crate) fn table_phrase(&self, text: &str) -> Option<std::ops::Range<usize>> {
        self.table.find_iter(text).map(|m| m.range()).find(|range| {
            let phrase = text[range.clone()].to_lowercase();
            !(phrase.starts_with("table of") && phrase.ends_with("contents"))
        })
    }

    /// Whether the question asks for a summary.
    pub(crate) fn needs_summary(&self, text: &str) -> bool {
        self.summary.is_match(text)
    }

    /// Whether the question asks for an explanation (why, explain, describe).
    pub(crate) fn asks_explanation(&self, text: &str) -> bool {
        self.explain.is_match(text)
    }

    /// Whether the question asks what is on a page.
    pub(crate) fn asks_page_content(&self, text: &str) -> bool {
        self.page_ask.is_match(text)
    }
}

fn noun_type(word: &str) -> Option<&'static str> {
    let long_suffix = |suffixes: &[&str]| suffixes.iter().any(|s| word.len() > s.len() + 2 && word.ends_with(s));
    if AMOUNT_NOUNS.contains(&word) || long_suffix(AMOUNT_SUFFIXES) {
        Some("amount")
    } else if DATE_NOUNS.contains(&word) || long_suffix(DATE_SUFFIXES) {
        Some("date")
    } else {
        None
    }
}

/// The type of the first typed noun phrase: from the first amount or date noun,
/// follow adjacent content words and keep the last typed noun ("premium due
/// date" is a date, "total amount" an amount, "date of the payment" a date).
fn noun_phrase_type(tokens: &[Token<'_>], text: &str, language: Option<&str>) -> Option<&'static str> {
    let words: Vec<String> = tokens.iter().map(|t| strip_clitic(&t.lower()).to_owned()).collect();
    let first = words.iter().position(|w| noun_type(w).is_some())?;
    let mut kind = noun_type(&words[first]);
    for index in first + 1..tokens.len() {
        let gap = &text[tokens[index - 1].end..tokens[index].start];
        if !gap.chars().all(char::is_whitespace) || is_stop(&words[index], language) {
            break;
        }
        if let Some(k) = noun_type(&words[index]) {
            kind = Some(k);
        }
    }
    kind
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexicon::detect_language;

    static RULES: std::sync::LazyLock<ClassifyRules> = std::sync::LazyLock::new(ClassifyRules::new);

    fn check(question: &str, expect: (AnswerShape, &str)) {
        let rules = &*RULES;
        let language = detect_language(question, &tokenize(question));
        let satellites = crate::satellites::Satellites::builtin();
        let answer_type = rules.answer_type(question, language, satellites.cues());
        let shape = rules.answer_shape(question, answer_type);
        assert_eq!((shape, answer_type), expect, "{question}");
    }

    use AnswerShape::{Listing, Single, Table};

    #[test]
    fn amounts() {
        check("What is the total amount?", (Single, "amount"));
        check("How much is the annual premium?", (Single, "amount"));
        check("What is the price?", (Single, "amount"));
        check("List the annual premiums", (Listing, "amount"));
        check("Quel est le montant total ?", (Single, "amount"));
        check("¿Cuál es el importe total?", (Single, "amount"));
        check("Wie hoch ist der Betrag?", (Single, "amount"));
        check("Was ist der Gesamtbetrag?", (Single, "amount"));
        check("Какова сумма счёта?", (Single, "amount"));
    }

    #[test]
    fn dates() {
        check("When was the invoice issued?", (Single, "date"));
        check("What is the invoice date?", (Single, "date"));
        check("What is the date of the invoice?", (Single, "date"));
        check("What is the date of the total payment?", (Single, "date"));
        check("What is the premium due date?", (Single, "date"));
        check("What is the deadline?", (Single, "date"));
        check("Quand la facture a-t-elle été émise ?", (Single, "date"));
        check("¿Cuál es la fecha de la factura?", (Single, "date"));
        check("Was ist das Rechnungsdatum?", (Single, "date"));
        check("Когда выставлен счёт?", (Single, "date"));
    }

    #[test]
    fn booleans() {
        check("Is water damage covered?", (Single, "boolean"));
        check("Does the policy cover theft?", (Single, "boolean"));
        check("Are all the premiums paid?", (Single, "boolean"));
        check("Can you tell me whether floods are covered?", (Single, "boolean"));
        check("Le contrat couvre-t-il le vol ?", (Single, "boolean"));
        check("Est-ce que le vol est couvert ?", (Single, "boolean"));
        check("¿Está cubierto el robo?", (Single, "boolean"));
        check("Ist Wasserschaden versichert?", (Single, "boolean"));
        check("Покрывается ли ущерб от воды?", (Single, "boolean"));
    }

    #[test]
    fn other_types() {
        check("What is the contact email?", (Single, "email"));
        check("What is the IBAN of the supplier?", (Single, "iban"));
        check("What is the billing address?", (Single, "address"));
        check("How many pages does the report have?", (Single, "number"));
        check("What is the invoice number?", (Single, "text"));
        check("Who is the insurer?", (Single, "text"));
        check("How is the premium calculated?", (Single, "text"));
        check("Why is the premium so high?", (Single, "text"));
        check("Can you list the exclusions?", (Listing, "text"));
    }

    #[test]
    fn shapes() {
        check("What are the exclusions and limits?", (Listing, "text"));
        check("Which risks are excluded?", (Listing, "text"));
        check("Show all the clauses about theft", (Listing, "text"));
        check("Tabulate the premiums by year", (Table, "amount"));
        check("Show the premiums as a table", (Table, "amount"));
        check("What is on the table of contents?", (Single, "text"));
        check("What is the total of all the invoices?", (Single, "amount"));
        check("Quelles sont les exclusions ?", (Listing, "text"));
        check("¿Cuáles son las exclusiones?", (Listing, "text"));
    }

    #[test]
    fn context_cues() {
        let rules = ClassifyRules::new();
        assert!(rules.needs_summary("Summarize the policy"));
        assert!(rules.needs_summary("Donne-moi un résumé"));
        assert!(rules.needs_summary("Gib mir eine Zusammenfassung"));
        assert!(!rules.needs_summary("What is the total?"));
        assert!(rules.asks_explanation("Why was the claim rejected?"));
        assert!(!rules.asks_explanation("How much is it?"));
        assert!(rules.asks_page_content("What is on page 3?"));
        assert!(rules.asks_page_content("Que dit la page 3 ?"));
        assert!(!rules.asks_page_content("What is the total on page 3?"));
    }
}
