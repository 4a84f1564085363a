//! The Linux probe: one pass over `/proc` per call, nothing kept between
//! calls. See the parent module for the rule it implements.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use super::{Readiness, Wakes};
use crate::procstat;

/// A session with more processes than this is not worth walking every few
/// milliseconds; the caller falls back to its quiet timer.
const MAX_PROCS: usize = 4096;
/// Epoll interest-list entries looked at, over all nested sets.
const MAX_EPOLL_FDS: usize = 256;
/// `select` sets wider than this are assumed to hold the terminal rather
/// than resolving every fd below `nfds`.
const MAX_SELECT_NFDS: u64 = 64;
/// Bytes read from one `/proc` file; `stat` and `syscall` are far smaller,
/// `children` and `fdinfo` of huge sets are cut (and then decided leniently).
const MAX_PROC_FILE: usize = 64 * 1024;

pub(super) fn probe(master: BorrowedFd<'_>, pts: &Path, leader: i32) -> (Readiness, Wakes) {
    let pgid = match rustix::termios::tcgetpgrp(master) {
        Ok(pid) => pid.as_raw_nonzero().get(),
        Err(e) => {
            let why = format!("the terminal has no foreground process group ({e})");
            return (Readiness::Unknown(why), Wakes::MAYBE);
        }
    };
    let members = match find_members(leader, pgid) {
        Ok(members) if members.is_empty() => {
            let why = format!("no process of the foreground process group {pgid} is left");
            return (Readiness::Unknown(why), Wakes::MAYBE);
        }
        Ok(members) => members,
        Err(why) => return (Readiness::Unknown(why), Wakes::MAYBE),
    };
    Group {
        pts: pts.as_os_str().as_bytes(),
        members,
        fd_links: Vec::new(),
    }
    .verdict()
}

/// A process of the foreground group.
struct Member {
    pid: i32,
    ppid: i32,
    comm: String,
    /// The state of the main thread (the process's `stat` shows that one).
    state: u8,
    tids: Vec<i32>,
}

