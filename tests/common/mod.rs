//! What every integration test shares: a sandbox per test (its own
//! `XDG_RUNTIME_DIR`, so its own daemon), running the real binary with an
//! upper bound on time, a line-oriented JSON-RPC client, and the /proc checks
//! that prove nothing was left behind.
//!
//! Every process a test starts carries `PTYBROKER_TEST_SANDBOX=<id>` in its
//! environment (the CLI forwards the caller's environment to the programs it
//! starts), so dropping the sandbox can find and kill all of them: the
//! daemon, `serve` processes, session programs and anything they spawned.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use regex_lite::Regex;
use serde_json::{json, Value};

pub const BIN: &str = env!("CARGO_BIN_EXE_ptybroker");

/// Upper bound for any one CLI call; never an expectation of speed.
pub const CALL_LIMIT: Duration = Duration::from_secs(90);

const MARKER: &str = "PTYBROKER_TEST_SANDBOX";

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A status line as seed 002 prints it (with `ptybroker:`): its final
/// clause `still running` (with what the kernel adds), `exited` or
/// `exited: <error>`.
pub const STATUS_LINE: &str = r"^\[ptybroker: \d\d:\d\d:\d\d \| running for \S+, quiet for \S+, (still running(, waiting for input)?|exited|exited: .+)\]$";

/// The line `stop` and `kill-session` print.
pub const STOP_LINE: &str = r#"^\[ptybroker: \d\d:\d\d:\d\d \| ran for \S+, (exited.*|still running), session "[^"]+" stopped\]$"#;

pub fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("test regex")
}

/// What a finished CLI call left.
#[derive(Debug)]
pub struct Out {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    pub fn code(&self) -> i32 {
        self.status.code().unwrap_or(-1)
    }

    /// Panics with everything the call printed unless it succeeded.
    pub fn ok(self) -> Out {
        assert!(
            self.status.success(),
            "ptybroker failed ({}):\nstdout: {}\nstderr: {}",
            self.status,
            self.stdout,
            self.stderr
        );
        self
    }

    /// The last line on stderr: the status line (or the bracketed error).
    pub fn status_line(&self) -> &str {
        self.stderr.lines().last().unwrap_or("")
    }

    /// Asserts that stderr is exactly one line that matches `pattern`.
    pub fn assert_one_stderr_line(&self, pattern: &str) {
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "want one line on stderr, got {lines:?}");
        assert!(
            re(pattern).is_match(lines[0]),
            "stderr line {:?} does not match {pattern}",
            lines[0]
        );
    }
}

/// One test's private world. Dropping it kills everything it started.
pub struct Sandbox {
    /// The test's XDG_RUNTIME_DIR (mode 0700) and scratch space.
    pub root: PathBuf,
    pub id: String,
    children: Vec<Child>,
    /// How `ptybroker` is run: [`BIN`], or another build (a static one, or
    /// an emulator and the binary it runs); see [`Sandbox::with_program`].
    program: Vec<PathBuf>,
}

impl Sandbox {
    pub fn new(name: &str) -> Sandbox {
        Sandbox::with_program(name, &[Path::new(BIN)])
    }

