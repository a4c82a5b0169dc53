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

use crate::chan::{Chan, Outcome, Select, TryRecvError, TrySendError};
use crate::runtime::{self, TaskEnd, WaitKind};

use super::code::Program;
use super::code::{Func, FuncId, Instr, Pc, Slot};
use super::ops::{self, kind_error, Fail};
use super::output::Output;
use super::tensor_ops;
use super::value::{ChanVal, Ty, Value};

/// Backward jumps and calls a task runs before it yields.
const BUDGET: u32 = 2000;
/// The most values one task's stack may hold (about 400 MB).
const MAX_STACK: usize = 1 << 24;
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

/// What a receive does after its non-blocking attempt.
enum Step<T> {
    Done(T),
    Wait(Chan<Value>),
    Nil,
}

/// What a send does after its non-blocking attempt.
enum SendStep {
    Sent,
    Wait(Chan<Value>, Value),
    Nil,
}

async fn run_task(sh: Arc<Shared>, entry: FuncId, init: Vec<(Slot, Value)>) -> TaskEnd {
    let prog = &sh.prog;
    let Some(mut f) = prog.funcs.get(entry as usize) else {
        return TaskEnd::Returned;
    };
    let mut cur = entry;
    let mut stack: Vec<Value> = f.template.to_vec();
    for (s, v) in init {
        if let Some(slot) = stack.get_mut(s as usize) {
            *slot = v;
        }
    }
    let mut frames: Vec<Frame> = Vec::new();
    let mut base = 0usize;
    let mut pc = 0usize;
    let mut budget = BUDGET;
    let mut rng = fastrand::Rng::with_seed(mix(sh.seed, runtime::current_task()));

    // Fails the task with `msg` at the instruction `at`.
    fn fail(f: &Func, at: usize, msg: Fail) -> TaskEnd {
        let loc = f
            .locs
            .get(at)
            .or(f.locs.last())
            .cloned()
            .unwrap_or_else(|| runtime::SrcLoc {
                file: Arc::from("?"),
                line: 0,
                col: 0,
            });
        TaskEnd::Panic { msg, loc }
    }

    loop {
        let at = pc;
        let Some(instr) = f.code.get(at) else {
            return fail(f, at, "program counter out of range".into());
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
                    Err(m) => return fail(f, at, m),
                }
            };
        }
        macro_rules! loc {
            () => {
                f.locs.get(at).cloned().unwrap_or_else(|| runtime::SrcLoc {
                    file: Arc::from("?"),
                    line: 0,
                    col: 0,
                })
            };
        }
        match instr {
            Instr::Const { out, val } => s!(*out) = val.clone(),
            Instr::Copy { x, out } => s!(*out) = s!(*x).clone(),
            Instr::Int { op, x, y, out } => {
                let r = match (&s!(*x), &s!(*y)) {
                    (Value::Int(a), Value::Int(b)) => tri!(ops::int_op(*op, *a, *b)),
                    (a, _) => return fail(f, at, kind_error("int op", a)),
                };
                s!(*out) = Value::Int(r);
            }
            Instr::Float { op, x, y, out } => {
                let r = match (&s!(*x), &s!(*y)) {
                    (Value::Float(a), Value::Float(b)) => ops::float_op(*op, *a, *b),
                    (a, _) => return fail(f, at, kind_error("float op", a)),
                };
                s!(*out) = Value::Float(r);
            }
            Instr::Concat { x, y, out } => {
                let r = match (&s!(*x), &s!(*y)) {
                    (Value::Str(a), Value::Str(b)) => {
                        let mut c = String::with_capacity(a.len() + b.len());
                        c.push_str(a);
                        c.push_str(b);
                        Value::Str(Arc::from(c))
                    }
                    (a, _) => return fail(f, at, kind_error("concat", a)),
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
                let r = tri!(ops::compare(*op, *kind, &s!(*x), &s!(*y)));
                s!(*out) = Value::Bool(r);
            }
            Instr::NegInt { x, out } => {
                let r = tri!(ops::as_int(&s!(*x)));
                s!(*out) = Value::Int(r.wrapping_neg());
            }
            Instr::NegFloat { x, out } => {
                let r = match &s!(*x) {
                    Value::Float(a) => -*a,
                    a => return fail(f, at, kind_error("neg", a)),
                };
                s!(*out) = Value::Float(r);
            }
            Instr::Not { x, out } => {
                let r = !s!(*x).truthy();
                s!(*out) = Value::Bool(r);
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
                let mut l = take_or_clone(&mut stack, base, *x, *out);
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
                let mut l = take_or_clone(&mut stack, base, *x, *out);
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
                let mut st = take_or_clone(&mut stack, base, *x, *out);
                tri!(ops::set_field(&mut st, *idx, val));
                s!(*out) = st;
            }
            Instr::MakeChan { cap, elem, out } => {
                let n = match cap {
                    Some(c) => tri!(ops::as_int(&s!(*c))),
                    None => 0,
                };
                if !(0..=MAX_CAP).contains(&n) {
                    return fail(f, at, "makechan: size out of range".into());
                }
                s!(*out) = Value::Chan(Box::new(ChanVal {
                    ch: Some(Chan::new(n as usize)),
                    elem: elem.clone(),
                }));
            }
            Instr::Send { ch, v } => {
                let val = s!(*v).clone();
                let step = match tri!(chan_ref(&s!(*ch))) {
                    None => SendStep::Nil,
                    Some(c) => match c.try_send(val) {
                        Ok(()) => SendStep::Sent,
                        Err(TrySendError::Closed(_)) => {
                            return fail(f, at, "send on closed channel".into())
                        }
                        Err(TrySendError::Full(val)) => SendStep::Wait(c.clone(), val),
                    },
                };
                match step {
                    SendStep::Sent => {}
                    SendStep::Nil => block_forever(WaitKind::NilChan, loc!()).await,
                    SendStep::Wait(c, val) => {
                        runtime::set_wait(WaitKind::ChanSend, loc!());
                        let r = c.send(val).await;
                        runtime::clear_wait();
                        if r.is_err() {
                            return fail(f, at, "send on closed channel".into());
                        }
                    }
                }
            }
            Instr::Recv { ch, out, ok, zero } => {
                let step = match tri!(chan_ref(&s!(*ch))) {
                    None => Step::Nil,
                    Some(c) => match c.try_recv() {
                        Ok(v) => Step::Done(Some(v)),
                        Err(TryRecvError::Closed) => Step::Done(None),
                        Err(TryRecvError::Empty) => Step::Wait(c.clone()),
                    },
                };
                let got = match step {
                    Step::Done(v) => v,
                    Step::Nil => block_forever(WaitKind::NilChan, loc!()).await,
                    Step::Wait(c) => {
                        runtime::set_wait(WaitKind::ChanRecv, loc!());
                        let r = c.recv().await;
                        runtime::clear_wait();
                        r
                    }
                };
                let (v, okv) = match got {
                    Some(v) => (tri!(tensor_ops::arrived(v).await), true),
                    None => (zero.clone(), false),
                };
                if let Some(o) = out {
                    s!(*o) = v;
                }
                if let Some(k) = ok {
                    s!(*k) = Value::Bool(okv);
                }
            }
            Instr::Close { ch } => match tri!(chan_ref(&s!(*ch))) {
                None => return fail(f, at, "close of nil channel".into()),
                Some(c) => {
                    if c.close().is_err() {
                        return fail(f, at, "close of closed channel".into());
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
                let chosen = match sel.try_select(&mut rng) {
                    Some(c) => c,
                    None => {
                        if let Some(d) = default {
                            pc = *d as usize;
                            continue;
                        }
                        runtime::set_wait(WaitKind::Select, loc!());
                        let c = sel.select(&mut rng).await;
                        runtime::clear_wait();
                        c
                    }
                };
                let Some(case) = cases.get(chosen.index) else {
                    return fail(f, at, "select: bad case index".into());
                };
                match chosen.outcome {
                    Outcome::Received(got) => {
                        let (v, okv) = match got {
                            Some(v) => (tri!(tensor_ops::arrived(v).await), true),
                            None => (case.zero.clone(), false),
                        };
                        if let Some(o) = case.recv {
                            s!(o) = v;
                        }
                        if let Some(k) = case.ok {
                            s!(k) = Value::Bool(okv);
                        }
                    }
                    Outcome::Sent => {}
                    Outcome::SendClosed(_) => return fail(f, at, "send on closed channel".into()),
                }
                pc = case.target as usize;
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
                    runtime::yield_now().await;
                } else {
                    runtime::set_wait(WaitKind::Sleep, loc!());
                    runtime::sleep(duration(ms)).await;
                    runtime::clear_wait();
                }
            }
            Instr::Go { func, captures } => {
                let init = captures.iter().map(|c| (*c, s!(*c).clone())).collect();
                if let Err(e) = runtime::spawn(task(sh.clone(), *func, init)) {
                    return fail(f, at, e.to_string());
                }
            }
            Instr::GoCall { func, args } => {
                let Some(g) = prog.funcs.get(*func as usize) else {
                    return fail(f, at, "unknown function".into());
                };
                let init = g
                    .params
                    .iter()
                    .zip(args.iter())
                    .map(|(p, a)| (*p, s!(*a).clone()))
                    .collect();
                if let Err(e) = runtime::spawn(task(sh.clone(), *func, init)) {
                    return fail(f, at, e.to_string());
                }
            }
            Instr::Call { func, args, out } => {
                let Some(g) = prog.funcs.get(*func as usize) else {
                    return fail(f, at, "unknown function".into());
                };
                let nb = stack.len();
                if nb + g.template.len() > MAX_STACK {
                    return fail(f, at, "stack overflow".into());
                }
                stack.extend_from_slice(&g.template);
                for (p, a) in g.params.iter().zip(args.iter()) {
                    let v = stack[base + *a as usize].clone();
                    stack[nb + *p as usize] = v;
                }
                frames.push(Frame {
                    func: cur,
                    pc: pc as Pc,
                    base,
                    ret: *out,
                });
                cur = *func;
                f = g;
                pc = 0;
                base = nb;
                budget -= 1;
                if budget == 0 {
                    budget = BUDGET;
                    runtime::yield_now().await;
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
                stack.truncate(base);
                let Some(fr) = frames.pop() else {
                    return TaskEnd::Returned;
                };
                cur = fr.func;
                let Some(g) = prog.funcs.get(cur as usize) else {
                    return TaskEnd::Returned;
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
                if to <= at {
                    budget -= 1;
                    if budget == 0 {
                        budget = BUDGET;
                        pc = to;
                        runtime::yield_now().await;
                        continue;
                    }
                }
                pc = to;
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
            Instr::Panic { msg } => return fail(f, at, s!(*msg).to_display()),
            Instr::Assert { cond, msg } => {
                if !s!(*cond).truthy() {
                    let m = format!("assertion failed: {}", s!(*msg).to_display());
                    return fail(f, at, m);
                }
            }
            Instr::Exit { code } => return TaskEnd::Exit(tri!(ops::as_int(&s!(*code))) as i32),
            Instr::Now { out } => s!(*out) = Value::Float(runtime::now_ms()),
            Instr::Args { out } => s!(*out) = sh.args.clone(),
            Instr::Rand { n, out } => {
                let n = tri!(ops::as_int(&s!(*n)));
                if n <= 0 {
                    return fail(f, at, "rand: n must be positive".into());
                }
                s!(*out) = Value::Int(rng.i64(0..n));
            }
            Instr::Perm { n, out } => {
                let n = tri!(ops::as_int(&s!(*n)));
                if !(0..=1 << 32).contains(&n) {
                    return fail(f, at, "perm: n out of range".into());
                }
                let mut p: Vec<Value> = (0..n).map(Value::Int).collect();
                rng.shuffle(&mut p);
                s!(*out) = Value::list(p);
            }
            Instr::Tensor { op, ins, out } => {
                let args: Vec<Value> = ins.iter().map(|a| s!(*a).clone()).collect();
                let r = tri!(tensor_ops::run(*op, args).await);
                s!(*out) = r;
            }
        }
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

/// Blocks this task forever (send or receive on a nil channel).
async fn block_forever<T>(kind: WaitKind, loc: runtime::SrcLoc) -> T {
    runtime::set_wait(kind, loc);
    std::future::pending::<T>().await
}

/// A timer duration from milliseconds (clamped, never overflowing).
fn duration(ms: f64) -> Duration {
    Duration::from_secs_f64((ms / 1000.0).clamp(0.0, MAX_SLEEP_S))
}
