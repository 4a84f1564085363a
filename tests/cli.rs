//! The `ptybroker` command line as a user meets it: the status line on
//! stderr, errors in the bracketed form with a non-zero exit status, and the
//! verbs beyond seed 002 (read, send, status, list, resize, signal) and the
//! rendered screen for full-screen programs.

mod common;

use common::{lines, re, Out, Sandbox, STATUS_LINE, STOP_LINE};
use serde_json::Value;

/// A bash without rc files whose prompt is `PS1` (`ready> `).
fn start_bash(sb: &Sandbox, session: &str, extra: &[&str]) -> Out {
    let mut args = vec!["start", "--session", session, "--env", "PS1=ready> "];
    args.extend(extra);
    args.extend(["--", "bash", "--norc", "--noprofile"]);
    let out = sb.run(&args).ok();
    wait_match(sb, session, "ready>");
    out
}

fn wait_match(sb: &Sandbox, session: &str, text: &str) -> Out {
    sb.run(&[
        "wait",
        "--session",
        session,
        "--screen",
        "--match",
        text,
        "--max-wait",
        "30000",
    ])
    .ok()
}

fn json_of(out: &Out) -> Value {
    serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", out.stdout))
}

/// Step `text` and return its output, topped up by `wait --match want` if
/// the quiet window closed first on a slow machine.
fn step_until(sb: &Sandbox, session: &str, text: &str, want: &str) -> String {
    let out = sb.run(&["step", "--session", session, text]).ok();
    out.assert_one_stderr_line(STATUS_LINE);
    let mut s = out.stdout;
    if !s.contains(want) {
        s.push_str(&wait_match(sb, session, want).stdout);
    }
    assert!(s.contains(want), "{want:?} not in {s:?}");
    s
}

#[test]
fn every_call_prints_exactly_one_status_line() {
    let sb = Sandbox::new("status");
    let start = start_bash(&sb, "sh", &[]);
    start.assert_one_stderr_line(STATUS_LINE);
    for args in [
        vec!["step", "--session", "sh", "echo hi"],
        vec!["step", "--session", "sh"],
        vec!["send", "--session", "sh", "true", "--key", "Enter"],
        vec!["status", "--session", "sh"],
        vec!["resize", "--session", "sh", "--cols", "90", "--rows", "20"],
        vec!["signal", "--session", "sh", "WINCH"],
        vec![
            "wait",
            "--session",
            "sh",
            "--screen",
            "--match",
            "hi",
            "--max-wait",
            "30000",
        ],
    ] {
        let out = sb.run(&args).ok();
        out.assert_one_stderr_line(STATUS_LINE);
        let running = [", still running]", ", waiting for input]"];
        assert!(
            running.iter().any(|r| out.stderr.trim_end().ends_with(r)),
            "{args:?}: {:?}",
            out.stderr
        );
    }
    let stop = sb.run(&["stop", "--session", "sh"]).ok();
    stop.assert_one_stderr_line(STOP_LINE);
    assert!(stop.stdout.is_empty(), "{stop:?}");
}

#[test]
fn the_status_line_reports_how_the_program_ended() {
    let sb = Sandbox::new("ended");
    sb.run(&["start", "-s", "ok", "--", "true"]).ok();
    sb.run(&["start", "-s", "bad", "--", "sh", "-c", "exit 7"])
        .ok();
    // sleep is busy, never settled: cap the start.
    sb.run(&[
        "start",
        "-s",
        "sig",
        "--max-wait",
        "500",
        "--",
        "sleep",
        "1000",
    ])
    .ok();
    sb.run(&["signal", "-s", "sig", "TERM"]).ok();
    for (name, end) in [
        ("ok", ", exited]"),
        ("bad", ", exited: exit status 7]"),
        ("sig", ", exited: signal: terminated]"),
    ] {
        let out = sb.run(&["wait", "-s", name, "--max-wait", "30000"]).ok();
        out.assert_one_stderr_line(STATUS_LINE);
        assert!(out.stderr.trim_end().ends_with(end), "{name}: {out:?}");
    }
    let stop = sb.run(&["stop", "-s", "bad"]).ok();
    stop.assert_one_stderr_line(STOP_LINE);
    assert!(
        stop.stderr
            .contains("exited: exit status 7, session \"bad\" stopped]"),
        "{stop:?}"
    );
}

#[test]
fn a_taken_name_is_refused_with_the_seed_message() {
    let sb = Sandbox::new("taken");
    sb.run(&["start", "--session", "x", "--", "cat"]).ok();
    let again = sb.run(&["start", "--session", "x", "--", "cat"]);
    assert_eq!(again.code(), 1, "{again:?}");
    assert_eq!(again.stdout, "");
    // Seed 002's words, in its one line, with the way to take the name
    // anyway.
    again.assert_one_stderr_line(
        r#"^\[ptybroker: session "x" already running for \d+s \(stop it first, or start --replace to start afresh\)\]$"#,
    );
    // The running session is untouched.
    let st = json_of(&sb.run(&["status", "--session", "x", "--json"]).ok());
    assert_eq!(st["running"], true);
    assert_eq!(st["command"], serde_json::json!(["cat"]));

    // Once it has exited, the name can be reused without a stop.
    sb.run(&["send", "--session", "x", "--key", "Ctrl+D"]).ok();
    sb.run(&["wait", "--session", "x", "--max-wait", "30000"])
        .ok();
    sb.run(&[
        "start",
        "--session",
        "x",
        "--",
        "sh",
        "-c",
        "echo second; exec cat",
    ])
    .ok();
    wait_match(&sb, "x", "second");
    sb.run(&["stop", "--session", "x"]).ok();
}

#[test]
fn errors_are_bracketed_and_exit_non_zero() {
    let sb = Sandbox::new("errors");
    let bracket = r"^\[ptybroker: .+\]$";

    let none = sb.run(&["status"]);
    assert_eq!(none.code(), 1, "{none:?}");
    none.assert_one_stderr_line(r"^\[ptybroker: no daemon is running \(start a session first\)\]$");
    let step = sb.run(&["step", "hello"]);
    assert_eq!(step.code(), 1, "{step:?}");
    step.assert_one_stderr_line(bracket);
    // `list` with no daemon is an empty list, not an error.
    let list = sb.run(&["list", "--json"]).ok();
    assert_eq!(json_of(&list)["sessions"], serde_json::json!([]));

    // Usage errors exit 2, found before any daemon is asked (none runs yet).
    let long = "x".repeat(300);
    for (args, code, pattern) in [
        (vec!["stop", "--bogus"], 2, r"^\[ptybroker: .*--bogus.*\]$"),
        (vec!["frobnicate"], 2, r"^\[ptybroker: .*frobnicate.*\]$"),
        (vec!["start"], 2, bracket),
        (vec!["start", "--timeout", "soon", "--", "cat"], 2, bracket),
        (
            vec!["start", "--session", "bad\tname", "--", "cat"],
            2,
            r"^\[ptybroker: invalid session name .*\]$",
        ),
        (
            vec!["status", "-s", " padded"],
            2,
            r"^\[ptybroker: invalid session name .*\]$",
        ),
        // A name far too long is quoted by its start and its length.
        (
            vec!["read", "-s", &long],
            2,
            r#"^\[ptybroker: invalid session name "x{64}"\.\.\. \(300 characters\): use 1-64 .*\]$"#,
        ),
        (
            vec!["start", "--cols", "1", "--", "cat"],
            2,
            r"^\[ptybroker: cols must be 2\.\.1000, got 1 .*\]$",
        ),
        (
            vec!["resize", "--cols", "1", "--rows", "10"],
            2,
            r"^\[ptybroker: cols must be 2\.\.1000, got 1 .*\]$",
        ),
        (
            vec!["resize", "--cols", "80", "--rows", "501"],
            2,
            r"^\[ptybroker: rows must be 2\.\.500, got 501 .*\]$",
        ),
        (
            vec!["resize", "--cols", "80"],
            2,
            r"^\[ptybroker: resize needs both --cols C and --rows R .*\]$",
        ),
        (
            vec!["signal", "NOTASIGNAL"],
            2,
            r#"^\[ptybroker: unknown signal "NOTASIGNAL" .*\]$"#,
        ),
        (
            vec!["send", "--key", "NoSuchKey"],
            2,
            r"^\[ptybroker: .*NoSuchKey.*\]$",
        ),
        (
            vec!["read", "--top", "1", "--bottom", "1"],
            2,
            r"^\[ptybroker: .*top.*bottom.*\]$",
        ),
        (
            vec!["step", "--stream", "--screen"],
            2,
            r"^\[ptybroker: --screen and --stream cannot be combined.*\]$",
        ),
        (
            vec!["resize", "--json", "--cols", "80", "--rows", "24"],
            2,
            r"^\[ptybroker: resize has no --json output.*\]$",
        ),
        (
            vec!["signal", "--json", "INT"],
            2,
            r"^\[ptybroker: signal has no --json output.*\]$",
        ),
    ] {
        let out = sb.run(&args);
        assert_eq!(out.code(), code, "{args:?}: {out:?}");
        out.assert_one_stderr_line(pattern);
        assert_eq!(out.stdout, "", "{args:?}");
    }
    assert!(!sb.socket().exists(), "a usage error started a daemon");

    // Errors the daemon reports exit 1.
    sb.run(&["start", "--", "cat"]).ok();
    for (args, pattern) in [
        (
            vec!["step", "--session", "nope", "hi"],
            r#"^\[ptybroker: no session "nope" \(start one first\)\]$"#,
        ),
        (
            vec!["stop", "--session", "nope"],
            r#"^\[ptybroker: no session "nope".*\]$"#,
        ),
        (
            vec!["start", "-s", "nx", "--", "/nonexistent/prog"],
            r"^\[ptybroker: .*/nonexistent/prog.*\]$",
        ),
        (
            vec!["wait", "--match", "never-shown", "--max-wait", "200"],
            r"^\[ptybroker: gave up after 200 ms .*\]$",
        ),
    ] {
        let out = sb.run(&args);
        assert_eq!(out.code(), 1, "{args:?}: {out:?}");
        assert!(
            re(pattern).is_match(out.status_line()),
            "{args:?}: {:?} does not match {pattern}",
            out.stderr
        );
    }
    // None of that disturbed the session.
    let st = json_of(&sb.run(&["status", "--json"]).ok());
    assert_eq!(st["running"], true, "{st}");
    assert_eq!(st["size"], serde_json::json!({"cols": 100, "rows": 30}));
    sb.run(&["stop"]).ok();
}

