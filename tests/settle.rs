//! The kernel's answer to "is the program waiting for input?", for real
//! programs on real PTYs.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ptybroker::pty::{spawn, Pty, SpawnOptions};
use ptybroker::settle::{probe, Readiness};

/// A program on a PTY whose output is drained (and kept) by a thread, as a
/// session's reader would, so that the program never blocks on a full PTY.
struct Running {
    pty: Arc<Pty>,
    child: Child,
    output: Arc<std::sync::Mutex<Vec<u8>>>,
    stop: Arc<AtomicBool>,
    drain: Option<JoinHandle<()>>,
}

impl Running {
    fn start(argv: &[&str]) -> Running {
        let opts = SpawnOptions {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            cwd: None,
            env: vec![
                ("TERM".to_string(), "xterm-256color".to_string()),
                ("PS1".to_string(), "$ ".to_string()),
            ],
            clean_env: false,
            cols: 80,
            rows: 24,
        };
        let (pty, child) = spawn(&opts).expect("spawn");
        let pty = Arc::new(pty);
        let stop = Arc::new(AtomicBool::new(false));
        let output = Arc::new(std::sync::Mutex::new(Vec::new()));
        let drain = {
            let (pty, stop, output) = (pty.clone(), stop.clone(), output.clone());
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let master = pty.master();
                while !stop.load(Ordering::Relaxed) {
                    let mut fds = [rustix::event::PollFd::new(
                        &master,
                        rustix::event::PollFlags::IN,
                    )];
                    let timeout = rustix::event::Timespec {
                        tv_sec: 0,
                        tv_nsec: 20_000_000,
                    };
                    if rustix::event::poll(&mut fds, Some(&timeout)).is_err() {
                        continue;
                    }
                    match rustix::io::read(master, &mut buf) {
                        Ok(0) => break,
                        Ok(n) => output.lock().unwrap().extend_from_slice(&buf[..n]),
                        Err(rustix::io::Errno::AGAIN) | Err(rustix::io::Errno::INTR) => {}
                        Err(_) => break,
                    }
                }
            })
        };
        Running {
            pty,
            child,
            output,
            stop,
            drain: Some(drain),
        }
    }

    fn probe(&self) -> Readiness {
        probe(self.pty.master(), self.pty.pts(), self.child.id() as i32)
    }

    fn write(&self, bytes: &[u8]) {
        rustix::io::write(self.pty.master(), bytes).expect("write to the PTY");
    }

    fn output(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().unwrap()).into_owned()
    }

    /// Probes every 10 ms until `want` has held for 20 probes in a row
    /// (200 ms); panics with the last answer and the output after 10 s.
    /// Programs pass through other states on their way (vim asks the
    /// terminal questions, which this harness leaves unanswered).
    fn settles_on(&self, what: &str, want: impl Fn(&Readiness) -> bool) -> Readiness {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut in_a_row = 0;
        loop {
            let last = self.probe();
            in_a_row = if want(&last) { in_a_row + 1 } else { 0 };
            if in_a_row == 20 {
                return last;
            }
            assert!(
                Instant::now() < deadline,
                "never {what} for 200 ms: last {last:?}; output {:?}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until the output holds `marker`: the program (not a wrapper
    /// such as a pyenv shim, which is "running" too) has started.
    fn started(&self, marker: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.output().contains(marker) {
            assert!(
                Instant::now() < deadline,
                "no {marker:?} in {:?}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn waits(&self) {
        self.settles_on("waiting", |r| *r == Readiness::Waiting);
    }

    /// Busy, with a reason that contains `why`.
    fn busy(&self, why: &str) -> String {
        match self.settles_on(
            &format!("busy ({why})"),
            |r| matches!(r, Readiness::Busy(w) if w.contains(why)),
        ) {
            Readiness::Busy(why) => why,
            other => unreachable!("{other:?}"),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.stop.store(true, Ordering::Relaxed);
        if let Some(drain) = self.drain.take() {
            let _ = drain.join();
        }
    }
}

fn have(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ptybroker-settle-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn bash_at_its_prompt_waits() {
    let bash = Running::start(&["bash", "--norc", "--noprofile", "-i"]);
    bash.waits();
}

#[test]
fn bash_running_a_foreground_job_is_busy_until_it_ends() {
    let bash = Running::start(&["bash", "--norc", "--noprofile", "-i"]);
    bash.waits();
    bash.write(b"sleep 30\r");
    let why = bash.busy("sleeping");
    assert!(why.contains("(sleep)"), "{why}");
    bash.write(b"\x03");
    bash.waits();
}

#[test]
fn without_a_leader_the_group_is_found_by_scanning_proc() {
    let bash = Running::start(&["bash", "--norc", "--noprofile", "-i"]);
    bash.waits();
    assert_eq!(
        probe(bash.pty.master(), bash.pty.pts(), 0),
        Readiness::Waiting
    );
}

#[test]
fn sleep_is_busy() {
    let sleep = Running::start(&["sleep", "30"]);
    let why = sleep.busy("sleeping in");
    assert!(why.contains("nanosleep"), "{why}");
}

#[test]
fn python_sleeping_is_busy() {
    let py = Running::start(&["python3", "-c", "import time; time.sleep(30)"]);
    py.busy("nanosleep");
}

#[test]
fn python_computing_is_busy() {
    let py = Running::start(&["python3", "-c", "print('go', flush=True)\nwhile True: pass"]);
    py.started("go");
    let why = py.busy("running");
    assert!(why.contains("(python3"), "{why}");
}

#[test]
fn python_repl_idle_waits() {
    let py = Running::start(&["python3", "-q"]);
    py.waits();
    py.write(b"import time; time.sleep(30)\r");
    py.busy("nanosleep");
    py.write(b"\x03");
    py.waits();
}

#[test]
fn reading_a_fifo_is_busy() {
    let dir = temp_dir("fifo");
    let fifo = dir.join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let fifo = fifo.to_str().expect("utf-8 temp path");
    // cat blocks in open() until a writer comes.
    let cat = Running::start(&["cat", fifo]);
    cat.busy("openat");
    drop(cat);
    // Opened for reading and writing, the read itself blocks.
    let script = format!("import os, time\nfd = os.open({fifo:?}, os.O_RDWR)\nos.read(fd, 1)");
    let py = Running::start(&["python3", "-c", &script]);
    let why = py.busy("reading fd");
    assert!(why.contains(fifo), "{why}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn reading_a_socket_is_busy() {
    let script = "import socket\na, b = socket.socketpair()\na.recv(1)";
    let py = Running::start(&["python3", "-c", script]);
    py.busy("reading a socket");
}

#[test]
fn selecting_on_stdin_with_a_timeout_waits_most_of_the_time() {
    // Like top: wake every 100 ms, find nothing on stdin, print nothing.
    let script = "import select, sys\nwhile True:\n    select.select([sys.stdin], [], [], 0.1)";
    let py = Running::start(&["python3", "-c", script]);
    py.settles_on("waiting once", |r| *r == Readiness::Waiting);
    let mut waiting = 0;
    for _ in 0..100 {
        if py.probe() == Readiness::Waiting {
            waiting += 1;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(waiting >= 90, "waiting in only {waiting} of 100 probes");
}

#[test]
fn node_repl_waits_in_epoll() {
    if !have("node") {
        eprintln!("node is not installed; skipped");
        return;
    }
    let node = Running::start(&["node"]);
    node.waits();
    node.write(b"setTimeout(() => {}, 30000); while (true) {}\r");
    node.busy("running");
}

#[test]
fn a_helper_thread_parked_on_a_lock_does_not_hide_a_prompt() {
    let script = "import threading\n\
                  threading.Thread(target=threading.Event().wait, daemon=True).start()\n\
                  input('> ')";
    let py = Running::start(&["python3", "-c", script]);
    py.waits();
}

#[test]
fn a_helper_thread_on_a_timer_does_not_hide_a_prompt() {
    // An auto-save or update-check thread that wakes now and then.
    let script = "import threading, time\n\
                  threading.Thread(target=lambda: time.sleep(30), daemon=True).start()\n\
                  input('> ')";
    let py = Running::start(&["python3", "-c", script]);
    py.waits();
}

#[test]
fn a_helper_thread_running_while_the_main_thread_reads_the_terminal_waits() {
    // Issue 14: only input can wake the main thread's read, so the
    // program waits for its user whatever its helper computes.
    let script = "import threading\n\
                  def spin():\n    while True: pass\n\
                  threading.Thread(target=spin, daemon=True).start()\n\
                  input('go> ')";
    let py = Running::start(&["python3", "-c", script]);
    py.started("go>");
    py.waits();
}

#[test]
fn a_helper_thread_running_while_readline_selects_the_terminal_waits() {
    // With readline, input() waits in select() on the terminal alone, no
    // timeout: only input can wake it, as a plain read.
    let script = "import readline, threading\n\
                  def spin():\n    while True: pass\n\
                  threading.Thread(target=spin, daemon=True).start()\n\
                  input('go> ')";
    let py = Running::start(&["python3", "-c", script]);
    py.started("go>");
    py.waits();
}

#[test]
fn a_child_working_while_its_parent_selects_the_terminal_alone_is_background() {
    // A child left running (in the foreground group, no job control) under
    // a parent whose select holds the terminal alone.
    let script = "import readline, subprocess\n\
                  spin = 'import os\\np = os.getppid()\\nwhile os.getppid() == p: pass'\n\
                  subprocess.Popen(['python3', '-c', spin])\n\
                  input('go> ')";
    let py = Running::start(&["python3", "-c", script]);
    py.started("go>");
    py.waits();
}

#[test]
fn a_main_thread_parked_while_a_helper_sleeps_is_busy() {
    let script = "import threading, time\n\
                  t = threading.Thread(target=lambda: time.sleep(30))\n\
                  t.start()\n\
                  t.join()";
    let py = Running::start(&["python3", "-c", script]);
    py.busy("nothing waits for the terminal");
}

#[test]
fn a_helper_thread_reading_a_socket_does_not_hide_a_prompt() {
    let script = "import socket, threading\n\
                  a, b = socket.socketpair()\n\
                  threading.Thread(target=lambda: a.recv(1), daemon=True).start()\n\
                  input('> ')";
    let py = Running::start(&["python3", "-c", script]);
    py.waits();
}

#[test]
fn poll_of_no_fds_is_a_sleep() {
    let py = Running::start(&["python3", "-c", "import select; select.poll().poll(30000)"]);
    py.busy("sleeping in");
}

#[test]
fn vim_waits_and_is_busy_while_a_shell_command_runs() {
    if !have("vim") {
        eprintln!("vim is not installed; skipped");
        return;
    }
    let vim = Running::start(&["vim", "-u", "NONE", "-i", "NONE", "-N"]);
    vim.waits();
    vim.write(b":set number\r");
    vim.waits();
    vim.write(b":!sleep 30\r");
    // vim polls for the child's end (waitpid, then a short sleep), so it is
    // sometimes running, sometimes sleeping: busy either way.
    vim.busy("");
}

#[test]
fn git_waits_at_add_p_and_while_its_editor_runs() {
    if !have("git") || !have("vim") {
        eprintln!("git or vim is not installed; skipped");
        return;
    }
    let dir = temp_dir("git");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(&dir)
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(dir.join("f"), "one\n").expect("write");
    git(&["add", "f"]);
    git(&["commit", "-qm", "one"]);
    std::fs::write(dir.join("f"), "one\ntwo\n").expect("write");

    let run = |argv: &[&str]| {
        let mut opts = vec!["sh", "-c"];
        let cmd = format!(
            "cd {:?} && GIT_EDITOR='vim -u NONE -i NONE -N' git -c user.name=t \
             -c user.email=t@example.com {}; echo done",
            dir,
            argv.join(" ")
        );
        opts.push(&cmd);
        Running::start(&opts)
    };
    let add = run(&["add", "-p"]);
    add.waits();
    assert!(add.output().contains("Stage this hunk"), "{}", add.output());
    drop(add);
    let commit = run(&["commit", "-a"]);
    commit.waits();
    drop(commit);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_parent_waiting_for_its_child_defers_to_the_child() {
    // dash and bash fork cat here (the `; echo` keeps them from exec'ing it)
    // and wait4 for it; cat reads the terminal.
    let sh = Running::start(&["sh", "-c", "cat; echo done"]);
    sh.waits();
    let sh = Running::start(&["sh", "-c", "sleep 30; echo done"]);
    sh.busy("sleeping");
}

#[test]
fn a_writer_blocked_on_a_pipe_to_the_pager_waits_with_it() {
    if !have("less") {
        eprintln!("less is not installed; skipped");
        return;
    }
    // yes fills the pipe and blocks in write; less reads keys from /dev/tty.
    let sh = Running::start(&["sh", "-c", "yes | less; echo done"]);
    sh.waits();
}

#[test]
fn an_exited_program_is_not_waiting() {
    let mut t = Running::start(&["true"]);
    let _ = t.child.wait();
    let r = t.probe();
    assert!(!matches!(r, Readiness::Waiting), "{r:?}");
}

#[test]
fn a_pts_that_is_not_the_terminal_is_not_input() {
    // The same bash, but told its terminal is another path: its read is then
    // of "another fd", which is busy.
    let bash = Running::start(&["bash", "--norc", "--noprofile", "-i"]);
    bash.waits();
    let r = probe(
        bash.pty.master(),
        Path::new("/dev/pts/does-not-exist"),
        bash.child.id() as i32,
    );
    assert!(!matches!(r, Readiness::Waiting), "{r:?}");
}

/// The cost of one probe, printed; run with `--nocapture` to see it. The
/// bound only catches a pathological regression (the caller probes every few
/// milliseconds).
#[test]
fn probe_cost() {
    let mut programs = vec![
        vec!["bash", "--norc", "--noprofile", "-i"],
        vec!["python3", "-q"],
        vec!["sleep", "30"],
    ];
    if have("node") {
        programs.push(vec!["node"]);
    }
    for argv in programs {
        let p = Running::start(&argv);
        if argv[0] == "sleep" {
            p.busy("sleeping");
        } else {
            p.waits();
        }
        let n = 500;
        let mut times: Vec<Duration> = (0..n)
            .map(|_| {
                let start = Instant::now();
                let _ = p.probe();
                start.elapsed()
            })
            .collect();
        times.sort();
        let median = times[n / 2];
        let p95 = times[n * 95 / 100];
        eprintln!(
            "probe {:>8}: median {:>4} µs, p95 {:>4} µs ({:?})",
            argv[0],
            median.as_micros(),
            p95.as_micros(),
            p.probe()
        );
        assert!(median < Duration::from_millis(5), "{argv:?}: {median:?}");
    }
}
