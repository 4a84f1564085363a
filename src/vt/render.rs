//! Views of rows for callers: style runs, and ANSI text with SGR
//! re-encoded so a caller can see colours.

use std::fmt::Write;

use super::cell::{Cell, Color, Pen, Run, Style};
use super::grid::Row;

/// A row as runs of one style, trailing default blanks dropped, wide
/// spacers skipped, combining marks kept with their base character.
pub(crate) fn row_runs(row: &Row) -> Vec<Run> {
    let n = row.trimmed_len();
    let mut runs: Vec<Run> = Vec::new();
    let mut cur: Option<(Pen, String)> = None;
    for (i, cell) in row.cells[..n].iter().enumerate() {
        if cell.is_spacer() {
            continue;
        }
        let pen = cell.pen();
        match &mut cur {
            Some((p, text)) if *p == pen => push_cell(text, row, i, cell),
            _ => {
                if let Some((p, text)) = cur.take() {
                    runs.push(Run {
                        text,
                        style: p.style(),
                    });
                }
                let mut text = String::new();
                push_cell(&mut text, row, i, cell);
                cur = Some((pen, text));
            }
        }
    }
    if let Some((p, text)) = cur {
        runs.push(Run {
            text,
            style: p.style(),
        });
    }
    runs
}

fn push_cell(text: &mut String, row: &Row, i: usize, cell: &Cell) {
    text.push(cell.ch());
    row.push_marks(i, text);
}

/// The rows with SGR sequences: each row starts in the default style and,
/// if it changed the style, ends with a reset.
pub(crate) fn ansi<'a>(rows: impl IntoIterator<Item = &'a Row>) -> String {
    let mut out = String::new();
    for (i, row) in rows.into_iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let mut styled = false;
        for run in row_runs(row) {
            if run.style == Style::default() {
                if styled {
                    out.push_str("\x1b[0m");
                    styled = false;
                }
            } else {
                out.push_str(&sgr(&run.style));
                styled = true;
            }
            out.push_str(&run.text);
        }
        if styled {
            out.push_str("\x1b[0m");
        }
    }
    out
}

/// One SGR sequence that sets exactly `style`, starting from a reset.
pub fn sgr(style: &Style) -> String {
    let mut s = String::from("\x1b[0");
    for (on, code) in [
        (style.bold, "1"),
        (style.dim, "2"),
        (style.italic, "3"),
        (style.blink, "5"),
        (style.inverse, "7"),
        (style.hidden, "8"),
        (style.strike, "9"),
    ] {
        if on {
            s.push(';');
            s.push_str(code);
        }
    }
    match style.underline {
        0 => {}
        1 => s.push_str(";4"),
        n => {
            let _ = write!(s, ";4:{n}");
        }
    }
    color(&mut s, style.fg, 30);
    color(&mut s, style.bg, 40);
    s.push('m');
    s
}

fn color(s: &mut String, c: Color, base: u8) {
    let _ = match c {
        Color::Default => Ok(()),
        Color::Indexed(n @ 0..=7) => write!(s, ";{}", base + n),
        Color::Indexed(n @ 8..=15) => write!(s, ";{}", base + 60 + n - 8),
        Color::Indexed(n) => write!(s, ";{};5;{n}", base + 8),
        Color::Rgb(r, g, b) => write!(s, ";{};2;{r};{g};{b}", base + 8),
    };
}
