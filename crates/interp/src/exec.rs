//! The executor's dispatch loop, `step`: runs a task's instructions until
//! the task ends, fails or must wait, and says what for (`Wait`); the async
//! half that awaits between steps is `task.rs`, the state both run on
//! `state.rs`.
//!
//! A task owns a value stack (all frames of the task, each a window
//! `stack[base..base + template.len()]`) and a list of saved caller
//! frames; calls push, returns pop, so recursion never recurses in Rust.
//!
//! Blocking protocol (per op): try the non-blocking form first; only if it
//! would block, stop with a `Wait` for `run_task` to park on. A receive or
//! select that completes here goes through `complete.rs`, as one completed
//! after parking does. Preemption: a budget counted down at backward jumps
//! (loop back edges) and calls; at zero the task yields to the back of the
//! run queue. Every failure is a `Wait::Fail` with the failing op's
//! location; nothing here panics on a program's behalf.
//!
//! `step` keeps the frequent arms inline (moves, arithmetic, compares,
//! jumps, calls and returns, list and struct ops, plain send and receive)
//! and calls out-of-line helpers for the rare ones (select with `default`,
//! `go`, tensor ops, `print`, timers, channel creation and closing,
//! `rand`/`perm`, groups and collectives) and for every failure, so the
//! hot loop stays small.
//!
//! Memory: every instruction that allocates for the program asks the run's
//! memory ceiling (`Shared::mem`) first, with the bytes it is about to
//! allocate, and fails with the ceiling's panic if they do not fit; the
//! arms that allocate nothing never ask (docs/interpreter.md, "Memory").

use std::ops::ControlFlow::{self, Break, Continue};
use std::sync::Arc;
use std::time::Duration;

use smallvec::SmallVec;
use weft_chan::loom::Ordering;
use weft_chan::{select_ready_on, try_select_on, Chan, TryRecvError, TrySendError};
use weft_coll::{CollError, Op};
use weft_rt as runtime;
use weft_rt::memlimit::{Ceiling, OutOfMemory};

use super::code::{
    CollInstr, CollOp, Func, FuncId, Instr, IntOp, LibOp, MapUpdate, Pc, Program, SelCase, Slot,
    TensorOp, UpdateOp,
};
use super::complete::{chan_ref, complete_recv, complete_recv_value, complete_select, FrameCases};
use super::error::{InternalError, RuntimeError};
use super::frame::{dup, init_frame, is_scalar, put, put_int, take_or_clone};
use super::jit;
use super::lib_ops;
use super::ops::{self, kind_error};
use super::state::{CollWait, Failure, Frame, Shared, TaskState, Wait, BUDGET};
use super::stream;
use super::tensor_ops::{self, Inline};
use super::value::{
    ChanVal, Closure, CommVal, Key, KeyRef, MapVal, Str, Ty, Value, MAP_ENTRY_BYTES, VALUE_BYTES,
};

/// Every this many budget steps a busy task lets the runtime hand a task
/// kept waiting in this worker's LIFO slot to an idle worker
/// (`runtime::release_lifo`, a no-op when the slot is empty or fresh).
const LIFO_CHECK: u32 = 64;
/// The most values one task's stack may hold (about 100 MB).
const MAX_STACK: usize = 1 << 22;
/// The largest `perm(n)`.
const MAX_PERM: i64 = 1 << 28;
/// The largest group `group(n)` makes (as `perm`'s bound: past it the
/// members alone would not fit in memory).
const MAX_GROUP: i64 = 1 << 28;
/// The smallest capacity for which `make` gives a channel a lock-free
/// ring (`weft_chan::Chan::new`); below it the buffer stays under the
/// channel's lock (`Chan::with_locked_buffer`).
const RING_FROM: usize = 8;
/// The largest channel capacity `make` accepts.
const MAX_CAP: i64 = 1 << 32;
/// The longest timer (about 100 years), so deadlines never overflow.
const MAX_SLEEP_S: f64 = 3.0e9;
/// What the memory ceiling's checks count for a channel (its shared state
/// and ring indices, with their cache-line padding) ...
const CHAN_BYTES: usize = 512;
/// ... and for each value of its buffer (a ring slot: a stamp and a value).
const CHAN_SLOT_BYTES: usize = VALUE_BYTES + 8;
/// ... and for a pending timer (its entry, its place in the heap and the
/// action that sends on `after`'s channel).
pub(super) const TIMER_BYTES: usize = 128;
/// ... and for each member of a new group (its `comm` value, its box and
/// its share of the group's state).
const MEMBER_BYTES: usize = VALUE_BYTES + 128;

