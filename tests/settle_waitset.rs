//! Issue 14 through the binary: the probe reads the whole wait set. A
//! relay (a program waiting on its terminal and on a far side outside its
//! foreground group: tests/programs/ws_relay.py, a real ssh to a loopback
//! sshd) settles on quiet and says `relay`; a program blocked on a file
//! lock (tests/programs/ws_lock.py) is busy and says why. Each step must
//! contain what the far side or the lock brings; before the wait set was
//! read, each came back without it.
#![cfg(target_os = "linux")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{eventually, Sandbox};
use serde_json::{json, Value};

fn program(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/programs")
        .join(name);
    p.to_str().expect("utf-8 path").to_string()
}

fn status(sb: &Sandbox, session: &str) -> Value {
    sb.rpc().ok("pty/status", json!({ "session": session }))
}

/// `step TEXT`, with the default quiet window (so the relay window decides
/// a relay) and a cap far beyond it.
fn step(sb: &Sandbox, session: &str, text: &str) -> String {
    let out = sb
        .run(&["step", "--session", session, "--max-wait", "30000", text])
        .ok();
    out.stdout
}

#[test]
fn a_relay_settles_after_the_far_side_answers() {
    let sb = Sandbox::new("ws-relay");
    for mode in ["select", "poll"] {
        let session = format!("relay-{mode}");
        let py = program("ws_relay.py");
        let start = sb
            .run(&["start", "--session", &session, "--", "python3", &py, mode])
            .ok();
        assert!(start.stdout.contains("relay> "), "{mode}: {start:?}");
        let st = status(&sb, &session);
        let activity = st["activity"].as_str().unwrap_or("");
        assert!(activity.starts_with("relay: "), "{mode}: {st}");
        assert_eq!(st["waitingForInput"], false, "{mode}: {st}");
        // The CLI's `status` says it too.
        let cli = sb.run(&["status", "--session", &session]).ok();
        assert!(cli.stdout.starts_with("relay: "), "{mode}: {cli:?}");
        for word in ["hello", "again"] {
            let out = step(&sb, &session, word);
            let want = format!("far side says {}", word.to_uppercase());
            assert!(
                out.contains(&want),
                "{mode}: the step returned before the far side answered: {out:?}"
            );
        }
        // The JSON-RPC step says what it settled on.
        let r = sb.rpc().ok(
            "pty/step",
            json!({"session": session, "text": "third", "maxWait": 30000}),
        );
        assert!(
            r["output"]
                .as_str()
                .is_some_and(|o| o.contains("far side says THIRD")),
            "{mode}: {r}"
        );
        assert_eq!(r["reason"], "idle", "{mode}: {r}");
        assert!(
            r["status"]["activity"]
                .as_str()
                .is_some_and(|a| a.starts_with("relay: ")),
            "{mode}: {r}"
        );
        sb.run(&["kill-session", "--session", &session]).ok();
    }
}

#[test]
fn a_lock_waiter_is_busy_until_it_has_the_lock() {
    let sb = Sandbox::new("ws-lock");
    for how in ["fcntl", "flock"] {
        let session = format!("lock-{how}");
        let path = sb.work("locks").join(how);
        let path = path.to_str().expect("utf-8 path");
        let py = program("ws_lock.py");
        let start = sb
            .run(&[
                "start",
                "--session",
                &session,
                "--",
                "python3",
                &py,
                how,
                path,
            ])
            .ok();
        assert!(start.stdout.contains("lock> "), "{how}: {start:?}");
        // The step's input makes it ask for the lock: the step ends once it
        // has it and prompts again. Meanwhile `status` says on what it is
        // blocked.
        let (out, busy) = std::thread::scope(|scope| {
            let stepping = scope.spawn(|| step(&sb, &session, ""));
            let mut rpc = sb.rpc();
            let busy = eventually(Duration::from_secs(10), || {
                let st = rpc.ok("pty/status", json!({ "session": session }));
                let a = st["activity"].as_str().unwrap_or("").to_string();
                a.contains(&format!("is blocked on a lock ({how})"))
                    .then_some(a)
            });
            (stepping.join().expect("the step"), busy)
        });
        assert!(
            out.contains("got the lock") && out.contains("locked> "),
            "{how}: the step returned while the program was blocked on the lock: {out:?}"
        );
        assert!(
            busy.is_some(),
            "{how}: status never said it is blocked on the lock"
        );
        sb.run(&["kill-session", "--session", &session]).ok();
    }
}

