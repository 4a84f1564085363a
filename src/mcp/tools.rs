//! The handlers of the terminal_* tools: each checks its arguments, calls
//! the core ([`crate::manager`], [`crate::session`], [`crate::ops`],
//! [`crate::text`]) and shapes the structured result. A failure is a message
//! for the model that says what to do next; the protocol layer turns it into
//! an `isError` result.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::json::json;
use regex_lite::Regex;
use serde_json::{Map, Value};

use crate::limits;
use crate::manager::{self, Manager};
use crate::ops::{self, Format, Input, Selection, Settle, View};
use crate::params::{self, ParamError};
use crate::session::{Cancel, Options, OutputText, Reason, Session, SettleSpec, Status, Until};
use crate::sync::lock;
use crate::text;
use crate::turns::Turn;
use crate::vecmap::VecMap;

/// What every tool call runs against.
pub struct Ctx {
    pub manager: Manager,
    /// `terminal_run` commands in flight, killed with the server.
    runs: Mutex<VecMap<u64, Arc<Session>>>,
    next_run: AtomicU64,
    next_name: AtomicU64,
    /// Where each session's output stood when `terminal_start` returned its
    /// screen: the agent has seen that, so its first `terminal_step` starts
    /// there (the read mark stays put, so that seed 004's first
    /// `terminal_read` still returns the opening output).
    shown: Mutex<VecMap<String, u64>>,
    /// The server's working directory: the default `cwd`.
    cwd: PathBuf,
}

impl Ctx {
    pub fn new() -> Ctx {
        Ctx {
            manager: Manager::new(),
            runs: Mutex::default(),
            next_run: AtomicU64::new(0),
            next_name: AtomicU64::new(0),
            shown: Mutex::default(),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
        }
    }

    /// Kill every session and running command (the server is exiting).
    pub fn shutdown(&self) {
        self.manager.shutdown();
        let runs: Vec<_> = lock(&self.runs)
            .take()
            .into_iter()
            .map(|(_, s)| s)
            .collect();
        for s in runs {
            s.kill();
        }
    }
}

impl Default for Ctx {
    fn default() -> Ctx {
        Ctx::new()
    }
}

/// A tool's result: the structured content, or a message for the model.
pub type Outcome = Result<Value, String>;

/// A handler holds its session's [`Turn`] (the order calls of a session
/// start in) until it returns, or releases it once it starts to wait.
type Handler = fn(&Ctx, &Map<String, Value>, &Arc<AtomicBool>, &mut Turn) -> Outcome;

/// Every handler, by tool name (the catalog lists the same names).
pub const HANDLERS: &[(&str, Handler)] = &[
    ("terminal_start", start),
    ("terminal_step", step),
    ("terminal_send", send),
    ("terminal_read", read),
    ("terminal_wait", wait),
    ("terminal_screen", screen),
    ("terminal_interrupt", interrupt),
    ("terminal_resize", resize),
    ("terminal_list", list),
    ("terminal_close", close),
    ("terminal_run", run),
];

/// An argument of the wrong type, as a message for the model: with what it
/// was given when that was a number out of range.
fn say(e: ParamError) -> String {
    match &e.got {
        Some(v) => format!("{e}, got {v}"),
        None => e.to_string(),
    }
}

