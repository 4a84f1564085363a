//! One session: a program on a PTY, the reader thread that feeds its screen
//! and transcript and reaps the program (woken by a pidfd; a waiter thread
//! does the reaping where there is none), and the waits callers block on.
//! Knows nothing of protocols; every front end calls these methods.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::Child;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use regex_lite::Regex;
use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use rustix::process::{Pid, Signal};

use crate::keys::MouseButton;
use crate::limits;
use crate::pty::{self, Pty, SpawnOptions};
use crate::record::Recorder;
use crate::settle::rule::{self, Due};
use crate::settle::{self, procfs, Readiness};
use crate::sync::{lock, Start};
use crate::transcript::{CharRead, Chunk, Transcript};
use crate::vt::Screen;

/// How to start a session.
#[derive(Clone, Debug)]
pub struct Options {
    pub spawn: SpawnOptions,
    /// TERM for the child; `None` keeps the environment's value, or sets
    /// `xterm-256color` when the environment has none.
    pub term: Option<String>,
    pub transcript_bytes: usize,
    pub scrollback_lines: usize,
    /// Record to this asciicast file from the first byte of output on.
    pub record: Option<std::path::PathBuf>,
}

impl Options {
    pub fn new(argv: Vec<String>) -> Options {
        Options {
            spawn: SpawnOptions {
                argv,
                cwd: None,
                env: Vec::new(),
                clean_env: false,
                cols: limits::DEFAULT_COLS,
                rows: limits::DEFAULT_ROWS,
            },
            term: None,
            transcript_bytes: limits::TRANSCRIPT_BYTES,
            scrollback_lines: limits::SCROLLBACK_LINES,
            record: None,
        }
    }
}

/// The argv that runs a shell command line (seed 000's `cmd`, `serve
/// --cmd`) as the user wrote it: `/bin/sh -c LINE`, so that `cd DIR &&
/// prog`, `NAME=value prog` and `echo hi; exit 3` mean what they mean in a
/// shell. A line that is one plain command (see [`exec_is_transparent`]) is
/// run as `exec LINE`, so that the program is the session's process rather
/// than a child of a waiting sh (not every sh does that by itself).
pub fn shell_argv(line: &str) -> Vec<String> {
    let line = if exec_is_transparent(line) {
        format!("exec {line}")
    } else {
        line.to_string()
    };
    vec!["/bin/sh".into(), "-c".into(), line]
}

/// Would `exec LINE` mean what `LINE` means? Only for one simple command
/// naming an external program: no list, pipe, background job, subshell,
/// group, redirection or line break; no variable assignment first; not a
/// shell keyword or builtin (`exec cd` fails; `exec pwd` runs another pwd).
fn exec_is_transparent(line: &str) -> bool {
    const SHELL_WORDS: &[&str] = &[
        "!", "{", "}", "[[", "if", "then", "else", "elif", "fi", "case", "esac", "for", "while",
        "until", "do", "done", "function", "select", "time", ".", ":", "[", "alias", "bg", "break",
        "builtin", "cd", "command", "continue", "echo", "eval", "exec", "exit", "export", "false",
        "fc", "fg", "getopts", "hash", "jobs", "kill", "local", "newgrp", "printf", "pwd", "read",
        "readonly", "return", "set", "shift", "source", "test", "times", "trap", "true", "type",
        "ulimit", "umask", "unalias", "unset", "wait",
    ];
    if line.contains([';', '&', '|', '(', ')', '<', '>', '\n', '\r', '`']) {
        return false;
    }
    match line.split_whitespace().next() {
        Some(first) => !first.contains('=') && !SHELL_WORDS.contains(&first),
        None => false,
    }
}

/// How a program ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

impl Exit {
    /// The exit code, or 128 + signal as shells report it.
    pub fn code(self) -> i32 {
        match self {
            Exit::Code(c) => c,
            Exit::Signal(s) => 128 + s,
        }
    }
}

/// A point-in-time view of a session's state.
#[derive(Clone, Debug)]
pub struct Status {
    pub pid: i32,
    pub exit: Option<Exit>,
    /// Since the session started.
    pub running_for: Duration,
    /// Since the program last wrote anything (or since start).
    pub quiet_for: Duration,
    pub started_at: SystemTime,
    /// Bytes of transcript held and written in all.
    pub buffered: usize,
    pub output_end: u64,
    pub cols: u16,
    pub rows: u16,
}

impl Status {
    pub fn running(&self) -> bool {
        self.exit.is_none()
    }
}

/// What a wait is for. Conditions combine: the first that holds ends it.
#[derive(Clone, Debug, Default)]
pub struct Until {
    /// A substring of the rendered screen.
    pub text: Option<String>,
    /// A regex over the rendered screen (rows joined with `\n`).
    pub regex: Option<Regex>,
    /// A regex over the output transcript from this absolute offset on (ANSI
    /// kept); `(regex, from)`.
    pub output: Option<(Regex, u64)>,
    /// The program exited (and its output has been drained).
    pub exit: bool,
    /// No output for this long.
    pub quiet: Option<Duration>,
    /// A regex over the plain text (ANSI stripped) of the output, see
    /// [`OutputText`].
    pub output_text: Option<OutputText>,
    /// Give up (as a timeout) once this says so, e.g. when the request
    /// behind the wait is cancelled or its client has gone; looked at every
    /// [`CANCEL_POLL`].
    pub cancel: Option<Cancel>,
    /// The program has answered and waits for input (see [`SettleSpec`]).
    pub settle: Option<SettleSpec>,
}

impl Until {
    /// Does a condition look at the output as it arrives? The exit and a
    /// quiet window do not: each is decided by state read when the wait
    /// wakes on its own timer (or on an exit).
    fn watches_output(&self) -> bool {
        self.text.is_some()
            || self.regex.is_some()
            || self.output.is_some()
            || self.output_text.is_some()
            || self.settle.is_some()
    }
}

/// How a wait decides that the program has answered.
///
/// With `kernel`, settled means: the kernel says every process of the
/// terminal's foreground group is blocked reading the terminal (or polling
/// it) — see [`crate::settle`] — no output is in flight, no reply to a
/// terminal query is pending, the emulator is not inside an escape sequence
/// or a synchronized-output frame, and the input has visibly arrived (output
/// since it, the program seen busy since it, or
/// [`limits::SETTLE_INPUT_GRACE`] passed). Where the kernel cannot tell,
/// and always without `kernel`, settled means quiet for `fallback`.
#[derive(Clone, Copy, Debug)]
pub struct SettleSpec {
    pub fallback: Duration,
    pub kernel: bool,
}

/// At most this many bytes are taken off the master between two
/// publications of output (see `Inner::drain`): a flood is absorbed in
/// batches of this size, a trickle read by read.
const DRAIN_BATCH: usize = 64 * 1024;

/// The reader's buffer: the master hands out at most a few KiB per read.
const READ_BUF: usize = 4 * 1024;

/// A drain that takes this much without the master running dry is a flood:
/// from there on a parser thread absorbs the output while the reader keeps
/// reading (see [`Inner::drain`]).
const FLOOD: usize = 16 * 1024;

/// How long a parser thread waits for more output before it ends.
const PARSER_LINGER: Duration = Duration::from_millis(200);

/// While a parser thread lives, the reader looks at pending emulator
/// replies at least this often (the parser queues them; see `read_loop`).
const PARSER_POLL: Duration = Duration::from_millis(10);

/// How often a wait looks at [`Until::cancel`].
pub const CANCEL_POLL: Duration = Duration::from_millis(100);

/// What makes a wait give up early (see [`Until::cancel`]).
#[derive(Clone, Debug)]
pub enum Cancel {
    /// Raised by another thread (MCP's `notifications/cancelled`).
    Flag(Arc<AtomicBool>),
    /// The socket of the client the wait answers: set once that client has
    /// hung up for good (POLLHUP: on a Unix socket, the peer closed). A
    /// client that shut down only its sending side, or pipelined more
    /// requests, still gets its answer. Over TCP the kernel says POLLHUP
    /// only after a reset, so there the wait's own cap is what bounds it.
    Hangup(Arc<OwnedFd>),
}

impl Cancel {
    /// Watch a client's socket (`None` if it cannot be duplicated: the wait
    /// then simply runs its course).
    pub fn hangup(peer: std::os::fd::BorrowedFd<'_>) -> Option<Cancel> {
        let fd = peer.try_clone_to_owned().ok()?;
        Some(Cancel::Hangup(Arc::new(fd)))
    }

