//! Faults (issue 7): clients that leave mid-request, write half lines or
//! never read; programs that exit while written to, leave background
//! processes holding the terminal, or ignore SIGTERM and SIGHUP; and 1000
//! sessions in a row that must leave nothing behind. (A daemon killed with
//! SIGKILL is `lifecycle::a_killed_daemon_does_not_block_the_next_start`.)

mod common;

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::thread;
use std::time::{Duration, Instant};

use common::{eventually, proc_identity, wait_gone, Rpc, Sandbox};
use serde_json::{json, Value};

/// A sandbox whose daemon holds a long-lived session `keep` (so that it
/// does not exit when the others end), and the daemon's pid.
fn daemon(name: &str) -> (Sandbox, i32) {
    let sb = Sandbox::new(name);
    sb.run(&["start", "--session", "keep", "--", "cat"]).ok();
    let pid = sb.daemon_pid().expect("daemon pid");
    (sb, pid)
}

fn count_dir(path: &str) -> usize {
    std::fs::read_dir(path).map_or(0, |d| d.count())
}

/// Open fds, threads, and children in any state (zombies included).
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
struct Footprint {
    fds: usize,
    threads: usize,
    children: usize,
}

fn footprint(pid: i32) -> Footprint {
    let children = std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
                .filter(|p| {
                    std::fs::read_to_string(format!("/proc/{p}/stat"))
                        .ok()
                        .and_then(|t| {
                            let rest = &t[t.rfind(')')? + 1..];
                            rest.split_whitespace().nth(1)?.parse::<i32>().ok()
                        })
                        == Some(pid)
                })
                .count()
        })
        .unwrap_or(0);
    Footprint {
        fds: count_dir(&format!("/proc/{pid}/fd")),
        threads: count_dir(&format!("/proc/{pid}/task")),
        children,
    }
}

/// Wait (bounded) until the daemon is back to `before`; returns what it
/// was last.
/// The daemon's footprint once it has been the same for half a second: the
/// connection a test just used to set things up may still be closing, and a
/// baseline taken with its thread alive would never be seen again.
fn baseline(pid: i32) -> Footprint {
    let mut last = footprint(pid);
    let mut same = 0;
    let _ = eventually(Duration::from_secs(30), || {
        thread::sleep(Duration::from_millis(75));
        let now = footprint(pid);
        same = if now == last { same + 1 } else { 0 };
        last = now;
        (same >= 5).then_some(())
    });
    last
}

fn settles_to(pid: i32, before: Footprint) -> Footprint {
    let mut last = footprint(pid);
    let _ = eventually(Duration::from_secs(30), || {
        last = footprint(pid);
        (last == before).then_some(())
    });
    last
}

fn req(method: &str, params: Value, id: u64) -> String {
    json!({"jsonrpc": "2.0", "method": method, "params": params, "id": id}).to_string() + "\n"
}

