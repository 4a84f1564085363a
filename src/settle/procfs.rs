//! `/proc`, the one reader of it (besides `/proc/PID/stat`'s parser,
//! [`crate::procstat`], which this uses): the process table a session
//! signals and kills through, and the snapshots the settle probe classifies
//! (`settle/linux.rs`). Nothing here decides anything: each function reads
//! what the kernel shows and returns it as data, so that the deciding code
//! can be tested on canned snapshots.
//!
//! Every read is bounded (files at [`MAX_PROC_FILE`], process walks at
//! [`MAX_PROCS`], fd sets at [`MAX_SELECT_NFDS`] and [`MAX_EPOLL_FDS`]) and
//! none blocks: `/proc` files are generated on open.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use crate::procstat;

/// A session with more processes than this is not worth walking every few
/// milliseconds; the probe falls back to its quiet timer.
pub(crate) const MAX_PROCS: usize = 4096;
/// Epoll interest-list entries read, over all nested sets.
pub(crate) const MAX_EPOLL_FDS: usize = 256;
/// `select` sets wider than this are not resolved fd by fd (see
/// [`Wait::fds`]).
pub(crate) const MAX_SELECT_NFDS: u64 = 64;
/// Bytes read from one `/proc` file; `stat` and `syscall` are far smaller,
/// `children` and `fdinfo` of huge sets are cut (and then decided leniently).
pub(crate) const MAX_PROC_FILE: usize = 64 * 1024;

/// Reads a small `/proc` file without the `statx` that `fs::read` does first.
/// These files are generated whole on the first read, so a read that does
/// not fill the buffer is the end: no second read to see end-of-file.
fn read_small(path: &str, out: &mut Vec<u8>) -> io::Result<()> {
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

/// Whether a `/proc` read failed because the task exited meanwhile
/// (ESRCH is what a task that exits during the read gives).
fn gone(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound
        || e.raw_os_error() == Some(rustix::io::Errno::SRCH.raw_os_error())
}

/// Every pid in `/proc`; `None` where it cannot be listed.
fn all_pids() -> Option<impl Iterator<Item = i32>> {
    let dir = std::fs::read_dir("/proc").ok()?;
    Some(
        dir.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok()),
    )
}

// ---------------------------------------------------------------------------
// The process table: what a session signals and kills.

