//! [`Session`]: one program in a pseudo-terminal, driven in-process. A thin
//! layer over the core session and operations every front end shares, in
//! seed 000's vocabulary (`read_screen`, `wait`, `write`, `resize`, `kill`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::error::{Error, ErrorKind, Result};
use super::screen::{Cursor, Screen, Size};
use crate::{limits, ops, session};

/// How to start a [`Session`] (seed 000's `PtySessionOptions`).
///
/// ```
/// use ptybroker::SessionOptions;
/// let opts = SessionOptions::new(["python3", "-q"]).size(100, 30).env("LC_ALL", "C");
/// let shell = SessionOptions::shell("cd /tmp && ls | head -3");
/// # let _ = (opts, shell);
/// ```
#[derive(Clone, Debug)]
pub struct SessionOptions {
    inner: session::Options,
}

impl SessionOptions {
    /// Run `argv` (the program, then its arguments) as it is, no shell.
    pub fn new<I, S>(argv: I) -> SessionOptions
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        SessionOptions {
            inner: session::Options::new(argv.into_iter().map(Into::into).collect()),
        }
    }

    /// Run a shell command line with `/bin/sh -c` (seed 000's `command`):
    /// `cd DIR && prog` and `NAME=value prog` mean what they mean in a shell.
    pub fn shell(line: &str) -> SessionOptions {
        SessionOptions {
            inner: session::Options::new(session::shell_argv(line)),
        }
    }

    /// The terminal's size in columns and rows (default 100 x 30).
    pub fn size(mut self, cols: u16, rows: u16) -> SessionOptions {
        self.inner.spawn.cols = cols;
        self.inner.spawn.rows = rows;
        self
    }

    /// The program's working directory (default: this process's).
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> SessionOptions {
        self.inner.spawn.cwd = Some(dir.into());
        self
    }

    /// Set one environment variable for the program.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> SessionOptions {
        self.inner.spawn.env.push((name.into(), value.into()));
        self
    }

    /// Start from an empty environment rather than this process's.
    pub fn clean_env(mut self) -> SessionOptions {
        self.inner.spawn.clean_env = true;
        self
    }

    /// `TERM` for the program (default: the environment's, else
    /// `xterm-256color`).
    pub fn term(mut self, term: impl Into<String>) -> SessionOptions {
        self.inner.term = Some(term.into());
        self
    }

    /// Lines of history kept above the screen.
    pub fn scrollback(mut self, lines: usize) -> SessionOptions {
        self.inner.scrollback_lines = lines;
        self
    }

    pub(crate) fn inner(&self) -> &session::Options {
        &self.inner
    }
}

/// Which rows [`Session::read_screen`] returns (seed 000's
/// `ScreenSelection`). Rows count from 1; values out of range are clamped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Selection {
    /// The whole screen.
    #[default]
    All,
    /// The top `n` rows.
    Top(usize),
    /// The bottom `n` rows of the terminal, blank or not.
    Bottom(usize),
    /// Rows `start` to `end`, both included, counted from 1.
    Range {
        /// The first row, counted from 1.
        start: usize,
        /// The last row, included.
        end: usize,
    },
}

impl Selection {
    fn core(self) -> ops::Selection {
        match self {
            Selection::All => ops::Selection::All,
            Selection::Top(n) => ops::Selection::Top(n),
            Selection::Bottom(n) => ops::Selection::Bottom(n),
            Selection::Range { start, end } => ops::Selection::Range(start, end),
        }
    }
}

/// What [`Session::read_screen`] returns (seed 000's `ReadResult`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadResult {
    /// The selected rows as plain text: trailing spaces trimmed, each row
    /// followed by `\n`, trailing blank rows dropped.
    pub screen: String,
    /// Where the cursor is, counted from 1.
    pub cursor: Cursor,
    /// The terminal's size.
    pub size: Size,
}

