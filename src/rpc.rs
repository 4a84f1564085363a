//! JSON-RPC 2.0 (seed 000): the method table over [`crate::jsonrpc`]'s
//! framing and error codes (re-exported here). Each
//! method is one function below, found by name in [`METHODS`]; each is a thin
//! translation onto [`crate::ops`] and [`crate::session`].

use std::time::Duration;

use crate::json::json;

use serde_json::Value;

use crate::jsonrpc::{self, Params};
use crate::limits;
use crate::manager::{self, Manager};
use crate::ops::{self, Format, Input, Selection, Settle, View};
use crate::params::{self, ParamError};
use crate::session::{Cancel, Exit, Options, Reason, Session, SettleSpec, Status, Until};

pub use crate::jsonrpc::{
    INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, SERVER_ERROR,
};

/// A method's failure, in [`jsonrpc`]'s one shape.
pub type RpcError = jsonrpc::Error;

impl From<manager::Error> for RpcError {
    fn from(e: manager::Error) -> RpcError {
        let code = match e {
            manager::Error::Invalid(_) => INVALID_PARAMS,
            _ => SERVER_ERROR,
        };
        RpcError::new(code, e.to_string())
    }
}

/// Where the methods run.
pub struct Ctx<'a> {
    pub manager: &'a Manager,
    /// `serve` mode: one session, and `pty/kill` ends the process.
    pub serve: bool,
    /// The client's socket: a `pty/wait` ends early once the client has
    /// hung up, rather than hold its thread and connection for up to
    /// [`limits::MAX_WAIT`] for nobody.
    pub peer: Option<std::os::fd::BorrowedFd<'a>>,
}

/// What the connection does after answering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    Continue,
    /// Close this connection (and, in serve mode, exit the process).
    Exit,
}

type Handler = fn(&Ctx, &Params) -> Result<Value, RpcError>;

/// Every method, by name. The README and man page list the same set.
pub const METHODS: &[(&str, Handler)] = &[
    ("pty/read", read),
    ("pty/write", write),
    ("pty/wait", wait),
    ("pty/status", status),
    ("pty/resize", resize),
    ("pty/kill", kill),
    ("pty/start", start),
    ("pty/step", step),
    ("pty/output", output),
    ("pty/signal", signal),
    ("pty/stop", stop),
    ("pty/list", list),
    ("pty/record", record),
];

/// The methods that only read state and never wait. The daemon's accept
/// loop answers a new connection's first request itself when it asks for
/// one of these (see `server::answer_first_here`).
pub const QUICK: &[&str] = &["pty/read", "pty/status", "pty/list"];

/// [`answer`] for one request whose method is in [`QUICK`]; `None`, having
/// done nothing, for anything else (another method, a batch, a line that is
/// not a request): the connection's thread answers those.
pub fn answer_quick(line: &[u8], ctx: &Ctx) -> Option<String> {
    let Ok(Some(Ok(req))) = jsonrpc::decode(Ok(line)).map(|f| f.map(request)) else {
        return None;
    };
    if !QUICK.contains(&req.method.as_str()) {
        return None;
    }
    let (_, handler) = METHODS.iter().find(|(name, _)| *name == req.method)?;
    Some(response(&req.id, handler(ctx, &req.params)))
}

/// The response envelope for `id`, as a line.
pub fn response(id: &Value, result: Result<Value, RpcError>) -> String {
    jsonrpc::response(id, result).to_string()
}

/// A parsed request: its id, method and params.
pub struct Request {
    pub id: Value,
    pub method: String,
    pub params: Params,
}

/// Read a [`jsonrpc::Frame`] as seed 000 takes it: one request, with an id.
fn request(frame: jsonrpc::Frame) -> Result<Request, jsonrpc::Refusal> {
    let refuse = |why: &str| jsonrpc::Refusal {
        id: Value::Null,
        error: RpcError::invalid_request(why),
    };
    let jsonrpc::Frame::One(msg) = frame else {
        return Err(refuse("batches are not supported; send one request a line"));
    };
    match jsonrpc::message(msg)? {
        jsonrpc::Message::Request { id, method, params } => Ok(Request { id, method, params }),
        jsonrpc::Message::Notification { .. } => {
            Err(refuse("missing id (notifications are not supported)"))
        }
        jsonrpc::Message::Response => Err(refuse(
            "method must be a string (this server sends no requests to answer)",
        )),
    }
}

