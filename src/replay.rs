//! `ptybroker render`: feed a raw byte capture or an asciicast v2 recording
//! through the emulator and print the final screen. Users turn recordings
//! into screenshots with it; the benchmark uses it to time the engine alone.

use std::io::{BufRead, BufReader, Read};

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

/// Parse an asciicast v2 header line; `None` if `first` is not one.
fn cast_header(first: &[u8]) -> Option<(u16, u16)> {
    let v: Value = serde_json::from_slice(first).ok()?;
    if v.get("version")?.as_u64()? != 2 {
        return None;
    }
    let w = v.get("width")?.as_u64()?;
    let h = v.get("height")?.as_u64()?;
    limits::check_size(w, h).ok()
}

/// How much of a raw capture is fed at a time: the file is streamed, not
/// read whole (a capture of any size needs this much memory, and the
/// emulator's speed is not hidden behind a copy of the file and its page
/// faults).
const CHUNK: usize = 64 * 1024;

/// Replay `input` (named `what` in errors) into a screen. A cast's own
/// size is used unless `size` overrides it; its `o` events are fed and its
/// `r` events resize. Both kinds are read a piece at a time.
pub fn replay(input: impl Read, what: &str, size: Option<(u16, u16)>) -> Result<Screen, String> {
    let failed = |e: std::io::Error| format!("cannot read {what}: {e}");
    let mut input = BufReader::with_capacity(CHUNK, input);
    // A header is a JSON object: anything else is a raw capture, known
    // without looking for the end of a first line that may be the whole file.
    let head = input.fill_buf().map_err(failed)?;
    let cast = head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let mut line = Vec::new();
    if cast {
        input.read_until(b'\n', &mut line).map_err(failed)?;
    }
    let Some((w, h)) = cast.then(|| cast_header(&line)).flatten() else {
        let (cols, rows) = size.unwrap_or((80, 24));
        let mut scr = Screen::new(cols, rows, limits::SCROLLBACK_LINES);
        // What was read looking for a header is output like the rest.
        scr.feed(&line);
        loop {
            let buf = input.fill_buf().map_err(failed)?;
            if buf.is_empty() {
                return Ok(scr);
            }
            scr.feed(buf);
            let n = buf.len();
            input.consume(n);
        }
    };
    let (cols, rows) = size.unwrap_or((w, h));
    let mut scr = Screen::new(cols, rows, limits::SCROLLBACK_LINES);
    for n in 2.. {
        line.clear();
        if input.read_until(b'\n', &mut line).map_err(failed)? == 0 {
            break;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let ev: Value = serde_json::from_slice(&line)
            .map_err(|e| format!("line {n}: not an asciicast event: {e}"))?;
        let (Some(kind), Some(payload)) = (
            ev.get(1).and_then(Value::as_str),
            ev.get(2).and_then(Value::as_str),
        ) else {
            return Err(format!("line {n}: expected [time, code, data]"));
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
        let scr = replay(&b"one\r\ntwo\x1b[1;1HONE"[..], "t", Some((10, 3))).unwrap();
        assert_eq!(show(&scr, Format::Text), "ONE\ntwo\n");
    }

    #[test]
    fn asciicast_uses_its_size_and_resizes() {
        let cast = b"{\"version\": 2, \"width\": 20, \"height\": 5}\n[0.1, \"o\", \"hi\\r\\n\"]\n[0.2, \"r\", \"30x6\"]\n[0.3, \"i\", \"ignored\"]\n[0.4, \"o\", \"there\"]\n";
        let scr = replay(&cast[..], "t", None).unwrap();
        assert_eq!((scr.cols(), scr.rows()), (30, 6));
        assert_eq!(show(&scr, Format::Text), "hi\nthere\n");
    }

    #[test]
    fn a_broken_cast_line_is_an_error() {
        let cast = b"{\"version\": 2, \"width\": 20, \"height\": 5}\nnot json\n";
        assert!(replay(&cast[..], "t", None).unwrap_err().contains("line 2"));
    }

    #[test]
    fn a_raw_capture_is_streamed_with_the_same_screen_as_fed_whole() {
        // Sequences and characters cut by every chunk boundary; a first
        // line that looks like JSON but is no cast header is output too.
        let mut data = b"{\"not\": \"a header\"}\r\n".to_vec();
        let mut i = 0u32;
        while data.len() < 5 * CHUNK {
            let line = format!("\x1b[3{}m{i} \u{e9}\u{65e5} \x1b[0m\x1b[K\r\n", i % 8);
            data.extend_from_slice(line.as_bytes());
            i += 1;
        }
        data.extend_from_slice(b"\x1b[2;5Hend");
        let mut whole = Screen::new(40, 6, limits::SCROLLBACK_LINES);
        whole.feed(&data);
        let streamed = replay(&data[..], "t", Some((40, 6))).unwrap();
        for f in [Format::Text, Format::Ansi] {
            assert_eq!(show(&streamed, f), show(&whole, f));
        }
        assert!(show(&streamed, Format::Text).contains("end"));
        let first = replay(&b"{x}\r\nsecond"[..], "t", Some((10, 3))).unwrap();
        assert_eq!(show(&first, Format::Text), "{x}\nsecond\n");
    }
}
