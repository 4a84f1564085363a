//! The Linux probe: one pass over `/proc` per call, nothing kept between
//! calls. See the parent module for the rule it implements. What the kernel
//! shows is read by [`procfs`] (members, then one thread at a time, as the
//! verdict asks for it); everything here is a pure function of those
//! snapshots, so it is tested on canned ones below.

use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::procfs::{self, EpollSet, Member, Sys, Syscall, Thread, Timeout, Wait, WaitFd, Wchan};
use super::{Readiness, Wakes};

pub(super) fn probe(master: BorrowedFd<'_>, pts: &Path, leader: i32) -> (Readiness, Wakes) {
    let pgid = match rustix::termios::tcgetpgrp(master) {
        Ok(pid) => pid.as_raw_nonzero().get(),
        Err(e) => {
            let why = format!("the terminal has no foreground process group ({e})");
            return (Readiness::Unknown(why), Wakes::MAYBE);
        }
    };
    let members = match procfs::group_members(leader, pgid) {
        Ok(members) if members.is_empty() => {
            let why = format!("no process of the foreground process group {pgid} is left");
            return (Readiness::Unknown(why), Wakes::MAYBE);
        }
        Ok(members) => members,
        Err(why) => return (Readiness::Unknown(why), Wakes::MAYBE),
    };
    verdict(pts.as_os_str().as_bytes(), &members, &mut Live)
}

/// Where the verdict gets what it looks at, one thread at a time (it stops
/// at the first busy one): `/proc`, or canned snapshots in tests.
trait Source {
    /// What thread `tid` of `member` is doing.
    fn thread(&mut self, member: &Member, tid: i32) -> Thread;
    /// Where every open fd of process `pid` points.
    fn fd_links(&mut self, pid: i32) -> Vec<Vec<u8>>;
    /// The inode of the peer of Unix socket `ino`, if the kernel says.
    fn socket_peer(&mut self, ino: u64) -> Option<u64>;
    /// Whether fd `fd` of `pid` (a path) is a FIFO.
    fn is_fifo(&mut self, pid: i32, fd: u64) -> bool;
    /// Whether `pid` holds the terminal at `pts` open non-blocking.
    fn terminal_nonblocking(&mut self, pid: i32, pts: &[u8]) -> bool;
}

/// The live system, through [`procfs`].
struct Live;

impl Source for Live {
    fn thread(&mut self, member: &Member, tid: i32) -> Thread {
        procfs::thread(member, tid)
    }

    fn fd_links(&mut self, pid: i32) -> Vec<Vec<u8>> {
        procfs::fd_links(pid)
    }

    fn socket_peer(&mut self, ino: u64) -> Option<u64> {
        procfs::socket_peer(ino)
    }

    fn is_fifo(&mut self, pid: i32, fd: u64) -> bool {
        procfs::is_fifo(pid, fd)
    }

    fn terminal_nonblocking(&mut self, pid: i32, pts: &[u8]) -> bool {
        procfs::nonblocking_fds(pid)
            .iter()
            .any(|link| is_terminal(pts, link))
    }
}

/// What one thread is doing, as far as waiting for input goes.
#[derive(Debug)]
enum Class {
    /// Blocked on the terminal, until the call's timeout if it has one.
    Input(Timeout),
    /// Running, in uninterruptible sleep or writing to the terminal: busy
    /// whichever thread it is.
    Active(String),
    /// A helper waiting for something the rest of the group decides.
    Parked(String),
    Busy(String),
    /// Sleeping on a clock (`nanosleep`, `poll` of no fds): busy, unless a
    /// background job or a loop polling the keyboard (see the rule).
    Asleep(String),
    /// A thread other than the main one running or in uninterruptible
    /// sleep: busy unless the main thread waits on the terminal alone, so
    /// that only input can wake it.
    HelperRunning(String),
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

/// What else than the terminal an fd a thread listens to is, for telling a
/// relay: something the answer may come through from outside the group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Far {
    /// A socket (its inode): a connection (ssh, docker, a REPL's client),
    /// unless its peer is in the same process (asyncio's self-pipe) or the
    /// group.
    Socket(u64),
    /// A pipe, unless the process holds both ends (libuv's signal pipe) or
    /// another member holds the other.
    Pipe,
    /// A path: a FIFO counts, as a pipe does; a file never blocks.
    Path,
    /// A pty master (`script`, an emulator inside the program): what runs
    /// on its slave answers.
    PtyMaster,
    /// Another terminal.
    Tty,
}

/// What the fd at `link` is, if it may bring an answer from elsewhere; `None`
/// for the terminal itself and for what a program's own runtime waits on
/// (eventfd, timerfd, signalfd, inotify, epoll, pidfd: anonymous inodes).
fn far_kind(pts: &[u8], link: &[u8]) -> Option<Far> {
    if is_terminal(pts, link) || link.starts_with(b"anon_inode:") {
        return None;
    }
    let inside = |prefix: &[u8]| {
        link.strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(b"]"))
            .and_then(|n| std::str::from_utf8(n).ok()?.parse::<u64>().ok())
    };
    if let Some(ino) = inside(b"socket:[") {
        return Some(Far::Socket(ino));
    }
    if link.starts_with(b"pipe:[") {
        return Some(Far::Pipe);
    }
    if link == b"/dev/ptmx" || link == b"/dev/pts/ptmx" {
        return Some(Far::PtyMaster);
    }
    if link.starts_with(b"/dev/pts/") || link.starts_with(b"/dev/tty") || link == b"/dev/console" {
        return Some(Far::Tty);
    }
    if link.starts_with(b"/") {
        return Some(Far::Path);
    }
    None
}

/// An fd in words, for the probe's reasons: `a socket (fd 3)`.
fn fd_words(pts: &[u8], fd: u64, link: &[u8]) -> String {
    let path = String::from_utf8_lossy(link);
    match far_kind(pts, link) {
        Some(Far::Socket(_)) => format!("a socket (fd {fd})"),
        Some(Far::Pipe) => format!("a pipe (fd {fd})"),
        Some(Far::PtyMaster) => format!("a pty master (fd {fd})"),
        Some(Far::Tty) => format!("another terminal (fd {fd}, {path})"),
        Some(Far::Path) => format!("fd {fd} ({path})"),
        None if is_terminal(pts, link) => format!("the terminal (fd {fd})"),
        None => format!("fd {fd} ({path})"),
    }
}

/// An fd a thread listens to besides the terminal, that may make the group
/// a relay (see [`verdict`]).
struct Listened {
    /// The member that holds it.
    member: usize,
    fd: u64,
    link: Vec<u8>,
    kind: Far,
    /// Who listens, and how, for the reason.
    who: String,
    /// The same thread waits on the terminal too.
    with_terminal: bool,
}

