//! `mcp --host` and `driver --host`: the remote server's standard input and
//! output relayed through this process rather than handed to ssh, so that
//! a server that dies (after [`crate::remote::Link::server_command`]'s
//! checks passed) still answers every request it was sent, with an error in
//! the protocol's own shape that says why, instead of a bare end of output.
//!
//! The relay reads lines, not messages: it notes the `id` of each request
//! that goes out and of each answer that comes back, and passes the bytes
//! through as they are. A line longer than [`limits::MAX_LINE_BYTES`]
//! passes in pieces, unnoted (the server refuses it anyway). Standard error
//! passes through too, its last line kept for the message.

use std::io::{self, Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use crate::json::json;
use serde_json::Value;

use crate::limits;
use crate::sync::lock;

/// The error shape of the protocol relayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// JSON-RPC 2.0 (MCP): `{"jsonrpc":"2.0","id":..,"error":{..}}`.
    JsonRpc,
    /// The JSON Lines driver (seed 003): `{"type":"error","id":..,..}`.
    Driver,
}

impl Shape {
    /// The answer to request `id` when the server is gone.
    fn error(self, id: &Value, message: &str) -> String {
        let v = match self {
            // -32000: the start of JSON-RPC's range for server errors.
            Shape::JsonRpc => json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {"code": -32000, "message": message},
            }),
            Shape::Driver => json!({
                "type": "error",
                "id": id,
                "error": {"code": "REQUEST_FAILED", "message": message},
            }),
        };
        format!("{v}\n")
    }
}

/// Run `cmd` with our standard input, output and error relayed to it until
/// its output ends; then answer what it left unanswered. `what` names the
/// server in messages (`the ptybroker mcp on box`). `Err` carries the
/// line for the status line and the exit status.
pub fn run(mut cmd: Command, shape: Shape, what: &str) -> Result<(), (String, u8)> {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| (format!("cannot run ssh: {e}"), 1))?;
    let pending: Arc<Mutex<Vec<Value>>> = Arc::default();
    if let Some(to) = child.stdin.take() {
        let pending = Arc::clone(&pending);
        // Not joined: it may sit in a read of our stdin when the server
        // dies, and ends with the process. Dropping `to` at the end of our
        // input passes that end on.
        crate::sync::spawn(move || {
            let mut to = to;
            pump(io::stdin().lock(), &mut to, |line| {
                if let Some(id) = request_id(line) {
                    lock(&pending).push(id);
                }
            });
        });
    }
    let said = child.stderr.take().map(|e| {
        std::thread::spawn(move || {
            let mut tail = String::new();
            pump(e, &mut io::stderr(), |line| {
                let l = String::from_utf8_lossy(line);
                if !l.trim().is_empty() {
                    tail = l.trim().to_string();
                }
            });
            tail
        })
    });
    let out = io::stdout();
    if let Some(from) = child.stdout.take() {
        pump(from, &mut out.lock(), |line| {
            if let Some(id) = answer_id(line) {
                lock(&pending).retain(|p| *p != id);
            }
        });
    }
    let status = child.wait().ok();
    let said = said.and_then(|t| t.join().ok()).unwrap_or_default();
    let code = status.and_then(|s| s.code());
    if code == Some(0) && lock(&pending).is_empty() {
        return Ok(());
    }
    let why = match (said.is_empty(), status) {
        (false, _) => said,
        (true, Some(s)) => s.to_string(),
        (true, None) => "no reason given".into(),
    };
    let message = format!("{what} ended: {why}");
    let mut o = out.lock();
    for id in lock(&pending).drain(..) {
        let _ = o.write_all(shape.error(&id, &message).as_bytes());
    }
    let _ = o.flush();
    let exit = code
        .and_then(|c| u8::try_from(c).ok())
        .filter(|c| *c != 0)
        .unwrap_or(1);
    Err((message, exit))
}

/// Copy `from` to `to` a line at a time, flushing each, and show `note`
/// each whole line of at most [`limits::MAX_LINE_BYTES`].
fn pump(from: impl Read, to: &mut impl Write, mut note: impl FnMut(&[u8])) {
    crate::lines::pump(from, to, limits::MAX_LINE_BYTES, |line| {
        note(line);
        true
    });
}

/// The id of a request that expects an answer (a notification has none).
fn request_id(line: &[u8]) -> Option<Value> {
    let v: Value = serde_json::from_slice(line).ok()?;
    v.get("method")?;
    v.get("id").filter(|id| !id.is_null()).cloned()
}

/// The id of an answer (a result or an error, not a request of its own).
fn answer_id(line: &[u8]) -> Option<Value> {
    let v: Value = serde_json::from_slice(line).ok()?;
    if v.get("method").is_some() {
        return None;
    }
    v.get("id").filter(|id| !id.is_null()).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_answers_are_told_apart_by_method() {
        assert_eq!(
            request_id(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#),
            Some(json!(3))
        );
        assert_eq!(
            request_id(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            None
        );
        assert_eq!(
            request_id(br#"{"id":"a","method":"status","sessionId":"s"}"#),
            Some(json!("a"))
        );
        assert_eq!(
            answer_id(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
            Some(json!(3))
        );
        assert_eq!(
            answer_id(br#"{"type":"response","id":1,"result":{}}"#),
            Some(json!(1))
        );
        // The driver's hello and a server's own request are no answers.
        assert_eq!(answer_id(br#"{"type":"hello","protocolVersion":2}"#), None);
        assert_eq!(
            answer_id(br#"{"jsonrpc":"2.0","id":9,"method":"roots/list"}"#),
            None
        );
    }

    #[test]
    fn a_pump_passes_every_byte_and_notes_whole_lines() {
        let mut out = Vec::new();
        let mut seen = Vec::new();
        pump(&b"one\ntwo\nthree"[..], &mut out, |l| seen.push(l.to_vec()));
        assert_eq!(out, b"one\ntwo\nthree");
        assert_eq!(seen, [b"one\n".to_vec(), b"two\n".to_vec()]);
    }

    #[test]
    fn errors_take_each_protocols_shape() {
        let e: Value =
            serde_json::from_str(&Shape::JsonRpc.error(&json!(7), "gone")).unwrap_or_default();
        assert_eq!(
            (e["jsonrpc"].as_str(), e["id"].as_i64()),
            (Some("2.0"), Some(7))
        );
        let e: Value =
            serde_json::from_str(&Shape::Driver.error(&json!(7), "gone")).unwrap_or_default();
        assert_eq!(e["error"]["code"], "REQUEST_FAILED");
    }
}
