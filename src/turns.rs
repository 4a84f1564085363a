//! The order requests of one session start in: the order they were read.
//! Shared by the stdio front ends that run each request on a thread of its
//! own (the JSON Lines driver, the MCP server).
//!
//! The reading thread takes a numbered [`Turn`] for each request, keyed by
//! the session it names; the request's own thread waits until the session's
//! previous request has released its turn. A request releases its turn when
//! it is done; an MCP wait as soon as it starts to block, so that a call
//! made beside it can still produce what it waits for (the driver's waits
//! hold theirs: a script piped in runs in the order it reads). A turn
//! dropped before it was waited for (the request was refused, or its thread
//! never started) is skipped without blocking anyone.

use std::sync::{Arc, Condvar, Mutex};

use crate::sync::lock;
use crate::vecmap::VecMap;

/// Per session: turns issued, the one being served, and later ones given
/// up before they came.
#[derive(Default)]
struct Line {
    issued: u64,
    serving: u64,
    skipped: Vec<u64>,
}

#[derive(Default)]
struct Lines {
    by_key: Mutex<VecMap<String, Line>>,
    changed: Condvar,
}

/// The queues of every session; cloning shares them.
#[derive(Clone, Default)]
pub struct Turns(Arc<Lines>);

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Waiting,
    Held,
    Released,
}

/// A place in a session's queue (`key: None`: no queue, as for a request
/// that names no session). Dropping it releases the turn, or gives it up
/// if it never came, so a failing request never stalls its session.
pub struct Turn {
    lines: Turns,
    key: Option<String>,
    n: u64,
    state: State,
}

impl Turns {
    /// The next turn for `key`, in the order of calls.
    pub fn take(&self, key: Option<&str>) -> Turn {
        let n = match key {
            None => 0,
            Some(key) => {
                let mut by_key = lock(&self.0.by_key);
                let line = by_key.get_or_insert_with(key.to_string(), Line::default);
                line.issued += 1;
                line.issued - 1
            }
        };
        Turn {
            lines: self.clone(),
            key: key.map(str::to_string),
            n,
            state: State::Waiting,
        }
    }
}

impl Turn {
    /// Block until every earlier request of the session has released its turn.
    pub fn wait(&mut self) {
        if self.state != State::Waiting {
            return;
        }
        if let Some(key) = &self.key {
            let lines = &self.lines.0;
            let mut by_key = lock(&lines.by_key);
            while by_key.get(key).is_some_and(|l| l.serving < self.n) {
                by_key = lines
                    .changed
                    .wait(by_key)
                    .unwrap_or_else(|e| e.into_inner());
            }
        }
        self.state = State::Held;
    }

    /// Let the session's next request start.
    pub fn release(&mut self) {
        if self.state == State::Waiting {
            self.wait();
        }
        if self.state == State::Held {
            self.pass();
        }
    }

    /// Done with this turn, served or not: the line moves past it (and past
    /// any later ones given up) once it comes.
    fn pass(&mut self) {
        let served = self.state == State::Held;
        self.state = State::Released;
        let Some(key) = &self.key else {
            return;
        };
        let lines = &self.lines.0;
        let mut by_key = lock(&lines.by_key);
        let Some(line) = by_key.get_mut(key) else {
            return;
        };
        if !served && line.serving != self.n {
            line.skipped.push(self.n);
            return;
        }
        line.serving = self.n + 1;
        while let Some(i) = line.skipped.iter().position(|&n| n == line.serving) {
            line.skipped.swap_remove(i);
            line.serving += 1;
        }
        if line.serving >= line.issued {
            by_key.remove(key);
        }
        lines.changed.notify_all();
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if self.state != State::Released {
            self.pass();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_follow_tickets_and_forget_idle_sessions() {
        let t = Turns::default();
        let mut a = t.take(Some("s"));
        let mut b = t.take(Some("s"));
        a.wait();
        a.release();
        b.wait();
        b.release();
        assert!(lock(&t.0.by_key).is_empty());
        let mut free = t.take(None);
        free.wait();
        free.release();
    }

    #[test]
    fn a_turn_given_up_is_skipped_when_it_comes() {
        let t = Turns::default();
        let mut a = t.take(Some("s"));
        let b = t.take(Some("s"));
        let c = t.take(Some("s"));
        let mut d = t.take(Some("s"));
        a.wait();
        // Given up while a holds the line, and given up when its turn has
        // come: neither blocks, and d is next.
        drop(c);
        a.release();
        drop(b);
        d.wait();
        d.release();
        assert!(lock(&t.0.by_key).is_empty());
    }
}
