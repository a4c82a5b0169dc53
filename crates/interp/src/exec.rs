//! The executor's dispatch loop, `step`, and the state it runs on; the
//! async half that awaits between steps is `task.rs`.
//!
//! A task is `task::run_task`'s future. It owns a value stack (all frames of the
//! task, each a window `stack[base..base + template.len()]`) and a list of
//! saved caller frames; calls push, returns pop, so recursion never recurses
//! in Rust. A blocking op `.await`s the channel's future, so a blocked task is
//! a parked future that keeps its frames and resumes at the op that blocked.
//!
//! Blocking protocol (per op): try the non-blocking form first; only if it
//! would block, record the wait (`runtime::set_wait`) for deadlock reports,
//! await, then `runtime::clear_wait`. Preemption: a budget counted down at
//! backward jumps (loop back edges) and calls; at zero the task yields to the
//! back of the run queue. Every failure is a `TaskEnd::Panic` with the
//! failing op's location; nothing here panics on a program's behalf.

use std::sync::Arc;
use std::time::Duration;

use weft_chan::{try_select_on, Cases, Chan, Outcome, TryRecvError, TrySendError};
use weft_rt::{self as runtime, TaskEnd};
use weft_tensor::Tensor;

use super::code::Program;
use super::code::{Func, FuncId, Instr, IntOp, Pc, SelCase, Slot};
use super::frame::{dup, init_frame, is_scalar, put, put_int, take_or_clone};
use super::ops::{self, kind_error, Fail};
use super::output::Output;
use super::task::task;
use super::tensor_ops;
use super::value::{ChanVal, Ty, Value};

/// Backward jumps and calls a task runs before it yields.
pub(super) const BUDGET: u32 = 2000;
/// Every this many budget steps a busy task lets the runtime hand a task
/// kept waiting in this worker's LIFO slot to an idle worker
/// (`runtime::release_lifo`, a no-op when the slot is empty or fresh).
const LIFO_CHECK: u32 = 64;
/// The most values one task's stack may hold (about 100 MB).
const MAX_STACK: usize = 1 << 22;
/// The largest `perm(n)`.
const MAX_PERM: i64 = 1 << 28;
/// The largest channel capacity `make` accepts.
const MAX_CAP: i64 = 1 << 32;
/// The longest timer (about 100 years), so deadlines never overflow.
const MAX_SLEEP_S: f64 = 3.0e9;

/// What every task of a run shares.
pub(super) struct Shared {
    pub prog: Program,
    pub out: Output,
    /// `args()`: the program's arguments as a `[]string` value.
    pub args: Value,
    pub seed: u64,
    /// The element type of `after`'s channels.
    pub int_ty: Arc<Ty>,
}

/// A caller's saved state.
pub(super) struct Frame {
    func: FuncId,
    pc: Pc,
    base: usize,
    /// The caller's slot that receives the result.
    ret: Option<Slot>,
}

/// splitmix64, to derive per-task seeds from the run seed and the task id.
pub(super) fn mix(seed: u64, task: u64) -> u64 {
    let mut z = seed ^ task.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn chan_ref(v: &Value) -> Result<Option<&Chan<Value>>, Fail> {
    match v {
        Value::Chan(c) => Ok(c.ch.as_ref()),
        other => Err(kind_error("channel", other)),
    }
}

/// A `select` instruction's cases over the frame `fs`: the select reads
/// the channels and send values where they are (no case list is built).
pub(super) struct FrameCases<'s> {
    cases: &'s [SelCase],
    fs: &'s [Value],
}

impl<'s> FrameCases<'s> {
    /// Checks that every case names a channel (or nil).
    pub(super) fn new(cases: &'s [SelCase], fs: &'s [Value]) -> Result<Self, Fail> {
        for c in cases {
            if let Some(v) = fs.get(c.chan as usize) {
                chan_ref(v)?;
            }
        }
        Ok(FrameCases { cases, fs })
    }
}

impl Cases<Value> for FrameCases<'_> {
    #[inline]
    fn count(&self) -> usize {
        self.cases.len()
    }
    #[inline]
    fn chan(&self, i: usize) -> Option<&Chan<Value>> {
        match self.fs.get(self.cases.get(i)?.chan as usize)? {
            Value::Chan(c) => c.ch.as_ref(),
            _ => None,
        }
    }
    #[inline]
    fn is_send(&self, i: usize) -> bool {
        self.cases
            .get(i)
            .is_some_and(|c| c.send && c.value.is_some())
    }
    #[inline]
    fn take_value(&self, i: usize) -> Option<Value> {
        let c = self.cases.get(i)?;
        if !c.send {
            return None;
        }
        self.fs.get(c.value? as usize).map(dup)
    }
    #[inline]
    fn put_back(&self, _: usize, _: Value) {
        // The frame still holds the value: the taken copy is dropped.
    }
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
}

