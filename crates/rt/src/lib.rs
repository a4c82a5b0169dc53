//! The task runtime: Weft tasks are Rust futures run by a pool of worker
//! threads with per-worker queues and work stealing; a blocked task is a
//! parked heap object that holds no thread. Design and measurements:
//! `docs/runtime.md`. Table of contents:
//!
//! | file            | concern |
//! |-----------------|---------|
//! | `api.rs`        | public types: `Config`, `SrcLoc`, `WaitKind`, `TaskEnd`, `RunOutcome`, `SpawnError` |
//! | `choice.rs`     | the decision stream of a controlled run: `Op`, `SchedPoint`, the `Chooser` trait, `StepRec` |
//! | `control.rs`    | the controlled executor of `weft test`: one thread, every decision from a `Chooser`, virtual time; `sched_point`, `choose`, `delay_until` |
//! | `explore/`      | strategies over the controlled executor: schedule 0, random walk, PCT, select enforcement, DPOR; replay tokens |
//! | `context.rs`    | the worker thread-local; `spawn`, `set_wait`, `yield_now`, `release_lifo`, `trace_span`, `set_task_name`, ...; wake routing (`Schedule for Shared`) |
//! | `time.rs`       | `sleep`, `after`, `now_ms`, `register_io` (through `netpoll`) |
//! | `task.rs`       | a task: number, future, wait reason; `Arc<Task<S>>` is its waker; the `Schedule` trait |
//! | `state.rs`      | a task's scheduling state machine (one atomic byte) |
//! | `wait.rs`       | a blocked task's wait reason as one word; sites and their locations |
//! | `registry.rs`   | tasks that blocked (deadlock report, final drop) |
//! | `shared.rs`     | state shared by workers; spawn, notify, shutdown protocol, deadlock check |
//! | `worker.rs`     | the worker loop: LIFO slot, local queue, injector, stealing |
//! | `idle.rs`       | idle accounting; notify and park protocols; the quiescence hook |
//! | `park.rs`       | parking a thread on a condvar or in the poller |
//! | `trace.rs`      | Chrome trace-event timeline |
//! | `netpoll/`      | the poller: epoll, timers, I/O readiness |
//! | `memlimit.rs`   | the memory ceiling (counting allocator) |
//! | `loom_tests.rs` | loom model checks of the park, notify and wake protocols (`--cfg loom` only) |
//!
//! Layering: a module imports only from the modules on its line (and
//! `crate::loom`, the loom facade, which every module with atomics, locks
//! or an `UnsafeCell` uses), so no two modules import each other:
//!
//! | module | may import |
//! |--------|------------|
//! | `api`, `memlimit` | nothing of the crate |
//! | `choice` | nothing of the crate |
//! | `netpoll` | its own submodules |
//! | `state`, `idle`, `trace` | nothing of the crate |
//! | `wait` | `api` |
//! | `park` | `netpoll` (the `ParkDriver` impl of the poller) |
//! | `task` | `api`, `state` |
//! | `registry` | `task` |
//! | `shared` | `api`, `idle`, `park`, `registry`, `task`, `trace`, `wait`, `netpoll` |
//! | `context` | `api`, `choice`, `shared`, `task`, `trace`, `wait` |
//! | `worker` | `api`, `context`, `idle`, `registry`, `shared`, `task` |
//! | `time` | `context`, `shared`, `netpoll` |
//! | `control` | `api`, `choice`, `context`, `idle`, `registry`, `shared`, `task`, `trace`, `wait`, `worker`, `netpoll` |
//! | `explore` | `api`, `choice`, `control` |
//! | `lib.rs` | everything |
//!
//! The lower modules (`state`, `wait`, `trace`, `idle`, `park`, `task`,
//! `registry`, `netpoll`) know nothing of a run's shared state: the task is
//! generic over its scheduler (`task::Schedule`, tokio's cut), `Shared`
//! implements it in `context.rs` (wake routing needs the thread-local), and
//! the loom tests implement it with a model scheduler.
//!
//! Atomics, locks, condition variables and the task body's `UnsafeCell`
//! come from the loom facade `weft_chan::loom` (`crate::loom` here), so
//! that `RUSTFLAGS="--cfg loom"` swaps in loom's model-checked types. Two
//! exceptions stay `std`: reference counts (`Arc`, `Weak`), which are not
//! part of the protocols the loom tests check (and `Waker::from` needs
//! `std`'s `Arc`), and `memlimit`'s `static` counters (see there).
//!
//! Invariants: every task future is dropped before `Runtime::run` returns
//! and every worker thread is joined; a run ends at the first of main
//! returning, a panic, an exit, or a deadlock (every worker parked, no queued
//! task, no pending timer, I/O wait or external hold), except that a run
//! given a quiescence hook (`Runtime::with_quiescence`) tells the hook
//! instead of declaring a deadlock and waits until it is woken or ended
//! (`RunControl::end`).

