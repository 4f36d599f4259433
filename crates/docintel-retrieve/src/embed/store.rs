//! Chunk vectors on disk: one file per chunk set, named by its
//! [`VectorKey`], so a later process embeds a document's chunks only when the
//! embedder or the chunks changed.
//!
//! File format (`<key>.f32`, all integers little-endian):
//!
//! ```text
//! offset  size  field
//!      0     8  magic  b"DIVECF32"
//!      8     4  format version (1)
//!     12     4  dimension
//!     16     4  vector count
//!     20     4  reserved (0)
//!     24     8  FNV-1a 64 of the payload bytes
//!     32    32  the key (SHA-256 of embedder, dimension and chunk texts)
//!     64     …  count × dimension f32, vector after vector
//! ```
//!
//! Reading checks every field against what the caller expects (a file that
//! is short, long, from another format, dimension, key or with a bad checksum
//! or a non-finite value is rejected with the reason, never trusted).
//! Writing goes to a temporary file in the same directory, then a rename:
//! a reader never sees half a file.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

const MAGIC: &[u8; 8] = b"DIVECF32";
const VERSION: u32 = 1;
const HEADER_LEN: usize = 64;
/// The file name extension.
pub(crate) const EXTENSION: &str = "f32";

/// Identifies one chunk set for one embedder: the SHA-256 of the embedder's
/// name (name and version), its dimension and every chunk's embedding input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct VectorKey([u8; 32]);

impl VectorKey {
    pub(crate) fn new(embedder: &str, dimension: usize, inputs: &[String]) -> VectorKey {
        let mut hasher = Sha256::new();
        hasher.update(b"docintel chunk vectors v1\0");
        // Length-prefixed fields: no two different inputs hash the same bytes.
        let mut field = |bytes: &[u8]| {
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        field(embedder.as_bytes());
        field(&(dimension as u64).to_le_bytes());
        field(&(inputs.len() as u64).to_le_bytes());
        for input in inputs {
            field(input.as_bytes());
        }
        VectorKey(hasher.finalize().into())
    }

    /// Lowercase hex of the key.
    pub(crate) fn hex(&self) -> String {
        self.0.iter().fold(String::with_capacity(64), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
    }

    /// `<dir>/<hex>.f32`.
    pub(crate) fn file_in(&self, dir: &Path) -> PathBuf {
        dir.join(format!("{}.{EXTENSION}", self.hex()))
    }
}

/// FNV-1a, 64 bits: catches flipped or zeroed bytes in the payload.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

/// What reading a vector file gave.
#[derive(Debug)]
pub(crate) enum Loaded {
    /// The vectors, `count` of them, each of the expected dimension.
    Vectors(Vec<Vec<f32>>),
    /// No file yet.
    Missing,
    /// A file that cannot be used; the reason names the file.
    Invalid(String),
}

/// Reads `path`, expecting `count` vectors of `dimension` values written for
/// `key`.
pub(crate) fn read(path: &Path, key: &VectorKey, dimension: usize, count: usize) -> Loaded {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        // No file, or a store path through a plain file (writing then says
        // what is wrong with the directory).
        Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) => {
            return Loaded::Missing;
        }
        Err(e) => return Loaded::Invalid(format!("{}: cannot read: {e}", path.display())),
    };
    match decode(&bytes, key, dimension, count) {
        Ok(vectors) => Loaded::Vectors(vectors),
        Err(reason) => Loaded::Invalid(format!("{}: {reason}", path.display())),
    }
}

fn decode(bytes: &[u8], key: &VectorKey, dimension: usize, count: usize) -> Result<Vec<Vec<f32>>, String> {
    if bytes.len() < HEADER_LEN {
        return Err(format!("truncated: {} bytes, shorter than the {HEADER_LEN}-byte header", bytes.len()));
    }
    if &bytes[..8] != MAGIC {
        return Err("not a docintel vector file (bad magic)".to_owned());
    }
    let version = u32_at(bytes, 8);
    if version != VERSION {
        return Err(format!("format version {version}, expected {VERSION}"));
    }
    let (file_dimension, file_count) = (u32_at(bytes, 12) as usize, u32_at(bytes, 16) as usize);
    if file_dimension != dimension {
        return Err(format!("vectors of dimension {file_dimension}, expected {dimension}"));
    }
    if file_count != count {
        return Err(format!("{file_count} vectors, expected {count}"));
    }
    if bytes[32..64] != key.0 {
        return Err("written for another embedder or chunk set (key mismatch)".to_owned());
    }
    let expected = count
        .checked_mul(dimension)
        .and_then(|n| n.checked_mul(4))
        .and_then(|n| n.checked_add(HEADER_LEN))
        .ok_or("size overflows")?;
    if bytes.len() != expected {
        let what = if bytes.len() < expected { "truncated" } else { "trailing bytes" };
        return Err(format!("{what}: {} bytes, expected {expected}", bytes.len()));
    }
    let payload = &bytes[HEADER_LEN..];
    let checksum = u64::from_le_bytes(bytes[24..32].try_into().expect("8 bytes"));
    if fnv1a(payload) != checksum {
        return Err("checksum mismatch (payload damaged)".to_owned());
    }
    let values: Vec<f32> =
        payload.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes"))).collect();
    if values.iter().any(|v| !v.is_finite()) {
        return Err("holds a non-finite value".to_owned());
    }
    if dimension == 0 {
        return Ok(vec![Vec::new(); count]);
    }
    Ok(values.chunks_exact(dimension).map(<[f32]>::to_vec).collect())
}

