//! Plain-text views of raw program output: ANSI stripping (pty-prompt's
//! default output), head+tail truncation, grep and tail.
//!
//! Escape sequences are read by the screen's parser ([`crate::vt::parser`])
//! with small [`Perform`] implementations, so a byte means the same here as
//! on the screen (0x9B inside ě is part of the character, not C1 CSI).

use crate::vt::parser::{Params, Parser, Perform};
use crate::vt::Charset;

/// Remove escape sequences (CSI, OSC, DCS/APC/PM/SOS strings, two-byte
/// escapes), carriage returns and other control characters except `\n` and
/// `\t`, leaving line-oriented text. Invalid UTF-8 becomes U+FFFD. The bytes
/// are read by the screen's own parser ([`crate::vt::parser`]), so text and
/// screen agree on where a sequence ends.
pub fn strip_ansi(bytes: &[u8]) -> String {
    let mut strip = Strip(String::with_capacity(bytes.len()));
    let mut parser = Parser::new();
    parser.advance(&mut strip, bytes);
    parser.finish(&mut strip);
    strip.0
}

/// [`strip_ansi`]'s performer: text, newlines and tabs; nothing else.
struct Strip(String);

impl Perform for Strip {
    fn print(&mut self, c: char) {
        // C1 controls written as UTF-8 (U+0080-U+009F) show nothing.
        if !c.is_control() {
            self.0.push(c);
        }
    }

    fn print_ascii(&mut self, s: &[u8]) {
        // The parser passes printable ASCII only; the check is a formality.
        self.0.push_str(std::str::from_utf8(s).unwrap_or_default());
    }

    fn execute(&mut self, byte: u8) {
        if matches!(byte, b'\n' | b'\t') {
            self.0.push(char::from(byte));
        }
    }
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
    /// The output moved the cursor only by relative moves (a REPL such as
    /// ipython redrawing its input area, or the cell it closes): the rows
    /// it went to, counted from the row it started on. `None` when it went
    /// anywhere absolute (a clear, a cursor position, a scroll region, a
    /// saved cursor, origin mode, the alternate screen, a reverse index
    /// above that row, which may scroll). Rows are counted by line feeds and
    /// moves only (the view does not know the width): a line that wraps
    /// moves further down than counted, and a move up that the top row
    /// stopped short less far up, so the rows counted hold every row drawn,
    /// except after a move down that the bottom row (or a scroll region's)
    /// stopped short: then the cursor ends above the row counted, which the
    /// caller checks.
    pub rows: Option<Rows>,
}