/// What a [`Session::wait`] waits for, and for how long (seed 000's `wait`
/// options). Conditions combine: the first that holds ends the wait.
///
/// ```
/// use std::time::Duration;
/// use ptybroker::Until;
/// let prompt = Until::text(">>> ").timeout(Duration::from_secs(5)).or_exit();
/// let pause = Until::nothing().timeout(Duration::from_millis(200));
/// let done = Until::regex(r"^\$ $").expect("a valid pattern");
/// # let _ = (prompt, pause, done);
/// ```
#[derive(Clone, Debug)]
pub struct Until {
    inner: session::Until,
    timeout: Duration,
}

impl Until {
    /// Only the timeout: a fixed pause (seed 000's `wait` without `match`).
    pub fn nothing() -> Until {
        Until {
            inner: session::Until::default(),
            timeout: limits::DEFAULT_WAIT,
        }
    }

    /// `text` appears on the screen (a substring of the rendered rows).
    pub fn text(text: impl Into<String>) -> Until {
        let mut u = Until::nothing();
        u.inner.text = Some(text.into());
        u
    }

    /// `pattern` matches the screen, its rows joined with `\n` (`^` and `$`
    /// match at each row's start and end).
    pub fn regex(pattern: &str) -> Result<Until> {
        let re = ops::screen_regex(pattern)
            .map_err(|e| Error::new(ErrorKind::Invalid, format!("invalid regex: {e}")))?;
        let mut u = Until::nothing();
        u.inner.regex = Some(re);
        Ok(u)
    }

    /// The program exits.
    pub fn exit() -> Until {
        Until::nothing().or_exit()
    }

    /// The program has written nothing for `quiet`.
    pub fn quiet(quiet: Duration) -> Until {
        let mut u = Until::nothing();
        u.inner.quiet = Some(quiet);
        u
    }

    /// Also end the wait when the program exits.
    pub fn or_exit(mut self) -> Until {
        self.inner.exit = true;
        self
    }

    pub(crate) fn parts(&self) -> (&session::Until, Duration) {
        (&self.inner, self.timeout)
    }

    /// Give up after `timeout` (default 10 s, at most 1 hour).
    pub fn timeout(mut self, timeout: Duration) -> Until {
        self.timeout = timeout.min(limits::MAX_WAIT);
        self
    }
}

/// Why a wait or a step ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    /// The text or pattern waited for appeared.
    Matched,
    /// The program exited.
    Exited,
    /// The program wrote nothing for the quiet window.
    Quiet,
    /// The kernel says the program is blocked reading its terminal.
    Idle,
    /// The timeout passed first.
    Timeout,
}

impl Reason {
    fn of(r: session::Reason) -> Reason {
        match r {
            session::Reason::Matched => Reason::Matched,
            session::Reason::Exited => Reason::Exited,
            session::Reason::Quiet => Reason::Quiet,
            session::Reason::Idle => Reason::Idle,
            session::Reason::Timeout => Reason::Timeout,
        }
    }

    /// The name the protocols use: `matched`, `exited`, `quiet`, `idle`,
    /// `timeout`.
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

/// What [`Session::wait`] returns (seed 000's `WaitResult`): whether the
/// match came, and the screen at that moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitResult {
    /// The text or pattern appeared before the timeout.
    pub matched: bool,
    /// Why the wait ended.
    pub reason: Reason,
    /// The whole screen at the moment of the match or timeout.
    pub screen: String,
    /// Where the cursor is, counted from 1.
    pub cursor: Cursor,
    /// The terminal's size.
    pub size: Size,
    /// How long the wait took (seed 000's `waitedMs`).
    pub waited: Duration,
}

/// One unit of input: text as it is, or a named key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// Literal text, sent as UTF-8.
    Text(String),
    /// A named key: `Enter`, `Tab`, `ArrowUp`, `F5`, `Ctrl+C`, `Alt+x`, ...
    /// (seed 000's key names; `ptybroker keys` lists them all). Arrow keys
    /// follow the program's cursor-key mode.
    Key(String),
    /// Text pasted: wrapped in bracketed-paste markers when the program
    /// asked for them.
    Paste(String),
}

impl Input {
    /// [`Input::Text`].
    pub fn text(t: impl Into<String>) -> Input {
        Input::Text(t.into())
    }

