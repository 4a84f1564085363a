#!/usr/bin/env python3
"""`make bench`: measure ptybroker side by side with tmux on this machine and
write BENCHMARKS.md. Every figure states its method; nothing here is a test.

Usage: bench/bench.py [--quick] [--out BENCHMARKS.md] [--only SECTION,...]

--only runs the named sections alone (binary, calls, step, premature,
families, remote, probe, memory, throughput, engine, system, static, tasks, attach) and
prints them; it writes a file only when --out is given too.

system: the whole system (`pty/start cat FILE` + `pty/wait`) on each throughput input beside a
native C reader draining the same `cat` from a PTY (built with `cc -O2`) and tmux, interleaved.

engine: `ptybroker render` beside the anchor (bench/anchor: alacritty_terminal fed the same file
in 4 KiB chunks, built here with cargo) on each throughput input, as ratios of best CPU time.

attach: step latency on a session with no viewer, with one viewer reading, and with one
viewer that stopped reading (an `attach` SIGSTOPped inside another session), in one run.

`static` builds the x86_64 musl target (`make static`) when it is installed and sets the
static binary beside the glibc one: start-up, one-shot `read`, `step`, the engine on each
throughput input, the daemon's memory, size and dynamic section. Without the target it
says so and is skipped.
"""
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# PTYBROKER_BENCH_BIN measures another build of ptybroker (an A/B run).
BIN = os.environ.get("PTYBROKER_BENCH_BIN") or os.path.join(ROOT, "target", "release", "ptybroker")
QUICK = "--quick" in sys.argv
OUT = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else os.path.join(ROOT, "BENCHMARKS.md")
ONLY = sys.argv[sys.argv.index("--only") + 1].split(",") if "--only" in sys.argv else None

RUNTIME = tempfile.mkdtemp(prefix="ptyb-bench-")
os.chmod(RUNTIME, 0o700)
ENV = dict(os.environ, XDG_RUNTIME_DIR=RUNTIME)
TMUX_SOCK = os.path.join(RUNTIME, "tmux.sock")
SECTIONS = []


def pb(*args, check=True, **kw):
    return subprocess.run([BIN, *args], env=ENV, capture_output=True, text=True, check=check, **kw)


def tmux(*args, check=True):
    return subprocess.run(["tmux", "-S", TMUX_SOCK, *args], capture_output=True, text=True, check=check)


