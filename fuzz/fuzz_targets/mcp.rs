//! Fuzz the MCP server's decoder: bytes served as `ptybroker mcp` serves
//! stdin, every call answered in turn (tools included; nothing is ever run
//! under cargo-fuzz, see `pty::spawn`). Everything written must be JSON-RPC
//! 2.0 lines: responses, errors, batches of them, or notifications.
//!
//! Run with `cargo +nightly fuzz run mcp` from the repository root.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn check(v: &Value, line: &str) {
    assert_eq!(v["jsonrpc"], "2.0", "{line}");
    if v.get("method").is_some() {
        return; // a notification of ours
    }
    assert!(v.get("id").is_some(), "{line}");
    match (v.get("result"), v.get("error")) {
        (Some(_), None) => {}
        (None, Some(e)) => {
            assert!(e["code"].is_i64(), "{line}");
            assert!(e["message"].is_string(), "{line}");
        }
        _ => panic!("neither result nor error: {line}"),
    }
}

fuzz_target!(|data: &[u8]| {
    // Tool calls on sessions that do not exist answer at once; a wait with
    // nothing to wait on could still block, so keep inputs short of that
    // by construction: there are never any sessions.
    let out = ptybroker::mcp::answer_bytes(data);
    let text = std::str::from_utf8(&out).expect("output is UTF-8");
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).expect("every line is JSON");
        match &v {
            Value::Array(items) => {
                assert!(!items.is_empty(), "{line}");
                items.iter().for_each(|i| check(i, line));
            }
            v => check(v, line),
        }
    }
});
