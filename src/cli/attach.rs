//! `ptybroker attach`: watch a session live from a real terminal, and with
//! `--write` type into it; the viewer's side of [`crate::attach`]. It
//! draws the frames the daemon sends (clipped to this terminal, never
//! re-wrapped), keeps a one-line banner, and leaves on the detach key
//! pressed twice, on the program's exit or when the daemon drops it. The
//! session is never touched by leaving: only `--write` and `--resize` let
//! this terminal change it at all.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::json::json;
use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::termios::{self, OptionalActions, Termios};
use serde_json::Value;

use super::output::err_line;
use super::{usage, value, Common, Failure, Opt};
use crate::sync::lock;
use crate::{limits, rpc, status};

/// The default detach key, Ctrl+\ (pressed twice).
const DETACH_DEFAULT: u8 = 0x1c;
/// How long the banner covers the last row when there is no spare row.
const BANNER_SHOWN: Duration = Duration::from_secs(3);

pub fn attach(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut c = Common::default();
    let (mut write, mut resize) = (false, false);
    let mut detach = DETACH_DEFAULT;
    let mut detach_name = "Ctrl+\\".to_string();
    while let Some(arg) = Opt::next(p)? {
        if c.take(&arg, p)? {
            continue;
        }
        match arg.flag() {
            "--write" => write = true,
            "--resize" => resize = true,
            "--detach-key" => {
                let k = value(p)?;
                let bytes = crate::keys::encode_key(&k, &Default::default())
                    .map_err(|e| usage(format!("--detach-key: {e}")))?;
                match bytes.as_slice() {
                    [b] if *b < 0x20 || *b == 0x7f => detach = *b,
                    _ => {
                        return Err(usage(format!(
                            "--detach-key {k:?}: pick a control key such as Ctrl+] (it is pressed twice)"
                        )))
                    }
                }
                detach_name = k;
            }
            _ => return Err(arg.unexpected()),
        }
    }
    let stdin = std::io::stdin();
    if !termios::isatty(stdin.as_fd()) || !termios::isatty(std::io::stdout().as_fd()) {
        return Err(usage(
            "attach shows a session on a terminal: run it from one (to read a screen from a script, use `ptybroker read`)",
        ));
    }
    let client = c.client()?;
    let stream = client.connect()?;
    let name = c.name().to_string();
    let req = json!({"jsonrpc": "2.0", "id": 1, "method": rpc::ATTACH,
        "params": {"session": name, "write": write, "resize": resize}});
    let answer = first_answer(&stream, &req)?;
    let size = (
        answer["size"]["cols"].as_u64().unwrap_or(80) as u16,
        answer["size"]["rows"].as_u64().unwrap_or(24) as u16,
    );
    let mode = if write { "typing" } else { "read-only" };
    let place = match client.target().name() {
        Some(h) => format!(" on {h}"),
        None => String::new(),
    };
    let banner = format!("ptybroker: {name:?}{place} {mode} | {detach_name} twice detaches");
    let raw = Raw::enter().map_err(|e| Failure {
        message: format!("cannot set the terminal up: {e}"),
        exit: 1,
    })?;
    let view = Arc::new(Mutex::new(View::new(size, banner)));
    let ended = Arc::new(Mutex::new(None::<String>));
    let drawer = {
        let (view, ended) = (Arc::clone(&view), Arc::clone(&ended));
        let from = stream.try_clone().map_err(|e| Failure {
            message: e.to_string(),
            exit: 1,
        })?;
        crate::sync::spawn(move || draw_frames(from, &view, &ended))
    };
    let why = keys(&stream, &view, &ended, detach, write, resize);
    if !why.is_empty() {
        // Ours, unless the daemon had ended the view first.
        lock(&ended).get_or_insert(why);
    }
    let _ = (&stream).write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"pty/detach\"}\n");
    let _ = stream.shutdown(std::net::Shutdown::Both);
    let _ = drawer.join();
    drop(raw);
    let why = lock(&ended).take().unwrap_or_default();
    err_line(&status::error_line(&why));
    Ok(())
}

