//! "Is the program waiting for input?", asked of the kernel instead of a timer.
//!
//! [`probe`] looks at the PTY's foreground process group (`tcgetpgrp` on the
//! master) and at what each thread of each member is blocked in, from
//! `/proc/PID/task/TID/{stat,syscall,wchan}`. The probe answers for one
//! instant and never blocks; [`rule`] decides over time that a program has
//! *settled*. Three parts:
//!
//! - `procfs.rs`, the reader: the only code that reads `/proc` (the
//!   foreground group's members, one snapshot per thread: state, system
//!   call and arguments, the fds it waits on, an epoll interest list, the
//!   timeout; and the process table a session signals and kills through).
//!   It decides nothing.
//! - `linux.rs`, the classification: the rule below, a pure function of
//!   procfs's snapshots (tested on canned ones).
//! - [`rule`], the decision over time: a pure state machine from snapshots
//!   of the session (output generation and times, frame state) and of each
//!   look (the probe's answer, output in flight) to a verdict, on instants
//!   passed in. `Session::wait` only gathers, calls it, and sleeps until
//!   its next look.
//!
//! # The rule
//!
//! The main thread of every member falls in one of four classes:
//!
//! - **input**: blocked reading the terminal (the fd resolves through
//!   `/proc/PID/fd` to the session's pts or to `/dev/tty`); in `poll`,
//!   `ppoll`, `select` or `pselect6` with the terminal in the set for input
//!   (the pollfd array or the `fd_set` bitmaps, read from `/proc/PID/mem`;
//!   where they cannot be read, any terminal below `nfds`, or any poll); in
//!   `epoll_wait`/`epoll_pwait`/`epoll_pwait2` on an epoll set that holds the
//!   terminal (from `/proc/PID/fdinfo`, nested sets followed).
//! - **parked**: waiting for something the rest of the group decides: a
//!   lock (`futex`), a signal (`rt_sigtimedwait`, `pause`, ...), an epoll or
//!   select set without the terminal, a child that is itself a member
//!   (`wait4` of `git` while its editor runs), a pipe whose other end
//!   another member holds (`yes | less`).
//! - **busy**: running or in uninterruptible sleep; on a timer (`nanosleep`,
//!   `clock_nanosleep`, `poll` of no fds: reported as [`Wakes::asleep`] when
//!   nothing else is busy); on a child outside the group;
//!   reading or writing anything else (a pipe from outside, a FIFO, a
//!   socket); writing to the terminal (more output is on its way); waiting
//!   for a connection or to open a FIFO; on a file lock (`fcntl` F_SETLKW,
//!   `lockf`, `flock`).
//! - **unknown**: stopped, an unclassified system call, or `/proc` refused
//!   or lost the thread mid-read in a way that matters.
//!
//! Any other thread is a helper: it counts as input if it waits for input
//! as above, as busy only while running or in uninterruptible sleep (unless
//! its main thread waits on the terminal alone with no timeout, which only
//! input can wake) or writing to the terminal, and as parked whatever else
//! it blocks on (a lock, a timer, a socket, inotify). Helpers wait for events while the
//! main thread holds the conversation; one that wakes and prints shows up
//! in the output debounce, as `top`'s periodic redraw would.
//!
//! A busy member whose parent, a member too, waits on the terminal alone
//! (a read, or a poll, select or epoll set read whole and holding nothing
//! else, no timeout) rather than waiting for it is background work (a
//! script's `sleep 1000 &`) and counts as parked. A set with anything else
//! in it (git polling its child's pipe, a runtime's eventfd a helper may
//! signal) does not make the work background.
//!
//! The group is [`Readiness::Busy`] if any thread is busy; else
//! [`Readiness::Unknown`] if any is unknown; else, if at least one thread
//! waits for input, [`Readiness::Relay`] when a thread (waiting for input or
//! parked) also listens to a socket, pipe, FIFO, pty master or other
//! terminal whose other end is outside the group (see `linux.rs`'s
//! `verdict`), or [`Readiness::Waiting`]; else (everything parked, nothing
//! listening to the terminal) busy. So node's REPL (main thread in
//! `epoll_pwait` on the tty, helpers in `futex` and in an epoll of their
//! own) and vim (a signal thread in `rt_sigtimedwait`) wait, while
//! `python3 -c 'time.sleep(5)'` and a program reading a FIFO are busy. A
//! program whose main thread is parked while a helper reads the terminal
//! (Go, a Rust program with an input thread) waits.
//!
//! When `/proc/PID/task/TID/syscall` cannot be read (it needs ptrace access,
//! which Yama's `ptrace_scope=2` denies; or another architecture), the
//! kernel function in `wchan` decides instead; it cannot tell which fd a
//! read is on, so a sleep in `n_tty_read`/`wait_woken` counts as input.
//!
//! # Known gaps
//!
//! A relay's far side is not looked at (it is another machine, or at
//! least another terminal): a remote command silent for longer than the
//! relay window ends the wait early. A program that listens to the
//! terminal and to a long-lived connection (an X display, D-Bus, a server
//! socket) is a relay too, and settles on quiet. A 32-bit program's poll
//! and select sets are not read. A main thread blocked reading a socket is
//! busy even when another member will answer on it (only wait sets match
//! socket peers). A program whose main
//! thread exited (`pthread_exit`) is judged by its helpers alone.
//! Members that were orphaned out of the session leader's process tree are
//! found only when no member is found in it (then `/proc` is scanned).
//! Go and similar runtimes sleep in `futex`/`epoll` even on a timer, so a Go
//! program that waits on a timer while a goroutine reads the terminal waits.
//! Node is the same: during `await new Promise(r => setTimeout(r, 1500))` at
//! its REPL the main thread sits in `epoll_pwait` with the terminal in the
//! set and a timer pending, which reads as waiting for input (top, which
//! must count as waiting, looks the same: a poll on the terminal with a
//! timeout). The probe therefore also reports the timeout such a wait was
//! given ([`Wakes::timer`]: the argument of `poll`/`epoll_wait`, or the
//! `timespec`/`timeval` it points to, read from `/proc/PID/mem`), and
//! [`rule`] lets it run out unless it is the period the program idled with
//! when it last settled (see `rule::Idle`). A timer outside the waiting call
//! (`alarm`, a `timerfd` polled elsewhere) is not seen. Neither the timeout
//! nor the CPU time tells a silent chain of awaits from an idle periodic
//! poll the first time a job is seen; there a chain counts at most
//! `limits::SETTLE_TIMER_HORIZON`. `status` says `timer:` only while a wait
//! is letting a timer run out: one look alone cannot tell it from an idle
//! poll's.
//!
//! A group busy only sleeping on a clock with the terminal non-canonical
//! or open non-blocking is taken for a keyboard poller (a game loop,
//! `watch`) and settles on [`crate::limits::SETTLE_SLEEP_QUIET`] of quiet:
//! a program that sets either and then sleeps silently between prints (a
//! progress display in cbreak mode, a tty some crashed program left
//! non-blocking) settles during its sleep. Background work and helper
//! threads count as work unless the waiter's whole set is read and holds
//! only the terminal: a 32-bit program's poll, or a runtime that keeps an
//! eventfd in its set (node), still has its helper's work hold a step.

