//! Opening a PDF: passwords, empty-password encryption and broken cross-reference tables.
//!
//! [`load`] asks lopdf first, with the password of [`ParseOptions`] when one is given (lopdf
//! tries the empty user password itself). Then, in order:
//! - an encrypted file whose trailer has no `/ID` (lopdf cannot derive the key without one) is
//!   re-read with an appended trailer carrying an empty `/ID`, which is what the standard
//!   security handler uses when the identifier is absent;
//! - a file lopdf cannot load (broken or missing `xref`, bad `startxref`) is re-read with an
//!   object table rebuilt by scanning `N G obj` markers ([`crate::repair`]); a diagnostic says so;
//! - an encrypted file that still cannot be opened is [`ParseError::Encrypted`] (no password
//!   given) or [`ParseError::WrongPassword`]; anything else is [`ParseError::Malformed`].

use std::panic::{AssertUnwindSafe, catch_unwind};

use docintel_schema::{Diagnostic, Severity};
use pdf_extract::{Document, LoadOptions, Object};

use crate::{ParseError, panic_message, repair};

/// How to open a document.
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseOptions {
    /// The user (or owner) password of an encrypted PDF. The empty password is always tried.
    pub password: Option<String>,
}

impl ParseOptions {
    /// Options that open an encrypted PDF with `password`.
    pub fn with_password(password: impl Into<String>) -> ParseOptions {
        ParseOptions { password: Some(password.into()) }
    }
}

impl std::fmt::Debug for ParseOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print a password.
        f.debug_struct("ParseOptions").field("password", &self.password.as_ref().map(|_| "***")).finish()
    }
}

/// What went wrong with one loading attempt.
enum Attempt {
    /// The file is encrypted and the password(s) tried do not open it.
    Locked,
    /// lopdf refused the bytes.
    Failed(String),
}

/// Loads and decrypts the document; the diagnostics say what had to be repaired.
pub(crate) fn load(
    name: &str,
    bytes: &[u8],
    options: &ParseOptions,
) -> Result<(Document, Vec<Diagnostic>), ParseError> {
    let path = name.to_string();
    let password = options.password.as_deref();
    let mut notes = Vec::new();
    // A damaged cross-reference stream that would make lopdf allocate
    // absurdly (an abort, not a panic) goes straight to the rebuild.
    let unsafe_xref = repair::oversized_xref_stream(bytes);
    let first = match &unsafe_xref {
        Some(reason) => Attempt::Failed(reason.clone()),
        None => match try_load(bytes, password) {
            Ok(doc) => return Ok((doc, notes)),
            Err(attempt) => attempt,
        },
    };
    // An encrypted file without /ID: append a trailer that has an empty one.
    if unsafe_xref.is_none()
        && let Some(patched) = repair::with_empty_file_id(bytes)
        && let Ok(doc) = try_load(&patched, password)
    {
        notes.push(Diagnostic::new(
            Severity::Info,
            None,
            "encrypted without a file identifier (/ID): decrypted with an empty one",
        ));
        return Ok((doc, notes));
    }
    let first_reason = match first {
        Attempt::Locked if password.is_some() => return Err(ParseError::WrongPassword { path }),
        Attempt::Locked => return Err(ParseError::Encrypted { path }),
        Attempt::Failed(reason) => reason,
    };
    let Some(rebuilt) = repair::rebuild_xref(bytes) else {
        return Err(ParseError::Malformed { path, reason: first_reason });
    };
    match try_load(&rebuilt.bytes, password) {
        Ok(doc) => {
            notes.push(Diagnostic::new(
                Severity::Warning,
                None,
                format!(
                    "cross-reference table unusable ({first_reason}): rebuilt from {} object markers",
                    rebuilt.n_objects
                ),
            ));
            Ok((doc, notes))
        }
        Err(Attempt::Locked) if password.is_some() => Err(ParseError::WrongPassword { path }),
        Err(Attempt::Locked) => Err(ParseError::Encrypted { path }),
        Err(Attempt::Failed(reason)) => Err(ParseError::Malformed {
            path,
            reason: format!("{first_reason}; rebuilding the cross-reference table failed too: {reason}"),
        }),
    }
}

/// One lopdf load, isolated from panics, with the decryption checked.
fn try_load(bytes: &[u8], password: Option<&str>) -> Result<Document, Attempt> {
    let options = LoadOptions { password: password.map(String::from), ..LoadOptions::default() };
    let mut doc = match catch_unwind(AssertUnwindSafe(|| Document::load_mem_with_options(bytes, options))) {
        Ok(Ok(doc)) => doc,
        Ok(Err(e)) if is_encryption_error(&e) => return Err(Attempt::Locked),
        Ok(Err(e)) => return Err(Attempt::Failed(e.to_string())),
        Err(panic) => return Err(Attempt::Failed(format!("loader panicked: {}", panic_message(&panic)))),
    };
    // Encrypted but not decrypted at load time: lopdf could not authenticate
    // any password, and returns a document whose objects are missing, so
    // `/Encrypt` in the trailer is the reliable cue.
    if doc.trailer.get(b"Encrypt").is_ok() && !doc.was_encrypted() {
        let decrypted = doc.is_encrypted()
            && catch_unwind(AssertUnwindSafe(|| doc.decrypt(password.unwrap_or("")))).is_ok_and(|r| r.is_ok());
        if !decrypted {
            return Err(Attempt::Locked);
        }
    }
    // A document that loaded but has no catalog is as good as unloadable.
    if doc.trailer.get(b"Root").and_then(Object::as_reference).and_then(|id| doc.get_dictionary(id)).is_err() {
        return Err(Attempt::Failed("the trailer has no usable /Root".into()));
    }
    Ok(doc)
}

fn is_encryption_error(e: &pdf_extract::Error) -> bool {
    matches!(
        e,
        pdf_extract::Error::Decryption(_) | pdf_extract::Error::InvalidPassword | pdf_extract::Error::AlreadyEncrypted
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_never_print_the_password() {
        let options = ParseOptions::with_password("hunter2");
        let shown = format!("{options:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("***"));
        assert_eq!(ParseOptions::default().password, None);
    }

    #[test]
    fn garbage_is_malformed_and_names_the_file() {
        match load("g.pdf", b"%PDF-1.4\nnothing here", &ParseOptions::default()) {
            Err(ParseError::Malformed { path, reason }) => {
                assert_eq!(path, "g.pdf");
                assert!(!reason.is_empty());
            }
            Err(other) => panic!("{other:?}"),
            Ok(_) => panic!("garbage loaded"),
        }
    }
}