/// The readiness of the group `members` of the terminal at `pts`, and
/// whether it may wake by itself: a thread waits with a timeout, or a helper
/// is parked on something else.
///
/// The whole foreground job decides, not one process, and three kinds of
/// work do not hold it back:
/// - a member whose parent (a member too) waits on the terminal alone
///   rather than waiting for it: a background job of a shell without job
///   control (`sleep 1000 & read x`), a child a program left running. The
///   terminal alone, no timeout ([`terminal_only`]): git polls its child's
///   pipe, a runtime's eventfd may bring a helper's result;
/// - a helper thread computing while the main thread of its process waits
///   on the terminal alone, which only input can wake;
/// - sleeping on a clock, which is reported as busy but `asleep` (see
///   [`Wakes::asleep`]) for the rule to decide, with whether a sleeper
///   holds the terminal open non-blocking ([`Wakes::keys`]).
///
/// A group that waits for input is a [`Readiness::Relay`] when one of its
/// threads also listens (reads, polls, selects, epolls) to something whose
/// other end is outside the group: a socket whose peer no member holds (or
/// that the kernel does not name: TCP), a pipe or FIFO no other member holds
/// (and not both ends in the same process), a pty master, another terminal.
/// The answer to the input may come through it at any time (ssh, `docker
/// exec -it`, `script`, a nested tmux), so the kernel cannot say that the
/// program has answered.
fn verdict(pts: &[u8], members: &[Member], source: &mut dyn Source) -> (Readiness, Wakes) {
    let mut input = false;
    let mut wakes = Wakes::default();
    let mut unknown = None;
    let mut parked = None;
    let mut deferred = Vec::new();
    // Per member: its main thread waits on the terminal alone, with no
    // timeout (only input wakes it).
    let mut main_reads = vec![false; members.len()];
    let parent_of = |i: usize| {
        let ppid = members[i].ppid;
        members
            .iter()
            .position(|m| m.pid == ppid && ppid != members[i].pid)
    };
    let mut listened = Vec::new();
    for (i, member) in members.iter().enumerate() {
        for &tid in &member.tids {
            let thread = source.thread(member, tid);
            match classify(pts, member, &thread) {
                // Work with no member above it: busy at once, nothing
                // else to read.
                Class::Busy(why) | Class::Active(why) if parent_of(i).is_none() => {
                    return (Readiness::Busy(why), Wakes::MAYBE)
                }
                Class::Input(timeout) => {
                    input = true;
                    wakes = wakes.and(wakes_of(timeout));
                    if tid == member.pid {
                        main_reads[i] = timeout == Timeout::Never && terminal_only(pts, &thread);
                    }
                    listens(pts, i, member, &thread, true, &mut listened);
                }
                Class::Parked(why) => {
                    wakes = wakes.and(Wakes::MAYBE);
                    parked.get_or_insert(why);
                    listens(pts, i, member, &thread, false, &mut listened);
                }
                Class::Unknown(why) => {
                    unknown.get_or_insert(why);
                }
                Class::Gone => {}
                class => deferred.push((i, class)),
            }
        }
    }
    // Every member's open files, read only when a pipe needs matching.
    let mut held = Held::default();
    let mut asleep = None;
    // A sleeper reads the terminal non-blocking between its naps.
    let mut keys = false;
    for (i, class) in deferred {
        // Whether the member's parent waits on the terminal alone instead
        // of waiting for it: then this is background work.
        let background = parent_of(i).is_some_and(|p| main_reads[p]);
        let (served, why) = match class {
            Class::Busy(why) | Class::Active(why) => (background, why),
            Class::HelperRunning(why) => (main_reads[i] || background, why),
            Class::Asleep(why) if background => (true, why),
            Class::Asleep(why) => {
                asleep.get_or_insert(why);
                keys = keys || source.terminal_nonblocking(members[i].pid, pts);
                continue;
            }
            Class::WaitsForChild(why) => {
                let pid = members[i].pid;
                (members.iter().any(|m| m.ppid == pid), why)
            }
            Class::OnFile { link, why } => {
                let held = held
                    .get(members, source)
                    .iter()
                    .enumerate()
                    .any(|(j, links)| j != i && links.contains(&link));
                (held || background, why)
            }
            _ => continue,
        };
        if !served {
            return (Readiness::Busy(why), Wakes::MAYBE);
        }
        wakes = wakes.and(Wakes::MAYBE);
        parked.get_or_insert(why);
    }
    if let Some(why) = asleep {
        let wakes = Wakes {
            asleep: unknown.is_none(),
            keys,
            ..Wakes::MAYBE
        };
        return (Readiness::Busy(why), wakes);
    }
    let readiness = match (unknown, input) {
        (Some(why), _) => Readiness::Unknown(why),
        (None, true) => match listened
            .iter()
            .find(|l| from_outside(l, members, &mut held, source))
        {
            Some(l) => {
                let what = fd_words(pts, l.fd, &l.link);
                Readiness::Relay(if l.with_terminal {
                    format!("{} waits on the terminal and on {what}", l.who)
                } else {
                    format!("{} waits on {what} while the terminal is read", l.who)
                })
            }
            None => Readiness::Waiting,
        },
        (None, false) => Readiness::Busy(format!(
            "nothing waits for the terminal ({})",
            parked.as_deref().unwrap_or("no live thread")
        )),
    };
    (readiness, wakes)
}

/// Every member's open files (`/proc/PID/fd` links), read once, when first
/// needed.
#[derive(Default)]
struct Held(Option<Vec<Vec<Vec<u8>>>>);

impl Held {
    fn get(&mut self, members: &[Member], source: &mut dyn Source) -> &[Vec<Vec<u8>>] {
        self.0
            .get_or_insert_with(|| members.iter().map(|m| source.fd_links(m.pid)).collect())
    }

    /// Whether `link` is held inside the group besides by `l`'s own fd: by
    /// `l`'s process a second time (`twice`: both ends of a pipe), or by
    /// another member. Then the group answers itself, and that member's
    /// own state counts.
    fn inside(
        &mut self,
        l: &Listened,
        link: &[u8],
        twice: bool,
        members: &[Member],
        source: &mut dyn Source,
    ) -> bool {
        self.get(members, source)
            .iter()
            .enumerate()
            .any(|(j, held)| {
                let n = held.iter().filter(|h| h.as_slice() == link).count();
                n >= if j == l.member && twice { 2 } else { 1 }
            })
    }
}

/// Whether what `l` listens to has its other end outside the group.
fn from_outside(
    l: &Listened,
    members: &[Member],
    held: &mut Held,
    source: &mut dyn Source,
) -> bool {
    match l.kind {
        Far::PtyMaster | Far::Tty => true,
        Far::Socket(ino) => match source.socket_peer(ino) {
            Some(peer) => {
                let peer = format!("socket:[{peer}]").into_bytes();
                !held.inside(l, &peer, false, members, source)
            }
            None => true,
        },
        Far::Pipe => !held.inside(l, &l.link, true, members, source),
        Far::Path => {
            let pid = members[l.member].pid;
            source.is_fifo(pid, l.fd) && !held.inside(l, &l.link, true, members, source)
        }
    }
}

