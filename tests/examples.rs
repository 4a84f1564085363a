//! The EXAMPLES of seed 002 (pty-prompt's manual), run as written against
//! real programs through the real binary: `git add -p`, a REPL, a build
//! waited on, and two sessions side by side.

mod common;

use std::path::Path;

use common::{lines, re, Out, Sandbox, STATUS_LINE, STOP_LINE};

/// `out`'s stdout, plus whatever `wait --match want` adds when the quiet
/// window closed before the program got to `want` (a slow machine): the
/// caller sees `want` either way, and nothing twice.
fn until_shown(sb: &Sandbox, cwd: &Path, session: &str, out: Out, want: &str) -> String {
    let out = out.ok();
    assert!(
        re(STATUS_LINE).is_match(out.status_line()),
        "{:?}",
        out.stderr
    );
    let mut text = out.stdout;
    if !text.contains(want) {
        let more = sb
            .run_in(
                cwd,
                &[
                    "wait",
                    "--session",
                    session,
                    "--match",
                    want,
                    "--max-wait",
                    "30000",
                ],
            )
            .ok();
        text.push_str(&more.stdout);
    }
    assert!(text.contains(want), "{want:?} never shown; got {text:?}");
    text
}

/// The hunk headers of a diff.
fn hunks(diff: &str) -> Vec<&str> {
    diff.lines().filter(|l| l.starts_with("@@ ")).collect()
}

fn drive_add_p(answers: [&str; 2]) -> (String, String) {
    let sb = Sandbox::new("addp");
    let repo = sb.repo_with_two_hunks();
    let s = "default";
    let first = until_shown(
        &sb,
        &repo,
        s,
        sb.run_in(&repo, &["start", "--", "git", "add", "-p"]),
        "(1/2) Stage this hunk",
    );
    assert!(first.contains("+two"), "first hunk shown: {first:?}");
    assert!(!first.contains("twenty-eight"), "{first:?}");

    let second = until_shown(
        &sb,
        &repo,
        s,
        sb.run_in(&repo, &["step", "--timeout", "1000", answers[0]]),
        "(2/2) Stage this hunk",
    );
    assert!(second.contains("+twenty-eight"), "{second:?}");

    let last = sb
        .run_in(&repo, &["step", "--timeout", "1000", answers[1]])
        .ok();
    assert!(re(STATUS_LINE).is_match(last.status_line()), "{last:?}");
    // Both hunks answered: git applies the choice and exits.
    let waited = sb.run_in(&repo, &["wait", "--max-wait", "30000"]).ok();
    assert!(waited.status_line().ends_with(", exited]"), "{waited:?}");
    let stop = sb.run_in(&repo, &["stop"]).ok();
    stop.assert_one_stderr_line(STOP_LINE);

    let staged = sb.tool(&repo, "git", &["diff", "--cached"]).stdout;
    let unstaged = sb.tool(&repo, "git", &["diff"]).stdout;
    (staged, unstaged)
}

#[test]
fn git_add_p_stages_exactly_the_hunks_answered_y() {
    let (staged, unstaged) = drive_add_p(["y", "n"]);
    assert_eq!(hunks(&staged), ["@@ -1,5 +1,5 @@"], "{staged}");
    assert!(staged.contains("\n-2\n+two\n"), "{staged}");
    assert!(!staged.contains("twenty-eight"), "{staged}");
    assert_eq!(hunks(&unstaged).len(), 1, "{unstaged}");
    assert!(unstaged.contains("\n-28\n+twenty-eight\n"), "{unstaged}");
}

#[test]
fn git_add_p_skipping_the_first_hunk_stages_only_the_second() {
    let (staged, unstaged) = drive_add_p(["n", "y"]);
    assert_eq!(hunks(&staged).len(), 1, "{staged}");
    assert!(staged.contains("\n-28\n+twenty-eight\n"), "{staged}");
    assert!(!staged.contains("+two"), "{staged}");
    assert!(unstaged.contains("\n-2\n+two\n"), "{unstaged}");
}

#[test]
fn git_add_p_quit_stages_nothing_more() {
    let sb = Sandbox::new("addq");
    let repo = sb.repo_with_two_hunks();
    until_shown(
        &sb,
        &repo,
        "g",
        sb.run_in(&repo, &["start", "-s", "g", "--", "git", "add", "-p"]),
        "(1/2) Stage this hunk",
    );
    until_shown(
        &sb,
        &repo,
        "g",
        sb.run_in(&repo, &["step", "-s", "g", "y"]),
        "(2/2) Stage this hunk",
    );
    sb.run_in(&repo, &["step", "-s", "g", "q"]).ok();
    sb.run_in(&repo, &["wait", "-s", "g", "--max-wait", "30000"])
        .ok();
    sb.run_in(&repo, &["stop", "-s", "g"]).ok();
    let staged = sb.tool(&repo, "git", &["diff", "--cached"]).stdout;
    assert_eq!(hunks(&staged), ["@@ -1,5 +1,5 @@"], "{staged}");
}

