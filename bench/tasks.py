"""The agent task set of issue 15 as a bench section (`bench/bench.py --only
tasks`): ten real tasks, each done three ways, as an agent would do them:

- CLI: `ptybroker` through a shell, one process per call;
- MCP: a client of `ptybroker mcp` over stdin/stdout;
- tmux: send-keys, then capture-pane every 100 ms until the expected text
  shows (a careful agent: no guessed sleeps, no early reads).

Each call is counted with what the agent reads from it (CLI: stdout and
stderr; MCP: the text content blocks of the tool results; tmux: everything
the tmux commands print, i.e. capture-pane's screens). An early return is an
interaction whose answer was not in what its call(s) printed (the program had
not finished it); the driver then recovers as an agent would (another settle,
a wait) and every recovery call is counted too. Debris lines are stale lines
of a full-screen program (vim's `~` rows and mode line, a pager's page, top's
frame, escape fragments) in what a call printed after the program left the
screen. After each task the bench checks the end state the way a user would
(the staged diff, the file, the commit order, the answer read).

The drivers use today's forms and, when the binary has them, the one-call
forms of issue 15 (`step --key`/`--no-enter`, `--stdin`, `--tail`,
`--changed`, MCP `terminal_step`): each is detected at start-up (the verb's
`--help`, or whether the option is accepted), so one bench measures before
and after.

`--task KEY,...` (with `--only tasks`) runs some tasks alone (addp, rebase,
python, vim, less, installer, build, bg, seq, top); TB_DEBUG=1 prints what a
driver read when an answer never came.
"""
import hashlib
import json
import os
import re
import select
import shlex
import subprocess
import sys
import time

COLS, ROWS = 100, 30
SECRET = "s3cret-Pa55word"
POLL = 0.1
# An agent reads a call's answer before it makes the next call: a recovery
# call comes this long after the call whose answer was missing (not counted
# as a call; it is in the wall time).
AGENT_PAUSE = 0.3
# How long an agent watches a line it typed before it decides the program is
# busy for good (the REPL's endless loop).
WATCH_MS = 1000

# Today's totals per driver (calls, bytes read), measured by this section (two
# runs, 37/13963-14031 and 51/17774-17812) on the binary of ba2ad4d, before
# issue 15's forms; the issue's targets are relative to them.
BASELINE = {"CLI": (37, 14000), "MCP": (51, 17800)}

# Lines of full-screen programs that are stale once the program has left the
# screen, whatever the program: vim's empty rows, mode and write messages,
# fragments of escape sequences.
COMMON_DEBRIS = [
    r"^\s*~\s*$",
    r"-- (INSERT|VISUAL|REPLACE)",
    r"\d+L, \d+B",
    r"\x1b",
    r"\bESC",
    r"\[\[",
    r"\d~~",
    r"\[\?\d+[hl]",
]


class Op:
    """One interaction. kind: start, line (text + Enter), keys (text and keys,
    no Enter), long (text + Enter, watched for WATCH_MS: a job that does not
    end), waitline (wait for a background job's line), big (a line with a
    flood of output).

    expect: regex (re.M) or predicate the answer must satisfy; until: the
    regex an MCP client (and nobody else) waits for; exits: the program ends
    in this interaction; left: regexes of the program's stale lines (the
    interaction leaves a full-screen program); fs: inside a full-screen
    program."""

    def __init__(self, kind, text="", keys=(), expect=None, until=None, exits=False, left=None, fs=False,
                 secret=False, argv=None, cwd=None, shell=False, run=False, recover=None):
        self.kind, self.text, self.keys, self.expect, self.until = kind, text, list(keys), expect, until
        self.exits, self.left, self.fs, self.secret = exits, left, fs, secret
        self.argv, self.cwd, self.shell, self.run, self.recover = argv, cwd, shell, run, recover


def met(expect, text):
    if expect is None:
        return True
    if callable(expect):
        return bool(expect(text))
    return re.search(expect, text, re.M) is not None


def debris_lines(text, extra):
    pats = [re.compile(p) for p in COMMON_DEBRIS + list(extra or [])]
    return sum(1 for line in text.splitlines() if any(p.search(line) for p in pats))