/// Check a line's envelope. On failure returns the error response to send.
pub fn parse(line: &str) -> Result<Request, String> {
    let frame = match jsonrpc::decode(Ok(line.as_bytes())) {
        Ok(Some(frame)) => frame,
        Ok(None) => {
            return Err(response(
                &Value::Null,
                Err(RpcError::invalid_request("empty line")),
            ))
        }
        Err(e) => return Err(response(&Value::Null, Err(e))),
    };
    request(frame).map_err(|r| response(&r.id, Err(r.error)))
}

/// The method that turns a connection into a live view (see
/// [`crate::attach`]); not in [`METHODS`], since it answers more than once.
pub const ATTACH: &str = "pty/attach";

/// An accepted `pty/attach`: the session, what the viewer asked for and
/// the answer to send first.
pub type Attached = (std::sync::Arc<Session>, crate::attach::Asked, String);

/// A `pty/attach` request on `line`: `None` for any other line; else what
/// [`Attached`] holds, or the error response.
pub fn attach(line: &[u8], ctx: &Ctx) -> Option<Result<Attached, String>> {
    if !line.windows(ATTACH.len()).any(|w| w == ATTACH.as_bytes()) {
        return None;
    }
    let req = match jsonrpc::decode(Ok(line)).map(|f| f.map(request)) {
        Ok(Some(Ok(req))) if req.method == ATTACH => req,
        _ => return None,
    };
    let fail = |e: RpcError| Some(Err(response(&req.id, Err(e))));
    let name = match session_name(&req.params) {
        Ok(n) => n,
        Err(e) => return fail(e),
    };
    let s = match ctx.manager.get(name) {
        Ok(s) => s,
        Err(e) => return fail(e.into()),
    };
    let asked = match crate::attach::Asked::from_params(&req.params) {
        Ok(a) => a,
        Err(m) => return fail(RpcError::params(m)),
    };
    let st = s.status();
    let (viewers, typists) = s.viewers();
    let answer = json!({
        "session": name,
        "size": {"cols": st.cols, "rows": st.rows},
        "write": asked.write,
        "resize": asked.resize,
        "viewers": viewers + 1,
        "viewerInput": typists > 0 || asked.write,
    });
    Some(Ok((s, asked, response(&req.id, Ok(answer)))))
}

/// Answer one line as [`crate::lines::read_bounded_line`] read it
/// (`Err(len)`: too long); `None` for a blank line. Every failure is a
/// JSON-RPC error response and the connection goes on.
pub fn answer(line: Result<&[u8], usize>, ctx: &Ctx) -> Option<(String, After)> {
    let req = match jsonrpc::decode(line).map(|f| f.map(request)) {
        Ok(None) => return None,
        Ok(Some(Ok(req))) => req,
        Ok(Some(Err(r))) => return Some((response(&r.id, Err(r.error)), After::Continue)),
        Err(e) => return Some((response(&Value::Null, Err(e)), After::Continue)),
    };
    let Some((_, handler)) = METHODS.iter().find(|(name, _)| *name == req.method) else {
        let e = RpcError::new(
            METHOD_NOT_FOUND,
            format!("Method not found: {}", req.method),
        );
        return Some((response(&req.id, Err(e)), After::Continue));
    };
    let result = handler(ctx, &req.params);
    let after = if ctx.serve && req.method == "pty/kill" && result.is_ok() {
        After::Exit
    } else {
        After::Continue
    };
    Some((response(&req.id, result), after))
}

// ---- parameter helpers ------------------------------------------------------

/// A parameter of the wrong type, as seed 000's invalid params.
fn invalid(e: ParamError) -> RpcError {
    RpcError::params(e.to_string())
}

fn opt_u64(p: &Params, key: &str) -> Result<Option<u64>, RpcError> {
    params::u64_param(p, key).map_err(invalid)
}

fn opt_str<'a>(p: &'a Params, key: &str) -> Result<Option<&'a str>, RpcError> {
    params::str_param(p, key).map_err(invalid)
}

fn opt_bool(p: &Params, key: &str) -> Result<Option<bool>, RpcError> {
    params::bool_param(p, key).map_err(invalid)
}

fn opt_ms(p: &Params, key: &str) -> Result<Option<Duration>, RpcError> {
    Ok(opt_u64(p, key)?.map(|ms| Duration::from_millis(ms).min(limits::MAX_WAIT)))
}

