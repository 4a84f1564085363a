//! `/proc`, the one reader of it (besides `/proc/PID/stat`'s parser,
//! [`crate::procstat`], which this uses): the process table a session
//! signals and kills through, and the snapshots the settle probe classifies
//! (`settle/linux.rs`). Nothing here decides anything: each function reads
//! what the kernel shows and returns it as data, so that the deciding code
//! can be tested on canned snapshots.
//!
//! Every read is bounded (files at [`MAX_PROC_FILE`], process walks at
//! [`MAX_PROCS`], fd sets at [`MAX_SELECT_NFDS`], [`MAX_POLL_FDS`],
//! [`MAX_WAIT_FDS`] and [`MAX_EPOLL_FDS`]) and none blocks: `/proc` files are
//! generated on open, and the one question asked elsewhere (a Unix socket's
//! peer, [`socket_peer`]) is answered by the kernel within the request.

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
/// `select` sets wider than this are not read (`FD_SETSIZE`: glibc's
/// `fd_set` holds no more); see [`Wait::fds`].
pub(crate) const MAX_SELECT_NFDS: u64 = 1024;
/// Where a `select`'s bitmaps cannot be read, every fd below `nfds` is
/// resolved instead, up to this `nfds`.
pub(crate) const MAX_SELECT_GUESS: u64 = 64;
/// `poll` arrays longer than this are not read (8 bytes an entry).
pub(crate) const MAX_POLL_FDS: u64 = 1024;
/// Fds of one `select` or `poll` set resolved through `/proc/PID/fd`; a set
/// with more is not resolved (see [`Wait::fds`]).
pub(crate) const MAX_WAIT_FDS: usize = 64;
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

/// The name `pid` runs as (`/proc/PID/comm`), if it can be read.
pub(crate) fn comm(pid: i32) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    read_small(&format!("/proc/{pid}/comm"), &mut buf).ok()?;
    Some(buf)
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
    /// a read or a write (`args[0]`); the fds in a select's three sets (its
    /// bitmaps, read from the program's memory) or in a poll's array, with
    /// what each is watched for. Where a select's bitmaps cannot be read,
    /// every fd below `nfds` (up to [`MAX_SELECT_GUESS`]), each with
    /// `watch: None`. `None` where the set was not read: a set too wide
    /// ([`MAX_SELECT_NFDS`], [`MAX_POLL_FDS`], more than [`MAX_WAIT_FDS`]
    /// fds in it), a poll array that cannot be read, any other call.
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
    /// What the wait watches it for; `None` where that is not known (a
    /// select whose bitmaps could not be read: the fd may not be in the set
    /// at all).
    pub watch: Option<Watch>,
}

/// What a wait watches one fd for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Watch {
    /// Input (`POLLIN`/`POLLPRI`, select's read or except set, `EPOLLIN`):
    /// what comes in on it may wake the wait.
    pub read: bool,
    /// Room to write (`POLLOUT`, select's write set, `EPOLLOUT`).
    pub write: bool,
}

impl Watch {
    pub const READ: Watch = Watch {
        read: true,
        write: false,
    };
    pub const WRITE: Watch = Watch {
        read: false,
        write: true,
    };

