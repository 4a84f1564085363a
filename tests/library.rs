//! The library as a user sees it: only public `ptybroker::` paths, one test
//! (or more) per public type, and seed 000's library behaviours (selection
//! semantics, the wait result's shape, `write` returning the UTF-8 byte
//! count, `close(kill)` idempotent) through `PtyServer` and `Session`.

mod common;

use std::time::{Duration, Instant};

use common::{Rpc, Sandbox, BIN};
use ptybroker::vt::parser::{Params, Parser, Perform};
use ptybroker::{
    vt, Client, Color, Endpoint, ErrorKind, Exit, Input, PtyServer, Reason, Screen, Selection,
    Session, SessionOptions, Signal, Size, Target, Until,
};
use serde_json::json;

const LONG: Duration = Duration::from_secs(30);

fn spawn(line: &str) -> Session {
    Session::spawn(&SessionOptions::shell(line).size(20, 8)).expect("spawn")
}

/// A screen of five numbered lines under `cat`, the cursor after `l5`.
fn five_lines() -> Session {
    let s = spawn("printf 'l1\\nl2\\nl3\\nl4\\nl5'; exec cat");
    assert!(s.wait(Until::text("l5").timeout(LONG)).matched);
    s
}

#[test]
fn read_screen_selects_as_seed_000() {
    let s = five_lines();
    let all = s.read_screen(Selection::All).expect("read");
    assert_eq!(all.screen, "l1\nl2\nl3\nl4\nl5\n");
    assert_eq!((all.cursor.row, all.cursor.col), (5, 3));
    assert_eq!(all.size, Size { cols: 20, rows: 8 });
    let text = |sel| s.read_screen(sel).expect("read").screen;
    assert_eq!(text(Selection::Top(2)), "l1\nl2\n");
    // The terminal's bottom rows, blank or not.
    assert_eq!(text(Selection::Bottom(3)), "");
    assert_eq!(text(Selection::Bottom(4)), "l5\n");
    assert_eq!(text(Selection::Range { start: 2, end: 4 }), "l2\nl3\nl4\n");
    // Out of range is clamped.
    assert_eq!(text(Selection::Range { start: 4, end: 99 }), "l4\nl5\n");
    assert_eq!(text(Selection::Top(99)), all.screen);
    let bad = s
        .read_screen(Selection::Range { start: 0, end: 2 })
        .expect_err("row 0");
    assert_eq!(bad.kind(), ErrorKind::Invalid);
}

#[test]
fn wait_result_has_seed_000_shape() {
    let s = five_lines();
    let w = s.wait(Until::text("l3"));
    assert!(w.matched);
    assert_eq!(w.reason, Reason::Matched);
    assert_eq!(w.screen, "l1\nl2\nl3\nl4\nl5\n");
    assert_eq!((w.cursor.row, w.cursor.col), (5, 3));
    assert_eq!(w.size, Size { cols: 20, rows: 8 });
    let limit = Duration::from_millis(200);
    let w = s.wait(Until::text("never shown").timeout(limit));
    assert!(!w.matched);
    assert_eq!(w.reason, Reason::Timeout);
    assert_eq!(w.screen, "l1\nl2\nl3\nl4\nl5\n");
    assert!(w.waited >= limit, "{:?}", w.waited);
    // No match: a fixed pause.
    let w = s.wait(Until::nothing().timeout(limit));
    assert!(!w.matched && w.waited >= limit);
    assert!(Until::regex("(").is_err());
}

#[test]
fn write_returns_the_utf8_byte_count() {
    let s = spawn("exec cat");
    assert_eq!(s.write("héllo→\r").expect("write"), 10);
    assert!(s.wait(Until::text("héllo→").timeout(LONG)).matched);
    assert_eq!(s.write(b"\x01\x02").expect("bytes"), 2);
    assert_eq!(s.send_keys(&["Enter"]).expect("keys"), 1);
    let n = s
        .send(&[Input::text("ls"), Input::key("Enter")])
        .expect("send");
    assert_eq!(n, 3);
    let e = s.send_keys(&["NoSuchKey"]).expect_err("unknown key");
    assert_eq!(e.kind(), ErrorKind::Invalid);
    assert!(e.message().contains("NoSuchKey"), "{e}");
}

