//! The verbs that run here rather than asking the daemon: the servers
//! (`daemon`, `serve`, `mcp`, `driver`, `proxy`), `render` and `install`. Found by name in
//! [`super::spec::VERBS`] like the client verbs.

use std::sync::Arc;

use super::output::{err_line, out};
use super::{number, value, Failure, Opt};
use crate::manager::Manager;
use crate::session::Options;
use crate::{limits, server, status};

pub fn daemon(p: &mut lexopt::Parser) -> Result<(), Failure> {
    // It holds sessions (see pty::raise_fd_limit).
    crate::pty::raise_fd_limit();
    let mut idle_exit = limits::DAEMON_IDLE_EXIT;
    while let Some(arg) = Opt::next(p)? {
        match arg.flag() {
            "--idle-exit" => idle_exit = std::time::Duration::from_secs(number(p, &arg)?),
            _ => return Err(arg.unexpected()),
        }
    }
    server::daemon(&server::runtime_dir(), idle_exit).map_err(|m| Failure {
        message: m,
        exit: 1,
    })
}

/// `--host DEST [--remote-bin PATH]` of `mcp` and `driver`: the same
/// server run on DEST for this one channel's lifetime, relayed (see
/// [`crate::relay`]); `Some` with how it ended, `None` to serve here.
fn remote_server(
    p: &mut lexopt::Parser,
    verb: &str,
) -> Result<Option<Result<(), Failure>>, Failure> {
    let (mut host, mut bin) = (None, None);
    while let Some(arg) = Opt::next(p)? {
        match arg.flag() {
            "--host" => host = Some(value(p)?),
            "--remote-bin" => bin = Some(value(p)?),
            _ => return Err(arg.unexpected()),
        }
    }
    let fail = |message: String, exit| Failure {
        message: format!("{verb}: {message}"),
        exit,
    };
    match crate::remote::Target::resolve(host, None, bin).map_err(|m| fail(m, 2))? {
        crate::remote::Target::Ssh(d) => {
            let link = crate::remote::Link::new(&d, &server::runtime_dir());
            let cmd = link.server_command(verb).map_err(|m| fail(m, 1))?;
            let shape = if verb == "mcp" {
                crate::relay::Shape::JsonRpc
            } else {
                crate::relay::Shape::Driver
            };
            let what = format!("the ptybroker {verb} on {}", d.shown);
            Ok(Some(
                crate::relay::run(cmd, shape, &what).map_err(|(m, exit)| fail(m, exit)),
            ))
        }
        _ => Ok(None),
    }
}

pub fn proxy(p: &mut lexopt::Parser) -> Result<(), Failure> {
    if let Some(arg) = Opt::next(p)? {
        return Err(arg.unexpected());
    }
    crate::proxy::run().map_err(|m| Failure {
        message: format!("proxy: {m}"),
        exit: 1,
    })
}

pub fn mcp(p: &mut lexopt::Parser) -> Result<(), Failure> {
    if let Some(ended) = remote_server(p, "mcp")? {
        return ended;
    }
    // It holds sessions (see pty::raise_fd_limit).
    crate::pty::raise_fd_limit();
    crate::mcp::serve().map_err(|e| Failure {
        message: format!("mcp: {e}"),
        exit: 1,
    })
}

