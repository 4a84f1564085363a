//! [`Client`]: the per-user daemon (the one `ptybroker start` talks to),
//! here or on another machine, with typed answers. The transport is the
//! CLI's own, so the errors are the ones the CLI shows.

use std::path::PathBuf;
use std::time::Duration;

use crate::json::json;
use serde_json::{Map, Value};

use super::error::{Error, ErrorKind, Result};
use super::screen::{Cursor, Size};
use super::session::{
    Exit, Input, ReadResult, Reason, Selection, SessionOptions, Signal, Status, StepResult, Until,
    WaitResult,
};
use crate::{client, remote};

/// Which daemon a [`Client`] talks to (the CLI's `--host` and `--via`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target(remote::Target);

impl Target {
    /// This user's daemon on this machine.
    pub fn local() -> Target {
        Target(remote::Target::Local)
    }

    /// A remote user's daemon through OpenSSH (`--host`): `box`,
    /// `me@box`, `ssh://me@box:2222` or an ssh config alias. `ptybroker`
    /// must be on the remote PATH (see [`Target::ssh_with`]).
    pub fn ssh(dest: &str) -> Result<Target> {
        Target::ssh_with(dest, "ptybroker")
    }

    /// [`Target::ssh`] with the remote binary named (`--remote-bin`).
    pub fn ssh_with(dest: &str, remote_bin: &str) -> Result<Target> {
        remote::Dest::parse(dest, remote_bin.to_string())
            .map(|d| Target(remote::Target::Ssh(d)))
            .map_err(|m| Error::new(ErrorKind::Invalid, m))
    }

    /// A daemon reached through a command run by `/bin/sh -c` that ends in
    /// `ptybroker proxy` (`--via`), e.g. `docker exec -i box ptybroker proxy`.
    pub fn via(command: &str) -> Result<Target> {
        remote::Target::resolve(None, Some(command.to_string()), None)
            .map(Target)
            .map_err(|m| Error::new(ErrorKind::Invalid, m))
    }
}

impl Default for Target {
    fn default() -> Target {
        Target::local()
    }
}

/// What [`Client::start`] returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Started {
    /// The session's name.
    pub session: String,
    /// The program's process id (on the daemon's machine).
    pub pid: i32,
    /// The terminal's size.
    pub size: Size,
}

/// A client of the per-user daemon: named sessions that outlive this
/// process, shared with the `ptybroker` command.
///
/// Each call is one connection; none waits without a bound. A call that
/// fails returns the message `ptybroker` would print.
///
/// ```no_run
/// use ptybroker::{Client, SessionOptions};
///
/// let daemon = Client::new();
/// daemon.start("py", &SessionOptions::new(["python3", "-q"]))?;
/// let answer = daemon.step_line("py", "6 * 7")?;
/// assert!(answer.output.contains("42"));
/// daemon.stop("py", true)?;
/// # Ok::<(), ptybroker::Error>(())
/// ```
pub struct Client {
    inner: client::Client,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("target", self.inner.target())
            .finish()
    }
}

impl Default for Client {
    fn default() -> Client {
        Client::new()
    }
}

impl Client {
    /// This user's daemon here. A missing daemon is started (as the CLI
    /// starts it) by running `ptybroker daemon` from PATH; see
    /// [`Client::daemon_program`].
    pub fn new() -> Client {
        Client::to(Target::local())
    }

    /// The daemon at `target`.
    pub fn to(target: Target) -> Client {
        let mut inner = client::Client::to(target.0);
        inner.set_program(PathBuf::from("ptybroker"));
        Client { inner }
    }

    /// Start a missing local daemon with this `ptybroker` binary.
    pub fn daemon_program(mut self, program: impl Into<PathBuf>) -> Client {
        self.inner.set_program(program.into());
        self
    }

    /// Use the daemon of another runtime directory than
    /// `$XDG_RUNTIME_DIR/ptybroker` (where `ptybroker` itself looks),
    /// e.g. a test's own.
    pub fn runtime_dir(mut self, dir: impl Into<PathBuf>) -> Client {
        self.inner.set_dir(dir.into());
        self
    }

