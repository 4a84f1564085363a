//! Link the unwinder statically on glibc targets.
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
    // The C compiler for the target, as the `cc` crate would pick it. When
    // cross-compiling, the host's `cc` would name the host's archive: without
    // a compiler for the target, leave the unwinder shared.
    let target = var("TARGET");
    let cross = var("HOST") != target;
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

/// A path as a linker-script file name (quoted: paths may hold spaces).
fn quote(p: &Path) -> String {
    format!("\"{}\"", p.display())
}
