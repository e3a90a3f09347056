//! A one-word old_string the file does not hold, misspelt: the answer names
//! the word it is nearest to, how often the file has it and where first;
//! nothing is applied and the file stays as it was.

use super::fixture;
use crate::{Workspace, call, fails, ok};
use serde_json::json;

#[test]
fn replace_all_of_a_misspelt_word_names_the_word_and_its_count() {
    let ws = Workspace::new();
    ws.write("web/cart.js", fixture("cart.js"));
    let before = Workspace::snapshot(&ws.root);
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "web/cart.js"})));
    let args = json!({
        "file_path": "web/cart.js",
        "old_string": "quantitiy",
        "new_string": "count",
        "replace_all": true,
    });
    let got = fails(call(&mut s, "edit", args), "FS_EDIT_NOT_FOUND");
    assert_eq!(Workspace::snapshot(&ws.root), before);
    assert_eq!(
        got,
        "FS_EDIT_NOT_FOUND: old_string was not found in web/cart.js; `quantitiy` is not in the \
file, but `quantity` is, 6 times (first at line 10): if that is the word meant, send it as \
old_string:\n10:   add(product, quantity = 1) {"
    );
}
