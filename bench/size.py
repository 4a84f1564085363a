#!/usr/bin/env python3
"""`make size`: where the bytes of the release binary go, per crate and per
feature area.

Usage: bench/size.py UNSTRIPPED [STRIPPED]

UNSTRIPPED is a release build with symbols kept and v0 symbol mangling
(`make size` builds one in target/size with CARGO_PROFILE_RELEASE_STRIP=false
and RUSTFLAGS='-C symbol-mangling-version=v0'): v0 names keep generic
arguments, so `drop_in_place::<ptybroker::session::Session>` or a thread
body `__rust_begin_short_backtrace::<ptybroker::server::...>` can be charged
to the module that caused it. Same profile otherwise, so the code is the code
of the stripped binary.

How a symbol is charged (first rule that matches its demangled name):
  1. it names a ptybroker path anywhere: the module of the first one (our
     code, our closures, std generics instantiated for our types);
  2. it names a dependency crate: that crate;
  3. std's backtrace printer (gimli, addr2line, miniz_oxide, rustc_demangle,
     object, backtrace_rs): "std: backtrace" -- the default panic hook's
     RUST_BACKTRACE support, linked as long as panics unwind;
  4. core::fmt / float formatting: "std: fmt"; panicking: "std: panic";
     other std/core/alloc: "std: other";
  5. no Rust path (C: the static unwinder from libgcc_eh, libc on musl): "C".
Code (`.text`) and named read-only data (`.rodata` symbols: unicode-width's
tables, serde_json's) are counted by symbol. String literals have no symbol;
the "strings" column is the literals of each module's source that occur in
`.rodata` (help text, tool descriptions, messages), each counted once.
Numbers are estimates: inlining moves code into its caller, and padding,
anonymous constants and sections without symbols (.eh_frame,
.gcc_except_table, relocations) are shown per section, not per area.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DEPS = ["serde_json", "serde_core", "serde", "regex_lite", "unicode_width", "rustix",
        "lexopt", "memchr", "itoa", "zmij", "ryu", "linux_raw_sys", "bitflags"]
# Small crates serde_json pulls in are shown with it.
DEP_AREA = {"serde_core": "serde_json", "serde": "serde_json", "memchr": "serde_json",
            "itoa": "serde_json", "zmij": "serde_json", "ryu": "serde_json",
            "linux_raw_sys": "rustix", "bitflags": "rustix"}
BACKTRACE = ["gimli", "addr2line", "miniz_oxide", "rustc_demangle", "object", "backtrace_rs",
             "adler2", "adler"]

# Our modules, grouped into feature areas (module path after `ptybroker::`).
AREAS = [
    ("cli help/spec/completions/guide", ["cli::help", "cli::spec", "cli::complete", "guide"]),
    ("cli verbs", ["cli"]),
    ("mcp", ["mcp"]),
    ("driver (JSON Lines)", ["driver"]),
    ("vt engine", ["vt"]),
    ("settle", ["settle"]),
    ("server/rpc/client", ["server", "rpc", "jsonrpc", "client", "auth"]),
    ("session/ops/pty", ["session", "manager", "ops", "pty", "sync", "limits", "params",
                         "procstat", "status"]),
    ("text/frame/keys/record", ["text", "lines", "frame", "blocks", "keys", "record", "replay",
                                "transcript"]),
    ("json! builder", ["json"]),
    ("main", ["main", ""]),
]


def source_modules():
    """Module path (as in symbols) -> source file, for every file under src/."""
    mods = {}
    src = os.path.join(ROOT, "src")
    for dirpath, _, files in sorted(os.walk(src)):
        for f in sorted(files):
            if f.endswith(".rs"):
                rel = os.path.relpath(os.path.join(dirpath, f), src)[:-3].replace(os.sep, "::")
                rel = re.sub(r"(^|::)mod$", "", rel)
                if rel == "vt::lib":
                    rel = "vt"
                mods["main" if rel in ("lib", "main") else rel] = os.path.join(dirpath, f)
    return mods


MODULES = source_modules()


def area_of_module(mod):
    for area, prefixes in AREAS:
        for p in prefixes:
            if mod == p or mod.startswith(p + "::"):
                return area
    return "ptybroker: other"


def charge(name):
    """(area, detail) for one demangled symbol name."""
    # The emulator's crate (src/vt) is charged as the module `vt` was.
    name = re.sub(r"\bptybroker_vt::", "ptybroker::vt::", name)
    m = re.search(r"\bptybroker::((?:[a-z_][a-z0-9_]*::)*)", name)
    if m:
        parts = [p for p in m.group(1).split("::") if p]
        # The longest prefix that is a source file (a function or type
        # name may follow it).
        mod = "main"
        for i in range(len(parts), 0, -1):
            if "::".join(parts[:i]) in MODULES:
                mod = "::".join(parts[:i])
                break
        return area_of_module(mod), "ptybroker::" + mod
    for crate in DEPS:
        if re.search(r"\b%s::" % crate, name):
            area = DEP_AREA.get(crate, crate)
            return area, crate
    for crate in BACKTRACE:
        if re.search(r"\b%s::" % crate, name):
            return "std: backtrace", crate
    if re.search(r"\b(core|std|alloc)::", name):
        if re.search(r"core::fmt::float|flt2dec|core::num::fmt|dec2flt", name):
            return "std: fmt", "float"
        if re.search(r"\bcore::fmt\b|\bstd::io::Write\b.*write_fmt|\balloc::fmt\b", name):
            return "std: fmt", "fmt"
        if re.search(r"panick|panic::|unwind|begin_panic|\brust_panic", name):
            return "std: panic", "panic"
        return "std: other", "std"
    if name.startswith(("__rust", "rust_", "_ZN")):
        return "std: other", "std"
    return "C", "C"


def symbols(path):
    out = subprocess.run(["nm", "-S", "--size-sort", "-C", path], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split(" ", 3)
        if len(parts) == 4:
            yield int(parts[1], 16), parts[2], parts[3]


def sections(path):
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True, check=True).stdout
    res = {}
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+\S+\s+(\S+)\s+(\S+)", line)
        if m and m.group(2) != "NULL":
            res[m.group(1)] = (int(m.group(4), 16), int(m.group(3), 16), m.group(2))
    return res


def literals(text):
    """String literals of Rust source, roughly decoded."""
    for m in re.finditer(r'r(#*)"(.*?)"\1|"((?:[^"\\]|\\.)*)"', text, re.S):
        if m.group(2) is not None:
            yield m.group(2)
            continue
        s = m.group(3)
        s = re.sub(r"\\\n\s*", "", s)
        s = re.sub(r"\\u\{([0-9a-fA-F]+)\}", lambda x: chr(int(x.group(1), 16)), s)
        s = s.replace("\\n", "\n").replace("\\t", "\t").replace('\\"', '"').replace("\\\\", "\\")
        yield s


def string_bytes(rodata):
    """Per source module: bytes of its literals found in .rodata (each
    literal once; format strings are split at their {} holes)."""
    seen = set()
    per = {}
    for mod, path in MODULES.items():
        if path.endswith("_tests.rs"):
            continue
        with open(path, encoding="utf-8") as fh:
            # Unit tests are not in the binary.
            text = fh.read().split("#[cfg(test)]\nmod tests")[0]
        for lit in literals(text):
            for piece in re.split(r"\{[^{}]*\}", lit):
                b = piece.replace("{{", "{").replace("}}", "}").encode()
                if len(b) < 8 or b in seen or b not in rodata:
                    continue
                seen.add(b)
                per[mod] = per.get(mod, 0) + len(b)
    return per


def fmt(n):
    return f"{n / 1024:7.1f} KiB"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    secs = sections(path)
    with open(path, "rb") as fh:
        data = fh.read()
    ro_off, ro_size = secs[".rodata"][1], secs[".rodata"][0]
    rodata = data[ro_off:ro_off + ro_size]

    code, ro = {}, {}
    mods = {}
    for size, kind, name in symbols(path):
        area, detail = charge(name)
        if kind in "tTwW":
            code[area] = code.get(area, 0) + size
            mods[detail] = mods.get(detail, 0) + size
        elif kind in "rR":
            ro[area] = ro.get(area, 0) + size
    strings = {}
    for mod, n in string_bytes(rodata).items():
        area = area_of_module(mod)
        strings[area] = strings.get(area, 0) + n
        mods["ptybroker::" + mod] = mods.get("ptybroker::" + mod, 0)

    if len(sys.argv) > 2:
        print(f"stripped binary: {os.path.getsize(sys.argv[2])} bytes")
    print(f"unstripped: {path}\n")
    print("Sections (bytes in the file, stripped or not):")
    for name in [".text", ".rodata", ".eh_frame", ".eh_frame_hdr", ".gcc_except_table",
                 ".rela.dyn", ".data.rel.ro", ".data", ".dynsym", ".dynstr"]:
        if name in secs:
            print(f"  {name:20} {secs[name][0]:9}")
    print()
    areas = sorted(set(code) | set(ro) | set(strings), key=lambda a: -(code.get(a, 0) + ro.get(a, 0) + strings.get(a, 0)))
    print(f"  {'area':34} {'code':>11} {'tables':>11} {'strings':>11} {'total':>11}")
    tc = tr = ts = 0
    for a in areas:
        c, r, s = code.get(a, 0), ro.get(a, 0), strings.get(a, 0)
        tc, tr, ts = tc + c, tr + r, ts + s
        print(f"  {a:34} {fmt(c)} {fmt(r)} {fmt(s)} {fmt(c + r + s)}")
    print(f"  {'sum':34} {fmt(tc)} {fmt(tr)} {fmt(ts)} {fmt(tc + tr + ts)}")
    text = secs[".text"][0]
    print(f"  (.text not in any symbol: {fmt(text - tc).strip()}; .rodata not counted above: "
          f"{fmt(ro_size - tr - ts).strip()}: std's and deps' strings, constants, padding)")
    print("\nOur code per module:")
    for m, n in sorted(mods.items(), key=lambda x: -x[1]):
        if m.startswith("ptybroker::") and n:
            print(f"  {m:34} {fmt(n)}")


if __name__ == "__main__":
    main()
