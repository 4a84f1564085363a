//! Other machines and containers: the client's way to a remote user's
//! daemon. Nothing of ours listens on a network. The far end always runs
//! `ptybroker proxy` (see [`proxy`]), which speaks the daemon's JSON-RPC on
//! its standard input and output for the user it runs as; the near end
//! reaches it through OpenSSH (`--host`) or through any command whose
//! stdin and stdout reach such a proxy (`--via`: `docker exec -i`, ...).
//!
//! Every transport ends in a [`UnixStream`], so the client's one call
//! path ([`crate::client::Client::call_on`]) serves them all:
//!
//! - **ssh, warm**: one OpenSSH master per destination (ControlMaster, its
//!   ControlPath in our private runtime directory, ControlPersist
//!   [`limits::SSH_PERSIST`]) forwards a local socket of ours to the remote
//!   daemon's socket (`ssh -O forward -L`). A one-shot call connects to the
//!   local socket: no process starts and no handshake happens, so it costs
//!   the remote call plus one round trip. The master was told the remote
//!   socket's path by the proxy's `proxy/describe` answer, which is also
//!   the version check.
//! - **ssh, cold or without forwarding**: the set-up above, or (where the
//!   server forbids stream-local forwarding) one `ssh ... proxy` channel
//!   per call over the master, on one end of a socket pair.
//! - **via**: the command runs per call on one end of a socket pair.
//!
//! The first request on a new proxy channel is `proxy/describe`, which the
//! proxy answers itself: the remote version, protocol and socket.

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::json::json;
use serde_json::Value;

use crate::{limits, server, status};

/// The protocol version a proxy reports in `proxy/describe`: raised when
/// a method or a field that clients rely on changes incompatibly.
pub const PROTOCOL: u64 = 1;

/// The method a proxy answers itself, before anything reaches the daemon.
pub const DESCRIBE: &str = "proxy/describe";

/// Where a client's calls go.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Target {
    /// This user's daemon on this machine.
    #[default]
    Local,
    /// A remote user's daemon through OpenSSH.
    Ssh(Dest),
    /// A remote daemon through a command run by `/bin/sh -c`.
    Via(String),
}

/// An ssh destination as the user gave it, and how to reach `ptybroker`
/// there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dest {
    /// As given (`box`, `ssh://me@box:2222`): what messages name.
    pub shown: String,
    /// `[user@]host` or an ssh config alias, as ssh takes it.
    pub host: String,
    pub port: Option<u16>,
    /// The remote binary: a name on the remote PATH or a path.
    pub remote_bin: String,
}

impl Target {
    /// The target from the options (`--host`, `--via`, `--remote-bin`),
    /// each falling back on its environment variable.
    pub fn resolve(
        host: Option<String>,
        via: Option<String>,
        remote_bin: Option<String>,
    ) -> Result<Target, String> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        if host.is_some() && via.is_some() {
            return Err("--host and --via cannot be combined: pick one way there".into());
        }
        if let Some(v) = via {
            if v.trim().is_empty() {
                return Err(
                    "--via needs a command, e.g. 'docker exec -i box ptybroker proxy'".into(),
                );
            }
            return Ok(Target::Via(v));
        }
        let Some(h) = host.or_else(|| env("PTYBROKER_HOST")) else {
            return Ok(Target::Local);
        };
        let bin = remote_bin
            .or_else(|| env("PTYBROKER_REMOTE_BIN"))
            .unwrap_or_else(|| "ptybroker".into());
        Ok(Target::Ssh(Dest::parse(&h, bin)?))
    }

    /// What the status line and `list` name: the host, or the command.
    pub fn name(&self) -> Option<&str> {
        match self {
            Target::Local => None,
            Target::Ssh(d) => Some(&d.shown),
            Target::Via(v) => Some(v),
        }
    }

    /// How the status line and `list` name the target: the host as given,
    /// or the `--via` command without the `ptybroker proxy` (and `--`)
    /// every such command ends with.
    pub fn place(&self) -> Option<status::Place> {
        match self {
            Target::Local => None,
            Target::Ssh(d) => Some(status::Place::Host(d.shown.clone())),
            Target::Via(v) => Some(status::Place::Via(via_label(v))),
        }
    }
}

