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
