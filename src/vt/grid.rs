//! Rows of cells, and the compact history the scrollback keeps.
//!
//! A visible [`Row`] is a plain `Vec<Cell>` (fast to overwrite), or no
//! cells at all while it has never been written: most of an idle session's
//! screen is such rows, which cost nothing (see [`Row::cells_mut`]). A row that
//! scrolls off the top is encoded as its text in UTF-8 plus style runs,
//! trailing blanks trimmed, appended end to end to the [`Scrollback`]'s
//! rings. An 80-column line of plain text costs 88 bytes that way (with its
//! 8-byte slot), against 1280 as cells, which is what keeps 10,000 lines
//! of history under a couple of MiB.

use std::collections::VecDeque;
use std::ops::Range;

use super::cell::{char_width, glyph, glyph_len, Cell, Pen, SPACER, WIDE, WRAP_PAD};
use crate::blocks::Blocks;

/// Most combining marks kept on one cell; a flood of them is dropped.
const MAX_MARKS: usize = 16;

/// One row of the visible grid.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Row {
    /// Either the row's `cols` cells, or none: a row that was never written
    /// (or was erased to default blanks while it held no text) keeps no
    /// cells and reads as `cols` default blanks. Writers go through
    /// [`Row::cells_mut`] (or, keeping the row's text themselves, through
    /// [`Row::cells_for_text`]); readers see an empty slice, past which
    /// every cell is blank anyway.
    pub cells: Vec<Cell>,
    /// The row's last cell was followed by an automatic wrap: the next row
    /// continues the same logical line (what reflow on resize joins).
    pub wrapped: bool,
    /// Combining marks by column, in order, for the rare cells that have
    /// them (one entry per mark: no allocation per mark).
    pub marks: Vec<(u16, char)>,
    /// Every cell from here on is `Cell::BLANK` (an upper bound: trimming
    /// and clearing need not look further).
    ext: u32,
    /// Every cell is ASCII in the default pen, with no marks: the row can be
    /// stored in the scrollback as its bytes.
    pub plain: bool,
    /// Some cell may have a pen other than the default (an upper bound:
    /// false means none has, and history encoding skips the runs).
    pub styled: bool,
    /// The last thing done to the row as a whole was [`Row::erase`] (not a
    /// scroll's [`Row::reset`]): with `extent == 0`, no text since.
    erased: bool,
    /// The row's text as history encodes it (UTF-8, spacers skipped, marks
    /// after their cell, blanks as spaces, not trimmed) for its first
    /// `cols` columns, past which every cell is a default blank with
    /// no mark; kept while the row is only ever written left to right
    /// (text appended where the last ended, or past it over blanks), which
    /// is how nearly every row of output is written. Then a non-ASCII row
    /// goes into history as a copy of this, not encoded cell by cell.
    /// Anything else done to the cells loses it (`cols == NO_TEXT`); it is
    /// taken again from the cells when a plain row (a reset one, say) next
    /// stops being plain. Only rows neither plain nor styled keep it:
    /// a plain row's text is its cells' bytes (taken when it stops being
    /// plain, [`Row::leave_plain`]), and a styled row is encoded with
    /// its runs anyway. [`Row::check`] holds it to the encoder.
    /// Boxed (and allocated only when a row stops being plain), so that a
    /// row stays 64 bytes: scrolling a region swaps rows, and larger ones
    /// are swapped through `memcpy` calls.
    kept: Option<Box<Kept>>,
}

/// A row's kept text (see [`Row::kept`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Kept {
    text: Vec<u8>,
    /// Columns the text covers; [`NO_TEXT`] when it is lost.
    cols: u16,
}

/// [`Kept::cols`] when the row's text is not kept.
const NO_TEXT: u16 = u16::MAX;

impl Row {
    /// A blank row: no cells until the first write.
    pub fn new(_cols: usize) -> Row {
        Row {
            cells: Vec::new(),
            wrapped: false,
            marks: Vec::new(),
            ext: 0,
            plain: true,
            styled: false,
            erased: false,
            kept: None,
        }
    }

    /// The row's `cols` cells, to change in any way: the row's kept text is
    /// lost (see [`Row::kept`]). A row without cells gets them now
    /// (blank; no allocation if it kept its buffer).
    #[inline]
    pub fn cells_mut(&mut self, cols: usize) -> &mut [Cell] {
        self.lose_text();
        self.cells_for_text(cols)
    }

    /// [`Row::cells_mut`] for a writer that keeps the row's text itself
    /// ([`Row::text_put`], [`Row::add_mark`]).
    #[inline]
    pub fn cells_for_text(&mut self, cols: usize) -> &mut [Cell] {
        if self.cells.len() != cols {
            self.materialise(cols);
        }
        &mut self.cells
    }

    /// Cells `col..end` were just written with `bytes` (their characters as
    /// UTF-8, in order, with any marks between them): append to the kept
    /// text if they follow it (blanks between are spaces), else lose it.
    #[inline]
    pub fn text_put(&mut self, col: usize, end: usize, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let Some(k) = &mut self.kept else {
            return;
        };
        // (Columns are at most `limits::COLS`, far below `NO_TEXT`.)
        let kept = usize::from(k.cols);
        if col < kept {
            k.cols = NO_TEXT;
        } else if k.cols != NO_TEXT {
            if col > kept {
                k.text.resize(k.text.len() + col - kept, b' ');
            }
            k.text.extend_from_slice(bytes);
            k.cols = u16::try_from(end).unwrap_or(NO_TEXT);
        }
    }

