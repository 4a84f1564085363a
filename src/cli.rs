//! The `ptybroker` command line: pty-prompt's verbs (seed 002) and the rest,
//! each a client of the per-user daemon. One function per verb, found by
//! name in [`spec::VERBS`] (with its usage and options); each parses its
//! options with lexopt, makes its calls and prints the program's output on
//! stdout and one status line on stderr, all through [`output`]. The verbs
//! that run in this process (servers, `render`) are in [`local`].

mod attach;
mod complete;
pub mod help;
mod local;
pub mod output;
pub mod spec;

use std::time::{Duration, SystemTime};

use crate::json::json;
use lexopt::ValueExt;
use serde_json::{Map, Value};

use crate::client::{CallError, Client, Found};
use crate::remote::Target;
use crate::session::Exit;
use crate::status::{self, State};
use crate::{keys, limits, manager, ops};
use output::{err_line, out, out_json, out_output, out_text};

/// A verb's failure: printed in the status line's bracketed form.
pub struct Failure {
    pub message: String,
    /// 1: the daemon reported an error or could not be reached; 2: usage.
    pub exit: u8,
}

impl From<CallError> for Failure {
    fn from(e: CallError) -> Failure {
        // The core's refusal, with what a caller can do next.
        let message = if e.message == crate::session::EXITED {
            format!(
                "{}: `read` shows its last screen, `stop` ends the session, `start --replace` starts it again",
                e.message
            )
        } else {
            e.message
        };
        Failure { message, exit: 1 }
    }
}

impl From<lexopt::Error> for Failure {
    fn from(e: lexopt::Error) -> Failure {
        usage(e.to_string())
    }
}

impl Failure {
    /// Not a failure: the verb met `-h` or `--help` and stopped there; the
    /// dispatcher prints its help (see [`Failure::is_help`]).
    pub fn help() -> Failure {
        Failure {
            message: String::new(),
            exit: 0,
        }
    }

    pub fn is_help(&self) -> bool {
        self.exit == 0 && self.message.is_empty()
    }

    /// Exit with `code` and no line of our own: `--exit-code` passing on
    /// the program's status (the status line has said how it ended).
    pub fn quiet(code: u8) -> Failure {
        Failure {
            message: String::new(),
            exit: code,
        }
    }
}

/// `--exit-code`: once the program has exited, the call ends as it did, 0
/// or its exit status, 128 + N for signal N (as a shell reports it); while
/// it runs, 0. `status` is a status object or `pty/stop`'s result.
fn exit_as_program(c: &Common, status: &Value) -> Result<(), Failure> {
    if !c.exit_code {
        return Ok(());
    }
    match state_of(status) {
        State::Exited(Exit::Code(0)) | State::Running | State::WaitingForInput => Ok(()),
        State::Exited(Exit::Code(n)) => Err(Failure::quiet(n.clamp(1, 255) as u8)),
        State::Exited(Exit::Signal(n)) => Err(Failure::quiet((128 + n).clamp(129, 255) as u8)),
    }
}

/// A usage error (exit 2); the dispatcher adds where the verb's help is
/// (see [`help::advise`]).
fn usage(msg: impl Into<String>) -> Failure {
    Failure {
        message: msg.into(),
        exit: 2,
    }
}

/// An argument detached from the parser's borrow, so that shared options can
/// be handled by one function while the verb still owns the parser.
enum Opt {
    /// `-s` or `--session`, as written.
    Flag(String),
    Value(std::ffi::OsString),
}

impl Opt {
    /// The next argument; `-h` or `--help` ends the verb with
    /// [`Failure::help`], so no verb parses them itself.
    fn next(p: &mut lexopt::Parser) -> Result<Option<Opt>, Failure> {
        Ok(match p.next()? {
            None => None,
            Some(lexopt::Arg::Short('h')) => {
                // `-hx` is not a request for help: a text such as `-hello`
                // typed without `--`.
                if let Some(rest) = p.optional_value() {
                    return Ok(Some(Opt::Flag(format!("-h{}", rest.to_string_lossy()))));
                }
                return Err(Failure::help());
            }
            Some(lexopt::Arg::Long("help")) => return Err(Failure::help()),
            Some(lexopt::Arg::Short(c)) => Some(Opt::Flag(format!("-{c}"))),
            Some(lexopt::Arg::Long(l)) => Some(Opt::Flag(format!("--{l}"))),
            Some(lexopt::Arg::Value(v)) => Some(Opt::Value(v)),
        })
    }

    fn flag(&self) -> &str {
        match self {
            Opt::Flag(f) => f,
            Opt::Value(_) => "",
        }
    }

    fn unexpected(&self) -> Failure {
        match self {
            Opt::Flag(f) => usage(format!("unexpected option {f}")),
            Opt::Value(v) => usage(format!("unexpected argument {:?}", v.to_string_lossy())),
        }
    }

    fn text(self) -> Result<String, Failure> {
        match self {
            Opt::Value(v) => v.into_string().map_err(|v| {
                usage(format!(
                    "argument is not valid UTF-8: {:?}",
                    v.to_string_lossy()
                ))
            }),
            Opt::Flag(f) => Ok(f),
        }
    }
}

