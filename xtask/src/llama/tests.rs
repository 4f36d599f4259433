//! Tests of the llama.cpp harness: its arguments and helpers, and the
//! health probe against a server the test starts on 127.0.0.1.

use super::*;

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn arguments_parse_and_reject() {
    let parsed = parse_args(&args(&["setup", "--model", "small"])).expect("valid");
    assert_eq!(parsed, Options { setup_only: true, model: "small", release: false });
    let parsed = parse_args(&args(&[])).expect("valid");
    assert_eq!(parsed, Options { setup_only: false, model: "small", release: false });
    assert!(parse_args(&args(&["--model", "huge"])).is_err());
    assert!(parse_args(&args(&["--model"])).is_err());
    assert!(parse_args(&args(&["serve"])).is_err());
}

#[test]
fn threads_drop_to_one_on_a_busy_machine() {
    assert_eq!(threads_for(2, 0.1), 2);
    assert_eq!(threads_for(2, 1.5), 1);
    assert_eq!(threads_for(8, 3.0), 8);
    assert_eq!(threads_for(1, 0.0), 1);
}

#[test]
fn model_table_is_consistent() {
    for spec in MODELS {
        assert_eq!(spec.sha256.len(), 64, "{}", spec.key);
        assert!(spec.sha256.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert!(!spec.parts.is_empty() && spec.file.ends_with(".gguf"));
        assert!(spec.parts.iter().all(|(req, _)| req.contains("==")), "{} parts must be pinned", spec.key);
    }
}

#[test]
fn status_line_and_passages() {
    assert_eq!(status_code(b"HTTP/1.1 200 OK\r\n"), Some(200));
    assert_eq!(status_code(b"HTTP/1.0 503 Service Unavailable"), Some(503));
    assert_eq!(status_code(b"HTTP/1.1 20"), None);
    assert_eq!(status_code(b"garbage garbage"), None);
    assert_eq!(parse_passage("p3 l10-24"), Some((3, 10, 24)));
    assert_eq!(parse_passage("p3 l10"), None);
    assert_eq!(parse_passage("page 3"), None);
}

#[test]
fn registry_type_check_accepts_typed_and_rejects_mistyped_values() {
    let feedback = json!({
        "answer_found": true, "complete_answer_found": true, "confidence": 0.5, "warnings": [],
        "keywords_found": [], "llm_discovered_keywords": [], "conflicting_evidence": false,
        "context_structured": true, "suggested_clarification": null
    });
    let with_value = |value: Value| {
        let mut answer = feedback.clone();
        answer["items"] = json!([{"value": value, "text": null,
            "spans": [{"line_start": 3, "line_end": 3, "page": 1, "quote": "120.00 EUR"}]}]);
        answer["answer_shape"] = json!("single");
        answer
    };
    let amount = with_value(json!({"value": 120.0, "currency": "EUR", "unit": null}));
    assert!(fits_registry_type(ValueKind::Amount, &amount).is_ok());
    assert!(fits_registry_type(ValueKind::Date, &amount).is_err());
    assert!(fits_registry_type(ValueKind::Amount, &with_value(json!("120 EUR"))).is_err());
    assert!(fits_registry_type(ValueKind::Text, &with_value(json!("120 EUR"))).is_ok());
    assert!(fits_registry_type(ValueKind::Text, &feedback).is_err(), "items are required");
}

#[test]
fn hashing_matches_a_known_digest() {
    let (size, sha) = hash_reader(&mut &b"abc"[..]).expect("in memory");
    assert_eq!(size, 3);
    assert_eq!(sha, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

#[test]
fn health_probe_reads_a_local_server() {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("accept");
        let mut request = [0u8; 512];
        let _ = stream.read(&mut request);
        stream.write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n").expect("write");
    });
    assert_eq!(http_status(port, "/health"), Some(503));
    server.join().expect("server thread");
    assert_eq!(http_status(free_port().expect("port"), "/health"), None);
}
