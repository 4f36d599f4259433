//! The satellite tables: the project's vocabulary kept as data, next to the
//! code that reads it. Six CSV files (columns documented in each file's
//! header comment): `answer_types.csv`, `answer_shapes.csv`, `concepts.csv`,
//! `concept_keywords.csv` (the expert dictionary), `model_tiers.csv` and
//! `models.csv`.
//!
//! [`Satellites`] loads them once and checks every foreign key
//! (concept_keywords.concept → concepts, answer_types.default_model and
//! concepts.default_model → models, models.tier → model_tiers) and every
//! enumerated value; the first problem is a [`TableError`] naming the file,
//! the row and the column. [`Satellites::from_dir`] reads a project's
//! directory: each file present there replaces the built-in one.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

use docintel_schema::text::normalize;
use docintel_schema::{ANSWER_REGISTRY, AnswerContext, AnswerShape, ChunkStrategy};
use regex::Regex;

use crate::dictionary::{DictionaryError, ExpertDictionary};
use crate::table::{Row, Table, TableError};

/// The file names, as found in `data/` and in an override directory.
pub const ANSWER_TYPES_FILE: &str = "answer_types.csv";
/// See [`ANSWER_TYPES_FILE`].
pub const ANSWER_SHAPES_FILE: &str = "answer_shapes.csv";
/// See [`ANSWER_TYPES_FILE`].
pub const CONCEPTS_FILE: &str = "concepts.csv";
/// See [`ANSWER_TYPES_FILE`].
pub const CONCEPT_KEYWORDS_FILE: &str = "concept_keywords.csv";
/// See [`ANSWER_TYPES_FILE`].
pub const MODEL_TIERS_FILE: &str = "model_tiers.csv";
/// See [`ANSWER_TYPES_FILE`].
pub const MODELS_FILE: &str = "models.csv";

const BUILTIN: [(&str, &str); 6] = [
    (ANSWER_TYPES_FILE, include_str!("../data/answer_types.csv")),
    (ANSWER_SHAPES_FILE, include_str!("../data/answer_shapes.csv")),
    (CONCEPTS_FILE, include_str!("../data/concepts.csv")),
    (CONCEPT_KEYWORDS_FILE, include_str!("../data/concept_keywords.csv")),
    (MODEL_TIERS_FILE, include_str!("../data/model_tiers.csv")),
    (MODELS_FILE, include_str!("../data/models.csv")),
];

/// One row of `answer_types.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerTypeRow {
    /// The type name (`amount`, `iban`, ...).
    pub name: String,
    /// Regex over the question wording that signals the type, if the type is
    /// not recognised by the built-in rules.
    pub question_cue: Option<String>,
    /// Nouns that make the type when they head the noun phrase a question
    /// asks for (lower case, in file order).
    pub head_nouns: Vec<String>,
    /// Regex confirming a value of the type in a document line.
    pub retrieval_patterns: Option<String>,
    /// The value kind of the answer schema (`text`, `amount`, ...).
    pub output_schema_ref: String,
    /// The model for this type, if it has its own.
    pub default_model: Option<String>,
    /// One sentence.
    pub definition: String,
}

/// One row of `answer_shapes.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerShapeRow {
    /// The shape.
    pub shape: AnswerShape,
    /// Its chunk strategy by default.
    pub default_chunk_strategy: ChunkStrategy,
    /// Its answer context by default.
    pub default_answer_context: AnswerContext,
    /// One sentence.
    pub definition: String,
}

/// One row of `concepts.csv`; `None` overrides fall through the cascade.
#[derive(Debug, Clone, PartialEq)]
pub struct ConceptRow {
    /// The concept name (`premium`).
    pub name: String,
    /// The kind of document it belongs to.
    pub document_type: String,
    /// Answer-context override.
    pub default_answer_context: Option<AnswerContext>,
    /// Chunk-strategy override.
    pub default_chunk_strategy: Option<ChunkStrategy>,
    /// Model override.
    pub default_model: Option<String>,
    /// Generic words that may refer to the concept, folded (`limit`).
    pub broader_terms: Vec<String>,
    /// One sentence.
    pub definition: String,
}

