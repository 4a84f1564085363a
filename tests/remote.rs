//! Remote hosts (issue 17) through the binary against a real sshd on
//! 127.0.0.1 ([`common::Sshd`]): the client verbs, `mcp` and `driver` over
//! `--host`, `PTYBROKER_HOST` and `--via`, each failure on the way there as
//! one line with exit 1, and `install --host`.
//!
//! The remote ptybroker is the test binary run by a wrapper script with a
//! runtime directory of its own (`--remote-bin`), so a test can tell which
//! daemon holds a session: the remote one, never the local one. Every test
//! ends by closing the ssh master it made and checking that no ssh process
//! naming it remains. Skipped, saying why, where sshd or ssh is missing.
#![cfg(target_os = "linux")]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{eventually, kill, run_bounded, write_script, Out, Rpc, Sandbox, Sshd, BIN};
use serde_json::{json, Value};

/// The bound issue 17 puts on a failing remote call: it ends within 15 s.
const FAIL_WITHIN: Duration = Duration::from_secs(15);

/// A sandbox (the local side), a loopback sshd, and the remote side's
/// runtime directory and binary.
struct Remote {
    sb: Sandbox,
    sshd: Sshd,
    /// The remote ptybroker's XDG_RUNTIME_DIR.
    far: PathBuf,
    bin: PathBuf,
}

impl Remote {
    fn new(name: &str) -> Option<Remote> {
        let sb = Sandbox::new(name);
        let sshd = Sshd::start(&sb)?;
        let far = sshd.far.clone();
        let bin = sshd.remote_bin(&sb);
        Some(Remote { sb, sshd, far, bin })
    }

    fn bin(&self) -> &str {
        self.bin.to_str().expect("utf-8 path")
    }

    /// `ptybroker ARGS` here, set for the test's ssh.
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = self.sb.command(args);
        self.sshd.env(&mut cmd);
        cmd
    }

    fn run_env(&self, args: &[&str], env: &[(&str, &str)], limit: Duration) -> Out {
        let mut cmd = self.command(args);
        cmd.envs(env.iter().copied());
        run_bounded(cmd, limit, &format!("ptybroker {args:?}"))
    }

    /// `ptybroker VERB --host box --remote-bin WRAPPER ARGS...`.
    fn on_box(&self, args: &[&str]) -> Out {
        let mut all = args[..1].to_vec();
        all.extend(["--host", "box", "--remote-bin", self.bin()]);
        all.extend(&args[1..]);
        self.run_env(&all, &[], common::CALL_LIMIT)
    }

    /// The remote daemon's socket.
    fn far_socket(&self) -> PathBuf {
        self.far.join("ptybroker/daemon.sock")
    }

    /// The sessions the remote daemon holds.
    fn far_sessions(&self) -> Vec<String> {
        names(&Rpc::unix(&self.far_socket()).ok("pty/list", json!({})))
    }

    /// The sessions the local daemon holds (none when none runs).
    fn near_sessions(&self) -> Vec<String> {
        match Rpc::try_unix(&self.sb.socket()) {
            Ok(mut rpc) => names(&rpc.ok("pty/list", json!({}))),
            Err(_) => vec![],
        }
    }

    /// The remote daemon's pid, from its log.
    fn far_daemon(&self) -> Option<i32> {
        let log = std::fs::read_to_string(self.far.join("ptybroker/daemon.log")).ok()?;
        let r = common::re(r"ptybroker daemon (\d+) listening on");
        r.captures_iter(&log).last().and_then(|c| c[1].parse().ok())
    }

    /// Close the ssh master and check nothing of ssh's stays.
    fn finish(self) {
        let left = self.sshd.close_masters(&self.sb.runtime());
        assert!(left.is_empty(), "ssh processes left behind: {left:?}");
    }
}