    /// Bytes held for the row's kept text.
    pub fn text_capacity(&self) -> usize {
        self.kept
            .as_ref()
            .map_or(0, |k| std::mem::size_of::<Kept>() + k.text.capacity())
    }

    /// The kept text, if the row keeps it (see [`Row::kept`]).
    fn kept_text(&self) -> Option<&[u8]> {
        let k = self.kept.as_ref()?;
        (k.cols != NO_TEXT && !self.plain && !self.styled).then_some(&k.text[..])
    }

    /// Stop keeping the row's text (see [`Row::kept`]).
    #[inline]
    pub fn lose_text(&mut self) {
        if let Some(k) = &mut self.kept {
            k.cols = NO_TEXT;
        }
    }

    /// The row is about to hold more than plain text (a non-ASCII or wide
    /// character, a mark): writers call this before they write it. A plain
    /// row's kept text is taken from its cells then (see [`Row::kept`]).
    #[inline]
    pub fn leave_plain(&mut self) {
        if self.plain {
            self.text_from_cells();
            self.plain = false;
        }
    }

    /// Take the kept text from the cells of a plain row (ASCII, one byte a
    /// cell).
    fn text_from_cells(&mut self) {
        let n = self.extent().min(self.cells.len());
        let k = self.kept.get_or_insert_with(Box::default);
        k.text.clear();
        k.text.extend(self.cells[..n].iter().map(|c| c.glyph as u8));
        k.cols = u16::try_from(n).unwrap_or(NO_TEXT);
    }

    #[cold]
    #[inline(never)]
    fn materialise(&mut self, cols: usize) {
        self.cells.resize(cols, Cell::BLANK);
    }

    /// Every cell from here on is `Cell::BLANK` (see the field).
    #[inline]
    pub fn extent(&self) -> usize {
        self.ext as usize
    }

    /// (Columns are at most `limits::COLS`.)
    #[inline]
    pub fn set_extent(&mut self, n: usize) {
        self.ext = u32::try_from(n).unwrap_or(u32::MAX);
    }

    /// Whether the row has no cells (all default blanks, none stored).
    #[inline]
    pub fn is_lazy(&self) -> bool {
        self.cells.is_empty()
    }

    /// Blank the whole row with `fill`, keeping its allocation: a row that
    /// scrolls away is about to be written again (a log scrolling, a
    /// program redrawing), and reusing its cells costs no malloc or free.
    /// A row without cells stays without when `fill` is the default blank.
    pub fn reset(&mut self, cols: usize, fill: Cell) {
        if fill == Cell::BLANK && (self.cells.len() == cols || self.cells.is_empty()) {
            let end = self.extent().min(self.cells.len());
            blank_cells(&mut self.cells[..end]);
            self.set_extent(0);
            self.plain = true;
            self.styled = false;
        } else {
            self.cells.clear();
            self.cells.resize(cols, fill);
            self.set_extent(if fill == Cell::BLANK { 0 } else { cols });
            self.plain = fill.flags == 0 && fill.is_ascii() && fill.pen() == Pen::default();
            self.styled = fill.pen() != Pen::default();
        }
        self.wrapped = false;
        self.marks.clear();
        self.erased = false;
        // (A plain row's text is its cells: what was kept no longer counts.)
        if !self.plain {
            self.lose_text();
        }
    }

    /// Erase the whole row (ED, EL 2): [`Row::reset`], except that a row
    /// that held no text since its last erase gives its cells back. A
    /// program that redraws every row keeps them (it writes between two
    /// erases); a row left blank is released the second time it is erased,
    /// and from then on erasing it costs nothing. A row blanked by a scroll
    /// and then erased keeps its cells: a full-screen program scrolls a
    /// region, then clears and redraws the rows that came in, and freeing
    /// them there would be a free and a malloc per row and frame.
    pub fn erase(&mut self, cols: usize, fill: Cell) {
        if fill == Cell::BLANK && self.extent() == 0 && self.erased && self.cells.capacity() != 0 {
            self.cells = Vec::new();
            self.wrapped = false;
            self.marks.clear();
            self.plain = true;
            self.styled = false;
            self.kept = None;
        } else {
            self.reset(cols, fill);
            self.erased = true;
        }
    }

    /// Note a write of cells up to `end`: `ascii` says whether they were
    /// all single-width ASCII, `styled` whether any has a pen other than the
    /// default.
    #[inline]
    pub fn touch(&mut self, end: usize, ascii: bool, styled: bool) {
        if end > self.extent() {
            self.set_extent(end.min(self.cells.len()));
        }
        self.plain &= ascii && !styled;
        self.styled |= styled;
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
        self.leave_plain();
        let col16 = col as u16;
        if self.marks.iter().filter(|&&(k, _)| k == col16).count() < MAX_MARKS {
            self.marks.push((col16, c));
            // A mark on a blank past the extent (the cursor moved on over
            // blanks) is text: history trims nothing from there on.
            if col >= self.extent() && col < self.cells.len() {
                self.set_extent(col + 1);
            }
            // Kept text goes on if the mark is on its last character.
            let end = col
                + 1
                + self
                    .cells
                    .get(col)
                    .map_or(0, |c| usize::from(c.flags & WIDE));
            let last = !self.cells.get(col).is_some_and(Cell::is_spacer);
            if let Some(k) = &mut self.kept {
                if last && end == usize::from(k.cols) {
                    let mut buf = [0; 4];
                    k.text.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                } else {
                    k.cols = NO_TEXT;
                }
            }
        }
    }

