//! Values read by their labels and layout: a label left on the row or
//! above in the column, expert keywords, totals ranked, titles and
//! signature blocks, table cells, and the generation's metadata.

use super::*;

#[test]
fn label_left_on_the_same_row() {
    // QualityHosting: the label, then its value to the right on the same baseline.
    let document = doc_boxed(&[
        ("Rechnungsnr.", [53.9, 526.8, 109.9, 535.8]),
        ("30064443", [148.3, 526.8, 188.4, 535.8]),
        ("Kundennr.", [368.8, 526.8, 410.3, 535.8]),
        ("47774", [464.1, 526.8, 489.1, 535.8]),
        ("Rechnungsdatum", [53.9, 514.8, 124.4, 523.8]),
        ("7. Mai 2014", [148.3, 514.8, 195.4, 523.8]),
        ("01.05.14-31.05.14", [150.3, 372.0, 215.3, 380.0]),
    ]);
    let found = answer_of(&invoice_date_expert(), &document, &[passage(3, 7, 1)]);
    assert_eq!(found.as_ref().map(|f| f.0.as_str()), Some("2014-05-07"));
    assert_eq!(span_of(&found), (5, 6, "Rechnungsdatum 7. Mai 2014"));
    // Without the expert keyword the German label still reads as a date label.
    let q = question("What is the invoice date?", "date", &["invoice", "date"]);
    assert_eq!(answer_of(&q, &document, &[passage(1, 7, 1)]).map(|f| f.0), Some("2014-05-07".to_owned()));
}

#[test]
fn label_above_in_the_same_column() {
    // saeco: a header row, then the value row; reading order interleaves
    // the other cells, so the value is five lines after its label.
    let document = doc_boxed(&[
        ("Kopie factuur", [44.1, 566.1, 139.2, 580.1]),
        ("Klant", [44.1, 552.7, 65.3, 560.7]),
        ("Order", [143.9, 552.7, 167.3, 560.7]),
        ("Factuur datum", [314.9, 552.1, 374.3, 560.1]),
        ("Factuur", [432.1, 552.7, 463.0, 560.7]),
        ("Vervaldatum", [500.3, 552.7, 552.1, 560.7]),
        ("SCONL0303006280999", [44.1, 539.9, 129.2, 547.9]),
        ("SCONL000000444", [143.9, 539.9, 210.9, 547.9]),
        ("8-9-2022", [338.3, 539.9, 370.8, 547.9]),
        ("VF1005193039", [409.4, 539.9, 463.9, 547.9]),
        ("22-9-2022", [511.7, 539.9, 548.8, 547.9]),
    ]);
    let found = answer_of(&invoice_date_expert(), &document, &[passage(1, 11, 1)]);
    assert_eq!(found.as_ref().map(|f| f.0.as_str()), Some("2022-09-08"));
    // The span ends on the value line and its quote holds the value.
    let (_, end, quote) = span_of(&found);
    assert_eq!(end, 9);
    assert!(quote.contains("8-9-2022"), "{quote}");
    // The due date sits under its own label.
    let due = question("When is payment due?", "date", &["due", "payment"]);
    assert_eq!(answer_of(&due, &document, &[passage(1, 11, 1)]).map(|f| f.0), Some("2022-09-22".to_owned()));
    // A value outside the passages is never cited, even when its label is shown.
    let generation = run(&invoice_date_expert(), &document, &[passage(2, 6, 1)]);
    assert!(!generation.answer.feedback.answer_found);
}