def timed(argv, n, env=ENV):
    """Milliseconds per whole process, spawned with posix_spawn (no shell, no
    fd scan: subprocess.run adds ~1 ms of its own here) and reaped."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    actions = [(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)]
    out = []
    try:
        for _ in range(n):
            t = time.perf_counter()
            pid = os.posix_spawnp(argv[0], argv, env, file_actions=actions)
            _, status = os.waitpid(pid, 0)
            out.append((time.perf_counter() - t) * 1000)
            if status != 0:
                raise RuntimeError(f"{argv} exited with status {status}")
    finally:
        os.close(devnull)
    return out


def rpc_timed(method, params, n):
    """Milliseconds per JSON-RPC call on a fresh connection (what one client
    process pays on top of starting)."""
    out = []
    for _ in range(n):
        t = time.perf_counter()
        r = rpc(method, params)
        out.append((time.perf_counter() - t) * 1000)
        if "error" in r:
            raise RuntimeError(f"{method}: {r['error']}")
    return out


def med(xs):
    return statistics.median(xs)


def p(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def pss_kib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return int(rest[11]) + int(rest[12])


def rpc(method, params):
    s = socket.socket(socket.AF_UNIX)
    s.connect(os.path.join(RUNTIME, "ptybroker", "daemon.sock"))
    s.sendall((json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": 1}) + "\n").encode())
    data = b""
    while not data.endswith(b"\n"):
        chunk = s.recv(1 << 20)
        if not chunk:
            break
        data += chunk
    s.close()
    return json.loads(data)


def daemon_pid(runtime=RUNTIME):
    with open(os.path.join(runtime, "ptybroker", "daemon.log")) as f:
        lines = [l for l in f if l.startswith("ptybroker daemon ")]
    return int(lines[-1].split()[2])


def section(title, rows, notes):
    SECTIONS.append((title, rows, notes))


def stop_all():
    pb("kill-session", "--session", "x", check=False)
    r = pb("list", "--json", check=False)
    try:
        for s in json.loads(r.stdout)["sessions"]:
            pb("kill-session", "--session", s["session"], check=False)
    except (ValueError, KeyError):
        pass
    tmux("kill-server", check=False)
    # The next tmux call must not reach a server still shutting down.
    for _ in range(100):
        if not os.path.exists(TMUX_SOCK):
            break
        time.sleep(0.02)
    else:
        os.unlink(TMUX_SOCK)


# ---- one-shot calls -----------------------------------------------------------

def bench_calls():
    n = 60 if QUICK else 300
    big = os.path.join(RUNTIME, "mib.txt")
    with open(big, "w") as f:
        for i in range(16384):
            f.write(f"{i:08d} " + "x" * 54 + "\n")
    pb("start", "--session", "x", "--", "cat")
    # The same full screen as y's, without y's 1 MiB of history behind it.
    pb("start", "--session", "z", "--", "sh", "-c", f"tail -n 30 {big}; exec cat")
    pb("start", "--session", "y", "--", "sh", "-c", f"cat {big}; exec cat")
    tmux("new-session", "-d", "-s", "x", "cat")
    runs = {
        "ours": [BIN, "read", "--session", "x"],
        "after": [BIN, "read", "--session", "y"],
        "screenful": [BIN, "read", "--session", "z"],
        "floor": ["/bin/true"],
        "start_only": [BIN, "--version"],
        "theirs": ["tmux", "-S", TMUX_SOCK, "list-sessions"],
    }
    # Interleaved, so that every row sees the same machine.
    t = {k: [] for k in runs}
    for _ in range(n):
        for k, argv in runs.items():
            t[k] += timed(argv, 1)
    socket_only = rpc_timed("pty/read", {"session": "x"}, n)
    ours, after, theirs = t["ours"], t["after"], t["theirs"]
    section(
        "One-shot client call",
        [
            ("`ptybroker read` on a running session", f"{med(ours):.2f} ms: {med(ours) / med(theirs):.2f}x tmux, `/bin/true` + {med(ours) - med(t['floor']):.2f} ms", f"p95 {p(ours, .95):.2f} ms", "≤ 0.55x `tmux list-sessions`; ≤ `/bin/true` + 0.6 ms"),
            ("`tmux list-sessions`", f"{med(theirs):.2f} ms", f"p95 {p(theirs, .95):.2f} ms", ""),
            ("`ptybroker read` after the session printed 1 MiB", f"{med(after):.2f} ms", f"p95 {p(after, .95):.2f} ms; the same screen without the history {med(t['screenful']):.2f} ms", "no slower than empty"),
            ("of which: `/bin/true` (starting any process here)", f"{med(t['floor']):.2f} ms", f"p95 {p(t['floor'], .95):.2f} ms", ""),
            ("of which: `ptybroker --version` (start, no daemon)", f"{med(t['start_only']):.2f} ms", f"p95 {p(t['start_only'], .95):.2f} ms", ""),
            ("of which: `pty/read` on a fresh socket connection", f"{med(socket_only):.2f} ms", f"p95 {p(socket_only, .95):.2f} ms", "the daemon's part"),
        ],
        f"Whole process, started with posix_spawn from Python and reaped, median of {n}, all rows interleaved. "
        "The empty session runs `cat`; the 1 MiB one printed 16,384 lines (its screen is full, so it is also "
        "compared with a session showing the same screen after 30 lines). The last three rows split the first: "
        "what starting any process costs on this machine, what starting ptybroker costs, and the daemon's round "
        "trip alone (a Python client on a new connection).",
    )
    stop_all()


# ---- step round trips ---------------------------------------------------------

def bench_step():
    n = 20 if QUICK else 60
    rows = []
    for name, argv, text, expect in [
        ("python3", ["python3", "-q"], "1 + 41", "42"),
        ("bash", ["bash", "--norc", "--noprofile"], "echo hi", "hi"),
    ]:
        pb("start", "--session", "x", "--", *argv)
        ours = timed([BIN, "step", "--session", "x", text], n)
        socket_only = rpc_timed("pty/step", {"session": "x", "text": text}, n)
        quiet = timed([BIN, "step", "--session", "x", "--quiet-only", "--timeout", "500", text], max(5, n // 6))
        stop_all()
        tmux("new-session", "-d", "-s", "x", "-x", "100", "-y", "30", " ".join(argv))
        time.sleep(0.5)
        tm = []
        for i in range(n):
            tmux("send-keys", "-t", "x", "clear", "Enter")
            time.sleep(0.05)
            t = time.perf_counter()
            tmux("send-keys", "-t", "x", text, "Enter")
            while expect not in tmux("capture-pane", "-p", "-t", "x").stdout.split(text, 1)[-1]:
                pass
            tm.append((time.perf_counter() - t) * 1000)
        stop_all()
        rows.append((f"{name}: `ptybroker step` (settle, no pattern)", f"{med(ours):.1f} ms", f"p95 {p(ours, .95):.1f} ms", "target median ≤ 5, p95 ≤ 10"))
        rows.append((f"{name}: `pty/step` over the socket (no process start)", f"{med(socket_only):.1f} ms", f"p95 {p(socket_only, .95):.1f} ms", ""))
        rows.append((f"{name}: `ptybroker step --quiet-only --timeout 500`", f"{med(quiet):.1f} ms", f"p95 {p(quiet, .95):.1f} ms", "pty-prompt's method"))
        rows.append((f"{name}: tmux send-keys + capture-pane polling (answer known)", f"{med(tm):.1f} ms", f"p95 {p(tm, .95):.1f} ms", ""))
    section(
        "`step` round trip",
        rows,
        f"Input written, settled result printed, whole CLI process (started as in the section above); {n} steps "
        "each. tmux polls capture-pane until the known answer appears, which a caller without a pattern cannot do.",
    )


# ---- premature returns --------------------------------------------------------

def bench_premature():
    reps = 5 if QUICK else 20
    rows = []
    progs = os.path.join(ROOT, "tests", "programs")
    for name, script, prompt in [
        ("print, sleep 1.5 s, print, prompt", "print_sleep_prompt.py", "answer"),
        ("compute silently 1.5 s, prompt", "compute_then_prompt.py", "computed"),
    ]:
        early = {"settle": 0, "quiet 500 ms": 0}
        for how, extra in [("settle", []), ("quiet 500 ms", ["--quiet-only", "--timeout", "500"])]:
            pb("start", "--session", "pm", *extra, "--", "python3", os.path.join(progs, script))
            for _ in range(reps):
                out = pb("step", "--session", "pm", *extra, "y").stdout
                if not out.rstrip().split("\n")[-1].startswith(prompt):
                    early[how] += 1
                    # Let the program reach its prompt before the next round
                    # (a step without text and without the window settles).
                    pb("step", "--session", "pm", check=False)
            pb("kill-session", "--session", "pm", check=False)
        rows.append((name, f"{early['settle']} of {reps} steps returned early", f"500 ms quiet window: {early['quiet 500 ms']} of {reps}", "target 0"))
    section(
        "Premature returns",
        rows,
        "A step that returned before the program's next prompt. The programs are tests/programs/*.py.",
    )


# ---- settle families (issue 14) ----------------------------------------------

class Sshd:
    """A private sshd on 127.0.0.1 for the ssh row: its own host key and
    configuration, public keys only (a client key made here), no PAM; the
    same set-up as tests/settle_families.rs. Loopback only."""

    def __init__(self):
        self.proc = None
        self.argv = None
        self.dir = None
        self.port = None
        sshd = "/usr/sbin/sshd"
        if not (os.path.exists(sshd) and shutil.which("ssh") and shutil.which("ssh-keygen")):
            return
        if os.geteuid() == 0 and not os.path.exists("/run/sshd"):
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        # A directory of its own: sections that each start an sshd must not
        # meet the keys of an earlier one (ssh-keygen would ask to overwrite).
        d = tempfile.mkdtemp(prefix="sshd-", dir=RUNTIME)
        for key in ("host_key", "client_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(d, key)],
                           check=True, stdin=subprocess.DEVNULL)
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        cfg = os.path.join(d, "sshd_config")
        with open(cfg, "w") as f:
            f.write(f"ListenAddress 127.0.0.1:{port}\nHostKey {d}/host_key\nPidFile none\nUsePAM no\n"
                    f"PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
                    f"AuthorizedKeysFile {d}/client_key.pub\nStrictModes no\n")
        self.proc = subprocess.Popen([sshd, "-D", "-e", "-f", cfg], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        for _ in range(500):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None:
                    self.proc = None
                    return
                time.sleep(0.02)
        self.dir, self.port = d, port
        self.argv = ["ssh", "-F", "/dev/null", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                     "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-i", os.path.join(d, "client_key"),
                     "-p", str(port), "-tt", "127.0.0.1", "env PS1='ssh> ' bash --norc --noprofile"]

    def stop(self):
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, 9)
            except ProcessLookupError:
                pass
            self.proc.wait()


def has_ipython():
    return subprocess.run(["python3", "-c", "import IPython"], capture_output=True).returncode == 0


def bench_families():
    reps = 5
    progs = os.path.join(ROOT, "tests", "programs")

    def prog(name):
        return os.path.join(progs, name)

    def plain(n):
        return str(n)

    def shell(delay):
        return lambda n: f"sleep {delay}; echo ANSWER-$(({n}+0))"

    def pyprint(n):
        return f"print('ANSWER-%d' % {n})"

    sshd = Sshd()
    server = subprocess.Popen(["python3", prog("slow_http.py"), "0.8"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, text=True)
    port = server.stdout.readline().strip()

    def curl(n):
        return f"curl -s http://127.0.0.1:{port}/{n}"

    ipy = os.path.join(RUNTIME, "ipython")
    bash = ["bash", "--norc", "--noprofile"]
    # (family, row, needed command, start options, argv, prompt, the line for
    # step n (None: a bare step), the answer of step n, seconds from input to
    # answer by the program's own design)
    rows_spec = [
        ("baseline", "python3 REPL", "python3", [], ["python3", "-q"], ">>>", pyprint, None, 0),
        ("baseline", "bash", "bash", ["--env", "PS1=sh> "], bash, "sh>", shell(0), None, 0),
        ("baseline", "ipython", "ipython", ["--env", f"IPYTHONDIR={ipy}"],
         ["python3", "-m", "IPython", "--no-banner", "--colors=NoColor"], "In [1]:", pyprint, None, 0),
        ("1 relay", "relay.py over a socketpair, answer at 0.8 s", "python3", [], ["python3", prog("relay.py"), "socketpair"], "remote>", plain, None, 0.8),
        ("1 relay", "relay.py over pipes", "python3", [], ["python3", prog("relay.py"), "pipe"], "remote>", plain, None, 0.8),
        ("1 relay", "relay.py over a pty", "python3", [], ["python3", prog("relay.py"), "pty"], "remote>", plain, None, 0.8),
        ("1 relay", "`script -qc bash`, `sleep 0.8; echo`", "script", [], ["script", "-qc", "env PS1='sh> ' bash --norc --noprofile", "/dev/null"], "sh>", shell(0.8), None, 0.8),
        ("1 relay", "`ssh -tt` to a loopback sshd, `sleep 0.8; echo`", "sshd", [], sshd.argv, "ssh>", shell(0.8), None, 0.8),
        ("2 other fd", "select() on a socket and the terminal, answer at 0.8 s", "python3", [], ["python3", prog("select_socket.py"), "select"], "sock>", plain, None, 0.8),
        ("2 other fd", "poll() on a socket and the terminal", "python3", [], ["python3", prog("select_socket.py"), "poll"], "sock>", plain, None, 0.8),
        ("2 other fd", "subprocess.run(capture_output) in its own group, 0.8 s", "python3", [], ["python3", prog("capture_output.py")], "capture>", plain, None, 0.8),
        ("2 other fd", "`curl` from bash, a local server answering at 0.8 s", "curl", ["--env", "PS1=sh> "], bash, "sh>", curl, None, 0.8),
        ("3 timers", "node 6 x await sleep(400)", "node", [], ["node", prog("timer_chain.js"), "6", "400"], "chain>", plain, None, 2.4),
        ("3 timers", "node 3 x 500 ms", "node", [], ["node", prog("timer_chain.js"), "3", "500"], "chain>", plain, None, 1.5),
        ("3 timers", "node one 3 s await", "node", [], ["node", prog("timer_chain.js"), "1", "3000"], "chain>", plain, None, 3.0),
        ("3 timers", "node 5 x 600 ms (past the 2 s horizon)", "node", [], ["node", prog("timer_chain.js"), "5", "600"], "chain>", plain, None, 3.0),
        ("3 timers", "python asyncio 6 x 400 ms, terminal reader registered", "python3", [], ["python3", prog("timer_chain_asyncio.py"), "6", "400"], "aio>", plain, None, 2.4),
        ("4 locks", "lockf (F_SETLKW) on a lock held 1.5 s", "python3", [], ["python3", prog("lock_wait.py"), "lockf"], "lock>", plain, None, 1.5),
        ("4 locks", "flock on a lock held 1.5 s", "python3", [], ["python3", prog("lock_wait.py"), "flock"], "lock>", plain, None, 1.5),
        ("5 output in a timer", "select([tty, pipe], 1.9 s), pipe answers at 0.2 s", "python3", [], ["python3", prog("select_tty_pipe.py"), "0.2", "1.9"], "pipe>", plain, None, 0.2),
        ("6 repainters", "curses clock redrawing every 1 s", "python3", [], ["python3", prog("curses_clock.py"), "1"], "type a line", plain, None, 0),
        ("6 repainters", "`watch -n1 date` (bare step)", "watch", [], ["watch", "-n1", "date"], "Every 1", None, "Every 1", 0),
        ("6 repainters", "htop (bare step)", "htop", [], ["htop"], "F10Quit", None, "F10Quit", 0),
        ("7 background", "bash script: `sleep 1000 &`, then `read`", "bash", [], ["bash", prog("background_read.sh")], "bg>", plain, None, 0),
        ("7 background", "helper thread computing, main thread reads", "python3", [], ["python3", prog("helper_thread.py")], "thread>", plain, None, 0),
        ("7 background", "non-blocking keyboard polling with 50 ms sleeps", "python3", [], ["python3", prog("nonblocking_keys.py")], "poll>", plain, None, 0),
    ]
    rows = []
    try:
        for fam, what, needs, opts, argv, prompt, line, answer, at in rows_spec:
            if needs == "sshd":
                missing = sshd.argv is None
            elif needs == "ipython":
                missing = not has_ipython()
            else:
                missing = shutil.which(needs) is None
            if missing:
                rows.append((f"{fam}: {what}", "not run", f"{needs} is not installed", ""))
                continue
            pb("start", "--session", "fam", *opts, "--", *argv)
            pb("wait", "--session", "fam", "--screen", "--match", prompt, "--max-wait", "30000", check=False)
            early = needless = capped = 0
            took = []
            for n in range(1, reps + 1):
                want = answer or f"ANSWER-{n}"
                args = ["step", "--session", "fam", "--json"] + ([line(n)] if line else [])
                t = time.perf_counter()
                r = pb(*args, check=False)
                took.append((time.perf_counter() - t) * 1000)
                try:
                    res = json.loads(r.stdout)
                except ValueError:
                    res = {"output": "", "reason": "error"}
                got = any(l.strip() == want or (answer and want in l) for l in res.get("output", "").splitlines())
                if res.get("reason") == "timeout":
                    capped += 1
                if not got:
                    early += 1
                    # Let the program answer and prompt before the next step.
                    pb("wait", "--session", "fam", "--match", want, "--max-wait", "30000", check=False)
                    time.sleep(0.3)
                elif took[-1] > (at + 0.3) * 1000:
                    needless += 1
            pb("kill-session", "--session", "fam", check=False)
            cap = f", {capped} hit the 10 s cap" if capped else ""
            rows.append((f"{fam}: {what}", f"median {med(took):.0f} ms",
                         f"early returns {early} of {reps}; needless waits {needless} of {reps}{cap} (answer at {at:g} s)",
                         "0 early, 0 needless"))
    finally:
        sshd.stop()
        server.kill()
        server.wait()
    section(
        "Settle families (issue 14)",
        rows,
        f"tests/programs/ (and real ssh, script, watch, htop, ipython), each started, its prompt awaited, then "
        f"{reps} `ptybroker step --json` with the defaults (500 ms quiet window, 10 s cap), whole CLI process "
        "timed. Each program answers a line with `ANSWER-<n>` a known time after it reads it (\"answer at\"; 0: at "
        "once). An early return: the step's output lacks the answer line (then the bench waits for it before the "
        "next step). A needless wait: the answer was there, but the step took longer than the answer time + 300 "
        "ms. curl's server (tests/programs/slow_http.py) runs beside the session. watch and htop are stepped without input; their answer is their frame. ssh runs against a private "
        "sshd on 127.0.0.1 (as in tests/settle_families.rs).",
    )


# ---- remote hosts (issue 17) --------------------------------------------------

def bench_remote():
    """`--host box` over the loopback sshd beside local calls, same run."""
    n = 10 if QUICK else 30
    sshd = Sshd()
    if sshd.argv is None:
        section("Remote hosts (issue 17)", [("(skipped)", "no sshd/ssh on this machine", "", "")], "")
        return
    d = sshd.dir
    with open(os.path.join(d, "host_key.pub")) as f:
        host_key = f.read().split()[:2]
    known = os.path.join(d, "known_hosts")
    with open(known, "w") as f:
        f.write(f"[127.0.0.1]:{sshd.port} {' '.join(host_key)}\n")
    cfg = os.path.join(d, "ssh_config")
    with open(cfg, "w") as f:
        f.write(f"Host box\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {pwd_name()}\n"
                f"  IdentityFile {d}/client_key\n  IdentitiesOnly yes\n  UserKnownHostsFile {known}\n"
                f"  StrictHostKeyChecking yes\n  LogLevel ERROR\n")
    far = os.path.join(RUNTIME, "far")
    os.makedirs(far, mode=0o700, exist_ok=True)
    wrap = os.path.join(d, "ptybroker-far")
    with open(wrap, "w") as f:
        f.write(f"#!/bin/sh\nXDG_RUNTIME_DIR={far} exec {BIN} \"$@\"\n")
    os.chmod(wrap, 0o755)
    renv = {k: v for k, v in ENV.items() if k not in ("SSH_AUTH_SOCK", "PTYBROKER_HOST")}
    renv.update(PTYBROKER_SSH_COMMAND=f"ssh -F {cfg}", PTYBROKER_REMOTE_BIN=wrap)
    host = ["--host", "box"]
    rows = []
    try:
        pb("start", "--session", "x", "--", "python3", "-q")
        local = timed([BIN, "step", "--session", "x", "1 + 41"], n)
        stop_all()
        # Cold: no master yet; the call starts it, asks the proxy (which
        # starts the remote daemon) and forwards the socket.
        cold = timed([BIN, "list", *host], 1, env=renv)
        again = timed([BIN, "list", *host], 1, env=renv)
        subprocess.run([BIN, "start", *host, "--session", "x", "--", "python3", "-q"], env=renv,
                       capture_output=True, check=True)
        remote = timed([BIN, "step", *host, "--session", "x", "1 + 41"], n, env=renv)
        ctl = [os.path.join(RUNTIME, "ptybroker", "ssh", c)
               for c in os.listdir(os.path.join(RUNTIME, "ptybroker", "ssh")) if c.endswith(".ctl")][0]
        floor = timed(["ssh", "-F", cfg, "-o", f"ControlPath={ctl}", "box", "true"], n, env=renv)
        new_conn = timed(["ssh", "-F", cfg, "-o", "ControlPath=none", "box", "true"], max(3, n // 6), env=renv)
        subprocess.run([BIN, "kill-session", *host, "--session", "x"], env=renv, capture_output=True)
        subprocess.run(["ssh", "-F", cfg, "-o", f"ControlPath={ctl}", "-O", "exit", "box"], env=renv,
                       capture_output=True)
        over = med(remote) - med(local)
        rows.append(("python3 `1 + 41`: local `ptybroker step`", f"{med(local):.1f} ms", f"p95 {p(local, .95):.1f} ms", ""))
        rows.append(("the same, `step --host box` (warm: forwarded socket)", f"{med(remote):.1f} ms",
                     f"p95 {p(remote, .95):.1f} ms; +{over:.1f} ms over local", "≤ local + 3 ms"))
        rows.append(("first call to the host, `list --host box` (cold: new master, proxy, forward)", f"{cold[0]:.0f} ms",
                     f"the next one {again[0]:.1f} ms", ""))
        rows.append(("floor: `ssh -o ControlPath=<the master> box true`", f"{med(floor):.1f} ms", f"p95 {p(floor, .95):.1f} ms",
                     "what a process per call would add"))
        rows.append(("a new ssh connection, `ssh box true`", f"{med(new_conn):.0f} ms", "", ""))
    finally:
        sshd.stop()
    section(
        "Remote hosts (issue 17)",
        rows,
        f"`--host box` against a private sshd on 127.0.0.1 (as in bench/families), the far side this binary under "
        f"its own runtime directory; whole CLI process timed, {n} steps each, local and remote in the same run. "
        "A warm call connects to the socket the ssh master forwards to the remote daemon: no process starts "
        "besides ours, so it costs the local call plus a round trip through the master.",
    )


def pwd_name():
    import pwd
    return pwd.getpwuid(os.getuid()).pw_name


# ---- memory -------------------------------------------------------------------

def bench_probe():
    """The settle probe's own cost: tests/settle.rs `probe_cost` probes each
    program 500 times in a release build and prints the median and p95."""
    r = subprocess.run(["cargo", "test", "--release", "--locked", "--test", "settle", "probe_cost", "--",
                        "--nocapture", "--test-threads=1"], cwd=ROOT, capture_output=True, text=True)
    rows = []
    for line in r.stderr.splitlines():
        line = line.strip()
        if line.startswith("probe "):
            name, rest = line[len("probe "):].split(":", 1)
            med_part, p95_part = rest.split(",", 1)
            verdict = p95_part.split("(", 1)[1].rstrip(")") if "(" in p95_part else ""
            rows.append((f"probe of {name.strip()} ({verdict[:60]})", med_part.replace("median", "").strip(),
                         "p95 " + p95_part.split("(")[0].replace("p95", "").strip(), "bounded; run once per look"))
    if not rows:
        rows.append(("probe", "not measured", (r.stderr or r.stdout)[-200:].replace("\n", " "), ""))
    section(
        "Settle probe",
        rows,
        "One probe of the terminal's foreground group (reading /proc: stat, syscall, wchan, fd links, the wait "
        "set from the program's memory, epoll fdinfo, a socket's peer), median of 500 in a release build. A wait "
        "probes only when output arrives or a debounce, timer or relay window ends; an idle session costs nothing.",
    )


def stop_daemon(runtime=RUNTIME):
    """End the daemon of the earlier sections (it stays up 30 s after its
    last session), so that memory is measured on a fresh one."""
    try:
        pid = daemon_pid(runtime)
    except (OSError, IndexError):
        return
    try:
        os.kill(pid, 15)
    except ProcessLookupError:
        return
    for _ in range(500):
        if not os.path.exists(f"/proc/{pid}"):
            return
        time.sleep(0.01)


def bench_memory():
    stop_daemon()
    pb("start", "--session", "s0", "--", "cat")
    pid = daemon_pid()
    time.sleep(0.3)
    base = rss_kib(pid)
    base_pss = pss_kib(pid)
    base_anon = status_kib(pid, "RssAnon")
    base_file = status_kib(pid, "RssFile")
    threads = status_kib(pid, "Threads")
    # What any dynamically linked C program costs here: libc's pages alone.
    ref = subprocess.Popen(["sleep", "5"])
    time.sleep(0.2)
    sleep_rss = rss_kib(ref.pid)
    ref.kill()
    ref.wait()
    counts = [1, 10, 25, 50]
    samples = []
    started = 1
    for c in counts:
        while started < c:
            pb("start", "--session", f"s{started}", "--", "cat")
            started += 1
        time.sleep(0.3)
        samples.append((c, rss_kib(pid)))
    slope = (samples[-1][1] - samples[0][1]) / (counts[-1] - counts[0])
    # Idle CPU: 10 idle sessions, 10 s (2 s with --quick).
    for i in range(started, 10):
        pb("start", "--session", f"s{i}", "--", "cat")
    t0 = cpu_ticks(pid)
    window = 2 if QUICK else 10
    time.sleep(window)
    idle_ticks = cpu_ticks(pid) - t0
    stop_all()
    # Scrollback: one session that printed 1000 full 80-column lines.
    pb("start", "--session", "sb0", "--cols", "80", "--rows", "24", "--", "cat")
    pid = daemon_pid()
    lines = os.path.join(RUNTIME, "lines.txt")
    with open(lines, "w") as f:
        for i in range(1000):
            f.write((f"{i:06d}" + "abcdefghij" * 8)[:80] + "\n")
    # Started over JSON-RPC so that no client read of the output is counted:
    # this is what the session itself holds (screen, scrollback, transcript).
    # A first such session stays up: it pages in the code that handles
    # scrollback (the binary's pages, once per daemon); the second is measured.
    argv = ["sh", "-c", f"cat {lines}; exec cat"]
    rpc("pty/start", {"session": "sbw", "argv": argv, "cols": 80, "rows": 24})
    time.sleep(0.5)
    before, before_anon = rss_kib(pid), status_kib(pid, "RssAnon")
    rpc("pty/start", {"session": "sb1", "argv": argv, "cols": 80, "rows": 24})
    time.sleep(0.5)
    sb, sb_anon = rss_kib(pid) - before, status_kib(pid, "RssAnon") - before_anon
    stop_all()
    # tmux, the same way.
    tmux("new-session", "-d", "-s", "tw", "-x", "80", "-y", "24", f"cat {lines}; exec cat")
    tpid = int(tmux("display-message", "-p", "#{pid}").stdout.strip())
    time.sleep(0.5)
    tb = rss_kib(tpid)
    tmux("new-session", "-d", "-s", "tsb", "-x", "80", "-y", "24", f"cat {lines}; exec cat")
    time.sleep(0.5)
    tsb = rss_kib(tpid) - tb
    stop_all()
    # tmux for comparison.
    tmux("new-session", "-d", "-s", "t0", "cat")
    tpid = int(tmux("display-message", "-p", "#{pid}").stdout.strip())
    time.sleep(0.3)
    tbase = rss_kib(tpid)
    for i in range(1, 50):
        tmux("new-session", "-d", "-s", f"t{i}", "cat")
    time.sleep(0.3)
    tslope = (rss_kib(tpid) - tbase) / 49
    stop_all()
    section(
        "Memory and idle CPU",
        [
            ("daemon RSS with one idle session", f"{base} KiB (PSS {base_pss} KiB; anonymous {base_anon}, file-backed {base_file})", f"tmux server {tbase} KiB; `sleep` {sleep_rss} KiB", "target ≤ 2.5 MB"),
            ("daemon's own memory with one idle session", f"anonymous (RssAnon) {base_anon} KiB; PSS {base_pss} KiB", f"{threads} threads", "RssAnon ≤ 256 KiB"),
            ("RSS per extra idle session (`cat`, 1→50)", f"{slope:.0f} KiB", f"tmux {tslope:.0f} KiB", "target ≤ 100 KiB"),
            ("RSS of a session after 1000 80-column lines", f"{sb} KiB (anonymous {sb_anon} KiB)", f"tmux {tsb} KiB", "target ≤ 300 KiB"),
            (f"daemon CPU with 10 idle sessions over {window} s", f"{idle_ticks} ticks", "", "target 0"),
        ],
        "VmRSS from /proc (PSS beside it: libc's pages are shared with every process; file-backed is the "
        "binary's and libc's pages, anonymous the daemon's own heap and stacks); the slope is "
        "(RSS at 50 - RSS at 1) / 49; the scrollback session is started over JSON-RPC and not read, beside a first one that stays up (it pages in the scrollback code once per daemon); tmux likewise.",
    )


# ---- binary -------------------------------------------------------------------

def bench_binary():
    size = os.path.getsize(BIN)
    dyn = subprocess.run(["readelf", "-d", BIN], capture_output=True, text=True).stdout
    needed = [l.split("[", 1)[1].rstrip("]") for l in dyn.splitlines() if "(NEEDED)" in l]
    rows = [("stripped release binary", f"{size / 1e6:.2f} MB ({size} bytes)", "needs " + ", ".join(needed),
             "target ≤ 1.35 MB, libc only (issue 19; `make size` per area)")]
    # What unwinding costs: the same tree and profile, aborting on panic
    # (as the static builds do), built beside it.
    target_dir = os.path.join(ROOT, "target", "bench-abort")
    env = dict(os.environ, CARGO_PROFILE_RELEASE_PANIC="abort")
    r = subprocess.run(["cargo", "build", "--release", "--locked", "--quiet", "--target-dir", target_dir],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    if r.returncode == 0:
        aborting = os.path.getsize(os.path.join(target_dir, "release", "ptybroker"))
        rows.append(("the same, aborting on panic", f"{aborting / 1e6:.2f} MB ({aborting} bytes)",
                     f"unwinding costs {(size - aborting) / 1e3:.0f} KB", "not shipped: see below"))
    else:
        rows.append(("the same, aborting on panic", "not built", r.stderr.strip()[-200:], ""))
    section(
        "Binary",
        rows,
        "`ls -l target/release/ptybroker`; shared libraries from `readelf -d` (NEEDED). The second row is the "
        "same build with `CARGO_PROFILE_RELEASE_PANIC=abort`: the glibc build keeps unwinding so that a bug "
        "that panics in one connection's or session's thread ends that thread, not the daemon and every "
        "session (Cargo.toml's release profile); the static builds abort and are measured in \"Static build\".",
    )


def cat_through_ptybroker(session, path):
    """Seconds for `pty/start` of `cat PATH` (80x24) and `pty/wait` for its
    exit: until the child exited and all its output is parsed."""
    t = time.perf_counter()
    rpc("pty/start", {"session": session, "argv": ["cat", path], "cols": 80, "rows": 24})
    r = rpc("pty/wait", {"session": session, "exit": True, "timeout": 600000})
    took = time.perf_counter() - t
    if r.get("result", {}).get("reason") != "exited":
        raise RuntimeError(f"cat {path} did not end: {r}")
    pb("kill-session", "--session", session, check=False)
    return took


def cat_through_tmux(path):
    """Seconds for tmux to run `cat PATH` in a detached 80x24 session."""
    t = time.perf_counter()
    tmux("new-session", "-d", "-x", "80", "-y", "24", f"cat {path}; tmux -S {TMUX_SOCK} wait-for -S done")
    tmux("wait-for", "done")
    took = time.perf_counter() - t
    tmux("kill-server", check=False)
    return took


# ---- throughput ---------------------------------------------------------------

def gen_inputs(mib):
    import random
    rnd = random.Random(42)
    target = mib << 20
    files = {}

    def write(name, make):
        path = os.path.join(RUNTIME, name)
        with open(path, "wb") as f:
            n = 0
            while n < target:
                b = make()
                f.write(b)
                n += len(b)
        files[name] = path

    words = ["alpha", "beta", "gamma", "delta", "compile", "warning:", "src/main.rs", "ok", "42", "\t"]
    write("ascii.txt", lambda: (" ".join(rnd.choice(words) for _ in range(rnd.randint(3, 40))) + "\r\n").encode())

    def sgr():
        parts = []
        for _ in range(rnd.randint(3, 12)):
            k = rnd.randint(0, 3)
            if k == 0:
                parts.append(f"\x1b[{rnd.randint(30, 37)}m")
            elif k == 1:
                parts.append(f"\x1b[38;5;{rnd.randint(0, 255)}m")
            elif k == 2:
                parts.append(f"\x1b[1;38;2;{rnd.randint(0,255)};{rnd.randint(0,255)};{rnd.randint(0,255)}m")
            else:
                parts.append("\x1b[0m")
            parts.append(rnd.choice(words) + " ")
        return ("".join(parts) + "\x1b[0m\r\n").encode()

    write("sgr.txt", sgr)

    def screen():
        out = ["\x1b[?1049h\x1b[2;23r"]
        for row in range(1, 25):
            out.append(f"\x1b[{row};1H\x1b[2K" + "".join(rnd.choice(words) + " " for _ in range(8))[:79])
        out.append("\x1b[5;1H\x1b[3L\x1b[2M\x1bM\x1b[2S\x1b[1T\x1b[24;1H\x1b[7m status line \x1b[0m\x1b[r")
        return "".join(out).encode()

    write("screen.txt", screen)
    uni = ["日本語のテキスト", "한국어", "中文字符", "😀", "👍🏽", "e\u0301", "a\u0308", "🇫🇷", "ｆｕｌｌ"]
    write("unicode.txt", lambda: (" ".join(rnd.choice(uni) for _ in range(rnd.randint(2, 12))) + "\r\n").encode())
    return files


def pty_ceiling(path):
    """MB/s of `cat FILE` on a PTY whose master is read and thrown away: what
    the kernel's terminal layer allows on this machine, before any parsing."""
    import pty as ptymod
    size = os.path.getsize(path) / 1e6
    t = time.perf_counter()
    pid, fd = ptymod.fork()
    if pid == 0:
        os.execvp("cat", ["cat", path])
    while True:
        try:
            if not os.read(fd, 65536):
                break
        except OSError:
            break
    os.waitpid(pid, 0)
    os.close(fd)
    return size / (time.perf_counter() - t)


