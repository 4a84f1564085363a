//! `anchor FILE`: feed FILE to alacritty_terminal (80x24, default
//! configuration) in 4 KiB chunks, as a terminal's reader thread would, and
//! exit. bench/bench.py times this whole process beside `ptybroker render`.
//!
//! `anchor --pty FILE`: alacritty_terminal's own whole system instead: its
//! `tty` starts `cat FILE` on an 80x24 PTY and its `EventLoop` (the thread
//! alacritty reads the PTY on, parsing under the terminal's lock) takes the
//! output to the end and the child's exit. bench/bench.py times it beside
//! the native reader and the daemon, as the engine any terminal would run.

use std::fs::File;
use std::io::Read;

use std::sync::Arc;

use alacritty_terminal::event::{VoidListener, WindowSize};
use alacritty_terminal::event_loop::EventLoop;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::sync::FairMutex;
use alacritty_terminal::term::{Config, Term};
use alacritty_terminal::tty::{self, Shell};
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
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, path] = &args[..] {
        if flag == "--pty" {
            return through_pty(path);
        }
    }
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: anchor [--pty] FILE");
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

/// `cat FILE` on an 80x24 PTY through alacritty_terminal's own event loop,
/// to the child's exit with its output drained.
fn through_pty(path: &str) {
    let size = Size {
        cols: 80,
        lines: 24,
    };
    let term = Arc::new(FairMutex::new(Term::new(
        Config::default(),
        &size,
        VoidListener,
    )));
    let options = tty::Options {
        shell: Some(Shell::new("cat".into(), vec![path.into()])),
        drain_on_exit: true,
        ..tty::Options::default()
    };
    let window = WindowSize {
        num_lines: 24,
        num_cols: 80,
        cell_width: 10,
        cell_height: 20,
    };
    let pty = tty::new(&options, window, 0).unwrap_or_else(|e| {
        eprintln!("anchor: pty: {e}");
        std::process::exit(1);
    });
    let event_loop = EventLoop::new(Arc::clone(&term), VoidListener, pty, true, false)
        .unwrap_or_else(|e| {
            eprintln!("anchor: event loop: {e}");
            std::process::exit(1);
        });
    if event_loop.spawn().join().is_err() {
        eprintln!("anchor: the event loop panicked");
        std::process::exit(1);
    }
    let cursor = term.lock().grid().cursor.point;
    println!("cursor {} {}", cursor.line.0, cursor.column.0);
}
