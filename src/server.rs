//! The socket side of JSON-RPC: the private runtime directory, the per-user
//! daemon, `serve` on a Unix or loopback TCP socket, the polling accept loop
//! and one thread per connection reading newline-delimited requests.

use std::io::{self, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::fs::{FlockOperation, Mode};
use rustix::process::Signal;

use crate::auth::{Unauthenticated, AUTH_FIRST};
use crate::limits;
use crate::manager::Manager;
use crate::rpc::{self, After, Ctx, RpcError};
use crate::sync::Start;

/// The per-user runtime directory: `$XDG_RUNTIME_DIR/ptybroker`, else
/// `$TMPDIR/ptybroker-UID` (or `/tmp/ptybroker-UID`).
pub fn runtime_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(d) if !d.is_empty() => Path::new(&d).join("ptybroker"),
        _ => {
            let tmp = std::env::var_os("TMPDIR")
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| "/tmp".into());
            Path::new(&tmp).join(format!("ptybroker-{}", rustix::process::getuid().as_raw()))
        }
    }
}

pub fn socket_path(dir: &Path) -> PathBuf {
    dir.join("daemon.sock")
}

pub fn log_path(dir: &Path) -> PathBuf {
    dir.join("daemon.log")
}

/// Create the runtime directory private (0700) from the first instant, or
/// check an existing one: a real directory, ours, closed to group and others.
pub fn ensure_private_dir(dir: &Path) -> Result<(), String> {
    if let Some(parent) = dir.parent() {
        if !parent.as_os_str().is_empty() && !parent.exists() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
    }
    match rustix::fs::mkdir(dir, Mode::RWXU) {
        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
        Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
    }
    check_private_dir(dir)
}

/// Refuse a runtime directory that is a symlink (or not a directory), is
/// not ours, or is open to group or others; the error says how to fix it.
pub fn check_private_dir(dir: &Path) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| format!("cannot inspect {}: {e}", dir.display()))?;
    let me = rustix::process::getuid().as_raw();
    if meta.file_type().is_symlink() || !meta.is_dir() {
        return Err(format!(
            "{} is not a directory (a symlink or file is in the way); remove it and retry",
            dir.display()
        ));
    }
    if meta.uid() != me {
        return Err(format!(
            "{} belongs to uid {}, not to you (uid {me}); remove it or set XDG_RUNTIME_DIR to a directory of yours",
            dir.display(),
            meta.uid()
        ));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "{} is open to other users (mode {:o}); run `chmod 700 {}` and retry",
            dir.display(),
            meta.permissions().mode() & 0o777,
            dir.display()
        ));
    }
    Ok(())
}

/// Bind a Unix socket that is never, even briefly, reachable by others: the
/// umask is tightened around bind(2) so the node is created 0600.
fn bind_private(path: &Path) -> io::Result<UnixListener> {
    let old = rustix::process::umask(Mode::from_raw_mode(0o177));
    let l = UnixListener::bind(path);
    rustix::process::umask(old);
    l
}

/// Make way for a socket at `path`: nothing there, or a stale socket (one
/// nobody accepts on, as a killed server leaves it), which is removed.
/// Anything else is refused and left as it is: a live socket, a regular
/// file, a symlink (whatever it points to), a directory, a FIFO, a device.
pub fn claim_socket_path(path: &Path) -> Result<(), String> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("cannot inspect {}: {e}", path.display())),
    };
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if !kind.is_socket() {
        let what = if kind.is_symlink() {
            "a symlink"
        } else if kind.is_dir() {
            "a directory"
        } else if kind.is_file() {
            "a regular file"
        } else {
            "not a socket"
        };
        return Err(format!(
            "{} exists and is {what}; refusing to replace it (remove it or choose another path)",
            path.display()
        ));
    }
    if is_live(path) {
        return Err(format!("{} is in use by a running server", path.display()));
    }
    std::fs::remove_file(path)
        .map_err(|e| format!("cannot remove stale socket {}: {e}", path.display()))
}

/// Is a live server accepting on `path`?
pub fn is_live(path: &Path) -> bool {
    UnixStream::connect(path).is_ok()
}

/// Either kind of listening socket.
pub enum Listener {
    Unix(UnixListener, PathBuf),
    Tcp(TcpListener, Option<Arc<String>>),
}

