//! A channel's wait queue (`sendq` / `recvq`, Go's `waitq`): the entries
//! of blocked parties in arrival order, served from the front, and
//! withdrawn from anywhere in O(log n) amortized time.
//!
//! Go links its `sudog`s in a doubly linked list, so a party that gives up
//! unlinks itself in O(1). Here the queue is a `VecDeque` (no allocation
//! per entry, one contiguous buffer for the hot push and pop), and a party
//! that withdraws finds its entries by a number instead of by a scan:
//!
//! - Every entry carries the `seq` its party was given when it queued
//!   (`State::next_seq`, under the locks of all the channels it queues
//!   on). A channel's entries are pushed in increasing `seq`, and a select
//!   uses one number for all its entries (the largest `next_seq` among its
//!   channels, each of which then moves past it), so in every queue `seq`
//!   never decreases from front to back and the entries with one `seq` are
//!   one party's, next to each other.
//! - The owner keeps its `seq` in its context (`Owned::seq`) and, to
//!   withdraw, binary-searches the queue for it ([`WaitQueue::remove`]),
//!   then checks each entry with that number against its context pointer
//!   (without dereferencing it).
//! - An entry withdrawn from the middle becomes a *tombstone*: its waiter
//!   (context pointer and, in `sendq`, the value) is dropped at once, and
//!   its `seq` stays so the queue stays sorted. Tombstones at either end
//!   are popped at once; the queue is compacted (one pass) when
//!   tombstones make up more than half of it, so each tombstone costs O(1)
//!   amortized.
//!
//! The cost: 8 bytes per entry and a counter per channel; the hot path
//! (`push_back`, `pop_front`) gains one branch on the tombstone count.
//! Before, a withdrawal scanned both queues (`retain`): O(n) each, so the
//! end of a run dropping 200,000 tasks blocked on one channel took 100 s.
//!
//! A channel's parties wait in a [`HeadQueue`]: a `WaitQueue` that keeps
//! an entry pushed on the empty queue in itself (`head`), not in the
//! deque's buffer. Most of the time a channel has at most one party
//! waiting in each direction (an unbuffered hand-off's), and the buffer,
//! a cache line of its own, is then not touched: in a chain of tasks (the
//! prime sieve) it was a cache miss on every hop, read by the sender's pop
//! and written by the receiver's push. The head keeps no `seq`: its
//! party's context pointer alone tells whose it is (a party's entries are
//! all popped or withdrawn before its context serves another wait), and
//! the 8 bytes kept the channel's locked fields within three cache lines
//! (`channel.rs`, `Inner`).
//!
//! Invariants (under the channel lock):
//! 1. `seq` never decreases from front to back; entries sharing a `seq`
//!    belong to one party.
//! 2. The first and the last entry are never tombstones, so the queue is
//!    empty exactly when no entry of any party is in it.
//! 3. `dead` is the number of tombstones; after a withdrawal, at most half
//!    the entries are tombstones.

use std::collections::VecDeque;

use super::waiter::{Owned, Waiter};

/// One slot of the queue: a party's entry, or a tombstone (`w == None`).
struct Entry<T, V> {
    seq: u64,
    w: Option<Waiter<T, V>>,
}

/// The blocked parties of one direction of one channel, FIFO.
pub(crate) struct WaitQueue<T, V> {
    q: VecDeque<Entry<T, V>>,
    /// Tombstones in `q` (invariant 3).
    dead: usize,
}

impl<T, V> WaitQueue<T, V> {
    pub(crate) const fn new() -> Self {
        WaitQueue {
            q: VecDeque::new(),
            dead: 0,
        }
    }

    /// True when no party has an entry here (invariant 2).
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// Entries now, tombstones not counted (stale entries counted).
    pub(crate) fn len(&self) -> usize {
        self.q.len() - self.dead
    }

    /// Queues `w` of a party numbered `seq`, which is at least the `seq`
    /// of every entry here (invariant 1).
    #[inline(always)]
    pub(crate) fn push_back(&mut self, seq: u64, w: Waiter<T, V>) {
        debug_assert!(self.q.back().is_none_or(|e| e.seq <= seq));
        // A tombstone first, then the waiter written into its slot field by
        // field: its parts go from registers to the queue's buffer. Pushed
        // whole, the entry was built on the stack before the buffer's
        // growth check, in words, and copied into the buffer in 16-byte
        // loads that those stores could not forward (a stall on every
        // parking send).
        let (case, single) = (w.case, w.single != 0);
        let (cx, val) = w.into_parts();
        self.q.push_back(Entry { seq, w: None });
        if let Some(e) = self.q.back_mut() {
            e.w = Some(Waiter::new(cx, case, val, single));
        }
    }