/// See [`LineView::rows`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rows {
    /// The most rows above the starting row the cursor went (0: it stayed
    /// on it or below).
    pub above: usize,
    /// Where the cursor ended: rows below the starting row (above it if
    /// negative).
    pub end: i64,
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
#[derive(Clone, Default)]
struct Line {
    cells: Vec<Cell>,
    /// In column order.
    marks: Vec<(usize, char)>,
    col: usize,
    /// Insert mode (IRM, `CSI 4 h`): text pushes the rest of the line right.
    inserting: bool,
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
            Cell::Char(c) if crate::vt::width(c) == 2 => end = (col + 2).min(self.cells.len()),
            Cell::Char(_) => return,
        }
        for c in &mut self.cells[start..end] {
            *c = Cell::Char(' ');
        }
        self.marks.retain(|&(at, _)| at < start || at >= end);
    }

    /// Make a boundary before column `col` (for ICH): a wide character or
    /// tab that `col` is inside of turns into blanks; one that starts at
    /// `col` stays whole, to move right.
    fn cut(&mut self, col: usize) {
        if matches!(self.cells.get(col), Some(Cell::WideTail | Cell::TabSpan)) {
            self.open(col);
        }
    }

    fn put(&mut self, ch: char) {
        match Some(crate::vt::width(ch)) {
            Some(0) => {
                if self.col > 0 {
                    // Kept in column order (after those already on the
                    // column), which every edit below preserves.
                    let at = self.col - 1;
                    let i = self.marks.partition_point(|&(m, _)| m <= at);
                    self.marks.insert(i, (at, ch));
                }
            }
            w => {
                if self.inserting {
                    self.insert(w.unwrap_or(1));
                }
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
            self.cut(col);
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
    line_view_after(&[], bytes)
}

/// [`line_view`] of `bytes` that go on from the start of a line whose
/// output so far is `before` (an earlier call showed it: a prompt, or a
/// line being typed), so that a carriage return, a move along the line or
/// an edit lands where the terminal put it (readline's Home, a redraw over
/// a shorter line). The first line is shown from where `before` ended when
/// `bytes` only added to it, and whole when they changed what `before` had
/// drawn. `before` is the first usable one of `befores` (one that did not
/// switch screens or move across lines: the bytes that drew the line, then
/// the line as the screen showed it, for a prompt redrawn by moves across
/// lines); without one this is [`line_view`] of `bytes`.
pub fn line_view_after(befores: &[&[u8]], bytes: &[u8]) -> LineView {
    let mut rest = befores;
    let (mut lines, mut parser, shown) = 'first_usable: loop {
        let before = rest.first().copied().unwrap_or_default();
        let mut lines = Lines::default();
        let mut parser = Parser::new();
        let mut shown = String::new();
        // (One call of the parser for both: it is inlined where it is called.)
        for (part, new) in [(before, false), (bytes, true)] {
            if new {
                (lines.down, lines.above) = (Some(0), 0);
            }
            parser.advance(&mut lines, part);
            if new {
                break;
            }
            if lines.switched || lines.repaints || !lines.out.is_empty() {
                // (Not the empty `before` that ends the list: it always is.)
                rest = &rest[1..];
                continue 'first_usable;
            }
            lines.line.clone().finish(&mut shown);
        }
        break (lines, parser, shown);
    };
    parser.finish(&mut lines);
    let Lines {
        mut out, mut line, ..
    } = lines;
    line.finish(&mut out);
    // (`shown` is one line: the first line starts with it if all does.)
    if out.starts_with(&shown) {
        out = out[shown.len()..].to_string();
    }
    LineView {
        text: out,
        repaints: lines.repaints,
        rows: lines.down.map(|end| Rows {
            above: usize::try_from(lines.above).unwrap_or(0),
            end,
        }),
    }
}

/// [`line_view`]'s performer.
#[derive(Default)]
struct Lines {
    out: String,
    line: Line,
    repaints: bool,
    /// On the alternate screen: nothing shows in the lines.
    alt: bool,
    /// A switch of screens was seen.
    switched: bool,
    /// Rows the cursor is below where the output started (above: negative),
    /// as counted (see [`LineView::rows`]); `None` once it went anywhere
    /// absolute.
    down: Option<i64>,
    /// The most rows above where the output started the cursor went.
    above: i64,
    /// G0-G3 and the one invoked (GL), as the terminal keeps them: line
    /// drawing (`ESC ( 0`) shows as the terminal draws it.
    charsets: [Charset; 4],
    gl: usize,
}

impl Lines {
    /// The cursor moved `rows` down (up if negative); see [`Lines::down`].
    fn vertical(&mut self, rows: i64) {
        self.down = self.down.map(|d| d + rows);
        if let Some(d) = self.down {
            self.above = self.above.max(-d);
        }
    }

    fn switch_screens(&mut self, on: bool) {
        self.down = None;
        if !self.switched && !on {
            // The first switch leaves the alternate screen: the output
            // began on it, and none of what came so far shows.
            self.out.clear();
            self.line = Line::default();
            self.repaints = false;
        }
        self.switched = true;
        self.alt = on;
    }

    /// Apply CSI `action` to the line; true when it moves across lines or
    /// repaints.
    fn csi(&mut self, params: &Params, action: u8) -> bool {
        let n = |default: u16| usize::from(params.get_or(0, default));
        match action {
            b'A' | b'F' => self.vertical(-(n(1) as i64)),
            b'B' | b'e' | b'E' => self.vertical(n(1) as i64),
            b'H' | b'f' | b'd' | b'S' | b'T' | b'L' | b'M' | b'r' | b's' | b'u' => self.down = None,
            b'J' if n(0) != 0 => self.down = None,
            _ => {}
        }
        let line = &mut self.line;
        match action {
            b'K' => match n(0) {
                0 => line.truncate(line.col),
                1 => line.blank(0, line.col + 1),
                _ => line.truncate(0),
            },
            b'J' if n(0) == 0 => line.truncate(line.col),
            b'J' => return true,
            b'G' | b'`' => line.go(n(1) - 1),
            b'C' | b'a' => line.go(line.col + n(1)),
            b'D' => line.go(line.col.saturating_sub(n(1))),
            b'X' => line.blank(line.col, line.col + n(1)),
            b'P' => line.delete(n(1)),
            b'@' => line.insert(n(1)),
            b'h' | b'l' if params.values().contains(&4) => line.inserting = action == b'h',
            b'I' => {
                for _ in 0..n(1).min(REACH / 8 + 1) {
                    line.tab();
                }
            }
            b'Z' => line.col = (line.col.saturating_sub(1) / 8) * 8,
            // Up, down, to a row, scroll, lines in and out, the scroll
            // region, saved cursors: across lines.
            b'A' | b'B' | b'E' | b'F' | b'H' | b'f' | b'd' | b'e' | b'S' | b'T' | b'L' | b'M'
            | b'r' | b's' | b'u' => return true,
            _ => {}
        }
        false
    }
}

impl Perform for Lines {
    fn print(&mut self, c: char) {
        if !self.alt && !c.is_control() {
            // Only ASCII is remapped, as the terminal does.
            let set = self.charsets[self.gl];
            self.line.put(if c.is_ascii() { set.map(c) } else { c });
        }
    }

    fn print_ascii(&mut self, s: &[u8]) {
        if !self.alt {
            let set = self.charsets[self.gl];
            for &b in s {
                self.line.put(set.map(char::from(b)));
            }
        }
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            0x0e => self.gl = 1,
            0x0f => self.gl = 0,
            _ => {}
        }
        if self.alt {
            return;
        }
        if matches!(byte, b'\n' | 0x0b | 0x0c) {
            self.vertical(1);
        }
        let line = &mut self.line;
        match byte {
            b'\n' => {
                let col = line.col;
                line.finish(&mut self.out);
                self.out.push('\n');
                line.col = col;
            }
            b'\r' => line.col = 0,
            0x08 => line.col = line.col.saturating_sub(1),
            b'\t' => line.tab(),
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], ignore: bool, action: u8) {
        if ignore {
            return;
        }
        if intermediates == b"?"
            && matches!(action, b'h' | b'l')
            && params
                .values()
                .iter()
                .any(|p| matches!(p, 47 | 1047 | 1049))
        {
            self.switch_screens(action == b'h');
            return;
        }
        // DECCOLM clears and homes, DECOM homes, restoring the saved cursor
        // moves it: across lines.
        if intermediates == b"?"
            && matches!(action, b'h' | b'l')
            && params
                .values()
                .iter()
                .any(|&p| matches!(p, 3 | 6) || (p == 1048 && action == b'l'))
            && !self.alt
        {
            self.repaints = true;
            self.down = None;
        }
        if !self.alt && intermediates.is_empty() {
            self.repaints |= self.csi(params, action);
        }
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], ignore: bool, byte: u8) {
        // RI, IND, NEL, DECSC/DECRC, RIS; DECALN.
        let across = match intermediates {
            [] => matches!(byte, b'M' | b'D' | b'E' | b'7' | b'8' | b'c'),
            [b'#'] => byte == b'8',
            _ => false,
        };
        if !self.alt && !ignore && across {
            self.repaints = true;
            match byte {
                // At the top row a reverse index scrolls down instead.
                b'M' if intermediates.is_empty() && self.down.is_some_and(|d| d > 0) => {
                    self.vertical(-1)
                }
                b'D' | b'E' if intermediates.is_empty() => self.vertical(1),
                _ => self.down = None,
            }
        }
        if ignore {
            return;
        }
        match (intermediates, byte) {
            ([], b'n') => self.gl = 2,
            ([], b'o') => self.gl = 3,
            ([], b'c') => (self.charsets, self.gl) = Default::default(),
            (i, f) => {
                if let Some((g, set)) = Charset::designated(i, f) {
                    self.charsets[g] = set;
                }
            }
        }
    }
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
        let mut parser = Parser::new();
        parser.advance(&mut Ignore, &bytes[esc..end]);
        if parser.is_mid_sequence() {
            end = esc;
        }
    }
    end
}