fn encode(key: &VectorKey, dimension: usize, vectors: &[Vec<f32>]) -> Result<Vec<u8>, String> {
    let dimension32 = u32::try_from(dimension).map_err(|_| format!("dimension {dimension} too large"))?;
    let count32 = u32::try_from(vectors.len()).map_err(|_| format!("{} vectors: too many", vectors.len()))?;
    let mut payload = Vec::with_capacity(vectors.len() * dimension * 4);
    for vector in vectors {
        if vector.len() != dimension {
            return Err(format!("a vector of length {} (expected {dimension})", vector.len()));
        }
        payload.extend(vector.iter().flat_map(|v| v.to_le_bytes()));
    }
    let mut bytes = Vec::with_capacity(HEADER_LEN + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&VERSION.to_le_bytes());
    bytes.extend_from_slice(&dimension32.to_le_bytes());
    bytes.extend_from_slice(&count32.to_le_bytes());
    bytes.extend_from_slice(&0u32.to_le_bytes());
    bytes.extend_from_slice(&fnv1a(&payload).to_le_bytes());
    bytes.extend_from_slice(&key.0);
    bytes.extend_from_slice(&payload);
    Ok(bytes)
}

/// Writes `vectors` to `path` (its directory created when missing) through a
/// temporary file and a rename. The error names the file or directory that
/// failed.
pub(crate) fn write(path: &Path, key: &VectorKey, dimension: usize, vectors: &[Vec<f32>]) -> Result<(), String> {
    static TEMPORARIES: AtomicU64 = AtomicU64::new(0);
    let bytes = encode(key, dimension, vectors).map_err(|e| format!("{}: {e}", path.display()))?;
    let dir = path.parent().ok_or_else(|| format!("{}: no parent directory", path.display()))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create the directory: {e}", dir.display()))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.{}.tmp", std::process::id(), TEMPORARIES.fetch_add(1, Ordering::Relaxed)));
    let written = std::fs::File::create(&tmp)
        .and_then(|mut file| {
            file.write_all(&bytes)?;
            file.sync_all()
        })
        .map_err(|e| format!("{}: cannot write: {e}", tmp.display()))
        .and_then(|()| {
            std::fs::rename(&tmp, path).map_err(|e| format!("{}: cannot rename into place: {e}", path.display()))
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> VectorKey {
        VectorKey::new("test", 3, &["a".to_owned(), "b".to_owned()])
    }

    fn vectors() -> Vec<Vec<f32>> {
        vec![vec![1.0, 0.0, 0.0], vec![0.0, 0.6, 0.8]]
    }

    #[test]
    fn round_trip() {
        let bytes = encode(&key(), 3, &vectors()).expect("encodes");
        assert_eq!(bytes.len(), HEADER_LEN + 2 * 3 * 4);
        assert_eq!(decode(&bytes, &key(), 3, 2).expect("decodes"), vectors());
    }

    #[test]
    fn every_damage_is_rejected_with_its_reason() {
        let good = encode(&key(), 3, &vectors()).expect("encodes");
        let reject = |bytes: &[u8], dimension: usize, count: usize| {
            decode(bytes, &key(), dimension, count).expect_err("rejected")
        };
        assert!(reject(&good[..10], 3, 2).contains("shorter than the"));
        assert!(reject(&good[..good.len() - 1], 3, 2).starts_with("truncated"));
        assert!(reject(&[good.as_slice(), &[0]].concat(), 3, 2).starts_with("trailing bytes"));
        assert!(reject(&good, 4, 2).contains("dimension 3, expected 4"));
        assert!(reject(&good, 3, 3).contains("2 vectors, expected 3"));
        let mut flipped = good.clone();
        flipped[HEADER_LEN + 5] ^= 0x10;
        assert!(reject(&flipped, 3, 2).contains("checksum"));
        let mut magic = good.clone();
        magic[0] = b'X';
        assert!(reject(&magic, 3, 2).contains("magic"));
        let mut version = good.clone();
        version[8] = 9;
        assert!(reject(&version, 3, 2).contains("format version 9"));
        let other = VectorKey::new("other", 3, &["a".to_owned(), "b".to_owned()]);
        assert!(decode(&good, &other, 3, 2).expect_err("rejected").contains("key mismatch"));
        let nan = encode(&key(), 3, &[vec![f32::NAN, 0.0, 0.0], vec![0.0; 3]]).expect("encodes");
        assert!(reject(&nan, 3, 2).contains("non-finite"));
    }

    #[test]
    fn key_depends_on_embedder_dimension_and_every_text() {
        let texts = ["a".to_owned(), "b".to_owned()];
        let base = VectorKey::new("m", 3, &texts);
        assert_eq!(base, VectorKey::new("m", 3, &texts));
        assert_ne!(base, VectorKey::new("n", 3, &texts));
        assert_ne!(base, VectorKey::new("m", 4, &texts));
        assert_ne!(base, VectorKey::new("m", 3, &["a".to_owned(), "c".to_owned()]));
        // Field boundaries count: "ab" + "" is not "a" + "b".
        assert_ne!(base, VectorKey::new("m", 3, &["ab".to_owned(), String::new()]));
        assert_eq!(base.hex().len(), 64);
    }
}
