//! Access (issue 7): the runtime directory and socket are private, other
//! uids are refused by SO_PEERCRED, TCP is loopback-only with a token, and
//! secrets never show up in logs or error messages.
//!
//! The uid tests need root (to run a helper as another uid, via std's
//! `CommandExt::uid`); run as anyone else they say so and pass.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use common::{eventually, free_port, re, run_bounded, Out, Rpc, Sandbox};
use serde_json::{json, Value};

/// The uid (and gid) the helpers switch to: `nobody` on Debian and friends.
const OTHER: u32 = 65534;

fn is_root() -> bool {
    rustix::process::getuid().is_root()
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).expect("stat").mode() & 0o7777
}

/// A directory outside the (0700) sandbox that `OTHER` can reach, removed on drop.
struct OpenDir(PathBuf);

impl OpenDir {
    fn new(sb: &Sandbox, owner: Option<u32>) -> OpenDir {
        let d = std::env::temp_dir().join(format!("pb-open-{}", sb.id));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir(&d).expect("mkdir");
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        if let Some(uid) = owner {
            std::os::unix::fs::chown(&d, Some(uid), Some(uid)).expect("chown");
        }
        OpenDir(d)
    }
}

impl Drop for OpenDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Connect to `sock` as uid `OTHER`, send one request, and return what came
/// back before the server closed (or the error the connect met).
fn connect_as_other(sock: &Path) -> Out {
    let script = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(30)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("connect failed:", e.strerror)
    sys.exit(3)
s.sendall(b'{"jsonrpc":"2.0","method":"pty/list","params":{},"id":7}\n')
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
sys.stdout.write(data.decode())
"#;
    let mut cmd = Command::new("python3");
    cmd.args(["-c", script])
        .arg(sock)
        .current_dir("/")
        .uid(OTHER)
        .gid(OTHER);
    run_bounded(cmd, common::CALL_LIMIT, "python3 as another uid")
}

fn refused_as_other(out: &Out) {
    assert_eq!(out.code(), 0, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "one refusal, then closed: {out:?}");
    let v: Value = serde_json::from_str(lines[0]).expect("JSON");
    assert_eq!(v["error"]["code"], -32000, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("serves only its owner's uid")),
        "{v}"
    );
    assert!(v.get("result").is_none(), "{v}");
}

#[test]
fn a_runtime_directory_that_is_a_symlink_is_refused_on_every_path() {
    let sb = Sandbox::new("symlink");
    let real = sb.work("real");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    std::os::unix::fs::symlink(&real, sb.runtime()).expect("symlink");
    // Starting (which would start a daemon) and merely asking (which only
    // connects) both refuse, and say what to do.
    for args in [&["start", "--", "cat"][..], &["status"], &["list"]] {
        let out = sb.run(args);
        assert_eq!(out.code(), 1, "{args:?}: {out:?}");
        out.assert_one_stderr_line(
            r"^\[ptybroker: .*ptybroker is not a directory \(a symlink.*remove it and retry\]$",
        );
    }
    assert!(!real.join("daemon.sock").exists(), "nothing was created");
    // `ptybroker daemon` itself refuses too.
    let out = sb.run(&["daemon"]);
    assert_eq!(out.code(), 1, "{out:?}");
    assert!(out.stderr.contains("symlink"), "{out:?}");
}

