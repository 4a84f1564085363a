//! The static builds (issue 16), built here as `make static` builds them
//! (`cargo build --release --target <musl triple>` with .cargo/config.toml)
//! and driven like the host build: one file with no dynamic section whose
//! CLI, JSON-RPC socket and MCP server work; and the aarch64 one under
//! qemu-user, where the daemon is started by hand and, with no daemon
//! running, started through the emulator by the client itself.
//!
//! A target or emulator that is not installed skips its tests with a line
//! that says how to install it; the rest of the suite runs either way. The
//! binary's size is not asserted here: `make bench` reports it.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{mpsc, OnceLock};
use std::time::Duration;

use common::{eventually, run_bounded, Rpc, Sandbox, BIN, CALL_LIMIT, STATUS_LINE, STOP_LINE};
use serde_json::{json, Value};

const X86_64: &str = "x86_64-unknown-linux-musl";
const AARCH64: &str = "aarch64-unknown-linux-musl";

/// A release build is slow on a loaded machine: a bound, not an expectation.
const BUILD_LIMIT: Duration = Duration::from_secs(1800);

fn rustc_print(what: &str) -> Option<String> {
    let out = Command::new("rustc").arg(what).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Is the standard library for `triple` installed in rustc's sysroot?
fn target_installed(triple: &str) -> bool {
    rustc_print("--print=sysroot").is_some_and(|root| {
        Path::new(root.trim())
            .join("lib/rustlib")
            .join(triple)
            .join("lib")
            .is_dir()
    })
}

/// rust-lld, which links both static builds (.cargo/config.toml), ships in
/// the sysroot beside the host's libraries.
fn rust_lld_installed() -> bool {
    let (Some(root), Some(vv)) = (rustc_print("--print=sysroot"), rustc_print("-vV")) else {
        return false;
    };
    let Some(host) = vv.lines().find_map(|l| l.strip_prefix("host: ")) else {
        return false;
    };
    Path::new(root.trim())
        .join("lib/rustlib")
        .join(host.trim())
        .join("bin/rust-lld")
        .is_file()
}

/// The target directory the test binaries were built in: the release
/// build for `triple` goes beside them, as `make static` puts it.
fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    Path::new(BIN)
        .ancestors()
        .find(|d| d.join("CACHEDIR.TAG").is_file())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// Build the release binary for `triple` once per test process. Cargo lets
/// go of the target directory's lock while tests run, so this can use it.
fn build(triple: &'static str) -> PathBuf {
    static BUILT: [OnceLock<Result<PathBuf, String>>; 2] = [OnceLock::new(), OnceLock::new()];
    let slot = &BUILT[usize::from(triple == AARCH64)];
    let built = slot.get_or_init(|| {
        let dir = target_dir();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = Command::new(cargo);
        // From the package directory, so that .cargo/config.toml applies;
        // without RUSTFLAGS, which would replace its per-target flags.
        cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["build", "--release", "--locked", "--target", triple])
            .env("CARGO_TARGET_DIR", &dir)
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS");
        let out = run_bounded(cmd, BUILD_LIMIT, &format!("cargo build --target {triple}"));
        if !out.status.success() {
            return Err(format!(
                "cargo build --target {triple} failed:\n{}",
                out.stderr
            ));
        }
        Ok(dir.join(triple).join("release/ptybroker"))
    });
    match built {
        Ok(path) => path.clone(),
        Err(e) => panic!("{e}"),
    }
}

/// The static x86_64 build, or `None` (with the skip line) where it cannot
/// be built on this machine.
fn static_x86_64(test: &str) -> Option<PathBuf> {
    if std::env::consts::ARCH != "x86_64" {
        eprintln!("skipped {test}: the x86_64 static build runs on x86_64 machines only");
        return None;
    }
    if !target_installed(X86_64) {
        eprintln!(
            "skipped {test}: target {X86_64} is not installed (install with `rustup target add {X86_64}`)"
        );
        return None;
    }
    if !rust_lld_installed() {
        eprintln!("skipped {test}: rust-lld, which links {X86_64}, is not in rustc's sysroot (a rustup toolchain ships it)");
        return None;
    }
    Some(build(X86_64))
}

