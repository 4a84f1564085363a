//! JSON-RPC 2.0 as both its front ends speak it: the socket protocol
//! ([`crate::rpc`], seed 000) and MCP ([`crate::mcp`], seed 004). One table
//! of error codes, one error and response shape, and one reading of a line
//! into a message; each front end then decides what it supports
//! (notifications and batches are MCP's alone).
//!
//! What a request must be, for both: an object with `"jsonrpc": "2.0"`, a
//! string `method`, an `id` that is a string or a number (null is refused:
//! seed 000 and MCP both require a real id), and `params` that is an object
//! or left out. JSON-RPC 2.0 allows no other `params` but an array, which no
//! method of ours takes; `"params": null` is refused like any other non-object
//! rather than read as `{}` (seed 000 says "params must be an object", MCP's
//! schema agrees, and its reference SDK refuses null as well).

use crate::json::json;

use serde_json::{Map, Value};

use crate::limits;

/// Invalid JSON, or a line that is not UTF-8.
pub const PARSE_ERROR: i64 = -32700;
/// Not a request: not an object, no or a bad id, version, method or params;
/// a line over [`limits::MAX_LINE_BYTES`]; what a front end does not take.
pub const INVALID_REQUEST: i64 = -32600;
/// No method of that name.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// The method's parameters are wrong.
pub const INVALID_PARAMS: i64 = -32602;
/// A failure inside the server.
pub const INTERNAL_ERROR: i64 = -32603;
/// A valid request the server cannot carry out (seed 000).
pub const SERVER_ERROR: i64 = -32000;

pub use crate::params::Params;