    /// Shift the marks of columns >= `from` by `delta`, dropping those that
    /// fall outside `0..cols` or into `from..from+delta` when shifting left.
    pub fn shift_marks(&mut self, from: usize, delta: isize, cols: usize) {
        self.lose_text();
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
        let mut n = self.extent().min(self.cells.len());
        while n > 0 && is_blank_cell(&self.cells[n - 1]) && !self.has_mark(n - 1) {
            n -= 1;
        }
        n
    }

    /// The row wraps before a wide character that did not fit in its last
    /// column: a blank there becomes a [`WRAP_PAD`] (text there stays).
    pub fn pad_wrap(&mut self, cols: usize) {
        let last = cols - 1;
        if self.cells_for_text(cols)[last] != Cell::BLANK || self.has_mark(last) {
            return;
        }
        self.leave_plain();
        self.cells[last].flags = WRAP_PAD;
        self.text_put(last, cols, b" ");
        self.touch(cols, false, false);
    }

    /// Whether the row wrapped before a wide character, leaving a
    /// [`WRAP_PAD`] in its last column.
    pub fn wrap_padded(&self) -> bool {
        self.wrapped && self.cells.last().is_some_and(Cell::is_pad)
    }

    /// Columns up to the end of [`Row::text`]: past the last cell that is
    /// not a space (whatever its pen) or that has a mark.
    pub fn text_cols(&self) -> usize {
        let end = self.extent().min(self.cells.len());
        (0..end)
            .rev()
            .find(|&i| {
                self.cells[i].glyph != u32::from(b' ')
                    || self.cells[i].flags & !WRAP_PAD != 0
                    || self.has_mark(i)
            })
            .map_or(0, |i| i + 1)
    }

    /// The row's text: trailing blanks trimmed, wide-character spacers
    /// skipped, combining marks kept.
    pub fn text(&self) -> String {
        let mut s = String::with_capacity(self.cells.len());
        for (i, cell) in self.cells.iter().enumerate() {
            if cell.is_spacer() {
                continue;
            }
            s.push(cell.ch());
            self.push_marks(i, &mut s);
        }
        let t = s.trim_end_matches(' ').len();
        s.truncate(t);
        s
    }

    /// Make the row `cols` wide without reflowing: cut or pad, never leaving
    /// half of a wide character.
    pub fn set_width(&mut self, cols: usize) {
        self.lose_text();
        self.set_extent(self.extent().min(cols));
        if self.cells.is_empty() {
            self.marks.retain(|&(c, _)| (c as usize) < cols);
        } else if cols < self.cells.len() {
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
        if self.cells.is_empty() && (self.extent() != 0 || !self.plain || !self.marks.is_empty()) {
            return Err("row without cells has text".into());
        }
        if let Some(i) = self.cells[self.extent().min(self.cells.len())..]
            .iter()
            .position(|c| *c != Cell::BLANK)
        {
            return Err(format!(
                "cell {} past extent {} is not blank",
                self.extent() + i,
                self.extent()
            ));
        }
        if self.plain
            && (!self.marks.is_empty()
                || self
                    .cells
                    .iter()
                    .any(|c| !c.is_ascii() || c.flags != 0 || c.pen() != Pen::default()))
        {
            return Err("row marked plain is not".into());
        }
        if !self.styled && self.cells.iter().any(|c| c.pen() != Pen::default()) {
            return Err("row not marked styled is".into());
        }
        for (i, c) in self.cells.iter().enumerate() {
            let next_is_spacer = self.cells.get(i + 1).is_some_and(Cell::is_spacer);
            if c.is_wide() != next_is_spacer {
                return Err(format!("wide cell {i} and its spacer disagree"));
            }
        }
        if let (Some(text), Some(k)) = (self.kept_text(), &self.kept) {
            let past = usize::from(k.cols).min(self.cells.len());
            if self.cells[past..].iter().any(|c| *c != Cell::BLANK)
                || self.marks.iter().any(|&(c, _)| c >= k.cols)
            {
                return Err(format!("text past the kept {} columns", k.cols));
            }
            let mut scratch = Scratch::default();
            let n = self.trimmed_len();
            let len = Line::encode_general(self, &self.cells[..n], &mut scratch);
            let kept = trim_spaces(text);
            if kept != &scratch.text[..len] {
                return Err(format!(
                    "kept text {:?} is not the row's {:?}",
                    String::from_utf8_lossy(kept),
                    String::from_utf8_lossy(&scratch.text[..len])
                ));
            }
        }
        Ok(())
    }
}

/// A default blank, or a [`WRAP_PAD`] (a blank that is not even text).
#[inline]
pub(crate) fn is_blank_cell(c: &Cell) -> bool {
    Cell { flags: 0, ..*c } == Cell::BLANK && c.flags & !WRAP_PAD == 0
}

/// A row of the scrollback on its own: text plus style runs, trailing blanks
/// trimmed. The history itself keeps lines end to end in [`Scrollback`];
/// this is the form it hands out and takes back (reading, reflow).
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
    /// It wrapped before a wide character that did not fit its last
    /// column (see [`Row::wrap_padded`]; trimmed away like any blank).
    pub padded: bool,
}

