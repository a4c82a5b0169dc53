//! The async half of a task: `run_task` is the future the runtime polls. It
//! calls `exec::step` (the dispatch loop, a plain function) and awaits what
//! `step` stopped for: a channel operation that must park, a select, a
//! sleep, a yield, a tensor kernel or a received tensor's readiness; then it
//! writes the result back (found from the waiting instruction's index) and
//! calls `step` again.
//!
//! Blocking protocol: `step` has already tried the non-blocking form; here
//! the wait is recorded (`runtime::set_wait`) for deadlock reports, the
//! channel's future awaited, and the record cleared (`runtime::clear_wait`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use weft_chan::{select_on, Chan, Outcome, Selected, WaitSlot};
use weft_rt::{self as runtime, TaskEnd, WaitKind};
use weft_tensor::Tensor;

use super::code::{Func, FuncId, Instr, Program, Slot};
use super::exec::{
    case_end, in_flight, loc_of, mix, step, FrameCases, Shared, TaskState, Wait, BUDGET,
};
use super::ops::Fail;
use super::tensor_ops;
use super::value::Value;

/// A boxed task future (boxing breaks the type cycle of tasks that spawn
/// tasks).
pub(super) type TaskFuture = Pin<Box<dyn Future<Output = TaskEnd> + Send + 'static>>;

/// The future of a task that runs `func` with the given slots preset (the
/// arguments of a call, or the captured variables of a go block).
pub(super) fn task(sh: Arc<Shared>, func: FuncId, init: Vec<(Slot, Value)>) -> TaskFuture {
    Box::pin(run_task(sh, func, init))
}

async fn run_task(sh: Arc<Shared>, entry: FuncId, init: Vec<(Slot, Value)>) -> TaskEnd {
    let prog = &sh.prog;
    let Some(f) = prog.funcs.get(entry as usize) else {
        return TaskEnd::Returned;
    };
    if runtime::tracing() {
        runtime::set_task_name(f.name.clone());
    }
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
    // The context every wait of this task parks with (one allocation).
    let mut slot = WaitSlot::new();
    loop {
        // Whether the wait below parks the task: a channel wait that
        // queued in `slot`, a sleep, a kernel.
        let waits = slot.waits();
        let mut parked = false;
        match step(&sh, &mut st) {
            Wait::End(end) => return end,
            Wait::Yield => runtime::yield_now().await,
            Wait::Nil { at } => {
                st.wait(prog, WaitKind::NilChan, at);
                std::future::pending::<()>().await;
            }
            Wait::Send { ch, val, at } => {
                let Some(c) = st.chan_at(ch) else {
                    return st.fail(prog, at, "send: lost its channel".into());
                };
                st.wait(prog, WaitKind::ChanSend, at);
                let r = c.send_in(val, &mut slot).await;
                runtime::clear_wait();
                if r.is_err() {
                    return st.fail(prog, at, "send on closed channel".into());
                }
            }
            Wait::Recv { ch, at } => {
                let Some(c) = st.chan_at(ch) else {
                    return st.fail(prog, at, "receive: lost its channel".into());
                };
                st.wait(prog, WaitKind::ChanRecv, at);
                let got = c.recv_in(&mut slot).await;
                runtime::clear_wait();
                if let Some(t) = st.deliver(prog, at, got) {
                    if let Err(m) = wait_ready(&t).await {
                        return st.fail(prog, at, m);
                    }
                }
            }
            Wait::Select { at } => {
                let Some(Instr::Select { cases, .. }) = st.instr(prog, at) else {
                    return st.fail(prog, at, "select: lost its instruction".into());
                };
                let fs = st.stack.get(st.base..).unwrap_or_default();
                let src = match FrameCases::new(cases, fs) {
                    Ok(src) => src,
                    Err(m) => return st.fail(prog, at, m),
                };
                let chosen = {
                    let mut fut = select_on(&src, &mut st.rng, &mut slot);
                    // The wait is recorded only if the select parks.
                    match poll_once(&mut fut).await {
                        Poll::Ready(chosen) => chosen,
                        Poll::Pending => {
                            st.wait(prog, WaitKind::Select, at);
                            let chosen = fut.await;
                            runtime::clear_wait();
                            chosen
                        }
                    }
                };
                match st.selected(prog, at, chosen) {
                    Err(end) => return end,
                    Ok(Some(t)) => {
                        if let Err(m) = wait_ready(&t).await {
                            return st.fail(prog, at, m);
                        }
                    }
                    Ok(None) => {}
                }
            }
            Wait::Sleep { dur, at } => {
                st.wait(prog, WaitKind::Sleep, at);
                runtime::sleep(dur).await;
                parked = true;
                runtime::clear_wait();
            }
            Wait::Ready { t, at } => {
                if let Err(m) = wait_ready(&t).await {
                    return st.fail(prog, at, m);
                }
            }
            Wait::Tensor { op, args, at } => {
                // A compute pool thread or a device will wake this task: the
                // run is not deadlocked while it waits.
                let _hold = runtime::external_wait();
                let _span = runtime::trace_span(op.name());
                parked = true;
                match tensor_ops::run(op, args).await {
                    Ok(v) => st.write_out(prog, at, v),
                    Err(m) => return st.fail(prog, at, m),
                }
            }
        }
        if parked || slot.waits() != waits {
            // The task waited: its time slice ended, and the next one starts
            // with a full budget (Go gives a goroutine a fresh slice each time
            // it is scheduled; tokio refills its budget every poll). Carried
            // across waits, the budget made tasks that block all the time
            // yield every `BUDGET` back edges, and each of those yields woke
            // an idle worker to share work that does not pay to share. A
            // wait that completes without queueing keeps the budget, so a
            // task whose partners are always ready still yields.
            st.budget = BUDGET;
        }
    }
}

