//! The named sessions of one process (the daemon, `serve`, the driver or the
//! MCP server), with the limits that protect it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::limits;
use crate::session::{Options, Session};
use crate::sync::lock;
use crate::vecmap::VecMap;

/// Errors a front end maps onto its protocol's own shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// No session of that name.
    NoSession(String),
    /// The name is taken by a running session (name, running for).
    Running(String, Duration),
    /// A request's arguments are wrong; the text says how.
    Invalid(String),
    /// The program has exited: the session can be read, not acted on
    /// (input, resize, signals); see [`crate::session::EXITED`].
    Exited,
    /// The operation was valid but failed (spawn error, full disk...).
    Failed(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::NoSession(n) => write!(f, "no session {n:?} (start one first)"),
            Error::Running(n, d) => write!(
                f,
                "session {n:?} already running for {} (stop it first)",
                crate::status::duration(*d)
            ),
            Error::Exited => f.write_str(crate::session::EXITED),
            Error::Invalid(m) | Error::Failed(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Default)]
pub struct Manager {
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    /// By name: listings show them in name order.
    sessions: VecMap<String, Arc<Session>>,
    /// Slots held by starts whose program is being spawned (outside the
    /// lock): they count against [`limits::MAX_SESSIONS`] like sessions, so
    /// that concurrent starts cannot overshoot it.
    starting: usize,
}

/// A slot taken by [`Manager::start`]; given back when the start fails.
struct Slot<'a> {
    manager: &'a Manager,
    held: bool,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if self.held {
            lock(&self.manager.table).starting -= 1;
        }
    }
}

/// Session names are any text a client picks (the seeds restrict none):
/// 1 to [`limits::MAX_NAME_CHARS`] characters, no control characters (they
/// would garble status lines and listings), no space at either end (an
/// accident more often than a name). Messages quote them.
pub fn check_name(name: &str) -> Result<()> {
    let n = name.chars().count();
    let ok = (1..=limits::MAX_NAME_CHARS).contains(&n)
        && !name.chars().any(char::is_control)
        && name.trim() == name;
    if ok {
        return Ok(());
    }
    // A name far too long is quoted by its start and its length.
    let shown = match name.char_indices().nth(limits::MAX_NAME_CHARS) {
        Some((cut, _)) => format!("{:?}... ({n} characters)", &name[..cut]),
        None => format!("{name:?}"),
    };
    Err(Error::Invalid(format!(
        "invalid session name {shown}: use 1-{} characters, without control characters or spaces at either end",
        limits::MAX_NAME_CHARS
    )))
}

impl Manager {
    pub fn new() -> Manager {
        Manager::default()
    }

    /// Start a session called `name`. An exited session of that name is
    /// replaced; a running one is an error unless `replace` is set.
    pub fn start(&self, name: &str, opts: &Options, replace: bool) -> Result<Arc<Session>> {
        check_name(name)?;
        // Take the slot under the lock: the old session's when one is
        // replaced, else a free one; it is held while the program spawns.
        let old = {
            let mut t = lock(&self.table);
            let old = match t.sessions.get(name) {
                Some(s) if s.status().running() && !replace => {
                    return Err(Error::Running(name.into(), s.status().running_for))
                }
                Some(_) => t.sessions.remove(name),
                None => {
                    if t.sessions.len() + t.starting >= limits::MAX_SESSIONS {
                        return Err(Error::Failed(format!(
                            "too many sessions ({}); stop one first",
                            limits::MAX_SESSIONS
                        )));
                    }
                    None
                }
            };
            t.starting += 1;
            old
        };
        let mut slot = Slot {
            manager: self,
            held: true,
        };
        if let Some(old) = old {
            old.kill();
        }
        let session = Arc::new(Session::start(opts).map_err(|e| Error::Failed(e.to_string()))?);
        let mut t = lock(&self.table);
        if let Some(s) = t.sessions.get(name) {
            // Another client started the same name while we spawned: ours
            // replaces it only if asked to.
            if s.status().running() && !replace {
                let err = Error::Running(name.into(), s.status().running_for);
                drop(t);
                session.kill();
                return Err(err);
            }
        }
        let displaced = t.sessions.insert(name.to_string(), Arc::clone(&session));
        t.starting -= 1;
        slot.held = false;
        drop(t);
        if let Some(old) = displaced.filter(|s| s.status().running()) {
            old.kill();
        }
        Ok(session)
    }

    pub fn get(&self, name: &str) -> Result<Arc<Session>> {
        lock(&self.table)
            .sessions
            .get(name)
            .cloned()
            .ok_or_else(|| Error::NoSession(name.to_string()))
    }

    pub fn list(&self) -> Vec<(String, Arc<Session>)> {
        lock(&self.table).sessions.pairs().to_vec()
    }

    /// No sessions, and none being started.
    pub fn is_empty(&self) -> bool {
        let t = lock(&self.table);
        t.sessions.is_empty() && t.starting == 0
    }

    /// Stop a session (gracefully unless `force`) and forget it.
    pub fn stop(&self, name: &str, force: bool) -> Result<Arc<Session>> {
        let s = self.get(name)?;
        if force {
            s.kill();
        } else {
            s.stop(limits::STOP_GRACE);
        }
        self.remove_if_same(name, &s);
        Ok(s)
    }

    fn remove_if_same(&self, name: &str, s: &Arc<Session>) {
        let mut t = lock(&self.table);
        if t.sessions.get(name).is_some_and(|cur| Arc::ptr_eq(cur, s)) {
            t.sessions.remove(name);
        }
    }

    /// Forget a session without stopping it: it runs on for whoever holds
    /// it (a library's server closing its endpoint, the program kept).
    pub fn release(&self, name: &str) -> Option<Arc<Session>> {
        lock(&self.table).sessions.remove(name)
    }

    /// Kill every session (process exit).
    pub fn shutdown(&self) {
        let all: Vec<_> = lock(&self.table).sessions.take();
        for (_, s) in all {
            s.kill();
        }
    }
}
