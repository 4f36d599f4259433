//! Follow-up questions: "And when is it due?" leans on the previous turn.
//! A cheap regex of referring expressions (it, this, that one, the same,
//! celui-ci, ese, dasselbe, это, ...) decides whether to try — it errs on
//! the side of trying — and [`rewrite_follow_up`] substitutes the first
//! referring expression with the main noun phrase of the last turn that has
//! one, deterministically. The rewrite is for retrieval only (it goes to
//! `retrieval.rewrites`); the generation brief keeps the user's words. When
//! nothing can be substituted the caller keeps the original sentence.

use std::sync::LazyLock;

use regex::Regex;

use crate::lexicon::{collapse_whitespace, detect_language, is_stop, strip_clitic, tokenize};

static REFERRING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:that\s+one|this\s+one|the\s+same(?:\s+one)?|its|it|this|that|these|those|they|them|celui-ci|celle-ci|celui-là|celle-là|ceux-ci|celles-ci|ce\s+dernier|cette\s+derni[èe]re|le\s+m[êe]me|la\s+m[êe]me|cela|ça|lo\s+mismo|el\s+mismo|la\s+misma|ese|esa|eso|esos|esas|esto|dasselbe|derselbe|dieselbe|dies|dieses|das|это|этот|эта|эти|тот\s+же|то\s+же|он|она|оно|его|её)\b",
    )
    .expect("referring-expression regex compiles")
});

/// Whether `question` contains a referring expression, i.e. may lean on an
/// earlier turn. Deliberately generous: a false positive costs one rewrite
/// that retrieval may ignore; a false negative loses the question.
pub fn is_follow_up(question: &str) -> bool {
    REFERRING.is_match(question)
}

/// `question` made self-contained for retrieval: its first referring
/// expression replaced by the main noun phrase (the first run of adjacent
/// content words) of the most recent turn in `previous_turns` that has one.
/// `None` when the question has no referring expression or no earlier turn
/// offers a noun phrase.
///
/// ```
/// use docintel_question::rewrite_follow_up;
/// let turns = ["What is the annual premium?".to_owned()];
/// assert_eq!(rewrite_follow_up("When is it due?", &turns).as_deref(), Some("When is the annual premium due?"));
/// assert_eq!(rewrite_follow_up("What is the deductible?", &turns), None);
/// ```
pub fn rewrite_follow_up(question: &str, previous_turns: &[String]) -> Option<String> {
    let found = REFERRING.find(question)?;
    let phrase = previous_turns.iter().rev().find_map(|turn| main_noun_phrase(turn))?;
    let expression = found.as_str().to_lowercase();
    let english = detect_language(question, &tokenize(question)).is_none_or(|l| l == "en");
    let replacement = if !english {
        phrase
    } else if expression == "its" {
        format!("the {phrase}'s")
    } else {
        format!("the {phrase}")
    };
    let replacement = if found.start() == 0 { capitalise(&replacement) } else { replacement };
    let rewritten = format!("{}{replacement}{}", &question[..found.start()], &question[found.end()..]);
    (rewritten != question).then_some(rewritten)
}

/// The rewrite a parse of `question` asked after `previous_turns` makes
/// (what [`crate::RuleParser::parse_with_history`] puts in
/// `retrieval.rewrites`): the question, whitespace collapsed as the parser
/// does, when it has earlier turns and a referring expression
/// ([`is_follow_up`]), made self-contained by [`rewrite_follow_up`]; `None`
/// otherwise. Pure: the same question and turns always give the same rewrite.
///
/// ```
/// use docintel_question::follow_up_rewrite;
/// let turns = ["What is the annual premium?".to_owned()];
/// assert_eq!(follow_up_rewrite("When is  it due?", &turns).as_deref(), Some("When is the annual premium due?"));
/// assert_eq!(follow_up_rewrite("When is it due?", &[]), None);
/// ```
pub fn follow_up_rewrite(question: &str, previous_turns: &[String]) -> Option<String> {
    let question = collapse_whitespace(question);
    if previous_turns.is_empty() || !is_follow_up(&question) {
        return None;
    }
    rewrite_follow_up(&question, previous_turns)
}

/// The first run of adjacent content words of `turn` (the object right after
/// the question frame: "the annual premium" in "What is the annual premium
/// for 2023?"), lower-cased; `None` when it has no content word.
fn main_noun_phrase(turn: &str) -> Option<String> {
    let tokens = tokenize(turn);
    let language = detect_language(turn, &tokens);
    let mut run: Vec<String> = Vec::new();
    let mut previous_end = None;
    for token in &tokens {
        let lower = token.lower();
        let word = strip_clitic(&lower);
        let content = word.chars().count() > 1 && !is_stop(word, language) && !REFERRING.is_match(word);
        let adjacent = previous_end.is_some_and(|end| turn[end..token.start].chars().all(char::is_whitespace));
        if !run.is_empty() && (!content || !adjacent) {
            break;
        }
        if content {
            run.push(word.to_owned());
        }
        previous_end = Some(token.end);
    }
    (!run.is_empty()).then(|| run.join(" "))
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(question: &str, turns: &[&str], expect: Option<&str>) {
        let turns: Vec<String> = turns.iter().map(|t| (*t).to_owned()).collect();
        assert_eq!(rewrite_follow_up(question, &turns).as_deref(), expect, "{question} after {turns:?}");
    }

    #[test]
    fn referring_expressions_are_detected_in_five_languages() {
        for question in [
            "When is it due?",
            "And that one?",
            "Is the same true for theft?",
            "Quel est le montant de celui-ci ?",
            "¿Cuándo vence ese?",
            "Wann ist dasselbe fällig?",
            "Когда это нужно оплатить?",
        ] {
            assert!(is_follow_up(question), "{question}");
        }
        for question in ["What is the total amount?", "Quelle est la prime annuelle ?", "Italic items?"] {
            assert!(!is_follow_up(question), "{question}");
        }
    }

    #[test]
    fn the_referring_expression_becomes_the_last_noun_phrase() {
        let premium = &["What is the annual premium?"];
        check("When is it due?", premium, Some("When is the annual premium due?"));
        check("What is its due date?", premium, Some("What is the annual premium's due date?"));
        check("It is paid how?", premium, Some("The annual premium is paid how?"));
        check("And that one for 2022?", &["List the exclusions in Article 18"], Some("And the exclusions for 2022?"));
        check(
            "Quand celle-ci est-elle due ?",
            &["Quelle est la prime annuelle ?"],
            Some("Quand prime annuelle est-elle due ?"),
        );
        // The most recent turn with a noun phrase wins; empty turns are skipped.
        check(
            "When is it due?",
            &["What is the deductible?", "What is the annual premium?", "??"],
            Some("When is the annual premium due?"),
        );
    }

    #[test]
    fn nothing_to_substitute_keeps_the_original() {
        check("What is the deductible?", &["What is the annual premium?"], None);
        check("When is it due?", &[], None);
        check("When is it due?", &["What is it?"], None);
    }
}
