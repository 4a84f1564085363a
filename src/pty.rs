//! Pseudo-terminals: open a master with rustix, spawn a child as the leader of
//! a new session with the PTY as its controlling terminal, set the window size.
//!
//! This is the only place in the crate that needs `unsafe`: the `pre_exec` hook
//! that runs between fork and exec, and the signal-mask calls it and a
//! server's signal thread make ([`sigmask`]).

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use rustix::fs::{self, Mode, OFlags};
use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
use rustix::termios::{tcsetwinsize, Winsize};

/// What to run and how. Sizes are assumed to be validated by the caller
/// (see `limits`).
#[derive(Clone, Debug)]
pub struct SpawnOptions {
    pub argv: Vec<String>,
    pub cwd: Option<PathBuf>,
    /// Variables set on top of the inherited (or empty) environment.
    pub env: Vec<(String, String)>,
    /// Start from an empty environment instead of this process's.
    pub clean_env: bool,
    pub cols: u16,
    pub rows: u16,
}

/// The master side of a PTY whose slave is held by a spawned child.
pub struct Pty {
    master: OwnedFd,
    pts: PathBuf,
}

impl Pty {
    pub fn master(&self) -> BorrowedFd<'_> {
        self.master.as_fd()
    }

    /// The slave's path (`/dev/pts/N`), used to recognise reads of the terminal.
    pub fn pts(&self) -> &Path {
        &self.pts
    }

    pub fn set_size(&self, cols: u16, rows: u16) -> io::Result<()> {
        tcsetwinsize(&self.master, winsize(cols, rows))?;
        Ok(())
    }
}

/// The window size, in cells and in pixels ([`crate::limits::CELL_PIXELS`]
/// per cell: programs that take mouse reports in pixels divide by it).
fn winsize(cols: u16, rows: u16) -> Winsize {
    let (w, h) = crate::limits::CELL_PIXELS;
    Winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: cols.saturating_mul(w),
        ws_ypixel: rows.saturating_mul(h),
    }
}

/// What poll(2) reports for `fd` right now, without waiting: the events
/// asked for that are ready, plus HUP and ERR (always reported); empty when
/// nothing is or the call fails.
pub fn ready_now(fd: BorrowedFd<'_>, events: rustix::event::PollFlags) -> rustix::event::PollFlags {
    ready_within(fd, events, std::time::Duration::ZERO)
}

/// As [`ready_now`], waiting up to `limit` for one of `events`.
pub fn ready_within(
    fd: BorrowedFd<'_>,
    events: rustix::event::PollFlags,
    limit: std::time::Duration,
) -> rustix::event::PollFlags {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let mut fds = [PollFd::from_borrowed_fd(fd, events)];
    let wait = Timespec::try_from(limit).unwrap_or(Timespec {
        tv_sec: i64::from(i32::MAX),
        tv_nsec: 0,
    });
    match poll(&mut fds, Some(&wait)) {
        Ok(n) if n > 0 => fds[0].revents(),
        _ => PollFlags::empty(),
    }
}

/// A pidfd for a child of ours, readable once it has exited (Linux 5.3 on;
/// `None` where there is none).
#[cfg(target_os = "linux")]
pub fn child_pidfd(child: &Child) -> Option<OwnedFd> {
    let pid = rustix::process::Pid::from_raw(i32::try_from(child.id()).ok()?)?;
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
}

#[cfg(not(target_os = "linux"))]
pub fn child_pidfd(_child: &Child) -> Option<OwnedFd> {
    None
}

/// The limit on open files this process started with, when
/// [`raise_fd_limit`] raised it: (soft, hard), `None` meaning unlimited.
static STARTING_FD_LIMIT: OnceLock<(Option<u64>, Option<u64>)> = OnceLock::new();

/// Raise this process's soft limit on open files to its hard limit. A
/// process holding sessions needs three or four descriptors per session
/// (master, pidfd, stop pipe) and a few per client, more than the usual
/// soft limit of 1024 allows at [`crate::limits::MAX_SESSIONS`] sessions and
/// [`crate::limits::MAX_CONNECTIONS`] clients. Programs started afterwards
/// get the starting limit back (see [`spawn`]).
pub fn raise_fd_limit() {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let lim = getrlimit(Resource::Nofile);
    if lim.current == lim.maximum {
        return;
    }
    let raised = Rlimit {
        current: lim.maximum,
        maximum: lim.maximum,
    };
    if setrlimit(Resource::Nofile, raised).is_ok() {
        let _ = STARTING_FD_LIMIT.set((lim.current, lim.maximum));
    }
}

