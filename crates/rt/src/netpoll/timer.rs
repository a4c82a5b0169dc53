//! Timers: deadlines (nanoseconds since the driver started) in buckets of
//! 2^16 ns (65.5 µs), one set of buckets (a *shard*, with its own lock) per
//! worker, each with its earliest deadline mirrored in an atomic so that
//! busy workers can check "is anything due?" without locking.
//!
//! A worker adds its tasks' timers to its own shard and fires its own shard
//! when it checks for due timers while busy, so a task that sleeps is woken
//! on the worker it slept on, and two workers never contend for one lock
//! or counter (Go keeps a timer heap per P for the same reasons). A worker
//! just woken fires every shard (`fire_expired_from`), and a busy one also
//! fires another's shard once its timers are overdue by a grace period
//! (`fire_overdue`): a timer waits for no parked owner that nothing wakes. With 10,000 tasks each
//! sleeping 1 ms 100 times on two workers, the one shared lock cost 1.55 s
//! of CPU time against 0.46 s on one worker: the lock and the counters
//! bounced between the CPUs, and every fired task ran on whichever worker
//! took the batch, its frame in the other CPU's cache.
//!
//! The buckets sit in a `BTreeMap` keyed by slot (`deadline >> SLOT_SHIFT`);
//! each is a `VecDeque` sorted by (deadline, insertion). Time only moves
//! forward, so a new timer's deadline is nearly always the latest of its
//! bucket and lands at the back: adding is O(log buckets) (a handful of
//! live buckets) plus O(1), firing pops from the front of the first bucket,
//! O(1) per timer. This replaced a binary heap of every timer, O(log n) per
//! add and per fire (10,000 sleeping tasks: 14 levels, cache misses on
//! each). Deadlines stay exact: a bucket is a container, not a rounding, so
//! a timer fires at the first check at or after its own deadline, and a
//! virtual clock (`control.rs`) advances to the exact deadline.
//!
//! Invariants:
//! - `pending` (the sum over the shards) counts timers added and not yet
//!   fired or cancelled. It drops
//!   only after a timer's action has run, so "no timer pending" never holds
//!   while a fired timer's effect (a wake, a channel send) is still unseen.
//!   Deadlock detection relies on this.
//! - Within a shard, timers fire in (deadline, insertion) order: buckets in
//!   slot order, each sorted. Equal deadlines fire in the order they were
//!   added, which keeps runs with one worker (one shard) deterministic.
//! - No bucket in the map is empty, so the earliest deadline is the front of
//!   the first bucket.
//! - Cancelled entries stay in their bucket until their deadline and are
//!   then skipped (lazy deletion, as Go's timers did before 1.14).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::task::Waker;

use crate::loom::{AtomicU64, AtomicUsize, Mutex, Ordering};

/// No deadline: the value of `next_deadline` when no timer is queued.
pub const NO_DEADLINE: u64 = u64::MAX;

/// log2 of a bucket's width in nanoseconds (2^16 ns = 65.5 µs): narrow
/// enough that a timer added out of order (a short sleep behind a long one)
/// shifts few entries, wide enough that 10,000 sleeping tasks share a few
/// dozen buckets.
const SLOT_SHIFT: u32 = 16;
/// Emptied buckets kept for reuse, so that a steady stream of timers does
/// not allocate a `VecDeque` per bucket.
const SPARE_BUCKETS: usize = 64;

/// What a timer does when it fires.
pub enum TimerAction {
    /// Wake a task (`sleep`).
    Wake(Waker),
    /// Run a callback (`after`). It runs on a worker thread, must not block;
    /// if it panics the panic is caught and the callback counts as fired.
    Call(Box<dyn FnOnce() + Send>),
}

/// One timer. `action` is `None` once the timer fired or was cancelled.
struct Entry {
    action: Mutex<Option<TimerAction>>,
}

/// A handle on a timer added with [`Timers::add`].
#[derive(Clone)]
pub struct TimerHandle {
    entry: Arc<Entry>,
    /// The shard the timer is in.
    shard: usize,
}

struct Item {
    deadline: u64,
    entry: Arc<Entry>,
}

/// The timers of one run: a shard per worker.
pub struct Timers {
    shards: Box<[Shard]>,
}