/// free_fiber, page 1: an HT / TVA / TTC table with a "Total facture" row,
/// then the amount to pay.
fn free_fiber() -> ParsedDocument {
    doc_boxed(&[
        ("Date limite de paiement le 05 Juillet 2015", [40.0, 491.9, 273.5, 501.9]),
        ("29.99 € TTC", [498.0, 491.9, 563.7, 501.9]),
        ("Montant EUR HT", [296.9, 460.3, 370.9, 468.3]),
        ("Montant TVA", [401.7, 460.3, 459.8, 468.3]),
        ("Montant EUR TTC", [487.0, 460.3, 565.9, 468.3]),
        ("Abonnements, forfaits et options", [40.0, 443.9, 204.0, 453.9]),
        ("24.99", [335.0, 443.9, 363.5, 453.9]),
        ("5.00", [430.6, 443.9, 452.8, 453.9]),
        ("29.99", [530.0, 443.9, 558.5, 453.9]),
        ("Total facture", [40.0, 407.9, 111.0, 417.9]),
        ("24.99", [335.0, 407.9, 366.6, 417.9]),
        ("5.00", [430.6, 407.9, 455.2, 417.9]),
        ("29.99", [530.0, 407.9, 561.6, 417.9]),
        ("TVA 20% payée sur les encaissements", [40.0, 393.9, 231.7, 403.9]),
        ("5.00", [430.6, 393.9, 452.8, 403.9]),
        ("Somme à payer", [40.0, 343.3, 103.5, 351.3]),
        ("29.99 € TTC", [503.0, 343.3, 553.6, 351.3]),
    ])
}

#[test]
fn a_person_named_by_surname_is_answered_in_full() {
    let q = question("Who is the chief financial officer?", "person", &["chief", "financial", "officer"]);
    let document = doc(&[
        ("Executive officers: Andrew Campion, Heidi O'Neill, Monique Matheson", 1),
        ("Mr. Campion, Chief Financial Officer, joined the company in 2007.", 1),
    ]);
    let generation = run(&q, &document, &page_passages(&document));
    let got: Vec<String> = generation.answer.items.iter().map(|i| rendered(&i.value)).collect();
    assert_eq!(got, ["Andrew Campion"], "{:?}", generation.answer.feedback.warnings);
}

#[test]
fn a_month_given_to_the_day_elsewhere_is_that_day() {
    let q = question("What is the date of this agreement?", "date", &["date", "agreement"]);
    let rows = &[
        ("This Agreement is dated as of November 2018.", 1),
        ("Signed by both parties", 1),
        ("Date: November 20, 2018", 1),
    ];
    check(rows, &q, Some("2018-11-20 (November 20, 2018)"));
}

#[test]
fn a_persons_email_address_holds_their_name() {
    // An author block: names, then the addresses, the asked one last.
    let mut q = question("What is Felix Leeb's e-mail address?", "email", &["e-mail", "address", "felix", "leeb"]);
    q.generation.constraints = vec!["Felix Leeb".to_owned()];
    let rows = &[
        ("Zhijing Jin, Felix Leeb, Yuen Chen", 1),
        ("jinzhi@ethz.ch", 1),
        ("chenyuen0103@berkeley.edu", 1),
        ("fleeb@tue.mpg.de", 1),
    ];
    check(rows, &q, Some("fleeb@tue.mpg.de"));
    // Where no address carries a holder's name, nothing is ruled out.
    let rows = &[("Felix Leeb, Zhijing Jin", 1), ("Contact: info@example.org", 1)];
    check(rows, &q, Some("info@example.org"));
}

#[test]
fn taxed_beats_untaxed_for_a_total() {
    let document = free_fiber();
    // The whole table shown: the TTC cell of the total row.
    let found = answer_of(&total_expert(), &document, &[passage(3, 13, 1)]);
    assert_eq!(found.as_ref().map(|f| f.0.as_str()), Some("29.99 EUR"));
    // Only the total row shown (its column headers are not): the HT and
    // TVA cells are still known by their headers and do not settle a
    // sequential read, the amount to pay does.
    let mut q = total_expert();
    q.chunk_strategy = ChunkStrategy::Sequential;
    let generation = run(&q, &document, &[passage(10, 12, 1), passage(14, 17, 1)]);
    assert_eq!(generation.passages_shown.len(), 2);
    match &generation.answer.items[0].value {
        AnswerValue::Amount(a) => assert_eq!(a.value, 29.99),
        other => panic!("{other:?}"),
    }
    // Asked for the untaxed amount, the HT column answers.
    let ht = question("What is the amount excluding tax (HT)?", "amount", &["ht"]);
    assert_eq!(answer_of(&ht, &document, &[passage(3, 13, 1)]).map(|f| f.0), Some("24.99 EUR".to_owned()));
    // Lines without layout: the TTC line beats the HT line.
    let rows = &[("Total HT 24,99 €", 1), ("TVA 5,00 €", 1), ("Total TTC 29,99 €", 1)];
    check(rows, &total(), Some("29.99 EUR"));
    check(&[("Montant EUR HT", 1), ("24.99", 1), ("Montant EUR TTC", 1), ("29.99", 1)], &total(), Some("29.99 EUR"));
}

