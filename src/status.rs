//! The one-line status report of pty-prompt (seed 002), written to stderr by
//! every CLI call, and the duration and exit wording it uses.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::session::Exit;

/// The program's state as the status line's last clause words it: seed
/// 002's `still running`, `exited` or `exited: <error>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Running,
    /// The kernel says the program is blocked reading its terminal:
    /// `still running, waiting for input`, so that a client of the seed that
    /// looks for `still running` still finds it.
    WaitingForInput,
    Exited(Exit),
}

/// Where this process's calls go, when not to this machine's daemon: the
/// status line's first word names it (`ptybroker@box`, `ptybroker via
/// docker exec -i box`) and its clauses stay seed 002's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    Host(String),
    Via(String),
}

static PLACE: OnceLock<Place> = OnceLock::new();

/// Name `place` in every line this process prints from now on; set once,
/// by the client verb that chose the target.
pub fn set_place(place: Place) {
    let _ = PLACE.set(place);
}

/// `ptybroker`, `ptybroker@box`, `ptybroker via docker exec -i box`.
fn who() -> String {
    match PLACE.get() {
        None => "ptybroker".to_string(),
        Some(Place::Host(h)) => format!("ptybroker@{h}"),
        Some(Place::Via(v)) => format!("ptybroker via {v}"),
    }
}

/// `[ptybroker: 13:58:42 | running for 16s, quiet for 1.5s, still running]`
pub fn line(now: SystemTime, running_for: Duration, quiet_for: Duration, state: State) -> String {
    format!(
        "[{}: {}]",
        who(),
        clauses(now, running_for, quiet_for, state)
    )
}

/// What the status line says after its first word: `13:58:42 | running
/// for 16s, quiet for 1.5s, still running`; a failed `wait` puts it in its
/// error line, in parentheses.
pub fn clauses(
    now: SystemTime,
    running_for: Duration,
    quiet_for: Duration,
    state: State,
) -> String {
    let clause = match state {
        State::Running => "still running".to_string(),
        State::WaitingForInput => "still running, waiting for input".to_string(),
        State::Exited(e) => exited(e),
    };
    format!(
        "{} | running for {}, quiet for {}, {clause}",
        clock(now),
        duration(running_for),
        quiet(quiet_for)
    )
}

/// `[ptybroker: 14:00:56 | ran for 2m14s, exited, session "build" stopped]`
pub fn stopped_line(now: SystemTime, ran_for: Duration, exit: Option<Exit>, name: &str) -> String {
    let how = match exit {
        Some(e) => exited(e),
        None => "still running".to_string(),
    };
    format!(
        "[{}: {} | ran for {}, {how}, session {name:?} stopped]",
        who(),
        clock(now),
        duration(ran_for)
    )
}

/// An error in the status line's bracketed form.
pub fn error_line(msg: &str) -> String {
    format!("[{}: {msg}]", who())
}

/// `exited`, `exited: exit status 1`, `exited: signal: killed`.
pub fn exited(e: Exit) -> String {
    match e {
        Exit::Code(0) => "exited".to_string(),
        Exit::Code(c) => format!("exited: exit status {c}"),
        Exit::Signal(s) => format!("exited: signal: {}", signal_name(s)),
    }
}

/// The wording Go (and so pty-prompt) uses for the common signals.
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        1 => "hangup",
        2 => "interrupt",
        3 => "quit",
        4 => "illegal instruction",
        5 => "trace/breakpoint trap",
        6 => "aborted",
        7 => "bus error",
        8 => "floating point exception",
        9 => "killed",
        10 => "user defined signal 1",
        11 => "segmentation fault",
        12 => "user defined signal 2",
        13 => "broken pipe",
        14 => "alarm clock",
        15 => "terminated",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}

/// Whole seconds: `16s`, `2m14s`, `1h2m3s`.
pub fn duration(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    hms(s)
}

/// Tenths below a minute: `0.3s`, `1.5s`, `2m14s` beyond.
pub fn quiet(d: Duration) -> String {
    let tenths = (d.as_millis() + 50) / 100;
    if tenths < 600 {
        format!("{}.{}s", tenths / 10, tenths % 10)
    } else {
        hms((tenths / 10) as u64)
    }
}

fn hms(s: u64) -> String {
    let (h, m, s) = (s / 3600, (s / 60) % 60, s % 60);
    if h > 0 {
        format!("{h}h{m}m{s}s")
    } else if m > 0 {
        format!("{m}m{s}s")
    } else {
        format!("{s}s")
    }
}

