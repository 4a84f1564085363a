//! `ptybroker`: dispatch on the first word to the verb of that name in
//! [`cli::spec::VERBS`]; help, advice and exit statuses are worded here once
//! for every verb.

use std::process::ExitCode;

use lexopt::prelude::*;

use ptybroker::cli::output::{err_line, out};
use ptybroker::cli::{help, spec, Failure};
use ptybroker::status;

fn main() -> ExitCode {
    // Rust's runtime starts us with SIGPIPE ignored, so a reader that goes
    // away makes writes fail instead of killing the daemon; children get the
    // default disposition back from std's spawn.
    let mut p = lexopt::Parser::from_env();
    let verb = match p.next() {
        Ok(Some(Value(v))) => v.string().unwrap_or_default(),
        Ok(Some(Short('h') | Long("help"))) => return finish(out(&help::global())),
        Ok(Some(Short('V') | Long("version"))) => {
            return finish(out(&format!("ptybroker {}\n", env!("CARGO_PKG_VERSION"))))
        }
        Ok(None) => {
            err_line(help::global().trim_end());
            return ExitCode::from(2);
        }
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
        Ok(()) => ExitCode::SUCCESS,
    }
}

fn finish(result: Result<(), Failure>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // `--exit-code`: the program's status, already on the status line.
        Err(f) if f.message.is_empty() => ExitCode::from(f.exit),
        Err(f) => fail(&f.message, f.exit),
    }
}

fn fail(msg: &str, code: u8) -> ExitCode {
    err_line(&status::error_line(msg));
    ExitCode::from(code)
}
