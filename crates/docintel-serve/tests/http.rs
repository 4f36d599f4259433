//! `docintel serve` over real HTTP on 127.0.0.1 (port 0, in process): two
//! tenants, each with its knowledge base of fixture invoices and its key.
//! Checks the ask JSON against `docintel_kb::ask` (what `kb ask --json`
//! prints), auth (401), tenant isolation (404), uploads and their limits,
//! page renders and line boxes, and that bad input is a JSON 4xx, never a 500.
//! The client is a few lines over `std::net::TcpStream` (HTTP/1.1,
//! `Connection: close`): no network beyond loopback, no client crate.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::OnceLock;

use docintel::{AskOptions, Engine};
use docintel_serve::{AppState, Limits, Server, TenantKb};
use serde_json::Value;

/// A reply: status, headers (lowercase names), body.
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The error code of a JSON error reply with this status.
    fn error_code(&self, status: u16) -> String {
        assert_eq!(self.status, status, "{}", String::from_utf8_lossy(&self.body));
        self.json()["error"]["code"].as_str().expect("an error code").to_owned()
    }
}

fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    key: Option<&str>,
    extra: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    let mut stream = TcpStream::connect(addr).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if let Some(key) = key {
        head.push_str(&format!("Authorization: Bearer {key}\r\n"));
    }
    let mut has_length = false;
    for (name, value) in extra {
        has_length |= name.eq_ignore_ascii_case("content-length");
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if !has_length {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    let _ = stream.write_all(body);
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a header block");
    let text = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = text.split("\r\n");
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers.iter().any(|(n, v)| n == "transfer-encoding" && v.contains("chunked")) {
        body = dechunk(&body);
    }
    Reply { status, headers, body }
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let end = raw.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&raw[..end]).unwrap().split(';').next().unwrap().trim(), 16)
                .unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&raw[end + 2..end + 2 + size]);
        raw = &raw[end + 4 + size..];
    }
}

fn get(addr: SocketAddr, path: &str, key: Option<&str>) -> Reply {
    request(addr, "GET", path, key, &[], b"")
}

fn post_json(addr: SocketAddr, path: &str, key: Option<&str>, body: &Value) -> Reply {
    request(addr, "POST", path, key, &[("Content-Type", "application/json")], body.to_string().as_bytes())
}

/// The shared fixture: two tenants and a running server.
struct Fixture {
    server: Server,
    kb_a: docintel_test_support::TempDir,
    kb_c: docintel_test_support::TempDir,
    key_a: String,
    key_b: String,
    key_c: String,
    aws_id: String,
    flipkart_id: String,
}

/// Three tenants: A holds the AWS and Netpresse invoices, B the Flipkart one,
/// C starts empty (uploads).
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let kb_a = docintel_test_support::temp_dir("serve-a");
        let kb_b = docintel_test_support::temp_dir("serve-b");
        let add = |kb: &Path, files: &[&str]| {
            let paths: Vec<_> = files.iter().map(|f| docintel_test_support::invoice(f)).collect();
            let report = docintel_kb::add(kb, &paths, 1, &mut |_, _, _| {}).unwrap();
            assert!(report.failed.is_empty());
            report.added
        };
        let added_a = add(kb_a.path(), &["AmazonWebServices.pdf", "NetpresseInvoice.pdf"]);
        let added_b = add(kb_b.path(), &["FlipkartInvoice.pdf"]);
        let key_a = docintel_serve::add_key(kb_a.path()).unwrap();
        let key_b = docintel_serve::add_key(kb_b.path()).unwrap();
        let kb_c = docintel_test_support::temp_dir("serve-c");
        let key_c = docintel_serve::add_key(kb_c.path()).unwrap();
        let tenants = vec![
            TenantKb::load(kb_a.path().to_owned()).unwrap(),
            TenantKb::load(kb_b.path().to_owned()).unwrap(),
            TenantKb::load(kb_c.path().to_owned()).unwrap(),
        ];
        let limits = Limits { max_upload_bytes: 1 << 20, ..Limits::default() };
        let state = AppState::new(tenants, ask_options(), limits).unwrap();
        let server = docintel_serve::start("127.0.0.1:0".parse().unwrap(), state).unwrap();
        let aws_id = added_a.iter().find(|id| id.starts_with("amazon")).unwrap().clone();
        let flipkart_id = added_b[0].clone();
        // kb_b is kept alive by leaking its guard with the fixture's lifetime (the process ends first).
        std::mem::forget(kb_b);
        Fixture { server, kb_a, kb_c, key_a, key_b, key_c, aws_id, flipkart_id }
    })
}

