//! The terminal state the parser drives: grid, cursor, margins, modes,
//! and the primitive operations (print, scroll, erase, insert, delete) that
//! escape sequences are made of. CSI decoding lives in `csi.rs`; the
//! `Perform` glue for C0, ESC and OSC in `perform.rs`.

use std::collections::VecDeque;

use super::cell::{char_width, glyph, width_in, widths, Cell, Pen, SPACER, WIDE};
use super::charset::Charset;
use super::grid::{Row, Scrollback};
use super::parser::{decode, decode_word, word_at};
use super::screen::Modes;

/// Most bytes of answers kept for a caller that never takes them.
const MAX_ANSWERS: usize = 64 * 1024;

/// What DECSC saves and DECRC restores.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SavedCursor {
    pub row: usize,
    pub col: usize,
    pub pending_wrap: bool,
    pub pen: Pen,
    pub origin: bool,
    pub charsets: [Charset; 4],
    pub gl: usize,
}

#[derive(Clone, Debug)]
pub(crate) struct Term {
    pub cols: usize,
    pub rows: usize,
    /// The active screen's rows (the alternate screen's while it is shown).
    /// A ring, so that scrolling the whole screen moves no rows.
    pub grid: VecDeque<Row>,
    /// The inactive screen's rows (empty until the alternate screen is
    /// first used).
    pub other: VecDeque<Row>,
    pub scrollback: Scrollback,
    pub row: usize,
    pub col: usize,
    /// The cursor is past the last column: the next printable character
    /// wraps first (xterm's deferred autowrap).
    pub pending_wrap: bool,
    pub pen: Pen,
    pub charsets: [Charset; 4],
    pub gl: usize,
    /// Saved cursors of the primary and alternate screens.
    pub saved: [SavedCursor; 2],
    /// Scroll region, inclusive.
    pub top: usize,
    pub bottom: usize,
    pub modes: Modes,
    pub insert: bool,
    pub autowrap: bool,
    pub origin: bool,
    pub newline: bool,
    pub reverse_video: bool,
    pub tabs: Vec<bool>,
    pub title: String,
    pub icon_title: String,
    /// XTWINOPS 22/23's stack of (window, icon) titles, at most
    /// [`TITLE_STACK`] deep (xterm's depth).
    pub titles: Vec<(String, String)>,
    pub answers: Vec<u8>,
    pub last_char: Option<char>,
    /// DECSCUSR's parameter (`CSI n SP q`, 0..=6): the cursor's shape.
    pub cursor_shape: u8,
    /// A DECRQSS request being read (`DCS $ q Pt ST`): the setting's name
    /// so far, at most [`DECRQSS_NAME`] bytes (`None` when no request).
    pub decrqss: Option<Vec<u8>>,
    /// How often the cursor went back up the screen or the screen was
    /// cleared: a program repainting what it drew, rather than adding to it.
    pub rewinds: u64,
}

fn default_tabs(cols: usize) -> Vec<bool> {
    (0..cols).map(|c| c % 8 == 0 && c != 0).collect()
}

impl Term {
    pub fn new(cols: usize, rows: usize, scrollback: usize) -> Term {
        let cols = cols.max(1);
        let rows = rows.max(1);
        Term {
            cols,
            rows,
            grid: (0..rows).map(|_| Row::new(cols)).collect(),
            // The alternate screen is allocated when first shown: most
            // sessions never use it, and it is a screenful of cells.
            other: VecDeque::new(),
            scrollback: Scrollback::new(scrollback),
            row: 0,
            col: 0,
            pending_wrap: false,
            pen: Pen::default(),
            charsets: [Charset::Ascii; 4],
            gl: 0,
            saved: [SavedCursor::default(); 2],
            top: 0,
            bottom: rows - 1,
            modes: Modes {
                cursor_visible: true,
                ..Modes::default()
            },
            insert: false,
            autowrap: true,
            origin: false,
            newline: false,
            reverse_video: false,
            tabs: default_tabs(cols),
            title: String::new(),
            icon_title: String::new(),
            decrqss: None,
            titles: Vec::new(),
            answers: Vec::new(),
            last_char: None,
            cursor_shape: 0,
            rewinds: 0,
        }
    }

