//! The vision step on a hand-written report (`docintel_test_support::figure_pdf`: a logo
//! on every page, one real figure on page 2) with recorded replies: a model stand-in that
//! counts its calls and keeps the images it was shown.

use std::cell::RefCell;

use docintel_parse::{
    PageKind, VisionOptions, describe_pages, is_figure_caption, parse_pdf_bytes, vision_candidates, vision_pages,
    vision_request,
};
use docintel_schema::{LanguageModel, LineSource, LlmRequest, LlmResponse, ParsedDocument, Usage};
use docintel_test_support::{figure_pdf, temp_dir};
use serde_json::json;

const REPLY: &str = r#"{"lines":["A bar chart of revenue by year.","Revenue rose from 12 million USD in 2021 to 31 million USD in 2024."]}"#;

/// Answers every image request with `reply`, as a server would have.
struct Recorded {
    reply: &'static str,
    refuse: bool,
    shown: RefCell<Vec<(LlmRequest, Vec<Vec<u8>>)>>,
}

#[derive(Debug)]
struct Refused;

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HTTP 400: image_url is only supported by certain models")
    }
}

impl std::error::Error for Refused {}

impl Recorded {
    fn new(reply: &'static str) -> Recorded {
        Recorded { reply, refuse: false, shown: RefCell::new(Vec::new()) }
    }

    fn calls(&self) -> usize {
        self.shown.borrow().len()
    }
}

impl LanguageModel for Recorded {
    type Error = Refused;

    fn complete(&self, _request: &LlmRequest) -> Result<LlmResponse, Refused> {
        panic!("the vision step sends images")
    }

    fn complete_with_images(&self, request: &LlmRequest, images: &[Vec<u8>]) -> Option<Result<LlmResponse, Refused>> {
        self.shown.borrow_mut().push((request.clone(), images.to_vec()));
        if self.refuse {
            return Some(Err(Refused));
        }
        let n = self.calls();
        Some(Ok(LlmResponse {
            id: format!("chatcmpl-{n}"),
            model: request.model.clone(),
            content: self.reply.to_owned(),
            finish_reason: "stop".into(),
            usage: Usage { input_tokens: 900, output_tokens: 40, cached_tokens: 0 },
            raw: json!({"id": format!("chatcmpl-{n}"), "choices": [{"message": {"content": self.reply}}]}),
        }))
    }

    fn rejects_images(_error: &Refused) -> bool {
        true
    }
}

fn options(cache: Option<&std::path::Path>) -> VisionOptions {
    VisionOptions { model: "vision-model".into(), max_calls: 20, cache_dir: cache.map(Into::into) }
}

fn report() -> (Vec<u8>, ParsedDocument) {
    let pdf = figure_pdf();
    let doc = parse_pdf_bytes("report.pdf", &pdf).unwrap();
    doc.check_invariants().unwrap();
    (pdf, doc)
}