impl Listener {
    /// Close a listener that will never serve (its program could not be
    /// started): a Unix socket's path goes with it, as when a server ends.
    pub fn discard(self) {
        if let Listener::Unix(_, path) = &self {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// How a server runs.
pub struct Config {
    pub serve: bool,
    /// The daemon: exit once it has had no session and no client for this
    /// long (see [`limits::DAEMON_IDLE_EXIT`]); `None` runs until told.
    pub idle_exit: Option<Duration>,
    /// Exit cleanly on SIGTERM, SIGINT or SIGHUP (see [`ExitSignals`]).
    pub signals: Option<ExitSignals>,
}

/// SIGTERM, SIGINT and SIGHUP, blocked in every thread and taken by one
/// thread of their own with sigwait(3), which tells the accept loop through
/// a pipe: the server then ends as after `pty/kill` (sessions killed, the
/// answers in flight sent, its socket removed), with no work at all in a
/// signal handler. Programs get an empty signal mask back when they are
/// spawned (see [`crate::pty::spawn`]).
#[derive(Clone)]
pub struct ExitSignals {
    rx: Arc<OwnedFd>,
    got: Arc<AtomicI32>,
}

impl ExitSignals {
    /// Block the signals and start the thread that takes them. Call it
    /// before any other thread starts: a thread inherits the mask of the
    /// thread that creates it, and one started earlier would still take
    /// the signals itself, and die of them.
    pub fn take() -> io::Result<ExitSignals> {
        let (rx, tx) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        let set = crate::pty::sigmask::block(&[Signal::TERM, Signal::INT, Signal::HUP])?;
        let got = Arc::new(AtomicI32::new(0));
        let seen = Arc::clone(&got);
        std::thread::Builder::new()
            .name("exit-signals".into())
            .stack_size(64 * 1024)
            .start(move || loop {
                if let Some(n) = crate::pty::sigmask::wait(&set) {
                    seen.store(n, Ordering::SeqCst);
                    let _ = rustix::io::write(&tx, b"s");
                }
            })?;
        Ok(ExitSignals {
            rx: Arc::new(rx),
            got,
        })
    }

    /// No signals taken: the server ends when the returned end is written
    /// to (a library's [`crate::PtyServer::close`]).
    pub fn by_hand() -> io::Result<(ExitSignals, OwnedFd)> {
        let (rx, tx) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        let got = Arc::new(AtomicI32::new(0));
        Ok((
            ExitSignals {
                rx: Arc::new(rx),
                got,
            },
            tx,
        ))
    }

    /// The signal that ended the server, if one did.
    pub fn received(&self) -> Option<i32> {
        Some(self.got.load(Ordering::SeqCst)).filter(|&n| n != 0)
    }
}

enum Conn {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Conn {
    fn reader(&self) -> io::Result<Box<dyn Read + Send>> {
        Ok(match self {
            Conn::Unix(s) => Box::new(s.try_clone()?),
            Conn::Tcp(s) => Box::new(s.try_clone()?),
        })
    }
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        match self {
            Conn::Unix(s) => s.as_fd(),
            Conn::Tcp(s) => s.as_fd(),
        }
    }
    fn set_write_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Conn::Unix(s) => s.set_write_timeout(t),
            Conn::Tcp(s) => s.set_write_timeout(t),
        }
    }
    fn writer(&self) -> io::Result<Box<dyn Write + Send>> {
        Ok(match self {
            Conn::Unix(s) => Box::new(s.try_clone()?),
            Conn::Tcp(s) => Box::new(s.try_clone()?),
        })
    }
    fn shutdown_both(&self) {
        let _ = match self {
            Conn::Unix(s) => s.shutdown(std::net::Shutdown::Both),
            Conn::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
        };
    }
    fn shutdown_write(&self) -> io::Result<()> {
        match self {
            Conn::Unix(s) => s.shutdown(std::net::Shutdown::Write),
            Conn::Tcp(s) => s.shutdown(std::net::Shutdown::Write),
        }
    }
    /// Read and drop input until the peer closes, `limit` passes or `max`
    /// bytes came.
    fn drain(&mut self, limit: Duration, max: usize) {
        let deadline = Instant::now() + limit;
        let mut buf = [0u8; 4096];
        let mut seen = 0;
        while seen < max {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            let r = match self {
                Conn::Unix(s) => s
                    .set_read_timeout(Some(left))
                    .and_then(|()| s.read(&mut buf)),
                Conn::Tcp(s) => s
                    .set_read_timeout(Some(left))
                    .and_then(|()| s.read(&mut buf)),
            };
            match r {
                Ok(0) | Err(_) => return,
                Ok(n) => seen += n,
            }
        }
    }
    fn write_line(&mut self, line: &str) -> io::Result<()> {
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        self.write_within(&buf)
    }
    /// Write all of `bytes` within the connection's write timeout, counted
    /// for the whole answer: a send that times out having taken part of it
    /// does not start the clock again for the rest.
    fn write_within(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        let limit = match self {
            Conn::Unix(s) => s.write_timeout()?,
            Conn::Tcp(s) => s.write_timeout()?,
        };
        let deadline = limit.map(|l| Instant::now() + l);
        let mut shortened = false;
        let done = loop {
            if bytes.is_empty() {
                break Ok(());
            }
            let n = match self {
                Conn::Unix(s) => s.write(bytes),
                Conn::Tcp(s) => s.write(bytes),
            };
            match n {
                Ok(0) => break Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => bytes = &bytes[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
            if let (Some(deadline), false) = (deadline, bytes.is_empty()) {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break Err(io::ErrorKind::TimedOut.into());
                }
                shortened = true;
                self.set_write_timeout(Some(left))?;
            }
        };
        if shortened {
            self.set_write_timeout(limit)?;
        }
        done
    }
}

/// Serve JSON-RPC on `listener` until told to exit. Returns when a `serve`
/// process got `pty/kill`, or a daemon has had no session and no client for
/// its `idle_exit`.
pub fn run(listener: Listener, manager: Arc<Manager>, cfg: Config) -> io::Result<()> {
    run_with(listener, manager, cfg, None)
}

/// [`run`], for the daemon with its hold on the runtime directory.
fn run_with(
    mut listener: Listener,
    manager: Arc<Manager>,
    cfg: Config,
    mut held: Option<DaemonDir>,
) -> io::Result<()> {
    let (wake_rx, wake_tx) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    let wake_tx = Arc::new(wake_tx);
    let active = Arc::new(AtomicUsize::new(0));
    let refusing = Arc::new(AtomicUsize::new(0));
    let exit_now = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let room = Arc::new(Unauthenticated::default());
    let answering = Arc::new(crate::sync::Pending::default());
    let me = rustix::process::getuid();
    let mut idle_since = Instant::now();
    let mut visited = false;
    match &listener {
        Listener::Unix(l, _) => l.set_nonblocking(true)?,
        Listener::Tcp(l, _) => l.set_nonblocking(true)?,
    }
    loop {
        if exit_now.load(Ordering::SeqCst) {
            break;
        }
        let empty = manager.is_empty();
        let busy = active.load(Ordering::SeqCst) > 0;
        visited |= !empty || busy;
        if !empty || busy {
            idle_since = Instant::now();
        }
        // Kept warm after the last session, so that a start/stop cycle does
        // not spawn a daemon each time; before its first client, a daemon
        // waits at least the default for the one that started it.
        let linger = cfg.idle_exit.map(|d| {
            if visited {
                d
            } else {
                d.max(limits::DAEMON_IDLE_EXIT)
            }
        });
        let idle_left = linger
            .filter(|_| empty && !busy)
            .map(|d| d.saturating_sub(idle_since.elapsed()));
        if idle_left.is_some_and(|d| d.is_zero()) && !pending_connection(&listener) {
            break;
        }
        let cut_left = room
            .sweep()
            .map(|at| at.saturating_duration_since(Instant::now()));
        let check_left = match (&mut held, &mut listener) {
            (Some(h), Listener::Unix(l, path)) => {
                if let Some(fresh) = h.keep_socket(path) {
                    *l = fresh;
                }
                Some(h.next_check.saturating_duration_since(Instant::now()))
            }
            _ => None,
        };
        let timeout = idle_left
            .into_iter()
            .chain(cut_left)
            .chain(check_left)
            .min();
        let ts = timeout.map(|d| {
            Timespec::try_from(d).unwrap_or(Timespec {
                tv_sec: 1,
                tv_nsec: 0,
            })
        });
        let lfd = match &listener {
            Listener::Unix(l, _) => l.as_fd(),
            Listener::Tcp(l, _) => l.as_fd(),
        };
        let signalled = cfg.signals.as_ref().map(|s| s.rx.as_fd());
        let mut fds = [
            PollFd::from_borrowed_fd(lfd, PollFlags::IN),
            PollFd::new(&wake_rx, PollFlags::IN),
            // Sliced off below when signals are not taken.
            PollFd::from_borrowed_fd(signalled.unwrap_or(wake_rx.as_fd()), PollFlags::IN),
        ];
        let n = if signalled.is_some() { 3 } else { 2 };
        match poll(&mut fds[..n], ts.as_ref()) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
        if n == 3 && !fds[2].revents().is_empty() {
            break;
        }
        if !fds[1].revents().is_empty() {
            let mut b = [0u8; 64];
            let _ = rustix::io::read(&wake_rx, &mut b);
        }
        if fds[0].revents().is_empty() {
            continue;
        }
        let (conn, auth) = match &listener {
            Listener::Unix(l, _) => match l.accept() {
                Ok((s, _)) => {
                    let uid = rustix::net::sockopt::socket_peercred(&s).map(|c| c.uid);
                    if uid.ok() != Some(me) {
                        refuse(
                            Conn::Unix(s),
                            "permission denied: this daemon serves only its owner's uid",
                            &refusing,
                        );
                        continue;
                    }
                    (Conn::Unix(s), None)
                }
                Err(_) => continue,
            },
            Listener::Tcp(l, token) => match l.accept() {
                Ok((s, _)) => match token {
                    Some(t) => match room.admit(&s) {
                        Ok(place) => (
                            Conn::Tcp(s),
                            Some((Arc::clone(t), Arc::clone(&room), place)),
                        ),
                        Err(_) => continue,
                    },
                    None => (Conn::Tcp(s), None),
                },
                Err(_) => continue,
            },
        };
        // A connection that must authenticate waits in `room` and takes one
        // of MAX_CONNECTIONS only once it has (see `authenticate_conn`).
        let counted = auth.is_none();
        if counted {
            if active.load(Ordering::SeqCst) >= limits::MAX_CONNECTIONS {
                refuse(conn, &too_many_connections(), &refusing);
                continue;
            }
            active.fetch_add(1, Ordering::SeqCst);
        }
        let cx = ConnCtx {
            manager: Arc::clone(&manager),
            serve: cfg.serve,
            active: Arc::clone(&active),
            auth,
            answering: Arc::clone(&answering),
        };
        let early = match &conn {
            Conn::Unix(s) => answer_first_here(s, &cx),
            Conn::Tcp(_) => Early::default(),
        };
        let (w, x) = (Arc::clone(&wake_tx), Arc::clone(&exit_now));
        let spawned = std::thread::Builder::new()
            .name("rpc-conn".into())
            .stack_size(256 * 1024)
            .start(move || {
                let after = {
                    let _slot = counted.then(|| Counted(&cx.active));
                    serve_conn(conn, &cx, early)
                };
                if after == After::Exit {
                    x.store(true, Ordering::SeqCst);
                }
                let _ = rustix::io::write(&*w, b"x");
            });
        if spawned.is_err() && counted {
            active.fetch_sub(1, Ordering::SeqCst);
        }
    }
    // Nobody new gets in; the sessions end, and every request in flight
    // (a wait on another connection) is answered before the process goes.
    if let Listener::Unix(_, path) = &listener {
        // Not a socket that replaced ours meanwhile (see `DaemonDir`).
        if held.as_ref().map_or(true, |h| node(path) == Some(h.socket)) {
            let _ = std::fs::remove_file(path);
        }
    }
    manager.shutdown();
    answering.drain(limits::EXIT_ANSWER_WAIT);
    Ok(())
}

/// Is a client already queued on the listener? A daemon about to exit
/// serves it first rather than leaving it with a closed socket.
fn pending_connection(listener: &Listener) -> bool {
    let fd = match listener {
        Listener::Unix(l, _) => l.as_fd(),
        Listener::Tcp(l, _) => l.as_fd(),
    };
    !crate::pty::ready_now(fd, PollFlags::IN).is_empty()
}

/// Tell a refused peer why, then close. Closing a Unix socket with unread
/// input resets it, and the peer would see "connection reset" instead of
/// the reason: so the refusal lingers on a small thread that drains what
/// the peer sends (bounded in bytes and time) before closing; past
/// [`limits::MAX_REFUSING`] at once, refusals close at once.
fn refuse(mut conn: Conn, msg: &str, refusing: &Arc<AtomicUsize>) {
    let line = rpc::response(
        &serde_json::Value::Null,
        Err(RpcError::new(rpc::SERVER_ERROR, msg)),
    );
    let _ = conn.set_write_timeout(Some(limits::REFUSE_LINGER));
    if conn.write_line(&line).is_err() {
        return;
    }
    let _ = conn.shutdown_write();
    if refusing.fetch_add(1, Ordering::SeqCst) >= limits::MAX_REFUSING {
        refusing.fetch_sub(1, Ordering::SeqCst);
        return;
    }
    let count = Arc::clone(refusing);
    let spawned = std::thread::Builder::new()
        .name("rpc-refuse".into())
        .stack_size(64 * 1024)
        .start(move || {
            conn.drain(limits::REFUSE_LINGER, limits::MAX_LINE_BYTES);
            count.fetch_sub(1, Ordering::SeqCst);
        });
    if spawned.is_err() {
        refusing.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Compare secrets without an early exit that would leak a prefix's length.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    let mut diff = (a.len() ^ b.len()) as u8 | u8::from(a.len() != b.len());
    for i in 0..a.len().max(b.len()) {
        diff |= a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0xff);
    }
    diff == 0
}

pub use crate::lines::read_bounded_line;

/// The answer to one line as [`read_bounded_line`] read it (`Err(len)`: too
/// long) on an authenticated connection; `None` for a blank line. Every
/// failure is a JSON-RPC error response and the connection goes on.
pub fn answer_line(line: Result<&[u8], usize>, ctx: &Ctx) -> Option<(String, After)> {
    rpc::answer(line, ctx)
}

/// One of [`limits::MAX_CONNECTIONS`], given back on drop.
struct Counted<'a>(&'a AtomicUsize);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What a connection thread needs besides its socket.
struct ConnCtx {
    manager: Arc<Manager>,
    serve: bool,
    /// Connections past authentication (or needing none).
    active: Arc<AtomicUsize>,
    /// A token-protected TCP connection: the token, the waiting room it
    /// is held in until it authenticates, and its place there.
    auth: Option<(Arc<String>, Arc<Unauthenticated>, Arc<AtomicU8>)>,
    answering: Arc<crate::sync::Pending>,
}

/// What the accept loop did with a new connection before its thread took
/// it (see [`answer_first_here`]): input it read and left unanswered, and
/// the part of its answer the socket did not take at once.
#[derive(Default)]
struct Early {
    input: Vec<u8>,
    output: Vec<u8>,
}

/// Answer a new connection's first request here, on the accept loop, when
/// it has arrived already, is a whole line, and asks for one of
/// [`rpc::QUICK`] (methods that read state and never wait): a one-shot
/// call then does not wait for a thread to start and wake on another CPU,
/// which was 0.1-0.2 ms of its round trip. Never blocks: it reads what is
/// there and writes what the socket takes now, and the connection's thread
/// carries on with the rest of both, and with any later request.
fn answer_first_here(s: &UnixStream, cx: &ConnCtx) -> Early {
    let mut early = Early::default();
    // On the heap, and small (a one-shot request is a few hundred bytes):
    // a buffer on this thread's stack would keep a page of it resident for
    // the daemon's life. A longer first line goes to the thread whole.
    let mut buf = vec![0u8; 1024];
    let Ok((n, _)) = rustix::net::recv(s, &mut buf, rustix::net::RecvFlags::DONTWAIT) else {
        return early;
    };
    buf.truncate(n);
    early.input = buf;
    let Some(end) = early.input.iter().position(|b| *b == b'\n') else {
        return early;
    };
    let ctx = Ctx {
        manager: &cx.manager,
        serve: cx.serve,
        peer: Some(s.as_fd()),
    };
    let _answering = cx.answering.begin();
    let Some(resp) = rpc::answer_quick(&early.input[..end], &ctx) else {
        return early;
    };
    early.input.drain(..=end);
    let mut out = resp.into_bytes();
    out.push(b'\n');
    let flags = rustix::net::SendFlags::DONTWAIT | rustix::net::SendFlags::NOSIGNAL;
    let sent = rustix::net::send(s, &out, flags).unwrap_or(0);
    out.drain(..sent);
    early.output = out;
    early
}

fn serve_conn(mut conn: Conn, cx: &ConnCtx, early: Early) -> After {
    let Ok(reader) = conn.reader() else {
        return After::Continue;
    };
    let _ = conn.set_write_timeout(Some(limits::CLIENT_WRITE_TIMEOUT));
    if !early.output.is_empty() && conn.write_within(&early.output).is_err() {
        return After::Continue;
    }
    let reader: Box<dyn Read + Send> = Box::new(io::Cursor::new(early.input).chain(reader));
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let peer = conn.as_fd().try_clone_to_owned().ok();
    let ctx = Ctx {
        manager: &cx.manager,
        serve: cx.serve,
        peer: peer.as_ref().map(|p| p.as_fd()),
    };
    let mut line = Vec::new();
    let mut _slot = None;
    if let Some((token, room, place)) = &cx.auth {
        let authed = authenticate_conn(&mut conn, &mut reader, &mut line, token, &cx.active, place);
        room.leave(place);
        if !authed {
            return After::Continue;
        }
        _slot = Some(Counted(&cx.active));
    }
    loop {
        let read = match read_bounded_line(&mut reader, &mut line, limits::MAX_LINE_BYTES) {
            Ok(None) | Err(_) => return After::Continue,
            Ok(Some(r)) => r.map(|()| line.as_slice()),
        };
        match read.ok().and_then(|l| rpc::attach(l, &ctx)) {
            None => {}
            Some(Err(refused)) => {
                if conn.write_line(&refused).is_err() {
                    return After::Continue;
                }
                continue;
            }
            Some(Ok((session, asked, answer))) => {
                // The connection is the viewer's from here on, until it
                // leaves: then both sides are shut, which also ends its
                // reader thread.
                let _ = conn.set_write_timeout(Some(limits::VIEWER_STALL));
                if let Ok(mut out) = conn.writer() {
                    crate::attach::serve(session, asked, answer, Box::new(reader), &mut out);
                }
                conn.shutdown_both();
                return After::Continue;
            }
        }
        let _answering = cx.answering.begin();
        let resp = match answer_line(read, &ctx) {
            None => continue,
            Some((resp, After::Exit)) => {
                let _ = conn.write_line(&resp);
                return After::Exit;
            }
            Some((resp, After::Continue)) => resp,
        };
        if conn.write_line(&resp).is_err() {
            return After::Continue;
        }
    }
}

/// Read the first request of a token-protected connection (see
/// [`authenticate`]) and answer it. True when the peer authenticated and
/// took one of [`limits::MAX_CONNECTIONS`] (counted in `active` from then
/// on); otherwise the peer has been told why and the connection is done.
fn authenticate_conn(
    conn: &mut Conn,
    reader: &mut BufReader<Box<dyn Read + Send>>,
    line: &mut Vec<u8>,
    token: &str,
    active: &AtomicUsize,
    place: &AtomicU8,
) -> bool {
    // Tell the peer why, then close once it could read it: draining its
    // input meanwhile (see `refuse`) while still counted as waiting, so a
    // newer connection can cut the linger short.
    let close_with = |conn: &mut Conn, resp: &str| {
        if conn.write_line(resp).is_ok() && conn.shutdown_write().is_ok() {
            conn.drain(limits::REFUSE_LINGER, limits::MAX_LINE_BYTES);
        }
    };
    let cut = |conn: &mut Conn| {
        // Cut by the waiting room: the read side is shut already.
        if let Some(why) = Unauthenticated::why(place) {
            let _ = conn.write_line(&auth_failure(&serde_json::Value::Null, why));
        }
    };
    loop {
        let bytes = match read_bounded_line(reader, line, limits::MAX_LINE_BYTES) {
            Ok(None) | Err(_) => {
                cut(conn);
                return false;
            }
            Ok(Some(Ok(()))) => line.as_slice(),
            Ok(Some(Err(_))) => {
                // An unauthenticated peer gets nothing but the refusal.
                close_with(conn, &auth_failure(&serde_json::Value::Null, AUTH_FIRST));
                return false;
            }
        };
        let Ok(text) = std::str::from_utf8(bytes) else {
            close_with(conn, &auth_failure(&serde_json::Value::Null, AUTH_FIRST));
            return false;
        };
        let text = text.trim_end_matches('\r');
        if text.trim().is_empty() {
            continue;
        }
        let (resp, id) = match authenticate(text, token) {
            Ok(ok) => ok,
            Err(resp) => {
                close_with(conn, &resp);
                return false;
            }
        };
        if active.fetch_add(1, Ordering::SeqCst) >= limits::MAX_CONNECTIONS {
            active.fetch_sub(1, Ordering::SeqCst);
            let full = rpc::response(
                &id,
                Err(RpcError::new(rpc::SERVER_ERROR, too_many_connections())),
            );
            close_with(conn, &full);
            return false;
        }
        if !Unauthenticated::admitted(place) {
            active.fetch_sub(1, Ordering::SeqCst);
            cut(conn);
            return false;
        }
        return conn.write_line(&resp).is_ok();
    }
}

fn too_many_connections() -> String {
    format!(
        "too many connections (at most {}); close one and retry",
        limits::MAX_CONNECTIONS
    )
}

fn auth_failure(id: &serde_json::Value, why: &str) -> String {
    rpc::response(
        id,
        Err(RpcError::new(
            rpc::SERVER_ERROR,
            format!(
                "{why}: send {{\"jsonrpc\":\"2.0\",\"method\":\"auth\",\"params\":{{\"token\":\"...\"}},\"id\":0}} first, within {}",
                crate::status::duration(limits::AUTH_TIMEOUT)
            ),
        )),
    )
}

/// The first request on a token-protected TCP connection must be
/// `{"method":"auth","params":{"token":"..."}}`; anything else closes it.
/// Returns the answer to send and the request's id, or the refusal.
fn authenticate(line: &str, token: &str) -> Result<(String, serde_json::Value), String> {
    let req = rpc::parse(line)?;
    let given = req
        .params
        .get("token")
        .and_then(|t| t.as_str())
        .unwrap_or("");
    if req.method == "auth" && same_secret(given.as_bytes(), token.as_bytes()) {
        Ok((rpc::response(&req.id, Ok(crate::json::json!({}))), req.id))
    } else {
        Err(auth_failure(&req.id, AUTH_FIRST))
    }
}

/// A lock held for the daemon's lifetime, so two racing auto-starts cannot
/// both serve one directory.
pub fn lock_dir(dir: &Path) -> io::Result<Option<OwnedFd>> {
    let fd = rustix::fs::open(
        dir.join("daemon.lock"),
        rustix::fs::OFlags::CREATE | rustix::fs::OFlags::RDWR | rustix::fs::OFlags::CLOEXEC,
        Mode::RUSR | Mode::WUSR,
    )?;
    match rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(fd)),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The device and inode `path` names (not following a symlink).
fn node(path: &Path) -> Option<(u64, u64)> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

/// The daemon's hold on its runtime directory: the lock that makes it the
/// directory's daemon and the node its socket was bound as. Someone may
/// delete the directory (a cleaner of /tmp, `rm -rf`) or the socket under
/// a live daemon; then the next `start` would find no daemon, start a
/// second one, and the first one's sessions would be out of reach for good.
/// So the accept loop looks every [`limits::DAEMON_SOCKET_CHECK`] and puts
/// them back under the same rules as at start: the directory private, the
/// lock taken (if a daemon started in between holds it, that one serves
/// until it exits, and this one takes over then), a socket left there
/// replaced only if nothing answers on it, the new one bound 0600.
struct DaemonDir {
    dir: PathBuf,
    lock: OwnedFd,
    socket: (u64, u64),
    next_check: Instant,
    /// What kept the last attempt from binding, logged once.
    trouble: Option<String>,
}

impl DaemonDir {
    /// Take `dir` (made private if need be) for this daemon and bind its
    /// socket; `None` when another daemon holds it.
    fn bind(dir: &Path) -> Result<Option<(UnixListener, DaemonDir)>, String> {
        ensure_private_dir(dir)?;
        let lock = lock_dir(dir).map_err(|e| format!("cannot lock {}: {e}", dir.display()))?;
        let Some(lock) = lock else {
            return Ok(None);
        };
        let mut held = DaemonDir {
            dir: dir.to_path_buf(),
            lock,
            socket: (0, 0),
            next_check: Instant::now() + limits::DAEMON_SOCKET_CHECK,
            trouble: None,
        };
        Ok(held.bind_socket()?.map(|l| (l, held)))
    }

