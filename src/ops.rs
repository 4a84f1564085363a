//! The core operations every front end shares, in protocol-neutral types:
//! reading the screen, turning input actions into bytes, stepping a program
//! (input, settle, output). Front ends only translate their wire format to
//! these calls and back.

use std::time::{Duration, Instant};

use crate::keys;
use crate::limits;
use crate::manager::Error;
use crate::session::{Cancel, OutputText, Reason, Session, SettleSpec, Status, Until};
use crate::text;
use crate::transcript::Chunk;

/// Which rows of the screen to return (seed 000's `pty/read` selection).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    All,
    Top(usize),
    Bottom(usize),
    /// 1-based, inclusive.
    Range(usize, usize),
    /// The last `n` lines of content: rows down to the last one that is not
    /// blank or the cursor's, whichever is lower (the CLI's `read
    /// --bottom`; `Bottom` counts the terminal's rows, blank or not).
    Last(usize),
}

/// How the screen is rendered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Ansi,
    /// Rows as style runs (see [`crate::frame`]) in [`ScreenView::frame`],
    /// beside the text as [`Format::Text`] gives it.
    Json,
}

/// A rendered screen with the facts a caller needs beside it.
#[derive(Clone, Debug)]
pub struct ScreenView {
    pub text: String,
    /// Counted from 0; each front end puts it on the wire through
    /// [`crate::frame`]'s cursor functions.
    pub cursor: crate::vt::Cursor,
    pub cols: u16,
    pub rows: u16,
    pub title: String,
    pub alt_screen: bool,
    /// The structured frame, for [`Format::Json`].
    pub frame: Option<serde_json::Value>,
    /// The row (with history, the history line) that `text` starts at,
    /// counted from 1 as `Selection::Range` counts.
    pub first: usize,
}

/// Lines as the seed renders them: each followed by `\n`, trailing blank
/// lines dropped (a blank screen is the empty string).
pub fn join_lines(lines: &[String]) -> String {
    let keep = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |i| i + 1);
    let mut out = String::new();
    for l in &lines[..keep] {
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// The screen (and, with `history`, the scrollback above it) as text or ANSI.
pub fn screen(s: &Session, sel: Selection, format: Format, history: bool) -> ScreenView {
    s.with_screen(|scr| {
        let rows = scr.rows() as usize;
        let mut lines: Vec<String> = Vec::new();
        if history {
            lines.extend((0..scr.scrollback_len()).map(|i| scr.scrollback_row_text(i)));
        }
        let above = lines.len();
        match format {
            Format::Text | Format::Json => lines.extend((0..rows).map(|r| scr.row_text(r))),
            Format::Ansi => lines.extend(scr.render_ansi().split('\n').map(str::to_string)),
        }
        let n = lines.len();
        let (a, b) = match sel {
            Selection::All => (0, n),
            Selection::Top(k) => (0, k.min(n)),
            Selection::Bottom(k) => (n - k.min(n), n),
            Selection::Range(start, end) => {
                let a = start.clamp(1, n.max(1)) - 1;
                (a.min(n), end.clamp(a, n))
            }
            Selection::Last(k) => {
                let end = (above + content_rows(scr)).min(n);
                (end - k.min(end), end)
            }
        };
        ScreenView {
            text: join_lines(&lines[a..b]),
            cursor: scr.cursor(),
            cols: scr.cols(),
            rows: scr.rows(),
            title: scr.title().to_string(),
            alt_screen: scr.is_alt_screen(),
            frame: (format == Format::Json).then(|| crate::frame::frame_json(scr)),
            first: a + 1,
        }
    })
}

/// How many rows from the top hold content: down to the last row that is
/// not blank, or the cursor's row if it is lower (a prompt on a blank line).
fn content_rows(scr: &crate::vt::Screen) -> usize {
    let rows = scr.rows() as usize;
    let last_text = (0..rows)
        .rev()
        .find(|&r| !scr.row_text(r).trim_end().is_empty())
        .map_or(0, |r| r + 1);
    last_text.max(scr.cursor().row as usize + 1).min(rows)
}

/// One unit of input, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// Literal text, sent as UTF-8.
    Text(String),
    /// A named key (`Enter`, `ctrl-c`, `ArrowUp`, ...), see [`keys`].
    Key(String),
    /// Exact bytes.
    Raw(Vec<u8>),
    /// Text wrapped in bracketed-paste markers when the program asked for them.
    Paste(String),
}

