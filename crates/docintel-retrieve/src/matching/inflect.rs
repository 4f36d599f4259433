//! English number inflection of a question word, so "members" finds "Card
//! Member", "repurchases" finds "Share Repurchase Program" and "segment"
//! finds "business segments".
//!
//! Regular plural and singular forms only, generated from the question's
//! word rather than by stemming every line of the document: the line cache
//! stays as it is, and a form that is not a word simply never matches on
//! word boundaries. Verb forms are left out: measured on FinanceBench, "close"
//! finding "closed" or "flow" finding "flowed" cost as many questions as
//! "expect" finding "expected" won. No derivation either ("retain" /
//! "retention"): that changes the word's class and belongs to the expert
//! dictionary.

/// `text` with each of its words in its other English spelling
/// ([`docintel_schema::text::other_spelling`]: "pre-hospitalisation" →
/// "pre-hospitalization"), `None` when no word has one.
pub(crate) fn other_spelling(text: &str) -> Option<String> {
    let mut changed = false;
    let mut out = String::with_capacity(text.len() + 2);
    let mut word = String::new();
    let mut flush = |word: &mut String, out: &mut String| {
        match docintel_schema::text::other_spelling(word) {
            Some(other) => {
                out.push_str(&other);
                changed = true;
            }
            None => out.push_str(word),
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    changed.then_some(out)
}

/// Words shorter than this keep their one form (too many short words are
/// forms of others: "us" / "use", "new" / "news").
const MIN_LEN: usize = 4;

/// The other regular number form of a lower-case English word: its singular
/// when it looks plural, else its plural. Empty for words it does not apply
/// to (digits, hyphens, short words, "-ing" forms).
pub(crate) fn english_forms(word: &str) -> Vec<String> {
    if word.len() < MIN_LEN || !word.bytes().all(|b| b.is_ascii_lowercase()) || word.ends_with("ing") {
        return Vec::new();
    }
    let bytes = word.as_bytes();
    let last = bytes[bytes.len() - 1];
    let before_last = bytes[bytes.len() - 2];
    let vowel = |c: u8| matches!(c, b'a' | b'e' | b'i' | b'o' | b'u');
    let form = if let Some(stem) = word.strip_suffix("ies") {
        // companies -> company
        format!("{stem}y")
    } else if word.ends_with("sses") || word.ends_with("xes") || word.ends_with("ches") || word.ends_with("shes") {
        // businesses -> business, taxes -> tax
        word[..word.len() - 2].to_owned()
    } else if last == b's' && !matches!(before_last, b's' | b'u' | b'i') {
        // members -> member, repurchases -> repurchase
        word[..word.len() - 1].to_owned()
    } else if last == b's' || last == b'x' || word.ends_with("ch") || word.ends_with("sh") {
        // business -> businesses, tax -> taxes
        format!("{word}es")
    } else if last == b'y' && !vowel(before_last) {
        // company -> companies
        format!("{}ies", &word[..word.len() - 1])
    } else {
        // member -> members
        format!("{word}s")
    };
    vec![form]
}

#[cfg(test)]
mod tests {
    use super::english_forms;

    #[test]
    fn other_spellings() {
        assert_eq!(super::other_spelling("pre-hospitalisation").as_deref(), Some("pre-hospitalization"));
        assert_eq!(super::other_spelling("organized crime").as_deref(), Some("organised crime"));
        assert_eq!(super::other_spelling("premium"), None);
    }

    #[test]
    fn plural_and_singular() {
        assert_eq!(english_forms("members"), ["member"]);
        assert_eq!(english_forms("repurchases"), ["repurchase"]);
        assert_eq!(english_forms("companies"), ["company"]);
        assert_eq!(english_forms("businesses"), ["business"]);
        assert_eq!(english_forms("taxes"), ["tax"]);
        assert_eq!(english_forms("segment"), ["segments"]);
        assert_eq!(english_forms("supply"), ["supplies"]);
        assert_eq!(english_forms("business"), ["businesses"]);
        assert_eq!(english_forms("status"), ["statuses"]);
    }

    #[test]
    fn short_words_digits_hyphens_and_participles_keep_one_form() {
        assert!(english_forms("new").is_empty());
        assert!(english_forms("2022").is_empty());
        assert!(english_forms("one-off").is_empty());
        assert!(english_forms("operating").is_empty());
    }
}
