//! Every bound ptybroker enforces, in one place. The man page's LIMITS
//! section lists the same numbers; change both together.

use std::time::Duration;

/// Bytes of raw output kept per session (the transcript ring).
pub const TRANSCRIPT_BYTES: usize = 1 << 20;
/// Lines of primary-screen history kept per session.
pub const SCROLLBACK_LINES: usize = 10_000;
/// Terminal width and height accepted from any front end.
pub const COLS: (u16, u16) = (2, 1000);
pub const ROWS: (u16, u16) = (2, 500);
/// Default size when a front end does not say.
pub const DEFAULT_COLS: u16 = 100;
pub const DEFAULT_ROWS: u16 = 30;
/// Sessions one process (daemon, serve, driver, mcp) may hold at once.
pub const MAX_SESSIONS: usize = 256;
/// Recording events queued for the file's writer; past this (a file that
/// does not keep up) events are dropped, and counted in a closing marker.
pub const RECORD_QUEUE: usize = 4096;
/// How long stopping a recording waits for its file to take what is queued.
pub const RECORD_FINISH_WAIT: Duration = Duration::from_secs(5);
/// The longest session name, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// Client connections one daemon serves at once.
pub const MAX_CONNECTIONS: usize = 128;
/// Connections to `serve --port` that have not sent their token yet: they
/// have places of their own and never take one of [`MAX_CONNECTIONS`];
/// when all are taken, the oldest is closed for the newcomer.
pub const MAX_UNAUTHENTICATED: usize = 16;
/// How long a connection to `serve --port` may take to send its token
/// before it is closed.
pub const AUTH_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an answer may wait for a client that does not read it; then
/// the connection is closed (the session is never held up meanwhile).
pub const CLIENT_WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// Refused connections (another uid, too many connections) being told why
/// at once; more are closed without a word.
pub const MAX_REFUSING: usize = 8;
/// How long a refused connection may linger so that its peer reads the
/// reason (its unread input is drained meanwhile).
pub const REFUSE_LINGER: Duration = Duration::from_secs(2);
/// Longest request line; a longer one is refused without being buffered whole.
pub const MAX_LINE_BYTES: usize = 4 << 20;
/// Most object members (keys) one request line may hold; a line is counted
/// before it is parsed. Parsed, a member costs some 130 bytes whatever its
/// size: without this bound a 4 MiB line of 300,000 tiny keys became 40 MB,
/// in each of many connections at once. No request has more than a few.
pub const MAX_JSON_MEMBERS: usize = 16_384;
/// Most JSON values in all (array items, objects, arrays) one request line
/// may hold: enough for a raw write of [`MAX_WRITE_BYTES`], which is an
/// array of that many numbers (32 bytes each, parsed).
pub const MAX_JSON_ITEMS: usize = MAX_WRITE_BYTES + 16_384;
/// Driver requests (seed 003) being answered at once, each on its own thread.
pub const MAX_DRIVER_REQUESTS: usize = 256;
/// Most bytes one write request may send to a program.
pub const MAX_WRITE_BYTES: usize = 1 << 20;
/// Longest any single wait may block, whatever the caller asks for.
pub const MAX_WAIT: Duration = Duration::from_secs(3600);
/// Default wait timeout of `pty/wait` (seed 000).
pub const DEFAULT_WAIT: Duration = Duration::from_millis(10_000);
/// How long a write may wait for a program that does not read its input.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// Stopping a session: after SIGTERM to every process of it, how long they
/// have to end (a clean-up handler runs) before SIGHUP goes to what is left.
/// Cut short once all that is left ignores SIGTERM (an interactive shell).
pub const STOP_TERM_GRACE: Duration = Duration::from_millis(1_000);
/// Stopping a session: after the SIGHUP, how long before SIGKILL. Cut short
/// once all that is left ignores both signals.
pub const STOP_GRACE: Duration = Duration::from_millis(2_000);
/// A server that is exiting (`pty/kill`, a signal) waits this long at most
/// for the requests in flight on other connections (a `pty/wait`) to be
/// answered.
pub const EXIT_ANSWER_WAIT: Duration = Duration::from_secs(5);
/// The CLI: the most output `start`, `step`, `wait` and `read` print by
/// default, in bytes: whole lines, a quarter from the head (what the
/// command began with: its first error) and the rest from the tail (how it
/// ended: the summary, the prompt). An agent reads every byte a call
/// prints into its context; 32 KiB (some 8,000 tokens) is more than a
/// screen of any real size or a typical build's answer, and far less than
/// the transcript ring. What is left out stays readable: the omission
/// marker names the `read` that prints exactly those lines (from the
/// transcript, while the ring holds them). `--max-bytes 0` lifts the cap.
pub const OUTPUT_CAP_BYTES: usize = 32 * 1024;
/// How far back `step` and `wait` look for the start of the line their
/// output goes on from (its prompt, or a line being typed), so that moves
/// and edits along it land where the terminal put them.
pub const LINE_LOOKBACK: usize = 4096;
/// The quiet window of `start` and `step` (pty-prompt's default).
pub const DEFAULT_QUIET: Duration = Duration::from_millis(500);
/// Settling: after the kernel first says the program waits for input, it
/// must say so again this much later with no output in between, when the
/// program may wake by itself (a thread polls with a timeout, or a helper
/// is parked on something else): a short pause on a timer between two
/// writes is not the answer.
pub const SETTLE_DEBOUNCE: Duration = Duration::from_millis(2);
/// Settling: the same when every thread waits on the terminal with no
/// timeout, so that only input or a signal can wake it. Output it wrote
/// before it blocked cannot slip past a single look (see
/// `Session::look`); the second look is a margin for what one look
/// at a process group can miss (a process between two system calls, a
/// pipeline handing over) and for kernels whose terminal poll does not flush
/// pending buffer work.
pub const SETTLE_DEBOUNCE_BLOCKED: Duration = Duration::from_millis(1);
/// Settling: a program waiting on the terminal with a timeout at most this
/// long is not settled until that timeout has run out, when it is not known
/// to idle that way (the first wait of a foreground job, or a full-screen
/// program that has drawn nothing since the input): node's `await` of a
/// timer, a wizard's pause, `read -t` in a countdown. Longer timeouts are
/// housekeeping (vim's 4 s `updatetime`, top's 3 s refresh) and do not hold
/// a wait back. There, timers the program re-arms without printing anything
/// take at most this long together.
pub const SETTLE_TIMER_HORIZON: Duration = Duration::from_millis(2_000);
/// Settling: a program that settled last time blocked on the terminal with
/// no timer, or with another one, and now waits on a timer at most this long
/// is working through it (node's `await sleep(3000)`): it is let run out, and
/// the timers it re-arms without a word after it (a chain of awaits) too,
/// for as long as the wait may last. Longer ones are housekeeping (V8's
/// memory reducer arms 8 s after node's REPL evaluates a line) or a prompt's
/// own timeout (`read -t 60`).
pub const SETTLE_TIMER_AWAIT: Duration = Duration::from_secs(5);
/// Settling: two timeouts this close are the same period (a runtime that
/// computes the time left to its next deadline re-arms 497 ms after 500).
pub const SETTLE_TIMER_JITTER: Duration = Duration::from_millis(20);
/// Settling: a timeout shorter than this, seen as a program settled, is the
/// end of a tick that was about to fire (ipython drew its prompt 10 ms
/// before its poll's tick), not the period it idles with.
pub const SETTLE_IDLE_PERIOD_MIN: Duration = Duration::from_millis(50);
/// Settling after an Escape key: output this long after the key is its
/// answer (vim leaving insert mode after its 100 ms ttimeoutlen, ipython's
/// `[nav]` after 500 ms), not its echo (at once) nor vim's `^[` (25 ms).
pub const SETTLE_ESCAPE_ANSWER: Duration = Duration::from_millis(100);
/// Settling: a program that has the terminal in non-canonical mode (it reads
/// keys itself), or open non-blocking, and sleeps on a clock (`nanosleep`) between polls of the
/// keyboard that never block (a game loop, `watch`'s redraw) waits for its
/// user once its output has been quiet this long.
pub const SETTLE_SLEEP_QUIET: Duration = Duration::from_millis(200);
/// Settling a relay: a program that waits on the terminal and on a
/// connection, pipe or pty master from outside its process group (ssh,
/// `docker exec -it`, `script`, a nested tmux) may get the answer through
/// the other end at any time, so the kernel cannot tell that it has
/// answered: it is settled once its output has been quiet this long (or
/// the wait's own quiet window, if longer). Measured over ssh to a loopback
/// sshd (a shared 2-core machine): the echo comes back within 6 ms, the
/// gaps inside one answer are the remote command's own pauses (under 11 ms
/// for `ls`, `cat`, a shell loop; 170-260 ms for a `python3 -c` that starts
/// up before it prints). A slow link adds jitter and, for a lost packet, a
/// retransmission (200 ms at least on Linux) inside an answer; its round
/// trip itself delays the echo, which the window counts from (see
/// [`SETTLE_RELAY_ECHO`]). A second covers those with a margin and
/// keeps an ssh step near a second; a remote command that is silent for
/// longer needs `wait --match` (or a longer `--timeout`).
pub const SETTLE_RELAY_QUIET: Duration = Duration::from_millis(1_000);
/// Settling a relay: until output shows that the input arrived (the
/// remote side's echo, a round trip away), the quiet window above counts
/// from the input, and the wait lasts at least this long: a link slower
/// than the window still gets its echo in.
pub const SETTLE_RELAY_ECHO: Duration = Duration::from_millis(2_000);
/// Settling: the first look at the kernel comes this long after the last
/// output or input; the debounce above then confirms it.
pub const SETTLE_FIRST_LOOK: Duration = Duration::from_micros(500);
/// Settling: how long a half-received escape sequence, an open
/// synchronized-output frame or an unwritten terminal reply may hold it back.
pub const SETTLE_FRAME_GRACE: Duration = Duration::from_millis(250);
/// Settling: input counts as arrived once the program echoed or answered it,
/// was seen working since, or this long passed (a key that changes nothing).
pub const SETTLE_INPUT_GRACE: Duration = Duration::from_millis(50);
/// The default cap on `start` and `step`: a program still busy after this
/// returns "still running" with its output so far, so that a caller stays in
/// control of a long job (re-poll with `step`, or `wait` for the exit).
pub const STEP_MAX_WAIT: Duration = Duration::from_secs(10);
/// After the child exits, how long to wait for a background process still
/// holding the terminal to finish writing before calling the output complete.
pub const EXIT_DRAIN: Duration = Duration::from_millis(100);
/// `ptybroker mcp`: MCP clients give up on a request after a timeout of
/// their own (60 s by default in the official SDKs), so no tool call may
/// block longer than this; `terminal_wait` and `terminal_run` cap their
/// `timeout_ms` here. The longest any call can take is this plus
/// [`MCP_KILL_SLACK`].
pub const MCP_MAX_WAIT: Duration = Duration::from_secs(50);
/// Upper bound of the clean-up after a wait: killing and reaping a timed-out
/// command, or a graceful close's SIGTERM, SIGHUP, SIGKILL (at most
/// [`STOP_TERM_GRACE`] plus [`STOP_GRACE`]).
pub const MCP_KILL_SLACK: Duration = Duration::from_secs(4);
/// Default `timeout_ms` of `terminal_wait` and `terminal_run`.
pub const MCP_DEFAULT_WAIT: Duration = Duration::from_secs(30);
/// How long `terminal_start` waits for the program to settle before it
/// returns the first screen.
pub const MCP_START_SETTLE: Duration = Duration::from_secs(10);
/// How long after the last input an interrupt's Ctrl+C waits at most for
/// that input to be taken in: read by the program, or a shell's job handed
/// the terminal (see `ops::interrupt`).
pub const INTERRUPT_LAND: Duration = Duration::from_millis(500);
/// How often [`INTERRUPT_LAND`]'s wait looks.
pub const LAND_POLL: Duration = Duration::from_millis(5);
/// Between Ctrl+C and killing the shell's surviving children in
/// `terminal_interrupt`.
pub const MCP_INTERRUPT_GRACE: Duration = Duration::from_millis(1_500);
/// Default and largest `max_chars` of the MCP tools that return text.
pub const MCP_DEFAULT_CHARS: usize = 20_000;
pub const MCP_MAX_CHARS: usize = 1 << 20;
/// Most times `terminal_send` may repeat its input.
pub const MCP_MAX_REPEAT: u64 = 100;
/// MCP terminal size when the caller does not say (seed 004).
pub const MCP_DEFAULT_COLS: u16 = 120;
pub const MCP_DEFAULT_ROWS: u16 = 30;
/// Tool calls one `ptybroker mcp` runs at once; more get an error.
pub const MCP_MAX_INFLIGHT: usize = 64;
/// The CLI: how long connecting to the daemon (or starting one, until it
/// says it is ready) may take before the call fails.
pub const CLIENT_CONNECT_WAIT: Duration = Duration::from_secs(10);
/// The CLI: how long the daemon may take to answer beyond the longest the
/// call may legitimately take (its own wait: `wait --max-wait`, `step
/// --max-wait`, and for a call that acts on a program
/// [`CLIENT_ACT_SLACK`]); past it the call fails: the daemon is stopped
/// or hung. A margin for a loaded machine, never met by a healthy daemon.
pub const CLIENT_ANSWER_MARGIN: Duration = Duration::from_secs(10);
/// The CLI: what a call that acts on a program (anything but reading a
/// screen, a status, a list or output) may spend on bounds of its own
/// before it answers: a write to a program that does not read its input
/// ([`WRITE_TIMEOUT`], twice when another write is ahead of it), a stop's
/// [`STOP_GRACE`] and reap, a recording's [`RECORD_FINISH_WAIT`].
pub const CLIENT_ACT_SLACK: Duration = WRITE_TIMEOUT.saturating_mul(2);
/// How often the daemon checks that its runtime directory still holds its
/// socket, and puts them back when they were deleted under it.
pub const DAEMON_SOCKET_CHECK: Duration = Duration::from_secs(1);
/// A daemon exits this long after its last session and client are gone
/// (kept warm for the next start), and waits at least this long for its
/// first client; `ptybroker daemon --idle-exit SECS` sets another time.
pub const DAEMON_IDLE_EXIT: Duration = Duration::from_secs(30);