/// A tool's arguments with typed, bounded accessors whose errors name the
/// argument and what it takes.
pub struct Args<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    /// Refuse arguments the tool does not take (a misspelt name would
    /// otherwise be silently ignored).
    pub fn new(map: &'a Map<String, Value>, known: &[&str]) -> Result<Args<'a>, String> {
        if let Some(k) = map.keys().find(|k| !known.contains(&k.as_str())) {
            let takes = if known.is_empty() {
                "no arguments".to_string()
            } else {
                known.join(", ")
            };
            return Err(format!("unknown argument {k:?}: this tool takes {takes}"));
        }
        Ok(Args { map })
    }

    fn str(&self, k: &str) -> Result<Option<&'a str>, String> {
        params::str_param(self.map, k).map_err(say)
    }

    fn bool(&self, k: &str) -> Result<bool, String> {
        Ok(params::bool_param(self.map, k)
            .map_err(say)?
            .unwrap_or(false))
    }

    /// An integer in `lo..=hi` (a float with no fraction counts).
    fn int(&self, k: &str, lo: u64, hi: u64) -> Result<Option<u64>, String> {
        params::int_in(self.map, k, lo, hi).map_err(say)
    }

    fn strings(&self, k: &str) -> Result<Vec<String>, String> {
        Ok(params::strings(self.map, k)
            .map_err(say)?
            .unwrap_or_default())
    }

    fn env(&self) -> Result<Vec<(String, String)>, String> {
        Ok(params::env(self.map, "env")
            .map_err(say)?
            .unwrap_or_default())
    }

    fn session(&self, ctx: &Ctx) -> Result<(String, Arc<Session>), String> {
        let id = self.str("session_id")?.ok_or(
            "session_id is required: the id terminal_start returned (terminal_list shows them)",
        )?;
        let s = ctx.manager.get(id).map_err(|_| {
            format!("no session {id:?}: terminal_list shows the open sessions, terminal_start opens one")
        })?;
        Ok((id.to_string(), s))
    }

    fn max_chars(&self) -> Result<usize, String> {
        Ok(self
            .int("max_chars", 1, limits::MCP_MAX_CHARS as u64)?
            .map_or(limits::MCP_DEFAULT_CHARS, |n| n as usize))
    }

    /// `timeout_ms`, defaulted and capped at [`limits::MCP_MAX_WAIT`].
    fn timeout(&self) -> Result<Duration, String> {
        Ok(self
            .int("timeout_ms", 1, u64::MAX >> 11)?
            .map_or(limits::MCP_DEFAULT_WAIT, Duration::from_millis)
            .min(limits::MCP_MAX_WAIT))
    }

    fn cwd(&self, ctx: &Ctx) -> Result<PathBuf, String> {
        let Some(c) = self.str("cwd")? else {
            return Ok(ctx.cwd.clone());
        };
        let dir = ctx.cwd.join(c);
        match std::fs::metadata(&dir) {
            Ok(m) if m.is_dir() => Ok(std::fs::canonicalize(&dir).unwrap_or(dir)),
            Ok(_) => Err(format!("cwd {c:?} is not a directory")),
            Err(e) => Err(format!("cwd {c:?}: {e}")),
        }
    }
}

/// Find `name` as the shell would: an absolute path as is, anything else on
/// PATH (the caller's `env` PATH when it sets one).
fn resolve_program(name: &str, env: &[(String, String)]) -> Result<PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if name.is_empty() {
        return Err("shell must not be empty".into());
    }
    if name.contains('/') {
        let p = Path::new(name);
        if !p.is_absolute() {
            return Err(format!(
                "shell {name:?}: give a program name found on PATH or an absolute path"
            ));
        }
        return if executable(p) {
            Ok(p.to_path_buf())
        } else {
            Err(format!("shell {name:?} is not an executable file"))
        };
    }
    let path = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var("PATH").ok())
        .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    path.split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(name))
        .find(|p| executable(p))
        .ok_or_else(|| {
            format!("shell {name:?} was not found on PATH; give an absolute path or another program (bash, sh, python3, ...)")
        })
}

fn exit_code(st: &Status) -> Value {
    st.exit.map_or(Value::Null, |e| json!(e.code()))
}

fn screen_text(s: &Session, max: usize) -> (String, bool) {
    text::head_tail(
        &ops::screen(s, Selection::All, Format::Text, false).text,
        max,
    )
}

fn failed(e: manager::Error) -> String {
    e.to_string()
}

/// A refusal by the core about session `id`, saying for an exited program
/// how it ended and what the model can do instead.
fn refused(id: &str, s: &Session, e: manager::Error) -> String {
    match (e, s.status().exit) {
        (manager::Error::Exited, Some(x)) => format!(
            "session {id:?} has exited ({}); terminal_read shows its last output, terminal_start starts a new one",
            crate::status::exited(x)
        ),
        (e, _) => failed(e),
    }
}