/// Reads a small `/proc` file without the `statx` that `fs::read` does first.
/// These files are generated whole on the first read, so a read that does
/// not fill the buffer is the end: no second read to see end-of-file.
fn read_proc(path: &str, out: &mut Vec<u8>) -> io::Result<()> {
    out.clear();
    let mut file = File::open(path)?;
    let mut chunk = [0u8; 2048];
    while out.len() < MAX_PROC_FILE {
        match file.read(&mut chunk) {
            Ok(n) if n < chunk.len() => {
                out.extend_from_slice(&chunk[..n]);
                break;
            }
            Ok(n) => out.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn parse_pids(buf: &[u8]) -> impl Iterator<Item = i32> + '_ {
    buf.split(|b| b.is_ascii_whitespace())
        .filter_map(|word| std::str::from_utf8(word).ok()?.parse().ok())
}

fn task_ids(pid: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    dir.filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// Whether `/proc/PID/task/TID/children` exists (CONFIG_PROC_CHILDREN).
fn children_supported() -> bool {
    static SUPPORTED: OnceLock<bool> = OnceLock::new();
    *SUPPORTED.get_or_init(|| Path::new("/proc/thread-self/children").exists())
}

/// The live members of process group `pgid`: looked for in `leader`'s
/// process tree, which is cheap and holds them all unless they were orphaned;
/// else in all of `/proc`.
fn find_members(leader: i32, pgid: i32) -> Result<Vec<Member>, String> {
    let mut members = Vec::new();
    let mut buf = Vec::with_capacity(1024);
    if leader > 0 && children_supported() {
        let mut stack = vec![leader];
        let mut seen = 0;
        while let Some(pid) = stack.pop() {
            seen += 1;
            if seen > MAX_PROCS {
                return Err(format!(
                    "more than {MAX_PROCS} processes under pid {leader}"
                ));
            }
            // A process that exited since its parent listed it is skipped.
            let Some((member, in_group)) = read_member(pid, pgid, &mut buf) else {
                continue;
            };
            for tid in &member.tids {
                if read_proc(&format!("/proc/{pid}/task/{tid}/children"), &mut buf).is_ok() {
                    stack.extend(parse_pids(&buf));
                }
            }
            if in_group {
                members.push(member);
            }
        }
        if !members.is_empty() {
            return Ok(members);
        }
    }
    let dir = std::fs::read_dir("/proc").map_err(|e| format!("cannot list /proc: {e}"))?;
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        if let Some((member, true)) = read_member(pid, pgid, &mut buf) {
            members.push(member);
        }
    }
    Ok(members)
}

/// `pid` and whether it is in `pgid`; None if it is gone.
fn read_member(pid: i32, pgid: i32, buf: &mut Vec<u8>) -> Option<(Member, bool)> {
    read_proc(&format!("/proc/{pid}/stat"), buf).ok()?;
    let stat = procstat::parse(buf)?;
    let tids = if stat.threads == 1 {
        vec![pid]
    } else {
        task_ids(pid)
    };
    let member = Member {
        pid,
        ppid: stat.ppid,
        comm: stat.comm,
        state: stat.state,
        tids,
    };
    Some((member, stat.pgrp == pgid))
}

/// What one thread is doing, as far as waiting for input goes.
enum Class {
    /// Blocked on the terminal, until the call's timeout if it has one.
    Input(Timeout),
    /// Running, in uninterruptible sleep or writing to the terminal: busy
    /// whichever thread it is.
    Active(String),
    /// A helper waiting for something the rest of the group decides.
    Parked(String),
    Busy(String),
    Unknown(String),
    /// Gone since it was listed.
    Gone,
    /// In wait4/waitid: parked if one of its children is a member.
    WaitsForChild(String),
    /// Reading or writing something other than the terminal: parked if
    /// another member holds the same pipe, else busy.
    OnFile {
        link: Vec<u8>,
        why: String,
    },
}

struct Group<'a> {
    pts: &'a [u8],
    members: Vec<Member>,
    /// Every member's open files, read only when a pipe needs matching.
    fd_links: Vec<Vec<Vec<u8>>>,
}

impl Group<'_> {
    /// The readiness, and whether the group may wake by itself: a thread
    /// waits with a timeout, or a helper is parked on something else.
    fn verdict(mut self) -> (Readiness, Wakes) {
        let mut input = false;
        let mut wakes = Wakes::default();
        let mut unknown = None;
        let mut parked = None;
        let mut deferred = Vec::new();
        for (i, member) in self.members.iter().enumerate() {
            for &tid in &member.tids {
                match self.classify(member, tid) {
                    Class::Busy(why) | Class::Active(why) => {
                        return (Readiness::Busy(why), Wakes::MAYBE)
                    }
                    Class::Input(timeout) => {
                        input = true;
                        wakes = wakes.and(timeout.wakes());
                    }
                    Class::Parked(why) => {
                        wakes = wakes.and(Wakes::MAYBE);
                        parked.get_or_insert(why);
                    }
                    Class::Unknown(why) => {
                        unknown.get_or_insert(why);
                    }
                    Class::Gone => {}
                    class => deferred.push((i, class)),
                }
            }
        }
        for (i, class) in deferred {
            let (served, why) = match class {
                Class::WaitsForChild(why) => {
                    let pid = self.members[i].pid;
                    (self.members.iter().any(|m| m.ppid == pid), why)
                }
                Class::OnFile { link, why } => (self.held_by_other(i, &link), why),
                _ => continue,
            };
            if !served {
                return (Readiness::Busy(why), Wakes::MAYBE);
            }
            wakes = wakes.and(Wakes::MAYBE);
            parked.get_or_insert(why);
        }
        let readiness = match (unknown, input) {
            (Some(why), _) => Readiness::Unknown(why),
            (None, true) => Readiness::Waiting,
            (None, false) => Readiness::Busy(format!(
                "nothing waits for the terminal ({})",
                parked.as_deref().unwrap_or("no live thread")
            )),
        };
        (readiness, wakes)
    }

    /// Whether a member other than `self.members[owner]` has `link` open.
    fn held_by_other(&mut self, owner: usize, link: &[u8]) -> bool {
        if self.fd_links.is_empty() {
            self.fd_links = self.members.iter().map(|m| fd_links(m.pid)).collect();
        }
        self.fd_links
            .iter()
            .enumerate()
            .any(|(i, links)| i != owner && links.iter().any(|l| l == link))
    }

    fn is_terminal(&self, link: &[u8]) -> bool {
        link == self.pts || link == b"/dev/tty"
    }

    /// The main thread's class decides; another thread (a helper) only
    /// counts when it waits for input or is active: anything else it blocks
    /// on (a lock, a timer, a socket, inotify) is parked, since helpers wait
    /// for events while the main thread holds the conversation.
    fn classify(&self, member: &Member, tid: i32) -> Class {
        let class = self.classify_thread(member, tid);
        if tid == member.pid {
            return class;
        }
        match class {
            Class::Input(_) | Class::Active(_) | Class::Gone => class,
            Class::Parked(why)
            | Class::Busy(why)
            | Class::Unknown(why)
            | Class::WaitsForChild(why)
            | Class::OnFile { why, .. } => Class::Parked(why),
        }
    }

    fn classify_thread(&self, member: &Member, tid: i32) -> Class {
        let pid = member.pid;
        let who = || {
            if tid == pid {
                format!("pid {pid} ({})", member.comm)
            } else {
                format!("pid {pid} ({}) thread {tid}", member.comm)
            }
        };
        // Other threads' states are not read: `syscall` says "running" for a
        // running thread, a stop (job control) stops the main thread too, and
        // a thread other than the main one is reaped as soon as it exits.
        // That saves a third of the cost of a many-threaded program.
        let state = if tid == pid { member.state } else { b'S' };
        match (state, member.state) {
            (_, b'T' | b't') => return Class::Unknown(format!("{} is stopped", who())),
            (b'R', _) => return Class::Active(format!("{} is running", who())),
            (b'D', _) => return Class::Active(format!("{} is in uninterruptible sleep", who())),
            (b'Z' | b'X' | b'x', _) => return Class::Gone,
            (b'S', _) => {}
            (other, _) => {
                return Class::Unknown(format!("{} is in state {}", who(), other as char))
            }
        }
        let mut buf = Vec::with_capacity(256);
        let why_not = match read_proc(&format!("/proc/{pid}/task/{tid}/syscall"), &mut buf) {
            Ok(()) => match self.classify_syscall(pid, &buf, &who) {
                Ok(class) => return class,
                Err(why_not) => why_not,
            },
            Err(e) if gone(&e) => return Class::Gone,
            Err(e) => format!("cannot read its system call: {e}"),
        };
        match read_proc(&format!("/proc/{pid}/task/{tid}/wchan"), &mut buf) {
            Ok(()) => classify_wchan(&buf, &who).unwrap_or_else(|function| {
                Class::Unknown(format!("{} {why_not}, and sleeps in {function}", who()))
            }),
            Err(e) if gone(&e) => Class::Gone,
            Err(e) => Class::Unknown(format!("{} {why_not}, nor its wchan: {e}", who())),
        }
    }

    /// The class from `/proc/.../syscall`, or (for `wchan` to try) why it
    /// does not tell.
    fn classify_syscall(
        &self,
        pid: i32,
        buf: &[u8],
        who: &dyn Fn() -> String,
    ) -> Result<Class, String> {
        let text = String::from_utf8_lossy(buf);
        let mut words = text.split_ascii_whitespace();
        let nr = match words.next() {
            Some("running") => return Ok(Class::Active(format!("{} is running", who()))),
            Some(nr) => nr.parse::<i64>().ok(),
            None => None,
        };
        let Some(nr) = nr.filter(|&nr| nr >= 0) else {
            return Err("is blocked outside a system call".to_string());
        };
        // The six arguments (then the stack and instruction pointers).
        let args: Vec<Option<u64>> = words
            .map(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
            .collect();
        let arg = |i: usize| args.get(i).copied().flatten();
        let arg1 = arg(0).unwrap_or(u64::MAX);
        let Some((sys, name)) = syscall::kind(nr) else {
            return Err(format!("is in system call {nr}"));
        };
        let timeout = || timeout_of(pid, name, &arg);
        let class = match sys {
            Sys::Read | Sys::Write => {
                let Some(link) = fd_link(pid, arg1) else {
                    return Err(format!("is in {name} of fd {arg1}, which is closed"));
                };
                let reading = sys == Sys::Read;
                if self.is_terminal(&link) {
                    return Ok(if reading {
                        Class::Input(Timeout::Never)
                    } else {
                        Class::Active(format!("{} is writing to the terminal", who()))
                    });
                }
                let why = format!(
                    "{} is {} fd {arg1} ({})",
                    who(),
                    if reading { "reading" } else { "writing" },
                    String::from_utf8_lossy(&link)
                );
                Class::OnFile { link, why }
            }
            // poll(NULL, 0, ms) is a sleep.
            Sys::Poll if arg(1) == Some(0) => {
                Class::Busy(format!("{} is sleeping in {name}", who()))
            }
            Sys::Poll => Class::Input(timeout()),
            Sys::Select if arg1 > MAX_SELECT_NFDS => Class::Input(timeout()),
            Sys::Select => {
                let terminal =
                    (0..arg1).any(|fd| fd_link(pid, fd).is_some_and(|l| self.is_terminal(&l)));
                if terminal {
                    Class::Input(timeout())
                } else {
                    Class::Parked(format!("{} is in {name} without the terminal", who()))
                }
            }
            Sys::Epoll => match self.epoll_has_terminal(pid, arg1, &mut 0) {
                Some(false) => {
                    Class::Parked(format!("{} is in {name} without the terminal", who()))
                }
                // An interest list we cannot read counts as input, as
                // poll's does.
                Some(true) | None => Class::Input(timeout()),
            },
            Sys::Sleep => Class::Busy(format!("{} is sleeping in {name}", who())),
            Sys::Wait => Class::WaitsForChild(format!(
                "{} is waiting in {name} for a child outside the foreground group",
                who()
            )),
            Sys::Lock => Class::Parked(format!("{} waits on a lock ({name})", who())),
            Sys::Signal => Class::Parked(format!("{} waits for a signal ({name})", who())),
            Sys::Elsewhere => Class::Busy(format!("{} is blocked in {name}", who())),
        };
        Ok(class)
    }

    /// Whether the epoll set `epfd` of `pid` (or one nested in it) watches
    /// the terminal; None if that cannot be read.
    fn epoll_has_terminal(&self, pid: i32, epfd: u64, budget: &mut usize) -> Option<bool> {
        let mut buf = Vec::new();
        read_proc(&format!("/proc/{pid}/fdinfo/{epfd}"), &mut buf).ok()?;
        let text = String::from_utf8_lossy(&buf);
        for line in text.lines() {
            let Some(tfd) = line.strip_prefix("tfd:") else {
                continue;
            };
            *budget += 1;
            if *budget > MAX_EPOLL_FDS {
                return None;
            }
            let Some(tfd) = tfd
                .split_ascii_whitespace()
                .next()
                .and_then(|s| s.parse().ok())
            else {
                continue;
            };
            let Some(link) = fd_link(pid, tfd) else {
                continue;
            };
            if self.is_terminal(&link)
                || (link == b"anon_inode:[eventpoll]"
                    && tfd != epfd
                    && self.epoll_has_terminal(pid, tfd, budget) == Some(true))
            {
                return Some(true);
            }
        }
        Some(false)
    }
}

/// Whether a `/proc` read failed because the task exited meanwhile
/// (ESRCH is what a task that exits during the read gives).
fn gone(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound
        || e.raw_os_error() == Some(rustix::io::Errno::SRCH.raw_os_error())
}

fn fd_link(pid: i32, fd: u64) -> Option<Vec<u8>> {
    let target = std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).ok()?;
    Some(target.into_os_string().into_vec())
}