    pub fn is_set(&self) -> bool {
        match self {
            Cancel::Flag(flag) => flag.load(Ordering::Relaxed),
            // No events asked for: HUP and ERR are always reported.
            Cancel::Hangup(fd) => pty::ready_now(fd.as_fd(), PollFlags::empty())
                .intersects(PollFlags::HUP | PollFlags::ERR),
        }
    }
}

/// A regex over the output from an absolute offset, escape sequences and
/// carriage returns stripped, optionally looking only past the echo of a line
/// the caller typed (so that waiting for `done` after typing `echo done`
/// does not match the command itself).
#[derive(Clone, Debug)]
pub struct OutputText {
    pub regex: Regex,
    pub from: u64,
    /// Match only after the first occurrence of this text (when it occurs).
    pub skip_echo: Option<String>,
}

impl OutputText {
    /// Strip and search what arrived since the last call on `scan`; the
    /// first match, if any. Each call costs the new output plus an overlap,
    /// so a wait on a chatty program stays linear.
    fn advance(&self, transcript: &Transcript, scan: &mut Scan) -> Option<String> {
        let chunk = transcript.read(scan.upto.max(self.from), usize::MAX);
        if scan.upto != 0 && chunk.start > scan.upto {
            // The ring lost output we had not seen: start afresh.
            scan.text.clear();
            scan.searched = 0;
        }
        let keep = crate::text::complete_prefix(&chunk.data);
        scan.text
            .push_str(&crate::text::strip_ansi(&chunk.data[..keep]));
        scan.upto = chunk.start + keep as u64;
        if scan.echo_end.is_none() {
            match self.skip_echo.as_deref().filter(|e| !e.is_empty()) {
                None => scan.echo_end = Some(0),
                Some(e) => {
                    if let Some(i) = scan.text.find(e) {
                        scan.echo_end = Some(i + e.len());
                    } else if scan.text.len() > SCAN_OVERLAP {
                        // No echo (the program does not echo): look at all.
                        scan.echo_end = Some(0);
                    }
                }
            }
        }
        let mut from = scan
            .echo_end
            .unwrap_or(0)
            .max(scan.searched.saturating_sub(SCAN_OVERLAP));
        while !scan.text.is_char_boundary(from) {
            from -= 1;
        }
        let found = self
            .regex
            .find(&scan.text[from..])
            .map(|m| m.as_str().to_string());
        scan.searched = scan.text.len();
        // Keep memory bounded once the echo question is settled.
        if let Some(echo_end) = scan.echo_end {
            if scan.text.len() > 4 * SCAN_OVERLAP {
                let mut cut = scan.text.len() - SCAN_OVERLAP;
                while !scan.text.is_char_boundary(cut) {
                    cut -= 1;
                }
                scan.text.drain(..cut);
                scan.echo_end = Some(echo_end.saturating_sub(cut));
                scan.searched -= cut;
            }
        }
        found
    }
}

/// How far back a search looks into output it has already searched, for
/// matches that straddle two arrivals.
const SCAN_OVERLAP: usize = 4 * 1024;

/// Where one wait's search of the output got to.
#[derive(Default)]
struct Scan {
    /// Absolute offset up to which output was stripped into `text`.
    upto: u64,
    text: String,
    /// Where in `text` the search starts past the echo (`None`: not known yet).
    echo_end: Option<usize>,
    /// Length of `text` at the last search.
    searched: usize,
}

/// Why a wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    Matched,
    Exited,
    Quiet,
    /// Settled by the kernel check: the program waits for input.
    Idle,
    Timeout,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Matched => "matched",
            Reason::Exited => "exited",
            Reason::Quiet => "quiet",
            Reason::Idle => "idle",
            Reason::Timeout => "timeout",
        }
    }
}

struct State {
    screen: Screen,
    transcript: Transcript,
    /// Bumped on every batch of output absorbed (see `Inner::drain`).
    generation: u64,
    /// Waits blocked now that want waking for each new output (a match, a
    /// settle, a viewer). Others (the exit, a quiet window: timed by the
    /// state they read when they wake) are woken by exit, resize and
    /// [`Session::poke`] only, so a flood does not wake them per batch.
    watchers: u32,
    last_output: Instant,
    /// When input was last written: a quiet window counts from the later of
    /// this and `last_output`, so a wait right after input never mistakes the
    /// silence before the answer for the answer being complete.
    last_input: Instant,
    exit: Option<(Exit, Instant)>,
    /// Every holder of the slave side is gone (EIO/HUP on the master).
    output_closed: bool,
    /// Replies from the emulator (cursor reports...) not yet written.
    answers: Vec<u8>,
    /// The reader thread has ended.
    reader_done: bool,
    /// Where the next incremental read of a one-shot caller (CLI `step`,
    /// MCP `terminal_read`) starts: everything before it was shown.
    mark: u64,
    /// The mark's character offset (see [`crate::transcript`]), kept for
    /// when the ring has dropped the bytes the mark points into.
    mark_chars: u64,
    /// The screen line of the mark (see [`Session::mark_line`]).
    mark_line: u64,
    /// `mark_line` is the line where the output after the mark begins: the
    /// mark was set at the transcript's end, and the screen was not resized
    /// since (see [`Session::mark_row`]).
    mark_exact: bool,
    /// With `mark_exact`: the cursor's row as the screen showed it when the
    /// mark was set, then a return and a move to the cursor's column (see
    /// [`Session::mark_shown`]).
    mark_shown: Vec<u8>,
    /// Transcript end when input was last written, and the last line of
    /// text that input held (see [`Session::last_input`]).
    input_at: u64,
    /// When the last write of input began (`last_input` is when it ended;
    /// a program may answer before the writer returns); `None` before any.
    input_began: Option<Instant>,
    input_echo: Option<String>,
    /// The last input ended in a lone ESC (the Escape key): see
    /// [`rule::Snapshot::escape_pending`].
    input_escape: bool,
    /// How the program idled when a wait last settled (see
    /// [`rule::Idle`]): the next wait compares its timers with it.
    idle: Option<rule::Idle>,
    /// The timer a wait in progress is letting run out, for `status`.
    holding: Option<rule::Holding>,
}

/// Output the reader took off the master during a flood, in order, for the
/// parser thread to absorb (see [`Inner::drain`]). While a parser lives,
/// every byte read goes through here, so output is absorbed in the order it
/// was read; when none lives, this is empty and holds no memory.
#[derive(Default)]
struct Backlog {
    bytes: Vec<u8>,
    /// A parser thread is running.
    parser: bool,
    /// The reader has ended: the parser absorbs what is left and ends too.
    closing: bool,
}

struct Inner {
    pty: Pty,
    argv: Vec<String>,
    term: String,
    cwd: Option<std::path::PathBuf>,
    pid: i32,
    started: Instant,
    started_at: SystemTime,
    state: Mutex<State>,
    changed: Condvar,
    /// Serialises writers so that one request's bytes are never interleaved
    /// with another's. Holds when a write last timed out with the terminal
    /// full (`None` once the program reads again): a writer queued behind
    /// it that finds the terminal still full fails at once, as the program
    /// has read none of its input for the whole timeout already, instead
    /// of each queued writer waiting a timeout of its own.
    writer: Mutex<Option<Instant>>,
    /// Serialises steps (write, wait, collect): two callers stepping the
    /// same session at once each get their own answer, in turn.
    /// (true while one holds the turn; `step_done` wakes the next.)
    steps: Mutex<bool>,
    step_done: Condvar,
    /// Closing (dropping) the write end wakes the reader thread to exit.
    stop_reader: Mutex<Option<OwnedFd>>,
    /// The mouse button a caller holds down (seed 003: one at a time).
    mouse_held: Mutex<Option<MouseButton>>,
    /// The rows of the last screen shown to a one-shot caller (see
    /// [`crate::ops::screen_changes`]): at most rows x cols of text.
    shown: Mutex<Vec<String>>,
    /// An asciicast recording in progress. Its own lock, so that its file
    /// is written with `state` let go: a slow disk stalls the recording, not
    /// the session's readers and waiters. Lock order: `state`, then this.
    recorder: Mutex<Option<Recorder>>,
    /// The reader thread is between taking bytes off the master and
    /// absorbing them or handing them to the parser: output is in our hands
    /// but not yet in the state, so an empty master says nothing about
    /// whether the program is done.
    reading: AtomicBool,
    /// Output handed to the parser thread and not yet absorbed (see
    /// [`Backlog`]); with `reading`, what [`Session::look`] calls absorbing.
    handed: AtomicUsize,
    /// `State::answers` is not empty (set and cleared under `state`): the
    /// reader looks here on every poll round, so that during a flood it
    /// does not wait for the state while the parser holds it for a batch.
    answering: AtomicBool,
    /// Output taken off the master during a flood, waiting for the parser.
    backlog: Mutex<Backlog>,
    /// The parser waits here for output, the reader for room, and the end
    /// of the reader for the end of the parser.
    backlog_moved: Condvar,
    /// People watching (`pty/attach`), and how many of them may type.
    viewers: AtomicU32,
    typists: AtomicU32,
}

