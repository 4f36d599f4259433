//! Answer type, answer shape and the wording cues behind answer context
//! (summary, explanation, "what is on page N").

use docintel_schema::AnswerShape;
use regex::Regex;

use crate::lexicon::{Token, is_stop, strip_clitic, tokenize};

mod asked;

pub(crate) use asked::asked_phrase;
use asked::{LEAD, PRESENT_VERBS, WH, YEAR};

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
    "премия", "взнос", "плата", "платёж", "платеж", "итого", "налог", "ндс", "bedrag", "bedragen", "totaal",
    "prijs", "prijzen", "btw", "korting", "huur", "salaris", "belasting", "premie", "tarief", "tarieven",
];
const AMOUNT_SUFFIXES: &[&str] = &["betrag", "summe", "preis", "kosten", "gebühr", "prämie", "bedrag", "prijs"];

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
                r"(?i)^(?:\S+\s+){0,3}(?:quel|quelle|quels|quelles|quand|où|comment|combien|pourquoi|lequel|laquelle|lesquels|lesquelles)\b|^(?:que|qu'|qui)\b",
            ),
            french_inversion: compile(r"(?i)\b\p{L}+-(?:t-)?(?:il|elle|on|ils|elles)\b"),
            russian_li: compile(r"(?i)\s+ли\b"),
            strong_date: compile(
                r"(?i)^\W*(?:(?:since|until|by|from|à\s+partir\s+de|depuis|jusqu'à|bis|seit|ab|desde|hasta)\s+)?(?:when|quand|cu[aá]ndo|wann|когда)\b|\b(?:what\s+date|which\s+date|what\s+day|quelle\s+date|qu[eé]\s+fecha|welchem\s+(?:tag|datum)|какого\s+числа)\b",
            ),
            strong_amount: compile(
                r"(?i)\b(?:how\s+much|combien\s+(?:co[uû]te|vaut|dois|doit|faut|est|payer|d'euros|de\s+dollars)|cu[aá]nto|cu[aá]nta|wie\s+viel\b|wieviel\b|wie\s+hoch|сколько\s+стоит|какова\s+сумма|какая\s+сумма)",
            ),
            listing_start: compile(
                r"(?i)^[¿¡]?\s*(?:list|enumerate|name\s+(?:all|the|every|each)|what\s+are|what\s+were|which\s+are|which\s+were|who\s+are|who\s+were|qui\s+sont|qui[eé]nes\s+son|wer\s+sind|quels\s+sont|quelles\s+sont|liste[rz]?|[ée]num[ée]r\p{L}*|cu[aá]les\s+son|enumer[ae]|lista|welche\s+\p{L}+\s+sind|welche\s+sind|nenne\s+alle|перечисли\p{L}*|какие)\b|(?i)^which\s+\p{L}+(?:\s+\p{L}+)?\s+(?:are|were)\b",
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
            let tokens = tokenize(core);
            let first = tokens.first().map(|t| t.lower()).unwrap_or_default();
            // "If X, what is Y?" asks Y: a condition, then a wh-question.
            if matches!(first.as_str(), "if" | "si" | "whether" | "ob")
                && tokens.iter().skip(1).any(|t| WH.contains(&t.lower().as_str()) || t.lower() == "how")
            {
                return false;
            }
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
    /// `percentage`, `count`...); else the type the head noun of the asked
    /// phrase makes (`what dropout RATE` → `percentage`, `which UNIVERSITY`
    /// → `organisation`, see [`asked_phrase`]); else a person for `who`;
    /// else `amount` or `date` by the built-in rules; else `text`.
    pub(crate) fn answer_type<'a>(
        &self,
        text: &str,
        language: Option<&str>,
        satellites: &'a crate::satellites::Satellites,
    ) -> &'a str {
        let types = |name: &str| satellites.answer_type(name).map(|t| t.name.as_str());
        if self.is_boolean(text, language) {
            return types("boolean").unwrap_or("text");
        }
        if let Some(cue) = satellites.cues().iter().find(|cue| cue.regex.is_match(text)) {
            return &cue.name;
        }
        let tokens = tokenize(text);
        let asked = asked_phrase(&tokens, text);
        // The head is the phrase's last noun; the one before it may carry the
        // type when the last says nothing ("phone number"), words further
        // left are modifiers ("year end FY2018 net PPNE" is no year).
        if let Some(kind) = asked.as_ref().and_then(|a| head_noun_type(&a.words, satellites, language)) {
            return kind;
        }
        if asked.as_ref().is_some_and(|a| a.who)
            && let Some(kind) = types("person")
        {
            return kind;
        }
        let strong = [(self.strong_amount.find(text), "amount"), (self.strong_date.find(text), "date")];
        if let Some(kind) = strong
            .iter()
            .filter_map(|(m, kind)| m.map(|m| (m.start(), *kind)))
            .min_by_key(|(start, _)| *start)
            .and_then(|(_, kind)| types(kind))
        {
            return kind;
        }
        if self.explain.is_match(text) {
            return types("text").unwrap_or("text");
        }
        if let Some(kind) = noun_phrase_type(&tokens, text, language).and_then(types) {
            return kind;
        }
        types("text").unwrap_or("text")
    }

    /// The answer shape: table, listing or single.
    pub(crate) fn answer_shape(&self, text: &str, answer_type: &str) -> AnswerShape {
        if matches!(answer_type, "boolean" | "number" | "count" | "percentage" | "year" | "duration") {
            return AnswerShape::Single;
        }
        let core = self.strip_polite(text);
        if self.table_phrase(core).is_some() {
            return AnswerShape::Table;
        }
        // "What were Corning's net sales in 2020?" asks one figure: an amount
        // of one named year is a single value, whatever the plural.
        let one_year_amount = answer_type == "amount" && YEAR.is_match(core) && !self.listing_any.is_match(core);
        if !one_year_amount
            && (self.listing_start.is_match(core)
                || (self.listing_any.is_match(core) && !self.aggregate.is_match(core)))
        {
            return AnswerShape::Listing;
        }
        if !matches!(answer_type, "amount" | "date") && asks_plural(core) {
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

/// Whether `word` reads as a plural in -s: longer than three letters, and
/// not a word whose final s is no plural mark (address, status, basis).
pub(crate) fn plural_in_s(word: &str) -> bool {
    word.chars().count() > 3 && word.ends_with('s') && !["ss", "us", "is"].iter().any(|end| word.ends_with(end))
}

/// Whether a question word determines a plural noun: "Which reportable
/// segments does Nike use?", "On page 17, which e-mail addresses are
/// given?", "Which benefits apply?", "Which five vendors...", "Quels modes de
/// règlement...". Each asks for every such thing, a list.
///
/// English marks the plural on the noun only, and a verb in -s looks the
/// same ("what discount APPLIES", "what HAPPENS when"), so a word in -s
/// counts as a plural noun when it follows the question word and a verb or
/// a noun follows it ("which plans OFFER", "what items DOES"), or when it
/// closes a longer noun group before an auxiliary ("which reportable
/// segments DOES"). Words whose final s is no plural mark (address,
/// status, basis) are singular.
fn asks_plural(text: &str) -> bool {
    let tokens = tokenize(text);
    let words: Vec<String> = tokens.iter().map(|t| strip_clitic(&t.lower()).to_owned()).collect();
    let Some(at) = words.iter().position(|w| matches!(w.as_str(), "which" | "what" | "quels" | "quelles" | "cuáles"))
    else {
        return false;
    };
    let Some(next) = words.get(at + 1) else { return false };
    if LEAD.contains(&next.as_str()) {
        return false;
    }
    if matches!(words[at].as_str(), "quels" | "quelles" | "cuáles") {
        // Plural by their own form.
        return true;
    }
    // "Which five vendors": a number of them.
    const NUMBERS: &[&str] = &["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
    if NUMBERS.contains(&next.as_str()) {
        return true;
    }
    const AUXILIARIES: &[&str] = &[
        "do", "does", "did", "is", "are", "was", "were", "has", "have", "had", "can", "could", "should", "must",
        "will", "would", "may",
    ];
    const NOT_AFTER_A_NOUN: &[&str] = &[
        "the", "a", "an", "this", "that", "these", "those", "to", "of", "in", "on", "at", "for", "from", "with", "by",
        "when", "if", "whether", "and", "or", "up", "out",
    ];
    let plural = |w: &str| plural_in_s(w) && w.chars().all(char::is_alphabetic);
    for (offset, word) in words.iter().enumerate().skip(at + 1).take(4) {
        if !word.chars().all(|c| c.is_alphabetic() || c == '-') || LEAD.contains(&word.as_str()) {
            return false;
        }
        if PRESENT_VERBS.contains(&word.as_str()) {
            return false;
        }
        if !plural(word) {
            continue;
        }
        let Some(after) = words.get(offset + 1) else { return false };
        return if offset == at + 1 {
            after.chars().all(char::is_alphabetic) && !NOT_AFTER_A_NOUN.contains(&after.as_str())
        } else {
            AUXILIARIES.contains(&after.as_str())
        };
    }
    false
}

/// Head nouns that only say "the value of" what precedes them ("phone
/// NUMBER", "account CODE", "customer DETAILS"): the word before carries the
/// type.
const VALUE_HEADS: &[&str] = &[
    "number",
    "numbers",
    "no",
    "nr",
    "numéro",
    "nummer",
    "número",
    "code",
    "codes",
    "value",
    "values",
    "details",
    "detail",
    "information",
    "info",
    "figure",
    "figures",
    "name",
    "names",
    "data",
];

/// The type the asked phrase's head noun makes: its last word, or the one
/// before a value head ("phone number"); in French and Spanish, whose noun
/// phrases put the head first ("prime annuelle", "plafond RC Pro"), its
/// first word.
fn head_noun_type<'a>(
    words: &[String],
    satellites: &'a crate::satellites::Satellites,
    language: Option<&str>,
) -> Option<&'a str> {
    if matches!(language, Some("fr" | "es" | "it" | "pt")) {
        return words.iter().take(2).find_map(|w| satellites.head_type(w));
    }
    // "earnings per share": the head is before the rate's unit.
    let words = words.iter().position(|w| w == "per").map_or(words, |at| &words[..at]);
    let last = words.last()?;
    // "What time does it open" asks a clock time; a modified time ("the
    // maximum standby TIME", "the response TIME") asks a length of time.
    if words.len() == 1 && last == "time" {
        return None;
    }
    if let Some(kind) = satellites.head_type(last) {
        return Some(kind);
    }
    if VALUE_HEADS.contains(&last.as_str()) && words.len() >= 2 {
        return satellites.head_type(&words[words.len() - 2]);
    }
    None
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
        let answer_type = rules.answer_type(question, language, &satellites);
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
        check("How many pages does the report have?", (Single, "count"));
        check("What is the invoice number?", (Single, "identifier"));
        check("Who is the insurer?", (Single, "organisation"));
        check("How is the premium calculated?", (Single, "text"));
        check("Why is the premium so high?", (Single, "text"));
        check("Can you list the exclusions?", (Listing, "text"));
    }

    #[test]
    fn head_nouns_and_question_words() {
        check("What dropout rate was used for the base model?", (Single, "percentage"));
        check("How many attention heads does the base model use?", (Single, "count"));
        check("Which university did the candidate attend?", (Single, "organisation"));
        check("What is the name of Nike's chief executive officer?", (Single, "person"));
        check("Who was the chief financial officer in 2019?", (Single, "person"));
        check("Who signed the agreement?", (Single, "person"));
        check("What is the booking ID?", (Single, "identifier"));
        check("What is the grace period for premium payment?", (Single, "duration"));
        check("How long is the waiting period?", (Single, "duration"));
        check("In which city is the auditor located?", (Single, "location"));
        check("Where is the company headquartered?", (Single, "location"));
        check("Which state's law governs this agreement?", (Single, "location"));
        check("What is the title of this agreement?", (Single, "title"));
        check("What is the name of this contract?", (Single, "title"));
        check("What is the title of the paper?", (Single, "title"));
        check("What is the name of the company?", (Single, "organisation"));
        check("Who are the parties to this agreement?", (Listing, "organisation"));
        check("Who is the policyholder?", (Single, "person"));
        check("What BLEU score does the model reach?", (Single, "number"));
        check("What was Nike's net income for fiscal 2014?", (Single, "amount"));
        check("In what year was the company founded?", (Single, "year"));
        check("What percentage of revenue came from services?", (Single, "percentage"));
        check("What is the phone number of the helpline?", (Single, "phone"));
        check("Quel est le taux de rachat ?", (Single, "percentage"));
        check("Quelle est la durée du contrat ?", (Single, "duration"));
        check("Combien de jours dure la franchise ?", (Single, "count"));
        check("Dans quel délai faut-il déclarer un dégât des eaux ?", (Single, "duration"));
        check("À partir de quel taux d'invalidité est-on reconnu en invalidité totale ?", (Single, "percentage"));
        check("If the insured opts for co-payment, what discount applies?", (Single, "percentage"));
        check("What diluted earnings per share were reported?", (Single, "amount"));
        check("What is the year end FY2018 net PPNE for 3M?", (Single, "text"));
        check("Quelle franchise standard s'applique en cas de vol ?", (Single, "amount"));
        check("What is the FY2019 fixed asset turnover ratio?", (Single, "percentage"));
        check("Which temperature gives ChatGPT the highest alignment score?", (Single, "number"));
        check("What will happen when you press and hold the down button?", (Single, "text"));
        check("How much written notice must the policyholder give?", (Single, "duration"));
        // A modified time is a length of time; a bare one a clock time.
        check("What is the average response time of the help desk?", (Single, "duration"));
        check("At what time does the office open?", (Single, "text"));
        // The head noun before a verb that a preposition follows.
        check("What discount applies to a family of four?", (Single, "percentage"));
        check("Which NIST publication defines the key sizes?", (Single, "identifier"));
        check("What ISIN is allotted to the company's shares?", (Single, "identifier"));
        check("Which degree does the candidate hold?", (Single, "degree"));
        // A person's role: "in what capacity", a person's title (a
        // document's title stays a title).
        check("In what capacity?", (Single, "role"));
        check("What is the signer's title?", (Single, "role"));
        check("What was his title?", (Single, "role"));
        check("What is the title of this agreement?", (Single, "title"));
        check("What is the seating capacity of the hall?", (Single, "number"));
        // An age is a number, as "how old" is.
        check("What is the maximum entry age for the base policy?", (Single, "number"));
        // A number to call is a phone number.
        check("What number can a customer call for roadside help?", (Single, "phone"));
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
        check("What were Corning's net sales in 2020?", (Single, "amount"));
        check("Quelles sont les exclusions ?", (Listing, "text"));
        // A question word before a plural noun asks for all of them.
        check("Which reportable segments does the company use?", (Listing, "text"));
        check("On page 17, which e-mail addresses are given for the claims desk?", (Listing, "email"));
        check("Which five vendors supplied most of the merchandise?", (Listing, "organisation"));
        check("Quels modes de règlement sont acceptés ?", (Listing, "text"));
        check("Which firm audits the company?", (Single, "organisation"));
        check("What is the consultant's address for notices?", (Single, "address"));
        check("What kinds of charts can be created?", (Single, "text"));
        check("If the insured opts for co-payment, what discount applies?", (Single, "percentage"));
        check("What happens when the policy lapses?", (Single, "text"));
        check("Which benefits apply?", (Listing, "text"));
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
