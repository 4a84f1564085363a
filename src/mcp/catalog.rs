//! The tool catalog of `ptybroker mcp` (seed 004): each tool's name, the
//! description a model reads, and the JSON Schemas of its arguments and of
//! its structured result. The handlers live in [`super::tools`], found by the
//! same names.

use serde_json::{json, Map, Value};

use crate::limits;

/// One tool as `tools/list` shows it.
pub struct ToolDef {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// Only reads state (the MCP `readOnlyHint`).
    pub read_only: bool,
    /// May end processes (the MCP `destructiveHint`).
    pub destructive: bool,
    pub input: fn() -> Value,
    pub output: fn() -> Value,
}

fn string(desc: &str) -> Value {
    json!({"type": "string", "description": desc})
}

fn integer(desc: &str, min: u64, max: u64) -> Value {
    json!({"type": "integer", "description": desc, "minimum": min, "maximum": max})
}

fn boolean(desc: &str) -> Value {
    json!({"type": "boolean", "description": desc})
}

fn nullable_int(desc: &str) -> Value {
    json!({"type": ["integer", "null"], "description": desc})
}

/// An object schema with these properties, of which `required` must be given;
/// no others are accepted.
fn object(props: &[(&str, Value)], required: &[&str]) -> Value {
    let mut p = Map::new();
    for (k, v) in props {
        p.insert((*k).to_string(), v.clone());
    }
    json!({
        "type": "object",
        "properties": p,
        "required": required,
        "additionalProperties": false,
    })
}

fn session_id() -> Value {
    string("Session id returned by terminal_start (see terminal_list).")
}

fn size() -> Value {
    object(
        &[
            ("cols", integer("Width in columns.", 2, 1000)),
            ("rows", integer("Height in rows.", 2, 500)),
        ],
        &["cols", "rows"],
    )
}

fn env() -> Value {
    json!({
        "type": "object",
        "description": "Extra environment variables, merged into the inherited environment.",
        "additionalProperties": {"type": "string"},
    })
}

fn max_chars() -> Value {
    integer(
        &format!(
            "Most characters of text returned (default {}); longer text keeps its head and tail around an explicit '[... N characters omitted ...]' marker.",
            limits::MCP_DEFAULT_CHARS
        ),
        1,
        limits::MCP_MAX_CHARS as u64,
    )
}

fn running() -> Value {
    boolean("Whether the session's program is still running.")
}

fn exit_code() -> Value {
    nullable_int("The program's exit code (128+N after signal N); null while it runs.")
}

fn max_wait_ms() -> u64 {
    limits::MCP_MAX_WAIT.as_millis() as u64
}

