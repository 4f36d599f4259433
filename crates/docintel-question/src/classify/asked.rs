//! The asked phrase: the noun phrase a question asks for ("what dropout
//! RATE", "who is Nike's CFO"), whose head noun gives the answer type.

use regex::Regex;

use crate::lexicon::{Token, strip_clitic};

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

/// Question words that open the asked phrase.
pub(super) const WH: &[&str] = &[
    "what", "which", "who", "whom", "whose", "quel", "quelle", "quels", "quelles", "lequel", "laquelle", "qui",
    "welche", "welcher", "welches", "welchen", "welchem", "wer", "wen", "wat", "welk", "welke", "qué", "que", "cuál",
    "cuáles", "cual", "quién", "quiénes", "hoeveel",
];
/// Imperatives that open the asked phrase ("Name the auditor").
const ASK_VERBS: &[&str] = &["name", "list", "give", "state", "identify", "provide", "indicate", "nenne", "indiquez"];
/// Words skipped before the phrase: copulas and determiners.
pub(super) const LEAD: &[&str] = &[
    "is", "are", "was", "were", "s", "the", "a", "an", "est", "sont", "était", "le", "la", "les", "l", "un", "une",
    "ist", "sind", "war", "der", "die", "das", "den", "dem", "het", "een", "zijn", "es", "son", "el", "los", "las",
    "de", "des", "du", "many", "much", "me", "us",
];
/// A year ("2020", "FY2021").
pub(super) static YEAR: std::sync::LazyLock<Regex> =
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

/// Words that place a measure in time without naming another thing: "the
/// YEAR END total amount of", "the ANNUAL number of", "the FY2019 amount of".
#[rustfmt::skip]
const PERIOD_WORDS: &[&str] = &[
    "year", "end", "year-end", "yearend", "fiscal", "annual", "yearly", "quarterly", "monthly", "weekly", "daily",
    "current", "latest", "period", "fy", "q1", "q2", "q3", "q4",
];

/// Whether `word` only places a measure in time (see [`PERIOD_WORDS`]) or is a year.
fn period_word(word: &str) -> bool {
    PERIOD_WORDS.contains(&word) || YEAR.is_match(word)
}

/// Whether `phrase` is a measure head after nothing but its qualifiers and
/// period words ("the total number", "the year end total amount", not "the
/// order number").
fn measure_of(phrase: &[String]) -> bool {
    phrase.last().is_some_and(|head| MEASURE_HEADS.contains(&head.as_str()))
        && phrase[..phrase.len() - 1].iter().all(|w| MEASURE_QUALIFIERS.contains(&w.as_str()) || period_word(w))
}

/// English verbs whose past tense does not end in -ed.
const IRREGULAR_PAST: &[&str] = &[
    "came", "went", "made", "took", "gave", "got", "grew", "fell", "rose", "led", "left", "spent", "sold", "bought",
    "brought", "kept", "won", "lost", "began", "became", "drove", "paid", "held", "saw", "told", "said", "ran", "met",
    "wrote", "chose", "built", "heard", "sent", "oversaw",
];

/// German verbs of naming and measures after "wie" that make it ask a noun
/// phrase: "wie LAUTET die Vertragsnummer" (what is the contract number),
/// "wie HOCH ist die Selbstbeteiligung" (how much is the deductible).
const WIE_ASKS: &[&str] =
    &["lautet", "lauten", "heißt", "heisst", "heißen", "heissen", "hoch", "viel", "viele", "lange"];

/// Whether word `i` is a German "wie" that asks a noun phrase (see [`WIE_ASKS`]).
fn german_what(words: &[String], i: usize) -> bool {
    words[i] == "wie" && words.get(i + 1).is_some_and(|w| WIE_ASKS.contains(&w.as_str()))
}

/// A past tense or participle: a word in -ed, or an irregular past.
fn past_form(word: &str) -> bool {
    (word.len() >= 4 && word.ends_with("ed")) || IRREGULAR_PAST.contains(&word)
}

