//! The vision step of a question's document, with a model: the parse brick's
//! [`docintel_parse::describe_pages`] run on the engine's transport, its calls priced
//! like the question's others (`_meta.llm_usage.vision`), reported in `_meta.vision`
//! and traced (`parse/vision`, each call's raw reply also in `llm_responses.jsonl`).

use std::path::Path;

use docintel_parse::VisionOptions;
use docintel_schema::{DocumentFormat, ParsedDocument, TraceEvent, VisionMeta};

use crate::AskOptions;
use crate::bricks::LlmClient;
use crate::meta::ModelUse;

/// The folder under the output folder holding one vision reply per page image.
pub const VISION_CACHE_DIR: &str = "vision-cache";

/// What the vision step did for one document.
pub(crate) struct DocumentVision {
    pub(crate) meta: VisionMeta,
    pub(crate) usage: ModelUse,
    pub(crate) events: Vec<TraceEvent>,
}

/// Describes the figure pages and badly read scans of the PDF at `path` (already parsed
/// into `document`) with the engine's model; `None` offline, with vision turned off, or
/// for a document that is not a PDF.
pub(crate) fn describe(
    llm: Option<&LlmClient>,
    path: &Path,
    document: &mut ParsedDocument,
    options: &AskOptions,
) -> Option<DocumentVision> {
    let llm = llm?;
    if !options.vision.enabled || document.profile.format != DocumentFormat::Pdf {
        return None;
    }
    let vision_options = VisionOptions {
        model: llm.model.clone(),
        max_calls: options.vision.max_calls,
        cache_dir: options.out_dir.as_ref().map(|out| out.join(VISION_CACHE_DIR)),
    };
    let mut meta = VisionMeta { max_calls: options.vision.max_calls as u32, ..VisionMeta::default() };
    if docintel_parse::vision_pages(document).is_empty() {
        return Some(DocumentVision { meta, usage: ModelUse::default(), events: Vec::new() });
    }
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) => {
            meta.notes.push(format!("vision skipped: {}: {e}", path.display()));
            return Some(DocumentVision { meta, usage: ModelUse::default(), events: Vec::new() });
        }
    };
    let transport = llm.transport(options.llm_deadline);
    let run =
        docintel_parse::describe_pages(document, &bytes, options.password.as_deref(), &transport, &vision_options);
    let mut usage = ModelUse::default();
    usage.add(&run.usage, run.calls);
    let events = run
        .events
        .into_iter()
        .map(|detail| TraceEvent { brick: "parse".into(), step: "vision".into(), detail })
        .collect();
    meta.pages = run.pages;
    meta.calls = run.calls;
    meta.cached = run.cached;
    meta.notes = run.notes;
    Some(DocumentVision { meta, usage, events })
}
