//! Structured views of a screen for machines: a JSON frame of rows as style
//! runs (used by `render --format json`, `pty/read` with `format: "json"` and
//! the driver's `capture`) and an SVG picture of it.

use std::fmt::Write as _;

use crate::json::json;

use serde_json::{Map, Value};

use crate::vt::{palette, Color, Cursor, CursorShape, Run, Screen, Style};

// ---- the cursor on the wire -------------------------------------------------
//
// Every cursor ptybroker reports counts cells from 0 at the top-left, as the
// screen does and as seed 003's mouse cells do: the frame's (`render
// --format json`, `pty/read`'s `frame`, the driver's `capture`) and MCP's
// `terminal_screen`. Seed 000 alone fixes its own `cursor` (`pty/read`,
// `pty/wait`, and so `read --json`) at 1-based. Every front end takes its
// cursor from here.

/// `{row, col, visible}`, row and col counted from 0.
pub fn cursor_json(c: Cursor) -> Value {
    json!({"row": c.row, "col": c.col, "visible": c.visible})
}

/// Seed 000's `cursor`: `{row, col, visible}`, row and col counted from 1.
pub fn cursor_json_from_1(c: Cursor) -> Value {
    json!({"row": u32::from(c.row) + 1, "col": u32::from(c.col) + 1, "visible": c.visible})
}

/// Seed 004's `cursor`: `{x: column, y: row}`, counted from 0.
pub fn cursor_xy_json(c: Cursor) -> Value {
    json!({"x": c.col, "y": c.row})
}

fn color_json(c: Color) -> Value {
    match c {
        Color::Default => Value::Null,
        Color::Indexed(i) => json!(i),
        Color::Rgb(r, g, b) => json!(format!("#{r:02x}{g:02x}{b:02x}")),
    }
}

/// A style as JSON, listing only what differs from the default.
pub fn style_json(s: &Style) -> Value {
    let mut m = Map::new();
    if s.fg != Color::Default {
        m.insert("fg".into(), color_json(s.fg));
    }
    if s.bg != Color::Default {
        m.insert("bg".into(), color_json(s.bg));
    }
    for (on, name) in [
        (s.bold, "bold"),
        (s.dim, "dim"),
        (s.italic, "italic"),
        (s.blink, "blink"),
        (s.inverse, "inverse"),
        (s.hidden, "hidden"),
        (s.strike, "strike"),
    ] {
        if on {
            m.insert(name.into(), json!(true));
        }
    }
    if s.underline != 0 {
        let u = ["none", "single", "double", "curly", "dotted", "dashed"];
        m.insert(
            "underline".into(),
            json!(u.get(usize::from(s.underline)).copied().unwrap_or("single")),
        );
    }
    Value::Object(m)
}

fn runs_json(runs: &[Run]) -> Value {
    Value::Array(
        runs.iter()
            .map(|r| json!({"text": r.text, "style": style_json(&r.style)}))
            .collect(),
    )
}

/// The visible screen as `{cols, rows, cursor, title, altScreen, lines: [{text, runs}]}`
/// (the cursor counted from 0, see [`cursor_json`]).
pub fn frame_json(scr: &Screen) -> Value {
    let c = scr.cursor();
    let (shape, blinking) = scr.cursor_shape();
    let lines: Vec<Value> = (0..scr.rows() as usize)
        .map(|r| json!({"text": scr.row_text(r), "runs": runs_json(&scr.row_runs(r))}))
        .collect();
    let mut cursor = cursor_json(c);
    cursor["style"] = json!(shape.name());
    cursor["blinking"] = json!(blinking);
    json!({
        "cols": scr.cols(),
        "rows": scr.rows(),
        "cursor": cursor,
        "title": scr.title(),
        "altScreen": scr.is_alt_screen(),
        "lines": lines,
    })
}

const FG: (u8, u8, u8) = (229, 229, 229);
const BG: (u8, u8, u8) = (0, 0, 0);

/// A colour as RGB, with `default` for the terminal's default.
fn rgb(c: Color, default: (u8, u8, u8)) -> (u8, u8, u8) {
    match c {
        Color::Default => default,
        Color::Rgb(r, g, b) => (r, g, b),
        Color::Indexed(i) => palette(i),
    }
}

fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn escape_xml(s: &str, out: &mut String) {
    for ch in s.chars() {
        match ch {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Control characters are not allowed in XML 1.0.
            c if (c as u32) < 0x20 => out.push(' '),
            c => out.push(c),
        }
    }
}

