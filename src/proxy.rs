//! `ptybroker proxy`: the far end of a remote host (see [`crate::remote`]).
//! It speaks the daemon's JSON-RPC on standard input and output for the
//! user it runs as, by relaying bytes to that user's daemon (started if
//! none runs, as `start` would), and ends when its input ends and the
//! daemon has answered what it was sent. Same methods, errors and limits
//! as the socket, since the daemon answers them; the proxy itself answers
//! only [`remote::DESCRIBE`], the version check a client makes first.
//!
//! The daemon's owner check holds unchanged: the proxy connects as the
//! user ssh (or the container runtime) ran it as.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};

use crate::json::json;
use serde_json::Value;

use crate::client::Client;
use crate::lines::pump;
use crate::sync::lock;
use crate::{limits, remote, server};

/// Relay standard input and output to this user's daemon until either
/// side ends.
pub fn run() -> Result<(), String> {
    let client = Client::new();
    let (daemon, _) = client.connect_or_start().map_err(|e| e.message)?;
    let socket = server::socket_path(client.dir());
    let out = Arc::new(Mutex::new(io::stdout()));
    let from_daemon = daemon.try_clone().map_err(|e| e.to_string())?;
    let answers = {
        let out = Arc::clone(&out);
        crate::sync::spawn(move || relay_answers(from_daemon, &out))
    };
    let described = json!({
        "ptybroker": env!("CARGO_PKG_VERSION"),
        "protocol": remote::PROTOCOL,
        "socket": socket.display().to_string(),
    });
    relay_requests(io::stdin().lock(), &daemon, &out, &described);
    // Our input has ended: let the daemon finish what it was sent, then
    // its end of the connection closes and so does ours.
    let _ = daemon.shutdown(Shutdown::Write);
    let _ = answers.join();
    Ok(())
}

/// The daemon's answers to standard output, a whole line at a time (so a
/// describe answer never lands inside one).
fn relay_answers(daemon: UnixStream, out: &Mutex<io::Stdout>) {
    let mut r = BufReader::with_capacity(64 * 1024, daemon);
    let mut line = Vec::new();
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let mut o = lock(out);
                if o.write_all(&line).and_then(|()| o.flush()).is_err() {
                    return;
                }
            }
        }
    }
}

/// Requests from `input` to the daemon, whole lines as they come; a line
/// longer than [`limits::MAX_LINE_BYTES`] passes through in pieces (the
/// daemon refuses it) rather than being held here.
fn relay_requests(
    input: impl Read,
    daemon: &UnixStream,
    out: &Mutex<io::Stdout>,
    described: &Value,
) {
    let mut to = daemon;
    pump(
        input,
        &mut to,
        limits::MAX_LINE_BYTES,
        |line| match describe_answer(line, described) {
            Some(answer) => {
                let mut o = lock(out);
                let _ = o.write_all(answer.as_bytes()).and_then(|()| o.flush());
                false
            }
            None => true,
        },
    );
}

/// The answer to a `proxy/describe` request, or `None` for anything else.
fn describe_answer(line: &[u8], described: &Value) -> Option<String> {
    // Only a line that names the method is parsed: the rest pass through
    // as bytes.
    if !line
        .windows(remote::DESCRIBE.len())
        .any(|w| w == remote::DESCRIBE.as_bytes())
    {
        return None;
    }
    let req: Value = serde_json::from_slice(line).ok()?;
    if req["method"] != remote::DESCRIBE {
        return None;
    }
    let mut answer = json!({"jsonrpc": "2.0", "id": req.get("id").cloned().unwrap_or(Value::Null), "result": described});
    if req.get("id").is_none() {
        // A notification has no answer.
        answer = Value::Null;
    }
    Some(if answer.is_null() {
        String::new()
    } else {
        format!("{answer}\n")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_is_answered_here_and_everything_else_passes() {
        let d = json!({"protocol": remote::PROTOCOL});
        let a = describe_answer(
            b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"proxy/describe\"}\n",
            &d,
        )
        .unwrap();
        let v: Value = serde_json::from_str(&a).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["result"]["protocol"], remote::PROTOCOL);
        assert!(describe_answer(
            b"{\"id\":1,\"method\":\"pty/read\",\"params\":{\"session\":\"proxy/describe\"}}\n",
            &d
        )
        .is_none());
        assert!(describe_answer(b"{\"id\":1,\"method\":\"pty/list\"}\n", &d).is_none());
        assert_eq!(
            describe_answer(b"{\"method\":\"proxy/describe\"}\n", &d).as_deref(),
            Some("")
        );
    }
}