/// Whether a process `pid` exists (a zombie does).
pub(crate) fn exists(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Whether `pid` exists and is not a zombie.
pub(crate) fn is_live(pid: i32) -> bool {
    procstat::read(pid).is_some_and(|st| st.state != b'Z')
}

/// Pids of every process whose session id is `sid` (the child we spawned is
/// its session's leader, so this is everything it started that did not leave
/// the session). Empty where /proc is not available.
pub(crate) fn session_processes(sid: i32) -> Vec<i32> {
    session_groups(sid)
        .into_iter()
        .map(|(pid, _)| pid)
        .collect()
}

/// [`session_processes`] with each one's process group, as `(pid, pgrp)`.
pub(crate) fn session_groups(sid: i32) -> Vec<(i32, i32)> {
    let Some(pids) = all_pids() else {
        return Vec::new();
    };
    pids.filter_map(|pid| {
        let st = procstat::read(pid)?;
        (st.session == sid).then_some((pid, st.pgrp))
    })
    .collect()
}

/// Every live (not zombie) process as `(pid, ppid)`, from /proc (empty where
/// it is not available).
fn process_table() -> Vec<(i32, i32)> {
    let Some(pids) = all_pids() else {
        return Vec::new();
    };
    pids.filter_map(|pid| {
        let st = procstat::read(pid)?;
        (st.state != b'Z' && st.state != b'X').then_some((pid, st.ppid))
    })
    .collect()
}

/// Live direct children of `pid`.
pub(crate) fn children(pid: i32) -> Vec<i32> {
    process_table()
        .into_iter()
        .filter(|&(_, ppid)| ppid == pid)
        .map(|(p, _)| p)
        .collect()
}

/// Live descendants of `pid` (children first, then theirs), not `pid` itself.
pub(crate) fn descendants(pid: i32) -> Vec<i32> {
    let table = process_table();
    let mut out = Vec::new();
    let mut frontier = vec![pid];
    while let Some(parent) = frontier.pop() {
        for &(p, ppid) in &table {
            if ppid == parent && !out.contains(&p) {
                out.push(p);
                frontier.push(p);
            }
        }
    }
    out
}

/// Does `pid` ignore every one of `signals` (SIG_IGN, from the `SigIgn`
/// mask of /proc/PID/status)? False when it cannot be told. A process that
/// only blocks a signal may still take it (with sigwait), so blocked is not
/// ignored.
pub(crate) fn ignores(pid: i32, signals: &[rustix::process::Signal]) -> bool {
    let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    let Some(mask) = text
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
    else {
        return false;
    };
    signals.iter().all(|s| {
        let n = s.as_raw();
        (1..=64).contains(&n) && mask & (1 << (n - 1)) != 0
    })
}

// ---------------------------------------------------------------------------
// The foreground process group, for the settle probe.

/// A process of the foreground group, from its `stat`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Member {
    pub pid: i32,
    pub ppid: i32,
    /// The command name, for the probe's reasons.
    pub comm: String,
    /// The state of the main thread (the process's `stat` shows that one).
    pub state: u8,
    /// Its threads, the main one (`tid == pid`) among them.
    pub tids: Vec<i32>,
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
/// else in all of `/proc`. The error says why none can be listed.
pub(crate) fn group_members(leader: i32, pgid: i32) -> Result<Vec<Member>, String> {
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
                if read_small(&format!("/proc/{pid}/task/{tid}/children"), &mut buf).is_ok() {
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
    read_small(&format!("/proc/{pid}/stat"), buf).ok()?;
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

// ---------------------------------------------------------------------------
// One thread: what it is blocked in, and on what.

/// What one thread of a member was doing at the read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Thread {
    pub tid: i32,
    /// Its state letter. Only the main thread's is read (it is in the
    /// process's `stat`); another thread's is taken to be `S`: its `syscall`
    /// says "running" for a running thread, a stop (job control) stops the
    /// main thread too, and a thread other than the main one is reaped as
    /// soon as it exits. That saves a third of the cost of a many-threaded
    /// program.
    pub state: u8,
    /// `/proc/PID/task/TID/syscall`, decoded; read only when the thread
    /// sleeps interruptibly (`S`) in a process that is not stopped.
    pub syscall: Syscall,
    /// `/proc/PID/task/TID/wchan`, read only when the system call does not
    /// tell (see [`Syscall::tells`]).
    pub wchan: Wchan,
}

/// What `/proc/PID/task/TID/syscall` said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Syscall {
    /// Not read: the state said enough.
    NotRead,
    /// The thread exited while it was read.
    Gone,
    /// It could not be read (ptrace access denied: Yama's
    /// `ptrace_scope=2`), with the error.
    Unreadable(String),
    /// The file says `running`.
    Running,
    /// Blocked, but not in a system call (the number is -1).
    Outside,
    /// In a system call the table ([`Sys`]) does not list.
    Unlisted(i64),
    /// In a listed system call.
    In(Wait),
}

impl Syscall {
    /// Whether this says what the thread waits on, so `wchan` is not needed:
    /// not for a failed read, a sleep outside a system call, an unlisted
    /// call, or a read or write of an fd that is closed.
    pub fn tells(&self) -> bool {
        match self {
            Syscall::NotRead | Syscall::Gone | Syscall::Running => true,
            Syscall::Unreadable(_) | Syscall::Outside | Syscall::Unlisted(_) => false,
            Syscall::In(wait) => {
                !matches!(wait.sys, Sys::Read | Sys::Write) || wait.fd_target(0).is_some()
            }
        }
    }
}

/// A blocking system call and what it waits on, as far as `/proc` shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Wait {
    /// What kind of wait it is.
    pub sys: Sys,
    /// The system call's name.
    pub name: &'static str,
    /// The number, as `syscall` shows it.
    pub nr: i64,
    /// The six arguments (`None` where one does not parse).
    pub args: [Option<u64>; 6],
    /// The fds it waits on, each resolved through `/proc/PID/fd`: the fd of
    /// a read or a write (`args[0]`); every fd below `nfds` of a select, if
    /// `nfds` is at most [`MAX_SELECT_NFDS`]. `None` where the set was not
    /// read: a wider select, a poll (its array is in the program's memory),
    /// any other call.
    pub fds: Option<Vec<WaitFd>>,
    /// An epoll wait's interest list (`args[0]` is the epoll fd).
    pub epoll: Option<EpollSet>,
    /// How long the call may last by itself, for the calls that take a
    /// timeout (poll, select and epoll); [`Timeout::Unknown`] for others.
    pub timeout: Timeout,
}

