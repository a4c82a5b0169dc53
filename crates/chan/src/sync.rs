//! The synchronisation facade of the channel module.
//!
//! Every lock, atomic, `Arc` and thread-parking call in `src/chan/` comes
//! through here, so that `RUSTFLAGS="--cfg loom"` swaps in loom's model-checked
//! types (tokio's `loom` facade is the model). Normal builds use `parking_lot`
//! for the mutex (with crossbeam's `Backoff` when contended), `Backoff`
//! for the short retry of a buffered select (sends and receives use
//! `waiter::Retry`) and the ring's spin waits, and `std` for the rest
//! (atomics, fences, `UnsafeCell` with loom's `with_mut` interface).
//!
//! Invariant: nothing in this module can panic. loom's `Mutex::lock` returns a
//! `LockResult`; a poisoned lock is impossible here (no code under a channel
//! lock panics), and `into_inner` is taken anyway rather than unwrapping.

#[cfg(not(loom))]
mod imp {
    pub(crate) use crossbeam_utils::Backoff;
    pub(crate) use std::sync::atomic::{fence, AtomicUsize, Ordering};
    pub(crate) use std::sync::Arc;
    pub(crate) use std::thread::{current, park, Thread};

    /// A mutex whose `lock` returns the guard directly.
    pub(crate) struct Mutex<T>(parking_lot::Mutex<T>);
    pub(crate) type MutexGuard<'a, T> = parking_lot::MutexGuard<'a, T>;

    /// `std::cell::UnsafeCell` with loom's `with_mut` interface.
    pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        pub(crate) fn new(v: T) -> Self {
            UnsafeCell(std::cell::UnsafeCell::new(v))
        }
        #[inline]
        pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }
    }

    impl<T> Mutex<T> {
        pub(crate) fn new(v: T) -> Self {
            Mutex(parking_lot::Mutex::new(v))
        }
        #[inline]
        pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
            match self.0.try_lock() {
                Some(g) => g,
                None => self.lock_contended(),
            }
        }

        /// Spins and yields (crossbeam's `Backoff`) before sleeping in the
        /// lock: parking_lot stops spinning once any waiter sleeps, and a
        /// sleeping waiter costs a futex wake-up (~10 us here) per unlock,
        /// far longer than any channel critical section.
        #[cold]
        fn lock_contended(&self) -> MutexGuard<'_, T> {
            let backoff = Backoff::new();
            loop {
                backoff.snooze();
                if let Some(g) = self.0.try_lock() {
                    return g;
                }
                if backoff.is_completed() {
                    return self.0.lock();
                }
            }
        }
    }
}

#[cfg(loom)]
mod imp {
    pub(crate) use loom::cell::UnsafeCell;
    pub(crate) use loom::sync::atomic::{fence, AtomicUsize, Ordering};
    pub(crate) use loom::sync::Arc;
    pub(crate) use loom::thread::{current, park, Thread};

    /// No optional retrying under loom (every retry would multiply the
    /// interleavings): `is_completed` at once. A wait that must spin (the
    /// ring's wait for an in-flight slot) yields to loom's scheduler.
    pub(crate) struct Backoff;

    impl Backoff {
        pub(crate) fn new() -> Self {
            Backoff
        }
        pub(crate) fn is_completed(&self) -> bool {
            true
        }
        pub(crate) fn spin(&self) {
            loom::thread::yield_now();
        }
        pub(crate) fn snooze(&self) {
            loom::thread::yield_now();
        }
    }

    /// A mutex whose `lock` returns the guard directly.
    pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);
    pub(crate) type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

    impl<T> Mutex<T> {
        pub(crate) fn new(v: T) -> Self {
            Mutex(loom::sync::Mutex::new(v))
        }
        pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
            self.0.lock().unwrap_or_else(|e| e.into_inner())
        }
    }
}

pub(crate) use imp::*;
