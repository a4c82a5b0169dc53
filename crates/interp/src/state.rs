//! What a task runs on, shared by the dispatch loop (`exec.rs`) and the
//! async half that awaits (`task.rs`): the run's `Shared` state, a task's
//! `TaskState` and saved caller `Frame`s, `Wait` (why `step` stopped), a
//! `Failure` and how it ends the task, the preemption budget, per-task
//! seeds, and the source locations of instructions and wait sites.
//!
//! Engine bugs (`RuntimeError::Internal`) end the task like a panic (the
//! runtime ends the run on it) and are also recorded in `Shared::internal`,
//! so the run reports them as what they are (`lib.rs`, `report.rs`), never
//! as a program panic.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use weft_chan::loom::{AtomicUsize, Mutex};
use weft_coll::Op;
use weft_rt::memlimit::Ceiling;
use weft_rt::{self as runtime, SrcLoc, TaskEnd, WaitKind};
use weft_tensor::Tensor;

use super::code::{Func, FuncId, Instr, Pc, Program, Slot};
use super::error::{InternalError, RuntimeError};
use super::output::Output;
use super::tensor_ops::Work;
use super::value::{CommVal, Ty, Value};

/// The device tensors of a received value whose values may not be on
/// their device yet: the receiver waits for each before it goes on
/// (docs/tensors.md, "Readiness"; `complete::in_flight` finds them).
/// Boxed (a thin pointer): rare, and a `Wait` and the task's future stay
/// small.
pub(super) type InFlight = Box<Pending>;

/// The tensors of an [`InFlight`].
pub(super) struct Pending(pub(super) Vec<Tensor>);

/// Backward jumps and calls a task runs before it yields.
pub(super) const BUDGET: u32 = 2000;

/// A boxed task future (boxing breaks the type cycle of tasks that spawn
/// tasks).
pub(super) type TaskFuture = Pin<Box<dyn Future<Output = TaskEnd> + Send + 'static>>;

/// Makes the future of a task that runs `func` with the given slots preset
/// (the arguments of a call, or the captured variables of a go block), on
/// the given device.
pub(super) type SpawnFn = fn(Arc<Shared>, FuncId, Vec<(Slot, Value)>, Arc<str>) -> TaskFuture;

/// What every task of a run shares.
pub(super) struct Shared {
    /// Shared by every run of a test (`weft test` runs a program many times).
    pub prog: Arc<Program>,
    pub out: Output,
    /// `args()`: the program's arguments as a `[]string` value.
    pub args: Value,
    pub seed: u64,
    /// The element type of `after`'s channels.
    pub int_ty: Arc<Ty>,
    /// How `go` makes a task's future: `task::task`. Passed in (by
    /// `lib.rs`) so that the dispatch loop does not import the async half
    /// that calls it.
    pub spawn: SpawnFn,
    /// The first engine bug of the run, if any.
    pub internal: Mutex<Option<InternalFailure>>,
    /// The memory ceiling (`--max-memory`), checked before every
    /// allocation the program causes (docs/interpreter.md, "Memory").
    pub mem: Ceiling,
    /// The bytes a new task takes before its stack: its future and the
    /// runtime's record of it (`task::task_bytes`).
    pub task_bytes: usize,
    /// `--strict-placement`: a tensor op with no kernel on its device panics
    /// rather than running on the host (docs/language.md, "Placement").
    pub strict_placement: bool,
    /// Run hot integer loops compiled (`jit/`, `RunConfig::jit`).
    pub jit: bool,
    /// How many tasks `go ... on "auto"` has placed: the next goes to the
    /// GPU after (`weft_tensor::auto_device`).
    pub auto_turn: AtomicUsize,
    /// `world()`: this process's member of the group of all processes,
    /// the same every call (without MPI, the one member of a group of 1).
    /// `None` only if the group could not be made (an engine bug).
    pub world: Option<Arc<CommVal>>,
    /// A controlled run of `weft test` (`control.rs`): the channels made so
    /// far, numbered; `None` in an ordinary run.
    pub test: Option<TestState>,
}

/// What a controlled run (`weft test`) keeps beside the program: the
/// channels made so far, numbered from 1 in creation order (the objects of
/// the controlled executor's operations), with where each was made.
#[derive(Default)]
pub(super) struct TestState {
    pub chans: Mutex<Chans>,
}

/// The channels of a controlled run. Each is kept alive until the run ends,
/// so that its address (`Chan::id`) is never reused for another channel.
#[derive(Default)]
pub(super) struct Chans {
    pub by_id: std::collections::HashMap<usize, u64>,
    pub made: Vec<(weft_chan::Chan<Value>, SrcLoc)>,
}

