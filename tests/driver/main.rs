//! `ptybroker driver` (seed 003) driven through the real binary by a client
//! of the protocol: every method with real programs, every error code from a
//! real bad input, the exact mouse bytes a program receives, asciicast
//! recordings and SVG captures.
//!
//! Timeouts here are generous upper bounds, never expectations of speed.

mod client;
#[path = "../common/mod.rs"]
mod common;
mod media;
mod mouse;

use client::{sh, Client, LIMIT, WAIT_MS};
use common::eventually;
use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::time::Duration;

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
    // Every key the README lists, `recording` null when not recording.
    assert_eq!(r.get("recording"), Some(&Value::Null), "{r}");
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
        c.line_err(b"{\"id\": 7, \"method\": \"status\", \"sessionId\": \"no\\u0001ctl\"}\n");
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
#[test]
fn a_blocked_wait_does_not_hold_up_other_sessions() {
    let mut c = Client::start("drv-concurrent");
    let go = c.sb.root.join("go");
    let script = format!(
        "while [ ! -e '{}' ]; do sleep 0.05; done; echo slow go; read y",
        go.display()
    );
    c.launch("slow", &["/bin/sh", "-c", &script], json!({}));
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
    // A request of the slow session read after its wait runs after it, as
    // a script piped in would have it.
    let after = c.post("status", Some("slow"), json!({}));
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(&go, "").expect("create the go file");
    let v = c.answer(&wait);
    assert_eq!(v["result"]["matched"], "slow go", "{v}");
    let v = c.answer(&after);
    assert_eq!(v["type"], "response", "{v}");
    let (w, a) = (wait.to_string(), after.to_string());
    let at = |id: &String| c.order.iter().position(|x| x == id);
    assert!(at(&w) < at(&a), "the wait answered first: {:?}", c.order);
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

#[test]
fn capture_is_idle_once_output_stops_even_while_the_program_works() {
    let mut c = Client::start("drv-silent");
    c.launch("s", &["/bin/sh", "-c", "echo Ready; sleep 60"], json!({}));
    c.wait_text("s", "Ready");
    // Seed 003: a capture completes `idle` once the screen stops changing
    // for settleMs, whatever the program does meanwhile.
    let cap = c.capture("s", json!({"settleMs": 250, "deadlineMs": 30000}));
    assert_eq!(cap["reason"], "idle", "{cap}");
    let idle = c.ok(
        "waitForIdle",
        "s",
        json!({"settleMs": 250, "timeoutMs": 30000}),
    );
    assert_eq!(idle["reason"], "idle", "{idle}");
}

#[test]
fn session_ids_with_spaces_work() {
    let mut c = Client::start("drv-names");
    c.launch(
        "my app",
        &["/bin/sh", "-c", "echo Ready; exec cat"],
        json!({}),
    );
    c.wait_text("my app", "Ready");
    let st = c.ok("status", "my app", json!({}));
    assert_eq!(st["sessionId"], "my app", "{st}");
}

/// Seed 003's answer for a session whose program has exited, whatever the
/// request would have done to it: input, mouse and resize alike.
#[test]
fn an_exited_session_refuses_resize_as_it_refuses_input() {
    let mut c = Client::start("drv-exited");
    c.launch("gone", &["/bin/sh", "-c", "exit 3"], json!({}));
    c.ok("waitForExit", "gone", json!({"timeoutMs": WAIT_MS}));
    for (method, params) in [
        ("send", json!({"input": [{"type": "text", "value": "x"}]})),
        ("mouse", json!({"action": "click", "x": 1, "y": 1})),
        ("resize", json!({"cols": 50, "rows": 10})),
    ] {
        let (code, msg) = c.err(method, "gone", params);
        assert_eq!(
            (code.as_str(), msg.as_str()),
            ("REQUEST_FAILED", "session gone has exited"),
            "{method}"
        );
    }
    let st = c.ok("status", "gone", json!({}));
    assert_eq!(
        (st["cols"].as_u64(), st["rows"].as_u64()),
        (Some(100), Some(30)),
        "{st}"
    );
    assert!(c.finish().success());
}

/// The frame counts cells from 0, as seed 003's mouse coordinates do: the
/// cursor's cell is the one a click at `x = col, y = row` lands on.
#[test]
fn the_frame_cursor_counts_from_0_like_mouse_cells() {
    let mut c = Client::start("drv-cursor");
    let argv = sh("printf 'ab\\ncde'; exec cat");
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    c.launch("k", &argv, json!({}));
    c.wait_text("k", "cde");
    let cap = c.capture("k", json!({}));
    let cursor = &cap["frame"]["cursor"];
    assert_eq!(
        (cursor["row"].as_u64(), cursor["col"].as_u64()),
        (Some(1), Some(3)),
        "{cap}"
    );
    assert!(c.finish().success());
}

#[test]
fn a_recording_path_that_cannot_be_written_is_named_not_the_command() {
    let mut c = Client::start("drv-badrec");
    let bad = "/nonexistent/dir/x.cast";
    // At launch: the program is fine, the file is not.
    let (code, msg) = c.err("launch", "r", json!({"command": ["cat"], "record": bad}));
    assert_eq!(code, "REQUEST_FAILED", "{msg}");
    assert!(msg.contains(bad), "{msg}");
    assert!(msg.contains("No such file or directory"), "{msg}");
    assert!(
        !msg.contains("launch") && !msg.contains("\"cat\""),
        "blames the command: {msg}"
    );
    // Started later, on a running session: the same words.
    c.launch("r", &["cat"], json!({}));
    let (code, later) = c.err("recording", "r", json!({"action": "start", "path": bad}));
    assert_eq!(code, "REQUEST_FAILED", "{later}");
    assert_eq!(later, msg);
    c.ok("stop", "r", json!({}));
    assert!(c.finish().success());
}

/// Run the driver once on `input` as a file on stdin (end of input right
/// after the last line), as `ptybroker driver < file` does; its answers
/// after the hello, and its exit status.
fn driver_on_file(sb: &common::Sandbox, input: &std::path::Path) -> (Vec<Value>, bool) {
    let file = std::fs::File::open(input).expect("open the input");
    let mut cmd = sb.command(&["driver"]);
    cmd.stdin(file)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit());
    let child = cmd.spawn().expect("spawn ptybroker driver");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = rx
        .recv_timeout(LIMIT)
        .expect("the driver exits at end of input")
        .expect("driver output");
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect();
    assert_eq!(lines.first().map(|h| &h["type"]), Some(&json!("hello")));
    (lines[1..].to_vec(), out.status.success())
}

