//! `Chan<T>`: one Go channel (`hchan`), its send/receive futures, and the
//! `try_` and `_blocking` forms.
//!
//! A buffered channel (capacity up to `RING_MAX`) keeps its values in a
//! lock-free ring (`ring.rs`): while no party is queued and the channel is
//! open, a send or receive that can use the buffer is one CAS, as in
//! crossbeam-channel's array flavour, and never takes the lock. Everything
//! else locks the channel once and runs one step of `state.rs`; taking the
//! lock freezes the ring ([`Locked`]), and the ring stays frozen while any
//! party is queued or the channel is closed, so the lock-free path only runs
//! when Go's rules reduce to "use the buffer" (see `ring.rs`).
//!
//! A `try_` operation that must fail does not lock either: an open ring
//! says "full" / "empty" itself; otherwise, as in Go's `chansend` /
//! `chanrecv` with `block == false`, it reads the channel's `flags`, a
//! one-word summary of the state (nothing to receive, no room to send,
//! closed) stored by every critical section just before it unlocks
//! (`Locked`'s `Drop`), so one load sees the state after some critical
//! section: the failure is linearized at that load. The summary is
//! conservative (a queue entry counts even when stale), so a flag never
//! says "fail" where the locked step could succeed. A critical section that
//! thaws the ring stores `flags = 0` ("unknown, look at the ring") first.
//! If the step cannot complete, an async operation creates a `Context`,
//! queues one entry and returns `Pending` with the lock released; it is
//! completed by a partner or `close` (see `waiter.rs`). A future dropped
//! while queued aborts its context and removes its entry (cancellation
//! safety); if a partner had already chosen it, the operation counts as done
//! (a received value is dropped with the future).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use super::ring::{Miss, Ring, Words, RING_MAX};
use super::state::{Buf, RecvStep, SendStep, State};
use std::ops::{Deref, DerefMut};

use super::loom::{Arc, AtomicUsize, Ordering, SpinGuard, SpinMutex};
use super::waiter::{
    block_on, context_in, hint, keep_in, Check, Owned, Parkable, Retry, WaitSlot, Waiter,
};
use super::{CloseError, Outcome, SendError, TryRecvError, TrySendError};
use std::task::Waker;

/// A channel: a reference to a shared queue with Go's semantics.
/// `Clone` gives another reference to the same channel, and `==` tells
/// whether two handles name the same channel.
///
/// Every handle can send, receive and close. Dropping handles never closes
/// the channel; only [`close`](Chan::close) does. Values still buffered
/// when the last handle is dropped are dropped with it.
///
/// Each operation comes in three forms: async ([`send`](Chan::send),
/// [`recv`](Chan::recv)), for threads ([`send_blocking`](Chan::send_blocking),
/// [`recv_blocking`](Chan::recv_blocking)) and non-blocking
/// ([`try_send`](Chan::try_send), [`try_recv`](Chan::try_recv)); all of
/// them work on the same channel at the same time.
///
/// # Examples
///
/// ```
/// use weft_chan::Chan;
///
/// let ch = Chan::new(2);
/// let other = ch.clone();
/// assert_eq!(ch, other);
/// other.send_blocking("a").unwrap();
/// ch.try_send("b").unwrap();
/// assert_eq!((ch.len(), ch.cap()), (2, 2));
/// assert_eq!(futures::executor::block_on(ch.recv()), Some("a"));
/// assert_eq!(other.recv_blocking(), Some("b"));
/// ```
pub struct Chan<T> {
    pub(crate) inner: Arc<Inner<T>>,
}

/// A channel's shared part. `repr(C)`: what a lock holder writes (the
/// lock, the state, the flags) lies in three cache lines after the ring's,
/// starting at a line (the ring is 128-aligned and its size a multiple of
/// 128); `cap`, only read, comes last. A fourth line written under the
/// lock cost `mpmc` with 2 workers 8-12%: the two CPUs pass every written
/// line back and forth (docs/channels.md, "The wait queues"). The unit
/// test `locked_fields_fill_three_cache_lines` checks the sizes.
#[repr(C)]
pub(crate) struct Inner<T> {
    /// The buffer of a channel with `1 <= cap <= RING_MAX`.
    pub(crate) ring: Option<Ring<T>>,
    /// Everything else, under the channel lock (`hchan.lock`).
    pub(crate) state: SpinMutex<State<T>>,
    /// `EMPTY | FULL | CLOSED` of the state after the last critical section,
    /// or 0 (nothing known) while the ring is open; written only under the
    /// lock, read without it by the `try_` fast paths.
    pub(crate) flags: AtomicUsize,
    /// Capacity (`hchan.dataqsiz`); 0 is unbuffered.
    pub(crate) cap: usize,
    /// Creation number, the identity under loom (see [`Chan::id`]).
    #[cfg(loom)]
    seq: usize,
}

