//! Why a question could not be answered ([`PipelineError`]), and the exit
//! code each cause maps to ([`PipelineError::exit_code`]): the CLI's, and what
//! a server would map to its own statuses.

use docintel_parse::{HighlightError, ParseError};
use docintel_question::{DictionaryError, SatelliteError};
use docintel_schema::AskOutput;
use docintel_trace::TraceError;

/// Exit code: the question was answered (an honest "not found" is an answer).
pub const EXIT_OK: u8 = 0;
/// Exit code: an internal failure (a bug, a model transport failure, an answer whose
/// trace or highlight could not be written).
pub const EXIT_FAILURE: u8 = 1;
/// Exit code: a usage error (bad arguments or settings).
pub const EXIT_USAGE: u8 = 2;
/// Exit code: bad input (missing file, not a PDF, encrypted, unreadable, bad tables,
/// not a trace folder).
pub const EXIT_BAD_INPUT: u8 = 3;

/// Why a question could not be answered at all. An honest "not found" is an
/// answer, not an error.
#[derive(Debug)]
#[non_exhaustive]
pub enum PipelineError {
    /// The document could not be read.
    Parse(ParseError),
    /// A brick failed (a bug or a transport failure); the message says which.
    Brick {
        /// The brick (`question`, `retrieve`, `generate`).
        brick: &'static str,
        /// The brick's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The trace could not be read (replay).
    Trace(TraceError),
    /// The question was answered but its audit trail could not be written: the answer is
    /// here, to print before the failure.
    NotWritten {
        /// What could not be written, and why.
        message: String,
        /// The answer (its `_meta.trace_dir` is `None`).
        output: Box<AskOutput>,
    },
    /// The satellite tables given by the caller do not load.
    Satellites(SatelliteError),
    /// The expert dictionary given by the caller does not load.
    Dictionary(DictionaryError),
    /// The caller's answer schema does not load, lacks the feedback fields,
    /// or was given without a model to fill it.
    Schema(String),
    /// Another file or folder the caller named (an example bank, an
    /// embedding model) does not load; the message names it and the cause.
    Config(String),
    /// A setting the caller gave is not usable: a bad `--llm-base-url`, a
    /// `DOCINTEL_LLM_TIMEOUT_SECS` that is no number, an empty question...
    Usage(String),
    /// The highlighted copy of a PDF could not be written.
    Highlight(HighlightError),
    /// A corpus folder holds no readable document.
    EmptyCorpus {
        /// The folder.
        folder: String,
        /// The files that could not be read, with the cause.
        unreadable: Vec<String>,
    },
}

impl std::fmt::Display for PipelineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PipelineError::Parse(e) => write!(f, "{e}"),
            PipelineError::Brick { brick, .. } => write!(f, "the {brick} brick failed"),
            PipelineError::Trace(e) => write!(f, "{e}"),
            PipelineError::NotWritten { message, .. } => write!(
                f,
                "the answer was not recorded: {message} (give a writable --out DIR, or --no-trace to answer without an audit trail)"
            ),
            PipelineError::Satellites(e) => write!(f, "{e}"),
            PipelineError::Dictionary(e) => write!(f, "{e}"),
            PipelineError::Schema(message) => write!(f, "answer schema {message}"),
            PipelineError::Config(message) | PipelineError::Usage(message) => write!(f, "{message}"),
            PipelineError::Highlight(e) => write!(f, "{e}"),
            PipelineError::EmptyCorpus { folder, unreadable } => {
                write!(f, "{folder}: no readable document (pdf, txt, md, docx)")?;
                for line in unreadable {
                    write!(f, "; {line}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for PipelineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Parse and trace errors are complete one-line messages (file and
            // cause); chaining them again would print the cause twice.
            PipelineError::Parse(_)
            | PipelineError::Trace(_)
            | PipelineError::NotWritten { .. }
            | PipelineError::Satellites(_)
            | PipelineError::Dictionary(_)
            | PipelineError::Schema(_)
            | PipelineError::Config(_)
            | PipelineError::Usage(_)
            | PipelineError::Highlight(_)
            | PipelineError::EmptyCorpus { .. } => None,
            PipelineError::Brick { source, .. } => Some(source.as_ref()),
        }
    }
}

impl PipelineError {
    /// The process exit code for this failure (`docintel --help` lists them): 2 a
    /// usage error, 3 bad input, 1 anything else (a bug, a transport failure, an
    /// answer whose trace or highlight could not be written).
    pub fn exit_code(&self) -> u8 {
        match self {
            PipelineError::Usage(_) => EXIT_USAGE,
            PipelineError::Parse(_)
            | PipelineError::Satellites(_)
            | PipelineError::Dictionary(_)
            | PipelineError::Schema(_)
            | PipelineError::Config(_)
            | PipelineError::Trace(
                TraceError::Missing { .. } | TraceError::Corrupt { .. } | TraceError::Version { .. },
            )
            | PipelineError::Highlight(HighlightError::Read { .. } | HighlightError::Encrypted { .. })
            | PipelineError::EmptyCorpus { .. } => EXIT_BAD_INPUT,
            PipelineError::Brick { .. }
            | PipelineError::Trace(_)
            | PipelineError::Highlight(_)
            | PipelineError::NotWritten { .. } => EXIT_FAILURE,
        }
    }
}

/// A brick's error as a [`PipelineError`].
pub(crate) fn brick_error(
    brick: &'static str,
) -> impl FnOnce(Box<dyn std::error::Error + Send + Sync>) -> PipelineError {
    move |source| PipelineError::Brick { brick, source }
}
