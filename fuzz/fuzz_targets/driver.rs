//! Fuzz the driver's line decoder (seed 003): bytes split into bounded
//! lines, each decoded into a request or the error line the driver writes.
//! An error line must have the protocol's shape, and no line ends the
//! stream.
//!
//! Run with `cargo +nightly fuzz run driver` from the repository root.
#![no_main]

use std::io::BufReader;

use libfuzzer_sys::fuzz_target;
use ptybroker::driver::{decode, INVALID_REQUEST, READ_ERROR};
use ptybroker::lines::read_bounded_line;

fuzz_target!(|data: &[u8]| {
    let mut r = BufReader::with_capacity(7, data);
    let mut line = Vec::new();
    while let Ok(Some(read)) = read_bounded_line(&mut r, &mut line, 512) {
        match decode(read.map(|()| line.as_slice())) {
            None => {}
            Some(Ok(req)) => {
                assert!(req.id.is_number());
                assert!(req.session.is_some() || req.method == "shutdown");
            }
            Some(Err(v)) => {
                assert_eq!(v["type"], "error", "{v}");
                assert!(v["id"].is_null() || v["id"].is_number() || v["id"].is_string());
                let code = v["error"]["code"].as_str().expect("code");
                assert!(code == INVALID_REQUEST || code == READ_ERROR, "{v}");
                assert!(v["error"]["message"].is_string(), "{v}");
            }
        }
    }
});