/// One worker's timers, on cache lines of its own.
#[repr(align(128))]
struct Shard {
    wheel: Mutex<Wheel>,
    next_deadline: AtomicU64,
    pending: AtomicUsize,
}

struct Wheel {
    /// Slot (`deadline >> SLOT_SHIFT`) to its timers, sorted by deadline,
    /// equal deadlines in insertion order. Never holds an empty bucket.
    buckets: BTreeMap<u64, VecDeque<Item>>,
    /// Empty buckets with their capacity, for reuse.
    spare: Vec<VecDeque<Item>>,
}

impl Default for Timers {
    fn default() -> Self {
        Timers::new()
    }
}

impl Timers {
    /// Timers with one shard (one worker, or a controlled run).
    pub fn new() -> Timers {
        Timers::sharded(1)
    }

    /// Timers with `n` shards (at least one), one per worker.
    pub fn sharded(n: usize) -> Timers {
        Timers {
            shards: (0..n.max(1)).map(|_| Shard::new()).collect(),
        }
    }

    /// Adds a timer to shard 0 (tests). Returns its handle and whether it is now
    /// the earliest deadline of its shard (the caller then wakes a thread
    /// blocked in the poller if it sleeps past it).
    #[cfg(test)]
    pub fn add(&self, deadline: u64, action: TimerAction) -> (TimerHandle, bool) {
        self.add_in(0, deadline, action)
    }

    /// Adds a timer to shard `shard` (the adding worker's index; taken
    /// modulo the shards), as [`Timers::add`].
    pub fn add_in(&self, shard: usize, deadline: u64, action: TimerAction) -> (TimerHandle, bool) {
        let shard = shard % self.shards.len();
        let (entry, earliest) = self.shards[shard].add(deadline, action);
        (TimerHandle { entry, shard }, earliest)
    }

    /// The earliest deadline of every shard, or `NO_DEADLINE`. May be a
    /// cancelled timer's.
    pub fn next_deadline(&self) -> u64 {
        self.shards
            .iter()
            .map(|s| s.next_deadline.load(Ordering::SeqCst))
            .min()
            .unwrap_or(NO_DEADLINE)
    }

    /// Timers added and neither fired nor cancelled, in every shard.
    pub fn pending(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.pending.load(Ordering::SeqCst))
            .sum()
    }

    /// Fires every due timer of every shard (shard `first` first), each
    /// shard's in deadline order. Returns how many fired.
    pub fn fire_expired_from(&self, first: usize, now: u64) -> usize {
        let n = self.shards.len();
        (0..n)
            .map(|i| self.shards[(first + i) % n].fire_expired(now))
            .sum()
    }

    /// Fires every due timer of every shard, from shard 0 on (tests).
    #[cfg(test)]
    pub fn fire_expired(&self, now: u64) -> usize {
        self.fire_expired_from(0, now)
    }

    /// Fires the timers of the shards whose earliest deadline is `grace` or
    /// more before `now` (their owners are busy elsewhere or parked where
    /// no timer wakes them), from shard `first` on. Returns how many fired.
    pub fn fire_overdue(&self, first: usize, now: u64, grace: u64) -> usize {
        let n = self.shards.len();
        let late = now.saturating_sub(grace);
        (0..n)
            .map(|i| &self.shards[(first + i) % n])
            .filter(|s| s.next_deadline.load(Ordering::SeqCst) <= late)
            .map(|s| s.fire_expired(now))
            .sum()
    }

    /// Fires the due timers of shard `shard` only (a busy worker's own).
    pub fn fire_expired_in(&self, shard: usize, now: u64) -> usize {
        self.shards[shard % self.shards.len()].fire_expired(now)
    }

    /// Cancels a timer that has not fired. Returns false if it already fired.
    pub fn cancel(&self, handle: &TimerHandle) -> bool {
        match self.shards.get(handle.shard) {
            Some(s) => s.cancel(handle),
            None => false,
        }
    }

    /// Drops every timer without running it (end of a run).
    pub fn clear(&self) {
        for s in self.shards.iter() {
            s.clear();
        }
    }
}

