//! The CLI's side of the daemon socket: find or start the per-user daemon and
//! make one JSON-RPC call per connection. Nothing here waits without a
//! bound: connecting, starting a daemon and every answer have a deadline
//! (see [`limits::CLIENT_CONNECT_WAIT`] and [`answer_within`]), so that a
//! stopped or hung daemon is an error, not a hang.

use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::json::json;
use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};
use serde_json::Value;

use crate::remote::{self, Target};
use crate::sync::lock;
use crate::{limits, server, status};

/// A failed call, worded for the status line.
#[derive(Debug)]
pub struct CallError {
    pub message: String,
    /// The JSON-RPC error code, when the daemon answered with one.
    pub code: Option<i64>,
    /// The connection closed before a single byte of an answer came.
    unanswered: bool,
}

impl CallError {
    pub fn local(message: impl Into<String>) -> CallError {
        CallError {
            message: message.into(),
            code: None,
            unanswered: false,
        }
    }
}

/// The per-user daemon here, or a remote one (see [`remote`]).
pub struct Client {
    dir: PathBuf,
    target: Target,
    /// The `--via` command of the last stream, to name a lost call.
    via: Mutex<Option<remote::ViaCall>>,
    /// The binary that runs `daemon`: this executable unless set (a library
    /// user's program is not ptybroker).
    program: Option<PathBuf>,
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
        Client::to(Target::Local)
    }

    /// A client of `target`'s daemon.
    pub fn to(target: Target) -> Client {
        Client {
            dir: server::runtime_dir(),
            target,
            via: Mutex::new(None),
            program: None,
        }
    }

    /// Look for (and start) the daemon in `dir` rather than the user's
    /// runtime directory.
    pub fn set_dir(&mut self, dir: PathBuf) {
        self.dir = dir;
    }

    /// Start a missing daemon with `program` rather than this executable.
    pub fn set_program(&mut self, program: PathBuf) {
        self.program = Some(program);
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    /// A stream to the remote daemon; its proxy starts the daemon when
    /// none runs there.
    fn remote(&self) -> Result<UnixStream, CallError> {
        match &self.target {
            Target::Local => self.connect(),
            Target::Ssh(d) => remote::Link::new(d, &self.dir)
                .connect()
                .map_err(CallError::local),
            Target::Via(v) => {
                let (s, call) = remote::via(v).map_err(CallError::local)?;
                // The version check, on the same channel, before the call.
                let what = Client::exchange(&s, remote::DESCRIBE, Value::Null, &self.target)
                    .map_err(|e| CallError::local(call.failed(&e.message)))?;
                let out = remote::Output {
                    ok: true,
                    code: Some(0),
                    stdout: json!({ "result": what }).to_string(),
                    stderr: String::new(),
                };
                remote::check_described(v, "ptybroker", &out).map_err(CallError::local)?;
                *lock(&self.via) = Some(call);
                Ok(s)
            }
        }
    }

    /// Look for a running daemon; `Err` when its directory is unsafe or
    /// its socket cannot be reached for another reason.
    pub fn find(&self) -> Result<Found, CallError> {
        if self.target != Target::Local {
            return self.remote().map(Found::Running);
        }
        // Never talk to a socket in a directory someone else could have
        // put it in: the same check the daemon makes before it binds.
        if std::fs::symlink_metadata(&self.dir).is_ok() {
            server::check_private_dir(&self.dir).map_err(CallError::local)?;
        }
        let sock = server::socket_path(&self.dir);
        match connect_within(&sock, limits::CLIENT_CONNECT_WAIT) {
            Ok(s) => Ok(Found::Running(s)),
            Err(e) if e.kind() == io::ErrorKind::TimedOut => Err(CallError::local(format!(
                "the daemon at {} did not accept the connection within {}: it is stopped or hung (find it with `pgrep -u $USER -f 'ptybroker daemon'`)",
                sock.display(),
                status::duration(limits::CLIENT_CONNECT_WAIT)
            ))),
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
        if self.target != Target::Local {
            return Ok((self.remote()?, None));
        }
        let note = match self.find()? {
            Found::Running(s) => return Ok((s, None)),
            Found::Absent { stale } => stale.then(|| {
                "the previous daemon had died (its socket was stale); started a new one, and the old sessions are gone"
                    .to_string()
            }),
        };
        self.spawn_daemon()?;
        let sock = server::socket_path(&self.dir);
        let s = connect_within(&sock, limits::CLIENT_CONNECT_WAIT).map_err(|e| {
            CallError::local(format!(
                "the daemon did not start: {e} (see {})",
                server::log_path(&self.dir).display()
            ))
        })?;
        Ok((s, note))
    }

    /// Connect to a running daemon only; `Err` says why there is none.
    pub fn connect(&self) -> Result<UnixStream, CallError> {
        if self.target != Target::Local {
            return self.remote();
        }
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
        let exe = match &self.program {
            Some(p) => p.clone(),
            None => std::env::current_exe()
                .map_err(|e| CallError::local(format!("cannot find my own executable: {e}")))?,
        };
        use std::os::unix::fs::OpenOptionsExt;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .mode(0o600)
            .append(true)
            .open(server::log_path(&self.dir))
            .map_err(|e| CallError::local(format!("cannot open the daemon log: {e}")))?;
        let mut child = match spawn_daemon_as(&exe, &[], &log) {
            Ok(child) => child,
            // The kernel cannot run this file: we run under an emulator
            // (qemu-user without binfmt), which runs us but not our exec.
            // A program under qemu-user can exec host programs, so exec
            // the emulator for our architecture, if it is on PATH.
            Err(e) if Errno::from_io_error(&e) == Some(Errno::NOEXEC) => {
                let name = emulator_name();
                let by_hand = format!("{name} {} daemon &", sh_quote(&exe));
                let Some(qemu) = find_emulator() else {
                    return Err(CallError::local(format!(
                        "cannot start the daemon: this machine cannot run {} ({e}) and no {name} is on PATH; start it by hand: `{by_hand}`",
                        exe.display()
                    )));
                };
                spawn_daemon_as(&qemu, &[exe.as_os_str()], &log).map_err(|e| {
                    CallError::local(format!(
                        "cannot start the daemon through {}: {e}; start it by hand: `{by_hand}`",
                        qemu.display()
                    ))
                })?
            }
            Err(e) => {
                return Err(CallError::local(format!(
                    "cannot start the daemon: {e}; start it by hand: `{} daemon &`",
                    sh_quote(&exe)
                )))
            }
        };
        // The daemon says `ready` once it accepts connections, then lets go of
        // the pipe; reading to EOF waits exactly that long, within a bound.
        let mut out = Vec::new();
        if let Some(mut o) = child.stdout.take() {
            let deadline = Instant::now() + limits::CLIENT_CONNECT_WAIT;
            let mut buf = [0u8; 64];
            while wait_readable(o.as_fd(), deadline) {
                match o.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => out.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        }
        let out = String::from_utf8_lossy(&out);
        // The daemon forks nothing further; reap our direct child when it
        // exits (it detaches by running on in its own session).
        crate::sync::spawn(move || {
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

    /// One JSON-RPC call on `stream`, answered within [`answer_within`].
    /// Over ssh, a forward whose remote daemon has gone (it exits when
    /// idle) closes without a word while the master runs: the daemon is
    /// started again there and the call made once more.
    pub fn call_on(
        &self,
        stream: UnixStream,
        method: &str,
        params: Value,
    ) -> Result<Value, CallError> {
        match (
            Client::exchange(&stream, method, params.clone(), &self.target),
            &self.target,
        ) {
            (Err(e), Target::Ssh(d)) if e.unanswered => {
                drop(stream);
                let link = remote::Link::new(d, &self.dir);
                // The master ends (and our forward with it) when ssh's
                // connection is lost: the call may have reached the
                // daemon, so it is not made twice.
                if !link.master_alive() {
                    return Err(CallError::local(format!(
                        "lost the connection to {}: ssh's connection ended during the call (the next call connects again)",
                        d.shown
                    )));
                }
                let again = link.set_up().map_err(CallError::local)?;
                Client::exchange(&again, method, params, &self.target)
            }
            // A transport failure (no code): the command's own words.
            (Err(e), Target::Via(_)) if e.code.is_none() => match lock(&self.via).take() {
                Some(call) => Err(CallError::local(call.failed(&e.message))),
                None => Err(e),
            },
            (r, _) => r,
        }
    }

    fn exchange(
        stream: &UnixStream,
        method: &str,
        params: Value,
        target: &Target,
    ) -> Result<Value, CallError> {
        let limit = answer_within(method, &params);
        let deadline = Instant::now() + limit;
        let hung = || {
            if let Some(name) = target.name() {
                return CallError::local(format!(
                    "{name} did not answer within {}: the connection or the daemon there is stuck",
                    status::duration(limit)
                ));
            }
            let who = rustix::net::sockopt::socket_peercred(stream)
                .map(|c| format!("the daemon (pid {})", c.pid.as_raw_nonzero()))
                .unwrap_or_else(|_| "the daemon".into());
            CallError::local(format!(
                "{who} did not answer within {}: it is stopped or hung (`kill -CONT PID` resumes a stopped one; killing it ends its sessions)",
                status::duration(limit)
            ))
        };
        let closed = || {
            let message = match target.name() {
                Some(name) => format!("lost the connection to {name}: it closed without answering"),
                None => "the daemon closed the connection without answering".into(),
            };
            CallError {
                unanswered: true,
                ..CallError::local(message)
            }
        };
        let req = json!({"jsonrpc": "2.0", "method": method, "params": params, "id": 1});
        let mut line = req.to_string();
        line.push('\n');
        let timed_out = |e: &io::Error| {
            matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            )
        };
        let mut w = stream;
        w.set_write_timeout(Some(limit))
            .and_then(|()| w.write_all(line.as_bytes()))
            .map_err(|e| {
                if timed_out(&e) {
                    hung()
                } else if matches!(
                    e.kind(),
                    io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
                ) {
                    // Closed before the request was even taken: unanswered.
                    closed()
                } else {
                    CallError::local(format!("lost the daemon while sending: {e}"))
                }
            })?;
        // One line, read in pieces so that each read waits only for what is
        // left of the deadline.
        let mut resp = Vec::new();
        // A page first: most answers fit, and each 4 KiB zeroed up front is
        // a page fault a one-shot call pays (a 64 KiB buffer was 16 of them);
        // a read that fills it makes it big for the rest of a long answer.
        let mut buf = vec![0u8; 4096];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(hung());
            }
            let mut r = stream;
            let n = match r
                .set_read_timeout(Some(left))
                .and_then(|()| r.read(&mut buf))
            {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if timed_out(&e) => return Err(hung()),
                // A forward whose far end is gone may reset rather than
                // close: the same as closing without an answer.
                Err(e) if resp.is_empty() && e.kind() == io::ErrorKind::ConnectionReset => break,
                Err(e) => {
                    return Err(CallError::local(format!(
                        "lost the daemon while waiting: {e}"
                    )))
                }
            };
            if n == 0 {
                break;
            }
            resp.extend_from_slice(&buf[..n]);
            if buf[..n].contains(&b'\n') {
                break;
            }
            if n == buf.len() {
                buf.resize(64 * 1024, 0);
            }
        }
        if resp.is_empty() {
            return Err(closed());
        }
        let end = resp.iter().position(|b| *b == b'\n').unwrap_or(resp.len());
        let v: Value = serde_json::from_slice(&resp[..end])
            .map_err(|e| CallError::local(format!("unreadable answer from the daemon: {e}")))?;
        if let Some(err) = v.get("error") {
            return Err(CallError {
                message: err["message"]
                    .as_str()
                    .unwrap_or("unknown error")
                    .to_string(),
                code: err["code"].as_i64(),
                unanswered: false,
            });
        }
        Ok(v.get("result").cloned().unwrap_or(Value::Null))
    }

    /// Two calls in turn, the second's answer returned. On the local
    /// daemon both go over `stream`: one connection, so one connection
    /// thread there, and no second thread (with its stack and malloc arena
    /// left behind) when the second call comes before the first thread
    /// has ended. Elsewhere the second connects anew, as [`Client::call`].
    pub fn call_then(
        &self,
        stream: UnixStream,
        first: (&str, Value),
        then: (&str, Value),
    ) -> Result<Value, CallError> {
        if self.target == Target::Local {
            Client::exchange(&stream, first.0, first.1, &self.target)?;
            return Client::exchange(&stream, then.0, then.1, &self.target);
        }
        self.call_on(stream, first.0, first.1)?;
        self.call(then.0, then.1)
    }

    /// Call a method on a running daemon.
    pub fn call(&self, method: &str, params: Value) -> Result<Value, CallError> {
        self.call_on(self.connect()?, method, params)
    }
}

/// Start `program ARGS daemon` detached, its stderr appended to the log.
fn spawn_daemon_as(
    program: &Path,
    args: &[&std::ffi::OsStr],
    log: &std::fs::File,
) -> io::Result<std::process::Child> {
    let mut cmd = Command::new(program);
    // The daemon outlives this call: keep it off the caller's directory
    // (an unmount must not find it busy) and off its terminal.
    cmd.args(args)
        .arg("daemon")
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log.try_clone()?));
    crate::pty::spawn_detached(&mut cmd)
}

