//! Issue 4 through the binary: `start` and `step` return when the kernel says
//! the program waits for input, with real programs (python3, bash, git, node,
//! vim, top) and with programs written to catch a quiet timer out
//! (tests/programs/): one that pauses on a timer mid-output, one that
//! computes silently, one that reads a pipe or a socket instead of its
//! terminal, one that polls its terminal like top. Also `--quiet-only`, the
//! JSON-RPC idle wait and `waitingForInput`, and the status line's `waiting
//! for input`. Every test ends its session and checks that nothing it
//! started is left.
//!
//! Nothing here asserts a duration beyond generous upper bounds: where a
//! test must prove that the kernel check (and not the quiet fallback or the
//! cap) ended a wait, it sets a fallback of 30 s and a cap of 60 s and
//! checks that the call came back within 25 s.
#![cfg(target_os = "linux")]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{eventually, re, Out, Rpc, Sandbox, STATUS_LINE, STOP_LINE};
use serde_json::{json, Value};

/// The fallback quiet window that proves the kernel settled a wait: far
/// longer than any of these programs takes to answer...
const LONG_QUIET: &str = "30000";
/// ...and a cap longer still...
const LONG_CAP: &str = "60000";
/// ...so a call that came back within this was settled by the kernel.
const KERNEL_BOUND: Duration = Duration::from_secs(25);

const WAITING: &str = ", waiting for input]";
const STILL_RUNNING: &str = ", still running]";

fn program(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/programs")
        .join(name);
    p.to_str().expect("utf-8 path").to_string()
}

fn have(cmd: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Run a CLI call to success; returns it and how long it took.
fn timed(sb: &Sandbox, args: &[&str]) -> (Out, Duration) {
    timed_in(sb, &sb.root, args)
}

fn timed_in(sb: &Sandbox, cwd: &Path, args: &[&str]) -> (Out, Duration) {
    let t = Instant::now();
    let out = sb.run_in(cwd, args).ok();
    (out, t.elapsed())
}

/// The call printed one status line, and it says the program waits for input.
fn assert_waiting(out: &Out, what: &str) {
    out.assert_one_stderr_line(STATUS_LINE);
    assert!(
        out.status_line().ends_with(WAITING),
        "{what}: the status line should say waiting for input: {:?}\nstdout: {:?}",
        out.status_line(),
        out.stdout
    );
}

/// The call came back long before the 30 s fallback or the cap, so the
/// kernel settled it, and its status line says the program waits for input.
fn assert_kernel_settled(out: &Out, took: Duration, what: &str) {
    assert_waiting(out, what);
    assert!(
        took < KERNEL_BOUND,
        "{what}: took {took:?}, so the kernel never said the program waits for input\n\
         stdout: {:?}\nstderr: {:?}",
        out.stdout,
        out.stderr
    );
}

/// `start` with a 30 s fallback and a 60 s cap, settled by the kernel.
fn start_settled(sb: &Sandbox, cwd: &Path, session: &str, opts: &[&str], argv: &[&str]) -> Out {
    let mut args = vec![
        "start",
        "--session",
        session,
        "--timeout",
        LONG_QUIET,
        "--max-wait",
        LONG_CAP,
    ];
    args.extend(opts);
    args.push("--");
    args.extend(argv);
    let (out, took) = timed_in(sb, cwd, &args);
    assert_kernel_settled(&out, took, &format!("start {argv:?}"));
    out
}

/// `step TEXT` with a 30 s fallback and a 60 s cap, settled by the kernel.
fn step_settled(sb: &Sandbox, session: &str, text: Option<&str>) -> Out {
    let mut args = vec![
        "step",
        "--session",
        session,
        "--timeout",
        LONG_QUIET,
        "--max-wait",
        LONG_CAP,
    ];
    args.extend(text);
    let (out, took) = timed(sb, &args);
    assert_kernel_settled(&out, took, &format!("step {text:?}"));
    out
}

/// The last line of output with anything on it, as printed (the CLI ends
/// output that does not end in a newline with one).
fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
}

