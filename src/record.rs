//! asciicast v2 recordings (`.cast`, playable by `asciinema play`): a header
//! line, then one `[time, code, data]` line per event: `o` output, `i` input,
//! `r` resize (`COLSxROWS`), `m` marker.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;

/// An open recording. Output may split UTF-8 characters across reads, so the
/// tail of an incomplete character is carried to the next event.
pub struct Recorder {
    out: BufWriter<File>,
    path: PathBuf,
    started: Instant,
    carry: Vec<u8>,
    events: u64,
}

impl Recorder {
    /// Create `path` (0600, truncated) and write the header.
    pub fn create(
        path: &Path,
        cols: u16,
        rows: u16,
        command: &[String],
        term: &str,
    ) -> io::Result<Recorder> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)?;
        let mut out = BufWriter::new(file);
        let header = json!({
            "version": 2,
            "width": cols,
            "height": rows,
            "timestamp": SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            "command": command.join(" "),
            "env": {"TERM": term},
        });
        writeln!(out, "{header}")?;
        Ok(Recorder {
            out,
            path: path.to_path_buf(),
            started: Instant::now(),
            carry: Vec::new(),
            events: 0,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn events(&self) -> u64 {
        self.events
    }

    fn event(&mut self, code: &str, data: &str) -> io::Result<()> {
        let t = self.started.elapsed().as_secs_f64();
        self.events += 1;
        writeln!(self.out, "{}", json!([(t * 1e6).round() / 1e6, code, data]))
    }

    /// Program output; bytes of an unfinished UTF-8 character wait for the next call.
    pub fn output(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.carry.extend_from_slice(bytes);
        let keep = incomplete_utf8_tail(&self.carry);
        let ready = self.carry.len() - keep;
        if ready == 0 {
            return Ok(());
        }
        let text = String::from_utf8_lossy(&self.carry[..ready]).into_owned();
        self.carry.drain(..ready);
        self.event("o", &text)
    }

    /// Input sent to the program, as the bytes written.
    pub fn input(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.event("i", &String::from_utf8_lossy(bytes))
    }

    pub fn resize(&mut self, cols: u16, rows: u16) -> io::Result<()> {
        self.event("r", &format!("{cols}x{rows}"))
    }

    pub fn marker(&mut self, label: &str) -> io::Result<()> {
        self.event("m", label)
    }

    /// Flush everything, including a carried partial character.
    pub fn finish(mut self) -> io::Result<PathBuf> {
        if !self.carry.is_empty() {
            let rest = std::mem::take(&mut self.carry);
            self.event("o", &String::from_utf8_lossy(&rest))?;
        }
        self.out.flush()?;
        Ok(self.path)
    }
}

/// How many bytes at the end of `b` begin a UTF-8 character not yet complete.
fn incomplete_utf8_tail(b: &[u8]) -> usize {
    for back in 1..=3.min(b.len()) {
        let byte = b[b.len() - back];
        if byte & 0xC0 == 0x80 {
            continue; // a continuation byte: look further back for the lead
        }
        let need = match byte {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => return 0,
        };
        return if need > back { back } else { 0 };
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_characters_are_carried() {
        assert_eq!(incomplete_utf8_tail(b"abc"), 0);
        assert_eq!(incomplete_utf8_tail("é".as_bytes()), 0);
        assert_eq!(incomplete_utf8_tail(&"é".as_bytes()[..1]), 1);
        assert_eq!(incomplete_utf8_tail(&"€".as_bytes()[..2]), 2);
        assert_eq!(incomplete_utf8_tail(&"😀".as_bytes()[..3]), 3);
    }

    #[test]
    fn writes_a_valid_cast() {
        let dir = std::env::temp_dir().join(format!("ptyb-rec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.cast");
        let mut r = Recorder::create(&path, 80, 24, &["bash".into()], "xterm-256color").unwrap();
        let euro = "€".as_bytes();
        r.output(b"hi ").unwrap();
        r.output(&euro[..1]).unwrap();
        r.output(&euro[1..]).unwrap();
        r.input(b"ls\r").unwrap();
        r.resize(100, 30).unwrap();
        r.marker("done").unwrap();
        r.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["version"], 2);
        assert_eq!(lines[0]["width"], 80);
        assert_eq!(lines[1][1], "o");
        assert_eq!(lines[2][2], "€");
        assert_eq!(lines[3][1], "i");
        assert_eq!(lines[4][2], "100x30");
        assert_eq!(lines[5][1], "m");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
