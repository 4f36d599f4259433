//! What a question restricts its answer to: the named entities, periods and
//! qualifiers its wording carries ("Antarctica", "fiscal 2019", "Plan B",
//! "English-to-Japanese"). The reader only answers from evidence that
//! carries each of them (or from a document they name as a whole); a
//! missing one is named in the refusal.
//!
//! Found by the form of the words, never by a list of expected entities:
//! - years (`2019`, `FY2019` → `2019`);
//! - quoted phrases (`'Hospital'`);
//! - runs of capitalised words or acronyms (`Chief Marketing Officer`,
//!   `United States`, `BLEU`), joined over `of`/`and`/`&`/`de` between two
//!   capitalised words, with a short code after them (`Plan B`, `iOS 7`,
//!   `Zone V`), the owner of a possessive (`Nike's` → `Nike`), and the
//!   capitalised parts of a hyphenated compound (`English-to-Japanese` →
//!   `English`, `Japanese`);
//! - not the question's first word (unless an acronym or an owner), not a
//!   question word, month or weekday, and nothing at all from capitals when
//!   the question is written in title case or capitals (then only years and
//!   quotes);
//! - nothing from what the question says about computing or writing the
//!   answer: a definition (`DPO is defined as: 365 * … / (COGS + …)`, `CCC
//!   (cash conversion cycle)`, an abbreviation in parentheses), a later
//!   sentence that sets the answer's format (`Answer 'yes' or 'no'.`, `…
//!   formatted as a list like ['Page 2']`), a bracketed list of quoted
//!   examples (`["p1","p2"]`), or the document itself (`PDF`).

use crate::lexicon::{Token, is_stop};

const MONTHS_AND_DAYS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "janvier",
    "février",
    "mars",
    "avril",
    "mai",
    "juin",
    "juillet",
    "août",
    "septembre",
    "octobre",
    "novembre",
    "décembre",
];

/// Legal forms: part of a name, never a constraint alone.
const LEGAL_FORMS: &[&str] =
    &["inc", "corp", "co", "llc", "ltd", "plc", "gmbh", "ag", "sa", "sas", "bv", "nv", "llp", "lp", "pvt", "limited"];

/// Joining words allowed inside a run of capitalised words.
const JOINERS: &[&str] = &["of", "and", "&", "de", "du", "des", "la", "le", "van", "von", "der", "for"];

/// Titles written before a name ("Mr. R.A. Shah", "Dr. Lee"): never a
/// constraint of their own, and the full stop after them ends no sentence.
const HONORIFICS: &[&str] = &["mr", "mrs", "ms", "dr", "prof", "messrs", "mme", "mlle", "shri", "smt"];

/// Whether the token `at` is a name's initials followed by their full stop:
/// "L" in "Melvin L. Hecktman", "R.A" in "R.A. Shah", "K.K" in "K.K. Modi".
fn is_initial(text: &str, tokens: &[Token<'_>], at: usize) -> bool {
    let token = &tokens[at];
    text[token.end..].starts_with('.')
        && token.text.split('.').all(|part| {
            let mut chars = part.chars();
            chars.next().is_some_and(char::is_uppercase) && chars.next().is_none()
        })
}

/// Whether only a full stop and spaces separate the tokens `a` and `b`.
fn stop_between(text: &str, tokens: &[Token<'_>], a: usize, b: usize) -> bool {
    text[tokens[a].end..tokens[b].start].strip_prefix('.').is_some_and(|rest| rest.chars().all(char::is_whitespace))
}

fn is_capitalised(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_uppercase)
}

fn is_acronym(word: &str) -> bool {
    let upper = word.chars().filter(|c| c.is_uppercase()).count();
    upper >= 2 && word.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '&')
}

/// A short code after a name (`B` in `Plan B`, `7` in `iOS 7`, `3` in `Q3`).
fn is_code(word: &str) -> bool {
    let n = word.chars().count();
    (1..=3).contains(&n) && word.chars().all(|c| c.is_ascii_digit() || c.is_uppercase())
}

