//! Key names and mouse events to the bytes a terminal would send.
//!
//! This is the one key table of ptybroker: every front end (CLI, JSON-RPC,
//! driver, MCP) turns a caller's key name into bytes here, so `Enter`,
//! `enter` and `Return` mean the same thing everywhere, and a misspelt name is
//! an error everywhere instead of a guess.
//!
//! The bytes are those of xterm with its default settings: arrows, Home and
//! End follow the application's cursor-key mode (DECCKM); a modified special
//! key uses `CSI 1;m X` or `CSI n;m ~` with `m = 1 + shift + 2*alt + 4*ctrl`;
//! Alt on anything else is an ESC prefix (xterm's `metaSendsEscape`).
//!
//! A key name is a base key, optionally preceded by modifiers, all joined by
//! `+` or `-` in any order: `Enter`, `ctrl-c`, `C-c`, `Ctrl+Alt+Del`,
//! `ctrl-shift-up`, `Alt+-`. Base keys and modifier words are
//! case-insensitive; a single-character base key is taken literally (`Alt+X`
//! sends `ESC X`), except that Ctrl ignores the letter's case. `text:abc`
//! (seed 004) sends `abc` as it is.
//!
//! Mouse events live in [`mouse`] and are re-exported here.

use std::fmt;

use crate::vt::Modes;

mod mouse;

pub use mouse::{encode_mouse, MouseAction, MouseButton, MouseError, MouseEvent};

const ESC: u8 = 0x1b;

/// What to suggest when a name is not understood. Kept short: it ends up in a
/// one-line protocol error.
const SUGGESTION: &str = "try Enter, Tab, Escape, ArrowUp, F1..F12, Ctrl+A, Alt+x, ...";

/// A key name that has no bytes: misspelt, or a chord no terminal can send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyError {
    name: String,
    kind: KeyErrorKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum KeyErrorKind {
    /// Not a key name we know.
    Unknown,
    /// A known key and modifiers whose combination a terminal cannot send
    /// distinctly; the string says why and what to send instead.
    NoEncoding(&'static str),
    /// `control_byte` of a character that has no control code.
    NotControl(char),
}

impl KeyError {
    fn unknown(name: &str) -> KeyError {
        KeyError {
            name: name.to_string(),
            kind: KeyErrorKind::Unknown,
        }
    }

    fn no_encoding(name: &str, why: &'static str) -> KeyError {
        KeyError {
            name: name.to_string(),
            kind: KeyErrorKind::NoEncoding(why),
        }
    }

    /// The key name as the caller spelt it.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            KeyErrorKind::Unknown => {
                write!(f, "unknown key name {:?} ({SUGGESTION})", self.name)
            }
            KeyErrorKind::NoEncoding(why) => {
                write!(f, "key name {:?} cannot be sent: {why}", self.name)
            }
            KeyErrorKind::NotControl(c) => write!(
                f,
                "no control character for {c:?} (Ctrl combines with a letter A..Z, \
                 space, @, [, \\, ], ^, _ or ?)"
            ),
        }
    }
}

impl std::error::Error for KeyError {}

/// The control character that Ctrl plus `letter` sends: `'c'` and `'C'` give
/// 0x03, `'@'` and `' '` give NUL, `'['` ESC, `'\\'` 0x1c, `']'` 0x1d, `'^'`
/// 0x1e, `'_'` 0x1f and `'?'` DEL (0x7f). This is also the "single-letter
/// control input" of seed 003.
pub fn control_byte(letter: char) -> Result<u8, KeyError> {
    match letter {
        'a'..='z' | 'A'..='Z' => Ok(letter.to_ascii_uppercase() as u8 & 0x1f),
        '@' | ' ' => Ok(0x00),
        '[' | '\\' | ']' | '^' | '_' => Ok(letter as u8 & 0x1f),
        '?' => Ok(0x7f),
        _ => Err(KeyError {
            name: letter.to_string(),
            kind: KeyErrorKind::NotControl(letter),
        }),
    }
}

