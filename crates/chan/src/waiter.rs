//! A blocked party (crossbeam's `Context`, Go's `sudog` owner) and how it is
//! woken: the state machine that makes "exactly one case wins" hold, and
//! the rule that a partner finishes with a context before it unlocks.
//!
//! A party that must wait (a send, a receive or a whole `select`) takes one
//! [`Context`] (its [`Owned`] handle, usually kept in a task's [`WaitSlot`])
//! and puts one queue entry per case into the channels' `sendq` / `recvq`.
//! An entry holds a plain pointer to the context ([`CxRef`]), not a
//! reference count. Whoever wants to complete one of those cases (a
//! partner operation or `close`) must first move the context's `state` out
//! of `WAITING`:
//!
//! | state            | meaning                              | changed by                       |
//! |------------------|--------------------------------------|----------------------------------|
//! | `WAITING`        | blocked, no case chosen yet          | partner/close → `SELECTED(case)`;  owner (cancel) → `ABORTED` |
//! | `SELECTED(case)` | `case` fired; its outcome is in `outcome` once `delivered` is set | final |
//! | `ABORTED`        | the owner gave up (future dropped)   | final                            |
//!
//! Invariants:
//! 1. `state` leaves `WAITING` exactly once, so at most one case fires and a
//!    cancelled party is never chosen afterwards. A select's party is chosen
//!    by a compare-and-swap (its entries sit in several channels, under
//!    different locks); a party waiting on one channel only is chosen with
//!    a load and a store, since every change of its state (a partner's
//!    choice, `close`, the owner's withdrawal) is made under that channel's
//!    lock.
//! 2. **A partner touches a context only under the lock of the channel
//!    whose queue held the entry, and is finished with it when it unlocks.**
//!    The winner, still holding the lock, writes `outcome`, takes `waker`
//!    out and stores `delivered` (Release) as its last access; it wakes the
//!    taken waker after unlocking (as Go's `send` copies the value into the
//!    receiver's `sudog` under the lock and calls `goready` after). So the
//!    hand-off needs no reference count and no read-modify-write on the
//!    context: an `Arc` increment and decrement per entry and the
//!    `fetch_or` that published the outcome after unlocking were three of
//!    the eleven atomic read-modify-writes of a task ping-pong message.
//! 3. The owner frees or reuses its context only when no entry of it is in
//!    any queue: a single send or receive knows that once `delivered` is set
//!    (the partner popped the entry) or once it removed the entry itself
//!    under the lock; a select removes its other entries under each
//!    channel's lock (`select.rs`, step 5). Taking a lock after a partner's
//!    critical section orders all of that partner's accesses before the
//!    owner's, and the owner reads `outcome` only after seeing `delivered`
//!    (Acquire) or after taking the lock the winner held.
//! 4. `waker` is replaced by the owner only while it holds the lock of every
//!    channel where an entry of the context is queued (or before queuing);
//!    the winner takes it under one of those locks. The owner alone keeps
//!    `waker_id`, the identity of the waker it stored, so a poll with the
//!    same waker (a task's waker never changes) returns after two plain
//!    loads, and one with another waker takes the locks (rare).
//!    The owner alone also keeps `seq`, the number its queue entries
//!    carry (`queue.rs`): set when it queues, read when it withdraws.
//! 5. A context is heap-allocated and never moves: the owner's handle
//!    ([`Owned`]) frees it on drop, which invariant 3 makes safe. A handle
//!    leaked while queued (`mem::forget` of a future) leaks the context, so
//!    an entry never points to freed memory.

use std::mem::MaybeUninit;
use std::ptr::NonNull;
use std::task::{Context as TaskContext, Poll, Wake, Waker};

use super::loom::{AtomicUsize, Ordering, UnsafeCell};
use super::Outcome;

const WAITING: usize = 0;
const ABORTED: usize = 1;
/// `SELECTED(case)` is stored as `case + SELECTED_BASE`.
const SELECTED_BASE: usize = 2;

