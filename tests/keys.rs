//! The key table: every family of keys, and every spelling the seeds use.

use ptybroker::keys::{control_byte, encode_key};
use ptybroker::vt::Modes;

fn normal() -> Modes {
    Modes::default()
}

fn app_cursor() -> Modes {
    Modes {
        app_cursor_keys: true,
        ..Modes::default()
    }
}

/// The bytes of `name` in normal cursor-key mode.
fn key(name: &str) -> Vec<u8> {
    match encode_key(name, &normal()) {
        Ok(bytes) => bytes,
        Err(e) => panic!("{name:?} should be a key: {e}"),
    }
}

fn key_err(name: &str) -> String {
    match encode_key(name, &normal()) {
        Ok(bytes) => panic!("{name:?} should be refused, got {bytes:?}"),
        Err(e) => e.to_string(),
    }
}

fn assert_keys(cases: &[(&str, &[u8])]) {
    for (name, want) in cases {
        assert_eq!(key(name), *want, "key {name:?}");
    }
}

#[test]
fn seed_000_names_case_sensitive_spellings() {
    assert_keys(&[
        ("ArrowUp", b"\x1b[A"),
        ("ArrowDown", b"\x1b[B"),
        ("ArrowRight", b"\x1b[C"),
        ("ArrowLeft", b"\x1b[D"),
        ("Enter", b"\r"),
        ("Tab", b"\t"),
        ("Backspace", b"\x7f"),
        ("Delete", b"\x1b[3~"),
        ("Home", b"\x1b[H"),
        ("End", b"\x1b[F"),
        ("PageUp", b"\x1b[5~"),
        ("PageDown", b"\x1b[6~"),
        ("Insert", b"\x1b[2~"),
        ("Escape", b"\x1b"),
        ("Space", b" "),
        ("Ctrl+A", b"\x01"),
        ("Ctrl+Z", b"\x1a"),
        ("Shift+a", b"A"),
        ("Alt+x", b"\x1bx"),
        ("Alt+Enter", b"\x1b\r"),
        ("Ctrl+Enter", b"\n"),
        ("Ctrl+Space", b"\x00"),
        ("Ctrl+Alt+Del", b"\x1b[3;7~"),
    ]);
}

#[test]
fn seed_004_names_lowercase_with_dashes() {
    assert_keys(&[
        ("enter", b"\r"),
        ("tab", b"\t"),
        ("backtab", b"\x1b[Z"),
        ("esc", b"\x1b"),
        ("space", b" "),
        ("backspace", b"\x7f"),
        ("up", b"\x1b[A"),
        ("down", b"\x1b[B"),
        ("right", b"\x1b[C"),
        ("left", b"\x1b[D"),
        ("home", b"\x1b[H"),
        ("end", b"\x1b[F"),
        ("pageup", b"\x1b[5~"),
        ("pagedown", b"\x1b[6~"),
        ("insert", b"\x1b[2~"),
        ("delete", b"\x1b[3~"),
        ("f5", b"\x1b[15~"),
        ("ctrl-a", b"\x01"),
        ("ctrl-c", b"\x03"),
        ("ctrl-z", b"\x1a"),
        ("ctrl-space", b"\x00"),
        ("ctrl-break", b"\x03"),
        ("text:abc", b"abc"),
    ]);
}

#[test]
fn seed_003_and_design_spellings() {
    // Seed 003's example sends {"type":"key","value":"enter"}.
    assert_keys(&[
        ("enter", b"\r"),
        ("Return", b"\r"),
        ("BackTab", b"\x1b[Z"),
        ("Shift+Tab", b"\x1b[Z"),
        ("PgUp", b"\x1b[5~"),
        ("PgDn", b"\x1b[6~"),
        ("Del", b"\x1b[3~"),
        ("C-c", b"\x03"),
        ("M-x", b"\x1bx"),
        ("ctrl-shift-up", b"\x1b[1;6A"),
    ]);
}

#[test]
fn every_ctrl_letter_in_every_spelling() {
    for (i, letter) in ('a'..='z').enumerate() {
        let want = vec![i as u8 + 1];
        let upper = letter.to_ascii_uppercase();
        for name in [
            format!("Ctrl+{upper}"),
            format!("Ctrl+{letter}"),
            format!("ctrl-{letter}"),
            format!("CTRL-{upper}"),
            format!("control+{letter}"),
            format!("C-{letter}"),
            format!("Ctrl+Shift+{letter}"),
        ] {
            assert_eq!(key(&name), want, "key {name:?}");
        }
        assert_eq!(key(&format!("Ctrl+Alt+{letter}")), vec![0x1b, i as u8 + 1]);
    }
}