fn names(list: &Value) -> Vec<String> {
    list["sessions"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s["session"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

const SHELL: &[&str] = &["--", "env", "PS1=rsh$ ", "bash", "--norc", "--noprofile"];

#[test]
fn the_client_verbs_act_on_the_remote_daemon_over_host() {
    let Some(r) = Remote::new("remote-verbs") else {
        return;
    };
    let mut start = vec!["start", "-s", "sh"];
    start.extend(SHELL);
    r.on_box(&start).ok();
    assert_eq!(r.far_sessions(), ["sh"], "the remote daemon holds it");
    assert!(r.near_sessions().is_empty(), "and the local one does not");

    let out = r.on_box(&["step", "-s", "sh", "echo $((6*7))"]).ok();
    assert!(out.stdout.contains("\n42\n"), "{out:?}");
    r.on_box(&["send", "-s", "sh", "echo sent-$((1+1))", "--key", "Enter"])
        .ok();
    let out = r.on_box(&["wait", "-s", "sh", "--match", "sent-2"]).ok();
    assert_eq!(out.code(), 0, "{out:?}");
    let out = r.on_box(&["read", "-s", "sh", "--screen"]).ok();
    assert!(out.stdout.contains("\nsent-2\n"), "{out:?}");
    let out = r.on_box(&["list"]).ok();
    assert!(out.stdout.contains("sh"), "{out:?}");
    r.on_box(&["stop", "-s", "sh"]).ok();
    assert!(r.far_sessions().is_empty());
    r.finish();
}

#[test]
fn ptybroker_host_and_ssh_urls_name_the_host_too() {
    let Some(r) = Remote::new("remote-env") else {
        return;
    };
    let env = [("PTYBROKER_HOST", "box"), ("PTYBROKER_REMOTE_BIN", r.bin())];
    let mut start = vec!["start", "-s", "env"];
    start.extend(SHELL);
    r.run_env(&start, &env, common::CALL_LIMIT).ok();
    let out = r
        .run_env(
            &["step", "-s", "env", "echo $((40+2))"],
            &env,
            common::CALL_LIMIT,
        )
        .ok();
    assert!(out.stdout.contains("42"), "{out:?}");
    assert_eq!(r.far_sessions(), ["env"]);
    assert!(r.near_sessions().is_empty());

    // The same host by URL: another destination, so another master.
    let url = format!("ssh://{}@127.0.0.1:{}", r.sshd.user, r.sshd.port);
    let out = r
        .run_env(
            &["list", "--host", &url, "--remote-bin", r.bin()],
            &[],
            common::CALL_LIMIT,
        )
        .ok();
    assert!(out.stdout.contains("env"), "{out:?}");
    r.run_env(
        &["stop", "-s", "env", "--host", &url, "--remote-bin", r.bin()],
        &[],
        common::CALL_LIMIT,
    )
    .ok();
    assert!(r.far_sessions().is_empty());
    r.finish();
}

#[test]
fn via_reaches_a_proxy_under_another_runtime_dir() {
    let Some(r) = Remote::new("remote-via") else {
        return;
    };
    let via = format!("{} proxy", r.bin());
    let mut start = vec!["start", "-s", "v", "--via", &via];
    start.extend(SHELL);
    r.run_env(&start, &[], common::CALL_LIMIT).ok();
    let out = r
        .run_env(
            &["step", "-s", "v", "--via", &via, "echo $((7*6))"],
            &[],
            common::CALL_LIMIT,
        )
        .ok();
    assert!(out.stdout.contains("42"), "{out:?}");
    assert_eq!(r.far_sessions(), ["v"]);
    assert!(r.near_sessions().is_empty());
    r.run_env(&["stop", "-s", "v", "--via", &via], &[], common::CALL_LIMIT)
        .ok();
    r.finish();
}

/// A line-by-line conversation with `ptybroker VERB --host box`.
struct Stdio2 {
    child: std::process::Child,
    rx: mpsc::Receiver<Value>,
}

impl Stdio2 {
    fn spawn(r: &Remote, verb: &str) -> Stdio2 {
        let mut cmd = r.command(&[verb, "--host", "box", "--remote-bin", r.bin()]);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().expect("spawn");
        let out = BufReader::new(child.stdout.take().expect("stdout"));
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Stdio2 { child, rx }
    }

    fn send(&mut self, v: Value) {
        let stdin = self.child.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{v}").expect("write");
        stdin.flush().expect("flush");
    }

    fn next(&self) -> Value {
        self.rx
            .recv_timeout(common::CALL_LIMIT)
            .expect("an answer line")
    }

    /// Close its input and wait (bounded) for it to end.
    fn end(mut self) {
        drop(self.child.stdin.take());
        let gone = eventually(common::CALL_LIMIT, || self.child.try_wait().ok().flatten());
        assert!(gone.is_some(), "it did not end when its input did");
    }
}

#[test]
fn mcp_over_host_runs_the_server_there() {
    let Some(r) = Remote::new("remote-mcp") else {
        return;
    };
    let mut c = Stdio2::spawn(&r, "mcp");
    c.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "tests/remote.rs", "version": "1"}}}),
    );
    let init = c.next();
    assert_eq!(init["id"], 1, "{init}");
    assert!(init["result"]["serverInfo"].is_object(), "{init}");
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let call = |c: &mut Stdio2, id: u64, name: &str, args: Value| {
        c.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                      "params": {"name": name, "arguments": args}}));
        let v = c.next();
        assert_eq!(v["id"], id, "{v}");
        assert_ne!(v["result"]["isError"], true, "{name}: {v}");
        v["result"]["structuredContent"].clone()
    };
    let t = call(&mut c, 2, "terminal_start", json!({"shell": "sh"}));
    assert!(t["session_id"].is_string() || t["id"].is_string(), "{t}");
    let run = call(
        &mut c,
        3,
        "terminal_run",
        json!({"command": "echo \"far:$XDG_RUNTIME_DIR\""}),
    );
    assert_eq!(
        run["output"].as_str().map(str::trim_end),
        Some(format!("far:{}", r.far.display()).as_str()),
        "terminal_run ran on the remote side: {run}"
    );
    c.end();
    r.finish();
}

