//! `ptybroker install --host DEST [--path P]`: put a ptybroker that will
//! run on DEST there, explicitly (nothing else ever copies a binary). The
//! remote's architecture (`uname -m`) and C library pick the build: this
//! binary when it is static for that architecture; else a static build
//! for it beside this binary (`ptybroker-ARCH-linux-musl`) or in the
//! current directory's `target/ARCH-unknown-linux-musl/release/` (what
//! `make static TARGET=...` makes); else this binary when architecture and
//! C library match; else a refusal that names what to build. The copy
//! goes over the destination's ssh master, to a temporary file that is
//! made executable and renamed into place, and is checked by running
//! `P --version` there.

use std::path::{Path, PathBuf};

use crate::limits;
use crate::remote::{self, sh_quote, Dest, Failed, Link};

/// Where `install` puts the binary unless told otherwise.
pub const DEFAULT_PATH: &str = "~/.local/bin/ptybroker";

/// An ELF executable's architecture and how it links, as far as `install`
/// cares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Elf {
    /// `uname -m`'s word for the machine: `x86_64`, `aarch64`, ...
    pub arch: &'static str,
    /// Its program interpreter (`/lib64/ld-linux-x86-64.so.2`), `None`
    /// for a static binary.
    pub interp: Option<String>,
}

/// The C library family of a dynamic binary or a host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Libc {
    Glibc,
    Musl,
    Unknown,
}

impl Libc {
    fn name(self) -> &'static str {
        match self {
            Libc::Glibc => "glibc",
            Libc::Musl => "musl",
            Libc::Unknown => "an unknown C library",
        }
    }
}

impl Elf {
    /// Read the ELF header and program headers of `bytes`.
    pub fn parse(bytes: &[u8]) -> Result<Elf, String> {
        if bytes.len() < 52 || &bytes[..4] != b"\x7fELF" {
            return Err("not an ELF executable".into());
        }
        let wide = match bytes[4] {
            1 => false,
            2 => true,
            _ => return Err("an ELF file of unknown class".into()),
        };
        let little = match bytes[5] {
            1 => true,
            2 => false,
            _ => return Err("an ELF file of unknown byte order".into()),
        };
        let num = |at: usize, len: usize| -> Result<u64, String> {
            let b = bytes
                .get(at..at + len)
                .ok_or_else(|| "a truncated ELF file".to_string())?;
            let mut v = 0u64;
            for i in 0..len {
                let byte = if little { b[len - 1 - i] } else { b[i] };
                v = (v << 8) | u64::from(byte);
            }
            Ok(v)
        };
        let machine = num(18, 2)?;
        let arch = match (machine, wide) {
            (0x3e, true) => "x86_64",
            (0x03, false) => "i686",
            (0xb7, true) => "aarch64",
            (0x28, false) => "armv7l",
            (0xf3, true) => "riscv64",
            (0x15, true) => "ppc64le",
            (0x16, true) => "s390x",
            _ => return Err(format!("an ELF file for machine {machine:#x}")),
        };
        let (phoff, phentsize, phnum) = if wide {
            (num(32, 8)?, num(54, 2)?, num(56, 2)?)
        } else {
            (num(28, 4)?, num(42, 2)?, num(44, 2)?)
        };
        let mut interp = None;
        for i in 0..phnum {
            let at = usize::try_from(phoff + i * phentsize).map_err(|e| e.to_string())?;
            // PT_INTERP: the path of the dynamic loader.
            if num(at, 4)? != 3 {
                continue;
            }
            let (off, size) = if wide {
                (num(at + 8, 8)?, num(at + 32, 8)?)
            } else {
                (num(at + 4, 4)?, num(at + 16, 4)?)
            };
            let (off, size) = (
                usize::try_from(off).map_err(|e| e.to_string())?,
                usize::try_from(size).map_err(|e| e.to_string())?,
            );
            let raw = bytes
                .get(off..off.saturating_add(size))
                .ok_or("a truncated ELF file")?;
            let raw = raw.split(|b| *b == 0).next().unwrap_or_default();
            interp = Some(String::from_utf8_lossy(raw).into_owned());
        }
        Ok(Elf { arch, interp })
    }

