//! `ptybroker attach`, a person watching a session, end to end: the viewer
//! runs inside another ptybroker session (a PTY is a PTY), so its screen
//! is read back exactly as a person would see it, and compared with the
//! screen of the session it shows. Also `pty/attach` itself, as any
//! JSON-RPC client would use it.
//!
//! Screens are polled until they show what a person would wait for,
//! within a generous bound; nothing here asserts how fast anything is.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use common::{eventually, Sandbox, BIN, STATUS_LINE};
use serde_json::{json, Value};

/// How long a screen may take to show what it should: an upper bound for
/// a loaded machine, not an expectation.
const PATIENCE: Duration = Duration::from_secs(60);

const SIGCONT: i32 = 18;
const SIGSTOP: i32 = 19;

/// The banner's words for a read-only viewer of session `inner`.
const READ_ONLY_BANNER: &str = r#"ptybroker: "inner" read-only | Ctrl+\ twice detaches"#;

/// Start bash (prompt `ready> `) in session `name` at `size`.
fn start_bash(sb: &Sandbox, name: &str, size: (u16, u16)) {
    let (c, r) = (size.0.to_string(), size.1.to_string());
    sb.run(&[
        "start",
        "-s",
        name,
        "--cols",
        &c,
        "--rows",
        &r,
        "--env",
        "PS1=ready> ",
        "--",
        "bash",
        "--norc",
        "--noprofile",
    ])
    .ok();
    wait_screen(sb, name, "ready>");
}

/// Start `ptybroker attach ARGS` as the program of session `outer`, a
/// terminal of `size`.
fn start_viewer(sb: &Sandbox, outer: &str, size: (u16, u16), args: &[&str]) {
    let (c, r) = (size.0.to_string(), size.1.to_string());
    let mut all = vec![
        "start", "-s", outer, "--cols", &c, "--rows", &r, "--", BIN, "attach",
    ];
    all.extend(args);
    sb.run(&all).ok().assert_one_stderr_line(STATUS_LINE);
}

fn wait_screen(sb: &Sandbox, name: &str, text: &str) {
    sb.run(&[
        "wait",
        "-s",
        name,
        "--screen",
        "--match",
        text,
        "--max-wait",
        "30000",
    ])
    .ok();
}

/// The rendered screen of `name`, one string per row, trailing blanks off.
fn screen(sb: &Sandbox, name: &str) -> Vec<String> {
    let out = sb.run(&["read", "-s", name]).ok();
    out.stdout
        .lines()
        .map(|l| l.trim_end().to_string())
        .collect()
}

fn status(sb: &Sandbox, name: &str) -> Value {
    let out = sb.run(&["status", "-s", name, "--json"]).ok();
    serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("status is not JSON ({e}): {:?}", out.stdout))
}

/// Row `i` of `rows`, clipped to `cols` characters.
fn row(rows: &[String], i: usize, cols: usize) -> String {
    let r: String = rows
        .get(i)
        .map_or(String::new(), |r| r.chars().take(cols).collect());
    r.trim_end().to_string()
}

/// Wait until the first `n` rows of the viewer in `outer` (a terminal
/// `cols` wide) are the rows of `inner`, clipped to it, as they stand;
/// fail with both screens if they never are.
fn viewer_matches(sb: &Sandbox, outer: &str, inner: &str, cols: usize, n: usize, what: &str) {
    let mut last = (Vec::new(), Vec::new());
    let same = eventually(PATIENCE, || {
        let theirs = screen(sb, inner);
        let ours = screen(sb, outer);
        let same = (0..n).all(|i| row(&ours, i, cols) == row(&theirs, i, cols));
        last = (ours, theirs);
        same.then_some(())
    });
    assert!(
        same.is_some(),
        "{what}: the viewer never showed the session's screen\nviewer:\n{}\nsession:\n{}",
        last.0.join("\n"),
        last.1.join("\n")
    );
}