/// No value to receive: nothing buffered (cap > 0) or no queued sender (cap 0).
/// Go's `empty(c)`.
pub(crate) const EMPTY: usize = 1;
/// No room to send: buffer full (cap > 0) or no queued receiver (cap 0).
/// Go's `full(c)`.
pub(crate) const FULL: usize = 2;
/// `close` has succeeded (permanent).
pub(crate) const CLOSED: usize = 4;

/// The flags that describe `st` (see [`Inner::flags`]).
#[inline]
fn flags_of<T>(st: &State<T>, buf: &Buf<'_, T>) -> usize {
    let (empty, full) = if buf.cap == 0 {
        (st.sendq.is_empty(), st.recvq.is_empty())
    } else {
        let len = st.len(buf);
        (len == 0, len >= buf.cap)
    };
    (empty as usize) * EMPTY + (full as usize) * FULL + (st.closed as usize) * CLOSED
}

/// What a lock-free probe of a channel learned when it did not complete.
pub(crate) enum Probe {
    /// Not ready at one instant (full / empty, not closed); with the ring's
    /// words when the open ring showed it (for select's double check).
    NotReady(Option<Words>),
    /// Closed (a receive: closed and drained); permanent.
    Closed,
    /// Only the locked step can tell.
    Unknown,
}

/// The channel lock held, with the ring frozen: derefs to the state and,
/// on drop, publishes the state's flags and thaws the ring when no party is
/// queued and the channel is open, before the lock is released (the only
/// way `State` is reached, so `flags` is always current for anyone who
/// takes the lock, and the ring is frozen whenever a party is queued).
pub(crate) struct Locked<'a, T> {
    guard: SpinGuard<'a, State<T>>,
    inner: &'a Inner<T>,
}

impl<'a, T> Locked<'a, T> {
    #[inline]
    fn new(inner: &'a Inner<T>) -> Self {
        let mut guard = inner.state.lock();
        if let Some(r) = &inner.ring {
            if !guard.frozen {
                r.freeze();
                guard.frozen = true;
            }
        }
        Locked { guard, inner }
    }

    #[inline]
    fn buf(&self) -> Buf<'a, T> {
        Buf {
            cap: self.inner.cap,
            ring: self.inner.ring.as_ref(),
        }
    }

    /// One send step (`state.rs`).
    #[inline]
    pub(crate) fn send(&mut self, v: T) -> SendStep<T> {
        let buf = self.buf();
        self.guard.send(&buf, v)
    }

    /// One receive step (`state.rs`).
    #[inline]
    pub(crate) fn recv(&mut self) -> RecvStep<T> {
        let buf = self.buf();
        self.guard.recv(&buf)
    }

    /// Values buffered now.
    pub(crate) fn len(&self) -> usize {
        self.guard.len(&self.buf())
    }

    /// Whether a send would not block now (`State::send_ready`).
    fn send_ready(&self) -> bool {
        self.guard.send_ready(&self.buf())
    }

    /// Whether a receive would not block now (`State::recv_ready`).
    fn recv_ready(&self) -> bool {
        self.guard.recv_ready(&self.buf())
    }
}

impl<T> Deref for Locked<'_, T> {
    type Target = State<T>;
    #[inline]
    fn deref(&self) -> &State<T> {
        &self.guard
    }
}

impl<T> DerefMut for Locked<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut State<T> {
        &mut self.guard
    }
}

impl<T> Drop for Locked<'_, T> {
    #[inline]
    fn drop(&mut self) {
        if self.inner.ring.is_some() {
            self.publish_frozen();
            return;
        }
        // Release: a fast-path reader that loads this value (Acquire-or-
        // stronger) sees every earlier critical section, so a later `close`
        // cannot be missing from a value that follows it in the flags' order.
        let f = flags_of(&self.guard, &self.buf());
        self.inner.flags.store(f, Ordering::Release);
    }
}

impl<T> Locked<'_, T> {
    /// `Drop` for a channel with a ring: thaw it when no party is queued
    /// and the channel is open (flags 0 first), else publish the flags.
    /// Out of line: the unbuffered hand-off path stays small.
    #[inline(never)]
    fn publish_frozen(&mut self) {
        let buf = self.buf();
        let Some(ring) = buf.ring else { return };
        // SeqCst with the ring's marks: a reader that saw a marked index and
        // then loads flags from this store knows no thaw came in between.
        let st = &mut *self.guard;
        if !st.closed && st.sendq.is_empty() && st.recvq.is_empty() {
            self.inner.flags.store(0, Ordering::SeqCst);
            ring.thaw();
            st.frozen = false;
        } else {
            let f = flags_of(st, &buf);
            self.inner.flags.store(f, Ordering::SeqCst);
        }
    }
}

impl<T> Clone for Chan<T> {
    fn clone(&self) -> Self {
        Chan {
            inner: self.inner.clone(),
        }
    }
}

impl<T> PartialEq for Chan<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}
impl<T> Eq for Chan<T> {}