#[test]
fn driver_over_host_runs_the_driver_there() {
    let Some(r) = Remote::new("remote-driver") else {
        return;
    };
    let mut d = Stdio2::spawn(&r, "driver");
    assert_eq!(d.next()["type"], "hello");
    d.send(json!({"id": 1, "method": "status", "sessionId": "none"}));
    let v = d.next();
    assert_eq!((&v["type"], &v["id"]), (&json!("error"), &json!(1)), "{v}");
    d.end();
    r.finish();
}

/// A call that must fail: exit 1 within [`FAIL_WITHIN`], one line on
/// stderr saying `want`.
fn assert_fails(out: &Out, want: &str) {
    assert_eq!(out.code(), 1, "want {want:?}: {out:?}");
    out.assert_one_stderr_line(&format!(r"^\[ptybroker(@\S+)?: .*{want}.*\]$"));
}

#[test]
fn each_way_of_not_reaching_the_host_is_one_line_and_exit_1() {
    let Some(r) = Remote::new("remote-errors") else {
        return;
    };
    let dir = r.sshd.dir.display().to_string();
    r.sshd.write_client_config(&format!(
        "Host nohost\n  HostName nonexistent.invalid\n\
         Host refused\n  HostName 127.0.0.1\n  Port {closed}\n\
         Host stranger\n  HostName 127.0.0.1\n  Port {port}\n  IdentityFile {dir}/stranger_key\n\
         Host unknown\n  HostName 127.0.0.1\n  Port {port}\n  UserKnownHostsFile /dev/null\n",
        closed = common::free_port(),
        port = r.sshd.port,
    ));
    for (host, want) in [
        ("nohost", "cannot resolve nohost"),
        ("refused", "refused refused the connection"),
        ("stranger", "stranger refused the login"),
        ("unknown", "the host key of unknown is unknown"),
    ] {
        let out = r.run_env(
            &["list", "--host", host, "--remote-bin", r.bin()],
            &[],
            FAIL_WITHIN,
        );
        assert_fails(&out, want);
    }
    r.finish();
}

#[test]
fn a_missing_or_old_remote_binary_is_named() {
    let Some(r) = Remote::new("remote-old") else {
        return;
    };
    let old = r.sshd.dir.join("old-ptybroker");
    write_script(
        &old,
        "#!/bin/sh\nread line\n\
         echo '{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"ptybroker\":\"0.0.1\",\"protocol\":0,\"socket\":\"/nowhere\"}}'\n",
    );
    let older = r.sshd.dir.join("older-ptybroker");
    write_script(
        &older,
        "#!/bin/sh\necho \"ptybroker: unknown verb '$1'\" >&2\nexit 2\n",
    );
    for (bin, want) in [
        (
            "/nonexistent",
            "no ptybroker at `/nonexistent` on box: install it",
        ),
        (old.to_str().expect("utf-8"), "too old \\(version 0.0.1"),
        (
            older.to_str().expect("utf-8"),
            "too old \\(it has no `proxy`\\)",
        ),
    ] {
        let out = r.run_env(
            &[
                "start",
                "-s",
                "x",
                "--host",
                "box",
                "--remote-bin",
                bin,
                "--",
                "sh",
            ],
            &[],
            FAIL_WITHIN,
        );
        assert_fails(&out, want);
    }
    r.finish();
}

