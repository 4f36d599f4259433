//! Stable, readable folder names for questions: a lower-cased prefix of the
//! question (letters and digits, runs of anything else folded to one `-`,
//! at most 48 characters) followed by the first 8 hex digits of the SHA-256
//! of the exact question text. Two questions that differ only in punctuation
//! or spacing share a prefix but not a hash.

use sha2::{Digest, Sha256};

/// Longest readable prefix, in characters.
const PREFIX_CHARS: usize = 48;

/// The slug of `question`: `what-is-the-total-amount-1a2b3c4d`, or only the
/// 8 hex digits when the question has no letter or digit.
///
/// ```
/// use docintel_schema::slug::question_slug;
/// let slug = question_slug("What is the total amount?");
/// assert!(slug.starts_with("what-is-the-total-amount-"));
/// assert_eq!(slug.len(), "what-is-the-total-amount-".len() + 8);
/// ```
pub fn question_slug(question: &str) -> String {
    let prefix = readable(question.trim());
    let digest = Sha256::digest(question.as_bytes());
    let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    if prefix.is_empty() { hash } else { format!("{prefix}-{hash}") }
}

/// The slug of `question` asked after `previous_turns` (oldest first): the
/// question's readable prefix, and a hash over the question and every turn,
/// so one follow-up asked in two conversations gets two folders. With no
/// turns it is [`question_slug`].
///
/// ```
/// use docintel_schema::slug::{question_slug, turns_slug};
/// let q = "And when is it due?";
/// assert_eq!(turns_slug(q, &[]), question_slug(q));
/// let a = turns_slug(q, &["What is the total?".to_owned()]);
/// let b = turns_slug(q, &["What is the deposit?".to_owned()]);
/// assert!(a.starts_with("and-when-is-it-due-") && a != b && a != question_slug(q));
/// ```
pub fn turns_slug(question: &str, previous_turns: &[String]) -> String {
    if previous_turns.is_empty() {
        return question_slug(question);
    }
    let prefix = readable(question.trim());
    let mut hasher = Sha256::new();
    hasher.update(question.as_bytes());
    for turn in previous_turns {
        // A record separator: the turns ["a b"] and ["a", "b"] differ.
        hasher.update([0x1e]);
        hasher.update(turn.as_bytes());
    }
    let hash: String = hasher.finalize().iter().take(4).map(|b| format!("{b:02x}")).collect();
    if prefix.is_empty() { hash } else { format!("{prefix}-{hash}") }
}

/// `text` lower-cased, letters and digits kept, other runs folded to one `-`, at most
/// [`PREFIX_CHARS`] characters, no `-` at either end.
fn readable(text: &str) -> String {
    let mut prefix = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            prefix.push(c);
        } else if !prefix.is_empty() && !prefix.ends_with('-') {
            prefix.push('-');
        }
        if prefix.chars().count() >= PREFIX_CHARS {
            break;
        }
    }
    prefix.trim_end_matches('-').to_owned()
}

/// The folder name of one document's outputs (question traces, vectors):
/// `<readable stem>-<first 12 hex digits of the SHA-256 of its bytes>`. The stem keeps letters
/// and digits, lower-cased, other runs folded to one `-`, at most 48 characters, `document`
/// when nothing is left: never `.`, `..` or a path separator, so the folder stays under the
/// output root. Two files of one name in different folders, or one file edited, get different
/// folders; the same bytes under one name share one.
///
/// ```
/// use docintel_schema::slug::document_key;
/// let hash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
/// assert_eq!(document_key("2023/Invoice.pdf", hash), "invoice-0123456789ab");
/// assert_eq!(document_key("...pdf", hash), "document-0123456789ab");
/// ```
pub fn document_key(path: &str, content_sha256: &str) -> String {
    let path = std::path::Path::new(path);
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let prefix = readable(&stem);
    let prefix = if prefix.is_empty() { "document" } else { prefix.as_str() };
    let hash: String = content_sha256.chars().filter(char::is_ascii_hexdigit).take(12).collect();
    format!("{prefix}-{hash}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_keys_stay_under_the_root_and_tell_files_apart() {
        let (a, b) = ("aa".repeat(32), "bb".repeat(32));
        for hostile in ["..", "...pdf", "../../etc/passwd", "/", ".", "a/../..", "\\..\\x"] {
            let key = document_key(hostile, &a);
            assert!(!key.contains('/') && !key.contains('\\') && !key.starts_with('.'), "{hostile} -> {key}");
            assert_eq!(std::path::Path::new(&key).components().count(), 1, "{hostile} -> {key}");
        }
        assert_ne!(document_key("2023/invoice.pdf", &a), document_key("2024/invoice.pdf", &b));
        assert_eq!(document_key("2023/invoice.pdf", &a), document_key("copy/invoice.pdf", &a));
    }

    fn check(question: &str, expect_prefix: &str) {
        let slug = question_slug(question);
        let (prefix, hash) = slug.rsplit_once('-').unwrap_or(("", slug.as_str()));
        assert_eq!(prefix, expect_prefix, "{question} → {slug}");
        assert_eq!(hash.len(), 8, "{slug}");
        assert!(hash.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()), "{slug}");
        assert_eq!(question_slug(question), slug, "stable");
    }

    #[test]
    fn slugs_are_readable_short_and_stable() {
        check("What is the total amount?", "what-is-the-total-amount");
        check("  Quel est le montant de la prime annuelle ?", "quel-est-le-montant-de-la-prime-annuelle");
        check("Какова сумма счёта?", "какова-сумма-счёта");
        check("???", "");
        let long = question_slug(&"word ".repeat(40));
        assert!(long.chars().count() <= PREFIX_CHARS + 9, "{long}");
        // Pinned value: the hash is part of on-disk paths, it must not drift.
        assert_eq!(question_slug("What's the limit?"), "what-s-the-limit-9a877ee4");
        assert_eq!(question_slug("What is the total amount?"), "what-is-the-total-amount-988ffcab");
    }

    #[test]
    fn near_duplicates_get_distinct_hashes() {
        assert_ne!(question_slug("What is the total amount?"), question_slug("What is the total amount ?"));
    }
}
