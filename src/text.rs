//! Plain-text views of raw program output: ANSI stripping (pty-prompt's
//! default output), head+tail truncation, grep and tail.

/// Remove escape sequences (CSI, OSC, DCS/APC/PM/SOS strings, two-byte
/// escapes), carriage returns and other control characters except `\n` and
/// `\t`, leaving line-oriented text. Invalid UTF-8 becomes U+FFFD.
pub fn strip_ansi(bytes: &[u8]) -> String {
    #[derive(Clone, Copy, PartialEq)]
    enum S {
        Ground,
        Esc,
        Csi,
        /// OSC, DCS, APC, PM, SOS: until BEL or ST.
        Str,
        StrEsc,
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut st = S::Ground;
    for &b in bytes {
        st = match (st, b) {
            (S::Ground, 0x1b) => S::Esc,
            (S::Ground, b'\n' | b'\t') => {
                out.push(b);
                S::Ground
            }
            (S::Ground, 0x9b) => S::Csi,
            (S::Ground, b) if b < 0x20 || b == 0x7f => S::Ground,
            (S::Ground, b) => {
                out.push(b);
                S::Ground
            }
            (S::Esc, b'[') => S::Csi,
            (S::Esc, b']' | b'P' | b'_' | b'^' | b'X') => S::Str,
            // Intermediates (charset designation `ESC ( B` and the like).
            (S::Esc, 0x20..=0x2f) => S::Esc,
            (S::Esc, 0x1b) => S::Esc,
            (S::Esc, _) => S::Ground,
            (S::Csi, 0x40..=0x7e) => S::Ground,
            (S::Csi, 0x1b) => S::Esc,
            (S::Csi, _) => S::Csi,
            (S::Str, 0x07) => S::Ground,
            (S::Str, 0x1b) => S::StrEsc,
            (S::Str, _) => S::Str,
            (S::StrEsc, b'\\') => S::Ground,
            (S::StrEsc, 0x1b) => S::StrEsc,
            (S::StrEsc, _) => S::Str,
        };
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The length of the longest prefix of `bytes` that does not end inside a
/// UTF-8 character or an escape sequence, so that a reader which stops there
/// and resumes later sees each whole. A cut-off tail longer than 256 bytes is
/// not held back (it is garbage rather than a sequence in flight).
pub fn complete_prefix(bytes: &[u8]) -> usize {
    let mut end = bytes.len() - cut_char_len(bytes);
    // An unfinished escape sequence: an ESC near the end whose sequence has
    // no final byte yet.
    let window = end.saturating_sub(256);
    if let Some(esc) = bytes[window..end].iter().rposition(|&b| b == 0x1b) {
        let esc = window + esc;
        if !escape_complete(&bytes[esc..end]) {
            end = esc;
        }
    }
    end
}

/// The length of the UTF-8 character cut short at the end of `bytes` (its
/// lead byte and the continuation bytes that came so far), or 0 when `bytes`
/// ends on a character boundary or in bytes no later byte can turn into a
/// character. Decoding (with U+FFFD for what is invalid) the bytes before a
/// position where this is 0, then the bytes after it, gives the same text as
/// decoding them together: such a position is safe to stop a read at.
pub fn cut_char_len(bytes: &[u8]) -> usize {
    let n = bytes.len();
    for back in 1..=3.min(n) {
        if bytes[n - back] & 0xC0 == 0x80 {
            continue;
        }
        // The last byte that can start a character: is it the start of one
        // that the next bytes could still complete?
        return match std::str::from_utf8(&bytes[n - back..]) {
            Err(e) if e.valid_up_to() == 0 && e.error_len().is_none() => back,
            _ => 0,
        };
    }
    0
}

/// How many bytes of `bytes`, output read from a position where a reader
/// stopped before, to return for a read of at most `max` bytes, so that the
/// read ends on a character boundary (see [`cut_char_len`]): a character
/// that `max` would cut is left for the next read. When `max` is smaller
/// than the first character, that whole character is returned (at most 3
/// bytes over `max`), so a reader always gets on. `bytes` must hold
/// `max + 3` bytes when there are that many. A character still arriving at
/// the very end is held back while `more_coming`; once the program is gone,
/// the bytes are returned as they are. `max` 0 returns nothing.
pub fn char_bounded_len(bytes: &[u8], max: usize, more_coming: bool) -> usize {
    if max == 0 || bytes.is_empty() {
        return 0;
    }
    let n = bytes.len().min(max);
    let cut = cut_char_len(&bytes[..n]);
    let at_end = n == bytes.len();
    if cut == 0 || (at_end && !more_coming) {
        return n;
    }
    if n > cut {
        return n - cut;
    }
    // Nothing whole fits in `max`: the first character (or the one invalid
    // byte sequence U+FFFD stands for), if all of it is here.
    let head = &bytes[..bytes.len().min(4)];
    match std::str::from_utf8(head) {
        Ok(s) => s.chars().next().map_or(0, char::len_utf8),
        Err(e) if e.valid_up_to() > 0 => std::str::from_utf8(&head[..e.valid_up_to()])
            .ok()
            .and_then(|s| s.chars().next())
            .map_or(1, char::len_utf8),
        Err(e) => match e.error_len() {
            Some(len) => len,
            None if more_coming => 0,
            None => head.len(),
        },
    }
}

/// Does `seq` (starting with ESC) hold a whole escape sequence?
fn escape_complete(seq: &[u8]) -> bool {
    match seq.get(1) {
        None => false,
        Some(b'[') => seq[2..].iter().any(|b| (0x40..=0x7e).contains(b)),
        Some(b']' | b'P' | b'_' | b'^' | b'X') => {
            seq.contains(&0x07) || seq.windows(2).any(|w| w == b"\x1b\\")
        }
        Some(0x20..=0x2f) => seq[2..].iter().any(|b| (0x30..=0x7e).contains(b)),
        Some(_) => true,
    }
}

/// Keep the head and tail of `s` within `max` characters, with a marker that
/// says how much was left out. Returns the text and whether it was cut.
pub fn head_tail(s: &str, max: usize) -> (String, bool) {
    let n = s.chars().count();
    if n <= max {
        return (s.to_string(), false);
    }
    let marker_len = 40;
    let keep = max.saturating_sub(marker_len);
    let head = keep / 2;
    let tail = keep - head;
    let omitted = n - head - tail;
    let mut out: String = s.chars().take(head).collect();
    out.push_str(&format!("\n[... {omitted} characters omitted ...]\n"));
    out.extend(s.chars().skip(n - tail));
    (out, true)
}

/// The last `n` lines of `s`.
pub fn tail_lines(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    let from = lines.len().saturating_sub(n);
    let mut out = lines[from..].join("\n");
    if s.ends_with('\n') && !out.is_empty() {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_sequences_and_carriage_returns() {
        let raw = b"\x1b[1;32mok\x1b[0m\r\n\x1b]0;title\x07x\ty\x1b(B\x1bP1$r\x1b\\z\r\n";
        assert_eq!(strip_ansi(raw), "ok\nx\ty z\n".replace(' ', ""));
    }

    #[test]
    fn head_tail_marks_the_cut() {
        let s = "a".repeat(1000);
        let (t, cut) = head_tail(&s, 100);
        assert!(cut);
        assert!(t.contains("omitted"));
        assert!(t.chars().count() <= 100);
        assert_eq!(head_tail("short", 100), ("short".to_string(), false));
    }

    #[test]
    fn complete_prefix_holds_back_cut_sequences() {
        assert_eq!(complete_prefix(b"abc"), 3);
        assert_eq!(complete_prefix("a\u{e9}".as_bytes()), 3);
        assert_eq!(complete_prefix(&"a\u{e9}".as_bytes()[..2]), 1);
        assert_eq!(complete_prefix(&"a\u{20ac}".as_bytes()[..3]), 1);
        assert_eq!(complete_prefix(b"ok\x1b[1;3"), 2);
        assert_eq!(complete_prefix(b"ok\x1b[1;31m"), 9);
        assert_eq!(complete_prefix(b"ok\x1b]0;title"), 2);
        assert_eq!(complete_prefix(b"ok\x1b]0;title\x07"), 12);
        assert_eq!(complete_prefix(b"ok\x1b"), 2);
        assert_eq!(complete_prefix(b"ok\x1b(B"), 5);
    }

    #[test]
    fn cut_char_len_finds_only_characters_still_arriving() {
        let e = "\u{e9}".as_bytes();
        let euro = "\u{20ac}".as_bytes();
        assert_eq!(cut_char_len(b""), 0);
        assert_eq!(cut_char_len(b"ab"), 0);
        assert_eq!(cut_char_len(e), 0);
        assert_eq!(cut_char_len(&e[..1]), 1);
        assert_eq!(cut_char_len(&euro[..2]), 2);
        assert_eq!(cut_char_len(&[b'a', euro[0]]), 1);
        // Invalid whatever follows: nothing to wait for.
        assert_eq!(cut_char_len(b"a\x80"), 0);
        assert_eq!(cut_char_len(b"a\xff"), 0);
        assert_eq!(cut_char_len(b"\xe0\x80"), 0);
        assert_eq!(cut_char_len(b"\xc3\xa9\xa9"), 0);
    }

    /// Follow a reader through `bytes`, `max` at a time.
    fn read_all(bytes: &[u8], max: usize, more_coming: bool) -> Vec<String> {
        let mut at = 0;
        let mut parts = Vec::new();
        while at < bytes.len() {
            let window = &bytes[at..bytes.len().min(at.saturating_add(max).saturating_add(3))];
            let n = char_bounded_len(window, max, more_coming);
            if n == 0 {
                break;
            }
            parts.push(String::from_utf8_lossy(&bytes[at..at + n]).into_owned());
            at += n;
        }
        parts
    }

    #[test]
    fn char_bounded_reads_never_split_a_character() {
        let text = "h\u{e9}\u{20ac}\u{e9}llo\u{1f600}";
        for max in 1..=text.len() {
            let parts = read_all(text.as_bytes(), max, true);
            assert_eq!(parts.concat(), text, "max {max}: {parts:?}");
            assert!(parts.iter().all(|p| p.len() <= max.max(4)), "{parts:?}");
        }
        assert_eq!(
            read_all(text.as_bytes(), 1, true)[..3],
            ["h", "\u{e9}", "\u{20ac}"]
        );
        // Invalid bytes read as they decode together, one U+FFFD each.
        let junk = b"a\xc3b\x80\xe2\x82c\xff";
        let whole = String::from_utf8_lossy(junk);
        for max in 1..=junk.len() {
            assert_eq!(read_all(junk, max, true).concat(), whole, "max {max}");
        }
        // A character still arriving waits; once nothing more can come, the
        // tail is returned as it is.
        let cut = &"ok\u{20ac}".as_bytes()[..4];
        assert_eq!(char_bounded_len(cut, 100, true), 2);
        assert_eq!(char_bounded_len(&cut[2..], 1, true), 0);
        assert_eq!(char_bounded_len(cut, 100, false), 4);
        assert_eq!(char_bounded_len(&cut[2..], 1, false), 2);
        assert_eq!(char_bounded_len(b"abc", 0, true), 0);
    }

    #[test]
    fn tail_keeps_last_lines() {
        assert_eq!(tail_lines("a\nb\nc\n", 2), "b\nc\n");
        assert_eq!(tail_lines("a\nb", 5), "a\nb");
    }
}
