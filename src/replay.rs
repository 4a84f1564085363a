//! `ptybroker render`: feed a raw byte capture or an asciicast v2 recording
//! through the emulator and print the final screen. Users turn recordings
//! into screenshots with it; the benchmark uses it to time the engine alone.

use serde_json::Value;

use crate::frame;
use crate::limits;
use crate::ops::join_lines;
use crate::vt::Screen;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Ansi,
    Json,
    Svg,
}

impl Format {
    pub fn parse(s: &str) -> Result<Format, String> {
        match s {
            "text" => Ok(Format::Text),
            "ansi" => Ok(Format::Ansi),
            "json" => Ok(Format::Json),
            "svg" => Ok(Format::Svg),
            _ => Err(format!(
                "unknown format {s:?} (use text, ansi, json or svg)"
            )),
        }
    }
}

/// Parse an asciicast v2 header line; `None` if `data` is not a cast.
fn cast_header(data: &[u8]) -> Option<(u16, u16)> {
    // A header is a JSON object: anything else is a raw capture, known
    // without looking for the end of a first line that may be the whole file.
    if data.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let first = data.split(|&b| b == b'\n').next()?;
    let v: Value = serde_json::from_slice(first).ok()?;
    if v.get("version")?.as_u64()? != 2 {
        return None;
    }
    let w = v.get("width")?.as_u64()?;
    let h = v.get("height")?.as_u64()?;
    limits::check_size(w, h).ok()
}

/// Replay `data` into a screen. A cast's own size is used unless `size`
/// overrides it; its `o` events are fed and its `r` events resize.
pub fn replay(data: &[u8], size: Option<(u16, u16)>) -> Result<Screen, String> {
    if let Some((w, h)) = cast_header(data) {
        let (cols, rows) = size.unwrap_or((w, h));
        let mut scr = Screen::new(cols, rows, limits::SCROLLBACK_LINES);
        for (n, line) in data.split(|&b| b == b'\n').enumerate().skip(1) {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let ev: Value = serde_json::from_slice(line)
                .map_err(|e| format!("line {}: not an asciicast event: {e}", n + 1))?;
            let (Some(kind), Some(payload)) = (
                ev.get(1).and_then(Value::as_str),
                ev.get(2).and_then(Value::as_str),
            ) else {
                return Err(format!("line {}: expected [time, code, data]", n + 1));
            };
            match kind {
                "o" => scr.feed(payload.as_bytes()),
                "r" if size.is_none() => {
                    if let Some((c, r)) = payload.split_once('x') {
                        if let (Ok(c), Ok(r)) = (c.parse::<u64>(), r.parse::<u64>()) {
                            if let Ok((c, r)) = limits::check_size(c, r) {
                                scr.resize(c, r);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(scr)
    } else {
        let (cols, rows) = size.unwrap_or((80, 24));
        let mut scr = Screen::new(cols, rows, limits::SCROLLBACK_LINES);
        scr.feed(data);
        Ok(scr)
    }
}

/// The screen in `format`.
pub fn show(scr: &Screen, format: Format) -> String {
    match format {
        Format::Text => {
            let lines: Vec<String> = (0..scr.rows() as usize).map(|r| scr.row_text(r)).collect();
            join_lines(&lines)
        }
        Format::Ansi => {
            let mut s = scr.render_ansi();
            s.push('\n');
            s
        }
        Format::Json => {
            let mut s = frame::frame_json(scr).to_string();
            s.push('\n');
            s
        }
        Format::Svg => frame::svg(scr),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_capture_renders_final_screen() {
        let scr = replay(b"one\r\ntwo\x1b[1;1HONE", Some((10, 3))).unwrap();
        assert_eq!(show(&scr, Format::Text), "ONE\ntwo\n");
    }

    #[test]
    fn asciicast_uses_its_size_and_resizes() {
        let cast = b"{\"version\": 2, \"width\": 20, \"height\": 5}\n[0.1, \"o\", \"hi\\r\\n\"]\n[0.2, \"r\", \"30x6\"]\n[0.3, \"i\", \"ignored\"]\n[0.4, \"o\", \"there\"]\n";
        let scr = replay(cast, None).unwrap();
        assert_eq!((scr.cols(), scr.rows()), (30, 6));
        assert_eq!(show(&scr, Format::Text), "hi\nthere\n");
    }

    #[test]
    fn a_broken_cast_line_is_an_error() {
        let cast = b"{\"version\": 2, \"width\": 20, \"height\": 5}\nnot json\n";
        assert!(replay(cast, None).unwrap_err().contains("line 2"));
    }
}