#[test]
fn read_selects_rows_like_pty_read() {
    let sb = Sandbox::new("read");
    let script = r#"printf 'a\nb\nc\nd\ne'; exec cat"#;
    sb.run(&[
        "start", "--cols", "20", "--rows", "5", "--", "sh", "-c", script,
    ])
    .ok();
    wait_match(&sb, "default", "e");
    let read = |args: &[&str]| {
        let mut a = vec!["read"];
        a.extend(args);
        let out = sb.run(&a).ok();
        assert_eq!(out.stderr, "", "{a:?}");
        out.stdout
    };
    assert_eq!(read(&[]), "a\nb\nc\nd\ne\n");
    assert_eq!(read(&["--top", "2"]), "a\nb\n");
    assert_eq!(read(&["--bottom", "2"]), "d\ne\n");
    assert_eq!(read(&["--start", "2", "--end", "4"]), "b\nc\nd\n");
    assert_eq!(read(&["--start", "4", "--end", "99"]), "d\ne\n");
    let j: Value = serde_json::from_str(&read(&["--json", "--top", "1"])).expect("json");
    assert_eq!(j["screen"], "a\n");
    assert_eq!(j["cursor"]["row"], 5);
    assert_eq!(j["cursor"]["col"], 2);
    assert_eq!(j["size"], serde_json::json!({"cols": 20, "rows": 5}));
    sb.run(&["stop"]).ok();
}

#[test]
fn the_child_runs_in_the_callers_directory_and_environment() {
    let sb = Sandbox::new("cwdenv");
    let dir = sb.work("here");
    let out = sb
        .run_in(
            &dir,
            &[
                "start",
                "--env",
                "GREETING=hi there",
                "--",
                "sh",
                "-c",
                r#"echo "cwd=$(pwd)"; echo "greeting=$GREETING"; echo "term=$TERM"; echo "sandbox=${PTYBROKER_TEST_SANDBOX:+set}""#,
            ],
        )
        .ok();
    let all = out.stdout + &sb.run(&["wait", "--max-wait", "30000"]).ok().stdout;
    let canon = dir.canonicalize().expect("canonicalize");
    let l = lines(&all);
    assert!(
        l.contains(&format!("cwd={}", canon.display()).as_str()),
        "{all:?}"
    );
    assert!(l.contains(&"greeting=hi there"), "{all:?}");
    assert!(l.contains(&"term=xterm-256color"), "{all:?}");
    assert!(l.contains(&"sandbox=set"), "{all:?}");
    sb.run(&["stop"]).ok();

    // With `--cwd`, PWD names that directory (most programs trust PWD; a
    // shell would mend a stale one itself), from the CLI and from JSON-RPC
    // alike.
    let there = sb.work("there");
    let cwd = there.to_str().expect("utf-8 path");
    let started = sb
        .run_in(
            &dir,
            &["start", "-s", "py", "--cwd", cwd, "--", "printenv", "PWD"],
        )
        .ok();
    let all = started.stdout
        + &sb
            .run(&["wait", "-s", "py", "--max-wait", "30000"])
            .ok()
            .stdout;
    let rpc = sb.rpc().ok(
        "pty/start",
        serde_json::json!({"session": "rpc", "argv": ["printenv", "PWD"], "cwd": cwd}),
    );
    let out = sb.rpc().ok(
        "pty/wait",
        serde_json::json!({"session": "rpc", "exit": true, "timeout": 30000}),
    );
    let screen = sb.run(&["read", "-s", "rpc"]).ok().stdout;
    for (what, text) in [("cli", &all), ("rpc", &screen)] {
        assert!(lines(text).contains(&cwd), "{what}: {text:?} ({rpc} {out})");
    }
    // A caller in a directory reached through a symlink keeps its PWD (a
    // shell's prompt shows that path), as it names the same directory.
    let link = sb.work("link-to-there");
    let _ = std::fs::remove_dir(&link);
    std::os::unix::fs::symlink(&there, &link).expect("symlink");
    let mut cmd = sb.command(&["start", "-s", "ln", "--", "printenv", "PWD"]);
    cmd.current_dir(&link).env("PWD", &link);
    let started = common::run_bounded(cmd, std::time::Duration::from_secs(60), "start");
    let all = started.stdout
        + &sb
            .run(&["wait", "-s", "ln", "--max-wait", "30000"])
            .ok()
            .stdout;
    assert!(
        lines(&all).contains(&link.to_str().expect("utf-8")),
        "{all:?}"
    );
    // A relative `--cwd` is the caller's, not the daemon's.
    let started = sb
        .run_in(
            &there,
            &["start", "-s", "rel", "--cwd", "../here", "--", "pwd", "-P"],
        )
        .ok();
    let all = started.stdout
        + &sb
            .run(&["wait", "-s", "rel", "--max-wait", "30000"])
            .ok()
            .stdout;
    assert!(
        lines(&all).contains(&canon.to_str().expect("utf-8")),
        "{all:?}"
    );
}

#[test]
fn send_types_keys_without_waiting_and_ctrl_c_interrupts() {
    let sb = Sandbox::new("send");
    start_bash(&sb, "default", &[]);
    let sent = sb
        .run(&[
            "send",
            "--json",
            "sleep 1000; echo not-reached",
            "--key",
            "Enter",
        ])
        .ok();
    assert_eq!(
        json_of(&sent)["written"],
        "sleep 1000; echo not-reached\r".len()
    );
    // The sleep is running (found by the sandbox's marker in its environment).
    let sleep = common::eventually(std::time::Duration::from_secs(30), || {
        sb.processes().into_iter().find(|&pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == b"sleep\x001000\x00")
        })
    })
    .expect("sleep 1000 should be running");
    let id = common::proc_identity(sleep).expect("sleep identity");
    sb.run(&["send", "--key", "Ctrl+C"]).ok();
    assert_eq!(
        common::wait_gone(sleep, id, true),
        None,
        "sleep survived ^C"
    );
    let after = step_until(&sb, "default", "echo alive-$((2+3))", "alive-5");
    // The typed line is echoed, but its second command never ran.
    assert!(!lines(&after).contains(&"not-reached"), "{after:?}");
    let screen = sb.run(&["read"]).ok().stdout;
    assert!(!lines(&screen).contains(&"not-reached"), "{screen:?}");
    sb.run(&["stop"]).ok();
}