/// One blocked party: a single send or receive, or a whole select.
pub(crate) struct Context<T> {
    /// `WAITING`, `ABORTED` or `SELECTED(case)`; see the table above.
    state: AtomicUsize,
    /// 1 once `outcome` holds the outcome (invariant 2).
    delivered: AtomicUsize,
    /// Written once by the winner, under the lock (invariant 2).
    outcome: UnsafeCell<Option<Outcome<T>>>,
    /// Taken by the winner, under the lock (invariant 4).
    waker: UnsafeCell<Option<Waker>>,
    /// The stored waker's data and vtable pointers (owner only).
    waker_id: UnsafeCell<[usize; 2]>,
    /// The number the party's entries carry in the queues (`queue.rs`),
    /// set when it queues; owner only.
    seq: UnsafeCell<u64>,
}

impl<T> Context<T> {
    /// Stores `waker` (and its identity) for the winner to wake.
    ///
    /// # Safety
    ///
    /// The caller is the owner and no partner can take the waker meanwhile
    /// (invariant 4).
    unsafe fn store_waker(&self, waker: &Waker) {
        // SAFETY: the caller's contract.
        let old = self
            .waker
            .with_mut(|p| unsafe { (*p).replace(waker.clone()) });
        // SAFETY: owner only (invariant 4).
        self.waker_id.with_mut(|p| unsafe { *p = id_of(waker) });
        drop(old);
    }

    /// Moves `state` out of `WAITING` to `to`; true if this call did. A
    /// party waiting on one channel (`locked`: the caller holds that
    /// channel's lock, under which every change of its state is made) needs
    /// only a load and a store; a select's party a CAS (invariant 1).
    #[inline]
    fn leave_waiting(&self, to: usize, locked: bool) -> bool {
        if locked {
            if self.state.load(Ordering::Relaxed) != WAITING {
                return false;
            }
            self.state.store(to, Ordering::Relaxed);
            true
        } else {
            self.state
                .compare_exchange(WAITING, to, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        }
    }
}

/// The identity `Waker::will_wake` compares.
#[inline]
fn id_of(w: &Waker) -> [usize; 2] {
    [w.data() as usize, w.vtable() as *const _ as usize]
}

/// The owner's handle on its context: it allocated the context and frees
/// it on drop (invariants 3 and 5). Only the owner polls with it, so the
/// methods that read `outcome` take `&mut self`.
pub(crate) struct Owned<T> {
    ptr: NonNull<Context<T>>,
}

// SAFETY: the handle owns a `Context<T>`, whose cells hold `Send` values
// (`Outcome<T>` with `T: Send`, `Waker`) and are reached by other threads
// only under the protocol above.
unsafe impl<T: Send> Send for Owned<T> {}
// SAFETY: through `&Owned` only the atomics are read (`delivered`).
unsafe impl<T: Send> Sync for Owned<T> {}

/// What the owner's poll found (`Owned::check`).
pub(crate) enum Check<T> {
    /// The case that fired and its outcome.
    Done(usize, Outcome<T>),
    /// Still waiting; the stored waker wakes the caller's.
    Waiting,
    /// Still waiting, with another waker: replace it under the lock(s)
    /// (`Owned::set_waker`), then check again.
    NewWaker,
}

impl<T> Owned<T> {
    pub(crate) fn new(waker: &Waker) -> Self {
        let cx = Box::new(Context {
            state: AtomicUsize::new(WAITING),
            delivered: AtomicUsize::new(0),
            outcome: UnsafeCell::new(None),
            waker: UnsafeCell::new(Some(waker.clone())),
            waker_id: UnsafeCell::new(id_of(waker)),
            seq: UnsafeCell::new(0),
        });
        Owned {
            ptr: NonNull::from(Box::leak(cx)),
        }
    }