impl<T> fmt::Debug for Chan<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Chan({:#x}, cap {})", self.id(), self.inner.cap)
    }
}

impl<T> Chan<T> {
    /// Identity of the channel: equal ids are the same channel. Also the
    /// lock order of `select` (Go sorts by `hchan` address).
    #[inline]
    pub fn id(&self) -> usize {
        #[cfg(not(loom))]
        return &*self.inner as *const Inner<T> as usize;
        // loom replays every execution and needs the same lock order each
        // time; addresses differ between executions, creation order does not.
        #[cfg(loom)]
        return self.inner.seq;
    }

    #[inline]
    pub(crate) fn lock(&self) -> Locked<'_, T> {
        Locked::new(&self.inner)
    }

    /// The flags published by the last critical section (no lock).
    #[inline]
    pub(crate) fn flags(&self) -> usize {
        self.inner.flags.load(Ordering::SeqCst)
    }
}

impl<T: Send> Chan<T> {
    /// A channel with `cap` buffer slots (Go's `make(chan T, cap)`).
    ///
    /// With `cap == 0` the channel is unbuffered: a send completes only
    /// when a receiver takes the value. Otherwise up to `cap` values wait
    /// in FIFO order. Capacities up to 65,536 use a lock-free ring
    /// allocated here; larger ones keep a buffer under the channel's lock
    /// that grows on demand.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft_chan::{Chan, TrySendError};
    ///
    /// let unbuffered = Chan::new(0);
    /// // No receiver waits, so a send cannot complete now.
    /// assert_eq!(unbuffered.try_send(1), Err(TrySendError::Full(1)));
    ///
    /// let buffered = Chan::new(1);
    /// assert_eq!(buffered.try_send(1), Ok(()));
    /// assert_eq!(buffered.try_send(2), Err(TrySendError::Full(2)));
    /// ```
    pub fn new(cap: usize) -> Chan<T> {
        Chan::build(cap, (1..=RING_MAX).contains(&cap))
    }

    /// A channel as [`Chan::new`], but whose buffer is always kept under
    /// the channel's lock, never in a lock-free ring.
    ///
    /// For small buffers between parties that park at once when they must
    /// wait (tasks, not spinning threads). Such parties keep a small buffer
    /// full or empty, so nearly every operation queues or wakes a party,
    /// and a ring then freezes and thaws around each one. A task sending
    /// to a task through capacity 1 took 0.76x the time with the buffer
    /// under the lock, capacity 2 0.83x, capacity 4 0.90x; capacity 8 was
    /// even, and from 128 up the ring is several times faster
    /// (docs/channels.md, "Which buffer").
    ///
    /// # Examples
    ///
    /// ```
    /// use weft_chan::{Chan, TrySendError};
    ///
    /// let ch = Chan::with_locked_buffer(1);
    /// assert_eq!(ch.try_send(1), Ok(()));
    /// assert_eq!(ch.try_send(2), Err(TrySendError::Full(2)));
    /// assert_eq!(ch.try_recv(), Ok(1));
    /// ```
    pub fn with_locked_buffer(cap: usize) -> Chan<T> {
        Chan::build(cap, false)
    }

    /// A channel of capacity `cap`, its buffer in a ring when `ring`
    /// (then `1 <= cap <= RING_MAX`).
    fn build(cap: usize, ring: bool) -> Chan<T> {
        let ring = ring.then(|| Ring::new(cap));
        let state = State::new(cap, ring.is_some());
        let flags = match ring {
            Some(_) => 0,
            None => flags_of(&state, &Buf { cap, ring: None }),
        };
        Chan {
            inner: Arc::new(Inner {
                cap,
                ring,
                state: SpinMutex::new(state),
                flags: AtomicUsize::new(flags),
                #[cfg(loom)]
                seq: {
                    static SEQ: std::sync::atomic::AtomicUsize =
                        std::sync::atomic::AtomicUsize::new(0);
                    SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                },
            }),
        }
    }

    /// Values buffered now (`len(ch)`).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether a send would not block now: the channel is closed (the
    /// send would fail), a receiver waits, or the buffer has room. Reads
    /// under the channel's lock and changes nothing; another thread may
    /// change the answer at once, so it is exact only where one thread
    /// runs every party (a single-threaded scheduler deciding which
    /// `select` cases are ready, as `weft test` does).
    ///
    /// # Examples
    ///
    /// ```
    /// use weft_chan::Chan;
    ///
    /// let ch = Chan::new(1);
    /// assert!(ch.send_ready() && !ch.recv_ready());
    /// ch.try_send(1).unwrap();
    /// assert!(!ch.send_ready() && ch.recv_ready());
    /// ```
    pub fn send_ready(&self) -> bool {
        self.lock().send_ready()
    }

    /// Whether a receive would not block now: a value is buffered, a
    /// sender waits, or the channel is closed. Exact only where one thread
    /// runs every party (see [`Chan::send_ready`]).
    pub fn recv_ready(&self) -> bool {
        self.lock().recv_ready()
    }