/// Encode a list of inputs against the screen's current modes (cursor-key
/// mode, bracketed paste).
pub fn encode(s: &Session, inputs: &[Input]) -> Result<Vec<u8>, Error> {
    if inputs.is_empty() {
        return Err(Error::Invalid("nothing to send: give text or keys".into()));
    }
    let modes = s.with_screen(|scr| scr.modes());
    let mut out = Vec::new();
    for input in inputs {
        match input {
            Input::Text(t) => out.extend_from_slice(t.as_bytes()),
            Input::Raw(b) => out.extend_from_slice(b),
            Input::Key(k) => {
                out.extend(keys::encode_key(k, &modes).map_err(|e| Error::Invalid(e.to_string()))?)
            }
            Input::Paste(t) => paste(&mut out, t.as_bytes(), modes.bracketed_paste),
        }
    }
    check_write_size(out.len())?;
    Ok(out)
}

/// `text` as a terminal pastes it: line ends as Enter sends them (CR, for
/// LF and CR LF alike), inside the markers when the program asked for
/// them, and then never an end marker inside, which would let the rest be
/// read as typed keys.
fn paste(out: &mut Vec<u8>, text: &[u8], bracketed: bool) {
    const END: &[u8] = b"\x1b[201~";
    if bracketed {
        out.extend_from_slice(b"\x1b[200~");
    }
    let start = out.len();
    let mut after_cr = false;
    for &b in text {
        match b {
            b'\n' if after_cr => {}
            b'\n' => out.push(b'\r'),
            _ => out.push(b),
        }
        after_cr = b == b'\r';
        if bracketed && out[start..].ends_with(END) {
            out.truncate(out.len() - END.len());
        }
    }
    if bracketed {
        out.extend_from_slice(END);
    }
}

/// Every write of a request is bounded by [`limits::MAX_WRITE_BYTES`].
fn check_write_size(len: usize) -> Result<(), Error> {
    if len > limits::MAX_WRITE_BYTES {
        return Err(Error::Invalid(format!(
            "input too large: {len} bytes (at most {} per request)",
            limits::MAX_WRITE_BYTES
        )));
    }
    Ok(())
}

/// A regular expression over the rendered screen (rows joined with `\n`):
/// `^` and `$` match at each row's start and end.
pub fn screen_regex(pattern: &str) -> Result<regex_lite::Regex, regex_lite::Error> {
    regex_lite::RegexBuilder::new(pattern)
        .multi_line(true)
        .build()
}

/// A wait for `regex` in the output the caller has not read yet: from the
/// read mark on, escape sequences stripped (see [`OutputText`]). When input
/// was typed since the mark, its echo is not the answer: the search starts
/// past the echoed line (waiting for `done` after typing `echo done`).
pub fn unread_output(s: &Session, regex: regex_lite::Regex) -> OutputText {
    let from = s.mark();
    let (input_at, echo) = s.last_input();
    OutputText {
        regex,
        from,
        skip_echo: echo.filter(|_| input_at >= from),
    }
}

/// A regular expression that finds `text` as it is (no metacharacters).
pub fn literal_regex(text: &str) -> Result<regex_lite::Regex, regex_lite::Error> {
    regex_lite::Regex::new(&regex_lite::escape(text))
}

/// Encode and write inputs; returns the number of bytes written.
pub fn send(s: &Session, inputs: &[Input]) -> Result<usize, Error> {
    let bytes = encode(s, inputs)?;
    write(s, &bytes)
}

/// Write bytes to the program: [`Error::Exited`] once it has exited, also
/// when it exits while the write is under way.
pub fn write(s: &Session, bytes: &[u8]) -> Result<usize, Error> {
    s.write(bytes).map_err(|e| match io_error(e, "") {
        Error::Failed(_) if !s.status().running() => Error::Exited,
        e => e,
    })
}

/// Resize the terminal: [`Error::Exited`] once the program has exited.
pub fn resize(s: &Session, cols: u16, rows: u16) -> Result<(), Error> {
    s.resize(cols, rows)
        .map_err(|e| io_error(e, "resize failed: "))
}

/// Send a signal to the session: [`Error::Exited`] once the program has
/// exited.
pub fn signal(s: &Session, sig: rustix::process::Signal) -> Result<(), Error> {
    s.send_signal(sig).map_err(|e| io_error(e, ""))
}