/// English verbs in the third person that are not also the plural of a noun
/// a question asks for ("covers" is left out: "what covers apply"; so are
/// "uses", "states", "lists", "holds", "pays", "offers", "costs", "yields",
/// "addresses").
#[rustfmt::skip]
pub(super) const PRESENT_VERBS: &[&str] = &[
    "applies", "provides", "includes", "contains", "requires", "describes", "governs", "allows", "explains",
    "specifies", "defines", "identifies", "indicates", "handles", "supports", "prevents", "protects", "ensures",
    "enables", "determines", "regulates", "triggers", "entitles", "qualifies", "permits", "affects", "reaches",
    "achieves", "exceeds", "replaces", "represents", "produces", "generates", "outperforms", "occurs", "happens",
    "belongs", "corresponds", "refers", "appears", "remains", "becomes", "receives",
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

/// Determiners that open a noun phrase of their own after the asked one.
const NEW_PHRASE: &[&str] = &[
    "the", "a", "an", "this", "these", "those", "its", "their", "his", "our", "your", "each", "every", "le", "la",
    "les",
];

/// The phrase a question asks for: after the question word ("what DROPOUT
/// RATE was used", "which UNIVERSITY did", "how many ATTENTION HEADS") or an
/// imperative ("name the AUDITOR"), past copulas and determiners, up to the
/// first auxiliary or preposition (a rate's "per" and its unit stay:
/// "earnings PER SHARE"); a possessive owner is dropped ("Nike's
/// chief executive officer") unless the question word asks for it ("which
/// STATE's law"); a generic head continues into its complement ("the name
/// of the chief executive officer"). At most six words.
pub(crate) fn asked_phrase(tokens: &[Token<'_>], text: &str) -> Option<AskedPhrase> {
    let words: Vec<String> = tokens.iter().map(|t| strip_clitic(&t.lower()).to_owned()).collect();
    let start = words
        .iter()
        .enumerate()
        .position(|(i, w)| WH.contains(&w.as_str()) || w == "how" || german_what(&words, i))
        .or_else(|| words.first().filter(|w| ASK_VERBS.contains(&w.as_str())).map(|_| 0))?;
    let who = matches!(words[start].as_str(), "who" | "whom" | "qui" | "wer" | "wen" | "quién" | "quiénes");
    // "Wie lautet die Kundennummer", "wie hoch ist die Prämie": the verb or
    // the measure after "wie" opens the phrase, as "what is" would.
    let start = if german_what(&words, start) { start + 1 } else { start };
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
    let phrase_start = i;
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
        // A title joined to another by "and" is one role: "who served as
        // its President and Chief Operating Officer" asks the holder of both.
        let capital = |t: Option<&Token<'_>>| t.is_some_and(|t| t.text.chars().next().is_some_and(char::is_uppercase));
        if who && word == "and" && !phrase.is_empty() && capital(tokens.get(i - 1)) && capital(tokens.get(i + 1)) {
            phrase.push(word.clone());
            i += 1;
            continue;
        }
        // A rate's unit is part of what is asked: "diluted earnings PER
        // SHARE", "revenue per user" (a per-share figure is not the total).
        if word == "per"
            && !phrase.is_empty()
            && words.get(i + 1).is_some_and(|w| !PHRASE_END.contains(&w.as_str()) && !NEW_PHRASE.contains(&w.as_str()))
        {
            phrase.push(word.clone());
            i += 1;
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
                    // When it is placed in time is a constraint, not what is measured.
                    phrase.retain(|w| !period_word(w));
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
        if wordy && !hyphenated && past_form(word) {
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
        // A verb no question asks for as a noun ends it whatever follows
        // ("what co-payment APPLIES to", "which publication PROVIDES
        // in-depth information").
        if !phrase.is_empty() && PRESENT_VERBS.contains(&word.as_str()) {
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
    // "Who is the invoice BILLED TO?", "what is the agreement governed BY?":
    // the noun phrase after the copula is the subject of a passive clause
    // whose preposition is left open at the end; the question asks what
    // completes it, not the subject ("what is the first product the
    // collaboration will focus on" still asks a product).
    let after_copula =
        words[start + 1..phrase_start].iter().any(|w| matches!(w.as_str(), "is" | "are" | "was" | "were"));
    let participle = words.get(i).is_some_and(|w| past_form(w));
    let dangling = words.last().is_some_and(|w| DANGLING.contains(&w.as_str())) && i < words.len() - 1;
    if after_copula && participle && dangling {
        phrase.clear();
    }
    Some(AskedPhrase { words: phrase, who })
}

/// Prepositions an English question can end on, their object being what is
/// asked ("who is it addressed TO").
const DANGLING: &[&str] = &["to", "by", "for", "with", "from", "at", "in", "on", "of", "about", "under"];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexicon::tokenize;

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
        assert_eq!(
            phrase("What were General Mills' diluted earnings per share?").as_deref(),
            Some("diluted earnings per share")
        );
        assert_eq!(phrase("How is the premium calculated?"), None);
        assert_eq!(
            phrase("Who serves as Amazon's chief financial officer?").as_deref(),
            Some("chief financial officer")
        );
        assert_eq!(phrase("Who was serving as Lockheed Martin's CFO?").as_deref(), Some("cfo"));
        assert_eq!(
            phrase("Who served as Activision Blizzard's President and Chief Operating Officer?").as_deref(),
            Some("president and chief operating officer")
        );
        assert_eq!(phrase("Who is the CEO and what is his age?").as_deref(), Some("ceo"));
        assert_eq!(phrase("Who runs Boeing Global Services?").as_deref(), Some("boeing global services"));
        assert_eq!(phrase("Who signed the agreement for Driven Deliveries?").as_deref(), Some("agreement"));
        assert_eq!(phrase("Who is the guest on this receipt?").as_deref(), Some("guest"));
        // A clause left open on its preposition asks its object, not its subject.
        assert_eq!(phrase("Who is the invoice billed to?").as_deref(), Some(""));
        assert_eq!(phrase("What is the agreement governed by?").as_deref(), Some(""));
        assert_eq!(phrase("What is the premium for?").as_deref(), Some("premium"));
        // German asks "what is" with "wie" and a verb of naming or a measure.
        assert_eq!(phrase("Wie lautet die Kundennummer?").as_deref(), Some("kundennummer"));
        assert_eq!(phrase("Wie hoch ist die Selbstbeteiligung?").as_deref(), Some("selbstbeteiligung"));
        assert_eq!(phrase("Wie wird die Prämie berechnet?"), None);
        assert_eq!(
            phrase("What is the first product the collaboration will focus on?").as_deref(),
            Some("first product")
        );
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
        assert_eq!(
            phrase("What is the year end FY2019 total amount of inventories for Best Buy?").as_deref(),
            Some("total inventories")
        );
        assert_eq!(phrase("What was the annual number of visitors?").as_deref(), Some("visitors"));
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
        // A verb ends the phrase even when a preposition follows it.
        assert_eq!(phrase("What co-payment applies to in-patient claims?").as_deref(), Some("co-payment"));
        assert_eq!(
            phrase("Which NIST publication provides in-depth information on C-SCRM?").as_deref(),
            Some("nist publication")
        );
        assert_eq!(phrase("Which segments in the report grew?").as_deref(), Some("segments"));
    }
}
