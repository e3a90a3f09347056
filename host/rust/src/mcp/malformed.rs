//! What the transport answers for a line it cannot hand to rmcp: too long,
//! not JSON, too many JSON values, or JSON that is not an MCP message. The
//! request's `id` is taken from the message when it can be found, else from
//! its first and last bytes ([`super::salvage`]).

use super::salvage::{Salvaged, ends, salvage};
use rmcp::model::{CallToolRequestParams, CustomRequest, ErrorData, RequestId};
use serde::Deserialize;
use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};

/// How a line the transport could not deliver is answered.
#[derive(Debug, PartialEq)]
pub(super) enum Answer {
    /// A JSON-RPC error response; `id: null` when the id could not be found.
    Error(Option<RequestId>, ErrorData),
    /// A `tools/call` answered as a failed tool call: `INVALID_ARGS` and this message.
    ToolError(RequestId, String),
    /// A notification or a response from the client: nothing to answer.
    Nothing,
}

/// The answer to a line of `len` bytes over `limit`, of which `head` and
/// `tail` are the first and last bytes.
pub(super) fn too_long(head: &[u8], tail: &[u8], len: u64, limit: usize) -> Answer {
    let found = salvage(head, tail);
    let message = format!(
        "the request is {len} bytes, more than the {limit}-byte limit of one MCP message \
         (tool arguments may be at most {} bytes); split the content into several edits",
        dsh_fs_core::MAX_ARGUMENT_BYTES
    );
    let data = serde_json::json!({ "length": len, "limit": limit });
    answer_refusal(found, message, data)
}

/// The answer to a line with more than `limit` JSON values, which would take
/// far more memory to parse than its length suggests.
pub(super) fn too_many_values(line: &[u8], limit: usize) -> Answer {
    let (head, tail) = ends(line);
    let message =
        format!("the request has more than {limit} JSON values; send the content as one string");
    let data = serde_json::json!({ "values_limit": limit });
    answer_refusal(salvage(head, tail), message, data)
}

fn answer_refusal(found: Salvaged, message: String, data: serde_json::Value) -> Answer {
    match found {
        Salvaged {
            id: Some(id),
            method: Some(method),
        } if method == "tools/call" => Answer::ToolError(id, message),
        Salvaged { id, .. } => Answer::Error(id, ErrorData::invalid_request(message, Some(data))),
    }
}

/// The answer to a line rmcp failed to parse with `error`.
pub(super) fn unparsable(line: &[u8], error: &serde_json::Error) -> Answer {
    if error.is_syntax() || error.is_eof() {
        let (head, tail) = ends(line);
        let id = salvage(head, tail).id;
        return Answer::Error(
            id,
            ErrorData::parse_error(format!("not JSON: {error}"), None),
        );
    }
    let Ok(envelope) = serde_json::from_slice::<Envelope>(line) else {
        return Answer::Error(None, invalid("not a JSON-RPC 2.0 message object"));
    };
    let Envelope {
        jsonrpc,
        id,
        method,
        params,
        result,
        error: error_member,
    } = envelope;
    let is_response = !matches!(result, Field::Absent) || !matches!(error_member, Field::Absent);
    let id = match id {
        Field::Absent if is_response || !matches!(method, Field::Absent) => return Answer::Nothing,
        Field::Absent => None,
        Field::Int(n) => Some(RequestId::Number(n)),
        Field::Str(s) => Some(RequestId::String(s.into())),
        _ => return Answer::Error(None, invalid("`id` must be a string or an integer")),
    };
    let Some(id) = id else {
        return Answer::Error(None, invalid("not a JSON-RPC 2.0 message"));
    };
    let method = match method {
        Field::Str(method) => method,
        Field::Absent if is_response => return Answer::Nothing,
        Field::Absent => return Answer::Error(Some(id), invalid("`method` is missing")),
        _ => return Answer::Error(Some(id), invalid("`method` must be a string")),
    };
    if !matches!(jsonrpc, Field::Str(ref v) if v == "2.0") {
        return Answer::Error(Some(id), invalid("`jsonrpc` must be \"2.0\""));
    }
    let detail = match params {
        Field::Absent | Field::Object => error.to_string(),
        _ => "`params` must be an object".to_owned(),
    };
    Answer::Error(
        Some(id),
        ErrorData::invalid_params(format!("invalid params for {method}: {detail}"), None),
    )
}