/// One row of `model_tiers.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelTierRow {
    /// `nano`, `mini`, `standard`, `reasoning`.
    pub tier: String,
    /// Cost relative to the cheapest tier.
    pub relative_cost: f64,
    /// Latency relative to the fastest tier.
    pub relative_latency: f64,
    /// What the tier is for.
    pub use_case: String,
}

/// One row of `models.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRow {
    /// The name sent to the server.
    pub model: String,
    /// `openai`, `llama.cpp`, ...
    pub provider: String,
    /// A tier of `model_tiers.csv`.
    pub tier: String,
    /// Context window in tokens.
    pub context_window: u64,
    /// Whether the server enforces a JSON Schema.
    pub structured_output: bool,
    /// USD per million input tokens (list price, to be checked).
    pub price_in_per_1m: f64,
    /// USD per million output tokens (list price, to be checked).
    pub price_out_per_1m: f64,
    /// Free text.
    pub notes: String,
}

/// Why the satellite tables could not be loaded.
#[derive(Debug)]
#[non_exhaustive]
pub enum SatelliteError {
    /// A file of the override directory could not be read.
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A row is malformed or a foreign key does not resolve.
    Table(TableError),
}

impl fmt::Display for SatelliteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SatelliteError::Read { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            SatelliteError::Table(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for SatelliteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SatelliteError::Read { source, .. } => Some(source),
            SatelliteError::Table(error) => Some(error),
        }
    }
}

impl From<TableError> for SatelliteError {
    fn from(error: TableError) -> Self {
        SatelliteError::Table(error)
    }
}

impl From<DictionaryError> for SatelliteError {
    fn from(error: DictionaryError) -> Self {
        SatelliteError::Table(TableError {
            file: error.file,
            row: error.row,
            column: error.column.to_owned(),
            message: error.message,
        })
    }
}

/// Gives `(file label, text)` for a satellite file name.
type SourceFn<'a> = dyn Fn(&str) -> Result<(String, String), SatelliteError> + 'a;

/// A compiled question cue of an answer type.
#[derive(Debug, Clone)]
pub(crate) struct TypeCue {
    pub(crate) name: String,
    pub(crate) regex: Regex,
}

/// The six satellite tables, loaded and cross-checked.
#[derive(Debug, Clone)]
pub struct Satellites {
    answer_types: Vec<AnswerTypeRow>,
    answer_shapes: Vec<AnswerShapeRow>,
    concepts: Vec<ConceptRow>,
    dictionary: ExpertDictionary,
    model_tiers: Vec<ModelTierRow>,
    models: Vec<ModelRow>,
    cues: Vec<TypeCue>,
    /// Head noun → answer type (the first row listing the noun).
    head_types: std::collections::HashMap<String, String>,
}

impl Satellites {
    /// The tables shipped with docintel (validated by a test).
    pub fn builtin() -> Satellites {
        Satellites::from_texts(&|name| Ok(builtin_source(name)))
            .expect("the built-in satellites are validated by a test")
    }

    /// The tables of `dir`: each of the six files present there replaces
    /// the built-in one; missing files keep the built-in table. Foreign keys
    /// are checked across the mix.
    pub fn from_dir(dir: &Path) -> Result<Satellites, SatelliteError> {
        // A folder that is not there is a mistake, not "use every built-in table".
        if !dir.is_dir() {
            let source = std::io::Error::new(std::io::ErrorKind::NotFound, "no such folder of satellite tables");
            return Err(SatelliteError::Read { path: dir.to_owned(), source });
        }
        Satellites::from_texts(&|name| {
            let path = dir.join(name);
            match std::fs::read_to_string(&path) {
                Ok(text) => Ok((path.display().to_string(), text)),
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(builtin_source(name)),
                Err(source) => Err(SatelliteError::Read { path, source }),
            }
        })
    }