/// `docker exec -i box ptybroker proxy` → `docker exec -i box`.
fn via_label(command: &str) -> String {
    let mut words: Vec<&str> = command.split_whitespace().collect();
    if words.len() > 1 && words.last() == Some(&"proxy") {
        words.pop();
        let bin = |w: &&str| w.rsplit('/').next() == Some("ptybroker");
        if words.len() > 1 && words.last().is_some_and(bin) {
            words.pop();
        }
        if words.len() > 1 && words.last() == Some(&"--") {
            words.pop();
        }
    }
    words.join(" ")
}

impl Dest {
    /// `[ssh://][user@]host[:port]` or an ssh config alias.
    pub fn parse(s: &str, remote_bin: String) -> Result<Dest, String> {
        let bad = |why: &str| Err(format!("--host {s:?}: {why}"));
        let shown = s.trim().to_string();
        let rest = shown.strip_prefix("ssh://").unwrap_or(&shown);
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.is_empty() {
            return bad("no host named; give [ssh://][user@]host[:port] or an ssh alias");
        }
        // ssh would take a leading dash as one of its own options.
        if rest.starts_with('-') {
            return bad("a host cannot start with '-'");
        }
        if rest
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '/')
        {
            return bad("a host has no spaces, slashes or control characters");
        }
        let (user, hostport) = match rest.rsplit_once('@') {
            Some((u, h)) if !u.is_empty() => (Some(u), h),
            Some(_) => return bad("empty user name before '@'"),
            None => (None, rest),
        };
        // `[::1]:2222`, `[::1]`, `host:2222`; a bare IPv6 address has
        // several colons and no port.
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            match v6.split_once(']') {
                Some((h, "")) => (h, None),
                Some((h, p)) if p.starts_with(':') => (h, Some(&p[1..])),
                _ => return bad("unbalanced '[' in the address"),
            }
        } else {
            match hostport.split_once(':') {
                Some((h, p)) if !p.contains(':') => (h, Some(p)),
                _ => (hostport, None),
            }
        };
        if host.is_empty() || host.starts_with('-') {
            return bad("no host named");
        }
        let port = match port {
            None => None,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 => Some(n),
                _ => return bad("the port must be a number from 1 to 65535"),
            },
        };
        let host = match user {
            Some(u) => format!("{u}@{host}"),
            None => host.to_string(),
        };
        if remote_bin.trim().is_empty() {
            return Err("--remote-bin needs a path or a command name".into());
        }
        Ok(Dest {
            shown,
            host,
            port,
            remote_bin,
        })
    }

    /// The remote command line (the remote shell reads it): the binary,
    /// quoted, and its arguments.
    pub fn remote_command(&self, args: &[&str]) -> String {
        let mut s = sh_quote(&self.remote_bin);
        for a in args {
            s.push(' ');
            s.push_str(&sh_quote(a));
        }
        s
    }
}

/// `s` as one word for a POSIX shell.
pub fn sh_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:@%+,".contains(&b))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// A failure on the way to the remote daemon, in one line.
pub type Failed = String;

/// The ssh command: `ssh`, or `PTYBROKER_SSH_COMMAND` run by the shell
/// with our arguments after it (as git runs `GIT_SSH_COMMAND`).
pub fn ssh_command() -> Command {
    match std::env::var("PTYBROKER_SSH_COMMAND") {
        Ok(c) if !c.trim().is_empty() => {
            let mut cmd = Command::new("/bin/sh");
            cmd.arg("-c").arg(format!("{c} \"$@\"")).arg("ssh");
            cmd
        }
        _ => Command::new("ssh"),
    }
}

/// One destination's OpenSSH master and forwarded socket, under
/// `RUNTIME/ssh/`: `KEY.ctl` (the ControlPath), `KEY.sock` (the forward),
/// `KEY.log` (ssh's own messages), where KEY names destination, port and
/// ssh command together.
pub struct Link<'a> {
    pub dest: &'a Dest,
    dir: PathBuf,
    key: String,
}

