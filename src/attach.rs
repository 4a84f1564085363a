//! `pty/attach`: a live view of a session for a person (or any front end
//! that draws a screen), on the daemon's own socket. The connection that
//! sends it stops being request-and-answer: after the answer the daemon
//! sends `pty/frame` notifications (the rows that changed, as the emulator
//! renders them with their colours, the cursor, the size) until the viewer
//! detaches, hangs up or falls behind, or the program exits
//! (`pty/exit`). The viewer sends notifications only: `pty/input` (with
//! `write`), `pty/resize` (with `resize`) and `pty/detach`.
//!
//! Frames rather than the raw output: a viewer of any size can show them
//! (clipped, never re-wrapped), and one that is slow skips the states it
//! missed instead of queueing them. Each viewer has its own thread here
//! and its own socket buffer as its queue: a viewer that stops reading
//! fills only its own buffer, and after [`limits::VIEWER_STALL`] its write
//! fails and it is dropped; the session, its agent and other viewers never
//! wait for it.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::json::json;
use serde_json::Value;

use crate::jsonrpc::Params;
use crate::limits;
use crate::lines::read_bounded_line;
use crate::ops;
use crate::session::Session;
use crate::sync::Start;

/// What a viewer asked for.
#[derive(Clone, Copy, Debug, Default)]
pub struct Asked {
    /// Its keys reach the program.
    pub write: bool,
    /// Its size becomes the session's.
    pub resize: bool,
}

impl Asked {
    pub fn from_params(p: &Params) -> Result<Asked, String> {
        let flag = |k: &str| match p.get(k) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(format!("{k} must be a boolean")),
        };
        Ok(Asked {
            write: flag("write")?,
            resize: flag("resize")?,
        })
    }
}

/// One frame's worth of the screen, as drawn.
#[derive(Default, PartialEq)]
struct Picture {
    cols: u16,
    rows: Vec<String>,
    cursor: (u16, u16, bool),
    alt: bool,
    title: String,
}

fn picture(s: &Session) -> Picture {
    s.with_screen(|scr| {
        let c = scr.cursor();
        Picture {
            cols: scr.cols(),
            rows: scr.render_ansi().split('\n').map(str::to_string).collect(),
            cursor: (c.row, c.col, c.visible),
            alt: scr.is_alt_screen(),
            title: scr.title().to_string(),
        }
    })
}

/// The frame that takes a viewer from `old` to `new` (all rows when the
/// size changed), or `None` when nothing it shows changed.
fn frame(old: &Picture, new: &Picture) -> Option<Value> {
    if old == new {
        return None;
    }
    let full = old.cols != new.cols || old.rows.len() != new.rows.len();
    let lines: Vec<Value> = new
        .rows
        .iter()
        .enumerate()
        .filter(|(i, r)| full || old.rows.get(*i) != Some(*r))
        .map(|(i, r)| json!([i, r]))
        .collect();
    Some(json!({
        "jsonrpc": "2.0",
        "method": "pty/frame",
        "params": {
            "cols": new.cols,
            "rows": new.rows.len(),
            "full": full,
            "lines": lines,
            "cursor": {"row": new.cursor.0, "col": new.cursor.1, "visible": new.cursor.2},
            "altScreen": new.alt,
            "title": new.title,
        }
    }))
}