/// The size of one cell in pixels, as ptybroker's terminals report it in
/// their window size (TIOCGWINSZ's pixel fields) and as mouse reports in
/// pixels (SGR-Pixels, mode 1016) count: a nominal 10 by 20, so that a
/// program maps a pixel back to its cell by dividing. The emulator's
/// answers to `CSI 14 t` and `CSI 16 t` say the same (it is defined there).
pub const CELL_PIXELS: (u16, u16) = crate::vt::CELL_PIXELS;

/// Remote hosts (`--host`): how long ssh may take to reach a host
/// (OpenSSH's ConnectTimeout), and the keep-alive that notices a lost
/// connection (ServerAliveInterval times ServerAliveCountMax).
pub const SSH_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
pub const SSH_ALIVE_INTERVAL: Duration = Duration::from_secs(5);
pub const SSH_ALIVE_COUNT: u32 = 2;
/// The most one step of setting up a remote host may take (starting the
/// ssh master, asking the proxy, forwarding the socket) before the call
/// fails with what ssh said.
pub const SSH_SETUP_WAIT: Duration = Duration::from_secs(15);
/// The most `install --host` may take to copy the binary and run it
/// there once.
pub const SSH_COPY_WAIT: Duration = Duration::from_secs(300);
/// How long an idle ssh master stays for the next call (ControlPersist);
/// `PTYBROKER_SSH_PERSIST` sets another number of seconds.
pub const SSH_PERSIST: Duration = Duration::from_secs(600);
/// A `--via` command whose stream ended without an answer is given this
/// long to finish saying why on its standard error.
pub const VIA_WORDS_WAIT: Duration = Duration::from_secs(1);
/// `attach`: the shortest time between two frames sent to a viewer (a
/// burst of output is drawn as it stands then, not byte by byte), and how
/// long a viewer may leave its frames unread before it is dropped.
pub const VIEWER_FRAME_GAP: Duration = Duration::from_millis(20);
pub const VIEWER_STALL: Duration = Duration::from_secs(5);

/// Check a terminal size against [`COLS`] and [`ROWS`].
pub fn check_size(cols: u64, rows: u64) -> Result<(u16, u16), String> {
    let ok = |v: u64, (lo, hi): (u16, u16)| v >= u64::from(lo) && v <= u64::from(hi);
    if !ok(cols, COLS) {
        return Err(format!("cols must be {}..{}, got {cols}", COLS.0, COLS.1));
    }
    if !ok(rows, ROWS) {
        return Err(format!("rows must be {}..{}, got {rows}", ROWS.0, ROWS.1));
    }
    Ok((cols as u16, rows as u16))
}