    /// Bind the socket, the lock held: a socket already there was left by a
    /// dead daemon (it would hold the lock), unless something answers on it.
    fn bind_socket(&mut self) -> Result<Option<UnixListener>, String> {
        let sock = socket_path(&self.dir);
        if node(&sock).is_some() && is_live(&sock) {
            return Ok(None);
        }
        // Anything else there that is not a stale socket is not ours to
        // delete.
        claim_socket_path(&sock)?;
        let l =
            bind_private(&sock).map_err(|e| format!("cannot listen on {}: {e}", sock.display()))?;
        self.socket = node(&sock).ok_or_else(|| format!("{} vanished", sock.display()))?;
        Ok(Some(l))
    }

    /// Called from the accept loop: when the check is due and `path` no
    /// longer names our socket, a new listener to accept on instead.
    fn keep_socket(&mut self, path: &Path) -> Option<UnixListener> {
        let now = Instant::now();
        if now < self.next_check {
            return None;
        }
        self.next_check = now + limits::DAEMON_SOCKET_CHECK;
        if node(path) == Some(self.socket) {
            return None;
        }
        match self.rebind() {
            Ok(Some(l)) => {
                self.trouble = None;
                self.reopen_log();
                eprintln!(
                    "ptybroker daemon {} listening on {} (put back: it had been deleted)",
                    std::process::id(),
                    path.display()
                );
                Some(l)
            }
            Ok(None) => {
                self.tell("another daemon holds the directory; taking over when it exits".into());
                None
            }
            Err(e) => {
                self.tell(e);
                None
            }
        }
    }

