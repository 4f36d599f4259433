//! Integration tests of the OpenAI-compatible transport against a mock HTTP
//! server on 127.0.0.1 (a std `TcpListener` thread serving canned replies).
//! No test touches the real network.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use docintel_llm::{ApiKey, LlmError, OpenAiConfig, OpenAiTransport};
use docintel_schema::{ChatMessage, LanguageModel, LlmRequest, Usage};
use serde_json::{Value, json};

/// What the mock server does with one connection.
enum Canned {
    /// Answers with this status and JSON body.
    Reply(u16, String),
    /// Reads the request and never answers (until the client hangs up).
    Stall,
    /// Answers 200 with this body and no content-length (read until the server closes).
    Unsized(String),
}

/// A request as the server saw it.
struct Seen {
    head: String,
    body: Value,
}

struct MockServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Vec<Seen>>,
}

impl MockServer {
    /// Serves `script` in order, one connection per entry.
    fn start(script: Vec<Canned>) -> MockServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut seen = Vec::new();
            for canned in script {
                let stream = loop {
                    match listener.accept() {
                        Ok((stream, _)) => break Some(stream),
                        Err(_) if flag.load(Ordering::SeqCst) => break None,
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                };
                let Some(mut stream) = stream else { break };
                stream.set_nonblocking(false).unwrap();
                stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                seen.push(read_request(&mut stream));
                match canned {
                    Canned::Reply(status, body) => {
                        let reply = format!(
                            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                            body.len()
                        );
                        // A client that refuses a huge reply hangs up part way.
                        let _ = stream.write_all(reply.as_bytes());
                    }
                    Canned::Unsized(body) => {
                        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n";
                        let _ = stream.write_all(head.as_bytes());
                        // The client may hang up once it has read enough.
                        let _ = stream.write_all(body.as_bytes());
                    }
                    Canned::Stall => {
                        // Wait for the client to give up and close.
                        let mut buf = [0u8; 64];
                        let _ = stream.read(&mut buf);
                    }
                }
            }
            seen
        });
        MockServer { addr, stop, handle }
    }

    fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Stops the server and returns the requests it received.
    fn finish(self) -> Vec<Seen> {
        self.stop.store(true, Ordering::SeqCst);
        self.handle.join().unwrap()
    }
}

fn read_request(stream: &mut TcpStream) -> Seen {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let header_end = loop {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "client closed before sending a request");
        data.extend_from_slice(&buf[..n]);
        if let Some(pos) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos + 4;
        }
    };
    let head = String::from_utf8_lossy(&data[..header_end]).to_string();
    let length: usize = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap()))
        .unwrap_or(0);
    while data.len() < header_end + length {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0);
        data.extend_from_slice(&buf[..n]);
    }
    // A GET has no body.
    Seen { head, body: serde_json::from_slice(&data[header_end..header_end + length]).unwrap_or(Value::Null) }
}

fn completion(content: &str, finish_reason: &str) -> String {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "tiny-model",
        "system_fingerprint": "b1234",
        "choices": [{"index": 0, "finish_reason": finish_reason,
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 15, "total_tokens": 135,
                  "prompt_tokens_details": {"cached_tokens": 64}},
        "timings": {"predicted_ms": 12.5}
    })
    .to_string()
}

fn error_body(message: &str) -> String {
    json!({"error": {"message": message, "type": "server_error", "param": null, "code": null}}).to_string()
}

fn transport(base_url: String, key: Option<&str>, max_retries: u32, timeout_ms: u64) -> OpenAiTransport {
    OpenAiTransport::new(OpenAiConfig {
        base_url,
        api_key: key.map(ApiKey::new),
        timeout: Duration::from_millis(timeout_ms),
        max_retries,
        backoff_base: Duration::from_millis(20),
        send_legacy_max_tokens: true,
    })
    .unwrap()
}

fn request() -> LlmRequest {
    LlmRequest {
        model: "tiny-model".into(),
        messages: vec![
            ChatMessage { role: "system".into(), content: "Answer from the passages.".into() },
            ChatMessage { role: "user".into(), content: "What is the total?".into() },
        ],
        schema_name: "single_amount".into(),
        schema: json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false}),
        temperature: 0.0,
        max_output_tokens: Some(512),
    }
}

