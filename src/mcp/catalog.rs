//! The tool catalog of `ptybroker mcp` (seed 004): each tool's name, the
//! description a model reads, and the JSON Schemas of its arguments and of
//! its structured result. The handlers live in [`super::tools`], found by the
//! same names.

use crate::json::json;

use serde_json::{Map, Value};

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

/// An integer: the handler says the range when it refuses one.
fn integer(desc: &str) -> Value {
    json!({"type": "integer", "description": desc})
}

fn bounded(desc: &str, min: u64, max: u64) -> Value {
    json!({"type": "integer", "description": desc, "minimum": min, "maximum": max})
}

fn boolean(desc: &str) -> Value {
    json!({"type": "boolean", "description": desc})
}

/// An object schema with these properties, of which `required` must be
/// given; others are refused (by the handler, which names the ones it
/// takes: a misspelt optional argument is an error, not ignored), and the
/// schema says so.
fn object(props: &[(&str, Value)], required: &[&str]) -> Value {
    let mut p = Map::new();
    for (k, v) in props {
        p.insert((*k).to_string(), v.clone());
    }
    let mut v = json!({"type": "object", "properties": p, "additionalProperties": false});
    if !required.is_empty() {
        v["required"] = json!(required);
    }
    v
}

/// A result's schema: the fields every result has. Only their names: what
/// each holds is in the tool's description or plain from its name, and
/// `tools/list` sits in every conversation's context (tests/mcp.rs holds
/// it to 10 KB, and checks each result against its schema).
fn result(fields: &[&str]) -> Value {
    json!({"type": "object", "required": fields})
}

/// Every tool's first argument: its name says what it is.
fn session_id() -> Value {
    json!({"type": "string"})
}

fn env() -> Value {
    json!({"type": "object", "additionalProperties": {"type": "string"}})
}

fn max_chars() -> Value {
    integer(&format!(
        "Cap on the text (default {}), head and tail kept.",
        limits::MCP_DEFAULT_CHARS
    ))
}

fn keys(desc: &str) -> Value {
    json!({"type": "array", "items": {"type": "string"}, "description": desc})
}

fn enter() -> Value {
    boolean("Press Enter after text and keys (default false).")
}

fn timeout() -> Value {
    integer(&format!(
        "Default {}, at most {}.",
        limits::MCP_DEFAULT_WAIT.as_millis(),
        max_wait_ms()
    ))
}

fn max_wait_ms() -> u64 {
    limits::MCP_MAX_WAIT.as_millis() as u64
}

