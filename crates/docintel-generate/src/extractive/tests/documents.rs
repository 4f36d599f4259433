//! Whole documents: running headers, what a number counts, compound
//! questions whose parts refer back or restate, statements read by row
//! and year, documents without text.

use super::*;

#[test]
fn running_headers_are_never_the_text_answer() {
    // The header carries every question keyword and sits first on each
    // page; the control's own heading carries fewer. The header is
    // flagged as running (a feature the model weighs against it).
    let rows: &[(&str, u32)] = &[
        ("NIST SP 800-53 control catalog", 1),
        ("AC-1 POLICY AND PROCEDURES", 1),
        ("NIST SP 800-53 control catalog", 2),
        ("PM-23 DATA GOVERNANCE BODY", 2),
        ("NIST SP 800-53 control catalog", 3),
        ("SI-4 SYSTEM MONITORING", 3),
    ];
    let q = question("What is the title of NIST SP 800-53 control PM-23?", "text", &["NIST", "control", "PM-23"]);
    check(rows, &q, Some("PM-23 DATA GOVERNANCE BODY"));
    let document = doc(rows);
    let at = reader_features().iter().position(|f| *f == "running").expect("feature");
    let candidates = ExtractiveGenerator::new().candidates(&q, &document, &page_passages(&document)).unwrap();
    assert!(candidates.iter().filter(|c| c.text.starts_with("NIST SP")).all(|c| c.features[at] == 1.0));
    // Two pages only: not a running line.
    let document = doc(&rows[..4]);
    let candidates = ExtractiveGenerator::new().candidates(&q, &document, &page_passages(&document)).unwrap();
    assert!(candidates.iter().all(|c| c.features[at] == 0.0));
}

#[test]
fn what_follows_a_number_names_what_it_counts() {
    // "three" is near the focus words but counts "ways"; "8" is followed
    // by them: `focus_after` tells the two apart (the model weighs it).
    let rows: &[(&str, u32)] = &[
        ("The Transformer uses multi-head attention in three different ways:", 1),
        ("In this work we employ h = 8 parallel attention layers, or heads.", 1),
    ];
    let mut q = question("How many attention heads does the base model use?", "count", &["attention", "heads"]);
    q.generation.answer_focus = Some("attention heads".to_owned());
    let document = doc(rows);
    let candidates = ExtractiveGenerator::new().candidates(&q, &document, &page_passages(&document)).unwrap();
    assert_eq!(feature_of(&candidates, "focus_after", "8"), Some(1.0));
    assert_eq!(feature_of(&candidates, "focus_after", "three"), Some(0.0));
}

#[test]
fn a_part_that_refers_back_is_read_near_the_earlier_answer() {
    // "how old is he": he is the officer the first part named, so the
    // age on his row carries the part's terms and the other age does not
    // (without the earlier answer the two rows read alike).
    let rows: &[(&str, u32)] = &[
        ("Hugh Smith is our Chief Financial Officer.", 1),
        ("Hugh Smith, 61, joined the company in 1987.", 1),
        ("The board met four times.", 1),
        ("Jane Roe, 52, joined the company in 2001.", 1),
    ];
    let mut q = question(
        "Who is the chief financial officer, and how old is he?",
        "person",
        &["chief", "financial", "officer", "old"],
    );
    q.generation.parts = vec![
        asked_part("Who is the chief financial officer?", "person", Some("chief financial officer")),
        asked_part("How old is he?", "number", None),
    ];
    let document = doc(rows);
    let candidates = ExtractiveGenerator::new().candidates(&q, &document, &page_passages(&document)).unwrap();
    let cov_row = |text: &str| {
        let at = reader_features().iter().position(|f| *f == "cov_row").expect("a reader feature");
        candidates.iter().find(|c| c.part == 1 && c.text == text).map(|c| c.features[at])
    };
    assert_eq!(cov_row("52"), Some(0.0));
    assert!(cov_row("61").is_some_and(|f| f > 0.0), "{:?}", cov_row("61"));
    // He is the person the first part answered: an age on a row that
    // does not name him lacks him.
    let missing = |text: &str| candidates.iter().find(|c| c.part == 1 && c.text == text).map(|c| c.missing.clone());
    assert_eq!(missing("52"), Some(vec!["Hugh Smith".to_owned()]));
    assert_eq!(missing("61"), Some(Vec::new()));
}