/// What `docintel kb ask --json --no-trace` asks with (offline: no model in tests).
fn ask_options() -> AskOptions {
    let mut options = AskOptions::new(5);
    options.out_dir = None;
    options
}

/// The answer without what changes from run to run (timings).
fn without_timings(mut value: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.retain(|k, _| {
                    !(k.ends_with("_ms") || k.ends_with("_secs") || k == "seconds" || k.contains("elapsed"))
                });
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

#[test]
fn health_openapi_and_the_page_need_no_key() {
    let f = fixture();
    let addr = f.server.addr();
    assert_eq!(get(addr, "/healthz", None).json()["status"], "ok");
    let openapi = get(addr, "/v1/openapi.json", None).json();
    assert_eq!(openapi["openapi"], "3.0.3");
    for path in ["/healthz", "/v1/documents", "/v1/ask", "/v1/documents/{id}/pages/{page}", "/v1/traces/{id}"] {
        assert!(openapi["paths"].get(path).is_some(), "{path} documented");
    }
    let page = get(addr, "/", None);
    assert_eq!(page.status, 200);
    assert!(page.header("content-type").unwrap().starts_with("text/html"));
    assert!(page.header("content-security-policy").unwrap().contains("default-src 'self'"));
    assert_eq!(get(addr, "/app.js", None).status, 200);
}

#[test]
fn the_ask_json_is_what_kb_ask_json_prints() {
    let f = fixture();
    let question = "What is the total amount?";
    let reply = post_json(f.server.addr(), "/v1/ask", Some(&f.key_a), &serde_json::json!({ "question": question }));
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.body));
    let served = reply.json();
    let engine = Engine::new(&ask_options()).unwrap();
    let direct =
        docintel_kb::ask(f.kb_a.path(), &engine, question, &ask_options(), docintel_kb::DEFAULT_CANDIDATES).unwrap();
    // As `kb ask --json` prints it (serde_json's text, read back).
    let direct: Value = serde_json::from_str(&serde_json::to_string(&direct).unwrap()).unwrap();
    assert_eq!(without_timings(served.clone()), without_timings(direct));
    assert_eq!(served["kb"]["document_id"], f.aws_id.as_str());
    assert_eq!(served["answer"]["items"][0]["value"]["value"], 4.11);

    // The same question on one named document.
    let one = post_json(
        f.server.addr(),
        "/v1/ask",
        Some(&f.key_a),
        &serde_json::json!({ "question": question, "document": f.aws_id }),
    );
    assert_eq!(one.status, 200);
    let one = one.json();
    assert_eq!(one["answer"]["items"], served["answer"]["items"]);
    assert_eq!(one["kb"]["candidates"].as_array().unwrap().len(), 1);
}

