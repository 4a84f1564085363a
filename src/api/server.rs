//! [`PtyServer`]: seed 000's server as a value. One program on a socket,
//! served by the same JSON-RPC code as `ptybroker serve`, in this process.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::error::{Error, ErrorKind, Result};
use super::session::{Session, SessionOptions};
use crate::manager::Manager;
use crate::server;

/// Where a [`PtyServer`] listens (seed 000's `SocketEndpoint`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// A Unix socket at this path, created 0600 (a stale socket left by a
    /// killed server is replaced; anything else there is refused).
    Unix(PathBuf),
    /// A TCP socket. Anyone who can reach it may drive the program unless
    /// `token` is set: then a client must first send
    /// `{"jsonrpc":"2.0","method":"auth","params":{"token":"..."},"id":0}`.
    Tcp {
        /// The IP address to bind, e.g. `127.0.0.1` (or `localhost`; no
        /// other name is looked up).
        host: String,
        /// The port; 0 picks a free one (see [`PtyServer::address`]).
        port: u16,
        /// The secret a client must present first, if any.
        token: Option<String>,
    },
}

impl Endpoint {
    /// [`Endpoint::Unix`].
    pub fn unix(path: impl Into<PathBuf>) -> Endpoint {
        Endpoint::Unix(path.into())
    }

    /// [`Endpoint::Tcp`] on loopback with a token.
    pub fn tcp_loopback(port: u16, token: impl Into<String>) -> Endpoint {
        Endpoint::Tcp {
            host: "127.0.0.1".into(),
            port,
            token: Some(token.into()),
        }
    }
}

struct Running {
    stop: OwnedFd,
    thread: JoinHandle<std::io::Result<()>>,
    manager: Arc<Manager>,
}

/// One program hosted on a socket, answering seed 000's JSON-RPC methods
/// (`pty/read`, `pty/write`, `pty/wait`, `pty/status`, `pty/resize`,
/// `pty/kill`) on a thread of its own, while this process drives the same
/// session directly through [`session`](PtyServer::session).
///
/// A client's `pty/kill` kills the program and closes the endpoint; so does
/// [`close(true)`](PtyServer::close). Dropping the server closes it and
/// kills the program.
///
/// ```
/// use ptybroker::{Endpoint, PtyServer, SessionOptions, Until};
///
/// let dir = std::env::temp_dir().join(format!("ptyb-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let sock = dir.join("s.sock");
/// let server = PtyServer::bind(Endpoint::unix(&sock), &SessionOptions::shell("cat"))?;
/// assert_eq!(server.address(), sock.display().to_string());
/// server.session().write("ping\r")?;
/// assert!(server.session().wait(Until::text("ping")).matched);
/// server.close(true)?;
/// server.close(true)?; // idempotent
/// assert!(!sock.exists());
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct PtyServer {
    address: String,
    session: Session,
    running: Mutex<Option<Running>>,
}

impl std::fmt::Debug for PtyServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PtyServer")
            .field("address", &self.address)
            .field("session", &self.session)
            .finish()
    }
}

/// The name the one session has in the server, as `ptybroker serve` names it.
const NAME: &str = "default";

impl PtyServer {
    /// Listen on `endpoint`, start the program, and serve it (seed 000's
    /// `createSocketPty` then `listen`).
    pub fn bind(endpoint: Endpoint, options: &SessionOptions) -> Result<PtyServer> {
        let failed = |m: String| Error::new(ErrorKind::Failed, m);
        // Checked before anything is bound or spawned.
        let o = options.inner();
        if o.spawn.argv.first().map_or(true, |p| p.is_empty()) {
            return Err(Error::new(
                ErrorKind::Invalid,
                "the command must name a program",
            ));
        }
        crate::limits::check_size(u64::from(o.spawn.cols), u64::from(o.spawn.rows))
            .map_err(|m| Error::new(ErrorKind::Invalid, m))?;
        let (listener, address) = match endpoint {
            Endpoint::Unix(path) => {
                let l = server::serve_unix(&path).map_err(failed)?;
                (l, path.display().to_string())
            }
            Endpoint::Tcp { host, port, token } => {
                let l = server::serve_tcp(&host, port, token).map_err(failed)?;
                let addr = match &l {
                    server::Listener::Tcp(t, _) => {
                        t.local_addr().map_err(|e| failed(e.to_string()))?
                    }
                    server::Listener::Unix(..) => unreachable!("serve_tcp binds TCP"),
                };
                (l, addr.to_string())
            }
        };
        let manager = Arc::new(Manager::new());
        let core = match manager.start(NAME, o, false) {
            Ok(s) => s,
            Err(e) => {
                listener.discard();
                return Err(e.into());
            }
        };
        let (signals, stop) = server::ExitSignals::by_hand().map_err(Error::from)?;
        let m = Arc::clone(&manager);
        let thread = std::thread::Builder::new()
            .name("pty-server".into())
            .spawn(move || {
                server::run(
                    listener,
                    m,
                    server::Config {
                        serve: true,
                        idle_exit: None,
                        signals: Some(signals),
                    },
                )
            })
            .map_err(Error::from)?;
        Ok(PtyServer {
            address,
            session: Session::from_core(core),
            running: Mutex::new(Some(Running {
                stop,
                thread,
                manager,
            })),
        })
    }

    /// The address clients connect to: the socket's path, or `host:port`
    /// with the port actually bound.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The hosted program's session, the same one clients drive.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The endpoint is still open: not closed, and no client has sent
    /// `pty/kill`.
    pub fn is_open(&self) -> bool {
        crate::sync::lock(&self.running)
            .as_ref()
            .is_some_and(|r| !r.thread.is_finished())
    }

    /// Close the endpoint: no new connections, the answers in flight sent,
    /// the Unix socket removed. With `kill`, the program is killed too;
    /// without, it runs on and [`session`](PtyServer::session) still drives
    /// it. Idempotent: a second call (or one after a client's `pty/kill`)
    /// does nothing more, except kill the program when `kill` asks.
    pub fn close(&self, kill: bool) -> Result<()> {
        let running = crate::sync::lock(&self.running).take();
        if let Some(r) = running {
            if !kill {
                // The server kills what its manager holds as it ends.
                r.manager.release(NAME);
            }
            let _ = rustix::io::write(&r.stop, b"c");
            match r.thread.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(e.into()),
                Err(_) => return Err(Error::new(ErrorKind::Failed, "the server thread panicked")),
            }
        }
        if kill {
            self.session.kill();
        }
        Ok(())
    }
}

impl Drop for PtyServer {
    fn drop(&mut self) {
        let _ = self.close(true);
    }
}
