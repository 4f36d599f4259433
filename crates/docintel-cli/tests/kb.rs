//! `docintel kb` as a user runs it: the commands, `--json` contracts and
//! exit codes.

use std::process::{Command, Output};

use docintel_test_support::{invoice, temp_dir};
use serde_json::Value;

fn docintel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_docintel"))
        .args(args)
        .env_remove("DOCINTEL_LLM_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("DOCINTEL_KB_KEY_FILE")
        .output()
        .expect("the binary runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn kb_add_ask_list_remove_from_the_command_line() {
    let dir = temp_dir("cli-kb");
    let kb = dir.path().join("kb");
    let kb = kb.to_str().unwrap();
    let broken = dir.path().join("broken.pdf");
    std::fs::write(&broken, b"%PDF-1.7\nnot a body\n%%EOF").unwrap();
    let (aws, flipkart) = (invoice("AmazonWebServices.pdf"), invoice("FlipkartInvoice.pdf"));
    let out = docintel(&["kb", "add", kb, aws.to_str().unwrap(), flipkart.to_str().unwrap(), broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "a file that failed is bad input: {out:?}");
    assert!(stdout(&out).contains("added 2"), "{}", stdout(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 file(s) could not be added"), "{out:?}");

    let out = docintel(&["kb", "list", kb]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let listed = stdout(&out);
    assert!(listed.contains("AmazonWebServices.pdf") && listed.contains("FlipkartInvoice.pdf"), "{listed}");
    assert!(listed.contains("failed: ") && listed.contains("broken.pdf"), "{listed}");

    let out = docintel(&[
        "kb",
        "ask",
        kb,
        "What is the total amount of the Amazon Web Services invoice?",
        "--json",
        "--no-trace",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let json: Value = serde_json::from_slice(&out.stdout).expect("exactly one JSON object");
    assert_eq!(json["answer"]["items"][0]["value"]["value"], 4.11, "{json}");
    assert_eq!(json["citations_verified"], true);
    assert_eq!(json["kb"]["document_name"], "AmazonWebServices.pdf");
    assert_eq!(json["kb"]["citations"][0]["document"], "AmazonWebServices.pdf");

    // A count of none is an answer, not a "not found".
    let out = docintel(&["kb", "ask", kb, "How many invoices are from 1999?", "--no-trace"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("answered from the structured index") && text.contains('0'), "{text}");
    assert!(!text.contains("No answer found"), "{text}");
    // A field the index lacks is refused, and not said to be answered from it.
    let out = docintel(&["kb", "ask", kb, "How many invoices have a color above 3?", "--no-trace"]);
    let text = stdout(&out);
    assert!(text.contains("No answer found") && text.contains("\"color\""), "{text}");
    assert!(!text.contains("answered from the structured index"), "{text}");

    let out = docintel(&["kb", "add", kb, aws.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(stdout(&out).contains("added 0, unchanged 1"), "{}", stdout(&out));

    let out = docintel(&["kb", "remove", kb, "FlipkartInvoice.pdf"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(!stdout(&docintel(&["kb", "list", kb])).contains("FlipkartInvoice.pdf"));
    assert_eq!(docintel(&["kb", "remove", kb, "FlipkartInvoice.pdf"]).status.code(), Some(3));

    let nowhere = dir.path().join("nowhere");
    let out = docintel(&["kb", "ask", nowhere.to_str().unwrap(), "What is the total?"]);
    assert_eq!(out.status.code(), Some(3), "not a knowledge base: {out:?}");
    assert_eq!(docintel(&["kb", "ask", kb, "  "]).status.code(), Some(2), "an empty question is usage");
}

#[test]
fn an_encrypted_kb_from_the_command_line_key_new_add_ask_and_a_wrong_key_exits_3() {
    let dir = temp_dir("cli-kb-key");
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let (kb, key, other) = (path("kb"), path("tenant.key"), path("other.key"));
    assert!(docintel(&["kb", "key", "new", &key]).status.success());
    assert_eq!(std::fs::metadata(&key).unwrap().len(), 32);
    assert_eq!(docintel(&["kb", "key", "new", &key]).status.code(), Some(3), "never overwritten");
    assert!(docintel(&["kb", "key", "new", &other]).status.success());
    let aws = invoice("AmazonWebServices.pdf");
    let out = docintel(&["kb", "add", &kb, aws.to_str().unwrap(), "--key-file", &key]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout(&docintel(&["kb", "list", &kb])).contains("encrypted (XChaCha20-Poly1305)"));
    let question = "What is the total amount?";
    let out = docintel(&["kb", "ask", &kb, question, "--no-trace", "--key-file", &key]);
    assert!(stdout(&out).contains("4.11 USD"), "{}", stdout(&out));
    let out = Command::new(env!("CARGO_BIN_EXE_docintel"))
        .args(["kb", "ask", &kb, question, "--no-trace"])
        .env("DOCINTEL_KB_KEY_FILE", &key)
        .output()
        .unwrap();
    assert!(stdout(&out).contains("4.11 USD"), "the key from the environment");
    let out = docintel(&["kb", "ask", &kb, question, "--no-trace", "--key-file", &other]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("wrong key"));
    let out = docintel(&["kb", "ask", &kb, question, "--no-trace"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("encrypted"));
}

/// `kb ask --follow-up DIR`: "What is its invoice date?" alone routes to another invoice;
/// after "What does Amazon Web Services charge?" its rewrite routes to the AWS one.
#[test]
fn kb_ask_follow_up_routes_with_the_earlier_question() {
    let dir = temp_dir("cli-kb-follow-up");
    let kb = dir.path().join("kb");
    let kb = kb.to_str().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let files = ["AmazonWebServices.pdf", "FlipkartInvoice.pdf", "NetpresseInvoice.pdf"].map(invoice);
    let mut add = vec!["kb", "add", kb];
    add.extend(files.iter().map(|f| f.to_str().unwrap()));
    assert_eq!(docintel(&add).status.code(), Some(0));
    let ask = |args: &[&str]| -> Value {
        let out = docintel(&[&["kb", "ask", kb][..], args, &["--json"]].concat());
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        serde_json::from_slice(&out.stdout).expect("exactly one JSON object")
    };
    let first = ask(&["What does Amazon Web Services charge?", "--out", out]);
    assert_eq!(first["kb"]["document_name"], "AmazonWebServices.pdf");
    let trace = first["_meta"]["trace_dir"].as_str().unwrap().to_owned();

    let question = "What is its invoice date?";
    let alone = ask(&[question, "--no-trace"]);
    assert_ne!(alone["kb"]["document_name"], "AmazonWebServices.pdf", "{alone:#}");
    let followed = ask(&[question, "--no-trace", "--follow-up", &trace]);
    assert_eq!(followed["kb"]["document_name"], "AmazonWebServices.pdf", "{followed:#}");
    assert_eq!(followed["answer"]["items"][0]["value"]["iso"], "2014-08-03");
    assert_eq!(followed["question"], question);
    assert_eq!(
        followed["_meta"]["follow_up"],
        serde_json::json!({
            "previous_turns": ["What does Amazon Web Services charge?"],
            "rewrite": "What is the amazon web services charge's invoice date?"
        })
    );

    let not_a_trace = docintel(&["kb", "ask", kb, question, "--follow-up", kb]);
    assert_eq!(not_a_trace.status.code(), Some(3), "{not_a_trace:?}");
    assert!(String::from_utf8_lossy(&not_a_trace.stderr).contains("answer.json"), "{not_a_trace:?}");
}

#[test]
fn serve_refuses_to_start_on_an_encrypted_kb_without_its_key() {
    let dir = temp_dir("cli-serve-key");
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let (kb, key, other) = (path("kb"), path("tenant.key"), path("other.key"));
    assert!(docintel(&["kb", "key", "new", &key]).status.success());
    assert!(docintel(&["kb", "key", "new", &other]).status.success());
    let aws = invoice("AmazonWebServices.pdf");
    assert!(docintel(&["kb", "add", &kb, aws.to_str().unwrap(), "--key-file", &key]).status.success());
    assert!(docintel(&["kb", "key", "add", &kb]).status.success());
    for extra in [&[][..], &["--key-file", other.as_str()][..]] {
        let mut args = vec!["serve", "--kb", kb.as_str(), "--addr", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        let mut child = Command::new(env!("CARGO_BIN_EXE_docintel"))
            .args(&args)
            .env_remove("DOCINTEL_KB_KEY_FILE")
            .env_remove("DOCINTEL_LLM_BASE_URL")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // It must stop at start; a server that runs is killed and fails the test.
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if started.elapsed() > std::time::Duration::from_secs(30) {
                child.kill().unwrap();
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.and_then(|s| s.code()), Some(3), "{args:?}: {stderr}");
        assert!(stderr.contains(&kb) && stderr.contains("key"), "{stderr}");
    }
}