/// One attached viewer, counted while it lives (see [`Session::viewer`]).
pub struct Viewer<'a> {
    inner: &'a Inner,
    types: bool,
}

impl Drop for Viewer<'_> {
    fn drop(&mut self) {
        self.inner.viewers.fetch_sub(1, Ordering::SeqCst);
        if self.types {
            self.inner.typists.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// The signals a terminal sends its foreground process group for keys
/// (Ctrl+C, Ctrl+\\, Ctrl+Z); [`Session::signal`] sends them the same way.
pub const KEYBOARD_SIGNALS: [Signal; 3] = [Signal::INT, Signal::QUIT, Signal::TSTP];

/// What acting on a session whose program has exited fails with.
pub const EXITED: &str = "the program has exited";

/// The error behind [`EXITED`], so that a front end can tell the refusal
/// from other failures (see [`is_exited`]) and word it its own way.
#[derive(Debug)]
struct ProgramExited;

impl std::fmt::Display for ProgramExited {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(EXITED)
    }
}

impl std::error::Error for ProgramExited {}

fn exited() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, ProgramExited)
}

/// Was `e` a refusal because the program has exited?
pub fn is_exited(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<ProgramExited>())
}

/// A step's turn at its session (see [`Session::step_turn`]); dropping it
/// gives the turn to the next step in line.
pub struct StepTurn<'a>(&'a Inner);

impl Drop for StepTurn<'_> {
    fn drop(&mut self) {
        *lock(&self.0.steps) = false;
        self.0.step_done.notify_all();
    }
}

/// A running (or exited) program on a PTY. Dropping it kills the program.
pub struct Session {
    inner: Arc<Inner>,
}

