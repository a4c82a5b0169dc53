//! The test-mode half of a task (`weft test`, docs/testing-programs.md):
//! what `run_task` does at a scheduling point (`Instr::Point`, which the
//! lowering for tests puts before every operation the controlled executor
//! must see).
//!
//! At a point the task announces the next instruction's operation to the
//! runtime (`runtime::sched_point`: its kind, its site, and the numbers of
//! the channels it touches) and yields; the executor resumes it when it is
//! chosen, and `step` runs the instruction. Four kinds of instruction are
//! run here instead, because their result is one of the run's decisions or
//! the run must note it: `select` (which ready case fires is
//! `runtime::choose`; a preferred case may be waited for first,
//! `runtime::prefer_case`), `rand` (`runtime::choose`), `perm` (shuffled
//! with `runtime::choose_word`), and channel creation (`make`, `after`:
//! the channel gets its number, `TestState`).

use std::ops::ControlFlow;
use std::sync::Arc;

use weft_chan::{select_on, try_select_on, Cases, Chan, Selected, WaitSlot};
use weft_rt::{
    self as runtime, Objects, Op, OpKind, PickKind, WaitKind, COLLECTIVES, FILES, STDOUT,
};

use super::code::{Func, Instr, Pc, SelCase, Slot};
use super::complete::{complete_select, FrameCases};
use super::error::{InternalError, RuntimeError};
use super::exec;
use super::state::{loc_of, site_of, Failure, InFlight, Shared, TaskState, TestState, Wait};
use super::value::Value;

/// The scheduling point at `at` (a `Point`) of the task's current function.
/// Afterwards `st.pc` is where the task goes on: the next instruction, or
/// past it when it was run here. Returns received tensors the task must
/// wait for (a `select` that received them).
pub(super) async fn point(
    sh: &Arc<Shared>,
    st: &mut TaskState,
    at: usize,
    slot: &mut WaitSlot<Value>,
) -> Result<Option<InFlight>, Failure> {
    let prog = sh.prog.clone();
    let Some(test) = &sh.test else {
        return Err(st.failure(&prog, at, InternalError::LostInstruction("point").into()));
    };
    let Some(f) = st.func(&prog) else {
        return Err(Failure::at(
            None,
            at,
            InternalError::NoFunction(st.cur).into(),
        ));
    };
    let next = at + 1;
    let Some(instr) = f.code.get(next) else {
        return Err(Failure::at(
            Some(f),
            at,
            InternalError::LostInstruction("point").into(),
        ));
    };
    let site = site_of(st.cur, next).unwrap_or(0);
    let loc = || loc_of(Some(f), next);
    let on = |st: &TaskState, kind: OpKind, ch: Slot| {
        let objs = chan_objs(test, frame(st), &[ch], &loc());
        Op::new(kind, site, objs)
    };
    let fail = |e: RuntimeError| Failure::at(Some(f), next, e);
    match instr {
        Instr::Send { ch, .. } => runtime::sched_point(on(st, OpKind::Send, *ch)).await,
        Instr::Recv { ch, .. } => runtime::sched_point(on(st, OpKind::Recv, *ch)).await,
        Instr::Close { ch } => runtime::sched_point(on(st, OpKind::Close, *ch)).await,
        Instr::Len { x, .. } => runtime::sched_point(on(st, OpKind::Len, *x)).await,
        // `lines` starts the task that reads the input.
        Instr::Go { .. } | Instr::GoCall { .. } | Instr::GoValue { .. } | Instr::Lib { .. }
            if !instr.touches_files() =>
        {
            runtime::sched_point(Op::local(OpKind::Go, site)).await
        }
        Instr::Collective(_) => {
            let mut objs = Objects::new();
            objs.push(COLLECTIVES);
            runtime::sched_point(Op::new(OpKind::Collective, site, objs)).await
        }
        _ if instr.touches_files() => {
            let mut objs = Objects::new();
            objs.push(FILES);
            runtime::sched_point(Op::new(OpKind::File, site, objs)).await
        }
        Instr::Print { .. } => {
            let mut objs = Objects::new();
            objs.push(STDOUT);
            runtime::sched_point(Op::new(OpKind::Print, site, objs)).await
        }
        Instr::Select { cases, default } => {
            return select(sh, test, st, f, next, cases, *default, slot, site).await;
        }
        Instr::MakeChan { cap, elem, out } => {
            let made = exec::make_chan(sh.mem, st.frame_mut(), f, next, *cap, elem, *out);
            went_on(made)?;
            number_made(test, frame(st), *out, &loc());
            st.pc = next + 1;
        }
        Instr::After { ms, out } => {
            went_on(exec::after(sh, st.frame_mut(), f, next, *ms, *out))?;
            number_made(test, frame(st), *out, &loc());
            st.pc = next + 1;
        }
        Instr::Rand { n, out } => {
            let n = match frame(st).get(*n as usize) {
                Some(Value::Int(n)) => *n,
                _ => return Err(fail(InternalError::LostInstruction("rand").into())),
            };
            if n <= 0 {
                return Err(fail(RuntimeError::RandNotPositive));
            }
            let v = runtime::choose(PickKind::Rand, usize::try_from(n).unwrap_or(usize::MAX))
                .unwrap_or(0);
            st.frame_mut()[*out as usize] = Value::Int(v as i64);
            st.pc = next + 1;
        }
        Instr::Perm { n, out } => {
            let mut rng = fastrand::Rng::with_seed(runtime::choose_word().unwrap_or(0));
            went_on(exec::perm(
                sh.mem,
                st.frame_mut(),
                &mut rng,
                f,
                next,
                *n,
                *out,
            ))?;
            st.pc = next + 1;
        }
        _ => {}
    }
    Ok(None)
}