#[test]
fn grand_total_beats_a_total_row() {
    // Flipkart: the table's "Total" row (qty, price, tax, total), then
    // "Grand Total" with its value on the next line to the right.
    let document = doc_boxed(&[
        ("Qty Price", [344.7, 646.8, 399.1, 655.8]),
        ("Tax(%) Tax", [435.3, 646.8, 501.3, 655.8]),
        ("Total", [533.7, 646.8, 555.2, 655.8]),
        ("1 278.61 14.50%", [354.7, 622.8, 464.8, 631.8]),
        ("40.39 319.00", [493.3, 622.8, 569.7, 631.8]),
        ("Price is inclusive of Promotional Discount of Rs -40.00,", [114.6, 600.0, 271.9, 607.0]),
        ("Total 1 278.61", [304.6, 560.9, 413.6, 573.3]),
        ("40.39 319.00", [485.8, 560.9, 569.7, 572.9]),
        ("Grand Total", [385.6, 518.4, 464.8, 533.4]),
        ("319.00", [523.8, 516.5, 569.7, 531.5]),
    ]);
    let found = answer_of(&total(), &document, &[passage(6, 10, 1)]);
    assert_eq!(found.as_ref().map(|f| f.0.as_str()), Some("319 INR"));
    assert_eq!(span_of(&found), (9, 10, "Grand Total 319.00"));
    let found = answer_of(&total_expert(), &document, &page_passages(&document));
    assert_eq!(span_of(&found).0, 9);
}

#[test]
fn expert_keywords_find_foreign_labels() {
    // coolblue: Dutch labels left of their values; only expert keywords match.
    let document = doc_boxed(&[
        ("Factuurdatum:", [45.0, 647.8, 100.6, 655.8]),
        ("19 april 2014", [104.3, 647.8, 152.6, 655.8]),
        ("Ordernummer:", [45.0, 633.6, 102.4, 641.6]),
        ("12572103", [105.0, 633.6, 141.4, 641.6]),
        ("Orderdatum:", [45.0, 619.3, 94.4, 627.3]),
        ("18 april 2014", [97.5, 619.3, 145.8, 627.3]),
        ("Exclusief BTW", [62.3, 253.0, 114.1, 261.0]),
        ("€ 593,36", [147.7, 253.0, 179.2, 261.0]),
        ("Subtotaal", [426.4, 253.0, 462.4, 261.0]),
        ("€ 717,97", [518.3, 253.0, 549.8, 261.0]),
        ("BTW 21%", [80.7, 241.7, 115.6, 249.7]),
        ("€ 124,61", [147.7, 241.7, 179.2, 249.7]),
        ("Totaal", [437.0, 231.2, 462.1, 239.2]),
        ("€ 717,97", [518.2, 231.2, 549.8, 239.2]),
    ]);
    let found = answer_of(&invoice_date_expert(), &document, &page_passages(&document));
    assert_eq!(found.as_ref().map(|f| f.0.as_str()), Some("2014-04-19"));
    assert_eq!(span_of(&found), (1, 2, "Factuurdatum: 19 april 2014"));
    let generation = run(&total_expert(), &document, &[passage(7, 14, 1)]);
    let item = &generation.answer.items[0];
    assert_eq!(item.value, AnswerValue::Amount(Amount { value: 717.97, currency: Some("EUR".into()), unit: None }));
    assert_eq!((item.spans[0].line_start, item.spans[0].line_end), (13, 14));
}