fn session_name(p: &Params) -> Result<&str, RpcError> {
    Ok(opt_str(p, "session")?.unwrap_or("default"))
}

fn session(ctx: &Ctx, p: &Params) -> Result<std::sync::Arc<Session>, RpcError> {
    Ok(ctx.manager.get(session_name(p)?)?)
}

fn size_params(p: &Params, cols: u16, rows: u16) -> Result<(u16, u16), RpcError> {
    let c = opt_u64(p, "cols")?.unwrap_or(u64::from(cols));
    let r = opt_u64(p, "rows")?.unwrap_or(u64::from(rows));
    limits::check_size(c, r).map_err(RpcError::params)
}

// ---- shared result shapes ---------------------------------------------------

pub fn exit_fields(exit: Option<Exit>) -> (Value, Value) {
    match exit {
        None => (Value::Null, Value::Null),
        Some(Exit::Code(c)) => (json!(c), Value::Null),
        Some(e @ Exit::Signal(s)) => (json!(e.code()), json!(s)),
    }
}

/// The status object shared by `pty/status`, `pty/step` and `pty/list`.
pub fn status_json(name: &str, s: &Session, st: &Status) -> Value {
    status_json_as(name, s, st, None)
}

/// [`status_json`] with what the kernel said already known (a wait that just
/// settled): a fresh probe could meet a helper thread awake and contradict it.
pub fn status_json_as(
    name: &str,
    s: &Session,
    st: &Status,
    known: Option<crate::settle::Activity>,
) -> Value {
    let (code, sig) = exit_fields(st.exit);
    let (title, alt) = s.with_screen(|scr| (scr.title().to_string(), scr.is_alt_screen()));
    let activity = if let Some(a) = known.filter(|_| st.running()) {
        a
    } else if st.running() {
        s.activity()
    } else {
        crate::settle::Activity::Unknown("exited".into())
    };
    json!({
        "running": st.running(),
        "waitingForInput": activity.waiting(),
        "activity": activity.to_string(),
        "exitCode": code,
        "signal": sig,
        "pid": st.pid,
        "session": name,
        "command": s.argv(),
        "cwd": s.cwd(),
        "runningMs": st.running_for.as_millis() as u64,
        "quietMs": st.quiet_for.as_millis() as u64,
        "size": {"cols": st.cols, "rows": st.rows},
        "title": title,
        "altScreen": alt,
        "viewers": s.viewers().0,
        "viewerInput": s.viewers().1 > 0,
        "buffered": st.buffered,
        "outputEnd": st.output_end,
    })
}

fn view_json(v: &ops::ScreenView) -> Value {
    let mut out = json!({
        "screen": v.text,
        "cursor": crate::frame::cursor_json_from_1(v.cursor),
        "size": {"cols": v.cols, "rows": v.rows},
        "title": v.title,
        "altScreen": v.alt_screen,
    });
    if let Some(f) = &v.frame {
        out["frame"] = f.clone();
    }
    out
}

// ---- the methods ------------------------------------------------------------

/// The output cap a caller asked for (`maxBytes`, `head`, `tail`; see
/// [`crate::text::Cap`]): none unless asked, as the seed has none.
fn cap_param(p: &Params) -> Result<Option<crate::text::Cap>, RpcError> {
    let n =
        |key| Ok::<_, RpcError>(opt_u64(p, key)?.map(|v| usize::try_from(v).unwrap_or(usize::MAX)));
    let (max, head, tail) = (n("maxBytes")?, n("head")?, n("tail")?);
    if max.is_none() && head.is_none() && tail.is_none() {
        return Ok(None);
    }
    Ok(Some(crate::text::Cap {
        head,
        tail,
        max_bytes: max.unwrap_or(limits::OUTPUT_CAP_BYTES),
    }))
}

/// Cap `text` per the caller's `maxBytes`/`head`/`tail` and say in `out`
/// (as `omitted`) what was left out and how to read it.
fn apply_cap(
    p: &Params,
    text: &mut String,
    source: Option<ops::Source>,
    out: &mut Value,
) -> Result<(), RpcError> {
    let Some(cap) = cap_param(p)? else {
        return Ok(());
    };
    if let Some(o) = ops::cap_text(text, cap, source) {
        let mut v = json!({
            "lines": o.lines,
            "bytes": o.bytes,
            "at": o.at,
            "start": o.start,
            "end": o.end,
        });
        match o.source {
            Some(ops::Source::Output { from, to, raw, .. }) => {
                v["output"] =
                    json!({"offset": from, "to": to, "view": if raw { "raw" } else { "lines" }});
            }
            Some(ops::Source::Screen { history, ansi, .. }) => {
                v["screen"] =
                    json!({"history": history, "format": if ansi { "ansi" } else { "text" }});
            }
            None => {}
        }
        out["omitted"] = v;
    }
    Ok(())
}

