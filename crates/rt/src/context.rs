//! The worker context installed in a thread-local while a worker runs, and
//! the free functions a task calls on "the current runtime": `spawn`,
//! `current_task`, `set_wait`/`clear_wait`, `yield_now`, `preempt_point`,
//! `run_seed`, `trace_span`, `external_wait`, `run_control`. Also the wake routing
//! (`Schedule for Shared`), which needs the thread-local to find the LIFO
//! slot.
//!
//! Invariants:
//! - The context is installed by the worker loop and removed before the
//!   worker's thread leaves `Runtime::run`; outside it every function here is
//!   a harmless no-op (or `SpawnError::NoRuntime`).
//! - The thread-local is a plain pointer to the installed `Ctx`, which the
//!   `InstallGuard` owns; only shared references to the `Ctx` are made, so
//!   a waker called from inside a poll can reach the LIFO slot.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};

use crossbeam_deque::Worker;

use super::api::{BlockedTask, RunOutcome, SpawnError, SrcLoc, TaskEnd, WaitKind};
use super::choice::ControlState;
use super::shared::{Shared, Task};
use super::task::Schedule;
use super::trace::{Event, Kind};
use super::wait::{pack, trace_name, SITE_LIMIT};
use crate::loom::Ordering;

/// Polls a task may run between preemption points before `preempt_point`
/// yields (counted per poll).
pub(crate) const PREEMPT_BUDGET: u32 = 128;

/// How long (ns) a task may sit in the LIFO slot while the poll that woke it
/// goes on before `release_lifo` offers it to other workers. Longer than a
/// hand-off between partners (a ping-pong poll ends well within it), shorter
/// than the steps of a pipeline stage; a thread wake-up costs about 10 µs.
pub(crate) const LIFO_GRACE_NS: u64 = 10_000;

pub(crate) struct Ctx {
    pub shared: Arc<Shared>,
    pub index: usize,
    pub local: Worker<Arc<Task>>,
    pub lifo: Cell<Option<Arc<Task>>>,
    pub lifo_polls: Cell<u32>,
    /// When `release_lifo` first saw the LIFO task (trace clock, ns); `None`
    /// until then. Reset whenever the slot gets a new task (only
    /// `schedule_local` fills it), so a stale note is never read.
    pub lifo_seen: Cell<Option<u64>>,
    /// Tasks pushed out of the LIFO slot by a newer wake-up during a poll:
    /// private to this worker (no other worker can steal them) until the
    /// poll goes on past the grace period (`release_stale_lifo`) or the
    /// local queue has older work (`next_local`). Making them stealable at
    /// once let a spinning worker take a hand-off partner in every round
    /// and split the partners across two CPUs (docs/runtime.md,
    /// "Scheduler").
    pub held: RefCell<std::collections::VecDeque<Arc<Task>>>,
    /// When `release_stale_lifo` first saw `held` non-empty (trace clock,
    /// ns); `None` while empty or not yet seen.
    pub held_seen: Cell<Option<u64>>,
    /// The current poll yields behind the LIFO task (`yield_to_lifo`):
    /// the task is requeued among the held tasks, not in the local queue.
    /// Set only by `yield_to_lifo`, whose wake-up makes the worker requeue
    /// the task after the poll, which clears it.
    pub yield_held: Cell<bool>,
    pub current: RefCell<Option<Arc<Task>>>,
    /// The wait word (`wait.rs`) recorded by `set_wait` during the current
    /// poll (0: none); published into the task when the poll returns Pending.
    pub wait: Cell<u64>,
    /// Whether the current task's `wait` holds a reason published by an
    /// earlier poll (then `clear_wait` must clear it).
    pub wait_published: Cell<bool>,
    pub budget: Cell<u32>,
    pub rng: RefCell<fastrand::Rng>,
    pub tick: Cell<u32>,
    /// Trace buffer; `None` when tracing is off.
    pub trace: Option<RefCell<Vec<Event>>>,
    /// The decision source and per-run state of a controlled run
    /// (`control.rs`); `None` in an ordinary run.
    pub control: Option<Rc<ControlState>>,
}

