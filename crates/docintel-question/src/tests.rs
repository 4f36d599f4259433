//! End-to-end tests of [`RuleParser`]: question in, `ParsedQuestion` out.

use docintel_schema::{
    AnswerContext, AnswerShape, DecompositionPattern, DocumentProfile, KeywordSource, ParsedQuestion,
};

use super::*;
use crate::test_support::{docx_profile, pdf_profile};

/// One parser for every test: building one compiles every regex.
static PARSER: std::sync::LazyLock<RuleParser> = std::sync::LazyLock::new(RuleParser::new);

fn parse(question: &str) -> ParsedQuestion {
    parse_with(question, &pdf_profile())
}

fn parse_with(question: &str, profile: &DocumentProfile) -> ParsedQuestion {
    PARSER.parse(question, profile).unwrap_or_else(|e| panic!("{question}: {e}"))
}

/// The keywords read from the question itself (expert-dictionary expansions
/// are checked separately).
fn words(parsed: &ParsedQuestion) -> Vec<&str> {
    parsed
        .keywords
        .iter()
        .filter(|k| k.source != docintel_schema::KeywordSource::ExpertDictionary)
        .map(|k| k.text.as_str())
        .collect()
}

/// What a test expects of a parse; `None` fields are not checked.
#[derive(Default)]
struct Expect<'a> {
    shape: Option<AnswerShape>,
    answer_type: Option<&'a str>,
    keywords: Option<&'a [&'a str]>,
    has_keywords: &'a [&'a str],
    lacks_keywords: &'a [&'a str],
    pages: Option<&'a [u32]>,
    pattern: Option<DecompositionPattern>,
    sub_questions: Option<&'a [&'a str]>,
    anchors: Option<&'a [&'a str]>,
    context: Option<AnswerContext>,
    language: Option<&'a str>,
}

fn check(question: &str, expect: Expect<'_>) {
    let parsed = parse(question);
    let got = words(&parsed);
    if let Some(shape) = expect.shape {
        assert_eq!(parsed.answer_shape, shape, "shape of {question}");
    }
    if let Some(answer_type) = expect.answer_type {
        assert_eq!(parsed.answer_type, answer_type, "type of {question}");
    }
    if let Some(keywords) = expect.keywords {
        assert_eq!(got, keywords, "keywords of {question}");
    }
    for word in expect.has_keywords {
        assert!(got.contains(word), "{question}: {word} missing from {got:?}");
    }
    for word in expect.lacks_keywords {
        assert!(!got.contains(word), "{question}: {word} should not be in {got:?}");
    }
    if let Some(pages) = expect.pages {
        assert_eq!(parsed.structural_hints.pages_hint, pages, "pages of {question}");
        assert_eq!(parsed.retrieval.pages, pages, "retrieval pages of {question}");
        assert_eq!(parsed.structural_hints.detection_context.is_some(), !pages.is_empty(), "{question}");
    }
    if let Some(pattern) = expect.pattern {
        assert_eq!(parsed.decomposition.pattern, pattern, "decomposition of {question}");
    }
    if let Some(sub_questions) = expect.sub_questions {
        assert_eq!(parsed.decomposition.sub_questions, sub_questions, "sub-questions of {question}");
    }
    if let Some(anchors) = expect.anchors {
        assert_eq!(parsed.retrieval.anchor_keywords, anchors, "anchors of {question}");
        let anchor_keywords: Vec<&str> =
            parsed.keywords.iter().filter(|k| k.source == KeywordSource::Anchor).map(|k| k.text.as_str()).collect();
        assert_eq!(anchor_keywords, anchors, "anchor keywords of {question}");
    }
    if let Some(context) = expect.context {
        assert_eq!(parsed.structural_hints.answer_context, context, "context of {question}");
    }
    if let Some(language) = expect.language {
        assert_eq!(parsed.language.as_deref(), Some(language), "language of {question}");
    }
}

#[test]
fn total_amount() {
    check(
        "What is the total amount?",
        Expect {
            shape: Some(AnswerShape::Single),
            answer_type: Some("amount"),
            keywords: Some(&["total", "amount"]),
            lacks_keywords: &["what", "is", "the"],
            pattern: Some(DecompositionPattern::Single),
            context: Some(AnswerContext::Line),
            language: Some("en"),
            ..Expect::default()
        },
    );
}

#[test]
fn dates() {
    let date =
        |q| check(q, Expect { shape: Some(AnswerShape::Single), answer_type: Some("date"), ..Expect::default() });
    date("When was the invoice issued?");
    date("What is the invoice date?");
    date("What is the date of the invoice?");
    check("When was the invoice issued?", Expect { keywords: Some(&["invoice", "issued"]), ..Expect::default() });
}

#[test]
fn boolean() {
    check(
        "Is water damage covered?",
        Expect {
            shape: Some(AnswerShape::Single),
            answer_type: Some("boolean"),
            keywords: Some(&["water", "damage", "covered"]),
            ..Expect::default()
        },
    );
}