/// `Session::wait`, given up early when the request is cancelled.
fn wait_until(s: &Session, until: &Until, timeout: Duration, cancel: &Arc<AtomicBool>) -> Reason {
    let until = Until {
        cancel: Some(Cancel::Flag(Arc::clone(cancel))),
        ..until.clone()
    };
    s.wait(&until, timeout).0
}

/// `ops::settle` (the kernel's verdict, `quiet` where it cannot tell) with
/// the request's cancel flag.
fn settle(s: &Session, quiet: Duration, timeout: Duration, cancel: &Arc<AtomicBool>) -> Reason {
    let how = Settle {
        quiet,
        max_wait: timeout,
        quiet_only: false,
        silence_is_enough: false,
    };
    ops::settle_with(s, how, Some(Cancel::Flag(Arc::clone(cancel)))).0
}

/// Holds the session's turn through its ready settle: a call pipelined
/// behind it starts on the screen it returns.
fn start(ctx: &Ctx, m: &Map<String, Value>, cancel: &Arc<AtomicBool>, _: &mut Turn) -> Outcome {
    let a = Args::new(
        m,
        &[
            "shell", "cwd", "env", "cols", "rows", "name", "replace", "args",
        ],
    )?;
    let env = a.env()?;
    let shell = match a.str("shell")? {
        Some(s) => resolve_program(s, &env)?,
        None => resolve_program("bash", &env).or_else(|_| resolve_program("sh", &env))?,
    };
    let cwd = a.cwd(ctx)?;
    let cols = a.int("cols", limits::COLS.0.into(), limits::COLS.1.into())?;
    let rows = a.int("rows", limits::ROWS.0.into(), limits::ROWS.1.into())?;
    let replace = a.bool("replace")?;
    let mut argv = vec![shell.to_string_lossy().into_owned()];
    argv.extend(a.strings("args")?);
    let name = match a.str("name")? {
        Some(n) => {
            manager::check_name(n).map_err(failed)?;
            n.to_string()
        }
        None => loop {
            let n = format!("t{}", ctx.next_name.fetch_add(1, Ordering::Relaxed) + 1);
            if ctx.manager.get(&n).is_err() {
                break n;
            }
        },
    };
    let mut opts = Options::new(argv);
    opts.spawn.cwd = Some(cwd.clone());
    opts.spawn.env = env;
    opts.spawn.cols = cols.map_or(limits::MCP_DEFAULT_COLS, |c| c as u16);
    opts.spawn.rows = rows.map_or(limits::MCP_DEFAULT_ROWS, |r| r as u16);
    let s = ctx
        .manager
        .start(&name, &opts, replace)
        .map_err(|e| match e {
            manager::Error::Running(..) => format!(
                "session {name:?} is already running: pass replace=true to restart it, choose another name, or omit name"
            ),
            e => failed(e),
        })?;
    let ready = settle(&s, limits::DEFAULT_QUIET, limits::MCP_START_SETTLE, cancel);
    let st = s.status();
    lock(&ctx.shown).insert(name.clone(), s.output_end());
    Ok(json!({
        "session_id": name,
        "shell": shell.to_string_lossy(),
        "cwd": cwd.to_string_lossy(),
        "pid": s.pid(),
        "size": {"cols": st.cols, "rows": st.rows},
        "ready": ready.as_str(),
        "screen": screen_text(&s, limits::MCP_DEFAULT_CHARS).0,
        "running": st.running(),
        "exit_code": exit_code(&st),
    }))
}

/// The input of `text`, `keys` and `enter`, in that order (terminal_send's
/// and terminal_step's convention); empty when none is given.
fn inputs(a: &Args) -> Result<Vec<Input>, String> {
    let text = a.str("text")?.unwrap_or("");
    let keys = a.strings("keys")?;
    let mut once = Vec::new();
    if !text.is_empty() {
        once.push(Input::Text(text.to_string()));
    }
    once.extend(keys.into_iter().map(Input::Key));
    if a.bool("enter")? {
        once.push(Input::Key("enter".into()));
    }
    Ok(once)
}

