//! How processes begin and end: the per-user daemon (started by the first
//! call, outliving its client, replaced when killed), and `stop` and
//! `kill-session` taking a program's whole process group with it, leaving no
//! zombie behind.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use common::{eventually, lines, proc_identity, re, wait_gone, Sandbox, STATUS_LINE, STOP_LINE};
use serde_json::Value;

fn mode(p: &std::path::Path) -> u32 {
    std::fs::symlink_metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

fn cmdline(pid: i32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

fn status_json(sb: &Sandbox, session: &str) -> Value {
    let out = sb.run(&["status", "--session", session, "--json"]).ok();
    serde_json::from_str(out.stdout.trim()).expect("status --json")
}

/// `(state, session id)` from /proc/PID/stat.
fn state_and_sid(pid: i32) -> Option<(char, i32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let f: Vec<&str> = text[text.rfind(')')? + 1..].split_whitespace().collect();
    Some((f[0].chars().next()?, f[3].parse().ok()?))
}

#[test]
fn the_first_call_starts_a_private_daemon_that_outlives_its_client() {
    let sb = Sandbox::new("daemon");
    assert!(!sb.runtime().exists());
    sb.run(&["start", "--", "cat"]).ok();

    assert_eq!(mode(&sb.runtime()), 0o700);
    assert_eq!(mode(&sb.socket()), 0o600);
    assert_eq!(mode(&sb.log()), 0o600);
    let pid = sb.daemon_pid().expect("the daemon logs its pid");
    assert_eq!(
        cmdline(pid),
        [common::BIN.to_string(), "daemon".to_string()]
    );
    // Detached: the leader of a session of its own, alive after `start` left.
    let (state, sid) = state_and_sid(pid).expect("daemon alive");
    assert_ne!(state, 'Z');
    assert_eq!(sid, pid, "the daemon runs in its own session");

    // Later calls reach the same daemon and session.
    let out = sb.run(&["step", "still there"]).ok();
    assert!(lines(&out.stdout).contains(&"still there"), "{out:?}");
    assert_eq!(sb.daemon_pid(), Some(pid));
    let log = std::fs::read_to_string(sb.log()).expect("log");
    assert_eq!(log.matches("listening on").count(), 1, "one daemon: {log}");

    // With its last session gone it stays warm: the next start is served by
    // the same daemon (see the next test for when it exits).
    sb.run(&["stop"]).ok();
    let none = sb.run(&["status"]);
    assert_eq!(none.code(), 1);
    none.assert_one_stderr_line(r#"^\[ptybroker: no session "default" \(start one first\)\]$"#);
    sb.run(&["start", "--", "cat"]).ok();
    assert_eq!(sb.daemon_pid(), Some(pid));
    sb.run(&["stop"]).ok();
}

#[test]
fn an_idle_daemon_exits_once_its_last_session_and_client_are_gone() {
    // `--idle-exit` shortens the default wait (limits::DAEMON_IDLE_EXIT).
    let mut sb = Sandbox::new("idle");
    let i = sb.spawn(&["daemon", "--idle-exit", "1"]);
    let up = eventually(Duration::from_secs(30), || {
        std::os::unix::net::UnixStream::connect(sb.socket()).ok()
    });
    assert!(up.is_some(), "the daemon listens");
    drop(up);
    sb.run(&["start", "--", "cat"]).ok();
    let cat = status_json(&sb, "default")["pid"].as_i64().expect("pid") as i32;
    let ppid = std::fs::read_to_string(format!("/proc/{cat}/stat"))
        .ok()
        .and_then(|t| {
            let rest = t[t.rfind(')')? + 1..].to_string();
            rest.split_ascii_whitespace().nth(1)?.parse::<i32>().ok()
        });
    assert_eq!(ppid, Some(sb.child_pid(i)), "the CLI uses that daemon");
    // A connected client keeps it, as a session does.
    let mut c = sb.rpc();
    sb.run(&["stop"]).ok();
    assert_eq!(
        c.ok("pty/list", serde_json::json!({}))["sessions"],
        serde_json::json!([])
    );
    assert_eq!(sb.child_exited(i), None);
    drop(c);
    let st = sb
        .wait_child(i, Duration::from_secs(30))
        .expect("the idle daemon exits");
    assert!(st.success(), "{st}");
    assert!(!sb.socket().exists(), "socket removed");
    let none = sb.run(&["status"]);
    assert_eq!(none.code(), 1);
    assert!(none.stderr.contains("no daemon is running"), "{none:?}");
}

#[test]
fn a_killed_daemon_does_not_block_the_next_start() {
    let sb = Sandbox::new("killed");
    sb.run(&["start", "--session", "old", "--", "cat"]).ok();
    let daemon = sb.daemon_pid().expect("daemon pid");
    let old_child = status_json(&sb, "old")["pid"].as_i64().expect("pid") as i32;
    let daemon_id = proc_identity(daemon).expect("daemon");
    let child_id = proc_identity(old_child).expect("child");

    common::kill(daemon, 9);
    assert_eq!(wait_gone(daemon, daemon_id, true), None);
    // Its last threads may close the listening socket a moment after the
    // main one is a zombie; from then on connections are refused.
    let refused =
        eventually(
            Duration::from_secs(30),
            || match std::os::unix::net::UnixStream::connect(sb.socket()) {
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => Some(()),
                _ => None,
            },
        );
    assert!(refused.is_some(), "the dead daemon's socket still accepts");
    assert!(sb.socket().exists(), "kill -9 leaves the socket behind");

    // A call that needs the old session says what happened.
    let gone = sb.run(&["step", "--session", "old", "hello"]);
    assert_eq!(gone.code(), 1, "{gone:?}");
    gone.assert_one_stderr_line(r"^\[ptybroker: the daemon is gone .*\]$");
    // The program lost its terminal with the daemon and ended.
    assert_eq!(
        wait_gone(old_child, child_id, true),
        None,
        "cat outlived the daemon"
    );

    // The next start replaces the stale socket with a new daemon.
    let start = sb.run(&["start", "--session", "new", "--", "cat"]).ok();
    let err: Vec<&str> = start.stderr.lines().collect();
    assert_eq!(err.len(), 2, "{err:?}");
    assert!(
        re(r"^\[ptybroker: the previous daemon had died .*\]$").is_match(err[0]),
        "{err:?}"
    );
    assert!(re(STATUS_LINE).is_match(err[1]), "{err:?}");
    let fresh = sb.daemon_pid().expect("new daemon");
    assert_ne!(fresh, daemon);
    assert_eq!(
        sb.run(&["step", "--session", "new", "again"]).ok().code(),
        0
    );
    let old = sb.run(&["status", "--session", "old"]);
    assert_eq!(old.code(), 1);
    old.assert_one_stderr_line(r#"^\[ptybroker: no session "old" \(start one first\)\]$"#);
    sb.run(&["stop", "--session", "new"]).ok();
}

#[test]
fn a_runtime_directory_open_to_others_is_refused() {
    let sb = Sandbox::new("perm");
    std::fs::create_dir(sb.runtime()).expect("mkdir");
    std::fs::set_permissions(sb.runtime(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = sb.run(&["start", "--", "cat"]);
    assert_eq!(out.code(), 1, "{out:?}");
    out.assert_one_stderr_line(r"^\[ptybroker: .*open to other users.*chmod 700.*\]$");
    assert!(!sb.socket().exists());
}

/// The daemon replaces a stale socket of its own, never a file that is
/// not a socket where its socket belongs.
#[test]
fn the_daemon_refuses_to_replace_a_file_at_its_socket_path() {
    let sb = Sandbox::new("sockfile");
    std::fs::create_dir(sb.runtime()).expect("mkdir");
    std::fs::set_permissions(sb.runtime(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    std::fs::write(sb.socket(), "precious\n").expect("file");
    let out = sb.run(&["start", "--", "cat"]);
    assert_eq!(out.code(), 1, "{out:?}");
    let log = std::fs::read_to_string(sb.log()).unwrap_or_default();
    let path = sb.socket().display().to_string();
    assert!(
        out.stderr.contains(&path) || log.contains(&path),
        "names {path}: {out:?} {log:?}"
    );
    assert_eq!(
        std::fs::read_to_string(sb.socket()).expect("still a file"),
        "precious\n"
    );
}

/// Start `script` under `sh -c` and return (child pid, background pid) once
/// it has printed `bg=PID`.
fn start_with_background(sb: &Sandbox, session: &str, script: &str) -> (i32, i32) {
    // The shell waits for its job (busy), so `start` would wait its whole
    // --max-wait for it to settle: cap it.
    sb.run(&[
        "start",
        "--session",
        session,
        "--max-wait",
        "1000",
        "--",
        "sh",
        "-c",
        script,
    ])
    .ok();
    sb.run(&[
        "wait",
        "--session",
        session,
        "--screen",
        "--match",
        "bg=",
        "--max-wait",
        "30000",
    ])
    .ok();
    let screen = sb.run(&["read", "--session", session]).ok().stdout;
    let bg = re(r"bg=(\d+)")
        .captures(&screen)
        .and_then(|c| c[1].parse().ok())
        .unwrap_or_else(|| panic!("no bg= on {screen:?}"));
    let child = status_json(sb, session)["pid"].as_i64().expect("pid") as i32;
    (child, bg)
}

/// Wait until `pid` ignores SIGTERM (its SigIgn mask has bit 15), so that a
/// test never signals a process that is still setting itself up.
fn wait_ignoring_term(pid: i32) {
    let ok = eventually(Duration::from_secs(30), || {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let mask = status.lines().find_map(|l| l.strip_prefix("SigIgn:"))?;
        let bits = u64::from_str_radix(mask.trim(), 16).ok()?;
        (bits & (1 << (15 - 1)) != 0).then_some(())
    });
    assert!(ok.is_some(), "pid {pid} never ignored SIGTERM");
}

#[test]
fn stop_kills_a_child_that_ignores_sigterm_with_its_process_group() {
    let sb = Sandbox::new("stubborn");
    let script = r#"trap "" TERM HUP; sleep 1000 & echo "bg=$!"; wait"#;
    let (child, bg) = start_with_background(&sb, "s", script);
    wait_ignoring_term(child);
    wait_ignoring_term(bg);
    let child_id = proc_identity(child).expect("child");
    let bg_id = proc_identity(bg).expect("bg");
    let daemon = sb.daemon_pid().expect("daemon");
    let daemon_id = proc_identity(daemon).expect("daemon alive");

    let stop = sb.run(&["stop", "--session", "s"]).ok();
    stop.assert_one_stderr_line(STOP_LINE);
    assert!(
        stop.stderr
            .contains(", exited: signal: killed, session \"s\" stopped]"),
        "TERM was ignored, so KILL ended it: {:?}",
        stop.stderr
    );
    // The child is reaped by the daemon (no zombie), its background job is dead.
    assert_eq!(
        wait_gone(child, child_id, false),
        None,
        "child left a zombie or lives"
    );
    assert_eq!(
        wait_gone(bg, bg_id, true),
        None,
        "background sleep survived"
    );
    assert!(
        common::still_there(daemon, daemon_id).is_some_and(|s| s != 'Z'),
        "the daemon outlives the session it stopped"
    );
}

#[test]
fn stop_tries_sigterm_before_sigkill() {
    let sb = Sandbox::new("termfirst");
    let log = sb.root.join("signals.log");
    let script = format!(
        r#"import os, signal, subprocess, time
def note(sig, frame):
    with open({log:?}, "a") as f:
        f.write(signal.Signals(sig).name + "\n")
signal.signal(signal.SIGTERM, note)
signal.signal(signal.SIGHUP, note)
bg = subprocess.Popen(["sh", "-c", 'trap "" TERM HUP; exec sleep 1000'], preexec_fn=os.setpgrp)
print("bg=%d" % bg.pid, flush=True)
while True:
    time.sleep(1)
"#
    );
    let path = sb.root.join("stubborn.py");
    std::fs::write(&path, script).expect("script");
    let p = path.to_str().expect("path");
    // The script sleeps in a loop (busy, never reading): cap the settle.
    sb.run(&[
        "start",
        "--session",
        "py",
        "--max-wait",
        "1000",
        "--",
        "python3",
        p,
    ])
    .ok();
    sb.run(&[
        "wait",
        "--session",
        "py",
        "--screen",
        "--match",
        "bg=",
        "--max-wait",
        "30000",
    ])
    .ok();
    let screen = sb.run(&["read", "--session", "py"]).ok().stdout;
    let bg: i32 = re(r"bg=(\d+)")
        .captures(&screen)
        .and_then(|c| c[1].parse().ok())
        .expect("bg pid");
    let child = status_json(&sb, "py")["pid"].as_i64().expect("pid") as i32;
    wait_ignoring_term(bg);
    let (child_id, bg_id) = (
        proc_identity(child).expect("c"),
        proc_identity(bg).expect("b"),
    );

    let stop = sb.run(&["stop", "--session", "py"]).ok();
    assert!(stop.stderr.contains("exited: signal: killed"), "{stop:?}");
    let got = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(lines(&got).contains(&"SIGTERM"), "TERM came first: {got:?}");
    assert_eq!(wait_gone(child, child_id, false), None, "python reaped");
    // Even in a process group of its own, it belonged to the session.
    assert_eq!(
        wait_gone(bg, bg_id, true),
        None,
        "sleep in its own group survived"
    );
}

#[test]
fn kill_session_sends_sigkill_at_once() {
    let sb = Sandbox::new("killnow");
    let log = sb.root.join("signals.log");
    let script = format!(
        r#"trap "echo TERM >> '{}'" TERM; sleep 1000 & echo "bg=$!"; wait; wait"#,
        log.display()
    );
    let (child, bg) = start_with_background(&sb, "k", &script);
    let (child_id, bg_id) = (
        proc_identity(child).expect("c"),
        proc_identity(bg).expect("b"),
    );
    let out = sb.run(&["kill-session", "--session", "k"]).ok();
    out.assert_one_stderr_line(STOP_LINE);
    assert!(out.stderr.contains("exited: signal: killed"), "{out:?}");
    assert_eq!(wait_gone(child, child_id, false), None);
    assert_eq!(wait_gone(bg, bg_id, true), None);
    assert!(!log.exists(), "no SIGTERM before the SIGKILL");
}

#[test]
fn a_program_that_exits_by_itself_is_reaped_at_once() {
    let sb = Sandbox::new("reaped");
    sb.run(&[
        "start",
        "--session",
        "t",
        "--",
        "sh",
        "-c",
        "echo bye; exit 4",
    ])
    .ok();
    let w = sb
        .run(&["wait", "--session", "t", "--max-wait", "30000"])
        .ok();
    assert!(w.status_line().ends_with("exited: exit status 4]"), "{w:?}");
    let st = status_json(&sb, "t");
    assert_eq!(st["running"], false);
    assert_eq!(st["exitCode"], 4);
    let pid = st["pid"].as_i64().expect("pid") as i32;
    // Reaped by the daemon while the session is kept for reading.
    let left = state_and_sid(pid).filter(|&(s, sid)| s == 'Z' || sid == pid);
    assert_eq!(left, None, "child {pid} is a zombie or still there");
    let screen = sb.run(&["read", "--session", "t"]).ok().stdout;
    assert_eq!(screen, "bye\n");
    sb.run(&["stop", "--session", "t"]).ok();
}

#[test]
fn stop_kills_the_group_even_after_the_child_exited_on_sigterm() {
    let sb = Sandbox::new("leftover");
    // The shell dies of SIGTERM; its background job ignores TERM and HUP and
    // no longer holds the terminal, but it is still in the process group.
    let script =
        r#"(trap "" TERM HUP; exec sleep 1000) </dev/null >/dev/null 2>&1 & echo "bg=$!"; wait"#;
    let (child, bg) = start_with_background(&sb, "g", script);
    wait_ignoring_term(bg);
    let (child_id, bg_id) = (
        proc_identity(child).expect("c"),
        proc_identity(bg).expect("b"),
    );
    let pgrp_of_bg = std::fs::read_to_string(format!("/proc/{bg}/stat")).expect("stat");
    assert!(
        pgrp_of_bg.contains(&format!(" {child} {child} ")),
        "same group and session"
    );

    sb.run(&["stop", "--session", "g"]).ok();
    assert_eq!(wait_gone(child, child_id, false), None);
    assert_eq!(
        wait_gone(bg, bg_id, true),
        None,
        "the background sleep of a stopped session is still alive"
    );
}

/// Resumes a stopped process when dropped, so that a failing assertion
/// leaves nothing stopped behind (the sandbox then kills it as usual).
struct Resume(i32);

impl Drop for Resume {
    fn drop(&mut self) {
        common::kill(self.0, 18); // SIGCONT
    }
}

#[test]
fn a_stopped_daemon_gets_an_error_not_a_hang() {
    let sb = Sandbox::new("sigstop");
    sb.run(&["start", "--session", "s", "--", "cat"]).ok();
    let daemon = sb.daemon_pid().expect("daemon pid");
    let resume = Resume(daemon);
    common::kill(daemon, 19); // SIGSTOP
    let stopped = eventually(Duration::from_secs(30), || {
        (common::proc_state(daemon) == Some('T')).then_some(())
    });
    assert!(stopped.is_some(), "the daemon did not stop");
    // Each call gives up with one line that says what is wrong, side by
    // side so that the test waits for the deadline once.
    let calls: [&[&str]; 3] = [
        &["read", "--session", "s"],
        &["list"],
        &["step", "--session", "s", "--max-wait", "1000", "hello"],
    ];
    let outs: Vec<common::Out> = std::thread::scope(|t| {
        let running: Vec<_> = calls.iter().map(|a| t.spawn(|| sb.run(a))).collect();
        running
            .into_iter()
            .map(|h| h.join().expect("call thread"))
            .collect()
    });
    for (args, out) in calls.iter().zip(&outs) {
        assert_eq!(out.code(), 1, "{args:?}: {out:?}");
        assert_eq!(out.stdout, "", "{args:?}");
        out.assert_one_stderr_line(&format!(
            r"^\[ptybroker: the daemon \(pid {daemon}\) did not answer within \S+: it is stopped or hung .*\]$"
        ));
    }
    // Resumed, the same daemon answers again.
    drop(resume);
    sb.run(&["read", "--session", "s"]).ok();
    assert_eq!(sb.daemon_pid(), Some(daemon));
    sb.run(&["stop", "--session", "s"]).ok();
}

/// The parent pid of `pid`, from /proc/PID/stat.
fn ppid(pid: i32) -> Option<i32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    text[text.rfind(')')? + 1..]
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[test]
fn a_runtime_directory_deleted_under_the_daemon_is_put_back() {
    let sb = Sandbox::new("rmdir");
    sb.run(&["start", "--session", "keep", "--", "cat"]).ok();
    let keep = status_json(&sb, "keep")["pid"].as_i64().expect("pid") as i32;
    let daemon = ppid(keep).expect("the daemon is cat's parent");
    for what in [sb.runtime(), sb.socket()] {
        if what.is_dir() {
            std::fs::remove_dir_all(&what).expect("rm -r the runtime directory");
        } else {
            std::fs::remove_file(&what).expect("rm the socket");
        }
        // The daemon notices, and binds its socket again, as privately.
        let back = eventually(Duration::from_secs(30), || {
            std::os::unix::net::UnixStream::connect(sb.socket()).ok()
        });
        assert!(
            back.is_some(),
            "no socket after removing {}",
            what.display()
        );
        drop(back);
        assert_eq!(mode(&sb.runtime()), 0o700);
        assert_eq!(mode(&sb.socket()), 0o600);
        assert_eq!(mode(&sb.log()), 0o600);
        // Its sessions are still there, and a new one goes to it: there is
        // no second daemon.
        let list = sb.run(&["list", "--json"]).ok();
        let list: Value = serde_json::from_str(list.stdout.trim()).expect("list --json");
        assert_eq!(list["sessions"][0]["session"], "keep", "{list}");
        sb.run(&["start", "--session", "more", "--", "cat"]).ok();
        let more = status_json(&sb, "more")["pid"].as_i64().expect("pid") as i32;
        assert_eq!(ppid(more), Some(daemon));
        sb.run(&["stop", "--session", "more"]).ok();
    }
    sb.run(&["stop", "--session", "keep"]).ok();
}

/// Start `python3 SCRIPT` in session `name` and wait for it to print `ready`.
fn start_python(sb: &Sandbox, name: &str, script: &str) -> i32 {
    let path = sb.root.join(format!("{name}.py"));
    std::fs::write(&path, script).expect("script");
    let p = path.to_str().expect("path");
    sb.run(&[
        "start",
        "--session",
        name,
        "--max-wait",
        "1000",
        "--",
        "python3",
        p,
    ])
    .ok();
    sb.run(&[
        "wait",
        "--session",
        name,
        "--screen",
        "--match",
        "ready",
        "--max-wait",
        "30000",
    ])
    .ok();
    status_json(sb, name)["pid"].as_i64().expect("pid") as i32
}

#[test]
fn stop_lets_a_sigterm_handler_run() {
    let sb = Sandbox::new("termhandler");
    let log = sb.root.join("cleanup.log");
    let script = format!(
        r#"import signal, sys, time
def bye(sig, frame):
    with open({log:?}, "w") as f:
        f.write("cleaned up\n")
    sys.exit(7)
signal.signal(signal.SIGTERM, bye)
print("ready", flush=True)
while True:
    time.sleep(1)
"#
    );
    let pid = start_python(&sb, "py", &script);
    let id = proc_identity(pid).expect("python");
    let stop = sb.run(&["stop", "--session", "py"]).ok();
    stop.assert_one_stderr_line(STOP_LINE);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap_or_default(),
        "cleaned up\n",
        "the SIGTERM handler did not run: {stop:?}"
    );
    assert!(stop.stderr.contains("exited: exit status 7"), "{stop:?}");
    assert_eq!(wait_gone(pid, id, false), None);
}

#[test]
fn stop_ends_an_interactive_shell_by_hangup_and_reaches_its_background_job() {
    let sb = Sandbox::new("shellstop");
    let log = sb.root.join("job.log");
    sb.run(&[
        "start",
        "--session",
        "sh",
        "--",
        "bash",
        "--norc",
        "--noprofile",
        "-i",
    ])
    .ok();
    // A background job that cleans up on SIGTERM (and would die silently
    // of a SIGHUP that came first).
    let job = format!(
        "(trap 'echo job-term > {}; exit 0' TERM; while :; do sleep 0.1; done) & echo bg=$!",
        log.display()
    );
    sb.run(&["send", "--session", "sh", "--text", &job, "--enter"])
        .ok();
    sb.run(&[
        "wait",
        "--session",
        "sh",
        "--regex",
        "bg=[0-9]",
        "--max-wait",
        "30000",
    ])
    .ok();
    let shell = status_json(&sb, "sh")["pid"].as_i64().expect("pid") as i32;
    wait_ignoring_term(shell);
    let shell_id = proc_identity(shell).expect("bash");
    let stop = sb.run(&["stop", "--session", "sh"]).ok();
    stop.assert_one_stderr_line(STOP_LINE);
    assert!(
        stop.stderr.contains("exited: signal: hangup"),
        "bash ignores TERM and ends on the HUP that follows, not on KILL: {stop:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap_or_default(),
        "job-term\n",
        "the background job's TERM trap did not run"
    );
    assert_eq!(wait_gone(shell, shell_id, false), None);
}

#[test]
fn a_pending_wait_sees_kill_session() {
    let mut sb = Sandbox::new("waitkilled");
    sb.run(&["start", "--session", "w", "--", "cat"]).ok();
    let daemon = sb.daemon_pid().expect("daemon");
    let i = sb.spawn(&["wait", "--session", "w"]);
    assert!(
        eventually(Duration::from_secs(60), || common::rpc_thread_waiting(
            daemon
        )
        .then_some(()))
        .is_some(),
        "the wait never began"
    );
    sb.run(&["kill-session", "--session", "w"]).ok();
    sb.wait_child(i, common::CALL_LIMIT)
        .expect("wait returns after the kill");
    let err = sb.child_stderr(i);
    assert!(!err.contains("no session"), "{err:?}");
    let last = err.lines().last().unwrap_or("");
    assert!(re(STATUS_LINE).is_match(last), "{err:?}");
    assert!(last.contains("exited: signal: killed"), "{err:?}");
}