/// Wait until bash's prompt is the last row with text on `name`'s screen.
fn prompt_last(sb: &Sandbox, name: &str) {
    let mut last = Vec::new();
    eventually(PATIENCE, || {
        last = screen(sb, name);
        let end = last.iter().rev().find(|r| !r.is_empty())?;
        (end == "ready>").then_some(())
    })
    .unwrap_or_else(|| panic!("{name} never came back to the prompt:\n{}", last.join("\n")));
}

/// Wait until `name` shows `text` anywhere on its screen.
fn screen_shows(sb: &Sandbox, name: &str, text: &str) -> Vec<String> {
    let mut last = Vec::new();
    eventually(PATIENCE, || {
        last = screen(sb, name);
        last.iter().any(|r| r.contains(text)).then_some(())
    })
    .unwrap_or_else(|| panic!("{name} never showed {text:?}:\n{}", last.join("\n")));
    last
}

/// Wait (bounded) until `name`'s program has exited; its status JSON.
fn exited(sb: &Sandbox, name: &str) -> Value {
    sb.run(&["wait", "-s", name, "--max-wait", "60000"]).ok();
    let st = status(sb, name);
    assert_eq!(st["running"], false, "{st}");
    st
}

/// Wait until `inner` counts `viewers` viewers; its status JSON.
fn viewers_become(sb: &Sandbox, inner: &str, viewers: u64) -> Value {
    let mut last = Value::Null;
    eventually(PATIENCE, || {
        last = status(sb, inner);
        (last["viewers"] == viewers).then_some(())
    })
    .unwrap_or_else(|| panic!("{inner} never had {viewers} viewers: {last}"));
    last
}

/// Press the detach key twice in the viewer of `outer`.
fn detach(sb: &Sandbox, outer: &str) {
    sb.run(&["send", "-s", outer, "--key", "C-\\", "--key", "C-\\"])
        .ok();
}

/// A step on bash in `name` still answers, and with the right answer.
fn step_answers(sb: &Sandbox, name: &str, tag: &str) {
    let out = sb
        .run(&["step", "-s", name, &format!("echo {tag}-$((6*7))")])
        .ok();
    out.assert_one_stderr_line(STATUS_LINE);
    let mut text = out.stdout;
    if !text.contains(&format!("{tag}-42")) {
        // The quiet window closed first on a loaded machine.
        wait_screen(sb, name, &format!("{tag}-42"));
        text = screen(sb, name).join("\n");
    }
    assert!(text.contains(&format!("{tag}-42")), "{text}");
}

#[test]
fn the_viewer_shows_the_session_and_follows_its_output() {
    let sb = Sandbox::new("attach-bash");
    start_bash(&sb, "inner", (60, 10));
    sb.run(&[
        "step",
        "-s",
        "inner",
        "printf '\\e[3%dmred\\e[0m plain\\n' 1",
    ])
    .ok();
    start_viewer(&sb, "outer", (80, 14), &["-s", "inner"]);
    viewer_matches(&sb, "outer", "inner", 80, 10, "after attach");
    // The spare row below the session's holds the banner.
    let rows = screen_shows(&sb, "outer", READ_ONLY_BANNER);
    assert_eq!(row(&rows, 10, 80), READ_ONLY_BANNER, "{rows:?}");
    // Colours come through as colours, not as text.
    assert!(!rows.iter().any(|r| r.contains("[31m")), "{rows:?}");

    for i in 0..3 {
        step_answers(&sb, "inner", &format!("more{i}"));
        viewer_matches(&sb, "outer", "inner", 80, 10, "after more output");
    }
    // Scrolled: the viewer scrolled with it.
    sb.run(&["step", "-s", "inner", "seq 1 40"]).ok();
    wait_screen(&sb, "inner", "40");
    viewer_matches(&sb, "outer", "inner", 80, 10, "after seq");
    // Watching did not change the session's size.
    assert_eq!(
        status(&sb, "inner")["size"],
        json!({"cols": 60, "rows": 10})
    );
}

