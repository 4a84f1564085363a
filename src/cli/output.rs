//! Every byte the command line prints goes through here: standard output for
//! what the caller asked for, standard error for the status line and errors.
//!
//! A reader that goes away early (`ptybroker list | head -1`) is not an
//! error: SIGPIPE cannot end the process (main.rs blocks it on glibc, Rust's
//! runtime ignores it elsewhere; the daemon relies on it too), so such a
//! write fails with EPIPE, and the
//! rest of that output is dropped quietly while the call finishes as it
//! would have, with the same exit status (0 when the call itself succeeded).
//! `std`'s `print!` family would panic there instead. Any other failure to
//! write standard output (a full disk) is reported, as the call did not do
//! what was asked; standard error has nobody left to tell, so its failures
//! are ignored.

use std::io::{ErrorKind, Write};

use serde_json::Value;

use super::Failure;

/// Write `text` to standard output as it is.
pub fn out(text: &str) -> Result<(), Failure> {
    let mut o = std::io::stdout().lock();
    match o.write_all(text.as_bytes()).and_then(|()| o.flush()) {
        Err(e) if e.kind() != ErrorKind::BrokenPipe => Err(Failure {
            message: format!("cannot write the output: {e}"),
            exit: 1,
        }),
        _ => Ok(()),
    }
}

/// Write `text` to standard output, ending it with a newline if it has
/// none (a program's output whose last line is a prompt).
pub fn out_text(text: &str) -> Result<(), Failure> {
    if text.is_empty() || text.ends_with('\n') {
        out(text)
    } else {
        out(&format!("{text}\n"))
    }
}

/// A program's output as `start`, `step` and `wait` print it: with
/// `--raw` exactly as it came (a prompt stays without a newline), else as
/// [`out_text`].
pub fn out_output(text: &str, raw: bool) -> Result<(), Failure> {
    if raw {
        out(text)
    } else {
        out_text(text)
    }
}

/// One JSON object on one line of standard output (`--json`).
pub fn out_json(v: &Value) -> Result<(), Failure> {
    out(&format!("{v}\n"))
}

/// One line on standard error: the status line or a bracketed error.
pub fn err_line(line: &str) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(format!("{line}\n").as_bytes());
    let _ = e.flush();
}
