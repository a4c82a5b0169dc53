//! The worker loop: pick a task (LIFO slot, local queue, injection queue,
//! steal), poll it, and park when there is nothing to do. Tokio's
//! `multi_thread/worker.rs` reduced to Weft's needs.
//!
//! Task selection order, each loop turn:
//! 1. Every `MAINTENANCE_INTERVAL` turns: fire due timers, poll I/O without
//!    blocking, and take from the injection queue first (so tasks woken from
//!    outside are not starved by a busy local queue).
//! 2. The LIFO slot, unless `MAX_LIFO_POLLS` LIFO tasks ran in a row; then
//!    the LIFO task moves behind the held tasks (fairness: two tasks
//!    ping-ponging cannot starve the queue).
//! 3. The held tasks (displaced from the LIFO slot, private to this
//!    worker) while the local queue is empty; else they join its back.
//!    Then the local queue (FIFO), then the injection queue.
//! 4. Search: steal half of another worker's queue.
//! 5. Park (protocol in `idle.rs` and `park.rs`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use crossbeam_deque::Steal;

use super::api::{RunOutcome, SrcLoc, TaskEnd};
use super::context::{Ctx, PREEMPT_BUDGET};
use super::idle::ParkDecision;
use super::registry::Registry;
use super::shared::{Shared, Task};
use super::task::{self, Body, BoxFuture};
use crate::loom::{fence, Ordering};

/// Turns between maintenance steps (tokio uses 61 too: prime, so it does
/// not beat with program loops).
const MAINTENANCE_INTERVAL: u32 = 61;
/// LIFO tasks run in a row before the queue gets a turn (tokio: 3).
const MAX_LIFO_POLLS: u32 = 3;

/// Runs tasks until the run shuts down.
pub(crate) fn run_worker(ctx: &Ctx) {
    let shared = &ctx.shared;
    let mut searching = false;
    loop {
        if shared.is_shutdown() {
            break;
        }
        // Counts down to the next maintenance turn.
        let tick = ctx.tick.get();
        ctx.tick.set(if tick == 0 {
            MAINTENANCE_INTERVAL
        } else {
            tick - 1
        });
        let mut task = None;
        if tick == 0 {
            // A busy worker fires its own timers only: its tasks wake here.
            shared.driver.fire_own_timers(ctx.index);
            shared.driver.poll_io_now();
            task = steal_injector(ctx);
        }
        let task = task
            .or_else(|| next_local(ctx))
            .or_else(|| steal_injector(ctx))
            .or_else(|| {
                if !searching {
                    searching = shared.idle.transition_to_searching();
                }
                if searching {
                    steal_other(ctx)
                } else {
                    None
                }
            });
        match task {
            Some(task) => {
                if searching {
                    searching = false;
                    if shared.idle.transition_from_searching() {
                        shared.notify_parked_local();
                    }
                }
                run_task(ctx, task);
            }
            None => {
                if !spin_for_work(ctx) {
                    park(ctx, &mut searching);
                }
            }
        }
    }
    // Shutdown step 4, this worker's part: drop the futures of the tasks
    // still queued here (blocked ones are dropped from the registry).
    if let Some(t) = ctx.lifo.take() {
        // SAFETY: a queued task is SCHEDULED and was taken from this worker's
        // own slot or queue, so this worker owns its body (`task.rs`).
        unsafe { t.abandon() };
    }
    ctx.flush_held();
    while let Some(t) = ctx.local.pop() {
        // SAFETY: as above.
        unsafe { t.abandon() };
    }
    if let (Some(tracer), Some(buf)) = (&shared.tracer, &ctx.trace) {
        tracer.flush(ctx.index, std::mem::take(&mut *buf.borrow_mut()));
    }
}

/// Steps 2-3 (local part).
fn next_local(ctx: &Ctx) -> Option<Arc<Task>> {
    if let Some(t) = ctx.lifo.take() {
        let n = ctx.lifo_polls.get();
        if n < MAX_LIFO_POLLS {
            ctx.lifo_polls.set(n + 1);
            return Some(t);
        }
        // Its turn is over: behind the held tasks (oldest first), which
        // join the local queue below when it has older work.
        ctx.held.borrow_mut().push_back(t);
    }
    ctx.lifo_polls.set(0);
    // Held tasks run here while the local queue is empty; older queued
    // work goes first otherwise (and the held tasks join the queue's back).
    if ctx.local.is_empty() {
        return ctx.pop_held();
    }
    ctx.flush_held();
    ctx.local.pop()
}

/// Takes one task from the injection queue, moving a batch into `ctx`'s
/// local queue.
fn steal_injector(ctx: &Ctx) -> Option<Arc<Task>> {
    loop {
        match ctx.shared.injector.steal_batch_and_pop(&ctx.local) {
            Steal::Success(t) => return Some(t),
            Steal::Empty => return None,
            Steal::Retry => continue,
        }
    }
}