/// Send the attach request and read its answer (an error ends here).
fn first_answer(stream: &UnixStream, req: &Value) -> Result<Value, Failure> {
    let fail = |m: String| Failure {
        message: m,
        exit: 1,
    };
    let mut w = stream;
    w.write_all(format!("{req}\n").as_bytes())
        .map_err(|e| fail(format!("lost the daemon: {e}")))?;
    stream
        .set_read_timeout(Some(limits::CLIENT_CONNECT_WAIT))
        .map_err(|e| fail(e.to_string()))?;
    // Exactly one line: the frames that follow at once are the drawer's.
    let line = read_line_unbuffered(stream)
        .map_err(|e| fail(format!("no answer from the daemon: {e}")))?;
    stream
        .set_read_timeout(None)
        .map_err(|e| fail(e.to_string()))?;
    let v: Value = serde_json::from_slice(line.as_bytes())
        .map_err(|e| fail(format!("unreadable answer: {e}")))?;
    if let Some(e) = v.get("error") {
        return Err(fail(
            e["message"].as_str().unwrap_or("attach failed").to_string(),
        ));
    }
    Ok(v["result"].clone())
}

/// One line, byte by byte, so that nothing after it is taken from the
/// socket (the drawer thread reads the frames that follow).
fn read_line_unbuffered(mut r: &UnixStream) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    let mut b = [0u8; 1];
    loop {
        match r.read(&mut b)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            _ if b[0] == b'\n' => break,
            _ => bytes.push(b[0]),
        }
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The terminal in raw mode, the alternate screen, no autowrap (a row
/// wider than this terminal is clipped, not wrapped); all put back on drop.
struct Raw {
    saved: Termios,
}

impl Raw {
    fn enter() -> std::io::Result<Raw> {
        let fd = std::io::stdin();
        let saved = termios::tcgetattr(fd.as_fd())?;
        let mut raw = saved.clone();
        raw.make_raw();
        termios::tcsetattr(fd.as_fd(), OptionalActions::Flush, &raw)?;
        let mut o = std::io::stdout();
        o.write_all(b"\x1b[?1049h\x1b[?7l\x1b[H\x1b[2J")?;
        o.flush()?;
        Ok(Raw { saved })
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let mut o = std::io::stdout();
        let _ = o.write_all(b"\x1b[0m\x1b[?7h\x1b[?25h\x1b[?1049l");
        let _ = o.flush();
        let _ = termios::tcsetattr(
            std::io::stdin().as_fd(),
            OptionalActions::Flush,
            &self.saved,
        );
    }
}

/// What this terminal shows: the session's rows as last sent, its cursor,
/// and the banner.
struct View {
    session: (u16, u16),
    rows: Vec<String>,
    cursor: (u16, u16, bool),
    here: (u16, u16),
    banner: String,
    banner_until: Instant,
}

impl View {
    fn new(session: (u16, u16), banner: String) -> View {
        View {
            session,
            rows: vec![String::new(); usize::from(session.1)],
            cursor: (0, 0, true),
            here: terminal_size(),
            banner,
            banner_until: Instant::now() + BANNER_SHOWN,
        }
    }

    /// Rows of the session this terminal shows: all of them when there is
    /// a spare row for the banner, else one fewer while the banner shows.
    fn shown_rows(&self, now: Instant) -> usize {
        let here = usize::from(self.here.1);
        let theirs = usize::from(self.session.1);
        if here > theirs {
            theirs
        } else if now < self.banner_until {
            here.saturating_sub(1)
        } else {
            here
        }
    }

    /// The banner, the part shown first when this terminal is smaller
    /// (the banner is clipped to its width too).
    fn banner_line(&self) -> String {
        let (sc, sr) = self.session;
        let (hc, hr) = self.here;
        if hc < sc || hr < sr {
            format!(
                "showing {}x{} of {sc}x{sr} | {}",
                hc.min(sc),
                hr.min(sr),
                self.banner
            )
        } else {
            self.banner.clone()
        }
    }

    /// Draw `which` rows (all when `None`), the banner and the cursor.
    fn draw(&self, which: Option<&[usize]>, out: &mut Vec<u8>) {
        let now = Instant::now();
        let shown = self.shown_rows(now);
        if which.is_none() {
            out.extend_from_slice(b"\x1b[0m\x1b[H\x1b[2J");
        }
        let mut put = |i: usize| {
            if i < shown {
                if let Some(r) = self.rows.get(i) {
                    // Erase first: with autowrap off, a row wider than
                    // this terminal ends on its last column, which an
                    // erase after it would take too.
                    out.extend_from_slice(format!("\x1b[{};1H\x1b[0m\x1b[K", i + 1).as_bytes());
                    out.extend_from_slice(clip(r, self.here.0).as_bytes());
                    out.extend_from_slice(b"\x1b[0m");
                }
            }
        };
        match which {
            Some(rows) => rows.iter().for_each(|i| put(*i)),
            None => (0..self.rows.len()).for_each(put),
        }
        if shown < usize::from(self.here.1) {
            let b = self.banner_line();
            let b: String = b.chars().take(usize::from(self.here.0)).collect();
            out.extend_from_slice(
                format!("\x1b[{};1H\x1b[0m\x1b[K\x1b[7m{b}\x1b[0m", shown + 1).as_bytes(),
            );
        }
        let (r, c, visible) = self.cursor;
        if usize::from(r) < shown && c < self.here.0 {
            out.extend_from_slice(format!("\x1b[{};{}H", r + 1, c + 1).as_bytes());
            out.extend_from_slice(if visible { b"\x1b[?25h" } else { b"\x1b[?25l" });
        } else {
            out.extend_from_slice(b"\x1b[?25l");
        }
    }
}

/// A row as the daemon renders it (text and SGR sequences) cut to `cols`
/// columns: a terminal without autowrap would otherwise print the rest of
/// a wider row over and over on its last column. A wide character that
/// does not fit whole is left out.
fn clip(row: &str, cols: u16) -> String {
    let mut out = String::with_capacity(row.len());
    let mut used = 0usize;
    let mut chars = row.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            out.push(c);
            if chars.peek() == Some(&'[') {
                // A CSI sequence, up to and with its final byte.
                for c in chars.by_ref() {
                    out.push(c);
                    if c != '[' && ('\x40'..='\x7e').contains(&c) {
                        break;
                    }
                }
            } else if let Some(c) = chars.next() {
                out.push(c);
            }
            continue;
        }
        let w = crate::vt::width(c);
        if used + w > usize::from(cols) {
            break;
        }
        used += w;
        out.push(c);
    }
    out
}

