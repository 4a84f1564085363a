//! Floods: a session's output is parsed by a second thread while one lasts
//! (see `Inner::drain` in src/session.rs), so that the program is not kept
//! waiting on its terminal while the emulator works. Whichever thread
//! absorbs it, output keeps its order, terminal queries inside a flood are
//! answered, waits do not settle before the flood is absorbed, and the
//! parser thread ends when the flood does.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use common::{eventually, Sandbox};
use serde_json::json;

/// A sandbox with its daemon running, a connection to it, and its pid.
fn daemon(name: &str) -> (Sandbox, common::Rpc, i32) {
    let sb = Sandbox::new(name);
    sb.run(&["start", "--session", "keep", "--", "cat"]).ok();
    let rpc = sb.rpc();
    let pid = sb.daemon_pid().expect("daemon pid");
    (sb, rpc, pid)
}

/// Run python3 `script` in `session` (80x24) to its exit; its last screen.
fn run_python(rpc: &mut common::Rpc, session: &str, script: &str) -> String {
    rpc.ok(
        "pty/start",
        json!({"session": session, "argv": ["python3", "-c", script], "rows": 24, "cols": 80}),
    );
    let w = rpc.ok(
        "pty/wait",
        json!({"session": session, "exit": true, "timeout": 120_000}),
    );
    assert_eq!(w["reason"], "exited", "{w}");
    rpc.ok("pty/read", json!({"session": session}))["screen"]
        .as_str()
        .expect("screen")
        .to_string()
}

/// Threads of `pid` named `name` now.
fn threads_named(pid: i32, name: &str) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter(|t| {
                    std::fs::read_to_string(t.path().join("comm"))
                        .is_ok_and(|c| c.trim_end() == name)
                })
                .count()
        })
        .unwrap_or(0)
}

/// Watch `pid` for a parser thread until `done`; whether one was seen.
fn watch_for_parser(pid: i32, done: Arc<AtomicBool>) -> thread::JoinHandle<bool> {
    thread::spawn(move || {
        let mut seen = false;
        while !done.load(Ordering::Relaxed) && !seen {
            seen = threads_named(pid, "pty-parser") > 0;
            thread::sleep(Duration::from_millis(2));
        }
        seen
    })
}

/// The numbers that start each whole line of `text` (lines that start with
/// eight digits), in order.
fn numbers(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|l| l.get(..8).and_then(|d| d.parse().ok()))
        .collect()
}

fn assert_consecutive(ns: &[u64], what: &str) {
    assert!(ns.len() > 1000, "{what}: only {} numbered lines", ns.len());
    for w in ns.windows(2) {
        assert_eq!(w[1], w[0] + 1, "{what}: {} follows {}", w[1], w[0]);
    }
}

/// Bursts of numbered lines with pauses longer than the parser's linger
/// between them, and single lines in the pauses: output moves from the
/// reader to a parser and back several times, and every line stays in
/// place, in the transcript and in the history alike. The parser thread is
/// seen while the bursts run and is gone after.
#[test]
fn output_keeps_its_order_as_a_flood_comes_and_goes() {
    let (_sb, mut rpc, pid) = daemon("flood-order");
    let script = r#"
import sys, time
out = sys.stdout.buffer
n = 0
for burst in range(6):
    lines = []
    for i in range(25000):
        lines.append(b"%08d burst %d keeps the parser busy for a while\n" % (n, burst))
        n += 1
    out.write(b"".join(lines)); out.flush()
    time.sleep(0.35)
    out.write(b"%08d between bursts %d\n" % (n, burst)); out.flush()
    n += 1
    time.sleep(0.05)
out.write(b"END %d\n" % n); out.flush()
"#;
    let done = Arc::new(AtomicBool::new(false));
    let watcher = watch_for_parser(pid, Arc::clone(&done));
    rpc.ok(
        "pty/start",
        json!({"session": "f", "argv": ["python3", "-c", script], "rows": 24, "cols": 80}),
    );
    let w = rpc.ok(
        "pty/wait",
        json!({"session": "f", "exit": true, "timeout": 120_000}),
    );
    done.store(true, Ordering::Relaxed);
    assert_eq!(w["reason"], "exited", "{w}");
    assert!(
        watcher.join().expect("watcher"),
        "no parser thread was seen during a 9 MB flood"
    );

    let st = rpc.ok("pty/status", json!({"session": "f"}));
    let end = st["outputEnd"].as_u64().expect("outputEnd");
    let out = rpc.ok(
        "pty/output",
        json!({"session": "f", "offset": 0, "max": end, "strip": true}),
    );
    let data = out["data"].as_str().expect("data");
    assert!(
        data.ends_with("END 150006\n"),
        "{:?}",
        &data[data.len().saturating_sub(80)..]
    );
    // The ring starts inside a line: the first whole one is the second.
    let ns = numbers(data.split_once('\n').map_or("", |(_, rest)| rest));
    assert_consecutive(&ns, "transcript");
    assert_eq!(ns.last(), Some(&150_005));

    let history = rpc.ok("pty/read", json!({"session": "f", "history": true}))["screen"]
        .as_str()
        .expect("screen")
        .to_string();
    let ns = numbers(&history);
    assert_consecutive(&ns, "history");
    assert_eq!(ns.last(), Some(&150_005));

    // The parser ends after the flood (PARSER_LINGER): no thread lingers.
    assert!(
        eventually(Duration::from_secs(10), || {
            (threads_named(pid, "pty-parser") == 0).then_some(())
        })
        .is_some(),
        "a parser thread outlived its flood"
    );
}

