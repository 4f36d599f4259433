//! The learned second opinion on a question's answer type.
//!
//! The rules ([`crate::classify`]) type a question from its cue phrases and
//! the head noun of the phrase it asks for; when neither says anything they
//! fall back to `text`, and a head noun the tables do not list ("What Gross
//! Payment VOLUME did Square process") types nothing. This model reads the
//! question's words (a multinomial logistic regression, fitted by `cargo
//! xtask fit-types` with linfa on the tuning questions, committed as
//! `data/type_model.json`) and, only where the rules fell back to `text`,
//! gives its type when its probability reaches the threshold chosen on the
//! tuning folds. Its features are plain strings, so the fitting code
//! and this module share [`type_features`] and nothing else.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::lexicon::tokenize;

/// The fitted model, as `cargo xtask fit-types` writes it.
#[derive(Debug, Clone, Deserialize)]
pub struct TypeModel {
    /// The answer types it chooses among (rows of the answer types table).
    pub classes: Vec<String>,
    /// Feature name → one weight per class.
    pub weights: HashMap<String, Vec<f64>>,
    /// One intercept per class.
    pub intercepts: Vec<f64>,
    /// The model overrides the rules when its best other type reaches this
    /// probability.
    pub threshold: f64,
    /// How it was fitted (the command, the regularisation, the figures), for
    /// people reading the file.
    #[serde(default)]
    pub provenance: serde_json::Value,
}

/// The model's verdict on one question.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeVerdict {
    /// The most probable type.
    pub answer_type: String,
    /// Its probability.
    pub probability: f64,
}

const BUILTIN: &str = include_str!("../data/type_model.json");

/// The rules' type when nothing in the wording types the question.
pub const FALLBACK: &str = "text";

impl TypeModel {
    /// The committed model; `None` when the file holds no classes (a model
    /// not fitted yet leaves the rules alone).
    pub fn builtin() -> Option<&'static TypeModel> {
        static MODEL: OnceLock<Option<TypeModel>> = OnceLock::new();
        MODEL
            .get_or_init(|| {
                let model: TypeModel = serde_json::from_str(BUILTIN).expect("data/type_model.json is valid");
                (!model.classes.is_empty()).then_some(model)
            })
            .as_ref()
    }

    /// The most probable type of `text`, which the rules typed `rule_type`.
    pub fn predict(&self, text: &str, rule_type: &str) -> TypeVerdict {
        let mut scores = self.intercepts.clone();
        for feature in type_features(text, rule_type) {
            if let Some(weights) = self.weights.get(&feature) {
                for (score, w) in scores.iter_mut().zip(weights) {
                    *score += w;
                }
            }
        }
        let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let total: f64 = scores.iter().map(|s| (s - max).exp()).sum();
        let (best, score) =
            scores.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map(|(i, s)| (i, *s)).unwrap_or((0, max));
        TypeVerdict { answer_type: self.classes[best].clone(), probability: (score - max).exp() / total }
    }

    /// The type to use when the rules fell back to `text` (they had no
    /// opinion): the model's when it names another type with a probability
    /// at the threshold or above. A type the rules did give stays: a model
    /// fitted on a few hundred questions must not overrule a cue or a head
    /// noun ("Wann wurde die Rechnung ausgestellt?" stays a date).
    pub fn decide(&self, text: &str, rule_type: &str) -> Option<TypeVerdict> {
        if rule_type != FALLBACK {
            return None;
        }
        let verdict = self.predict(text, rule_type);
        (verdict.answer_type != rule_type && verdict.probability >= self.threshold).then_some(verdict)
    }
}

/// The features of a question for the type model: its lower-cased words,
/// adjacent word pairs, the first two words (where the wh-word sits), and
/// the rules' type. Digits are folded (`2021` → `0000`) so a year or a
/// figure is one feature whatever its value.
pub fn type_features(text: &str, rule_type: &str) -> Vec<String> {
    let words: Vec<String> = tokenize(text)
        .iter()
        .map(|t| t.lower().chars().map(|c| if c.is_ascii_digit() { '0' } else { c }).collect())
        .collect();
    let mut out = Vec::with_capacity(words.len() * 2 + 4);
    out.push(format!("rule={rule_type}"));
    for (i, word) in words.iter().take(2).enumerate() {
        out.push(format!("first{i}={word}"));
    }
    for word in &words {
        out.push(format!("w={word}"));
    }
    for pair in words.windows(2) {
        out.push(format!("p={} {}", pair[0], pair[1]));
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_fold_digits_and_carry_the_rules_type() {
        let f = type_features("What were revenues in 2021?", "text");
        assert!(f.contains(&"rule=text".to_owned()));
        assert!(f.contains(&"first0=what".to_owned()));
        assert!(f.contains(&"w=0000".to_owned()));
        assert!(f.contains(&"p=in 0000".to_owned()));
        assert!(!f.iter().any(|x| x.contains("2021")));
    }

    #[test]
    fn the_model_overrides_only_above_its_threshold() {
        let model = TypeModel {
            classes: vec!["text".into(), "amount".into()],
            weights: HashMap::from([("w=revenues".to_owned(), vec![0.0, 3.0])]),
            intercepts: vec![0.5, 0.0],
            threshold: 0.8,
            provenance: serde_json::Value::Null,
        };
        let verdict = model.decide("What were revenues?", "text").expect("overrides");
        assert_eq!(verdict.answer_type, "amount");
        assert!(verdict.probability > 0.9);
        assert_eq!(model.decide("What were costs?", "text"), None);
        // Agreeing with the rules is no override, and a type the rules gave stays.
        assert_eq!(model.decide("What were revenues?", "amount"), None);
        assert_eq!(model.decide("What were revenues?", "date"), None);
    }
}