    fn rebind(&mut self) -> Result<Option<UnixListener>, String> {
        ensure_private_dir(&self.dir)?;
        // Our lock stands while its file does; a new file is locked anew.
        // (`st_dev` and `st_ino` are narrower than u64 on some targets.)
        #[allow(clippy::unnecessary_cast)]
        let ours = rustix::fs::fstat(&self.lock)
            .ok()
            .map(|st| (st.st_dev as u64, st.st_ino as u64));
        if ours.is_none() || ours != node(&self.dir.join("daemon.lock")) {
            match lock_dir(&self.dir) {
                Ok(Some(lock)) => self.lock = lock,
                Ok(None) => return Ok(None),
                Err(e) => return Err(format!("cannot lock {}: {e}", self.dir.display())),
            }
        }
        let l = self.bind_socket()?;
        if let Some(l) = &l {
            l.set_nonblocking(true)
                .map_err(|e| format!("cannot listen: {e}"))?;
        }
        Ok(l)
    }

    /// The log went with the directory: standard error goes to a new one.
    fn reopen_log(&self) {
        use std::os::unix::fs::OpenOptionsExt;
        if let Ok(log) = std::fs::OpenOptions::new()
            .create(true)
            .mode(0o600)
            .append(true)
            .open(log_path(&self.dir))
        {
            let _ = rustix::stdio::dup2_stderr(&log);
        }
    }