impl<'a> Link<'a> {
    pub fn new(dest: &'a Dest, runtime: &Path) -> Link<'a> {
        let ssh = std::env::var("PTYBROKER_SSH_COMMAND").unwrap_or_default();
        let port = dest.port.map(|p| p.to_string()).unwrap_or_default();
        let key = format!(
            "{:016x}",
            fnv1a(&[
                dest.host.as_bytes(),
                port.as_bytes(),
                ssh.as_bytes(),
                dest.remote_bin.as_bytes()
            ])
        );
        Link {
            dest,
            dir: runtime.join("ssh"),
            key,
        }
    }

    fn path(&self, ext: &str) -> PathBuf {
        self.dir.join(format!("{}.{ext}", self.key))
    }

    pub fn control_path(&self) -> PathBuf {
        self.path("ctl")
    }

    /// An ssh command for this destination through the master (when one
    /// runs; ssh connects directly otherwise), never prompting.
    pub fn ssh(&self) -> Command {
        let mut cmd = ssh_command();
        for o in [
            "BatchMode=yes".to_string(),
            format!("ConnectTimeout={}", limits::SSH_CONNECT_TIMEOUT.as_secs()),
            format!(
                "ServerAliveInterval={}",
                limits::SSH_ALIVE_INTERVAL.as_secs()
            ),
            format!("ServerAliveCountMax={}", limits::SSH_ALIVE_COUNT),
            format!("ControlPath={}", self.control_path().display()),
        ] {
            cmd.arg("-o").arg(o);
        }
        if let Some(p) = self.dest.port {
            cmd.arg("-p").arg(p.to_string());
        }
        cmd
    }

    /// A stream to the remote daemon: the forwarded socket when it
    /// answers, else after setting the master and forward up; a proxy
    /// channel per call where the server forbids forwarding.
    pub fn connect(&self) -> Result<UnixStream, Failed> {
        if let Ok(s) = UnixStream::connect(self.path("sock")) {
            return Ok(s);
        }
        self.set_up()
    }

    /// Start the master if none runs, ask the proxy where the daemon is
    /// (starting it), forward our socket there, and connect.
    pub fn set_up(&self) -> Result<UnixStream, Failed> {
        self.private_dirs()?;
        if !self.master_alive() {
            self.start_master()?;
        }
        let info = self.describe()?;
        let remote_sock = info["socket"].as_str().unwrap_or_default().to_string();
        if !self.path("noforward").exists() && !remote_sock.is_empty() {
            match self.forward(&remote_sock) {
                Ok(s) => return Ok(s),
                Err(_) => {
                    // Note it, so later calls go straight to channels.
                    let _ = std::fs::write(self.path("noforward"), b"");
                }
            }
        }
        self.channel()
    }

    /// The master, started if none runs (for commands of our own there,
    /// such as `install`'s).
    pub fn open(&self) -> Result<(), Failed> {
        self.private_dirs()?;
        if self.master_alive() {
            return Ok(());
        }
        self.start_master()
    }

    /// Our runtime directory and its `ssh` below it, both private.
    fn private_dirs(&self) -> Result<(), Failed> {
        if let Some(runtime) = self.dir.parent() {
            server::ensure_private_dir(runtime)?;
        }
        server::ensure_private_dir(&self.dir)
    }

    /// Does this destination's master run (`ssh -O check`)?
    pub fn master_alive(&self) -> bool {
        let mut cmd = self.ssh();
        cmd.args(["-O", "check", "--", &self.dest.host]);
        run_bounded(cmd, b"", limits::SSH_SETUP_WAIT).is_ok_and(|o| o.ok)
    }

    fn start_master(&self) -> Result<(), Failed> {
        let log = self.path("log");
        let _ = std::fs::remove_file(&log);
        let mut cmd = self.ssh();
        cmd.args([
            "-o",
            "ControlMaster=yes",
            "-o",
            &format!("ControlPersist={}", persist().as_secs()),
            "-o",
            "StreamLocalBindUnlink=yes",
            "-E",
        ])
        .arg(&log)
        .args(["-f", "-N", "-T", "--", &self.dest.host]);
        let out = run_bounded(cmd, b"", limits::SSH_SETUP_WAIT).map_err(|e| {
            e.line(
                &format!("{} did not answer", self.dest.shown),
                limits::SSH_SETUP_WAIT,
                " (ssh is still connecting or waiting for the network)",
            )
        })?;
        if out.ok {
            return Ok(());
        }
        let said = std::fs::read_to_string(&log).unwrap_or_default() + &out.stderr;
        Err(explain_ssh(&self.dest.shown, &said))
    }

    /// `proxy/describe` over one channel: the remote version, protocol
    /// and daemon socket, starting the remote daemon on the way.
    pub fn describe(&self) -> Result<Value, Failed> {
        let mut cmd = self.ssh();
        cmd.args(["-T", "--", &self.dest.host])
            .arg(self.dest.remote_command(&["proxy"]));
        let req = format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": 0, "method": DESCRIBE})
        );
        let out = run_bounded(cmd, req.as_bytes(), limits::SSH_SETUP_WAIT).map_err(|e| {
            let late = format!("the ptybroker proxy on {} did not answer", self.dest.shown);
            e.line(&late, limits::SSH_SETUP_WAIT, "")
        })?;
        check_described(&self.dest.shown, &self.dest.remote_bin, &out)
    }