    pub fn answer(&mut self, bytes: &[u8]) {
        if self.answers.len() + bytes.len() <= MAX_ANSWERS {
            self.answers.extend_from_slice(bytes);
        }
    }

    #[inline]
    fn blank(&self) -> Cell {
        Cell::erased(self.pen)
    }

    // ---- printing -------------------------------------------------------

    /// Wrap to the next line if a character is pending there.
    #[inline]
    fn wrap_if_pending(&mut self) {
        if self.pending_wrap {
            self.pending_wrap = false;
            if self.autowrap {
                self.grid[self.row].wrapped = true;
                self.linefeed_only();
                self.col = 0;
            }
        }
    }

    /// Before overwriting `start..end` of `row`, blank the other half of any
    /// wide character cut by either edge.
    #[inline]
    fn split_wide(&mut self, row: usize, start: usize, end: usize) {
        // Cells from the extent on are blank, and both halves of a wide
        // character are before it: text added at the end of a row (nearly
        // all of it) has nothing to split.
        if start < self.grid[row].extent() {
            self.split_wide_cells(row, start, end);
        }
    }

    fn split_wide_cells(&mut self, row: usize, start: usize, end: usize) {
        let r = &mut self.grid[row];
        let len = r.cells.len();
        let split = (start < len && r.cells[start].is_spacer())
            || (end > 0 && end <= len && r.cells[end - 1].is_wide());
        if split {
            r.lose_text();
        }
        let cells = &mut r.cells;
        let blank = |c: &mut Cell| *c = Cell::erased(c.pen());
        if start < len && cells[start].is_spacer() {
            if start > 0 {
                blank(&mut cells[start - 1]);
            }
            blank(&mut cells[start]);
        }
        if end > 0 && end <= len && cells[end - 1].is_wide() {
            blank(&mut cells[end - 1]);
            if end < len {
                blank(&mut cells[end]);
            }
        }
    }

    pub fn print(&mut self, c: char) {
        // Only ASCII is remapped by the character sets.
        let c = if c.is_ascii() {
            self.charsets[self.gl].map(c)
        } else {
            c
        };
        let w = char_width(c);
        if w == 0 {
            self.add_combining(c);
            return;
        }
        self.last_char = Some(c);
        self.wrap_if_pending();
        if w == 2 && self.col + 1 >= self.cols {
            if self.cols < 2 {
                return;
            }
            // A wide character never straddles the margin: the last
            // column is left as a pad (see `WRAP_PAD`).
            if self.autowrap {
                self.grid[self.row].pad_wrap(self.cols);
                self.grid[self.row].wrapped = true;
                self.linefeed_only();
                self.col = 0;
            } else {
                self.col = self.cols - 2;
            }
        }
        if self.insert {
            self.insert_blanks(w);
        }
        let (row, col) = (self.row, self.col);
        self.split_wide(row, col, col + w);
        let (pen, cols) = (self.pen, self.cols);
        let r = &mut self.grid[row];
        let ascii = w == 1 && c.is_ascii();
        if !ascii {
            r.leave_plain();
        }
        let cells = r.cells_for_text(cols);
        put_cell(cells, col, glyph(c), w, pen);
        r.clear_marks(col, col + w);
        r.touch(col + w, ascii, pen != Pen::default());
        if !r.plain && !r.styled {
            let mut buf = [0; 4];
            r.text_put(col, col + w, c.encode_utf8(&mut buf).as_bytes());
        }
        self.advance(w);
    }