/// A loopback sshd of the test's own: its host key, config and port, pubkey
/// authentication with a key made for it. Killed on drop.
struct Sshd {
    child: Child,
    dir: PathBuf,
    port: u16,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn sshd(sb: &Sandbox) -> Result<Sshd, String> {
    let sshd = ["/usr/sbin/sshd", "/usr/bin/sshd"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .ok_or("no sshd (install openssh-server)")?;
    let dir = sb.work("sshd");
    let keygen = |name: &str| {
        Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(dir.join(name))
            .status()
            .map_err(|e| format!("ssh-keygen: {e}"))
            .and_then(|s| s.success().then_some(()).ok_or("ssh-keygen failed".into()))
    };
    keygen("host_key")?;
    keygen("user_key")?;
    std::fs::copy(dir.join("user_key.pub"), dir.join("authorized_keys"))
        .map_err(|e| e.to_string())?;
    // Privilege separation wants its empty directory (as root).
    let _ = std::fs::create_dir_all("/run/sshd");
    let port = common::free_port();
    let d = dir.display();
    let config = format!(
        "ListenAddress 127.0.0.1\nPort {port}\nHostKey {d}/host_key\n\
         AuthorizedKeysFile {d}/authorized_keys\nPubkeyAuthentication yes\n\
         PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
         StrictModes no\nPidFile {d}/sshd.pid\nPrintMotd no\nPrintLastLog no\n"
    );
    std::fs::write(dir.join("sshd_config"), config).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(sshd);
    cmd.args(["-D", "-e", "-f"])
        .arg(dir.join("sshd_config"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    sb.env(&mut cmd);
    let child = cmd.spawn().map_err(|e| format!("sshd: {e}"))?;
    let mut sshd = Sshd { child, dir, port };
    let up = eventually(Duration::from_secs(10), || {
        if sshd.child.try_wait().ok().flatten().is_some() {
            return Some(false);
        }
        std::net::TcpStream::connect(("127.0.0.1", port))
            .ok()
            .map(|_| true)
    });
    match up {
        Some(true) => Ok(sshd),
        _ => Err("sshd did not start (not root, or no privilege separation directory)".into()),
    }
}

#[test]
fn ssh_to_a_loopback_sshd_is_a_relay() {
    let sb = Sandbox::new("ws-ssh");
    let sshd = match sshd(&sb) {
        Ok(s) => s,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let key = sshd.dir.join("user_key");
    let port = sshd.port.to_string();
    let key = key.to_str().expect("utf-8 path");
    let argv = [
        "ssh",
        "-tt",
        "-i",
        key,
        "-p",
        &port,
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        "UserKnownHostsFile=/dev/null",
        "-o",
        "BatchMode=yes",
        "-o",
        "LogLevel=ERROR",
        "127.0.0.1",
        "PS1='remote$ ' exec bash --norc -i",
    ];
    let mut args = vec!["start", "--session", "ssh", "--max-wait", "30000", "--"];
    args.extend(argv);
    let start = sb.run(&args).ok();
    let prompt = eventually(Duration::from_secs(20), || {
        let out = step(&sb, "ssh", "");
        (start.stdout.contains("remote$ ") || out.contains("remote$ ")).then_some(())
    });
    assert!(prompt.is_some(), "no remote prompt: {start:?}");
    let st = status(&sb, "ssh");
    assert!(
        st["activity"]
            .as_str()
            .is_some_and(|a| a.starts_with("relay: ") && a.contains("(ssh)")),
        "{st}"
    );
    // A remote command that is silent for a while before it answers.
    let out = step(&sb, "ssh", "sleep 0.7; echo remote-done");
    assert!(
        out.lines().any(|l| l.trim() == "remote-done") && out.contains("remote$ "),
        "the step returned before the remote side answered: {out:?}"
    );
    sb.run(&["kill-session", "--session", "ssh"]).ok();
    drop(sshd);
}
