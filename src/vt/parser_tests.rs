//! Byte-level tests of the parser alone, through a performer that logs.

use super::*;

#[derive(Default)]
struct Log(Vec<String>);

impl Perform for Log {
    fn print(&mut self, c: char) {
        match self.0.last_mut() {
            Some(s) if s.starts_with("print:") => s.push(c),
            _ => self.0.push(format!("print:{c}")),
        }
    }
    fn execute(&mut self, b: u8) {
        self.0.push(format!("exec:{b:02x}"));
    }
    fn csi_dispatch(&mut self, p: &Params, i: &[u8], ignore: bool, a: u8) {
        let groups: Vec<String> = p
            .groups()
            .map(|g| {
                g.iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(":")
            })
            .collect();
        self.0.push(format!(
            "csi:{}{}{}{}",
            String::from_utf8_lossy(i),
            groups.join(";"),
            a as char,
            if ignore { "!" } else { "" }
        ));
    }
    fn esc_dispatch(&mut self, i: &[u8], _ignore: bool, b: u8) {
        self.0
            .push(format!("esc:{}{}", String::from_utf8_lossy(i), b as char));
    }
    fn osc_dispatch(&mut self, p: &[&[u8]], bell: bool) {
        let f: Vec<String> = p
            .iter()
            .map(|x| String::from_utf8_lossy(x).into())
            .collect();
        self.0.push(format!(
            "osc:{}{}",
            f.join("|"),
            if bell { " bel" } else { "" }
        ));
    }
    fn hook(&mut self, _p: &Params, i: &[u8], _ignore: bool, a: u8) {
        self.0
            .push(format!("hook:{}{}", String::from_utf8_lossy(i), a as char));
    }
    fn put(&mut self, b: u8) {
        self.0.push(format!("put:{}", b as char));
    }
    fn unhook(&mut self) {
        self.0.push("unhook".into());
    }
}

fn parse(bytes: &[u8]) -> Vec<String> {
    let mut p = Parser::new();
    let mut log = Log::default();
    p.advance(&mut log, bytes);
    log.0
}

/// Feeding one byte at a time must give the same calls as feeding all.
fn parse_bytewise(bytes: &[u8]) -> Vec<String> {
    let mut p = Parser::new();
    let mut log = Log::default();
    for b in bytes {
        p.advance(&mut log, std::slice::from_ref(b));
    }
    log.0
}

#[test]
fn text_and_controls() {
    assert_eq!(
        parse(b"ab\r\ncd"),
        ["print:ab", "exec:0d", "exec:0a", "print:cd"]
    );
}

#[test]
fn csi_params_and_private_markers() {
    assert_eq!(parse(b"\x1b[1;22H"), ["csi:1;22H"]);
    assert_eq!(parse(b"\x1b[?1049h"), ["csi:?1049h"]);
    assert_eq!(parse(b"\x1b[H"), ["csi:H"]);
    assert_eq!(parse(b"\x1b[;5H"), ["csi:0;5H"]);
    assert_eq!(parse(b"\x1b[?2026$p"), ["csi:?$2026p"]);
    assert_eq!(parse(b"\x1b[>q"), ["csi:>q"]);
}

#[test]
fn colon_subparameters_group() {
    assert_eq!(parse(b"\x1b[38:2:1:2:3;1m"), ["csi:38:2:1:2:3;1m"]);
    assert_eq!(parse(b"\x1b[4:3m"), ["csi:4:3m"]);
}

#[test]
fn huge_parameters_saturate() {
    assert_eq!(parse(b"\x1b[99999999999A"), ["csi:65535A"]);
}

#[test]
fn too_many_parameters_are_flagged() {
    let mut seq = b"\x1b[".to_vec();
    for _ in 0..1000 {
        seq.extend_from_slice(b"1;");
    }
    seq.push(b'm');
    let log = parse(&seq);
    assert_eq!(log.len(), 1);
    assert!(log[0].ends_with("m!"), "{log:?}");
}

#[test]
fn controls_inside_csi_execute() {
    assert_eq!(parse(b"\x1b[1\n;2H"), ["exec:0a", "csi:1;2H"]);
}