/// Seed 003's example as a script piped in: the keys sent after a
/// `waitForText` go once the text has appeared, and the capture after them
/// shows their answer.
#[test]
fn a_script_piped_in_runs_in_the_order_read() {
    let sb = common::Sandbox::new("drv-order");
    let input = sb.root.join("order.jsonl");
    std::fs::write(
        &input,
        concat!(
            r#"{"id":1,"method":"launch","sessionId":"app","params":{"command":["sh","-c","sleep 0.5; echo Ready; read l; echo \"got $l\"; read l"]}}"#,
            "\n",
            r#"{"id":2,"method":"waitForText","sessionId":"app","params":{"text":"Ready","timeoutMs":30000}}"#,
            "\n",
            r#"{"id":3,"method":"send","sessionId":"app","params":{"input":[{"type":"text","value":"help"},{"type":"key","value":"enter"}]}}"#,
            "\n",
            r#"{"id":4,"method":"capture","sessionId":"app","params":{"settleMs":250,"deadlineMs":30000}}"#,
            "\n",
        ),
    )
    .expect("write the input");
    let (answers, success) = driver_on_file(&sb, &input);
    assert!(success, "{answers:?}");
    let ids: Vec<i64> = answers.iter().filter_map(|a| a["id"].as_i64()).collect();
    assert_eq!(ids, [1, 2, 3, 4], "answered in the order read: {answers:?}");
    let text = answers[3]["result"]["text"].as_str().unwrap_or_default();
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let at = |l: &str| lines.iter().position(|x| *x == l);
    assert!(
        at("Ready").is_some() && at("Ready") < at("help") && at("help") < at("got help"),
        "Ready, then the keys sent after it, then their answer: {text:?}"
    );
}