/// The fds other than the terminal that `thread` listens to (reads, or
/// waits on for input), into `out`.
fn listens(
    pts: &[u8],
    i: usize,
    member: &Member,
    thread: &Thread,
    with_terminal: bool,
    out: &mut Vec<Listened>,
) {
    let Syscall::In(wait) = &thread.syscall else {
        return;
    };
    let who = who(member, thread.tid);
    let mut add = |fd: &WaitFd| {
        let listened = match fd.watch {
            Some(w) => w.read,
            // Maybe not in the set at all: not evidence of a relay.
            None => false,
        };
        let Some(link) = fd.target.as_deref().filter(|_| listened) else {
            return;
        };
        if let Some(kind) = far_kind(pts, link) {
            out.push(Listened {
                member: i,
                fd: fd.fd,
                link: link.to_vec(),
                kind,
                who: who.clone(),
                with_terminal,
            });
        }
    };
    if let Some(fds) = &wait.fds {
        fds.iter().for_each(&mut add);
    }
    fn walk(set: &EpollSet, add: &mut dyn FnMut(&WaitFd)) {
        for entry in set.entries.iter().flatten() {
            add(&entry.fd);
            if let Some(nested) = &entry.nested {
                walk(nested, add);
            }
        }
    }
    if let Some(set) = &wait.epoll {
        walk(set, &mut add);
    }
}

fn is_terminal(pts: &[u8], link: &[u8]) -> bool {
    link == pts || link == b"/dev/tty"
}

/// Whether `thread` waits on the terminal and on nothing else: a read of
/// it, or a poll, select or epoll whose whole set was read and watches only
/// the terminal. Not a set that could not be read (git polls its child's
/// pipe), nor one with a runtime's own eventfd or pipe in it: a helper may
/// wake the waiter through those.
fn terminal_only(pts: &[u8], thread: &Thread) -> bool {
    let Syscall::In(wait) = &thread.syscall else {
        return false;
    };
    let only = |fds: &[WaitFd]| {
        fds.iter().all(|fd| {
            let terminal = fd.target.as_deref().is_some_and(|l| is_terminal(pts, l));
            terminal || fd.watch.is_some_and(|w| !w.read && !w.write)
        })
    };
    match wait.sys {
        Sys::Read => wait.fd_target(0).is_some_and(|l| is_terminal(pts, l)),
        Sys::Poll | Sys::Select => wait.fds.as_deref().is_some_and(only),
        Sys::Epoll => wait.epoll.as_ref().is_some_and(|set| {
            !set.truncated
                && set.entries.as_ref().is_some_and(|entries| {
                    entries
                        .iter()
                        .all(|e| e.nested.is_none() && only(std::slice::from_ref(&e.fd)))
                })
        }),
        _ => false,
    }
}

/// Whether `fd` is the terminal, watched for input (or maybe: a set whose
/// bitmaps could not be read).
fn terminal_input(pts: &[u8], fd: &WaitFd) -> bool {
    fd.target.as_deref().is_some_and(|l| is_terminal(pts, l)) && fd.watch.map_or(true, |w| w.read)
}

/// `pid 12 (ssh)`, or `pid 12 (ssh) thread 13`.
fn who(member: &Member, tid: i32) -> String {
    let pid = member.pid;
    if tid == pid {
        format!("pid {pid} ({})", member.comm)
    } else {
        format!("pid {pid} ({}) thread {tid}", member.comm)
    }
}

/// The main thread's class decides; another thread (a helper) only counts
/// when it waits for input or is active: anything else it blocks on (a
/// lock, a timer, a socket, inotify) is parked, since helpers wait for
/// events while the main thread holds the conversation.
fn classify(pts: &[u8], member: &Member, thread: &Thread) -> Class {
    let class = classify_thread(pts, member, thread);
    if thread.tid == member.pid {
        return class;
    }
    let writing = matches!(&thread.syscall, Syscall::In(wait) if wait.sys == Sys::Write);
    match class {
        Class::Input(_) | Class::Gone => class,
        Class::Active(_) if writing => class,
        Class::Active(why) => Class::HelperRunning(why),
        Class::Parked(why)
        | Class::Busy(why)
        | Class::Asleep(why)
        | Class::HelperRunning(why)
        | Class::Unknown(why)
        | Class::WaitsForChild(why)
        | Class::OnFile { why, .. } => Class::Parked(why),
    }
}

fn classify_thread(pts: &[u8], member: &Member, thread: &Thread) -> Class {
    let who = || who(member, thread.tid);
    match (thread.state, member.state) {
        (_, b'T' | b't') => return Class::Unknown(format!("{} is stopped", who())),
        (b'R', _) => return Class::Active(format!("{} is running", who())),
        (b'D', _) => return Class::Active(format!("{} is in uninterruptible sleep", who())),
        (b'Z' | b'X' | b'x', _) => return Class::Gone,
        (b'S', _) => {}
        (other, _) => return Class::Unknown(format!("{} is in state {}", who(), other as char)),
    }
    let why_not = match &thread.syscall {
        Syscall::Gone => return Class::Gone,
        Syscall::Running => return Class::Active(format!("{} is running", who())),
        Syscall::In(wait) => match classify_wait(pts, wait, &who) {
            Ok(class) => return class,
            Err(why_not) => why_not,
        },
        Syscall::NotRead => "was not looked at".to_string(),
        Syscall::Outside => "is blocked outside a system call".to_string(),
        Syscall::Unlisted(nr) => format!("is in system call {nr}"),
        Syscall::Unreadable(e) => format!("cannot read its system call: {e}"),
    };
    match &thread.wchan {
        Wchan::Function(text) => classify_wchan(text.as_bytes(), &who).unwrap_or_else(|function| {
            Class::Unknown(format!("{} {why_not}, and sleeps in {function}", who()))
        }),
        Wchan::Gone => Class::Gone,
        Wchan::Unreadable(e) => Class::Unknown(format!("{} {why_not}, nor its wchan: {e}", who())),
        Wchan::NotRead => Class::Unknown(format!("{} {why_not}", who())),
    }
}

/// The class of a thread blocked in a listed system call, or (for `wchan`
/// to try) why it does not tell.
fn classify_wait(pts: &[u8], wait: &Wait, who: &dyn Fn() -> String) -> Result<Class, String> {
    let name = wait.name;
    let arg1 = wait.arg(0).unwrap_or(u64::MAX);
    // A poll or select set without the terminal: what it waits on instead.
    let elsewhere = |fds: &[WaitFd]| {
        let first = fds
            .iter()
            .find(|fd| fd.watch.is_some_and(|w| w.read))
            .or(fds.first());
        match first.and_then(|fd| Some((fd.fd, fd.target.as_deref()?))) {
            Some((fd, link)) => Class::Parked(format!(
                "{} waits in {name} on {}, not the terminal",
                who(),
                fd_words(pts, fd, link)
            )),
            None => Class::Parked(format!("{} is in {name} without the terminal", who())),
        }
    };
    let class = match wait.sys {
        Sys::Read | Sys::Write => {
            let Some(link) = wait.fd_target(0) else {
                return Err(format!("is in {name} of fd {arg1}, which is closed"));
            };
            let reading = wait.sys == Sys::Read;
            if is_terminal(pts, link) {
                return Ok(if reading {
                    Class::Input(Timeout::Never)
                } else {
                    Class::Active(format!("{} is writing to the terminal", who()))
                });
            }
            let why = format!(
                "{} is {} {}",
                who(),
                if reading { "reading" } else { "writing" },
                fd_words(pts, arg1, link)
            );
            Class::OnFile {
                link: link.to_vec(),
                why,
            }
        }
        // poll(NULL, 0, ms) is a sleep.
        Sys::Poll if wait.arg(1) == Some(0) => {
            Class::Asleep(format!("{} is sleeping in {name}", who()))
        }
        // A set that could not be read (too wide, or the program's memory
        // refused) is taken to hold the terminal.
        Sys::Poll | Sys::Select => match &wait.fds {
            None => Class::Input(wait.timeout),
            Some(fds) if fds.iter().any(|fd| terminal_input(pts, fd)) => Class::Input(wait.timeout),
            Some(fds) => elsewhere(fds),
        },
        Sys::Epoll => match wait
            .epoll
            .as_ref()
            .and_then(|set| epoll_has_terminal(pts, set))
        {
            Some(false) => {
                let watched: Vec<WaitFd> = wait
                    .epoll
                    .iter()
                    .flat_map(|set| set.entries.iter().flatten())
                    .map(|e| e.fd.clone())
                    .collect();
                elsewhere(&watched)
            }
            // An interest list we cannot read counts as input, as poll's
            // does.
            Some(true) | None => Class::Input(wait.timeout),
        },
        Sys::Sleep => Class::Asleep(format!("{} is sleeping in {name}", who())),
        Sys::Wait => Class::WaitsForChild(format!(
            "{} is waiting in {name} for a child outside the foreground group",
            who()
        )),
        Sys::Lock => Class::Parked(format!("{} waits on a lock ({name})", who())),
        Sys::FileLock => Class::Busy(format!("{} is blocked on a lock ({name})", who())),
        Sys::Signal => Class::Parked(format!("{} waits for a signal ({name})", who())),
        Sys::Elsewhere => Class::Busy(format!("{} is blocked in {name}", who())),
    };
    Ok(class)
}

