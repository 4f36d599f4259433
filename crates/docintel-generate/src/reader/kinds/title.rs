//! Titles ("the title of this agreement" → `COOPERATION AGREEMENT`, "the
//! title of the paper"): a row printed as a heading — short, not ending a
//! clause, in capitals or taller than the passage's body rows. A title
//! holding the question's focus noun ("agreement") fits fully.

use docintel_schema::{AnswerValue, Line};

use super::{FindContext, Found};
use crate::reader::evidence::{word_matches, words_of};

/// Words a title holds at most.
const MAX_WORDS: usize = 14;

/// How much taller than the passage's median row a heading row is.
const TALLER: f32 = 1.2;

pub(super) fn find(rows: &[&Line], i: usize, ctx: &FindContext) -> Vec<Found> {
    let text = rows[i].text.as_str();
    let t = text.trim();
    let words: Vec<&str> = t.split_whitespace().filter(|w| w.chars().any(char::is_alphabetic)).collect();
    if words.is_empty() || words.len() > MAX_WORDS || t.ends_with([',', ';', ':', '.']) {
        return Vec::new();
    }
    let letters: Vec<char> = t.chars().filter(|c| c.is_alphabetic()).collect();
    let upper = letters.iter().filter(|c| c.is_uppercase()).count();
    let capitals = letters.len() >= 4 && upper * 10 >= letters.len() * 8;
    let capitalised = words.iter().filter(|w| w.chars().next().is_some_and(char::is_uppercase)).count();
    let title_case = capitalised * 10 >= words.len() * 7;
    let tall = taller_than_body(rows, i);
    if !(capitals || tall || title_case) {
        return Vec::new();
    }
    let named = words_of(t).iter().any(|w| ctx.focus.iter().any(|f| word_matches(&w.norm, f)));
    let fit = match (capitals || tall, named) {
        (true, true) => 1.0,
        (true, false) | (false, true) => 0.6,
        (false, false) => 0.3,
    };
    let start = text.len() - text.trim_start().len();
    vec![Found::new(start, start + t.len(), i, AnswerValue::Text(t.to_owned()), t, fit)]
}

/// Whether row `i` is printed taller than the median row of the passage.
fn taller_than_body(rows: &[&Line], i: usize) -> bool {
    let height = |l: &Line| (l.bbox.y1 - l.bbox.y0).abs();
    let mut heights: Vec<f32> = rows.iter().map(|l| height(l)).filter(|h| *h > 0.0).collect();
    if heights.len() < 3 {
        return false;
    }
    heights.sort_by(f32::total_cmp);
    let median = heights[heights.len() / 2];
    height(rows[i]) >= median * TALLER
}

#[cfg(test)]
mod tests {
    use docintel_schema::{BBox, Line};

    use super::*;

    fn line(text: &str, height: f32) -> Line {
        Line {
            line_id: 1,
            page: 1,
            line_in_page: 1,
            text: text.to_owned(),
            bbox: BBox { x0: 0.0, y0: 0.0, x1: 100.0, y1: height },
        }
    }

    fn titles(texts: &[(&str, f32)], focus: &[&str]) -> Vec<(String, f64)> {
        let lines: Vec<Line> = texts.iter().map(|(t, h)| line(t, *h)).collect();
        let rows: Vec<&Line> = lines.iter().collect();
        let ctx = FindContext::with_focus(focus);
        (0..rows.len()).flat_map(|i| find(&rows, i, &ctx)).map(|f| (f.text, f.fit)).collect()
    }

    #[test]
    fn a_heading_in_capitals_holding_the_focus_noun_fits_fully() {
        let found = titles(
            &[
                ("Exhibit 10.1", 10.0),
                ("COOPERATION AGREEMENT", 10.0),
                ("This AGREEMENT, dated as of June 27, 2017, is made and entered into by", 10.0),
            ],
            &["agreement"],
        );
        assert_eq!(found, [("Exhibit 10.1".to_owned(), 0.3), ("COOPERATION AGREEMENT".to_owned(), 1.0)]);
    }

    #[test]
    fn a_taller_row_is_a_heading_and_a_clause_is_not() {
        let found = titles(
            &[
                ("Attention Is All You Need", 17.0),
                ("the dominant sequence transduction models are based on", 10.0),
                ("complex recurrent or convolutional neural networks", 10.0),
                ("Abstract", 10.0),
            ],
            &["paper"],
        );
        assert_eq!(found, [("Attention Is All You Need".to_owned(), 0.6), ("Abstract".to_owned(), 0.3)]);
    }
}