#[test]
fn names_are_case_insensitive_except_single_characters() {
    assert_keys(&[
        ("ENTER", b"\r"),
        ("eNtEr", b"\r"),
        ("ESCAPE", b"\x1b"),
        ("Esc", b"\x1b"),
        ("arrowup", b"\x1b[A"),
        ("ARROWLEFT", b"\x1b[D"),
        ("Up", b"\x1b[A"),
        ("pgup", b"\x1b[5~"),
        ("F12", b"\x1b[24~"),
        ("f12", b"\x1b[24~"),
        ("ALT+ENTER", b"\x1b\r"),
        ("Alt+X", b"\x1bX"),
        ("alt-x", b"\x1bx"),
        ("meta-x", b"\x1bx"),
        ("x", b"x"),
        ("X", b"X"),
    ]);
}

#[test]
fn function_keys() {
    assert_keys(&[
        ("F1", b"\x1bOP"),
        ("F2", b"\x1bOQ"),
        ("F3", b"\x1bOR"),
        ("F4", b"\x1bOS"),
        ("F5", b"\x1b[15~"),
        ("F6", b"\x1b[17~"),
        ("F7", b"\x1b[18~"),
        ("F8", b"\x1b[19~"),
        ("F9", b"\x1b[20~"),
        ("F10", b"\x1b[21~"),
        ("F11", b"\x1b[23~"),
        ("F12", b"\x1b[24~"),
        ("Shift+F1", b"\x1b[1;2P"),
        ("Ctrl+F4", b"\x1b[1;5S"),
        ("Shift+F5", b"\x1b[15;2~"),
        ("Ctrl+Alt+F12", b"\x1b[24;7~"),
    ]);
    assert!(encode_key("F13", &normal()).is_err());
    assert!(encode_key("F0", &normal()).is_err());
}

#[test]
fn cursor_keys_follow_decckm() {
    let cases: &[(&str, &[u8])] = &[
        ("ArrowUp", b"\x1bOA"),
        ("down", b"\x1bOB"),
        ("ArrowRight", b"\x1bOC"),
        ("left", b"\x1bOD"),
        ("Home", b"\x1bOH"),
        ("End", b"\x1bOF"),
        // Keys that DECCKM does not touch.
        ("PageUp", b"\x1b[5~"),
        ("Insert", b"\x1b[2~"),
        ("F1", b"\x1bOP"),
        ("Enter", b"\r"),
    ];
    for (name, want) in cases {
        assert_eq!(encode_key(name, &app_cursor()).unwrap(), *want, "{name}");
    }
    // Modified cursor keys use CSI 1;m X in either mode.
    for modes in [normal(), app_cursor()] {
        assert_eq!(encode_key("Ctrl+Up", &modes).unwrap(), b"\x1b[1;5A");
        assert_eq!(encode_key("Shift+End", &modes).unwrap(), b"\x1b[1;2F");
    }
}

#[test]
fn modifier_parameter_of_special_keys() {
    // m = 1 + shift + 2*alt + 4*ctrl
    assert_keys(&[
        ("Shift+Up", b"\x1b[1;2A"),
        ("Alt+Up", b"\x1b[1;3A"),
        ("Shift+Alt+Up", b"\x1b[1;4A"),
        ("Ctrl+Up", b"\x1b[1;5A"),
        ("Ctrl+Shift+Up", b"\x1b[1;6A"),
        ("Ctrl+Alt+Up", b"\x1b[1;7A"),
        ("Ctrl+Alt+Shift+Up", b"\x1b[1;8A"),
        ("Ctrl+Left", b"\x1b[1;5D"),
        ("Alt+Home", b"\x1b[1;3H"),
        ("Shift+Delete", b"\x1b[3;2~"),
        ("Ctrl+PageDown", b"\x1b[6;5~"),
        ("Alt+Insert", b"\x1b[2;3~"),
    ]);
}

#[test]
fn modifiers_combine_in_any_order_with_either_separator() {
    for name in [
        "Ctrl+Alt+Del",
        "Alt+Ctrl+Del",
        "ctrl-alt-del",
        "alt-ctrl-delete",
        "Ctrl-Alt+Delete",
        "C-M-Del",
        "M-C-del",
    ] {
        assert_eq!(key(name), b"\x1b[3;7~", "{name}");
    }
    for name in [
        "ctrl-shift-up",
        "Shift+Ctrl+Up",
        "shift-ctrl-ArrowUp",
        "S-C-up",
    ] {
        assert_eq!(key(name), b"\x1b[1;6A", "{name}");
    }
}

