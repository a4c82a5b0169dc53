//! The loop JIT: hot integer loops compiled to machine code with Cranelift
//! (docs/interpreter.md, "The loop JIT").
//!
//! At a loop's back edge the dispatch loop (`exec.rs`) calls [`enter`]
//! every `LIFO_CHECK` units of the preemption budget, with the loop's
//! header: a sample of where the task spends its time. It also calls it
//! at the first back edge of a time slice (the task just parked) when the
//! header is compiled ([`enters_early`]); such an entry runs the region
//! only while entries of that kind pay (`early`). A
//! header sampled [`THRESHOLD`] times is compiled once as a *region*
//! (`region.rs`: the instructions from the header to its last back edge).
//! The supported instructions, integer and bool arithmetic, comparisons,
//! copies, constants, jumps, sends and receives on channels of ints or
//! bools, and selects that only receive on such channels, run compiled
//! over slots whose type (the frame template's zero value) is int, bool or
//! such a channel (`codegen.rs` makes the code); any other instruction is
//! an exit, where the interpreter takes over (a loop whose header is one,
//! or that holds a scheduling point of `weft test`, is not compiled).
//! The region runs compiled from the header on, until it leaves the
//! region or reaches such an instruction, the budget runs out, an
//! instruction would panic or a channel operation would wait.
//!
//! Invariants:
//! - The interpreter is the reference: the compiled code computes exactly
//!   what the instructions compute (wrapping arithmetic, `/` and `%`
//!   truncated toward zero, `MinInt / -1 == MinInt`, shifts as
//!   `ops::int_op`) and writes the same slots. An instruction that would
//!   fail (division or modulo by zero, a negative shift count) is never
//!   run compiled: the region stops *before* it, with every slot written
//!   so far back in the frame, and the interpreter runs it from there, so
//!   the panic's message and place are the interpreter's own.
//! - A channel operation runs compiled only when it completes at once: the
//!   code calls a helper here that does what `step` does first
//!   (`Chan::try_send`, `Chan::try_recv`) and, when that finds it must
//!   wait (or, for a receive, that the channel is closed and drained),
//!   the region stops before the instruction and the interpreter runs it
//!   (and parks, or takes the zero value), exactly as if the JIT were
//!   off. A select does what `step`'s does first (`select_ready_on`, or
//!   `try_select_on` with a default) with the task's random source, so
//!   it draws what the interpreter would; one that finds no case ready
//!   stops with [`Entered::Park`], and the interpreter parks it as its
//!   own select would after the same pass; a case that fired on a closed
//!   channel (or with a value of another type) goes to the interpreter to
//!   complete ([`Entered::Case`]). Sends and receives are no scheduling points of the ordinary
//!   executor; a controlled run's (`weft test`) come as `Point`
//!   instructions, which no region holds. A received value is never lost:
//!   one of another variant than the channel's type says (the type
//!   checker rules it out) is handed back to the interpreter with the
//!   receive ([`Entered::Odd`]).
//! - The budget is spent as the interpreter spends it: one unit per
//!   unconditional backward jump (`Jump` to an earlier or the same
//!   instruction, `LoopK`, `LoopN`), `runtime::release_lifo` every
//!   `LIFO_CHECK` units, a yield with the program counter at the jump's
//!   target when it runs out. So a run yields at the same points with the
//!   JIT on or off, which keeps the controlled executor (`weft test`)
//!   deterministic; a region has no scheduling point of its own.
//! - A region is entered only at its header, from the interpreter, with
//!   every slot it uses holding the variant its type says (checked on
//!   entry: any other value and the interpreter runs it instead); the
//!   slots travel in a plain `[i64]` buffer (bools as 0 and 1; a channel
//!   as the address of its local `Chan`, checked on entry) and go back
//!   into the frame when the region returns (channels, never written by
//!   a region, do not).
//! - Each header is compiled at most once per program (`Program::jit`, so
//!   every run of a program shares the code: `weft test` runs one many
//!   times); one that cannot be compiled is marked and never tried again.
//!   The code lives until the program is dropped.
//! - `WEFT_JIT=0` in the environment turns the JIT off ([`enabled`],
//!   `RunConfig::jit`); a host Cranelift cannot compile for runs
//!   interpreted, silently.

mod codegen;
mod region;

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering::Relaxed};
use std::sync::OnceLock;

use weft_chan::{select_ready_on, try_select_on, Cases, Chan, Outcome, Selected};
use weft_rt as runtime;