fn fd_links(pid: i32) -> Vec<Vec<u8>> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|entry| std::fs::read_link(entry.path()).ok())
        .map(|target| target.into_os_string().into_vec())
        .collect()
}

/// How long a wait on the terminal may last by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Timeout {
    /// No timeout: only input or a signal ends it.
    Never,
    /// The timeout the call was given.
    After(Duration),
    /// A timeout the probe cannot read (or may be one).
    Unknown,
}

impl Timeout {
    fn wakes(self) -> Wakes {
        match self {
            Timeout::Never => Wakes::default(),
            Timeout::After(d) => Wakes {
                may: true,
                timer: Some(d),
            },
            Timeout::Unknown => Wakes::MAYBE,
        }
    }
}

/// The timeout of a wait in system call `name` of process `pid`, from its
/// arguments (`arg(i)`, counted from 0): an int of milliseconds (negative
/// waits for ever), or a pointer to a `timespec` (`timeval` for `select`)
/// in the program's memory (NULL waits for ever).
fn timeout_of(pid: i32, name: &str, arg: &dyn Fn(usize) -> Option<u64>) -> Timeout {
    let millis = |i: usize| match arg(i).map(|t| t as u32 as i32) {
        None => Timeout::Unknown,
        Some(t) if t < 0 => Timeout::Never,
        Some(t) => Timeout::After(Duration::from_millis(t as u64)),
    };
    let pointer = |i: usize, micros: bool| match arg(i) {
        None => Timeout::Unknown,
        Some(0) => Timeout::Never,
        Some(addr) => read_timeout(pid, addr, micros).map_or(Timeout::Unknown, Timeout::After),
    };
    match name {
        "poll" => millis(2),
        "epoll_wait" | "epoll_pwait" => millis(3),
        "ppoll" => pointer(2, false),
        "epoll_pwait2" => pointer(3, false),
        "pselect6" => pointer(4, false),
        "select" => pointer(4, true),
        _ => Timeout::Unknown,
    }
}