/// A session's I/O error as the core's: the program having exited is
/// [`Error::Exited`], anything else fails with its text after `what`.
fn io_error(e: std::io::Error, what: &str) -> Error {
    if crate::session::is_exited(&e) {
        Error::Exited
    } else {
        Error::Failed(format!("{what}{e}"))
    }
}

/// How `step` and friends decide the program has answered.
#[derive(Clone, Copy, Debug)]
pub struct Settle {
    /// The quiet window: the fallback where the kernel cannot tell whether
    /// the program waits for input, and the whole rule with `quiet_only`.
    pub quiet: Duration,
    /// The hard cap on the whole wait.
    pub max_wait: Duration,
    /// Use the quiet window alone, for programs that poll the terminal while
    /// they work.
    pub quiet_only: bool,
    /// The quiet window also settles while the kernel says the program is
    /// busy: silence is enough (seed 003's `settleMs`, whose clients count
    /// on a snapshot once output stops; MCP's `quiet_ms` is silence alone).
    pub silence_is_enough: bool,
}

impl Default for Settle {
    fn default() -> Settle {
        Settle {
            quiet: limits::DEFAULT_QUIET,
            max_wait: limits::STEP_MAX_WAIT,
            quiet_only: false,
            silence_is_enough: false,
        }
    }
}

/// Wait until the program has answered: settled (reason `idle` when the
/// kernel said so, `quiet` by the window), exited, or the cap (`timeout`).
pub fn settle(s: &Session, how: Settle) -> (Reason, Duration) {
    settle_with(s, how, None)
}

/// [`settle`] that also gives up (as a timeout) when `cancel` says so.
pub fn settle_with(s: &Session, how: Settle, cancel: Option<Cancel>) -> (Reason, Duration) {
    let until = Until {
        exit: true,
        cancel,
        quiet: how.silence_is_enough.then_some(how.quiet),
        settle: Some(SettleSpec {
            fallback: how.quiet,
            kernel: !how.quiet_only,
        }),
        ..Until::default()
    };
    s.wait(&until, how.max_wait)
}

/// What a program said in answer to a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// Decide by the screen: the rendered screen for full-screen programs
    /// (alternate screen), the output stream otherwise.
    Auto,
    Screen,
    Stream,
}

#[derive(Clone, Debug)]
pub struct StepResult {
    /// The output since the last step (stream view) or the rendered screen.
    pub output: String,
    /// True when `output` is the rendered screen.
    pub is_screen: bool,
    pub reason: Reason,
    pub waited: Duration,
    /// Bytes lost before the output shown: what the ring no longer held
    /// and the cut line after it (see [`collect`]). Always 0 for a screen,
    /// which loses nothing.
    pub dropped: u64,
    /// The part of `dropped` the ring still holds: the rest of the line
    /// the ring's drop cut, left out of `output` (a line without its start
    /// reads as another line: `8931` for `168931`), as transcript offsets
    /// `from..to`, for [`output_text`] to print. `None` when nothing was
    /// cut or `output` is a screen.
    pub cut_line: Option<(u64, u64)>,
    pub status: Status,
    /// Where `output` can be read again line by line (see [`cap_text`]);
    /// `None` for a view that cannot (changed rows).
    pub source: Option<Source>,
}

/// What a step types: seed 002's line (text, then Enter), or text and keys
/// exactly as given, in order.
pub fn step_line(text: &str) -> Vec<Input> {
    vec![Input::Text(text.to_string()), Input::Raw(b"\r".to_vec())]
}

/// pty-prompt's `step` (and MCP's `terminal_step`): send `input` as
/// [`send`] takes it (text, keys, raw bytes, in order, encoded in the
/// step's turn against the screen's modes then; nothing when empty: only
/// re-poll; a line is [`step_line`]), wait until settled (or `cancel` says to stop
/// waiting), and return everything produced since the previous step, so
/// nothing is lost between calls.
pub fn step(
    s: &Session,
    input: &[Input],
    how: Settle,
    view: (bool, View),
    cancel: Option<Cancel>,
) -> Result<StepResult, Error> {
    step_then(s, input, how, view, cancel, || {})
}

