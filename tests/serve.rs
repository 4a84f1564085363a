//! `ptybroker serve`: one program behind one socket, as seed 000's CLI. Unix
//! sockets, loopback TCP with its token (or the flag that says insecure), and
//! the arguments it refuses.

mod common;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use common::{eventually, free_port, Rpc, Sandbox, CALL_LIMIT};
use ptybroker::limits;
use serde_json::json;

#[test]
fn serve_on_a_unix_socket_runs_one_program_until_pty_kill() {
    let mut sb = Sandbox::new("unix");
    let path = sb.root.join("bash.sock");
    let (i, mut c) = sb.serve_unix(
        &path,
        &[
            "--cmd",
            "bash --norc --noprofile",
            "--cols",
            "80",
            "--rows",
            "24",
        ],
    );
    let mode = std::fs::metadata(&path)
        .expect("socket")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "socket mode {mode:o}");

    c.ok(
        "pty/write",
        json!({"action": [{"text": "echo served-$((40+2))"}, {"key": "Enter"}]}),
    );
    let r = c.wait_for("default", "\nserved-42\n");
    assert_eq!(r["size"], json!({"cols": 80, "rows": 24}));

    // A second client sees the same program.
    let mut other = Rpc::unix(&path);
    let seen = other.ok("pty/read", json!({}));
    assert!(seen["screen"].as_str().unwrap_or("").contains("served-42"));

    // A second serve on the same live socket is refused, and leaves it alone.
    let again = sb.run(&[
        "serve",
        "--cmd",
        "cat",
        "--socket",
        path.to_str().expect("path"),
    ]);
    assert_eq!(again.code(), 2, "{again:?}");
    assert!(again.stderr.contains("in use"), "{again:?}");
    assert!(other.ok("pty/status", json!({}))["running"] == true);

    let pid = c.ok("pty/status", json!({}))["pid"].as_i64().expect("pid") as i32;
    let id = common::proc_identity(pid).expect("identity");
    assert_eq!(other.ok("pty/kill", json!({})), json!({}));
    assert!(
        other.read_response().is_none(),
        "connection closed after kill"
    );
    let st = sb
        .wait_child(i, CALL_LIMIT)
        .expect("serve exits after pty/kill");
    assert!(st.success(), "{st}");
    assert!(!path.exists(), "socket removed");
    assert_eq!(common::wait_gone(pid, id, false), None, "bash ended");
    // The first connection is gone with the process.
    assert!(c.try_call("pty/status", json!({})).is_none());
}

#[test]
fn serve_replaces_a_stale_socket() {
    let mut sb = Sandbox::new("stale");
    let path = sb.root.join("old.sock");
    // A socket file nobody listens on, as a killed server leaves it.
    drop(std::os::unix::net::UnixListener::bind(&path).expect("bind"));
    assert!(path.exists());
    let (_, mut c) = sb.serve_unix(&path, &["--cmd", "cat"]);
    assert_eq!(c.ok("pty/status", json!({}))["running"], true);
    c.ok("pty/kill", json!({}));
}

#[test]
fn serve_refuses_bad_arguments() {
    let sb = Sandbox::new("args");
    let sock = sb.root.join("s.sock");
    let sock = sock.to_str().expect("path");
    for args in [
        vec!["serve", "--socket", sock],
        vec!["serve", "--cmd", "cat"],
        vec!["serve", "--cmd", "cat", "--socket", sock, "--port", "5555"],
        vec!["serve", "--cmd", "cat", "--port", "0"],
        vec!["serve", "--cmd", "cat", "--port", "65536"],
        vec!["serve", "--cmd", "cat", "--port", "http"],
        // An address, not a name to look up.
        vec![
            "serve",
            "--cmd",
            "cat",
            "--port",
            "5555",
            "--host",
            "example.org",
        ],
        vec!["serve", "--cmd", "cat", "--socket", sock, "--cols", "1"],
        vec!["serve", "--cmd", "cat", "--socket", sock, "--bogus"],
        vec!["serve", "--cmd", "", "--socket", sock],
        vec!["serve", "--cmd", "  ", "--socket", sock],
    ] {
        let out = sb.run(&args);
        assert_eq!(out.code(), 2, "{args:?}: {out:?}");
        out.assert_one_stderr_line(r"^\[ptybroker: .+\]$");
        assert!(
            !std::path::Path::new(sock).exists(),
            "{args:?} left a socket"
        );
    }
}