    /// Forward our socket to `remote` through the master and prove it
    /// with one call that reaches the daemon.
    fn forward(&self, remote: &str) -> Result<UnixStream, Failed> {
        let local = self.path("sock");
        let _ = std::fs::remove_file(&local);
        let mut cmd = self.ssh();
        cmd.args(["-O", "forward", "-L"])
            .arg(format!("{}:{remote}", local.display()))
            .args(["--", &self.dest.host]);
        let out = run_bounded(cmd, b"", limits::SSH_SETUP_WAIT)
            .map_err(|_| "ssh -O forward did not finish".to_string())?;
        if !out.ok {
            return Err(out.stderr);
        }
        // A server that forbids forwarding accepts the local connection
        // and closes it: ask something before trusting the forward.
        let probe = UnixStream::connect(&local).map_err(|e| e.to_string())?;
        probe
            .set_read_timeout(Some(limits::SSH_SETUP_WAIT))
            .map_err(|e| e.to_string())?;
        let mut w = &probe;
        w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"pty/list\"}\n")
            .map_err(|e| e.to_string())?;
        let mut first = [0u8; 1];
        match (&probe).read(&mut first) {
            Ok(1) => {}
            _ => {
                let _ = std::fs::remove_file(&local);
                return Err("the forward closed without answering".into());
            }
        }
        UnixStream::connect(&local).map_err(|e| e.to_string())
    }

    /// `mcp --host` and `driver --host`: the ssh command that runs the
    /// same server on the remote host, holding one channel (through the
    /// master) for its lifetime; sessions live in it as they would in a
    /// local one. Checked first (master, binary, version) so a failure is
    /// one line; [`crate::relay`] runs it.
    pub fn server_command(&self, verb: &str) -> Result<Command, Failed> {
        self.private_dirs()?;
        if !self.master_alive() {
            self.start_master()?;
        }
        self.describe()?;
        let mut cmd = self.ssh();
        cmd.args(["-T", "--", &self.dest.host])
            .arg(self.dest.remote_command(&[verb]));
        Ok(cmd)
    }

    /// One `ptybroker proxy` channel over ssh on a socket pair, its
    /// standard error kept in `KEY.log`.
    fn channel(&self) -> Result<UnixStream, Failed> {
        let mut cmd = self.ssh();
        cmd.args(["-T", "--", &self.dest.host])
            .arg(self.dest.remote_command(&["proxy"]));
        if let Ok(f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.path("log"))
        {
            cmd.stderr(Stdio::from(f));
        } else {
            cmd.stderr(Stdio::null());
        }
        let (ours, child) = spawn_on_pair(cmd)?;
        reap_later(child);
        Ok(ours)
    }
}

/// `--via`: the command on one end of a socket pair, for one call; what
/// it says on standard error is kept to name a failure (see [`ViaCall`]).
pub fn via(command: &str) -> Result<(UnixStream, ViaCall), Failed> {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(command).stderr(Stdio::piped());
    let (ours, mut child) = spawn_on_pair(cmd)?;
    let (tx, said) = crate::sync::handoff();
    let err = child.stderr.take();
    crate::sync::spawn(move || {
        let mut words = Vec::new();
        if let Some(e) = err {
            // Bounded: a chatty command cannot fill our memory.
            let _ = e.take(64 * 1024).read_to_end(&mut words);
        }
        tx.give((words, child.wait().ok()));
    });
    Ok((
        ours,
        ViaCall {
            command: command.to_string(),
            said,
        },
    ))
}

