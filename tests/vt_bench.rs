//! Throughput of the emulator alone on four generated inputs. Not a test:
//! run with `cargo test --release --test vt_bench -- --ignored --nocapture`.
//! The inputs are deterministic (a fixed LCG), about 32 MiB each.

use std::time::Instant;

use ptybroker::vt::Screen;

/// Input size; VT_BENCH_MB overrides (small inputs for callgrind).
fn size() -> usize {
    std::env::var("VT_BENCH_MB").map_or(32, |v| v.parse().unwrap_or(32)) << 20
}

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
    fn below(&mut self, n: u32) -> u32 {
        self.next() % n
    }
}

const WORDS: &[&str] = &[
    "request",
    "worker",
    "connection",
    "timeout",
    "GET",
    "/api/v1/items",
    "status=200",
    "cache",
    "miss",
    "user_id=4242",
    "latency",
    "retrying",
    "ok",
    "the",
    "and",
    "compile",
    "src/main.rs",
];

pub fn ascii_log() -> Vec<u8> {
    let mut r = Lcg(1);
    let mut out = Vec::with_capacity(size() + 256);
    let mut n = 0u64;
    while out.len() < size() {
        n += 1;
        out.extend_from_slice(
            format!(
                "2024-05-01T12:{:02}:{:02}.{:03} INFO ",
                n / 60 % 60,
                n % 60,
                n % 1000
            )
            .as_bytes(),
        );
        let long = r.below(8) == 0;
        let words = 4 + r.below(if long { 30 } else { 10 });
        for _ in 0..words {
            out.extend_from_slice(WORDS[r.below(WORDS.len() as u32) as usize].as_bytes());
            out.push(if r.below(12) == 0 { b'\t' } else { b' ' });
        }
        out.extend_from_slice(b"\r\n");
    }
    out
}

pub fn sgr_heavy() -> Vec<u8> {
    let mut r = Lcg(2);
    let mut out = Vec::with_capacity(size() + 256);
    while out.len() < size() {
        match r.below(3) {
            0 => {
                // ls --color
                for _ in 0..5 {
                    let c = [34, 32, 36, 33, 35][r.below(5) as usize];
                    out.extend_from_slice(
                        format!("\x1b[01;{c}m{}\x1b[0m  ", WORDS[r.below(17) as usize]).as_bytes(),
                    );
                }
            }
            1 => {
                // compiler diagnostic
                out.extend_from_slice(
                    format!(
                        "\x1b[1m\x1b[38;5;9merror[E{:04}]\x1b[0m\x1b[1m: mismatched types\x1b[0m \x1b[38;5;12m-->\x1b[0m src/lib.rs:{}:{}",
                        r.below(700),
                        r.below(900),
                        r.below(80)
                    )
                    .as_bytes(),
                );
            }
            _ => {
                // true colour gradient
                for i in 0..16 {
                    out.extend_from_slice(
                        format!(
                            "\x1b[38;2;{};{};{}m\x1b[48;2;0;0;{}m#",
                            i * 16,
                            r.below(256),
                            255 - i * 16,
                            r.below(256)
                        )
                        .as_bytes(),
                    );
                }
                out.extend_from_slice(b"\x1b[m");
            }
        }
        out.extend_from_slice(b"\r\n");
    }
    out
}

pub fn full_screen() -> Vec<u8> {
    let mut r = Lcg(3);
    let mut out = Vec::with_capacity(size() + 4096);
    out.extend_from_slice(b"\x1b[?1049h\x1b[H\x1b[2J");
    let mut frame = 0u32;
    while out.len() < size() {
        frame += 1;
        for row in 1..=23 {
            out.extend_from_slice(format!("\x1b[{row};1H\x1b[0;3{}m", row % 8).as_bytes());
            for _ in 0..8 {
                out.extend_from_slice(WORDS[r.below(17) as usize].as_bytes());
                out.push(b' ');
            }
            out.extend_from_slice(b"\x1b[K");
        }
        out.extend_from_slice(
            format!("\x1b[24;1H\x1b[7m -- frame {frame} -- \x1b[K\x1b[0m").as_bytes(),
        );
        out.extend_from_slice(
            b"\x1b[2;22r\x1b[5;1H\x1b[2L\x1b[9;1H\x1b[3M\x1b[2;1H\x1bM\x1b[2S\x1b[1T\x1b[r",
        );
    }
    out.extend_from_slice(b"\x1b[?1049l");
    out
}

