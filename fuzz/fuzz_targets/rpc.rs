//! Fuzz the JSON-RPC request decoder as a daemon connection runs it: bytes
//! split into bounded lines, each answered by `rpc::answer` against a
//! manager with no sessions (nothing is ever run under cargo-fuzz, see
//! `pty::spawn`). Every line must get one well-formed response or none
//! (a blank line), and the connection must go on.
//!
//! Run with `cargo +nightly fuzz run rpc` from the repository root.
#![no_main]

use std::io::BufReader;

use libfuzzer_sys::fuzz_target;
use ptybroker::manager::Manager;
use ptybroker::rpc::Ctx;
use ptybroker::lines::read_bounded_line;
use ptybroker::server::answer_line;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let manager = Manager::new();
    let ctx = Ctx {
        manager: &manager,
        serve: data.first() == Some(&b's'),
        peer: None,
    };
    // A small limit and buffer so that long lines and split reads are hit.
    let mut r = BufReader::with_capacity(7, data);
    let mut line = Vec::new();
    while let Ok(Some(read)) = read_bounded_line(&mut r, &mut line, 512) {
        let Some((resp, _)) = answer_line(read.map(|()| line.as_slice()), &ctx) else {
            continue;
        };
        let v: Value = serde_json::from_str(&resp).expect("a response is JSON");
        assert_eq!(v["jsonrpc"], "2.0", "{resp}");
        assert!(v.get("id").is_some(), "{resp}");
        match (v.get("result"), v.get("error")) {
            (Some(_), None) => {}
            (None, Some(e)) => {
                assert!(e["code"].is_i64(), "{resp}");
                assert!(e["message"].is_string(), "{resp}");
            }
            _ => panic!("neither result nor error: {resp}"),
        }
    }
    assert!(manager.is_empty());
});
