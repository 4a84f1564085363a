//! What a caller sees of a remote target, without an sshd: the status line
//! and `list` naming where the calls went, a failing `--via` command's own
//! words in the error, and `mcp --host` answering a pending request when
//! the remote server dies. The far side is this binary under another
//! runtime directory (a wrapper script), reached through `--via WRAP proxy`
//! or through a stand-in for ssh that runs the remote command here
//! (`PTYBROKER_SSH_COMMAND`); the ssh transport itself is tests/remote.rs's.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use common::*;
use serde_json::Value;

/// A shell script at `path`, executable.
fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}")).expect("write script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The far side: the binary with its own runtime directory (so the test
/// can tell which daemon holds a session); the verb named by `$DIE_VERB`
/// dies at once, saying why.
fn far(sb: &Sandbox) -> (PathBuf, PathBuf) {
    let dir = sb.work("far");
    let rt = dir.join("rt");
    std::fs::create_dir_all(&rt).expect("far runtime");
    std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let wrap = dir.join("ptybroker");
    script(
        &wrap,
        &format!(
            "if [ \"$1\" = \"$DIE_VERB\" ]; then echo \"$1: cannot open the terminal database\" >&2; exit 3; fi\n\
             XDG_RUNTIME_DIR={} exec {BIN} \"$@\"\n",
            rt.display()
        ),
    );
    (wrap, rt)
}

/// A stand-in for ssh: the master is "up", forwarding is refused (so each
/// call opens a proxy channel), and the remote command runs here.
fn fake_ssh(sb: &Sandbox) -> PathBuf {
    let path = sb.work("bin").join("ssh");
    script(
        &path,
        "case \"$*\" in\n\
         *'-O check'*) exit 0 ;;\n\
         *'-O '*) echo 'forwarding refused' >&2; exit 255 ;;\n\
         *' -N '*) exit 0 ;;\n\
         esac\n\
         for a; do last=$a; done\n\
         exec sh -c \"$last\"\n",
    );
    path
}

fn run_env(sb: &Sandbox, args: &[&str], env: &[(&str, &Path)]) -> Out {
    let mut cmd = sb.command(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.env_remove("PTYBROKER_HOST");
    run_bounded(cmd, CALL_LIMIT, &args.join(" "))
}

#[test]
fn the_status_line_and_list_name_the_host() {
    let sb = Sandbox::new("remote-name-host");
    let (wrap, far_rt) = far(&sb);
    let ssh = fake_ssh(&sb);
    let bin = wrap.to_str().expect("utf-8 path");
    let env = [("PTYBROKER_SSH_COMMAND", ssh.as_path())];
    let host = ["--host", "box", "--remote-bin", bin];
    let start = [&["start", "-s", "py"][..], &host, &["--", "python3", "-q"]].concat();
    run_env(&sb, &start, &env).ok();
    let out = run_env(
        &sb,
        &[&["step", "-s", "py"][..], &host, &["1+41"]].concat(),
        &env,
    )
    .ok();
    assert!(out.stdout.contains("42"), "{}", out.stdout);
    // Seed 002's clauses stay as they were; only the name says where.
    let line = out.status_line();
    assert!(
        re(r"^\[ptybroker@box: \d\d:\d\d:\d\d \| running for \S+, quiet for \S+, still running")
            .is_match(line),
        "{line}"
    );
    // The session is the far daemon's, not ours.
    assert!(far_rt.join("ptybroker").join("daemon.sock").exists());
    assert!(!sb.socket().exists());

    let out = run_env(&sb, &[&["list"][..], &host].concat(), &env).ok();
    let mut lines = out.stdout.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    assert_eq!(header[..2], ["HOST", "SESSION"], "{}", out.stdout);
    let row: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    assert_eq!(row[..2], ["box", "py"], "{}", out.stdout);
    let out = run_env(&sb, &[&["list", "--json"][..], &host].concat(), &env).ok();
    let v: Value = serde_json::from_str(&out.stdout).expect("list --json");
    assert_eq!(v["host"], "box", "{v}");
    assert_eq!(v["sessions"][0]["session"], "py", "{v}");

    let out = run_env(&sb, &[&["stop", "-s", "py"][..], &host].concat(), &env).ok();
    let line = out.status_line();
    assert!(
        line.starts_with("[ptybroker@box: ") && line.ends_with("session \"py\" stopped]"),
        "{line}"
    );
    // An error names the host the same way.
    let out = run_env(&sb, &[&["read", "-s", "py"][..], &host].concat(), &env);
    assert_eq!(out.code(), 1);
    assert!(
        out.status_line().starts_with("[ptybroker@box: "),
        "{}",
        out.stderr
    );

    // Local calls are as seed 002 has them: no name, no column.
    let out = sb.run(&["list"]).ok();
    assert!(out.stdout.starts_with("SESSION "), "{}", out.stdout);
    let out = sb.run(&["list", "--json"]).ok();
    let v: Value = serde_json::from_str(&out.stdout).expect("list --json");
    assert!(v.get("host").is_none(), "{v}");
}

#[test]
fn the_status_line_and_list_name_a_via_command_without_its_proxy_words() {
    let sb = Sandbox::new("remote-name-via");
    let (wrap, _) = far(&sb);
    let via = format!("{} proxy", wrap.display());
    let v = ["--via", via.as_str()];
    sb.run(
        &[
            &["start", "-s", "sh"][..],
            &v,
            &["--", "bash", "--norc", "--noprofile"],
        ]
        .concat(),
    )
    .ok();
    let out = sb
        .run(&[&["step", "-s", "sh"][..], &v, &["echo hi"]].concat())
        .ok();
    let line = out.status_line();
    let want = format!("[ptybroker via {}: ", wrap.display());
    assert!(
        line.starts_with(&want) && line.contains(", still running"),
        "{line}"
    );
    let out = sb.run(&[&["list"][..], &v].concat()).ok();
    let row = out.stdout.lines().nth(1).unwrap_or("");
    assert!(
        row.starts_with(&wrap.display().to_string()),
        "{}",
        out.stdout
    );
    let out = sb.run(&[&["list", "--json"][..], &v].concat()).ok();
    let j: Value = serde_json::from_str(&out.stdout).expect("list --json");
    assert_eq!(j["via"], via.as_str(), "{j}");
    sb.run(&[&["stop", "-s", "sh"][..], &v].concat()).ok();
}

#[test]
fn a_failing_via_command_says_why_in_its_own_words() {
    let sb = Sandbox::new("remote-via-fails");
    let via = "sh -c 'echo Error: No such container: nobox >&2; exit 1'";
    for verb in [
        &["step", "--via", via, "x"][..],
        &["list", "--via", via],
        &["start", "--via", via, "--", "true"],
    ] {
        let out = sb.run(verb);
        assert_eq!(out.code(), 1, "{verb:?}: {}", out.stderr);
        let line = out.status_line();
        assert!(
            line.contains("failed: Error: No such container: nobox"),
            "{verb:?}: {line}"
        );
        assert!(
            !line.contains("Broken pipe") && !line.contains("reset"),
            "{line}"
        );
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    }
    // Lost after the version check, in the middle of the call.
    let via = r#"sh -c 'read l; echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocol\":1}}"; read l; echo container stopped >&2; exit 1'"#;
    let out = sb.run(&["read", "--via", via]);
    assert_eq!(out.code(), 1, "{}", out.stderr);
    assert!(
        out.status_line().contains("failed: container stopped"),
        "{}",
        out.stderr
    );
    // Lost after the version check, in the middle of the call.
    let via = r#"sh -c 'read l; echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocol\":1}}"; read l; echo container stopped >&2; exit 1'"#;
    let out = sb.run(&["read", "--via", via]);
    assert_eq!(out.code(), 1, "{}", out.stderr);
    assert!(
        out.status_line().contains("failed: container stopped"),
        "{}",
        out.stderr
    );
    // Silent, it says how it ended.
    let out = sb.run(&["list", "--via", "exit 7"]);
    assert_eq!(out.code(), 1);
    assert!(
        out.status_line().contains("exit status 7"),
        "{}",
        out.stderr
    );
}

/// `mcp --host` with the stand-in ssh: `initialize` reaches the remote
/// server and comes back; the end of stdin ends it.
#[test]
fn mcp_over_a_host_relays_and_ends_with_its_input() {
    let sb = Sandbox::new("remote-mcp-ok");
    let (wrap, _) = far(&sb);
    let ssh = fake_ssh(&sb);
    let mut cmd = sb.command(&[
        "mcp",
        "--host",
        "box",
        "--remote-bin",
        wrap.to_str().unwrap_or(""),
    ]);
    cmd.env("PTYBROKER_SSH_COMMAND", &ssh)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#
    )
    .expect("write");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":"two","method":"tools/list"}}"#
    )
    .expect("write");
    drop(stdin);
    let out = BufReader::new(child.stdout.take().expect("stdout"));
    let answers: Vec<Value> = out
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str(&l).ok())
        .collect();
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status} {answers:?}");
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(answers[0]["id"], 1);
    assert!(
        answers[0]["result"]["serverInfo"].is_object(),
        "{}",
        answers[0]
    );
    assert_eq!(answers[1]["id"], "two");
    assert!(answers[1]["result"]["tools"].is_array(), "{}", answers[1]);
}