def bench_throughput():
    mib = 4 if QUICK else 32
    files = gen_inputs(mib)
    rows = []
    pb("start", "--session", "keep", "--", "cat")  # keeps the daemon up between runs
    for name, path in files.items():
        size = os.path.getsize(path) / 1e6
        t = time.perf_counter()
        subprocess.run([BIN, "render", "--cols", "80", "--rows", "24", path], stdout=subprocess.DEVNULL, check=True)
        engine = size / (time.perf_counter() - t)
        ceiling = pty_ceiling(path)
        ours = size / cat_through_ptybroker("tp", path)
        theirs = size / cat_through_tmux(path)
        rows.append((name, f"engine {engine:.0f} MB/s", f"system {ours:.0f} MB/s vs tmux {theirs:.0f} MB/s ({ours / theirs:.2f}x); PTY alone {ceiling:.0f} MB/s", ""))
    section(
        "Throughput",
        rows,
        f"{mib} MiB generated inputs. Engine: `ptybroker render` of the file (includes starting and reading "
        "it). System: `pty/start` of `cat FILE` (80x24) and `pty/wait` for its exit, i.e. until the child exited "
        "and all its output is parsed, vs `tmux new-session -d -x 80 -y 24 'cat F; tmux wait-for -S done'`. "
        "PTY alone: the same `cat` on a PTY whose output a Python loop reads and discards, the kernel's "
        "ceiling for any terminal here. Targets: engine ≥ 300 MB/s (ASCII, SGR, screen), ≥ 200 MB/s "
        "(Unicode); system ≥ 75 MB/s.",
    )


