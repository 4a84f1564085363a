//! Help, advice and completions, held to the verb table
//! (`ptybroker::cli::spec::VERBS`): every verb's `--help`, `ptybroker
//! --help`, the man page, the options each verb's parser accepts, the
//! did-you-mean of a mistyped verb or option, the shells' completion
//! scripts, and the guide for agents.

mod common;

use std::collections::BTreeSet;
use std::process::Command;

use common::{re, Out, Sandbox, BIN};
use ptybroker::cli::spec::{OptSpec, VerbSpec, COMMON, EXIT_CODE, VERBS};

fn all_options() -> Vec<OptSpec> {
    let mut all: Vec<OptSpec> = COMMON.to_vec();
    all.push(EXIT_CODE);
    for v in VERBS {
        all.extend(v.options.iter().copied());
    }
    all
}

/// A value that passes the option's own check, by its placeholder.
fn sample(value: &str) -> &'static str {
    match value {
        "NAME=VALUE" => "A=B",
        "K" => "Enter",
        "F" => "text",
        "NAME" | "TEXT" | "DIR" | "PATH" | "FILE" | "CMD" | "ADDR" | "T" => "x",
        _ => "5",
    }
}

#[test]
fn every_verb_prints_its_own_help_and_the_global_help_lists_every_verb() {
    let sb = Sandbox::new("help");
    let global = sb.run(&["--help"]).ok();
    for v in VERBS {
        assert!(
            re(&format!(r"(?m)^  {} ", regex_lite::escape(v.name))).is_match(&global.stdout),
            "ptybroker --help does not list {}",
            v.name
        );
        for flag in ["--help", "-h"] {
            let out = sb.run(&[v.name, flag]);
            assert_eq!(out.code(), 0, "{} {flag}: {out:?}", v.name);
            assert_eq!(out.stderr, "", "{} {flag}", v.name);
            let help = &out.stdout;
            assert!(
                help.starts_with(&format!("Usage: ptybroker {}\n", v.usage)),
                "{} {flag}: {help}",
                v.name
            );
            for o in v.options {
                assert!(
                    help.contains(&o.synopsis()),
                    "{} --help lacks {}",
                    v.name,
                    o.synopsis()
                );
            }
            assert!(help.contains(&format!("Example:\n  {}\n", v.example)));
        }
        let by_verb = sb.run(&["help", v.name]).ok();
        assert_eq!(by_verb.stdout, sb.run(&[v.name, "--help"]).stdout);
    }
}

