//! Each tool's arguments as one table ([`Spec`]): it gives the JSON Schema
//! the model sees and drives the strict parser of its calls — a JSON object
//! with exactly the table's snake_case fields, each of the declared type.
//! Every failure names the field.

use super::{Hints, ToolDefinition};
use crate::error::ToolError;
use dsh_fs_core::EditRequest;
use serde::Deserializer as _;
use serde::de::{MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::cell::Cell;

/// A tool as the model sees it, and the table of its arguments.
pub(super) struct Spec {
    /// `read`, `write`, `edit`, `glob` or `grep`.
    pub(super) name: &'static str,
    /// A short title for people.
    pub(super) title: &'static str,
    /// What it may do to the workspace.
    pub(super) hints: Hints,
    /// What the tool does, including the observation policy.
    pub(super) description: &'static str,
    /// Longer advice for a system prompt.
    pub(super) guidance: &'static str,
    /// The arguments, in the order the schema and messages list them.
    pub(super) fields: &'static [Field],
}

/// One argument: its schema and how the parser takes it.
pub(super) struct Field {
    /// The snake_case name.
    pub(super) name: &'static str,
    /// Its JSON type and constraints.
    pub(super) kind: Kind,
    /// Whether a call must give it (`null` counts as absent either way).
    pub(super) required: bool,
    /// What the schema says of it.
    pub(super) description: &'static str,
    /// Added to the message when a required field is missing.
    pub(super) hint: Option<&'static str>,
}

/// The JSON type of a field, with the constraints the schema states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A string; `non_empty` puts `minLength: 1` in the schema (the tool
    /// refuses the empty string with its own message).
    String { non_empty: bool },
    /// An integer of at least 1; `maximum` is stated in the schema, and the
    /// tool caps larger values to it.
    Positive { maximum: Option<u64> },
    /// A boolean, `false` when absent.
    Flag,
    /// A list of 1 to [`MAX_EDITS`] edits, each an object with `edit`'s
    /// `old_string`, `new_string` and `replace_all`.
    Edits,
}

/// Most edits one `multi_edit` call takes.
pub(super) const MAX_EDITS: usize = 100;

/// The path argument of `read`, `write` and `edit`.
pub(super) const FILE_PATH: Field = Field {
    name: "file_path",
    kind: Kind::String { non_empty: false },
    required: true,
    description: "Path relative to the workspace root",
    hint: None,
};

impl Spec {
    /// The definition the model is given, with the table as JSON Schema.
    pub(super) fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: self.name,
            title: self.title,
            hints: self.hints,
            description: self.description,
            guidance: self.guidance,
            parameters: self.schema().to_string(),
        }
    }

    fn schema(&self) -> Value {
        let mut properties = Map::new();
        for field in self.fields {
            properties.insert(field.name.to_owned(), field.schema());
        }
        let required: Vec<&str> = self
            .fields
            .iter()
            .filter(|f| f.required)
            .map(|f| f.name)
            .collect();
        json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        })
    }

    fn field(&self, name: &str) -> &Field {
        self.fields
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("`{name}` is not an argument of {}", self.name))
    }
}

impl Field {
    fn schema(&self) -> Value {
        let mut schema = Map::new();
        let mut put = |key: &str, value: Value| schema.insert(key.to_owned(), value);
        match self.kind {
            Kind::String { non_empty } => {
                put("type", "string".into());
                if non_empty {
                    put("minLength", 1.into());
                }
            }
            Kind::Positive { maximum } => {
                put("type", "integer".into());
                put("minimum", 1.into());
                if let Some(maximum) = maximum {
                    put("maximum", maximum.into());
                }
            }
            Kind::Flag => {
                put("type", "boolean".into());
                put("default", false.into());
            }
            Kind::Edits => {
                put("type", "array".into());
                put("minItems", 1.into());
                put("maxItems", MAX_EDITS.into());
                put(
                    "items",
                    json!({
                        "type": "object",
                        "properties": {
                            "old_string": {"type": "string", "minLength": 1, "description": "Exact text to replace"},
                            "new_string": {"type": "string", "description": "Replacement"},
                            "replace_all": {"type": "boolean", "default": false, "description": "Replace every occurrence"},
                        },
                        "required": ["old_string", "new_string"],
                        "additionalProperties": false
                    }),
                );
            }
        }
        put("description", self.description.into());
        Value::Object(schema)
    }
}

/// The arguments of one call, consumed field by field.
pub(super) struct Args {
    spec: &'static Spec,
    map: Map<String, Value>,
}