/// The bytes a terminal sends for the key `name` (see the module header for
/// the grammar), given the modes the program has set.
pub fn encode_key(name: &str, modes: &Modes) -> Result<Vec<u8>, KeyError> {
    if let Some(text) = strip_prefix_ignore_case(name, "text:") {
        return Ok(text.as_bytes().to_vec());
    }
    let (mods, base_name) = split_modifiers(name)?;
    let base = Base::parse(base_name).ok_or_else(|| KeyError::unknown(name))?;
    base.encode(mods, modes)
        .map_err(|why| KeyError::no_encoding(name, why))
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Mods {
    shift: bool,
    alt: bool,
    ctrl: bool,
}

impl Mods {
    /// xterm's modifier parameter: 1 + shift + 2*alt + 4*ctrl.
    fn param(self) -> u8 {
        1 + u8::from(self.shift) + 2 * u8::from(self.alt) + 4 * u8::from(self.ctrl)
    }
}

fn is_separator(c: char) -> bool {
    c == '+' || c == '-'
}

/// Splits `Ctrl+Alt+x` into its modifiers and the base key name. The base
/// may itself be `+` or `-` (`Alt+-`, `Ctrl++`).
fn split_modifiers(name: &str) -> Result<(Mods, &str), KeyError> {
    let unknown = || KeyError::unknown(name);
    let mut chars = name.chars().rev();
    let (prefix, base) = match (chars.next(), chars.next()) {
        (None, _) => return Err(unknown()),
        (Some(_), None) => ("", name),
        (Some(last), Some(before)) if is_separator(last) && is_separator(before) => {
            let cut = name.len() - last.len_utf8() - before.len_utf8();
            if cut == 0 {
                return Err(unknown());
            }
            (&name[..cut], &name[name.len() - last.len_utf8()..])
        }
        _ => match name.rfind(is_separator) {
            None => ("", name),
            Some(0) => return Err(unknown()),
            Some(i) => (&name[..i], &name[i + 1..]),
        },
    };
    if base.is_empty() {
        return Err(unknown());
    }
    let mut mods = Mods::default();
    if prefix.is_empty() {
        return Ok((mods, base));
    }
    for word in prefix.split(is_separator) {
        let flag = match word {
            // Emacs notation, case-sensitive: `s-` would be Super there.
            "C" => &mut mods.ctrl,
            "M" => &mut mods.alt,
            "S" => &mut mods.shift,
            _ if word.eq_ignore_ascii_case("ctrl") || word.eq_ignore_ascii_case("control") => {
                &mut mods.ctrl
            }
            _ if word.eq_ignore_ascii_case("alt") || word.eq_ignore_ascii_case("meta") => {
                &mut mods.alt
            }
            _ if word.eq_ignore_ascii_case("shift") => &mut mods.shift,
            _ => return Err(unknown()),
        };
        if *flag {
            // `Ctrl+Ctrl+C` is more likely a typo than an intent.
            return Err(unknown());
        }
        *flag = true;
    }
    Ok((mods, base))
}

/// A key before modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Base {
    /// A printable character typed as itself.
    Char(char),
    Enter,
    Tab,
    /// Shift+Tab under its own name.
    BackTab,
    Escape,
    Space,
    Backspace,
    /// Arrows, Home and End: final byte of `CSI X` / `SS3 X`.
    Cursor(u8),
    /// F1..F4: final byte of `SS3 X`.
    Pf(u8),
    /// Insert, Delete, PageUp, PageDown, F5..F12: the number in `CSI n ~`.
    Tilde(u8),
    /// Only as `ctrl-break` (seed 004), which has no byte of its own in a
    /// Unix terminal; it sends what Ctrl+C sends.
    Break,
}