/// A performer that does nothing: the parser's state is what counts.
struct Ignore;

impl Perform for Ignore {
    fn print(&mut self, _: char) {}
    fn print_ascii(&mut self, _: &[u8]) {}
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

/// How much of a long text to keep: its first `head` lines and last
/// `tail` lines, and at most `max_bytes` bytes in all (0: no byte bound).
/// With neither `head` nor `tail`, the byte bound alone decides: a quarter
/// of it for the head, the rest for the tail. Only whole lines are kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cap {
    pub head: Option<usize>,
    pub tail: Option<usize>,
    pub max_bytes: usize,
}

impl Cap {
    /// The default for output shown to an agent (see
    /// [`crate::limits::OUTPUT_CAP_BYTES`]).
    pub const DEFAULT: Cap = Cap {
        head: None,
        tail: None,
        max_bytes: crate::limits::OUTPUT_CAP_BYTES,
    };

    /// Keep everything.
    pub const NONE: Cap = Cap {
        head: None,
        tail: None,
        max_bytes: 0,
    };
}

/// What [`cap`] kept of a text: its head and tail, whole lines each, and
/// what lay between them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capped {
    pub head: String,
    pub tail: String,
    /// The lines left out, if any.
    pub omitted: Option<Omitted>,
}

/// The lines [`cap`] left out: `lines` whole lines from line `first`
/// (counted from 1 in the text given), `bytes` bytes in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Omitted {
    pub first: usize,
    pub lines: usize,
    pub bytes: usize,
}