#[test]
fn listing() {
    check(
        "List the annual premiums",
        Expect {
            shape: Some(AnswerShape::Listing),
            answer_type: Some("amount"),
            keywords: Some(&["annual", "premiums"]),
            ..Expect::default()
        },
    );
    assert_eq!(parse("List the annual premiums").chunk_strategy, docintel_schema::ChunkStrategy::Combined);
    assert_eq!(parse("What is the total amount?").chunk_strategy, docintel_schema::ChunkStrategy::Sequential);
}

#[test]
fn pages_every_form() {
    let cases: &[(&str, &[u32])] = &[
        ("What is the total on page 3?", &[3]),
        ("Summarize pages 5 to 7", &[5, 6, 7]),
        ("Summarize pages 5-7", &[5, 6, 7]),
        ("What do pp. 5–7 say about theft?", &[5, 6, 7]),
        ("Compare page 2 and page 7", &[2, 7]),
        ("Compare pages 2 and 7", &[2, 7]),
        ("What is stated on p. 4?", &[4]),
        ("Quel est le montant à la page 3 ?", &[3]),
        ("¿Cuál es el importe en la página 3?", &[3]),
        ("Wie hoch ist der Betrag auf Seite 3?", &[3]),
        ("Какая сумма на странице 2?", &[2]),
        ("Что написано на страница 2?", &[2]),
        ("Какая сумма на стр. 2?", &[2]),
        ("What is the total amount?", &[]),
    ];
    for (question, pages) in cases {
        check(
            question,
            Expect { pages: Some(pages), lacks_keywords: &["page", "pages", "3", "seite"], ..Expect::default() },
        );
    }
}

#[test]
fn pages_beyond_the_document_are_dropped() {
    let parsed = parse("What is on pages 39 to 42?");
    assert_eq!(parsed.structural_hints.pages_hint, [39, 40]);
    assert!(parsed.parsing_notes.iter().any(|n| n.contains("41, 42 beyond the document's 40 pages")));
    assert_eq!(parsed.structural_hints.answer_context, AnswerContext::Page);
}

#[test]
fn noun_pairs_stay_whole() {
    let parsed = parse("What are the exclusions and limits?");
    assert_ne!(parsed.decomposition.pattern, DecompositionPattern::Independent);
    assert!(parsed.decomposition.sub_questions.is_empty());
    assert!(!parsed.activations.decompose_compound);
    assert_eq!(parsed.answer_shape, AnswerShape::Listing);
    assert_eq!(words(&parsed), ["exclusions", "limits"]);
    assert!(parsed.parsing_notes.iter().any(|n| n.contains("kept whole")));
}

#[test]
fn compound_question_splits() {
    check(
        "What is the premium and when is it due?",
        Expect {
            pattern: Some(DecompositionPattern::Independent),
            sub_questions: Some(&["What is the premium?", "When is it due?"]),
            answer_type: Some("amount"),
            ..Expect::default()
        },
    );
    let parsed = parse("What is the premium and when is it due?");
    assert!(parsed.activations.decompose_compound);
    assert!(parsed.parsing_notes.iter().any(|n| n.contains("amount, date")));
}

#[test]
fn currency_goes_to_generation_only() {
    let parsed = parse("What is the total in EUR?");
    assert_eq!(parsed.generation.format_constraints.get("currency").map(String::as_str), Some("EUR"));
    assert_eq!(parsed.retrieval.main_query, "What is the total?");
    assert!(!parsed.retrieval.main_query.contains("EUR"));
    assert_eq!(words(&parsed), ["total"]);
    assert_eq!(parsed.answer_type, "amount");
    assert_eq!(parsed.generation.original_question, "What is the total in EUR?");
}

#[test]
fn a_document_part_named_as_where_to_look_is_no_constraint() {
    let parsed = parse("What was the largest liability in American Express's Balance Sheet in 2022?");
    assert!(
        parsed.generation.constraints.iter().any(|c| c == "American Express"),
        "{:?}",
        parsed.generation.constraints
    );
    assert!(!parsed.generation.constraints.iter().any(|c| c == "Balance Sheet"), "{:?}", parsed.generation.constraints);
}

#[test]
fn a_period_in_the_asked_phrase_is_a_constraint_not_the_focus() {
    let parsed = parse("What is the FY2018 capital expenditure amount for 3M?");
    assert_eq!(parsed.generation.answer_focus.as_deref(), Some("capital expenditure amount"));
    assert!(parsed.generation.constraints.iter().any(|c| c == "2018"), "{:?}", parsed.generation.constraints);
}

#[test]
fn an_answer_asked_in_percent_is_a_percentage() {
    let parsed = parse("What is the FY2019 - FY2020 total revenue growth rate? Answer in units of percents.");
    assert_eq!(parsed.generation.format_constraints.get("unit").map(String::as_str), Some("percent"));
    assert_eq!(parsed.answer_type, "percentage");
    assert_eq!(parse("What is the FY2020 total revenue?").answer_type, "amount");
    // A measure head asks for a share of what follows it, not for that thing.
    for question in [
        "What portion of Verizon's employees were represented by unions?",
        "What share of employees work in the U.S.?",
        "What proportion of the workforce is remote?",
    ] {
        assert_eq!(parse(question).answer_type, "percentage", "{question}");
    }
}

