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

    /// Wait until nothing is owed, at most `limit`; true if nothing is.
    pub(crate) fn drain(&self, limit: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        let mut n = lock(&self.count);
        while *n > 0 {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return false;
            }
            n = self
                .done
                .wait_timeout(n, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        let mut n = lock(&self.0.count);
        *n = n.saturating_sub(1);
        self.0.done.notify_all();
    }
}

/// Starting threads through one instance of std's spawn: [`Start::start`]
/// for a configured `std::thread::Builder`, [`spawn`] for
/// `std::thread::spawn`. std's spawn is generic over the closure, and its
/// code (the new thread's handle, its start, the packet its result goes
/// to) would otherwise be compiled once for each of the crate's twenty or
/// so thread bodies; boxed, they share one.
pub(crate) trait Start {
    /// `Builder::spawn` for a thread that returns nothing.
    fn start(
        self,
        f: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<std::thread::JoinHandle<()>>;
}

impl Start for std::thread::Builder {
    fn start(
        self,
        f: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<std::thread::JoinHandle<()>> {
        start_boxed(self, Box::new(f))
    }
}

fn start_boxed(
    builder: std::thread::Builder,
    f: Box<dyn FnOnce() + Send>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    builder.spawn(f)
}

/// `std::thread::spawn` (see [`Start`]): panics as it does, with its
/// message, when the system has no thread to give.
pub(crate) fn spawn(f: impl FnOnce() + Send + 'static) -> std::thread::JoinHandle<()> {
    match start_boxed(std::thread::Builder::new(), Box::new(f)) {
        Ok(handle) => handle,
        Err(e) => panic!("failed to spawn thread: {e:?}"),
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

/// A bounded queue from one thread to another (a recording's events to its
/// writer): [`queue`]. What a bounded channel does here, in a fraction of
/// the code; the sender wakes the receiver only when it waits, so a push
/// costs a lock and no system call.
pub(crate) fn queue<T>(bound: usize) -> (Sender<T>, Receiver<T>) {
    let shared = std::sync::Arc::new(Queue {
        state: Mutex::new(QueueState {
            items: std::collections::VecDeque::new(),
            bound,
            sender_gone: false,
            receiver_gone: false,
            waiting: 0,
        }),
        changed: std::sync::Condvar::new(),
    });
    (Sender(std::sync::Arc::clone(&shared)), Receiver(shared))
}

struct Queue<T> {
    state: Mutex<QueueState<T>>,
    changed: std::sync::Condvar,
}

struct QueueState<T> {
    items: std::collections::VecDeque<T>,
    bound: usize,
    sender_gone: bool,
    receiver_gone: bool,
    /// Threads blocked on `changed` (the receiver on an empty queue, the
    /// sender on a full one).
    waiting: usize,
}

impl<T> Queue<T> {
    /// Wait for a change while `st` shows none that matters to the caller.
    fn wait<'a>(&self, mut st: MutexGuard<'a, QueueState<T>>) -> MutexGuard<'a, QueueState<T>> {
        st.waiting += 1;
        st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
        st.waiting -= 1;
        st
    }

    /// Tell a waiting thread (if any) that `st` changed.
    fn changed(&self, st: &QueueState<T>) {
        if st.waiting > 0 {
            self.changed.notify_all();
        }
    }
}

/// The sending side of a [`queue`]; dropping it ends the queue once the
/// receiver has taken what is in it.
pub(crate) struct Sender<T>(std::sync::Arc<Queue<T>>);

/// The receiving side of a [`queue`]; dropping it discards what is queued
/// and refuses later sends.
pub(crate) struct Receiver<T>(std::sync::Arc<Queue<T>>);

/// Why [`Sender::try_send`] did not queue a value.
#[derive(Debug, PartialEq)]
pub(crate) enum Refused {
    Full,
    /// The receiver is gone.
    Gone,
}

impl<T> Sender<T> {
    /// Queue `value` unless the queue is full or the receiver is gone.
    pub(crate) fn try_send(&self, value: T) -> Result<(), Refused> {
        let mut st = lock(&self.0.state);
        if st.receiver_gone {
            return Err(Refused::Gone);
        }
        if st.items.len() >= st.bound {
            return Err(Refused::Full);
        }
        st.items.push_back(value);
        self.0.changed(&st);
        Ok(())
    }

    /// Queue `value`, waiting while the queue is full; `Err` when the
    /// receiver is gone.
    pub(crate) fn send(&self, value: T) -> Result<(), Refused> {
        let mut st = lock(&self.0.state);
        loop {
            if st.receiver_gone {
                return Err(Refused::Gone);
            }
            if st.items.len() < st.bound {
                st.items.push_back(value);
                self.0.changed(&st);
                return Ok(());
            }
            st = self.0.wait(st);
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let mut st = lock(&self.0.state);
        st.sender_gone = true;
        self.0.changed(&st);
    }
}

impl<T> Receiver<T> {
    /// The next value, waiting for one; `None` once the sender is gone and
    /// the queue is empty.
    pub(crate) fn recv(&self) -> Option<T> {
        let mut st = lock(&self.0.state);
        loop {
            if let Some(value) = st.items.pop_front() {
                self.0.changed(&st);
                return Some(value);
            }
            if st.sender_gone {
                return None;
            }
            st = self.0.wait(st);
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let items = {
            let mut st = lock(&self.0.state);
            st.receiver_gone = true;
            self.0.changed(&st);
            std::mem::take(&mut st.items)
        };
        drop(items);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn started_threads_keep_their_name_and_run_their_body() {
        use super::Start;
        let named = std::thread::Builder::new()
            .name("named".into())
            .stack_size(64 * 1024)
            .start(|| assert_eq!(std::thread::current().name(), Some("named")))
            .unwrap();
        assert!(named.join().is_ok());
        let (give, take) = super::handoff();
        let unnamed = super::spawn(move || give.give(std::thread::current().name().is_none()));
        assert_eq!(take.within(Duration::from_secs(60)), Some(true));
        assert!(unnamed.join().is_ok());
        // A panic stays in its thread, as with std's spawn.
        assert!(super::spawn(|| panic!("a bug")).join().is_err());
    }

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

    #[test]
    fn a_queue_keeps_order_and_its_bound_and_ends_with_either_side() {
        use super::Refused;
        let (tx, rx) = super::queue(2);
        tx.try_send(1).unwrap();
        tx.try_send(2).unwrap();
        assert_eq!(tx.try_send(3), Err(Refused::Full));
        assert_eq!(rx.recv(), Some(1));
        tx.try_send(3).unwrap();
        // A blocking send waits for room, which the receiver makes.
        let t = std::thread::spawn(move || {
            tx.send(4).unwrap();
            tx.send(5).unwrap();
        });
        let got: Vec<i32> = std::iter::from_fn(|| rx.recv()).collect();
        assert_eq!(got, [2, 3, 4, 5], "in order, and ended with the sender");
        t.join().unwrap();

        // The receiver gone: sends are refused, a blocked one woken.
        let (tx, rx) = super::queue(1);
        tx.try_send(1).unwrap();
        let t = std::thread::spawn(move || tx.send(2));
        std::thread::sleep(Duration::from_millis(20));
        drop(rx);
        assert_eq!(t.join().unwrap(), Err(Refused::Gone));
    }
}
