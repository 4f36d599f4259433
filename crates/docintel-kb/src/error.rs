//! [`KbError`]: why a knowledge-base command failed, and its exit code.

use docintel::{EXIT_BAD_INPUT, EXIT_FAILURE, PipelineError};

/// Why a knowledge-base command failed. A file that cannot be ingested is not
/// an error of `kb add` (it is recorded in the manifest and the others go on).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KbError {
    /// The folder holds no knowledge base (no `manifest.json`).
    #[error("{dir}: not a knowledge base (no manifest.json; create one with `docintel kb add {dir} FILE…`)")]
    NotAKb {
        /// The folder.
        dir: String,
    },
    /// The knowledge base was written by another format of docintel: it is
    /// re-indexed by `kb add`, never read as it is.
    #[error(
        "{dir}: written by another docintel ({found}; this one reads {expected}): run `docintel kb add {dir}` to re-index"
    )]
    Stale {
        /// The folder.
        dir: String,
        /// The format found.
        found: String,
        /// The format this build reads.
        expected: String,
    },
    /// A file of the knowledge base cannot be read or is not what it should be.
    #[error("{path}: damaged knowledge base: {reason}")]
    Corrupt {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// Reading or writing a file of the knowledge base failed.
    #[error("{path}: I/O error: {source}")]
    Io {
        /// The file or folder.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Another `kb add` or `kb remove` holds the index's writer lock.
    #[error("{dir}: another `kb add` or `kb remove` is writing this knowledge base; try again when it is done")]
    Busy {
        /// The folder.
        dir: String,
    },
    /// The full-text index failed (a bug, or a damaged index).
    #[error("{dir}: full-text index: {source}")]
    Index {
        /// The index folder.
        dir: String,
        /// tantivy's error.
        #[source]
        source: tantivy::TantivyError,
    },
    /// `kb remove` named no document of the knowledge base, or several.
    #[error("{0}")]
    UnknownDocument(String),
    /// `kb ask` on a knowledge base without documents.
    #[error("{dir}: the knowledge base holds no document (add some with `docintel kb add {dir} FILE…`)")]
    Empty {
        /// The folder.
        dir: String,
    },
    /// A key file that cannot be read or is not a key.
    #[error("{path}: not a knowledge-base key: {reason}")]
    KeyFile {
        /// The key file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The knowledge base is encrypted and no key was given.
    #[error("{dir}: the knowledge base is encrypted: give its key with --key-file FILE or DOCINTEL_KB_KEY_FILE")]
    KeyRequired {
        /// The folder.
        dir: String,
    },
    /// The key given is not the knowledge base's (checked before anything is read).
    #[error("{dir}: wrong key: this knowledge base was encrypted with another key")]
    WrongKey {
        /// The folder.
        dir: String,
    },
    /// `kb add` with a key into a knowledge base created without one.
    #[error(
        "{dir}: the knowledge base is not encrypted (created without a key); add to it without --key-file, or create a new one with the key"
    )]
    NotEncrypted {
        /// The folder.
        dir: String,
    },
    /// Encryption itself failed (no random bytes from the system).
    #[error("encryption failed: {0}")]
    Sealing(String),
    /// The question's pipeline failed.
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
}

impl KbError {
    /// The process exit code (README): 3 bad input (not a knowledge base, of
    /// another format, damaged, empty, an unknown document, a missing, bad or
    /// wrong key), 1 the rest; a
    /// pipeline error keeps its own.
    pub fn exit_code(&self) -> u8 {
        match self {
            KbError::NotAKb { .. }
            | KbError::Stale { .. }
            | KbError::Corrupt { .. }
            | KbError::UnknownDocument(_)
            | KbError::Empty { .. }
            | KbError::KeyFile { .. }
            | KbError::KeyRequired { .. }
            | KbError::WrongKey { .. }
            | KbError::NotEncrypted { .. } => EXIT_BAD_INPUT,
            KbError::Io { .. } | KbError::Busy { .. } | KbError::Index { .. } | KbError::Sealing(_) => EXIT_FAILURE,
            KbError::Pipeline(error) => error.exit_code(),
        }
    }
}

/// An I/O error naming `path`.
pub(crate) fn io_error(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> KbError + '_ {
    move |source| KbError::Io { path: path.display().to_string(), source }
}