#[test]
fn a_connection_lost_mid_call_ends_the_call_with_an_error() {
    let Some(r) = Remote::new("remote-lost") else {
        return;
    };
    let mut start = vec!["start", "-s", "w"];
    start.extend(SHELL);
    r.on_box(&start).ok();
    let daemon = r.far_daemon().expect("the remote daemon's pid");
    let bin = r.bin().to_string();
    let mut cmd = r.command(&[
        "wait",
        "-s",
        "w",
        "--match",
        "never-printed",
        "--max-wait",
        "60000",
        "--host",
        "box",
        "--remote-bin",
        &bin,
    ]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let waiting = cmd.spawn().expect("spawn wait");
    let pending = eventually(common::CALL_LIMIT, || {
        common::rpc_thread_waiting(daemon).then_some(())
    });
    assert!(
        pending.is_some(),
        "the wait never reached the remote daemon"
    );
    for p in r.sshd.connections() {
        kill(p, 9);
    }
    let out = wait_output(waiting, FAIL_WITHIN);
    assert_fails(&out, "lost the connection to box");
    // The host is there again for the next call.
    let out = r.on_box(&["list"]).ok();
    assert!(out.stdout.contains('w'), "{out:?}");
    r.finish();
}

#[test]
fn a_remote_daemon_that_has_exited_is_started_again() {
    let Some(r) = Remote::new("remote-retry") else {
        return;
    };
    let mut start = vec!["start", "-s", "a"];
    start.extend(SHELL);
    r.on_box(&start).ok();
    r.on_box(&["stop", "-s", "a"]).ok();
    let daemon = r.far_daemon().expect("the remote daemon's pid");
    let id = common::proc_identity(daemon).expect("it runs");
    kill(daemon, 9);
    assert_eq!(common::wait_gone(daemon, id, true), None, "it died");
    // The master and its forward are still there; the daemon behind them
    // is not.
    let mut start = vec!["start", "-s", "b"];
    start.extend(SHELL);
    r.on_box(&start).ok();
    assert_eq!(r.far_sessions(), ["b"]);
    assert_ne!(r.far_daemon(), Some(daemon), "a new daemon holds it");
    r.on_box(&["stop", "-s", "b"]).ok();
    r.finish();
}

/// What a spawned call printed, once it ends; it fails the test if it
/// has not ended within `limit`.
fn wait_output(mut child: std::process::Child, limit: Duration) -> Out {
    use std::io::Read;
    let mut so = child.stdout.take().expect("stdout");
    let mut se = child.stderr.take().expect("stderr");
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = so.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = se.read_to_string(&mut s);
        s
    });
    let status = eventually(limit, || child.try_wait().ok().flatten());
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the call did not end within {limit:?}");
    };
    Out {
        status,
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
    }
}

#[test]
fn install_copies_a_binary_that_then_serves_as_remote_bin() {
    let Some(r) = Remote::new("remote-install") else {
        return;
    };
    let target = r.sb.work("far-bin").join("sub/ptybroker");
    let target = target.to_str().expect("utf-8 path");
    let out = r
        .run_env(
            &["install", "--host", "box", "--path", target],
            &[],
            common::CALL_LIMIT,
        )
        .ok();
    assert!(
        out.stdout.contains(&format!("at box:{target}"))
            && out.stdout.contains(&format!("--remote-bin {target}")),
        "it says what went where and how to use it: {out:?}"
    );
    let copied = std::fs::read(target).expect("the copy is there");
    assert_eq!(copied, std::fs::read(BIN).expect("the binary"), "{out:?}");
    let mut start = vec!["start", "-s", "i", "--host", "box", "--remote-bin", target];
    start.extend(SHELL);
    r.run_env(&start, &[], common::CALL_LIMIT).ok();
    assert_eq!(r.far_sessions(), ["i"], "the installed binary serves there");
    r.run_env(
        &["stop", "-s", "i", "--host", "box", "--remote-bin", target],
        &[],
        common::CALL_LIMIT,
    )
    .ok();
    // Installing again replaces it in place (the temporary file renamed).
    r.run_env(
        &["install", "--host", "box", "--path", target],
        &[],
        common::CALL_LIMIT,
    )
    .ok();
    let dir = std::path::Path::new(target).parent().expect("dir");
    let left: Vec<_> = std::fs::read_dir(dir)
        .expect("dir")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, ["ptybroker"], "no temporary file stays");
    r.finish();
}