#[test]
fn can_aborts_a_sequence() {
    assert_eq!(parse(b"\x1b[12\x18x"), ["exec:18", "print:x"]);
}

#[test]
fn esc_sequences() {
    assert_eq!(
        parse(b"\x1b7\x1b8\x1b(0\x1b#8"),
        ["esc:7", "esc:8", "esc:(0", "esc:#8"]
    );
}

#[test]
fn osc_with_bel_and_st() {
    assert_eq!(parse(b"\x1b]0;hi there\x07"), ["osc:0|hi there bel"]);
    assert_eq!(
        parse(b"\x1b]2;a;b\x1b\\x"),
        ["osc:2|a|b", "esc:\\", "print:x"]
    );
}

#[test]
fn osc_is_bounded() {
    let mut seq = b"\x1b]2;".to_vec();
    seq.extend(std::iter::repeat_n(b'x', 100_000));
    seq.push(7);
    let log = parse(&seq);
    assert_eq!(log.len(), 1);
    assert!(log[0].len() < MAX_OSC + 16);
}

#[test]
fn dcs_is_hooked_and_strings_consumed() {
    assert_eq!(
        parse(b"\x1bP1$qm\x1b\\"),
        ["hook:$q", "put:m", "unhook", "esc:\\"]
    );
    // CAN (or SUB) cancels the string: the performer sees it before the
    // string ends, so that it can drop what the string asked.
    assert_eq!(
        parse(b"\x1bP$qm\x18z"),
        ["hook:$q", "put:m", "exec:18", "unhook", "print:z"]
    );
    assert_eq!(
        parse(b"\x1b_apc\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\z"),
        ["esc:\\", "esc:\\", "esc:\\", "print:z"]
    );
}

#[test]
fn utf8_decoding_and_invalid_bytes() {
    assert_eq!(parse("héllo 中文".as_bytes()), ["print:héllo 中文"]);
    assert_eq!(parse(b"a\xffb"), ["print:a\u{fffd}b"]);
    // A lead byte cut short by a control.
    assert_eq!(parse(b"\xe4\xb8\n"), ["print:\u{fffd}", "exec:0a"]);
    // Surrogates and overlongs are invalid.
    assert_eq!(parse(b"\xed\xa0\x80"), ["print:\u{fffd}\u{fffd}\u{fffd}"]);
}

#[test]
fn any_split_gives_the_same_calls() {
    let input = "a\x1b[1;31mé中\x1b]0;t\x07😀\x1b[?25l\r\n".as_bytes();
    assert_eq!(parse(input), parse_bytewise(input));
    for cut in 0..input.len() {
        let mut p = Parser::new();
        let mut log = Log::default();
        p.advance(&mut log, &input[..cut]);
        p.advance(&mut log, &input[cut..]);
        assert_eq!(log.0, parse(input), "cut at {cut}");
    }
}

#[test]
fn mid_sequence_is_reported() {
    let mut p = Parser::new();
    let mut log = Log::default();
    p.advance(&mut log, b"\x1b[1");
    assert!(p.is_mid_sequence());
    p.advance(&mut log, b"m\xe4");
    assert!(p.is_mid_sequence());
    p.advance(&mut log, b"\xb8\xad");
    assert!(!p.is_mid_sequence());
}

#[test]
fn ascii_runs_stop_at_every_special_byte() {
    for special in [0x00u8, 0x1b, 0x1f, 0x7f, 0x80, 0xc3, 0xff] {
        for pos in 0..20 {
            let mut v = vec![b'a'; 20];
            v[pos] = special;
            assert_eq!(ascii_run(&v), pos, "byte {special:#x} at {pos}");
        }
    }
    assert_eq!(ascii_run(b" ~~~~~~~~~~~~~"), 14);
    assert_eq!(ascii_run(b""), 0);
}