fn has_line(text: &str, want: &str) -> bool {
    text.lines().any(|l| l.trim() == want)
}

/// End the session and check that nothing it started is left: only the
/// daemon may still carry the sandbox's marker.
fn finish(sb: &Sandbox, session: &str) {
    let out = sb.run(&["kill-session", "--session", session]).ok();
    out.assert_one_stderr_line(STOP_LINE);
    let daemon = sb.daemon_pid();
    let left = eventually(Duration::from_secs(15), || {
        let left: Vec<i32> = sb
            .processes()
            .into_iter()
            .filter(|p| Some(*p) != daemon)
            .collect();
        left.is_empty().then_some(())
    });
    assert!(
        left.is_some(),
        "processes left behind after kill-session: {:?}",
        sb.processes()
    );
}

fn status(rpc: &mut Rpc, session: &str) -> Value {
    rpc.ok("pty/status", json!({ "session": session }))
}

// ---------------------------------------------------------------------------
// Real programs.

#[test]
fn python_repl_answers_with_the_result_and_the_next_prompt() {
    let sb = Sandbox::new("py");
    let start = start_settled(&sb, &sb.root, "py", &[], &["python3", "-q"]);
    assert_eq!(last_line(&start.stdout).trim(), ">>>", "{:?}", start.stdout);

    let out = step_settled(&sb, "py", Some("1 + 41"));
    assert!(has_line(&out.stdout, "42"), "{:?}", out.stdout);
    assert_eq!(last_line(&out.stdout), ">>> ", "{:?}", out.stdout);

    // The same with pty-prompt's defaults (a 500 ms fallback): the answer
    // and the prompt, nothing left over for the next step.
    let (out, _) = timed(&sb, &["step", "--session", "py", "6 * 7"]);
    assert_waiting(&out, "step 6 * 7");
    assert!(has_line(&out.stdout, "42"), "{:?}", out.stdout);
    assert_eq!(last_line(&out.stdout), ">>> ", "{:?}", out.stdout);

    // A pause mid-answer (on a timer) is not the end of the answer.
    let out = step_settled(
        &sb,
        "py",
        Some("print('before'); import time; time.sleep(1.5); print('after')"),
    );
    assert!(has_line(&out.stdout, "before"), "{:?}", out.stdout);
    assert!(has_line(&out.stdout, "after"), "{:?}", out.stdout);
    assert_eq!(last_line(&out.stdout), ">>> ", "{:?}", out.stdout);

    // Asked afterwards, the session still waits for input.
    let out = sb.run(&["status", "--session", "py"]).ok();
    assert_waiting(&out, "status");
    let out = sb.run(&["status", "--session", "py", "--json"]).ok();
    let st: Value = serde_json::from_str(out.stdout.trim()).expect("status --json");
    assert_eq!(st["waitingForInput"], true, "{st}");
    assert_eq!(st["activity"], "waiting for input", "{st}");
    assert!(st["quietMs"].is_u64(), "{st}");
    finish(&sb, "py");
}

#[test]
fn bash_echo_shows_the_text_and_the_prompt() {
    let sb = Sandbox::new("bash");
    let start = start_settled(
        &sb,
        &sb.root,
        "sh",
        &["--env", "PS1=ready> "],
        &["bash", "--norc", "--noprofile"],
    );
    assert_eq!(last_line(&start.stdout), "ready> ", "{:?}", start.stdout);

    let out = step_settled(&sb, "sh", Some("echo hi"));
    assert!(has_line(&out.stdout, "hi"), "{:?}", out.stdout);
    assert_eq!(last_line(&out.stdout), "ready> ", "{:?}", out.stdout);

    // A foreground job in its own process group, silent on a timer.
    let out = step_settled(&sb, "sh", Some("sleep 1.5; echo late"));
    assert!(has_line(&out.stdout, "late"), "{:?}", out.stdout);
    assert_eq!(last_line(&out.stdout), "ready> ", "{:?}", out.stdout);

    // A prompting program run from the shell: its prompt, not the shell's.
    let cmd = format!("python3 {}", program("compute_then_prompt.py"));
    let out = step_settled(&sb, "sh", Some(&cmd));
    assert_eq!(last_line(&out.stdout), "computed 0? ", "{:?}", out.stdout);
    finish(&sb, "sh");
}

