//! The verb table: every verb's name, function, usage line, options and one
//! example, in one place. `--help`, `ptybroker --help`, the shell
//! completions, the did-you-mean of a mistyped verb or option and the tests
//! that hold the man page to the code all read it (as tmux's `cmd_entry`
//! does). A verb still parses its own options where it is; adding an option
//! is one line in its entry here, and `tests/help.rs` fails until it is.

use super::{local, Failure};

/// A verb's function: parses its options from the parser (the verb's name
/// already taken) and does its work.
pub type Verb = fn(&mut lexopt::Parser) -> Result<(), Failure>;

/// One option of a verb.
#[derive(Clone, Copy, Debug)]
pub struct OptSpec {
    /// The long name without its dashes: `session`.
    pub long: &'static str,
    pub short: Option<char>,
    /// The value's placeholder (`NAME`), or `None` for a flag.
    pub value: Option<&'static str>,
    pub help: &'static str,
}

/// An option taking a value: `opt("cols", "C", "columns")`.
pub const fn opt(long: &'static str, value: &'static str, help: &'static str) -> OptSpec {
    OptSpec {
        long,
        short: None,
        value: Some(value),
        help,
    }
}

/// An option without a value.
pub const fn flag(long: &'static str, help: &'static str) -> OptSpec {
    OptSpec {
        long,
        short: None,
        value: None,
        help,
    }
}

impl OptSpec {
    /// The same option with a one-letter form too.
    pub const fn short(mut self, c: char) -> OptSpec {
        self.short = Some(c);
        self
    }

    /// `-s, --session NAME` as help and the man page write it.
    pub fn synopsis(&self) -> String {
        let mut s = match self.short {
            Some(c) => format!("-{c}, --{}", self.long),
            None => format!("    --{}", self.long),
        };
        if let Some(v) = self.value {
            s.push(' ');
            s.push_str(v);
        }
        s
    }
}

/// One verb.
pub struct VerbSpec {
    pub name: &'static str,
    pub run: Verb,
    /// What follows `ptybroker`: `step [options] [TEXT]`.
    pub usage: &'static str,
    /// One line for `ptybroker --help`.
    pub summary: &'static str,
    /// The options it takes and a user would look for, `-h` aside.
    pub options: &'static [OptSpec],
    /// A client verb: it also takes the [`COMMON`] options (where one does
    /// not apply, it is accepted and changes nothing).
    pub common: bool,
    /// It takes text or a command that may start with `-` (`--` before it).
    pub takes_text: bool,
    /// One command line, as typed.
    pub example: &'static str,
}

// The options client verbs share (`Common::take` parses them).
pub const SESSION: OptSpec =
    opt("session", "NAME", "the session to use (default: default)").short('s');
pub const TIMEOUT: OptSpec = opt(
    "timeout",
    "MS",
    "quiet window where the kernel cannot tell (default 500)",
)
.short('t');
pub const QUIET_ONLY: OptSpec = flag(
    "quiet-only",
    "settle by the quiet window alone (programs that poll while working)",
);
pub const MAX_WAIT: OptSpec = opt(
    "max-wait",
    "MS",
    "hard cap on the wait (start/step: 10000, wait: 3600000)",
);
pub const RAW: OptSpec = flag("raw", "keep escape sequences in the output");
pub const SCREEN: OptSpec = flag("screen", "print the rendered screen (not with --stream)");
pub const STREAM: OptSpec = flag("stream", "print the output stream (not with --screen)");
pub const JSON: OptSpec = flag("json", "print the call's result as one JSON object");
pub const EXIT_CODE: OptSpec = flag(
    "exit-code",
    "once the program has exited, exit with its status (128+N for signal N)",
);

// The output cap of start, step, wait and read (`CapOpts::take`).
pub const MAX_BYTES: OptSpec = opt(
    "max-bytes",
    "N",
    "print at most N bytes of output (default 32768, 0: all), head and tail",
);
pub const HEAD: OptSpec = opt("head", "N", "keep the first N lines of output");
pub const TAIL: OptSpec = opt("tail", "N", "keep the last N lines of output");
pub const CHANGED: OptSpec = flag(
    "changed",
    "only the rows that changed since the screen last shown (N: text)",
);

