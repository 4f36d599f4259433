//! The environment, read in one place: [`Config::from_env`] takes the
//! `DOCINTEL_*` and `OPENAI_API_KEY` variables once, and its methods turn them
//! (under the caller's flags, which win) into the model configuration, the
//! context window and the embedding model folder. The bricks never read the
//! environment; a binary or a server calls this and hands the result on.
//!
//! Values are checked when used, not when read: a malformed
//! `DOCINTEL_LLM_TIMEOUT_SECS` only matters when a model is configured.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use docintel_llm::{ApiKey, OpenAiConfig};

use crate::{GeneratorChoice, PipelineError, VisionSettings};

/// The model asked when none is named (`--model`, `DOCINTEL_LLM_MODEL`).
pub const DEFAULT_MODEL: &str = "gpt-4.1-mini";
/// The endpoint used when only `OPENAI_API_KEY` is set.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// Seconds one model request may take unless `DOCINTEL_LLM_TIMEOUT_SECS` says otherwise.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;

/// The settings a process takes from its environment (blank values count as unset).
#[derive(Clone, Default)]
pub struct Config {
    /// `DOCINTEL_LLM_BASE_URL`: an OpenAI-compatible endpoint.
    pub llm_base_url: Option<String>,
    /// `OPENAI_API_KEY`.
    pub api_key: Option<ApiKey>,
    /// `DOCINTEL_LLM_MODEL`.
    pub llm_model: Option<String>,
    /// `DOCINTEL_LLM_TIMEOUT_SECS`, as written (checked by [`Config::generator`]).
    pub llm_timeout_secs: Option<String>,
    /// `DOCINTEL_LLM_CONTEXT`, as written (checked by [`Config::llm_context`]).
    pub llm_context: Option<String>,
    /// `DOCINTEL_EMBED_MODEL_DIR`: the all-MiniLM-L6-v2 folder.
    pub embed_model_dir: Option<PathBuf>,
    /// `DOCINTEL_TESSERACT`: the tesseract program OCR runs (else `tesseract` on `PATH`).
    pub tesseract: Option<PathBuf>,
    /// `DOCINTEL_OCR_MAX_PAGES`, as written (checked by [`Config::ocr`]).
    pub ocr_max_pages: Option<String>,
    /// `DOCINTEL_LLM_VISION`, as written (checked by [`Config::vision`]).
    pub llm_vision: Option<String>,
    /// `DOCINTEL_VISION_MAX_CALLS`, as written (checked by [`Config::vision`]).
    pub vision_max_calls: Option<String>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("llm_base_url", &self.llm_base_url.as_deref().map(docintel_llm::openai::redact_url))
            .field("api_key", &self.api_key)
            .field("llm_model", &self.llm_model)
            .field("llm_timeout_secs", &self.llm_timeout_secs)
            .field("llm_context", &self.llm_context)
            .field("embed_model_dir", &self.embed_model_dir)
            .field("tesseract", &self.tesseract)
            .field("ocr_max_pages", &self.ocr_max_pages)
            .field("llm_vision", &self.llm_vision)
            .field("vision_max_calls", &self.vision_max_calls)
            .finish()
    }
}

/// What the caller's flags say about the model, on top of the environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct LlmFlags<'a> {
    /// `--llm-base-url` (wins over `DOCINTEL_LLM_BASE_URL`).
    pub base_url: Option<&'a str>,
    /// `--model` (wins over `DOCINTEL_LLM_MODEL`).
    pub model: Option<&'a str>,
    /// `--offline`: the extractive generator whatever is configured.
    pub offline: bool,
}

impl Config {
    /// The process environment.
    pub fn from_env() -> Config {
        Config::from_lookup(|name| std::env::var_os(name))
    }

