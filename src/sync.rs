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