#[test]
fn clients_that_leave_mid_request_or_write_half_lines_change_nothing() {
    let (sb, pid) = daemon("half");
    let mut rpc = sb.rpc();
    rpc.ok("pty/list", json!({}));
    drop(rpc);
    let before = baseline(pid);

    // Half a line, then gone.
    for cut in [1, 10, 30] {
        let mut s = UnixStream::connect(sb.socket()).expect("connect");
        let line = req("pty/list", json!({}), 1);
        s.write_all(&line.as_bytes()[..cut]).expect("write");
    }
    // A whole request, gone before the answer: a wait or a step of ten
    // minutes ends when its client hangs up (or the thread and slot would
    // stay taken), and a read's answer meets a closed socket.
    for (method, params) in [
        (
            "pty/wait",
            json!({"session": "keep", "match": "never", "timeout": 600_000}),
        ),
        (
            "pty/step",
            json!({"session": "keep", "quietOnly": true, "timeout": 600_000, "maxWait": 600_000}),
        ),
        ("pty/read", json!({"session": "keep", "history": true})),
    ] {
        let mut s = UnixStream::connect(sb.socket()).expect("connect");
        s.write_all(req(method, params, 2).as_bytes())
            .expect("write");
    }
    // A line split in many writes with pauses is one request.
    let mut s = UnixStream::connect(sb.socket()).expect("connect");
    s.set_read_timeout(Some(common::CALL_LIMIT))
        .expect("timeout");
    let line = req("pty/status", json!({"session": "keep"}), 77);
    for piece in line.as_bytes().chunks(7) {
        s.write_all(piece).expect("write");
        thread::sleep(Duration::from_millis(15));
    }
    let mut r = std::io::BufReader::new(s.try_clone().expect("clone"));
    let mut resp = String::new();
    std::io::BufRead::read_line(&mut r, &mut resp).expect("answer");
    let v: Value = serde_json::from_str(&resp).expect("JSON");
    assert_eq!(
        (v["id"].clone(), v["result"]["running"].clone()),
        (json!(77), json!(true)),
        "{v}"
    );
    drop((s, r));

    assert_eq!(settles_to(pid, before), before, "left something behind");

    // A client that only shut down its sending side still gets its answer.
    let mut s = UnixStream::connect(sb.socket()).expect("connect");
    s.set_read_timeout(Some(common::CALL_LIMIT))
        .expect("timeout");
    let wait = req(
        "pty/wait",
        json!({"session": "keep", "match": "half-closed", "timeout": 60_000}),
        8,
    );
    s.write_all(wait.as_bytes()).expect("write");
    s.shutdown(std::net::Shutdown::Write).expect("shutdown");
    thread::sleep(Duration::from_millis(300));
    sb.rpc().ok(
        "pty/write",
        json!({"session": "keep", "action": {"text": "half-closed\r"}}),
    );
    let mut resp = String::new();
    std::io::Read::read_to_string(&mut s, &mut resp).expect("answer, then EOF");
    let v: Value = serde_json::from_str(resp.trim()).expect("one JSON answer");
    assert_eq!(
        (v["id"].clone(), v["result"]["reason"].clone()),
        (json!(8), json!("matched")),
        "{v}"
    );
    drop(s);
    assert_eq!(settles_to(pid, before), before, "left something behind");
}

#[test]
fn a_client_that_never_reads_blocks_no_one() {
    let (sb, pid) = daemon("noread");
    let mut b = sb.rpc();
    // A big screen makes big answers, so the flood fills the socket soon.
    b.ok(
        "pty/start",
        json!({"session": "big", "argv": ["cat"], "cols": 400, "rows": 200}),
    );
    b.ok(
        "pty/write",
        json!({"session": "big", "action": {"text": "x".repeat(3000) + "\r"}}),
    );
    let before = baseline(pid);

    let mut a = UnixStream::connect(sb.socket()).expect("connect");
    a.set_write_timeout(Some(Duration::from_secs(2)))
        .expect("timeout");
    let flood = thread::spawn(move || {
        let mut sent = 0u64;
        // Until our own writes block: the daemon stopped reading us because
        // its answers to us are stuck.
        while sent < 20_000 {
            let r = req(
                "pty/read",
                json!({"session": "big", "format": "json"}),
                sent,
            );
            if a.write_all(r.as_bytes()).is_err() {
                break;
            }
            sent += 1;
        }
        (a, sent)
    });
    // Meanwhile the same session and another keep working for B.
    let started = Instant::now();
    let mut rounds = 0;
    while !flood.is_finished() || rounds < 20 {
        rounds += 1;
        let word = format!("round{rounds}");
        b.ok(
            "pty/write",
            json!({"session": "big", "action": {"text": format!("{word}\r")}}),
        );
        b.wait_for("big", &word);
        b.ok(
            "pty/write",
            json!({"session": "keep", "action": {"text": format!("{word}\r")}}),
        );
        b.wait_for("keep", &word);
        b.ok("pty/status", json!({"session": "big"}));
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "flood never blocked"
        );
    }
    let (a, sent) = flood.join().expect("flood");
    assert!(
        sent < 20_000,
        "the daemon read every request of a client that reads nothing"
    );
    eprintln!(
        "non-reader sent {sent} requests before its writes blocked; {rounds} rounds of B meanwhile"
    );
    // A new client gets in too.
    sb.rpc().ok("pty/list", json!({}));
    // Once the non-reader leaves, its thread ends.
    drop(a);
    assert_eq!(
        settles_to(pid, before),
        before,
        "the non-reader's thread stayed"
    );
    b.ok("pty/stop", json!({"session": "big", "force": true}));
}

