//! Corpus routing: the top level of a folder of documents is its file list.
//!
//! Each file is shown to the [`Router`] as one compact [`RouterLine`] (its
//! name and one-line summary, page count, and — like any TOC level whose
//! titles alone are ambiguous — the count of question keywords inside), the
//! router picks file(s), and the caller then walks each picked file's own
//! TOC with the ordinary retriever. The same deterministic [`KeywordRouter`]
//! scores files and TOC branches: an exact identifier in the question (an
//! article number, a contract code) narrows the competition to the files
//! holding it.
//!
//! [`KeywordRouter`]: crate::KeywordRouter

use docintel_schema::text::normalize;
use docintel_schema::{
    KeywordEvidence, ParsedDocument, ParsedQuestion, Router, RouterLine, RouterPick, TraceEvent, TraceSink,
};
use serde_json::json;

use crate::error::RetrieveError;
use crate::matching::prepare;

/// One file of a corpus.
#[derive(Debug, Clone, Copy)]
pub struct CorpusFile<'a> {
    /// How the file is named to the router (its file name).
    pub name: &'a str,
    /// The parsed file.
    pub document: &'a ParsedDocument,
}

/// What the corpus level decided.
#[derive(Debug, Clone, PartialEq)]
pub struct CorpusRoute {
    /// The lines shown, one per file, in the order of the files given
    /// (`id` = index + 1).
    pub lines: Vec<RouterLine>,
    /// The router's pick; ids index the files (1-based).
    pub pick: RouterPick,
}

impl CorpusRoute {
    /// The indexes (0-based) of the picked files, in pick order.
    pub fn picked_files(&self) -> Vec<usize> {
        self.pick.ids.iter().filter_map(|&id| (id as usize).checked_sub(1)).filter(|&i| i < self.lines.len()).collect()
    }
}

/// Builds one router line per file: the title is the file name and summary;
/// the evidence counts, per question keyword, a match in that title, TOC
/// titles matching, and body lines matching.
pub fn corpus_lines(question: &ParsedQuestion, files: &[CorpusFile<'_>]) -> Result<Vec<RouterLine>, RetrieveError> {
    let keywords = prepare(question)?;
    let lines: Vec<RouterLine> = files
        .iter()
        .enumerate()
        .map(|(index, file)| {
            let document = file.document;
            let summary = document.profile.summary.as_deref().unwrap_or("");
            let title = if summary.is_empty() { file.name.to_owned() } else { format!("{} — {summary}", file.name) };
            let title_norm = normalize(&format!("{} {summary}", file.name.replace(['_', '-', '.'], " ")));
            let toc_titles: Vec<String> = document.toc.iter().map(|e| normalize(&e.title)).collect();
            let body: Vec<String> = document.lines.iter().map(|l| normalize(&l.text)).collect();
            let evidence: Vec<KeywordEvidence> = keywords
                .iter()
                .map(|keyword| KeywordEvidence {
                    keyword: keyword.label.clone(),
                    weight: keyword.weight,
                    identifier: keyword.pinning,
                    in_title: keyword.matches(&title_norm),
                    in_sub_titles: toc_titles.iter().filter(|t| keyword.matches(t)).count() as u32,
                    in_body: body.iter().filter(|t| keyword.matches(t)).count() as u32,
                })
                .collect();
            let n_pages = document.profile.n_pages.unwrap_or(1).max(1);
            RouterLine {
                id: index as u32 + 1,
                title,
                start_page: 1,
                end_page: n_pages,
                n_children: document.toc.iter().filter(|e| e.parent.is_none()).count() as u32,
                n_lines: document.lines.len() as u32,
                keyword_hits: evidence.iter().map(|e| e.in_body + e.in_sub_titles).sum(),
                // File names and summaries rarely settle which file answers:
                // always show the keyword counts at this level.
                show_hits: true,
                evidence,
            }
        })
        .collect();
    Ok(lines)
}

/// Shows the corpus level to `router` and records a `corpus_level` trace
/// event (lines shown, pick, reason).
pub fn route_corpus<R: Router>(
    router: &R,
    question: &ParsedQuestion,
    files: &[CorpusFile<'_>],
    trace: &mut dyn TraceSink,
) -> Result<CorpusRoute, Box<dyn std::error::Error + Send + Sync>> {
    let lines = corpus_lines(question, files)?;
    let pick = router.route(&lines, question).map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)?;
    trace.record(TraceEvent {
        brick: "retrieve".to_owned(),
        step: "corpus_level".to_owned(),
        detail: json!({
            "router": router.name(),
            "lines": lines.iter().map(RouterLine::render).collect::<Vec<_>>(),
            "picked": pick.ids,
            "reason": pick.reason,
        }),
    });
    Ok(CorpusRoute { lines, pick })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{document, question};
    use crate::{KeywordRouter, RoutingConfig};

    #[test]
    fn the_file_holding_the_keywords_is_picked() {
        let life = document(&[&["Assurance vie", "Rachat partiel et fiscalité", "Prélèvements sociaux 7,5%"]]);
        let disability = document(&[&["Prévoyance invalidité", "Franchise de 30 jours", "Indemnité journalière"]]);
        let home = document(&[&["Multirisque habitation", "Vol et cambriolage", "Déclaration sous 48 heures"]]);
        let files = [
            CorpusFile { name: "CG-assurance-vie.pdf", document: &life },
            CorpusFile { name: "CG-prevoyance-invalidite.pdf", document: &disability },
            CorpusFile { name: "bareme-iard.pdf", document: &home },
        ];
        let router = KeywordRouter::new(RoutingConfig::STANDARD);
        let mut trace = docintel_schema::NullSink;
        let route = route_corpus(&router, &question(&["franchise", "indemnité"], "amount", &[]), &files, &mut trace)
            .expect("routes");
        assert_eq!(route.lines.len(), 3);
        assert_eq!(route.picked_files(), vec![1]);
        assert!(route.lines[1].render().contains("keyword hits"), "{}", route.lines[1].render());

        let route =
            route_corpus(&router, &question(&["cambriolage"], "text", &[]), &files, &mut trace).expect("routes");
        assert_eq!(route.picked_files(), vec![2]);

        // No keyword anywhere: nothing picked, the caller decides.
        let route = route_corpus(&router, &question(&["obsèques"], "text", &[]), &files, &mut trace).expect("routes");
        assert!(route.picked_files().is_empty(), "{:?}", route.pick);
    }
}