class Tally:
    def __init__(self):
        self.calls = self.bytes = self.early = self.debris = self.status = 0
        self.wall = 0.0
        self.failed = []
        self.ok = None
        self.note = ""


# ---- drivers --------------------------------------------------------------------

class Driver:
    name = ""

    def begin(self, task, t):
        self.task, self.t, self.exited = task, t, False

    def do(self, op):
        """The driver's form of the interaction, then recovery while the answer
        is not there (each recovery is a call an agent pays for)."""
        seen = self.first(op)
        tries = 0
        while not self.done(op, seen) and tries < 3:
            if tries == 0:
                self.t.early += 1
            time.sleep(AGENT_PAUSE)
            seen += "\n" + self.again(op)
            tries += 1
        if not self.done(op, seen):
            self.t.failed.append(f"{op.kind} {op.text or op.keys or op.argv}: answer not read")
            if os.environ.get("TB_DEBUG"):
                print(f"--- {self.name} {self.task} {op.kind} {op.text!r}: read\n{seen}\n---", flush=True)
        if op.left is not None:
            self.t.debris += debris_lines(self.left_text(seen), op.left)
        return seen

    def left_text(self, seen):
        return seen

    def done(self, op, seen):
        return met(op.expect, seen) and (not op.exits or self.exited)


class Cli(Driver):
    name = "CLI"

    def __init__(self, binary, env, feats):
        self.bin, self.env, self.f = binary, env, feats

    def call(self, *args, stdin=None):
        r = subprocess.run([self.bin, *args], env=self.env, input=stdin, capture_output=True, timeout=120)
        self.t.calls += 1
        self.t.bytes += len(r.stdout) + len(r.stderr)
        err = r.stderr.decode(errors="replace")
        status = [l for l in err.splitlines() if l.startswith("[ptybroker: ") and "|" in l]
        if status:
            self.exited = re.search(r"\bexited\b", status[-1]) is not None
        self.t.status += sum(len(l.encode()) + 1 for l in status)
        if r.returncode == 2:
            self.t.failed.append(f"`{shlex.join(args)}`: {err.strip()}")
        return r.stdout.decode(errors="replace")

    def s(self):
        return ["--session", self.task]

    def keys_args(self, op):
        out = [op.text] if op.text else []
        for k in op.keys:
            out += ["--key", {"ctrl-c": "Ctrl+C", "esc": "Escape"}[k]]
        return out

    def first(self, op):
        s = self.s()
        changed = ["--changed"] if op.fs and self.f.get("changed") else []
        if op.kind == "start":
            return self.call("start", *s, "--cols", str(COLS), "--rows", str(ROWS), "--cwd", op.cwd, "--", *op.argv)
        if op.kind == "line":
            if op.secret and self.f.get("stdin"):
                return self.call("step", *s, "--stdin", stdin=op.text.encode())
            return self.call("step", *s, *changed, op.text)
        if op.kind == "keys":
            one_call = (op.keys and self.f.get("step_key") and (not op.text or self.f.get("no_enter"))) or (
                not op.keys and self.f.get("no_enter"))
            if one_call:
                no_enter = ["--no-enter"] if self.f.get("no_enter") else []
                return self.call("step", *s, *changed, *no_enter, *self.keys_args(op))
            out = self.call("send", *s, *self.keys_args(op))
            if op.exits:
                return out + self.call("wait", *s, "--max-wait", "15000")
            return out + self.call("step", *s, *changed)
        if op.kind == "long":
            return self.call("step", *s, "--max-wait", str(WATCH_MS), op.text)
        if op.kind == "waitline":
            return self.call("wait", *s, "--match", op.text, "--max-wait", "15000")
        if op.kind == "big":
            view = ["--tail", "10"] if self.f.get("tail") else ["--screen"]
            return self.call("step", *s, *view, op.text)
        raise ValueError(op.kind)

    def again(self, op):
        if op.recover:
            return self.call("step", *self.s(), op.recover)
        if op.exits:
            return self.call("wait", *self.s(), "--max-wait", "15000")
        return self.call("step", *self.s())

    def end(self):
        if not self.exited:
            self.call("stop", *self.s())


