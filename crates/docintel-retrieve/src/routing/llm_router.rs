//! The LLM router: a language model picks the TOC branch(es) of one level.
//!
//! [`LlmRouter`] implements the schema's [`Router`] step like the
//! deterministic [`KeywordRouter`]: it is shown ONE level of the TOC (each
//! entry as its compact [`RouterLine::render`] text, never the whole tree)
//! and answers with a structured pick, `{"ids": [...], "reason": "..."}`,
//! under a strict JSON Schema. A reply that is not a valid pick (not JSON,
//! cut at the token limit, an id that was not shown, too many ids) is not
//! trusted: the keyword router decides that level instead and the reason says
//! so, so the trace shows the fallback. A transport failure is an error (the
//! retriever reports it as [`RetrieveError::Router`]).
//!
//! [`RetrieveError::Router`]: crate::RetrieveError::Router

use std::sync::Mutex;

use docintel_schema::{
    ChatMessage, LanguageModel, LlmRequest, LlmResponse, ParsedQuestion, Router, RouterLine, RouterPick,
};
use serde_json::{Value, json};

use super::{KeywordRouter, RoutingConfig};

/// The name of the strict schema sent with every routing request.
pub const ROUTER_SCHEMA_NAME: &str = "toc_pick";

const SYSTEM_PROMPT: &str = "You route a question through the table of contents of one document, one level at a \
time. You see the entries of ONE level, one per line: `[id] title · pages` and, when titles alone are ambiguous, \
how many question keywords occur inside the branch. Pick the entry id(s) whose section most likely holds the \
answer, best first, at most MAX_PICKS. Pick nothing (an empty list) when no entry relates to the question. Give a \
short reason. Use only ids shown.";

/// Why the LLM router failed: only the transport can make it fail (an
/// invalid reply falls back to the keyword router).
#[derive(Debug)]
#[non_exhaustive]
pub enum LlmRouterError<E> {
    /// The language model transport failed.
    Transport(E),
}

impl<E: std::error::Error> std::fmt::Display for LlmRouterError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LlmRouterError::Transport(_) => write!(f, "the routing model's transport failed"),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for LlmRouterError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LlmRouterError::Transport(source) => Some(source),
        }
    }
}

/// A TOC router backed by a language model, with the keyword router as the
/// fallback for invalid replies.
#[derive(Debug)]
pub struct LlmRouter<L: LanguageModel> {
    model: L,
    model_name: String,
    max_picks: usize,
    fallback: KeywordRouter,
    max_output_tokens: u32,
    notes: Mutex<Vec<String>>,
    responses: Mutex<Vec<LlmResponse>>,
}

impl<L: LanguageModel> LlmRouter<L> {
    /// A router asking `model` (the transport) as `model_name`, picking at
    /// most `routing.max_picks` branches per level; the keyword router with
    /// the same knobs is the fallback.
    pub fn new(model: L, model_name: impl Into<String>, routing: RoutingConfig) -> LlmRouter<L> {
        LlmRouter {
            model,
            model_name: model_name.into(),
            max_picks: routing.max_picks.max(1),
            fallback: KeywordRouter::new(routing),
            max_output_tokens: 300,
            notes: Mutex::new(Vec::new()),
            responses: Mutex::new(Vec::new()),
        }
    }

    /// The strict JSON Schema of a pick.
    pub fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "ids": {
                    "type": "array",
                    "items": {"type": "integer"},
                    "description": "TOC entry ids picked, best first; empty when nothing relates",
                },
                "reason": {"type": "string", "description": "why, in one sentence"},
            },
            "required": ["ids", "reason"],
            "additionalProperties": false,
        })
    }

    /// The request for one level: the question and the level's lines, nothing
    /// deeper.
    pub fn request(&self, lines: &[RouterLine], question: &ParsedQuestion) -> LlmRequest {
        let shown: Vec<String> = lines.iter().map(RouterLine::render).collect();
        let user =
            format!("Question: {}\n\nTable of contents, one level:\n{}", question.corrected_question, shown.join("\n"));
        LlmRequest {
            model: self.model_name.clone(),
            messages: vec![
                ChatMessage {
                    role: "system".to_owned(),
                    content: SYSTEM_PROMPT.replace("MAX_PICKS", &self.max_picks.to_string()),
                },
                ChatMessage { role: "user".to_owned(), content: user },
            ],
            schema_name: ROUTER_SCHEMA_NAME.to_owned(),
            schema: self.schema(),
            temperature: 0.0,
            max_output_tokens: Some(self.max_output_tokens),
        }
    }

    /// Notes on the replies not trusted so far (one per fallback).
    pub fn notes(&self) -> Vec<String> {
        self.notes.lock().map(|n| n.clone()).unwrap_or_default()
    }

    /// Every reply received so far, in call order, verbatim (for the audit
    /// trail and the token count: [`Router::route`] has no trace sink).
    pub fn responses(&self) -> Vec<LlmResponse> {
        self.responses.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// The pick in a reply, or why it is not one.
    fn validate(&self, content: &str, finish_reason: &str, lines: &[RouterLine]) -> Result<RouterPick, String> {
        if finish_reason == "length" {
            return Err("the reply was cut at the output token limit".to_owned());
        }
        let value: Value = serde_json::from_str(content).map_err(|e| format!("the reply is not JSON ({e})"))?;
        let ids = value.get("ids").and_then(Value::as_array).ok_or("the reply has no `ids` list")?;
        let reason = value.get("reason").and_then(Value::as_str).ok_or("the reply has no `reason` text")?;
        if ids.len() > self.max_picks {
            return Err(format!("{} ids picked, at most {} allowed", ids.len(), self.max_picks));
        }
        let mut picked: Vec<u32> = Vec::with_capacity(ids.len());
        for id in ids {
            let id = id.as_u64().and_then(|i| u32::try_from(i).ok()).ok_or(format!("id {id} is not a TOC row id"))?;
            if !lines.iter().any(|l| l.id == id) {
                return Err(format!("id {id} was not among the entries shown"));
            }
            if !picked.contains(&id) {
                picked.push(id);
            }
        }
        Ok(RouterPick { ids: picked, reason: reason.to_owned() })
    }
}

