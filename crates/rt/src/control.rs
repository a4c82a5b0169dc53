//! The controlled executor of `weft test` (docs/testing-programs.md): the
//! calling thread runs every task of a run, and one [`Chooser`]
//! (`choice.rs`) makes every decision, so a run is a function of its
//! decisions and can be replayed from them.
//!
//! A task meets the executor at *scheduling points*: before each operation
//! on shared state it announces the operation (`sched_point`, which yields),
//! and it also stops when it blocks, yields (`yield_now`, a preemption
//! point of a busy task), or ends. At each stop the executor asks the
//! chooser which runnable task takes the next *step* (one poll: the
//! announced operation, then the task's own computing up to its next
//! point). Data choices (`choose`, `choose_word`, `prefer_case`) go to the
//! same chooser during a step.
//!
//! Time is virtual: the clock stands still while any task can run. When
//! none can (*quiescence*), the executor first ends the waits that end at
//! quiescence (`delay_until`), then moves the clock to the earliest timer
//! and fires the timers due then; when nothing is left, the run is over.
//! Every step is recorded (`StepRec`): the operation, which tasks it woke
//! and started, the data choices, whether it preempted a task.
//!
//! The end of a run (`ControlEnd`): a panic or `exit` ends it at once;
//! otherwise the tasks run on after task 1 returned, until quiescence.
//! Then task 1 still blocked is a deadlock, and any other task still there
//! is leaked. A run that takes `ControlConfig::max_steps` steps ends with
//! every task still there leaked (runnable ones as running).
//!
//! Invariants:
//! - Only this thread polls, and it polls one task at a time; every task
//!   future is dropped before `run_controlled` returns (as in `Runtime::run`).
//! - A runnable task is in `Exec::ready` exactly once, with the step it
//!   takes when chosen; every wake lands in the worker's queues and is moved
//!   there right after the step that caused it.
//! - The executor makes no decision itself except at quiescence, where
//!   the order is fixed (releases, then timers by deadline and insertion).

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};

use crossbeam_deque::{Steal, Worker};

use super::api::{BlockedTask, Config, SrcLoc, TaskEnd, WaitKind};
use super::choice::{
    Chooser, ControlState, Delayed, Objects, Op, OpKind, PickKind, Ready, SchedPoint, StepRec,
    DELAY_MET, DELAY_QUIESCENT, DELAY_WAITING,
};
use super::context::{install, with_ctx, yield_now, Ctx};
use super::shared::{Shared, Task};
use super::task::BoxFuture;
use super::trace::Tracer;
use super::wait::{SiteResolver, Sites};
use super::worker::{poll_running, stop_pending};
use crate::loom::{fence, AtomicU8, Ordering};
use crate::netpoll::{Driver, NO_DEADLINE};

/// Every blocked task of the run, as leaks (in task order).
fn blocked_leaks(shared: &Shared) -> Vec<Leak> {
    shared
        .blocked_tasks()
        .into_iter()
        .map(|b| Leak {
            task: b.task,
            kind: Some(b.kind),
            loc: b.loc,
        })
        .collect()
}

/// Limits of one controlled run.
#[derive(Clone, Debug)]
pub struct ControlConfig {
    /// The most steps (polls) a run may take; past them every task still
    /// there is reported as leaked.
    pub max_steps: u64,
}

impl Default for ControlConfig {
    fn default() -> Self {
        ControlConfig { max_steps: 100_000 }
    }
}

/// A task still there when a controlled run ended (`ControlEnd::Leaked`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leak {
    pub task: u64,
    /// What it waits for; `None`: it was still running (the step budget
    /// ran out).
    pub kind: Option<WaitKind>,
    pub loc: SrcLoc,
}

/// How a controlled run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ControlEnd {
    /// Task 1 returned and every task ended.
    Passed,
    /// A task panicked.
    Panic { task: u64, msg: String, loc: SrcLoc },
    /// A task called `exit(code)`.
    Exit { task: u64, code: i32 },
    /// Task 1 was blocked at quiescence (every blocked task, in order).
    Deadlock(Vec<BlockedTask>),
    /// Task 1 returned, but these tasks never ended (in task order).
    Leaked(Vec<Leak>),
    /// The chooser stopped the run.
    Stopped,
}