#[test]
fn install_needs_an_explicit_host_and_says_why_it_fails() {
    let Some(r) = Remote::new("remote-install-no") else {
        return;
    };
    let out = r.run_env(&["install"], &[("PTYBROKER_HOST", "box")], FAIL_WITHIN);
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(out.stderr.contains("--host DEST is required"), "{out:?}");
    // A path that cannot be written there: one line, exit 1.
    let out = r.run_env(
        &["install", "--host", "box", "--path", "/proc/nope/ptybroker"],
        &[],
        common::CALL_LIMIT,
    );
    assert_fails(&out, "install: copying to box:/proc/nope/ptybroker failed");
    r.finish();
}

/// The issue's end state: `git add -p` and vim driven on the host with the
/// same verbs as here, and a person watching the remote session from a
/// terminal here (`attach --host`, inside a local session).
#[test]
fn git_add_p_vim_and_attach_work_over_host() {
    let Some(r) = Remote::new("remote-programs") else {
        return;
    };
    // git add -p: keep the first hunk out, stage the second.
    let repo = r.sb.repo_with_two_hunks();
    let git = |args: &[&str]| r.sb.tool(&repo, "git", args).ok();
    let dir = repo.to_str().expect("utf-8 path");
    let out = r
        .on_box(&["start", "-s", "g", "--cwd", dir, "--", "git", "add", "-p"])
        .ok();
    assert!(out.stdout.contains("+two"), "{out:?}");
    let out = r.on_box(&["step", "-s", "g", "n"]).ok();
    assert!(out.stdout.contains("+twenty-eight"), "{out:?}");
    r.on_box(&["step", "-s", "g", "y"]).ok();
    let staged = git(&["diff", "--cached"]).stdout;
    assert!(
        staged.contains("+twenty-eight") && !staged.contains("+two"),
        "{staged}"
    );
    r.on_box(&["stop", "-s", "g"]).ok();

    // vim: an edit typed over ssh lands in the file.
    let file = repo.join("note.txt");
    let path = file.to_str().expect("utf-8 path");
    r.on_box(&[
        "start", "-s", "v", "--", "vim", "-u", "NONE", "-N", "-n", path,
    ])
    .ok();
    r.on_box(&["step", "-s", "v", "--no-enter", "iedited over ssh"])
        .ok();
    r.on_box(&["step", "-s", "v", "--key", "Escape"]).ok();
    r.on_box(&["step", "-s", "v", ":wq"]).ok();
    let written = eventually(Duration::from_secs(10), || {
        std::fs::read_to_string(&file)
            .ok()
            .filter(|t| !t.is_empty())
    });
    assert_eq!(written.as_deref(), Some("edited over ssh\n"));

    // attach --host: a viewer here shows the remote screen and leaves it be.
    let mut start = vec!["start", "-s", "sh"];
    start.extend(SHELL);
    r.on_box(&start).ok();
    r.on_box(&["step", "-s", "sh", "echo attach-$((40+2))"])
        .ok();
    let viewer = r.command(&[
        "start",
        "-s",
        "viewer",
        "--cols",
        "90",
        "--rows",
        "20",
        "--",
        BIN,
        "attach",
        "--host",
        "box",
        "--remote-bin",
        r.bin(),
        "-s",
        "sh",
    ]);
    run_bounded(viewer, common::CALL_LIMIT, "start viewer").ok();
    let shown = eventually(Duration::from_secs(20), || {
        let out = r.sb.run(&["read", "-s", "viewer", "--screen"]);
        (out.stdout.contains("attach-42") && out.stdout.contains("on box")).then_some(out)
    });
    assert!(shown.is_some(), "the viewer never showed the remote screen");
    r.sb.run(&[
        "send", "-s", "viewer", "--key", "Ctrl+\\", "--key", "Ctrl+\\",
    ])
    .ok();
    let left = eventually(Duration::from_secs(10), || {
        let st = r.sb.run(&["status", "-s", "viewer", "--json"]);
        let v: Value = serde_json::from_str(&st.stdout).ok()?;
        (v["running"] == false).then_some(())
    });
    assert!(left.is_some(), "the viewer did not detach");
    let out = r.on_box(&["step", "-s", "sh", "echo still-$((1+1))"]).ok();
    assert!(out.stdout.contains("still-2"), "{out:?}");
    r.on_box(&["stop", "-s", "sh"]).ok();
    r.finish();
}