/// Why `step` stopped: the task ended, or it must await something. The
/// instruction index `at` names the op that waits (its location is the wait's
/// location, and it says where results go).
pub(super) enum Wait {
    End(TaskEnd),
    Yield,
    Nil {
        at: usize,
    },
    /// A send that must park; `ch` is the slot of the (non-nil) channel,
    /// borrowed from the frame while waiting rather than cloned.
    Send {
        ch: Slot,
        val: Value,
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
    Tensor {
        op: tensor_ops::TensorOp,
        args: Vec<Value>,
        at: usize,
    },
    /// A tensor just received from a channel, still in flight to its
    /// device: the receiver waits for it (issue 7).
    Ready {
        t: Box<Tensor>,
        at: usize,
    },
}

/// The tensor to wait for after receiving `v`, if it is one whose values
/// may not be there yet (on a device).
pub(super) fn in_flight(v: &Value) -> Option<Box<Tensor>> {
    match v {
        Value::Tensor(t) if t.host_values().is_none() => Some(t.clone()),
        _ => None,
    }
}

/// A panic in the chosen case of the `select` at `at`: located at the case
/// when the IR gave its location (docs/language.md, "Details"), else at the `select`.
pub(super) fn case_end(f: Option<&Func>, at: usize, case: &SelCase, msg: &str) -> TaskEnd {
    TaskEnd::Panic {
        msg: msg.into(),
        loc: case.loc.clone().unwrap_or_else(|| loc_of(f, at)),
    }
}

pub(super) fn loc_of(f: Option<&Func>, at: usize) -> runtime::SrcLoc {
    f.and_then(|f| f.locs.get(at).or(f.locs.last()))
        .cloned()
        .unwrap_or_else(|| runtime::SrcLoc {
            file: Arc::from("?"),
            line: 0,
            col: 0,
        })
}

/// Runs instructions until the task ends or must await something. A plain
/// function, so the hot loop's state lives in registers, not in the task's
/// future.
pub(super) fn step(sh: &Arc<Shared>, st: &mut TaskState) -> Wait {
    let prog = &sh.prog;
    let TaskState {
        stack,
        frames,
        cur,
        pc: pc_out,
        base: base_out,
        budget,
        rng,
    } = st;
    let Some(mut f) = prog.funcs.get(*cur as usize) else {
        return Wait::End(TaskEnd::Returned);
    };
    let mut pc = *pc_out;
    let mut base = *base_out;
    // The current frame and code as local slices, so their pointers and
    // lengths stay in registers (a store through the stack's `Vec` could
    // otherwise alias them and force reloads). Re-derived at calls and
    // returns, the only places that change frame.
    let mut fs: &mut [Value] = stack.get_mut(base..).unwrap_or_default();
    let mut code: &[Instr] = &f.code;
    let fail = |f: &Func, at: usize, msg: Fail| {
        Wait::End(TaskEnd::Panic {
            msg,
            loc: loc_of(Some(f), at),
        })
    };
    let wait: Wait = 'run: loop {
        let at = pc;
        let Some(instr) = code.get(at) else {
            break 'run fail(f, at, "program counter out of range".into());
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
                    Err(m) => break 'run fail(f, at, m),
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
                        let mut c = String::with_capacity(a.len() + b.len());
                        c.push_str(a);
                        c.push_str(b);
                        Value::Str(Arc::from(c))
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
                    v => Value::Str(Arc::from(v.to_display())),
                };
                s!(*out) = r;
            }
            Instr::ListNew { elems, out } => {
                if let Some(msg) = weft_rt::memlimit::exceeded() {
                    break 'run fail(f, at, msg);
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
                tri!(ops::set_index(&mut l, &idx, val));
                s!(*out) = l;
            }
            Instr::Slice { x, lo, hi, out } => {
                let lo = lo.map(|s| &fs[s as usize]);
                let hi = hi.map(|s| &fs[s as usize]);
                let r = tri!(ops::slice(&s!(*x), lo, hi));
                s!(*out) = r;
            }
            Instr::Append { x, elems, out } => {
                if let Some(msg) = weft_rt::memlimit::exceeded() {
                    break 'run fail(f, at, msg);
                }
                let vals: Vec<Value> = elems.iter().map(|e| s!(*e).clone()).collect();
                let mut l = take_or_clone(fs, *x, *out);
                tri!(ops::append(&mut l, vals.into_iter()));
                s!(*out) = l;
            }
            Instr::Len { x, out } => s!(*out) = Value::Int(tri!(ops::len(&s!(*x)))),
            Instr::Cap { x, out } => s!(*out) = Value::Int(tri!(ops::cap(&s!(*x)))),
            Instr::StructNew { fields, out } => {
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
                if let Some(msg) = weft_rt::memlimit::exceeded() {
                    break 'run fail(f, at, msg);
                }
                let n = match cap {
                    Some(c) => tri!(ops::as_int(&s!(*c))),
                    None => 0,
                };
                if !(0..=MAX_CAP).contains(&n) {
                    break 'run fail(f, at, "makechan: size out of range".into());
                }
                s!(*out) = Value::Chan(Box::new(ChanVal {
                    ch: Some(Chan::new(n as usize)),
                    elem: elem.clone(),
                }));
            }
            Instr::Send { ch, v } => {
                let val = dup(&s!(*v));
                match tri!(chan_ref(&s!(*ch))) {
                    None => break 'run Wait::Nil { at },
                    Some(c) => match c.try_send(val) {
                        Ok(()) => {}
                        Err(TrySendError::Closed(_)) => {
                            break 'run fail(f, at, "send on closed channel".into())
                        }
                        Err(TrySendError::Full(val)) => break 'run Wait::Send { ch: *ch, val, at },
                    },
                }
            }
            Instr::Recv { ch, out, ok, zero } => {
                let got = match tri!(chan_ref(&s!(*ch))) {
                    None => break 'run Wait::Nil { at },
                    Some(c) => match c.try_recv() {
                        Ok(v) => Some(v),
                        Err(TryRecvError::Closed) => None,
                        Err(TryRecvError::Empty) => break 'run Wait::Recv { ch: *ch, at },
                    },
                };
                let okv = got.is_some();
                let pending = got.as_ref().and_then(in_flight);
                if let Some(o) = out {
                    s!(*o) = got.unwrap_or_else(|| zero.clone());
                }
                if let Some(k) = ok {
                    s!(*k) = Value::Bool(okv);
                }
                if let Some(t) = pending {
                    break 'run Wait::Ready { t, at };
                }
            }
            Instr::Close { ch } => match tri!(chan_ref(&s!(*ch))) {
                None => break 'run fail(f, at, "close of nil channel".into()),
                Some(c) => {
                    if c.close().is_err() {
                        break 'run fail(f, at, "close of closed channel".into());
                    }
                }
            },
            Instr::Select { default: None, .. } => {
                // Built, run and (if it must) parked by `run_task`, which
                // borrows the channels from the frame.
                break 'run Wait::Select { at };
            }
            Instr::Select {
                cases,
                default: Some(d),
            } => {
                // The attempt borrows the channels from the frame (no
                // reference counts).
                let src = tri!(FrameCases::new(cases, fs));
                let first = try_select_on(&src, rng);
                let mut pending = None;
                match first {
                    Some(chosen) => {
                        let Some(case) = cases.get(chosen.index) else {
                            break 'run fail(f, at, "select: bad case index".into());
                        };
                        match chosen.outcome {
                            Outcome::Received(got) => {
                                let okv = got.is_some();
                                if let Some(t) = got.as_ref().and_then(in_flight) {
                                    pending = Some(t);
                                }
                                if let Some(o) = case.recv {
                                    s!(o) = got.unwrap_or_else(|| case.zero.clone());
                                }
                                if let Some(k) = case.ok {
                                    s!(k) = Value::Bool(okv);
                                }
                            }
                            Outcome::Sent => {}
                            Outcome::SendClosed(_) => {
                                let msg = "send on closed channel";
                                break 'run Wait::End(case_end(Some(f), at, case, msg));
                            }
                        }
                        pc = case.target as usize;
                        if let Some(t) = pending {
                            break 'run Wait::Ready { t, at };
                        }
                    }
                    None => pc = *d as usize,
                }
            }
            Instr::After { ms, out } => {
                let ms = tri!(ops::millis(&s!(*ms)));
                let c: Chan<Value> = Chan::new(1);
                let c2 = c.clone();
                let delivered = ms as i64;
                runtime::after(duration(ms), move || {
                    let _ = c2.try_send(Value::Int(delivered));
                });
                s!(*out) = Value::Chan(Box::new(ChanVal {
                    ch: Some(c),
                    elem: sh.int_ty.clone(),
                }));
            }
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
            Instr::Go { func, captures } => {
                if let Some(msg) = weft_rt::memlimit::exceeded() {
                    break 'run fail(f, at, msg);
                }
                let init = captures.iter().map(|c| (*c, s!(*c).clone())).collect();
                if let Err(e) = runtime::spawn(task(sh.clone(), *func, init)) {
                    break 'run fail(f, at, e.to_string());
                }
            }
            Instr::GoCall { func, args } => {
                if let Some(msg) = weft_rt::memlimit::exceeded() {
                    break 'run fail(f, at, msg);
                }
                let Some(g) = prog.funcs.get(*func as usize) else {
                    break 'run fail(f, at, "unknown function".into());
                };
                let init = g
                    .params
                    .iter()
                    .zip(args.iter())
                    .map(|(p, a)| (*p, s!(*a).clone()))
                    .collect();
                if let Err(e) = runtime::spawn(task(sh.clone(), *func, init)) {
                    break 'run fail(f, at, e.to_string());
                }
            }
            Instr::Call { func, args, out } => {
                let Some(g) = prog.funcs.get(*func as usize) else {
                    break 'run fail(f, at, "unknown function".into());
                };
                // The callee's frame starts where the caller's ends. Slots
                // above the top are kept between calls (scalars only, see
                // `Ret`), so a call mostly overwrites in place.
                let nb = base + f.template.len();
                let top = nb + g.template.len();
                if top > MAX_STACK {
                    break 'run fail(f, at, "stack overflow".into());
                }
                if stack.len() < top {
                    stack.resize(top, Value::Int(0));
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
                    break 'run Wait::End(TaskEnd::Returned);
                };
                *cur = fr.func;
                let Some(g) = prog.funcs.get(*cur as usize) else {
                    break 'run Wait::End(TaskEnd::Returned);
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
                if to <= at && spend(budget) {
                    break 'run Wait::Yield;
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
            Instr::Print { args } => {
                let mut line = String::new();
                for (k, a) in args.iter().enumerate() {
                    if k > 0 {
                        line.push(' ');
                    }
                    s!(*a).write_to(&mut line);
                }
                line.push('\n');
                sh.out.write_line(&line);
            }
            Instr::Panic { msg } => break 'run fail(f, at, s!(*msg).to_display()),
            Instr::Assert { cond, msg } => {
                if !s!(*cond).truthy() {
                    let m = format!("assertion failed: {}", s!(*msg).to_display());
                    break 'run fail(f, at, m);
                }
            }
            Instr::Exit { code } => {
                break 'run Wait::End(TaskEnd::Exit(tri!(ops::as_int(&s!(*code))) as i32))
            }
            Instr::Now { out } => s!(*out) = Value::Float(runtime::now_ms()),
            Instr::Args { out } => s!(*out) = sh.args.clone(),
            Instr::Rand { n, out } => {
                let n = tri!(ops::as_int(&s!(*n)));
                if n <= 0 {
                    break 'run fail(f, at, "rand: n must be positive".into());
                }
                s!(*out) = Value::Int(rng.i64(0..n));
            }
            Instr::Perm { n, out } => {
                let n = tri!(ops::as_int(&s!(*n)));
                if !(0..=MAX_PERM).contains(&n) {
                    break 'run fail(f, at, "perm: n out of range".into());
                }
                let mut p: Vec<Value> = (0..n).map(Value::Int).collect();
                rng.shuffle(&mut p);
                s!(*out) = Value::list(p);
            }
            Instr::Tensor { op, ins, .. } => {
                let args: Vec<Value> = ins.iter().map(|a| s!(*a).clone()).collect();
                break 'run Wait::Tensor { op: *op, args, at };
            }
        }
    };
    *pc_out = pc;
    *base_out = base;
    wait
}

/// A timer duration from milliseconds (clamped, never overflowing).
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

fn duration(ms: f64) -> Duration {
    Duration::from_secs_f64((ms / 1000.0).clamp(0.0, MAX_SLEEP_S))
}
