//! Word-boundary matching: a normalised word or phrase found in a normalised
//! line only where it starts and ends on word boundaries ("total" matches
//! "total:" but not "subtotal"), with its searcher built once.

/// A normalised word or phrase with its searcher built once (a keyword is
/// tried on every line of the document).
pub(crate) type Form = (String, Box<memchr::memmem::Finder<'static>>);

/// `text` with its searcher.
pub(crate) fn form(text: String) -> Form {
    let finder = Box::new(memchr::memmem::Finder::new(text.as_bytes()).into_owned());
    (text, finder)
}

/// Whether `needle` occurs in `haystack` starting and ending on word
/// boundaries (so "total" matches "total:" but not "subtotal").
#[cfg(test)]
fn contains_word(haystack: &str, needle: &str) -> bool {
    contains_word_with(haystack, needle, &memchr::memmem::Finder::new(needle.as_bytes()))
}

/// [`contains_word`] with the needle's searcher prepared.
pub(crate) fn contains_word_with(haystack: &str, needle: &str, finder: &memchr::memmem::Finder<'_>) -> bool {
    if needle.is_empty() {
        return false;
    }
    let is_word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    // Byte offsets of a UTF-8 needle found in UTF-8 text are char boundaries.
    finder.find_iter(haystack.as_bytes()).any(|start| {
        let before = haystack[..start].chars().next_back();
        let after = haystack[start + needle.len()..].chars().next();
        let needle_first = needle.chars().next();
        let needle_last = needle.chars().next_back();
        (!is_word(before) || !is_word(needle_first)) && (!is_word(after) || !is_word(needle_last))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_boundaries() {
        assert!(contains_word("total: 4.11", "total"));
        assert!(!contains_word("subtotal 3", "total"));
        assert!(contains_word("see ac-2 now", "ac-2"));
        assert!(!contains_word("see ac-20 now", "ac-2"));
        assert!(contains_word("ia-5(1) x", "ia-5(1)"));
    }
}