/// The parser's decoder agrees with the standard library's on every lead
/// byte with every two following bytes (and a spread of fourth bytes), and
/// declines a character cut short.
#[test]
fn decode_matches_std() {
    for b0 in 0x80u8..=0xff {
        for b1 in 0u8..=0xff {
            for b2 in 0u8..=0xff {
                let fourths: &[u8] = if b0 >= 0xf0 {
                    &[0, 0x7f, 0x80, 0x9f, 0xbf, 0xc0]
                } else {
                    &[0x41]
                };
                for &b3 in fourths {
                    let bytes = [b0, b1, b2, b3];
                    let want = (1..=4).find_map(|n| {
                        let s = std::str::from_utf8(&bytes[..n]).ok()?;
                        Some((s.chars().next()?, n))
                    });
                    assert_eq!(decode(&bytes), want, "{bytes:x?}");
                    if let Some((_, n)) = want {
                        assert_eq!(decode(&bytes[..n - 1]), None, "{bytes:x?} cut");
                    }
                }
            }
        }
    }
    assert_eq!(decode("本".as_bytes()), Some(('本', 3)));
    assert_eq!(decode("😀".as_bytes()), Some(('😀', 4)));
}

/// A run of three-byte characters cut anywhere across two `advance` calls
/// prints the same characters as in one call.
#[test]
fn three_byte_runs_split_across_chunks() {
    let input = "日本語のテキスト a中文\u{ffe5}x\u{20ac}".as_bytes();
    for cut in 0..=input.len() {
        let mut p = Parser::new();
        let mut log = Log::default();
        p.advance(&mut log, &input[..cut]);
        p.advance(&mut log, &input[cut..]);
        assert_eq!(log.0, parse(input), "cut at {cut}");
    }
}

/// The CSI parameter loop (values counted in registers, the state set once
/// per call) against what the sequences mean, whole and split at every
/// byte: empty and missing values, `:` mixed in, private markers and
/// intermediates, a marker after a value (ignored), a control inside, and
/// exactly 32 values against 33 (flagged ignored).
#[test]
fn csi_parameters_split_anywhere() {
    let many = |n: usize| {
        let vals: Vec<String> = (0..n).map(|i| (i % 10).to_string()).collect();
        format!("\x1b[{}m", vals.join(";"))
    };
    let cases: Vec<(String, Vec<String>)> = vec![
        ("\x1b[m".into(), vec!["csi:m".into()]),
        ("\x1b[;m".into(), vec!["csi:0;0m".into()]),
        ("\x1b[1;m".into(), vec!["csi:1;0m".into()]),
        ("\x1b[;;1m".into(), vec!["csi:0;0;1m".into()]),
        ("\x1b[38;5;300m".into(), vec!["csi:38;5;300m".into()]),
        (
            "\x1b[38;2;1;2;3;48;5;9m".into(),
            vec!["csi:38;2;1;2;3;48;5;9m".into()],
        ),
        ("\x1b[1:2;3m".into(), vec!["csi:1:2;3m".into()]),
        ("\x1b[1;38:5:2m".into(), vec!["csi:1;38:5:2m".into()]),
        ("\x1b[?1;2m".into(), vec!["csi:?1;2m".into()]),
        ("\x1b[1;2 m".into(), vec!["csi: 1;2m".into()]),
        ("\x1b[1;?mx".into(), vec!["print:x".into()]),
        (
            "\x1b[1;\r2m".into(),
            vec!["exec:0d".into(), "csi:1;2m".into()],
        ),
        ("\x1b[70000;1m".into(), vec!["csi:65535;1m".into()]),
        (many(32), vec![format!("csi:{}", &many(32)[2..])]),
        (many(33), vec![format!("csi:{}!", &many(32)[2..])]),
        (
            format!("{};m", &many(32)[..many(32).len() - 1]),
            vec![format!("csi:{}!", &many(32)[2..])],
        ),
    ];
    for (input, want) in &cases {
        let input = input.as_bytes();
        assert_eq!(&parse(input), want, "{input:?}");
        assert_eq!(&parse_bytewise(input), want, "{input:?} bytewise");
        for cut in 0..input.len() {
            let mut p = Parser::new();
            let mut log = Log::default();
            p.advance(&mut log, &input[..cut]);
            p.advance(&mut log, &input[cut..]);
            assert_eq!(&log.0, want, "{input:?} cut at {cut}");
        }
    }
}