    #[inline]
    fn cx(&self) -> &Context<T> {
        // SAFETY: the handle keeps the context alive (invariant 5); only
        // shared references are ever made to it.
        unsafe { self.ptr.as_ref() }
    }

    /// Ready for a new wait. `&mut self` on a handle that is not parked: no
    /// entry and no partner can reach the context (invariant 3).
    fn reset(&mut self, waker: &Waker) {
        let cx = self.cx();
        cx.state.store(WAITING, Ordering::Relaxed);
        cx.delivered.store(0, Ordering::Relaxed);
        // SAFETY: nobody else reaches the cells (see above).
        let old = cx.outcome.with_mut(|p| unsafe { (*p).take() });
        drop(old);
        // SAFETY: as above.
        let same = cx.waker.with_mut(|p| unsafe { (*p).is_some() })
            && cx.waker_id.with_mut(|p| unsafe { *p }) == id_of(waker);
        if !same {
            // SAFETY: as above.
            unsafe { cx.store_waker(waker) };
        }
    }

    /// The pointer a queue entry holds.
    #[inline]
    pub(crate) fn entry(&self) -> CxRef<T> {
        CxRef { ptr: self.ptr }
    }

    /// Records the number the party's entries carry (`queue.rs`); set
    /// before they are queued, under the lock(s) they are queued under.
    #[inline]
    pub(crate) fn set_seq(&mut self, seq: u64) {
        // SAFETY: only the owner touches `seq`, and `&mut self` is the owner.
        self.cx().seq.with_mut(|p| unsafe { *p = seq });
    }

    /// The number the party's entries carry (what `set_seq` stored).
    #[inline]
    pub(crate) fn seq(&self) -> u64 {
        // SAFETY: only the owner touches `seq` (it is never written while
        // the owner reads it: writes take `&mut self`).
        self.cx().seq.with(|p| unsafe { *p })
    }

    /// True once the outcome is in (a lock-free hint).
    #[inline]
    pub(crate) fn delivered(&self) -> bool {
        self.cx().delivered.load(Ordering::Acquire) != 0
    }

    /// The delivered outcome, taken (`None` before delivery or when taken).
    pub(crate) fn take_outcome(&mut self) -> Option<(usize, Outcome<T>)> {
        if !self.delivered() {
            return None;
        }
        let cx = self.cx();
        // SAFETY: `delivered` was seen (Acquire): the winner's write is
        // complete and it no longer touches the cell (invariant 2).
        let o = cx.outcome.with_mut(|p| unsafe { (*p).take() })?;
        let case = cx
            .state
            .load(Ordering::Relaxed)
            .saturating_sub(SELECTED_BASE);
        Some((case, o))
    }

    /// The owner's poll while parked.
    #[inline]
    pub(crate) fn check(&mut self, waker: &Waker) -> Check<T> {
        if let Some((case, o)) = self.take_outcome() {
            return Check::Done(case, o);
        }
        // SAFETY: only the owner touches `waker_id` (invariant 4).
        if self.cx().waker_id.with_mut(|p| unsafe { *p }) == id_of(waker) {
            Check::Waiting
        } else {
            Check::NewWaker
        }
    }

    /// Stores `waker` for the winner to wake, unless delivered already.
    ///
    /// # Safety
    ///
    /// The caller holds the lock of every channel where an entry of this
    /// context is queued (invariant 4).
    pub(crate) unsafe fn set_waker(&mut self, waker: &Waker) {
        if self.delivered() {
            return;
        }
        // SAFETY: the winner takes `waker` only under one of the locks the
        // caller holds, and the owner is the only other party.
        unsafe { self.cx().store_waker(waker) };
    }

    /// A select's owner gives up; true if no case had been chosen.
    pub(crate) fn try_abort(&self) -> bool {
        self.cx().leave_waiting(ABORTED, false)
    }

