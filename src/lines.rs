//! Newline-delimited input for every protocol front end (the socket server,
//! the driver, the MCP server): one line at a time, never holding more than
//! the limit of it, so a client cannot make us buffer without bound.

use std::io::{self, BufRead};

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