#[test]
fn a_recording_that_cannot_be_written_stalls_no_reader_of_the_screen() {
    let (sb, _pid) = daemon("slowrec");
    let fifo = sb.root.join("stuck.cast");
    let path = fifo.to_str().expect("utf-8 path");
    sb.tool(&sb.root, "mkfifo", &[path]);
    // Holds the fifo open and never reads it: once the pipe is full, every
    // write of the recording blocks, as on a stalled disk.
    let mut holder = std::process::Command::new("sh")
        .args(["-c", "exec 3<\"$0\"; exec sleep 600", path])
        .spawn()
        .expect("spawn the fifo holder");
    let mut rpc = sb.rpc();
    rpc.ok(
        "pty/start",
        json!({"session": "rec", "argv": ["sh", "-c",
            "read x; head -c 400000 /dev/zero | tr '\\0' x; echo; echo done; read y"]}),
    );
    rpc.ok(
        "pty/record",
        json!({"session": "rec", "action": "start", "path": path}),
    );
    rpc.ok(
        "pty/write",
        json!({"session": "rec", "action": {"text": "go\r"}}),
    );
    // The recording is stuck long before the program is done (the pipe
    // holds 64 KiB); the screen, the status and other sessions still answer
    // (bounded: a hang fails the call).
    let screen = eventually(Duration::from_secs(30), || {
        let out = sb.run(&["read", "--session", "rec"]).ok();
        out.stdout.contains("xxxxxxxx").then_some(out.stdout)
    });
    assert!(screen.is_some(), "the output never reached the screen");
    sb.run(&["status", "--session", "rec"]).ok();
    sb.run(&["read", "--session", "keep"]).ok();
    // Input, resizes and stopping the recording do not wait for its file
    // either (the stop says the file does not take writes).
    sb.run(&["send", "--session", "rec", "--text", "z"]).ok();
    sb.run(&["resize", "--session", "rec", "--cols", "90", "--rows", "20"])
        .ok();
    let stop = sb.run(&["record", "stop", "--session", "rec"]);
    assert_ne!(stop.code(), 0, "{stop:?}");
    assert!(stop.stderr.contains("does not take writes"), "{stop:?}");
    // The disk comes back (here: the reader goes away, and the recording's
    // writes fail): the program runs on to the end, nothing of its output
    // lost to the session.
    let _ = holder.kill();
    let _ = holder.wait();
    rpc.wait_for("rec", "done");
    rpc.ok("pty/stop", json!({"session": "rec", "force": true}));
}

#[test]
fn a_program_that_exits_while_written_to_fails_the_write_cleanly() {
    let (sb, pid) = daemon("eio");
    let mut rpc = sb.rpc();
    for i in 0..5 {
        let name = format!("w{i}");
        // Reads a little, then exits with most of the write still unread.
        rpc.ok(
            "pty/start",
            json!({"session": name, "argv": ["sh", "-c", "stty raw -echo; head -c 100 >/dev/null; exit 4"]}),
        );
        let t = Instant::now();
        let resp = rpc.call(
            "pty/write",
            json!({"session": name, "action": {"text": "y".repeat(1 << 20)}}),
        );
        // Not the 10 s given to a program that is alive but not reading.
        assert!(
            t.elapsed() < Duration::from_secs(9),
            "{:?}: {resp}",
            t.elapsed()
        );
        match (resp.get("result"), resp.get("error")) {
            // The kernel may have taken it all before the end.
            (Some(r), None) => assert_eq!(r["written"], 1 << 20, "{resp}"),
            (None, Some(e)) => {
                assert_eq!(e["code"], -32000, "{resp}");
                let m = e["message"].as_str().unwrap_or("");
                assert!(m.contains("closed") || m.contains("exited"), "{resp}");
            }
            _ => panic!("{resp}"),
        }
        let w = rpc.ok(
            "pty/wait",
            json!({"session": name, "exit": true, "timeout": 30_000}),
        );
        assert_eq!(w["reason"], "exited", "{w}");
        // Writing to the exited program is an error that says so.
        let e = rpc.err(
            "pty/write",
            json!({"session": name, "action": {"text": "late"}}),
        );
        assert!(
            e["message"].as_str().unwrap_or("").contains("exited"),
            "{e}"
        );
        assert_eq!(
            rpc.ok("pty/status", json!({"session": name}))["exitCode"],
            4
        );
        rpc.ok("pty/stop", json!({"session": name}));
    }
    assert_eq!(sb.daemon_pid(), Some(pid));
}