#[test]
fn python_repl_answers_1_plus_41() {
    let sb = Sandbox::new("repl");
    let cwd = sb.root.clone();
    until_shown(
        &sb,
        &cwd,
        "default",
        sb.run(&["start", "--timeout", "1500", "--", "python3", "-q"]),
        ">>>",
    );
    let answer = until_shown(
        &sb,
        &cwd,
        "default",
        sb.run(&["step", "--timeout", "1000", "1 + 41"]),
        "42",
    );
    let l = lines(&answer);
    assert!(l.contains(&"1 + 41"), "the echo of the input: {answer:?}");
    assert!(l.contains(&"42"), "{answer:?}");
    let next_prompt = if l.last() == Some(&">>>") {
        answer
    } else {
        until_shown(&sb, &cwd, "default", sb.run(&["step"]), ">>>")
    };
    assert_eq!(lines(&next_prompt).last(), Some(&">>>"), "{next_prompt:?}");

    let bye = sb.run(&["step", "exit()"]).ok();
    let bye = if bye.status_line().ends_with(", exited]") {
        bye
    } else {
        sb.run(&["wait", "--max-wait", "30000"]).ok()
    };
    assert!(re(STATUS_LINE).is_match(bye.status_line()), "{bye:?}");
    assert!(bye.status_line().ends_with(", exited]"), "{bye:?}");
    let stop = sb.run(&["stop"]).ok();
    stop.assert_one_stderr_line(
        r#"^\[ptybroker: .* \| ran for \S+, exited, session "default" stopped\]$"#,
    );
}

#[test]
fn a_build_waited_on_reports_its_exit_status() {
    let sb = Sandbox::new("build");
    let script = "echo building; sleep 1; echo done; exit 3";
    let start = sb
        .run(&["start", "--session", "build", "--", "sh", "-c", script])
        .ok();
    start.assert_one_stderr_line(STATUS_LINE);
    let wait = sb
        .run(&["wait", "--session", "build", "--max-wait", "60000"])
        .ok();
    wait.assert_one_stderr_line(STATUS_LINE);
    assert!(
        wait.stderr.trim_end().ends_with(", exited: exit status 3]"),
        "{:?}",
        wait.stderr
    );
    // `start` returns once the program settles or exits: the build is busy
    // (sleeping) until it exits, so "done" is in whichever call saw it first.
    assert!(
        lines(&format!("{}{}", start.stdout, wait.stdout)).contains(&"done"),
        "{wait:?}"
    );
    // Incremental: what start showed is not shown again, nothing is lost.
    let all = format!("{}{}", start.stdout, wait.stdout);
    assert_eq!(lines(&all), ["building", "done"], "{all:?}");

    // A second wait on the exited program returns at once, with nothing new.
    let again = sb.run(&["wait", "--session", "build"]).ok();
    assert_eq!(again.stdout, "");
    assert!(again.status_line().ends_with(", exited: exit status 3]"));

    let stop = sb.run(&["stop", "--session", "build"]).ok();
    stop.assert_one_stderr_line(STOP_LINE);
    assert!(
        stop.stderr
            .contains(", exited: exit status 3, session \"build\" stopped]"),
        "{:?}",
        stop.stderr
    );
}

#[test]
fn two_concurrent_sessions_stay_independent() {
    let sb = Sandbox::new("two");
    let cwd = sb.root.clone();
    until_shown(
        &sb,
        &cwd,
        "a",
        sb.run(&[
            "start",
            "-s",
            "a",
            "--timeout",
            "1000",
            "--",
            "python3",
            "-q",
        ]),
        ">>>",
    );
    let bash = ["bash", "--norc", "--noprofile"];
    let mut args = vec!["start", "--session", "b", "--"];
    args.extend(bash);
    sb.run(&args).ok();

    sb.run(&["step", "-s", "a", "x = 'from-a'"]).ok();
    until_shown(
        &sb,
        &cwd,
        "b",
        sb.run(&["step", "-s", "b", "echo from-$((6*7))-b"]),
        "from-42-b",
    );
    let a = until_shown(
        &sb,
        &cwd,
        "a",
        sb.run(&["step", "-s", "a", "print(x.upper())"]),
        "FROM-A",
    );
    assert!(!a.contains("from-42-b"), "{a:?}");

    let screen_a = sb.run(&["read", "-s", "a"]).ok().stdout;
    let screen_b = sb.run(&["read", "-s", "b"]).ok().stdout;
    assert!(screen_a.contains("FROM-A") && !screen_a.contains("from-42-b"));
    assert!(screen_b.contains("from-42-b") && !screen_b.contains("from-a"));

    let list: serde_json::Value =
        serde_json::from_str(&sb.run(&["list", "--json"]).ok().stdout).expect("list --json");
    let names: Vec<&str> = list["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .filter_map(|s| s["session"].as_str())
        .collect();
    assert_eq!(names, ["a", "b"]);

    // Ending one leaves the other running and usable.
    sb.run(&["stop", "-s", "a"]).ok();
    let b = sb.run(&["status", "-s", "b"]).ok();
    assert!(
        b.status_line().ends_with(", still running]")
            || b.status_line().ends_with(", waiting for input]"),
        "{b:?}"
    );
    until_shown(
        &sb,
        &cwd,
        "b",
        sb.run(&["step", "-s", "b", "echo still-$((1+1))"]),
        "still-2",
    );
    let gone = sb.run(&["status", "-s", "a"]);
    assert_eq!(gone.code(), 1, "{gone:?}");
    gone.assert_one_stderr_line(r#"^\[ptybroker: no session "a" \(start one first\)\]$"#);
    sb.run(&["stop", "-s", "b"]).ok();
}