// Keys and hidden text (step, send).
pub const KEY: OptSpec = opt(
    "key",
    "K",
    "a named key: Enter, Escape, Ctrl+C, PageDown...",
)
.short('k');
pub const STDIN: OptSpec = flag(
    "stdin",
    "type standard input (a password), not a TEXT argument",
);

// Remote hosts (see `crate::remote`).
pub const HOST: OptSpec = opt(
    "host",
    "DEST",
    "act on DEST's daemon over ssh: [ssh://][user@]host[:port] or an ssh alias",
);
pub const VIA: OptSpec = opt(
    "via",
    "CMD",
    "act through CMD, which reaches a remote `ptybroker proxy` (docker exec -i ...)",
);
pub const REMOTE_BIN: OptSpec = opt(
    "remote-bin",
    "PATH",
    "ptybroker's path on the remote host (default: ptybroker on its PATH)",
);

/// Every option `Common::take` accepts.
pub const COMMON: &[OptSpec] = &[
    SESSION, TIMEOUT, QUIET_ONLY, MAX_WAIT, RAW, SCREEN, STREAM, JSON, HOST, VIA, REMOTE_BIN,
];

/// Every verb, in the order `ptybroker --help` lists them.
pub const VERBS: &[VerbSpec] = &[
    VerbSpec {
        name: "start",
        run: super::start,
        usage: "start [options] -- CMD [ARGS...]",
        summary: "start CMD in a new session, print its first output",
        options: &[
            SESSION,
            TIMEOUT,
            QUIET_ONLY,
            MAX_WAIT,
            RAW,
            SCREEN,
            STREAM,
            JSON,
            EXIT_CODE,
            opt("cols", "C", "terminal columns (default 100)"),
            opt("rows", "R", "terminal rows (default 30)"),
            opt("cwd", "DIR", "working directory (default: the caller's)"),
            opt("env", "NAME=VALUE", "set a variable (repeatable)").short('e'),
            flag("clean-env", "start from an empty environment"),
            opt("term", "T", "TERM for the program (default xterm-256color)"),
            flag("replace", "kill a running session of that name first"),
            MAX_BYTES,
            HEAD,
            TAIL,
        ],
        common: true,
        takes_text: true,
        example: "ptybroker start -s py -- python3 -q",
    },
    VerbSpec {
        name: "step",
        run: super::step,
        usage: "step [options] [--] [TEXT] [--key K]...",
        summary: "type TEXT and Enter (or text and keys), wait until it settles, print what is new",
        options: &[
            SESSION,
            TIMEOUT,
            QUIET_ONLY,
            MAX_WAIT,
            RAW,
            SCREEN,
            STREAM,
            JSON,
            EXIT_CODE,
            MAX_BYTES,
            HEAD,
            TAIL,
            CHANGED,
            KEY,
            flag(
                "no-enter",
                "type TEXT without Enter (also implied by --key)",
            ),
            STDIN,
        ],
        common: true,
        takes_text: true,
        example: "ptybroker step -s py 'print(2 + 2)'",
    },
    VerbSpec {
        name: "wait",
        run: super::wait,
        usage: "wait [options] [--match TEXT]",
        summary: "wait until the program exits or TEXT shows, print its output",
        options: &[
            SESSION,
            MAX_WAIT,
            opt("match", "TEXT", "wait until output not read yet holds TEXT").short('m'),
            opt("regex", "RE", "wait until output not read yet matches RE"),
            flag("screen", "match and print the rendered screen instead"),
            RAW,
            JSON,
            EXIT_CODE,
            MAX_BYTES,
            HEAD,
            TAIL,
        ],
        common: true,
        takes_text: false,
        example: "ptybroker wait -s build --max-wait 600000",
    },
    VerbSpec {
        name: "read",
        run: super::read,
        usage: "read [options]",
        summary: "print the rendered screen",
        options: &[
            SESSION,
            opt("top", "N", "the first N rows"),
            opt(
                "bottom",
                "N",
                "the last N lines of content (--rows: terminal rows)",
            ),
            flag("rows", "with --bottom: count the terminal's rows"),
            opt("start", "A", "rows A to B (1-based, with --end)"),
            opt("end", "B", "the last row of --start's range"),
            flag("history", "include the scrollback above the screen"),
            flag("ansi", "keep colours and attributes as SGR sequences"),
            opt(
                "from",
                "A",
                "the output between offsets A and B (as a marker says)",
            ),
            opt("to", "B", "the end of --from's range"),
            RAW,
            JSON,
            MAX_BYTES,
            HEAD,
            TAIL,
            CHANGED,
        ],
        common: true,
        takes_text: false,
        example: "ptybroker read -s vim --top 10",
    },
    VerbSpec {
        name: "send",
        run: super::send,
        usage: "send [options] [--] [TEXT] [--key K]...",
        summary: "type text and keys in the order given, without waiting",
        options: &[
            SESSION,
            KEY,
            opt("text", "TEXT", "text typed as is"),
            STDIN,
            opt("paste", "TEXT", "text as a bracketed paste"),
            flag("enter", "press Enter"),
            JSON,
        ],
        common: true,
        takes_text: true,
        example: "ptybroker send -s vim --key Escape ':wq' --enter",
    },
    VerbSpec {
        name: "status",
        run: super::status_verb,
        usage: "status [options]",
        summary: "print the status line, and why the program is (not) settled",
        options: &[SESSION, JSON],
        common: true,
        takes_text: false,
        example: "ptybroker status -s build",
    },
    VerbSpec {
        name: "list",
        run: super::list,
        usage: "list [options]",
        summary: "list the sessions",
        options: &[JSON],
        common: true,
        takes_text: false,
        example: "ptybroker list",
    },
    VerbSpec {
        name: "resize",
        run: super::resize,
        usage: "resize [options] --cols C --rows R",
        summary: "resize the terminal (the program gets SIGWINCH)",
        options: &[
            SESSION,
            opt("cols", "C", "columns (2-1000)"),
            opt("rows", "R", "rows (2-500)"),
        ],
        common: true,
        takes_text: false,
        example: "ptybroker resize -s vim --cols 120 --rows 40",
    },
    VerbSpec {
        name: "signal",
        run: super::signal,
        usage: "signal [options] SIG",
        summary: "send a signal (INT, QUIT, TSTP: the foreground job only)",
        options: &[SESSION],
        common: true,
        takes_text: false,
        example: "ptybroker signal -s build INT",
    },
    VerbSpec {
        name: "stop",
        run: super::stop,
        usage: "stop [options]",
        summary: "end a session gracefully (SIGTERM, SIGHUP, SIGKILL)",
        options: &[SESSION, JSON, EXIT_CODE],
        common: true,
        takes_text: false,
        example: "ptybroker stop -s py",
    },
    VerbSpec {
        name: "kill-session",
        run: super::kill_session,
        usage: "kill-session [options]",
        summary: "end a session at once (SIGKILL)",
        options: &[SESSION, JSON, EXIT_CODE],
        common: true,
        takes_text: false,
        example: "ptybroker kill-session -s py",
    },
    VerbSpec {
        name: "record",
        run: super::record,
        usage: "record [options] start FILE.cast | stop | marker LABEL",
        summary: "record the session to an asciicast v2 file",
        options: &[SESSION, JSON],
        common: true,
        takes_text: false,
        example: "ptybroker record -s py start py.cast",
    },
    VerbSpec {
        name: "render",
        run: local::render,
        usage: "render [options] FILE",
        summary: "replay a raw capture or an asciicast, print the final screen",
        options: &[
            opt("cols", "C", "columns (default: the recording's, or 80)"),
            opt("rows", "R", "rows (default: the recording's, or 24)"),
            opt("format", "F", "text, ansi, json or svg (default text)"),
        ],
        common: false,
        takes_text: false,
        example: "ptybroker render --format svg py.cast > py.svg",
    },
    VerbSpec {
        name: "serve",
        run: local::serve,
        usage: "serve --cmd CMD (--socket PATH | --port N) [options]",
        summary: "host one program and serve JSON-RPC for it on a socket",
        options: &[
            opt("cmd", "CMD", "the command line to run (by /bin/sh -c)"),
            opt("socket", "PATH", "listen on this Unix socket"),
            opt(
                "port",
                "N",
                "listen on this TCP port (loopback, with a token)",
            ),
            opt(
                "host",
                "ADDR",
                "the IP address to bind (default 127.0.0.1; or localhost)",
            ),
            opt("cols", "C", "terminal columns (default 100)"),
            opt("rows", "R", "terminal rows (default 30)"),
            opt("cwd", "DIR", "working directory"),
            opt("token-file", "FILE", "read the TCP token from FILE"),
            flag("insecure-no-token", "serve TCP without a token"),
        ],
        common: false,
        takes_text: false,
        example: "ptybroker serve --cmd bash --socket /tmp/bash.sock",
    },
    VerbSpec {
        name: "attach",
        run: super::attach::attach,
        usage: "attach [-s NAME] [--write] [--resize] [--detach-key K]",
        summary: "watch a session live from this terminal (--write: type into it)",
        options: &[
            SESSION,
            flag(
                "write",
                "type into the program (keys pass through, Ctrl+C too)",
            ),
            flag(
                "resize",
                "give the session this terminal's size (and follow it)",
            ),
            opt(
                "detach-key",
                "K",
                "the key that detaches when pressed twice (default Ctrl+\\)",
            ),
        ],
        common: true,
        takes_text: false,
        example: "ptybroker attach -s build",
    },
    VerbSpec {
        name: "daemon",
        run: local::daemon,
        usage: "daemon [--idle-exit SECS]",
        summary: "run the per-user daemon in the foreground (started on demand)",
        options: &[opt(
            "idle-exit",
            "SECS",
            "exit this long after the last session and client (default 30)",
        )],
        common: false,
        takes_text: false,
        example: "ptybroker daemon --idle-exit 0",
    },
    VerbSpec {
        name: "proxy",
        run: local::proxy,
        usage: "proxy",
        summary: "speak the daemon's JSON-RPC on stdin/stdout (what --host runs remotely)",
        options: &[],
        common: false,
        takes_text: false,
        example: "ssh box ptybroker proxy   # --host DEST does this for you",
    },
    VerbSpec {
        name: "driver",
        run: local::driver,
        usage: "driver [--host DEST [--remote-bin PATH]]",
        summary: "speak the JSON Lines driver protocol on stdin/stdout",
        options: &[HOST, REMOTE_BIN],
        common: false,
        takes_text: false,
        example: "ptybroker driver < requests.jsonl",
    },
    VerbSpec {
        name: "mcp",
        run: local::mcp,
        usage: "mcp [--host DEST [--remote-bin PATH]]",
        summary: "serve MCP (the terminal_* tools) on stdin/stdout",
        options: &[HOST, REMOTE_BIN],
        common: false,
        takes_text: false,
        example: "ptybroker mcp   # what an MCP client runs: command ptybroker, args [mcp]",
    },
    VerbSpec {
        name: "install",
        run: local::install,
        usage: "install --host DEST [--path P]",
        summary: "copy a ptybroker that runs on DEST there (opt-in; --host needs it)",
        options: &[
            opt(
                "host",
                "DEST",
                "where: [ssh://][user@]host[:port] or an ssh alias",
            ),
            opt("path", "P", "where there (default ~/.local/bin/ptybroker)"),
        ],
        common: false,
        takes_text: false,
        example: "ptybroker install --host box   # then: ptybroker start --host box -- python3",
    },
    VerbSpec {
        name: "completions",
        run: super::help::completions,
        usage: "completions bash|zsh|fish",
        summary: "print a shell completion script",
        options: &[],
        common: false,
        takes_text: false,
        example: "source <(ptybroker completions bash)",
    },
    VerbSpec {
        name: "help",
        run: super::help::help,
        usage: "help [VERB | agents]",
        summary: "this help, a verb's help, or the guide for agents",
        options: &[],
        common: false,
        takes_text: false,
        example: "ptybroker help agents",
    },
];

/// The verb named `name`.
pub fn find(name: &str) -> Option<&'static VerbSpec> {
    VERBS.iter().find(|v| v.name == name)
}

impl VerbSpec {
    /// Every option the verb accepts: its own and, for a client verb, the
    /// common ones it does not list.
    pub fn accepted(&self) -> Vec<OptSpec> {
        let mut all: Vec<OptSpec> = self.options.to_vec();
        if self.common {
            for c in COMMON {
                if !all.iter().any(|o| o.long == c.long) {
                    all.push(*c);
                }
            }
        }
        all
    }
}