/// Runs instructions until the task ends or must await something. A plain
/// function, so the hot loop's state lives in registers, not in the task's
/// future.
pub(super) fn step(sh: &Arc<Shared>, st: &mut TaskState) -> Wait {
    let prog: &Program = &sh.prog;
    let TaskState {
        stack,
        frames,
        cur,
        pc: pc_out,
        base: base_out,
        budget,
        rng,
        device,
    } = st;
    let Some(mut f) = prog.funcs.get(*cur as usize) else {
        return no_function(*cur);
    };
    let mut pc = *pc_out;
    let mut base = *base_out;
    // The current frame and code as local slices, so their pointers and
    // lengths stay in registers (a store through the stack's `Vec` could
    // otherwise alias them and force reloads). Re-derived at calls and
    // returns, the only places that change frame.
    let mut fs: &mut [Value] = stack.get_mut(base..).unwrap_or_default();
    let mut code: &[Instr] = &f.code;
    let wait: Wait = 'run: loop {
        let at = pc;
        let Some(instr) = code.get(at) else {
            break 'run bug(f, at, InternalError::PcOutOfRange);
        };
        pc += 1;
        macro_rules! s {
            ($slot:expr) => {
                fs[$slot as usize]
            };
        }
        macro_rules! tri {
            ($e:expr) => {
                match $e {
                    Ok(v) => v,
                    Err(e) => break 'run fail(f, at, e),
                }
            };
        }
        // A loop's back edge to `top` just spent budget, and the task goes
        // on: every `LIFO_CHECK` units, offer the loop to the JIT, which
        // may run it compiled from `top` (docs/interpreter.md, "The loop
        // JIT").
        macro_rules! hot {
            ($top:expr) => {
                let sample = budget.is_multiple_of(LIFO_CHECK);
                if sh.jit
                    && (sample
                        || (*budget == BUDGET - 1 && jit::enters_early(prog, *cur, $top as usize)))
                {
                    match jit::enter(prog, *cur, f, $top, fs, budget, rng, sample) {
                        jit::Entered::No => {}
                        jit::Entered::At(p) => {
                            pc = p;
                            continue 'run;
                        }
                        jit::Entered::Yield(p) => {
                            pc = p;
                            break 'run Wait::Yield;
                        }
                        jit::Entered::Odd(p, v) => {
                            let Some(Instr::Recv { out, ok, zero, .. }) = code.get(p) else {
                                break 'run bug(f, p, InternalError::LostInstruction("receive"));
                            };
                            pc = p + 1;
                            if let Some(t) = complete_recv(fs, *out, *ok, zero, Some(v)) {
                                break 'run Wait::Ready { t, at: p };
                            }
                            continue 'run;
                        }
                        jit::Entered::Park(p) => {
                            // As `select_now` leaves a select that found
                            // no case ready.
                            pc = p + 1;
                            break 'run Wait::Select { at: p };
                        }
                        jit::Entered::Case(p, index, got) => {
                            let (next, flow) = jit_case(fs, f, p, index, got);
                            pc = next;
                            rare!(flow);
                            continue 'run;
                        }
                    }
                }
            };
        }
        // A rare arm's out-of-line helper: it goes on, or stops the run.
        macro_rules! rare {
            ($e:expr) => {
                if let Break(w) = $e {
                    break 'run w;
                }
            };
        }
        match instr {
            Instr::Const { out, val } => put(&mut s!(*out), dup(val)),
            Instr::Copy { x, out } => {
                let v = dup(&s!(*x));
                put(&mut s!(*out), v);
            }
            Instr::Int { op, x, y, out } => {
                let r = match (&s!(*x), &s!(*y)) {
                    (Value::Int(a), Value::Int(b)) => match op {
                        IntOp::Add => a.wrapping_add(*b),
                        IntOp::Sub => a.wrapping_sub(*b),
                        IntOp::Mul => a.wrapping_mul(*b),
                        _ => tri!(ops::int_op(*op, *a, *b)),
                    },
                    (a, _) => break 'run fail(f, at, kind_error("int op", a)),
                };
                put_int(&mut s!(*out), r);
            }
            Instr::Float { op, x, y, out } => {
                let r = match (&s!(*x), &s!(*y)) {
                    (Value::Float(a), Value::Float(b)) => ops::float_op(*op, *a, *b),
                    (a, _) => break 'run fail(f, at, kind_error("float op", a)),
                };
                put(&mut s!(*out), Value::Float(r));
            }
            Instr::Concat { x, y, out } => {
                let r = match (&s!(*x), &s!(*y)) {
                    (Value::Str(a), Value::Str(b)) => {
                        let n = a.len() + b.len();
                        // The string, then the `Arc` it is copied into.
                        if let Err(e) = sh.mem.check(2 * n) {
                            break 'run out_of_memory(f, at, e);
                        }
                        let mut c = Vec::with_capacity(n);
                        c.extend_from_slice(a);
                        c.extend_from_slice(b);
                        Value::Str(Str::from(c))
                    }
                    (a, _) => break 'run fail(f, at, kind_error("concat", a)),
                };
                s!(*out) = r;
            }
            Instr::Cmp {
                op,
                kind,
                x,
                y,
                out,
            } => {
                let r = match (&s!(*x), &s!(*y)) {
                    (Value::Int(a), Value::Int(b)) => ops::ord(*op, a, b),
                    (a, b) => tri!(ops::compare(*op, *kind, a, b)),
                };
                put(&mut s!(*out), Value::Bool(r));
            }
            Instr::NegInt { x, out } => {
                let r = tri!(ops::as_int(&s!(*x)));
                put(&mut s!(*out), Value::Int(r.wrapping_neg()));
            }
            Instr::NegFloat { x, out } => {
                let r = match &s!(*x) {
                    Value::Float(a) => -*a,
                    a => break 'run fail(f, at, kind_error("neg", a)),
                };
                put(&mut s!(*out), Value::Float(r));
            }
            Instr::Not { x, out } => {
                let r = !s!(*x).truthy();
                put(&mut s!(*out), Value::Bool(r));
            }
            Instr::ToInt { x, out } => s!(*out) = tri!(ops::to_int(&s!(*x))),
            Instr::ToFloat { x, out } => s!(*out) = tri!(ops::to_float(&s!(*x))),
            Instr::ToStr { x, out } => {
                let r = match &s!(*x) {
                    v @ Value::Str(_) => v.clone(),
                    v => tri!(to_str(sh.mem, v)),
                };
                s!(*out) = r;
            }
            Instr::ListNew { elems, out } => {
                if let Err(e) = sh.mem.check(elems.len() * VALUE_BYTES) {
                    break 'run out_of_memory(f, at, e);
                }
                let l: Vec<Value> = elems.iter().map(|e| s!(*e).clone()).collect();
                s!(*out) = Value::list(l);
            }
            Instr::Index {
                x,
                i,
                out,
                byte_str,
            } => {
                s!(*out) = tri!(ops::index(&s!(*x), &s!(*i), *byte_str));
            }
            Instr::SetIndex { x, i, v, out } => {
                let val = s!(*v).clone();
                let idx = s!(*i).clone();
                let mut l = take_or_clone(fs, *x, *out);
                tri!(ops::set_index(&mut l, &idx, val, sh.mem));
                s!(*out) = l;
            }
            Instr::Slice { x, lo, hi, out } => {
                let lo = lo.map(|s| &fs[s as usize]);
                let hi = hi.map(|s| &fs[s as usize]);
                let r = tri!(ops::slice(&s!(*x), lo, hi, sh.mem));
                s!(*out) = r;
            }
            Instr::Append { x, elems, out } => {
                // On the stack: `append` mostly takes one value or a few.
                let vals: SmallVec<[Value; 4]> = elems.iter().map(|e| s!(*e).clone()).collect();
                let mut l = take_or_clone(fs, *x, *out);
                tri!(ops::append(&mut l, vals.into_iter(), sh.mem));
                s!(*out) = l;
            }
            Instr::Len { x, out } => s!(*out) = Value::Int(tri!(ops::len(&s!(*x)))),
            Instr::Cap { x, out } => s!(*out) = Value::Int(tri!(ops::cap(&s!(*x)))),
            Instr::StructNew { fields, out } => {
                if let Err(e) = sh.mem.check(fields.len() * VALUE_BYTES) {
                    break 'run out_of_memory(f, at, e);
                }
                let v: Vec<Value> = fields.iter().map(|e| s!(*e).clone()).collect();
                s!(*out) = Value::Struct(Arc::new(v));
            }
            Instr::Field { x, idx, out } => s!(*out) = tri!(ops::field(&s!(*x), *idx)),
            Instr::SetField { x, idx, v, out } => {
                let val = s!(*v).clone();
                let mut sv = take_or_clone(fs, *x, *out);
                tri!(ops::set_field(&mut sv, *idx, val));
                s!(*out) = sv;
            }
            Instr::MakeChan { cap, elem, out } => {
                rare!(make_chan(sh.mem, fs, f, at, *cap, elem, *out))
            }
            Instr::Send { ch, v } => match tri!(chan_ref(&s!(*ch))) {
                None => {
                    let val = dup(&s!(*v));
                    break 'run nil_or_far(fs, *ch, Some(val), at);
                }
                // Parks without copying the value here (`Wait::Send`).
                Some(c) if c.send_blocks_now() => break 'run Wait::Send { ch: *ch, v: *v, at },
                Some(c) => match c.try_send(dup(&s!(*v))) {
                    Ok(()) => {}
                    Err(TrySendError::Closed(_)) => {
                        break 'run fail(f, at, RuntimeError::SendOnClosed)
                    }
                    Err(TrySendError::Full(_)) => break 'run Wait::Send { ch: *ch, v: *v, at },
                },
            },
            Instr::Recv { ch, out, ok, zero } => {
                let got = match tri!(chan_ref(&s!(*ch))) {
                    None => break 'run nil_or_far(fs, *ch, None, at),
                    Some(c) => match c.try_recv() {
                        // Straight into the frame: an `Option` made from
                        // the result here re-encoded its tag, and the copy
                        // stalled on the stores `try_recv` had just made
                        // (docs/performance.md, "Twenty-second session").
                        Ok(v) => {
                            if let Some(t) = complete_recv_value(fs, *out, *ok, v) {
                                break 'run Wait::Ready { t, at };
                            }
                            continue 'run;
                        }
                        // Closed and drained: the zero value, unless a
                        // `lines` reader left an error beside the channel;
                        // then, and when empty, `run_task` completes it
                        // (`recv_done` panics with the error).
                        Err(TryRecvError::Closed) if !has_read_err(&s!(*ch)) => None,
                        Err(_) => break 'run Wait::Recv { ch: *ch, at },
                    },
                };
                if let Some(t) = complete_recv(fs, *out, *ok, zero, got) {
                    break 'run Wait::Ready { t, at };
                }
            }
            Instr::Close { ch } => rare!(close(fs, f, at, *ch)),
            Instr::Select { cases, default } => {
                // A ready case fires here; without `default`, a select
                // that finds none leaves for `run_task`, which parks it.
                // The next pc comes back by value: taking `&mut pc` would
                // keep `pc` in memory for the whole loop (7% on `arith`).
                let (next, flow) = select_now(fs, rng, f, at, cases, *default, pc);
                pc = next;
                rare!(flow)
            }
            Instr::After { ms, out } => rare!(after(sh, fs, f, at, *ms, *out)),
            Instr::Sleep { ms } => {
                let ms = tri!(ops::millis(&s!(*ms)));
                if ms == 0.0 {
                    break 'run Wait::Yield;
                }
                break 'run Wait::Sleep {
                    dur: duration(ms),
                    at,
                };
            }
            Instr::Go {
                func,
                captures,
                device: on,
            } => {
                let dev = place(sh, device, fs, *on);
                rare!(go_block(sh, fs, f, at, *func, captures, dev))
            }
            Instr::GoCall {
                func,
                args,
                device: on,
            } => {
                let dev = place(sh, device, fs, *on);
                rare!(go_call(sh, fs, f, at, *func, args, dev))
            }
            Instr::Here { out } => s!(*out) = Value::str(device),
            Instr::Call { func, args, out } => {
                let Some(g) = prog.funcs.get(*func as usize) else {
                    break 'run bug(f, at, InternalError::NoFunction(*func));
                };
                // The callee's frame starts where the caller's ends. Slots
                // above the top are kept between calls (scalars only, see
                // `Ret`), so a call mostly overwrites in place.
                let nb = base + f.template.len();
                let top = nb + g.template.len();
                if top > MAX_STACK {
                    break 'run fail(f, at, RuntimeError::StackOverflow);
                }
                if stack.len() < top {
                    if let Err(e) = grow_stack(sh.mem, stack, top) {
                        break 'run out_of_memory(f, at, e);
                    }
                }
                init_frame(&mut stack[nb..top], g);
                for (p, a) in g.params.iter().zip(args.iter()) {
                    let v = dup(&stack[base + *a as usize]);
                    put(&mut stack[nb + *p as usize], v);
                }
                frames.push(Frame {
                    func: *cur,
                    pc: pc as Pc,
                    base,
                    ret: *out,
                });
                *cur = *func;
                f = g;
                code = &f.code;
                pc = 0;
                base = nb;
                fs = &mut stack[base..];
                if spend(budget) {
                    break 'run Wait::Yield;
                }
            }
            Instr::Ret { .. } | Instr::End => {
                let v = match instr {
                    Instr::Ret { val: Some(s) } => {
                        Some(std::mem::replace(&mut fs[*s as usize], Value::Int(0)))
                    }
                    _ => None,
                };
                // Release what the frame holds (its storage stays for the
                // next call): scalars own nothing and are left as they are.
                let n = f.template.len().min(fs.len());
                let owning = if f.scalar_frame {
                    // Only the junk slot (the last) can own anything.
                    &mut fs[n.saturating_sub(1)..n]
                } else {
                    &mut fs[..n]
                };
                for slot in owning {
                    if !is_scalar(slot) {
                        *slot = Value::Int(0);
                    }
                }
                let Some(fr) = frames.pop() else {
                    break 'run Wait::Returned;
                };
                *cur = fr.func;
                let Some(g) = prog.funcs.get(*cur as usize) else {
                    break 'run no_function(*cur);
                };
                f = g;
                code = &f.code;
                pc = fr.pc as usize;
                base = fr.base;
                fs = &mut stack[base..];
                if let (Some(r), Some(v)) = (fr.ret, v) {
                    put(&mut s!(r), v);
                }
            }
            Instr::Jump { to } => {
                let to = *to as usize;
                pc = to;
                if to <= at {
                    if spend(budget) {
                        break 'run Wait::Yield;
                    }
                    hot!(to);
                }
            }
            Instr::CmpJump { op, kind, x, y, to } => {
                let r = match (&s!(*x), &s!(*y)) {
                    (Value::Int(a), Value::Int(b)) => ops::ord(*op, a, b),
                    (a, b) => tri!(ops::compare(*op, *kind, a, b)),
                };
                if !r {
                    pc = *to as usize;
                }
            }
            Instr::AddK { x, k, out } => {
                let r = match &s!(*x) {
                    Value::Int(a) => a.wrapping_add(*k),
                    a => break 'run fail(f, at, kind_error("int op", a)),
                };
                put_int(&mut s!(*out), r);
            }
            Instr::IntK { op, x, k, out } => {
                let r = match (&s!(*x), op) {
                    // Constant divisors other than 0 and -1 cannot fail
                    // or overflow.
                    (Value::Int(a), IntOp::Mul) => a.wrapping_mul(*k),
                    (Value::Int(a), IntOp::Mod) if *k > 0 => a.wrapping_rem(*k),
                    (Value::Int(a), IntOp::Div) if *k > 0 => a.wrapping_div(*k),
                    (Value::Int(a), _) => tri!(ops::int_op(*op, *a, *k)),
                    (a, _) => break 'run fail(f, at, kind_error("int op", a)),
                };
                put_int(&mut s!(*out), r);
            }
            Instr::AddInt { x, y, out } => {
                let r = match (&s!(*x), &s!(*y)) {
                    (Value::Int(a), Value::Int(b)) => a.wrapping_add(*b),
                    (a, _) => break 'run fail(f, at, kind_error("int op", a)),
                };
                put_int(&mut s!(*out), r);
            }
            Instr::CmpJumpK { op, x, k, to } => {
                let r = match &s!(*x) {
                    Value::Int(a) => ops::ord(*op, a, k),
                    a => break 'run fail(f, at, kind_error("comparison", a)),
                };
                if !r {
                    pc = *to as usize;
                }
            }
            Instr::LoopK {
                x,
                k,
                out,
                op,
                cx,
                bound,
                top,
                exit,
            } => {
                let r = match &s!(*x) {
                    Value::Int(a) => a.wrapping_add(*k),
                    a => break 'run fail(f, at, kind_error("int op", a)),
                };
                put_int(&mut s!(*out), r);
                // The back edge: as `Jump { to: top }` does.
                pc = *top as usize;
                if spend(budget) {
                    break 'run Wait::Yield;
                }
                hot!(pc);
                // The condition: as the `CmpJumpK` at `top` does.
                if let Value::Int(c) = &s!(*cx) {
                    pc = if ops::ord(*op, c, bound) {
                        pc + 1
                    } else {
                        *exit as usize
                    };
                }
            }
            Instr::LoopN {
                x,
                k,
                out,
                op,
                cx,
                cy,
                top,
                exit,
            } => {
                let r = match &s!(*x) {
                    Value::Int(a) => a.wrapping_add(*k),
                    a => break 'run fail(f, at, kind_error("int op", a)),
                };
                put_int(&mut s!(*out), r);
                pc = *top as usize;
                if spend(budget) {
                    break 'run Wait::Yield;
                }
                hot!(pc);
                if let (Value::Int(a), Value::Int(b)) = (&s!(*cx), &s!(*cy)) {
                    pc = if ops::ord(*op, a, b) {
                        pc + 1
                    } else {
                        *exit as usize
                    };
                }
            }
            Instr::JumpIfNot { cond, to } => {
                if !s!(*cond).truthy() {
                    pc = *to as usize;
                }
            }
            Instr::Print { args } => rare!(print(sh, fs, f, at, args)),
            Instr::Panic { msg } => break 'run panic(f, at, &s!(*msg)),
            Instr::Assert { cond, msg } => {
                if !s!(*cond).truthy() {
                    break 'run assert_failed(f, at, &s!(*msg));
                }
            }
            Instr::Exit { code } => break 'run Wait::Exit(tri!(ops::as_int(&s!(*code))) as i32),
            Instr::Now { out } => s!(*out) = Value::Float(runtime::now_ms()),
            Instr::Args { out } => s!(*out) = sh.args.clone(),
            Instr::Rand { n, out } => rare!(rand(fs, rng, f, at, *n, *out)),
            Instr::Perm { n, out } => rare!(perm(sh.mem, fs, rng, f, at, *n, *out)),
            Instr::Tensor {
                op,
                ins,
                out,
                moves,
            } => rare!(tensor(sh, device, fs, f, *op, ins, *out, *moves, at)),
            Instr::Point => break 'run Wait::Point { at },
            Instr::MapUpdate(u) => {
                rare!(map_update(sh.mem, fs, f, at, u));
                // Past the op and the `MapSet` it stands for.
                pc = at + 3;
            }
            Instr::MapNew { .. }
            | Instr::MapGet { .. }
            | Instr::MapSet { .. }
            | Instr::MapDelete { .. }
            | Instr::MapEntry { .. }
            | Instr::Closure { .. } => rare!(map_or_closure(sh.mem, fs, f, at, instr)),
            Instr::GoValue {
                f: fv,
                args,
                device: on,
            } => {
                // A nil function panics first, then a device not present.
                let (func, init) = match closure_args(fs, *fv, args, &prog.funcs) {
                    Ok(v) => v,
                    Err(e) => break 'run fail(f, at, e),
                };
                let dev = match place(sh, device, fs, *on) {
                    Ok(d) => d,
                    Err(e) => break 'run fail(f, at, e),
                };
                if let Err(e) = task_fits(sh, func) {
                    break 'run out_of_memory(f, at, e);
                }
                rare!(spawn(sh, f, at, func, init, dev))
            }
            Instr::CallValue { f: fv, args, out } => {
                // As `Call`, with the callee from a func value whose
                // captured values fill its first parameters.
                let (func, init) = match closure_args(fs, *fv, args, &prog.funcs) {
                    Ok(v) => v,
                    Err(e) => break 'run fail(f, at, e),
                };
                let Some(g) = prog.funcs.get(func as usize) else {
                    break 'run bug(f, at, InternalError::NoFunction(func));
                };
                let nb = base + f.template.len();
                let top = nb + g.template.len();
                if top > MAX_STACK {
                    break 'run fail(f, at, RuntimeError::StackOverflow);
                }
                if stack.len() < top {
                    if let Err(e) = grow_stack(sh.mem, stack, top) {
                        break 'run out_of_memory(f, at, e);
                    }
                }
                init_frame(&mut stack[nb..top], g);
                for (p, v) in init {
                    put(&mut stack[nb + p as usize], v);
                }
                frames.push(Frame {
                    func: *cur,
                    pc: pc as Pc,
                    base,
                    ret: *out,
                });
                *cur = func;
                f = g;
                code = &f.code;
                pc = 0;
                base = nb;
                fs = &mut stack[base..];
                if spend(budget) {
                    break 'run Wait::Yield;
                }
            }
            Instr::Group { n, rings, out } => rare!(group(sh.mem, fs, f, at, *n, *rings, *out)),
            Instr::World { out } => rare!(world(sh, fs, f, at, *out)),
            Instr::CommInfo { comm, size, out } => rare!(comm_info(fs, f, at, *comm, *size, *out)),
            Instr::Collective(c) => rare!(collective(fs, f, at, c)),
            Instr::Lib { op, ins, out } => rare!(lib(sh, fs, f, at, *op, ins, *out)),
            Instr::MakeList { n, zero, out } => {
                let n = tri!(ops::as_int(&s!(*n)));
                s!(*out) = tri!(lib_ops::make_list(sh.mem, n, zero));
            }
            Instr::DecodeRune { x, i, out, width } => {
                let (r, w) = match (&s!(*x), &s!(*i)) {
                    (Value::Str(b), Value::Int(k)) => ops::decode_rune(b, *k as usize),
                    (a, _) => break 'run fail(f, at, kind_error("decode_rune", a)),
                };
                put_int(&mut s!(*out), r as i64);
                put_int(&mut s!(*width), w as i64);
            }
        }
    };
    *pc_out = pc;
    *base_out = base;
    wait
}