/// A length in tenths of a pixel, written as `12.3`: the SVG's coordinates
/// are whole tenths, so no float formatting is linked for them.
struct Tenths(usize);

impl std::fmt::Display for Tenths {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.0 / 10, self.0 % 10)
    }
}

/// The screen drawn as SVG: a monospace grid with colours, attributes and the
/// cursor, one `<text>` per style run. Lengths are in tenths of a pixel: a
/// cell is 8.4 by 17, text sits on a baseline 13.3 below the row's top.
pub fn svg(scr: &Screen) -> String {
    const CW: usize = 84;
    const CH: usize = 170;
    const BASELINE: usize = 133;
    let (cols, rows) = (usize::from(scr.cols()), usize::from(scr.rows()));
    let (w, h) = (Tenths(cols * CW), Tenths(rows * CH));
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
         font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" font-size=\"14\">\
         <rect width=\"100%\" height=\"100%\" fill=\"{}\"/>",
        hex(BG)
    );
    let c = scr.cursor();
    for row in 0..rows {
        let y = row * CH;
        let mut col = 0usize;
        for run in scr.row_runs(row) {
            let width: usize = run.text.chars().map(crate::vt::width).sum();
            let s = &run.style;
            let (mut fg, mut bg) = (rgb(s.fg, FG), rgb(s.bg, BG));
            if s.inverse {
                std::mem::swap(&mut fg, &mut bg);
            }
            let x = Tenths(col * CW);
            if bg != BG {
                let _ = write!(
                    out,
                    "<rect x=\"{x}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>",
                    Tenths(y),
                    Tenths(width * CW),
                    Tenths(CH),
                    hex(bg)
                );
            }
            if !run.text.trim().is_empty() && !s.hidden {
                let _ = write!(
                    out,
                    "<text x=\"{x}\" y=\"{}\" fill=\"{}\" xml:space=\"preserve\" textLength=\"{}\" lengthAdjust=\"spacingAndGlyphs\"",
                    Tenths(y + BASELINE),
                    hex(fg),
                    Tenths(width * CW)
                );
                if s.bold {
                    out.push_str(" font-weight=\"bold\"");
                }
                if s.italic {
                    out.push_str(" font-style=\"italic\"");
                }
                if s.dim {
                    out.push_str(" opacity=\"0.6\"");
                }
                match (s.underline != 0, s.strike) {
                    (true, true) => out.push_str(" text-decoration=\"underline line-through\""),
                    (true, false) => out.push_str(" text-decoration=\"underline\""),
                    (false, true) => out.push_str(" text-decoration=\"line-through\""),
                    _ => {}
                }
                out.push('>');
                escape_xml(&run.text, &mut out);
                out.push_str("</text>");
            }
            col += width;
        }
    }
    if c.visible {
        // The shape the program chose: a block, a bar at the left or an
        // underline at the bottom of the cell.
        let (x, y) = (usize::from(c.col) * CW, usize::from(c.row) * CH);
        let (y, w, h) = match scr.cursor_shape().0 {
            CursorShape::Block => (y, CW, CH),
            CursorShape::Bar => (y, 20, CH),
            CursorShape::Underline => (y + CH - 20, CW, 20),
        };
        let _ = write!(
            out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" opacity=\"0.5\"/>",
            Tenths(x),
            Tenths(y),
            Tenths(w),
            Tenths(h),
            hex(FG)
        );
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_lists_runs_with_styles() {
        let mut s = Screen::new(20, 3, 0);
        s.feed(b"\x1b[1;31mred\x1b[0m plain");
        let f = frame_json(&s);
        assert_eq!(f["lines"][0]["text"], "red plain");
        assert_eq!(f["lines"][0]["runs"][0]["text"], "red");
        assert_eq!(f["lines"][0]["runs"][0]["style"]["bold"], true);
        assert_eq!(f["lines"][0]["runs"][0]["style"]["fg"], 1);
        assert_eq!(f["cursor"]["col"], 9);
        assert_eq!(f["cursor"]["style"], "block");
        s.feed(b"\x1b[6 q");
        let f = frame_json(&s);
        assert_eq!(
            (
                f["cursor"]["style"].as_str(),
                f["cursor"]["blinking"].as_bool()
            ),
            (Some("bar"), Some(false))
        );
        assert!(svg(&s).contains("width=\"2.0\""));
    }

    /// A screen never written (its rows hold no cells) and one written then
    /// erased draw the same frame and SVG, after the same bytes and after a
    /// resize (the emulator's own tests compare its views the same way).
    #[test]
    fn rows_without_cells_draw_as_blank_rows_do() {
        let materialised = |cols: u16, rows: u16| {
            let mut s = Screen::new(cols, rows, 100);
            for r in 1..=rows {
                s.feed(format!("\x1b[{r};1H{}", "x".repeat(usize::from(cols))).as_bytes());
            }
            s.feed(b"\x1b[H\x1b[2J");
            s
        };
        let cases: [&[u8]; 4] = [
            b"",
            b"\x1b[44m\x1b[2;3H\x1b[K\x1b[3;2H\x1b[2X\x1b[4;1H\x1b[1K\x1b[0m",
            b"\x1b[3;7Hx\x1b[2;4H\xcc\x81\x1b[4;5H\xe4\xb8\xad\x1b[6 q",
            b"0\r\n1\r\n$ abcdefghijklm\r\n\r\nnext\x1b[2;3H",
        ];
        for bytes in cases {
            let (mut fresh, mut full) = (Screen::new(12, 6, 100), materialised(12, 6));
            fresh.feed(bytes);
            full.feed(bytes);
            let what = String::from_utf8_lossy(bytes);
            assert_eq!(frame_json(&fresh), frame_json(&full), "{what}: json");
            assert_eq!(svg(&fresh), svg(&full), "{what}: svg");
            fresh.resize(7, 3);
            full.resize(7, 3);
            assert_eq!(
                frame_json(&fresh),
                frame_json(&full),
                "{what}: json, resized"
            );
            assert_eq!(svg(&fresh), svg(&full), "{what}: svg, resized");
        }
    }

    #[test]
    fn svg_lengths_are_whole_tenths() {
        let mut s = Screen::new(81, 2, 0);
        s.feed(b"\x1b[41mab\x1b[0m\r\n\x1b[4 q");
        let out = svg(&s);
        assert!(out.starts_with("<svg"), "{out}");
        assert!(out.contains("width=\"680.4\" height=\"34.0\""), "{out}");
        assert!(
            out.contains("<rect x=\"0.0\" y=\"0.0\" width=\"16.8\" height=\"17.0\""),
            "{out}"
        );
        assert!(out.contains("<text x=\"0.0\" y=\"13.3\""), "{out}");
        // The underline cursor on row 2: 2 px high at the cell's bottom.
        assert!(
            out.contains("<rect x=\"0.0\" y=\"32.0\" width=\"8.4\" height=\"2.0\""),
            "{out}"
        );
    }

    /// Next to every cursor field, the man page and README say where it
    /// counts from (`anchor`, then `base` within the same paragraph).
    #[test]
    fn the_docs_say_where_each_cursor_counts_from() {
        let man = include_str!("../man/ptybroker.1");
        let readme = include_str!("../README.md");
        let checks = [
            ("man", man, ".It Cm read Oo", "counted from 1"),
            ("man", man, ".It Cm render Oo", "counted from 0"),
            ("man", man, ".It Li pty/read Brq", "counted from 1"),
            ("man", man, ".Li format : Qq json", "counted from 0"),
            ("man", man, ".It Li pty/wait Brq", "counted from 1"),
            (
                "man",
                man,
                ".Brq row, col, visible, style, blinking",
                "counted from 0",
            ),
            ("man", man, ".Li terminal_screen\nreturns", "counted from 0"),
            ("README", readme, "| `pty/read` |", "counted from 1"),
            (
                "README",
                readme,
                "`{cols, rows, cursor: {row, col",
                "counted from 0",
            ),
            (
                "README",
                readme,
                "`terminal_screen` shows",
                "counted from 0",
            ),
            ("README", readme, "`ptybroker render [", "counted from 0"),
        ];
        for (doc, text, anchor, base) in checks {
            let at = text
                .find(anchor)
                .unwrap_or_else(|| panic!("{doc} has no {anchor:?}"));
            let rest = &text[at..];
            let para = rest
                .find("\n\n")
                .into_iter()
                .chain(rest.find("\n.Pp"))
                .chain(rest.find("\n.It "))
                .filter(|&end| end > anchor.len())
                .min()
                .map_or(rest, |end| &rest[..end]);
            assert!(
                para.replace('\n', " ").contains(base),
                "{doc}: no {base:?} after {anchor:?} in {para:?}"
            );
        }
    }

    #[test]
    fn svg_escapes_text() {
        let mut s = Screen::new(20, 2, 0);
        s.feed(b"<a&b>");
        let out = svg(&s);
        assert!(out.starts_with("<svg "));
        assert!(out.contains("&lt;a&amp;b&gt;"));
        assert!(out.trim_end().ends_with("</svg>"));
    }
}
