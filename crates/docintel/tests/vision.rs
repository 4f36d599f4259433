//! The vision step end to end (issue 21, item 3): a hand-written report
//! (`docintel_test_support::figure_pdf`: a logo on every page, a revenue chart drawn as an
//! image on page 2) asked through an `Engine` whose model is a server on 127.0.0.1 serving
//! recorded replies. The figure page is described once, the logo never; a second run reads
//! the cache; the answer cites the description with `source: vision`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use docintel::schema::{AskOutput, LineSource, ParsedDocument};
use docintel::{AskOptions, Engine, GeneratorChoice, OpenAiConfig, VisionSettings};
use docintel_test_support::{ScratchFile, figure_pdf, scratch_file, temp_dir};
use serde_json::{Value, json};

/// The recorded vision reply: what a model said of page 2's image.
const DESCRIPTION: &str = r#"{"lines":["A bar chart of revenue by year, in million USD.","Revenue was 31 million USD in 2024, up from 12 million USD in 2021."]}"#;

/// The chat-completion bodies the server received.
type Seen = Arc<Mutex<Vec<Value>>>;

/// A server answering every chat completion: the vision schema with [`DESCRIPTION`],
/// any other with `answer` (made from the document's line ids). Stops when the test ends.
fn model_server(answer: String) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            let mut length = 0;
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).unwrap();
                if header.trim().is_empty() {
                    break;
                }
                if let Some(v) = header.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            if !request_line.starts_with("POST /v1/chat/completions") {
                let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                continue;
            }
            let body: Value = serde_json::from_slice(&body).unwrap();
            let vision = body["response_format"]["json_schema"]["name"] == "page_description";
            let content = if vision { DESCRIPTION.to_owned() } else { answer.clone() };
            log.lock().unwrap().push(body);
            let n = log.lock().unwrap().len();
            let reply = json!({
                "id": format!("chatcmpl-{n}"), "object": "chat.completion", "created": 0, "model": "gpt-4.1-mini",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050}
            })
            .to_string();
            let _ = stream.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                    reply.len()
                )
                .as_bytes(),
            );
        }
    });
    (base, seen)
}

fn vision_calls(seen: &Seen) -> Vec<Value> {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|b| b["response_format"]["json_schema"]["name"] == "page_description")
        .cloned()
        .collect()
}

fn report() -> (ScratchFile, ParsedDocument) {
    let pdf = scratch_file("report.pdf", &figure_pdf());
    let document = docintel::parse_pdf(&pdf).unwrap();
    (pdf, document)
}

fn options(base: &str, out: Option<&std::path::Path>) -> AskOptions {
    let mut options = AskOptions::new(5);
    options.generator = GeneratorChoice::Llm {
        config: OpenAiConfig {
            base_url: base.to_owned(),
            api_key: None,
            timeout: std::time::Duration::from_secs(20),
            max_retries: 0,
            backoff_base: std::time::Duration::from_millis(10),
            send_legacy_max_tokens: true,
        },
        model: "gpt-4.1-mini".to_owned(),
    };
    // The question is parsed and routed by the rules: the model reads the pictures and answers.
    options.llm_question = false;
    options.llm_router = false;
    options.out_dir = out.map(Into::into);
    options
}

/// The model's answer: the amount, quoted from the second line of the description.
fn answer_citing(line: u32) -> String {
    json!({
        "items": [{"value": {"value": 31.0, "currency": "USD", "unit": "million"}, "text": "31 million USD",
                   "spans": [{"line_start": line, "line_end": line, "page": 2, "quote": "31 million USD in 2024"}]}],
        "answer_found": true, "complete_answer_found": true, "confidence": 0.9, "warnings": [],
        "keywords_found": ["revenue"], "llm_discovered_keywords": [], "conflicting_evidence": false,
        "context_structured": true, "suggested_clarification": null
    })
    .to_string()
}

const QUESTION: &str = "What was the revenue in 2024?";

fn ask(engine: &Engine, pdf: &ScratchFile, options: &AskOptions) -> (AskOutput, ParsedDocument) {
    engine.ask_with_document(pdf, QUESTION, options).unwrap()
}