/// Spends one unit of the preemption budget at a call or a loop back edge.
/// Every `LIFO_CHECK` units it lets the runtime hand a task kept waiting in
/// this worker's LIFO slot to an idle worker; when the budget runs out it
/// refills it and returns true: the task must yield.
#[inline(always)]
fn spend(budget: &mut u32) -> bool {
    *budget -= 1;
    if budget.is_multiple_of(LIFO_CHECK) {
        runtime::release_lifo();
    }
    if *budget == 0 {
        *budget = BUDGET;
        return true;
    }
    false
}

/// Grows a task's value stack to `top` values for a call, if the new
/// storage fits under the memory ceiling. `resize` at least doubles the
/// storage; the saved caller frames (one 24-byte `Frame` per call, so at
/// most one per value) grow on their own and are counted once allocated.
#[inline(never)]
fn grow_stack(mem: Ceiling, stack: &mut Vec<Value>, top: usize) -> Result<(), OutOfMemory> {
    if top > stack.capacity() {
        mem.check(top.max(2 * stack.capacity()) * VALUE_BYTES)?;
    }
    stack.resize(top, Value::Int(0));
    Ok(())
}

/// A timer duration from milliseconds (clamped, never overflowing).
fn duration(ms: f64) -> Duration {
    Duration::from_secs_f64((ms / 1000.0).clamp(0.0, MAX_SLEEP_S))
}