    /// A single send's or receive's owner gives up, under the channel lock
    /// (invariant 1); true if no case had been chosen.
    pub(crate) fn abort_locked(&self) -> bool {
        self.cx().leave_waiting(ABORTED, true)
    }
}

impl<T> Drop for Owned<T> {
    fn drop(&mut self) {
        // SAFETY: allocated by `Box` in `new`; no entry or partner reaches
        // it any more (invariant 3), and this handle is the only owner.
        drop(unsafe { Box::from_raw(self.ptr.as_ptr()) });
    }
}

/// A queue entry's pointer to its party's context. Dereferenced only by a
/// holder of the lock of the channel whose queue holds the entry
/// (invariant 2), while the owner keeps the context alive (invariant 3).
pub(crate) struct CxRef<T> {
    ptr: NonNull<Context<T>>,
}

// SAFETY: a `CxRef` is only a pointer; it is used under a channel lock,
// and the context's cells hold `Send` values.
unsafe impl<T: Send> Send for CxRef<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for CxRef<T> {}

impl<T> CxRef<T> {
    #[inline]
    fn cx(&self) -> &Context<T> {
        // SAFETY: the entry is in a queue and the caller holds that
        // channel's lock, so the owner has not freed the context
        // (invariant 3).
        unsafe { self.ptr.as_ref() }
    }

    /// True while the party still waits (no case chosen, not cancelled):
    /// a partner could choose it now. Reads only; under the channel lock.
    pub(crate) fn is_waiting(&self) -> bool {
        self.cx().state.load(Ordering::Acquire) == WAITING
    }

    /// Completes the chosen party (under the channel lock, after `choose`
    /// returned true for its entry): writes its outcome, takes its waker
    /// and marks it delivered, the last access to the context (invariant
    /// 2). The caller wakes the returned hand-off after unlocking.
    #[inline]
    pub(crate) fn fire(&self, outcome: Outcome<T>) -> Handoff {
        let cx = self.cx();
        // SAFETY: this call chose the party under the lock it holds; the
        // owner reads the cell only after `delivered` (invariant 3).
        // Written, not assigned: the cell is empty (the owner took the last
        // outcome before it waited again), so there is nothing to drop, and
        // an assignment would run `Outcome`'s drop glue on it.
        cx.outcome
            .with_mut(|p| unsafe { std::ptr::write(p, Some(outcome)) });
        // SAFETY: the owner replaces the waker only under this lock too
        // (invariant 4).
        let waker = cx.waker.with_mut(|p| unsafe { (*p).take() });
        cx.delivered.store(1, Ordering::Release);
        Handoff(waker)
    }

    /// True when `self` points to `o`'s context.
    #[inline]
    pub(crate) fn is(&self, o: &Owned<T>) -> bool {
        self.ptr == o.ptr
    }
}

/// Takes a context for a new wait from `slot` (a new one without a slot).
#[inline(always)]
pub(crate) fn context_in<T>(slot: &mut Option<&mut WaitSlot<T>>, waker: &Waker) -> Owned<T> {
    let Some(s) = slot else {
        return Owned::new(waker);
    };
    s.waits = s.waits.wrapping_add(1);
    match s.cx.take() {
        Some(mut cx) => {
            cx.reset(waker);
            cx
        }
        None => Owned::new(waker),
    }
}

/// Leaves a finished wait's context in `slot` for the next wait.
#[inline]
pub(crate) fn keep_in<T>(slot: &mut Option<&mut WaitSlot<T>>, cx: Owned<T>) {
    if let Some(s) = slot {
        s.cx = Some(cx);
    }
}

/// A task's reusable wait record. The futures made with `Chan::send_in`,
/// `Chan::recv_in` and `Select::select_in` park with the context kept here
/// and put it back when they end, so a task that blocks again and again
/// allocates one context, not one per wait (the allocation, its counting
/// and its release were about 15% of a task ping-pong). A future takes the
/// context out while it is parked, so a future leaked while parked leaves
/// the slot empty and the next wait allocates.
///
/// # Examples
///
/// ```
/// use futures::executor::block_on;
/// use weft_chan::{Chan, WaitSlot};
///
/// let ch = Chan::new(0);
/// let tx = ch.clone();
/// std::thread::spawn(move || {
///     for i in 0..3 {
///         tx.send_blocking(i).unwrap();
///     }
///     tx.close().unwrap();
/// });
///
/// let mut slot = WaitSlot::new();
/// let got = block_on(async {
///     let mut got = Vec::new();
///     while let Some(v) = ch.recv_in(&mut slot).await {
///         got.push(v);
///     }
///     got
/// });
/// assert_eq!(got, [0, 1, 2]);
/// ```
pub struct WaitSlot<T> {
    cx: Option<Owned<T>>,
    /// Waits that queued with this slot's context (wrapping).
    waits: u32,
}

impl<T> Default for WaitSlot<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> WaitSlot<T> {
    /// An empty slot (the first wait allocates).
    pub const fn new() -> Self {
        WaitSlot { cx: None, waits: 0 }
    }