/// What a controlled run did.
#[derive(Clone, Debug)]
pub struct ControlRun {
    pub end: ControlEnd,
    /// Every step, in order.
    pub log: Vec<StepRec>,
    /// The tasks still runnable when the run ended, with the step each
    /// would have taken next (objects extended as `SchedPoint::ready`'s).
    pub pending: Vec<Ready>,
    /// Preemptions (`SchedPoint::preempts`) taken.
    pub preemptions: u32,
    /// The virtual time at the end, in milliseconds.
    pub time_ms: f64,
    /// Why the trace could not be written, if it could not.
    pub trace_error: Option<String>,
}

/// Runs `main` as task 1 under `chooser` on this thread (see the module
/// doc). `cfg.workers` is ignored; `cfg.trace` writes the run's timeline
/// on the virtual clock.
pub(crate) fn run_controlled(
    cfg: &Config,
    sites: Option<SiteResolver>,
    main: BoxFuture,
    chooser: Rc<RefCell<dyn Chooser>>,
    limits: &ControlConfig,
) -> ControlRun {
    let failed = |msg: String| ControlRun {
        end: ControlEnd::Panic {
            task: 0,
            msg: format!("runtime: {msg}"),
            loc: SrcLoc::new("<runtime>", 0, 0),
        },
        log: Vec::new(),
        pending: Vec::new(),
        preemptions: 0,
        time_ms: 0.0,
        trace_error: None,
    };
    let driver = match Driver::new_virtual() {
        Ok(d) => d,
        Err(e) => return failed(format!("cannot create the poller: {e}")),
    };
    let local: Worker<Arc<Task>> = Worker::new_fifo();
    let tracer = cfg.trace.clone().map(Tracer::new);
    let shared = Arc::new(Shared::new(
        super::idle::Idle::new(1, None),
        cfg.seed,
        cfg.max_tasks,
        vec![local.stealer()],
        driver,
        tracer,
        Sites::new(sites),
    ));
    let main = match shared.new_task(main) {
        Ok(t) => t,
        Err(e) => return failed(e.to_string()),
    };
    let state = Rc::new(ControlState::new(chooser));
    let mut ctx = Ctx::new(shared.clone(), 0, local);
    ctx.control = Some(state.clone());
    let ctx = Rc::new(ctx);
    let guard = install(ctx.clone());
    let mut ex = Exec {
        ctx: &ctx,
        state: &state,
        tasks: vec![main],
        ready: vec![Ready {
            task: 1,
            op: Op::local(OpKind::Start, 0),
        }],
        last: None,
        last_visible: None,
        max_id: 1,
        blocked_sel: Vec::new(),
        main_done: false,
        log: Vec::new(),
        preemptions: 0,
        steps: 0,
        quiescences: 0,
    };
    let end = ex.run(limits.max_steps);
    let pending: Vec<Ready> = ex
        .ready
        .iter()
        .map(|r| {
            let mut op = r.op.clone();
            op.objs.extend(ex.reach(&r.op));
            Ready { task: r.task, op }
        })
        .collect();
    let Exec {
        tasks,
        log,
        preemptions,
        ..
    } = ex;
    // The end: no wake queues a task from now on (`Schedule for Shared`
    // drops it), and every future is dropped here, on the only thread.
    shared.finish(crate::RunOutcome::Returned);
    for t in tasks {
        // SAFETY: a ready task is SCHEDULED and was taken from this
        // worker's queue; this thread is the only one that polls.
        unsafe { t.abandon() };
    }
    drain_queues(&ctx, |t| {
        // SAFETY: as above.
        unsafe { t.abandon() }
    });
    for t in shared.registry.drain() {
        // SAFETY: no other thread polls tasks of this run.
        unsafe { t.abandon() };
    }
    drain_queues(&ctx, |t| {
        // SAFETY: as above.
        unsafe { t.abandon() }
    });
    shared.driver.clear();
    let time_ms = shared.driver.time() as f64 / 1e6;
    if let (Some(tracer), Some(buf)) = (&shared.tracer, &ctx.trace) {
        tracer.flush(0, std::mem::take(&mut *buf.borrow_mut()));
    }
    drop(guard);
    drop(ctx);
    let trace_error = shared.tracer.as_ref().and_then(|tracer| {
        tracer.write().err().map(|e| {
            let path = cfg
                .trace
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            format!("cannot write trace {path}: {e}")
        })
    });
    ControlRun {
        end,
        log,
        pending,
        preemptions,
        time_ms,
        trace_error,
    }
}