# ---- the engine against an anchor (issue 19) -----------------------------------

_ANCHOR = []


def build_anchor():
    """Build bench/anchor (once per run): (its path, None), or (None, why)."""
    if not _ANCHOR:
        manifest = os.path.join(ROOT, "bench", "anchor", "Cargo.toml")
        target_dir = os.path.join(ROOT, "target", "anchor")
        r = subprocess.run(["cargo", "build", "--release", "--quiet", "--manifest-path", manifest, "--target-dir", target_dir],
                           capture_output=True, text=True)
        anchor = os.path.join(target_dir, "release", "anchor")
        if r.returncode != 0 or not os.path.exists(anchor):
            _ANCHOR.append((None, "building bench/anchor failed: " + (r.stderr or r.stdout)[-200:].replace("\n", " ")))
        else:
            _ANCHOR.append((anchor, None))
    return _ANCHOR[0]


def bench_engine():
    """`ptybroker render` and the anchor (alacritty_terminal 0.26, bench/anchor)
    on the same files, whole processes, best CPU time of k interleaved runs."""
    title = "Engine against alacritty_terminal (issue 19)"
    anchor, why = build_anchor()
    if anchor is None:
        section(title, [("engine vs alacritty_terminal", "skipped", why, "")], "Nothing measured: " + why + ".")
        return
    mib = 4 if QUICK else 32
    files = gen_inputs(mib)
    k = 3 if QUICK else 7
    engines = {"ptybroker": lambda path: [BIN, "render", "--cols", "80", "--rows", "24", path],
               "anchor": lambda path: [anchor, path]}
    best = {}
    for _ in range(k):
        for fname, path in files.items():
            for name, argv in engines.items():
                ms = cpu_ms(argv(path))
                best[(fname, name)] = min(best.get((fname, name), 1e18), ms)
    rows = []
    labels = {"ascii.txt": "ASCII", "sgr.txt": "SGR", "screen.txt": "full-screen", "unicode.txt": "Unicode"}
    for fname, path in files.items():
        size = os.path.getsize(path) / 1e6
        ours, theirs = best[(fname, "ptybroker")], best[(fname, "anchor")]
        target = "≥ 2x" if fname in ("ascii.txt", "screen.txt") else "≥ 1.5x"
        rows.append((f"engine: {labels.get(fname, fname)}", f"{ours:.0f} ms ({size / ours * 1000:.0f} MB/s)",
                     f"alacritty_terminal {theirs:.0f} ms ({size / theirs * 1000:.0f} MB/s): {theirs / ours:.2f}x", target))
    section(
        title,
        rows,
        f"`ptybroker render --cols 80 --rows 24 FILE` beside `bench/anchor FILE` (alacritty_terminal 0.26, "
        f"80x24, default configuration, fed the file in 4 KiB chunks; its own Cargo project, built by this "
        f"section), on the {mib} MiB throughput inputs. Whole processes, both reading the file; best CPU time "
        f"(user + system, wait4) of {k} interleaved runs each. The ratio is the anchor's time over ptybroker's "
        "(higher is faster).",
    )