    /// The oldest entry, taken out.
    #[inline(always)]
    pub(crate) fn pop_front(&mut self) -> Option<Waiter<T, V>> {
        while let Some(e) = self.q.pop_front() {
            match e.w {
                Some(w) => {
                    if self.dead != 0 {
                        // The pop may have uncovered tombstones.
                        self.trim();
                    }
                    return Some(w);
                }
                // Not reached (the front is never a tombstone, invariant
                // 2), but harmless.
                None => self.dead -= 1,
            }
        }
        None
    }

    /// True when some entry's party still waits (stale entries of parties
    /// that finished elsewhere do not count).
    pub(crate) fn has_live(&self) -> bool {
        self.q
            .iter()
            .any(|e| e.w.as_ref().is_some_and(|w| w.cx.is_waiting()))
    }

    /// Withdraws every entry of `cx`, whose party queued with `seq`;
    /// returns how many were here (0 when partners already popped them).
    /// Inline for the common misses: a party withdraws from both queues
    /// of every channel it waited on (`State::remove`), and most of those
    /// queues are empty or hold only other parties' entries.
    #[inline]
    pub(crate) fn remove(&mut self, seq: u64, cx: &Owned<T>) -> usize {
        match (self.q.front(), self.q.back()) {
            // Empty, or every entry is numbered below or above `seq`
            // (invariant 1): none is the party's.
            (Some(f), Some(b)) if f.seq <= seq && seq <= b.seq => self.remove_found(seq, cx),
            _ => 0,
        }
    }

    /// `remove` where `seq` lies within the queue's numbers.
    fn remove_found(&mut self, seq: u64, cx: &Owned<T>) -> usize {
        // The commonest case, the party's one entry is the last: popped,
        // no tombstone (the waiter, and a send's value, dropped now).
        let n = self.q.len();
        if self
            .q
            .back()
            .is_some_and(|e| e.seq == seq && e.w.as_ref().is_some_and(|w| w.cx.is(cx)))
            && (n == 1 || self.q.get(n - 2).is_some_and(|e| e.seq != seq))
        {
            drop(self.q.pop_back());
            if self.dead != 0 {
                self.trim();
                self.compact();
            }
            return 1;
        }
        // The party's entries are most often the last ones queued (a select
        // withdrawing from the channels it did not win, where nobody
        // queued after it) or the first: look at both ends before the
        // binary search (about 80 instructions on a `VecDeque`).
        let at = if self.q.back().is_some_and(|e| e.seq == seq) {
            self.q.len() - 1
        } else if self.q.front().is_some_and(|e| e.seq == seq) {
            0
        } else {
            let Ok(at) = self.q.binary_search_by_key(&seq, |e| e.seq) else {
                return 0;
            };
            at
        };
        // The party's entries surround `at` (invariant 1).
        let mut lo = at;
        while lo > 0 && self.q[lo - 1].seq == seq {
            lo -= 1;
        }
        let mut removed = 0;
        let mut i = lo;
        while i < self.q.len() && self.q[i].seq == seq {
            let e = &mut self.q[i];
            if e.w.as_ref().is_some_and(|w| w.cx.is(cx)) {
                // Drops the waiter (and a send's value) now.
                e.w = None;
                self.dead += 1;
                removed += 1;
            }
            i += 1;
        }
        if removed != 0 {
            self.trim();
            self.compact();
        }
        removed
    }

    /// Drops every tombstone once they make up more than half the queue
    /// (invariant 3).
    fn compact(&mut self) {
        if self.dead * 2 > self.q.len() {
            self.q.retain(|e| e.w.is_some());
            self.dead = 0;
        }
    }

    /// Pops tombstones off both ends (invariant 2).
    fn trim(&mut self) {
        while self.q.front().is_some_and(|e| e.w.is_none()) {
            self.q.pop_front();
            self.dead -= 1;
        }
        while self.q.back().is_some_and(|e| e.w.is_none()) {
            self.q.pop_back();
            self.dead -= 1;
        }
    }

    /// The entries in order, tombstones skipped (tests).
    #[cfg(all(test, not(loom)))]
    fn live(&self) -> impl Iterator<Item = (u64, &Waiter<T, V>)> {
        self.q.iter().filter_map(|e| Some((e.seq, e.w.as_ref()?)))
    }
}

/// A [`WaitQueue`] whose entry pushed on the empty queue is kept inline
/// (see the module's docs). Invariant: `head` is filled only by a push on
/// the empty queue, so it is older than every entry of `rest` (invariant
/// 1 holds with `head` first), and it is never a tombstone.
pub(crate) struct HeadQueue<T, V> {
    head: Option<Waiter<T, V>>,
    rest: WaitQueue<T, V>,
}

