//! The async half of a task: `run_task` is the future the runtime polls. It
//! calls `exec::step` (the dispatch loop, a plain function) and awaits what
//! `step` stopped for: a channel operation that must park, a select, a
//! sleep, a yield, a tensor kernel, a received tensor's readiness or the
//! other members of a collective; then it
//! completes the waiting instruction (found from its index; a receive or
//! select through `complete.rs`, as `step` does when it need not wait) and
//! calls `step` again. A task that fails ends here (`Shared::end_failed`).
//!
//! Blocking protocol: `step` has already tried the non-blocking form; here
//! the wait is recorded (`runtime::set_wait`) for deadlock reports, the
//! channel's future awaited, and the record cleared (`runtime::clear_wait`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use weft_chan::{select_on_locked, Chan, WaitSlot};
use weft_rt::{self as runtime, Op, OpKind, TaskEnd, WaitKind};
use weft_tensor::Tensor;

use super::code::{Func, FuncId, Instr, Program, Slot};
use super::coll_ops;
use super::complete::{complete_recv, complete_select, FrameCases};
use super::control;
use super::error::{InternalError, RuntimeError};
use super::exec::{step, TIMER_BYTES};
use super::frame::dup;
use super::state::{
    loc_of, mix, site_of, CollWait, Failure, InFlight, Shared, TaskFuture, TaskState, Wait, BUDGET,
};
use super::tensor_ops;
use super::value::{closed_error, CommVal, FarChan, Value};
use super::xproc;

/// What the runtime keeps for a task besides its future (its record, its
/// waker, its place in the registry) and the task's wait slot: what the
/// memory ceiling's check counts for them at `go`.
const TASK_RECORD_BYTES: usize = 512;

/// The bytes a new task takes before its stack: its future (the state of
/// `run_task`) and what the runtime keeps for it.
pub(super) fn task_bytes() -> usize {
    fn future_bytes<F, Fut>(_: &F) -> usize
    where
        F: Fn(Arc<Shared>, TaskState) -> Fut,
    {
        std::mem::size_of::<Fut>()
    }
    future_bytes(&run_task) + TASK_RECORD_BYTES
}

/// The future of a task that runs `func` with the given slots preset (the
/// arguments of a call, or the captured variables of a go block), placed
/// on `device`. `go` reaches it through `Shared::spawn`.
///
/// The task's state is built here, before the task first runs, so that the
/// future holds only `sh` and the state: an `async fn`'s arguments stay in
/// its future for its whole life, and taking `init` and `device` as
/// arguments cost every blocked task their bytes twice over.
pub(super) fn task(
    sh: Arc<Shared>,
    func: FuncId,
    init: Vec<(Slot, Value)>,
    device: Arc<str>,
) -> TaskFuture {
    // `entry`: its parameters or captures, which `init` holds, and the
    // slots written before they are read start as scalars.
    let entry = sh.prog.funcs.get(func as usize).map(|f| &*f.entry);
    let mut stack: Vec<Value> = entry.unwrap_or_default().to_vec();
    for (s, v) in init {
        if let Some(slot) = stack.get_mut(s as usize) {
            *slot = v;
        }
    }
    let st = TaskState {
        stack,
        frames: Vec::new(),
        cur: func,
        pc: 0,
        base: 0,
        budget: BUDGET,
        // Seeded when the task first runs (the seed mixes in its number).
        rng: fastrand::Rng::with_seed(0),
        device,
    };
    Box::pin(run_task(sh, st))
}

/// A task's name in the trace: its function's, or for a go block (lowered
/// as a function `FN.goN`) "go block in FN, line L", L the line of its `go`
/// statement (read from the parent's `Go` instruction; tracing runs only).
fn trace_name(prog: &Program, entry: FuncId) -> Arc<str> {
    let Some(f) = prog.funcs.get(entry as usize) else {
        return Arc::from("?");
    };
    let go_block = f.name.rsplit_once(".go");
    let Some((parent, _)) = go_block.filter(|(_, n)| n.bytes().all(|b| b.is_ascii_digit())) else {
        return f.name.clone();
    };
    let outer = parent.split('.').next().unwrap_or(parent);
    let line = prog
        .funcs
        .iter()
        .filter(|p| &*p.name == parent)
        .find_map(|p| {
            let at = p
                .code
                .iter()
                .position(|i| matches!(i, Instr::Go { func, .. } if *func == entry))?;
            p.locs.get(at).map(|l| l.line)
        });
    match line {
        Some(line) => Arc::from(format!("go block in {outer}, line {line}")),
        None => Arc::from(format!("go block in {outer}")),
    }
}