// ---- failures (out of line: every arm has a failure branch) ----

/// The task fails at instruction `at` of `f`.
#[cold]
#[inline(never)]
fn fail(f: &Func, at: usize, err: RuntimeError) -> Wait {
    Wait::Fail(Box::new(Failure::at(Some(f), at, err)))
}

/// The engine failed at instruction `at` of `f` (a bug in Weft).
#[cold]
#[inline(never)]
fn bug(f: &Func, at: usize, err: InternalError) -> Wait {
    fail(f, at, err.into())
}

/// The task's current function is not in the program (a bug in Weft).
#[cold]
#[inline(never)]
fn no_function(func: FuncId) -> Wait {
    Wait::Fail(Box::new(Failure::at(
        None,
        0,
        InternalError::NoFunction(func).into(),
    )))
}

/// An allocation does not fit under the memory ceiling.
#[cold]
#[inline(never)]
fn out_of_memory(f: &Func, at: usize, e: OutOfMemory) -> Wait {
    fail(f, at, e.into())
}

/// `panic(msg)`.
#[cold]
#[inline(never)]
fn panic(f: &Func, at: usize, msg: &Value) -> Wait {
    fail(f, at, RuntimeError::Panic(msg.to_display().into()))
}

/// `assert(cond, msg)` with a false condition.
#[cold]
#[inline(never)]
fn assert_failed(f: &Func, at: usize, msg: &Value) -> Wait {
    fail(
        f,
        at,
        RuntimeError::AssertionFailed(msg.to_display().into()),
    )
}

// ---- the rare arms of `step`, out of line ----
//
// Each takes the current frame `fs` and the instruction's operands, and
// goes on (`Continue`) or stops the run of `step` with a `Wait`.

