//! Relevance floor for embedding similarities: judge each hit against the
//! unrelated-pair baseline and cut at a clear gap; the nearest passage is
//! always kept.
//!
//! Cosine similarities of a sentence-embedding model are not calibrated: two
//! unrelated texts rarely score 0, and how far above 0 depends on the model,
//! on text length and on the document. So the floor is relative. The baseline
//! is estimated from the similarities of the query to *every* chunk of the
//! document ([`Baseline::from_background`]): most chunks are unrelated to any
//! one question, so the median is the unrelated-pair level for this query, and
//! the median absolute deviation its spread (both robust to the few real
//! hits). Small documents, where that sample is too thin, use a fixed baseline
//! measured for the model ([`MINILM_UNRELATED`]).

/// Where unrelated pairs sit: a centre and a spread, in cosine units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Baseline {
    /// Typical similarity of an unrelated pair.
    pub center: f32,
    /// Typical deviation of unrelated pairs around `center`.
    pub spread: f32,
}

/// Fixed unrelated-pair baseline of all-MiniLM-L6-v2 for short-query versus
/// passage pairs: measured on the pairs of `tests/embed.rs`
/// (`unrelated_pairs_sit_near_the_fixed_baseline`), centre 0.02 and spread 0.06.
pub const MINILM_UNRELATED: Baseline = Baseline { center: 0.02, spread: 0.06 };

/// Fewer background similarities than this and the fixed baseline is used.
pub const MIN_BACKGROUND: usize = 12;

/// How the floor decides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FloorConfig {
    /// A hit must be this many spreads above the baseline centre.
    pub margin_spreads: f32,
    /// The smallest gap (cosine units) that counts as a clear break.
    pub min_gap: f32,
    /// A gap must also be this many times the mean gap among the kept hits.
    pub gap_ratio: f32,
}

impl FloorConfig {
    /// The settings used by [`EmbeddingRetriever`](super::EmbeddingRetriever).
    pub const STANDARD: FloorConfig = FloorConfig { margin_spreads: 3.0, min_gap: 0.04, gap_ratio: 2.5 };
}

impl Default for FloorConfig {
    fn default() -> Self {
        FloorConfig::STANDARD
    }
}

/// What the floor decided over a list of similarities sorted best first.
#[derive(Debug, Clone, PartialEq)]
pub struct FloorDecision {
    /// How many of the leading similarities to keep (at least 1 when the list
    /// is not empty).
    pub keep: usize,
    /// The similarity a hit had to exceed.
    pub threshold: f32,
    /// The index after which the list was cut at a clear gap, if it was.
    pub gap_cut: Option<usize>,
    /// The baseline used.
    pub baseline: Baseline,
    /// One sentence on why.
    pub reason: String,
}

impl Baseline {
    /// The baseline from a query's similarities to all chunks of a document
    /// (median and scaled median absolute deviation), or `None` when there are
    /// fewer than [`MIN_BACKGROUND`] finite values.
    pub fn from_background(similarities: &[f32]) -> Option<Baseline> {
        let mut values: Vec<f32> = similarities.iter().copied().filter(|v| v.is_finite()).collect();
        if values.len() < MIN_BACKGROUND {
            return None;
        }
        let center = median(&mut values);
        let mut deviations: Vec<f32> = values.iter().map(|v| (v - center).abs()).collect();
        // 1.4826 turns a MAD into a standard deviation for normal data.
        let spread = (median(&mut deviations) * 1.4826).max(0.01);
        Some(Baseline { center, spread })
    }
}

fn median(values: &mut [f32]) -> f32 {
    values.sort_by(f32::total_cmp);
    let n = values.len();
    if n == 0 {
        return 0.0;
    }
    if n.is_multiple_of(2) { (values[n / 2 - 1] + values[n / 2]) / 2.0 } else { values[n / 2] }
}