#[test]
fn step_line_drives_a_repl() {
    let py = Session::spawn(&SessionOptions::new(["python3", "-q"])).expect("python3");
    py.step(&[]).expect("first prompt");
    let r = py.step_line("6 * 7").expect("step");
    assert!(r.output.contains("42"), "{r:?}");
    assert!(!r.is_screen);
    assert!(matches!(r.reason, Reason::Idle | Reason::Quiet), "{r:?}");
    assert!(r.status.running());
    py.kill();
}

#[test]
fn status_and_exit() {
    let s = spawn("exit 3");
    let w = s.wait(Until::exit().timeout(LONG));
    assert_eq!(w.reason, Reason::Exited);
    let st = s.status();
    assert!(!st.running());
    assert_eq!(st.exit, Some(Exit::Code(3)));
    assert_eq!(st.exit_code(), Some(3));
    assert_eq!(s.exit_code(), Some(3));
    assert!(st.pid > 0 && st.pid == s.pid());
    let e = s.write("x").expect_err("exited");
    assert_eq!(e.kind(), ErrorKind::Exited);
    // Killing what has exited is harmless.
    assert_eq!(s.kill(), Some(Exit::Code(3)));
}

#[test]
fn signal_resize_and_kill() {
    let s = spawn("exec sleep 100");
    s.resize(50, 10).expect("resize");
    assert_eq!(
        s.read_screen(Selection::All).expect("read").size,
        Size { cols: 50, rows: 10 }
    );
    assert_eq!(
        s.resize(0, 10).expect_err("zero").kind(),
        ErrorKind::Invalid
    );
    assert_eq!(Signal::from_name("SIGTERM"), Some(Signal::TERM));
    assert_eq!(Signal::from_number(15), Some(Signal::TERM));
    s.signal(Signal::TERM).expect("signal");
    s.wait(Until::exit().timeout(LONG));
    assert_eq!(s.status().exit, Some(Exit::Signal(15)));
    assert_eq!(s.status().exit_code(), Some(143));
    let k = spawn("exec sleep 100");
    assert_eq!(k.kill(), Some(Exit::Signal(9)));
    assert!(!k.running());
}

#[test]
fn output_since_an_offset() {
    let s = spawn("exec cat");
    s.write("abc\r").expect("write");
    assert!(s.wait(Until::text("abc").timeout(LONG)).matched);
    let all = s.output(0);
    assert_eq!(all.start, 0);
    assert!(String::from_utf8_lossy(&all.data).contains("abc"));
    assert_eq!(all.next, s.status().output_end);
    let rest = s.output(all.next);
    assert!(rest.data.is_empty());
    assert_eq!(rest.next, all.next);
}

#[test]
fn screen_of_a_session_has_title_cells_and_modes() {
    let s = spawn("printf '\\033]0;T1\\007\\033[1;31mred\\033[0m wide:界'; exec cat");
    assert!(s.wait(Until::text("wide").timeout(LONG)).matched);
    let shot: Screen = s.screen();
    assert_eq!(shot.title, "T1");
    assert!(!shot.alternate);
    assert_eq!(shot.rows[0], "red wide:界");
    assert_eq!(shot.text(), "red wide:界\n");
    let cells = shot.cells(0);
    assert_eq!(cells[0].text, "r");
    assert!(cells[0].style.bold);
    assert_eq!(cells[0].style.fg, Color::Indexed(1));
    assert!(!cells[3].style.bold);
    let wide = cells.last().expect("cells");
    assert_eq!((wide.text.as_str(), wide.width), ("界", 2));
    assert!(shot.cells(99).is_empty());
    let full = spawn("printf '\\033[?1049hfull'; exec cat");
    assert!(full.wait(Until::text("full").timeout(LONG)).matched);
    assert!(full.screen().alternate);
    assert!(full.with_screen(|v| v.is_alt_screen()));
}

