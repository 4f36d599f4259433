//! Words: the tokenizer, the stop-word lists (en, fr, es, de, ru) and the
//! stop-word language vote.

use std::ops::Range;

/// The languages the parser knows, in tie-break order.
pub(crate) const LANGUAGES: [&str; 6] = ["en", "fr", "es", "de", "ru", "nl"];

/// English function words plus question-frame words ("list", "tell", ...).
#[rustfmt::skip]
const EN: &[&str] = &[
    "a", "an", "the", "what", "what's", "which", "who", "whom", "whose", "when", "where", "why", "how", "is", "are",
    "was", "were", "be", "been", "being", "am", "do", "does", "did", "done", "has", "have", "had", "having", "can",
    "could", "will", "would", "shall", "should", "may", "might", "must", "of", "in", "on", "at", "to", "for", "from",
    "by", "with", "without", "about", "into", "onto", "over", "under", "between", "within", "per", "and", "or", "but",
    "not", "no", "nor", "if", "whether", "then", "than", "that", "this", "these", "those", "there", "here", "it",
    "its", "they", "them", "their", "theirs", "we", "our", "us", "you", "your", "i", "me", "my", "he", "she", "his",
    "her", "him", "as", "so", "such", "any", "all", "some", "each", "every", "much", "many", "more", "most", "other",
    "also", "only", "just", "very", "s", "t", "d", "ll", "re", "ve", "m", "don", "doesn", "isn", "aren", "didn",
    "wasn", "weren", "hasn", "haven", "please", "kindly", "tell", "give", "show", "find", "list", "enumerate",
    "provide", "say", "says", "said", "mean", "means", "meant", "mention", "mentions", "mentioned", "according",
    "explain", "describe", "summarize", "summarise", "summary", "overview", "know", "let", "get", "up", "out",
    "written", "compare", "page", "pages", "p", "pp", "during", "like", "regarding", "concerning", "able",
    "reported", "materially", "important",
];

/// French function words plus question-frame words.
#[rustfmt::skip]
const FR: &[&str] = &[
    "le", "la", "les", "l", "un", "une", "des", "du", "de", "d", "au", "aux", "à", "et", "ou", "est", "sont", "était",
    "étaient", "été", "être", "avoir", "a", "ont", "ai", "as", "avons", "avez", "quel", "quelle", "quels", "quelles",
    "qui", "que", "qu", "quoi", "quand", "où", "comment", "combien", "pourquoi", "lequel", "laquelle", "lesquels",
    "lesquelles", "ce", "cet", "cette", "ces", "c", "ceci", "cela", "ça", "il", "elle", "ils", "elles", "on", "nous",
    "vous", "je", "j", "me", "m", "te", "t", "se", "s", "n", "ne", "pas", "plus", "y", "en", "dans", "sur", "sous",
    "pour", "par", "avec", "sans", "entre", "chez", "vers", "son", "sa", "ses", "leur", "leurs", "mon", "ma", "mes",
    "ton", "ta", "tes", "notre", "nos", "votre", "vos", "est-ce", "si", "mais", "donc", "ni", "car", "tout", "tous",
    "toute", "toutes", "très", "aussi", "donner", "donne", "donnez", "indiquer", "indique", "indiquez", "liste",
    "lister", "listez", "énumérer", "énumère", "énumérez", "résumer", "résume", "résumez", "résumé", "expliquer",
    "explique", "expliquez", "décrire", "décris", "décrivez", "dire", "dit", "dites", "selon", "svp", "page", "pages",
];

/// Spanish function words plus question-frame words.
#[rustfmt::skip]
const ES: &[&str] = &[
    "el", "la", "los", "las", "lo", "un", "una", "unos", "unas", "de", "del", "al", "a", "y", "o", "u", "es", "son",
    "fue", "fueron", "era", "eran", "ser", "está", "están", "estar", "ha", "han", "hay", "haber", "tiene", "tienen",
    "qué", "que", "cuál", "cuáles", "cual", "cuales", "quién", "quiénes", "quien", "cuándo", "cuando", "dónde",
    "donde", "cómo", "como", "cuánto", "cuánta", "cuántos", "cuántas", "cuanto", "por", "para", "con", "sin", "en",
    "sobre", "entre", "hasta", "desde", "se", "su", "sus", "le", "les", "me", "mi", "mis", "tu", "tus", "nos", "no",
    "sí", "si", "este", "esta", "estos", "estas", "ese", "esa", "esos", "esas", "eso", "esto", "todo", "todos",
    "toda", "todas", "muy", "también", "pero", "dime", "dame", "indica", "indique", "lista", "enumera", "enumere",
    "resume", "resuma", "resumen", "explica", "explique", "describe", "describa", "según", "favor", "página",
    "páginas",
];