#[test]
fn a_role_is_read_where_the_earlier_part_named_its_holder() {
    // "in what capacity" names nobody: the role is the signer's, read by
    // the name the first part answered, not a capitalised role noun of the
    // recitals nor the other signer's.
    let rows: &[(&str, u32)] = &[
        ("WHEREAS, the Company desires to retain Consultant as an independent contractor.", 1),
        ("IN WITNESS WHEREOF, the Parties have executed this Agreement.", 2),
        ("By: /s/ Brian Hayek", 2),
        ("BRIAN HAYEK, President", 2),
        ("By: /s/ Christian Schenk", 2),
        ("CHRISTIAN SCHENK, Managing Member", 2),
    ];
    let mut q = question(
        "Who signed the agreement for the Company, and in what capacity?",
        "person",
        &["signed", "agreement", "company", "capacity"],
    );
    q.generation.parts = vec![
        asked_part("Who signed the agreement for the Company?", "person", Some("agreement")),
        asked_part("In what capacity?", "role", Some("capacity")),
    ];
    let document = doc(rows);
    let candidates = ExtractiveGenerator::new().candidates(&q, &document, &page_passages(&document)).unwrap();
    let best = |part: usize| {
        candidates
            .iter()
            .filter(|c| c.part == part)
            .max_by(|a, b| a.probability.total_cmp(&b.probability))
            .map(|c| c.text.clone())
    };
    assert_eq!(best(0).as_deref(), Some("Brian Hayek"));
    assert_eq!(best(1).as_deref(), Some("President"));
}

#[test]
fn a_pair_the_document_prints_as_one_term_is_read_whole() {
    let rows: &[(&str, u32)] = &[("Research and development expenses 1,200", 1), ("Selling expenses 800", 1)];
    let mut q =
        question("What were research and development expenses?", "amount", &["research", "development", "expenses"]);
    q.generation.parts = vec![
        asked_part("What were research expenses?", "amount", None),
        asked_part("What were development expenses?", "amount", None),
    ];
    let document = doc(rows);
    let reads = |q: &ParsedQuestion| {
        traced(q, &document, &page_passages(&document)).1.iter().filter(|e| e.step == "read").count()
    };
    q.generation.coordination = Some("record and development".to_owned());
    assert_eq!(reads(&q), 2, "a pair the document does not print: two parts");
    q.generation.coordination = Some("research and development".to_owned());
    assert_eq!(reads(&q), 1, "a term of the document: read whole");
}

#[test]
fn a_figure_per_share_is_outside_the_statement_scale() {
    let rows: &[(&str, u32)] = &[
        ("(in millions, except per share amounts)", 1),
        ("Net earnings $ 1,419", 1),
        ("Basic earnings per share $ 6.31", 1),
    ];
    let q = question("What were basic earnings per share?", "amount", &["basic", "earnings", "share"]);
    let document = doc(rows);
    let candidates = ExtractiveGenerator::new().candidates(&q, &document, &page_passages(&document)).unwrap();
    let unit = |text: &str| {
        candidates.iter().find(|c| c.text.contains(text)).map(|c| match &c.value {
            AnswerValue::Amount(a) => a.unit.clone(),
            other => panic!("{other:?}"),
        })
    };
    assert_eq!(unit("6.31"), Some(None), "a unit price");
    assert_eq!(unit("1,419"), Some(Some("million".to_owned())), "a total in the statement's scale");
}

#[test]
fn a_labelled_list_is_no_answer_when_the_document_never_mentions_what_is_asked() {
    let rows: &[(&str, u32)] = &[
        ("AT-6 TRAINING FEEDBACK", 1),
        ("Control: Provide feedback on training results.", 1),
        ("Related Controls: IA-1, PM-9, SI-12.", 1),
    ];
    let mut q = question("What are the related controls of AT-7?", "text", &["related", "controls", "AT-7"]);
    q.answer_shape = AnswerShape::Listing;
    let document = doc(rows);
    let read = |q: &ParsedQuestion| traced(q, &document, &page_passages(&document)).0;
    let listed = read(&q);
    assert!(listed.answer.feedback.answer_found, "without the constraint the label's list answers");
    q.generation.constraints = vec!["AT-7".to_owned()];
    let refused = read(&q);
    assert!(!refused.answer.feedback.answer_found, "{:?}", refused.answer.items);
    assert!(refused.answer.feedback.warnings.iter().any(|w| w.contains("never mentions 'AT-7'")));
}