    /// Loads the tables from `(file label, text)` pairs given by `source`
    /// for each file name.
    fn from_texts(source: &SourceFn<'_>) -> Result<Satellites, SatelliteError> {
        let (file, text) = source(MODEL_TIERS_FILE)?;
        let model_tiers = load_model_tiers(&Table::parse(&file, &text, MODEL_TIER_COLUMNS)?)?;
        let (file, text) = source(MODELS_FILE)?;
        let models = load_models(&Table::parse(&file, &text, MODEL_COLUMNS)?, &model_tiers)?;
        let (file, text) = source(ANSWER_SHAPES_FILE)?;
        let answer_shapes = load_answer_shapes(&Table::parse(&file, &text, ANSWER_SHAPE_COLUMNS)?)?;
        let (file, text) = source(ANSWER_TYPES_FILE)?;
        let (answer_types, cues) = load_answer_types(&Table::parse(&file, &text, ANSWER_TYPE_COLUMNS)?, &models)?;
        let (file, text) = source(CONCEPTS_FILE)?;
        let concepts = load_concepts(&Table::parse(&file, &text, CONCEPT_COLUMNS)?, &models)?;
        let (file, text) = source(CONCEPT_KEYWORDS_FILE)?;
        let dictionary = ExpertDictionary::from_csv(&file, &text)?;
        for (row, concept) in dictionary.concept_rows() {
            if !concepts.iter().any(|c| c.name == concept) {
                return Err(SatelliteError::Table(TableError {
                    file: file.clone(),
                    row,
                    column: "concept".to_owned(),
                    message: format!("{concept:?} is not a concept of {CONCEPTS_FILE}"),
                }));
            }
        }
        let mut head_types = std::collections::HashMap::new();
        for row in &answer_types {
            for noun in &row.head_nouns {
                head_types.entry(noun.clone()).or_insert_with(|| row.name.clone());
            }
        }
        Ok(Satellites { answer_types, answer_shapes, concepts, dictionary, model_tiers, models, cues, head_types })
    }

    /// The answer types, in file order.
    pub fn answer_types(&self) -> &[AnswerTypeRow] {
        &self.answer_types
    }

    /// The answer type named `name`.
    pub fn answer_type(&self, name: &str) -> Option<&AnswerTypeRow> {
        self.answer_types.iter().find(|t| t.name == name)
    }

    /// The answer shapes (one row per shape).
    pub fn answer_shapes(&self) -> &[AnswerShapeRow] {
        &self.answer_shapes
    }

    /// The row of `shape`.
    pub fn answer_shape(&self, shape: AnswerShape) -> Option<&AnswerShapeRow> {
        self.answer_shapes.iter().find(|s| s.shape == shape)
    }

    /// The concepts, in file order.
    pub fn concepts(&self) -> &[ConceptRow] {
        &self.concepts
    }

    /// The concept named `name`.
    pub fn concept(&self, name: &str) -> Option<&ConceptRow> {
        self.concepts.iter().find(|c| c.name == name)
    }

    /// The expert dictionary (`concept_keywords.csv`).
    pub fn dictionary(&self) -> &ExpertDictionary {
        &self.dictionary
    }

    /// The model tiers.
    pub fn model_tiers(&self) -> &[ModelTierRow] {
        &self.model_tiers
    }

    /// The models.
    pub fn models(&self) -> &[ModelRow] {
        &self.models
    }

    /// The model named `name`.
    pub fn model(&self, name: &str) -> Option<&ModelRow> {
        self.models.iter().find(|m| m.model == name)
    }

    /// The concepts that `term` (a single generic word such as "limit") may
    /// refer to, in file order.
    pub fn referents(&self, term: &str) -> Vec<&ConceptRow> {
        let folded = normalize(term);
        self.concepts.iter().filter(|c| c.broader_terms.contains(&folded)).collect()
    }