#[test]
fn a_runtime_directory_open_to_group_is_refused_with_the_fix() {
    let sb = Sandbox::new("group");
    std::fs::create_dir(sb.runtime()).expect("mkdir");
    for m in [0o750, 0o701, 0o710] {
        std::fs::set_permissions(sb.runtime(), std::fs::Permissions::from_mode(m)).expect("chmod");
        for args in [&["start", "--", "cat"][..], &["status"]] {
            let out = sb.run(args);
            assert_eq!(out.code(), 1, "{m:o} {args:?}: {out:?}");
            out.assert_one_stderr_line(&format!(
                r"^\[ptybroker: .* is open to other users \(mode {m:o}\); run `chmod 700 .*` and retry\]$"
            ));
        }
    }
    assert!(!sb.socket().exists());
    // The fix the message gives works.
    std::fs::set_permissions(sb.runtime(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    sb.run(&["start", "--", "cat"]).ok();
    sb.run(&["stop"]).ok();
}

#[test]
fn a_runtime_directory_of_another_user_is_refused() {
    if !is_root() {
        eprintln!("skipped: needs root to chown");
        return;
    }
    let sb = Sandbox::new("owner");
    std::fs::create_dir(sb.runtime()).expect("mkdir");
    std::fs::set_permissions(sb.runtime(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    std::os::unix::fs::chown(sb.runtime(), Some(OTHER), Some(OTHER)).expect("chown");
    for args in [&["start", "--", "cat"][..], &["status"]] {
        let out = sb.run(args);
        assert_eq!(out.code(), 1, "{args:?}: {out:?}");
        out.assert_one_stderr_line(&format!(
            r"^\[ptybroker: .* belongs to uid {OTHER}, not to you \(uid 0\); remove it or set XDG_RUNTIME_DIR to a directory of yours\]$"
        ));
    }
    assert!(!sb.socket().exists());
}

#[test]
fn the_socket_is_private_from_the_first_instant_whatever_the_umask() {
    let sb = Sandbox::new("umask");
    // Watch for the socket from before the daemon exists: the first mode
    // ever seen must already be 0600 (a chmod after bind would show 0777
    // under umask 000 for a moment).
    let stop = Arc::new(AtomicBool::new(false));
    let (sock, flag) = (sb.socket(), Arc::clone(&stop));
    let watcher = thread::spawn(move || {
        let mut first = None;
        while !flag.load(Ordering::Relaxed) && first.is_none() {
            if let Ok(m) = std::fs::symlink_metadata(&sock) {
                first = Some((m.file_type().is_socket(), m.mode() & 0o777));
            }
        }
        first
    });
    let mut cmd = Command::new("sh");
    cmd.args(["-c", r#"umask 000; exec "$0" "$@""#, common::BIN])
        .args(["start", "--", "cat"])
        .current_dir(&sb.root);
    sb.env(&mut cmd);
    run_bounded(cmd, common::CALL_LIMIT, "start under umask 000").ok();
    stop.store(true, Ordering::Relaxed);
    let first = watcher.join().expect("watcher");
    assert_eq!(first, Some((true, 0o600)), "first sight of the socket");
    assert_eq!(mode(&sb.runtime()), 0o700);
    assert_eq!(mode(&sb.socket()), 0o600);
    assert_eq!(mode(&sb.log()), 0o600);
    assert_eq!(mode(&sb.runtime().join("daemon.lock")), 0o600);
    sb.run(&["stop"]).ok();
}

#[test]
fn another_uid_cannot_reach_the_daemon() {
    if !is_root() {
        eprintln!("skipped: needs root to switch uid");
        return;
    }
    let sb = Sandbox::new("peer-daemon");
    sb.run(&["start", "--", "cat"]).ok();
    // The 0700 directory already keeps it out...
    let out = connect_as_other(&sb.socket());
    assert_eq!(out.code(), 3, "{out:?}");
    assert!(out.stdout.contains("Permission denied"), "{out:?}");
    // ...and the owner is served.
    assert!(sb.rpc().ok("pty/list", json!({}))["sessions"].is_array());
    sb.run(&["stop"]).ok();
}

#[test]
fn so_peercred_refuses_another_uid_that_reaches_the_socket() {
    if !is_root() {
        eprintln!("skipped: needs root to switch uid");
        return;
    }
    let mut sb = Sandbox::new("peer-serve");
    let open = OpenDir::new(&sb, None);
    let sock = open.0.join("serve.sock");
    let sock_s = sock.to_str().expect("utf-8 path").to_string();
    sb.spawn(&["serve", "--cmd", "cat", "--socket", &sock_s]);
    assert!(
        eventually(Duration::from_secs(30), || Rpc::try_unix(&sock).ok()).is_some(),
        "serve never listened"
    );
    assert_eq!(mode(&sock), 0o600, "bound private");
    // Open the door wide: only SO_PEERCRED stands in the way now.
    std::fs::set_permissions(&sock, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    refused_as_other(&connect_as_other(&sock));
    // The owner still gets in on the same socket.
    let mut rpc = Rpc::unix(&sock);
    assert_eq!(rpc.ok("pty/status", json!({}))["running"], true);
}

#[test]
fn root_is_refused_by_a_daemon_of_another_uid() {
    if !is_root() {
        eprintln!("skipped: needs root to switch uid");
        return;
    }
    let sb = Sandbox::new("peer-root");
    let open = OpenDir::new(&sb, Some(OTHER));
    let sock = open.0.join("serve.sock");
    let mut cmd = sb.command(&["serve", "--cmd", "cat", "--socket"]);
    cmd.arg(&sock)
        .current_dir(&open.0)
        .uid(OTHER)
        .gid(OTHER)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut serve = cmd.spawn().expect("serve as another uid");
    let reached = eventually(Duration::from_secs(30), || {
        std::os::unix::net::UnixStream::connect(&sock).ok()
    });
    assert!(reached.is_some(), "serve never listened");
    // Root is not special: it is another uid, and gets refused.
    let mut rpc = Rpc::unix(&sock);
    let v = rpc.line(r#"{"jsonrpc":"2.0","method":"pty/list","params":{},"id":1}"#);
    assert_eq!(v["error"]["code"], -32000, "{v}");
    assert!(rpc.read_response().is_none(), "closed after the refusal");
    let _ = serve.kill();
    let _ = serve.wait();
}

/// Local addresses (hex `ADDR:PORT`) listening on `port`, from /proc/net/tcp{,6}.
fn listening(port: u16) -> Vec<String> {
    let want = format!(":{port:04X}");
    let mut out = Vec::new();
    for f in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for l in text.lines().skip(1) {
            let cols: Vec<&str> = l.split_whitespace().collect();
            // st 0A is LISTEN.
            if cols.len() > 3 && cols[1].ends_with(&want) && cols[3] == "0A" {
                out.push(cols[1].to_string());
            }
        }
    }
    out
}

fn wait_listening(port: u16) {
    assert!(
        eventually(Duration::from_secs(30), || (!listening(port).is_empty())
            .then_some(()))
        .is_some(),
        "nothing listens on {port}"
    );
}

#[test]
fn tcp_listens_on_loopback_unless_a_host_is_given() {
    let mut sb = Sandbox::new("tcp-host");
    let port = free_port();
    let p = port.to_string();
    sb.spawn(&["serve", "--cmd", "cat", "--port", &p, "--insecure-no-token"]);
    wait_listening(port);
    assert_eq!(listening(port), [format!("0100007F:{port:04X}")]);

    let port2 = free_port();
    let p2 = port2.to_string();
    sb.spawn(&[
        "serve",
        "--cmd",
        "cat",
        "--port",
        &p2,
        "--host",
        "0.0.0.0",
        "--insecure-no-token",
    ]);
    wait_listening(port2);
    assert_eq!(listening(port2), [format!("00000000:{port2:04X}")]);

    // `localhost` is 127.0.0.1; nothing else is looked up.
    let port3 = free_port();
    let p3 = port3.to_string();
    sb.spawn(&[
        "serve",
        "--cmd",
        "cat",
        "--port",
        &p3,
        "--host",
        "localhost",
        "--insecure-no-token",
    ]);
    wait_listening(port3);
    assert_eq!(listening(port3), [format!("0100007F:{port3:04X}")]);
}

/// Send `lines` over TCP one at a time, reading a response after each;
/// returns the responses and whether the server closed the connection
/// (looked for only when `check_close`: after the last response, EOF).
fn tcp_exchange(port: u16, lines: &[&str], check_close: bool) -> (Vec<Value>, bool) {
    let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(common::CALL_LIMIT))
        .expect("timeout");
    let mut w = s.try_clone().expect("clone");
    let mut r = BufReader::new(s);
    let mut got = Vec::new();
    for l in lines {
        if w.write_all(format!("{l}\n").as_bytes()).is_err() {
            return (got, true);
        }
        let mut resp = String::new();
        match r.read_line(&mut resp) {
            Ok(0) => return (got, true),
            Err(e) => panic!("read after {} responses: {e}", got.len()),
            Ok(_) => got.push(serde_json::from_str(&resp).expect("JSON")),
        }
    }
    let mut rest = String::new();
    let closed = check_close && matches!(r.read_line(&mut rest), Ok(0));
    (got, closed)
}

#[test]
fn a_failed_authentication_closes_the_connection_and_leaks_nothing() {
    let mut sb = Sandbox::new("tcp-token");
    let token = "tok-3f9a1c7e5b2d4f60a8c9e1b3d5f7a9c1";
    let secret_env = "envsecret-51c0ffee-value";
    let token_file = sb.work("t").join("token");
    std::fs::write(&token_file, format!("{token}\n")).expect("token file");
    let port = free_port();
    let p = port.to_string();
    let tf = token_file.to_str().expect("utf-8").to_string();
    let i = sb.spawn(&["serve", "--cmd", "cat", "--port", &p, "--token-file", &tf]);
    wait_listening(port);

    let list = r#"{"jsonrpc":"2.0","method":"pty/list","params":{},"id":2}"#;
    // No auth first, a wrong token, a near miss, garbage: one error, closed.
    for first in [
        list.to_string(),
        json!({"jsonrpc":"2.0","method":"auth","params":{"token":"wrong"},"id":1}).to_string(),
        json!({"jsonrpc":"2.0","method":"auth","params":{"token": &token[..token.len()-1]},"id":1})
            .to_string(),
        json!({"jsonrpc":"2.0","method":"auth","params":{"token": format!("{token}x")},"id":1})
            .to_string(),
        "{not json".to_string(),
        "x".repeat(5 << 20),
    ] {
        let (got, closed) = tcp_exchange(port, &[&first, list], true);
        assert_eq!(got.len(), 1, "only the refusal: {got:?}");
        assert!(got[0].get("error").is_some(), "{:?}", got[0]);
        assert!(closed, "the connection must close after a failed auth");
        assert!(!got[0].to_string().contains(token));
    }
    // The right token opens it; a pty/start carrying an env value is
    // refused (serve hosts one program) without echoing it. (The daemon's
    // start errors: `env_values_never_reach_the_daemon_log_or_cli_errors`.)
    let auth = json!({"jsonrpc":"2.0","method":"auth","params":{"token":token},"id":1}).to_string();
    let bad_env = json!({"jsonrpc":"2.0","method":"pty/start","params":{
        "session":"x","argv":["/nonexistent/prog"],"env":{"SECRET":secret_env}},"id":3})
    .to_string();
    let bad_env2 = json!({"jsonrpc":"2.0","method":"pty/start","params":{
        "session":"y","argv":["cat"],"env":{"SECRET":format!("{secret_env}\u{0}")}},"id":4})
    .to_string();
    let (got, _) = tcp_exchange(port, &[&auth, list, &bad_env, &bad_env2], false);
    assert_eq!(got[0]["result"], json!({}), "{got:?}");
    assert!(got[1]["result"]["sessions"].is_array(), "{got:?}");
    for g in &got[2..] {
        assert!(g.get("error").is_some(), "{g}");
        assert!(!g.to_string().contains(secret_env), "env value echoed: {g}");
    }
    // Nothing the server printed holds either secret.
    let port_kill = r#"{"jsonrpc":"2.0","method":"pty/kill","params":{},"id":9}"#;
    let _ = tcp_exchange(port, &[&auth, port_kill], false);
    sb.wait_child(i, Duration::from_secs(30))
        .expect("serve exits after pty/kill");
    let err = sb.child_stderr(i);
    assert!(!err.contains(token), "token in serve's stderr: {err}");
    assert!(
        !err.contains(secret_env),
        "env value in serve's stderr: {err}"
    );
}

#[test]
fn env_values_never_reach_the_daemon_log_or_cli_errors() {
    let sb = Sandbox::new("env-leak");
    let secret = "envsecret-9d2be1-do-not-print";
    let mut outs = vec![sb.run(&["start", "--env", &format!("S={secret}"), "--", "cat"])];
    outs.push(sb.run(&["start", "--env", &format!("S={secret}"), "--", "cat"]));
    outs.push(sb.run(&[
        "start",
        "--session",
        "bad",
        "--env",
        &format!("S={secret}"),
        "--",
        "/nonexistent/prog",
    ]));
    outs.push(sb.run(&[
        "start",
        "--session",
        "bad2",
        "--cwd",
        "/nonexistent",
        "--env",
        &format!("S={secret}"),
        "--",
        "cat",
    ]));
    outs.push(sb.run(&["start", "--env", &format!("={secret}"), "--", "cat"]));
    assert_eq!(outs[0].code(), 0, "{:?}", outs[0]);
    for o in &outs[1..] {
        assert_ne!(o.code(), 0, "{o:?}");
    }
    sb.run(&["stop"]).ok();
    let log = std::fs::read_to_string(sb.log()).expect("log");
    for o in &outs {
        assert!(
            !o.stdout.contains(secret) && !o.stderr.contains(secret),
            "{o:?}"
        );
    }
    assert!(!log.contains(secret), "daemon log: {log}");
    assert!(re(r"listening on").is_match(&log));
}