/// Takes every task out of the worker's queues and the injection queue,
/// oldest first.
fn drain_queues(ctx: &Ctx, mut f: impl FnMut(Arc<Task>)) {
    ctx.flush_held();
    while let Some(t) = ctx.local.pop() {
        f(t);
    }
    if let Some(t) = ctx.lifo.take() {
        f(t);
    }
    loop {
        match ctx.shared.injector.steal() {
            Steal::Success(t) => f(t),
            Steal::Empty => break,
            Steal::Retry => continue,
        }
    }
}

/// The executor's state during a run.
struct Exec<'a> {
    ctx: &'a Ctx,
    state: &'a ControlState,
    /// The runnable tasks, in the order they became runnable, and beside
    /// them (same index) what each does when chosen.
    tasks: Vec<Arc<Task>>,
    ready: Vec<Ready>,
    /// The task of the last step.
    last: Option<u64>,
    /// The task whose last step was an operation, while it is ready at
    /// another one (a switch away from it is a preemption).
    last_visible: Option<u64>,
    /// The highest task number seen: a queued task above it is new.
    max_id: u64,
    /// Tasks blocked in a `select` on several objects, with the objects.
    blocked_sel: Vec<(u64, Objects)>,
    main_done: bool,
    log: Vec<StepRec>,
    preemptions: u32,
    steps: u64,
    /// The run's own steps so far (`SchedPoint::quiescences`).
    quiescences: u64,
}

