//! API keys: `docintel kb key add KB` makes a random key for the KB's tenant
//! and stores only its SHA-256 (hex) in `KB/api-keys.json`; the server hashes
//! the key a request carries and looks the hash up.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The key file in a knowledge base folder.
pub const KEYS_FILE: &str = "api-keys.json";
/// Every key starts with this (so a leaked one is recognisable).
const PREFIX: &str = "dik_";

/// The stored keys of one knowledge base: hashes only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KeyFile {
    /// One entry per key.
    pub keys: Vec<StoredKey>,
}

/// One stored key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredKey {
    /// SHA-256 of the whole key, lowercase hex.
    pub sha256: String,
    /// Seconds since the Unix epoch when it was made.
    pub created: u64,
}

/// Key file errors (they name the file).
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The file cannot be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a key file.
    #[error("{path}: not a key file: {reason}")]
    Corrupt {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// The operating system gave no random bytes.
    #[error("no random bytes from the operating system: {0}")]
    Random(String),
}

/// SHA-256 of `key`, lowercase hex.
pub fn key_hash(key: &str) -> String {
    Sha256::digest(key.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

fn keys_path(kb: &Path) -> PathBuf {
    kb.join(KEYS_FILE)
}

/// The stored keys of `kb` (none when the file is missing).
pub fn load_keys(kb: &Path) -> Result<KeyFile, KeyError> {
    let path = keys_path(kb);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| KeyError::Corrupt { path: path.display().to_string(), reason: e.to_string() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(KeyFile::default()),
        Err(source) => Err(KeyError::Io { path: path.display().to_string(), source }),
    }
}

/// Makes a new key for `kb`'s tenant, stores its hash and returns the key
/// (the only time it is shown). `kb` must exist.
pub fn add_key(kb: &Path) -> Result<String, KeyError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| KeyError::Random(e.to_string()))?;
    let key: String =
        PREFIX.chars().chain(bytes.iter().flat_map(|b| format!("{b:02x}").chars().collect::<Vec<_>>())).collect();
    let mut file = load_keys(kb)?;
    let created = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    file.keys.push(StoredKey { sha256: key_hash(&key), created });
    let path = keys_path(kb);
    let text = serde_json::to_vec_pretty(&file).expect("a key file always encodes");
    let temporary = kb.join(format!(".{KEYS_FILE}.tmp"));
    let io = |source| KeyError::Io { path: path.display().to_string(), source };
    std::fs::write(&temporary, text).map_err(io)?;
    std::fs::rename(&temporary, &path).map_err(io)?;
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_hash_is_stored_and_keys_differ() {
        let kb = docintel_test_support::temp_dir("serve-keys");
        let first = add_key(kb.path()).unwrap();
        let second = add_key(kb.path()).unwrap();
        assert_ne!(first, second);
        assert!(first.starts_with(PREFIX) && first.len() == PREFIX.len() + 64);
        let stored = std::fs::read_to_string(kb.path().join(KEYS_FILE)).unwrap();
        assert!(!stored.contains(&first[PREFIX.len()..]), "the key itself is never stored");
        let file = load_keys(kb.path()).unwrap();
        assert_eq!(
            file.keys.iter().map(|k| k.sha256.clone()).collect::<Vec<_>>(),
            [key_hash(&first), key_hash(&second)]
        );
    }
}