/// Steals half of another worker's queue, visiting victims from a
/// seeded random start.
fn steal_other(ctx: &Ctx) -> Option<Arc<Task>> {
    let stealers = &ctx.shared.stealers;
    let n = stealers.len();
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
            match stealers[victim].steal_batch_and_pop(&ctx.local) {
                Steal::Success(t) => return Some(t),
                Steal::Empty => break,
                Steal::Retry => continue,
            }
        }
    }
    None
}

/// How long an idle worker keeps looking for work before it parks, when
/// the run has other workers (Go's spinning M; see docs/runtime.md, "Idle
/// workers spin briefly").
const SPIN: std::time::Duration = std::time::Duration::from_micros(SPIN_US);
const SPIN_US: u64 = 50;

/// Spins for up to `SPIN` until a queue holds a task (true) or the run
/// shuts down (true: the loop then ends), else returns false and the
/// caller parks. Only with more than one worker: a lone worker's work can
/// only come from outside the run, through the injector and a wake-up,
/// and one-worker schedules stay independent of time.
fn spin_for_work(ctx: &Ctx) -> bool {
    let shared = &ctx.shared;
    if shared.workers <= 1 {
        return false;
    }
    let start = std::time::Instant::now();
    loop {
        for _ in 0..32 {
            std::hint::spin_loop();
        }
        if shared.has_queued_work() || shared.is_shutdown() {
            return true;
        }
        if start.elapsed() >= SPIN {
            return false;
        }
    }
}

/// Park protocol steps P1-P5 of `idle.rs`.
fn park(ctx: &Ctx, searching: &mut bool) {
    let shared = &ctx.shared;
    // P1, P2.
    match shared
        .idle
        .transition_to_parked(ctx.index, *searching, || shared.deadlocked())
    {
        ParkDecision::Shutdown => return,
        ParkDecision::Deadlock => {
            let blocked = shared.blocked_tasks();
            shared.finish(RunOutcome::Deadlock(blocked));
            return;
        }
        ParkDecision::Parked => {}
    }
    *searching = false;
    // P3.
    fence(Ordering::SeqCst);
    if !shared.has_queued_work() && !shared.is_shutdown() {
        // P4.
        shared.parkers[ctx.index].park(&shared.driver);
    }
    // P5.
    shared.idle.transition_from_parked(ctx.index);
    *searching = true;
    // An idle worker fires every shard's due timers, its own first.
    shared.driver.fire_timers_from(ctx.index);
}

/// Polls one task once and handles how the poll ended.
fn run_task(ctx: &Ctx, task: Arc<Task>) {
    let shared = &ctx.shared;
    if !task.state.start_running() {
        return;
    }
    poll_running_then(ctx, task, |task, res, wait, owned| match res {
        Poll::Pending => {
            let requeue = stop_pending(shared, &task, wait);
            if !owned {
                if !requeue {
                    // The waker the task stored owns the reference now
                    // (`task::lend`); the task may already run elsewhere.
                    std::mem::forget(task);
                    return;
                }
                task::restore(&task);
            }
            if !requeue {
                return;
            }
            ctx.trace_wake(task.id);
            if ctx.yield_held.replace(false) {
                // `yield_to_lifo`: behind the LIFO task, on this worker,
                // waking nobody.
                ctx.held.borrow_mut().push_back(task);
            } else {
                // Woken during its own poll (yield_now): back of the queue.
                // An idle worker is woken only when this one has another
                // task to run first; alone, the task runs again here at
                // once, and a wake-up would only move it to another CPU
                // and back (a busy loop on two workers took twice its CPU
                // time so). Go's `Gosched` wakes nobody either.
                // Behind the tasks it woke before it yielded.
                ctx.flush_held();
                let alone = ctx.local.is_empty() && !ctx.lifo_occupied();
                ctx.local.push(task);
                if !alone {
                    shared.notify_parked_local();
                }
            }
        }
        Poll::Ready(end) => {
            task.state.finish();
            shared.task_done(&task);
            match end {
                TaskEnd::Returned if task.id == 1 => shared.finish(RunOutcome::Returned),
                TaskEnd::Returned => {}
                TaskEnd::Panic { msg, loc } => shared.finish(RunOutcome::Panic {
                    task: task.id,
                    msg,
                    loc,
                }),
                TaskEnd::Exit(code) => shared.finish(RunOutcome::Exit(code)),
            }
        }
    });
}

/// After a poll of `task` that returned `Pending`, with the wait word `wait`
/// it recorded: registers the task for the deadlock report while it is
/// still ours (RUNNING: once IDLE, another worker may poll it), publishes
/// its wait, and moves it out of RUNNING. True when it was woken during its
/// own poll (it yielded) and must be queued again. Shared by the worker
/// loop and the controlled executor (`control.rs`).
#[inline(always)]
pub(crate) fn stop_pending(shared: &Shared, task: &Arc<Task>, wait: u64) -> bool {
    if !Registry::is_registered(task) {
        shared.registry.insert(task.clone());
    }
    if wait != 0 {
        task.wait.store(wait, Ordering::Relaxed);
    }
    task.state.stop_running()
}