use super::code::{Func, FuncId, Program};
use super::frame::put_int;
use super::state::BUDGET;
use super::value::Value;

pub(crate) use region::Kind;

/// Samples of a loop header (one per `LIFO_CHECK` budget units spent at
/// one of its back edges) before it is compiled.
pub(crate) const THRESHOLD: u32 = 4;
/// A header's mark: never to be compiled (unsupported, or no ISA).
const FAILED: u32 = u32::MAX;
/// A header's mark: being compiled by some worker.
const COMPILING: u32 = u32::MAX - 1;
/// A header's mark: compiled (the region is in its `Header::code`).
const COMPILED: u32 = 1 << 31;
/// A header's mark: compiled, and entries at a time slice's first back
/// edge stopped paying (`early`), so that test, made inline, calls nothing.
const COMPILED_LATE: u32 = COMPILED | 1;

/// Whether the JIT is on for runs configured from the environment:
/// unless `WEFT_JIT=0`.
pub fn enabled() -> bool {
    std::env::var_os("WEFT_JIT").is_none_or(|v| v != "0")
}

/// What [`enter`] did.
pub(crate) enum Entered {
    /// Nothing: interpret from the header, as if it had not been called.
    No,
    /// The region ran; go on interpreting at this program counter.
    At(usize),
    /// The region ran out of budget at a back edge; yield with the program
    /// counter here.
    Yield(usize),
    /// The receive at this program counter took this value, of another
    /// variant than its channel's type: the interpreter completes the
    /// receive with it and goes on after it.
    Odd(usize, Value),
    /// The select at this program counter found no case ready: the
    /// interpreter parks it (its lock-free pass has run).
    Park(usize),
    /// The select at this program counter fired this case with this
    /// outcome (`None`: the channel is closed and drained; or a value of
    /// another variant than the channel's type): the interpreter
    /// completes the select with it.
    Case(usize, usize, Option<Value>),
}

/// The JIT's state of one program: per instruction, the mark of a loop
/// header (its sample count) and, beside it, the region compiled there,
/// set once: entering a compiled loop takes no lock and no reference count.
pub(crate) struct Cache {
    headers: Box<[Box<[Header]>]>,
    /// How many regions were compiled.
    count: AtomicUsize,
}

/// What the JIT keeps for one instruction (a loop header if sampled).
struct Header {
    mark: AtomicU32,
    code: OnceLock<codegen::Compiled>,
}

impl Cache {
    fn new(prog: &Program) -> Cache {
        Cache {
            headers: prog
                .funcs
                .iter()
                .map(|f| {
                    f.code
                        .iter()
                        .map(|_| Header {
                            mark: AtomicU32::new(0),
                            code: OnceLock::new(),
                        })
                        .collect()
                })
                .collect(),
            count: AtomicUsize::new(0),
        }
    }

    fn header(&self, cur: FuncId, header: usize) -> Option<&Header> {
        self.headers.get(cur as usize)?.get(header)
    }
}

/// How many regions of `prog` have been compiled.
pub(crate) fn compiled(prog: &Program) -> usize {
    prog.jit.0.get().map_or(0, |c| c.count.load(Relaxed))
}

/// Whether the first back edge of a time slice to `header` of function
/// `cur` is offered to [`enter`]: when the loop is compiled and such
/// entries still pay (`early`). The test `exec.rs` makes inline, so that
/// tasks whose loops are not compiled, or whose entries stopped paying,
/// make no call. (Counting these entries as samples, so that a loop
/// whose task parks every few iterations gets compiled too, made such
/// programs slower: `spsc1` 1.25x, `daisychain` 1.2x, `fanin` 1.1x; an
/// entry that runs an iteration or two costs more than it saves.)
#[inline(always)]
pub(crate) fn enters_early(prog: &Program, cur: FuncId, header: usize) -> bool {
    prog.jit
        .0
        .get()
        .and_then(|c| c.header(cur, header))
        .is_some_and(|h| h.mark.load(Relaxed) == COMPILED)
}