/// `make(chan T, cap)`. The whole buffer is charged to the memory ceiling
/// here, as Go allocates it here (the channel grows a buffer above
/// `weft_chan`'s ring size as values arrive, without further checks).
#[inline(never)]
pub(super) fn make_chan(
    mem: Ceiling,
    fs: &mut [Value],
    f: &Func,
    at: usize,
    cap: Option<Slot>,
    elem: &Arc<Ty>,
    out: Slot,
) -> ControlFlow<Wait> {
    let n = match cap {
        Some(c) => match ops::as_int(&fs[c as usize]) {
            Ok(n) => n,
            Err(e) => return Break(fail(f, at, e)),
        },
        None => 0,
    };
    if !(0..=MAX_CAP).contains(&n) {
        return Break(fail(f, at, RuntimeError::MakeChanSize));
    }
    if let Err(e) = mem.check(CHAN_BYTES + n as usize * CHAN_SLOT_BYTES) {
        return Break(out_of_memory(f, at, e));
    }
    // Tasks park at once when they must wait, so a small buffer between
    // them is nearly always full or empty: under the lock it costs less
    // than a ring's freeze and thaw around every wait (measured in
    // `Chan::with_locked_buffer`).
    let ch = if (n as usize) < RING_FROM {
        Chan::with_locked_buffer(n as usize)
    } else {
        Chan::new(n as usize)
    };
    fs[out as usize] = Value::Chan(Arc::new(ChanVal {
        ch: Some(ch),
        elem: elem.clone(),
        far: None,
        read_err: None,
    }));
    Continue(())
}

/// A send (`val`) or receive on a channel that is not here: nil (blocks
/// forever), or another process's (docs/distributed.md).
#[cold]
#[inline(never)]
fn nil_or_far(fs: &[Value], ch: Slot, val: Option<Value>, at: usize) -> Wait {
    match (&fs[ch as usize], val) {
        (Value::Chan(c), Some(val)) if c.far.is_some() => Wait::FarSend { ch, val, at },
        (Value::Chan(c), None) if c.far.is_some() => Wait::FarRecv { ch, at },
        _ => Wait::Nil { at },
    }
}

/// `close(ch)`.
#[inline(never)]
fn close(fs: &[Value], f: &Func, at: usize, ch: Slot) -> ControlFlow<Wait> {
    if let Value::Chan(c) = &fs[ch as usize] {
        if c.ch.is_none() && c.far.is_some() {
            return Break(Wait::FarClose { ch, at });
        }
    }
    match chan_ref(&fs[ch as usize]) {
        Err(e) => Break(fail(f, at, e)),
        Ok(None) => Break(fail(f, at, RuntimeError::CloseOfNil)),
        Ok(Some(c)) => {
            if c.close().is_err() {
                return Break(fail(f, at, RuntimeError::CloseOfClosed));
            }
            Continue(())
        }
    }
}

/// A `select`'s attempt that does not block (it borrows the channels from
/// the frame, no reference counts), then the chosen case's block. With a
/// `default`, the attempt is exact and the default's block runs when no
/// case is ready; without one it is the select's ready path
/// (`select_ready_on`: the lock-free pass one case at a time), and a
/// select that found no case ready stops the run with `Wait::Select`:
/// `run_task` then runs the locked pass and parks (`select_on_locked`).
/// So a ready select costs no exit from `step` and no future.
#[inline(never)]
fn select_now(
    fs: &mut [Value],
    rng: &mut fastrand::Rng,
    f: &Func,
    at: usize,
    cases: &[SelCase],
    default: Option<Pc>,
    pc: usize,
) -> (usize, ControlFlow<Wait>) {
    let chosen = match FrameCases::new(cases, fs) {
        Ok(src) => match default {
            Some(_) => try_select_on(&src, rng),
            None => select_ready_on(&src, rng),
        },
        Err(e) => return (pc, Break(fail(f, at, e))),
    };
    let Some(chosen) = chosen else {
        return match default {
            Some(d) => (d as usize, Continue(())),
            None => (pc, Break(Wait::Select { at })),
        };
    };
    match complete_select(fs, f, at, cases, chosen) {
        Ok((target, pending)) => match pending {
            Some(t) => (target, Break(Wait::Ready { t, at })),
            None => (target, Continue(())),
        },
        Err(e) => (pc, Break(Wait::Fail(Box::new(e)))),
    }
}

/// Completes the select at `at`, whose case `index` a compiled region
/// fired with `got` for the interpreter to finish (`jit::Entered::Case`):
/// as `select_now` completes a case it chose.
#[cold]
#[inline(never)]
fn jit_case(
    fs: &mut [Value],
    f: &Func,
    at: usize,
    index: usize,
    got: Option<Value>,
) -> (usize, ControlFlow<Wait>) {
    let Some(Instr::Select { cases, .. }) = f.code.get(at) else {
        return (
            at + 1,
            Break(bug(f, at, InternalError::LostInstruction("select"))),
        );
    };
    let chosen = weft_chan::Selected {
        index,
        outcome: weft_chan::Outcome::Received(got),
    };
    match complete_select(fs, f, at, cases, chosen) {
        Ok((target, Some(t))) => (target, Break(Wait::Ready { t, at })),
        Ok((target, None)) => (target, Continue(())),
        Err(e) => (at + 1, Break(Wait::Fail(Box::new(e)))),
    }
}

/// `after(ms)`: a channel of capacity 1 that the runtime sends `int(ms)` on
/// when the timer fires (at once for a negative `ms`, as Go's timers do).
#[inline(never)]
pub(super) fn after(
    sh: &Shared,
    fs: &mut [Value],
    f: &Func,
    at: usize,
    ms: Slot,
    out: Slot,
) -> ControlFlow<Wait> {
    let arg = &fs[ms as usize];
    let (ms, delivered) = match (ops::millis(arg), arg) {
        (Err(e), _) => return Break(fail(f, at, e)),
        (Ok(ms), Value::Float(x)) => match ops::float_to_int(*x) {
            Ok(n) => (ms, n),
            Err(e) => return Break(fail(f, at, e)),
        },
        (Ok(ms), Value::Int(n)) => (ms, *n),
        (Ok(_), other) => return Break(fail(f, at, kind_error("milliseconds", other))),
    };
    if let Err(e) = sh.mem.check(TIMER_BYTES + CHAN_BYTES) {
        return Break(out_of_memory(f, at, e));
    }
    let c: Chan<Value> = Chan::new(1);
    let c2 = c.clone();
    runtime::after(duration(ms), move || {
        let _ = c2.try_send(Value::Int(delivered));
    });
    fs[out as usize] = Value::Chan(Arc::new(ChanVal {
        ch: Some(c),
        elem: sh.int_ty.clone(),
        far: None,
        read_err: None,
    }));
    Continue(())
}

/// `go { ... }`: a task running the go block `func`, with the captured
/// slots copied into the first slots of its own frame, in order.
#[inline(never)]
fn go_block(
    sh: &Arc<Shared>,
    fs: &[Value],
    f: &Func,
    at: usize,
    func: FuncId,
    captures: &[Slot],
    device: Result<Arc<str>, RuntimeError>,
) -> ControlFlow<Wait> {
    let device = match device {
        Ok(d) => d,
        Err(e) => return Break(fail(f, at, e)),
    };
    if let Err(e) = task_fits(sh, func) {
        return Break(out_of_memory(f, at, e));
    }
    // Capture i goes to slot i of the block's own frame (`lower.rs`).
    let init = captures
        .iter()
        .enumerate()
        .map(|(i, c)| (i as Slot, fs[*c as usize].clone()))
        .collect();
    spawn(sh, f, at, func, init, device)
}