/// [`step`], calling `typed` once the input is written (or at once when
/// there is none), before the wait: a front end lets the session's next
/// call start then.
pub fn step_then(
    s: &Session,
    input: &[Input],
    how: Settle,
    view: (bool, View),
    cancel: Option<Cancel>,
    typed: impl FnOnce(),
) -> Result<StepResult, Error> {
    // A second caller's text is typed only after the first one's answer
    // has been collected, so each gets its own.
    let deadline = Instant::now() + how.max_wait;
    let turn = s.step_turn(deadline, cancel.as_ref());
    // A caller that has gone (or cancelled) while in line types nothing.
    if cancel.as_ref().is_some_and(Cancel::is_set) {
        return Err(Error::Failed("the step was cancelled".into()));
    }
    let Some(_turn) = turn else {
        return Err(Error::Failed(format!(
            "another step of this session was still running after {} ms: try again, or `wait` for it",
            how.max_wait.as_millis()
        )));
    };
    if !input.is_empty() {
        send(s, input)?;
    }
    typed();
    let (reason, waited) = settle_with(s, how, cancel);
    let (raw, view) = view;
    Ok(collect(s, reason, waited, raw, view))
}

/// Up to `max` bytes of raw output from absolute offset `from`, ending on a
/// character boundary so that a reader resuming at `next` loses nothing:
/// a character `max` would cut is left for the next read, a first
/// character longer than `max` is returned whole (up to 3 bytes over), and
/// one still arriving waits while the program runs (see
/// [`text::char_bounded_len`]). A read that starts inside a character (an
/// offset picked in its middle, or the ring's start after it dropped bytes)
/// returns its remaining bytes as they are, each decoding to U+FFFD.
pub fn output(s: &Session, from: u64, max: usize) -> Chunk {
    let mut chunk = s.output(from, max.saturating_add(3));
    // Asked after the read: a program still running may yet complete a
    // character the read ends in.
    let more_coming = s.status().running();
    let keep = text::char_bounded_len(&chunk.data, max, more_coming);
    chunk.data.truncate(keep);
    chunk.next = chunk.start + keep as u64;
    chunk
}

/// The output of the line that offset `at` is in, from its start to `at`
/// (looking back at most [`limits::LINE_LOOKBACK`] bytes; none if the line
/// started before that, or the ring no longer holds its start).
fn line_before(s: &Session, at: u64) -> Vec<u8> {
    let from = at.saturating_sub(limits::LINE_LOOKBACK as u64);
    let mut chunk = s.output(from, (at - from) as usize);
    chunk
        .data
        .truncate((at.saturating_sub(chunk.start)) as usize);
    match chunk.data.iter().rposition(|&b| b == b'\n') {
        Some(nl) => chunk.data[nl + 1..].to_vec(),
        // The output's very first line.
        None if chunk.start == 0 && chunk.dropped == 0 => chunk.data,
        None => Vec::new(),
    }
}

