//! `ANSWER_REGISTRY`: (answer shape, value kind) → the typed answer schema,
//! with its JSON Schema in OpenAI *strict* form.
//!
//! The registry is a plain table; an answer type (a row of the answer types
//! table, e.g. `iban`) resolves to a [`ValueKind`] and the pair selects the
//! entry. Adding a value kind is one enum variant, one row here and one
//! snapshot.

use schemars::JsonSchema;
use serde_json::{Map, Value};

use crate::answer::{Amount, DateValue, Quantity, TableValue, TypedAnswer};
use crate::question::AnswerShape;

/// The Rust type of an answer's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueKind {
    /// Free text (also iban, address, name... until they get their own kind).
    Text,
    /// [`Amount`].
    Amount,
    /// [`Quantity`]: counts, numbers, percentages, durations.
    Quantity,
    /// [`DateValue`].
    Date,
    /// `bool`.
    Boolean,
    /// [`TableValue`].
    Table,
}

impl ValueKind {
    /// The value kind an answer type resolves to. Unknown types are text:
    /// every answer type can at least be quoted.
    pub fn for_answer_type(answer_type: &str) -> ValueKind {
        match answer_type {
            "amount" | "money" | "price" | "premium" => ValueKind::Amount,
            "date" => ValueKind::Date,
            "boolean" => ValueKind::Boolean,
            "table" => ValueKind::Table,
            "quantity" | "count" | "number" | "percentage" | "duration" => ValueKind::Quantity,
            _ => ValueKind::Text,
        }
    }

    /// The value kind named by an answer-types table's `output_schema_ref`
    /// (`text`, `amount`, `quantity`, `date`, `boolean`, `table`).
    pub fn from_name(name: &str) -> Option<ValueKind> {
        [ValueKind::Text, ValueKind::Amount, ValueKind::Quantity, ValueKind::Date, ValueKind::Boolean, ValueKind::Table]
            .into_iter()
            .find(|k| k.as_str() == name)
    }

    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ValueKind::Text => "text",
            ValueKind::Amount => "amount",
            ValueKind::Quantity => "quantity",
            ValueKind::Date => "date",
            ValueKind::Boolean => "boolean",
            ValueKind::Table => "table",
        }
    }
}

/// One registry row.
#[derive(Debug, Clone, Copy)]
pub struct RegistryEntry {
    /// The answer shape.
    pub shape: AnswerShape,
    /// The value kind.
    pub value: ValueKind,
    /// Schema name sent to the model (`single_amount`, ...).
    pub name: &'static str,
    schema: fn() -> Value,
}

impl RegistryEntry {
    /// The entry's JSON Schema in OpenAI strict form.
    pub fn json_schema(&self) -> Value {
        (self.schema)()
    }
}

fn strict_schema_of<T: JsonSchema>() -> Value {
    to_strict(schemars::schema_for!(T).to_value())
}

/// Most items a `single` answer may carry: one value (the prompt's shape
/// fragment says so too; disagreeing passages are cited as spans of that
/// item and flagged with `conflicting_evidence`). The bound is part of the
/// schema, so a constrained decoder stops instead of repeating items (a
/// 0.5B model did, to its token cap, before the bound).
pub const SINGLE_MAX_ITEMS: u64 = 1;

fn single_schema_of<T: JsonSchema>() -> Value {
    let mut schema = strict_schema_of::<T>();
    if let Some(items) = schema.pointer_mut("/properties/items").and_then(Value::as_object_mut) {
        items.insert("maxItems".to_owned(), Value::from(SINGLE_MAX_ITEMS));
    }
    schema
}

macro_rules! entry {
    (Single, $value:ident, $name:literal, $ty:ty) => {
        RegistryEntry {
            shape: AnswerShape::Single,
            value: ValueKind::$value,
            name: $name,
            schema: single_schema_of::<$ty>,
        }
    };
    ($shape:ident, $value:ident, $name:literal, $ty:ty) => {
        RegistryEntry {
            shape: AnswerShape::$shape,
            value: ValueKind::$value,
            name: $name,
            schema: strict_schema_of::<$ty>,
        }
    };
}

/// Every (shape, value kind) pair docintel can answer with a typed schema.
/// `tree` and `nested_json` answers need a caller-supplied schema (for
/// instance a `FieldExtraction<T>`); they are deliberately absent.
pub static ANSWER_REGISTRY: &[RegistryEntry] = &[
    entry!(Single, Text, "single_text", TypedAnswer<String>),
    entry!(Single, Amount, "single_amount", TypedAnswer<Amount>),
    entry!(Single, Quantity, "single_quantity", TypedAnswer<Quantity>),
    entry!(Single, Date, "single_date", TypedAnswer<DateValue>),
    entry!(Single, Boolean, "single_boolean", TypedAnswer<bool>),
    entry!(Listing, Text, "listing_text", TypedAnswer<String>),
    entry!(Listing, Amount, "listing_amount", TypedAnswer<Amount>),
    entry!(Listing, Quantity, "listing_quantity", TypedAnswer<Quantity>),
    entry!(Listing, Date, "listing_date", TypedAnswer<DateValue>),
    entry!(Table, Table, "table", TypedAnswer<TableValue>),
];

/// The registry entry for a shape and answer type. A `table` shape always
/// uses the table entry; a listing of booleans falls back to a listing of
/// text. `None` for shapes without a registry schema (tree, nested_json).
pub fn lookup(shape: AnswerShape, answer_type: &str) -> Option<&'static RegistryEntry> {
    let value = match shape {
        AnswerShape::Table => ValueKind::Table,
        _ => ValueKind::for_answer_type(answer_type),
    };
    let find = |shape: AnswerShape, value: ValueKind| {
        ANSWER_REGISTRY.iter().find(|entry| entry.shape == shape && entry.value == value)
    };
    find(shape, value).or_else(|| find(shape, ValueKind::Text))
}