fn value(p: &mut lexopt::Parser) -> Result<String, Failure> {
    Ok(p.value()?.string()?)
}

/// The whole number after option `arg`; a bad one is named with its option.
fn number(p: &mut lexopt::Parser, arg: &Opt) -> Result<u64, Failure> {
    let v = p.value()?;
    v.to_str()
        .and_then(|s| s.parse::<u64>().ok())
        .ok_or_else(|| {
            usage(format!(
                "{} takes a whole number, got {:?}",
                arg.flag(),
                v.to_string_lossy()
            ))
        })
}

/// `--max-bytes N`, `--head N`, `--tail N`: how much output `start`,
/// `step`, `wait` and `read` print (see [`crate::text::Cap`]); by default
/// [`limits::OUTPUT_CAP_BYTES`], head and tail.
#[derive(Default)]
struct CapOpts {
    max_bytes: Option<u64>,
    head: Option<u64>,
    tail: Option<u64>,
}

impl CapOpts {
    /// Take `arg` if it is a cap option.
    fn take(&mut self, arg: &Opt, p: &mut lexopt::Parser) -> Result<bool, Failure> {
        let slot = match arg.flag() {
            "--max-bytes" => &mut self.max_bytes,
            "--head" => &mut self.head,
            "--tail" => &mut self.tail,
            _ => return Ok(false),
        };
        *slot = Some(number(p, arg)?);
        Ok(true)
    }

    fn params(&self, p: &mut Map<String, Value>) {
        let max = self.max_bytes.unwrap_or(limits::OUTPUT_CAP_BYTES as u64);
        p.insert("maxBytes".into(), json!(max));
        if let Some(h) = self.head {
            p.insert("head".into(), json!(h));
        }
        if let Some(t) = self.tail {
            p.insert("tail".into(), json!(t));
        }
    }
}

/// `text` (a result's output) with a marker where output was left out:
/// before it, what the ring dropped (and the `read` that prints what it
/// still holds of the line it cut); where the cap left lines out, how many
/// and the `read` that prints exactly those.
fn with_marker(text: &str, r: &Value, session: &str) -> String {
    format!(
        "{}{}",
        dropped_line(r, session),
        with_omission(text, r, session)
    )
}

fn with_omission(text: &str, r: &Value, session: &str) -> String {
    let o = &r["omitted"];
    let Some(at) = o["at"].as_u64().and_then(|a| usize::try_from(a).ok()) else {
        return text.to_string();
    };
    let Some((head, tail)) = text.split_at_checked(at) else {
        return text.to_string();
    };
    let mut cmd = format!("ptybroker read -s {}", shell_word(session));
    let lines = format!("--start {} --end {} --max-bytes 0", o["start"], o["end"]);
    if o["output"].is_object() {
        let out = &o["output"];
        cmd.push_str(&format!(
            " --from {} --to {} {lines}",
            out["offset"], out["to"]
        ));
        if out["view"] == "raw" {
            cmd.push_str(" --raw");
        }
    } else if o["screen"].is_object() {
        if o["screen"]["history"] == true {
            cmd.push_str(" --history");
        }
        if o["screen"]["format"] == "ansi" {
            cmd.push_str(" --ansi");
        }
        cmd.push_str(&format!(" {lines}"));
    }
    format!(
        "{head}[ptybroker: {} lines ({} bytes) left out here; print them with: {cmd}]\n{tail}",
        o["lines"], o["bytes"]
    )
}

/// The line on what the ring dropped before the output, if it did
/// (`dropped`), and the part of that it still holds (`cut`): the rest of
/// the line the drop cut, left out, and the `read` that prints it.
fn dropped_line(r: &Value, session: &str) -> String {
    let dropped = r["dropped"].as_u64().unwrap_or(0);
    if dropped == 0 {
        return String::new();
    }
    let cut = &r["cut"];
    let held = cut["bytes"].as_u64().filter(|b| *b <= dropped);
    let words = match held {
        Some(held) => {
            let mut cmd = format!(
                "ptybroker read -s {} --from {} --to {} --max-bytes 0",
                shell_word(session),
                cut["offset"],
                cut["to"]
            );
            if cut["view"] == "raw" {
                cmd.push_str(" --raw");
            }
            let how = format!("print them with: {cmd}");
            let rest = ops::CutRest::LeftOut {
                count: held,
                unit: "bytes",
                how: &how,
            };
            ops::dropped_words(dropped - held, rest)
        }
        None => ops::dropped_words(dropped, ops::CutRest::Gone),
    };
    format!("[ptybroker: {words}]\n")
}

/// `word` as one word for a POSIX shell.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "._-+:,/@%=".contains(c);
    if word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Options shared by most verbs.
#[derive(Default)]
struct Common {
    session: Option<String>,
    timeout: Option<u64>,
    max_wait: Option<u64>,
    raw: bool,
    view: Option<&'static str>,
    json: bool,
    quiet_only: bool,
    /// `--exit-code` (start, step, wait, stop; see [`exit_as_program`]).
    exit_code: bool,
    /// `--host`, `--via`, `--remote-bin` (see [`crate::remote`]).
    host: Option<String>,
    via: Option<String>,
    remote_bin: Option<String>,
}