impl Session {
    pub fn start(opts: &Options) -> io::Result<Session> {
        let mut spawn_opts = opts.spawn.clone();
        // TERM is always set (the daemon's own may be missing or wrong for a
        // PTY) unless the caller names one.
        let has_term = spawn_opts.env.iter().any(|(k, _)| k == "TERM");
        if let Some(t) = &opts.term {
            spawn_opts.env.retain(|(k, _)| k != "TERM");
            spawn_opts.env.push(("TERM".into(), t.clone()));
        } else if !has_term {
            spawn_opts
                .env
                .push(("TERM".into(), "xterm-256color".into()));
        }
        let term = spawn_opts
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == "TERM")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        // Created before the program starts, so that a bad path starts
        // nothing and the recording misses none of the output.
        let recorder = match &opts.record {
            Some(path) => Some(Recorder::create(
                path,
                spawn_opts.cols,
                spawn_opts.rows,
                &spawn_opts.argv,
                &term,
            )?),
            None => None,
        };
        // Made before the program runs, so that failing here leaves nothing.
        let (stop_rx, stop_tx) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        let (pty, child) = match pty::spawn(&spawn_opts) {
            Ok(spawned) => spawned,
            Err(e) => {
                if let Some(r) = recorder {
                    let path = r.path().to_path_buf();
                    drop(r);
                    let _ = std::fs::remove_file(path);
                }
                return Err(e);
            }
        };
        let now = Instant::now();
        let inner = Arc::new(Inner {
            pid: child.id() as i32,
            pty,
            argv: spawn_opts.argv.clone(),
            term,
            cwd: spawn_opts.cwd.clone(),
            started: now,
            started_at: SystemTime::now(),
            state: Mutex::new(State {
                screen: Screen::new(spawn_opts.cols, spawn_opts.rows, opts.scrollback_lines),
                transcript: Transcript::new(opts.transcript_bytes),
                generation: 0,
                watchers: 0,
                last_output: now,
                last_input: now,
                exit: None,
                output_closed: false,
                answers: Vec::new(),
                reader_done: false,
                mark: 0,
                mark_chars: 0,
                mark_line: 0,
                mark_exact: false,
                mark_shown: Vec::new(),
                input_at: 0,
                input_began: None,
                input_echo: None,
                input_escape: false,
                idle: None,
                holding: None,
            }),
            changed: Condvar::new(),
            writer: Mutex::new(None),
            steps: Mutex::new(false),
            step_done: Condvar::new(),
            stop_reader: Mutex::new(Some(stop_tx)),
            mouse_held: Mutex::new(None),
            shown: Mutex::new(Vec::new()),
            recorder: Mutex::new(recorder),
            reading: AtomicBool::new(false),
            handed: AtomicUsize::new(0),
            answering: AtomicBool::new(false),
            backlog: Mutex::new(Backlog::default()),
            backlog_moved: Condvar::new(),
            viewers: AtomicU32::new(0),
            typists: AtomicU32::new(0),
        });
        // On Linux the reader thread also reaps the program, woken by a
        // pidfd: one thread per session rather than two (each thread costs
        // the touched pages of its stack). Without a pidfd, a waiter thread
        // blocks in wait().
        let pidfd = pty::child_pidfd(&child);
        // Handed to the thread that reaps it; taken back (killed and reaped)
        // if that thread cannot be started, so that no process is left behind.
        let slot = Arc::new(Mutex::new(Some(child)));
        let give_up = |e: io::Error| {
            if let Some(mut child) = lock(&slot).take() {
                let _ = child.kill();
                let _ = child.wait();
            }
            e
        };
        let reader = Arc::clone(&inner);
        let taken = Arc::clone(&slot);
        let reaps = pidfd.is_some();
        thread::Builder::new()
            .name("pty-reader".into())
            .stack_size(128 * 1024)
            .start(move || {
                let reap = match pidfd {
                    Some(fd) => lock(&taken).take().map(|child| (child, fd)),
                    None => None,
                };
                drop(taken);
                reader.read_loop(stop_rx, reap)
            })
            .map_err(give_up)?;
        if !reaps {
            let waiter = Arc::clone(&inner);
            let taken = Arc::clone(&slot);
            thread::Builder::new()
                .name("pty-waiter".into())
                .stack_size(64 * 1024)
                .start(move || {
                    let child = lock(&taken).take();
                    drop(taken);
                    if let Some(child) = child {
                        waiter.wait_child(child);
                    }
                })
                .map_err(give_up)?;
        }
        Ok(Session { inner })
    }

    pub fn pid(&self) -> i32 {
        self.inner.pid
    }

    /// The command line the session was started with.
    pub fn argv(&self) -> &[String] {
        &self.inner.argv
    }

    /// The working directory it was started in (`None`: the starter's).
    pub fn cwd(&self) -> Option<&std::path::Path> {
        self.inner.cwd.as_deref()
    }

    pub fn status(&self) -> Status {
        let st = lock(&self.inner.state);
        // The clocks stop when the program exits: it ran for as long as it
        // ran, however much later someone asks.
        let now = st.exit.map_or_else(Instant::now, |(_, at)| at);
        Status {
            pid: self.inner.pid,
            exit: st.exit.map(|(e, _)| e),
            running_for: now.saturating_duration_since(self.inner.started),
            quiet_for: now.saturating_duration_since(st.last_output),
            started_at: self.inner.started_at,
            buffered: st.transcript.len(),
            output_end: st.transcript.end(),
            cols: st.screen.cols(),
            rows: st.screen.rows(),
        }
    }

    /// Count a viewer (one that may type when `types`) while the guard lives.
    pub fn viewer(&self, types: bool) -> Viewer<'_> {
        self.inner.viewers.fetch_add(1, Ordering::SeqCst);
        if types {
            self.inner.typists.fetch_add(1, Ordering::SeqCst);
        }
        Viewer {
            inner: &self.inner,
            types,
        }
    }

    /// Wake everything waiting on this session to look again.
    pub fn poke(&self) {
        self.inner.changed.notify_all();
    }

    /// Viewers attached, and how many of them may type.
    pub fn viewers(&self) -> (u32, u32) {
        (
            self.inner.viewers.load(Ordering::SeqCst),
            self.inner.typists.load(Ordering::SeqCst),
        )
    }

    /// Wait until output past `generation` arrives, the program exits or
    /// `timeout` passes; the generation now. A viewer's clock: it draws
    /// what changed, no more often than it wants.
    pub fn wait_change(&self, generation: u64, timeout: Duration) -> u64 {
        let mut st = lock(&self.inner.state);
        st.watchers += 1;
        let (mut st, _) = self
            .inner
            .changed
            .wait_timeout_while(st, timeout, |st| {
                st.generation == generation && !st.reader_done && st.exit.is_none()
            })
            .unwrap_or_else(|e| e.into_inner());
        st.watchers -= 1;
        st.generation
    }

    /// Run `f` on the current screen, under the session's lock: keep it short.
    pub fn with_screen<R>(&self, f: impl FnOnce(&Screen) -> R) -> R {
        f(&lock(&self.inner.state).screen)
    }

    /// Absolute offset just past the last byte of output so far.
    pub fn output_end(&self) -> u64 {
        lock(&self.inner.state).transcript.end()
    }

    /// The read mark: where the next incremental read starts.
    pub fn mark(&self) -> u64 {
        lock(&self.inner.state).mark
    }

    /// Move the read mark to `offset`, remembering the line the cursor is on
    /// (see [`Session::mark_line`]).
    pub fn set_mark(&self, offset: u64) {
        let mut st = lock(&self.inner.state);
        st.mark = offset;
        st.mark_chars = st.transcript.char_offset(offset);
        let scr = &st.screen;
        let row = if scr.is_alt_screen() {
            0
        } else {
            scr.cursor().row
        };
        let exact = !scr.is_alt_screen();
        st.mark_line = scr.history_total() + u64::from(row);
        st.mark_exact = exact && offset == st.transcript.end();
        let mut shown = std::mem::take(&mut st.mark_shown);
        shown.clear();
        if st.mark_exact {
            let scr = &st.screen;
            let (row, col) = (scr.cursor().row, scr.cursor_column());
            shown.extend_from_slice(scr.row_text(usize::from(row)).as_bytes());
            shown.push(b'\r');
            if col > 0 {
                shown.extend_from_slice(format!("\x1b[{col}C").as_bytes());
            }
        }
        st.mark_shown = shown;
    }

    /// The line the output after the mark goes on from, as the screen
    /// showed it when the mark was set (text, a return, a move to the
    /// cursor's column); empty unless that is known exactly (see
    /// [`Session::mark_row`]). For the line view where the bytes that drew
    /// the line moved across lines (a prompt redrawn in place).
    pub fn mark_shown(&self) -> Vec<u8> {
        let st = lock(&self.inner.state);
        if st.mark_exact {
            st.mark_shown.clone()
        } else {
            Vec::new()
        }
    }

    /// The screen row (from 0) where the output after the mark began, and
    /// the cursor's row now, when that is known exactly (the mark was set
    /// where the output ended, and no resize has moved lines since) and the
    /// row is still on the screen.
    pub fn mark_row(&self) -> Option<(usize, usize)> {
        let st = lock(&self.inner.state);
        let row = st.mark_line.checked_sub(st.screen.history_total())?;
        let cursor = usize::from(st.screen.cursor().row);
        (st.mark_exact && row < u64::from(st.screen.rows())).then_some((row as usize, cursor))
    }

    /// The absolute line (see [`Screen::history_total`]) the cursor was on
    /// when the mark was last set: where the output since the mark began.
    pub fn mark_line(&self) -> u64 {
        lock(&self.inner.state).mark_line
    }

    /// Start an asciicast v2 recording of output, input and resizes to `path`.
    pub fn start_recording(&self, path: &std::path::Path) -> io::Result<()> {
        let (cols, rows) = {
            let st = lock(&self.inner.state);
            (st.screen.cols(), st.screen.rows())
        };
        let busy = |r: &Recorder| {
            io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("already recording to {}", r.path().display()),
            )
        };
        if let Some(r) = &*lock(&self.inner.recorder) {
            return Err(busy(r));
        }
        // Opened without the lock held: opening a FIFO waits for its reader,
        // and the session's output must not wait with it.
        let new = Recorder::create(path, cols, rows, &self.inner.argv, &self.inner.term)?;
        let mut rec = lock(&self.inner.recorder);
        if let Some(r) = &*rec {
            // Another caller started one meanwhile: theirs stands.
            let (e, same) = (busy(r), r.path() == path);
            drop(rec);
            let _ = new.finish();
            if !same {
                let _ = std::fs::remove_file(path);
            }
            return Err(e);
        }
        *rec = Some(new);
        Ok(())
    }

    /// Finish the recording; returns its path and event count, or `None`.
    pub fn stop_recording(&self) -> io::Result<Option<(std::path::PathBuf, u64)>> {
        let rec = lock(&self.inner.recorder).take();
        match rec {
            Some(r) => {
                let n = r.events();
                Ok(Some((r.finish()?, n)))
            }
            None => Ok(None),
        }
    }

    /// Add a marker event to the recording, if one is running.
    pub fn record_marker(&self, label: &str) -> io::Result<bool> {
        match lock(&self.inner.recorder).as_mut() {
            Some(r) => r.marker(label).map(|()| true),
            None => Ok(false),
        }
    }

    /// The path being recorded to, if any.
    pub fn recording(&self) -> Option<std::path::PathBuf> {
        lock(&self.inner.recorder)
            .as_ref()
            .map(|r| r.path().to_path_buf())
    }

    /// Where the output stood when input was last written (0 before any),
    /// and the last line of text in that input as the terminal would echo
    /// it (`None` when it held only keys such as Enter or Ctrl+C).
    pub fn last_input(&self) -> (u64, Option<String>) {
        let st = lock(&self.inner.state);
        (st.input_at, st.input_echo.clone())
    }

    /// The first match of `what` in the output now, if any.
    pub fn find_output(&self, what: &OutputText) -> Option<String> {
        let st = lock(&self.inner.state);
        what.advance(&st.transcript, &mut Scan::default())
    }

    /// Live (not zombie) direct children of the session's program.
    pub fn children(&self) -> Vec<i32> {
        procfs::children(self.inner.pid)
    }

    /// SIGKILL every child of the session's program together with all of
    /// its descendants, keeping the program itself (a shell stays usable).
    /// Returns the pids signalled.
    pub fn kill_children(&self) -> Vec<i32> {
        let mut killed = Vec::new();
        // Twice: a tree member may fork while the first pass runs.
        for _ in 0..2 {
            for pid in procfs::descendants(self.inner.pid) {
                if let Some(p) = Pid::from_raw(pid) {
                    if rustix::process::kill_process(p, Signal::KILL).is_ok()
                        && !killed.contains(&pid)
                    {
                        killed.push(pid);
                    }
                }
            }
        }
        killed
    }

    /// Up to `max` bytes of raw output from absolute offset `from`.
    pub fn output(&self, from: u64, max: usize) -> Chunk {
        lock(&self.inner.state).transcript.read(from, max)
    }

    /// Up to `max` bytes of raw output from character offset `since`, or
    /// from the read mark, addressed in characters as MCP `terminal_read`
    /// is (see [`Transcript::read_chars`]).
    pub fn output_chars(&self, since: Option<u64>, max: usize) -> CharRead {
        let st = lock(&self.inner.state);
        let t = &st.transcript;
        let from = since.unwrap_or(if st.mark >= t.start() {
            t.char_offset(st.mark)
        } else {
            st.mark_chars
        });
        t.read_chars(from, max)
    }

    /// The character offsets (as [`Session::output_chars`] takes them) of
    /// the transcript's bytes `from..to`, if the ring still holds them all.
    pub fn chars_of(&self, from: u64, to: u64) -> Option<(u64, u64)> {
        let st = lock(&self.inner.state);
        let t = &st.transcript;
        (t.start() <= from && from <= to && to <= t.end())
            .then(|| (t.char_offset(from), t.char_offset(to)))
    }

    /// Hold this for the whole of a step: other steps of this session wait.
    /// `None` if `cancel` is set first, or the turn has not come by
    /// `deadline`: waiting in line counts against the caller's cap, and a
    /// caller that has gone types nothing.
    pub fn step_turn(&self, deadline: Instant, cancel: Option<&Cancel>) -> Option<StepTurn<'_>> {
        let mut busy = lock(&self.inner.steps);
        loop {
            if cancel.is_some_and(Cancel::is_set) {
                return None;
            }
            if !*busy {
                *busy = true;
                return Some(StepTurn(&self.inner));
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            // Woken when the turn is given back; the caller's cancel is
            // looked at as often as a wait looks at it.
            let dur = CANCEL_POLL.min(deadline - now);
            busy = self
                .inner
                .step_done
                .wait_timeout(busy, dur)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Write bytes to the program's terminal. Fails if the program has exited
    /// or has not read its input for [`limits::WRITE_TIMEOUT`].
    pub fn write(&self, bytes: &[u8]) -> io::Result<usize> {
        let mut stalled = lock(&self.inner.writer);
        if lock(&self.inner.state).exit.is_some() {
            return Err(exited());
        }
        {
            let mut st = lock(&self.inner.state);
            st.last_input = Instant::now();
            st.input_began = Some(st.last_input);
            st.input_at = st.transcript.end();
            st.input_echo = echo_line(bytes);
            st.input_escape = bytes.last() == Some(&0x1b);
        }
        let master = self.inner.pty.master();
        let r = match *stalled {
            // An earlier write timed out with the terminal full: one try
            // first; only if the program has read since does this write
            // get a timeout of its own.
            Some(since) if !bytes.is_empty() => match rustix::io::write(master, bytes) {
                Ok(n) => write_all(master, &bytes[n..], limits::WRITE_TIMEOUT),
                Err(Errno::AGAIN) => Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "the program has not read its input since an earlier write timed out {}s ago; {} bytes were not sent",
                        since.elapsed().as_secs(),
                        bytes.len()
                    ),
                )),
                Err(_) => write_all(master, bytes, limits::WRITE_TIMEOUT),
            },
            _ => write_all(master, bytes, limits::WRITE_TIMEOUT),
        };
        lock(&self.inner.state).last_input = Instant::now();
        *stalled = match &r {
            Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                Some(stalled.unwrap_or_else(Instant::now))
            }
            Ok(()) if bytes.is_empty() => *stalled,
            _ => None,
        };
        r?;
        self.inner.record(|rec| rec.input(bytes));
        Ok(bytes.len())
    }

    /// Resize the terminal (and the screen with it). Refused, changing
    /// nothing, once the program has exited: its last screen stays as it was.
    pub fn resize(&self, cols: u16, rows: u16) -> io::Result<()> {
        let mut st = lock(&self.inner.state);
        if st.exit.is_some() {
            return Err(exited());
        }
        st.screen.resize(cols, rows);
        // Reflow moved the lines the mark counted.
        st.mark_exact = false;
        self.inner.pty.set_size(cols, rows)?;
        self.inner.changed.notify_all();
        drop(st);
        self.inner.record(|rec| rec.resize(cols, rows));
        Ok(())
    }

    /// Wait, at most `limit` after the last input, until that input has been
    /// taken in: a job other than the program has the terminal and has
    /// started its own program (a shell ran the command line), or the
    /// program waits on the terminal again with nothing left unread and has
    /// answered since (echo, a prompt). Polled every [`limits::LAND_POLL`]:
    /// nothing wakes a waiter when a group takes the terminal.
    pub fn let_input_land(&self, limit: Duration) {
        let deadline = {
            let st = lock(&self.inner.state);
            if st.input_began.is_none() || st.exit.is_some() {
                return;
            }
            st.last_input + limit
        };
        while Instant::now() < deadline && !self.input_landed() {
            thread::sleep(limits::LAND_POLL);
        }
    }

    fn input_landed(&self) -> bool {
        let answered = {
            let st = lock(&self.inner.state);
            if st.exit.is_some() {
                return true;
            }
            st.transcript.end() > st.input_at
        };
        let master = self.inner.pty.master();
        let pid = self.inner.pid;
        match rustix::termios::tcgetpgrp(master).map(|g| g.as_raw_nonzero().get()) {
            // A job has the terminal, and runs its own program: a shell's
            // child before its exec still takes Ctrl+C as the shell would,
            // and goes on to run the command.
            Ok(job) if job != pid => return procfs::comm(job) != procfs::comm(pid),
            _ => {}
        }
        // What the program has not read yet, as its end of the terminal
        // counts it (a line, in canonical mode, only once complete).
        // (Close-on-exec: a program another session starts meanwhile must
        // not inherit this terminal.) Unknown counts as unread.
        use rustix::fs::OFlags;
        let unread = rustix::fs::open(
            self.inner.pty.pts(),
            OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .and_then(rustix::io::ioctl_fionread)
        .unwrap_or(1);
        answered && unread == 0 && matches!(self.readiness(), Readiness::Waiting)
    }

    /// A caller's signal: [`Session::signal`] while the program runs,
    /// refused once it has exited (what it left behind is for `stop` to end).
    pub fn send_signal(&self, sig: Signal) -> io::Result<()> {
        if lock(&self.inner.state).exit.is_some() {
            return Err(exited());
        }
        self.signal(sig);
        Ok(())
    }

    /// Send `sig` to every process of the session: the child's process group,
    /// the terminal's foreground group and any other member of its session.
    /// The keyboard's signals (INT, QUIT, TSTP) go, as the terminal itself
    /// sends them for Ctrl+C, Ctrl+\\ and Ctrl+Z, to the foreground group
    /// only (none once the program has exited): a shell's background jobs
    /// live on.
    pub fn signal(&self, sig: Signal) {
        let exited = lock(&self.inner.state).exit.is_some();
        if KEYBOARD_SIGNALS.contains(&sig) {
            if !exited {
                if let Ok(fg) = rustix::termios::tcgetpgrp(self.inner.pty.master()) {
                    let _ = rustix::process::kill_process_group(fg, sig);
                }
            }
            return;
        }
        // Members are found by session id, which outlives the leader: a
        // background job of an exited shell is still reached. But if the
        // reaped leader's pid is alive again, it was reused by someone else's
        // process, and its session is not ours.
        if exited && procfs::exists(self.inner.pid) {
            return;
        }
        let members = procfs::session_groups(self.inner.pid);
        // Each process gets one copy. A program that handles the signal
        // and exits (a Python SIGTERM handler) resets its handlers on the
        // way out: a second copy, sent a moment later by a busy daemon,
        // would kill it mid-exit and lose its exit status.
        let mut groups = Vec::new();
        // Groups are addressed only while the leader runs: once it is
        // reaped its pid may be reused.
        if !exited {
            groups.push(self.inner.pid);
            if let Ok(fg) = rustix::termios::tcgetpgrp(self.inner.pty.master()) {
                if fg.as_raw_nonzero().get() != self.inner.pid {
                    groups.push(fg.as_raw_nonzero().get());
                }
            }
            for &g in &groups {
                if let Some(p) = Pid::from_raw(g) {
                    let _ = rustix::process::kill_process_group(p, sig);
                }
            }
        }
        for (pid, pgrp) in members {
            if groups.contains(&pgrp) {
                continue;
            }
            if let Some(p) = Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(p, sig);
            }
        }
    }

    /// Every holder of the terminal's slave side is gone: no more output
    /// can come, whether or not the program has exited.
    pub fn is_output_closed(&self) -> bool {
        lock(&self.inner.state).output_closed
    }

    /// Run `f` on the mouse button held down in this session (see
    /// [`crate::ops::mouse`]), under its own lock so that a press and its
    /// release are never interleaved with another caller's.
    pub fn with_mouse_held<R>(&self, f: impl FnOnce(&mut Option<MouseButton>) -> R) -> R {
        f(&mut lock(&self.inner.mouse_held))
    }

    /// Remember `rows` as the screen last shown to a one-shot caller and
    /// return the one remembered before (empty before the first).
    pub fn swap_shown(&self, rows: Vec<String>) -> Vec<String> {
        std::mem::replace(&mut lock(&self.inner.shown), rows)
    }

    /// Stop gracefully, letting the program clean up: SIGTERM (and SIGCONT,
    /// for a stopped job) to every process of the session, up to
    /// [`limits::STOP_TERM_GRACE`] for them to end; then SIGHUP, what a
    /// closing terminal sends, to what is left (an interactive shell ignores
    /// SIGTERM and ends on SIGHUP), and up to `grace` more; then SIGKILL. A
    /// grace ends early once nothing is left that could still act on the
    /// signals sent. Returns how the program ended.
    pub fn stop(&self, grace: Duration) -> Option<Exit> {
        if self.status().running() {
            self.signal(Signal::TERM);
            self.signal(Signal::CONT);
            if !self.wait_ended(&[Signal::TERM], limits::STOP_TERM_GRACE) {
                self.signal(Signal::HUP);
                self.signal(Signal::CONT);
                self.wait_ended(&[Signal::TERM, Signal::HUP], grace);
            }
        }
        self.kill()
    }

    /// Wait up to `limit` until the program has exited and no other process
    /// of its session is left (true), or all that is left ignores every one
    /// of `sent` (false, at once: waiting longer would change nothing).
    fn wait_ended(&self, sent: &[Signal], limit: Duration) -> bool {
        /// How often the session's processes are looked at meanwhile.
        const LOOK: Duration = Duration::from_millis(20);
        let deadline = Instant::now() + limit;
        loop {
            let look = LOOK.min(deadline.saturating_duration_since(Instant::now()));
            // Woken by the program's exit; what else is left has no such
            // event, and is looked at again after a short while.
            let exited = if lock(&self.inner.state).exit.is_some() {
                thread::sleep(look);
                true
            } else {
                self.wait_exit(look)
            };
            let left: Vec<i32> = self
                .session_members()
                .into_iter()
                .filter(|&pid| procfs::is_live(pid))
                .collect();
            if exited && left.is_empty() {
                return true;
            }
            if !left.is_empty() && left.iter().all(|&pid| procfs::ignores(pid, sent)) {
                return false;
            }
            if Instant::now() >= deadline {
                return false;
            }
        }
    }

    /// Pids of the processes of the session (see [`Session::signal`]).
    fn session_members(&self) -> Vec<i32> {
        let exited = lock(&self.inner.state).exit.is_some();
        // As in `signal`: a reaped leader's pid alive again is not ours.
        if exited && procfs::exists(self.inner.pid) {
            return Vec::new();
        }
        procfs::session_processes(self.inner.pid)
    }

    /// SIGKILL the whole session now and reap the child.
    pub fn kill(&self) -> Option<Exit> {
        self.signal(Signal::KILL);
        self.wait_exit(Duration::from_secs(2));
        self.close_reader();
        self.status().exit
    }

    /// Wait up to `limit` for the program to exit; whether it has.
    fn wait_exit(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let mut st = lock(&self.inner.state);
        while st.exit.is_none() {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            st = self
                .inner
                .changed
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        st.exit.is_some()
    }

    fn close_reader(&self) {
        lock(&self.inner.stop_reader).take();
    }

    /// Block until one of `until`'s conditions holds or `timeout` (capped at
    /// [`limits::MAX_WAIT`]) passes. Whether the program has settled is
    /// decided by [`rule::Settler`]; this gathers what it looks at and sleeps
    /// until its next look.
    pub fn wait(&self, until: &Until, timeout: Duration) -> (Reason, Duration) {
        let done = self.wait_settling(until, timeout);
        lock(&self.inner.state).holding = None;
        done
    }

    /// [`Session::wait`], leaving in `State::holding` the timer it lets run
    /// out, if any.
    fn wait_settling(&self, until: &Until, timeout: Duration) -> (Reason, Duration) {
        let start = Instant::now();
        let deadline = start + timeout.min(limits::MAX_WAIT);
        let mut scan = Scan::default();
        let mut next_cancel_look = start;
        let watches = u32::from(until.watches_output());
        let mut st = lock(&self.inner.state);
        let mut settler = rule::Settler::after(&snapshot(&st), st.idle)
            .with_relay_quiet(until.settle.map_or(Duration::ZERO, |s| s.fallback));
        loop {
            let now = Instant::now();
            let snap = snapshot(&st);
            let fallback_ok = settler.quiet_fallback() || until.settle.is_some_and(|s| !s.kernel);
            let (done, wake) = check(&st, &snap, until, now, &mut scan, fallback_ok);
            if let Some(reason) = done {
                return (reason, now - start);
            }
            // Not on every wake-up: a flood of output wakes a wait per chunk.
            let cancelled = match &until.cancel {
                Some(c) if now >= next_cancel_look => {
                    next_cancel_look = now + CANCEL_POLL;
                    c.is_set()
                }
                _ => false,
            };
            if now >= deadline || cancelled {
                return (Reason::Timeout, now - start);
            }
            let mut wake = match until.cancel {
                Some(_) => Some(wake.map_or(now + CANCEL_POLL, |w| w.min(now + CANCEL_POLL))),
                None => wake,
            };
            if until.settle.is_some_and(|s| s.kernel) {
                match settler.due(&snap, now) {
                    Due::Now => {
                        let generation = st.generation;
                        drop(st);
                        let look = self.look(generation);
                        st = lock(&self.inner.state);
                        let verdict = settler.observe(&snapshot(&st), &look, Instant::now());
                        st.holding = settler.holding();
                        if verdict == rule::Verdict::Settled {
                            st.idle = settler.settled_idle();
                            return (Reason::Idle, start.elapsed());
                        }
                        continue;
                    }
                    Due::At(t) => wake = Some(wake.map_or(t, |w| w.min(t))),
                    Due::Never => {}
                }
            }
            let wake = wake.map_or(deadline, |w| w.min(deadline));
            let dur = wake
                .saturating_duration_since(now)
                .max(Duration::from_micros(200));
            st.watchers += watches;
            st = self
                .inner
                .changed
                .wait_timeout(st, dur)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            st.watchers -= watches;
        }
    }

    /// Look at the program now: whether the kernel says it waits for input,
    /// and whether output is still on its way to us (which the rule counts
    /// as busy, see [`rule::Look::answer`]). `generation` is the output
    /// generation before the look.
    ///
    /// The order matters. The program is probed first: if it is blocked
    /// reading, everything it wrote before is already inside the terminal.
    /// Then the master is polled, and Linux's `n_tty_poll` flushes the
    /// terminal's pending buffer work before it answers, so bytes written
    /// by the program but not yet handed to the line discipline show as
    /// readable here. Last, bytes the reader thread has already taken off the
    /// master but not yet absorbed are covered by its `reading` flag (the
    /// rule compares the output generation too).
    fn look(&self, generation: u64) -> rule::Look {
        let master = self.inner.pty.master();
        let (readiness, wakes) = settle::probe_wakes(master, self.inner.pty.pts(), self.inner.pid);
        let master_readable = pty::ready_now(master, PollFlags::IN).contains(PollFlags::IN);
        // In this order: the reader counts bytes it hands over before it
        // lowers `reading`.
        let absorbing = self.inner.reading.load(Ordering::SeqCst)
            || self.inner.handed.load(Ordering::SeqCst) > 0;
        // On Linux the master answers for the slave's modes and group.
        let pgid = rustix::termios::tcgetpgrp(master)
            .ok()
            .map(|pid| pid.as_raw_nonzero().get());
        let raw_keys = rustix::termios::tcgetattr(master)
            .is_ok_and(|t| !t.local_modes.contains(rustix::termios::LocalModes::ICANON));
        rule::Look {
            generation,
            readiness,
            wakes,
            master_readable,
            absorbing,
            pgid,
            raw_keys,
        }
    }

    /// Whether the program waits for input right now, as the kernel sees it.
    pub fn readiness(&self) -> Readiness {
        if lock(&self.inner.state).exit.is_some() {
            return Readiness::Unknown(EXITED.into());
        }
        self.look(0).answer().0
    }

    /// What the program is doing right now, as `status` words it: waiting,
    /// on a short timer, relaying, busy (and on what), or unknown.
    pub fn activity(&self) -> settle::Activity {
        if lock(&self.inner.state).exit.is_some() {
            return settle::Activity::Unknown(EXITED.into());
        }
        let (readiness, wakes) = self.look(0).answer();
        // A wait in progress letting a timer run out says so; one look
        // alone cannot tell that timer from an idle poll's.
        let st = lock(&self.inner.state);
        let held = st
            .holding
            .filter(|h| h.holds(st.generation, Instant::now()))
            .map(|h| h.timeout);
        settle::Activity::of(readiness, wakes, held)
    }
}