impl<T, V> HeadQueue<T, V> {
    pub(crate) const fn new() -> Self {
        HeadQueue {
            head: None,
            rest: WaitQueue::new(),
        }
    }

    /// True when no party has an entry here.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.head.is_none() && self.rest.is_empty()
    }

    /// Entries now (stale entries counted).
    pub(crate) fn len(&self) -> usize {
        usize::from(self.head.is_some()) + self.rest.len()
    }

    /// [`WaitQueue::push_back`].
    #[inline(always)]
    pub(crate) fn push_back(&mut self, seq: u64, w: Waiter<T, V>) {
        if !self.is_empty() {
            self.rest.push_back(seq, w);
            return;
        }
        // Field by field, as `WaitQueue::push_back` does.
        let (case, single) = (w.case, w.single != 0);
        let (cx, val) = w.into_parts();
        self.head = Some(Waiter::new(cx, case, val, single));
    }

    /// The oldest entry, taken out.
    #[inline(always)]
    pub(crate) fn pop_front(&mut self) -> Option<Waiter<T, V>> {
        match self.head.take() {
            Some(w) => Some(w),
            None => self.rest.pop_front(),
        }
    }

    /// [`WaitQueue::has_live`].
    pub(crate) fn has_live(&self) -> bool {
        self.head.as_ref().is_some_and(|w| w.cx.is_waiting()) || self.rest.has_live()
    }

    /// [`WaitQueue::remove`].
    #[inline]
    pub(crate) fn remove(&mut self, seq: u64, cx: &Owned<T>) -> usize {
        let mut removed = 0;
        if self.head.as_ref().is_some_and(|w| w.cx.is(cx)) {
            // Drops the waiter now.
            self.head = None;
            removed = 1;
        }
        removed + self.rest.remove(seq, cx)
    }

    /// The entries' values in order (tests).
    #[cfg(all(test, not(loom)))]
    fn live_values(&self) -> impl Iterator<Item = &V> {
        let head = self.head.as_ref().map(|w| w.val());
        head.into_iter()
            .chain(self.rest.live().map(|(_, w)| w.val()))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::task::Waker;

    /// `n` parties, each with its own context; party `i` queues value `i`
    /// with seq `i`.
    fn parties(n: usize) -> (Vec<Owned<u32>>, WaitQueue<u32, u32>) {
        let owners: Vec<Owned<u32>> = (0..n).map(|_| Owned::new(Waker::noop())).collect();
        let mut q = WaitQueue::new();
        for (i, o) in owners.iter().enumerate() {
            q.push_back(i as u64, waiter(o, i as u32));
        }
        (owners, q)
    }

    fn waiter(o: &Owned<u32>, v: u32) -> Waiter<u32, u32> {
        Waiter::new(o.entry(), 0, v, true)
    }

    fn values(q: &WaitQueue<u32, u32>) -> Vec<u32> {
        q.live().map(|(_, w)| *w.val()).collect()
    }

    fn check(q: &WaitQueue<u32, u32>) {
        assert!(
            q.q.front().is_none_or(|e| e.w.is_some()),
            "tombstone at the front"
        );
        assert!(
            q.q.back().is_none_or(|e| e.w.is_some()),
            "tombstone at the back"
        );
        assert_eq!(q.dead, q.q.iter().filter(|e| e.w.is_none()).count());
        assert!(q
            .q
            .iter()
            .zip(q.q.iter().skip(1))
            .all(|(a, b)| a.seq <= b.seq));
    }

    #[test]
    fn withdrawals_from_the_middle_keep_the_others_in_order() {
        let (owners, mut q) = parties(100);
        let mut want: Vec<u32> = (0..100).collect();
        // Every third, from the middle outwards, then the ends.
        for i in (0..100).filter(|i| i % 3 == 1).rev() {
            assert_eq!(q.remove(i as u64, &owners[i]), 1);
            want.retain(|&v| v != i as u32);
            check(&q);
            assert_eq!(values(&q), want);
        }
        assert_eq!(q.remove(0, &owners[0]), 1);
        assert_eq!(q.remove(99, &owners[99]), 1);
        want.retain(|&v| v != 0 && v != 99);
        check(&q);
        assert_eq!(values(&q), want);
        assert_eq!(q.len(), want.len());
        // A second withdrawal finds nothing; popping serves the rest in order.
        assert_eq!(q.remove(1, &owners[1]), 0);
        let mut popped = Vec::new();
        while let Some(w) = q.pop_front() {
            popped.push(w.into_parts().1);
            check(&q);
        }
        assert_eq!(popped, want);
        assert!(q.is_empty());
    }

    #[test]
    fn withdrawing_everything_in_any_order_empties_the_queue() {
        for order in [0usize, 1, 2] {
            let n = 1000;
            let (owners, mut q) = parties(n);
            let mut idx: Vec<usize> = (0..n).collect();
            match order {
                0 => {}
                1 => idx.reverse(),
                _ => fastrand::Rng::with_seed(7).shuffle(&mut idx),
            }
            for (k, &i) in idx.iter().enumerate() {
                assert_eq!(q.remove(i as u64, &owners[i]), 1);
                check(&q);
                assert_eq!(q.len(), n - k - 1);
                assert!(q.dead * 2 <= q.q.len());
            }
            assert!(q.is_empty());
        }
    }

    #[test]
    fn a_party_with_several_entries_leaves_whole_and_others_with_its_seq_stay() {
        // Party 1 queues three entries with one seq (a select naming the
        // channel three times), between parties 0 and 2.
        let owners: Vec<Owned<u32>> = (0..3).map(|_| Owned::new(Waker::noop())).collect();
        let mut q = WaitQueue::new();
        q.push_back(4, waiter(&owners[0], 0));
        for v in 10..13 {
            q.push_back(5, waiter(&owners[1], v));
        }
        q.push_back(6, waiter(&owners[2], 2));
        // The wrong context with the right seq removes nothing.
        assert_eq!(q.remove(5, &owners[2]), 0);
        assert_eq!(q.remove(5, &owners[1]), 3);
        check(&q);
        assert_eq!(values(&q), [0, 2]);
        // A seq that is not there.
        assert_eq!(q.remove(7, &owners[2]), 0);
        assert_eq!(q.remove(6, &owners[2]), 1);
        assert_eq!(values(&q), [0]);
    }

    #[test]
    fn a_party_at_the_back_leaves_whole() {
        // The back entry's fast path must not take one of several entries.
        let owners: Vec<Owned<u32>> = (0..3).map(|_| Owned::new(Waker::noop())).collect();
        let mut q = WaitQueue::new();
        q.push_back(4, waiter(&owners[0], 0));
        q.push_back(5, waiter(&owners[1], 10));
        q.push_back(5, waiter(&owners[1], 11));
        // The wrong context with the back's seq removes nothing.
        assert_eq!(q.remove(5, &owners[2]), 0);
        assert_eq!(q.remove(5, &owners[1]), 2);
        check(&q);
        assert_eq!(values(&q), [0]);
        // A single entry at the back behind a tombstone: both go.
        q.push_back(6, waiter(&owners[1], 1));
        q.push_back(7, waiter(&owners[2], 2));
        assert_eq!(q.remove(6, &owners[1]), 1);
        assert_eq!(q.remove(7, &owners[2]), 1);
        check(&q);
        assert_eq!(values(&q), [0]);
    }

    #[test]
    fn pops_and_pushes_interleaved_with_withdrawals_keep_fifo() {
        // A model: the values in the queue, in order.
        let mut rng = fastrand::Rng::with_seed(11);
        let owners: Vec<Owned<u32>> = (0..4000).map(|_| Owned::new(Waker::noop())).collect();
        let mut q = WaitQueue::new();
        let mut model: VecDeque<u32> = VecDeque::new();
        let mut next = 0usize;
        for _ in 0..20_000 {
            match rng.u8(..10) {
                0..=3 if next < owners.len() => {
                    q.push_back(next as u64, waiter(&owners[next], next as u32));
                    model.push_back(next as u32);
                    next += 1;
                }
                4..=5 => assert_eq!(q.pop_front().map(|w| w.into_parts().1), model.pop_front()),
                _ if !model.is_empty() => {
                    let v = model[rng.usize(..model.len())];
                    model.retain(|&m| m != v);
                    assert_eq!(q.remove(v as u64, &owners[v as usize]), 1);
                }
                _ => {}
            }
            check(&q);
            assert_eq!(q.len(), model.len());
        }
        assert_eq!(values(&q), Vec::from(model));
    }

    /// `n` parties, each with its own context, and the values they send
    /// (counted, so that a test sees each dropped): party `i` sends
    /// `vals[i]` with seq `i`, pushed with `push`.
    fn counted_parties(
        n: usize,
        mut push: impl FnMut(u64, Waiter<Arc<u32>, Arc<u32>>),
    ) -> (Vec<Owned<Arc<u32>>>, Vec<Arc<u32>>) {
        let owners: Vec<Owned<Arc<u32>>> = (0..n).map(|_| Owned::new(Waker::noop())).collect();
        let vals: Vec<Arc<u32>> = (0..n as u32).map(Arc::new).collect();
        for (i, o) in owners.iter().enumerate() {
            push(i as u64, Waiter::new(o.entry(), 0, vals[i].clone(), true));
        }
        (owners, vals)
    }

    #[test]
    fn every_value_is_dropped_once_however_its_entry_leaves() {
        // A waiter keeps its value in a `MaybeUninit` and drops it itself:
        // popped and taken, popped and dropped, withdrawn (a tombstone, then
        // compacted), or left in the queue when the queue goes.
        let mut q: WaitQueue<Arc<u32>, Arc<u32>> = WaitQueue::new();
        let (owners, vals) = counted_parties(40, |seq, w| q.push_back(seq, w));
        assert!(vals.iter().all(|v| Arc::strong_count(v) == 2));
        let taken = q.pop_front().map(|w| w.into_parts().1);
        assert_eq!(taken.as_deref(), Some(&0));
        drop(taken);
        drop(q.pop_front());
        for i in (2..30).step_by(2) {
            assert_eq!(q.remove(i as u64, &owners[i]), 1);
        }
        assert_eq!(q.remove(39, &owners[39]), 1);
        for (i, v) in vals.iter().enumerate() {
            let gone = i < 2 || (i < 30 && i % 2 == 0) || i == 39;
            assert_eq!(Arc::strong_count(v), if gone { 1 } else { 2 }, "value {i}");
        }
        drop(q);
        assert!(vals.iter().all(|v| Arc::strong_count(v) == 1));
    }

    #[test]
    fn a_head_queue_is_fifo_under_pushes_pops_and_withdrawals() {
        // Against a model, as above; one party in eight queues two entries
        // with one seq (a select naming the channel twice), so the head and
        // the deque's front are sometimes one party's.
        let mut rng = fastrand::Rng::with_seed(29);
        let owners: Vec<Owned<u32>> = (0..4000).map(|_| Owned::new(Waker::noop())).collect();
        let mut q: HeadQueue<u32, u32> = HeadQueue::new();
        // (party, value) in queue order.
        let mut model: VecDeque<(usize, u32)> = VecDeque::new();
        let mut next = 0usize;
        let mut in_head = 0;
        for _ in 0..20_000 {
            match rng.u8(..10) {
                0..=3 if next < owners.len() => {
                    in_head += usize::from(q.is_empty());
                    let twice = rng.u8(..8) == 0;
                    for k in 0..=u32::from(twice) {
                        let v = next as u32 * 2 + k;
                        q.push_back(next as u64, waiter(&owners[next], v));
                        model.push_back((next, v));
                    }
                    next += 1;
                }
                4..=5 => {
                    let got = q.pop_front().map(|w| w.into_parts().1);
                    assert_eq!(got, model.pop_front().map(|(_, v)| v));
                }
                _ if !model.is_empty() => {
                    let (party, _) = model[rng.usize(..model.len())];
                    let n = model.iter().filter(|(p, _)| *p == party).count();
                    model.retain(|(p, _)| *p != party);
                    assert_eq!(q.remove(party as u64, &owners[party]), n);
                }
                _ => {}
            }
            assert_eq!(q.len(), model.len());
            assert_eq!(q.is_empty(), model.is_empty());
            assert!(q.head.is_some() || q.rest.is_empty() || q.rest.len() == model.len());
            check(&q.rest);
            let want: Vec<u32> = model.iter().map(|(_, v)| *v).collect();
            assert_eq!(q.live_values().copied().collect::<Vec<_>>(), want);
        }
        assert!(in_head > 100, "the head was used {in_head} times");
    }

    #[test]
    fn a_head_queue_drops_every_value_once() {
        let mut q: HeadQueue<Arc<u32>, Arc<u32>> = HeadQueue::new();
        let (owners, vals) = counted_parties(6, |seq, w| q.push_back(seq, w));
        // The head withdrawn, then one from the deque; one popped; the rest
        // dropped with the queue.
        assert_eq!(q.remove(0, &owners[0]), 1);
        assert_eq!(q.remove(3, &owners[3]), 1);
        assert_eq!(q.pop_front().map(|w| *w.into_parts().1), Some(1));
        assert_eq!(Arc::strong_count(&vals[0]), 1);
        assert_eq!(Arc::strong_count(&vals[1]), 1);
        assert_eq!(Arc::strong_count(&vals[3]), 1);
        assert_eq!(Arc::strong_count(&vals[2]), 2);
        drop(q);
        assert!(vals.iter().all(|v| Arc::strong_count(v) == 1));
    }
}
