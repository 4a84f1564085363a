//! CSI sequences: what each final byte means to the terminal, SGR, and the
//! ANSI and DEC private modes (set, reset and DECRQM reports).

use super::cell::{self, pack_color, Color, Pen};
use super::parser::Params;
use super::screen::{MouseEncoding, MouseTracking};
use super::term::Term;

/// Version reported by XTVERSION.
const VERSION: &str = env!("CARGO_PKG_VERSION");

impl Term {
    pub(crate) fn csi(&mut self, p: &Params, inter: &[u8], action: u8) {
        // SGR is most of what programs send: skip the table for it.
        if action == b'm' && inter.is_empty() {
            self.sgr(p);
            return;
        }
        let n = |i: usize| usize::from(p.get_or(i, 1));
        match (inter, action) {
            ([], b'@') => self.insert_chars(n(0)),
            ([], b'A') => self.move_up(n(0)),
            ([], b'B') | ([], b'e') => self.move_down(n(0)),
            ([], b'C') | ([], b'a') => self.move_right(n(0)),
            ([], b'D') => self.move_left(n(0)),
            ([], b'E') => {
                self.move_down(n(0));
                self.col = 0;
            }
            ([], b'F') => {
                self.move_up(n(0));
                self.col = 0;
            }
            ([], b'G') | ([], b'`') => self.goto_col(n(0) - 1),
            ([], b'H') | ([], b'f') => self.goto(n(0) - 1, n(1) - 1),
            ([], b'I') => self.tab_forward(n(0)),
            ([], b'J') | ([b'?'], b'J') => self.erase_in_display(p.get(0)),
            ([], b'K') | ([b'?'], b'K') => self.erase_in_line(p.get(0)),
            ([], b'L') => self.insert_lines(n(0)),
            ([], b'M') => self.delete_lines(n(0)),
            ([], b'P') => self.delete_chars(n(0)),
            ([], b'S') => self.scroll_up(n(0)),
            // CSI T with five parameters is xterm's mouse highlight tracking.
            ([], b'T') if p.len() <= 1 => self.scroll_down(n(0)),
            ([], b'X') => self.erase_chars(n(0)),
            ([], b'Z') => self.tab_backward(n(0)),
            ([], b'b') => self.repeat(n(0)),
            ([], b'c') if p.get(0) == 0 => self.answer(b"\x1b[?62;22c"),
            ([b'>'], b'c') if p.get(0) == 0 => self.answer(b"\x1b[>1;10;0c"),
            ([], b'd') => self.goto_row(n(0) - 1),
            ([], b'g') => match p.get(0) {
                0 => self.tabs[self.col] = false,
                3 => self.tabs.fill(false),
                _ => {}
            },
            ([], b'h') => self.ansi_modes(p, true),
            ([], b'l') => self.ansi_modes(p, false),
            ([b'?'], b'h') => self.dec_modes(p, true),
            ([b'?'], b'l') => self.dec_modes(p, false),
            ([], b'n') => self.device_status(p.get(0)),
            ([b'?'], b'n') if p.get(0) == 6 => {
                let s = format!("\x1b[?{};{};1R", self.report_row() + 1, self.col + 1);
                self.answer(s.as_bytes());
            }
            ([b'!'], b'p') => self.soft_reset(),
            ([b'$'], b'p') => self.report_ansi_mode(p.get(0)),
            ([b'?', b'$'], b'p') => self.report_dec_mode(p.get(0)),
            ([b'>'], b'q') if p.get(0) == 0 => {
                let s = format!("\x1bP>|ptybroker({VERSION})\x1b\\");
                self.answer(s.as_bytes());
            }
            ([b' '], b'q') if p.get(0) <= 6 => self.cursor_shape = p.get(0) as u8,
            ([], b'r') => self.set_scroll_region(usize::from(p.get(0)), usize::from(p.get(1))),
            ([], b's') => self.save_cursor(),
            ([], b'u') => self.restore_cursor(),
            ([], b't') if p.get(0) == 18 => {
                let s = format!("\x1b[8;{};{}t", self.rows, self.cols);
                self.answer(s.as_bytes());
            }
            // The text area and a cell, in pixels (image tools size their
            // output by these), as the window size given to the PTY says.
            ([], b't') if p.get(0) == 14 => {
                let (w, h) = crate::CELL_PIXELS;
                let (w, h) = (usize::from(w), usize::from(h));
                let s = format!("\x1b[4;{};{}t", self.rows * h, self.cols * w);
                self.answer(s.as_bytes());
            }
            ([], b't') if p.get(0) == 16 => {
                let (w, h) = crate::CELL_PIXELS;
                self.answer(format!("\x1b[6;{h};{w}t").as_bytes());
            }
            ([], b't') if matches!(p.get(0), 22 | 23) && p.get(1) <= 2 => {
                self.title_stack(p.get(0) == 22, p.get(1));
            }
            _ => {}
        }
    }