#[test]
fn serve_that_cannot_start_its_program_leaves_no_socket() {
    let sb = Sandbox::new("nostart");
    let sock = sb.root.join("s.sock");
    let sock = sock.to_str().expect("path");
    let missing = sb.root.join("no-such-dir");
    let missing = missing.to_str().expect("path");
    let out = sb.run(&["serve", "--cmd", "cat", "--socket", sock, "--cwd", missing]);
    assert_eq!(out.code(), 1, "{out:?}");
    out.assert_one_stderr_line(r"^\[ptybroker: .+\]$");
    assert!(out.stderr.contains(missing), "names the directory: {out:?}");
    assert!(
        !std::path::Path::new(sock).exists(),
        "a failed start left its socket behind"
    );
}

/// Start `serve --port N` with `extra` arguments and wait until it listens.
fn serve_tcp(sb: &mut Sandbox, extra: &[&str], env: &[(&str, &str)]) -> (usize, u16) {
    let port = free_port();
    let p = port.to_string();
    let mut args = vec!["serve", "--cmd", "cat", "--port", &p];
    args.extend(extra);
    let i = sb.spawn_with(&args, env);
    eventually(CALL_LIMIT, || {
        if let Some(st) = sb.child_exited(i) {
            panic!("serve exited early: {st}: {}", sb.child_stderr(i));
        }
        // Ours, not another program's that took the port first.
        listener_is(port, sb.child_pid(i)).then_some(())
    })
    .expect("serve listens");
    (i, port)
}

/// The sockets listening on TCP `port` (per /proc/net/tcp and tcp6): each
/// one's local address (hex, as the table gives it) and inode.
fn listening(port: u16) -> Vec<(String, String)> {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default()
        + &std::fs::read_to_string("/proc/net/tcp6").unwrap_or_default();
    let want = format!(":{port:04X}");
    table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // st 0A is LISTEN
            let listening = f.get(3) == Some(&"0A") && f.get(1).is_some_and(|a| a.ends_with(&want));
            Some((f.get(1)?.to_string(), f.get(9)?.to_string())).filter(|_| listening)
        })
        .collect()
}

/// Does process `pid` hold the socket listening on TCP `port`?
fn listener_is(port: u16, pid: i32) -> bool {
    let inodes: Vec<String> = listening(port)
        .into_iter()
        .map(|(_, inode)| format!("socket:[{inode}]"))
        .collect();
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path())
            .is_ok_and(|l| inodes.iter().any(|i| l.as_os_str() == i.as_str()))
    })
}

fn auth(c: &mut Rpc, token: &str) -> serde_json::Value {
    c.line(
        &json!({"jsonrpc": "2.0", "method": "auth", "params": {"token": token}, "id": 0})
            .to_string(),
    )
}

/// Is `port` listening on 127.0.0.1 only (per /proc/net/tcp)?
fn listens_on_loopback_only(port: u16) -> bool {
    let local = listening(port);
    let want = format!("0100007F:{port:04X}");
    !local.is_empty() && local.iter().all(|(a, _)| *a == want)
}

#[test]
fn tcp_needs_the_token_first() {
    let mut sb = Sandbox::new("token");
    let token_file = sb.root.join("token");
    std::fs::write(&token_file, "s3cret-token\n").expect("token");
    let tf = token_file.to_str().expect("path").to_string();
    let (i, port) = serve_tcp(&mut sb, &["--token-file", &tf], &[]);
    assert!(listens_on_loopback_only(port), "binds loopback only");

    // Without auth: refused, and the connection is closed.
    let mut c = Rpc::tcp(port);
    let r = c.line(
        &json!({"jsonrpc": "2.0", "method": "pty/status", "params": {}, "id": 1}).to_string(),
    );
    assert!(r.get("result").is_none(), "{r}");
    assert_eq!(r["error"]["code"], -32000, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("auth"),
        "{r}"
    );
    assert!(
        c.read_response().is_none(),
        "closed after a refused request"
    );

    // A wrong token: refused and closed as well.
    let mut c = Rpc::tcp(port);
    let r = auth(&mut c, "s3cret-tokeN");
    assert_eq!(r["error"]["code"], -32000, "{r}");
    assert!(c.read_response().is_none(), "closed after a wrong token");

    // The right token first, then the protocol as on a Unix socket.
    let mut c = Rpc::tcp(port);
    let r = auth(&mut c, "s3cret-token");
    assert_eq!(r["result"], json!({}), "{r}");
    assert_eq!(r["id"], 0);
    assert_eq!(c.ok("pty/status", json!({}))["running"], true);
    c.ok(
        "pty/write",
        json!({"action": [{"text": "over tcp"}, {"key": "Enter"}]}),
    );
    c.wait_for("default", "over tcp\nover tcp");
    assert_eq!(c.ok("pty/kill", json!({})), json!({}));
    let st = sb.wait_child(i, CALL_LIMIT).expect("serve exits");
    assert!(st.success(), "{st}");
}

