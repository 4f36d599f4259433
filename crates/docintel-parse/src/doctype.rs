//! The deterministic part of the document profile that describes *what* a
//! document is: its type (from cue words of its first pages), the fields
//! people typically ask of that type, a title and a one-line summary.
//!
//! Nothing here calls a model: the same file always gets the same profile.
//! The type names match the `document_type` column of the question brick's
//! concepts table (`invoice`, `policy`, ...), so a concept scoped to a type
//! applies to the documents this module labels with it.

use docintel_schema::{Line, TocEntry};

/// One document type and the evidence for it.
struct DocType {
    /// The profile's `doc_type` value.
    name: &'static str,
    /// How the summary names it.
    label: &'static str,
    /// Cue words or phrases (lowercase, matched on word boundaries), each
    /// counted once per document.
    cues: &'static [&'static str],
    /// Fields typically asked of this type.
    typical_fields: &'static [&'static str],
}

/// The closed set of types, most specific first (ties go to the earlier).
const TYPES: &[DocType] = &[
    DocType {
        name: "invoice",
        label: "invoice",
        cues: &[
            "invoice",
            "invoice number",
            "bill to",
            "amount due",
            "rechnung",
            "factuur",
            "facture",
            "factura",
            "subtotal",
            "vat",
            "tva",
            "due date",
        ],
        typical_fields: &["total amount", "invoice date", "invoice number", "issuer", "due date"],
    },
    DocType {
        name: "financial_report",
        label: "financial report",
        cues: &[
            "form 10-k",
            "10-k",
            "10-q",
            "annual report",
            "fiscal year",
            "consolidated",
            "balance sheet",
            "net income",
            "securities and exchange commission",
            "earnings per share",
            "cash flows",
            "shareholders",
        ],
        typical_fields: &[
            "revenue",
            "net income",
            "total assets",
            "capital expenditure",
            "earnings per share",
            "cash flow",
        ],
    },
    DocType {
        name: "policy",
        label: "insurance policy",
        cues: &[
            "insurance",
            "policy",
            "insured",
            "insurer",
            "premium",
            "sum insured",
            "exclusions",
            "claim",
            "assurance",
            "assuré",
            "assureur",
            "garantie",
            "garanties",
            "cotisation",
            "sinistre",
            "franchise",
            "prévoyance",
            "póliza",
            "asegurado",
            "versicherung",
        ],
        typical_fields: &["premium", "sum insured", "deductible", "exclusions", "waiting period", "coverage limits"],
    },
    DocType {
        name: "contract",
        label: "contract",
        cues: &[
            "agreement",
            "hereby",
            "whereas",
            "governing law",
            "in witness whereof",
            "the parties",
            "effective date",
            "termination",
            "indemnification",
            "shall be governed",
        ],
        typical_fields: &["parties", "agreement date", "governing law", "term", "termination", "payment terms"],
    },
    DocType {
        name: "regulation",
        label: "regulation",
        cues: &[
            "circulaire",
            "recommandation",
            "regulation",
            "directive",
            "décret",
            "code des assurances",
            "acpr",
            "règlement",
            "reglamento",
            "verordnung",
        ],
        typical_fields: &["obligations", "scope", "effective date", "sanctions"],
    },
    DocType {
        name: "standard",
        label: "standard",
        cues: &[
            "nist",
            "special publication",
            "control",
            "controls",
            "requirements",
            "security and privacy",
            "iso",
            "conformance",
            "framework",
            "normative",
        ],
        typical_fields: &["control requirements", "control enhancements", "related controls", "scope"],
    },
    DocType {
        name: "paper",
        label: "paper",
        cues: &[
            "abstract",
            "introduction",
            "related work",
            "references",
            "arxiv",
            "et al",
            "experiments",
            "conclusion",
        ],
        typical_fields: &["authors", "main contribution", "method", "results", "datasets"],
    },
    DocType {
        name: "cv",
        label: "CV",
        cues: &["resume", "curriculum vitae", "experience", "education", "skills", "employment", "linkedin"],
        typical_fields: &["name", "contact", "experience", "education", "skills"],
    },
];

