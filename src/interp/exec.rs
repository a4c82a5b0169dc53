//! The executor: one `async` task loop per Weft task.
//!
//! A task is `run_task`'s future. It owns a value stack (all frames of the
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

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::chan::{Chan, Outcome, Select, Selected, TryRecvError, TrySendError};
use crate::runtime::{self, TaskEnd, WaitKind};

use super::code::Program;
use super::code::{Func, FuncId, Instr, IntOp, Pc, Slot};
use super::ops::{self, kind_error, Fail};
use super::output::Output;
use super::tensor_ops;
use super::value::{ChanVal, Ty, Value};

/// Backward jumps and calls a task runs before it yields.
const BUDGET: u32 = 2000;
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

/// A boxed task future (boxing breaks the type cycle of tasks that spawn
/// tasks).
pub(super) type TaskFuture = Pin<Box<dyn Future<Output = TaskEnd> + Send + 'static>>;

/// The future of a task that runs `func` with the given slots preset (the
/// arguments of a call, or the captured variables of a go block).
pub(super) fn task(sh: Arc<Shared>, func: FuncId, init: Vec<(Slot, Value)>) -> TaskFuture {
    Box::pin(run_task(sh, func, init))
}

/// A caller's saved state.
struct Frame {
    func: FuncId,
    pc: Pc,
    base: usize,
    /// The caller's slot that receives the result.
    ret: Option<Slot>,
}

/// splitmix64, to derive per-task seeds from the run seed and the task id.
fn mix(seed: u64, task: u64) -> u64 {
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

/// A task's interpreter state: everything `step` needs between awaits.
struct TaskState {
    stack: Vec<Value>,
    frames: Vec<Frame>,
    cur: FuncId,
    pc: usize,
    base: usize,
    budget: u32,
    rng: fastrand::Rng,
}

/// Why `step` stopped: the task ended, or it must await something. The
/// instruction index `at` names the op that waits (its location is the wait's
/// location, and it says where results go).
enum Wait {
    End(TaskEnd),
    Yield,
    Nil {
        at: usize,
    },
    Send {
        ch: Chan<Value>,
        val: Value,
        at: usize,
    },
    Recv {
        ch: Chan<Value>,
        at: usize,
    },
    Select {
        sel: Select<Value>,
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
}

async fn run_task(sh: Arc<Shared>, entry: FuncId, init: Vec<(Slot, Value)>) -> TaskEnd {
    let prog = &sh.prog;
    let Some(f) = prog.funcs.get(entry as usize) else {
        return TaskEnd::Returned;
    };
    let mut stack: Vec<Value> = f.template.to_vec();
    for (s, v) in init {
        if let Some(slot) = stack.get_mut(s as usize) {
            *slot = v;
        }
    }
    let mut st = TaskState {
        stack,
        frames: Vec::new(),
        cur: entry,
        pc: 0,
        base: 0,
        budget: BUDGET,
        rng: fastrand::Rng::with_seed(mix(sh.seed, runtime::current_task())),
    };
    loop {
        match step(&sh, &mut st) {
            Wait::End(end) => return end,
            Wait::Yield => runtime::yield_now().await,
            Wait::Nil { at } => {
                runtime::set_wait(WaitKind::NilChan, st.loc(prog, at));
                std::future::pending::<()>().await;
            }
            Wait::Send { ch, val, at } => {
                runtime::set_wait(WaitKind::ChanSend, st.loc(prog, at));
                let r = ch.send(val).await;
                runtime::clear_wait();
                if r.is_err() {
                    return st.fail(prog, at, "send on closed channel".into());
                }
            }
            Wait::Recv { ch, at } => {
                runtime::set_wait(WaitKind::ChanRecv, st.loc(prog, at));
                let got = ch.recv().await;
                runtime::clear_wait();
                st.deliver(prog, at, got);
            }
            Wait::Select { sel, at } => {
                runtime::set_wait(WaitKind::Select, st.loc(prog, at));
                let chosen = sel.select(&mut st.rng).await;
                runtime::clear_wait();
                if let Err(m) = st.selected(prog, at, chosen) {
                    return st.fail(prog, at, m);
                }
            }
            Wait::Sleep { dur, at } => {
                runtime::set_wait(WaitKind::Sleep, st.loc(prog, at));
                runtime::sleep(dur).await;
                runtime::clear_wait();
            }
            Wait::Tensor { op, args, at } => {
                // A compute pool thread or a device will wake this task: the
                // run is not deadlocked while it waits.
                let _hold = runtime::external_wait();
                let _span = runtime::trace_span(op.name());
                match tensor_ops::run(op, args).await {
                    Ok(v) => st.write_out(prog, at, v),
                    Err(m) => return st.fail(prog, at, m),
                }
            }
        }
    }
}

impl TaskState {
    fn func<'p>(&self, prog: &'p Program) -> Option<&'p Func> {
        prog.funcs.get(self.cur as usize)
    }

    fn loc(&self, prog: &Program, at: usize) -> runtime::SrcLoc {
        loc_of(self.func(prog), at)
    }

    fn fail(&self, prog: &Program, at: usize, msg: Fail) -> TaskEnd {
        TaskEnd::Panic {
            msg,
            loc: self.loc(prog, at),
        }
    }

    fn instr<'p>(&self, prog: &'p Program, at: usize) -> Option<&'p Instr> {
        self.func(prog).and_then(|f| f.code.get(at))
    }

    fn set(&mut self, slot: Slot, v: Value) {
        if let Some(s) = self.stack.get_mut(self.base + slot as usize) {
            *s = v;
        }
    }

    /// Completes a receive that waited.
    fn deliver(&mut self, prog: &Program, at: usize, got: Option<Value>) {
        if let Some(Instr::Recv { out, ok, zero, .. }) = self.instr(prog, at) {
            let okv = got.is_some();
            let (out, ok) = (*out, *ok);
            if let Some(o) = out {
                self.set(o, got.unwrap_or_else(|| zero.clone()));
            }
            if let Some(k) = ok {
                self.set(k, Value::Bool(okv));
            }
        }
    }

    /// Completes a select: stores what the chosen case received and jumps
    /// to its block.
    fn selected(&mut self, prog: &Program, at: usize, chosen: Selected<Value>) -> Result<(), Fail> {
        let Some(Instr::Select { cases, .. }) = self.instr(prog, at) else {
            return Err("select: lost its instruction".into());
        };
        let Some(case) = cases.get(chosen.index) else {
            return Err("select: bad case index".into());
        };
        match chosen.outcome {
            Outcome::Received(got) => {
                let okv = got.is_some();
                if let Some(o) = case.recv {
                    self.set(o, got.unwrap_or_else(|| case.zero.clone()));
                }
                if let Some(k) = case.ok {
                    self.set(k, Value::Bool(okv));
                }
            }
            Outcome::Sent => {}
            Outcome::SendClosed(_) => return Err("send on closed channel".into()),
        }
        self.pc = case.target as usize;
        Ok(())
    }

    /// Stores the result of a tensor op that was awaited.
    fn write_out(&mut self, prog: &Program, at: usize, v: Value) {
        if let Some(Instr::Tensor { out, .. }) = self.instr(prog, at) {
            self.set(*out, v);
        }
    }
}

