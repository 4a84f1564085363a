//! The fixture corpus: bytes recorded from real programs (vim, less, top,
//! git, ls, bash, python3, dialog, whiptail, CJK and emoji text) fed through
//! the emulator and compared with the screen tmux shows for the same bytes at
//! the same size. `tests/fixtures/vt/record.py` records and makes the
//! expectations; `NOTES.md` there lists reviewed disagreements.

use std::fs;
use std::path::{Path, PathBuf};

use ptybroker::vt::Screen;

struct Expected {
    cols: u16,
    rows: u16,
    cursor: (u16, u16),
    alt: bool,
    lines: Vec<String>,
}

fn parse_expected(path: &Path) -> Result<Expected, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    // "# size 80x24 cursor 3,10 alt 0"
    let words: Vec<&str> = header.split_whitespace().collect();
    let bad = || format!("{}: bad header {header:?}", path.display());
    if words.len() != 7 || words[1] != "size" || words[3] != "cursor" || words[5] != "alt" {
        return Err(bad());
    }
    let (c, r) = words[2].split_once('x').ok_or_else(bad)?;
    let (cy, cx) = words[4].split_once(',').ok_or_else(bad)?;
    let num = |s: &str| s.parse::<u16>().map_err(|_| bad());
    Ok(Expected {
        cols: num(c)?,
        rows: num(r)?,
        cursor: (num(cy)?, num(cx)?),
        alt: words[6] == "1",
        lines: lines.map(str::to_string).collect(),
    })
}

/// Rows reviewed by hand where we deliberately differ from tmux
/// (`NAME.reviewed`: `ROW<TAB>TEXT<TAB>WHY` lines; see NOTES.md).
fn reviewed(bytes_path: &Path) -> Vec<(usize, String)> {
    let text = fs::read_to_string(bytes_path.with_extension("reviewed")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split('\t');
            let row = f.next()?.parse().ok()?;
            Some((row, f.next()?.to_string()))
        })
        .collect()
}

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vt");
    let mut v: Vec<PathBuf> = fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == "bytes"));
    v.sort();
    v
}

/// Compare one fixture; returns a description of every difference.
fn check(bytes_path: &Path, chunk: usize) -> Vec<String> {
    let name = bytes_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let exp = match parse_expected(&bytes_path.with_extension("screen")) {
        Ok(e) => e,
        Err(e) => return vec![e],
    };
    let bytes = fs::read(bytes_path).unwrap_or_default();
    let mut s = Screen::new(exp.cols, exp.rows, 1000);
    let mut diffs = Vec::new();
    for piece in bytes.chunks(chunk) {
        s.feed(piece);
        if let Err(e) = s.check_invariants() {
            diffs.push(format!("{name}: {e}"));
            break;
        }
    }
    let reviewed = reviewed(bytes_path);
    for r in 0..exp.rows as usize {
        let want = reviewed
            .iter()
            .find(|(row, _)| *row == r)
            .map(|(_, t)| t.as_str())
            .or(exp.lines.get(r).map(String::as_str))
            .unwrap_or("");
        let got = s.row_text(r);
        if got != want {
            diffs.push(format!(
                "{name} row {r}:\n  tmux: {want:?}\n  ours: {got:?}"
            ));
        }
    }
    let c = s.cursor();
    // tmux shows a pending wrap as the column past the margin; we keep the
    // cursor on the last column with the wrap pending, as xterm does.
    let want = (exp.cursor.0, exp.cursor.1.min(exp.cols.saturating_sub(1)));
    if (c.row, c.col) != want {
        diffs.push(format!(
            "{name}: cursor {:?}, tmux {:?}",
            (c.row, c.col),
            exp.cursor
        ));
    }
    if s.is_alt_screen() != exp.alt {
        diffs.push(format!(
            "{name}: alt screen {}, tmux {}",
            s.is_alt_screen(),
            exp.alt
        ));
    }
    diffs
}

#[test]
fn fixtures_match_tmux() {
    let all = fixtures();
    assert!(all.len() >= 10, "fixture corpus missing: {all:?}");
    let mut diffs = Vec::new();
    for f in &all {
        diffs.extend(check(f, usize::MAX));
    }
    assert!(
        diffs.is_empty(),
        "{} differences:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

#[test]
fn fixtures_fed_in_small_pieces_match_too() {
    let mut diffs = Vec::new();
    for f in &fixtures() {
        diffs.extend(check(f, 7));
    }
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// Attributes too: each row's style runs must match those of tmux's
/// `capture-pane -e -N` rendering of the screen, read back through a screen
/// of the same size (tmux carries attributes from one line to the next and
/// draws line-drawing characters with SO/SI, so G1 is set to them).
/// Trailing blanks are not compared: tmux leaves out cells cleared with a
/// background colour, and keeps those written as spaces.
#[test]
fn fixture_styles_match_tmux() {
    let mut diffs = Vec::new();
    for f in &fixtures() {
        let name = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Ok(exp) = parse_expected(&f.with_extension("screen")) else {
            continue;
        };
        let Ok(ansi) = fs::read(f.with_extension("ansi")) else {
            diffs.push(format!("{name}: no .ansi capture"));
            continue;
        };
        let mut ours = Screen::new(exp.cols, exp.rows, 1000);
        ours.feed(&fs::read(f).unwrap_or_default());
        let mut tmux = Screen::new(exp.cols, exp.rows, 0);
        tmux.feed(b"\x1b)0");
        for (r, line) in ansi
            .split(|&b| b == b'\n')
            .take(exp.rows as usize)
            .enumerate()
        {
            tmux.feed(format!("\x1b[{};1H", r + 1).as_bytes());
            tmux.feed(line);
        }
        let reviewed = reviewed(f);
        for r in 0..exp.rows as usize {
            if reviewed.iter().any(|(row, _)| *row == r) {
                continue;
            }
            let (w, g) = (trim_runs(tmux.row_runs(r)), trim_runs(ours.row_runs(r)));
            if w != g {
                diffs.push(format!("{name} row {r}:\n  tmux: {w:?}\n  ours: {g:?}"));
            }
        }
    }
    assert!(
        diffs.is_empty(),
        "{} differences:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

/// Runs with neighbours of one style merged and trailing blanks dropped.
fn trim_runs(runs: Vec<ptybroker::vt::Run>) -> Vec<(String, ptybroker::vt::Style)> {
    let mut out: Vec<(String, ptybroker::vt::Style)> = Vec::new();
    for r in runs {
        match out.last_mut() {
            Some((t, s)) if *s == r.style => t.push_str(&r.text),
            _ => out.push((r.text, r.style)),
        }
    }
    while let Some((t, _)) = out.last_mut() {
        let kept = t.trim_end_matches(' ').len();
        t.truncate(kept);
        if !t.is_empty() {
            break;
        }
        out.pop();
    }
    out
}