/// The current frame.
fn frame(st: &TaskState) -> &[Value] {
    st.stack.get(st.base..).unwrap_or_default()
}

/// An instruction run here went on, or failed.
fn went_on(flow: ControlFlow<Wait>) -> Result<(), Failure> {
    match flow {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(Wait::Fail(f)) => Err(*f),
        ControlFlow::Break(_) => Err(Failure {
            err: InternalError::LostInstruction("point").into(),
            loc: weft_rt::SrcLoc::new("?", 0, 0),
        }),
    }
}

/// Numbers the channel just made into slot `out`, and tells the runtime.
fn number_made(test: &TestState, fs: &[Value], out: Slot, loc: &weft_rt::SrcLoc) {
    if let Some(Value::Chan(c)) = fs.get(out as usize) {
        if let Some(ch) = &c.ch {
            runtime::made(test.chan_number(ch, loc));
        }
    }
}

/// The numbers of the (non-nil) channels in `slots`.
fn chan_objs(test: &TestState, fs: &[Value], slots: &[Slot], loc: &weft_rt::SrcLoc) -> Objects {
    let mut objs = Objects::new();
    for s in slots {
        if let Some(Value::Chan(c)) = fs.get(*s as usize) {
            if let Some(ch) = &c.ch {
                let n = test.chan_number(ch, loc);
                if !objs.contains(&n) {
                    objs.push(n);
                }
            }
        }
    }
    objs
}

/// Whether case `i` of a select could fire now.
fn ready(src: &FrameCases<'_>, i: usize) -> bool {
    match src.chan(i) {
        None => false,
        Some(c) if src.is_send(i) => c.send_ready(),
        Some(c) => c.recv_ready(),
    }
}

/// One case of a select, the others nil: firing it alone.
struct OneCase<'a, 's> {
    src: &'a FrameCases<'s>,
    case: usize,
}

impl Cases<Value> for OneCase<'_, '_> {
    fn count(&self) -> usize {
        self.src.count()
    }
    fn chan(&self, i: usize) -> Option<&Chan<Value>> {
        if i == self.case {
            self.src.chan(i)
        } else {
            None
        }
    }
    fn is_send(&self, i: usize) -> bool {
        self.src.is_send(i)
    }
    fn take_value(&self, i: usize) -> Option<Value> {
        self.src.take_value(i)
    }
    fn put_back(&self, i: usize, v: Value) {
        self.src.put_back(i, v);
    }
}