#[test]
fn other_format_constraints() {
    let parsed = parse("When was the contract signed? Answer in YYYY-MM-DD.");
    assert_eq!(parsed.generation.format_constraints["date_format"], "YYYY-MM-DD");
    assert!(!words(&parsed).contains(&"yyyy-mm-dd"));
    let parsed = parse("What was the revenue in 2019, in thousands of dollars?");
    assert_eq!(parsed.generation.format_constraints["unit"], "thousands");
    assert_eq!(parsed.generation.format_constraints["currency"], "USD");
    assert_eq!(parsed.retrieval.main_query, "What was the revenue in 2019?");
    assert_eq!(words(&parsed), ["revenue", "2019"]);
    assert_eq!(parsed.scope_filters.period.as_deref(), Some("2019"));
    assert_eq!(parsed.retrieval.scope.period.as_deref(), Some("2019"));
}

#[test]
fn anchors() {
    check(
        "What does AC-2 require?",
        Expect { anchors: Some(&["AC-2"]), keywords: Some(&["AC-2", "require"]), ..Expect::default() },
    );
    check(
        "Is IA-5(1) implemented?",
        Expect { anchors: Some(&["IA-5(1)"]), answer_type: Some("boolean"), ..Expect::default() },
    );
    check(
        "What does Article 18 say about retention?",
        Expect { anchors: Some(&["Article 18"]), keywords: Some(&["Article 18", "retention"]), ..Expect::default() },
    );
    check("What does §4.2 say?", Expect { anchors: Some(&["§4.2"]), ..Expect::default() });
    check(
        "Which invoice totals 1,939.00 EUR, dated 2014-08-03?",
        Expect { anchors: Some(&["1,939.00 EUR", "2014-08-03"]), ..Expect::default() },
    );
    let parsed = parse("What does Article 18 say?");
    assert_eq!(parsed.keywords[0].weight, ANCHOR_WEIGHT);
    assert!(!parsed.keywords[0].is_regex);
    assert_eq!(parsed.structural_hints.toc_section_hint.as_deref(), Some("Article 18"));
    assert_eq!(parsed.retrieval.section_hint.as_deref(), Some("Article 18"));
}

#[test]
fn distractors() {
    let parsed = parse("What is the limit, not the deductible?");
    assert_eq!(parsed.distractors, ["deductible"]);
    assert_eq!(words(&parsed), ["limit"]);
    assert_eq!(parsed.disambiguation.as_deref(), Some("The question asks for the limit, not the deductible."));
    assert_eq!(parsed.generation.disambiguation, parsed.disambiguation);
    assert_eq!(parsed.generation.must_distinguish.len(), 1);
    assert_eq!(parsed.generation.must_distinguish[0].wanted, "limit");
    assert_eq!(parsed.generation.must_distinguish[0].not_this, "deductible");
}

#[test]
fn answer_contexts() {
    let context = |q, c| check(q, Expect { context: Some(c), ..Expect::default() });
    context("What is on page 3?", AnswerContext::Page);
    context("Why was the claim rejected?", AnswerContext::Paragraph);
    context("What does the section on exclusions say about floods?", AnswerContext::Section);
    context("Summarize the policy", AnswerContext::Document);
    context("Summarize section 4.2", AnswerContext::Section);
    context("What is the total on page 3?", AnswerContext::Line);
    let parsed = parse("What does the section on exclusions say about floods?");
    assert_eq!(parsed.structural_hints.toc_section_hint.as_deref(), Some("exclusions"));
    assert!(!parsed.structural_hints.needs_summary);
    assert!(parse("Give me an overview of the contract").structural_hints.needs_summary);
}

#[test]
fn multilingual_keywords() {
    check(
        "Quel est le montant total de la facture ?",
        Expect {
            keywords: Some(&["montant", "total", "facture"]),
            answer_type: Some("amount"),
            language: Some("fr"),
            ..Expect::default()
        },
    );
    check(
        "¿Cuál es la fecha de la factura?",
        Expect {
            keywords: Some(&["fecha", "factura"]),
            answer_type: Some("date"),
            language: Some("es"),
            ..Expect::default()
        },
    );
    check(
        "Wann wurde die Rechnung ausgestellt?",
        Expect {
            keywords: Some(&["rechnung", "ausgestellt"]),
            answer_type: Some("date"),
            language: Some("de"),
            ..Expect::default()
        },
    );
    check(
        "Какова сумма счёта?",
        Expect {
            keywords: Some(&["сумма", "счёта"]),
            answer_type: Some("amount"),
            language: Some("ru"),
            ..Expect::default()
        },
    );
    check(
        "L'assurance couvre-t-elle le vol ?",
        Expect { keywords: Some(&["assurance", "couvre", "vol"]), answer_type: Some("boolean"), ..Expect::default() },
    );
}