/// A `--via` command running for one call.
pub struct ViaCall {
    command: String,
    /// Its standard error and how it ended, once it has.
    said: crate::sync::Take<(Vec<u8>, Option<std::process::ExitStatus>)>,
}

impl ViaCall {
    /// The call's failure in one line: the command's last words on
    /// standard error (`Error: No such container: nobox`) or how it
    /// ended, once it has; `lost` (what the stream said) while it runs.
    pub fn failed(&self, lost: &str) -> Failed {
        let cmd = &self.command;
        match self.said.within(limits::VIA_WORDS_WAIT) {
            Some((words, status)) => {
                let words = String::from_utf8_lossy(&words);
                let why = match (last_line(&words), status) {
                    (w, _) if w != NO_REASON => w.to_string(),
                    (_, Some(s)) if s.code().is_some_and(|c| c != 0) => {
                        format!("exit status {}", s.code().unwrap_or(0))
                    }
                    (_, Some(s)) if s.code().is_none() => format!("ended by a signal ({s})"),
                    _ => format!("it ended without an answer ({lost})"),
                };
                format!("--via {cmd:?} failed: {why}")
            }
            None => format!("--via {cmd:?}: {lost}"),
        }
    }
}

/// `cmd` with its standard input and output on one end of a socket pair.
fn spawn_on_pair(mut cmd: Command) -> Result<(UnixStream, Child), Failed> {
    let (ours, theirs) =
        UnixStream::pair().map_err(|e| format!("cannot make a socket pair: {e}"))?;
    let theirs: OwnedFd = theirs.into();
    let out = theirs.try_clone().map_err(|e| e.to_string())?;
    cmd.stdin(Stdio::from(theirs)).stdout(Stdio::from(out));
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    Ok((ours, child))
}

/// Reap `child` when it ends, without holding up the caller.
fn reap_later(mut child: Child) {
    crate::sync::spawn(move || {
        let _ = child.wait();
    });
}

/// How long an idle master stays: [`limits::SSH_PERSIST`], or
/// `PTYBROKER_SSH_PERSIST` seconds.
pub fn persist() -> Duration {
    std::env::var("PTYBROKER_SSH_PERSIST")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map_or(limits::SSH_PERSIST, Duration::from_secs)
}

/// What a bounded command said.
pub struct Output {
    pub ok: bool,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

pub enum Bounded {
    TimedOut,
    Spawn(io::Error),
}

impl Bounded {
    /// The one-line error: `late` (who did not answer or finish) "within"
    /// the limit, then `why`; or why ssh could not be run.
    pub fn line(self, late: &str, limit: Duration, why: &str) -> Failed {
        match self {
            Bounded::TimedOut => {
                format!("{late} within {}{why}", crate::status::duration(limit))
            }
            Bounded::Spawn(e) => format!("cannot run ssh: {e} (is OpenSSH's client installed?)"),
        }
    }
}

/// Run `cmd` with `input` on its stdin, within `limit` (killed then).
pub fn run_bounded(mut cmd: Command, input: &[u8], limit: Duration) -> Result<Output, Bounded> {
    let deadline = Instant::now() + limit;
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(Bounded::Spawn)?;
    if let Some(mut i) = child.stdin.take() {
        let input = input.to_vec();
        crate::sync::spawn(move || {
            let _ = i.write_all(&input);
        });
    }
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(mut r) = r {
                // Bounded: a chatty command cannot fill our memory.
                let _ = r.by_ref().take(1 << 20).read_to_end(&mut v);
            }
            v
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|o| Box::new(o) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|o| Box::new(o) as Box<dyn Read + Send>),
    );
    // Woken by the child's exit where there is a pidfd; else looked at
    // every few milliseconds.
    let pidfd = crate::pty::child_pidfd(&child);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() < deadline => match &pidfd {
                Some(fd) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    crate::pty::ready_within(fd.as_fd(), rustix::event::PollFlags::IN, left);
                }
                None => std::thread::sleep(Duration::from_millis(2)),
            },
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Bounded::TimedOut);
            }
        }
    };
    let text = |h: std::thread::JoinHandle<Vec<u8>>| {
        String::from_utf8_lossy(&h.join().unwrap_or_default()).into_owned()
    };
    Ok(Output {
        ok: status.success(),
        code: status.code(),
        stdout: text(out),
        stderr: text(err),
    })
}