/// A repository whose working tree differs from HEAD in three hunks: two in
/// one file, one in another.
fn repo_with_three_hunks(sb: &Sandbox) -> PathBuf {
    let repo = sb.work("repo");
    sb.tool(&repo, "git", &["init", "-q", "."]);
    let numbers: String = (1..=40).map(|n| format!("{n}\n")).collect();
    std::fs::write(repo.join("a.txt"), &numbers).unwrap();
    std::fs::write(repo.join("b.txt"), "one\n").unwrap();
    sb.tool(&repo, "git", &["add", "."]);
    sb.tool(&repo, "git", &["commit", "-q", "-m", "init"]);
    let changed = numbers
        .replace("\n3\n", "\nthree\n")
        .replace("\n35\n", "\nthirty-five\n");
    std::fs::write(repo.join("a.txt"), changed).unwrap();
    std::fs::write(repo.join("b.txt"), "one\ntwo\n").unwrap();
    repo
}

#[test]
fn git_add_p_every_step_ends_at_the_hunk_prompt() {
    let sb = Sandbox::new("gitp");
    let repo = repo_with_three_hunks(&sb);
    let prompt = re(r"^\(\d/\d\) Stage this hunk \[[^\]]+\]\? $");
    let start = start_settled(&sb, &repo, "git", &[], &["git", "add", "-p"]);
    assert!(start.stdout.contains("-3\n+three"), "{:?}", start.stdout);
    assert!(
        prompt.is_match(last_line(&start.stdout)),
        "{:?}",
        start.stdout
    );
    for (answer, hunk) in [("n", "+thirty-five"), ("y", "+two")] {
        let out = step_settled(&sb, "git", Some(answer));
        assert!(out.stdout.contains(hunk), "{:?}", out.stdout);
        assert!(prompt.is_match(last_line(&out.stdout)), "{:?}", out.stdout);
    }
    // The last answer ends git: the step returns with its exit.
    let (out, took) = timed(
        &sb,
        &[
            "step",
            "--session",
            "git",
            "--timeout",
            LONG_QUIET,
            "--max-wait",
            LONG_CAP,
            "n",
        ],
    );
    out.assert_one_stderr_line(STATUS_LINE);
    assert!(out.status_line().ends_with(", exited]"), "{:?}", out.stderr);
    assert!(took < KERNEL_BOUND, "took {took:?}");
    let staged = sb.tool(&repo, "git", &["diff", "--cached", "--name-only"]);
    assert_eq!(staged.stdout.trim(), "a.txt", "only the hunk answered y");
    finish(&sb, "git");
}

#[test]
fn node_repl_waits_in_epoll() {
    if !have("node") {
        eprintln!("node is not installed; skipped");
        return;
    }
    let sb = Sandbox::new("node");
    let start = start_settled(&sb, &sb.root, "node", &[], &["node"]);
    assert_eq!(last_line(&start.stdout), "> ", "{:?}", start.stdout);
    let out = step_settled(&sb, "node", Some("1 + 41"));
    assert!(has_line(&out.stdout, "42"), "{:?}", out.stdout);
    assert_eq!(last_line(&out.stdout), "> ", "{:?}", out.stdout);
    // Busy in JavaScript, silent: not the end of the answer.
    let out = step_settled(
        &sb,
        "node",
        Some("{ const t = Date.now(); while (Date.now() - t < 1500) {} 'spun' }"),
    );
    assert!(has_line(&out.stdout, "'spun'"), "{:?}", out.stdout);
    assert_eq!(last_line(&out.stdout), "> ", "{:?}", out.stdout);
    finish(&sb, "node");
}

