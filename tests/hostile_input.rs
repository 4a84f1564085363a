//! Hostile input (issue 7): every file in `fuzz/regressions/TARGET/` goes
//! through the same decoder and the same checks as the cargo-fuzz target
//! of that name, so that what a fuzzer once found stays fixed without a
//! nightly toolchain. Every decoding error must come back in the
//! protocol's own shape, and the stream must go on after it.

use std::io::BufReader;
use std::path::PathBuf;

use ptybroker::manager::Manager;
use ptybroker::rpc::Ctx;
use ptybroker::server::{answer_line, read_bounded_line};
use serde_json::Value;

fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no inputs in {}", dir.display());
    files
        .into_iter()
        .map(|p| {
            let data = std::fs::read(&p).expect("read");
            (p, data)
        })
        .collect()
}

/// A JSON-RPC 2.0 response (or our notification) in shape.
fn jsonrpc_shape(v: &Value, what: &str) {
    assert_eq!(v["jsonrpc"], "2.0", "{what}: {v}");
    if v.get("method").is_some() {
        return;
    }
    assert!(v.get("id").is_some(), "{what}: {v}");
    match (v.get("result"), v.get("error")) {
        (Some(_), None) => {}
        (None, Some(e)) => {
            assert!(e["code"].is_i64(), "{what}: {v}");
            assert!(e["message"].is_string(), "{what}: {v}");
        }
        _ => panic!("{what}: neither result nor error: {v}"),
    }
}

#[test]
fn rpc_regressions() {
    for (path, data) in inputs("rpc") {
        let what = path.display().to_string();
        let manager = Manager::new();
        let ctx = Ctx {
            manager: &manager,
            serve: false,
            peer: None,
        };
        let mut r = BufReader::with_capacity(7, &data[..]);
        let mut line = Vec::new();
        let mut answered = 0;
        while let Ok(Some(read)) = read_bounded_line(&mut r, &mut line, 512) {
            if let Some((resp, _)) = answer_line(read.map(|()| line.as_slice()), &ctx) {
                let v: Value = serde_json::from_str(&resp).expect("JSON");
                jsonrpc_shape(&v, &what);
                answered += 1;
            }
        }
        assert!(answered > 0 || data.iter().all(|b| *b != b'\n'), "{what}");
        assert!(manager.is_empty(), "{what} started a session");
    }
}

#[test]
fn driver_regressions() {
    use ptybroker::driver::{decode, INVALID_REQUEST, READ_ERROR};
    for (path, data) in inputs("driver") {
        let what = path.display().to_string();
        let mut r = BufReader::with_capacity(7, &data[..]);
        let mut line = Vec::new();
        while let Ok(Some(read)) = read_bounded_line(&mut r, &mut line, 512) {
            match decode(read.map(|()| line.as_slice())) {
                None => {}
                Some(Ok(req)) => assert!(req.id.is_number(), "{what}"),
                Some(Err(v)) => {
                    assert_eq!(v["type"], "error", "{what}: {v}");
                    let code = v["error"]["code"].as_str().expect("code");
                    assert!(code == INVALID_REQUEST || code == READ_ERROR, "{what}: {v}");
                    assert!(v["error"]["message"].is_string(), "{what}: {v}");
                }
            }
        }
    }
}

#[test]
fn mcp_regressions() {
    for (path, data) in inputs("mcp") {
        let what = path.display().to_string();
        let out = ptybroker::mcp::answer_bytes(&data);
        let text = String::from_utf8(out).expect("UTF-8");
        for line in text.lines() {
            let v: Value = serde_json::from_str(line).expect("JSON line");
            match &v {
                Value::Array(items) => items.iter().for_each(|i| jsonrpc_shape(i, &what)),
                v => jsonrpc_shape(v, &what),
            }
        }
    }
}