/// A signal mask (`SigIgn:`, `SigBlk:`) from the text of a /proc status file.
fn mask_in(status: &str, field: &str) -> u64 {
    let mask = status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .expect("mask");
    u64::from_str_radix(mask.trim(), 16).expect("hex")
}

fn status_of(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status")
}

fn sig_ign(pid: i32) -> u64 {
    mask_in(&status_of(pid), "SigIgn:")
}

/// Does SIGPIPE leave every thread of `pid` alone: ignored by the process,
/// or blocked in each of its threads (main.rs blocks it on glibc)?
fn sigpipe_harmless(pid: i32) -> bool {
    if sig_ign(pid) & SIGPIPE_BIT != 0 {
        return true;
    }
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("tasks");
    tasks.flatten().all(|t| {
        match std::fs::read_to_string(t.path().join("status")) {
            Ok(status) => mask_in(&status, "SigBlk:") & SIGPIPE_BIT != 0,
            // A thread that ended since the listing has nothing to check.
            Err(_) => true,
        }
    })
}

const SIGPIPE_BIT: u64 = 1 << (13 - 1);

#[test]
fn sigpipe_cannot_end_the_daemon_but_programs_get_it_back() {
    let (sb, pid) = daemon("sigpipe");
    assert!(sigpipe_harmless(pid), "SIGPIPE can end the daemon");
    let mut rpc = sb.rpc();
    let child = rpc.ok("pty/status", json!({"session": "keep"}))["pid"]
        .as_i64()
        .expect("pid") as i32;
    assert_eq!(sig_ign(child) & SIGPIPE_BIT, 0, "programs get SIGPIPE back");
    assert_eq!(
        mask_in(&status_of(child), "SigBlk:"),
        0,
        "programs start with no signal blocked"
    );
    // Answers that meet a closed socket (EPIPE) hurt nothing.
    for i in 0..50 {
        let mut s = UnixStream::connect(sb.socket()).expect("connect");
        s.write_all(
            req(
                "pty/read",
                json!({"session": "keep", "history": true, "format": "json"}),
                i,
            )
            .as_bytes(),
        )
        .expect("write");
        s.shutdown(std::net::Shutdown::Both).expect("shutdown");
    }
    rpc.ok("pty/status", json!({"session": "keep"}));
    assert_eq!(sb.daemon_pid(), Some(pid));
    assert_ne!(common::proc_state(pid), Some('Z'));
}

/// The `bg=PID` a program printed.
fn bg_pid(rpc: &mut Rpc, session: &str) -> i32 {
    let r = rpc.wait_for(session, "bg=");
    let screen = r["screen"].as_str().expect("screen");
    common::re(r"bg=(\d+)")
        .captures(screen)
        .and_then(|c| c[1].parse().ok())
        .unwrap_or_else(|| panic!("no bg= in {screen:?}"))
}