use std::fmt;
use std::os::fd::BorrowedFd;
use std::path::Path;
use std::time::Duration;

/// Whether a group that waits may wake by itself, without input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wakes {
    /// It may: a thread waits with a timeout (or with arguments the probe
    /// cannot read), or a helper thread or process is parked on something
    /// else. Without this only input or a signal wakes it.
    pub may: bool,
    /// The shortest timeout given to a wait on the terminal, when the probe
    /// could read it: the whole timeout of the call, which began at some
    /// earlier moment, so the wake comes at most this long from now.
    pub timer: Option<Duration>,
    /// For a busy group: nothing in it runs, it only sleeps on a clock
    /// (`nanosleep`), maybe between polls of the keyboard that never block
    /// (see [`rule`]'s sleep rule).
    pub asleep: bool,
    /// For an asleep group: a sleeper holds the terminal open non-blocking
    /// (`O_NONBLOCK`): it reads the keys without waiting for them, in
    /// canonical mode too (a line-polling loop).
    pub keys: bool,
}

impl Wakes {
    /// It may wake, for a reason with no known time.
    pub const MAYBE: Wakes = Wakes {
        may: true,
        timer: None,
        asleep: false,
        keys: false,
    };

    /// Both sets of reasons.
    pub fn and(self, other: Wakes) -> Wakes {
        let timer = match (self.timer, other.timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Wakes {
            may: self.may || other.may,
            timer,
            asleep: self.asleep && other.asleep,
            keys: self.keys || other.keys,
        }
    }
}

/// What the foreground process group of a PTY is doing right now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Readiness {
    /// Every member waits for input (or is parked behind one that does).
    Waiting,
    /// It waits for input, and also listens to something whose other end
    /// is outside the group (a connection, a pipe, a pty master): a relay
    /// (ssh, `docker exec -it`, `script`, a nested tmux). The answer may
    /// come through that at any time, so it settles on quiet (see
    /// [`crate::limits::SETTLE_RELAY_QUIET`]); the string says who and
    /// what.
    Relay(String),
    /// At least one member is working or waiting on something other than the
    /// terminal; the string says who and why, for status lines and logs.
    Busy(String),
    /// The kernel cannot tell (not Linux, permissions, a race with an
    /// exiting process); callers fall back to a quiet timer.
    Unknown(String),
}