mod api;
mod choice;
mod context;
mod control;
pub mod explore;
mod idle;
#[cfg(all(test, loom))]
mod loom_tests;
pub mod memlimit;
mod netpoll;
mod park;
mod registry;
mod shared;
mod state;
mod task;
mod time;
mod trace;
mod wait;
mod worker;

use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;

use crossbeam_deque::Worker;

pub use api::{BlockedTask, Config, RunOutcome, SpawnError, SrcLoc, TaskEnd, WaitKind};
pub use choice::{
    Chooser, Objects, Op, OpKind, PickKind, Ready, SchedPoint, StepRec, COLLECTIVES, FILES, STDOUT,
};
pub use context::{
    clear_wait, current_task, external, external_wait, hand_off_lifo, lifo_waiting, preempt_point,
    release_lifo, run_control, run_seed, set_task_name, set_wait, set_wait_site, spawn,
    spawn_boxed, trace_span, tracing, yield_now, yield_to_lifo, ExternalWait, RunControl,
    TraceSpan,
};
pub use context::{set_task_device, trace_span_between, trace_span_in};
pub use control::{
    choose, choose_word, controlled, delay_until, made, prefer_case, sched_point, ControlConfig,
    ControlEnd, ControlRun, DelayUntil, Leak,
};
pub use idle::Quiescence;
pub use netpoll::IoSource;
pub use time::{after, now_ms, register_io, sleep};
pub use wait::SiteResolver;

use context::{install, Ctx};
use shared::{Shared, Task};
use trace::Tracer;
/// The loom facade shared by every Weft crate (see the module doc).
use weft_chan::loom;

/// A task runtime. Cheap to create: threads exist only while `run` runs.
pub struct Runtime {
    cfg: Config,
    sites: Option<SiteResolver>,
    quiescence: Option<Arc<dyn Quiescence>>,
    trace_error: loom::Mutex<Option<String>>,
}

impl Runtime {
    pub fn new(cfg: Config) -> Runtime {
        Runtime {
            cfg,
            sites: None,
            quiescence: None,
            trace_error: loom::Mutex::new(None),
        }
    }

    /// Gives the runtime the resolver of the sites passed to
    /// `set_wait_site`, called only to write a deadlock report.
    pub fn with_wait_sites(mut self, resolver: SiteResolver) -> Runtime {
        self.sites = Some(resolver);
        self
    }

    /// Makes the run tell `hook` when it becomes quiescent (every worker
    /// parked with no queued task, timer, I/O wait or outside hold) instead
    /// of ending it as a deadlock, and when it stops being so; the run then
    /// waits for a wake from outside or for [`RunControl::end`]. One
    /// process of a multi-process program uses it to take part in the
    /// distributed deadlock detection (docs/runtime.md, "Quiescence").
    pub fn with_quiescence(mut self, hook: Arc<dyn Quiescence>) -> Runtime {
        self.quiescence = Some(hook);
        self
    }