#[test]
fn the_first_value_of_a_row_of_values_is_read_under_its_header() {
    // Labels on one row, their values on the row below, the first value
    // under the first label (an invoice's date block).
    let document = doc_boxed(&[
        ("Invoice Date:", [29.6, 583.5, 90.2, 593.8]),
        ("Due Date:", [214.7, 583.5, 260.7, 593.8]),
        ("Reference:", [399.7, 583.5, 449.5, 593.8]),
        ("03/20/2023", [29.6, 568.2, 84.7, 578.4]),
        ("04/04/2023", [214.7, 568.2, 269.7, 578.4]),
        ("CUSTREF123", [399.7, 568.2, 461.8, 578.4]),
    ]);
    let q = question("What is the invoice date?", "date", &["invoice", "date"]);
    let candidates = ExtractiveGenerator::new().candidates(&q, &document, &page_passages(&document)).unwrap();
    assert!(feature_of(&candidates, "header_cov", "03/20/2023").is_some_and(|f| f > 0.5), "{candidates:?}");
    let best = top(&q, &document, &page_passages(&document)).expect("a candidate");
    assert_eq!(best.text, "03/20/2023", "{best:?}");
}

#[test]
fn a_later_part_never_restates_an_earlier_answer() {
    let rows: &[(&str, u32)] = &[
        ("John Doe", 1),
        ("linkedin.com/in/john-doe WORK EXPERIENCE ABC Company", 1),
        ("Software Engineer", 1),
        ("May 2023 - Present", 1),
    ];
    let mut q = question(
        "Who is John Doe's current employer, and what is his title there?",
        "organisation",
        &["current", "employer", "title"],
    );
    q.generation.parts = vec![
        asked_part("Who is John Doe's current employer?", "organisation", Some("current employer")),
        asked_part("What is his title there?", "text", Some("title")),
    ];
    let document = doc(rows);
    let generation = run(&q, &document, &page_passages(&document));
    let texts: Vec<String> = generation.answer.items.iter().filter_map(|i| i.text.clone()).collect();
    let employer = texts.iter().filter(|t| t.contains("ABC Company")).count();
    assert!(employer <= 1, "the employer given once, not restated as the title: {texts:?}");
}

#[test]
fn a_party_is_named_where_the_contract_defines_it() {
    let rows: &[(&str, u32)] = &[
        ("This Agreement is made between Equifax Inc., a Georgia corporation (“Equifax”), and", 1),
        ("Certegy Inc. (the \"Certegy\"). Notices go to the American Arbitration Association.", 1),
    ];
    let q = question("Who are the parties to this agreement?", "organisation", &["parties", "agreement"]);
    let document = doc(rows);
    let candidates = ExtractiveGenerator::new().candidates(&q, &document, &page_passages(&document)).unwrap();
    assert_eq!(feature_of(&candidates, "defined", "Equifax Inc."), Some(1.0));
    assert_eq!(feature_of(&candidates, "defined", "Certegy Inc."), Some(1.0));
    assert_eq!(feature_of(&candidates, "defined", "American Arbitration Association"), Some(0.0));
}

/// A page showing an image, under a text layer of `n_lines` lines
/// (none: no text layer at all).
fn image_page(page: u32, n_lines: u32) -> PageInfo {
    PageInfo {
        page,
        n_lines,
        n_chars: 30 * n_lines,
        has_text_layer: n_lines > 0,
        n_images: 1,
        n_vector_paths: 0,
        has_figure: true,
        figure_kind: Some("image".to_owned()),
        decorative_image_hashes: Vec::new(),
        width: 612.0,
        height: 792.0,
    }
}

