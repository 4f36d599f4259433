//! Labelled lists: a listing question that names a field ("Which controls
//! are listed as related to SC-1?") is answered by the line carrying that
//! field's label ("Related Controls: PM-9, PS-8, SA-8, SI-12."), one item per
//! element of the list after the colon, each citing the line it is on.
//!
//! A label qualifies when every one of its words is a word of the question
//! (plural or not); the label with the most words wins ("Related Controls"
//! over "Control"), then the first such line after a line an identifier of
//! the question opens ("SC-1 Policy and Procedures": the block the question
//! is about), then the passage ranked first, then the first line at or after
//! the passage's anchor. A list broken after a comma continues on the next
//! lines of the same passage.

use std::cmp::Reverse;

use docintel_schema::{AnswerValue, Item, KeywordSource, ParsedDocument, ParsedQuestion, Passage, Span, text};

/// At most this many words in a label; longer "labels" are sentences.
const MAX_LABEL_WORDS: usize = 5;

/// A labelled list found in the passages.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LabelledList {
    /// The label as written (`Related Controls`).
    pub(crate) label: String,
    /// One item per element, in order.
    pub(crate) items: Vec<Item<AnswerValue>>,
}

/// A word without a plural `s` (`controls` → `control`), lower-cased.
fn stem(word: &str) -> String {
    let word = word.to_lowercase();
    match word.strip_suffix('s') {
        Some(stem) if stem.len() >= 3 && !stem.ends_with('s') => stem.to_owned(),
        _ => word,
    }
}

fn words(text_in: &str) -> Vec<String> {
    text::normalize(text_in).split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(stem).collect()
}

/// The label and the value of `line` when it reads `Label: value` with a
/// short label of letters and spaces.
fn split_label(line: &str) -> Option<(&str, &str)> {
    let (label, value) = line.split_once(':')?;
    let label = label.trim();
    let n_words = label.split_whitespace().count();
    let letters_only = label.chars().all(|c| c.is_alphabetic() || c == ' ' || c == '-');
    (letters_only && (1..=MAX_LABEL_WORDS).contains(&n_words) && !value.trim().is_empty())
        .then(|| (label, value.trim()))
}

