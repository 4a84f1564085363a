//! `/proc/PID/stat`, the one parser for the fields ptybroker reads from it
//! (for [`crate::settle::procfs`], the process table and the settle probe).
//!
//! The command name (`comm`, field 2) is whatever the program set, up to 15
//! bytes: spaces, parentheses, newlines and bytes that are not UTF-8 all
//! occur. It is the only field that can hold them, so it runs from the first
//! `(` to the last `)`, and the numeric fields are counted after that.

/// The fields of `/proc/PID/stat` that ptybroker uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stat {
    /// The command name, control characters shown as `?`.
    pub comm: String,
    /// The state letter of the main thread: `R`, `S`, `D`, `T`, `Z`, ...
    pub state: u8,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    pub threads: i64,
}

/// Parse the contents of a `stat` file; `None` when it is cut short or
/// malformed.
pub fn parse(buf: &[u8]) -> Option<Stat> {
    let open = buf.iter().position(|&b| b == b'(')?;
    let close = buf.iter().rposition(|&b| b == b')')?;
    let comm = String::from_utf8_lossy(buf.get(open + 1..close)?)
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    let rest = std::str::from_utf8(buf.get(close + 1..)?).ok()?;
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?.bytes().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    // num_threads is the 20th field; session was the 6th.
    let threads = fields.nth(13)?.parse().ok()?;
    Some(Stat {
        comm,
        state,
        ppid,
        pgrp,
        session,
        threads,
    })
}

/// Read and parse `/proc/PID/stat`; `None` if the process is gone or there
/// is no `/proc`.
pub fn read(pid: i32) -> Option<Stat> {
    parse(&std::fs::read(format!("/proc/{pid}/stat")).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hostile_command_name_does_not_shift_the_fields() {
        let line = b"42 (a) b) (c d) S 7 42 9 34816 42 4194560 1 0 0 0 0 0 0 0 20 0 3 0 1 2 3";
        let stat = parse(line).expect("parses");
        assert_eq!(stat.comm, "a) b) (c d");
        assert_eq!(
            (stat.state, stat.ppid, stat.pgrp, stat.session, stat.threads),
            (b'S', 7, 42, 9, 3)
        );
        let line = b"5 (\xff\n)) Z 1 5 5 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 1 2 3";
        let stat = parse(line).expect("parses a name that is not UTF-8");
        assert_eq!((stat.comm.as_str(), stat.state), ("\u{fffd}?)", b'Z'));
        assert!(parse(b"42 (truncated").is_none());
        assert!(parse(b"42 (short) S 1 2").is_none());
        assert!(parse(b"").is_none());
    }

    /// A real process that names itself with spaces, parentheses and a byte
    /// that is not UTF-8 is still found, with its parent.
    #[test]
    fn a_real_process_with_a_hostile_name() {
        use std::io::BufRead;
        use std::process::{Command, Stdio};
        let script = "import sys\nopen('/proc/self/comm', 'wb').write(b'\\xff(a) b) c')\nprint(flush=True)\nsys.stdin.read()";
        let Ok(mut child) = Command::new("python3")
            .args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
        else {
            panic!("python3 is needed for this test");
        };
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            let _ = std::io::BufReader::new(out).read_line(&mut line);
        }
        let stat = read(child.id() as i32);
        let _ = child.kill();
        let _ = child.wait();
        let stat = stat.expect("the child's stat parses");
        assert_eq!(stat.ppid, std::process::id() as i32);
        assert_eq!(stat.comm, "\u{fffd}(a) b) c");
    }
}
