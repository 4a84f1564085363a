//! Mouse events to the reports a terminal would send, in the tracking mode and
//! encoding the program negotiated (seed 003's `mouse`).
//!
//! The caller keeps which button is held (`held`) per session: seed 003 lets
//! one button be held at a time, `up` must name it, and a `move` drags it.
//! Anything the program would not receive (reporting off, hover without
//! any-event tracking, a cell outside the viewport or beyond the encoding's
//! range, button misuse) is refused with nothing emitted and `held` unchanged,
//! so a caller never sends half an event.

use std::fmt;
use std::str::FromStr;

use crate::vt::{Modes, MouseEncoding, MouseTracking};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MouseButton {
    Left,
    Middle,
    Right,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MouseAction {
    /// Motion: a drag of the held button, or hover when none is held.
    Move,
    Down,
    Up,
    /// Down and up at the same cell.
    Click,
}

/// One mouse action at a zero-based cell of the viewport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MouseEvent {
    pub action: MouseAction,
    pub x: u16,
    pub y: u16,
    /// Ignored by `Move`, which drags the held button if any.
    pub button: MouseButton,
    pub shift: bool,
    pub alt: bool,
    pub ctrl: bool,
}

/// Why a mouse event was refused; nothing was emitted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MouseError {
    message: String,
}

impl MouseError {
    fn new(message: impl Into<String>) -> MouseError {
        MouseError {
            message: message.into(),
        }
    }
}

impl fmt::Display for MouseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for MouseError {}

impl MouseButton {
    pub fn name(self) -> &'static str {
        match self {
            MouseButton::Left => "left",
            MouseButton::Middle => "middle",
            MouseButton::Right => "right",
        }
    }

    /// The button number of X11 and xterm's reports.
    fn code(self) -> u32 {
        match self {
            MouseButton::Left => 0,
            MouseButton::Middle => 1,
            MouseButton::Right => 2,
        }
    }
}

impl FromStr for MouseButton {
    type Err = MouseError;

    /// `left`, `middle` or `right`, as seed 003 spells them.
    fn from_str(s: &str) -> Result<MouseButton, MouseError> {
        match s {
            "left" => Ok(MouseButton::Left),
            "middle" => Ok(MouseButton::Middle),
            "right" => Ok(MouseButton::Right),
            _ => Err(MouseError::new(format!(
                "unknown mouse button {s:?} (use left, middle or right)"
            ))),
        }
    }
}

impl FromStr for MouseAction {
    type Err = MouseError;

    /// `move`, `down`, `up` or `click`, as seed 003 spells them.
    fn from_str(s: &str) -> Result<MouseAction, MouseError> {
        match s {
            "move" => Ok(MouseAction::Move),
            "down" => Ok(MouseAction::Down),
            "up" => Ok(MouseAction::Up),
            "click" => Ok(MouseAction::Click),
            _ => Err(MouseError::new(format!(
                "unknown mouse action {s:?} (use move, down, up or click)"
            ))),
        }
    }
}

fn tracking_name(t: MouseTracking) -> &'static str {
    match t {
        MouseTracking::Off => "no mouse reporting",
        MouseTracking::X10 => "X10 mouse reporting (mode 9)",
        MouseTracking::Normal => "normal mouse tracking (mode 1000)",
        MouseTracking::ButtonEvent => "button-event mouse tracking (mode 1002)",
        MouseTracking::AnyEvent => "any-event mouse tracking (mode 1003)",
    }
}