impl Common {
    /// Take `arg` if it is a common option; `Ok(false)` leaves it to the verb.
    fn take(&mut self, arg: &Opt, p: &mut lexopt::Parser) -> Result<bool, Failure> {
        match arg.flag() {
            "-s" | "--session" => {
                let name = value(p)?;
                manager::check_name(&name).map_err(|e| usage(e.to_string()))?;
                self.session = Some(name);
            }
            "-t" | "--timeout" => self.timeout = Some(number(p, arg)?),
            "--max-wait" => self.max_wait = Some(number(p, arg)?),
            "--raw" => self.raw = true,
            f @ ("--screen" | "--stream") => {
                let view = if f == "--screen" { "screen" } else { "stream" };
                if self.view.is_some_and(|had| had != view) {
                    return Err(usage(
                        "--screen and --stream cannot be combined: pick one view",
                    ));
                }
                self.view = Some(view);
            }
            "--json" => self.json = true,
            "--quiet-only" => self.quiet_only = true,
            "--host" => self.host = Some(value(p)?),
            "--via" => self.via = Some(value(p)?),
            "--remote-bin" => self.remote_bin = Some(value(p)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn name(&self) -> &str {
        self.session.as_deref().unwrap_or("default")
    }

    /// A client of the daemon the options (or `PTYBROKER_HOST`) name.
    fn client(&self) -> Result<Client, Failure> {
        let target = Target::resolve(self.host.clone(), self.via.clone(), self.remote_bin.clone())
            .map_err(usage)?;
        if let Some(place) = target.place() {
            status::set_place(place);
        }
        Ok(Client::to(target))
    }

    fn params(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("session".into(), json!(self.name()));
        m
    }

    /// Refuse `--json` for a verb whose call has no result to print.
    fn no_json(&self, verb: &str) -> Result<(), Failure> {
        if self.json {
            return Err(usage(format!(
                "{verb} has no --json output: it prints only the status line"
            )));
        }
        Ok(())
    }
}

fn state_of(status: &Value) -> State {
    if status["running"].as_bool().unwrap_or(false) {
        if status["waitingForInput"].as_bool().unwrap_or(false) {
            State::WaitingForInput
        } else {
            State::Running
        }
    } else {
        match (status["signal"].as_i64(), status["exitCode"].as_i64()) {
            (Some(s), _) => State::Exited(Exit::Signal(s as i32)),
            (None, Some(c)) => State::Exited(Exit::Code(c as i32)),
            (None, None) => State::Exited(Exit::Code(0)),
        }
    }
}

fn ms(v: &Value) -> Duration {
    Duration::from_millis(v.as_u64().unwrap_or(0))
}

/// Print the status line for a status object (see `rpc::status_json`).
fn print_status(status: &Value) {
    err_line(&status::line(
        SystemTime::now(),
        ms(&status["runningMs"]),
        ms(&status["quietMs"]),
        state_of(status),
    ));
}

/// The status line's clauses for a status object, for an error line.
fn status_clauses(status: &Value) -> String {
    status::clauses(
        SystemTime::now(),
        ms(&status["runningMs"]),
        ms(&status["quietMs"]),
        state_of(status),
    )
}

/// Ask for the session's status and print it as the status line: the tail
/// of every verb that acts without waiting for an answer.
fn report_status(client: &Client, c: &Common) -> Result<(), Failure> {
    let st = client.call("pty/status", Value::Object(c.params()))?;
    print_status(&st);
    Ok(())
}

fn step_params(c: &Common, text: Option<String>, cap: &CapOpts, changed: bool) -> Value {
    let mut p = c.params();
    cap.params(&mut p);
    if changed {
        p.insert("changed".into(), json!(true));
    }
    if let Some(t) = text {
        p.insert("text".into(), json!(t));
    }
    if let Some(t) = c.timeout {
        p.insert("timeout".into(), json!(t));
    }
    if let Some(m) = c.max_wait {
        p.insert("maxWait".into(), json!(m));
    }
    p.insert("raw".into(), json!(c.raw));
    p.insert("view".into(), json!(c.view.unwrap_or("auto")));
    p.insert("quietOnly".into(), json!(c.quiet_only));
    Value::Object(p)
}

/// Print a `pty/step` result: its output (or, with `--json`, the whole
/// result), then the status line.
fn print_step(r: &Value, c: &Common) -> Result<(), Failure> {
    if c.json {
        out_json(r)?;
    } else {
        out_output(
            &with_marker(r["output"].as_str().unwrap_or(""), r, c.name()),
            c.raw,
        )?;
    }
    print_status(&r["status"]);
    Ok(())
}

fn start(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut c = Common::default();
    let mut argv: Vec<String> = Vec::new();
    let mut params = Map::new();
    let mut env: Map<String, Value> = Map::new();
    let mut clean = false;
    let (mut cols, mut rows) = (None, None);
    let mut cap = CapOpts::default();
    while let Some(arg) = Opt::next(p)? {
        if c.take(&arg, p)? || cap.take(&arg, p)? {
            continue;
        }
        match arg.flag() {
            "--cols" => cols = Some(number(p, &arg)?),
            "--rows" => rows = Some(number(p, &arg)?),
            "--cwd" => {
                // Relative to the caller's directory, not the daemon's
                // (`.` and `..` taken away: the path becomes PWD).
                let dir = std::path::PathBuf::from(value(p)?);
                let dir = match std::env::current_dir() {
                    Ok(mut here) if dir.is_relative() => {
                        for c in dir.components() {
                            match c {
                                std::path::Component::ParentDir => {
                                    here.pop();
                                }
                                std::path::Component::Normal(name) => here.push(name),
                                _ => {}
                            }
                        }
                        here
                    }
                    _ => dir,
                };
                params.insert("cwd".into(), json!(dir));
            }
            "--term" => {
                params.insert("term".into(), json!(value(p)?));
            }
            "--env" | "-e" => {
                let kv = value(p)?;
                let (k, v) = kv
                    .split_once('=')
                    .ok_or_else(|| usage(format!("--env wants NAME=VALUE, got {kv:?}")))?;
                env.insert(k.into(), json!(v));
            }
            "--clean-env" => clean = true,
            "--replace" => {
                params.insert("replace".into(), json!(true));
            }
            "--exit-code" => c.exit_code = true,
            "" => {
                argv.push(arg.text()?);
                argv.extend(p.raw_args()?.map(|a| a.to_string_lossy().into_owned()));
            }
            _ => return Err(arg.unexpected()),
        }
    }
    if argv.is_empty() {
        return Err(usage(
            "start needs a command: ptybroker start [options] -- cmd [args...]",
        ));
    }
    if cols.is_some() || rows.is_some() {
        let (cols, rows) = limits::check_size(
            cols.unwrap_or(limits::DEFAULT_COLS.into()),
            rows.unwrap_or(limits::DEFAULT_ROWS.into()),
        )
        .map_err(usage)?;
        params.insert("cols".into(), json!(cols));
        params.insert("rows".into(), json!(rows));
    }
    // The child runs as if the caller had forked it: the caller's working
    // directory and environment, not the daemon's. The caller's PWD names
    // the caller's directory: with `--cwd` the daemon sets it instead.
    let own_dir = !params.contains_key("cwd");
    if own_dir {
        if let Ok(d) = std::env::current_dir() {
            params.insert("cwd".into(), json!(d));
        }
    }
    // The caller's terminal description is not ours: TERM and the size
    // variables are left for the session to set (xterm-256color, the PTY's size).
    let mut full = Map::new();
    if !clean {
        for (k, v) in std::env::vars_os() {
            if let (Some(k), Some(v)) = (k.to_str(), v.to_str()) {
                if !["TERM", "TERMCAP", "COLUMNS", "LINES"].contains(&k) && (own_dir || k != "PWD")
                {
                    full.insert(k.into(), json!(v));
                }
            }
        }
    }
    full.extend(env);
    params.insert("env".into(), Value::Object(full));
    params.insert("cleanEnv".into(), json!(true));
    params.insert("argv".into(), json!(argv));
    params.insert("session".into(), json!(c.name()));
    let client = c.client()?;
    let (stream, note) = client.connect_or_start()?;
    // Of a start that had to replace a dead daemon: a line before the
    // status line, or after the error in its one line.
    let r = client
        .call_then(
            stream,
            ("pty/start", Value::Object(params)),
            ("pty/step", step_params(&c, None, &cap, false)),
        )
        .map_err(|e| {
            let mut f = Failure::from(e);
            if let Some(n) = &note {
                f.message = format!("{}; {n}", f.message);
            }
            f
        })?;
    if let Some(n) = note {
        err_line(&status::error_line(&n));
    }
    print_step(&r, &c)?;
    exit_as_program(&c, &r["status"])
}

fn step(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut c = Common::default();
    // Text and keys in the order given; the text (TEXT or --stdin) once.
    let mut actions: Vec<Value> = Vec::new();
    let mut text_at: Option<usize> = None;
    let mut from_stdin = false;
    let mut keys_given = false;
    let mut no_enter = false;
    let mut cap = CapOpts::default();
    let mut changed = false;
    while let Some(arg) = Opt::next(p)? {
        if c.take(&arg, p)? || cap.take(&arg, p)? {
            continue;
        }
        match arg.flag() {
            "--exit-code" => c.exit_code = true,
            "--changed" => changed = true,
            "-k" | "--key" => {
                actions.push(key_action(value(p)?)?);
                keys_given = true;
            }
            "--no-enter" => no_enter = true,
            f @ ("--stdin" | "") => {
                if text_at.is_some() {
                    return Err(usage(
                        "step types one text (TEXT or --stdin); add keys with --key",
                    ));
                }
                text_at = Some(actions.len());
                from_stdin = f == "--stdin";
                let t = if from_stdin {
                    String::new()
                } else {
                    arg.text()?
                };
                actions.push(json!({ "text": t }));
            }
            _ => return Err(arg.unexpected()),
        }
    }
    if changed && c.raw {
        return Err(usage(
            "--changed shows rows of text: it cannot be combined with --raw",
        ));
    }
    if let (Some(i), true) = (text_at, from_stdin) {
        actions[i] = json!({ "text": stdin_text()? });
    }
    let mut params = step_params(&c, None, &cap, changed);
    match (text_at, keys_given || no_enter) {
        // Seed 002's step: the text, then Enter.
        (Some(i), false) => params["text"] = actions[i]["text"].take(),
        _ if actions.is_empty() => {}
        // Text and keys exactly as given: no Enter of ours.
        _ => params["action"] = json!(actions),
    }
    let r = c.client()?.call("pty/step", params)?;
    print_step(&r, &c)?;
    exit_as_program(&c, &r["status"])
}

/// A `--key NAME` action; key names mean the same in every mode, so they
/// are checked before anything is sent.
fn key_action(key: String) -> Result<Value, Failure> {
    keys::encode_key(&key, &Default::default()).map_err(|e| usage(e.to_string()))?;
    Ok(json!({ "key": key }))
}

/// `--stdin`: the text to type, read from standard input so that it never
/// shows on a command line (a password): all of it but one trailing
/// newline (`\n` or `\r\n`, what `echo` or a here-string ends with), at
/// most [`limits::MAX_WRITE_BYTES`], UTF-8.
fn stdin_text() -> Result<String, Failure> {
    use std::io::Read;
    let max = limits::MAX_WRITE_BYTES;
    let mut buf = Vec::new();
    std::io::stdin()
        .lock()
        .take(max as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Failure {
            message: format!("cannot read standard input: {e}"),
            exit: 1,
        })?;
    if buf.len() > max {
        return Err(usage(format!(
            "standard input holds more than {max} bytes: --stdin sends at most {max} bytes"
        )));
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    }
    String::from_utf8(buf).map_err(|_| usage("standard input is not UTF-8 text (--stdin)"))
}

/// What `wait --match` / `--regex` looks for.
enum Awaited {
    Text(String),
    Regex(String),
}

fn wait(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut c = Common::default();
    let mut matching: Option<Awaited> = None;
    let mut cap = CapOpts::default();
    while let Some(arg) = Opt::next(p)? {
        if c.take(&arg, p)? || cap.take(&arg, p)? {
            continue;
        }
        let awaited = match arg.flag() {
            "-m" | "--match" => Awaited::Text(value(p)?),
            "--regex" => {
                let r = value(p)?;
                ops::screen_regex(&r).map_err(|e| usage(format!("invalid --regex: {e}")))?;
                Awaited::Regex(r)
            }
            "--exit-code" => {
                c.exit_code = true;
                continue;
            }
            _ => return Err(arg.unexpected()),
        };
        if matching.is_some() {
            return Err(usage("wait takes one --match TEXT or --regex RE"));
        }
        matching = Some(awaited);
    }
    let client = c.client()?;
    let mut params = c.params();
    let timeout = c.max_wait.unwrap_or(3_600_000);
    params.insert("timeout".into(), json!(timeout));
    match &matching {
        Some(Awaited::Text(m)) => params.insert("match".into(), json!(m)),
        Some(Awaited::Regex(r)) => params.insert("regex".into(), json!(r)),
        None => params.insert("exit".into(), json!(true)),
    };
    // Output the caller has not read yet, unless --screen asks for what
    // is on the screen (seen or not).
    let screen = c.view == Some("screen");
    if matching.is_some() && !screen {
        params.insert("matchOutput".into(), json!(true));
    }
    // One call brings the output and status with the wait: a session that
    // `stop` or `kill-session` ends meanwhile is gone right after.
    params.insert("output".into(), json!(true));
    params.insert("raw".into(), json!(c.raw));
    cap.params(&mut params);
    params.insert("view".into(), json!(c.view.unwrap_or("auto")));
    let w = client.call("pty/wait", Value::Object(params))?;
    let st = w["status"].clone();
    if c.json {
        // The wait's result (reason, screen...) with what `wait` prints
        // beside it (output, dropped, status), in the names `pty/step` uses.
        out_json(&w)?;
    } else {
        out_output(
            &with_marker(w["output"].as_str().unwrap_or(""), &w, c.name()),
            c.raw,
        )?;
    }
    // A wait that failed says so in its one line, the status line's
    // clauses with it.
    let failed = if matching.is_some() && w["reason"] == "exited" {
        Some("the program exited before the text appeared".to_string())
    } else if w["reason"] == "timeout" {
        let what = if matching.is_some() {
            "the text to appear"
        } else {
            "the program to exit"
        };
        Some(format!("gave up after {timeout} ms waiting for {what}"))
    } else {
        None
    };
    if let Some(why) = failed {
        return Err(Failure {
            message: format!("{why} ({})", status_clauses(&st)),
            exit: 1,
        });
    }
    print_status(&st);
    exit_as_program(&c, &st)
}

fn stop_with(p: &mut lexopt::Parser, force: bool) -> Result<(), Failure> {
    let mut c = Common::default();
    while let Some(arg) = Opt::next(p)? {
        if c.take(&arg, p)? {
            continue;
        }
        match arg.flag() {
            "--exit-code" => c.exit_code = true,
            _ => return Err(arg.unexpected()),
        }
    }
    let mut params = c.params();
    params.insert("force".into(), json!(force));
    let r = c.client()?.call("pty/stop", Value::Object(params))?;
    if c.json {
        out_json(&r)?;
    }
    let exit = match (r["signal"].as_i64(), r["exitCode"].as_i64()) {
        (Some(s), _) => Some(Exit::Signal(s as i32)),
        (None, Some(code)) => Some(Exit::Code(code as i32)),
        _ => None,
    };
    err_line(&status::stopped_line(
        SystemTime::now(),
        ms(&r["ranMs"]),
        exit,
        c.name(),
    ));
    exit_as_program(&c, &r)
}

fn stop(p: &mut lexopt::Parser) -> Result<(), Failure> {
    stop_with(p, false)
}

fn kill_session(p: &mut lexopt::Parser) -> Result<(), Failure> {
    stop_with(p, true)
}

fn read(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut c = Common::default();
    let mut params = Map::new();
    let mut rows: [Option<u64>; 4] = [None; 4];
    let mut cap = CapOpts::default();
    let (mut from, mut to) = (None, None);
    let (mut terminal_rows, mut changed) = (false, false);
    while let Some(arg) = Opt::next(p)? {
        if c.take(&arg, p)? || cap.take(&arg, p)? {
            continue;
        }
        let i = match arg.flag() {
            "--from" => {
                from = Some(number(p, &arg)?);
                continue;
            }
            "--to" => {
                to = Some(number(p, &arg)?);
                continue;
            }
            "--rows" => {
                terminal_rows = true;
                continue;
            }
            "--changed" => {
                changed = true;
                continue;
            }
            "--top" => 0,
            "--bottom" => 1,
            "--start" => 2,
            "--end" => 3,
            "--history" => {
                params.insert("history".into(), json!(true));
                continue;
            }
            "--ansi" => {
                params.insert("format".into(), json!("ansi"));
                continue;
            }
            _ => return Err(arg.unexpected()),
        };
        rows[i] = Some(number(p, &arg)?);
    }
    check_rows(rows)?;
    if from.is_some() || to.is_some() {
        return read_output(&c, (from, to), rows, &cap, params.is_empty() && !changed);
    }
    if terminal_rows && rows[1].is_none() {
        return Err(usage(
            "--rows goes with --bottom N: the last N rows of the terminal",
        ));
    }
    if changed && (rows.iter().any(Option::is_some) || !params.is_empty()) {
        return Err(usage(
            "--changed compares whole screens: it takes no rows, --history or --ansi",
        ));
    }
    for (key, n) in ["top", "bottom", "start", "end"].into_iter().zip(rows) {
        if let Some(n) = n {
            // `--bottom` counts lines of content, `--rows` terminal rows
            // (`pty/read`'s `bottom`, as seed 000 has it).
            let key = if key == "bottom" && !terminal_rows {
                "last"
            } else {
                key
            };
            params.insert(key.into(), json!(n));
        }
    }
    if changed {
        params.insert("changed".into(), json!(true));
    }
    cap.params(&mut params);
    params.extend(c.params());
    let client = c.client()?;
    let r = client.call("pty/read", Value::Object(params))?;
    if c.json {
        out_json(&r)
    } else {
        out_text(&with_marker(
            r["screen"].as_str().unwrap_or(""),
            &r,
            c.name(),
        ))
    }
}

/// `read --from A --to B`: the output between two transcript offsets as a
/// step showed it (lines `--start`..`--end` of it), what an omission marker
/// names. `alone`: no screen option was given with it.
fn read_output(
    c: &Common,
    range: (Option<u64>, Option<u64>),
    rows: [Option<u64>; 4],
    cap: &CapOpts,
    alone: bool,
) -> Result<(), Failure> {
    let (Some(from), Some(to)) = range else {
        return Err(usage(
            "--from and --to go together: transcript offsets, as a marker gives them",
        ));
    };
    if rows[0].is_some() || rows[1].is_some() || !alone {
        return Err(usage(
            "--from/--to read output, not the screen: no --top, --bottom, --history, --ansi or --changed",
        ));
    }
    let mut params = c.params();
    params.insert("offset".into(), json!(from));
    params.insert("to".into(), json!(to));
    params.insert("view".into(), json!(if c.raw { "raw" } else { "lines" }));
    if let [_, _, Some(a), Some(b)] = rows {
        params.insert("start".into(), json!(a));
        params.insert("end".into(), json!(b));
    }
    cap.params(&mut params);
    let r = c.client()?.call("pty/output", Value::Object(params))?;
    if c.json {
        out_json(&r)
    } else {
        out(&with_marker(r["data"].as_str().unwrap_or(""), &r, c.name()))
    }
}

/// `read`'s row selection, `[top, bottom, start, end]`: rows are numbered
/// from 1 and a selection that can only come out empty is a mistake. A
/// range past the last row is cut at it (as `pty/read` does).
fn check_rows(rows: [Option<u64>; 4]) -> Result<(), Failure> {
    match rows {
        [Some(_), Some(_), _, _] => Err(usage("--top and --bottom cannot be combined")),
        [Some(_), _, Some(_), _]
        | [Some(_), _, _, Some(_)]
        | [_, Some(_), Some(_), _]
        | [_, Some(_), _, Some(_)] => {
            Err(usage("--top/--bottom and --start/--end cannot be combined"))
        }
        [Some(0), ..] => Err(usage("--top wants at least 1 row, got 0")),
        [_, Some(0), ..] => Err(usage("--bottom wants at least 1 row, got 0")),
        [_, _, Some(_), None] | [_, _, None, Some(_)] => {
            Err(usage("--start and --end go together"))
        }
        [_, _, Some(0), _] => Err(usage("rows are numbered from 1: --start 0 names no row")),
        [_, _, Some(a), Some(b)] if b < a => Err(usage(format!(
            "--end {b} is before --start {a}: the range is 1-based and inclusive"
        ))),
        _ => Ok(()),
    }
}

fn send(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut c = Common::default();
    let mut actions: Vec<Value> = Vec::new();
    // `--stdin`'s place among the actions, read once the line is parsed.
    let mut stdin_at: Option<usize> = None;
    while let Some(arg) = Opt::next(p)? {
        if c.take(&arg, p)? {
            continue;
        }
        match arg.flag() {
            "-k" | "--key" => actions.push(key_action(value(p)?)?),
            "--stdin" if stdin_at.is_none() => {
                stdin_at = Some(actions.len());
                actions.push(json!({"text": ""}));
            }
            "--text" => actions.push(json!({"text": value(p)?})),
            "--paste" => actions.push(json!({"paste": value(p)?})),
            "--enter" => actions.push(json!({"key": "Enter"})),
            "" => actions.push(json!({"text": arg.text()?})),
            _ => return Err(arg.unexpected()),
        }
    }
    if actions.is_empty() {
        return Err(usage("send needs text or --key NAME"));
    }
    if let Some(i) = stdin_at {
        actions[i] = json!({ "text": stdin_text()? });
    }
    let mut params = c.params();
    params.insert("action".into(), json!(actions));
    let client = c.client()?;
    let r = client.call("pty/write", Value::Object(params))?;
    if c.json {
        out_json(&r)?;
    }
    report_status(&client, &c)
}

fn status_verb(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut c = Common::default();
    while let Some(arg) = Opt::next(p)? {
        if !c.take(&arg, p)? {
            return Err(arg.unexpected());
        }
    }
    let st = c.client()?.call("pty/status", Value::Object(c.params()))?;
    if c.json {
        out_json(&st)?;
    } else if let Some(activity) = st["activity"].as_str().filter(|_| st["running"] == true) {
        // Why the program is (not) settled: `waiting for input`, `timer:`,
        // `relay:`, `busy:` with who and on what.
        out_text(activity)?;
    }
    if !c.json && st["viewers"].as_u64().unwrap_or(0) > 0 {
        out_text(&format!("viewers: {}", viewers(&st)))?;
    }
    print_status(&st);
    Ok(())
}

fn list(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut c = Common::default();
    while let Some(arg) = Opt::next(p)? {
        if !c.take(&arg, p)? {
            return Err(arg.unexpected());
        }
    }
    let client = c.client()?;
    let r = match client.find()? {
        Found::Running(s) => client.call_on(s, "pty/list", json!({}))?,
        // No daemon: no sessions, which is not an error for `list`.
        Found::Absent { .. } => json!({"sessions": []}),
    };
    // A remote list says whose sessions these are: `host` or `via` in
    // JSON, a HOST column first in the table.
    let mut r = r;
    match client.target() {
        Target::Local => {}
        Target::Ssh(d) => r["host"] = json!(d.shown),
        Target::Via(v) => r["via"] = json!(v),
    }
    if c.json {
        return out_json(&r);
    }
    let place = client.target().place().map(|p| match p {
        status::Place::Host(h) | status::Place::Via(h) => h,
    });
    let columns: Vec<(&str, bool)> = place
        .iter()
        .map(|_| ("HOST", false))
        .chain(LIST_COLUMNS)
        .collect();
    let empty = Vec::new();
    let mut rows = vec![columns.iter().map(|(name, _)| name.to_string()).collect()];
    for s in r["sessions"].as_array().unwrap_or(&empty) {
        let state = match state_of(s) {
            State::Running => "running".to_string(),
            State::WaitingForInput => "waiting for input".to_string(),
            State::Exited(e) => status::exited(e),
        };
        let cmd: Vec<&str> = s["command"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut row: Vec<String> = place.iter().cloned().collect();
        row.extend([
            s["session"].as_str().unwrap_or("").to_string(),
            s["pid"].to_string(),
            state,
            format!("{}x{}", s["size"]["cols"], s["size"]["rows"]),
            status::duration(ms(&s["quietMs"])),
            s["buffered"].to_string(),
            viewers(s),
            cmd.join(" "),
        ]);
        rows.push(row);
    }
    output::out(&table(&columns, &rows))
}

/// People watching a session (`attach`), as `list` and `status` show
/// them: `0`, `1`, or `2 (typing)` when one of them holds input.
fn viewers(st: &Value) -> String {
    let n = st["viewers"].as_u64().unwrap_or(0);
    if st["viewerInput"] == true {
        format!("{n} (typing)")
    } else {
        n.to_string()
    }
}

/// `list`'s columns and whether each is aligned right (numbers) or left
/// (words); the command runs on unpadded at the end. A remote list has a
/// HOST column before them.
const LIST_COLUMNS: [(&str, bool); 8] = [
    ("SESSION", false),
    ("PID", true),
    ("STATE", false),
    ("SIZE", true),
    ("IDLE", true),
    ("BUFFER", true),
    ("VIEWERS", false),
    ("COMMAND", false),
];

/// Lay out `rows` (the header first) in columns as wide as their widest
/// cell, measured in terminal columns (a CJK name takes two per character);
/// the last column runs on unpadded.
fn table(columns: &[(&str, bool)], rows: &[Vec<String>]) -> String {
    use unicode_width::UnicodeWidthStr;
    let last = columns.len().saturating_sub(1);
    let mut width = vec![0usize; columns.len()];
    for row in rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.width());
        }
    }
    let mut text = String::new();
    for row in rows {
        let cells: Vec<String> = row[..last]
            .iter()
            .zip(&width)
            .zip(columns)
            .map(|((cell, w), (_, right))| {
                let pad = " ".repeat(w.saturating_sub(cell.width()));
                if *right {
                    format!("{pad}{cell}")
                } else {
                    format!("{cell}{pad}")
                }
            })
            .collect();
        let end = row.get(last).map_or("", String::as_str);
        text.push_str(format!("{}  {end}", cells.join(" ")).trim_end());
        text.push('\n');
    }
    text
}

fn resize(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut c = Common::default();
    let mut params = Map::new();
    let (mut cols, mut rows) = (None, None);
    while let Some(arg) = Opt::next(p)? {
        if c.take(&arg, p)? {
            continue;
        }
        match arg.flag() {
            "--cols" => cols = Some(number(p, &arg)?),
            "--rows" => rows = Some(number(p, &arg)?),
            _ => return Err(arg.unexpected()),
        };
    }
    c.no_json("resize")?;
    let (Some(cols), Some(rows)) = (cols, rows) else {
        return Err(usage("resize needs both --cols C and --rows R"));
    };
    let (cols, rows) = limits::check_size(cols, rows).map_err(usage)?;
    params.insert("cols".into(), json!(cols));
    params.insert("rows".into(), json!(rows));
    params.extend(c.params());
    let client = c.client()?;
    client.call("pty/resize", Value::Object(params))?;
    report_status(&client, &c)
}

fn signal(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut c = Common::default();
    let mut sig: Option<String> = None;
    while let Some(arg) = Opt::next(p)? {
        if c.take(&arg, p)? {
            continue;
        }
        match arg.flag() {
            "" if sig.is_none() => sig = Some(arg.text()?),
            _ => return Err(arg.unexpected()),
        }
    }
    c.no_json("signal")?;
    let sig = sig.ok_or_else(|| usage("signal needs a signal name, e.g. ptybroker signal INT"))?;
    let known = match sig.parse::<i32>() {
        Ok(n) => ops::signal_by_number(n),
        Err(_) => ops::signal_by_name(&sig),
    };
    let sig = known.ok_or_else(|| {
        usage(format!(
            "unknown signal {sig:?} (use e.g. INT, TERM, KILL, HUP, QUIT, USR1, WINCH)"
        ))
    })?;
    let mut params = c.params();
    params.insert("signal".into(), json!(sig.as_raw()));
    let client = c.client()?;
    client.call("pty/signal", Value::Object(params))?;
    report_status(&client, &c)
}

fn record(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut c = Common::default();
    let mut words: Vec<String> = Vec::new();
    while let Some(arg) = Opt::next(p)? {
        if c.take(&arg, p)? {
            continue;
        }
        match arg.flag() {
            "" => words.push(arg.text()?),
            _ => return Err(arg.unexpected()),
        }
    }
    let mut params = c.params();
    match words.as_slice() {
        [a, path] if a == "start" => {
            // The daemon may run elsewhere: make the path the caller's.
            let path = std::env::current_dir()
                .map(|d| d.join(path))
                .unwrap_or_else(|_| path.into());
            params.insert("action".into(), json!("start"));
            params.insert("path".into(), json!(path));
        }
        [a] if a == "stop" => {
            params.insert("action".into(), json!("stop"));
        }
        [a, label] if a == "marker" => {
            params.insert("action".into(), json!("marker"));
            params.insert("label".into(), json!(label));
        }
        _ => return Err(usage("record wants: start FILE.cast | stop | marker LABEL")),
    }
    let client = c.client()?;
    let r = client.call("pty/record", Value::Object(params))?;
    if c.json {
        out_json(&r)?;
    } else if let Some(path) = r["path"].as_str() {
        output::out(&format!("{path} ({} events)\n", r["events"]))?;
    }
    report_status(&client, &c)
}
