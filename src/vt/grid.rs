//! Rows of cells, and the compact lines the scrollback keeps.
//!
//! A visible [`Row`] is a plain `Vec<Cell>` (fast to overwrite). A row that
//! scrolls off the top becomes a [`Line`]: its text as UTF-8 plus style runs,
//! trailing blanks trimmed. An 80-column line of plain text costs about 150
//! bytes that way, against 1280 as cells, which is what keeps 10,000 lines of
//! history under a couple of MiB.

use std::collections::VecDeque;

use super::cell::{char_width, Cell, Pen, SPACER, WIDE};

/// One row of the visible grid.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Row {
    pub cells: Vec<Cell>,
    /// The row's last cell was followed by an automatic wrap: the next row
    /// continues the same logical line (what reflow on resize joins).
    pub wrapped: bool,
    /// Combining marks by column, for the rare cells that have them.
    pub marks: Vec<(u16, String)>,
}

impl Row {
    pub fn new(cols: usize) -> Row {
        Row {
            cells: vec![Cell::BLANK; cols],
            wrapped: false,
            marks: Vec::new(),
        }
    }

    /// Blank the whole row with `fill`, keeping its allocation.
    pub fn reset(&mut self, cols: usize, fill: Cell) {
        self.cells.clear();
        self.cells.resize(cols, fill);
        self.wrapped = false;
        self.marks.clear();
    }

    /// Forget the combining marks of columns `start..end`.
    #[inline]
    pub fn clear_marks(&mut self, start: usize, end: usize) {
        if !self.marks.is_empty() {
            self.marks
                .retain(|&(c, _)| (c as usize) < start || (c as usize) >= end);
        }
    }

    pub fn mark(&self, col: usize) -> Option<&str> {
        self.marks
            .iter()
            .find(|&&(c, _)| c as usize == col)
            .map(|(_, s)| s.as_str())
    }

    /// Append a combining mark to the cell at `col` (bounded per cell, so a
    /// flood of marks cannot grow a row without limit).
    pub fn add_mark(&mut self, col: usize, c: char) {
        let col16 = col as u16;
        if let Some((_, s)) = self.marks.iter_mut().find(|(k, _)| *k == col16) {
            if s.len() < 32 {
                s.push(c);
            }
        } else {
            self.marks.push((col16, c.to_string()));
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
        let mut n = self.cells.len();
        while n > 0 && self.cells[n - 1] == Cell::BLANK && self.mark(n - 1).is_none() {
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
            if !self.marks.is_empty() {
                if let Some(m) = self.mark(i) {
                    s.push_str(m);
                }
            }
        }
        let t = s.trim_end_matches(' ').len();
        s.truncate(t);
        s
    }

    /// Make the row `cols` wide without reflowing: cut or pad, never leaving
    /// half of a wide character.
    pub fn set_width(&mut self, cols: usize) {
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

/// A row in the scrollback: text plus style runs, trailing blanks trimmed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Line {
    /// Each cell's character and combining marks; wide spacers omitted.
    text: Box<str>,
    /// (cells, pen) runs over the cells, spacers counted; empty when every
    /// cell has the default pen.
    runs: Box<[(u16, Pen)]>,
    pub wrapped: bool,
}

impl Line {
    pub fn from_row(row: &Row) -> Line {
        let n = row.trimmed_len();
        let cells = &row.cells[..n];
        let first = cells.first().map(Cell::pen).unwrap_or_default();
        // The common line: ASCII in one style. Two tight passes beat the
        // general loop below several times over.
        if row.marks.is_empty()
            && cells
                .iter()
                .all(|c| (c.ch as u32) < 0x80 && c.flags == 0 && c.pen() == first)
        {
            let bytes: Vec<u8> = cells.iter().map(|c| c.ch as u8).collect();
            let text = String::from_utf8(bytes).unwrap_or_default();
            let runs: Box<[(u16, Pen)]> = if first == Pen::default() {
                Box::new([])
            } else {
                Box::new([(n as u16, first)])
            };
            return Line {
                text: text.into_boxed_str(),
                runs,
                wrapped: row.wrapped,
            };
        }
        let mut text = String::with_capacity(n);
        let mut runs: Vec<(u16, Pen)> = Vec::new();
        let mut pen = cells.first().map(Cell::pen).unwrap_or_default();
        let mut len = 0u16;
        for (i, cell) in cells.iter().enumerate() {
            let p = cell.pen();
            if p == pen {
                len += 1;
            } else {
                runs.push((len, pen));
                pen = p;
                len = 1;
            }
            if cell.flags & SPACER != 0 {
                continue;
            }
            text.push(cell.ch);
            if !row.marks.is_empty() {
                if let Some(m) = row.mark(i) {
                    text.push_str(m);
                }
            }
        }
        // One run of the default pen is stored as no runs at all.
        if !(runs.is_empty() && pen == Pen::default()) {
            runs.push((len, pen));
        }
        Line {
            text: text.into_boxed_str(),
            runs: runs.into_boxed_slice(),
            wrapped: row.wrapped,
        }
    }

    /// The cells this line was made from (trimmed), and its marks.
    pub fn to_row(&self) -> Row {
        let mut row = Row {
            cells: Vec::with_capacity(self.text.len()),
            wrapped: self.wrapped,
            marks: Vec::new(),
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
        for c in self.text.chars() {
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
        row
    }

    pub fn text(&self) -> String {
        self.text.trim_end_matches(' ').to_string()
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
}

impl Scrollback {
    pub fn new(limit: usize) -> Scrollback {
        Scrollback {
            lines: VecDeque::new(),
            limit,
        }
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

    /// Heap bytes held by the history (line slots included).
    pub fn heap_bytes(&self) -> usize {
        let slack = self.lines.capacity() - self.lines.len();
        self.lines.iter().map(Line::heap_bytes).sum::<usize>() + slack * std::mem::size_of::<Line>()
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