pub fn unicode_text() -> Vec<u8> {
    let mut r = Lcg(4);
    let pieces = [
        "中文字符",
        "日本語の",
        "한국어",
        "😀",
        "🎉",
        "👍🏽",
        "e\u{301}",
        "a\u{308}",
        "テキスト",
        " ",
        "漢字",
        "❤\u{fe0f}",
    ];
    let mut out = Vec::with_capacity(size() + 256);
    while out.len() < size() {
        for _ in 0..12 {
            out.extend_from_slice(pieces[r.below(pieces.len() as u32) as usize].as_bytes());
        }
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// CPU time of this thread in seconds (Linux; 10 ms ticks), which a busy
/// machine disturbs much less than wall time.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let f: Vec<f64> = after
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    // utime and stime are fields 14 and 15: the 12th and 13th after ")".
    (f.get(11).copied().unwrap_or(0.0) + f.get(12).copied().unwrap_or(0.0)) / 100.0
}

/// Feed `input` to a fresh 80x24 screen in 4 KiB chunks, as a session's
/// reader does. Not inlined, so callgrind can count just this
/// (`--toggle-collect='vt_bench::feed_all'`).
#[inline(never)]
fn feed_all(input: &[u8]) -> Screen {
    let mut s = Screen::new(80, 24, 10_000);
    for chunk in input.chunks(4096) {
        s.feed(chunk);
    }
    s
}

fn measure(name: &str, input: &[u8]) -> f64 {
    let (mut best, mut best_cpu) = (f64::MAX, f64::MAX);
    // VT_BENCH_ROUNDS=0 only generates the input (a baseline for perf stat).
    let rounds = std::env::var("VT_BENCH_ROUNDS").map_or(3, |v| v.parse().unwrap_or(3));
    for _ in 0..rounds {
        let (t, c) = (Instant::now(), cpu_seconds());
        let s = feed_all(input);
        best = best.min(t.elapsed().as_secs_f64());
        best_cpu = best_cpu.min(cpu_seconds() - c);
        std::hint::black_box(s.row_text(0));
    }
    let mbs = input.len() as f64 / best / 1e6;
    let cpu = input.len() as f64 / best_cpu.max(0.01) / 1e6;
    println!(
        "{name:12} {:6.1} MiB  {mbs:7.1} MB/s wall  {cpu:7.1} MB/s cpu",
        input.len() as f64 / (1 << 20) as f64
    );
    mbs
}

#[test]
#[ignore = "a benchmark: run in release with --ignored --nocapture"]
fn throughput() {
    // VT_BENCH=ascii (etc.) runs one input, for profiling.
    let only = std::env::var("VT_BENCH").unwrap_or_default();
    type Make = fn() -> Vec<u8>;
    let inputs: [(&str, Make); 4] = [
        ("ascii", ascii_log),
        ("sgr", sgr_heavy),
        ("fullscreen", full_screen),
        ("unicode", unicode_text),
    ];
    // VT_BENCH_DUMP=DIR writes each input to DIR/NAME.bin (for `ptybroker
    // render` under perf stat) instead of measuring.
    let dump = std::env::var_os("VT_BENCH_DUMP");
    for (name, make) in inputs {
        if only.is_empty() || only == name {
            match &dump {
                Some(dir) => {
                    let path = std::path::Path::new(dir).join(format!("{name}.bin"));
                    std::fs::write(&path, make()).expect("write the input");
                }
                None => {
                    measure(name, &make());
                }
            }
        }
    }
}

/// The best of `rounds` CPU times of `f` over `input`, as MB/s.
fn text_rate(input: &[u8], f: fn(&[u8]) -> usize) -> f64 {
    let rounds = std::env::var("VT_BENCH_ROUNDS").map_or(5, |v| v.parse().unwrap_or(5));
    let mut best = f64::MAX;
    for _ in 0..rounds {
        let c = cpu_seconds();
        std::hint::black_box(f(std::hint::black_box(input)));
        best = best.min(cpu_seconds() - c);
    }
    input.len() as f64 / best.max(0.01) / 1e6
}

/// The plain-text views of `ptybroker::text` (stripped output, the line
/// view) on the same inputs: run with `cargo test --release --test vt_bench
/// -- --ignored --nocapture text_views`.
#[test]
#[ignore = "a benchmark: run in release with --ignored --nocapture"]
fn text_views() {
    type Make = fn() -> Vec<u8>;
    let inputs: [(&str, Make); 4] = [
        ("ascii", ascii_log),
        ("sgr", sgr_heavy),
        ("fullscreen", full_screen),
        ("unicode", unicode_text),
    ];
    for (name, make) in inputs {
        let input = make();
        let strip = text_rate(&input, |b| ptybroker::text::strip_ansi(b).len());
        let lines = text_rate(&input, |b| ptybroker::text::line_view(b).text.len());
        println!(
            "{name:12} {:6.1} MiB  strip_ansi {strip:7.1} MB/s cpu  line_view {lines:7.1} MB/s cpu",
            input.len() as f64 / (1 << 20) as f64
        );
    }
}