    /// Well-formed UTF-8 from the parser (see [`Perform::print_utf8`]):
    /// the common case (no insert mode, no character set mapping, no wrap
    /// pending, inside the row, nothing to split) is decoded and written
    /// straight into the row in one pass over the bytes; anything else is
    /// one character through [`Term::print`]. Returns the bytes consumed.
    ///
    /// [`Perform::print_utf8`]: crate::parser::Perform::print_utf8
    pub fn print_utf8(&mut self, text: &[u8]) -> usize {
        if !self.insert && !self.pending_wrap && self.charsets[self.gl] == Charset::Ascii {
            let n = self.put_utf8(text);
            if n > 0 {
                return n;
            }
        }
        match decode(text) {
            Some((c, len)) => {
                self.print(c);
                len
            }
            None => 0,
        }
    }

    /// Decode the leading characters of `text` that need nothing but a cell
    /// each (or two), or are combining marks, into the cursor's row and
    /// advance; returns the bytes consumed. A lone printable ASCII byte (a
    /// space between words) is taken too; two in a row are left to the
    /// parser's ASCII path. Stops at a control byte, at anything ill-formed
    /// or cut short, at the margin, and where a wide character would be cut:
    /// [`Term::print`] and the parser know what to do there.
    fn put_utf8(&mut self, text: &[u8]) -> usize {
        let (pen, cols, start, autowrap) = (self.pen, self.cols, self.col, self.autowrap);
        let table = widths();
        let r = &mut self.grid[self.row];
        r.cells_for_text(cols);
        // (Not plain from here on, even if nothing is written: a hint on
        // the safe side.)
        r.leave_plain();
        // The row's kept text matters only if it ends up unstyled.
        let keep = !r.styled && pen == Pen::default();
        // Cells from the extent on are blank: only those before it can be
        // half of a wide character (a flag test per row, not per cell, when
        // text is added at the end of a row).
        let clean = r.extent();
        // Where a combining mark goes: the last character written, or
        // before any, the one before the cursor (as `add_combining`).
        let mut base = match start.checked_sub(1) {
            Some(c) if c > 0 && r.cells[c].is_spacer() => Some(c - 1),
            c => c,
        };
        let (mut i, mut col, mut marked, mut last) = (0, start, start, 0);
        // The bytes written since the last mark, for the row's kept text.
        let mut run = 0;
        let printable = |b: &u8| (0x20..0x7f).contains(b);
        while let Some(&b) = text.get(i) {
            let word = word_at(text, i);
            let (cp, len) = if b < 0x80 {
                // A control byte, or the first of two printable ASCII bytes
                // (the parser's ASCII path takes those).
                if !printable(&b) || printable(&((word >> 8) as u8)) {
                    break;
                }
                (u32::from(b), 1)
            } else {
                match decode_word(word) {
                    Some(d) => d,
                    None => break,
                }
            };
            let w = width_in(table, cp);
            if w == 0 {
                // Marks of the cells written so far are cleared first, and
                // their text goes before the mark's.
                r.clear_marks(marked, col);
                if keep {
                    r.text_put(marked, col, &text[run..i]);
                }
                marked = col;
                if let (Some(b), Some(m)) = (base, char::from_u32(cp)) {
                    r.add_mark(b, m);
                }
                i += len;
                run = i;
                continue;
            }
            // Without autowrap the last column is rewritten in place by
            // every character that reaches it: [`Term::print`] does that.
            if col + w + usize::from(!autowrap) > cols
                || (col < clean && r.cells[col].flags | r.cells[col + w - 1].flags != 0)
            {
                break;
            }
            // The glyph is the character's bytes as they came.
            put_cell(&mut r.cells, col, word & u32::MAX >> (32 - 8 * len), w, pen);
            (base, last) = (Some(col), cp);
            col += w;
            i += len;
        }
        if col > start {
            // Only ASCII takes one byte per cell (and marks take bytes
            // but no cell): all of it was ASCII if the counts agree.
            let ascii = i == col - start;
            r.clear_marks(marked, col);
            if keep {
                r.text_put(marked, col, &text[run..i]);
            }
            r.touch(col, ascii, pen != Pen::default());
            self.last_char = char::from_u32(last);
            self.advance(col - start);
        }
        i
    }

