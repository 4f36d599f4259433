//! The dispatcher: which pipeline steps run, decided in code from the parsed
//! question and the document profile, with a note for every downgrade.

use docintel_schema::{DecompositionPattern, DocumentFormat, DocumentProfile, ExecutionPlan, ParsedQuestion};

/// The plan before any downgrade: TOC navigation and keyword retrieval on,
/// embeddings and cross-references off (not built yet), one iteration
/// (offline), page numbers on.
pub fn default_plan() -> ExecutionPlan {
    ExecutionPlan::baseline()
}

/// Decides which pipeline steps run for `parsed` on a document with this
/// `profile`. Deterministic; returns the plan and one human-readable note per
/// downgrade or caveat (the parser appends them to `parsing_notes`).
///
/// ```
/// use docintel_question::{RuleParser, decide_activations};
/// use docintel_schema::{DocumentFormat, DocumentProfile, QuestionParser};
///
/// let profile = DocumentProfile {
///     format: DocumentFormat::Docx, n_pages: None, has_toc: false, has_tables: false,
///     languages: vec![], is_scanned: false, doc_type: None, typical_fields: vec![], summary: None,
/// };
/// let parsed = RuleParser::new().parse("What is the total?", &profile).unwrap();
/// let (plan, notes) = decide_activations(&parsed, &profile);
/// assert!(!plan.use_toc_navigation && !plan.extract_page_numbers);
/// assert_eq!(notes.len(), 2);
/// ```
pub fn decide_activations(parsed: &ParsedQuestion, profile: &DocumentProfile) -> (ExecutionPlan, Vec<String>) {
    let mut plan = default_plan();
    let mut notes = Vec::new();
    plan.decompose_compound = parsed.decomposition.pattern == DecompositionPattern::Independent;
    if !profile.has_toc {
        plan.use_toc_navigation = false;
        notes.push("no table of contents: TOC navigation off".to_owned());
        if let Some(section) = &parsed.structural_hints.toc_section_hint {
            notes.push(format!("section hint '{section}' kept for keyword search only: no TOC to route to"));
        }
    }
    let pageless = matches!(profile.format, DocumentFormat::Docx | DocumentFormat::Txt | DocumentFormat::Html);
    if pageless || profile.n_pages.is_none() {
        plan.extract_page_numbers = false;
        notes.push(format!("{} document without fixed pages: page numbers off", format_name(profile.format)));
        let pages = &parsed.structural_hints.pages_hint;
        if !pages.is_empty() {
            let named: Vec<String> = pages.iter().map(u32::to_string).collect();
            notes.push(format!(
                "the question names page {} but a {} document has no fixed pages (they depend on the renderer): \
                 treated as an approximate location, not as a page filter",
                named.join(", "),
                format_name(profile.format)
            ));
        }
    }
    if profile.is_scanned {
        notes.push("scanned document: extracted text may be noisy, exact keyword matches may miss".to_owned());
    }
    (plan, notes)
}

fn format_name(format: DocumentFormat) -> &'static str {
    match format {
        DocumentFormat::Pdf => "pdf",
        DocumentFormat::Docx => "docx",
        DocumentFormat::Txt => "txt",
        DocumentFormat::Html => "html",
        DocumentFormat::Xlsx => "xlsx",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RuleParser;
    use crate::test_support::{docx_profile, pdf_profile};
    use docintel_schema::QuestionParser;

    fn check(question: &str, profile: &DocumentProfile, expect: (ExecutionPlan, &[&str])) {
        static PARSER: std::sync::LazyLock<RuleParser> = std::sync::LazyLock::new(RuleParser::new);
        let parsed = PARSER.parse(question, profile).unwrap();
        let (plan, notes) = decide_activations(&parsed, profile);
        assert_eq!((plan, notes), (expect.0, expect.1.iter().map(|s| (*s).to_owned()).collect()), "{question}");
    }

    #[test]
    fn defaults_on_a_good_pdf() {
        check("What is the total amount?", &pdf_profile(), (default_plan(), &[]));
    }

    #[test]
    fn compound_questions_decompose() {
        let plan = ExecutionPlan { decompose_compound: true, ..default_plan() };
        check("What is the premium and when is it due?", &pdf_profile(), (plan, &[]));
    }

    #[test]
    fn no_toc_downgrades() {
        let profile = DocumentProfile { has_toc: false, ..pdf_profile() };
        let plan = ExecutionPlan { use_toc_navigation: false, ..default_plan() };
        check("What is the total amount?", &profile, (plan.clone(), &["no table of contents: TOC navigation off"]));
        check(
            "What does section 4.2 require?",
            &profile,
            (
                plan,
                &[
                    "no table of contents: TOC navigation off",
                    "section hint 'section 4.2' kept for keyword search only: no TOC to route to",
                ],
            ),
        );
    }

    #[test]
    fn docx_downgrades() {
        let plan = ExecutionPlan { use_toc_navigation: false, extract_page_numbers: false, ..default_plan() };
        check(
            "What is on page 3?",
            &docx_profile(),
            (
                plan,
                &[
                    "no table of contents: TOC navigation off",
                    "docx document without fixed pages: page numbers off",
                    "the question names page 3 but a docx document has no fixed pages (they depend on the renderer): \
                     treated as an approximate location, not as a page filter",
                ],
            ),
        );
    }

    #[test]
    fn scanned_note() {
        let profile = DocumentProfile { is_scanned: true, ..pdf_profile() };
        let (plan, notes) =
            decide_activations(&RuleParser::new().parse("What is the total?", &profile).unwrap(), &profile);
        assert_eq!(plan, default_plan());
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("scanned document"));
    }
}
