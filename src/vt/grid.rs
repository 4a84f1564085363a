//! Rows of cells, and the compact lines the scrollback keeps.
//!
//! A visible [`Row`] is a plain `Vec<Cell>` (fast to overwrite). A row that
//! scrolls off the top becomes a [`Line`]: its text as UTF-8 plus style runs,
//! trailing blanks trimmed. An 80-column line of plain text costs about 130
//! bytes that way (with its slot in the queue), against 1280 as cells, which is what keeps 10,000 lines of
//! history under a couple of MiB.

use std::collections::VecDeque;

use super::cell::{char_width, Cell, Pen, SPACER, WIDE};

/// Most combining marks kept on one cell; a flood of them is dropped.
const MAX_MARKS: usize = 16;

/// One row of the visible grid.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Row {
    pub cells: Vec<Cell>,
    /// The row's last cell was followed by an automatic wrap: the next row
    /// continues the same logical line (what reflow on resize joins).
    pub wrapped: bool,
    /// Combining marks by column, in order, for the rare cells that have
    /// them (one entry per mark: no allocation per mark).
    pub marks: Vec<(u16, char)>,
    /// Every cell from here on is `Cell::BLANK` (an upper bound: trimming
    /// and clearing need not look further).
    pub extent: usize,
    /// Every cell is ASCII in the default pen, with no marks: the row can be
    /// stored in the scrollback as its bytes.
    pub plain: bool,
}

impl Row {
    pub fn new(cols: usize) -> Row {
        Row {
            cells: vec![Cell::BLANK; cols],
            wrapped: false,
            marks: Vec::new(),
            extent: 0,
            plain: true,
        }
    }

    /// Blank the whole row with `fill`, keeping its allocation.
    pub fn reset(&mut self, cols: usize, fill: Cell) {
        if fill == Cell::BLANK && self.cells.len() == cols {
            let end = self.extent.min(cols);
            self.cells[..end].fill(fill);
            self.extent = 0;
            self.plain = true;
        } else {
            self.cells.clear();
            self.cells.resize(cols, fill);
            self.extent = if fill == Cell::BLANK { 0 } else { cols };
            self.plain = fill.flags == 0 && fill.ch.is_ascii() && fill.pen() == Pen::default();
        }
        self.wrapped = false;
        self.marks.clear();
    }

    /// Note a write of cells up to `end`; `plain` says whether they were
    /// ASCII in the default pen.
    #[inline]
    pub fn touch(&mut self, end: usize, plain: bool) {
        if end > self.extent {
            self.extent = end.min(self.cells.len());
        }
        self.plain &= plain;
    }

    /// Forget the combining marks of columns `start..end`.
    #[inline]
    pub fn clear_marks(&mut self, start: usize, end: usize) {
        let hit = |&(c, _): &(u16, char)| (start..end).contains(&(c as usize));
        if self.marks.iter().any(hit) {
            self.marks.retain(|m| !hit(m));
        }
    }

    pub fn has_mark(&self, col: usize) -> bool {
        self.marks.iter().any(|&(c, _)| c as usize == col)
    }

    /// Append the combining marks of `col` to `out`.
    #[inline]
    pub fn push_marks(&self, col: usize, out: &mut String) {
        for &(c, m) in &self.marks {
            if c as usize == col {
                out.push(m);
            }
        }
    }

    /// Append a combining mark to the cell at `col` (bounded per cell, so a
    /// flood of marks cannot grow a row without limit).
    pub fn add_mark(&mut self, col: usize, c: char) {
        self.plain = false;
        let col16 = col as u16;
        if self.marks.iter().filter(|&&(k, _)| k == col16).count() < MAX_MARKS {
            self.marks.push((col16, c));
        }
    }

    /// Shift the marks of columns >= `from` by `delta`, dropping those that
    /// fall outside `0..cols` or into `from..from+delta` when shifting left.
    pub fn shift_marks(&mut self, from: usize, delta: isize, cols: usize) {
        if self.marks.is_empty() {
            return;
        }
        self.marks.retain_mut(|(c, _)| {
            let col = *c as usize;
            if col < from {
                return true;
            }
            let n = col as isize + delta;
            if n < from as isize || n >= cols as isize {
                return false;
            }
            *c = n as u16;
            true
        });
    }

    /// Cells up to the last one that is not a default blank.
    pub fn trimmed_len(&self) -> usize {
        let mut n = self.extent.min(self.cells.len());
        while n > 0 && self.cells[n - 1] == Cell::BLANK && !self.has_mark(n - 1) {
            n -= 1;
        }
        n
    }