/// Rewrites a schemars schema into the subset OpenAI strict structured output
/// accepts: every property required (optional ones are already nullable),
/// `additionalProperties: false` on every object, no `$schema`, no numeric
/// `format`/`minimum` annotations, no `default`, and `oneOf` as `anyOf`.
pub fn to_strict(mut schema: Value) -> Value {
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
    }
    strict_in_place(&mut schema);
    schema
}

fn strict_in_place(value: &mut Value) {
    match value {
        Value::Object(map) => {
            strict_object(map);
            for child in map.values_mut() {
                strict_in_place(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strict_in_place),
        _ => {}
    }
}

fn strict_object(map: &mut Map<String, Value>) {
    map.remove("default");
    if let Some(one_of) = map.remove("oneOf") {
        map.insert("anyOf".to_owned(), one_of);
    }
    let is_numeric = |t: &Value| matches!(t.as_str(), Some("integer" | "number"));
    let numeric = match map.get("type") {
        Some(Value::Array(types)) => types.iter().any(is_numeric),
        Some(t) => is_numeric(t),
        None => false,
    };
    if numeric {
        for key in ["format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
            map.remove(key);
        }
    }
    if let Some(Value::Object(properties)) = map.get("properties") {
        let required: Vec<Value> = properties.keys().map(|k| Value::String(k.clone())).collect();
        map.insert("required".to_owned(), Value::Array(required));
        map.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn violations(value: &Value, path: &str, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if map.contains_key("$schema") {
                    out.push(format!("{path}: $schema"));
                }
                if map.contains_key("oneOf") {
                    out.push(format!("{path}: oneOf"));
                }
                if map.contains_key("format")
                    && map
                        .get("type")
                        .is_some_and(|t| t.to_string().contains("number") || t.to_string().contains("integer"))
                {
                    out.push(format!("{path}: numeric format"));
                }
                if let Some(Value::Object(properties)) = map.get("properties") {
                    if map.get("additionalProperties") != Some(&Value::Bool(false)) {
                        out.push(format!("{path}: additionalProperties"));
                    }
                    let required: Vec<&str> = map
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|r| r.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    for key in properties.keys() {
                        if !required.contains(&key.as_str()) {
                            out.push(format!("{path}: {key} not required"));
                        }
                    }
                }
                for (key, child) in map {
                    violations(child, &format!("{path}/{key}"), out);
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    violations(child, &format!("{path}/{i}"), out);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn every_registry_schema_is_strict() {
        for entry in ANSWER_REGISTRY {
            let mut found = Vec::new();
            violations(&entry.json_schema(), entry.name, &mut found);
            assert!(found.is_empty(), "{}: {found:?}", entry.name);
        }
    }

    #[test]
    fn strict_pass_fixes_a_raw_schemars_schema() {
        // The raw schema does violate strict mode; otherwise the test above
        // would prove nothing.
        let raw = schemars::schema_for!(TypedAnswer<Amount>).to_value();
        let mut found = Vec::new();
        violations(&raw, "raw", &mut found);
        assert!(!found.is_empty());
    }

    #[test]
    fn registry_snapshots() {
        for entry in ANSWER_REGISTRY {
            insta::assert_json_snapshot!(entry.name, entry.json_schema());
        }
    }

    #[test]
    fn arrays_are_bounded_so_small_models_stop() {
        for entry in ANSWER_REGISTRY {
            let schema = entry.json_schema();
            let max_items = schema.pointer("/properties/items/maxItems").and_then(Value::as_u64);
            match entry.shape {
                AnswerShape::Single => assert_eq!(max_items, Some(SINGLE_MAX_ITEMS), "{}", entry.name),
                _ => assert_eq!(max_items, None, "{}: listings are unbounded", entry.name),
            }
            let item = schema
                .pointer("/$defs")
                .and_then(Value::as_object)
                .and_then(|defs| defs.iter().find(|(k, _)| k.starts_with("Item")).map(|(_, v)| v))
                .unwrap_or_else(|| panic!("{}: no Item definition", entry.name));
            assert_eq!(item.pointer("/properties/spans/minItems").and_then(Value::as_u64), Some(1), "{}", entry.name);
            for field in ["warnings", "keywords_found", "llm_discovered_keywords"] {
                let bound = schema.pointer(&format!("/properties/{field}/maxItems")).and_then(Value::as_u64);
                assert!(bound.is_some(), "{}: {field} unbounded", entry.name);
            }
        }
    }

    #[test]
    fn lookup_resolves_types_and_fallbacks() {
        let check = |shape, ty, expected: Option<&str>| {
            assert_eq!(lookup(shape, ty).map(|e| e.name), expected, "{shape:?} {ty}");
        };
        check(AnswerShape::Single, "amount", Some("single_amount"));
        check(AnswerShape::Single, "iban", Some("single_text"));
        check(AnswerShape::Single, "count", Some("single_quantity"));
        check(AnswerShape::Listing, "percentage", Some("listing_quantity"));
        check(AnswerShape::Listing, "boolean", Some("listing_text"));
        check(AnswerShape::Table, "amount", Some("table"));
        check(AnswerShape::NestedJson, "text", None);
        check(AnswerShape::Tree, "text", None);
    }

    #[test]
    fn entry_names_are_unique() {
        let mut names: Vec<_> = ANSWER_REGISTRY.iter().map(|e| e.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ANSWER_REGISTRY.len());
    }
}