impl Wait {
    /// The target of `fds[i]`, if it was read and the fd is open.
    pub fn fd_target(&self, i: usize) -> Option<&[u8]> {
        self.fds.as_ref()?.get(i)?.target.as_deref()
    }

    /// Argument `i` (from 0).
    pub fn arg(&self, i: usize) -> Option<u64> {
        self.args.get(i).copied().flatten()
    }
}

/// One fd of a wait, and what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WaitFd {
    pub fd: u64,
    /// The `/proc/PID/fd/N` link: a path (`/dev/pts/3`), `pipe:[123]`,
    /// `socket:[456]`, `anon_inode:[eventpoll]`, ...; `None` if the fd is
    /// closed (or the link cannot be read).
    pub target: Option<Vec<u8>>,
}

/// An epoll interest list, from `/proc/PID/fdinfo/EPFD` (`tfd:` lines).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EpollSet {
    /// The epoll fd itself.
    pub fd: u64,
    /// The watched fds in the order the kernel lists them; `None` if the
    /// fdinfo could not be read.
    pub entries: Option<Vec<EpollEntry>>,
    /// The list was cut at [`MAX_EPOLL_FDS`] (over all nested sets), here or
    /// in a set nested in it.
    pub truncated: bool,
}

/// One watched fd of an epoll set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EpollEntry {
    pub fd: WaitFd,
    /// When the fd is itself an epoll set (other than the one it is in),
    /// that set's interest list.
    pub nested: Option<EpollSet>,
}

/// How long a wait may last by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Timeout {
    /// No timeout: only an event or a signal ends it.
    Never,
    /// The timeout the call was given (the whole of it: the call began at
    /// some earlier moment).
    After(Duration),
    /// A timeout that cannot be read (or may be one).
    Unknown,
}

/// What `/proc/PID/task/TID/wchan` said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Wchan {
    NotRead,
    Gone,
    Unreadable(String),
    /// The kernel function the thread sleeps in, as the file has it
    /// (compiler suffixes such as `.constprop.0` kept; `0` when running).
    Function(String),
}

/// Read what thread `tid` of `member` is doing (see [`Thread`] for what is
/// read when).
pub(crate) fn thread(member: &Member, tid: i32) -> Thread {
    let pid = member.pid;
    let state = if tid == pid { member.state } else { b'S' };
    let mut thread = Thread {
        tid,
        state,
        syscall: Syscall::NotRead,
        wchan: Wchan::NotRead,
    };
    if state != b'S' || matches!(member.state, b'T' | b't') {
        return thread;
    }
    let mut buf = Vec::with_capacity(256);
    thread.syscall = match read_small(&format!("/proc/{pid}/task/{tid}/syscall"), &mut buf) {
        Ok(()) => decode_syscall(&buf, |wait| read_wait_set(pid, wait)),
        Err(e) if gone(&e) => Syscall::Gone,
        Err(e) => Syscall::Unreadable(e.to_string()),
    };
    if !thread.syscall.tells() {
        thread.wchan = match read_small(&format!("/proc/{pid}/task/{tid}/wchan"), &mut buf) {
            Ok(()) => Wchan::Function(String::from_utf8_lossy(&buf).into_owned()),
            Err(e) if gone(&e) => Wchan::Gone,
            Err(e) => Wchan::Unreadable(e.to_string()),
        };
    }
    thread
}