/// Node's event loop watches the terminal while a top-level `await` waits
/// on a timer: to the kernel it waits for input (the main thread is in
/// `epoll_pwait` with the tty in the set), but with the timer's timeout,
/// which the step lets run out (limits::SETTLE_TIMER_HORIZON).
#[test]
fn node_top_level_await_is_not_the_end_of_the_answer() {
    if !have("node") {
        eprintln!("node is not installed; skipped");
        return;
    }
    let sb = Sandbox::new("nodeawait");
    start_settled(&sb, &sb.root, "node", &[], &["node"]);
    let out = step_settled(
        &sb,
        "node",
        Some("await new Promise(r => setTimeout(r, 1500)); 'waited'"),
    );
    assert!(has_line(&out.stdout, "'waited'"), "{:?}", out.stdout);
    assert_eq!(last_line(&out.stdout), "> ", "{:?}", out.stdout);
    // A wizard in node: a question, work on a timer, the next question.
    let wizard = "const rl = require('readline').createInterface({input: process.stdin, \
                  output: process.stdout}); rl.question('A? ', a => { \
                  process.stdout.write('working'); setTimeout(() => rl.question(' B? ', \
                  b => { console.log('got', a, b); rl.question('done? ', () => rl.close()); }), \
                  1500); })";
    start_settled(&sb, &sb.root, "wizard", &[], &["node", "-e", wizard]);
    let out = step_settled(&sb, "wizard", Some("one"));
    // readline draws its prompt from the first column, over "working".
    assert_eq!(last_line(&out.stdout), " B? ", "{:?}", out.stdout);
    let out = step_settled(&sb, "wizard", Some("two"));
    assert!(has_line(&out.stdout, "got one two"), "{:?}", out.stdout);
    assert_eq!(last_line(&out.stdout), "done? ", "{:?}", out.stdout);
    sb.run(&["kill-session", "--session", "node"]).ok();
    finish(&sb, "wizard");
}

/// An installer's "press a key to abort" countdown waits on the terminal
/// with `read -t 1` (pselect6 with a 1 s timeout): each second is let run
/// out, so `start` returns at the real question, not in the countdown.
#[test]
fn a_countdown_on_read_with_a_timeout_is_not_the_answer() {
    let sb = Sandbox::new("countdown");
    let script = "for i in 3 2 1; do printf '%s.. ' $i; \
                  if read -t 1 -n 1 k; then echo aborted; exit 1; fi; done; \
                  echo go; read -p 'name? ' x; echo \"hi $x\"; read y";
    let out = start_settled(&sb, &sb.root, "c", &[], &["bash", "--norc", "-c", script]);
    assert!(has_line(&out.stdout, "3.. 2.. 1.. go"), "{:?}", out.stdout);
    assert_eq!(last_line(&out.stdout), "name? ", "{:?}", out.stdout);
    let out = step_settled(&sb, "c", Some("bob"));
    assert!(has_line(&out.stdout, "hi bob"), "{:?}", out.stdout);
    finish(&sb, "c");
}

/// A full-screen program that redraws on a short timer for ever settles
/// all the same: its timer is let run out once per call, not at every tick.
#[test]
fn a_full_screen_program_redrawing_on_a_short_timer_settles() {
    let sb = Sandbox::new("ticker");
    let prog = program("curses_ticker.py");
    let out = start_settled(&sb, &sb.root, "t", &[], &["python3", &prog]);
    assert!(out.stdout.contains("press q to quit"), "{:?}", out.stdout);
    let out = step_settled(&sb, "t", Some("x"));
    assert!(out.stdout.contains("key x"), "{:?}", out.stdout);
    finish(&sb, "t");
}

