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