#[test]
fn a_document_without_text_says_why_nothing_was_read() {
    let mut document = doc(&[]);
    document.pages = (1..=3).map(|page| image_page(page, 0)).collect();
    let q = question("What is the size of the market?", "amount", &["market"]);
    let mut trace: Vec<TraceEvent> = Vec::new();
    let generation = ExtractiveGenerator::new().generate(&q, &document, &[], &mut trace).expect("generate");
    assert!(!generation.answer.feedback.answer_found);
    let warnings = generation.answer.feedback.warnings.join(" ");
    assert!(warnings.contains("no text to read: 3 of its 3 page(s)"), "{warnings}");
    // A document with text and no passage found is told apart.
    let generation = ExtractiveGenerator::new().generate(&q, &doc(&[("Hello", 1)]), &[], &mut trace).expect("generate");
    assert_eq!(generation.answer.feedback.warnings, vec!["no passages to read".to_owned()]);
    // Page images under a one-line text layer (a court's filing stamp):
    // the text is in the images.
    let mut stamped = doc(&[("Case 2:18-cv-12857 Page 1 of 2", 1), ("Case 2:18-cv-12857 Page 2 of 2", 2)]);
    stamped.pages = (1..=2).map(|page| image_page(page, 1)).collect();
    let generation = ExtractiveGenerator::new().generate(&q, &stamped, &[], &mut trace).expect("generate");
    let warnings = generation.answer.feedback.warnings.join(" ");
    assert!(warnings.contains("2 of the document's 2 page(s) are images"), "{warnings}");
}

/// A cash flow statement page: a header of years, the capex row (label
/// and first figure close, as the parser keeps them together; the
/// other years apart), a dividends row and filler rows of figures.
fn cash_flow_statement() -> ParsedDocument {
    let mut rows: Vec<(String, [f32; 4])> = vec![
        ("Consolidated Statement of Cash Flows".to_owned(), [200.0, 760.0, 400.0, 769.0]),
        ("(Millions)".to_owned(), [50.0, 740.0, 100.0, 749.0]),
        ("2018".to_owned(), [400.0, 740.0, 424.0, 749.0]),
        ("2017".to_owned(), [460.0, 740.0, 484.0, 749.0]),
        ("2016".to_owned(), [520.0, 740.0, 544.0, 749.0]),
        ("Purchases of property, plant and equipment (1,577)".to_owned(), [50.0, 720.0, 432.0, 729.0]),
        ("(1,373)".to_owned(), [456.0, 720.0, 490.0, 729.0]),
        ("(1,420)".to_owned(), [516.0, 720.0, 550.0, 729.0]),
        ("Dividends paid to shareholders".to_owned(), [50.0, 708.0, 200.0, 717.0]),
        ("(3,193)".to_owned(), [396.0, 708.0, 430.0, 717.0]),
        ("(2,803)".to_owned(), [456.0, 708.0, 490.0, 717.0]),
        ("(2,678)".to_owned(), [516.0, 708.0, 550.0, 717.0]),
    ];
    for i in 0..12 {
        let y = 690.0 - 12.0 * i as f32;
        rows.push((format!("Other item {i}"), [50.0, y, 150.0, y + 9.0]));
        rows.push((format!("1,{i:03}"), [400.0, y, 424.0, y + 9.0]));
        rows.push((format!("2,{i:03}"), [460.0, y, 484.0, y + 9.0]));
    }
    let rows: Vec<(&str, [f32; 4])> = rows.iter().map(|(t, b)| (t.as_str(), *b)).collect();
    crate::test_support::doc_boxed(&rows)
}

