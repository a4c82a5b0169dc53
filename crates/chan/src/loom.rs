//! The loom facade: every lock, atomic, `Arc`, `UnsafeCell`, condition
//! variable and thread-parking call of the Weft crates comes through here,
//! so that `RUSTFLAGS="--cfg loom"` swaps in loom's model-checked types
//! (tokio's `crate::loom` is the model). `weft-chan` owns it because it is
//! the one crate every other crate with such state depends on; `weft-rt`
//! uses it as `weft_chan::loom`. Users of the channels never need it.
//!
//! Normal builds use `parking_lot` for the mutex (with crossbeam's
//! `Backoff` when contended) and the condition variable, a spin lock
//! released by a plain store for the channels' state (`SpinMutex`), `Backoff` for
//! short retries and spin waits, and `std` for the rest (atomics, fences,
//! `Arc`, thread parking, `UnsafeCell` with loom's `with` / `with_mut`
//! interface, so that loom sees every access to the cell).
//!
//! Invariant: nothing in this module can panic. loom's `Mutex::lock` returns
//! a `LockResult`; a poisoned lock is impossible in Weft (no code holding a
//! Weft lock panics, and no lock is held while a task's future is polled),
//! and `into_inner` is taken anyway rather than unwrapping.

#[cfg(not(loom))]
mod imp {
    pub use crossbeam_utils::Backoff;
    pub use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
    pub use std::sync::Arc;
    pub use std::thread::{current, park, yield_now, Thread};

    /// A mutex whose `lock` returns the guard directly.
    #[derive(Debug, Default)]
    pub struct Mutex<T>(parking_lot::Mutex<T>);
    /// The guard of a [`Mutex`].
    pub type MutexGuard<'a, T> = parking_lot::MutexGuard<'a, T>;

    impl<T> Mutex<T> {
        /// A new unlocked mutex holding `v`.
        pub fn new(v: T) -> Self {
            Mutex(parking_lot::Mutex::new(v))
        }

        /// Locks the mutex, spinning briefly before sleeping.
        #[inline]
        pub fn lock(&self) -> MutexGuard<'_, T> {
            match self.0.try_lock() {
                Some(g) => g,
                None => self.lock_contended(),
            }
        }

        /// Locks the mutex if no other thread holds it.
        #[inline]
        pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
            self.0.try_lock()
        }

        /// Spins and yields (crossbeam's `Backoff`) before sleeping in the
        /// lock: parking_lot stops spinning once any waiter sleeps, and a
        /// sleeping waiter costs a futex wake-up (~10 us here) per unlock,
        /// far longer than any Weft critical section.
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

    /// A lock for short critical sections that never sleep in the kernel:
    /// the channels' state lock. Taking it is one compare-and-swap, as for
    /// [`Mutex`]; releasing it is a plain store (`Release`), where
    /// parking_lot's unlock is a second read-modify-write, since it must
    /// learn whether a waiter sleeps. On x86 each such locked instruction
    /// drains the store buffer, and the channel programs ran two per
    /// channel operation (the lock and the unlock were each 2-5% of
    /// `spsc1`'s cycles). A contended taker spins, then yields its thread
    /// (crossbeam's `Backoff`) until the lock is free, as
    /// crossbeam-channel's own spin lock does: the sections it guards are
    /// tens of nanoseconds, and a holder that lost its CPU gets it back
    /// from the yields.
    pub type SpinMutex<T> = lock_api::Mutex<RawSpin, T>;
    /// The guard of a [`SpinMutex`].
    pub type SpinGuard<'a, T> = lock_api::MutexGuard<'a, RawSpin, T>;

    /// The raw lock of [`SpinMutex`]: one flag.
    #[derive(Debug)]
    pub struct RawSpin {
        locked: AtomicBool,
    }

    // SAFETY: `try_lock` sets the flag with an Acquire CAS only when it was
    // clear, so one holder at a time; `unlock` clears it with a Release
    // store, so the next holder sees every write of the last.
    unsafe impl lock_api::RawMutex for RawSpin {
        #[allow(clippy::declare_interior_mutable_const)]
        const INIT: RawSpin = RawSpin {
            locked: AtomicBool::new(false),
        };
        type Guard = lock_api::GuardSend;

        #[inline]
        fn lock(&self) -> lock_api::GuardSend {
            if !self.acquire() {
                self.lock_contended();
            }
            lock_api::GuardSend::new()
        }

        #[inline]
        fn try_lock(&self) -> Option<lock_api::GuardSend> {
            self.acquire().then(lock_api::GuardSend::new)
        }

        #[inline]
        unsafe fn unlock(&self, _guard: lock_api::GuardSend) {
            self.locked.store(false, Ordering::Release);
        }

        #[inline]
        fn is_locked(&self) -> bool {
            self.locked.load(Ordering::Relaxed)
        }
    }

    impl RawSpin {
        /// Sets the flag if it was clear.
        #[inline]
        fn acquire(&self) -> bool {
            self.locked
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        }

        /// Waits for the flag to clear (reads only, so waiters do not
        /// bounce its cache line), then tries again.
        #[cold]
        fn lock_contended(&self) {
            let backoff = Backoff::new();
            loop {
                while self.locked.load(Ordering::Relaxed) {
                    backoff.snooze();
                }
                if self.acquire() {
                    return;
                }
            }
        }
    }

    /// A condition variable over [`Mutex`].
    #[derive(Debug, Default)]
    pub struct Condvar(parking_lot::Condvar);

    impl Condvar {
        /// A new condition variable.
        pub fn new() -> Self {
            Condvar(parking_lot::Condvar::new())
        }

        /// Unlocks `g`, waits for a notification (or a spurious wake-up)
        /// and locks again.
        pub fn wait<'a, T>(&self, mut g: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
            self.0.wait(&mut g);
            g
        }

        /// Wakes one waiter.
        pub fn notify_one(&self) {
            self.0.notify_one();
        }

        /// Wakes every waiter.
        pub fn notify_all(&self) {
            self.0.notify_all();
        }
    }

    /// `std::cell::UnsafeCell` with loom's `with` / `with_mut` interface.
    #[derive(Debug, Default)]
    pub struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        /// A new cell holding `v`.
        pub const fn new(v: T) -> Self {
            UnsafeCell(std::cell::UnsafeCell::new(v))
        }

        /// Calls `f` with a shared pointer to the contents.
        #[inline]
        pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            f(self.0.get())
        }

        /// Calls `f` with a mutable pointer to the contents.
        #[inline]
        pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }
    }
}

