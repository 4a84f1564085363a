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

    /// A repository with one committed file of 30 lines, then two edits far
    /// enough apart (lines 2 and 28) that `git add -p` offers two hunks.
    pub fn repo_with_two_hunks(&self) -> PathBuf {
        let repo = self.work("repo");
        self.tool(&repo, "git", &["init", "-q"]);
        let original: String = (1..=30).map(|i| format!("{i}\n")).collect();
        std::fs::write(repo.join("f.txt"), original).expect("write");
        self.tool(&repo, "git", &["add", "f.txt"]);
        self.tool(&repo, "git", &["commit", "-q", "-m", "thirty lines"]);
        let edited: String = (1..=30)
            .map(|i| match i {
                2 => "two\n".to_string(),
                28 => "twenty-eight\n".to_string(),
                _ => format!("{i}\n"),
            })
            .collect();
        std::fs::write(repo.join("f.txt"), edited).expect("write");
        repo
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
            .env_remove("PTYBROKER_HOST")
            .env_remove("PTYBROKER_REMOTE_BIN")
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
///
/// Never the same port twice in one test binary: its tests run in
/// parallel, and the kernel may hand a port just released to the next
/// `bind(0)`, so that two tests' servers would race for it (and a client
/// reach the other test's server).
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    loop {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().expect("addr").port();
        let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

/// Lines of `text` with surrounding whitespace trimmed.
pub fn lines(text: &str) -> Vec<&str> {
    text.lines().map(str::trim).collect()
}

/// Is `cmd` on PATH?
pub fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The name of the user running the tests (whom the test sshd logs in).
pub fn user_name() -> String {
    let out = Command::new("id").arg("-un").output().expect("run id -un");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A private sshd on 127.0.0.1 for one test: its own host key, its own
/// configuration (no PAM, public keys only, the one client key generated
/// here), run in the foreground (`-D -e`) as whoever runs the tests, and
/// killed with everything it started when dropped. Loopback only.
///
/// Beside it, a client configuration (`-F`, since OpenSSH reads
/// `~/.ssh/config` from the passwd home, not `$HOME`) with the alias `box`
/// for it and its host key already trusted, for `ptybroker --host box`
/// through [`Sshd::env`].
pub struct Sshd {
    child: Child,
    pub dir: PathBuf,
    /// The XDG_RUNTIME_DIR of everything ssh runs there.
    pub far: PathBuf,
    pub port: u16,
    pub user: String,
}

impl Sshd {
    /// `None` (after saying why) when sshd or the ssh tools are missing.
    pub fn start(sb: &Sandbox) -> Option<Sshd> {
        let sshd = Path::new("/usr/sbin/sshd");
        if !sshd.exists() || !have("ssh") || !have("ssh-keygen") {
            eprintln!("/usr/sbin/sshd, ssh or ssh-keygen is not installed; skipped");
            return None;
        }
        // As root, sshd wants its privilege separation directory; a
        // container without an ssh service has none.
        if rustix::process::geteuid().is_root() && !Path::new("/run/sshd").exists() {
            if let Err(e) = std::fs::create_dir_all("/run/sshd") {
                eprintln!("sshd needs /run/sshd, which cannot be made ({e}); skipped");
                return None;
            }
        }
        let dir = sb.work("sshd");
        for key in ["host_key", "client_key", "stranger_key"] {
            let path = dir.join(key);
            let st = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(&path)
                .stdout(Stdio::null())
                .status()
                .expect("run ssh-keygen");
            assert!(st.success(), "ssh-keygen {key} failed: {st}");
        }
        // What ssh runs there has a runtime directory of its own (so its
        // daemon is not the local one) and the sandbox's marker.
        let far = sb.root.join("far");
        std::fs::create_dir_all(&far).expect("create the far runtime dir");
        std::fs::set_permissions(&far, std::fs::Permissions::from_mode(0o700))
            .expect("chmod the far runtime dir");
        let port = free_port();
        let config = dir.join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "ListenAddress 127.0.0.1:{port}\n\
                 HostKey {dir}/host_key\n\
                 PidFile none\n\
                 UsePAM no\n\
                 PasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\n\
                 PubkeyAuthentication yes\n\
                 PermitRootLogin prohibit-password\n\
                 AllowStreamLocalForwarding yes\n\
                 AuthorizedKeysFile {dir}/client_key.pub\n\
                 StrictModes no\n\
                 SetEnv XDG_RUNTIME_DIR={far} {MARKER}={id}\n",
                dir = dir.display(),
                far = far.display(),
                id = sb.id,
            ),
        )
        .expect("write sshd_config");
        let host_key = std::fs::read_to_string(dir.join("host_key.pub")).expect("host key");
        let host_key: Vec<&str> = host_key.split_whitespace().take(2).collect();
        std::fs::write(
            dir.join("known_hosts"),
            format!("[127.0.0.1]:{port} {}\n", host_key.join(" ")),
        )
        .expect("write known_hosts");
        let log = std::fs::File::create(dir.join("sshd.log")).expect("sshd.log");
        let child = Command::new(sshd)
            .args(["-D", "-e", "-f"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn sshd");
        let mut me = Sshd {
            child,
            dir,
            far,
            port,
            user: user_name(),
        };
        me.write_client_config("");
        let up = eventually(Duration::from_secs(20), || {
            if let Ok(Some(st)) = me.child.try_wait() {
                panic!("sshd exited ({st}): {}", me.log());
            }
            TcpStream::connect(("127.0.0.1", port)).ok().map(|_| ())
        });
        assert!(up.is_some(), "sshd never listened: {}", me.log());
        Some(me)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("sshd.log")).unwrap_or_default()
    }

    /// The client configuration file.
    pub fn config(&self) -> PathBuf {
        self.dir.join("ssh_config")
    }

    /// (Re)write the client configuration: `extra` Host blocks first (the
    /// first value ssh finds wins), then `box`, its key for `box` and
    /// 127.0.0.1, then what every host shares: no other key, this known_hosts only, never asking.
    pub fn write_client_config(&self, extra: &str) {
        let dir = self.dir.display();
        std::fs::write(
            self.config(),
            format!(
                "{extra}\n\
                 Host box\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n\
                 Host box 127.0.0.1\n  IdentityFile {dir}/client_key\n\
                 Host *\n  IdentitiesOnly yes\n  \
                 UserKnownHostsFile {dir}/known_hosts\n  GlobalKnownHostsFile /dev/null\n  \
                 StrictHostKeyChecking yes\n  PasswordAuthentication no\n",
                port = self.port,
                user = self.user,
            ),
        )
        .expect("write ssh_config");
    }

    /// `ssh` with the test's configuration, as PTYBROKER_SSH_COMMAND.
    pub fn ssh_command(&self) -> String {
        format!("ssh -F {}", self.config().display())
    }

    /// What a `ptybroker --host` call needs: the ssh command, no agent, a
    /// short ControlPersist, and nothing from the caller's own setting.
    pub fn env(&self, cmd: &mut Command) {
        cmd.env("PTYBROKER_SSH_COMMAND", self.ssh_command())
            .env("PTYBROKER_SSH_PERSIST", "5")
            .env_remove("SSH_AUTH_SOCK")
            .env_remove("PTYBROKER_HOST")
            .env_remove("PTYBROKER_REMOTE_BIN");
    }

    /// A remote ptybroker for `--remote-bin`: a script running the test
    /// binary with the far runtime directory (sshd sets it too; a `--via`
    /// command run here needs it) and the sandbox's marker, so the sandbox
    /// ends what it starts.
    pub fn remote_bin(&self, sb: &Sandbox) -> PathBuf {
        let script = self.dir.join("remote-ptybroker");
        write_script(
            &script,
            &format!(
                "#!/bin/sh\nXDG_RUNTIME_DIR='{}' {MARKER}='{}' exec '{BIN}' \"$@\"\n",
                self.far.display(),
                sb.id
            ),
        );
        script
    }

    /// The sshd processes serving connections (not the listener): ending
    /// them cuts every connection as a network failure would.
    pub fn connections(&self) -> Vec<i32> {
        descendants(self.child.id() as i32)
            .into_iter()
            .filter(|p| {
                std::fs::read_to_string(format!("/proc/{p}/comm"))
                    .is_ok_and(|c| c.trim().starts_with("sshd"))
            })
            .collect()
    }

    /// The client's command line, running `remote` on a terminal there.
    pub fn client(&self, remote: &str) -> Vec<String> {
        let key = self.dir.join("client_key");
        let mut v: Vec<String> = [
            "ssh",
            "-F",
            "/dev/null",
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "BatchMode=yes",
            "-o",
            "LogLevel=ERROR",
            "-i",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.push(key.display().to_string());
        v.extend(["-p".to_string(), self.port.to_string(), "-tt".to_string()]);
        v.extend(["127.0.0.1".to_string(), remote.to_string()]);
        v
    }

    /// Close every ssh master under `runtime` (`ssh -O exit`) and return
    /// the pids of ssh processes still naming it after a bounded wait:
    /// none, when nothing was left behind.
    pub fn close_masters(&self, runtime: &Path) -> Vec<i32> {
        let dir = runtime.join("ssh");
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for e in entries.flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "ctl") {
                    let _ = Command::new("ssh")
                        .arg("-F")
                        .arg(self.config())
                        .arg("-o")
                        .arg(format!("ControlPath={}", p.display()))
                        .args(["-O", "exit", "box"])
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .status();
                }
            }
        }
        let want = dir.display().to_string();
        let left = || {
            processes_naming(&want)
                .into_iter()
                .filter(|p| {
                    std::fs::read_to_string(format!("/proc/{p}/comm"))
                        .is_ok_and(|c| c.trim() == "ssh")
                })
                .collect::<Vec<_>>()
        };
        eventually(Duration::from_secs(10), || {
            let l = left();
            l.is_empty().then_some(())
        });
        left()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        // Connections first (sshd's children and theirs), then sshd.
        let pid = self.child.id() as i32;
        for p in descendants(pid) {
            kill(p, 9);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Write an executable script.
pub fn write_script(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod script");
}

/// Live processes (not zombies) whose command line contains `text`.
pub fn processes_naming(text: &str) -> Vec<i32> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(text) && proc_state(pid).is_some_and(|s| s != 'Z') {
            out.push(pid);
        }
    }
    out
}

/// Every live descendant of `root`, from /proc's parent links.
pub fn descendants(root: i32) -> Vec<i32> {
    let mut parent = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                continue;
            };
            if let Some(ppid) = rest.split_ascii_whitespace().nth(1) {
                if let Ok(ppid) = ppid.parse::<i32>() {
                    parent.push((pid, ppid));
                }
            }
        }
    }
    let mut out = vec![];
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (c, _) in parent.iter().filter(|(_, pp)| *pp == p) {
            out.push(*c);
            frontier.push(*c);
        }
    }
    out
}
