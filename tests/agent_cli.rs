//! The agent's loop through the command line (issue 15): one call per
//! interaction, only new text, nothing to clean up. `wait --match` waits
//! for output the caller has not seen and prints it; `wait` and `step`
//! print lines as the terminal shows them, never the debris of a
//! full-screen program; `step` takes keys; `--stdin` keeps secrets off the
//! command line.
//!
//! Nothing here asserts how fast anything happens: every check is on what
//! a call printed and how it exited.

mod common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;

use common::{lines, Out, Sandbox, CALL_LIMIT, STATUS_LINE};
use serde_json::json;

/// A bash without rc files whose prompt is `ready> `, settled at its prompt.
fn start_bash(sb: &Sandbox, session: &str) {
    let out = sb
        .run(&[
            "start",
            "--session",
            session,
            "--env",
            "PS1=ready> ",
            "--",
            "bash",
            "--norc",
            "--noprofile",
        ])
        .ok();
    if !out.stdout.contains("ready>") {
        sb.run(&[
            "wait",
            "--session",
            session,
            "--screen",
            "--match",
            "ready>",
        ])
        .ok();
    }
}

/// `ptybroker ARGS` with `input` on its standard input (bounded by
/// [`CALL_LIMIT`]; a call still running then fails the test, and the
/// sandbox kills it).
fn run_with_stdin(sb: &Sandbox, args: &[&str], input: &[u8]) -> Out {
    let file = sb.root.join("stdin");
    std::fs::write(&file, input).expect("write stdin file");
    let mut cmd: Command = sb.command(args);
    cmd.stdin(std::fs::File::open(&file).expect("open stdin file"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn ptybroker");
    let (mut so, mut se) = (
        child.stdout.take().expect("stdout"),
        child.stderr.take().expect("stderr"),
    );
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let (mut o, mut e) = (String::new(), String::new());
        let _ = so.read_to_string(&mut o);
        let _ = se.read_to_string(&mut e);
        let _ = tx.send((child.wait(), o, e));
    });
    let (status, stdout, stderr) = rx
        .recv_timeout(CALL_LIMIT)
        .unwrap_or_else(|_| panic!("ptybroker {args:?} did not finish"));
    Out {
        status: status.expect("wait for ptybroker"),
        stdout,
        stderr,
    }
}

/// No line of `out` is debris of a full-screen program: vim's mode and
/// ruler, its `~` rows, escape sequences shown as text.
fn assert_no_debris(out: &str) {
    for l in lines(out) {
        assert!(l != "~", "a row of ~ in {out:?}");
        for debris in ["-- INSERT --", "ESC", "\x1b", "[[", "~~"] {
            assert!(!l.contains(debris), "{debris:?} in {out:?}");
        }
    }
}

// 1. wait --match

#[test]
fn wait_match_waits_for_new_output_not_the_typed_line_and_prints_it() {
    let sb = Sandbox::new("wait-new");
    start_bash(&sb, "sh");
    // The typed line (with READY in it) is on the screen at once; the
    // word itself comes a second later.
    sb.run(&["step", "--session", "sh", "(sleep 1; echo READY) &"])
        .ok();
    let out = sb
        .run(&[
            "wait",
            "--session",
            "sh",
            "--match",
            "READY",
            "--max-wait",
            "60000",
        ])
        .ok();
    out.assert_one_stderr_line(STATUS_LINE);
    assert!(
        lines(&out.stdout).contains(&"READY"),
        "the matched output is printed: {out:?}"
    );

    // Typed with `send`, the echo of the command is not the answer either.
    sb.run(&["send", "--session", "sh", "sleep 1; echo DONE", "--enter"])
        .ok();
    let out = sb
        .run(&[
            "wait",
            "--session",
            "sh",
            "--match",
            "DONE",
            "--max-wait",
            "60000",
        ])
        .ok();
    assert!(lines(&out.stdout).contains(&"DONE"), "{out:?}");

    // --regex, over the output's lines.
    sb.run(&[
        "send",
        "--session",
        "sh",
        "sleep 1; echo n=$((6*7))",
        "--enter",
    ])
    .ok();
    let out = sb
        .run(&[
            "wait",
            "--session",
            "sh",
            "--regex",
            "^n=[0-9]+$",
            "--max-wait",
            "60000",
        ])
        .ok();
    assert!(lines(&out.stdout).contains(&"n=42"), "{out:?}");
}