    /// The settings `lookup` gives for each variable name (tests, or a server
    /// reading its own configuration file).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<OsString>) -> Config {
        // Text variables: unset, not UTF-8 or blank all count as unset.
        let text = |name: &str| lookup(name).and_then(|v| v.into_string().ok()).filter(|v| !v.trim().is_empty());
        Config {
            llm_base_url: text("DOCINTEL_LLM_BASE_URL"),
            api_key: text("OPENAI_API_KEY").map(ApiKey::new),
            llm_model: text("DOCINTEL_LLM_MODEL"),
            llm_timeout_secs: text("DOCINTEL_LLM_TIMEOUT_SECS"),
            llm_context: text("DOCINTEL_LLM_CONTEXT"),
            embed_model_dir: lookup("DOCINTEL_EMBED_MODEL_DIR").filter(|v| !v.is_empty()).map(PathBuf::from),
            tesseract: lookup("DOCINTEL_TESSERACT").filter(|v| !v.is_empty()).map(PathBuf::from),
            ocr_max_pages: text("DOCINTEL_OCR_MAX_PAGES"),
            llm_vision: text("DOCINTEL_LLM_VISION"),
            vision_max_calls: text("DOCINTEL_VISION_MAX_CALLS"),
        }
    }

    /// The generator to use: a model when an endpoint or a key is configured
    /// (flag or environment) and `flags.offline` is not set, else the
    /// extractive one. A bad base URL or timeout is a [`PipelineError::Usage`].
    pub fn generator(&self, flags: LlmFlags<'_>) -> Result<GeneratorChoice, PipelineError> {
        if flags.offline {
            return Ok(GeneratorChoice::Extractive);
        }
        let base_url = flags.base_url.map(str::to_owned).or_else(|| self.llm_base_url.clone());
        if base_url.is_none() && self.api_key.is_none() {
            return Ok(GeneratorChoice::Extractive);
        }
        if let Some(url) = &base_url {
            let source = if flags.base_url.is_some() { "--llm-base-url" } else { "DOCINTEL_LLM_BASE_URL" };
            crate::openai_url(url).map_err(|reason| PipelineError::Usage(format!("{source}: {reason}")))?;
        }
        let timeout_secs = match &self.llm_timeout_secs {
            None => DEFAULT_TIMEOUT_SECS,
            Some(v) => match v.trim().parse::<u64>() {
                Ok(n) if n > 0 => n,
                _ => {
                    return Err(PipelineError::Usage(format!(
                        "DOCINTEL_LLM_TIMEOUT_SECS={v:?} is not a number of seconds (a whole number above 0)"
                    )));
                }
            },
        };
        let custom_server = base_url.is_some();
        let config = OpenAiConfig {
            base_url: base_url.unwrap_or_else(|| OPENAI_BASE_URL.to_owned()),
            api_key: self.api_key.clone(),
            timeout: Duration::from_secs(timeout_secs),
            max_retries: 3,
            backoff_base: Duration::from_millis(500),
            // Local servers (llama.cpp, older vLLM) only know `max_tokens`.
            send_legacy_max_tokens: custom_server,
        };
        let model = flags.model.map(str::to_owned).or_else(|| self.llm_model.clone());
        Ok(GeneratorChoice::Llm { config, model: model.unwrap_or_else(|| DEFAULT_MODEL.to_owned()) })
    }

    /// The model's context window the caller gave: `flag` (`--llm-context`),
    /// else `DOCINTEL_LLM_CONTEXT` (256 tokens or more, else a usage error).
    pub fn llm_context(&self, flag: Option<u64>) -> Result<Option<u64>, PipelineError> {
        if flag.is_some() {
            return Ok(flag);
        }
        match &self.llm_context {
            None => Ok(None),
            Some(v) => match v.trim().parse::<u64>() {
                Ok(n) if n >= 256 => Ok(Some(n)),
                _ => Err(PipelineError::Usage(format!(
                    "DOCINTEL_LLM_CONTEXT={v:?} is not a context size in tokens (256 or more)"
                ))),
            },
        }
    }

    /// How pages with no text layer are read: `DOCINTEL_TESSERACT` (the program, else
    /// `tesseract` on `PATH`) and `DOCINTEL_OCR_MAX_PAGES` (pages read per document, 0 for
    /// none; default [`docintel_parse::DEFAULT_OCR_MAX_PAGES`]; not a number: a usage error).
    pub fn ocr(&self) -> Result<docintel_parse::OcrOptions, PipelineError> {
        let mut ocr = docintel_parse::OcrOptions::default();
        if let Some(program) = &self.tesseract {
            ocr = ocr.with_tesseract(program);
        }
        if let Some(v) = &self.ocr_max_pages {
            let pages = v.trim().parse::<usize>().map_err(|_| {
                PipelineError::Usage(format!("DOCINTEL_OCR_MAX_PAGES={v:?} is not a number of pages (0 or more)"))
            })?;
            ocr = ocr.with_max_pages(pages);
        }
        Ok(ocr)
    }

    /// Whether a configured model is shown page images: `DOCINTEL_LLM_VISION` (`1` or
    /// `0`; default on, for a model that does not read images is found out by its first
    /// refusal) and `DOCINTEL_VISION_MAX_CALLS` (calls per document, default
    /// [`docintel_parse::DEFAULT_VISION_MAX_CALLS`]). Anything else is a usage error.
    pub fn vision(&self) -> Result<VisionSettings, PipelineError> {
        let mut vision = VisionSettings::default();
        if let Some(v) = &self.llm_vision {
            vision.enabled = match v.trim() {
                "1" => true,
                "0" => false,
                _ => return Err(PipelineError::Usage(format!("DOCINTEL_LLM_VISION={v:?} is neither 0 nor 1"))),
            };
        }
        if let Some(v) = &self.vision_max_calls {
            vision.max_calls = v.trim().parse::<usize>().map_err(|_| {
                PipelineError::Usage(format!("DOCINTEL_VISION_MAX_CALLS={v:?} is not a number of calls (0 or more)"))
            })?;
        }
        Ok(vision)
    }

    /// The embedding model folder: `flag` (`--embeddings DIR`), else `DOCINTEL_EMBED_MODEL_DIR`.
    pub fn embed_model_dir(&self, flag: Option<&Path>) -> Option<PathBuf> {
        flag.map(Path::to_owned).or_else(|| self.embed_model_dir.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(vars: &[(&str, &str)]) -> Config {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        Config::from_lookup(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| OsString::from(v)))
    }

    #[test]
    fn nothing_configured_answers_offline() {
        let choice = config(&[("DOCINTEL_LLM_BASE_URL", "  ")]).generator(LlmFlags::default()).unwrap();
        assert!(matches!(choice, GeneratorChoice::Extractive));
    }

    #[test]
    fn flags_win_over_the_environment() {
        let config = config(&[
            ("DOCINTEL_LLM_BASE_URL", "http://127.0.0.1:1/v1"),
            ("DOCINTEL_LLM_MODEL", "env-model"),
            ("DOCINTEL_LLM_TIMEOUT_SECS", "7"),
            ("DOCINTEL_LLM_CONTEXT", "4096"),
        ]);
        let flags = LlmFlags { base_url: Some("http://127.0.0.1:2/v1"), model: Some("flag-model"), offline: false };
        match config.generator(flags).unwrap() {
            GeneratorChoice::Llm { config, model } => {
                assert_eq!((config.base_url.as_str(), model.as_str()), ("http://127.0.0.1:2/v1", "flag-model"));
                assert_eq!(config.timeout, Duration::from_secs(7));
                assert!(config.send_legacy_max_tokens);
            }
            GeneratorChoice::Extractive => panic!("a model is configured"),
        }
        assert_eq!(config.llm_context(None).unwrap(), Some(4096));
        assert_eq!(config.llm_context(Some(512)).unwrap(), Some(512));
        let offline = LlmFlags { offline: true, ..flags };
        assert!(matches!(config.generator(offline).unwrap(), GeneratorChoice::Extractive));
    }

    #[test]
    fn malformed_values_are_usage_errors_naming_the_variable() {
        let bad = config(&[("OPENAI_API_KEY", "sk-test"), ("DOCINTEL_LLM_TIMEOUT_SECS", "soon")]);
        let error = bad.generator(LlmFlags::default()).unwrap_err();
        assert_eq!(error.exit_code(), crate::error::EXIT_USAGE);
        assert!(error.to_string().contains("DOCINTEL_LLM_TIMEOUT_SECS"), "{error}");
        let error = config(&[("DOCINTEL_LLM_CONTEXT", "12")]).llm_context(None).unwrap_err();
        assert!(error.to_string().contains("DOCINTEL_LLM_CONTEXT"), "{error}");
        // Unused, a bad timeout is no error.
        let offline = config(&[("DOCINTEL_LLM_TIMEOUT_SECS", "soon")]);
        assert!(matches!(offline.generator(LlmFlags::default()).unwrap(), GeneratorChoice::Extractive));
    }

    #[test]
    fn vision_settings_come_from_the_environment() {
        assert_eq!(config(&[]).vision().unwrap(), VisionSettings { enabled: true, max_calls: 20 });
        let set = config(&[("DOCINTEL_LLM_VISION", "0"), ("DOCINTEL_VISION_MAX_CALLS", "3")]).vision().unwrap();
        assert_eq!(set, VisionSettings { enabled: false, max_calls: 3 });
        for (name, value) in [("DOCINTEL_LLM_VISION", "yes"), ("DOCINTEL_VISION_MAX_CALLS", "-1")] {
            let error = config(&[(name, value)]).vision().unwrap_err();
            assert_eq!(error.exit_code(), crate::error::EXIT_USAGE);
            assert!(error.to_string().contains(name), "{error}");
        }
    }

    #[test]
    fn ocr_settings_come_from_the_environment() {
        let ocr = config(&[("DOCINTEL_TESSERACT", "/opt/t/tesseract"), ("DOCINTEL_OCR_MAX_PAGES", "3")]).ocr().unwrap();
        assert_eq!(ocr, docintel_parse::OcrOptions::default().with_tesseract("/opt/t/tesseract").with_max_pages(3));
        assert_eq!(config(&[]).ocr().unwrap(), docintel_parse::OcrOptions::default());
        let error = config(&[("DOCINTEL_OCR_MAX_PAGES", "many")]).ocr().unwrap_err();
        assert_eq!(error.exit_code(), crate::error::EXIT_USAGE);
        assert!(error.to_string().contains("DOCINTEL_OCR_MAX_PAGES"), "{error}");
    }
}
