//! Full-screen programs end to end through the real binary: vim edits and
//! saves a file, less searches and quits, top starts and quits. Every step
//! is checked on the rendered screen, as `ptybroker read` shows it.
//!
//! Screens are polled until they show what a person would wait for, within
//! a generous bound; nothing here asserts how fast anything happens.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{Sandbox, STATUS_LINE};
use serde_json::Value;

/// How long a screen may take to show what a step should produce: an upper
/// bound for a loaded machine, not an expectation.
const PATIENCE: Duration = Duration::from_secs(60);

/// The rendered screen of `session`, one string per row.
fn screen(sb: &Sandbox, session: &str) -> Vec<String> {
    let out = sb.run(&["read", "--session", session]).ok();
    out.stdout.lines().map(str::to_string).collect()
}

/// Poll the screen until `done` holds for it; fail with the last screen
/// (and what was awaited) if it never does.
fn screen_until(
    sb: &Sandbox,
    session: &str,
    what: &str,
    done: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    let mut last = Vec::new();
    let found = common::eventually(PATIENCE, || {
        last = screen(sb, session);
        done(&last).then(|| last.clone())
    });
    found.unwrap_or_else(|| panic!("the screen never showed {what}:\n{}", last.join("\n")))
}

fn status_json(sb: &Sandbox, session: &str) -> Value {
    let out = sb.run(&["status", "--session", session, "--json"]).ok();
    serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("status is not JSON ({e}): {:?}", out.stdout))
}

/// Wait for the program to exit and check it exited 0 and is not on the
/// alternate screen (any more).
fn expect_clean_exit(sb: &Sandbox, session: &str) {
    let done = sb
        .run(&["wait", "--session", session, "--max-wait", "60000"])
        .ok();
    assert!(
        common::re(STATUS_LINE).is_match(done.status_line()),
        "{done:?}"
    );
    let st = status_json(sb, session);
    assert_eq!(st["running"], false, "{st}");
    assert_eq!(st["exitCode"], 0, "{st}");
    assert_eq!(st["altScreen"], false, "{st}");
}

/// Stop the session and check that nothing but the daemon is left.
fn stop_and_check_nothing_left(sb: &Sandbox, session: &str) {
    sb.run(&["stop", "--session", session]).ok();
    let daemon = sb.daemon_pid();
    let leftovers = common::eventually(PATIENCE, || {
        let left: Vec<i32> = sb
            .processes()
            .into_iter()
            .filter(|&p| Some(p) != daemon)
            .collect();
        left.is_empty().then_some(())
    });
    assert!(
        leftovers.is_some(),
        "processes left behind: {:?}",
        sb.processes()
    );
}

fn start(sb: &Sandbox, cwd: &Path, session: &str, size: (u16, u16), argv: &[&str]) {
    let (cols, rows) = (size.0.to_string(), size.1.to_string());
    let mut args = vec![
        "start",
        "--session",
        session,
        "--cols",
        &cols,
        "--rows",
        &rows,
        // No pager history files or user options leaking into the test.
        "--env",
        "LESSHISTFILE=-",
        "--env",
        "LESS=",
        "--",
    ];
    args.extend(argv);
    sb.run_in(cwd, &args)
        .ok()
        .assert_one_stderr_line(STATUS_LINE);
}