/// What the settle rule looks at in the session's state.
fn snapshot(st: &State) -> rule::Snapshot {
    rule::Snapshot {
        generation: st.generation,
        last_output: st.last_output,
        last_input: st.last_input,
        input_began: st.input_began,
        output_since_input: st.transcript.end() > st.input_at,
        mid_frame: st.screen.is_mid_sequence() || st.screen.modes().synchronized_output,
        answers_pending: !st.answers.is_empty(),
        alt_screen: st.screen.is_alt_screen(),
        rewinds: st.screen.rewinds(),
        exited: st.exit.is_some(),
        escape_pending: st.input_escape,
    }
}

/// Does a condition of `until` hold now? If not, when should we look again
/// even without new output (for time-based conditions)?
fn check(
    st: &State,
    snap: &rule::Snapshot,
    until: &Until,
    now: Instant,
    scan: &mut Scan,
    fallback_ok: bool,
) -> (Option<Reason>, Option<Instant>) {
    if (until.text.is_some() || until.regex.is_some())
        && screen_match(&st.screen, until.text.as_deref(), until.regex.as_ref()).is_some()
    {
        return (Some(Reason::Matched), None);
    }
    if let Some((re, from)) = &until.output {
        let chunk = st.transcript.read(*from, usize::MAX);
        if re.is_match(&String::from_utf8_lossy(&chunk.data)) {
            return (Some(Reason::Matched), None);
        }
    }
    if let Some(ot) = &until.output_text {
        if ot.advance(&st.transcript, scan).is_some() {
            return (Some(Reason::Matched), None);
        }
    }
    let mut wake = None;
    if let Some((_, exited_at)) = st.exit {
        let drained = st.output_closed || now >= exited_at + limits::EXIT_DRAIN;
        if drained {
            return (Some(Reason::Exited), None);
        }
        wake = Some(exited_at + limits::EXIT_DRAIN);
    }
    if let Some(q) = until.quiet {
        let at = st.last_output.max(st.last_input) + q;
        if now >= at {
            return (Some(Reason::Quiet), None);
        }
        wake = Some(wake.map_or(at, |w: Instant| w.min(at)));
    }
    if let Some(spec) = until.settle.filter(|_| fallback_ok) {
        match rule::quiet(snap, spec.fallback, now) {
            Ok(()) => return (Some(Reason::Quiet), None),
            Err(at) => wake = Some(wake.map_or(at, |w: Instant| w.min(at))),
        }
    }
    (None, wake)
}