#[test]
fn vt_renders_bytes_alone() {
    let mut term = vt::Screen::new(10, 3, 10);
    term.feed(b"abc\r\n\x1b[4mdef");
    assert_eq!(term.row_text(1), "def");
    let shot = Screen::from(&term);
    assert_eq!(shot.rows, ["abc", "def", ""]);
    assert_eq!((shot.cursor.row, shot.cursor.col), (2, 4));
    assert_eq!(shot.cells(1)[0].style.underline, 1);

    struct Count {
        printed: String,
        csi: usize,
    }
    impl Perform for Count {
        fn print(&mut self, c: char) {
            self.printed.push(c);
        }
        fn csi_dispatch(&mut self, _: &Params, _: &[u8], _: bool, _: u8) {
            self.csi += 1;
        }
    }
    let mut p = Parser::new();
    let mut c = Count {
        printed: String::new(),
        csi: 0,
    };
    p.advance(&mut c, b"a\x1b[31");
    assert!(p.is_mid_sequence());
    p.advance(&mut c, b"mb");
    assert_eq!((c.printed.as_str(), c.csi), ("ab", 1));
}

#[test]
fn pty_server_serves_and_shares_its_session() {
    let sb = Sandbox::new("lib-server");
    let sock = sb.work("s").join("pty.sock");
    let server =
        PtyServer::bind(Endpoint::unix(&sock), &SessionOptions::shell("exec cat")).expect("bind");
    assert_eq!(server.address(), sock.display().to_string());
    assert!(server.is_open());
    let mut rpc = Rpc::unix(&sock);
    let w = rpc.ok("pty/write", json!({"action": {"text": "from the socket"}}));
    assert_eq!(w["written"], 15);
    let s = server.session();
    assert!(s.wait(Until::text("from the socket").timeout(LONG)).matched);
    assert_eq!(s.write("\rfrom the library").expect("write"), 17);
    let r = rpc.ok(
        "pty/wait",
        json!({"match": "from the library", "timeout": 30000}),
    );
    assert_eq!(r["matched"], true);
    assert_eq!(rpc.ok("pty/status", json!({}))["pid"], s.pid());
    drop(rpc);

    // close without kill: the endpoint goes, the program stays.
    server.close(false).expect("close");
    assert!(!server.is_open());
    assert!(!sock.exists());
    assert!(Rpc::try_unix(&sock).is_err());
    assert!(s.running());
    assert_eq!(s.write("x").expect("still writable"), 1);
    // Idempotent; and a later kill still kills.
    server.close(false).expect("again");
    server.close(true).expect("kill");
    assert!(!s.running());
    server.close(true).expect("and again");
}

#[test]
fn pty_server_close_kill_and_client_kill() {
    let sb = Sandbox::new("lib-server-kill");
    let sock = sb.work("k").join("pty.sock");
    let server = PtyServer::bind(
        Endpoint::unix(&sock),
        &SessionOptions::shell("exec sleep 100"),
    )
    .expect("bind");
    let s = server.session().clone();
    server.close(true).expect("close");
    assert!(!s.running());
    assert!(!sock.exists());
    server.close(true).expect("idempotent");
    server.close(false).expect("idempotent");

    // A client's pty/kill ends it as `serve` ends; close is then a no-op.
    let server = PtyServer::bind(
        Endpoint::unix(&sock),
        &SessionOptions::shell("exec sleep 100"),
    )
    .expect("bind again over the removed socket");
    let mut rpc = Rpc::unix(&sock);
    rpc.ok("pty/kill", json!({}));
    let asked = Instant::now();
    while server.is_open() && asked.elapsed() < LONG {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!server.is_open());
    assert!(!server.session().running());
    assert!(!sock.exists());
    server.close(true).expect("after pty/kill");
}

#[test]
fn pty_server_on_tcp_with_a_token() {
    let server = PtyServer::bind(
        Endpoint::tcp_loopback(0, "s3cret"),
        &SessionOptions::shell("exec cat"),
    )
    .expect("bind");
    let port: u16 = server
        .address()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("host:port");
    assert_ne!(port, 0);
    let mut rpc = Rpc::tcp(port);
    let refused = rpc.call("pty/status", json!({}));
    assert!(refused["error"].is_object(), "{refused}");
    let mut rpc = Rpc::tcp(port);
    rpc.ok("auth", json!({"token": "s3cret"}));
    assert_eq!(rpc.ok("pty/status", json!({}))["running"], true);
}

