//! The order requests of one session start in: the order they were read.
//!
//! Each request takes a numbered ticket on the reader thread; its own thread
//! waits until the session's previous request has released its turn. A
//! request releases its turn when it is done, or as soon as it starts to
//! block (waits, captures), so that a `send` pipelined behind a
//! `waitForText` can still produce what it waits for.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex};

use crate::sync::lock;

/// A place in a session's queue (`key: None`: no queue, as for `shutdown`).
#[derive(Clone, Debug)]
pub struct Ticket {
    key: Option<String>,
    n: u64,
}

#[derive(Default)]
pub struct Turns {
    /// Per session: tickets issued, and the ticket whose turn it is.
    lines: Mutex<HashMap<String, (u64, u64)>>,
    changed: Condvar,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Waiting,
    Held,
    Released,
}

/// A ticket being served. Dropping it releases the turn (waiting for it
/// first if need be), so a panicking request never stalls its session.
pub struct Turn<'a> {
    turns: &'a Turns,
    ticket: Ticket,
    state: State,
}

impl Turns {
    /// The next ticket for `key`, in the order of calls.
    pub fn ticket(&self, key: Option<&str>) -> Ticket {
        let Some(key) = key else {
            return Ticket { key: None, n: 0 };
        };
        let mut lines = lock(&self.lines);
        let line = lines.entry(key.to_string()).or_insert((0, 0));
        let n = line.0;
        line.0 += 1;
        Ticket {
            key: Some(key.to_string()),
            n,
        }
    }

    pub fn turn(&self, ticket: Ticket) -> Turn<'_> {
        Turn {
            turns: self,
            ticket,
            state: State::Waiting,
        }
    }
}

impl Turn<'_> {
    /// Block until every earlier request of the session has released its turn.
    pub fn wait(&mut self) {
        if self.state != State::Waiting {
            return;
        }
        if let Some(key) = &self.ticket.key {
            let mut lines = lock(&self.turns.lines);
            while lines.get(key).is_some_and(|l| l.1 < self.ticket.n) {
                lines = self
                    .turns
                    .changed
                    .wait(lines)
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
        if self.state != State::Held {
            return;
        }
        self.state = State::Released;
        let Some(key) = &self.ticket.key else {
            return;
        };
        let mut lines = lock(&self.turns.lines);
        if let Some(line) = lines.get_mut(key) {
            line.1 = self.ticket.n + 1;
            if line.1 >= line.0 {
                lines.remove(key);
            }
        }
        self.turns.changed.notify_all();
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_follow_tickets_and_forget_idle_sessions() {
        let t = Turns::default();
        let a = t.ticket(Some("s"));
        let b = t.ticket(Some("s"));
        let mut tb = t.turn(b);
        let mut ta = t.turn(a);
        ta.wait();
        ta.release();
        tb.wait();
        tb.release();
        assert!(lock(&t.lines).is_empty());
        let mut free = t.turn(t.ticket(None));
        free.wait();
        free.release();
    }
}
