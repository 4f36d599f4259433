//! Caller-supplied answer schemas (a custom schema override, e.g. an
//! Address answer), checked to extend the base contract before use.
//!
//! A custom schema must describe an object carrying the feedback fields the
//! pipeline relies on: `items` (an array of objects, each with `spans`: an
//! array of `{line_start, line_end, page, quote}`), `answer_found` and
//! `complete_answer_found` (booleans) and `warnings` (an array of strings).
//! Other feedback fields (`confidence`, `llm_discovered_keywords`, ...) are
//! optional. Local `$ref`s (`#/$defs/...`, `#/definitions/...`) are followed.
//! The accepted schema is rewritten to OpenAI strict form
//! ([`docintel_schema::registry::to_strict`]) and sent as the response format.
//!
//! ```
//! use docintel_generate::custom::CustomSchema;
//! let bad = serde_json::json!({"type": "object", "properties": {"street": {"type": "string"}}});
//! let error = CustomSchema::from_json("address", bad).unwrap_err();
//! assert!(error.to_string().contains("items"));
//! ```

use std::path::{Path, PathBuf};

use docintel_schema::registry::to_strict;
use serde_json::Value;

/// Why a custom schema was refused.
#[derive(Debug, thiserror::Error)]
pub enum CustomSchemaError {
    /// The file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The schema file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("{}: not JSON: {source}", path.display())]
    Json {
        /// The schema file.
        path: PathBuf,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// A required part of the base contract is missing or has the wrong type.
    #[error(
        "custom schema {name:?} does not extend the base answer contract: {at} {problem} \
         (required: items[].spans[] with line_start, line_end, page, quote; answer_found; complete_answer_found; warnings)"
    )]
    NotBase {
        /// The schema's name.
        name: String,
        /// Where in the schema (`properties.items.items.properties.spans`).
        at: String,
        /// What is wrong.
        problem: String,
    },
}

/// A validated custom answer schema.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomSchema {
    name: String,
    schema: Value,
}

impl CustomSchema {
    /// Reads and validates a JSON Schema file; the name is the schema's
    /// `title`, else the file stem.
    pub fn from_file(path: &Path) -> Result<CustomSchema, CustomSchemaError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| CustomSchemaError::Io { path: path.to_owned(), source })?;
        let value: Value =
            serde_json::from_str(&text).map_err(|source| CustomSchemaError::Json { path: path.to_owned(), source })?;
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "custom".to_owned());
        let name = value.get("title").and_then(Value::as_str).map(str::to_owned).unwrap_or(stem);
        CustomSchema::from_json(&name, value)
    }

    /// Validates `schema` under `name` (sanitised to `[A-Za-z0-9_-]`, as
    /// OpenAI schema names must be).
    pub fn from_json(name: &str, schema: Value) -> Result<CustomSchema, CustomSchemaError> {
        let mut clean: String =
            name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
        if clean.is_empty() {
            clean = "custom".to_owned();
        }
        let fail = |at: &str, problem: &str| CustomSchemaError::NotBase {
            name: clean.clone(),
            at: at.to_owned(),
            problem: problem.to_owned(),
        };
        let root = &schema;
        let props = object_properties(root, root).ok_or_else(|| fail("root", "is not an object with properties"))?;
        for flag in ["answer_found", "complete_answer_found"] {
            let node = props.get(flag).map(|n| resolve(root, n)).ok_or_else(|| fail(flag, "is missing"))?;
            if !has_type(node, "boolean") {
                return Err(fail(flag, "is not a boolean"));
            }
        }
        let warnings = props.get("warnings").map(|n| resolve(root, n)).ok_or_else(|| fail("warnings", "is missing"))?;
        if !has_type(warnings, "array")
            || !warnings.get("items").map(|i| has_type(resolve(root, i), "string")).unwrap_or(false)
        {
            return Err(fail("warnings", "is not an array of strings"));
        }
        let items = props.get("items").map(|n| resolve(root, n)).ok_or_else(|| fail("items", "is missing"))?;
        let item = match (has_type(items, "array"), items.get("items")) {
            (true, Some(item)) => item,
            _ => return Err(fail("items", "is not an array")),
        };
        let item_props =
            object_properties(root, item).ok_or_else(|| fail("items.items", "is not an object with properties"))?;
        let spans =
            item_props.get("spans").map(|n| resolve(root, n)).ok_or_else(|| fail("items.items.spans", "is missing"))?;
        let span = match (has_type(spans, "array"), spans.get("items")) {
            (true, Some(span)) => span,
            _ => return Err(fail("items.items.spans", "is not an array")),
        };
        let span_props = object_properties(root, span)
            .ok_or_else(|| fail("items.items.spans.items", "is not an object with properties"))?;
        for (field, kind) in
            [("line_start", "integer"), ("line_end", "integer"), ("page", "integer"), ("quote", "string")]
        {
            let at = format!("items.items.spans.items.{field}");
            let node = span_props.get(field).map(|n| resolve(root, n)).ok_or_else(|| fail(&at, "is missing"))?;
            if !has_type(node, kind) {
                return Err(fail(&at, &format!("is not {kind}")));
            }
        }
        Ok(CustomSchema { name: clean, schema: to_strict(schema) })
    }

    /// The schema name sent to the model.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The schema in strict form.
    pub fn schema(&self) -> &Value {
        &self.schema
    }
}