impl Omitted {
    /// The last line left out, counted from 1.
    pub fn last(&self) -> usize {
        self.first + self.lines - 1
    }
}

impl Capped {
    /// The kept text with `marker` where the omitted lines were.
    pub fn join(&self, marker: &str) -> String {
        let mut out = self.head.clone();
        if self.omitted.is_some() {
            out.push_str(marker);
        }
        out.push_str(&self.tail);
        out
    }
}

/// Keep the head and tail of `text` per `cap`, whole lines only (a line
/// longer than its share is left out whole). The one head+tail cut of
/// line-oriented output: the CLI's output caps and the MCP tools'.
pub fn cap(text: &str, cap: Cap) -> Capped {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let n = lines.len();
    let total = if cap.max_bytes == 0 {
        usize::MAX
    } else {
        cap.max_bytes
    };
    let (want_head, want_tail, head_bytes, tail_bytes) = match (cap.head, cap.tail) {
        (None, None) if text.len() <= total => (n, 0, total, 0),
        (None, None) => (n, n, total / 4, total - total / 4),
        (Some(h), None) => (h, 0, total, 0),
        (None, Some(t)) => (0, t, 0, total),
        (Some(h), Some(t)) => (h, t, total / 2, total - total / 2),
    };
    // Whole lines from each end, as many as asked for and fit.
    let take = |it: &mut dyn Iterator<Item = &&str>, want: usize, budget: usize| {
        let (mut count, mut used) = (0, 0usize);
        for l in it.take(want) {
            if used + l.len() > budget {
                break;
            }
            used += l.len();
            count += 1;
        }
        count
    };
    let h = take(&mut lines.iter(), want_head, head_bytes);
    let t = take(&mut lines[h..].iter().rev(), want_tail, tail_bytes);
    let head = lines[..h].concat();
    let tail = lines[n - t..].concat();
    let omitted = (h + t < n).then(|| Omitted {
        first: h + 1,
        lines: n - h - t,
        bytes: text.len() - head.len() - tail.len(),
    });
    Capped {
        head,
        tail,
        omitted,
    }
}