/// At least this many distinct cues before a type is claimed.
const MIN_CUES: usize = 3;

/// Lines read for the cues: the first pages carry what a document is.
const CUE_LINES: usize = 400;

/// What [`describe`] found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Description {
    pub(crate) doc_type: Option<&'static str>,
    pub(crate) typical_fields: Vec<String>,
    pub(crate) summary: Option<String>,
}

/// Describes a document from its line table and TOC. `n_pages` is `None`
/// for formats without real pages.
pub(crate) fn describe(lines: &[Line], toc: &[TocEntry], n_pages: Option<u32>) -> Description {
    let doc_type = detect(lines);
    let typical_fields =
        doc_type.map(|t| t.typical_fields.iter().map(|f| (*f).to_owned()).collect()).unwrap_or_default();
    let summary = summary(lines, toc, n_pages, doc_type);
    Description { doc_type: doc_type.map(|t| t.name), typical_fields, summary }
}

/// Words of `text`, lowercased, space-joined with a space at both ends so
/// phrases match on word boundaries with `contains(" cue ")`.
fn word_text<'a>(texts: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::from(" ");
    for text in texts {
        for word in text.split(|c: char| !(c.is_alphanumeric() || c == '-')).filter(|w| !w.is_empty()) {
            out.push_str(&word.to_lowercase());
            out.push(' ');
        }
    }
    out
}

fn detect(lines: &[Line]) -> Option<&'static DocType> {
    // An invoice says so on its first page; longer documents that mention
    // invoices in passing are not invoices.
    let first_page = word_text(lines.iter().filter(|l| l.page <= 1).take(CUE_LINES).map(|l| l.text.as_str()));
    let invoice = &TYPES[0];
    let n_pages = lines.last().map_or(0, |l| l.page);
    if n_pages <= 5
        && ["invoice", "rechnung", "factuur", "facture", "factura", "bill to"].iter().any(|cue| {
            let cue = format!(" {cue}");
            first_page.contains(&cue)
        })
    {
        return Some(invoice);
    }
    let text = word_text(lines.iter().take(CUE_LINES).map(|l| l.text.as_str()));
    let mut best: Option<(&DocType, usize)> = None;
    for doc_type in &TYPES[1..] {
        let hits = doc_type.cues.iter().filter(|cue| text.contains(&format!(" {cue} "))).count();
        if hits >= MIN_CUES && best.is_none_or(|(_, b)| hits > b) {
            best = Some((doc_type, hits));
        }
    }
    best.map(|(t, _)| t)
}

/// The title: the tallest line among the first lines of page 1 (font size
/// by its box height), readable length; the first such line on ties.
fn title(lines: &[Line]) -> Option<String> {
    let candidates = lines.iter().filter(|l| l.page <= 1).take(15).filter(|l| {
        let n = l.text.trim().chars().count();
        (4..=120).contains(&n) && l.text.chars().any(char::is_alphabetic)
    });
    let mut best: Option<(&Line, f32)> = None;
    for line in candidates {
        let height = (line.bbox.y1 - line.bbox.y0).abs();
        if best.is_none_or(|(_, h)| height > h + 0.5) {
            best = Some((line, height));
        }
    }
    best.map(|(l, _)| squash(&l.text))
}

fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// "<title> — <type>, <n> pages; sections: a; b; c".
fn summary(lines: &[Line], toc: &[TocEntry], n_pages: Option<u32>, doc_type: Option<&DocType>) -> Option<String> {
    if lines.is_empty() {
        return None;
    }
    let mut out = title(lines).unwrap_or_default();
    let mut facts = Vec::new();
    if let Some(t) = doc_type {
        facts.push(t.label.to_owned());
    }
    match n_pages {
        Some(1) => facts.push("1 page".to_owned()),
        Some(n) => facts.push(format!("{n} pages")),
        None => facts.push(format!("{} lines", lines.len())),
    }
    if !out.is_empty() {
        out.push_str(" — ");
    }
    out.push_str(&facts.join(", "));
    let top: Vec<String> =
        toc.iter().filter(|e| e.parent.is_none()).map(|e| squash(&e.title)).filter(|t| !t.is_empty()).take(6).collect();
    if !top.is_empty() {
        out.push_str("; sections: ");
        out.push_str(&top.join("; "));
    }
    Some(docintel_schema::text::truncate_chars(&out, 300))
}