/// The last non-empty line of text in `input` as a terminal would echo it:
/// escape sequences (keys) and control characters removed.
fn echo_line(input: &[u8]) -> Option<String> {
    let lines: Vec<u8> = input
        .iter()
        .map(|&b| if b == b'\r' { b'\n' } else { b })
        .collect();
    crate::text::strip_ansi(&lines)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(str::to_string)
}

/// The whole visible screen as text rows joined with `\n`, with `pad`
/// spaces after the cursor's row.
fn screen_rows(screen: &Screen, pad: usize) -> String {
    let at = usize::from(screen.cursor().row);
    let mut out = String::new();
    for r in 0..screen.rows() as usize {
        if r > 0 {
            out.push('\n');
        }
        out.push_str(&screen.row_text(r));
        if r == at {
            out.push_str(&" ".repeat(pad));
        }
    }
    out
}

/// What a screen wait matches `text` or `regex` against: the screen's rows
/// joined with `\n` (each one's trailing blanks trimmed, as seed 000's
/// `screen`), or the
/// same with the cursor's row keeping its blanks up to the cursor (a
/// prompt's trailing space: `>>> ` matches python's prompt while the
/// cursor waits after it). Returns the text that matched, and for a regex
/// the match.
pub fn screen_match(screen: &Screen, text: Option<&str>, regex: Option<&Regex>) -> Option<String> {
    let pad = screen.blanks_before_cursor();
    [0, pad]
        .iter()
        .take(1 + usize::from(pad > 0))
        .find_map(|&pad| {
            let s = screen_rows(screen, pad);
            if let Some(t) = text.filter(|t| s.contains(*t)) {
                return Some(t.to_string());
            }
            regex
                .and_then(|r| r.find(&s))
                .map(|m| m.as_str().to_string())
        })
}

