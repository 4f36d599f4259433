//! End-to-end tests of `pdf_qa` on the redistributable fixtures: real PDFs,
//! real questions, typed values and cited pages checked against the gold
//! fields shipped with each invoice.

use std::path::PathBuf;

use docintel::schema::{AnswerValue, AskOutput, LineSource};
use docintel::{AskOptions, pdf_qa};
use docintel_test_support::{fixture, invoice, temp_dir};

fn ask(name: &str, question: &str) -> AskOutput {
    let output =
        pdf_qa(&invoice(name), question, &AskOptions::new(5)).unwrap_or_else(|e| panic!("{name}: {question}: {e}"));
    assert!(output.citations_verified, "{name}: {question}: {:#?}", output.meta.citation_problems);
    output
}

/// The answer must be found, of the asked type, and cite `page`.
fn check_amount(name: &str, value: f64, currency: &str, page: u32) {
    let output = ask(name, "What is the total amount?");
    let answer = &output.answer;
    assert!(answer.feedback.answer_found, "{name}: {answer:#?}");
    assert_eq!(answer.answer_type, "amount");
    let item = &answer.items[0];
    match &item.value {
        AnswerValue::Amount(a) => {
            assert!((a.value - value).abs() < 0.005, "{name}: got {a:?}, want {value}");
            assert_eq!(a.currency.as_deref(), Some(currency), "{name}: {a:?}");
        }
        other => panic!("{name}: not an amount: {other:?}"),
    }
    assert!(!item.spans.is_empty());
    assert!(item.spans.iter().all(|s| s.page == page), "{name}: {:?}", item.spans);
}

fn check_date(name: &str, iso: &str, page: u32) {
    let output = ask(name, "What is the invoice date?");
    let answer = &output.answer;
    assert!(answer.feedback.answer_found, "{name}: {answer:#?}");
    match &answer.items[0].value {
        AnswerValue::Date(d) => assert_eq!(d.iso, iso, "{name}: {d:?}"),
        other => panic!("{name}: not a date: {other:?}"),
    }
    assert!(answer.items[0].spans.iter().all(|s| s.page == page));
}

#[test]
fn aws_invoice_total_and_date() {
    check_amount("AmazonWebServices.pdf", 4.11, "USD", 1);
    check_date("AmazonWebServices.pdf", "2014-08-03", 1);
}

/// A scanned copy of the AWS invoice (no text layer; needs tesseract, `scripts/setup.sh`) is
/// answered as the original is, from lines read by OCR.
#[test]
fn a_scanned_invoice_is_answered_from_ocr_lines() {
    let path = fixture("ocr/aws_invoice_scanned.pdf");
    let output = pdf_qa(&path, "What is the total amount?", &AskOptions::new(5)).unwrap_or_else(|e| panic!("{e}"));
    assert!(output.citations_verified, "{:#?}", output.meta.citation_problems);
    let item = &output.answer.items[0];
    match &item.value {
        AnswerValue::Amount(a) => {
            assert!((a.value - 4.11).abs() < 0.005 && a.currency.as_deref() == Some("USD"), "{a:?}")
        }
        other => panic!("not an amount: {other:?}"),
    }
    let document = docintel::parse_pdf(&path).unwrap();
    assert!(!item.spans.is_empty());
    for span in &item.spans {
        for id in span.line_start..=span.line_end {
            assert_eq!(document.line_source(id), LineSource::Ocr, "line {id} of {span:?}");
        }
    }
}

#[test]
fn netpresse_invoice_total_and_date() {
    check_amount("NetpresseInvoice.pdf", 56.02, "EUR", 1);
    check_date("NetpresseInvoice.pdf", "2022-11-28", 1);
}

#[test]
fn flipkart_invoice_total_and_date() {
    check_amount("FlipkartInvoice.pdf", 319.0, "INR", 1);
    check_date("FlipkartInvoice.pdf", "2015-10-20", 1);
}

#[test]
fn saeco_invoice_total_and_date() {
    check_amount("saeco.pdf", 49.99, "EUR", 1);
    check_date("saeco.pdf", "2022-09-08", 1);
}