/// Type, wait until the program waits for input again (the kernel's
/// verdict, as the CLI's `step`), and return the new output in the line
/// view, capped head and tail.
fn step(ctx: &Ctx, m: &Map<String, Value>, cancel: &Arc<AtomicBool>, turn: &mut Turn) -> Outcome {
    let a = Args::new(
        m,
        &[
            "session_id",
            "text",
            "keys",
            "enter",
            "quiet_ms",
            "timeout_ms",
            "max_chars",
        ],
    )?;
    let (id, s) = a.session(ctx)?;
    let inputs = inputs(&a)?;
    let quiet = a
        .int("quiet_ms", 1, max_wait_ms())?
        .map_or(limits::DEFAULT_QUIET, Duration::from_millis);
    let how = Settle {
        quiet,
        max_wait: a.timeout()?,
        quiet_only: false,
        silence_is_enough: false,
    };
    let max = a.max_chars()?;
    // What terminal_start showed is not new to the agent (a full-screen
    // program's frame, a banner): the first step starts after it.
    if let Some(end) = lock(&ctx.shown).remove(&id) {
        if s.mark() < end {
            s.set_mark(end);
        }
    }
    // Where this output starts, for terminal_read to return all of it.
    let since = s.output_chars(None, 0).first;
    let cancel = Some(Cancel::Flag(Arc::clone(cancel)));
    // The session's next call starts once the input is written (the core
    // keeps a second step's input until this one has its answer).
    let r = ops::step_then(&s, &inputs, how, (false, View::Auto), cancel, || {
        turn.release()
    })
    .map_err(|e| refused(&id, &s, e))?;
    let lost = if r.dropped > 0 {
        format!("[... {} ...]\n", dropped_words(&s, &r))
    } else {
        String::new()
    };
    let (output, cut) = text::head_tail(&(lost + &r.output), max);
    let truncated = cut || r.dropped > 0;
    Ok(json!({
        "output": output,
        "view": if r.is_screen { "screen" } else { "stream" },
        "reason": r.reason.as_str(),
        "running": r.status.running(),
        "exit_code": exit_code(&r.status),
        "truncated": truncated,
        "since": since,
    }))
}

/// The core's words for what the ring dropped before a step's output, with
/// the terminal_read (character offsets) that returns what is still held
/// of the line the drop cut.
fn dropped_words(s: &Session, r: &ops::StepResult) -> String {
    let held = r
        .cut_line
        .filter(|(from, to)| to - from <= r.dropped)
        .and_then(|(from, to)| Some((to - from, s.chars_of(from, to)?)));
    match held {
        Some((bytes, (since, to))) => {
            let how = format!("read them with terminal_read since={since} to={to}");
            let rest = ops::CutRest::LeftOut {
                count: to - since,
                unit: "characters",
                how: &how,
            };
            ops::dropped_words(r.dropped - bytes, rest)
        }
        // Dropped since the step collected it: all of it is gone.
        None => ops::dropped_words(r.dropped, ops::CutRest::Gone),
    }
}

fn max_wait_ms() -> u64 {
    limits::MCP_MAX_WAIT.as_millis() as u64
}

fn send(ctx: &Ctx, m: &Map<String, Value>, _: &Arc<AtomicBool>, _: &mut Turn) -> Outcome {
    let a = Args::new(m, &["session_id", "text", "keys", "enter", "repeat"])?;
    let (id, s) = a.session(ctx)?;
    let repeat = a.int("repeat", 1, limits::MCP_MAX_REPEAT)?.unwrap_or(1);
    let once = inputs(&a)?;
    if once.is_empty() {
        return Err("nothing to send: give text, keys or enter=true".into());
    }
    let inputs: Vec<Input> = (0..repeat).flat_map(|_| once.iter().cloned()).collect();
    let bytes = ops::encode(&s, &inputs).map_err(failed)?;
    ops::write(&s, &bytes).map_err(|e| refused(&id, &s, e))?;
    Ok(json!({
        "session_id": id,
        "sent_chars": String::from_utf8_lossy(&bytes).chars().count(),
        "running": s.status().running(),
    }))
}

