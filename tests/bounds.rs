//! Bounds (issue 7), each at its edge: sessions per process, connections,
//! request line length (in all three protocols), write payload, transcript,
//! scrollback, and the longest a wait can block. The numbers come from
//! `ptybroker::limits`, the one place they are defined.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{eventually, Rpc, Sandbox};
use ptybroker::limits;
use serde_json::{json, Value};

fn daemon(name: &str) -> (Sandbox, i32) {
    let sb = Sandbox::new(name);
    sb.run(&["start", "--session", "keep", "--", "cat"]).ok();
    let pid = sb.daemon_pid().expect("daemon pid");
    (sb, pid)
}

fn message(e: &Value) -> &str {
    e["message"].as_str().unwrap_or("")
}

#[test]
fn sessions_per_process_stop_at_the_limit() {
    // Started under the usual soft limit of 1024 open files, which the
    // daemon raises (up to the hard limit): 256 sessions need more. The
    // program in a session gets the starting limit back.
    let sb = Sandbox::new("max-sessions");
    let start = sb.tool(
        &sb.root,
        "sh",
        &[
            "-c",
            "ulimit -Sn 1024 && exec \"$0\" start --session keep -- sh -c 'ulimit -n; exec cat'",
            common::BIN,
        ],
    );
    assert_eq!(start.stdout.lines().next(), Some("1024"), "{start:?}");
    let pid = sb.daemon_pid().expect("daemon pid");
    let limits_file = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("limits");
    let open_files: Vec<&str> = limits_file
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .map(|l| l.split_whitespace().skip(3).take(2).collect())
        .unwrap_or_default();
    assert!(
        open_files.len() == 2 && open_files[0] == open_files[1],
        "the daemon's soft limit is raised to its hard limit: {open_files:?}"
    );
    let mut rpc = sb.rpc();
    // `keep` is the first.
    for i in 1..limits::MAX_SESSIONS {
        rpc.ok(
            "pty/start",
            json!({"session": format!("s{i}"), "argv": ["cat"]}),
        );
    }
    assert_eq!(
        rpc.ok("pty/list", json!({}))["sessions"]
            .as_array()
            .map(Vec::len),
        Some(limits::MAX_SESSIONS)
    );
    let e = rpc.err("pty/start", json!({"session": "one-more", "argv": ["cat"]}));
    assert_eq!(e["code"], -32000, "{e}");
    assert_eq!(
        message(&e),
        format!(
            "too many sessions ({}); stop one first",
            limits::MAX_SESSIONS
        )
    );
    // Replacing an existing name is not one more.
    rpc.ok(
        "pty/start",
        json!({"session": "s1", "argv": ["cat"], "replace": true}),
    );
    rpc.ok("pty/stop", json!({"session": "s2", "force": true}));
    rpc.ok("pty/start", json!({"session": "one-more", "argv": ["cat"]}));
    for i in 1..limits::MAX_SESSIONS {
        let _ = rpc.try_call(
            "pty/stop",
            json!({"session": format!("s{i}"), "force": true}),
        );
    }
}

