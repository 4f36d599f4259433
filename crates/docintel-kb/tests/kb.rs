//! The knowledge base on the project's own fixtures: add, list, ask (the
//! right document, cited, the same answer as `pdf_qa` on it), re-add skips,
//! remove, failures recorded, formats re-indexed, readers beside a writer.

use std::path::{Path, PathBuf};

use docintel::{AskOptions, EXIT_BAD_INPUT, Engine};
use docintel_kb::{KbError, MANIFEST};
use docintel_test_support::{fixture, invoice, temp_dir};

fn no_progress() -> impl FnMut(usize, usize, &Path) {
    |_, _, _| {}
}

fn add(kb: &Path, inputs: &[PathBuf]) -> docintel_kb::AddReport {
    docintel_kb::add(kb, inputs, 2, &mut no_progress()).expect("kb add runs")
}

fn ask(kb: &Path, question: &str) -> Result<docintel_kb::KbAnswer, KbError> {
    let options = AskOptions::new(5);
    let engine = Engine::new(&options).expect("engine");
    docintel_kb::ask(kb, &engine, question, &options, docintel_kb::DEFAULT_CANDIDATES)
}

fn names(kb: &Path) -> Vec<String> {
    docintel_kb::list(kb).expect("lists").documents.into_iter().map(|d| d.name).collect()
}

const AWS_TOTAL: &str = "What is the total amount of the Amazon Web Services invoice?";

#[test]
fn add_list_ask_re_add_and_remove() {
    let dir = temp_dir("kb");
    let kb = dir.path().join("kb");
    let report = add(
        &kb,
        &[invoice("AmazonWebServices.pdf"), invoice("FlipkartInvoice.pdf"), fixture("nist/nist_csf_2.0_excerpt.pdf")],
    );
    assert_eq!(report.added.len(), 3, "{report:?}");
    assert!(report.failed.is_empty(), "{report:?}");
    assert_eq!(names(&kb), ["AmazonWebServices.pdf", "FlipkartInvoice.pdf", "nist_csf_2.0_excerpt.pdf"]);
    let manifest = docintel_kb::list(&kb).unwrap();
    let ids: Vec<String> = manifest.documents.iter().map(|d| d.id.clone()).collect();
    assert_eq!(docintel_kb::indexed_ids(&kb).unwrap(), ids, "the index holds what the manifest lists");

    let answer = ask(&kb, AWS_TOTAL).expect("answers");
    assert_eq!(answer.kb.document_name, "AmazonWebServices.pdf", "{:?}", answer.kb);
    assert!(answer.output.answer.feedback.answer_found);
    assert!(answer.output.citations_verified);
    assert_eq!(answer.output.answer.items[0].value.to_string(), "4.11 USD");
    assert!(!answer.kb.citations.is_empty());
    assert!(answer.kb.citations.iter().all(|c| c.document == "AmazonWebServices.pdf"), "{:?}", answer.kb.citations);
    assert!(answer.output.document.ends_with("AmazonWebServices.pdf"), "{}", answer.output.document);
    let json = serde_json::to_value(&answer).unwrap();
    assert!(json["answer"]["items"].is_array() && json["_meta"].is_object(), "the ask contract, flattened");
    assert_eq!(json["kb"]["citations"][0]["document"], "AmazonWebServices.pdf");

    // The same bytes again: nothing parsed.
    let again = add(&kb, &[invoice("AmazonWebServices.pdf"), invoice("FlipkartInvoice.pdf")]);
    assert!(again.added.is_empty(), "{again:?}");
    assert_eq!(again.skipped.len(), 2, "{again:?}");

    let removed = docintel_kb::remove(&kb, "AmazonWebServices.pdf").expect("removes");
    assert_eq!(removed.name, "AmazonWebServices.pdf");
    assert_eq!(names(&kb), ["FlipkartInvoice.pdf", "nist_csf_2.0_excerpt.pdf"]);
    assert_eq!(docintel_kb::indexed_ids(&kb).unwrap().len(), 2);
    assert!(!kb.join("docs").join(&removed.id).exists(), "its stored folder is gone");
    let answer = ask(&kb, AWS_TOTAL).expect("answers");
    assert_ne!(answer.kb.document_name, "AmazonWebServices.pdf", "a removed document never answers");
    let unknown = docintel_kb::remove(&kb, "nothing.pdf").unwrap_err();
    assert_eq!(unknown.exit_code(), EXIT_BAD_INPUT, "{unknown}");
}

