//! Newline-delimited input for every protocol front end (the socket server,
//! the driver, the MCP server): one line at a time, never holding more than
//! the limit of it, so a client cannot make us buffer without bound.

use std::io::{self, BufRead, BufReader, Read, Write};

/// Read one `\n`-terminated line of at most `max` bytes into `buf`:
/// `Some(Ok(()))` with the line (without its `\n`) in `buf`, `Some(Err(len))`
/// for a longer line, which was consumed and discarded without being held
/// whole, `None` at end of input. A final line without a newline counts.
pub fn read_bounded_line(
    r: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<Option<Result<(), usize>>> {
    buf.clear();
    // One long line must not pin up to `max` bytes for the rest of a
    // long-lived connection.
    buf.shrink_to(64 * 1024);
    let mut seen = 0usize;
    let mut too_long = false;
    loop {
        let avail = match r.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok(match (seen, too_long) {
                (0, _) => None,
                (_, true) => Some(Err(seen)),
                (_, false) => Some(Ok(())),
            });
        }
        let (chunk, done) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (&avail[..i], Some(i + 1)),
            None => (avail, None),
        };
        seen += chunk.len();
        if too_long || buf.len() + chunk.len() > max {
            too_long = true;
            *buf = Vec::new();
        } else {
            buf.extend_from_slice(chunk);
        }
        let used = done.unwrap_or(avail.len());
        r.consume(used);
        if done.is_some() {
            return Ok(Some(if too_long { Err(seen) } else { Ok(()) }));
        }
    }
}

/// Copy `from` to `to` a line at a time, flushing each, until `from` ends
/// or `to` fails: the relays of `proxy` and `mcp --host`. Each whole line
/// of at most `max` bytes is shown to `keep` first, and is copied only if
/// it returns true (false: its owner has answered it itself). A longer line
/// passes through in pieces, unseen, rather than being held whole.
pub fn pump(from: impl Read, to: &mut impl Write, max: usize, mut keep: impl FnMut(&[u8]) -> bool) {
    let mut r = BufReader::with_capacity(64 * 1024, from);
    let mut line: Vec<u8> = Vec::new();
    let mut passing = false;
    loop {
        let (used, ended) = match r.fill_buf() {
            Ok([]) => {
                let _ = to.write_all(&line).and_then(|()| to.flush());
                return;
            }
            Ok(buf) => match buf.iter().position(|b| *b == b'\n') {
                Some(i) => {
                    line.extend_from_slice(&buf[..=i]);
                    (i + 1, true)
                }
                None => {
                    line.extend_from_slice(buf);
                    (buf.len(), false)
                }
            },
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        r.consume(used);
        if ended {
            let seen = passing;
            passing = false;
            if !seen && !keep(&line) {
                line.clear();
                continue;
            }
        } else if line.len() > max {
            passing = true;
        } else {
            continue;
        }
        if to.write_all(&line).and_then(|()| to.flush()).is_err() {
            return;
        }
        line.clear();
    }
}

/// Whether nobody reads our stdout any more (a pipe whose reader closed says
/// POLLERR, a socket or terminal POLLHUP): the stdio front ends' client has
/// gone, not just finished writing.
pub fn stdout_gone() -> bool {
    use rustix::event::PollFlags;
    let gone = crate::pty::ready_now(rustix::stdio::stdout(), PollFlags::empty());
    gone.intersects(PollFlags::ERR | PollFlags::HUP)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    #[test]
    fn long_lines_are_refused_without_being_held() {
        let data = format!("{}\n{{\"ok\":1}}\n\nlast", "x".repeat(100));
        let mut r = BufReader::with_capacity(8, data.as_bytes());
        let mut buf = Vec::new();
        assert_eq!(
            read_bounded_line(&mut r, &mut buf, 10).unwrap(),
            Some(Err(100))
        );
        assert!(buf.capacity() < 100);
        assert_eq!(
            read_bounded_line(&mut r, &mut buf, 10).unwrap(),
            Some(Ok(()))
        );
        assert_eq!(buf, b"{\"ok\":1}");
        assert_eq!(
            read_bounded_line(&mut r, &mut buf, 10).unwrap(),
            Some(Ok(()))
        );
        assert_eq!(buf, b"");
        assert_eq!(
            read_bounded_line(&mut r, &mut buf, 10).unwrap(),
            Some(Ok(()))
        );
        assert_eq!(buf, b"last");
        assert_eq!(read_bounded_line(&mut r, &mut buf, 10).unwrap(), None);
    }
}
