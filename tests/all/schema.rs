//! Tool definitions as the component exports them.

use crate::runtime;
use serde_json::Value;

fn names(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = match v {
        Value::Array(items) => items
            .iter()
            .map(|s| s.as_str().unwrap().to_owned())
            .collect(),
        Value::Object(map) => map.keys().cloned().collect(),
        _ => panic!("not a list: {v}"),
    };
    out.sort();
    out
}

#[test]
fn definitions_have_the_documented_required_and_optional_fields() {
    let defs = runtime().definitions().unwrap();
    let got: Vec<_> = defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(got, ["read", "write", "edit", "glob", "grep"]);
    let expected: [(&[&str], &[&str]); 5] = [
        (&["file_path"], &["file_path", "limit", "offset"]),
        (&["content", "file_path"], &["content", "file_path"]),
        (
            &["file_path", "new_string", "old_string"],
            &["file_path", "new_string", "old_string", "replace_all"],
        ),
        (&["pattern"], &["path", "pattern"]),
        (&["pattern"], &["include", "path", "pattern"]),
    ];
    for (def, (required, all)) in defs.iter().zip(expected) {
        let p = &def.parameters;
        assert_eq!(p["type"], "object", "{}", def.name);
        assert_eq!(p["additionalProperties"], false, "{}", def.name);
        assert_eq!(names(&p["required"]), required, "{}", def.name);
        assert_eq!(names(&p["properties"]), all, "{}", def.name);
        for (field, schema) in p["properties"].as_object().unwrap() {
            assert!(
                field.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{field} is not snake_case"
            );
            assert!(
                schema["description"].as_str().is_some_and(|d| d.len() > 10),
                "{field} lacks a description"
            );
        }
    }
    let edit = &defs[2].parameters["properties"];
    assert_eq!(edit["replace_all"]["type"], "boolean");
    assert_eq!(edit["replace_all"]["default"], false);
    let read = &defs[0].parameters["properties"];
    assert_eq!(read["offset"]["minimum"], 1);
    assert_eq!(read["limit"]["maximum"], 2000);
}

#[test]
fn descriptions_tell_the_model_about_the_policy() {
    // The policy is stated once, in full, by read; write and edit name it;
    // discovery changes nothing and leaves it out.
    for def in runtime().definitions().unwrap() {
        let d = def.description.to_lowercase();
        let changes = matches!(def.name.as_str(), "read" | "write" | "edit");
        assert_eq!(d.contains("read-before-write"), changes, "{d}");
        if def.name == "read" {
            assert!(d.contains("any window") && d.contains("edit"), "{d}");
            assert!(d.contains("fs_stale_version"), "{d}");
        }
        assert!(!def.guidance.is_empty());
    }
}
