//! Deadlock detection: reported when every task is blocked with nothing
//! pending, listing each blocked task's recorded wait in task order; never
//! reported while a task is runnable, a timer is pending, or an outside hold
//! is alive.

use std::time::Duration;

use weft_rt::{
    self as runtime, BlockedTask, Config, RunOutcome, Runtime, SrcLoc, TaskEnd, WaitKind,
};

fn cfg(workers: usize) -> Config {
    Config {
        workers,
        seed: 7,
        trace: None,
        max_tasks: None,
    }
}

fn loc(line: u32) -> SrcLoc {
    SrcLoc::new("d.weft", line, 5)
}

#[test]
fn all_tasks_blocked_is_reported_in_task_order() {
    for workers in [1, 2, 4] {
        let out = Runtime::new(cfg(workers)).run(async {
            let (tx, _rx) = tokio::sync::mpsc::channel::<u32>(1);
            let (_keep, mut never) = tokio::sync::mpsc::channel::<u32>(1);
            // Task 2: the second send blocks (capacity 1, nobody receives).
            runtime::spawn(async move {
                tx.send(1).await.ok();
                runtime::set_wait(WaitKind::ChanSend, loc(10));
                tx.send(2).await.ok();
                runtime::clear_wait();
                TaskEnd::Returned
            })
            .unwrap();
            // Task 3: a receive on a nil channel.
            runtime::spawn(async {
                runtime::set_wait(WaitKind::NilChan, loc(20));
                std::future::pending::<()>().await;
                TaskEnd::Returned
            })
            .unwrap();
            // Tasks 4..: blocked in a select-like wait.
            for i in 0..20 {
                runtime::spawn(async move {
                    runtime::set_wait(WaitKind::Select, loc(30 + i));
                    std::future::pending::<()>().await;
                    TaskEnd::Returned
                })
                .unwrap();
            }
            runtime::set_wait(WaitKind::ChanRecv, loc(5));
            never.recv().await;
            TaskEnd::Returned
        });
        let mut want = vec![
            BlockedTask {
                task: 1,
                kind: WaitKind::ChanRecv,
                loc: loc(5),
            },
            BlockedTask {
                task: 2,
                kind: WaitKind::ChanSend,
                loc: loc(10),
            },
            BlockedTask {
                task: 3,
                kind: WaitKind::NilChan,
                loc: loc(20),
            },
        ];
        for i in 0..20 {
            want.push(BlockedTask {
                task: 4 + i as u64,
                kind: WaitKind::Select,
                loc: loc(30 + i),
            });
        }
        assert_eq!(out, RunOutcome::Deadlock(want), "workers {workers}");
    }
}

#[test]
fn a_pending_timer_is_not_a_deadlock() {
    for workers in [1, 3] {
        let out = Runtime::new(cfg(workers)).run(async {
            let (tx, mut rx) = tokio::sync::mpsc::channel::<u32>(1);
            runtime::after(Duration::from_millis(30), move || {
                tx.try_send(30).ok();
            });
            // Other tasks blocked forever meanwhile.
            for _ in 0..3 {
                runtime::spawn(async {
                    runtime::set_wait(WaitKind::NilChan, loc(1));
                    std::future::pending::<()>().await;
                    TaskEnd::Returned
                })
                .unwrap();
            }
            runtime::set_wait(WaitKind::ChanRecv, loc(2));
            let v = rx.recv().await;
            runtime::clear_wait();
            assert_eq!(v, Some(30));
            TaskEnd::Returned
        });
        assert_eq!(out, RunOutcome::Returned, "workers {workers}");
    }
}

#[test]
fn sleeping_tasks_keep_the_run_alive() {
    let out = Runtime::new(cfg(2)).run(async {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<u32>(1);
        runtime::spawn(async move {
            runtime::sleep(Duration::from_millis(20)).await;
            tx.send(5).await.ok();
            TaskEnd::Returned
        })
        .unwrap();
        runtime::set_wait(WaitKind::ChanRecv, loc(3));
        assert_eq!(rx.recv().await, Some(5));
        runtime::clear_wait();
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
}

#[test]
fn deadlock_is_found_once_the_last_timer_has_fired() {
    let out = Runtime::new(cfg(2)).run(async {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<u32>(1);
        let _keep = tx.clone();
        runtime::after(Duration::from_millis(5), move || {
            tx.try_send(1).ok();
        });
        assert_eq!(rx.recv().await, Some(1));
        runtime::set_wait(WaitKind::ChanRecv, loc(9));
        rx.recv().await;
        TaskEnd::Returned
    });
    assert_eq!(
        out,
        RunOutcome::Deadlock(vec![BlockedTask {
            task: 1,
            kind: WaitKind::ChanRecv,
            loc: loc(9)
        }])
    );
}

#[test]
fn a_runnable_task_prevents_a_deadlock_report() {
    for workers in [1, 2] {
        let out = Runtime::new(cfg(workers)).run(async {
            let (tx, mut rx) = tokio::sync::mpsc::channel::<u32>(1);
            runtime::spawn(async move {
                for _ in 0..2000 {
                    runtime::yield_now().await;
                }
                tx.send(9).await.ok();
                TaskEnd::Returned
            })
            .unwrap();
            runtime::set_wait(WaitKind::ChanRecv, loc(4));
            assert_eq!(rx.recv().await, Some(9));
            runtime::clear_wait();
            TaskEnd::Returned
        });
        assert_eq!(out, RunOutcome::Returned);
    }
}

#[test]
fn an_outside_hold_prevents_a_deadlock_report() {
    let out = Runtime::new(cfg(2)).run(async {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<u32>(1);
        let _keep = tx.clone();
        let hold = runtime::external_wait();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            tx.blocking_send(3).ok();
            drop(hold);
        });
        runtime::set_wait(WaitKind::ChanRecv, loc(6));
        assert_eq!(rx.recv().await, Some(3));
        runtime::clear_wait();
        // Nothing can wake main now: the released hold lets detection run.
        runtime::set_wait(WaitKind::ChanRecv, loc(7));
        rx.recv().await;
        TaskEnd::Returned
    });
    assert_eq!(
        out,
        RunOutcome::Deadlock(vec![BlockedTask {
            task: 1,
            kind: WaitKind::ChanRecv,
            loc: loc(7)
        }])
    );
}

