//! JSON-RPC 2.0 as seed 000 specifies it: every example exchange gives the
//! documented response shape, every documented error its code, and the
//! connection answers the next request after each error. Most tests talk to
//! `ptybroker serve --socket`; the last ones to the per-user daemon, where
//! every method takes a `session`.

mod common;

use std::time::Duration;

use common::{Rpc, Sandbox};
use serde_json::{json, Value};

/// The seed's example shell: a bash whose prompt is `root@host:~$ `.
const SEED_SHELL: &str = "env PS1='root@host:~$ ' bash --norc --noprofile";

fn serve(sb: &mut Sandbox, cmd: &str, extra: &[&str]) -> (usize, Rpc) {
    let path = sb.root.join("v.sock");
    let mut args = vec!["--cmd", cmd];
    args.extend(extra);
    sb.serve_unix(&path, &args)
}

fn assert_cursor_and_size(r: &Value, cols: u64, rows: u64) {
    assert!(r["cursor"]["row"].as_u64().is_some_and(|v| v >= 1), "{r}");
    assert!(r["cursor"]["col"].as_u64().is_some_and(|v| v >= 1), "{r}");
    assert_eq!(r["size"], json!({"cols": cols, "rows": rows}), "{r}");
}

#[test]
fn seed_000_exchanges_have_the_documented_shapes() {
    let mut sb = Sandbox::new("seed000");
    let (served, mut c) = serve(&mut sb, SEED_SHELL, &[]);
    let serve_pid = sb.child_pid(served);

    // pty/status
    let st = c.ok("pty/status", json!({}));
    assert_eq!(st["running"], true, "{st}");
    assert_eq!(st["exitCode"], Value::Null, "{st}");
    let pid = st["pid"].as_i64().expect("pid is a number") as i32;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("pid is live");
    let ppid: i32 = stat[stat.rfind(')').expect(")") + 2..]
        .split(' ')
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("ppid");
    assert_eq!(ppid, serve_pid, "the hosted process is serve's child");

    // pty/read: exactly the seed's example.
    c.wait_for("default", "root@host:~$");
    let r = c.ok("pty/read", json!({}));
    assert_eq!(r["screen"], "root@host:~$\n", "{r}");
    assert_eq!(r["cursor"]["row"], 1, "{r}");
    assert_eq!(r["cursor"]["col"], 14, "{r}");
    assert_eq!(r["size"], json!({"cols": 100, "rows": 30}), "{r}");

    // pty/write: single actions, then an array; `written` counts bytes.
    let w = c.ok("pty/write", json!({"action": {"text": "echo hello"}}));
    assert_eq!(w, json!({"written": 10}));
    let w = c.ok("pty/write", json!({"action": {"key": "Enter"}}));
    assert_eq!(w, json!({"written": 1}));

    // pty/wait with a match.
    let r = c.ok("pty/wait", json!({"match": "hello", "timeout": 6000}));
    assert_eq!(r["matched"], true, "{r}");
    assert!(r["screen"].as_str().is_some_and(|s| s.contains("hello")));
    assert_cursor_and_size(&r, 100, 30);
    assert!(r["waitedMs"].is_u64(), "{r}");
    // (That matched the echo already; the answer follows on its own line.)
    c.wait_for("default", "\nhello\n");

    let w = c.ok(
        "pty/write",
        json!({"action": [{"text": "ls"}, {"key": "Enter"}]}),
    );
    assert_eq!(w, json!({"written": 3}));
    let text = "echo héllo→✓ 日本";
    let w = c.ok(
        "pty/write",
        json!({"action": [{"text": text}, {"key": "Enter"}]}),
    );
    assert_eq!(w["written"], text.len() + 1, "UTF-8 bytes, not chars");
    assert_eq!((text.len(), text.chars().count()), (24, 15));
    let r = c.wait_for("default", "\nhéllo→✓ 日本\n");
    assert!(r["screen"]
        .as_str()
        .is_some_and(|s| s.contains("héllo→✓ 日本")));

    // pty/wait that times out, and one with no match: a plain delay.
    let r = c.ok(
        "pty/wait",
        json!({"match": "never-on-screen", "timeout": 300}),
    );
    assert_eq!(r["matched"], false, "{r}");
    assert!(r["waitedMs"].as_u64().is_some_and(|ms| ms >= 300), "{r}");
    assert!(r["screen"].as_str().is_some_and(|s| s.contains("héllo")));
    assert_cursor_and_size(&r, 100, 30);
    let r = c.ok("pty/wait", json!({"timeout": 200}));
    assert_eq!(r["matched"], false, "{r}");
    assert!(r["waitedMs"].as_u64().is_some_and(|ms| ms >= 200), "{r}");

    // pty/resize: `{}`, then the new size in read, and in the program.
    assert_eq!(
        c.ok("pty/resize", json!({"cols": 120, "rows": 40})),
        json!({})
    );
    let r = c.ok("pty/read", json!({}));
    assert_eq!(r["size"], json!({"cols": 120, "rows": 40}));
    c.ok(
        "pty/write",
        json!({"action": [{"text": "stty size"}, {"key": "Enter"}]}),
    );
    c.wait_for("default", "\n40 120\n");

    // pty/kill: `{}`, the connection closes, serve exits, its socket goes.
    let st = c.ok("pty/status", json!({}));
    let child = st["pid"].as_i64().expect("pid") as i32;
    let id = common::proc_identity(child).expect("child identity");
    assert_eq!(c.ok("pty/kill", json!({})), json!({}));
    assert!(c.read_response().is_none(), "the connection is closed");
    let exit = sb.wait_child(served, Duration::from_secs(30));
    assert!(exit.is_some_and(|e| e.success()), "serve exits: {exit:?}");
    assert!(!sb.root.join("v.sock").exists(), "socket removed");
    assert_eq!(common::wait_gone(child, id, false), None, "bash is gone");
}