    /// The row's text: trailing blanks trimmed, wide-character spacers
    /// skipped, combining marks kept.
    pub fn text(&self) -> String {
        let mut s = String::with_capacity(self.cells.len());
        for (i, cell) in self.cells.iter().enumerate() {
            if cell.is_spacer() {
                continue;
            }
            s.push(cell.ch);
            self.push_marks(i, &mut s);
        }
        let t = s.trim_end_matches(' ').len();
        s.truncate(t);
        s
    }

    /// Make the row `cols` wide without reflowing: cut or pad, never leaving
    /// half of a wide character.
    pub fn set_width(&mut self, cols: usize) {
        self.extent = self.extent.min(cols);
        if cols < self.cells.len() {
            self.cells.truncate(cols);
            if let Some(last) = self.cells.last_mut() {
                if last.is_wide() {
                    *last = Cell::erased(last.pen());
                }
            }
            self.marks.retain(|&(c, _)| (c as usize) < cols);
        } else {
            self.cells.resize(cols, Cell::BLANK);
        }
    }
}

impl Row {
    /// Check the invariants the fast paths rely on (for tests).
    pub fn check(&self) -> Result<(), String> {
        if let Some(i) = self.cells[self.extent.min(self.cells.len())..]
            .iter()
            .position(|c| *c != Cell::BLANK)
        {
            return Err(format!(
                "cell {} past extent {} is not blank",
                self.extent + i,
                self.extent
            ));
        }
        if self.plain
            && (!self.marks.is_empty()
                || self
                    .cells
                    .iter()
                    .any(|c| !c.ch.is_ascii() || c.flags != 0 || c.pen() != Pen::default()))
        {
            return Err("row marked plain is not".into());
        }
        for (i, c) in self.cells.iter().enumerate() {
            let next_is_spacer = self.cells.get(i + 1).is_some_and(Cell::is_spacer);
            if c.is_wide() != next_is_spacer {
                return Err(format!("wide cell {i} and its spacer disagree"));
            }
        }
        Ok(())
    }
}

/// A row in the scrollback: text plus style runs, trailing blanks trimmed.
///
/// Both parts are boxed slices of exactly their length: no spare capacity to
/// account for, and 40 bytes per line in the queue.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Line {
    /// Each cell's character and combining marks as UTF-8 (valid by
    /// construction: only whole characters are ever encoded into it); wide
    /// spacers omitted. Bytes rather than a `str`, so making a line costs no
    /// validation pass.
    text: Box<[u8]>,
    /// (cells, pen) runs over the cells, spacers counted; empty when every
    /// cell has the default pen.
    runs: Box<[(u16, Pen)]>,
    pub wrapped: bool,
}

/// Write `c` as UTF-8 at `buf[pos..]`, which has room for four bytes (else
/// nothing is written); returns its length. Plain stores, where
/// `encode_utf8` would check the room and call `memcpy`.
#[inline]
fn put_utf8(buf: &mut [u8], pos: usize, c: char) -> usize {
    let Some(w) = buf.get_mut(pos..pos + 4) else {
        return 0;
    };
    let c = c as u32;
    if c < 0x80 {
        w[0] = c as u8;
        1
    } else if c < 0x800 {
        w[0] = 0xc0 | (c >> 6) as u8;
        w[1] = 0x80 | (c & 0x3f) as u8;
        2
    } else if c < 0x10000 {
        w[0] = 0xe0 | (c >> 12) as u8;
        w[1] = 0x80 | ((c >> 6) & 0x3f) as u8;
        w[2] = 0x80 | (c & 0x3f) as u8;
        3
    } else {
        w[0] = 0xf0 | (c >> 18) as u8;
        w[1] = 0x80 | ((c >> 12) & 0x3f) as u8;
        w[2] = 0x80 | ((c >> 6) & 0x3f) as u8;
        w[3] = 0x80 | (c & 0x3f) as u8;
        4
    }
}

/// Buffers reused from one line to the next while encoding rows.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scratch {
    text: Vec<u8>,
    runs: Vec<(u16, Pen)>,
}

