//! Decomposition: split a question only when each side is a question on its
//! own ("What is the premium and when is it due?"); a plain noun pair
//! ("exclusions and limits") stays whole.

use docintel_schema::{Decomposition, DecompositionPattern};
use regex::Regex;

use crate::lexicon::{Token, is_stop, tokenize};

const QUESTION_WORDS: &str = "what|when|where|who|whom|which|how|why|is|are|was|were|does|do|did|can|\
quel|quelle|quels|quelles|quand|où|comment|combien|pourquoi|qui|est-ce|\
qu[ée]|cu[áa]l|cu[áa]les|cu[áa]ndo|d[óo]nde|c[óo]mo|cu[áa]nto|cu[áa]nta|qui[ée]n|\
wann|wo|wie|welche|welcher|welches|warum|wer|\
что|когда|где|как|какой|какая|какие|каков|какова|сколько|почему|кто";

/// Prepositions that may open the second question ("..., and IN how many
/// countries", "and SINCE what year", "and AT what price").
const PREPOSITIONS: &str = "in|on|at|by|for|from|since|under|to|with|within|after|before|until|into|of|through|during|\
across|over|among|between|per|throughout|around|\
dans|en|à|par|pour|depuis|sous|avec|avant|après|jusqu'à|pendant|durant|in|seit|bis|mit|unter|für|ab|vor|nach|während|\
en|desde|hasta|con|bajo|durante";

/// Articles that may sit between a conjunction and its noun ("the exclusions and the limits").
const ARTICLES: &[&str] = &["the", "a", "an", "le", "la", "les", "l", "el", "los", "las", "der", "die", "das", "den"];

/// Words that join a noun to its complement ("days OF pre-hospitalisation").
const OF: &[&str] = &["of", "de", "du", "des", "d", "von", "del"];

/// Fewest words on each side of a split (so "and are unpaid" is not a question).
const MIN_WORDS: usize = 3;

/// The compiled decomposition regexes.
#[derive(Debug, Clone)]
pub(crate) struct DecomposeRules {
    conjunction_question: Regex,
    conditional: Regex,
    noun_conjunction: Regex,
    question_start: Regex,
}

impl DecomposeRules {
    pub(crate) fn new() -> DecomposeRules {
        let compile = |source: &str| Regex::new(source).expect("decompose regex compiles");
        DecomposeRules {
            conjunction_question: compile(&format!(
                r"(?i)(?:,\s*|\s+)(?:(?:and|et|y|und|и|а)\s+(?:also\s+|aussi\s+|auch\s+|también\s+)?((?:(?:{PREPOSITIONS})\s+)?(?:{QUESTION_WORDS}))|en\s+(wat|wie|welke|welk|hoeveel|wanneer|waar|hoe))\b"
            )),
            conditional: compile(
                r"(?i)^[¿¡]?\s*(?:if|in\s+case|si|wenn|falls|если)\b([^,?]+),\s*(?:then\s+|alors\s+|dann\s+|entonces\s+|то\s+)?(.+)$",
            ),
            noun_conjunction: compile(r"(?i)^(?:and|et|y|und|и|&)$"),
            question_start: compile(&format!(r"(?i)^[¿¡]?\s*(?:{QUESTION_WORDS})\b")),
        }
    }

    /// The decomposition of `text` (the corrected question) and a note when a
    /// conjunction was deliberately not split.
    pub(crate) fn decompose(&self, text: &str, language: Option<&str>) -> (Decomposition, Vec<String>) {
        let mut notes = Vec::new();
        let questions = split_question_marks(text, &self.question_start);
        if questions.len() >= 2 {
            return (independent(questions), notes);
        }
        let parts = self.split_conjunctions(text);
        if parts.len() >= 2 {
            return (independent(parts), notes);
        }
        if let Some(c) = self.conditional.captures(text) {
            let condition = c.get(1).expect("group").as_str().trim();
            let main = c.get(2).expect("group").as_str().trim();
            if count_words(condition) >= 2 && count_words(main) >= 2 {
                let pattern = DecompositionPattern::Conditional;
                let sub_questions = vec![format!("If {condition}"), capitalize(main)];
                return (Decomposition { pattern, sub_questions }, notes);
            }
        }
        let tokens = tokenize(text);
        if let Some((left, right)) = self.noun_pair(text, &tokens, language) {
            notes.push(format!(
                "'{left} … {right}' joined by a conjunction, but neither side is a question on its own: kept whole"
            ));
            return (Decomposition { pattern: DecompositionPattern::Unified, sub_questions: Vec::new() }, notes);
        }
        (Decomposition { pattern: DecompositionPattern::Single, sub_questions: Vec::new() }, notes)
    }

