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
//! | `SELECTED(case)` | `case` fired; its outcome is (or is about to be) in `outcome` | final |
//! | `ABORTED`        | the owner gave up (future dropped)   | final                            |
//!
//! The outcome then travels through a second word, `flags`, with no lock
//! (tokio's `AtomicWaker` protocol, specialised to one delivery):
//! `DELIVERED` is set once by the winner after it wrote `outcome`;
//! `REGISTERING` is held by the owner while it replaces `waker`.
//!
//! Invariants:
//! 1. `state` leaves `WAITING` exactly once, so at most one case fires and a
//!    cancelled party is never chosen afterwards.
//! 2. Only the CAS winner writes `outcome`, once, before it sets
//!    `DELIVERED` (Release); the owner reads `outcome` only after it saw
//!    `DELIVERED` (Acquire).
//! 3. `waker` is written by the owner only while it holds `REGISTERING`
//!    (or in `new`, before the context is shared), and taken by the winner
//!    only when its `fetch_or(DELIVERED)` found `REGISTERING` clear; the
//!    owner cannot take `REGISTERING` once `DELIVERED` is set. So the two
//!    never touch `waker` at once. If the winner found `REGISTERING` set,
//!    it does not wake: the owner's closing CAS fails and it takes the
//!    outcome itself. No lost wake-up either way.
//! 4. `waker_id` (the data and vtable pointers of the stored waker) is
//!    touched only by the owner, so a poll with the same waker (the common
//!    case: a task's waker never changes) returns with two plain loads.
//! 5. The CAS on `state` is done while the winner holds the lock of the
//!    channel whose queue held the entry; the outcome is delivered (and the
//!    waker woken) after that lock is released.
//!
//! A delivery costs one atomic read-modify-write and a poll none; the mutex
//! this replaces cost two each (lock and unlock), about 6% of a task
//! ping-pong's cycles.

use std::task::{Context as TaskContext, Poll, Wake, Waker};

use super::sync::{fence, Arc, AtomicUsize, Ordering, UnsafeCell};
use super::Outcome;

const WAITING: usize = 0;
const ABORTED: usize = 1;
/// `SELECTED(case)` is stored as `case + SELECTED_BASE`.
const SELECTED_BASE: usize = 2;

/// `flags`: the outcome is in `outcome` (set once, final).
const DELIVERED: usize = 1;
/// `flags`: the owner is replacing `waker`.
const REGISTERING: usize = 2;

/// One blocked party: a single send or receive, or a whole select.
pub(crate) struct Context<T> {
    /// `WAITING`, `ABORTED` or `SELECTED(case)`; see the table above.
    state: AtomicUsize,
    /// `DELIVERED | REGISTERING` (invariants 2 and 3).
    flags: AtomicUsize,
    /// Written once by the party that won the CAS (invariant 2).
    outcome: UnsafeCell<Option<Outcome<T>>>,
    /// Woken once the outcome is written (invariant 3).
    waker: UnsafeCell<Option<Waker>>,
    /// The stored waker's data and vtable pointers (owner only, invariant 4).
    waker_id: UnsafeCell<[usize; 2]>,
}

// SAFETY: `outcome` and `waker` are reached only under the protocol of
// invariants 2 and 3, which orders every access by the atomics; the values
// they hold are `Send` (`Outcome<T>` with `T: Send`, `Waker`).
unsafe impl<T: Send> Send for Context<T> {}
// SAFETY: as above: no two threads reach either cell at once.
unsafe impl<T: Send> Sync for Context<T> {}

/// The identity `Waker::will_wake` compares.
#[inline]
fn id_of(w: &Waker) -> [usize; 2] {
    [w.data() as usize, w.vtable() as *const _ as usize]
}

impl<T> Context<T> {
    pub(crate) fn new(waker: &Waker) -> Arc<Self> {
        Arc::new(Context {
            state: AtomicUsize::new(WAITING),
            flags: AtomicUsize::new(0),
            outcome: UnsafeCell::new(None),
            waker: UnsafeCell::new(Some(waker.clone())),
            waker_id: UnsafeCell::new(id_of(waker)),
        })
    }