impl Line {
    /// Encode a visible row. The common row, ASCII in the default pen, is a
    /// single pass that gathers the character bytes into an exact-size
    /// allocation; anything else goes through `scratch` and is copied out.
    pub fn encode(row: &Row, scratch: &mut Scratch) -> Line {
        let n = row.trimmed_len();
        let cells = &row.cells[..n];
        if row.plain {
            let text: Vec<u8> = cells.iter().map(|c| c.ch as u8).collect();
            return Line {
                text: text.into_boxed_slice(),
                runs: Box::default(),
                wrapped: row.wrapped,
            };
        }
        let Scratch { text, runs } = scratch;
        runs.clear();
        // Room for every cell and mark at four bytes each: encoding then
        // writes into a slice, with no capacity check per character.
        text.clear();
        text.resize((n + row.marks.len()) * 4, 0);
        let mut pos = 0;
        let mut pen = cells.first().map(Cell::pen).unwrap_or_default();
        let mut len = 0u16;
        // Marks are kept in the order they were written, which is by column
        // unless a program went back; then each cell looks at all of them.
        let marks = &row.marks[..];
        let sorted = marks.windows(2).all(|w| w[0].0 <= w[1].0);
        let mut next_mark = 0;
        for (i, cell) in cells.iter().enumerate() {
            let p = cell.pen();
            if p != pen {
                runs.push((len, pen));
                pen = p;
                len = 0;
            }
            len += 1;
            if cell.flags & SPACER != 0 {
                continue;
            }
            pos += put_utf8(text, pos, cell.ch);
            if marks.is_empty() {
                continue;
            }
            if sorted {
                while let Some(&(c, m)) = marks.get(next_mark) {
                    if c as usize > i {
                        break;
                    }
                    if c as usize == i {
                        pos += put_utf8(text, pos, m);
                    }
                    next_mark += 1;
                }
            } else {
                for &(c, m) in marks {
                    if c as usize == i {
                        pos += put_utf8(text, pos, m);
                    }
                }
            }
        }
        // One run of the default pen is stored as no runs at all.
        if !(runs.is_empty() && pen == Pen::default()) {
            runs.push((len, pen));
        }
        Line {
            text: text[..pos].into(),
            runs: runs.as_slice().into(),
            wrapped: row.wrapped,
        }
    }

    /// The text as a `str` (always valid UTF-8; see `text`).
    fn str(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.text)
    }

    /// The cells this line was made from (trimmed), and its marks.
    pub fn to_row(&self) -> Row {
        let mut row = Row {
            cells: Vec::with_capacity(self.text.len()),
            wrapped: self.wrapped,
            marks: Vec::new(),
            extent: 0,
            plain: false,
        };
        let mut runs = self.runs.iter();
        let mut left = 0u16;
        let mut pen = Pen::default();
        let mut next_pen = |runs: &mut std::slice::Iter<'_, (u16, Pen)>| -> Pen {
            if left == 0 {
                if let Some(&(n, p)) = runs.next() {
                    left = n;
                    pen = p;
                } else {
                    pen = Pen::default();
                    left = u16::MAX;
                }
            }
            left = left.saturating_sub(1);
            pen
        };
        for c in self.str().chars() {
            let w = char_width(c);
            if w == 0 {
                if let Some(col) = row.cells.iter().rposition(|c| !c.is_spacer()) {
                    row.add_mark(col, c);
                }
                continue;
            }
            let mut cell = Cell::new(c, next_pen(&mut runs));
            if w == 2 {
                cell.flags = WIDE;
                row.cells.push(cell);
                let mut spacer = Cell::new(' ', next_pen(&mut runs));
                spacer.flags = SPACER;
                row.cells.push(spacer);
            } else {
                row.cells.push(cell);
            }
        }
        row.extent = row.cells.len();
        row
    }

    pub fn text(&self) -> String {
        self.str().trim_end_matches(' ').to_string()
    }

    /// Heap bytes this line holds, counting its own slot in the queue.
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Line>()
            + self.text.len()
            + self.runs.len() * std::mem::size_of::<(u16, Pen)>()
    }
}

/// The primary screen's history: a bounded queue of lines, oldest first.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scrollback {
    lines: VecDeque<Line>,
    limit: usize,
    scratch: Scratch,
}

impl Scrollback {
    pub fn new(limit: usize) -> Scrollback {
        Scrollback {
            lines: VecDeque::new(),
            limit,
            scratch: Scratch::default(),
        }
    }

    /// Push a visible row that scrolled off, dropping the oldest line when
    /// the history is full.
    pub fn push_row(&mut self, row: &Row) {
        if self.limit == 0 {
            return;
        }
        let line = Line::encode(row, &mut self.scratch);
        self.push(line);
    }

    pub fn push(&mut self, line: Line) {
        if self.limit == 0 {
            return;
        }
        if self.lines.len() >= self.limit {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn get(&self, i: usize) -> Option<&Line> {
        self.lines.get(i)
    }

    /// Heap bytes held by the history (line slots and scratch included).
    pub fn heap_bytes(&self) -> usize {
        let slack = self.lines.capacity() - self.lines.len();
        self.lines.iter().map(Line::heap_bytes).sum::<usize>()
            + slack * std::mem::size_of::<Line>()
            + self.scratch.text.capacity()
            + self.scratch.runs.capacity() * std::mem::size_of::<(u16, Pen)>()
    }

    pub fn pop_back(&mut self) -> Option<Line> {
        self.lines.pop_back()
    }

    pub fn clear(&mut self) {
        self.lines = VecDeque::new();
    }

    /// Take every line out (for reflow), leaving the history empty.
    pub fn take(&mut self) -> VecDeque<Line> {
        std::mem::take(&mut self.lines)
    }
}