/// The labelled list the question asks for, if a passage holds one.
pub(crate) fn labelled_list(
    question: &ParsedQuestion,
    document: &ParsedDocument,
    passages: &[Passage],
) -> Option<LabelledList> {
    let asked: Vec<String> = words(&question.corrected_question);
    // Lines an identifier of the question opens ("AT-2 Literacy Training"):
    // the block the question is about starts there.
    let identifiers: Vec<String> = question
        .keywords
        .iter()
        .filter(|k| k.source == KeywordSource::Anchor && !k.is_regex)
        .map(|k| k.text.to_lowercase())
        .collect();
    let opens = |line: &str| {
        let line = line.trim_start().to_lowercase();
        identifiers.iter().any(|id| {
            line.strip_prefix(id.as_str()).is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
        })
    };
    let openers: Vec<u32> = passages
        .iter()
        .flat_map(|p| document.line_range(p.line_start, p.line_end))
        .filter(|l| opens(&l.text))
        .map(|l| l.line_id)
        .collect();
    // Best first: most label words, fewest lines after the nearest opener
    // above, passage rank, not before the passage's anchor, line id.
    let best = passages
        .iter()
        .enumerate()
        .flat_map(|(rank, passage)| {
            document.line_range(passage.line_start, passage.line_end).iter().map(move |line| (rank, passage, line))
        })
        .filter_map(|(rank, passage, line)| {
            let (label, _) = split_label(&line.text)?;
            let label_words = words(label);
            if label_words.is_empty() || !label_words.iter().all(|w| asked.contains(w)) {
                return None;
            }
            let after_opener =
                openers.iter().filter(|&&o| o <= line.line_id).map(|&o| line.line_id - o).min().unwrap_or(u32::MAX);
            let key =
                (Reverse(label_words.len()), after_opener, rank, line.line_id < passage.anchor_line, line.line_id);
            Some((key, rank, line.line_id))
        })
        .min_by_key(|(key, ..)| *key);
    let (_, rank, line_id) = best?;
    let passage = &passages[rank];
    let lines = document.line_range(line_id, passage.line_end);
    let (label, first_value) = split_label(&lines[0].text)?;
    // The value lines: the labelled one, then continuations while the list
    // ends with a separator.
    let mut value_lines = vec![(&lines[0], first_value)];
    for line in &lines[1..] {
        let previous = value_lines.last().map(|(_, v)| v.trim_end()).unwrap_or_default();
        if !(previous.ends_with(',') || previous.ends_with(';')) || split_label(&line.text).is_some() {
            break;
        }
        value_lines.push((line, line.text.as_str()));
    }
    let mut items = Vec::new();
    for (line, value) in value_lines {
        for part in value.split([',', ';']) {
            let part = part.trim().trim_end_matches('.').trim();
            if part.is_empty() {
                continue;
            }
            items.push(Item {
                value: AnswerValue::Text(part.to_owned()),
                text: Some(part.to_owned()),
                spans: vec![Span {
                    line_start: line.line_id,
                    line_end: line.line_id,
                    page: line.page,
                    quote: part.to_owned(),
                }],
            });
        }
    }
    (!items.is_empty()).then(|| LabelledList { label: label.to_owned(), items })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(texts: &[&str]) -> ParsedDocument {
        docintel_test_support::pages(&[texts]).build()
    }

    fn passage(start: u32, end: u32, anchor: u32) -> Passage {
        Passage {
            line_start: start,
            line_end: end,
            page: 1,
            score: 1.0,
            anchor_line: anchor,
            matched_keywords: vec![],
            pinned: true,
        }
    }

    fn question(text_in: &str) -> ParsedQuestion {
        let mut q = ParsedQuestion::unparsed(text_in, text_in);
        q.corrected_question = text_in.to_owned();
        q
    }

    const CATALOG: [&str; 12] = [
        "Related Controls: AC-1, AC-2.",
        "SC-1 Policy and Procedures",
        "Control:",
        "Develop a policy; review it.",
        "Discussion: Simply restating controls does not make a policy.",
        "Related Controls: PM-9, PS-8,",
        "SA-8, SI-12.",
        "SC-2 Separation of System and User Functionality",
        "Control: Separate user functionality.",
        "Related Controls: AC-6, SA-4.",
        "Notes: none",
        "end",
    ];

    #[test]
    fn the_labelled_line_after_the_anchor_answers_with_one_item_per_element() {
        let doc = document(&CATALOG);
        let q = question("Which controls are listed as related to SC-1 (Policy and Procedures)?");
        let list = labelled_list(&q, &doc, &[passage(1, 10, 2)]).unwrap();
        assert_eq!(list.label, "Related Controls");
        let texts: Vec<&str> = list.items.iter().map(|i| i.text.as_deref().unwrap()).collect();
        assert_eq!(texts, ["PM-9", "PS-8", "SA-8", "SI-12"], "the list continues after a trailing comma");
        assert_eq!(list.items[0].spans[0].line_start, 6);
        assert_eq!(list.items[3].spans[0].line_start, 7);
    }

    #[test]
    fn the_block_the_identifier_opens_wins_over_rank_and_anchor() {
        let doc = document(&CATALOG);
        let mut q = question("Which controls are listed as related to SC-2?");
        q.keywords.push(docintel_schema::Keyword {
            text: "SC-2".into(),
            weight: 1.0,
            source: KeywordSource::Anchor,
            is_regex: false,
            semantic_group: None,
        });
        // The passage's anchor is SC-1's heading; SC-2 opens line 8.
        let list = labelled_list(&q, &doc, &[passage(1, 12, 2)]).unwrap();
        assert_eq!(list.items[0].spans[0].line_start, 10, "{list:?}");
        assert_eq!(list.items.len(), 2);
    }

    #[test]
    fn a_label_must_be_made_of_question_words() {
        let doc = document(&CATALOG);
        // "Control:" alone qualifies for a question about controls, but loses
        // to the two-word label when both are present.
        let q = question("Which controls apply?");
        let list = labelled_list(&q, &doc, &[passage(8, 9, 8)]).unwrap();
        assert_eq!(list.label, "Control");
        // Nothing labelled with the question's words: no list.
        assert_eq!(labelled_list(&question("Who wrote the catalogue?"), &doc, &[passage(1, 12, 1)]), None);
        assert_eq!(split_label("Discussion: Simply restating"), Some(("Discussion", "Simply restating")));
        assert_eq!(split_label("see 3.1: the rule"), None, "digits make it a sentence, not a label");
        assert_eq!(split_label("Control:"), None, "no value after the colon");
    }
}