    fn split_conjunctions(&self, text: &str) -> Vec<String> {
        let mut parts = Vec::new();
        let mut start = 0;
        for c in self.conjunction_question.captures_iter(text) {
            let m = c.get(0).expect("whole match");
            let left = &text[start..m.start()];
            // The right side starts at its question word, or the preposition
            // before it.
            let question_word_at = c.get(1).or_else(|| c.get(2)).map_or(m.start(), |q| q.start());
            let rest_end = self.conjunction_question.find(&text[m.end()..]).map_or(text.len(), |n| m.end() + n.start());
            if count_words(left) < MIN_WORDS || count_words(&text[question_word_at..rest_end]) < MIN_WORDS {
                continue;
            }
            parts.push(as_question(left));
            start = question_word_at;
        }
        if parts.is_empty() {
            return parts;
        }
        parts.push(as_question(&text[start..]));
        parts
    }

    /// Two content words joined by "and" (or et/y/und/и/&), when no split was made.
    fn noun_pair(&self, text: &str, tokens: &[Token<'_>], language: Option<&str>) -> Option<(String, String)> {
        let is_content = |t: &Token<'_>| {
            !is_stop(&t.lower(), language) && t.text.chars().all(char::is_alphabetic) && t.text.chars().count() > 1
        };
        for (index, token) in tokens.iter().enumerate() {
            let is_and = self.noun_conjunction.is_match(token.text);
            if !is_and || index == 0 {
                continue;
            }
            let left = &tokens[index - 1];
            let right = match tokens.get(index + 1) {
                Some(next) if ARTICLES.contains(&next.lower().as_str()) => tokens.get(index + 2),
                next => next,
            };
            let right = right.filter(|t| is_content(t));
            if let Some(right) = right
                && is_content(left)
            {
                return Some((left.lower(), right.lower()));
            }
        }
        // "&" is not a token: look for it between two content words.
        for pair in tokens.windows(2) {
            if text[pair[0].end..pair[1].start].trim() == "&" && is_content(&pair[0]) && is_content(&pair[1]) {
                return Some((pair[0].lower(), pair[1].lower()));
            }
        }
        None
    }
}

/// A coordination read as two questions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Distributed {
    /// Each conjunct in the place of the pair.
    pub(crate) parts: [String; 2],
    /// The pair as written ("pre-hospitalisation and post-hospitalisation",
    /// "research and development").
    pub(crate) joined: String,
}

impl DecomposeRules {
    /// The two questions a coordination inside one asked phrase stands for,
    /// when the question does not split into questions of its own (see
    /// [`DecomposeRules::decompose`]): each conjunct in the place of the
    /// pair. The conjuncts are read off
    /// the words around the conjunction:
    /// - an article on the right: each side is its own noun phrase, "the
    ///   open seminar and the question-and-answer session";
    /// - a shared head: "record date and payment date" → "record date",
    ///   "payment date";
    /// - a shared first word: "Tier 1 and Tier 4" → "Tier 1", "Tier 4";
    /// - else one word each, the rest shared: "pre-hospitalisation and
    ///   post-hospitalisation expenses" → "pre-hospitalisation expenses",
    ///   "post-hospitalisation expenses".
    ///
    /// Only a coordination of what is asked counts: the left conjunct holds
    /// the focus's last word (`focus`, see [`crate::classify::asked_phrase`])
    /// or follows it through "of" ("days of pre-hospitalisation and
    /// post-hospitalisation expenses"); "help with tuition fees and
    /// financial matters", "press and hold" restrict or describe, and stay
    /// whole. `None` when the conjunction does not sit between two content
    /// words written side by side with it.
    pub(crate) fn distribute(&self, text: &str, focus: &str, language: Option<&str>) -> Option<Distributed> {
        let tokens = tokenize(text);
        let head = focus.split_whitespace().last()?.to_lowercase();
        let content = |t: &Token<'_>| {
            !is_stop(&t.lower(), language) && t.text.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '.'))
        };
        let gap = |a: &Token<'_>, b: &Token<'_>| text[a.end..b.start].chars().all(char::is_whitespace);
        let dutch = language == Some("nl");
        // Dutch "en" (in French, "en" is a preposition).
        let at = (1..tokens.len())
            .find(|&i| self.noun_conjunction.is_match(tokens[i].text) || (dutch && tokens[i].lower() == "en"))?;
        // The content words written side by side before and after it.
        let mut left: Vec<&Token<'_>> = Vec::new();
        for (index, token) in tokens[..at].iter().enumerate().rev() {
            let next = tokens.get(index + 1)?;
            if !content(token) || !gap(token, next) {
                break;
            }
            left.push(token);
        }
        left.reverse();
        let mut first = at + 1;
        // "the X and THE Y": each side a noun phrase of its own.
        let whole = tokens.get(first).is_some_and(|t| {
            ARTICLES.contains(&t.lower().as_str()) || (dutch && matches!(t.lower().as_str(), "het" | "de"))
        });
        if whole {
            first += 1;
        }
        let mut right: Vec<&Token<'_>> = Vec::new();
        for (index, token) in tokens.iter().enumerate().skip(first) {
            if !content(token) || (index > first && !gap(&tokens[index - 1], token)) {
                break;
            }
            right.push(token);
        }
        let (Some(last_left), Some(first_right)) = (left.last(), right.first()) else { return None };
        let same = |a: &Token<'_>, b: &Token<'_>| a.lower() == b.lower();
        let (left, right) = if whole {
            (&left[..], &right[..])
        } else if let Some(k) = right.iter().position(|t| same(t, last_left)).filter(|&k| k > 0) {
            // A shared head: as many words on the left as on the right.
            let n = (k + 1).min(left.len());
            (&left[left.len() - n..], &right[..=k])
        } else if let Some(j) = left.iter().position(|t| same(t, first_right)) {
            let n = (left.len() - j).min(right.len());
            (&left[j..], &right[..n])
        } else {
            (&left[left.len() - 1..], &right[..1])
        };
        let index = |t: &Token<'_>| tokens.iter().position(|o| o.start == t.start).unwrap_or(0);
        let (from, to) = (index(left[0]), index(left[left.len() - 1]));
        let holds_focus = tokens[from..=to].iter().any(|t| t.lower() == head);
        let after_focus =
            from >= 2 && tokens[from - 2].lower() == head && OF.contains(&tokens[from - 1].lower().as_str());
        if !holds_focus && !after_focus {
            return None;
        }
        let (left_start, left_end) = (left[0].start, left[left.len() - 1].end);
        let (right_start, right_end) = (right[0].start, right[right.len() - 1].end);
        // "cash and cash equivalents": one side inside the other is a term.
        if text[left_start..left_end].to_lowercase() == text[right_start..right_end].to_lowercase() {
            return None;
        }
        let first = format!("{}{}", &text[..left_end], &text[right_end..]);
        let second = format!("{}{}", &text[..left_start], &text[right_start..]);
        Some(Distributed {
            parts: [as_question(&first), as_question(&second)],
            joined: text[left_start..right_end].to_owned(),
        })
    }
}