pub fn serve(p: &mut lexopt::Parser) -> Result<(), Failure> {
    // It holds sessions (see pty::raise_fd_limit).
    crate::pty::raise_fd_limit();
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
    while let Some(arg) = Opt::next(p)? {
        match arg.flag() {
            "--cmd" => cmd = Some(value(p)?),
            "--socket" => socket = Some(value(p)?),
            "--port" => port = Some(value(p)?),
            "--host" => host = value(p)?,
            "--cols" => cols = number(p, &arg)?,
            "--rows" => rows = number(p, &arg)?,
            "--cwd" => cwd = Some(value(p)?),
            "--token-file" => token_file = Some(value(p)?),
            "--insecure-no-token" => insecure = true,
            _ => return Err(arg.unexpected()),
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
    let mut token_note: Option<std::path::PathBuf> = None;
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
            // Before a token file is written for it.
            server::tcp_host(&host).map_err(|m| usage(&m))?;
            let (token, fresh) = if insecure {
                (None, None)
            } else {
                let (t, fresh) = load_or_make_token(token_file.as_deref(), port)?;
                (Some(t), fresh)
            };
            let listener = server::serve_tcp(&host, port, token.clone()).map_err(|m| usage(&m))?;
            // A new token's file, written once the port is ours (never over
            // the file of a `serve` that has it), named once the program runs.
            if let (Some(path), Some(t)) = (fresh, &token) {
                match write_token(&path, t) {
                    Ok(()) => token_note = Some(path),
                    Err(f) => {
                        listener.discard();
                        return Err(f);
                    }
                }
            }
            listener
        }
    };
    let manager = Arc::new(Manager::new());
    let mut opts = Options::new(crate::session::shell_argv(&cmd));
    opts.spawn.cols = cols;
    opts.spawn.rows = rows;
    opts.spawn.cwd = cwd.map(Into::into);
    if let Err(e) = manager.start("default", &opts, false) {
        listener.discard();
        return Err(Failure {
            message: e.to_string(),
            exit: 1,
        });
    }
    if let Some(path) = token_note {
        err_line(&format!(
            "ptybroker serve: token written to {} (send it first: {{\"jsonrpc\":\"2.0\",\"method\":\"auth\",\"params\":{{\"token\":\"...\"}},\"id\":0}})",
            path.display()
        ));
    }
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

pub fn driver(p: &mut lexopt::Parser) -> Result<(), Failure> {
    if let Some(ended) = remote_server(p, "driver")? {
        return ended;
    }
    // It holds sessions (see pty::raise_fd_limit).
    crate::pty::raise_fd_limit();
    crate::driver::run()
}

pub fn render(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let usage = |m: String| Failure {
        message: format!("render: {m}"),
        exit: 2,
    };
    let (mut cols, mut rows) = (None, None);
    let mut format = crate::replay::Format::Text;
    let mut file: Option<std::ffi::OsString> = None;
    while let Some(arg) = Opt::next(p)? {
        match (arg, file.is_none()) {
            (Opt::Value(v), true) => file = Some(v),
            (arg, _) => match arg.flag() {
                "--cols" => cols = Some(number(p, &arg)?),
                "--rows" => rows = Some(number(p, &arg)?),
                "--format" => format = crate::replay::Format::parse(&value(p)?).map_err(usage)?,
                _ => return Err(arg.unexpected()),
            },
        }
    }
    let file = file.ok_or_else(|| {
        usage("name a file to render (a raw capture or an asciicast v2 .cast)".into())
    })?;
    let size = match (cols, rows) {
        (None, None) => None,
        (c, r) => Some(limits::check_size(c.unwrap_or(80), r.unwrap_or(24)).map_err(usage)?),
    };
    let name = file.to_string_lossy();
    let input = std::fs::File::open(&file).map_err(|e| Failure {
        message: format!("cannot read {name}: {e}"),
        exit: 1,
    })?;
    let scr = crate::replay::replay(input, &name, size).map_err(|m| Failure {
        message: m,
        exit: 1,
    })?;
    out(&crate::replay::show(&scr, format))
}

/// The TCP token: from `--token-file`, else `$PTYBROKER_TOKEN`, else a new
/// one, with the private file it goes to (see [`write_token`]; its path is
/// printed, never the token).
fn load_or_make_token(
    file: Option<&str>,
    port: u16,
) -> Result<(String, Option<std::path::PathBuf>), Failure> {
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
        return Ok((t, None));
    }
    if let Ok(t) = std::env::var("PTYBROKER_TOKEN") {
        if !t.is_empty() {
            return Ok((t, None));
        }
    }
    let dir = server::runtime_dir();
    server::ensure_private_dir(&dir).map_err(err)?;
    let path = dir.join(format!("serve-{port}.token"));
    let token = server::new_token().map_err(err)?;
    Ok((token, Some(path)))
}

/// Write a new token to its private file.
fn write_token(path: &std::path::Path, token: &str) -> Result<(), Failure> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let err = |e: std::io::Error| Failure {
        message: format!("cannot write {}: {e}", path.display()),
        exit: 1,
    };
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(err)?;
    f.write_all(token.as_bytes()).map_err(err)
}

/// `install --host DEST [--path P]`: see [`crate::install`].
pub fn install(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let (mut host, mut path) = (None, None);
    while let Some(arg) = Opt::next(p)? {
        match arg.flag() {
            "--host" => host = Some(value(p)?),
            "--path" => path = Some(value(p)?),
            _ => return Err(arg.unexpected()),
        }
    }
    let fail = |message: String, exit| Failure {
        message: format!("install: {message}"),
        exit,
    };
    // Only an explicit --host: installing is never implied by
    // PTYBROKER_HOST.
    let Some(host) = host else {
        return Err(fail(
            "--host DEST is required: where to install ptybroker".into(),
            2,
        ));
    };
    let dest = crate::remote::Dest::parse(&host, "ptybroker".into()).map_err(|m| fail(m, 2))?;
    let path = path.unwrap_or_else(|| crate::install::DEFAULT_PATH.into());
    let report = crate::install::install(&dest, &path).map_err(|m| fail(m, 1))?;
    super::output::out_text(&report)
}
