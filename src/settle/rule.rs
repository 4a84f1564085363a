//! The settle rule: from what a wait has seen so far (the probe's answers,
//! the output generation, output and input times, the emulator's frame
//! state) to a verdict: settled, look again at some instant, or fall back to
//! quiet. A pure state machine over snapshots and instants passed in: it
//! reads no clock, takes no lock and never sleeps, so it is tested on fake
//! instants below. `Session::wait` gathers a [`Snapshot`] under its state
//! lock, asks [`Settler::due`] when to look, takes a [`Look`] (the probe and
//! whether output is in flight) without the lock, hands it to
//! [`Settler::observe`], and sleeps on its Condvar until the next look.
//!
//! The rules, in the order [`Settler::observe`] applies them (see also
//! ARCHITECTURE.md, *Settle rules*):
//!
//! 1. Output since the look began starts everything over.
//! 2. Busy: look again after a backoff (1 ms doubling to 20 ms).
//! 3. Unknown: the quiet fallback applies until the kernel can tell again.
//! 4. Waiting, but the input has not visibly arrived (no output since the
//!    write began, not seen busy since, [`SETTLE_INPUT_GRACE`] not passed):
//!    look again shortly.
//! 5. Waiting on the terminal with a timer: unless it is the period the
//!    program idled with when it last settled ([`Idle`]) or a full-screen
//!    program has drawn its frame, let it run out first (see
//!    [`Settler::observe`] for how long and for re-arms).
//! 6. Waiting twice, a debounce apart, with the same output generation:
//!    settled.
//! 7. A relay (waiting on the terminal and on something from outside the
//!    group: ssh): settled once the output has been quiet for
//!    [`SETTLE_RELAY_QUIET`] (or the wait's own quiet window, if longer),
//!    counted from output after the input; with no output since the input
//!    yet, not before [`SETTLE_RELAY_ECHO`] from it.
//! 8. Busy only sleeping on a clock while the terminal is in non-canonical
//!    mode or a sleeper holds it open non-blocking (a loop polling the
//!    keyboard without blocking): settled once the
//!    output has been quiet for [`SETTLE_SLEEP_QUIET`].
//!
//! Output during any of this (a timer being let run out included) voids the
//! look that was planned: the next look comes as soon as the output is
//! quiet.
//!
//! A half-received escape sequence, an open synchronized-output frame or a
//! pending reply holds every look back for [`SETTLE_FRAME_GRACE`]
//! ([`held_by_framing`]).

use std::time::{Duration, Instant};

use super::{Readiness, Wakes};
use crate::limits::{
    SETTLE_DEBOUNCE, SETTLE_DEBOUNCE_BLOCKED, SETTLE_ESCAPE_ANSWER, SETTLE_FIRST_LOOK,
    SETTLE_FRAME_GRACE, SETTLE_IDLE_PERIOD_MIN, SETTLE_INPUT_GRACE, SETTLE_RELAY_ECHO,
    SETTLE_RELAY_QUIET, SETTLE_SLEEP_QUIET, SETTLE_TIMER_AWAIT, SETTLE_TIMER_HORIZON,
    SETTLE_TIMER_JITTER,
};

/// The first backoff after a busy answer, and the look after an answer that
/// needs confirming soon.
const FIRST: Duration = Duration::from_millis(1);
/// The longest backoff between looks at a busy program (and between looks
/// when the kernel cannot tell).
const MOST: Duration = Duration::from_millis(20);

/// What the session shows at one instant, gathered under its state lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// The output generation: bumped on every chunk of output absorbed.
    pub generation: u64,
    /// When output last arrived (or the session started).
    pub last_output: Instant,
    /// When the last write of input ended (or the session started).
    pub last_input: Instant,
    /// When the last write of input began; `None` before any.
    pub input_began: Option<Instant>,
    /// Output arrived since the last write of input began (the transcript
    /// has grown past where it ended then).
    pub output_since_input: bool,
    /// The emulator is inside an escape sequence or a synchronized-output
    /// frame.
    pub mid_frame: bool,
    /// Replies to terminal queries (cursor reports...) are not yet written.
    pub answers_pending: bool,
    /// The screen is the alternate one (a full-screen program).
    pub alt_screen: bool,
    /// How often the screen has been rewound so far (see
    /// [`crate::vt::Screen::rewinds`]): a change during a wait means a
    /// program repainting in place.
    pub rewinds: u64,
    /// The program has exited.
    pub exited: bool,
    /// The last input ended in a lone ESC (the Escape key). A program that
    /// reads keys cannot tell it from the start of a key's sequence (an
    /// arrow is ESC [ A) until a short timer runs out: vim's ttimeoutlen,
    /// readline's keyseq-timeout, curses' ESCDELAY. Until then it has not
    /// acted on the key (vim still shows `-- INSERT --`), so its timer is
    /// let run out whatever else would settle it.
    pub escape_pending: bool,
}

impl Snapshot {
    /// When the last output or input was: quiet windows count from here.
    pub fn last_activity(&self) -> Instant {
        self.last_output.max(self.last_input)
    }
}

/// One look at the program, taken without the state lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Look {
    /// The output generation when the look began (before the probe): output
    /// absorbed since makes the look void.
    pub generation: u64,
    /// The probe's answer (see [`super::probe_wakes`]).
    pub readiness: Readiness,
    /// Whether, and when, the program may wake by itself.
    pub wakes: Wakes,
    /// The master had unread output after the probe.
    pub master_readable: bool,
    /// The reader thread was between taking bytes off the master and
    /// absorbing them.
    pub absorbing: bool,
    /// The terminal's foreground process group, if it could be read: what
    /// an [`Idle`] state belongs to.
    pub pgid: Option<i32>,
    /// The terminal is in non-canonical mode: the program reads keys
    /// itself (a full-screen program, a game loop, a line editor).
    pub raw_keys: bool,
}

/// A timeout a program settled with that is its idle period: from
/// [`SETTLE_IDLE_PERIOD_MIN`] (shorter is the end of a tick about to fire)
/// to [`SETTLE_TIMER_HORIZON`].
fn is_period(t: &Duration) -> bool {
    (SETTLE_IDLE_PERIOD_MIN..=SETTLE_TIMER_HORIZON).contains(t)
}

/// A timeout a program settled with that is idling blocked: none, or one
/// beyond [`SETTLE_TIMER_HORIZON`] (housekeeping: V8's 8 s memory reducer).
fn idles_blocked(t: Option<Duration>) -> bool {
    t.map_or(true, |t| t > SETTLE_TIMER_HORIZON)
}

/// What a program was doing when a wait last settled: its foreground
/// process group, and the timeout of its wait on the terminal, classed by
/// [`is_period`] and [`idles_blocked`] (see [`Settler::idle_timer`]). A
/// later wait that finds the same group waiting with its period (within
/// [`SETTLE_TIMER_JITTER`]) finds it idle the way it idles (ipython's 500
/// ms poll); a group that idled blocked and now waits on a timer is working
/// through it (node's `await`). A group that idles on a poll and now waits
/// on another timer is judged as one seen for the first time: after any
/// wake-up its poll shows what is left of its period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Idle {
    pub pgid: i32,
    pub timer: Option<Duration>,
}

impl Look {
    /// The probe's answer, unless output was still on its way to us: then
    /// the program is busy whatever the probe said.
    pub fn answer(&self) -> (Readiness, Wakes) {
        if self.master_readable {
            return (
                Readiness::Busy("output is still arriving".into()),
                Wakes::MAYBE,
            );
        }
        if self.absorbing {
            return (Readiness::Busy("output is being read".into()), Wakes::MAYBE);
        }
        (self.readiness.clone(), self.wakes)
    }
}

/// A timer a wait is letting run out, for `status` to say (`timer:`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Holding {
    /// The timeout the program's wait was given.
    pub timeout: Duration,
    /// When the wait stops holding for it (unless it re-arms).
    pub until: Instant,
    /// The output generation it saw: output since voids it.
    pub generation: u64,
}

impl Holding {
    /// Whether it still holds a wait at `now`, the output at `generation`.
    pub fn holds(&self, generation: u64, now: Instant) -> bool {
        generation == self.generation && now < self.until
    }
}

/// When a wait should next look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Due {
    Now,
    At(Instant),
    /// The program has exited: no look will tell more.
    Never,
}