impl TestState {
    /// The number of channel `c`; a channel not seen yet gets the next one
    /// (made at `loc`).
    pub(super) fn chan_number(&self, c: &weft_chan::Chan<Value>, loc: &SrcLoc) -> u64 {
        let mut t = self.chans.lock();
        if let Some(&n) = t.by_id.get(&c.id()) {
            return n;
        }
        t.made.push((c.clone(), loc.clone()));
        let n = t.made.len() as u64;
        t.by_id.insert(c.id(), n);
        n
    }
}

/// An engine bug, where it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct InternalFailure {
    pub task: u64,
    pub error: InternalError,
    pub loc: SrcLoc,
}

impl Shared {
    /// How a task that failed ends: a program panic at the failure's
    /// location. An engine bug ends it the same way (so the runtime ends
    /// the run) and is recorded for the run's report.
    #[cold]
    #[inline(never)]
    pub(super) fn end_failed(&self, f: Failure) -> TaskEnd {
        let Failure { err, loc } = f;
        if let RuntimeError::Internal(error) = err {
            let msg = format!("internal error: {error}");
            let mut slot = self.internal.lock();
            if slot.is_none() {
                *slot = Some(InternalFailure {
                    task: runtime::current_task(),
                    error: *error,
                    loc: loc.clone(),
                });
            }
            return TaskEnd::Panic { msg, loc };
        }
        TaskEnd::Panic {
            msg: err.to_string(),
            loc,
        }
    }
}

/// A task's failure and where it happened.
pub(super) struct Failure {
    pub err: RuntimeError,
    pub loc: SrcLoc,
}

impl Failure {
    /// A failure of the instruction at `at` of `f`.
    #[cold]
    #[inline(never)]
    pub(super) fn at(f: Option<&Func>, at: usize, err: RuntimeError) -> Failure {
        Failure {
            err,
            loc: loc_of(f, at),
        }
    }
}

/// A caller's saved state.
pub(super) struct Frame {
    pub func: FuncId,
    pub pc: Pc,
    pub base: usize,
    /// The caller's slot that receives the result.
    pub ret: Option<Slot>,
}

/// A task's interpreter state: everything `step` needs between awaits.
pub(super) struct TaskState {
    pub stack: Vec<Value>,
    pub frames: Vec<Frame>,
    pub cur: FuncId,
    pub pc: usize,
    pub base: usize,
    pub budget: u32,
    pub rng: fastrand::Rng,
    /// The device this task runs on (`here()`): `"cpu"` for `main`, its
    /// placement or its parent's for a task started with `go`.
    pub device: Arc<str>,
}

/// Why `step` stopped: the task ended or failed, or it must await
/// something. The instruction index `at` names the op that waits (its
/// location is the wait's location, and it says where results go).
///
/// Kept small (40 bytes, a `Value` and an index): `run_task` holds the `Wait` it matched on in every
/// state of its future (the cost of every blocked task), so the large
/// payloads are boxed or split (`Returned`, `Exit` instead of a `TaskEnd`).
pub(super) enum Wait {
    /// The task returned.
    Returned,
    /// The task called `exit(code)`.
    Exit(i32),
    Fail(Box<Failure>),
    Yield,
    /// A scheduling point before the instruction after `at` (`weft test`).
    Point {
        at: usize,
    },
    Nil {
        at: usize,
    },
    /// A send that must park; `ch` is the slot of the (non-nil) channel,
    /// borrowed from the frame while waiting rather than cloned, and `v`
    /// the slot of the value, copied from the frame when the send queues.
    /// The value is not carried here: `step` writes a `Wait` piece by
    /// piece and `run_task` reads it back at once, in wider loads that
    /// the CPU cannot forward from the pending stores (docs/performance.md,
    /// "Twenty-second session").
    Send {
        ch: Slot,
        v: Slot,
        at: usize,
    },
    /// A receive that must park; `ch` as for `Send`.
    Recv {
        ch: Slot,
        at: usize,
    },
    /// A select without `default`: `run_task` builds it from the frame
    /// (borrowing the channels) and awaits it.
    Select {
        at: usize,
    },
    Sleep {
        dur: Duration,
        at: usize,
    },
    /// A tensor op that must wait (`tensor_ops::run_inline`): a device,
    /// a copy, or a long kernel on the compute pool.
    Tensor {
        work: Work,
        at: usize,
    },
    /// Tensors just received from a channel (at the top of the value or
    /// nested in it), still in flight to their device: the receiver waits
    /// for them (issue 7; docs/tensors.md, "Readiness").
    Ready {
        t: InFlight,
        at: usize,
    },
    /// A send to another process's channel (the channel in slot `ch`).
    FarSend {
        ch: Slot,
        val: Value,
        at: usize,
    },
    /// A receive from another process's channel; `at` says where the
    /// value goes, as for `Recv`.
    FarRecv {
        ch: Slot,
        at: usize,
    },
    /// A close of another process's channel.
    FarClose {
        ch: Slot,
        at: usize,
    },
    /// A collective whose comm and root `step` has checked: `run_task`
    /// waits for the group.
    Collective {
        call: Box<CollWait>,
        at: usize,
    },
}

