//! Cells and their attributes, public and packed.
//!
//! The public [`Style`] is easy to read; the grid stores a packed form
//! ([`Pen`]) so that a cell is 16 bytes and comparing two styles is three
//! integer compares.

/// A colour as a program set it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum Color {
    /// The terminal's default colour.
    #[default]
    Default,
    /// One of the 256 palette entries (0-15 are the ANSI colours).
    Indexed(u8),
    /// A direct colour: red, green, blue.
    Rgb(u8, u8, u8),
}

/// The attributes of a cell, as a caller sees them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Style {
    /// Foreground colour.
    pub fg: Color,
    /// Background colour.
    pub bg: Color,
    /// SGR 1.
    pub bold: bool,
    /// SGR 2.
    pub dim: bool,
    /// SGR 3.
    pub italic: bool,
    /// 0 none, 1 single, 2 double, 3 curly, 4 dotted, 5 dashed.
    pub underline: u8,
    /// SGR 5 or 6.
    pub blink: bool,
    /// SGR 7: foreground and background swapped.
    pub inverse: bool,
    /// SGR 8.
    pub hidden: bool,
    /// SGR 9.
    pub strike: bool,
}

/// A run of cells of one style in a row.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Run {
    /// The cells' characters (a wide character once).
    pub text: String,
    /// Their style.
    pub style: Style,
}

const TAG_INDEXED: u32 = 1 << 24;
const TAG_RGB: u32 = 2 << 24;

/// A colour packed in a u32: 0 is the default, tag in bits 24-25.
pub(crate) fn pack_color(c: Color) -> u32 {
    match c {
        Color::Default => 0,
        Color::Indexed(i) => TAG_INDEXED | u32::from(i),
        Color::Rgb(r, g, b) => TAG_RGB | u32::from(r) << 16 | u32::from(g) << 8 | u32::from(b),
    }
}

pub(crate) fn unpack_color(v: u32) -> Color {
    match v & (3 << 24) {
        TAG_INDEXED => Color::Indexed(v as u8),
        TAG_RGB => Color::Rgb((v >> 16) as u8, (v >> 8) as u8, v as u8),
        _ => Color::Default,
    }
}

pub(crate) const BOLD: u16 = 1;
pub(crate) const DIM: u16 = 1 << 1;
pub(crate) const ITALIC: u16 = 1 << 2;
pub(crate) const BLINK: u16 = 1 << 3;
pub(crate) const INVERSE: u16 = 1 << 4;
pub(crate) const HIDDEN: u16 = 1 << 5;
pub(crate) const STRIKE: u16 = 1 << 6;
pub(crate) const UNDERLINE_SHIFT: u16 = 7;
pub(crate) const UNDERLINE_MASK: u16 = 7 << UNDERLINE_SHIFT;

/// The packed attributes a cell is drawn with: the terminal's "pen".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub(crate) struct Pen {
    pub fg: u32,
    pub bg: u32,
    pub attrs: u16,
}

impl Pen {
    pub fn style(self) -> Style {
        let a = self.attrs;
        Style {
            fg: unpack_color(self.fg),
            bg: unpack_color(self.bg),
            bold: a & BOLD != 0,
            dim: a & DIM != 0,
            italic: a & ITALIC != 0,
            underline: ((a & UNDERLINE_MASK) >> UNDERLINE_SHIFT) as u8,
            blink: a & BLINK != 0,
            inverse: a & INVERSE != 0,
            hidden: a & HIDDEN != 0,
            strike: a & STRIKE != 0,
        }
    }

    pub fn set_underline(&mut self, kind: u8) {
        self.attrs = (self.attrs & !UNDERLINE_MASK) | (u16::from(kind.min(5)) << UNDERLINE_SHIFT);
    }

    pub fn set(&mut self, flag: u16, on: bool) {
        if on {
            self.attrs |= flag;
        } else {
            self.attrs &= !flag;
        }
    }
}

impl From<Style> for Pen {
    fn from(s: Style) -> Pen {
        let mut attrs = 0;
        for (on, flag) in [
            (s.bold, BOLD),
            (s.dim, DIM),
            (s.italic, ITALIC),
            (s.blink, BLINK),
            (s.inverse, INVERSE),
            (s.hidden, HIDDEN),
            (s.strike, STRIKE),
        ] {
            if on {
                attrs |= flag;
            }
        }
        let mut pen = Pen {
            fg: pack_color(s.fg),
            bg: pack_color(s.bg),
            attrs,
        };
        pen.set_underline(s.underline);
        pen
    }
}