#[test]
fn the_viewer_follows_vim_and_top() {
    let sb = Sandbox::new("attach-full");
    let dir = sb.work("vim");
    std::fs::write(dir.join("notes.txt"), "first line\nsecond line\n").expect("write");
    start_bash(&sb, "inner", (80, 24));
    sb.run(&["step", "-s", "inner", &format!("cd {}", dir.display())])
        .ok();
    start_viewer(&sb, "outer", (100, 30), &["-s", "inner"]);
    viewer_matches(&sb, "outer", "inner", 100, 24, "bash");

    sb.run(&["step", "-s", "inner", "vim -u NONE -N -i NONE -n notes.txt"])
        .ok();
    wait_screen(&sb, "inner", "second line");
    viewer_matches(&sb, "outer", "inner", 100, 24, "vim");
    sb.run(&[
        "send",
        "-s",
        "inner",
        "--key",
        "Escape",
        "ggOadded by the agent",
        "--key",
        "Escape",
    ])
    .ok();
    wait_screen(&sb, "inner", "added by the agent");
    viewer_matches(&sb, "outer", "inner", 100, 24, "vim after an edit");
    sb.run(&["send", "-s", "inner", ":q!", "--enter"]).ok();
    prompt_last(&sb, "inner");
    // Back on the primary screen, as bash left it.
    viewer_matches(&sb, "outer", "inner", 100, 24, "after vim");
    assert_eq!(status(&sb, "inner")["altScreen"], false);

    // A long delay: top draws once, then only when told.
    sb.run(&["send", "-s", "inner", "top -d 100", "--enter"])
        .ok();
    wait_screen(&sb, "inner", "PID");
    viewer_matches(&sb, "outer", "inner", 100, 24, "top");
    sb.run(&["send", "-s", "inner", "q"]).ok();
    prompt_last(&sb, "inner");
    viewer_matches(&sb, "outer", "inner", 100, 24, "after top");
    let rows = screen(&sb, "outer");
    assert_eq!(row(&rows, 24, 100), READ_ONLY_BANNER, "{rows:?}");
}

#[test]
fn a_read_only_viewer_types_nothing_and_detach_leaves_the_program_running() {
    let sb = Sandbox::new("attach-ro");
    start_bash(&sb, "inner", (60, 10));
    let pid = status(&sb, "inner")["pid"].clone();
    start_viewer(&sb, "outer", (80, 14), &["-s", "inner"]);
    screen_shows(&sb, "outer", READ_ONLY_BANNER);
    let st = viewers_become(&sb, "inner", 1);
    assert_eq!(st["viewerInput"], false, "{st}");

    // Keys typed at the viewer, Ctrl+C among them, then the detach key
    // twice: the viewer handles them in order, so whatever it would have
    // typed was typed before it left.
    sb.run(&["send", "-s", "outer", "echo typed-by-a-viewer", "--enter"])
        .ok();
    sb.run(&["send", "-s", "outer", "--key", "C-c", "exit", "--enter"])
        .ok();
    detach(&sb, "outer");
    let st = exited(&sb, "outer");
    assert_eq!(st["exitCode"], 0, "{st}");
    screen_shows(&sb, "outer", "[ptybroker: detached; the session runs on]");

    // The program runs on, unchanged, and the agent's next step works.
    let st = viewers_become(&sb, "inner", 0);
    assert_eq!(st["running"], true, "{st}");
    assert_eq!(st["pid"], pid, "{st}");
    assert_eq!(st["size"], json!({"cols": 60, "rows": 10}), "{st}");
    step_answers(&sb, "inner", "next");
    let all = sb.run(&["read", "-s", "inner", "--history"]).ok().stdout;
    assert!(!all.contains("typed-by-a-viewer"), "{all}");
    assert!(!all.contains("^C"), "{all}");
}