#[test]
fn an_unanswerable_question_is_honestly_not_found() {
    for name in ["AmazonWebServices.pdf", "NetpresseInvoice.pdf", "FlipkartInvoice.pdf", "saeco.pdf"] {
        let output = ask(name, "What is the name of the CEO's dog?");
        assert!(!output.answer.feedback.answer_found, "{name}: {:#?}", output.answer);
        assert!(output.answer.items.is_empty());
        assert!(!output.answer.feedback.warnings.is_empty(), "a refusal says what was looked for");
    }
}

#[test]
fn meta_records_the_path_taken() {
    let output = ask("AmazonWebServices.pdf", "What is the total amount?");
    let meta = &output.meta;
    assert_eq!(meta.implementations.len(), 3, "{:?}", meta.implementations);
    assert!(meta.retrieval_methods_used.contains(&"keyword".to_owned()));
    assert!(!meta.passages_shown.is_empty());
    assert!(meta.skipped.iter().any(|s| s.step == "toc_navigation"));
    assert!(meta.timings_ms.contains_key("parse"));
}

#[test]
fn a_page_outside_the_document_is_noted_not_fatal() {
    let output = ask("AmazonWebServices.pdf", "What is the total amount on page 7?");
    let notes: Vec<&String> = output.meta.parsing_notes.iter().chain(&output.meta.retrieval_notes).collect();
    assert!(notes.iter().any(|n| n.contains('7')), "{notes:?}");
    assert!(output.answer.feedback.answer_found, "the rest of the question is still answered");
}

#[test]
fn the_trace_is_written_per_question() {
    let tmp_out = temp_dir("facade-trace");
    let out = tmp_out.path().to_owned();
    let mut options = AskOptions::new(5);
    options.out_dir = Some(out.clone());
    let output = pdf_qa(&invoice("AmazonWebServices.pdf"), "What is the total amount?", &options).unwrap();
    let dir = PathBuf::from(output.meta.trace_dir.as_deref().expect("trace_dir set"));
    assert!(dir.starts_with(&out));
    for file in ["parsed_question.json", "pipeline_trace.json", "answer.json"] {
        assert!(dir.join(file).is_file(), "{file} missing in {}", dir.display());
    }
    let parsed: docintel::schema::ParsedQuestion =
        serde_json::from_str(&std::fs::read_to_string(dir.join("parsed_question.json")).unwrap()).unwrap();
    assert_eq!(parsed.answer_type, "amount");
}

#[test]
fn bad_input_is_an_error_naming_the_file() {
    let missing = pdf_qa(&invoice("nope.pdf"), "What?", &AskOptions::new(5)).unwrap_err();
    assert!(missing.to_string().contains("nope.pdf"), "{missing}");
    let tmp_dir = temp_dir("facade-bad");
    let dir = tmp_dir.path().to_owned();
    let binary = dir.join("scan.bin");
    std::fs::write(&binary, [0x89, b'P', b'N', b'G', 0, 0, 0, 13, 0xff, 0xfe]).unwrap();
    let unsupported = pdf_qa(&binary, "What?", &AskOptions::new(5)).unwrap_err();
    assert!(unsupported.to_string().contains("scan.bin"), "{unsupported}");
    let fake_pdf = dir.join("fake.pdf");
    std::fs::write(&fake_pdf, "plain words").unwrap();
    let not_pdf = pdf_qa(&fake_pdf, "What?", &AskOptions::new(5)).unwrap_err();
    assert!(not_pdf.to_string().contains("fake.pdf: not a PDF"), "{not_pdf}");
}

#[test]
fn a_second_ask_reuses_the_persisted_parsed_question() {
    let tmp_out = temp_dir("facade-cache");
    let out = tmp_out.path().to_owned();
    let mut options = AskOptions::new(5);
    options.out_dir = Some(out.clone());
    let pdf = invoice("NetpresseInvoice.pdf");
    let first = pdf_qa(&pdf, "What is the invoice date?", &options).unwrap();
    let second = pdf_qa(&pdf, "What is the invoice date?", &options).unwrap();
    assert!(!first.meta.parsed_question_cached);
    assert!(second.meta.parsed_question_cached);
    assert_eq!(first.answer, second.answer);
}

