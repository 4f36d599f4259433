//! Encryption at rest on the project's own fixtures: no plaintext line on disk
//! after an encrypted `kb add` (every file of the folder searched), answers
//! with the tenant's key equal to the unencrypted knowledge base's, a wrong
//! key, another tenant's key or no key refused cleanly (exit 3) before
//! anything is read, and an unencrypted knowledge base unchanged.

use std::path::{Path, PathBuf};

use docintel::{AskOptions, EXIT_BAD_INPUT, Engine};
use docintel_kb::{KbError, KbKey};
use docintel_test_support::{fixture, invoice, temp_dir};

fn files() -> Vec<PathBuf> {
    vec![invoice("AmazonWebServices.pdf"), invoice("FlipkartInvoice.pdf"), fixture("nist/nist_csf_2.0_excerpt.pdf")]
}

fn add(kb: &Path, key: Option<&KbKey>) -> Result<docintel_kb::AddReport, KbError> {
    docintel_kb::add_keyed(kb, &files(), 2, key, &mut |_, _, _| {})
}

fn ask(kb: &Path, question: &str, key: Option<&KbKey>) -> Result<docintel_kb::KbAnswer, KbError> {
    let options = AskOptions::new(5);
    let engine = Engine::new(&options).expect("engine");
    docintel_kb::ask_keyed(kb, &engine, question, &options, docintel_kb::DEFAULT_CANDIDATES, key)
}

/// Every file under `dir`, recursively.
fn every_file(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() { files.extend(every_file(&path)) } else { files.push(path) }
    }
    files
}

/// The files under `dir` whose bytes hold `needle`.
fn holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    every_file(dir)
        .into_iter()
        .filter(|f| std::fs::read(f).unwrap().windows(needle.len()).any(|w| w == needle.as_bytes()))
        .collect()
}

const AWS_TOTAL: &str = "What is the total amount of the Amazon Web Services invoice?";

#[test]
fn an_encrypted_kb_holds_no_plaintext_line_and_answers_as_the_plain_one_with_its_key() {
    let dir = temp_dir("kb-sealed");
    let (plain, sealed) = (dir.path().join("plain"), dir.path().join("sealed"));
    let key = KbKey::from_bytes([42; 32]);
    add(&plain, None).unwrap();
    let report = add(&sealed, Some(&key)).unwrap();
    assert_eq!(report.added.len(), 3, "{report:?}");

    // Distinctive lines of each document, as the parser reads them.
    let mut phrases = Vec::new();
    for file in files() {
        let document = docintel::parse_file(&file).unwrap();
        let mut lines: Vec<&str> = document.lines.iter().map(|l| l.text.trim()).filter(|t| t.len() >= 24).collect();
        lines.sort_by_key(|t| std::cmp::Reverse(t.len()));
        phrases.extend(lines.into_iter().take(3).map(str::to_owned));
    }
    phrases.push("TOTAL AMOUNT DUE ON August 3".into());
    assert!(phrases.len() >= 7, "{phrases:?}");
    for phrase in &phrases {
        assert!(!holding(&plain, phrase).is_empty(), "the plain knowledge base holds {phrase:?} (the search works)");
        for needle in [phrase.clone(), phrase.to_lowercase()] {
            assert_eq!(holding(&sealed, &needle), Vec::<PathBuf>::new(), "plaintext {needle:?} on disk");
        }
    }
    let manifest = docintel_kb::list(&sealed).unwrap();
    assert_eq!(manifest.encryption.as_ref().unwrap().aead, docintel_kb::AEAD);
    assert!(manifest.documents.iter().all(|d| d.summary.is_none()), "no document text in the manifest");

    let answer = ask(&sealed, AWS_TOTAL, Some(&key)).expect("answers with the key");
    let expected = ask(&plain, AWS_TOTAL, None).unwrap();
    assert_eq!(answer.kb.document_name, "AmazonWebServices.pdf");
    assert_eq!(answer.output.answer.items[0].value.to_string(), "4.11 USD");
    assert_eq!(
        serde_json::to_value(&answer.output.answer).unwrap(),
        serde_json::to_value(&expected.output.answer).unwrap()
    );
    assert!(answer.output.citations_verified);
    // The question table: the question sealed on disk, opened with the key.
    assert!(holding(&sealed, "Amazon Web Services invoice").is_empty());
    let rows = docintel_kb::questions(&sealed, Some(&key)).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].question.as_deref(), Some(AWS_TOTAL));
    assert_eq!(rows[0].outcome, "answered");

    // Re-adding the same files with the key: nothing parsed again.
    let again = add(&sealed, Some(&key)).unwrap();
    assert_eq!((again.added.len(), again.skipped.len()), (0, 3), "{again:?}");
}

