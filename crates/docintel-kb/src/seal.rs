//! Encryption at rest: a tenant's [`KbKey`] (32 bytes from a key file) seals
//! with XChaCha20-Poly1305 (RustCrypto), a fresh random 192-bit nonce per
//! sealed piece (random nonces never collide in practice at that size, so no
//! counter has to survive a killed `kb add`), and associated data naming what
//! the piece is (which document, which block), so a sealed piece moved to
//! another place or another knowledge base does not open. The key is never
//! written anywhere by docintel: the manifest holds only a sealed known token
//! ([`KeyCheck`]) that tells a wrong key before anything is read.

use std::path::Path;

use chacha20poly1305::aead::{Aead, Generate, KeyInit, Payload};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};
use serde::{Deserialize, Serialize};

use crate::error::KbError;

/// The AEAD's name in the manifest.
pub const AEAD: &str = "XChaCha20-Poly1305";
/// Bytes of a key.
pub const KEY_BYTES: usize = 32;
const NONCE_BYTES: usize = 24;
/// The token the key check seals.
const CHECK_TOKEN: &[u8] = b"docintel-kb key check v1";
const CHECK_AD: &[u8] = b"docintel-kb/key-check";

/// A tenant's key: 32 bytes. Its `Debug` never shows them.
#[derive(Clone)]
pub struct KbKey {
    cipher: XChaCha20Poly1305,
}

impl std::fmt::Debug for KbKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KbKey(..)")
    }
}

impl KbKey {
    /// The key of these 32 bytes.
    pub fn from_bytes(bytes: [u8; KEY_BYTES]) -> KbKey {
        let key = Key::from(bytes);
        KbKey { cipher: XChaCha20Poly1305::new(&key) }
    }

    /// Reads a key file: exactly 32 bytes, or 64 hexadecimal digits (a final
    /// newline allowed). Anything else is [`KbError::KeyFile`].
    pub fn from_file(path: &Path) -> Result<KbKey, KbError> {
        let bad = |reason: String| KbError::KeyFile { path: path.display().to_string(), reason };
        let bytes = std::fs::read(path).map_err(|e| bad(format!("cannot read: {e}")))?;
        if let Ok(array) = <[u8; KEY_BYTES]>::try_from(bytes.as_slice()) {
            return Ok(KbKey::from_bytes(array));
        }
        let text = std::str::from_utf8(&bytes).map(str::trim).unwrap_or("");
        match from_hex(text).map(<[u8; KEY_BYTES]>::try_from) {
            Some(Ok(array)) => Ok(KbKey::from_bytes(array)),
            _ => Err(bad(format!(
                "a key file holds exactly {KEY_BYTES} bytes or {} hexadecimal digits ({} bytes found; make one with `docintel kb key new FILE`)",
                KEY_BYTES * 2,
                bytes.len()
            ))),
        }
    }

    /// 32 random bytes from the operating system, as written to a key file.
    pub fn generate_bytes() -> Result<[u8; KEY_BYTES], KbError> {
        <[u8; KEY_BYTES]>::try_generate()
            .map_err(|e| KbError::KeyFile { path: "(new key)".into(), reason: format!("no random bytes: {e}") })
    }

    /// `nonce || ciphertext+tag` of `plain`, bound to `ad`.
    pub(crate) fn seal(&self, plain: &[u8], ad: &[u8]) -> Result<Vec<u8>, KbError> {
        let nonce = XNonce::try_generate().map_err(|e| KbError::Sealing(format!("no random nonce: {e}")))?;
        let sealed = self
            .cipher
            .encrypt(&nonce, Payload { msg: plain, aad: ad })
            .map_err(|_| KbError::Sealing("encryption failed".into()))?;
        let mut out = Vec::with_capacity(NONCE_BYTES + sealed.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    /// The plaintext of a [`KbKey::seal`] output with the same `ad`; `None`
    /// when the key, the associated data or the bytes differ.
    pub(crate) fn open(&self, sealed: &[u8], ad: &[u8]) -> Option<Vec<u8>> {
        if sealed.len() < NONCE_BYTES {
            return None;
        }
        let (nonce, body) = sealed.split_at(NONCE_BYTES);
        let nonce = XNonce::try_from(nonce).ok()?;
        self.cipher.decrypt(&nonce, Payload { msg: body, aad: ad }).ok()
    }
}

/// What the manifest of an encrypted knowledge base records: the AEAD and a
/// known token sealed with the tenant's key (never the key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyCheck {
    /// [`AEAD`].
    pub aead: String,
    /// Hex of `nonce || sealed token`.
    pub key_check: String,
}

impl KeyCheck {
    /// The check value of `key`.
    pub(crate) fn new(key: &KbKey) -> Result<KeyCheck, KbError> {
        Ok(KeyCheck { aead: AEAD.into(), key_check: to_hex(&key.seal(CHECK_TOKEN, CHECK_AD)?) })
    }

    /// Whether `key` is the one this check was made with.
    pub(crate) fn accepts(&self, key: &KbKey) -> bool {
        self.aead == AEAD
            && from_hex(&self.key_check).and_then(|sealed| key.open(&sealed, CHECK_AD)).as_deref() == Some(CHECK_TOKEN)
    }
}

/// Lower-case hex.
pub(crate) fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of an even-length hex string.
pub(crate) fn from_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_piece_opens_only_with_its_key_and_its_associated_data() {
        let key = KbKey::from_bytes([7; KEY_BYTES]);
        let other = KbKey::from_bytes([8; KEY_BYTES]);
        let sealed = key.seal(b"total due 4.11", b"doc-a/0").unwrap();
        assert_ne!(sealed, key.seal(b"total due 4.11", b"doc-a/0").unwrap(), "a fresh nonce each time");
        assert_eq!(key.open(&sealed, b"doc-a/0").unwrap(), b"total due 4.11");
        assert!(key.open(&sealed, b"doc-b/0").is_none());
        assert!(other.open(&sealed, b"doc-a/0").is_none());
        let check = KeyCheck::new(&key).unwrap();
        assert!(check.accepts(&key) && !check.accepts(&other));
        assert_eq!(format!("{key:?}"), "KbKey(..)");
        assert_eq!(from_hex(&to_hex(&[0, 255, 16])).unwrap(), [0, 255, 16]);
    }
}