fn terminal_size() -> (u16, u16) {
    termios::tcgetwinsize(std::io::stdout().as_fd())
        .ok()
        .filter(|w| w.ws_col > 0 && w.ws_row > 0)
        .map_or((80, 24), |w| (w.ws_col, w.ws_row))
}

fn flush(out: &[u8]) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(out).and_then(|()| o.flush());
}

/// The daemon's frames, drawn as they come, until it ends the view.
fn draw_frames(from: UnixStream, view: &Mutex<View>, ended: &Mutex<Option<String>>) {
    let mut r = BufReader::with_capacity(64 * 1024, from);
    let mut line = Vec::new();
    let why = loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => {
                break "the daemon ended the view (a viewer that stops reading is dropped)"
                    .to_string()
            }
            Ok(_) => {}
        }
        let Ok(msg) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let p = &msg["params"];
        match msg["method"].as_str() {
            Some("pty/frame") => {
                let mut v = lock(view);
                let size = (
                    p["cols"].as_u64().unwrap_or(80) as u16,
                    p["rows"].as_u64().unwrap_or(24) as u16,
                );
                let full = p["full"].as_bool().unwrap_or(false) || size != v.session;
                if size != v.session {
                    v.session = size;
                    v.rows = vec![String::new(); usize::from(size.1)];
                }
                let mut changed = Vec::new();
                for l in p["lines"].as_array().into_iter().flatten() {
                    if let (Some(i), Some(text)) = (l[0].as_u64(), l[1].as_str()) {
                        if let Some(row) = v.rows.get_mut(i as usize) {
                            *row = text.to_string();
                            changed.push(i as usize);
                        }
                    }
                }
                let c = &p["cursor"];
                v.cursor = (
                    c["row"].as_u64().unwrap_or(0) as u16,
                    c["col"].as_u64().unwrap_or(0) as u16,
                    c["visible"].as_bool().unwrap_or(true),
                );
                let mut out = Vec::new();
                v.draw(if full { None } else { Some(&changed) }, &mut out);
                flush(&out);
            }
            Some("pty/exit") => {
                let code = p["exitCode"].as_i64();
                break match (code, p["signal"].as_str()) {
                    (_, Some(sig)) => format!("the program exited: signal {sig}; detached"),
                    (Some(c), _) => format!("the program exited with status {c}; detached"),
                    _ => "the program exited; detached".to_string(),
                };
            }
            _ => {}
        }
    };
    lock(ended).get_or_insert(why);
}

