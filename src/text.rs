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

/// Output as a reader of the terminal sees it, line by line: what
/// [`line_view`] returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineView {
    /// The lines, with carriage returns, backspaces, tabs, erases and moves
    /// along a line applied (a progress bar ends as its last state), and
    /// everything drawn on the alternate screen left out once the program
    /// has left it (vim's screens after `:q`). Tabs that nothing overwrote
    /// stay tabs.
    pub text: String,
    /// The output also moved the cursor up or across lines, cleared the
    /// screen or scrolled it (top, `less -X`, `clear`) outside the
    /// alternate screen: lines cannot say what it drew; the rendered screen
    /// can.
    pub repaints: bool,
}

/// A cell of [`line_view`]'s current line.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cell {
    Char(char),
    /// A tab, and the columns it spans after its own.
    Tab,
    TabSpan,
    /// The second column of a wide character.
    WideTail,
}

/// The current line of [`line_view`]: cells by column, combining marks by
/// the column of the character they follow, the cursor.
#[derive(Default)]
struct Line {
    cells: Vec<Cell>,
    marks: Vec<(usize, char)>,
    col: usize,
}

/// How far right a move (not text) may take the cursor: the widest terminal.
/// Text makes a line as long as it is; a move of 65535 columns must not
/// make a line of 65535 cells (output is hostile input).
const REACH: usize = crate::limits::COLS.1 as usize;

impl Line {
    /// Move the cursor to `col`, at most as far right as the line's end or
    /// [`REACH`].
    fn go(&mut self, col: usize) {
        self.col = col.min(REACH.max(self.cells.len()));
    }

    /// Make column `col` writable: pad to it, and turn a tab or wide
    /// character it cuts into blanks.
    fn open(&mut self, col: usize) {
        if self.cells.len() <= col {
            self.cells.resize(col + 1, Cell::Char(' '));
        }
        let (mut start, mut end) = (col, col + 1);
        match self.cells[col] {
            Cell::Tab | Cell::TabSpan => {
                while start > 0 && self.cells[start] == Cell::TabSpan {
                    start -= 1;
                }
                while self.cells.get(end) == Some(&Cell::TabSpan) {
                    end += 1;
                }
            }
            Cell::WideTail => start = col.saturating_sub(1),
            Cell::Char(c) if unicode_width::UnicodeWidthChar::width(c) == Some(2) => {
                end = (col + 2).min(self.cells.len())
            }
            Cell::Char(_) => return,
        }
        for c in &mut self.cells[start..end] {
            *c = Cell::Char(' ');
        }
        self.marks.retain(|&(at, _)| at < start || at >= end);
    }

    fn put(&mut self, ch: char) {
        use unicode_width::UnicodeWidthChar;
        match ch.width() {
            Some(0) => {
                if self.col > 0 {
                    self.marks.push((self.col - 1, ch));
                }
            }
            w => {
                let col = self.col;
                self.open(col);
                self.marks.retain(|&(at, _)| at != col);
                self.cells[col] = Cell::Char(ch);
                if w == Some(2) {
                    self.open(col + 1);
                    self.cells[col + 1] = Cell::WideTail;
                }
                self.col += w.unwrap_or(1);
            }
        }
    }

    fn tab(&mut self) {
        let next = ((self.col / 8 + 1) * 8).min(REACH.max(self.cells.len()));
        if next <= self.col {
            return;
        }
        self.open(self.col);
        self.cells[self.col] = Cell::Tab;
        for c in self.col + 1..next {
            self.open(c);
            self.cells[c] = Cell::TabSpan;
        }
        self.col = next;
    }

    /// Erase from `from` to the end (EL 0).
    fn truncate(&mut self, from: usize) {
        if from < self.cells.len() {
            self.open(from);
            self.cells.truncate(from);
            self.marks.retain(|&(at, _)| at < from);
        }
    }

    /// Blank `from..to` (EL 1, ECH).
    fn blank(&mut self, from: usize, to: usize) {
        for c in from..to.min(self.cells.len()) {
            self.open(c);
            self.cells[c] = Cell::Char(' ');
            self.marks.retain(|&(at, _)| at != c);
        }
    }

