//! Fuzz the emulator: parser and screen together. The first bytes choose a
//! size; the rest is fed in pieces split at 0xfe bytes, with a resize at
//! each 0xfd. Every reader is called so that no view can panic either.
//!
//! Run with `cargo +nightly fuzz run vt` from the repository root.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptybroker::vt::Screen;

fuzz_target!(|data: &[u8]| {
    let (head, rest) = data.split_at(data.len().min(2));
    let cols = head.first().map_or(80, |&b| u16::from(b % 200) + 1);
    let rows = head.get(1).map_or(24, |&b| u16::from(b % 60) + 1);
    let mut s = Screen::new(cols, rows, 50);
    for (i, piece) in rest.split(|&b| b == 0xfe).enumerate() {
        if let Some((&last, body)) = piece.split_last() {
            if last == 0xfd {
                s.feed(body);
                let c = (i as u16 * 7 + u16::from(last)) % 150 + 1;
                let r = (i as u16 * 3) % 50 + 1;
                s.resize(c, r);
                continue;
            }
        }
        s.feed(piece);
    }
    if let Err(e) = s.check_invariants() {
        panic!("{e}");
    }
    let c = s.cursor();
    assert!(c.row < s.rows() && c.col < s.cols());
    for r in 0..s.rows() as usize {
        let _ = s.row_text(r);
        let _ = s.row_runs(r);
    }
    for i in 0..s.scrollback_len() {
        let _ = s.scrollback_row_text(i);
        let _ = s.scrollback_row_runs(i);
    }
    let _ = s.render_ansi();
    let _ = s.take_answers();
    let _ = s.title();
    let _ = s.modes();
    let _ = s.is_mid_sequence();
});
