//! `anchor FILE`: feed FILE to alacritty_terminal (80x24, default
//! configuration) in 4 KiB chunks, as a terminal's reader thread would, and
//! exit. bench/bench.py times this whole process beside `ptybroker render`.

use std::fs::File;
use std::io::Read;

use alacritty_terminal::event::VoidListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::{Config, Term};
use alacritty_terminal::vte::ansi::Processor;

struct Size {
    cols: usize,
    lines: usize,
}

impl Dimensions for Size {
    fn total_lines(&self) -> usize {
        self.lines
    }
    fn screen_lines(&self) -> usize {
        self.lines
    }
    fn columns(&self) -> usize {
        self.cols
    }
}

fn main() {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: anchor FILE");
        std::process::exit(2);
    };
    let mut file = match File::open(&path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("anchor: {}: {e}", path.to_string_lossy());
            std::process::exit(1);
        }
    };
    let size = Size {
        cols: 80,
        lines: 24,
    };
    let mut term = Term::new(Config::default(), &size, VoidListener);
    let mut parser: Processor = Processor::new();
    let mut buf = [0u8; 4096];
    let mut total = 0usize;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                eprintln!("anchor: {e}");
                std::process::exit(1);
            }
        };
        parser.advance(&mut term, &buf[..n]);
        total += n;
    }
    // Something observable, so the work cannot be optimised away.
    let cursor = term.grid().cursor.point;
    println!(
        "{total} bytes, cursor {} {}",
        cursor.line.0, cursor.column.0
    );
}