# ---- the whole system against the kernel (issue 19) ------------------------------

# The anchor: what any program reading a PTY gets here. It starts `cat FILE`
# on a new 80x24 PTY, drains the master with 64 KiB reads until the slave is
# gone, and reaps the child; it parses nothing.
DRAIN_C = r"""
#define _XOPEN_SOURCE 600
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
int main(int argc, char **argv) {
    static char buf[65536];
    struct winsize ws = {24, 80, 0, 0};
    int m, s, st;
    pid_t pid;
    ssize_t n;
    if (argc < 2) return 2;
    m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m < 0 || grantpt(m) || unlockpt(m)) return 1;
    ioctl(m, TIOCSWINSZ, &ws);
    pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        setsid();
        s = open(ptsname(m), O_RDWR);
        if (s < 0) _exit(127);
        ioctl(s, TIOCSCTTY, 0);
        dup2(s, 0); dup2(s, 1); dup2(s, 2);
        if (s > 2) close(s);
        close(m);
        execvp(argv[1], argv + 1);
        _exit(127);
    }
    for (;;) {
        n = read(m, buf, sizeof buf);
        if (n > 0 || (n < 0 && errno == EINTR)) continue;
        break;
    }
    waitpid(pid, &st, 0);
    return 0;
}
"""


def build_drain():
    """Compile the native reader with `cc -O2` into the run's temp dir;
    returns its path, or None when there is no C compiler."""
    cc = shutil.which("cc")
    if not cc:
        return None
    src = os.path.join(RUNTIME, "drain.c")
    exe = os.path.join(RUNTIME, "drain")
    with open(src, "w") as f:
        f.write(DRAIN_C)
    subprocess.run([cc, "-O2", "-o", exe, src], check=True)
    return exe