/// The proxy's `proxy/describe` answer, or what went wrong, in one line.
pub fn check_described(shown: &str, bin: &str, out: &Output) -> Result<Value, Failed> {
    let answer = out
        .stdout
        .lines()
        .find_map(|l| serde_json::from_slice::<Value>(l.as_bytes()).ok());
    if let Some(r) = answer.as_ref().and_then(|v| v.get("result")) {
        let proto = r["protocol"].as_u64().unwrap_or(0);
        if proto < PROTOCOL {
            return Err(format!(
                "the ptybroker on {shown} is too old (version {}, protocol {proto}; this one needs {PROTOCOL}): update it with `ptybroker install --host {shown}`",
                r["ptybroker"].as_str().unwrap_or("unknown")
            ));
        }
        return Ok(r.clone());
    }
    if let Some(e) = answer.as_ref().and_then(|v| v.get("error")) {
        return Err(format!(
            "the ptybroker proxy on {shown} failed: {}",
            e["message"].as_str().unwrap_or("unknown error")
        ));
    }
    let said = out.stderr.trim();
    // The shell's "not found" (127) or "cannot execute" (126).
    if matches!(out.code, Some(126 | 127)) {
        return Err(format!(
            "no ptybroker at `{bin}` on {shown}: install it with `ptybroker install --host {shown}`, or give its path with --remote-bin"
        ));
    }
    if said.contains("proxy") || said.contains("unknown") || said.contains("unrecognized") {
        return Err(format!(
            "the ptybroker on {shown} is too old (it has no `proxy`): update it with `ptybroker install --host {shown}`"
        ));
    }
    if out.code == Some(255) {
        return Err(explain_ssh(shown, said));
    }
    let last = said.lines().last().unwrap_or("no answer");
    Err(format!(
        "the ptybroker proxy on {shown} did not answer: {last}"
    ))
}

/// ssh's own words turned into what to do, one line.
pub fn explain_ssh(shown: &str, said: &str) -> Failed {
    let has = |s: &str| said.contains(s);
    if has("Could not resolve hostname") || has("Name or service not known") {
        format!("cannot resolve {shown}: no such host (check the name, or its Host entry in ~/.ssh/config)")
    } else if has("Connection refused") {
        format!(
            "{shown} refused the connection: no ssh server listens there (check the host and port)"
        )
    } else if has("timed out") || has("No route to host") || has("Network is unreachable") {
        format!("{shown} is unreachable: {}", last_line(said))
    } else if has("Host key verification failed") || has("REMOTE HOST IDENTIFICATION HAS CHANGED") {
        format!("the host key of {shown} is unknown or has changed: check it and accept it once with `ssh {shown}` (ptybroker never accepts keys itself)")
    } else if has("Permission denied") || has("Too many authentication failures") {
        format!("{shown} refused the login: {} (ptybroker never prompts: use a key, ssh-agent or ~/.ssh/config)", last_line(said))
    } else {
        format!("ssh to {shown} failed: {}", last_line(said))
    }
}

const NO_REASON: &str = "no reason given";

fn last_line(s: &str) -> &str {
    s.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.starts_with("debug"))
        .unwrap_or(NO_REASON)
}

