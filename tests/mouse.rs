//! Mouse reports per tracking mode and encoding, and the refusals of seed 003.

use ptybroker::keys::{encode_mouse, MouseAction, MouseButton, MouseEvent};
use ptybroker::vt::{Modes, MouseEncoding, MouseTracking};

const COLS: u16 = 80;
const ROWS: u16 = 24;

fn modes(tracking: MouseTracking, encoding: MouseEncoding) -> Modes {
    Modes {
        mouse_tracking: tracking,
        mouse_encoding: encoding,
        ..Modes::default()
    }
}

fn sgr(tracking: MouseTracking) -> Modes {
    modes(tracking, MouseEncoding::Sgr)
}

fn ev(action: MouseAction, x: u16, y: u16, button: MouseButton) -> MouseEvent {
    MouseEvent {
        action,
        x,
        y,
        button,
        shift: false,
        alt: false,
        ctrl: false,
    }
}

use MouseAction::{Click, Down, Move, Up};
use MouseButton::{Left, Middle, Right};

fn send(e: MouseEvent, m: &Modes, held: &mut Option<MouseButton>) -> Vec<u8> {
    match encode_mouse(&e, m, held, COLS, ROWS) {
        Ok(bytes) => bytes,
        Err(err) => panic!("{e:?} should be encoded: {err}"),
    }
}

/// Asserts that `e` is refused and leaves `held` as it was.
fn refused(e: MouseEvent, m: &Modes, held: &mut Option<MouseButton>) -> String {
    let before = *held;
    let result = encode_mouse(&e, m, held, COLS, ROWS);
    assert_eq!(*held, before, "a refusal must not change the held button");
    match result {
        Ok(bytes) => panic!("{e:?} should be refused, got {bytes:?}"),
        Err(err) => err.to_string(),
    }
}

#[test]
fn sgr_right_click_with_shift_is_exact() {
    let e = MouseEvent {
        shift: true,
        ..ev(Click, 12, 4, Right)
    };
    let mut held = None;
    let bytes = send(e, &sgr(MouseTracking::Normal), &mut held);
    assert_eq!(bytes, b"\x1b[<6;13;5M\x1b[<6;13;5m");
    assert_eq!(held, None);
}

#[test]
fn sgr_buttons_modifiers_and_drag() {
    let m = sgr(MouseTracking::ButtonEvent);
    let mut held = None;
    assert_eq!(send(ev(Down, 0, 0, Left), &m, &mut held), b"\x1b[<0;1;1M");
    assert_eq!(held, Some(Left));
    assert_eq!(send(ev(Move, 5, 2, Right), &m, &mut held), b"\x1b[<32;6;3M");
    assert_eq!(send(ev(Up, 5, 2, Left), &m, &mut held), b"\x1b[<0;6;3m");
    assert_eq!(held, None);
    let all = MouseEvent {
        shift: true,
        alt: true,
        ctrl: true,
        ..ev(Click, 79, 23, Middle)
    };
    assert_eq!(send(all, &m, &mut held), b"\x1b[<29;80;24M\x1b[<29;80;24m");
}

#[test]
fn legacy_encoding_offsets_by_32_and_stops_at_223() {
    let m = modes(MouseTracking::Normal, MouseEncoding::Default);
    let mut held = None;
    assert_eq!(
        send(ev(Click, 12, 4, Left), &m, &mut held),
        b"\x1b[M\x20\x2d\x25\x1b[M\x23\x2d\x25"
    );
    let ctrl = MouseEvent {
        ctrl: true,
        ..ev(Down, 0, 0, Right)
    };
    assert_eq!(send(ctrl, &m, &mut held), b"\x1b[M\x32\x21\x21");
    assert_eq!(
        send(ev(Up, 0, 0, Right), &m, &mut held),
        b"\x1b[M\x23\x21\x21"
    );

    // Column 223 (1-based) is the last that fits in one byte.
    let wide = |e: MouseEvent, held: &mut Option<MouseButton>| encode_mouse(&e, &m, held, 300, 300);
    assert_eq!(
        wide(ev(Click, 222, 0, Left), &mut held).unwrap(),
        b"\x1b[M\x20\xff\x21\x1b[M\x23\xff\x21"
    );
    let err = wide(ev(Down, 223, 0, Left), &mut held)
        .unwrap_err()
        .to_string();
    assert!(err.contains("223"), "{err}");
    assert_eq!(held, None);
}