    /// A context for a new wait: `old` made ready again when nobody else
    /// holds it any more, else a new one.
    ///
    /// Why this is sound: `old` is never shared through a `Weak`, so a
    /// strong count of 1 means no queue entry, hand-off or partner can
    /// reach it. Every other holder dropped its reference with a Release
    /// decrement; the Acquire fence after reading the count orders their
    /// last accesses (the winner's `deliver`) before the writes here. The
    /// context is published again only through a channel lock.
    pub(crate) fn reuse(old: Option<Arc<Self>>, waker: &Waker) -> Arc<Self> {
        match old {
            Some(cx) if Arc::strong_count(&cx) == 1 => {
                fence(Ordering::Acquire);
                cx.state.store(WAITING, Ordering::Relaxed);
                cx.flags.store(0, Ordering::Relaxed);
                // SAFETY: the only reference (see above): nobody else can
                // reach the cells.
                cx.outcome.with_mut(|p| unsafe { *p = None });
                let id = id_of(waker);
                // SAFETY: as above.
                let same = cx.waker.with_mut(|p| unsafe { (*p).is_some() })
                    && cx.waker_id.with_mut(|p| unsafe { *p }) == id;
                if !same {
                    // SAFETY: as above.
                    let old = cx
                        .waker
                        .with_mut(|p| unsafe { (*p).replace(waker.clone()) });
                    // SAFETY: as above.
                    cx.waker_id.with_mut(|p| unsafe { *p = id });
                    drop(old);
                }
                cx
            }
            _ => Self::new(waker),
        }
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

    /// `try_select` for a party waiting on one channel only (a send or a
    /// receive, not a select), called under that channel's lock: every
    /// change of such a party's `state` (a partner's choice, `close`, the
    /// owner's `abort_locked`) is made under that one lock, so a load and a
    /// store do what the compare-and-swap does, one atomic read-modify-write
    /// fewer per hand-off (Go's `chanrecv` has no such step either: only a
    /// select's `sudog` is claimed with a CAS, `selectDone`).
    #[inline]
    pub(crate) fn select_locked(&self, case: usize) -> bool {
        if self.state.load(Ordering::Relaxed) != WAITING {
            return false;
        }
        self.state.store(case + SELECTED_BASE, Ordering::Relaxed);
        true
    }

    /// `try_abort` for a party waiting on one channel, under its lock
    /// (see `select_locked`).
    pub(crate) fn abort_locked(&self) -> bool {
        if self.state.load(Ordering::Relaxed) != WAITING {
            return false;
        }
        self.state.store(ABORTED, Ordering::Relaxed);
        true
    }

    /// The owner gives up; true if no case had been chosen.
    pub(crate) fn try_abort(&self) -> bool {
        self.state
            .compare_exchange(WAITING, ABORTED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// The winner of `try_select` hands over the outcome and wakes the owner.
    pub(crate) fn deliver(&self, outcome: Outcome<T>) {
        // SAFETY: invariant 2: only the CAS winner gets here, once, and the
        // owner reads the cell only after the `DELIVERED` set below.
        self.outcome.with_mut(|p| unsafe { *p = Some(outcome) });
        let prev = self.flags.fetch_or(DELIVERED, Ordering::AcqRel);
        if prev & REGISTERING == 0 {
            // SAFETY: invariant 3: the owner is not replacing the waker and
            // can no longer start to (`DELIVERED` is set).
            let waker = self.waker.with_mut(|p| unsafe { (*p).take() });
            if let Some(w) = waker {
                w.wake();
            }
        }
    }

    /// True once the outcome is in `outcome` (a lock-free hint).
    #[inline]
    pub(crate) fn delivered(&self) -> bool {
        self.flags.load(Ordering::Acquire) & DELIVERED != 0
    }

    /// The owner takes the delivered outcome (after seeing `DELIVERED`).
    fn take_outcome(&self) -> Option<(usize, Outcome<T>)> {
        // SAFETY: invariant 2: `DELIVERED` was seen (Acquire), so the
        // winner's write is complete and nobody else touches the cell.
        let o = self.outcome.with_mut(|p| unsafe { (*p).take() })?;
        let case = self
            .state
            .load(Ordering::Acquire)
            .saturating_sub(SELECTED_BASE);
        Some((case, o))
    }

    /// The owner checks for its outcome: `Some((case, outcome))` once
    /// delivered, otherwise it makes sure `waker` will be woken and returns
    /// `None`.
    pub(crate) fn poll_outcome(&self, waker: &Waker) -> Option<(usize, Outcome<T>)> {
        if self.delivered() {
            return self.take_outcome();
        }
        let id = id_of(waker);
        // SAFETY: invariant 4: only the owner touches `waker_id`, and it
        // polls from one thread at a time.
        if self.waker_id.with_mut(|p| unsafe { *p }) == id {
            // The stored waker wakes this one (invariant 4).
            return None;
        }
        if self
            .flags
            .compare_exchange(0, REGISTERING, Ordering::Acquire, Ordering::Acquire)
            .is_err()
        {
            // Delivered meanwhile.
            return self.take_outcome();
        }
        // SAFETY: invariant 3: the owner holds `REGISTERING`.
        let old = self
            .waker
            .with_mut(|p| unsafe { (*p).replace(waker.clone()) });
        // SAFETY: invariant 4, as above.
        self.waker_id.with_mut(|p| unsafe { *p = id });
        let closed =
            self.flags
                .compare_exchange(REGISTERING, 0, Ordering::AcqRel, Ordering::Acquire);
        drop(old);
        match closed {
            Ok(_) => None,
            // Delivered while registering: the winner saw `REGISTERING` and
            // left the waking to us.
            Err(_) => self.take_outcome(),
        }
    }
}

/// A task's reusable wait record. The futures made with `Chan::send_in`,
/// `Chan::recv_in` and `Select::select_in` park with the context kept here
/// and put it back when they end, so a task that blocks again and again
/// allocates one context, not one per wait (the allocation, its counting
/// and the last reference's release were about 15% of a task ping-pong).
/// A context still referenced elsewhere when the next wait starts (a
/// partner between its delivery and dropping its hand-off) is left to that
/// holder and a new one is made.
pub struct WaitSlot<T> {
    cx: Option<Arc<Context<T>>>,
}

impl<T> Default for WaitSlot<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> WaitSlot<T> {
    /// An empty slot (the first wait allocates).
    pub const fn new() -> Self {
        WaitSlot { cx: None }
    }
}

/// Takes a context for a new wait from `slot` (see [`Context::reuse`]).
#[inline]
pub(crate) fn context_in<T>(slot: &mut Option<&mut WaitSlot<T>>, waker: &Waker) -> Arc<Context<T>> {
    Context::reuse(slot.as_mut().and_then(|s| s.cx.take()), waker)
}

/// Leaves a finished wait's context in `slot` for the next wait.
#[inline]
pub(crate) fn keep_in<T>(slot: &mut Option<&mut WaitSlot<T>>, cx: Arc<Context<T>>) {
    if let Some(s) = slot {
        s.cx = Some(cx);
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
    /// The party waits on this channel only (a send or receive, not a
    /// select): it is chosen with `select_locked`.
    pub(crate) single: bool,
}

impl<T, V> Waiter<T, V> {
    /// Chooses this entry's party for its case (under the channel lock).
    #[inline]
    pub(crate) fn choose(&self) -> bool {
        if self.single {
            self.cx.select_locked(self.case)
        } else {
            self.cx.try_select(self.case)
        }
    }
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

/// A channel future that `block_on` can check before parking.
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

/// Runs a channel future to completion on this thread, parking it while
/// the operation is queued. It parks at once rather than spinning first:
/// measured on 2 vCPUs with more threads than cores, a thread spinning or
/// yielding for its partner takes the CPU the partner needs (crossbeam-
/// channel 0.5.17 parks at once too). A spurious unpark (left over from a
/// partner that woke an operation which had already completed) only costs
/// one more poll.
pub(crate) fn block_on<F: Parkable>(mut fut: F) -> F::Output {
    let waker = thread_waker();
    let mut cx = TaskContext::from_waker(&waker);
    loop {
        if let Poll::Ready(v) = std::pin::Pin::new(&mut fut).poll(&mut cx) {
            return v;
        }
        if !fut.ready_hint() {
            super::sync::park();
        }
    }
}