fn loc_of(f: Option<&Func>, at: usize) -> runtime::SrcLoc {
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
fn step(sh: &Arc<Shared>, st: &mut TaskState) -> Wait {
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
    let fail = |f: &Func, at: usize, msg: Fail| {
        Wait::End(TaskEnd::Panic {
            msg,
            loc: loc_of(Some(f), at),
        })
    };
    let wait: Wait = 'run: loop {
        let at = pc;
        let Some(instr) = f.code.get(at) else {
            break 'run fail(f, at, "program counter out of range".into());
        };
        pc += 1;
        macro_rules! s {
            ($slot:expr) => {
                stack[base + $slot as usize]
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
                put(&mut s!(*out), Value::Int(r));
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
                let mut l = take_or_clone(stack, base, *x, *out);
                tri!(ops::set_index(&mut l, &idx, val));
                s!(*out) = l;
            }
            Instr::Slice { x, lo, hi, out } => {
                let lo = lo.map(|s| &stack[base + s as usize]);
                let hi = hi.map(|s| &stack[base + s as usize]);
                let r = tri!(ops::slice(&s!(*x), lo, hi));
                s!(*out) = r;
            }
            Instr::Append { x, elems, out } => {
                let vals: Vec<Value> = elems.iter().map(|e| s!(*e).clone()).collect();
                let mut l = take_or_clone(stack, base, *x, *out);
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
                let mut sv = take_or_clone(stack, base, *x, *out);
                tri!(ops::set_field(&mut sv, *idx, val));
                s!(*out) = sv;
            }
            Instr::MakeChan { cap, elem, out } => {
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
                let val = s!(*v).clone();
                match tri!(chan_ref(&s!(*ch))) {
                    None => break 'run Wait::Nil { at },
                    Some(c) => match c.try_send(val) {
                        Ok(()) => {}
                        Err(TrySendError::Closed(_)) => {
                            break 'run fail(f, at, "send on closed channel".into())
                        }
                        Err(TrySendError::Full(val)) => {
                            break 'run Wait::Send {
                                ch: c.clone(),
                                val,
                                at,
                            }
                        }
                    },
                }
            }
            Instr::Recv { ch, out, ok, zero } => {
                let got = match tri!(chan_ref(&s!(*ch))) {
                    None => break 'run Wait::Nil { at },
                    Some(c) => match c.try_recv() {
                        Ok(v) => Some(v),
                        Err(TryRecvError::Closed) => None,
                        Err(TryRecvError::Empty) => break 'run Wait::Recv { ch: c.clone(), at },
                    },
                };
                let okv = got.is_some();
                if let Some(o) = out {
                    s!(*o) = got.unwrap_or_else(|| zero.clone());
                }
                if let Some(k) = ok {
                    s!(*k) = Value::Bool(okv);
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
            Instr::Select { cases, default } => {
                let mut sel = Select::new();
                for c in cases.iter() {
                    let ch = tri!(chan_ref(&s!(c.chan))).cloned();
                    match (c.send, c.value) {
                        (true, Some(v)) => sel.send(ch, s!(v).clone()),
                        _ => sel.recv(ch),
                    };
                }
                match sel.try_select(rng) {
                    Some(chosen) => {
                        let Some(case) = cases.get(chosen.index) else {
                            break 'run fail(f, at, "select: bad case index".into());
                        };
                        match chosen.outcome {
                            Outcome::Received(got) => {
                                let okv = got.is_some();
                                if let Some(o) = case.recv {
                                    s!(o) = got.unwrap_or_else(|| case.zero.clone());
                                }
                                if let Some(k) = case.ok {
                                    s!(k) = Value::Bool(okv);
                                }
                            }
                            Outcome::Sent => {}
                            Outcome::SendClosed(_) => {
                                break 'run fail(f, at, "send on closed channel".into())
                            }
                        }
                        pc = case.target as usize;
                    }
                    None => match default {
                        Some(d) => pc = *d as usize,
                        None => break 'run Wait::Select { sel, at },
                    },
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
                let init = captures.iter().map(|c| (*c, s!(*c).clone())).collect();
                if let Err(e) = runtime::spawn(task(sh.clone(), *func, init)) {
                    break 'run fail(f, at, e.to_string());
                }
            }
            Instr::GoCall { func, args } => {
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
                for (slot, v) in stack[nb..top].iter_mut().zip(g.template.iter()) {
                    put(slot, dup(v));
                }
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
                pc = 0;
                base = nb;
                *budget -= 1;
                if *budget == 0 {
                    *budget = BUDGET;
                    break 'run Wait::Yield;
                }
            }
            Instr::Ret { .. } | Instr::End => {
                let v = match instr {
                    Instr::Ret { val: Some(s) } => Some(std::mem::replace(
                        &mut stack[base + *s as usize],
                        Value::Int(0),
                    )),
                    _ => None,
                };
                // Release what the frame holds (its storage stays for the
                // next call): scalars own nothing and are left as they are.
                let top = (base + f.template.len()).min(stack.len());
                for slot in &mut stack[base..top] {
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
                pc = fr.pc as usize;
                base = fr.base;
                if let (Some(r), Some(v)) = (fr.ret, v) {
                    s!(r) = v;
                }
            }
            Instr::Jump { to } => {
                let to = *to as usize;
                pc = to;
                if to <= at {
                    *budget -= 1;
                    if *budget == 0 {
                        *budget = BUDGET;
                        break 'run Wait::Yield;
                    }
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

/// A copy of `v`; scalars without a call into `Clone`.
#[inline(always)]
fn dup(v: &Value) -> Value {
    match v {
        Value::Int(i) => Value::Int(*i),
        Value::Float(x) => Value::Float(*x),
        Value::Bool(b) => Value::Bool(*b),
        other => other.clone(),
    }
}

/// Whether `v` owns nothing (no drop glue to run).
#[inline(always)]
fn is_scalar(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::Float(_) | Value::Bool(_))
}

/// Stores `v` in `slot`; a scalar being overwritten is not passed to the
/// drop glue (it owns nothing).
#[inline(always)]
fn put(slot: &mut Value, v: Value) {
    if is_scalar(slot) {
        std::mem::forget(std::mem::replace(slot, v));
    } else {
        *slot = v;
    }
}

/// The value of `x` for an op whose result replaces `out`: taken (no copy,
/// so copy-on-write can reuse the storage) when `out` is `x`, else cloned.
fn take_or_clone(stack: &mut [Value], base: usize, x: Slot, out: Slot) -> Value {
    let xi = base + x as usize;
    if x == out {
        std::mem::replace(&mut stack[xi], Value::Int(0))
    } else {
        stack[xi].clone()
    }
}

/// A timer duration from milliseconds (clamped, never overflowing).
fn duration(ms: f64) -> Duration {
    Duration::from_secs_f64((ms / 1000.0).clamp(0.0, MAX_SLEEP_S))
}