/// German function words plus question-frame words.
#[rustfmt::skip]
const DE: &[&str] = &[
    "der", "die", "das", "den", "dem", "des", "ein", "eine", "einer", "eines", "einem", "einen", "und", "oder",
    "aber", "ist", "sind", "war", "waren", "wird", "werden", "wurde", "wurden", "sein", "seine", "seiner", "ihr",
    "ihre", "ihren", "es", "er", "sie", "wir", "ich", "du", "man", "was", "welche", "welcher", "welches", "welchen",
    "welchem", "wer", "wen", "wem", "wessen", "wann", "wo", "wie", "warum", "wieso", "weshalb", "viel", "viele",
    "hoch", "im", "in", "an", "am", "auf", "aus", "bei", "beim", "mit", "von", "vom", "zu", "zum", "zur", "für",
    "über", "unter", "nach", "vor", "bis", "durch", "gegen", "ohne", "um", "nicht", "kein", "keine", "auch", "hat",
    "haben", "hatte", "gibt", "gilt", "kann", "können", "muss", "müssen", "soll", "ob", "dass", "bitte", "nenne",
    "nennen", "nennt", "liste", "gib", "geben", "zeige", "zeigen", "fasse", "zusammen", "zusammenfassung", "erkläre",
    "erklären", "beschreibe", "beschreiben", "laut", "gemäß", "seite", "seiten", "s",
];

/// Dutch function words plus question-frame words (last in [`LANGUAGES`]:
/// a tie with German "die" or French "de" goes to the earlier language).
#[rustfmt::skip]
const NL: &[&str] = &[
    "de", "het", "een", "en", "of", "maar", "van", "voor", "op", "in", "aan", "bij", "met", "door", "over", "uit",
    "naar", "om", "tot", "te", "is", "zijn", "was", "waren", "wordt", "worden", "werd", "werden", "heeft", "hebben",
    "had", "er", "deze", "dit", "die", "dat", "wat", "welke", "welk", "wie", "wanneer", "waar", "hoe", "hoeveel",
    "waarom", "niet", "geen", "ook", "u", "uw", "je", "jouw", "we", "wij", "zij", "hij", "ze", "mijn", "ons", "onze",
    "kan", "kunnen", "moet", "moeten", "mag", "zal", "noem", "geef", "graag", "volgens", "pagina",
];

/// Russian function words plus question-frame words.
#[rustfmt::skip]
const RU: &[&str] = &[
    "и", "в", "во", "не", "что", "чем", "как", "какой", "какая", "какое", "какие", "каков", "какова", "каково",
    "каковы", "когда", "где", "почему", "зачем", "сколько", "кто", "на", "с", "со", "по", "о", "об", "к", "ко", "из",
    "от", "до", "за", "для", "при", "над", "под", "это", "этот", "эта", "эти", "этого", "то", "тот", "та", "те", "ли",
    "же", "бы", "был", "была", "было", "были", "есть", "быть", "а", "но", "или", "у", "его", "её", "ее", "их", "он",
    "она", "они", "мы", "вы", "я", "мне", "нам", "вам", "ни", "нет", "да", "все", "всё", "весь", "вся", "также",
    "перечисли", "перечислите", "назови", "назовите", "покажи", "покажите", "опиши", "опишите", "объясни",
    "объясните", "кратко", "пожалуйста", "согласно", "страница", "странице", "страницы", "стр", "стоит",
];

/// The stop-word list of one language (empty for an unknown code).
pub(crate) fn stop_words(language: &str) -> &'static [&'static str] {
    match language {
        "en" => EN,
        "fr" => FR,
        "es" => ES,
        "de" => DE,
        "ru" => RU,
        "nl" => NL,
        _ => &[],
    }
}

/// Whether a lower-cased word is a stop word: of the detected language, or of
/// any known language when none was detected. English question-frame words are
/// always stop words (questions often mix English frame words in).
pub(crate) fn is_stop(word: &str, language: Option<&str>) -> bool {
    match language {
        Some(code) => stop_words(code).contains(&word) || (code != "en" && EN.contains(&word) && word.len() > 3),
        None => LANGUAGES.iter().any(|code| stop_words(code).contains(&word)),
    }
}

/// One token of a question, with its byte span in the text it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token<'a> {
    /// The token as written.
    pub(crate) text: &'a str,
    /// Byte offset of its first character.
    pub(crate) start: usize,
    /// Byte offset just past it.
    pub(crate) end: usize,
}

impl Token<'_> {
    pub(crate) fn span(&self) -> Range<usize> {
        self.start..self.end
    }

    pub(crate) fn lower(&self) -> String {
        self.text.to_lowercase()
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || ('\u{0300}'..='\u{036F}').contains(&c)
}

