//! Locking shared by every module that holds a [`Mutex`].

use std::sync::{Mutex, MutexGuard};

/// Lock `m`, recovering it if a thread panicked while holding it.
///
/// A panic in one connection's or session's thread must not take every
/// other session in the process down with it (the release profile unwinds
/// for that reason). What our mutexes guard is plain data (maps of
/// sessions, screens, flags, buffers): the value a panicking holder left is
/// at worst one update behind, still usable, whereas refusing it would turn
/// one bug into a daemon-wide outage, every later caller panicking in turn.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Work still owed by other threads (requests being answered), which a
/// server about to exit waits for: [`Pending::begin`] counts one piece, its
/// guard uncounts it when dropped (after the answer is written, or on a
/// panic), and [`Pending::drain`] waits until none is left, at most a while.
#[derive(Default)]
pub(crate) struct Pending {
    count: Mutex<usize>,
    done: std::sync::Condvar,
}

/// One piece of [`Pending`] work; dropping it pays it. It owns its
/// counter, so it can be taken before a thread starts and moved into it.
pub(crate) struct PendingGuard(std::sync::Arc<Pending>);

impl Pending {
    pub(crate) fn begin(self: &std::sync::Arc<Self>) -> PendingGuard {
        *lock(&self.count) += 1;
        PendingGuard(std::sync::Arc::clone(self))
    }

    /// Wait until nothing is owed, at most `limit`.
    pub(crate) fn drain(&self, limit: std::time::Duration) {
        let deadline = std::time::Instant::now() + limit;
        let mut n = lock(&self.count);
        while *n > 0 {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return;
            }
            n = self
                .done
                .wait_timeout(n, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        let mut n = lock(&self.0.count);
        *n = n.saturating_sub(1);
        self.0.done.notify_all();
    }
}

/// A value that one thread hands to another once (a helper thread's last
/// word: a recording's result, a command's standard error), taken with a
/// bounded wait: [`handoff`]. What a one-slot channel does here, in a
/// fraction of the code (std's channels bring three queue flavours per
/// type carried).
pub(crate) fn handoff<T>() -> (Give<T>, Take<T>) {
    let shared = std::sync::Arc::new(Handoff {
        slot: Mutex::new((None, false)),
        ready: std::sync::Condvar::new(),
    });
    (Give(std::sync::Arc::clone(&shared)), Take(shared))
}

struct Handoff<T> {
    /// The value, once given; whether the giver is gone.
    slot: Mutex<(Option<T>, bool)>,
    ready: std::sync::Condvar,
}

/// The giving side of a [`handoff`]: gives once. Dropped without giving
/// (its thread panicked), it tells the taker at once that nothing comes.
pub(crate) struct Give<T>(std::sync::Arc<Handoff<T>>);

/// The taking side of a [`handoff`].
pub(crate) struct Take<T>(std::sync::Arc<Handoff<T>>);

impl<T> Give<T> {
    pub(crate) fn give(self, value: T) {
        lock(&self.0.slot).0 = Some(value);
    }
}

impl<T> Drop for Give<T> {
    fn drop(&mut self) {
        lock(&self.0.slot).1 = true;
        self.0.ready.notify_all();
    }
}

impl<T> Take<T> {
    /// The value, waiting at most `limit` for it; `None` when it was not
    /// given in time, or will never be (the giver is gone, or it was taken).
    pub(crate) fn within(&self, limit: std::time::Duration) -> Option<T> {
        let deadline = std::time::Instant::now() + limit;
        let mut slot = lock(&self.0.slot);
        loop {
            if slot.0.is_some() || slot.1 {
                return slot.0.take();
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return None;
            }
            slot = self
                .0
                .ready
                .wait_timeout(slot, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn a_handoff_gives_once_and_says_when_nothing_comes() {
        let (give, take) = super::handoff();
        let t = std::thread::spawn(move || give.give(7));
        assert_eq!(take.within(Duration::from_secs(60)), Some(7));
        t.join().unwrap();
        // Taken, and the giver gone: no wait.
        assert_eq!(take.within(Duration::from_secs(3600)), None);

        // A giver that ends without giving (a panicking thread) is not
        // waited for.
        let (give, take) = super::handoff::<u8>();
        let t = std::thread::spawn(move || {
            let _give = give;
            panic!("the writer's bug");
        });
        assert_eq!(take.within(Duration::from_secs(3600)), None);
        assert!(t.join().is_err());

        // Nothing given yet: the wait ends at its limit.
        let (_give, take) = super::handoff::<u8>();
        assert_eq!(take.within(Duration::from_millis(1)), None);
    }
}