/// A `timespec` (or, with `micros`, a `timeval`) of a 64-bit process at
/// `addr`, read through `/proc/PID/mem` (the same ptrace access as its
/// `syscall` file). `None` if it cannot be read or makes no sense.
fn read_timeout(pid: i32, addr: u64, micros: bool) -> Option<Duration> {
    use std::os::unix::fs::FileExt;
    // A 32-bit program's structures are smaller: its ELF class says.
    let mut ident = [0u8; 5];
    File::open(format!("/proc/{pid}/exe"))
        .ok()?
        .read_exact_at(&mut ident, 0)
        .ok()?;
    if ident[..4] != *b"\x7fELF" || ident[4] != 2 {
        return None;
    }
    let mem = File::open(format!("/proc/{pid}/mem")).ok()?;
    let mut b = [0u8; 16];
    mem.read_exact_at(&mut b, addr).ok()?;
    let sec = i64::from_ne_bytes(b[..8].try_into().ok()?);
    let frac = i64::from_ne_bytes(b[8..].try_into().ok()?);
    let nanos = if micros {
        frac.checked_mul(1000)?
    } else {
        frac
    };
    if sec < 0 || !(0..1_000_000_000).contains(&nanos) {
        return None;
    }
    Some(Duration::new(sec as u64, nanos as u32))
}

