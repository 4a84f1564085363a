//! The `ptybroker` command line: pty-prompt's verbs (seed 002) and the rest,
//! each a client of the per-user daemon. One function per verb, found by
//! name in [`VERBS`]; each parses its options with lexopt, makes its calls and
//! prints the program's output on stdout and one status line on stderr.

use std::time::{Duration, SystemTime};

use lexopt::ValueExt;
use serde_json::{json, Map, Value};

use crate::client::{CallError, Client, Found};
use crate::limits;
use crate::session::Exit;
use crate::status::{self, State};

/// A verb's failure: printed in the status line's bracketed form.
pub struct Failure {
    pub message: String,
    /// 1: the daemon reported an error or could not be reached; 2: usage.
    pub exit: u8,
}

impl From<CallError> for Failure {
    fn from(e: CallError) -> Failure {
        Failure {
            message: e.message,
            exit: 1,
        }
    }
}

impl From<lexopt::Error> for Failure {
    fn from(e: lexopt::Error) -> Failure {
        usage(e.to_string())
    }
}

fn usage(msg: impl Into<String>) -> Failure {
    Failure {
        message: format!("{} (see ptybroker --help)", msg.into()),
        exit: 2,
    }
}

type Verb = fn(&mut lexopt::Parser) -> Result<(), Failure>;

/// An argument detached from the parser's borrow, so that shared options can
/// be handled by one function while the verb still owns the parser.
enum Opt {
    /// `-s` or `--session`, as written.
    Flag(String),
    Value(std::ffi::OsString),
}