/// The task's future: an `async` block rather than an `async fn`, because
/// an `async fn` keeps its arguments twice in its state (the arguments and
/// the locals they are moved to), which cost every task 104 bytes.
// Not an `async fn` on purpose (see above): clippy's suggestion would
// put the arguments' second copy back.
#[allow(clippy::manual_async_fn)]
fn run_task(sh: Arc<Shared>, mut st: TaskState) -> impl Future<Output = TaskEnd> + Send {
    async move {
        let entry = st.cur;
        if sh.prog.funcs.get(entry as usize).is_none() {
            let bug = InternalError::NoFunction(entry);
            return sh.end_failed(Failure::at(None, 0, bug.into()));
        }
        if runtime::tracing() {
            runtime::set_task_name(trace_name(&sh.prog, entry));
            runtime::set_task_device(st.device.clone());
        }
        st.rng = fastrand::Rng::with_seed(mix(sh.seed, runtime::current_task()));
        // The context every wait of this task parks with (one allocation).
        let mut slot = WaitSlot::new();
        loop {
            // Whether the wait below queued in `slot`.
            let waits = slot.waits();
            // What each wait leaves (its arm's value, so that neither is
            // kept across the other arms' awaits, which would put it in
            // every state of the future, docs/architecture.md): received
            // tensors whose values the task must wait for, with the
            // instruction that received them (awaited in one place below,
            // so the future holds that wait's state once, not once per
            // arm), and whether the wait parked the task (a sleep, a
            // kernel, another process).
            //
            // The `Wait` itself is dropped (moved as a whole) before each
            // arm's await: a local that is only partly moved out, or not
            // at all, would be kept in the future's state across every
            // await, 40 bytes in every blocked task.
            let (ready, parked): (Option<(InFlight, usize)>, bool) = {
                let w = step(&sh, &mut st);
                match w {
                    Wait::Returned => return TaskEnd::Returned,
                    Wait::Exit(code) => return TaskEnd::Exit(code),
                    Wait::Fail(f) => return sh.end_failed(*f),
                    Wait::Yield => {
                        w.end();
                        if sh.test.is_some() {
                            // A controlled run's preemption point: where the task is.
                            let site = site_of(st.cur, st.pc).unwrap_or(0);
                            Box::pin(runtime::sched_point(Op::local(OpKind::Yield, site))).await;
                        } else {
                            runtime::yield_now().await;
                        }
                        (None, false)
                    }
                    // Boxed: only a controlled run stops at points, and every
                    // ordinary task's future stays as small as without them.
                    Wait::Point { at } => {
                        drop(w);
                        match Box::pin(control::point(&sh, &mut st, at, &mut slot)).await {
                            Ok(t) => (t.map(|t| (t, at + 1)), false),
                            Err(f) => return sh.end_failed(f),
                        }
                    }
                    Wait::Nil { at } => {
                        drop(w);
                        st.record_wait(&sh.prog, WaitKind::NilChan, at);
                        std::future::pending::<()>().await;
                        (None, false)
                    }
                    Wait::Send { ch, v, at } => {
                        w.end();
                        let (Some(c), Some(val)) =
                            (chan_at(&st, ch), st.stack.get(st.base + v as usize))
                        else {
                            let bug = InternalError::LostChannel("send");
                            return sh.end_failed(st.failure(&sh.prog, at, bug.into()));
                        };
                        let val = dup(val);
                        st.record_wait(&sh.prog, WaitKind::ChanSend, at);
                        let sent = SendDone(c.send_in(val, &mut slot)).await;
                        runtime::clear_wait();
                        if !sent {
                            let e = RuntimeError::SendOnClosed;
                            return sh.end_failed(st.failure(&sh.prog, at, e));
                        }
                        (None, false)
                    }
                    Wait::Recv { ch, at } => {
                        w.end();
                        let Some(c) = chan_at(&st, ch) else {
                            let bug = InternalError::LostChannel("receive");
                            return sh.end_failed(st.failure(&sh.prog, at, bug.into()));
                        };
                        st.record_wait(&sh.prog, WaitKind::ChanRecv, at);
                        let got = c.recv_in(&mut slot).await;
                        runtime::clear_wait();
                        match recv_done(&mut st, &sh.prog, at, got) {
                            Ok(t) => (t.map(|t| (t, at)), false),
                            Err(f) => return sh.end_failed(f),
                        }
                    }
                    Wait::Select { at } => {
                        w.end();
                        // With no case ready, while a task it woke waits in
                        // this worker's LIFO slot: that task runs first (it
                        // may make a case ready), then the select runs again
                        // from the start; parking would queue on every
                        // channel and leave every queue again
                        // (docs/runtime.md, "Yielding before a select
                        // parks"). Only a task that woke another yields so,
                        // so a select that makes no progress parks. (Tested
                        // here, inside the arm: as a guard of its own arm it
                        // kept the `Wait` in the future's state, 50 bytes in
                        // every blocked task.)
                        // (`lifo_waiting` is false in a controlled run.)
                        if runtime::lifo_waiting() {
                            st.pc = at;
                            runtime::yield_to_lifo().await;
                            continue;
                        }
                        let prog = &sh.prog;
                        let Some(f) = st.func(prog) else {
                            let bug = InternalError::NoFunction(st.cur);
                            return sh.end_failed(Failure::at(None, at, bug.into()));
                        };
                        let Some(Instr::Select { cases, .. }) = f.code.get(at) else {
                            let bug = InternalError::LostInstruction("select");
                            return sh.end_failed(Failure::at(Some(f), at, bug.into()));
                        };
                        let fs = st.stack.get(st.base..).unwrap_or_default();
                        let src = match FrameCases::new(cases, fs) {
                            Ok(src) => src,
                            Err(e) => return sh.end_failed(Failure::at(Some(f), at, e)),
                        };
                        let cur = st.cur;
                        let chosen = select_wait(
                            select_on_locked(&src, &mut st.rng, &mut slot),
                            move || record_wait_in(cur, f, WaitKind::Select, at),
                        )
                        .await;
                        // Completed as `step` completes a select with a default.
                        match complete_select(st.frame_mut(), f, at, cases, chosen) {
                            Ok((target, pending)) => {
                                st.pc = target;
                                (pending.map(|t| (t, at)), false)
                            }
                            Err(f) => return sh.end_failed(f),
                        }
                    }
                    Wait::Sleep { dur, at } => {
                        drop(w);
                        if let Err(e) = sh.mem.check(TIMER_BYTES) {
                            return sh.end_failed(st.failure(&sh.prog, at, e.into()));
                        }
                        st.record_wait(&sh.prog, WaitKind::Sleep, at);
                        runtime::sleep(dur).await;
                        runtime::clear_wait();
                        (None, true)
                    }
                    Wait::Ready { t, at } => (Some((t, at)), false),
                    Wait::Tensor { .. } => {
                        let Some((work, at)) = w.into_tensor() else {
                            return lost(&sh, "tensor op");
                        };
                        // A compute pool thread or a device may wake this task: the
                        // run is not deadlocked while it waits (`external` holds
                        // that from the first `Pending`).
                        let place = tensor_ops::Place {
                            here: &st.device,
                            strict: sh.strict_placement,
                        };
                        let run = Box::pin(tensor_ops::run_work(work, sh.mem, place));
                        let done = match runtime::external(run).await {
                            Ok(v) => write_out(&mut st, &sh.prog, at, v),
                            Err(e) => Err(st.failure(&sh.prog, at, e)),
                        };
                        if let Err(f) = done {
                            return sh.end_failed(f);
                        }
                        (None, true)
                    }
                    Wait::FarSend { .. } => {
                        let Some((ch, val, at)) = w.into_send() else {
                            return lost(&sh, "send");
                        };
                        let Some(far) = far_at(&st, ch) else {
                            let bug = InternalError::LostChannel("send");
                            return sh.end_failed(st.failure(&sh.prog, at, bug.into()));
                        };
                        st.record_wait(&sh.prog, WaitKind::ChanSend, at);
                        let r = Box::pin(xproc::send(&far, val, sh.mem)).await;
                        runtime::clear_wait();
                        if let Err(e) = r {
                            return sh.end_failed(st.failure(&sh.prog, at, e));
                        }
                        (None, true)
                    }
                    Wait::FarRecv { ch, at } => {
                        drop(w);
                        let Some(far) = far_at(&st, ch) else {
                            let bug = InternalError::LostChannel("receive");
                            return sh.end_failed(st.failure(&sh.prog, at, bug.into()));
                        };
                        st.record_wait(&sh.prog, WaitKind::ChanRecv, at);
                        let got = Box::pin(xproc::recv(&far)).await;
                        runtime::clear_wait();
                        let got = match got {
                            Ok(v) => v,
                            Err(e) => return sh.end_failed(st.failure(&sh.prog, at, e)),
                        };
                        match recv_done(&mut st, &sh.prog, at, got) {
                            Ok(t) => (t.map(|t| (t, at)), true),
                            Err(f) => return sh.end_failed(f),
                        }
                    }
                    Wait::FarClose { ch, at } => {
                        drop(w);
                        let Some(far) = far_at(&st, ch) else {
                            let bug = InternalError::LostChannel("close");
                            return sh.end_failed(st.failure(&sh.prog, at, bug.into()));
                        };
                        if let Err(e) = Box::pin(xproc::close(&far)).await {
                            return sh.end_failed(st.failure(&sh.prog, at, e));
                        }
                        (None, true)
                    }
                    Wait::Collective { .. } => {
                        let Some((call, at)) = w.into_collective() else {
                            return lost(&sh, "collective");
                        };
                        // Boxed: collectives are rare, and the task's future (what
                        // every task holds) stays as small as without them.
                        if let Err(f) = Box::pin(collective(&sh, &mut st, *call, at)).await {
                            return sh.end_failed(f);
                        }
                        (None, true)
                    }
                }
            };
            if let Some((t, at)) = ready {
                if let Err(e) = wait_ready(&t.0).await {
                    return sh.end_failed(st.failure(&sh.prog, at, e));
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
}

/// The end of a task whose `Wait` was not of the kind its arm matched (a
/// bug in Weft).
#[cold]
fn lost(sh: &Shared, what: &'static str) -> TaskEnd {
    let bug = InternalError::LostInstruction(what);
    sh.end_failed(Failure::at(None, 0, bug.into()))
}

/// The channel in slot `slot` of the current frame (`None`: nil, or not
/// a channel, which `step` has ruled out before waiting on it).
fn chan_at(st: &TaskState, slot: Slot) -> Option<&Chan<Value>> {
    match st.stack.get(st.base + slot as usize) {
        Some(Value::Chan(c)) => c.ch.as_ref(),
        _ => None,
    }
}

/// A send's future reduced to whether the value went (false: the channel
/// was closed first, and the value is dropped). Its poll
/// (`SendFut::poll_sent`) returns one byte in a register. `SendFut`'s own
/// result is 24 bytes written through memory, whose byte-wide tag the
/// async block read back at once with a 16-byte load that the CPU could
/// not forward from the pending stores (docs/performance.md,
/// "Twenty-second session").
struct SendDone<'a>(weft_chan::SendFut<'a, Value>);

impl Future for SendDone<'_> {
    type Output = bool;

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<bool> {
        self.0.poll_sent(cx)
    }
}

/// Another process's channel in slot `slot` of the current frame.
fn far_at(st: &TaskState, slot: Slot) -> Option<FarChan> {
    match st.stack.get(st.base + slot as usize) {
        Some(Value::Chan(c)) => c.far.as_deref().cloned(),
        _ => None,
    }
}

/// Completes the receive at `at` that waited, as `step` completes one
/// that did not; returns the received tensors to wait for.
fn recv_done(
    st: &mut TaskState,
    prog: &Program,
    at: usize,
    got: Option<Value>,
) -> Result<Option<InFlight>, Failure> {
    let Some(Instr::Recv { ch, out, ok, zero }) = st.instr(prog, at) else {
        let bug = InternalError::LostInstruction("receive");
        return Err(st.failure(prog, at, bug.into()));
    };
    if got.is_none() {
        // Closed and drained: a `lines` reader's error?
        if let Some(e) = st.frame_mut().get(*ch as usize).and_then(closed_error) {
            return Err(st.failure(prog, at, e));
        }
    }
    Ok(complete_recv(st.frame_mut(), *out, *ok, zero, got))
}

/// Stores the result of the tensor op at `at`, which was awaited.
fn write_out(st: &mut TaskState, prog: &Program, at: usize, v: Value) -> Result<(), Failure> {
    let Some(Instr::Tensor { out, .. }) = st.instr(prog, at) else {
        let bug = InternalError::LostInstruction("tensor op");
        return Err(st.failure(prog, at, bug.into()));
    };
    st.frame_mut()[*out as usize] = v;
    Ok(())
}

/// Takes part in the collective of the instruction at `at` and stores its
/// result. The task is parked like a channel waiter while the other
/// members have not called yet: not an external wait, so members that can
/// never complete are part of a deadlock, shown as `[collective]`.
async fn collective(
    sh: &Shared,
    st: &mut TaskState,
    call: CollWait,
    at: usize,
) -> Result<(), Failure> {
    let prog = &sh.prog;
    let CollWait { comm, op, ty, x } = call;
    // Trace spans (tracing runs only): the member's value made into the
    // collective's data, the collective (its wait is a span of its own
    // when the member parks), the result made into a value.
    let pack = runtime::trace_span("collective: pack");
    let parts_below = match &comm {
        CommVal::Group(member) => Some(member.tuning().small_elems),
        CommVal::World(_) => None,
    };
    let coll_ops::Prepared { data, ty, home } =
        coll_ops::data(op, ty, x, comm.size(), sh.mem, parts_below)
            .await
            .map_err(|e| st.failure(prog, at, e))?;
    drop(pack);
    st.record_wait(prog, WaitKind::Collective, at);
    let call = runtime::trace_span(op.name());
    let got = match &comm {
        CommVal::Group(member) => member.call(op, ty, data).await.map_err(RuntimeError::from),
        CommVal::World(procs) => xproc::world_call(procs, op, ty, data).await,
    };
    drop(call);
    runtime::clear_wait();
    let out = got.map_err(|e| st.failure(prog, at, coll_ops::list_mismatch(e)))?;
    let unpack = runtime::trace_span("collective: unpack");
    let v = coll_ops::value(out, home, sh.mem)
        .await
        .map_err(|e| st.failure(prog, at, e))?;
    drop(unpack);
    match st.instr(prog, at) {
        Some(Instr::Collective(c)) => {
            if let Some(o) = c.out {
                st.frame_mut()[o as usize] = v;
            }
            Ok(())
        }
        _ => {
            let bug = InternalError::LostInstruction("collective");
            Err(st.failure(prog, at, bug.into()))
        }
    }
}

/// A select's wait: the select's future, and what to do the first time it
/// returns `Pending` (`park`: record the wait for deadlock reports); the
/// wait record is cleared when a select that parked completes. A plain
/// future rather than an `async fn`: the locals of a wait that spans two of
/// `run_task`'s suspension points are kept in every state of its future,
/// and the select's (polled once, then awaited) took 152 of its bytes.
struct SelectWait<F, P> {
    fut: F,
    park: Option<P>,
    parked: bool,
}

fn select_wait<F: Future + Unpin, P: FnOnce() + Unpin>(fut: F, park: P) -> SelectWait<F, P> {
    SelectWait {
        fut,
        park: Some(park),
        parked: false,
    }
}

impl<F: Future + Unpin, P: FnOnce() + Unpin> Future for SelectWait<F, P> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        match Pin::new(&mut this.fut).poll(cx) {
            Poll::Ready(chosen) => {
                if this.parked {
                    runtime::clear_wait();
                }
                Poll::Ready(chosen)
            }
            Poll::Pending => {
                // The wait is recorded only if the select parks.
                if let Some(park) = this.park.take() {
                    park();
                    this.parked = true;
                }
                Poll::Pending
            }
        }
    }
}

