//! The default cascades: how much context the answer gets, how generation
//! sends passages and which model it calls. Each is resolved the same way —
//! the matched concept's override, else the answer shape's (or answer
//! type's) default from the satellite tables, else the project fallback —
//! and each result says which level decided, for the parsing notes and
//! `_meta`.

use std::fmt;

use docintel_schema::{AnswerContext, AnswerShape, ChunkStrategy};

use crate::satellites::Satellites;

/// The last level of every cascade: what the project uses when no table
/// says anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectDefaults {
    /// Chunk strategy fallback.
    pub chunk_strategy: ChunkStrategy,
    /// Answer context fallback.
    pub answer_context: AnswerContext,
    /// Model fallback (should be a row of `models.csv`).
    pub model: String,
}

impl Default for ProjectDefaults {
    /// Combined, line, `gpt-4.1-mini`.
    fn default() -> Self {
        ProjectDefaults {
            chunk_strategy: ChunkStrategy::Combined,
            answer_context: AnswerContext::Line,
            model: crate::DEFAULT_MODEL.to_owned(),
        }
    }
}

/// Which level of a cascade decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CascadeLevel {
    /// The question's own wording ("summarize", "why", "on page 3").
    Question,
    /// The matched concept's override (`concepts.csv`).
    Concept,
    /// The answer shape's default (`answer_shapes.csv`).
    AnswerShape,
    /// The answer type's default (`answer_types.csv`).
    AnswerType,
    /// The project fallback ([`ProjectDefaults`]).
    Project,
}

impl CascadeLevel {
    /// A snake_case name for notes and `_meta`.
    pub fn as_str(self) -> &'static str {
        match self {
            CascadeLevel::Question => "question",
            CascadeLevel::Concept => "concept",
            CascadeLevel::AnswerShape => "answer_shape",
            CascadeLevel::AnswerType => "answer_type",
            CascadeLevel::Project => "project",
        }
    }
}

impl fmt::Display for CascadeLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A resolved value and the level that decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved<T> {
    /// The value.
    pub value: T,
    /// Who decided.
    pub level: CascadeLevel,
}

impl<T> Resolved<T> {
    fn at(value: T, level: CascadeLevel) -> Resolved<T> {
        Resolved { value, level }
    }
}

/// Chunk strategy: concept override > shape default > project fallback.
pub fn resolve_chunk_strategy(
    satellites: &Satellites,
    shape: AnswerShape,
    concept: Option<&str>,
    project: &ProjectDefaults,
) -> Resolved<ChunkStrategy> {
    if let Some(value) = concept.and_then(|c| satellites.concept(c)).and_then(|c| c.default_chunk_strategy) {
        return Resolved::at(value, CascadeLevel::Concept);
    }
    if let Some(row) = satellites.answer_shape(shape) {
        return Resolved::at(row.default_chunk_strategy, CascadeLevel::AnswerShape);
    }
    Resolved::at(project.chunk_strategy, CascadeLevel::Project)
}

/// Answer context: concept override > shape default > project fallback.
pub fn resolve_answer_context(
    satellites: &Satellites,
    shape: AnswerShape,
    concept: Option<&str>,
    project: &ProjectDefaults,
) -> Resolved<AnswerContext> {
    if let Some(value) = concept.and_then(|c| satellites.concept(c)).and_then(|c| c.default_answer_context) {
        return Resolved::at(value, CascadeLevel::Concept);
    }
    if let Some(row) = satellites.answer_shape(shape) {
        return Resolved::at(row.default_answer_context, CascadeLevel::AnswerShape);
    }
    Resolved::at(project.answer_context, CascadeLevel::Project)
}