/// FNV-1a over several byte strings (with a separator between them): a
/// stable short name for a destination, not a secret.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.iter().chain(&[0u8]) {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dest(s: &str) -> Result<Dest, String> {
        Dest::parse(s, "ptybroker".into())
    }

    #[test]
    fn destinations_take_the_forms_ssh_and_urls_take() {
        let d = dest("box").unwrap();
        assert_eq!((d.host.as_str(), d.port), ("box", None));
        let d = dest("ssh://me@box:2222").unwrap();
        assert_eq!((d.host.as_str(), d.port), ("me@box", Some(2222)));
        let d = dest("me@10.0.0.1:22").unwrap();
        assert_eq!((d.host.as_str(), d.port), ("me@10.0.0.1", Some(22)));
        let d = dest("[::1]:2200").unwrap();
        assert_eq!((d.host.as_str(), d.port), ("::1", Some(2200)));
        let d = dest("fe80::1").unwrap();
        assert_eq!((d.host.as_str(), d.port), ("fe80::1", None));
        assert_eq!(dest("ssh://box/").unwrap().host, "box");
    }

    #[test]
    fn a_destination_cannot_smuggle_an_ssh_option_or_a_command() {
        for bad in [
            "-oProxyCommand=sh",
            "me@-x",
            "",
            "ssh://",
            "box:0",
            "box:99999",
            "a b",
            "box;id",
            "@box",
            "[::1",
        ] {
            let r = dest(bad);
            // `box;id` is a legal ssh alias character-wise; ssh gets it as
            // one argument, never through a shell.
            if bad == "box;id" {
                assert!(r.is_ok());
                continue;
            }
            assert!(r.is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn a_via_command_is_named_without_its_proxy_words() {
        for (cmd, label) in [
            ("docker exec -i box ptybroker proxy", "docker exec -i box"),
            (
                "kubectl exec -i pod -- ptybroker proxy",
                "kubectl exec -i pod",
            ),
            (
                "podman exec -i c /opt/bin/ptybroker proxy",
                "podman exec -i c",
            ),
            ("/opt/ptybroker proxy", "/opt/ptybroker"),
            ("socat - /dev/ttyUSB0", "socat - /dev/ttyUSB0"),
        ] {
            assert_eq!(via_label(cmd), label);
        }
    }

    #[test]
    fn the_remote_command_quotes_what_the_remote_shell_would_split() {
        let d = Dest::parse("box", "/opt/my tools/ptybroker".into()).unwrap();
        assert_eq!(
            d.remote_command(&["proxy"]),
            "'/opt/my tools/ptybroker' proxy"
        );
        let d = Dest::parse("box", "it's".into()).unwrap();
        assert_eq!(d.remote_command(&[]), "'it'\\''s'");
        assert_eq!(sh_quote("ptybroker"), "ptybroker");
    }

    #[test]
    fn ssh_failures_say_what_to_do() {
        let e = explain_ssh(
            "box",
            "ssh: Could not resolve hostname box: Name or service not known\n",
        );
        assert!(e.contains("cannot resolve box"), "{e}");
        let e = explain_ssh("box", "me@box: Permission denied (publickey).\n");
        assert!(
            e.contains("refused the login") && e.contains("never prompts"),
            "{e}"
        );
        let e = explain_ssh("box", "Host key verification failed.\n");
        assert!(e.contains("host key"), "{e}");
        let e = explain_ssh(
            "box",
            "ssh: connect to host box port 22: Connection refused\n",
        );
        assert!(e.contains("refused the connection"), "{e}");
    }

    #[test]
    fn a_missing_or_old_remote_binary_is_named() {
        let out = |code, stdout: &str, stderr: &str| Output {
            ok: code == 0,
            code: Some(code),
            stdout: stdout.into(),
            stderr: stderr.into(),
        };
        let e = check_described(
            "box",
            "ptybroker",
            &out(127, "", "sh: ptybroker: not found"),
        )
        .unwrap_err();
        assert!(
            e.contains("no ptybroker") && e.contains("install --host box"),
            "{e}"
        );
        let e = check_described(
            "box",
            "ptybroker",
            &out(2, "", "ptybroker: unknown verb 'proxy'"),
        )
        .unwrap_err();
        assert!(e.contains("too old"), "{e}");
        let old =
            r#"{"jsonrpc":"2.0","id":0,"result":{"ptybroker":"0.0.1","protocol":0,"socket":"/x"}}"#;
        let e = check_described("box", "ptybroker", &out(0, old, "")).unwrap_err();
        assert!(e.contains("too old"), "{e}");
        let new =
            r#"{"jsonrpc":"2.0","id":0,"result":{"ptybroker":"0.1.0","protocol":1,"socket":"/x"}}"#;
        assert_eq!(
            check_described("box", "ptybroker", &out(0, new, "")).unwrap()["socket"],
            "/x"
        );
    }
}