/// The output since the read mark (advancing it) or the screen, per `view`.
/// When the ring dropped output since the mark, the stream starts at the
/// first whole line it still holds.
pub fn collect(s: &Session, reason: Reason, waited: Duration, raw: bool, view: View) -> StepResult {
    let chunk = output(s, s.mark(), usize::MAX);
    let mark_line = s.mark_line();
    let mark_row = s.mark_row();
    let mark_shown = s.mark_shown();
    s.set_mark(chunk.next);
    let cut = if chunk.dropped > 0 {
        whole_line_start(&chunk.data)
    } else {
        0
    };
    let data = &chunk.data[cut..];
    let stream_dropped = chunk.dropped + cut as u64;
    // What is left of the cut line from its first whole character: what a
    // caller can still read of the bytes the stream does not show.
    let cut_from = chunk.start + first_char(&chunk.data[..cut]) as u64;
    let cut_line =
        (cut_from < chunk.start + cut as u64).then_some((cut_from, chunk.start + cut as u64));
    let alt = s.with_screen(|scr| scr.is_alt_screen());
    // Lines as the terminal shows them, going on from the line the mark is
    // in (its prompt: an edit moves along it); output that repaints across
    // lines (top, `less -X`, `clear`) is shown as the screen it drew.
    let lines = (!raw && view != View::Screen).then(|| match cut {
        // (The line as the screen showed it where the bytes that drew it
        // moved across lines: ipython's prompt, redrawn in place.)
        0 => text::line_view_after(&[&line_before(s, chunk.start), &mark_shown], data),
        _ => text::line_view(data),
    });
    // A repaint that drew nothing on the primary screen (top quitting: a
    // move to the last row and a newline) has nothing new to show: its
    // lines are all there is, not the frame left from before the mark.
    let drew = |l: &text::LineView| l.text.chars().any(|c| !c.is_whitespace());
    let repaints = lines.as_ref().is_some_and(|l| l.repaints && drew(l));
    let moved_only = lines.as_ref().is_some_and(|l| l.repaints && !drew(l));
    // The top screen row (from 0) the output drew on, when it moved only
    // relative to the mark's line (see `LineView::rows`), all of it is here
    // (nothing dropped), the rows it went up to are still on the screen,
    // and the cursor is at least as far down as counted (no move down was
    // stopped short).
    let redrawn_from = lines
        .as_ref()
        .and_then(|l| l.rows)
        .filter(|_| repaints && !alt && cut == 0 && chunk.dropped == 0)
        .and_then(|rows| {
            let (row, cursor) = mark_row?;
            let top = row.checked_sub(rows.above)?;
            let ended = i64::try_from(row).ok()? + rows.end;
            (i64::try_from(cursor).ok()? >= ended).then_some(top)
        });
    let is_screen = match view {
        View::Auto => alt || repaints,
        View::Screen => true,
        View::Stream => false,
    };
    // Only output that lost bytes says so: a screen lost nothing.
    let stream = Source::Output {
        from: chunk.start + cut as u64,
        to: chunk.next,
        raw,
        first: 1,
    };
    let (output, dropped, source, cut_line) = match lines {
        // Repainted on the primary screen: the lines that scrolled off
        // since the mark, then the screen; lossy only if the scrollback no
        // longer holds them all.
        // Drawn by moves relative to the row the output started on (ipython
        // redrawing its input area, or the whole cell it closes): the rows
        // from the highest it drew on down.
        _ if repaints && !alt && view == View::Auto && redrawn_from.is_some() => {
            let first = redrawn_from.map_or(1, |row| row + 1);
            let rows = screen(s, Selection::Range(first, usize::MAX), Format::Text, false);
            let source = Source::Screen {
                first,
                history: false,
                ansi: false,
            };
            (rows.text, 0, source, None)
        }
        _ if repaints && !alt && view == View::Auto => {
            let (mut out, lost, first) = scrolled_since(s, mark_line);
            out.push_str(&screen(s, Selection::All, Format::Text, false).text);
            let source = Source::Screen {
                first,
                history: true,
                ansi: false,
            };
            (out, if lost { stream_dropped } else { 0 }, source, None)
        }
        _ if is_screen => {
            let fmt = if raw { Format::Ansi } else { Format::Text };
            let source = Source::Screen {
                first: 1,
                history: false,
                ansi: raw,
            };
            (screen(s, Selection::All, fmt, false).text, 0, source, None)
        }
        Some(_) if moved_only => (String::new(), stream_dropped, stream, cut_line),
        Some(lines) => (lines.text, stream_dropped, stream, cut_line),
        None => (
            String::from_utf8_lossy(data).into_owned(),
            stream_dropped,
            stream,
            cut_line,
        ),
    };
    StepResult {
        output,
        is_screen,
        reason,
        waited,
        dropped,
        cut_line,
        status: s.status(),
        source: Some(source),
    }
}

/// What became of the rest of the line the ring's drop cut, for
/// [`dropped_words`].
#[derive(Clone, Copy, Debug)]
pub enum CutRest<'a> {
    /// Nothing of it is known to be held (or the drop cut no line).
    Gone,
    /// Left out of the text shown: `count` of `unit` (`"bytes"`,
    /// `"characters"`), and `how` the front end gets them (its command).
    LeftOut {
        count: u64,
        unit: &'a str,
        how: &'a str,
    },
    /// Shown: the text's first line is what is held of it.
    Shown,
}

/// The words every front end puts where the ring dropped output before a
/// text (its own brackets around them): `lost` bytes are no longer held,
/// and what became of the rest of the line they cut. The facts are worded
/// here; a front end words only its command (`rest`'s `how`).
pub fn dropped_words(lost: u64, rest: CutRest) -> String {
    let keeps = limits::TRANSCRIPT_BYTES / 1024;
    let head = format!(
        "{lost} bytes of output before here were dropped (the buffer keeps the last {keeps} KiB)"
    );
    match rest {
        CutRest::Gone => head,
        CutRest::LeftOut { count, unit, how } => format!(
            "{head}; the {count} {unit} still held of the line they cut are left out here; {how}"
        ),
        CutRest::Shown => {
            format!("{head}; the first line below is what is still held of the line they cut")
        }
    }
}