#[test]
fn whitespace_and_errors() {
    let parsed = parse("  What   is\tthe total \n amount? ");
    assert_eq!(parsed.corrected_question, "What is the total amount?");
    assert_eq!(parsed.original_question, "  What   is\tthe total \n amount? ");
    let parser = RuleParser::new();
    assert_eq!(parser.parse("  \n ", &pdf_profile()), Err(QuestionError::Empty));
    assert_eq!(parser.parse("???", &pdf_profile()), Err(QuestionError::Empty));
    let long = "a ".repeat(MAX_QUESTION_CHARS);
    assert!(matches!(parser.parse(&long, &pdf_profile()), Err(QuestionError::TooLong { .. })));
    assert_eq!(parser.name(), "rules/0.1");
    assert_eq!(parsed.parser, "rules/0.1");
    // An amount: the answer type's model, not the project fallback.
    assert_eq!(parsed.suggested_model, "gpt-4.1-nano");
    assert_eq!(parse("Why was the claim rejected?").suggested_model, DEFAULT_MODEL);
}

#[test]
fn nothing_to_look_for() {
    let parsed = parse("What is it?");
    assert!(parsed.keywords.is_empty());
    assert!(parsed.suggested_clarification.is_some());
    assert!(parsed.ambiguity_reason.is_some());
    assert!(parse("What is the total?").suggested_clarification.is_none());
}

#[test]
fn docx_profile_clears_pages() {
    let parsed = parse_with("What is on page 3?", &docx_profile());
    assert_eq!(parsed.structural_hints.pages_hint, [3]);
    assert!(parsed.retrieval.pages.is_empty());
    assert!(!parsed.activations.extract_page_numbers);
    assert!(!parsed.activations.use_toc_navigation);
    assert!(parsed.parsing_notes.iter().any(|n| n == "no table of contents: TOC navigation off"));
}

#[test]
fn serde_round_trip() {
    let parsed = parse("What is the limit on page 3, not the deductible, in EUR? And when is it due?");
    let json = serde_json::to_string(&parsed).unwrap();
    let back: ParsedQuestion = serde_json::from_str(&json).unwrap();
    assert_eq!(back, parsed);
}

#[test]
fn snapshots() {
    for (name, question) in [
        ("total_in_eur_page", "What is the total amount in EUR on page 3?"),
        ("compound_premium_due", "What is the premium and when is it due?"),
        ("listing_article_distractor", "List the exclusions in Article 18, not the limits"),
    ] {
        insta::assert_json_snapshot!(name, parse(question));
    }
}

#[test]
fn shape_and_format_words_are_not_keywords() {
    let parsed = parse("Compare the premiums for 2019-2021 as a table");
    assert_eq!(parsed.answer_shape, AnswerShape::Table);
    assert_eq!(words(&parsed), ["premiums", "2019-2021"]);
    assert_eq!(parsed.scope_filters.period.as_deref(), Some("2019-2021"));
    let parsed = parse("When does the policy expire? Give the date in ISO format.");
    assert_eq!(parsed.decomposition.pattern, DecompositionPattern::Single);
    assert_eq!(parsed.generation.format_constraints["date_format"], "YYYY-MM-DD");
    assert_eq!(parsed.retrieval.main_query, "When does the policy expire? Give the date.");
    assert_eq!(parsed.answer_type, "date");
}

#[test]
fn layout_and_explanations() {
    let parsed = parse("What is written in the footnote on p. 12?");
    assert_eq!(parsed.structural_hints.layout_hint.as_deref(), Some("footnote"));
    assert_eq!(parsed.structural_hints.pages_hint, [12]);
    assert_eq!(parsed.structural_hints.detection_context.as_deref(), Some("p. 12; the footnote"));
    let parsed = parse("How is the premium calculated?");
    assert_eq!(
        (parsed.answer_type.as_str(), parsed.structural_hints.answer_context),
        ("text", AnswerContext::Paragraph)
    );
}

#[test]
fn expert_dictionary_expands_concepts_and_records_them() {
    let parsed = parse("What is the total amount?");
    assert_eq!(parsed.matched_concept.as_deref(), Some("total_amount"));
    let expanded: Vec<&str> = parsed
        .keywords
        .iter()
        .filter(|k| k.source == docintel_schema::KeywordSource::ExpertDictionary)
        .map(|k| k.text.as_str())
        .collect();
    assert!(expanded.contains(&"totaal") && expanded.contains(&"montant total"), "{expanded:?}");
    assert!(
        parsed
            .keywords
            .iter()
            .filter(|k| k.source == docintel_schema::KeywordSource::ExpertDictionary)
            .all(|k| k.semantic_group.as_deref() == Some("total_amount"))
    );
    assert!(parsed.parsing_notes.iter().any(|n| n.contains("expert dictionary")), "{:?}", parsed.parsing_notes);
    // Format phrases never trigger a concept: "in EUR" is not a keyword source.
    let parsed = parse("What is the premium in EUR?");
    assert!(parsed.keywords.iter().all(|k| k.text != "eur"));
}