#[test]
fn a_background_process_holding_the_terminal_does_not_hold_up_exit_or_stop() {
    let (sb, pid) = daemon("bgholder");
    let mut rpc = sb.rpc();
    rpc.ok("pty/list", json!({}));
    let before = baseline(pid);
    // Same session (found and killed by stop), and a setsid'd one that
    // left the session but still holds the terminal open.
    for (name, script) in [
        (
            "same",
            r#"(trap "" HUP; exec sleep 120) & echo bg=$!; exit 3"#,
        ),
        (
            "away",
            r#"setsid sleep 120 & echo bg=$!; sleep 0.2; exit 3"#,
        ),
    ] {
        rpc.ok(
            "pty/start",
            json!({"session": name, "argv": ["sh", "-c", script]}),
        );
        let bg = bg_pid(&mut rpc, name);
        let bg_id = proc_identity(bg).expect("bg alive");
        let w = rpc.ok(
            "pty/wait",
            json!({"session": name, "exit": true, "timeout": 30_000}),
        );
        assert_eq!(w["reason"], "exited", "{name}: {w}");
        let st = rpc.ok("pty/status", json!({"session": name}));
        assert_eq!(
            (st["running"].clone(), st["exitCode"].clone()),
            (json!(false), json!(3)),
            "{st}"
        );
        assert!(
            common::still_there(bg, bg_id).is_some(),
            "{name}: bg still holds the pty"
        );
        let stop = rpc.ok("pty/stop", json!({"session": name}));
        assert_eq!(stop["exitCode"], 3, "{stop}");
        if name == "same" {
            assert_eq!(
                wait_gone(bg, bg_id, true),
                None,
                "stop ends the session's stragglers"
            );
        } else {
            // Not ours any more (another session); the sandbox reaps it.
            common::kill(bg, 9);
        }
    }
    assert_eq!(settles_to(pid, before), before, "left something behind");
}

#[test]
fn a_program_that_ignores_sigterm_and_sighup_is_killed_by_stop() {
    let (sb, _pid) = daemon("stubborn");
    let mut rpc = sb.rpc();
    let script = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nsignal.signal(signal.SIGHUP, signal.SIG_IGN)\nprint('ignoring', flush=True)\nwhile True: time.sleep(1)\n";
    rpc.ok(
        "pty/start",
        json!({"session": "s", "argv": ["python3", "-c", script]}),
    );
    rpc.wait_for("s", "ignoring");
    let child = rpc.ok("pty/status", json!({"session": "s"}))["pid"]
        .as_i64()
        .expect("pid") as i32;
    let id = proc_identity(child).expect("alive");
    // TERM, then HUP, then KILL: with both ignored, waiting out the grace
    // periods would change nothing, so the KILL comes at once.
    let stop = rpc.ok("pty/stop", json!({"session": "s"}));
    assert_eq!(stop["signal"], 9, "{stop}");
    assert_eq!(wait_gone(child, id, false), None);
}

#[test]
fn a_thousand_sessions_in_a_row_leave_nothing_behind() {
    let (sb, pid) = daemon("thousand");
    let mut rpc = sb.rpc();
    // Warm up once so that lazily created things exist before counting.
    rpc.ok("pty/start", json!({"session": "w", "argv": ["true"]}));
    rpc.ok(
        "pty/wait",
        json!({"session": "w", "exit": true, "timeout": 30_000}),
    );
    rpc.ok("pty/stop", json!({"session": "w"}));
    let before = baseline(pid);
    let ptys_before = std::fs::read_to_string("/proc/sys/kernel/pty/nr").unwrap_or_default();
    let t = Instant::now();
    for i in 0..1000 {
        let name = format!("n{}", i % 7);
        if i % 2 == 0 {
            // Exits by itself; stopped after.
            rpc.ok("pty/start", json!({"session": name, "argv": ["true"]}));
            rpc.ok(
                "pty/wait",
                json!({"session": name, "exit": true, "timeout": 30_000}),
            );
            rpc.ok("pty/stop", json!({"session": name}));
        } else {
            rpc.ok("pty/start", json!({"session": name, "argv": ["cat"]}));
            rpc.ok("pty/stop", json!({"session": name, "force": true}));
        }
    }
    let after = settles_to(pid, before);
    eprintln!(
        "1000 sessions in {:?}; before {before:?}, after {after:?}; /proc/sys/kernel/pty/nr {} -> {}",
        t.elapsed(),
        ptys_before.trim(),
        std::fs::read_to_string("/proc/sys/kernel/pty/nr").unwrap_or_default().trim()
    );
    assert_eq!(after, before, "fds, threads or children left behind");
    let fds: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .map(|p| p.display().to_string())
                .collect()
        })
        .unwrap_or_default();
    let ptmx = fds.iter().filter(|f| f.contains("ptmx")).count();
    assert_eq!(ptmx, 1, "only `keep`'s PTY is open: {fds:?}");
}