/// Where the first whole line of `data` starts, `data` being what the ring
/// kept after dropping bytes: just past the first newline, so that the
/// stream never opens with the tail of a cut line (`8931` for `168931`).
/// Without a newline, all of it is one cut line: it starts at the first
/// character boundary instead.
fn whole_line_start(data: &[u8]) -> usize {
    match data.iter().position(|&b| b == b'\n') {
        Some(i) => i + 1,
        None => first_char(data),
    }
}

/// Where the first whole character of `data` starts (past the
/// continuation bytes of one the ring cut).
fn first_char(data: &[u8]) -> usize {
    data.iter()
        .position(|&b| b & 0xC0 != 0x80)
        .unwrap_or(data.len())
}

/// The history lines from absolute line `from` on (see
/// [`crate::vt::Screen::history_total`]), each ending in `\n`, whether
/// some of them are no longer held, and the number of the first of them
/// among the history lines `screen` shows (from 1).
fn scrolled_since(s: &Session, from: u64) -> (String, bool, usize) {
    s.with_screen(|scr| {
        let len = scr.scrollback_len();
        let first = scr.history_total() - len as u64;
        let skip = from.saturating_sub(first).min(len as u64) as usize;
        let mut out = String::new();
        for i in skip..len {
            out.push_str(&scr.scrollback_row_text(i));
            out.push('\n');
        }
        (out, from < first, skip + 1)
    })
}

/// Where a text shown to a caller came from, so that lines left out of it
/// can be read again, exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The transcript's bytes `from..to` in the line view
    /// ([`text::line_view`]), or as they are with `raw` (see
    /// [`output_text`]); the text starts at line `first` of that view.
    Output {
        from: u64,
        to: u64,
        raw: bool,
        first: usize,
    },
    /// Rows as [`screen`] shows them (with `history`, the history lines,
    /// then the screen's rows; with `ansi`, in [`Format::Ansi`]); the text
    /// starts at row `first`. Valid while the screen shows the same.
    Screen {
        first: usize,
        history: bool,
        ansi: bool,
    },
}

/// Lines [`cap_text`] left out, and where to read them again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Omission {
    pub lines: usize,
    pub bytes: usize,
    /// Where they were in the capped text: the byte offset for a marker.
    pub at: usize,
    /// The first and last of them as `source` counts its lines (from 1).
    pub start: usize,
    pub end: usize,
    pub source: Option<Source>,
}

/// Cap `text` (output shown to a caller, read from `source`) to its head
/// and tail per `cap`, and say what was left out and where it can be read:
/// the one cap of every verb that prints output. The front end shows the
/// omission where [`Omission::at`] says.
pub fn cap_text(text: &mut String, cap: text::Cap, source: Option<Source>) -> Option<Omission> {
    let c = text::cap(text, cap);
    let o = c.omitted?;
    let first = match source {
        Some(Source::Output { first, .. } | Source::Screen { first, .. }) => first,
        None => 1,
    };
    let at = c.head.len();
    *text = c.join("");
    Some(Omission {
        lines: o.lines,
        bytes: o.bytes,
        at,
        start: first + o.first - 1,
        end: first + o.last() - 1,
        source,
    })
}

/// The transcript's bytes `from..to` as a step showed them (the line view,
/// or with `raw` the bytes as they are), lines `start..=end` of it when
/// given (from 1, cut at the last): what an omission of a
/// [`Source::Output`] names. The bytes must still be in the ring.
pub fn output_text(
    s: &Session,
    (from, to): (u64, u64),
    raw: bool,
    lines: Option<(usize, usize)>,
) -> Result<String, Error> {
    if to < from {
        return Err(Error::Invalid(format!(
            "the end offset {to} is before the start {from}"
        )));
    }
    let end = s.output_end();
    if to > end {
        return Err(Error::Invalid(format!(
            "offset {to} is past the end of the output ({end} bytes so far)"
        )));
    }
    let want = usize::try_from(to - from).unwrap_or(usize::MAX);
    let mut chunk = output(s, from, want);
    if chunk.start > from {
        return Err(Error::Failed(format!(
            "the output from offset {from} is no longer held: the buffer keeps the last {} KiB, from offset {} now",
            limits::TRANSCRIPT_BYTES / 1024,
            chunk.start
        )));
    }
    chunk.data.truncate(want);
    let text = if raw {
        String::from_utf8_lossy(&chunk.data).into_owned()
    } else {
        // As `step` showed it: going on from the line before.
        text::line_view_after(&[&line_before(s, chunk.start)], &chunk.data).text
    };
    Ok(match lines {
        None => text,
        Some((start, end)) => text
            .split_inclusive('\n')
            .skip(start.saturating_sub(1))
            .take(end.saturating_add(1).saturating_sub(start.max(1)))
            .collect(),
    })
}

