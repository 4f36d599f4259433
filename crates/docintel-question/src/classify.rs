//! Answer type, answer shape and the wording cues behind answer context
//! (summary, explanation, "what is on page N").

use docintel_schema::AnswerShape;
use regex::Regex;

use crate::lexicon::{Token, is_stop, strip_clitic, tokenize};

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

/// The noun phrase a question asks for, and whether it asks "who".
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AskedPhrase {
    /// Its words, lower-cased, in order ("dropout rate", "chief executive
    /// officer"); a possessive owner ("Nike's") is not part of it.
    pub(crate) words: Vec<String>,
    /// The question asks "who" / "whom" (a person, unless the phrase names
    /// an organisation: "who is the insurer").
    pub(crate) who: bool,
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
    let plural = |w: &str| {
        w.chars().count() > 3
            && w.ends_with('s')
            && !["ss", "us", "is"].iter().any(|end| w.ends_with(end))
            && w.chars().all(char::is_alphabetic)
    };
    for (offset, word) in words.iter().enumerate().skip(at + 1).take(4) {
        if !word.chars().all(|c| c.is_alphabetic() || c == '-') || LEAD.contains(&word.as_str()) {
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
    let last = words.last()?;
    if let Some(kind) = satellites.head_type(last) {
        return Some(kind);
    }
    if VALUE_HEADS.contains(&last.as_str()) && words.len() >= 2 {
        return satellites.head_type(&words[words.len() - 2]);
    }
    None
}

/// Question words that open the asked phrase.
const WH: &[&str] = &[
    "what", "which", "who", "whom", "whose", "quel", "quelle", "quels", "quelles", "lequel", "laquelle", "qui",
    "welche", "welcher", "welches", "welchen", "welchem", "wer", "wen", "wat", "welk", "welke", "qué", "que", "cuál",
    "cuáles", "cual", "quién", "quiénes", "hoeveel",
];
/// Imperatives that open the asked phrase ("Name the auditor").
const ASK_VERBS: &[&str] = &["name", "list", "give", "state", "identify", "provide", "indicate", "nenne", "indiquez"];
/// Words skipped before the phrase: copulas and determiners.
const LEAD: &[&str] = &[
    "is", "are", "was", "were", "s", "the", "a", "an", "est", "sont", "était", "le", "la", "les", "l", "un", "une",
    "ist", "sind", "war", "der", "die", "das", "den", "dem", "het", "een", "zijn", "es", "son", "el", "los", "las",
    "de", "des", "du", "many", "much", "me", "us",
];
/// A year ("2020", "FY2021").
static YEAR: std::sync::LazyLock<Regex> =
    std::sync::LazyLock::new(|| Regex::new(r"(?i)\b(?:fy\s*)?(?:19|20)\d\d\b").expect("static pattern compiles"));

/// Adjectives after "how" that ask a measure of the noun phrase that
/// follows ("how LONG is the grace period", "how LARGE was the vocabulary").
const HOW_MEASURES: &[&str] = &[
    "long",
    "large",
    "big",
    "old",
    "far",
    "often",
    "soon",
    "high",
    "tall",
    "wide",
    "deep",
    "heavy",
    "fast",
    "early",
    "late",
    "frequently",
    "small",
    "low",
];
/// What an inverted question asks the meaning of ("what does X MEAN",
/// "what does X STAND for").
const MEANING_VERBS: &[&str] = &["mean", "stand", "refer", "signify", "indicate", "denote", "represent"];
/// Nouns that say only "the value of": the phrase continues into their
/// complement ("the name of the chief executive officer").
const GENERIC_HEADS: &[&str] = &["name", "names", "nom", "noms", "nombre", "naam", "title", "identity", "identité"];
/// Heads that name a measure of their complement, not a thing of their own:
/// "what PERCENTAGE of the workforce", "the NUMBER of employees", "quelle
/// POURCENTAGE du chiffre d'affaires". The answer type reads them; the focus is the
/// complement, the words a passage prints next to the value.
#[rustfmt::skip]
const MEASURE_HEADS: &[&str] = &[
    "percentage", "percent", "share", "proportion", "portion", "fraction", "number", "amount", "pourcentage",
    "nombre", "montant", "anteil", "prozentsatz", "anzahl", "betrag", "aandeel", "aantal", "bedrag", "porcentaje",
    "cantidad", "número",
];
/// Words that qualify a measure without naming another thing: "the TOTAL
/// number of", "the MAXIMUM amount of".
#[rustfmt::skip]
const MEASURE_QUALIFIERS: &[&str] = &[
    "total", "maximum", "minimum", "max", "min", "average", "mean", "overall", "approximate", "exact", "combined",
    "estimated", "highest", "lowest", "largest", "smallest", "greatest", "aggregate", "cumulative",
];

/// Whether `phrase` is a measure head after nothing but its qualifiers ("the
/// total number", not "the order number").
fn measure_of(phrase: &[String]) -> bool {
    phrase.last().is_some_and(|head| MEASURE_HEADS.contains(&head.as_str()))
        && phrase[..phrase.len() - 1].iter().all(|w| MEASURE_QUALIFIERS.contains(&w.as_str()))
}

/// English verbs whose past tense does not end in -ed.
const IRREGULAR_PAST: &[&str] = &[
    "came", "went", "made", "took", "gave", "got", "grew", "fell", "rose", "led", "left", "spent", "sold", "bought",
    "brought", "kept", "won", "lost", "began", "became", "drove", "paid", "held", "saw", "told", "said", "ran", "met",
    "wrote", "chose", "built", "heard", "sent", "oversaw",
];

/// Words that end the phrase: auxiliaries, prepositions, conjunctions.
#[rustfmt::skip]
const PHRASE_END: &[&str] = &[
    "is", "are", "was", "were", "be", "been", "do", "does", "did", "has", "have", "had", "can", "could", "will",
    "would", "shall", "should", "may", "might", "must", "of", "for", "in", "on", "at", "by", "to", "from", "with",
    "under", "between", "during", "as", "than", "and", "or", "that", "which", "who", "whom", "when", "where", "if",
    "est", "sont", "a", "ont", "de", "du", "des", "pour", "dans", "sur", "à", "au", "aux", "par", "en", "et", "ou",
    "ist", "sind", "hat", "von", "für", "im", "mit", "und", "oder", "van", "voor", "op", "bij", "en", "es", "son",
    "para", "por", "con", "y", "del", "did", "does", "doe", "heeft", "wird", "werden", "per", "faut", "doit",
    "peut", "doivent", "after", "before", "until", "since", "within", "into", "over", "about", "through", "upon",
    "back", "ago", "après", "avant", "nach", "vor", "na", "voor", "according", "including", "excluding",
    "regarding", "concerning",
];

/// The phrase a question asks for: after the question word ("what DROPOUT
/// RATE was used", "which UNIVERSITY did", "how many ATTENTION HEADS") or an
/// imperative ("name the AUDITOR"), past copulas and determiners, up to the
/// first auxiliary or preposition; a possessive owner is dropped ("Nike's
/// chief executive officer") unless the question word asks for it ("which
/// STATE's law"); a generic head continues into its complement ("the name
/// of the chief executive officer"). At most six words.
pub(crate) fn asked_phrase(tokens: &[Token<'_>], text: &str) -> Option<AskedPhrase> {
    let words: Vec<String> = tokens.iter().map(|t| strip_clitic(&t.lower()).to_owned()).collect();
    let start = words
        .iter()
        .position(|w| WH.contains(&w.as_str()) || w == "how")
        .or_else(|| words.first().filter(|w| ASK_VERBS.contains(&w.as_str())).map(|_| 0))?;
    let who = matches!(words[start].as_str(), "who" | "whom" | "qui" | "wer" | "wen" | "quién" | "quiénes");
    // "How long is the free look period?" asks a measure of the noun phrase
    // after the copula; "How is the premium calculated?" asks a manner, not
    // a noun phrase.
    let mut start = start;
    if words[start] == "how" && !words.get(start + 1).is_some_and(|w| w == "many" || w == "much") {
        if !words.get(start + 1).is_some_and(|w| HOW_MEASURES.contains(&w.as_str())) {
            return None;
        }
        // "How old was he?" asks an age, the word a document prints by it
        // (an "Age" column, "age 56"); who is aged is a keyword, not the focus.
        if words[start + 1] == "old" {
            return Some(AskedPhrase { words: vec!["age".to_owned()], who });
        }
        start += 1;
    }
    // "Nike's", and the plural "General Mills'" (not a French clitic: the
    // "s" of "s'applique").
    let possessive = |i: usize| {
        let s_next = words.get(i + 1).is_some_and(|w| w == "s")
            && text[tokens[i].end..tokens[i + 1].start].contains(['\'', '’']);
        let plural = words[i].ends_with('s')
            && words[i].chars().count() > 2
            && text[tokens[i].end..].starts_with(['\'', '’'])
            && !s_next;
        s_next || plural
    };
    // A French clitic before its verb ends the phrase: "quelle franchise
    // s'applique", "qu'", "n'".
    let clitic_verb = |i: usize| {
        matches!(words[i].as_str(), "s" | "n" | "qu" | "c" | "se" | "ne")
            && tokens.get(i + 1).is_some_and(|next| {
                text[tokens[i].end..next.start].trim().starts_with(['\'', '’']) || words[i].len() == 2
            })
    };
    let skip_of = |i: usize| {
        if words.get(i + 1).is_some_and(|w| w == "s") && text[tokens[i].end..tokens[i + 1].start].contains(['\'', '’'])
        {
            2
        } else {
            1
        }
    };
    let mut i = start + 1;
    let mut phrase: Vec<String> = Vec::new();
    while i < words.len() && phrase.is_empty() && LEAD.contains(&words[i].as_str()) {
        i += 1;
    }
    // "Who SERVES AS Amazon's CFO", "who RUNS Boeing Global Services", "who
    // SIGNED the agreement": after "who" comes the verb, and the phrase is
    // its object or the role "as" names.
    if matches!(words[start].as_str(), "who" | "whom") && i < words.len() {
        let w = words[i].as_str();
        // Right after "who" ("who RUNS"), or a form in -ing after an
        // auxiliary ("who was SERVING as"); "who are the PARTIES" asks a noun.
        let progressive = w.len() > 4
            && w.ends_with("ing")
            && words[start + 1..i].iter().all(|a| matches!(a.as_str(), "is" | "was" | "are" | "were"));
        let verb = (i == start + 1
            && ((w.len() > 3 && (w.ends_with('s') || w.ends_with("ed"))) || IRREGULAR_PAST.contains(&w)))
            || progressive;
        if verb {
            i += 1;
            if words.get(i).is_some_and(|w| w == "as") {
                i += 1;
            }
            while i < words.len() && LEAD.contains(&words[i].as_str()) {
                i += 1;
            }
        }
    }
    // "What does error 188 mean": the subject of an inverted question that
    // asks what it means or stands for.
    if i < words.len() && matches!(words[i].as_str(), "does" | "do" | "did") {
        let closing = words.iter().skip(i + 1).position(|w| MEANING_VERBS.contains(&w.as_str()));
        match closing {
            Some(n) if n > 0 => {
                let subject: Vec<String> =
                    words[i + 1..i + 1 + n].iter().filter(|w| !LEAD.contains(&w.as_str())).take(6).cloned().collect();
                return Some(AskedPhrase { words: subject, who });
            }
            _ => return Some(AskedPhrase { words: Vec::new(), who }),
        }
    }
    while i < words.len() && phrase.len() < 6 {
        let word = &words[i];
        // ... and so does the article of a new noun phrase ("quel âge
        // L'assuré").
        if !phrase.is_empty() && (clitic_verb(i) || (word == "l" && text[tokens[i].end..].starts_with(['\'', '’']))) {
            break;
        }
        // A determiner after the head opens a new noun phrase, the subject
        // of a clause that qualifies the asked one ("the maximum exit fee
        // THE affiliate pays", "quel montant LA société a-t-elle payé").
        if !phrase.is_empty() && NEW_PHRASE.contains(&word.as_str()) {
            break;
        }
        if possessive(i) {
            // "which state's law": the owner is what is asked.
            if phrase.is_empty() && i == start + 1 {
                phrase.push(word.clone());
                break;
            }
            phrase.clear();
            i += skip_of(i);
            continue;
        }
        if PHRASE_END.contains(&word.as_str()) {
            if !phrase.is_empty()
                && matches!(word.as_str(), "of" | "de" | "du" | "des" | "von" | "van" | "del")
                && (GENERIC_HEADS.contains(&phrase[phrase.len() - 1].as_str()) || measure_of(&phrase))
            {
                // "the maximum number of residents": the measure's own
                // qualifiers stay, the head gives way to its complement.
                if measure_of(&phrase) {
                    phrase.pop();
                } else {
                    phrase.clear();
                }
                i += 1;
                while i < words.len() && LEAD.contains(&words[i].as_str()) {
                    i += 1;
                }
                continue;
            }
            break;
        }
        // A past participle ends it ("the premium CALCULATED"), and so does a
        // verb in -s or -ed before its object ("which temperature GIVES
        // ChatGPT the ...", "which step TAKES the most").
        // A word joined to the one before by a hyphen is part of it ("the
        // U.S.-BASED employees"); an irregular past tense ends it like a
        // participle ("total revenues CAME from").
        let wordy = phrase.iter().any(|w| w.chars().all(char::is_alphabetic));
        let hyphenated = i > 0 && text[tokens[i - 1].end..tokens[i].start].trim_start_matches('.') == "-";
        if wordy
            && !hyphenated
            && ((word.len() >= 4 && word.ends_with("ed")) || IRREGULAR_PAST.contains(&word.as_str()))
        {
            break;
        }
        let object_follows = tokens.get(i + 1).is_some_and(|next| {
            next.text.chars().next().is_some_and(char::is_uppercase)
                || matches!(
                    words[i + 1].as_str(),
                    "the" | "a" | "an" | "this" | "that" | "its" | "their" | "his" | "her" | "most" | "more"
                )
        });
        if !phrase.is_empty() && word.len() > 3 && (word.ends_with('s') || word.ends_with("ed")) && object_follows {
            break;
        }
        let gap = &text[tokens[i - 1].end..tokens[i].start];
        let gap_ok = phrase.is_empty() || gap.chars().all(char::is_whitespace) || hyphenated;
        let after_possessive = i >= 2 && words[i - 1] == "s";
        let apostrophe_gap = gap.trim_start_matches(['\'', '’']).chars().all(char::is_whitespace) || gap.trim() == "&";
        if !(gap_ok || after_possessive || apostrophe_gap) {
            break;
        }
        phrase.push(word.clone());
        i += 1;
    }
    Some(AskedPhrase { words: phrase, who })
}

/// Determiners that open a noun phrase of their own after the asked one.
const NEW_PHRASE: &[&str] = &[
    "the", "a", "an", "this", "these", "those", "its", "their", "his", "our", "your", "each", "every", "le", "la",
    "les",
];

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
        check("If the insured opts for co-payment, what discount applies?", (Single, "text"));
        check("What diluted earnings per share were reported?", (Single, "amount"));
        check("What is the year end FY2018 net PPNE for 3M?", (Single, "text"));
        check("Quelle franchise standard s'applique en cas de vol ?", (Single, "amount"));
        check("What is the FY2019 fixed asset turnover ratio?", (Single, "percentage"));
        check("Which temperature gives ChatGPT the highest alignment score?", (Single, "number"));
        check("What will happen when you press and hold the down button?", (Single, "text"));
        check("How much written notice must the policyholder give?", (Single, "duration"));
    }

    #[test]
    fn asked_phrases() {
        let phrase = |q: &str| asked_phrase(&tokenize(q), q).map(|a| a.words.join(" "));
        assert_eq!(phrase("What dropout rate was used for the base model?").as_deref(), Some("dropout rate"));
        assert_eq!(phrase("How many attention heads does it use?").as_deref(), Some("attention heads"));
        assert_eq!(
            phrase("What is the name of Nike's chief executive officer?").as_deref(),
            Some("chief executive officer")
        );
        assert_eq!(phrase("Which state's law governs?").as_deref(), Some("state"));
        assert_eq!(phrase("What were General Mills' diluted earnings per share?").as_deref(), Some("diluted earnings"));
        assert_eq!(phrase("How is the premium calculated?"), None);
        assert_eq!(
            phrase("Who serves as Amazon's chief financial officer?").as_deref(),
            Some("chief financial officer")
        );
        assert_eq!(phrase("Who was serving as Lockheed Martin's CFO?").as_deref(), Some("cfo"));
        assert_eq!(phrase("Who runs Boeing Global Services?").as_deref(), Some("boeing global services"));
        assert_eq!(phrase("Who signed the agreement for Driven Deliveries?").as_deref(), Some("agreement"));
        assert_eq!(phrase("Who is the guest on this receipt?").as_deref(), Some("guest"));
        assert_eq!(
            phrase("What is the maximum exit fee the affiliate pays on termination?").as_deref(),
            Some("maximum exit fee")
        );
        assert_eq!(phrase("Who are the parties to this agreement?").as_deref(), Some("parties"));
        assert_eq!(phrase("Which judge wrote the decision?").as_deref(), Some("judge"));
        assert_eq!(phrase("Who is CVS Health's CFO according to the listing?").as_deref(), Some("cfo"));
        assert_eq!(phrase("How old was he as of January 2020?").as_deref(), Some("age"));
        // A measure of something asks for the value of that thing.
        assert_eq!(
            phrase("What percentage of Lockheed Martin's workforce was based in the United States?").as_deref(),
            Some("workforce")
        );
        assert_eq!(phrase("What is the total number of employees?").as_deref(), Some("total employees"));
        assert_eq!(phrase("What is the order number of this datasheet?").as_deref(), Some("order number"));
        assert_eq!(
            phrase("What percentage of NIKE's total revenues came from U.S. sales?").as_deref(),
            Some("total revenues")
        );
        assert_eq!(phrase("What share of the U.S.-based employees are women?").as_deref(), Some("u.s based employees"));
        assert_eq!(
            phrase("Quel pourcentage du chiffre d'affaires est réalisé en France ?").as_deref(),
            Some("chiffre d affaires")
        );
        assert_eq!(phrase("The total, please."), None);
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
        check("If the insured opts for co-payment, what discount applies?", (Single, "text"));
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
