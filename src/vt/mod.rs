//! The terminal emulator: bytes in, screen out. No I/O, no threads, no
//! knowledge of PTYs or protocols.
//!
//! `parser` is a pure DEC/ANSI state machine that calls a `Perform` trait;
//! the screen implements it. Everything a front end needs to show a screen
//! is reachable from [`Screen`].
//!
//! CONTRACT (the rest of the crate codes against exactly this API):
//!
//! ```text
//! Screen::new(cols: u16, rows: u16, scrollback_limit: usize) -> Screen
//! Screen::feed(&mut self, bytes: &[u8])            // any bytes, any split points
//! Screen::take_answers(&mut self) -> Vec<u8>        // replies for the PTY (DSR, DA, ...)
//! Screen::resize(&mut self, cols: u16, rows: u16)
//! Screen::cols(&self) -> u16, Screen::rows(&self) -> u16
//! Screen::cursor(&self) -> Cursor                   // 0-based row/col, visible
//! Screen::title(&self) -> &str
//! Screen::is_alt_screen(&self) -> bool
//! Screen::row_text(&self, row: usize) -> String     // visible row, trailing blanks trimmed
//! Screen::scrollback_len(&self) -> usize
//! Screen::scrollback_row_text(&self, i: usize) -> String // 0 = oldest
//! Screen::modes(&self) -> Modes
//! Screen::is_mid_sequence(&self) -> bool            // inside an escape sequence or UTF-8 char
//! ```

// Temporary stand-in until the emulator branch lands; replaced wholesale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Modes {
    pub app_cursor_keys: bool,
    pub app_keypad: bool,
    pub bracketed_paste: bool,
    pub mouse_tracking: MouseTracking,
    pub mouse_encoding: MouseEncoding,
    pub focus_events: bool,
    pub synchronized_output: bool,
    pub cursor_visible: bool,
    pub alt_screen: bool,
}
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MouseTracking {
    #[default]
    Off,
    X10,
    Normal,
    ButtonEvent,
    AnyEvent,
}
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MouseEncoding {
    #[default]
    Default,
    Utf8,
    Sgr,
    Urxvt,
}
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Cursor {
    pub row: u16,
    pub col: u16,
    pub visible: bool,
}
pub struct Screen {
    cols: u16,
    rows: u16,
    lines: Vec<String>,
}
impl Screen {
    pub fn new(cols: u16, rows: u16, _scrollback_limit: usize) -> Screen {
        Screen {
            cols,
            rows,
            lines: vec![String::new(); rows as usize],
        }
    }
    pub fn feed(&mut self, bytes: &[u8]) {
        let s = String::from_utf8_lossy(bytes);
        for ch in s.chars() {
            match ch {
                '\n' => {
                    self.lines.remove(0);
                    self.lines.push(String::new());
                }
                '\r' => {}
                c if !c.is_control() => self.lines.last_mut().unwrap().push(c),
                _ => {}
            }
        }
    }
    pub fn take_answers(&mut self) -> Vec<u8> {
        Vec::new()
    }
    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.cols = cols;
        self.rows = rows;
        self.lines.resize(rows as usize, String::new());
    }
    pub fn cols(&self) -> u16 {
        self.cols
    }
    pub fn rows(&self) -> u16 {
        self.rows
    }
    pub fn cursor(&self) -> Cursor {
        Cursor {
            row: self.rows - 1,
            col: 0,
            visible: true,
        }
    }
    pub fn title(&self) -> &str {
        ""
    }
    pub fn is_alt_screen(&self) -> bool {
        false
    }
    pub fn row_text(&self, row: usize) -> String {
        self.lines.get(row).cloned().unwrap_or_default()
    }
    pub fn scrollback_len(&self) -> usize {
        0
    }
    pub fn scrollback_row_text(&self, _i: usize) -> String {
        String::new()
    }
    pub fn modes(&self) -> Modes {
        Modes::default()
    }
    pub fn is_mid_sequence(&self) -> bool {
        false
    }
    pub fn render_ansi(&self) -> String {
        String::new()
    }
}