/// What one look decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The program has answered and waits for its user.
    Settled,
    /// Not yet: look again at this instant (output sooner moves it; see
    /// [`Settler::due`]).
    LookAt(Instant),
    /// The kernel cannot tell: settle on quiet (the wait's fallback window),
    /// and look again at this instant in case it can tell by then.
    Quiet(Instant),
}

/// A first "waiting" answer, which a second a debounce later confirms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FirstWaiting {
    /// When it was seen.
    at: Instant,
    /// The output generation it saw.
    generation: u64,
    /// The program may wake by itself (at any look since): the longer
    /// debounce applies.
    may_wake: bool,
}

/// A short timer of the waiting program that is being let run out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TimerRun {
    /// When it runs out (capped by the chain's horizon).
    until: Instant,
    /// The output generation it saw: output since (what the timer brought)
    /// or work clears it.
    generation: u64,
    /// The timeout the call was given.
    timeout: Duration,
}

/// Where a chain of silent timers began: together they run at most
/// [`SETTLE_TIMER_HORIZON`] from here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TimerChain {
    /// When the first timer of the chain was seen.
    began: Instant,
    /// The output generation then: output since starts a new chain.
    generation: u64,
}

/// One wait's running record of what the kernel said (see the module
/// comment for the rule).
#[derive(Clone, Debug)]
pub struct Settler {
    /// How the program idled when the last wait settled.
    idle: Option<Idle>,
    /// How it idles now, once this wait has settled.
    settled: Option<Idle>,
    /// The output generation when the wait began.
    start_generation: u64,
    /// The output generation the last look saw: output since voids the
    /// look it planned ([`Settler::due`]).
    seen_generation: u64,
    /// A first "waiting" answer awaiting its confirmation.
    waiting: Option<FirstWaiting>,
    /// A timer being let run out.
    timer: Option<TimerRun>,
    /// A timer has been let run (or begun to) in this wait: a full-screen
    /// program gets only one.
    timer_used: bool,
    /// The chain of silent timers this wait has let run.
    chain: Option<TimerChain>,
    /// The screen's rewind count when the wait began.
    rewinds_at_start: u64,
    /// When the program was last seen busy.
    busy_at: Option<Instant>,
    /// The earliest next look the last answer asked for (`None`: as soon as
    /// the output has been quiet for [`SETTLE_FIRST_LOOK`]).
    next: Option<Instant>,
    /// The current backoff between looks at a busy program.
    backoff: Duration,
    /// The kernel could not tell at the last look: the quiet fallback
    /// applies.
    unknown: bool,
    /// The quiet window that settles a relay.
    relay_quiet: Duration,
}

impl Settler {
    /// A wait beginning with the session as `start` shows it.
    pub fn new(start: &Snapshot) -> Settler {
        Settler::after(start, None)
    }

    /// A wait beginning with the session as `start` shows it, the program
    /// having settled as `idle` says at the end of the last wait that did.
    pub fn after(start: &Snapshot, idle: Option<Idle>) -> Settler {
        Settler {
            idle,
            settled: None,
            start_generation: start.generation,
            seen_generation: start.generation,
            waiting: None,
            timer: None,
            timer_used: false,
            chain: None,
            rewinds_at_start: start.rewinds,
            busy_at: None,
            next: None,
            backoff: Duration::ZERO,
            unknown: false,
            relay_quiet: SETTLE_RELAY_QUIET,
        }
    }

    /// Settle a relay on `quiet` instead, if it is longer than
    /// [`SETTLE_RELAY_QUIET`] (the wait's own quiet window).
    pub fn with_relay_quiet(mut self, quiet: Duration) -> Settler {
        self.relay_quiet = quiet.max(SETTLE_RELAY_QUIET);
        self
    }

    /// Whether the quiet fallback applies: the kernel could not tell at the
    /// last look.
    pub fn quiet_fallback(&self) -> bool {
        self.unknown
    }

    /// When to look next: not before the output has been quiet for
    /// [`SETTLE_FIRST_LOOK`], nor before the last answer asked, nor while a
    /// frame holds settling back; never once the program has exited.
    pub fn due(&self, s: &Snapshot, now: Instant) -> Due {
        if s.exited {
            return Due::Never;
        }
        if let Some(until) = held_by_framing(s, now) {
            return Due::At(until);
        }
        let at = self.look_at(s);
        if now >= at {
            Due::Now
        } else {
            Due::At(at)
        }
    }

    /// The timer this wait is letting run out, if the last look planned to
    /// (see [`Holding::holds`] for whether it still does).
    pub fn holding(&self) -> Option<Holding> {
        self.timer.map(|run| Holding {
            timeout: run.timeout,
            until: run.until,
            generation: run.generation,
        })
    }

    /// How the program idles, once this wait has settled: for the next
    /// wait's [`Settler::after`].
    pub fn settled_idle(&self) -> Option<Idle> {
        self.settled
    }

    /// The idle timer to remember for `pgid`, which settled waiting on
    /// `timer`: a period ([`is_period`]), idling blocked ([`idles_blocked`]),
    /// or the end of a tick, which tells nothing new.
    ///
    /// A loop that idles on a periodic tick shows the remainder of the
    /// period when it wakes for something else (prompt_toolkit's 500 ms
    /// poll, seen at 176 ms after it drew its prompt): the longest period
    /// the same group settled with is its period. Idling blocked does not
    /// forget it: ipython blocks in `input()` without its poll, and once
    /// the line is read it polls again, the way it idles, not the start of
    /// a chain of awaits.
    fn idle_timer(&self, pgid: i32, timer: Option<Duration>) -> Option<Duration> {
        let before = self.idle.filter(|i| i.pgid == pgid).map(|i| i.timer);
        let known_period = before.flatten().filter(is_period);
        match timer {
            Some(t) if is_period(&t) => Some(known_period.map_or(t, |p| p.max(t))),
            blocked if idles_blocked(blocked) => known_period.or(blocked),
            tick_end => before.unwrap_or(tick_end),
        }
    }

    fn look_at(&self, s: &Snapshot) -> Instant {
        let quiet_at = s.last_activity() + SETTLE_FIRST_LOOK;
        // Output since the last look (what a timer being let run out
        // brought, a relay's answer): look again as soon as it is quiet.
        if s.generation != self.seen_generation {
            return quiet_at;
        }
        self.next.map_or(quiet_at, |n| n.max(quiet_at))
    }

    /// Take in one look, made at `now`, with the session as `s` shows it
    /// after the look.
    pub fn observe(&mut self, s: &Snapshot, look: &Look, now: Instant) -> Verdict {
        self.seen_generation = s.generation;
        if s.generation != look.generation {
            // Output arrived while we asked: start over from it.
            self.waiting = None;
            self.timer = None;
            self.backoff = FIRST;
            self.next = None;
            return Verdict::LookAt(self.look_at(s));
        }
        let (readiness, wakes) = look.answer();
        match readiness {
            Readiness::Waiting => {
                let verdict = self.waiting(s, look.pgid, wakes, now);
                if verdict == Verdict::Settled {
                    self.settled = look.pgid.map(|pgid| Idle {
                        pgid,
                        timer: self.idle_timer(pgid, wakes.timer),
                    });
                }
                verdict
            }
            // Sleeping on a clock, the keyboard its own (non-canonical mode,
            // or the terminal open non-blocking): a loop that polls the keys
            // without blocking (a game, `watch`, a line poller). The kernel cannot
            // see it wait, so quiet output decides.
            Readiness::Busy(_) if wakes.asleep && (look.raw_keys || wakes.keys) => {
                self.waiting = None;
                self.timer = None;
                self.unknown = false;
                let quiet_at = s.last_activity() + SETTLE_SLEEP_QUIET;
                if now >= quiet_at && held_by_framing(s, now).is_none() {
                    self.settled = None;
                    return Verdict::Settled;
                }
                self.backoff = (self.backoff * 2).clamp(FIRST, MOST);
                self.next = Some((now + self.backoff).min(quiet_at));
                Verdict::LookAt(self.look_at(s))
            }
            Readiness::Relay(_) => self.relay(s, now),
            Readiness::Busy(_) => {
                self.busy_at = Some(now);
                self.waiting = None;
                self.timer = None;
                self.unknown = false;
                self.backoff = (self.backoff * 2).clamp(FIRST, MOST);
                self.next = Some(now + self.backoff);
                Verdict::LookAt(self.look_at(s))
            }
            Readiness::Unknown(_) => {
                self.unknown = true;
                self.waiting = None;
                self.timer = None;
                self.next = Some(now + MOST);
                Verdict::Quiet(self.look_at(s))
            }
        }
    }