fn selection(p: &Params) -> Result<Selection, RpcError> {
    if let Some(n) = opt_u64(p, "last")? {
        if ["top", "bottom", "start", "end"]
            .iter()
            .any(|k| p.contains_key(*k))
        {
            return Err(RpcError::params(
                "last cannot be mixed with top, bottom, start or end",
            ));
        }
        return Ok(Selection::Last(n as usize));
    }
    let top = opt_u64(p, "top")?;
    let bottom = opt_u64(p, "bottom")?;
    let start = opt_u64(p, "start")?;
    let end = opt_u64(p, "end")?;
    let edge = top.is_some() || bottom.is_some();
    let range = start.is_some() || end.is_some();
    if edge && range {
        return Err(RpcError::params("top/bottom and start/end cannot be mixed"));
    }
    match (top, bottom, start, end) {
        (Some(_), Some(_), _, _) => Err(RpcError::params("top and bottom are mutually exclusive")),
        (Some(t), None, _, _) => Ok(Selection::Top(t as usize)),
        (None, Some(b), _, _) => Ok(Selection::Bottom(b as usize)),
        (None, None, Some(s), Some(e)) => Ok(Selection::Range(s as usize, e as usize)),
        (None, None, Some(_), None) | (None, None, None, Some(_)) => {
            Err(RpcError::params("start and end must be given together"))
        }
        (None, None, None, None) => Ok(Selection::All),
    }
}

fn format_param(p: &Params) -> Result<Format, RpcError> {
    match opt_str(p, "format")? {
        None | Some("text") => Ok(Format::Text),
        Some("ansi") => Ok(Format::Ansi),
        Some("json") => Ok(Format::Json),
        Some(f) => Err(RpcError::params(format!(
            "unknown format {f:?} (use \"text\", \"ansi\" or \"json\")"
        ))),
    }
}

fn read(ctx: &Ctx, p: &Params) -> Result<Value, RpcError> {
    let s = session(ctx, p)?;
    let sel = selection(p)?;
    let history = opt_bool(p, "history")?.unwrap_or(false);
    let format = format_param(p)?;
    let changed = opt_bool(p, "changed")?.unwrap_or(false);
    let whole = sel == Selection::All && format == Format::Text && !history;
    if changed && !whole {
        return Err(RpcError::params(
            "changed compares whole screens: it takes no rows, history or format",
        ));
    }
    let mut view = ops::screen(&s, sel, format, history);
    let mut source = Some(ops::Source::Screen {
        first: view.first,
        history,
        ansi: format == Format::Ansi,
    });
    if whole {
        // Shown to the caller: what the next `changed` compares with.
        let c = ops::screen_changes(&s);
        if changed {
            view.text = c.render();
            source = source.filter(|_| c.whole);
        }
    }
    let mut text = std::mem::take(&mut view.text);
    let mut out = json!({});
    apply_cap(p, &mut text, source, &mut out)?;
    view.text = text;
    let mut v = view_json(&view);
    if let Some(o) = out.get("omitted") {
        v["omitted"] = o.clone();
    }
    Ok(v)
}

