//! What an agent needs to know to drive programs through ptybroker, written
//! once per topic for both kinds of agent: one that runs the CLI through a
//! shell tool (`ptybroker help agents`) and one that calls the MCP tools
//! (the `instructions` the MCP server sends at initialization). Each topic
//! keeps both wordings side by side, so a change to what one front end
//! teaches is made beside the other's; a topic that only one front end has
//! (shell quoting) leaves the other empty.

/// One thing to know, as each front end says it.
pub struct Topic {
    /// A heading for the CLI guide; empty for the opening paragraph.
    pub title: &'static str,
    /// For an agent using the CLI through a shell.
    pub cli: &'static str,
    /// For an agent using the MCP tools (one or two sentences).
    pub mcp: &'static str,
}

/// The topics, in the order an agent meets them.
pub const TOPICS: &[Topic] = &[
    Topic {
        title: "",
        cli: "ptybroker keeps an interactive program (a shell, a REPL, git add -p, vim, an
installer) alive in a pseudo-terminal between your calls, and tells you when
it has answered: no sleeps, no polling.",
        mcp: "ptybroker keeps interactive programs alive in pseudo-terminals.",
    },
    Topic {
        title: "The loop",
        cli: "  ptybroker start -s NAME -- CMD [ARGS]  run CMD, print its first output
                                         once it waits for input
  ptybroker step -s NAME 'TEXT'          type TEXT and Enter, wait until the
                                         program waits again, print what is new
  ptybroker read -s NAME                 print the screen as it is now
  ptybroker stop -s NAME                 end it
Every call ends with one status line on stderr. \"still running, waiting for
input\" means it is your turn; \"still running\" alone means the program is
still working; \"exited: ...\" says how it ended. `step` prints each line
once: what the program wrote since your previous call, nothing older.",
        mcp: "terminal_start starts a shell or any program (shell: \"python3\", \"vim\"...). terminal_step types text and keys (enter=true presses Enter) and returns the answer once the program waits for input again: one call per command or answer, only the new output, long output cut to head and tail. terminal_wait waits for text that comes later (until a regex), for the program to wait for input (until_idle) or for quiet (quiet_ms); terminal_screen shows the rendered screen (full-screen programs), terminal_read the raw output.",
    },
    Topic {
        title: "One call per exchange",
        cli: "`step` types, waits and prints in one call: never follow it with `read` or a
sleep. `step` with no text waits again without typing (a program that was
still working). Keys go in the same call, in order, with no Enter added:
`step -s NAME --key Escape ':wq' --key Enter`, `step -s NAME --key Ctrl+C`
(`send` types the same without waiting). `wait -s NAME` blocks until the
program exits (a build) and prints its output; `wait -s NAME --match TEXT`
until output you have not read yet holds TEXT (`--regex RE`; `--screen`:
the screen instead), and prints that output.",
        mcp: "terminal_interrupt stops a command and keeps the shell; terminal_close ends a session.",
    },
    Topic {
        title: "Commands that need no input",
        cli: "Run them in your shell tool as usual; a session is for programs that ask.",
        mcp: "For one-shot non-interactive commands use terminal_run.",
    },
    Topic {
        title: "Caps",
        cli: "`start` and `step` wait at most 10 s (--max-wait MS), then print what came
so far with \"still running\": call `step` again to wait on. `wait` waits up
to an hour (--max-wait MS); a timeout exits 1. Output is cut to 32 KiB
(--max-bytes N, --head N, --tail N): whole lines from the head and the tail,
and one line saying how many were left out and the `read` that prints
exactly them. For full-screen programs, `step --changed` prints only the
rows that changed since the screen you last saw.",
        mcp: "No call blocks longer than about 55 s: on reason timeout, call again.",
    },
    Topic {
        title: "Full-screen programs",
        cli: "vim, less, top, htop, git rebase -i's editor: `step` prints the rendered
screen instead of the stream, and `read` shows it at any time (--top N,
--start A --end B, --history). Move with keys (`send --key PageDown`,
`--key ArrowUp`, `--key Escape`) and look with `step` (no text).",
        mcp: "",
    },
    Topic {
        title: "Pitfalls",
        cli: "- Quoting: TEXT is one argument, typed as one line. Single quotes keep
  your shell from expanding $ and backticks meant for the program.
- Text starting with -: put -- before it (`step -- -1`, `send -- -x`);
  `start` always takes -- before the command.
- Passwords: never on the command line (`ps`, your logs): pipe them in,
  `printf '%s' \"$PW\" | ptybroker step -s NAME --stdin`; a prompt that does
  not echo (sudo, ssh) prints nothing back, which is expected.
- Waiting for output: `wait --match TEXT` looks at output you have not read
  yet, so text already shown does not count; `--screen` looks at the screen,
  where the line you typed is too.
- Names: a session name in use is refused; `stop` it, or `start --replace`.
- Exit status: `--exit-code` (start, step, wait, stop) exits with the
  program's own status once it has exited.",
        mcp: "",
    },
];

/// `ptybroker help agents`.
pub fn agents() -> String {
    let mut s = String::new();
    for t in TOPICS {
        if !t.title.is_empty() {
            s.push('\n');
            s.push_str(t.title);
            s.push_str(":\n");
        }
        s.push_str(t.cli);
        s.push('\n');
    }
    s.push_str("\nEach verb's options: ptybroker VERB --help. All of it: man ptybroker.\n");
    s
}

/// The MCP server's `instructions`.
pub fn mcp_instructions() -> String {
    let parts: Vec<&str> = TOPICS
        .iter()
        .map(|t| t.mcp)
        .filter(|m| !m.is_empty())
        .collect();
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_topic_teaches_the_cli_and_mcp_lines_are_single_lines() {
        for t in TOPICS {
            assert!(!t.cli.trim().is_empty(), "{:?} has no CLI text", t.title);
            assert!(!t.mcp.contains('\n'), "{:?}: MCP text is one line", t.title);
        }
        assert!(mcp_instructions().starts_with("ptybroker keeps interactive programs"));
    }

    #[test]
    fn the_cli_guide_fits_80_columns() {
        for line in agents().lines() {
            assert!(line.chars().count() <= 80, "too wide: {line:?}");
        }
    }
}