    /// The answer to DECRQSS (`DCS $ q Pt ST`) for the setting `name`:
    /// `DCS 1 $ r <setting> ST` for those known (SGR, DECSTBM, DECSCUSR,
    /// DECSCL), `DCS 0 $ r ST` for any other, as xterm answers.
    pub(crate) fn report_setting(&mut self, name: &[u8]) {
        let setting = match name {
            b"m" => {
                let sgr = super::render::sgr(&self.pen.style());
                format!("{}m", &sgr[2..sgr.len() - 1])
            }
            b"r" => format!("{};{}r", self.top + 1, self.bottom + 1),
            // The default shape (0) is the blinking block, which xterm
            // reports as 1.
            b" q" => format!("{} q", self.cursor_shape.max(1)),
            // The conformance level DA reports (VT220), 7-bit controls.
            b"\"p" => "62;1\"p".to_string(),
            _ => {
                self.answer(b"\x1bP0$r\x1b\\");
                return;
            }
        };
        self.answer(format!("\x1bP1$r{setting}\x1b\\").as_bytes());
    }

    fn device_status(&mut self, what: u16) {
        match what {
            5 => self.answer(b"\x1b[0n"),
            6 => {
                let s = format!("\x1b[{};{}R", self.report_row() + 1, self.col + 1);
                self.answer(s.as_bytes());
            }
            _ => {}
        }
    }

    fn ansi_modes(&mut self, p: &Params, on: bool) {
        for g in p.groups() {
            match g[0] {
                4 => self.insert = on,
                20 => self.newline = on,
                _ => {}
            }
        }
    }

    fn dec_modes(&mut self, p: &Params, on: bool) {
        for g in p.groups() {
            self.dec_mode(g[0], on);
        }
    }

    fn dec_mode(&mut self, mode: u16, on: bool) {
        let mouse = |t: MouseTracking| if on { t } else { MouseTracking::Off };
        // Resetting an encoding only matters if it is the one in use (xterm);
        // resetting any tracking mode turns tracking off.
        let current = self.modes.mouse_encoding;
        let encoding = |e: MouseEncoding| match (on, current == e) {
            (true, _) => e,
            (false, true) => MouseEncoding::Default,
            (false, false) => current,
        };
        match mode {
            1 => self.modes.app_cursor_keys = on,
            // DECCOLM: the size stays (a program cannot resize the PTY's
            // terminal), but the screen is cleared and the cursor homed, as
            // tmux and VT100s do.
            3 => {
                self.top = 0;
                self.bottom = self.rows - 1;
                self.goto(0, 0);
                self.erase_in_display(2);
            }
            5 => self.reverse_video = on,
            6 => {
                self.origin = on;
                self.goto(0, 0);
            }
            7 => {
                self.autowrap = on;
                if !on {
                    self.pending_wrap = false;
                }
            }
            9 => self.modes.mouse_tracking = mouse(MouseTracking::X10),
            25 => self.modes.cursor_visible = on,
            47 => self.set_alt_screen(on, false),
            1000 => self.modes.mouse_tracking = mouse(MouseTracking::Normal),
            1002 => self.modes.mouse_tracking = mouse(MouseTracking::ButtonEvent),
            1003 => self.modes.mouse_tracking = mouse(MouseTracking::AnyEvent),
            1004 => self.modes.focus_events = on,
            1005 => self.modes.mouse_encoding = encoding(MouseEncoding::Utf8),
            1006 => self.modes.mouse_encoding = encoding(MouseEncoding::Sgr),
            1015 => self.modes.mouse_encoding = encoding(MouseEncoding::Urxvt),
            1016 => self.modes.mouse_encoding = encoding(MouseEncoding::SgrPixels),
            // 1047 clears the alternate screen when leaving it (xterm).
            1047 => self.set_alt_screen(on, !on),
            1048 => {
                if on {
                    self.save_cursor();
                } else {
                    self.restore_cursor();
                }
            }
            // As xterm and tmux: the cursor is saved and restored even when
            // the screen does not change (dialog leaves 1049 twice).
            1049 => {
                if on {
                    self.save_cursor();
                    self.set_alt_screen(true, true);
                } else {
                    self.set_alt_screen(false, false);
                    self.restore_cursor();
                }
            }
            2004 => self.modes.bracketed_paste = on,
            2026 => self.modes.synchronized_output = on,
            _ => {}
        }
    }