/// What a worked example of the broker corpus expects; each closure checks
/// one column family of the record.
struct Worked {
    question: &'static str,
    profile: fn() -> DocumentProfile,
    checks: fn(&ParsedQuestion),
}

#[test]
fn broker_corpus_worked_examples() {
    let cases = [
        // 1. Point lookup with expert keywords: French, dictionary expansion,
        //    the amount confirmation regex as a keyword.
        Worked {
            question: "Quel est le montant de la prime annuelle ?",
            profile: pdf_profile,
            checks: |p| {
                assert_eq!((p.answer_shape, p.answer_type.as_str()), (AnswerShape::Single, "amount"));
                assert_eq!(p.language.as_deref(), Some("fr"));
                assert_eq!(words(p), ["montant", "prime", "annuelle"]);
                let expanded: Vec<&str> = p
                    .keywords
                    .iter()
                    .filter(|k| k.source == KeywordSource::ExpertDictionary && !k.is_regex)
                    .map(|k| k.text.as_str())
                    .collect();
                assert!(expanded.contains(&"premium") && expanded.contains(&"cotisation"), "{expanded:?}");
                let regexes: Vec<_> = p.keywords.iter().filter(|k| k.is_regex).collect();
                assert_eq!(regexes.len(), 1);
                assert_eq!(regexes[0].source, KeywordSource::ExpertDictionary);
                assert_eq!(regexes[0].semantic_group.as_deref(), Some("premium"));
                let regex = regex::Regex::new(&format!("(?i){}", regexes[0].text)).unwrap();
                assert!(regex.is_match("Prime annuelle : 1 250,00 €") && regex.is_match("EUR 980"));
                assert!(!regex.is_match("Article 12 du contrat"));
                assert_eq!(p.decomposition.pattern, DecompositionPattern::Single);
                assert!(p.activations.use_toc_navigation && p.activations.use_keyword_retrieval);
                assert!(p.activations.extract_page_numbers);
                assert!(p.parsing_notes.iter().any(|n| n.starts_with("expert dictionary (question in fr)")));
            },
        },
        // 2. Compound question, independent decomposition.
        Worked {
            question: "What is the annual premium and what are the main exclusions?",
            profile: pdf_profile,
            checks: |p| {
                assert_eq!(p.decomposition.pattern, DecompositionPattern::Independent);
                assert_eq!(
                    p.decomposition.sub_questions,
                    ["What is the annual premium?", "What are the main exclusions?"]
                );
                assert!(p.activations.decompose_compound);
                assert!(p.suggested_clarification.is_none());
            },
        },
        // 3. Ambiguous single term: clarification before running anything.
        Worked {
            question: "What's the limit?",
            profile: pdf_profile,
            checks: |p| {
                assert_eq!(p.ambiguity_reason.as_deref(), Some(AMBIGUOUS_TERM));
                assert_eq!(
                    p.suggested_clarification.as_deref(),
                    Some(
                        "'limit' can mean different things here: coverage limit, sublimit, deductible or \
                         aggregate limit. Which one do you want?"
                    )
                );
                assert!(p.parsing_notes.iter().any(|n| n.starts_with("ambiguous: 'limit' may mean 4")));
                assert_eq!(p.matched_concept, None);
            },
        },
        // 4. Document-aware downgrade: a page named on a Word document.
        Worked {
            question: "What does it say on page 3 of the contract?",
            profile: docx_profile,
            checks: |p| {
                assert!(!p.activations.extract_page_numbers);
                assert_eq!(p.structural_hints.pages_hint, [3]);
                assert!(p.retrieval.pages.is_empty());
                assert!(
                    p.parsing_notes.iter().any(|n| n.contains("names page 3 but a docx document has no fixed pages")
                        && n.contains("approximate location")),
                    "{:?}",
                    p.parsing_notes
                );
            },
        },
    ];
    for case in cases {
        let parsed = parse_with(case.question, &(case.profile)());
        (case.checks)(&parsed);
    }
}

#[test]
fn a_qualified_term_is_not_ambiguous() {
    let cases: &[(&str, Option<&str>)] = &[
        ("What's the limit?", Some(AMBIGUOUS_TERM)),
        ("Quelle est la limite ?", Some(AMBIGUOUS_TERM)),
        ("What's the aggregate limit?", None),
        ("What is the limit for water damage?", None),
        ("What is the premium?", None),
        ("What is it?", Some("the question names nothing to look for")),
    ];
    for (question, reason) in cases {
        let parsed = parse(question);
        assert_eq!(parsed.ambiguity_reason.as_deref(), *reason, "{question}");
        assert_eq!(parsed.suggested_clarification.is_some(), reason.is_some(), "{question}");
    }
    assert_eq!(parse("What's the aggregate limit?").matched_concept.as_deref(), Some("aggregate_limit"));
    // A distractor removes its concept from the referents; three remain.
    let parsed = parse("What is the limit, not the deductible?");
    let clarification = parsed.suggested_clarification.unwrap();
    assert!(!clarification.contains("deductible") && clarification.contains("sublimit"), "{clarification}");
}