#[test]
fn a_figure_is_described_once_the_logo_never_and_the_answer_cites_the_description() {
    let (pdf, plain) = report();
    // The description goes after page 2's caption: its second line is the one cited.
    let caption = plain.lines.iter().filter(|l| l.page == 2).map(|l| l.line_id).max().unwrap();
    let (base, seen) = model_server(answer_citing(caption + 2));
    let out = temp_dir("vision-facade");
    let options = options(&base, Some(out.path()));
    let engine = Engine::new(&options).unwrap();

    let (output, document) = ask(&engine, &pdf, &options);
    // One call for the figure page, none for the logo on pages 1 to 3.
    let calls = vision_calls(&seen);
    assert_eq!(calls.len(), 1, "{:#?}", output.meta.vision);
    let content = &calls[0]["messages"][1]["content"];
    assert_eq!(content[1]["type"], "image_url");
    assert!(content[1]["image_url"]["url"].as_str().unwrap().starts_with("data:image/png;base64,iVBOR"));
    let vision = output.meta.vision.as_ref().expect("_meta.vision");
    assert_eq!((vision.pages.as_slice(), vision.calls, vision.cached, vision.max_calls), (&[2][..], 1, 0, 20));
    assert_eq!(output.meta.llm_usage["vision"].calls, 1);
    assert_eq!(output.meta.llm_usage["vision"].input_tokens, 1000);
    assert!(output.meta.tokens_in >= 2000, "vision and generation both counted: {}", output.meta.tokens_in);
    assert_eq!(document.line_source(caption + 1), LineSource::Vision);
    assert_eq!(
        document.line(caption + 2).unwrap().text,
        "Revenue was 31 million USD in 2024, up from 12 million USD in 2021."
    );

    // Answered from the description, and said so.
    assert!(output.answer.feedback.answer_found, "{:#?}", output.answer);
    assert!(output.citations_verified, "{:#?}", output.meta.citation_problems);
    let cited = &output.meta.cited_sources;
    assert_eq!(cited.len(), 1, "{cited:?}");
    assert_eq!((cited[0].line_start, cited[0].page, cited[0].source), (caption + 2, 2, LineSource::Vision));
    let json = serde_json::to_value(&output).unwrap();
    assert_eq!(json["_meta"]["cited_sources"][0]["source"], "vision");

    // The trace keeps the raw reply.
    let trace_dir = output.meta.trace_dir.as_deref().expect("a trace was written");
    let replies = std::fs::read_to_string(std::path::Path::new(trace_dir).join("llm_responses.jsonl")).unwrap();
    let vision_reply = replies
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["step"] == "vision")
        .expect("the vision reply is in llm_responses.jsonl");
    assert_eq!(vision_reply["detail"]["raw"]["choices"][0]["message"]["content"], DESCRIPTION);

    // Asked again: the description comes from the cache, no vision call.
    let (again, document_again) = ask(&engine, &pdf, &options);
    assert_eq!(vision_calls(&seen).len(), 1);
    let vision = again.meta.vision.as_ref().unwrap();
    assert_eq!((vision.calls, vision.cached), (0, 1));
    assert_eq!(again.meta.llm_usage["vision"].calls, 0);
    assert_eq!(document_again, document);
}

#[test]
fn vision_turned_off_or_offline_sends_nothing_and_changes_nothing() {
    let (pdf, plain) = report();
    let (base, seen) = model_server(answer_citing(1));
    let mut off = options(&base, None);
    off.vision = VisionSettings { enabled: false, ..VisionSettings::default() };
    let (output, document) = ask(&Engine::new(&off).unwrap(), &pdf, &off);
    assert!(vision_calls(&seen).is_empty());
    assert!(output.meta.vision.is_none());
    assert_eq!(document.lines, plain.lines);

    let offline = AskOptions::new(5);
    let (output, document) = ask(&Engine::new(&offline).unwrap(), &pdf, &offline);
    assert!(output.meta.vision.is_none() && !output.meta.llm_usage.contains_key("vision"));
    assert_eq!(document, plain);
}