#[test]
fn vim_shows_the_effect_of_an_ex_command() {
    let sb = Sandbox::new("vim");
    let start = start_settled(&sb, &sb.root, "vim", &[], &["vim", "-u", "NONE", "-N"]);
    // A full-screen program: the step shows the rendered screen.
    assert!(has_line(&start.stdout, "~"), "{:?}", start.stdout);

    let out = step_settled(&sb, "vim", Some(":set number"));
    let first = out.stdout.lines().next().unwrap_or("");
    assert!(re(r"^\s+1\s*$").is_match(first), "{:?}", out.stdout);

    let out = step_settled(&sb, "vim", Some(":call setline(1, ['alpha', 'beta'])"));
    let rows: Vec<&str> = out.stdout.lines().collect();
    assert!(
        rows.len() > 2 && re(r"^\s+1 alpha$").is_match(rows[0]),
        "{:?}",
        out.stdout
    );
    assert!(re(r"^\s+2 beta$").is_match(rows[1]), "{:?}", out.stdout);

    // An ex command that runs a silent shell command: vim waits on its child
    // (busy), then asks for Enter.
    let out = step_settled(&sb, "vim", Some(":!sleep 1.5; echo shelled"));
    assert!(has_line(&out.stdout, "shelled"), "{:?}", out.stdout);
    assert!(
        out.stdout
            .contains("Press ENTER or type command to continue"),
        "{:?}",
        out.stdout
    );
    let out = step_settled(&sb, "vim", Some(""));
    assert!(
        re(r"(?m)^\s+1 alpha$").is_match(&out.stdout),
        "{:?}",
        out.stdout
    );
    finish(&sb, "vim");
}

// ---------------------------------------------------------------------------
// Programs written to catch a quiet timer out.

#[test]
fn a_short_poll_of_the_terminal_mid_output_is_not_the_answer() {
    // Between its two lines the program waits on the terminal with a 1.8 ms
    // timeout: the kernel shows it waiting for input, but it wakes by itself,
    // so settling must look twice the longer debounce apart.
    let sb = Sandbox::new("poll-pause");
    let prog = program("select_pause_prompt.py");
    let start = start_settled(&sb, &sb.root, "p", &[], &["python3", &prog]);
    assert_eq!(last_line(&start.stdout), "answer 0? ", "{:?}", start.stdout);
    for n in 1..=20 {
        let out = step_settled(&sb, "p", Some("go"));
        assert!(
            has_line(&out.stdout, &format!("done {n}")),
            "step {n} returned early: {:?}",
            out.stdout
        );
        assert_eq!(
            last_line(&out.stdout),
            format!("answer {n}? "),
            "{:?}",
            out.stdout
        );
    }
}

#[test]
fn a_pause_on_a_timer_mid_output_is_not_the_answer() {
    let sb = Sandbox::new("pause");
    let prog = program("print_sleep_prompt.py");
    // pty-prompt's defaults (a 500 ms fallback, shorter than the pause);
    // only the cap is raised, so that a check that never settles is caught
    // by the bound rather than hidden by the cap.
    let (start, took) = timed(
        &sb,
        &[
            "start",
            "--session",
            "p",
            "--max-wait",
            LONG_CAP,
            "--",
            "python3",
            &prog,
        ],
    );
    assert_kernel_settled(&start, took, "start");
    assert!(has_line(&start.stdout, "done 0"), "{:?}", start.stdout);
    assert_eq!(last_line(&start.stdout), "answer 0? ", "{:?}", start.stdout);
    for n in 1..=5 {
        let (out, took) = timed(
            &sb,
            &["step", "--session", "p", "--max-wait", LONG_CAP, "go"],
        );
        assert_kernel_settled(&out, took, &format!("step {n}"));
        assert!(
            has_line(&out.stdout, &format!("working {n}")),
            "{:?}",
            out.stdout
        );
        assert!(
            has_line(&out.stdout, &format!("done {n}")),
            "step {n} returned early: {:?}",
            out.stdout
        );
        assert_eq!(
            last_line(&out.stdout),
            format!("answer {n}? "),
            "{:?}",
            out.stdout
        );
    }
    finish(&sb, "p");
}

#[test]
fn silent_computing_is_not_the_answer() {
    let sb = Sandbox::new("compute");
    let prog = program("compute_then_prompt.py");
    let (start, took) = timed(
        &sb,
        &[
            "start",
            "--session",
            "c",
            "--max-wait",
            LONG_CAP,
            "--",
            "python3",
            &prog,
        ],
    );
    assert_kernel_settled(&start, took, "start");
    assert_eq!(
        last_line(&start.stdout),
        "computed 0? ",
        "{:?}",
        start.stdout
    );
    for n in 1..=5 {
        let (out, took) = timed(
            &sb,
            &["step", "--session", "c", "--max-wait", LONG_CAP, "go"],
        );
        assert_kernel_settled(&out, took, &format!("step {n}"));
        assert_eq!(
            last_line(&out.stdout),
            format!("computed {n}? "),
            "step {n} returned early: {:?}",
            out.stdout
        );
    }
    finish(&sb, "c");
}