#[test]
fn connections_stop_at_the_limit_and_a_closed_one_frees_its_slot() {
    let (sb, _) = daemon("max-conns");
    let mut conns: Vec<Rpc> = (0..limits::MAX_CONNECTIONS)
        .map(|_| {
            let mut r = sb.rpc();
            // Answered, so its thread runs and counts.
            r.ok("pty/list", json!({}));
            r
        })
        .collect();
    let mut extra = sb.rpc();
    let v = extra
        .try_line(r#"{"jsonrpc":"2.0","method":"pty/list","params":{},"id":1}"#)
        .expect("the refusal");
    assert_eq!(v["error"]["code"], -32000, "{v}");
    assert_eq!(
        message(&v["error"]),
        format!(
            "too many connections (at most {}); close one and retry",
            limits::MAX_CONNECTIONS
        )
    );
    assert!(extra.read_response().is_none(), "closed after the refusal");
    // Everyone already in is still served.
    conns[7].ok("pty/status", json!({"session": "keep"}));
    drop(conns.pop());
    let served = eventually(Duration::from_secs(30), || {
        let mut r = sb.rpc();
        r.try_call("pty/list", json!({}))
            .filter(|v| v.get("result").is_some())
            .map(|_| r)
    });
    assert!(served.is_some(), "a closed connection never freed its slot");
}

fn vm_hwm_kib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

#[test]
fn a_request_line_over_the_limit_is_refused_unbuffered_and_the_connection_goes_on() {
    let (sb, pid) = daemon("max-line");
    let mut s = UnixStream::connect(sb.socket()).expect("connect");
    s.set_read_timeout(Some(common::CALL_LIMIT))
        .expect("timeout");
    let mut r = BufReader::new(s.try_clone().expect("clone"));
    let mut answer = || {
        let mut l = String::new();
        r.read_line(&mut l).expect("answer");
        serde_json::from_str::<Value>(&l).expect("JSON")
    };
    // 64 MiB in one line: refused without the daemon ever holding it.
    let hwm = vm_hwm_kib(pid);
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..64 {
        s.write_all(&chunk).expect("write");
    }
    s.write_all(b"\n").expect("write");
    let v = answer();
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert!(
        message(&v["error"]).contains(&format!(
            "exceeds the limit of {} bytes",
            limits::MAX_LINE_BYTES
        )),
        "{v}"
    );
    let grew = vm_hwm_kib(pid).saturating_sub(hwm);
    eprintln!("peak RSS grew {grew} KiB while a 64 MiB line went by");
    assert!(grew < 8 * 1024, "the daemon buffered the line: +{grew} KiB");

    // At the edge: exactly MAX_LINE_BYTES is a request; one more is not.
    let base = r#"{"jsonrpc":"2.0","method":"pty/status","params":{"session":"keep"},"id":5}"#;
    let pad = |n: usize| format!("{base}{}\n", " ".repeat(n - base.len()));
    s.write_all(pad(limits::MAX_LINE_BYTES).as_bytes())
        .expect("write");
    let v = answer();
    assert_eq!(
        (v["id"].clone(), v["result"]["running"].clone()),
        (json!(5), json!(true)),
        "{v}"
    );
    s.write_all(pad(limits::MAX_LINE_BYTES + 1).as_bytes())
        .expect("write");
    let v = answer();
    assert_eq!(v["error"]["code"], -32600, "{v}");
    // Bad input of every other kind is answered in shape, and the
    // connection stays usable after each.
    for bad in [
        &b"{not json"[..],
        b"\xff\xfe\x00garbage",
        b"[1,2,3]",
        b"{\"jsonrpc\":\"2.0\",\"method\":\"pty/list\"}",
        b"{\"jsonrpc\":\"2.0\",\"method\":7,\"id\":1}",
        b"{\"jsonrpc\":\"2.0\",\"method\":\"nope\",\"id\":2}",
        b"{\"jsonrpc\":\"2.0\",\"method\":\"pty/read\",\"params\":{\"top\":-1},\"id\":3}",
        b"{\"jsonrpc\":\"2.0\",\"method\":\"pty/wait\",\"params\":{\"session\":\"keep\",\"regex\":\"(\"},\"id\":4}",
    ] {
        s.write_all(bad).expect("write");
        s.write_all(b"\n").expect("write");
        let v = answer();
        assert!(v["error"]["code"].is_i64(), "{v}");
        assert!(v.get("id").is_some(), "{v}");
    }
    s.write_all(pad(base.len()).as_bytes()).expect("write");
    assert_eq!(answer()["id"], 5);
}

/// A line of a few MiB made of tiny values (which a parse would turn into
/// a tree some twenty times its size) is refused before it is parsed, in
/// every protocol, and the daemon's peak memory stays put while many of
/// them go by at once.
#[test]
fn a_line_of_too_many_json_values_is_refused_before_it_is_parsed() {
    let (sb, pid) = daemon("max-values");
    // 300,000 keys in 3.4 MiB: under the line limit, over the value limit.
    let keys: String = (0..300_000).map(|i| format!("\"k{i}\":0,")).collect();
    let line = format!(
        r#"{{"jsonrpc":"2.0","method":"pty/status","params":{{{keys}"session":"keep"}},"id":7}}"#
    );
    assert!(line.len() < limits::MAX_LINE_BYTES);
    let hwm = vm_hwm_kib(pid);
    let clients: Vec<_> = (0..8)
        .map(|_| {
            let (socket, line) = (sb.socket(), line.clone());
            std::thread::spawn(move || {
                let mut s = UnixStream::connect(socket).expect("connect");
                s.set_read_timeout(Some(common::CALL_LIMIT))
                    .expect("timeout");
                s.write_all(line.as_bytes()).expect("write");
                s.write_all(b"\n").expect("write");
                let mut l = String::new();
                BufReader::new(s).read_line(&mut l).expect("answer");
                serde_json::from_str::<Value>(&l).expect("JSON")
            })
        })
        .collect();
    for c in clients {
        let v = c.join().expect("client");
        assert_eq!(v["error"]["code"], -32600, "{v}");
        assert!(
            message(&v["error"]).contains(&format!(
                "more than {} object members",
                limits::MAX_JSON_MEMBERS
            )),
            "{v}"
        );
    }
    // Eight lines of 3.5 MiB were read (each buffered once, as any line
    // is); parsed, they would have been some 50 MB each.
    let grew = vm_hwm_kib(pid).saturating_sub(hwm);
    eprintln!("peak RSS grew {grew} KiB while 8 lines of 300,000 keys went by");
    assert!(grew < 64 * 1024, "the daemon parsed the lines: +{grew} KiB");
    // The same request with a few keys is answered.
    let mut rpc = sb.rpc();
    let v = rpc.call("pty/status", json!({"session": "keep", "k1": 0}));
    assert_eq!(v["result"]["running"], true, "{v}");

    // The driver and MCP refuse the same line in their own shapes.
    let driver_line = format!(r#"{{"id":3,"method":"status",{keys}"sessionId":"none"}}"#);
    let got = stdio_session(&sb, &["driver"], format!("{driver_line}\n").into_bytes());
    assert_eq!(got[1]["error"]["code"], "INVALID_REQUEST", "{got:?}");
    assert!(
        message(&got[1]["error"]).contains("object members"),
        "{got:?}"
    );
    let got = stdio_session(&sb, &["mcp"], format!("{line}\n").into_bytes());
    assert_eq!(got[0]["error"]["code"], -32600, "{got:?}");
}

/// Run `ptybroker ARGS` with piped stdio; write `input`, return stdout lines.
fn stdio_session(sb: &Sandbox, args: &[&str], input: Vec<u8>) -> Vec<Value> {
    let mut cmd = sb.command(args);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = BufReader::new(child.stdout.take().expect("stdout"));
    let lines: Vec<Value> = out
        .lines()
        .map_while(Result::ok)
        .map(|l| serde_json::from_str(&l).expect("JSON line"))
        .collect();
    let _ = writer.join();
    let _ = child.wait();
    lines
}

#[test]
fn the_driver_and_mcp_refuse_long_lines_and_go_on() {
    let sb = Sandbox::new("stdio-line");
    let long = vec![b'x'; limits::MAX_LINE_BYTES + 1];
    let mut input = long.clone();
    input.extend_from_slice(
        b"\n\xff\xfe\n{\"id\":3,\"method\":\"status\",\"sessionId\":\"none\"}\n",
    );
    let got = stdio_session(&sb, &["driver"], input);
    assert_eq!(got[0]["type"], "hello", "{got:?}");
    assert_eq!(got[1]["error"]["code"], "READ_ERROR", "{got:?}");
    assert!(
        message(&got[1]["error"]).contains("exceeds the limit"),
        "{got:?}"
    );
    assert_eq!(got[2]["error"]["code"], "READ_ERROR", "{got:?}");
    assert_eq!(
        (got[3]["id"].clone(), got[3]["type"].clone()),
        (json!(3), json!("error")),
        "{got:?}"
    );

    let mut input = long;
    input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\n");
    let got = stdio_session(&sb, &["mcp"], input);
    // As on the socket: an invalid request, naming the limit.
    assert_eq!(got[0]["error"]["code"], -32600, "{got:?}");
    assert!(
        message(&got[0]["error"]).contains(&format!(
            "exceeds the limit of {} bytes",
            limits::MAX_LINE_BYTES
        )),
        "{got:?}"
    );
    assert_eq!(
        (got[1]["id"].clone(), got[1]["result"].clone()),
        (json!(9), json!({})),
        "{got:?}"
    );
}

#[test]
fn a_write_payload_is_accepted_up_to_the_limit() {
    let (sb, _) = daemon("max-write");
    let mut rpc = sb.rpc();
    rpc.ok(
        "pty/start",
        json!({"session": "sink", "argv": ["sh", "-c", "stty raw -echo; echo ready; exec cat >/dev/null"]}),
    );
    rpc.wait_for("sink", "ready");
    let r = rpc.ok(
        "pty/write",
        json!({"session": "sink", "action": {"text": "a".repeat(limits::MAX_WRITE_BYTES)}}),
    );
    assert_eq!(r["written"], limits::MAX_WRITE_BYTES);
    // Raw bytes are an array of numbers: the most a write may send is one
    // array of that many, within the count of values a line may hold.
    let r = rpc.ok(
        "pty/write",
        json!({"session": "sink", "action": {"raw": vec![97u8; limits::MAX_WRITE_BYTES]}}),
    );
    assert_eq!(r["written"], limits::MAX_WRITE_BYTES);
    // Counted after keys and pastes are encoded: one byte over is refused.
    let e = rpc.err(
        "pty/write",
        json!({"session": "sink", "action": [
            {"text": "a".repeat(limits::MAX_WRITE_BYTES - 1)}, {"key": "Tab"}, {"key": "Enter"}]}),
    );
    assert_eq!(e["code"], -32602, "{e}");
    assert_eq!(
        message(&e),
        format!(
            "input too large: {} bytes (at most {} per request)",
            limits::MAX_WRITE_BYTES + 1,
            limits::MAX_WRITE_BYTES
        )
    );
    rpc.ok(
        "pty/write",
        json!({"session": "sink", "action": {"text": "still fine"}}),
    );
}

#[test]
fn the_transcript_and_scrollback_keep_exactly_their_bounds() {
    let (sb, _) = daemon("rings");
    let mut rpc = sb.rpc();
    let n = 3 * limits::TRANSCRIPT_BYTES + 12_345;
    rpc.ok(
        "pty/start",
        json!({"session": "t", "argv": ["sh", "-c", format!("head -c {n} /dev/zero | tr '\\0' x")]}),
    );
    rpc.ok(
        "pty/wait",
        json!({"session": "t", "exit": true, "timeout": 60_000}),
    );
    let st = rpc.ok("pty/status", json!({"session": "t"}));
    assert_eq!(st["outputEnd"], n, "{st}");
    assert_eq!(st["buffered"], limits::TRANSCRIPT_BYTES, "{st}");
    let out = rpc.ok("pty/output", json!({"session": "t", "offset": 0, "max": n}));
    assert_eq!(out["offset"], n - limits::TRANSCRIPT_BYTES);
    assert_eq!(out["dropped"], n - limits::TRANSCRIPT_BYTES);
    assert_eq!(
        out["data"].as_str().map(str::len),
        Some(limits::TRANSCRIPT_BYTES)
    );

    let lines = limits::SCROLLBACK_LINES + 2_000;
    rpc.ok(
        "pty/start",
        json!({"session": "h", "rows": 30, "argv": ["seq", "1", lines.to_string()]}),
    );
    rpc.ok(
        "pty/wait",
        json!({"session": "h", "exit": true, "timeout": 60_000}),
    );
    let text = rpc.ok("pty/read", json!({"session": "h", "history": true}))["screen"]
        .as_str()
        .expect("screen")
        .to_string();
    let rows: Vec<&str> = text.lines().collect();
    // The screen holds the last 29 numbers and the empty row after them;
    // exactly SCROLLBACK_LINES scrolled-off lines are kept above it.
    let first_kept = lines - 29 - limits::SCROLLBACK_LINES + 1;
    assert_eq!(rows[0], first_kept.to_string(), "oldest line kept");
    let last = rows
        .iter()
        .position(|r| *r == lines.to_string())
        .expect("last line");
    assert_eq!(last + 1, limits::SCROLLBACK_LINES + 29, "lines kept in all");
}

#[test]
fn a_wait_longer_than_max_wait_is_capped_not_overflowed() {
    let (sb, _) = daemon("max-wait");
    let mut rpc = sb.rpc();
    rpc.ok(
        "pty/start",
        json!({"session": "s", "argv": ["sh", "-c", "sleep 1"]}),
    );
    // u64::MAX ms would overflow any deadline: it is capped at MAX_WAIT
    // (an hour; not waited out here) and the wait ends on the exit.
    let w = rpc.ok(
        "pty/wait",
        json!({"session": "s", "exit": true, "timeout": u64::MAX}),
    );
    assert_eq!(w["reason"], "exited", "{w}");
    let w = rpc.ok(
        "pty/wait",
        json!({"session": "keep", "match": "never", "timeout": 200}),
    );
    assert_eq!(w["reason"], "timeout", "{w}");
    let w = rpc.ok(
        "pty/step",
        json!({"session": "keep", "text": "x", "timeout": u64::MAX, "maxWait": u64::MAX}),
    );
    assert!(w["reason"].is_string(), "{w}");
}

#[test]
fn an_mcp_wait_never_blocks_past_its_cap() {
    let sb = Sandbox::new("mcp-wait");
    let mut cmd: Command = sb.command(&["mcp"]);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut call = |line: Value| -> Value {
        writeln!(stdin, "{line}").expect("write");
        let mut l = String::new();
        out.read_line(&mut l).expect("read");
        serde_json::from_str(&l).expect("JSON")
    };
    call(
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
    );
    let s = call(
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"terminal_start","arguments":{"shell":"sh"}}}),
    );
    let id = s["result"]["structuredContent"]["session_id"].clone();
    assert!(id.is_string(), "{s}");
    let t = Instant::now();
    let w = call(
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"terminal_wait","arguments":{"session_id":id,"until":"never-appears","timeout_ms":u64::MAX >> 11}}}),
    );
    let took = t.elapsed();
    eprintln!("terminal_wait asked for ~285 millennia, took {took:?}: {w}");
    assert!(took >= limits::MCP_MAX_WAIT, "{took:?}");
    assert!(
        took < limits::MCP_MAX_WAIT + limits::MCP_KILL_SLACK + Duration::from_secs(20),
        "{took:?}"
    );
    drop(stdin);
    let _ = child.wait();
}