/// The screen's rows now, and which changed since the screen last shown to
/// a one-shot caller of this session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Changes {
    pub rows: Vec<String>,
    /// Rows (from 0) that differ.
    pub changed: Vec<usize>,
    /// Nothing comparable was shown before (the first time, or a screen of
    /// another height), or most rows changed: the screen is shown whole.
    pub whole: bool,
}

impl Changes {
    /// The whole screen as [`screen`] shows it, or only the changed rows,
    /// each as `N: text` (row N from 1) under a line that says so.
    pub fn render(&self) -> String {
        if self.whole {
            return join_lines(&self.rows);
        }
        let mut out = format!(
            "[{} of {} rows changed since the screen last shown]\n",
            self.changed.len(),
            self.rows.len()
        );
        for &r in &self.changed {
            out.push_str(&format!("{}: {}\n", r + 1, self.rows[r]));
        }
        out
    }
}

/// Compare the screen with the one last shown to a one-shot caller of this
/// session, and remember it as shown (every whole screen a step or read
/// prints is: [`step_changes`], `read`).
pub fn screen_changes(s: &Session) -> Changes {
    let rows: Vec<String> =
        s.with_screen(|scr| (0..scr.rows() as usize).map(|r| scr.row_text(r)).collect());
    let before = s.swap_shown(rows.clone());
    let comparable = before.len() == rows.len();
    let changed: Vec<usize> = (0..rows.len())
        .filter(|&r| !comparable || before[r] != rows[r])
        .collect();
    // Most rows new (another screen: vim opening the commit message after
    // the todo list): the screen itself reads better, and is shorter.
    let whole = !comparable || changed.len() * 2 > rows.len();
    Changes {
        rows,
        changed,
        whole,
    }
}

/// A step's screen is shown: remember it, and with `changed` show only the
/// rows that changed since the screen shown before (lines that scrolled
/// off above it stay). A stream, or a raw screen, is left as it is.
pub fn step_changes(s: &Session, r: &mut StepResult, changed: bool) {
    let Some(Source::Screen { ansi: false, .. }) = r.source.filter(|_| r.is_screen) else {
        return;
    };
    let c = screen_changes(s);
    if !changed || c.whole {
        return;
    }
    let shown = join_lines(&c.rows);
    let above = r.output.strip_suffix(shown.as_str()).unwrap_or("");
    r.output = format!("{above}{}", c.render());
    r.source = None;
}

/// What [`interrupt`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interrupted {
    /// Ctrl+C was written to the terminal.
    pub sent: bool,
    /// Children of the program that outlived the grace period and were
    /// killed with their whole trees.
    pub terminated: Vec<i32>,
}

/// Stop what a shell is running and keep the shell: type Ctrl+C, give the
/// foreground job `grace` to exit, then SIGKILL every child of the
/// session's program that is still alive, with all its descendants (a
/// program that ignores SIGINT, or a job that was put in the background).
/// A zero `grace` skips the wait. [`Error::Exited`] when the program had
/// exited and left nothing to stop.
///
/// The Ctrl+C goes where a person's would, after what was typed just before
/// it has been taken in ([`Session::let_input_land`]): the terminal discards
/// unread input on Ctrl+C, so a command line sent a moment before would be
/// cut (`bash: leep: command not found`), and a shell between reading it and
/// handing the terminal to its job takes the signal itself, the job never
/// seeing it.
pub fn interrupt(s: &Session, grace: Duration) -> Result<Interrupted, Error> {
    s.let_input_land(limits::INTERRUPT_LAND);
    let sent = send(s, &[Input::Key("ctrl-c".into())]).is_ok();
    let deadline = Instant::now() + grace;
    while !s.children().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let terminated = s.kill_children();
    if !sent && terminated.is_empty() && !s.status().running() {
        return Err(Error::Exited);
    }
    Ok(Interrupted { sent, terminated })
}