#[test]
fn wait_match_screen_matches_what_is_already_shown() {
    let sb = Sandbox::new("wait-screen");
    start_bash(&sb, "sh");
    // Seen already (the prompt): only --screen finds it without new output.
    let out = sb
        .run(&["wait", "--session", "sh", "--screen", "--match", "ready>"])
        .ok();
    out.assert_one_stderr_line(STATUS_LINE);
    let out = sb.run(&[
        "wait",
        "--session",
        "sh",
        "--match",
        "ready>",
        "--max-wait",
        "300",
    ]);
    assert_eq!(out.code(), 1, "nothing new came: {out:?}");
    assert!(
        out.status_line().contains("gave up after 300 ms"),
        "{out:?}"
    );
    // The regex form of the screen match (rows are trimmed).
    sb.run(&[
        "wait",
        "--session",
        "sh",
        "--screen",
        "--regex",
        "^ready>$",
        "--max-wait",
        "60000",
    ])
    .ok();
    // Usage: a regex that does not compile, both forms at once.
    let out = sb.run(&["wait", "--session", "sh", "--regex", "("]);
    assert_ne!(out.code(), 0, "{out:?}");
    let out = sb.run(&["wait", "--session", "sh", "--match", "a", "--regex", "b"]);
    assert_eq!(out.code(), 2, "{out:?}");
}

#[test]
fn pty_wait_match_output_over_json_rpc() {
    let sb = Sandbox::new("wait-rpc");
    start_bash(&sb, "sh");
    let mut rpc = sb.rpc();
    // Seed 000's match looks at the screen: the prompt is there.
    let r = rpc.ok(
        "pty/wait",
        json!({"session": "sh", "match": "ready>", "timeout": 30_000}),
    );
    assert_eq!(r["reason"], "matched", "{r}");
    // matchOutput: only what came after the read mark counts.
    let r = rpc.ok(
        "pty/wait",
        json!({"session": "sh", "match": "ready>", "matchOutput": true, "timeout": 300}),
    );
    assert_eq!(r["reason"], "timeout", "{r}");
    rpc.ok(
        "pty/write",
        json!({"session": "sh", "action": [{"text": "echo X$((1+1))Y"}, {"key": "Enter"}]}),
    );
    let r = rpc.ok(
        "pty/wait",
        json!({"session": "sh", "regex": "X[0-9]Y", "matchOutput": true, "output": true, "timeout": 30_000}),
    );
    assert_eq!(r["reason"], "matched", "{r}");
    assert!(r["output"].as_str().unwrap_or("").contains("X2Y"), "{r}");
}

// 2. wait prints lines as the terminal shows them

#[test]
fn wait_after_vim_prints_no_debris() {
    let sb = Sandbox::new("wait-vim");
    let dir = sb.work("vim");
    std::fs::write(dir.join("f.txt"), "hello\n").expect("write");
    sb.run_in(
        &dir,
        &["start", "--session", "v", "--", "vim", "--clean", "f.txt"],
    )
    .ok();
    sb.run(&[
        "send",
        "--session",
        "v",
        "ix",
        "--key",
        "Escape",
        ":wq",
        "--key",
        "Enter",
    ])
    .ok();
    let out = sb
        .run(&["wait", "--session", "v", "--max-wait", "60000"])
        .ok();
    out.assert_one_stderr_line(STATUS_LINE);
    assert!(out.status_line().contains("exited"), "{out:?}");
    assert_no_debris(&out.stdout);
    assert!(!out.stdout.contains("written"), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(dir.join("f.txt")).expect("read"),
        "xhello\n"
    );
}

