//! The deterministic router (`keyword-router/0.1`): BM25-style keyword
//! evidence per branch (body lines, titles weighted higher, sub-titles in
//! between); when the question carries an exact identifier, only the
//! branches holding the most of them compete.

use std::convert::Infallible;

use docintel_schema::{ParsedQuestion, Router, RouterLine, RouterPick};

use super::RoutingConfig;
use crate::bm25::{B, K1, idf};

/// The deterministic router (`keyword-router/0.1`): scores each line from its
/// keyword evidence and picks the best branch plus near-ties.
#[derive(Debug, Clone, Copy)]
pub struct KeywordRouter {
    max_picks: usize,
    near_tie: f64,
}

/// A keyword in the entry's own title counts this much more than body text.
const TITLE_WEIGHT: f64 = 3.0;
/// A keyword in a title below the entry.
const SUB_TITLE_WEIGHT: f64 = 1.5;

fn saturate(tf: f64, length_ratio: f64) -> f64 {
    if tf <= 0.0 {
        return 0.0;
    }
    tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length_ratio))
}

impl KeywordRouter {
    /// A router picking at most `max_picks` branches, near-ties within
    /// `near_tie` of the best score.
    pub fn new(config: RoutingConfig) -> KeywordRouter {
        KeywordRouter { max_picks: config.max_picks.max(1), near_tie: config.near_tie }
    }

    /// The score of each line, BM25-style over the lines of one level.
    pub fn scores(lines: &[RouterLine]) -> Vec<f64> {
        let n = lines.len() as f64;
        let avg_len = (lines.iter().map(|l| f64::from(l.n_lines)).sum::<f64>() / n.max(1.0)).max(1.0);
        let n_keywords = lines.first().map_or(0, |l| l.evidence.len());
        let mut scores = vec![0.0; lines.len()];
        for k in 0..n_keywords {
            let df_body = lines.iter().filter(|l| l.evidence[k].in_body > 0).count() as f64;
            let df_title = lines.iter().filter(|l| l.evidence[k].in_title).count() as f64;
            let df_sub = lines.iter().filter(|l| l.evidence[k].in_sub_titles > 0).count() as f64;
            for (score, line) in scores.iter_mut().zip(lines) {
                let e = &line.evidence[k];
                let ratio = f64::from(line.n_lines) / avg_len;
                let mut s = idf(n, df_body) * saturate(f64::from(e.in_body), ratio);
                if e.in_title {
                    s += TITLE_WEIGHT * idf(n, df_title);
                }
                s += SUB_TITLE_WEIGHT * idf(n, df_sub) * saturate(f64::from(e.in_sub_titles), 1.0);
                *score += e.weight * s;
            }
        }
        scores
    }
}

impl Router for KeywordRouter {
    type Error = Infallible;

    fn name(&self) -> String {
        "keyword-router/0.1".to_owned()
    }

    fn route(&self, lines: &[RouterLine], _question: &ParsedQuestion) -> Result<RouterPick, Infallible> {
        // Exact identifiers are identity, not meaning: only the branches
        // holding the most of the question's identifiers compete (a running
        // header naming the standard is in every branch; the control asked
        // for is not).
        let identifiers = |l: &RouterLine| {
            l.evidence.iter().filter(|e| e.identifier && (e.in_title || e.in_sub_titles > 0 || e.in_body > 0)).count()
        };
        let most = lines.iter().map(identifiers).max().unwrap_or(0);
        let with_identifier = if most == 0 { 0 } else { lines.iter().filter(|l| identifiers(l) == most).count() };
        let scores = Self::scores(lines);
        let mut order: Vec<usize> = (0..lines.len())
            .filter(|&i| most == 0 || identifiers(&lines[i]) == most)
            .filter(|&i| scores[i] > 0.0)
            .collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        let Some(&best) = order.first() else {
            return Ok(RouterPick {
                ids: vec![],
                reason: "no keyword evidence in any branch at this level".to_owned(),
            });
        };
        let cut = scores[best] * self.near_tie;
        let picked: Vec<usize> = order.into_iter().take_while(|&i| scores[i] >= cut).take(self.max_picks).collect();
        let mut reasons = Vec::new();
        if with_identifier > 0 {
            reasons.push(format!("{with_identifier} of {} branches hold {most} question identifier(s)", lines.len()));
        }
        for &i in &picked {
            let line = &lines[i];
            let in_title: Vec<&str> = line.evidence.iter().filter(|e| e.in_title).map(|e| e.keyword.as_str()).collect();
            let in_sub: Vec<&str> =
                line.evidence.iter().filter(|e| e.in_sub_titles > 0).map(|e| e.keyword.as_str()).collect();
            let mut why = format!("[{}] score {:.2}", line.id, scores[i]);
            if !in_title.is_empty() {
                why.push_str(&format!(", title has {in_title:?}"));
            }
            if !in_sub.is_empty() {
                why.push_str(&format!(", titles below have {in_sub:?}"));
            }
            why.push_str(&format!(", {} keyword hits inside", line.keyword_hits));
            reasons.push(why);
        }
        if picked.len() > 1 {
            reasons.push(format!("near-ties within {:.0}% of the best kept", self.near_tie * 100.0));
        }
        Ok(RouterPick { ids: picked.iter().map(|&i| lines[i].id).collect(), reason: reasons.join("; ") })
    }
}

#[cfg(test)]
mod tests {
    use docintel_schema::KeywordEvidence;

    use super::*;
    use crate::test_support::question;

    #[test]
    fn titles_weigh_more_than_body_mentions() {
        let line = |id: u32, in_title: bool, in_body: u32| RouterLine {
            id,
            title: String::new(),
            start_page: 1,
            end_page: 1,
            n_children: 0,
            n_lines: 10,
            keyword_hits: in_body,
            show_hits: true,
            evidence: vec![KeywordEvidence {
                keyword: "audit".into(),
                weight: 1.0,
                identifier: false,
                in_title,
                in_sub_titles: 0,
                in_body,
            }],
        };
        let lines = [line(0, false, 3), line(1, true, 1), line(2, false, 0)];
        let pick = KeywordRouter::new(RoutingConfig::STANDARD).route(&lines, &question(&[], "text", &[])).unwrap();
        assert_eq!(pick.ids, vec![1], "{pick:?}");
        assert!(lines[1].render().contains("1 keyword hits"));
    }
}