#[test]
fn quiet_only_bypasses_the_kernel_check() {
    let sb = Sandbox::new("quietonly");
    let prog = program("compute_then_prompt.py");
    let (start, took) = timed(
        &sb,
        &[
            "start",
            "--session",
            "q",
            "--max-wait",
            LONG_CAP,
            "--",
            "python3",
            &prog,
        ],
    );
    assert_kernel_settled(&start, took, "start");
    assert_eq!(
        last_line(&start.stdout),
        "computed 0? ",
        "{:?}",
        start.stdout
    );

    // The escape hatch: 300 ms of quiet is the whole rule, so the step comes
    // back while the program computes, with the echo and without the prompt.
    let out = sb
        .run(&[
            "step",
            "--session",
            "q",
            "--quiet-only",
            "--timeout",
            "300",
            "first",
        ])
        .ok();
    out.assert_one_stderr_line(STATUS_LINE);
    assert!(
        out.status_line().ends_with(STILL_RUNNING),
        "{:?}",
        out.status_line()
    );
    assert!(!out.stdout.contains("computed 1"), "{:?}", out.stdout);
    assert!(has_line(&out.stdout, "first"), "the echo: {:?}", out.stdout);
    // A plain step picks up where it left off and waits for the prompt.
    let out = step_settled(&sb, "q", None);
    assert_eq!(last_line(&out.stdout), "computed 1? ", "{:?}", out.stdout);

    // The same short window without the hatch is only the fallback: the
    // kernel says busy, so the step waits for the prompt.
    let (out, took) = timed(
        &sb,
        &[
            "step",
            "--session",
            "q",
            "--timeout",
            "300",
            "--max-wait",
            LONG_CAP,
            "second",
        ],
    );
    assert_kernel_settled(&out, took, "step without --quiet-only");
    assert_eq!(last_line(&out.stdout), "computed 2? ", "{:?}", out.stdout);
    finish(&sb, "q");
}

