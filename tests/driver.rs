//! `ptybroker driver` (seed 003) driven through the real binary by a client
//! of the protocol: every method with real programs, every error code from a
//! real bad input, the exact mouse bytes a program receives, asciicast
//! recordings and SVG captures.
//!
//! Timeouts here are generous upper bounds, never expectations of speed.

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::Duration;

use common::{eventually, Sandbox, BIN};
use serde_json::{json, Value};

/// Longest we wait for any one answer.
const LIMIT: Duration = Duration::from_secs(90);
/// Wait timeouts we pass to the driver: long enough for a loaded machine.
const WAIT_MS: u64 = 30_000;

/// A client of the driver protocol over the child's stdin/stdout.
struct Client {
    sb: Sandbox,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    /// Answers read while looking for another id.
    stash: HashMap<String, Value>,
    /// Answers in the order they arrived (after the hello).
    order: Vec<String>,
    next_id: u64,
    hello: Value,
}

impl Client {
    fn start(name: &str) -> Client {
        let sb = Sandbox::new(name);
        let mut cmd = Command::new(BIN);
        cmd.arg("driver").current_dir(&sb.root);
        sb.env(&mut cmd);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().expect("spawn ptybroker driver");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("driver wrote a line that is not JSON ({e}): {line:?}")
                });
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let hello = rx.recv_timeout(LIMIT).expect("hello line");
        Client {
            sb,
            child,
            stdin,
            lines: rx,
            stash: HashMap::new(),
            order: Vec::new(),
            next_id: 0,
            hello,
        }
    }

    /// Write raw bytes (a line should end in `\n`).
    fn raw(&mut self, bytes: &[u8]) {
        let w = self.stdin.as_mut().expect("stdin open");
        w.write_all(bytes).expect("write to driver");
        w.flush().expect("flush");
    }

    /// The next line the driver writes, in arrival order.
    fn next_line(&mut self) -> Value {
        let v = self
            .lines
            .recv_timeout(LIMIT)
            .expect("the driver answered within the limit");
        self.order.push(v["id"].to_string());
        v
    }

    /// The answer with `id`, keeping others for later.
    fn answer(&mut self, id: &Value) -> Value {
        let key = id.to_string();
        loop {
            if let Some(v) = self.stash.remove(&key) {
                return v;
            }
            let v = self.next_line();
            assert!(
                v["type"] == "response" || v["type"] == "error",
                "every line after hello is a response or an error: {v}"
            );
            self.stash.insert(v["id"].to_string(), v);
        }
    }

    /// Send a request without waiting; returns its id.
    fn post(&mut self, method: &str, session: Option<&str>, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        let mut req = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            req["sessionId"] = json!(s);
        }
        self.raw(format!("{req}\n").as_bytes());
        id
    }

    fn call(&mut self, method: &str, session: &str, params: Value) -> Value {
        let id = self.post(method, Some(session), params);
        let v = self.answer(&id);
        assert_eq!(v["id"], id, "the answer carries the request's id: {v}");
        v
    }

    /// A call that must succeed; its result.
    fn ok(&mut self, method: &str, session: &str, params: Value) -> Value {
        let v = self.call(method, session, params.clone());
        assert_eq!(v["type"], "response", "{method} {params} failed: {v}");
        v["result"].clone()
    }

    /// A call that must fail; `(code, message)`.
    fn err(&mut self, method: &str, session: &str, params: Value) -> (String, String) {
        let v = self.call(method, session, params.clone());
        assert_eq!(v["type"], "error", "{method} {params} should fail: {v}");
        (
            v["error"]["code"].as_str().unwrap_or_default().to_string(),
            v["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        )
    }

    /// A raw line that must get an error; `(id, code, message)`.
    fn line_err(&mut self, line: &[u8]) -> (Value, String, String) {
        self.raw(line);
        let v = self.next_line();
        assert_eq!(
            v["type"],
            "error",
            "{:?} should fail: {v}",
            String::from_utf8_lossy(line)
        );
        (
            v["id"].clone(),
            v["error"]["code"].as_str().unwrap_or_default().to_string(),
            v["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        )
    }

    fn launch(&mut self, session: &str, command: &[&str], mut params: Value) -> Value {
        params["command"] = json!(command);
        self.ok("launch", session, params)
    }

    fn wait_text(&mut self, session: &str, text: &str) -> Value {
        self.ok(
            "waitForText",
            session,
            json!({"text": text, "timeoutMs": WAIT_MS}),
        )
    }

    fn capture(&mut self, session: &str, params: Value) -> Value {
        let mut p = json!({"settleMs": 300, "deadlineMs": WAIT_MS});
        if let (Value::Object(p), Value::Object(extra)) = (&mut p, params) {
            p.extend(extra);
        }
        self.ok("capture", session, p)
    }

    /// Close stdin and wait (bounded) for the driver to exit; then nothing
    /// it started may be left.
    fn finish(mut self) -> ExitStatus {
        self.stdin.take();
        let st = self.wait_exit();
        self.assert_nothing_left();
        st
    }

    fn wait_exit(&mut self) -> ExitStatus {
        eventually(LIMIT, || self.child.try_wait().ok().flatten())
            .expect("the driver exits at end of input")
    }

    fn assert_nothing_left(&self) {
        let left = eventually(Duration::from_secs(30), || {
            let p = self.sb.processes();
            p.is_empty().then_some(())
        });
        assert!(
            left.is_some(),
            "processes left behind: {:?}",
            self.sb.processes()
        );
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.stdin.take();
        if eventually(Duration::from_secs(10), || {
            self.child.try_wait().ok().flatten()
        })
        .is_none()
        {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn sh(script: &str) -> Vec<String> {
    vec!["/bin/sh".into(), "-c".into(), script.into()]
}

#[test]
fn hello_then_a_shell_through_every_session_method() {
    let mut c = Client::start("drv-shell");
    assert_eq!(c.hello["type"], "hello");
    assert_eq!(c.hello["protocolVersion"], 2);
    assert_eq!(c.hello["terminalControlVersion"], env!("CARGO_PKG_VERSION"));
    assert_eq!(c.hello["capabilities"], json!(["mouse"]));

    let r = c.launch(
        "app",
        &["bash", "--norc", "--noprofile"],
        json!({"cols": 70, "rows": 12, "env": {"PS1": "ready$ ", "TERM": "xterm-256color"}}),
    );
    assert_eq!(r["sessionId"], "app");
    assert_eq!(
        (r["cols"].as_u64(), r["rows"].as_u64()),
        (Some(70), Some(12))
    );
    assert!(r["pid"].as_i64().is_some_and(|p| p > 0), "{r}");
    c.wait_text("app", "ready$");

    let st = c.ok("status", "app", json!({}));
    assert_eq!(st["running"], true);
    assert_eq!(st["exitCode"], Value::Null);
    assert_eq!(st["cols"], 70);

    // Ordered input: text, a named key, raw bytes and single-letter control.
    let sent = c.ok(
        "send",
        "app",
        json!({"input": [
            {"type": "text", "value": "echo one"},
            {"type": "key", "value": "enter"},
            {"type": "bytes", "value": [101, 99, 104, 111, 32, 116, 119, 111]},
            {"type": "control", "value": "m"},
        ]}),
    );
    assert_eq!(sent["written"], 18);
    let w = c.ok(
        "waitForText",
        "app",
        json!({"regex": "(?m)^t\\w+$", "timeoutMs": WAIT_MS}),
    );
    assert_eq!(w["matched"], "two");

    c.ok(
        "send",
        "app",
        json!({"input": [{"type": "text", "value": "printf '\\033[1;31m\\122ED\\033[0m\\n'\r"}]}),
    );
    c.wait_text("app", "RED");
    let idle = c.ok(
        "waitForIdle",
        "app",
        json!({"settleMs": 200, "timeoutMs": WAIT_MS}),
    );
    assert_eq!(idle["reason"], "idle");

    let cap = c.capture("app", json!({}));
    assert_eq!(cap["reason"], "idle", "{cap}");
    let text = cap["text"].as_str().unwrap_or_default();
    assert!(text.contains("\none\n"), "{text:?}");
    let frame = &cap["frame"];
    assert_eq!(
        (frame["cols"].as_u64(), frame["rows"].as_u64()),
        (Some(70), Some(12))
    );
    let lines = frame["lines"].as_array().expect("frame lines");
    assert_eq!(lines.len(), 12);
    let red = lines
        .iter()
        .flat_map(|l| l["runs"].as_array().cloned().unwrap_or_default())
        .find(|run| run["text"] == "RED")
        .expect("a run of its own for the red text");
    assert_eq!(red["style"]["bold"], true);
    assert_eq!(red["style"]["fg"], 1);
    let cursor = &frame["cursor"];
    assert_eq!(cursor["visible"], true);
    assert_eq!(cursor["style"], "block");
    let row = cursor["row"].as_u64().expect("cursor row") as usize;
    assert!(lines[row]["text"]
        .as_str()
        .is_some_and(|t| t.starts_with("ready$")));
    assert!(cap.get("ansi").is_none() && cap.get("svg").is_none());

    // Enough lines to scroll: logs keeps what scrolled off.
    c.ok("send", "app", json!({"input": [{"type": "text", "value": "for i in $(seq 1 30); do echo line$i; done\r"}]}));
    c.wait_text("app", "line30");
    let logs = c.ok("logs", "app", json!({}));
    let history = logs["text"].as_str().unwrap_or_default();
    assert!(
        history.contains("\nline1\n") && history.contains("\nline30\n"),
        "{history:?}"
    );
    assert!(history.contains("echo one\none\n"), "{history:?}");
    let tail = c.ok("logs", "app", json!({"maxLines": 2}));
    assert_eq!(tail["lines"], 2, "{tail}");

    let r = c.ok("resize", "app", json!({"cols": 90, "rows": 20}));
    assert_eq!(r, json!({"cols": 90, "rows": 20}));
    c.ok(
        "send",
        "app",
        json!({"input": [{"type": "text", "value": "echo size $(tput cols)x$(tput lines)\r"}]}),
    );
    c.wait_text("app", "size 90x20");
    assert_eq!(c.ok("status", "app", json!({}))["cols"], 90);

    let stopped = c.ok("stop", "app", json!({}));
    assert_eq!(stopped["sessionId"], "app");
    assert!(
        stopped["exitCode"].is_i64() || stopped["signal"].is_string(),
        "{stopped}"
    );
    let (code, msg) = c.err("status", "app", json!({}));
    assert_eq!(code, "REQUEST_FAILED");
    assert!(msg.contains("app"), "{msg}");

    // A session left running is killed at end of input.
    c.launch("left", &["sleep", "600"], json!({}));
    assert!(c.finish().success());
}

#[test]
fn launch_environment_cwd_and_exit_status() {
    let mut c = Client::start("drv-env");
    let dir = c.sb.work("here");
    let argv = sh("echo \"[$FOO][${HOME-unset}][$TERM][$(pwd)]\"; exit 7");
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    c.launch(
        "e",
        &argv,
        json!({"inheritEnv": false, "env": {"FOO": "bar"}, "cwd": dir}),
    );
    let exit = c.ok("waitForExit", "e", json!({"timeoutMs": WAIT_MS}));
    assert_eq!(exit["exitCode"], 7);
    assert_eq!(exit["signal"], Value::Null);
    let cap = c.capture("e", json!({}));
    assert_eq!(cap["reason"], "exited");
    let want = format!("[bar][unset][xterm-256color][{}]", dir.display());
    assert!(
        cap["text"].as_str().is_some_and(|t| t.contains(&want)),
        "{cap}"
    );
    // The last screen stays readable after exit; input is refused.
    let st = c.ok("status", "e", json!({}));
    assert_eq!(
        (st["running"].as_bool(), st["exitCode"].as_i64()),
        (Some(false), Some(7))
    );
    let (code, msg) = c.err(
        "send",
        "e",
        json!({"input": [{"type": "text", "value": "x"}]}),
    );
    assert_eq!(
        (code.as_str(), msg.as_str()),
        ("REQUEST_FAILED", "session e has exited")
    );

    // Killed by a signal: a null exit code and the signal's name.
    c.launch("k", &["/bin/sh", "-c", "kill -TERM $$"], json!({}));
    let exit = c.ok("waitForExit", "k", json!({"timeoutMs": WAIT_MS}));
    assert_eq!(
        (exit["exitCode"].clone(), exit["signal"].clone()),
        (Value::Null, json!("SIGTERM"))
    );

    // A program that closes its terminal but keeps running.
    c.launch(
        "closed",
        &["python3", "-c", "import os, time\nprint('closing', flush=True)\nfor fd in (0, 1, 2): os.close(fd)\ntime.sleep(600)"],
        json!({}),
    );
    c.wait_text("closed", "closing");
    let closed = eventually(LIMIT, || {
        let st = c.ok("status", "closed", json!({}));
        (st["outputClosed"] == true).then_some(st)
    });
    assert!(closed.is_some_and(|st| st["running"] == true));
    let cap = c.capture("closed", json!({"settleMs": 100}));
    assert_eq!(cap["reason"], "outputclosed", "{cap}");
    assert!(c.finish().success());
}

#[test]
fn every_error_code_from_real_bad_input() {
    let mut c = Client::start("drv-errors");
    // INVALID_REQUEST: malformed JSON and shapes, with the id when there is one.
    let (id, code, _) = c.line_err(b"{\"id\": 1, \"method\": \n");
    assert_eq!((id, code.as_str()), (Value::Null, "INVALID_REQUEST"));
    let (id, code, _) = c.line_err(b"[1, 2]\n");
    assert_eq!((id, code.as_str()), (Value::Null, "INVALID_REQUEST"));
    let (id, code, _) = c.line_err(b"{\"method\": \"status\", \"sessionId\": \"a\"}\n");
    assert_eq!((id, code.as_str()), (Value::Null, "INVALID_REQUEST"));
    let (id, code, msg) =
        c.line_err(b"{\"id\": 5, \"method\": \"teleport\", \"sessionId\": \"a\"}\n");
    assert_eq!((id, code.as_str()), (json!(5), "INVALID_REQUEST"));
    assert!(
        msg.contains("teleport") && msg.contains("waitForText"),
        "{msg}"
    );
    let (id, code, msg) = c.line_err(b"{\"id\": 6, \"method\": \"status\"}\n");
    assert_eq!((id, code.as_str()), (json!(6), "INVALID_REQUEST"));
    assert!(msg.contains("sessionId"), "{msg}");
    let (id, code, _) =
        c.line_err(b"{\"id\": 7, \"method\": \"status\", \"sessionId\": \"no/slash\"}\n");
    assert_eq!((id, code.as_str()), (json!(7), "INVALID_REQUEST"));
    let (id, code, _) =
        c.line_err(b"{\"id\": 8, \"method\": \"status\", \"sessionId\": \"a\", \"params\": [1]}\n");
    assert_eq!((id, code.as_str()), (json!(8), "INVALID_REQUEST"));
    for (method, params) in [
        ("launch", json!({})),
        ("launch", json!({"command": "ls"})),
        ("launch", json!({"command": ["ls"], "cols": "wide"})),
        ("launch", json!({"command": ["ls"], "cols": 5000})),
        (
            "send",
            json!({"input": [{"type": "key", "value": "Hyper+Q"}]}),
        ),
        (
            "send",
            json!({"input": [{"type": "control", "value": "ab"}]}),
        ),
        (
            "send",
            json!({"input": [{"type": "bytes", "value": [256]}]}),
        ),
        (
            "send",
            json!({"input": [{"type": "sound", "value": "beep"}]}),
        ),
        ("send", json!({"input": []})),
        ("mouse", json!({"action": "wiggle", "x": 1, "y": 1})),
        ("mouse", json!({"action": "click", "x": -1, "y": 1})),
        (
            "mouse",
            json!({"action": "click", "x": 1, "y": 1, "button": "fourth"}),
        ),
        ("waitForText", json!({"regex": "(unclosed"})),
        ("waitForText", json!({})),
        ("capture", json!({"settleMs": "soon"})),
        ("resize", json!({"cols": 80})),
        ("recording", json!({"action": "pause"})),
    ] {
        let (code, msg) = c.err(method, "a", params.clone());
        assert_eq!(code, "INVALID_REQUEST", "{method} {params}: {msg}");
        assert!(!msg.is_empty());
    }

    // READ_ERROR, with a null id: a line that is not UTF-8, and one too long.
    let (id, code, msg) =
        c.line_err(b"{\"id\": 9, \"method\": \"status\", \"sessionId\": \"\xff\xfe\"}\n");
    assert_eq!((id, code.as_str()), (Value::Null, "READ_ERROR"), "{msg}");
    let mut long = vec![b' '; 4 * 1024 * 1024 + 10];
    long.push(b'\n');
    let (id, code, msg) = c.line_err(&long);
    assert_eq!((id, code.as_str()), (Value::Null, "READ_ERROR"), "{msg}");

    // REQUEST_FAILED: valid requests whose operation fails.
    let (code, msg) = c.err("status", "ghost", json!({}));
    assert_eq!(code, "REQUEST_FAILED");
    assert!(msg.contains("ghost"), "{msg}");
    let (code, msg) = c.err("launch", "x", json!({"command": ["/nonexistent/program"]}));
    assert_eq!(code, "REQUEST_FAILED", "{msg}");
    let (code, msg) = c.err(
        "launch",
        "x",
        json!({"command": ["true"], "host": "opentui"}),
    );
    assert_eq!(code, "REQUEST_FAILED");
    assert!(msg.contains("opentui"), "{msg}");
    c.launch("a", &["/bin/sh", "-c", "echo started; read x"], json!({}));
    c.wait_text("a", "started");
    let (code, msg) = c.err("launch", "a", json!({"command": ["true"]}));
    assert_eq!(code, "REQUEST_FAILED");
    assert!(msg.contains("already running"), "{msg}");
    let (code, msg) = c.err("mouse", "a", json!({"action": "click", "x": 1, "y": 1}));
    assert_eq!(code, "REQUEST_FAILED");
    assert!(msg.contains("mouse reporting is off"), "{msg}");
    let (code, msg) = c.err(
        "waitForText",
        "a",
        json!({"text": "never shown", "timeoutMs": 300}),
    );
    assert_eq!(code, "REQUEST_FAILED");
    assert!(msg.contains("never shown"), "{msg}");
    let (code, _) = c.err("recording", "a", json!({"action": "stop"}));
    assert_eq!(code, "REQUEST_FAILED");
    let (code, msg) = c.err(
        "recording",
        "a",
        json!({"action": "start", "path": "/nonexistent/dir/x.cast"}),
    );
    assert_eq!(code, "REQUEST_FAILED", "{msg}");
    c.ok(
        "send",
        "a",
        json!({"input": [{"type": "key", "value": "Enter"}]}),
    );
    c.ok("waitForExit", "a", json!({"timeoutMs": WAIT_MS}));
    let (code, msg) = c.err(
        "send",
        "a",
        json!({"input": [{"type": "text", "value": "late"}]}),
    );
    assert_eq!(
        (code.as_str(), msg.as_str()),
        ("REQUEST_FAILED", "session a has exited")
    );
    let (code, msg) = c.err("waitForExit", "ghost", json!({}));
    assert_eq!(code, "REQUEST_FAILED", "{msg}");

    // After all that the driver still answers.
    assert_eq!(c.hello["type"], "hello");
    c.launch("b", &["/bin/sh", "-c", "echo fine"], json!({}));
    c.wait_text("b", "fine");
    assert!(c.finish().success());
}

/// A program that turns on the given mouse modes, reads its terminal raw and
/// prints everything received so far as hex.
const MOUSE_PROGRAM: &str = r#"
import os, sys, tty
tty.setraw(0)
sys.stdout.write(sys.argv[1] + "ready\r\n")
sys.stdout.flush()
seen = b""
while True:
    b = os.read(0, 1024)
    if not b:
        break
    seen += b
    sys.stdout.write("all " + seen.hex() + "\r\n")
    sys.stdout.flush()
"#;

fn mouse_program(modes: &str) -> Vec<String> {
    vec![
        "python3".into(),
        "-c".into(),
        MOUSE_PROGRAM.into(),
        modes.into(),
    ]
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn sgr_right_click_with_shift_reaches_the_program_exactly() {
    let mut c = Client::start("drv-mouse");
    let cast = c.sb.root.join("mouse.cast");
    let argv = mouse_program("\x1b[?1000h\x1b[?1006h");
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    c.launch("m", &argv, json!({"cols": 80, "rows": 24, "record": cast}));
    c.wait_text("m", "ready");

    // Refusals send nothing: hover without any-event tracking, a cell outside
    // the viewport, an up with no button held.
    for (params, want) in [
        (json!({"action": "move", "x": 3, "y": 3}), "hover"),
        (json!({"action": "click", "x": 80, "y": 0}), "outside"),
        (json!({"action": "click", "x": 0, "y": 24}), "outside"),
        (json!({"action": "up", "x": 1, "y": 1}), "no button is held"),
    ] {
        let (code, msg) = c.err("mouse", "m", params.clone());
        assert_eq!(code, "REQUEST_FAILED", "{params}");
        assert!(msg.contains(want), "{params}: {msg}");
    }

    let r = c.call(
        "mouse",
        "m",
        json!({"action": "click", "x": 12, "y": 4, "button": "right", "shift": true}),
    );
    assert_eq!(r["type"], "response");
    assert_eq!(r["result"], Value::Null, "success returns null: {r}");
    let bytes = b"\x1b[<6;13;5M\x1b[<6;13;5m";
    c.wait_text("m", &format!("all {}", hex(bytes)));

    // Holding a button: a second press is refused, up must match it.
    c.ok("mouse", "m", json!({"action": "down", "x": 0, "y": 0}));
    let (code, msg) = c.err(
        "mouse",
        "m",
        json!({"action": "click", "x": 1, "y": 1, "button": "middle"}),
    );
    assert_eq!(code, "REQUEST_FAILED");
    assert!(msg.contains("held"), "{msg}");
    let (code, _) = c.err(
        "mouse",
        "m",
        json!({"action": "up", "x": 0, "y": 0, "button": "right"}),
    );
    assert_eq!(code, "REQUEST_FAILED");
    c.ok("mouse", "m", json!({"action": "up", "x": 0, "y": 0}));
    let all: Vec<u8> = [&bytes[..], b"\x1b[<0;1;1M", b"\x1b[<0;1;1m"].concat();
    c.wait_text("m", &format!("all {}", hex(&all)));

    // Mouse input is recorded as input, with its actual bytes.
    c.ok("recording", "m", json!({"action": "stop"}));
    let text = std::fs::read_to_string(&cast).expect("recording written");
    let inputs: Vec<String> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).expect("event line is JSON"))
        .filter(|e| e[1] == "i")
        .map(|e| e[2].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        inputs,
        ["\x1b[<6;13;5M\x1b[<6;13;5m", "\x1b[<0;1;1M", "\x1b[<0;1;1m"],
        "{text}"
    );
    assert!(c.finish().success());
}

#[test]
fn mouse_follows_other_tracking_modes_and_encodings() {
    let mut c = Client::start("drv-mouse-modes");
    // Any-event tracking with the legacy encoding: hover is reported.
    let argv = mouse_program("\x1b[?1003h");
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    c.launch("any", &argv, json!({}));
    c.wait_text("any", "ready");
    c.ok(
        "mouse",
        "any",
        json!({"action": "move", "x": 2, "y": 1, "alt": true}),
    );
    // Motion (32) + no button (3) + alt (8), then x+1 and y+1, each + 32.
    c.wait_text(
        "any",
        &format!("all {}", hex(&[0x1b, b'[', b'M', 32 + 43, 32 + 3, 32 + 2])),
    );

    // urxvt encoding under normal tracking, with ctrl.
    let argv = mouse_program("\x1b[?1000h\x1b[?1015h");
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    c.launch("urxvt", &argv, json!({}));
    c.wait_text("urxvt", "ready");
    c.ok(
        "mouse",
        "urxvt",
        json!({"action": "down", "x": 9, "y": 0, "button": "middle", "ctrl": true}),
    );
    c.wait_text("urxvt", &format!("all {}", hex(b"\x1b[49;10;1M")));
    assert!(c.finish().success());
}

/// The `o` events of an asciicast, concatenated.
fn cast_output(cast: &str) -> String {
    let mut lines = cast.lines();
    let header: Value = serde_json::from_str(lines.next().expect("header")).expect("header JSON");
    assert_eq!(header["version"], 2, "{header}");
    assert!(
        header["width"].is_u64() && header["height"].is_u64(),
        "{header}"
    );
    assert!(header["timestamp"].is_u64(), "{header}");
    let mut out = String::new();
    let mut last = 0.0;
    for l in lines {
        let e: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("event {l:?}: {e}"));
        let ev = e.as_array().expect("event is an array");
        assert_eq!(ev.len(), 3, "{l}");
        let t = ev[0].as_f64().expect("time is a number");
        assert!(t >= last, "event times never go back: {l}");
        last = t;
        let code = ev[1].as_str().expect("code is a string");
        assert!(["o", "i", "r", "m"].contains(&code), "{l}");
        let data = ev[2].as_str().expect("data is a string");
        if code == "o" {
            out.push_str(data);
        }
    }
    out
}

#[test]
fn recordings_are_asciicast_v2_that_asciinema_replays() {
    let mut c = Client::start("drv-rec");
    let cast = c.sb.root.join("session.cast");
    c.launch(
        "r",
        &[
            "/bin/sh",
            "-c",
            "printf 'one \\033[32mgreen\\033[0m é\\n'; read x; echo \"got $x\"",
        ],
        json!({"cols": 60, "rows": 10, "record": cast}),
    );
    assert_eq!(c.ok("status", "r", json!({}))["recording"], json!(cast));
    c.wait_text("r", "green");
    c.ok("resize", "r", json!({"cols": 64, "rows": 10}));
    c.ok(
        "recording",
        "r",
        json!({"action": "marker", "label": "typing"}),
    );
    c.ok(
        "send",
        "r",
        json!({"input": [{"type": "text", "value": "two"}, {"type": "key", "value": "Enter"}]}),
    );
    c.wait_text("r", "got two");
    c.ok("waitForExit", "r", json!({"timeoutMs": WAIT_MS}));
    let cap = c.capture("r", json!({"includeAnsi": true}));
    assert_eq!(cap["reason"], "exited");
    let transcript = cap["ansi"]
        .as_str()
        .expect("includeAnsi gives the transcript")
        .to_string();
    assert!(transcript.contains("\x1b[32mgreen"), "{transcript:?}");
    let stopped = c.ok("recording", "r", json!({"action": "stop"}));
    assert_eq!(stopped["path"], json!(cast));

    let text = std::fs::read_to_string(&cast).expect("recording written");
    assert_eq!(cast_output(&text), transcript);
    let header: Value =
        serde_json::from_str(text.lines().next().unwrap_or_default()).expect("header");
    assert_eq!(
        (header["width"].as_u64(), header["height"].as_u64()),
        (Some(60), Some(10))
    );
    assert_eq!(header["env"]["TERM"], "xterm-256color");
    let events: Vec<Value> = text
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let has = |code: &str, data: &str| events.iter().any(|e| e[1] == code && e[2] == data);
    assert!(has("i", "two\r"), "{text}");
    assert!(has("r", "64x10"), "{text}");
    assert!(has("m", "typing"), "{text}");

    // `recording` on a running session starts and stops a file of its own.
    let second = c.sb.root.join("second.cast");
    c.launch(
        "s",
        &["/bin/sh", "-c", "read x; echo \"second $x\"; read y"],
        json!({}),
    );
    c.ok("recording", "s", json!({"action": "start", "path": second}));
    c.ok(
        "send",
        "s",
        json!({"input": [{"type": "text", "value": "go\r"}]}),
    );
    c.wait_text("s", "second go");
    let r = c.ok("recording", "s", json!({"action": "stop"}));
    assert!(r["events"].as_u64().is_some_and(|n| n >= 2), "{r}");
    let text2 = std::fs::read_to_string(&second).expect("second recording");
    assert!(cast_output(&text2).contains("second go"), "{text2}");

    // `asciinema cat` wants a terminal of its own: give it one of ours, and
    // it must reproduce the transcript byte for byte (it writes in raw mode).
    if Command::new("asciinema").arg("--version").output().is_ok() {
        let cast = cast.to_string_lossy().into_owned();
        c.launch(
            "cat",
            &["asciinema", "cat", &cast],
            json!({"cols": 60, "rows": 10}),
        );
        let exit = c.ok("waitForExit", "cat", json!({"timeoutMs": WAIT_MS}));
        assert_eq!(exit["exitCode"], 0, "{exit}");
        let replay = c.capture("cat", json!({"includeAnsi": true}));
        assert_eq!(replay["ansi"].as_str(), Some(transcript.as_str()));
        assert_eq!(replay["text"], cap["text"]);
    } else {
        eprintln!("asciinema is not installed: skipping the replay check");
    }
    assert!(c.finish().success());
}

#[test]
fn svg_capture_is_well_formed_xml() {
    let mut c = Client::start("drv-svg");
    c.launch(
        "v",
        &[
            "/bin/sh",
            "-c",
            "printf '\\033[1;4;38;5;202mbold\\033[0m \\033[7minv\\033[0m <&> 漢字 \\033[38;2;1;2;3mrgb\\033[0m\\n\\033[4 q'; sleep 600",
        ],
        json!({"cols": 40, "rows": 5}),
    );
    c.wait_text("v", "rgb");
    let cap = c.capture("v", json!({"includeSvg": true}));
    let svg = cap["svg"]
        .as_str()
        .expect("includeSvg gives an SVG")
        .to_string();
    assert!(
        svg.contains("漢字") && svg.contains("&lt;&amp;&gt;"),
        "{svg}"
    );
    let mut py = Command::new("python3")
        .args([
            "-c",
            "import sys, xml.etree.ElementTree as ET\nroot = ET.fromstring(sys.stdin.buffer.read())\nprint(root.tag)",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3");
    py.stdin
        .take()
        .expect("stdin")
        .write_all(svg.as_bytes())
        .expect("write svg");
    let out = py.wait_with_output().expect("python3 output");
    assert!(
        out.status.success(),
        "SVG is not well-formed XML: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "{http://www.w3.org/2000/svg}svg"
    );
    assert!(c.finish().success());
}

#[test]
fn a_blocked_wait_does_not_hold_up_other_sessions() {
    let mut c = Client::start("drv-concurrent");
    c.launch(
        "slow",
        &["/bin/sh", "-c", "read x; echo \"slow $x\"; read y"],
        json!({}),
    );
    c.launch(
        "fast",
        &["/bin/sh", "-c", "while read l; do echo \"fast $l\"; done"],
        json!({}),
    );
    // A wait that can only end when we answer it, and a capture of the same
    // session that needs it quiet: both pending while the other session works.
    let wait = c.post(
        "waitForText",
        Some("slow"),
        json!({"text": "slow go", "timeoutMs": 600_000}),
    );
    for i in 0..3 {
        c.ok(
            "send",
            "fast",
            json!({"input": [{"type": "text", "value": format!("n{i}\r")}]}),
        );
        c.wait_text("fast", &format!("fast n{i}"));
    }
    assert!(
        !c.order.contains(&wait.to_string()),
        "the slow wait cannot have been answered yet"
    );
    // Pipelined on one session: launch, send and wait without waiting for
    // each answer; they start in the order sent.
    let a = c.post(
        "launch",
        Some("p"),
        json!({"command": ["/bin/sh", "-c", "read x; echo \"piped $x\"; read y"]}),
    );
    let b = c.post(
        "send",
        Some("p"),
        json!({"input": [{"type": "text", "value": "ok\r"}]}),
    );
    let w = c.post(
        "waitForText",
        Some("p"),
        json!({"text": "piped ok", "timeoutMs": WAIT_MS}),
    );
    for id in [a, b, w] {
        let v = c.answer(&id);
        assert_eq!(v["type"], "response", "{v}");
    }
    // Now release the slow wait; its answer comes.
    c.ok(
        "send",
        "slow",
        json!({"input": [{"type": "text", "value": "go\r"}]}),
    );
    let v = c.answer(&wait);
    assert_eq!(v["result"]["matched"], "slow go", "{v}");
    assert!(c.finish().success());
}

#[test]
fn logs_keep_the_normal_screen_under_a_full_screen_program() {
    let mut c = Client::start("drv-logs");
    c.launch(
        "l",
        &[
            "/bin/sh",
            "-c",
            "echo before-1; echo before-2; printf '\\033[?1049h\\033[HFULLSCREEN\\n'; read x; printf '\\033[?1049l'; echo after; read y",
        ],
        json!({"cols": 40, "rows": 6}),
    );
    c.wait_text("l", "FULLSCREEN");
    let cap = c.capture("l", json!({}));
    assert_eq!(cap["frame"]["altScreen"], true);
    assert!(
        cap["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("FULLSCREEN")),
        "{cap}"
    );
    let logs = c.ok("logs", "l", json!({}));
    let text = logs["text"].as_str().unwrap_or_default();
    assert!(text.contains("before-1\nbefore-2\n"), "{text:?}");
    assert!(!text.contains("FULLSCREEN"), "{text:?}");
    c.ok(
        "send",
        "l",
        json!({"input": [{"type": "key", "value": "Enter"}]}),
    );
    c.wait_text("l", "after");
    let text = c.ok("logs", "l", json!({}))["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(text.contains("before-2\nafter\n"), "{text:?}");
    assert!(c.finish().success());
}

#[test]
fn shutdown_stops_every_session_answers_and_exits() {
    let mut c = Client::start("drv-shutdown");
    c.launch("one", &["sleep", "600"], json!({}));
    c.launch(
        "two",
        &[
            "/bin/sh",
            "-c",
            "trap '' TERM; echo stubborn; while :; do sleep 1; done",
        ],
        json!({}),
    );
    c.wait_text("two", "stubborn");
    let pending = c.post("waitForExit", Some("one"), json!({"timeoutMs": 600_000}));
    let id = c.post("shutdown", None, json!({}));
    let done = c.answer(&id);
    assert_eq!(done["type"], "response", "{done}");
    assert_eq!(done["result"]["stopped"], 2, "{done}");
    // The wait on a stopped session was answered first; nothing follows.
    assert!(c.stash.contains_key(&pending.to_string()), "{:?}", c.order);
    assert_eq!(c.order.last(), Some(&id.to_string()));
    assert!(
        c.lines.recv_timeout(LIMIT).is_err(),
        "no line after shutdown's answer"
    );
    assert!(c.wait_exit().success());
    c.assert_nothing_left();
}