#[test]
fn tcp_without_a_token_file_makes_a_private_one() {
    let mut sb = Sandbox::new("mktoken");
    let (i, port) = serve_tcp(&mut sb, &[], &[]);
    let path = sb.runtime().join(format!("serve-{port}.token"));
    let token = std::fs::read_to_string(&path).expect("token file written");
    let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    assert!(token.len() >= 32, "a long random token: {token:?}");
    let mut c = Rpc::tcp(port);
    assert_eq!(auth(&mut c, token.trim())["result"], json!({}));
    assert_eq!(c.ok("pty/status", json!({}))["running"], true);
    c.ok("pty/kill", json!({}));
    sb.wait_child(i, CALL_LIMIT).expect("serve exits");
    let said = sb.child_stderr(i);
    assert!(
        said.contains(path.to_str().expect("path")),
        "tells where: {said:?}"
    );
    assert!(
        !said.contains(token.trim()),
        "never prints the token: {said:?}"
    );
}

#[test]
fn tcp_token_from_the_environment() {
    let mut sb = Sandbox::new("envtoken");
    let (_, port) = serve_tcp(&mut sb, &[], &[("PTYBROKER_TOKEN", "from-env")]);
    let mut c = Rpc::tcp(port);
    assert_eq!(auth(&mut c, "from-env")["result"], json!({}));
    assert_eq!(c.ok("pty/status", json!({}))["running"], true);
    c.ok("pty/kill", json!({}));
}

#[test]
fn tcp_insecure_no_token_needs_no_auth() {
    let mut sb = Sandbox::new("insecure");
    let (i, port) = serve_tcp(&mut sb, &["--insecure-no-token"], &[]);
    assert!(listens_on_loopback_only(port));
    let mut c = Rpc::tcp(port);
    assert_eq!(c.ok("pty/status", json!({}))["running"], true);
    let e = c.err("pty/nope", json!({}));
    assert_eq!(e["code"], -32601);
    assert_eq!(c.ok("pty/status", json!({}))["running"], true);
    let mut raw = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    raw.write_all(b"not json\n").expect("write");
    drop(raw);
    c.ok("pty/kill", json!({}));
    let st = sb.wait_child(i, Duration::from_secs(30)).expect("exits");
    assert!(st.success());
}

/// `serve` hosts its one program from start to `pty/kill`: `pty/start`
/// cannot add or swap one, `pty/stop` ends the program but keeps its last
/// screen and status readable, and `pty/kill` then still ends the process.
#[test]
fn serve_hosts_one_program_and_pty_kill_always_ends_it() {
    let mut sb = Sandbox::new("oneprog");
    let path = sb.root.join("one.sock");
    let (i, mut c) = sb.serve_unix(&path, &["--cmd", "sh -c 'echo hosted; exec cat'"]);
    c.wait_for("default", "hosted");
    for params in [
        json!({"session": "two", "argv": ["cat"]}),
        json!({"argv": ["cat"], "replace": true}),
    ] {
        let e = c.err("pty/start", params);
        assert_eq!(e["code"], -32000, "{e}");
        assert!(
            e["message"]
                .as_str()
                .unwrap_or("")
                .contains("serve hosts one program"),
            "{e}"
        );
    }
    let list = c.ok("pty/list", json!({}));
    assert_eq!(list["sessions"].as_array().map(Vec::len), Some(1), "{list}");

    let stopped = c.ok("pty/stop", json!({}));
    assert_eq!(stopped["session"], "default", "{stopped}");
    let st = c.ok("pty/status", json!({}));
    assert_eq!(st["running"], false, "{st}");
    assert!(
        c.ok("pty/read", json!({}))["screen"]
            .as_str()
            .unwrap_or("")
            .contains("hosted"),
        "the last screen stays readable"
    );
    assert_eq!(sb.child_exited(i), None, "pty/stop does not end serve");

    assert_eq!(c.ok("pty/kill", json!({})), json!({}));
    assert!(c.read_response().is_none(), "connection closed after kill");
    let st = sb
        .wait_child(i, CALL_LIMIT)
        .expect("serve exits after pty/kill");
    assert!(st.success(), "{st}");
    assert!(!path.exists(), "socket removed");
}