#[test]
fn a_good_reply_is_returned_with_the_raw_body_verbatim() {
    let body = completion(r#"{"items":[]}"#, "stop");
    let server = MockServer::start(vec![Canned::Reply(200, body.clone())]);
    let response = transport(server.base_url(), Some("sk-test-key"), 0, 5_000).complete(&request()).unwrap();
    let seen = server.finish();

    assert_eq!(response.id, "chatcmpl-1");
    assert_eq!(response.model, "tiny-model");
    assert_eq!(response.content, r#"{"items":[]}"#);
    assert_eq!(response.finish_reason, "stop");
    assert_eq!(response.usage, Usage { input_tokens: 120, output_tokens: 15, cached_tokens: 64 });
    assert_eq!(
        response.raw,
        serde_json::from_str::<Value>(&body).unwrap(),
        "raw must be the body, server extras included"
    );

    assert_eq!(seen.len(), 1);
    let (head, sent) = (&seen[0].head, &seen[0].body);
    assert!(head.starts_with("POST /v1/chat/completions "), "{head}");
    assert!(head.to_ascii_lowercase().contains("authorization: bearer sk-test-key"), "{head}");
    assert_eq!(sent["model"], "tiny-model");
    assert_eq!(sent["temperature"], 0.0);
    assert_eq!(sent["max_completion_tokens"], 512);
    assert_eq!(sent["max_tokens"], 512);
    assert_eq!(sent["messages"][0], json!({"role": "system", "content": "Answer from the passages."}));
    assert_eq!(sent["messages"][1], json!({"role": "user", "content": "What is the total?"}));
    let format = &sent["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "single_amount");
    assert_eq!(format["json_schema"]["strict"], true);
    assert_eq!(format["json_schema"]["schema"], request().schema);
}

#[test]
fn a_reply_over_the_size_limit_is_refused_not_read_whole() {
    // The probe's 200 MB reply was read and written whole into two 419 MB trace files.
    let huge = completion(&"x".repeat(docintel_llm::openai::MAX_REPLY_BYTES + 1), "stop");
    for canned in [Canned::Reply(200, huge.clone()), Canned::Unsized(huge.clone())] {
        let server = MockServer::start(vec![canned]);
        let error = transport(server.base_url(), None, 2, 5_000).complete(&request()).unwrap_err();
        assert_eq!(server.finish().len(), 1, "not retried");
        match &error {
            LlmError::InvalidReply { reason } => assert!(reason.contains("larger than 4 MiB"), "{reason}"),
            other => panic!("{other:?}"),
        }
    }
    // Just under the limit is still an answer.
    let server = MockServer::start(vec![Canned::Unsized(completion(r#"{"items":[]}"#, "stop"))]);
    assert!(transport(server.base_url(), None, 0, 5_000).complete(&request()).is_ok());
    server.finish();
}

#[test]
fn a_429_is_retried_and_the_next_200_answers() {
    let server = MockServer::start(vec![
        Canned::Reply(429, error_body("slow down")),
        Canned::Reply(200, completion(r#"{"items":[]}"#, "stop")),
    ]);
    let response = transport(server.base_url(), None, 2, 5_000).complete(&request()).unwrap();
    assert_eq!(response.id, "chatcmpl-1");
    assert_eq!(server.finish().len(), 2);
}

#[test]
fn a_500_is_retried_and_the_next_200_answers() {
    let server = MockServer::start(vec![
        Canned::Reply(500, error_body("internal error")),
        Canned::Reply(200, completion(r#"{"items":[]}"#, "stop")),
    ]);
    let response = transport(server.base_url(), None, 2, 5_000).complete(&request()).unwrap();
    assert_eq!((response.id.as_str(), response.finish_reason.as_str()), ("chatcmpl-1", "stop"));
    assert_eq!(server.finish().len(), 2);
}

#[test]
fn repeated_429s_give_up_with_the_last_status_named() {
    let server = MockServer::start(vec![
        Canned::Reply(429, error_body("rate limited")),
        Canned::Reply(429, error_body("rate limited again")),
    ]);
    let error = transport(server.base_url(), None, 1, 5_000).complete(&request()).unwrap_err();
    assert_eq!(server.finish().len(), 2);
    match &error {
        LlmError::RetriesExhausted { attempts: 2, last } => {
            assert!(last.contains("429") && last.contains("rate limited again"), "{last}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn repeated_500s_give_up_after_max_retries() {
    let server = MockServer::start(vec![
        Canned::Reply(500, error_body("boom")),
        Canned::Reply(502, error_body("boom")),
        Canned::Reply(503, error_body("still down")),
        Canned::Reply(200, completion("{}", "stop")),
    ]);
    let error = transport(server.base_url(), None, 2, 5_000).complete(&request()).unwrap_err();
    assert_eq!(server.finish().len(), 3, "one attempt plus two retries, the 200 never reached");
    match &error {
        LlmError::RetriesExhausted { attempts, last } => {
            assert_eq!(*attempts, 3);
            assert!(last.contains("503") && last.contains("still down"), "{last}");
        }
        other => panic!("{other:?}"),
    }
    assert!(error.to_string().contains("after 3 attempts"), "{error}");
}

#[test]
fn a_400_fails_at_once_and_the_key_never_leaks() {
    let key = "sk-very-secret-42";
    let server = MockServer::start(vec![
        Canned::Reply(400, error_body(&format!("schema rejected for key {key}"))),
        Canned::Reply(200, completion("{}", "stop")),
    ]);
    let transport = transport(server.base_url(), Some(key), 3, 5_000);
    let error = transport.complete(&request()).unwrap_err();
    assert_eq!(server.finish().len(), 1, "a 400 is not retried");
    assert!(matches!(error, LlmError::Status { status: 400, .. }), "{error:?}");
    for text in [error.to_string(), format!("{error:?}"), format!("{transport:?}")] {
        assert!(!text.contains(key), "{text}");
    }
    assert!(error.to_string().contains("schema rejected"), "{error}");
}

#[test]
fn a_reply_cut_at_the_token_limit_is_an_error() {
    let server = MockServer::start(vec![Canned::Reply(200, completion(r#"{"items":[{"val"#, "length"))]);
    let error = transport(server.base_url(), None, 2, 5_000).complete(&request()).unwrap_err();
    assert_eq!(server.finish().len(), 1, "a cut reply is not retried");
    assert!(matches!(&error, LlmError::Truncated { id, .. } if id == "chatcmpl-1"), "{error:?}");
}

#[test]
fn invalid_json_content_is_returned_verbatim_for_the_caller_to_judge() {
    let server = MockServer::start(vec![Canned::Reply(200, completion("Sure! The total is $4.11", "stop"))]);
    let response = transport(server.base_url(), None, 0, 5_000).complete(&request()).unwrap();
    server.finish();
    assert_eq!(response.content, "Sure! The total is $4.11");
    assert!(serde_json::from_str::<Value>(&response.content).is_err());
    assert_eq!(response.raw["choices"][0]["message"]["content"], "Sure! The total is $4.11");
}

#[test]
fn a_body_that_is_not_json_is_an_invalid_reply() {
    let server = MockServer::start(vec![Canned::Reply(200, "<html>gateway</html>".into())]);
    let error = transport(server.base_url(), None, 2, 5_000).complete(&request()).unwrap_err();
    assert_eq!(server.finish().len(), 1);
    assert!(matches!(error, LlmError::InvalidReply { .. }), "{error:?}");
}

#[test]
fn a_server_that_accepts_and_never_answers_is_asked_once() {
    // The probe's hung server: 2 calls x 4 attempts, each waiting the whole timeout.
    let server = MockServer::start(vec![Canned::Stall, Canned::Reply(200, completion(r#"{"items":[]}"#, "stop"))]);
    let started = Instant::now();
    let error = transport(server.base_url(), None, 3, 300).complete(&request()).unwrap_err();
    let elapsed = started.elapsed();
    assert_eq!(server.finish().len(), 1, "a stalled attempt is not retried");
    match &error {
        LlmError::RetriesExhausted { attempts: 1, last } => {
            assert!(last.contains("timeout") && last.contains("not retried"), "{last}")
        }
        other => panic!("{other:?}"),
    }
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
}

#[test]
fn a_key_in_the_base_url_is_kept_in_the_query_and_out_of_every_message() {
    use docintel_llm::openai::{chat_completions_url, redact_url};
    let url = chat_completions_url("http://127.0.0.1:9/v1/?key=SECRET123").unwrap();
    assert_eq!(url.as_str(), "http://127.0.0.1:9/v1/chat/completions?key=SECRET123");
    assert_eq!(
        redact_url("https://me:SECRET123@host/v1?key=SECRET123&x=1"),
        "https://[redacted]:[redacted]@host/v1?key=[redacted]&x=[redacted]"
    );
    assert!(chat_completions_url("not a url").is_err());
    assert!(chat_completions_url("ftp://host/v1").unwrap_err().contains("http(s)"));
    // Connection refused: the message names the server, not the key.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let base = format!("http://user:SECRET123@127.0.0.1:{port}/v1?key=SECRET123");
    let t = transport(base, None, 0, 1_000);
    let error = t.complete(&request()).unwrap_err();
    assert!(!error.to_string().contains("SECRET123"), "{error}");
    assert!(!format!("{t:?}").contains("SECRET123"), "{t:?}");
}

#[test]
fn connection_refused_is_retried_then_reported() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let error = transport(format!("http://127.0.0.1:{port}/v1"), None, 1, 1_000).complete(&request()).unwrap_err();
    match &error {
        LlmError::RetriesExhausted { attempts: 2, last } => assert!(last.contains("connection"), "{last}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_unknown_role_is_refused_before_any_call() {
    let mut bad = request();
    bad.messages[0].role = "narrator".into();
    let error = transport("http://127.0.0.1:9/v1".into(), None, 0, 1_000).complete(&bad).unwrap_err();
    assert!(matches!(error, LlmError::InvalidRequest { .. }), "{error:?}");
}

#[test]
fn a_deadline_bounds_every_call_of_a_question() {
    // A question's calls share one deadline: an attempt's timeout is cut to the time left...
    let server = MockServer::start(vec![Canned::Stall]);
    let started = Instant::now();
    let deadline = Some(Instant::now() + Duration::from_millis(300));
    let t = transport(server.base_url(), None, 3, 30_000).with_deadline(deadline);
    assert!(t.complete(&request()).is_err());
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    server.finish();
    // ...and past it no call is made at all.
    let server = MockServer::start(vec![Canned::Reply(200, completion("{}", "stop"))]);
    let t = transport(server.base_url(), None, 3, 5_000).with_deadline(Some(Instant::now()));
    match t.complete(&request()).unwrap_err() {
        LlmError::RetriesExhausted { attempts: 0, last } => assert!(last.contains("time budget"), "{last}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(server.finish().len(), 0);
}

#[test]
fn a_prompt_refused_as_too_long_is_told_from_other_refusals() {
    let llama = json!({"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
                                 "type": "exceed_context_size_error", "n_prompt_tokens": 10327, "n_ctx": 8192}});
    let openai = error_body(
        "This model's maximum context length is 8,192 tokens. However, your messages resulted in 10,327 tokens.",
    );
    let server = MockServer::start(vec![
        Canned::Reply(400, llama.to_string()),
        Canned::Reply(400, openai),
        Canned::Reply(400, error_body("schema rejected")),
    ]);
    let transport = transport(server.base_url(), None, 0, 5_000);
    let windows: Vec<Option<Option<u64>>> = (0..3)
        .map(|_| {
            let error = transport.complete(&request()).unwrap_err();
            <OpenAiTransport as LanguageModel>::context_overflow(&error).map(|o| o.window)
        })
        .collect();
    assert_eq!(windows, [Some(Some(8192)), Some(Some(8192)), None]);
    assert_eq!(server.finish().len(), 3, "none retried");
}

#[test]
fn the_context_window_is_read_from_llama_cpp_vllm_or_ollama() {
    let ask = |script: Vec<Canned>| {
        let server = MockServer::start(script);
        let window = transport(server.base_url(), None, 0, 5_000).context_window("qwen2.5:1.5b");
        let paths: Vec<String> =
            server.finish().iter().map(|s| s.head.lines().next().unwrap_or_default().to_owned()).collect();
        (window, paths)
    };
    let missing = || Canned::Reply(404, error_body("File Not Found"));
    let props = json!({"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1}).to_string();
    let (window, paths) = ask(vec![Canned::Reply(200, props)]);
    assert_eq!(window.map(|(n, _)| n), Some(4096));
    assert!(paths[0].starts_with("GET /props "), "{paths:?}");

    let models = json!({"object": "list", "data": [{"id": "qwen2.5:1.5b", "max_model_len": 32768}]}).to_string();
    let (window, paths) = ask(vec![missing(), Canned::Reply(200, models)]);
    assert_eq!(window.map(|(n, _)| n), Some(32768), "{paths:?}");
    assert!(paths[1].starts_with("GET /v1/models "), "{paths:?}");

    let listed = json!({"object": "list", "data": [{"id": "qwen2.5:1.5b", "owned_by": "library"}]}).to_string();
    let ps = json!({"models": []}).to_string();
    let show = json!({"parameters": "temperature 0.7\nnum_ctx 8192", "model_info": {"qwen2.context_length": 32768}});
    let (window, paths) = ask(vec![
        missing(),
        Canned::Reply(200, listed.clone()),
        Canned::Reply(200, ps.clone()),
        Canned::Reply(200, show.to_string()),
    ]);
    assert_eq!(window.map(|(n, _)| n), Some(8192), "{paths:?}");
    assert!(paths[2].starts_with("GET /api/ps ") && paths[3].starts_with("POST /api/show "), "{paths:?}");
    // Ollama with no num_ctx: its default, which it truncates past silently.
    let bare = json!({"parameters": "temperature 0.7"}).to_string();
    let (window, _) =
        ask(vec![missing(), Canned::Reply(200, listed), Canned::Reply(200, ps), Canned::Reply(200, bare)]);
    assert_eq!(window.map(|(n, _)| n), Some(docintel_llm::openai::OLLAMA_DEFAULT_CONTEXT));
    // A server that says nothing.
    let (window, _) = ask(vec![missing(), missing(), missing()]);
    assert_eq!(window, None);
}

#[test]
fn images_go_after_the_user_text_as_png_data_urls() {
    let server = MockServer::start(vec![Canned::Reply(200, completion(r#"{"lines":["A bar chart."]}"#, "stop"))]);
    let transport = transport(server.base_url(), None, 0, 5_000);
    let png = vec![0x89, b'P', b'N', b'G', 1, 2, 3];
    let reply = transport.complete_with_images(&request(), std::slice::from_ref(&png)).unwrap().unwrap();
    assert_eq!(reply.content, r#"{"lines":["A bar chart."]}"#);
    let seen = server.finish();
    let messages = seen[0].body["messages"].as_array().unwrap();
    // The system prompt stays text; the user message is a text part, then the image.
    assert_eq!(messages[0]["content"], "Answer from the passages.");
    assert_eq!(
        messages[1]["content"],
        json!([
            {"type": "text", "text": "What is the total?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORwECAw=="}}
        ])
    );
    assert_eq!(seen[0].body["response_format"]["type"], "json_schema");
}

#[test]
fn a_model_that_reads_no_images_is_told_from_other_refusals() {
    let server = MockServer::start(vec![Canned::Reply(
        400,
        error_body("Invalid content type. image_url is only supported by certain models."),
    )]);
    let transport = transport(server.base_url(), None, 3, 5_000);
    let error = transport.complete_with_images(&request(), &[vec![1, 2, 3]]).unwrap().unwrap_err();
    assert_eq!(server.finish().len(), 1, "a refusal is not retried");
    assert!(<OpenAiTransport as LanguageModel>::rejects_images(&error), "{error}");
    for (status, message, rejects) in [
        (400, "this is not a multimodal model", true),
        (500, "image decoder crashed", false),
        (429, "too many image requests", false),
        (400, "schema rejected", false),
    ] {
        let error = LlmError::Status { status, message: message.into() };
        assert_eq!(error.rejects_images(), rejects, "{status} {message}");
    }
}

#[test]
fn replies_recorded_with_images_are_replayed_for_those_images_only() {
    let dir = docintel_test_support::temp_dir("llm-replay-images");
    let replay = docintel_llm::ReplayTransport::new(dir.path());
    let reply =
        docintel_llm::openai::response_from_raw(serde_json::from_str(&completion("{}", "stop")).unwrap()).unwrap();
    replay.record_with_images(&request(), &[vec![1, 2, 3]], &reply).unwrap();
    assert_eq!(replay.complete_with_images(&request(), &[vec![1, 2, 3]]).unwrap().unwrap(), reply);
    let other = replay.complete_with_images(&request(), &[vec![1, 2, 4]]).unwrap().unwrap_err();
    assert!(matches!(other, LlmError::NotRecorded { .. }), "{other}");
    // Without images it is another request.
    assert!(matches!(replay.complete(&request()), Err(LlmError::NotRecorded { .. })));
}