/// Whether the epoll `set` (or one nested in it) watches the terminal for
/// input; `None` if that cannot be told (the list could not be read, or was
/// cut before a watched terminal was found).
fn epoll_has_terminal(pts: &[u8], set: &EpollSet) -> Option<bool> {
    for entry in set.entries.as_ref()? {
        if terminal_input(pts, &entry.fd)
            || entry
                .nested
                .as_ref()
                .is_some_and(|n| epoll_has_terminal(pts, n) == Some(true))
        {
            return Some(true);
        }
    }
    (!set.truncated).then_some(false)
}

/// What a wait's timeout means for whether the group may wake by itself.
fn wakes_of(timeout: Timeout) -> Wakes {
    match timeout {
        Timeout::Never => Wakes::default(),
        Timeout::After(d) => Wakes {
            may: true,
            timer: Some(d),
            asleep: false,
            keys: false,
        },
        Timeout::Unknown => Wakes::MAYBE,
    }
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
            Class::Asleep(format!("{} is sleeping in {name}", who()))
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
        "do_lock_file_wait"
        | "locks_lock_inode_wait"
        | "flock_lock_inode_wait"
        | "posix_lock_inode_wait" => {
            Class::Busy(format!("{} is blocked on a lock ({name})", who()))
        }
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
        assert!(matches!(class("hrtimer_nanosleep"), Ok(Class::Asleep(_))));
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

    // Canned snapshots of real programs, as procfs reads them.

    use super::procfs::{EpollEntry, Watch};
    use std::collections::HashMap;
    use std::time::Duration;

    const PTS: &[u8] = b"/dev/pts/5";

    #[derive(Default)]
    struct Canned {
        threads: HashMap<i32, Thread>,
        fds: HashMap<i32, Vec<Vec<u8>>>,
        /// Unix socket inode -> its peer's.
        peers: HashMap<u64, u64>,
        /// FIFOs, as (pid, fd).
        fifos: Vec<(i32, u64)>,
        /// Processes that hold the terminal open non-blocking.
        nonblocking: Vec<i32>,
    }

    impl Source for Canned {
        fn thread(&mut self, member: &Member, tid: i32) -> Thread {
            self.threads
                .get(&tid)
                .cloned()
                .unwrap_or_else(|| panic!("no canned thread {tid} of pid {}", member.pid))
        }

        fn fd_links(&mut self, pid: i32) -> Vec<Vec<u8>> {
            self.fds.get(&pid).cloned().unwrap_or_default()
        }

        fn socket_peer(&mut self, ino: u64) -> Option<u64> {
            self.peers.get(&ino).copied()
        }

        fn is_fifo(&mut self, pid: i32, fd: u64) -> bool {
            self.fifos.contains(&(pid, fd))
        }

        fn terminal_nonblocking(&mut self, pid: i32, _pts: &[u8]) -> bool {
            self.nonblocking.contains(&pid)
        }
    }

    fn member(pid: i32, ppid: i32, comm: &str, tids: &[i32]) -> Member {
        Member {
            pid,
            ppid,
            comm: comm.into(),
            state: b'S',
            tids: tids.to_vec(),
        }
    }

    /// An fd watched for input.
    fn fd(fd: u64, target: &str) -> WaitFd {
        WaitFd {
            fd,
            target: Some(target.as_bytes().to_vec()),
            watch: Some(Watch::READ),
        }
    }

    fn call(sys: Sys, name: &'static str, args: &[u64]) -> Wait {
        let mut all = [None; 6];
        for (slot, &a) in all.iter_mut().zip(args) {
            *slot = Some(a);
        }
        Wait {
            sys,
            name,
            nr: 0,
            args: all,
            fds: None,
            epoll: None,
            timeout: Timeout::Unknown,
        }
    }

    fn in_call(tid: i32, wait: Wait) -> Thread {
        Thread {
            tid,
            state: b'S',
            syscall: Syscall::In(wait),
            wchan: Wchan::NotRead,
        }
    }

    fn read(tid: i32, fdn: u64, target: &str) -> Thread {
        let mut wait = call(Sys::Read, "read", &[fdn, 0x7ffd_0000, 1024]);
        wait.fds = Some(vec![fd(fdn, target)]);
        in_call(tid, wait)
    }

    fn write(tid: i32, fdn: u64, target: &str) -> Thread {
        let mut wait = call(Sys::Write, "write", &[fdn, 0x7ffd_0000, 8192]);
        wait.fds = Some(vec![fd(fdn, target)]);
        in_call(tid, wait)
    }

    fn futex(tid: i32) -> Thread {
        in_call(tid, call(Sys::Lock, "futex", &[0x7f00_0000, 0x80, 0]))
    }

    fn epoll(fd: u64, entries: Vec<EpollEntry>) -> EpollSet {
        EpollSet {
            fd,
            entries: Some(entries),
            truncated: false,
        }
    }

    fn watched(n: u64, target: &str) -> EpollEntry {
        EpollEntry {
            fd: fd(n, target),
            nested: None,
        }
    }

    fn epoll_wait(tid: i32, set: EpollSet, timeout: Timeout) -> Thread {
        let mut wait = call(Sys::Epoll, "epoll_pwait", &[set.fd, 0x7ffd_0000, 1024]);
        wait.epoll = Some(set);
        wait.timeout = timeout;
        in_call(tid, wait)
    }

    fn run(members: &[Member], threads: Vec<Thread>) -> (Readiness, Wakes) {
        run_with_fds(members, threads, &[])
    }

    fn run_with_fds(
        members: &[Member],
        threads: Vec<Thread>,
        fds: &[(i32, &[&str])],
    ) -> (Readiness, Wakes) {
        let canned = Canned {
            fds: fds
                .iter()
                .map(|(pid, links)| (*pid, links.iter().map(|l| l.as_bytes().to_vec()).collect()))
                .collect(),
            ..Canned::default()
        };
        run_canned(members, threads, canned)
    }

    fn run_canned(members: &[Member], threads: Vec<Thread>, canned: Canned) -> (Readiness, Wakes) {
        let canned = &mut Canned {
            threads: threads.into_iter().map(|t| (t.tid, t)).collect(),
            ..canned
        };
        verdict(PTS, members, canned)
    }

    fn busy_because(r: &Readiness, what: &str) {
        match r {
            Readiness::Busy(why) => assert!(why.contains(what), "{why}"),
            other => panic!("not busy: {other:?}"),
        }
    }

    /// node's REPL: the main thread in `epoll_pwait` on a set holding the
    /// terminal (libuv nests no set here, but its signal pipe and an
    /// eventfd are in it); four libuv workers on a futex; the inspector's
    /// thread in an epoll of its own.
    fn node(main_timeout: Timeout) -> (Readiness, Wakes) {
        let tids = [100, 101, 102, 103, 104, 105];
        let main_set = epoll(
            13,
            vec![
                watched(10, "anon_inode:[eventfd]"),
                watched(11, "pipe:[9001]"),
                watched(0, "/dev/pts/5"),
            ],
        );
        let helper_set = epoll(20, vec![watched(21, "anon_inode:[eventfd]")]);
        let mut threads = vec![epoll_wait(100, main_set, main_timeout)];
        threads.extend((101..105).map(futex));
        threads.push(epoll_wait(105, helper_set, Timeout::Never));
        // libuv's signal pipe: both ends are node's.
        let fds: &[&str] = &["/dev/pts/5", "pipe:[9001]", "pipe:[9001]"];
        run_with_fds(&[member(100, 1, "node", &tids)], threads, &[(100, fds)])
    }

    #[test]
    fn node_at_its_prompt_waits() {
        let (r, wakes) = node(Timeout::Never);
        assert_eq!(r, Readiness::Waiting);
        // Parked helpers may wake it; no timer on the terminal.
        assert_eq!(wakes, Wakes::MAYBE);
    }

    #[test]
    fn node_awaiting_a_timer_waits_with_the_timer_reported() {
        let (r, wakes) = node(Timeout::After(Duration::from_millis(1500)));
        assert_eq!(r, Readiness::Waiting);
        assert_eq!(wakes.timer, Some(Duration::from_millis(1500)));
        assert!(wakes.may);
    }

    #[test]
    fn an_epoll_set_is_followed_into_nested_sets() {
        let inner = epoll(30, vec![watched(0, "/dev/pts/5")]);
        let outer = epoll(
            13,
            vec![EpollEntry {
                fd: fd(30, "anon_inode:[eventpoll]"),
                nested: Some(inner),
            }],
        );
        let threads = vec![epoll_wait(100, outer, Timeout::Never)];
        let (r, wakes) = run(&[member(100, 1, "prog", &[100])], threads);
        assert_eq!(r, Readiness::Waiting);
        assert_eq!(wakes, Wakes::default());
        // Without the terminal anywhere, the main thread is parked and
        // nothing listens to the terminal.
        let outer = epoll(13, vec![watched(7, "socket:[1]")]);
        let threads = vec![epoll_wait(100, outer, Timeout::Never)];
        let (r, _) = run(&[member(100, 1, "prog", &[100])], threads);
        busy_because(&r, "nothing waits for the terminal");
        // A set that could not be read counts as input, as poll does.
        let unread = EpollSet {
            fd: 13,
            entries: None,
            truncated: false,
        };
        let threads = vec![epoll_wait(100, unread, Timeout::Never)];
        let (r, _) = run(&[member(100, 1, "prog", &[100])], threads);
        assert_eq!(r, Readiness::Waiting);
    }

    /// vim: the main thread in `select` on the terminal with its 4 s
    /// `updatetime`, a signal thread in `rt_sigtimedwait`.
    #[test]
    fn vim_with_a_signal_thread_waits() {
        let mut select = call(
            Sys::Select,
            "pselect6",
            &[6, 0x7ffd_0000, 0, 0, 0x7ffd_0100, 0],
        );
        select.fds = Some(vec![fd(0, "/dev/pts/5")]);
        select.timeout = Timeout::After(Duration::from_secs(4));
        let signal = call(Sys::Signal, "rt_sigtimedwait", &[0x7ffd_0200, 0, 0, 8]);
        let threads = vec![in_call(400, select.clone()), in_call(401, signal)];
        let (r, wakes) = run(&[member(400, 1, "vim", &[400, 401])], threads);
        assert_eq!(r, Readiness::Waiting);
        assert_eq!(wakes.timer, Some(Duration::from_secs(4)));
        assert!(wakes.may);
        // Its bitmaps unreadable: every fd below nfds, each maybe in the
        // set. The terminal counts; the socket there is no evidence of a
        // relay.
        let maybe = |n: u64, target: Option<&str>| WaitFd {
            fd: n,
            target: target.map(|t| t.as_bytes().to_vec()),
            watch: None,
        };
        select.fds = Some(vec![
            maybe(0, Some("/dev/pts/5")),
            maybe(1, Some("/dev/pts/5")),
            maybe(2, Some("/dev/pts/5")),
            maybe(3, Some("/home/u/.notes.txt.swp")),
            maybe(4, None),
            maybe(5, Some("socket:[4242]")),
        ]);
        let (r, _) = run(&[member(400, 1, "vim", &[400])], vec![in_call(400, select)]);
        assert_eq!(r, Readiness::Waiting);
        // A select of the socket alone: parked, and nothing waits for the
        // terminal.
        let mut select = call(Sys::Select, "select", &[6, 0x7ffd_0000, 0, 0, 0, 0]);
        select.fds = Some(vec![fd(5, "socket:[4242]")]);
        select.timeout = Timeout::Never;
        let (r, _) = run(&[member(400, 1, "vim", &[400])], vec![in_call(400, select)]);
        busy_because(&r, "waits in select on a socket (fd 5), not the terminal");
        // A select too wide to resolve is taken to hold the terminal.
        let mut wide = call(Sys::Select, "select", &[1024, 0x7ffd_0000, 0, 0, 0, 0]);
        wide.timeout = Timeout::Never;
        let (r, _) = run(&[member(400, 1, "vim", &[400])], vec![in_call(400, wide)]);
        assert_eq!(r, Readiness::Waiting);
        // The terminal only in the write set: not waiting for input.
        let mut select = call(Sys::Select, "select", &[6, 0, 0x7ffd_0000, 0, 0, 0]);
        select.fds = Some(vec![WaitFd {
            watch: Some(Watch::WRITE),
            ..fd(1, "/dev/pts/5")
        }]);
        let (r, _) = run(&[member(400, 1, "vim", &[400])], vec![in_call(400, select)]);
        busy_because(&r, "nothing waits for the terminal");
    }

    /// `yes | less`: yes blocked writing the pipe that less holds, less
    /// reading `/dev/tty`.
    #[test]
    fn yes_into_less_waits() {
        let members = [
            member(200, 1, "yes", &[200]),
            member(201, 1, "less", &[201]),
        ];
        let threads = || vec![write(200, 1, "pipe:[777]"), read(201, 3, "/dev/tty")];
        let less_fds: &[&str] = &["pipe:[777]", "/dev/pts/5", "/dev/pts/5", "/dev/tty"];
        let (r, wakes) = run_with_fds(&members, threads(), &[(201, less_fds)]);
        assert_eq!(r, Readiness::Waiting);
        assert!(wakes.may, "a parked member may wake");
        // The same pipe held by no other member: a pipe from outside, busy.
        let (r, _) = run_with_fds(&members, threads(), &[(201, &["/dev/pts/5", "/dev/tty"])]);
        busy_because(&r, "writing a pipe (fd 1)");
    }

    /// `git commit` waiting in `wait4` for its editor, which reads the
    /// terminal.
    #[test]
    fn git_waiting_for_its_editor_waits() {
        let wait4 = call(Sys::Wait, "wait4", &[301, 0x7ffd_0000, 0, 0]);
        let members = [
            member(300, 1, "git", &[300]),
            member(301, 300, "vim", &[301]),
        ];
        let threads = vec![in_call(300, wait4.clone()), read(301, 0, "/dev/pts/5")];
        let (r, _) = run(&members, threads);
        assert_eq!(r, Readiness::Waiting);
        // Its child outside the foreground group (a background job): busy.
        let members = [member(300, 1, "git", &[300]), member(302, 1, "vim", &[302])];
        let threads = vec![in_call(300, wait4), read(302, 0, "/dev/pts/5")];
        let (r, _) = run(&members, threads);
        busy_because(&r, "for a child outside the foreground group");
    }

    /// `python3 -c 'time.sleep(5)'`.
    #[test]
    fn python_sleeping_is_busy() {
        let sleep = call(Sys::Sleep, "clock_nanosleep", &[1, 0, 0x7ffd_0000, 0]);
        let (r, wakes) = run(
            &[member(500, 1, "python3", &[500])],
            vec![in_call(500, sleep)],
        );
        busy_because(&r, "pid 500 (python3) is sleeping in clock_nanosleep");
        // Busy, but only asleep: the rule settles it only when it polls the
        // keyboard (the terminal in non-canonical mode).
        assert!(wakes.asleep && wakes.may, "{wakes:?}");
        // poll(NULL, 0, ms) is a sleep too.
        let nap = call(Sys::Poll, "poll", &[0, 0, 100]);
        let (r, _) = run(
            &[member(500, 1, "python3", &[500])],
            vec![in_call(500, nap)],
        );
        busy_because(&r, "sleeping in poll");
    }

    fn relay_because(r: &Readiness, what: &str) {
        match r {
            Readiness::Relay(why) => assert!(why.contains(what), "{why}"),
            other => panic!("not a relay: {other:?}"),
        }
    }

    /// A poll of `fds` by the main thread of pid 600, for ever.
    fn polling(name: &'static str, fds: Vec<WaitFd>) -> Thread {
        let mut poll = call(Sys::Poll, name, &[0x7ffd_0000, fds.len() as u64, u64::MAX]);
        poll.fds = Some(fds);
        poll.timeout = Timeout::Never;
        in_call(600, poll)
    }

    /// ssh in raw mode: the main thread polls the terminal and its socket
    /// to sshd (whose peer is in no member); stdout watched for room to
    /// write. What the remote side answers comes through the socket.
    #[test]
    fn ssh_relaying_is_a_relay() {
        let out = WaitFd {
            watch: Some(Watch::WRITE),
            ..fd(1, "/dev/pts/5")
        };
        let threads = vec![polling(
            "poll",
            vec![fd(3, "socket:[9100]"), fd(0, "/dev/pts/5"), out],
        )];
        let ssh = [member(600, 1, "ssh", &[600])];
        let (r, _) = run(&ssh, threads.clone());
        relay_because(
            &r,
            "pid 600 (ssh) waits on the terminal and on a socket (fd 3)",
        );
        // Its peer known but held by nobody in the group: a relay too.
        let canned = Canned {
            peers: HashMap::from([(9100, 9101)]),
            ..Canned::default()
        };
        let (r, _) = run_canned(&ssh, threads.clone(), canned);
        relay_because(&r, "socket (fd 3)");
        // A socketpair whose other end the program holds itself (asyncio's
        // self-pipe, prompt_toolkit): its own runtime, waiting.
        let canned = Canned {
            peers: HashMap::from([(9100, 9101)]),
            fds: HashMap::from([(600, vec![b"socket:[9101]".to_vec()])]),
            ..Canned::default()
        };
        let (r, _) = run_canned(&ssh, threads.clone(), canned);
        assert_eq!(r, Readiness::Waiting);
        // The other end held by another member, which is waiting: that
        // member decides, and it waits.
        let members = [
            member(600, 1, "python3", &[600]),
            member(601, 600, "helper", &[601]),
        ];
        let mut both = threads.clone();
        both.push(read(601, 0, "/dev/pts/5"));
        let canned = Canned {
            peers: HashMap::from([(9100, 9101)]),
            fds: HashMap::from([(601, vec![b"socket:[9101]".to_vec()])]),
            ..Canned::default()
        };
        let (r, _) = run_canned(&members, both, canned);
        assert_eq!(r, Readiness::Waiting);
    }

    /// `python3` in `select` on stdin and a socket to a child that left the
    /// group (the remote side of a relay): read from its bitmaps.
    #[test]
    fn select_on_the_terminal_and_a_socket_is_a_relay() {
        let mut select = call(Sys::Select, "select", &[5, 0x7ffd_0000, 0, 0, 0, 0]);
        select.fds = Some(vec![fd(0, "/dev/pts/5"), fd(4, "socket:[321]")]);
        select.timeout = Timeout::Never;
        let py = [member(600, 1, "python3", &[600])];
        let (r, wakes) = run(&py, vec![in_call(600, select.clone())]);
        relay_because(
            &r,
            "pid 600 (python3) waits on the terminal and on a socket (fd 4)",
        );
        assert_eq!(wakes, Wakes::default());
        // Only the terminal in the set (the socket open but not selected):
        // waiting for input.
        select.fds = Some(vec![fd(0, "/dev/pts/5")]);
        let (r, _) = run(&py, vec![in_call(600, select)]);
        assert_eq!(r, Readiness::Waiting);
    }

    /// `subprocess` piping a child that left the group: the pollfd array
    /// holds the terminal and the pipe's read end.
    #[test]
    fn poll_on_the_terminal_and_a_pipe_is_a_relay() {
        let threads = vec![polling(
            "ppoll",
            vec![fd(0, "/dev/pts/5"), fd(5, "pipe:[4040]")],
        )];
        let prog = [member(600, 1, "prog", &[600])];
        let (r, _) = run(&prog, threads.clone());
        relay_because(&r, "on a pipe (fd 5)");
        // A self-pipe: both ends in the process (a signal handler's wake-up).
        let own: &[&str] = &["/dev/pts/5", "pipe:[4040]", "pipe:[4040]"];
        let (r, _) = run_with_fds(&prog, threads.clone(), &[(600, own)]);
        assert_eq!(r, Readiness::Waiting);
        // A FIFO is a pipe; a regular file is nothing.
        let fifo = vec![polling(
            "poll",
            vec![fd(0, "/dev/pts/5"), fd(6, "/tmp/answers")],
        )];
        let canned = Canned {
            fifos: vec![(600, 6)],
            ..Canned::default()
        };
        let (r, _) = run_canned(&prog, fifo.clone(), canned);
        relay_because(&r, "fd 6 (/tmp/answers)");
        let (r, _) = run(&prog, fifo);
        assert_eq!(r, Readiness::Waiting);
        // Runtime fds (eventfd, timerfd, signalfd, inotify) are nothing.
        let runtime = vec![polling(
            "poll",
            vec![
                fd(0, "/dev/pts/5"),
                fd(7, "anon_inode:[eventfd]"),
                fd(8, "anon_inode:[timerfd]"),
                fd(9, "anon_inode:[signalfd]"),
                fd(10, "anon_inode:inotify"),
            ],
        )];
        let (r, _) = run(&prog, runtime);
        assert_eq!(r, Readiness::Waiting);
    }

    /// `script -qc bash` (and a nested tmux's client, an emulator): epoll
    /// on the terminal and a pty master.
    #[test]
    fn epoll_on_the_terminal_and_a_pty_master_is_a_relay() {
        let set = epoll(
            4,
            vec![
                watched(0, "/dev/pts/5"),
                watched(3, "/dev/ptmx"),
                watched(5, "anon_inode:[signalfd]"),
            ],
        );
        let threads = vec![epoll_wait(600, set, Timeout::Never)];
        let (r, _) = run(&[member(600, 1, "script", &[600])], threads);
        relay_because(&r, "on a pty master (fd 3)");
        // Another terminal counts too.
        let set = epoll(4, vec![watched(0, "/dev/pts/5"), watched(3, "/dev/pts/9")]);
        let threads = vec![epoll_wait(600, set, Timeout::Never)];
        let (r, _) = run(&[member(600, 1, "prog", &[600])], threads);
        relay_because(&r, "another terminal (fd 3, /dev/pts/9)");
    }

    /// Go (`docker exec -it`, `kubectl exec -it`): a thread reads the
    /// terminal, the netpoller's thread waits in epoll on the connection.
    #[test]
    fn a_helper_on_a_connection_makes_a_relay() {
        let set = epoll(
            4,
            vec![
                watched(5, "anon_inode:[eventfd]"),
                watched(7, "socket:[55]"),
            ],
        );
        let members = [member(700, 1, "docker", &[700, 701, 702])];
        let threads = vec![
            futex(700),
            read(701, 0, "/dev/pts/5"),
            epoll_wait(702, set, Timeout::Never),
        ];
        let (r, _) = run(&members, threads);
        relay_because(
            &r,
            "pid 700 (docker) thread 702 waits on a socket (fd 7) while the terminal is read",
        );
    }

    /// `python3` blocked in `fcntl(F_SETLKW)` (or `lockf`, `flock`) on a
    /// lock another process holds: busy, with the reason.
    #[test]
    fn a_file_lock_is_busy() {
        let py = [member(900, 1, "python3", &[900])];
        for name in ["fcntl", "flock"] {
            let lock = call(Sys::FileLock, name, &[3, 7, 0x7ffd_0000]);
            let (r, wakes) = run(&py, vec![in_call(900, lock)]);
            busy_because(
                &r,
                &format!("pid 900 (python3) is blocked on a lock ({name})"),
            );
            assert_eq!(wakes, Wakes::MAYBE);
        }
        // A helper thread on a lock is parked, as on any other wait.
        let lock = call(Sys::FileLock, "fcntl", &[3, 7, 0x7ffd_0000]);
        let two = [member(900, 1, "python3", &[900, 901])];
        let (r, _) = run(&two, vec![read(900, 0, "/dev/pts/5"), in_call(901, lock)]);
        assert_eq!(r, Readiness::Waiting);
    }

    /// Reading a socket with no terminal in sight: busy, said so.
    #[test]
    fn a_read_of_a_socket_says_so() {
        let prog = [member(600, 1, "curl", &[600])];
        let (r, _) = run(&prog, vec![read(600, 3, "socket:[77]")]);
        busy_because(&r, "pid 600 (curl) is reading a socket (fd 3)");
    }

    #[test]
    fn a_helper_thread_counts_only_when_it_reads_or_runs() {
        // Go: the main thread on a futex, a helper reading the terminal.
        let members = [member(700, 1, "goprog", &[700, 701, 702])];
        let sleep = call(Sys::Sleep, "nanosleep", &[0x7ffd_0000, 0]);
        let threads = vec![futex(700), read(701, 0, "/dev/pts/5"), in_call(702, sleep)];
        let (r, _) = run(&members, threads);
        assert_eq!(r, Readiness::Waiting, "a sleeping helper is parked");
        // A running helper is busy whichever thread it is.
        let running = Thread {
            tid: 702,
            state: b'S',
            syscall: Syscall::Running,
            wchan: Wchan::NotRead,
        };
        let threads = vec![futex(700), read(701, 0, "/dev/pts/5"), running];
        let (r, _) = run(&members, threads);
        busy_because(&r, "thread 702 is running");
        // Writing to the terminal: more output is on its way.
        let threads = vec![
            futex(700),
            read(701, 0, "/dev/pts/5"),
            write(702, 1, "/dev/pts/5"),
        ];
        let (r, _) = run(&members, threads);
        busy_because(&r, "writing to the terminal");
    }

    #[test]
    fn states_and_unreadable_calls() {
        let stopped = Member {
            state: b'T',
            ..member(800, 1, "prog", &[800])
        };
        let (r, _) = run(&[stopped], vec![read(800, 0, "/dev/pts/5")]);
        assert!(matches!(r, Readiness::Unknown(why) if why.contains("stopped")));
        let running = Member {
            state: b'R',
            ..member(800, 1, "prog", &[800])
        };
        let not_read = Thread {
            tid: 800,
            state: b'R',
            syscall: Syscall::NotRead,
            wchan: Wchan::NotRead,
        };
        let (r, _) = run(&[running], vec![not_read]);
        busy_because(&r, "is running");
        // ptrace denied: wchan decides, and a tty read counts as input.
        let denied = |wchan: &str| Thread {
            tid: 800,
            state: b'S',
            syscall: Syscall::Unreadable("Permission denied".into()),
            wchan: Wchan::Function(wchan.into()),
        };
        let prog = [member(800, 1, "prog", &[800])];
        let (r, _) = run(&prog, vec![denied("n_tty_read")]);
        assert_eq!(r, Readiness::Waiting);
        let (r, _) = run(&prog, vec![denied("io_schedule")]);
        assert!(
            matches!(&r, Readiness::Unknown(why) if why.contains("cannot read its system call") && why.contains("io_schedule")),
            "{r:?}"
        );
        // An unlisted call falls to wchan too: a file lock is busy, an
        // unknown kernel function unknown.
        let unlisted = |wchan: &str| Thread {
            tid: 800,
            state: b'S',
            syscall: Syscall::Unlisted(100_000),
            wchan: Wchan::Function(wchan.into()),
        };
        let (r, _) = run(&prog, vec![unlisted("do_lock_file_wait")]);
        busy_because(&r, "is blocked on a lock (do_lock_file_wait)");
        let (r, _) = run(&prog, vec![unlisted("io_schedule")]);
        assert!(
            matches!(&r, Readiness::Unknown(why) if why.contains("system call 100000")),
            "{r:?}"
        );
        // A thread that exited between the listing and the read.
        let gone = Thread {
            tid: 801,
            state: b'S',
            syscall: Syscall::Gone,
            wchan: Wchan::NotRead,
        };
        let two = [member(800, 1, "prog", &[800, 801])];
        let (r, _) = run(&two, vec![read(800, 0, "/dev/pts/5"), gone]);
        assert_eq!(r, Readiness::Waiting);
    }
    #[test]
    fn a_background_job_of_a_member_reading_the_terminal_does_not_hold_it() {
        // `bash -c 'sleep 1000 & read x'`: no job control, so the sleep is
        // in bash's group; bash reads the terminal, not waiting for it.
        let sleep = call(Sys::Sleep, "clock_nanosleep", &[0, 0, 0x7ffd_0000, 0]);
        let members = [
            member(900, 1, "bash", &[900]),
            member(901, 900, "sleep", &[901]),
        ];
        let threads = || vec![read(900, 0, "/dev/pts/5"), in_call(901, sleep.clone())];
        let (r, wakes) = run(&members, threads());
        assert_eq!(r, Readiness::Waiting);
        assert!(wakes.may);
        // Working instead of sleeping: the same.
        let running = Thread {
            tid: 901,
            state: b'R',
            syscall: Syscall::NotRead,
            wchan: Wchan::NotRead,
        };
        let running_member = Member {
            state: b'R',
            ..member(901, 900, "yes", &[901])
        };
        let (r, _) = run(
            &[members[0].clone(), running_member],
            vec![read(900, 0, "/dev/pts/5"), running],
        );
        assert_eq!(r, Readiness::Waiting);
        // git polling its child's pipe (a poll's set is not read, so it
        // counts as input): its running child is not background.
        let mut poll = call(Sys::Poll, "poll", &[0x7ffd_0000, 1, u32::MAX as u64]);
        poll.timeout = Timeout::Never;
        let git = [
            member(900, 1, "git", &[900]),
            Member {
                state: b'R',
                ..member(901, 900, "git", &[901])
            },
        ];
        let running = Thread {
            tid: 901,
            state: b'R',
            syscall: Syscall::NotRead,
            wchan: Wchan::NotRead,
        };
        let (r, _) = run(&git, vec![in_call(900, poll), running]);
        busy_because(&r, "pid 901 (git) is running");
        // bash waiting for it (a foreground command): busy, asleep.
        let wait4 = call(Sys::Wait, "wait4", &[901, 0x7ffd_0000, 0, 0]);
        let (r, wakes) = run(&members, vec![in_call(900, wait4), in_call(901, sleep)]);
        busy_because(&r, "sleeping in clock_nanosleep");
        assert!(wakes.asleep);
    }

    #[test]
    fn a_helper_computing_while_the_main_thread_reads_the_terminal_waits() {
        let members = [member(950, 1, "python3", &[950, 951])];
        let running = Thread {
            tid: 951,
            state: b'S',
            syscall: Syscall::Running,
            wchan: Wchan::NotRead,
        };
        let (r, _) = run(&members, vec![read(950, 0, "/dev/pts/5"), running.clone()]);
        assert_eq!(r, Readiness::Waiting);
        // The main thread polls with a timeout (it may wake without
        // input): the helper's work counts.
        let mut poll = call(Sys::Poll, "poll", &[0x7ffd_0000, 1, 100]);
        poll.timeout = Timeout::After(Duration::from_millis(100));
        let (r, _) = run(&members, vec![in_call(950, poll), running]);
        busy_because(&r, "thread 951 is running");
    }

    #[test]
    fn work_under_a_wait_on_the_terminal_alone_does_not_hold_it() {
        let members = [member(600, 1, "python3", &[600, 601])];
        let running = Thread {
            tid: 601,
            state: b'S',
            syscall: Syscall::Running,
            wchan: Wchan::NotRead,
        };
        // readline's select of the terminal alone, for ever: only input
        // wakes it, as a plain read.
        let mut select = call(Sys::Select, "pselect6", &[1, 0x7ffd_0000, 0, 0, 0, 0]);
        select.fds = Some(vec![fd(0, "/dev/pts/5")]);
        select.timeout = Timeout::Never;
        let (r, _) = run(&members, vec![in_call(600, select), running.clone()]);
        assert_eq!(r, Readiness::Waiting);
        // An epoll of the terminal alone: the same.
        let set = epoll(3, vec![watched(0, "/dev/pts/5")]);
        let threads = vec![epoll_wait(600, set, Timeout::Never), running.clone()];
        assert_eq!(run(&members, threads).0, Readiness::Waiting);
        // With the runtime's eventfd in the set, the helper may wake it
        // with its result: its work counts.
        let set = epoll(
            3,
            vec![watched(0, "/dev/pts/5"), watched(4, "anon_inode:[eventfd]")],
        );
        let threads = vec![epoll_wait(600, set, Timeout::Never), running.clone()];
        busy_because(&run(&members, threads).0, "thread 601 is running");
        // A set that could not be read: maybe more than the terminal.
        let mut unread = call(Sys::Poll, "poll", &[0x7ffd_0000, 1, u64::MAX]);
        unread.timeout = Timeout::Never;
        let threads = vec![in_call(600, unread), running];
        busy_because(&run(&members, threads).0, "thread 601 is running");
        // A child working under a parent that polls the terminal alone:
        // background; under one polling the terminal and the child's pipe
        // (which the child holds: not a relay), the child's work counts.
        let family = [
            member(600, 1, "python3", &[600]),
            Member {
                state: b'R',
                ..member(602, 600, "python3", &[602])
            },
        ];
        let child = Thread {
            tid: 602,
            state: b'R',
            syscall: Syscall::NotRead,
            wchan: Wchan::NotRead,
        };
        let alone = polling("poll", vec![fd(0, "/dev/pts/5")]);
        let (r, _) = run(&family, vec![alone, child.clone()]);
        assert_eq!(r, Readiness::Waiting);
        let both = polling("poll", vec![fd(0, "/dev/pts/5"), fd(5, "pipe:[77]")]);
        let fds: &[(i32, &[&str])] = &[(600, &["/dev/pts/5", "pipe:[77]"]), (602, &["pipe:[77]"])];
        let (r, _) = run_with_fds(&family, vec![both, child], fds);
        busy_because(&r, "pid 602 (python3) is running");
    }

    #[test]
    fn a_sleeper_holding_the_terminal_non_blocking_polls_its_keys() {
        let nap = call(Sys::Sleep, "clock_nanosleep", &[0, 0, 0x7ffd_0000, 0]);
        let members = [member(700, 1, "python3", &[700])];
        let (r, wakes) = run(&members, vec![in_call(700, nap.clone())]);
        busy_because(&r, "sleeping in clock_nanosleep");
        assert!(wakes.asleep && !wakes.keys, "{wakes:?}");
        let canned = Canned {
            nonblocking: vec![700],
            ..Canned::default()
        };
        let (r, wakes) = run_canned(&members, vec![in_call(700, nap)], canned);
        busy_because(&r, "sleeping in clock_nanosleep");
        assert!(wakes.asleep && wakes.keys, "{wakes:?}");
    }
}
