//! The driver's methods, one function each, found by name in [`METHODS`].
//! The README's driver section and the man page list the same set and the
//! result shapes.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::json::json;

use serde_json::Value;

use super::params::{self, flag, ms, opt_str, opt_u64};
use super::{Driver, DriverError, Request};
use crate::keys::{self, MouseAction, MouseButton, MouseEvent};
use crate::limits;
use crate::manager;
use crate::ops::{self, Format, Input, Selection, Settle};
use crate::session::{Exit, Options, Reason, Session, Until};

type Handler = fn(&Driver, &Request) -> Result<Value, DriverError>;

/// Every method, by name.
const METHODS: &[(&str, Handler)] = &[
    ("launch", launch),
    ("status", status),
    ("send", send),
    ("mouse", mouse),
    ("waitForText", wait_for_text),
    ("waitForIdle", wait_for_idle),
    ("waitForExit", wait_for_exit),
    ("capture", capture),
    ("logs", logs),
    ("recording", recording),
    ("resize", resize),
    ("stop", stop),
    ("shutdown", shutdown),
];

/// The method's own name, if it is one.
pub fn find(name: &str) -> Option<&'static str> {
    METHODS.iter().find(|(n, _)| *n == name).map(|(n, _)| *n)
}

pub fn names() -> Vec<&'static str> {
    METHODS.iter().map(|(n, _)| *n).collect()
}

pub fn call(d: &Driver, req: &Request) -> Result<Value, DriverError> {
    match METHODS.iter().find(|(n, _)| *n == req.method) {
        Some((_, handler)) => handler(d, req),
        None => Err(DriverError::invalid(format!(
            "unknown method {:?}",
            req.method
        ))),
    }
}

// ---- shared pieces ----------------------------------------------------------

fn from_manager(e: manager::Error) -> DriverError {
    match e {
        manager::Error::Invalid(m) => DriverError::invalid(m),
        manager::Error::NoSession(n) => {
            DriverError::failed(format!("no session {n} (launch it first)"))
        }
        manager::Error::Running(n, _) => {
            DriverError::failed(format!("session {n} is already running (stop it first)"))
        }
        manager::Error::Exited => DriverError::failed(crate::session::EXITED),
        manager::Error::Failed(m) => DriverError::failed(m),
    }
}

/// A refusal by the core about this request's session, in seed 003's words
/// for an exited program (`session app has exited`).
fn refused(req: &Request, e: manager::Error) -> DriverError {
    match e {
        manager::Error::Exited => exited(req),
        e => from_manager(e),
    }
}

/// The session id; [`super::parse`] has made sure non-`shutdown` requests
/// carry one.
fn name(req: &Request) -> &str {
    req.session.as_deref().unwrap_or_default()
}

fn session(d: &Driver, req: &Request) -> Result<Arc<Session>, DriverError> {
    d.manager.get(name(req)).map_err(from_manager)
}

fn exited(req: &Request) -> DriverError {
    DriverError::failed(format!("session {} has exited", name(req)))
}

fn signal_json(n: i32) -> Value {
    ops::signal_name(n).map_or(json!(n), |name| json!(format!("SIG{name}")))
}

/// `exitCode` and `signal`: both null while running; a program killed by a
/// signal has a null exit code and the signal's name (`SIGTERM`).
fn exit_fields(exit: Option<Exit>) -> (Value, Value) {
    match exit {
        None => (Value::Null, Value::Null),
        Some(Exit::Code(c)) => (json!(c), Value::Null),
        Some(Exit::Signal(s)) => (Value::Null, signal_json(s)),
    }
}

fn exit_words(exit: Option<Exit>) -> String {
    match exit {
        Some(Exit::Code(c)) => format!("exit code {c}"),
        Some(Exit::Signal(s)) => match ops::signal_name(s) {
            Some(n) => format!("signal SIG{n}"),
            None => format!("signal {s}"),
        },
        None => "still running".into(),
    }
}

fn millis(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}

// ---- the methods ------------------------------------------------------------

