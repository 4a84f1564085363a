//! `ptybroker driver`: the versioned JSON Lines driver protocol of seed 003
//! on stdin/stdout, with many named sessions in this one process.
//!
//! The driver writes a hello line, then answers each request line with
//! exactly one response or error line carrying the request's id. Every
//! request runs on a thread of its own, so a `waitForText` or `capture` on
//! one session never holds up another; stdout writes are serialised so that
//! each answer stays one line. Requests naming the same session run one at a
//! time in the order they were read, waits included, so a script piped in
//! runs as it reads: a `send` after a `waitForText` goes once the text has
//! appeared.
//!
//! The methods themselves live in [`methods`], one function each, and are a
//! thin translation onto [`crate::ops`] and [`crate::session`].
//!
//! At end of input the requests read are answered first, each within its
//! own timeout (a script that pipes its requests in gets every answer);
//! then every session is killed and the driver exits. If stdout closes too
//! (the client has gone), or the longest of those timeouts has passed, the
//! sessions are killed at once: a wait on a killed session answers as the
//! program's end makes it answer, and a `launch` still starting has its
//! program killed when it is done. `shutdown` ends the sessions gracefully
//! at once and answers last. Every request read gets exactly one answer:
//! one still running [`limits::EXIT_ANSWER_WAIT`] after the sessions ended
//! is answered with an error before the driver exits.

mod methods;
mod params;

use std::io::{self, BufReader, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::Instant;

use crate::json::json;

use serde_json::{Map, Value};

use crate::limits;
use crate::manager::Manager;
use crate::session::Session;
use crate::sync::{lock, Start};
use crate::turns::{Turn, Turns};
use crate::vecmap::VecMap;

/// The protocol version in the hello line. Breaking changes increment it.
pub const PROTOCOL_VERSION: u64 = 2;
/// Optional capabilities advertised in the hello line.
pub const CAPABILITIES: &[&str] = &["mouse"];

/// Error codes, as seed 003 names them.
pub const INVALID_REQUEST: &str = "INVALID_REQUEST";
pub const READ_ERROR: &str = "READ_ERROR";
pub const REQUEST_FAILED: &str = "REQUEST_FAILED";

/// An error answer: one of the codes above and a message for a person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriverError {
    pub code: &'static str,
    pub message: String,
}

impl DriverError {
    pub fn invalid(message: impl Into<String>) -> DriverError {
        DriverError {
            code: INVALID_REQUEST,
            message: message.into(),
        }
    }

    pub fn failed(message: impl Into<String>) -> DriverError {
        DriverError {
            code: REQUEST_FAILED,
            message: message.into(),
        }
    }

    pub fn read(message: impl Into<String>) -> DriverError {
        DriverError {
            code: READ_ERROR,
            message: message.into(),
        }
    }
}

/// The hello line the driver writes first.
pub fn hello() -> Value {
    json!({
        "type": "hello",
        "protocolVersion": PROTOCOL_VERSION,
        "terminalControlVersion": env!("CARGO_PKG_VERSION"),
        "capabilities": CAPABILITIES,
    })
}

/// The answer line for request `id`.
pub fn answer(id: &Value, result: Result<Value, DriverError>) -> Value {
    match result {
        Ok(r) => json!({"type": "response", "id": id, "result": r}),
        Err(e) => {
            json!({"type": "error", "id": id, "error": {"code": e.code, "message": e.message}})
        }
    }
}

/// A request whose envelope is well-formed.
pub struct Request {
    pub id: Value,
    pub method: &'static str,
    /// Absent only for `shutdown`.
    pub session: Option<String>,
    pub params: Map<String, Value>,
    /// Which request in flight this is (given when it is dispatched).
    serial: u64,
}