#[test]
fn legacy_keys_with_modifiers() {
    assert_keys(&[
        ("Alt+Enter", b"\x1b\r"),
        ("Ctrl+Enter", b"\n"),
        ("Shift+Enter", b"\r"),
        ("Ctrl+Alt+Enter", b"\x1b\n"),
        ("Alt+Tab", b"\x1b\t"),
        ("Alt+Shift+Tab", b"\x1b\x1b[Z"),
        ("Alt+BackTab", b"\x1b\x1b[Z"),
        ("Alt+Escape", b"\x1b\x1b"),
        ("Alt+Space", b"\x1b "),
        ("Ctrl+Alt+Space", b"\x1b\x00"),
        ("Shift+Space", b" "),
        ("Ctrl+Backspace", b"\x08"),
        ("Alt+Backspace", b"\x1b\x7f"),
        ("Shift+Backspace", b"\x7f"),
        ("Alt+.", b"\x1b."),
        ("Alt+-", b"\x1b-"),
        ("Alt++", b"\x1b+"),
    ]);
    assert_keys(&[
        ("Ctrl+@", b"\x00"),
        ("Ctrl+[", b"\x1b"),
        ("Ctrl+\\", b"\x1c"),
        ("Ctrl+]", b"\x1d"),
        ("Ctrl+^", b"\x1e"),
        ("Ctrl+_", b"\x1f"),
        ("Ctrl+?", b"\x7f"),
        ("Shift+z", b"Z"),
        ("Shift+Z", b"Z"),
        ("Alt+Shift+a", b"\x1bA"),
        ("é", "é".as_bytes()),
        ("Alt+é", "\x1bé".as_bytes()),
    ]);
}

#[test]
fn text_pseudo_key_sends_its_text() {
    assert_keys(&[
        ("text:abc", b"abc"),
        ("TEXT:Hello, World", b"Hello, World"),
        ("text:ctrl-c", b"ctrl-c"),
        ("text:", b""),
        ("text:héllo\n", "héllo\n".as_bytes()),
    ]);
}

#[test]
fn unknown_names_are_errors_that_say_what_is_accepted() {
    assert_eq!(
        key_err("Ctlr+C"),
        "unknown key name \"Ctlr+C\" (try Enter, Tab, Escape, ArrowUp, F1..F12, Ctrl+A, Alt+x, ...)"
    );
    for name in [
        "",
        "Entr",
        "ArrowUpp",
        "Ctrl+",
        "+C",
        "Ctrl++C",
        "Ctrl+Ctrl+C",
        "c-c",
        "Hyper+x",
        "Ctrl C",
        "Enter ",
        "break",
        "\t",
        "--",
        "F13",
        "tex:abc",
    ] {
        let err = encode_key(name, &normal());
        assert!(err.is_err(), "{name:?} should be refused, got {err:?}");
    }
}

#[test]
fn chords_a_terminal_cannot_send_are_refused_with_a_reason() {
    for name in [
        "Ctrl+Tab",
        "Ctrl+Escape",
        "Shift+Escape",
        "Ctrl+1",
        "Shift+1",
        "Ctrl+é",
        "Shift+BackTab",
        "Alt+ctrl-break",
        "shift-break",
        "ctrl--",
    ] {
        let msg = key_err(name);
        assert!(msg.contains(&format!("{name:?}")), "{msg}");
        assert!(msg.contains("cannot be sent"), "{msg}");
    }
    assert!(key_err("Ctrl+Tab").contains("send Tab"));
}

#[test]
fn control_byte_covers_letters_and_the_symbols() {
    assert_eq!(control_byte('c').unwrap(), 0x03);
    assert_eq!(control_byte('C').unwrap(), 0x03);
    assert_eq!(control_byte('a').unwrap(), 0x01);
    assert_eq!(control_byte('z').unwrap(), 0x1a);
    assert_eq!(control_byte('@').unwrap(), 0x00);
    assert_eq!(control_byte(' ').unwrap(), 0x00);
    assert_eq!(control_byte('[').unwrap(), 0x1b);
    assert_eq!(control_byte('\\').unwrap(), 0x1c);
    assert_eq!(control_byte(']').unwrap(), 0x1d);
    assert_eq!(control_byte('^').unwrap(), 0x1e);
    assert_eq!(control_byte('_').unwrap(), 0x1f);
    assert_eq!(control_byte('?').unwrap(), 0x7f);
    for c in ['1', '!', 'é', '\n', '~'] {
        let err = control_byte(c).unwrap_err().to_string();
        assert!(err.starts_with("no control character for"), "{err}");
    }
}