/// Decode the text of a `syscall` file; for a listed call, `fill` reads
/// what it waits on into the [`Wait`].
pub(crate) fn decode_syscall(buf: &[u8], fill: impl FnOnce(&mut Wait)) -> Syscall {
    let text = String::from_utf8_lossy(buf);
    let mut words = text.split_ascii_whitespace();
    let nr = match words.next() {
        Some("running") => return Syscall::Running,
        Some(nr) => nr.parse::<i64>().ok(),
        None => None,
    };
    let Some(nr) = nr.filter(|&nr| nr >= 0) else {
        return Syscall::Outside;
    };
    // The six arguments (then the stack and instruction pointers).
    let mut args = [None; 6];
    for (slot, word) in args.iter_mut().zip(words) {
        *slot = u64::from_str_radix(word.trim_start_matches("0x"), 16).ok();
    }
    let Some((sys, name)) = syscall_kind(nr) else {
        return Syscall::Unlisted(nr);
    };
    let mut wait = Wait {
        sys,
        name,
        nr,
        args,
        fds: None,
        epoll: None,
        timeout: Timeout::Unknown,
    };
    fill(&mut wait);
    Syscall::In(wait)
}

/// Fill in what `wait` of process `pid` waits on: its fds, interest list and
/// timeout.
fn read_wait_set(pid: i32, wait: &mut Wait) {
    let arg1 = wait.arg(0).unwrap_or(u64::MAX);
    let resolve = |fd: u64| WaitFd {
        fd,
        target: fd_link(pid, fd),
    };
    match wait.sys {
        Sys::Read | Sys::Write => wait.fds = Some(vec![resolve(arg1)]),
        Sys::Select if arg1 <= MAX_SELECT_NFDS => {
            wait.fds = Some((0..arg1).map(resolve).collect());
        }
        Sys::Epoll => wait.epoll = Some(epoll_set(pid, arg1, &mut 0)),
        _ => {}
    }
    if matches!(wait.sys, Sys::Poll | Sys::Select | Sys::Epoll) {
        wait.timeout = timeout_of(pid, wait.name, &|i| wait.arg(i));
    }
}

/// The interest list of epoll fd `epfd` of `pid`, nested sets followed;
/// `budget` counts entries over all of them.
fn epoll_set(pid: i32, epfd: u64, budget: &mut usize) -> EpollSet {
    let mut set = EpollSet {
        fd: epfd,
        entries: None,
        truncated: false,
    };
    let mut buf = Vec::new();
    if read_small(&format!("/proc/{pid}/fdinfo/{epfd}"), &mut buf).is_err() {
        return set;
    }
    let mut entries = Vec::new();
    for tfd in parse_epoll_fds(&buf) {
        *budget += 1;
        if *budget > MAX_EPOLL_FDS {
            set.truncated = true;
            break;
        }
        let fd = WaitFd {
            fd: tfd,
            target: fd_link(pid, tfd),
        };
        let nested = (fd.target.as_deref() == Some(b"anon_inode:[eventpoll]") && tfd != epfd)
            .then(|| epoll_set(pid, tfd, budget));
        if nested.as_ref().is_some_and(|n| n.truncated) {
            set.truncated = true;
        }
        entries.push(EpollEntry { fd, nested });
        if set.truncated {
            break;
        }
    }
    set.entries = Some(entries);
    set
}