def machine_ticks():
    """All CPUs' ticks since boot: (total, idle + iowait)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v), v[3] + v[4]


def idle_during(fn):
    """fn()'s result and the machine's idle share while it ran."""
    total, idle = machine_ticks()
    out = fn()
    total2, idle2 = machine_ticks()
    return out, (idle2 - idle) / max(1, total2 - total)


def system_runs(path, drain, anchor):
    """Seconds for each of the readers to take `cat PATH` to its end (the
    native reader, ours, tmux, and alacritty_terminal's own PTY loop when
    `anchor` was built, else None), the daemon's CPU seconds (user +
    system) during its run, and the machine's idle share during the native
    run and during ours."""
    def run(argv):
        t = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - t
    native, native_idle = idle_during(lambda: run([drain, "cat", path]))
    pid = daemon_pid()
    ticks = cpu_ticks(pid)
    ours, ours_idle = idle_during(lambda: cat_through_ptybroker("sys", path))
    cpu = (cpu_ticks(pid) - ticks) / os.sysconf("SC_CLK_TCK")
    theirs = cat_through_tmux(path)
    alacritty = None
    if anchor:
        # Context only: a failing run costs its cell, not the section.
        try:
            alacritty = run([anchor, "--pty", path])
        except (subprocess.CalledProcessError, OSError) as e:
            print(f"bench/anchor --pty {path}: {e}", file=sys.stderr)
    return native, ours, theirs, cpu, native_idle, ours_idle, alacritty


def bench_system():
    drain = build_drain()
    if drain is None:
        section("Whole system against the kernel", [("native reader", "skipped", "no `cc` on this machine", "")], "")
        return
    mib = 4 if QUICK else 32
    rounds = 3 if QUICK else 9
    files = gen_inputs(mib)
    anchor, anchor_why = build_anchor()
    pb("start", "--session", "keep", "--", "cat")  # keeps the daemon up between runs
    t = {name: ([], [], [], [], [], [], []) for name in files}
    for _ in range(rounds):
        for name, path in files.items():
            for acc, secs in zip(t[name], system_runs(path, drain, anchor)):
                acc.append(secs)
    rows = []
    for name, path in files.items():
        size = os.path.getsize(path) / 1e6
        native, ours, theirs = (size / med(xs) for xs in t[name][:3])
        # Each round's three runs follow one another: the ratio is taken
        # within a round, then the median over rounds, so that the machine
        # slowing down between rounds moves both sides of a ratio.
        vs_native = med([n / o for n, o in zip(t[name][0], t[name][1])])
        vs_tmux = med([x / o for x, o in zip(t[name][2], t[name][1])])
        busy = med(t[name][3]) / med(t[name][1])
        idle_native, idle_ours = med(t[name][4]), med(t[name][5])
        # No terminal outruns the kernel: the native reader's own ratio to
        # tmux, round by round, is the most any reader could show against
        # tmux in this run; below 2x the 2x target is out of any reader's
        # reach.
        reach = med([x / n for x, n in zip(t[name][2], t[name][0])])
        ceiling = (f"; the native reader itself was {reach:.2f}x tmux"
                   + (", so 2x tmux is above the kernel's ceiling here" if reach < 2 else ""))
        # Another engine in its own terminal's reader, in the same rounds.
        alacritty = ""
        runs = [(n, a) for n, a in zip(t[name][0], t[name][6]) if a is not None]
        if runs:
            rate = size / med([a for _, a in runs])
            ratio = med([n / a for n, a in runs])
            alacritty = f"; alacritty_terminal's own PTY loop {rate:.0f} MB/s, {ratio:.2f}x native"
            if len(runs) < rounds:
                alacritty += f" ({len(runs)} of {rounds} runs)"
        elif anchor:
            alacritty = "; alacritty_terminal's own PTY loop failed every run"
        rows.append((
            f"whole system, {name}",
            f"{ours:.0f} MB/s: {vs_native:.2f}x native, {vs_tmux:.2f}x tmux",
            f"native reader {native:.0f} MB/s; tmux {theirs:.0f} MB/s{alacritty}; daemon busy {busy:.0%} of its run; "
            f"CPUs idle {idle_native:.0%} during the native run, {idle_ours:.0%} during ours{ceiling}",
            "≥ 0.85x native, ≥ 2x tmux",
        ))
    pb("kill-session", "--session", "keep", check=False)
    section(
        "Whole system against the kernel",
        rows,
        f"{mib} MiB generated inputs (as in Throughput), {rounds} rounds, the readers one after "
        "another in each round; rates are medians over rounds, ratios the median of each round's ratio. ptybroker: `pty/start` of `cat FILE` (80x24) and `pty/wait` for its exit, "
        "i.e. until the child exited and all its output is parsed, on a running daemon. Native reader: a C "
        "program (bench/bench.py's DRAIN_C, built here with `cc -O2`) that starts the same `cat` on an 80x24 "
        "PTY, drains the master with 64 KiB reads and parses nothing: the kernel's speed for any terminal. "
        "tmux: `tmux new-session -d -x 80 -y 24 'cat F; tmux wait-for -S done'` and `tmux wait-for done`. "
        "Daemon busy: its CPU time (user + system, /proc) over the run's wall time, for its reader and (in a "
        "flood) parser threads together; near 100% for one of them the emulator is the limit (the engine's "
        "speed, see Throughput), well below it the PTY is. CPUs idle: the whole machine's idle share "
        f"(/proc/stat, all {os.cpu_count()} CPUs) during the run. Near 0% during the native run, the kernel's "
        "PTY path (`cat`, the kernel worker that moves its output to the line discipline, the reader) "
        "keeps every CPU busy by itself: then whatever the emulator costs comes out of the same CPUs, "
        "and the ratio to native is bounded by the kernel's CPU time over the kernel's plus the emulator's, "
        "however the work is spread over threads. The native reader's own ratio to tmux (median of the "
        "rounds' ratios) is the most any terminal could show against tmux in the same run: where it is "
        "below 2x, so is every reader's. alacritty_terminal's own PTY loop (`bench/anchor --pty FILE`, "
        "run in the same rounds): its `tty` starts the same `cat` on an 80x24 PTY and its `EventLoop` "
        "thread reads and parses to the child's exit, as the alacritty terminal does; it puts another "
        "engine's whole system beside ours on the same CPUs."
        + (f" Not run: {anchor_why}." if anchor_why else ""),
    )


# ---- a person watching (issue 18) ---------------------------------------------

def bench_attach():
    n = 20
    text = "1+41"

    def steps():
        out = timed([BIN, "step", "--session", "x", text], n)
        last = pb("step", "--session", "x", text).stdout
        if "42" not in last:
            raise RuntimeError(f"step answered {last!r}")
        return out

    def viewers():
        return json.loads(pb("status", "--session", "x", "--json").stdout)["viewers"]

    def until(cond, limit=30):
        end = time.monotonic() + limit
        while not cond():
            if time.monotonic() > end:
                raise RuntimeError("attach bench: gave up waiting")
            time.sleep(0.02)

    # Big frames (200x50): a few dozen fill any socket buffer.
    pb("start", "--session", "x", "--cols", "200", "--rows", "50", "--", "python3", "-q")
    none = steps()
    pb("start", "--session", "v", "--cols", "80", "--rows", "24", "--", BIN, "attach", "--session", "x")
    until(lambda: viewers() == 1)
    reading = steps()
    pid = json.loads(pb("status", "--session", "v", "--json").stdout)["pid"]
    os.kill(pid, 19)  # SIGSTOP: the viewer reads nothing from here on
    pb("step", "--session", "x", "--max-wait", "60000",
       "import time\nfor i in range(80): print(str(i) * 190); time.sleep(0.03)\n")
    stalled = steps()
    still = viewers()
    t = time.monotonic()
    until(lambda: viewers() == 0)
    dropped = time.monotonic() - t
    os.kill(pid, 18)
    stop_all()
    section(
        "Step with a person watching (issue 18)",
        [
            ("python3 `1+41`: `ptybroker step`, no viewer", f"{med(none):.1f} ms", f"p95 {p(none, .95):.1f} ms", ""),
            ("the same, one `attach` viewer reading", f"{med(reading):.1f} ms", f"p95 {p(reading, .95):.1f} ms", "about the same"),
            ("the same, one viewer stopped (SIGSTOP), its buffer full", f"{med(stalled):.1f} ms", f"p95 {p(stalled, .95):.1f} ms; "
             f"{still} viewer attached after, dropped {dropped:.1f} s later", "no slower than none"),
        ],
        f"Median of {n} steps each, whole CLI process as above, in one run: no viewer, then a viewer (`ptybroker attach` "
        "inside another session) reading, then the same viewer stopped (SIGSTOP) while 80 frames of a 200x50 "
        "screen (up to 0.8 MB) filled its socket buffer. A stalled viewer is dropped once a frame has waited "
        "VIEWER_STALL (5 s) for it: the last column says it was still attached during the steps.",
    )


# ---- static build (issue 16) ---------------------------------------------------

STATIC_TARGET = "x86_64-unknown-linux-musl"


def build_static():
    """Build the static binary; returns (path, None) or (None, why not)."""
    sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True).stdout.strip()
    if not os.path.isdir(os.path.join(sysroot, "lib", "rustlib", STATIC_TARGET)):
        return None, f"the {STATIC_TARGET} target is not installed (`rustup target add {STATIC_TARGET}`)"
    with open(os.path.join(ROOT, "Makefile")) as f:
        has_make = any(l.startswith("static:") for l in f)
    if has_make:
        argv, env = ["make", "-s", "static"], os.environ
    else:
        argv = ["cargo", "build", "--release", "--locked", "--target", STATIC_TARGET]
        env = os.environ
        if not os.path.exists(os.path.join(ROOT, ".cargo", "config.toml")):
            # What .cargo/config.toml sets for the target: no dynamic section.
            env = dict(os.environ, RUSTFLAGS="-C relocation-model=static")
    r = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    path = os.path.join(ROOT, "target", STATIC_TARGET, "release", "ptybroker")
    if r.returncode != 0 or not os.path.exists(path):
        return None, f"`{' '.join(argv)}` failed: " + (r.stderr or r.stdout)[-200:].replace("\n", " ")
    return path, None


def cpu_ms(argv, env=ENV):
    """CPU time (user + system) of one whole process, in ms: steadier than
    wall time on a shared machine, where a run can wait for a core."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        pid = os.posix_spawnp(argv[0], argv, env, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
        _, status, ru = os.wait4(pid, 0)
    finally:
        os.close(devnull)
    if status != 0:
        raise RuntimeError(f"{argv} exited with status {status}")
    return (ru.ru_utime + ru.ru_stime) * 1000


