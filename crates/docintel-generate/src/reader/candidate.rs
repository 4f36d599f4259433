//! A value's features: [`PassageReader::candidate`] weighs the evidence
//! around one value found on a passage row (the question's terms on its
//! row, around it and in its labels, the focus words, the defined terms,
//! the statement column, the constraints) into its [`Features`], the
//! candidate the fitted model then scores.

use docintel_schema::{AnswerValue, Line, Passage};

use super::evidence::{self, Hit, Word, folded, word_matches, words_of};
use super::features::Features;
use super::kinds::{self, Found, Group, Kind};
use super::passage::{Label, PassageReader, RowFacts, found_covers_row, is_value_cell, same_column};
use super::{Candidate, answerable, respective, value_key};
use crate::extract::amount;
use crate::keywords::{is_generic, label_form};
use crate::layout::PageLayout;
use crate::statement;
use crate::table::Tables;

/// How far after a value (characters) a defined term may open.
const DEFINED_REACH: usize = 80;
/// A parenthesis opening a quoted term: `("Company")`, `(the “Agent”)`,
/// `(hereinafter "Licensor")`, after at most [`DEFINED_REACH`] characters
/// without another parenthesis (", a Delaware corporation" may come first).
static DEFINED_TERM: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    let pattern = format!(
        r#"(?i)^[^()]{{0,{DEFINED_REACH}}}?\(\s*(?:the\s+|hereinafter\s+|collectively\s+|each\s+a\s+|ci-après\s+)?["“'‘«]"#
    );
    regex::Regex::new(&pattern).expect("defined-term pattern")
});
/// How many words after a value `focus_after` looks at.
const AFTER_WORDS: usize = 6;