/// Open a PTY and spawn `opts.argv` on it. The master is returned in
/// non-blocking mode so that neither reads nor writes can wedge a thread.
pub fn spawn(opts: &SpawnOptions) -> io::Result<(Pty, Child)> {
    // A fuzzer drives the decoders with every request it can invent,
    // `pty/start {"cmd": "rm -rf ~"}` among them: under cargo-fuzz nothing
    // is ever run.
    if cfg!(fuzzing) {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "programs are not run while fuzzing",
        ));
    }
    let program = opts
        .argv
        .first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no command given"))?;
    if let Some(dir) = &opts.cwd {
        check_cwd(dir)?;
    }
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)?;
    grantpt(&master)?;
    unlockpt(&master)?;
    let pts = PathBuf::from(OsString::from_vec(
        ptsname(&master, Vec::new())?.into_bytes(),
    ));
    tcsetwinsize(&master, winsize(opts.cols, opts.rows))?;
    let slave = fs::open(
        &pts,
        OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;

    let mut cmd = Command::new(program);
    cmd.args(&opts.argv[1..]);
    if opts.clean_env {
        cmd.env_clear();
    }
    // PWD names the directory the program starts in (a shell checks it;
    // most programs take it on trust), unless the caller set it, or the
    // PWD this process passes on names that directory already (by a path
    // through a symlink, say, which a shell's prompt shows). (The command
    // line sends an absolute directory; a relative one from a raw client,
    // rare, leaves PWD as it is.)
    let inherited = std::env::var_os("PWD").filter(|_| !opts.clean_env);
    let pwd = opts
        .cwd
        .as_deref()
        .filter(|d| d.is_absolute() && !opts.env.iter().any(|(k, _)| k == "PWD"))
        .filter(|d| {
            !inherited
                .as_deref()
                .is_some_and(|p| same_dir(Path::new(p), d))
        })
        .map(|d| ("PWD", d.as_os_str()));
    let env = opts.env.iter().map(|(k, v)| (k.as_str(), v.as_ref()));
    for (k, v) in env.chain(pwd) {
        cmd.env(k, v);
    }
    if let Some(dir) = &opts.cwd {
        cmd.current_dir(dir);
    }
    cmd.stdin(Stdio::from(slave.try_clone()?));
    cmd.stdout(Stdio::from(slave.try_clone()?));
    cmd.stderr(Stdio::from(slave));
    let restore = STARTING_FD_LIMIT.get().copied();
    // A server blocks the signals that end it (see `server::ExitSignals`);
    // the program must not inherit that, nor a signal ignored by whoever
    // started the daemon (a shell's background job ignores INT and QUIT):
    // Ctrl+C must reach the program.
    let empty = sigmask::empty()?;
    // SAFETY: the hook runs in the forked child before exec and only makes
    // async-signal-safe system calls (pthread_sigmask, signal, setsid,
    // ioctl, prlimit), which neither allocate nor take locks; `restore` and
    // `empty` are copied values.
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || {
            sigmask::unblock_all(&empty)?;
            sigmask::default_all();
            rustix::process::setsid()?;
            rustix::process::ioctl_tiocsctty(rustix::stdio::stdin())?;
            if let Some((current, maximum)) = restore {
                let lim = rustix::process::Rlimit { current, maximum };
                rustix::process::setrlimit(rustix::process::Resource::Nofile, lim)?;
            }
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot run {program:?}: {e}")))?;
    let flags = fs::fcntl_getfl(&master)?;
    fs::fcntl_setfl(&master, flags | OFlags::NONBLOCK)?;
    Ok((Pty { master, pts }, child))
}

/// Do two paths name the same directory?
fn same_dir(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Can a program start in `dir`? The child's chdir(2) fails with the same
/// ENOENT as a missing program, and `Command::spawn` would report a missing
/// directory as `cannot run "bash": No such file or directory`: look first,
/// and name the directory.
fn check_cwd(dir: &Path) -> io::Result<()> {
    let unusable = |e: io::Error| {
        io::Error::new(
            e.kind(),
            format!("cannot use working directory {dir:?}: {e}"),
        )
    };
    let meta = std::fs::metadata(dir).map_err(unusable)?;
    if !meta.is_dir() {
        return Err(unusable(rustix::io::Errno::NOTDIR.into()));
    }
    rustix::fs::access(dir, rustix::fs::Access::EXEC_OK).map_err(|e| unusable(e.into()))
}

/// Spawn a process that leaves our session (for the daemon), so that closing
/// the caller's terminal does not hang it up.
pub fn spawn_detached(cmd: &mut Command) -> io::Result<Child> {
    // SAFETY: the hook runs in the forked child before exec and makes one
    // async-signal-safe system call (setsid) that neither allocates nor locks.
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(|| {
            rustix::process::setsid()?;
            Ok(())
        });
    }
    cmd.spawn()
}

/// The few signal calls of the C library that neither std nor rustix's
/// stable interface offers: [`crate::server::ExitSignals`] blocks the
/// signals that end a server and takes them with sigwait(3), and [`spawn`]
/// gives every program an empty mask and default dispositions back (a mask
/// and ignored signals are inherited across fork and exec).
///
/// The one `unsafe` outside the spawn hooks, allowed here alone: signals
/// cannot be taken safely any other way (a handler may do next to
/// nothing), and these four C library calls have no safe wrapper to use.
#[allow(unsafe_code)]
pub mod sigmask {
    use std::ffi::c_int;
    use std::io;

    use rustix::process::Signal;

    /// Room for any C library's `sigset_t` (glibc and musl: 128 bytes).
    #[repr(C, align(8))]
    #[derive(Clone, Copy)]
    pub struct SigSet([u64; 16]);

    #[cfg(any(target_os = "linux", target_os = "android"))]
    const SIG_BLOCK: c_int = 0;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const SIG_SETMASK: c_int = 2;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    const SIG_BLOCK: c_int = 1;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    const SIG_SETMASK: c_int = 3;

    extern "C" {
        fn sigemptyset(set: *mut SigSet) -> c_int;
        fn sigaddset(set: *mut SigSet, signum: c_int) -> c_int;
        fn pthread_sigmask(how: c_int, set: *const SigSet, old: *mut SigSet) -> c_int;
        fn sigwait(set: *const SigSet, sig: *mut c_int) -> c_int;
        /// `handler` is a `sighandler_t`: 0 is `SIG_DFL`.
        fn signal(signum: c_int, handler: usize) -> usize;
    }

    /// The classic signals (the real-time ones are left alone: the C
    /// library keeps some of them for itself).
    const CLASSIC: c_int = 31;

    /// Block `signals` in the calling thread (and so in the threads it
    /// starts from now on); returns the set, for [`wait`].
    pub fn block(signals: &[Signal]) -> io::Result<SigSet> {
        let mut set = SigSet([0; 16]);
        // SAFETY: `set` is a valid, writable, suitably aligned buffer at
        // least as large as the C library's sigset_t; the signal numbers
        // are valid; pthread_sigmask only reads `set`, and a null `old` is
        // allowed. Blocking TERM, INT and HUP takes no signal the C library
        // or Rust's runtime relies on.
        unsafe {
            if sigemptyset(&mut set) != 0 {
                return Err(io::Error::last_os_error());
            }
            for s in signals {
                if sigaddset(&mut set, s.as_raw()) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            match pthread_sigmask(SIG_BLOCK, &set, std::ptr::null_mut()) {
                0 => Ok(set),
                e => Err(io::Error::from_raw_os_error(e)),
            }
        }
    }

    /// An empty set, for [`unblock_all`]; made before fork, where building
    /// it is not restricted.
    pub fn empty() -> io::Result<SigSet> {
        let mut set = SigSet([0; 16]);
        // SAFETY: as in `block`: a valid, writable buffer large enough.
        if unsafe { sigemptyset(&mut set) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(set)
    }

    /// Unblock every signal in the calling thread. Async-signal-safe (one
    /// system call), for the child between fork and exec.
    pub fn unblock_all(empty: &SigSet) -> io::Result<()> {
        // SAFETY: `empty` was filled by sigemptyset; a null `old` is allowed.
        match unsafe { pthread_sigmask(SIG_SETMASK, empty, std::ptr::null_mut()) } {
            0 => Ok(()),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }

    /// Give every classic signal its default disposition in the calling
    /// process (those a handler caught are reset by exec anyway; an ignored
    /// one would stay ignored). Async-signal-safe (a system call each), for
    /// the child between fork and exec. KILL and STOP refuse, harmlessly.
    pub fn default_all() {
        for sig in 1..=CLASSIC {
            // SAFETY: signal(2) with SIG_DFL installs no handler and reads
            // no memory of ours; any failure leaves the disposition as it
            // was.
            unsafe {
                signal(sig, 0);
            }
        }
    }

    /// Wait for one of the blocked signals of `set`; its number.
    pub fn wait(set: &SigSet) -> Option<i32> {
        let mut n: c_int = 0;
        // SAFETY: `set` was filled by sigemptyset/sigaddset in [`block`];
        // `n` is a valid place for the result.
        match unsafe { sigwait(set, &mut n) } {
            0 => Some(n),
            _ => None,
        }
    }
}