/// `TaskState::record_wait` for the instruction `at` of `f`, the function
/// `cur` (for a caller that has lent out part of the task's state).
fn record_wait_in(cur: FuncId, f: &Func, kind: WaitKind, at: usize) {
    match site_of(cur, at) {
        Some(site) => runtime::set_wait_site(kind, site),
        None => runtime::set_wait(kind, loc_of(Some(f), at)),
    }
}

/// Waits until received tensors' values are on their devices. A device
/// or the compute pool, not a task, wakes the waiter: not a deadlock.
async fn wait_ready(ts: &[Tensor]) -> Result<(), RuntimeError> {
    // Boxed: the loop's state is not part of every task's future. The hold
    // is taken only if a copy is still in flight.
    Ok(runtime::external(Box::pin(all_ready(ts))).await?)
}

async fn all_ready(ts: &[Tensor]) -> Result<(), weft_tensor::TensorError> {
    for t in ts {
        t.ready().await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// What `go` counts for a task before its stack: its future and the
    /// runtime's record, within what a blocked task is measured to hold
    /// (about 1.9 KiB in a spawning bomb, its stack included).
    #[test]
    fn task_bytes_is_plausible() {
        let n = super::task_bytes();
        eprintln!("task_bytes = {n}");
        assert!((600..4096).contains(&n), "{n}");
    }
}