#[test]
fn utf8_encoding_uses_characters_past_95() {
    let m = modes(MouseTracking::Normal, MouseEncoding::Utf8);
    let mut held = None;
    assert_eq!(
        send(ev(Down, 0, 0, Left), &m, &mut held),
        b"\x1b[M\x20\x21\x21"
    );
    let e = ev(Up, 0, 0, Left);
    assert_eq!(send(e, &m, &mut held), b"\x1b[M\x23\x21\x21");
    // x = 200 (1-based 201) + 32 = 233 = U+00E9, two bytes in UTF-8.
    let bytes = encode_mouse(&ev(Down, 200, 0, Left), &m, &mut held, 3000, 3000).unwrap();
    assert_eq!(bytes, "\x1b[M\u{20}\u{e9}\u{21}".as_bytes());
    held = None;
    assert!(encode_mouse(&ev(Down, 2014, 0, Left), &m, &mut held, 3000, 3000).is_ok());
    held = None;
    assert!(encode_mouse(&ev(Down, 2015, 0, Left), &m, &mut held, 3000, 3000).is_err());
    assert_eq!(held, None);
}

#[test]
fn urxvt_encoding_is_decimal_with_offset_button() {
    let m = modes(MouseTracking::AnyEvent, MouseEncoding::Urxvt);
    let mut held = None;
    assert_eq!(
        send(ev(Move, 299 % COLS, 9, Left), &m, &mut held),
        b"\x1b[67;60;10M"
    );
    assert_eq!(
        send(ev(Click, 12, 4, Right), &m, &mut held),
        b"\x1b[34;13;5M\x1b[35;13;5M"
    );
}

#[test]
fn sgr_pixels_reports_the_middle_of_the_cell_in_pixels() {
    // 10 by 20 pixels a cell (limits::CELL_PIXELS, the size the PTY
    // reports): cell (12, 4) is pixels 120..130 by 80..100.
    let m = modes(MouseTracking::ButtonEvent, MouseEncoding::SgrPixels);
    let mut held = None;
    let e = MouseEvent {
        ctrl: true,
        ..ev(Click, 12, 4, Right)
    };
    assert_eq!(send(e, &m, &mut held), b"\x1b[<18;125;90M\x1b[<18;125;90m");
    send(ev(Down, 0, 0, Left), &m, &mut held);
    assert_eq!(
        send(ev(Move, 79, 23, Left), &m, &mut held),
        b"\x1b[<32;795;470M"
    );
    assert_eq!(
        send(ev(Up, 79, 23, Left), &m, &mut held),
        b"\x1b[<0;795;470m"
    );
}

#[test]
fn x10_reports_presses_only_without_modifiers() {
    let m = modes(MouseTracking::X10, MouseEncoding::Default);
    let mut held = None;
    let e = MouseEvent {
        shift: true,
        ctrl: true,
        ..ev(Click, 1, 1, Middle)
    };
    assert_eq!(send(e, &m, &mut held), b"\x1b[M\x21\x22\x22");
    assert_eq!(
        send(ev(Down, 1, 1, Left), &m, &mut held),
        b"\x1b[M\x20\x22\x22"
    );
    assert_eq!(held, Some(Left));
    // The release is not reported, but it does release the button.
    assert_eq!(send(ev(Up, 1, 1, Left), &m, &mut held), b"");
    assert_eq!(held, None);
    let err = refused(ev(Move, 1, 1, Left), &m, &mut held);
    assert!(err.contains("hover"), "{err}");
}

