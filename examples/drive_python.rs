//! Drive a Python REPL: type a line, wait until Python waits for input
//! again, print what it answered.
//!
//! ```sh
//! cargo run --example drive_python -- '6 * 7' 'sum(range(10))'
//! ```

use ptybroker::{Session, SessionOptions};

fn main() -> Result<(), ptybroker::Error> {
    let py = Session::spawn(&SessionOptions::new(["python3", "-q"]))?;
    py.step(&[])?; // the first prompt
    let lines: Vec<String> = std::env::args().skip(1).collect();
    let lines = if lines.is_empty() {
        vec!["6 * 7".to_string()]
    } else {
        lines
    };
    for line in &lines {
        let answer = py.step_line(line)?;
        // The stream shows the echo, the answer and the next prompt.
        print!("{}", answer.output);
        println!("[{}]", answer.reason.as_str());
    }
    py.kill();
    Ok(())
}