    /// True when nothing is buffered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Capacity (`cap(ch)`).
    pub fn cap(&self) -> usize {
        self.inner.cap
    }

    /// Entries now in (`sendq`, `recvq`), counting entries of parties that
    /// already finished elsewhere and have not removed them yet. For tests
    /// and diagnostics: after every party has finished it is `(0, 0)`.
    pub fn queued(&self) -> (usize, usize) {
        let st = self.lock();
        (st.sendq.len(), st.recvq.len())
    }

    /// True once `close` has succeeded (values may still be buffered).
    pub fn is_closed(&self) -> bool {
        self.flags() & CLOSED != 0
    }

    /// `close(ch)`: wakes every blocked receiver (they get `None`) and
    /// sender (they fail). Fails if already closed.
    ///
    /// After a close, sends fail with the value given back, and receives
    /// first drain the values still buffered, then return `None` at once.
    ///
    /// # Errors
    ///
    /// [`CloseError`] if the channel was already closed (Go panics).
    ///
    /// # Examples
    ///
    /// ```
    /// use weft_chan::{Chan, CloseError, SendError};
    ///
    /// let ch = Chan::new(2);
    /// ch.send_blocking(1).unwrap();
    /// ch.close().unwrap();
    /// assert_eq!(ch.close(), Err(CloseError));
    /// assert!(matches!(ch.send_blocking(2), Err(SendError(2))));
    /// assert_eq!(ch.recv_blocking(), Some(1));
    /// assert_eq!(ch.recv_blocking(), None);
    /// ```
    pub fn close(&self) -> Result<(), CloseError> {
        let woken = self.lock().close()?;
        for h in woken {
            h.deliver();
        }
        Ok(())
    }

    /// Sends without blocking: `Full` when no receiver waits and the buffer
    /// is full, `Closed` when the channel is closed.
    ///
    /// On an unbuffered channel it succeeds only by handing the value to a
    /// receiver that is already waiting.
    ///
    /// # Errors
    ///
    /// [`TrySendError::Full`] or [`TrySendError::Closed`], with the value.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft_chan::{Chan, TrySendError};
    ///
    /// let ch = Chan::new(1);
    /// assert_eq!(ch.try_send('a'), Ok(()));
    /// assert_eq!(ch.try_send('b'), Err(TrySendError::Full('b')));
    /// ch.close().unwrap();
    /// assert_eq!(ch.try_send('c'), Err(TrySendError::Closed('c')));
    /// ```
    pub fn try_send(&self, v: T) -> Result<(), TrySendError<T>> {
        // `probe_send`, written out: `T` is moved once less.
        let v = match &self.inner.ring {
            Some(r) => match r.try_push(v) {
                Ok(()) => return Ok(()),
                Err((v, Miss::Fail(_))) => return Err(TrySendError::Full(v)),
                // (`Taken` only comes from a first attempt.)
                Err((v, Miss::Slow | Miss::Taken)) => v,
            },
            None => v,
        };
        let f = self.flags();
        if f & CLOSED != 0 {
            return Err(TrySendError::Closed(v));
        }
        if f & FULL != 0 {
            return Err(TrySendError::Full(v));
        }
        let step = self.lock().send(v);
        match step {
            SendStep::Done(h) => {
                h.deliver();
                Ok(())
            }
            SendStep::Closed(v) => Err(TrySendError::Closed(v)),
            SendStep::Full(v) => Err(TrySendError::Full(v)),
        }
    }