/// `history`: "What is its invoice date?" after "What does Amazon Web Services charge?" is
/// searched as its rewrite, which picks the AWS invoice; the answer is what `kb ask
/// --follow-up` gives, the rewrite in `_meta.follow_up`. A bad history is a 400.
#[test]
fn a_follow_up_is_asked_after_its_history() {
    let f = fixture();
    let addr = f.server.addr();
    let question = "What is its invoice date?";
    let history = ["What does Amazon Web Services charge?"];
    let reply =
        post_json(addr, "/v1/ask", Some(&f.key_a), &serde_json::json!({ "question": question, "history": history }));
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.body));
    let served = reply.json();
    assert_eq!(served["question"], question);
    assert_eq!(served["kb"]["document_id"], f.aws_id.as_str(), "{served:#}");
    assert_eq!(served["answer"]["items"][0]["value"]["iso"], "2014-08-03");
    let rewrite = "What is the amazon web services charge's invoice date?";
    assert_eq!(served["_meta"]["follow_up"], serde_json::json!({ "previous_turns": history, "rewrite": rewrite }));
    assert_eq!(served["_meta"]["retrieval_rewrites"], serde_json::json!([rewrite]));
    // As `kb ask` answers it after the same turns.
    let options = AskOptions { previous_turns: history.map(str::to_owned).to_vec(), ..ask_options() };
    let engine = Engine::new(&options).unwrap();
    let direct = docintel_kb::ask(f.kb_a.path(), &engine, question, &options, docintel_kb::DEFAULT_CANDIDATES).unwrap();
    let direct: Value = serde_json::from_str(&serde_json::to_string(&direct).unwrap()).unwrap();
    assert_eq!(without_timings(served), without_timings(direct));
    // Without history: no follow-up, the user's words only.
    let alone = post_json(addr, "/v1/ask", Some(&f.key_a), &serde_json::json!({ "question": question })).json();
    assert!(alone["_meta"].get("follow_up").is_none(), "{:#}", alone["_meta"]);
    assert_eq!(alone["_meta"]["retrieval_rewrites"], serde_json::json!([]));

    let ask = |history: Value| {
        post_json(addr, "/v1/ask", Some(&f.key_a), &serde_json::json!({ "question": question, "history": history }))
    };
    let turns = |n: usize| Value::from(vec!["What is the total amount?"; n]);
    assert_eq!(ask(turns(20)).status, 200, "20 turns are accepted");
    assert_eq!(ask(turns(21)).error_code(400), "bad_history");
    assert_eq!(ask(serde_json::json!(["What is the total?", "  "])).error_code(400), "bad_history");
    assert!(ask(serde_json::json!(["?!"])).json()["error"]["message"].as_str().unwrap().starts_with("history[0]: "));
    assert_eq!(ask(serde_json::json!(["x".repeat(4001)])).error_code(400), "bad_history");
    assert_eq!(ask(serde_json::json!("What is the total?")).error_code(400), "bad_json");
    assert_eq!(ask(serde_json::json!([1, 2])).error_code(400), "bad_json");
}

#[test]
fn a_missing_or_wrong_key_is_401() {
    let f = fixture();
    let addr = f.server.addr();
    assert_eq!(get(addr, "/v1/documents", None).error_code(401), "unauthorized");
    assert_eq!(get(addr, "/v1/documents", Some("dik_wrong")).error_code(401), "unauthorized");
    let reply = request(addr, "GET", "/v1/documents", None, &[("Authorization", &format!("Basic {}", f.key_a))], b"");
    assert_eq!(reply.error_code(401), "unauthorized");
    let ask = post_json(addr, "/v1/ask", None, &serde_json::json!({ "question": "What is the total?" }));
    assert_eq!(ask.error_code(401), "unauthorized");
}