/// A JSON-RPC error: code, message and optional data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl Error {
    pub fn new(code: i64, message: impl Into<String>) -> Error {
        Error {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// [`INVALID_REQUEST`], its message after "Invalid request: ".
    pub fn invalid_request(why: impl std::fmt::Display) -> Error {
        Error::new(INVALID_REQUEST, format!("Invalid request: {why}"))
    }

    /// [`INVALID_PARAMS`].
    pub fn params(message: impl Into<String>) -> Error {
        Error::new(INVALID_PARAMS, message)
    }

    pub fn with_data(self, data: Value) -> Error {
        Error {
            data: Some(data),
            ..self
        }
    }
}

/// The response to request `id`.
pub fn response(id: &Value, result: Result<Value, Error>) -> Value {
    match result {
        Ok(r) => json!({"jsonrpc": "2.0", "result": r, "id": id}),
        Err(e) => {
            let mut err = json!({"code": e.code, "message": e.message});
            if let Some(d) = e.data {
                err["data"] = d;
            }
            json!({"jsonrpc": "2.0", "error": err, "id": id})
        }
    }
}

/// What one line holds.
#[derive(Debug)]
pub enum Frame {
    One(Value),
    /// A non-empty array of messages.
    Batch(Vec<Value>),
}

/// Read one line as [`crate::lines::read_bounded_line`] gave it (`Err(len)`:
/// longer than the limit, discarded): `None` for a blank line.
pub fn decode(line: Result<&[u8], usize>) -> Result<Option<Frame>, Error> {
    let bytes = line.map_err(|len| {
        Error::invalid_request(format!(
            "line of {len}+ bytes exceeds the limit of {} bytes; it was discarded",
            limits::MAX_LINE_BYTES
        ))
    })?;
    // JSON text is UTF-8 (RFC 8259): a line that is not is not JSON, and
    // rewriting it with U+FFFD would send the program characters the client
    // never wrote.
    let text = std::str::from_utf8(bytes).map_err(|e| {
        Error::new(
            PARSE_ERROR,
            format!(
                "Parse error: invalid UTF-8 at byte {}; the line was discarded",
                e.valid_up_to()
            ),
        )
    })?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    if let Some(what) = crate::json::oversized(bytes) {
        return Err(Error::invalid_request(format!(
            "the line holds {what}; it was discarded"
        )));
    }
    match serde_json::from_slice(text.as_bytes()) {
        Ok(Value::Array(items)) if items.is_empty() => Err(Error::invalid_request("empty batch")),
        Ok(Value::Array(items)) => Ok(Some(Frame::Batch(items))),
        Ok(v) => Ok(Some(Frame::One(v))),
        Err(e) => Err(Error::new(PARSE_ERROR, format!("Parse error: {e}"))),
    }
}

/// One message, read.
#[derive(Debug)]
pub enum Message {
    Request {
        id: Value,
        method: String,
        params: Params,
    },
    /// A request without an id: nothing is answered.
    Notification { method: String, params: Params },
    /// A response (no method, a result or an error): to a request of ours.
    Response,
}

/// A message that is no request, and the id to answer it with (null when
/// its own could not be read).
#[derive(Debug)]
pub struct Refusal {
    pub id: Value,
    pub error: Error,
}

/// Read one message of a [`Frame`].
pub fn message(msg: Value) -> Result<Message, Refusal> {
    let refuse = |id: &Value, why: &str| Refusal {
        id: id.clone(),
        error: Error::invalid_request(why),
    };
    let Value::Object(mut obj) = msg else {
        return Err(refuse(&Value::Null, "expected a JSON object"));
    };
    if !obj.contains_key("method") && (obj.contains_key("result") || obj.contains_key("error")) {
        return Ok(Message::Response);
    }
    let id = match obj.remove("id") {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id),
        Some(_) => return Err(refuse(&Value::Null, "id must be a string or a number")),
    };
    let answer_to = id.clone().unwrap_or(Value::Null);
    if obj.get("jsonrpc") != Some(&json!("2.0")) {
        let why = if obj.contains_key("op") {
            "the legacy {op} protocol is not supported; send a JSON-RPC 2.0 method"
        } else {
            "jsonrpc must be \"2.0\""
        };
        return Err(refuse(&answer_to, why));
    }
    let Some(Value::String(method)) = obj.remove("method") else {
        return Err(refuse(&answer_to, "method must be a string"));
    };
    let params = match obj.remove("params") {
        None => Map::new(),
        Some(Value::Object(p)) => p,
        Some(_) => return Err(refuse(&answer_to, "params must be an object (or left out)")),
    };
    Ok(match id {
        Some(id) => Message::Request { id, method, params },
        None => Message::Notification { method, params },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &str) -> Result<Message, Refusal> {
        match decode(Ok(line.as_bytes())) {
            Ok(Some(Frame::One(v))) => message(v),
            other => panic!("{line}: {other:?}"),
        }
    }

    fn refused(line: &str) -> (Value, i64) {
        let r = read(line).expect_err(line);
        (r.id, r.error.code)
    }

    #[test]
    fn requests_notifications_and_responses() {
        let m = read(r#"{"jsonrpc":"2.0","method":"m","id":"a"}"#);
        assert!(
            matches!(&m, Ok(Message::Request { id, method, params })
                if id == "a" && method == "m" && params.is_empty()),
            "{m:?}"
        );
        let m = read(r#"{"jsonrpc":"2.0","method":"m","params":{"x":1}}"#);
        assert!(
            matches!(&m, Ok(Message::Notification { params, .. }) if params["x"] == 1),
            "{m:?}"
        );
        let m = read(r#"{"jsonrpc":"2.0","result":{},"id":1}"#);
        assert!(matches!(m, Ok(Message::Response)), "{m:?}");
    }

    #[test]
    fn what_is_not_a_request_is_refused_with_the_id_it_had() {
        let ok = r#""jsonrpc":"2.0","method":"m""#;
        for params in ["null", "[]", "[1]", "\"x\"", "7", "true"] {
            let line = format!(r#"{{{ok},"params":{params},"id":4}}"#);
            assert_eq!(refused(&line), (json!(4), INVALID_REQUEST), "{line}");
        }
        for id in ["null", "{}", "[1]", "true"] {
            let line = format!(r#"{{{ok},"id":{id}}}"#);
            assert_eq!(refused(&line), (Value::Null, INVALID_REQUEST), "{line}");
        }
        assert_eq!(
            refused(r#"{"method":"m","id":2}"#),
            (json!(2), INVALID_REQUEST)
        );
        assert_eq!(
            refused(r#"{"jsonrpc":"2.0","method":3,"id":2}"#),
            (json!(2), INVALID_REQUEST)
        );
        let legacy = read(r#"{"op":"read","id":5}"#).expect_err("legacy");
        assert!(legacy.error.message.contains("legacy {op}"), "{legacy:?}");
        assert_eq!(refused("7"), (Value::Null, INVALID_REQUEST));
    }

    #[test]
    fn lines_that_are_no_json() {
        let code = |line: Result<&[u8], usize>| decode(line).map(|_| ()).map_err(|e| e.code);
        assert_eq!(code(Ok(b"{nope")), Err(PARSE_ERROR));
        assert_eq!(code(Ok(b"\"\xff\"")), Err(PARSE_ERROR));
        assert_eq!(code(Ok(b"[]")), Err(INVALID_REQUEST));
        assert_eq!(code(Err(limits::MAX_LINE_BYTES + 1)), Err(INVALID_REQUEST));
        let many = format!("{{{}\"z\":0}}", "\"k\":0,".repeat(limits::MAX_JSON_MEMBERS));
        assert_eq!(code(Ok(many.as_bytes())), Err(INVALID_REQUEST));
        let enough = format!(
            "{{{}\"z\":0}}",
            "\"k\":0,".repeat(limits::MAX_JSON_MEMBERS - 1)
        );
        assert!(code(Ok(enough.as_bytes())).is_ok());
        assert!(matches!(decode(Ok(b" \r")), Ok(None)));
        assert!(matches!(
            decode(Ok(b"[1, {}]")),
            Ok(Some(Frame::Batch(items))) if items.len() == 2
        ));
    }
}