/// One action object of `pty/write` (seed 000), plus `raw` bytes and `paste`.
fn action(v: &Value) -> Result<Input, RpcError> {
    let Value::Object(o) = v else {
        return Err(RpcError::params("each action must be an object"));
    };
    if let Some(k) = o
        .keys()
        .find(|k| !["text", "key", "raw", "paste"].contains(&k.as_str()))
    {
        return Err(RpcError::params(format!(
            "unknown action field {k:?} (use text, key, raw or paste)"
        )));
    }
    match (o.len(), o.iter().next()) {
        (0, _) => Err(RpcError::params(
            "an action must not be empty: give text or key",
        )),
        (1, Some((k, v))) => match (k.as_str(), v) {
            ("text", Value::String(t)) => Ok(Input::Text(t.clone())),
            ("key", Value::String(t)) => Ok(Input::Key(t.clone())),
            ("paste", Value::String(t)) => Ok(Input::Paste(t.clone())),
            ("raw", Value::Array(a)) => a
                .iter()
                .map(|b| b.as_u64().filter(|b| *b < 256).map(|b| b as u8))
                .collect::<Option<Vec<u8>>>()
                .map(Input::Raw)
                .ok_or_else(|| RpcError::params("raw must be an array of bytes (0-255)")),
            ("raw", _) => Err(RpcError::params("raw must be an array of bytes (0-255)")),
            (k, _) => Err(RpcError::params(format!("{k} must be a string"))),
        },
        _ if o.contains_key("text") && o.contains_key("key") => Err(RpcError::params(
            "text and key are mutually exclusive within one action",
        )),
        _ => Err(RpcError::params(
            "an action holds exactly one of text, key, raw or paste",
        )),
    }
}

fn actions(p: &Params) -> Result<Vec<Input>, RpcError> {
    match p.get("action") {
        None | Some(Value::Null) => Err(RpcError::params("action is required")),
        Some(Value::Array(a)) if a.is_empty() => {
            Err(RpcError::params("action must not be an empty array"))
        }
        Some(Value::Array(a)) => a.iter().map(action).collect(),
        Some(v) => Ok(vec![action(v)?]),
    }
}

fn write(ctx: &Ctx, p: &Params) -> Result<Value, RpcError> {
    let inputs = actions(p)?;
    let s = session(ctx, p)?;
    let written = ops::send(&s, &inputs)?;
    Ok(json!({ "written": written }))
}

fn wait(ctx: &Ctx, p: &Params) -> Result<Value, RpcError> {
    let name = session_name(p)?;
    let s = ctx.manager.get(name)?;
    // The output since the read mark comes with the answer when asked: a
    // session stopped or killed while this waited is gone from the table by
    // the time a client could ask for it separately.
    let with_output = opt_bool(p, "output")?.unwrap_or(false);
    let raw = opt_bool(p, "raw")?.unwrap_or(false);
    let view = view_param(p)?;
    let mut text = opt_str(p, "match")?.map(str::to_string);
    let mut regex = match opt_str(p, "regex")? {
        Some(r) => Some(
            ops::screen_regex(r).map_err(|e| RpcError::params(format!("invalid regex: {e}")))?,
        ),
        None => None,
    };
    // Seed 000's match looks at the screen; `matchOutput` looks at the
    // output since the read mark instead (what the caller has not read).
    let mut output_text = None;
    if opt_bool(p, "matchOutput")?.unwrap_or(false) {
        if text.is_some() && regex.is_some() {
            return Err(RpcError::params(
                "with matchOutput, give match or regex, not both",
            ));
        }
        let re = match text.take() {
            Some(t) => ops::literal_regex(&t)
                .map_err(|e| RpcError::params(format!("match is too long: {e}")))?,
            None => regex
                .take()
                .ok_or_else(|| RpcError::params("matchOutput needs match or regex"))?,
        };
        output_text = Some(ops::unread_output(&s, re));
    }
    let quiet = opt_ms(p, "quiet")?;
    let idle = opt_bool(p, "idle")?.unwrap_or(false);
    let quiet_only = opt_bool(p, "quietOnly")?.unwrap_or(false);
    let exit = opt_bool(p, "exit")?.unwrap_or(false);
    let timeout = opt_ms(p, "timeout")?.unwrap_or(limits::DEFAULT_WAIT);
    let until = Until {
        text,
        regex,
        output_text,
        exit: exit || idle,
        // With `idle`, `quiet` is the settle fallback; alone, a plain window.
        quiet: if idle { None } else { quiet },
        settle: idle.then(|| SettleSpec {
            fallback: quiet.unwrap_or(limits::DEFAULT_QUIET),
            kernel: !quiet_only,
        }),
        ..Until::default()
    };
    let until = Until {
        cancel: ctx.peer.and_then(Cancel::hangup),
        ..until
    };
    let (reason, waited) = s.wait(&until, timeout);
    let mut v = view_json(&ops::screen(&s, Selection::All, Format::Text, false));
    v["matched"] = json!(reason == Reason::Matched);
    v["reason"] = json!(reason.as_str());
    v["waitedMs"] = json!(waited.as_millis() as u64);
    if with_output {
        // As `pty/step` shows it: lines as the terminal shows them, or the
        // screen of a full-screen program; capped the same way, so that what
        // a cap leaves out reads back the same (see `ops::output_text`).
        let r = ops::collect(&s, reason, waited, raw, view);
        let mut text = r.output;
        apply_cap(p, &mut text, r.source, &mut v)?;
        v["output"] = json!(text);
        v["view"] = json!(if r.is_screen { "screen" } else { "stream" });
        v["dropped"] = json!(r.dropped);
        if let Some(c) = cut_json(r.cut_line, raw) {
            v["cut"] = c;
        }
    }
    v["status"] = status_json(name, &s, &s.status());
    Ok(v)
}