/// `text` without its trailing spaces (a row's trailing default blanks).
fn trim_spaces(text: &[u8]) -> &[u8] {
    let n = text.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
    &text[..n]
}

/// Store `glyph`'s four bytes at `buf[pos..]` and return how many of them
/// are the character's (0 if `buf` has no room: it always has).
#[inline]
fn put_glyph(buf: &mut [u8], pos: usize, glyph: u32) -> usize {
    let Some(w) = buf.get_mut(pos..pos + 4) else {
        return 0;
    };
    w.copy_from_slice(&glyph.to_le_bytes());
    glyph_len(glyph)
}

/// Encode `cells[i..]` at `buf[*pos..]`, stepping over each wide
/// character's spacer rather than testing every cell for one (mixed-width
/// text makes that branch a coin toss); returns where the steps ended
/// (`cells.len()`, or one past it after a wide last cell).
#[inline]
fn put_cells(buf: &mut [u8], pos: &mut usize, cells: &[Cell], mut i: usize) -> usize {
    while let Some(cell) = cells.get(i) {
        // A spacer's blank is stored and not counted (only a spacer left
        // alone at the start is ever reached).
        let n = put_glyph(buf, *pos, cell.glyph);
        *pos += n * usize::from(cell.flags & SPACER == 0);
        i += 1 + usize::from(cell.flags & WIDE);
    }
    i
}

/// Blank `cells`, four at a time.
#[inline]
fn blank_cells(cells: &mut [Cell]) {
    let mut chunks = cells.chunks_exact_mut(4);
    for c in chunks.by_ref() {
        c[0] = Cell::BLANK;
        c[1] = Cell::BLANK;
        c[2] = Cell::BLANK;
        c[3] = Cell::BLANK;
    }
    chunks.into_remainder().fill(Cell::BLANK);
}

/// Buffers reused from one line to the next while encoding rows.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scratch {
    text: Vec<u8>,
    runs: Vec<(u16, Pen)>,
}

impl Line {
    /// Encode a visible row into `scratch`: its text (the first `len`
    /// bytes, `len` returned) and its runs.
    fn encode(row: &Row, scratch: &mut Scratch) -> usize {
        let n = row.trimmed_len();
        let cells = &row.cells[..n];
        let Scratch { text, runs } = scratch;
        runs.clear();
        if row.plain {
            text.clear();
            text.extend(cells.iter().map(|c| c.glyph as u8));
            return n;
        }
        // (A row that starts with a non-ASCII character goes to the general
        // path at once: Unicode text pays nothing for the attempt.)
        if row.marks.is_empty()
            && cells.first().is_some_and(Cell::is_ascii)
            && Line::encode_ascii(cells, text, runs)
        {
            return n;
        }
        Line::encode_general(row, cells, scratch)
    }

    /// [`Line::encode`] for any row: UTF-8 with marks, runs in a pass of
    /// their own.
    fn encode_general(row: &Row, cells: &[Cell], scratch: &mut Scratch) -> usize {
        let n = cells.len();
        let Scratch { text, runs } = scratch;
        runs.clear();
        // Room for every cell and mark at four bytes each: encoding then
        // writes into a slice, with no capacity check per character. What
        // is there already stays (only the first `pos` bytes are read):
        // zeroing it was a `memset` call per row.
        let room = (n + row.marks.len()) * 4;
        if text.len() < room {
            text.resize(room, 0);
        }
        let buf = &mut text[..];
        let mut pos = 0;
        // Marks are kept in the order they were written, which is by column
        // unless a program went back; then each cell looks at all of them.
        let marks = &row.marks[..];
        if marks.windows(2).all(|w| w[0].0 <= w[1].0) {
            // The cells between two marked columns in one loop with no mark
            // test, then the marked cell and its marks. A mark whose column
            // is a spacer or past the cells is dropped.
            let mut i = 0;
            let mut open = usize::MAX;
            for &(c, m) in marks {
                let c = usize::from(c);
                if c >= n {
                    break;
                }
                if i <= c {
                    i = put_cells(buf, &mut pos, &cells[..c], i);
                    if let Some(cell) = cells.get(i).filter(|_| i == c) {
                        i += 1 + usize::from(cell.flags & WIDE);
                        if cell.flags & SPACER == 0 {
                            pos += put_glyph(buf, pos, cell.glyph);
                            open = c;
                        }
                    }
                }
                if open == c {
                    pos += put_glyph(buf, pos, glyph(m));
                }
            }
            put_cells(buf, &mut pos, cells, i);
        } else {
            let mut i = 0;
            while let Some(cell) = cells.get(i) {
                let col = i;
                i += 1 + usize::from(cell.flags & WIDE);
                if cell.flags & SPACER != 0 {
                    continue;
                }
                pos += put_glyph(buf, pos, cell.glyph);
                for &(c, m) in marks {
                    if c as usize == col {
                        pos += put_glyph(buf, pos, glyph(m));
                    }
                }
            }
        }
        // Style runs, in a pass of their own (none for a row never written
        // in a pen other than the default): most rows have one style.
        if !row.styled {
            return pos;
        }
        let first = cells.first().map(Cell::pen).unwrap_or_default();
        let uniform = cells
            .iter()
            .all(|c| c.fg == first.fg && c.bg == first.bg && c.attrs == first.attrs);
        if !uniform {
            let (mut pen, mut len) = (first, 0u16);
            for cell in cells {
                let p = cell.pen();
                if p != pen {
                    runs.push((len, pen));
                    (pen, len) = (p, 0);
                }
                len += 1;
            }
            runs.push((len, pen));
        } else if first != Pen::default() {
            runs.push((n as u16, first));
        }
        pos
    }

