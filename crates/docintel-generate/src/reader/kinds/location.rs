//! Places ("in which city" → `Portland, Oregon`, "where" → `Chennai`): see
//! [`crate::extract::names::find_places`]. A listed place of another scale
//! than the one asked fits poorly: a country is no answer to "which city" or
//! "which state", a city none to "which country".

use docintel_schema::AnswerValue;

use super::person::clean;
use super::{FindContext, Found};
use crate::extract::names::{find_places, place_scale};

/// Focus nouns that ask a place of one scale, and the scales they rule out.
const SCALES: &[(&[&str], &[&str])] = &[
    (&["city", "town", "ville", "stadt", "municipality"], &["country", "region"]),
    (&["state", "province", "état", "bundesland"], &["country", "region", "city"]),
    (&["country", "nation", "pays"], &["city", "state"]),
];

/// How much of its fit a place of the wrong scale keeps.
const OTHER_SCALE: f64 = 0.3;

pub(super) fn find(text: &str, row: usize, ctx: &FindContext) -> Vec<Found> {
    let ruled_out: Vec<&str> = SCALES
        .iter()
        .filter(|(nouns, _)| ctx.focus.iter().any(|f| nouns.contains(&f.as_str())))
        .flat_map(|(_, out)| out.iter().copied())
        .collect();
    find_places(text)
        .into_iter()
        .map(|t| {
            let other = place_scale(&t.value).is_some_and(|s| ruled_out.contains(&s));
            let fit = if other { t.fit * OTHER_SCALE } else { t.fit };
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
    fn a_place_of_another_scale_than_asked_fits_poorly() {
        let text = "Its principal office is in Hartford, in the United States.";
        let city = fits(text, "city");
        let fit = |all: &[(String, f64)], name: &str| all.iter().find(|(t, _)| t.contains(name)).map(|(_, f)| *f);
        assert!(fit(&city, "United States").unwrap() < fit(&fits(text, "office"), "United States").unwrap());
        assert_eq!(place_scale("United States"), Some("country"));
        assert_eq!(place_scale("Chennai"), Some("city"));
        assert_eq!(place_scale("Oregon"), Some("state"));
    }
}