    /// [`Input::Key`].
    pub fn key(k: impl Into<String>) -> Input {
        Input::Key(k.into())
    }

    pub(crate) fn core(&self) -> ops::Input {
        match self {
            Input::Text(t) => ops::Input::Text(t.clone()),
            Input::Key(k) => ops::Input::Key(k.clone()),
            Input::Paste(t) => ops::Input::Paste(t.clone()),
        }
    }
}

/// What a step produced: the program's answer to the input.
#[derive(Clone, Debug)]
pub struct StepResult {
    /// The output since the previous step, as lines the terminal shows; or,
    /// for a full-screen program, the rendered screen (see `is_screen`).
    pub output: String,
    /// `output` is the rendered screen, not the output stream.
    pub is_screen: bool,
    /// Why the step stopped waiting: `Idle` or `Quiet` (settled),
    /// `Exited`, or `Timeout`.
    pub reason: Reason,
    /// How long the program took to answer.
    pub waited: Duration,
    /// The session's state after the step.
    pub status: Status,
}

/// How a program ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal killed it.
    Signal(i32),
}

impl Exit {
    fn of(e: session::Exit) -> Exit {
        match e {
            session::Exit::Code(c) => Exit::Code(c),
            session::Exit::Signal(s) => Exit::Signal(s),
        }
    }

    /// The exit code, or 128 + the signal as shells report it.
    pub fn code(self) -> i32 {
        match self {
            Exit::Code(c) => c,
            Exit::Signal(s) => 128 + s,
        }
    }
}

/// A session's state at one moment (seed 000's `pty/status`, and more).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// The program's process id.
    pub pid: i32,
    /// How it ended; `None` while it runs.
    pub exit: Option<Exit>,
    /// Since the session started.
    pub running_for: Duration,
    /// Since the program last wrote anything.
    pub quiet_for: Duration,
    /// The offset just past the last byte of output (see
    /// [`Session::output`]).
    pub output_end: u64,
    /// The terminal's size.
    pub size: Size,
}

impl Status {
    fn of(st: &session::Status) -> Status {
        Status {
            pid: st.pid,
            exit: st.exit.map(Exit::of),
            running_for: st.running_for,
            quiet_for: st.quiet_for,
            output_end: st.output_end,
            size: Size {
                cols: st.cols,
                rows: st.rows,
            },
        }
    }

    /// The program is still running (seed 000's `running`).
    pub fn running(&self) -> bool {
        self.exit.is_none()
    }

    /// The exit code once it has exited (128 + signal for a signal), else
    /// `None` (seed 000's `exitCode`).
    pub fn exit_code(&self) -> Option<i32> {
        self.exit.map(Exit::code)
    }
}

/// Raw output from the session's transcript (see [`Session::output`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// The bytes, escape sequences and all.
    pub data: Vec<u8>,
    /// The offset of `data[0]`.
    pub start: u64,
    /// Pass this to the next [`Session::output`] to continue without
    /// repeats.
    pub next: u64,
    /// Bytes before `start` that the transcript no longer holds.
    pub dropped: u64,
}

/// A signal for [`Session::signal`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signal(rustix::process::Signal);

impl Signal {
    /// SIGINT, as Ctrl-C sends it.
    pub const INT: Signal = Signal(rustix::process::Signal::INT);
    /// SIGTERM.
    pub const TERM: Signal = Signal(rustix::process::Signal::TERM);
    /// SIGKILL.
    pub const KILL: Signal = Signal(rustix::process::Signal::KILL);
    /// SIGHUP.
    pub const HUP: Signal = Signal(rustix::process::Signal::HUP);
    /// SIGQUIT.
    pub const QUIT: Signal = Signal(rustix::process::Signal::QUIT);
    /// SIGTSTP, as Ctrl-Z sends it.
    pub const TSTP: Signal = Signal(rustix::process::Signal::TSTP);
    /// SIGCONT.
    pub const CONT: Signal = Signal(rustix::process::Signal::CONT);
    /// SIGUSR1.
    pub const USR1: Signal = Signal(rustix::process::Signal::USR1);
    /// SIGUSR2.
    pub const USR2: Signal = Signal(rustix::process::Signal::USR2);