#[test]
fn kb_ask_gives_the_answer_ask_gives_on_the_picked_document() {
    let dir = temp_dir("kb-same");
    let kb = dir.path().join("kb");
    let invoices = fixture("invoices");
    add(&kb, &[invoices, fixture("nist/nist_csf_2.0_excerpt.pdf")]);
    let options = AskOptions::new(5);
    for (question, document) in [
        (AWS_TOTAL, "AmazonWebServices.pdf"),
        ("What is the invoice number of the Flipkart invoice?", "FlipkartInvoice.pdf"),
        ("What is the order date of the Flipkart invoice?", "FlipkartInvoice.pdf"),
        ("What are the functions of the NIST Cybersecurity Framework core?", "nist_csf_2.0_excerpt.pdf"),
    ] {
        let from_kb = ask(&kb, question).expect("kb answers");
        assert_eq!(from_kb.kb.document_name, document, "{question}");
        assert!(from_kb.output.answer.feedback.answer_found, "{question}");
        let picked = PathBuf::from(&from_kb.output.document);
        let direct = docintel::pdf_qa(&picked, question, &options).expect("ask answers");
        assert_eq!(
            serde_json::to_value(&from_kb.output.answer).unwrap(),
            serde_json::to_value(&direct.answer).unwrap(),
            "{question} on {}",
            picked.display()
        );
        assert_eq!(from_kb.output.citations_verified, direct.citations_verified, "{question}");
    }
}

#[test]
fn a_corrupt_file_is_recorded_as_failed_and_the_others_still_ingest() {
    let dir = temp_dir("kb-corrupt");
    let folder = dir.path().join("in");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::copy(invoice("saeco.pdf"), folder.join("saeco.pdf")).unwrap();
    std::fs::write(folder.join("broken.pdf"), b"%PDF-1.7\nthis is no PDF body at all\n%%EOF").unwrap();
    let kb = dir.path().join("kb");
    let report = add(&kb, &[folder.clone(), dir.path().join("missing.pdf")]);
    assert_eq!(report.added.len(), 1, "{report:?}");
    assert_eq!(report.failed.len(), 2, "{report:?}");
    assert!(
        report.failed.iter().any(|f| f.source.ends_with("broken.pdf") && f.error.contains("broken.pdf")),
        "{report:?}"
    );
    assert!(report.failed.iter().any(|f| f.source.ends_with("missing.pdf")), "{report:?}");
    let manifest = docintel_kb::list(&kb).unwrap();
    assert_eq!(names(&kb), ["saeco.pdf"]);
    assert_eq!(manifest.failures.len(), 2, "{manifest:?}");
    assert!(ask(&kb, "What is the total amount?").is_ok());

    // Fixed, the file goes in and its failure is forgotten.
    std::fs::copy(invoice("NetpresseInvoice.pdf"), folder.join("broken.pdf")).unwrap();
    let report = add(&kb, &[folder]);
    assert_eq!(report.added.len(), 1, "{report:?}");
    assert_eq!(report.skipped.len(), 1, "{report:?}");
    let manifest = docintel_kb::list(&kb).unwrap();
    assert_eq!(manifest.documents.len(), 2);
    assert!(manifest.failures.iter().all(|f| !f.source.ends_with("broken.pdf")), "{manifest:?}");
}

#[test]
fn a_changed_file_replaces_its_earlier_version() {
    let dir = temp_dir("kb-changed");
    let file = dir.path().join("invoice.pdf");
    std::fs::copy(invoice("saeco.pdf"), &file).unwrap();
    let kb = dir.path().join("kb");
    let first = add(&kb, std::slice::from_ref(&file));
    std::fs::copy(invoice("AmazonWebServices.pdf"), &file).unwrap();
    let second = add(&kb, std::slice::from_ref(&file));
    assert_eq!(second.replaced, first.added, "{second:?}");
    let manifest = docintel_kb::list(&kb).unwrap();
    assert_eq!(manifest.documents.len(), 1);
    assert_eq!(manifest.documents[0].id, second.added[0]);
    assert_eq!(docintel_kb::indexed_ids(&kb).unwrap(), second.added);
}

#[test]
fn a_knowledge_base_of_another_format_is_re_indexed_not_misread() {
    let dir = temp_dir("kb-format");
    let kb = dir.path().join("kb");
    add(&kb, &[invoice("AmazonWebServices.pdf")]);
    let path = kb.join(MANIFEST);
    let mut manifest: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    manifest["format_version"] = 0.into();
    std::fs::write(&path, manifest.to_string()).unwrap();

    let stale = ask(&kb, AWS_TOTAL).unwrap_err();
    assert!(matches!(stale, KbError::Stale { .. }), "{stale}");
    assert_eq!(stale.exit_code(), EXIT_BAD_INPUT);
    assert!(docintel_kb::list(&kb).is_err());

    let report = add(&kb, &[]);
    assert!(report.reindexed, "{report:?}");
    assert_eq!(report.added.len(), 1, "the recorded source is parsed again: {report:?}");
    assert_eq!(ask(&kb, AWS_TOTAL).unwrap().kb.document_name, "AmazonWebServices.pdf");
}