    /// The C library a dynamic binary was linked against.
    pub fn libc(&self) -> Libc {
        match &self.interp {
            Some(i) if i.contains("ld-musl") => Libc::Musl,
            Some(i) if i.contains("ld-linux") => Libc::Glibc,
            _ => Libc::Unknown,
        }
    }
}

/// `uname -m` in the words [`Elf::parse`] uses (`arm64` is `aarch64`).
pub fn normal_arch(uname: &str) -> String {
    match uname.trim() {
        "arm64" => "aarch64".into(),
        "amd64" => "x86_64".into(),
        "i386" | "i486" | "i586" => "i686".into(),
        a if a.starts_with("armv7") || a.starts_with("armv8l") => "armv7l".into(),
        a => a.into(),
    }
}

/// The Rust target `make static TARGET=...` takes for `arch`.
pub fn musl_target(arch: &str) -> String {
    match arch {
        "armv7l" => "armv7-unknown-linux-musleabihf".into(),
        a => format!("{a}-unknown-linux-musl"),
    }
}

/// A binary that could be copied, and what it is.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub path: PathBuf,
    pub elf: Elf,
    /// How it was found, for the report: "this binary", "a static build".
    pub what: &'static str,
}

/// Pick the binary for a remote of `arch` and `libc`, among `this` (the
/// running binary) and `static_builds` (found for that architecture), in
/// the order the module header gives; `Err` says what to build.
pub fn choose(
    arch: &str,
    libc: Libc,
    this: &Candidate,
    static_builds: &[Candidate],
) -> Result<Candidate, String> {
    if this.elf.interp.is_none() && this.elf.arch == arch {
        return Ok(this.clone());
    }
    if let Some(c) = static_builds
        .iter()
        .find(|c| c.elf.interp.is_none() && c.elf.arch == arch)
    {
        return Ok(c.clone());
    }
    if this.elf.arch == arch && libc != Libc::Unknown && this.elf.libc() == libc {
        return Ok(this.clone());
    }
    let target = musl_target(arch);
    Err(format!(
        "no ptybroker here runs on a {arch} host with {}: this one is for {} ({}); build a static one with `make static TARGET={target}` and run install again from that directory, or put it beside this binary as ptybroker-{arch}-linux-musl",
        libc.name(),
        this.elf.arch,
        match this.elf.interp {
            None => "static".to_string(),
            Some(_) => this.elf.libc().name().to_string(),
        }
    ))
}

/// Static builds for `arch` where `install` looks: beside `exe`, and in
/// the current directory's `make static` output.
fn static_builds(exe: &Path, arch: &str) -> Vec<Candidate> {
    let mut places = Vec::new();
    if let Some(dir) = exe.parent() {
        places.push(dir.join(format!("ptybroker-{arch}-linux-musl")));
    }
    places.push(
        Path::new("target")
            .join(musl_target(arch))
            .join("release/ptybroker"),
    );
    places
        .into_iter()
        .filter_map(|p| {
            let bytes = std::fs::read(&p).ok()?;
            let elf = Elf::parse(&bytes).ok()?;
            let path = std::fs::canonicalize(&p).unwrap_or(p);
            Some(Candidate {
                path,
                elf,
                what: "a static build",
            })
        })
        .collect()
}

/// What the remote said about itself.
struct Host {
    arch: String,
    libc: Libc,
}

/// One shell command on the remote, through the master, run by `sh`
/// whatever the user's login shell is.
fn remote_sh(
    link: &Link,
    script: &str,
    input: &[u8],
    limit: std::time::Duration,
) -> Result<remote::Output, Failed> {
    let mut cmd = link.ssh();
    cmd.args(["-T", "--", &link.dest.host])
        .arg(format!("sh -c {}", sh_quote(script)));
    remote::run_bounded(cmd, input, limit)
        .map_err(|e| e.line(&format!("{} did not finish", link.dest.shown), limit, ""))
}