impl Shard {
    fn new() -> Shard {
        Shard {
            wheel: Mutex::new(Wheel {
                buckets: BTreeMap::new(),
                spare: Vec::new(),
            }),
            next_deadline: AtomicU64::new(NO_DEADLINE),
            pending: AtomicUsize::new(0),
        }
    }

    /// Adds a timer. Returns its entry and whether it is now the shard's
    /// earliest deadline.
    fn add(&self, deadline: u64, action: TimerAction) -> (Arc<Entry>, bool) {
        let entry = Arc::new(Entry {
            action: Mutex::new(Some(action)),
        });
        self.pending.fetch_add(1, Ordering::SeqCst);
        let item = Item {
            deadline,
            entry: entry.clone(),
        };
        let mut wheel = self.wheel.lock();
        let Wheel { buckets, spare } = &mut *wheel;
        let bucket = buckets
            .entry(deadline >> SLOT_SHIFT)
            .or_insert_with(|| spare.pop().unwrap_or_default());
        if bucket.back().is_none_or(|last| last.deadline <= deadline) {
            bucket.push_back(item);
        } else {
            // Out of order (a shorter sleep behind a longer one): after every
            // entry with a deadline at or before this one.
            let at = bucket.partition_point(|it| it.deadline <= deadline);
            bucket.insert(at, item);
        }
        let earliest = deadline < self.next_deadline.load(Ordering::SeqCst);
        if earliest {
            self.next_deadline.store(deadline, Ordering::SeqCst);
        }
        drop(wheel);
        (entry, earliest)
    }