fn idle_tcp(port: u16) -> std::net::TcpStream {
    let s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(CALL_LIMIT)).expect("timeout");
    s
}

/// The next line a raw connection receives (empty at end of stream).
fn read_line(s: &std::net::TcpStream) -> String {
    use std::io::BufRead;
    let mut line = String::new();
    let _ = std::io::BufReader::new(s).read_line(&mut line);
    line
}

/// Connections that never send the token cannot lock out the one who has
/// it: they wait in a small room of their own, the oldest making way for
/// newcomers, and never take one of the server's connections.
#[test]
fn idle_tcp_connections_cannot_lock_out_the_token_holder() {
    let mut sb = Sandbox::new("idlers");
    let token_file = sb.root.join("token");
    std::fs::write(&token_file, "tok-tok\n").expect("token");
    let tf = token_file.to_str().expect("path").to_string();
    let (_, port) = serve_tcp(&mut sb, &["--token-file", &tf], &[]);
    let idlers: Vec<_> = (0..limits::MAX_CONNECTIONS + limits::MAX_UNAUTHENTICATED)
        .map(|_| idle_tcp(port))
        .collect();

    let mut c = Rpc::tcp(port);
    assert_eq!(auth(&mut c, "tok-tok")["result"], json!({}));
    assert_eq!(c.ok("pty/status", json!({}))["running"], true);

    // The oldest idlers were closed, each told why (made way for newer
    // ones, or, on a machine slow enough, ran out of time).
    let said: serde_json::Value =
        serde_json::from_str(&read_line(&idlers[0])).expect("an error line");
    assert_eq!(said["error"]["code"], -32000, "{said}");
    let why = said["error"]["message"].as_str().unwrap_or("");
    assert!(
        why.contains("waiting to authenticate") || why.contains("timed out"),
        "{said}"
    );
    assert_eq!(read_line(&idlers[0]), "", "then closed");
    c.ok("pty/kill", json!({}));
}