fn read(ctx: &Ctx, m: &Map<String, Value>, _: &Arc<AtomicBool>, _: &mut Turn) -> Outcome {
    let a = Args::new(
        m,
        &[
            "session_id",
            "since",
            "to",
            "max_chars",
            "grep",
            "tail",
            "strip_ansi",
        ],
    )?;
    let (id, s) = a.session(ctx)?;
    let since = a.int("since", 0, u64::MAX >> 11)?;
    let to = a.int("to", 0, u64::MAX >> 11)?;
    if let (Some(from), Some(to)) = (since, to) {
        if to < from {
            return Err(format!(
                "to {to} is before since {from}: give the offset the read stops at"
            ));
        }
    }
    let max = a.max_chars()?;
    let grep = match a.str("grep")? {
        Some(g) => Some(Regex::new(g).map_err(|e| format!("invalid grep regex: {e}"))?),
        None => None,
    };
    let tail = a.int("tail", 1, 1_000_000)?;
    let strip = a.bool("strip_ansi")?;
    let st = s.status();
    // Offsets are characters (seed 004); the transcript maps them to bytes.
    let read = s.output_chars(since, usize::MAX);
    if let Some(n) = since.filter(|&n| n > read.end) {
        return Err(format!(
            "since {n} is past the end of the output ({} characters); pass a cursor an earlier read returned, or omit since",
            read.end
        ));
    }
    let chunk = read.chunk;
    // `to`: the bytes of the characters before it (each character starts
    // at a byte that is not a UTF-8 continuation byte).
    let stop = to.filter(|&to| to < read.end).map(|to| {
        let n = usize::try_from(to.saturating_sub(read.first)).unwrap_or(usize::MAX);
        chunk
            .data
            .iter()
            .enumerate()
            .filter(|(_, b)| *b & 0xC0 != 0x80)
            .nth(n)
            .map_or(chunk.data.len(), |(i, _)| i)
    });
    // Hold back a character or escape sequence still arriving, unless the
    // program is gone and nothing more will come; a read that stops at
    // `to` is all there.
    let keep = match stop {
        Some(stop) => stop,
        None if st.running() => text::complete_prefix(&chunk.data),
        None => chunk.data.len(),
    };
    let data = &chunk.data[..keep];
    // A read of an earlier stretch does not take back what later reads
    // and steps have returned.
    let next = chunk.start + keep as u64;
    if stop.is_none() || next > s.mark() {
        s.set_mark(next);
    }
    let cursor = read.first + crate::transcript::chars_in(data);
    let mut out = if strip {
        text::strip_ansi(data)
    } else {
        String::from_utf8_lossy(data).into_owned()
    };
    if let Some(re) = grep {
        out = out
            .lines()
            .filter(|l| re.is_match(l))
            .map(|l| format!("{l}\n"))
            .collect();
    }
    if let Some(n) = tail {
        out = text::tail_lines(&out, n as usize);
    }
    let (out, truncated) = text::head_tail(&out, max);
    Ok(json!({
        "session_id": id,
        "text": out,
        "cursor": cursor,
        "dropped": read.dropped,
        "truncated": truncated,
        "running": st.running(),
        "exit_code": exit_code(&st),
    }))
}