    /// A signal by name, with or without `SIG` (`INT`, `SIGTERM`, `winch`).
    pub fn from_name(name: &str) -> Option<Signal> {
        ops::signal_by_name(name).map(Signal)
    }

    /// A signal by number (`2` is SIGINT).
    pub fn from_number(n: i32) -> Option<Signal> {
        ops::signal_by_number(n).map(Signal)
    }

    /// Its number.
    pub fn number(self) -> i32 {
        self.0.as_raw()
    }
}

/// A program running in a pseudo-terminal, with the screen it draws, its
/// output transcript and the waits to block on (seed 000's session object).
///
/// Cloning is cheap and shares the one session. The program is killed when
/// the last clone is dropped.
///
/// ```
/// use ptybroker::{Selection, Session, SessionOptions, Until};
///
/// let s = Session::spawn(&SessionOptions::shell("read x; echo got $x"))?;
/// assert_eq!(s.write("hi\r")?, 3);
/// let w = s.wait(Until::text("got hi").or_exit());
/// assert!(w.matched);
/// let top = s.read_screen(Selection::Top(2))?;
/// assert!(top.screen.contains("got hi"));
/// # Ok::<(), ptybroker::Error>(())
/// ```
#[derive(Clone)]
pub struct Session {
    inner: Arc<session::Session>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("pid", &self.pid())
            .field("argv", &self.inner.argv())
            .finish()
    }
}

impl Session {
    /// Start a program in a new pseudo-terminal.
    pub fn spawn(options: &SessionOptions) -> Result<Session> {
        let o = options.inner();
        if o.spawn.argv.first().map_or(true, |p| p.is_empty()) {
            return Err(Error::new(
                ErrorKind::Invalid,
                "the command must name a program",
            ));
        }
        limits::check_size(u64::from(o.spawn.cols), u64::from(o.spawn.rows))
            .map_err(|m| Error::new(ErrorKind::Invalid, m))?;
        let s = session::Session::start(o).map_err(|e| {
            Error::new(
                ErrorKind::Failed,
                format!("cannot start {}: {e}", o.spawn.argv[0]),
            )
        })?;
        Ok(Session { inner: Arc::new(s) })
    }

    pub(crate) fn from_core(inner: Arc<session::Session>) -> Session {
        Session { inner }
    }

    /// The program's process id.
    pub fn pid(&self) -> i32 {
        self.inner.pid()
    }

    /// Its state now: running or how it ended, its size, its output so far.
    pub fn status(&self) -> Status {
        Status::of(&self.inner.status())
    }

    /// The program is still running (seed 000's `running`).
    pub fn running(&self) -> bool {
        self.inner.status().running()
    }

    /// The exit code once it has exited (seed 000's `exitCode`).
    pub fn exit_code(&self) -> Option<i32> {
        self.status().exit_code()
    }

    /// The current screen as text, or the rows `sel` selects (seed 000's
    /// `readScreen`).
    pub fn read_screen(&self, sel: Selection) -> Result<ReadResult> {
        if let Selection::Range { start, end } = sel {
            if start == 0 || end < start {
                return Err(Error::new(
                    ErrorKind::Invalid,
                    "a range counts rows from 1 and ends at or after its start",
                ));
            }
        }
        let v = ops::screen(&self.inner, sel.core(), ops::Format::Text, false);
        Ok(ReadResult {
            screen: v.text,
            cursor: Cursor::from_vt(v.cursor),
            size: Size {
                cols: v.cols,
                rows: v.rows,
            },
        })
    }

    /// The whole screen with its cells, styles, title and modes.
    pub fn screen(&self) -> Screen {
        self.inner.with_screen(|s| Screen::from(s))
    }

    /// Look at the live emulator without copying it.
    pub fn with_screen<R>(&self, f: impl FnOnce(&crate::vt::Screen) -> R) -> R {
        self.inner.with_screen(f)
    }