    #[inline]
    fn advance(&mut self, w: usize) {
        self.col += w;
        if self.col >= self.cols {
            self.col = self.cols - 1;
            self.pending_wrap = self.autowrap;
        }
    }

    /// Printable ASCII with no charset mapping and no insert mode: copy
    /// whole spans of cells at a time.
    pub fn print_ascii(&mut self, mut s: &[u8]) {
        if self.insert || !self.autowrap || self.charsets[self.gl] != Charset::Ascii {
            for &b in s {
                self.print(char::from(b));
            }
            return;
        }
        let Some(&last) = s.last() else { return };
        self.last_char = Some(char::from(last));
        let pen = self.pen;
        while !s.is_empty() {
            self.wrap_if_pending();
            let (row, col) = (self.row, self.col);
            let n = s.len().min(self.cols - col);
            let (chunk, rest) = s.split_at(n);
            self.split_wide(row, col, col + n);
            self.write_ascii(row, col, chunk, pen);
            self.advance(n);
            s = rest;
        }
    }

    #[inline]
    fn write_ascii(&mut self, row: usize, col: usize, bytes: &[u8], pen: Pen) {
        let r = &mut self.grid[row];
        r.cells_for_text(self.cols);
        r.clear_marks(col, col + bytes.len());
        r.touch(col + bytes.len(), true, pen != Pen::default());
        if !r.plain && !r.styled {
            r.text_put(col, col + bytes.len(), bytes);
        }
        let base = Cell::new(' ', pen);
        let cell = |b: u8| Cell {
            glyph: u32::from(b),
            ..base
        };
        let cells = &mut r.cells[col..col + bytes.len()];
        // Four at a time: a quarter of the loop overhead per cell.
        let mut dst = cells.chunks_exact_mut(4);
        let mut src = bytes.chunks_exact(4);
        for (d, s) in dst.by_ref().zip(src.by_ref()) {
            d[0] = cell(s[0]);
            d[1] = cell(s[1]);
            d[2] = cell(s[2]);
            d[3] = cell(s[3]);
        }
        for (d, &b) in dst.into_remainder().iter_mut().zip(src.remainder()) {
            *d = cell(b);
        }
    }

    fn add_combining(&mut self, c: char) {
        let mut col = if self.pending_wrap {
            self.col
        } else if self.col > 0 {
            self.col - 1
        } else {
            return;
        };
        let cols = self.cols;
        let r = &mut self.grid[self.row];
        if r.cells_for_text(cols)[col].is_spacer() && col > 0 {
            col -= 1;
        }
        r.add_mark(col, c);
    }

    /// REP: repeat the last printed character.
    pub fn repeat(&mut self, n: usize) {
        if let Some(c) = self.last_char {
            let n = n.min(self.cols * self.rows);
            for _ in 0..n {
                self.print(c);
            }
        }
    }

    // ---- line feeds and scrolling ---------------------------------------

    /// Move down a line, scrolling at the bottom margin; the column stays.
    pub(crate) fn linefeed_only(&mut self) {
        if self.row == self.bottom {
            self.scroll_up(1);
        } else if self.row + 1 < self.rows {
            self.row += 1;
        }
    }

    /// LF, VT, FF and IND.
    pub fn linefeed(&mut self) {
        self.pending_wrap = false;
        self.linefeed_only();
        if self.newline {
            self.col = 0;
        }
    }

    /// RI: up a line, scrolling down at the top margin.
    pub fn reverse_index(&mut self) {
        self.pending_wrap = false;
        self.rewinds += 1;
        if self.row == self.top {
            self.scroll_down(1);
        } else if self.row > 0 {
            self.row -= 1;
        }
    }

    /// Scroll the region up `n` lines. Lines leaving the top of the whole
    /// primary screen go to the scrollback.
    pub fn scroll_up(&mut self, n: usize) {
        let (top, bottom) = (self.top, self.bottom);
        let n = n.min(bottom - top + 1);
        let history = top == 0 && !self.modes.alt_screen;
        let fill = self.blank();
        for r in self.grid.range_mut(top..top + n) {
            if history {
                self.scrollback.push_and_reset(r, self.cols, fill);
            } else {
                r.reset(self.cols, fill);
            }
        }
        if top == 0 && bottom + 1 == self.grid.len() {
            self.grid.rotate_left(n);
        } else {
            rotate_rows_left(&mut self.grid, top, bottom, n);
        }
    }

