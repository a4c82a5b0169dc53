//! Preemption and fairness with one worker: a task looping on `yield_now`
//! or `preempt_point` does not starve others, and two tasks handing a value
//! back and forth through the LIFO slot do not starve the queue.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use weft::runtime::{self, Config, RunOutcome, Runtime, TaskEnd};

fn one_worker() -> Config {
    Config {
        workers: 1,
        seed: 3,
        trace: None,
        max_tasks: None,
    }
}

#[test]
fn a_yielding_busy_loop_does_not_starve_others() {
    let out = Runtime::new(one_worker()).run(async {
        let spins = Arc::new(AtomicU64::new(0));
        let s = spins.clone();
        runtime::spawn(async move {
            loop {
                s.fetch_add(1, Ordering::Relaxed);
                runtime::yield_now().await;
            }
        })
        .unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel();
        runtime::spawn(async move {
            for _ in 0..10 {
                runtime::yield_now().await;
            }
            tx.send(()).ok();
            TaskEnd::Returned
        })
        .unwrap();
        rx.await.ok();
        // Yield is FIFO: the spinner ran about once per turn of the other task.
        let n = spins.load(Ordering::Relaxed);
        assert!((5..=30).contains(&n), "spinner ran {n} times");
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
}

#[test]
fn preemption_points_bound_a_busy_loop() {
    let out = Runtime::new(one_worker()).run(async {
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        runtime::spawn(async move {
            // A loop that never blocks; only its preemption points let others run.
            while !d.load(Ordering::Relaxed) {
                runtime::preempt_point().await;
            }
            TaskEnd::Returned
        })
        .unwrap();
        runtime::yield_now().await;
        done.store(true, Ordering::Relaxed);
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
}

#[test]
fn lifo_hand_offs_do_not_starve_the_queue() {
    let out = Runtime::new(one_worker()).run(async {
        // Two tasks ping-pong forever; each wake lands in the LIFO slot.
        let (a_tx, mut a_rx) = tokio::sync::mpsc::channel::<u64>(1);
        let (b_tx, mut b_rx) = tokio::sync::mpsc::channel::<u64>(1);
        let a_tx2 = a_tx.clone();
        let hand_offs = Arc::new(AtomicU64::new(0));
        let h = hand_offs.clone();
        runtime::spawn(async move {
            while let Some(v) = a_rx.recv().await {
                h.store(v, Ordering::Relaxed);
                if b_tx.send(v + 1).await.is_err() {
                    break;
                }
            }
            TaskEnd::Returned
        })
        .unwrap();
        runtime::spawn(async move {
            while let Some(v) = b_rx.recv().await {
                if a_tx2.send(v + 1).await.is_err() {
                    break;
                }
            }
            TaskEnd::Returned
        })
        .unwrap();
        a_tx.send(0).await.ok();
        // Main sits in the FIFO queue behind the ping-pong and must still run.
        runtime::yield_now().await;
        // The LIFO cap (3 in a row) let main in after a few hand-offs.
        let n = hand_offs.load(Ordering::Relaxed);
        assert!(n < 20, "main waited for {n} hand-offs");
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
}