impl Opt {
    fn next(p: &mut lexopt::Parser) -> Result<Option<Opt>, Failure> {
        Ok(match p.next()? {
            None => None,
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

fn number(p: &mut lexopt::Parser) -> Result<u64, Failure> {
    Ok(p.value()?.parse::<u64>()?)
}

/// Every client verb, by name. The man page documents the same list.
pub const VERBS: &[(&str, Verb)] = &[
    ("start", start),
    ("step", step),
    ("wait", wait),
    ("stop", stop),
    ("kill-session", kill_session),
    ("read", read),
    ("send", send),
    ("status", status_verb),
    ("list", list),
    ("resize", resize),
    ("signal", signal),
    ("record", record),
];

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
}

impl Common {
    /// Take `arg` if it is a common option; `Ok(false)` leaves it to the verb.
    fn take(&mut self, arg: &Opt, p: &mut lexopt::Parser) -> Result<bool, Failure> {
        match arg.flag() {
            "-s" | "--session" => self.session = Some(value(p)?),
            "-t" | "--timeout" => self.timeout = Some(number(p)?),
            "--max-wait" => self.max_wait = Some(number(p)?),
            "--raw" => self.raw = true,
            "--screen" => self.view = Some("screen"),
            "--stream" => self.view = Some("stream"),
            "--json" => self.json = true,
            "--quiet-only" => self.quiet_only = true,
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn name(&self) -> &str {
        self.session.as_deref().unwrap_or("default")
    }

    fn params(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("session".into(), json!(self.name()));
        m
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
    eprintln!(
        "{}",
        status::line(
            SystemTime::now(),
            ms(&status["runningMs"]),
            ms(&status["quietMs"]),
            state_of(status)
        )
    );
}

/// Ask for the session's status and print it as the status line: the tail
/// of every verb that acts without waiting for an answer.
fn report_status(client: &Client, c: &Common) -> Result<(), Failure> {
    let st = client.call("pty/status", Value::Object(c.params()))?;
    print_status(&st);
    Ok(())
}

fn print_output(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    if !text.is_empty() && !text.ends_with('\n') {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}

fn step_params(c: &Common, text: Option<String>) -> Value {
    let mut p = c.params();
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

fn print_step(r: &Value) {
    print_output(r["output"].as_str().unwrap_or(""));
    if r["dropped"].as_u64().unwrap_or(0) > 0 {
        eprintln!(
            "{}",
            status::error_line(&format!(
                "{} bytes of output were dropped before they could be shown (the buffer keeps the last {} KiB)",
                r["dropped"],
                limits::TRANSCRIPT_BYTES / 1024
            ))
        );
    }
    print_status(&r["status"]);
}

fn start(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut c = Common::default();
    let mut argv: Vec<String> = Vec::new();
    let mut params = Map::new();
    let mut env: Map<String, Value> = Map::new();
    let mut clean = false;
    while let Some(arg) = Opt::next(p)? {
        if c.take(&arg, p)? {
            continue;
        }
        match arg.flag() {
            "--cols" => {
                params.insert("cols".into(), json!(number(p)?));
            }
            "--rows" => {
                params.insert("rows".into(), json!(number(p)?));
            }
            "--cwd" => {
                params.insert("cwd".into(), json!(value(p)?));
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
    // The child runs as if the caller had forked it: the caller's working
    // directory and environment, not the daemon's.
    if !params.contains_key("cwd") {
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
                if !["TERM", "TERMCAP", "COLUMNS", "LINES"].contains(&k) {
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
    let client = Client::new();
    let (stream, note) = client.connect_or_start()?;
    if let Some(n) = note {
        eprintln!("{}", status::error_line(&n));
    }
    Client::call_on(stream, "pty/start", Value::Object(params))?;
    let r = client.call("pty/step", step_params(&c, None))?;
    print_step(&r);
    Ok(())
}

fn step(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut c = Common::default();
    let mut text: Option<String> = None;
    while let Some(arg) = Opt::next(p)? {
        if c.take(&arg, p)? {
            continue;
        }
        match arg.flag() {
            "" if text.is_none() => text = Some(arg.text()?),
            _ => return Err(arg.unexpected()),
        }
    }
    let r = Client::new().call("pty/step", step_params(&c, text))?;
    print_step(&r);
    Ok(())
}

fn wait(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut c = Common::default();
    let mut matching: Option<String> = None;
    while let Some(arg) = Opt::next(p)? {
        if c.take(&arg, p)? {
            continue;
        }
        match arg.flag() {
            "-m" | "--match" => matching = Some(value(p)?),
            _ => return Err(arg.unexpected()),
        }
    }
    let client = Client::new();
    let mut params = c.params();
    let timeout = c.max_wait.unwrap_or(3_600_000);
    params.insert("timeout".into(), json!(timeout));
    match &matching {
        Some(m) => params.insert("match".into(), json!(m)),
        None => params.insert("exit".into(), json!(true)),
    };
    let w = client.call("pty/wait", Value::Object(params))?;
    let mut out = c.params();
    out.insert("strip".into(), json!(!c.raw));
    let o = client.call("pty/output", Value::Object(out))?;
    print_output(o["data"].as_str().unwrap_or(""));
    report_status(&client, &c)?;
    if matching.is_some() && w["reason"] == "exited" {
        return Err(Failure {
            message: "the program exited before the text appeared".into(),
            exit: 1,
        });
    }
    if w["reason"] == "timeout" {
        let what = if matching.is_some() {
            "the text to appear"
        } else {
            "the program to exit"
        };
        return Err(Failure {
            message: format!("gave up after {timeout} ms waiting for {what}"),
            exit: 1,
        });
    }
    Ok(())
}

fn stop_with(p: &mut lexopt::Parser, force: bool) -> Result<(), Failure> {
    let mut c = Common::default();
    while let Some(arg) = Opt::next(p)? {
        if !c.take(&arg, p)? {
            return Err(arg.unexpected());
        }
    }
    let mut params = c.params();
    params.insert("force".into(), json!(force));
    let r = Client::new().call("pty/stop", Value::Object(params))?;
    let exit = match (r["signal"].as_i64(), r["exitCode"].as_i64()) {
        (Some(s), _) => Some(Exit::Signal(s as i32)),
        (None, Some(code)) => Some(Exit::Code(code as i32)),
        _ => None,
    };
    eprintln!(
        "{}",
        status::stopped_line(SystemTime::now(), ms(&r["ranMs"]), exit, c.name())
    );
    Ok(())
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
    while let Some(arg) = Opt::next(p)? {
        if c.take(&arg, p)? {
            continue;
        }
        let key = match arg.flag() {
            "--top" => "top",
            "--bottom" => "bottom",
            "--start" => "start",
            "--end" => "end",
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
        params.insert(key.into(), json!(number(p)?));
    }
    params.extend(c.params());
    let client = Client::new();
    let r = client.call("pty/read", Value::Object(params))?;
    if c.json {
        println!("{r}");
    } else {
        print_output(r["screen"].as_str().unwrap_or(""));
    }
    Ok(())
}

fn send(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut c = Common::default();
    let mut actions: Vec<Value> = Vec::new();
    while let Some(arg) = Opt::next(p)? {
        if c.take(&arg, p)? {
            continue;
        }
        match arg.flag() {
            "-k" | "--key" => actions.push(json!({"key": value(p)?})),
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
    let mut params = c.params();
    params.insert("action".into(), json!(actions));
    let client = Client::new();
    let r = client.call("pty/write", Value::Object(params))?;
    if c.json {
        println!("{r}");
    }
    report_status(&client, &c)?;
    Ok(())
}

fn status_verb(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut c = Common::default();
    while let Some(arg) = Opt::next(p)? {
        if !c.take(&arg, p)? {
            return Err(arg.unexpected());
        }
    }
    let st = Client::new().call("pty/status", Value::Object(c.params()))?;
    if c.json {
        println!("{st}");
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
    let client = Client::new();
    let r = match client.find()? {
        Found::Running(s) => Client::call_on(s, "pty/list", json!({}))?,
        // No daemon: no sessions, which is not an error for `list`.
        Found::Absent { .. } => json!({"sessions": []}),
    };
    if c.json {
        println!("{r}");
        return Ok(());
    }
    let empty = Vec::new();
    let sessions = r["sessions"].as_array().unwrap_or(&empty);
    println!(
        "{:<16} {:>7} {:<22} {:>8} {:>8} {:>9}  COMMAND",
        "SESSION", "PID", "STATE", "SIZE", "IDLE", "BUFFER"
    );
    for s in sessions {
        let state = match state_of(s) {
            State::Running => "running".to_string(),
            State::WaitingForInput => "waiting for input".to_string(),
            State::Exited(e) => status::exited(e),
        };
        let cmd: Vec<&str> = s["command"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        println!(
            "{:<16} {:>7} {:<22} {:>8} {:>8} {:>9}  {}",
            s["session"].as_str().unwrap_or(""),
            s["pid"],
            state,
            format!("{}x{}", s["size"]["cols"], s["size"]["rows"]),
            status::duration(ms(&s["quietMs"])),
            s["buffered"],
            cmd.join(" ")
        );
    }
    Ok(())
}

fn resize(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut c = Common::default();
    let mut params = Map::new();
    while let Some(arg) = Opt::next(p)? {
        if c.take(&arg, p)? {
            continue;
        }
        match arg.flag() {
            "--cols" => params.insert("cols".into(), json!(number(p)?)),
            "--rows" => params.insert("rows".into(), json!(number(p)?)),
            _ => return Err(arg.unexpected()),
        };
    }
    params.extend(c.params());
    let client = Client::new();
    client.call("pty/resize", Value::Object(params))?;
    report_status(&client, &c)?;
    Ok(())
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
    let sig = sig.ok_or_else(|| usage("signal needs a signal name, e.g. ptybroker signal INT"))?;
    let mut params = c.params();
    params.insert("signal".into(), json!(sig));
    let client = Client::new();
    client.call("pty/signal", Value::Object(params))?;
    report_status(&client, &c)?;
    Ok(())
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
    let client = Client::new();
    let r = client.call("pty/record", Value::Object(params))?;
    if let Some(path) = r["path"].as_str() {
        println!("{path} ({} events)", r["events"]);
    }
    report_status(&client, &c)?;
    Ok(())
}