#[test]
fn plain_text_documents_answer_too() {
    let tmp_dir = temp_dir("facade-txt");
    let dir = tmp_dir.path().to_owned();
    let txt = dir.join("receipt.txt");
    std::fs::write(&txt, "Receipt 2041\nDate: 12 March 2024\n\nSubtotal: 10.00 EUR\nTotal amount: 12.50 EUR\n")
        .unwrap();
    let output = pdf_qa(&txt, "What is the total amount?", &AskOptions::new(5)).unwrap();
    assert!(output.citations_verified);
    match &output.answer.items[0].value {
        AnswerValue::Amount(a) => assert_eq!((a.value, a.currency.as_deref()), (12.5, Some("EUR"))),
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_satellite_tables_are_an_error_naming_the_file() {
    let tmp_dir = temp_dir("facade-sat");
    let dir = tmp_dir.path().to_owned();
    std::fs::write(dir.join("models.csv"), "this,is,not,the,header\n").unwrap();
    let mut options = AskOptions::new(5);
    options.satellites_dir = Some(dir.clone());
    let error = pdf_qa(&invoice("saeco.pdf"), "What is the total amount?", &options).unwrap_err();
    assert!(error.to_string().contains("models.csv"), "{error}");
}

#[test]
fn meta_carries_the_question_decisions() {
    let output = ask("AmazonWebServices.pdf", "What is the total amount?");
    let meta = &output.meta;
    assert_eq!(meta.matched_concept.as_deref(), Some("total_amount"));
    assert!(!meta.suggested_model.is_empty());
    assert!(meta.parsing_notes.iter().any(|n| n.starts_with("defaults:")), "{:?}", meta.parsing_notes);
}

#[test]
fn one_engine_answers_many_questions_as_the_free_functions_do() {
    let options = AskOptions::new(5);
    let engine = std::sync::Arc::new(docintel::Engine::new(&options).unwrap());
    let asked = [("AmazonWebServices.pdf", "What is the total amount?"), ("saeco.pdf", "What is the invoice date?")];
    // Shared between threads, as a server would.
    let handles: Vec<_> = asked
        .iter()
        .map(|&(name, question)| {
            let (engine, options) = (engine.clone(), options.clone());
            std::thread::spawn(move || engine.ask(&invoice(name), question, &options).unwrap())
        })
        .collect();
    for (handle, (name, question)) in handles.into_iter().zip(asked) {
        let mut shared = handle.join().unwrap();
        let mut alone = pdf_qa(&invoice(name), question, &options).unwrap();
        shared.meta.timings_ms.clear();
        alone.meta.timings_ms.clear();
        assert_eq!(serde_json::to_value(&shared).unwrap(), serde_json::to_value(&alone).unwrap(), "{name}");
    }
}

#[test]
fn errors_map_to_the_documented_exit_codes() {
    let missing = pdf_qa(&invoice("nope.pdf"), "What?", &AskOptions::new(5)).unwrap_err();
    assert_eq!(missing.exit_code(), docintel::EXIT_BAD_INPUT);
    assert_eq!(docintel::PipelineError::Usage("bad".into()).exit_code(), docintel::EXIT_USAGE);
    let unwritable = docintel::PipelineError::Trace(docintel::TraceError::Io {
        path: "x".into(),
        source: std::io::Error::other("disk full"),
    });
    assert_eq!(unwritable.exit_code(), docintel::EXIT_FAILURE);
}

/// The passages shown, as line ranges.
fn shown(output: &AskOutput) -> Vec<String> {
    output.meta.passages_shown.clone()
}

/// Whether one of the passages shown holds global line `line` (`p<page> l<start>-<end>`).
fn shows_line(output: &AskOutput, line: u32) -> bool {
    output.meta.passages_shown.iter().any(|p| {
        let range = p.split_once(" l").map(|(_, r)| r).unwrap_or_default();
        let (start, end) = range.split_once('-').unwrap_or((range, range));
        (start.parse::<u32>().unwrap_or(0)..=end.parse::<u32>().unwrap_or(0)).contains(&line)
    })
}

/// "What is its identifier?" finds nothing alone in the NIST CSF excerpt (no line holds
/// "identifier"); after "What does the RECOVER function do?" it is read as "What is the recover
/// function's identifier?" for retrieval, which finds line 127, "RECOVER (RC) — …". The
/// answer, the generation brief and the parse cache keep the turns apart.
#[test]
fn a_follow_up_is_rewritten_for_retrieval_only_and_cached_apart() {
    let tmp_out = temp_dir("facade-follow-up");
    let mut options = AskOptions::new(5);
    options.out_dir = Some(tmp_out.path().to_owned());
    let engine = docintel::Engine::new(&options).unwrap();
    let nist = fixture("nist/nist_csf_2.0_excerpt.pdf");
    let question = "What is its identifier?";

    let alone = engine.ask(&nist, question, &options).unwrap();
    assert!(alone.meta.follow_up.is_none() && alone.meta.retrieval_rewrites.is_empty(), "{:?}", alone.meta);
    assert!(!shows_line(&alone, 127), "alone, the question cannot find the RECOVER line: {:?}", shown(&alone));

    let mut after = options.clone();
    after.previous_turns = vec!["What does the RECOVER function do?".to_owned()];
    let followed = engine.ask(&nist, question, &after).unwrap();
    assert!(!followed.meta.parsed_question_cached, "the record of the question asked alone is not reused");
    let follow_up = followed.meta.follow_up.as_ref().expect("_meta.follow_up");
    assert_eq!(follow_up.previous_turns, after.previous_turns);
    let rewrite = "What is the recover function's identifier?";
    assert_eq!(follow_up.rewrite.as_deref(), Some(rewrite));
    assert_eq!(followed.meta.retrieval_rewrites, [rewrite]);
    assert!(followed.meta.parsing_notes.iter().any(|n| n.contains(&format!("for retrieval only: '{rewrite}'"))));
    assert!(shows_line(&followed, 127), "the rewrite finds the RECOVER line: {:?}", shown(&followed));
    // The user's words everywhere but retrieval: the answer, the generation brief.
    assert_eq!(followed.question, question);
    let dir = PathBuf::from(followed.meta.trace_dir.as_deref().unwrap());
    let parsed: docintel::schema::ParsedQuestion =
        serde_json::from_str(&std::fs::read_to_string(dir.join("parsed_question.json")).unwrap()).unwrap();
    assert_eq!(parsed.generation.original_question, question);
    assert_eq!(parsed.retrieval.main_query, question);
    assert_eq!(parsed.retrieval.rewrites, [rewrite]);

    // The same turns again: the saved record; alone again: its own saved record, not the
    // follow-up's (each conversation keeps its parse cache and trace folder).
    let again = engine.ask(&nist, question, &after).unwrap();
    assert!(again.meta.parsed_question_cached);
    assert_eq!(again.meta.follow_up, followed.meta.follow_up);
    assert_eq!(shown(&again), shown(&followed));
    let alone_again = engine.ask(&nist, question, &options).unwrap();
    assert!(alone_again.meta.parsed_question_cached && alone_again.meta.follow_up.is_none());
    assert_ne!(alone_again.meta.trace_dir, followed.meta.trace_dir, "the two conversations' traces are apart");
    assert_eq!(shown(&alone_again), shown(&alone));

    // A turn that names nothing the question can lean on changes nothing but a note.
    after.previous_turns = vec!["??".to_owned()];
    let unresolved = engine.ask(&nist, question, &after).unwrap();
    assert_eq!(unresolved.meta.follow_up.as_ref().map(|f| f.rewrite.clone()), Some(None));
    assert!(unresolved.meta.parsing_notes.iter().any(|n| n.contains("original wording kept")));
    assert_eq!(shown(&unresolved), shown(&alone));
}