impl Drop for Session {
    fn drop(&mut self) {
        if lock(&self.inner.state).exit.is_none() {
            self.signal(Signal::HUP);
            self.signal(Signal::KILL);
        }
        self.close_reader();
    }
}

impl Inner {
    /// Feed the program's output to the screen and transcript until every
    /// holder of the terminal is gone or `stop` is closed; with `reap` (the
    /// child and its pidfd), also record its exit when it comes.
    fn read_loop(self: Arc<Self>, stop: OwnedFd, mut reap: Option<(Child, OwnedFd)>) {
        let master = self.pty.master();
        // The master hands out at most a few KiB per read (the line
        // discipline's buffer); a larger buffer would only cost memory.
        // Throughput comes from draining it several reads at a time instead
        // (see `drain`).
        let mut buf = vec![0u8; READ_BUF];
        let linger = Timespec::try_from(PARSER_POLL).ok();
        loop {
            let want_out = self.answering.load(Ordering::SeqCst);
            let mut events = PollFlags::IN;
            if want_out {
                events |= PollFlags::OUT;
            }
            // The parser queues the emulator's replies where this thread
            // does not see them: while one lives, look again soon.
            let timeout = if lock(&self.backlog).parser {
                linger.as_ref()
            } else {
                None
            };
            let (rev, stopped, exited) = {
                let mut fds = [
                    PollFd::from_borrowed_fd(master, events),
                    PollFd::new(&stop, PollFlags::IN),
                    // Sliced off below when there is no pidfd.
                    PollFd::new(reap.as_ref().map_or(&stop, |(_, fd)| fd), PollFlags::IN),
                ];
                let n = if reap.is_some() { 3 } else { 2 };
                match poll(&mut fds[..n], timeout) {
                    Ok(_) => {}
                    Err(Errno::INTR) => continue,
                    Err(_) => break,
                }
                (
                    fds[0].revents(),
                    !fds[1].revents().is_empty(),
                    n == 3 && !fds[2].revents().is_empty(),
                )
            };
            if exited {
                if let Some((child, _pidfd)) = reap.take() {
                    self.wait_child(child);
                }
            }
            if stopped {
                break;
            }
            if rev.contains(PollFlags::OUT) {
                self.flush_answers();
            }
            if rev.intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR)
                && self.drain(master, &mut buf)
            {
                break;
            }
        }
        drop(buf);
        // Output handed to a parser is absorbed before the end is told.
        let mut bl = lock(&self.backlog);
        bl.closing = true;
        self.backlog_moved.notify_all();
        while bl.parser {
            bl = self
                .backlog_moved
                .wait(bl)
                .unwrap_or_else(|e| e.into_inner());
        }
        drop(bl);
        let mut st = lock(&self.state);
        st.output_closed = true;
        st.reader_done = true;
        self.changed.notify_all();
        drop(st);
        // The program may outlive its terminal (or the session be closed
        // first): wait for it here, as the waiter thread would.
        if let Some((child, _pidfd)) = reap {
            self.wait_child(child);
        }
    }

    /// Take what the master holds now, one read buffer at a time, until it
    /// is empty or [`DRAIN_BATCH`] bytes were taken. True when no more
    /// output can come (every holder of the slave side is gone).
    ///
    /// A trickle is absorbed here, into the screen and transcript, under
    /// one hold of the state: counted as one output generation, waking the
    /// waits once. A flood thus costs a lock, a wake-up and a poll per batch
    /// rather than per read.
    ///
    /// A flood (more than [`FLOOD`] bytes without the master running dry)
    /// is handed to a parser thread instead (see [`Backlog`]), so that the
    /// parsing of one batch overlaps the reading of the next: otherwise the
    /// program waits on the terminal while this thread parses, and output
    /// arrives at the emulator's speed and the kernel's added together
    /// rather than at the slower of the two. The parser ends
    /// [`PARSER_LINGER`] after the flood does.
    ///
    /// While a recording runs, each read is its own generation: its bytes
    /// go to the file with the state let go (see [`Inner::recorder`]).
    fn drain(self: &Arc<Self>, master: std::os::fd::BorrowedFd<'_>, buf: &mut [u8]) -> bool {
        // Raised before the bytes leave the master, lowered once they are
        // absorbed or handed over (see `Session::look`).
        self.reading.store(true, Ordering::SeqCst);
        let mut held: Option<std::sync::MutexGuard<'_, State>> = None;
        let mut taken = 0;
        let mut handing = lock(&self.backlog).parser;
        let closed = loop {
            let n = match rustix::io::read(master, &mut *buf) {
                Ok(0) => break true,
                Ok(n) => n,
                Err(Errno::AGAIN) => break false,
                Err(Errno::INTR) => continue,
                // EIO: every holder of the slave side is gone.
                Err(_) => break true,
            };
            let bytes = &buf[..n];
            taken += n;
            if !handing && taken >= FLOOD {
                // What was absorbed here is published first: the parser
                // takes the state after it.
                if let Some(st) = held.take() {
                    self.publish(st);
                }
                handing = self.start_parser();
            }
            // The parser may have ended (its backlog empty) since: then
            // this thread absorbs again, in order.
            if !(handing && self.hand(bytes)) {
                handing = false;
                self.absorb(&mut held, bytes);
            }
            if taken >= DRAIN_BATCH {
                break false;
            }
        };
        if let Some(st) = held {
            self.publish(st);
        }
        if handing {
            // `hand` wakes the parser only once a read's worth is waiting:
            // what is left is its now, as the master ran dry.
            let bl = lock(&self.backlog);
            if !bl.bytes.is_empty() {
                self.backlog_moved.notify_all();
            }
        }
        self.reading.store(false, Ordering::SeqCst);
        self.flush_answers();
        closed
    }

    /// Feed `bytes` to the screen and transcript (and the recording),
    /// holding the state in `held` for the next bytes unless a recording
    /// runs.
    fn absorb<'a>(&'a self, held: &mut Option<std::sync::MutexGuard<'a, State>>, bytes: &[u8]) {
        let mut st = held.take().unwrap_or_else(|| lock(&self.state));
        st.screen.feed(bytes);
        st.transcript.push(bytes);
        // The recording is taken before the state is let go (the one place
        // both are held, always in this order), so whoever sees this
        // output in the state and then stops the recording finds it in the
        // file.
        let mut rec = lock(&self.recorder);
        if let Some(r) = rec.as_mut() {
            self.publish(st);
            let _ = r.output(bytes);
        } else {
            *held = Some(st);
        }
    }

    /// Start a parser thread unless one runs; false when none could start.
    fn start_parser(self: &Arc<Self>) -> bool {
        let mut bl = lock(&self.backlog);
        if !bl.parser && !bl.closing {
            let me = Arc::clone(self);
            bl.parser = thread::Builder::new()
                .name("pty-parser".into())
                .stack_size(128 * 1024)
                .start(move || me.parse_loop())
                .is_ok();
        }
        bl.parser
    }

    /// Give `bytes` to the parser, waiting while it is a batch behind;
    /// false when no parser runs (its backlog is then empty). The parser is
    /// woken when the backlog reaches [`FLOOD`] bytes, and by `drain` when
    /// the master runs dry, not on every read: the kernel hands out a few
    /// KiB a read, and a wake-up per read (the parser's futex, a switch to
    /// it, a generation and a wake-up of the waits) cost as much CPU as
    /// parsing them.
    fn hand(&self, bytes: &[u8]) -> bool {
        let mut bl = lock(&self.backlog);
        while bl.parser && bl.bytes.len() >= DRAIN_BATCH {
            bl = self
                .backlog_moved
                .wait(bl)
                .unwrap_or_else(|e| e.into_inner());
        }
        if !bl.parser {
            return false;
        }
        if bl.bytes.capacity() == 0 {
            // Room for a batch and one more read: never grown past it.
            bl.bytes.reserve_exact(DRAIN_BATCH + READ_BUF);
        }
        self.handed.fetch_add(bytes.len(), Ordering::SeqCst);
        let before = bl.bytes.len();
        bl.bytes.extend_from_slice(bytes);
        if before < FLOOD && bl.bytes.len() >= FLOOD {
            self.backlog_moved.notify_all();
        }
        true
    }

    /// The parser thread: absorb the backlog a batch at a time until it has
    /// been empty for [`PARSER_LINGER`] or the reader has ended.
    fn parse_loop(&self) {
        // Should the emulator panic here, the reader is not left waiting
        // for a parser that is gone: it absorbs from then on.
        struct Gone<'a>(&'a Inner);
        impl Drop for Gone<'_> {
            fn drop(&mut self) {
                if thread::panicking() {
                    let mut bl = lock(&self.0.backlog);
                    bl.parser = false;
                    bl.bytes = Vec::new();
                    self.0.handed.store(0, Ordering::SeqCst);
                    self.0.backlog_moved.notify_all();
                }
            }
        }
        let _gone = Gone(self);
        let mut work: Vec<u8> = Vec::new();
        loop {
            let mut bl = lock(&self.backlog);
            let mut waited = false;
            while bl.bytes.is_empty() {
                if bl.closing || waited {
                    bl.parser = false;
                    bl.bytes = Vec::new();
                    self.backlog_moved.notify_all();
                    return;
                }
                let (b, t) = self
                    .backlog_moved
                    .wait_timeout(bl, PARSER_LINGER)
                    .unwrap_or_else(|e| e.into_inner());
                bl = b;
                waited = t.timed_out();
            }
            // The reader fills the buffer this one was; it may be waiting
            // for room.
            let full = bl.bytes.len() >= DRAIN_BATCH;
            work.clear();
            std::mem::swap(&mut bl.bytes, &mut work);
            if full {
                self.backlog_moved.notify_all();
            }
            drop(bl);
            let mut held = None;
            self.absorb(&mut held, &work);
            if let Some(st) = held {
                self.publish(st);
            }
            self.handed.fetch_sub(work.len(), Ordering::SeqCst);
            self.flush_answers();
        }
    }

    /// Make output just absorbed into `st` known: a new generation, the
    /// time, the emulator's replies queued; waits that look at output woken.
    fn publish(&self, mut st: std::sync::MutexGuard<'_, State>) {
        st.generation += 1;
        st.last_output = Instant::now();
        let answers = st.screen.take_answers();
        if !answers.is_empty() {
            st.answers.extend_from_slice(&answers);
            self.answering.store(true, Ordering::SeqCst);
        }
        if st.watchers > 0 {
            self.changed.notify_all();
        }
    }

    /// Add an event to the recording, if one is running. A failed write
    /// (disk full) loses that event, never the session's output.
    fn record(&self, event: impl FnOnce(&mut Recorder) -> io::Result<()>) {
        if let Some(rec) = lock(&self.recorder).as_mut() {
            let _ = event(rec);
        }
    }

    /// Write pending emulator replies without ever blocking the reader: what
    /// the terminal cannot take now waits for POLLOUT.
    fn flush_answers(&self) {
        if !self.answering.load(Ordering::SeqCst) {
            return;
        }
        let mut st = lock(&self.state);
        if st.answers.is_empty() {
            return;
        }
        // Never interleave with a client's write in progress; if one is, try
        // again on the next poll round.
        let Ok(_w) = self.writer.try_lock() else {
            return;
        };
        match rustix::io::write(self.pty.master(), &st.answers) {
            Ok(n) => {
                st.answers.drain(..n);
            }
            Err(Errno::AGAIN) | Err(Errno::INTR) => {}
            Err(_) => st.answers.clear(),
        }
        if st.answers.is_empty() {
            self.answering.store(false, Ordering::SeqCst);
        }
    }

    fn wait_child(&self, mut child: Child) {
        let exit = match child.wait() {
            Ok(status) => match (status.code(), status.signal()) {
                (Some(c), _) => Exit::Code(c),
                (None, Some(s)) => Exit::Signal(s),
                (None, None) => Exit::Code(-1),
            },
            Err(_) => Exit::Code(-1),
        };
        let mut st = lock(&self.state);
        st.exit = Some((exit, Instant::now()));
        self.changed.notify_all();
    }
}