thread_local! {
    /// The installed context: a plain pointer, null when none. It has no
    /// destructor and no borrow flag, so reading it is one thread-local
    /// load: `with_ctx` runs several times a park (`set_wait_site`,
    /// `clear_wait`, the waker's `schedule`) and at loop back edges
    /// (`release_lifo`), where the `RefCell<Option<Rc<Ctx>>>` it replaced
    /// cost about 60 instructions a call (docs/performance.md, "Fourteenth
    /// session"). The context it points to is owned by the `InstallGuard`
    /// that stored it.
    static CTX: Cell<*const Ctx> = const { Cell::new(std::ptr::null()) };
}

/// Runs `f` with the current worker context, if this thread is a worker.
#[inline]
pub(crate) fn with_ctx<R>(f: impl FnOnce(&Ctx) -> R) -> Option<R> {
    let p = CTX.with(Cell::get);
    if p.is_null() {
        return None;
    }
    // SAFETY: a non-null pointer was stored by `install` from an `Rc<Ctx>`
    // that its `InstallGuard` holds until it restores the previous pointer.
    // Guards live on the stack of the code that runs the worker (strictly
    // nested, restored in reverse order), and `f` is runtime code that
    // never installs or drops a guard, so the context outlives `f`. Only
    // shared references to a `Ctx` are ever made.
    Some(f(unsafe { &*p }))
}

/// Installs `ctx` on this thread; the returned guard restores the previous
/// one (a run started inside a task's thread, e.g. by a test).
pub(crate) fn install(ctx: Rc<Ctx>) -> InstallGuard {
    let prev = CTX.with(|c| c.replace(Rc::as_ptr(&ctx)));
    InstallGuard { mine: ctx, prev }
}

pub(crate) struct InstallGuard {
    /// Keeps the installed context alive while `CTX` points to it.
    mine: Rc<Ctx>,
    prev: *const Ctx,
}

impl Drop for InstallGuard {
    fn drop(&mut self) {
        let prev = self.prev;
        CTX.with(|c| {
            debug_assert!(std::ptr::eq(c.get(), Rc::as_ptr(&self.mine)));
            c.set(prev);
        });
    }
}