/// Seed 004's `terminal_wait`, with `until_idle` besides: every condition
/// given ends the wait, the first that holds. `quiet_ms` is the seed's
/// silence ("no output arrived for this long"), even while the program
/// works; only `until_idle` asks the kernel whether it waits for input
/// (reason `idle`), so a seed client's reasons and quiet stay the seed's.
fn wait(ctx: &Ctx, m: &Map<String, Value>, cancel: &Arc<AtomicBool>, turn: &mut Turn) -> Outcome {
    let a = Args::new(
        m,
        &[
            "session_id",
            "until",
            "until_idle",
            "quiet_ms",
            "timeout_ms",
            "ignore_echo",
        ],
    )?;
    let (id, s) = a.session(ctx)?;
    let until = a.str("until")?.filter(|u| !u.is_empty());
    let idle = a.bool("until_idle")?;
    let quiet = a
        .int("quiet_ms", 0, max_wait_ms())?
        .filter(|&q| q > 0)
        .map(Duration::from_millis);
    let timeout = a.timeout()?;
    let ignore_echo = a.bool("ignore_echo")?;
    if until.is_none() && quiet.is_none() && !idle {
        return Err(
            "give until (a regex to wait for), until_idle=true, quiet_ms (a quiet period), or several"
                .into(),
        );
    }
    let what = match until {
        Some(u) => {
            let regex = Regex::new(&format!("(?im){u}"))
                .map_err(|e| format!("invalid regex in until: {e}"))?;
            let (from, echo) = s.last_input();
            Some(OutputText {
                regex,
                from,
                skip_echo: if ignore_echo { echo } else { None },
            })
        }
        None => None,
    };
    let cond = Until {
        output_text: what.clone(),
        exit: true,
        quiet,
        // Where the kernel cannot tell: quiet_ms, else the step's window.
        settle: idle.then(|| SettleSpec {
            fallback: quiet.unwrap_or(limits::DEFAULT_QUIET),
            kernel: true,
        }),
        ..Until::default()
    };
    let started = Instant::now();
    // A call pipelined behind the wait (the send that makes the text
    // appear) starts now.
    turn.release();
    let reason = wait_until(&s, &cond, timeout, cancel);
    let matched = match (&what, reason) {
        (Some(w), Reason::Matched) => s.find_output(w),
        _ => None,
    };
    let st = s.status();
    Ok(json!({
        "session_id": id,
        "reason": reason.as_str(),
        "matched": matched,
        "running": st.running(),
        "exit_code": exit_code(&st),
        "screen": screen_text(&s, limits::MCP_DEFAULT_CHARS).0,
        "waited_ms": started.elapsed().as_millis() as u64,
    }))
}

fn screen(ctx: &Ctx, m: &Map<String, Value>, _: &Arc<AtomicBool>, _: &mut Turn) -> Outcome {
    let a = Args::new(m, &["session_id", "max_chars"])?;
    let (id, s) = a.session(ctx)?;
    let max = a.max_chars()?;
    let view = ops::screen(&s, Selection::All, Format::Text, false);
    let (out, truncated) = text::head_tail(&view.text, max);
    let st = s.status();
    Ok(json!({
        "session_id": id,
        "text": out,
        "cursor": crate::frame::cursor_xy_json(view.cursor),
        "cols": view.cols,
        "rows": view.rows,
        "running": st.running(),
        "exit_code": exit_code(&st),
        "truncated": truncated,
        "title": view.title,
        "alt_screen": view.alt_screen,
    }))
}

fn interrupt(ctx: &Ctx, m: &Map<String, Value>, _: &Arc<AtomicBool>, _: &mut Turn) -> Outcome {
    let a = Args::new(m, &["session_id", "force"])?;
    let (id, s) = a.session(ctx)?;
    let grace = if a.bool("force")? {
        Duration::ZERO
    } else {
        limits::MCP_INTERRUPT_GRACE
    };
    let done = ops::interrupt(&s, grace).map_err(|e| refused(&id, &s, e))?;
    Ok(json!({
        "session_id": id,
        "sent": done.sent,
        "running": s.status().running(),
        "terminated": done.terminated,
    }))
}

fn resize(ctx: &Ctx, m: &Map<String, Value>, _: &Arc<AtomicBool>, _: &mut Turn) -> Outcome {
    let a = Args::new(m, &["session_id", "cols", "rows"])?;
    let (id, s) = a.session(ctx)?;
    let cols = a.int("cols", limits::COLS.0.into(), limits::COLS.1.into())?;
    let rows = a.int("rows", limits::ROWS.0.into(), limits::ROWS.1.into())?;
    let (Some(cols), Some(rows)) = (cols, rows) else {
        return Err("cols and rows are both required".into());
    };
    ops::resize(&s, cols as u16, rows as u16).map_err(|e| refused(&id, &s, e))?;
    Ok(json!({"session_id": id, "size": {"cols": cols, "rows": rows}}))
}