#[test]
fn cascades_are_wired_and_explained() {
    // (question, answer_context, chunk strategy, model, note fragment)
    let cases: &[(&str, AnswerContext, docintel_schema::ChunkStrategy, &str, &str)] = &[
        (
            "What is the annual premium?",
            AnswerContext::Line,
            docintel_schema::ChunkStrategy::Sequential,
            "gpt-4.1-nano",
            "answer_context=line (answer_shape), chunk_strategy=sequential (answer_shape), model=gpt-4.1-nano (answer_type)",
        ),
        (
            "What are the exclusions?",
            AnswerContext::Chapter,
            docintel_schema::ChunkStrategy::Combined,
            "gpt-4.1",
            "answer_context=chapter (concept), chunk_strategy=combined (concept), model=gpt-4.1 (concept)",
        ),
        (
            "List the annual premiums",
            AnswerContext::Section,
            docintel_schema::ChunkStrategy::Combined,
            "gpt-4.1-nano",
            "answer_context=section (answer_shape)",
        ),
        (
            "Summarize the exclusions in one line",
            AnswerContext::Document,
            docintel_schema::ChunkStrategy::Combined,
            "gpt-4.1",
            "answer_context=document (question), chunk_strategy=combined (question)",
        ),
        (
            "Why was the claim rejected?",
            AnswerContext::Paragraph,
            docintel_schema::ChunkStrategy::Sequential,
            DEFAULT_MODEL,
            "model=gpt-4.1-mini (project)",
        ),
    ];
    for (question, context, chunk, model, note) in cases {
        let parsed = parse(question);
        assert_eq!(
            (parsed.structural_hints.answer_context, parsed.chunk_strategy, parsed.suggested_model.as_str()),
            (*context, *chunk, *model),
            "{question}"
        );
        assert!(parsed.parsing_notes.iter().any(|n| n.contains(note)), "{question}: {:?}", parsed.parsing_notes);
    }
    let parser =
        RuleParser::new().with_defaults(ProjectDefaults { model: "local-model".into(), ..ProjectDefaults::default() });
    assert_eq!(parser.parse("Why was the claim rejected?", &pdf_profile()).unwrap().suggested_model, "local-model");
}

