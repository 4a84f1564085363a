//! `ptybroker`: dispatch on the first word to the verb of that name in
//! [`cli::spec::VERBS`]; help, advice and exit statuses are worded here once
//! for every verb.
//!
//! ## Start-up without Rust's runtime (glibc builds)
//!
//! Every client call is a whole process, so its start-up is most of a
//! one-shot call's cost (README, "Performance"). Before `main`, std's runtime
//! makes sure descriptors 0 to 2 are open, ignores SIGPIPE, and installs its
//! stack-overflow handler; for the last it asks glibc where the main
//! thread's stack lies, and glibc answers by reading and parsing
//! `/proc/self/maps`. All of it is about 20 system calls and 0.1 ms of a
//! 1.2 ms call here. On glibc the binary therefore starts at the C `main`
//! below and does the two that matter itself ([`start`]): descriptors 0 to 2
//! are opened on /dev/null when closed (so a socket or a session's terminal
//! can never become "standard output"), and SIGPIPE is blocked in every
//! thread, so a write to a reader that went away fails with EPIPE instead
//! of killing the daemon (children start with an empty mask: pty.rs and
//! std's spawn reset it). What is given up: a stack overflow ends the
//! process with SIGSEGV and no message, where std would print one first.
//! std still reads the arguments (on glibc from `.init_array`), flushes
//! nothing at exit (every writer here flushes its own output) and reports
//! a panic that reaches `main` with status 101, as its runtime would.
//! Other C libraries (the static musl builds) keep std's runtime: std takes
//! the arguments there from the runtime alone.

#![cfg_attr(all(target_env = "gnu", not(test)), no_main)]

use lexopt::prelude::*;

use ptybroker::cli::output::{err_line, out};
use ptybroker::cli::{help, spec, Failure};
use ptybroker::status;

/// The C entry point, called by glibc's start code.
#[cfg(all(target_env = "gnu", not(test)))]
// SAFETY: exporting `main` unmangled is what makes this the program's entry;
// nothing else in the program or its libraries defines that symbol, the
// signature is the one glibc calls, and the arguments are not read.
#[allow(unsafe_code)]
#[no_mangle]
pub extern "C" fn main(_argc: std::ffi::c_int, _argv: *const *const u8) -> std::ffi::c_int {
    start();
    let code = std::panic::catch_unwind(run).unwrap_or(101);
    let _ = std::io::Write::flush(&mut std::io::stdout());
    std::ffi::c_int::from(code)
}

#[cfg(not(all(target_env = "gnu", not(test))))]
fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(run())
}

/// What std's runtime would have done before `main` and this program needs:
/// descriptors 0 to 2 open, SIGPIPE without effect (see the module's head).
#[cfg(all(target_env = "gnu", not(test)))]
fn start() {
    for fd in [
        rustix::stdio::stdin(),
        rustix::stdio::stdout(),
        rustix::stdio::stderr(),
    ] {
        if rustix::io::fcntl_getfd(fd) == Err(rustix::io::Errno::BADF) {
            // The lowest free descriptor: the one just found closed, since
            // any lower one is open by now.
            if let Ok(null) = rustix::fs::open(
                "/dev/null",
                rustix::fs::OFlags::RDWR,
                rustix::fs::Mode::empty(),
            ) {
                let _ = std::os::fd::IntoRawFd::into_raw_fd(null);
            }
        }
    }
    let _ = ptybroker::pty::sigmask::block(&[rustix::process::Signal::PIPE]);
}

/// Dispatch the command line; the process's exit status.
fn run() -> u8 {
    let mut p = lexopt::Parser::from_env();
    let verb = match p.next() {
        Ok(Some(Value(v))) => v.string().unwrap_or_default(),
        Ok(Some(Short('h') | Long("help"))) => return finish(out(&help::global())),
        Ok(Some(Short('V') | Long("version"))) => {
            return finish(out(&format!("ptybroker {}\n", env!("CARGO_PKG_VERSION"))))
        }
        Ok(None) => return fail(NO_VERB, 2),
        Ok(Some(other)) => {
            return fail(&format!("{} (see ptybroker --help)", other.unexpected()), 2)
        }
        Err(e) => return fail(&e.to_string(), 2),
    };
    let Some(v) = spec::find(&verb) else {
        return finish(Err(help::unknown_verb(&verb)));
    };
    match (v.run)(&mut p) {
        Err(f) if f.is_help() => finish(out(&help::verb(v))),
        Err(f) => finish(Err(help::advise(v, f))),
        Ok(()) => 0,
    }
}

/// `ptybroker` alone: one line, as every failing call prints.
const NO_VERB: &str =
    "ptybroker needs a verb: ptybroker VERB [options] [ARGS] (see ptybroker --help)";

fn finish(result: Result<(), Failure>) -> u8 {
    match result {
        Ok(()) => 0,
        // `--exit-code`: the program's status, already on the status line.
        Err(f) if f.message.is_empty() => f.exit,
        Err(f) => fail(&f.message, f.exit),
    }
}

fn fail(msg: &str, code: u8) -> u8 {
    err_line(&status::error_line(msg));
    code
}