    /// A relay: the kernel cannot tell whether the answer is complete, the
    /// output decides. Quiet for the relay window, counted from the last
    /// output (or input); before any output since the input, not earlier
    /// than [`SETTLE_RELAY_ECHO`] after it.
    fn relay(&mut self, s: &Snapshot, now: Instant) -> Verdict {
        self.waiting = None;
        self.timer = None;
        self.unknown = false;
        let mut at = s.last_activity() + self.relay_quiet;
        if s.input_began.is_some() && !s.output_since_input {
            at = at.max(s.last_input + SETTLE_RELAY_ECHO);
        }
        if now >= at {
            self.settled = None;
            return Verdict::Settled;
        }
        self.next = Some(at);
        Verdict::LookAt(self.look_at(s))
    }

    fn waiting(&mut self, s: &Snapshot, pgid: Option<i32>, wakes: Wakes, now: Instant) -> Verdict {
        let generation = s.generation;
        // The input must have visibly arrived: echoed or answered (output
        // since the write began: the answer may come before the writer
        // returns), or the program seen working since, or a grace period.
        let arrived = s.input_began.map_or(true, |began| {
            s.output_since_input
                || self.busy_at.is_some_and(|b| b >= began)
                || now >= s.last_input + SETTLE_INPUT_GRACE
        });
        if !arrived {
            self.next = Some((now + FIRST).min(s.last_input + SETTLE_INPUT_GRACE));
            return Verdict::LookAt(self.look_at(s));
        }
        // Waiting on the terminal with a timer: what the timer brings may be
        // the answer (a wizard's pause, a countdown, an awaited timer), so it
        // is let run out first (see `hold`), unless it is how the program
        // idles (the period it settled with last time) or a full-screen
        // program has drawn since the input: a repainter waits for its user
        // once its frame is drawn.
        if let Some(t) = wakes.timer {
            let full_screen = s.alt_screen || s.rewinds != self.rewinds_at_start;
            let drew = if s.input_began.is_some() {
                s.output_since_input
            } else {
                generation != self.start_generation
            };
            let idle = self.idle.filter(|i| Some(i.pgid) == pgid);
            // The period it idles with, if known; housekeeping seen again
            // is idle too.
            let idling = idle
                .and_then(|i| i.timer)
                .filter(|p| *p >= SETTLE_IDLE_PERIOD_MIN)
                .is_some_and(|p| t.max(p) - t.min(p) <= SETTLE_TIMER_JITTER);
            let frame_drawn = full_screen && drew;
            // After an Escape key every short timer is the key's (vim waits
            // 25 ms, then its 100 ms ttimeoutlen): held as a chain, not as a
            // repainter's one timer per wait. Until the program has
            // answered the key (output at least
            // [`SETTLE_ESCAPE_ANSWER`] after it), even a timer of its idle
            // period is the key's: prompt_toolkit waits its 500 ms
            // ttimeoutlen on the poll it idles with. On the alternate
            // screen the other timers stay the key's to the horizon: a
            // drawn frame settles at once, and a late echo (a loaded
            // machine) must not pass for vim's answer.
            let answered =
                s.output_since_input && s.last_output >= s.last_input + SETTLE_ESCAPE_ANSWER;
            let escape = s.escape_pending
                && t <= SETTLE_TIMER_HORIZON
                && !(answered && (idling || !s.alt_screen));
            if escape || (!idling && !frame_drawn) {
                let full_screen = full_screen && !escape;
                // Known to idle blocked: a timer now is work (see `hold`).
                // One that idles on a poll of its own shows any remainder
                // of that period after a wake-up (an asyncio loop's next
                // tick), so another timer tells nothing: it is judged as a
                // program seen the first time.
                let known = idle.is_some_and(|i| idles_blocked(i.timer)) && !full_screen;
                if let Some(until) = self.hold(generation, t, known, full_screen, escape, now) {
                    self.waiting = None;
                    self.next = Some(until);
                    return Verdict::LookAt(self.look_at(s));
                }
            }
        }
        let debounce = |may_wake| {
            if may_wake {
                SETTLE_DEBOUNCE
            } else {
                SETTLE_DEBOUNCE_BLOCKED
            }
        };
        match self.waiting {
            // Waiting twice, a debounce apart, with nothing written in
            // between: whatever it wrote before has landed.
            Some(first)
                if first.generation == generation
                    && now >= first.at + debounce(first.may_wake || wakes.may) =>
            {
                Verdict::Settled
            }
            Some(first) if first.generation == generation => {
                self.waiting = Some(FirstWaiting {
                    may_wake: first.may_wake || wakes.may,
                    ..first
                });
                self.next = Some(now + FIRST);
                Verdict::LookAt(self.look_at(s))
            }
            _ => {
                self.waiting = Some(FirstWaiting {
                    at: now,
                    generation,
                    may_wake: wakes.may,
                });
                self.next = Some(now + debounce(wakes.may));
                Verdict::LookAt(self.look_at(s))
            }
        }
    }
}

impl Settler {
    /// Until when a timer of `t` that the program waits on (output
    /// generation `generation`) is let run out; `None` if it is not.
    ///
    /// - A timer seen before and not run out yet: until it does.
    /// - Run out, and the program waits again without a word (a re-arm): a
    ///   program `known` to idle blocked (it settled last time with no
    ///   timer, or one beyond the horizon) is working through a chain of
    ///   awaits: each is let run
    ///   out, as long as the wait lasts. Otherwise the same period again
    ///   (within [`SETTLE_TIMER_JITTER`]) is an idle periodic poll, and a
    ///   longer one (node's 15 ms tick, then the awaited timer) is let run
    ///   out too, the chain at most [`SETTLE_TIMER_HORIZON`] in all. A
    ///   full-screen program gets one timer per wait. After an `escape`
    ///   key a shorter re-arm is not a periodic poll: the key's timeout
    ///   and the program's own tick run side by side (prompt_toolkit's
    ///   500 ms ttimeoutlen shows as 457 ms to its poll's tick, then the
    ///   43 ms left), so the chain goes on to the horizon or the answer.
    /// - A first timer: let run out if it is at most [`SETTLE_TIMER_AWAIT`]
    ///   for a `known` program, [`SETTLE_TIMER_HORIZON`] otherwise.
    fn hold(
        &mut self,
        generation: u64,
        t: Duration,
        known: bool,
        full_screen: bool,
        escape: bool,
        now: Instant,
    ) -> Option<Instant> {
        let limit = if known {
            SETTLE_TIMER_AWAIT
        } else {
            SETTLE_TIMER_HORIZON
        };
        match self.timer.filter(|run| run.generation == generation) {
            Some(run) if now < run.until => return Some(run.until),
            Some(run) => {
                let periodic = !known && !escape && t <= run.timeout + SETTLE_TIMER_JITTER;
                if full_screen || periodic || t > limit {
                    return None;
                }
            }
            None if (full_screen && self.timer_used) || t > limit => return None,
            None => {}
        }
        // A timer that brought output (a countdown) starts a new chain.
        let began = match self.chain {
            Some(chain) if chain.generation == generation => chain.began,
            _ => {
                self.chain = Some(TimerChain {
                    began: now,
                    generation,
                });
                now
            }
        };
        let until = if known {
            now + t
        } else {
            (now + t).min(began + SETTLE_TIMER_HORIZON)
        };
        self.timer = Some(TimerRun {
            until,
            generation,
            timeout: t,
        });
        self.timer_used = true;
        (now < until).then_some(until)
    }
}

/// A half-received escape sequence, an open synchronized-output frame or a
/// terminal reply not yet written holds settling back, until this returns
/// `None`. Not forever: a program that stops mid-frame (a sequence this
/// emulator does not know the end of, a crashed frame) would otherwise never
/// settle, so after [`SETTLE_FRAME_GRACE`] of quiet it no longer counts.
pub fn held_by_framing(s: &Snapshot, now: Instant) -> Option<Instant> {
    if !s.mid_frame && !s.answers_pending {
        return None;
    }
    let until = s.last_activity() + SETTLE_FRAME_GRACE;
    (now < until).then_some(until)
}