impl Wait {
    /// Drops the `Wait` (as `drop`), inline: the variants that own
    /// nothing (a send, receive, select or yield: slots and indices) are
    /// forgotten, without a call to the drop glue. That call loaded the
    /// tag `step` had just written with a wider load than the store, which
    /// the CPU cannot forward (docs/performance.md, "Twenty-second
    /// session").
    #[inline(always)]
    pub fn end(self) {
        match self {
            Wait::Send { .. } | Wait::Recv { .. } | Wait::Select { .. } | Wait::Yield => {
                std::mem::forget(self)
            }
            other => drop(other),
        }
    }

    /// The channel slot, value and instruction of a `FarSend`. Taking the
    /// `Wait` whole, rather than moving the value out of it in a `match`,
    /// is what lets `run_task`'s future drop the `Wait` before it awaits
    /// (a local partly moved out, or borrowed, is kept across the await).
    pub fn into_send(self) -> Option<(Slot, Value, usize)> {
        match self {
            Wait::FarSend { ch, val, at } => Some((ch, val, at)),
            _ => None,
        }
    }

    /// The call and instruction of a `Collective` (as `into_send`).
    pub fn into_collective(self) -> Option<(Box<CollWait>, usize)> {
        match self {
            Wait::Collective { call, at } => Some((call, at)),
            _ => None,
        }
    }

    /// The op, operands and instruction of a `Tensor` (as `into_send`).
    pub fn into_tensor(self) -> Option<(Work, usize)> {
        match self {
            Wait::Tensor { work, at } => Some((work, at)),
            _ => None,
        }
    }
}

/// What a member brings to a collective.
pub(super) struct CollWait {
    pub comm: CommVal,
    pub op: Op,
    /// The value's type, as mismatch messages name it.
    pub ty: Cow<'static, str>,
    /// The value (absent for `barrier`).
    pub x: Option<Value>,
}

impl TaskState {
    /// The function the task is running.
    pub(super) fn func<'p>(&self, prog: &'p Program) -> Option<&'p Func> {
        prog.funcs.get(self.cur as usize)
    }

    /// The instruction at `at` of the function the task is running.
    pub(super) fn instr<'p>(&self, prog: &'p Program, at: usize) -> Option<&'p Instr> {
        self.func(prog).and_then(|f| f.code.get(at))
    }

    /// The current frame.
    pub(super) fn frame_mut(&mut self) -> &mut [Value] {
        self.stack.get_mut(self.base..).unwrap_or_default()
    }

    /// A failure of the instruction at `at`.
    #[cold]
    pub(super) fn failure(&self, prog: &Program, at: usize, err: RuntimeError) -> Failure {
        Failure::at(self.func(prog), at, err)
    }

    /// Records the wait of the instruction at `at` for deadlock reports:
    /// as a site number (no allocation, see `site_loc`) when it fits.
    #[inline]
    pub(super) fn record_wait(&self, prog: &Program, kind: WaitKind, at: usize) {
        match site_of(self.cur, at) {
            Some(site) => runtime::set_wait_site(kind, site),
            None => runtime::set_wait(kind, loc_of(self.func(prog), at)),
        }
    }
}

/// splitmix64, to derive per-task seeds from the run seed and the task id.
pub(super) fn mix(seed: u64, task: u64) -> u64 {
    let mut z = seed ^ task.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The source location of instruction `at` of `f` (`?:0:0` without one).
pub(super) fn loc_of(f: Option<&Func>, at: usize) -> SrcLoc {
    f.and_then(|f| f.locs.get(at).or(f.locs.last()))
        .cloned()
        .unwrap_or_else(|| SrcLoc {
            file: Arc::from("?"),
            line: 0,
            col: 0,
        })
}

/// Bits of a site number that hold the instruction index; the function
/// index sits above them (sites are below 2^56, see `runtime::set_wait_site`).
const SITE_PC_BITS: u32 = 28;

/// The site number of instruction `at` of function `func`, if it fits.
#[inline]
pub(super) fn site_of(func: FuncId, at: usize) -> Option<u64> {
    let (func, at) = (u64::from(func), at as u64);
    (at < 1 << SITE_PC_BITS && func < 1 << (56 - SITE_PC_BITS)).then_some(func << SITE_PC_BITS | at)
}

/// The location of a site made by `site_of` (the runtime's resolver).
pub(super) fn site_loc(prog: &Program, site: u64) -> SrcLoc {
    let func = prog.funcs.get((site >> SITE_PC_BITS) as usize);
    loc_of(func, (site & ((1 << SITE_PC_BITS) - 1)) as usize)
}
