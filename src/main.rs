//! `ptybroker`: argument dispatch to the front ends.

use std::process::ExitCode;
use std::sync::Arc;

use lexopt::prelude::*;

use ptybroker::cli::output::{err_line, out};
use ptybroker::cli::{self, Failure};
use ptybroker::manager::Manager;
use ptybroker::session::Options;
use ptybroker::{limits, server, status};

const HELP: &str = "\
ptybroker: keep interactive terminal programs alive in pseudo-terminals and
drive them from one-shot calls (LLM agents, scripts, CI).

Usage:
  ptybroker start [options] -- CMD [ARGS...]   start CMD, print its first output
  ptybroker step [options] [TEXT] [--key K]... type TEXT + Enter (or text and keys), print the answer
  ptybroker wait [options] [--match TEXT]      until the program exits (or new output has TEXT)
  ptybroker read [options]                     print the rendered screen
  ptybroker send [options] [TEXT] [--key K]... type text and keys, do not wait
  ptybroker status | list | resize | signal SIG  (INT, QUIT, TSTP: the foreground job only)
  ptybroker stop | kill-session                end a session (graceful | SIGKILL)
  ptybroker serve --cmd CMD (--socket PATH | --port N) [--cols C] [--rows R] [--cwd DIR]
  ptybroker daemon [--idle-exit SECS]          run the per-user daemon (started on demand)
  ptybroker driver                             the JSON Lines driver protocol on stdin/stdout
  ptybroker render [--cols C] [--rows R] [--format text|ansi|json|svg] FILE
                                               replay a raw capture or asciicast, print the screen
  ptybroker mcp                                serve MCP (terminal_* tools) on stdin/stdout

Common options:
  -s, --session NAME   the session to use (default: default)
  -t, --timeout MS     quiet window where the kernel cannot tell (default 500)
      --quiet-only     settle by the quiet window alone (programs that poll while working)
      --max-wait MS    hard cap on a wait (start/step: 10000, wait: 3600000)
      --raw            keep escape sequences in the output
      --screen|--stream  print the rendered screen | the output stream (not both)
      --json           print the call's result as one JSON object (not resize, signal)
      --exit-code      start/step/wait/stop: once the program has exited, exit with
                       its status (128+N for signal N) instead of 0
start: --cols C --rows R --cwd DIR --env NAME=VALUE --clean-env --term T --replace
read:  --top N | --bottom N | --start A --end B, --history, --ansi
step:  --key NAME (text and keys in order, no Enter added), --no-enter, --stdin
wait:  --match TEXT | --regex RE: in output not read yet (with --screen: on the screen)
send:  --key NAME, --text TEXT, --paste TEXT, --enter, --stdin
      --stdin: the text from standard input (not argv), less one trailing newline
resize: --cols C --rows R

Every call prints one status line on stderr. Usage errors exit 2, errors
from the daemon 1. See ptybroker(1).
";

