//! Character sets a program can designate into G0-G3: DEC special graphics
//! is what dialog and ncurses draw their boxes with.

/// A character set a program designates (`ESC ( F` and the like) and
/// invokes (SI, SO, LS2, LS3) for the characters it prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Charset {
    /// US ASCII (`ESC ( B`), and every set not known here.
    #[default]
    Ascii,
    /// DEC special graphics and line drawing (`ESC ( 0`).
    DecGraphics,
    /// The United Kingdom set (`ESC ( A`): `#` is the pound sign.
    Uk,
}

impl Charset {
    /// The designation a final byte of `ESC ( F` selects, if we know it.
    pub fn from_final(b: u8) -> Option<Charset> {
        match b {
            b'B' => Some(Charset::Ascii),
            b'0' => Some(Charset::DecGraphics),
            b'A' => Some(Charset::Uk),
            // Other national sets: treat as ASCII rather than refuse.
            b'1' | b'2' | b'4' | b'5' | b'6' | b'7' | b'9' | b'C' | b'E' | b'H' | b'K' | b'Q'
            | b'R' | b'Y' | b'Z' | b'=' | b'<' | b'>' | b'`' => Some(Charset::Ascii),
            _ => None,
        }
    }

    /// The designation an `ESC` sequence with `intermediates` and final
    /// byte `f` makes: which of G0-G3 gets which set (`ESC ( 0`: G0, line
    /// drawing). The one reading of these for the emulator and the line
    /// view.
    pub fn designated(intermediates: &[u8], f: u8) -> Option<(usize, Charset)> {
        match intermediates {
            [i @ (b'(' | b')' | b'*' | b'+')] => {
                Some((usize::from(i - b'('), Charset::from_final(f)?))
            }
            _ => None,
        }
    }

    /// The character `c` prints as in this set.
    #[inline]
    pub fn map(self, c: char) -> char {
        match self {
            Charset::Ascii => c,
            Charset::Uk => {
                if c == '#' {
                    '£'
                } else {
                    c
                }
            }
            Charset::DecGraphics => dec_graphics(c),
        }
    }
}

fn dec_graphics(c: char) -> char {
    match c {
        '`' => '◆',
        'a' => '▒',
        'b' => '␉',
        'c' => '␌',
        'd' => '␍',
        'e' => '␊',
        'f' => '°',
        'g' => '±',
        'h' => '␤',
        'i' => '␋',
        'j' => '┘',
        'k' => '┐',
        'l' => '┌',
        'm' => '└',
        'n' => '┼',
        'o' => '⎺',
        'p' => '⎻',
        'q' => '─',
        'r' => '⎼',
        's' => '⎽',
        't' => '├',
        'u' => '┤',
        'v' => '┴',
        'w' => '┬',
        'x' => '│',
        'y' => '≤',
        'z' => '≥',
        '{' => 'π',
        '|' => '≠',
        '}' => '£',
        '~' => '·',
        // A blank in the VT100's font; a plain space, so text read off the
        // screen has no no-break space where the screen shows a blank.
        '_' => ' ',
        _ => c,
    }
}