    /// How many waits made with this slot queued a waiter (parked), modulo
    /// 2^32: a caller compares it before and after a wait to learn whether
    /// the wait parked or completed at once.
    pub fn waits(&self) -> u32 {
        self.waits
    }
}

/// A woken party's waker, taken under the lock and woken after it is
/// released (invariant 2); empty when a step woke nobody.
pub(crate) struct Handoff(Option<Waker>);

impl Handoff {
    /// Nobody to wake.
    pub(crate) const NONE: Handoff = Handoff(None);

    #[inline]
    pub(crate) fn deliver(self) {
        if let Some(w) = self.0 {
            w.wake();
        }
    }
}

/// A queue entry: one case of one blocked party. Its value is that of a
/// send case (for `recvq` entries it is `()`), always initialized.
///
/// `repr(C)`, in this order, with no field narrower than 4 bytes: the
/// value first, so that a 16-byte value (the interpreter's) is one of the
/// 16-byte pieces the compiler copies an entry in, and the pointer last.
/// The value is kept as `MaybeUninit` (dropped by `Drop` below) only so
/// that it lends `Option<Waiter>` no niche: `None` is then the null
/// pointer, the last word, which the compiler tests and copies apart from
/// the rest. With the value's tag as the niche, a popped entry's first
/// word was copied apart and the value read back from two stores that
/// could not forward to one load: a stall in every receive that took a
/// parked sender's value, and likewise with the value straddling two
/// pieces after the pointer.
#[repr(C)]
pub(crate) struct Waiter<T, V> {
    val: MaybeUninit<V>,
    /// The case's index in its select (0 for a send or receive): 32 bits,
    /// so that a receive's queue entry is 24 bytes, not 32 (a blocked
    /// task's entry is part of what it costs).
    pub(crate) case: u32,
    /// 1: the party waits on this channel only (a send or receive, not a
    /// select), and is chosen with a load and a store (invariant 1); 0: a
    /// select's case.
    pub(crate) single: u32,
    pub(crate) cx: CxRef<T>,
}

impl<T, V> Waiter<T, V> {
    /// The entry of case `case` of the party `cx`, with the case's value.
    #[inline(always)]
    pub(crate) fn new(cx: CxRef<T>, case: u32, val: V, single: bool) -> Self {
        Waiter {
            val: MaybeUninit::new(val),
            case,
            single: single as u32,
            cx,
        }
    }

    /// The value.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn val(&self) -> &V {
        // SAFETY: always initialized (`new`), dropped only by `Drop`.
        unsafe { self.val.assume_init_ref() }
    }

    /// The context pointer and the value, taken out.
    #[inline(always)]
    pub(crate) fn into_parts(self) -> (CxRef<T>, V) {
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never used or dropped again, so the pointer and
        // the (initialized) value are moved out once.
        unsafe { (std::ptr::read(&me.cx), me.val.assume_init_read()) }
    }