fn status(ctx: &Ctx, p: &Params) -> Result<Value, RpcError> {
    let name = session_name(p)?;
    let s = ctx.manager.get(name)?;
    Ok(status_json(name, &s, &s.status()))
}

fn resize(ctx: &Ctx, p: &Params) -> Result<Value, RpcError> {
    // `null` is a field left out (see `params`), not a size of 0.
    let given = |k: &str| p.get(k).is_some_and(|v| !v.is_null());
    if !given("cols") || !given("rows") {
        return Err(RpcError::params("cols and rows are required"));
    }
    let (cols, rows) = size_params(p, 0, 0)?;
    let s = session(ctx, p)?;
    ops::resize(&s, cols, rows)?;
    Ok(json!({}))
}

fn kill(ctx: &Ctx, p: &Params) -> Result<Value, RpcError> {
    let name = session_name(p)?;
    if ctx.serve {
        // Seed 000: after pty/kill the session is terminated and the process
        // exits, whatever became of its program (exited, or stopped).
        ctx.manager.shutdown();
        return Ok(json!({}));
    }
    ctx.manager.stop(name, true)?;
    Ok(json!({}))
}

fn string_list(v: &Value, what: &str) -> Result<Vec<String>, RpcError> {
    params::strings_of(v, what).map_err(invalid)
}

fn start(ctx: &Ctx, p: &Params) -> Result<Value, RpcError> {
    if ctx.serve {
        // A client of seed 000's serve talks to the one program it was
        // started with, from the first request to pty/kill.
        return Err(RpcError::new(
            SERVER_ERROR,
            "serve hosts one program (its --cmd) until pty/kill; start more programs in the daemon (`ptybroker start`, or its socket)",
        ));
    }
    let name = session_name(p)?;
    let argv = match (p.get("argv"), opt_str(p, "cmd")?) {
        (Some(_), Some(_)) => return Err(RpcError::params("give argv or cmd, not both")),
        (Some(v), None) => string_list(v, "argv")?,
        (None, Some(c)) if c.trim().is_empty() => {
            return Err(RpcError::params("cmd must name a program"))
        }
        (None, Some(c)) => crate::session::shell_argv(c),
        (None, None) => return Err(RpcError::params("argv (or cmd) is required")),
    };
    if argv.is_empty() || argv[0].is_empty() {
        return Err(RpcError::params("argv must name a program"));
    }
    let mut opts = Options::new(argv);
    let (cols, rows) = size_params(p, limits::DEFAULT_COLS, limits::DEFAULT_ROWS)?;
    opts.spawn.cols = cols;
    opts.spawn.rows = rows;
    opts.spawn.cwd = opt_str(p, "cwd")?.map(Into::into);
    opts.spawn.clean_env = opt_bool(p, "cleanEnv")?.unwrap_or(false);
    opts.term = opt_str(p, "term")?.map(str::to_string);
    opts.spawn
        .env
        .extend(params::env(p, "env").map_err(invalid)?.unwrap_or_default());
    let replace = opt_bool(p, "replace")?.unwrap_or(false);
    let s = ctx.manager.start(name, &opts, replace)?;
    Ok(json!({"session": name, "pid": s.pid(), "size": {"cols": cols, "rows": rows}}))
}

fn view_param(p: &Params) -> Result<View, RpcError> {
    match opt_str(p, "view")? {
        None | Some("auto") => Ok(View::Auto),
        Some("screen") => Ok(View::Screen),
        Some("stream") => Ok(View::Stream),
        Some(v) => Err(RpcError::params(format!(
            "unknown view {v:?} (use auto, screen or stream)"
        ))),
    }
}