/// Polls `task`, which the caller moved to RUNNING, once with the task in
/// `ctx.current`; returns the task, the poll's result and the wait word the
/// poll recorded (`set_wait`), or `None` if the task left `current` (it
/// never does). The state is still RUNNING: the caller moves it on. Shared
/// by the worker loop and the controlled executor (`control.rs`).
#[inline(always)]
pub(crate) fn poll_running(ctx: &Ctx, task: Arc<Task>) -> Option<(Arc<Task>, Poll<TaskEnd>, u64)> {
    poll_running_then(ctx, task, |task, res, wait, owned| {
        if !owned {
            task::restore(&task);
        }
        (task, res, wait)
    })
}

/// `poll_running`, handing the task, the poll's result and the wait word
/// to `then` where they are made: the worker loop's hot path, which so
/// never moves a `Poll<TaskEnd>` out of a returned tuple. The poll lends
/// the task's reference to its waker (`task::lend`); the last argument of
/// `then` says whether the `Arc` still owns its count: false when a clone
/// of the waker took it and the task is still pending (then `then` must
/// `task::restore` it or forget the `Arc`). A finished task's is restored
/// here, before its own waker (what keeps it alive meanwhile) is dropped.
#[inline(always)]
pub(crate) fn poll_running_then<R>(
    ctx: &Ctx,
    task: Arc<Task>,
    then: impl FnOnce(Arc<Task>, Poll<TaskEnd>, u64, bool) -> R,
) -> Option<R> {
    let shared = &ctx.shared;
    ctx.budget.set(PREEMPT_BUDGET);
    let t0 = if ctx.trace.is_some() {
        shared.driver.now()
    } else {
        0
    };
    let id = task.id;
    // The task sits in `current` during the poll (set_wait and friends read
    // it); only shared borrows of `current` are taken until it is taken back.
    ctx.wait_published
        .set(task.wait.load(Ordering::Relaxed) != 0);
    *ctx.current.borrow_mut() = Some(task);
    // A finished poll's end, with the future and waker taken out of the
    // body to be dropped outside it (see below). Written only when the
    // poll is ready, so the pending path (every park) moves no
    // `Poll<TaskEnd>` and no body parts around: about 25 instructions a
    // poll (docs/performance.md, "Fourteenth session").
    let mut finished: Option<(TaskEnd, Option<BoxFuture>, Option<Waker>)> = None;
    let mut taken = false;
    {
        let current = ctx.current.borrow();
        let task = current.as_ref()?;
        let poll = |body: &mut Body| {
            let waker = body.waker.get_or_insert_with(|| Task::waker(task));
            let mut cx = Context::from_waker(waker);
            let end = match body.future.as_mut() {
                Some(fut) => {
                    let prev = task::lend(task);
                    let r = catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(&mut cx)));
                    taken = task::reclaim(prev);
                    match r {
                        Ok(Poll::Pending) => return,
                        Ok(Poll::Ready(end)) => end,
                        Err(payload) => TaskEnd::Panic {
                            msg: panic_message(&payload),
                            loc: runtime_loc(),
                        },
                    }
                }
                None => TaskEnd::Returned,
            };
            if taken {
                // The task ended: the worker keeps using its `Arc`, so it
                // counts it again now, while the body's own waker, dropped
                // below, still keeps the task alive (`task::lend`).
                task::restore(task);
                taken = false;
            }
            finished = Some((end, body.future.take(), body.waker.take()));
        };
        // SAFETY: the caller's `start_running` moved the state to RUNNING
        // and it stays so until the caller's `stop_running` or `finish`, so
        // this worker owns the body (`task.rs`). The future cannot reach its own body:
        // its waker only changes the state and queues the task.
        unsafe { task.with_body(poll) };
    }
    let res = match finished {
        None => Poll::Pending,
        Some((end, future, waker)) => {
            // The finished future and waker are dropped outside the body.
            drop((future, waker));
            Poll::Ready(end)
        }
    };
    let task = ctx.current.borrow_mut().take()?;
    let wait = ctx.wait.replace(0);
    ctx.trace_event("run".into(), "run", t0, id);
    Some(then(task, res, wait, !taken))
}

fn panic_message(payload: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "task panicked".to_string()
    }
}

/// The location reported for a Rust panic inside a task (a runtime bug, not
/// a Weft `panic`, which arrives as `TaskEnd::Panic`).
fn runtime_loc() -> SrcLoc {
    SrcLoc::new("<runtime>", 0, 0)
}