    /// DCH: delete `n` cells at the cursor, the rest moving left.
    fn delete(&mut self, n: usize) {
        let col = self.col;
        if col < self.cells.len() {
            self.open(col);
            let end = (col + n).min(self.cells.len());
            if end < self.cells.len() {
                self.open(end);
            }
            self.cells.drain(col..end);
            self.marks.retain(|&(at, _)| at < col || at >= end);
            for m in &mut self.marks {
                if m.0 >= end {
                    m.0 -= end - col;
                }
            }
        }
    }

    /// ICH: insert `n` blanks at the cursor, the rest moving right.
    /// What moves past [`REACH`] (or the line's end, if longer) is lost.
    fn insert(&mut self, n: usize) {
        let col = self.col;
        let len = self.cells.len();
        if col < len {
            let keep = len.max(REACH);
            let n = n.min(keep - col);
            self.open(col);
            self.cells
                .splice(col..col, std::iter::repeat(Cell::Char(' ')).take(n));
            self.cells.truncate(keep);
            for m in &mut self.marks {
                if m.0 >= col {
                    m.0 += n;
                }
            }
            self.marks.retain(|&(at, _)| at < keep);
        }
    }

    fn finish(&mut self, out: &mut String) {
        self.marks.sort_by_key(|&(at, _)| at);
        let mut marks = self.marks.iter().peekable();
        for (at, cell) in self.cells.iter().enumerate() {
            match cell {
                Cell::Char(c) => out.push(*c),
                Cell::Tab => out.push('\t'),
                Cell::TabSpan | Cell::WideTail => {}
            }
            while let Some(&(_, m)) = marks.next_if(|&&(m_at, _)| m_at == at) {
                out.push(m);
            }
        }
        self.cells.clear();
        self.marks.clear();
    }
}

/// The output `bytes` as lines a reader of the terminal would see (see
/// [`LineView`]). The bytes are taken to start at the beginning of a line
/// (the column of an earlier prompt is not known) and, when the first
/// switch of screens in them leaves the alternate screen, on it.
pub fn line_view(bytes: &[u8]) -> LineView {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    let mut line = Line::default();
    let mut repaints = false;
    let mut alt = starts_on_alternate_screen(text.as_bytes());
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch == '\x1b' || ch == '\u{9b}' {
            let seq = escape(ch, &mut chars);
            if let Some(on) = seq.alternate_screen() {
                alt = on;
                continue;
            }
            if alt {
                continue;
            }
            repaints |= seq.apply(&mut line);
            continue;
        }
        if alt {
            continue;
        }
        match ch {
            '\n' => {
                let col = line.col;
                line.finish(&mut out);
                out.push('\n');
                line.col = col;
            }
            '\r' => line.col = 0,
            '\u{8}' => line.col = line.col.saturating_sub(1),
            '\t' => line.tab(),
            c if c.is_control() => {}
            c => line.put(c),
        }
    }
    line.finish(&mut out);
    LineView {
        text: out,
        repaints,
    }
}

/// An escape sequence as far as [`line_view`] cares.
struct Escape {
    /// `ESC` then this byte (`[` for CSI, `]` for OSC...), or 0.
    kind: char,
    private: bool,
    params: Vec<u16>,
    /// The final character.
    last: char,
}