/// Called at a back edge to `header` of function `cur` (whose code is
/// `f`) when the budget just reached a multiple of `LIFO_CHECK` and the
/// task does not yield (`sample`): counts the sample, compiles the loop
/// when it is hot, and runs it compiled when it is; or, not `sample`, at
/// the first back edge of a time slice of a loop that is compiled: runs
/// it if such entries pay (`early`). `fs` is the frame.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn enter(
    prog: &Program,
    cur: FuncId,
    f: &Func,
    header: usize,
    fs: &mut [Value],
    budget: &mut u32,
    rng: &mut fastrand::Rng,
    sample: bool,
) -> Entered {
    let cache = prog.jit.0.get_or_init(|| Cache::new(prog));
    let Some(Header { mark, code }) = cache.header(cur, header) else {
        return Entered::No;
    };
    let m = mark.load(Relaxed);
    let region = if m == FAILED || m == COMPILING {
        return Entered::No;
    } else if m & COMPILED != 0 {
        // Set before the mark (and `get` reads it with Acquire).
        let Some(r) = code.get() else {
            return Entered::No;
        };
        if !sample {
            if m == COMPILED_LATE {
                return Entered::No;
            }
            return early(r, mark, fs, budget, rng);
        }
        r
    } else if !sample {
        return Entered::No;
    } else if m + 1 < THRESHOLD {
        mark.store(m + 1, Relaxed);
        return Entered::No;
    } else {
        // One worker compiles; the others interpret meanwhile.
        if mark
            .compare_exchange(m, COMPILING, Relaxed, Relaxed)
            .is_err()
        {
            return Entered::No;
        }
        let Some(r) = region::plan(f, header).and_then(codegen::compile) else {
            mark.store(FAILED, Relaxed);
            return Entered::No;
        };
        // Only this worker sets it (it won the mark), once.
        let r = code.get_or_init(|| r);
        cache.count.fetch_add(1, Relaxed);
        mark.store(COMPILED, Relaxed);
        r
    };
    run(region, fs, budget, rng)
}

/// An entry at the first back edge of a time slice (the task parked just
/// before): runs the region if such entries have paid for it, and scores
/// this one. A loop whose task parks every iteration or two would leave
/// at once, having cost the entry and a second try of the operation that
/// parks (`pingpong`: +5% instructions when entered every slice), while
/// one over a buffered channel runs tens of iterations compiled instead
/// of interpreting up to the next sample (`workerpool`, `mpmc`: -11%).
fn early(
    r: &codegen::Compiled,
    mark: &AtomicU32,
    fs: &mut [Value],
    budget: &mut u32,
    rng: &mut fastrand::Rng,
) -> Entered {
    let score = r.early.load(Relaxed);
    if score == 0 {
        // No more such entries: the inline test stops offering them.
        mark.store(COMPILED_LATE, Relaxed);
        return Entered::No;
    }
    let before = *budget;
    let out = run(r, fs, budget, rng);
    let paid = !matches!(out, Entered::At(_) | Entered::No) || *budget != before;
    // Written only when it changes: tasks on other workers read it.
    if paid && score < codegen::EARLY_MAX {
        r.early.store(score + 1, Relaxed);
    } else if !paid {
        r.early.store(score - 1, Relaxed);
    }
    out
}

/// Runs a compiled region from its header on the frame `fs`; its selects
/// draw from the task's `rng`, as the interpreter's do.
fn run(
    r: &codegen::Compiled,
    fs: &mut [Value],
    budget: &mut u32,
    rng: &mut fastrand::Rng,
) -> Entered {
    let plan = &r.plan;
    let mut buf = [0i64; region::MAX_SLOTS];
    for (b, &(slot, kind)) in buf.iter_mut().zip(&plan.slots) {
        *b = match (kind, fs.get(slot as usize)) {
            (Kind::Int, Some(Value::Int(v))) => *v,
            (Kind::Bool, Some(Value::Bool(v))) => *v as i64,
            // A local channel; a nil or remote one is the interpreter's.
            (Kind::Chan { .. }, Some(Value::Chan(c))) => match &c.ch {
                Some(ch) => ch as *const Chan<Value> as i64,
                None => return Entered::No,
            },
            _ => return Entered::No,
        };
    }
    let mut b = *budget as i64;
    let mut pc = plan.start;
    let prev = RNG.replace(rng);
    let end = loop {
        // SAFETY: the channel slots' addresses point into `Arc<ChanVal>`s
        // held by the frame's slots, which no region writes, and `fs` is
        // borrowed exclusively for the whole run.
        let st = unsafe { r.call(&mut buf, &mut b, pc) };
        if st.park {
            break Entered::Park(st.pc);
        }
        if let Some(case) = st.handoff {
            break Entered::Case(st.pc, case, ODD_VALUE.take());
        }
        if st.odd {
            match ODD_VALUE.take() {
                Some(v) => break Entered::Odd(st.pc, v),
                // Cannot happen (the helper keeps the value before it
                // answers ODD); the interpreter runs the receive.
                None => break Entered::At(st.pc),
            }
        }
        if !st.spent {
            break Entered::At(st.pc);
        }
        // A back edge left the budget at a multiple of
        // `codegen::LIFO_CHECK`: as
        // `exec::spend` does.
        runtime::release_lifo();
        if b == 0 {
            b = BUDGET as i64;
            break Entered::Yield(st.pc);
        }
        if !plan.entries.contains(&st.pc) {
            break Entered::At(st.pc);
        }
        pc = st.pc;
    };
    RNG.set(prev);
    *budget = b as u32;
    for (&v, &(slot, kind)) in buf.iter().zip(&plan.slots) {
        if let Some(s) = fs.get_mut(slot as usize) {
            match kind {
                Kind::Int => put_int(s, v),
                Kind::Bool => *s = Value::Bool(v != 0),
                Kind::Chan { .. } => {}
            }
        }
    }
    end
}