/// A connection that has not authenticated within the deadline is closed
/// with the reason; an authenticated one has no deadline.
#[test]
fn a_connection_that_does_not_authenticate_in_time_is_closed() {
    let mut sb = Sandbox::new("authtime");
    let token_file = sb.root.join("token");
    std::fs::write(&token_file, "tok-tok\n").expect("token");
    let tf = token_file.to_str().expect("path").to_string();
    let (_, port) = serve_tcp(&mut sb, &["--token-file", &tf], &[]);
    let mut c = Rpc::tcp(port);
    assert_eq!(auth(&mut c, "tok-tok")["result"], json!({}));

    let idle = idle_tcp(port);
    let said: serde_json::Value = serde_json::from_str(&read_line(&idle)).expect("an error line");
    assert_eq!(said["error"]["code"], -32000, "{said}");
    assert!(
        said["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("authentication timed out"),
        "{said}"
    );
    assert_eq!(read_line(&idle), "", "then closed");
    // Past the deadline, the authenticated connection is still served.
    assert_eq!(c.ok("pty/status", json!({}))["running"], true);
    c.ok("pty/kill", json!({}));
}

#[test]
fn serve_refuses_to_replace_anything_but_a_stale_socket() {
    let sb = Sandbox::new("notsock");
    let file = sb.root.join("precious");
    std::fs::write(&file, "precious\n").expect("file");
    let link = sb.root.join("link.sock");
    std::os::unix::fs::symlink(&file, &link).expect("symlink");
    let dangling = sb.root.join("dangling.sock");
    std::os::unix::fs::symlink(sb.root.join("nowhere"), &dangling).expect("symlink");
    let dir = sb.root.join("dir.sock");
    std::fs::create_dir(&dir).expect("dir");
    let fifo = sb.root.join("fifo.sock");
    sb.tool(&sb.root, "mkfifo", &[fifo.to_str().expect("path")]);
    for path in [&file, &link, &dangling, &dir, &fifo] {
        let p = path.to_str().expect("path");
        let before = std::fs::symlink_metadata(path).expect("there");
        let out = sb.run(&["serve", "--cmd", "cat", "--socket", p]);
        assert_ne!(out.code(), 0, "{p}: {out:?}");
        out.assert_one_stderr_line(r"^\[ptybroker: .+\]$");
        assert!(out.stderr.contains(p), "names the path: {out:?}");
        let after = std::fs::symlink_metadata(path).expect("still there");
        use std::os::unix::fs::MetadataExt;
        assert_eq!(
            (before.ino(), before.file_type()),
            (after.ino(), after.file_type()),
            "{p} was replaced"
        );
    }
    assert_eq!(std::fs::read_to_string(&file).expect("file"), "precious\n");
    assert_eq!(std::fs::read_link(&link).expect("link"), file);
}

#[test]
fn serve_removes_its_socket_when_terminated_by_a_signal() {
    for sig in [15, 2, 1] {
        let mut sb = Sandbox::new("sigexit");
        let path = sb.root.join("s.sock");
        let (i, mut c) = sb.serve_unix(&path, &["--cmd", "cat"]);
        let pid = c.ok("pty/status", json!({}))["pid"].as_i64().expect("pid") as i32;
        let id = common::proc_identity(pid).expect("identity");
        common::kill(sb.child_pid(i), sig);
        let st = sb
            .wait_child(i, CALL_LIMIT)
            .expect("serve exits on the signal");
        assert_eq!(st.code(), Some(128 + sig), "signal {sig}: {st}");
        assert!(!path.exists(), "signal {sig} left the socket behind");
        assert_eq!(common::wait_gone(pid, id, false), None, "cat ended");
    }
}

#[test]
fn serve_cmd_is_a_shell_command_line() {
    let mut sb = Sandbox::new("shline");
    let path = sb.root.join("sh.sock");
    let dir = sb.work("here");
    let line = format!(
        "cd {} && FOO=bar sh -c 'echo \"$FOO in $PWD\"'; exit 3",
        dir.display()
    );
    let (_, mut c) = sb.serve_unix(&path, &["--cmd", &line]);
    let r = c.ok("pty/wait", json!({"exit": true, "timeout": 30_000}));
    assert_eq!(r["reason"], "exited", "{r}");
    let screen = r["screen"].as_str().unwrap_or("");
    assert!(
        screen.contains(&format!("bar in {}", dir.display())),
        "{screen:?}"
    );
    assert_eq!(c.ok("pty/status", json!({}))["exitCode"], 3);
    c.ok("pty/kill", json!({}));
}

#[test]
fn a_pending_wait_is_answered_when_another_client_kills() {
    use std::io::BufRead;
    let mut sb = Sandbox::new("waitkill");
    let path = sb.root.join("w.sock");
    // A full screen makes the wait's answer large, and slow to build: the
    // process must not exit before it is out.
    let (i, mut killer) = sb.serve_unix(
        &path,
        &[
            "--cols",
            "1000",
            "--rows",
            "500",
            "--cmd",
            "head -c 500000 /dev/zero | tr '\\0' x; exec cat",
        ],
    );
    killer.ok("pty/wait", json!({"idle": true, "timeout": 60_000}));
    let mut waiter = std::os::unix::net::UnixStream::connect(&path).expect("connect");
    waiter.set_read_timeout(Some(CALL_LIMIT)).expect("timeout");
    writeln!(
        waiter,
        r#"{{"jsonrpc":"2.0","method":"pty/wait","params":{{"exit":true,"timeout":600000}},"id":7}}"#
    )
    .expect("send");
    let serve_pid = sb.child_pid(i);
    assert!(
        eventually(CALL_LIMIT, || common::rpc_thread_waiting(serve_pid)
            .then_some(()))
        .is_some(),
        "the wait never began"
    );
    killer.ok("pty/kill", json!({}));
    let mut line = String::new();
    let n = std::io::BufReader::new(&waiter)
        .read_line(&mut line)
        .unwrap_or(0);
    assert!(n > 0, "the pending wait got no answer");
    let v: serde_json::Value = serde_json::from_str(&line).expect("json");
    assert_eq!(v["id"], 7, "{v}");
    assert_eq!(v["result"]["reason"], "exited", "{v}");
    let st = sb.wait_child(i, CALL_LIMIT).expect("serve exits");
    assert!(st.success(), "{st}");
    assert!(!path.exists(), "socket removed");
}