    /// Receives without blocking: `Empty` when nothing is there, `Closed`
    /// when the channel is closed and drained.
    ///
    /// # Errors
    ///
    /// [`TryRecvError::Empty`] or [`TryRecvError::Closed`].
    ///
    /// # Examples
    ///
    /// ```
    /// use weft_chan::{Chan, TryRecvError};
    ///
    /// let ch = Chan::new(1);
    /// assert_eq!(ch.try_recv(), Err(TryRecvError::Empty));
    /// ch.try_send(5).unwrap();
    /// ch.close().unwrap();
    /// assert_eq!(ch.try_recv(), Ok(5));
    /// assert_eq!(ch.try_recv(), Err(TryRecvError::Closed));
    /// ```
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        match self.probe_recv::<true>() {
            Ok(v) => return Ok(v),
            Err(Probe::NotReady(_)) => return Err(TryRecvError::Empty),
            Err(Probe::Closed) => return Err(TryRecvError::Closed),
            Err(Probe::Unknown) => {}
        }
        let step = self.lock().recv();
        match step {
            RecvStep::Done(Some(v), h) => {
                h.deliver();
                Ok(v)
            }
            RecvStep::Done(None, h) => {
                h.deliver();
                Err(TryRecvError::Closed)
            }
            RecvStep::Empty => Err(TryRecvError::Empty),
        }
    }

    /// True when a send would certainly block at this instant: the
    /// channel has no ring, is open, and its flags say no receiver waits
    /// and the buffer has no room (`try_send` would return `Full`).
    /// Without the lock; false means only that a send may complete. For a
    /// caller that can park without first making the value to send.
    #[inline]
    pub fn send_blocks_now(&self) -> bool {
        self.inner.ring.is_none() && self.flags() & (FULL | CLOSED) == FULL
    }

    /// The ring's `(head, tail)` words, if the channel has a ring.
    #[inline]
    pub(crate) fn ring_words(&self) -> Option<Words> {
        self.inner.ring.as_ref().map(|r| r.words())
    }

    /// A send without the lock: through the open ring, else the flags.
    /// `NotReady` and `Closed` are exact at one instant (see the module
    /// header), except that with `EXACT` false a full ring's `NotReady`
    /// is only a hint (`Ring::push_open`: for a select whose locked pass
    /// decides when no case fires); `Unknown`: only the locked step can
    /// tell.
    #[inline]
    pub(crate) fn probe_send<const EXACT: bool>(&self, v: T) -> Result<(), (T, Probe)> {
        let v = match &self.inner.ring {
            Some(r) => match r.push_open::<EXACT>(v) {
                Ok(()) => return Ok(()),
                Err((v, Miss::Fail(w))) => return Err((v, Probe::NotReady(Some(w)))),
                Err((v, Miss::Slow | Miss::Taken)) => v,
            },
            None => v,
        };
        // Go's fast path: closed is permanent, and "not closed and full" in
        // one snapshot means the send could not have completed then.
        let f = self.flags();
        if f & CLOSED != 0 {
            return Err((v, Probe::Closed));
        }
        if f & FULL != 0 {
            return Err((v, Probe::NotReady(None)));
        }
        Err((v, Probe::Unknown))
    }

    /// A receive without the lock, as [`Chan::probe_send`] (`EXACT`
    /// included); `Closed`: closed and drained (permanent).
    #[inline(always)]
    pub(crate) fn probe_recv<const EXACT: bool>(&self) -> Result<T, Probe> {
        if let Some(r) = &self.inner.ring {
            match r.pop_open::<EXACT>() {
                Ok(v) => return Ok(v),
                Err(Miss::Fail(w)) => return Err(Probe::NotReady(Some(w))),
                Err(Miss::Slow | Miss::Taken) => {}
            }
        }
        // Go's fast path: empty and not closed fails now; empty and closed
        // stays so forever (no send after close, `close` empties `sendq`).
        let f = self.flags();
        if f & EMPTY != 0 {
            return Err(if f & CLOSED != 0 {
                Probe::Closed
            } else {
                Probe::NotReady(None)
            });
        }
        Err(Probe::Unknown)
    }

    /// `ch <- v`: completes when a receiver took the value or it was
    /// buffered; fails (value returned) if the channel is or gets closed.
    ///
    /// The future waits through the task's `Waker` only, so any executor
    /// can run it. Dropping it while it waits withdraws the send; if a
    /// receiver had already taken the value, the send counts as done.
    ///
    /// # Errors
    ///
    /// The future gives [`SendError`] with the value if the channel is
    /// closed before the value is taken.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures::executor::block_on;
    /// use weft_chan::Chan;
    ///
    /// let ch = Chan::new(0);
    /// let (sent, got) = block_on(async { futures::join!(ch.send(1), ch.recv()) });
    /// assert_eq!(sent, Ok(()));
    /// assert_eq!(got, Some(1));
    /// ```
    pub fn send(&self, v: T) -> SendFut<'_, T> {
        SendFut {
            chan: self,
            val: Held::new(v),
            cx: None,
            slot: None,
        }
    }

    /// [`send`](Chan::send), parking (if it must) with the wait record
    /// kept in `slot`, so that repeated waits allocate once (see
    /// [`WaitSlot`]).
    pub fn send_in<'a>(&'a self, v: T, slot: &'a mut WaitSlot<T>) -> SendFut<'a, T> {
        SendFut {
            chan: self,
            val: Held::new(v),
            cx: None,
            slot: Some(slot),
        }
    }

    /// `v, ok := <-ch`: `None` once the channel is closed and drained.
    ///
    /// The future waits through the task's `Waker` only, so any executor
    /// can run it. Dropping it while it waits withdraws the receive; but if
    /// a sender handed it a value after its last poll, that value is
    /// dropped with the future (the receive had completed). To wait on
    /// several channels, use [`Select`](crate::Select), which fires one
    /// case only.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures::executor::block_on;
    /// use weft_chan::Chan;
    ///
    /// let ch = Chan::new(2);
    /// ch.try_send("x").unwrap();
    /// ch.close().unwrap();
    /// block_on(async {
    ///     assert_eq!(ch.recv().await, Some("x"));
    ///     assert_eq!(ch.recv().await, None);
    /// });
    /// ```
    pub fn recv(&self) -> RecvFut<'_, T> {
        RecvFut {
            chan: self,
            cx: None,
            done: false,
            slot: None,
        }
    }

    /// [`recv`](Chan::recv), parking (if it must) with the wait record
    /// kept in `slot`, so that repeated waits allocate once (see
    /// [`WaitSlot`]).
    pub fn recv_in<'a>(&'a self, slot: &'a mut WaitSlot<T>) -> RecvFut<'a, T> {
        RecvFut {
            chan: self,
            cx: None,
            done: false,
            slot: Some(slot),
        }
    }

    /// `send` for a plain thread: parks the thread while blocked. On a
    /// buffered channel it first retries for a few microseconds
    /// (`waiter::Retry`: crossbeam's `Backoff` schedule, with a shorter spin
    /// for a thread whose long spins stopped paying off): room appears as
    /// soon as any receiver runs, far sooner than a parked thread wakes up.
    /// An unbuffered send needs a queued receiver, so it queues at once.
    /// Once queued, either kind spins for a few microseconds before
    /// parking (see `waiter::block_on`).
    ///
    /// # Errors
    ///
    /// [`SendError`] with the value if the channel is closed before the
    /// value is taken.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::thread;
    /// use weft_chan::Chan;
    ///
    /// let ch = Chan::new(0);
    /// let rx = ch.clone();
    /// let receiver = thread::spawn(move || rx.recv_blocking());
    /// ch.send_blocking(3).unwrap(); // returns once the receiver has it
    /// assert_eq!(receiver.join().unwrap(), Some(3));
    /// ```
    pub fn send_blocking(&self, v: T) -> Result<(), SendError<T>> {
        // The ring's first attempt gives up on a taken slot without loading
        // `head` (the receiver's line); the retry polls the slot.
        let v = match &self.inner.ring {
            Some(r) => match r.push_first(v) {
                Ok(()) => return Ok(()),
                Err((v, Miss::Slow)) => v,
                Err((v, Miss::Taken | Miss::Fail(_))) => return self.send_retrying(v),
            },
            None => v,
        };
        let v = match self.try_send(v) {
            Ok(()) => return Ok(()),
            Err(TrySendError::Closed(v)) => return Err(SendError(v)),
            Err(TrySendError::Full(v)) => v,
        };
        if self.inner.cap == 0 {
            return block_on(self.send(v));
        }
        self.send_retrying(v)
    }

    /// `send_blocking` on a buffered channel that was full: retry, then park.
    /// Out of line (and marked cold), so that the first attempt's code stays
    /// as small as it was: inlined, it made seq/1 7% slower.
    #[cold]
    #[inline(never)]
    fn send_retrying(&self, mut v: T) -> Result<(), SendError<T>> {
        let mut retry = Retry::new();
        loop {
            if retry.is_completed() {
                retry.finish();
                return block_on(self.send(v));
            }
            retry.snooze();
            if !self.inner.ring.as_ref().is_none_or(Ring::push_hint) {
                continue;
            }
            match self.try_send(v) {
                Ok(()) => {
                    retry.finish();
                    return Ok(());
                }
                Err(TrySendError::Closed(v)) => return Err(SendError(v)),
                Err(TrySendError::Full(back)) => v = back,
            }
        }
    }

    /// `recv` for a plain thread: parks the thread while blocked, after a
    /// short retry on a buffered channel (as `send_blocking`). `None` once
    /// the channel is closed and drained.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::thread;
    /// use weft_chan::Chan;
    ///
    /// let ch = Chan::new(8);
    /// let tx = ch.clone();
    /// thread::spawn(move || {
    ///     for i in 0..5 {
    ///         tx.send_blocking(i).unwrap();
    ///     }
    ///     tx.close().unwrap();
    /// });
    /// let mut got = Vec::new();
    /// while let Some(v) = ch.recv_blocking() {
    ///     got.push(v);
    /// }
    /// assert_eq!(got, [0, 1, 2, 3, 4]);
    /// ```
    pub fn recv_blocking(&self) -> Option<T> {
        if let Some(r) = &self.inner.ring {
            match r.pop_first() {
                Ok(v) => return Some(v),
                Err(Miss::Slow) => {}
                Err(Miss::Taken | Miss::Fail(_)) => return self.recv_retrying(),
            }
        }
        match self.try_recv() {
            Ok(v) => return Some(v),
            Err(TryRecvError::Closed) => return None,
            Err(TryRecvError::Empty) => {}
        }
        if self.inner.cap == 0 {
            return block_on(self.recv());
        }
        self.recv_retrying()
    }

    /// `recv_blocking` on a buffered channel that was empty: retry, then park
    /// (out of line, as `send_retrying`).
    #[cold]
    #[inline(never)]
    fn recv_retrying(&self) -> Option<T> {
        let mut retry = Retry::new();
        loop {
            if retry.is_completed() {
                retry.finish();
                return block_on(self.recv());
            }
            retry.snooze();
            if !self.inner.ring.as_ref().is_none_or(Ring::pop_hint) {
                continue;
            }
            match self.try_recv() {
                Ok(v) => {
                    retry.finish();
                    return Some(v);
                }
                Err(TryRecvError::Closed) => return None,
                Err(TryRecvError::Empty) => {}
            }
        }
    }
}