    /// Drops the row of `shape` (a state no file can load into), to test
    /// the last level of the cascades.
    #[cfg(test)]
    pub(crate) fn drop_shape_for_tests(&mut self, shape: AnswerShape) {
        self.answer_shapes.retain(|s| s.shape != shape);
    }

    /// Compiled question cues, in file order.
    pub(crate) fn cues(&self) -> &[TypeCue] {
        &self.cues
    }

    /// The answer type a head noun makes (`rate` → `percentage`), trying
    /// the word as written, then its singular (`heads` → `head`, `parties`
    /// → `party`).
    pub(crate) fn head_type(&self, noun: &str) -> Option<&str> {
        let noun = noun.to_lowercase();
        let mut forms = vec![noun.clone()];
        if let Some(stem) = noun.strip_suffix("ies") {
            forms.push(format!("{stem}y"));
        }
        if let Some(stem) = noun.strip_suffix("es") {
            forms.push(stem.to_owned());
        }
        if let Some(stem) = noun.strip_suffix('s') {
            forms.push(stem.to_owned());
        }
        forms.iter().find_map(|f| self.head_types.get(f)).map(String::as_str)
    }

    /// The same tables with another dictionary (no foreign-key check: a
    /// concept without a row simply has no overrides).
    pub(crate) fn set_dictionary(&mut self, dictionary: ExpertDictionary) {
        self.dictionary = dictionary;
    }
}

fn builtin_source(name: &str) -> (String, String) {
    let text = BUILTIN.iter().find(|(file, _)| *file == name).map(|(_, text)| *text).expect("a known file name");
    (format!("{name} (built in)"), text.to_owned())
}

const ANSWER_TYPE_COLUMNS: &[&str] =
    &["type", "question_cue", "head_nouns", "retrieval_patterns", "output_schema_ref", "default_model", "definition"];
const ANSWER_SHAPE_COLUMNS: &[&str] = &["shape", "default_chunk_strategy", "default_answer_context", "definition"];
const CONCEPT_COLUMNS: &[&str] = &[
    "concept",
    "document_type",
    "default_answer_context",
    "default_chunk_strategy",
    "default_model",
    "broader_terms",
    "definition",
];
const MODEL_TIER_COLUMNS: &[&str] = &["tier", "relative_cost", "relative_latency", "use"];
const MODEL_COLUMNS: &[&str] = &[
    "model",
    "provider",
    "tier",
    "context_window",
    "structured_output",
    "price_in_per_1m",
    "price_out_per_1m",
    "notes",
];

/// A snake_case name, unique in its table.
fn name_cell(table: &Table, row: &Row, column: &str, seen: &mut HashSet<String>) -> Result<String, TableError> {
    let name = table.cell(row, column);
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name.starts_with(|c: char| c.is_ascii_lowercase());
    if !valid {
        return Err(table.error(row, column, format!("{name:?} is not a snake_case name")));
    }
    if !seen.insert(name.to_owned()) {
        return Err(table.error(row, column, format!("{name:?} is listed twice")));
    }
    Ok(name.to_owned())
}

fn optional(cell: &str) -> Option<String> {
    (!cell.is_empty()).then(|| cell.to_owned())
}

/// A snake_case enum value (`sequential`, `line`, ...) through serde.
fn enum_cell<T: serde::de::DeserializeOwned>(
    table: &Table,
    row: &Row,
    column: &str,
    allowed: &str,
) -> Result<Option<T>, TableError> {
    let cell = table.cell(row, column);
    if cell.is_empty() {
        return Ok(None);
    }
    serde_json::from_value(serde_json::Value::String(cell.to_owned()))
        .map(Some)
        .map_err(|_| table.error(row, column, format!("{cell:?} is not one of {allowed}")))
}

fn required<T>(table: &Table, row: &Row, column: &str, value: Option<T>) -> Result<T, TableError> {
    value.ok_or_else(|| table.error(row, column, "empty cell"))
}