    /// Chooses this entry's party for its case (under the channel lock).
    #[inline]
    pub(crate) fn choose(&self) -> bool {
        self.cx
            .cx()
            .leave_waiting(self.case as usize + SELECTED_BASE, self.single != 0)
    }
}

impl<T, V> Drop for Waiter<T, V> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: always initialized (`new`); `into_parts` forgets the
        // entry it takes the value from, so this runs once per value.
        unsafe { self.val.assume_init_drop() }
    }
}

/// Wakes a parked thread: the waker behind every `_blocking` operation.
struct ThreadWaker(super::loom::Thread);

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
        static WAKER: Waker = Waker::from(std::sync::Arc::new(ThreadWaker(super::loom::current())));
    }
    WAKER.with(Waker::clone)
}

#[cfg(loom)]
fn thread_waker() -> Waker {
    Waker::from(std::sync::Arc::new(ThreadWaker(super::loom::current())))
}

/// A channel future that `block_on` can check before parking.
pub(crate) trait Parkable: std::future::Future + Unpin {
    /// True when polling now would (likely) complete: the operation is not
    /// queued, or its outcome was delivered. Never takes a lock.
    fn ready_hint(&self) -> bool;
}

/// True when `cx` is absent (not queued) or has its outcome.
#[inline]
pub(crate) fn hint<T>(cx: &Option<Owned<T>>) -> bool {
    cx.as_ref().is_none_or(|cx| cx.delivered())
}

/// Runs a channel future to completion on this thread: once the operation
/// is queued it spins for a few microseconds (`spin_until`) and only then
/// parks. A partner that arrives during the spin completes the operation
/// without a thread wake-up (about 10 us here); a thread woken while it
/// spun finds one spurious unpark later, which costs one more poll.
///
/// Unbuffered operations need their partner for every message. Buffered
/// ones get here after their retry (`Retry` or `Backoff`) found the
/// channel still full or empty, and on a small buffer the partner then
/// usually comes within a message's time: parking at once made spsc/1
/// bimodal against crossbeam-channel (median ratio 1.26-1.76 over 22
/// pairs, when both libraries' threads ran slow), spinning brought it to
/// 0.34-0.94. It costs mpsc/1 (four senders, one receiver) 1.3x of its
/// earlier time, still about half of crossbeam's: a spinning sender takes
/// the one spin slot of two CPUs (docs/performance.md, "Twenty-fifth
/// session").
#[inline(never)]
pub(crate) fn block_on<F: Parkable>(mut fut: F) -> F::Output {
    let waker = thread_waker();
    let mut cx = TaskContext::from_waker(&waker);
    if let Poll::Ready(v) = std::pin::Pin::new(&mut fut).poll(&mut cx) {
        return v;
    }
    if !fut.ready_hint() {
        spin_until(|| fut.ready_hint());
    }
    park_until_ready(fut, &mut cx)
}

/// Polls `fut` until it completes, parking the thread whenever it is
/// queued and not yet delivered.
#[inline(always)]
fn park_until_ready<F: Parkable>(mut fut: F, cx: &mut TaskContext<'_>) -> F::Output {
    loop {
        if let Poll::Ready(v) = std::pin::Pin::new(&mut fut).poll(cx) {
            return v;
        }
        if !fut.ready_hint() {
            super::loom::park();
        }
    }
}