def bench_static():
    title = "Static build (issue 16)"
    sbin, why = build_static()
    if sbin is None:
        section(title, [("static x86_64 build", "skipped", why, "")], "Nothing measured: " + why + ".")
        return
    # Each build talks to a daemon of its own (the same code as its client).
    sruntime = os.path.join(RUNTIME, "static")
    os.makedirs(sruntime, mode=0o700, exist_ok=True)
    builds = [("glibc", BIN, ENV, RUNTIME), ("static", sbin, dict(ENV, XDG_RUNTIME_DIR=sruntime), sruntime)]

    def run(b, *args):
        return subprocess.run([b[1], *args], env=b[2], capture_output=True, text=True, check=False)

    def stop(b):
        run(b, "kill-session", "--session", "x")
        run(b, "kill-session", "--session", "py")
        stop_daemon(b[3])

    rows = []
    n = 60 if QUICK else 300
    # Start-up and one-shot read, interleaved with /bin/true.
    for b in builds:
        stop(b)
        run(b, "start", "--session", "x", "--", "cat")
    t = {"true": []}
    for _ in range(n):
        t["true"] += timed(["/bin/true"], 1)
        for name, path, env, _ in builds:
            t.setdefault(f"{name} version", []).extend(timed([path, "--version"], 1, env))
            t.setdefault(f"{name} read", []).extend(timed([path, "read", "--session", "x"], 1, env))
    floor = med(t["true"])
    for what, target in [("version", ""), ("read", "static ≤ `/bin/true`")]:
        g, st = med(t[f"glibc {what}"]), med(t[f"static {what}"])
        label = "`ptybroker --version` (start-up, no daemon)" if what == "version" else "one-shot `ptybroker read` (idle `cat`)"
        rows.append((label, f"glibc {g:.2f} ms, static {st:.2f} ms",
                     f"`/bin/true` {floor:.2f} ms; static/glibc {st / g:.2f}x, static/true {st / floor:.2f}x", target))
    # step
    ns = 20 if QUICK else 60
    steps = {}
    for b in builds:
        run(b, "start", "--session", "py", "--", "python3", "-q")
    for _ in range(ns):
        for name, path, env, _ in builds:
            steps.setdefault(name, []).extend(timed([path, "step", "--session", "py", "1 + 41"], 1, env))
    g, st = med(steps["glibc"]), med(steps["static"])
    rows.append(("`ptybroker step` (python3, `1 + 41`)", f"glibc {g:.1f} ms, static {st:.1f} ms",
                 f"p95 {p(steps['glibc'], .95):.1f} / {p(steps['static'], .95):.1f} ms; static/glibc {st / g:.2f}x", "no slower"))
    for b in builds:
        stop(b)
    # Engine: render of each throughput input, best CPU time of k, interleaved.
    mib = 4 if QUICK else 32
    files = gen_inputs(mib)
    k = 3 if QUICK else 7
    best = {}
    for _ in range(k):
        for fname, path in files.items():
            for name, b, env, _ in builds:
                ms = cpu_ms([b, "render", "--cols", "80", "--rows", "24", path], env)
                best[(fname, name)] = min(best.get((fname, name), 1e18), ms)
    for fname, path in files.items():
        size = os.path.getsize(path) / 1e6
        g, st = best[(fname, "glibc")], best[(fname, "static")]
        rows.append((f"engine: `render` {fname}", f"glibc {g:.0f} ms ({size / g * 1000:.0f} MB/s), static {st:.0f} ms ({size / st * 1000:.0f} MB/s)",
                     f"static/glibc {st / g:.2f}x", "static ≤ 1.10x"))
    # Daemon memory with one idle session, each on a fresh daemon.
    mem = {}
    for b in builds:
        run(b, "start", "--session", "x", "--", "cat")
        pid = daemon_pid(b[3])
        time.sleep(0.3)
        mem[b[0]] = (rss_kib(pid), status_kib(pid, "RssAnon"), pss_kib(pid))
        stop(b)
    (gr, ga, gp), (sr, sa, sp) = mem["glibc"], mem["static"]
    rows.append(("daemon with one idle session", f"glibc RSS {gr} KiB (anonymous {ga}, PSS {gp}), static RSS {sr} KiB (anonymous {sa}, PSS {sp})",
                 "", "anonymous ≤ 256 KiB"))
    for name, path, _, _ in builds:
        dyn = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
        has_dyn = "Dynamic section" in dyn
        needed = [l.split("[", 1)[1].rstrip("]") for l in dyn.splitlines() if "(NEEDED)" in l]
        rows.append((f"{name} binary", f"{os.path.getsize(path) / 1e6:.2f} MB ({os.path.getsize(path)} bytes)",
                     ("dynamic section, needs " + ", ".join(needed)) if has_dyn else "no dynamic section",
                     "static ≤ 1.4 MB, no dynamic section" if name == "static" else ""))
    section(
        title,
        rows,
        f"The glibc build (target/release) beside the static one (`make static`: target/{STATIC_TARGET}/release, "
        "musl, non-PIE, aborting on panic), each client talking to a daemon of its own build, in the same run. Start-up and one-shot "
        f"`read`: whole processes as in the one-shot section, median of {n}, interleaved with `/bin/true`. `step`: "
        f"median of {ns}, interleaved. Engine: `render --cols 80 --rows 24` of the {mib} MiB throughput inputs, "
        f"best CPU time (user + system) of {k} interleaved runs each. Memory: a fresh daemon of each build with "
        "one idle `cat` session, from /proc. `readelf -d` for the dynamic section.",
    )