impl Base {
    fn parse(name: &str) -> Option<Base> {
        let mut chars = name.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            return match c {
                ' ' => Some(Base::Space),
                c if c.is_control() => None,
                c => Some(Base::Char(c)),
            };
        }
        let lower = name.to_ascii_lowercase();
        let base = match lower.as_str() {
            "enter" | "return" => Base::Enter,
            "tab" => Base::Tab,
            "backtab" => Base::BackTab,
            "escape" | "esc" => Base::Escape,
            "space" => Base::Space,
            "backspace" => Base::Backspace,
            "arrowup" | "up" => Base::Cursor(b'A'),
            "arrowdown" | "down" => Base::Cursor(b'B'),
            "arrowright" | "right" => Base::Cursor(b'C'),
            "arrowleft" | "left" => Base::Cursor(b'D'),
            "home" => Base::Cursor(b'H'),
            "end" => Base::Cursor(b'F'),
            "insert" | "ins" => Base::Tilde(2),
            "delete" | "del" => Base::Tilde(3),
            "pageup" | "pgup" => Base::Tilde(5),
            "pagedown" | "pgdn" | "pgdown" => Base::Tilde(6),
            "f1" => Base::Pf(b'P'),
            "f2" => Base::Pf(b'Q'),
            "f3" => Base::Pf(b'R'),
            "f4" => Base::Pf(b'S'),
            "f5" => Base::Tilde(15),
            "f6" => Base::Tilde(17),
            "f7" => Base::Tilde(18),
            "f8" => Base::Tilde(19),
            "f9" => Base::Tilde(20),
            "f10" => Base::Tilde(21),
            "f11" => Base::Tilde(23),
            "f12" => Base::Tilde(24),
            "break" => Base::Break,
            _ => return None,
        };
        Some(base)
    }

    /// The bytes for this key with `mods`, or why there are none.
    fn encode(self, mods: Mods, modes: &Modes) -> Result<Vec<u8>, &'static str> {
        let m = mods.param();
        // Keys without a CSI form of their own: Alt is an ESC prefix.
        let alt = |mut bytes: Vec<u8>| {
            if mods.alt {
                bytes.insert(0, ESC);
            }
            bytes
        };
        let bytes = match self {
            Base::Cursor(x) | Base::Pf(x) if m > 1 => {
                format!("\x1b[1;{m}{}", x as char).into_bytes()
            }
            Base::Cursor(x) if modes.app_cursor_keys => vec![ESC, b'O', x],
            Base::Cursor(x) => vec![ESC, b'[', x],
            Base::Pf(x) => vec![ESC, b'O', x],
            Base::Tilde(n) if m > 1 => format!("\x1b[{n};{m}~").into_bytes(),
            Base::Tilde(n) => format!("\x1b[{n}~").into_bytes(),
            Base::Break if !mods.ctrl || mods.alt || mods.shift => {
                return Err("Break is only accepted as ctrl-break, which sends Ctrl+C")
            }
            Base::Break => vec![0x03],
            Base::Char(c) => alt(char_bytes(c, mods)?),
            // Shift+Enter, Shift+Space and Shift+Backspace send what the
            // unshifted key sends, as in xterm.
            Base::Enter => alt(vec![if mods.ctrl { b'\n' } else { b'\r' }]),
            Base::Space => alt(vec![if mods.ctrl { 0x00 } else { b' ' }]),
            Base::Backspace => alt(vec![if mods.ctrl { 0x08 } else { 0x7f }]),
            Base::BackTab if mods.shift => return Err("BackTab is already Shift+Tab"),
            Base::Tab | Base::BackTab if mods.ctrl => {
                return Err("a terminal sends Ctrl+Tab as a plain Tab; send Tab")
            }
            Base::Tab if !mods.shift => alt(vec![b'\t']),
            Base::Tab | Base::BackTab => alt(b"\x1b[Z".to_vec()),
            Base::Escape if mods.ctrl || mods.shift => {
                return Err(
                    "a terminal sends Ctrl or Shift with Escape as a plain Escape; send Escape",
                )
            }
            Base::Escape => alt(vec![ESC]),
        };
        Ok(bytes)
    }
}

/// A printable character with Shift and Ctrl applied (Alt is the caller's).
fn char_bytes(c: char, mods: Mods) -> Result<Vec<u8>, &'static str> {
    let c = match c {
        _ if !mods.shift => c,
        'a'..='z' | 'A'..='Z' => c.to_ascii_uppercase(),
        _ => {
            return Err(
                "Shift applies to letters only (what Shift gives otherwise depends on \
                        the keyboard layout; send that character itself)",
            )
        }
    };
    if mods.ctrl {
        let byte = control_byte(c)
            .map_err(|_| "Ctrl combines with a letter A..Z, space, @, [, \\, ], ^, _ or ? only")?;
        return Ok(vec![byte]);
    }
    let mut buf = [0; 4];
    Ok(c.encode_utf8(&mut buf).as_bytes().to_vec())
}