    /// Scroll the region down `n` lines (blank lines appear at the top).
    pub fn scroll_down(&mut self, n: usize) {
        let (top, bottom) = (self.top, self.bottom);
        let n = n.min(bottom - top + 1);
        let fill = self.blank();
        for r in self.grid.range_mut(bottom + 1 - n..=bottom) {
            r.reset(self.cols, fill);
        }
        if top == 0 && bottom + 1 == self.grid.len() {
            self.grid.rotate_right(n);
        } else {
            rotate_rows_left(&mut self.grid, top, bottom, bottom + 1 - top - n);
        }
    }

    // ---- cursor motion --------------------------------------------------

    pub fn carriage_return(&mut self) {
        self.pending_wrap = false;
        self.col = 0;
    }

    pub fn backspace(&mut self) {
        self.pending_wrap = false;
        self.col = self.col.saturating_sub(1);
    }

    // Tabs keep a pending wrap, as xterm, alacritty and tmux do: a field of
    // `cat`ed columns that ends in the last column stays, and the next one
    // starts the next line.
    pub fn tab_forward(&mut self, n: usize) {
        for _ in 0..n.min(self.cols) {
            let next = (self.col + 1..self.cols).find(|&c| self.tabs[c]);
            self.col = next.unwrap_or(self.cols - 1);
        }
    }

    pub fn tab_backward(&mut self, n: usize) {
        for _ in 0..n.min(self.cols) {
            let prev = (0..self.col).rev().find(|&c| self.tabs[c]);
            self.col = prev.unwrap_or(0);
        }
    }

    /// Move to an absolute position; `row` is relative to the top margin in
    /// origin mode.
    pub fn goto(&mut self, row: usize, col: usize) {
        self.pending_wrap = false;
        let (min, max) = if self.origin {
            (self.top, self.bottom)
        } else {
            (0, self.rows - 1)
        };
        let to = (min + row).min(max);
        self.rewinds += u64::from(to < self.row);
        self.row = to;
        self.col = col.min(self.cols - 1);
    }

    pub fn goto_row(&mut self, row: usize) {
        let col = self.col;
        self.goto(row, col);
    }

    pub fn goto_col(&mut self, col: usize) {
        self.pending_wrap = false;
        self.col = col.min(self.cols - 1);
    }

    /// Cursor row as origin mode reports it.
    pub fn report_row(&self) -> usize {
        if self.origin {
            self.row.saturating_sub(self.top)
        } else {
            self.row
        }
    }

    /// CUU: up, stopping at the top margin when starting inside the region.
    pub fn move_up(&mut self, n: usize) {
        self.pending_wrap = false;
        let limit = if self.row >= self.top { self.top } else { 0 };
        let to = self.row.saturating_sub(n).max(limit);
        self.rewinds += u64::from(to < self.row);
        self.row = to;
    }

    /// CUD: down, stopping at the bottom margin when starting inside it.
    pub fn move_down(&mut self, n: usize) {
        self.pending_wrap = false;
        let limit = if self.row <= self.bottom {
            self.bottom
        } else {
            self.rows - 1
        };
        self.row = self.row.saturating_add(n).min(limit);
    }

    pub fn move_right(&mut self, n: usize) {
        self.pending_wrap = false;
        self.col = self.col.saturating_add(n).min(self.cols - 1);
    }

    pub fn move_left(&mut self, n: usize) {
        self.pending_wrap = false;
        self.col = self.col.saturating_sub(n);
    }

    pub fn set_scroll_region(&mut self, top: usize, bottom: usize) {
        let bottom = if bottom == 0 {
            self.rows - 1
        } else {
            (bottom - 1).min(self.rows - 1)
        };
        let top = top.saturating_sub(1);
        if top < bottom {
            self.top = top;
            self.bottom = bottom;
            self.goto(0, 0);
        }
    }