impl<L: LanguageModel> Router for LlmRouter<L> {
    type Error = LlmRouterError<L::Error>;

    fn name(&self) -> String {
        format!("llm-router/0.1 ({})", self.model_name)
    }

    fn route(&self, lines: &[RouterLine], question: &ParsedQuestion) -> Result<RouterPick, Self::Error> {
        let request = self.request(lines, question);
        let response = match self.model.complete(&request) {
            Ok(response) => response,
            // A reply cut at the token limit is an unusable reply, not a
            // broken transport: the keyword router decides this level.
            Err(error) => match L::cut_reply(&error) {
                Some(raw) => LlmResponse::cut(raw),
                None => return Err(LlmRouterError::Transport(error)),
            },
        };
        if let Ok(mut responses) = self.responses.lock() {
            responses.push(response.clone());
        }
        match self.validate(&response.content, &response.finish_reason, lines) {
            Ok(pick) => Ok(pick),
            Err(problem) => {
                let note = format!("LLM router reply {} not used: {problem}; keyword router fallback", response.id);
                if let Ok(mut notes) = self.notes.lock() {
                    notes.push(note.clone());
                }
                // The keyword router is infallible.
                let pick = match self.fallback.route(lines, question) {
                    Ok(pick) => pick,
                    Err(never) => match never {},
                };
                Ok(RouterPick { ids: pick.ids, reason: format!("{note}: {}", pick.reason) })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::collections::VecDeque;

    use docintel_schema::{KeywordEvidence, LlmResponse, NullSink, ParsedDocument, TraceEvent};

    use super::*;
    use crate::test_support::{document, question};
    use crate::{KeywordRetriever, RetrieveConfig};

    /// Replays recorded responses in order and keeps the requests.
    struct Replay {
        responses: RefCell<VecDeque<LlmResponse>>,
        requests: RefCell<Vec<LlmRequest>>,
    }

    #[derive(Debug)]
    struct ReplayExhausted;

    impl std::fmt::Display for ReplayExhausted {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("no recorded response left")
        }
    }

    impl std::error::Error for ReplayExhausted {}

    impl Replay {
        /// Responses recorded under `tests/data/llm_router/`.
        fn recorded(names: &[&str]) -> Replay {
            let responses = names
                .iter()
                .map(|name| {
                    let path =
                        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/llm_router").join(name);
                    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
                })
                .collect();
            Replay { responses: RefCell::new(responses), requests: RefCell::new(Vec::new()) }
        }
    }

    impl LanguageModel for &Replay {
        type Error = ReplayExhausted;
        fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, ReplayExhausted> {
            self.requests.borrow_mut().push(request.clone());
            self.responses.borrow_mut().pop_front().ok_or(ReplayExhausted)
        }
    }

    fn line(id: u32, title: &str, in_title: bool) -> RouterLine {
        RouterLine {
            id,
            title: title.to_owned(),
            start_page: id + 1,
            end_page: id + 1,
            n_children: 0,
            n_lines: 10,
            keyword_hits: u32::from(in_title),
            show_hits: false,
            evidence: vec![KeywordEvidence {
                keyword: "audit".into(),
                weight: 1.0,
                identifier: false,
                in_title,
                in_sub_titles: 0,
                in_body: u32::from(in_title),
            }],
        }
    }

    fn level() -> Vec<RouterLine> {
        vec![line(0, "Access Control", false), line(1, "Audit and Accountability", true), line(2, "Awareness", false)]
    }

    fn router(replay: &Replay) -> LlmRouter<&Replay> {
        LlmRouter::new(replay, "fake-model", RoutingConfig::STANDARD)
    }

    #[test]
    fn a_valid_pick_is_used_and_the_request_shows_one_level_under_a_strict_schema() {
        let replay = Replay::recorded(&["pick_2.json"]);
        let q = question(&["audit"], "text", &[]);
        let pick = router(&replay).route(&level(), &q).unwrap();
        // The model picked [2] although the keyword router would pick [1].
        assert_eq!(pick.ids, vec![2]);
        assert_eq!(pick.reason, "Awareness training covers the question");
        let requests = replay.requests.borrow();
        assert_eq!(requests.len(), 1);
        let request = &requests[0];
        assert_eq!(request.schema_name, ROUTER_SCHEMA_NAME);
        assert_eq!(request.schema["additionalProperties"], false);
        assert_eq!(request.schema["required"], json!(["ids", "reason"]));
        assert_eq!(request.temperature, 0.0);
        let user = &request.messages[1].content;
        for l in level() {
            assert!(user.contains(&l.render()), "{user}");
        }
        assert_eq!(user.lines().filter(|l| l.starts_with('[')).count(), 3, "one level only: {user}");
    }

    #[test]
    fn invalid_replies_fall_back_to_the_keyword_router_with_a_note() {
        let q = question(&["audit"], "text", &[]);
        for (file, problem) in [
            ("not_json.json", "not JSON"),
            ("unknown_id.json", "not among the entries shown"),
            ("truncated.json", "cut at the output token limit"),
            ("too_many.json", "at most 3 allowed"),
        ] {
            let replay = Replay::recorded(&[file]);
            let r = router(&replay);
            let pick = r.route(&level(), &q).unwrap();
            assert_eq!(pick.ids, vec![1], "{file}: the keyword router's pick");
            assert!(pick.reason.contains("keyword router fallback"), "{file}: {}", pick.reason);
            assert!(pick.reason.contains(problem), "{file}: {}", pick.reason);
            assert_eq!(r.notes().len(), 1, "{file}");
        }
    }

    #[test]
    fn a_transport_failure_is_an_error() {
        let replay = Replay::recorded(&[]);
        let q = question(&["audit"], "text", &[]);
        assert!(matches!(router(&replay).route(&level(), &q), Err(LlmRouterError::Transport(ReplayExhausted))));
    }

    fn toc_document() -> ParsedDocument {
        let mut doc = document(&[
            &["Contents"],
            &["Access control", "accounts are managed"],
            &["Audit", "events are logged"],
            &["Awareness", "staff are trained yearly"],
        ]);
        let entry = crate::test_support::toc_entry;
        doc.toc = vec![
            entry(0, None, 1, "Contents", (1, 1)),
            entry(1, None, 1, "Controls", (2, 4)),
            entry(2, Some(1), 2, "Access control", (2, 2)),
            entry(3, Some(1), 2, "Audit", (3, 3)),
            entry(4, Some(1), 2, "Awareness", (4, 4)),
        ];
        doc
    }

    #[test]
    fn the_retriever_walks_the_toc_with_the_llm_router_level_by_level() {
        // Level 1: the model opens [1] "Controls"; level 2: it picks [4].
        let replay = Replay::recorded(&["walk_level1.json", "walk_level2.json"]);
        let r =
            LlmRouter::new(&replay, "fake-model", RoutingConfig { small_section_pages: 0, ..RoutingConfig::STANDARD });
        let doc = toc_document();
        let retriever =
            KeywordRetriever::new(RetrieveConfig { top_k: 3, window: 1, reserve: 3, read_pages_whole: false });
        let q = question(&["trained", "staff"], "text", &[]);
        let mut events: Vec<TraceEvent> = Vec::new();
        let retrieval = retriever.retrieve_with_router(&r, &q, &doc, &mut events).unwrap();
        assert_eq!(retrieval.passages.iter().map(|p| p.page).collect::<Vec<_>>(), vec![4]);
        let levels: Vec<&TraceEvent> = events.iter().filter(|e| e.step == "toc_level").collect();
        assert_eq!(levels.len(), 2);
        assert_eq!(levels[0].detail["router"], "llm-router/0.1 (fake-model)");
        assert_eq!(levels[1].detail["pick"], json!([4]));
        assert_eq!(levels[1].detail["reason"], "Awareness is about training staff");
        // Each request showed one level: 2 top entries, then 3 children.
        let shown: Vec<usize> = replay
            .requests
            .borrow()
            .iter()
            .map(|r| r.messages[1].content.lines().filter(|l| l.starts_with('[')).count())
            .collect();
        assert_eq!(shown, vec![2, 3]);
        // A failing transport surfaces as a router error.
        let empty = Replay::recorded(&[]);
        let r = LlmRouter::new(&empty, "fake-model", RoutingConfig::STANDARD);
        assert!(retriever.retrieve_with_router(&r, &q, &doc, &mut NullSink).is_err());
    }
}