/// Serve one viewer on its connection until it leaves or the program
/// exits. `answer` is the `pty/attach` answer, sent first; `input` is the
/// connection's read side (moved to a thread of its own); `out` its write
/// side, with [`limits::VIEWER_STALL`] as its write timeout.
pub fn serve(
    session: Arc<Session>,
    asked: Asked,
    answer: String,
    input: Box<dyn BufRead + Send>,
    out: &mut dyn Write,
) {
    let _counted = session.viewer(asked.write);
    let gone = Arc::new(AtomicBool::new(false));
    let reader = {
        let (session, gone) = (Arc::clone(&session), Arc::clone(&gone));
        std::thread::Builder::new()
            .name("viewer-input".into())
            .start(move || take_input(input, &session, asked, &gone))
    };
    let Ok(reader) = reader else {
        // No thread to spare: the caller closes the connection.
        return;
    };
    let line = |out: &mut dyn Write, v: &str| {
        let mut b = Vec::with_capacity(v.len() + 1);
        b.extend_from_slice(v.as_bytes());
        b.push(b'\n');
        out.write_all(&b)
    };
    if line(out, &answer).is_err() {
        gone.store(true, Ordering::SeqCst);
        return;
    }
    let mut shown = Picture::default();
    let mut generation = u64::MAX;
    let mut last = Instant::now() - limits::VIEWER_FRAME_GAP;
    while !gone.load(Ordering::SeqCst) {
        // Output comes in bursts: one frame per gap at most.
        let since = last.elapsed();
        if since < limits::VIEWER_FRAME_GAP {
            std::thread::sleep(limits::VIEWER_FRAME_GAP - since);
        }
        let now = picture(&session);
        let exited = session.status().exit;
        if let Some(f) = frame(&shown, &now) {
            if line(out, &f.to_string()).is_err() {
                // Stalled past its bound, or gone: drop it.
                break;
            }
            last = Instant::now();
            shown = now;
        }
        if let Some(e) = exited {
            let (code, signal) = crate::rpc::exit_fields(Some(e));
            let bye = json!({"jsonrpc": "2.0", "method": "pty/exit", "params": {"exitCode": code, "signal": signal}});
            let _ = line(out, &bye.to_string());
            break;
        }
        generation = session.wait_change(generation, Duration::from_millis(250));
    }
    gone.store(true, Ordering::SeqCst);
    drop(reader);
}

/// The viewer's notifications: keys (with `write`), its size (with
/// `resize`), detach. Anything else is ignored: a viewer has no answers
/// to wait for.
fn take_input(mut input: Box<dyn BufRead + Send>, s: &Session, asked: Asked, gone: &AtomicBool) {
    let mut buf = Vec::new();
    while !gone.load(Ordering::SeqCst) {
        let bytes = match read_bounded_line(&mut input, &mut buf, limits::MAX_LINE_BYTES) {
            Ok(Some(Ok(()))) => buf.as_slice(),
            Ok(Some(Err(_))) => continue,
            Ok(None) | Err(_) => break,
        };
        let Ok(msg) = serde_json::from_slice::<Value>(bytes) else {
            continue;
        };
        match msg["method"].as_str() {
            Some("pty/input") if asked.write => {
                if let Some(d) = msg["params"]["data"].as_str() {
                    if s.write(d.as_bytes()).is_err() {
                        break;
                    }
                }
            }
            Some("pty/resize") if asked.resize => {
                let p = &msg["params"];
                if let (Some(c), Some(r)) = (p["cols"].as_u64(), p["rows"].as_u64()) {
                    if let Ok((c, r)) = limits::check_size(c, r) {
                        let _ = ops::resize(s, c, r);
                    }
                }
            }
            Some("pty/detach") => break,
            _ => {}
        }
    }
    gone.store(true, Ordering::SeqCst);
    // Wake the frame loop so that it notices at once.
    s.poke();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pic(rows: &[&str]) -> Picture {
        Picture {
            cols: 10,
            rows: rows.iter().map(|r| r.to_string()).collect(),
            ..Picture::default()
        }
    }

    #[test]
    fn a_frame_carries_only_the_rows_that_changed() {
        let a = pic(&["one", "two", "three"]);
        let b = pic(&["one", "TWO", "three"]);
        assert!(frame(&a, &a).is_none());
        let f = frame(&a, &b).unwrap();
        assert_eq!(f["params"]["lines"], json!([[1, "TWO"]]));
        assert_eq!(f["params"]["full"], false);
        // A new size redraws everything.
        let c = pic(&["one", "TWO"]);
        let f = frame(&b, &c).unwrap();
        assert_eq!(f["params"]["full"], true);
        assert_eq!(f["params"]["lines"], json!([[0, "one"], [1, "TWO"]]));
    }
}