fn launch(d: &Driver, req: &Request) -> Result<Value, DriverError> {
    let p = &req.params;
    let argv = match p.get("command") {
        None | Some(Value::Null) => {
            return Err(DriverError::invalid(
                "params.command is required (the program and its arguments, as an array)",
            ))
        }
        Some(v) => params::strings(v, "command")?,
    };
    if argv.first().map_or(true, |a| a.is_empty()) {
        return Err(DriverError::invalid(
            "params.command must name a program first",
        ));
    }
    if argv.iter().any(|a| a.contains('\0')) {
        return Err(DriverError::invalid("params.command must not contain NUL"));
    }
    let (cols, rows) = params::size(p, Some(limits::DEFAULT_COLS), Some(limits::DEFAULT_ROWS))?;
    let mut opts = Options::new(argv);
    opts.spawn.cols = cols;
    opts.spawn.rows = rows;
    opts.spawn.cwd = opt_str(p, "cwd")?.map(PathBuf::from);
    opts.spawn.clean_env = !params::opt_bool(p, "inheritEnv")?.unwrap_or(true);
    opts.spawn.env.extend(params::env(p, "env")?);
    let record = opt_str(p, "record")?;
    opts.record = record.map(PathBuf::from);
    // Checked after the shape, so that a malformed request is INVALID_REQUEST
    // whatever its host.
    match opt_str(p, "host")? {
        None | Some("none") => {}
        Some(h) => {
            return Err(DriverError::failed(format!(
                "launch host {h:?} is not supported by this driver (supported: \"none\"; \
                 it has no startup probes or semantic socket for {h:?})"
            )))
        }
    }
    let name = name(req);
    // The core's messages name what failed: the program (`cannot run
    // "x"`), its directory or the recording's file.
    let s = d.manager.start(name, &opts, false).map_err(from_manager)?;
    // `recording` is null when not recording, as `status` gives it.
    Ok(json!({"sessionId": name, "pid": s.pid(), "cols": cols, "rows": rows, "recording": record}))
}

fn status(d: &Driver, req: &Request) -> Result<Value, DriverError> {
    let s = session(d, req)?;
    let st = s.status();
    let (code, sig) = exit_fields(st.exit);
    let (title, alt) = s.with_screen(|scr| (scr.title().to_string(), scr.is_alt_screen()));
    Ok(json!({
        "sessionId": name(req),
        "running": st.running(),
        "pid": st.pid,
        "exitCode": code,
        "signal": sig,
        "command": s.argv(),
        "cols": st.cols,
        "rows": st.rows,
        "title": title,
        "altScreen": alt,
        "runningMs": millis(st.running_for),
        "quietMs": millis(st.quiet_for),
        "outputClosed": s.is_output_closed(),
        "recording": s.recording(),
    }))
}

/// One input item: `{type, value}`, as seed 003's `send` lists them.
fn input_item(v: &Value, i: usize) -> Result<Input, DriverError> {
    let bad = |m: &str| DriverError::invalid(format!("params.input[{i}]: {m}"));
    let Value::Object(o) = v else {
        return Err(bad("must be an object {type, value}"));
    };
    let Some(Value::String(kind)) = o.get("type") else {
        return Err(bad(
            "type is required: text, key, bytes or control (also paste)",
        ));
    };
    let value = o.get("value").ok_or_else(|| bad("value is required"))?;
    let string = || value.as_str().ok_or_else(|| bad("value must be a string"));
    match kind.as_str() {
        "text" => Ok(Input::Text(string()?.to_string())),
        "key" => {
            let k = string()?;
            // Validate now (the modes only change the bytes, never whether
            // a name is known), so a bad name is a bad request.
            keys::encode_key(k, &Default::default()).map_err(|e| bad(&e.to_string()))?;
            Ok(Input::Key(k.to_string()))
        }
        "paste" => Ok(Input::Paste(string()?.to_string())),
        "bytes" | "raw" => value
            .as_array()
            .and_then(|a| {
                a.iter()
                    .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                    .collect::<Option<Vec<u8>>>()
            })
            .map(Input::Raw)
            .ok_or_else(|| bad("value must be an array of byte values 0..255")),
        "control" | "ctrl" => {
            let s = string()?;
            let mut chars = s.chars();
            let (Some(c), None) = (chars.next(), chars.next()) else {
                return Err(bad("control input is a single letter (\"c\" sends Ctrl+C)"));
            };
            let b = keys::control_byte(c).map_err(|e| bad(&e.to_string()))?;
            Ok(Input::Raw(vec![b]))
        }
        other => Err(bad(&format!(
            "unknown type {other:?} (use text, key, bytes, control or paste)"
        ))),
    }
}

fn send(d: &Driver, req: &Request) -> Result<Value, DriverError> {
    let inputs = match req.params.get("input") {
        Some(Value::Array(a)) if !a.is_empty() => {
            let mut inputs = Vec::with_capacity(a.len());
            for (i, v) in a.iter().enumerate() {
                inputs.push(input_item(v, i)?);
            }
            inputs
        }
        Some(Value::Array(_)) => {
            return Err(DriverError::invalid("params.input must not be empty"))
        }
        None | Some(Value::Null) => {
            return Err(DriverError::invalid(
                "params.input is required: an array of {type, value} items",
            ))
        }
        Some(_) => {
            return Err(DriverError::invalid(
                "params.input must be an array of {type, value} items",
            ))
        }
    };
    let s = session(d, req)?;
    let written = ops::send(&s, &inputs).map_err(|e| refused(req, e))?;
    Ok(json!({ "written": written }))
}