    /// A sandbox whose `ptybroker` calls run `program` (its first element
    /// with the rest as leading arguments, e.g. `[qemu-aarch64, binary]`)
    /// instead of the binary under test.
    pub fn with_program(name: &str, program: &[&Path]) -> Sandbox {
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let id = format!("{}-{n}-{name}", std::process::id());
        let root = std::env::temp_dir().join(format!("pb-it-{id}"));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("create sandbox");
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700))
            .expect("chmod sandbox");
        Sandbox {
            root,
            id,
            children: Vec::new(),
            program: program.iter().map(|p| p.to_path_buf()).collect(),
        }
    }

    /// A scratch directory for the test's files (repositories, scripts).
    pub fn work(&self, name: &str) -> PathBuf {
        let d = self.root.join("work").join(name);
        std::fs::create_dir_all(&d).expect("create work dir");
        d
    }

    /// `$XDG_RUNTIME_DIR/ptybroker`.
    pub fn runtime(&self) -> PathBuf {
        self.root.join("ptybroker")
    }

    pub fn socket(&self) -> PathBuf {
        self.runtime().join("daemon.sock")
    }

    pub fn log(&self) -> PathBuf {
        self.runtime().join("daemon.log")
    }

    /// Apply the sandbox's environment to any command: the runtime dir, the
    /// marker, TERM left to ptybroker's default, and a git without any
    /// system or user configuration and with an identity of its own.
    pub fn env(&self, cmd: &mut Command) {
        cmd.env("XDG_RUNTIME_DIR", &self.root)
            .env(MARKER, &self.id)
            .env_remove("TERM")
            .env_remove("PTYBROKER_TOKEN")
            .env_remove("PYTHONSTARTUP")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "ptybroker tests")
            .env("GIT_AUTHOR_EMAIL", "tests@example.invalid")
            .env("GIT_COMMITTER_NAME", "ptybroker tests")
            .env("GIT_COMMITTER_EMAIL", "tests@example.invalid");
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.program[0]);
        cmd.args(&self.program[1..])
            .args(args)
            .current_dir(&self.root);
        self.env(&mut cmd);
        cmd
    }

    /// Run `ptybroker ARGS` to completion (bounded by [`CALL_LIMIT`]).
    pub fn run(&self, args: &[&str]) -> Out {
        self.run_in(&self.root, args)
    }

    /// As [`Sandbox::run`], from working directory `cwd`.
    pub fn run_in(&self, cwd: &Path, args: &[&str]) -> Out {
        let mut cmd = self.command(args);
        cmd.current_dir(cwd);
        run_bounded(cmd, CALL_LIMIT, &format!("ptybroker {args:?}"))
    }

    /// Run a helper program (git, sh) with the sandbox's environment.
    pub fn tool(&self, cwd: &Path, program: &str, args: &[&str]) -> Out {
        let mut cmd = Command::new(program);
        cmd.args(args).current_dir(cwd);
        self.env(&mut cmd);
        run_bounded(cmd, CALL_LIMIT, &format!("{program} {args:?}")).ok()
    }

    /// Start `ptybroker ARGS` in the background (e.g. `serve`); it is killed
    /// and reaped when the sandbox drops, if it has not exited by then.
    pub fn spawn(&mut self, args: &[&str]) -> usize {
        self.spawn_with(args, &[])
    }

    /// As [`Sandbox::spawn`], with extra environment variables.
    pub fn spawn_with(&mut self, args: &[&str], env: &[(&str, &str)]) -> usize {
        let mut cmd = self.command(args);
        cmd.envs(env.iter().copied());
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let child = cmd.spawn().expect("spawn ptybroker");
        self.children.push(child);
        self.children.len() - 1
    }

    /// Has background process `i` exited (without waiting)?
    pub fn child_exited(&mut self, i: usize) -> Option<ExitStatus> {
        self.children[i].try_wait().ok().flatten()
    }

    pub fn child_pid(&self, i: usize) -> i32 {
        self.children[i].id() as i32
    }

    /// Wait (bounded) for background process `i` to exit; `None` if it did
    /// not within `limit`.
    pub fn wait_child(&mut self, i: usize, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Ok(Some(st)) = self.children[i].try_wait() {
                return Some(st);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Everything background process `i` wrote on stderr (after it exited).
    pub fn child_stderr(&mut self, i: usize) -> String {
        let mut s = String::new();
        if let Some(mut e) = self.children[i].stderr.take() {
            let _ = e.read_to_string(&mut s);
        }
        s
    }

    /// Start `ptybroker serve ARGS --socket PATH` and connect to it once it
    /// accepts. Returns the background index and the connection.
    pub fn serve_unix(&mut self, path: &Path, args: &[&str]) -> (usize, Rpc) {
        let p = path.to_str().expect("utf-8 path");
        let mut all = vec!["serve"];
        all.extend(args);
        all.extend(["--socket", p]);
        let i = self.spawn(&all);
        let rpc = eventually(CALL_LIMIT, || {
            if let Ok(Some(st)) = self.children[i].try_wait() {
                panic!("serve exited early: {st}");
            }
            Rpc::try_unix(path).ok()
        })
        .expect("serve should accept connections");
        (i, rpc)
    }

    /// A JSON-RPC connection to this sandbox's daemon.
    pub fn rpc(&self) -> Rpc {
        Rpc::unix(&self.socket())
    }

    /// The pid of the most recent daemon, from the first line it logs.
    pub fn daemon_pid(&self) -> Option<i32> {
        let log = std::fs::read_to_string(self.log()).ok()?;
        let r = re(r"ptybroker daemon (\d+) listening on");
        r.captures_iter(&log).last().and_then(|c| c[1].parse().ok())
    }

    /// Pids of every live process carrying this sandbox's marker.
    pub fn processes(&self) -> Vec<i32> {
        let want = format!("{MARKER}={}", self.id).into_bytes();
        let mut out = Vec::new();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return out;
        };
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            if pid == std::process::id() as i32 {
                continue;
            }
            let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
                continue;
            };
            if env.split(|b| *b == 0).any(|v| v == want.as_slice())
                && proc_state(pid).is_some_and(|s| s != 'Z')
            {
                out.push(pid);
            }
        }
        out
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        // The polite way first, so sessions end as users end them...
        if let Ok(mut rpc) = Rpc::try_unix_within(&self.socket(), Duration::from_secs(10)) {
            if let Some(list) = rpc.try_call("pty/list", json!({})) {
                let names: Vec<String> = list["result"]["sessions"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|s| s["session"].as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                for n in names {
                    rpc.try_call("pty/stop", json!({"session": n, "force": true}));
                }
            }
        }
        // ...then everything that still carries our marker, by pid.
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = self.processes();
            if left.is_empty() || Instant::now() >= deadline {
                break;
            }
            for pid in left {
                kill(pid, 9);
            }
            thread::sleep(Duration::from_millis(20));
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Run `cmd` with its output captured; kill it and fail past `limit`.
pub fn run_bounded(mut cmd: Command, limit: Duration, what: &str) -> Out {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    let mut so = child.stdout.take().expect("stdout");
    let mut se = child.stderr.take().expect("stderr");
    let t_out = thread::spawn(move || {
        let mut s = Vec::new();
        let _ = so.read_to_end(&mut s);
        s
    });
    let t_err = thread::spawn(move || {
        let mut s = Vec::new();
        let _ = se.read_to_end(&mut s);
        s
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(st) = child.try_wait().expect("try_wait") {
            break st;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not finish within {limit:?}");
        }
        thread::sleep(Duration::from_millis(10));
    };
    let stdout = String::from_utf8_lossy(&t_out.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&t_err.join().unwrap_or_default()).into_owned();
    Out {
        status,
        stdout,
        stderr,
    }
}

/// A newline-delimited JSON-RPC connection (Unix or TCP).
pub struct Rpc {
    reader: BufReader<Box<dyn Read + Send>>,
    writer: Box<dyn Write + Send>,
    next_id: u64,
}

impl Rpc {
    pub fn try_unix(path: &Path) -> std::io::Result<Rpc> {
        Rpc::try_unix_within(path, CALL_LIMIT)
    }

    /// Connect with `limit` on every read.
    pub fn try_unix_within(path: &Path, limit: Duration) -> std::io::Result<Rpc> {
        let s = UnixStream::connect(path)?;
        s.set_read_timeout(Some(limit))?;
        let r = s.try_clone()?;
        Ok(Rpc::new(Box::new(r), Box::new(s)))
    }

    pub fn unix(path: &Path) -> Rpc {
        Rpc::try_unix(path).unwrap_or_else(|e| panic!("connect {}: {e}", path.display()))
    }

    pub fn tcp(port: u16) -> Rpc {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect tcp");
        s.set_read_timeout(Some(CALL_LIMIT)).expect("timeout");
        let r = s.try_clone().expect("clone");
        Rpc::new(Box::new(r), Box::new(s))
    }

    fn new(r: Box<dyn Read + Send>, w: Box<dyn Write + Send>) -> Rpc {
        Rpc {
            reader: BufReader::new(r),
            writer: w,
            next_id: 100,
        }
    }

    /// Send one raw line; `None` when the peer closed (or failed).
    pub fn try_line(&mut self, line: &str) -> Option<Value> {
        self.try_bytes(line.as_bytes())
    }

    /// Send one line of any bytes (not necessarily UTF-8).
    pub fn try_bytes(&mut self, line: &[u8]) -> Option<Value> {
        let mut buf = line.to_vec();
        buf.push(b'\n');
        self.writer.write_all(&buf).ok()?;
        self.writer.flush().ok()?;
        self.read_response()
    }

    /// The next response line, `None` at end of stream.
    pub fn read_response(&mut self) -> Option<Value> {
        let mut resp = String::new();
        match self.reader.read_line(&mut resp) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(
                serde_json::from_str(&resp)
                    .unwrap_or_else(|e| panic!("response is not JSON ({e}): {resp:?}")),
            ),
        }
    }

    /// Send one raw line and return the whole response object.
    pub fn line(&mut self, line: &str) -> Value {
        self.try_line(line)
            .unwrap_or_else(|| panic!("connection closed after {line:?}"))
    }

    fn request(&mut self, method: &str, params: Value) -> (u64, String) {
        self.next_id += 1;
        let id = self.next_id;
        let req = json!({"jsonrpc": "2.0", "method": method, "params": params, "id": id});
        (id, req.to_string())
    }

    pub fn try_call(&mut self, method: &str, params: Value) -> Option<Value> {
        let (_, line) = self.request(method, params);
        self.try_line(&line)
    }

    /// Call a method; returns the whole response, checking its envelope.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let (id, line) = self.request(method, params);
        let resp = self.line(&line);
        assert_eq!(resp["jsonrpc"], "2.0", "{resp}");
        assert_eq!(resp["id"], id, "response id must echo the request: {resp}");
        resp
    }

    /// Call a method that must succeed; returns its result.
    pub fn ok(&mut self, method: &str, params: Value) -> Value {
        let resp = self.call(method, params.clone());
        assert!(
            resp.get("error").is_none() && resp.get("result").is_some(),
            "{method} {params} failed: {resp}"
        );
        resp["result"].clone()
    }

    /// Call a method that must fail; returns the error object.
    pub fn err(&mut self, method: &str, params: Value) -> Value {
        let resp = self.call(method, params.clone());
        assert!(
            resp.get("result").is_none(),
            "{method} {params} should fail: {resp}"
        );
        resp["error"].clone()
    }

    /// Wait (bounded) until `text` is on the screen; returns the wait result.
    pub fn wait_for(&mut self, session: &str, text: &str) -> Value {
        let r = self.ok(
            "pty/wait",
            json!({"session": session, "match": text, "timeout": 30_000}),
        );
        assert_eq!(r["matched"], true, "{text:?} never appeared: {r}");
        r
    }
}

