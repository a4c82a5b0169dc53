//! The buffer of a buffered channel: a lock-free ring (Dmitry Vyukov's
//! bounded MPMC queue, as in crossbeam-channel's array flavour) whose two
//! index words carry a `MARK` bit that hands the ring to the channel lock.
//!
//! Two regimes (see docs/channels.md, "The lock-free buffer"):
//!
//! | regime | when | who touches the ring |
//! |---|---|---|
//! | open   | no party queued, not closed | anyone, lock-free (`try_push` / `pop_open`, and a blocking operation's `push_first` / `pop_first`: one CAS on `tail` / `head`) |
//! | frozen | `MARK` set in both `head` and `tail` | only the holder of the channel lock (`*_frozen`) |
//!
//! Protocol (numbered steps; `channel.rs` drives it from the lock guard):
//! 1. Whoever takes the channel lock freezes the ring first (`freeze`: sets
//!    `MARK` in `head`, then `tail`, by `fetch_or`). A lock-free operation
//!    commits only by a CAS from an unmarked word, so after step 1 none can
//!    commit; one that committed before (moved an index) may still be
//!    writing or reading its slot, and the lock holder waits for that slot's
//!    stamp before it uses the slot.
//! 2. Under the lock the buffer changes only through `push_frozen` /
//!    `pop_frozen`, which store the indices with `MARK` kept.
//! 3. Before unlocking, the holder thaws the ring (`thaw`) only if no party
//!    is queued and the channel is not closed; otherwise the ring stays
//!    frozen for the next lock holder. So a queued party or a close always
//!    has both words marked: a lock-free operation that sees an unmarked word
//!    knows no party waits and the channel is open, which is when Go's rules
//!    reduce to "use the buffer" (a receiver is handed a value before the
//!    buffer is used only when it is queued; queued senders only exist while
//!    the buffer is full).
//!
//! Invariants: indices only grow (lap counter above the index bits, no ABA);
//! `tail - head <= cap`; a slot's stamp is `pos` when free for position
//! `pos`, `pos + 1` when it holds that position's value.
//! Index and stamp arithmetic is crossbeam-channel 0.5's `flavors/array.rs`.

use std::mem::MaybeUninit;

use crossbeam_utils::CachePadded;

use super::loom::{fence, AtomicUsize, Backoff, Ordering, UnsafeCell};

/// Buffered channels up to this capacity use the ring (allocated whole when
/// the channel is made, as Go does); larger ones keep a growable `VecDeque`
/// under the lock and never take the lock-free path.
pub(crate) const RING_MAX: usize = 1 << 16;

/// Why a lock-free operation did not complete.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Miss {
    /// The buffer was full (push) or empty (pop) at one instant while the
    /// ring was open: the operation fails (Go's `full(c)` / `empty(c)`).
    /// Carries the `(head, tail)` words that showed it (see [`Ring::words`]).
    Fail(Words),
    /// The ring is frozen: take the channel lock.
    Slow,
    /// Only from a blocking operation's first attempt ([`Ring::push_first`],
    /// [`Ring::pop_first`]): the slot at the index was not ready (the ring
    /// looked full, or empty, or another party was on the slot), and
    /// nothing was checked beyond it. Not a linearizable "full": retry.
    Taken,
}

/// The `(head, tail)` words of a ring, as loaded.
pub(crate) type Words = (usize, usize);

pub(crate) struct Ring<T> {
    /// Next position to pop: lap, `MARK`, index.
    head: CachePadded<AtomicUsize>,
    /// Next position to push: lap, `MARK`, index.
    tail: CachePadded<AtomicUsize>,
    slots: Box<[Slot<T>]>,
    cap: usize,
    /// The `MARK` bit: the smallest power of two above `cap`; index bits are below it.
    mark: usize,
    /// Position `{lap: 1, index: 0}`.
    one_lap: usize,
}

struct Slot<T> {
    stamp: AtomicUsize,
    val: UnsafeCell<MaybeUninit<T>>,
}