/// A word written like a name: capitalised, an acronym, or with a capital
/// inside (`iOS`, `3M`, `eBay`).
fn is_name_like(word: &str) -> bool {
    is_capitalised(word) || is_acronym(word) || word.chars().skip(1).any(char::is_uppercase)
}

/// A code of a capitalised or upper-case part and a part that starts with
/// a digit, joined by one hyphen: "AT-7", "COVID-19", "C-130J".
fn is_hyphenated_code(word: &str) -> bool {
    let mut parts = word.split('-');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(name), Some(code), None) => {
            is_name_like(name)
                && name.chars().all(char::is_alphanumeric)
                && code.starts_with(|c: char| c.is_ascii_digit())
                && code.chars().all(char::is_alphanumeric)
        }
        _ => false,
    }
}

/// The year a word writes (`2019`, `FY2019` → `2019`), between 1900 and
/// 2099.
pub(crate) fn year_of(word: &str) -> Option<String> {
    let lower = word.to_lowercase();
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    // "Q22023": a quarter written against its year; "FY2023Q1", "2023Q1": the
    // same, the quarter after it (the year is what the evidence must carry).
    let quarter_after = |s: &str| s.len() == 6 && s.as_bytes()[4] == b'q' && matches!(s.as_bytes()[5], b'1'..=b'4');
    let digits = match lower.strip_prefix('q') {
        Some(rest) if rest.len() == 5 && rest.starts_with(['1', '2', '3', '4']) => &rest[1..],
        _ => {
            let bare = lower.strip_prefix("fy").unwrap_or(&lower);
            if quarter_after(bare) { &bare[..4] } else { bare }
        }
    };
    (digits.len() == 4 && digits.starts_with(['1', '2']) && all_digits(digits))
        .then(|| digits.to_owned())
        .filter(|y| ("1900".."2100").contains(&y.as_str()))
}

/// Quoted phrases of at most five words, with where they start.
fn quoted(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    for (open, close) in [('"', '"'), ('“', '”'), ('‘', '’'), ('«', '»'), ('\'', '\'')] {
        let mut rest = text;
        while let Some(a) = rest.find(open) {
            // An apostrophe inside a word ("Nike's") opens nothing.
            let before = rest[..a].chars().next_back();
            let after = &rest[a + open.len_utf8()..];
            if open == '\'' && before.is_some_and(char::is_alphanumeric) {
                rest = after;
                continue;
            }
            let Some(b) = after.find(close) else { break };
            let inner = after[..b].trim();
            let at = text.len() - after.len();
            if !inner.is_empty() && inner.split_whitespace().count() <= 5 && !out.iter().any(|(_, q)| q == inner) {
                out.push((at, inner.to_owned()));
            }
            rest = &after[b + close.len_utf8()..];
        }
    }
    out
}

/// Words naming the document itself, never a restriction of the answer.
const DOCUMENT_WORDS: &[&str] = &["pdf", "document", "docx", "file"];

/// Words of a sentence that sets how to write the answer.
const FORMAT_WORDS: &[&str] = &[
    "answer",
    "answers",
    "format",
    "formatted",
    "respond",
    "reply",
    "return",
    "round",
    "rounded",
    "express",
    "expressed",
    "répondez",
    "réponse",
    "responda",
    "antworten",
];

/// Where a definition starts inside a sentence.
const DEFINITION_MARKERS: &[&str] =
    &["defined as", "is calculated as", "calculated as", "computed as", "is the ratio of", " = ", "défini comme"];