impl PassageReader<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn candidate(
        &self,
        rank: usize,
        passage: &Passage,
        rows: &[&Line],
        facts: &[RowFacts],
        i: usize,
        n: usize,
        found: Found,
        layout: &PageLayout<'_>,
        tables: &Tables<'_>,
        grids: &[statement::Grid],
        page_head: &[String],
    ) -> Option<Candidate> {
        let asked = self.asked;
        let terms = &asked.terms;
        let row = rows[i];
        if self.stats.is_page_number(row.page, &row.text) {
            return None;
        }
        let own = &facts[i];
        let text_kind = found.kind.group() == Group::Text;
        // The value's own words.
        let first = own.words.iter().position(|w| w.end > found.start).unwrap_or(own.words.len());
        let mut last = own.words.iter().rposition(|w| w.start < found.end).map_or(first, |p| p + 1);
        if found.last_row > i {
            last = own.words.len();
        }
        let inside = |w: usize| w >= first && w < last;
        let value_words: Vec<&Word> = own.words[first..last.max(first)].iter().collect();
        // A value made of the question's words is no answer: a name, a
        // code, or a sentence that only repeats the question (a heading).
        let is_question_word = |w: &&Word| terms.question_words.iter().any(|q| word_matches(&w.norm, q));
        if !value_words.is_empty() {
            let content: Vec<&&Word> = value_words.iter().filter(|w| !crate::keywords::is_generic(&w.norm)).collect();
            let own = content.iter().filter(|w| is_question_word(w)).count();
            if found.kind.is_named() && value_words.iter().all(is_question_word) {
                return None;
            }
            if text_kind && found.kind == Kind::Text && !content.is_empty() && own * 10 >= content.len() * 8 {
                return None;
            }
        }
        let len = own.words.len();
        let distance = |hit_word: usize| -> f64 {
            if hit_word < first {
                (first - hit_word) as f64
            } else if hit_word >= last {
                (hit_word + 1 - last) as f64
            } else {
                0.0
            }
        };
        // Hits outside the value on its row; inside count for text answers.
        let row_hits: Vec<(Hit, f64)> =
            own.hits.iter().filter(|h| text_kind || !inside(h.word)).map(|h| (*h, distance(h.word))).collect();
        // The rows before and after in reading order are its neighbours when
        // they sit in its column: in a multi-column block (a signature
        // block's two names, then their two titles) the next row read may be
        // another column's.
        let next_index = found.last_row + 1;
        let has_prev = i > 0 && same_column(rows[i - 1], row);
        let has_next = next_index < rows.len() && same_column(rows[next_index], rows[found.last_row]);
        let prev_hits: Vec<(Hit, f64)> = if has_prev {
            let plen = facts[i - 1].words.len();
            facts[i - 1].hits.iter().map(|h| (*h, (plen - h.word) as f64 + first as f64 + 2.0)).collect()
        } else {
            Vec::new()
        };
        let next_hits: Vec<(Hit, f64)> = if has_next {
            let tail = if found.last_row > i { 0 } else { len.saturating_sub(last) };
            facts[next_index].hits.iter().map(|h| (*h, tail as f64 + h.word as f64 + 2.0)).collect()
        } else {
            Vec::new()
        };
        // Rows inside a multi-row value (a continued sentence).
        let mut inner_hits: Vec<(Hit, f64)> = Vec::new();
        for f in facts.iter().take(found.last_row + 1).skip(i + 1) {
            inner_hits.extend(f.hits.iter().map(|h| (*h, 0.0)));
        }
        let mut labels = self.labels(rows, facts, i, &found, layout);
        // Its place in a table: the column headers (evidence like any
        // label) and the row label, weighed together.
        let cell = tables.cell(self.source.piece(row, found.start), is_value_cell).unwrap_or_default();
        for header in &cell.headers {
            if !labels.iter().any(|l| l.text == header.text) {
                labels.push(Label {
                    words: words_of(&header.text),
                    text: header.text.clone(),
                    header: true,
                    cite: None,
                    distance: 2.0,
                });
            }
        }
        // A figure per share is a unit price, outside the scale the
        // statement states for its totals ("in millions, except per share
        // amounts"): $6.31, not 6.31 million.
        let mut found = found;
        if let AnswerValue::Amount(a) = &mut found.value
            && a.unit.is_some()
            && amount::find_amounts(&found.text).first().is_none_or(|t| t.unit.is_none())
            && (per_share(&row.text)
                || labels.iter().any(|l| per_share(&l.text))
                || statement::label_of(layout, row, found.start).is_some_and(|l| per_share(&l)))
        {
            a.unit = None;
        }
        // The question's phrases (pairs of its terms side by side) on the
        // value's row, and around it.
        let share_of = |pairs: &[(usize, usize)]| {
            if asked.pairs.is_empty() {
                0.0
            } else {
                asked.pairs.iter().filter(|p| pairs.contains(p)).count() as f64 / asked.pairs.len() as f64
            }
        };
        let mut own_pairs: Vec<(usize, usize)> = own.pairs.clone();
        for f in facts.iter().take(found.last_row + 1).skip(i + 1) {
            own_pairs.extend(&f.pairs);
        }
        let pairs_row = share_of(&own_pairs);
        let mut near_pairs = own_pairs;
        if has_prev {
            near_pairs.extend(&facts[i - 1].pairs);
        }
        if has_next {
            near_pairs.extend(&facts[next_index].pairs);
        }
        for label in &labels {
            near_pairs.extend(evidence::term_pairs(&terms.hits(&label.text, &label.words)));
        }
        let pairs_near = share_of(&near_pairs);
        let header_text: String = cell.headers.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join(" ");
        let header_cov = terms.coverage(&terms.hits(&header_text, &words_of(&header_text)), |_| 1.0);
        let row_label_cov =
            cell.row_label.map_or(0.0, |l| terms.coverage(&terms.hits(&l.text, &words_of(&l.text)), |_| 1.0));
        // A cell's whole context: its row label, its column headers and the
        // table's caption together.
        let cell_cov = if cell.headers.is_empty() {
            0.0
        } else {
            let context: String = cell
                .row_label
                .into_iter()
                .chain(cell.headers.iter().copied())
                .chain(cell.caption)
                .map(|l| l.text.as_str())
                .collect::<Vec<_>>()
                .join(" \u{2016} ");
            terms.coverage(&terms.hits(&context, &words_of(&context)), |_| 1.0)
        };
        let mut label_hits: Vec<(Hit, f64)> = Vec::new();
        for label in &labels {
            let hits = terms.hits(&label.text, &label.words);
            label_hits.extend(hits.into_iter().map(|h| (h, label.distance)));
        }
        let only = |v: &[(Hit, f64)]| v.iter().map(|(h, _)| *h).collect::<Vec<_>>();
        let cov_row =
            terms.coverage(&only(&row_hits).into_iter().chain(only(&inner_hits)).collect::<Vec<_>>(), |_| 1.0);
        let near: Vec<(Hit, f64)> = row_hits
            .iter()
            .chain(&prev_hits)
            .chain(&next_hits)
            .chain(&label_hits)
            .chain(&inner_hits)
            .copied()
            .collect();
        let near_hits: Vec<Hit> = near.iter().map(|(h, _)| *h).collect();
        // Each hit discounted by its own distance to the value.
        let cov_near = terms.coverage(&near_hits, |h| {
            let d = near.iter().filter(|(x, _)| x == h).map(|(_, d)| *d).fold(f64::INFINITY, f64::min);
            (-d / 4.0).exp()
        });
        let cov_window = terms.coverage(&near_hits, |_| 1.0);
        let label_cov = terms.coverage(&only(&label_hits), |_| 1.0);
        // Focus words: nearest occurrence around the value.
        let focus_in_value = if asked.focus.is_empty() {
            0.0
        } else {
            f64::from(value_words.iter().any(|w| asked.focus.iter().any(|f| word_matches(&w.norm, f))))
        };
        // Each focus word's nearest occurrence around the value; the
        // feature is their mean nearness, so that one generic word of the
        // focus ("period" of "free look period") weighs a third of it.
        let mut focus_d = vec![f64::INFINITY; asked.focus.len()];
        let mut near_focus = |w: &Word, d: f64| {
            for (k, f) in asked.focus.iter().enumerate() {
                if word_matches(&w.norm, f) {
                    focus_d[k] = focus_d[k].min(d);
                }
            }
        };
        if !asked.focus.is_empty() {
            for (k, w) in own.words.iter().enumerate() {
                if !inside(k) {
                    near_focus(w, distance(k));
                }
            }
            if has_prev {
                let plen = facts[i - 1].words.len();
                for (k, w) in facts[i - 1].words.iter().enumerate() {
                    near_focus(w, (plen - k) as f64 + first as f64 + 2.0);
                }
            }
            if has_next {
                for (k, w) in facts[next_index].words.iter().enumerate() {
                    near_focus(w, len.saturating_sub(last) as f64 + k as f64 + 2.0);
                }
            }
            for label in &labels {
                for w in &label.words {
                    near_focus(w, label.distance);
                }
            }
        }
        let focus_near = if focus_in_value > 0.0 && found.kind.is_named() {
            1.0
        } else if focus_d.is_empty() {
            0.0
        } else {
            focus_d.iter().map(|d| if d.is_finite() { (-d / 3.0).exp() } else { 0.0 }).sum::<f64>()
                / focus_d.len() as f64
        };
        // A term the document defines right after the value: `Equifax Inc.
        // ("Equifax")`, `TruckThat LLC (the "Consultant")`: how a contract
        // names its parties.
        let defined = {
            let tail = if found.last_row > i { "" } else { row.text.get(found.end..).unwrap_or("") };
            let next = rows.get(found.last_row + 1).map_or("", |l| l.text.as_str());
            let tail = if tail.len() < DEFINED_REACH { format!("{tail} {next}") } else { tail.to_owned() };
            f64::from(DEFINED_TERM.is_match(&tail))
        };
        // What follows a number names what it counts or measures ("8
        // parallel attention layers, or heads", "three different ways"):
        // the share of the focus words among the words after the value.
        let focus_after = if asked.focus.is_empty() || last >= len {
            0.0
        } else {
            let after = &own.words[last..(last + AFTER_WORDS).min(len)];
            asked.focus.iter().filter(|f| after.iter().any(|w| word_matches(&w.norm, f))).count() as f64
                / asked.focus.len() as f64
        };
        // The whole focus phrase, its words in a row ("chief executive
        // officer", not "chief financial officer"): on the value's row (by
        // distance), else on the rows around it or in its labels.
        let phrase_at = |words: &[Word]| -> Vec<usize> {
            let f = &asked.focus;
            if f.len() < 2 || words.len() < f.len() {
                return Vec::new();
            }
            (0..=words.len() - f.len())
                .filter(|&at| f.iter().enumerate().all(|(k, t)| word_matches(&words[at + k].norm, t)))
                .collect()
        };
        let mut phrase_d = phrase_at(&own.words)
            .into_iter()
            .map(|at| {
                // From the phrase's last word when it comes before the value.
                let end = at + asked.focus.len();
                if end <= first {
                    (first - end + 1) as f64
                } else if at < first {
                    0.0
                } else {
                    at.saturating_sub(last) as f64 + 1.0
                }
            })
            .fold(f64::INFINITY, f64::min);
        if phrase_d.is_infinite() {
            // A label says it as directly as the row would (the row label
            // of a table cell is the words before it on its printed line),
            // at the label's own distance; the rows around, at three.
            let around = (has_prev && !phrase_at(&facts[i - 1].words).is_empty())
                || (has_next && !phrase_at(&facts[next_index].words).is_empty());
            let label_d = labels
                .iter()
                .filter(|l| !phrase_at(&l.words).is_empty())
                .map(|l| l.distance)
                .fold(if around { 3.0 } else { f64::INFINITY }, f64::min);
            phrase_d = label_d;
        }
        let focus_phrase = if phrase_d.is_finite() { (-phrase_d / 3.0).exp() } else { 0.0 };
        let in_question = if matches!(found.kind.group(), Group::Numeric | Group::Amount | Group::AmountDue) {
            // A figure the question itself writes ("Table 2", "Rung 3",
            // "with 8 heads") names what is asked, it is not the answer.
            let number = match &found.value {
                AnswerValue::Quantity(q) => Some(q.quantity),
                AnswerValue::Amount(a) => Some(a.value),
                _ => None,
            };
            f64::from(number.is_some_and(|n| asked.numbers.iter().any(|q| (q - n).abs() < 1e-9)))
        } else if value_words.is_empty() {
            0.0
        } else {
            value_words.iter().filter(|w| terms.question_words.iter().any(|q| word_matches(&w.norm, q))).count() as f64
                / value_words.len() as f64
        };
        // A figure the question writes is what it asks about, never its
        // answer (issue 15: no span of the question's own words).
        if in_question > 0.0 && matches!(found.kind.group(), Group::Numeric | Group::Amount | Group::AmountDue) {
            return None;
        }
        // Kind cues from the row and labels.
        let mut cue_labels: Vec<(String, bool)> = vec![(label_form(&row.text), false)];
        cue_labels.extend(labels.iter().map(|l| (label_form(&l.text), l.header)));
        let (cue_pos, cue_neg) = kinds::cues(found.kind, &cue_labels, &asked.amount, &asked.date);
        // A financial statement: the value's year column and row label.
        let mut statement_year: Option<u32> = None;
        let mut statement_label_fit = 0.0;
        let mut statement_label: Option<String> = None;
        let statement_feature = statement::grid_over(grids, row).map_or(0.0, |grid| {
            // The row's figures, footnote marks left out ("Special cash
            // dividends per share (1) 0.45 0.51"): the first is the first
            // year column's.
            let figures: Vec<_> = crate::extract::amount::find_amounts(&row.text)
                .into_iter()
                .filter(|t| !crate::extract::number::is_footnote_mark(&row.text, t.start, t.end))
                .collect();
            let first_figure = figures.first().map_or(found.start, |t| t.start);
            let index = figures.iter().position(|t| t.start == found.start).unwrap_or(n);
            let year = if statement::own_label(row, first_figure).is_some() {
                statement::year_by_order(grid, row, index)
            } else {
                grid.year_at(row, statement::figure_x(row, found.start, found.end))
            };
            let Some(year) = year else { return 0.0 };
            statement_year = Some(year);
            let label = statement::label_of(layout, row, found.start).unwrap_or_default();
            let label_words = words_of(&label);
            statement_label_fit = label_fit(&label_words, &asked.focus);
            statement_label = Some(label.clone());
            let supported = !terms.hits(&label, &label_words).is_empty();
            if year == grid.wanted(asked.year) { if supported { 1.0 } else { 0.0 } } else { -1.0 }
        });
        let heading = !asked.heading_of.is_empty() && {
            let line = row.text.trim_start().to_lowercase();
            asked.heading_of.iter().any(|id| {
                line.strip_prefix(id.as_str())
                    .is_some_and(|rest| rest.starts_with(char::is_whitespace) && rest.trim().len() > 1)
            })
        };
        // Constraints in the evidence.
        // The passage up to the row after the value: a table's title and
        // column headers, the clause a sentence belongs to.
        let mut evidence: Vec<String> = Vec::new();
        for f in facts.iter().take((found.last_row + 2).min(rows.len())) {
            evidence.push(f.folded.clone());
        }
        evidence.extend(labels.iter().map(|l| folded(&l.text)));
        evidence.extend(page_head.iter().cloned());
        if let Some(year) = statement_year {
            evidence.push(year.to_string());
        }
        // What the value's own row, its labels and its column neighbours
        // say (a local constraint is read there only). In running text,
        // only the value's own sentence: in "... as our President and Chief
        // Operating Officer. Mr. Kotick is also ...", the title is not
        // Kotick's. A neighbour row counts when the sentence runs into it.
        let (from, to) =
            if found.last_row == i { sentence_around(&row.text, found.start, found.end) } else { (None, None) };
        let mut near: Vec<String> = facts[i..=found.last_row].iter().map(|f| f.folded.clone()).collect();
        if from.is_some() || to.is_some() {
            near[0] = folded(&row.text[from.unwrap_or(0)..to.unwrap_or(row.text.len())]);
        }
        // The words before the value on its row are a label only within its sentence.
        let own_prefix = &row.text[..found.start];
        near.extend(labels.iter().filter(|l| from.is_none() || l.text != own_prefix).map(|l| folded(&l.text)));
        if has_prev && from.is_none() {
            near.push(facts[i - 1].folded.clone());
        }
        if has_next && to.is_none() {
            near.push(facts[next_index].folded.clone());
        }
        // A row that pairs its figures with years ("34%, 31% and 31% ... in
        // 2017, 2018 and 2019") gives this one for its own year only.
        // The sentence is read from the row before when that row does not
        // end one ("PetSmart and Petco accounted for / 36 percent and 14
        // percent, respectively").
        let paired_figures =
            matches!(found.kind.group(), Group::Numeric | Group::Amount | Group::AmountDue) && found.last_row == i;
        let (sentence, shift) = match has_prev.then(|| rows[i - 1].text.trim_end()) {
            Some(prev) if !prev.is_empty() && !prev.ends_with(['.', ':', ';', '?', '!']) => {
                (format!("{prev} {}", row.text), prev.len() + 1)
            }
            _ => (row.text.clone(), 0),
        };
        let row_year =
            if paired_figures { respective::year_of(&sentence, found.start + shift, found.end + shift) } else { None };
        let other_year = match (row_year, &asked.sole_year) {
            (Some(year), Some((wanted, text))) if year != *wanted => Some(text),
            _ => None,
        };
        // "PetSmart and Petco accounted for 36 percent and 14 percent,
        // respectively": 14 percent is Petco's, not PetSmart's.
        let respectively = paired_figures
            && (own.folded.contains("respectively") || (has_next && facts[next_index].folded.contains("respectively")));
        let other_name = |name: &str| {
            respective::goes_with_name(&sentence, found.start + shift, found.end + shift, name, respectively)
                == Some(false)
        };
        let missing: Vec<String> = asked
            .constraints
            .iter()
            .filter(|c| {
                !c.names_document
                    && !c.caption_pages.contains(&passage.page)
                    && !answerable::found_in(c, if c.local { &near } else { &evidence })
                    || other_year == Some(&c.text)
                    || other_name(&c.text)
            })
            .map(|c| c.text.clone())
            .collect();
        let row_chars = row.text.trim().chars().count().max(1);
        let features = Features {
            fit: found.fit,
            cov_row,
            cov_near,
            cov_window,
            cov_passage: 0.0,
            cov_section: 0.0,
            focus_near,
            focus_phrase,
            focus_after,
            defined,
            focus_in_value,
            label_cov,
            value_cell: f64::from(found_covers_row(row, &found)),
            in_question,
            rank: 1.0 / (1.0 + rank as f64),
            repeat: 0.0,
            constraints: 1.0,
            cue_pos,
            cue_neg,
            currency: f64::from(found.currency_written),
            currency_match: f64::from(matches!(
                (&found.value, &asked.currency),
                (AnswerValue::Amount(a), Some(want)) if a.currency.as_deref() == Some(want.as_str())
            )),
            statement: if asked.names_part || asked.year.is_some() {
                statement_feature
            } else {
                statement_feature.min(0.0)
            },
            heading: f64::from(heading),
            running: f64::from(self.stats.is_running(&own.folded)),
            row_len: ((1.0 + len as f64).ln() / 60f64.ln()).min(1.0),
            position: row.text[..found.start].chars().count() as f64 / row_chars as f64,
            first_in_row: f64::from(n == 0),
            bias_kind: f64::from(
                matches!(
                    found.kind,
                    Kind::Count | Kind::Percentage | Kind::Amount | Kind::Date | Kind::Duration | Kind::Boolean
                ) || found.kind.is_named(),
            ),
            kind_other: f64::from(found.kind != asked.kind),
            header_cov,
            cell_both: header_cov.min(row_label_cov),
            cell_cov,
            pairs_row,
            pairs_near,
            ..Features::default()
        };
        // The label row cited with the value: the nearest one inside the
        // passage, at most three lines away.
        let label_row = labels
            .iter()
            .filter_map(|l| l.cite)
            .filter(|id| id.abs_diff(row.line_id) <= 3)
            .min_by_key(|id| id.abs_diff(row.line_id));
        let last_line = rows[found.last_row].line_id;
        Some(Candidate {
            kind: found.kind,
            key: value_key(&found.value),
            value: found.value,
            text: found.text,
            rank,
            page: passage.page,
            row: row.line_id,
            last_row: last_line,
            label_row,
            start: found.start,
            end: found.end,
            features,
            log_odds: 0.0,
            probability: 0.0,
            missing,
            list: None,
            label_fit: statement_label_fit,
            statement_label,
        })
    }
}