    /// Fires every timer whose deadline is at or before `now`, in deadline
    /// order, running actions outside the lock. Returns how many fired.
    fn fire_expired(&self, now: u64) -> usize {
        if self.next_deadline.load(Ordering::SeqCst) > now {
            return 0;
        }
        let mut due = Vec::new();
        {
            let mut wheel = self.wheel.lock();
            let Wheel { buckets, spare } = &mut *wheel;
            while let Some(mut first) = buckets.first_entry() {
                let bucket = first.get_mut();
                while bucket.front().is_some_and(|it| it.deadline <= now) {
                    if let Some(item) = bucket.pop_front() {
                        if let Some(action) = item.entry.action.lock().take() {
                            due.push(action);
                        }
                    }
                }
                if !bucket.is_empty() {
                    break;
                }
                let empty = first.remove();
                if spare.len() < SPARE_BUCKETS {
                    spare.push(empty);
                }
            }
            let next = buckets
                .first_key_value()
                .and_then(|(_, b)| b.front())
                .map_or(NO_DEADLINE, |it| it.deadline);
            self.next_deadline.store(next, Ordering::SeqCst);
        }
        let fired = due.len();
        for action in due {
            // A panicking callback is a bug in its caller; it must not take
            // the worker thread (and the whole run) down with it.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match action {
                TimerAction::Wake(w) => w.wake(),
                TimerAction::Call(f) => f(),
            }));
        }
        // After every action ran (see the invariants): one update per batch.
        if fired > 0 {
            self.pending.fetch_sub(fired, Ordering::SeqCst);
        }
        fired
    }

    fn cancel(&self, handle: &TimerHandle) -> bool {
        let action = handle.entry.action.lock().take();
        let cancelled = action.is_some();
        drop(action);
        if cancelled {
            self.pending.fetch_sub(1, Ordering::SeqCst);
        }
        cancelled
    }

    fn clear(&self) {
        let buckets = std::mem::take(&mut self.wheel.lock().buckets);
        for item in buckets.into_values().flatten() {
            if item.entry.action.lock().take().is_some() {
                self.pending.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.next_deadline.store(NO_DEADLINE, Ordering::SeqCst);
    }
}

impl TimerHandle {
    /// True once the timer fired (or was cancelled).
    pub fn is_done(&self) -> bool {
        self.entry.action.lock().is_none()
    }

    /// Replaces the waker of a `Wake` timer that has not fired yet.
    pub fn set_waker(&self, waker: &Waker) {
        if let Some(TimerAction::Wake(w)) = self.entry.action.lock().as_mut() {
            if !w.will_wake(waker) {
                *w = waker.clone();
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn recorder(log: &Arc<Mutex<Vec<u32>>>, v: u32) -> TimerAction {
        let log = log.clone();
        TimerAction::Call(Box::new(move || log.lock().push(v)))
    }

    #[test]
    fn shards_fire_their_own_or_all_from_a_given_one() {
        let t = Timers::sharded(3);
        let log = Arc::new(Mutex::new(Vec::new()));
        t.add_in(0, 20, recorder(&log, 20));
        t.add_in(1, 10, recorder(&log, 10));
        t.add_in(1, 15, recorder(&log, 15));
        let (late, _) = t.add_in(2, 12, recorder(&log, 12));
        // Shard numbers wrap around.
        t.add_in(5, 11, recorder(&log, 11));
        assert_eq!(t.pending(), 5);
        assert_eq!(t.next_deadline(), 10);
        // A busy worker fires its own shard only.
        assert_eq!(t.fire_expired_in(1, 100), 2);
        assert_eq!(*log.lock(), [10, 15]);
        assert_eq!(t.next_deadline(), 11);
        assert_eq!(t.pending(), 3);
        // Cancelling goes to the timer's shard.
        assert!(t.cancel(&late));
        assert!(!t.cancel(&late));
        assert_eq!(t.pending(), 2);
        // Other workers' timers, once `grace` late: shard 2's 11 (its
        // cancelled 12 is skipped) at 25, shard 0's 20 only from 30.
        assert_eq!(t.fire_overdue(0, 25, 10), 1);
        assert_eq!(*log.lock(), [10, 15, 11]);
        assert_eq!(t.fire_overdue(0, 29, 10), 0);
        assert_eq!(t.fire_overdue(0, 30, 10), 1);
        assert_eq!(*log.lock(), [10, 15, 11, 20]);
        // An idle worker fires every shard, its own first; nothing early.
        t.add_in(0, 200, recorder(&log, 200));
        t.add_in(2, 150, recorder(&log, 150));
        assert_eq!(t.fire_expired_from(2, 160), 1);
        assert_eq!(*log.lock(), [10, 15, 11, 20, 150]);
        assert_eq!(t.fire_expired_from(2, 300), 1);
        assert_eq!(*log.lock(), [10, 15, 11, 20, 150, 200]);
        assert_eq!(t.pending(), 0);
        assert_eq!(t.next_deadline(), NO_DEADLINE);
        t.add_in(1, 40, recorder(&log, 40));
        t.clear();
        assert_eq!(t.pending(), 0);
        assert_eq!(t.fire_expired(1000), 0);
    }

    #[test]
    fn fires_in_deadline_then_insertion_order() {
        let t = Timers::new();
        let log = Arc::new(Mutex::new(Vec::new()));
        t.add(30, recorder(&log, 3));
        t.add(10, recorder(&log, 1));
        t.add(10, recorder(&log, 2));
        t.add(50, recorder(&log, 5));
        assert_eq!(t.pending(), 4);
        assert_eq!(t.next_deadline(), 10);
        assert_eq!(t.fire_expired(5), 0);
        assert_eq!(t.fire_expired(30), 3);
        assert_eq!(*log.lock(), vec![1, 2, 3]);
        assert_eq!(t.next_deadline(), 50);
        assert_eq!(t.pending(), 1);
    }

    #[test]
    fn a_panicking_callback_is_contained() {
        let t = Timers::new();
        let log = Arc::new(Mutex::new(Vec::new()));
        t.add(1, TimerAction::Call(Box::new(|| panic!("callback bug"))));
        t.add(2, recorder(&log, 2));
        assert_eq!(t.fire_expired(10), 2);
        assert_eq!(*log.lock(), vec![2]);
        assert_eq!(t.pending(), 0);
    }

    #[test]
    fn cancelled_timers_do_not_fire_and_are_not_pending() {
        let t = Timers::new();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (h, earliest) = t.add(10, recorder(&log, 1));
        assert!(earliest);
        assert!(t.cancel(&h));
        assert!(!t.cancel(&h));
        assert_eq!(t.pending(), 0);
        assert_eq!(t.fire_expired(100), 0);
        assert!(log.lock().is_empty());
        assert_eq!(t.next_deadline(), NO_DEADLINE);
    }

    #[test]
    fn out_of_order_adds_fire_in_deadline_order() {
        let t = Timers::new();
        let log = Arc::new(Mutex::new(Vec::new()));
        // Same bucket, added latest-first; and across buckets.
        t.add(1_000_300, recorder(&log, 3));
        t.add(1_000_100, recorder(&log, 1));
        t.add(1_000_200, recorder(&log, 2));
        t.add(900_000_000, recorder(&log, 5));
        t.add(1_000_200, recorder(&log, 22));
        t.add(2_000_000, recorder(&log, 4));
        assert_eq!(t.next_deadline(), 1_000_100);
        assert_eq!(t.fire_expired(1_000_200), 3);
        assert_eq!(t.next_deadline(), 1_000_300);
        assert_eq!(t.fire_expired(u64::MAX - 1), 3);
        assert_eq!(*log.lock(), vec![1, 2, 22, 3, 4, 5]);
        assert_eq!(t.next_deadline(), NO_DEADLINE);
    }

    #[derive(Debug, Clone)]
    enum Op {
        /// A timer this many ns after the current time.
        Add(u64),
        /// Cancels the n-th timer added so far (mod the count).
        Cancel(usize),
        /// Moves time forward this many ns and fires what is due.
        Advance(u64),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            // Short (same bucket), around a bucket, and long delays.
            4 => (0u64..200_000).prop_map(Op::Add),
            2 => (0u64..5_000_000).prop_map(Op::Add),
            1 => (0u64..1_000_000_000).prop_map(Op::Add),
            2 => any::<usize>().prop_map(Op::Cancel),
            3 => (0u64..3_000_000).prop_map(Op::Advance),
        ]
    }

    proptest::proptest! {
        /// The buckets against a reference model: a list of every timer,
        /// fired in (deadline, insertion) order, cancelled ones skipped but
        /// still counted as the earliest deadline until their deadline.
        #[test]
        fn matches_a_sorted_list(ops in proptest::collection::vec(op(), 1..300)) {
            let t = Timers::new();
            let log = Arc::new(Mutex::new(Vec::new()));
            // (deadline, id, cancelled, removed)
            let mut model: Vec<(u64, u32, bool, bool)> = Vec::new();
            let mut handles = Vec::new();
            let mut now = 0u64;
            let mut expect = Vec::new();
            for op in ops {
                match op {
                    Op::Add(d) => {
                        let id = u32::try_from(model.len()).unwrap();
                        let deadline = now + d;
                        let before = model.iter().filter(|m| !m.3).map(|m| m.0).min();
                        let (h, earliest) = t.add(deadline, recorder(&log, id));
                        proptest::prop_assert_eq!(earliest, before.is_none_or(|b| deadline < b));
                        handles.push(h);
                        model.push((deadline, id, false, false));
                    }
                    Op::Cancel(n) => {
                        if handles.is_empty() {
                            continue;
                        }
                        let i = n % handles.len();
                        let live = !model[i].2 && !model[i].3;
                        proptest::prop_assert_eq!(t.cancel(&handles[i]), live);
                        model[i].2 = true;
                    }
                    Op::Advance(d) => {
                        now += d;
                        let mut due: Vec<usize> = (0..model.len())
                            .filter(|&i| !model[i].3 && model[i].0 <= now)
                            .collect();
                        due.sort_by_key(|&i| (model[i].0, i));
                        let mut n = 0;
                        for i in due {
                            model[i].3 = true;
                            if !model[i].2 {
                                expect.push(model[i].1);
                                n += 1;
                            }
                        }
                        proptest::prop_assert_eq!(t.fire_expired(now), n);
                        proptest::prop_assert_eq!(&*log.lock(), &expect);
                    }
                }
                let next = model.iter().filter(|m| !m.3).map(|m| m.0).min();
                // Cancelled entries stay until their deadline passes a fire.
                proptest::prop_assert_eq!(t.next_deadline(), next.unwrap_or(NO_DEADLINE));
                let pending = model.iter().filter(|m| !m.2 && !m.3).count();
                proptest::prop_assert_eq!(t.pending(), pending);
            }
            t.clear();
            proptest::prop_assert_eq!(t.pending(), 0);
            proptest::prop_assert_eq!(t.next_deadline(), NO_DEADLINE);
        }
    }
}