#[cfg(test)]
mod tests {
    use super::*;
    use docintel_schema::BBox;

    fn lines(page_texts: &[&[&str]]) -> Vec<Line> {
        let mut out = Vec::new();
        for (p, texts) in page_texts.iter().enumerate() {
            for (i, text) in texts.iter().enumerate() {
                let top = 800.0 - 20.0 * i as f32;
                let height = if i == 0 { 18.0 } else { 10.0 };
                out.push(Line {
                    line_id: out.len() as u32 + 1,
                    page: p as u32 + 1,
                    line_in_page: i as u32 + 1,
                    text: (*text).to_owned(),
                    bbox: BBox { x0: 50.0, y0: top - height, x1: 300.0, y1: top },
                });
            }
        }
        out
    }

    #[test]
    fn types_from_cues() {
        let cases: &[(&[&str], Option<&str>)] = &[
            (&["Tax INVOICE", "Bill to: ACME", "Total 12.00"], Some("invoice")),
            (&["Rechnungsnummer 12"], Some("invoice")),
            (&["Rechnung", "Betrag"], Some("invoice")),
            (
                &["Conditions générales", "Objet de la garantie", "L'assuré et l'assureur", "Cotisation annuelle"],
                Some("policy"),
            ),
            (
                &["CONSULTING AGREEMENT", "WHEREAS the parties", "Governing law", "Termination of this Agreement"],
                Some("contract"),
            ),
            (
                &["NIST Special Publication 800-53", "Security and Privacy Controls", "Control requirements"],
                Some("standard"),
            ),
            (&["Attention Is All You Need", "Abstract", "1 Introduction", "References"], Some("paper")),
            (&["Annual report", "billing totals"], None),
        ];
        for (texts, expected) in cases {
            let description = describe(&lines(&[texts]), &[], Some(1));
            assert_eq!(description.doc_type, *expected, "{texts:?}");
            assert_eq!(description.typical_fields.is_empty(), expected.is_none(), "{texts:?}");
        }
    }

    #[test]
    fn long_documents_mentioning_invoices_are_not_invoices() {
        let mut pages: Vec<&[&str]> = vec![&["Form 10-K", "invoice factoring program", "Annual report"]];
        pages.extend(std::iter::repeat_n(&["Consolidated balance sheet", "Net income"][..], 8));
        assert_eq!(describe(&lines(&pages), &[], Some(9)).doc_type, Some("financial_report"));
    }

    #[test]
    fn summary_names_title_type_pages_and_sections() {
        let doc = lines(&[&["Attention Is All You Need", "Abstract", "1 Introduction", "References"]]);
        let toc = vec![
            TocEntry {
                id: 1,
                parent: None,
                level: 1,
                title: "Introduction".into(),
                start_page: 1,
                end_page: 1,
                source: docintel_schema::TocSource::Outline,
            },
            TocEntry {
                id: 2,
                parent: Some(1),
                level: 2,
                title: "Background".into(),
                start_page: 1,
                end_page: 1,
                source: docintel_schema::TocSource::Outline,
            },
        ];
        let description = describe(&doc, &toc, Some(1));
        assert_eq!(
            description.summary.as_deref(),
            Some("Attention Is All You Need — paper, 1 page; sections: Introduction")
        );
        assert_eq!(describe(&[], &toc, Some(0)).summary, None);
        let text_only = describe(&doc, &[], None).summary.unwrap_or_default();
        assert!(text_only.ends_with("paper, 4 lines"), "{text_only}");
    }
}