#[test]
fn text_label_value_by_layout() {
    // AWS: "Account number:" with its value below, but another column's
    // line comes first in reading order.
    let document = doc_boxed(&[
        ("Account number:", [36.0, 689.1, 95.7, 697.1]),
        ("Invoice Summary", [257.0, 681.5, 344.8, 692.5]),
        ("296664039561", [36.0, 671.0, 142.8, 687.0]),
        ("Invoice Number:", [257.0, 666.5, 313.3, 674.5]),
        ("42183017", [535.4, 666.5, 571.0, 674.5]),
    ]);
    let q = question("What is the account number?", "identifier", &["account number"]);
    let found = answer_of(&q, &document, &page_passages(&document));
    assert_eq!(found.as_ref().map(|f| f.0.as_str()), Some("296664039561"));
    assert_eq!(span_of(&found), (1, 3, "296664039561"));
    let q = question("What is the invoice number?", "identifier", &["invoice number"]);
    let found = answer_of(&q, &document, &page_passages(&document));
    assert_eq!(found.as_ref().map(|f| f.0.as_str()), Some("42183017"));
    assert_eq!(span_of(&found), (4, 5, "Invoice Number: 42183017"));
}

#[test]
fn bad_passages_are_an_error() {
    let document = doc(&[("a", 1)]);
    let result = ExtractiveGenerator::new().generate(&total(), &document, &[passage(1, 9, 1)], &mut Vec::new());
    assert!(matches!(result, Err(GenerateError::PassageOutOfDocument { index: 0, .. })));
}

#[test]
fn generation_metadata() {
    let document = doc(AWS);
    let generation = run(&total(), &document, &page_passages(&document));
    assert_eq!(ExtractiveGenerator::new().name(), "extractive/0.2");
    assert_eq!(generation.template_version, "extractive/0.2");
    assert_eq!(generation.model, None);
    assert_eq!(generation.usage, Usage::default());
    assert_eq!(generation.answer.extraction_method, ExtractionMethod::Extractive);
    let confidence = generation.answer.feedback.confidence;
    assert!((0.5..=1.0).contains(&confidence), "{confidence}");
}

/// The candidate whose text is `text`.
fn candidate<'c>(candidates: &'c [ScoredCandidate], text: &str) -> &'c ScoredCandidate {
    candidates.iter().find(|c| c.text == text).unwrap_or_else(|| panic!("no candidate {text}"))
}

fn officer_question() -> ParsedQuestion {
    let mut q = question(
        "What is the name of Nike's chief executive officer?",
        "person",
        &["chief", "executive", "officer", "name"],
    );
    q.generation.answer_focus = Some("chief executive officer".to_owned());
    q
}

#[test]
fn the_title_asked_is_on_the_holders_own_row() {
    // Both rows carry "chief", "executive" and "officer"; only one
    // prints the title asked. The other officer's row, read after the
    // CEO's, is no evidence for him.
    let document = doc(&[
        ("Mark G. Parker, Chairman, President and Chief Executive Officer — Mr. Parker, 63, was appointed", 1),
        ("President of the NIKE Brand in 2001.", 1),
        ("Andrew Campion, Executive Vice President and Chief Financial Officer — Mr. Campion, 47, joined", 1),
    ]);
    let all = ExtractiveGenerator::new().candidates(&officer_question(), &document, &page_passages(&document)).unwrap();
    assert!(candidate(&all, "Mark G. Parker").missing.is_empty());
    assert_eq!(candidate(&all, "Andrew Campion").missing, ["chief executive officer"]);
}

/// A person question whose title joins two titles by "and".
fn coo_question() -> ParsedQuestion {
    let mut q = question(
        "Who served as Activision Blizzard's President and Chief Operating Officer?",
        "person",
        &["president", "chief", "operating", "officer"],
    );
    q.generation.answer_focus = Some("President and Chief Operating Officer".to_owned());
    q
}

#[test]
fn a_title_joined_by_and_needs_both_titles() {
    // "President" alone (another officer's second title) is not "President
    // and Chief Operating Officer".
    let q = coo_question();
    let document = doc(&[
        ("Collister Johnson, President and Chief Operating Officer of Activision Blizzard", 1),
        ("He joined the company in 2008.", 1),
        ("Dennis Durkin, Chief Financial Officer and President of Emerging Businesses", 1),
    ]);
    let all = ExtractiveGenerator::new().candidates(&q, &document, &page_passages(&document)).unwrap();
    assert!(candidate(&all, "Collister Johnson").missing.is_empty());
    assert_eq!(candidate(&all, "Dennis Durkin").missing, ["president and chief operating officer"]);
}