/// Waits forever: the operation on a nil channel (`ch <- v` or `<-ch` with
/// `ch == nil`). A `Select` case with a `None` channel is the same.
///
/// # Examples
///
/// ```
/// use std::future::Future;
/// use std::pin::pin;
/// use std::task::{Context, Waker};
///
/// let mut never = pin!(weft_chan::block_forever());
/// let mut cx = Context::from_waker(Waker::noop());
/// assert!(never.as_mut().poll(&mut cx).is_pending());
/// ```
pub async fn block_forever() -> std::convert::Infallible {
    std::future::pending().await
}

/// A value held until it is taken once: `Option<T>`, except that taking
/// copies `T` whole. `Option<T>::take` on the interpreter's `Value` (whose
/// `Bool` payload sits at byte 1) copied bytes 1..17 separately, a load
/// that spans two of the stores that had just written the value, so it
/// could not be forwarded from them and waited for them to reach the
/// cache: about 14% of a task ping-pong's cycles.
struct Held<T> {
    val: std::mem::MaybeUninit<T>,
    full: bool,
}

impl<T> Held<T> {
    #[inline(always)]
    fn new(v: T) -> Self {
        Held {
            val: std::mem::MaybeUninit::new(v),
            full: true,
        }
    }

    #[inline(always)]
    fn take(&mut self) -> Option<T> {
        if !self.full {
            return None;
        }
        self.full = false;
        // SAFETY: `full` said the value is initialized and not taken yet;
        // it is now marked taken, so it is read (moved out) once.
        Some(unsafe { self.val.assume_init_read() })
    }
}