class Mcp(Driver):
    name = "MCP"

    def __init__(self, binary, env, cwd):
        self.p = subprocess.Popen([binary, "mcp"], env=env, cwd=cwd, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, bufsize=0)
        self.buf = b""
        self.id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "ptybroker-bench", "version": "1"}})
        self.notify("notifications/initialized")
        listing = self.request("tools/list", {})
        self.list_bytes = len(json.dumps(listing))
        tools = {t["name"]: t for t in listing.get("result", {}).get("tools", [])}
        self.step = tools.get("terminal_step")
        self.step_props = set((self.step or {}).get("inputSchema", {}).get("properties", {}))

    def send_msg(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())

    def notify(self, method):
        self.send_msg({"jsonrpc": "2.0", "method": method})

    def request(self, method, params):
        self.id += 1
        self.send_msg({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        deadline = time.time() + 90
        while True:
            while b"\n" not in self.buf:
                left = deadline - time.time()
                if left <= 0 or not select.select([self.p.stdout], [], [], left)[0]:
                    raise RuntimeError(f"ptybroker mcp did not answer {method}")
                chunk = os.read(self.p.stdout.fileno(), 1 << 20)
                if not chunk:
                    raise RuntimeError("ptybroker mcp closed its output")
                self.buf += chunk
            line, self.buf = self.buf.split(b"\n", 1)
            msg = json.loads(line)
            if msg.get("id") == self.id:
                return msg

    def tool(self, name, args):
        r = self.request("tools/call", {"name": name, "arguments": args})
        self.t.calls += 1
        texts = [c.get("text", "") for c in r.get("result", {}).get("content", []) if c.get("type") == "text"]
        self.t.bytes += sum(len(x.encode()) for x in texts)
        out = []
        for x in texts:
            try:
                v = json.loads(x)
            except ValueError:
                out.append(x)
                continue
            if isinstance(v, dict):
                if v.get("running") is False:
                    self.exited = True
                out += [s for s in v.values() if isinstance(s, str)]
                if v.get("running") is False:
                    out.append("[exited]")
            else:
                out.append(x)
        return "\n".join(out)

    def sid(self):
        return {"session_id": self.task}

    def wait(self, op, after_send=True):
        args = dict(self.sid(), timeout_ms=15000)
        if op.until:
            args.update(until=op.until, ignore_echo=after_send)
        else:
            args.update(quiet_ms=500)
        return self.tool("terminal_wait", args)

    def step_tool(self, op, enter):
        args = dict(self.sid())
        if op.text:
            args["text"] = op.text
        if op.keys:
            args["keys"] = op.keys
        if "enter" in self.step_props:
            args["enter"] = enter
        return self.tool("terminal_step", args)

    def first(self, op):
        if op.kind == "start":
            if op.run:
                self.exited = True  # no session is left behind
                return self.tool("terminal_run", {"command": shlex.join(op.argv), "cwd": op.cwd})
            return self.tool("terminal_start", {"name": self.task, "shell": op.argv[0], "args": op.argv[1:],
                                                "cwd": op.cwd, "cols": COLS, "rows": ROWS})
        if op.kind in ("line", "big", "keys"):
            enter = op.kind != "keys"
            if self.step:
                return self.step_tool(op, enter)
            args = dict(self.sid(), enter=enter)
            if op.text:
                args["text"] = op.text
            if op.keys:
                args["keys"] = op.keys
            return self.tool("terminal_send", args) + "\n" + self.wait(op)
        if op.kind == "long":
            limit = next((k for k in ("timeout_ms", "max_wait_ms") if k in self.step_props), None)
            if self.step and limit:
                return self.tool("terminal_step", dict(self.sid(), text=op.text, enter=True, **{limit: WATCH_MS}))
            return self.tool("terminal_send", dict(self.sid(), text=op.text, enter=True)) + "\n" + self.tool(
                "terminal_wait", dict(self.sid(), until=op.until, ignore_echo=True, timeout_ms=WATCH_MS))
        if op.kind == "waitline":
            return self.wait(op)
        raise ValueError(op.kind)

    def again(self, op):
        return self.wait(op, after_send=False)

    def end(self):
        if not self.exited:
            self.tool("terminal_close", self.sid())

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


class Tmux(Driver):
    name = "tmux"

    def __init__(self, env, sock):
        self.env, self.sock = env, sock

    def call(self, *args):
        r = subprocess.run(["tmux", "-S", self.sock, *args], env=self.env, capture_output=True, timeout=60)
        self.t.calls += 1
        self.t.bytes += len(r.stdout) + len(r.stderr)
        return r.stdout.decode(errors="replace")

    def capture(self):
        return self.call("capture-pane", "-p", "-t", self.task)

    @staticmethod
    def prompt(cap):
        lines = [l for l in cap.rstrip().splitlines()]
        return bool(lines) and re.fullmatch(r"\$\s*", lines[-1]) is not None

    def poll(self, cond, before, timeout=15.0):
        t0 = time.time()
        while True:
            time.sleep(POLL)
            cap = self.capture()
            if cap != before and cond(cap):
                return cap
            if time.time() - t0 > timeout:
                return cap

    def until(self, op, typed):
        def region(cap):
            # What came after the typed line, when it is long enough to find.
            if typed and len(typed) >= 4 and typed in cap:
                return cap.rsplit(typed, 1)[1]
            return cap

        def cond(cap):
            if op.exits:
                self.exited = self.prompt(cap)
                return self.exited and met(op.expect, region(cap))
            return met(op.expect, region(cap))
        return cond

    def first(self, op):
        before = getattr(self, "last", None)
        if op.kind == "start":
            self.call("new-session", "-d", "-s", self.task, "-x", str(COLS), "-y", str(ROWS), "-c", op.cwd,
                      "-e", "PS1=$ ", *BASH)
            cap = self.poll(self.prompt, None)
            if op.shell:
                self.last = cap
                return cap
            typed = shlex.join(op.argv)
            self.call("send-keys", "-t", self.task, typed, "Enter")
            before = cap
        elif op.kind == "long":
            self.call("send-keys", "-t", self.task, op.text, "Enter")
            self.last = self.poll(lambda cap: met(op.until, cap.rsplit(op.text, 1)[-1]), before,
                                  timeout=WATCH_MS / 1000)
            return self.last
        elif op.kind in ("line", "big"):
            typed = op.text
            self.call("send-keys", "-t", self.task, typed, "Enter")
        elif op.kind == "keys":
            typed = None
            keys = [{"ctrl-c": "C-c", "esc": "Escape"}[k] for k in op.keys]
            self.call("send-keys", "-t", self.task, *([op.text] if op.text else []), *keys)
        elif op.kind == "waitline":
            typed = None
            before = None
        else:
            raise ValueError(op.kind)
        self.last = self.poll(self.until(op, typed), before)
        return self.last

    def again(self, op):
        self.last = self.poll(self.until(op, None), None)
        return self.last

    def left_text(self, seen):
        # Only the screen that showed the program gone is read after it left.
        return self.last

    def end(self):
        self.call("kill-session", "-t", self.task)


# ---- the tasks ------------------------------------------------------------------

def git(cwd, env, *args):
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def git_out(cwd, env, *args):
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def repo(d, env):
    os.makedirs(d)
    git(d, env, "init", "-q", "-b", "main")
    return d


REBASE_DEBRIS = [r"^pick [0-9a-f]+ ", r"^# (Rebase|Commands|p, pick|These lines|If you remove|However)",
                 r"git-rebase-todo"]
VIM_DEBRIS = [r"^(alpha|beta|gamma) line\s*$", r'"notes\.txt"']
LESS_DEBRIS = [r"^L\d{4} the quick", r"^big\.txt\s*$", r"\(END\)"]
TOP_DEBRIS = [r"^top - \d", r"^Tasks:", r"^%Cpu", r"^MiB (Mem|Swap)", r"^\s*PID\s+USER",
              r"^\s*\d+\s+\S+\s+(\d+|rt)\s+-?\d+\s+\d"]
BASH = ["bash", "--norc", "--noprofile"]


def t_add_p(d, env, progs):
    r = repo(d, env)
    lines = [f"line {i}" for i in range(1, 21)]
    with open(os.path.join(r, "app.py"), "w") as f:
        f.write("\n".join(lines) + "\n")
    git(r, env, "add", "app.py")
    git(r, env, "commit", "-q", "-m", "base")
    lines[1], lines[18] = "line 2 changed", "line 19 changed"
    with open(os.path.join(r, "app.py"), "w") as f:
        f.write("\n".join(lines) + "\n")
    ops = [
        Op("start", argv=["git", "add", "-p"], cwd=r, expect=r"\(1/2\) Stage this hunk"),
        Op("line", "y", expect=r"\(2/2\) Stage this hunk", until=r"\(2/2\) Stage this hunk.*\?"),
        Op("line", "n", exits=True),
    ]

    def verify(seen):
        cached, rest = git_out(r, env, "diff", "--cached"), git_out(r, env, "diff")
        ok = "+line 2 changed" in cached and "line 19" not in cached and "+line 19 changed" in rest
        return ok, "first hunk staged, second not" if ok else f"staged:\n{cached}"
    return ops, verify


def t_rebase(d, env, progs):
    r = repo(d, env)
    for name in ("base", "b", "c"):
        with open(os.path.join(r, f"{name}.txt"), "w") as f:
            f.write(name + "\n")
        git(r, env, "add", f"{name}.txt")
        git(r, env, "commit", "-q", "-m", "base" if name == "base" else f"add {name}")
    ops = [
        Op("start", argv=["git", "rebase", "-i", "HEAD~2"], cwd=r, expect=r"pick \w+ add b\s*\n\s*(\d+\D*)?pick \w+ add c"),
        Op("keys", "ddp", fs=True, expect=r"pick \w+ add c\s*\n\s*(\d+\D*)?pick \w+ add b"),
        Op("line", ":wq", expect=r"Successfully rebased", until=r"Successfully rebased", left=REBASE_DEBRIS),
    ]

    def verify(seen):
        log = git_out(r, env, "log", "--format=%s").split("\n")[:3]
        ok = log == ["add b", "add c", "base"] and not os.path.exists(os.path.join(r, ".git", "rebase-merge"))
        return ok, "commits reordered" if ok else f"log: {log}"
    return ops, verify


def t_python(d, env, progs):
    os.makedirs(d)
    ops = [
        Op("start", argv=["python3", "-q"], cwd=d, expect=r">>>"),
        Op("long", "sum(i * i for i in range(10 ** 10))", until=r"^>>>"),
        Op("keys", keys=["ctrl-c"], expect=r"KeyboardInterrupt", until=r"KeyboardInterrupt\s*\n>>> $"),
        Op("line", "sum(range(10 ** 6))", expect=r"499999500000", until=r"^>>> $"),
    ]

    def verify(seen):
        ok = "KeyboardInterrupt" in seen[2] and "499999500000" in seen[3]
        return ok, "interrupted, then 499999500000" if ok else "answer not read"
    return ops, verify


def t_vim(d, env, progs):
    os.makedirs(d)
    path = os.path.join(d, "notes.txt")
    with open(path, "w") as f:
        f.write("alpha line\nbeta line\n")
    ops = [
        Op("start", argv=["vim", "-i", "NONE", "notes.txt"], cwd=d, expect=r"alpha line"),
        Op("keys", "Gogamma line", keys=["esc"], fs=True,
           expect=lambda s: "gamma line" in s and "-- INSERT --" not in s.split("gamma line")[-1]),
        Op("line", ":wq", exits=True, left=VIM_DEBRIS),
    ]

    def verify(seen):
        with open(path) as f:
            text = f.read()
        ok = text == "alpha line\nbeta line\ngamma line\n"
        return ok, "file edited and saved" if ok else f"file: {text!r}"
    return ops, verify


def t_less(d, env, progs):
    os.makedirs(d)
    with open(os.path.join(d, "big.txt"), "w") as f:
        for i in range(1, 501):
            f.write(f"L{i:04d} the quick brown fox" + (" NEEDLE here" if i == 321 else "") + "\n")
    ops = [
        Op("start", argv=["less", "big.txt"], cwd=d, expect=r"L0001 the quick"),
        Op("line", "/NEEDLE", fs=True, expect=r"L0321 .*NEEDLE"),
        Op("keys", "q", exits=True, left=LESS_DEBRIS),
    ]

    def verify(seen):
        ok = "L0321" in seen[1] and "NEEDLE" in seen[1]
        return ok, "found line 321, quit" if ok else "match not read"
    return ops, verify


def t_installer(d, env, progs):
    os.makedirs(d)
    out = os.path.join(d, "installed.txt")
    ops = [
        Op("start", argv=["python3", os.path.join(progs, "tb_installer.py"), out], cwd=d,
           expect=r"password:", until=r"password: $"),
        Op("line", SECRET, secret=True, expect=r"\[y/n\]", until=r"\[y/n\] $"),
        Op("line", "y", expect=r"Installed demo\.", until=r"Installed demo\."),
    ]

    def verify(seen):
        try:
            with open(out) as f:
                got = f.read().strip()
        except OSError:
            return False, "installer did not finish"
        ok = got == hashlib.sha256(SECRET.encode()).hexdigest()
        shown = any(SECRET in s for s in seen)
        return ok and not shown, ("password taken" if ok else "wrong password") + ("; password shown" if shown else "")
    return ops, verify


def t_build(d, env, progs):
    os.makedirs(os.path.join(d, "src"))
    for n in "abc":
        with open(os.path.join(d, "src", f"{n}.txt"), "w") as f:
            f.write(f"{n}\n")
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write("OBJS = out/a.o out/b.o out/c.o\n\n"
                "all: out/app\n\t@echo build ok\n\n"
                "out/app: $(OBJS)\n\t@echo '[4/4] link $@'; sleep 0.2; cat $(OBJS) > $@\n\n"
                "out/%.o: src/%.txt\n\t@mkdir -p out; echo '[$(words $(filter-out $(wildcard out/*.o),$(OBJS)))] "
                "compile $<'; sleep 0.3; cp $< $@\n")
    ops = [Op("start", argv=["make"], cwd=d, exits=True, expect=r"build ok", run=True)]

    def verify(seen):
        try:
            with open(os.path.join(d, "out", "app")) as f:
                ok = f.read() == "a\nb\nc\n"
        except OSError:
            ok = False
        return ok, "out/app built" if ok else "out/app missing"
    return ops, verify


def t_background(d, env, progs):
    os.makedirs(d)
    ops = [
        Op("start", argv=BASH, cwd=d, shell=True, expect=r"\$"),
        Op("line", "(sleep 2; echo READY) &", expect=r"^\[1\] \d+", until=r"^\$ $"),
        Op("line", "echo working; uname -s", expect=r"^Linux", until=r"^\$ $"),
        Op("waitline", "READY", expect=r"^(\$ )?READY\s*$", until=r"READY\s*$", recover="wait"),
    ]

    def verify(seen):
        ok = re.search(r"^(\$ )?READY\s*$", seen[3], re.M) is not None
        return ok, "job's READY read" if ok else "READY not read"
    return ops, verify


def t_seq(d, env, progs):
    os.makedirs(d)
    ops = [
        Op("start", argv=BASH, cwd=d, shell=True, expect=r"\$"),
        Op("big", "seq 1 200000", expect=r"^200000\s*\n(\d+: )?\$", until=r"^\$ $"),
    ]

    def verify(seen):
        ok = re.search(r"^200000\s*$", seen[1], re.M) is not None
        return ok, "last line and prompt read" if ok else "end not read"
    return ops, verify


def t_top(d, env, progs):
    os.makedirs(d)
    ops = [
        Op("start", argv=["top"], cwd=d, expect=r"PID\s+USER"),
        Op("line", "q", exits=True, left=TOP_DEBRIS),
    ]

    def verify(seen):
        ok = re.search(r"PID\s+USER", seen[0]) is not None
        return ok, "frame read, top quit" if ok else "frame not read"
    return ops, verify


TASKS = [
    ("git add -p: stage one of two hunks", "addp", t_add_p),
    ("git rebase -i in vim: reorder two commits", "rebase", t_rebase),
    ("python3 REPL: Ctrl+C a long loop, then compute", "python", t_python),
    ("vim: add a line, :wq", "vim", t_vim),
    ("less: search, quit", "less", t_less),
    ("installer: password, y/n, progress", "installer", t_installer),
    ("make: a build with progress lines", "build", t_build),
    ("background job: start, keep working, wait for it", "bg", t_background),
    ("200,000 lines of output (seq)", "seq", t_seq),
    ("top: start, read, quit", "top", t_top),
]


# ---- feature detection ------------------------------------------------------------

def cli_features(binary, env):
    def has(verb, opt, *extra):
        h = subprocess.run([binary, verb, "--help"], env=env, capture_output=True, text=True, timeout=30)
        if h.returncode == 0 and opt in h.stdout + h.stderr:
            return True
        r = subprocess.run([binary, verb, "--session", "tb-probe-none", opt, *extra], env=env,
                           capture_output=True, text=True, input="", timeout=30)
        return re.search(r"(unexpected|unknown|unrecognized) (option|argument)", r.stderr) is None
    return {
        "step_key": has("step", "--key", "Enter"),
        "no_enter": has("step", "--no-enter", "x"),
        "stdin": has("step", "--stdin"),
        "tail": has("step", "--tail", "5"),
        "changed": has("step", "--changed"),
        "wait_new": has("wait", "--regex", "x"),
    }


# ---- running ------------------------------------------------------------------------

def fmt_bytes(n):
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB"


def cell(t):
    s = f"{t.calls} calls, {fmt_bytes(t.bytes)}, {t.early} early, {t.debris} debris, {t.wall * 1000:.0f} ms"
    if t.failed:
        s += " — NOT DONE: " + "; ".join(t.failed)
    elif t.ok is False:
        s += " — WRONG END STATE: " + t.note
    return s


def print_table(table, totals):
    """The per-task figures as a plain table on stdout (bench.py prints the
    section's markdown after it)."""
    head = f"{'task':<10} {'driver':<5} {'calls':>5} {'bytes':>9} {'early':>5} {'debris':>6} {'ms':>7}  end state"
    print(head)
    print("-" * len(head))
    for key, name, t in table + [("TOTAL", n, t) for n, t in totals.items()]:
        state = "; ".join(t.failed) if t.failed else (t.note if key != "TOTAL" else "")
        if t.ok is False:
            state = "WRONG: " + state
        print(f"{key:<10} {name:<5} {t.calls:>5} {t.bytes:>9} {t.early:>5} {t.debris:>6} {t.wall * 1000:>7.0f}  {state}")
    print()


def run(binary, base_env, runtime, root):
    """Returns (rows, notes) for bench.py's section()."""
    progs = os.path.join(root, "tests", "programs")
    home = os.path.join(runtime, "tb-home")
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(home, ".gitconfig"), "w") as f:
        f.write("[user]\n\tname = Bench\n\temail = bench@example.invalid\n[core]\n\teditor = vim -i NONE\n"
                "[init]\n\tdefaultBranch = main\n[advice]\n\tskippedCherryPicks = false\n")
    env = {k: v for k, v in base_env.items() if k not in ("PYTHONSTARTUP", "LESS", "PAGER", "GIT_PAGER",
                                                          "EDITOR", "VISUAL", "GIT_EDITOR", "TMUX")}
    env.update(HOME=home, PS1="$ ", LESSHISTFILE="-", GIT_CONFIG_NOSYSTEM="1",
               PYENV_ROOT=base_env.get("PYENV_ROOT", os.path.expanduser("~/.pyenv")))
    sock = os.path.join(runtime, "tb-tmux.sock")
    feats = cli_features(binary, env)
    only = sys.argv[sys.argv.index("--task") + 1].split(",") if "--task" in sys.argv else None
    tasks = [t for t in TASKS if only is None or t[1] in only]
    cli = Cli(binary, env, feats)
    mcp = Mcp(binary, env, runtime)
    tmx = Tmux(env, sock)
    drivers = [cli, mcp, tmx]
    totals = {d.name: Tally() for d in drivers}
    rows = []
    table = []
    try:
        for title, key, make in tasks:
            cells = {}
            for drv in drivers:
                t = Tally()
                d = os.path.join(runtime, "tasks", drv.name, key)
                ops, verify = make(d, env, progs)
                drv.begin(f"tb-{key}", t)
                seen = []
                t0 = time.perf_counter()
                try:
                    for op in ops:
                        seen.append(drv.do(op))
                    drv.end()
                except (subprocess.TimeoutExpired, RuntimeError) as e:
                    t.failed.append(str(e))
                t.wall = time.perf_counter() - t0
                t.ok, t.note = verify(seen)
                cells[drv.name] = t
                table.append((key, drv.name, t))
                tot = totals[drv.name]
                for f in ("calls", "bytes", "early", "debris", "wall", "status"):
                    setattr(tot, f, getattr(tot, f) + getattr(t, f))
                tot.failed += [f"{key}: {x}" for x in t.failed]
                if t.ok is False:
                    tot.failed.append(f"{key}: wrong end state ({t.note})")
            state = "; ".join(sorted({f"{n}: {c.note}" if c.ok is False else c.note for n, c in cells.items()}))
            rows.append((title, f"CLI {cell(cells['CLI'])}<br>MCP {cell(cells['MCP'])}", f"tmux {cell(cells['tmux'])}",
                         f"end state: {state}"))
    finally:
        mcp.close()
        subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True)
    c, m, x = totals["CLI"], totals["MCP"], totals["tmux"]
    print_table(table, totals)

    def vs(t, base):
        calls0, bytes0 = base
        if not calls0:
            return ""
        return f" ({t.calls / calls0:.2f}x today's calls, {t.bytes / bytes0:.2f}x today's bytes)"

    def tot(t):
        s = f"{t.calls} calls, {fmt_bytes(t.bytes)}, {t.early} early, {t.debris} debris, {t.wall * 1000:.0f} ms"
        return s + (f"; not done: {len(t.failed)}" if t.failed else "")

    rows.append(("total, ten tasks", f"CLI {tot(c)} (status lines {fmt_bytes(c.status)}){vs(c, BASELINE['CLI'])}<br>MCP {tot(m)}{vs(m, BASELINE['MCP'])}; "
                 f"MCP/CLI calls {m.calls / max(c.calls, 1):.2f}x", f"tmux {tot(x)}",
                 "CLI ≤ 0.8x today's calls and bytes; MCP ≤ 1.3x the CLI's calls; 0 early; 0 debris"))
    on = [k for k, v in feats.items() if v]
    rows.append(("forms used", "CLI one-call forms: " + (", ".join(on) if on else "none (today's forms)"),
                 "MCP: " + ("terminal_step" if mcp.step else "terminal_send + terminal_wait")
                 + f"; tools/list {fmt_bytes(mcp.list_bytes)} (not counted above)", ""))
    notes = (
        "Issue 15's task set, each task done by three drivers in turn on fresh fixtures (a git repository, a "
        "file, tests/programs/tb_installer.py, a Makefile), 100x30 terminals. CLI: one `ptybroker` process per "
        "call as an agent runs it through a shell (`start -- PROG`, `step TEXT`, the password as `step TEXT`, keys "
        "as `send` then a bare `step`, less's quit key as `send` then `wait`, top's as `step q`, the endless loop "
        "as `step --max-wait 1000`, `wait --match` for a background job, `step --screen` for the flood, `stop` "
        "when the program still runs; the one-call forms instead where the binary has them, as the last row "
        "says); bytes are stdout + stderr. MCP: a client of `ptybroker mcp` "
        "(`terminal_start`, `terminal_send` + `terminal_wait` with `until` where the agent knows what comes, "
        "`quiet_ms: 500` where it does not, `terminal_run` for the build, `terminal_close`); bytes are the text "
        "content blocks. tmux: programs typed into a bash pane, `send-keys`, then `capture-pane -p` every 100 ms "
        "until the expected text shows, `kill-session`; bytes are what the tmux commands print. Each cell: calls, "
        "bytes read, early returns (an answer missing from what the call printed; the agent then settles or waits "
        "again, and those calls count), debris lines (stale lines of a full-screen program read after it left the "
        "screen; top leaves its last frame on the primary screen, which tmux shows too), wall time of the task. One run per task: read the calls, bytes and counts, not the times. The "
        "end state is checked as a user would: the staged diff, the file, the commit order, the answers read; the "
        "installer's password must not appear in anything read."
    )
    return rows, notes