#[test]
fn hover_needs_any_event_tracking() {
    let mut held = None;
    for tracking in [MouseTracking::Normal, MouseTracking::ButtonEvent] {
        let err = refused(ev(Move, 3, 3, Left), &sgr(tracking), &mut held);
        assert!(err.contains("any-event"), "{err}");
    }
    let any = sgr(MouseTracking::AnyEvent);
    assert_eq!(
        send(ev(Move, 3, 3, Left), &any, &mut held),
        b"\x1b[<35;4;4M"
    );
    let alt = MouseEvent {
        alt: true,
        ..ev(Move, 3, 3, Left)
    };
    assert_eq!(send(alt, &any, &mut held), b"\x1b[<43;4;4M");
}

#[test]
fn drags_need_button_event_tracking() {
    let m = sgr(MouseTracking::Normal);
    let mut held = None;
    send(ev(Down, 3, 3, Left), &m, &mut held);
    let err = refused(ev(Move, 4, 3, Left), &m, &mut held);
    assert!(err.contains("1002"), "{err}");
    let any = sgr(MouseTracking::AnyEvent);
    assert_eq!(
        send(ev(Move, 4, 3, Left), &any, &mut held),
        b"\x1b[<32;5;4M"
    );
}

#[test]
fn reporting_off_refuses_everything() {
    let m = Modes::default();
    let mut held = None;
    for action in [Move, Down, Up, Click] {
        let err = refused(ev(action, 0, 0, Left), &m, &mut held);
        assert!(err.contains("mouse reporting is off"), "{err}");
    }
}

#[test]
fn outside_the_viewport_is_refused() {
    let m = sgr(MouseTracking::AnyEvent);
    let mut held = None;
    for (x, y) in [(COLS, 0), (0, ROWS), (u16::MAX, u16::MAX)] {
        let err = refused(ev(Click, x, y, Left), &m, &mut held);
        assert!(err.contains("outside the 80x24 viewport"), "{err}");
    }
    send(ev(Down, 0, 0, Left), &m, &mut held);
    refused(ev(Move, COLS, 0, Left), &m, &mut held);
    refused(ev(Up, 0, ROWS, Left), &m, &mut held);
    assert_eq!(held, Some(Left));
}

#[test]
fn one_button_at_a_time_and_up_must_match() {
    let m = sgr(MouseTracking::Normal);
    let mut held = None;
    let err = refused(ev(Up, 0, 0, Left), &m, &mut held);
    assert!(err.contains("no button is held"), "{err}");
    send(ev(Down, 0, 0, Left), &m, &mut held);
    let err = refused(ev(Down, 0, 0, Right), &m, &mut held);
    assert!(err.contains("left button is held"), "{err}");
    let err = refused(ev(Click, 0, 0, Left), &m, &mut held);
    assert!(err.contains("left button is held"), "{err}");
    let err = refused(ev(Up, 0, 0, Right), &m, &mut held);
    assert!(
        err.contains("up for the right button, but the left button is held"),
        "{err}"
    );
    assert_eq!(send(ev(Up, 0, 0, Left), &m, &mut held), b"\x1b[<0;1;1m");
    assert_eq!(held, None);
}

#[test]
fn names_parse_as_seed_003_spells_them() {
    assert_eq!("left".parse::<MouseButton>().unwrap(), Left);
    assert_eq!("middle".parse::<MouseButton>().unwrap(), Middle);
    assert_eq!("right".parse::<MouseButton>().unwrap(), Right);
    assert!("wheel".parse::<MouseButton>().is_err());
    for (name, action) in [("move", Move), ("down", Down), ("up", Up), ("click", Click)] {
        assert_eq!(name.parse::<MouseAction>().unwrap(), action);
    }
    let err = "drag".parse::<MouseAction>().unwrap_err().to_string();
    assert!(err.contains("move, down, up or click"), "{err}");
}