    /// DECRQM for a DEC private mode: 1 set, 2 reset, 0 not recognised.
    fn dec_mode_state(&self, mode: u16) -> u8 {
        let m = &self.modes;
        let set = match mode {
            1 => m.app_cursor_keys,
            5 => self.reverse_video,
            6 => self.origin,
            7 => self.autowrap,
            9 => m.mouse_tracking == MouseTracking::X10,
            25 => m.cursor_visible,
            47 | 1047 | 1049 => m.alt_screen,
            1000 => m.mouse_tracking == MouseTracking::Normal,
            1002 => m.mouse_tracking == MouseTracking::ButtonEvent,
            1003 => m.mouse_tracking == MouseTracking::AnyEvent,
            1004 => m.focus_events,
            1005 => m.mouse_encoding == MouseEncoding::Utf8,
            1006 => m.mouse_encoding == MouseEncoding::Sgr,
            1015 => m.mouse_encoding == MouseEncoding::Urxvt,
            1016 => m.mouse_encoding == MouseEncoding::SgrPixels,
            2004 => m.bracketed_paste,
            2026 => m.synchronized_output,
            _ => return 0,
        };
        if set {
            1
        } else {
            2
        }
    }

    fn report_dec_mode(&mut self, mode: u16) {
        let s = format!("\x1b[?{mode};{}$y", self.dec_mode_state(mode));
        self.answer(s.as_bytes());
    }

    fn report_ansi_mode(&mut self, mode: u16) {
        let state = match mode {
            4 => 2 - u8::from(self.insert),
            20 => 2 - u8::from(self.newline),
            _ => 0,
        };
        let s = format!("\x1b[{mode};{state}$y");
        self.answer(s.as_bytes());
    }

    /// SGR, in both the `;` and the `:` forms of extended colours.
    fn sgr(&mut self, p: &Params) {
        if p.is_empty() {
            self.pen = Pen::default();
        } else if p.has_subparams() {
            self.sgr_subparams(p);
        } else {
            self.sgr_values(p.values());
        }
    }

    /// SGR without `:` (what programs send nearly always): the values by
    /// index into a pen kept in registers, rather than through an iterator
    /// of one-value groups. Does what [`Term::sgr_groups`] does with each
    /// value a group of its own (`sgr_values_match_groups` checks it).
    #[inline]
    fn sgr_values(&mut self, v: &[u16]) {
        let mut pen = self.pen;
        let mut i = 0;
        while let Some(&code) = v.get(i) {
            i += 1;
            match code {
                0 => pen = Pen::default(),
                1 => pen.attrs |= cell::BOLD,
                22 => pen.attrs &= !(cell::BOLD | cell::DIM),
                30..=37 => pen.fg = indexed(code - 30),
                39 => pen.fg = 0,
                40..=47 => pen.bg = indexed(code - 40),
                49 => pen.bg = 0,
                90..=97 => pen.fg = indexed(code - 90 + 8),
                100..=107 => pen.bg = indexed(code - 100 + 8),
                38 | 48 | 58 => {
                    // `38;5;n` or `38;2;r;g;b`; a selector of another
                    // kind is dropped alone, a cut one ends the sequence.
                    let color = match v.get(i) {
                        Some(5) => v.get(i + 1).map(|&n| indexed(n)),
                        Some(2) => match v.get(i + 1..i + 4) {
                            Some(&[r, g, b]) => {
                                Some(pack_color(Color::Rgb(r as u8, g as u8, b as u8)))
                            }
                            _ => None,
                        },
                        _ => None,
                    };
                    i += match v.get(i) {
                        Some(5) => 2,
                        Some(2) => 4,
                        _ => 1,
                    };
                    match (code, color) {
                        (38, Some(c)) => pen.fg = c,
                        (48, Some(c)) => pen.bg = c,
                        _ => {}
                    }
                }
                _ => sgr_attr(&mut pen, &[code]),
            }
        }
        self.pen = pen;
    }

    /// SGR with `:` sub-parameters, out of the fast path's way.
    #[cold]
    #[inline(never)]
    fn sgr_subparams(&mut self, p: &Params) {
        self.sgr_groups(p.groups());
    }

    fn sgr_groups<'a>(&mut self, mut groups: impl Iterator<Item = &'a [u16]>) {
        while let Some(g) = groups.next() {
            let pen = &mut self.pen;
            match g[0] {
                c @ (38 | 48 | 58) => {
                    let color = if g.len() > 1 {
                        colon_color(g)
                    } else {
                        semicolon_color(&mut groups)
                    };
                    if let Some(color) = color {
                        match c {
                            38 => pen.fg = pack_color(color),
                            48 => pen.bg = pack_color(color),
                            _ => {} // underline colour: parsed, not kept
                        }
                    }
                }
                _ => sgr_attr(pen, g),
            }
        }
    }
}