/// Check a request line's envelope. On failure, the id to answer with (the
/// request's own when it had a usable one; null for a line too big to
/// parse, see [`crate::json::oversized`]) and the error.
pub fn parse(line: &str) -> Result<Request, (Value, DriverError)> {
    // Counted before it is parsed, so its id is not known either.
    if let Some(what) = crate::json::oversized(line.as_bytes()) {
        return Err((
            Value::Null,
            DriverError::invalid(format!("request line holds {what}; it was discarded")),
        ));
    }
    let v: Value = serde_json::from_slice(line.as_bytes()).map_err(|e| {
        (
            Value::Null,
            DriverError::invalid(format!("malformed JSON: {e}")),
        )
    })?;
    let Value::Object(mut obj) = v else {
        return Err((
            Value::Null,
            DriverError::invalid("a request must be a JSON object {id, method, sessionId, params}"),
        ));
    };
    let id = match obj.remove("id") {
        Some(id @ Value::Number(_)) => id,
        // Echo what we can so the client can match the error up.
        Some(id @ Value::String(_)) => {
            return Err((id, DriverError::invalid("id must be a number")))
        }
        None | Some(Value::Null) => {
            return Err((
                Value::Null,
                DriverError::invalid("id is required (a number)"),
            ))
        }
        Some(_) => return Err((Value::Null, DriverError::invalid("id must be a number"))),
    };
    let bad = |m: String| Err((id.clone(), DriverError::invalid(m)));
    let method = match obj.get("method") {
        Some(Value::String(m)) => match methods::find(m) {
            Some(name) => name,
            None => {
                return bad(format!(
                    "unknown method {m:?} (use {})",
                    methods::names().join(", ")
                ))
            }
        },
        None | Some(Value::Null) => return bad("method is required".into()),
        Some(_) => return bad("method must be a string".into()),
    };
    let session = match obj.get("sessionId") {
        Some(Value::String(s)) => {
            if let Err(e) = crate::manager::check_name(s) {
                return bad(format!("sessionId: {e}"));
            }
            Some(s.clone())
        }
        None | Some(Value::Null) if method == "shutdown" => None,
        None | Some(Value::Null) => {
            return bad(format!("sessionId is required for {method}"));
        }
        Some(_) => return bad("sessionId must be a string".into()),
    };
    let params = match obj.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p,
        Some(_) => return bad("params must be an object".into()),
    };
    Ok(Request {
        id,
        method,
        session,
        params,
        serial: 0,
    })
}

/// The requests read and not yet answered.
#[derive(Default)]
struct Flight {
    /// Their serial numbers and ids, in the order read (at most
    /// [`limits::MAX_DRIVER_REQUESTS`]); an answer is written only by
    /// whoever takes its entry out, so each request gets exactly one.
    pending: Vec<(u64, Value)>,
    next: u64,
    /// How many have finished: a closing driver looks again after each.
    finished: u64,
    /// When the longest timeout of the requests read runs out (each
    /// counted from when it can start: when it was read, or when the
    /// session's requests before it are done): at end of input, the driver
    /// answers them until then.
    until: Option<Instant>,
    /// By session: when the timeout of the last request read for it runs
    /// out, counted so.
    ends: VecMap<String, Instant>,
}

/// Everything the request threads share.
pub struct Driver {
    pub manager: Manager,
    out: Mutex<Box<dyn Write + Send>>,
    turns: Turns,
    /// Requests being answered, and a signal when one finishes.
    flight: Mutex<Flight>,
    finished: Condvar,
    /// Set by `shutdown` and at end of input: no new request starts.
    closing: AtomicBool,
}

impl Driver {
    fn new(out: Box<dyn Write + Send>) -> Driver {
        Driver {
            manager: Manager::new(),
            out: Mutex::new(out),
            turns: Turns::default(),
            flight: Mutex::new(Flight::default()),
            finished: Condvar::new(),
            closing: AtomicBool::new(false),
        }
    }

    /// Write one line. A client that stopped reading has gone: end as at
    /// end of input.
    fn write(&self, v: &Value) {
        self.put(lock(&self.out), v);
    }

    /// [`Driver::write`] with the output already locked.
    fn put(&self, mut out: MutexGuard<'_, Box<dyn Write + Send>>, v: &Value) {
        let mut line = v.to_string();
        line.push('\n');
        if out
            .write_all(line.as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            drop(out);
            self.end_sessions(false);
            std::process::exit(1);
        }
    }