/// The retry of a buffered `_blocking` operation that found the channel
/// full (a send) or empty (a receive), before it queues and parks. Its
/// schedule is crossbeam's `Backoff`: snooze `k` spins `2^k` pauses while
/// `k <= 6`, then yields, and the retry is used up after snooze 10. A
/// thread whose long spins stopped paying off spins only while `k <= 3`
/// and yields from there.
///
/// Why: a pause-spin helps only while the partner runs on another CPU.
/// With more runnable threads than CPUs (four senders and a receiver on
/// two vCPUs) the spinning thread holds a CPU that the partner, or another
/// party it waits behind, needs; yielding earlier made mpsc/1 and mpmc/1
/// about twice as fast. With one thread a side on two CPUs the long spin
/// is what catches the partner, and yielding early made spsc/1 up to 30% slower.
/// So each thread keeps a score of its own recent retries (a thread's
/// role, sender or receiver in some pattern, is usually stable):
/// a retry that ran the long spin and succeeded during snoozes 4 to 6 (the
/// part the short spin leaves out) raises it by 2; one that still had to
/// yield or park lowers it by 1; the long spin is used while the score is
/// not negative, and in one retry of 16 regardless, so that a thread that
/// gave it up notices when it would pay again.
#[cfg(not(loom))]
pub(crate) struct Retry {
    /// Snoozes taken so far.
    step: u32,
    /// The last snooze that spins: `LONG_SPIN` or `SHORT_SPIN`.
    spin: u32,
}

#[cfg(not(loom))]
const LONG_SPIN: u32 = 6;
#[cfg(not(loom))]
const SHORT_SPIN: u32 = 3;
/// The retry is used up after this snooze (crossbeam's `YIELD_LIMIT`).
#[cfg(not(loom))]
const RETRY_STEPS: u32 = 10;

#[cfg(not(loom))]
thread_local! {
    /// This thread's `(score, retries)`; see [`Retry`].
    static RETRY_SCORE: std::cell::Cell<(i32, u32)> = const { std::cell::Cell::new((0, 0)) };
}

#[cfg(not(loom))]
impl Retry {
    #[inline]
    pub(crate) fn new() -> Self {
        let (score, retries) = RETRY_SCORE.get();
        RETRY_SCORE.set((score, retries.wrapping_add(1)));
        let spin = if score >= 0 || retries % 16 == 0 {
            LONG_SPIN
        } else {
            SHORT_SPIN
        };
        Retry { step: 0, spin }
    }

    /// Waits one step: spins `2^k` pauses, or yields.
    #[inline]
    pub(crate) fn snooze(&mut self) {
        if self.step <= self.spin {
            for _ in 0..1u32 << self.step {
                std::hint::spin_loop();
            }
        } else {
            std::thread::yield_now();
        }
        self.step += 1;
    }

    /// True once the retry is used up: queue and park.
    #[inline]
    pub(crate) fn is_completed(&self) -> bool {
        self.step > RETRY_STEPS
    }

    /// The retry ended (the operation completed, or the retry was used
    /// up): scores the long spin, if this retry ran it.
    #[inline]
    pub(crate) fn finish(&self) {
        if self.spin != LONG_SPIN {
            return;
        }
        let d = if self.step > LONG_SPIN + 1 {
            -1
        } else if self.step > SHORT_SPIN + 1 {
            2
        } else {
            0
        };
        if d != 0 {
            let (score, retries) = RETRY_SCORE.get();
            RETRY_SCORE.set(((score + d).clamp(-16, 16), retries));
        }
    }
}

/// No optional retrying under loom (every retry would multiply the
/// interleavings): used up at once.
#[cfg(loom)]
pub(crate) struct Retry;

#[cfg(loom)]
impl Retry {
    pub(crate) fn new() -> Self {
        Retry
    }
    pub(crate) fn snooze(&mut self) {
        loom::thread::yield_now();
    }
    pub(crate) fn is_completed(&self) -> bool {
        true
    }
    pub(crate) fn finish(&self) {}
}

/// How long a queued thread watches its `delivered` flag before it parks:
/// about two futex wake-ups on these machines, so a partner that is
/// running (or being woken) completes the operation while the waiter is
/// still awake, and a wait that outlasts the spin wastes at most this much
/// of one CPU.
#[cfg(not(loom))]
const SPIN_FOR: std::time::Duration = std::time::Duration::from_micros(20);