#[test]
fn vim_edits_and_saves_a_file() {
    let sb = Sandbox::new("fs-vim");
    let dir = sb.work("vim");
    let file = dir.join("notes.txt");
    std::fs::write(&file, "first line\nsecond line\n").expect("write");
    start(
        &sb,
        &dir,
        "vim",
        (80, 24),
        &["vim", "-u", "NONE", "-N", "-i", "NONE", "-n", "notes.txt"],
    );

    // The file, `~` for the rows past its end, and the file message.
    let s = screen_until(&sb, "vim", "the opened file", |s| {
        s.last().is_some_and(|l| l.starts_with("\"notes.txt\""))
    });
    assert_eq!(s.len(), 24, "{s:#?}");
    assert_eq!(&s[..2], ["first line", "second line"], "{s:#?}");
    assert!(s[2..23].iter().all(|r| r == "~"), "{s:#?}");
    assert!(status_json(&sb, "vim")["altScreen"] == true);

    // Open a line below the last and type into it.
    sb.run(&["send", "--session", "vim", "Go", "third line"])
        .ok();
    let s = screen_until(&sb, "vim", "the typed line in insert mode", |s| {
        s.get(2).is_some_and(|r| r == "third line")
            && s.last().is_some_and(|l| l.contains("-- INSERT --"))
    });
    assert_eq!(&s[..2], ["first line", "second line"], "{s:#?}");
    assert!(s[3..23].iter().all(|r| r == "~"), "{s:#?}");

    // Escape leaves insert mode: the mode line goes.
    sb.run(&["send", "--session", "vim", "--key", "Escape"])
        .ok();
    let s = screen_until(&sb, "vim", "normal mode", |s| {
        s.last().is_some_and(|l| !l.contains("INSERT"))
    });
    assert_eq!(s[2], "third line", "{s:#?}");

    // The file is untouched until :wq writes it and vim exits.
    assert_eq!(
        std::fs::read_to_string(&file).expect("read"),
        "first line\nsecond line\n"
    );
    sb.run(&["step", "--session", "vim", ":wq"]).ok();
    expect_clean_exit(&sb, "vim");
    assert_eq!(
        std::fs::read_to_string(&file).expect("read"),
        "first line\nsecond line\nthird line\n"
    );
    stop_and_check_nothing_left(&sb, "vim");
}

#[test]
fn less_searches_and_quits() {
    let sb = Sandbox::new("fs-less");
    let dir = sb.work("less");
    let mut text: String = (1..=200).map(|i| format!("line {i}\n")).collect();
    text = text.replace("line 150\n", "line 150 has the needle\n");
    std::fs::write(dir.join("big.txt"), text).expect("write");
    start(&sb, &dir, "less", (80, 24), &["less", "big.txt"]);

    // The first screenful, and the prompt naming the file.
    let s = screen_until(&sb, "less", "the first page", |s| {
        s.first().is_some_and(|r| r == "line 1") && s.len() == 24
    });
    let want: Vec<String> = (1..=23).map(|i| format!("line {i}")).collect();
    assert_eq!(s[..23], want[..], "{s:#?}");
    assert_eq!(s[23], "big.txt", "{s:#?}");

    // Typing a search shows it on the prompt line...
    sb.run(&["send", "--session", "less", "/needle"]).ok();
    let s = screen_until(&sb, "less", "the search being typed", |s| {
        s.last().is_some_and(|l| l == "/needle")
    });
    assert_eq!(s[0], "line 1", "{s:#?}");

    // ...and Enter scrolls the match to the top.
    sb.run(&["send", "--session", "less", "--key", "Enter"])
        .ok();
    let s = screen_until(&sb, "less", "the match at the top", |s| {
        s.first().is_some_and(|r| r == "line 150 has the needle")
    });
    let want: Vec<String> = (151..=172).map(|i| format!("line {i}")).collect();
    assert_eq!(s[1..23], want[..], "{s:#?}");
    assert_eq!(s[23], ":", "{s:#?}");

    sb.run(&["send", "--session", "less", "q"]).ok();
    expect_clean_exit(&sb, "less");
    stop_and_check_nothing_left(&sb, "less");
}

#[test]
fn top_starts_and_quits() {
    let sb = Sandbox::new("fs-top");
    let dir = sb.work("top");
    start(&sb, &dir, "top", (100, 30), &["top", "-d", "1"]);

    // The summary area and the task list's header.
    let s = screen_until(&sb, "top", "top's summary and task header", |s| {
        s.first().is_some_and(|r| r.starts_with("top - "))
            && s.iter().any(|r| r.contains("PID") && r.contains("COMMAND"))
    });
    assert!(s[0].contains("load average:"), "{s:#?}");
    assert!(s.iter().any(|r| r.starts_with("Tasks:")), "{s:#?}");
    assert!(
        s.iter().any(|r| r.contains("Cpu(s):")),
        "a CPU summary line: {s:#?}"
    );
    // procps top draws on the primary screen (no smcup), so its last frame
    // stays there after it quits, above the shell's next prompt.
    assert!(status_json(&sb, "top")["altScreen"] == false);

    sb.run(&["send", "--session", "top", "q"]).ok();
    expect_clean_exit(&sb, "top");
    let s = screen(&sb, "top");
    assert!(
        s.iter().any(|r| r.contains("PID") && r.contains("COMMAND")),
        "the last frame stays readable after exit: {s:#?}"
    );
    stop_and_check_nothing_left(&sb, "top");
}