/// Wake routing: where a woken task goes. The current worker's LIFO slot
/// when the waker runs inside a task on a worker of the same run; the back
/// of that worker's queue when it runs there outside a task (timers, I/O);
/// the injection queue from any other thread. Here rather than in
/// `shared.rs` because it reads the worker thread-local (`task.rs` calls it
/// statically: `S::schedule`).
impl Schedule for Shared {
    fn schedule(task: Arc<Task>) {
        let mut task = Some(task);
        with_ctx(|ctx| {
            let Some(t) = task.as_ref() else { return };
            if !std::ptr::eq(Arc::as_ptr(&ctx.shared), Weak::as_ptr(&t.scheduler)) {
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
        let Some(shared) = task.scheduler.upgrade() else {
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
}

/// The grace check of `release_stale_lifo` for one note (`lifo_seen` or
/// `held_seen`): true when the note is `LIFO_GRACE_NS` or more old; the
/// first check notes `now`.
fn grace_over(seen: &Cell<Option<u64>>, now: u64) -> bool {
    match seen.get() {
        Some(at) => now.saturating_sub(at) >= LIFO_GRACE_NS,
        None => {
            seen.set(Some(now));
            false
        }
    }
}

impl Ctx {
    pub fn new(shared: Arc<Shared>, index: usize, local: Worker<Arc<Task>>) -> Ctx {
        let rng = fastrand::Rng::with_seed(
            shared.seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        let trace = shared.tracer.as_ref().map(|_| RefCell::new(Vec::new()));
        Ctx {
            shared,
            index,
            local,
            lifo: Cell::new(None),
            lifo_polls: Cell::new(0),
            lifo_seen: Cell::new(None),
            held: RefCell::new(std::collections::VecDeque::new()),
            held_seen: Cell::new(None),
            yield_held: Cell::new(false),
            current: RefCell::new(None),
            wait: Cell::new(0),
            wait_published: Cell::new(false),
            budget: Cell::new(PREEMPT_BUDGET),
            rng: RefCell::new(rng),
            tick: Cell::new(0),
            trace,
            control: None,
        }
    }

    /// Queues a task woken on this worker (see `Schedule for Shared`).
    pub fn schedule_local(&self, task: Arc<Task>) {
        if self.current.borrow().is_some() {
            // Inside a task: the woken task runs next on this worker.
            self.lifo_seen.set(None);
            if let Some(prev) = self.lifo.replace(Some(task)) {
                // The displaced task stays on this worker (`held`), and no
                // idle worker is woken for it: this worker reaches it when
                // the poll in progress ends, and a poll that runs long
                // releases it (`release_stale_lifo`). Waking one here, as
                // a spawn does, made both workers of a 2-CPU machine share
                // every hand-off chain and fight over its channels:
                // `workerpool` and `fanin` burned 3 to 5 times the CPU of
                // one worker (Go's pair of Ps stays near one CPU on both).
                self.held.borrow_mut().push_back(prev);
            }
        } else {
            self.local.push(task);
            self.shared.notify_parked_local();
        }
    }

    /// Whether a task waits in this worker's LIFO slot.
    #[inline]
    pub fn lifo_occupied(&self) -> bool {
        let t = self.lifo.take();
        let occupied = t.is_some();
        self.lifo.set(t);
        occupied
    }

    /// The grace check of the LIFO slot and the held tasks (see
    /// `release_lifo`): reads the clock only when either holds a task.
    /// With one worker it does nothing, so one-worker schedules stay
    /// independent of time.
    pub fn release_stale_lifo(&self) {
        if self.shared.workers == 1 {
            return;
        }
        let held = !self.held.borrow().is_empty();
        let lifo = self.lifo.take();
        if !held && lifo.is_none() {
            return;
        }
        let now = self.shared.driver.now();
        if held && grace_over(&self.held_seen, now) {
            // Stale: make them stealable and wake an idle worker for them.
            self.flush_held();
            self.shared.notify_parked_local();
        }
        if let Some(task) = lifo {
            if grace_over(&self.lifo_seen, now) {
                // Stale: make it stealable and wake an idle worker for it.
                self.offer(task);
            } else {
                self.lifo.set(Some(task));
            }
        }
    }

    /// Moves the held tasks, oldest first, to the back of the local queue.
    #[inline]
    pub fn flush_held(&self) {
        if !self.held.borrow().is_empty() {
            self.flush_held_slow();
        }
    }

    /// `flush_held`'s work, out of line: the worker loop's hot path stays
    /// as small as without held tasks (the whole of it inlined, `fanin`
    /// ran 7% slower with 0.3% more instructions).
    #[cold]
    #[inline(never)]
    fn flush_held_slow(&self) {
        self.held_seen.set(None);
        let mut held = self.held.borrow_mut();
        while let Some(t) = held.pop_front() {
            self.local.push(t);
        }
    }

    /// The next held task, oldest first, if any.
    pub fn pop_held(&self) -> Option<Arc<Task>> {
        let mut held = self.held.borrow_mut();
        let t = held.pop_front();
        if held.is_empty() {
            self.held_seen.set(None);
        }
        t
    }

    /// `hand_off_lifo`: the LIFO task, if any, goes where other workers
    /// steal, at once. With one worker it does nothing.
    pub fn hand_off_lifo(&self) {
        if self.shared.workers == 1 {
            return;
        }
        if let Some(task) = self.lifo.take() {
            self.offer(task);
        }
    }

    /// Moves a task taken from the LIFO slot to the back of the local
    /// queue and wakes an idle worker for it.
    fn offer(&self, task: Arc<Task>) {
        self.lifo_seen.set(None);
        self.local.push(task);
        self.shared.notify_parked_local();
    }

    /// Appends a span to this worker's trace buffer (tracing on only).
    /// Inline, with the work out of line: it runs after every poll, where
    /// a call to find tracing off cost about 20 instructions.
    #[inline(always)]
    pub fn trace_event(
        &self,
        name: std::borrow::Cow<'static, str>,
        cat: &'static str,
        ts: u64,
        task: u64,
    ) {
        if self.trace.is_some() {
            self.trace_event_on(name, cat, ts, task);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_event_on(
        &self,
        name: std::borrow::Cow<'static, str>,
        cat: &'static str,
        ts: u64,
        task: u64,
    ) {
        if let Some(buf) = &self.trace {
            let dur = self.shared.driver.now().saturating_sub(ts);
            buf.borrow_mut().push(Event {
                name,
                cat,
                ts,
                dur,
                task,
                worker: Some(self.index),
                kind: Kind::Span,
            });
        }
    }

    /// Marks on the current task's track that it recorded a wait
    /// (`WaitBegin`) or cleared it (`WaitEnd`); tracing on only. The wait
    /// span is derived from the marks when the trace is written
    /// (`trace.rs`): the poll that ends a wait may run on another worker.
    #[cold]
    fn trace_wait_mark(&self, kind: Kind, name: &'static str) {
        if let Some(buf) = &self.trace {
            let now = self.shared.driver.now();
            let ev = Event::wait(now, self.current_id(), self.index, kind, name);
            buf.borrow_mut().push(ev);
        }
    }

    /// Stores the wait word of the current poll (and marks its start when
    /// tracing).
    #[inline]
    pub fn record_wait(&self, word: u64) {
        if self.trace.is_some() {
            if let Some(name) = trace_name(word) {
                self.trace_wait_mark(Kind::WaitBegin, name);
            }
        }
        self.wait.set(word);
    }

    /// Records that `task` became runnable (tracing on only). Called before
    /// the task is pushed to a queue (see the pairing invariant in `trace.rs`).
    /// Inline, with the work out of line, as `trace_event` (every wake).
    #[inline(always)]
    pub fn trace_wake(&self, task: u64) {
        if self.trace.is_some() {
            self.trace_wake_on(task);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_wake_on(&self, task: u64) {
        if let Some(buf) = &self.trace {
            let ev = Event::wake(
                self.shared.driver.now(),
                task,
                self.current_id(),
                Some(self.index),
            );
            buf.borrow_mut().push(ev);
        }
    }

    fn current_id(&self) -> u64 {
        self.current.borrow().as_ref().map_or(0, |t| t.id)
    }
}

impl Drop for Ctx {
    /// The worker stopped (its loop ended and its trace buffer was flushed):
    /// tells the tracer, whose run ends with the last worker. Tasks still
    /// blocked then get wait spans up to that moment.
    fn drop(&mut self) {
        if let Some(tracer) = &self.shared.tracer {
            tracer.worker_stopped(self.shared.driver.now());
        }
    }
}

/// Starts a task running `f`. Tasks are numbered 2, 3, ... in creation
/// order (main is 1). Fails past `Config.max_tasks` or outside a runtime.
pub fn spawn<F: Future<Output = TaskEnd> + Send + 'static>(f: F) -> Result<u64, SpawnError> {
    spawn_boxed(Box::pin(f))
}

/// `spawn` of a future that is already boxed (the interpreter's tasks):
/// the runtime keeps this box as the task's future instead of boxing it
/// again, which saves an allocation and an indirection on every poll.
pub fn spawn_boxed(
    f: Pin<Box<dyn Future<Output = TaskEnd> + Send + 'static>>,
) -> Result<u64, SpawnError> {
    let mut f = Some(f);
    with_ctx(|ctx| {
        let fut = f.take()?;
        Some(ctx.shared.new_task(fut).map(|task| {
            let id = task.id;
            ctx.trace_wake(id);
            ctx.local.push(task);
            ctx.shared.notify_parked_local();
            id
        }))
    })
    .flatten()
    .unwrap_or(Err(SpawnError::NoRuntime))
}

/// Names the current task's track in the trace (`NAME #N`), e.g.
/// the function a `go` statement started. The last name given wins. Costs a
/// thread-local read and a branch when tracing is off: `name` is converted
/// only when tracing is on.
pub fn set_task_name(name: impl Into<Arc<str>>) {
    with_ctx(|ctx| {
        if let Some(tracer) = &ctx.shared.tracer {
            tracer.name_task(ctx.current_id(), name.into());
        }
    });
}

/// Whether this run writes a trace (false outside a runtime). Lets a
/// caller skip building a trace name (`set_task_name`, `trace_span`).
pub fn tracing() -> bool {
    with_ctx(|ctx| ctx.trace.is_some()).unwrap_or(false)
}

/// The number of the task running on this thread (0 outside a task).
pub fn current_task() -> u64 {
    with_ctx(|ctx| ctx.current_id()).unwrap_or(0)
}

/// Records why the current task is about to block (for deadlock reports and
/// the trace). Call before awaiting a blocking operation. The location is
/// interned once per run (a lock and a lookup): a hot loop should number
/// its sites and use [`set_wait_site`] instead.
pub fn set_wait(kind: WaitKind, loc: SrcLoc) {
    with_ctx(|ctx| {
        let word = ctx.shared.sites.intern(kind, loc);
        ctx.record_wait(word);
    });
}

/// Records a wait like [`set_wait`], at a site the runtime's
/// [`SiteResolver`](super::SiteResolver) turns into a location if a deadlock
/// is reported (see `Runtime::with_wait_sites`). A few plain stores: the
/// word stays in the worker until the poll returns Pending. `site` must be
/// below 2^56.
#[inline]
pub fn set_wait_site(kind: WaitKind, site: u64) {
    with_ctx(|ctx| {
        let word = if site < SITE_LIMIT {
            pack(kind, site, false)
        } else {
            ctx.shared.sites.intern(kind, SrcLoc::new("?", 0, 0))
        };
        ctx.record_wait(word);
    });
}

/// Clears the wait recorded by `set_wait`. Call after the operation completed.
#[inline]
pub fn clear_wait() {
    with_ctx(|ctx| {
        let mut w = ctx.wait.replace(0);
        if ctx.wait_published.get() {
            // The task blocked since `set_wait`: its reason was published.
            ctx.wait_published.set(false);
            if let Some(t) = ctx.current.borrow().as_ref() {
                // Only this worker writes the word while the task runs:
                // a load and a store, no read-modify-write.
                if w == 0 {
                    w = t.wait.load(Ordering::Relaxed);
                }
                t.wait.store(0, Ordering::Relaxed);
            }
        }
        if w != 0 && ctx.trace.is_some() {
            ctx.trace_wait_mark(Kind::WaitEnd, "");
        }
    });
}

/// The run's seed (`Config.seed`); 0 outside a runtime.
pub fn run_seed() -> u64 {
    with_ctx(|ctx| ctx.shared.seed).unwrap_or(0)
}

/// Gives other tasks a turn: the current task goes to the back of its
/// worker's queue.
pub async fn yield_now() {
    YieldNow { yielded: false }.await
}

/// Yields to the task in this worker's LIFO slot ([`lifo_waiting`]): the
/// current task waits among the worker's held tasks, so it runs on this
/// worker after the LIFO task (and after older queued work), and no idle
/// worker is woken for it, as for a task displaced from the LIFO slot
/// (`yield_now` wakes one when the worker has other work, and with two
/// workers the yielder and the task it yielded to ended up fighting over
/// their channels from two CPUs: `fanin` took twice the CPU time).
pub async fn yield_to_lifo() {
    with_ctx(|ctx| ctx.yield_held.set(true));
    YieldNow { yielded: false }.await
}

/// A preemption point: yields once every `PREEMPT_BUDGET` calls within one
/// poll of the task, so that a busy loop does not starve others. The
/// interpreter calls it at loop back edges and calls. Counting calls (not
/// time) keeps one-worker runs deterministic.
pub async fn preempt_point() {
    let exhausted = with_ctx(|ctx| {
        ctx.release_stale_lifo();
        let b = ctx.budget.get().saturating_sub(1);
        ctx.budget.set(b);
        b == 0
    })
    .unwrap_or(false);
    if exhausted {
        yield_now().await;
    }
}

/// Lets other workers run the task waiting in this worker's LIFO slot when
/// the current poll has kept it waiting for more than a grace period (10 µs,
/// measured from the first call that saw it). Then the task moves to the
/// back of the worker's queue, where others can steal it, and one idle
/// worker is woken. Never yields; costs a thread-local read and a branch
/// when the slot is empty, plus a clock read when it is not.
///
/// A task woken by the running task goes to the LIFO slot so that it runs
/// next on the same worker without a thread wake-up (a ping-pong partner).
/// No other worker can take it from there; when the waker goes on computing
/// (a pipeline stage that received its input), this hands the woken task to
/// an idle worker instead (Go's `runnext` becomes stealable after about
/// 3 µs for the same reason). Call it where a long poll makes progress:
/// `preempt_point` and `external_wait` call it; the interpreter's loop back
/// edges and calls should too. With one worker it does nothing.
pub fn release_lifo() {
    with_ctx(|ctx| ctx.release_stale_lifo());
}

/// Whether a task woken by the running task waits in this worker's LIFO
/// slot, to run when the running task stops (at the start of a poll the
/// slot is empty: the worker takes from it first). False outside a
/// worker and in a controlled run. The interpreter asks it before it
/// parks a `select` that found no case ready: the task it woke may make
/// a case ready, and yielding to it costs less than queueing on every
/// channel and leaving all the queues again (docs/runtime.md, "Yielding
/// before a select parks").
#[inline]
pub fn lifo_waiting() -> bool {
    with_ctx(|ctx| ctx.control.is_none() && ctx.lifo_occupied()).unwrap_or(false)
}

/// Hands the task waiting in this worker's LIFO slot to other workers
/// now, without `release_lifo`'s grace period: it goes to the back of the
/// worker's queue and one idle worker is woken (a spinning one finds it
/// within a microsecond or so). For a waker that knows the task it woke
/// will run beside it rather than after it: a collective's last member
/// wakes the others and goes on computing, and they go on too, in
/// parallel (docs/runtime.md, "Hand-off after a collective"). With one
/// worker it does nothing.
pub fn hand_off_lifo() {
    with_ctx(|ctx| ctx.hand_off_lifo());
}

struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// A named span on the current task's trace track, closed when the guard
/// drops. Costs one thread-local read and a branch when tracing is off.
pub fn trace_span(name: impl Into<std::borrow::Cow<'static, str>>) -> TraceSpan {
    trace_span_in("op", name)
}

/// A span like [`trace_span`] in the category `cat` (the trace event's
/// `cat`: `"op"` for [`trace_span`]; the interpreter uses `"copy"` for a
/// copy between devices and `"fallback"` for an op run on the host).
pub fn trace_span_in(
    cat: &'static str,
    name: impl Into<std::borrow::Cow<'static, str>>,
) -> TraceSpan {
    let start = with_ctx(|ctx| ctx.trace.as_ref().map(|_| ctx.shared.driver.now())).flatten();
    TraceSpan {
        start,
        cat,
        name: start.map(|_| name.into()),
    }
}

/// Records a finished span on the current task's track from `start` to
/// `end`, instants taken anywhere (a compute pool thread timing the steps
/// of its kernel). Instants before the run began count as its start.
/// Tracing runs only.
pub fn trace_span_between(
    cat: &'static str,
    name: impl Into<std::borrow::Cow<'static, str>>,
    start: std::time::Instant,
    end: std::time::Instant,
) {
    with_ctx(|ctx| {
        if let Some(buf) = &ctx.trace {
            let ts = ctx.shared.driver.at(start);
            let dur = ctx.shared.driver.at(end).saturating_sub(ts);
            buf.borrow_mut().push(Event {
                name: name.into(),
                cat,
                ts,
                dur,
                task: ctx.current_id(),
                worker: Some(ctx.index),
                kind: Kind::Span,
            });
        }
    });
}

/// Names the device the current task runs on (docs/language.md,
/// "Placement") in the trace: its track's metadata says it, and the
/// tracks are ordered by device, so `weft trace` and Perfetto show each
/// device's tasks together. The last one given wins; tracing runs only.
pub fn set_task_device(device: impl Into<Arc<str>>) {
    with_ctx(|ctx| {
        if let Some(tracer) = &ctx.shared.tracer {
            tracer.place_task(ctx.current_id(), device.into());
        }
    });
}

/// Guard returned by [`trace_span`].
pub struct TraceSpan {
    start: Option<u64>,
    cat: &'static str,
    name: Option<std::borrow::Cow<'static, str>>,
}

impl Drop for TraceSpan {
    fn drop(&mut self) {
        if let (Some(start), Some(name)) = (self.start, self.name.take()) {
            with_ctx(|ctx| ctx.trace_event(name, self.cat, start, ctx.current_id()));
        }
    }
}

/// Declares that something outside the run's tasks (a device thread, a
/// plain OS thread holding a channel) may still wake a task. While the
/// returned guard lives the run is never reported as a deadlock, like a
/// pending timer. Outside a runtime the guard does nothing.
pub fn external_wait() -> ExternalWait {
    let shared = with_ctx(|ctx| {
        // Work outside the runtime may be long (an inline kernel).
        ctx.release_stale_lifo();
        ctx.shared.holds.fetch_add(1, Ordering::SeqCst);
        Arc::downgrade(&ctx.shared)
    });
    ExternalWait { shared }
}

/// Runs `fut`, which a thread outside the run's tasks may finish (a
/// compute pool, a device), as if an [`external_wait`] guard were held
/// while it runs, but takes the guard only when `fut` first returns
/// `Pending`: the run cannot be found deadlocked before that, since the
/// task is still being polled. A future that completes in its first poll
/// (a small kernel run inline, nearly every tensor op of a training step)
/// so touches no counter shared between workers; the guard's two
/// read-modify-writes of the run's shared state, its wake-up check and its
/// reference counts were about 1 µs a tensor op when two tasks on two
/// cores of a 16-core machine ran ops at once (docs/performance.md,
/// "Eighteenth session"). Calls `release_lifo` first, as `external_wait`
/// does.
pub fn external<F: Future + Unpin>(fut: F) -> External<F> {
    release_lifo();
    External { fut, hold: None }
}

/// The future of [`external`].
pub struct External<F> {
    fut: F,
    hold: Option<ExternalWait>,
}

impl<F: Future + Unpin> Future for External<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        match Pin::new(&mut this.fut).poll(cx) {
            Poll::Ready(v) => {
                this.hold = None;
                Poll::Ready(v)
            }
            Poll::Pending => {
                if this.hold.is_none() {
                    this.hold = Some(external_wait());
                }
                Poll::Pending
            }
        }
    }
}

/// Guard returned by [`external_wait`]; `Send`, so it can move to the
/// thread that will do the waking.
pub struct ExternalWait {
    shared: Option<Weak<Shared>>,
}

impl Drop for ExternalWait {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.take().and_then(|w| w.upgrade()) {
            // The last hold gone: let a parked worker re-run the deadlock
            // check (while others remain, no deadlock can be reported).
            if shared.holds.fetch_sub(1, Ordering::SeqCst) == 1 {
                shared.notify_parked_remote();
            }
        }
    }
}

/// A handle on the current run for code outside its tasks (another
/// thread): the blocked tasks, and ending the run. Taken inside a task with
/// [`run_control`]; it does not keep the run alive, and does nothing once
/// the run has returned.
#[derive(Clone)]
pub struct RunControl {
    shared: Weak<Shared>,
}

/// The current run's [`RunControl`]; `None` outside a runtime task.
pub fn run_control() -> Option<RunControl> {
    with_ctx(|ctx| RunControl {
        shared: Arc::downgrade(&ctx.shared),
    })
}

impl RunControl {
    /// Every live task that recorded a wait, in task-number order (what a
    /// deadlock report lists). Empty once the run has returned.
    pub fn blocked_tasks(&self) -> Vec<BlockedTask> {
        self.shared
            .upgrade()
            .map(|s| s.blocked_tasks())
            .unwrap_or_default()
    }

    /// Ends the run with `outcome` (the first end of a run wins), as a
    /// panic, `exit` or deadlock inside it would.
    pub fn end(&self, outcome: RunOutcome) {
        if let Some(s) = self.shared.upgrade() {
            s.finish(outcome);
        }
    }
}
