//! The `main.rs` of the scratch crate `cargo xtask link-check` writes outside
//! the workspace (not a module of xtask: `mod.rs` includes it as text). It
//! depends on every library crate by path, as a project of someone else's
//! would, calls each one's entry point on a bundled invoice and asserts what
//! it returns: a brick that builds only inside the workspace fails here.
//!
//! Argument: the workspace root (for `fixtures/`).

#![deny(warnings)]

use std::path::{Path, PathBuf};

use docintel_schema::{
    ChatMessage, Generator, LanguageModel, LlmRequest, LlmResponse, QuestionParser, Retriever, Usage,
};

const QUESTION: &str = "What is the total amount?";
const TOTAL: &str = "4.11 USD";

fn main() {
    let root = PathBuf::from(std::env::args().nth(1).expect("usage: docintel-link-check WORKSPACE_ROOT"));
    let invoice = root.join("fixtures/invoices/AmazonWebServices.pdf");
    let scratch = std::env::temp_dir().join(format!("docintel-link-check-run-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch folder");
    let outcome = std::panic::catch_unwind(|| check(&invoice, &scratch));
    let _ = std::fs::remove_dir_all(&scratch);
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

fn check(invoice: &Path, scratch: &Path) {
    // docintel-parse (and through it the pdf-extract fork): the line table.
    let document = docintel_parse::parse_file(invoice).expect("docintel-parse reads the invoice");
    // docintel-schema: the line table's invariants.
    document.check_invariants().expect("global 1-based line ids, pages ascending");
    let total_line = document
        .lines
        .iter()
        .find(|line| line.text.contains("TOTAL AMOUNT DUE"))
        .expect("the invoice's total line is in the line table")
        .line_id;
    // docintel-parse's default feature `parquet`: the document folder's tables.
    let bytes = std::fs::read(invoice).expect("the invoice's bytes");
    let folder = docintel_parse::document_folder(&scratch.join("tables"), invoice, &bytes);
    let chunks = docintel_parse::chunk_document(&document, &docintel_parse::ChunkConfig { max_tokens: 256, overlap_tokens: 32 });
    docintel_parse::write_tables(&document, &chunks, &docintel_parse::content_hash(&bytes), &folder)
        .expect("docintel-parse writes the Parquet tables");
    assert!(docintel_parse::is_up_to_date(&folder), "{} is complete", folder.display());
    println!(
        "docintel-parse: {} lines on {} page(s), tables in {}",
        document.lines.len(),
        document.pages.len(),
        folder.file_name().unwrap_or_default().to_string_lossy()
    );

    // docintel-question: the rule parser.
    let parsed = docintel_question::RuleParser::new()
        .parse(QUESTION, &document.profile)
        .expect("docintel-question parses the question");
    assert_eq!(parsed.answer_type, "amount", "{parsed:?}");
    println!("docintel-question: answer type {}", parsed.answer_type);

    // docintel-trace: the recorder every brick reports to.
    let mut recorder = docintel_trace::TraceRecorder::new();
    let visible = document.answerable();

    // docintel-retrieve: the keyword retriever.
    let retriever = docintel_retrieve::KeywordRetriever::new(docintel_retrieve::RetrieveConfig {
        top_k: 5,
        window: 2,
        reserve: 10,
        read_pages_whole: true,
    });
    let retrieval = retriever.retrieve(&parsed, &visible, &mut recorder).expect("docintel-retrieve retrieves");
    assert!(
        retrieval.passages.iter().any(|p| p.contains(total_line)),
        "a passage holds line {total_line}: {:?}",
        retrieval.passages
    );
    println!("docintel-retrieve: {} passage(s), line {total_line} among them", retrieval.passages.len());

    // docintel-generate: the offline extractive generator, then validation.
    let generation = docintel_generate::ExtractiveGenerator::new()
        .generate(&parsed, &visible, &retrieval.passages, &mut recorder)
        .expect("docintel-generate answers");
    let answer = &generation.answer;
    assert_eq!(answer.items.first().map(|item| item.value.to_string()).as_deref(), Some(TOTAL), "{answer:?}");
    let problems = docintel_generate::verify_citations(answer, &visible, &generation.passages_shown);
    assert!(problems.is_empty(), "{problems:?}");
    assert!(!recorder.events().is_empty(), "the bricks recorded their decisions");
    println!("docintel-generate: {TOTAL}, citations verified; {} trace event(s)", recorder.events().len());

    // docintel-llm: a recorded reply is replayed, an unrecorded request refused.
    let transport = docintel_llm::ReplayTransport::new(scratch.join("replies"));
    let request = LlmRequest {
        model: "link-check".to_owned(),
        messages: vec![ChatMessage { role: "user".to_owned(), content: QUESTION.to_owned() }],
        schema_name: "answer".to_owned(),
        schema: serde_json::json!({"type": "object"}),
        temperature: 0.0,
        max_output_tokens: Some(16),
    };
    let reply = LlmResponse {
        id: "r1".to_owned(),
        model: "link-check".to_owned(),
        content: "{}".to_owned(),
        finish_reason: "stop".to_owned(),
        usage: Usage::default(),
        raw: serde_json::json!({"id": "r1"}),
    };
    transport.record(&request, &reply).expect("docintel-llm records a reply");
    assert_eq!(transport.complete(&request).expect("the recorded reply"), reply);
    let other = LlmRequest { model: "another".to_owned(), ..request };
    assert!(transport.complete(&other).is_err(), "an unrecorded request is refused");
    println!("docintel-llm: replayed by request key {}", &docintel_llm::request_key(&other)[..12]);

    // docintel, the facade: the same question through Engine::ask, its trace
    // read back by docintel-trace.
    let mut options = docintel::AskOptions::new(5);
    options.out_dir = Some(scratch.join("out"));
    let engine = docintel::Engine::new(&options).expect("the facade builds an engine");
    let output = engine.ask(invoice, QUESTION, &options).expect("the facade answers");
    assert_eq!(output.answer.items.first().map(|item| item.value.to_string()).as_deref(), Some(TOTAL));
    assert!(output.citations_verified, "{output:?}");
    let trace_dir = only_question_dir(&scratch.join("out"));
    let trace = docintel_trace::load_question_trace(&trace_dir).expect("docintel-trace reads the facade's trace");
    assert_eq!(trace.parsed_question.answer_type, "amount");
    assert_eq!(trace.output.answer.items.first().map(|item| &item.spans), output.answer.items.first().map(|item| &item.spans));
    assert!(docintel_trace::render(&trace).contains(TOTAL), "the rendered trace names the answer");
    println!("docintel: Engine::ask answered {TOTAL}, trace read back from {}", trace_dir.display());

    // docintel-kb: the invoice ingested once, the question asked from the stored document.
    let kb = scratch.join("kb");
    let report = docintel_kb::add(&kb, &[invoice.to_owned()], 1, &mut |_, _, _| {}).expect("docintel-kb adds");
    assert_eq!(report.added.len(), 1, "{report:?}");
    options.out_dir = None;
    let answer = docintel_kb::ask(&kb, &engine, QUESTION, &options, 1).expect("docintel-kb answers");
    assert_eq!(answer.output.answer.items.first().map(|item| item.value.to_string()).as_deref(), Some(TOTAL));
    assert_eq!(answer.kb.citations.first().map(|c| c.document.as_str()), Some("AmazonWebServices.pdf"));
    println!("docintel-kb: kb ask answered {TOTAL} from the stored document {}", answer.kb.document_id);

    // docintel-serve: the same knowledge base over HTTP on loopback, with a new key.
    let key = docintel_serve::add_key(&kb).expect("docintel-serve makes a key");
    let tenant = docintel_serve::TenantKb::load(kb.clone()).expect("docintel-serve reads the keys");
    let state = docintel_serve::AppState::new(vec![tenant], options, docintel_serve::Limits::default())
        .expect("docintel-serve builds its state");
    let server = docintel_serve::start("127.0.0.1:0".parse().expect("an address"), state).expect("docintel-serve starts");
    let body = format!("{{\"question\": \"{QUESTION}\"}}");
    let request = format!(
        "POST /v1/ask HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer {key}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(server.addr()).expect("a connection");
    std::io::Write::write_all(&mut stream, request.as_bytes()).expect("the request is sent");
    let mut reply = String::new();
    std::io::Read::read_to_string(&mut stream, &mut reply).expect("a reply");
    assert!(reply.starts_with("HTTP/1.1 200") && reply.contains("\"AmazonWebServices.pdf\""), "{reply}");
    println!("docintel-serve: POST /v1/ask answered on {}", server.addr());
    println!("link-check: every crate linked from outside the workspace and answered");
}

/// The one question folder under `out/<document>/questions/`.
fn only_question_dir(out: &Path) -> PathBuf {
    let children = |dir: &Path| -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.expect("a folder entry").path())
            .filter(|path| path.is_dir())
            .collect();
        found.sort();
        found
    };
    let documents = children(out);
    assert_eq!(documents.len(), 1, "{documents:?}");
    let questions = children(&documents[0].join("questions"));
    assert_eq!(questions.len(), 1, "{questions:?}");
    questions[0].clone()
}