impl Exec<'_> {
    fn run(&mut self, max_steps: u64) -> ControlEnd {
        loop {
            if self.ready.is_empty() {
                match self.quiescent() {
                    Some(end) => return end,
                    None => continue,
                }
            }
            if self.steps >= max_steps {
                return self.out_of_steps();
            }
            let current = self
                .last
                .and_then(|id| self.ready.iter().position(|r| r.task == id));
            let preemptible = self
                .last_visible
                .and_then(|id| self.ready.iter().position(|r| r.task == id));
            let reach: Vec<Objects> = if self.blocked_sel.is_empty() {
                Vec::new()
            } else {
                self.ready.iter().map(|r| self.reach(&r.op)).collect()
            };
            let extended: Vec<Ready>;
            let ready: &[Ready] = if reach.iter().all(|r| r.is_empty()) {
                &self.ready
            } else {
                extended = self
                    .ready
                    .iter()
                    .zip(&reach)
                    .map(|(r, more)| {
                        let mut op = r.op.clone();
                        op.objs.extend(more.iter().copied());
                        Ready { task: r.task, op }
                    })
                    .collect();
                &extended
            };
            let point = SchedPoint {
                ready,
                current,
                preemptible,
                step: self.steps,
                preemptions: self.preemptions,
                quiescences: self.quiescences,
            };
            let chosen = self.state.chooser.borrow_mut().pick_task(&point);
            let Some(i) = chosen.filter(|&i| i < self.ready.len()) else {
                return ControlEnd::Stopped;
            };
            let preempted = point.preempts(i);
            let task = self.tasks.remove(i);
            let Ready { op, .. } = self.ready.remove(i);
            let reach = reach.into_iter().nth(i).unwrap_or_default();
            if preempted {
                self.preemptions += 1;
            }
            if let Some(end) = self.step(task, op, reach, preempted) {
                return end;
            }
        }
    }

    /// Polls `task` once for the step `op`; returns how the run ends if it
    /// does.
    fn step(
        &mut self,
        task: Arc<Task>,
        op: Op,
        reach: Objects,
        preempted: bool,
    ) -> Option<ControlEnd> {
        let shared = &self.ctx.shared;
        self.steps += 1;
        shared.driver.tick();
        *self.state.pending.borrow_mut() = None;
        self.state.picks.borrow_mut().clear();
        self.state.made.borrow_mut().clear();
        let id = task.id;
        let visible = op.kind.is_visible();
        let mut rec = StepRec {
            reach,
            preempted,
            ..StepRec::new(id, op)
        };
        self.last = Some(id);
        if visible || self.last_visible == Some(id) {
            self.last_visible = None;
        }
        let mut end = None;
        let mut again = None;
        if task.state.start_running() {
            if let Some((task, res, wait)) = poll_running(self.ctx, task) {
                match res {
                    Poll::Pending => {
                        if stop_pending(shared, &task, wait) {
                            // It yielded: at a scheduling point, or a
                            // preemption point of a busy task.
                            let next = self
                                .state
                                .pending
                                .borrow_mut()
                                .take()
                                .unwrap_or_else(|| Op::local(OpKind::Yield, 0));
                            again = Some((task, next));
                        } else {
                            rec.blocked = true;
                            if rec.op.kind == OpKind::Select && rec.op.objs.len() > 1 {
                                self.blocked_sel.push((id, rec.op.objs.clone()));
                            }
                        }
                    }
                    Poll::Ready(task_end) => {
                        task.state.finish();
                        shared.task_done(&task);
                        rec.ended = true;
                        match task_end {
                            TaskEnd::Returned => {
                                if id == 1 {
                                    self.main_done = true;
                                }
                            }
                            TaskEnd::Panic { msg, loc } => {
                                end = Some(ControlEnd::Panic { task: id, msg, loc })
                            }
                            TaskEnd::Exit(code) => end = Some(ControlEnd::Exit { task: id, code }),
                        }
                    }
                }
            }
        }
        self.collect(&mut rec);
        self.check_delayed(&mut rec);
        if let Some((task, next)) = again {
            if next.kind.is_visible() && visible {
                self.last_visible = Some(id);
            }
            self.tasks.push(task);
            self.ready.push(Ready { task: id, op: next });
        }
        rec.picks = std::mem::take(&mut *self.state.picks.borrow_mut());
        rec.made = std::mem::take(&mut *self.state.made.borrow_mut());
        self.log.push(rec);
        end
    }

    /// Moves every task queued since the last look into `ready`: tasks
    /// never seen were started by the step (`Start`), the others woken
    /// (`Resume`).
    fn collect(&mut self, rec: &mut StepRec) {
        let mut got = Vec::new();
        drain_queues(self.ctx, |t| got.push(t));
        for t in got {
            let id = t.id;
            let op = if id > self.max_id {
                self.max_id = id;
                rec.spawned.push(id);
                // A new task's place is its `go` statement's.
                let site = if rec.op.kind == OpKind::Go {
                    rec.op.site
                } else {
                    0
                };
                Op::local(OpKind::Start, site)
            } else {
                rec.woke.push(id);
                self.blocked_sel.retain(|(t, _)| *t != id);
                Op::local(OpKind::Resume, 0)
            };
            self.tasks.push(t);
            self.ready.push(Ready { task: id, op });
        }
    }

    /// The objects of the blocked `select`s that `op` may complete, other
    /// than its own (`StepRec::reach`).
    fn reach(&self, op: &Op) -> Objects {
        let mut more = Objects::new();
        if !op.kind.is_visible() {
            return more;
        }
        for (_, objs) in &self.blocked_sel {
            if objs.iter().any(|o| op.objs.contains(o)) {
                for o in objs {
                    if !op.objs.contains(o) && !more.contains(o) {
                        more.push(*o);
                    }
                }
            }
        }
        more
    }

    /// Ends the waits whose condition now holds (after every step).
    fn check_delayed(&mut self, rec: &mut StepRec) {
        let met: Vec<Delayed> = {
            let mut d = self.state.delayed.borrow_mut();
            if d.is_empty() {
                return;
            }
            let mut met = Vec::new();
            let mut i = 0;
            while i < d.len() {
                let gone = d[i].state.load(Ordering::Acquire) != DELAY_WAITING;
                if gone {
                    d.swap_remove(i);
                } else if (d[i].cond)() {
                    met.push(d.remove(i));
                } else {
                    i += 1;
                }
            }
            met
        };
        if met.is_empty() {
            return;
        }
        for m in met {
            m.end(DELAY_MET);
        }
        self.collect(rec);
    }

    /// No task can run: end the waits that end at quiescence, else fire
    /// the next timers, else end the run.
    fn quiescent(&mut self) -> Option<ControlEnd> {
        let shared = self.ctx.shared.clone();
        if shared.holds.load(Ordering::SeqCst) > 0 || shared.driver.io.waiters() > 0 {
            // Something outside the run's tasks (a compute pool thread, a
            // device) will wake a task: wait for it.
            self.wait_outside();
            // Not a step of the run: the woken task's own step follows.
            let mut rec = StepRec::new(0, Op::local(OpKind::Resume, 0));
            self.collect(&mut rec);
            return None;
        }
        let delayed = std::mem::take(&mut *self.state.delayed.borrow_mut());
        if !delayed.is_empty() {
            let mut rec = self.own_step(OpKind::Release);
            for d in delayed {
                d.end(DELAY_QUIESCENT);
            }
            self.collect(&mut rec);
            self.log.push(rec);
            return None;
        }
        if shared.driver.timers.pending() > 0 {
            let next = shared.driver.timers.next_deadline();
            if next != NO_DEADLINE {
                shared.driver.advance_to(next);
            }
            let mut rec = self.own_step(OpKind::Timer);
            let fired = shared.driver.fire_timers();
            self.collect(&mut rec);
            if fired > 0 {
                self.log.push(rec);
            }
            return None;
        }
        self.last_visible = None;
        if !self.main_done {
            return Some(ControlEnd::Deadlock(shared.blocked_tasks()));
        }
        let leaked = blocked_leaks(&shared);
        if leaked.is_empty() && shared.live.load(Ordering::Relaxed) == 0 {
            return Some(ControlEnd::Passed);
        }
        Some(ControlEnd::Leaked(leaked))
    }

    /// A step of the run itself (task 0), for the log.
    fn own_step(&mut self, kind: OpKind) -> StepRec {
        self.last = None;
        self.quiescences += 1;
        StepRec::new(0, Op::local(kind, 0))
    }

    /// Blocks this thread until a task is woken from outside (park steps
    /// P1-P5 of `idle.rs` with one worker and no deadlock check).
    fn wait_outside(&self) {
        let shared = &self.ctx.shared;
        if shared.idle.transition_to_parked(0, false, || false) != super::idle::ParkDecision::Parked
        {
            return;
        }
        fence(Ordering::SeqCst);
        if !shared.has_queued_work() {
            shared.parkers[0].park(&shared.driver);
        }
        shared.idle.transition_from_parked(0);
        shared.idle.transition_from_searching();
    }

    /// The step budget ran out: every task still there is leaked.
    fn out_of_steps(&mut self) -> ControlEnd {
        let shared = &self.ctx.shared;
        let mut leaked = blocked_leaks(shared);
        for r in &self.ready {
            leaked.retain(|l| l.task != r.task);
            leaked.push(Leak {
                task: r.task,
                kind: None,
                loc: shared.sites.site_loc(r.op.site),
            });
        }
        leaked.sort_by_key(|l| l.task);
        ControlEnd::Leaked(leaked)
    }
}

