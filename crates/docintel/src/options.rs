//! What the caller may set for one question ([`AskOptions`]) and which
//! generator answers ([`GeneratorChoice`]).
//!
//! Three fields are the engine's rather than the question's: `generator`,
//! `satellites_dir` and `dictionary` are read once when an [`crate::Engine`]
//! is built (the free functions build one per call); an engine's methods read
//! every other field per question.

use std::borrow::Cow;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use docintel_llm::OpenAiConfig;
use docintel_parse::ParseOptions;

/// The most earlier turns a question is asked after: what `POST /v1/ask`
/// accepts as `history`, and what `docintel ask --follow-up` keeps of a
/// longer chain (the most recent ones).
pub const MAX_PREVIOUS_TURNS: usize = 20;

/// Which generator answers: the closed set of implementations.
#[derive(Debug, Clone)]
pub enum GeneratorChoice {
    /// The deterministic extractive generator (offline, the default).
    Extractive,
    /// A language model behind an OpenAI-compatible endpoint.
    Llm {
        /// How to reach the server.
        config: OpenAiConfig,
        /// The model name sent with every request.
        model: String,
    },
}

/// Per-question overrides, grouped by the brick they affect. Defaults come
/// from the dispatcher; no override is needed for a sensible answer.
#[derive(Debug, Clone)]
pub struct AskOptions {
    /// Retrieval: passages shown to the generator.
    pub top_k: usize,
    /// Model calls: the time one question's calls (question parse, routing, generation,
    /// retries included) may take; past it no call starts. Default 600 s.
    pub llm_time_budget: Duration,
    /// The instant that budget ends, set when the question starts (`pdf_qa`, `corpus_qa`,
    /// `answer_document`) unless the caller set one.
    pub llm_deadline: Option<Instant>,
    /// Model calls: the model's context window in tokens, when the caller
    /// knows it (else the server is asked, then the models table).
    pub llm_context: Option<u64>,
    /// Retrieval: lines of context around each hit.
    pub window: u32,
    /// Retrieval: restrict to these pages (overrides the question's hint).
    pub pages: Option<Vec<u32>>,
    /// Retrieval: allow TOC navigation (the dispatcher may still turn it off).
    pub use_toc: bool,
    /// Pipeline: where to write the per-question trace (`<out>/<document
    /// stem>/questions/...`), and the caches later runs reuse: parsed
    /// questions, and with embeddings the document's chunk vectors
    /// (`<out>/<document key>/embeddings/<key>.f32`). `None` writes none
    /// (chunk vectors are then cached in memory only).
    pub out_dir: Option<PathBuf>,
    /// Generation: which generator answers (the engine's: read when it is built).
    pub generator: GeneratorChoice,
    /// Question: a folder of satellite tables replacing the built-in ones (the engine's)
    /// (answer types, concepts, concept keywords, models...).
    pub satellites_dir: Option<PathBuf>,
    /// Question: an expert dictionary CSV (`concept,language,keyword,weight`)
    /// replacing the built-in one (the engine's).
    pub dictionary: Option<PathBuf>,
    /// Generation: the chunk strategy to execute, overriding the cascade's
    /// choice (noted in the parsing notes).
    pub strategy: Option<docintel_schema::ChunkStrategy>,
    /// Parsing: the password of an encrypted PDF (never logged or traced).
    pub password: Option<String>,
    /// Parsing: how pages with no text layer are read by OCR ([`Config::ocr`](crate::Config::ocr)
    /// reads `DOCINTEL_TESSERACT` and `DOCINTEL_OCR_MAX_PAGES`).
    pub ocr: docintel_parse::OcrOptions,
    /// Question: the earlier questions of the conversation, oldest first
    /// (empty: the question is asked alone). They are read by the rule
    /// parser's follow-up step only ([`docintel_question::RuleParser::resolve_follow_up`]):
    /// "When is it due?" after "What is the total amount?" is rewritten for
    /// retrieval ("When is the total amount due?"); generation and its prompt
    /// keep the user's words, and no turn is sent to a model (the model's
    /// question parse is asked without them). Reported in `_meta.follow_up`.
    /// Callers keep at most [`MAX_PREVIOUS_TURNS`].
    pub previous_turns: Vec<String>,
    /// Question: with an LLM generator, parse the question with the model
    /// too ([`crate::LlmQuestionParser`], which falls back to the rules on any bad
    /// reply). `false` keeps the rule parser.
    pub llm_question: bool,
    /// Retrieval: with an LLM generator, pick TOC branches with the model
    /// too ([`crate::LlmRouter`], keyword fallback on invalid replies). `false`
    /// keeps the keyword router.
    pub llm_router: bool,
    /// Generation: a JSON Schema file replacing the registry's answer schema
    /// (it must carry the feedback fields; model generation only). The reply
    /// is returned as `custom_answer`.
    pub schema: Option<PathBuf>,
    /// Generation: retry retrieval with the model's discovered keywords when
    /// the answer is insufficient, up to this many rounds in all (turns the
    /// question's `iterate_on_feedback` on; `None` keeps the dispatcher's
    /// choice). Only model generators discover keywords.
    pub iterate: Option<u32>,
    /// Generation: a JSONL bank of validated examples; the closest ones
    /// become the few-shot fragment of the model's prompt.
    pub examples: Option<PathBuf>,
    /// Retrieval: the all-MiniLM-L6-v2 model directory; when set, embedding
    /// retrieval runs beside the keyword search and the two are fused (needs
    /// a build with the `embeddings` feature; otherwise reported as skipped).
    pub embeddings: Option<PathBuf>,
    /// Parsing, with a model: figure pages and badly read scans described by it
    /// ([`Config::vision`](crate::Config::vision) reads `DOCINTEL_LLM_VISION` and
    /// `DOCINTEL_VISION_MAX_CALLS`). Never runs offline.
    pub vision: VisionSettings,
}