/// Whether a label speaks of a figure per share: "Basic earnings per
/// share", "dividends declared per common share", "per ordinary share".
/// The scale note itself ("in millions, except per share amounts") is no
/// such label.
fn per_share(text: &str) -> bool {
    if amount::scale_cue(text).is_some() {
        return false;
    }
    let words: Vec<String> = words_of(text).into_iter().map(|w| w.norm).collect();
    // "except per share": the scale note's tail, split off its line.
    !words.iter().any(|w| w == "except")
        && words.iter().enumerate().any(|(k, w)| {
            w == "per" && words[k + 1..].iter().take(3).any(|n| n == "share" || n == "shares" || n == "unit")
        })
}

/// How well a statement row's label names the asked line item: the F1 of
/// its words against the focus words ("total assets" fits the row "Total
/// assets" 1.0 and "Total current assets" 0.8).
fn label_fit(label: &[Word], focus: &[String]) -> f64 {
    let words: Vec<&str> = label
        .iter()
        .map(|w| w.norm.as_str())
        .filter(|w| w.chars().any(char::is_alphabetic) && !is_generic(w))
        .collect();
    if words.is_empty() || focus.is_empty() {
        return 0.0;
    }
    let found = words.iter().filter(|w| focus.iter().any(|f| word_matches(w, f))).count() as f64;
    let covered = focus.iter().filter(|f| words.iter().any(|w| word_matches(w, f))).count() as f64;
    let (precision, recall) = (found / words.len() as f64, covered / focus.len() as f64);
    if precision + recall == 0.0 { 0.0 } else { 2.0 * precision * recall / (precision + recall) }
}