/// Follows local `$ref`s (at most 16 hops, so a cycle cannot hang).
fn resolve<'a>(root: &'a Value, mut node: &'a Value) -> &'a Value {
    for _ in 0..16 {
        let Some(reference) = node.get("$ref").and_then(Value::as_str) else { return node };
        let Some(pointer) = reference.strip_prefix('#') else { return node };
        match root.pointer(pointer) {
            Some(target) => node = target,
            None => return node,
        }
    }
    node
}

fn object_properties<'a>(root: &'a Value, node: &'a Value) -> Option<&'a serde_json::Map<String, Value>> {
    let node = resolve(root, node);
    if !has_type(node, "object") {
        return None;
    }
    node.get("properties").and_then(Value::as_object)
}

/// Whether `type` is `kind` or a list containing it (`["string", "null"]`).
/// Line numbers must be `integer`: `number` would let a model cite line 3.5.
fn has_type(node: &Value, kind: &str) -> bool {
    match node.get("type") {
        Some(Value::String(t)) => t == kind,
        Some(Value::Array(types)) => types.iter().any(|t| t.as_str() == Some(kind)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn address_schema() -> Value {
        json!({
            "title": "address answer",
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"$ref": "#/$defs/AddressItem"}},
                "answer_found": {"type": "boolean"},
                "complete_answer_found": {"type": "boolean"},
                "warnings": {"type": "array", "items": {"type": "string"}},
                "llm_discovered_keywords": {"type": "array", "items": {"type": "string"}}
            },
            "$defs": {
                "AddressItem": {
                    "type": "object",
                    "properties": {
                        "street": {"type": "string"},
                        "city": {"type": "string"},
                        "postcode": {"type": ["string", "null"]},
                        "spans": {"type": "array", "items": {"$ref": "#/$defs/Span"}}
                    }
                },
                "Span": {
                    "type": "object",
                    "properties": {
                        "line_start": {"type": "integer"}, "line_end": {"type": "integer"},
                        "page": {"type": "integer"}, "quote": {"type": "string"}
                    }
                }
            }
        })
    }

    #[test]
    fn an_address_schema_extending_the_base_is_accepted_and_made_strict() {
        let custom = CustomSchema::from_json("address answer", address_schema()).unwrap();
        assert_eq!(custom.name(), "address_answer");
        let schema = custom.schema();
        assert_eq!(schema["additionalProperties"], false);
        let required: Vec<&str> = schema["required"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert!(required.contains(&"answer_found") && required.contains(&"items"), "{required:?}");
        assert_eq!(schema["$defs"]["AddressItem"]["additionalProperties"], false);
    }

    #[test]
    fn schemas_missing_a_base_field_are_refused_with_the_place_named() {
        type Mutation = fn(&mut Value);
        let cases: [(&str, Mutation, &str); 6] = [
            (
                "answer_found",
                |s| drop(s["properties"].as_object_mut().map(|p| p.remove("answer_found"))),
                "answer_found is missing",
            ),
            ("warnings type", |s| s["properties"]["warnings"] = json!({"type": "string"}), "warnings is not an array"),
            (
                "spans",
                |s| drop(s["$defs"]["AddressItem"]["properties"].as_object_mut().map(|p| p.remove("spans"))),
                "items.items.spans is missing",
            ),
            (
                "quote",
                |s| s["$defs"]["Span"]["properties"]["quote"] = json!({"type": "integer"}),
                "quote is not string",
            ),
            ("root", |s| *s = json!({"type": "array"}), "root is not an object"),
            (
                "flag type",
                |s| s["properties"]["complete_answer_found"] = json!({"type": "string"}),
                "complete_answer_found is not a boolean",
            ),
        ];
        for (case, mutate, expected) in cases {
            let mut schema = address_schema();
            mutate(&mut schema);
            let error = CustomSchema::from_json("address", schema).unwrap_err().to_string();
            assert!(error.contains(expected), "{case}: {error}");
            assert!(error.contains("does not extend the base answer contract"), "{case}: {error}");
        }
    }

    #[test]
    fn files_are_read_and_bad_files_name_themselves() {
        let tmp = docintel_test_support::temp_dir("custom-schema");
        let dir = tmp.path();
        let good = dir.join("address.json");
        let mut schema = address_schema();
        schema.as_object_mut().unwrap().remove("title");
        std::fs::write(&good, schema.to_string()).unwrap();
        assert_eq!(CustomSchema::from_file(&good).unwrap().name(), "address");
        let bad = dir.join("broken.json");
        std::fs::write(&bad, "{not json").unwrap();
        assert!(CustomSchema::from_file(&bad).unwrap_err().to_string().contains("broken.json: not JSON"));
        let missing = CustomSchema::from_file(&dir.join("absent.json")).unwrap_err();
        assert!(matches!(missing, CustomSchemaError::Io { .. }));
    }
}