fn step(ctx: &Ctx, p: &Params) -> Result<Value, RpcError> {
    let name = session_name(p)?;
    let s = ctx.manager.get(name)?;
    let how = Settle {
        quiet: opt_ms(p, "timeout")?.unwrap_or(limits::DEFAULT_QUIET),
        max_wait: opt_ms(p, "maxWait")?.unwrap_or(limits::STEP_MAX_WAIT),
        quiet_only: opt_bool(p, "quietOnly")?.unwrap_or(false),
        silence_is_enough: false,
    };
    let changed = opt_bool(p, "changed")?.unwrap_or(false);
    cap_param(p)?;
    let input = match (
        opt_str(p, "text")?,
        p.get("action").filter(|a| !a.is_null()),
    ) {
        (Some(_), Some(_)) => return Err(RpcError::params("give text or action, not both")),
        (Some(t), None) => ops::step_line(t),
        (None, Some(_)) => actions(p)?,
        (None, None) => Vec::new(),
    };
    let mut r = ops::step(
        &s,
        &input,
        how,
        (opt_bool(p, "raw")?.unwrap_or(false), view_param(p)?),
        ctx.peer.and_then(Cancel::hangup),
    )?;
    ops::step_changes(&s, &mut r, changed);
    let mut omitted = json!({});
    apply_cap(p, &mut r.output, r.source, &mut omitted)?;
    let cut = cut_json(r.cut_line, opt_bool(p, "raw")?.unwrap_or(false));
    let mut v = json!({
        "output": r.output,
        "view": if r.is_screen { "screen" } else { "stream" },
        "reason": r.reason.as_str(),
        "waitedMs": r.waited.as_millis() as u64,
        "dropped": r.dropped,
        "status": status_json_as(
            name,
            &s,
            &r.status,
            (r.reason == Reason::Idle).then(|| settled_activity(&s))
        ),
    });
    if let Some(o) = omitted.get("omitted") {
        v["omitted"] = o.clone();
    }
    if let Some(c) = cut {
        v["cut"] = c;
    }
    Ok(v)
}

/// `cut` of a step's or wait's result: the rest of the line the ring's
/// drop cut, left out of `output` and still held, as `pty/output` reads it
/// (`offset`, `to`, `view`; see [`ops::StepResult::cut_line`]).
fn cut_json(cut_line: Option<(u64, u64)>, raw: bool) -> Option<Value> {
    let (from, to) = cut_line?;
    Some(json!({
        "offset": from,
        "to": to,
        "bytes": to - from,
        "view": if raw { "raw" } else { "lines" },
    }))
}

/// What a step that settled says it settled on: a relay settles on quiet
/// and says so; anything else settled because it waits for input.
fn settled_activity(s: &Session) -> crate::settle::Activity {
    match s.activity() {
        relay @ crate::settle::Activity::Relay(_) => relay,
        _ => crate::settle::Activity::Waiting,
    }
}

fn output(ctx: &Ctx, p: &Params) -> Result<Value, RpcError> {
    let s = session(ctx, p)?;
    if let Some(to) = opt_u64(p, "to")? {
        return output_range(p, &s, to);
    }
    let max = opt_u64(p, "max")?.map_or(limits::TRANSCRIPT_BYTES, |m| m as usize);
    let strip = opt_bool(p, "strip")?.unwrap_or(false);
    let from_mark = !p.contains_key("offset");
    let from = opt_u64(p, "offset")?.unwrap_or_else(|| s.mark());
    let chunk = ops::output(&s, from, max);
    if from_mark {
        s.set_mark(chunk.next);
    }
    let data = if strip {
        crate::text::strip_ansi(&chunk.data)
    } else {
        String::from_utf8_lossy(&chunk.data).into_owned()
    };
    Ok(json!({
        "data": data,
        "offset": chunk.start,
        "next": chunk.next,
        "end": s.output_end(),
        "dropped": chunk.dropped,
    }))
}