fn number_cell(table: &Table, row: &Row, column: &str) -> Result<f64, TableError> {
    let cell = table.cell(row, column);
    match cell.parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        _ => Err(table.error(row, column, format!("{cell:?} is not a non-negative number"))),
    }
}

fn regex_cell(table: &Table, row: &Row, column: &str) -> Result<Option<(String, Regex)>, TableError> {
    let Some(pattern) = optional(table.cell(row, column)) else { return Ok(None) };
    let regex = Regex::new(&format!("(?i){pattern}"))
        .map_err(|e| table.error(row, column, format!("not a valid regex: {e}")))?;
    Ok(Some((pattern, regex)))
}

fn model_cell(table: &Table, row: &Row, column: &str, models: &[ModelRow]) -> Result<Option<String>, TableError> {
    let model = optional(table.cell(row, column));
    if let Some(name) = &model
        && !models.iter().any(|m| &m.model == name)
    {
        return Err(table.error(row, column, format!("{name:?} is not a model of {MODELS_FILE}")));
    }
    Ok(model)
}

fn load_model_tiers(table: &Table) -> Result<Vec<ModelTierRow>, TableError> {
    let mut seen = HashSet::new();
    let mut rows = Vec::new();
    for row in &table.rows {
        rows.push(ModelTierRow {
            tier: name_cell(table, row, "tier", &mut seen)?,
            relative_cost: number_cell(table, row, "relative_cost")?,
            relative_latency: number_cell(table, row, "relative_latency")?,
            use_case: table.cell(row, "use").to_owned(),
        });
    }
    Ok(rows)
}

fn load_models(table: &Table, tiers: &[ModelTierRow]) -> Result<Vec<ModelRow>, TableError> {
    let mut seen = HashSet::new();
    let mut rows = Vec::new();
    for row in &table.rows {
        let model = table.cell(row, "model");
        if model.is_empty() || model.contains(char::is_whitespace) {
            return Err(table.error(row, "model", format!("{model:?} is not a model name")));
        }
        if !seen.insert(model.to_owned()) {
            return Err(table.error(row, "model", format!("{model:?} is listed twice")));
        }
        let tier = table.cell(row, "tier");
        if !tiers.iter().any(|t| t.tier == tier) {
            return Err(table.error(row, "tier", format!("{tier:?} is not a tier of {MODEL_TIERS_FILE}")));
        }
        let window = table.cell(row, "context_window");
        let context_window = match window.parse::<u64>() {
            Ok(n) if n > 0 => n,
            _ => return Err(table.error(row, "context_window", format!("{window:?} is not a token count"))),
        };
        let structured_output = match table.cell(row, "structured_output") {
            "true" => true,
            "false" => false,
            other => return Err(table.error(row, "structured_output", format!("{other:?} is not true or false"))),
        };
        rows.push(ModelRow {
            model: model.to_owned(),
            provider: required(table, row, "provider", optional(table.cell(row, "provider")))?,
            tier: tier.to_owned(),
            context_window,
            structured_output,
            price_in_per_1m: number_cell(table, row, "price_in_per_1m")?,
            price_out_per_1m: number_cell(table, row, "price_out_per_1m")?,
            notes: table.cell(row, "notes").to_owned(),
        });
    }
    Ok(rows)
}

