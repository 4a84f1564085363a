//! What an agent reads from the CLI, kept small without losing anything:
//! output capped to its head and tail with a marker whose command prints
//! exactly the lines left out, `read --bottom` counting lines of content,
//! and `--changed` showing only the rows of a full-screen program that
//! changed since the screen last shown.

mod common;

use common::{re, Sandbox, STATUS_LINE};

/// A bash without rc files whose prompt is `ready> `.
fn start_bash(sb: &Sandbox, session: &str) {
    sb.run(&[
        "start",
        "-s",
        session,
        "--env",
        "PS1=ready> ",
        "--",
        "bash",
        "--norc",
        "--noprofile",
    ])
    .ok();
    sb.run(&[
        "wait",
        "-s",
        session,
        "--screen",
        "--match",
        "ready>",
        "--max-wait",
        "30000",
    ])
    .ok();
}

/// The marker in `out`: (lines, bytes, the command's arguments after
/// `ptybroker`), and `out` split around it.
fn marker(out: &str) -> (usize, usize, Vec<String>, String, String) {
    let re = re(
        r"(?m)^\[ptybroker: (\d+) lines \((\d+) bytes\) left out here; print them with: ptybroker ([^\]]+)\]\n",
    );
    let c = re
        .captures(out)
        .unwrap_or_else(|| panic!("no omission marker in {out:?}"));
    let whole = c.get(0).expect("match");
    let args = c[3].split(' ').map(str::to_string).collect();
    (
        c[1].parse().expect("lines"),
        c[2].parse().expect("bytes"),
        args,
        out[..whole.start()].to_string(),
        out[whole.end()..].to_string(),
    )
}

fn run_marker(sb: &Sandbox, args: &[String]) -> String {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = sb.run(&args).ok();
    assert_eq!(out.stderr, "", "{args:?}");
    out.stdout
}