    // ---- erasing and editing --------------------------------------------

    fn erase_cells(&mut self, row: usize, start: usize, end: usize) {
        let end = end.min(self.cols);
        if start >= end {
            return;
        }
        self.split_wide(row, start, end);
        let (fill, cols) = (self.blank(), self.cols);
        let r = &mut self.grid[row];
        if fill == Cell::BLANK && r.is_lazy() {
            return;
        }
        r.cells_mut(cols)[start..end].fill(fill);
        if fill != Cell::BLANK {
            r.touch(end, false, true);
        }
        r.clear_marks(start, end);
    }

    fn erase_row(&mut self, row: usize) {
        let fill = self.blank();
        let cols = self.cols;
        self.grid[row].erase(cols, fill);
    }

    /// EL.
    pub fn erase_in_line(&mut self, mode: u16) {
        self.pending_wrap = false;
        let (row, col) = (self.row, self.col);
        match mode {
            0 => {
                self.erase_cells(row, col, self.cols);
                self.grid[row].wrapped = false;
            }
            1 => self.erase_cells(row, 0, col + 1),
            2 => self.erase_row(row),
            _ => {}
        }
    }

    /// ED.
    pub fn erase_in_display(&mut self, mode: u16) {
        match mode {
            0 => {
                self.erase_in_line(0);
                for r in self.row + 1..self.rows {
                    self.erase_row(r);
                }
            }
            1 => {
                self.erase_in_line(1);
                for r in 0..self.row {
                    self.erase_row(r);
                }
            }
            2 => {
                self.pending_wrap = false;
                self.rewinds += 1;
                for r in 0..self.rows {
                    self.erase_row(r);
                }
            }
            3 => self.scrollback.clear(),
            _ => {}
        }
    }

    /// ECH: blank `n` cells from the cursor without moving it.
    pub fn erase_chars(&mut self, n: usize) {
        self.pending_wrap = false;
        let (row, col) = (self.row, self.col);
        self.erase_cells(row, col, col.saturating_add(n));
    }

    /// Shift the cursor's row right by `n` cells from the cursor (ICH, and
    /// printing in insert mode).
    fn insert_blanks(&mut self, n: usize) {
        let (row, col, cols) = (self.row, self.col, self.cols);
        let n = n.min(cols - col);
        self.split_wide(row, col, col);
        let fill = self.blank();
        let r = &mut self.grid[row];
        if fill == Cell::BLANK && r.is_lazy() {
            return;
        }
        r.cells_mut(cols);
        let extent = (r.extent() + n).min(cols);
        r.touch(extent, true, false);
        if fill != Cell::BLANK {
            r.touch(col + n, false, true);
        }
        r.cells[col..].rotate_right(n);
        r.cells[col..col + n].fill(fill);
        r.shift_marks(col, n as isize, cols);
        if let Some(last) = r.cells.last_mut() {
            if last.is_wide() {
                *last = Cell::erased(last.pen());
            }
        }
    }

    pub fn insert_chars(&mut self, n: usize) {
        self.pending_wrap = false;
        self.insert_blanks(n);
    }

    /// DCH.
    pub fn delete_chars(&mut self, n: usize) {
        self.pending_wrap = false;
        let (row, col, cols) = (self.row, self.col, self.cols);
        let n = n.min(cols - col);
        self.split_wide(row, col, col + n);
        let fill = self.blank();
        let r = &mut self.grid[row];
        if fill == Cell::BLANK && r.is_lazy() {
            return;
        }
        r.cells_mut(cols);
        r.clear_marks(col, col + n);
        if fill != Cell::BLANK {
            r.touch(cols, false, true);
        }
        r.cells[col..].rotate_left(n);
        r.cells[cols - n..].fill(fill);
        r.shift_marks(col + n, -(n as isize), cols);
        if r.cells[col].is_spacer() {
            r.cells[col] = Cell::erased(r.cells[col].pen());
        }
    }

