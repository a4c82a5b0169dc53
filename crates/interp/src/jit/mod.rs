//! The loop JIT: hot integer loops compiled to machine code with Cranelift
//! (docs/interpreter.md, "The loop JIT").
//!
//! At a loop's back edge the dispatch loop (`exec.rs`) calls [`enter`]
//! every `LIFO_CHECK` units of the preemption budget, with the loop's
//! header: a sample of where the task spends its time. A header sampled
//! [`THRESHOLD`] times is compiled once as a *region* (`region.rs`: the
//! instructions from the header to its last back edge) if every
//! instruction in it is in the supported set, integer and bool arithmetic,
//! comparisons, copies, constants and jumps, over slots whose type (the
//! frame template's zero value) is int or bool (`codegen.rs` makes the
//! code). Then the region runs compiled from the header on, until it
//! leaves the region, the budget runs out or an instruction would panic.
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
//!   slots travel in a plain `[i64]` buffer (bools as 0 and 1) and go back
//!   into the frame when the region returns.
//! - Each header is compiled at most once per program (`Program::jit`, so
//!   every run of a program shares the code: `weft test` runs one many
//!   times); one that cannot be compiled is marked and never tried again.
//!   The code lives until the program is dropped.
//! - `WEFT_JIT=0` in the environment turns the JIT off ([`enabled`],
//!   `RunConfig::jit`); a host Cranelift cannot compile for runs
//!   interpreted, silently.

mod codegen;
mod region;

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

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
/// A header's mark: compiled, region number in the low bits.
const COMPILED: u32 = 1 << 31;

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
}

/// The JIT's state of one program: a mark per instruction (the loop
/// headers' sample counts) and the compiled regions.
struct Cache {
    marks: Box<[Box<[AtomicU32]>]>,
    regions: Mutex<Vec<Arc<codegen::Compiled>>>,
}

impl Cache {
    fn new(prog: &Program) -> Cache {
        Cache {
            marks: prog
                .funcs
                .iter()
                .map(|f| f.code.iter().map(|_| AtomicU32::new(0)).collect())
                .collect(),
            regions: Mutex::new(Vec::new()),
        }
    }
}

/// How many regions of `prog` have been compiled.
pub(crate) fn compiled(prog: &Program) -> usize {
    prog.jit
        .get()
        .and_then(|c| c.downcast_ref::<Cache>())
        .map_or(0, |c| c.regions.lock().map_or(0, |r| r.len()))
}

/// Called at a back edge to `header` of function `cur` (whose code is
/// `f`) when the budget just reached a multiple of `LIFO_CHECK` and the
/// task does not yield: counts the sample, compiles the loop when it is
/// hot, and runs it compiled when it is. `fs` is the frame.
#[inline(never)]
pub(crate) fn enter(
    prog: &Program,
    cur: FuncId,
    f: &Func,
    header: usize,
    fs: &mut [Value],
    budget: &mut u32,
) -> Entered {
    let cache = prog.jit.get_or_init(|| Box::new(Cache::new(prog)));
    let Some(cache) = cache.downcast_ref::<Cache>() else {
        return Entered::No;
    };
    let Some(mark) = cache.marks.get(cur as usize).and_then(|m| m.get(header)) else {
        return Entered::No;
    };
    let m = mark.load(Relaxed);
    let region = if m == FAILED || m == COMPILING {
        return Entered::No;
    } else if m & COMPILED != 0 {
        let regions = cache.regions.lock().unwrap_or_else(|e| e.into_inner());
        match regions.get((m & !COMPILED) as usize) {
            Some(r) => r.clone(),
            None => return Entered::No,
        }
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
        let Some(r) = region::plan(f, header).and_then(|p| codegen::compile(p).map(Arc::new))
        else {
            mark.store(FAILED, Relaxed);
            return Entered::No;
        };
        let mut regions = cache.regions.lock().unwrap_or_else(|e| e.into_inner());
        mark.store(COMPILED | regions.len() as u32, Relaxed);
        regions.push(r.clone());
        r
    };
    run(&region, fs, budget)
}

/// Runs a compiled region from its header on the frame `fs`.
fn run(r: &codegen::Compiled, fs: &mut [Value], budget: &mut u32) -> Entered {
    let plan = &r.plan;
    let mut buf = [0i64; region::MAX_SLOTS];
    for (b, &(slot, kind)) in buf.iter_mut().zip(&plan.slots) {
        *b = match (kind, fs.get(slot as usize)) {
            (Kind::Int, Some(Value::Int(v))) => *v,
            (Kind::Bool, Some(Value::Bool(v))) => *v as i64,
            _ => return Entered::No,
        };
    }
    let mut b = *budget as i64;
    let mut pc = plan.start;
    let end = loop {
        let (spent, at) = r.call(&mut buf, &mut b, pc);
        if !spent {
            break Entered::At(at);
        }
        // A back edge left the budget at a multiple of
        // `codegen::LIFO_CHECK`: as
        // `exec::spend` does.
        runtime::release_lifo();
        if b == 0 {
            b = BUDGET as i64;
            break Entered::Yield(at);
        }
        if !plan.entries.contains(&at) {
            break Entered::At(at);
        }
        pc = at;
    };
    *budget = b as u32;
    for (&v, &(slot, kind)) in buf.iter().zip(&plan.slots) {
        if let Some(s) = fs.get_mut(slot as usize) {
            match kind {
                Kind::Int => put_int(s, v),
                Kind::Bool => *s = Value::Bool(v != 0),
            }
        }
    }
    end
}