/// Open the write end of the FIFO the program creates, once it is reading it
/// (non-blocking, so a program that never gets there fails the test instead
/// of hanging it).
fn open_fifo_writer(path: &Path) -> std::fs::File {
    eventually(Duration::from_secs(30), || {
        use rustix::fs::{Mode, OFlags};
        let fd = rustix::fs::open(
            path,
            OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()?;
        Some(std::fs::File::from(fd))
    })
    .expect("the program should open its FIFO for reading")
}

/// Sampled a few times, `pty/status` never says the program waits for input.
fn assert_never_waiting(rpc: &mut Rpc, session: &str) {
    for _ in 0..5 {
        let st = status(rpc, session);
        assert_eq!(st["running"], true, "{st}");
        assert_eq!(st["waitingForInput"], false, "{st}");
        assert!(
            st["activity"]
                .as_str()
                .is_some_and(|a| a.starts_with("busy")),
            "{st}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `pty/wait {"idle": true}` on a program that reads elsewhere: no idle, and
/// no quiet fallback either (the kernel says busy), whatever the window.
fn assert_idle_wait_times_out(rpc: &mut Rpc, session: &str) {
    let r = rpc.ok(
        "pty/wait",
        json!({"session": session, "idle": true, "timeout": 1500}),
    );
    assert_eq!(r["reason"], "timeout", "{r}");
    assert_eq!(r["matched"], false, "{r}");
    let r = rpc.ok(
        "pty/wait",
        json!({"session": session, "idle": true, "quiet": 100, "timeout": 1500}),
    );
    assert_eq!(
        r["reason"], "timeout",
        "a 100 ms fallback must not apply: {r}"
    );
}

#[test]
fn reading_a_pipe_is_not_waiting_for_input() {
    let sb = Sandbox::new("fifo");
    let fifo = sb.work("fifo").join("pipe");
    let fifo_s = fifo.to_str().unwrap();
    let prog = program("read_elsewhere.py");
    // Busy from the start (opening, then reading, the FIFO): `start` gives
    // back control at the cap, saying so.
    let start = sb
        .run(&[
            "start",
            "--session",
            "f",
            "--max-wait",
            "1500",
            "--",
            "python3",
            &prog,
            "fifo",
            fifo_s,
        ])
        .ok();
    start.assert_one_stderr_line(STATUS_LINE);
    assert!(
        start.status_line().ends_with(STILL_RUNNING),
        "{:?}",
        start.stderr
    );
    let mut writer = open_fifo_writer(&fifo);
    let mut rpc = sb.rpc();
    assert_idle_wait_times_out(&mut rpc, "f");
    assert_never_waiting(&mut rpc, "f");
    // Nor does a CLI step with a short fallback return settled.
    let out = sb
        .run(&[
            "step",
            "--session",
            "f",
            "--timeout",
            "200",
            "--max-wait",
            "1500",
        ])
        .ok();
    assert!(
        out.status_line().ends_with(STILL_RUNNING),
        "{:?}",
        out.stderr
    );
    assert!(!out.stdout.contains("after>"), "{:?}", out.stdout);

    // Fed, it prompts, and then it waits for input.
    writer.write_all(b"hello\n").expect("write the FIFO");
    let r = rpc.ok(
        "pty/wait",
        json!({"session": "f", "idle": true, "quiet": 30_000, "timeout": 60_000}),
    );
    assert_eq!(r["reason"], "idle", "{r}");
    let out = step_settled(&sb, "f", None);
    assert!(has_line(&out.stdout, "got hello"), "{:?}", out.stdout);
    assert_eq!(last_line(&out.stdout), "after> ", "{:?}", out.stdout);
    drop(writer);
    finish(&sb, "f");
}

#[test]
fn reading_a_socket_is_not_waiting_for_input() {
    let sb = Sandbox::new("udp");
    let prog = program("read_elsewhere.py");
    let start = sb
        .run(&[
            "start",
            "--session",
            "u",
            "--max-wait",
            "1500",
            "--",
            "python3",
            &prog,
            "udp",
        ])
        .ok();
    start.assert_one_stderr_line(STATUS_LINE);
    assert!(
        start.status_line().ends_with(STILL_RUNNING),
        "{:?}",
        start.stderr
    );
    let mut rpc = sb.rpc();
    // The port, from the first line (the start may have come back first).
    let port_re = re(r"listening on port (\d+)");
    let mut seen = start.stdout.clone();
    if !port_re.is_match(&seen) {
        let w = rpc.wait_for("u", "listening on port");
        seen = w["screen"].as_str().unwrap_or("").to_string();
    }
    let port: u16 = port_re.captures(&seen).expect("port")[1].parse().unwrap();
    assert_idle_wait_times_out(&mut rpc, "u");
    assert_never_waiting(&mut rpc, "u");

    let sock = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
    sock.send_to(b"datagram", ("127.0.0.1", port))
        .expect("send");
    let out = step_settled(&sb, "u", None);
    assert!(has_line(&out.stdout, "got datagram"), "{:?}", out.stdout);
    assert_eq!(last_line(&out.stdout), "after> ", "{:?}", out.stdout);
    finish(&sb, "u");
}

#[test]
fn polling_the_terminal_like_top_is_waiting_for_input() {
    let sb = Sandbox::new("select");
    let prog = program("select_stdin.py");
    let start = start_settled(&sb, &sb.root, "t", &[], &["python3", &prog]);
    assert_eq!(start.stdout, "", "it prints nothing");
    let out = step_settled(&sb, "t", Some("ping"));
    assert!(has_line(&out.stdout, "got ping"), "{:?}", out.stdout);
    // Nothing typed, nothing printed: settled all the same.
    let out = step_settled(&sb, "t", None);
    assert_eq!(out.stdout, "");

    let mut rpc = sb.rpc();
    let r = rpc.ok(
        "pty/step",
        json!({"session": "t", "text": "pong", "timeout": 30_000, "maxWait": 60_000}),
    );
    assert_eq!(r["reason"], "idle", "{r}");
    assert!(
        has_line(r["output"].as_str().unwrap_or(""), "got pong"),
        "{r}"
    );
    let r = rpc.ok(
        "pty/wait",
        json!({"session": "t", "idle": true, "quiet": 30_000, "timeout": 60_000}),
    );
    assert_eq!(r["reason"], "idle", "{r}");
    // One probe is one instant: it may catch the 100 ms wake-up itself.
    let st = eventually(Duration::from_secs(30), || {
        let st = status(&mut rpc, "t");
        (st["waitingForInput"] == true).then_some(st)
    })
    .expect("pty/status should say waitingForInput");
    assert_eq!(st["activity"], "waiting for input", "{st}");
    let out = sb.run(&["status", "--session", "t"]).ok();
    out.assert_one_stderr_line(STATUS_LINE);
    finish(&sb, "t");
}

/// A step that the kernel settled says so on its status line: `still
/// running` is what a step capped by `--max-wait` says. Before a4221321 the
/// status object came from a fresh probe taken after the wait ended, and a
/// program whose helper thread wakes now and then (node after an
/// evaluation: about 1 step in 40 of `1 + 41`, 1 in 6 after a 1.5 s
/// computation; this script: about 1 in 50) was met awake by it.
#[test]
fn a_settled_step_says_waiting_for_input() {
    let sb = Sandbox::new("helper");
    // The main thread prompts; a helper thread sleeps 10 ms, spins 10 ms,
    // silently, forever (a GC, a watcher, a metrics thread).
    let script = "import threading, time\n\
                  def helper():\n\
                  \x20   while True:\n\
                  \x20       time.sleep(0.01)\n\
                  \x20       end = time.monotonic() + 0.01\n\
                  \x20       while time.monotonic() < end: pass\n\
                  threading.Thread(target=helper, daemon=True).start()\n\
                  while True:\n\
                  \x20   input('> ')\n";
    start_settled(&sb, &sb.root, "h", &[], &["python3", "-c", script]);
    let mut rpc = sb.rpc();
    // Enough steps that the old race would almost surely have shown (300
    // steps at 1 in 50), bounded in time for a slow machine.
    let until = Instant::now() + Duration::from_secs(20);
    for n in 0..300 {
        if Instant::now() >= until {
            break;
        }
        let r = rpc.ok(
            "pty/step",
            json!({"session": "h", "text": format!("{n}"), "timeout": 30_000, "maxWait": 60_000}),
        );
        assert_eq!(r["reason"], "idle", "step {n}: {r}");
        assert_eq!(
            r["status"]["waitingForInput"], true,
            "step {n} settled (reason idle) but its status says {}",
            r["status"]["activity"]
        );
    }
    finish(&sb, "h");
}

#[test]
fn top_waits_for_input_between_redraws() {
    if !have("top") {
        eprintln!("top is not installed; skipped");
        return;
    }
    let sb = Sandbox::new("top");
    // Redrawing five times a second, and waiting on its terminal in between.
    let start = start_settled(&sb, &sb.root, "top", &[], &["top", "-d", "0.2"]);
    assert!(start.stdout.contains("top - "), "{:?}", start.stdout);
    for _ in 0..3 {
        step_settled(&sb, "top", None);
    }
    let mut rpc = sb.rpc();
    let r = rpc.ok(
        "pty/wait",
        json!({"session": "top", "idle": true, "quiet": 30_000, "timeout": 60_000}),
    );
    assert_eq!(r["reason"], "idle", "{r}");
    // `q` ends it.
    let (out, took) = timed(
        &sb,
        &["step", "--session", "top", "--max-wait", LONG_CAP, "q"],
    );
    out.assert_one_stderr_line(STATUS_LINE);
    assert!(out.status_line().ends_with(", exited]"), "{:?}", out.stderr);
    assert!(took < KERNEL_BOUND, "took {took:?}");
    finish(&sb, "top");
}