/// `n` bytes as the man page writes them.
fn mib(n: usize) -> String {
    assert_eq!(n % (1 << 20), 0, "{n} is not whole MiB");
    format!("{} MiB", n >> 20)
}

fn secs(d: Duration) -> String {
    format!("{} s", d.as_secs())
}

#[test]
fn the_man_page_lists_every_limit_with_its_value() {
    let man = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/man/ptybroker.1"))
        .expect("man page");
    let section =
        &man[man.find(".Sh LIMITS").expect("LIMITS")..man.find(".Sh FILES").expect("FILES")];
    let section = section.replace('\n', " ");
    assert_eq!(
        limits::MAX_WAIT,
        Duration::from_secs(3600),
        "the page says one hour"
    );
    let want = [
        (
            "TRANSCRIPT_BYTES",
            format!("{} of output per session", mib(limits::TRANSCRIPT_BYTES)),
        ),
        (
            "SCROLLBACK_LINES",
            format!("{} lines per session", limits::SCROLLBACK_LINES),
        ),
        (
            "COLS",
            format!("{} to {} columns", limits::COLS.0, limits::COLS.1),
        ),
        (
            "ROWS",
            format!("{} to {} rows", limits::ROWS.0, limits::ROWS.1),
        ),
        (
            "MAX_SESSIONS",
            format!("{} per process", limits::MAX_SESSIONS),
        ),
        (
            "MAX_NAME_CHARS",
            format!("names of 1 to {} characters", limits::MAX_NAME_CHARS),
        ),
        (
            "RECORD_QUEUE",
            format!("{} events waiting", limits::RECORD_QUEUE),
        ),
        (
            "RECORD_FINISH_WAIT",
            format!("at most {} for it", secs(limits::RECORD_FINISH_WAIT)),
        ),
        (
            "SETTLE_TIMER_HORIZON",
            format!("at most {} that", secs(limits::SETTLE_TIMER_HORIZON)),
        ),
        (
            "SETTLE_TIMER_AWAIT",
            format!("at most {}, and silent", secs(limits::SETTLE_TIMER_AWAIT)),
        ),
        (
            "SETTLE_TIMER_JITTER",
            format!(
                "within {} ms are the same",
                limits::SETTLE_TIMER_JITTER.as_millis()
            ),
        ),
        (
            "SETTLE_SLEEP_QUIET",
            format!(
                "after {} ms of quiet",
                limits::SETTLE_SLEEP_QUIET.as_millis()
            ),
        ),
        (
            "SETTLE_RELAY_QUIET",
            format!(
                "a relay is settled after {} of quiet",
                secs(limits::SETTLE_RELAY_QUIET)
            ),
        ),
        (
            "SETTLE_RELAY_ECHO",
            format!(
                "not before {} after the input",
                secs(limits::SETTLE_RELAY_ECHO)
            ),
        ),
        (
            "MAX_CONNECTIONS",
            format!("{} at once per daemon", limits::MAX_CONNECTIONS),
        ),
        (
            "MAX_DRIVER_REQUESTS",
            format!("{} answered at once", limits::MAX_DRIVER_REQUESTS),
        ),
        (
            "MAX_LINE_BYTES",
            format!("{}; a longer line is refused", mib(limits::MAX_LINE_BYTES)),
        ),
        (
            "MAX_JSON_MEMBERS",
            format!(
                "At most {} object members (keys) and {} JSON values in all in one line",
                limits::MAX_JSON_MEMBERS,
                limits::MAX_JSON_ITEMS
            ),
        ),
        (
            "MAX_WRITE_BYTES",
            format!("{} of input per request", mib(limits::MAX_WRITE_BYTES)),
        ),
        (
            "WRITE_TIMEOUT",
            format!("reads none of it for {} fails", secs(limits::WRITE_TIMEOUT)),
        ),
        ("MAX_WAIT", "at most one hour".to_string()),
        (
            "MCP_MAX_WAIT",
            format!("at most {}", secs(limits::MCP_MAX_WAIT)),
        ),
        (
            "MCP_MAX_INFLIGHT",
            format!("{} tool calls in flight", limits::MCP_MAX_INFLIGHT),
        ),
        (
            "MCP_MAX_CHARS",
            format!("at most {} of text", mib(limits::MCP_MAX_CHARS)),
        ),
        (
            "MCP_MAX_REPEAT",
            format!("at most {} times", limits::MCP_MAX_REPEAT),
        ),
        (
            "STOP_TERM_GRACE",
            format!(
                "{} between SIGTERM and SIGHUP",
                secs(limits::STOP_TERM_GRACE)
            ),
        ),
        (
            "STOP_GRACE",
            format!("{} between SIGHUP and SIGKILL", secs(limits::STOP_GRACE)),
        ),
        (
            "EXIT_ANSWER_WAIT",
            format!(
                "waits at most {} for the answers in flight",
                secs(limits::EXIT_ANSWER_WAIT)
            ),
        ),
        (
            "CLIENT_WRITE_TIMEOUT",
            format!(
                "does not read for {} closes",
                secs(limits::CLIENT_WRITE_TIMEOUT)
            ),
        ),
        (
            "CLIENT_CONNECT_WAIT",
            format!(
                "(or starting one) fails after {}",
                secs(limits::CLIENT_CONNECT_WAIT)
            ),
        ),
        (
            "CLIENT_ANSWER_MARGIN",
            format!(
                "an answer fails {} past",
                secs(limits::CLIENT_ANSWER_MARGIN)
            ),
        ),
        (
            "CLIENT_ACT_SLACK",
            format!("a program {} more", secs(limits::CLIENT_ACT_SLACK)),
        ),
        (
            "REFUSE_LINGER",
            format!("closed within {}", secs(limits::REFUSE_LINGER)),
        ),
        (
            "MAX_REFUSING",
            format!("at most {} are told at once", limits::MAX_REFUSING),
        ),
        (
            "VIEWER_FRAME_GAP",
            format!(
                "frames at least {} ms apart",
                limits::VIEWER_FRAME_GAP.as_millis()
            ),
        ),
        (
            "VIEWER_STALL",
            format!("unread for {} is dropped", secs(limits::VIEWER_STALL)),
        ),
        (
            "DAEMON_IDLE_EXIT",
            format!("exits {} after", secs(limits::DAEMON_IDLE_EXIT)),
        ),
        (
            "MAX_UNAUTHENTICATED",
            format!(
                "at most {} wait to authenticate",
                limits::MAX_UNAUTHENTICATED
            ),
        ),
        (
            "AUTH_TIMEOUT",
            format!("token within {} is closed", secs(limits::AUTH_TIMEOUT)),
        ),
        (
            "SSH_CONNECT_TIMEOUT",
            format!("ssh connects within {}", secs(limits::SSH_CONNECT_TIMEOUT)),
        ),
        (
            "SSH_SETUP_WAIT",
            format!("ends within {}", secs(limits::SSH_SETUP_WAIT)),
        ),
        (
            "SSH_ALIVE",
            format!(
                "after {} keep-alives {} apart",
                limits::SSH_ALIVE_COUNT,
                secs(limits::SSH_ALIVE_INTERVAL)
            ),
        ),
        (
            "SSH_PERSIST",
            format!("idle master stays {}", secs(limits::SSH_PERSIST)),
        ),
    ];
    for (name, text) in want {
        assert!(section.contains(&text), "LIMITS lacks {name}: {text:?}");
    }
}