#[test]
fn a_step_whose_client_leaves_while_in_line_types_nothing() {
    let (mut sb, _pid) = daemon("steptturn");
    sb.run(&["start", "--session", "b", "--", "bash", "--norc"])
        .ok();
    let marker = sb.root.join("queued");
    // The first step holds the session's turn for a while.
    let first = sb.spawn(&["step", "--session", "b", "--max-wait", "60000", "sleep 8"]);
    let sleeping = eventually(Duration::from_secs(30), || {
        sb.processes().into_iter().find(|p| {
            std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == "sleep")
        })
    });
    assert!(sleeping.is_some(), "the first step never started its sleep");
    // The second waits in line; its caller gives up.
    let line = format!("echo queued > {}", marker.display());
    let second = sb.spawn(&["step", "--session", "b", "--max-wait", "60000", &line]);
    thread::sleep(Duration::from_millis(500));
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_raw(sb.child_pid(second)).expect("pid"),
        rustix::process::Signal::KILL,
    );
    sb.wait_child(second, Duration::from_secs(30));
    assert!(
        sb.wait_child(first, Duration::from_secs(60)).is_some(),
        "the first step never ended"
    );
    // Nothing of the second step reached the shell.
    let out = sb.run(&["step", "--session", "b", "echo after"]).ok();
    assert!(out.stdout.contains("after"), "{out:?}");
    assert!(!marker.exists(), "the abandoned step's text was typed");
    sb.run(&["kill-session", "--session", "b"]).ok();
}

/// Writers queued behind one that timed out on a program that reads
/// nothing fail at once, saying so, instead of each waiting a timeout of
/// its own; once the program reads again, writes go through.
#[test]
fn writes_queued_behind_a_stalled_one_fail_at_once_and_recover() {
    let (sb, pid) = daemon("stalled");
    let go = sb.work("stall").join("go");
    let script = format!(
        "import os, sys, time, tty\n\
         tty.setraw(0)\n\
         print('RAW', flush=True)\n\
         while not os.path.exists({go:?}):\n    time.sleep(0.05)\n\
         while True:\n    os.read(0, 65536)\n"
    );
    let mut rpc = sb.rpc();
    rpc.ok(
        "pty/start",
        json!({"session": "st", "argv": ["python3", "-c", script]}),
    );
    rpc.wait_for("st", "RAW");
    // Three writers at once, each on its own connection.
    let writers: Vec<_> = (0..3)
        .map(|_| {
            let mut c = sb.rpc();
            thread::spawn(move || {
                c.call(
                    "pty/write",
                    json!({"session": "st", "action": {"text": "z".repeat(1 << 20)}}),
                )
            })
        })
        .collect();
    let answers: Vec<Value> = writers
        .into_iter()
        .map(|t| t.join().expect("writer"))
        .collect();
    let messages: Vec<&str> = answers
        .iter()
        .map(|a| a["error"]["message"].as_str().unwrap_or(""))
        .collect();
    let timed_out = messages
        .iter()
        .filter(|m| m.contains("has not read its input for"))
        .count();
    let queued = messages
        .iter()
        .filter(|m| m.contains("since an earlier write timed out"))
        .count();
    assert_eq!((timed_out, queued), (1, 2), "{answers:?}");
    // The program reads again: the next write goes through.
    std::fs::write(&go, "").expect("go");
    let ok = eventually(Duration::from_secs(20), || {
        let r = rpc.call(
            "pty/write",
            json!({"session": "st", "action": {"text": "a"}}),
        );
        r.get("result").map(|_| ())
    });
    assert!(ok.is_some(), "writes never recovered");
    assert_eq!(sb.daemon_pid(), Some(pid));
}
