//! [`Screen`]: the emulator's public face. It owns a parser and the terminal
//! state, feeds one to the other, and answers questions about what a person
//! would see.

use super::cell::Run;
use super::parser::Parser;
use super::render;
use super::term::Term;

/// Mouse reporting a program asked for (DEC private modes 9, 1000-1003).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MouseTracking {
    /// No reports.
    #[default]
    Off,
    /// 9: presses only.
    X10,
    /// 1000: presses and releases.
    Normal,
    /// 1002: also motion while a button is held.
    ButtonEvent,
    /// 1003: all motion.
    AnyEvent,
}

/// How mouse reports are encoded (DEC private modes 1005, 1006, 1015, 1016).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MouseEncoding {
    /// X10 bytes (coordinates up to 223).
    #[default]
    Default,
    /// 1005: coordinates as UTF-8.
    Utf8,
    /// 1006: `CSI < b ; x ; y M/m`.
    Sgr,
    /// 1015: `CSI b ; x ; y M`.
    Urxvt,
    /// 1016 (SGR-Pixels): as 1006, with the pointer's position in pixels.
    SgrPixels,
}

/// The modes a front end needs to encode input for the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Modes {
    /// DECCKM: arrows send `ESC O A` rather than `ESC [ A`.
    pub app_cursor_keys: bool,
    /// DECKPAM/DECKPNM.
    pub app_keypad: bool,
    /// 2004.
    pub bracketed_paste: bool,
    /// Which mouse events the program wants reported.
    pub mouse_tracking: MouseTracking,
    /// How they are encoded.
    pub mouse_encoding: MouseEncoding,
    /// 1004.
    pub focus_events: bool,
    /// 2026 is set: the program is in the middle of a frame.
    pub synchronized_output: bool,
    /// DECTCEM (25): the cursor is shown.
    pub cursor_visible: bool,
    /// 1049/1047/47: the alternate screen is up.
    pub alt_screen: bool,
}

/// The cursor's shape, as a program sets it with DECSCUSR (`CSI n SP q`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CursorShape {
    /// A block (DECSCUSR 0-2).
    #[default]
    Block,
    /// An underline (3-4).
    Underline,
    /// A vertical bar (5-6).
    Bar,
}

impl CursorShape {
    /// `block`, `underline` or `bar`.
    pub fn name(self) -> &'static str {
        match self {
            CursorShape::Block => "block",
            CursorShape::Underline => "underline",
            CursorShape::Bar => "bar",
        }
    }
}

/// Where the cursor is, 0-based, and whether the program shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Cursor {
    /// The row, from 0 at the top.
    pub row: u16,
    /// The column, from 0 at the left; equal to the width while a write
    /// at the last column waits to wrap.
    pub col: u16,
    /// The program shows the cursor (DECTCEM).
    pub visible: bool,
}

/// A terminal screen: feed it what a program writes, read what it shows.
#[derive(Clone, Debug)]
pub struct Screen {
    parser: Parser,
    term: Term,
}

impl Screen {
    /// A blank screen of `cols` x `rows` (each at least 1) keeping at most
    /// `scrollback_limit` lines of history.
    pub fn new(cols: u16, rows: u16, scrollback_limit: usize) -> Screen {
        Screen {
            parser: Parser::new(),
            term: Term::new(usize::from(cols), usize::from(rows), scrollback_limit),
        }
    }