/// The bounds of the sentence holding `start..end` on a row: where it opens
/// when a sentence ends before the value on the row, and where it closes
/// when one ends after it (`None`: it runs on from the row before, or into
/// the row after). A sentence ends at ".", "?" or "!" after a word of four
/// letters or more, before a space: "Officer. Mr. Kotick" ends one after
/// "Officer", not after "Mr." or an initial.
fn sentence_around(text: &str, start: usize, end: usize) -> (Option<usize>, Option<usize>) {
    let mut stops = Vec::new();
    for (at, c) in text.char_indices() {
        if !matches!(c, '.' | '?' | '!') || !text[at + 1..].starts_with(char::is_whitespace) {
            continue;
        }
        let word = text[..at].rsplit(|c: char| !c.is_alphanumeric()).next().unwrap_or("");
        if word.chars().count() >= 4 && word.chars().all(char::is_alphabetic) {
            stops.push(at + 1);
        }
    }
    (stops.iter().copied().filter(|&s| s <= start).max(), stops.iter().copied().find(|&s| s >= end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_reads_its_own_sentence_on_the_row() {
        let row = "our President and Chief Operating Officer. Mr. Kotick is also a member of the board of";
        let at = row.find("Kotick").unwrap();
        let (from, to) = sentence_around(row, at, at + "Kotick".len());
        assert_eq!(&row[from.unwrap()..], " Mr. Kotick is also a member of the board of");
        assert_eq!(to, None, "the sentence runs on to the next row");
        let row = "Robert A. Kotick, Chief Executive Officer of Activision Blizzard";
        assert_eq!(sentence_around(row, 9, 15), (None, None));
    }

    #[test]
    fn a_row_label_fits_the_line_item_it_names() {
        let focus = |f: &str| -> Vec<String> { words_of(f).into_iter().map(|w| w.norm).collect() };
        let fit = |label: &str, f: &str| label_fit(&words_of(label), &focus(f));
        assert_eq!(fit("Total assets", "total assets"), 1.0);
        assert!((fit("Total current assets", "total assets") - 0.8).abs() < 1e-9);
        assert!(fit("Total current assets", "total current assets") > fit("Total assets", "total current assets"));
        assert_eq!(fit("Goodwill", "total assets"), 0.0);
        assert_eq!(fit("Total assets", ""), 0.0);
    }
}