// ---- what a task calls ----

/// A scheduling point: in a controlled run, announces that the current task
/// is about to take the step `op` and lets the executor choose who runs
/// (the task goes on when chosen). Elsewhere it does nothing.
pub async fn sched_point(op: Op) {
    let controlled = with_ctx(|ctx| match &ctx.control {
        Some(c) => {
            *c.pending.borrow_mut() = Some(op);
            true
        }
        None => false,
    })
    .unwrap_or(false);
    if controlled {
        yield_now().await;
    }
}

/// Whether the current task runs under the controlled executor.
pub fn controlled() -> bool {
    with_ctx(|ctx| ctx.control.is_some()).unwrap_or(false)
}

/// A data choice in `0..n` from the controlled run's chooser (recorded
/// with the step); `None` outside a controlled run or when `n == 0`.
pub fn choose(what: PickKind, n: usize) -> Option<usize> {
    if n == 0 {
        return None;
    }
    with_ctx(|ctx| {
        let c = ctx.control.as_ref()?;
        let v = c.chooser.borrow_mut().pick(what, n).min(n - 1);
        c.picks.borrow_mut().push(v as u64);
        Some(v)
    })
    .flatten()
}

/// Notes that the current step made object `obj` (a channel): the
/// equivalence of runs (`explore::signature`) names objects by who made
/// them. Nothing outside a controlled run.
pub fn made(obj: u64) {
    with_ctx(|ctx| {
        if let Some(c) = &ctx.control {
            c.made.borrow_mut().push(obj);
        }
    });
}