/// Byte ranges of `text` that say how to compute or write the answer (see
/// the module docs): a definition to the end of its sentence, a sentence
/// after the first that sets the format, an abbreviation in parentheses.
fn instruction_ranges(text: &str) -> Vec<(usize, usize)> {
    let lower = text.to_ascii_lowercase();
    let mut sentences: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    let bytes = lower.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let end_mark = matches!(b, b'.' | b'?' | b'!') && bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace());
        if end_mark {
            sentences.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < lower.len() {
        sentences.push((start, lower.len()));
    }
    let has_word = |part: &str, word: &str| part.split(|c: char| !c.is_alphanumeric()).any(|w| w == word);
    let mut out = Vec::new();
    for (k, &(a, b)) in sentences.iter().enumerate() {
        let part = &lower[a..b];
        if k > 0 && FORMAT_WORDS.iter().any(|w| has_word(part, w)) {
            out.push((a, b));
            continue;
        }
        if part.trim_start().starts_with("define ") {
            out.push((a, b));
            continue;
        }
        // A later sentence that defines ("DPO is defined as …") is wholly
        // about computing; in the question's own sentence, from the marker.
        if let Some(p) = DEFINITION_MARKERS.iter().filter_map(|m| part.find(m)).min() {
            out.push((if k > 0 { a } else { a + p }, b));
        }
    }
    // "['Page 2', 'Page 4']", "[\"p1\",\"p2\"]": a bracketed list of quoted
    // items shows the answer's form by example (what is left of "formatted as a
    // list like […]" once the format phrase is cut), never a restriction.
    let mut rest = 0;
    while let Some(open) = text[rest..].find('[') {
        let at = rest + open;
        let Some(close) = text[at..].find(']') else { break };
        let inner = &text[at + 1..at + close];
        if inner.contains(['\'', '"', '\u{2018}', '\u{201c}']) {
            out.push((at, at + close + 1));
        }
        rest = at + close + 1;
    }
    // "(DPO)", "(CCC)": an abbreviation the question spells out before it.
    let mut rest = 0;
    while let Some(open) = text[rest..].find('(') {
        let at = rest + open;
        let Some(close) = text[at..].find(')') else { break };
        let inner = &text[at + 1..at + close];
        if is_acronym(inner) && !inner.contains(' ') {
            out.push((at, at + close + 1));
        }
        rest = at + close + 1;
    }
    out
}

