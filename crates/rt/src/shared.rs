//! State shared by the workers of one run: the injection queue, the
//! stealers of every local queue, idle accounting, parkers, the poller, the
//! task registry and the outcome. Also the operations that touch several of
//! these at once: spawning, waking, notifying, finishing, the deadlock check.
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

use std::sync::{Arc, Weak};

use crossbeam_deque::{Injector, Steal, Stealer};

use super::api::{BlockedTask, RunOutcome, SpawnError};
use super::context::{with_ctx, Ctx};
use super::idle::Idle;
use super::park::Parker;
use super::registry::Registry;
use super::sync::{lock, AtomicBool, AtomicU64, AtomicUsize, Mutex, Ordering};
use super::task::{BoxFuture, Task};
use super::trace::{Event, Tracer};
use super::wait::Sites;
use crate::netpoll::Driver;

pub(crate) struct Shared {
    pub workers: usize,
    pub seed: u64,
    pub max_tasks: Option<usize>,
    pub injector: Injector<Arc<Task>>,
    pub stealers: Vec<Stealer<Arc<Task>>>,
    pub idle: Idle,
    pub parkers: Vec<Parker>,
    pub driver: Driver,
    pub registry: Registry,
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
        workers: usize,
        seed: u64,
        max_tasks: Option<usize>,
        stealers: Vec<Stealer<Arc<Task>>>,
        driver: Driver,
        tracer: Option<Tracer>,
        sites: Sites,
    ) -> Shared {
        Shared {
            workers,
            seed,
            max_tasks,
            injector: Injector::new(),
            stealers,
            idle: Idle::new(workers),
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

    /// Where a woken task goes: the current worker's LIFO slot when the
    /// waker runs inside a task on a worker of the same run; the back of that
    /// worker's queue when it runs there outside a task (timers, I/O); the
    /// injection queue from any other thread.
    pub fn schedule_woken(task: Arc<Task>) {
        let mut task = Some(task);
        with_ctx(|ctx| {
            let Some(t) = task.as_ref() else { return };
            if !std::ptr::eq(Arc::as_ptr(&ctx.shared), Weak::as_ptr(&t.shared)) {
                return;
            }
            let t = task.take();
            if ctx.shared.is_shutdown() {
                return;
            }
            if let Some(t) = t {
                ctx.trace_wake(t.id);
                ctx.schedule_local(t);
            }
        });
        let Some(task) = task else { return };
        let Some(shared) = task.shared.upgrade() else {
            return;
        };
        if shared.is_shutdown() {
            return;
        }
        if let Some(tracer) = &shared.tracer {
            tracer.outside(Event::wake(shared.driver.now(), task.id, 0, None));
        }
        shared.injector.push(task);
        shared.notify_parked_remote();
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
            let mut o = lock(&self.outcome);
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
        lock(&self.outcome).take()
    }

    /// Takes one task from the injection queue, moving a batch into `ctx`'s
    /// local queue.
    pub fn steal_injector(&self, ctx: &Ctx) -> Option<Arc<Task>> {
        loop {
            match self.injector.steal_batch_and_pop(&ctx.local) {
                Steal::Success(t) => return Some(t),
                Steal::Empty => return None,
                Steal::Retry => continue,
            }
        }
    }

    /// Steals half of another worker's queue, visiting victims from a
    /// seeded random start.
    pub fn steal_other(&self, ctx: &Ctx) -> Option<Arc<Task>> {
        let n = self.stealers.len();
        if n <= 1 {
            return None;
        }
        let start = ctx.rng.borrow_mut().usize(..n);
        for i in 0..n {
            let victim = (start + i) % n;
            if victim == ctx.index {
                continue;
            }
            loop {
                match self.stealers[victim].steal_batch_and_pop(&ctx.local) {
                    Steal::Success(t) => return Some(t),
                    Steal::Empty => break,
                    Steal::Retry => continue,
                }
            }
        }
        None
    }
}