/// [`cap`] by bytes alone, with a plain marker line where lines were left
/// out: the text, and how many lines and bytes it lacks.
pub fn head_tail_lines(text: &str, max_bytes: usize) -> (String, usize, usize) {
    let c = cap(
        text,
        Cap {
            max_bytes,
            ..Cap::NONE
        },
    );
    match c.omitted {
        Some(o) => (
            c.join(&format!(
                "[... {} lines ({} bytes) omitted ...]\n",
                o.lines, o.bytes
            )),
            o.lines,
            o.bytes,
        ),
        None => (c.join(""), 0, 0),
    }
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

    /// 0x9B is C1 CSI only on its own: inside a UTF-8 character (ě is
    /// C4 9B, Û is C3 9B) it is part of the character.
    #[test]
    fn text_with_9b_continuation_bytes_survives() {
        let word = "p\u{159}\u{11b}kvapen\u{ed} \u{db}ber";
        assert_eq!(strip_ansi(word.as_bytes()), word);
        assert_eq!(line_view(word.as_bytes()).text, word);
        let raw = format!("\x1b[1m{word}\x1b[0m\r\n");
        assert_eq!(strip_ansi(raw.as_bytes()), format!("{word}\n"));
        assert_eq!(complete_prefix(raw.as_bytes()), raw.len());
        // Invalid and cut UTF-8 decodes as String::from_utf8_lossy does.
        let junk = b"a\xc3b\x80\xe2\x82c\xff\x9b1mz\xe2\x82";
        assert_eq!(strip_ansi(junk), String::from_utf8_lossy(junk));
        // Stripped in pieces (a wait scanning output as it arrives), the
        // text is the same as in one go, wherever the cuts fall.
        let all = format!("{raw}\x1b]0;t\u{ed}tle\x07\u{1f600}x\x1b(0q\x1b(B");
        let all = all.as_bytes();
        for cut in 0..all.len() {
            let keep = complete_prefix(&all[..cut]);
            let pieces = strip_ansi(&all[..keep]) + &strip_ansi(&all[keep..]);
            assert_eq!(pieces, strip_ansi(all), "cut at {cut}");
        }
    }

    /// Line drawing (DEC special graphics, designated into G0 or invoked
    /// from G1 with SO) reads as the terminal draws it.
    #[test]
    fn line_drawing_reads_as_drawn() {
        let v = |b: &[u8]| line_view(b).text;
        assert_eq!(
            v(b"\x1b(0lqqk\r\nx  x\r\nmqqj\x1b(B ok\r\n"),
            "\u{250c}\u{2500}\u{2500}\u{2510}\n\u{2502}  \u{2502}\n\u{2514}\u{2500}\u{2500}\u{2518} ok\n"
        );
        assert_eq!(v(b"\x1b)0a\x0eq\x0fq\x0eq\x1bcq"), "a\u{2500}q\u{2500}q");
        // Only ASCII is remapped; the UK set has the pound sign.
        assert_eq!(v("\x1b(0\u{e9}q\x1b(A#".as_bytes()), "\u{e9}\u{2500}\u{a3}");
    }

    /// Output that moved only relative to its first row: how far above it
    /// went and where it ended; `None` once anywhere absolute.
    #[test]
    fn the_rows_output_moved_over_relative_to_its_first_row() {
        let rows = |b: &[u8]| line_view(b).rows.map(|r| (r.above, r.end));
        assert_eq!(rows(b"a\r\nb\r\n"), Some((0, 2)));
        assert_eq!(rows(b"a\r\nb\r\n\x1b[2Ac\x1b[J\r\n"), Some((0, 1)));
        assert_eq!(rows(b"x\n\x1bM\x1bD\x1bE\x1b[B\x1b[3F"), Some((0, 0)));
        assert_eq!(rows(b"x\n\x1bM\x1bD\x1bE\x1b[B\x1b[4F"), Some((1, -1)));
        assert_eq!(rows(b"x\x1b[A"), Some((1, -1)));
        assert_eq!(rows(b"\n\n\x1b[3A\n"), Some((1, 0)));
        // ipython closing a cell of three rows: up to its first row, the
        // cell again, then the answer below.
        assert_eq!(
            rows(b"\r\x1b[2AIn [2]: def f():\r\n   ...:     return 5\r\n   ...: \r\n\r\n"),
            Some((2, 2))
        );
        // A reverse index above the first row may scroll: unknown.
        assert_eq!(rows(b"\x1b[B\x1bM\x1bM"), None);
        for absolute in [
            &b"\n\x1b[H"[..],
            b"\x1b[2J",
            b"\x1b7\n",
            b"\x1b[5;9r",
            b"\x1b[?1049h\x1b[?1049l",
        ] {
            assert_eq!(rows(absolute), None, "{absolute:?}");
        }
        // Counted from the start of the new output, not of the line
        // before it.
        assert_eq!(
            line_view_after(&[b"$ "], b"ls\r\nfile\r\n\x1b[2A$ ").rows,
            Some(Rows { above: 0, end: 0 })
        );
        assert_eq!(
            line_view_after(&[b"\x1b[A$ "], b"ls\r\n").rows,
            Some(Rows { above: 0, end: 1 })
        );
        // Origin mode, DECCOLM and the saved cursor move across lines.
        for moves in [&b"\x1b[?6hX\r\n\x1b[Ay"[..], b"\n\x1b[?3l", b"\x1b[?1048l"] {
            assert_eq!(rows(moves), None, "{moves:?}");
        }
    }

    /// Combining marks stay with their characters whatever order the
    /// cursor wrote them in, and move with deleted and inserted cells.
    #[test]
    fn combining_marks_follow_their_characters() {
        let v = |b: &[u8]| line_view(b).text;
        assert_eq!(v("ae\u{301}\ra\u{300}".as_bytes()), "a\u{300}e\u{301}");
        // DCH at column 0, then ICH at column 0.
        assert_eq!(
            v("ab\u{301}c\u{300}\r\x1b[P".as_bytes()),
            "b\u{301}c\u{300}"
        );
        assert_eq!(v("ab\u{301}\r\x1b[2@".as_bytes()), "  ab\u{301}");
    }

    /// Output that goes on from a line an earlier call showed (a prompt,
    /// a line being typed): moves and edits land where the terminal put
    /// them, and the line is shown from where it was left, or whole if it
    /// changed before that.
    #[test]
    fn a_line_view_goes_on_from_the_line_before() {
        let v = |before: &[u8], b: &[u8]| line_view_after(&[before], b).text;
        // Typed after a prompt: only what is new.
        assert_eq!(
            v(b"bash$ ", b"echo hi\r\nhi\r\nbash$ "),
            "echo hi\nhi\nbash$ "
        );
        // python3.11's bytes for `rint('abc')`, Home, `p`, Enter after its
        // prompt: back to the line's start, past the prompt, redraw.
        let c4 = "\x1b[C".repeat(4);
        let c5 = "\x1b[C".repeat(5);
        let py = format!("rint('abc')\r{c4}print('abc')\r{c5}\r\nabc\r\n>>> ");
        assert_eq!(v(b">>> ", py.as_bytes()), "print('abc')\nabc\n>>> ");
        // bash's for `echo hello world`, Home, `X`, Ctrl+E, Ctrl+W, Enter.
        let bash = format!(
            "echo hello world\r{}\x1b[1@X{}{}\x1b[K\r\n\x1b[?2004l\rbash: Xecho: command not found\r\n\x1b[?2004hbash$ ",
            "\x1b[C".repeat(6),
            "\x1b[C".repeat(16),
            "\x08".repeat(5)
        );
        assert_eq!(
            v(b"bash$ ", bash.as_bytes()),
            "Xecho hello \nbash: Xecho: command not found\nbash$ "
        );
        // The same edit in a call of its own: the line changed before where
        // it was left, so it is shown whole.
        assert_eq!(
            v(b"bash$ echo hello world", b"\r\x1b[6C\x1b[1@X"),
            "bash$ Xecho hello world"
        );
        // Readline's Up over a shorter line: back to the prompt's end,
        // overwrite, erase the rest.
        assert_eq!(
            v(b"$ Xecho", b"\r\x1b[C\x1b[Co one two\x1b[K"),
            "$ o one two"
        );
        // Nothing new: nothing shown.
        assert_eq!(v(b"bash$ ", b""), "");
        // A line that moved across lines before, or an alternate screen,
        // is no help: the bytes alone.
        assert_eq!(v(b"\x1b[Aup", b"new"), "new");
        assert_eq!(v(b"\x1b[?1049hvim", b"\x1b[?1049lout"), "out");
        // Then the line as the screen showed it goes in its place: ipython
        // in vi mode deleting the `h` of `hello` (`0x`) redraws the rest of
        // the line from the cursor.
        let drawn: &[u8] = b"\x1b[A\r\x1b[K[nav] In [1]: hello\x1b[D";
        let shown: &[u8] = b"[nav] In [1]: hello\r\x1b[14C";
        let x = b"ello\x1b[K\x1b[4D";
        assert_eq!(line_view_after(&[drawn], x).text, "ello");
        assert_eq!(
            line_view_after(&[drawn, shown], x).text,
            "[nav] In [1]: ello"
        );
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
        // Insert mode pushes the rest right; so does ICH, keeping a wide
        // character that starts at the cursor whole.
        assert_eq!(v(b"hello\r\x1b[4hab\x1b[4lX"), "abXello");
        assert_eq!(
            v("\u{4e2d}\u{6587}\r\x1b[4hab\x1b[4l".as_bytes()),
            "ab\u{4e2d}\u{6587}"
        );
        assert_eq!(
            v("\u{4e2d}\u{6587}\x1b[2D\x1b[4hQ".as_bytes()),
            "\u{4e2d}Q\u{6587}"
        );
        assert_eq!(
            v("\u{4e2d}\u{6587}\r\x1b[2@ab".as_bytes()),
            "ab\u{4e2d}\u{6587}"
        );
        // ICH inside a wide character blanks it, as the screen does.
        assert_eq!(
            v("\u{4e2d}\u{6587}\r\x1b[1C\x1b[1@".as_bytes()),
            "   \u{6587}"
        );
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
    fn cap_keeps_whole_lines_from_both_ends() {
        let text: String = (1..=100).map(|i| format!("{i}\n")).collect();
        assert_eq!(cap(&text, Cap::NONE).join("X"), text);
        let by_bytes = Cap {
            max_bytes: 40,
            ..Cap::NONE
        };
        let c = cap(&text, by_bytes);
        // A quarter for the head (10 bytes: 1..5), the rest for the tail
        // (30 bytes: "100" and eight lines of three).
        assert_eq!(c.head, "1\n2\n3\n4\n5\n");
        assert_eq!(
            c.tail,
            (92..=100).map(|i| format!("{i}\n")).collect::<String>()
        );
        let o = c.omitted.expect("cut");
        assert_eq!((o.first, o.last(), o.lines), (6, 91, 86));
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        assert_eq!(lines[o.first - 1..o.last()].concat().len(), o.bytes);
        assert_eq!(c.head.len() + o.bytes + c.tail.len(), text.len());

        let head_tail = Cap {
            head: Some(2),
            tail: Some(3),
            max_bytes: 0,
        };
        let c = cap(&text, head_tail);
        assert_eq!(c.join("...\n"), "1\n2\n...\n98\n99\n100\n");
        let tail = Cap {
            tail: Some(1),
            ..Cap::NONE
        };
        assert_eq!(cap("a\nb", tail).join("~"), "~b");
        // Asking for more than there is keeps everything.
        // A byte bound smaller than the lines asked for cuts them further.
        let tight = Cap {
            head: Some(5),
            tail: Some(5),
            max_bytes: 8,
        };
        assert_eq!(cap(&text, tight).join("|"), "1\n2\n|100\n");
        let all = Cap {
            head: Some(60),
            tail: Some(60),
            max_bytes: 0,
        };
        assert_eq!(cap(&text, all).omitted, None);
        // One line longer than the bound is left out whole.
        let (out, lines, bytes) = head_tail_lines(&"x".repeat(100), 10);
        assert_eq!(
            (out.as_str(), lines, bytes),
            ("[... 1 lines (100 bytes) omitted ...]\n", 1, 100)
        );
        assert_eq!(head_tail_lines("short\n", 10), ("short\n".into(), 0, 0));
    }

    #[test]
    fn tail_keeps_last_lines() {
        assert_eq!(tail_lines("a\nb\nc\n", 2), "b\nc\n");
        assert_eq!(tail_lines("a\nb", 5), "a\nb");
    }
}