thread_local! {
    /// The value a receive helper took that was not of its channel's type
    /// (or, for a select's case, what it received when the interpreter
    /// must complete it), until the driver hands it to the interpreter.
    static ODD_VALUE: Cell<Option<Value>> = const { Cell::new(None) };
    /// The running region's task's random source, for its selects; null
    /// outside `run`.
    static RNG: Cell<*mut fastrand::Rng> = const { Cell::new(std::ptr::null_mut()) };
}

/// The channel a helper was given.
///
/// # Safety
///
/// `ch` is a channel slot's value in a region's buffer (`run`): the
/// address of a live `Chan<Value>`.
unsafe fn chan<'a>(ch: i64) -> &'a Chan<Value> {
    // SAFETY: as the caller promises.
    unsafe { &*(ch as *const Chan<Value>) }
}

/// `ch <- v` on a channel of ints, if it completes now: 0, else 1.
extern "C" fn send_int(ch: i64, v: i64) -> i64 {
    // SAFETY: called by region code only, with a channel slot's value.
    let ch = unsafe { chan(ch) };
    ch.try_send(Value::Int(v)).is_err() as i64
}

/// `ch <- v` on a channel of bools (`v` 0 or 1), as `send_int`.
extern "C" fn send_bool(ch: i64, v: i64) -> i64 {
    // SAFETY: as `send_int`.
    let ch = unsafe { chan(ch) };
    ch.try_send(Value::Bool(v != 0)).is_err() as i64
}

/// `<-ch` on a channel of ints, if a value is there: 0 with it at `out`;
/// 1 when the receive must wait or the channel is closed and drained;
/// `ODD` when the value taken is no int (kept in `ODD_VALUE`).
extern "C" fn recv_int(ch: i64, out: i64) -> i64 {
    recv_scalar(ch, out, |v| match v {
        Value::Int(x) => Some(*x),
        _ => None,
    })
}

/// `<-ch` on a channel of bools, as `recv_int` (the bool as 0 or 1).
extern "C" fn recv_bool(ch: i64, out: i64) -> i64 {
    recv_scalar(ch, out, |v| match v {
        Value::Bool(b) => Some(*b as i64),
        _ => None,
    })
}

/// `scalar` reads an int or a bool, which own nothing: such a value is
/// forgotten, not dropped (the drop glue of `Value` is a call that
/// matches every variant, about 12 instructions a value).
#[inline(always)]
fn recv_scalar(ch: i64, out: i64, scalar: impl FnOnce(&Value) -> Option<i64>) -> i64 {
    // SAFETY: as `send_int`.
    let ch = unsafe { chan(ch) };
    match ch.try_recv() {
        Ok(v) => match scalar(&v) {
            Some(x) => {
                std::mem::forget(v);
                // SAFETY: `out` is the address of the region's 8-byte,
                // 8-aligned stack slot for received values.
                unsafe { *(out as *mut i64) = x };
                0
            }
            None => {
                ODD_VALUE.set(Some(v));
                codegen::ODD
            }
        },
        Err(_) => 1,
    }
}

/// The cases of a compiled select: receives on the channels whose
/// addresses a region stored (`codegen.rs`).
struct RegionCases<'a> {
    chans: &'a [i64],
}

impl Cases<Value> for RegionCases<'_> {
    fn count(&self) -> usize {
        self.chans.len()
    }
    fn chan(&self, i: usize) -> Option<&Chan<Value>> {
        // SAFETY: the region stored its channel slots' values (`select_recv`).
        self.chans.get(i).map(|&c| unsafe { chan(c) })
    }
    fn is_send(&self, _: usize) -> bool {
        false
    }
    fn take_value(&self, _: usize) -> Option<Value> {
        None
    }
    fn put_back(&self, _: usize, _: Value) {}
}