    /// IL: insert blank lines at the cursor, inside the scroll region.
    pub fn insert_lines(&mut self, n: usize) {
        self.pending_wrap = false;
        if self.row < self.top || self.row > self.bottom {
            return;
        }
        let saved_top = self.top;
        self.top = self.row;
        self.scroll_down(n);
        self.top = saved_top;
        self.col = 0;
    }

    /// DL: delete lines at the cursor, inside the scroll region.
    pub fn delete_lines(&mut self, n: usize) {
        self.pending_wrap = false;
        if self.row < self.top || self.row > self.bottom {
            return;
        }
        let saved_top = self.top;
        self.top = self.row;
        // Deleted lines never go to the scrollback: pretend alt for that.
        let alt = self.modes.alt_screen;
        self.modes.alt_screen = true;
        self.scroll_up(n);
        self.modes.alt_screen = alt;
        self.top = saved_top;
        self.col = 0;
    }

    /// DECALN: fill the screen with `E`, reset margins, home the cursor.
    pub fn screen_alignment(&mut self) {
        self.top = 0;
        self.bottom = self.rows - 1;
        for r in &mut self.grid {
            r.reset(self.cols, Cell::new('E', Pen::default()));
        }
        self.goto(0, 0);
    }

    // ---- saved cursor, alternate screen, resets -------------------------

    pub fn save_cursor(&mut self) {
        let slot = usize::from(self.modes.alt_screen);
        self.saved[slot] = SavedCursor {
            row: self.row,
            col: self.col,
            pending_wrap: self.pending_wrap,
            pen: self.pen,
            origin: self.origin,
            charsets: self.charsets,
            gl: self.gl,
        };
    }

    pub fn restore_cursor(&mut self) {
        let s = self.saved[usize::from(self.modes.alt_screen)];
        self.origin = s.origin;
        self.row = s.row.min(self.rows - 1);
        self.col = s.col.min(self.cols - 1);
        self.pending_wrap = s.pending_wrap && self.autowrap;
        self.pen = s.pen;
        self.charsets = s.charsets;
        self.gl = s.gl;
    }

    /// Switch between the primary and alternate screens. Entering clears the
    /// alternate screen when `clear` is set (1047, 1049); leaving 1047
    /// clears it before switching back.
    pub fn set_alt_screen(&mut self, on: bool, clear: bool) {
        if on == self.modes.alt_screen {
            return;
        }
        if !on && clear {
            self.clear_grid();
        }
        if on && self.other.len() != self.rows {
            self.other = (0..self.rows).map(|_| Row::new(self.cols)).collect();
        }
        std::mem::swap(&mut self.grid, &mut self.other);
        self.modes.alt_screen = on;
        if on && clear {
            self.clear_grid();
        }
        // The cursor, pending wrap included, carries over (xterm): a DECSC
        // right after `?1049h` saves it (alacritty's `saved_cursor_alt`).
    }

    fn clear_grid(&mut self) {
        let fill = self.blank();
        for r in &mut self.grid {
            r.erase(self.cols, fill);
        }
    }

    /// DECSTR: modes and pen back to defaults, screen contents kept.
    pub fn soft_reset(&mut self) {
        self.modes.cursor_visible = true;
        self.modes.app_cursor_keys = false;
        self.modes.app_keypad = false;
        self.insert = false;
        self.origin = false;
        self.autowrap = true;
        self.top = 0;
        self.bottom = self.rows - 1;
        self.pen = Pen::default();
        self.charsets = [Charset::Ascii; 4];
        self.gl = 0;
        self.saved = [SavedCursor::default(); 2];
        self.pending_wrap = false;
    }