impl fmt::Display for Readiness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Activity::of(self.clone(), Wakes::default(), None).fmt(f)
    }
}

/// Why a session is or is not settled, as `status` says it (JSON
/// `activity`, the CLI's `status`): the one place these are worded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Activity {
    /// `waiting for input`: only input (or its own runtime) wakes it.
    Waiting,
    /// `timer: ...`: it waits on the terminal with a timeout that a wait in
    /// progress is letting run out before it counts as settled (see
    /// `rule.rs`). One look cannot tell such a timer from a periodic
    /// repaint's (a curses `halfdelay`), so it is said only while the rule
    /// holds a wait for it.
    Timer(Duration),
    /// `relay: ...`: see [`Readiness::Relay`].
    Relay(String),
    /// `busy: ...`: who, and on what.
    Busy(String),
    /// `unknown: ...`: the kernel cannot tell; the quiet window decides.
    Unknown(String),
}

impl Activity {
    /// What one look at the program says, `held` the timeout a wait in
    /// progress is letting run out (see [`rule::Settler::holding`]).
    pub fn of(readiness: Readiness, wakes: Wakes, held: Option<Duration>) -> Activity {
        match readiness {
            Readiness::Waiting => match (wakes.timer, held) {
                (Some(timer), Some(_)) => Activity::Timer(timer),
                _ => Activity::Waiting,
            },
            Readiness::Relay(why) => Activity::Relay(why),
            Readiness::Busy(why) => Activity::Busy(why),
            Readiness::Unknown(why) => Activity::Unknown(why),
        }
    }

    /// Whether the kernel says it waits for input (`waitingForInput`).
    pub fn waiting(&self) -> bool {
        matches!(self, Activity::Waiting | Activity::Timer(_))
    }
}

impl fmt::Display for Activity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Activity::Waiting => f.write_str("waiting for input"),
            Activity::Timer(t) => write!(
                f,
                "timer: waits for input with a timeout of {} ms, let run out first",
                t.as_millis()
            ),
            Activity::Relay(why) => write!(f, "relay: {why}; settled by quiet"),
            Activity::Busy(why) => write!(f, "busy: {why}"),
            Activity::Unknown(why) => write!(f, "unknown: {why}"),
        }
    }
}

/// Whether the foreground process group of the PTY whose master is `master`
/// and whose slave is at `pts` waits for input. `leader` is the session
/// leader (the child ptybroker spawned); its process tree is where the
/// group's members are looked for.
pub fn probe(master: BorrowedFd<'_>, pts: &Path, leader: i32) -> Readiness {
    probe_wakes(master, pts, leader).0
}

/// [`probe`], and whether the group may wake by itself, without input: a
/// thread waits with a timeout (`top`'s poll, a REPL's timer), or a helper
/// thread or process is parked on something else. A group that waits with
/// no timeout wakes only for input or a signal, so a shorter second look
/// confirms it (see [`crate::limits::SETTLE_DEBOUNCE_BLOCKED`]).
pub fn probe_wakes(master: BorrowedFd<'_>, pts: &Path, leader: i32) -> (Readiness, Wakes) {
    #[cfg(target_os = "linux")]
    {
        linux::probe(master, pts, leader)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (master, pts, leader);
        let why = "only Linux can tell whether a program waits for input".to_string();
        (Readiness::Unknown(why), Wakes::MAYBE)
    }
}

#[cfg(target_os = "linux")]
mod linux;
pub(crate) mod procfs;
pub mod rule;