/// The kernel function a thread sleeps in, for when `syscall` does not
/// tell; the function's name if it does not tell either. Names lose their
/// compiler suffix (`.constprop.0`, `.isra.0`).
fn classify_wchan(buf: &[u8], who: &dyn Fn() -> String) -> Result<Class, String> {
    let text = String::from_utf8_lossy(buf);
    let name = text.trim().split('.').next().unwrap_or("");
    let class = match name {
        "n_tty_read"
        | "wait_woken"
        | "do_select"
        | "core_sys_select"
        | "poll_schedule_timeout"
        | "do_sys_poll"
        | "ep_poll"
        // The arguments are not known here: maybe with a timeout.
        | "do_epoll_wait" => Class::Input(Timeout::Unknown),
        "hrtimer_nanosleep" | "do_nanosleep" | "common_nsleep" => {
            Class::Busy(format!("{} is sleeping in {name}", who()))
        }
        "pipe_read"
        | "pipe_write"
        | "pipe_wait"
        | "pipe_wait_readable"
        | "pipe_wait_writable"
        | "fifo_open"
        | "unix_stream_read_generic"
        | "unix_stream_data_wait"
        | "sk_wait_data"
        | "inet_csk_accept" => Class::Busy(format!("{} is blocked in {name}", who())),
        "do_wait" | "kernel_wait4" | "kernel_waitid" => Class::WaitsForChild(format!(
            "{} is waiting in {name} for a child outside the foreground group",
            who()
        )),
        "futex_wait_queue" | "futex_wait_queue_me" | "futex_do_wait" | "futex_wait" => {
            Class::Parked(format!("{} waits on a lock ({name})", who()))
        }
        "do_sigtimedwait" | "sigsuspend" | "sys_pause" => {
            Class::Parked(format!("{} waits for a signal ({name})", who()))
        }
        "" | "0" => Class::Active(format!("{} is running", who())),
        _ => return Err(format!("kernel function {name}")),
    };
    Ok(class)
}

