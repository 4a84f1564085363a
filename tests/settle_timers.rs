//! Issue 14, timers and background work, through the binary: a silent chain
//! of awaits is not the answer (node, asyncio), output that arrives while a
//! timer is being let run out ends the wait, a full-screen program that
//! redraws on a timer or sleeps between frames (`watch`) is settled once its
//! frame is drawn, and background work (a script's `sleep 1000 &`, a helper
//! thread computing, a game loop sleeping between keyboard polls) does not
//! hold a step. Programs are in tests/programs/tm_*.
//!
//! No durations are asserted. Every call must end settled (`--json`'s
//! `reason` is `idle`, not `timeout` at the cap, nor the 30 s fallback).
//! Where a wait must not end early, the cap is far away (60 s) and the
//! answer must be in the output; where it must not wait needlessly, the cap
//! is set below the program's own timer (or it never blocks at all).
#![cfg(target_os = "linux")]

mod common;

use std::path::Path;
use std::time::Duration;

use common::{eventually, Sandbox, STOP_LINE};
use serde_json::Value;

const LONG_QUIET: &str = "30000";
const LONG_CAP: &str = "60000";

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

/// What a settled call printed.
struct Answer {
    stdout: String,
}

/// Run a `--json` call; it must have ended settled (reason `idle`), with
/// the program waiting for input.
fn settled(sb: &Sandbox, args: &[&str], what: &str) -> Answer {
    let out = sb.run(args).ok();
    let v: Value = serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {:?}", out.stdout));
    assert_eq!(
        v["reason"], "idle",
        "{what}: should end settled, not at its cap: {v}"
    );
    assert_eq!(v["status"]["waitingForInput"], true, "{what}: {v}");
    let stdout = v["output"].as_str().unwrap_or_default().to_string();
    Answer { stdout }
}

/// `start` with a 30 s fallback and the cap `cap` (ms).
fn start(sb: &Sandbox, session: &str, cap: &str, argv: &[&str]) -> Answer {
    let mut args = vec![
        "start",
        "--session",
        session,
        "--json",
        "--timeout",
        LONG_QUIET,
        "--max-wait",
        cap,
        "--",
    ];
    args.extend(argv);
    settled(sb, &args, &format!("start {argv:?}"))
}

/// `step TEXT` with a 30 s fallback and the cap `cap` (ms).
fn step(sb: &Sandbox, session: &str, cap: &str, text: &str) -> Answer {
    let args = [
        "step",
        "--session",
        session,
        "--json",
        "--timeout",
        LONG_QUIET,
        "--max-wait",
        cap,
        text,
    ];
    settled(sb, &args, &format!("step {text:?}"))
}

fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
}

fn has_line(text: &str, want: &str) -> bool {
    text.lines().any(|l| l.trim() == want)
}

/// End the session and check that nothing it started is left.
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
        "processes left behind: {:?}",
        sb.processes()
    );
}

// ---------------------------------------------------------------------------
// Chains of timers: not the answer.

/// node's REPL idles blocked on the terminal; `await sleep(400)` six times
/// re-arms the same timeout six times (2.4 s, past the 2 s horizon), which
/// used to pass for an idle periodic poll at the second. Also three of
/// 500 ms and one of 3 s.
#[test]
fn node_await_chains_run_to_their_end() {
    if !have("node") {
        eprintln!("node is not installed; skipped");
        return;
    }
    let sb = Sandbox::new("tmnode");
    start(&sb, "n", LONG_CAP, &["node"]);
    step(
        &sb,
        "n",
        LONG_CAP,
        "const sleep = ms => new Promise(r => setTimeout(r, ms))",
    );
    for (code, answer) in [
        (
            "for (let i = 0; i < 6; i++) await sleep(400); 'six'",
            "'six'",
        ),
        (
            "for (let i = 0; i < 3; i++) await sleep(500); 'three'",
            "'three'",
        ),
        ("await sleep(3000); 'long'", "'long'"),
    ] {
        let out = step(&sb, "n", LONG_CAP, code);
        assert!(has_line(&out.stdout, answer), "{code}: {:?}", out.stdout);
        assert_eq!(last_line(&out.stdout), "> ", "{code}: {:?}", out.stdout);
    }
    finish(&sb, "n");
}

/// The same chain in Python's asyncio, the terminal in its epoll set.
#[test]
fn an_asyncio_chain_of_awaits_runs_to_its_end() {
    let sb = Sandbox::new("tmasyncio");
    let prog = program("tm_asyncio_chain.py");
    let out = start(&sb, "a", LONG_CAP, &["python3", &prog]);
    assert_eq!(last_line(&out.stdout), "go? ", "{:?}", out.stdout);
    for word in ["one", "two"] {
        let out = step(&sb, "a", LONG_CAP, word);
        assert!(
            has_line(&out.stdout, &format!("chained {word}")),
            "{:?}",
            out.stdout
        );
        assert_eq!(last_line(&out.stdout), "go? ", "{:?}", out.stdout);
    }
    finish(&sb, "a");
}

// ---------------------------------------------------------------------------
// Timers that must not make a step wait.

