//! Evidence: asciicast recordings that asciinema replays, SVG captures that
//! parse as XML.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::client::{Client, WAIT_MS};

/// The `o` events of an asciicast, concatenated.
fn cast_output(cast: &str) -> String {
    let mut lines = cast.lines();
    let header: Value = serde_json::from_str(lines.next().expect("header")).expect("header JSON");
    assert_eq!(header["version"], 2, "{header}");
    assert!(
        header["width"].is_u64() && header["height"].is_u64(),
        "{header}"
    );
    assert!(header["timestamp"].is_u64(), "{header}");
    let mut out = String::new();
    let mut last = 0.0;
    for l in lines {
        let e: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("event {l:?}: {e}"));
        let ev = e.as_array().expect("event is an array");
        assert_eq!(ev.len(), 3, "{l}");
        let t = ev[0].as_f64().expect("time is a number");
        assert!(t >= last, "event times never go back: {l}");
        last = t;
        let code = ev[1].as_str().expect("code is a string");
        assert!(["o", "i", "r", "m"].contains(&code), "{l}");
        let data = ev[2].as_str().expect("data is a string");
        if code == "o" {
            out.push_str(data);
        }
    }
    out
}

/// A flood is absorbed many reads at a time; a recording still gets every
/// byte of it, in order (each read its own event).
#[test]
fn a_recorded_flood_is_recorded_whole() {
    let mut c = Client::start("drv-rec-flood");
    let cast = c.sb.root.join("flood.cast");
    c.launch(
        "f",
        &[
            "/bin/sh",
            "-c",
            "seq 1 40000; printf 'caf\\303\\251 done\\n'",
        ],
        json!({"cols": 80, "rows": 24, "record": cast}),
    );
    c.ok("waitForExit", "f", json!({"timeoutMs": WAIT_MS}));
    let cap = c.capture("f", json!({"includeAnsi": true}));
    let transcript = cap["ansi"].as_str().expect("the transcript").to_string();
    assert!(
        transcript.ends_with("40000\r\ncafé done\r\n"),
        "{:?}",
        &transcript[transcript.len().saturating_sub(60)..]
    );
    c.ok("recording", "f", json!({"action": "stop"}));
    let text = std::fs::read_to_string(&cast).expect("recording written");
    assert_eq!(cast_output(&text), transcript);
    assert!(c.finish().success());
}

#[test]
fn recordings_are_asciicast_v2_that_asciinema_replays() {
    let mut c = Client::start("drv-rec");
    let cast = c.sb.root.join("session.cast");
    c.launch(
        "r",
        &[
            "/bin/sh",
            "-c",
            "printf 'one \\033[32mgreen\\033[0m é\\n'; read x; echo \"got $x\"",
        ],
        json!({"cols": 60, "rows": 10, "record": cast}),
    );
    assert_eq!(c.ok("status", "r", json!({}))["recording"], json!(cast));
    c.wait_text("r", "green");
    c.ok("resize", "r", json!({"cols": 64, "rows": 10}));
    c.ok(
        "recording",
        "r",
        json!({"action": "marker", "label": "typing"}),
    );
    c.ok(
        "send",
        "r",
        json!({"input": [{"type": "text", "value": "two"}, {"type": "key", "value": "Enter"}]}),
    );
    c.wait_text("r", "got two");
    c.ok("waitForExit", "r", json!({"timeoutMs": WAIT_MS}));
    let cap = c.capture("r", json!({"includeAnsi": true}));
    assert_eq!(cap["reason"], "exited");
    let transcript = cap["ansi"]
        .as_str()
        .expect("includeAnsi gives the transcript")
        .to_string();
    assert!(transcript.contains("\x1b[32mgreen"), "{transcript:?}");
    let stopped = c.ok("recording", "r", json!({"action": "stop"}));
    assert_eq!(stopped["path"], json!(cast));

    let text = std::fs::read_to_string(&cast).expect("recording written");
    assert_eq!(cast_output(&text), transcript);
    let header: Value =
        serde_json::from_str(text.lines().next().unwrap_or_default()).expect("header");
    assert_eq!(
        (header["width"].as_u64(), header["height"].as_u64()),
        (Some(60), Some(10))
    );
    assert_eq!(header["env"]["TERM"], "xterm-256color");
    let events: Vec<Value> = text
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let has = |code: &str, data: &str| events.iter().any(|e| e[1] == code && e[2] == data);
    assert!(has("i", "two\r"), "{text}");
    assert!(has("r", "64x10"), "{text}");
    assert!(has("m", "typing"), "{text}");

    // `recording` on a running session starts and stops a file of its own.
    let second = c.sb.root.join("second.cast");
    c.launch(
        "s",
        &["/bin/sh", "-c", "read x; echo \"second $x\"; read y"],
        json!({}),
    );
    c.ok("recording", "s", json!({"action": "start", "path": second}));
    c.ok(
        "send",
        "s",
        json!({"input": [{"type": "text", "value": "go\r"}]}),
    );
    c.wait_text("s", "second go");
    let r = c.ok("recording", "s", json!({"action": "stop"}));
    assert!(r["events"].as_u64().is_some_and(|n| n >= 2), "{r}");
    let text2 = std::fs::read_to_string(&second).expect("second recording");
    assert!(cast_output(&text2).contains("second go"), "{text2}");

    // `asciinema cat` wants a terminal of its own: give it one of ours, and
    // it must reproduce the transcript byte for byte (it writes in raw mode).
    if Command::new("asciinema").arg("--version").output().is_ok() {
        let cast = cast.to_string_lossy().into_owned();
        c.launch(
            "cat",
            &["asciinema", "cat", &cast],
            json!({"cols": 60, "rows": 10}),
        );
        let exit = c.ok("waitForExit", "cat", json!({"timeoutMs": WAIT_MS}));
        assert_eq!(exit["exitCode"], 0, "{exit}");
        let replay = c.capture("cat", json!({"includeAnsi": true}));
        assert_eq!(replay["ansi"].as_str(), Some(transcript.as_str()));
        assert_eq!(replay["text"], cap["text"]);
    } else {
        eprintln!("asciinema is not installed: skipping the replay check");
    }
    assert!(c.finish().success());
}

#[test]
fn svg_capture_is_well_formed_xml() {
    let mut c = Client::start("drv-svg");
    c.launch(
        "v",
        &[
            "/bin/sh",
            "-c",
            "printf '\\033[1;4;38;5;202mbold\\033[0m \\033[7minv\\033[0m <&> 漢字 \\033[38;2;1;2;3mrgb\\033[0m\\n\\033[4 q'; sleep 600",
        ],
        json!({"cols": 40, "rows": 5}),
    );
    c.wait_text("v", "rgb");
    let cap = c.capture("v", json!({"includeSvg": true}));
    let svg = cap["svg"]
        .as_str()
        .expect("includeSvg gives an SVG")
        .to_string();
    assert!(
        svg.contains("漢字") && svg.contains("&lt;&amp;&gt;"),
        "{svg}"
    );
    let mut py = Command::new("python3")
        .args([
            "-c",
            "import sys, xml.etree.ElementTree as ET\nroot = ET.fromstring(sys.stdin.buffer.read())\nprint(root.tag)",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3");
    py.stdin
        .take()
        .expect("stdin")
        .write_all(svg.as_bytes())
        .expect("write svg");
    let out = py.wait_with_output().expect("python3 output");
    assert!(
        out.status.success(),
        "SVG is not well-formed XML: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "{http://www.w3.org/2000/svg}svg"
    );
    assert!(c.finish().success());
}