impl<T> Drop for Held<T> {
    fn drop(&mut self) {
        if self.full {
            // SAFETY: initialized and not taken (`full`).
            unsafe { self.val.assume_init_drop() };
        }
    }
}

/// The future of [`Chan::send`] and [`Chan::send_in`]: `Ok(())` once the
/// value was taken or buffered, [`SendError`] with the value if the
/// channel is closed first.
#[must_use = "futures do nothing unless polled"]
pub struct SendFut<'a, T> {
    chan: &'a Chan<T>,
    /// The value, until it is sent or queued.
    val: Held<T>,
    /// Set while queued in `sendq`.
    cx: Option<Owned<T>>,
    /// Where the context comes from and goes back to (`send_in`).
    slot: Option<&'a mut WaitSlot<T>>,
}

impl<T> Unpin for SendFut<'_, T> {}

impl<T: Send> Future for SendFut<'_, T> {
    type Output = Result<(), SendError<T>>;

    fn poll(mut self: Pin<&mut Self>, tcx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        self.poll_map(tcx, Ok(()), |v| Err(SendError(v)))
    }
}

impl<T: Send> SendFut<'_, T> {
    /// [`poll`](Future::poll) for a caller that needs only whether the
    /// value went: `true` once taken or buffered, `false` (the value
    /// dropped) if the channel is closed first. The result is one byte
    /// in a register; `poll`'s carries the value back for the error and
    /// is written through memory, where a caller that copies it soon
    /// after the call waits for the stores to drain (store forwarding
    /// fails on the byte-wide tag).
    pub fn poll_sent(&mut self, tcx: &mut TaskContext<'_>) -> Poll<bool> {
        self.poll_map(tcx, true, |_| false)
    }

    /// The poll, with the result made by `ok` or `closed` where it is
    /// known.
    #[inline(always)]
    fn poll_map<R>(
        &mut self,
        tcx: &mut TaskContext<'_>,
        ok: R,
        closed: impl FnOnce(T) -> R,
    ) -> Poll<R> {
        if let Some(cx) = &mut self.cx {
            return match poll_queued(self.chan, cx, tcx.waker()) {
                None => Poll::Pending,
                Some(outcome) => {
                    if let Some(cx) = self.cx.take() {
                        keep_in(&mut self.slot, cx);
                    }
                    match outcome {
                        Outcome::SendClosed(v) => Poll::Ready(closed(v)),
                        _ => Poll::Ready(ok),
                    }
                }
            };
        }
        let Some(v) = self.val.take() else {
            // Polled again after completion: nothing left to do.
            return Poll::Ready(ok);
        };
        let chan = self.chan;
        let mut st = chan.lock();
        match st.send(v) {
            SendStep::Done(h) => {
                drop(st);
                h.deliver();
                Poll::Ready(ok)
            }
            SendStep::Closed(v) => Poll::Ready(closed(v)),
            SendStep::Full(v) => {
                let mut cx = context_in(&mut self.slot, tcx.waker());
                let seq = st.take_seq();
                cx.set_seq(seq);
                st.sendq.push_back(seq, Waiter::new(cx.entry(), 0, v, true));
                drop(st);
                self.cx = Some(cx);
                Poll::Pending
            }
        }
    }
}