/// `select([tty, pipe], 1.9 s)` answered through the pipe at 0.2 s: the
/// answer and the next question end the step, long before the timer would
/// have run out (the cap, 1.5 s, is shorter than it).
#[test]
fn output_while_a_timer_runs_ends_the_wait() {
    let sb = Sandbox::new("tmselect");
    let prog = program("tm_select_pipe.py");
    let out = start(&sb, "s", LONG_CAP, &["python3", &prog]);
    assert_eq!(last_line(&out.stdout), "ask? ", "{:?}", out.stdout);
    let out = step(&sb, "s", "1500", "q");
    assert!(
        has_line(&out.stdout, "answer: forty-two"),
        "{:?}",
        out.stdout
    );
    assert_eq!(last_line(&out.stdout), "next? ", "{:?}", out.stdout);
    finish(&sb, "s");
}

/// While a step lets a silent chain of timers run out, `status` says so
/// (`timer:`); the step ends once the program answers the next line.
#[test]
fn status_says_timer_while_a_step_lets_a_timer_run_out() {
    let sb = Sandbox::new("tmstatus");
    let prog = program("tm_timer_status.py");
    let out = start(&sb, "s", LONG_CAP, &["python3", &prog]);
    assert_eq!(last_line(&out.stdout), "go? ", "{:?}", out.stdout);
    std::thread::scope(|scope| {
        let stepping = scope.spawn(|| step(&sb, "s", LONG_CAP, "go"));
        let activity = eventually(Duration::from_secs(30), || {
            let out = sb.run(&["status", "--session", "s"]).ok();
            out.stdout.starts_with("timer:").then_some(out.stdout)
        });
        let activity = activity.expect("status never said timer: during the step");
        assert!(activity.contains("1000 ms"), "{activity:?}");
        sb.run(&["send", "--session", "s", "now", "--enter"]).ok();
        let out = stepping.join().expect("the step");
        assert!(has_line(&out.stdout, "got now"), "{:?}", out.stdout);
        assert_eq!(last_line(&out.stdout), "again? ", "{:?}", out.stdout);
    });
    // No wait in progress: one look sees it waiting.
    let out = sb.run(&["status", "--session", "s"]).ok();
    assert!(
        out.stdout.starts_with("waiting for input"),
        "{:?}",
        out.stdout
    );
    finish(&sb, "s");
}

/// A curses program waiting for a key with a 2 s timeout and redrawing
/// after each: it has drawn its frame, so `start` and a key's step settle
/// before the 1.5 s cap, not when the timer runs out.
#[test]
fn a_full_screen_repainter_settles_once_its_frame_is_drawn() {
    let sb = Sandbox::new("tmticker");
    let prog = program("tm_ticker.py");
    let out = start(&sb, "t", "1500", &["python3", &prog]);
    assert!(out.stdout.contains("press q to quit"), "{:?}", out.stdout);
    for key in ["x", "y"] {
        let out = step(&sb, "t", "1500", key);
        assert!(
            out.stdout.contains(&format!("key {key}")),
            "{:?}",
            out.stdout
        );
    }
    finish(&sb, "t");
}

/// `watch` sleeps between frames (it never waits on the terminal) with the
/// terminal in cbreak mode: settled once its frame is drawn, not at the cap.
#[test]
fn watch_settles_between_frames() {
    if !have("watch") {
        eprintln!("watch is not installed; skipped");
        return;
    }
    let sb = Sandbox::new("tmwatch");
    let out = start(&sb, "w", "3000", &["watch", "-n1", "echo", "tick"]);
    assert!(out.stdout.contains("tick"), "{:?}", out.stdout);
    finish(&sb, "w");
}

/// A game loop polls its keyboard without blocking and sleeps 50 ms: it
/// waits for a key once its output is quiet.
#[test]
fn a_loop_polling_the_keyboard_between_sleeps_waits_for_a_key() {
    let sb = Sandbox::new("tmkeys");
    let prog = program("tm_keypoll.py");
    let out = start(&sb, "k", "3000", &["python3", &prog]);
    assert!(
        has_line(&out.stdout, "press keys, q quits"),
        "{:?}",
        out.stdout
    );
    let out = step(&sb, "k", "3000", "x");
    assert!(has_line(&out.stdout, "key x"), "{:?}", out.stdout);
    finish(&sb, "k");
}

// ---------------------------------------------------------------------------
// Background work.

/// A script without job control leaves `sleep 1000` in its own process
/// group and reads the terminal: the sleeping job does not hold the steps.
#[test]
fn a_background_job_in_the_foreground_group_does_not_hold_a_step() {
    let sb = Sandbox::new("tmbg");
    let script = "sleep 1000 & read -p 'ok? ' x; echo \"got $x\"; read -p 'again? ' y";
    let out = start(&sb, "b", "3000", &["bash", "--norc", "-c", script]);
    assert_eq!(last_line(&out.stdout), "ok? ", "{:?}", out.stdout);
    let out = step(&sb, "b", "3000", "yes");
    assert!(has_line(&out.stdout, "got yes"), "{:?}", out.stdout);
    assert_eq!(last_line(&out.stdout), "again? ", "{:?}", out.stdout);
    finish(&sb, "b");
}

/// A helper thread computes for ever while the main thread reads the
/// terminal: the program waits for its user.
#[test]
fn a_helper_thread_computing_does_not_hold_a_step() {
    let sb = Sandbox::new("tmhelper");
    let prog = program("tm_helper_compute.py");
    let out = start(&sb, "h", "3000", &["python3", &prog]);
    assert_eq!(last_line(&out.stdout), "name? ", "{:?}", out.stdout);
    let out = step(&sb, "h", "3000", "bob");
    assert!(has_line(&out.stdout, "hello bob"), "{:?}", out.stdout);
    assert_eq!(last_line(&out.stdout), "name? ", "{:?}", out.stdout);
    finish(&sb, "h");
}
