//! The named sessions of one process (the daemon, `serve`, the driver or the
//! MCP server), with the limits that protect it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::limits;
use crate::session::{Options, Session};

/// Errors a front end maps onto its protocol's own shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// No session of that name.
    NoSession(String),
    /// The name is taken by a running session (name, running for).
    Running(String, Duration),
    /// A request's arguments are wrong; the text says how.
    Invalid(String),
    /// The operation was valid but failed (spawn error, exited program...).
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
            Error::Invalid(m) | Error::Failed(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Default)]
pub struct Manager {
    sessions: Mutex<BTreeMap<String, Arc<Session>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Session names are used in messages and file names: keep them plain.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.@".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "invalid session name {name:?}: use 1-64 letters, digits, '-', '_', '.' or '@'"
        )))
    }
}

impl Manager {
    pub fn new() -> Manager {
        Manager::default()
    }

    /// Start a session called `name`. An exited session of that name is
    /// replaced; a running one is an error unless `replace` is set.
    pub fn start(&self, name: &str, opts: &Options, replace: bool) -> Result<Arc<Session>> {
        check_name(name)?;
        let old = {
            let map = lock(&self.sessions);
            match map.get(name) {
                Some(s) if s.status().running() && !replace => {
                    return Err(Error::Running(name.into(), s.status().running_for))
                }
                Some(s) => Some(Arc::clone(s)),
                None => {
                    if map.len() >= limits::MAX_SESSIONS {
                        return Err(Error::Failed(format!(
                            "too many sessions ({}); stop one first",
                            limits::MAX_SESSIONS
                        )));
                    }
                    None
                }
            }
        };
        if let Some(old) = old {
            old.kill();
            self.remove_if_same(name, &old);
        }
        let session = Arc::new(Session::start(opts).map_err(|e| Error::Failed(e.to_string()))?);
        let mut map = lock(&self.sessions);
        if let Some(s) = map.get(name) {
            // Another client started the same name while we spawned.
            if s.status().running() {
                return Err(Error::Running(name.into(), s.status().running_for));
            }
        }
        map.insert(name.to_string(), Arc::clone(&session));
        Ok(session)
    }

    pub fn get(&self, name: &str) -> Result<Arc<Session>> {
        lock(&self.sessions)
            .get(name)
            .cloned()
            .ok_or_else(|| Error::NoSession(name.to_string()))
    }

    pub fn list(&self) -> Vec<(String, Arc<Session>)> {
        lock(&self.sessions)
            .iter()
            .map(|(k, v)| (k.clone(), Arc::clone(v)))
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        lock(&self.sessions).is_empty()
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
        let mut map = lock(&self.sessions);
        if map.get(name).is_some_and(|cur| Arc::ptr_eq(cur, s)) {
            map.remove(name);
        }
    }

    /// Kill every session (process exit).
    pub fn shutdown(&self) {
        let all: Vec<_> = std::mem::take(&mut *lock(&self.sessions))
            .into_values()
            .collect();
        for s in all {
            s.kill();
        }
    }
}
