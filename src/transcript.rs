//! The transcript: a bounded ring of everything a program wrote, addressed by
//! absolute byte offsets so that incremental reads never repeat and never skip
//! silently (a read from before the ring's start reports what was dropped).
//!
//! The bytes live in fixed-size blocks ([`crate::blocks`]): a session that
//! wrote 80 KiB holds about 80 KiB, not a doubled buffer and the copies it
//! was grown through.

use crate::blocks::Blocks;

pub struct Transcript {
    buf: Blocks<u8>,
    /// Absolute offset of `buf[0]`.
    start: u64,
    limit: usize,
}

/// A slice of the transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub data: Vec<u8>,
    /// Absolute offset of `data[0]`.
    pub start: u64,
    /// Offset to pass next time to continue without repeats.
    pub next: u64,
    /// Bytes between the requested offset and `start` that the ring no longer holds.
    pub dropped: u64,
}

impl Transcript {
    pub fn new(limit: usize) -> Transcript {
        Transcript {
            buf: Blocks::default(),
            start: 0,
            limit: limit.max(1),
        }
    }

    /// Absolute offset just past the last byte written.
    pub fn end(&self) -> u64 {
        self.start + self.buf.len() as u64
    }

    /// Bytes held now.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub fn push(&mut self, bytes: &[u8]) {
        let bytes = if bytes.len() > self.limit {
            let cut = bytes.len() - self.limit;
            self.start += self.buf.len() as u64 + cut as u64;
            self.buf.drop_front(self.buf.len());
            &bytes[cut..]
        } else {
            bytes
        };
        let over = (self.buf.len() + bytes.len()).saturating_sub(self.limit);
        if over > 0 {
            self.buf.drop_front(over);
            self.start += over as u64;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Up to `max` bytes from absolute offset `from` (clamped to what is held).
    pub fn read(&self, from: u64, max: usize) -> Chunk {
        let end = self.end();
        let from = from.min(end);
        let dropped = self.start.saturating_sub(from);
        let begin = from.max(self.start);
        let skip = (begin - self.start) as usize;
        let take = ((end - begin) as usize).min(max);
        let data = self.buf.to_vec(skip..skip + take);
        Chunk {
            data,
            start: begin,
            next: begin + take as u64,
            dropped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_incremental_and_report_drops() {
        let mut t = Transcript::new(8);
        t.push(b"hello");
        let c = t.read(0, 100);
        assert_eq!(
            (c.data.as_slice(), c.next, c.dropped),
            (&b"hello"[..], 5, 0)
        );
        t.push(b" world");
        let c = t.read(5, 100);
        assert_eq!(c.data, b" world");
        assert_eq!(c.dropped, 0);
        let c = t.read(0, 100);
        assert_eq!(c.start, 3);
        assert_eq!(c.dropped, 3);
        assert_eq!(c.data, b"lo world");
        assert_eq!(t.read(11, 10).data, b"");
    }

    #[test]
    fn a_write_larger_than_the_ring_keeps_its_tail() {
        let mut t = Transcript::new(4);
        t.push(b"ab");
        t.push(b"0123456789");
        let c = t.read(0, 100);
        assert_eq!(c.data, b"6789");
        assert_eq!(c.start, 8);
        assert_eq!(t.end(), 12);
    }

    #[test]
    fn max_limits_a_read_and_next_resumes() {
        let mut t = Transcript::new(100);
        t.push(b"abcdef");
        let c = t.read(1, 2);
        assert_eq!((c.data.as_slice(), c.next), (&b"bc"[..], 3));
        assert_eq!(t.read(c.next, 100).data, b"def");
    }
}