pub const TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "terminal_start",
        title: "Start a terminal session",
        description: "Start an interactive program (a shell by default) in a new pseudo-terminal and return its session id and first screen. Use this for anything that needs input, a persistent shell, a REPL or a full-screen program (git add -p, python3, vim, less); use terminal_run for one-shot commands.\n\nThe call returns once the program has settled (stopped producing output), with `ready` saying how: quiet, exited or timeout. Drive the session with terminal_send, then terminal_wait and terminal_screen or terminal_read; end it with terminal_close. Sessions end when the MCP server exits.",
        read_only: false,
        destructive: false,
        input: || {
            object(
                &[
                    ("shell", string("Program to run: a name found on PATH (bash, sh, zsh, fish, python3, ...) or an absolute path to any executable. Default: bash (sh where bash is missing).")),
                    ("cwd", string("Working directory. Default: the server's current directory.")),
                    ("env", env()),
                    ("cols", integer("Terminal width in columns (default 120).", 2, 1000)),
                    ("rows", integer("Terminal height in rows (default 30).", 2, 500)),
                    ("name", string("Session id to use (1-64 characters, no control characters). Default: t1, t2, ...")),
                    ("replace", boolean("Kill a running session of the same name and start afresh (default false).")),
                    ("args", json!({"type": "array", "items": {"type": "string"}, "description": "Extra arguments for the program, e.g. [\"--norc\"] or [\"-q\"]."})),
                ],
                &[],
            )
        },
        output: || {
            object(
                &[
                    ("session_id", string("Pass this to the other terminal_* tools.")),
                    ("shell", string("Absolute path of the program started.")),
                    ("cwd", string("Its working directory.")),
                    ("pid", integer("Its process id.", 1, i32::MAX as u64)),
                    ("size", size()),
                    ("ready", json!({"type": "string", "enum": ["quiet", "idle", "exited", "timeout"], "description": "How the start settled."})),
                    ("screen", string("The rendered screen.")),
                    ("running", running()),
                    ("exit_code", exit_code()),
                ],
                &["session_id", "shell", "cwd", "pid", "size", "ready", "screen", "running", "exit_code"],
            )
        },
    },
    ToolDef {
        name: "terminal_send",
        title: "Type text and keys",
        description: "Type text and/or named keys into a session, in that order, without waiting for an answer (follow with terminal_wait or terminal_screen).\n\nText is sent as typed and is NOT followed by Enter unless enter=true. Keys: enter, tab, backtab, esc, space, backspace, up, down, left, right, home, end, pageup, pagedown, insert, delete, f1..f12, ctrl-a..ctrl-z, ctrl-space, ctrl-break, and text:abc for literal text; modifiers combine (ctrl-shift-up, alt-x). Example: {\"session_id\": \"t1\", \"text\": \"git status\", \"enter\": true}.",
        read_only: false,
        destructive: false,
        input: || {
            object(
                &[
                    ("session_id", session_id()),
                    ("text", string("Literal text to type.")),
                    ("keys", json!({"type": "array", "items": {"type": "string"}, "description": "Named keys sent after text, e.g. [\"ctrl-c\"], [\"up\"], [\"tab\"], [\"f5\"], [\"text:abc\"]."})),
                    ("enter", boolean("Press Enter after the text and keys (default false).")),
                    ("repeat", integer("Send the whole sequence this many times (default 1).", 1, limits::MCP_MAX_REPEAT)),
                ],
                &["session_id"],
            )
        },
        output: || {
            object(
                &[
                    ("session_id", string("The session.")),
                    ("sent_chars", integer("Characters written to the terminal (a key counts as its escape sequence).", 0, u32::MAX as u64)),
                    ("running", running()),
                ],
                &["session_id", "sent_chars", "running"],
            )
        },
    },
    ToolDef {
        name: "terminal_read",
        title: "Read new output",
        description: "Read the raw output a session produced since the previous terminal_read, without duplicates: each call returns only what arrived after the last one. Pass the returned cursor as `since` to re-read from an earlier point.\n\nOutput holds escape sequences unless strip_ansi=true; for programs that redraw the screen (readline editing, TUIs) terminal_screen is the authoritative view. Offsets count characters. The last 1 MiB of output is kept; `dropped` says how many characters before `since` were lost.",
        read_only: true,
        destructive: false,
        input: || {
            object(
                &[
                    ("session_id", session_id()),
                    ("since", integer("Absolute character offset to read from (a cursor an earlier read returned, or characters counted from the start of the output). Default: where the last read stopped.", 0, u64::MAX >> 11)),
                    ("max_chars", max_chars()),
                    ("grep", string("Keep only lines matching this regular expression.")),
                    ("tail", integer("Keep only the last N lines (after grep).", 1, 1_000_000)),
                    ("strip_ansi", boolean("Remove escape sequences and carriage returns (default false).")),
                ],
                &["session_id"],
            )
        },
        output: || {
            object(
                &[
                    ("session_id", string("The session.")),
                    ("text", string("The output.")),
                    ("cursor", integer("Character offset just past this output: pass as since to resume here.", 0, u64::MAX >> 11)),
                    ("dropped", integer("Characters between since and the oldest output kept that were lost.", 0, u64::MAX >> 11)),
                    ("truncated", boolean("Text was cut to max_chars (head and tail kept).")),
                    ("running", running()),
                    ("exit_code", exit_code()),
                ],
                &["session_id", "text", "cursor", "dropped", "truncated", "running", "exit_code"],
            )
        },
    },
    ToolDef {
        name: "terminal_wait",
        title: "Wait for output, quiet or exit",
        description: "Block until the output since the last terminal_send matches a regex, the output goes quiet, the program exits, or the timeout passes; return why, and the rendered screen.\n\n`until` is a case-insensitive, multi-line regular expression (^ and $ match at line ends) over the output with escape sequences removed, e.g. \"\\\\$ $|>>> $|Done\". Set ignore_echo=true so that the echo of the line you just typed cannot match. Give until, quiet_ms or both. Waits are capped at 50 s; on reason=timeout simply wait again.",
        read_only: true,
        destructive: false,
        input: || {
            object(
                &[
                    ("session_id", session_id()),
                    ("until", string("Case-insensitive regex to wait for in the new output.")),
                    ("quiet_ms", integer("Return when no output arrived for this long (0 disables).", 0, max_wait_ms())),
                    ("timeout_ms", integer(&format!("Give up after this long (default {}, at most {}).", limits::MCP_DEFAULT_WAIT.as_millis(), max_wait_ms()), 1, u32::MAX as u64)),
                    ("ignore_echo", boolean("Do not let the echo of the last line typed match until (default false).")),
                ],
                &["session_id"],
            )
        },
        output: || {
            object(
                &[
                    ("session_id", string("The session.")),
                    ("reason", json!({"type": "string", "enum": ["matched", "quiet", "exited", "timeout"], "description": "Why the wait ended: quiet when no output came for quiet_ms or the program waits for input."})),
                    ("matched", json!({"type": ["string", "null"], "description": "The text until matched, or null."})),
                    ("running", running()),
                    ("exit_code", exit_code()),
                    ("screen", string("The rendered screen.")),
                    ("waited_ms", integer("How long the call waited.", 0, u32::MAX as u64)),
                ],
                &["session_id", "reason", "matched", "running", "exit_code", "screen", "waited_ms"],
            )
        },
    },
    ToolDef {
        name: "terminal_screen",
        title: "Show the screen",
        description: "Return the rendered terminal screen with the cursor position: cursor moves, erases and colours applied, exactly what a person would see, including the current prompt or full-screen program. The cursor is {x: column, y: row}, both counted from 0 at the top-left.",
        read_only: true,
        destructive: false,
        input: || object(&[("session_id", session_id()), ("max_chars", max_chars())], &["session_id"]),
        output: || {
            object(
                &[
                    ("session_id", string("The session.")),
                    ("text", string("The screen, one line per row, trailing blank rows left out.")),
                    ("cursor", object(&[("x", integer("Column, from 0.", 0, 999)), ("y", integer("Row, from 0.", 0, 499))], &["x", "y"])),
                    ("cols", integer("Width.", 2, 1000)),
                    ("rows", integer("Height.", 2, 500)),
                    ("running", running()),
                    ("exit_code", exit_code()),
                    ("truncated", boolean("Text was cut to max_chars.")),
                    ("title", string("The window title the program set.")),
                    ("alt_screen", boolean("A full-screen program is on the alternate screen.")),
                ],
                &["session_id", "text", "cursor", "cols", "rows", "running", "exit_code", "truncated", "title", "alt_screen"],
            )
        },
    },
    ToolDef {
        name: "terminal_interrupt",
        title: "Interrupt the running command",
        description: "Stop the command running in a session and keep the shell: types Ctrl+C, waits a short grace period, then kills any child of the shell still running, together with its own children. force=true skips the grace period. Returns the pids it killed.",
        read_only: false,
        destructive: true,
        input: || {
            object(
                &[
                    ("session_id", session_id()),
                    ("force", boolean("Kill the shell's children immediately after Ctrl+C (default false).")),
                ],
                &["session_id"],
            )
        },
        output: || {
            object(
                &[
                    ("session_id", string("The session.")),
                    ("sent", boolean("Ctrl+C was typed.")),
                    ("running", running()),
                    ("terminated", json!({"type": "array", "items": {"type": "integer"}, "description": "Pids killed after the grace period."})),
                ],
                &["session_id", "sent", "running", "terminated"],
            )
        },
    },
    ToolDef {
        name: "terminal_resize",
        title: "Resize the terminal",
        description: "Resize a session's terminal (the program is told with SIGWINCH); this changes wrapping and the layout of full-screen programs.",
        read_only: false,
        destructive: false,
        input: || {
            object(
                &[
                    ("session_id", session_id()),
                    ("cols", integer("New width, 2..1000.", 2, 1000)),
                    ("rows", integer("New height, 2..500.", 2, 500)),
                ],
                &["session_id", "cols", "rows"],
            )
        },
        output: || object(&[("session_id", string("The session.")), ("size", size())], &["session_id", "size"]),
    },
    ToolDef {
        name: "terminal_list",
        title: "List sessions",
        description: "List the sessions of this server with their state, pid, program, working directory, size, idle time and buffered output.",
        read_only: true,
        destructive: false,
        input: || object(&[], &[]),
        output: || {
            let session = object(
                &[
                    ("session_id", string("Its id.")),
                    ("state", json!({"type": "string", "enum": ["running", "exited"]})),
                    ("pid", integer("Process id.", 1, i32::MAX as u64)),
                    ("shell", string("The program.")),
                    ("cwd", string("Its starting directory.")),
                    ("size", size()),
                    ("idle_ms", integer("Since it last wrote output.", 0, u64::MAX >> 11)),
                    ("running_for_ms", integer("Since it started.", 0, u64::MAX >> 11)),
                    ("buffer_bytes", integer("Output held for terminal_read.", 0, u64::MAX >> 11)),
                    ("exit_code", exit_code()),
                ],
                &["session_id", "state", "pid", "shell", "cwd", "size", "idle_ms", "running_for_ms", "buffer_bytes", "exit_code"],
            );
            object(&[("sessions", json!({"type": "array", "items": session}))], &["sessions"])
        },
    },
    ToolDef {
        name: "terminal_close",
        title: "Close a session",
        description: "Close a session and free its processes: SIGTERM to everything in it (a clean-up handler runs), SIGHUP after 1 s to what is left, SIGKILL after 2 s more; force=true kills the whole process tree at once.",
        read_only: false,
        destructive: true,
        input: || {
            object(
                &[
                    ("session_id", session_id()),
                    ("force", boolean("SIGKILL at once instead of a graceful stop (default false).")),
                ],
                &["session_id"],
            )
        },
        output: || {
            object(
                &[
                    ("session_id", string("The session.")),
                    ("closed", boolean("Always true.")),
                    ("exit_code", exit_code()),
                ],
                &["session_id", "closed", "exit_code"],
            )
        },
    },
    ToolDef {
        name: "terminal_run",
        title: "Run a command to completion",
        description: "Run a one-shot command line to completion and return its output (stdout and stderr, escape sequences removed) and exit code. The command runs through `sh -c` (or `SHELL -c` with shell set) in a pseudo-terminal, with PAGER=cat; it is killed, with everything it started, after timeout_ms (default 30 s, at most 50 s).\n\nUse this for non-interactive commands; use terminal_start and terminal_send for programs that need input, a TUI, a persistent shell, or longer than 50 s.",
        read_only: false,
        destructive: false,
        input: || {
            object(
                &[
                    ("command", string("The command line, e.g. \"git log --oneline -5\".")),
                    ("shell", string("Shell to run it with (name on PATH or absolute path; it gets -c COMMAND). Default: sh.")),
                    ("cwd", string("Working directory. Default: the server's current directory.")),
                    ("env", env()),
                    ("timeout_ms", integer(&format!("Kill the command after this long (default {}, at most {}).", limits::MCP_DEFAULT_WAIT.as_millis(), max_wait_ms()), 1, u32::MAX as u64)),
                    ("max_chars", max_chars()),
                ],
                &["command"],
            )
        },
        output: || {
            object(
                &[
                    ("output", string("What the command wrote.")),
                    ("exit_code", nullable_int("Its exit code (128+N after signal N); null when it timed out.")),
                    ("timed_out", boolean("It was killed at timeout_ms.")),
                    ("duration_ms", integer("How long it ran.", 0, u32::MAX as u64)),
                    ("truncated", boolean("Output was cut to max_chars (head and tail kept) or its start was lost.")),
                ],
                &["output", "exit_code", "timed_out", "duration_ms", "truncated"],
            )
        },
    },
];

/// The `tools/list` entry of `t` as protocol version `version` knows it:
/// annotations from 2025-03-26, title and outputSchema from 2025-06-18.
pub fn listing(t: &ToolDef, version: &str) -> Value {
    let mut v = json!({
        "name": t.name,
        "description": t.description,
        "inputSchema": (t.input)(),
    });
    if version >= "2025-03-26" {
        v["annotations"] = json!({
            "title": t.title,
            "readOnlyHint": t.read_only,
            "destructiveHint": t.destructive,
            "openWorldHint": false,
        });
    }
    if version >= "2025-06-18" {
        v["title"] = json!(t.title);
        v["outputSchema"] = (t.output)();
    }
    v
}