/// qemu-aarch64 and the static aarch64 build, or `None` (with the skip
/// line) where either is missing.
fn static_aarch64(test: &str) -> Option<(PathBuf, PathBuf)> {
    if !target_installed(AARCH64) {
        eprintln!(
            "skipped {test}: target {AARCH64} is not installed (install with `rustup target add {AARCH64}`)"
        );
        return None;
    }
    if !rust_lld_installed() {
        eprintln!("skipped {test}: rust-lld, which links {AARCH64}, is not in rustc's sysroot (a rustup toolchain ships it)");
        return None;
    }
    let Some(qemu) = on_path("qemu-aarch64") else {
        eprintln!("skipped {test}: qemu-aarch64 is not on PATH (install with `apt-get install qemu-user`)");
        return None;
    };
    Some((qemu, build(AARCH64)))
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Does the kernel run aarch64 binaries itself (binfmt_misc registered for
/// qemu)? Then the client's exec of itself succeeds, and the emulator
/// fallback is not taken.
fn kernel_runs_aarch64() -> bool {
    if std::env::consts::ARCH == "aarch64" {
        return true;
    }
    let Ok(dir) = std::fs::read_dir("/proc/sys/fs/binfmt_misc") else {
        return false;
    };
    dir.flatten().any(|e| {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        text.starts_with("enabled") && text.contains("aarch64")
    })
}

fn readelf(flag: &str, path: &Path) -> String {
    let out = Command::new("readelf")
        .arg(flag)
        .arg(path)
        .output()
        .expect("readelf (binutils) runs");
    assert!(
        out.status.success(),
        "readelf {flag} {} failed",
        path.display()
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// No dynamic section, no interpreter: the kernel maps the file and jumps
/// to it, with nothing to load or relocate first.
fn assert_fully_static(bin: &Path) {
    let dynamic = readelf("-d", bin);
    assert!(
        dynamic.contains("There is no dynamic section"),
        "{} has a dynamic section:\n{dynamic}",
        bin.display()
    );
    let headers = readelf("-lW", bin);
    for kind in ["INTERP", "DYNAMIC"] {
        assert!(
            !headers.lines().any(|l| l.trim_start().starts_with(kind)),
            "{} has a {kind} program header:\n{headers}",
            bin.display()
        );
    }
    assert!(
        headers.contains("Elf file type is EXEC"),
        "{} should be a plain (non-PIE) executable:\n{headers}",
        bin.display()
    );
}

/// `start`, `step`, `read` and `stop` on a python3 session.
fn cli_session(sb: &Sandbox, session: &str) {
    let start = sb
        .run(&["start", "--session", session, "--", "python3", "-q"])
        .ok();
    start.assert_one_stderr_line(STATUS_LINE);
    wait_match(sb, session, ">>>");
    let mut seen = sb
        .run(&["step", "--session", session, "print(6*7)"])
        .ok()
        .stdout;
    if !seen.contains("42") {
        seen.push_str(&wait_match(sb, session, "42").stdout);
    }
    assert!(seen.contains("42"), "step: {seen:?}");
    let read = sb.run(&["read", "--session", session]).ok();
    assert!(read.stdout.contains("42"), "read: {:?}", read.stdout);
    let stop = sb.run(&["stop", "--session", session]).ok();
    stop.assert_one_stderr_line(STOP_LINE);
}

fn wait_match(sb: &Sandbox, session: &str, text: &str) -> common::Out {
    sb.run(&[
        "wait",
        "--session",
        session,
        "--screen",
        "--match",
        text,
        "--max-wait",
        "30000",
    ])
    .ok()
}

/// The executable the daemon runs, and its command line.
fn daemon_process(sb: &Sandbox) -> (PathBuf, String) {
    let pid = sb.daemon_pid().expect("the daemon logs its pid");
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).expect("daemon exe");
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).expect("daemon cmdline");
    let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
    (exe, cmdline)
}

#[test]
fn the_x86_64_static_build_has_no_dynamic_section() {
    let Some(bin) = static_x86_64("the x86_64 static build's checks") else {
        return;
    };
    assert_fully_static(&bin);
    let out = run_bounded(
        {
            let mut c = Command::new(&bin);
            c.arg("--version");
            c
        },
        CALL_LIMIT,
        "ptybroker --version",
    )
    .ok();
    assert!(out.stdout.starts_with("ptybroker "), "{out:?}");
}

#[test]
fn the_x86_64_static_build_drives_sessions_from_the_cli_and_the_socket() {
    let Some(bin) = static_x86_64("the x86_64 static CLI and JSON-RPC smoke test") else {
        return;
    };
    let sb = Sandbox::with_program("static-cli", &[&bin]);
    // No daemon yet: `start` starts the static binary as the daemon.
    cli_session(&sb, "py");
    let (exe, _) = daemon_process(&sb);
    assert_eq!(
        exe.canonicalize().ok(),
        bin.canonicalize().ok(),
        "the daemon is the static build"
    );

    // The same daemon over its JSON-RPC socket.
    let mut rpc = sb.rpc();
    rpc.ok("pty/start", json!({"session": "c", "argv": ["cat"]}));
    rpc.ok(
        "pty/write",
        json!({"session": "c", "action": [{"text": "hello static"}, {"key": "Enter"}]}),
    );
    rpc.wait_for("c", "hello static\nhello static");
    let r = rpc.ok("pty/read", json!({"session": "c"}));
    assert!(
        r["screen"]
            .as_str()
            .is_some_and(|s| s.contains("hello static")),
        "{r}"
    );
    rpc.ok("pty/stop", json!({"session": "c"}));
}

/// A line-at-a-time MCP client on `ptybroker mcp`'s stdin and stdout.
struct Mcp {
    stdin: std::process::ChildStdin,
    rx: mpsc::Receiver<Value>,
    next: i64,
}

impl Mcp {
    fn send(&mut self, msg: Value) {
        writeln!(self.stdin, "{msg}").expect("write to mcp");
    }

    /// A request and its answer (anything else read on the way is dropped).
    fn ask(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self
                .rx
                .recv_timeout(CALL_LIMIT)
                .unwrap_or_else(|_| panic!("no answer to {method} within {CALL_LIMIT:?}"));
            if m["id"] == id {
                return m;
            }
        }
    }

    /// A tool call that must succeed; its structured result.
    fn tool(&mut self, name: &str, args: Value) -> Value {
        let r = self.ask("tools/call", json!({"name": name, "arguments": args}));
        assert_eq!(r["result"]["isError"], false, "{name}: {r}");
        r["result"]["structuredContent"].clone()
    }
}

#[test]
fn the_x86_64_static_build_serves_mcp() {
    let Some(bin) = static_x86_64("the x86_64 static MCP smoke test") else {
        return;
    };
    let sb = Sandbox::with_program("static-mcp", &[&bin]);
    let mut cmd = sb.command(&["mcp"]);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = cmd.spawn().expect("spawn ptybroker mcp");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let v = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("mcp wrote invalid JSON {line:?}: {e}"));
            if tx.send(v).is_err() {
                break;
            }
        }
    });
    let mut mcp = Mcp { stdin, rx, next: 0 };
    let init = mcp.ask(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "tests/static_build.rs", "version": "1"}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}));
    let t = mcp.tool(
        "terminal_start",
        json!({"shell": "python3", "args": ["-q"]}),
    );
    assert!(t["session_id"].is_string(), "{t}");
    let r = mcp.tool("terminal_run", json!({"command": "echo static"}));
    assert_eq!(r["output"], "static\n", "{r}");
    drop(mcp);
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn the_aarch64_static_build_renders_under_qemu_as_the_host_build_does() {
    let Some((qemu, bin)) = static_aarch64("the aarch64 render test under qemu") else {
        return;
    };
    assert_fully_static(&bin);
    let sb = Sandbox::with_program("arm-render", &[&qemu, &bin]);
    let capture = sb.work("render").join("capture.raw");
    std::fs::write(
        &capture,
        "plain \x1b[1;31mred\x1b[0m\r\nwide \u{4e2d}\u{6587} \u{1f600}\r\n\x1b[5;3Hmoved\x1b[2;1H\x1b[Kcleared\r\n",
    )
    .expect("write capture");
    let file = capture.to_str().expect("utf-8 path");
    let arm = sb.run(&["render", file]).ok();
    let host = Sandbox::new("host-render").run(&["render", file]).ok();
    assert!(arm.stdout.contains("plain red"), "{arm:?}");
    assert_eq!(
        arm.stdout, host.stdout,
        "aarch64 and host render the same screen"
    );
}

