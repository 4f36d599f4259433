//! Stage `parts`: each part of a compound question has its own best passage
//! shown. "On which exchange is the stock registered, and what is its
//! trading symbol?" is searched as one question, whose best passages can all
//! be about the exchange; each part is searched again with the question's
//! keywords its own wording carries and the kind of value it asks for, and
//! its best passage, when not already shown, is shown after the others
//! (nothing the whole question ranked is displaced).

use docintel_schema::text::normalize;
use docintel_schema::{AnswerShape, TraceSink};
use serde_json::json;

use super::{Ctx, RankingState};
use crate::error::RetrieveError;
use crate::matching::{Candidate, PreparedKeyword, kind_pattern, overlaps};

pub(crate) fn run(state: &mut RankingState, ctx: &Ctx<'_>, trace: &mut dyn TraceSink) -> Result<(), RetrieveError> {
    let question = ctx.question;
    let parts = &question.generation.parts;
    if parts.len() < 2 || question.answer_shape != AnswerShape::Single || state.ranked.is_empty() {
        return Ok(());
    }
    let top_k = ctx.config.top_k;
    let scope = (!state.hinted.is_empty()).then_some(&state.hinted);
    let mut added: Vec<Candidate> = Vec::new();
    let mut searched = Vec::new();
    for part in parts {
        let wording = normalize(&part.question);
        let own: Vec<PreparedKeyword> =
            state.keywords.iter().filter(|k| !k.is_regex() && k.matches(&wording)).cloned().collect();
        if own.is_empty() {
            continue;
        }
        let kind = kind_pattern(&part.answer_type);
        let search = ctx.searcher.search(&own, scope, kind.as_ref().map(|(_, re)| re), None);
        let Some(best) = search.candidates.first() else { continue };
        let shown = &state.ranked[..top_k.min(state.ranked.len())];
        let new = !shown.iter().chain(&added).any(|c| overlaps(&c.passage, &best.passage));
        searched.push(json!({
            "part": part.question,
            "keywords": own.iter().map(|k| k.label.clone()).collect::<Vec<_>>(),
            "best": {"page": best.passage.page, "lines": ctx.rows.to_document(best.passage.line_start, best.passage.line_end)},
            "added": new,
        }));
        if new {
            added.push(Candidate { coverage: true, ..best.clone() });
        }
    }
    trace.record(docintel_schema::TraceEvent {
        brick: "retrieve".to_owned(),
        step: "parts".to_owned(),
        detail: json!({ "parts": searched }),
    });
    if added.is_empty() {
        return Ok(());
    }
    state.methods_used.push("parts".to_owned());
    state.notes.push(format!("{} part(s) of the compound question searched alone added a passage", added.len()));
    state.extra_shown = added;
    Ok(())
}

#[cfg(test)]
mod tests {
    use docintel_schema::{AnswerShape, AskedPart};

    use crate::test_support::{check, document, question};

    fn part(text: &str, answer_type: &str) -> AskedPart {
        AskedPart {
            question: text.to_owned(),
            answer_type: answer_type.to_owned(),
            answer_focus: None,
            constraints: Vec::new(),
        }
    }

    #[test]
    fn each_part_of_a_compound_question_has_its_best_passage_shown() {
        // The officer's title is on pages 1 and 2 with "since" but no date;
        // the date is on page 4, under the passages the whole question
        // ranks first.
        let officer = ["chief financial officer since", "filler", "filler", "filler", "chief financial officer since"];
        let doc = document(&[&officer, &officer, &["filler", "filler"], &["since March 1, 2015", "filler"]]);
        let mut q = question(&["chief", "financial", "officer", "since"], "person", &[]);
        q.answer_shape = AnswerShape::Single;
        let whole = check(&doc, &q, 2);
        assert!(whole.passages.iter().all(|p| p.page < 3), "{whole:?}");
        q.generation.parts =
            vec![part("Who is the chief financial officer?", "person"), part("Since what date?", "date")];
        let parted = check(&doc, &q, 2);
        assert_eq!(parted.passages[..2], whole.passages[..2], "nothing the whole question ranked is displaced");
        assert!(parted.passages.iter().any(|p| p.page == 4), "{parted:?}");
        assert!(parted.methods_used.contains(&"parts".to_owned()));
    }
}