#[test]
fn a_writing_viewer_types_into_the_program_and_ctrl_c_reaches_it() {
    let sb = Sandbox::new("attach-write");
    let dir = sb.work("py");
    std::fs::write(
        dir.join("wait_for_int.py"),
        "import time\nprint('sleeping now', flush=True)\ntry:\n    time.sleep(1000)\nexcept KeyboardInterrupt:\n    print('got an interrupt')\n",
    )
    .expect("write script");
    start_bash(&sb, "inner", (70, 12));
    start_viewer(&sb, "outer", (80, 14), &["-s", "inner", "--write"]);
    screen_shows(
        &sb,
        "outer",
        r#"ptybroker: "inner" typing | Ctrl+\ twice detaches"#,
    );
    let st = viewers_become(&sb, "inner", 1);
    assert_eq!(st["viewerInput"], true, "{st}");

    sb.run(&["send", "-s", "outer", "echo typed-$((6*7))", "--enter"])
        .ok();
    wait_screen(&sb, "inner", "typed-42");
    viewer_matches(&sb, "outer", "inner", 80, 12, "after typing");

    // The agent's own calls still work while a person holds input.
    step_answers(&sb, "inner", "agent");

    let script = dir.join("wait_for_int.py");
    sb.run(&[
        "send",
        "-s",
        "outer",
        &format!("python3 {}", script.display()),
        "--enter",
    ])
    .ok();
    wait_screen(&sb, "inner", "sleeping now");
    sb.run(&["send", "-s", "outer", "--key", "C-c"]).ok();
    wait_screen(&sb, "inner", "got an interrupt");

    // One detach key alone is typed as itself; twice detaches.
    detach(&sb, "outer");
    exited(&sb, "outer");
    step_answers(&sb, "inner", "after");
    assert_eq!(viewers_become(&sb, "inner", 0)["viewerInput"], false);
}

#[test]
fn two_viewers_at_once_and_list_and_status_count_them() {
    let sb = Sandbox::new("attach-two");
    start_bash(&sb, "inner", (60, 10));
    start_viewer(&sb, "one", (80, 14), &["-s", "inner"]);
    start_viewer(
        &sb,
        "two",
        (70, 12),
        &["-s", "inner", "--write", "--detach-key", "C-]"],
    );
    screen_shows(
        &sb,
        "two",
        r#"ptybroker: "inner" typing | C-] twice detaches"#,
    );
    let st = viewers_become(&sb, "inner", 2);
    assert_eq!(st["viewerInput"], true, "{st}");

    step_answers(&sb, "inner", "both");
    viewer_matches(&sb, "one", "inner", 80, 10, "first viewer");
    viewer_matches(&sb, "two", "inner", 70, 10, "second viewer");

    // `list` has a column for them, `status` a line.
    let table = sb.run(&["list"]).ok().stdout;
    let head = table.lines().next().unwrap_or_default();
    let col = head
        .find("VIEWERS")
        .unwrap_or_else(|| panic!("no VIEWERS in {table}"));
    let row_of = |name: &str| {
        table
            .lines()
            .find(|r| r.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} in {table}"))
            .to_string()
    };
    assert!(row_of("inner")[col..].starts_with("2 (typing) "), "{table}");
    assert!(row_of("one")[col..].starts_with("0 "), "{table}");
    let out = sb.run(&["status", "-s", "inner"]).ok();
    assert!(
        out.stdout.lines().any(|l| l == "viewers: 2 (typing)"),
        "{out:?}"
    );
    // The status line keeps seed 002's shape.
    out.assert_one_stderr_line(STATUS_LINE);

    // Its own detach key: Ctrl+\ is typed through, Ctrl+] twice leaves.
    detach(&sb, "two");
    sb.run(&["send", "-s", "two", "--key", "C-]", "--key", "C-]"])
        .ok();
    exited(&sb, "two");
    let st = viewers_become(&sb, "inner", 1);
    assert_eq!(st["viewerInput"], false, "{st}");
    let out = sb.run(&["status", "-s", "inner"]).ok();
    assert!(out.stdout.lines().any(|l| l == "viewers: 1"), "{out:?}");
    // The other viewer still follows.
    step_answers(&sb, "inner", "one-left");
    viewer_matches(&sb, "one", "inner", 80, 10, "the viewer left");
    detach(&sb, "one");
    exited(&sb, "one");
    viewers_become(&sb, "inner", 0);
    let out = sb.run(&["status", "-s", "inner"]).ok();
    assert!(!out.stdout.contains("viewers"), "{out:?}");
}

