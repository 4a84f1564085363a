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
    let n = bytes.len();
    // An unfinished UTF-8 character: a lead byte within the last 3 bytes
    // whose sequence runs past the end.
    let mut end = n;
    for back in 1..=3.min(n) {
        let b = bytes[n - back];
        if b & 0xC0 == 0x80 {
            continue;
        }
        let need = match b {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        if need > back {
            end = n - back;
        }
        break;
    }
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
    fn tail_keeps_last_lines() {
        assert_eq!(tail_lines("a\nb\nc\n", 2), "b\nc\n");
        assert_eq!(tail_lines("a\nb", 5), "a\nb");
    }
}