    /// Process output of the program. Sequences and UTF-8 characters may be
    /// split across calls anywhere.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.parser.advance(&mut self.term, bytes);
    }

    /// Bytes the terminal answers queries with (cursor position, device
    /// attributes, ...), to write back to the program. Drains them.
    pub fn take_answers(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.term.answers)
    }

    /// Change the size. The primary screen reflows wrapped lines as xterm
    /// and tmux do; the alternate screen is cut or padded.
    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.term
            .resize(usize::from(cols).max(1), usize::from(rows).max(1));
    }

    /// Columns.
    pub fn cols(&self) -> u16 {
        self.term.cols as u16
    }

    /// Rows.
    pub fn rows(&self) -> u16 {
        self.term.rows as u16
    }

    /// Where the cursor is, counted from 0.
    pub fn cursor(&self) -> Cursor {
        Cursor {
            row: self.term.row as u16,
            col: self.term.col as u16,
            visible: self.term.modes.cursor_visible,
        }
    }

    /// The cursor's shape and whether it blinks (DECSCUSR; the default, 0,
    /// is xterm's blinking block).
    pub fn cursor_shape(&self) -> (CursorShape, bool) {
        match self.term.cursor_shape {
            0 | 1 => (CursorShape::Block, true),
            2 => (CursorShape::Block, false),
            3 => (CursorShape::Underline, true),
            4 => (CursorShape::Underline, false),
            5 => (CursorShape::Bar, true),
            _ => (CursorShape::Bar, false),
        }
    }

    /// The window title (OSC 0 or 2).
    pub fn title(&self) -> &str {
        &self.term.title
    }

    /// The alternate screen is up (a full-screen program runs).
    pub fn is_alt_screen(&self) -> bool {
        self.term.modes.alt_screen
    }

    /// A count that grows whenever the cursor goes back up the screen (or
    /// the screen is cleared): the program repaints rather than adds output.
    pub fn rewinds(&self) -> u64 {
        self.term.rewinds
    }

    /// Text of visible row `row` (0-based; empty past the bottom): trailing
    /// blanks trimmed, wide-character spacers skipped, combining marks kept.
    pub fn row_text(&self, row: usize) -> String {
        self.term
            .grid
            .get(row)
            .map(|r| r.text())
            .unwrap_or_default()
    }

    /// Blanks on the cursor's row between the end of its text and the
    /// cursor: a prompt's trailing space (coloured or not), which
    /// [`Screen::row_text`] trims. A wrap pending puts the cursor past the
    /// last column.
    pub fn blanks_before_cursor(&self) -> usize {
        let t = &self.term;
        t.grid
            .get(t.row)
            .map_or(0, |r| self.cursor_column().saturating_sub(r.text_cols()))
    }

    /// The cursor's column (from 0) as text goes on from it: past the last
    /// column while a wrap is pending, where [`Screen::cursor`] shows it on
    /// the last.
    pub fn cursor_column(&self) -> usize {
        let t = &self.term;
        (t.col + usize::from(t.pending_wrap)).min(t.cols)
    }

    /// Text of row `row` of the primary screen, also while the alternate
    /// screen is shown (it is kept aside then).
    pub fn primary_row_text(&self, row: usize) -> String {
        let t = &self.term;
        let grid = if t.modes.alt_screen {
            &t.other
        } else {
            &t.grid
        };
        grid.get(row).map(|r| r.text()).unwrap_or_default()
    }

    /// Lines of history above the primary screen.
    pub fn scrollback_len(&self) -> usize {
        self.term.scrollback.len()
    }

    /// Lines that ever left the top of the primary screen for the history:
    /// with the cursor's row, an absolute position in the primary screen's
    /// output that stays put as it scrolls (history line `i` is number
    /// `history_total() - scrollback_len() + i`).
    pub fn history_total(&self) -> u64 {
        self.term.scrollback.pushed()
    }

    /// Text of history line `i` (0 = oldest; empty past the end).
    pub fn scrollback_row_text(&self, i: usize) -> String {
        self.term
            .scrollback
            .get(i)
            .map(|l| l.text())
            .unwrap_or_default()
    }

    /// The input modes the program has set.
    pub fn modes(&self) -> Modes {
        self.term.modes
    }

    /// Whether the parser is inside an escape sequence or a UTF-8 character
    /// (so the screen may be about to change without more output).
    pub fn is_mid_sequence(&self) -> bool {
        self.parser.is_mid_sequence()
    }

    /// Visible row `row` as runs of one style each.
    pub fn row_runs(&self, row: usize) -> Vec<Run> {
        self.term
            .grid
            .get(row)
            .map(render::row_runs)
            .unwrap_or_default()
    }

    /// History line `i` as runs of one style each.
    pub fn scrollback_row_runs(&self, i: usize) -> Vec<Run> {
        self.term
            .scrollback
            .get(i)
            .map(|l| render::row_runs(&l.to_row()))
            .unwrap_or_default()
    }

    /// The visible screen with SGR sequences re-encoded: each row ends with
    /// a reset, rows are joined by `\n`.
    pub fn render_ansi(&self) -> String {
        render::ansi(&self.term.grid)
    }

    /// The visible screen as text, rows joined by `\n`, trailing blank rows
    /// kept (so row numbers line up).
    pub fn text(&self) -> String {
        let rows: Vec<String> = self.term.grid.iter().map(|r| r.text()).collect();
        rows.join("\n")
    }

    /// An estimate of the heap the grid and history hold, in bytes (what the
    /// memory budget is about; allocator overhead not counted).
    pub fn heap_bytes(&self) -> usize {
        let row = |r: &super::grid::Row| {
            std::mem::size_of_val(r)
                + r.cells.capacity() * std::mem::size_of::<super::cell::Cell>()
                + r.marks.capacity() * std::mem::size_of::<(u16, char)>()
                + r.text_capacity()
        };
        let t = &self.term;
        t.grid.iter().chain(t.other.iter()).map(row).sum::<usize>()
            + t.scrollback.heap_bytes()
            + t.tabs.capacity()
    }

    /// Check the grid's internal invariants; for tests and fuzzing.
    #[doc(hidden)]
    pub fn check_invariants(&self) -> Result<(), String> {
        let t = &self.term;
        for (i, r) in t.grid.iter().chain(t.other.iter()).enumerate() {
            if r.cells.len() != t.cols && !r.is_lazy() {
                return Err(format!(
                    "row {i} has {} cells, not {}",
                    r.cells.len(),
                    t.cols
                ));
            }
            r.check().map_err(|e| format!("row {i}: {e}"))?;
        }
        let other_ok = t.other.len() == t.rows || (t.other.is_empty() && !t.modes.alt_screen);
        if t.grid.len() != t.rows || !other_ok {
            return Err("row count".into());
        }
        if t.top > t.bottom || t.bottom >= t.rows || t.tabs.len() != t.cols {
            return Err("margins or tabs".into());
        }
        Ok(())
    }

    /// The icon title (OSC 0 or 1).
    pub fn icon_title(&self) -> &str {
        &self.term.icon_title
    }
}

#[cfg(test)]
#[path = "screen_tests.rs"]
mod tests;
