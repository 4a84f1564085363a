//! The Linux probe: one pass over `/proc` per call, nothing kept between
//! calls. See the parent module for the rule it implements. What the kernel
//! shows is read by [`procfs`] (members, then one thread at a time, as the
//! verdict asks for it); everything here is a pure function of those
//! snapshots, so it is tested on canned ones below.

use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::procfs::{self, EpollSet, Member, Sys, Syscall, Thread, Timeout, Wait, Wchan};
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
    /// sleep: busy unless the main thread reads the terminal, so that only
    /// input can wake it.
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

/// The readiness of the group `members` of the terminal at `pts`, and
/// whether it may wake by itself: a thread waits with a timeout, or a helper
/// is parked on something else.
///
/// The whole foreground job decides, not one process, and three kinds of
/// work do not hold it back:
/// - a member whose parent (a member too) reads the terminal rather than
///   waiting for it: a background job of a shell without job control
///   (`sleep 1000 & read x`), a child a program left running. A plain read
///   only: a poll's set is not known here (git polls its child's pipe);
/// - a helper thread computing while the main thread of its process reads
///   the terminal, which only input can wake;
/// - sleeping on a clock, which is reported as busy but `asleep` (see
///   [`Wakes::asleep`]) for the rule to decide.
fn verdict(pts: &[u8], members: &[Member], source: &mut dyn Source) -> (Readiness, Wakes) {
    let mut input = false;
    let mut wakes = Wakes::default();
    let mut unknown = None;
    let mut parked = None;
    let mut deferred = Vec::new();
    // Per member: its main thread is in a plain read of the terminal (only
    // input wakes it).
    let mut main_reads = vec![false; members.len()];
    let parent_of = |i: usize| {
        let ppid = members[i].ppid;
        members
            .iter()
            .position(|m| m.pid == ppid && ppid != members[i].pid)
    };
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
                        main_reads[i] = matches!(
                            &thread.syscall,
                            Syscall::In(wait) if wait.sys == Sys::Read
                        );
                    }
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
    // Every member's open files, read only when a pipe needs matching.
    let mut fd_links: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut asleep = None;
    for (i, class) in deferred {
        // Whether the member's parent reads the terminal instead of waiting
        // for it: then this is background work.
        let background = parent_of(i).is_some_and(|p| main_reads[p]);
        let (served, why) = match class {
            Class::Busy(why) | Class::Active(why) => (background, why),
            Class::HelperRunning(why) => (main_reads[i] || background, why),
            Class::Asleep(why) if background => (true, why),
            Class::Asleep(why) => {
                asleep.get_or_insert(why);
                continue;
            }
            Class::WaitsForChild(why) => {
                let pid = members[i].pid;
                (members.iter().any(|m| m.ppid == pid), why)
            }
            Class::OnFile { link, why } => {
                if fd_links.is_empty() {
                    fd_links = members.iter().map(|m| source.fd_links(m.pid)).collect();
                }
                let held = fd_links
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
            ..Wakes::MAYBE
        };
        return (Readiness::Busy(why), wakes);
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

fn is_terminal(pts: &[u8], link: &[u8]) -> bool {
    link == pts || link == b"/dev/tty"
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
    let (pid, tid) = (member.pid, thread.tid);
    let who = || {
        if tid == pid {
            format!("pid {pid} ({})", member.comm)
        } else {
            format!("pid {pid} ({}) thread {tid}", member.comm)
        }
    };
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
                "{} is {} fd {arg1} ({})",
                who(),
                if reading { "reading" } else { "writing" },
                String::from_utf8_lossy(link)
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
        Sys::Poll => Class::Input(wait.timeout),
        Sys::Select => match &wait.fds {
            // A set too wide to resolve is taken to hold the terminal.
            None => Class::Input(wait.timeout),
            Some(fds) => {
                let terminal = fds
                    .iter()
                    .any(|fd| fd.target.as_deref().is_some_and(|l| is_terminal(pts, l)));
                if terminal {
                    Class::Input(wait.timeout)
                } else {
                    Class::Parked(format!("{} is in {name} without the terminal", who()))
                }
            }
        },
        Sys::Epoll => match wait
            .epoll
            .as_ref()
            .and_then(|set| epoll_has_terminal(pts, set))
        {
            Some(false) => Class::Parked(format!("{} is in {name} without the terminal", who())),
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
        Sys::Signal => Class::Parked(format!("{} waits for a signal ({name})", who())),
        Sys::Elsewhere => Class::Busy(format!("{} is blocked in {name}", who())),
    };
    Ok(class)
}

/// Whether the epoll `set` (or one nested in it) watches the terminal;
/// `None` if that cannot be told (the list could not be read, or was cut
/// before a watched terminal was found).
fn epoll_has_terminal(pts: &[u8], set: &EpollSet) -> Option<bool> {
    for entry in set.entries.as_ref()? {
        if entry
            .fd
            .target
            .as_deref()
            .is_some_and(|l| is_terminal(pts, l))
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

    use super::procfs::{EpollEntry, WaitFd};
    use std::collections::HashMap;
    use std::time::Duration;

    const PTS: &[u8] = b"/dev/pts/5";

    #[derive(Default)]
    struct Canned {
        threads: HashMap<i32, Thread>,
        fds: HashMap<i32, Vec<Vec<u8>>>,
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

    fn fd(fd: u64, target: &str) -> WaitFd {
        WaitFd {
            fd,
            target: Some(target.as_bytes().to_vec()),
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
        let canned = &mut Canned {
            threads: threads.into_iter().map(|t| (t.tid, t)).collect(),
            fds: fds
                .iter()
                .map(|(pid, links)| (*pid, links.iter().map(|l| l.as_bytes().to_vec()).collect()))
                .collect(),
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
        run(&[member(100, 1, "node", &tids)], threads)
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
        select.fds = Some(vec![
            fd(0, "/dev/pts/5"),
            fd(1, "/dev/pts/5"),
            fd(2, "/dev/pts/5"),
            fd(3, "/home/u/.notes.txt.swp"),
            WaitFd {
                fd: 4,
                target: None,
            },
            fd(5, "socket:[4242]"),
        ]);
        select.timeout = Timeout::After(Duration::from_secs(4));
        let signal = call(Sys::Signal, "rt_sigtimedwait", &[0x7ffd_0200, 0, 0, 8]);
        let threads = vec![in_call(400, select), in_call(401, signal)];
        let (r, wakes) = run(&[member(400, 1, "vim", &[400, 401])], threads);
        assert_eq!(r, Readiness::Waiting);
        assert_eq!(wakes.timer, Some(Duration::from_secs(4)));
        assert!(wakes.may);
        // The same select without the terminal in the set: parked, and
        // nothing waits for the terminal.
        let mut select = call(Sys::Select, "select", &[6, 0x7ffd_0000, 0, 0, 0, 0]);
        select.fds = Some(vec![fd(5, "socket:[4242]")]);
        select.timeout = Timeout::Never;
        let (r, _) = run(&[member(400, 1, "vim", &[400])], vec![in_call(400, select)]);
        busy_because(&r, "without the terminal");
        // A select too wide to resolve is taken to hold the terminal.
        let mut wide = call(Sys::Select, "select", &[1024, 0x7ffd_0000, 0, 0, 0, 0]);
        wide.timeout = Timeout::Never;
        let (r, _) = run(&[member(400, 1, "vim", &[400])], vec![in_call(400, wide)]);
        assert_eq!(r, Readiness::Waiting);
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
        busy_because(&r, "writing fd 1 (pipe:[777])");
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

    /// ssh in raw mode: the main thread polls the terminal and its socket.
    /// Today that reads as waiting for input, as any poll does (a known
    /// gap: issue 14 is to read the set and call it a relay).
    #[test]
    fn ssh_relaying_reads_as_waiting_today() {
        let mut poll = call(Sys::Poll, "poll", &[0x7ffd_0000, 3, u32::MAX as u64]);
        poll.timeout = Timeout::Never;
        let (r, _) = run(&[member(600, 1, "ssh", &[600])], vec![in_call(600, poll)]);
        assert_eq!(r, Readiness::Waiting);
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
        // An unlisted call (flock's neighbour fcntl) falls to wchan too.
        let unlisted = Thread {
            tid: 800,
            state: b'S',
            syscall: Syscall::Unlisted(72),
            wchan: Wchan::Function("locks_lock_inode_wait".into()),
        };
        let (r, _) = run(&prog, vec![unlisted]);
        assert!(
            matches!(&r, Readiness::Unknown(why) if why.contains("system call 72")),
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
}