impl Args {
    /// Parses `json` as the arguments object of the tool `spec` describes.
    /// The text is checked whole but only the declared fields are kept, and
    /// an array or object among them only by its type (no field takes one):
    /// an argument of millions of values costs no memory, and an unknown
    /// field ends the parse where it stands.
    pub(super) fn parse(spec: &'static Spec, json: &str) -> Result<Self, ToolError> {
        let tool = spec.name;
        let not_json = |e: serde_json::Error| {
            ToolError::invalid_args(tool, format_args!("arguments are not valid JSON ({e})"))
        };
        let raw: &RawValue = serde_json::from_str(json).map_err(not_json)?;
        if !raw.get().starts_with('{') {
            let value = shallow(raw).map_err(not_json)?;
            return Err(ToolError::invalid_args(
                tool,
                format_args!("arguments must be a JSON object, got {}", kind(&value)),
            ));
        }
        let unknown = Cell::new(None);
        let fields = Fields {
            spec,
            unknown: &unknown,
        };
        let parsed = serde_json::Deserializer::from_str(raw.get()).deserialize_map(fields);
        let map = parsed.map_err(|e| match unknown.take() {
            Some(name) => {
                let shown: String = name.chars().take(64).collect();
                let names: Vec<&str> = spec.fields.iter().map(|f| f.name).collect();
                ToolError::invalid_args(
                    tool,
                    format_args!("unknown field `{shown}` (fields: {})", names.join(", ")),
                )
            }
            None => not_json(e),
        })?;
        Ok(Args { spec, map })
    }

    /// The table's entry for `name`, which must be of `kind` and `required`.
    fn declared(&self, name: &str, kind: fn(Kind) -> bool, required: bool) -> &'static Field {
        let field = self.spec.field(name);
        debug_assert!(
            kind(field.kind) && field.required == required,
            "{name} is misdeclared"
        );
        field
    }

    /// A required string field.
    pub(super) fn string(&mut self, name: &str) -> Result<String, ToolError> {
        let field = self.declared(name, |k| matches!(k, Kind::String { .. }), true);
        match self.map.remove(name) {
            Some(Value::String(s)) => Ok(s),
            None | Some(Value::Null) => Err(match field.hint {
                Some(hint) => {
                    self.invalid(format_args!("missing required field `{name}` ({hint})"))
                }
                None => self.invalid(format_args!("missing required field `{name}`")),
            }),
            Some(other) => Err(self.wrong_string(name, &other)),
        }
    }

    /// An optional string field.
    pub(super) fn optional_string(&mut self, name: &str) -> Result<Option<String>, ToolError> {
        self.declared(name, |k| matches!(k, Kind::String { .. }), false);
        match self.map.remove(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.wrong_string(name, &other)),
        }
    }

    /// An optional integer field of at least 1.
    pub(super) fn positive(&mut self, name: &str) -> Result<Option<u64>, ToolError> {
        self.declared(name, |k| matches!(k, Kind::Positive { .. }), false);
        match self.map.remove(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) if n.as_u64().is_some_and(|n| n >= 1) => Ok(n.as_u64()),
            Some(other) => Err(self.invalid(format_args!(
                "`{name}` must be an integer of at least 1, got {}",
                short(&other)
            ))),
        }
    }

    /// An optional boolean field, `false` when absent.
    pub(super) fn flag(&mut self, name: &str) -> Result<bool, ToolError> {
        self.declared(name, |k| k == Kind::Flag, false);
        match self.map.remove(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(b),
            Some(other) => Err(self.invalid(format_args!(
                "`{name}` must be true or false, got {}",
                short(&other)
            ))),
        }
    }

    /// A required list of edits ([`Kind::Edits`]); a fault names the edit
    /// (counted from 1) and its field.
    pub(super) fn edits(&mut self, name: &str) -> Result<Vec<EditRequest>, ToolError> {
        self.declared(name, |k| k == Kind::Edits, true);
        let items = match self.map.remove(name) {
            Some(Value::Array(items)) => items,
            None | Some(Value::Null) => {
                return Err(self.invalid(format_args!(
                    "missing required field `{name}` (a list of {{\"old_string\", \"new_string\"}} objects)"
                )));
            }
            Some(other) => {
                return Err(self.invalid(format_args!(
                    "`{name}` must be an array of edits, got {}",
                    kind(&other)
                )));
            }
        };
        if items.is_empty() || items.len() > MAX_EDITS {
            return Err(self.invalid(format_args!(
                "`{name}` holds {} edits; send 1 to {MAX_EDITS}",
                items.len()
            )));
        }
        let mut edits = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let n = i + 1;
            let Value::Object(mut fields) = item else {
                return Err(self.invalid(format_args!(
                    "edit {n} must be an object with old_string and new_string, got {}",
                    kind(&item)
                )));
            };
            if let Some(other) = fields
                .keys()
                .find(|k| !["old_string", "new_string", "replace_all"].contains(&k.as_str()))
            {
                let shown: String = other.chars().take(64).collect();
                return Err(self.invalid(format_args!(
                    "edit {n} has an unknown field `{shown}` (fields: old_string, new_string, replace_all)"
                )));
            }
            let mut text = |field: &str| match fields.remove(field) {
                Some(Value::String(s)) => Ok(s),
                None | Some(Value::Null) => {
                    Err(self.invalid(format_args!("edit {n} is missing `{field}`")))
                }
                Some(other) => Err(self.invalid(format_args!(
                    "`{field}` of edit {n} must be a string, got {}",
                    kind(&other)
                ))),
            };
            let (old, new) = (text("old_string")?, text("new_string")?);
            let replace_all = match fields.remove("replace_all") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => b,
                Some(other) => {
                    return Err(self.invalid(format_args!(
                        "`replace_all` of edit {n} must be true or false, got {}",
                        short(&other)
                    )));
                }
            };
            edits.push(EditRequest::new(old, new, replace_all));
        }
        Ok(edits)
    }

    fn wrong_string(&self, name: &str, got: &Value) -> ToolError {
        self.invalid(format_args!("`{name}` must be a string, got {}", kind(got)))
    }

    fn invalid(&self, what: std::fmt::Arguments<'_>) -> ToolError {
        ToolError::invalid_args(self.spec.name, what)
    }
}

