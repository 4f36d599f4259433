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

use crate::ocr::OcrOptions;
use crate::workers::panic_message;
use crate::{ParseError, objects, repair};

/// How to open a document.
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseOptions {
    /// The user (or owner) password of an encrypted PDF. The empty password is always tried.
    pub password: Option<String>,
    /// How pages with no text layer are read (OCR; on by default, see [`OcrOptions`]).
    pub ocr: OcrOptions,
}

impl ParseOptions {
    /// Options that open an encrypted PDF with `password`.
    pub fn with_password(password: impl Into<String>) -> ParseOptions {
        ParseOptions { password: Some(password.into()), ..ParseOptions::default() }
    }

    /// These options with `ocr` for the pages with no text layer.
    pub fn with_ocr(self, ocr: OcrOptions) -> ParseOptions {
        ParseOptions { ocr, ..self }
    }
}

impl std::fmt::Debug for ParseOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print a password.
        f.debug_struct("ParseOptions")
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("ocr", &self.ocr)
            .finish()
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
    let mut notes = Vec::new();
    // An owner password of revisions 2-4 authenticates in lopdf but decrypts with the wrong key
    // (it keys with it as if it were the user password): recover the user password from it.
    let recovered = options.password.as_deref().and_then(|owner| user_password_from_owner(bytes, owner));
    if recovered.is_some() {
        notes.push(Diagnostic::new(Severity::Info, None, "opened with the owner password"));
    }
    let password = recovered.as_deref().or(options.password.as_deref());
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
    // `/Encrypt` written directly in the trailer: lopdf authenticates no password for it and
    // loads no object, so the dictionary is appended as an object of its own.
    if unsafe_xref.is_none()
        && matches!(first, Attempt::Locked)
        && let Some(patched) = encrypt_by_reference(bytes)
    {
        match try_load(&patched, password) {
            Ok(doc) => {
                notes.push(Diagnostic::new(
                    Severity::Info,
                    None,
                    "encryption dictionary written in the trailer: read as an object of its own",
                ));
                return Ok((doc, notes));
            }
            Err(Attempt::Locked) if password.is_some() => return Err(ParseError::WrongPassword { path }),
            Err(Attempt::Locked) => return Err(ParseError::Encrypted { path }),
            Err(Attempt::Failed(_)) => {}
        }
    }
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

/// The padding string of the standard security handler (PDF 32000-1, 7.6.3.3).
const PAD: [u8; 32] = [
    0x28, 0xBF, 0x4E, 0x5E, 0x4E, 0x75, 0x8A, 0x41, 0x64, 0x00, 0x4E, 0x56, 0xFF, 0xFA, 0x01, 0x08, 0x2E, 0x2E, 0x00,
    0xB6, 0xD0, 0x68, 0x3E, 0x80, 0x2F, 0x0C, 0xA9, 0xFE, 0x64, 0x53, 0x69, 0x7A,
];

/// The encryption dictionary of `bytes` (in the trailer or by reference), read without a
/// password.
fn encryption_dictionary(bytes: &[u8]) -> Option<pdf_extract::Dictionary> {
    let options = LoadOptions::default();
    let doc = catch_unwind(AssertUnwindSafe(|| Document::load_mem_with_options(bytes, options))).ok()?.ok()?;
    match doc.trailer.get(b"Encrypt").ok()? {
        Object::Dictionary(d) => Some(d.clone()),
        Object::Reference(id) => doc.get_dictionary(*id).ok().cloned(),
        _ => None,
    }
}

