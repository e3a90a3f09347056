//! Strict argument parsing: a JSON object with known snake_case fields, each
//! of the declared type. Every failure names the field.

use crate::error::ToolError;
use serde_json::{Map, Value};

/// The arguments of one call, consumed field by field.
pub(super) struct Args {
    tool: &'static str,
    fields: &'static [&'static str],
    map: Map<String, Value>,
}

impl Args {
    /// Parses `json` as the arguments object of `tool` with `fields`.
    pub(super) fn parse(
        tool: &'static str,
        fields: &'static [&'static str],
        json: &str,
    ) -> Result<Self, ToolError> {
        let value: Value = serde_json::from_str(json).map_err(|e| {
            ToolError::invalid_args(tool, format_args!("arguments are not valid JSON ({e})"))
        })?;
        let Value::Object(map) = value else {
            return Err(ToolError::invalid_args(
                tool,
                format_args!("arguments must be a JSON object, got {}", kind(&value)),
            ));
        };
        if let Some(unknown) = map.keys().find(|k| !fields.contains(&k.as_str())) {
            let shown: String = unknown.chars().take(64).collect();
            return Err(ToolError::invalid_args(
                tool,
                format_args!("unknown field `{shown}` (fields: {})", fields.join(", ")),
            ));
        }
        Ok(Args { tool, fields, map })
    }

    /// A required string field.
    pub(super) fn string(&mut self, name: &str) -> Result<String, ToolError> {
        debug_assert!(self.fields.contains(&name));
        match self.map.remove(name) {
            Some(Value::String(s)) => Ok(s),
            None | Some(Value::Null) => {
                Err(self.invalid(format_args!("missing required field `{name}`")))
            }
            Some(other) => Err(self.invalid(format_args!(
                "`{name}` must be a string, got {}",
                kind(&other)
            ))),
        }
    }

    /// A required string field; when it is missing the message adds `hint`.
    pub(super) fn string_hinted(&mut self, name: &str, hint: &str) -> Result<String, ToolError> {
        match self.map.get(name) {
            None | Some(Value::Null) => {
                Err(self.invalid(format_args!("missing required field `{name}` ({hint})")))
            }
            Some(_) => self.string(name),
        }
    }

    /// An optional string field (`null` counts as absent).
    pub(super) fn optional_string(&mut self, name: &str) -> Result<Option<String>, ToolError> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => self.string(name).map(Some),
        }
    }

    /// An optional integer field of at least 1 (`null` counts as absent).
    pub(super) fn positive(&mut self, name: &str) -> Result<Option<u64>, ToolError> {
        match self.map.remove(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) if n.as_u64().is_some_and(|n| n >= 1) => Ok(n.as_u64()),
            Some(other) => Err(self.invalid(format_args!(
                "`{name}` must be an integer of at least 1, got {}",
                short(&other)
            ))),
        }
    }

    /// An optional boolean field (`null` counts as absent).
    pub(super) fn flag(&mut self, name: &str) -> Result<Option<bool>, ToolError> {
        match self.map.remove(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(other) => Err(self.invalid(format_args!(
                "`{name}` must be true or false, got {}",
                short(&other)
            ))),
        }
    }

    fn invalid(&self, what: std::fmt::Arguments<'_>) -> ToolError {
        ToolError::invalid_args(self.tool, what)
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
    use super::*;

    const FIELDS: &[&str] = &["file_path", "offset", "flag"];

    fn err(json: &str) -> String {
        match Args::parse("read", FIELDS, json) {
            Err(e) => e.message,
            Ok(mut a) => match (a.string("file_path"), a.positive("offset"), a.flag("flag")) {
                (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => e.message,
                _ => String::new(),
            },
        }
    }

    #[test]
    fn each_bad_input_names_the_problem() {
        assert!(err("{").contains("not valid JSON"));
        assert!(err("[1]").contains("must be a JSON object, got an array"));
        assert!(err(r#"{"file_path":"a","bogus":1}"#).contains("unknown field `bogus`"));
        assert!(err(r#"{}"#).contains("missing required field `file_path`"));
        assert!(err(r#"{"file_path":7}"#).contains("`file_path` must be a string, got a number"));
        assert!(
            err(r#"{"file_path":"a","offset":0}"#)
                .contains("`offset` must be an integer of at least 1, got 0")
        );
        assert!(err(r#"{"file_path":"a","offset":-2}"#).contains("got -2"));
        assert!(err(r#"{"file_path":"a","offset":1.5}"#).contains("got 1.5"));
        assert!(err(r#"{"file_path":"a","offset":"3"}"#).contains("got the string \"3\""));
        assert!(err(r#"{"file_path":"a","flag":"yes"}"#).contains("must be true or false"));
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(err(&deep).contains("not valid JSON"));
        assert_eq!(err(r#"{"file_path":"a","offset":null,"flag":true}"#), "");
    }
}