/// A select of receives on `n` channels (`spec & 0xff`) whose addresses
/// are at `chans`: the cases in bit `8 + i` of `spec` carry bools, the
/// others ints, and bit 16 says the select has a default. What `step`'s
/// select does first (`select_ready_on`, or `try_select_on` with a
/// default), with the task's random source: a case that received a value
/// of its type writes it at `out` (a bool as 0 or 1) and returns the
/// case's index; `codegen::NONE_READY` when none is ready; the index with
/// `codegen::SEL_HANDOFF` when the interpreter must complete the case (a
/// closed channel, or a value of another type, kept in `ODD_VALUE`).
extern "C" fn select_recv(chans: i64, spec: i64, out: i64) -> i64 {
    let n = (spec & 0xff) as usize;
    // SAFETY: the region passes the address of its stack slot of
    // `MAX_CASES` words, the first `n` of which hold channel slots' values.
    let chans = unsafe { std::slice::from_raw_parts(chans as *const i64, n) };
    let src = RegionCases { chans };
    let rng = RNG.get();
    if rng.is_null() {
        // Cannot happen (`run` sets it); nothing taken, the interpreter
        // runs the select.
        return codegen::NONE_READY;
    }
    // SAFETY: `run` stored the task's `&mut Rng`, borrowed for the whole
    // call, and nothing else uses it meanwhile.
    let rng = unsafe { &mut *rng };
    let fired = if spec & (1 << 16) != 0 {
        try_select_on(&src, rng)
    } else {
        select_ready_on(&src, rng)
    };
    let Some(Selected { index, outcome }) = fired else {
        return codegen::NONE_READY;
    };
    let got = match outcome {
        Outcome::Received(got) => got,
        // No send cases: cannot happen.
        _ => None,
    };
    let scalar = match (&got, spec >> (8 + index) & 1 != 0) {
        (Some(Value::Int(x)), false) => Some(*x),
        (Some(Value::Bool(b)), true) => Some(*b as i64),
        _ => None,
    };
    match scalar {
        Some(x) => {
            // Own nothing: forgotten (see `recv_scalar`).
            std::mem::forget(got);
            // SAFETY: `out` is the region's 8-byte stack slot for values.
            unsafe { *(out as *mut i64) = x };
            index as i64
        }
        None => {
            ODD_VALUE.set(got);
            index as i64 | codegen::SEL_HANDOFF
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(ch: &Chan<Value>) -> i64 {
        ch as *const Chan<Value> as i64
    }

    #[test]
    fn helpers_send_and_receive_scalars_in_order() {
        let ch = Chan::new(2);
        assert_eq!(send_int(addr(&ch), 7), 0);
        assert_eq!(send_int(addr(&ch), -1), 0);
        // Full: not now, and nothing was sent.
        assert_eq!(send_int(addr(&ch), 9), 1);
        let mut out = 0i64;
        let at = &mut out as *mut i64 as i64;
        assert_eq!(recv_int(addr(&ch), at), 0);
        assert_eq!(out, 7);
        assert_eq!(recv_int(addr(&ch), at), 0);
        assert_eq!(out, -1);
        assert_eq!(recv_int(addr(&ch), at), 1);
        let bc = Chan::new(1);
        assert_eq!(send_bool(addr(&bc), 1), 0);
        assert_eq!(recv_bool(addr(&bc), at), 0);
        assert_eq!(out, 1);
        // Closed and drained: not now (the interpreter takes the zero
        // value); a send on it: not now (the interpreter panics).
        ch.close().unwrap();
        assert_eq!(recv_int(addr(&ch), at), 1);
        assert_eq!(send_int(addr(&ch), 1), 1);
    }

    #[test]
    fn a_value_of_another_type_is_kept_not_lost() {
        let ch = Chan::new(1);
        ch.try_send(Value::str("odd")).unwrap();
        let mut out = 0i64;
        let at = &mut out as *mut i64 as i64;
        assert_eq!(recv_int(addr(&ch), at), codegen::ODD);
        match ODD_VALUE.take() {
            Some(Value::Str(s)) => assert_eq!(&*s, b"odd"),
            other => panic!("{other:?}"),
        }
        assert!(ch.try_recv().is_err());
    }
}
