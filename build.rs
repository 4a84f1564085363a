//! Link settings for glibc targets: the unwinder statically, the
//! relocations packed, and identical functions folded.
//!
//! ## Relocations
//!
//! A position-independent executable carries one 24-byte `R_*_RELATIVE`
//! entry per pointer in its data (vtables, string tables): about 47 KB in
//! ptybroker, which the dynamic loader also reads at every start. With
//! `-z pack-relative-relocs` the linker writes them as a DT_RELR bitmap of a
//! few hundred bytes instead. glibc reads DT_RELR from 2.36 on, and such a
//! binary names the version `GLIBC_ABI_DT_RELR`, so an older glibc refuses
//! it with a clear message rather than misloading it. We ask for it only
//! when building on the machine the binary is for (not cross-compiling) and
//! its glibc is 2.36 or later; both lld and GNU ld (2.38 on) understand it.
//!
//! ## Unwinder
//!
//! Panics unwind (see the release profile in Cargo.toml), so std needs an
//! unwinder; on `*-linux-gnu` it asks for `-lgcc_s`, the shared libgcc, which
//! would make the binary depend on a library beyond libc. GCC ships the same
//! unwinder as a static archive, `libgcc_eh.a`. When the C compiler knows
//! one, we put a one-line linker script named `libgcc_s.so` in OUT_DIR that
//! names the archive (`INPUT("/path/to/libgcc_eh.a")`) and put that
//! directory first on the library path:
//! the linker then takes the unwinder from the archive (about 20 KB of code)
//! and the binary needs libc alone. Without `libgcc_eh.a` (or, when
//! cross-compiling, without a C compiler for the target in `CC_<target>` or
//! `TARGET_CC`) nothing changes.
//!
//! ## Identical code folding
//!
//! `--icf=all` makes the linker keep one copy of functions whose code came
//! out identical (generic instances over types of one layout, drop glue):
//! about 10 KB here. Rust functions carry `unnamed_addr`, so no function's
//! address is relied upon to be unique; lld leaves out of the folding every
//! function whose unwind entry names a landing-pad table, so unwinding is
//! untouched. lld, gold and mold know the option; GNU ld (bfd) refuses it and
//! the link fails. Which linker a glibc build uses depends on the toolchain
//! (rustc 1.90 on x86_64-unknown-linux-gnu links with its own rust-lld, other
//! targets and older toolchains with the C compiler's default, usually bfd)
//! and on the user's settings (`-C linker`, `-C link-self-contained`,
//! `-C link-arg=-fuse-ld=...`, cargo's `target.<triple>.linker`). Rather than
//! guess from those, we ask the linker: link an empty program with the same
//! rustc, target, flags and linker plus the option (a fraction of a second),
//! and pass the option on only if that link succeeds. The static musl builds
//! always link with rust-lld and set it in .cargo/config.toml.
//!
//! The static musl builds (`make static`, settings in .cargo/config.toml)
//! need none of this and return at once: musl targets link with crt-static,
//! and rustc then takes the unwinder from LLVM's `libunwind.a` among the
//! self-contained objects rustup installs with the target (beside musl's
//! `libc.a` and crt files), so panics unwind there too, with no C
//! toolchain for the target. They are built non-PIE (relocation-model
//! static) so the file has no dynamic section at all; config.toml says why.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let var = |k: &str| env::var(k).unwrap_or_default();
    let static_crt = var("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|f| f == "crt-static");
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" || static_crt {
        return;
    }
    let target = var("TARGET");
    let cross = var("HOST") != target;
    if !cross && glibc_reads_relr() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    if linker_folds(&target) {
        println!("cargo:rustc-link-arg-bins=-Wl,--icf=all");
    }
    // The C compiler for the target, as the `cc` crate would pick it. When
    // cross-compiling, the host's `cc` would name the host's archive: without
    // a compiler for the target, leave the unwinder shared.
    let mut names = vec![
        format!("CC_{target}"),
        format!("CC_{}", target.replace('-', "_")),
        "TARGET_CC".to_string(),
    ];
    if !cross {
        names.push("CC".into());
    }
    for name in &names {
        println!("cargo:rerun-if-env-changed={name}");
    }
    let cc = match names.iter().find_map(|n| env::var(n).ok()) {
        Some(cc) => cc,
        None if cross => return,
        None => "cc".into(),
    };
    let Ok(out) = Command::new(&cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
    else {
        return;
    };
    let found = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    // `-print-file-name` echoes the bare name when it finds nothing.
    if !out.status.success() || !found.is_absolute() || !found.exists() {
        return;
    }
    // A compiler upgrade moves the archive: link against the one there now.
    println!("cargo:rerun-if-changed={}", found.display());
    let dir = PathBuf::from(var("OUT_DIR")).join("static-unwind");
    let script = dir.join("libgcc_s.so");
    if std::fs::create_dir_all(&dir).is_ok()
        && std::fs::write(&script, format!("INPUT({})\n", quote(&found))).is_ok()
    {
        println!("cargo:rustc-link-search=native={}", dir.display());
    }
}

/// Whether this machine's glibc is 2.36 or later (`getconf` prints
/// `glibc 2.36`), the first to read DT_RELR.
fn glibc_reads_relr() -> bool {
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut nums = text
        .trim()
        .strip_prefix("glibc ")
        .unwrap_or("")
        .split('.')
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let (major, minor) = (nums.next().unwrap_or(0), nums.next().unwrap_or(0));
    out.status.success() && (major, minor) >= (2, 36)
}

/// Whether the linker this build uses accepts `--icf=all`: an empty program
/// linked with it, with the same rustc, target, flags and linker as the
/// binary's.
fn linker_folds(target: &str) -> bool {
    for name in ["RUSTC_LINKER", "CARGO_ENCODED_RUSTFLAGS"] {
        println!("cargo:rerun-if-env-changed={name}");
    }
    let (Some(rustc), Some(out)) = (env::var_os("RUSTC"), env::var_os("OUT_DIR")) else {
        return false;
    };
    let dir = PathBuf::from(out).join("icf-probe");
    let src = dir.join("probe.rs");
    if std::fs::create_dir_all(&dir).is_err() || std::fs::write(&src, "fn main() {}\n").is_err() {
        return false;
    }
    let mut cmd = Command::new(rustc);
    cmd.arg("--target").arg(target);
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    cmd.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    if let Ok(linker) = env::var("RUSTC_LINKER") {
        cmd.arg("-C").arg(format!("linker={linker}"));
    }
    cmd.args(["-C", "link-arg=-Wl,--icf=all", "-o"])
        .arg(dir.join("probe"))
        .arg(&src)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    cmd.status().is_ok_and(|s| s.success())
}

/// A path as a linker-script file name (quoted: paths may hold spaces).
fn quote(p: &Path) -> String {
    format!("\"{}\"", p.display())
}