/// A random word from the controlled run's chooser (recorded with the
/// step); `None` outside a controlled run.
pub fn choose_word() -> Option<u64> {
    with_ctx(|ctx| {
        let c = ctx.control.as_ref()?;
        let v = c.chooser.borrow_mut().word();
        c.picks.borrow_mut().push(v);
        Some(v)
    })
    .flatten()
}

/// The case a `select` with `n` cases that may fire should wait for first
/// (`Chooser::prefer_case`); `None` outside a controlled run.
pub fn prefer_case(n: usize) -> Option<usize> {
    with_ctx(|ctx| {
        let c = ctx.control.as_ref()?;
        let v = c.chooser.borrow_mut().prefer_case(n)?;
        (v < n).then_some(v)
    })
    .flatten()
}

/// Blocks the current task until `cond` holds (checked after every step)
/// or no task can run; resolves to true in the first case. In a run that
/// is not controlled it resolves to `cond()` at once.
pub fn delay_until(cond: Box<dyn Fn() -> bool + Send>) -> DelayUntil {
    DelayUntil {
        cond: Some(cond),
        state: Arc::new(AtomicU8::new(DELAY_WAITING)),
    }
}

/// The future of [`delay_until`].
pub struct DelayUntil {
    cond: Option<Box<dyn Fn() -> bool + Send>>,
    state: Arc<AtomicU8>,
}

/// `DelayUntil::state` of a wait given up (its future was dropped).
const DELAY_CANCELLED: u8 = 3;

impl Future for DelayUntil {
    type Output = bool;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        if let Some(cond) = self.cond.take() {
            if cond() {
                return Poll::Ready(true);
            }
            let state = self.state.clone();
            let waker = cx.waker().clone();
            let queued = with_ctx(|ctx| match &ctx.control {
                Some(c) => {
                    c.delayed.borrow_mut().push(Delayed { cond, state, waker });
                    true
                }
                None => false,
            })
            .unwrap_or(false);
            if !queued {
                return Poll::Ready(false);
            }
            return Poll::Pending;
        }
        match self.state.load(Ordering::Acquire) {
            DELAY_MET => Poll::Ready(true),
            DELAY_QUIESCENT | DELAY_CANCELLED => Poll::Ready(false),
            _ => Poll::Pending,
        }
    }
}

impl Drop for DelayUntil {
    fn drop(&mut self) {
        let _ = self.state.compare_exchange(
            DELAY_WAITING,
            DELAY_CANCELLED,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
    }
}