/// The watched fds of an epoll `fdinfo` file (its `tfd:` lines).
pub(crate) fn parse_epoll_fds(buf: &[u8]) -> Vec<u64> {
    String::from_utf8_lossy(buf)
        .lines()
        .filter_map(|line| line.strip_prefix("tfd:"))
        .filter_map(|tfd| tfd.split_ascii_whitespace().next()?.parse().ok())
        .collect()
}

/// Where fd `fd` of `pid` points; `None` if it is closed.
fn fd_link(pid: i32, fd: u64) -> Option<Vec<u8>> {
    let target = std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).ok()?;
    Some(target.into_os_string().into_vec())
}

/// Where every open fd of `pid` points (empty if they cannot be read).
pub(crate) fn fd_links(pid: i32) -> Vec<Vec<u8>> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|entry| std::fs::read_link(entry.path()).ok())
        .map(|target| target.into_os_string().into_vec())
        .collect()
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

// ---------------------------------------------------------------------------
// The system call table.

/// What a blocking system call means for waiting on input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sys {
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

/// The kind and name of system call `nr` on this architecture.
pub(crate) fn syscall_kind(nr: i64) -> Option<(Sys, &'static str)> {
    table::kind(nr)
}

#[cfg(target_arch = "x86_64")]
mod table {
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
mod table {
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
mod table {
    use super::Sys;

    pub(super) fn kind(_nr: i64) -> Option<(Sys, &'static str)> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syscall_table_names() {
        let name = |nr| syscall_kind(nr).map(|(_, name)| name);
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

    #[cfg(target_arch = "x86_64")]
    const READ: i64 = 0;
    #[cfg(target_arch = "aarch64")]
    const READ: i64 = 63;

    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    fn a_syscall_file_decodes() {
        assert_eq!(decode_syscall(b"running\n", |_| {}), Syscall::Running);
        assert_eq!(
            decode_syscall(b"-1 0x7ffd 0x55\n", |_| {}),
            Syscall::Outside
        );
        assert_eq!(decode_syscall(b"", |_| {}), Syscall::Outside);
        assert_eq!(
            decode_syscall(b"100000 0x0 0x0 0x0 0x0 0x0 0x0 0x1 0x2\n", |_| {}),
            Syscall::Unlisted(100_000)
        );
        let text = format!("{READ} 0x3 0x7ffd1000 0x400 0x0 0x0 0x0 0x7ffd0ff8 0x4011e0\n");
        let Syscall::In(wait) = decode_syscall(text.as_bytes(), |_| {}) else {
            panic!("a listed read decodes");
        };
        assert_eq!(wait.sys, Sys::Read);
        assert_eq!(wait.args[0], Some(3));
        assert_eq!(wait.args[2], Some(0x400));
    }

    #[test]
    fn epoll_fdinfo_lists_its_targets() {
        let fdinfo = b"pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\n\
tfd:        0 events:       19 data:                0  pos:0 ino:3 sdev:19\n\
tfd:       12 events:       19 data:                c  pos:0 ino:2a sdev:e\n";
        assert_eq!(parse_epoll_fds(fdinfo), vec![0, 12]);
        assert!(parse_epoll_fds(b"pos:\t0\n").is_empty());
    }

    /// The fallback reads what the kernel really shows for a real sleeper.
    #[test]
    fn wchan_of_a_real_sleeper() {
        let mut sleep = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep");
        let pid = sleep.id() as i32;
        let mut buf = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let name = loop {
            read_small(&format!("/proc/{pid}/wchan"), &mut buf).expect("wchan");
            let name = String::from_utf8_lossy(&buf).into_owned();
            if name.contains("sleep") || std::time::Instant::now() > deadline {
                break name;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let _ = sleep.kill();
        let _ = sleep.wait();
        assert!(name.contains("sleep"), "{name}");
    }
}