impl<T> Slot<T> {
    /// Writes the value of position `pos` and marks it written.
    ///
    /// # Safety
    ///
    /// The caller alone owns position `pos` (its CAS moved `tail` past it,
    /// or it holds the channel lock with the ring frozen), and the stamp
    /// said the slot is free for it (`pos`).
    #[inline(always)]
    unsafe fn put(&self, pos: usize, v: T) {
        // SAFETY: the caller owns the slot, which holds no value.
        self.val.with_mut(|p| unsafe { (*p).write(v) });
        self.stamp.store(pos + 1, Ordering::Release);
    }

    /// Reads the value of the position the caller owns and frees the slot
    /// for the next lap, whose position is `next_lap`.
    ///
    /// # Safety
    ///
    /// The caller alone owns the position (its CAS moved `head` past it,
    /// or it holds the channel lock with the ring frozen), and the stamp
    /// said its value is written.
    #[inline(always)]
    unsafe fn take(&self, next_lap: usize) -> T {
        // SAFETY: the caller owns the slot, which holds a written value.
        let v = self.val.with_mut(|p| unsafe { (*p).assume_init_read() });
        self.stamp.store(next_lap, Ordering::Release);
        v
    }
}

// SAFETY: a slot's value is accessed only by the one party that moved an
// index past it (CAS, or a store under the channel lock), ordered with the
// other parties by the slot's stamp (Release store, Acquire load); values
// move between threads, hence `T: Send`.
unsafe impl<T: Send> Send for Ring<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Ring<T> {}

impl<T> Ring<T> {
    /// A ring of `cap` slots; `1 <= cap <= RING_MAX`.
    pub(crate) fn new(cap: usize) -> Self {
        let mark = (cap + 1).next_power_of_two();
        Ring {
            head: CachePadded::new(AtomicUsize::new(0)),
            tail: CachePadded::new(AtomicUsize::new(0)),
            slots: (0..cap)
                .map(|i| Slot {
                    stamp: AtomicUsize::new(i),
                    val: UnsafeCell::new(MaybeUninit::uninit()),
                })
                .collect(),
            cap,
            mark,
            one_lap: mark * 2,
        }
    }

    /// The position after `pos` (unmarked).
    #[inline]
    fn next(&self, pos: usize) -> usize {
        let index = pos & (self.mark - 1);
        if index + 1 < self.cap {
            pos + 1
        } else {
            (pos & !(self.one_lap - 1)).wrapping_add(self.one_lap)
        }
    }

    #[inline]
    fn slot(&self, pos: usize) -> &Slot<T> {
        &self.slots[pos & (self.mark - 1)]
    }

    /// Lock-free send into an open ring. `Fail`: full at the instant `head`
    /// was loaded (linearization point; the ring was open then, so no
    /// receiver was queued and the channel was not closed).
    #[inline(always)]
    pub(crate) fn try_push(&self, v: T) -> Result<(), (T, Miss)> {
        self.push_open::<true>(v)
    }

    /// `try_push`; with `EXACT` false a `Fail` may also be wrong (a hint,
    /// for a caller that takes the lock next when no other case of its
    /// select completes): the full ring's check of `head` skips the
    /// `SeqCst` fence (an `mfence` on x86, about a third of a 4-way select
    /// over buffered channels that probes empty rings).
    #[inline(always)]
    pub(crate) fn push_open<const EXACT: bool>(&self, v: T) -> Result<(), (T, Miss)> {
        self.push_with::<EXACT, false>(v)
    }

    /// A blocking send's first attempt: [`Ring::push_open`] that gives up
    /// (`Taken`) as soon as the slot at `tail` is not free, without loading
    /// `head` to tell a full ring from a receiver still reading that slot
    /// (the caller retries either way, polling [`Ring::push_hint`]).
    #[inline(always)]
    pub(crate) fn push_first(&self, v: T) -> Result<(), (T, Miss)> {
        self.push_with::<false, true>(v)
    }

