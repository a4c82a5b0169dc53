//! Idle accounting: which workers are parked, how many are searching for
//! work to steal, and the final check that declares a deadlock. Tokio's
//! `idle.rs` (counts read lock-free, list of sleepers under a lock) plus a
//! shutdown flag and the deadlock hook.
//!
//! Notify protocol (after making a task runnable):
//! 1. The pusher publishes the task (queue push), then a SeqCst fence. The
//!    fence is skipped when the task went to the pusher's own local queue:
//!    a notification missed then costs parallelism, never liveness, because
//!    the pusher is running and drains its own queue (Go's `wakep` makes
//!    the same trade). Pushes nobody running will drain (the injection
//!    queue from an outside thread) always fence.
//! 2. If a worker is searching, or none is parked, stop: the searcher will
//!    find it, or a worker will before it parks (step P3 below).
//! 3. Lock; re-check 2; pop a sleeper, count it unparked and searching;
//!    unlock; unpark that worker's `Parker`.
//!
//! Park protocol (a worker found no task):
//! P1. Lock. If the run is shutting down, unlock and stop. Stop searching if
//!     it was; count itself parked; push itself on the sleeper list.
//! P2. Still under the lock: if every worker is now parked, run the
//!     deadlock check (no queued task anywhere, no timer, I/O wait or outside
//!     hold pending). No task can become runnable while it runs: only a
//!     running worker, a pending timer or I/O wait, or a hold can make one,
//!     and a parked worker must take this lock to leave the parked state.
//! P3. Unlock, SeqCst fence, re-check every queue; if one has work, leave
//!     the parked state (step P5) and search.
//! P4. Park on the `Parker`.
//! P5. Leave: lock; if still on the sleeper list (woken by a timer, an I/O
//!     event or step P3), remove itself and count itself searching; else a
//!     notifier already did the accounting. Only then fire timers.

use crate::loom::{fence, AtomicUsize, Mutex, Ordering};

/// What `transition_to_parked` decided.
#[derive(Debug, PartialEq, Eq)]
pub enum ParkDecision {
    /// Parked; continue with step P3.
    Parked,
    /// Every worker is parked and nothing can wake any task.
    Deadlock,
    /// The run is ending; do not park.
    Shutdown,
}

/// Idle accounting of a run's workers.
#[derive(Debug)]
pub struct Idle {
    workers: usize,
    num_searching: AtomicUsize,
    num_parked: AtomicUsize,
    sleepers: Mutex<Sleepers>,
}

#[derive(Debug)]
struct Sleepers {
    list: Vec<usize>,
    shutdown: bool,
}

impl Idle {
    pub fn new(workers: usize) -> Idle {
        Idle {
            workers,
            num_searching: AtomicUsize::new(0),
            num_parked: AtomicUsize::new(0),
            sleepers: Mutex::new(Sleepers {
                list: Vec::with_capacity(workers),
                shutdown: false,
            }),
        }
    }

    /// Notify steps 1-3: the worker to unpark after new work was queued.
    pub fn worker_to_notify(&self, with_fence: bool) -> Option<usize> {
        if with_fence {
            fence(Ordering::SeqCst);
        }
        if !self.should_notify() {
            return None;
        }
        let mut s = self.sleepers.lock();
        if !self.should_notify() || s.shutdown {
            return None;
        }
        let w = s.list.pop()?;
        self.num_parked.fetch_sub(1, Ordering::SeqCst);
        self.num_searching.fetch_add(1, Ordering::SeqCst);
        Some(w)
    }

    fn should_notify(&self) -> bool {
        self.num_searching.load(Ordering::SeqCst) == 0 && self.num_parked.load(Ordering::SeqCst) > 0
    }

    /// A worker with an empty queue wants to steal. Refused when at least
    /// half the running workers already search (tokio's limit on churn).
    pub fn transition_to_searching(&self) -> bool {
        let searching = self.num_searching.load(Ordering::SeqCst);
        let running = self.workers - self.num_parked.load(Ordering::SeqCst);
        if 2 * searching >= running.max(1) && searching > 0 {
            return false;
        }
        self.num_searching.fetch_add(1, Ordering::SeqCst);
        true
    }

    /// A searching worker found a task. Returns true if it was the last
    /// searcher: the caller then notifies another worker, as more may wait.
    pub fn transition_from_searching(&self) -> bool {
        self.num_searching.fetch_sub(1, Ordering::SeqCst) == 1
    }

    /// Park steps P1-P2. `deadlocked` runs under the lock when every worker
    /// is parked and returns whether nothing can ever run again.
    pub fn transition_to_parked(
        &self,
        worker: usize,
        searching: bool,
        deadlocked: impl FnOnce() -> bool,
    ) -> ParkDecision {
        let mut s = self.sleepers.lock();
        if s.shutdown {
            return ParkDecision::Shutdown;
        }
        if searching {
            self.num_searching.fetch_sub(1, Ordering::SeqCst);
        }
        let parked = self.num_parked.fetch_add(1, Ordering::SeqCst) + 1;
        s.list.push(worker);
        if parked == self.workers && deadlocked() {
            return ParkDecision::Deadlock;
        }
        ParkDecision::Parked
    }

    /// Park step P5. The worker counts as searching afterwards.
    pub fn transition_from_parked(&self, worker: usize) {
        let mut s = self.sleepers.lock();
        if let Some(pos) = s.list.iter().position(|&w| w == worker) {
            s.list.swap_remove(pos);
            self.num_parked.fetch_sub(1, Ordering::SeqCst);
            self.num_searching.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Marks the run as ending; returns the workers to unpark (all parked).
    pub fn shutdown(&self) -> Vec<usize> {
        let mut s = self.sleepers.lock();
        s.shutdown = true;
        let list = std::mem::take(&mut s.list);
        self.num_parked.fetch_sub(list.len(), Ordering::SeqCst);
        list
    }
}
