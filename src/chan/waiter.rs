//! A blocked party (crossbeam's `Context`, Go's `sudog` owner) and how it is
//! woken: the one-CAS state machine that makes "exactly one case wins" hold.
//!
//! A party that must wait (a send, a receive or a whole `select`) creates one
//! [`Context`] and puts one queue entry per case into the channels' `sendq` /
//! `recvq`. Whoever wants to complete one of those cases (a partner operation
//! or `close`) must first win one compare-and-swap on the context's `state`:
//!
//! | state            | meaning                              | changed by (one CAS)             |
//! |------------------|--------------------------------------|----------------------------------|
//! | `WAITING`        | blocked, no case chosen yet          | partner/close → `SELECTED(case)`;  owner (cancel) → `ABORTED` |
//! | `SELECTED(case)` | `case` fired; its outcome is (or is about to be) in `slot` | final |
//! | `ABORTED`        | the owner gave up (future dropped)   | final                            |
//!
//! Invariants:
//! 1. `state` leaves `WAITING` exactly once, so at most one case fires and a
//!    cancelled party is never chosen afterwards.
//! 2. Only the CAS winner writes `slot.outcome`, once, after the CAS. The
//!    waker is taken from `slot` under the same lock as the write, so the
//!    owner either sees the outcome or has stored the waker the winner will
//!    wake: no lost wake-up.
//! 3. The CAS is done while the winner holds the lock of the channel whose
//!    queue held the entry; the outcome is delivered (and the waker woken)
//!    after that lock is released. `slot`'s lock is a leaf: no channel lock is
//!    ever taken while it is held.

use std::task::{Context as TaskContext, Poll, Wake, Waker};

use super::sync::{Arc, AtomicBool, AtomicUsize, Backoff, Mutex, Ordering};
use super::Outcome;

const WAITING: usize = 0;
const ABORTED: usize = 1;
/// `SELECTED(case)` is stored as `case + SELECTED_BASE`.
const SELECTED_BASE: usize = 2;

/// One blocked party: a single send or receive, or a whole select.
pub(crate) struct Context<T> {
    /// `WAITING`, `ABORTED` or `SELECTED(case)`; see the table above.
    state: AtomicUsize,
    /// The outcome of the chosen case and the waker to call.
    slot: Mutex<Slot<T>>,
    /// Set (after the outcome is written) so a spinning thread can watch
    /// for completion without taking `slot`'s lock.
    delivered: AtomicBool,
}

struct Slot<T> {
    /// Woken once the outcome is written; refreshed on every poll.
    waker: Option<Waker>,
    /// Written once by the party that won the CAS.
    outcome: Option<Outcome<T>>,
}

impl<T> Context<T> {
    pub(crate) fn new(waker: &Waker) -> Arc<Self> {
        Arc::new(Context {
            state: AtomicUsize::new(WAITING),
            slot: Mutex::new(Slot {
                waker: Some(waker.clone()),
                outcome: None,
            }),
            delivered: AtomicBool::new(false),
        })
    }

    /// A partner (or `close`) tries to choose `case`; true if it won.
    #[inline]
    pub(crate) fn try_select(&self, case: usize) -> bool {
        self.state
            .compare_exchange(
                WAITING,
                case + SELECTED_BASE,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
    }

    /// The owner gives up; true if no case had been chosen.
    pub(crate) fn try_abort(&self) -> bool {
        self.state
            .compare_exchange(WAITING, ABORTED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// The winner of `try_select` hands over the outcome and wakes the owner.
    pub(crate) fn deliver(&self, outcome: Outcome<T>) {
        let waker = {
            let mut slot = self.slot.lock();
            slot.outcome = Some(outcome);
            self.delivered.store(true, Ordering::Release);
            slot.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// True once the outcome is in `slot` (a lock-free hint).
    #[inline]
    pub(crate) fn delivered(&self) -> bool {
        self.delivered.load(Ordering::Acquire)
    }

    /// The owner checks for its outcome: `Some((case, outcome))` once
    /// delivered, otherwise it stores `waker` and returns `None`.
    pub(crate) fn poll_outcome(&self, waker: &Waker) -> Option<(usize, Outcome<T>)> {
        let mut slot = self.slot.lock();
        match slot.outcome.take() {
            Some(o) => {
                let case = self
                    .state
                    .load(Ordering::Acquire)
                    .saturating_sub(SELECTED_BASE);
                Some((case, o))
            }
            None => {
                match &slot.waker {
                    Some(w) if w.will_wake(waker) => {}
                    _ => slot.waker = Some(waker.clone()),
                }
                None
            }
        }
    }
}

/// An outcome to deliver to a blocked party once the channel lock is released
/// (invariant 3).
pub(crate) struct Handoff<T> {
    pub(crate) cx: Arc<Context<T>>,
    pub(crate) outcome: Outcome<T>,
}

impl<T> Handoff<T> {
    #[inline]
    pub(crate) fn deliver(self) {
        self.cx.deliver(self.outcome);
    }
}

/// A queue entry: one case of one blocked party. `val` holds the value of a
/// send case (for `recvq` entries it is `()`).
pub(crate) struct Waiter<T, V> {
    pub(crate) cx: Arc<Context<T>>,
    pub(crate) case: usize,
    pub(crate) val: V,
}

/// Wakes a parked thread: the waker behind every `_blocking` operation.
struct ThreadWaker(super::sync::Thread);

impl Wake for ThreadWaker {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        self.0.unpark();
    }
}

#[cfg(not(loom))]
fn thread_waker() -> Waker {
    thread_local! {
        static WAKER: Waker = Waker::from(std::sync::Arc::new(ThreadWaker(super::sync::current())));
    }
    WAKER.with(Waker::clone)
}

#[cfg(loom)]
fn thread_waker() -> Waker {
    Waker::from(std::sync::Arc::new(ThreadWaker(super::sync::current())))
}

/// A channel future that `block_on` can watch while spinning.
pub(crate) trait Parkable: std::future::Future + Unpin {
    /// True when polling now would (likely) complete: the operation is not
    /// queued, or its outcome was delivered. Never takes a lock.
    fn ready_hint(&self) -> bool;
}

/// True when `cx` is absent (not queued) or has its outcome.
#[inline]
pub(crate) fn hint<T>(cx: &Option<Arc<Context<T>>>) -> bool {
    cx.as_ref().is_none_or(|cx| cx.delivered())
}

/// Runs a channel future to completion on this thread. Like crossbeam's
/// `Context::wait_until`, once the operation is queued (first `Pending`) it
/// watches the lock-free `delivered` flag for a few microseconds
/// (`Backoff`: spin, then yield) before parking: a partner that arrives
/// meanwhile completes it without the cost of a thread wake-up. A spurious
/// unpark only costs one more poll.
pub(crate) fn block_on<F: Parkable>(mut fut: F) -> F::Output {
    let waker = thread_waker();
    let mut cx = TaskContext::from_waker(&waker);
    let backoff = Backoff::new();
    loop {
        if let Poll::Ready(v) = std::pin::Pin::new(&mut fut).poll(&mut cx) {
            return v;
        }
        while !fut.ready_hint() && !backoff.is_completed() {
            backoff.snooze();
        }
        if !fut.ready_hint() {
            super::sync::park();
        }
    }
}