/// Read the rest of an escape sequence that began with `first` (ESC or the
/// 8-bit CSI) from `chars`.
fn escape(first: char, chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Escape {
    let kind = if first == '\u{9b}' {
        '['
    } else {
        chars.next().unwrap_or('\0')
    };
    let mut e = Escape {
        kind,
        private: false,
        params: Vec::new(),
        last: kind,
    };
    match kind {
        '[' => {
            let mut cur: Option<u16> = None;
            for c in chars.by_ref() {
                match c {
                    '0'..='9' => {
                        let d = c as u16 - u16::from(b'0');
                        cur = Some(cur.unwrap_or(0).saturating_mul(10).saturating_add(d));
                    }
                    ';' | ':' => e.params.push(cur.take().unwrap_or(0)),
                    '?' | '>' | '<' | '=' => e.private = true,
                    '\u{40}'..='\u{7e}' => {
                        e.last = c;
                        break;
                    }
                    _ => {}
                }
            }
            if let Some(v) = cur {
                e.params.push(v);
            }
        }
        ']' | 'P' | '_' | '^' | 'X' => {
            // A string, until BEL or ST.
            while let Some(c) = chars.next() {
                if c == '\u{7}' || (c == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                    break;
                }
            }
        }
        // Intermediates then a final (charset designations).
        '\u{20}'..='\u{2f}' => {
            for c in chars.by_ref() {
                if !('\u{20}'..='\u{2f}').contains(&c) {
                    e.last = c;
                    break;
                }
            }
        }
        _ => {}
    }
    e
}

impl Escape {
    /// `Some(on)` for a switch to (or from) the alternate screen.
    fn alternate_screen(&self) -> Option<bool> {
        let on = match self.last {
            'h' => true,
            'l' => false,
            _ => return None,
        };
        let alt = self.kind == '['
            && self.private
            && self.params.iter().any(|p| matches!(p, 47 | 1047 | 1049));
        alt.then_some(on)
    }

    /// Apply to `line`; true when it moves across lines or repaints.
    fn apply(&self, line: &mut Line) -> bool {
        let n = |default: u16| {
            let p = self.params.first().copied().unwrap_or(0);
            usize::from(if p == 0 { default } else { p })
        };
        match (self.kind, self.private, self.last) {
            ('[', false, 'K') => match n(0) {
                0 => line.truncate(line.col),
                1 => line.blank(0, line.col + 1),
                _ => line.truncate(0),
            },
            ('[', false, 'J') if n(0) == 0 => line.truncate(line.col),
            ('[', false, 'J') => return true,
            ('[', false, 'G' | '`') => line.go(n(1) - 1),
            ('[', false, 'C' | 'a') => line.go(line.col + n(1)),
            ('[', false, 'D') => line.go(line.col.saturating_sub(n(1))),
            ('[', false, 'X') => line.blank(line.col, line.col + n(1)),
            ('[', false, 'P') => line.delete(n(1)),
            ('[', false, '@') => line.insert(n(1)),
            ('[', false, 'I') => {
                for _ in 0..n(1).min(REACH / 8 + 1) {
                    line.tab();
                }
            }
            ('[', false, 'Z') => line.col = (line.col.saturating_sub(1) / 8) * 8,
            // Up, down, to a row, scroll, lines in and out, the scroll
            // region, saved cursors: across lines.
            (
                '[',
                false,
                'A' | 'B' | 'E' | 'F' | 'H' | 'f' | 'd' | 'e' | 'S' | 'T' | 'L' | 'M' | 'r' | 's'
                | 'u',
            ) => return true,
            // RI, IND, NEL, DECSC/DECRC, RIS, DECALN.
            ('M' | 'D' | 'E' | '7' | '8' | 'c', _, _) if self.kind != '#' => return true,
            ('#', _, '8') => return true,
            _ => {}
        }
        false
    }
}

/// Does the first switch of screens in `bytes` leave the alternate screen
/// (so that they begin on it)?
fn starts_on_alternate_screen(bytes: &[u8]) -> bool {
    let mut rest = bytes;
    while let Some(at) = rest.windows(3).position(|w| w == b"\x1b[?") {
        let seq = &rest[at + 3..];
        let end = seq.iter().position(|b| !(b.is_ascii_digit() || *b == b';'));
        if let Some(end) = end {
            let alt = seq[..end]
                .split(|&b| b == b';')
                .any(|p| matches!(p, b"47" | b"1047" | b"1049"));
            if alt && matches!(seq[end], b'h' | b'l') {
                return seq[end] == b'l';
            }
        }
        rest = &rest[at + 3..];
    }
    false
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
    let marker = |omitted: usize| format!("\n[... {omitted} characters omitted ...]\n");
    // The marker's own length depends on the count it shows: sized for the
    // most that can be omitted, it never makes the result exceed `max`.
    let marker_len = marker(n).chars().count();
    if max <= marker_len {
        // No room for a marker: the last `max` characters.
        return (s.chars().skip(n - max).collect(), true);
    }
    let keep = max - marker_len;
    let head = keep / 2;
    let tail = keep - head;
    let mut out: String = s.chars().take(head).collect();
    out.push_str(&marker(n - head - tail));
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
    fn line_view_applies_what_a_line_shows() {
        let v = |b: &[u8]| line_view(b).text;
        // Plain lines, tabs kept, colours gone.
        assert_eq!(v(b"a\tb\r\n\x1b[1;31mred\x1b[0m\r\n$ "), "a\tb\nred\n$ ");
        // A progress bar ends as its last state; an erase shortens it.
        assert_eq!(
            v(b"Progress:  10%\rProgress:  70%\rdone\x1b[K\r\n"),
            "done\n"
        );
        assert_eq!(v(b"10%\r100%\r\n"), "100%\n");
        // Backspaces, moves along the line, delete and insert.
        assert_eq!(v(b"abc\x08\x08X"), "aXc");
        assert_eq!(v(b"abcdef\x1b[3G\x1b[2P"), "abef");
        assert_eq!(v(b"abc\x1b[2D\x1b[2@"), "a  bc");
        assert_eq!(v(b"abc\x1b[1G\x1b[0J> x\x1b[5G"), "> x");
        // Writing over a tab or a wide character blanks the rest of it.
        assert_eq!(v(b"a\tb\r\x1b[3CX"), "a  X    b");
        assert_eq!(v("\u{4e2d}\u{6587}\rx".as_bytes()), "x \u{6587}");
        // Combining marks stay with their character.
        assert_eq!(v("e\u{301}x\rE".as_bytes()), "Ex");
        assert_eq!(v("xe\u{301}\r".as_bytes()), "xe\u{301}");
        assert!(!line_view(b"a\r\n\x1b[K\x1b[5C!").repaints);
    }

    #[test]
    fn line_view_moves_cannot_make_huge_lines() {
        let mut raw = Vec::new();
        for _ in 0..20_000 {
            raw.extend_from_slice(b"\x1b[65535C\x1b[65535@\x1b[65535Ix");
        }
        let l = line_view(&raw);
        // Each "x" lands at most REACH columns right: bounded, not 65535.
        assert!(l.text.chars().count() <= 20_000 + REACH, "{}", l.text.len());
        assert!(
            line_view(b"ab\x1b[99999999999G\x1b[9999999999@c")
                .text
                .len()
                <= REACH + 2
        );
    }

    #[test]
    fn line_view_leaves_out_the_alternate_screen() {
        // vim started, drew, quit: only the shell's lines remain.
        let raw = b"vim\r\n\x1b[?1049h\x1b[H\x1b[2J~\r\n~\x1b[24;1H:q!\r\x1b[?1049l$ ";
        let l = line_view(raw);
        assert_eq!(l.text, "vim\n$ ");
        assert!(!l.repaints);
        // Begun on the alternate screen (the mark was set inside vim).
        let l = line_view(b":q!\x1b[24;1H\x1b[?1049l\r$ ");
        assert_eq!(l.text, "$ ");
        assert!(!l.repaints);
    }

    #[test]
    fn line_view_says_when_output_repaints_across_lines() {
        for seq in [
            &b"\x1b[H"[..],
            b"\x1b[2J",
            b"\x1b[3A",
            b"\x1bM",
            b"\x1b[5;20r",
            b"\x1b7x\x1b8",
        ] {
            let mut raw = b"line\r\n".to_vec();
            raw.extend_from_slice(seq);
            assert!(line_view(&raw).repaints, "{seq:?}");
        }
    }

    #[test]
    fn head_tail_marks_the_cut() {
        let s = "a".repeat(1000);
        let (t, cut) = head_tail(&s, 100);
        assert!(cut);
        assert!(t.contains("omitted"));
        assert!(t.chars().count() <= 100);
        assert_eq!(head_tail("short", 100), ("short".to_string(), false));
        // Never more than asked, however small.
        for max in [0, 1, 10, 30, 35, 36, 40, 41, 99] {
            let (t, cut) = head_tail(&s, max);
            assert!(cut && t.chars().count() <= max, "{max}: {t:?}");
        }
        assert_eq!(head_tail(&s, 3).0, "aaa");
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