#[test]
fn each_tenant_sees_only_its_documents() {
    let f = fixture();
    let addr = f.server.addr();
    let ids = |key: &str| -> Vec<String> {
        get(addr, "/v1/documents", Some(key)).json()["documents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let (a, b) = (ids(&f.key_a), ids(&f.key_b));
    assert!(a.contains(&f.aws_id) && !a.contains(&f.flipkart_id), "{a:?}");
    assert_eq!(b, std::slice::from_ref(&f.flipkart_id));
    // Another tenant's document is 404, for every endpoint that names one.
    let page = format!("/v1/documents/{}/pages/1", f.aws_id);
    assert_eq!(get(addr, &page, Some(&f.key_b)).error_code(404), "not_found");
    assert_eq!(get(addr, &format!("{page}/lines"), Some(&f.key_b)).error_code(404), "not_found");
    let ask = serde_json::json!({ "question": "What is the total amount?", "document": f.aws_id });
    assert_eq!(post_json(addr, "/v1/ask", Some(&f.key_b), &ask).error_code(404), "not_found");
    // B's own question is answered from B's invoice.
    let own =
        post_json(addr, "/v1/ask", Some(&f.key_b), &serde_json::json!({ "question": "What is the total amount?" }));
    assert_eq!(own.status, 200);
    assert_eq!(own.json()["kb"]["document_id"], f.flipkart_id.as_str());
}

#[test]
fn pages_render_as_png_with_their_line_boxes() {
    let f = fixture();
    let addr = f.server.addr();
    let png = get(addr, &format!("/v1/documents/{}/pages/1?dpi=72", f.aws_id), Some(&f.key_a));
    assert_eq!(png.status, 200, "{}", String::from_utf8_lossy(&png.body));
    assert_eq!(png.header("content-type"), Some("image/png"));
    assert!(png.body.starts_with(b"\x89PNG\r\n\x1a\n"));
    let width = u32::from_be_bytes(png.body[16..20].try_into().unwrap());
    let lines = get(addr, &format!("/v1/documents/{}/pages/1/lines", f.aws_id), Some(&f.key_a)).json();
    // At 72 dpi a pixel is a point: the PNG is as wide as the page.
    assert!((f64::from(width) - lines["width"].as_f64().unwrap()).abs() <= 1.0, "{width} px vs {}", lines["width"]);
    let total =
        lines["lines"].as_array().unwrap().iter().find(|l| l["text"].as_str().unwrap().contains("TOTAL AMOUNT DUE"));
    let bbox = &total.expect("the total's line")["bbox"];
    assert!(bbox["x1"].as_f64().unwrap() > bbox["x0"].as_f64().unwrap());
}

#[test]
fn bad_input_is_a_json_4xx_never_a_500() {
    let f = fixture();
    let (addr, key) = (f.server.addr(), Some(f.key_a.as_str()));
    let page = |path: &str| get(addr, path, key);
    assert_eq!(page("/v1/documents/..%2F..%2Fetc/pages/1").error_code(404), "not_found");
    assert_eq!(page("/v1/documents/no-such-doc/pages/1").error_code(404), "not_found");
    assert_eq!(page(&format!("/v1/documents/{}/pages/0", f.aws_id)).error_code(404), "not_found");
    assert_eq!(page(&format!("/v1/documents/{}/pages/999", f.aws_id)).error_code(404), "not_found");
    assert_eq!(page(&format!("/v1/documents/{}/pages/x", f.aws_id)).error_code(404), "not_found");
    assert_eq!(page(&format!("/v1/documents/{}/pages/1?dpi=abc", f.aws_id)).error_code(400), "bad_request");
    assert_eq!(page("/v1/nothing").error_code(404), "not_found");
    assert_eq!(request(addr, "DELETE", "/v1/ask", key, &[], b"").error_code(405), "method_not_allowed");
    let ask = |body: &[u8]| request(addr, "POST", "/v1/ask", key, &[("Content-Type", "application/json")], body);
    assert_eq!(ask(b"{not json").error_code(400), "bad_json");
    assert_eq!(ask(br#"{"question": 3}"#).error_code(400), "bad_json");
    assert_eq!(ask(br#"{"question": "ok?", "extra": 1}"#).error_code(400), "bad_json");
    assert_eq!(ask(br#"{"question": "   "}"#).error_code(400), "bad_question");
    assert_eq!(ask(br#"{"question": "total?", "document": "../x"}"#).error_code(404), "not_found");
    let long = serde_json::json!({ "question": "a".repeat(5000) }).to_string();
    assert_eq!(ask(long.as_bytes()).error_code(400), "bad_question");
}

#[test]
fn uploads_are_ingested_once_and_bounded() {
    let f = fixture();
    let (addr, key) = (f.server.addr(), Some(f.key_c.as_str()));
    let upload = |name: &str, body: &[u8]| {
        request(addr, "POST", &format!("/v1/documents?name={name}"), key, &[("Content-Type", "application/pdf")], body)
    };
    assert_eq!(upload("x.pdf", b"GIF89a not a pdf").error_code(415), "not_a_pdf");
    // Over the limit (1 MiB here): refused from its declared length, before it is read.
    let big = request(addr, "POST", "/v1/documents?name=big.pdf", key, &[("Content-Length", "2000000")], b"");
    assert_eq!(big.error_code(413), "too_large");
    assert_eq!(upload("broken.pdf", b"%PDF-1.4\nnothing else").error_code(422), "unreadable_pdf");

    // A tenant with nothing: an empty list, and a question is a 409, not a 500.
    let empty = get(addr, "/v1/documents", key).json();
    if empty["documents"].as_array().unwrap().is_empty() {
        let ask = post_json(addr, "/v1/ask", key, &serde_json::json!({ "question": "What is the total?" }));
        assert_eq!(ask.error_code(409), "empty_kb");
    }
    let bytes = std::fs::read(docintel_test_support::invoice("saeco.pdf")).unwrap();
    let first = upload("..%2F..%2Fsaeco.pdf", &bytes);
    assert_eq!(first.status, 201, "{}", String::from_utf8_lossy(&first.body));
    let document = first.json()["document"].clone();
    assert_eq!(document["name"].as_str().unwrap().rsplit('-').next(), Some("saeco.pdf"));
    let again = upload("saeco.pdf", &bytes);
    assert_eq!(again.status, 200);
    assert_eq!(again.json()["status"], "unchanged");
    // Stored inside the knowledge base, nowhere else.
    let stored: Vec<_> = std::fs::read_dir(f.kb_c.path().join(docintel_serve::UPLOADS))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(stored.iter().all(|n| n.to_string_lossy().ends_with("saeco.pdf")), "{stored:?}");
    let id = document["id"].as_str().unwrap();
    assert_eq!(get(addr, &format!("/v1/documents/{id}/pages/1?dpi=50"), key).status, 200);
    // The other tenant does not see it.
    let b_docs = get(addr, "/v1/documents", Some(&f.key_b)).json();
    assert!(!b_docs.to_string().contains(id));
}

#[test]
fn with_traces_an_answer_s_audit_trail_is_served() {
    // The shared server runs without `--traces`: no trace, no header.
    let f = fixture();
    let plain = post_json(
        f.server.addr(),
        "/v1/ask",
        Some(&f.key_a),
        &serde_json::json!({ "question": "What is the total amount?" }),
    );
    assert_eq!(plain.status, 200);
    assert!(plain.header(docintel_serve::TRACE_HEADER).is_none());
    assert!(plain.json()["_meta"]["trace_dir"].is_null());

    let kb = docintel_test_support::temp_dir("serve-traces");
    let report =
        docintel_kb::add(kb.path(), &[docintel_test_support::invoice("AmazonWebServices.pdf")], 1, &mut |_, _, _| {})
            .unwrap();
    assert!(report.failed.is_empty());
    let key = docintel_serve::add_key(kb.path()).unwrap();
    let mut state =
        AppState::new(vec![TenantKb::load(kb.path().to_owned()).unwrap()], ask_options(), Limits::default()).unwrap();
    state.traces = true;
    let server = docintel_serve::start("127.0.0.1:0".parse().unwrap(), state).unwrap();
    let addr = server.addr();
    let question = "What is the total amount?";
    let reply = post_json(addr, "/v1/ask", Some(&key), &serde_json::json!({ "question": question }));
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.body));
    let id = reply.header(docintel_serve::TRACE_HEADER).expect("the trace id header").to_owned();
    let answer = reply.json();
    // No server path: the folder relative to the knowledge base, where the trace is.
    let relative = answer["_meta"]["trace_dir"].as_str().unwrap();
    assert!(relative.starts_with("traces/") && !relative.contains(".."), "{relative}");
    assert!(kb.path().join(relative).join("pipeline_trace.json").is_file());

    let trace = get(addr, &format!("/v1/traces/{id}"), Some(&key));
    assert_eq!(trace.status, 200, "{}", String::from_utf8_lossy(&trace.body));
    let trace = trace.json();
    assert_eq!(trace["id"], id.as_str());
    assert_eq!(trace["answer"]["answer"]["items"], answer["answer"]["items"]);
    assert_eq!(trace["answer"]["question"], question);
    assert_eq!(trace["pipeline_trace"]["format_version"], 2);
    assert!(trace["pipeline_trace"]["events"].as_array().is_some_and(|e| !e.is_empty()), "{}", trace["pipeline_trace"]);
    assert!(trace["llm_responses"].as_array().unwrap().is_empty(), "offline: no model call");

    // Unknown, malformed and unauthenticated requests.
    assert_eq!(get(addr, &format!("/v1/traces/{id}"), None).error_code(401), "unauthorized");
    // Another tenant's key (the shared fixture's) does not open this server.
    assert_eq!(get(addr, &format!("/v1/traces/{id}"), Some(&f.key_a)).error_code(401), "unauthorized");
    for bad in ["nothing", "..~x", "a~b", "x~..%2F..%2Fetc"] {
        assert_eq!(get(addr, &format!("/v1/traces/{bad}"), Some(&key)).error_code(404), "not_found", "{bad}");
    }
    // The shared server has no trace of that id in its tenant's knowledge base.
    assert_eq!(get(f.server.addr(), &format!("/v1/traces/{id}"), Some(&f.key_a)).error_code(404), "not_found");
}

#[test]
fn an_encrypted_kb_is_served_with_its_key_and_takes_no_upload() {
    let kb = docintel_test_support::temp_dir("serve-sealed");
    let tenant_key = docintel_kb::KbKey::from_bytes([7; docintel_kb::KEY_BYTES]);
    let aws = docintel_test_support::invoice("AmazonWebServices.pdf");
    let report = docintel_kb::add_keyed(kb.path(), &[aws], 1, Some(&tenant_key), &mut |_, _, _| {}).unwrap();
    assert!(report.failed.is_empty());
    // The key is found among those given; with none, or another, the server is not started.
    let other = docintel_kb::KbKey::from_bytes([8; docintel_kb::KEY_BYTES]);
    let found = docintel_kb::key_for(kb.path(), &[other.clone(), tenant_key.clone()]).unwrap();
    assert!(found.is_some());
    assert!(matches!(docintel_kb::key_for(kb.path(), &[]), Err(docintel_kb::KbError::KeyRequired { .. })));
    assert!(matches!(docintel_kb::key_for(kb.path(), &[other]), Err(docintel_kb::KbError::WrongKey { .. })));

    let api_key = docintel_serve::add_key(kb.path()).unwrap();
    let tenant = TenantKb::load(kb.path().to_owned()).unwrap().with_key(found);
    let server = docintel_serve::start(
        "127.0.0.1:0".parse().unwrap(),
        AppState::new(vec![tenant], ask_options(), Limits::default()).unwrap(),
    )
    .unwrap();
    let (addr, key) = (server.addr(), Some(api_key.as_str()));
    let reply = post_json(addr, "/v1/ask", key, &serde_json::json!({ "question": "What is the total amount?" }));
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.body));
    let answer = reply.json();
    assert_eq!(answer["answer"]["items"][0]["value"]["value"], 4.11, "{answer}");
    assert_eq!(answer["citations_verified"], true);
    let id = answer["kb"]["document_id"].as_str().unwrap().to_owned();
    // The stored lines are opened with the key too (the viewer's boxes).
    let lines = get(addr, &format!("/v1/documents/{id}/pages/1/lines"), key);
    assert_eq!(lines.status, 200, "{}", String::from_utf8_lossy(&lines.body));
    assert!(lines.json()["lines"].as_array().unwrap().iter().any(|l| l["text"].as_str().unwrap().contains("TOTAL")));
    // An upload would be kept unsealed under KB/uploads/: refused, nothing written.
    let bytes = std::fs::read(docintel_test_support::invoice("saeco.pdf")).unwrap();
    let upload =
        request(addr, "POST", "/v1/documents?name=saeco.pdf", key, &[("Content-Type", "application/pdf")], &bytes);
    assert_eq!(upload.error_code(409), "encrypted_kb");
    assert!(!kb.path().join("uploads").exists());
}