    /// From `poll`'s (or epoll's, which has the same low bits) event mask.
    pub fn of_poll_events(events: u32) -> Watch {
        // POLLIN, POLLPRI, POLLRDNORM, POLLRDBAND; POLLOUT, POLLWRNORM,
        // POLLWRBAND (the same bits in epoll).
        Watch {
            read: events & (0x1 | 0x2 | 0x40 | 0x80) != 0,
            write: events & (0x4 | 0x100 | 0x200) != 0,
        }
    }
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
/// timeout. The program's memory (for a poll array, select bitmaps and
/// timeouts) is opened once, when first needed.
fn read_wait_set(pid: i32, wait: &mut Wait) {
    let arg1 = wait.arg(0).unwrap_or(u64::MAX);
    let resolve = |fd: u64, watch: Option<Watch>| WaitFd {
        fd,
        target: fd_link(pid, fd),
        watch,
    };
    let memory = std::cell::OnceCell::new();
    let mem = || memory.get_or_init(|| Memory::open(pid)).as_ref();
    match wait.sys {
        Sys::Read => wait.fds = Some(vec![resolve(arg1, Some(Watch::READ))]),
        Sys::Write => wait.fds = Some(vec![resolve(arg1, Some(Watch::WRITE))]),
        Sys::Select if arg1 <= MAX_SELECT_NFDS => {
            let sets = [wait.arg(1), wait.arg(2), wait.arg(3)];
            wait.fds = match mem().and_then(|m| select_sets(m, arg1, sets)) {
                Some(set) if set.len() <= MAX_WAIT_FDS => Some(
                    set.into_iter()
                        .map(|(fd, watch)| resolve(fd, Some(watch)))
                        .collect(),
                ),
                Some(_) => None,
                None if arg1 <= MAX_SELECT_GUESS => {
                    Some((0..arg1).map(|fd| resolve(fd, None)).collect())
                }
                None => None,
            };
        }
        Sys::Poll if wait.arg(1).is_some_and(|n| n > 0 && n <= MAX_POLL_FDS) => {
            let (addr, n) = (wait.arg(0).unwrap_or(0), wait.arg(1).unwrap_or(0));
            let mut bytes = vec![0u8; n as usize * 8];
            wait.fds = mem()
                .and_then(|m| m.read(addr, &mut bytes))
                .map(|()| decode_pollfds(&bytes))
                .filter(|set| set.len() <= MAX_WAIT_FDS)
                .map(|set| {
                    set.into_iter()
                        .map(|(fd, watch)| resolve(fd, Some(watch)))
                        .collect()
                });
        }
        Sys::Epoll => wait.epoll = Some(epoll_set(pid, arg1, &mut 0)),
        _ => {}
    }
    if matches!(wait.sys, Sys::Poll | Sys::Select | Sys::Epoll) {
        wait.timeout = timeout_of(&mem, wait.name, &|i| wait.arg(i));
    }
}

/// The fds in a `select`'s three sets (`fd_set` bitmaps at the addresses in
/// `sets`: read, write, except; NULL for none), below `nfds`, in order:
/// with what each is watched for (the except set, out-of-band data, counts
/// as input).
fn select_sets(mem: &Memory, nfds: u64, sets: [Option<u64>; 3]) -> Option<Vec<(u64, Watch)>> {
    // Whole 64-bit words, as the kernel reads them.
    let len = nfds.div_ceil(64) as usize * 8;
    let mut bitmaps = [Vec::new(), Vec::new(), Vec::new()];
    for (bitmap, addr) in bitmaps.iter_mut().zip(sets) {
        match addr? {
            0 => {}
            addr => {
                bitmap.resize(len, 0);
                mem.read(addr, bitmap)?;
            }
        }
    }
    let [read, write, except] = &bitmaps;
    Some(decode_fd_sets(nfds, read, write, except))
}

/// The fds set in `select` bitmaps (little- or big-endian words as the
/// machine has them: bit `fd % 64` of word `fd / 64`), below `nfds`; an empty
/// slice is a NULL set.
pub(crate) fn decode_fd_sets(
    nfds: u64,
    read: &[u8],
    write: &[u8],
    except: &[u8],
) -> Vec<(u64, Watch)> {
    let bit = |bitmap: &[u8], fd: u64| {
        let word = (fd / 64) as usize * 8;
        bitmap
            .get(word..word + 8)
            .and_then(|w| w.try_into().ok())
            .is_some_and(|w: [u8; 8]| u64::from_ne_bytes(w) & (1 << (fd % 64)) != 0)
    };
    (0..nfds)
        .filter_map(|fd| {
            let watch = Watch {
                read: bit(read, fd) || bit(except, fd),
                write: bit(write, fd),
            };
            (watch != Watch::default()).then_some((fd, watch))
        })
        .collect()
}

/// The entries of a `poll` array (`struct pollfd`: an int fd, short events,
/// short revents): the fds it watches (a negative fd is skipped, as poll
/// does) with their events.
pub(crate) fn decode_pollfds(bytes: &[u8]) -> Vec<(u64, Watch)> {
    bytes
        .chunks_exact(8)
        .filter_map(|entry| {
            let fd = i32::from_ne_bytes(entry[..4].try_into().ok()?);
            let events = u16::from_ne_bytes(entry[4..6].try_into().ok()?);
            (fd >= 0).then(|| (fd as u64, Watch::of_poll_events(u32::from(events))))
        })
        .collect()
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
    for (tfd, events) in parse_epoll_entries(&buf) {
        *budget += 1;
        if *budget > MAX_EPOLL_FDS {
            set.truncated = true;
            break;
        }
        let fd = WaitFd {
            fd: tfd,
            target: fd_link(pid, tfd),
            watch: Some(Watch::of_poll_events(events)),
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
#[cfg(test)]
pub(crate) fn parse_epoll_fds(buf: &[u8]) -> Vec<u64> {
    parse_epoll_entries(buf)
        .into_iter()
        .map(|(fd, _)| fd)
        .collect()
}

/// The watched fds of an epoll `fdinfo` file (its `tfd:` lines), each with
/// its event mask (`events:`, in hex).
pub(crate) fn parse_epoll_entries(buf: &[u8]) -> Vec<(u64, u32)> {
    String::from_utf8_lossy(buf)
        .lines()
        .filter_map(|line| line.strip_prefix("tfd:"))
        .filter_map(|rest| {
            let mut words = rest.split_ascii_whitespace();
            let fd = words.next()?.parse().ok()?;
            // Unknown events count as input, the likeliest.
            let events = match (words.next(), words.next()) {
                (Some("events:"), Some(hex)) => u32::from_str_radix(hex, 16).unwrap_or(1),
                _ => 1,
            };
            Some((fd, events))
        })
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

/// Where every fd of `pid` that is open non-blocking (`O_NONBLOCK` in its
/// `fdinfo` flags) points.
pub(crate) fn nonblocking_fds(pid: i32) -> Vec<Vec<u8>> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    let mut buf = Vec::new();
    dir.flatten()
        .filter(|entry| {
            let fd = entry.file_name();
            let path = format!("/proc/{pid}/fdinfo/{}", fd.to_string_lossy());
            read_small(&path, &mut buf).is_ok() && parse_nonblocking(&buf)
        })
        .filter_map(|entry| std::fs::read_link(entry.path()).ok())
        .map(|target| target.into_os_string().into_vec())
        .collect()
}

/// Whether an `fdinfo` file's `flags:` (octal) hold `O_NONBLOCK`.
pub(crate) fn parse_nonblocking(buf: &[u8]) -> bool {
    const O_NONBLOCK: u32 = 0o4000;
    String::from_utf8_lossy(buf)
        .lines()
        .find_map(|line| line.strip_prefix("flags:"))
        .and_then(|flags| u32::from_str_radix(flags.trim(), 8).ok())
        .is_some_and(|flags| flags & O_NONBLOCK != 0)
}

/// Whether fd `fd` of `pid` is a FIFO (its link is only a path: `stat`
/// through it tells). False if it cannot be told.
pub(crate) fn is_fifo(pid: i32, fd: u64) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(format!("/proc/{pid}/fd/{fd}")).is_ok_and(|m| m.file_type().is_fifo())
}

/// The inode of the peer of the Unix socket with inode `ino` (a
/// `socket:[INO]` link), asked of the kernel's socket diagnostics
/// (`NETLINK_SOCK_DIAG`, `UDIAG_SHOW_PEER`: what `ss -x` shows, no privilege
/// needed). `None` for a socket that is not a connected Unix socket (TCP, a
/// listening socket), or where the kernel does not say (no `unix_diag`, or
/// another network namespace).
pub(crate) fn socket_peer(ino: u64) -> Option<u64> {
    use rustix::net::{netlink, AddressFamily, RecvFlags, SendFlags, SocketType};
    const SOCK_DIAG_BY_FAMILY: u16 = 20;
    const NLM_F_REQUEST: u16 = 1;
    const NLMSG_ERROR: u16 = 2;
    const UDIAG_SHOW_PEER: u32 = 4;
    const UNIX_DIAG_PEER: u16 = 2;
    let ino = u32::try_from(ino).ok()?;
    let sock = rustix::net::socket(
        AddressFamily::NETLINK,
        SocketType::DGRAM,
        Some(netlink::SOCK_DIAG),
    )
    .ok()?;
    // struct nlmsghdr, then struct unix_diag_req.
    let mut req = Vec::with_capacity(40);
    req.extend_from_slice(&40u32.to_ne_bytes());
    req.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    req.extend_from_slice(&NLM_F_REQUEST.to_ne_bytes());
    req.extend_from_slice(&1u32.to_ne_bytes()); // sequence
    req.extend_from_slice(&0u32.to_ne_bytes()); // port: the kernel
    req.extend_from_slice(&[1, 0, 0, 0]); // AF_UNIX, protocol, padding
    req.extend_from_slice(&u32::MAX.to_ne_bytes()); // every state
    req.extend_from_slice(&ino.to_ne_bytes());
    req.extend_from_slice(&UDIAG_SHOW_PEER.to_ne_bytes());
    req.extend_from_slice(&[0xff; 8]); // no cookie
    rustix::net::send(&sock, &req, SendFlags::empty()).ok()?;
    // The answer is queued before send returns.
    let mut buf = [0u8; 512];
    let (n, _) = rustix::net::recv(&sock, &mut buf, RecvFlags::DONTWAIT).ok()?;
    decode_diag_peer(buf.get(..n)?, NLMSG_ERROR, UNIX_DIAG_PEER)
}

/// The peer inode in a `unix_diag` answer (a `nlmsghdr`, a
/// `unix_diag_msg`, then attributes).
fn decode_diag_peer(msg: &[u8], error: u16, peer_attr: u16) -> Option<u64> {
    let u16_at = |i: usize| Some(u16::from_ne_bytes(msg.get(i..i + 2)?.try_into().ok()?));
    let u32_at = |i: usize| Some(u32::from_ne_bytes(msg.get(i..i + 4)?.try_into().ok()?));
    let len = (u32_at(0)? as usize).min(msg.len());
    if u16_at(4)? == error {
        return None;
    }
    // 16 bytes of header, 16 of unix_diag_msg; attributes 4-aligned.
    let mut at = 32;
    while at + 4 <= len {
        let (alen, kind) = (u16_at(at)? as usize, u16_at(at + 2)?);
        if alen < 4 {
            return None;
        }
        if kind == peer_attr && alen >= 8 {
            return u32_at(at + 4).map(u64::from);
        }
        at += alen.div_ceil(4) * 4;
    }
    None
}

/// A 64-bit process's memory, through `/proc/PID/mem` (the same ptrace
/// access as its `syscall` file). A 32-bit program's structures are laid
/// out otherwise: its ELF class says, and it is not read.
struct Memory(File);

impl Memory {
    fn open(pid: i32) -> Option<Memory> {
        use std::os::unix::fs::FileExt;
        let mut ident = [0u8; 5];
        File::open(format!("/proc/{pid}/exe"))
            .ok()?
            .read_exact_at(&mut ident, 0)
            .ok()?;
        if ident[..4] != *b"\x7fELF" || ident[4] != 2 {
            return None;
        }
        File::open(format!("/proc/{pid}/mem")).ok().map(Memory)
    }

    /// Fill `buf` from address `addr`; `None` if it cannot be read whole.
    fn read(&self, addr: u64, buf: &mut [u8]) -> Option<()> {
        use std::os::unix::fs::FileExt;
        self.0.read_exact_at(buf, addr).ok()
    }
}

/// The timeout of a wait in system call `name`, from its arguments
/// (`arg(i)`, counted from 0): an int of milliseconds (negative waits for
/// ever), or a pointer to a `timespec` (`timeval` for `select`) in the
/// program's memory (NULL waits for ever).
fn timeout_of<'m>(
    mem: &dyn Fn() -> Option<&'m Memory>,
    name: &str,
    arg: &dyn Fn(usize) -> Option<u64>,
) -> Timeout {
    let millis = |i: usize| match arg(i).map(|t| t as u32 as i32) {
        None => Timeout::Unknown,
        Some(t) if t < 0 => Timeout::Never,
        Some(t) => Timeout::After(Duration::from_millis(t as u64)),
    };
    let pointer = |i: usize, micros: bool| match arg(i) {
        None => Timeout::Unknown,
        Some(0) => Timeout::Never,
        Some(addr) => mem()
            .and_then(|m| read_timeout(m, addr, micros))
            .map_or(Timeout::Unknown, Timeout::After),
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

/// A `timespec` (or, with `micros`, a `timeval`) at `addr`. `None` if it
/// cannot be read or makes no sense.
fn read_timeout(mem: &Memory, addr: u64, micros: bool) -> Option<Duration> {
    let mut b = [0u8; 16];
    mem.read(addr, &mut b)?;
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
    /// A file lock held by another process: `fcntl` (only `F_SETLKW` and
    /// `F_OFD_SETLKW` block, and glibc's `lockf` is one of them) or `flock`
    /// without `LOCK_NB`.
    FileLock,
    Signal,
    /// Waiting on something that is not input: a connection, the other end
    /// of a FIFO being opened.
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
            72 => (FileLock, "fcntl"),
            73 => (FileLock, "flock"),
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
            25 => (FileLock, "fcntl"),
            32 => (FileLock, "flock"),
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
            assert_eq!(syscall_kind(72), Some((Sys::FileLock, "fcntl")));
            assert_eq!(syscall_kind(73), Some((Sys::FileLock, "flock")));
        }
        #[cfg(target_arch = "aarch64")]
        {
            assert_eq!(name(63), Some("read"));
            assert_eq!(name(72), Some("pselect6"));
            assert_eq!(name(22), Some("epoll_pwait"));
            assert_eq!(name(115), Some("clock_nanosleep"));
            assert_eq!(name(98), Some("futex"));
            assert_eq!(name(260), Some("wait4"));
            assert_eq!(syscall_kind(25), Some((Sys::FileLock, "fcntl")));
            assert_eq!(syscall_kind(32), Some((Sys::FileLock, "flock")));
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
    fn fdinfo_flags_tell_non_blocking() {
        assert!(parse_nonblocking(
            b"pos:\t0\nflags:\t0104002\nmnt_id:\t25\n"
        ));
        assert!(!parse_nonblocking(
            b"pos:\t0\nflags:\t0100002\nmnt_id:\t25\n"
        ));
        assert!(!parse_nonblocking(b"pos:\t0\n"));
    }

    #[test]
    fn epoll_fdinfo_lists_its_targets() {
        let fdinfo = b"pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\n\
tfd:        0 events:       19 data:                0  pos:0 ino:3 sdev:19\n\
tfd:       12 events:       19 data:                c  pos:0 ino:2a sdev:e\n";
        assert_eq!(parse_epoll_fds(fdinfo), vec![0, 12]);
        assert!(parse_epoll_fds(b"pos:\t0\n").is_empty());
    }

    #[test]
    fn select_bitmaps_decode() {
        // fds 0 and 5 to read, 1 to write, 70 out-of-band (second word).
        let mut read = vec![0u8; 16];
        read[..8].copy_from_slice(&(1u64 | 1 << 5).to_ne_bytes());
        let mut write = vec![0u8; 16];
        write[..8].copy_from_slice(&(1u64 << 1).to_ne_bytes());
        let mut except = vec![0u8; 16];
        except[8..].copy_from_slice(&(1u64 << 6).to_ne_bytes());
        assert_eq!(
            decode_fd_sets(71, &read, &write, &except),
            vec![
                (0, Watch::READ),
                (1, Watch::WRITE),
                (5, Watch::READ),
                (70, Watch::READ)
            ]
        );
        // Bits at or above nfds do not count; a NULL set is empty.
        assert_eq!(decode_fd_sets(5, &read, &[], &[]), vec![(0, Watch::READ)]);
        assert!(decode_fd_sets(64, &[], &[], &[]).is_empty());
    }

    #[test]
    fn a_poll_array_decodes() {
        let entry = |fd: i32, events: u16| {
            let mut e = fd.to_ne_bytes().to_vec();
            e.extend_from_slice(&events.to_ne_bytes());
            e.extend_from_slice(&0u16.to_ne_bytes());
            e
        };
        // POLLIN on 0, POLLOUT on 1, a skipped -1, POLLIN|POLLPRI on 4, and
        // an fd watched for hang-up alone.
        let bytes = [
            entry(0, 0x1),
            entry(1, 0x4),
            entry(-1, 0x1),
            entry(4, 0x3),
            entry(7, 0),
        ]
        .concat();
        assert_eq!(
            decode_pollfds(&bytes),
            vec![
                (0, Watch::READ),
                (1, Watch::WRITE),
                (4, Watch::READ),
                (7, Watch::default())
            ]
        );
        // A cut entry is ignored.
        assert_eq!(decode_pollfds(&bytes[..12]), vec![(0, Watch::READ)]);
    }

    #[test]
    fn epoll_fdinfo_gives_each_target_its_events() {
        let fdinfo =
            b"tfd:        0 events:       19 data:                0  pos:0 ino:3 sdev:19\n\
tfd:        5 events:        4 data:                0  pos:0 ino:3 sdev:19\n\
tfd:        6\n";
        assert_eq!(parse_epoll_entries(fdinfo), vec![(0, 0x19), (5, 4), (6, 1)]);
        assert_eq!(Watch::of_poll_events(0x19), Watch::READ);
        assert_eq!(Watch::of_poll_events(4), Watch::WRITE);
    }

    #[test]
    fn a_diag_answer_gives_the_peer() {
        // What the kernel answered for one end of a socketpair.
        let mut msg = Vec::new();
        msg.extend_from_slice(&48u32.to_ne_bytes());
        msg.extend_from_slice(&20u16.to_ne_bytes());
        msg.extend_from_slice(&[0; 10]);
        msg.extend_from_slice(&[1, 1, 1, 0]);
        msg.extend_from_slice(&511_961u32.to_ne_bytes());
        msg.extend_from_slice(&[0; 8]);
        // An attribute of 5 bytes (padded to 8), then the peer.
        msg.extend_from_slice(&5u16.to_ne_bytes());
        msg.extend_from_slice(&6u16.to_ne_bytes());
        msg.extend_from_slice(&[0; 4]);
        msg.extend_from_slice(&8u16.to_ne_bytes());
        msg.extend_from_slice(&2u16.to_ne_bytes());
        msg.extend_from_slice(&511_962u32.to_ne_bytes());
        let len = msg.len() as u32;
        msg[..4].copy_from_slice(&len.to_ne_bytes());
        assert_eq!(decode_diag_peer(&msg, 2, 2), Some(511_962));
        // An error answer, a cut one.
        let mut error = msg.clone();
        error[4..6].copy_from_slice(&2u16.to_ne_bytes());
        assert_eq!(decode_diag_peer(&error, 2, 2), None);
        assert_eq!(decode_diag_peer(&msg[..40], 2, 2), None);
    }

    fn inode(link: &[u8]) -> u64 {
        let text = String::from_utf8_lossy(link);
        text.trim_start_matches("socket:[")
            .trim_end_matches(']')
            .parse()
            .expect("a socket link")
    }

    /// The kernel names the two ends of a socketpair as each other's peer.
    #[test]
    fn a_real_socketpair_has_its_peer() {
        use std::os::fd::AsRawFd;
        let (a, b) = std::os::unix::net::UnixStream::pair().expect("socketpair");
        let me = std::process::id() as i32;
        let ino_a = inode(&fd_link(me, a.as_raw_fd() as u64).expect("link"));
        let ino_b = inode(&fd_link(me, b.as_raw_fd() as u64).expect("link"));
        assert_eq!(socket_peer(ino_a), Some(ino_b));
        assert_eq!(socket_peer(ino_b), Some(ino_a));
        // A listening socket has none.
        let dir = std::env::temp_dir().join(format!("ws-peer-{me}"));
        let _ = std::fs::remove_file(&dir);
        let listener = std::os::unix::net::UnixListener::bind(&dir).expect("bind");
        let ino_l = inode(&fd_link(me, listener.as_raw_fd() as u64).expect("link"));
        assert_eq!(socket_peer(ino_l), None);
        let _ = std::fs::remove_file(&dir);
    }

    /// A real program's select and poll sets are read from its memory.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    fn a_real_wait_set_is_read() {
        use std::process::{Command, Stdio};
        // fd 3 a socket with nothing to read, fd 5 one whose buffer is full
        // (never writable), stdin a pipe nobody writes.
        let script = "import select,socket,sys\n\
a,b=socket.socketpair()\n\
c,d=socket.socketpair()\n\
c.setblocking(False)\n\
try:\n while True: c.send(b'x'*4096)\n\
except BlockingIOError: pass\n\
if sys.argv[1]=='select': select.select([0,a],[c],[],30)\n\
else:\n p=select.poll(); p.register(0,select.POLLIN); p.register(a,select.POLLIN|select.POLLPRI); p.register(c,select.POLLOUT); p.poll(30000)\n";
        for how in ["select", "poll"] {
            let mut child = Command::new("python3")
                .args(["-c", script, how])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .spawn()
                .expect("python3");
            let pid = child.id() as i32;
            let member = Member {
                pid,
                ppid: 0,
                comm: "python3".into(),
                state: b'S',
                tids: vec![pid],
            };
            let deadline = std::time::Instant::now() + Duration::from_secs(20);
            let wait = loop {
                if let Syscall::In(w) = thread(&member, pid).syscall {
                    if matches!(w.sys, Sys::Select | Sys::Poll) {
                        break Some(w);
                    }
                }
                if std::time::Instant::now() > deadline {
                    break None;
                }
                std::thread::sleep(Duration::from_millis(10));
            };
            let _ = child.kill();
            let _ = child.wait();
            let wait = wait.expect("python3 should block in its wait");
            let fds = wait.fds.expect("the set is read");
            let watched: Vec<(u64, Option<Watch>)> = fds.iter().map(|f| (f.fd, f.watch)).collect();
            assert_eq!(
                watched,
                vec![
                    (0, Some(Watch::READ)),
                    (3, Some(Watch::READ)),
                    (5, Some(Watch::WRITE))
                ],
                "{how}"
            );
            assert!(fds[1]
                .target
                .as_deref()
                .is_some_and(|t| t.starts_with(b"socket:[")));
            assert_eq!(
                wait.timeout,
                Timeout::After(Duration::from_secs(30)),
                "{how}"
            );
        }
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
