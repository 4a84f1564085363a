//! Render captured terminal output (a `script` log, `cat -v`'s input, a
//! build log full of progress bars) as the screen it leaves, without a
//! program or a terminal.
//!
//! ```sh
//! cargo run --example render_file -- typescript 80 24
//! ```

use std::process::ExitCode;

use ptybroker::{vt, Screen};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: render_file FILE [COLS [ROWS]]");
        return ExitCode::from(2);
    };
    let cols = args.next().and_then(|a| a.parse().ok()).unwrap_or(80);
    let rows = args.next().and_then(|a| a.parse().ok()).unwrap_or(24);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("render_file: cannot read {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut term = vt::Screen::new(cols, rows, 0);
    term.feed(&bytes);
    let shot = Screen::from(&term);
    print!("{}", shot.text());
    if !shot.title.is_empty() {
        println!("title: {}", shot.title);
    }
    println!("cursor: row {} col {}", shot.cursor.row, shot.cursor.col);
    ExitCode::SUCCESS
}