    /// Kill (or, `graceful`, stop) every session and finish its recording.
    /// Returns how many there were.
    pub fn end_sessions(&self, graceful: bool) -> usize {
        let all = self.manager.list();
        Self::end(&all, graceful);
        self.manager.shutdown();
        all.len()
    }

    /// End `sessions` side by side, each with its recording.
    fn end(sessions: &[(String, Arc<Session>)], graceful: bool) {
        let stoppers: Vec<_> = sessions
            .iter()
            .map(|(_, s)| {
                let s = Arc::clone(s);
                crate::sync::spawn(move || {
                    if graceful {
                        s.stop(limits::STOP_GRACE);
                    } else {
                        s.kill();
                    }
                    let _ = s.stop_recording();
                })
            })
            .collect();
        for t in stoppers {
            let _ = t.join();
        }
    }

    /// At end of input: wait until every request read has been answered,
    /// the longest of their own timeouts has passed, or nobody reads stdout
    /// any more (looked at every [`crate::session::CANCEL_POLL`]).
    fn answer_what_was_read(&self) {
        let look = crate::session::CANCEL_POLL;
        let mut f = lock(&self.flight);
        while !f.pending.is_empty()
            && f.until.is_some_and(|u| Instant::now() < u)
            && !crate::lines::stdout_gone()
        {
            f = self
                .finished
                .wait_timeout(f, look)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// End every session and let the requests in flight answer: stop
    /// accepting requests, end the sessions (kept in the table, so that a
    /// request still to start on one finds it ended), and each time a
    /// request finishes end what it started (a `launch` under way), until
    /// at most `others` requests are left or [`limits::EXIT_ANSWER_WAIT`]
    /// has passed. Returns how many sessions were ended.
    pub fn close(&self, graceful: bool, others: usize) -> usize {
        self.closing.store(true, Ordering::SeqCst);
        // Kept (not just counted) so that no new session can be mistaken
        // for one of them.
        let mut ended: Vec<Arc<Session>> = Vec::new();
        let mut end_new = |graceful: bool| {
            let mut fresh = Vec::new();
            for (name, s) in self.manager.list() {
                if !ended.iter().any(|e| Arc::ptr_eq(e, &s)) {
                    ended.push(Arc::clone(&s));
                    fresh.push((name, s));
                } else if s.status().running() {
                    fresh.push((name, s));
                }
            }
            Self::end(&fresh, graceful);
        };
        end_new(graceful);
        let deadline = Instant::now() + limits::EXIT_ANSWER_WAIT;
        let mut f = lock(&self.flight);
        let mut seen = f.finished;
        while f.pending.len() > others {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            if f.finished == seen {
                f = self
                    .finished
                    .wait_timeout(f, deadline - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                continue;
            }
            seen = f.finished;
            drop(f);
            end_new(false);
            f = lock(&self.flight);
        }
        drop(f);
        end_new(false);
        self.manager.shutdown();
        ended.len()
    }

    /// Take request `serial` out of the pending set and write its answer,
    /// unless a closing driver has already answered it.
    fn answer_once(&self, serial: u64, line: &Value) {
        // Taken out and written under the output's lock: an exiting driver
        // answers what is left under the same lock.
        let out = lock(&self.out);
        let mine = {
            let mut f = lock(&self.flight);
            let at = f.pending.iter().position(|(n, _)| *n == serial);
            at.map(|i| f.pending.remove(i)).is_some()
        };
        if mine {
            self.put(out, line);
        } else {
            drop(out);
        }
        let mut f = lock(&self.flight);
        f.finished += 1;
        self.finished.notify_all();
    }

    /// Exit: answer every request still pending (but `last`'s own) with an
    /// error, then write `last`'s answer, so that it is the last line.
    pub fn exit_after(&self, last: Option<(&Request, Value)>) -> ! {
        let mut out = lock(&self.out);
        // In the order read.
        let left = std::mem::take(&mut lock(&self.flight).pending);
        let mut lines: Vec<Value> = left
            .into_iter()
            .filter(|(n, _)| last.as_ref().map_or(true, |(r, _)| r.serial != *n))
            .map(|(_, id)| {
                let e = DriverError::failed(format!(
                    "the driver is exiting and this request was still running {} ms after its session was ended",
                    limits::EXIT_ANSWER_WAIT.as_millis()
                ));
                answer(&id, Err(e))
            })
            .collect();
        if let Some((req, result)) = last {
            lines.push(answer(&req.id, Ok(result)));
        }
        for v in lines {
            let mut line = v.to_string();
            line.push('\n');
            if out.write_all(line.as_bytes()).is_err() {
                break;
            }
        }
        let _ = out.flush();
        std::process::exit(0);
    }
}

/// Run one request on this thread, in its session's turn, and answer it.
fn handle(driver: &Driver, req: Request, mut turn: Turn) {
    turn.wait();
    let result =
        catch_unwind(AssertUnwindSafe(|| methods::call(driver, &req))).unwrap_or_else(|_| {
            Err(DriverError::failed(format!(
                "internal error while handling {}; the driver is still running",
                req.method
            )))
        });
    // Answered before the session's next request starts: its answers come
    // in the order read.
    driver.answer_once(req.serial, &answer(&req.id, result));
    turn.release();
}

/// Decode one line as [`crate::lines::read_bounded_line`] read it
/// (`Err(len)`: too long): `None` for a blank line, else the request or the
/// error answer to write. No line ends the protocol.
pub fn decode(line: Result<&[u8], usize>) -> Option<Result<Request, Value>> {
    let text = match line {
        Err(len) => {
            let e = DriverError::read(format!(
                "request line of {len}+ bytes exceeds the limit of {} bytes; it was discarded",
                limits::MAX_LINE_BYTES
            ));
            return Some(Err(answer(&Value::Null, Err(e))));
        }
        Ok(bytes) => match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                let e = DriverError::read(format!(
                    "request line is not valid UTF-8 (at byte {}); it was discarded",
                    e.valid_up_to()
                ));
                return Some(Err(answer(&Value::Null, Err(e))));
            }
        },
    };
    let text = text.trim_end_matches('\r');
    if text.trim().is_empty() {
        return None;
    }
    Some(parse(text).map_err(|(id, e)| answer(&id, Err(e))))
}

/// `ptybroker driver`: speak the protocol on stdin/stdout until end of input
/// or `shutdown`.
pub fn run() -> ! {
    let driver: &'static Driver = Box::leak(Box::new(Driver::new(Box::new(io::stdout()))));
    driver.write(&hello());
    let mut input = BufReader::with_capacity(64 * 1024, io::stdin());
    let mut line = Vec::new();
    loop {
        let read =
            match crate::lines::read_bounded_line(&mut input, &mut line, limits::MAX_LINE_BYTES) {
                Ok(None) => break,
                Err(e) => {
                    let e = DriverError::read(format!("cannot read stdin: {e}"));
                    driver.write(&answer(&Value::Null, Err(e)));
                    break;
                }
                Ok(Some(r)) => r.map(|()| line.as_slice()),
            };
        let req = match decode(read) {
            None => continue,
            Some(Ok(r)) => r,
            Some(Err(answer)) => {
                driver.write(&answer);
                continue;
            }
        };
        dispatch(driver, req);
    }
    // End of input: what was asked is answered first, then the sessions end.
    driver.answer_what_was_read();
    driver.close(false, 0);
    driver.exit_after(None);
}

/// How long `req` may take by its own params: its `timeoutMs` or
/// `deadlineMs` (at most [`limits::MAX_WAIT`]), else the default wait.
fn own_timeout(req: &Request) -> std::time::Duration {
    ["timeoutMs", "deadlineMs"]
        .iter()
        .filter_map(|key| params::ms(&req.params, key, limits::DEFAULT_WAIT).ok())
        .max()
        .unwrap_or(limits::DEFAULT_WAIT)
}

/// Hand a request to a thread of its own.
fn dispatch(driver: &'static Driver, mut req: Request) {
    if driver.closing.load(Ordering::SeqCst) {
        driver.write(&answer(
            &req.id,
            Err(DriverError::failed("the driver is shutting down")),
        ));
        return;
    }
    {
        let mut f = lock(&driver.flight);
        if f.pending.len() >= limits::MAX_DRIVER_REQUESTS {
            drop(f);
            driver.write(&answer(
                &req.id,
                Err(DriverError::failed(format!(
                    "too many requests in flight ({}); wait for some answers first",
                    limits::MAX_DRIVER_REQUESTS
                ))),
            ));
            return;
        }
        req.serial = f.next;
        f.next += 1;
        if f.pending.is_empty() {
            // Nothing waits behind an earlier request: forget every
            // session's (the table stays as small as what is in flight).
            f.ends = VecMap::default();
        }
        f.pending.push((req.serial, req.id.clone()));
        // A request starts once the ones before it in its session are done.
        let now = Instant::now();
        let start = match &req.session {
            Some(name) => f.ends.get(name.as_str()).map_or(now, |&e| e.max(now)),
            None => now,
        };
        let until = start + own_timeout(&req);
        if let Some(name) = &req.session {
            f.ends.insert(name.clone(), until);
        }
        f.until = Some(f.until.map_or(until, |u| u.max(until)));
    }
    let turn = driver.turns.take(req.session.as_deref());
    let (id, serial) = (req.id.clone(), req.serial);
    let spawned = thread::Builder::new()
        .name("driver-request".into())
        .stack_size(512 * 1024)
        .start(move || {
            handle(driver, req, turn);
        });
    if let Err(e) = spawned {
        // The closure never ran: its turn, dropped with it, was given up.
        driver.answer_once(
            serial,
            &answer(
                &id,
                Err(DriverError::failed(format!("cannot start a thread: {e}"))),
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(line: &str) -> (Value, &'static str) {
        match parse(line) {
            Ok(r) => panic!("{line} should be refused, got {}", r.method),
            Err((id, e)) => (id, e.code),
        }
    }

    #[test]
    fn envelopes_are_checked_and_ids_echoed_when_usable() {
        let r = parse(r#"{"id":3,"method":"status","sessionId":"app","extra":1}"#)
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(
            (r.id, r.method, r.session.as_deref()),
            (json!(3), "status", Some("app"))
        );
        assert!(r.params.is_empty());
        let r = parse(r#"{"id":4,"method":"shutdown"}"#).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(r.session, None);
        assert_eq!(refused("nope"), (Value::Null, INVALID_REQUEST));
        assert_eq!(
            refused(r#"{"method":"status"}"#),
            (Value::Null, INVALID_REQUEST)
        );
        assert_eq!(
            refused(r#"{"id":"a","method":"status"}"#),
            (json!("a"), INVALID_REQUEST)
        );
        assert_eq!(
            refused(r#"{"id":5,"method":"status"}"#),
            (json!(5), INVALID_REQUEST)
        );
        assert_eq!(
            refused(r#"{"id":6,"method":"Status","sessionId":"a"}"#),
            (json!(6), INVALID_REQUEST)
        );
        assert_eq!(
            refused(r#"{"id":7,"method":"status","sessionId":"a","params":"x"}"#),
            (json!(7), INVALID_REQUEST)
        );
    }

    #[test]
    fn answers_have_the_seed_shapes() {
        assert_eq!(
            answer(&json!(1), Ok(json!({"sessionId": "app"}))),
            json!({"type": "response", "id": 1, "result": {"sessionId": "app"}})
        );
        assert_eq!(
            answer(
                &json!(2),
                Err(DriverError::failed("session app has exited"))
            ),
            json!({"type": "error", "id": 2, "error": {"code": "REQUEST_FAILED", "message": "session app has exited"}})
        );
    }
}