#[test]
fn every_request_read_before_end_of_input_is_answered_once() {
    let sb = common::Sandbox::new("drv-eof");
    let input = sb.root.join("eof.jsonl");
    // A script piped in, the end of input right behind it: each request is
    // answered as if the input went on (the text does appear, the exit
    // wait times out on its own), then the session is killed.
    std::fs::write(
        &input,
        concat!(
            r#"{"id":1,"method":"launch","sessionId":"a","params":{"command":["sh","-c","sleep 0.3; echo Ready; exec sleep 100"]}}"#,
            "\n",
            r#"{"id":2,"method":"waitForText","sessionId":"a","params":{"text":"Ready","timeoutMs":30000}}"#,
            "\n",
            r#"{"id":3,"method":"waitForExit","sessionId":"a","params":{"timeoutMs":1000}}"#,
            "\n",
        ),
    )
    .expect("write the input");
    // Runs side by side, a few at a time, so that the machine is busy as
    // a client's would be.
    let runs: Vec<(Vec<Value>, bool)> = (0..3)
        .flat_map(|_| {
            std::thread::scope(|s| {
                let hs: Vec<_> = (0..4)
                    .map(|_| s.spawn(|| driver_on_file(&sb, &input)))
                    .collect();
                hs.into_iter()
                    .map(|h| h.join().expect("run"))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for (answers, success) in runs {
        assert!(success, "exit status 0 at end of input: {answers:?}");
        let mut ids: Vec<i64> = answers.iter().filter_map(|a| a["id"].as_i64()).collect();
        ids.sort_unstable();
        assert_eq!(ids, [1, 2, 3], "each id answered exactly once: {answers:?}");
        let by = |id: i64| {
            answers
                .iter()
                .find(|a| a["id"] == id)
                .cloned()
                .unwrap_or_default()
        };
        assert_eq!(by(1)["result"]["sessionId"], "a", "{answers:?}");
        assert!(by(2)["result"]["elapsedMs"].is_u64(), "{answers:?}");
        let msg = by(3)["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            msg.contains("session a is still running after 1000 ms"),
            "{answers:?}"
        );
    }
    // And the sessions ended with the driver.
    let left = eventually(Duration::from_secs(30), || {
        sb.processes().is_empty().then_some(())
    });
    assert!(left.is_some(), "left behind: {:?}", sb.processes());
}

#[test]
fn a_client_that_has_gone_has_its_sessions_killed_at_once() {
    let sb = common::Sandbox::new("drv-gone");
    let mut cmd = sb.command(&["driver"]);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit());
    let mut child = cmd.spawn().expect("spawn ptybroker driver");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    writeln!(
        stdin,
        "{}\n{}",
        json!({"id": 1, "method": "launch", "sessionId": "a", "params": {"command": ["sleep", "600"]}}),
        json!({"id": 2, "method": "waitForText", "sessionId": "a", "params": {"text": "never", "timeoutMs": 600000}})
    )
    .expect("write the requests");
    let mut lines = std::io::BufReader::new(stdout).lines();
    for _ in 0..2 {
        // The hello, then the launch's answer: the session runs.
        lines.next().expect("a line").expect("read");
    }
    // The client goes: it reads no more, and its input ends. The wait's
    // ten minutes are nobody's: the driver ends the session and exits
    // well within the bound here.
    drop(lines);
    drop(stdin);
    let exited = eventually(LIMIT, || child.try_wait().ok().flatten());
    assert!(exited.is_some(), "the driver outlived its client");
    let left = eventually(Duration::from_secs(30), || {
        sb.processes().is_empty().then_some(())
    });
    assert!(left.is_some(), "left behind: {:?}", sb.processes());
}

#[test]
fn a_request_that_cannot_finish_at_end_of_input_is_still_answered() {
    let sb = common::Sandbox::new("drv-eof-stuck");
    // Opening a FIFO for the recording waits for a reader that never
    // comes: ending the session cannot end this request.
    let fifo = sb.root.join("rec.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("run mkfifo");
    assert!(made.success());
    let input = sb.root.join("stuck.jsonl");
    let launch = json!({"id": 1, "method": "launch", "sessionId": "a", "params": {"command": ["sleep", "100"]}});
    let record = json!({"id": 2, "method": "recording", "sessionId": "a", "params": {"action": "start", "path": fifo}});
    std::fs::write(&input, format!("{launch}\n{record}\n")).expect("write the input");
    let (answers, success) = driver_on_file(&sb, &input);
    assert!(success, "{answers:?}");
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(answers[0]["id"], 1, "{answers:?}");
    let stuck = &answers[1];
    assert_eq!(stuck["id"], 2, "{answers:?}");
    assert_eq!(stuck["error"]["code"], "REQUEST_FAILED", "{stuck}");
    let msg = stuck["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("the driver is exiting"), "{msg}");
}