#[test]
fn wait_after_less_prints_only_the_new_prompt() {
    let sb = Sandbox::new("wait-less");
    let dir = sb.work("less");
    let text: String = (1..=200).map(|i| format!("row {i}\n")).collect();
    std::fs::write(dir.join("n.txt"), text).expect("write");
    start_bash(&sb, "sh");
    sb.run(&[
        "step",
        "--session",
        "sh",
        &format!("LESSHISTFILE=- LESS= less {}", dir.join("n.txt").display()),
    ])
    .ok();
    sb.run(&["send", "--session", "sh", "--key", "PageDown", "q"])
        .ok();
    let out = sb
        .run(&[
            "wait",
            "--session",
            "sh",
            "--match",
            "ready>",
            "--max-wait",
            "60000",
        ])
        .ok();
    assert_no_debris(&out.stdout);
    assert!(
        !out.stdout.contains("row "),
        "no stale page of less: {out:?}"
    );
    assert_eq!(lines(&out.stdout), ["ready>"], "{out:?}");
}

// 3. quitting a full-screen program

#[test]
fn quitting_top_prints_no_stale_frame() {
    let sb = Sandbox::new("top-quit");
    let out = sb
        .run(&["start", "--session", "t", "--", "top", "-d", "1"])
        .ok();
    assert!(out.stdout.contains("PID"), "top's frame at start: {out:?}");
    let out = sb.run(&["step", "--session", "t", "q"]).ok();
    out.assert_one_stderr_line(STATUS_LINE);
    assert!(out.status_line().contains("exited"), "{out:?}");
    for stale in ["PID", "Tasks:", "load average"] {
        assert!(!out.stdout.contains(stale), "{stale:?} again: {out:?}");
    }
}

// 5. keys in a step

#[test]
fn step_takes_keys_and_settles() {
    let sb = Sandbox::new("step-keys");
    sb.run(&["start", "--session", "py", "--", "python3", "-q"])
        .ok();
    sb.run(&[
        "send",
        "--session",
        "py",
        "import time; time.sleep(120)",
        "--enter",
    ])
    .ok();
    // One call: Ctrl+C, then the traceback and the next prompt.
    let out = sb.run(&["step", "--session", "py", "--key", "Ctrl+C"]).ok();
    out.assert_one_stderr_line(STATUS_LINE);
    assert!(out.stdout.contains("KeyboardInterrupt"), "{out:?}");
    assert!(out.status_line().contains("waiting for input"), "{out:?}");

    // Text without Enter, then Enter alone.
    let out = sb
        .run(&["step", "--session", "py", "--no-enter", "print(6*7)"])
        .ok();
    assert!(!lines(&out.stdout).contains(&"42"), "{out:?}");
    let out = sb.run(&["step", "--session", "py", "--key", "Enter"]).ok();
    assert!(lines(&out.stdout).contains(&"42"), "{out:?}");
}

#[test]
fn step_text_then_keys_drives_vim_in_two_calls() {
    let sb = Sandbox::new("step-vim");
    let dir = sb.work("vim");
    std::fs::write(dir.join("f.txt"), "hello\n").expect("write");
    sb.run_in(
        &dir,
        &["start", "--session", "v", "--", "vim", "--clean", "f.txt"],
    )
    .ok();
    // `i` + text, then Escape: no Enter is added when keys are given.
    sb.run(&["step", "--session", "v", "iabc", "--key", "Escape"])
        .ok();
    let out = sb
        .run(&["step", "--session", "v", ":wq", "--key", "Enter"])
        .ok();
    out.assert_one_stderr_line(STATUS_LINE);
    assert!(out.status_line().contains("exited"), "{out:?}");
    assert_no_debris(&out.stdout);
    assert_eq!(
        std::fs::read_to_string(dir.join("f.txt")).expect("read"),
        "abchello\n"
    );
    // An unknown key name is a usage error before anything is sent.
    let out = sb.run(&["step", "--session", "v", "--key", "Hyper+Q"]);
    assert_eq!(out.code(), 2, "{out:?}");
}