    /// `push_open`, or with `FIRST` `push_first`.
    #[inline(always)]
    fn push_with<const EXACT: bool, const FIRST: bool>(&self, v: T) -> Result<(), (T, Miss)> {
        let backoff = Backoff::new();
        let mut tail = self.tail.load(Ordering::SeqCst);
        loop {
            if tail & self.mark != 0 {
                return Err((v, Miss::Slow));
            }
            let slot = self.slot(tail);
            let stamp = slot.stamp.load(Ordering::Acquire);
            if stamp == tail {
                match self.tail.compare_exchange_weak(
                    tail,
                    self.next(tail),
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                ) {
                    Ok(_) => {
                        // SAFETY: the CAS made this party the only writer of
                        // the slot for position `tail`; its stamp said free.
                        unsafe { slot.put(tail, v) };
                        return Ok(());
                    }
                    Err(t) => {
                        tail = t;
                        backoff.spin();
                    }
                }
            } else if FIRST {
                return Err((v, Miss::Taken));
            } else if stamp.wrapping_add(self.one_lap) == tail + 1 {
                // The slot holds the value of the previous lap: full, unless
                // a receiver has moved `head` and is reading it.
                if EXACT {
                    fence(Ordering::SeqCst);
                }
                let head = self.head.load(Ordering::SeqCst);
                if head & self.mark != 0 {
                    return Err((v, Miss::Slow));
                }
                if head.wrapping_add(self.one_lap) == tail {
                    return Err((v, Miss::Fail((head, tail))));
                }
                backoff.snooze();
                tail = self.tail.load(Ordering::SeqCst);
            } else {
                // Another sender took this position: reload.
                backoff.snooze();
                tail = self.tail.load(Ordering::SeqCst);
            }
        }
    }

    /// Lock-free receive from an open ring. `Fail`: empty at the instant
    /// `tail` was loaded (the ring was open then: no sender queued, not
    /// closed); with `EXACT` false a `Fail` may also be wrong, as for
    /// [`Ring::push_open`].
    #[inline(always)]
    pub(crate) fn pop_open<const EXACT: bool>(&self) -> Result<T, Miss> {
        self.pop_with::<EXACT, false>()
    }

    /// A blocking receive's first attempt: [`Ring::pop_open`] that gives up
    /// (`Taken`) as soon as the slot at `head` holds no value, without
    /// loading `tail` (as [`Ring::push_first`]).
    #[inline(always)]
    pub(crate) fn pop_first(&self) -> Result<T, Miss> {
        self.pop_with::<false, true>()
    }

    /// `pop_open`, or with `FIRST` `pop_first`.
    #[inline(always)]
    fn pop_with<const EXACT: bool, const FIRST: bool>(&self) -> Result<T, Miss> {
        let backoff = Backoff::new();
        let mut head = self.head.load(Ordering::SeqCst);
        loop {
            if head & self.mark != 0 {
                return Err(Miss::Slow);
            }
            let slot = self.slot(head);
            let stamp = slot.stamp.load(Ordering::Acquire);
            if stamp == head + 1 {
                match self.head.compare_exchange_weak(
                    head,
                    self.next(head),
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                ) {
                    Ok(_) => {
                        // SAFETY: the CAS made this party the only reader of
                        // position `head`, whose value the stamp says is written.
                        return Ok(unsafe { slot.take(head.wrapping_add(self.one_lap)) });
                    }
                    Err(h) => {
                        head = h;
                        backoff.spin();
                    }
                }
            } else if FIRST {
                return Err(Miss::Taken);
            } else if stamp == head {
                // Not written for this lap: empty, unless a sender has moved
                // `tail` and is writing it.
                if EXACT {
                    fence(Ordering::SeqCst);
                }
                let tail = self.tail.load(Ordering::SeqCst);
                if tail & self.mark != 0 {
                    return Err(Miss::Slow);
                }
                if tail == head {
                    return Err(Miss::Fail((head, tail)));
                }
                backoff.snooze();
                head = self.head.load(Ordering::SeqCst);
            } else {
                // Another receiver took this position: reload.
                backoff.snooze();
                head = self.head.load(Ordering::SeqCst);
            }
        }
    }

    /// Whether a push might succeed now, read without writing anything and
    /// without touching `head`: the ring is frozen (the locked step decides),
    /// or the slot at `tail` is free. For a sender retrying on a full ring,
    /// which polls this between attempts instead of failing `try_push`
    /// over and over: a failed push loads `head` (after a fence), which
    /// takes the line from the receiver about to move it.
    #[inline]
    pub(crate) fn push_hint(&self) -> bool {
        let tail = self.tail.load(Ordering::Relaxed);
        tail & self.mark != 0 || self.slot(tail).stamp.load(Ordering::Relaxed) == tail
    }