/// The user password that `owner` (an owner password) unlocks, for revisions 2-4 (Algorithm 7
/// of PDF 32000-1: RC4 with a key from the MD5 of the padded owner password decrypts `/O`), when
/// it opens the file and differs from `owner`; `None` otherwise (then `owner` is tried as is).
fn user_password_from_owner(bytes: &[u8], owner: &str) -> Option<String> {
    use md5::{Digest, Md5};
    let encrypt = encryption_dictionary(bytes)?;
    let revision = encrypt.get(b"R").ok()?.as_i64().ok()?;
    if !(2..=4).contains(&revision) {
        return None;
    }
    let o = encrypt.get(b"O").ok()?.as_str().ok()?.get(..32)?.to_vec();
    let length = encrypt.get(b"Length").ok().and_then(|l| l.as_i64().ok()).unwrap_or(40);
    let n = if revision == 2 { 5 } else { usize::try_from(length / 8).ok()?.clamp(5, 16) };
    // Owner passwords are Latin-1 / PDFDocEncoding bytes, at most 32.
    let mut padded: Vec<u8> = owner.chars().filter_map(|c| u8::try_from(u32::from(c)).ok()).take(32).collect();
    padded.extend_from_slice(&PAD[..32 - padded.len()]);
    let mut digest = Md5::digest(&padded).to_vec();
    if revision >= 3 {
        for _ in 0..50 {
            digest = Md5::digest(&digest[..n]).to_vec();
        }
    }
    let key = &digest[..n];
    let mut user = o;
    let rounds: Vec<u8> = if revision == 2 { vec![0] } else { (0..20).rev().collect() };
    for i in rounds {
        let round_key: Vec<u8> = key.iter().map(|k| k ^ i).collect();
        rc4_apply(&round_key, &mut user)?;
    }
    // The result is the padded user password: strip the padding.
    let end = (0..=32).find(|&len| user[len..] == PAD[..32 - len])?;
    let candidate: String = user[..end].iter().map(|&b| char::from(b)).collect();
    if candidate == owner {
        return None;
    }
    // Only when it really is the user password (Algorithm 6 checks it inside lopdf).
    let options = LoadOptions { password: Some(candidate.clone()), ..LoadOptions::default() };
    let loaded = catch_unwind(AssertUnwindSafe(|| Document::load_mem_with_options(bytes, options)));
    let patched = encrypt_by_reference(bytes);
    let opens = matches!(loaded, Ok(Ok(ref d)) if d.was_encrypted())
        || patched.is_some_and(|p| {
            let options = LoadOptions { password: Some(candidate.clone()), ..LoadOptions::default() };
            matches!(catch_unwind(AssertUnwindSafe(|| Document::load_mem_with_options(&p, options))), Ok(Ok(ref d)) if d.was_encrypted())
        });
    opens.then_some(candidate)
}

/// RC4 over `data` in place with a key of 5 to 16 bytes (the `rc4` crate fixes the key length
/// in the type).
fn rc4_apply(key: &[u8], data: &mut [u8]) -> Option<()> {
    use rc4::consts::{U5, U6, U7, U8, U9, U10, U11, U12, U13, U14, U15, U16};
    use rc4::{KeyInit, Rc4, StreamCipher};
    macro_rules! run {
        ($n:ty) => {
            Rc4::<$n>::new_from_slice(key).ok()?.apply_keystream(data)
        };
    }
    match key.len() {
        5 => run!(U5),
        6 => run!(U6),
        7 => run!(U7),
        8 => run!(U8),
        9 => run!(U9),
        10 => run!(U10),
        11 => run!(U11),
        12 => run!(U12),
        13 => run!(U13),
        14 => run!(U14),
        15 => run!(U15),
        16 => run!(U16),
        _ => return None,
    }
    Some(())
}

/// The bytes with the trailer's direct `/Encrypt` dictionary appended as an object
/// ([`repair::with_encrypt_object`]), or `None` when the trailer has none (or no catalog).
fn encrypt_by_reference(bytes: &[u8]) -> Option<Vec<u8>> {
    // Without a password lopdf still reads the trailer (and no object).
    let options = LoadOptions::default();
    let doc = catch_unwind(AssertUnwindSafe(|| Document::load_mem_with_options(bytes, options))).ok()?.ok()?;
    let Ok(Object::Dictionary(encrypt)) = doc.trailer.get(b"Encrypt") else { return None };
    let mut dict = String::new();
    objects::write_object(&Object::Dictionary(encrypt.clone()), &mut dict);
    let mut trailer = String::new();
    for (key, value) in doc.trailer.iter() {
        if matches!(key.as_slice(), b"Encrypt" | b"Size" | b"Prev" | b"XRefStm") {
            continue;
        }
        let mut entry = String::new();
        objects::write_object(&Object::Name(key.clone()), &mut entry);
        entry.push(' ');
        objects::write_object(value, &mut entry);
        trailer.push_str(&entry);
        trailer.push(' ');
    }
    let size = doc.trailer.get(b"Size").ok().and_then(|s| s.as_i64().ok()).and_then(|s| u32::try_from(s).ok());
    repair::with_encrypt_object(bytes, &dict, trailer.trim_end(), size.unwrap_or(0))
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