#[test]
fn read_selections_take_rows_and_clamp() {
    let mut sb = Sandbox::new("select");
    let cmd = r#"sh -c "printf 'a\nb\nc\nd\ne'; exec cat""#;
    let (_, mut c) = serve(&mut sb, cmd, &["--cols", "20", "--rows", "5"]);
    c.wait_for("default", "e");
    let read = |c: &mut Rpc, p: Value| c.ok("pty/read", p);
    let all = read(&mut c, json!({}));
    assert_eq!(all["screen"], "a\nb\nc\nd\ne\n");
    assert_eq!(all["cursor"], json!({"row": 5, "col": 2, "visible": true}));
    assert_eq!(all["size"], json!({"cols": 20, "rows": 5}));
    for (params, screen) in [
        (json!({"top": 3}), "a\nb\nc\n"),
        (json!({"bottom": 3}), "c\nd\ne\n"),
        (json!({"start": 2, "end": 5}), "b\nc\nd\ne\n"),
        (json!({"start": 3, "end": 3}), "c\n"),
        (json!({"top": 99}), "a\nb\nc\nd\ne\n"),
        (json!({"bottom": 99}), "a\nb\nc\nd\ne\n"),
        (json!({"start": 4, "end": 99}), "d\ne\n"),
        (json!({"start": 0, "end": 1}), "a\n"),
        (json!({"top": 0}), ""),
    ] {
        let r = read(&mut c, params.clone());
        assert_eq!(r["screen"], screen, "{params}");
        // The cursor and size describe the whole screen, not the selection.
        assert_eq!(r["cursor"]["row"], 5, "{params}");
        assert_eq!(r["size"], json!({"cols": 20, "rows": 5}), "{params}");
    }
}

/// Send `line`, check the error's code (and the id it echoes), then prove
/// the same connection still answers.
fn check_error(c: &mut Rpc, line: &str, code: i64, id: Value) -> String {
    let resp = c.line(line);
    assert_eq!(resp["jsonrpc"], "2.0", "{line} -> {resp}");
    assert!(resp.get("result").is_none(), "{line} -> {resp}");
    assert_eq!(resp["error"]["code"], code, "{line} -> {resp}");
    assert_eq!(resp["id"], id, "{line} -> {resp}");
    let message = resp["error"]["message"].as_str().unwrap_or("");
    assert!(!message.is_empty(), "{line} -> {resp}");
    let st = c.ok("pty/status", json!({}));
    assert_eq!(st["running"], true, "after {line}");
    message.to_string()
}

fn req(method: &str, params: Value, id: u64) -> String {
    json!({"jsonrpc": "2.0", "method": method, "params": params, "id": id}).to_string()
}

