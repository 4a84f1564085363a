//! The documentation as a reader meets it: the man page renders at 80
//! columns without a warning, and says what the code does.

use std::process::Command;

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
