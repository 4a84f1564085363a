//! Resizing: the primary screen reflows wrapped lines (scrollback included)
//! the way xterm and tmux do; the alternate screen is cut or padded, as
//! full-screen programs redraw it anyway.

use std::collections::VecDeque;

use super::cell::{Cell, Pen, WRAP_PAD};
use super::grid::{is_blank_cell, Row, Scrollback};
use super::term::Term;

impl Term {
    pub(crate) fn resize(&mut self, cols: usize, rows: usize) {
        if cols == self.cols && rows == self.rows {
            return;
        }
        let old_cols = self.cols;
        let alt = self.modes.alt_screen;
        let primary_cursor = if alt {
            (self.saved[0].row, self.saved[0].col)
        } else {
            (self.row, self.col)
        };
        let (primary, alternate) = if alt {
            (&mut self.other, &mut self.grid)
        } else {
            (&mut self.grid, &mut self.other)
        };
        let grid = Vec::from(std::mem::take(primary));
        let (new_primary, cursor) = if cols == old_cols {
            resize_rows(grid, &mut self.scrollback, cols, rows, primary_cursor)
        } else {
            reflow(
                grid,
                &mut self.scrollback,
                old_cols,
                cols,
                rows,
                primary_cursor,
            )
        };
        *primary = new_primary.into();
        let alt_row = if alternate.is_empty() {
            0
        } else {
            resize_plain(alternate, cols, rows, if alt { self.row } else { 0 })
        };
        if alt {
            self.saved[0].row = cursor.0;
            self.saved[0].col = cursor.1;
            self.row = alt_row;
        } else {
            self.row = cursor.0;
            self.col = cursor.1;
        }
        self.cols = cols;
        self.rows = rows;
        self.row = self.row.min(rows - 1);
        self.col = self.col.min(cols - 1);
        for s in &mut self.saved {
            s.row = s.row.min(rows - 1);
            s.col = s.col.min(cols - 1);
        }
        self.pending_wrap = false;
        self.top = 0;
        self.bottom = rows - 1;
        let old_tabs = self.tabs.len();
        self.tabs.resize(cols, false);
        for c in old_tabs..cols {
            self.tabs[c] = c % 8 == 0;
        }
    }
}

/// Cut or pad rows and columns without reflow; returns where the cursor row
/// moved (rows are dropped from the bottom unless that would lose it).
fn resize_plain(grid: &mut VecDeque<Row>, cols: usize, rows: usize, cursor_row: usize) -> usize {
    for r in grid.iter_mut() {
        r.set_width(cols);
    }
    let mut cursor_row = cursor_row;
    if grid.len() > rows {
        let excess = grid.len() - rows;
        // Drop from the top only as much as keeps the cursor on screen.
        let from_top = (cursor_row + 1).saturating_sub(rows).min(excess);
        grid.drain(..from_top);
        grid.truncate(rows);
        cursor_row -= from_top;
    }
    while grid.len() < rows {
        grid.push_back(Row::new(cols));
    }
    cursor_row
}

fn is_blank(r: &Row) -> bool {
    r.trimmed_len() == 0
}

/// Same width, new height: shrinking drops blank rows below the cursor and
/// then pushes rows off the top into history; growing pulls history back.
fn resize_rows(
    mut grid: Vec<Row>,
    sb: &mut Scrollback,
    cols: usize,
    rows: usize,
    cursor: (usize, usize),
) -> (Vec<Row>, (usize, usize)) {
    let (mut crow, ccol) = cursor;
    if grid.len() > rows {
        while grid.len() > rows && grid.len() > crow + 1 && grid.last().is_some_and(is_blank) {
            grid.pop();
        }
        let excess = grid.len().saturating_sub(rows);
        for r in grid.drain(..excess) {
            sb.push_row(&r);
        }
        crow = crow.saturating_sub(excess);
        grid.truncate(rows);
    } else {
        let want = rows - grid.len();
        let mut pulled = 0;
        while pulled < want {
            let Some(line) = sb.pop_back() else { break };
            grid.insert(0, line.row(cols));
            pulled += 1;
        }
        crow += pulled;
    }
    while grid.len() < rows {
        grid.push(Row::new(cols));
    }
    (grid, (crow.min(rows - 1), ccol))
}

/// One logical line: rows joined across automatic wraps.
struct Logical {
    cells: Vec<Cell>,
    marks: Vec<(usize, char)>,
    /// The cursor's offset in cells, when it is on this line.
    cursor: Option<usize>,
}