/// Model: concept override > answer-type default > project fallback. The
/// value is a precise model name, never a tier.
pub fn resolve_model(
    satellites: &Satellites,
    answer_type: &str,
    concept: Option<&str>,
    project: &ProjectDefaults,
) -> Resolved<String> {
    if let Some(model) = concept.and_then(|c| satellites.concept(c)).and_then(|c| c.default_model.clone()) {
        return Resolved::at(model, CascadeLevel::Concept);
    }
    if let Some(model) = satellites.answer_type(answer_type).and_then(|t| t.default_model.clone()) {
        return Resolved::at(model, CascadeLevel::AnswerType);
    }
    Resolved::at(project.model.clone(), CascadeLevel::Project)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::satellites::Satellites;

    use AnswerShape::{Listing, NestedJson, Single, Table};
    use CascadeLevel::{AnswerShape as ShapeLevel, AnswerType as TypeLevel, Concept, Project};

    /// The built-in tables, and a variant whose answer types carry no
    /// default model. (A shapes table without a row cannot load; tests
    /// reach the project level of the shape cascades by dropping a row.)
    fn tables() -> (Satellites, Satellites) {
        let builtin = Satellites::builtin();
        // One folder per call: the tests run in parallel, and a shared one
        // was read half-written or removed under another test.
        let tmp = docintel_test_support::temp_dir("cascade");
        let dir = tmp.path();
        std::fs::write(
            dir.join("answer_types.csv"),
            "type,question_cue,head_nouns,retrieval_patterns,output_schema_ref,default_model,definition\ntext,,,,text,,x\namount,,,,amount,,x\n",
        )
        .unwrap();
        let sparse = Satellites::from_dir(dir).unwrap();
        (builtin, sparse)
    }

    fn project() -> ProjectDefaults {
        ProjectDefaults { model: "project-model".to_owned(), ..ProjectDefaults::default() }
    }

    fn check<T: PartialEq + fmt::Debug>(got: Resolved<T>, value: T, level: CascadeLevel) {
        assert_eq!(got, Resolved { value, level });
    }

    #[test]
    fn chunk_strategy_every_path() {
        let (satellites, _) = tables();
        let p = project();
        check(resolve_chunk_strategy(&satellites, Single, Some("exclusions"), &p), ChunkStrategy::Combined, Concept);
        check(resolve_chunk_strategy(&satellites, Single, Some("premium"), &p), ChunkStrategy::Sequential, ShapeLevel);
        check(resolve_chunk_strategy(&satellites, Single, None, &p), ChunkStrategy::Sequential, ShapeLevel);
        check(resolve_chunk_strategy(&satellites, Listing, None, &p), ChunkStrategy::Combined, ShapeLevel);
        check(resolve_chunk_strategy(&satellites, Table, Some("unknown"), &p), ChunkStrategy::Combined, ShapeLevel);
        let mut no_shapes = satellites.clone();
        no_shapes.drop_shape_for_tests(NestedJson);
        let p = ProjectDefaults { chunk_strategy: ChunkStrategy::Sequential, ..project() };
        check(resolve_chunk_strategy(&no_shapes, NestedJson, None, &p), ChunkStrategy::Sequential, Project);
    }

    #[test]
    fn answer_context_every_path() {
        let (satellites, _) = tables();
        let p = project();
        check(resolve_answer_context(&satellites, Listing, Some("exclusions"), &p), AnswerContext::Chapter, Concept);
        check(resolve_answer_context(&satellites, Listing, None, &p), AnswerContext::Section, ShapeLevel);
        check(resolve_answer_context(&satellites, Single, Some("premium"), &p), AnswerContext::Line, ShapeLevel);
        let mut no_shapes = satellites.clone();
        no_shapes.drop_shape_for_tests(Single);
        let p = ProjectDefaults { answer_context: AnswerContext::Paragraph, ..project() };
        check(resolve_answer_context(&no_shapes, Single, None, &p), AnswerContext::Paragraph, Project);
    }

    #[test]
    fn model_every_path() {
        let (satellites, sparse) = tables();
        let p = project();
        let model = |s: &str| s.to_owned();
        check(resolve_model(&satellites, "text", Some("exclusions"), &p), model("gpt-4.1"), Concept);
        check(resolve_model(&satellites, "amount", Some("premium"), &p), model("gpt-4.1-nano"), TypeLevel);
        check(resolve_model(&satellites, "boolean", None, &p), model("gpt-4.1-mini"), TypeLevel);
        check(resolve_model(&satellites, "text", None, &p), model("project-model"), Project);
        check(resolve_model(&satellites, "no_such_type", None, &p), model("project-model"), Project);
        check(resolve_model(&sparse, "amount", None, &p), model("project-model"), Project);
        assert_eq!(CascadeLevel::AnswerShape.to_string(), "answer_shape");
    }
}