    /// The fast path of [`Line::encode`] for a row of single-width ASCII
    /// cells without marks in any pens (a coloured log line): its bytes and
    /// its runs in one pass. Returns false, with `text` and `runs` to be
    /// rebuilt, when a cell is not ASCII or is half of a wide character.
    #[inline]
    fn encode_ascii(cells: &[Cell], text: &mut Vec<u8>, runs: &mut Vec<(u16, Pen)>) -> bool {
        if text.len() < cells.len() {
            text.resize(cells.len(), 0);
        }
        let mut odd = 0u32;
        let mut pen = cells.first().map(Cell::pen).unwrap_or_default();
        let mut len = 0u16;
        for (b, cell) in text.iter_mut().zip(cells) {
            *b = cell.glyph as u8;
            odd |= cell.glyph | u32::from(cell.flags) << 8;
            if odd >= 0x80 {
                return false;
            }
            if cell.fg != pen.fg || cell.bg != pen.bg || cell.attrs != pen.attrs {
                runs.push((len, pen));
                (pen, len) = (cell.pen(), 0);
            }
            len += 1;
        }
        if odd >= 0x80 {
            return false;
        }
        if !runs.is_empty() || pen != Pen::default() {
            runs.push((len, pen));
        }
        true
    }

    /// The text as a `str` (always valid UTF-8; see `text`).
    fn str(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.text)
    }

    /// The line as a row of `cols` cells again (its pad too).
    pub fn row(&self, cols: usize) -> Row {
        let mut r = self.to_row();
        r.set_width(cols);
        if self.padded && self.wrapped {
            r.pad_wrap(cols);
        }
        r
    }

    /// The cells this line was made from (trimmed), and its marks.
    pub fn to_row(&self) -> Row {
        let mut row = Row {
            cells: Vec::with_capacity(self.text.len()),
            wrapped: self.wrapped,
            marks: Vec::new(),
            ext: 0,
            plain: false,
            styled: !self.runs.is_empty(),
            erased: false,
            kept: None,
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
        row.set_extent(row.cells.len());
        // A blank line comes back as a row without cells, which is plain.
        row.plain = row.cells.is_empty();
        row
    }

    pub fn text(&self) -> String {
        self.str().trim_end_matches(' ').to_string()
    }
}

/// Where one history line starts in [`Scrollback`]'s rings: offsets in
/// the streams of every text byte and every run ever pushed, modulo 2^32
/// (the rings are kept shorter than that, so differences are exact). A
/// line ends where the next one starts. Eight bytes a line.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    text: u32,
    /// The runs' offset in the low 30 bits; the top bit is `wrapped`, the
    /// next `padded` (see [`Line`]).
    runs: u32,
}

const WRAPPED: u32 = 1 << 31;
const PADDED: u32 = 1 << 30;
/// The bits of [`Slot::runs`] that are the offset.
const RUNS_OFFSET: u32 = PADDED - 1;

/// Most text bytes and runs the rings hold, whatever the line limit: keeps
/// the offsets of [`Slot`] exact (far above 10,000 lines of 1000 columns
/// of plain text).
const MAX_TEXT: usize = 1 << 31;
const MAX_RUNS: usize = 1 << 29;

/// The primary screen's history: a bounded queue of lines, oldest first.
///
/// Lines leave in the order they came, so their text and runs live end to
/// end in rings of fixed-size blocks ([`crate::blocks`]) rather than in an
/// allocation each: pushing a line is a copy into the ring, and evicting
/// the oldest is moving the ring's head (no malloc or free per line, no
/// allocator overhead per line, no ring reallocated and copied as the
/// history grows).
#[derive(Clone, Debug, Default)]
pub(crate) struct Scrollback {
    lines: Blocks<Slot>,
    text: Blocks<u8>,
    runs: Blocks<(u16, Pen)>,
    /// Stream offsets (modulo 2^32 and 2^30) of `text[0]` and `runs[0]`.
    text_base: u32,
    runs_base: u32,
    limit: usize,
    scratch: Scratch,
    /// Lines pushed in all (less those taken back): the absolute number of
    /// the next line to leave the screen, which a reader can remember.
    pushed: u64,
}

impl Scrollback {
    pub fn new(limit: usize) -> Scrollback {
        Scrollback {
            limit,
            ..Scrollback::default()
        }
    }

    /// Push a visible row that scrolled off, dropping the oldest line when
    /// the history is full.
    pub fn push_row(&mut self, row: &Row) {
        if self.limit == 0 {
            return;
        }
        if let Some(text) = row.kept_text() {
            // Kept while it was written: a copy, not an encoding.
            let text = trim_spaces(text);
            let slot = self.make_room(text.len(), 0, row);
            self.text.extend_from_slice(text);
            self.lines.push(slot);
            self.pushed += 1;
            return;
        }
        let len = Line::encode(row, &mut self.scratch);
        let slot = self.make_room(len, self.scratch.runs.len(), row);
        let Scratch { text, runs } = &self.scratch;
        self.text.extend_from_slice(&text[..len]);
        self.runs.extend_from_slice(runs);
        self.lines.push(slot);
        self.pushed += 1;
    }

