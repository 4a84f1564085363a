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

// TEMPORARY STUB on branch `keys` (drop on merge; the vt branch owns this file):
// the `Modes` part of the vt contract, copied verbatim so that keys.rs compiles.
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
} // 9, 1000, 1002, 1003
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MouseEncoding {
    #[default]
    Default,
    Utf8,
    Sgr,
    Urxvt,
} // 1005, 1006, 1015