/// The left half of a wide character.
pub(crate) const WIDE: u16 = 1;
/// The right half of a wide character: holds no text of its own.
pub(crate) const SPACER: u16 = 2;
/// A blank at the end of a wrapped row, left there because the wide
/// character that came next did not fit (xterm's and alacritty's wrap
/// spacer): not text, so reflow does not join it back as a space.
pub(crate) const WRAP_PAD: u16 = 4;

/// One grid cell: a character and how it is drawn. Combining marks live
/// beside the row (they are rare), flagged by nothing here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cell {
    /// The character as its UTF-8 bytes, first byte lowest ([`glyph`]):
    /// ASCII is its own value, and the history copies a cell's text with
    /// one four-byte store and a length from the leading zeros, with no
    /// branch on the character's length.
    pub glyph: u32,
    pub fg: u32,
    pub bg: u32,
    pub attrs: u16,
    pub flags: u16,
}

impl Default for Cell {
    fn default() -> Cell {
        Cell::BLANK
    }
}

impl Cell {
    pub const BLANK: Cell = Cell {
        glyph: b' ' as u32,
        fg: 0,
        bg: 0,
        attrs: 0,
        flags: 0,
    };

    #[inline]
    pub fn new(ch: char, pen: Pen) -> Cell {
        Cell::with_glyph(glyph(ch), pen)
    }

    /// A cell holding `glyph` (see the field).
    #[inline]
    pub fn with_glyph(glyph: u32, pen: Pen) -> Cell {
        Cell {
            glyph,
            fg: pen.fg,
            bg: pen.bg,
            attrs: pen.attrs,
            flags: 0,
        }
    }

    /// An erased cell: blank, keeping only the background colour (xterm's
    /// background colour erase).
    #[inline]
    pub fn erased(pen: Pen) -> Cell {
        Cell {
            bg: pen.bg,
            ..Cell::BLANK
        }
    }

    #[inline]
    pub fn pen(&self) -> Pen {
        Pen {
            fg: self.fg,
            bg: self.bg,
            attrs: self.attrs,
        }
    }

    /// The cell's character.
    pub fn ch(&self) -> char {
        let b = self.glyph.to_le_bytes();
        let len = glyph_len(self.glyph);
        std::str::from_utf8(&b[..len])
            .ok()
            .and_then(|s| s.chars().next())
            .unwrap_or('\u{FFFD}')
    }

    pub fn is_ascii(&self) -> bool {
        self.glyph < 0x80
    }

    pub fn is_wide(&self) -> bool {
        self.flags & WIDE != 0
    }

    pub fn is_spacer(&self) -> bool {
        self.flags & SPACER != 0
    }

    /// A [`WRAP_PAD`] blank.
    pub fn is_pad(&self) -> bool {
        self.flags & WRAP_PAD != 0
    }
}

/// Display width of a character in cells: 0 for combining marks and other
/// zero-width characters, 2 for wide (East Asian wide, emoji presentation).
#[inline]
pub(crate) fn char_width(c: char) -> usize {
    let cp = c as u32;
    if cp < 0x7f {
        return 1;
    }
    width_in(widths(), cp)
}

/// A character's display width in cells (0, 1 or 2), as the screen lays
/// it out: the one width every view outside the emulator uses too (one
/// copy of the code, not inlined).
#[inline(never)]
pub fn width(c: char) -> usize {
    char_width(c)
}

/// The width table (see [`WIDTHS`]), to look up many characters with
/// [`width_in`] after one test that it is built.
#[inline]
pub(crate) fn widths() -> &'static [u8] {
    WIDTHS.get_or_init(width_table)
}

/// The width of code point `cp` (a valid character) by `table`.
#[inline(always)]
pub(crate) fn width_in(table: &[u8], cp: u32) -> usize {
    match table.get((cp >> 2) as usize) {
        Some(&packed) => usize::from(packed >> ((cp & 3) * 2) & 3),
        None => char::from_u32(cp).map_or(0, unicode_width),
    }
}

/// The widths of planes 0 and 1 (where nearly all text lives), two bits a
/// character: a lookup with no branches on the character, where
/// unicode-width's tables take a few dependent loads and mixed scripts
/// make its range checks mispredict. 32 KiB, built once per process on
/// first use (about a millisecond).
static WIDTHS: std::sync::OnceLock<Box<[u8]>> = std::sync::OnceLock::new();

