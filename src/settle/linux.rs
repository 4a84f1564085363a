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
fn verdict(pts: &[u8], members: &[Member], source: &mut dyn Source) -> (Readiness, Wakes) {
    let mut input = false;
    let mut wakes = Wakes::default();
    let mut unknown = None;
    let mut parked = None;
    let mut deferred = Vec::new();
    for (i, member) in members.iter().enumerate() {
        for &tid in &member.tids {
            let thread = source.thread(member, tid);
            match classify(pts, member, &thread) {
                Class::Busy(why) | Class::Active(why) => {
                    return (Readiness::Busy(why), Wakes::MAYBE)
                }
                Class::Input(timeout) => {
                    input = true;
                    wakes = wakes.and(wakes_of(timeout));
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
    for (i, class) in deferred {
        let (served, why) = match class {
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
                (held, why)
            }
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
    match class {
        Class::Input(_) | Class::Active(_) | Class::Gone => class,
        Class::Parked(why)
        | Class::Busy(why)
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
            Class::Busy(format!("{} is sleeping in {name}", who()))
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
}