/// Starts that race for the last places cannot overshoot the limit: each
/// holds its place while its program spawns.
#[test]
fn concurrent_starts_never_pass_the_session_limit() {
    let (sb, _) = daemon("racing-starts");
    let mut rpc = sb.rpc();
    // `keep` is the first; leave four places.
    for i in 1..limits::MAX_SESSIONS - 4 {
        rpc.ok(
            "pty/start",
            json!({"session": format!("s{i}"), "argv": ["cat"]}),
        );
    }
    let racers: Vec<_> = (0..20)
        .map(|i| {
            let mut r = sb.rpc();
            std::thread::spawn(move || {
                r.call(
                    "pty/start",
                    json!({"session": format!("race{i}"), "argv": ["cat"]}),
                )
            })
        })
        .collect();
    let answers: Vec<Value> = racers
        .into_iter()
        .map(|t| t.join().expect("racer"))
        .collect();
    let started = answers.iter().filter(|a| a.get("result").is_some()).count();
    for a in answers.iter().filter(|a| a.get("result").is_none()) {
        assert_eq!(
            message(&a["error"]),
            format!(
                "too many sessions ({}); stop one first",
                limits::MAX_SESSIONS
            ),
            "{a}"
        );
    }
    assert_eq!(started, 4, "{answers:?}");
    assert_eq!(
        rpc.ok("pty/list", json!({}))["sessions"]
            .as_array()
            .map(Vec::len),
        Some(limits::MAX_SESSIONS)
    );
}