fn main() -> ExitCode {
    // Rust's runtime starts us with SIGPIPE ignored, so a reader that goes
    // away makes writes fail instead of killing the daemon; children get the
    // default disposition back from std's spawn.
    let mut p = lexopt::Parser::from_env();
    let verb = match p.next() {
        Ok(Some(Value(v))) => v.string().unwrap_or_default(),
        Ok(Some(Short('h') | Long("help"))) => return finish(out(HELP)),
        Ok(Some(Short('V') | Long("version"))) => {
            return finish(out(&format!("ptybroker {}\n", env!("CARGO_PKG_VERSION"))))
        }
        Ok(None) => {
            err_line(HELP.trim_end());
            return ExitCode::from(2);
        }
        Ok(Some(other)) => return fail(&other.unexpected().to_string(), 2),
        Err(e) => return fail(&e.to_string(), 2),
    };
    if matches!(verb.as_str(), "daemon" | "serve" | "mcp" | "driver") {
        // These hold sessions (see pty::raise_fd_limit).
        ptybroker::pty::raise_fd_limit();
    }
    let result = match verb.as_str() {
        "daemon" => daemon(&mut p),
        "serve" => serve(&mut p),
        "render" => render(&mut p),
        "mcp" => mcp(&mut p),
        "driver" => driver(&mut p),
        "help" => out(HELP),
        v => match cli::VERBS.iter().find(|(name, _)| *name == v) {
            Some((_, run)) => run(&mut p),
            None => Err(Failure {
                message: format!("unknown command {v:?} (see ptybroker --help)"),
                exit: 2,
            }),
        },
    };
    finish(result)
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

fn daemon(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut idle_exit = limits::DAEMON_IDLE_EXIT;
    while let Some(arg) = p.next()? {
        match arg {
            Long("idle-exit") => {
                idle_exit = std::time::Duration::from_secs(p.value()?.parse()?);
            }
            Short('h') | Long("help") => return out(HELP),
            _ => return Err(arg.unexpected().into()),
        }
    }
    server::daemon(&server::runtime_dir(), idle_exit).map_err(|m| Failure {
        message: m,
        exit: 1,
    })
}

fn mcp(p: &mut lexopt::Parser) -> Result<(), Failure> {
    if let Some(arg) = p.next()? {
        return Err(match arg {
            Short('h') | Long("help") => return out(HELP),
            _ => arg.unexpected().into(),
        });
    }
    ptybroker::mcp::serve().map_err(|e| Failure {
        message: format!("mcp: {e}"),
        exit: 1,
    })
}

fn serve(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let usage = |m: &str| Failure {
        message: format!("serve: {m}"),
        exit: 2,
    };
    let mut cmd: Option<String> = None;
    let mut socket: Option<String> = None;
    let mut port: Option<String> = None;
    let mut host = "127.0.0.1".to_string();
    let mut cols = 100u64;
    let mut rows = 30u64;
    let mut cwd: Option<String> = None;
    let mut token_file: Option<String> = None;
    let mut insecure = false;
    while let Some(arg) = p.next()? {
        match arg {
            Long("cmd") => cmd = Some(p.value()?.string()?),
            Long("socket") => socket = Some(p.value()?.string()?),
            Long("port") => port = Some(p.value()?.string()?),
            Long("host") => host = p.value()?.string()?,
            Long("cols") => cols = p.value()?.parse()?,
            Long("rows") => rows = p.value()?.parse()?,
            Long("cwd") => cwd = Some(p.value()?.string()?),
            Long("token-file") => token_file = Some(p.value()?.string()?),
            Long("insecure-no-token") => insecure = true,
            Short('h') | Long("help") => return out(HELP),
            _ => return Err(arg.unexpected().into()),
        }
    }
    let cmd = cmd.ok_or_else(|| usage("--cmd is required"))?;
    if cmd.trim().is_empty() {
        return Err(usage("--cmd must name a program"));
    }
    let (cols, rows) = limits::check_size(cols, rows).map_err(|m| usage(&m))?;
    // Before any thread starts (see `server::ExitSignals::take`).
    let signals = server::ExitSignals::take().map_err(|e| Failure {
        message: format!("serve: cannot take signals: {e}"),
        exit: 1,
    })?;
    let listener = match (socket, port) {
        (Some(_), Some(_)) => return Err(usage("--socket and --port are mutually exclusive")),
        (None, None) => return Err(usage("one of --socket PATH or --port N is required")),
        (Some(path), None) => {
            server::serve_unix(std::path::Path::new(&path)).map_err(|m| usage(&m))?
        }
        (None, Some(port)) => {
            let port: u16 =
                port.parse().ok().filter(|p| *p >= 1).ok_or_else(|| {
                    usage(&format!("--port must be a port in 1-65535, got {port:?}"))
                })?;
            let token = if insecure {
                None
            } else {
                Some(load_or_make_token(token_file.as_deref(), port)?)
            };
            server::serve_tcp(&host, port, token).map_err(|m| usage(&m))?
        }
    };
    let manager = Arc::new(Manager::new());
    let mut opts = Options::new(ptybroker::session::shell_argv(&cmd));
    opts.spawn.cols = cols;
    opts.spawn.rows = rows;
    opts.spawn.cwd = cwd.map(Into::into);
    manager
        .start("default", &opts, false)
        .map_err(|e| Failure {
            message: e.to_string(),
            exit: 1,
        })?;
    server::run(
        listener,
        manager,
        server::Config {
            serve: true,
            idle_exit: None,
            signals: Some(signals.clone()),
        },
    )
    .map_err(|e| Failure {
        message: e.to_string(),
        exit: 1,
    })?;
    match signals.received() {
        // As a shell reports a program ended by a signal.
        Some(sig) => Err(Failure {
            message: format!(
                "serve: ended by signal {sig} ({}); its program was killed",
                status::signal_name(sig)
            ),
            exit: u8::try_from(128 + sig).unwrap_or(1),
        }),
        None => Ok(()),
    }
}

fn driver(p: &mut lexopt::Parser) -> Result<(), Failure> {
    if let Some(arg) = p.next()? {
        return Err(arg.unexpected().into());
    }
    ptybroker::driver::run()
}

fn render(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let usage = |m: String| Failure {
        message: format!("render: {m}"),
        exit: 2,
    };
    let (mut cols, mut rows) = (None, None);
    let mut format = ptybroker::replay::Format::Text;
    let mut file: Option<std::ffi::OsString> = None;
    while let Some(arg) = p.next()? {
        match arg {
            Long("cols") => cols = Some(p.value()?.parse::<u64>()?),
            Long("rows") => rows = Some(p.value()?.parse::<u64>()?),
            Long("format") => {
                format = ptybroker::replay::Format::parse(&p.value()?.string()?).map_err(usage)?
            }
            Value(v) if file.is_none() => file = Some(v),
            _ => return Err(arg.unexpected().into()),
        }
    }
    let file = file.ok_or_else(|| {
        usage("name a file to render (a raw capture or an asciicast v2 .cast)".into())
    })?;
    let size = match (cols, rows) {
        (None, None) => None,
        (c, r) => Some(limits::check_size(c.unwrap_or(80), r.unwrap_or(24)).map_err(usage)?),
    };
    let data = std::fs::read(&file).map_err(|e| Failure {
        message: format!("cannot read {}: {e}", file.to_string_lossy()),
        exit: 1,
    })?;
    let scr = ptybroker::replay::replay(&data, size).map_err(|m| Failure {
        message: m,
        exit: 1,
    })?;
    out(&ptybroker::replay::show(&scr, format))
}

/// The TCP token: from `--token-file`, else `$PTYBROKER_TOKEN`, else a new
/// one written to a private file whose path is printed (never the token).
fn load_or_make_token(file: Option<&str>, port: u16) -> Result<String, Failure> {
    let err = |m: String| Failure {
        message: m,
        exit: 1,
    };
    if let Some(f) = file {
        let t = std::fs::read_to_string(f)
            .map_err(|e| err(format!("cannot read token file {f}: {e}")))?;
        let t = t.trim().to_string();
        if t.is_empty() {
            return Err(err(format!("token file {f} is empty")));
        }
        return Ok(t);
    }
    if let Ok(t) = std::env::var("PTYBROKER_TOKEN") {
        if !t.is_empty() {
            return Ok(t);
        }
    }
    let dir = server::runtime_dir();
    server::ensure_private_dir(&dir).map_err(err)?;
    let path = dir.join(format!("serve-{port}.token"));
    let token = server::new_token().map_err(err)?;
    {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| err(format!("cannot write {}: {e}", path.display())))?;
        f.write_all(token.as_bytes())
            .map_err(|e| err(format!("cannot write {}: {e}", path.display())))?;
    }
    err_line(&format!(
        "ptybroker serve: token written to {} (send it first: {{\"jsonrpc\":\"2.0\",\"method\":\"auth\",\"params\":{{\"token\":\"...\"}},\"id\":0}})",
        path.display()
    ));
    Ok(token)
}