/// New width: rejoin wrapped rows (history included) and wrap them again.
fn reflow(
    grid: Vec<Row>,
    sb: &mut Scrollback,
    old_cols: usize,
    cols: usize,
    rows: usize,
    cursor: (usize, usize),
) -> (Vec<Row>, (usize, usize)) {
    let history = sb.take();
    let history_len = history.len();
    let last_used = grid
        .iter()
        .rposition(|r| !is_blank(r))
        .map_or(cursor.0, |r| r.max(cursor.0));
    let cursor_idx = history_len + cursor.0;
    let old_rows = history
        .into_iter()
        // (Only a padded line is made full width: the rest stay trimmed,
        // which matters for 10,000 lines of history.)
        .map(|l| {
            if l.padded && l.wrapped {
                l.row(old_cols)
            } else {
                l.to_row()
            }
        })
        .chain(grid.into_iter().take(last_used + 1));

    let mut logical: Vec<Logical> = Vec::new();
    let mut open = false;
    for (idx, mut row) in old_rows.enumerate() {
        if !open {
            logical.push(Logical {
                cells: Vec::new(),
                marks: Vec::new(),
                cursor: None,
            });
        }
        let Some(line) = logical.last_mut() else {
            break;
        };
        let base = line.cells.len();
        if idx == cursor_idx {
            line.cursor = Some(base + cursor.1);
        }
        if row.wrapped {
            // A pad is not text: the wide character after it follows on.
            let end = old_cols - usize::from(row.wrap_padded());
            row.cells.resize(old_cols, Cell::BLANK);
            row.cells.truncate(end);
        }
        // A pad moved inside the row (by DCH) is only a blank now.
        for c in &mut row.cells {
            c.flags &= !WRAP_PAD;
        }
        line.marks
            .extend(row.marks.drain(..).map(|(c, m)| (base + c as usize, m)));
        line.cells.extend_from_slice(&row.cells);
        open = row.wrapped;
    }

    let mut out: Vec<Row> = Vec::new();
    let mut new_cursor = (0, 0);
    for mut line in logical {
        let mut n = line.cells.len();
        while n > 0 && is_blank_cell(&line.cells[n - 1]) {
            n -= 1;
        }
        line.cells.truncate(n);
        let first = out.len();
        let mut starts = Vec::new();
        let mut pos = 0;
        loop {
            let mut end = (pos + cols).min(n);
            // Never split a wide character across rows: it goes on the
            // next, and this row ends in a pad.
            let padded = end < n && end > pos + 1 && line.cells[end - 1].is_wide();
            if padded {
                end -= 1;
            }
            let mut r = Row::new(cols);
            let len = end - pos;
            // An empty line stays a row without cells.
            if len > 0 {
                let cells = r.cells_mut(cols);
                cells[..len].copy_from_slice(&line.cells[pos..end]);
                // Only a one-column screen can cut a wide character: blank it.
                if cells[len - 1].is_wide() {
                    cells[len - 1] = Cell::erased(cells[len - 1].pen());
                }
                if cells[0].is_spacer() {
                    cells[0] = Cell::erased(cells[0].pen());
                }
                let styled = cells[..len].iter().any(|c| c.pen() != Pen::default());
                r.touch(len, false, styled);
            }
            r.marks = line
                .marks
                .iter()
                .filter(|(c, _)| (pos..end).contains(c))
                .map(|&(c, m)| ((c - pos) as u16, m))
                .collect();
            starts.push(pos);
            pos = end;
            r.wrapped = pos < n;
            if padded {
                r.pad_wrap(cols);
            }
            out.push(r);
            if pos >= n {
                break;
            }
        }
        if let Some(off) = line.cursor {
            let i = starts.iter().rposition(|&s| s <= off).unwrap_or(0);
            let col = (off - starts[i]).min(cols - 1);
            new_cursor = (first + i, col);
        }
    }

    let total = out.len();
    let start = total.saturating_sub(rows).min(new_cursor.0);
    let mut out = out.into_iter();
    for r in out.by_ref().take(start) {
        sb.push_row(&r);
    }
    let mut visible: Vec<Row> = out.take(rows).collect();
    while visible.len() < rows {
        visible.push(Row::new(cols));
    }
    (visible, (new_cursor.0 - start, new_cursor.1))
}
