//! Organisations ("which university" → `University of La Verne`, "which
//! company sold it" → `WS Retail Services Pvt. Ltd.`): name shapes of
//! [`crate::extract::names::find_organisations`]; a name holding the
//! question's focus noun ("university", "exchange") in the singular fits
//! fully when that noun is one that names institutions (a heading such as
//! "Report of Independent Registered Public Accounting Firm" holds the
//! focus words of "which accounting firm" and is no firm's name).

use docintel_schema::AnswerValue;

use super::person::clean;
use super::{FindContext, Found};
use crate::extract::names::{find_organisations, institution_word};
use crate::reader::evidence::{word_matches, words_of};

pub(super) fn find(text: &str, row: usize, ctx: &FindContext) -> Vec<Found> {
    find_organisations(text)
        .into_iter()
        .map(|t| {
            // A singular type noun names one organisation ("University of
            // La Verne"); a plural one heads a heading ("THIRD PARTIES").
            let named = words_of(&t.value).iter().any(|w| {
                !w.norm.ends_with('s')
                    && institution_word(&w.norm)
                    && ctx.focus.iter().any(|f| word_matches(&w.norm, f))
            });
            let fit = if named { 1.0 } else { t.fit };
            Found::new(t.start, t.end, row, AnswerValue::Text(clean(&t.value)), &t.value, fit)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fits(text: &str, focus: &str) -> Vec<(String, f64)> {
        find(text, 0, &FindContext::with_focus(&[focus])).into_iter().map(|f| (f.text, f.fit)).collect()
    }

    #[test]
    fn only_a_singular_type_noun_makes_a_name_fit_fully() {
        let university = fits("She studied at the University of La Verne.", "university");
        assert!(
            university.iter().any(|(t, fit)| t.contains("University of La Verne") && *fit == 1.0),
            "{university:?}"
        );
        let heading = fits("RELATIONSHIP OF THE PARTIES", "parties");
        assert!(!heading.is_empty() && heading.iter().all(|(_, fit)| *fit < 1.0), "{heading:?}");
        // A focus word that names no institution: the heading is no firm.
        let report = fits("REPORT OF INDEPENDENT REGISTERED PUBLIC ACCOUNTING FIRM", "firm");
        assert!(report.iter().all(|(_, fit)| *fit < 1.0), "{report:?}");
        let firm = fits("/s/ Deloitte & Touche LLP", "firm");
        assert!(firm.iter().any(|(t, fit)| t == "Deloitte & Touche LLP" && *fit == 1.0), "{firm:?}");
    }
}