    /// XTWINOPS 22 (push) and 23 (pop) with `which`: 0 both titles, 1 the
    /// icon's, 2 the window's. A push saves both; a pop restores those
    /// asked for.
    pub fn title_stack(&mut self, push: bool, which: u16) {
        if push {
            if self.titles.len() < TITLE_STACK {
                self.titles
                    .push((self.title.clone(), self.icon_title.clone()));
            }
        } else if let Some((title, icon)) = self.titles.pop() {
            if which != 1 {
                self.title = title;
            }
            if which != 2 {
                self.icon_title = icon;
            }
        }
    }

    /// RIS: everything but the scrollback and title back to power-on.
    pub fn full_reset(&mut self) {
        let fresh = Term::new(self.cols, self.rows, 0);
        let scrollback = std::mem::replace(&mut self.scrollback, Scrollback::new(0));
        let answers = std::mem::take(&mut self.answers);
        let title = std::mem::take(&mut self.title);
        let icon = std::mem::take(&mut self.icon_title);
        *self = fresh;
        self.scrollback = scrollback;
        self.answers = answers;
        self.title = title;
        self.icon_title = icon;
    }
}

/// Titles XTWINOPS 22 keeps (xterm's depth); a deeper push is ignored.
const TITLE_STACK: usize = 10;

/// The longest setting name a DECRQSS request is read for (the known ones
/// are one or two bytes); a longer one is answered as unknown.
pub(crate) const DECRQSS_NAME: usize = 4;

/// Rotate rows `top..=bottom` of the grid left by `n` (the first `n` move
/// to the end) with three reversals, i.e. row swaps. A slice's `rotate_*`
/// (after `make_contiguous`) moves the rows with an overlapping `memmove`,
/// which musl does backwards with `rep movsq`: a tenth of the time of a
/// full-screen program scrolling a region in the static build. Swapping
/// 64-byte rows costs about as many stores and calls nothing.
fn rotate_rows_left(grid: &mut VecDeque<Row>, top: usize, bottom: usize, n: usize) {
    let reverse = |grid: &mut VecDeque<Row>, mut lo: usize, mut hi: usize| {
        while lo < hi {
            grid.swap(lo, hi);
            lo += 1;
            hi -= 1;
        }
    };
    if n == 0 || n > bottom - top {
        return;
    }
    reverse(grid, top, top + n - 1);
    reverse(grid, top + n, bottom);
    reverse(grid, top, bottom);
}

/// Write the character `glyph` (its UTF-8 bytes, see [`Cell::glyph`]), `w`
/// cells wide (1 or 2), at `col`: a wide character is its cell and a
/// spacer after it.
#[inline(always)]
fn put_cell(cells: &mut [Cell], col: usize, glyph: u32, w: usize, pen: Pen) {
    let mut cell = Cell::with_glyph(glyph, pen);
    if w == 2 {
        cell.flags = WIDE;
        cells[col] = cell;
        cell.glyph = u32::from(b' ');
        cell.flags = SPACER;
        cells[col + 1] = cell;
    } else {
        cells[col] = cell;
    }
}

#[cfg(test)]
mod tests {
    use super::{rotate_rows_left, Row};
    use std::collections::VecDeque;

    /// The swap rotation agrees with a slice rotation for every region and
    /// count, also on a ring whose start is not at the front of its buffer
    /// (as after whole-screen scrolls).
    #[test]
    fn rotate_rows_matches_slice_rotate() {
        let len = 7;
        for head in 0..len {
            for top in 0..len {
                for bottom in top..len {
                    for n in 0..=bottom - top + 1 {
                        let mut grid: VecDeque<Row> = (0..len)
                            .map(|i| {
                                let mut r = Row::new(1);
                                r.set_extent(i);
                                r
                            })
                            .collect();
                        grid.rotate_left(head);
                        let mut want: Vec<usize> = grid.iter().map(|r| r.extent()).collect();
                        want[top..=bottom].rotate_left(n % (bottom - top + 1));
                        rotate_rows_left(&mut grid, top, bottom, n);
                        let got: Vec<usize> = grid.iter().map(|r| r.extent()).collect();
                        assert_eq!(got, want, "head {head} rows {top}..={bottom} by {n}");
                    }
                }
            }
        }
    }
}
