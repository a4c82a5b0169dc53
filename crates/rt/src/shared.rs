//! State shared by the workers of one run: the injection queue, the
//! stealers of every local queue, idle accounting, parkers, the poller, the
//! task registry and the outcome. Also the operations that touch several of
//! these at once: spawning, notifying, finishing, the deadlock check. Waking
//! (`Schedule for Shared`) reads the worker thread-local, so it lives in
//! `context.rs`; stealing takes a worker's queue, so it lives in `worker.rs`.
//! This module imports neither (see the layering in `lib.rs`).
//!
//! Shutdown protocol (`finish`):
//! 1. Store the outcome if none is stored yet (the first end wins).
//! 2. Set `shutdown`; workers check it before every poll, so no further task
//!    runs longer than the poll in progress.
//! 3. Mark the idle state shut down (no worker parks after this) and unpark
//!    every parked worker.
//! 4. Each worker, leaving its loop, drops the futures of the tasks in its
//!    LIFO slot and local queue. `Runtime::run` joins the worker threads,
//!    then drops the futures of every blocked task (registry drain), of the
//!    tasks left in the injection queue, and every timer.

use std::sync::Arc;

use crossbeam_deque::{Injector, Stealer};

use super::api::{BlockedTask, RunOutcome, SpawnError};
use super::idle::Idle;
use super::park::Parker;
use super::registry::Registry;
use super::task::{self, BoxFuture};
use super::trace::Tracer;
use super::wait::Sites;
use crate::loom::{AtomicBool, AtomicU64, AtomicUsize, Mutex, Ordering};
use crate::netpoll::Driver;

/// A task of a run, scheduled by the run's `Shared` (`task.rs`). The
/// `Schedule` impl (wake routing) reads the worker thread-local, so it is in
/// `context.rs`, which keeps this module below the context.
pub(crate) type Task = task::Task<Shared>;

pub(crate) struct Shared {
    pub workers: usize,
    pub seed: u64,
    pub max_tasks: Option<usize>,
    pub injector: Injector<Arc<Task>>,
    pub stealers: Vec<Stealer<Arc<Task>>>,
    pub idle: Idle,
    pub parkers: Vec<Parker>,
    pub driver: Driver,
    pub registry: Registry<Shared>,
    pub next_id: AtomicU64,
    pub live: AtomicUsize,
    /// Outside holds (`external_wait`): like pending timers for deadlock.
    pub holds: AtomicUsize,
    shutdown: AtomicBool,
    outcome: Mutex<Option<RunOutcome>>,
    pub tracer: Option<Tracer>,
    /// Where wait words point (`wait.rs`).
    pub sites: Sites,
}

impl Shared {
    pub fn new(
        idle: Idle,
        seed: u64,
        max_tasks: Option<usize>,
        stealers: Vec<Stealer<Arc<Task>>>,
        driver: Driver,
        tracer: Option<Tracer>,
        sites: Sites,
    ) -> Shared {
        let workers = idle.workers();
        Shared {
            workers,
            seed,
            max_tasks,
            injector: Injector::new(),
            stealers,
            idle,
            parkers: (0..workers).map(|_| Parker::new()).collect(),
            driver,
            registry: Registry::new(),
            next_id: AtomicU64::new(1),
            live: AtomicUsize::new(0),
            holds: AtomicUsize::new(0),
            shutdown: AtomicBool::new(false),
            outcome: Mutex::new(None),
            tracer,
            sites,
        }
    }

    pub fn is_shutdown(&self) -> bool {
        self.shutdown.load(Ordering::Acquire)
    }

    /// Creates a task (numbered in creation order). The caller queues it.
    pub fn new_task(self: &Arc<Self>, future: BoxFuture) -> Result<Arc<Task>, SpawnError> {
        let live = self.live.fetch_add(1, Ordering::Relaxed);
        if let Some(limit) = self.max_tasks {
            if live >= limit {
                self.live.fetch_sub(1, Ordering::Relaxed);
                return Err(SpawnError::Limit { limit });
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let task = Task::new(id, future, Arc::downgrade(self));
        if let Some(t) = &self.tracer {
            t.task_started(id);
        }
        Ok(task)
    }

    /// A task finished: forget it.
    pub fn task_done(&self, task: &Task) {
        self.registry.remove(task);
        self.live.fetch_sub(1, Ordering::Relaxed);
    }

    /// Notify protocol (see `idle.rs`) after a worker pushed to its own
    /// queue: unpark one worker if nobody is looking for work.
    pub fn notify_parked_local(&self) {
        if self.workers > 1 {
            if let Some(w) = self.idle.worker_to_notify(false) {
                self.parkers[w].unpark(&self.driver);
            }
        }
    }

    /// Notify protocol after a push that no running worker will drain by
    /// itself (the injection queue, a released hold): with the fence.
    pub fn notify_parked_remote(&self) {
        if let Some(w) = self.idle.worker_to_notify(true) {
            self.parkers[w].unpark(&self.driver);
        }
    }

    /// True when some queue other than LIFO slots holds a task.
    pub fn has_queued_work(&self) -> bool {
        !self.injector.is_empty() || self.stealers.iter().any(|s| !s.is_empty())
    }

    /// The deadlock check of park step P2 (runs under the idle lock with
    /// every worker parked).
    pub fn deadlocked(&self) -> bool {
        !self.is_shutdown()
            && !self.has_queued_work()
            && self.driver.timers.pending() == 0
            && self.driver.io.waiters() == 0
            && self.holds.load(Ordering::SeqCst) == 0
    }

    /// Every live task that recorded a wait, in task-number order.
    pub fn blocked_tasks(&self) -> Vec<BlockedTask> {
        self.registry
            .snapshot()
            .iter()
            .filter_map(|t| {
                let word = t.wait.load(Ordering::Relaxed);
                let (kind, loc) = self.sites.resolve(word)?;
                Some(BlockedTask {
                    task: t.id,
                    kind,
                    loc,
                })
            })
            .collect()
    }

    /// Shutdown protocol steps 1-3.
    pub fn finish(&self, outcome: RunOutcome) {
        {
            let mut o = self.outcome.lock();
            if o.is_none() {
                *o = Some(outcome);
            }
        }
        self.shutdown.store(true, Ordering::SeqCst);
        for w in self.idle.shutdown() {
            self.parkers[w].unpark(&self.driver);
        }
    }

    pub fn take_outcome(&self) -> Option<RunOutcome> {
        self.outcome.lock().take()
    }
}