/// The top-level object of a call, visited key by key: declared fields kept
/// ([`shallow`]ly), the first unknown one put in `unknown` and the visit ended.
struct Fields<'u> {
    spec: &'static Spec,
    unknown: &'u Cell<Option<String>>,
}

impl<'de> Visitor<'de> for Fields<'_> {
    type Value = Map<String, Value>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if !self.spec.fields.iter().any(|f| f.name == key) {
                self.unknown.set(Some(key));
                return Err(serde::de::Error::custom("unknown field"));
            }
            let raw: &'de RawValue = access.next_value()?;
            // A list of edits is the one argument kept whole (its size is
            // bounded by the cap on the arguments).
            let whole = self
                .spec
                .fields
                .iter()
                .any(|f| f.name == key && f.kind == Kind::Edits);
            let value = if whole {
                serde_json::from_str(raw.get())
            } else {
                shallow(raw)
            };
            map.insert(key, value.map_err(serde::de::Error::custom)?);
        }
        Ok(map)
    }
}

/// A scalar as its value; an array or an object as an empty one of its kind.
fn shallow(raw: &RawValue) -> Result<Value, serde_json::Error> {
    match raw.get().as_bytes().first() {
        Some(b'[') => Ok(Value::Array(Vec::new())),
        Some(b'{') => Ok(Value::Object(Map::new())),
        _ => serde_json::from_str(raw.get()),
    }
}

/// The JSON type of `v`, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `v` for a message: short scalars verbatim, anything else by its type.
fn short(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        Value::String(s) if s.len() <= 40 => format!("the string {s:?}"),
        other => kind(other).to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{edit, read};
    use super::*;

    /// The first error of an `edit` call whose every field is taken, or "".
    fn err(json: &str) -> String {
        match Args::parse(&edit::SPEC, json) {
            Err(e) => e.message,
            Ok(mut a) => match (
                a.string("file_path"),
                a.string("old_string"),
                a.string("new_string"),
                a.flag("replace_all"),
            ) {
                (Err(e), ..) | (_, Err(e), ..) | (.., Err(e), _) | (.., Err(e)) => e.message,
                _ => String::new(),
            },
        }
    }

    /// The same for `read`, whose optional fields are integers.
    fn read_err(json: &str) -> String {
        match Args::parse(&read::SPEC, json) {
            Err(e) => e.message,
            Ok(mut a) => match (a.string("file_path"), a.positive("offset")) {
                (Err(e), _) | (_, Err(e)) => e.message,
                _ => String::new(),
            },
        }
    }

    #[test]
    fn each_bad_input_names_the_problem() {
        let edit = |rest: &str| err(&format!(r#"{{"file_path":"a","old_string":"x"{rest}}}"#));
        assert!(err("{").contains("not valid JSON"));
        assert!(err("[1]").contains("must be a JSON object, got an array"));
        assert!(edit(r#","bogus":1"#).contains(
            "unknown field `bogus` (fields: file_path, old_string, new_string, replace_all)"
        ));
        assert!(err(r#"{}"#).contains("missing required field `file_path`"));
        assert!(err(r#"{"file_path":7}"#).contains("`file_path` must be a string, got a number"));
        assert!(edit("").contains(
            "missing required field `new_string` (an empty string \"\" deletes old_string)"
        ));
        assert!(edit(r#","new_string":"y","replace_all":"yes""#).contains("must be true or false"));
        assert_eq!(edit(r#","new_string":"","replace_all":null"#), "");
        let offset = |v: &str| read_err(&format!(r#"{{"file_path":"a","offset":{v}}}"#));
        assert!(offset("0").contains("`offset` must be an integer of at least 1, got 0"));
        assert!(offset("-2").contains("got -2"));
        assert!(offset("1.5").contains("got 1.5"));
        assert!(offset(r#""3""#).contains("got the string \"3\""));
        assert_eq!(offset("null"), "");
        // Nesting and size cost neither stack nor memory: a value is skipped
        // without being built.
        let deep = |n| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(err(&deep(10_000)).contains("must be a JSON object, got an array"));
        let field = format!(r#"{{"file_path":{}}}"#, deep(4 << 20));
        assert!(err(&field).contains("`file_path` must be a string, got an array"));
        let wide = format!(r#"{{"file_path":[{}0]}}"#, "0,".repeat(4 << 20));
        assert!(err(&wide).contains("`file_path` must be a string, got an array"));
    }
}
