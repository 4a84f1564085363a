//! The transcript: a bounded ring of everything a program wrote, addressed by
//! absolute byte offsets so that incremental reads never repeat and never skip
//! silently (a read from before the ring's start reports what was dropped).
//!
//! Beside byte offsets it counts characters (MCP `terminal_read` offsets
//! are characters): every byte that is not a UTF-8 continuation byte
//! begins one, so valid UTF-8 counts exactly and any other byte is still
//! somewhere definite. The count of the bytes the ring dropped is kept, so
//! a character offset means the same before and after a drop.
//!
//! The bytes live in fixed-size blocks ([`crate::vt::blocks`]): a session that
//! wrote 80 KiB holds about 80 KiB, not a doubled buffer and the copies it
//! was grown through.

use crate::vt::blocks::Blocks;

pub struct Transcript {
    buf: Blocks<u8>,
    /// Absolute offset of `buf[0]`.
    start: u64,
    limit: usize,
    /// Characters begun in the bytes before `start` (dropped).
    chars_start: u64,
    /// Characters begun in all the bytes written.
    chars_end: u64,
}

/// Whether `b` begins a character (is not a UTF-8 continuation byte).
#[inline]
fn begins_char(b: u8) -> bool {
    // 0x80-0xBF are -128..-65 as i8.
    (b as i8) >= -0x40
}

/// Characters begun in `bytes` (see the module header). Every byte of
/// output is counted once on its way in and once when the ring drops it, so
/// this goes eight bytes at a time: a continuation byte is one whose top two
/// bits are 10. Each byte lane counts its own continuations (no popcount
/// instruction in the baseline x86-64 target), summed across lanes every
/// 255 words, before a lane can overflow.
pub fn chars_in(bytes: &[u8]) -> u64 {
    const TOP: u64 = 0x8080_8080_8080_8080;
    const EVEN: u64 = 0x00FF_00FF_00FF_00FF;
    let mut continuations = 0u64;
    let mut tail: &[u8] = &[];
    for part in bytes.chunks(255 * 8) {
        let mut words = part.chunks_exact(8);
        let mut lanes = 0u64;
        for w in &mut words {
            // Element by element: at opt-level "z" `copy_from_slice` is a
            // call per word.
            let x = u64::from_ne_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
            // Bit 7 of each byte set, and bit 6 (shifted up into bit 7) clear.
            lanes += (x & !(x << 1) & TOP) >> 7;
        }
        // Four 16-bit sums of two lanes each, then their sum in the top 16 bits.
        let pairs = (lanes & EVEN) + ((lanes >> 8) & EVEN);
        continuations += pairs.wrapping_mul(0x0001_0001_0001_0001) >> 48;
        tail = words.remainder();
    }
    let tail_chars = tail.iter().filter(|&&b| begins_char(b)).count() as u64;
    (bytes.len() - tail.len()) as u64 - continuations + tail_chars
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

/// A read addressed by characters ([`Transcript::read_chars`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CharRead {
    pub chunk: Chunk,
    /// Character offset of `chunk.start`.
    pub first: u64,
    /// Characters between the requested offset and `first` that the ring
    /// no longer holds.
    pub dropped: u64,
    /// Character offset of the end of the output.
    pub end: u64,
}

impl Transcript {
    pub fn new(limit: usize) -> Transcript {
        Transcript {
            buf: Blocks::default(),
            start: 0,
            limit: limit.max(1),
            chars_start: 0,
            chars_end: 0,
        }
    }

    /// Absolute offset just past the last byte written.
    pub fn end(&self) -> u64 {
        self.start + self.buf.len() as u64
    }