fn probe(link: &Link) -> Result<Host, Failed> {
    let out = remote_sh(
        link,
        "uname -m; if ls /lib/ld-musl-* >/dev/null 2>&1; then echo musl; \
         elif ldd --version 2>&1 | grep -qi -e glibc -e 'gnu libc'; then echo glibc; \
         else echo unknown; fi",
        b"",
        limits::SSH_SETUP_WAIT,
    )?;
    let mut lines = out.stdout.lines().map(str::trim).filter(|l| !l.is_empty());
    match (out.ok, lines.next(), lines.next()) {
        (true, Some(arch), Some(libc)) => Ok(Host {
            arch: normal_arch(arch),
            libc: match libc {
                "musl" => Libc::Musl,
                "glibc" => Libc::Glibc,
                _ => Libc::Unknown,
            },
        }),
        _ if out.code == Some(255) => Err(remote::explain_ssh(&link.dest.shown, &out.stderr)),
        _ => Err(format!(
            "cannot tell what {} runs (uname -m failed): {}",
            link.dest.shown,
            out.stderr.trim()
        )),
    }
}

/// `path` as a word for the remote `sh`: `~/x` becomes `"$HOME"/x`.
fn remote_path(path: &str) -> String {
    match path.strip_prefix("~/") {
        Some(rest) => format!("\"$HOME\"/{}", sh_quote(rest)),
        None => sh_quote(path),
    }
}