fn load_answer_shapes(table: &Table) -> Result<Vec<AnswerShapeRow>, TableError> {
    let mut rows: Vec<AnswerShapeRow> = Vec::new();
    let names: Vec<&str> = AnswerShape::ALL.iter().map(|s| s.as_str()).collect();
    for row in &table.rows {
        let shape: AnswerShape = required(table, row, "shape", enum_cell(table, row, "shape", &names.join(", "))?)?;
        if rows.iter().any(|r| r.shape == shape) {
            return Err(table.error(row, "shape", format!("{:?} is listed twice", shape.as_str())));
        }
        rows.push(AnswerShapeRow {
            shape,
            default_chunk_strategy: required(
                table,
                row,
                "default_chunk_strategy",
                enum_cell(table, row, "default_chunk_strategy", CHUNK_STRATEGIES)?,
            )?,
            default_answer_context: required(
                table,
                row,
                "default_answer_context",
                enum_cell(table, row, "default_answer_context", ANSWER_CONTEXTS)?,
            )?,
            definition: table.cell(row, "definition").to_owned(),
        });
    }
    if let Some(missing) = AnswerShape::ALL.iter().find(|s| !rows.iter().any(|r| r.shape == **s)) {
        let line = table.rows.last().map_or(1, |r| r.line);
        return Err(TableError {
            file: table.file.clone(),
            row: line,
            column: "shape".to_owned(),
            message: format!("no row for shape {:?}", missing.as_str()),
        });
    }
    Ok(rows)
}

const CHUNK_STRATEGIES: &str = "combined, sequential";
const ANSWER_CONTEXTS: &str = "line, paragraph, page, section, chapter, document";

fn load_answer_types(table: &Table, models: &[ModelRow]) -> Result<(Vec<AnswerTypeRow>, Vec<TypeCue>), TableError> {
    let mut seen = HashSet::new();
    let mut rows = Vec::new();
    let mut cues = Vec::new();
    let kinds: Vec<&str> = {
        let mut kinds: Vec<&str> = ANSWER_REGISTRY.iter().map(|e| e.value.as_str()).collect();
        kinds.dedup();
        kinds
    };
    for row in &table.rows {
        let name = name_cell(table, row, "type", &mut seen)?;
        let cue = regex_cell(table, row, "question_cue")?;
        let pattern = regex_cell(table, row, "retrieval_patterns")?;
        let kind = table.cell(row, "output_schema_ref");
        if !kinds.contains(&kind) {
            return Err(table.error(row, "output_schema_ref", format!("{kind:?} is not one of {}", kinds.join(", "))));
        }
        if let Some((_, regex)) = &cue {
            cues.push(TypeCue { name: name.clone(), regex: regex.clone() });
        }
        let head_nouns: Vec<String> = table.cell(row, "head_nouns").split_whitespace().map(str::to_lowercase).collect();
        rows.push(AnswerTypeRow {
            name,
            question_cue: cue.map(|(p, _)| p),
            head_nouns,
            retrieval_patterns: pattern.map(|(p, _)| p),
            output_schema_ref: kind.to_owned(),
            default_model: model_cell(table, row, "default_model", models)?,
            definition: table.cell(row, "definition").to_owned(),
        });
    }
    if !rows.iter().any(|r| r.name == "text") {
        return Err(TableError {
            file: table.file.clone(),
            row: table.rows.last().map_or(1, |r| r.line),
            column: "type".to_owned(),
            message: "no row for type \"text\", the type every question falls back to".to_owned(),
        });
    }
    Ok((rows, cues))
}