/// Methods rmcp parses into typed requests. A request for one of them that
/// reaches rmcp as a custom request had params of the wrong shape, and rmcp
/// would answer "method not found".
const TYPED_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/directory/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "skills/list",
    "skills/get",
];

/// The answer to a request rmcp parsed as custom although its method is a
/// typed one: invalid params, with serde's reason for `tools/call`.
pub(super) fn misparsed(id: &RequestId, request: &CustomRequest) -> Option<Answer> {
    let method = request.method.as_str();
    if !TYPED_METHODS.contains(&method) {
        return None;
    }
    let params = request.params.as_ref().unwrap_or(&serde_json::Value::Null);
    let detail = match method {
        "tools/call" => CallToolRequestParams::deserialize(params).err(),
        _ => None,
    };
    let detail = detail.map_or_else(
        || "they do not fit the method".to_owned(),
        |e| e.to_string(),
    );
    let error = ErrorData::invalid_params(format!("invalid params for {method}: {detail}"), None);
    Some(Answer::Error(Some(id.clone()), error))
}

fn invalid(message: &'static str) -> ErrorData {
    ErrorData::invalid_request(message, None)
}
/// The top-level members of a message the transport needs to answer it.
#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    jsonrpc: Field,
    #[serde(default)]
    id: Field,
    #[serde(default)]
    method: Field,
    #[serde(default)]
    params: Field,
    #[serde(default)]
    result: Field,
    #[serde(default)]
    error: Field,
}

/// One member's value, kept only if it is an integer or a string, so that a
/// hostile member costs no memory.
#[derive(Debug, Default)]
enum Field {
    #[default]
    Absent,
    Int(i64),
    Str(String),
    Object,
    Other,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FieldVisitor)
    }
}

struct FieldVisitor;

impl<'de> Visitor<'de> for FieldVisitor {
    type Value = Field;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_i64<E>(self, v: i64) -> Result<Field, E> {
        Ok(Field::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Field, E> {
        Ok(i64::try_from(v).map_or(Field::Other, Field::Int))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Field, E> {
        Ok(Field::Other)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Field, E> {
        Ok(Field::Other)
    }
    fn visit_unit<E>(self) -> Result<Field, E> {
        Ok(Field::Other)
    }
    fn visit_str<E>(self, v: &str) -> Result<Field, E> {
        Ok(Field::Str(v.to_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Field, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Field::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Field, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Field::Object)
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: i64) -> Option<RequestId> {
        Some(RequestId::Number(n))
    }

    #[test]
    fn small_malformed_messages_are_answered_with_their_id() {
        let answer = |line: &str| {
            let e = serde_json::from_str::<rmcp::model::ClientJsonRpcMessage>(line).unwrap_err();
            unparsable(line.as_bytes(), &e)
        };
        let code = |a: Answer| match a {
            Answer::Error(id, e) => (id, e.code.0),
            other => panic!("{other:?}"),
        };
        let call = |params: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{params}}}"#)
        };
        assert_eq!(code(answer(&call("[]"))), (id(3), -32602));
        assert_eq!(code(answer(&call("\"x\""))), (id(3), -32602));
        assert_eq!(code(answer(r#"{"id":4,"method":"ping"}"#)), (id(4), -32600));
        assert_eq!(
            code(answer(r#"{"id":[4],"method":"ping"}"#)),
            (None, -32600)
        );
        assert_eq!(code(answer(r#"[{"id":4}]"#)), (None, -32600));
        assert_eq!(
            code(answer(r#"{"jsonrpc":"2.0","id":5,"method":"#)),
            (id(5), -32700)
        );
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","method":"tools/call","params":[]}"#),
            Answer::Nothing
        );
    }
}
