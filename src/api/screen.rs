//! The screen as a value: rows, cursor, size, title, modes and cells with
//! their attributes, taken from a live [`Session`](crate::Session) or from
//! a [`vt::Screen`](crate::vt::Screen) fed with bytes.

pub use crate::vt::{Color, Style};

/// A cursor position, counted from 1 as seed 000 counts it (`row` 1 is the
/// top row, `col` 1 the leftmost column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cursor {
    /// The row, counted from 1.
    pub row: u16,
    /// The column, counted from 1.
    pub col: u16,
    /// The program shows the cursor.
    pub visible: bool,
}

impl Default for Cursor {
    fn default() -> Cursor {
        Cursor {
            row: 1,
            col: 1,
            visible: true,
        }
    }
}

impl Cursor {
    pub(crate) fn from_vt(c: crate::vt::Cursor) -> Cursor {
        Cursor {
            row: c.row.saturating_add(1),
            col: c.col.saturating_add(1),
            visible: c.visible,
        }
    }
}

/// A terminal size (seed 000's `TermSize`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Size {
    /// Columns.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
}

/// One character cell: what it shows and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// The character with any combining marks; a space for a blank cell.
    pub text: String,
    /// Columns it takes: 1, or 2 for a wide character (the column after a
    /// wide character has no cell of its own).
    pub width: u8,
    /// Colours and attributes.
    pub style: Style,
}

/// A snapshot of a terminal screen.
///
/// ```
/// use ptybroker::{vt, Color, Screen};
///
/// let mut term = vt::Screen::new(20, 3, 0);
/// term.feed(b"\x1b]0;demo\x07\x1b[1;32mok\x1b[0m done");
/// let shot = Screen::from(&term);
/// assert_eq!(shot.rows[0], "ok done");
/// assert_eq!(shot.title, "demo");
/// assert_eq!((shot.cursor.row, shot.cursor.col), (1, 8));
/// let cells = shot.cells(0);
/// assert!(cells[0].style.bold);
/// assert_eq!(cells[0].style.fg, Color::Indexed(2));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Screen {
    /// Every row as plain text, trailing spaces trimmed, top row first.
    pub rows: Vec<String>,
    /// Where the cursor is, counted from 1.
    pub cursor: Cursor,
    /// The terminal's size.
    pub size: Size,
    /// The window title the program set (OSC 0 or 2), or empty.
    pub title: String,
    /// The program is on the alternate screen (full-screen programs: vim,
    /// less, top).
    pub alternate: bool,
    runs: Vec<Vec<crate::vt::Run>>,
}

impl From<&crate::vt::Screen> for Screen {
    fn from(s: &crate::vt::Screen) -> Screen {
        let n = usize::from(s.rows());
        Screen {
            rows: (0..n).map(|r| s.row_text(r)).collect(),
            cursor: Cursor::from_vt(s.cursor()),
            size: Size {
                cols: s.cols(),
                rows: s.rows(),
            },
            title: s.title().to_string(),
            alternate: s.is_alt_screen(),
            runs: (0..n).map(|r| s.row_runs(r)).collect(),
        }
    }
}

impl Screen {
    /// The rows as seed 000's `screen` string: each followed by `\n`,
    /// trailing blank rows dropped.
    pub fn text(&self) -> String {
        crate::ops::join_lines(&self.rows)
    }

    /// The cells of `row` (counted from 0), left to right, up to the last
    /// one written; empty for a row out of range.
    pub fn cells(&self, row: usize) -> Vec<Cell> {
        let mut out: Vec<Cell> = Vec::new();
        for run in self.runs.get(row).into_iter().flatten() {
            for ch in run.text.chars() {
                match Some(crate::vt::width(ch)) {
                    Some(0) if !out.is_empty() => {
                        if let Some(last) = out.last_mut() {
                            last.text.push(ch);
                        }
                    }
                    w => out.push(Cell {
                        text: ch.to_string(),
                        width: if w == Some(2) { 2 } else { 1 },
                        style: run.style,
                    }),
                }
            }
        }
        out
    }
}
