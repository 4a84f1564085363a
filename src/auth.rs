//! TCP connections waiting to authenticate (`serve --port` with a token):
//! a small room of their own, a deadline, and the oldest making way for a
//! newcomer, so that connections which never send the token cannot lock out
//! the one who has it.

use std::collections::VecDeque;
use std::io;
use std::net::TcpStream;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::limits;
use crate::sync::lock;

/// TCP connections that must authenticate and have not yet, oldest first.
/// They have a room of their own, [`limits::MAX_UNAUTHENTICATED`] places,
/// and never take one of [`limits::MAX_CONNECTIONS`]: a local user who does
/// not know the token cannot fill the server by opening connections that
/// say nothing. A connection that has not authenticated within
/// [`limits::AUTH_TIMEOUT`] is closed, and when the room is full the oldest
/// is closed for the newcomer, so a client that authenticates at once
/// always gets in. Each is told why.
///
/// Unix sockets (the daemon, `serve --socket`) get neither: they admit only
/// the owner's uid (SO_PEERCRED), a peer that could stop every session
/// anyway, and whose idle connections are legitimate (a `pty/wait` may
/// block for an hour). Nor does `--insecure-no-token`, whose user chose to
/// let every local user in.
#[derive(Default)]
pub struct Unauthenticated {
    waiting: Mutex<VecDeque<Waiting>>,
}

struct Waiting {
    deadline: Instant,
    /// Shared with the connection's thread: [`WAITING`], [`ADMITTED`], or why it was cut.
    place: Arc<AtomicU8>,
    /// A handle on the socket, to wake its thread when it is cut.
    sock: TcpStream,
}

const WAITING: u8 = 0;
const ADMITTED: u8 = 1;
const TIMED_OUT: u8 = 2;
const DISPLACED: u8 = 3;

/// What an unauthenticated peer is told, whatever went wrong.
pub const AUTH_FIRST: &str = "authentication required";

impl Unauthenticated {
    /// Take a place for a new connection (closing the oldest when the room
    /// is full).
    pub fn admit(&self, sock: &TcpStream) -> io::Result<Arc<AtomicU8>> {
        let place = Arc::new(AtomicU8::new(WAITING));
        let entry = Waiting {
            deadline: Instant::now() + limits::AUTH_TIMEOUT,
            place: Arc::clone(&place),
            sock: sock.try_clone()?,
        };
        let mut w = lock(&self.waiting);
        while w.len() >= limits::MAX_UNAUTHENTICATED {
            if let Some(old) = w.pop_front() {
                old.cut(DISPLACED);
            }
        }
        w.push_back(entry);
        Ok(place)
    }

    /// Close the connections past their deadline; the next deadline.
    pub fn sweep(&self) -> Option<Instant> {
        let now = Instant::now();
        let mut w = lock(&self.waiting);
        while w.front().is_some_and(|e| e.deadline <= now) {
            if let Some(old) = w.pop_front() {
                old.cut(TIMED_OUT);
            }
        }
        w.front().map(|e| e.deadline)
    }

    /// The connection is done waiting (authenticated, refused or gone).
    pub fn leave(&self, place: &Arc<AtomicU8>) {
        lock(&self.waiting).retain(|e| !Arc::ptr_eq(&e.place, place));
    }

    /// Mark the connection authenticated, unless it was cut first.
    pub fn admitted(place: &AtomicU8) -> bool {
        place
            .compare_exchange(WAITING, ADMITTED, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// Why the connection was cut, if it was.
    pub fn why(place: &AtomicU8) -> Option<&'static str> {
        match place.load(Ordering::SeqCst) {
            TIMED_OUT => Some("authentication timed out"),
            DISPLACED => {
                Some("too many connections waiting to authenticate; the oldest was closed")
            }
            _ => None,
        }
    }
}

impl Waiting {
    fn cut(self, why: u8) {
        if self
            .place
            .compare_exchange(WAITING, why, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            // Wakes the thread's read with end of input; it writes why.
            let _ = self.sock.shutdown(std::net::Shutdown::Read);
        }
    }
}
