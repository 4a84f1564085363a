//! The programs under examples/ run as a user would run them: `cargo test`
//! builds them into target/debug/examples/ beside this test's own binary.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Once;
use std::time::Duration;

use common::{run_bounded, Sandbox, CALL_LIMIT};

static BUILD: Once = Once::new();

/// `target/debug/examples/NAME`, found from this test binary's place
/// (`target/debug/deps/`). `cargo test` builds every example; a run of this
/// file alone (`--test library_examples`) builds them first.
fn example(name: &str) -> PathBuf {
    let me = std::env::current_exe().expect("test binary");
    let debug = me
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/debug");
    let path = debug.join("examples").join(name);
    BUILD.call_once(|| {
        if !path.is_file() {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut cmd = Command::new(cargo);
            cmd.args(["build", "--examples", "--locked"])
                .current_dir(env!("CARGO_MANIFEST_DIR"));
            run_bounded(cmd, Duration::from_secs(600), "cargo build --examples").ok();
        }
    });
    assert!(
        path.is_file(),
        "{} was not built (cargo test builds the examples)",
        path.display()
    );
    path
}

#[test]
fn drive_python_prints_the_answers() {
    let sb = Sandbox::new("ex-python");
    let mut cmd = Command::new(example("drive_python"));
    cmd.args(["6 * 7", "'ab' * 2"]);
    sb.env(&mut cmd);
    let out = run_bounded(cmd, CALL_LIMIT, "drive_python").ok();
    assert!(out.stdout.contains("\n42\n"), "{}", out.stdout);
    assert!(out.stdout.contains("'abab'"), "{}", out.stdout);
    assert!(out.stdout.contains("[idle]") || out.stdout.contains("[quiet]"));
}

#[test]
fn render_file_shows_the_screen_the_bytes_leave() {
    let sb = Sandbox::new("ex-render");
    let file = sb.work("r").join("log");
    std::fs::write(
        &file,
        b"\x1b]2;build\x07compiling 10%\r\x1b[Kcompiling 100%\r\n\x1b[32mok\x1b[0m\r\n",
    )
    .expect("write");
    let mut cmd = Command::new(example("render_file"));
    cmd.arg(&file).args(["40", "5"]);
    let out = run_bounded(cmd, CALL_LIMIT, "render_file").ok();
    assert_eq!(
        out.stdout,
        "compiling 100%\nok\ntitle: build\ncursor: row 3 col 1\n"
    );
    let mut cmd = Command::new(example("render_file"));
    cmd.arg(sb.work("r").join("missing"));
    let out = run_bounded(cmd, CALL_LIMIT, "render_file missing");
    assert_eq!(out.code(), 1);
    assert!(out.stderr.contains("cannot read"), "{}", out.stderr);
}

#[test]
fn host_server_serves_a_shell() {
    let sb = Sandbox::new("ex-server");
    let sock = sb.work("h").join("bash.sock");
    let mut cmd = Command::new(example("host_server"));
    cmd.arg(&sock).arg("bash --norc --noprofile").arg("--once");
    sb.env(&mut cmd);
    let out = run_bounded(cmd, CALL_LIMIT, "host_server").ok();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some(&*format!("listening on {}", sock.display()))
    );
    assert!(lines.contains(&"ready"), "{}", out.stdout);
    assert_eq!(lines.last().copied(), Some("closed"));
    assert!(!sock.exists());
}