/// Applies the floor to `sorted` (similarities, best first): keeps the hits
/// more than `margin_spreads` spreads above the baseline, then cuts that list
/// at its largest gap when the gap is clear (at least `min_gap` and
/// `gap_ratio` times the mean gap). The first similarity is always kept.
pub fn apply_floor(sorted: &[f32], baseline: Baseline, config: FloorConfig) -> FloorDecision {
    let threshold = baseline.center + config.margin_spreads * baseline.spread;
    if sorted.is_empty() {
        return FloorDecision { keep: 0, threshold, gap_cut: None, baseline, reason: "no candidates".to_owned() };
    }
    let above = sorted.iter().take_while(|&&s| s > threshold).count();
    if above <= 1 {
        let reason = if above == 0 {
            format!("no hit above the floor {threshold:.3}; nearest passage kept ({:.3})", sorted[0])
        } else {
            format!("one hit above the floor {threshold:.3}")
        };
        return FloorDecision { keep: 1, threshold, gap_cut: None, baseline, reason };
    }
    // Gaps between consecutive hits above the floor.
    let gaps: Vec<f32> = sorted[..above].windows(2).map(|w| w[0] - w[1]).collect();
    let mean_gap = (sorted[0] - sorted[above - 1]) / (above - 1) as f32;
    let (best, gap) =
        gaps.iter().enumerate().fold((0, f32::NEG_INFINITY), |acc, (i, &g)| if g > acc.1 { (i, g) } else { acc });
    if above >= 3 && gap >= config.min_gap && gap >= config.gap_ratio * mean_gap.max(f32::EPSILON) {
        let keep = best + 1;
        return FloorDecision {
            keep,
            threshold,
            gap_cut: Some(keep),
            baseline,
            reason: format!("{above} hits above the floor {threshold:.3}; cut at a gap of {gap:.3} after {keep}"),
        };
    }
    if above == 2 && gap >= config.min_gap && sorted[1] - threshold < gap / config.gap_ratio {
        // Two hits: the second is barely above the floor and far below the first.
        return FloorDecision {
            keep: 1,
            threshold,
            gap_cut: Some(1),
            baseline,
            reason: format!("2 hits above the floor {threshold:.3}; the second is a gap of {gap:.3} below the first"),
        };
    }
    FloorDecision {
        keep: above,
        threshold,
        gap_cut: None,
        baseline,
        reason: format!("{above} hits above the floor {threshold:.3}, no clear gap"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: Baseline = Baseline { center: 0.1, spread: 0.05 };

    #[test]
    fn nearest_is_kept_when_nothing_clears_the_floor() {
        let d = apply_floor(&[0.2, 0.15, 0.1], B, FloorConfig::STANDARD);
        assert_eq!(d.keep, 1);
        assert!((d.threshold - 0.25).abs() < 1e-6);
    }

    #[test]
    fn empty_list_keeps_nothing() {
        assert_eq!(apply_floor(&[], B, FloorConfig::STANDARD).keep, 0);
    }

    #[test]
    fn hits_below_the_floor_are_dropped() {
        let d = apply_floor(&[0.60, 0.58, 0.56, 0.54, 0.2, 0.1], B, FloorConfig::STANDARD);
        assert_eq!(d.keep, 4);
        assert_eq!(d.gap_cut, None);
    }

    #[test]
    fn cut_at_the_largest_clear_gap() {
        let d = apply_floor(&[0.71, 0.69, 0.45, 0.43, 0.41, 0.1], B, FloorConfig::STANDARD);
        assert_eq!(d.keep, 2, "{d:?}");
        assert_eq!(d.gap_cut, Some(2));
    }

    #[test]
    fn even_decline_is_not_cut() {
        let d = apply_floor(&[0.70, 0.65, 0.60, 0.55, 0.50, 0.45, 0.40], B, FloorConfig::STANDARD);
        assert_eq!(d.keep, 7, "{d:?}");
    }

    #[test]
    fn second_hit_just_over_the_floor_far_below_the_first_is_dropped() {
        let d = apply_floor(&[0.75, 0.26], B, FloorConfig::STANDARD);
        assert_eq!(d.keep, 1, "{d:?}");
        let d = apply_floor(&[0.75, 0.70], B, FloorConfig::STANDARD);
        assert_eq!(d.keep, 2, "{d:?}");
    }

    #[test]
    fn background_baseline_is_robust_to_a_few_hits() {
        let mut sims: Vec<f32> = (0..40).map(|i| 0.10 + 0.002 * (i % 10) as f32).collect();
        sims.extend([0.9, 0.85, 0.8]);
        let b = Baseline::from_background(&sims).expect("enough values");
        assert!((b.center - 0.11).abs() < 0.01, "{b:?}");
        assert!(b.spread < 0.02, "{b:?}");
        assert!(Baseline::from_background(&sims[..5]).is_none());
        assert!(Baseline::from_background(&[f32::NAN; 20]).is_none());
    }
}