/// A client that asks for a big answer and never reads it is closed once
/// `CLIENT_WRITE_TIMEOUT` has passed for that answer as a whole: the part
/// the socket took at first does not start the clock again for the rest.
/// (The margins are the point: a second period would close it at twice the
/// limit.)
#[test]
fn an_answer_never_read_closes_the_connection_after_the_write_timeout() {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let (sb, _) = daemon("bounds-unread");
    let mut rpc = sb.rpc();
    rpc.ok(
        "pty/start",
        json!({"session": "big", "argv": ["sh", "-c", "head -c 1000000 /dev/zero | tr '\\0' x"]}),
    );
    rpc.ok(
        "pty/wait",
        json!({"session": "big", "exit": true, "timeout": 60_000}),
    );
    let mut s = UnixStream::connect(sb.socket()).expect("connect");
    let ask = json!({"jsonrpc": "2.0", "id": 1, "method": "pty/output",
                     "params": {"session": "big", "offset": 0, "max": 2_000_000}});
    writeln!(s, "{ask}").expect("ask");
    let t = Instant::now();
    let limit = limits::CLIENT_WRITE_TIMEOUT;
    let closed = loop {
        let mut fds = [PollFd::new(&s, PollFlags::RDHUP)];
        let tick = Timespec {
            tv_sec: 1,
            tv_nsec: 0,
        };
        poll(&mut fds, Some(&tick)).expect("poll");
        if fds[0]
            .revents()
            .intersects(PollFlags::RDHUP | PollFlags::HUP)
        {
            break t.elapsed();
        }
        assert!(
            t.elapsed() < limit * 2,
            "still open after {:?}",
            t.elapsed()
        );
    };
    assert!(
        closed >= limit - Duration::from_secs(1) && closed < limit + limit / 2,
        "closed after {closed:?}, the limit is {limit:?}"
    );
    // The daemon serves others meanwhile and after.
    rpc.ok("pty/status", json!({"session": "big"}));
}
