//! asciicast v2 recordings (`.cast`, playable by `asciinema play`): a header
//! line, then one `[time, code, data]` line per event: `o` output, `i` input,
//! `r` resize (`COLSxROWS`), `m` marker.
//!
//! The file is written by a thread of its own, fed through a bounded queue:
//! a stalled disk (or a FIFO nobody reads) stalls the recording, never the
//! session that records. Events that find the queue full are dropped, and a
//! marker at the end says how many.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::json::json;

use crate::limits;
use crate::sync::Start;
use crate::text::cut_char_len;

/// A recording in progress: events are timed here and written by the
/// recording's thread.
pub struct Recorder {
    queue: crate::sync::Sender<Event>,
    /// The thread's last word: the file's path, or why it failed.
    done: crate::sync::Take<io::Result<PathBuf>>,
    path: PathBuf,
    started: Instant,
    events: u64,
    dropped: u64,
}

enum Event {
    /// Seconds since the start, code, data.
    Text(f64, &'static str, String),
    Output(f64, Vec<u8>),
    /// Events dropped: the file did not keep up.
    Dropped(f64, u64),
}

impl Recorder {
    /// Create `path` (0600, truncated), write the header, start the writer.
    pub fn create(
        path: &Path,
        cols: u16,
        rows: u16,
        command: &[String],
        term: &str,
    ) -> io::Result<Recorder> {
        // Named here, once, so that every front end blames the file and not
        // the program (a launch with a recording fails on either).
        let mut file = CastFile::create(path, cols, rows, command, term).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot record to {}: {e}", path.display()),
            )
        })?;
        let (queue, events) = crate::sync::queue::<Event>(limits::RECORD_QUEUE);
        let (tell, done) = crate::sync::handoff();
        std::thread::Builder::new()
            .name("recorder".into())
            .stack_size(64 * 1024)
            .start(move || {
                let write = || -> io::Result<PathBuf> {
                    // Dropped on the way out, so that a failed file refuses
                    // later events at once.
                    let events = events;
                    while let Some(event) = events.recv() {
                        match event {
                            Event::Text(t, code, data) => file.event(t, code, &data)?,
                            Event::Output(t, bytes) => file.output(t, &bytes)?,
                            Event::Dropped(t, n) => file.event(
                                t,
                                "m",
                                &format!(
                                    "ptybroker: {n} events dropped (the file did not keep up)"
                                ),
                            )?,
                        }
                    }
                    file.finish()
                };
                tell.give(write());
            })?;
        Ok(Recorder {
            queue,
            done,
            path: path.to_path_buf(),
            started: Instant::now(),
            events: 0,
            dropped: 0,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Events taken (those dropped for a full queue not counted).
    pub fn events(&self) -> u64 {
        self.events
    }

    fn now(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    fn send(&mut self, event: Event) -> io::Result<()> {
        match self.queue.try_send(event) {
            Ok(()) => {
                self.events += 1;
                Ok(())
            }
            Err(crate::sync::Refused::Full) => {
                self.dropped += 1;
                Ok(())
            }
            Err(crate::sync::Refused::Gone) => Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the recording's writer stopped",
            )),
        }
    }

    /// Program output; bytes of an unfinished UTF-8 character wait for the next call.
    pub fn output(&mut self, bytes: &[u8]) -> io::Result<()> {
        let t = self.now();
        self.send(Event::Output(t, bytes.to_vec()))
    }

    /// Input sent to the program, as the bytes written.
    pub fn input(&mut self, bytes: &[u8]) -> io::Result<()> {
        let t = self.now();
        self.send(Event::Text(
            t,
            "i",
            String::from_utf8_lossy(bytes).into_owned(),
        ))
    }

    pub fn resize(&mut self, cols: u16, rows: u16) -> io::Result<()> {
        let t = self.now();
        self.send(Event::Text(t, "r", format!("{cols}x{rows}")))
    }

    pub fn marker(&mut self, label: &str) -> io::Result<()> {
        let t = self.now();
        self.send(Event::Text(t, "m", label.to_string()))
    }

    /// Write what is queued and close the file; waits at most
    /// [`limits::RECORD_FINISH_WAIT`] for a file that does not take writes
    /// (its thread finishes the file when it does).
    pub fn finish(self) -> io::Result<PathBuf> {
        if self.dropped > 0 {
            // Blocking: the queue drains while the file takes writes.
            let t = self.now();
            let _ = self.queue.send(Event::Dropped(t, self.dropped));
        }
        drop(self.queue);
        match self.done.within(limits::RECORD_FINISH_WAIT) {
            Some(result) => result,
            None => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "{} does not take writes: the rest of the recording is written when it does",
                    self.path.display()
                ),
            )),
        }
    }
}

/// The file of a recording. Output may split UTF-8 characters across reads, so the
/// tail of an incomplete character is carried to the next event.
struct CastFile {
    out: BufWriter<File>,
    path: PathBuf,
    carry: Vec<u8>,
    /// The time of the last event written.
    last: f64,
}

impl CastFile {
    /// Create `path` (0600, truncated) and write the header.
    fn create(
        path: &Path,
        cols: u16,
        rows: u16,
        command: &[String],
        term: &str,
    ) -> io::Result<CastFile> {
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
        Ok(CastFile {
            out,
            path: path.to_path_buf(),
            carry: Vec::new(),
            last: 0.0,
        })
    }

    fn event(&mut self, t: f64, code: &str, data: &str) -> io::Result<()> {
        self.last = t;
        writeln!(self.out, "{}", json!([(t * 1e6).round() / 1e6, code, data]))
    }

    /// Program output; bytes of an unfinished UTF-8 character wait for the next call.
    fn output(&mut self, t: f64, bytes: &[u8]) -> io::Result<()> {
        self.carry.extend_from_slice(bytes);
        let keep = cut_char_len(&self.carry);
        let ready = self.carry.len() - keep;
        if ready == 0 {
            return Ok(());
        }
        let text = String::from_utf8_lossy(&self.carry[..ready]).into_owned();
        self.carry.drain(..ready);
        self.event(t, "o", &text)
    }

    /// Flush everything, including a carried partial character.
    fn finish(mut self) -> io::Result<PathBuf> {
        if !self.carry.is_empty() {
            let rest = std::mem::take(&mut self.carry);
            self.event(self.last, "o", &String::from_utf8_lossy(&rest))?;
        }
        self.out.flush()?;
        Ok(self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_characters_are_carried() {
        assert_eq!(cut_char_len(b"abc"), 0);
        assert_eq!(cut_char_len("é".as_bytes()), 0);
        assert_eq!(cut_char_len(&"é".as_bytes()[..1]), 1);
        assert_eq!(cut_char_len(&"€".as_bytes()[..2]), 2);
        assert_eq!(cut_char_len(&"😀".as_bytes()[..3]), 3);
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