fn width_table() -> Box<[u8]> {
    let mut t = vec![0u8; 0x20000 / 4];
    for cp in 0..0x20000u32 {
        let w = char::from_u32(cp).map_or(0, unicode_width) as u8;
        t[(cp >> 2) as usize] |= w << ((cp & 3) * 2);
    }
    t.into_boxed_slice()
}

/// `c`'s UTF-8 bytes in a `u32`, first byte lowest, the unused high bytes
/// zero. Every form is computed and one is selected, with no branch on the
/// character (mixed scripts would make a branch on its length mispredict).
#[inline]
pub(crate) fn glyph(c: char) -> u32 {
    let cp = c as u32;
    let two = 0x80c0 | cp >> 6 | (cp & 0x3f) << 8;
    let three = 0x80_80e0 | cp >> 12 | (cp >> 6 & 0x3f) << 8 | (cp & 0x3f) << 16;
    let four = 0x8080_80f0
        | cp >> 18
        | (cp >> 12 & 0x3f) << 8
        | (cp >> 6 & 0x3f) << 16
        | (cp & 0x3f) << 24;
    let wide = if cp < 0x1_0000 { three } else { four };
    let narrow = if cp < 0x80 { cp } else { two };
    if cp < 0x800 {
        narrow
    } else {
        wide
    }
}

/// How many bytes of `glyph` are the character's: its highest non-zero
/// byte is its last (no UTF-8 byte is zero except NUL, which takes one).
#[inline]
pub(crate) fn glyph_len(glyph: u32) -> usize {
    ((glyph | 1).ilog2() as usize + 8) >> 3
}

/// What unicode-width says, with controls (None) as zero.
fn unicode_width(c: char) -> usize {
    match c as u32 {
        // The soft hyphen takes a cell in glibc's wcwidth, xterm and tmux
        // (which programs count with), though Unicode calls it zero width.
        0x20..=0x7e | 0xad => 1,
        _ => unicode_width::UnicodeWidthChar::width(c).unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_hyphen_takes_a_cell_as_wcwidth_says() {
        assert_eq!(char_width('\u{ad}'), 1);
        assert_eq!(char_width('\u{301}'), 0);
    }

    #[test]
    fn cell_is_compact() {
        assert_eq!(std::mem::size_of::<Cell>(), 16);
    }

    #[test]
    fn colours_round_trip() {
        for c in [
            Color::Default,
            Color::Indexed(0),
            Color::Indexed(255),
            Color::Rgb(1, 2, 3),
            Color::Rgb(255, 255, 255),
        ] {
            assert_eq!(unpack_color(pack_color(c)), c);
        }
    }

    #[test]
    fn styles_round_trip() {
        let s = Style {
            fg: Color::Rgb(9, 8, 7),
            bg: Color::Indexed(4),
            bold: true,
            italic: true,
            underline: 3,
            strike: true,
            ..Style::default()
        };
        assert_eq!(Pen::from(s).style(), s);
        assert_eq!(Pen::default().style(), Style::default());
    }

    #[test]
    fn width_table_agrees_with_unicode_width() {
        for cp in 0x7f..0x30000u32 {
            if let Some(c) = char::from_u32(cp) {
                // (But for the soft hyphen: see `unicode_width`.)
                let want = match cp {
                    0xad => 1,
                    _ => unicode_width::UnicodeWidthChar::width(c).unwrap_or(0),
                };
                assert_eq!(char_width(c), want, "U+{cp:04X}");
            }
        }
    }

    #[test]
    fn glyphs_are_utf8_and_round_trip() {
        for cp in (1..0x11_0000u32)
            .step_by(3)
            .chain([0x7f, 0x80, 0x7ff, 0x800, 0xffff, 0x1_0000, 0x10_ffff])
        {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            let g = glyph(c);
            let mut want = [0u8; 4];
            let want = c.encode_utf8(&mut want).as_bytes();
            assert_eq!(&g.to_le_bytes()[..glyph_len(g)], want, "U+{cp:04X}");
            assert_eq!(Cell::with_glyph(g, Pen::default()).ch(), c, "U+{cp:04X}");
        }
    }

    #[test]
    fn widths() {
        assert_eq!(char_width('a'), 1);
        assert_eq!(char_width('中'), 2);
        assert_eq!(char_width('\u{301}'), 0);
        assert_eq!(char_width('😀'), 2);
    }
}