    /// Push a visible row that scrolled off and blank it with `fill` for
    /// reuse ([`Row::reset`]). A plain row leaving for a blank one (the
    /// common case: a log scrolling) goes straight into the ring and is blanked
    /// after.
    pub fn push_and_reset(&mut self, row: &mut Row, cols: usize, fill: Cell) {
        let lazy = row.cells.is_empty();
        if self.limit == 0
            || !row.plain
            || fill != Cell::BLANK
            || (row.cells.len() != cols && !lazy)
        {
            self.push_row(row);
            row.reset(cols, fill);
            return;
        }
        let n = row.trimmed_len();
        // Cells from `n` on are blank already (trimmed, or past the extent).
        // The bytes go straight into the ring (no scratch, no copy).
        let slot = self.make_room(n, 0, row);
        let cells = &mut row.cells[..n];
        self.text.extend_exact(cells.iter().map(|c| c.glyph as u8));
        blank_cells(cells);
        self.lines.push(slot);
        self.pushed += 1;
        row.set_extent(0);
        row.wrapped = false;
        row.erased = false;
    }

    /// Where line `i`'s text and runs are in the rings, and its
    /// [`WRAPPED`] and [`PADDED`] bits.
    #[inline]
    fn place(&self, i: usize) -> Option<(Range<usize>, Range<usize>, u32)> {
        let s = self.lines.get(i)?;
        let text = |s: Slot| s.text.wrapping_sub(self.text_base) as usize;
        let runs = |s: Slot| (s.runs.wrapping_sub(self.runs_base) & RUNS_OFFSET) as usize;
        let (text_end, runs_end) = match self.lines.get(i + 1) {
            Some(next) => (text(next), runs(next)),
            None => (self.text.len(), self.runs.len()),
        };
        Some((text(s)..text_end, runs(s)..runs_end, s.runs))
    }

    fn pop_front(&mut self) {
        // The first line starts the rings: it ends where the second starts.
        let (text, runs) = match self.place(1) {
            Some((text, runs, _)) => (text.start, runs.start),
            None => (self.text.len(), self.runs.len()),
        };
        self.lines.drop_front(1);
        self.text.drop_front(text);
        self.runs.drop_front(runs);
        self.text_base = self.text_base.wrapping_add(text as u32);
        self.runs_base = self.runs_base.wrapping_add(runs as u32) & RUNS_OFFSET;
    }

    /// Drop the oldest lines until a line of `text` bytes and `runs` runs
    /// fits, and return the slot of `row`'s line, to push after its text
    /// and runs are appended.
    fn make_room(&mut self, text: usize, runs: usize, row: &Row) -> Slot {
        while !self.lines.is_empty()
            && (self.lines.len() >= self.limit
                || self.text.len() + text > MAX_TEXT
                || self.runs.len() + runs > MAX_RUNS)
        {
            self.pop_front();
        }
        Slot {
            text: self.text_base.wrapping_add(self.text.len() as u32),
            runs: (self.runs_base.wrapping_add(self.runs.len() as u32) & RUNS_OFFSET)
                | if row.wrapped { WRAPPED } else { 0 }
                | if row.wrap_padded() { PADDED } else { 0 },
        }
    }

    /// Lines ever pushed (see the field); history line `i` is number
    /// `pushed() - len() + i`.
    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// History line `i` (0 = oldest), copied out.
    pub fn get(&self, i: usize) -> Option<Line> {
        let (text, runs, bits) = self.place(i)?;
        Some(Line {
            text: self.text.to_vec(text).into_boxed_slice(),
            runs: self.runs.to_vec(runs).into_boxed_slice(),
            wrapped: bits & WRAPPED != 0,
            padded: bits & PADDED != 0,
        })
    }

    /// Heap bytes held by the history (rings, slots and scratch).
    pub fn heap_bytes(&self) -> usize {
        let run = std::mem::size_of::<(u16, Pen)>();
        self.lines.heap_bytes()
            + self.text.heap_bytes()
            + self.runs.heap_bytes()
            + self.scratch.text.capacity()
            + self.scratch.runs.capacity() * run
    }

    pub fn pop_back(&mut self) -> Option<Line> {
        let last = self.lines.len().checked_sub(1)?;
        let line = self.get(last)?;
        let (text, runs, _) = self.place(last)?;
        self.lines.truncate_back(1);
        self.text.truncate_back(text.len());
        self.runs.truncate_back(runs.len());
        self.pushed -= 1;
        Some(line)
    }

    pub fn clear(&mut self) {
        let pushed = self.pushed;
        *self = Scrollback::new(self.limit);
        self.pushed = pushed;
    }