pub const TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "terminal_start",
        title: "Start a terminal session",
        description: "Start a program in a new terminal; returns its session id and first screen once it waits for input. `shell` is the program: bash by default, or python3, git, vim... (a name on PATH or an absolute path). For shells, REPLs, prompts and full-screen programs; terminal_run runs one-shot commands. ready: idle (waits for input), quiet (silent 0.5 s where the kernel cannot tell), exited or timeout (10 s).",
        read_only: false,
        destructive: false,
        input: || {
            object(
                &[
                    ("shell", string("The program, not only shells (default bash).")),
                    ("cwd", string("Default: the server's.")),
                    ("env", env()),
                    ("cols", bounded("Width (default 120).", 2, 1000)),
                    ("rows", bounded("Height (default 30).", 2, 500)),
                    ("name", string("Session id (default t1, t2, ...).")),
                    ("replace", boolean("Kill a session of that name first.")),
                    ("args", json!({"type": "array", "items": {"type": "string"}})),
                ],
                &[],
            )
        },
        output: || {
            result(&["session_id", "shell", "cwd", "pid", "size", "ready", "screen", "running", "exit_code"])
        },
    },
    ToolDef {
        name: "terminal_step",
        title: "Type and get the answer",
        description: "Type text and/or keys, wait until the program has answered and waits for input again, and return the new output as the terminal shows it (view=stream; a full-screen program's screen: view=screen). The usual way to drive a session, one call per command or answer; with nothing to type it only waits. reason: idle, quiet (silent for quiet_ms where the kernel cannot tell), exited, or timeout (call again to go on waiting). Long output keeps head and tail; terminal_read from `since` has all of it. E.g. {\"session_id\": \"t1\", \"text\": \"git add -p\", \"enter\": true}",
        read_only: false,
        destructive: false,
        input: || {
            object(
                &[
                    ("session_id", session_id()),
                    ("text", string("Literal text to type.")),
                    ("keys", keys("Named keys after text, as terminal_send's.")),
                    ("enter", enter()),
                    ("quiet_ms", integer(&format!("Fallback quiet window (default {}).", limits::DEFAULT_QUIET.as_millis()))),
                    ("timeout_ms", timeout()),
                    ("max_chars", max_chars()),
                ],
                &["session_id"],
            )
        },
        output: || {
            result(&["output", "view", "reason", "running", "exit_code", "truncated", "since"])
        },
    },
    ToolDef {
        name: "terminal_send",
        title: "Type text and keys",
        description: "Type text and/or named keys without waiting. terminal_step types and returns the answer in one call: use it unless nothing will answer (a long job, keys to a game loop). Enter only with enter=true.",
        read_only: false,
        destructive: false,
        input: || {
            object(
                &[
                    ("session_id", session_id()),
                    ("text", string("Literal text to type.")),
                    ("keys", keys("Named keys after text: enter, tab, backtab, esc, space, backspace, up, down, left, right, home, end, pageup, pagedown, insert, delete, f1..f12, ctrl-a..ctrl-z, ctrl-space, ctrl-break, text:abc; modifiers combine (ctrl-shift-up, alt-x).")),
                    ("enter", enter()),
                    ("repeat", bounded("Send it all this many times.", 1, limits::MCP_MAX_REPEAT)),
                ],
                &["session_id"],
            )
        },
        output: || {
            result(&["session_id", "sent_chars", "running"])
        },
    },
    ToolDef {
        name: "terminal_read",
        title: "Read new output",
        description: "Raw output since the last terminal_read or terminal_step (or from `since`, a returned cursor), never repeated. Offsets count characters; the last 1 MiB is kept (dropped: characters lost). terminal_screen shows what escape sequences drew.",
        read_only: true,
        destructive: false,
        input: || {
            object(
                &[
                    ("session_id", session_id()),
                    ("since", integer("Character offset (default: where the last read stopped).")),
                    ("to", integer("Character offset to stop at (default: the end).")),
                    ("max_chars", max_chars()),
                    ("grep", string("Keep only lines matching this regex.")),
                    ("tail", integer("Keep only the last N lines (after grep).")),
                    ("strip_ansi", boolean("Remove escape sequences and CRs.")),
                ],
                &["session_id"],
            )
        },
        output: || {
            result(&["session_id", "text", "cursor", "dropped", "truncated", "running", "exit_code"])
        },
    },
    ToolDef {
        name: "terminal_wait",
        title: "Wait for output, idle, quiet or exit",
        description: "Wait until the output since the last input matches `until` (a case-insensitive multi-line regex over text without escape sequences), the program waits for input (until_idle: reason idle), no output came for quiet_ms (even while it works), it exits, or timeout_ms passes (at most 50 s; wait again); the first ends it. Returns the screen. To type and see the answer use terminal_step; wait for text that comes later (a server's \"listening\", a background job).",
        read_only: true,
        destructive: false,
        input: || {
            object(
                &[
                    ("session_id", session_id()),
                    ("until", string("Regex over the new output.")),
                    ("until_idle", boolean("End when the program waits for input.")),
                    ("quiet_ms", integer("End after this long without output.")),
                    ("timeout_ms", timeout()),
                    ("ignore_echo", boolean("Skip the typed line's echo.")),
                ],
                &["session_id"],
            )
        },
        output: || {
            result(&["session_id", "reason", "matched", "running", "exit_code", "screen", "waited_ms"])
        },
    },
    ToolDef {
        name: "terminal_screen",
        title: "Show the screen",
        description: "The screen as a person sees it (moves, erases, colours applied): prompts, full-screen programs. cursor {x, y} counts from 0 at the top-left.",
        read_only: true,
        destructive: false,
        input: || object(&[("session_id", session_id()), ("max_chars", max_chars())], &["session_id"]),
        output: || {
            result(&["session_id", "text", "cursor", "cols", "rows", "running", "exit_code", "truncated", "title", "alt_screen"])
        },
    },
    ToolDef {
        name: "terminal_interrupt",
        title: "Interrupt the running command",
        description: "Stop the running command, keep the shell: Ctrl+C, then after a grace period kill each child of the shell still running, with its children. Returns the pids killed.",
        read_only: false,
        destructive: true,
        input: || object(&[("session_id", session_id()), ("force", boolean("No grace period."))], &["session_id"]),
        output: || {
            result(&["session_id", "sent", "running", "terminated"])
        },
    },
    ToolDef {
        name: "terminal_resize",
        title: "Resize the terminal",
        description: "Resize a session's terminal; the program is told (SIGWINCH).",
        read_only: false,
        destructive: false,
        input: || {
            object(
                &[
                    ("session_id", session_id()),
                    ("cols", bounded("Width.", 2, 1000)),
                    ("rows", bounded("Height.", 2, 500)),
                ],
                &["session_id", "cols", "rows"],
            )
        },
        output: || result(&["session_id", "size"]),
    },
    ToolDef {
        name: "terminal_list",
        title: "List sessions",
        description: "The sessions: state, pid, program, cwd, size, idle time, buffered output.",
        read_only: true,
        destructive: false,
        input: || object(&[], &[]),
        output: || result(&["sessions"]),
    },
    ToolDef {
        name: "terminal_close",
        title: "Close a session",
        description: "End a session: SIGTERM to all in it, SIGHUP 1 s later, SIGKILL 2 s after that.",
        read_only: false,
        destructive: true,
        input: || object(&[("session_id", session_id()), ("force", boolean("SIGKILL at once."))], &["session_id"]),
        output: || {
            result(&["session_id", "closed", "exit_code"])
        },
    },
    ToolDef {
        name: "terminal_run",
        title: "Run a command to completion",
        description: "Run a non-interactive command line to completion (sh -c in a terminal, PAGER=cat); returns its output without escape sequences and exit code. After timeout_ms it is killed with all it started (exit_code null). Interactive programs and jobs over 50 s belong in a session.",
        read_only: false,
        destructive: false,
        input: || {
            object(
                &[
                    ("command", string("E.g. \"make test\".")),
                    ("shell", string("Runs it with -c (default sh).")),
                    ("cwd", string("Default: the server's.")),
                    ("env", env()),
                    ("timeout_ms", timeout()),
                    ("max_chars", max_chars()),
                ],
                &["command"],
            )
        },
        output: || {
            result(&["output", "exit_code", "timed_out", "duration_ms", "truncated"])
        },
    },
];

/// The `tools/list` entry of `t` as protocol version `version` knows it:
/// annotations from 2025-03-26, title and outputSchema from 2025-06-18.
/// `tools/list` is in every conversation's context: tests/mcp.rs holds it
/// to 10 KB.
pub fn listing(t: &ToolDef, version: &str) -> Value {
    let mut v = json!({
        "name": t.name,
        "description": t.description,
        "inputSchema": (t.input)(),
    });
    if version >= "2025-03-26" {
        // Hints left out are the defaults: not read-only; destructive
        // means nothing for a tool that is.
        let mut a = json!({"title": t.title, "openWorldHint": false});
        if t.read_only {
            a["readOnlyHint"] = json!(true);
        } else {
            a["destructiveHint"] = json!(t.destructive);
        }
        v["annotations"] = a;
    }
    if version >= "2025-06-18" {
        // The title moved to the tool itself; said once.
        if let Some(a) = v["annotations"].as_object_mut() {
            a.remove("title");
        }
        v["title"] = json!(t.title);
        v["outputSchema"] = (t.output)();
    }
    v
}