fn mouse(d: &Driver, req: &Request) -> Result<Value, DriverError> {
    let p = &req.params;
    let action: MouseAction = opt_str(p, "action")?
        .ok_or_else(|| DriverError::invalid("params.action is required: move, down, up or click"))?
        .parse()
        .map_err(|e: keys::MouseError| DriverError::invalid(format!("params.action: {e}")))?;
    let button: MouseButton = opt_str(p, "button")?
        .unwrap_or("left")
        .parse()
        .map_err(|e: keys::MouseError| DriverError::invalid(format!("params.button: {e}")))?;
    let coord = |key: &str| -> Result<u64, DriverError> {
        opt_u64(p, key)?.ok_or_else(|| {
            DriverError::invalid(format!(
                "params.{key} is required: a zero-based cell (non-negative integer)"
            ))
        })
    };
    let (x, y) = (coord("x")?, coord("y")?);
    let s = session(d, req)?;
    let (Ok(x), Ok(y)) = (u16::try_from(x), u16::try_from(y)) else {
        let (cols, rows) = s.with_screen(|scr| (scr.cols(), scr.rows()));
        return Err(DriverError::failed(format!(
            "cell x={x} y={y} is outside the {cols}x{rows} viewport"
        )));
    };
    let ev = MouseEvent {
        action,
        x,
        y,
        button,
        shift: flag(p, "shift")?,
        alt: flag(p, "alt")?,
        ctrl: flag(p, "ctrl")?,
    };
    ops::mouse(&s, &ev).map_err(|e| refused(req, e))?;
    Ok(Value::Null)
}

fn wait_for_text(d: &Driver, req: &Request) -> Result<Value, DriverError> {
    let p = &req.params;
    let text = opt_str(p, "text")?;
    let regex = match opt_str(p, "regex")? {
        Some(r) => Some(
            ops::screen_regex(r).map_err(|e| DriverError::invalid(format!("params.regex: {e}")))?,
        ),
        None => None,
    };
    let what = match (text, &regex) {
        (Some(t), None) => format!("text {t:?}"),
        (None, Some(r)) => format!("regex /{}/", r.as_str()),
        _ => {
            return Err(DriverError::invalid(
                "give exactly one of params.text and params.regex",
            ))
        }
    };
    let timeout = ms(p, "timeoutMs", limits::DEFAULT_WAIT)?;
    let s = session(d, req)?;
    let until = Until {
        text: text.map(str::to_string),
        regex: regex.clone(),
        exit: true,
        ..Until::default()
    };
    let (reason, waited) = s.wait(&until, timeout);
    match reason {
        Reason::Matched => {
            // The text searched for, or the regex's match (looked up again:
            // the screen may have moved on, then `null`).
            let found = match (&regex, text) {
                (Some(r), _) => {
                    s.with_screen(|screen| crate::session::screen_match(screen, None, Some(r)))
                }
                (None, t) => t.map(str::to_string),
            };
            Ok(json!({"matched": found, "elapsedMs": millis(waited)}))
        }
        Reason::Exited => Err(DriverError::failed(format!(
            "session {} exited ({}) before {what} appeared",
            name(req),
            exit_words(s.status().exit)
        ))),
        _ => Err(DriverError::failed(format!(
            "{what} did not appear in session {} within {} ms",
            name(req),
            timeout.as_millis()
        ))),
    }
}

/// Seed 003's completion reason for a settle that ended with `reason`.
fn completion(s: &Session, reason: Reason) -> &'static str {
    match reason {
        Reason::Exited => "exited",
        _ if s.is_output_closed() && s.status().running() => "outputclosed",
        Reason::Idle | Reason::Quiet | Reason::Matched => "idle",
        Reason::Timeout => "deadline",
    }
}

fn wait_for_idle(d: &Driver, req: &Request) -> Result<Value, DriverError> {
    let p = &req.params;
    let how = Settle {
        quiet: ms(p, "settleMs", limits::DEFAULT_QUIET)?,
        max_wait: ms(p, "timeoutMs", limits::DEFAULT_WAIT)?,
        quiet_only: false,
        silence_is_enough: true,
    };
    let s = session(d, req)?;
    let (reason, waited) = ops::settle(&s, how);
    match completion(&s, reason) {
        "deadline" => Err(DriverError::failed(format!(
            "session {} did not become idle within {} ms",
            name(req),
            how.max_wait.as_millis()
        ))),
        r => Ok(json!({"reason": r, "elapsedMs": millis(waited)})),
    }
}