fn load_concepts(table: &Table, models: &[ModelRow]) -> Result<Vec<ConceptRow>, TableError> {
    let mut seen = HashSet::new();
    let mut rows = Vec::new();
    for row in &table.rows {
        let broader_terms: Vec<String> =
            table.cell(row, "broader_terms").split(';').map(normalize).filter(|t| !t.is_empty()).collect();
        if let Some(term) = broader_terms.iter().find(|t| t.contains(' ')) {
            return Err(table.error(row, "broader_terms", format!("{term:?} is not a single word")));
        }
        rows.push(ConceptRow {
            name: name_cell(table, row, "concept", &mut seen)?,
            document_type: table.cell(row, "document_type").to_owned(),
            default_answer_context: enum_cell(table, row, "default_answer_context", ANSWER_CONTEXTS)?,
            default_chunk_strategy: enum_cell(table, row, "default_chunk_strategy", CHUNK_STRATEGIES)?,
            default_model: model_cell(table, row, "default_model", models)?,
            broader_terms,
            definition: table.cell(row, "definition").to_owned(),
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Loads the built-in tables with `file` replaced by `text`, and expects
    /// an error at (`row`, `column`) of that file.
    fn check(file: &str, text: &str, row: usize, column: &str) {
        let result = Satellites::from_texts(&|name| {
            Ok(if name == file { (format!("my/{name}"), text.to_owned()) } else { builtin_source(name) })
        });
        let Err(SatelliteError::Table(error)) = result else {
            panic!("{file}: expected a table error, got {result:?}")
        };
        assert_eq!(
            (error.file.as_str(), error.row, error.column.as_str()),
            (format!("my/{file}").as_str(), row, column),
            "{error}"
        );
        assert!(error.to_string().starts_with(&format!("my/{file}: row {row}, column {column}: ")), "{error}");
    }

    #[test]
    fn the_builtin_tables_load_and_resolve() {
        let satellites = Satellites::builtin();
        let names = |rows: Vec<&str>| rows.join(",");
        assert_eq!(
            names(satellites.answer_types().iter().map(|t| t.name.as_str()).collect()),
            "text,amount,date,boolean,email,url,iban,phone,address,identifier,percentage,duration,year,count,number,role,title,degree,person,organisation,location"
        );
        assert_eq!(satellites.answer_shapes().len(), AnswerShape::ALL.len());
        assert_eq!(
            names(satellites.model_tiers().iter().map(|t| t.tier.as_str()).collect()),
            "nano,mini,standard,reasoning"
        );
        assert!(satellites.model("qwen2.5-coder-1.5b-instruct-q4_k_m").is_some_and(|m| m.provider == "llama.cpp"));
        assert!(satellites.models().iter().all(|m| m.notes.contains("price") || m.notes.contains("No price")));
        assert_eq!(
            satellites.concept("exclusions").and_then(|c| c.default_answer_context),
            Some(AnswerContext::Chapter)
        );
        assert_eq!(
            satellites.cues().iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            [
                "email",
                "url",
                "iban",
                "phone",
                "address",
                "identifier",
                "percentage",
                "duration",
                "year",
                "count",
                "number",
                "role",
                "title",
                "location"
            ]
        );
        assert_eq!(satellites.head_type("rate"), Some("percentage"));
        assert_eq!(satellites.head_type("universities"), Some("organisation"));
        assert_eq!(satellites.head_type("officers"), Some("person"));
        let referents: Vec<&str> = satellites.referents("Limit").iter().map(|c| c.name.as_str()).collect();
        assert_eq!(referents, ["coverage_limit", "sublimit", "deductible", "aggregate_limit"]);
        assert!(satellites.referents("premium").is_empty());
    }

    const TYPES_HEAD: &str =
        "type,question_cue,head_nouns,retrieval_patterns,output_schema_ref,default_model,definition\n";
    const CONCEPTS_HEAD: &str =
        "concept,document_type,default_answer_context,default_chunk_strategy,default_model,broader_terms,definition\n";
    const MODELS_HEAD: &str =
        "model,provider,tier,context_window,structured_output,price_in_per_1m,price_out_per_1m,notes\n";

    #[test]
    fn foreign_keys_must_resolve() {
        check(
            CONCEPT_KEYWORDS_FILE,
            "concept,language,keyword,weight\npremium,en,premium,1\nbonus,en,bonus,1\n",
            3,
            "concept",
        );
        check(ANSWER_TYPES_FILE, &format!("{TYPES_HEAD}text,,,,text,gpt-9,x\n"), 2, "default_model");
        check(CONCEPTS_FILE, &format!("{CONCEPTS_HEAD}premium,policy,,,gpt-9,,x\n"), 2, "default_model");
        check(MODELS_FILE, &format!("{MODELS_HEAD}gpt-4.1-mini,openai,huge,1000,true,0,0,x\n"), 2, "tier");
    }

    #[test]
    fn bad_values_name_file_row_and_column() {
        check(
            ANSWER_TYPES_FILE,
            &format!("# c\n{TYPES_HEAD}text,,,,text,,x\nmoney,\"(\",,,amount,,x\n"),
            4,
            "question_cue",
        );
        check(ANSWER_TYPES_FILE, &format!("{TYPES_HEAD}text,,,,prose,,x\n"), 2, "output_schema_ref");
        check(ANSWER_TYPES_FILE, &format!("{TYPES_HEAD}amount,,,,amount,,x\n"), 2, "type");
        check(ANSWER_TYPES_FILE, &format!("{TYPES_HEAD}text,,,,text,,x\nText,,,,text,,x\n"), 3, "type");
        check(ANSWER_TYPES_FILE, "type,cue\n", 1, "header");
        let shapes = "shape,default_chunk_strategy,default_answer_context,definition\n";
        check(ANSWER_SHAPES_FILE, &format!("{shapes}single,sequential,sentence,x\n"), 2, "default_answer_context");
        check(ANSWER_SHAPES_FILE, &format!("{shapes}single,parallel,line,x\n"), 2, "default_chunk_strategy");
        check(ANSWER_SHAPES_FILE, &format!("{shapes}single,sequential,line,x\n"), 2, "shape");
        check(ANSWER_SHAPES_FILE, &format!("{shapes}list,combined,line,x\n"), 2, "shape");
        check(CONCEPTS_FILE, &format!("{CONCEPTS_HEAD}premium,policy,everything,,,,x\n"), 2, "default_answer_context");
        check(CONCEPTS_FILE, &format!("{CONCEPTS_HEAD}premium,policy,,,,\"the limit\",x\n"), 2, "broader_terms");
        check(CONCEPTS_FILE, &format!("{CONCEPTS_HEAD}premium,policy,,,,\n"), 2, "row");
        check(MODELS_FILE, &format!("{MODELS_HEAD}m,openai,nano,many,true,0,0,x\n"), 2, "context_window");
        check(MODELS_FILE, &format!("{MODELS_HEAD}m,openai,nano,10,yes,0,0,x\n"), 2, "structured_output");
        check(MODELS_FILE, &format!("{MODELS_HEAD}m,openai,nano,10,true,-1,0,x\n"), 2, "price_in_per_1m");
        check(MODEL_TIERS_FILE, "tier,relative_cost,relative_latency,use\nnano,cheap,1,x\n", 2, "relative_cost");
        check(CONCEPT_KEYWORDS_FILE, "concept,language,keyword,weight\npremium,english,prime,1\n", 2, "language");
    }

    #[test]
    fn an_override_directory_replaces_only_the_files_it_holds() {
        let tmp = docintel_test_support::temp_dir("satellites");
        let dir = tmp.path().to_path_buf();
        let types = format!(
            "{TYPES_HEAD}text,,,,text,,x\npolicy_number,\"\\bpolicy\\s+(?:number|no)\\b\",,,text,gpt-4.1-nano,x\n"
        );
        std::fs::write(dir.join(ANSWER_TYPES_FILE), types).unwrap();
        let satellites = Satellites::from_dir(&dir).unwrap();
        assert_eq!(satellites.answer_types().len(), 2);
        assert_eq!(satellites.concepts().len(), Satellites::builtin().concepts().len());
        std::fs::write(dir.join(MODELS_FILE), format!("{MODELS_HEAD}local,llama.cpp,nano,4096,false,0,0,x\n")).unwrap();
        let error = Satellites::from_dir(&dir).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!("{}: row 3, column default_model:", dir.join(ANSWER_TYPES_FILE).display())),
            "{error}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
        // A folder that is not there is an error naming it (issue 16: it silently meant "the
        // built-in tables").
        let missing = Satellites::from_dir(Path::new("/nonexistent/docintel/satellites")).unwrap_err().to_string();
        assert!(
            missing.contains("/nonexistent/docintel/satellites") && missing.contains("no such folder"),
            "{missing}"
        );
    }
}