    /// Block until `until` holds or its timeout passes (seed 000's `wait`).
    pub fn wait(&self, until: Until) -> WaitResult {
        let (reason, waited) = self.inner.wait(&until.inner, until.timeout);
        let all = self.read_screen(Selection::All);
        let (screen, cursor, size) = match all {
            Ok(r) => (r.screen, r.cursor, r.size),
            Err(_) => (String::new(), Cursor::default(), Size::default()),
        };
        WaitResult {
            matched: reason == session::Reason::Matched,
            reason: Reason::of(reason),
            screen,
            cursor,
            size,
            waited,
        }
    }

    /// Write bytes as they are; returns how many were written, the UTF-8
    /// byte count for text (seed 000's `write`).
    pub fn write(&self, data: impl AsRef<[u8]>) -> Result<usize> {
        Ok(ops::write(&self.inner, data.as_ref())?)
    }

    /// Send text and keys in order, keys encoded for the program's current
    /// modes; returns the bytes written.
    pub fn send(&self, input: &[Input]) -> Result<usize> {
        let core: Vec<ops::Input> = input.iter().map(Input::core).collect();
        Ok(ops::send(&self.inner, &core)?)
    }

    /// Send named keys (`"Enter"`, `"Ctrl+C"`, `"ArrowUp"`); returns the
    /// bytes written.
    pub fn send_keys(&self, keys: &[&str]) -> Result<usize> {
        let core: Vec<ops::Input> = keys
            .iter()
            .map(|k| ops::Input::Key(k.to_string()))
            .collect();
        Ok(ops::send(&self.inner, &core)?)
    }

    /// Type `line` and Enter, wait until the program has answered, and
    /// return what it wrote since the previous step.
    ///
    /// "Answered" is the kernel settle the CLI's `step` uses: every process
    /// in the terminal's foreground group is blocked reading it, with a
    /// quiet window where the kernel cannot tell (see
    /// [`step`](Session::step)).
    pub fn step_line(&self, line: &str) -> Result<StepResult> {
        self.step_inputs(&ops::step_line(line))
    }

    /// Send text and keys exactly as given (nothing: only wait), then as
    /// [`step_line`](Session::step_line).
    pub fn step(&self, input: &[Input]) -> Result<StepResult> {
        let core: Vec<ops::Input> = input.iter().map(Input::core).collect();
        self.step_inputs(&core)
    }

    fn step_inputs(&self, input: &[ops::Input]) -> Result<StepResult> {
        let r = ops::step(
            &self.inner,
            input,
            ops::Settle::default(),
            (false, ops::View::Auto),
            None,
        )?;
        Ok(StepResult {
            output: r.output,
            is_screen: r.is_screen,
            reason: Reason::of(r.reason),
            waited: r.waited,
            status: Status::of(&r.status),
        })
    }

    /// Resize the terminal; the program gets SIGWINCH.
    pub fn resize(&self, cols: u16, rows: u16) -> Result<()> {
        limits::check_size(u64::from(cols), u64::from(rows))
            .map_err(|m| Error::new(ErrorKind::Invalid, m))?;
        Ok(ops::resize(&self.inner, cols, rows)?)
    }

    /// Send a signal to every process of the session; the keyboard's
    /// signals (INT, QUIT, TSTP) go to the foreground group only, as the
    /// terminal sends them for Ctrl+C, Ctrl+\\ and Ctrl+Z.
    pub fn signal(&self, sig: Signal) -> Result<()> {
        Ok(ops::signal(&self.inner, sig.0)?)
    }

    /// SIGKILL every process of the session and reap the program; returns
    /// how it ended. Harmless once it has exited (seed 000's `kill`).
    pub fn kill(&self) -> Option<Exit> {
        self.inner.kill().map(Exit::of)
    }

    /// Raw output from offset `from` on (0: the start), escape sequences
    /// and all; the transcript keeps the last few MiB.
    pub fn output(&self, from: u64) -> Output {
        let c = ops::output(&self.inner, from, usize::MAX);
        Output {
            data: c.data,
            start: c.start,
            next: c.next,
            dropped: c.dropped,
        }
    }
}