/// Rows of 76 characters, numbered: what a narrow viewer clips.
const WIDE_ROWS: &str =
    "seq -f 'row%02g-abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnop' 1 30";

#[test]
fn a_smaller_viewer_shows_what_fits_and_says_so() {
    let sb = Sandbox::new("attach-small");
    start_bash(&sb, "inner", (80, 24));
    sb.run(&["step", "-s", "inner", WIDE_ROWS]).ok();
    wait_screen(&sb, "inner", "row30-");
    start_viewer(&sb, "outer", (40, 10), &["-s", "inner"]);
    // The banner covers the last row for a moment; the viewer wrote it.
    let written = eventually(PATIENCE, || {
        let out = sb
            .rpc()
            .ok("pty/output", json!({"session": "outer", "offset": 0}));
        let data = out["data"].as_str().unwrap_or_default().to_string();
        data.contains("showing 40x10 of 80x24").then_some(data)
    });
    assert!(written.is_some(), "the banner never named the part shown");
    // Then the top-left 40x10 of the session, clipped, not wrapped.
    viewer_matches(&sb, "outer", "inner", 40, 10, "a smaller viewer");
    let rows = screen(&sb, "outer");
    assert!(rows.iter().all(|r| r.chars().count() <= 40), "{rows:?}");
    assert!(rows.iter().any(|r| r.starts_with("row")), "{rows:?}");
    // Without --resize the session keeps its size.
    assert_eq!(
        status(&sb, "inner")["size"],
        json!({"cols": 80, "rows": 24})
    );
}

#[test]
fn resize_gives_the_session_the_viewers_size_and_follows_it() {
    let sb = Sandbox::new("attach-resize");
    start_bash(&sb, "inner", (80, 24));
    start_viewer(&sb, "outer", (50, 12), &["-s", "inner", "--resize"]);
    let size_becomes = |cols: u64, rows: u64| {
        let mut last = Value::Null;
        eventually(PATIENCE, || {
            last = status(&sb, "inner");
            (last["size"] == json!({"cols": cols, "rows": rows})).then_some(())
        })
        .unwrap_or_else(|| panic!("never {cols}x{rows}: {last}"));
    };
    size_becomes(50, 12);
    sb.run(&["resize", "-s", "outer", "--cols", "60", "--rows", "15"])
        .ok();
    size_becomes(60, 15);
    step_answers(&sb, "inner", "resized");
    viewer_matches(&sb, "outer", "inner", 60, 14, "after the resize");
    // Leaving keeps the size it had.
    detach(&sb, "outer");
    exited(&sb, "outer");
    assert_eq!(
        status(&sb, "inner")["size"],
        json!({"cols": 60, "rows": 15})
    );
}