/// The device a `go` places its task on (docs/language.md, "Placement"):
/// the parent's without `on`; for `on "auto"` the next GPU in turn, or
/// the CPU without one; else the device named, which must be present.
#[inline(never)]
fn place(
    sh: &Shared,
    parent: &Arc<str>,
    fs: &[Value],
    on: Option<Slot>,
) -> Result<Arc<str>, RuntimeError> {
    let Some(slot) = on else {
        return Ok(parent.clone());
    };
    let name = match &fs[slot as usize] {
        Value::Str(s) => String::from_utf8_lossy(s),
        other => return Err(RuntimeError::unexpected("go device", other)),
    };
    if name == "auto" {
        let turn = sh.auto_turn.fetch_add(1, Ordering::Relaxed);
        return Ok(Arc::from(weft_tensor::auto_device(
            &weft_tensor::devices(),
            turn,
        )));
    }
    match weft_tensor::device::lookup(&name) {
        Ok(_) => Ok(Arc::from(&*name)),
        Err(_) => Err(RuntimeError::GoDeviceNotPresent(Box::from(&*name))),
    }
}

/// `go g(args)`: a task running `func` with the arguments in its parameter
/// slots.
#[inline(never)]
fn go_call(
    sh: &Arc<Shared>,
    fs: &[Value],
    f: &Func,
    at: usize,
    func: FuncId,
    args: &[Slot],
    device: Result<Arc<str>, RuntimeError>,
) -> ControlFlow<Wait> {
    let device = match device {
        Ok(d) => d,
        Err(e) => return Break(fail(f, at, e)),
    };
    let Some(g) = sh.prog.funcs.get(func as usize) else {
        return Break(bug(f, at, InternalError::NoFunction(func)));
    };
    if let Err(e) = task_fits(sh, func) {
        return Break(out_of_memory(f, at, e));
    }
    let init = g
        .params
        .iter()
        .zip(args.iter())
        .map(|(p, a)| (*p, fs[*a as usize].clone()))
        .collect();
    spawn(sh, f, at, func, init, device)
}

/// Whether a new task running `func` fits under the memory ceiling: its
/// future, the runtime's record and its first frame.
fn task_fits(sh: &Shared, func: FuncId) -> Result<(), OutOfMemory> {
    let frame = sh
        .prog
        .funcs
        .get(func as usize)
        .map_or(0, |g| g.template.len());
    sh.mem.check(sh.task_bytes + frame * VALUE_BYTES)
}

/// Starts a task (made by `Shared::spawn`, that is `task::task`).
fn spawn(
    sh: &Arc<Shared>,
    f: &Func,
    at: usize,
    func: FuncId,
    init: Vec<(Slot, Value)>,
    device: Arc<str>,
) -> ControlFlow<Wait> {
    match runtime::spawn_boxed((sh.spawn)(sh.clone(), func, init, device)) {
        Ok(_) => Continue(()),
        Err(e) => Break(fail(f, at, RuntimeError::spawn(e))),
    }
}

/// `print(args...)`: the whole line, newline included, in one write. The
/// line is bounded by what the memory ceiling leaves (its `String` may
/// hold up to twice its length while it grows).
#[inline(never)]
fn print(sh: &Shared, fs: &[Value], f: &Func, at: usize, args: &[Slot]) -> ControlFlow<Wait> {
    let max = sh.mem.headroom() / 2;
    let mut line = Vec::new();
    for (k, a) in args.iter().enumerate() {
        if k > 0 {
            line.push(b' ');
        }
        if !fs[*a as usize].write_within(&mut line, max) {
            return Break(out_of_memory(f, at, sh.mem.exceeded()));
        }
    }
    line.push(b'\n');
    sh.out.write_line(&line);
    Continue(())
}

/// `str(x)` of a value other than a string: its printed form, bounded by
/// what the memory ceiling leaves (the `String`, up to twice its length
/// while it grows, then the `Arc` it is copied into).
#[inline(never)]
fn to_str(mem: Ceiling, v: &Value) -> Result<Value, RuntimeError> {
    let mut s = Vec::new();
    if !v.write_within(&mut s, mem.headroom() / 3) {
        return Err(mem.exceeded().into());
    }
    Ok(Value::Str(Str::from(s)))
}

/// `rand(n)`: an int in `[0, n)`.
#[inline(never)]
pub(super) fn rand(
    fs: &mut [Value],
    rng: &mut fastrand::Rng,
    f: &Func,
    at: usize,
    n: Slot,
    out: Slot,
) -> ControlFlow<Wait> {
    let n = match ops::as_int(&fs[n as usize]) {
        Ok(n) => n,
        Err(e) => return Break(fail(f, at, e)),
    };
    if n <= 0 {
        return Break(fail(f, at, RuntimeError::RandNotPositive));
    }
    fs[out as usize] = Value::Int(rng.i64(0..n));
    Continue(())
}

/// `perm(n)`: the ints `[0, n)` shuffled.
#[inline(never)]
pub(super) fn perm(
    mem: Ceiling,
    fs: &mut [Value],
    rng: &mut fastrand::Rng,
    f: &Func,
    at: usize,
    n: Slot,
    out: Slot,
) -> ControlFlow<Wait> {
    let n = match ops::as_int(&fs[n as usize]) {
        Ok(n) => n,
        Err(e) => return Break(fail(f, at, e)),
    };
    if !(0..=MAX_PERM).contains(&n) {
        return Break(fail(f, at, RuntimeError::PermOutOfRange));
    }
    if let Err(e) = mem.check(n as usize * VALUE_BYTES) {
        return Break(out_of_memory(f, at, e));
    }
    let mut p: Vec<Value> = (0..n).map(Value::Int).collect();
    rng.shuffle(&mut p);
    fs[out as usize] = Value::list(p);
    Continue(())
}

/// The callee of a call through the func value in slot `fv`, and the
/// values of its parameter slots: the captured values, then `args`.
fn closure_args(
    fs: &[Value],
    fv: Slot,
    args: &[Slot],
    funcs: &[Func],
) -> Result<(FuncId, Vec<(Slot, Value)>), RuntimeError> {
    let c = match &fs[fv as usize] {
        Value::Func(Some(c)) => c.clone(),
        Value::Func(None) => return Err(RuntimeError::NilFuncCall),
        other => return Err(kind_error("call", other)),
    };
    let g = funcs
        .get(c.func as usize)
        .ok_or(InternalError::NoFunction(c.func))?;
    let vals = c
        .captures
        .iter()
        .cloned()
        .chain(args.iter().map(|a| fs[*a as usize].clone()));
    Ok((c.func, g.params.iter().copied().zip(vals).collect()))
}

/// The map instructions and `Closure`, out of line. A map is copied on
/// write (`Arc::make_mut`): the copy of a shared map, and the growth of a
/// map's table, are charged to the memory ceiling first.
#[inline(never)]
fn map_or_closure(
    mem: Ceiling,
    fs: &mut [Value],
    f: &Func,
    at: usize,
    instr: &Instr,
) -> ControlFlow<Wait> {
    match map_op(mem, fs, instr) {
        Ok(()) => Continue(()),
        Err(e) => Break(fail(f, at, e)),
    }
}