/// Splits on non-alphanumeric characters, keeping a `-` or `.` that sits
/// between two alphanumerics (identifiers: `AC-2`, `4.2`, `e-mail`). Apostrophes
/// split, so French elisions (`l'assurance`) give `l` + `assurance`.
pub(crate) fn tokenize(text: &str) -> Vec<Token<'_>> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !is_word_char(chars[i].1) {
            i += 1;
            continue;
        }
        let start = chars[i].0;
        let mut j = i + 1;
        loop {
            if j < chars.len() && is_word_char(chars[j].1) {
                j += 1;
            } else if j + 1 < chars.len() && matches!(chars[j].1, '-' | '.') && is_word_char(chars[j + 1].1) {
                j += 2;
            } else {
                break;
            }
        }
        let end = chars.get(j).map_or(text.len(), |&(at, _)| at);
        tokens.push(Token { text: &text[start..end], start, end });
        i = j;
    }
    tokens
}

/// French verb-subject inversions glued by hyphens (`couvre-t-il`) lose their
/// pronoun: the verb is the content word.
pub(crate) fn strip_clitic(word: &str) -> &str {
    const SUFFIXES: [&str; 15] = [
        "-t-il", "-t-elle", "-t-on", "-il", "-elle", "-ils", "-elles", "-on", "-je", "-nous", "-vous", "-moi", "-toi",
        "-lui", "-leur",
    ];
    for suffix in SUFFIXES {
        if let Some(stem) = word.strip_suffix(suffix)
            && !stem.is_empty()
        {
            return stem;
        }
    }
    word
}

/// Stop-word vote: each token votes for every language whose list holds it;
/// Cyrillic and a few language-specific letters add evidence. `None` when no
/// language got a vote.
pub(crate) fn detect_language(text: &str, tokens: &[Token<'_>]) -> Option<&'static str> {
    let mut scores = [0u32; LANGUAGES.len()];
    for token in tokens {
        let word = token.lower();
        for (index, code) in LANGUAGES.iter().enumerate() {
            if stop_words(code).contains(&word.as_str()) {
                scores[index] += 1;
            }
        }
        if word.chars().any(|c| ('\u{0400}'..='\u{04FF}').contains(&c)) {
            scores[4] += 1;
        }
    }
    for c in text.chars() {
        match c {
            '¿' | '¡' | 'ñ' => scores[2] += 2,
            'ß' | 'ä' | 'ö' | 'ü' => scores[3] += 1,
            'ç' | 'è' | 'ê' | 'ù' | 'œ' | 'û' | 'î' => scores[1] += 1,
            _ => {}
        }
    }
    let best = *scores.iter().max()?;
    if best == 0 {
        return None;
    }
    scores.iter().position(|&s| s == best).map(|index| LANGUAGES[index])
}

/// Whether two byte ranges overlap.
pub(crate) fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

/// Whether `span` overlaps any of `masks`.
pub(crate) fn masked(span: &Range<usize>, masks: &[Range<usize>]) -> bool {
    masks.iter().any(|m| overlaps(span, m))
}

/// Collapses runs of whitespace to one space and trims.
pub(crate) fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        tokenize(text).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn tokenizer_keeps_identifiers() {
        assert_eq!(words("What does AC-2 say about IA-5(1)?"), ["What", "does", "AC-2", "say", "about", "IA-5", "1"]);
        assert_eq!(words("section 4.2, l'assurance"), ["section", "4.2", "l", "assurance"]);
        assert_eq!(words("e-mail of the end."), ["e-mail", "of", "the", "end"]);
        assert_eq!(words("Какова сумма?"), ["Какова", "сумма"]);
    }

    #[test]
    fn clitics() {
        assert_eq!(strip_clitic("couvre-t-il"), "couvre");
        assert_eq!(strip_clitic("est-il"), "est");
        assert_eq!(strip_clitic("e-mail"), "e-mail");
        assert_eq!(strip_clitic("donne-moi"), "donne");
    }

    fn check(question: &str, expect: Option<&str>) {
        assert_eq!(detect_language(question, &tokenize(question)), expect, "{question}");
    }

    #[test]
    fn language_vote() {
        check("What is the total amount?", Some("en"));
        check("Quel est le montant total de la facture ?", Some("fr"));
        check("Wat is de vervaldatum van de factuur?", Some("nl"));
        check("Wie lautet die Rechnungsnummer?", Some("de"));
        check("¿Cuál es el importe total?", Some("es"));
        check("Wie hoch ist der Betrag der Rechnung?", Some("de"));
        check("Какова сумма счёта?", Some("ru"));
        check("AC-2 IA-5", None);
    }

    #[test]
    fn stop_words_follow_language() {
        assert!(is_stop("the", Some("en")));
        assert!(!is_stop("war", Some("en")));
        assert!(is_stop("war", Some("de")));
        assert!(is_stop("war", None));
        assert!(!is_stop("invoice", None));
        assert!(is_stop("het", Some("nl")));
        assert!(!is_stop("factuurnummer", Some("nl")));
    }
}