#[test]
fn a_wrong_key_another_tenants_key_or_no_key_is_refused_before_anything_is_read() {
    let dir = temp_dir("kb-keys");
    let (a, b, plain) = (dir.path().join("a"), dir.path().join("b"), dir.path().join("plain"));
    let (key_a, key_b) = (KbKey::from_bytes([1; 32]), KbKey::from_bytes([2; 32]));
    docintel_kb::add_keyed(&a, &[invoice("AmazonWebServices.pdf")], 1, Some(&key_a), &mut |_, _, _| {}).unwrap();
    docintel_kb::add_keyed(&b, &[invoice("AmazonWebServices.pdf")], 1, Some(&key_b), &mut |_, _, _| {}).unwrap();

    let wrong = ask(&a, AWS_TOTAL, Some(&key_b)).unwrap_err();
    assert!(matches!(wrong, KbError::WrongKey { .. }), "{wrong}");
    assert_eq!(wrong.exit_code(), EXIT_BAD_INPUT);
    assert!(wrong.to_string().contains("wrong key"), "{wrong}");
    let missing = ask(&a, AWS_TOTAL, None).unwrap_err();
    assert!(matches!(missing, KbError::KeyRequired { .. }), "{missing}");
    assert_eq!(missing.exit_code(), EXIT_BAD_INPUT);
    assert!(missing.to_string().contains("--key-file"), "{missing}");
    let before = std::fs::read(a.join(docintel_kb::MANIFEST)).unwrap();
    let refused = docintel_kb::add_keyed(&a, &[invoice("saeco.pdf")], 1, Some(&key_b), &mut |_, _, _| {});
    assert!(matches!(refused, Err(KbError::WrongKey { .. })));
    assert_eq!(std::fs::read(a.join(docintel_kb::MANIFEST)).unwrap(), before, "nothing written");
    assert!(docintel_kb::questions(&a, None).unwrap().is_empty(), "no question was answered");

    // Another tenant's sealed document moved into this knowledge base does not open.
    let id = &docintel_kb::list(&a).unwrap().documents[0].id;
    let sealed = |kb: &Path| kb.join("docs").join(id).join("document.sealed");
    std::fs::copy(sealed(&b), sealed(&a)).unwrap();
    let moved = ask(&a, AWS_TOTAL, Some(&key_a)).unwrap_err();
    assert!(matches!(moved, KbError::Corrupt { .. }), "{moved}");

    // An unencrypted knowledge base: as before; a key is not needed to ask,
    // and refused to add (it would not encrypt what is there).
    docintel_kb::add_keyed(&plain, &[invoice("AmazonWebServices.pdf")], 1, None, &mut |_, _, _| {}).unwrap();
    assert!(docintel_kb::list(&plain).unwrap().encryption.is_none());
    assert_eq!(ask(&plain, AWS_TOTAL, None).unwrap().output.answer.items[0].value.to_string(), "4.11 USD");
    assert!(ask(&plain, AWS_TOTAL, Some(&key_a)).is_ok());
    let not_encrypted = docintel_kb::add_keyed(&plain, &[invoice("saeco.pdf")], 1, Some(&key_a), &mut |_, _, _| {});
    assert!(matches!(&not_encrypted, Err(e @ KbError::NotEncrypted { .. }) if e.exit_code() == EXIT_BAD_INPUT));
}

#[test]
fn a_key_file_is_32_bytes_or_64_hex_digits() {
    let dir = temp_dir("kb-keyfile");
    let raw = dir.path().join("raw");
    std::fs::write(&raw, [9u8; 32]).unwrap();
    let hex = dir.path().join("hex");
    std::fs::write(&hex, format!("{}\n", "09".repeat(32))).unwrap();
    let short = dir.path().join("short");
    std::fs::write(&short, b"secret").unwrap();
    let kb = dir.path().join("kb");
    let key = KbKey::from_file(&raw).unwrap();
    docintel_kb::add_keyed(&kb, &[invoice("saeco.pdf")], 1, Some(&key), &mut |_, _, _| {}).unwrap();
    let same = KbKey::from_file(&hex).unwrap();
    assert!(ask(&kb, "What is the total?", Some(&same)).is_ok(), "the hex spelling is the same key");
    let error = KbKey::from_file(&short).unwrap_err();
    assert_eq!(error.exit_code(), EXIT_BAD_INPUT);
    assert!(error.to_string().contains("kb key new"), "{error}");
}