/// Polls `fut` once, within the caller's poll.
async fn poll_once<F: Future + Unpin>(fut: &mut F) -> Poll<F::Output> {
    std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut *fut).poll(cx))).await
}

/// Bits of a site number that hold the instruction index; the function
/// index sits above them (sites are below 2^56, see `runtime::set_wait_site`).
const SITE_PC_BITS: u32 = 28;

/// The site number of instruction `at` of function `func`, if it fits.
#[inline]
fn site_of(func: FuncId, at: usize) -> Option<u64> {
    let (func, at) = (u64::from(func), at as u64);
    (at < 1 << SITE_PC_BITS && func < 1 << (56 - SITE_PC_BITS)).then_some(func << SITE_PC_BITS | at)
}

/// The location of a site made by `site_of` (the runtime's resolver).
pub(super) fn site_loc(prog: &Program, site: u64) -> runtime::SrcLoc {
    let func = prog.funcs.get((site >> SITE_PC_BITS) as usize);
    loc_of(func, (site & ((1 << SITE_PC_BITS) - 1)) as usize)
}

impl TaskState {
    /// The channel in slot `slot` of the current frame (`None`: nil, or not
    /// a channel, which `step` has ruled out before waiting on it).
    fn chan_at(&self, slot: Slot) -> Option<&Chan<Value>> {
        match self.stack.get(self.base + slot as usize) {
            Some(Value::Chan(c)) => c.ch.as_ref(),
            _ => None,
        }
    }

    fn func<'p>(&self, prog: &'p Program) -> Option<&'p Func> {
        prog.funcs.get(self.cur as usize)
    }

    fn loc(&self, prog: &Program, at: usize) -> runtime::SrcLoc {
        loc_of(self.func(prog), at)
    }

    /// Records the wait of the instruction at `at` for deadlock reports:
    /// as a site number (no allocation, see `site_loc`) when it fits.
    #[inline]
    fn wait(&self, prog: &Program, kind: WaitKind, at: usize) {
        match site_of(self.cur, at) {
            Some(site) => runtime::set_wait_site(kind, site),
            None => runtime::set_wait(kind, self.loc(prog, at)),
        }
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

    /// Completes a receive that waited; returns a received tensor to wait
    /// for.
    fn deliver(&mut self, prog: &Program, at: usize, got: Option<Value>) -> Option<Box<Tensor>> {
        let pending = got.as_ref().and_then(in_flight);
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
        pending
    }

    /// Completes a select: stores what the chosen case received and jumps
    /// to its block; returns a received tensor to wait for.
    fn selected(
        &mut self,
        prog: &Program,
        at: usize,
        chosen: Selected<Value>,
    ) -> Result<Option<Box<Tensor>>, TaskEnd> {
        let Some(Instr::Select { cases, .. }) = self.instr(prog, at) else {
            return Err(self.fail(prog, at, "select: lost its instruction".into()));
        };
        let Some(case) = cases.get(chosen.index) else {
            return Err(self.fail(prog, at, "select: bad case index".into()));
        };
        let mut pending = None;
        match chosen.outcome {
            Outcome::Received(got) => {
                let okv = got.is_some();
                pending = got.as_ref().and_then(in_flight);
                if let Some(o) = case.recv {
                    self.set(o, got.unwrap_or_else(|| case.zero.clone()));
                }
                if let Some(k) = case.ok {
                    self.set(k, Value::Bool(okv));
                }
            }
            Outcome::Sent => {}
            Outcome::SendClosed(_) => {
                return Err(case_end(
                    self.func(prog),
                    at,
                    case,
                    "send on closed channel",
                ))
            }
        }
        self.pc = case.target as usize;
        Ok(pending)
    }

    /// Stores the result of a tensor op that was awaited.
    fn write_out(&mut self, prog: &Program, at: usize, v: Value) {
        if let Some(Instr::Tensor { out, .. }) = self.instr(prog, at) {
            self.set(*out, v);
        }
    }
}

/// Waits until a received tensor's values are on its device. A device or
/// the compute pool, not a task, wakes the waiter: not a deadlock.
async fn wait_ready(t: &Tensor) -> Result<(), Fail> {
    let _hold = runtime::external_wait();
    t.ready().await.map_err(|e| e.to_string())
}