/// A daemon started by a script's background job inherits INT and QUIT
/// ignored (a non-interactive shell ignores them in `&` jobs); the programs
/// it starts must not, or Ctrl+C would do nothing in every session.
#[test]
fn signals_ignored_by_the_daemons_starter_reach_the_program() {
    let sb = Sandbox::new("sigign");
    let call = sb.command(&["start", "-s", "py", "--", "python3", "-q"]);
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg(r#"trap '' INT QUIT; exec "$@""#)
        .arg("sh")
        .arg(call.get_program())
        .args(call.get_args())
        .current_dir(sb.work("sigign"));
    sb.env(&mut cmd);
    let out = common::run_bounded(cmd, std::time::Duration::from_secs(60), "start");
    assert!(out.status.success(), "{out:?}");
    // The daemon did inherit them (else this test would prove nothing).
    let ignored = |pid: i32| {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let mask = status
            .lines()
            .find_map(|l| l.strip_prefix("SigIgn:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .unwrap_or(0);
        mask & 0b110 // INT (2) and QUIT (3)
    };
    let daemon = sb.daemon_pid().expect("daemon pid");
    assert_eq!(
        ignored(daemon),
        0b110,
        "the daemon should ignore INT and QUIT"
    );
    let py = json_of(&sb.run(&["status", "-s", "py", "--json"]).ok())["pid"]
        .as_i64()
        .expect("pid") as i32;
    assert_eq!(ignored(py), 0, "the program inherited ignored signals");
    step_until(&sb, "py", "import time", ">>>");
    sb.run(&["send", "-s", "py", "time.sleep(1000)", "--key", "Enter"])
        .ok();
    sb.run(&["send", "-s", "py", "--key", "Ctrl+C"]).ok();
    let out = sb
        .run(&[
            "wait",
            "-s",
            "py",
            "--match",
            "KeyboardInterrupt",
            "--max-wait",
            "30000",
        ])
        .ok();
    assert!(
        sb.run(&["read", "-s", "py"])
            .ok()
            .stdout
            .contains("KeyboardInterrupt"),
        "{out:?}"
    );
    sb.run(&["kill-session", "-s", "py"]).ok();
}

/// `send --paste` pastes as a terminal does: line ends as CR, inside the
/// markers the program asked for, and an end marker inside the text
/// dropped (it would end the paste early and the rest would read as keys).
#[test]
fn a_paste_is_sent_as_a_terminal_pastes() {
    let sb = Sandbox::new("paste");
    let py = r"import os, sys, tty
sys.stdout.write('\x1b[?2004hready\r\n'); sys.stdout.flush(); tty.setraw(0)
d = b''
while not d.endswith(b'\x1b[201~'):
    d += os.read(0, 100)
sys.stdout.write('got ' + repr(d) + '\r\n'); sys.stdout.flush()";
    let start = sb
        .run(&["start", "-s", "p", "--", "python3", "-c", py])
        .ok();
    if !start.stdout.contains("ready") {
        sb.run(&["wait", "-s", "p", "--match", "ready", "--max-wait", "30000"])
            .ok();
    }
    sb.run(&["send", "-s", "p", "--paste", "a\nb\x1b[201~c\r\nd"])
        .ok();
    // (The program exits once it has printed: `wait` says so.)
    let out = sb
        .run(&["wait", "-s", "p", "--match", "got", "--max-wait", "30000"])
        .stdout;
    assert!(
        out.contains(r"got b'\x1b[200~a\rbc\rd\x1b[201~'"),
        "{out:?}"
    );
}

#[test]
fn resize_reaches_the_program() {
    let sb = Sandbox::new("resize");
    start_bash(&sb, "r", &["--cols", "80", "--rows", "24"]);
    step_until(&sb, "r", "stty size", "24 80");
    sb.run(&["resize", "-s", "r", "--cols", "50", "--rows", "20"])
        .ok();
    step_until(&sb, "r", "stty size", "20 50");
    let j = json_of(&sb.run(&["read", "-s", "r", "--json"]).ok());
    assert_eq!(j["size"], serde_json::json!({"cols": 50, "rows": 20}));
    sb.run(&["stop", "-s", "r"]).ok();
}

#[test]
fn step_shows_new_output_only_and_raw_keeps_escapes() {
    let sb = Sandbox::new("stream");
    start_bash(&sb, "default", &[]);
    step_until(&sb, "default", "echo first-$((1))", "first-1");
    let second = step_until(&sb, "default", "echo second-$((2))", "second-2");
    assert!(!second.contains("first-1"), "{second:?}");
    let raw = sb
        .run(&["step", "--raw", r"printf '\033[1mBOLD\033[0m\n'"])
        .ok();
    let plain_seen = raw.stdout.contains("BOLD");
    let raw_out = if plain_seen {
        raw.stdout
    } else {
        sb.run(&["wait", "--raw", "--match", "BOLD", "--max-wait", "30000"])
            .ok()
            .stdout
    };
    assert!(raw_out.contains("\x1b[1mBOLD\x1b[0m"), "{raw_out:?}");
    let plain = step_until(&sb, "default", r"printf '\033[4mLINE\033[0m\n'", "LINE");
    assert!(!plain.contains('\x1b'), "{plain:?}");
    // Raw output is printed as it came: the prompt it ends with gets no
    // newline added (the plain view ends its last line).
    let out = sb.run(&["step", "--raw", "echo raw-$((3))"]).ok().stdout;
    if out.contains("raw-3") {
        assert!(out.ends_with("ready> "), "{out:?}");
    }
    let out = sb.run(&["step", "echo plain-$((4))"]).ok().stdout;
    if out.contains("plain-4") {
        assert!(out.ends_with("ready> \n"), "{out:?}");
    }
    sb.run(&["stop"]).ok();
}

/// A line edited across calls reads as edited: the step's output goes on
/// from the line the previous call left (python's prompt), so readline's
/// return to the line's start and moves past the prompt land where the
/// terminal put them.
#[test]
fn a_line_edited_across_calls_reads_as_edited() {
    let sb = Sandbox::new("edits");
    let start = sb.run(&["start", "-s", "py", "--", "python3", "-q"]).ok();
    assert!(start.stdout.contains(">>>"), "{start:?}");
    sb.run(&["send", "-s", "py", "rint(6 * 7)"]).ok();
    sb.run(&["send", "-s", "py", "--key", "Home"]).ok();
    sb.run(&["send", "-s", "py", "p"]).ok();
    let out = sb.run(&["step", "-s", "py", "--key", "Enter"]).ok().stdout;
    let out = if out.contains("42") {
        out
    } else {
        out + &sb
            .run(&["wait", "-s", "py", "--match", "42", "--max-wait", "30000"])
            .ok()
            .stdout
    };
    assert!(lines(&out).contains(&"print(6 * 7)"), "{out:?}");
    let screen = sb.run(&["read", "-s", "py"]).ok().stdout;
    assert!(screen.contains(">>> print(6 * 7)"), "{screen:?}");
    sb.run(&["kill-session", "-s", "py"]).ok();
}

#[test]
fn full_screen_programs_step_as_a_rendered_screen() {
    let sb = Sandbox::new("vim");
    let dir = sb.work("edit");
    std::fs::write(dir.join("notes.txt"), "hello\n").expect("write");
    sb.run_in(
        &dir,
        &[
            "start",
            "--cols",
            "60",
            "--rows",
            "12",
            "--",
            "vim",
            "-u",
            "NONE",
            "-N",
            "notes.txt",
        ],
    )
    .ok();
    wait_match(&sb, "default", "\"notes.txt\"");

    let shown = sb.run(&["step", "ihi"]).ok();
    shown.assert_one_stderr_line(STATUS_LINE);
    let screen = if shown.stdout.contains("-- INSERT --") {
        shown.stdout
    } else {
        wait_match(&sb, "default", "-- INSERT --");
        sb.run(&["step"]).ok().stdout
    };
    let l: Vec<&str> = screen.lines().collect();
    assert_eq!(&l[..2], ["hi", "hello"], "{screen:?}");
    assert_eq!(l.iter().filter(|r| **r == "~").count(), 9, "{screen:?}");
    assert_eq!(l.last(), Some(&"-- INSERT --"), "{screen:?}");
    assert_eq!(l.len(), 12, "the whole screen: {screen:?}");
    let st = json_of(&sb.run(&["status", "--json"]).ok());
    assert_eq!(st["altScreen"], true, "{st}");

    // --stream forces the byte stream: not the screen, no `~` rows.
    let stream = sb.run(&["step", "--stream", "there"]).ok();
    assert!(!lines(&stream.stdout).contains(&"~"), "{stream:?}");
    assert_ne!(stream.stdout, sb.run(&["read"]).ok().stdout);
    // --screen forces the screen, and it is what `read` shows.
    let forced = sb.run(&["step", "--screen"]).ok().stdout;
    assert_eq!(forced, sb.run(&["read"]).ok().stdout);
    assert!(forced.contains("there"), "{forced:?}");

    sb.run(&["send", "--key", "Escape", ":q!", "--key", "Enter"])
        .ok();
    let done = sb.run(&["wait", "--max-wait", "30000"]).ok();
    assert!(done.status_line().ends_with(", exited]"), "{done:?}");
    let st = json_of(&sb.run(&["status", "--json"]).ok());
    assert_eq!(st["altScreen"], false, "{st}");
    sb.run(&["stop"]).ok();
    let on_disk = std::fs::read_to_string(dir.join("notes.txt")).expect("read");
    assert_eq!(on_disk, "hello\n", ":q! wrote nothing");
}

#[test]
fn list_shows_each_session() {
    let sb = Sandbox::new("list");
    sb.run(&["start", "-s", "one", "--", "cat"]).ok();
    sb.run(&[
        "start",
        "-s",
        "two",
        "--cols",
        "40",
        "--rows",
        "10",
        "--max-wait",
        "500",
        "--",
        "sleep",
        "1000",
    ])
    .ok();
    let table = sb.run(&["list"]).ok().stdout;
    let rows: Vec<&str> = table.lines().collect();
    assert!(rows[0].starts_with("SESSION"), "{table}");
    assert!(
        rows.iter()
            .any(|r| r.starts_with("one ") && r.ends_with(" cat")),
        "{table}"
    );
    assert!(
        rows.iter()
            .any(|r| r.starts_with("two ") && r.contains("40x10") && r.ends_with(" sleep 1000")),
        "{table}"
    );
    let j = json_of(&sb.run(&["list", "--json"]).ok());
    let pids: Vec<i64> = j["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|s| s["pid"].as_i64().expect("pid"))
        .collect();
    assert_eq!(pids.len(), 2);
    for pid in pids {
        assert!(
            common::proc_state(pid as i32).is_some(),
            "pid {pid} is live"
        );
    }
    sb.run(&["kill-session", "-s", "one"]).ok();
    sb.run(&["kill-session", "-s", "two"]).ok();
    let after = sb.run(&["list", "--json"]).ok();
    let n = json_of(&after)["sessions"].as_array().map_or(0, Vec::len);
    assert_eq!(n, 0);
}

#[test]
fn wait_match_fails_when_the_program_exits_without_the_text() {
    let sb = Sandbox::new("nomatch");
    let start = sb
        .run(&["start", "--", "sh", "-c", "echo one; sleep 1; echo two"])
        .ok();
    let out = sb.run(&["wait", "--match", "NEVER-SHOWN", "--max-wait", "60000"]);
    // `start` settles only when the program waits for input or exits, so
    // "two" is shown by whichever call saw it.
    assert!(
        format!("{}{}", start.stdout, out.stdout).contains("two"),
        "{out:?}"
    );
    assert_ne!(
        out.code(),
        0,
        "the text never appeared, yet wait reports success: {out:?}"
    );
    assert!(
        re(r"^\[ptybroker: .*NEVER-SHOWN.*\]$|^\[ptybroker: .*exited.*\]$")
            .is_match(out.status_line()),
        "{out:?}"
    );
    sb.run(&["stop"]).ok();
}

#[test]
fn two_steps_at_once_on_one_session_each_get_their_own_answer() {
    let sb = Sandbox::new("twosteps");
    sb.run(&["start", "--session", "py", "--", "python3", "-q"])
        .ok();
    let (first, second) = std::thread::scope(|scope| {
        let first = scope.spawn(|| {
            sb.run(&[
                "step",
                "--session",
                "py",
                "import time; time.sleep(1); print('first')",
            ])
        });
        // Only to make the two overlap; either order must pass.
        std::thread::sleep(std::time::Duration::from_millis(200));
        let second = scope.spawn(|| sb.run(&["step", "--session", "py", "print('second')"]));
        (first.join().expect("first"), second.join().expect("second"))
    });
    let (first, second) = (first.ok(), second.ok());
    assert!(
        first.stdout.contains("first\n") && !first.stdout.contains("second\n"),
        "first step: {:?}",
        first.stdout
    );
    assert!(
        second.stdout.contains("second\n") && !second.stdout.contains("first\n"),
        "second step: {:?}",
        second.stdout
    );
    sb.run(&["kill-session", "--session", "py"]).ok();
}

#[test]
fn step_prints_lines_as_the_terminal_shows_them() {
    let sb = Sandbox::new("lineview");
    sb.run(&[
        "start",
        "--session",
        "b",
        "--rows",
        "10",
        "--",
        "bash",
        "--norc",
        "--noprofile",
    ])
    .ok();
    let step = |text: &str| sb.run(&["step", "--session", "b", text]).ok().stdout;
    // A progress bar on carriage returns ends as its last state.
    let out = step("for i in 10 40 70 100; do printf '\\rProgress: %3d%%' $i; done; echo");
    assert!(lines(&out).contains(&"Progress: 100%"), "{out:?}");
    assert!(!out.contains("10%Progress"), "{out:?}");
    // What vim drew on the alternate screen is gone once it quit.
    let out = step("vim -u NONE -N");
    assert!(out.contains('~'), "{out:?}");
    let out = step(":q!");
    assert!(!out.contains(":q!") && !out.contains('~'), "{out:?}");
    // Output that repaints (cursor back to the top) shows as the screen,
    // after every line that scrolled off: nothing is lost.
    let out = step("seq 1 30; tput cup 0 0; echo X");
    for n in 1..=21 {
        assert!(
            lines(&out).contains(&n.to_string().as_str()),
            "{n}: {out:?}"
        );
    }
    assert!(lines(&out).contains(&"X2"), "{out:?}");
    // Output that goes back up only as far as the line it started on (a
    // REPL such as ipython redrawing its input area) shows the rows from
    // there down, not the whole screen again.
    let out = step("printf 'a\\nb\\n\\e[2Ac\\e[J\\n'");
    let got = lines(&out);
    assert_eq!(got.len(), 3, "{out:?}");
    assert!(
        got[0].ends_with("printf 'a\\nb\\n\\e[2Ac\\e[J\\n'"),
        "{out:?}"
    );
    assert_eq!(got[1], "c", "{out:?}");
    assert!(!out.contains("X2"), "{out:?}");
    // So does a command line that wrapped (the terminal moved down without
    // a line feed): nothing of it is lost.
    let pad = "y".repeat(100);
    let out = step(&format!("printf 'a\\nb\\n\\e[2Ac\\e[J\\n' # {pad}"));
    let got = lines(&out);
    assert_eq!(got.len(), 4, "{out:?}");
    assert!(got[0].contains("printf 'a"), "{out:?}");
    assert_eq!(out.matches('y').count(), 100, "{out:?}");
    assert_eq!(got[2], "c", "{out:?}");
    // Output that goes back above the line it started on, by relative
    // moves only (ipython redrawing the cell it closes), shows the rows
    // from the highest it drew on down, not the whole screen again.
    let out = step("printf '\\e[3Aup\\e[K\\n\\n\\n'");
    let got = lines(&out);
    assert_eq!(got.first(), Some(&"up"), "{out:?}");
    assert_eq!(got.len(), 4, "{out:?}");
    assert!(got[2].contains("printf '"), "{out:?}");
    assert!(!out.contains("X2"), "{out:?}");
    sb.run(&["kill-session", "--session", "b"]).ok();
}

/// Run `ptybroker ARGS` with standard output, standard error or both
/// connected to a pipe whose reader has already gone (`ptybroker list |
/// true`, without the race). Returns the exit code and what the other
/// stream got.
fn run_into_closed_pipe(sb: &Sandbox, args: &[&str], stdout: bool, stderr: bool) -> (i32, String) {
    use std::process::Stdio;
    let (reader, writer) = rustix::pipe::pipe().expect("pipe");
    drop(reader);
    let closed = || Stdio::from(writer.try_clone().expect("dup"));
    let mut cmd = sb.command(args);
    cmd.stdin(Stdio::null());
    cmd.stdout(if stdout { closed() } else { Stdio::piped() });
    cmd.stderr(if stderr { closed() } else { Stdio::piped() });
    let mut child = cmd.spawn().expect("spawn ptybroker");
    drop(cmd);
    drop(writer);
    let mut other = String::new();
    let open = if stdout {
        child
            .stderr
            .take()
            .map(|e| Box::new(e) as Box<dyn std::io::Read>)
    } else {
        child
            .stdout
            .take()
            .map(|o| Box::new(o) as Box<dyn std::io::Read>)
    };
    if let Some(mut o) = open {
        // The call ends, and with it this stream: bounded by the call itself.
        let _ = o.read_to_string(&mut other);
    }
    let deadline = std::time::Instant::now() + common::CALL_LIMIT;
    let status = loop {
        if let Some(st) = child.try_wait().expect("try_wait") {
            break st;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "ptybroker {args:?} did not finish"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    (status.code().unwrap_or(-1), other)
}

#[test]
fn a_reader_that_goes_away_is_not_a_crash() {
    let sb = Sandbox::new("epipe");
    start_bash(&sb, "p", &[]);
    // Standard output gone: the call does its work, exits 0 quietly, and
    // still prints the status line where there is one.
    for (args, status_line) in [
        (vec!["list"], false),
        (vec!["list", "--json"], false),
        (vec!["--help"], false),
        (vec!["status", "-s", "p", "--json"], true),
        (vec!["send", "-s", "p", "--json", "echo one"], true),
        (vec!["send", "-s", "p", "--key", "Enter"], true),
        (vec!["step", "-s", "p", "--json", "echo two"], true),
        (vec!["step", "-s", "p", "seq 1 20000"], true),
        (vec!["read", "-s", "p"], false),
        (vec!["read", "-s", "p", "--json"], false),
        (
            vec!["wait", "-s", "p", "--json", "--screen", "--match", "ready>"],
            true,
        ),
    ] {
        let (code, stderr) = run_into_closed_pipe(&sb, &args, true, false);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(code, 0, "{args:?}: {stderr}");
        if status_line {
            assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
            assert!(
                re(STATUS_LINE).is_match(stderr.trim_end()),
                "{args:?}: {stderr}"
            );
        } else {
            assert_eq!(stderr, "", "{args:?}");
        }
    }
    // Standard error gone too (`start ... 2>&1 | head -1`): no panic, and a
    // failure keeps its own exit status.
    for (args, want) in [
        (
            vec!["start", "-s", "q", "--", "sh", "-c", "echo hi; exec cat"],
            0,
        ),
        (vec!["status", "-s", "q"], 0),
        (vec!["step", "-s", "q", "more"], 0),
        (vec!["status", "-s", "nope"], 1),
        (vec!["read", "--top", "0"], 2),
        (vec!["stop", "-s", "q", "--json"], 0),
    ] {
        let (code, _) = run_into_closed_pipe(&sb, &args, true, true);
        assert_eq!(code, want, "{args:?}");
    }
    // Standard error alone gone: the output still arrives whole.
    let (code, out) = run_into_closed_pipe(&sb, &["read", "-s", "p", "--top", "1"], false, true);
    assert_eq!(code, 0);
    assert_eq!(out, sb.run(&["read", "-s", "p", "--top", "1"]).ok().stdout);
    assert_eq!(out.lines().count(), 1, "{out:?}");
    let (code, _) = run_into_closed_pipe(&sb, &["status", "-s", "p"], false, true);
    assert_eq!(code, 0);
    sb.run(&["stop", "-s", "p"]).ok();
}

#[test]
fn the_clocks_stop_when_the_program_exits() {
    let sb = Sandbox::new("frozen");
    sb.run(&["start", "-s", "t", "--", "true"]).ok();
    sb.run(&["wait", "-s", "t", "--max-wait", "30000"]).ok();
    let first = sb.run(&["status", "-s", "t", "--json"]).ok();
    std::thread::sleep(std::time::Duration::from_millis(1_200));
    let second = sb.run(&["status", "-s", "t", "--json"]).ok();
    let (a, b) = (json_of(&first), json_of(&second));
    assert_eq!(a["running"], false, "{a}");
    assert_eq!(a["runningMs"], b["runningMs"], "running for kept counting");
    assert_eq!(a["quietMs"], b["quietMs"], "quiet for kept counting");
    // Seed 002's wording for an exited session that is not yet stopped.
    let clause = |o: &Out| {
        o.status_line()
            .split(" | ")
            .nth(1)
            .unwrap_or("")
            .to_string()
    };
    assert_eq!(clause(&first), clause(&second));
    assert!(
        re(r"^running for \S+, quiet for \S+, exited\]$").is_match(&clause(&second)),
        "{second:?}"
    );
    // `stop` reports the same span as `ran for`.
    let stop = sb.run(&["stop", "-s", "t", "--json"]).ok();
    assert_eq!(json_of(&stop)["ranMs"], a["runningMs"], "{stop:?}");
    stop.assert_one_stderr_line(STOP_LINE);
}

#[test]
fn json_gives_the_structured_result_of_start_step_wait_and_stop() {
    let sb = Sandbox::new("json");
    let start = sb
        .run(&[
            "start",
            "-s",
            "j",
            "--json",
            "--env",
            "PS1=ready> ",
            "--",
            "bash",
            "--norc",
            "--noprofile",
        ])
        .ok();
    start.assert_one_stderr_line(STATUS_LINE);
    let r = json_of(&start);
    assert!(r["output"].is_string() && r["reason"].is_string(), "{r}");
    assert_eq!(r["dropped"], 0, "{r}");
    assert_eq!(r["status"]["session"], "j", "{r}");
    assert_eq!(
        r["status"]["command"],
        serde_json::json!(["bash", "--norc", "--noprofile"])
    );
    wait_match(&sb, "j", "ready>");

    let step = sb
        .run(&["step", "-s", "j", "--json", "echo got-$((6*7))"])
        .ok();
    step.assert_one_stderr_line(STATUS_LINE);
    let r = json_of(&step);
    for key in ["output", "view", "reason", "waitedMs", "dropped", "status"] {
        assert!(r.get(key).is_some(), "no {key}: {r}");
    }
    assert_eq!(r["view"], "stream", "{r}");
    assert_eq!(r["status"]["running"], true, "{r}");

    sb.run(&["send", "-s", "j", "exit 3", "--key", "Enter"])
        .ok();
    let wait = sb
        .run(&["wait", "-s", "j", "--json", "--max-wait", "30000"])
        .ok();
    wait.assert_one_stderr_line(STATUS_LINE);
    let r = json_of(&wait);
    assert_eq!(r["reason"], "exited", "{r}");
    assert_eq!(r["status"]["running"], false, "{r}");
    assert_eq!(r["status"]["exitCode"], 3, "{r}");
    assert!(
        r["output"].as_str().is_some_and(|o| o.contains("exit 3")),
        "{r}"
    );
    assert!(r["screen"].is_string(), "{r}");

    let stop = sb.run(&["stop", "-s", "j", "--json"]).ok();
    stop.assert_one_stderr_line(STOP_LINE);
    let r = json_of(&stop);
    assert_eq!(r["session"], "j", "{r}");
    assert_eq!(r["exitCode"], 3, "{r}");
}

#[test]
fn read_rows_are_numbered_from_one_and_never_select_nothing() {
    let sb = Sandbox::new("rows");
    sb.run(&[
        "start",
        "--rows",
        "5",
        "--",
        "sh",
        "-c",
        "printf 'a\\nb\\nc'; exec cat",
    ])
    .ok();
    wait_match(&sb, "default", "c");
    for (args, pattern) in [
        (
            vec!["read", "--top", "0"],
            r"--top wants at least 1 row, got 0",
        ),
        (
            vec!["read", "--bottom", "0"],
            r"--bottom wants at least 1 row, got 0",
        ),
        (
            vec!["read", "--start", "0", "--end", "1"],
            r"rows are numbered from 1",
        ),
        (
            vec!["read", "--start", "5", "--end", "2"],
            r"--end 2 is before --start 5",
        ),
        (
            vec!["read", "--start", "2"],
            r"--start and --end go together",
        ),
        (
            vec!["read", "--top", "1", "--end", "2"],
            r"cannot be combined",
        ),
    ] {
        let out = sb.run(&args);
        assert_eq!(out.code(), 2, "{args:?}: {out:?}");
        assert_eq!(out.stdout, "", "{args:?}");
        out.assert_one_stderr_line(&format!(r"^\[ptybroker: .*{pattern}.*\]$"));
    }
    let one = sb.run(&["read", "--start", "1", "--end", "1"]).ok();
    assert_eq!(one.stdout, "a\n");
    sb.run(&["stop"]).ok();
}

#[test]
fn acting_on_an_exited_program_says_so() {
    let sb = Sandbox::new("exited");
    sb.run(&["start", "-s", "e", "--", "true"]).ok();
    sb.run(&["wait", "-s", "e", "--max-wait", "30000"]).ok();
    for args in [
        vec!["send", "-s", "e", "hello"],
        vec!["step", "-s", "e", "hello"],
        vec!["resize", "-s", "e", "--cols", "50", "--rows", "10"],
        vec!["signal", "-s", "e", "INT"],
        vec!["signal", "-s", "e", "TERM"],
    ] {
        let out = sb.run(&args);
        assert_eq!(out.code(), 1, "{args:?}: {out:?}");
        out.assert_one_stderr_line(
            r"^\[ptybroker: the program has exited: `read` shows its last screen, `stop` ends the session, `start --replace` starts it again\]$",
        );
    }
    // Nothing was resized.
    let st = json_of(&sb.run(&["status", "-s", "e", "--json"]).ok());
    assert_eq!(st["size"], serde_json::json!({"cols": 100, "rows": 30}));
    sb.run(&["stop", "-s", "e"]).ok();
}

#[test]
fn list_columns_line_up_whatever_the_widths() {
    let sb = Sandbox::new("columns");
    let long = "a-session-name-longer-than-sixteen";
    sb.run(&["start", "-s", "s", "--", "cat"]).ok();
    sb.run(&[
        "start",
        "-s",
        long,
        "--",
        "sh",
        "-c",
        "seq 1 30000; exec cat",
    ])
    .ok();
    wait_match(&sb, long, "30000");
    sb.run(&[
        "start",
        "-s",
        "sig",
        "--max-wait",
        "500",
        "--",
        "sleep",
        "1000",
    ])
    .ok();
    sb.run(&["signal", "-s", "sig", "TERM"]).ok();
    sb.run(&["wait", "-s", "sig", "--max-wait", "30000"]).ok();
    let table = sb.run(&["list"]).ok().stdout;
    let rows: Vec<&str> = table.lines().collect();
    assert_eq!(rows.len(), 4, "{table}");
    let head = rows[0];
    let col = |name: &str| {
        head.find(name)
            .unwrap_or_else(|| panic!("{name} in {head:?}"))
    };
    let json = json_of(&sb.run(&["list", "--json"]).ok());
    for s in json["sessions"].as_array().expect("sessions") {
        let name = s["session"].as_str().expect("name");
        let row = rows
            .iter()
            .find(|r| r.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} in {table}"));
        // Numbers end under the end of their header, words start under it.
        for (header, value) in [
            ("PID", s["pid"].to_string()),
            ("BUFFER", s["buffered"].to_string()),
        ] {
            let end = col(header) + header.len();
            assert_eq!(
                &row[end - value.len()..end],
                value,
                "{header} of {name}:\n{table}"
            );
        }
        let state = if s["running"] == true { "" } else { "exited" };
        assert!(
            row[col("STATE")..].starts_with(state),
            "STATE of {name}:\n{table}"
        );
        assert!(
            row[col("STATE") - 1..].starts_with(' '),
            "STATE of {name}:\n{table}"
        );
        let cmd: Vec<&str> = s["command"]
            .as_array()
            .expect("command")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(
            &row[col("COMMAND")..],
            cmd.join(" "),
            "COMMAND of {name}:\n{table}"
        );
    }
    assert!(table.contains("exited: signal: terminated"), "{table}");
    for name in ["s", long, "sig"] {
        sb.run(&["kill-session", "-s", name]).ok();
    }
}

#[test]
fn signal_int_reaches_the_foreground_job_only() {
    let sb = Sandbox::new("sigint");
    start_bash(&sb, "default", &[]);
    let find = |arg: &str| {
        let want = format!("sleep\0{arg}\0").into_bytes();
        common::eventually(std::time::Duration::from_secs(30), || {
            sb.processes()
                .into_iter()
                .find(|&pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want))
        })
        .unwrap_or_else(|| panic!("sleep {arg} should be running"))
    };
    sb.run(&["send", "sleep 777 &", "--key", "Enter"]).ok();
    let background = find("777");
    let bg_id = common::proc_identity(background).expect("identity");
    sb.run(&["send", "sleep 666", "--key", "Enter"]).ok();
    let foreground = find("666");
    let fg_id = common::proc_identity(foreground).expect("identity");

    sb.run(&["signal", "INT"]).ok();
    assert_eq!(
        common::wait_gone(foreground, fg_id, true),
        None,
        "the foreground sleep survived INT"
    );
    // The shell is back at its prompt, and its background job lives on.
    step_until(&sb, "default", "echo back-$((1+1))", "back-2");
    assert!(
        common::still_there(background, bg_id).is_some_and(|s| s != 'Z'),
        "INT reached the background job"
    );
    let jobs = step_until(&sb, "default", "jobs", "sleep 777");
    assert!(jobs.contains("Running"), "{jobs:?}");
    // Other signals still go to every process of the session.
    sb.run(&["signal", "TERM"]).ok();
    assert_eq!(
        common::wait_gone(background, bg_id, true),
        None,
        "TERM missed the background job"
    );
    sb.run(&["stop"]).ok();
}

#[test]
fn session_names_are_any_text_a_client_picks() {
    let sb = Sandbox::new("names");
    let name = "my app/1 été";
    let out = sb
        .run(&[
            "start",
            "--session",
            name,
            "--",
            "sh",
            "-c",
            "echo up; exec cat",
        ])
        .ok();
    assert!(lines(&out.stdout).contains(&"up"), "{out:?}");
    let out = sb.run(&["step", "--session", name, "hello"]).ok();
    assert!(lines(&out.stdout).contains(&"hello"), "{out:?}");
    let out = sb.run(&["list"]).ok();
    assert!(out.stdout.contains(name), "{out:?}");
    sb.run(&["kill-session", "--session", name]).ok();
}

/// `read --json` is `pty/read`'s result, whose cursor seed 000 counts from
/// 1; `render --format json` prints a frame, whose cursor counts from 0.
#[test]
fn read_counts_the_cursor_from_1_and_render_json_from_0() {
    let sb = Sandbox::new("cursorbase");
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
    wait_match(&sb, "k", "cde");
    let r = json_of(&sb.run(&["read", "-s", "k", "--json"]).ok());
    assert_eq!(
        r["cursor"],
        serde_json::json!({"row": 2, "col": 4, "visible": true}),
        "{r}"
    );
    let file = sb.work("cap").join("screen.raw");
    std::fs::write(&file, "ab\r\ncde").expect("write capture");
    let f = json_of(
        &sb.run(&["render", "--format", "json", file.to_str().expect("utf-8")])
            .ok(),
    );
    assert_eq!(
        (f["cursor"]["row"].as_u64(), f["cursor"]["col"].as_u64()),
        (Some(1), Some(3)),
        "{f}"
    );
    sb.run(&["stop", "-s", "k"]).ok();
}

/// The line [`a_step_after_the_ring_dropped_output_starts_at_a_whole_line`]
/// and [`a_line_longer_than_the_ring_is_named_not_lost`] expect first:
/// bytes dropped, bytes still held of the cut line, and the command that
/// prints those.
fn dropped_marker(line: &str) -> (u64, u64, Vec<String>) {
    let m = re(r"^\[ptybroker: (\d+) bytes of output before here were dropped \(the buffer keeps the last 1024 KiB\); the (\d+) bytes still held of the line they cut are left out here; print them with: ptybroker (read -s \S+ --from \d+ --to \d+ --max-bytes 0)\]$")
        .captures(line)
        .unwrap_or_else(|| panic!("no dropped marker: {line:?}"));
    let n = |i: usize| m[i].parse::<u64>().expect("a number");
    (n(1), n(2), m[3].split(' ').map(String::from).collect())
}

/// More output than the transcript keeps: `step` starts at a whole line,
/// after a line (on stdout, where they were) that says how many bytes
/// before it were dropped and which command prints what is still held of
/// the line they cut; `--screen` shows a screen that lost nothing and says
/// nothing.
#[test]
fn a_step_after_the_ring_dropped_output_starts_at_a_whole_line() {
    let sb = Sandbox::new("dropped");
    let script = "read x; seq 1 200000; read y; seq 1 200000; read z";
    for s in ["stream", "screen"] {
        sb.run(&["start", "-s", s, "--", "sh", "-c", script]).ok();
    }
    let out = sb
        .run(&[
            "step",
            "-s",
            "stream",
            "--max-wait",
            "120000",
            "--max-bytes",
            "0",
            "go",
        ])
        .ok();
    let lines: Vec<&str> = out.stdout.lines().collect();
    let (lost, held, read) = dropped_marker(lines[0]);
    let lines = &lines[1..];
    let first: u64 = lines[0]
        .parse()
        .unwrap_or_else(|_| panic!("not a whole number: {:?}", lines[0]));
    assert!(first > 1, "nothing was dropped? {:?}", lines[0]);
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(*l, (first + i as u64).to_string(), "line {i}");
    }
    assert_eq!(lines.last(), Some(&"200000"));
    // Before the first line shown: the echo of `go` and every earlier
    // number, each ending in CR LF on the terminal.
    let before: u64 = 4
        + (1..first)
            .map(|n| n.to_string().len() as u64 + 2)
            .sum::<u64>();
    assert_eq!(lost + held, before, "{:?}", out.stdout.lines().next());
    out.assert_one_stderr_line(STATUS_LINE);
    // The command named prints the tail of the number before `first`.
    let args: Vec<&str> = read.iter().map(String::as_str).collect();
    let tail = sb.run(&args).ok().stdout;
    assert!(
        !tail.is_empty() && format!("{}\n", first - 1).ends_with(&tail),
        "{tail:?} is not the end of line {}",
        first - 1
    );

    let out = sb
        .run(&[
            "step",
            "-s",
            "screen",
            "--screen",
            "--max-wait",
            "120000",
            "go",
        ])
        .ok();
    assert!(out.stdout.contains("200000"), "{:?}", out.stdout);
    out.assert_one_stderr_line(STATUS_LINE);
    let r = json_of(
        &sb.run(&[
            "step",
            "-s",
            "screen",
            "--screen",
            "--json",
            "--max-wait",
            "120000",
            "more",
        ])
        .ok(),
    );
    assert_eq!(r["dropped"], 0, "{r}");
    for s in ["stream", "screen"] {
        sb.run(&["stop", "-s", s]).ok();
    }
}

#[test]
fn list_columns_line_up_with_wide_session_names() {
    use unicode_width::UnicodeWidthStr;
    let sb = Sandbox::new("widecols");
    let wide = "日本語のセッション";
    sb.run(&["start", "-s", "s", "--", "cat"]).ok();
    sb.run(&["start", "-s", wide, "--", "cat"]).ok();
    let table = sb.run(&["list"]).ok().stdout;
    let rows: Vec<&str> = table.lines().collect();
    assert_eq!(rows.len(), 3, "{table}");
    // The header is ASCII: its byte offsets are display columns.
    let state = rows[0].find("STATE").expect("STATE header");
    for row in &rows[1..] {
        let at = ["waiting for input", "running"]
            .iter()
            .find_map(|w| row.find(w))
            .unwrap_or_else(|| panic!("no state in {row:?}"));
        assert_eq!(row[..at].width(), state, "misaligned:\n{table}");
    }
}

#[test]
fn a_recording_path_that_cannot_be_written_is_named() {
    let sb = Sandbox::new("badrec");
    sb.run(&["start", "-s", "r", "--", "cat"]).ok();
    let bad = sb.root.join("no-such-dir").join("x.cast");
    let out = sb.run(&["record", "-s", "r", "start", bad.to_str().expect("utf-8")]);
    assert_eq!(out.code(), 1, "{out:?}");
    out.assert_one_stderr_line(&format!(
        r"^\[ptybroker: cannot record to {}: No such file or directory.*\]$",
        regex_lite::escape(&bad.display().to_string())
    ));
    sb.run(&["stop", "-s", "r"]).ok();
}

#[test]
fn exit_code_makes_ptybroker_exit_as_the_program_did() {
    let sb = Sandbox::new("exitcode");
    let started = |name: &str, script: &str| {
        sb.run(&["start", "-s", name, "--", "sh", "-c", script])
            .ok();
    };
    // Without the flag the call itself succeeded.
    started("plain", "read x; exit 3");
    sb.run(&["send", "-s", "plain", "--enter"]).ok();
    let w = sb.run(&["wait", "-s", "plain", "--max-wait", "30000"]);
    assert_eq!(w.code(), 0, "{w:?}");
    // With it: the program's status, and the usual single status line.
    started("three", "read x; exit 3");
    sb.run(&["send", "-s", "three", "--enter"]).ok();
    let w = sb.run(&["wait", "-s", "three", "--max-wait", "30000", "--exit-code"]);
    assert_eq!(w.code(), 3, "{w:?}");
    w.assert_one_stderr_line(r"^\[ptybroker: .*, exited: exit status 3\]$");
    // Status 2 is the program's too, not a usage error of ours.
    started("two", "read x; exit 2");
    sb.run(&["send", "-s", "two", "--enter"]).ok();
    let w = sb.run(&["wait", "-s", "two", "--max-wait", "30000", "--exit-code"]);
    assert_eq!(w.code(), 2, "{w:?}");
    w.assert_one_stderr_line(r"^\[ptybroker: .*, exited: exit status 2\]$");
    let s = sb.run(&["stop", "-s", "two", "--exit-code"]);
    assert_eq!(s.code(), 2, "{s:?}");
    s.assert_one_stderr_line(STOP_LINE);
    // A signal is 128 + its number, as a shell reports it.
    started("term", "read x; kill -TERM $$");
    sb.run(&["send", "-s", "term", "--enter"]).ok();
    let w = sb.run(&["wait", "-s", "term", "--max-wait", "30000", "--exit-code"]);
    assert_eq!(w.code(), 128 + 15, "{w:?}");
    // `step` and `stop` take it too; 0 is 0 and a running program is 0.
    let s = sb.run(&["step", "-s", "three", "--exit-code"]);
    assert_eq!(s.code(), 3, "{s:?}");
    started("zero", "read x; exit 0");
    sb.run(&["send", "-s", "zero", "--enter"]).ok();
    let w = sb.run(&["wait", "-s", "zero", "--max-wait", "30000", "--exit-code"]);
    assert_eq!(w.code(), 0, "{w:?}");
    started("cat", "exec cat");
    let s = sb.run(&["step", "-s", "cat", "--exit-code", "hello"]);
    assert_eq!(s.code(), 0, "{s:?}");
    let s = sb.run(&["stop", "-s", "three", "--exit-code"]);
    assert_eq!(s.code(), 3, "{s:?}");
    s.assert_one_stderr_line(STOP_LINE);
    // Options that do not fit are usage errors.
    let r = sb.run(&["read", "-s", "cat", "--exit-code"]);
    assert_eq!(r.code(), 2, "{r:?}");
    for name in ["plain", "term", "zero", "cat"] {
        sb.run(&["stop", "-s", name]).ok();
    }
}

/// A call whose standard output is closed, or is a pipe nobody reads, still
/// does its work and exits 0: descriptor 1 is never the daemon's socket,
/// and a write to a reader that went away fails quietly instead of killing
/// the call with SIGPIPE (main.rs sets both up itself on glibc).
#[test]
fn a_call_whose_output_has_no_reader_still_does_its_work() {
    let sb = Sandbox::new("noreader");
    start_bash(&sb, "sh", &[]);
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", r#"exec "$0" "$@" >&- <&-"#, common::BIN])
        .args(["step", "--session", "sh", "echo MARK-$((6*7))"]);
    sb.env(&mut cmd);
    let out = common::run_bounded(cmd, std::time::Duration::from_secs(60), "step >&-");
    assert_eq!(out.code(), 0, "{out:?}");
    out.assert_one_stderr_line(STATUS_LINE);
    wait_match(&sb, "sh", "MARK-42");

    // A pipe whose reading end is closed before the call starts.
    let mut cmd = std::process::Command::new("python3");
    cmd.args([
        "-c",
        "import os, subprocess, sys\n\
         r, w = os.pipe()\n\
         os.close(r)\n\
         sys.exit(subprocess.call(sys.argv[1:], stdout=w) & 255)",
        common::BIN,
        "read",
        "--session",
        "sh",
        "--screen",
    ]);
    sb.env(&mut cmd);
    let out = common::run_bounded(cmd, std::time::Duration::from_secs(60), "read | gone");
    assert_eq!(out.code(), 0, "{out:?}");
    assert_eq!(out.stderr, "", "{out:?}");
}

/// A daemon started with descriptors 0 to 2 closed still serves: its socket
/// and lock are never taken for "standard output", which the daemon
/// detaches once ready (main.rs opens the closed ones on /dev/null first).
#[test]
fn a_daemon_started_without_standard_descriptors_serves() {
    let sb = Sandbox::new("nostdio");
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", r#"exec "$0" daemon <&- >&- 2>&-"#, common::BIN]);
    sb.env(&mut cmd);
    let mut daemon = cmd.spawn().expect("spawn the daemon");
    let listening = common::eventually(std::time::Duration::from_secs(20), || {
        sb.socket().exists().then_some(())
    });
    let list = sb.run(&["list"]);
    let alive = daemon.try_wait().expect("try_wait").is_none();
    let _ = daemon.kill();
    let _ = daemon.wait();
    assert!(listening.is_some(), "no socket");
    assert_eq!(list.code(), 0, "{list:?}");
    assert!(alive, "the daemon ended");
    // Ours answered: the call did not have to start a daemon of its own
    // (which would say so in the log).
    assert_eq!(sb.daemon_pid(), None, "another daemon answered");
}

/// Seed 002: every call prints one line on stderr. A call that fails says
/// why, and the way out with it, in that one line: a busy name (and
/// `--replace`), no verb at all, a wait that gave up or whose program
/// exited (with the status line's clauses), a start that had to replace a
/// dead daemon first, a `serve` that cannot listen or start its program.
#[test]
fn every_failing_call_prints_one_line_on_stderr() {
    let sb = Sandbox::new("oneline");
    sb.run(&["start", "-s", "d1", "--", "cat"]).ok();
    let one = |args: &[&str], code: i32, pattern: &str| {
        let out = sb.run(args);
        assert_eq!(out.code(), code, "{args:?}: {out:?}");
        out.assert_one_stderr_line(pattern);
        out
    };
    one(
        &["start", "-s", "d1", "--", "cat"],
        1,
        r#"^\[ptybroker: session "d1" already running for \S+ \(stop it first, or start --replace to start afresh\)\]$"#,
    );
    let none = one(
        &[],
        2,
        r"^\[ptybroker: .*ptybroker VERB.*\(see ptybroker --help\)\]$",
    );
    assert_eq!(none.stdout, "", "{none:?}");
    one(
        &[
            "wait",
            "-s",
            "d1",
            "--match",
            "never-shown",
            "--max-wait",
            "200",
        ],
        1,
        r"^\[ptybroker: gave up after 200 ms waiting for the text to appear \(\d\d:\d\d:\d\d \| running for \S+, quiet for \S+, still running, waiting for input\)\]$",
    );
    sb.run(&["start", "-s", "ex", "--", "sh", "-c", "read x; exit 3"])
        .ok();
    sb.run(&["send", "-s", "ex", "go", "--enter"]).ok();
    one(
        &["wait", "-s", "ex", "--match", "never-shown"],
        1,
        r"^\[ptybroker: the program exited before the text appeared \(\d\d:\d\d:\d\d \| running for \S+, quiet for \S+, exited: exit status 3\)\]$",
    );

    // A start that finds the daemon dead, and then cannot run its program.
    let daemon = sb.daemon_pid().expect("daemon pid");
    let id = common::proc_identity(daemon).expect("daemon");
    common::kill(daemon, 9);
    assert_eq!(common::wait_gone(daemon, id, true), None);
    let refused = common::eventually(std::time::Duration::from_secs(30), || {
        match std::os::unix::net::UnixStream::connect(sb.socket()) {
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => Some(()),
            _ => None,
        }
    });
    assert!(refused.is_some(), "the dead daemon's socket still accepts");
    one(
        &["start", "-s", "nx", "--", "/nonexistent/prog"],
        1,
        r"^\[ptybroker: cannot run .*/nonexistent/prog.*; the previous daemon had died .*old sessions are gone\]$",
    );

    // `serve` says where its token is only once it serves.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port().to_string();
    one(
        &["serve", "--cmd", "cat", "--port", &port],
        2,
        r"^\[ptybroker: serve: cannot listen on .*\]$",
    );
    drop(taken);
    let port = common::free_port().to_string();
    one(
        &[
            "serve",
            "--cmd",
            "cat",
            "--cwd",
            "/nonexistent",
            "--port",
            &port,
        ],
        1,
        r"^\[ptybroker: .*\]$",
    );
    for s in ["d1", "ex"] {
        let _ = sb.run(&["stop", "-s", s]);
    }
}

/// One line longer than the transcript, then a prompt: the prompt is shown,
/// after the line that says how much of the long line was dropped and which
/// command prints the rest of it, still held (a line without its start is
/// never shown as if whole, as the cap never shows part of a line); the
/// command prints exactly that.
#[test]
fn a_line_longer_than_the_ring_is_named_not_lost() {
    let sb = Sandbox::new("longline");
    let n: u64 = 3_000_000;
    let long = format!("head -c {n} /dev/zero | tr '\\0' y");
    let script = format!("{long}; printf '\\nQ> '; read x; {long}; printf '\\nR> '; read x");
    let out = sb
        .run(&[
            "start",
            "-s",
            "big",
            "--max-wait",
            "120000",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .ok();
    out.assert_one_stderr_line(STATUS_LINE);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines.len(),
        2,
        "{:?}",
        &out.stdout[..out.stdout.len().min(500)]
    );
    let (lost, held, read) = dropped_marker(lines[0]);
    assert_eq!(lines[1], "Q> ");
    // The y's and the CR LF the terminal made of the newline.
    assert_eq!(lost + held, n + 2);
    let args: Vec<&str> = read.iter().map(String::as_str).collect();
    let rest = sb.run(&args).ok();
    assert_eq!(rest.stderr, "", "read prints only what it shows");
    let ys = usize::try_from(held - 2).expect("fits");
    assert!(
        rest.stdout == format!("{}\n", "y".repeat(ys)),
        "{} bytes, not {ys} y's and a newline",
        rest.stdout.len()
    );
    // `wait` says the same of what it brings.
    sb.run(&["send", "-s", "big", "--enter"]).ok();
    let out = sb
        .run(&[
            "wait",
            "-s",
            "big",
            "--match",
            "R> ",
            "--max-wait",
            "120000",
        ])
        .ok();
    out.assert_one_stderr_line(STATUS_LINE);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines.len(),
        2,
        "{:?}",
        &out.stdout[..out.stdout.len().min(500)]
    );
    let (lost, held, _) = dropped_marker(lines[0]);
    assert_eq!(lines[1], "R> ");
    // The newline typed, echoed as CR LF, and the y's and their CR LF.
    assert_eq!(lost + held, 2 + n + 2);
    sb.run(&["stop", "-s", "big"]).ok();
}