#[test]
fn a_folder_without_a_manifest_is_not_a_knowledge_base() {
    let dir = temp_dir("kb-none");
    let error = ask(dir.path(), AWS_TOTAL).unwrap_err();
    assert!(matches!(error, KbError::NotAKb { .. }), "{error}");
    assert_eq!(error.exit_code(), EXIT_BAD_INPUT);
    let empty = dir.path().join("empty");
    add(&empty, &[]);
    let error = ask(&empty, AWS_TOTAL).unwrap_err();
    assert!(matches!(error, KbError::Empty { .. }), "{error}");
}

#[test]
fn an_index_entry_the_manifest_never_recorded_is_not_opened_and_is_added_again() {
    // What a `kb add` killed between the index commit and the manifest write leaves.
    let dir = temp_dir("kb-killed");
    let kb = dir.path().join("kb");
    add(&kb, &[invoice("saeco.pdf")]);
    let before = std::fs::read(kb.join(MANIFEST)).unwrap();
    add(&kb, &[invoice("AmazonWebServices.pdf")]);
    std::fs::write(kb.join(MANIFEST), before).unwrap();
    assert_eq!(docintel_kb::indexed_ids(&kb).unwrap().len(), 2);

    let answer = ask(&kb, AWS_TOTAL).expect("answers");
    assert_eq!(answer.kb.document_name, "saeco.pdf", "only what the manifest lists is opened");
    assert!(answer.kb.candidates.iter().all(|c| c.name == "saeco.pdf"), "{:?}", answer.kb.candidates);

    let report = add(&kb, &[invoice("AmazonWebServices.pdf")]);
    assert_eq!(report.added.len(), 1, "not skipped: the manifest never had it: {report:?}");
    assert_eq!(docintel_kb::indexed_ids(&kb).unwrap().len(), 2, "re-indexed, not duplicated");
    assert_eq!(ask(&kb, AWS_TOTAL).unwrap().kb.document_name, "AmazonWebServices.pdf");
}

#[test]
fn questions_are_answered_while_a_kb_add_writes() {
    let dir = temp_dir("kb-concurrent");
    let kb = dir.path().join("kb");
    add(&kb, &[invoice("AmazonWebServices.pdf")]);
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            add(&kb, &[fixture("nist/nist_csf_2.0_excerpt.pdf"), invoice("saeco.pdf"), invoice("FlipkartInvoice.pdf")])
        });
        let mut asked = 0;
        while !writer.is_finished() || asked < 3 {
            let answer = ask(&kb, AWS_TOTAL).expect("a reader beside the writer answers");
            assert_eq!(answer.kb.document_name, "AmazonWebServices.pdf");
            asked += 1;
        }
        assert_eq!(writer.join().unwrap().added.len(), 3);
    });
    assert_eq!(names(&kb).len(), 4);
}

#[test]
fn every_kb_ask_appends_one_row_to_the_question_table() {
    let dir = temp_dir("kb-questions");
    let kb = dir.path().join("kb");
    add(&kb, &[invoice("AmazonWebServices.pdf"), invoice("FlipkartInvoice.pdf")]);
    assert!(docintel_kb::questions(&kb, None).unwrap().is_empty());
    ask(&kb, AWS_TOTAL).unwrap();
    ask(&kb, "What is the IBAN of the Antarctica office?").unwrap();
    let rows = docintel_kb::questions(&kb, None).unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0].question.as_deref(), Some(AWS_TOTAL));
    assert_eq!(rows[0].answer_type, "amount");
    assert!(rows[0].keywords.as_ref().is_some_and(|k| !k.is_empty()), "{:?}", rows[0]);
    assert_eq!(rows[0].document_name, "AmazonWebServices.pdf");
    assert_eq!((rows[0].outcome.as_str(), rows[0].citations_verified), ("answered", true));
    assert!(rows[0].confidence > 0.5 && rows[0].time.ends_with('Z') && rows[0].unix_ms > 0);
    assert_eq!(rows[1].outcome, "not_found", "{:?}", rows[1]);
    // One JSON object per line: what duckdb's read_json_auto reads.
    let text = std::fs::read_to_string(kb.join(docintel_kb::QUESTIONS)).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(text.lines().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok_and(|v| v.is_object())));
}