#[test]
fn a_statement_is_read_by_row_label_and_year_column() {
    let doc = cash_flow_statement();
    let page = Passage {
        line_start: 1,
        line_end: doc.lines.len() as u32,
        page: 1,
        score: 1.0,
        anchor_line: 6,
        matched_keywords: vec![],
        pinned: true,
    };
    let mut q = expert(
        "What was the capex in FY2017?",
        "amount",
        &["capex", "2017"],
        "capital_expenditure",
        &[("purchases of property", 1.5)],
    );
    // Words of the statement's own concept: every row of it shares them.
    for text in ["dividends paid", "statement of cash flows"] {
        q.keywords.push(Keyword {
            text: text.to_owned(),
            weight: 1.0,
            source: docintel_schema::KeywordSource::ExpertDictionary,
            is_regex: false,
            semantic_group: Some("cash_flow_statement".to_owned()),
        });
    }
    // The statement feature: +1 on the capex row's 2017 cell, -1 on the
    // row's other years.
    let candidates = ExtractiveGenerator::new().candidates(&q, &doc, std::slice::from_ref(&page)).unwrap();
    assert_eq!(feature_of(&candidates, "statement", "1,373"), Some(1.0));
    assert_eq!(feature_of(&candidates, "statement", "1,577"), Some(-1.0));
    assert_eq!(feature_of(&candidates, "statement", "1,420"), Some(-1.0));
    // The question points to the cash flow statement: the 2017 column of
    // the capex row, negative as printed, in millions; the dividends row
    // (a word of the statement's own concept) is not the answer.
    q.retrieval.scope.sections = vec!["statement of cash flows | statements of cash flows".to_owned()];
    run(&q, &doc, std::slice::from_ref(&page));
    let best = top(&q, &doc, std::slice::from_ref(&page)).expect("a candidate");
    match &best.value {
        AnswerValue::Amount(a) => assert_eq!((a.value, a.unit.as_deref()), (-1373.0, Some("million")), "{best:?}"),
        other => panic!("{other:?}"),
    }
    assert!(best.span.quote.contains("(1,373)"), "{:?}", best.span);
    // No year named: the first column reads +1.
    q.keywords.retain(|k| k.text != "2017");
    let candidates = ExtractiveGenerator::new().candidates(&q, &doc, std::slice::from_ref(&page)).unwrap();
    assert_eq!(feature_of(&candidates, "statement", "1,577"), Some(1.0), "the 2018 cell");
}

#[test]
fn a_cell_of_a_joined_row_reads_its_own_column_headers() {
    // A results table set tight: the row view joins the data row's label
    // and cells into one line ("ConvS2S Ensemble 26.36 41.29") and the
    // sub-headers into another ("EN-DE EN-FR"); each cell still sits
    // under its own sub-header.
    let rows: &[(&str, [f32; 4])] = &[
        ("Model", [50.0, 740.0, 80.0, 749.0]),
        ("BLEU", [190.0, 740.0, 215.0, 749.0]),
        ("EN-DE", [165.0, 728.0, 200.0, 737.0]),
        ("EN-FR", [210.0, 728.0, 245.0, 737.0]),
        ("ConvS2S Ensemble", [50.0, 716.0, 150.0, 725.0]),
        ("26.36", [170.0, 716.0, 195.0, 725.0]),
        ("41.29", [215.0, 716.0, 240.0, 725.0]),
    ];
    let doc = doc_boxed(rows);
    let pages = page_passages(&doc);
    let q = question(
        "What EN-FR BLEU score does the ConvS2S Ensemble achieve?",
        "number",
        &["en-fr", "bleu", "convs2s", "ensemble"],
    );
    let candidates = ExtractiveGenerator::new().candidates(&q, &doc, &pages).unwrap();
    let fr = feature_of(&candidates, "header_cov", "41.29").expect("41.29 is a candidate");
    let de = feature_of(&candidates, "header_cov", "26.36").expect("26.36 is a candidate");
    assert!(fr > de, "EN-FR's cell {fr} over EN-DE's {de}");
}

#[test]
fn a_code_under_a_label_the_document_prints_apart_is_mentioned() {
    // The table's header wraps ("EPS" / "Code"): the question's "EPS Code
    // AR01" is nowhere as a phrase, but its code is, and so are the label's
    // words. A code the document lacks is still never mentioned.
    let rows: &[(&str, u32)] = &[
        ("EPS", 1),
        ("Code", 1),
        ("Geographic Market Name", 1),
        ("Little Rock", 1),
        ("AR01", 1),
        ("Northern Arkansas", 1),
        ("AR02", 1),
    ];
    let document = doc(rows);
    let mut q =
        question("What's the geographic market name for EPS Code AR01?", "text", &["geographic", "market", "AR01"]);
    let warned = |q: &ParsedQuestion, code: &str| {
        let read = traced(q, &document, &page_passages(&document)).0;
        read.answer.feedback.warnings.iter().any(|w| w.contains(&format!("never mentions 'EPS Code {code}'")))
    };
    q.generation.constraints = vec!["EPS Code AR01".to_owned()];
    assert!(!warned(&q, "AR01"));
    q.generation.constraints = vec!["EPS Code AR07".to_owned()];
    assert!(warned(&q, "AR07"));
}