/// The quiet fallback: `Ok` once there has been no output or input for
/// `fallback` and no frame holds settling back; else when to look again.
pub fn quiet(s: &Snapshot, fallback: Duration, now: Instant) -> Result<(), Instant> {
    let at = s.last_activity() + fallback;
    if now >= at && held_by_framing(s, now).is_none() {
        Ok(())
    } else {
        Err(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// The foreground process group of the looks below.
    const PGID: i32 = 4242;

    /// A session that has been quiet since `t0`, with no input yet.
    fn quiet_since(t0: Instant) -> Snapshot {
        Snapshot {
            generation: 7,
            last_output: t0,
            last_input: t0,
            input_began: None,
            output_since_input: false,
            mid_frame: false,
            answers_pending: false,
            alt_screen: false,
            rewinds: 0,
            exited: false,
            escape_pending: false,
        }
    }

    fn look(s: &Snapshot, readiness: Readiness, wakes: Wakes) -> Look {
        Look {
            generation: s.generation,
            readiness,
            wakes,
            master_readable: false,
            absorbing: false,
            pgid: Some(PGID),
            raw_keys: false,
        }
    }

    /// Blocked on the terminal with no timeout: only input wakes it.
    fn blocked(s: &Snapshot) -> Look {
        look(s, Readiness::Waiting, Wakes::default())
    }

    /// Waiting on the terminal with a timer of `t`.
    fn timer(s: &Snapshot, t: Duration) -> Look {
        let wakes = Wakes {
            may: true,
            timer: Some(t),
            asleep: false,
            keys: false,
        };
        look(s, Readiness::Waiting, wakes)
    }

    fn busy(s: &Snapshot) -> Look {
        look(s, Readiness::Busy("working".into()), Wakes::MAYBE)
    }

    /// Look whenever the rule says, waiting as `answer` says, until it
    /// settles; the instant it settled at. At most `looks` looks.
    fn settle_at(
        rule: &mut Settler,
        s: &Snapshot,
        mut now: Instant,
        looks: usize,
        answer: impl Fn(&Snapshot, Instant) -> Look,
    ) -> Option<Instant> {
        for _ in 0..looks {
            match rule.due(s, now) {
                Due::Now => {}
                Due::At(t) => now = t,
                Due::Never => return None,
            }
            if rule.observe(s, &answer(s, now), now) == Verdict::Settled {
                return Some(now);
            }
        }
        None
    }

    #[test]
    fn the_first_look_waits_for_a_quiet_moment() {
        let t0 = Instant::now();
        let s = quiet_since(t0);
        let rule = Settler::new(&s);
        assert_eq!(rule.due(&s, t0), Due::At(t0 + SETTLE_FIRST_LOOK));
        assert_eq!(rule.due(&s, t0 + SETTLE_FIRST_LOOK), Due::Now);
        let exited = Snapshot { exited: true, ..s };
        assert_eq!(rule.due(&exited, t0 + ms(5)), Due::Never);
    }

    #[test]
    fn two_looks_a_debounce_apart_settle() {
        let t0 = Instant::now();
        let s = quiet_since(t0);
        let mut rule = Settler::new(&s);
        let t1 = t0 + ms(1);
        assert_eq!(
            rule.observe(&s, &blocked(&s), t1),
            Verdict::LookAt(t1 + SETTLE_DEBOUNCE_BLOCKED)
        );
        // Too soon: not yet.
        let early = t1 + SETTLE_DEBOUNCE_BLOCKED / 2;
        assert!(matches!(
            rule.observe(&s, &blocked(&s), early),
            Verdict::LookAt(_)
        ));
        assert_eq!(
            rule.observe(&s, &blocked(&s), t1 + SETTLE_DEBOUNCE_BLOCKED),
            Verdict::Settled
        );
    }

    #[test]
    fn a_program_that_may_wake_by_itself_takes_the_longer_debounce() {
        let t0 = Instant::now();
        let s = quiet_since(t0);
        let mut rule = Settler::new(&s);
        // A timer beyond the horizon is not let run out, but the program
        // may wake: the longer debounce.
        let long = |s: &Snapshot| timer(s, SETTLE_TIMER_HORIZON + ms(1));
        assert_eq!(
            rule.observe(&s, &long(&s), t0),
            Verdict::LookAt(t0 + SETTLE_DEBOUNCE)
        );
        assert_eq!(
            rule.observe(&s, &long(&s), t0 + SETTLE_DEBOUNCE),
            Verdict::Settled
        );
        // It sticks: blocked at the first look, may wake at the second.
        let mut rule = Settler::new(&s);
        rule.observe(&s, &blocked(&s), t0);
        let second = t0 + SETTLE_DEBOUNCE_BLOCKED;
        assert!(matches!(
            rule.observe(&s, &look(&s, Readiness::Waiting, Wakes::MAYBE), second),
            Verdict::LookAt(_)
        ));
        assert_eq!(
            rule.observe(&s, &blocked(&s), t0 + SETTLE_DEBOUNCE),
            Verdict::Settled
        );
    }

    #[test]
    fn output_between_the_looks_starts_over() {
        let t0 = Instant::now();
        let s = quiet_since(t0);
        let mut rule = Settler::new(&s);
        rule.observe(&s, &blocked(&s), t0);
        // Output arrived while the second look was taken.
        let t1 = t0 + SETTLE_DEBOUNCE_BLOCKED;
        let after = Snapshot {
            generation: s.generation + 1,
            last_output: t1,
            ..s
        };
        assert_eq!(
            rule.observe(&after, &blocked(&s), t1),
            Verdict::LookAt(t1 + SETTLE_FIRST_LOOK)
        );
        // The next look is a first one again.
        let t2 = t1 + SETTLE_FIRST_LOOK;
        assert!(matches!(
            rule.observe(&after, &blocked(&after), t2),
            Verdict::LookAt(_)
        ));
        assert_eq!(
            rule.observe(&after, &blocked(&after), t2 + SETTLE_DEBOUNCE_BLOCKED),
            Verdict::Settled
        );
    }

    #[test]
    fn output_in_flight_is_busy() {
        let t0 = Instant::now();
        let s = quiet_since(t0);
        let mut readable = blocked(&s);
        readable.master_readable = true;
        assert!(matches!(readable.answer().0, Readiness::Busy(_)));
        let mut absorbing = blocked(&s);
        absorbing.absorbing = true;
        assert!(matches!(absorbing.answer().0, Readiness::Busy(_)));
        let mut rule = Settler::new(&s);
        for i in 0..5 {
            let now = t0 + ms(i);
            assert!(matches!(
                rule.observe(&s, &readable, now),
                Verdict::LookAt(_)
            ));
        }
    }

    #[test]
    fn busy_backs_off_to_twenty_milliseconds() {
        let t0 = Instant::now();
        let s = quiet_since(t0);
        let mut rule = Settler::new(&s);
        let mut gaps = Vec::new();
        let mut now = t0;
        for _ in 0..7 {
            let Verdict::LookAt(next) = rule.observe(&s, &busy(&s), now) else {
                panic!("busy is never settled");
            };
            gaps.push((next - now).as_millis());
            now = next;
        }
        assert_eq!(gaps, vec![1, 2, 4, 8, 16, 20, 20]);
        // Waiting after busy: the debounce from scratch.
        assert!(matches!(
            rule.observe(&s, &blocked(&s), now),
            Verdict::LookAt(_)
        ));
        assert_eq!(
            rule.observe(&s, &blocked(&s), now + SETTLE_DEBOUNCE_BLOCKED),
            Verdict::Settled
        );
    }

    #[test]
    fn the_input_must_have_arrived() {
        let t0 = Instant::now();
        let wrote = t0 + ms(100);
        let s = Snapshot {
            last_input: wrote,
            input_began: Some(wrote),
            ..quiet_since(t0)
        };
        // Nothing echoed, never seen busy: keep looking, at most until the
        // grace ends.
        let mut rule = Settler::new(&s);
        let at = |rule: &mut Settler, now| {
            settle_at(rule, &s, now, 1000, |s, _| blocked(s)).expect("settles")
        };
        let settled = at(&mut rule, wrote);
        assert!(settled >= wrote + SETTLE_INPUT_GRACE, "{settled:?}");
        assert!(settled <= wrote + SETTLE_INPUT_GRACE + ms(2), "{settled:?}");
        // Echoed: at once.
        let echoed = Snapshot {
            output_since_input: true,
            ..s
        };
        let mut rule = Settler::new(&echoed);
        let settled = settle_at(&mut rule, &echoed, wrote, 10, |s, _| blocked(s));
        assert_eq!(
            settled,
            Some(wrote + SETTLE_FIRST_LOOK + SETTLE_DEBOUNCE_BLOCKED)
        );
        // Seen busy since the write began: at once after that.
        let mut rule = Settler::new(&s);
        let t1 = wrote + ms(1);
        rule.observe(&s, &busy(&s), t1);
        let settled = settle_at(&mut rule, &s, t1, 10, |s, _| blocked(s)).expect("settles");
        assert!(settled < wrote + ms(10), "{settled:?}");
        // Busy before the write does not count.
        let mut rule = Settler::new(&s);
        rule.observe(&s, &busy(&s), t0 + ms(50));
        let settled = settle_at(&mut rule, &s, wrote, 1000, |s, _| blocked(s)).expect("settles");
        assert!(settled >= wrote + SETTLE_INPUT_GRACE, "{settled:?}");
    }

    #[test]
    fn a_short_timer_runs_out_first() {
        let t0 = Instant::now();
        let s = quiet_since(t0);
        let mut rule = Settler::new(&s);
        let t = ms(300);
        assert_eq!(rule.observe(&s, &timer(&s, t), t0), Verdict::LookAt(t0 + t));
        // Looking earlier changes nothing.
        assert_eq!(
            rule.observe(&s, &timer(&s, t), t0 + ms(100)),
            Verdict::LookAt(t0 + t)
        );
        // The same timer again once it ran out: a periodic poll, settled
        // after the debounce.
        let settled = settle_at(&mut rule, &s, t0 + t, 10, |s, _| timer(s, t));
        assert_eq!(settled, Some(t0 + t + SETTLE_DEBOUNCE));
        // A shorter one is periodic too.
        let mut rule = Settler::new(&s);
        rule.observe(&s, &timer(&s, t), t0);
        let settled = settle_at(&mut rule, &s, t0 + t, 10, |s, _| timer(s, ms(100)));
        assert_eq!(settled, Some(t0 + t + SETTLE_DEBOUNCE));
    }

    #[test]
    fn the_timer_being_let_run_out_is_there_for_status() {
        let t0 = Instant::now();
        let s = quiet_since(t0);
        let mut rule = Settler::new(&s);
        assert_eq!(rule.holding(), None);
        let t = ms(300);
        rule.observe(&s, &timer(&s, t), t0);
        let held = rule
            .holding()
            .filter(|h| h.holds(s.generation, t0 + ms(100)));
        assert_eq!(held.map(|h| h.timeout), Some(t));
        // Run out, or voided by output: no longer held.
        assert!(held.is_some_and(|h| !h.holds(s.generation, t0 + t)));
        assert!(held.is_some_and(|h| !h.holds(s.generation + 1, t0 + ms(100))));
        // Blocked with no timer: nothing held.
        let mut rule = Settler::new(&s);
        rule.observe(&s, &blocked(&s), t0);
        assert_eq!(rule.holding(), None);
    }

    #[test]
    fn a_timer_beyond_the_horizon_does_not_hold_back() {
        let t0 = Instant::now();
        let s = quiet_since(t0);
        let mut rule = Settler::new(&s);
        let settled = settle_at(&mut rule, &s, t0, 10, |s, _| {
            timer(s, SETTLE_TIMER_HORIZON + ms(1))
        });
        assert_eq!(settled, Some(t0 + SETTLE_FIRST_LOOK + SETTLE_DEBOUNCE));
        let mut rule = Settler::new(&s);
        assert_eq!(
            rule.observe(&s, &timer(&s, SETTLE_TIMER_HORIZON), t0),
            Verdict::LookAt(t0 + SETTLE_TIMER_HORIZON)
        );
    }

    #[test]
    fn a_silent_longer_rearm_runs_out_too() {
        // node: a 15 ms tick, then the awaited 400 ms timer.
        let t0 = Instant::now();
        let s = quiet_since(t0);
        let mut rule = Settler::new(&s);
        assert_eq!(
            rule.observe(&s, &timer(&s, ms(15)), t0),
            Verdict::LookAt(t0 + ms(15))
        );
        let t1 = t0 + ms(15);
        assert_eq!(
            rule.observe(&s, &timer(&s, ms(400)), t1),
            Verdict::LookAt(t1 + ms(400))
        );
        let settled = settle_at(&mut rule, &s, t1 + ms(400), 10, |s, _| timer(s, ms(400)));
        assert_eq!(settled, Some(t1 + ms(400) + SETTLE_DEBOUNCE));
    }

    #[test]
    fn silent_rearms_are_capped_at_the_horizon() {
        let t0 = Instant::now();
        let s = quiet_since(t0);
        let mut rule = Settler::new(&s);
        // Ever longer timers, each re-armed without a word.
        let mut t = ms(500);
        let mut now = t0;
        let settled = loop {
            match rule.observe(&s, &timer(&s, t), now) {
                Verdict::Settled => break now,
                Verdict::LookAt(next) => now = next,
                Verdict::Quiet(_) => panic!("the kernel told"),
            }
            t += ms(100);
            assert!(now < t0 + ms(10_000), "never settles");
        };
        assert!(settled >= t0 + SETTLE_TIMER_HORIZON, "{settled:?}");
        assert!(
            settled <= t0 + SETTLE_TIMER_HORIZON + SETTLE_DEBOUNCE,
            "{settled:?}"
        );
    }

    #[test]
    fn a_timer_that_brought_output_starts_afresh() {
        // A countdown: each tick prints, so the horizon counts from it.
        let t0 = Instant::now();
        let mut s = quiet_since(t0);
        let mut rule = Settler::new(&s);
        let tick = ms(900);
        let mut now = t0;
        for _ in 0..4 {
            assert_eq!(
                rule.observe(&s, &timer(&s, tick), now),
                Verdict::LookAt(now + tick)
            );
            now += tick;
            s.generation += 1;
            s.last_output = now;
        }
        // Four ticks took longer than the horizon, each let run out.
        assert!(now > t0 + SETTLE_TIMER_HORIZON);
    }

    #[test]
    fn a_full_screen_program_gets_one_timer_per_wait() {
        let t0 = Instant::now();
        let s = Snapshot {
            alt_screen: true,
            ..quiet_since(t0)
        };
        let t = ms(1000);
        let mut rule = Settler::new(&s);
        assert_eq!(rule.observe(&s, &timer(&s, t), t0), Verdict::LookAt(t0 + t));
        // It redraws on its timer: output, then the timer again.
        let t1 = t0 + t;
        let redrawn = Snapshot {
            generation: s.generation + 1,
            last_output: t1,
            ..s
        };
        let settled = settle_at(&mut rule, &redrawn, t1, 10, |s, _| timer(s, t));
        assert_eq!(settled, Some(t1 + SETTLE_FIRST_LOOK + SETTLE_DEBOUNCE));
        // Repainting in place (rewinds) counts as full-screen too; on the
        // main screen without rewinds the redraw gets its timer again.
        let main = Snapshot {
            alt_screen: false,
            ..s
        };
        let now = t1 + SETTLE_FIRST_LOOK;
        for (rewinds, next) in [(1, now + SETTLE_DEBOUNCE), (0, now + t)] {
            let mut rule = Settler::new(&main);
            rule.observe(&main, &timer(&main, t), t0);
            let after = Snapshot {
                rewinds,
                alt_screen: false,
                ..redrawn
            };
            assert_eq!(
                rule.observe(&after, &timer(&after, t), now),
                Verdict::LookAt(next),
                "rewinds {rewinds}"
            );
        }
    }

    #[test]
    fn a_frame_holds_settling_back_for_a_while() {
        let t0 = Instant::now();
        let s = Snapshot {
            mid_frame: true,
            ..quiet_since(t0)
        };
        let rule = Settler::new(&s);
        assert_eq!(held_by_framing(&s, t0), Some(t0 + SETTLE_FRAME_GRACE));
        assert_eq!(rule.due(&s, t0 + ms(1)), Due::At(t0 + SETTLE_FRAME_GRACE));
        assert_eq!(held_by_framing(&s, t0 + SETTLE_FRAME_GRACE), None);
        assert_eq!(rule.due(&s, t0 + SETTLE_FRAME_GRACE), Due::Now);
        let answers = Snapshot {
            mid_frame: false,
            answers_pending: true,
            ..s
        };
        assert_eq!(held_by_framing(&answers, t0), Some(t0 + SETTLE_FRAME_GRACE));
        assert_eq!(held_by_framing(&quiet_since(t0), t0), None);
        // The quiet fallback waits for it too.
        assert_eq!(quiet(&s, ms(100), t0 + ms(100)), Err(t0 + ms(100)));
        assert_eq!(quiet(&s, ms(100), t0 + SETTLE_FRAME_GRACE), Ok(()));
        assert_eq!(quiet(&quiet_since(t0), ms(100), t0 + ms(100)), Ok(()));
        assert_eq!(quiet(&quiet_since(t0), ms(100), t0), Err(t0 + ms(100)));
    }

    fn relay(s: &Snapshot) -> Look {
        look(s, Readiness::Relay("ssh".into()), Wakes::default())
    }

    #[test]
    fn a_relay_settles_on_quiet_after_the_last_output() {
        let t0 = Instant::now();
        let wrote = t0 + ms(100);
        let s = Snapshot {
            last_input: wrote,
            input_began: Some(wrote),
            ..quiet_since(t0)
        };
        // The echo came back 40 ms after the input.
        let echoed = Snapshot {
            generation: s.generation + 1,
            last_output: wrote + ms(40),
            output_since_input: true,
            ..s
        };
        let mut rule = Settler::new(&echoed);
        let settled = settle_at(&mut rule, &echoed, wrote + ms(41), 100, |s, _| relay(s));
        assert_eq!(settled, Some(wrote + ms(40) + SETTLE_RELAY_QUIET));
        // The answer arriving in bursts moves it: a burst 300 ms later.
        let mut rule = Settler::new(&echoed);
        let first = rule.observe(&echoed, &relay(&echoed), wrote + ms(41));
        assert_eq!(first, Verdict::LookAt(wrote + ms(40) + SETTLE_RELAY_QUIET));
        let burst = Snapshot {
            generation: echoed.generation + 1,
            last_output: wrote + ms(340),
            ..echoed
        };
        let settled = settle_at(&mut rule, &burst, wrote + ms(341), 100, |s, _| relay(s));
        assert_eq!(settled, Some(wrote + ms(340) + SETTLE_RELAY_QUIET));
        // Nothing back yet (a link slower than the window): the echo gets
        // its time.
        let mut rule = Settler::new(&s);
        let settled = settle_at(&mut rule, &s, wrote + ms(1), 100, |s, _| relay(s));
        assert_eq!(settled, Some(wrote + SETTLE_RELAY_ECHO));
        // A longer quiet window of the wait's own applies; a shorter not.
        let mut rule = Settler::new(&echoed).with_relay_quiet(ms(1500));
        let settled = settle_at(&mut rule, &echoed, wrote + ms(41), 100, |s, _| relay(s));
        assert_eq!(settled, Some(wrote + ms(40) + ms(1500)));
        let mut rule = Settler::new(&echoed).with_relay_quiet(ms(10));
        let settled = settle_at(&mut rule, &echoed, wrote + ms(41), 100, |s, _| relay(s));
        assert_eq!(settled, Some(wrote + ms(40) + SETTLE_RELAY_QUIET));
        // Busy in between (ssh writing what came in) starts nothing over by
        // itself: the output it writes does.
        let mut rule = Settler::new(&echoed);
        rule.observe(&echoed, &busy(&echoed), wrote + ms(45));
        let settled = settle_at(&mut rule, &echoed, wrote + ms(60), 100, |s, _| relay(s));
        assert_eq!(settled, Some(wrote + ms(40) + SETTLE_RELAY_QUIET));
    }

    #[test]
    fn unknown_falls_back_to_quiet_until_the_kernel_tells() {
        let t0 = Instant::now();
        let s = quiet_since(t0);
        let mut rule = Settler::new(&s);
        assert!(!rule.quiet_fallback());
        let unknown = look(&s, Readiness::Unknown("no /proc".into()), Wakes::MAYBE);
        assert_eq!(rule.observe(&s, &unknown, t0), Verdict::Quiet(t0 + MOST));
        assert!(rule.quiet_fallback());
        // Waiting does not clear it; busy does.
        rule.observe(&s, &blocked(&s), t0 + MOST);
        assert!(rule.quiet_fallback());
        rule.observe(&s, &busy(&s), t0 + MOST + ms(1));
        assert!(!rule.quiet_fallback());
    }
    /// How the program settled last time: blocked with no timer.
    fn idle_blocked() -> Option<Idle> {
        Some(Idle {
            pgid: PGID,
            timer: None,
        })
    }

    #[test]
    fn a_silent_chain_runs_past_the_horizon_when_the_program_idled_without_it() {
        // node's `for (...) await sleep(400)` at a REPL that settled blocked
        // on the terminal: each re-arm is let run out, past the horizon.
        let t0 = Instant::now();
        let s = quiet_since(t0);
        let t = ms(400);
        let mut rule = Settler::after(&s, idle_blocked());
        let mut now = t0;
        for i in 0..8 {
            // The runtime re-arms a millisecond short now and then.
            let armed = if i % 2 == 0 { t } else { t - ms(1) };
            assert_eq!(
                rule.observe(&s, &timer(&s, armed), now),
                Verdict::LookAt(now + armed),
                "re-arm {i}"
            );
            now += armed;
        }
        assert!(now > t0 + SETTLE_TIMER_HORIZON);
        // Then it prints and blocks: settled, and it idles blocked.
        let done = Snapshot {
            generation: s.generation + 1,
            last_output: now,
            ..s
        };
        let settled = settle_at(&mut rule, &done, now, 10, |s, _| blocked(s));
        assert!(settled.is_some());
        assert_eq!(rule.settled_idle(), idle_blocked());
        // Idle on V8's 8 s housekeeping timer is idle blocked too.
        let housekeeping = Some(Idle {
            pgid: PGID,
            timer: Some(ms(8000)),
        });
        let mut rule = Settler::after(&s, housekeeping);
        let mut now = t0;
        for i in 0..8 {
            assert_eq!(
                rule.observe(&s, &timer(&s, t), now),
                Verdict::LookAt(now + t),
                "re-arm {i} after housekeeping"
            );
            now += t;
        }
        // Without that knowledge (the first wait of a job), the same
        // period again is a periodic poll, as before.
        let mut rule = Settler::new(&s);
        rule.observe(&s, &timer(&s, t), t0);
        let settled = settle_at(&mut rule, &s, t0 + t, 10, |s, _| timer(s, t));
        assert_eq!(settled, Some(t0 + t + SETTLE_DEBOUNCE));
        // Another group than the one that settled: not known either.
        let other = Some(Idle {
            pgid: PGID + 1,
            timer: None,
        });
        let mut rule = Settler::after(&s, other);
        rule.observe(&s, &timer(&s, t), t0);
        let settled = settle_at(&mut rule, &s, t0 + t, 10, |s, _| timer(s, t));
        assert_eq!(settled, Some(t0 + t + SETTLE_DEBOUNCE));
    }

    #[test]
    fn a_known_program_gets_its_longer_awaits_run_out() {
        // node's `await sleep(3000)`: beyond the horizon, within the await
        // limit; a longer timer (V8's 8 s memory reducer) is housekeeping.
        let t0 = Instant::now();
        let s = quiet_since(t0);
        let mut rule = Settler::after(&s, idle_blocked());
        let t = ms(3000);
        assert!(t > SETTLE_TIMER_HORIZON && t <= SETTLE_TIMER_AWAIT);
        assert_eq!(rule.observe(&s, &timer(&s, t), t0), Verdict::LookAt(t0 + t));
        let mut rule = Settler::after(&s, idle_blocked());
        let beyond = SETTLE_TIMER_AWAIT + ms(1);
        let settled = settle_at(&mut rule, &s, t0, 10, |s, _| timer(s, beyond));
        assert_eq!(settled, Some(t0 + SETTLE_FIRST_LOOK + SETTLE_DEBOUNCE));
    }

    #[test]
    fn the_period_it_idles_with_is_not_waited_out_jitter_and_all() {
        // ipython idles in a 500 ms poll; after an answer it re-arms 497.
        let t0 = Instant::now();
        let s = quiet_since(t0);
        let idle = Some(Idle {
            pgid: PGID,
            timer: Some(ms(500)),
        });
        for armed in [ms(497), ms(500), ms(510)] {
            let mut rule = Settler::after(&s, idle);
            let settled = settle_at(&mut rule, &s, t0, 10, |s, _| timer(s, armed));
            assert_eq!(
                settled,
                Some(t0 + SETTLE_FIRST_LOOK + SETTLE_DEBOUNCE),
                "{armed:?}"
            );
            // The period kept is the longest the group settled with.
            assert_eq!(
                rule.settled_idle().and_then(|i| i.timer),
                Some(armed.max(ms(500)))
            );
        }
        // Settled blocked (`input()`), it keeps its period: the next wait
        // finds its poll idle, not a chain of awaits run to the timeout.
        let mut rule = Settler::after(&s, idle);
        assert!(settle_at(&mut rule, &s, t0, 10, |s, _| blocked(s)).is_some());
        assert_eq!(rule.settled_idle(), idle);
        let mut rule = Settler::after(&s, rule.settled_idle());
        let settled = settle_at(&mut rule, &s, t0, 10, |s, _| timer(s, ms(499)));
        assert_eq!(settled, Some(t0 + SETTLE_FIRST_LOOK + SETTLE_DEBOUNCE));
        // What each settle leaves remembered, from what was before: a
        // period; blocked (none, or housekeeping beyond the horizon); a
        // tick's end, which changes nothing known.
        let remembered = |before: Option<Idle>, t: Option<Duration>| {
            Settler::after(&s, before).idle_timer(PGID, t)
        };
        let with = |t: Option<Duration>| {
            Some(Idle {
                pgid: PGID,
                timer: t,
            })
        };
        assert_eq!(remembered(idle_blocked(), Some(ms(10))), None);
        assert_eq!(remembered(None, Some(ms(10))), Some(ms(10)));
        assert_eq!(remembered(idle, Some(ms(10))), Some(ms(500)));
        assert_eq!(remembered(idle, Some(ms(8000))), Some(ms(500)));
        assert_eq!(remembered(with(Some(ms(10))), None), None);
        assert_eq!(
            remembered(with(Some(ms(8000))), Some(ms(300))),
            Some(ms(300))
        );
        // A timer of another period is work: `await asyncio.sleep(0.4)`.
        let mut rule = Settler::after(&s, idle);
        assert_eq!(
            rule.observe(&s, &timer(&s, ms(400)), t0),
            Verdict::LookAt(t0 + ms(400))
        );
        // Unknown, a jittered re-arm of the same period is periodic too.
        let mut rule = Settler::new(&s);
        rule.observe(&s, &timer(&s, ms(497)), t0);
        let settled = settle_at(&mut rule, &s, t0 + ms(497), 10, |s, _| timer(s, ms(500)));
        assert_eq!(settled, Some(t0 + ms(497) + SETTLE_DEBOUNCE));
    }

    #[test]
    fn output_while_a_timer_runs_out_is_looked_at_at_once() {
        // select([tty, pipe], 1.9 s), answered through the pipe at 0.2 s.
        let t0 = Instant::now();
        let s = quiet_since(t0);
        let mut rule = Settler::after(&s, idle_blocked());
        let t = ms(1900);
        assert_eq!(rule.observe(&s, &timer(&s, t), t0), Verdict::LookAt(t0 + t));
        assert_eq!(rule.due(&s, t0 + ms(100)), Due::At(t0 + t));
        let answered = Snapshot {
            generation: s.generation + 1,
            last_output: t0 + ms(200),
            ..s
        };
        let quiet = answered.last_output + SETTLE_FIRST_LOOK;
        assert_eq!(rule.due(&answered, t0 + ms(200)), Due::At(quiet));
        // It prints and blocks on the terminal: settled by the debounce.
        let settled = settle_at(&mut rule, &answered, quiet, 10, |s, _| blocked(s));
        assert_eq!(settled, Some(quiet + SETTLE_DEBOUNCE_BLOCKED));
    }

    #[test]
    fn a_full_screen_program_that_drew_since_the_input_has_its_frame() {
        // htop: a key, the redraw, then its 1.5 s refresh timer.
        let t0 = Instant::now();
        let wrote = t0 + ms(10);
        let s = Snapshot {
            alt_screen: true,
            last_input: wrote,
            input_began: Some(wrote),
            output_since_input: true,
            generation: 9,
            last_output: wrote + ms(5),
            ..quiet_since(t0)
        };
        let mut rule = Settler::new(&s);
        let now = s.last_output + SETTLE_FIRST_LOOK;
        let settled = settle_at(&mut rule, &s, now, 10, |s, _| timer(s, ms(1500)));
        assert_eq!(settled, Some(now + SETTLE_DEBOUNCE));
        // Nothing drawn since the key: its timer is let run out once, and
        // the frame it brings settles it.
        let silent = Snapshot {
            output_since_input: false,
            last_output: t0,
            ..s
        };
        let mut rule = Settler::new(&silent);
        let now = wrote + SETTLE_INPUT_GRACE;
        let t = ms(1500);
        assert_eq!(
            rule.observe(&silent, &timer(&silent, t), now),
            Verdict::LookAt(now + t)
        );
        let framed = Snapshot {
            generation: silent.generation + 1,
            last_output: now + t,
            output_since_input: true,
            ..silent
        };
        let at = now + t + SETTLE_FIRST_LOOK;
        let settled = settle_at(&mut rule, &framed, at, 10, |s, _| timer(s, t));
        assert_eq!(settled, Some(at + SETTLE_DEBOUNCE));
        // At start (no input): drawing since the wait began is the frame.
        let start = quiet_since(t0);
        let mut rule = Settler::new(&Snapshot {
            alt_screen: true,
            ..start
        });
        let drawn = Snapshot {
            alt_screen: true,
            generation: start.generation + 1,
            ..start
        };
        let now = t0 + SETTLE_FIRST_LOOK;
        let settled = settle_at(&mut rule, &drawn, now, 10, |s, _| timer(s, t));
        assert_eq!(settled, Some(now + SETTLE_DEBOUNCE));
    }

    #[test]
    fn an_escape_key_lets_the_key_timer_run_out_even_with_a_frame_drawn() {
        // vim in insert mode: `abc` echoed, then Escape; vim waits its
        // 100 ms ttimeoutlen to tell the key from an arrow's sequence and
        // still shows -- INSERT --. Drawn since the input, full-screen: a
        // repainter would be settled, this is not until the timer ran out.
        let t0 = Instant::now();
        let wrote = t0 + ms(10);
        let s = Snapshot {
            alt_screen: true,
            last_input: wrote,
            input_began: Some(wrote),
            output_since_input: true,
            generation: 9,
            last_output: wrote + ms(2),
            escape_pending: true,
            ..quiet_since(t0)
        };
        let mut rule = Settler::new(&s);
        let now = s.last_output + SETTLE_FIRST_LOOK;
        let t = ms(100);
        assert_eq!(
            rule.observe(&s, &timer(&s, t), now),
            Verdict::LookAt(now + t)
        );
        // The mode line redrawn when the timer ran out, then vim's 4 s
        // updatetime: settled.
        let after = Snapshot {
            generation: s.generation + 1,
            last_output: now + t,
            ..s
        };
        let at = now + t + SETTLE_FIRST_LOOK;
        let settled = settle_at(&mut rule, &after, at, 10, |s, _| timer(s, ms(4000)));
        assert_eq!(settled, Some(at + SETTLE_DEBOUNCE));
        // vim first waits 25 ms, then its 100 ms: both are the key's.
        let mut rule = Settler::new(&s);
        let first = ms(25);
        assert_eq!(
            rule.observe(&s, &timer(&s, first), now),
            Verdict::LookAt(now + first)
        );
        let later = now + first;
        assert_eq!(
            rule.observe(&s, &timer(&s, t), later),
            Verdict::LookAt(later + t)
        );
        // Without the Escape the same frame settles at once.
        let plain = Snapshot {
            escape_pending: false,
            ..s
        };
        let mut rule = Settler::new(&plain);
        let settled = settle_at(&mut rule, &plain, now, 10, |s, _| timer(s, t));
        assert_eq!(settled, Some(now + SETTLE_DEBOUNCE));
    }

    #[test]
    fn an_escape_key_holds_the_idle_period_until_the_program_answers() {
        // ipython in vi mode idles on a 500 ms poll and waits its 500 ms
        // ttimeoutlen after Escape on the same loop: the poll's tick first
        // (457 ms away), then the 43 ms left of the key's timeout, then it
        // draws `[nav]` and idles again.
        let t0 = Instant::now();
        let wrote = t0 + ms(10);
        let s = Snapshot {
            last_input: wrote,
            input_began: Some(wrote),
            escape_pending: true,
            ..quiet_since(t0)
        };
        let idle = Some(Idle {
            pgid: PGID,
            timer: Some(ms(500)),
        });
        let now = wrote + SETTLE_INPUT_GRACE;
        for first in [ms(500), ms(457)] {
            let mut rule = Settler::after(&s, idle);
            assert_eq!(
                rule.observe(&s, &timer(&s, first), now),
                Verdict::LookAt(now + first),
                "{first:?}"
            );
            // A shorter re-arm is the key's timeout, not a periodic poll.
            let later = now + first;
            assert_eq!(
                rule.observe(&s, &timer(&s, ms(43)), later),
                Verdict::LookAt(later + ms(43))
            );
            // Answered: the idle period is idling again.
            let answered = Snapshot {
                generation: s.generation + 1,
                last_output: later + ms(43),
                output_since_input: true,
                ..s
            };
            let at = answered.last_output + SETTLE_FIRST_LOOK;
            let settled = settle_at(&mut rule, &answered, at, 10, |s, _| timer(s, ms(500)));
            assert_eq!(settled, Some(at + SETTLE_DEBOUNCE));
        }
        // Answered, with the period remembered a remainder (183 ms): the
        // key's hold is over, and the poll's 450 ms then 50 ms are judged
        // as any timers, the same period again a periodic poll.
        let odd = Some(Idle {
            pgid: PGID,
            timer: Some(ms(183)),
        });
        let mut rule = Settler::after(&s, odd);
        assert_eq!(
            rule.observe(&s, &timer(&s, ms(457)), now),
            Verdict::LookAt(now + ms(457))
        );
        let later = now + ms(457);
        let answered = Snapshot {
            generation: s.generation + 1,
            last_output: later + ms(43),
            output_since_input: true,
            ..s
        };
        let at = answered.last_output + SETTLE_FIRST_LOOK;
        let settled = settle_at(&mut rule, &answered, at, 20, |s, now| match now - at {
            d if d < ms(450) => timer(s, ms(450)),
            d if d < ms(500) => timer(s, ms(50)),
            _ => timer(s, ms(500)),
        });
        assert_eq!(settled, Some(at + ms(450) + SETTLE_DEBOUNCE));
        // The period remembered was the end of a tick (10 ms): no period
        // is known, and every short timer is the key's until the answer.
        let tick_end = Some(Idle {
            pgid: PGID,
            timer: Some(ms(10)),
        });
        let mut rule = Settler::after(&s, tick_end);
        let mut at = now;
        for t in [10, 475, 25] {
            assert_eq!(
                rule.observe(&s, &timer(&s, ms(t)), at),
                Verdict::LookAt(at + ms(t)),
                "{t} ms"
            );
            at += ms(t);
        }
        // Never answered (Escape where it does nothing): held to the
        // horizon, no further.
        let mut rule = Settler::after(&s, idle);
        let settled = settle_at(&mut rule, &s, now, 10, |s, _| timer(s, ms(500)));
        assert_eq!(settled, Some(now + SETTLE_TIMER_HORIZON + SETTLE_DEBOUNCE));
        // On the alternate screen output after 100 ms (a late echo) frees
        // only the idle period's timers: vim's ttimeoutlen is still held.
        let late = Snapshot {
            generation: s.generation + 1,
            last_output: wrote + ms(150),
            output_since_input: true,
            alt_screen: true,
            ..s
        };
        let at = late.last_output + SETTLE_FIRST_LOOK;
        let mut rule = Settler::after(&late, idle);
        assert_eq!(
            rule.observe(&late, &timer(&late, ms(100)), at),
            Verdict::LookAt(at + ms(100))
        );
        // The echo straight after the key is not its answer.
        let echoed = Snapshot {
            generation: s.generation + 1,
            last_output: wrote + ms(2),
            output_since_input: true,
            ..s
        };
        let mut rule = Settler::after(&echoed, idle);
        assert_eq!(
            rule.observe(&echoed, &timer(&echoed, ms(500)), now),
            Verdict::LookAt(now + ms(500))
        );
        // Without the Escape, the idle period settles at once.
        let plain = Snapshot {
            escape_pending: false,
            output_since_input: true,
            ..s
        };
        let mut rule = Settler::after(&plain, idle);
        let settled = settle_at(&mut rule, &plain, now, 10, |s, _| timer(s, ms(500)));
        assert_eq!(settled, Some(now + SETTLE_DEBOUNCE));
    }

    #[test]
    fn a_program_that_idles_on_a_tick_is_not_held_past_the_horizon() {
        // ipython settled with its prompt drawn and 6 ms left of a tick of
        // its 500 ms poll. Typed text is echoed, then the poll re-arms 433
        // ms and 500 ms over and over: not a chain of awaits.
        let t0 = Instant::now();
        let s = quiet_since(t0);
        let idle = Some(Idle {
            pgid: PGID,
            timer: Some(ms(6)),
        });
        let mut rule = Settler::after(&s, idle);
        let first = Cell::new(true);
        let settled = settle_at(&mut rule, &s, t0, 40, |s, _| {
            timer(
                s,
                if first.replace(false) {
                    ms(433)
                } else {
                    ms(500)
                },
            )
        });
        let settled = settled.expect("settles");
        assert!(settled <= t0 + SETTLE_TIMER_HORIZON + SETTLE_DEBOUNCE);
        // It settled waiting on its 500 ms poll: that is its period now,
        // kept over a shorter remainder seen at a later settle.
        assert_eq!(rule.settled_idle().and_then(|i| i.timer), Some(ms(500)));
        let mut rule = Settler::after(&s, rule.settled_idle());
        let settled = settle_at(&mut rule, &s, t0, 40, |s, _| timer(s, ms(43)));
        assert!(settled.is_some());
        assert_eq!(rule.settled_idle().and_then(|i| i.timer), Some(ms(500)));
        // Another group's period is not kept.
        let other = Some(Idle {
            pgid: PGID + 1,
            timer: Some(ms(500)),
        });
        let mut rule = Settler::after(&s, other);
        settle_at(&mut rule, &s, t0, 40, |s, _| timer(s, ms(43)));
        assert_eq!(rule.settled_idle().and_then(|i| i.timer), Some(ms(43)));
    }

    #[test]
    fn asleep_with_the_keyboard_its_own_settles_on_quiet_output() {
        let t0 = Instant::now();
        let s = quiet_since(t0);
        let asleep = |s: &Snapshot, raw_keys: bool| Look {
            raw_keys,
            ..look(
                s,
                Readiness::Busy("sleeping in clock_nanosleep".into()),
                Wakes {
                    asleep: true,
                    ..Wakes::MAYBE
                },
            )
        };
        // A game loop (cbreak, select of no timeout, sleep 50 ms): settled
        // once the output has been quiet for the window.
        let mut rule = Settler::new(&s);
        let settled = settle_at(&mut rule, &s, t0, 100, |s, _| asleep(s, true));
        assert_eq!(settled, Some(t0 + SETTLE_SLEEP_QUIET));
        // In canonical mode (`time.sleep(5)` in a script): busy for ever.
        let mut rule = Settler::new(&s);
        let settled = settle_at(&mut rule, &s, t0, 100, |s, _| asleep(s, false));
        assert_eq!(settled, None);
        // In canonical mode, but reading the terminal non-blocking between
        // sleeps (a line poller): the keyboard is its own too.
        let mut rule = Settler::new(&s);
        let settled = settle_at(&mut rule, &s, t0, 100, |s, _| {
            let mut look = asleep(s, false);
            look.wakes.keys = true;
            look
        });
        assert_eq!(settled, Some(t0 + SETTLE_SLEEP_QUIET));
        // Something really running: busy, raw keys or not.
        let mut rule = Settler::new(&s);
        let settled = settle_at(&mut rule, &s, t0, 100, |s, _| Look {
            raw_keys: true,
            ..busy(s)
        });
        assert_eq!(settled, None);
    }
}
