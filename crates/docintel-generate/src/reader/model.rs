//! The fitted scoring model: one logistic regression per kind group
//! ([`super::kinds::Group`]) over the candidate features
//! ([`super::features::FEATURES`]), and per group the probability under
//! which the reader refuses rather than answer.
//!
//! The weights are data, `data/reader_model.json`, written by `cargo xtask
//! fit-reader --shared ../shared/fixtures` (linfa's logistic regression
//! fitted on the candidates of the *tuning* questions of every gold set, a
//! candidate labelled right when its value matches the gold; thresholds
//! chosen on the same tuning questions). Nothing here is tuned by hand; a
//! model file whose feature list differs from the code's is rejected by a
//! test.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Deserialize;

#[cfg(test)]
use super::features::EVIDENCE;
#[cfg(test)]
use super::features::FEATURES;
use super::features::Features;
use super::kinds::Group;

/// One group's fitted weights.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct GroupModel {
    /// One weight per feature, in [`FEATURES`] order.
    pub(crate) weights: Vec<f64>,
    pub(crate) intercept: f64,
    /// Answers under this confidence are refused.
    pub(crate) threshold: f64,
    /// The confidence of an answer from its best candidate: weights of the
    /// best candidate's log-odds, of its margin over the best other value
    /// and of its [`EVIDENCE`] features, then an intercept
    /// (`sigmoid(a·z + b·margin + Σ dᵢ·eᵢ + c)`; a file of three numbers
    /// reads no evidence).
    #[serde(default = "identity_calibration")]
    pub(crate) calibration: Vec<f64>,
}

fn identity_calibration() -> Vec<f64> {
    vec![1.0, 0.0, 0.0]
}

/// The model file.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ReaderModel {
    /// The feature names the weights are for (checked against the code's by
    /// a test).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) features: Vec<String>,
    pub(crate) groups: BTreeMap<String, GroupModel>,
    /// How the file was made (command, questions, candidates, date).
    #[allow(dead_code)]
    pub(crate) trained: serde_json::Value,
}

/// The model shipped with the crate.
pub(crate) static MODEL: LazyLock<ReaderModel> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../../data/reader_model.json"))
        .expect("data/reader_model.json is valid (tested)")
});

impl ReaderModel {
    fn group(&self, group: Group) -> Option<&GroupModel> {
        self.groups.get(group.as_str())
    }

    /// The log-odds that a candidate with these features is the answer.
    pub(crate) fn log_odds(&self, group: Group, features: &Features) -> f64 {
        let Some(model) = self.group(group) else { return -20.0 };
        let x = features.to_vec();
        model.intercept + model.weights.iter().zip(x.iter()).map(|(w, v)| w * v).sum::<f64>()
    }

    /// The confidence of an answer whose candidate has log-odds `z` and the
    /// [`EVIDENCE`] features `evidence`, and whose best other value has
    /// log-odds `runner_up`.
    pub(crate) fn confidence(&self, group: Group, z: f64, runner_up: Option<f64>, evidence: &[f64]) -> f64 {
        let Some(model) = self.group(group) else { return 0.0 };
        let sigmoid = |v: f64| 1.0 / (1.0 + (-v).exp());
        let margin = sigmoid(z) - sigmoid(runner_up.unwrap_or(z - 10.0));
        let c = &model.calibration;
        let Some((&intercept, weights)) = c.split_last() else { return sigmoid(z) };
        let inputs = [z, margin].into_iter().chain(evidence.iter().copied());
        sigmoid(intercept + weights.iter().zip(inputs).map(|(w, x)| w * x).sum::<f64>())
    }

    /// The refusal threshold of a group.
    pub(crate) fn threshold(&self, group: Group) -> f64 {
        self.group(group).map_or(0.5, |m| m.threshold)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_file_matches_the_features() {
        let model = &*MODEL;
        let names: Vec<&str> = model.features.iter().map(String::as_str).collect();
        assert_eq!(names, FEATURES, "refit with `cargo xtask fit-reader` after changing the features");
        for group in Group::ALL {
            let g = model.group(group).unwrap_or_else(|| panic!("no model for group {}", group.as_str()));
            assert_eq!(g.weights.len(), FEATURES.len(), "{}", group.as_str());
            assert!((0.0..1.0).contains(&g.threshold), "{}", group.as_str());
            assert_eq!(g.calibration.len(), 3 + EVIDENCE.len(), "{}: z, margin, evidence, intercept", group.as_str());
        }
    }
}