#[cfg(loom)]
mod imp {
    pub use ::loom::cell::UnsafeCell;
    pub use ::loom::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
    pub use ::loom::sync::Arc;
    pub use ::loom::thread::{current, park, yield_now, Thread};

    /// No optional retrying under loom (every retry would multiply the
    /// interleavings): `is_completed` at once. A wait that must spin (the
    /// ring's wait for an in-flight slot) yields to loom's scheduler.
    #[derive(Debug, Default)]
    pub struct Backoff;

    impl Backoff {
        /// A new backoff.
        pub fn new() -> Self {
            Backoff
        }
        /// Always true: retries are not modelled.
        pub fn is_completed(&self) -> bool {
            true
        }
        /// Yields to loom's scheduler.
        pub fn spin(&self) {
            ::loom::thread::yield_now();
        }
        /// Yields to loom's scheduler.
        pub fn snooze(&self) {
            ::loom::thread::yield_now();
        }
    }

    /// A mutex whose `lock` returns the guard directly.
    #[derive(Debug)]
    pub struct Mutex<T>(::loom::sync::Mutex<T>);
    /// The guard of a [`Mutex`].
    pub type MutexGuard<'a, T> = ::loom::sync::MutexGuard<'a, T>;

    impl<T> Mutex<T> {
        /// A new unlocked mutex holding `v`.
        pub fn new(v: T) -> Self {
            Mutex(::loom::sync::Mutex::new(v))
        }
        /// Locks the mutex.
        pub fn lock(&self) -> MutexGuard<'_, T> {
            self.0.lock().unwrap_or_else(|e| e.into_inner())
        }
        /// Locks the mutex if no other thread holds it.
        pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
            match self.0.try_lock() {
                Ok(g) => Some(g),
                Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
                Err(std::sync::TryLockError::WouldBlock) => None,
            }
        }
    }

    /// The channels' lock: loom's mutex, like [`Mutex`] (loom checks
    /// the same exclusion; the spinning is not modelled).
    pub type SpinMutex<T> = Mutex<T>;
    /// The guard of a [`SpinMutex`].
    pub type SpinGuard<'a, T> = MutexGuard<'a, T>;

    /// A condition variable over [`Mutex`].
    #[derive(Debug, Default)]
    pub struct Condvar(::loom::sync::Condvar);

    impl Condvar {
        /// A new condition variable.
        pub fn new() -> Self {
            Condvar(::loom::sync::Condvar::new())
        }
        /// Unlocks `g`, waits for a notification and locks again.
        pub fn wait<'a, T>(&self, g: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
            self.0.wait(g).unwrap_or_else(|e| e.into_inner())
        }
        /// Wakes one waiter.
        pub fn notify_one(&self) {
            self.0.notify_one();
        }
        /// Wakes every waiter.
        pub fn notify_all(&self) {
            self.0.notify_all();
        }
    }
}

pub use imp::*;