    fn call(&self, method: &str, params: Value) -> Result<Value> {
        Ok(self.inner.call(method, params)?)
    }

    /// Start a program as session `name` (starting the daemon if none
    /// runs). A running session of that name is an error.
    pub fn start(&self, name: &str, options: &SessionOptions) -> Result<Started> {
        let o = options.inner();
        let env: Map<String, Value> = o
            .spawn
            .env
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        let mut p = json!({
            "session": name,
            "argv": o.spawn.argv,
            "cols": o.spawn.cols,
            "rows": o.spawn.rows,
            "cleanEnv": o.spawn.clean_env,
            "env": env,
        });
        if let Some(cwd) = &o.spawn.cwd {
            p["cwd"] = json!(cwd.to_string_lossy());
        }
        if let Some(t) = &o.term {
            p["term"] = json!(t);
        }
        let (stream, _note) = self.inner.connect_or_start().map_err(Error::from)?;
        let v = self.inner.call_on(stream, "pty/start", p)?;
        Ok(Started {
            session: v["session"].as_str().unwrap_or(name).to_string(),
            pid: int(&v["pid"])?,
            size: size(&v["size"])?,
        })
    }

    /// Session `name`'s screen, or the rows `sel` selects.
    pub fn read_screen(&self, name: &str, sel: Selection) -> Result<ReadResult> {
        let mut p = json!({ "session": name });
        match sel {
            Selection::All => {}
            Selection::Top(n) => p["top"] = json!(n),
            Selection::Bottom(n) => p["bottom"] = json!(n),
            Selection::Range { start, end } => {
                p["start"] = json!(start);
                p["end"] = json!(end);
            }
        }
        let v = self.call("pty/read", p)?;
        Ok(ReadResult {
            screen: text(&v["screen"])?,
            cursor: cursor(&v["cursor"])?,
            size: size(&v["size"])?,
        })
    }

    /// Send text and keys to session `name`; returns the bytes written.
    pub fn send(&self, name: &str, input: &[Input]) -> Result<usize> {
        let actions: Vec<Value> = input
            .iter()
            .map(|i| match i {
                Input::Text(t) => json!({ "text": t }),
                Input::Key(k) => json!({ "key": k }),
                Input::Paste(t) => json!({ "paste": t }),
            })
            .collect();
        let v = self.call("pty/write", json!({ "session": name, "action": actions }))?;
        usize::try_from(int(&v["written"])?).map_err(|_| unexpected(&v))
    }

    /// Write text to session `name` as it is; returns the UTF-8 byte count.
    pub fn write(&self, name: &str, text: &str) -> Result<usize> {
        self.send(name, &[Input::text(text)])
    }

    /// Wait on session `name` (see [`Session::wait`](crate::Session::wait)).
    pub fn wait(&self, name: &str, until: Until) -> Result<WaitResult> {
        let (u, timeout) = until.parts();
        let mut p = json!({ "session": name, "timeout": ms(timeout) });
        if let Some(t) = &u.text {
            p["match"] = json!(t);
        }
        if let Some(r) = &u.regex {
            p["regex"] = json!(r.as_str());
        }
        if u.exit {
            p["exit"] = json!(true);
        }
        if let Some(q) = u.quiet {
            p["quiet"] = json!(ms(q));
        }
        let v = self.call("pty/wait", p)?;
        Ok(WaitResult {
            matched: v["matched"].as_bool().ok_or_else(|| unexpected(&v))?,
            reason: reason(&v["reason"])?,
            screen: text(&v["screen"])?,
            cursor: cursor(&v["cursor"])?,
            size: size(&v["size"])?,
            waited: Duration::from_millis(uint(&v["waitedMs"])?),
        })
    }

    /// Type `line` and Enter into session `name`, wait until it has
    /// answered, and return what it wrote since the previous step.
    pub fn step_line(&self, name: &str, line: &str) -> Result<StepResult> {
        self.step_with(json!({ "session": name, "text": line }))
    }

