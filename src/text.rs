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
    fn tail_keeps_last_lines() {
        assert_eq!(tail_lines("a\nb\nc\n", 2), "b\nc\n");
        assert_eq!(tail_lines("a\nb", 5), "a\nb");
    }
}