impl<T: Send> Parkable for SendFut<'_, T> {
    fn ready_hint(&self) -> bool {
        hint(&self.cx)
    }
}

impl<T> Drop for SendFut<'_, T> {
    fn drop(&mut self) {
        if let Some(cx) = self.cx.take() {
            withdraw(self.chan, cx, &mut self.slot);
        }
    }
}

/// A send or receive future dropped while queued: not chosen yet, it
/// withdraws its entry; chosen, the partner popped the entry and delivered
/// under the lock (the outcome is dropped here). Done under the lock:
/// the party waits on this channel only (`waiter.rs`, invariant 1).
fn withdraw<T>(chan: &Chan<T>, mut cx: Owned<T>, slot: &mut Option<&mut WaitSlot<T>>) {
    let mut st = chan.lock();
    if cx.abort_locked() {
        st.remove(&cx);
    }
    drop(st);
    // Chosen: the winner delivered under the lock just taken; a received
    // value goes with the future.
    drop(cx.take_outcome());
    keep_in(slot, cx);
}

/// The poll of a send or receive queued on `chan`: its outcome once
/// delivered. A poll with a new waker stores it under the channel lock
/// (`waiter.rs`, invariant 4).
#[inline(always)]
fn poll_queued<T>(chan: &Chan<T>, cx: &mut Owned<T>, waker: &Waker) -> Option<Outcome<T>> {
    match cx.check(waker) {
        Check::Done(_, outcome) => Some(outcome),
        Check::Waiting => None,
        Check::NewWaker => {
            let st = chan.lock();
            // SAFETY: the party's one entry is (or was) in this channel's
            // queue, whose lock is held.
            unsafe { cx.set_waker(waker) };
            drop(st);
            cx.take_outcome().map(|(_, outcome)| outcome)
        }
    }
}

/// The future of [`Chan::recv`] and [`Chan::recv_in`]: the value, or
/// `None` once the channel is closed and drained.
#[must_use = "futures do nothing unless polled"]
pub struct RecvFut<'a, T> {
    chan: &'a Chan<T>,
    /// Set while queued in `recvq`.
    cx: Option<Owned<T>>,
    done: bool,
    /// Where the context comes from and goes back to (`recv_in`).
    slot: Option<&'a mut WaitSlot<T>>,
}

impl<T> Unpin for RecvFut<'_, T> {}

impl<T: Send> Future for RecvFut<'_, T> {
    type Output = Option<T>;

    fn poll(mut self: Pin<&mut Self>, tcx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let Some(cx) = &mut this.cx {
            return match poll_queued(this.chan, cx, tcx.waker()) {
                None => Poll::Pending,
                Some(outcome) => {
                    if let Some(cx) = this.cx.take() {
                        keep_in(&mut this.slot, cx);
                    }
                    this.done = true;
                    match outcome {
                        Outcome::Received(v) => Poll::Ready(v),
                        _ => Poll::Ready(None),
                    }
                }
            };
        }
        if self.done {
            return Poll::Ready(None);
        }
        let chan = self.chan;
        let mut st = chan.lock();
        match st.recv() {
            RecvStep::Done(v, h) => {
                drop(st);
                h.deliver();
                self.done = true;
                Poll::Ready(v)
            }
            RecvStep::Empty => {
                let mut cx = context_in(&mut self.slot, tcx.waker());
                let seq = st.take_seq();
                cx.set_seq(seq);
                st.recvq
                    .push_back(seq, Waiter::new(cx.entry(), 0, (), true));
                drop(st);
                self.cx = Some(cx);
                Poll::Pending
            }
        }
    }
}

impl<T: Send> Parkable for RecvFut<'_, T> {
    fn ready_hint(&self) -> bool {
        hint(&self.cx)
    }
}

impl<T> Drop for RecvFut<'_, T> {
    fn drop(&mut self) {
        if let Some(cx) = self.cx.take() {
            withdraw(self.chan, cx, &mut self.slot);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::Inner;
    use std::mem::{align_of, offset_of, size_of};

    /// `Inner`'s layout: what a lock holder writes (the lock, the state,
    /// the flags) lies within three cache lines from a line's start, for a
    /// 16-byte value (the interpreter's `Value`) and for a word.
    #[test]
    fn locked_fields_fill_three_cache_lines() {
        fn check<T>() {
            let start = offset_of!(Inner<T>, state);
            let end = offset_of!(Inner<T>, flags) + size_of::<usize>();
            assert_eq!(align_of::<Inner<T>>() % 64, 0);
            assert_eq!(start % 64, 0, "the lock starts a cache line");
            assert!(end - start <= 3 * 64, "{} bytes", end - start);
        }
        check::<[u64; 2]>();
        check::<u64>();
        check::<()>();
    }
}
