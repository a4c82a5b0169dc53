//! The decision stream of a controlled run (`weft test`, docs/testing-programs.md):
//! what the controlled executor (`control.rs`) offers at each decision,
//! the [`Chooser`] that decides, and the record of each step it took.
//!
//! Every choice a controlled run makes goes through one `Chooser`: which
//! runnable task runs next (and so whether the running one is preempted),
//! which ready `select` case fires, what `rand` and `perm` return, and
//! whether a `select` waits for a preferred case. The executor itself
//! decides nothing else: timers fire in deadline order when every task is
//! blocked, so a run is a function of the decisions it was given.
//!
//! Also the per-run state a task reaches through the worker context while
//! it is polled (`ControlState`): the chooser, the operation the task
//! announced at its scheduling point, and the waits that end at quiescence.

use crate::loom::{AtomicU8, Ordering};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::task::Waker;

use smallvec::SmallVec;

/// What a step does, as far as the scheduler needs to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// A channel send.
    Send,
    /// A channel receive.
    Recv,
    /// A `select` (its objects are every channel it names).
    Select,
    /// `close` of a channel.
    Close,
    /// `len` of a channel.
    Len,
    /// A `go` statement.
    Go,
    /// A `print` (object [`STDOUT`]).
    Print,
    /// Arriving at a collective of a group (object [`COLLECTIVES`]).
    Collective,
    /// Reading or writing a file (object [`FILES`]).
    File,
    /// A yield at a preemption point of a busy task (not an operation).
    Yield,
    /// The first step of a new task, up to its first operation.
    Start,
    /// A woken task's steps up to its next operation.
    Resume,
    /// Timers fired while every task was blocked (a step of no task).
    Timer,
    /// Waits that end at quiescence were released (a step of no task).
    Release,
}

impl OpKind {
    /// Whether a step of this kind touches shared state (a channel or the
    /// output). The others only compute on the task's own values.
    pub fn is_visible(self) -> bool {
        !matches!(self, OpKind::Yield | OpKind::Start | OpKind::Resume)
    }

    /// Whether this step is the run's own (timers, releases): it can
    /// happen only when every task is blocked, so it is ordered after every
    /// step before it and before every step after it.
    pub fn is_barrier(self) -> bool {
        matches!(self, OpKind::Timer | OpKind::Release)
    }

    /// The name used in a failing interleaving's listing.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Send => "send",
            OpKind::Recv => "receive",
            OpKind::Select => "select",
            OpKind::Close => "close",
            OpKind::Len => "len",
            OpKind::Go => "go",
            OpKind::Print => "print",
            OpKind::Collective => "collective",
            OpKind::File => "file",
            OpKind::Yield => "yield",
            OpKind::Start => "start",
            OpKind::Resume => "resume",
            OpKind::Timer => "timers fire",
            OpKind::Release => "select waits released",
        }
    }
}

/// The object number of the program's output: prints are ordered
/// among themselves like the operations on one channel.
pub const STDOUT: u64 = 0;

/// The object number of every group's collectives: arrivals at any
/// collective are ordered among themselves (conservative: two groups'
/// collectives would commute).
pub const COLLECTIVES: u64 = u64::MAX;

/// The object number of the file system: reads and writes of files are
/// ordered among themselves, whichever the path.
pub const FILES: u64 = u64::MAX - 1;

/// The objects (channels, the output) an operation touches: numbers the
/// embedder gives, equal in every run that made the same decisions
/// (the interpreter numbers channels in creation order, from 1).
pub type Objects = SmallVec<[u64; 2]>;

/// A step a task is about to take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Op {
    pub kind: OpKind,
    /// Where: a site of the embedder's `SiteResolver` (0 when none).
    pub site: u64,
    /// What it touches; two steps that share an object do not commute.
    pub objs: Objects,
}

impl Op {
    /// An operation of `kind` at `site` on `objs`.
    pub fn new(kind: OpKind, site: u64, objs: Objects) -> Op {
        Op { kind, site, objs }
    }

    /// A step that touches nothing (`Start`, `Resume`, `Yield`, `Go`).
    pub fn local(kind: OpKind, site: u64) -> Op {
        Op {
            kind,
            site,
            objs: Objects::new(),
        }
    }

    /// Whether this step and `other` may not be swapped: they share an
    /// object, or either is a barrier.
    pub fn conflicts(&self, other: &Op) -> bool {
        self.kind.is_barrier()
            || other.kind.is_barrier()
            || self.objs.iter().any(|o| other.objs.contains(o))
    }
}

/// A runnable task and the step it takes if chosen.
#[derive(Clone, Debug)]
pub struct Ready {
    pub task: u64,
    pub op: Op,
}

/// A scheduling decision: which of `ready` runs next.
#[derive(Debug)]
pub struct SchedPoint<'a> {
    /// The runnable tasks, in the order they became runnable. An
    /// operation's objects include those of the blocked `select`s it may
    /// complete (`StepRec::reach`).
    pub ready: &'a [Ready],
    /// The index in `ready` of the task that took the last step, if it can
    /// go on: choosing it is "no switch".
    pub current: Option<usize>,
    /// The index in `ready` of the task whose last step was an operation
    /// (`OpKind::is_visible`), if it is ready at another operation:
    /// choosing a visible step of another task preempts it.
    pub preemptible: Option<usize>,
    /// Steps taken so far in this run.
    pub step: u64,
    /// Preemptions so far in this run.
    pub preemptions: u32,
    /// Times so far that no task could run and the run itself stepped
    /// (timers fired, waits released): every step before such a time is
    /// ordered before every step after it.
    pub quiescences: u64,
}

