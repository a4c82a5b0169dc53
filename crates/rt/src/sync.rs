//! The one door through which the runtime reaches atomics, locks and condition
//! variables, so that `RUSTFLAGS="--cfg loom"` swaps in loom's model-checked
//! versions (see `tests/runtime_loom.rs`). Nothing else in `src/runtime/` or
//! `src/netpoll/` names `std::sync` directly.
//!
//! Reference counts (`Arc`, `Weak`) stay `std`: they are not part of the
//! protocols that the loom tests check.
//!
//! Invariant: no lock here is held while a task's future is polled, so a
//! poisoned lock can only come from a bug in the runtime itself; `lock` and
//! `wait` recover the guard instead of panicking.

#[cfg(loom)]
pub use loom::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
#[cfg(loom)]
pub use loom::sync::{Condvar, Mutex, MutexGuard};

#[cfg(not(loom))]
pub use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub use std::sync::{Condvar, Mutex, MutexGuard};

/// Locks `m`, ignoring poisoning (see the module invariant).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Tries to lock `m` without blocking; `None` when another thread holds it.
pub fn try_lock<T>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match m.try_lock() {
        Ok(g) => Some(g),
        Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(_) => None,
    }
}

/// Waits on `cv`, ignoring poisoning.
pub fn wait<'a, T>(cv: &Condvar, g: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    cv.wait(g).unwrap_or_else(|e| e.into_inner())
}