/// The state letter of /proc/PID/stat, `None` if there is no such process.
pub fn proc_state(pid: i32) -> Option<char> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    rest.split_ascii_whitespace().next()?.chars().next()
}

/// `(state, start time in clock ticks)` of a process: the start time tells a
/// reused pid from the original.
pub fn proc_identity(pid: i32) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_ascii_whitespace().collect();
    // After the command name: state is field 3, starttime field 22.
    Some((f.first()?.chars().next()?, f.get(19)?.parse().ok()?))
}

/// Is the process that had `identity` still alive (running or a zombie)?
pub fn still_there(pid: i32, identity: (char, u64)) -> Option<char> {
    proc_identity(pid)
        .filter(|(_, start)| *start == identity.1)
        .map(|(s, _)| s)
}

/// Wait (bounded) until the process is gone: reaped, or at least dead when
/// `allow_zombie` (its parent may not be ours to control). Returns the state
/// it was last seen in, `None` when gone.
pub fn wait_gone(pid: i32, identity: (char, u64), allow_zombie: bool) -> Option<char> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let st = still_there(pid, identity);
        match st {
            None => return None,
            Some('Z') if allow_zombie => return None,
            _ if Instant::now() >= deadline => return st,
            _ => thread::sleep(Duration::from_millis(20)),
        }
    }
}

pub fn kill(pid: i32, sig: i32) {
    if let (Some(p), Some(s)) = (
        rustix::process::Pid::from_raw(pid),
        rustix::process::Signal::from_named_raw(sig),
    ) {
        let _ = rustix::process::kill_process(p, s);
    }
}

/// Is a JSON-RPC connection thread of process `pid` blocked in a wait (on
/// a condition variable, as `pty/wait` is) right now? Lets a test act only
/// once a wait it sent is pending in the server.
pub fn rpc_thread_waiting(pid: i32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|t| {
        let read = |f: &str| std::fs::read_to_string(t.path().join(f)).unwrap_or_default();
        read("comm").trim() == "rpc-conn" && read("wchan").contains("futex")
    })
}

/// Poll `f` until it returns `Some`, for at most `limit`.
pub fn eventually<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        thread::sleep(Duration::from_millis(25));
    }
}

/// A loopback port nobody listens on right now.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// Lines of `text` with surrounding whitespace trimmed.
pub fn lines(text: &str) -> Vec<&str> {
    text.lines().map(str::trim).collect()
}