/// `pty/output` with `to`: the transcript's bytes `offset..to` as a step
/// showed them (`view`: `lines`, the default, or `raw`), lines
/// `start..=end` of that when given; the mark stays. What an `omitted` of
/// a step, wait or read names.
fn output_range(p: &Params, s: &Session, to: u64) -> Result<Value, RpcError> {
    let from = opt_u64(p, "offset")?
        .ok_or_else(|| RpcError::params("to needs offset: the range is offset..to"))?;
    let raw = match opt_str(p, "view")? {
        None | Some("lines") => false,
        Some("raw") => true,
        Some(v) => {
            return Err(RpcError::params(format!(
                "unknown view {v:?} (use lines or raw)"
            )))
        }
    };
    let lines = match (opt_u64(p, "start")?, opt_u64(p, "end")?) {
        (None, None) => None,
        (Some(a), Some(b)) if a >= 1 && b >= a => {
            let n = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
            Some((n(a), n(b)))
        }
        _ => {
            return Err(RpcError::params(
                "start and end go together, from 1, end not before start",
            ))
        }
    };
    let mut text = ops::output_text(s, (from, to), raw, lines)?;
    let source = ops::Source::Output {
        from,
        to,
        raw,
        first: lines.map_or(1, |(a, _)| a),
    };
    let mut v = json!({ "offset": from, "to": to });
    apply_cap(p, &mut text, Some(source), &mut v)?;
    v["data"] = json!(text);
    Ok(v)
}

fn signal(ctx: &Ctx, p: &Params) -> Result<Value, RpcError> {
    let s = session(ctx, p)?;
    let sig = match p.get("signal") {
        Some(Value::String(name)) => ops::signal_by_name(name),
        // A number that does not fit is no signal (never truncated to one).
        Some(Value::Number(n)) => n
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .and_then(ops::signal_by_number),
        _ => {
            return Err(RpcError::params(
                "signal is required (a name like \"INT\" or a number)",
            ))
        }
    }
    .ok_or_else(|| {
        RpcError::params("unknown signal (use e.g. INT, TERM, KILL, HUP, QUIT, USR1, WINCH)")
    })?;
    ops::signal(&s, sig)?;
    Ok(json!({}))
}

fn stop(ctx: &Ctx, p: &Params) -> Result<Value, RpcError> {
    let name = session_name(p)?;
    let force = opt_bool(p, "force")?.unwrap_or(false);
    let s = if ctx.serve {
        // serve keeps its one session until pty/kill: the program's last
        // screen and exit status stay readable, as after any exit.
        let s = ctx.manager.get(name)?;
        if force {
            s.kill();
        } else {
            s.stop(limits::STOP_GRACE);
        }
        s
    } else {
        ctx.manager.stop(name, force)?
    };
    let st = s.status();
    let (code, sig) = exit_fields(st.exit);
    Ok(
        json!({"session": name, "exitCode": code, "signal": sig, "ranMs": st.running_for.as_millis() as u64}),
    )
}

fn list(ctx: &Ctx, _p: &Params) -> Result<Value, RpcError> {
    let sessions: Vec<Value> = ctx
        .manager
        .list()
        .iter()
        .map(|(name, s)| status_json(name, s, &s.status()))
        .collect();
    Ok(json!({ "sessions": sessions }))
}

fn record(ctx: &Ctx, p: &Params) -> Result<Value, RpcError> {
    let s = session(ctx, p)?;
    let failed = |e: std::io::Error| RpcError::new(SERVER_ERROR, format!("recording failed: {e}"));
    match opt_str(p, "action")? {
        Some("start") => {
            let path = opt_str(p, "path")?
                .ok_or_else(|| RpcError::params("path is required to start a recording"))?;
            // The daemon's working directory is not the caller's: a
            // relative path would land where nobody looks for it.
            if !std::path::Path::new(path).is_absolute() {
                return Err(RpcError::params(format!(
                    "path must be absolute: {path:?} would be taken from the daemon's directory, not yours (the record verb makes it absolute for you)"
                )));
            }
            s.start_recording(std::path::Path::new(path))
                .map_err(|e| RpcError::new(SERVER_ERROR, e.to_string()))?;
            Ok(json!({"recording": path}))
        }
        Some("stop") => match s.stop_recording().map_err(failed)? {
            Some((path, events)) => Ok(json!({"path": path, "events": events})),
            None => Err(RpcError::new(
                SERVER_ERROR,
                "not recording (start one first)",
            )),
        },
        Some("marker") => {
            let label = opt_str(p, "label")?.unwrap_or("");
            if s.record_marker(label).map_err(failed)? {
                Ok(json!({}))
            } else {
                Err(RpcError::new(
                    SERVER_ERROR,
                    "not recording (start one first)",
                ))
            }
        }
        _ => Err(RpcError::params(
            "action must be \"start\", \"stop\" or \"marker\"",
        )),
    }
}