/// Wall-clock `HH:MM:SS` in the local time zone (see [`utc_offset`]).
pub fn clock(now: SystemTime) -> String {
    let secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let local = secs + utc_offset(secs);
    let day = local.rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", day / 3600, (day / 60) % 60, day % 60)
}

/// Seconds east of UTC at `t`, from the TZif file named by `$TZ` (`:Zone`,
/// `Zone` or an absolute path) or `/etc/localtime`; 0 when neither says.
pub fn utc_offset(t: i64) -> i64 {
    let path = match std::env::var("TZ") {
        Ok(tz) if tz.is_empty() || tz == "UTC" || tz == "UTC0" => return 0,
        Ok(tz) => {
            let tz = tz.trim_start_matches(':');
            if tz.starts_with('/') {
                tz.to_string()
            } else {
                format!("/usr/share/zoneinfo/{tz}")
            }
        }
        Err(_) => "/etc/localtime".to_string(),
    };
    std::fs::read(path)
        .ok()
        .and_then(|d| tzif_offset(&d, t))
        .unwrap_or(0)
}

/// The UT offset in force at `t` according to a TZif file: the type of the
/// last transition at or before `t` (files carry transitions decades ahead).
fn tzif_offset(data: &[u8], t: i64) -> Option<i64> {
    let be32 = |b: &[u8], i: usize| -> Option<u32> {
        Some(u32::from_be_bytes(b.get(i..i + 4)?.try_into().ok()?))
    };
    if data.get(..4)? != b"TZif" {
        return None;
    }
    let counts = |b: &[u8]| -> Option<[usize; 6]> {
        let mut c = [0usize; 6];
        for (k, v) in c.iter_mut().enumerate() {
            *v = be32(b, 20 + 4 * k)? as usize;
        }
        Some(c)
    };
    // [isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt]
    let c1 = counts(data)?;
    let v1_len = 44 + c1[3] * 5 + c1[4] * 6 + c1[5] + c1[2] * 8 + c1[1] + c1[0];
    let (body, c, tsize) = if data.get(4).copied().unwrap_or(0) >= b'2' {
        let d2 = data.get(v1_len..)?;
        (d2, counts(d2)?, 8)
    } else {
        (data, c1, 4)
    };
    let times = 44;
    let idx = times + c[3] * tsize;
    let types = idx + c[3];
    let mut ty = 0usize;
    for i in 0..c[3] {
        let at = if tsize == 8 {
            i64::from_be_bytes(
                body.get(times + 8 * i..times + 8 * i + 8)?
                    .try_into()
                    .ok()?,
            )
        } else {
            i64::from(be32(body, times + 4 * i)? as i32)
        };
        if at > t {
            break;
        }
        ty = *body.get(idx + i)? as usize;
    }
    let off = be32(body, types + 6 * ty)? as i32;
    Some(i64::from(off))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_pty_prompt() {
        assert_eq!(duration(Duration::from_secs(16)), "16s");
        assert_eq!(duration(Duration::from_secs(134)), "2m14s");
        assert_eq!(quiet(Duration::from_millis(1500)), "1.5s");
        assert_eq!(quiet(Duration::from_millis(260)), "0.3s");
        assert_eq!(quiet(Duration::from_secs(134)), "2m14s");
    }

    #[test]
    fn exit_wording_matches_seed() {
        assert_eq!(exited(Exit::Code(0)), "exited");
        assert_eq!(exited(Exit::Code(1)), "exited: exit status 1");
        assert_eq!(exited(Exit::Signal(9)), "exited: signal: killed");
    }

    #[test]
    fn status_line_shape() {
        let l = line(
            UNIX_EPOCH,
            Duration::from_secs(16),
            Duration::from_millis(1500),
            State::Running,
        );
        assert!(l.starts_with("[ptybroker: "), "{l}");
        assert!(
            l.ends_with(" | running for 16s, quiet for 1.5s, still running]"),
            "{l}"
        );
    }

    /// Seed 002's final clause stays whole: a client looking for `still
    /// running` finds it while the program waits for input too.
    #[test]
    fn waiting_for_input_is_still_running() {
        let l = line(
            UNIX_EPOCH,
            Duration::from_secs(3),
            Duration::from_millis(200),
            State::WaitingForInput,
        );
        assert!(
            l.ends_with(", quiet for 0.2s, still running, waiting for input]"),
            "{l}"
        );
    }
}