/// Whether a configured model describes page images, and how many calls one document may make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VisionSettings {
    /// `false`: no page image is sent, whatever the model.
    pub enabled: bool,
    /// The most vision calls per document (default [`docintel_parse::DEFAULT_VISION_MAX_CALLS`]).
    pub max_calls: usize,
}

impl Default for VisionSettings {
    fn default() -> VisionSettings {
        VisionSettings { enabled: true, max_calls: docintel_parse::DEFAULT_VISION_MAX_CALLS }
    }
}

impl AskOptions {
    /// Options with `top_k` passages, a 2-line window, no page override,
    /// TOC allowed, no trace written, and the offline extractive generator.
    pub fn new(top_k: usize) -> AskOptions {
        AskOptions {
            top_k,
            llm_time_budget: Duration::from_secs(600),
            llm_deadline: None,
            llm_context: None,
            window: 2,
            pages: None,
            use_toc: true,
            out_dir: None,
            generator: GeneratorChoice::Extractive,
            satellites_dir: None,
            dictionary: None,
            strategy: None,
            password: None,
            ocr: docintel_parse::OcrOptions::default(),
            previous_turns: Vec::new(),
            llm_question: true,
            llm_router: true,
            schema: None,
            iterate: None,
            examples: None,
            embeddings: None,
            vision: VisionSettings::default(),
        }
    }

    /// These options with the model-call deadline of a question starting now (kept when set).
    pub(crate) fn for_question(&self) -> Cow<'_, AskOptions> {
        if self.llm_deadline.is_some() {
            return Cow::Borrowed(self);
        }
        let mut options = self.clone();
        options.llm_deadline = Instant::now().checked_add(self.llm_time_budget);
        Cow::Owned(options)
    }

    /// The parse brick's options from these (the password, OCR).
    pub(crate) fn parse_options(&self) -> ParseOptions {
        let options = match &self.password {
            Some(password) => ParseOptions::with_password(password.clone()),
            None => ParseOptions::default(),
        };
        options.with_ocr(self.ocr.clone())
    }
}