    /// As [`Ring::push_hint`], for a pop: frozen, or the slot at `head`
    /// holds a value (without touching `tail`).
    #[inline]
    pub(crate) fn pop_hint(&self) -> bool {
        let head = self.head.load(Ordering::Relaxed);
        head & self.mark != 0
            || self.slot(head).stamp.load(Ordering::Relaxed) == head.wrapping_add(1)
    }

    /// Loads `head`, then `tail`. A select compares them with the words a
    /// failed `try_push` / `pop_open` showed: equal (and so unmarked) means
    /// the indices did not move in between (they only grow), so at every
    /// instant in between the buffer was as full or as empty as seen.
    #[inline]
    pub(crate) fn words(&self) -> Words {
        let head = self.head.load(Ordering::SeqCst);
        let tail = self.tail.load(Ordering::SeqCst);
        (head, tail)
    }

    /// Step 1: no lock-free operation commits after this returns.
    pub(crate) fn freeze(&self) {
        self.head.fetch_or(self.mark, Ordering::SeqCst);
        self.tail.fetch_or(self.mark, Ordering::SeqCst);
    }

    /// Step 3: reopens the ring to lock-free operations.
    pub(crate) fn thaw(&self) {
        let m = !self.mark;
        self.tail.fetch_and(m, Ordering::SeqCst);
        self.head.fetch_and(m, Ordering::SeqCst);
    }

    /// Values in the ring; exact while frozen (in-flight operations count:
    /// they committed when they moved an index).
    pub(crate) fn len_frozen(&self) -> usize {
        let head = self.head.load(Ordering::SeqCst) & !self.mark;
        let tail = self.tail.load(Ordering::SeqCst) & !self.mark;
        let hix = head & (self.mark - 1);
        let tix = tail & (self.mark - 1);
        if hix < tix {
            tix - hix
        } else if hix > tix {
            self.cap - hix + tix
        } else if tail == head {
            0
        } else {
            self.cap
        }
    }

    /// Appends `v`; the caller holds the lock, the ring is frozen and not full.
    pub(crate) fn push_frozen(&self, v: T) {
        let tail = self.tail.load(Ordering::SeqCst) & !self.mark;
        let slot = self.slot(tail);
        let backoff = Backoff::new();
        // A receiver that moved `head` past this slot's last value before
        // the freeze may still be reading it.
        while slot.stamp.load(Ordering::Acquire) != tail {
            backoff.snooze();
        }
        // SAFETY: frozen, so this lock holder alone owns position `tail`;
        // the stamp says the previous value was read.
        unsafe { slot.put(tail, v) };
        self.tail
            .store(self.next(tail) | self.mark, Ordering::SeqCst);
    }

    /// Takes the oldest value; the caller holds the lock and the ring is frozen.
    pub(crate) fn pop_frozen(&self) -> Option<T> {
        let head = self.head.load(Ordering::SeqCst) & !self.mark;
        let tail = self.tail.load(Ordering::SeqCst) & !self.mark;
        if head == tail {
            return None;
        }
        let slot = self.slot(head);
        let backoff = Backoff::new();
        // A sender that moved `tail` past this slot before the freeze may
        // still be writing it.
        while slot.stamp.load(Ordering::Acquire) != head + 1 {
            backoff.snooze();
        }
        // SAFETY: frozen, so this lock holder alone owns position `head`;
        // the stamp says its value is written.
        let v = unsafe { slot.take(head.wrapping_add(self.one_lap)) };
        self.head
            .store(self.next(head) | self.mark, Ordering::SeqCst);
        Some(v)
    }
}