/// The bytes the terminal reports for `ev`, updating `held` on success.
/// `cols` and `rows` are the viewport's size.
pub fn encode_mouse(
    ev: &MouseEvent,
    modes: &Modes,
    held: &mut Option<MouseButton>,
    cols: u16,
    rows: u16,
) -> Result<Vec<u8>, MouseError> {
    let tracking = modes.mouse_tracking;
    if tracking == MouseTracking::Off {
        return Err(MouseError::new(
            "mouse reporting is off: the program has not enabled it \
             (DEC private mode 9, 1000, 1002 or 1003)",
        ));
    }
    if ev.x >= cols || ev.y >= rows {
        return Err(MouseError::new(format!(
            "cell x={} y={} is outside the {cols}x{rows} viewport \
             (zero-based: x < {cols}, y < {rows})",
            ev.x, ev.y
        )));
    }
    // X10 compatibility mode reports presses only, without modifiers.
    let x10 = tracking == MouseTracking::X10;
    let mods = if x10 {
        0
    } else {
        4 * u32::from(ev.shift) + 8 * u32::from(ev.alt) + 16 * u32::from(ev.ctrl)
    };
    let report = Report {
        encoding: modes.mouse_encoding,
        x: ev.x,
        y: ev.y,
    };
    let button = ev.button;
    match ev.action {
        MouseAction::Down | MouseAction::Click => {
            if let Some(h) = *held {
                return Err(MouseError::new(format!(
                    "the {} button is held: send up for it before another down or click",
                    h.name()
                )));
            }
            let mut bytes = report.press(button.code() + mods)?;
            if ev.action == MouseAction::Down {
                *held = Some(button);
            } else if !x10 {
                bytes.extend(report.release(button.code(), mods)?);
            }
            Ok(bytes)
        }
        MouseAction::Up => match *held {
            Some(h) if h == button => {
                let bytes = if x10 {
                    Vec::new()
                } else {
                    report.release(button.code(), mods)?
                };
                *held = None;
                Ok(bytes)
            }
            Some(h) => Err(MouseError::new(format!(
                "up for the {} button, but the {} button is held",
                button.name(),
                h.name()
            ))),
            None => Err(MouseError::new(format!(
                "up for the {} button, but no button is held",
                button.name()
            ))),
        },
        MouseAction::Move => {
            let code = match *held {
                None if tracking == MouseTracking::AnyEvent => 3,
                None => {
                    return Err(MouseError::new(format!(
                        "hover (a move with no button held) is reported only under \
                         any-event mouse tracking (mode 1003); the program enabled {}",
                        tracking_name(tracking)
                    )))
                }
                Some(h)
                    if matches!(
                        tracking,
                        MouseTracking::ButtonEvent | MouseTracking::AnyEvent
                    ) =>
                {
                    h.code()
                }
                Some(h) => {
                    return Err(MouseError::new(format!(
                        "a drag (a move with the {} button held) is reported only under \
                         button-event or any-event mouse tracking (mode 1002 or 1003); \
                         the program enabled {}",
                        h.name(),
                        tracking_name(tracking)
                    )))
                }
            };
            report.press(code + 32 + mods)
        }
    }
}

/// The place and format of one report.
struct Report {
    encoding: MouseEncoding,
    x: u16,
    y: u16,
}

impl Report {
    /// A press or motion report with the full button code `cb`.
    fn press(&self, cb: u32) -> Result<Vec<u8>, MouseError> {
        self.encode(cb, b'M')
    }

    /// A release: SGR keeps the button and ends in `m`; the older encodings
    /// cannot say which button was released (code 3).
    fn release(&self, button: u32, mods: u32) -> Result<Vec<u8>, MouseError> {
        match self.encoding {
            MouseEncoding::Sgr | MouseEncoding::SgrPixels => self.encode(button + mods, b'm'),
            _ => self.encode(3 + mods, b'M'),
        }
    }

    fn encode(&self, cb: u32, last: u8) -> Result<Vec<u8>, MouseError> {
        let (x, y) = (u32::from(self.x) + 1, u32::from(self.y) + 1);
        match self.encoding {
            MouseEncoding::Sgr => Ok(format!("\x1b[<{cb};{x};{y}{}", last as char).into_bytes()),
            MouseEncoding::SgrPixels => {
                // The middle of the cell, so that dividing by the cell's
                // size gives the cell whether the program counts pixels
                // from 0 or from 1.
                let (w, h) = crate::limits::CELL_PIXELS;
                let px = u32::from(self.x) * u32::from(w) + u32::from(w) / 2;
                let py = u32::from(self.y) * u32::from(h) + u32::from(h) / 2;
                Ok(format!("\x1b[<{cb};{px};{py}{}", last as char).into_bytes())
            }
            MouseEncoding::Urxvt => Ok(format!("\x1b[{};{x};{y}M", cb + 32).into_bytes()),
            MouseEncoding::Default => {
                // One byte each, offset by 32: cells beyond 223 do not fit.
                let too_far = |v: u32| v + 32 > 255;
                if too_far(x) || too_far(y) {
                    return Err(self.out_of_range(223, "legacy X10"));
                }
                Ok(vec![
                    0x1b,
                    b'[',
                    b'M',
                    (cb + 32) as u8,
                    (x + 32) as u8,
                    (y + 32) as u8,
                ])
            }
            MouseEncoding::Utf8 => {
                // One UTF-8 character each, offset by 32, at most two bytes.
                let (Some(cx), Some(cy), Some(cb)) = (
                    char::from_u32(x + 32).filter(|c| c.len_utf8() <= 2),
                    char::from_u32(y + 32).filter(|c| c.len_utf8() <= 2),
                    char::from_u32(cb + 32),
                ) else {
                    return Err(self.out_of_range(2015, "UTF-8 (mode 1005)"));
                };
                Ok(format!("\x1b[M{cb}{cx}{cy}").into_bytes())
            }
        }
    }

    fn out_of_range(&self, limit: u32, encoding: &str) -> MouseError {
        MouseError::new(format!(
            "cell x={} y={} is beyond the {encoding} mouse encoding's limit of {limit} \
             (1-based); the program did not enable SGR reporting (mode 1006)",
            self.x, self.y
        ))
    }
}