#[test]
fn a_viewer_that_stops_reading_does_not_hold_the_session_and_is_dropped() {
    let sb = Sandbox::new("attach-stall");
    // A wide, tall session whose every frame is large: a few dozen of
    // them fill any socket buffer.
    start_bash(&sb, "inner", (200, 50));
    start_viewer(&sb, "outer", (80, 24), &["-s", "inner"]);
    viewers_become(&sb, "inner", 1);
    let viewer = status(&sb, "outer")["pid"]
        .as_i64()
        .expect("the viewer's pid") as i32;
    common::kill(viewer, SIGSTOP);

    sb.run(&[
        "step",
        "-s",
        "inner",
        "--max-wait",
        "60000",
        "for i in $(seq 1 120); do printf '%0190d\\n' $i; sleep 0.02; done",
    ])
    .ok();
    wait_screen(&sb, "inner", "0120");
    // The session answers while its viewer sits on a full buffer...
    step_answers(&sb, "inner", "stalled");
    // ...and the viewer is dropped once it has not read for VIEWER_STALL.
    viewers_become(&sb, "inner", 0);
    step_answers(&sb, "inner", "dropped");

    // Woken, the viewer draws what it had, learns it was dropped and ends.
    common::kill(viewer, SIGCONT);
    exited(&sb, "outer");
    screen_shows(&sb, "outer", "the daemon ended the view");
}

#[test]
fn attach_needs_a_terminal() {
    let sb = Sandbox::new("attach-tty");
    start_bash(&sb, "inner", (60, 10));
    let out = sb.run(&["attach", "-s", "inner"]);
    assert_eq!(out.code(), 2, "{out:?}");
    out.assert_one_stderr_line(
        r"^\[ptybroker: attach shows a session on a terminal: run it from one .*\]$",
    );
    assert_eq!(status(&sb, "inner")["viewers"], 0);
    let out = sb.run(&["attach", "-s", "inner", "--detach-key", "x"]);
    assert_eq!(out.code(), 2, "{out:?}");
    out.assert_one_stderr_line(r#"^\[ptybroker: --detach-key "x": pick a control key such as Ctrl\+\] \(it is pressed twice\).*\]$"#);
}

/// A raw connection to the daemon for `pty/attach`: lines out, lines in.
struct Conn {
    r: BufReader<UnixStream>,
    w: UnixStream,
}

impl Conn {
    fn new(sb: &Sandbox) -> Conn {
        let w = UnixStream::connect(sb.socket()).expect("connect");
        w.set_read_timeout(Some(PATIENCE)).expect("timeout");
        let r = BufReader::new(w.try_clone().expect("clone"));
        Conn { r, w }
    }

    fn send(&mut self, v: Value) {
        self.w.write_all(format!("{v}\n").as_bytes()).expect("send");
    }

    /// The next line, `None` once the daemon closed the connection.
    fn next(&mut self) -> Option<Value> {
        let mut line = String::new();
        match self.r.read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(serde_json::from_str(&line).expect("a JSON line")),
        }
    }

    /// Read frames until one shows `text`; fail if the view ends first.
    fn frame_showing(&mut self, text: &str) -> Value {
        loop {
            let f = self
                .next()
                .unwrap_or_else(|| panic!("the view ended before {text:?}"));
            assert!(f.get("id").is_none(), "a notification: {f}");
            if f["method"] == "pty/frame" && f["params"]["lines"].to_string().contains(text) {
                return f;
            }
        }
    }

    /// Read until the daemon closes; every line is a notification.
    fn drain(&mut self) -> Vec<Value> {
        std::iter::from_fn(|| self.next()).collect()
    }
}

fn attach_req(params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 7, "method": "pty/attach", "params": params})
}