/// A library builtin (`lib_ops`), or `tick` and `lines`, which start
/// work on the runtime (`stream`).
#[inline(never)]
fn lib(
    sh: &Arc<Shared>,
    fs: &mut [Value],
    f: &Func,
    at: usize,
    op: LibOp,
    ins: &[Slot],
    out: Slot,
) -> ControlFlow<Wait> {
    let r = match op {
        LibOp::Tick => match ins.first().map(|s| &fs[*s as usize]) {
            Some(v) => ops::millis(v).and_then(|ms| stream::tick(sh, duration(ms))),
            None => Err(RuntimeError::unexpected("tick", &op)),
        },
        LibOp::Lines => match ins.first().map(|s| &fs[*s as usize]) {
            Some(Value::Str(p)) => stream::lines(sh, p, f.locs.get(at).cloned()),
            other => Err(RuntimeError::unexpected("lines", &other)),
        },
        _ => lib_ops::run(sh.mem, op, fs, ins),
    };
    match r {
        Ok(v) => {
            fs[out as usize] = v;
            Continue(())
        }
        Err(e) => Break(fail(f, at, e)),
    }
}

/// Whether channel value `v` is a `lines` channel whose reader left an
/// error beside it (`ChanVal::read_err`).
#[inline]
fn has_read_err(v: &Value) -> bool {
    matches!(v, Value::Chan(c) if c.read_err.is_some())
}

/// The map `x` holds, writable: a copy when shared.
fn map_mut(mem: Ceiling, m: &mut Value) -> Result<&mut MapVal, RuntimeError> {
    let Value::Map(arc) = m else {
        return Err(kind_error("map", m));
    };
    if arc.nil {
        return Err(RuntimeError::NilMapWrite);
    }
    if Arc::strong_count(arc) > 1 || Arc::weak_count(arc) > 0 {
        mem.check(arc.entries.capacity() * MAP_ENTRY_BYTES)?;
    }
    Ok(Arc::make_mut(arc))
}

/// Inserts `k: v`, charging a growth of the table to the ceiling.
fn map_insert(mem: Ceiling, m: &mut MapVal, k: Value, v: Value) -> Result<(), RuntimeError> {
    if let Some(slot) = m.entries.get_mut(&KeyRef(&k)) {
        *slot = v;
        return Ok(());
    }
    map_add(mem, m, k, v)
}

/// Adds the absent key `k` with `v`, charging a growth of the table to
/// the ceiling.
fn map_add(mem: Ceiling, m: &mut MapVal, k: Value, v: Value) -> Result<(), RuntimeError> {
    let n = m.entries.len();
    if n == m.entries.capacity() {
        mem.check((n.max(4)) * MAP_ENTRY_BYTES)?;
    }
    m.entries.insert(Key(k), v);
    Ok(())
}

/// `m[k] op= y` (`Instr::MapUpdate`).
#[inline(never)]
fn map_update(
    mem: Ceiling,
    fs: &mut [Value],
    f: &Func,
    at: usize,
    u: &MapUpdate,
) -> ControlFlow<Wait> {
    match map_update_op(mem, fs, u) {
        Ok(()) => Continue(()),
        Err(e) => Break(fail(f, at, e)),
    }
}

/// `m[k] op= y`: finds the key once (borrowed from its slot), computes
/// the new value before changing anything (an op that fails leaves the
/// map as it was), then stores it at the entry found, or adds the key.
/// Writes `got` and `new` as the `MapGet` and the op it stands for do.
fn map_update_op(mem: Ceiling, fs: &mut [Value], u: &MapUpdate) -> Result<(), RuntimeError> {
    let (index, old, new) = {
        let Value::Map(m) = &fs[u.x as usize] else {
            return Err(kind_error("map", &fs[u.x as usize]));
        };
        let (index, old) = match m.entries.get_full(&KeyRef(&fs[u.k as usize])) {
            Some((i, _, v)) => (Some(i), v),
            None => (None, &u.zero),
        };
        let new = update_value(mem, u.op, old, fs)?;
        (index, dup(old), new)
    };
    put(&mut fs[u.got as usize], old);
    let mut m = take_or_clone(fs, u.x, u.out);
    let entries = map_mut(mem, &mut m)?;
    match index.and_then(|i| entries.entries.get_index_mut(i)) {
        Some((_, v)) => put(v, dup(&new)),
        None => map_add(mem, entries, fs[u.k as usize].clone(), dup(&new))?,
    }
    put(&mut fs[u.new as usize], new);
    // `take_or_clone` left a scalar there when `x` is `out`.
    put(&mut fs[u.out as usize], m);
    Ok(())
}

/// The op of a `MapUpdate` on the value read, `a`, as the instruction of
/// the same name computes it.
fn update_value(
    mem: Ceiling,
    op: UpdateOp,
    a: &Value,
    fs: &[Value],
) -> Result<Value, RuntimeError> {
    Ok(match op {
        UpdateOp::Int(op, y) => match (a, &fs[y as usize]) {
            (Value::Int(a), Value::Int(b)) => Value::Int(ops::int_op(op, *a, *b)?),
            (a, _) => return Err(kind_error("int op", a)),
        },
        UpdateOp::IntK(op, k) => match a {
            Value::Int(a) => Value::Int(ops::int_op(op, *a, k)?),
            a => return Err(kind_error("int op", a)),
        },
        UpdateOp::Float(op, y) => match (a, &fs[y as usize]) {
            (Value::Float(a), Value::Float(b)) => Value::Float(ops::float_op(op, *a, *b)),
            (a, _) => return Err(kind_error("float op", a)),
        },
        UpdateOp::Concat(y) => match (a, &fs[y as usize]) {
            (Value::Str(a), Value::Str(b)) => {
                let n = a.len() + b.len();
                // The string, then the `Arc` it is copied into.
                mem.check(2 * n)?;
                let mut c = Vec::with_capacity(n);
                c.extend_from_slice(a);
                c.extend_from_slice(b);
                Value::Str(Str::from(c))
            }
            (a, _) => return Err(kind_error("concat", a)),
        },
    })
}

fn map_op(mem: Ceiling, fs: &mut [Value], instr: &Instr) -> Result<(), RuntimeError> {
    match instr {
        Instr::MapNew { keys, vals, out } => {
            let mut m = MapVal::default();
            for (k, v) in keys.iter().zip(vals.iter()) {
                let (k, v) = (fs[*k as usize].clone(), fs[*v as usize].clone());
                map_insert(mem, &mut m, k, v)?;
            }
            fs[*out as usize] = Value::Map(Arc::new(m));
        }
        Instr::MapGet {
            x,
            k,
            out,
            ok,
            zero,
        } => {
            let Value::Map(m) = &fs[*x as usize] else {
                return Err(kind_error("map", &fs[*x as usize]));
            };
            let found = m.entries.get(&KeyRef(&fs[*k as usize])).cloned();
            let present = found.is_some();
            if let Some(o) = out {
                fs[*o as usize] = found.unwrap_or_else(|| zero.clone());
            }
            if let Some(o) = ok {
                fs[*o as usize] = Value::Bool(present);
            }
        }
        Instr::MapSet { x, k, v, out } => {
            let (key, val) = (fs[*k as usize].clone(), fs[*v as usize].clone());
            let mut m = take_or_clone(fs, *x, *out);
            map_insert(mem, map_mut(mem, &mut m)?, key, val)?;
            fs[*out as usize] = m;
        }
        Instr::MapDelete { x, k, out } => {
            let key = Key(fs[*k as usize].clone());
            let mut m = take_or_clone(fs, *x, *out);
            let present = matches!(&m, Value::Map(a) if a.entries.contains_key(&key));
            if present {
                map_mut(mem, &mut m)?.entries.swap_remove(&key);
            }
            fs[*out as usize] = m;
        }
        Instr::MapEntry { x, i, key, val } => {
            let Value::Map(m) = &fs[*x as usize] else {
                return Err(kind_error("map", &fs[*x as usize]));
            };
            let n = ops::as_int(&fs[*i as usize])?;
            let len = m.entries.len();
            let Some((k, v)) = usize::try_from(n).ok().and_then(|n| m.entries.get_index(n)) else {
                return Err(RuntimeError::IndexOutOfRange { index: n, len });
            };
            let (k, v) = (k.0.clone(), v.clone());
            if let Some(o) = key {
                fs[*o as usize] = k;
            }
            if let Some(o) = val {
                fs[*o as usize] = v;
            }
        }
        Instr::Closure { func, caps, out } => {
            mem.check(caps.len() * VALUE_BYTES + 32)?;
            let captures = caps.iter().map(|c| fs[*c as usize].clone()).collect();
            fs[*out as usize] = Value::Func(Some(Arc::new(Closure {
                func: *func,
                captures,
            })));
        }
        _ => {}
    }
    Ok(())
}