/// The packed palette colour `n` (its low eight bits, as xterm takes it).
#[inline]
fn indexed(n: u16) -> u32 {
    pack_color(Color::Indexed(n as u8))
}

/// One SGR group other than an extended colour: its value and any `:`
/// sub-values.
#[inline(always)]
fn sgr_attr(pen: &mut Pen, g: &[u16]) {
    match g[0] {
        0 => *pen = Pen::default(),
        1 => pen.set(cell::BOLD, true),
        2 => pen.set(cell::DIM, true),
        3 => pen.set(cell::ITALIC, true),
        4 => pen.set_underline(if g.len() > 1 { g[1].min(5) as u8 } else { 1 }),
        5 | 6 => pen.set(cell::BLINK, true),
        7 => pen.set(cell::INVERSE, true),
        8 => pen.set(cell::HIDDEN, true),
        9 => pen.set(cell::STRIKE, true),
        21 => pen.set_underline(2),
        22 => {
            pen.set(cell::BOLD, false);
            pen.set(cell::DIM, false);
        }
        23 => pen.set(cell::ITALIC, false),
        24 => pen.set_underline(0),
        25 => pen.set(cell::BLINK, false),
        27 => pen.set(cell::INVERSE, false),
        28 => pen.set(cell::HIDDEN, false),
        29 => pen.set(cell::STRIKE, false),
        c @ 30..=37 => pen.fg = pack_color(Color::Indexed((c - 30) as u8)),
        39 => pen.fg = 0,
        c @ 40..=47 => pen.bg = pack_color(Color::Indexed((c - 40) as u8)),
        49 => pen.bg = 0,
        c @ 90..=97 => pen.fg = pack_color(Color::Indexed((c - 90 + 8) as u8)),
        c @ 100..=107 => pen.bg = pack_color(Color::Indexed((c - 100 + 8) as u8)),
        _ => {}
    }
}

/// `38:5:n`, `38:2:r:g:b` or `38:2:colourspace:r:g:b`.
fn colon_color(g: &[u16]) -> Option<Color> {
    match g.get(1)? {
        5 => Some(Color::Indexed(*g.get(2)? as u8)),
        2 => {
            let rgb = if g.len() >= 6 { &g[3..6] } else { g.get(2..5)? };
            Some(Color::Rgb(rgb[0] as u8, rgb[1] as u8, rgb[2] as u8))
        }
        _ => None,
    }
}

/// `38;5;n` or `38;2;r;g;b`: the values are the following groups.
fn semicolon_color<'a>(groups: &mut impl Iterator<Item = &'a [u16]>) -> Option<Color> {
    match groups.next()?[0] {
        5 => Some(Color::Indexed(groups.next()?[0] as u8)),
        2 => {
            let r = groups.next()?[0] as u8;
            let g = groups.next()?[0] as u8;
            let b = groups.next()?[0] as u8;
            Some(Color::Rgb(r, g, b))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::cell::Pen;
    use super::super::term::Term;

    /// The SGR fast path (`sgr_values`) leaves the same pen as the general
    /// one (`sgr_groups`, each value a group of its own) from any pen, for
    /// random lists of the values that matter: every attribute and colour
    /// code, extended colours with their selectors and values cut short
    /// (`38`, `38;5`, `38;2;1;2`), unknown selectors (`38;7;1`), the
    /// underline colour (58), values out of range (256, 65535).
    #[test]
    fn sgr_values_match_groups() {
        const CODES: &[u16] = &[
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 21, 22, 23, 24, 25, 27, 28, 29, 30, 31, 37, 38, 39,
            40, 47, 48, 49, 58, 59, 89, 90, 97, 98, 99, 100, 107, 108, 255, 256, 65535,
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rand = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut fast = Term::new(10, 2, 0);
        let mut general = Term::new(10, 2, 0);
        for case in 0..200_000 {
            let len = rand(9);
            let v: Vec<u16> = (0..len)
                .map(|_| match rand(4) {
                    0 => [2, 5][rand(2)],
                    1 => rand(300) as u16,
                    _ => CODES[rand(CODES.len())],
                })
                .collect();
            let start = if rand(8) == 0 {
                Pen::default()
            } else {
                fast.pen
            };
            fast.pen = start;
            general.pen = start;
            fast.sgr_values(&v);
            general.sgr_groups(v.chunks(1));
            assert_eq!(fast.pen, general.pen, "case {case}: {v:?} from {start:?}");
        }
    }
}
