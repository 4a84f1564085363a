//! The CLI's side of the daemon socket: find or start the per-user daemon and
//! make one JSON-RPC call per connection.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::server;

/// A failed call, worded for the status line.
#[derive(Debug)]
pub struct CallError {
    pub message: String,
    /// The JSON-RPC error code, when the daemon answered with one.
    pub code: Option<i64>,
}

impl CallError {
    fn local(message: impl Into<String>) -> CallError {
        CallError {
            message: message.into(),
            code: None,
        }
    }
}

pub struct Client {
    dir: PathBuf,
}

/// What `connect` found on the way.
pub enum Found {
    Running(UnixStream),
    /// No daemon; `stale` when a dead one left its socket behind.
    Absent {
        stale: bool,
    },
}

impl Client {
    pub fn new() -> Client {
        Client {
            dir: server::runtime_dir(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Look for a running daemon; `Err` when its directory is unsafe or
    /// its socket cannot be reached for another reason.
    pub fn find(&self) -> Result<Found, CallError> {
        // Never talk to a socket in a directory someone else could have
        // put it in: the same check the daemon makes before it binds.
        if std::fs::symlink_metadata(&self.dir).is_ok() {
            server::check_private_dir(&self.dir).map_err(CallError::local)?;
        }
        let sock = server::socket_path(&self.dir);
        match UnixStream::connect(&sock) {
            Ok(s) => Ok(Found::Running(s)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(Found::Absent { stale: false })
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                Ok(Found::Absent { stale: true })
            }
            Err(e) => Err(CallError::local(format!(
                "cannot reach the daemon at {}: {e}",
                sock.display()
            ))),
        }
    }

    /// Connect, starting the daemon if none runs. Returns the stream and a
    /// note for the user when a dead daemon was replaced.
    pub fn connect_or_start(&self) -> Result<(UnixStream, Option<String>), CallError> {
        let note = match self.find()? {
            Found::Running(s) => return Ok((s, None)),
            Found::Absent { stale } => stale.then(|| {
                "the previous daemon had died (its socket was stale); started a new one, and the old sessions are gone"
                    .to_string()
            }),
        };
        self.spawn_daemon()?;
        let sock = server::socket_path(&self.dir);
        let s = UnixStream::connect(&sock).map_err(|e| {
            CallError::local(format!(
                "the daemon did not start: {e} (see {})",
                server::log_path(&self.dir).display()
            ))
        })?;
        Ok((s, note))
    }

    /// Connect to a running daemon only; `Err` says why there is none.
    pub fn connect(&self) -> Result<UnixStream, CallError> {
        match self.find()? {
            Found::Running(s) => Ok(s),
            Found::Absent { stale: false } => Err(CallError::local("no daemon is running (start a session first)")),
            Found::Absent { stale: true } => Err(CallError::local(
                "the daemon is gone (it was killed or crashed) and its sessions with it; start a new session",
            )),
        }
    }

    fn spawn_daemon(&self) -> Result<(), CallError> {
        server::ensure_private_dir(&self.dir).map_err(CallError::local)?;
        let exe = std::env::current_exe()
            .map_err(|e| CallError::local(format!("cannot find my own executable: {e}")))?;
        use std::os::unix::fs::OpenOptionsExt;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .mode(0o600)
            .append(true)
            .open(server::log_path(&self.dir))
            .map_err(|e| CallError::local(format!("cannot open the daemon log: {e}")))?;
        let mut cmd = Command::new(exe);
        // The daemon outlives this call: keep it off the caller's directory
        // (an unmount must not find it busy) and off its terminal.
        cmd.arg("daemon")
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log));
        let mut child = crate::pty::spawn_detached(&mut cmd)
            .map_err(|e| CallError::local(format!("cannot start the daemon: {e}")))?;
        // The daemon says `ready` once it accepts connections, then lets go of
        // the pipe; reading to EOF waits exactly that long.
        let mut out = String::new();
        if let Some(mut o) = child.stdout.take() {
            let _ = o.read_to_string(&mut out);
        }
        // The daemon forks nothing further; reap our direct child when it
        // exits (it detaches by running on in its own session).
        std::thread::spawn(move || {
            let _ = child.wait();
        });
        if out.trim() == "ready" {
            Ok(())
        } else {
            Err(CallError::local(format!(
                "the daemon did not start (see {})",
                server::log_path(&self.dir).display()
            )))
        }
    }

    /// One JSON-RPC call on `stream`.
    pub fn call_on(stream: UnixStream, method: &str, params: Value) -> Result<Value, CallError> {
        let req = json!({"jsonrpc": "2.0", "method": method, "params": params, "id": 1});
        let mut w = &stream;
        let mut line = req.to_string();
        line.push('\n');
        w.write_all(line.as_bytes())
            .map_err(|e| CallError::local(format!("lost the daemon while sending: {e}")))?;
        let mut r = BufReader::new(&stream);
        let mut resp = String::new();
        r.read_line(&mut resp)
            .map_err(|e| CallError::local(format!("lost the daemon while waiting: {e}")))?;
        if resp.is_empty() {
            return Err(CallError::local(
                "the daemon closed the connection without answering",
            ));
        }
        let v: Value = serde_json::from_str(&resp)
            .map_err(|e| CallError::local(format!("unreadable answer from the daemon: {e}")))?;
        if let Some(err) = v.get("error") {
            return Err(CallError {
                message: err["message"]
                    .as_str()
                    .unwrap_or("unknown error")
                    .to_string(),
                code: err["code"].as_i64(),
            });
        }
        Ok(v.get("result").cloned().unwrap_or(Value::Null))
    }

    /// Call a method on a running daemon.
    pub fn call(&self, method: &str, params: Value) -> Result<Value, CallError> {
        Client::call_on(self.connect()?, method, params)
    }
}

impl Default for Client {
    fn default() -> Client {
        Client::new()
    }
}