#[test]
fn pty_server_refuses_what_is_in_the_way() {
    let sb = Sandbox::new("lib-server-way");
    let file = sb.work("w").join("not-a-socket");
    std::fs::write(&file, "keep me").expect("write");
    let e = PtyServer::bind(Endpoint::unix(&file), &SessionOptions::shell("cat"))
        .expect_err("a file is in the way");
    assert_eq!(e.kind(), ErrorKind::Failed);
    assert!(e.message().contains("regular file"), "{e}");
    assert_eq!(std::fs::read_to_string(&file).expect("kept"), "keep me");
    let e = PtyServer::bind(
        Endpoint::unix(sb.work("w").join("s")),
        &SessionOptions::new([""]),
    )
    .expect_err("no program");
    assert_eq!(e.kind(), ErrorKind::Invalid);
}

#[test]
fn client_talks_to_the_daemon_with_typed_answers() {
    let sb = Sandbox::new("lib-client");
    // The sandbox's daemon (started by the CLI, so the sandbox reaps it).
    sb.run(&["start", "-s", "warm", "--", "sleep", "100"]).ok();
    let daemon = Client::new().runtime_dir(sb.runtime()).daemon_program(BIN);
    let started = daemon
        .start("py", &SessionOptions::new(["python3", "-q"]).size(60, 12))
        .expect("start");
    assert_eq!(started.session, "py");
    assert!(started.pid > 0);
    assert_eq!(started.size, Size { cols: 60, rows: 12 });
    let r = daemon.step_line("py", "6 * 7").expect("step");
    assert!(r.output.contains("42"), "{r:?}");
    assert_eq!(daemon.write("py", "'é' * 2\r").expect("write"), 9);
    let w = daemon
        .wait("py", Until::text("'éé'").timeout(LONG))
        .expect("wait");
    assert!(w.matched, "{w:?}");
    assert_eq!(w.size, Size { cols: 60, rows: 12 });
    let top = daemon.read_screen("py", Selection::Top(1)).expect("read");
    assert!(top.screen.contains("6 * 7"), "{top:?}");
    daemon.resize("py", 70, 14).expect("resize");
    let st = daemon.status("py").expect("status");
    assert!(st.running());
    assert_eq!(st.size, Size { cols: 70, rows: 14 });
    let names: Vec<String> = daemon
        .list()
        .expect("list")
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert!(names.contains(&"py".to_string()) && names.contains(&"warm".to_string()));
    daemon.signal("warm", Signal::TERM).expect("signal");
    assert_eq!(
        daemon.stop("py", true).expect("stop"),
        Some(Exit::Signal(9))
    );

    // The errors are the CLI's.
    let e = daemon
        .read_screen("nope", Selection::All)
        .expect_err("no such session");
    assert_eq!(e.kind(), ErrorKind::NoSession);
    let cli = sb.run(&["read", "-s", "nope"]);
    assert!(cli.stderr.contains(e.message()), "{} / {e}", cli.stderr);
    let e = daemon
        .send("warm", &[Input::key("NoSuchKey")])
        .expect_err("unknown key");
    assert_eq!(e.kind(), ErrorKind::Invalid);
    assert_eq!(e.code(), Some(-32602));
    daemon.stop("warm", true).expect("stop warm");
}

#[test]
fn targets_and_errors() {
    assert_eq!(Target::default(), Target::local());
    assert!(Target::ssh("me@box").is_ok());
    assert_eq!(
        Target::ssh("").expect_err("empty host").kind(),
        ErrorKind::Invalid
    );
    assert_eq!(
        Target::via(" ").expect_err("empty").kind(),
        ErrorKind::Invalid
    );
    assert!(Target::via("docker exec -i box ptybroker proxy").is_ok());
    // A runtime directory with no daemon: the CLI's words, no daemon started
    // for a call that needs a session.
    let sb = Sandbox::new("lib-nodaemon");
    let c = Client::to(Target::local())
        .runtime_dir(sb.runtime())
        .daemon_program(BIN);
    let e = c.status("x").expect_err("no daemon");
    assert_eq!(e.kind(), ErrorKind::Failed);
    assert!(e.message().contains("no daemon is running"), "{e}");
    assert_eq!(e.to_string(), e.message());
}