#[test]
fn the_aarch64_static_build_runs_sessions_under_qemu() {
    let Some((qemu, bin)) = static_aarch64("the aarch64 session test under qemu") else {
        return;
    };
    // The daemon started by hand, as on a machine where nothing else works.
    let mut sb = Sandbox::with_program("arm-session", &[&qemu, &bin]);
    let daemon = sb.spawn(&["daemon"]);
    let socket = sb.socket();
    let reached = eventually(CALL_LIMIT, || {
        if let Some(st) = sb.child_exited(daemon) {
            panic!("the daemon exited: {st}");
        }
        Rpc::try_unix(&socket).ok()
    });
    assert!(reached.is_some(), "the daemon under qemu never listened");
    cli_session(&sb, "py");
}

#[test]
fn the_aarch64_static_build_starts_its_daemon_through_qemu() {
    let Some((qemu, bin)) = static_aarch64("the aarch64 daemon auto-start test under qemu") else {
        return;
    };
    // No daemon: the client starts one. The kernel cannot exec an aarch64
    // file here (without binfmt), so the client execs qemu-aarch64 from
    // PATH with itself and `daemon`.
    let sb = Sandbox::with_program("arm-autostart", &[&qemu, &bin]);
    cli_session(&sb, "py");
    let (exe, cmdline) = daemon_process(&sb);
    if !kernel_runs_aarch64() {
        assert_eq!(
            exe.canonicalize().ok(),
            qemu.canonicalize().ok(),
            "the daemon runs under the emulator: {cmdline}"
        );
        assert!(cmdline.contains(" daemon"), "{cmdline}");
    }
}

#[test]
fn without_an_emulator_the_client_names_the_command_that_starts_the_daemon() {
    let Some((qemu, bin)) = static_aarch64("the aarch64 no-emulator message test") else {
        return;
    };
    if kernel_runs_aarch64() {
        eprintln!(
            "skipped: this kernel runs aarch64 binaries (binfmt_misc), so the client's exec works"
        );
        return;
    }
    let sb = Sandbox::with_program("arm-noemu", &[&qemu, &bin]);
    let empty = sb.work("empty-path");
    let mut cmd = sb.command(&["start", "--session", "s", "--", "/bin/sh"]);
    cmd.env("PATH", &empty);
    let out = run_bounded(cmd, CALL_LIMIT, "ptybroker start without qemu on PATH");
    assert_eq!(out.code(), 1, "{out:?}");
    let want = format!(
        "start it by hand: `qemu-aarch64 {} daemon &`]",
        bin.display()
    );
    out.assert_one_stderr_line(&format!(
        r"^\[ptybroker: cannot start the daemon: .*no qemu-aarch64 is on PATH; {}$",
        regex_lite::escape(&want)
    ));
}