    fn tell(&mut self, why: String) {
        if self.trouble.as_ref() != Some(&why) {
            eprintln!(
                "ptybroker daemon {}: cannot put back {}: {why}",
                std::process::id(),
                socket_path(&self.dir).display()
            );
            self.trouble = Some(why);
        }
    }
}

/// Run the per-user daemon in `dir` (already private). Writes `ready` on
/// stdout once it accepts connections, then detaches stdout.
pub fn daemon(dir: &Path, idle_exit: Duration) -> Result<(), String> {
    // Before any thread starts (see `ExitSignals::take`).
    let signals = ExitSignals::take().map_err(|e| format!("cannot take signals: {e}"))?;
    let Some((l, held)) = DaemonDir::bind(dir)? else {
        // Another daemon holds the directory: it is the one to use.
        println!("ready");
        return Ok(());
    };
    let sock = socket_path(dir);
    println!("ready");
    let _ = io::stdout().flush();
    if let Ok(null) = rustix::fs::open("/dev/null", rustix::fs::OFlags::RDWR, Mode::empty()) {
        let _ = rustix::stdio::dup2_stdout(&null);
        let _ = rustix::stdio::dup2_stdin(&null);
    }
    eprintln!(
        "ptybroker daemon {} listening on {}",
        std::process::id(),
        sock.display()
    );
    let manager = Arc::new(Manager::new());
    run_with(
        Listener::Unix(l, sock),
        manager,
        Config {
            serve: false,
            idle_exit: Some(idle_exit),
            signals: Some(signals),
        },
        Some(held),
    )
    .map_err(|e| e.to_string())
}

/// `serve`'s Unix socket: see [`claim_socket_path`].
pub fn serve_unix(path: &Path) -> Result<Listener, String> {
    claim_socket_path(path)?;
    let l = bind_private(path).map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
    Ok(Listener::Unix(l, path.to_path_buf()))
}

/// `serve --host`: an IP address, or `localhost` for 127.0.0.1. No name is
/// looked up, so no resolver is linked into the static builds for it.
pub fn tcp_host(host: &str) -> Result<std::net::IpAddr, String> {
    if host == "localhost" {
        return Ok(std::net::Ipv4Addr::LOCALHOST.into());
    }
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.parse().map_err(|_| {
        format!("--host takes an IP address (such as 127.0.0.1, ::1 or 0.0.0.0), got {host:?}")
    })
}

/// `serve`'s TCP socket on `host` (see [`tcp_host`]; loopback unless the
/// caller chose).
pub fn serve_tcp(host: &str, port: u16, token: Option<String>) -> Result<Listener, String> {
    let ip = tcp_host(host)?;
    let l = TcpListener::bind((ip, port))
        .map_err(|e| format!("cannot listen on {host}:{port}: {e}"))?;
    Ok(Listener::Tcp(l, token.map(Arc::new)))
}

/// A fresh random token, hex.
pub fn new_token() -> Result<String, String> {
    let mut b = [0u8; 24];
    rustix::rand::getrandom(&mut b, rustix::rand::GetRandomFlags::empty())
        .map_err(|e| format!("cannot get random bytes: {e}"))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_exactly() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"abcd"));
        assert!(!same_secret(b"", b"a"));
    }
}
