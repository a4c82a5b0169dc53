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
//!
//! Quiescence (a run given a [`Quiescence`] hook: one process of several,
//! docs/runtime.md, "Quiescence"): where step P2 would declare a deadlock,
//! the run is instead *quiescent*: the hook is told `true` and the worker
//! parks as usual. The first step after that which takes a worker out of
//! the parked state (a notify's pop, or P5 removing itself) tells the hook
//! `false`. Both happen under the sleepers lock, so the hook sees them in
//! order, and a wake from outside the runtime (the only kind that can come
//! while it is quiescent) has told it `false` before the wake returns.

use std::sync::Arc;

use crate::loom::{fence, AtomicUsize, Mutex, Ordering};

/// Told when a run becomes quiescent (every worker parked, no queued task,
/// no timer, I/O wait or outside hold: what would otherwise end the run as
/// a deadlock) and when it stops being so. The run then goes on waiting
/// until something outside wakes a task or ends the run
/// ([`crate::RunControl::end`]). Called under the runtime's idle lock: it
/// must be quick and must not call into the runtime.
pub trait Quiescence: Send + Sync {
    /// `true`: the run just became quiescent; `false`: a worker left the
    /// parked state after that.
    fn changed(&self, quiescent: bool);
}

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
pub struct Idle {
    workers: usize,
    num_searching: AtomicUsize,
    num_parked: AtomicUsize,
    sleepers: Mutex<Sleepers>,
    /// Told instead of declaring a deadlock (see the module doc).
    quiescence: Option<Arc<dyn Quiescence>>,
}

#[derive(Debug)]
struct Sleepers {
    list: Vec<usize>,
    shutdown: bool,
    /// The hook was last told `true`.
    quiescent: bool,
}

impl std::fmt::Debug for Idle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Idle")
            .field("workers", &self.workers)
            .field("num_searching", &self.num_searching)
            .field("num_parked", &self.num_parked)
            .field("quiescence", &self.quiescence.is_some())
            .finish()
    }
}

impl Idle {
    pub fn new(workers: usize, quiescence: Option<Arc<dyn Quiescence>>) -> Idle {
        Idle {
            workers,
            num_searching: AtomicUsize::new(0),
            num_parked: AtomicUsize::new(0),
            sleepers: Mutex::new(Sleepers {
                list: Vec::with_capacity(workers),
                shutdown: false,
                quiescent: false,
            }),
            quiescence,
        }
    }

    /// The number of workers.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// A worker leaves the parked state: a quiescent run no longer is.
    /// Runs under the sleepers lock.
    fn leave_quiescence(&self, s: &mut Sleepers) {
        if s.quiescent {
            s.quiescent = false;
            if let Some(q) = &self.quiescence {
                q.changed(false);
            }
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
        self.leave_quiescence(&mut s);
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
    /// is parked and returns whether nothing can ever run again; with a
    /// quiescence hook that makes the run quiescent instead of a deadlock.
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
            let Some(q) = &self.quiescence else {
                return ParkDecision::Deadlock;
            };
            if !s.quiescent {
                s.quiescent = true;
                q.changed(true);
            }
        }
        ParkDecision::Parked
    }

    /// Park step P5. The worker counts as searching afterwards.
    pub fn transition_from_parked(&self, worker: usize) {
        let mut s = self.sleepers.lock();
        if let Some(pos) = s.list.iter().position(|&w| w == worker) {
            s.list.swap_remove(pos);
            self.leave_quiescence(&mut s);
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