impl SchedPoint<'_> {
    /// The choice that keeps the engine's ordinary order: the current task
    /// goes on, unless it yielded at a preemption point (then, as `weft
    /// run` puts it at the back of the queue, the task runnable longest
    /// runs); otherwise the task that has been runnable longest.
    pub fn default_choice(&self) -> usize {
        match self.current {
            Some(c)
                if self
                    .ready
                    .get(c)
                    .is_some_and(|r| r.op.kind == OpKind::Yield) =>
            {
                (0..self.ready.len()).find(|&i| i != c).unwrap_or(c)
            }
            Some(c) => c,
            None => 0,
        }
    }

    /// Whether choosing `i` preempts a task (CHESS's count: a switch away
    /// from a task that could go on at an operation).
    pub fn preempts(&self, i: usize) -> bool {
        match self.preemptible {
            Some(p) => p != i && self.ready.get(i).is_some_and(|r| r.op.kind.is_visible()),
            None => false,
        }
    }
}

/// A choice among values rather than tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PickKind {
    /// Which of the `n` ready cases of a `select` fires.
    Case,
    /// `rand(n)`.
    Rand,
}

/// The source of every decision of a controlled run.
pub trait Chooser {
    /// Which ready task runs next (an index into `p.ready`), or `None` to
    /// stop the run here (the run ends as `ControlEnd::Stopped`).
    fn pick_task(&mut self, p: &SchedPoint<'_>) -> Option<usize>;
    /// A value in `0..n` (`n >= 1`).
    fn pick(&mut self, what: PickKind, n: usize) -> usize;
    /// A random word (`perm` shuffles with it).
    fn word(&mut self) -> u64;
    /// For a `select` with `n` cases that may fire: a case to wait for
    /// before any other (GFuzz's order enforcement), or `None`. The wait
    /// ends when that case can fire or when every task is blocked.
    fn prefer_case(&mut self, n: usize) -> Option<usize> {
        let _ = n;
        None
    }
}

/// One step of a controlled run: a poll of one task (or the run's own
/// step, task 0: timers, releases).
#[derive(Clone, Debug)]
pub struct StepRec {
    pub task: u64,
    /// The step the task took (announced at its scheduling point).
    pub op: Op,
    /// The other objects the step may change: the channels of the blocked
    /// `select`s that wait on one of `op.objs` (completing one withdraws it
    /// from all its channels). Offered with the step (`SchedPoint::ready`).
    pub reach: Objects,
    /// Tasks this step woke (they were blocked).
    pub woke: SmallVec<[u64; 2]>,
    /// Tasks this step started.
    pub spawned: SmallVec<[u64; 1]>,
    /// Data choices made during the step (`Chooser::pick` and `word`).
    pub picks: SmallVec<[u64; 1]>,
    /// Objects made during the step, in order (`control::made`).
    pub made: Objects,
    /// The step preempted another task.
    pub preempted: bool,
    /// The task blocked at the end of the step.
    pub blocked: bool,
    /// The task ended in this step.
    pub ended: bool,
}

/// How a wait that ends at quiescence ended (`DelayFut`).
pub(crate) const DELAY_WAITING: u8 = 0;
pub(crate) const DELAY_MET: u8 = 1;
pub(crate) const DELAY_QUIESCENT: u8 = 2;

/// A task waiting until a condition holds or every task is blocked.
pub(crate) struct Delayed {
    pub cond: Box<dyn Fn() -> bool + Send>,
    pub state: Arc<AtomicU8>,
    pub waker: Waker,
}

impl Delayed {
    /// Ends the wait with `how` (once) and wakes the task.
    pub fn end(self, how: u8) {
        if self
            .state
            .compare_exchange(DELAY_WAITING, how, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.waker.wake();
        }
    }
}

/// What a controlled run keeps in the worker context for its tasks.
pub(crate) struct ControlState {
    pub chooser: Rc<RefCell<dyn Chooser>>,
    /// The operation the polled task announced (`sched_point`).
    pub pending: RefCell<Option<Op>>,
    /// Data choices made during the current poll.
    pub picks: RefCell<SmallVec<[u64; 1]>>,
    /// Objects made during the current poll.
    pub made: RefCell<Objects>,
    /// Tasks waiting for a condition or quiescence.
    pub delayed: RefCell<Vec<Delayed>>,
}

impl ControlState {
    pub fn new(chooser: Rc<RefCell<dyn Chooser>>) -> ControlState {
        ControlState {
            chooser,
            pending: RefCell::new(None),
            picks: RefCell::new(SmallVec::new()),
            made: RefCell::new(Objects::new()),
            delayed: RefCell::new(Vec::new()),
        }
    }
}

impl<C: Chooser + ?Sized> Chooser for Box<C> {
    fn pick_task(&mut self, p: &SchedPoint<'_>) -> Option<usize> {
        (**self).pick_task(p)
    }
    fn pick(&mut self, what: PickKind, n: usize) -> usize {
        (**self).pick(what, n)
    }
    fn word(&mut self) -> u64 {
        (**self).word()
    }
    fn prefer_case(&mut self, n: usize) -> Option<usize> {
        (**self).prefer_case(n)
    }
}

impl StepRec {
    /// The record of a step of `task` taking `op`, before it ran: nothing
    /// woken, started, picked or made yet.
    pub fn new(task: u64, op: Op) -> StepRec {
        StepRec {
            task,
            op,
            reach: Objects::new(),
            woke: SmallVec::new(),
            spawned: SmallVec::new(),
            picks: SmallVec::new(),
            made: Objects::new(),
            preempted: false,
            blocked: false,
            ended: false,
        }
    }

    /// Every object the step may touch: `op.objs` and `reach`.
    pub fn footprint(&self) -> impl Iterator<Item = &u64> {
        self.op.objs.iter().chain(self.reach.iter())
    }
}