#[test]
fn a_title_in_the_sentence_before_a_name_is_not_that_persons() {
    let q = coo_question();
    let document = doc(&[
        ("He served as our President from July 2008 until June 2017, when Mr. Johnson began serving as", 1),
        ("our President and Chief Operating Officer. Mr. Kotick is also a member of the board of directors", 1),
        ("of The Coca-Cola Company, a multinational beverage corporation.", 1),
    ]);
    let all = ExtractiveGenerator::new().candidates(&q, &document, &page_passages(&document)).unwrap();
    assert_eq!(candidate(&all, "Kotick").missing, ["president and chief operating officer"]);
    assert!(candidate(&all, "Johnson").missing.is_empty(), "his sentence runs on to the title");
}

#[test]
fn a_signature_block_reads_by_column() {
    // Two names side by side, each with its title under it: reading
    // order puts the second name right before the first title.
    let document = doc_boxed(&[
        ("Mark G. Parker", [135.0, 466.0, 188.0, 473.0]),
        ("Andrew Campion", [419.0, 466.0, 480.0, 473.0]),
        ("Chairman, President and Chief Executive Officer", [82.0, 455.0, 241.0, 462.0]),
        ("Executive Vice President and Chief Financial Officer", [364.0, 455.0, 535.0, 462.0]),
    ]);
    let all = ExtractiveGenerator::new().candidates(&officer_question(), &document, &page_passages(&document)).unwrap();
    assert!(candidate(&all, "Mark G. Parker").missing.is_empty(), "its title is under it");
    assert_eq!(candidate(&all, "Andrew Campion").missing, ["chief executive officer"]);
}

#[test]
fn a_table_cell_is_named_by_its_column_header_and_its_row_label() {
    let document = doc_boxed(&[
        ("Article 2.2 — Plafonds de garantie par formule", [62.0, 555.0, 326.0, 567.0]),
        ("Garantie", [102.0, 533.0, 138.0, 542.0]),
        ("Tiers Simple", [207.0, 533.0, 260.0, 542.0]),
        ("Tiers+", [305.0, 533.0, 332.0, 542.0]),
        ("Intermédiaire", [382.0, 533.0, 439.0, 542.0]),
        ("Incendie / Explosion", [55.0, 511.0, 131.0, 520.0]),
        ("—", [197.0, 511.0, 205.0, 520.0]),
        ("Valeur Argus", [282.0, 511.0, 331.0, 520.0]),
        ("Valeur Argus", [367.0, 511.0, 416.0, 520.0]),
        ("Bris de glace", [55.0, 489.0, 104.0, 498.0]),
        ("—", [197.0, 489.0, 205.0, 498.0]),
        ("2 000 €", [282.0, 489.0, 310.0, 498.0]),
        ("1 500 €", [367.0, 489.0, 395.0, 498.0]),
    ]);
    let q = question(
        "Quel est le plafond bris de glace en formule Tiers+ ?",
        "amount",
        &["plafond", "bris", "glace", "formule", "tiers"],
    );
    let all = ExtractiveGenerator::new().candidates(&q, &document, &page_passages(&document)).unwrap();
    let both = |text: &str| feature_of(&all, "cell_both", text).unwrap_or_default();
    let header = |text: &str| feature_of(&all, "header_cov", text).unwrap_or_default();
    assert!(header("2 000 €") > 0.0 && both("2 000 €") > 0.0, "under 'Tiers+', on the 'Bris de glace' row");
    assert_eq!(header("1 500 €"), 0.0, "under 'Intermédiaire'");
    assert!(feature_of(&all, "cell_cov", "2 000 €") > feature_of(&all, "cell_cov", "1 500 €"));
}

#[test]
fn a_figure_the_question_writes_is_no_candidate() {
    let document = doc(&[("Table 2: BLEU scores. GNMT + RL reaches 24.6 on EN-DE.", 1)]);
    let q = question("What EN-DE BLEU does GNMT + RL reach according to Table 2?", "number", &["bleu", "gnmt"]);
    let all = ExtractiveGenerator::new().candidates(&q, &document, &page_passages(&document)).unwrap();
    assert_eq!(feature_of(&all, "in_question", "2"), None, "'Table 2' names what is asked");
    assert_eq!(feature_of(&all, "in_question", "24.6"), Some(0.0));
}