/// The remote server passes our checks, then dies at once: the request it
/// was sent is answered with a JSON-RPC error that says why, not a bare
/// end of output.
#[test]
fn mcp_over_a_host_answers_a_pending_request_when_the_server_dies() {
    let sb = Sandbox::new("remote-mcp-dies");
    let (wrap, _) = far(&sb);
    let ssh = fake_ssh(&sb);
    for (verb, want) in [("mcp", "jsonrpc"), ("driver", "type")] {
        let mut cmd = sb.command(&[
            verb,
            "--host",
            "box",
            "--remote-bin",
            wrap.to_str().unwrap_or(""),
        ]);
        cmd.env("PTYBROKER_SSH_COMMAND", &ssh)
            .env("DIE_VERB", verb)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn");
        let mut stdin = child.stdin.take().expect("stdin");
        let req = if verb == "mcp" {
            r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}"#
        } else {
            r#"{"id":7,"method":"status","sessionId":"app"}"#
        };
        // The server may be gone before this is read: that is the case.
        let _ = writeln!(stdin, "{req}");
        let out = BufReader::new(child.stdout.take().expect("stdout"));
        let answers: Vec<Value> = out
            .lines()
            .map_while(Result::ok)
            .filter_map(|l| serde_json::from_str(&l).ok())
            .collect();
        drop(stdin);
        let status = child.wait().expect("wait");
        assert!(!status.success(), "{verb}: {status}");
        let answer = answers
            .iter()
            .find(|a| a["id"] == 7)
            .unwrap_or_else(|| panic!("{verb}: no answer to id 7 in {answers:?}"));
        assert!(answer.get(want).is_some(), "{verb}: {answer}");
        let msg = answer["error"]["message"].as_str().unwrap_or("");
        assert!(
            msg.contains("box") && msg.contains("cannot open the terminal database"),
            "{verb}: {answer}"
        );
    }
}