/// Install on `dest` at `path`; returns what to tell the user.
pub fn install(dest: &Dest, path: &str) -> Result<String, Failed> {
    if path.trim().is_empty() {
        return Err("--path needs a path on the remote host".into());
    }
    let link = Link::new(dest, &crate::server::runtime_dir());
    link.open()?;
    let host = probe(&link)?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find my own executable: {e}"))?;
    let bytes = std::fs::read(&exe).map_err(|e| format!("cannot read {}: {e}", exe.display()))?;
    let this = Candidate {
        elf: Elf::parse(&bytes).map_err(|e| format!("{}: {e}", exe.display()))?,
        path: exe.clone(),
        what: "this binary",
    };
    let chosen = choose(
        &host.arch,
        host.libc,
        &this,
        &static_builds(&exe, &host.arch),
    )?;
    let bytes = if chosen.path == this.path {
        bytes
    } else {
        std::fs::read(&chosen.path)
            .map_err(|e| format!("cannot read {}: {e}", chosen.path.display()))?
    };
    // A temporary name beside the target, made executable and renamed:
    // a running copy is never overwritten in place, a cut copy never
    // takes the name. It prints where it put it, `~` expanded.
    let script = format!(
        "set -e; p={p}; case $p in /*) ;; *) p=\"$PWD/$p\";; esac; \
         t=\"$p.tmp.$$\"; trap 'rm -f \"$t\"' EXIT; \
         mkdir -p \"$(dirname \"$p\")\"; cat > \"$t\"; chmod 755 \"$t\"; mv -f \"$t\" \"$p\"; \
         echo \"$p\"; \"$p\" --version || exit 3; command -v ptybroker || true",
        p = remote_path(path)
    );
    let out = remote_sh(&link, &script, &bytes, limits::SSH_COPY_WAIT)?;
    let lines: Vec<&str> = out.stdout.lines().map(str::trim).collect();
    let last_said = |or: &str| out.stderr.trim().lines().last().unwrap_or(or).to_string();
    let placed = match lines.first() {
        Some(p) if !p.is_empty() => *p,
        _ => {
            return Err(format!(
                "copying to {}:{path} failed: {}",
                dest.shown,
                last_said("no reason given")
            ))
        }
    };
    let version = lines.get(1).copied().unwrap_or_default();
    if !out.ok || !version.starts_with("ptybroker ") {
        return Err(format!(
            "the copy at {}:{placed} does not run there: {}",
            dest.shown,
            last_said("it printed no version")
        ));
    }
    let on_path = lines.get(2).is_some_and(|p| *p == placed);
    let mut report = format!(
        "installed {version} ({}, {}, {} bytes) at {}:{placed}",
        chosen.what,
        chosen.path.display(),
        bytes.len(),
        dest.shown
    );
    if !on_path {
        report.push_str(&format!(
            "\nit is not the ptybroker on the remote PATH: give --remote-bin {placed} (or set PTYBROKER_REMOTE_BIN={placed})"
        ));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(arch: &'static str, interp: Option<&str>, what: &'static str) -> Candidate {
        Candidate {
            path: PathBuf::from(format!("/{what}/{arch}")),
            elf: Elf {
                arch,
                interp: interp.map(str::to_string),
            },
            what,
        }
    }

    const GLIBC: Option<&str> = Some("/lib64/ld-linux-x86-64.so.2");

    #[test]
    fn a_static_build_for_the_remote_arch_comes_first() {
        let this = cand("x86_64", None, "this binary");
        let c = choose("x86_64", Libc::Musl, &this, &[]).unwrap();
        assert_eq!(c.what, "this binary");
        let this = cand("x86_64", GLIBC, "this binary");
        let other = cand("aarch64", None, "a static build");
        let c = choose("aarch64", Libc::Glibc, &this, &[other]).unwrap();
        assert_eq!(c.elf.arch, "aarch64");
        // Even where this dynamic binary would run, a static one is safer
        // (an older glibc there).
        let same = cand("x86_64", None, "a static build");
        let c = choose("x86_64", Libc::Glibc, &this, &[same]).unwrap();
        assert_eq!(c.what, "a static build");
    }

    #[test]
    fn a_dynamic_binary_goes_only_where_arch_and_libc_match() {
        let this = cand("x86_64", GLIBC, "this binary");
        assert_eq!(
            choose("x86_64", Libc::Glibc, &this, &[]).unwrap().what,
            "this binary"
        );
        let e = choose("x86_64", Libc::Musl, &this, &[]).unwrap_err();
        assert!(
            e.contains("make static TARGET=x86_64-unknown-linux-musl"),
            "{e}"
        );
        let e = choose("aarch64", Libc::Glibc, &this, &[]).unwrap_err();
        assert!(
            e.contains("make static TARGET=aarch64-unknown-linux-musl"),
            "{e}"
        );
        assert!(choose("x86_64", Libc::Unknown, &this, &[]).is_err());
        // A static build for another machine does not help.
        let arm = cand("aarch64", None, "a static build");
        assert!(choose("riscv64", Libc::Musl, &this, &[arm]).is_err());
    }

    #[test]
    fn elf_headers_say_arch_and_interpreter() {
        // This test binary: this machine's arch; dynamic or not, parsed.
        let exe = std::env::current_exe().unwrap();
        let elf = Elf::parse(&std::fs::read(exe).unwrap()).unwrap();
        assert_eq!(elf.arch, normal_arch(std::env::consts::ARCH));
        assert!(Elf::parse(b"#!/bin/sh\n").is_err());
        assert!(Elf::parse(b"\x7fELF\x02\x01").is_err());
        // A minimal 64-bit little-endian static aarch64 header.
        let mut h = vec![0u8; 64];
        h[..6].copy_from_slice(b"\x7fELF\x02\x01");
        h[18] = 0xb7;
        assert_eq!(
            Elf::parse(&h).unwrap(),
            Elf {
                arch: "aarch64",
                interp: None
            }
        );
    }

    #[test]
    fn remote_paths_expand_home_and_quote_the_rest() {
        assert_eq!(
            remote_path("~/.local/bin/ptybroker"),
            "\"$HOME\"/.local/bin/ptybroker"
        );
        assert_eq!(remote_path("/opt/my tools/pb"), "'/opt/my tools/pb'");
        assert_eq!(normal_arch("arm64\n"), "aarch64");
        assert_eq!(musl_target("armv7l"), "armv7-unknown-linux-musleabihf");
    }
}