/// Write all of `bytes` to a non-blocking fd, waiting for room up to `limit`.
fn write_all(fd: std::os::fd::BorrowedFd<'_>, mut bytes: &[u8], limit: Duration) -> io::Result<()> {
    let deadline = Instant::now() + limit;
    while !bytes.is_empty() {
        match rustix::io::write(fd, bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => {
                let now = Instant::now();
                if now >= deadline {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "the program has not read its input for {}s; {} bytes were not sent",
                            limit.as_secs(),
                            bytes.len()
                        ),
                    ));
                }
                let ts = rustix::event::Timespec::try_from(deadline - now).unwrap_or(
                    rustix::event::Timespec {
                        tv_sec: 1,
                        tv_nsec: 0,
                    },
                );
                let mut fds = [PollFd::from_borrowed_fd(fd.as_fd(), PollFlags::OUT)];
                let _ = poll(&mut fds, Some(&ts));
                // Every holder of the terminal is gone (the program exited
                // mid-write): nobody will ever read the rest, and poll would
                // only say so again at once, a busy loop until the deadline.
                if fds[0].revents().intersects(PollFlags::HUP | PollFlags::ERR) {
                    return Err(io::Error::new(
                        io::ErrorKind::BrokenPipe,
                        format!(
                            "the program's terminal is closed; {} bytes were not sent",
                            bytes.len()
                        ),
                    ));
                }
            }
            Err(Errno::IO) => {
                return Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "the program's terminal is closed",
                ))
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}