    /// Take every line out (for reflow), leaving the history empty.
    pub fn take(&mut self) -> VecDeque<Line> {
        let lines: VecDeque<Line> = (0..self.len()).filter_map(|i| self.get(i)).collect();
        self.clear();
        self.pushed -= lines.len() as u64;
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::{Row, Scrollback, WRAPPED};

    /// Scrolling a region swaps rows; past 64 bytes a swap is `memcpy`
    /// calls at this crate's opt-level.
    #[test]
    fn row_is_compact() {
        assert!(std::mem::size_of::<Row>() <= 64);
    }
    use crate::cell::{Cell, Pen};

    /// Write `c` at cell `i` as the terminal would (a wide character takes
    /// a spacer after it; one that does not fit in the last column leaves an
    /// erased cell) and return the next cell.
    fn put(cells: &mut [Cell], i: usize, c: char, pen: Pen) -> usize {
        use super::{SPACER, WIDE};
        cells[i] = Cell::new(c, pen);
        if super::char_width(c) != 2 {
            return i + 1;
        }
        if i + 1 == cells.len() {
            cells[i] = Cell::erased(pen);
            return i + 1;
        }
        cells[i].flags = WIDE;
        cells[i + 1] = Cell {
            flags: SPACER,
            ..Cell::new(' ', pen)
        };
        i + 2
    }

    fn row(text: &str, styled: bool) -> Row {
        let mut r = Row::new(12);
        let pen = Pen {
            fg: u32::from(styled),
            ..Pen::default()
        };
        for (i, c) in text.chars().enumerate() {
            r.cells_mut(12)[i] = Cell::new(c, if i % 2 == 0 { pen } else { Pen::default() });
        }
        r.touch(text.len(), true, styled);
        r.wrapped = styled;
        r
    }

    /// The ASCII fast path of `Line::encode` gives the same text and runs
    /// as the general path, and steps aside for what it cannot encode:
    /// non-ASCII (first, middle, last cell), wide characters, marks, pens
    /// changing on the first and last cell, trailing erased cells with a
    /// background, empty rows. The scratch is reused dirty from row to row.
    #[test]
    fn ascii_encode_matches_general() {
        use super::{Line, Scratch, SPACER};
        let red = Pen {
            fg: 1 << 24 | 1,
            ..Pen::default()
        };
        let bold = Pen {
            attrs: 1,
            ..Pen::default()
        };
        let bg = Pen {
            bg: 2 << 24 | 0x102030,
            ..Pen::default()
        };
        let cases: &[&[(char, Pen)]] = &[
            &[],
            &[('a', red)],
            &[('a', red), ('b', red), ('c', Pen::default())],
            &[('a', Pen::default()), ('b', bold), ('c', bold), ('d', red)],
            &[('h', red), ('i', bg), (' ', bg), (' ', bg)],
            &[('é', red), ('b', red)],
            &[('a', red), ('é', Pen::default()), ('b', red)],
            &[('a', bold), ('b', bold), ('\u{7f}', bold), ('\u{80}', bold)],
            &[('a', red), ('日', red), (' ', red), ('b', bold)],
            &[('x', bold), ('~', red), ('é', red)],
        ];
        let mut fast = Scratch::default();
        let mut general = Scratch::default();
        for (k, case) in cases.iter().enumerate() {
            for marked in [false, true] {
                let mut r = Row::new(12);
                let cells = r.cells_mut(12);
                let mut i = 0;
                for &(c, pen) in case.iter() {
                    i = put(cells, i, c, pen);
                }
                r.touch(i, false, true);
                if marked && i > 0 {
                    r.add_mark(0, '\u{301}');
                }
                r.check().expect("row");
                let n = Line::encode(&r, &mut fast);
                let cells = &r.cells[..r.trimmed_len()];
                let m = Line::encode_general(&r, cells, &mut general);
                assert_eq!(
                    fast.text[..n],
                    general.text[..m],
                    "case {k} marked {marked}"
                );
                assert_eq!(fast.runs, general.runs, "case {k} marked {marked}");
                let want: String = cells
                    .iter()
                    .filter(|c| c.flags & SPACER == 0)
                    .map(|c| c.ch())
                    .collect();
                let got = std::str::from_utf8(&fast.text[..n]).expect("utf-8");
                assert_eq!(got.replace('\u{301}', ""), want, "case {k} marked {marked}");
            }
        }
    }

    /// The general encoder (marks between runs of cells, runs skipped for a
    /// row never styled) gives what encoding cell by cell gives: each cell
    /// that is not a spacer, then the marks of its column in the order they
    /// were added; marks on spacers or past the text dropped; runs over all
    /// cells. Random rows of ASCII, Latin, wide and astral characters (wide
    /// ones at the right margin too), marks sorted and not, in one pen or
    /// two, `styled` exact or an over-estimate.
    #[test]
    fn general_encode_matches_cell_by_cell() {
        use super::{Line, Scratch, SPACER, WIDE};
        let red = Pen {
            fg: 1 << 24 | 1,
            ..Pen::default()
        };
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rand = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n) as usize
        };
        let mut scratch = Scratch::default();
        for case in 0..20_000 {
            let cols = 1 + rand(12);
            let mut r = Row::new(cols);
            let styled = rand(3) == 0;
            let len = rand(cols as u64 + 1);
            let mut any_pen = false;
            let cells = r.cells_mut(cols);
            let mut i = 0;
            while i < len {
                let c = ['a', ' ', 'é', '日', '😀', 'ｆ'][rand(6)];
                let pen = if styled && rand(2) == 0 {
                    red
                } else {
                    Pen::default()
                };
                any_pen |= pen != Pen::default();
                i = put(cells, i, c, pen);
            }
            r.touch(i, false, any_pen || rand(4) == 0);
            for _ in 0..rand(5) {
                let col = if rand(2) == 0 {
                    rand(cols as u64)
                } else {
                    rand(14)
                };
                r.marks
                    .push((col as u16, ['\u{301}', '\u{308}', '\u{20d7}'][rand(3)]));
            }
            if rand(2) == 0 {
                r.marks.sort_by_key(|m| m.0);
            }
            r.check().expect("row");
            let n = r.trimmed_len();
            let cells = &r.cells[..n];
            let mut want = String::new();
            let mut col = 0;
            while let Some(cell) = cells.get(col) {
                if cell.flags & SPACER == 0 {
                    want.push(cell.ch());
                    r.push_marks(col, &mut want);
                }
                col += 1 + usize::from(cell.flags & WIDE);
            }
            let mut want_runs: Vec<(u16, Pen)> = Vec::new();
            for c in cells {
                match want_runs.last_mut() {
                    Some((k, p)) if *p == c.pen() => *k += 1,
                    _ => want_runs.push((1, c.pen())),
                }
            }
            if want_runs.len() == 1 && want_runs[0].1 == Pen::default() {
                want_runs.clear();
            }
            let got = Line::encode_general(&r, cells, &mut scratch);
            let got = std::str::from_utf8(&scratch.text[..got]).expect("utf-8");
            assert_eq!(got, want, "case {case}: {:?} {:?}", r.cells, r.marks);
            assert_eq!(scratch.runs, want_runs, "case {case}");
        }
    }

    /// Slot offsets are stream positions modulo 2^32 (text) and 2^31
    /// (runs): lines read back the same across the wrap.
    #[test]
    fn history_offsets_wrap() {
        let mut sb = Scrollback::new(3);
        sb.text_base = u32::MAX - 20;
        sb.runs_base = (WRAPPED - 3) & !WRAPPED;
        let mut want = std::collections::VecDeque::new();
        for i in 0..40 {
            let text = format!("line{i:02}");
            let styled = i % 3 == 1;
            sb.push_row(&row(&text, styled));
            want.push_back((text, styled));
            if want.len() > 3 {
                want.pop_front();
            }
            assert_eq!(sb.len(), want.len());
            for (k, (text, styled)) in want.iter().enumerate() {
                let line = sb.get(k).expect("line");
                assert_eq!(&line.text(), text, "push {i}, line {k}");
                assert_eq!(line.wrapped, *styled);
                assert_eq!(!line.runs.is_empty(), *styled);
                assert_eq!(
                    line.to_row().cells[..text.len()],
                    row(text, *styled).cells[..text.len()]
                );
            }
            if i % 7 == 6 {
                let (text, _) = want.pop_back().expect("pushed");
                assert_eq!(sb.pop_back().map(|l| l.text()), Some(text));
            }
        }
    }

    /// Plain rows written straight into the history's ring (no scratch)
    /// read back the same, lines straddling block boundaries included, and
    /// mixed with styled rows (which go through the scratch); each row comes
    /// back blank for reuse.
    #[test]
    fn many_plain_rows_read_back() {
        let mut sb = Scrollback::new(500);
        let mut want = std::collections::VecDeque::new();
        let mut r = Row::new(12);
        for i in 0..3000usize {
            let text: String = format!("{i}-abcdefgh").chars().take(1 + i % 12).collect();
            let styled = i % 17 == 0;
            let pen = Pen {
                fg: u32::from(styled),
                ..Pen::default()
            };
            for (k, c) in text.chars().enumerate() {
                r.cells_mut(12)[k] = Cell::new(c, pen);
            }
            r.touch(text.len(), true, styled);
            r.wrapped = i % 5 == 0;
            sb.push_and_reset(&mut r, 12, Cell::BLANK);
            r.check().expect("row blanked");
            assert_eq!(r.text(), "", "row {i} blanked");
            want.push_back((text, i % 5 == 0));
            if want.len() > 500 {
                want.pop_front();
            }
        }
        assert_eq!(sb.len(), 500);
        for (k, (text, wrapped)) in want.iter().enumerate() {
            let line = sb.get(k).expect("line");
            assert_eq!(&line.text(), text, "line {k}");
            assert_eq!(line.wrapped, *wrapped, "line {k}");
        }
    }

    /// A row blanked by a scroll and then erased (a full-screen program
    /// clearing the row that came in, to redraw it) keeps its cells; erased
    /// twice with no text between, it gives them back.
    #[test]
    fn erase_after_scroll_keeps_cells() {
        let mut r = row("abc", false);
        r.reset(12, Cell::BLANK);
        r.erase(12, Cell::BLANK);
        assert_ne!(r.cells.capacity(), 0, "erase right after a scroll");
        r.erase(12, Cell::BLANK);
        assert_eq!(r.cells.capacity(), 0, "second erase without text");
        let mut sb = Scrollback::new(10);
        let mut r = row("abc", false);
        sb.push_and_reset(&mut r, 12, Cell::BLANK);
        r.erase(12, Cell::BLANK);
        assert_ne!(r.cells.capacity(), 0, "erase right after scrolling off");
        r.cells_mut(12)[0] = Cell::new('x', Pen::default());
        r.touch(1, true, false);
        r.erase(12, Cell::BLANK);
        r.erase(12, Cell::BLANK);
        assert_eq!(r.cells.capacity(), 0, "erased twice after text");
        r.check().expect("invariants");
    }
}