    /// Runs `main` as task 1 on this thread (worker 0) plus `workers - 1`
    /// threads, and blocks until the run ends: main returned, a task
    /// panicked or exited, or deadlock. Every task is dropped and every
    /// thread joined before it returns.
    pub fn run<F: Future<Output = TaskEnd> + Send + 'static>(&self, main: F) -> RunOutcome {
        let workers = self.cfg.workers.max(1);
        let driver = match crate::netpoll::Driver::with_workers(workers) {
            Ok(d) => d,
            Err(e) => return runtime_failure(format!("cannot create the poller: {e}")),
        };
        let locals: Vec<Worker<Arc<Task>>> = (0..workers).map(|_| Worker::new_fifo()).collect();
        let stealers = locals.iter().map(|w| w.stealer()).collect();
        let tracer = self.cfg.trace.clone().map(Tracer::new);
        let shared = Arc::new(Shared::new(
            idle::Idle::new(workers, self.quiescence.clone()),
            self.cfg.seed,
            self.cfg.max_tasks,
            stealers,
            driver,
            tracer,
            wait::Sites::new(self.sites.clone()),
        ));
        let mut locals = locals.into_iter();
        let local0 = locals.next().unwrap_or_else(Worker::new_fifo);
        match shared.new_task(Box::pin(main)) {
            Ok(t) => local0.push(t),
            Err(e) => return runtime_failure(e.to_string()),
        }

        std::thread::scope(|scope| {
            for (i, local) in locals.enumerate() {
                let for_worker = shared.clone();
                let spawned = std::thread::Builder::new()
                    .name(format!("weft-worker-{}", i + 1))
                    .spawn_scoped(scope, move || {
                        let ctx = Rc::new(Ctx::new(for_worker, i + 1, local));
                        let _guard = install(ctx.clone());
                        worker::run_worker(&ctx);
                    });
                if let Err(e) = spawned {
                    shared.finish(runtime_failure(format!(
                        "cannot start a worker thread: {e}"
                    )));
                }
            }
            let ctx = Rc::new(Ctx::new(shared.clone(), 0, local0));
            let _guard = install(ctx.clone());
            worker::run_worker(&ctx);
        });

        // Shutdown protocol step 4 (see `shared.rs`): all workers are joined.
        // Workers dropped their queued tasks on the way out.
        for t in shared.registry.drain() {
            // SAFETY: every worker was joined: this thread owns every body.
            unsafe { t.abandon() };
        }
        while !shared.injector.is_empty() {
            if let crossbeam_deque::Steal::Success(t) = shared.injector.steal() {
                // SAFETY: as above.
                unsafe { t.abandon() };
            }
        }
        shared.driver.clear();
        #[cfg(all(test, not(loom)))]
        task::lend_tests::TASKS_LEFT.set(Arc::weak_count(&shared));
        if let Some(tracer) = &shared.tracer {
            *self.trace_error.lock() = tracer.write().err().map(|e| {
                let path = self
                    .cfg
                    .trace
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                format!("cannot write trace {path}: {e}")
            });
        }
        shared.take_outcome().unwrap_or(RunOutcome::Returned)
    }

    /// Runs `main` as task 1 of a controlled run (`control.rs`, the
    /// executor of `weft test`): this thread runs every task, `chooser`
    /// makes every decision, time is virtual. Returns how the run ended and
    /// every step it took.
    pub fn run_controlled<F: Future<Output = TaskEnd> + Send + 'static>(
        &self,
        main: F,
        chooser: Rc<std::cell::RefCell<dyn Chooser>>,
        limits: &ControlConfig,
    ) -> ControlRun {
        control::run_controlled(
            &self.cfg,
            self.sites.clone(),
            Box::pin(main),
            chooser,
            limits,
        )
    }

    /// Why the last run's trace file could not be written, if it could not.
    pub fn trace_error(&self) -> Option<String> {
        self.trace_error.lock().clone()
    }
}

/// A failure of the runtime itself (no poller, no threads), reported as a
/// panic of task 0 at `<runtime>`.
fn runtime_failure(msg: String) -> RunOutcome {
    RunOutcome::Panic {
        task: 0,
        msg: format!("runtime: {msg}"),
        loc: SrcLoc::new("<runtime>", 0, 0),
    }
}