impl<T> Drop for Ring<T> {
    fn drop(&mut self) {
        // `&mut self`: no other party exists, every slot between head and
        // tail holds a written value.
        let mut pos = self.head.load(Ordering::Relaxed) & !self.mark;
        let tail = self.tail.load(Ordering::Relaxed) & !self.mark;
        while pos != tail {
            let slot = self.slot(pos);
            // SAFETY: positions in [head, tail) hold initialized values that
            // nobody else can reach any more.
            slot.val.with_mut(|p| unsafe { (*p).assume_init_drop() });
            pos = self.next(pos);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn open_ring_is_fifo_and_bounded() {
        let r = Ring::new(3);
        for i in 0..3 {
            assert!(r.try_push(i).is_ok());
        }
        assert_eq!(r.try_push(9), Err((9, Miss::Fail((0, 8)))));
        assert_eq!(r.pop_open::<true>(), Ok(0));
        assert!(r.try_push(3).is_ok());
        assert_eq!(r.pop_open::<true>(), Ok(1));
        assert_eq!(r.pop_open::<true>(), Ok(2));
        assert_eq!(r.pop_open::<true>(), Ok(3));
        assert_eq!(r.pop_open::<true>(), Err(Miss::Fail(r.words())));
    }

    #[test]
    fn frozen_ring_refuses_lock_free_operations() {
        let r = Ring::new(2);
        r.try_push(1).unwrap();
        r.freeze();
        assert_eq!(r.try_push(2), Err((2, Miss::Slow)));
        assert_eq!(r.pop_open::<true>(), Err(Miss::Slow));
        assert_eq!(r.len_frozen(), 1);
        r.push_frozen(2);
        assert_eq!(r.len_frozen(), 2);
        assert_eq!(r.pop_frozen(), Some(1));
        r.thaw();
        assert_eq!(r.pop_open::<true>(), Ok(2));
        assert!(matches!(r.pop_open::<true>(), Err(Miss::Fail(_))));
    }

    /// With no operation in flight the hints and the first attempts are
    /// exact: a push may succeed exactly when the ring is not full, a pop
    /// when it is not empty; while the ring is frozen the hints say "try"
    /// and the first attempts say `Slow`. Over many laps, at several
    /// capacities, with every kind of push and pop mixed.
    #[test]
    fn hints_and_first_attempts_match_the_ring() {
        let mut rng = fastrand::Rng::with_seed(7);
        for cap in [1, 2, 3, 4, 7] {
            let r = Ring::new(cap);
            let mut len = 0;
            for _ in 0..4000 {
                assert_eq!(r.push_hint(), len < cap, "cap {cap}, len {len}");
                assert_eq!(r.pop_hint(), len > 0, "cap {cap}, len {len}");
                let (full, empty) = (len == cap, len == 0);
                match rng.u8(0..4) {
                    0 => assert_eq!(r.try_push(0u8).is_ok(), !full),
                    1 => assert_eq!(
                        r.push_first(0u8).map_err(|e| e.1),
                        if full { Err(Miss::Taken) } else { Ok(()) }
                    ),
                    2 => assert_eq!(r.pop_open::<true>().is_ok(), !empty),
                    _ => assert_eq!(
                        r.pop_first().map(drop),
                        if empty { Err(Miss::Taken) } else { Ok(()) }
                    ),
                }
                r.freeze();
                len = r.len_frozen();
                if rng.u8(..) < 16 {
                    assert!(r.push_hint() && r.pop_hint());
                    assert_eq!(r.push_first(0u8).map_err(|e| e.1), Err(Miss::Slow));
                    assert_eq!(r.pop_first().map(drop), Err(Miss::Slow));
                }
                r.thaw();
            }
        }
    }

    #[test]
    fn wraps_many_laps_and_drops_leftovers() {
        let r = Ring::new(3);
        for i in 0..100 {
            r.try_push(std::sync::Arc::new(i)).unwrap();
            r.try_push(std::sync::Arc::new(i)).unwrap();
            assert_eq!(*r.pop_open::<true>().unwrap(), i);
            r.freeze();
            assert_eq!(r.len_frozen(), 1);
            assert_eq!(*r.pop_frozen().unwrap(), i);
            r.thaw();
        }
        let probe = std::sync::Arc::new(0);
        r.try_push(probe.clone()).unwrap();
        r.try_push(probe.clone()).unwrap();
        drop(r);
        assert_eq!(std::sync::Arc::strong_count(&probe), 1);
    }
}