/// Every option in the table is accepted by its verb's parser and every
/// other option known anywhere is refused, so the table is what the verbs
/// parse; and every option a parser names is somewhere in the table.
#[test]
fn the_table_is_what_each_verb_parses() {
    let sb = Sandbox::new("table");
    let mut candidates: Vec<(String, Option<&str>)> = Vec::new();
    for o in all_options() {
        let mut names = vec![format!("--{}", o.long)];
        names.extend(o.short.map(|c| format!("-{c}")));
        for n in names {
            if !candidates.iter().any(|(c, _)| *c == n) {
                candidates.push((n, o.value));
            }
        }
    }
    let bogus = "--zz-not-an-option";
    for v in VERBS {
        let accepted = v.accepted();
        for (name, value) in &candidates {
            let mut args = vec![v.name, name.as_str()];
            let known = accepted.iter().find(|o| {
                format!("--{}", o.long) == *name
                    || o.short.map(|c| format!("-{c}")) == Some(name.clone())
            });
            // A verb's own arity wins: `--rows` takes a value for start
            // and none for read.
            let arity = match known {
                Some(o) => o.value,
                None => *value,
            };
            if let Some(val) = arity {
                args.push(sample(val));
            }
            args.push(bogus);
            let out = sb.run(&args);
            assert_eq!(out.code(), 2, "{args:?}: {out:?}");
            let refused = format!("unexpected option {name}");
            if known.is_some() {
                assert!(
                    out.stderr.contains(&format!("unexpected option {bogus}")),
                    "{args:?}: the table lists {name} for {} but its parser said {:?}",
                    v.name,
                    out.stderr
                );
            } else {
                assert!(
                    out.stderr.contains(&refused),
                    "{args:?}: {} accepts {name}, which its table entry lacks: {:?}",
                    v.name,
                    out.stderr
                );
            }
        }
    }
    // Every option literal in the parsers is in the table.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/");
    let literal = re(r#""(--[a-z][a-z-]*|-[a-zA-Z])""#);
    let names: BTreeSet<String> = candidates.iter().map(|(n, _)| n.clone()).collect();
    for file in ["cli.rs", "cli/local.rs"] {
        let src = std::fs::read_to_string(format!("{dir}{file}")).expect("source");
        for c in literal.captures_iter(&src) {
            let name = &c[1];
            assert!(
                names.contains(name) || name == "--help" || name == "-h",
                "{file} parses {name}, which no entry of cli::spec::VERBS names"
            );
        }
    }
}

#[test]
fn the_man_page_documents_every_verb_and_option() {
    let man = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/man/ptybroker.1"))
        .expect("man page");
    let words: BTreeSet<&str> = man.split_whitespace().collect();
    let has = |macro_: &str, arg: &str| {
        man.lines().any(|l| {
            let mut w = l.split_whitespace();
            // `.It Cm start`, `.Fl -cols Ar n`, `.Op Fl -raw`, ...
            w.any(|x| x.trim_start_matches('.') == macro_) && l.split_whitespace().any(|x| x == arg)
        })
    };
    for v in VERBS {
        assert!(
            has("Cm", v.name),
            "the man page never names the verb {}",
            v.name
        );
        for o in v.options {
            assert!(
                has("Fl", &format!("-{}", o.long)),
                "the man page never names {}'s --{}",
                v.name,
                o.long
            );
            if let Some(c) = o.short {
                assert!(
                    has("Fl", &c.to_string()),
                    "the man page never names -{c} (--{})",
                    o.long
                );
            }
        }
    }
    assert!(words.contains("COMPLETIONS"), "no COMPLETIONS section");
}

fn usage_error(sb: &Sandbox, args: &[&str]) -> Out {
    let out = sb.run(args);
    assert_eq!(out.code(), 2, "{args:?}: {out:?}");
    out
}

#[test]
fn mistakes_get_the_nearest_verb_or_option_and_text_gets_double_dash() {
    let sb = Sandbox::new("advice");
    let out = usage_error(&sb, &["strat", "--", "true"]);
    assert!(out.stderr.contains("did you mean start?"), "{}", out.stderr);
    let out = usage_error(&sb, &["wait", "--macth", "READY"]);
    assert!(
        out.stderr.contains("did you mean --match?"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("(see ptybroker wait --help)"),
        "{}",
        out.stderr
    );
    let out = usage_error(&sb, &["start", "--replce", "--", "true"]);
    assert!(
        out.stderr.contains("did you mean --replace?"),
        "{}",
        out.stderr
    );
    let out = usage_error(&sb, &["serve", "--sockt", "x"]);
    assert!(
        out.stderr.contains("did you mean --socket?"),
        "{}",
        out.stderr
    );
    for text in ["-1", "-hello", "--frobnicate"] {
        let out = usage_error(&sb, &["step", text]);
        assert!(
            out.stderr.contains(&format!("ptybroker step -- {text}")),
            "{text}: {}",
            out.stderr
        );
        out.assert_one_stderr_line(r"^\[ptybroker: unexpected option .*\]$");
    }
    // A number that is not one is named with its option.
    for (args, want) in [
        (
            &["step", "--timeout", "abc", "hi"][..],
            "--timeout takes a whole number, got \"abc\"",
        ),
        (
            &["start", "--cols", "1e3", "--", "cat"][..],
            "--cols takes a whole number, got \"1e3\"",
        ),
        (
            &["read", "--top", "-2"][..],
            "--top takes a whole number, got \"-2\"",
        ),
    ] {
        let out = usage_error(&sb, args);
        out.assert_one_stderr_line(&format!(
            r"^\[ptybroker: {} \(see ptybroker \w+ --help\)\]$",
            regex_lite::escape(want)
        ));
    }
    // Nothing near: no guess.
    let out = usage_error(&sb, &["frobnicate"]);
    assert!(!out.stderr.contains("did you mean"), "{}", out.stderr);
    let out = usage_error(&sb, &["read", "--zzzzzz"]);
    assert!(!out.stderr.contains("did you mean"), "{}", out.stderr);
}

#[test]
fn a_busy_name_points_at_replace_and_help_after_double_dash_is_text() {
    let sb = Sandbox::new("busy");
    sb.run(&[
        "start",
        "-s",
        "b",
        "--env",
        "PS1=ready> ",
        "--",
        "bash",
        "--norc",
        "--noprofile",
    ])
    .ok();
    let again = sb.run(&["start", "-s", "b", "--", "true"]);
    assert_eq!(again.code(), 1, "{again:?}");
    assert!(
        again.stderr.contains("already running") && again.stderr.contains("--replace"),
        "{}",
        again.stderr
    );
    // `--help` after `--` is text for the program, not a request for help.
    let out = sb.run(&["step", "-s", "b", "--", "--help"]).ok();
    assert!(out.stdout.contains("--help"), "{out:?}");
    assert!(!out.stdout.contains("Usage: ptybroker"), "{out:?}");
    sb.run(&["kill-session", "-s", "b"]).ok();
}

#[test]
fn bash_completes_verbs_options_and_words() {
    let sb = Sandbox::new("bashcomp");
    let complete = |words: &str, cword: usize| -> String {
        let script = format!(
            "source <({BIN} completions bash) || exit 9; COMP_WORDS=({words}); COMP_CWORD={cword}; _ptybroker; echo \"${{COMPREPLY[@]}}\""
        );
        let out = sb.tool(&sb.root, "bash", &["--norc", "--noprofile", "-c", &script]);
        out.stdout.trim().to_string()
    };
    assert_eq!(complete("ptybroker st", 1), "start step status stop");
    assert_eq!(
        complete("ptybroker wait --ma", 2),
        "--max-wait --match --max-bytes"
    );
    assert_eq!(complete("ptybroker help ag", 2), "agents");
    assert_eq!(complete("ptybroker completions z", 2), "zsh");
    // After `--` the words are the program's.
    assert_eq!(complete("ptybroker start -- --co", 3), "");
}

/// `shell -n` on the generated script, where the shell is installed.
fn syntax_ok(shell: &str) {
    if Command::new(shell).arg("--version").output().is_err() {
        eprintln!("{shell} is not installed; skipped");
        return;
    }
    let sb = Sandbox::new(shell);
    let script = sb.root.join(format!("ptybroker.{shell}"));
    let text = sb.run(&["completions", shell]).ok().stdout;
    std::fs::write(&script, &text).expect("write script");
    let path = script.to_str().expect("utf-8 path");
    let out = sb.tool(&sb.root, shell, &["-n", path]);
    assert_eq!(out.stderr, "", "{shell} -n: {}", out.stderr);
    for v in VERBS {
        assert!(text.contains(v.name), "{shell}: no {}", v.name);
    }
}

#[test]
fn zsh_completion_is_valid_zsh() {
    syntax_ok("zsh");
}

#[test]
fn fish_completion_is_valid_fish() {
    syntax_ok("fish");
}

#[test]
fn completions_want_a_known_shell() {
    let sb = Sandbox::new("compshell");
    let out = usage_error(&sb, &["completions", "tcsh"]);
    assert!(out.stderr.contains("bash, zsh or fish"), "{}", out.stderr);
    usage_error(&sb, &["completions"]);
}

/// The guide names only options the table has, and the MCP server sends
/// the instructions written beside it.
#[test]
fn the_agents_guide_matches_the_table_and_the_mcp_instructions() {
    let sb = Sandbox::new("guide");
    let guide = sb.run(&["help", "agents"]).ok().stdout;
    assert_eq!(guide, ptybroker::guide::agents());
    let mut known: BTreeSet<String> = all_options()
        .iter()
        .map(|o| format!("--{}", o.long))
        .collect();
    known.insert("--help".into());
    for m in re(r"(?:^|[\s`(])(--[a-z][a-z-]*)").captures_iter(&guide) {
        assert!(
            known.contains(&m[1]),
            "the guide names {}, which no verb has",
            &m[1]
        );
    }
    for topic in [
        "--",
        "wait --match",
        "--replace",
        "Passwords",
        "Full-screen",
        "Caps",
    ] {
        assert!(guide.contains(topic), "the guide says nothing of {topic}");
    }
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let mut cmd = sb.command(&["mcp"]);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("spawn mcp");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        writeln!(stdin, "{init}").expect("write");
    }
    let out = child.wait_with_output().expect("mcp output");
    let first = String::from_utf8_lossy(&out.stdout);
    let reply: serde_json::Value =
        serde_json::from_str(first.lines().next().unwrap_or("")).expect("an answer");
    assert_eq!(
        reply["result"]["instructions"],
        ptybroker::guide::mcp_instructions()
    );
}

/// The verb table's own consistency: unique names, options unique within a
/// verb.
#[test]
fn verbs_and_their_options_are_unique() {
    let mut seen = BTreeSet::new();
    for v in VERBS {
        assert!(seen.insert(v.name), "{} twice", v.name);
        let mut opts = BTreeSet::new();
        for o in v.accepted() {
            assert!(opts.insert(o.long), "{}: --{} twice", v.name, o.long);
        }
        let _: &VerbSpec = v;
    }
}