#[test]
fn the_figure_page_is_described_once_and_the_logo_never() {
    let (pdf, mut doc) = report();
    // The logo is on every page; only page 2 has a figure.
    assert!(doc.pages.iter().all(|p| p.decorative_image_hashes.len() == 1), "{:?}", doc.pages);
    assert_eq!(vision_candidates(&doc), (vec![2], vec![]));
    let before = doc.clone();
    let model = Recorded::new(REPLY);
    let run = describe_pages(&mut doc, &pdf, None, &model, &options(None));
    assert_eq!((run.calls, run.cached, run.pages.as_slice()), (1, 0, &[2][..]), "{:?}", run.notes);
    assert_eq!(model.calls(), 1);
    let (request, images) = &model.shown.borrow()[0];
    assert_eq!(request.model, "vision-model");
    assert_eq!(images.len(), 1);
    assert!(images[0].starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG is shown");
    assert_eq!(run.usage.input_tokens, 900);

    // The two lines follow page 2's caption, marked as vision; the rest is unchanged.
    doc.check_invariants().unwrap();
    let page2: Vec<(&str, LineSource)> =
        doc.lines.iter().filter(|l| l.page == 2).map(|l| (l.text.as_str(), doc.line_source(l.line_id))).collect();
    assert_eq!(
        page2,
        [
            ("Figure 1: Revenue by year", LineSource::TextLayer),
            ("A bar chart of revenue by year.", LineSource::Vision),
            ("Revenue rose from 12 million USD in 2021 to 31 million USD in 2024.", LineSource::Vision),
        ]
    );
    assert_eq!(doc.lines.len(), before.lines.len() + 2);
    let texts = |d: &ParsedDocument| -> Vec<String> {
        d.lines.iter().filter(|l| d.line_source(l.line_id) != LineSource::Vision).map(|l| l.text.clone()).collect()
    };
    assert_eq!(texts(&doc), texts(&before));
    // The trace detail keeps the verbatim reply.
    assert_eq!(run.events.len(), 1);
    assert_eq!(run.events[0]["raw"]["id"], "chatcmpl-1");
    assert_eq!(run.events[0]["page"], 2);
}

#[test]
fn a_second_run_reads_the_cache_and_calls_nothing() {
    let cache = temp_dir("vision-cache");
    let (pdf, fresh) = report();
    let mut first = fresh.clone();
    let model = Recorded::new(REPLY);
    assert_eq!(describe_pages(&mut first, &pdf, None, &model, &options(Some(cache.path()))).calls, 1);
    let mut second = fresh.clone();
    let again = Recorded::new(r#"{"lines":["another description"]}"#);
    let run = describe_pages(&mut second, &pdf, None, &again, &options(Some(cache.path())));
    assert_eq!((run.calls, run.cached, again.calls()), (0, 1, 0));
    assert_eq!(first, second);
    assert!(run.events[0].get("raw").is_none(), "a cached description is no model reply");
    // Another model's description is not this one's.
    let mut third = fresh;
    let other = VisionOptions { model: "other-model".into(), ..options(Some(cache.path())) };
    assert_eq!(describe_pages(&mut third, &pdf, None, &again, &other).calls, 1);
}

#[test]
fn a_model_that_refuses_images_is_said_once_and_the_document_is_kept() {
    let (pdf, mut doc) = report();
    // Two figure pages: one refusal stops the step.
    doc.pages[2].has_figure = true;
    let before = doc.clone();
    let model = Recorded { refuse: true, ..Recorded::new(REPLY) };
    let run = describe_pages(&mut doc, &pdf, None, &model, &options(None));
    assert_eq!(model.calls(), 1);
    assert_eq!(run.notes.len(), 1, "{:?}", run.notes);
    assert!(run.notes[0].contains("does not read images"), "{:?}", run.notes);
    assert_eq!(doc, before);
}

#[test]
fn calls_are_bounded_per_document() {
    let (pdf, mut doc) = report();
    for page in [0, 2] {
        doc.pages[page].has_figure = true;
        doc.pages[page].figure_kind = Some("image".into());
    }
    let model = Recorded::new(REPLY);
    let bounded = VisionOptions { max_calls: 1, ..options(None) };
    let run = describe_pages(&mut doc, &pdf, None, &model, &bounded);
    assert_eq!((run.calls, model.calls(), run.pages.as_slice()), (1, 1, &[1][..]));
    assert!(
        run.notes.iter().any(|n| n.contains("2 page(s) not described") && n.contains("pages 2, 3")),
        "{:?}",
        run.notes
    );
    doc.check_invariants().unwrap();
}

#[test]
fn scanned_pages_are_shown_when_ocr_read_them_badly() {
    let (_, mut doc) = report();
    // A page with no text layer and no OCR line (OCR failed or is not installed).
    doc.pages[2].has_text_layer = false;
    assert_eq!(vision_pages(&doc), [(2, PageKind::Figure), (3, PageKind::Scan)]);
}

#[test]
fn a_vector_figure_is_shown_only_when_the_page_captions_it() {
    // Page 2 reads "Figure 1: Revenue by year": a chart drawn with paths is still a figure.
    let (_, mut doc) = report();
    doc.pages[1].figure_kind = Some("vector".into());
    assert_eq!(vision_pages(&doc), [(2, PageKind::Figure)]);
    // Without the caption it is as likely a ruled table (an invoice's grid draws as many
    // paths), whose text says it all: not worth a call.
    for line in doc.lines.iter_mut().filter(|l| l.page == 2) {
        line.text = "Revenue by year".into();
    }
    assert_eq!(vision_candidates(&doc), (vec![2], vec![]));
    assert_eq!(vision_pages(&doc), []);
}

#[test]
fn figure_captions() {
    for caption in ["Figure 1: Revenue by year", "FIGURE 12", "Fig. 2b", "Fig 3", "Abbildung 4", "Figura 5."] {
        assert!(is_figure_caption(caption), "{caption}");
    }
    for other in ["Figures show revenue", "Figure shows", "Table 1", "configured 3", "TOTAL AMOUNT DUE"] {
        assert!(!is_figure_caption(other), "{other}");
    }
}

#[test]
fn the_vision_prompt() {
    let prompts = json!({
        "figure": serde_json::to_value(vision_request("m", PageKind::Figure)).unwrap(),
        "scan": serde_json::to_value(vision_request("m", PageKind::Scan)).unwrap(),
    });
    insta::assert_json_snapshot!(prompts);
}
