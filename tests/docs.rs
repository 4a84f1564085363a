//! The documentation as a reader meets it: the man page renders at 80
//! columns without a warning, and says what the code does; README's
//! transcripts are what real runs print.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use common::{re, Sandbox};
use serde_json::{json, Value};

const MAN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/man/ptybroker.1");

/// The man page rendered by groff at 80 columns, and its warnings; `None`
/// where groff is not installed (`.ci/run` installs it).
fn render() -> Option<(String, String)> {
    let out = Command::new("groff")
        .args([
            "-mandoc", "-Tutf8", "-ww", "-rLL=80n", "-P-c", "-P-b", "-P-u", MAN,
        ])
        .output()
        .ok()?;
    assert!(out.status.success(), "groff failed");
    Some((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

#[test]
fn the_man_page_renders_without_warnings() {
    let Some((_, warnings)) = render() else {
        eprintln!("groff is not installed; skipped");
        return;
    };
    assert_eq!(warnings, "", "groff warns");
}

#[test]
fn the_man_page_nests_results_as_the_methods_return_them() {
    let Some((page, _)) = render() else {
        eprintln!("groff is not installed; skipped");
        return;
    };
    let page = page.split_whitespace().collect::<Vec<_>>().join(" ");
    // pty/read: size, title and altScreen sit beside cursor, not in it.
    assert!(
        page.contains("{screen, cursor {row, col, visible}, size {cols, rows}, title, altScreen}"),
        "pty/read's result in the page is not its shape"
    );
}

#[test]
fn the_readme_names_the_mcp_meta_keys_in_full() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    for key in ["protocolVersion", "clientCapabilities"] {
        let full = format!("`io.modelcontextprotocol/{key}`");
        assert!(readme.contains(&full), "README lacks {full}");
        assert!(
            !readme.contains(&format!("`{key}`")),
            "README names {key} without its prefix"
        );
    }
}

/// README's "an agent stages one hunk with `git add -p`", call by call,
/// against a real bash (`--norc`, the example's prompt) in a repository
/// like the example's (a 40-line file, lines 2 and 38 changed): each string
/// an answer shows is what the call returned, `...` inside one standing for
/// lines left out (git's list of hunk keys may differ between versions).
#[test]
fn the_readme_git_add_p_example_is_what_a_real_run_answers() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let section = readme
        .split("### Example: an agent stages one hunk with `git add -p`")
        .nth(1)
        .expect("the example's section");
    let block = section.split("```").nth(1).expect("its transcript");

    let sb = Sandbox::new("readme-git");
    let repo = sb.work("project");
    let git = |args: &[&str]| {
        let out = sb.tool(&repo, "git", args);
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q"]);
    git(&["config", "user.email", "me@example.com"]);
    git(&["config", "user.name", "me"]);
    let lines: Vec<String> = (1..=40).map(|i| format!("line {i}\n")).collect();
    std::fs::write(repo.join("app.py"), lines.concat()).expect("write");
    git(&["add", "app.py"]);
    git(&["commit", "-qm", "forty lines"]);
    let mut changed = lines.clone();
    changed[1] = "line 2 changed\n".into();
    changed[37] = "line 38 changed\n".into();
    std::fs::write(repo.join("app.py"), changed.concat()).expect("write");

    let mut mcp = sb
        .command(&["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("ptybroker mcp");
    let mut to = mcp.stdin.take().expect("stdin");
    let mut from = BufReader::new(mcp.stdout.take().expect("stdout"));
    let mut id = 0;
    let mut call = |method: &str, params: Value| -> Value {
        id += 1;
        let req = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(to, "{req}").expect("write");
        loop {
            let mut line = String::new();
            assert!(from.read_line(&mut line).expect("read") > 0, "mcp ended");
            let v: Value = serde_json::from_str(&line).expect("JSON");
            if v["id"] == id {
                return v;
            }
        }
    };
    call(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "docs", "version": "1"}}),
    );

    let field = re(r#""(\w+)": "((?:[^"\\]|\\.)*)""#);
    let keys = re(r"\[[^\]\n]*\]");
    let mut answer = Value::Null;
    let mut checked = 0;
    for line in block.lines() {
        if let Some(rest) = line.strip_prefix("  -> ") {
            for c in field.captures_iter(rest) {
                let shown: String = serde_json::from_str(&format!("\"{}\"", &c[2]))
                    .unwrap_or_else(|e| panic!("{:?} in {line:?}: {e}", &c[2]));
                let real = answer[&c[1]]
                    .as_str()
                    .unwrap_or_else(|| panic!("no {} in {answer}", &c[1]));
                let (shown, real) = (
                    keys.replace_all(&shown, "[...]"),
                    keys.replace_all(real, "[...]"),
                );
                let parts: Vec<&str> = shown.split("\n...\n").collect();
                let fits = match parts.as_slice() {
                    [one] => real == *one,
                    [first, .., last] => real.starts_with(first) && real.ends_with(last),
                    [] => false,
                };
                assert!(
                    fits,
                    "README shows {} {shown:?}\nthe real answer: {real:?}",
                    &c[1]
                );
                checked += 1;
            }
            continue;
        }
        let Some((tool, args)) = line.split_once(' ') else {
            continue;
        };
        let mut args: Value =
            serde_json::from_str(args.trim()).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        if tool == "terminal_start" {
            let cwd = repo.to_string_lossy();
            args["cwd"] = json!(cwd);
            args["shell"] = json!("bash");
            args["args"] = json!(["--norc", "--noprofile"]);
            args["env"] = json!({"PS1": "me@host:/src/project$ ", "HOME": cwd,
                                 "GIT_CONFIG_NOSYSTEM": "1", "GIT_PAGER": "cat"});
        }
        let r = call("tools/call", json!({"name": tool, "arguments": args}));
        assert_ne!(r["result"]["isError"], true, "{line}: {r}");
        answer = r["result"]["structuredContent"].clone();
    }
    assert!(
        checked >= 8,
        "only {checked} strings checked: is the example there?"
    );
    drop(to);
    let _ = mcp.wait();
}