#[test]
fn a_new_answer_type_is_one_row() {
    let tmp = docintel_test_support::temp_dir("question-types");
    let dir = tmp.path().to_path_buf();
    let builtin = include_str!("../data/answer_types.csv");
    let row = "licence_plate,\"\\blicen[cs]e\\s+plate\\b\",plate,\"\\b[A-Z]{2}-\\d{3}-[A-Z]{2}\\b\",text,gpt-4.1-nano,\"A vehicle registration plate.\"\n";
    std::fs::write(dir.join(satellites::ANSWER_TYPES_FILE), format!("{builtin}{row}")).unwrap();
    let parser = RuleParser::new().with_satellites(Satellites::from_dir(&dir).unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
    let parsed = parser.parse("What is the licence plate of the insured car?", &pdf_profile()).unwrap();
    assert_eq!(parsed.answer_type, "licence_plate");
    assert_eq!(parsed.suggested_model, "gpt-4.1-nano");
    // The head noun alone makes the type too.
    assert_eq!(parser.parse("Which plate is registered?", &pdf_profile()).unwrap().answer_type, "licence_plate");
    assert_eq!(
        PARSER.parse("What is the licence plate of the insured car?", &pdf_profile()).unwrap().answer_type,
        "text"
    );
}

#[test]
fn follow_ups_rewrite_for_retrieval_only() {
    let turns = vec!["What is the annual premium?".to_owned()];
    let parsed = PARSER.parse_with_history("When is it due?", &turns, &pdf_profile()).unwrap();
    assert_eq!(parsed.retrieval.rewrites, ["When is the annual premium due?"]);
    assert_eq!(parsed.generation.original_question, "When is it due?");
    assert_eq!(parsed.retrieval.main_query, "When is it due?");
    assert_eq!(words(&parsed), ["annual", "premium", "due"]);
    assert_eq!(parsed.matched_concept.as_deref(), Some("premium"));
    assert!(parsed.parsing_notes.iter().any(|n| n.starts_with("follow-up rewritten for retrieval only")));
    // "What is it?" alone asks for a clarification; after a turn it does not.
    let parsed = PARSER.parse_with_history("What is it?", &turns, &pdf_profile()).unwrap();
    assert_eq!((parsed.suggested_clarification, parsed.retrieval.rewrites.len()), (None, 1));
    // No earlier noun phrase: the original sentence, with a note.
    let parsed = PARSER.parse_with_history("When is it due?", &["??".to_owned()], &pdf_profile()).unwrap();
    assert!(parsed.retrieval.rewrites.is_empty());
    assert!(parsed.parsing_notes.iter().any(|n| n.contains("original wording kept")));
    // The step alone, on a record parsed without the turns (what the facade does
    // with the model's record), gives the same record; the rewrite is reported alike.
    let plain = parse("When is it due?");
    assert_eq!(
        PARSER.resolve_follow_up(plain, &turns, &pdf_profile()).unwrap(),
        PARSER.parse_with_history("When is it due?", &turns, &pdf_profile()).unwrap()
    );
    assert_eq!(follow_up_rewrite("When is it due?", &turns).as_deref(), Some("When is the annual premium due?"));
    assert_eq!(follow_up_rewrite("What is the deductible?", &turns), None);
    // No history, or no referring expression: the plain parse.
    assert_eq!(PARSER.parse_with_history("When is it due?", &[], &pdf_profile()).unwrap(), parse("When is it due?"));
    assert_eq!(
        PARSER.parse_with_history("What is the deductible?", &turns, &pdf_profile()).unwrap(),
        parse("What is the deductible?")
    );
}

#[test]
fn pages_hint_in_five_languages() {
    // (question, language, pages): a single page, a range and a list per
    // language, through the whole parser (hints, retrieval brief, keywords).
    let cases: &[(&str, &str, &[u32])] = &[
        ("What is the premium on page 1?", "en", &[1]),
        ("Summarize pages 5 to 7", "en", &[5, 6, 7]),
        ("Compare page 2 and page 7", "en", &[2, 7]),
        ("Quel est le montant à la page 1 ?", "fr", &[1]),
        ("Que disent les pages 5 à 7 ?", "fr", &[5, 6, 7]),
        ("Que disent les pages 2 et 7 ?", "fr", &[2, 7]),
        ("¿Cuál es el importe en la página 1?", "es", &[1]),
        ("¿Qué dicen las páginas 5 a 7?", "es", &[5, 6, 7]),
        ("¿Qué dicen las páginas 2 y 7?", "es", &[2, 7]),
        ("Wie hoch ist der Betrag auf Seite 1?", "de", &[1]),
        ("Was steht auf den Seiten 5 bis 7?", "de", &[5, 6, 7]),
        ("Was steht auf den Seiten 2 und 7?", "de", &[2, 7]),
        ("Какая сумма на странице 1?", "ru", &[1]),
        ("Что написано на страницах 5-7?", "ru", &[5, 6, 7]),
        ("Что написано на страницах 2 и 7?", "ru", &[2, 7]),
    ];
    for (question, language, pages) in cases {
        let parsed = parse(question);
        assert_eq!(parsed.language.as_deref(), Some(*language), "language of {question}");
        assert_eq!(parsed.structural_hints.pages_hint, *pages, "pages of {question}");
        assert_eq!(parsed.retrieval.pages, *pages, "retrieval pages of {question}");
        let numbers: Vec<String> = pages.iter().map(u32::to_string).collect();
        assert!(words(&parsed).iter().all(|w| !numbers.contains(&(*w).to_owned())), "{question}: {:?}", words(&parsed));
    }
}

#[test]
fn anchor_families_end_to_end() {
    // One identifier family per row: the anchor reaches the keywords (weight
    // ANCHOR_WEIGHT, exact text) and the retrieval brief.
    let cases: &[(&str, &[&str])] = &[
        ("What does AC-2 require?", &["AC-2"]),
        ("Is IA-5(1) implemented?", &["IA-5(1)"]),
        ("What does Article 18 say about retention?", &["Article 18"]),
        ("Which tests does ISO 9408 describe?", &["ISO 9408"]),
        ("What does L131-1 say about the insured?", &["L131-1"]),
        ("What does §4.2 say?", &["§4.2"]),
        ("Which invoice totals $4.11?", &["$4.11"]),
        ("Who paid 1,939.00 EUR?", &["1,939.00 EUR"]),
        ("What happened on 2014-08-03?", &["2014-08-03"]),
        ("What happened on August 3, 2014?", &["August 3, 2014"]),
        ("Que s'est-il passé le 3 août 2014 ?", &["3 août 2014"]),
    ];
    for (question, anchors) in cases {
        let parsed = parse(question);
        assert_eq!(parsed.retrieval.anchor_keywords, *anchors, "{question}");
        let found: Vec<(&str, f32, bool)> = parsed
            .keywords
            .iter()
            .filter(|k| k.source == KeywordSource::Anchor)
            .map(|k| (k.text.as_str(), k.weight, k.is_regex))
            .collect();
        let expected: Vec<(&str, f32, bool)> = anchors.iter().map(|a| (*a, ANCHOR_WEIGHT, false)).collect();
        assert_eq!(found, expected, "{question}");
    }
}

#[test]
fn slugs_are_stable_and_readable() {
    // (document, question, expected path under out/): the slug is a readable
    // prefix plus a hash of the whole question, so it never changes between
    // runs and two questions with the same prefix differ.
    let cases: &[(&str, &str, &str)] = &[
        ("contract-0123456789ab", "What's the limit?", "contract-0123456789ab/questions/what-s-the-limit-9a877ee4"),
        ("policy-0123456789ab", "What's the limit?", "policy-0123456789ab/questions/what-s-the-limit-9a877ee4"),
    ];
    for (document, question, expected) in cases {
        let path = parsed_question_path(std::path::Path::new("out"), document, question, &[]);
        assert_eq!(path, std::path::Path::new("out").join(expected).join("parsed_question.json"), "{question}");
    }
    let a = parsed_question_path(std::path::Path::new("out"), "x-0123456789ab", "What is the premium for 2021?", &[]);
    let b = parsed_question_path(std::path::Path::new("out"), "x-0123456789ab", "What is the premium for 2022?", &[]);
    assert_ne!(a, b);
}

#[test]
fn the_title_of_an_identifier_is_its_heading_not_the_word_title() {
    let parsed = parse("What is the title of NIST SP 800-53 Rev. 5 control PM-23?");
    let found = words(&parsed);
    assert!(found.contains(&"PM-23") && !found.contains(&"title"), "{found:?}");
    assert!(
        parsed.parsing_notes.iter().any(|n| n.contains("'title' asks for the heading")),
        "{:?}",
        parsed.parsing_notes
    );
    // Without an identifier, "title" is a word to look for.
    let parsed = parse("Who holds the title of the property?");
    assert!(words(&parsed).contains(&"title"), "{:?}", words(&parsed));
}

#[test]
fn an_analyst_question_keeps_its_figure_and_drops_its_framing() {
    let parsed = parse(
        "Assume that you are a public equities analyst. Answer the following question by primarily using information that is shown in the balance sheet: what is the year end FY2018 net PPNE for 3M? Round your answer to two decimal places.",
    );
    let direct = words(&parsed);
    assert_eq!(direct, ["year", "end", "2018", "net", "ppne", "3m"], "{:?}", parsed.parsing_notes);
    // The part named and the part implied by the figure are one part here.
    assert_eq!(parsed.retrieval.scope.sections.len(), 1);
    assert!(parsed.retrieval.scope.sections[0].starts_with("balance sheet | balance sheets"));
    assert_eq!(parsed.scope_filters, parsed.retrieval.scope);
    assert_eq!(parsed.generation.format_constraints.get("decimals").map(String::as_str), Some("2"));
    assert!(parsed.retrieval.main_query.contains("net PPNE"));
    assert!(!parsed.retrieval.main_query.contains("analyst"));
}

#[test]
fn a_question_naming_no_part_points_nowhere() {
    let parsed = parse("Which controls are related to SC-1?");
    assert!(parsed.retrieval.scope.sections.is_empty());
    assert!(words(&parsed).contains(&"controls"));
}

#[test]
fn how_old_searches_for_the_age_a_document_prints() {
    let has_age = |question: &str| parse(question).keywords.iter().any(|k| k.text == "age");
    assert!(has_age("Who is Johnson & Johnson's CFO and how old is he?"));
    assert!(has_age("Quel âge a le directeur général ?"));
    assert!(!has_age("What co-payment applies to insured persons aged above 60?"));
}

#[test]
fn a_ratio_of_two_figures_is_asked_as_two_parts_and_their_quotient() {
    let parsed = parse(
        "what is Gross Profit to Total Assets ratio for Best Buy for the fiscal year ending January 28, 2023? Round Your answer to three decimal places.",
    );
    assert_eq!(parsed.generation.computed, Some(docintel_schema::Computed::Quotient), "{:?}", parsed.parsing_notes);
    assert_eq!(parsed.answer_type, "number");
    let parts: Vec<(&str, &str)> =
        parsed.generation.parts.iter().map(|p| (p.question.as_str(), p.answer_type.as_str())).collect();
    assert_eq!(
        parts,
        [
            ("What is the Gross Profit for Best Buy for the fiscal year ending January 28, 2023?", "amount"),
            ("What is the Total Assets for Best Buy for the fiscal year ending January 28, 2023?", "amount")
        ]
    );
    // In percent: a percentage.
    let parsed = parse(
        "What is the ratio of net income to revenue in FY2019? Answer in units of percents, rounded to one decimal.",
    );
    assert_eq!(parsed.generation.computed, Some(docintel_schema::Computed::Quotient), "{:?}", parsed.parsing_notes);
    assert_eq!(parsed.answer_type, "percentage");
    // A question that asks for no ratio is whole.
    let parsed = parse("What is the maximum amount payable to the insured?");
    assert!(parsed.generation.computed.is_none() && parsed.generation.parts.is_empty());
}

#[test]
fn a_pair_of_singular_noun_phrases_is_one_value_per_part() {
    for question in [
        "What are the customer number and the contract number on this invoice?",
        "Wie lauten die Kundennummer und die Vertragsnummer auf dieser Rechnung?",
        "Wat zijn het klantnummer en het ordernummer op deze factuur?",
    ] {
        let parsed = parse(question);
        assert_eq!(parsed.answer_shape, AnswerShape::Single, "{question}: {:?}", parsed.parsing_notes);
        assert_eq!(parsed.generation.parts.len(), 2, "{question}");
    }
    // Plural heads stay a list.
    assert_eq!(parse("What are the exclusions and the limits?").answer_shape, AnswerShape::Listing);
}
