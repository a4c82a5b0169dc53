//! The compute pool: long kernels run off the task workers.
//!
//! `compute(cost, f)` runs `f` inline when `cost < INLINE_COST` (the
//! hand-off would cost more than the work), else sends it to a small pool
//! of dedicated threads and parks the awaiting task; the pool thread stores
//! the result and wakes the task through its `std::task::Waker`, so this
//! works with any executor. Why a pool and not splitting kernels into
//! resumable slices: docs/tensors.md ("Long kernels").
//!
//! Protocol (one `Slot` per call, guarded by one mutex):
//! 1. the task polls: result present -> take it; else store its waker, pend;
//! 2. the pool thread finishes: store the result, take the waker, unlock, wake.
//!
//! Both steps hold the lock, so a wake-up cannot be lost between them. A
//! panic in `f` is caught on the pool thread and re-raised in the awaiting
//! task, as if `f` had run inline.

use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Waker};

use crossbeam_channel::{unbounded, Sender};
use weft_chan::loom::Mutex;

use super::Tensor;

/// Work below this cost runs inline on the calling worker. Cost is counted
/// in elements touched or multiply-adds: 2^20 is about 10-50 us of GEMM or
/// under 1 ms of the slowest elementwise map, well below a scheduling
/// quantum, while a hand-off costs a few microseconds.
pub const INLINE_COST: usize = 1 << 20;

/// Runs `f` inline if cheap, else on the compute pool, and returns its result.
pub async fn compute<R: Send + 'static>(cost: usize, f: impl FnOnce() -> R + Send + 'static) -> R {
    if cost < INLINE_COST {
        return f();
    }
    let slot = Arc::new(Mutex::new(Slot::<R> {
        result: None,
        waker: None,
    }));
    let done = slot.clone();
    let job: Job = Box::new(move || {
        let r = catch_unwind(AssertUnwindSafe(f));
        let waker = {
            let mut s = done.lock();
            s.result = Some(r);
            s.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    });
    if let Err(job) = pool().submit(job) {
        job();
    }
    Wait { slot }.await
}

/// The cost to pass to `compute` for a kernel doing `work` element
/// operations or multiply-adds on `operands`: `work` on the host; on a
/// device at least `INLINE_COST`, because a call there may block on a
/// download or a stream synchronization (host fallback, `to`, `get`).
/// Only asks where each operand lives: a lazy transpose stays lazy (asking
/// for its values would copy it).
pub fn kernel_cost(work: usize, operands: &[&Tensor]) -> usize {
    if operands.iter().any(|t| !t.is_host()) {
        work.max(INLINE_COST)
    } else {
        work
    }
}

/// The number of compute pool threads (started on first use).
pub fn pool_threads() -> usize {
    pool().threads
}

type Job = Box<dyn FnOnce() + Send>;

struct Slot<R> {
    result: Option<Result<R, Box<dyn Any + Send>>>,
    waker: Option<Waker>,
}

struct Wait<R> {
    slot: Arc<Mutex<Slot<R>>>,
}

impl<R> Future for Wait<R> {
    type Output = R;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<R> {
        let mut s = self.slot.lock();
        match s.result.take() {
            Some(Ok(r)) => Poll::Ready(r),
            Some(Err(panic)) => {
                drop(s);
                resume_unwind(panic)
            }
            None => {
                match &s.waker {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => s.waker = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
        }
    }
}

struct Pool {
    tx: Sender<Job>,
    threads: usize,
}

impl Pool {
    fn submit(&self, job: Job) -> Result<(), Job> {
        if self.threads == 0 {
            return Err(job);
        }
        self.tx.send(job).map_err(|e| e.into_inner())
    }
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let want = std::thread::available_parallelism().map_or(2, |n| n.get());
        let (tx, rx) = unbounded::<Job>();
        let mut threads = 0;
        for i in 0..want {
            let rx = rx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("weft-compute-{i}"))
                .spawn(move || {
                    for job in rx.iter() {
                        job();
                    }
                });
            if spawned.is_ok() {
                threads += 1;
            }
        }
        Pool { tx, threads }
    })
}