fn independent(sub_questions: Vec<String>) -> Decomposition {
    Decomposition { pattern: DecompositionPattern::Independent, sub_questions }
}

fn count_words(text: &str) -> usize {
    tokenize(text).len()
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Trims, drops a trailing comma, capitalises and ends with a question mark.
fn as_question(text: &str) -> String {
    let trimmed = text.trim().trim_end_matches([',', ';']).trim_end();
    let mut out = capitalize(trimmed);
    if !out.ends_with(['?', '!', '.']) {
        out.push('?');
    } else if out.ends_with('.') {
        out.pop();
        out.push('?');
    }
    out
}

/// Splits "What is X? When is Y?" at question marks followed by more text.
/// A part counts as a question when it ends with `?` or starts with a question
/// word; an instruction ("Give the date.") stays attached to the question
/// before it.
fn split_question_marks(text: &str, question_start: &Regex) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    for part in text.split_inclusive('?').map(str::trim).filter(|p| !p.is_empty()) {
        let is_question = part.ends_with('?') || question_start.is_match(part);
        match parts.last_mut() {
            Some(last) if !is_question || count_words(part) < 2 => {
                last.push(' ');
                last.push_str(part);
            }
            _ => parts.push(part.to_owned()),
        }
    }
    if parts.len() < 2 {
        return Vec::new();
    }
    parts.iter().map(|p| as_question(p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(question: &str, expect: (DecompositionPattern, &[&str])) {
        let rules = DecomposeRules::new();
        let (decomposition, _) = rules.decompose(question, Some("en"));
        assert_eq!(
            (decomposition.pattern, decomposition.sub_questions.as_slice()),
            (expect.0, &expect.1.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>()[..]),
            "{question}"
        );
    }

    use DecompositionPattern::{Conditional, Independent, Single, Unified};

    #[test]
    fn splits_real_questions() {
        check("What is the premium and when is it due?", (Independent, &["What is the premium?", "When is it due?"]));
        check("What is the premium? When is it due?", (Independent, &["What is the premium?", "When is it due?"]));
        check(
            "Who is the insurer, and what is the policy number and how much is the deductible?",
            (Independent, &["Who is the insurer?", "What is the policy number?", "How much is the deductible?"]),
        );
    }

    #[test]
    fn keeps_noun_pairs_whole() {
        check("What are the exclusions and limits?", (Unified, &[]));
        check("What are the terms & conditions?", (Unified, &[]));
        check("Which premiums are due and are unpaid?", (Single, &[]));
        check("What is on page 2 and page 7?", (Single, &[]));
        check("What is the total amount?", (Single, &[]));
    }

    #[test]
    fn coordinations_distribute() {
        let rules = DecomposeRules::new();
        let parts = |q: &str, focus: &str| rules.distribute(q, focus, Some("en")).map(|d| d.parts.to_vec());
        let pair = |a: &str, b: &str| Some(vec![a.to_owned(), b.to_owned()]);
        assert_eq!(
            parts("What are the record date and the payment date?", "record date"),
            pair("What are the record date?", "What are the payment date?")
        );
        assert_eq!(
            parts("How many days of pre-hospitalisation and post-hospitalisation expenses are paid?", "days"),
            pair(
                "How many days of pre-hospitalisation expenses are paid?",
                "How many days of post-hospitalisation expenses are paid?"
            )
        );
        assert_eq!(
            parts("How long are the open seminar and the question-and-answer session?", "open seminar"),
            pair("How long are the open seminar?", "How long are the question-and-answer session?")
        );
        assert_eq!(
            parts("What are Tier 1 and Tier 4 called?", "tier 1"),
            pair("What are Tier 1 called?", "What are Tier 4 called?")
        );
        let german = rules.distribute(
            "Wie lauten die Kundennummer und die Vertragsnummer auf dieser Rechnung?",
            "kundennummer",
            Some("de"),
        );
        assert_eq!(
            german.map(|d| d.parts.to_vec()),
            pair(
                "Wie lauten die Kundennummer auf dieser Rechnung?",
                "Wie lauten die Vertragsnummer auf dieser Rechnung?"
            )
        );
        let dutch =
            rules.distribute("Wat zijn het klantnummer en het ordernummer op deze factuur?", "klantnummer", Some("nl"));
        assert_eq!(
            dutch.map(|d| d.parts.to_vec()),
            pair("Wat zijn het klantnummer op deze factuur?", "Wat zijn het ordernummer op deze factuur?")
        );
        assert_eq!(parts("What is the total amount?", "total amount"), None);
        assert_eq!(parts("What is cash and cash equivalents?", "cash"), None);
        let joined = rules.distribute(
            "How many days of pre-hospitalisation and post-hospitalisation expenses are paid?",
            "days",
            Some("en"),
        );
        assert_eq!(joined.map(|d| d.joined).as_deref(), Some("pre-hospitalisation and post-hospitalisation"));
        assert_eq!(parts("What is the premium, and when is it due?", "premium"), None);
        // Not what is asked: a restriction, a pair of verbs.
        assert_eq!(parts("Where can students go for help with tuition fees and financial matters?", "students"), None);
        assert_eq!(parts("What happens when you press and hold the Down button?", "happens"), None);
    }

    #[test]
    fn instructions_stay_attached() {
        check("When does the policy expire? Give the date.", (Single, &[]));
        check("What is the premium? when is it due", (Independent, &["What is the premium?", "When is it due?"]));
        check(
            "How many factories supplied Nike, and in how many countries were they located?",
            (Independent, &["How many factories supplied Nike?", "In how many countries were they located?"]),
        );
        check(
            "Who audits Activision Blizzard and since what year?",
            (Independent, &["Who audits Activision Blizzard?", "Since what year?"]),
        );
        check(
            "How many employees did Corning have, and across how many countries were they spread?",
            (Independent, &["How many employees did Corning have?", "Across how many countries were they spread?"]),
        );
    }

    #[test]
    fn conditionals() {
        check(
            "If the claim is late, what is the penalty?",
            (Conditional, &["If the claim is late", "What is the penalty?"]),
        );
    }

    #[test]
    fn a_preposition_of_time_opens_the_second_question() {
        check(
            "Au-delà de quelle part du revenu, et pendant combien de temps, la reprise suspend-elle les indemnités ?",
            (
                Independent,
                &[
                    "Au-delà de quelle part du revenu?",
                    "Pendant combien de temps, la reprise suspend-elle les indemnités ?",
                ],
            ),
        );
    }

    #[test]
    fn dutch_split() {
        check(
            "Hoeveel BTW is er berekend, en wat is het totaalbedrag inclusief BTW?",
            (Independent, &["Hoeveel BTW is er berekend?", "Wat is het totaalbedrag inclusief BTW?"]),
        );
    }

    #[test]
    fn french_split() {
        let rules = DecomposeRules::new();
        let (d, _) = rules.decompose("Quel est le montant de la prime et quand est-elle due ?", Some("fr"));
        assert_eq!(d.pattern, Independent);
        assert_eq!(d.sub_questions, ["Quel est le montant de la prime?", "Quand est-elle due ?"]);
    }
}