/// The qemu-user emulator that runs binaries of our architecture, as
/// Debian and upstream name it (`qemu-aarch64`, `qemu-arm`, ...).
fn emulator_name() -> String {
    let little = cfg!(target_endian = "little");
    let arch = match std::env::consts::ARCH {
        "x86" => "i386",
        "arm" if !little => "armeb",
        "aarch64" if !little => "aarch64_be",
        "powerpc" => "ppc",
        "powerpc64" if little => "ppc64le",
        "powerpc64" => "ppc64",
        "mips" if little => "mipsel",
        "mips64" if little => "mips64el",
        other => other,
    };
    format!("qemu-{arch}")
}

/// The emulator on PATH: `qemu-ARCH`, or `qemu-ARCH-static` as
/// qemu-user-static installs it.
fn find_emulator() -> Option<PathBuf> {
    let name = emulator_name();
    let names = [name.clone(), format!("{name}-static")];
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find_map(|dir| {
        names
            .iter()
            .map(|n| dir.join(n))
            .find(|p| p.is_file() && rustix::fs::access(p, rustix::fs::Access::EXEC_OK).is_ok())
    })
}

/// A path as one shell word, for a command the user is told to run.
fn sh_quote(p: &Path) -> String {
    let s = p.to_string_lossy();
    if s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@%".contains(&b))
    {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// How long the daemon may take to answer `method`: the longest the call
/// may legitimately take plus [`limits::CLIENT_ANSWER_MARGIN`]. A call that
/// waits (`pty/wait`, `pty/step`) may take its wait, as the daemon caps it;
/// one that acts on a program may take [`limits::CLIENT_ACT_SLACK`]; one
/// that only looks answers at once.
pub fn answer_within(method: &str, params: &Value) -> Duration {
    let ms = |key: &str, default: Duration| {
        params[key]
            .as_u64()
            .map_or(default, Duration::from_millis)
            .min(limits::MAX_WAIT)
    };
    let work = match method {
        "pty/read" | "pty/status" | "pty/list" | "pty/output" => Duration::ZERO,
        "pty/wait" => ms("timeout", limits::DEFAULT_WAIT) + limits::CLIENT_ACT_SLACK,
        "pty/step" => ms("maxWait", limits::STEP_MAX_WAIT) + limits::CLIENT_ACT_SLACK,
        _ => limits::CLIENT_ACT_SLACK,
    };
    work + limits::CLIENT_ANSWER_MARGIN
}

/// Connect to the Unix socket at `path`, waiting at most `limit` for a
/// daemon that does not accept (its backlog full: stopped or hung);
/// `TimedOut` then. Other errors are connect(2)'s own.
fn connect_within(path: &Path, limit: Duration) -> io::Result<UnixStream> {
    let deadline = Instant::now() + limit;
    let fd = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
        None,
    )?;
    let addr = SocketAddrUnix::new(path)?;
    loop {
        match rustix::net::connect(&fd, &addr) {
            Ok(()) => break,
            Err(Errno::INTR) => {}
            // A Unix socket refuses at once, never half-way: a full backlog
            // is EAGAIN, and there is nothing to poll for but time.
            Err(Errno::AGAIN) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(Errno::AGAIN) => return Err(io::ErrorKind::TimedOut.into()),
            Err(e) => return Err(e.into()),
        }
    }
    let s = UnixStream::from(fd);
    s.set_nonblocking(false)?;
    Ok(s)
}

/// Wait until `fd` can be read (or is at its end) or `deadline` passes;
/// false then.
fn wait_readable(fd: std::os::fd::BorrowedFd<'_>, deadline: Instant) -> bool {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let ts = Timespec::try_from(left).unwrap_or(Timespec {
            tv_sec: 1,
            tv_nsec: 0,
        });
        let mut fds = [PollFd::from_borrowed_fd(fd, PollFlags::IN)];
        match poll(&mut fds, Some(&ts)) {
            Ok(0) | Err(Errno::INTR) => {}
            Ok(_) => return true,
            Err(_) => return false,
        }
    }
}