    fn step_with(&self, p: Value) -> Result<StepResult> {
        let v = self.call("pty/step", p)?;
        Ok(StepResult {
            output: text(&v["output"])?,
            is_screen: v["view"] == "screen",
            reason: reason(&v["reason"])?,
            waited: Duration::from_millis(uint(&v["waitedMs"])?),
            status: status(&v["status"])?,
        })
    }

    /// Session `name`'s state.
    pub fn status(&self, name: &str) -> Result<Status> {
        status(&self.call("pty/status", json!({ "session": name }))?)
    }

    /// Every session, by name.
    pub fn list(&self) -> Result<Vec<(String, Status)>> {
        let v = self.call("pty/list", json!({}))?;
        let all = v["sessions"].as_array().ok_or_else(|| unexpected(&v))?;
        all.iter()
            .map(|s| Ok((text(&s["session"])?, status(s)?)))
            .collect()
    }

    /// Resize session `name`'s terminal.
    pub fn resize(&self, name: &str, cols: u16, rows: u16) -> Result<()> {
        self.call(
            "pty/resize",
            json!({ "session": name, "cols": cols, "rows": rows }),
        )
        .map(drop)
    }

    /// Send a signal to session `name` (see
    /// [`Session::signal`](crate::Session::signal)).
    pub fn signal(&self, name: &str, sig: Signal) -> Result<()> {
        self.call(
            "pty/signal",
            json!({ "session": name, "signal": sig.number() }),
        )
        .map(drop)
    }

    /// Stop session `name` (SIGHUP, then SIGKILL after a grace; at once with
    /// `force`) and forget it; returns how the program ended.
    pub fn stop(&self, name: &str, force: bool) -> Result<Option<Exit>> {
        let v = self.call("pty/stop", json!({ "session": name, "force": force }))?;
        Ok(exit(&v))
    }
}

fn unexpected(v: &Value) -> Error {
    Error::new(
        ErrorKind::Failed,
        format!("unexpected answer from the daemon: {v}"),
    )
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn text(v: &Value) -> Result<String> {
    v.as_str().map(str::to_string).ok_or_else(|| unexpected(v))
}

fn uint(v: &Value) -> Result<u64> {
    v.as_u64().ok_or_else(|| unexpected(v))
}

fn int(v: &Value) -> Result<i32> {
    v.as_i64()
        .and_then(|n| i32::try_from(n).ok())
        .ok_or_else(|| unexpected(v))
}

fn small(v: &Value) -> Result<u16> {
    v.as_u64()
        .and_then(|n| u16::try_from(n).ok())
        .ok_or_else(|| unexpected(v))
}

fn size(v: &Value) -> Result<Size> {
    Ok(Size {
        cols: small(&v["cols"])?,
        rows: small(&v["rows"])?,
    })
}

fn cursor(v: &Value) -> Result<Cursor> {
    Ok(Cursor {
        row: small(&v["row"])?,
        col: small(&v["col"])?,
        visible: v["visible"].as_bool().unwrap_or(true),
    })
}

fn reason(v: &Value) -> Result<Reason> {
    Ok(match v.as_str() {
        Some("matched") => Reason::Matched,
        Some("exited") => Reason::Exited,
        Some("quiet") => Reason::Quiet,
        Some("idle") => Reason::Idle,
        Some("timeout") => Reason::Timeout,
        _ => return Err(unexpected(v)),
    })
}

/// `exitCode` and `signal` as the daemon reports them.
fn exit(v: &Value) -> Option<Exit> {
    match (v["signal"].as_i64(), v["exitCode"].as_i64()) {
        (Some(s), _) => Some(Exit::Signal(i32::try_from(s).unwrap_or(0))),
        (None, Some(c)) => Some(Exit::Code(i32::try_from(c).unwrap_or(0))),
        (None, None) => None,
    }
}

fn status(v: &Value) -> Result<Status> {
    Ok(Status {
        pid: int(&v["pid"])?,
        exit: exit(v),
        running_for: Duration::from_millis(uint(&v["runningMs"])?),
        quiet_for: Duration::from_millis(uint(&v["quietMs"])?),
        output_end: uint(&v["outputEnd"])?,
        size: size(&v["size"])?,
    })
}