#[test]
fn long_output_keeps_head_and_tail_and_the_marker_prints_the_rest() {
    let sb = Sandbox::new("cap");
    start_bash(&sb, "b");
    // 168,894 bytes of numbers: more than the default cap, less than the
    // transcript ring.
    let out = sb
        .run(&["step", "-s", "b", "--max-wait", "60000", "seq 1 30000"])
        .ok();
    out.assert_one_stderr_line(STATUS_LINE);
    assert!(
        out.stdout.len() < 33 * 1024,
        "{} bytes printed",
        out.stdout.len()
    );
    let (lines, bytes, args, head, tail) = marker(&out.stdout);
    assert!(head.starts_with("seq 1 30000\n1\n"), "{:?}", &head[..20]);
    assert!(tail.contains("30000\nready> "), "{tail:?}");
    // The marker's command prints exactly what was left out: with the head
    // and the tail, every number once, in order.
    let omitted = run_marker(&sb, &args);
    assert_eq!(omitted.lines().count(), lines);
    assert_eq!(omitted.len(), bytes);
    let whole = format!("{head}{omitted}{tail}");
    let numbers: Vec<&str> = whole
        .lines()
        .filter(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    let want: Vec<String> = (1..=30000).map(|n| n.to_string()).collect();
    assert_eq!(numbers, want);

    // `--head`/`--tail` choose lines; the marker's lines are the rest.
    // (The typed line does not hold the text waited for.)
    sb.run(&[
        "send",
        "-s",
        "b",
        "seq 1 500; echo END-$((1+1))",
        "--key",
        "Enter",
    ])
    .ok();
    let out = sb
        .run(&[
            "wait", "-s", "b", "--match", "END-2", "--head", "3", "--tail", "2",
        ])
        .ok();
    let (lines, _, args, head, tail) = marker(&out.stdout);
    assert_eq!(head.lines().count(), 3, "{head:?}");
    assert_eq!(tail.lines().count(), 2, "{tail:?}");
    let omitted = run_marker(&sb, &args);
    assert_eq!(omitted.lines().count(), lines);
    assert_eq!(format!("{head}{omitted}{tail}").lines().count(), lines + 5);
    assert!(omitted.contains("\n250\n"), "{omitted:?}");

    // `--max-bytes 0` lifts the cap; small output has no marker.
    let out = sb
        .run(&["step", "-s", "b", "--max-bytes", "0", "seq 1 30000"])
        .ok();
    assert!(!out.stdout.contains("left out here"));
    assert!(out.stdout.contains("\n15000\n"));
    let out = sb.run(&["step", "-s", "b", "echo small"]).ok();
    assert!(!out.stdout.contains("left out"), "{:?}", out.stdout);

    // Ranges are checked: past the output's end, or backwards, is an
    // error; any line numbers are fine.
    let far = u64::MAX.to_string();
    let out = sb
        .run(&[
            "read", "-s", "b", "--from", "0", "--to", "1", "--start", "1", "--end", &far,
        ])
        .ok();
    assert!(out.stdout.len() <= 1, "{out:?}");
    for args in [["--from", "0", "--to", &far], ["--from", "5", "--to", "4"]] {
        let mut all = vec!["read", "-s", "b"];
        all.extend(args);
        let out = sb.run(&all);
        assert_eq!(out.code(), 1, "{out:?}");
        assert!(out.stderr.contains("offset"), "{out:?}");
    }
}

#[test]
fn a_screen_read_is_capped_with_rows_to_read_back() {
    let sb = Sandbox::new("cap-read");
    start_bash(&sb, "b");
    sb.run(&["step", "-s", "b", "seq 101 130"]).ok();
    let out = sb.run(&["read", "-s", "b", "--max-bytes", "40"]).ok();
    let (lines, _, args, head, tail) = marker(&out.stdout);
    assert!(args.contains(&"--start".to_string()), "{args:?}");
    let omitted = run_marker(&sb, &args);
    assert_eq!(omitted.lines().count(), lines);
    let whole = sb.run(&["read", "-s", "b", "--max-bytes", "0"]).ok().stdout;
    assert_eq!(format!("{head}{omitted}{tail}"), whole);
}

#[test]
fn read_bottom_counts_lines_of_content() {
    let sb = Sandbox::new("bottom");
    start_bash(&sb, "b");
    sb.run(&["step", "-s", "b", "echo one; echo two"]).ok();
    // A 30-row terminal with four rows of content: the last two of them.
    let out = sb.run(&["read", "-s", "b", "--bottom", "2"]).ok();
    assert_eq!(out.stdout, "two\nready>\n");
    // The terminal's last rows, blank here, stay one option away.
    let out = sb.run(&["read", "-s", "b", "--bottom", "2", "--rows"]).ok();
    assert_eq!(out.stdout, "");
    let out = sb.run(&["read", "-s", "b", "--rows"]);
    assert_eq!(out.code(), 2, "{out:?}");
}

#[test]
fn changed_shows_only_the_rows_that_changed() {
    let sb = Sandbox::new("changed");
    let dir = sb.work("vim");
    std::fs::write(dir.join("notes.txt"), "first line\nsecond line\n").expect("write");
    sb.run_in(
        &dir,
        &[
            "start",
            "-s",
            "v",
            "--",
            "vim",
            "-u",
            "NONE",
            "-N",
            "-i",
            "NONE",
            "-n",
            "notes.txt",
        ],
    )
    .ok();
    // A whole screen shown (by `start`, `step` or `read`) is what the next
    // `--changed` compares with.
    common::eventually(std::time::Duration::from_secs(30), || {
        let out = sb.run(&["read", "-s", "v"]).ok().stdout;
        out.starts_with("first line\nsecond line\n~").then_some(())
    })
    .expect("vim's screen");
    // Nothing moved: no rows.
    let out = sb.run(&["read", "-s", "v", "--changed"]).ok().stdout;
    assert!(out.starts_with("[0 of 30 rows changed"), "{out:?}");
    // An edit: the edited row and the status row, nothing else.
    sb.run(&["send", "-s", "v", "A and more"]).ok();
    let out = common::eventually(std::time::Duration::from_secs(30), || {
        let out = sb.run(&["step", "-s", "v", "--changed"]).ok().stdout;
        out.contains("and more").then_some(out)
    })
    .expect("the edit");
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert!(rows.contains(&"1: first line and more"), "{out:?}");
    assert!(rows.iter().all(|r| re(r"^\d+: ").is_match(r)), "{out:?}");
    assert!(rows.iter().all(|r| !r.starts_with("2: ")), "{out:?}");
    assert!(rows.len() <= 3, "{out:?}");
    // Another file: most rows change, and the screen is shown whole.
    std::fs::write(
        dir.join("other.txt"),
        (1..=20).map(|i| format!("other {i}\n")).collect::<String>(),
    )
    .expect("write");
    sb.run(&["send", "-s", "v", "--key", "Escape"]).ok();
    // vim redraws before it waits for the next key: the step has it all.
    let out = sb
        .run(&["step", "-s", "v", "--changed", ":e! other.txt"])
        .ok()
        .stdout;
    assert!(out.starts_with("other 1\nother 2\n"), "{out:?}");
    sb.run(&["step", "-s", "v", ":q!"]).ok();
}