/// The first part of the spin only pauses; after it each round also
/// yields, so a partner that is runnable on this CPU gets to run. Four
/// microseconds, not one: with more threads than CPUs a yield mostly ran
/// some other waiter instead of the partner, and the longer pause made
/// mpmc/0 (four senders, four receivers, unbuffered) about twice as fast
/// and mpsc/0 1.5-2.5 times (docs/performance.md, "Twenty-fifth session").
#[cfg(not(loom))]
const PAUSE_FOR: std::time::Duration = std::time::Duration::from_micros(4);

/// Threads spinning in [`spin_until`] now.
#[cfg(not(loom))]
static SPINNERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// At most this many threads spin at once: half the CPUs (none on one
/// CPU), as Go's scheduler keeps at most half its busy processors
/// spinning. Without the cap, four senders spinning on two vCPUs took the
/// CPU their receiver needed and ran 3-4 times slower than parking.
#[cfg(not(loom))]
fn max_spinners() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| std::thread::available_parallelism().map_or(0, |n| n.get() / 2))
}

/// Spins until `ready` or for [`SPIN_FOR`], if fewer than
/// [`max_spinners`] threads spin now. A
/// partner that completes the operation meanwhile wakes this thread with
/// an `unpark` that finds it awake: no futex call on either side.
#[cfg(not(loom))]
fn spin_until(ready: impl Fn() -> bool) {
    use std::sync::atomic::Ordering::Relaxed;
    if SPINNERS.fetch_add(1, Relaxed) < max_spinners() {
        let start = std::time::Instant::now();
        // `Instant::now` costs about as much as 30 `pause`s: read it once a round.
        while !(0..32).any(|_| {
            std::hint::spin_loop();
            ready()
        }) {
            let spent = start.elapsed();
            if spent >= SPIN_FOR {
                break;
            }
            if spent >= PAUSE_FOR {
                std::thread::yield_now();
            }
        }
    }
    SPINNERS.fetch_sub(1, Relaxed);
}

/// loom explores every interleaving instead: park at once.
#[cfg(loom)]
fn spin_until(_ready: impl Fn() -> bool) {}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Runs one retry that ends after `snoozes` snoozes; returns whether
    /// it used the long spin.
    fn retry(snoozes: u32) -> bool {
        let mut r = Retry::new();
        for _ in 0..snoozes {
            if r.is_completed() {
                break;
            }
            r.snooze();
        }
        r.finish();
        r.spin == LONG_SPIN
    }

    #[test]
    fn retry_keeps_the_long_spin_while_it_pays_and_drops_it_when_it_does_not() {
        // A fresh thread: score 0.
        std::thread::spawn(|| {
            assert!(retry(2), "a new thread starts with the long spin");
            // Retries that outlast the long spin (used up: parked).
            let long: Vec<bool> = (0..40).map(|_| retry(RETRY_STEPS + 1)).collect();
            assert!(long[0], "the first failure is scored with the long spin");
            let tail = &long[20..];
            let used = tail.iter().filter(|&&l| l).count();
            assert!(
                (1..=2).contains(&used),
                "after repeated failures only one retry in 16 tries the long spin: {used} of {}",
                tail.len()
            );
            // Retries that the long spin catches (done in snooze 5 or 6)
            // win it back: the probes that use it raise the score by 2.
            let mut back = false;
            for _ in 0..200 {
                if retry(LONG_SPIN) {
                    back = true;
                }
                if back && retry(LONG_SPIN) && retry(LONG_SPIN) {
                    break;
                }
            }
            assert!(back && retry(0), "the long spin comes back once it pays");
            // A retry that succeeds in the short spin's range says nothing.
            let before = RETRY_SCORE.get().0;
            retry(2);
            assert_eq!(RETRY_SCORE.get().0, before);
        })
        .join()
        .unwrap();
    }
}