impl Default for Client {
    fn default() -> Client {
        Client::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_may_take_its_own_wait_before_the_margin_runs() {
        let within = |m: &str, p: Value| answer_within(m, &p);
        let margin = limits::CLIENT_ANSWER_MARGIN;
        assert_eq!(within("pty/read", json!({"session": "s"})), margin);
        assert_eq!(within("pty/list", json!({})), margin);
        // `wait --max-wait` and `step --max-wait` keep their whole wait.
        let hour = Duration::from_secs(3600);
        assert!(within("pty/wait", json!({"timeout": 3_600_000})) > hour + margin);
        let minute = Duration::from_secs(60);
        assert!(within("pty/step", json!({"maxWait": 60_000})) > minute + margin);
        assert!(within("pty/step", json!({})) > limits::STEP_MAX_WAIT + margin);
        // A caller's wait is the daemon's to cap, and so the client's.
        assert!(within("pty/wait", json!({"timeout": u64::MAX})) < hour * 2);
    }

    #[test]
    fn acting_on_a_program_has_room_for_the_bounds_on_the_way() {
        // A stop: its grace, the reap after SIGKILL, a recording's finish.
        let stop = limits::STOP_GRACE + Duration::from_secs(2) + limits::RECORD_FINISH_WAIT;
        assert!(limits::CLIENT_ACT_SLACK >= stop);
        assert!(limits::CLIENT_ACT_SLACK >= limits::WRITE_TIMEOUT * 2);
        assert_eq!(
            answer_within("pty/stop", &json!({})),
            limits::CLIENT_ACT_SLACK + limits::CLIENT_ANSWER_MARGIN
        );
    }

    #[test]
    fn the_command_to_start_the_daemon_by_hand_is_one_shell_word_per_path() {
        assert_eq!(
            sh_quote(Path::new("/usr/bin/ptybroker")),
            "/usr/bin/ptybroker"
        );
        assert_eq!(
            sh_quote(Path::new("/opt/my tools/pb")),
            "'/opt/my tools/pb'"
        );
        assert_eq!(sh_quote(Path::new("/tmp/it's")), r"'/tmp/it'\''s'");
        // The emulator for the architecture this test runs on, as qemu names it.
        let want = match std::env::consts::ARCH {
            "x86_64" => "qemu-x86_64",
            "aarch64" => "qemu-aarch64",
            _ => return,
        };
        assert_eq!(emulator_name(), want);
    }
}