/// The signals a caller may send, by name (with or without `SIG`, any case)
/// and number.
const SIGNALS: &[(&str, rustix::process::Signal)] = {
    use rustix::process::Signal as S;
    &[
        ("HUP", S::HUP),
        ("INT", S::INT),
        ("QUIT", S::QUIT),
        ("KILL", S::KILL),
        ("USR1", S::USR1),
        ("USR2", S::USR2),
        ("PIPE", S::PIPE),
        ("ALRM", S::ALARM),
        ("TERM", S::TERM),
        ("CONT", S::CONT),
        ("STOP", S::STOP),
        ("TSTP", S::TSTP),
        ("WINCH", S::WINCH),
        ("ILL", S::ILL),
        ("TRAP", S::TRAP),
        ("ABRT", S::ABORT),
        ("BUS", S::BUS),
        ("FPE", S::FPE),
        ("SEGV", S::SEGV),
        ("SYS", S::SYS),
        ("XCPU", S::XCPU),
        ("XFSZ", S::XFSZ),
        ("VTALRM", S::VTALARM),
        ("PROF", S::PROF),
        ("TTIN", S::TTIN),
        ("TTOU", S::TTOU),
    ]
};

pub fn signal_by_name(name: &str) -> Option<rustix::process::Signal> {
    let up = name.to_ascii_uppercase();
    let bare = up.strip_prefix("SIG").unwrap_or(&up);
    SIGNALS.iter().find(|(n, _)| *n == bare).map(|(_, s)| *s)
}

pub fn signal_by_number(n: i32) -> Option<rustix::process::Signal> {
    SIGNALS
        .iter()
        .find(|(_, s)| s.as_raw() == n)
        .map(|(_, s)| *s)
}

/// The name of signal number `n` without `SIG` (`TERM`), if it is one we know.
pub fn signal_name(n: i32) -> Option<&'static str> {
    SIGNALS
        .iter()
        .find(|(_, s)| s.as_raw() == n)
        .map(|(name, _)| *name)
}

/// Send one mouse event, encoded per the tracking mode and encoding the
/// program negotiated, and keep the session's held button (seed 003's
/// `mouse`). A refusal (reporting off, hover without any-event tracking, a
/// cell outside the viewport, button misuse, an exited program) sends
/// nothing and leaves the held button as it was. Returns the bytes written
/// (none for an X10 release, which that mode does not report).
pub fn mouse(s: &Session, ev: &keys::MouseEvent) -> Result<usize, Error> {
    s.with_mouse_held(|held| {
        if !s.status().running() {
            return Err(Error::Exited);
        }
        let (modes, cols, rows) = s.with_screen(|scr| (scr.modes(), scr.cols(), scr.rows()));
        let mut next = *held;
        let bytes = keys::encode_mouse(ev, &modes, &mut next, cols, rows)
            .map_err(|e| Error::Failed(e.to_string()))?;
        if !bytes.is_empty() {
            write(s, &bytes)?;
        }
        *held = next;
        Ok(bytes.len())
    })
}

/// The primary screen's history as text: the scrollback, then the primary
/// screen itself (even while a full-screen program shows the alternate one),
/// each line ending in `\n`, trailing blank lines dropped.
pub fn history_text(s: &Session) -> String {
    s.with_screen(|scr| {
        let mut lines: Vec<String> = (0..scr.scrollback_len())
            .map(|i| scr.scrollback_row_text(i))
            .collect();
        lines.extend((0..scr.rows() as usize).map(|r| scr.primary_row_text(r)));
        join_lines(&lines)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_stream_starts_at_its_first_whole_line() {
        assert_eq!(whole_line_start(b"8931\r\n168932\r\n"), 6);
        assert_eq!(whole_line_start(b"\n1\n"), 1);
        // One long cut line: from the first whole character.
        assert_eq!(
            whole_line_start("\u{e9}t\u{e9}".as_bytes()[1..].as_ref()),
            1
        );
        assert_eq!(whole_line_start(b""), 0);
    }

    #[test]
    fn join_lines_matches_seed_examples() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(join_lines(&l(&["root@host:~$", "", ""])), "root@host:~$\n");
        assert_eq!(join_lines(&l(&["", "", ""])), "");
        assert_eq!(join_lines(&l(&["a", "", "b", ""])), "a\n\nb\n");
    }
}