#[test]
fn every_documented_error_has_its_code_and_the_connection_survives() {
    let mut sb = Sandbox::new("errors");
    let (_, mut c) = serve(&mut sb, SEED_SHELL, &[]);
    c.wait_for("default", "root@host:~$");

    // -32700: not JSON at all; the id cannot be known.
    for garbage in ["this is not json", "{\"jsonrpc\":\"2.0\",", "]["] {
        check_error(&mut c, garbage, -32700, Value::Null);
    }
    // -32600: malformed requests.
    let no_id = r#"{"jsonrpc":"2.0","method":"pty/status","params":{}}"#;
    check_error(&mut c, no_id, -32600, Value::Null);
    let null_id = r#"{"jsonrpc":"2.0","method":"pty/status","params":{},"id":null}"#;
    check_error(&mut c, null_id, -32600, Value::Null);
    // params is an object or left out: null is not taken for {} (as in MCP).
    for params in [
        json!(null),
        json!([1, 2]),
        json!("x"),
        json!(7),
        json!(true),
    ] {
        let line = json!({"jsonrpc": "2.0", "method": "pty/status", "params": params, "id": 3});
        check_error(&mut c, &line.to_string(), -32600, json!(3));
    }
    check_error(&mut c, r#"{"op":"read","id":5}"#, -32600, json!(5));
    check_error(
        &mut c,
        r#"{"op":"write","data":"ls\n"}"#,
        -32600,
        Value::Null,
    );
    check_error(&mut c, r#"[1,2,3]"#, -32600, Value::Null);
    // String ids are echoed as given.
    check_error(
        &mut c,
        r#"{"jsonrpc":"2.0","method":"pty/status","params":[],"id":"abc"}"#,
        -32600,
        json!("abc"),
    );

    // -32601, naming the method.
    let m = check_error(
        &mut c,
        &req("pty/unknown", json!({}), 13),
        -32601,
        json!(13),
    );
    assert_eq!(m, "Method not found: pty/unknown");

    // -32602: invalid params, one per documented rule.
    let mut id = 20;
    for (method, params) in [
        (
            "pty/write",
            json!({"action": {"text": "x", "key": "Enter"}}),
        ),
        (
            "pty/write",
            json!({"action": [{"text": "ok"}, {"text": "x", "key": "Enter"}]}),
        ),
        ("pty/write", json!({"action": {}})),
        ("pty/write", json!({"action": []})),
        ("pty/write", json!({})),
        ("pty/write", json!({"action": {"key": "NoSuchKey"}})),
        (
            "pty/write",
            json!({"action": [{"text": "echo SHOULD-NOT-RUN"}, {"key": "Enter"}, {"key": "Ctrl+Nope"}]}),
        ),
        ("pty/write", json!({"action": {"text": 5}})),
        ("pty/read", json!({"top": 1, "bottom": 1})),
        ("pty/read", json!({"start": 2})),
        ("pty/read", json!({"end": 2})),
        ("pty/read", json!({"top": 1, "start": 1, "end": 2})),
        ("pty/read", json!({"bottom": 1, "end": 2})),
        ("pty/read", json!({"top": -1})),
        ("pty/read", json!({"top": "3"})),
        ("pty/resize", json!({"cols": 0, "rows": 10})),
        ("pty/resize", json!({"cols": 100_000, "rows": 10})),
        ("pty/resize", json!({"cols": 80, "rows": 1})),
        ("pty/resize", json!({"cols": "wide", "rows": 10})),
        ("pty/resize", json!({"cols": 80})),
        ("pty/wait", json!({"match": 3})),
        ("pty/wait", json!({"timeout": "soon"})),
    ] {
        id += 1;
        let m = check_error(&mut c, &req(method, params.clone(), id), -32602, json!(id));
        if params.to_string().contains("Key") || params.to_string().contains("Nope") {
            assert!(
                m.contains("NoSuchKey") || m.contains("Nope"),
                "names the key: {m}"
            );
        }
    }
    // A rejected action list sends nothing at all, not a prefix of it.
    c.ok(
        "pty/write",
        json!({"action": [{"text": "echo still-fine"}, {"key": "Enter"}]}),
    );
    let r = c.wait_for("default", "\nstill-fine\n");
    assert!(
        !r["screen"]
            .as_str()
            .unwrap_or("")
            .contains("SHOULD-NOT-RUN"),
        "{r}"
    );
    // A number is a JSON number: 2.0 is the integer 2 (as in MCP's tools).
    let r = c.ok("pty/read", json!({"top": 2.0}));
    assert_eq!(
        r["screen"].as_str().map(|s| s.lines().count()),
        Some(2),
        "{r}"
    );
    // The size did not change under the refused resizes.
    let r = c.ok("pty/read", json!({}));
    assert_eq!(r["size"], json!({"cols": 100, "rows": 30}));

    // -32000: a valid request the server cannot carry out.
    check_error(
        &mut c,
        &req("pty/status", json!({"session": "nope"}), 90),
        -32000,
        json!(90),
    );

    // A line past the 4 MiB limit is refused without being parsed.
    let huge = format!(
        r#"{{"jsonrpc":"2.0","method":"pty/write","params":{{"action":{{"text":"{}"}}}},"id":93}}"#,
        "x".repeat(5 << 20)
    );
    let m = check_error(&mut c, &huge, -32600, Value::Null);
    assert!(m.contains("limit"), "{m}");
    // Input above the per-request cap is invalid params, and nothing is sent.
    let big = "y".repeat((1 << 20) + 1);
    check_error(
        &mut c,
        &req("pty/write", json!({"action": {"text": big}}), 94),
        -32602,
        json!(94),
    );

    // Blank lines are ignored, and two requests in one write both answered.
    let two = format!(
        "\n{}\n{}",
        req("pty/status", json!({}), 91),
        req("pty/read", json!({"top": 1}), 92)
    );
    let first = c.line(&two);
    assert_eq!(first["id"], 91);
    let second = c.read_response().expect("second response");
    assert_eq!(second["id"], 92);
    assert_eq!(second["result"]["screen"], "root@host:~$ echo still-fine\n");
}

/// The daemon: many sessions, each named in `session`; `default` otherwise.
#[test]
fn daemon_methods_take_a_session() {
    let sb = Sandbox::new("daemonrpc");
    sb.run(&["start", "--session", "x", "--", "cat"]).ok();
    let mut c = sb.rpc();
    let st = c.ok("pty/status", json!({"session": "x"}));
    assert_eq!(st["running"], true);
    assert_eq!(st["session"], "x");
    let e = c.err("pty/status", json!({}));
    assert_eq!(e["code"], -32000);
    assert!(
        e["message"].as_str().unwrap_or("").contains("\"default\""),
        "{e}"
    );

    // Start over JSON-RPC, then drive it.
    let s = c.ok(
        "pty/start",
        json!({"session": "y", "argv": ["sh", "-c", "echo ready; exec cat"], "cols": 40, "rows": 8}),
    );
    assert_eq!(s["session"], "y");
    assert!(s["pid"].is_i64());
    assert_eq!(s["size"], json!({"cols": 40, "rows": 8}));
    let taken = c.err("pty/start", json!({"session": "y", "argv": ["cat"]}));
    assert_eq!(taken["code"], -32000);
    assert!(
        taken["message"]
            .as_str()
            .unwrap_or("")
            .contains("already running"),
        "{taken}"
    );
    c.wait_for("y", "ready");

    // pty/output: absolute offsets; reading on from `next` never repeats.
    let o = c.ok("pty/output", json!({"session": "y", "offset": 0}));
    assert_eq!(o["offset"], 0);
    assert!(o["data"].as_str().unwrap_or("").contains("ready"), "{o}");
    let next = o["next"].as_u64().expect("next");
    assert_eq!(o["end"], next);
    c.ok(
        "pty/write",
        json!({"session": "y", "action": [{"text": "more"}, {"key": "Enter"}]}),
    );
    c.wait_for("y", "more\nmore");
    let o2 = c.ok(
        "pty/output",
        json!({"session": "y", "offset": next, "strip": true}),
    );
    assert_eq!(o2["offset"], next);
    assert_eq!(o2["data"], "more\nmore\n", "{o2}");
    assert_eq!(o2["dropped"], 0);

    // pty/step: input, settle, the output since the last step.
    let st = c.ok(
        "pty/step",
        json!({"session": "y", "text": "again", "timeout": 300}),
    );
    assert_eq!(st["view"], "stream");
    assert!(
        st["output"].as_str().unwrap_or("").contains("again"),
        "{st}"
    );
    assert_eq!(st["status"]["running"], true);

    // pty/list names both; x is untouched by everything done to y.
    let l = c.ok("pty/list", json!({}));
    let names: Vec<&str> = l["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .filter_map(|s| s["session"].as_str())
        .collect();
    assert_eq!(names, ["x", "y"]);
    let x = c.ok("pty/read", json!({"session": "x"}));
    assert_eq!(x["screen"], "");

    // pty/signal, pty/stop and pty/kill.
    c.ok("pty/signal", json!({"session": "y", "signal": "TERM"}));
    let w = c.ok(
        "pty/wait",
        json!({"session": "y", "exit": true, "timeout": 30_000}),
    );
    assert_eq!(w["reason"], "exited", "{w}");
    let st = c.ok("pty/status", json!({"session": "y"}));
    assert_eq!(st["running"], false);
    assert_eq!(st["signal"], 15, "{st}");
    let stopped = c.ok("pty/stop", json!({"session": "y"}));
    assert_eq!(stopped["session"], "y");
    assert_eq!(c.ok("pty/kill", json!({"session": "x"})), json!({}));
    assert_eq!(c.ok("pty/list", json!({}))["sessions"], json!([]));
    // In the daemon, pty/kill ends a session, not the connection.
    assert_eq!(c.err("pty/read", json!({"session": "x"}))["code"], -32000);
}

/// One connection blocked in a long `pty/wait` does not hold up another: the
/// second one's answer and input arrive while the first is still waiting,
/// and it is that input which ends the first wait.
#[test]
fn a_blocked_wait_does_not_hold_up_other_connections() {
    let mut sb = Sandbox::new("threads");
    let (_, mut a) = serve(&mut sb, "cat", &[]);
    let path = sb.root.join("v.sock");
    let waiter = std::thread::spawn(move || {
        a.ok(
            "pty/wait",
            json!({"match": "release-me", "timeout": 120_000}),
        )
    });
    let mut b = Rpc::unix(&path);
    assert_eq!(b.ok("pty/status", json!({}))["running"], true);
    assert!(!waiter.is_finished(), "the first wait ended on its own");
    b.ok("pty/write", json!({"action": {"text": "release-me"}}));
    let r = waiter.join().expect("waiter");
    assert_eq!(r["matched"], true, "{r}");
    b.ok("pty/kill", json!({}));
}

#[test]
fn screen_regexes_are_multi_line_and_step_text_is_bounded() {
    let sb = Sandbox::new("rpcregex");
    sb.run(&[
        "start",
        "--session",
        "r",
        "--",
        "sh",
        "-c",
        "echo hi-A; echo hi-B; exec cat",
    ])
    .ok();
    let mut c = sb.rpc();
    // `^` and `$` match at each row of the screen.
    let r = c.ok(
        "pty/wait",
        json!({"session": "r", "regex": "^hi-B$", "timeout": 20000}),
    );
    assert_eq!(r["matched"], true, "{r}");
    // A step's text is bounded like any write.
    let e = c.err(
        "pty/step",
        json!({"session": "r", "text": "x".repeat(2 << 20)}),
    );
    assert_eq!(e["code"], -32602, "{e}");
    assert!(
        e["message"].as_str().unwrap_or("").contains("too large"),
        "{e}"
    );
    c.ok("pty/stop", json!({"session": "r", "force": true}));
}

/// A prompt's trailing space counts while the cursor waits after it: the
/// screen's rows are trimmed (seed 000), but a wait for `>>> ` or `/\$ $/`
/// matches python's and sh's prompts; the trimmed forms match as before,
/// and blanks past the cursor never do.
#[test]
fn a_wait_matches_a_prompt_with_its_trailing_space() {
    let sb = Sandbox::new("rpcprompt");
    sb.run(&["start", "-s", "py", "--", "python3", "-q"]).ok();
    let mut c = sb.rpc();
    c.ok(
        "pty/start",
        json!({"session": "sh", "argv": ["sh"], "env": {"PS1": "$ "}}),
    );
    // A coloured prompt (python 3.13 draws `>>> ` in bold magenta).
    c.ok(
        "pty/start",
        json!({"session": "co", "argv": ["sh"], "env": {"PS1": "\u{1b}[1;35m>>> \u{1b}[0m"}}),
    );
    for (session, params) in [
        ("co", json!({"match": ">>> "})),
        ("py", json!({"match": ">>> "})),
        ("py", json!({"match": ">>>"})),
        ("sh", json!({"regex": "^\\$ $"})),
        ("sh", json!({"regex": "^\\$$"})),
    ] {
        let mut p = params.clone();
        p["session"] = json!(session);
        p["timeout"] = json!(20000);
        let r = c.ok("pty/wait", p);
        assert_eq!(r["matched"], true, "{session} {params}: {r}");
        // The screen itself stays trimmed.
        assert!(!r["screen"].as_str().unwrap_or("").contains("> \n"), "{r}");
    }
    // Two blanks are not there: the cursor is after one.
    let r = c.ok(
        "pty/wait",
        json!({"session": "py", "match": ">>>  ", "timeout": 300}),
    );
    assert_eq!(r["matched"], false, "{r}");
    // The driver's waitForText answers with the text found.
    let mut driver = sb.command(&["driver"]);
    let mut child = driver
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("driver");
    let mut stdin = child.stdin.take().expect("stdin");
    {
        use std::io::Write;
        for line in [
            r#"{"id":1,"method":"launch","sessionId":"p","params":{"command":["python3","-q"]}}"#,
            r#"{"id":2,"method":"waitForText","sessionId":"p","params":{"text":">>> ","timeoutMs":20000}}"#,
        ] {
            writeln!(stdin, "{line}").expect("write to the driver");
        }
    }
    let answer = std::io::BufRead::lines(std::io::BufReader::new(
        child.stdout.take().expect("stdout"),
    ))
    .map_while(Result::ok)
    .filter_map(|l| serde_json::from_str::<Value>(&l).ok())
    .find(|v| v["id"] == 2)
    .expect("an answer to waitForText");
    drop(stdin);
    let _ = child.wait();
    assert_eq!(answer["result"]["matched"], ">>> ", "{answer}");
    for s in ["py", "sh", "co"] {
        c.ok("pty/stop", json!({"session": s, "force": true}));
    }
}

/// A request line that is not UTF-8 is not JSON: -32700 with a null id, and
/// nothing reaches the program (no U+FFFD in place of the bad byte).
#[test]
fn invalid_utf8_in_a_request_is_a_parse_error_and_nothing_is_sent() {
    let mut sb = Sandbox::new("badutf8");
    let (_, mut c) = serve(&mut sb, "cat", &[]);
    let line = b"{\"jsonrpc\":\"2.0\",\"method\":\"pty/write\",\"params\":{\"action\":{\"text\":\"a\xffb\"}},\"id\":7}";
    let resp = c.try_bytes(line).expect("an answer");
    assert_eq!(resp["error"]["code"], -32700, "{resp}");
    assert_eq!(resp["id"], Value::Null, "{resp}");
    assert_eq!(c.ok("pty/status", json!({}))["running"], true);
    c.ok(
        "pty/write",
        json!({"action": [{"text": "marker"}, {"key": "Enter"}]}),
    );
    c.wait_for("default", "marker\nmarker");
    let out = c.ok("pty/output", json!({"offset": 0, "strip": true}));
    assert_eq!(out["data"], "marker\nmarker\n", "{out}");
    c.ok("pty/kill", json!({}));
}

/// Follow `next` through a session's output, `max` bytes at a time.
fn read_in_pieces(c: &mut Rpc, session: &str, max: u64) -> Vec<String> {
    let mut parts = Vec::new();
    let mut offset = 0;
    loop {
        let o = c.ok(
            "pty/output",
            json!({"session": session, "offset": offset, "max": max}),
        );
        let next = o["next"].as_u64().expect("next");
        if next == o["end"].as_u64().expect("end") && next == offset {
            return parts;
        }
        assert!(next > offset, "no progress at {offset} with max {max}: {o}");
        assert_eq!(o["offset"], offset, "{o}");
        parts.push(o["data"].as_str().expect("data").to_string());
        offset = next;
    }
}

/// `pty/output` never splits a character: a read ends before one that `max`
/// would cut, a character longer than `max` comes whole, and one the program
/// has only half written waits for its other half.
#[test]
fn output_reads_end_on_character_boundaries() {
    let sb = Sandbox::new("utf8out");
    sb.run(&["start", "--session", "keep", "--", "cat"]).ok();
    let mut c = sb.rpc();
    let text = "h\u{e9}\u{20ac}\u{e9}llo";
    c.ok(
        "pty/start",
        json!({"session": "u", "argv": ["sh", "-c", format!("printf '{text}'; exec cat")]}),
    );
    c.wait_for("u", "llo");
    assert_eq!(
        read_in_pieces(&mut c, "u", 1),
        ["h", "\u{e9}", "\u{20ac}", "\u{e9}", "l", "l", "o"]
    );
    for max in 2..=6 {
        let parts = read_in_pieces(&mut c, "u", max);
        assert_eq!(parts.concat(), text, "max {max}: {parts:?}");
    }
    // An offset inside a character: its stray byte reads as U+FFFD, and the
    // next read starts at the following character.
    let o = c.ok("pty/output", json!({"session": "u", "offset": 2, "max": 1}));
    assert_eq!(
        (o["data"].as_str(), o["next"].as_u64()),
        (Some("\u{fffd}"), Some(3))
    );

    // A character the program has written half of waits for the rest, in
    // pty/output and in pty/step alike.
    c.ok(
        "pty/start",
        json!({"session": "half", "argv": ["sh", "-c", "stty -echo; printf 'h\\303'; read x; printf '\\251llo\\n'; exec cat"]}),
    );
    let first = c.ok("pty/step", json!({"session": "half"}));
    assert_eq!(first["output"], "h", "{first}");
    let o = c.ok("pty/output", json!({"session": "half", "offset": 0}));
    assert_eq!(
        (o["data"].as_str(), o["next"].as_u64()),
        (Some("h"), Some(1)),
        "{o}"
    );
    let second = c.ok("pty/step", json!({"session": "half", "text": ""}));
    assert_eq!(second["output"], "\u{e9}llo\n", "{second}");
}

/// A missing or non-directory `cwd` is named as such, not blamed on the
/// program, over JSON-RPC and from the CLI.
#[test]
fn an_unusable_working_directory_is_named() {
    let sb = Sandbox::new("badcwd");
    sb.run(&["start", "--session", "keep", "--", "cat"]).ok();
    let out = sb.run(&[
        "start",
        "--session",
        "b",
        "--cwd",
        "/nonexistent",
        "--",
        "bash",
    ]);
    assert_eq!(out.code(), 1, "{out:?}");
    out.assert_one_stderr_line(
        r#"^\[ptybroker: cannot use working directory "/nonexistent": No such file or directory.*\]$"#,
    );
    let mut c = sb.rpc();
    let e = c.err(
        "pty/start",
        json!({"session": "b", "argv": ["bash"], "cwd": "/nonexistent"}),
    );
    let m = e["message"].as_str().unwrap_or("");
    assert!(
        m.starts_with(r#"cannot use working directory "/nonexistent": No such file"#),
        "{e}"
    );
    let file = sb.root.join("a-file");
    std::fs::write(&file, "x").expect("file");
    let e = c.err(
        "pty/start",
        json!({"session": "b", "argv": ["bash"], "cwd": file}),
    );
    let m = e["message"].as_str().unwrap_or("");
    assert!(
        m.starts_with("cannot use working directory") && m.contains("Not a directory"),
        "{e}"
    );
    // A good one still works.
    let ok = c.ok(
        "pty/start",
        json!({"session": "b", "argv": ["sh", "-c", "pwd; exec cat"], "cwd": sb.work("here")}),
    );
    assert_eq!(ok["session"], "b");
    c.wait_for("b", "/work/here");
}

/// A signal number that does not fit is invalid, never truncated to another
/// signal; an empty or blank `cmd` is refused like an empty argv.
#[test]
fn out_of_range_signals_and_blank_commands_are_invalid_params() {
    let sb = Sandbox::new("badparams");
    sb.run(&["start", "--session", "c", "--", "cat"]).ok();
    let mut c = sb.rpc();
    // 4294967298 is 2 (SIGINT) once cut to 32 bits.
    for n in [
        json!(4294967298u64),
        json!(-1),
        json!(2147483650u64),
        json!(1e3),
    ] {
        let e = c.err("pty/signal", json!({"session": "c", "signal": n}));
        assert_eq!(e["code"], -32602, "{n}: {e}");
    }
    assert_eq!(c.ok("pty/status", json!({"session": "c"}))["running"], true);
    for cmd in ["", "   ", "\t"] {
        let e = c.err("pty/start", json!({"session": "d", "cmd": cmd}));
        assert_eq!(e["code"], -32602, "{cmd:?}: {e}");
    }
    assert_eq!(c.err("pty/status", json!({"session": "d"}))["code"], -32000);
}

/// Once the program has exited, every request that would act on it is
/// refused with the same server error `pty/write` gives, and nothing
/// changes: the last screen keeps its size.
#[test]
fn acting_on_an_exited_program_is_a_server_error() {
    let sb = Sandbox::new("rpcexited");
    sb.run(&["start", "--session", "e", "--", "true"]).ok();
    let mut c = sb.rpc();
    let w = c.ok(
        "pty/wait",
        json!({"session": "e", "exit": true, "timeout": 30_000}),
    );
    assert_eq!(w["reason"], "exited", "{w}");
    for (method, params) in [
        (
            "pty/write",
            json!({"session": "e", "action": {"text": "x"}}),
        ),
        (
            "pty/resize",
            json!({"session": "e", "cols": 50, "rows": 10}),
        ),
        ("pty/signal", json!({"session": "e", "signal": "INT"})),
        ("pty/signal", json!({"session": "e", "signal": "TERM"})),
    ] {
        let e = c.err(method, params.clone());
        assert_eq!(
            (e["code"].as_i64(), e["message"].as_str()),
            (Some(-32000), Some("the program has exited")),
            "{method} {params}: {e}"
        );
    }
    let st = c.ok("pty/status", json!({"session": "e"}));
    assert_eq!(st["size"], json!({"cols": 100, "rows": 30}), "{st}");
}

/// Seed 000 counts its `cursor` from 1; the structured frame beside it
/// counts from 0, as every frame does (see `render --format json` and the
/// driver's `capture`).
#[test]
fn the_cursor_counts_from_1_in_seed_000_and_from_0_in_the_frame() {
    let sb = Sandbox::new("rpccursor");
    sb.run(&[
        "start",
        "-s",
        "k",
        "--",
        "sh",
        "-c",
        "printf 'ab\\ncde'; exec cat",
    ])
    .ok();
    let mut c = sb.rpc();
    let w = c.wait_for("k", "cde");
    assert_eq!(
        w["cursor"],
        json!({"row": 2, "col": 4, "visible": true}),
        "{w}"
    );
    let r = c.ok("pty/read", json!({"session": "k"}));
    assert_eq!(
        r["cursor"],
        json!({"row": 2, "col": 4, "visible": true}),
        "{r}"
    );
    let f = c.ok("pty/read", json!({"session": "k", "format": "json"}));
    assert_eq!(f["cursor"], r["cursor"], "{f}");
    // The frame is added: the text is there as without a format.
    assert_eq!(f["screen"], r["screen"], "{f}");
    assert!(
        f["screen"].as_str().is_some_and(|t| t.contains("cde")),
        "{f}"
    );
    assert_eq!(
        (
            f["frame"]["cursor"]["row"].as_u64(),
            f["frame"]["cursor"]["col"].as_u64()
        ),
        (Some(1), Some(3)),
        "{f}"
    );
}

/// `cmd` is a shell command line, run by `/bin/sh -c` as written: its own
/// exit status, builtins such as `cd`, and `NAME=value` prefixes all work.
#[test]
fn a_start_cmd_is_a_shell_command_line() {
    let sb = Sandbox::new("cmdline");
    sb.run(&["start", "--session", "keep", "--", "cat"]).ok();
    let mut c = sb.rpc();
    c.ok(
        "pty/start",
        json!({"session": "x", "cmd": "echo hi; exit 3"}),
    );
    let r = c.ok(
        "pty/wait",
        json!({"session": "x", "exit": true, "timeout": 30_000}),
    );
    assert!(r["screen"].as_str().unwrap_or("").contains("hi"), "{r}");
    assert_eq!(c.ok("pty/status", json!({"session": "x"}))["exitCode"], 3);
    let dir = sb.work("there");
    c.ok(
        "pty/start",
        json!({"session": "y", "cmd": format!("cd {} && FOO=bar sh -c 'echo \"$FOO in $PWD\"'", dir.display())}),
    );
    c.wait_for("y", &format!("bar in {}", dir.display()));
    // One plain command is the session's program itself, not a child of sh.
    c.ok("pty/start", json!({"session": "z", "cmd": "cat -u"}));
    let pid = c.ok("pty/status", json!({"session": "z"}))["pid"]
        .as_i64()
        .expect("pid");
    let comm = || std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    let became_cat = common::eventually(Duration::from_secs(30), || {
        (comm().trim() == "cat").then_some(())
    });
    assert!(became_cat.is_some(), "pid {pid} is {:?}", comm());
}

/// The daemon answers a new connection's first request itself when it is a
/// quick one (`pty/read`, `pty/status`, `pty/list`) and has arrived whole;
/// its connection thread carries on. Whatever the split, every request on a
/// connection is answered once, in order, whole.
#[test]
fn first_requests_are_answered_in_order_however_they_arrive() {
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::net::UnixStream;

    let sb = Sandbox::new("early");
    // A session whose history answer is far bigger than a socket buffer.
    sb.run(&[
        "start",
        "--session",
        "big",
        "--",
        "python3",
        "-c",
        "import sys,time\nfor i in range(6000): print('line %05d ' % i + 'x' * 90)\nsys.stdout.flush(); time.sleep(600)",
    ])
    .ok();
    let mut c = sb.rpc();
    c.wait_for("big", "line 05999");
    let connect = || {
        let s = UnixStream::connect(sb.socket()).expect("connect");
        s.set_read_timeout(Some(common::CALL_LIMIT))
            .expect("timeout");
        s
    };
    let answers = |s: &UnixStream, n: usize| -> Vec<Value> {
        let mut r = BufReader::new(s.try_clone().expect("clone"));
        (0..n)
            .map(|_| {
                let mut line = String::new();
                r.read_line(&mut line).expect("an answer");
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
            })
            .collect()
    };
    let req = |id: u64, method: &str, params: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string() + "\n"
    };

    // Three quick requests and a slower one in a single write.
    let mut s = connect();
    let batch = req(1, "pty/read", json!({"session": "big"}))
        + &req(2, "pty/status", json!({"session": "big"}))
        + &req(
            3,
            "pty/output",
            json!({"session": "big", "offset": 0, "max": 10}),
        )
        + &req(4, "pty/list", json!({}));
    s.write_all(batch.as_bytes()).expect("send");
    let got = answers(&s, 4);
    let ids: Vec<_> = got.iter().map(|v| v["id"].clone()).collect();
    assert_eq!(ids, [json!(1), json!(2), json!(3), json!(4)], "{got:?}");
    assert!(
        got[0]["result"]["screen"]
            .as_str()
            .unwrap_or("")
            .contains("line 05999"),
        "{}",
        got[0]
    );
    assert_eq!(got[1]["result"]["running"], true, "{}", got[1]);
    assert_eq!(
        got[3]["result"]["sessions"][0]["session"], "big",
        "{}",
        got[3]
    );

    // A first answer bigger than the socket takes at once, then another
    // request on the same connection: both whole, in order.
    let mut s = connect();
    let two = req(5, "pty/read", json!({"session": "big", "history": true}))
        + &req(6, "pty/status", json!({"session": "big"}));
    s.write_all(two.as_bytes()).expect("send");
    let got = answers(&s, 2);
    let screen = got[0]["result"]["screen"].as_str().unwrap_or("");
    assert!(screen.len() > 500_000, "history of {} bytes", screen.len());
    assert!(
        screen.contains("line 02000 ") && screen.contains("line 05999 "),
        "not whole"
    );
    assert_eq!(got[1]["id"], 6, "{}", got[1]);

    // A first request that arrives in two pieces.
    let mut s = connect();
    let line = req(7, "pty/status", json!({"session": "big"}));
    let (a, b) = line.split_at(10);
    s.write_all(a.as_bytes()).expect("send");
    std::thread::sleep(Duration::from_millis(50));
    s.write_all(b.as_bytes()).expect("send");
    assert_eq!(answers(&s, 1)[0]["result"]["running"], true);

    // Clients that leave at once, with or without reading: the daemon
    // carries on.
    for _ in 0..20 {
        let mut s = connect();
        s.write_all(req(8, "pty/read", json!({"session": "big", "history": true})).as_bytes())
            .expect("send");
    }
    assert_eq!(
        c.ok("pty/status", json!({"session": "big"}))["running"],
        true
    );
    c.ok("pty/kill", json!({"session": "big"}));
}

/// `pty/record` over the socket takes an absolute path: the daemon's
/// working directory is not the caller's, so a relative one is refused
/// (and nothing is written there); the CLI's `record` makes paths absolute.
#[test]
fn a_recording_path_over_the_socket_must_be_absolute() {
    let sb = Sandbox::new("recpath");
    sb.run(&["start", "--session", "r", "--", "cat"]).ok();
    let mut c = sb.rpc();
    let e = c.err(
        "pty/record",
        json!({"session": "r", "action": "start", "path": "rel.cast"}),
    );
    assert_eq!(e["code"], -32602, "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap_or("")
            .contains("must be absolute"),
        "{e}"
    );
    let daemon = sb.daemon_pid().expect("daemon pid");
    let cwd = std::fs::read_link(format!("/proc/{daemon}/cwd")).expect("daemon cwd");
    assert!(!cwd.join("rel.cast").exists(), "written in {cwd:?}");
    // The CLI's relative path is taken from the caller's directory.
    let here = sb.work("rec");
    let out = sb.run_in(&here, &["record", "--session", "r", "start", "rel.cast"]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(here.join("rel.cast").exists(), "{out:?}");
}

/// `pty/resize` needs both sizes; a `null` one is left out, not 0.
#[test]
fn a_resize_with_a_null_size_says_the_size_is_required() {
    let sb = Sandbox::new("resizenull");
    sb.run(&["start", "--session", "z", "--", "cat"]).ok();
    let mut c = sb.rpc();
    for params in [
        json!({"session": "z", "cols": null, "rows": 10}),
        json!({"session": "z", "cols": 40}),
    ] {
        let e = c.err("pty/resize", params.clone());
        assert_eq!(e["code"], -32602, "{params}: {e}");
        assert_eq!(e["message"], "cols and rows are required", "{params}: {e}");
    }
    c.ok(
        "pty/resize",
        json!({"session": "z", "cols": 40, "rows": 10}),
    );
}
