//! The terminal emulator: bytes in, screen out. No I/O, no threads, no
//! knowledge of PTYs or protocols.
//!
//! ptybroker re-exports this crate as `ptybroker::vt`. It is a crate of its
//! own so that the release profile can build it for speed while the rest of
//! ptybroker builds for size (the profile in ptybroker's Cargo.toml).
//!
//! `parser` is a pure DEC/ANSI state machine (after Paul Williams' diagram)
//! that calls a [`parser::Perform`] trait; `term` implements it over the grid
//! (`grid`, `cell`), with C0/ESC/OSC in `perform`, CSI decoding in `csi`,
//! resizing in `reflow` and the caller's views in `render`. Everything a
//! front end needs is reachable from [`Screen`]:
//!
//! ```
//! use ptybroker_vt::Screen;
//! let mut s = Screen::new(80, 24, 1000);
//! s.feed(b"\x1b[1;31mhello\x1b[0m\r\nworld\x1b[6n");
//! assert_eq!(s.row_text(0), "hello");
//! assert_eq!(s.cursor().row, 1);
//! assert_eq!(s.take_answers(), b"\x1b[2;6R");
//! ```

#[doc(hidden)]
pub mod blocks;
mod cell;
mod charset;
mod csi;
mod grid;
pub mod parser;
mod perform;
mod reflow;
mod render;
mod screen;
mod term;

pub use cell::{width, Color, Run, Style};
pub use charset::Charset;

/// The size of one cell in pixels (width, height) as the terminal reports
/// it (`CSI 14 t`, `CSI 16 t`): a nominal 10 by 20, the same the session's
/// window size and mouse reports in pixels use.
pub const CELL_PIXELS: (u16, u16) = (10, 20);
pub use perform::palette;
pub use render::sgr;
pub use screen::{Cursor, CursorShape, Modes, MouseEncoding, MouseTracking, Screen};
