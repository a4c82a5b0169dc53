//! Timers: a binary heap of deadlines (nanoseconds since the driver started)
//! under one lock, with the earliest deadline mirrored in an atomic so that
//! busy workers can check "is anything due?" without locking.
//!
//! Invariants:
//! - `pending` counts timers added and not yet fired or cancelled. It drops
//!   only after a timer's action has run, so "no timer pending" never holds
//!   while a fired timer's effect (a wake, a channel send) is still unseen.
//!   Deadlock detection relies on this.
//! - Equal deadlines fire in the order they were added (`seq`), which keeps
//!   runs with one worker deterministic.
//! - Cancelled entries stay in the heap until their deadline and are then
//!   skipped (lazy deletion, as Go's timers did before 1.14).

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::task::Waker;

use crate::loom::{AtomicU64, AtomicUsize, Mutex, Ordering};

/// No deadline: the value of `next_deadline` when the heap is empty.
pub const NO_DEADLINE: u64 = u64::MAX;

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
}

struct HeapItem {
    deadline: u64,
    seq: u64,
    entry: Arc<Entry>,
}

impl PartialEq for HeapItem {
    fn eq(&self, other: &Self) -> bool {
        (self.deadline, self.seq) == (other.deadline, other.seq)
    }
}
impl Eq for HeapItem {}
impl PartialOrd for HeapItem {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}
impl Ord for HeapItem {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, other: &Self) -> CmpOrdering {
        (other.deadline, other.seq).cmp(&(self.deadline, self.seq))
    }
}

/// The timer heap of one run.
pub struct Timers {
    heap: Mutex<Heap>,
    next_deadline: AtomicU64,
    pending: AtomicUsize,
}

struct Heap {
    items: BinaryHeap<HeapItem>,
    seq: u64,
}

impl Default for Timers {
    fn default() -> Self {
        Timers::new()
    }
}

impl Timers {
    pub fn new() -> Timers {
        Timers {
            heap: Mutex::new(Heap {
                items: BinaryHeap::new(),
                seq: 0,
            }),
            next_deadline: AtomicU64::new(NO_DEADLINE),
            pending: AtomicUsize::new(0),
        }
    }

    /// Adds a timer. Returns its handle and whether it is now the earliest
    /// deadline (the caller then wakes a thread blocked in the poller).
    pub fn add(&self, deadline: u64, action: TimerAction) -> (TimerHandle, bool) {
        let entry = Arc::new(Entry {
            action: Mutex::new(Some(action)),
        });
        self.pending.fetch_add(1, Ordering::SeqCst);
        let mut heap = self.heap.lock();
        heap.seq += 1;
        let seq = heap.seq;
        heap.items.push(HeapItem {
            deadline,
            seq,
            entry: entry.clone(),
        });
        let earliest = deadline < self.next_deadline.load(Ordering::SeqCst);
        if earliest {
            self.next_deadline.store(deadline, Ordering::SeqCst);
        }
        (TimerHandle { entry }, earliest)
    }

    /// The earliest deadline, or `NO_DEADLINE`. May be a cancelled timer's.
    pub fn next_deadline(&self) -> u64 {
        self.next_deadline.load(Ordering::SeqCst)
    }

    /// Timers added and neither fired nor cancelled.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::SeqCst)
    }

    /// Fires every timer whose deadline is at or before `now`, in deadline
    /// order, running actions outside the heap lock. Returns how many fired.
    pub fn fire_expired(&self, now: u64) -> usize {
        if self.next_deadline() > now {
            return 0;
        }
        let mut due = Vec::new();
        {
            let mut heap = self.heap.lock();
            while heap.items.peek().is_some_and(|top| top.deadline <= now) {
                if let Some(item) = heap.items.pop() {
                    if let Some(action) = item.entry.action.lock().take() {
                        due.push(action);
                    }
                }
            }
            let next = heap.items.peek().map_or(NO_DEADLINE, |top| top.deadline);
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
            self.pending.fetch_sub(1, Ordering::SeqCst);
        }
        fired
    }

    /// Cancels a timer that has not fired. Returns false if it already fired.
    pub fn cancel(&self, handle: &TimerHandle) -> bool {
        let action = handle.entry.action.lock().take();
        let cancelled = action.is_some();
        drop(action);
        if cancelled {
            self.pending.fetch_sub(1, Ordering::SeqCst);
        }
        cancelled
    }

    /// Drops every timer without running it (end of a run).
    pub fn clear(&self) {
        let items = std::mem::take(&mut self.heap.lock().items);
        for item in items {
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
}