/// What a blocking system call means for waiting on input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sys {
    /// First argument is the fd.
    Read,
    Write,
    Poll,
    /// First argument is nfds.
    Select,
    /// First argument is the epoll fd.
    Epoll,
    Sleep,
    Wait,
    Lock,
    Signal,
    /// Waiting on something that is not input: a connection, a file lock,
    /// the other end of a FIFO being opened.
    Elsewhere,
}

#[cfg(target_arch = "x86_64")]
mod syscall {
    use super::Sys::{self, *};

    pub(super) fn kind(nr: i64) -> Option<(Sys, &'static str)> {
        Some(match nr {
            0 => (Read, "read"),
            17 => (Read, "pread64"),
            19 => (Read, "readv"),
            295 => (Read, "preadv"),
            327 => (Read, "preadv2"),
            45 => (Read, "recvfrom"),
            47 => (Read, "recvmsg"),
            299 => (Read, "recvmmsg"),
            1 => (Write, "write"),
            18 => (Write, "pwrite64"),
            20 => (Write, "writev"),
            296 => (Write, "pwritev"),
            328 => (Write, "pwritev2"),
            44 => (Write, "sendto"),
            46 => (Write, "sendmsg"),
            307 => (Write, "sendmmsg"),
            7 => (Poll, "poll"),
            271 => (Poll, "ppoll"),
            23 => (Select, "select"),
            270 => (Select, "pselect6"),
            232 => (Epoll, "epoll_wait"),
            281 => (Epoll, "epoll_pwait"),
            441 => (Epoll, "epoll_pwait2"),
            35 => (Sleep, "nanosleep"),
            230 => (Sleep, "clock_nanosleep"),
            61 => (Wait, "wait4"),
            247 => (Wait, "waitid"),
            202 => (Lock, "futex"),
            449 => (Lock, "futex_waitv"),
            34 => (Signal, "pause"),
            128 => (Signal, "rt_sigtimedwait"),
            130 => (Signal, "rt_sigsuspend"),
            42 => (Elsewhere, "connect"),
            43 => (Elsewhere, "accept"),
            288 => (Elsewhere, "accept4"),
            73 => (Elsewhere, "flock"),
            2 => (Elsewhere, "open"),
            257 => (Elsewhere, "openat"),
            437 => (Elsewhere, "openat2"),
            _ => return None,
        })
    }
}

#[cfg(target_arch = "aarch64")]
mod syscall {
    use super::Sys::{self, *};