    /// Absolute offset of the oldest byte held.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Bytes held now.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub fn push(&mut self, bytes: &[u8]) {
        let before = self.chars_end;
        self.chars_end += chars_in(bytes);
        let bytes = if bytes.len() > self.limit {
            let cut = bytes.len() - self.limit;
            self.start += self.buf.len() as u64 + cut as u64;
            self.chars_start = before + chars_in(&bytes[..cut]);
            self.buf.drop_front(self.buf.len());
            &bytes[cut..]
        } else {
            bytes
        };
        let over = (self.buf.len() + bytes.len()).saturating_sub(self.limit);
        if over > 0 {
            self.chars_start += self.chars_held(0..over);
            self.buf.drop_front(over);
            self.start += over as u64;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Up to `max` bytes from character offset `from`: from the byte where
    /// that character begins (see [`Transcript::byte_offset`]).
    pub fn read_chars(&self, from: u64, max: usize) -> CharRead {
        let chunk = self.read(self.byte_offset(from), max);
        let held = (chunk.start - self.start) as usize;
        CharRead {
            first: self.chars_end - self.chars_held(held..self.buf.len()),
            dropped: self.chars_start.saturating_sub(from),
            end: self.chars_end,
            chunk,
        }
    }

    /// Characters begun in the held bytes `range` (indices into the ring).
    fn chars_held(&self, range: std::ops::Range<usize>) -> u64 {
        self.buf.slices(range).map(chars_in).sum()
    }

    /// Characters begun in all the output so far: the character offset of
    /// [`Transcript::end`].
    pub fn chars_end(&self) -> u64 {
        self.chars_end
    }

    /// Characters begun in the bytes the ring dropped: the character offset
    /// of the oldest byte held.
    pub fn chars_start(&self) -> u64 {
        self.chars_start
    }

    /// The character offset of absolute byte offset `at` (clamped to what
    /// is held): the characters begun before it.
    pub fn char_offset(&self, at: u64) -> u64 {
        let at = at.clamp(self.start, self.end());
        let from = (at - self.start) as usize;
        self.chars_end - self.chars_held(from..self.buf.len())
    }

    /// The absolute byte offset where character `c` begins; the ring's
    /// start for a character it no longer holds the beginning of, the end
    /// for one not written yet. Counted back from the end, where a reader
    /// that resumes usually is.
    pub fn byte_offset(&self, c: u64) -> u64 {
        if c < self.chars_start {
            return self.start;
        }
        if c >= self.chars_end {
            return self.end();
        }
        // Find the `back`-th character start counting back from the end.
        let mut back = self.chars_end - c;
        let mut block_end = self.buf.len();
        let slices: Vec<&[u8]> = self.buf.slices(0..self.buf.len()).collect();
        for s in slices.iter().rev() {
            let block_start = block_end - s.len();
            let n = chars_in(s);
            if n < back {
                back -= n;
                block_end = block_start;
                continue;
            }
            for (i, &b) in s.iter().enumerate().rev() {
                if begins_char(b) {
                    back -= 1;
                    if back == 0 {
                        return self.start + (block_start + i) as u64;
                    }
                }
            }
        }
        self.start
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
    fn chars_in_counts_every_byte_that_is_not_a_continuation() {
        // Every byte value, at every alignment and length around the
        // eight-byte words, against the byte-at-a-time definition.
        let all: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
        for start in 0..16 {
            for len in 0..40 {
                let end = (start + len * 7).min(all.len());
                let bytes = &all[start..end];
                let want = bytes.iter().filter(|&&b| begins_char(b)).count() as u64;
                assert_eq!(chars_in(bytes), want, "{bytes:02x?}");
            }
        }
        assert_eq!(chars_in("日本語 é a\u{308} 😀".as_bytes()), 10);
        assert_eq!(chars_in(&[0x80; 17]), 0);
        assert_eq!(chars_in(&[0xff; 17]), 17);
        // Past the 255 words a lane counts before they are summed.
        assert_eq!(chars_in(&[0x80; 5001]), 0);
        assert_eq!(chars_in(&[0xbf; 4095]), 0);
        let long: Vec<u8> = (0..20_011u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for cut in [0, 1, 2039, 2040, 2041, 2048, 4081, 20_011] {
            let bytes = &long[..cut];
            let want = bytes.iter().filter(|&&b| begins_char(b)).count() as u64;
            assert_eq!(chars_in(bytes), want, "{cut}");
        }
    }

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

    /// Character offsets (what MCP `terminal_read` counts) survive the
    /// ring dropping its oldest bytes, even in the middle of a character.
    #[test]
    fn character_offsets_map_to_bytes_and_survive_drops() {
        let mut t = Transcript::new(8);
        t.push("AB\u{e9}".as_bytes());
        t.push("\u{4e2d}\u{1f600}CD".as_bytes());
        // A B é 中 😀 C D: 7 characters in 13 bytes.
        assert_eq!(t.chars_end(), 7);
        // 5 bytes dropped: A B é and the first byte of 中.
        assert_eq!((t.read(0, 100).start, t.chars_start()), (5, 4));
        assert_eq!(t.char_offset(t.end()), 7);
        assert_eq!(t.char_offset(11), 5);
        assert_eq!(t.byte_offset(4), 7);
        assert_eq!(t.byte_offset(5), 11);
        assert_eq!(t.byte_offset(7), 13);
        assert_eq!(t.byte_offset(99), 13);
        // Character 3 (中) began before the ring's start: its remnant.
        assert_eq!(t.byte_offset(3), 5);
        assert_eq!(t.byte_offset(0), 5);
        // Every held offset round-trips through characters.
        for c in 4..=7 {
            assert_eq!(t.char_offset(t.byte_offset(c)), c);
        }
        // A write larger than the ring counts what it cut too.
        let e5x = "\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}x".as_bytes();
        t.push(e5x);
        assert_eq!((t.chars_end(), t.chars_start()), (13, 9));
        assert_eq!(t.read(0, 100).data, &e5x[3..]);
        assert_eq!(t.byte_offset(9), t.end() - 7);
        assert_eq!(t.byte_offset(8), t.end() - 8);
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