/// A program that floods its terminal and then asks where the cursor is
/// gets its answer: right behind the flood (the parser answers), a moment
/// later (the parser still lingering), and once the parser is gone (the
/// reader answers).
#[test]
fn queries_behind_a_flood_are_answered() {
    let (_sb, mut rpc, _) = daemon("flood-query");
    let script = r#"
import os, select, sys, time, tty
tty.setraw(0)
out = sys.stdout.buffer
def ask():
    out.write(b"\x1b[6n"); out.flush()
    got, end = b"", time.time() + 30
    while not got.endswith(b"R") and time.time() < end:
        if select.select([0], [], [], end - time.time())[0]:
            got += os.read(0, 64)
    return got
flood = b"".join(b"line %06d of a flood that keeps the parser busy\r\n" % i for i in range(80000))
out.write(flood); out.flush()
a = ask()
time.sleep(0.05)
b = ask()
time.sleep(0.6)
c = ask()
out.write(b"\r\nREPLIES %r %r %r\r\n" % (a, b, c)); out.flush()
"#;
    let screen = run_python(&mut rpc, "q", script);
    let reply = r"b'\\x1b\[\d+;\d+R'";
    let want = common::re(&format!("REPLIES {reply} {reply} {reply}"));
    assert!(want.is_match(&screen), "{screen}");
}

/// A step whose command floods the terminal settles only once all of it is
/// absorbed: its output ends with the last line and the next prompt.
#[test]
fn a_step_that_floods_settles_after_the_flood() {
    let (_sb, mut rpc, _) = daemon("flood-step");
    rpc.ok(
        "pty/start",
        json!({"session": "b", "argv": ["bash", "--norc", "--noprofile"], "env": {"PS1": "READY> "}}),
    );
    rpc.wait_for("b", "READY>");
    let st = rpc.ok(
        "pty/step",
        json!({"session": "b", "text": "seq 1 400000; echo SEQ-DONE", "tail": 2000}),
    );
    let out = st["output"].as_str().expect("output");
    assert!(
        out.trim_end().ends_with("399999\n400000\nSEQ-DONE\nREADY>"),
        "{st}"
    );
    let screen = rpc.ok("pty/read", json!({"session": "b"}))["screen"]
        .as_str()
        .expect("screen")
        .to_string();
    assert!(screen.trim_end().ends_with("SEQ-DONE\nREADY>"), "{screen}");
}

/// A program that floods its terminal with queries while it reads none of
/// the answers fills its own input: the answers the terminal cannot take
/// yet wait, and are all delivered once the program reads, although no
/// more output comes to wake anyone.
#[test]
fn answers_the_terminal_could_not_take_during_a_flood_arrive_later() {
    let (_sb, mut rpc, _) = daemon("flood-answers");
    let script = r#"
import os, select, sys, time, tty
tty.setraw(0)
out = sys.stdout.buffer
n = 150000
out.write(b"".join(b"query %05d \x1b[6n\r\n" % i for i in range(n))); out.flush()
time.sleep(1.0)
got, end = b"", time.time() + 30
while got.count(b"R") < n and time.time() < end:
    if select.select([0], [], [], max(0, end - time.time()))[0]:
        got += os.read(0, 65536)
out.write(b"\r\nANSWERS %d\r\n" % got.count(b"R")); out.flush()
"#;
    let screen = run_python(&mut rpc, "a", script);
    assert!(screen.contains("ANSWERS 150000"), "{screen}");
}