    // The generic table (include/uapi/asm-generic/unistd.h): no poll,
    // select or epoll_wait, only their p-variants.
    pub(super) fn kind(nr: i64) -> Option<(Sys, &'static str)> {
        Some(match nr {
            63 => (Read, "read"),
            65 => (Read, "readv"),
            67 => (Read, "pread64"),
            69 => (Read, "preadv"),
            286 => (Read, "preadv2"),
            207 => (Read, "recvfrom"),
            212 => (Read, "recvmsg"),
            243 => (Read, "recvmmsg"),
            64 => (Write, "write"),
            66 => (Write, "writev"),
            68 => (Write, "pwrite64"),
            70 => (Write, "pwritev"),
            287 => (Write, "pwritev2"),
            206 => (Write, "sendto"),
            211 => (Write, "sendmsg"),
            269 => (Write, "sendmmsg"),
            73 => (Poll, "ppoll"),
            72 => (Select, "pselect6"),
            22 => (Epoll, "epoll_pwait"),
            441 => (Epoll, "epoll_pwait2"),
            101 => (Sleep, "nanosleep"),
            115 => (Sleep, "clock_nanosleep"),
            260 => (Wait, "wait4"),
            95 => (Wait, "waitid"),
            98 => (Lock, "futex"),
            449 => (Lock, "futex_waitv"),
            133 => (Signal, "rt_sigsuspend"),
            137 => (Signal, "rt_sigtimedwait"),
            202 => (Elsewhere, "accept"),
            242 => (Elsewhere, "accept4"),
            203 => (Elsewhere, "connect"),
            32 => (Elsewhere, "flock"),
            56 => (Elsewhere, "openat"),
            437 => (Elsewhere, "openat2"),
            _ => return None,
        })
    }
}

/// Other architectures: no table, so every thread is judged by `wchan`.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod syscall {
    use super::Sys;

    pub(super) fn kind(_nr: i64) -> Option<(Sys, &'static str)> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who() -> String {
        "pid 1 (t)".to_string()
    }

    #[test]
    fn wchan_names_lose_their_suffix() {
        let class = |name: &str| classify_wchan(name.as_bytes(), &who);
        assert!(matches!(
            class("poll_schedule_timeout.constprop.0"),
            Ok(Class::Input(Timeout::Unknown))
        ));
        assert!(matches!(class("wait_woken\n"), Ok(Class::Input { .. })));
        assert!(matches!(class("do_epoll_wait"), Ok(Class::Input { .. })));
        assert!(matches!(class("hrtimer_nanosleep"), Ok(Class::Busy(_))));
        assert!(matches!(class("pipe_read"), Ok(Class::Busy(_))));
        assert!(matches!(class("futex_do_wait"), Ok(Class::Parked(_))));
        assert!(matches!(
            class("do_sigtimedwait.isra.0"),
            Ok(Class::Parked(_))
        ));
        assert!(matches!(class("do_wait"), Ok(Class::WaitsForChild(_))));
        assert!(matches!(class("0"), Ok(Class::Active(_))));
        assert_eq!(
            class("io_schedule").err().as_deref(),
            Some("kernel function io_schedule")
        );
    }

    /// The fallback reads what the kernel really shows for real sleepers.
    #[test]
    fn wchan_of_real_processes() {
        let mut sleep = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep");
        let pid = sleep.id();
        let mut buf = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let class = loop {
            read_proc(&format!("/proc/{pid}/wchan"), &mut buf).expect("wchan");
            let class = classify_wchan(&buf, &who);
            if matches!(&class, Ok(Class::Busy(why)) if why.contains("sleeping"))
                || std::time::Instant::now() > deadline
            {
                break class;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        let _ = sleep.kill();
        let _ = sleep.wait();
        assert!(
            matches!(&class, Ok(Class::Busy(why)) if why.contains("sleeping")),
            "{:?}",
            class.as_ref().err()
        );
    }

    #[test]
    fn syscall_table_names() {
        let name = |nr| syscall::kind(nr).map(|(_, name)| name);
        #[cfg(target_arch = "x86_64")]
        {
            assert_eq!(name(0), Some("read"));
            assert_eq!(name(270), Some("pselect6"));
            assert_eq!(name(281), Some("epoll_pwait"));
            assert_eq!(name(230), Some("clock_nanosleep"));
            assert_eq!(name(202), Some("futex"));
            assert_eq!(name(61), Some("wait4"));
        }
        #[cfg(target_arch = "aarch64")]
        {
            assert_eq!(name(63), Some("read"));
            assert_eq!(name(72), Some("pselect6"));
            assert_eq!(name(22), Some("epoll_pwait"));
            assert_eq!(name(115), Some("clock_nanosleep"));
            assert_eq!(name(98), Some("futex"));
            assert_eq!(name(260), Some("wait4"));
        }
        assert_eq!(name(-1), None);
        assert_eq!(name(100_000), None);
    }
}
