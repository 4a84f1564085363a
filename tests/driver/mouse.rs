//! The mouse: exact reports per the modes the program negotiated, refusals
//! that send nothing, and mouse input in recordings.

use serde_json::{json, Value};

use crate::client::Client;

const MOUSE_PROGRAM: &str = r#"
import os, sys, tty
tty.setraw(0)
sys.stdout.write(sys.argv[1] + "ready\r\n")
sys.stdout.flush()
seen = b""
while True:
    b = os.read(0, 1024)
    if not b:
        break
    seen += b
    sys.stdout.write("all " + seen.hex() + "\r\n")
    sys.stdout.flush()
"#;

fn mouse_program(modes: &str) -> Vec<String> {
    vec![
        "python3".into(),
        "-c".into(),
        MOUSE_PROGRAM.into(),
        modes.into(),
    ]
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn sgr_right_click_with_shift_reaches_the_program_exactly() {
    let mut c = Client::start("drv-mouse");
    let cast = c.sb.root.join("mouse.cast");
    let argv = mouse_program("\x1b[?1000h\x1b[?1006h");
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    c.launch("m", &argv, json!({"cols": 80, "rows": 24, "record": cast}));
    c.wait_text("m", "ready");

    // Refusals send nothing: hover without any-event tracking, a cell outside
    // the viewport, an up with no button held.
    for (params, want) in [
        (json!({"action": "move", "x": 3, "y": 3}), "hover"),
        (json!({"action": "click", "x": 80, "y": 0}), "outside"),
        (json!({"action": "click", "x": 0, "y": 24}), "outside"),
        (json!({"action": "up", "x": 1, "y": 1}), "no button is held"),
    ] {
        let (code, msg) = c.err("mouse", "m", params.clone());
        assert_eq!(code, "REQUEST_FAILED", "{params}");
        assert!(msg.contains(want), "{params}: {msg}");
    }

    let r = c.call(
        "mouse",
        "m",
        json!({"action": "click", "x": 12, "y": 4, "button": "right", "shift": true}),
    );
    assert_eq!(r["type"], "response");
    assert_eq!(r["result"], Value::Null, "success returns null: {r}");
    let bytes = b"\x1b[<6;13;5M\x1b[<6;13;5m";
    c.wait_text("m", &format!("all {}", hex(bytes)));

    // Holding a button: a second press is refused, up must match it.
    c.ok("mouse", "m", json!({"action": "down", "x": 0, "y": 0}));
    let (code, msg) = c.err(
        "mouse",
        "m",
        json!({"action": "click", "x": 1, "y": 1, "button": "middle"}),
    );
    assert_eq!(code, "REQUEST_FAILED");
    assert!(msg.contains("held"), "{msg}");
    let (code, _) = c.err(
        "mouse",
        "m",
        json!({"action": "up", "x": 0, "y": 0, "button": "right"}),
    );
    assert_eq!(code, "REQUEST_FAILED");
    c.ok("mouse", "m", json!({"action": "up", "x": 0, "y": 0}));
    let all: Vec<u8> = [&bytes[..], b"\x1b[<0;1;1M", b"\x1b[<0;1;1m"].concat();
    c.wait_text("m", &format!("all {}", hex(&all)));

    // Mouse input is recorded as input, with its actual bytes.
    c.ok("recording", "m", json!({"action": "stop"}));
    let text = std::fs::read_to_string(&cast).expect("recording written");
    let inputs: Vec<String> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).expect("event line is JSON"))
        .filter(|e| e[1] == "i")
        .map(|e| e[2].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        inputs,
        ["\x1b[<6;13;5M\x1b[<6;13;5m", "\x1b[<0;1;1M", "\x1b[<0;1;1m"],
        "{text}"
    );
    assert!(c.finish().success());
}

#[test]
fn mouse_follows_other_tracking_modes_and_encodings() {
    let mut c = Client::start("drv-mouse-modes");
    // Any-event tracking with the legacy encoding: hover is reported.
    let argv = mouse_program("\x1b[?1003h");
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    c.launch("any", &argv, json!({}));
    c.wait_text("any", "ready");
    c.ok(
        "mouse",
        "any",
        json!({"action": "move", "x": 2, "y": 1, "alt": true}),
    );
    // Motion (32) + no button (3) + alt (8), then x+1 and y+1, each + 32.
    c.wait_text(
        "any",
        &format!("all {}", hex(&[0x1b, b'[', b'M', 32 + 43, 32 + 3, 32 + 2])),
    );

    // urxvt encoding under normal tracking, with ctrl.
    let argv = mouse_program("\x1b[?1000h\x1b[?1015h");
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    c.launch("urxvt", &argv, json!({}));
    c.wait_text("urxvt", "ready");
    c.ok(
        "mouse",
        "urxvt",
        json!({"action": "down", "x": 9, "y": 0, "button": "middle", "ctrl": true}),
    );
    c.wait_text("urxvt", &format!("all {}", hex(b"\x1b[49;10;1M")));

    // SGR-Pixels (mode 1016, after 1006 as programs send it): the terminal
    // reports its size in pixels too, and a click comes in pixels, in the
    // middle of its cell.
    let argv = mouse_program("\x1b[?1002h\x1b[?1006h\x1b[?1016h");
    let mut argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let with_size = MOUSE_PROGRAM.replace(
        "tty.setraw(0)",
        "tty.setraw(0)\nimport fcntl, struct, termios\nr, c, w, h = struct.unpack('HHHH', fcntl.ioctl(0, termios.TIOCGWINSZ, bytes(8)))\nsys.stdout.write('size %dx%d px %dx%d\\r\\n' % (c, r, w, h))",
    );
    argv[2] = &with_size;
    c.launch("px", &argv, json!({"cols": 80, "rows": 24}));
    c.wait_text("px", "ready");
    c.wait_text("px", "size 80x24 px 800x480");
    c.ok("mouse", "px", json!({"action": "click", "x": 12, "y": 4}));
    c.wait_text(
        "px",
        &format!("all {}", hex(b"\x1b[<0;125;90M\x1b[<0;125;90m")),
    );
    assert!(c.finish().success());
}