# ---- agent tasks (issue 15) ------------------------------------------------------

def bench_tasks():
    sys.dont_write_bytecode = True  # no bench/__pycache__ in the tree
    import tasks  # bench/tasks.py: the task set, its three drivers and their counts
    rows, notes = tasks.run(BIN, ENV, RUNTIME, ROOT)
    section("Agent tasks (issue 15)", rows, notes)


def write_report():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    tv = subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout.strip()
    lines = [
        "# Benchmarks",
        "",
        "Regenerated by `make bench` (bench/bench.py). Shared, noisy machines: read medians, not single runs.",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, {cpu}; {platform.system()} {platform.release()}; {tv}; "
        f"{time.strftime('%Y-%m-%d')}{' (--quick)' if QUICK else ''}.",
        "",
    ]
    for title, rows, notes in SECTIONS:
        lines += [f"## {title}", "", notes, "", "| what | ptybroker | beside it | target |", "|---|---|---|---|"]
        lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
        lines.append("")
    if ONLY is None or "--out" in sys.argv:
        with open(OUT, "w") as f:
            f.write("\n".join(lines))
    print("\n".join(lines))


def main():
    if not shutil.which("tmux"):
        sys.exit("bench needs tmux")
    benches = {"binary": bench_binary, "calls": bench_calls, "step": bench_step, "premature": bench_premature,
               "families": bench_families, "remote": bench_remote, "probe": bench_probe, "memory": bench_memory,
               "throughput": bench_throughput, "engine": bench_engine, "system": bench_system, "static": bench_static,
               "tasks": bench_tasks, "attach": bench_attach}
    unknown = [n for n in ONLY or [] if n not in benches]
    if unknown:
        sys.exit(f"unknown section(s) {', '.join(unknown)}; known: {', '.join(benches)}")
    try:
        for name, b in benches.items():
            if ONLY is None or name in ONLY:
                # Each section starts with no sessions and no tmux server, and
                # one that fails is reported as such; the others still run.
                try:
                    b()
                except Exception as e:  # noqa: BLE001 (a bench reports, it does not stop)
                    why = f"{type(e).__name__}: {e}"[:300]
                    print(f"section {name} failed: {why}", file=sys.stderr)
                    section(f"Section `{name}` failed", [(name, "failed", why, "")], "This run did not measure it.")
                stop_all()
    finally:
        stop_all()
        shutil.rmtree(RUNTIME, ignore_errors=True)
    write_report()


if __name__ == "__main__":
    main()
