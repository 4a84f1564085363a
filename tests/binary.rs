//! The binary needs libc alone (issue 8): std's unwinder comes from GCC's
//! static `libgcc_eh.a` (see build.rs), not from the shared libgcc_s.

use std::process::Command;

fn needed_libraries(path: &str) -> Vec<String> {
    let out = Command::new("readelf")
        .args(["-d", path])
        .output()
        .expect("readelf (binutils) runs");
    assert!(out.status.success(), "readelf -d {path} failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| Some(l.split('[').nth(1)?.trim_end_matches(']').to_string()))
        .collect()
}

#[test]
fn needs_no_shared_library_beyond_libc() {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let eh = Command::new(cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    if !eh.starts_with('/') {
        eprintln!("no libgcc_eh.a here: build.rs leaves the unwinder shared, nothing to check");
        return;
    }
    let needed = needed_libraries(env!("CARGO_BIN_EXE_ptybroker"));
    assert!(!needed.is_empty(), "a dynamic binary names libc");
    for lib in &needed {
        assert!(
            lib.starts_with("libc.so") || lib.starts_with("ld-linux"),
            "the binary needs {lib} (all: {needed:?})"
        );
    }
}

#[test]
fn a_panicking_thread_still_unwinds() {
    // The daemon relies on unwinding to keep a bug in one thread from ending
    // every session. Test binaries are linked like ptybroker (build.rs applies
    // to every target of the package), so the static unwinder is the one here.
    let caught = std::thread::spawn(|| {
        let v: Vec<u8> = Vec::new();
        v[std::hint::black_box(3)]
    })
    .join();
    assert!(caught.is_err());
}

#[test]
fn relocations_are_packed_where_glibc_reads_them() {
    // build.rs asks for DT_RELR when this machine's glibc (2.36 on) reads it:
    // a few hundred bytes instead of 24 per pointer in the data.
    let out = Command::new("getconf").arg("GNU_LIBC_VERSION").output();
    let version = out
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let mut nums = version
        .strip_prefix("glibc ")
        .unwrap_or("")
        .split('.')
        .map(|n| n.parse::<u32>().unwrap_or(0));
    if (nums.next().unwrap_or(0), nums.next().unwrap_or(0)) < (2, 36) {
        eprintln!("glibc {version:?} does not read DT_RELR: nothing to check");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_ptybroker");
    let dynamic = Command::new("readelf").args(["-d", bin]).output().unwrap();
    let dynamic = String::from_utf8_lossy(&dynamic.stdout);
    assert!(
        dynamic.contains("(RELR)"),
        "no DT_RELR in {bin}:\n{dynamic}"
    );
    // What is left as RELA entries is a handful (GOT slots), not thousands.
    let relocs = Command::new("readelf").args(["-r", bin]).output().unwrap();
    let relative = String::from_utf8_lossy(&relocs.stdout)
        .lines()
        .filter(|l| l.contains("R_X86_64_RELATIVE") || l.contains("R_AARCH64_RELATIV"))
        .count();
    assert!(
        relative < 200,
        "{relative} RELATIVE relocations left unpacked"
    );
}

#[test]
fn identical_functions_are_folded_where_the_linker_can() {
    // build.rs passes --icf=all when the linker takes it (lld here: rustc's
    // own on x86_64 glibc). Folded functions keep their symbols, which then
    // share one address: a few dozen do without folding (std's aliases),
    // thousands with it in this unoptimised build.
    let bin = env!("CARGO_BIN_EXE_ptybroker");
    let comment = Command::new("readelf")
        .args(["-p", ".comment", bin])
        .output()
        .expect("readelf (binutils) runs");
    if !String::from_utf8_lossy(&comment.stdout).contains("Linker: LLD") {
        eprintln!("not linked by lld: build.rs may rightly leave folding off");
        return;
    }
    let syms = Command::new("readelf").args(["-sW", bin]).output().unwrap();
    let mut addrs: Vec<&str> = Vec::new();
    let text = String::from_utf8_lossy(&syms.stdout);
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() >= 8 && f[3] == "FUNC" && f[2] != "0" {
            addrs.push(f[1]);
        }
    }
    let total = addrs.len();
    if total == 0 {
        eprintln!("no symbols (a stripped release build): nothing to count");
        return;
    }
    addrs.sort_unstable();
    addrs.dedup();
    let shared = total - addrs.len();
    assert!(
        shared * 20 > total,
        "{shared} of {total} functions share an address: no --icf=all?"
    );
}