/// The constraints of a question (see the module docs), in question order,
/// each once.
pub(crate) fn constraints(text: &str, tokens: &[Token<'_>], language: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let push = |c: String, out: &mut Vec<String>| {
        let c = c.trim().to_owned();
        // A single letter, a period reference ("Q2", "FY", "H1", "FY21")
        // or a title-cased phrase of four words or more restricts nothing
        // reliably.
        let period_ref = {
            let lower = c.to_lowercase();
            lower == "fy"
                || (lower.len() <= 4
                    && (lower.starts_with('q') || lower.starts_with('h') || lower.starts_with("fy"))
                    && lower.chars().skip(1).any(|ch| ch.is_ascii_digit())
                    && lower.chars().filter(|ch| ch.is_alphabetic()).count() <= 2)
        };
        let long = c.split_whitespace().count() >= 4;
        if c.chars().count() > 1 && !period_ref && !long && !out.iter().any(|x| x.eq_ignore_ascii_case(&c)) {
            out.push(c);
        }
    };
    let skipped = instruction_ranges(text);
    let skip = |at: usize| skipped.iter().any(|&(a, b)| at >= a && at < b);
    for (at, q) in quoted(text) {
        if !skip(at) {
            push(q, &mut out);
        }
    }
    // Title case or capitals: function words after the first are
    // capitalised too, so capitals say nothing.
    let function: Vec<&Token<'_>> =
        tokens.iter().skip(1).filter(|t| is_stop(&t.lower(), language) && t.text.len() > 1).collect();
    let capital_function = function.iter().filter(|t| is_capitalised(t.text)).count();
    // A question written in capitals only ("WHAT IS ITC LIMITED LOGO
    // COLOR?") is title case at its extreme.
    let capitals_only = tokens.len() >= 3 && !text.chars().any(char::is_lowercase);
    let title_case = capitals_only || (capital_function >= 2 && capital_function * 2 >= function.len());
    // German capitalises every noun: capitals say nothing there either.
    let nouns_capitalised = language == Some("de");
    // A word after a sentence end inside the question ("... Return an
    // integer") is capitalised for the sentence, not as a name.
    // The full stop of an initial or a title ("Melvin L. Hecktman", "Mr.
    // Shah") ends no sentence.
    let abbreviated = |i: usize| {
        i > 0
            && stop_between(text, tokens, i - 1, i)
            && (is_initial(text, tokens, i - 1) || HONORIFICS.contains(&tokens[i - 1].lower().as_str()))
    };
    let sentence_start =
        |i: usize| i == 0 || (text[..tokens[i].start].trim_end().ends_with(['.', '?', '!', ':']) && !abbreviated(i));
    let possessive = |i: usize| {
        tokens.get(i + 1).is_some_and(|n| n.text == "s")
            && text[tokens[i].end..tokens[i + 1].start].contains(['\'', '’'])
    };
    let mut i = 0;
    while i < tokens.len() {
        let word = tokens[i].text;
        if skip(tokens[i].start)
            || DOCUMENT_WORDS.contains(&word.to_lowercase().as_str())
            || (HONORIFICS.contains(&word.to_lowercase().as_str())
                && tokens.get(i + 1).is_some_and(|t| is_capitalised(t.text)))
        {
            i += 1;
            continue;
        }
        if let Some(year) = year_of(word) {
            push(year, &mut out);
            i += 1;
            continue;
        }
        let lower = word.to_lowercase();
        let coded = is_acronym(word) || word.chars().any(|c| c.is_ascii_digit());
        let starts = is_name_like(word)
            && !title_case
            && (!nouns_capitalised || coded)
            && !MONTHS_AND_DAYS.contains(&lower.as_str())
            && !LEGAL_FORMS.contains(&lower.trim_end_matches('.'))
            && (!is_stop(&lower, language) || is_acronym(word))
            && (!sentence_start(i) || is_acronym(word) || possessive(i));
        if !starts {
            i += 1;
            continue;
        }
        // A code written with a hyphen is one identifier: a name part and a
        // number ("AT-7", "SR-13", "F-35", "C-130J", "GPT-4").
        if is_hyphenated_code(word) {
            push(word.to_owned(), &mut out);
            i += if possessive(i) { 2 } else { 1 };
            continue;
        }
        // A negated name stays negated: "non-U.S. sales" restricts to
        // what is not U.S., the opposite of "U.S.". A bound prefix and its
        // word are one name ("Co-Host", which the reader reads as one word,
        // `cohost`): "Host" alone is printed nowhere in a co-hosting
        // agreement.
        if let Some((prefix, rest)) = word.split_once('-')
            && ((prefix.eq_ignore_ascii_case("non") && is_name_like(rest))
                || (docintel_schema::text::is_bound_prefix(prefix)
                    && !rest.contains('-')
                    && rest.chars().next().is_some_and(char::is_alphabetic)
                    && rest.chars().count() > 1))
        {
            push(word.to_owned(), &mut out);
            i += if possessive(i) { 2 } else { 1 };
            continue;
        }
        // A hyphenated word stands alone: its capitalised parts
        // ("English-to-Japanese", "BTW-nummer").
        if word.contains('-') {
            for part in word.split('-').filter(|p| is_name_like(p) && p.chars().count() > 1) {
                if !LEGAL_FORMS.contains(&part.to_lowercase().as_str()) {
                    push(part.to_owned(), &mut out);
                }
            }
            i += if possessive(i) { 2 } else { 1 };
            continue;
        }
        // A name's initials run on past their full stop: "Melvin L.
        // Hecktman", "Mr. R.A. Shah"; initials that open the run with no
        // title before them are an abbreviation ("U.S. Best Buy").
        let person = !is_initial(text, tokens, i)
            || (i > 0 && HONORIFICS.contains(&tokens[i - 1].lower().as_str()) && stop_between(text, tokens, i - 1, i));
        // A run of capitalised words, with joiners between two of them.
        let mut end = i + 1;
        let mut last_joiner: Option<usize> = None;
        loop {
            if end < tokens.len() && possessive(end - 1) {
                break;
            }
            let gap_ok = |a: usize, b: usize| text[tokens[a].end..tokens[b].start].chars().all(char::is_whitespace);
            let joinable = |k: usize| {
                is_capitalised(tokens[k].text)
                    && !tokens[k].text.contains('-')
                    && year_of(tokens[k].text).is_none()
                    && !LEGAL_FORMS.contains(&tokens[k].lower().trim_end_matches('.'))
            };
            let initial_then_name = person
                && end < tokens.len()
                && is_initial(text, tokens, end - 1)
                && stop_between(text, tokens, end - 1, end)
                && joinable(end);
            if end < tokens.len() && (gap_ok(end - 1, end) || initial_then_name) && joinable(end) {
                end += 1;
            } else if end + 1 < tokens.len()
                && JOINERS.contains(&tokens[end].lower().as_str())
                // "COGS for Microsoft", "Sales for AMCOR": a single word
                // before "for" is what is asked of the name after it.
                && (tokens[end].lower() != "for" || end - i >= 2)
                && gap_ok(end - 1, end)
                && gap_ok(end, end + 1)
                && joinable(end + 1)
            {
                last_joiner = Some(end);
                end += 2;
            } else if end < tokens.len()
                && gap_ok(end - 1, end)
                && is_code(tokens[end].text)
                && year_of(tokens[end].text).is_none()
            {
                end += 1;
                break;
            } else {
                break;
            }
        }
        // "CEO of Sam's Club", "firm ID of Pfizer's accountant": the
        // possessive's owner begins a new phrase, so what comes before the
        // joiner is a constraint of its own, not one with the owner.
        match last_joiner.filter(|_| possessive(end - 1)) {
            Some(j) => {
                push(text[tokens[i].start..tokens[j - 1].end].to_owned(), &mut out);
                push(text[tokens[j + 1].start..tokens[end - 1].end].to_owned(), &mut out);
            }
            None => {
                // A title before a name with initials ("Managing Director
                // K.K. Modi", "Chairman Y. C. Deveshwar"): the name is the
                // constraint, from its initials when they are two letters or
                // more, else from the given name before a single initial
                // ("Melvin L. Hecktman").
                let first_initial = (i..end.saturating_sub(1))
                    .find(|&k| is_initial(text, tokens, k) && stop_between(text, tokens, k, k + 1));
                let start = match first_initial {
                    Some(k) => {
                        let letters: usize = (k..end)
                            .take_while(|&m| is_initial(text, tokens, m))
                            .map(|m| tokens[m].text.chars().filter(char::is_ascii_alphabetic).count())
                            .sum();
                        if letters >= 2 || k == i { k } else { k - 1 }
                    }
                    None => i,
                };
                push(text[tokens[start].start..tokens[end - 1].end].to_owned(), &mut out);
            }
        }
        i = if possessive(end - 1) { end + 1 } else { end };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexicon::tokenize;

    fn check(question: &str, expect: &[&str]) {
        let tokens = tokenize(question);
        assert_eq!(constraints(question, &tokens, Some("en")), expect, "{question}");
    }

    #[test]
    fn entities_periods_and_qualifiers() {
        check("How much revenue did Nike make in Antarctica in fiscal 2019?", &["Nike", "Antarctica", "2019"]);
        check(
            "What BLEU score does the Transformer reach on English-to-Japanese translation?",
            &["BLEU", "Transformer", "English", "Japanese"],
        );
        check("What is the name of Nike's chief executive officer?", &["Nike"]);
        check("Who is Verizon's Chief Marketing Officer?", &["Verizon", "Chief Marketing Officer"]);
        check("What are the room rent limits for Plan B?", &["Plan B"]);
        check("Is vietnam's adoption rate of iOS 7 higher than the global average?", &["iOS 7"]);
        check("What was the FY2018 capital expenditure of 3M?", &["2018", "3M"]);
        check("How does the policy define a 'Hospital'?", &["Hospital"]);
        check("How many people did Adobe employ as of December 2, 2022?", &["Adobe", "2022"]);
        check("What is the total amount?", &[]);
        check("What Is The Total Amount Due For Acme?", &[]);
        check("Which university did the candidate attend?", &[]);
        check("In which city is the service provider, Amazon Web Services, Inc., located?", &["Amazon Web Services"]);
        check("Wat is het BTW-nummer van Coolblue?", &["BTW", "Coolblue"]);
        check("What are the related controls of AT-7?", &["AT-7"]);
        // A bound prefix and its word are one name, as the reader reads them.
        check("When are Co-Host's payments to NAI due?", &["Co-Host", "NAI"]);
        check("Which plans does T-Mobile offer?", &["T-Mobile"]);
        check("How many C-130J aircraft were delivered?", &["C-130J"]);
        check("How many grams of coffee fit? Return me an integer.", &[]);
        check("What was the Q2 revenue in FY21 in Table E?", &["Table E"]);
        check("What is the Highest EBITDAR Contribution for MGM this year?", &[]);
        // A name's initials and the titles before it.
        check("On page 5, what home address did Melvin L. Hecktman give?", &["Melvin L. Hecktman"]);
        check("What is Jim C. Klauer's position at Costco?", &["Jim C. Klauer", "Costco"]);
        check(
            "How many companies do Mr. R.A. Shah, Mr. S.V. Shanbhag, and Mr. C.M. Maniar hold directorships of?",
            &["R.A. Shah", "S.V. Shanbhag", "C.M. Maniar"],
        );
        check("Where did Dr. Lee study?", &["Lee"]);
        check("What did Managing Director K.K. Modi receive?", &["K.K. Modi"]);
        check("What was the pay of Chairman Y. C. Deveshwar?", &["Y. C. Deveshwar"]);
        check("How many U.S. Best Buy stores were in California?", &["U.S", "Best Buy", "California"]);
        // Initials that end a name are part of it, not a name of their own.
        check("Is Citibank N.A. the trustee?", &["Citibank N.A"]);
        // What the question says about computing or writing the answer.
        check(
            "What is Amazon's FY2017 days payable outstanding (DPO)? DPO is defined as: 365 * (average accounts payable) / (COGS + change in inventory).",
            &["Amazon", "2017"],
        );
        check("Is market CA03 part of the Bay Area? Answer 'yes' or 'no'.", &["CA03", "Bay Area"]);
        check(
            "List all pages on which the logo of CQC appears. The answer should be formatted as a list like ['Page 2', 'Page 4'].",
            &["CQC"],
        );
        // The example list alone, once a format phrase before it was cut.
        check("List all pages on which the logo of CQC locates. ['Page 2', 'Page 4'].", &["CQC"]);
        check("How many pages does the address appear on? List the pages, for example [\"p1\",\"p2\"]", &[]);
        check("On page 19 of the PDF, what diluted earnings per share is shown for 2014?", &["2014"]);
        check("What is the FY2016 COGS for Microsoft?", &["2016", "COGS", "Microsoft"]);
        check("Who funds the Centers for Disease Control?", &["Centers", "Disease Control"]);
        check("What share of revenues came from non-U.S. sales in fiscal 2019?", &["non-U.S", "2019"]);
        check("What was non-GAAP EPS?", &["non-GAAP", "EPS"]);
        check("Which region had the biggest drop in Q22023 revenues?", &["2023"]);
        check("How did the business perform in FY2023Q1?", &["2023"]);
        check("WHAT IS ITC LIMITED LOGO COLOR?", &[]);
        check("Who became CEO of Sam's Club?", &["CEO", "Sam", "Club"]);
        check("What is the PCAOB auditor firm ID of Pfizer's independent accountant?", &["PCAOB", "ID", "Pfizer"]);
        check(
            "Who is the Chief Executive Officer of Morgan Stanley's wealth unit?",
            &["Chief Executive Officer", "Morgan Stanley"],
        );
    }
}
