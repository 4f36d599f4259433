//! The docintel contract: the types every brick reads and writes, the answer
//! schema family with `ANSWER_REGISTRY`, and the brick traits.
//!
//! Every brick crate depends on this crate and on nothing else of docintel,
//! so each brick can be linked into another project or tested alone.
//!
//! ```
//! use docintel_schema::{AnswerShape, registry};
//!
//! let entry = registry::lookup(AnswerShape::Single, "amount").unwrap();
//! let schema = entry.json_schema();
//! assert_eq!(schema["additionalProperties"], false);
//! ```

#![warn(missing_docs)]

pub mod answer;
pub mod brick;
pub mod document;
pub mod meta;
pub mod question;
pub mod registry;
pub mod retrieval;
pub mod routing;
pub mod rows;
pub mod slug;
pub mod text;
pub mod trace;

pub use answer::{
    Amount, Answer, AnswerFeedback, AnswerValue, DateValue, ExtractedField, ExtractionMethod, FieldExtraction, Item,
    Quantity, Span, TableValue, TypedAnswer,
};
pub use brick::{
    ChatMessage, ContextOverflow, Generation, GenerationCall, Generator, LanguageModel, LlmRequest, LlmResponse,
    NullSink, QuestionParser, Retriever, TraceEvent, TraceSink, Usage,
};
pub use document::{
    BBox, Chunk, Diagnostic, DocumentFormat, DocumentProfile, Line, LineSource, OcrLine, PageInfo, ParsedDocument,
    Severity, TocEntry, TocSource,
};
pub use meta::{
    AskOutput, CitationProblem, CitedSource, CorpusMeta, FollowUp, Meta, SkippedStep, StepUsage, VisionMeta,
};
pub use question::{
    AnswerContext, AnswerShape, AskedPart, ChunkStrategy, Computed, Decomposition, DecompositionPattern, Distinction,
    ExecutionPlan, GenerationBrief, Keyword, KeywordSource, ParsedQuestion, RetrievalQuery, ScopeFilters,
    StructuralHints,
};
pub use registry::{ANSWER_REGISTRY, RegistryEntry, ValueKind};
pub use retrieval::{Passage, Retrieval};
pub use routing::{KeywordEvidence, Router, RouterLine, RouterPick};
pub use rows::RowView;