#[test]
fn repeated_runs_never_report_a_false_deadlock() {
    // A pipeline whose tasks block and unblock constantly on several workers.
    for round in 0..30 {
        let out = Runtime::new(cfg(1 + round % 4)).run(async {
            let (first_tx, mut rx) = tokio::sync::mpsc::channel::<u64>(1);
            let mut prev_rx = {
                let (tx, rx2) = tokio::sync::mpsc::channel::<u64>(1);
                runtime::spawn(async move {
                    while let Some(v) = rx.recv().await {
                        if tx.send(v + 1).await.is_err() {
                            break;
                        }
                    }
                    TaskEnd::Returned
                })
                .unwrap();
                rx2
            };
            for _ in 0..8 {
                let (tx, rx2) = tokio::sync::mpsc::channel::<u64>(1);
                let mut rx = prev_rx;
                runtime::spawn(async move {
                    while let Some(v) = rx.recv().await {
                        runtime::set_wait(WaitKind::ChanSend, loc(1));
                        let r = tx.send(v + 1).await;
                        runtime::clear_wait();
                        if r.is_err() {
                            break;
                        }
                    }
                    TaskEnd::Returned
                })
                .unwrap();
                prev_rx = rx2;
            }
            for i in 0..200u64 {
                first_tx.send(i).await.ok();
                runtime::set_wait(WaitKind::ChanRecv, loc(2));
                assert_eq!(prev_rx.recv().await, Some(i + 9));
                runtime::clear_wait();
            }
            TaskEnd::Returned
        });
        assert_eq!(out, RunOutcome::Returned, "round {round}");
    }
}

#[test]
fn a_task_waiting_on_the_compute_pool_under_a_hold_is_not_deadlocked() {
    // The pool thread wakes the task from outside the runtime; the hold
    // (as the interpreter takes around tensor operations) covers the wait.
    for workers in [1, 2] {
        let out = Runtime::new(cfg(workers)).run(async {
            let _hold = runtime::external_wait();
            let v = weft_tensor::compute(weft_tensor::INLINE_COST, || {
                std::thread::sleep(Duration::from_millis(20));
                5
            })
            .await;
            assert_eq!(v, 5);
            TaskEnd::Returned
        });
        assert_eq!(out, RunOutcome::Returned, "workers {workers}");
    }
}

#[test]
fn a_task_waiting_on_the_compute_pool_through_external_is_not_deadlocked() {
    // `external` takes the hold at the first `Pending`, as the interpreter
    // does around every tensor operation.
    for workers in [1, 2] {
        let out = Runtime::new(cfg(workers)).run(async {
            let job = weft_tensor::compute(weft_tensor::INLINE_COST, || {
                std::thread::sleep(Duration::from_millis(20));
                5
            });
            let v = runtime::external(Box::pin(job)).await;
            assert_eq!(v, 5);
            TaskEnd::Returned
        });
        assert_eq!(out, RunOutcome::Returned, "workers {workers}");
    }
}

/// `external` over a future that completes at once, and over one that
/// waits on the compute pool, leaves no hold behind: a task that then
/// blocks for good is reported. A leaked hold would hang the run, so it
/// runs on a thread under a watchdog.
#[test]
fn external_leaves_no_hold_behind() {
    for workers in [1, 2] {
        let (done, wait) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let out = Runtime::new(cfg(workers)).run(async {
                assert_eq!(runtime::external(std::future::ready(3)).await, 3);
                let job = weft_tensor::compute(weft_tensor::INLINE_COST, || 4);
                assert_eq!(runtime::external(Box::pin(job)).await, 4);
                let (_keep, mut never) = tokio::sync::mpsc::channel::<u32>(1);
                runtime::set_wait(WaitKind::ChanRecv, loc(8));
                never.recv().await;
                TaskEnd::Returned
            });
            done.send(out).ok();
        });
        let out = wait
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("workers {workers}: no deadlock report (a hold leaked)"));
        assert!(
            matches!(out, RunOutcome::Deadlock(_)),
            "workers {workers}: {out:?}"
        );
    }
}