/// A `select` in a controlled run (at `at`, its `Point` just before): a
/// preferred case waited for first if the chooser wants one, then one of
/// the ready cases chosen by the run's decisions, else `default`, else
/// the task blocks until a partner completes one case.
#[allow(clippy::too_many_arguments)]
async fn select(
    sh: &Arc<Shared>,
    test: &TestState,
    st: &mut TaskState,
    f: &Func,
    at: usize,
    cases: &[SelCase],
    default: Option<Pc>,
    slot: &mut WaitSlot<Value>,
    site: u64,
) -> Result<Option<InFlight>, Failure> {
    let prog = sh.prog.clone();
    let slots: Vec<Slot> = cases.iter().map(|c| c.chan).collect();
    let op = |st: &TaskState| {
        let objs = chan_objs(test, frame(st), &slots, &loc_of(Some(f), at));
        Op::new(OpKind::Select, site, objs)
    };
    runtime::sched_point(op(st)).await;
    let live: Vec<usize> = {
        let src = FrameCases::new(cases, frame(st)).map_err(|e| Failure::at(Some(f), at, e))?;
        (0..cases.len())
            .filter(|&i| src.chan(i).is_some())
            .collect()
    };
    // GFuzz's enforcement: wait for the preferred case until it can fire or
    // every task is blocked.
    let options = live.len() + usize::from(default.is_some());
    let preferred = if options > 1 {
        runtime::prefer_case(live.len()).and_then(|k| live.get(k).copied())
    } else {
        None
    };
    if let Some(p) = preferred {
        loop {
            let waiting = {
                let src =
                    FrameCases::new(cases, frame(st)).map_err(|e| Failure::at(Some(f), at, e))?;
                if ready(&src, p) {
                    let chosen = fire(&src, p, &mut fastrand::Rng::with_seed(0));
                    return completed(st, f, at, cases, chosen);
                }
                let Some(ch) = src.chan(p).cloned() else {
                    break;
                };
                let send = src.is_send(p);
                move || {
                    if send {
                        ch.send_ready()
                    } else {
                        ch.recv_ready()
                    }
                }
            };
            st.record_wait(&prog, WaitKind::Select, at);
            let met = runtime::delay_until(Box::new(waiting)).await;
            runtime::clear_wait();
            runtime::sched_point(op(st)).await;
            if !met {
                break;
            }
        }
    }
    {
        let src = FrameCases::new(cases, frame(st)).map_err(|e| Failure::at(Some(f), at, e))?;
        let now: Vec<usize> = live.iter().copied().filter(|&i| ready(&src, i)).collect();
        if !now.is_empty() {
            let k = runtime::choose(PickKind::Case, now.len()).unwrap_or(0);
            let i = now.get(k).copied().unwrap_or(now[0]);
            let chosen = fire(&src, i, &mut fastrand::Rng::with_seed(0));
            return completed(st, f, at, cases, chosen);
        }
    }
    if let Some(d) = default {
        st.pc = d as usize;
        return Ok(None);
    }
    // Nothing can fire: block on every case until a partner completes one.
    st.record_wait(&prog, WaitKind::Select, at);
    let chosen = {
        let fs = st.stack.get(st.base..).unwrap_or_default();
        let src = FrameCases::new(cases, fs).map_err(|e| Failure::at(Some(f), at, e))?;
        select_on(&src, &mut st.rng, slot).await
    };
    runtime::clear_wait();
    completed(st, f, at, cases, chosen)
}

/// Fires case `i`, which is ready (one thread runs every party, so it is
/// still ready).
fn fire(src: &FrameCases<'_>, i: usize, rng: &mut fastrand::Rng) -> Option<Selected<Value>> {
    try_select_on(&OneCase { src, case: i }, rng)
}

/// Completes a fired select: the case's block is next.
fn completed(
    st: &mut TaskState,
    f: &Func,
    at: usize,
    cases: &[SelCase],
    chosen: impl Into<Option<Selected<Value>>>,
) -> Result<Option<InFlight>, Failure> {
    let Some(chosen) = chosen.into() else {
        let bug = InternalError::LostInstruction("select");
        return Err(Failure::at(Some(f), at, bug.into()));
    };
    let (target, pending) = complete_select(st.frame_mut(), f, at, cases, chosen)?;
    st.pc = target;
    Ok(pending)
}
