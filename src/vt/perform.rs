//! The `Perform` glue: C0 controls, ESC sequences and OSC strings, and the
//! colour answers. CSI sequences are in `csi.rs`.

use super::charset::Charset;
use super::parser::{Params, Perform};
use super::term::{Term, DECRQSS_NAME};

/// Longest title kept, in bytes.
const MAX_TITLE: usize = 1024;

impl Term {
    // ---- OSC --------------------------------------------------------------

    fn set_title(&mut self, which: u8, raw: &[u8]) {
        let mut t: String = String::from_utf8_lossy(raw)
            .chars()
            .filter(|c| !c.is_control())
            .collect();
        if t.len() > MAX_TITLE {
            let mut end = MAX_TITLE;
            while !t.is_char_boundary(end) {
                end -= 1;
            }
            t.truncate(end);
        }
        if which != 2 {
            self.icon_title = t.clone();
        }
        if which != 1 {
            self.title = t;
        }
    }

    /// OSC 10/11/12 (and following fields): `?` asks for a colour.
    fn color_query(&mut self, first: u16, fields: &[&[u8]], bell: bool) {
        let term: &[u8] = if bell { b"\x07" } else { b"\x1b\\" };
        for (i, f) in fields.iter().enumerate() {
            let code = first + i as u16;
            if *f != b"?" || code > 12 {
                continue;
            }
            let (r, g, b) = match code {
                11 => (0, 0, 0),
                _ => (0xe5, 0xe5, 0xe5),
            };
            let s = format!("\x1b]{code};{}", rgb_spec(r, g, b));
            self.answer(s.as_bytes());
            self.answer(term);
        }
    }

    fn palette_query(&mut self, fields: &[&[u8]], bell: bool) {
        let term: &[u8] = if bell { b"\x07" } else { b"\x1b\\" };
        for pair in fields.chunks(2) {
            if let [idx, b"?"] = pair {
                let Some(n) = parse_num(idx).filter(|&n| n < 256) else {
                    continue;
                };
                let (r, g, b) = palette(n as u8);
                let s = format!("\x1b]4;{n};{}", rgb_spec(r, g, b));
                self.answer(s.as_bytes());
                self.answer(term);
            }
        }
    }
}

fn parse_num(s: &[u8]) -> Option<u32> {
    if s.is_empty() || s.len() > 9 {
        return None;
    }
    s.iter().try_fold(0u32, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + u32::from(b - b'0'))
    })
}

fn rgb_spec(r: u8, g: u8, b: u8) -> String {
    format!("rgb:{r:02x}{r:02x}/{g:02x}{g:02x}/{b:02x}{b:02x}")
}

/// xterm's default 256-colour palette: the RGB of indexed colour `n`.
pub fn palette(n: u8) -> (u8, u8, u8) {
    const BASE: [(u8, u8, u8); 16] = [
        (0, 0, 0),
        (205, 0, 0),
        (0, 205, 0),
        (205, 205, 0),
        (0, 0, 238),
        (205, 0, 205),
        (0, 205, 205),
        (229, 229, 229),
        (127, 127, 127),
        (255, 0, 0),
        (0, 255, 0),
        (255, 255, 0),
        (92, 92, 255),
        (255, 0, 255),
        (0, 255, 255),
        (255, 255, 255),
    ];
    match n {
        0..=15 => BASE[n as usize],
        16..=231 => {
            let i = n - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + v * 40 };
            (level(i / 36), level((i / 6) % 6), level(i % 6))
        }
        _ => {
            let v = 8 + (n - 232) * 10;
            (v, v, v)
        }
    }
}

impl Perform for Term {
    #[inline]
    fn print(&mut self, c: char) {
        Term::print(self, c);
    }

    #[inline]
    fn print_ascii(&mut self, s: &[u8]) {
        Term::print_ascii(self, s);
    }

    #[inline]
    fn print_utf8(&mut self, text: &[u8]) -> usize {
        Term::print_utf8(self, text)
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            0x08 => self.backspace(),
            0x09 => self.tab_forward(1),
            0x0a..=0x0c => self.linefeed(),
            0x0d => self.carriage_return(),
            0x0e => self.gl = 1,
            0x0f => self.gl = 0,
            // CAN and SUB cancel a device control string being read.
            0x18 | 0x1a => self.decrqss = None,
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], ignore: bool, action: u8) {
        if !ignore {
            self.csi(params, intermediates, action);
        }
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], ignore: bool, byte: u8) {
        if ignore {
            return;
        }
        match (intermediates, byte) {
            ([], b'D') => self.linefeed_keep_mode(),
            ([], b'E') => {
                self.linefeed_keep_mode();
                self.col = 0;
            }
            ([], b'H') => self.tabs[self.col] = true,
            ([], b'M') => self.reverse_index(),
            ([], b'7') => self.save_cursor(),
            ([], b'8') => self.restore_cursor(),
            ([], b'=') => self.modes.app_keypad = true,
            ([], b'>') => self.modes.app_keypad = false,
            ([], b'c') => self.full_reset(),
            ([], b'n') => self.gl = 2,
            ([], b'o') => self.gl = 3,
            ([b'#'], b'8') => self.screen_alignment(),
            (i, f) => {
                if let Some((g, cs)) = Charset::designated(i, f) {
                    self.charsets[g] = cs;
                }
            }
        }
    }

    fn hook(&mut self, _params: &Params, intermediates: &[u8], ignore: bool, action: u8) {
        // DECRQSS is the one device control string the terminal answers.
        self.decrqss = (!ignore && intermediates == b"$" && action == b'q').then(Vec::new);
    }

    fn put(&mut self, byte: u8) {
        if let Some(name) = &mut self.decrqss {
            // One byte past the longest name marks it unknown.
            if name.len() <= DECRQSS_NAME {
                name.push(byte);
            }
        }
    }

    fn unhook(&mut self) {
        if let Some(name) = self.decrqss.take() {
            self.report_setting(&name);
        }
    }

    fn osc_dispatch(&mut self, params: &[&[u8]], bell_terminated: bool) {
        let Some(code) = params.first().and_then(|p| parse_num(p)) else {
            return;
        };
        match code {
            0..=2 => {
                // A title may itself contain ';'; rejoin the fields.
                let rest = params.get(1..).unwrap_or(&[]);
                let raw = rest.join(&b';');
                self.set_title(code as u8, &raw);
            }
            4 => self.palette_query(params.get(1..).unwrap_or(&[]), bell_terminated),
            10..=12 => {
                self.color_query(code as u16, params.get(1..).unwrap_or(&[]), bell_terminated)
            }
            _ => {}
        }
    }
}

impl Term {
    /// IND and NEL move down regardless of LNM.
    fn linefeed_keep_mode(&mut self) {
        self.pending_wrap = false;
        self.linefeed_only();
    }
}