#[test]
fn pty_step_takes_an_action_list() {
    let sb = Sandbox::new("step-rpc");
    start_bash(&sb, "sh");
    let mut rpc = sb.rpc();
    let r = rpc.ok(
        "pty/step",
        json!({"session": "sh", "action": [{"text": "echo A$((2+3))B"}, {"key": "Enter"}]}),
    );
    assert!(r["output"].as_str().unwrap_or("").contains("A5B\n"), "{r}");
    let e = rpc.err(
        "pty/step",
        json!({"session": "sh", "text": "x", "action": {"key": "Enter"}}),
    );
    assert_eq!(e["code"], -32602, "{e}");
}

// 6. secrets from standard input

const GETPASS: &str = "import getpass; p = getpass.getpass('Password: '); print('len', len(p), p == 'hunter2-secret')";

#[test]
fn step_stdin_types_a_password_that_never_is_on_argv() {
    let sb = Sandbox::new("stdin-step");
    let out = sb
        .run(&["start", "--session", "pw", "--", "python3", "-c", GETPASS])
        .ok();
    assert!(out.stdout.contains("Password:"), "{out:?}");
    // One trailing newline is the end of the line, not part of the text.
    let out = run_with_stdin(
        &sb,
        &["step", "--session", "pw", "--stdin"],
        b"hunter2-secret\n",
    )
    .ok();
    assert!(out.stdout.contains("len 14 True"), "{out:?}");
    assert!(!out.stdout.contains("hunter2"), "not echoed: {out:?}");
}

#[test]
fn send_stdin_sends_the_text_in_order() {
    let sb = Sandbox::new("stdin-send");
    sb.run(&["start", "--session", "pw", "--", "python3", "-c", GETPASS])
        .ok();
    run_with_stdin(
        &sb,
        &["send", "--session", "pw", "--stdin", "--enter"],
        b"hunter2-secret",
    )
    .ok();
    let out = sb
        .run(&["wait", "--session", "pw", "--max-wait", "60000"])
        .ok();
    assert!(out.stdout.contains("len 14 True"), "{out:?}");
}

#[test]
fn stdin_is_bounded_and_exclusive() {
    let sb = Sandbox::new("stdin-bounds");
    start_bash(&sb, "sh");
    let big = vec![b'a'; 2 * 1024 * 1024];
    let out = run_with_stdin(&sb, &["step", "--session", "sh", "--stdin"], &big);
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(out.stderr.contains("at most"), "{out:?}");
    let out = run_with_stdin(&sb, &["step", "--session", "sh", "--stdin", "x"], b"y");
    assert_eq!(out.code(), 2, "{out:?}");
}

/// vim waits its ttimeoutlen after a lone Escape to tell the key from an
/// arrow's sequence, and only then leaves insert mode: a step that ends
/// with Escape answers with the screen vim shows after that, not the
/// `-- INSERT --` it still shows during it.
#[test]
fn a_step_ending_in_escape_sees_insert_mode_left() {
    let sb = Sandbox::new("step-esc");
    let dir = sb.work("vim");
    std::fs::write(dir.join("f.txt"), "hello\n").expect("write");
    sb.run_in(
        &dir,
        &["start", "--session", "v", "--", "vim", "--clean", "f.txt"],
    )
    .ok();
    for i in 0..3 {
        let out = sb
            .run(&[
                "step",
                "--session",
                "v",
                &format!("o{i}"),
                "--key",
                "Escape",
            ])
            .ok();
        assert!(!out.stdout.contains("-- INSERT --"), "step {i}: {out:?}");
        let screen = sb.run(&["read", "--session", "v"]).ok();
        assert!(
            !screen.stdout.contains("-- INSERT --"),
            "step {i}: {screen:?}"
        );
    }
    sb.run(&["step", "--session", "v", ":q!", "--key", "Enter"])
        .ok();
}