fn wait_for_exit(d: &Driver, req: &Request) -> Result<Value, DriverError> {
    let timeout = ms(&req.params, "timeoutMs", limits::DEFAULT_WAIT)?;
    let s = session(d, req)?;
    let until = Until {
        exit: true,
        ..Until::default()
    };
    let (reason, waited) = s.wait(&until, timeout);
    if reason != Reason::Exited {
        return Err(DriverError::failed(format!(
            "session {} is still running after {} ms",
            name(req),
            timeout.as_millis()
        )));
    }
    let (code, sig) = exit_fields(s.status().exit);
    Ok(json!({"exitCode": code, "signal": sig, "elapsedMs": millis(waited)}))
}

fn capture(d: &Driver, req: &Request) -> Result<Value, DriverError> {
    let p = &req.params;
    let how = Settle {
        quiet: ms(p, "settleMs", limits::DEFAULT_QUIET)?,
        max_wait: ms(p, "deadlineMs", limits::DEFAULT_WAIT)?,
        quiet_only: false,
        silence_is_enough: true,
    };
    let (ansi, svg) = (flag(p, "includeAnsi")?, flag(p, "includeSvg")?);
    let s = session(d, req)?;
    let (reason, waited) = ops::settle(&s, how);
    let reason = completion(&s, reason);
    let (frame, picture) = s.with_screen(|scr| {
        (
            crate::frame::frame_json(scr),
            svg.then(|| crate::frame::svg(scr)),
        )
    });
    let text = ops::screen(&s, Selection::All, Format::Text, false).text;
    let mut out = json!({
        "reason": reason,
        "elapsedMs": millis(waited),
        "frame": frame,
        "text": text,
    });
    if ansi {
        let chunk = s.output(0, usize::MAX);
        out["ansi"] = json!(String::from_utf8_lossy(&chunk.data));
        out["ansiOffset"] = json!(chunk.start);
    }
    if let Some(svg) = picture {
        out["svg"] = json!(svg);
    }
    Ok(out)
}

fn logs(d: &Driver, req: &Request) -> Result<Value, DriverError> {
    let max = opt_u64(&req.params, "maxLines")?;
    let s = session(d, req)?;
    let mut text = ops::history_text(&s);
    if let Some(n) = max {
        text = crate::text::tail_lines(&text, usize::try_from(n).unwrap_or(usize::MAX));
    }
    Ok(json!({"text": text, "lines": text.lines().count()}))
}

fn recording(d: &Driver, req: &Request) -> Result<Value, DriverError> {
    let p = &req.params;
    let path = opt_str(p, "path")?;
    // `action` may be left out: a path starts, no path stops.
    let action = opt_str(p, "action")?.unwrap_or(if path.is_some() { "start" } else { "stop" });
    let label = opt_str(p, "label")?;
    let failed = |e: std::io::Error| DriverError::failed(format!("recording failed: {e}"));
    match action {
        "start" => {
            let path = path.ok_or_else(|| {
                DriverError::invalid("params.path is required to start a recording")
            })?;
            let s = session(d, req)?;
            s.start_recording(std::path::Path::new(path))
                .map_err(|e| DriverError::failed(e.to_string()))?;
            Ok(json!({"path": path}))
        }
        "stop" => match session(d, req)?.stop_recording().map_err(failed)? {
            Some((path, events)) => Ok(json!({"path": path, "events": events})),
            None => Err(DriverError::failed(format!(
                "session {} is not recording (start a recording first)",
                name(req)
            ))),
        },
        "marker" => {
            if session(d, req)?
                .record_marker(label.unwrap_or(""))
                .map_err(failed)?
            {
                Ok(Value::Null)
            } else {
                Err(DriverError::failed(format!(
                    "session {} is not recording (start a recording first)",
                    name(req)
                )))
            }
        }
        a => Err(DriverError::invalid(format!(
            "params.action {a:?} is not one of start, stop, marker"
        ))),
    }
}

fn resize(d: &Driver, req: &Request) -> Result<Value, DriverError> {
    let (cols, rows) = params::size(&req.params, None, None)?;
    let s = session(d, req)?;
    ops::resize(&s, cols, rows).map_err(|e| refused(req, e))?;
    Ok(json!({"cols": cols, "rows": rows}))
}

fn stop(d: &Driver, req: &Request) -> Result<Value, DriverError> {
    let force = flag(&req.params, "force")?;
    let s = d.manager.stop(name(req), force).map_err(from_manager)?;
    // Finish a recording so that the file is complete when we answer.
    let _ = s.stop_recording();
    let (code, sig) = exit_fields(s.status().exit);
    Ok(json!({"sessionId": name(req), "exitCode": code, "signal": sig}))
}

fn shutdown(d: &Driver, req: &Request) -> Result<Value, DriverError> {
    // The answers of requests waiting on those sessions go out first: the
    // shutdown answer is the last line.
    let stopped = d.close(true, 1);
    d.exit_after(Some((req, json!({ "stopped": stopped }))))
}
