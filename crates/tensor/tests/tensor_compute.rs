//! The compute pool: cheap work runs inline, expensive work runs on a pool
//! thread and wakes the awaiting task through its `Waker`; panics travel back.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::Duration;

use weft_tensor::{self as tensor, compute, INLINE_COST};

/// Counts wake-ups and unparks the polling thread.
struct CountingWaker {
    wakes: AtomicUsize,
    thread: thread::Thread,
}

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
        self.thread.unpark();
    }
}

/// Polls `f` to completion on this thread; returns the output, how many
/// polls returned `Pending`, and how many wake-ups arrived.
fn block_on<F: Future>(f: F) -> (F::Output, usize, usize) {
    let w = Arc::new(CountingWaker {
        wakes: AtomicUsize::new(0),
        thread: thread::current(),
    });
    let waker = Waker::from(w.clone());
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    let mut pending = 0;
    loop {
        match f.as_mut().poll(&mut cx) {
            Poll::Ready(v) => return (v, pending, w.wakes.load(Ordering::SeqCst)),
            Poll::Pending => {
                pending += 1;
                thread::park_timeout(Duration::from_millis(50));
            }
        }
    }
}

#[test]
fn cheap_work_runs_inline() {
    let here = thread::current().id();
    let (id, pending, wakes) = block_on(compute(10, move || thread::current().id()));
    assert_eq!(id, here);
    assert_eq!((pending, wakes), (0, 0));
}

#[test]
fn expensive_work_runs_on_the_pool_and_wakes_the_task() {
    let here = thread::current().id();
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let fut = compute(INLINE_COST, move || {
        // held until the test has seen the task pend, so the wake-up is real
        gate_rx.recv().unwrap();
        (
            thread::current().id(),
            thread::current().name().map(str::to_string),
        )
    });
    let w = Arc::new(CountingWaker {
        wakes: AtomicUsize::new(0),
        thread: thread::current(),
    });
    let waker = Waker::from(w.clone());
    let mut cx = Context::from_waker(&waker);
    let mut fut = pin!(fut);
    assert!(fut.as_mut().poll(&mut cx).is_pending());
    gate_tx.send(()).unwrap();
    let (id, name) = loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            break v;
        }
        thread::park_timeout(Duration::from_millis(50));
    };
    assert_ne!(id, here);
    assert!(name.unwrap().starts_with("weft-compute-"));
    assert_eq!(w.wakes.load(Ordering::SeqCst), 1);
    assert!(tensor::pool_threads() >= 1);
}

#[test]
fn many_concurrent_jobs_all_complete() {
    let results: Vec<usize> = (0..64)
        .map(|i| block_on(compute(usize::MAX, move || i * 2)).0)
        .collect();
    assert_eq!(results, (0..64).map(|i| i * 2).collect::<Vec<_>>());
}

#[test]
fn kernels_run_through_the_pool() {
    let a = tensor::randn(&[256, 256], 1).unwrap();
    let b = tensor::randn(&[256, 256], 2).unwrap();
    let cost = tensor::matmul_cost(&a, &b);
    assert!(cost >= INLINE_COST);
    let (aa, bb) = (a.clone(), b.clone());
    let (got, _, _) = block_on(compute(cost, move || tensor::matmul(&aa, &bb)));
    let want = tensor::matmul(&a, &b).unwrap();
    assert_eq!(got.unwrap().to_vec().unwrap(), want.to_vec().unwrap());
}

#[test]
fn a_panic_in_the_job_reaches_the_awaiting_task() {
    let r = std::panic::catch_unwind(|| {
        block_on(compute(usize::MAX, || -> u32 { panic!("kernel blew up") }))
    });
    let err = r.unwrap_err();
    assert_eq!(err.downcast_ref::<&str>(), Some(&"kernel blew up"));
    // the pool survives
    assert_eq!(block_on(compute(usize::MAX, || 5)).0, 5);
}