/// "Current liabilities to total liabilities": two figures read, one answer,
/// their quotient as asked (three decimals), citing both figures; a quotient
/// one of whose figures is not found is no answer.
#[test]
fn a_quotient_divides_the_two_figures_it_cites() {
    let rows: &[(&str, u32)] = &[
        ("Balance sheet (in millions of US dollars)", 1),
        ("Total current liabilities $ 29,441", 1),
        ("Long-term debt $ 6,692", 1),
        ("Total liabilities $ 41,190", 1),
        ("Total equity $ 18,078", 1),
    ];
    let mut q = question(
        "What is current liabilities to total liabilities? Round your answer to three decimal places.",
        "number",
        &["current", "liabilities", "total"],
    );
    q.generation.parts = vec![
        asked_part("What is the current liabilities?", "amount", Some("current liabilities")),
        asked_part("What is the total liabilities?", "amount", Some("total liabilities")),
    ];
    q.generation.computed = Some(docintel_schema::Computed::Quotient);
    q.generation.format_constraints.insert("decimals".to_owned(), "3".to_owned());
    let document = doc(rows);
    let generation = run(&q, &document, &page_passages(&document));
    let items = &generation.answer.items;
    assert_eq!(items.len(), 1, "{:?}", generation.answer);
    assert_eq!(rendered(&items[0].value), "0.715");
    let quotes: Vec<&str> = items[0].spans.iter().map(|s| s.quote.as_str()).collect();
    assert!(quotes.iter().any(|q| q.contains("29,441")) && quotes.iter().any(|q| q.contains("41,190")), "{quotes:?}");
    // In percent, to one decimal.
    q.generation.format_constraints.insert("decimals".to_owned(), "1".to_owned());
    q.generation.format_constraints.insert("unit".to_owned(), "percent".to_owned());
    let generation = run(&q, &document, &page_passages(&document));
    assert_eq!(generation.answer.items.iter().map(|i| rendered(&i.value)).collect::<Vec<_>>(), ["71.5%"]);
    // A row that names more than the figure asked ("Total liabilities and
    // equity" for "total liabilities") is no figure of a quotient.
    let other: Vec<(&str, u32)> = rows.iter().copied().filter(|(t, _)| !t.starts_with("Total liabilities")).collect();
    let other = doc(&[other.as_slice(), &[("Total liabilities and equity $ 59,268", 1)]].concat());
    let generation = run(&q, &other, &page_passages(&other));
    assert!(generation.answer.items.is_empty(), "{:?}", generation.answer.items);
    // The denominator is nowhere: no answer, not the numerator alone.
    q.generation.parts[1] = asked_part("What is the deferred revenue?", "amount", Some("deferred revenue"));
    let generation = run(&q, &document, &page_passages(&document));
    assert!(generation.answer.items.is_empty(), "{:?}", generation.answer.items);
}

/// "The change in revenue from 2016 to 2017, in percent": each year's
/// figure read, the answer their relative change, citing both.
#[test]
fn a_growth_is_the_change_from_the_first_figure_to_the_second() {
    let rows: &[(&str, u32)] =
        &[("Revenue in 2016 was $ 1,000 million.", 1), ("Revenue in 2017 was $ 1,250 million.", 2), ("Other", 3)];
    let mut q = question(
        "What is the change in revenue from 2016 to 2017? Answer in percent, rounded to one decimal.",
        "percentage",
        &["revenue", "2016", "2017"],
    );
    let part = |text: &str, year: &str| {
        let mut p = asked_part(text, "amount", Some("revenue"));
        p.constraints = vec![year.to_owned()];
        p
    };
    q.generation.parts =
        vec![part("What is the revenue in 2016?", "2016"), part("What is the revenue in 2017?", "2017")];
    q.generation.computed = Some(docintel_schema::Computed::Growth);
    q.generation.format_constraints.insert("decimals".to_owned(), "1".to_owned());
    q.generation.format_constraints.insert("unit".to_owned(), "percent".to_owned());
    let document = doc(rows);
    let generation = run(&q, &document, &page_passages(&document));
    let items = &generation.answer.items;
    assert_eq!(items.iter().map(|i| rendered(&i.value)).collect::<Vec<_>>(), ["25%"], "{:?}", generation.answer);
    assert_eq!(items[0].spans.len(), 2);
}