/// Keys from this terminal until the detach key comes twice or the view
/// ends; with `write` they go to the program. Also follows this
/// terminal's size (and with `resize` hands it to the session).
fn keys(
    stream: &UnixStream,
    view: &Mutex<View>,
    ended: &Mutex<Option<String>>,
    detach: u8,
    write: bool,
    resize: bool,
) -> String {
    let send = |msg: Value| {
        let mut w = stream;
        w.write_all(format!("{msg}\n").as_bytes()).is_ok()
    };
    if resize {
        let (c, r) = lock(view).here;
        send(json!({"jsonrpc": "2.0", "method": "pty/resize", "params": {"cols": c, "rows": r}}));
    }
    let stdin = std::io::stdin();
    let mut held = false;
    let mut buf = [0u8; 4096];
    let mut banner_up = true;
    loop {
        if lock(ended).is_some() {
            return String::new();
        }
        let now = Instant::now();
        {
            let mut v = lock(view);
            let here = terminal_size();
            let banner_gone = banner_up && now >= v.banner_until;
            if here != v.here || banner_gone {
                banner_up = !banner_gone && banner_up;
                if here != v.here {
                    // A new size may show less: say so again.
                    v.banner_until = now + BANNER_SHOWN;
                    banner_up = true;
                }
                v.here = here;
                let mut out = Vec::new();
                v.draw(None, &mut out);
                flush(&out);
                if resize && here != v.session {
                    send(
                        json!({"jsonrpc": "2.0", "method": "pty/resize", "params": {"cols": here.0, "rows": here.1}}),
                    );
                }
            }
        }
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        let wait = Timespec {
            tv_sec: 0,
            tv_nsec: 200_000_000,
        };
        match poll(&mut fds, Some(&wait)) {
            Ok(0) | Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return "lost this terminal; detached".into(),
            Ok(_) => {}
        }
        let n = match stdin.lock().read(&mut buf) {
            Ok(0) | Err(_) => return "this terminal closed; detached".into(),
            Ok(n) => n,
        };
        let mut typed = Vec::with_capacity(n);
        for &b in &buf[..n] {
            if b == detach {
                if held {
                    if write && !typed.is_empty() {
                        send(input(&typed));
                    }
                    return "detached; the session runs on".into();
                }
                held = true;
                continue;
            }
            if held {
                // One detach key alone is typed as itself.
                typed.push(detach);
                held = false;
            }
            typed.push(b);
        }
        if write && !typed.is_empty() && !send(input(&typed)) {
            return "lost the daemon; detached".into();
        }
    }
}

fn input(bytes: &[u8]) -> Value {
    json!({"jsonrpc": "2.0", "method": "pty/input", "params": {"data": String::from_utf8_lossy(bytes)}})
}

#[cfg(test)]
mod tests {
    use super::clip;

    #[test]
    fn clip_cuts_text_at_the_width_and_keeps_the_colours() {
        assert_eq!(clip("abcdef", 4), "abcd");
        assert_eq!(clip("ab", 4), "ab");
        assert_eq!(
            clip("\x1b[0;1;31mred\x1b[0m plain", 5),
            "\x1b[0;1;31mred\x1b[0m p"
        );
        // A wide character that would straddle the edge is left out.
        assert_eq!(clip("ab\u{4e2d}c", 3), "ab");
        assert_eq!(clip("ab\u{4e2d}c", 4), "ab\u{4e2d}");
        assert_eq!(clip("", 0), "");
    }
}