/// A tensor op: run here when nothing in it can wait
/// (`tensor_ops::run_inline`: host operands, a short kernel), else leaves
/// `step` with its operands for `run_task` to run the kernel on the
/// compute pool or a device. An operand is moved out of its slot, not
/// copied, when `moves` says so (dead after this read, or replaced by the
/// result, `lower_emit.rs`): a tensor left with one owner is then written
/// in place by the elementwise kernels, with no new buffer. The slot
/// holds `Int(0)` until it is written again.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn tensor(
    sh: &Shared,
    device: &str,
    fs: &mut [Value],
    f: &Func,
    op: TensorOp,
    ins: &[Slot],
    out: Slot,
    moves: u8,
    at: usize,
) -> ControlFlow<Wait> {
    let mut args: SmallVec<[Value; 4]> = SmallVec::new();
    for (i, &a) in ins.iter().enumerate() {
        let take = moves.checked_shr(i as u32).is_some_and(|m| m & 1 == 1);
        let slot = &mut fs[a as usize];
        args.push(if take {
            std::mem::replace(slot, Value::Int(0))
        } else {
            slot.clone()
        });
    }
    let place = tensor_ops::Place {
        here: device,
        strict: sh.strict_placement,
    };
    match tensor_ops::run_inline(op, args, sh.mem, place) {
        Inline::Done(Ok(v)) => {
            fs[out as usize] = v;
            Continue(())
        }
        Inline::Done(Err(e)) => Break(fail(f, at, e)),
        Inline::Wait(work) => Break(Wait::Tensor { work, at }),
    }
}

/// `group(n)`: a new group of `n` members, as a `[]comm` in rank order.
#[inline(never)]
fn group(
    mem: Ceiling,
    fs: &mut [Value],
    f: &Func,
    at: usize,
    n: Slot,
    rings: u32,
    out: Slot,
) -> ControlFlow<Wait> {
    let n = match ops::as_int(&fs[n as usize]) {
        Ok(n) => n,
        Err(e) => return Break(fail(f, at, e)),
    };
    if !(1..=MAX_GROUP).contains(&n) {
        return Break(fail(f, at, CollError::GroupSize.into()));
    }
    let n = n as usize;
    if let Err(e) = mem.check(n.saturating_mul(MEMBER_BYTES)) {
        return Break(out_of_memory(f, at, e));
    }
    // The hooks let woken members reach idle workers: at once after a
    // step completes, and during a large reduction's chunks
    // (docs/collectives.md).
    let tuning = weft_coll::Tuning {
        progress: Some(runtime::release_lifo),
        handoff: Some(runtime::hand_off_lifo),
        ..weft_coll::Tuning::default()
    };
    match weft_coll::group_tuned::<Value>(n, rings as usize, tuning) {
        Ok(members) => {
            let comms = members
                .into_iter()
                .map(|m| Value::Comm(Some(Arc::new(CommVal::Group(m)))));
            fs[out as usize] = Value::list(comms.collect());
            Continue(())
        }
        Err(e) => Break(fail(f, at, e.into())),
    }
}

/// `world()`: the run's member of the group of all processes.
#[inline(never)]
fn world(sh: &Shared, fs: &mut [Value], f: &Func, at: usize, out: Slot) -> ControlFlow<Wait> {
    match &sh.world {
        Some(m) => {
            fs[out as usize] = Value::Comm(Some(m.clone()));
            Continue(())
        }
        None => Break(bug(f, at, InternalError::Collective(CollError::GroupSize))),
    }
}

/// `rank(c)` or `size(c)`.
#[inline(never)]
fn comm_info(
    fs: &mut [Value],
    f: &Func,
    at: usize,
    comm: Slot,
    size: bool,
    out: Slot,
) -> ControlFlow<Wait> {
    let n = match &fs[comm as usize] {
        Value::Comm(Some(m)) if size => m.size(),
        Value::Comm(Some(m)) => m.rank(),
        Value::Comm(None) => return Break(fail(f, at, RuntimeError::NilComm)),
        other => return Break(fail(f, at, kind_error("comm", other))),
    };
    fs[out as usize] = Value::Int(n as i64);
    Continue(())
}

/// A collective: checks the comm (nil panics) and `broadcast`'s root here,
/// with the op's location, then leaves `step` for `run_task` to wait for
/// the group (the value is cloned: a list or tensor shares its storage).
#[inline(never)]
fn collective(fs: &mut [Value], f: &Func, at: usize, c: &CollInstr) -> ControlFlow<Wait> {
    let comm = match &fs[c.comm as usize] {
        Value::Comm(Some(m)) => m,
        Value::Comm(None) => return Break(fail(f, at, RuntimeError::NilComm)),
        other => return Break(fail(f, at, kind_error("comm", other))),
    };
    // A reduction over a group of one member is its value (MPI's
    // `MPI_Allreduce` on one rank): no engine call, no copy. A tensor on a
    // device stays there, as the result of a larger group would, without
    // the trip through the host a larger group takes (its kernels wait for
    // it on the device, like any tensor's). The member of a world of one
    // process still goes to the world (it may be a rank of `mpirun`'s job
    // that must agree).
    if let (CollOp::AllReduce(_), CommVal::Group(m), Some(x)) = (c.op, &**comm, c.x) {
        if m.size() == 1 {
            let v = match &fs[x as usize] {
                Value::Int(n) => Some(Value::Int(*n)),
                Value::Float(v) => Some(Value::Float(*v)),
                Value::Tensor(t) => Some(Value::Tensor(t.clone())),
                Value::List(l) => Some(Value::List(l.clone())),
                _ => None,
            };
            if let Some(v) = v {
                if let Some(o) = c.out {
                    fs[o as usize] = v;
                }
                return Continue(());
            }
        }
    }
    Break(collective_wait(fs, f, at, c, (**comm).clone()))
}

/// A collective that goes to its group's engine or to the world: the
/// `Wait` that `run_task` completes.
fn collective_wait(fs: &[Value], f: &Func, at: usize, c: &CollInstr, comm: CommVal) -> Wait {
    let op = match c.op {
        CollOp::AllReduce(r) => Op::AllReduce(r),
        CollOp::AllGather => Op::AllGather,
        CollOp::Barrier => Op::Barrier,
        CollOp::Broadcast => {
            let root = match c.root.map(|r| ops::as_int(&fs[r as usize])) {
                Some(Ok(r)) => r,
                Some(Err(e)) => return fail(f, at, e),
                None => return bug(f, at, InternalError::LostInstruction("broadcast root")),
            };
            let size = comm.size();
            match usize::try_from(root) {
                Ok(r) if r < size => Op::Broadcast { root: r },
                _ => return fail(f, at, RuntimeError::BroadcastRoot { root, size }),
            }
        }
    };
    let call = CollWait {
        comm,
        op,
        ty: c.ty.clone(),
        x: c.x.map(|x| fs[x as usize].clone()),
    };
    Wait::Collective {
        call: Box::new(call),
        at,
    }
}
