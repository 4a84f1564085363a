//! Hostile and random input: the emulator never panics, keeps its cursor on
//! the screen, and keeps memory bounded. (The cargo-fuzz target in `fuzz/`
//! goes further; this runs on every `cargo test`.)

use ptybroker::vt::Screen;

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
}

/// Bytes biased towards the ones that start and shape sequences.
fn random_terminal_bytes(seed: u64, len: usize) -> Vec<u8> {
    const INTERESTING: &[u8] = b"\x1b\x1b\x1b[[[]]P^_X;;;:??>$ !#()0123456789ABCDHJKLMPSTXZ`abcdfghlmnpqrstu\x07\x08\x09\x0a\x0d\x0e\x0f\x18\x9c\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\xcc\x81\xff";
    let mut r = Lcg(seed);
    (0..len)
        .map(|_| {
            let x = r.next();
            if x % 4 == 0 {
                (x >> 8) as u8
            } else {
                INTERESTING[(x >> 8) as usize % INTERESTING.len()]
            }
        })
        .collect()
}

fn check_views(s: &Screen) {
    if let Err(e) = s.check_invariants() {
        panic!("{e}");
    }
    let c = s.cursor();
    assert!(
        c.row < s.rows() && c.col < s.cols(),
        "cursor {c:?} off a {}x{} screen",
        s.cols(),
        s.rows()
    );
    for r in 0..s.rows() as usize {
        let _ = s.row_runs(r);
        assert!(s.row_text(r).chars().count() <= s.cols() as usize * 33);
    }
    for i in 0..s.scrollback_len() {
        let _ = s.scrollback_row_runs(i);
    }
    let _ = s.render_ansi();
}

#[test]
fn random_bytes_never_panic() {
    for seed in 0..40u64 {
        let bytes = random_terminal_bytes(seed, 50_000);
        let cols = (seed * 7 % 120 + 1) as u16;
        let rows = (seed * 3 % 40 + 1) as u16;
        let mut s = Screen::new(cols, rows, 100);
        for (i, chunk) in bytes.chunks(997).enumerate() {
            s.feed(chunk);
            if let Err(e) = s.check_invariants() {
                panic!("seed {seed} chunk {i}: {e}");
            }
            if i % 10 == 9 {
                s.resize((i as u16 * 13) % 100 + 1, (i as u16 * 5) % 30 + 1);
            }
        }
        check_views(&s);
        assert!(s.take_answers().len() <= 64 * 1024);
        assert!(s.scrollback_len() <= 100);
    }
}

#[test]
fn huge_and_many_parameters() {
    let mut s = Screen::new(80, 24, 100);
    s.feed(b"\x1b[4294967296;99999999999999H\x1b[99999999A\x1b[65535@\x1b[65535L\x1b[65535P\x1b[65535M");
    s.feed(b"\x1b[65535S\x1b[65535T\x1b[65535X\x1b[65535b\x1b[65535I\x1b[65535Z\x1b[99999;99999r");
    let mut many = b"\x1b[".to_vec();
    for _ in 0..100_000 {
        many.extend_from_slice(b"38;2;");
    }
    many.push(b'm');
    s.feed(&many);
    s.feed(b"x");
    check_views(&s);
}

#[test]
fn endless_strings_stay_bounded() {
    let mut s = Screen::new(80, 24, 100);
    for intro in [&b"\x1b]0;"[..], b"\x1bP1$q", b"\x1b_", b"\x1b^", b"\x1bX"] {
        s.feed(intro);
        let junk = vec![b'x'; 1 << 20];
        for _ in 0..8 {
            s.feed(&junk);
        }
        s.feed(b"\x1b\\");
    }
    assert!(s.title().len() <= 4096);
    s.feed(b"ok");
    assert_eq!(s.row_text(0), "ok");
}

#[test]
fn combining_flood_is_bounded() {
    let mut s = Screen::new(10, 2, 10);
    s.feed(b"a");
    let marks = "\u{301}".repeat(100_000);
    s.feed(marks.as_bytes());
    assert!(s.row_text(0).len() < 200);
}

#[test]
fn answers_are_bounded_when_never_taken() {
    let mut s = Screen::new(80, 24, 10);
    for _ in 0..100_000 {
        s.feed(b"\x1b[6n\x1b[c");
    }
    assert!(s.take_answers().len() <= 64 * 1024);
}

#[test]
fn tiny_screens() {
    for (c, r) in [(1, 1), (1, 5), (5, 1), (2, 2)] {
        let mut s = Screen::new(c, r, 5);
        s.feed("中文😀e\u{301}\tabc\r\n\x1b[2;2H\x1b[@\x1b[P\x1b[L\x1b[M\x1b#8".as_bytes());
        s.resize(1, 1);
        s.feed("中x".as_bytes());
        s.resize(3, 3);
        check_views(&s);
    }
    let mut s = Screen::new(0, 0, 0);
    s.feed(b"hello\r\nworld");
    check_views(&s);
}

/// Found by cargo-fuzz: inserting at the right half of a wide character.
#[test]
fn insert_at_the_right_half_of_a_wide_character() {
    let mut s = Screen::new(129, 1, 0);
    s.feed(b"g\x8a\xa4:\x9f\x98\x80 \xf0\x9f\x8e\x89\x1b[;10H\x1b[@");
    check_views(&s);
}