#[test]
fn pty_attach_over_json_rpc() {
    let sb = Sandbox::new("attach-rpc");
    start_bash(&sb, "inner", (60, 10));

    // Errors in JSON-RPC's shape, and the connection goes on.
    let mut c = Conn::new(&sb);
    c.send(attach_req(json!({"session": "nosuch"})));
    let e = c.next().expect("an answer");
    assert_eq!(e["id"], 7, "{e}");
    assert_eq!(e["error"]["code"], -32000, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("nosuch"),
        "{e}"
    );
    c.send(attach_req(json!({"session": "inner", "write": "yes"})));
    let e = c.next().expect("an answer");
    assert_eq!(e["error"]["code"], -32602, "{e}");
    assert_eq!(e["error"]["message"], "write must be a boolean", "{e}");
    c.send(attach_req(json!({"session": 5})));
    assert_eq!(c.next().expect("an answer")["error"]["code"], -32602);
    c.send(json!({"jsonrpc": "2.0", "id": 8, "method": "pty/list"}));
    assert_eq!(c.next().expect("an answer")["id"], 8);

    // The answer, then the whole screen, then what changes.
    c.send(attach_req(json!({"session": "inner"})));
    let a = c.next().expect("the answer");
    assert_eq!(
        a["result"],
        json!({"session": "inner", "size": {"cols": 60, "rows": 10},
               "write": false, "resize": false, "viewers": 1, "viewerInput": false}),
        "{a}"
    );
    let f = c.next().expect("the first frame");
    assert_eq!(f["method"], "pty/frame", "{f}");
    let p = &f["params"];
    assert_eq!(
        (p["cols"].clone(), p["rows"].clone()),
        (json!(60), json!(10)),
        "{f}"
    );
    assert_eq!(p["full"], true, "{f}");
    assert_eq!(p["lines"].as_array().map(Vec::len), Some(10), "{f}");
    assert_eq!(p["lines"][0], json!([0, "ready>"]), "{f}");
    assert_eq!(
        p["cursor"],
        json!({"row": 0, "col": 7, "visible": true}),
        "{f}"
    );
    assert_eq!(p["altScreen"], false, "{f}");

    sb.run(&["send", "-s", "inner", "echo via-rpc-$((6*7))", "--enter"])
        .ok();
    let f = c.frame_showing("via-rpc-42");
    assert_eq!(f["params"]["full"], false, "only what changed: {f}");
    // Read-only: input is ignored; detach closes the view.
    c.send(json!({"jsonrpc": "2.0", "method": "pty/input", "params": {"data": "echo ignored-input\r"}}));
    c.send(json!({"jsonrpc": "2.0", "method": "pty/resize", "params": {"cols": 40, "rows": 8}}));
    c.send(json!({"jsonrpc": "2.0", "method": "pty/detach"}));
    let rest = c.drain();
    assert!(rest.iter().all(|v| v["method"] == "pty/frame"), "{rest:?}");
    let st = viewers_become(&sb, "inner", 0);
    assert_eq!(st["size"], json!({"cols": 60, "rows": 10}), "{st}");
    step_answers(&sb, "inner", "still");
    let all = screen(&sb, "inner").join("\n");
    assert!(!all.contains("ignored-input"), "{all}");

    // With write and resize, the viewer's input and size reach the
    // program; its exit ends the view with pty/exit.
    sb.run(&[
        "start",
        "-s",
        "exits",
        "--",
        "sh",
        "-c",
        "read x; echo got-$x; exit 3",
    ])
    .ok();
    let mut c = Conn::new(&sb);
    c.send(attach_req(
        json!({"session": "exits", "write": true, "resize": true}),
    ));
    let a = c.next().expect("the answer");
    assert_eq!(a["result"]["viewerInput"], true, "{a}");
    c.send(json!({"jsonrpc": "2.0", "method": "pty/resize", "params": {"cols": 40, "rows": 8}}));
    let f = eventually(PATIENCE, || {
        let f = c.next()?;
        (f["params"]["cols"] == 40).then_some(f)
    })
    .expect("a frame at the new size");
    assert_eq!(f["params"]["full"], true, "{f}");
    c.send(json!({"jsonrpc": "2.0", "method": "pty/input", "params": {"data": "word\r"}}));
    let rest = c.drain();
    let end = rest.last().expect("pty/exit");
    assert_eq!(
        end,
        &json!({"jsonrpc": "2.0", "method": "pty/exit", "params": {"exitCode": 3, "signal": null}}),
        "{rest:?}"
    );
    assert!(
        rest.iter().any(|v| v.to_string().contains("got-word")),
        "{rest:?}"
    );
}