fn list(ctx: &Ctx, m: &Map<String, Value>, _: &Arc<AtomicBool>, _: &mut Turn) -> Outcome {
    Args::new(m, &[])?;
    let sessions: Vec<Value> = ctx
        .manager
        .list()
        .into_iter()
        .map(|(name, s)| {
            let st = s.status();
            json!({
                "session_id": name,
                "state": if st.running() { "running" } else { "exited" },
                "pid": st.pid,
                "shell": s.argv().first().cloned().unwrap_or_default(),
                "cwd": s.cwd().map(|c| c.to_string_lossy().into_owned()).unwrap_or_default(),
                "size": {"cols": st.cols, "rows": st.rows},
                "idle_ms": st.quiet_for.as_millis() as u64,
                "running_for_ms": st.running_for.as_millis() as u64,
                "buffer_bytes": st.buffered,
                "exit_code": exit_code(&st),
            })
        })
        .collect();
    Ok(json!({"sessions": sessions}))
}

fn close(ctx: &Ctx, m: &Map<String, Value>, _: &Arc<AtomicBool>, _: &mut Turn) -> Outcome {
    let a = Args::new(m, &["session_id", "force"])?;
    let (id, _) = a.session(ctx)?;
    let s = ctx.manager.stop(&id, a.bool("force")?).map_err(failed)?;
    lock(&ctx.shown).remove(&id);
    Ok(json!({"session_id": id, "closed": true, "exit_code": exit_code(&s.status())}))
}

fn run(ctx: &Ctx, m: &Map<String, Value>, cancel: &Arc<AtomicBool>, _: &mut Turn) -> Outcome {
    let a = Args::new(
        m,
        &["command", "shell", "cwd", "env", "timeout_ms", "max_chars"],
    )?;
    let command = a
        .str("command")?
        .filter(|c| !c.trim().is_empty())
        .ok_or("command is required: the command line to run")?;
    let mut env = vec![
        ("PAGER".to_string(), "cat".to_string()),
        ("GIT_PAGER".to_string(), "cat".to_string()),
    ];
    env.extend(a.env()?);
    let shell = resolve_program(a.str("shell")?.unwrap_or("sh"), &env)?;
    let cwd = a.cwd(ctx)?;
    let timeout = a.timeout()?;
    let max = a.max_chars()?;
    let mut opts = Options::new(vec![
        shell.to_string_lossy().into_owned(),
        "-c".into(),
        command.to_string(),
    ]);
    opts.spawn.cwd = Some(cwd);
    opts.spawn.env = env;
    opts.spawn.cols = limits::MCP_DEFAULT_COLS;
    opts.spawn.rows = limits::MCP_DEFAULT_ROWS;
    let started = Instant::now();
    let s = Arc::new(Session::start(&opts).map_err(|e| format!("cannot run the command: {e}"))?);
    let key = ctx.next_run.fetch_add(1, Ordering::Relaxed);
    lock(&ctx.runs).insert(key, Arc::clone(&s));
    let until = Until {
        exit: true,
        ..Until::default()
    };
    let reason = wait_until(&s, &until, timeout, cancel);
    let duration = started.elapsed();
    let timed_out = reason != Reason::Exited;
    // Also ends anything the command left running in the background.
    let exit = s.kill();
    lock(&ctx.runs).remove(&key);
    let chunk = s.output(0, usize::MAX);
    // The whole transcript: what is held of the line the drop cut is
    // shown, first (one that starts right after the drop is one too).
    let note = if chunk.dropped > 0 {
        let rest = if chunk.data.is_empty() {
            ops::CutRest::Gone
        } else {
            ops::CutRest::Shown
        };
        format!("[... {} ...]\n", ops::dropped_words(chunk.dropped, rest))
    } else {
        String::new()
    };
    let (out, cut) = text::head_tail(
        &text::strip_ansi(&chunk.data),
        max.saturating_sub(note.chars().count()).max(1),
    );
    let out = note + &out;
    Ok(json!({
        "output": out,
        "exit_code": if timed_out { Value::Null } else { exit.map_or(Value::Null, |e| json!(e.code())) },
        "timed_out": timed_out,
        "duration_ms": duration.as_millis() as u64,
        "truncated": cut || chunk.dropped > 0,
    }))
}
