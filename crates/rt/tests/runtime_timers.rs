//! Timers and I/O readiness: sleeps end in deadline order and never early,
//! `after` callbacks run in deadline order, a select over a channel and an
//! `after`-fed channel takes the timeout, and a socket's readiness wakes a
//! task blocked on it.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use weft_rt::{self as runtime, Config, RunOutcome, Runtime, TaskEnd};

fn cfg(workers: usize) -> Config {
    Config {
        workers,
        seed: 5,
        trace: None,
        max_tasks: None,
    }
}

#[test]
fn sleeps_end_in_deadline_order_and_not_early() {
    for workers in [1, 2] {
        let order = Arc::new(Mutex::new(Vec::new()));
        let o = order.clone();
        let out = Runtime::new(cfg(workers)).run(async move {
            let (tx, mut rx) = tokio::sync::mpsc::channel::<()>(8);
            for ms in [40u64, 10, 30, 20] {
                let (o, tx) = (o.clone(), tx.clone());
                runtime::spawn(async move {
                    let t0 = runtime::now_ms();
                    runtime::sleep(Duration::from_millis(ms)).await;
                    let slept = runtime::now_ms() - t0;
                    assert!(slept >= ms as f64, "slept {slept} ms, asked {ms}");
                    o.lock().unwrap().push(ms);
                    tx.send(()).await.ok();
                    TaskEnd::Returned
                })
                .unwrap();
            }
            for _ in 0..4 {
                rx.recv().await;
            }
            TaskEnd::Returned
        });
        assert_eq!(out, RunOutcome::Returned);
        assert_eq!(*order.lock().unwrap(), vec![10, 20, 30, 40]);
    }
}

#[test]
fn after_callbacks_run_in_deadline_order() {
    let order = Arc::new(Mutex::new(Vec::new()));
    let o = order.clone();
    let out = Runtime::new(cfg(1)).run(async move {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<u64>(8);
        for ms in [15u64, 5, 10, 5] {
            let tx = tx.clone();
            runtime::after(Duration::from_millis(ms), move || {
                tx.try_send(ms).ok();
            });
        }
        for _ in 0..4 {
            let v = rx.recv().await.unwrap();
            o.lock().unwrap().push(v);
        }
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
    assert_eq!(*order.lock().unwrap(), vec![5, 5, 10, 15]);
}

#[test]
fn sleep_zero_yields() {
    let out = Runtime::new(cfg(1)).run(async {
        let flag = Arc::new(Mutex::new(false));
        let f = flag.clone();
        runtime::spawn(async move {
            *f.lock().unwrap() = true;
            TaskEnd::Returned
        })
        .unwrap();
        runtime::sleep(Duration::ZERO).await;
        assert!(*flag.lock().unwrap());
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
}

#[test]
fn select_over_a_channel_and_after_takes_the_timeout() {
    for workers in [1, 2] {
        let out = Runtime::new(cfg(workers)).run(async {
            let (_never_tx, mut never) = tokio::sync::mpsc::channel::<u64>(1);
            let (t_tx, mut timeout) = tokio::sync::mpsc::channel::<u64>(1);
            runtime::after(Duration::from_millis(15), move || {
                t_tx.try_send(15).ok();
            });
            let got = tokio::select! {
                biased;
                v = never.recv() => ("value", v),
                v = timeout.recv() => ("timeout", v),
            };
            assert_eq!(got, ("timeout", Some(15)));
            TaskEnd::Returned
        });
        assert_eq!(out, RunOutcome::Returned);
    }
}

#[test]
fn a_dropped_sleep_cancels_its_timer() {
    // The cancelled sleep must not keep the run alive: the deadlock is found
    // at once instead of after an hour.
    let out = Runtime::new(cfg(1)).run(async {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<u64>(1);
        tx.send(1).await.ok();
        let got = tokio::select! {
            biased;
            v = rx.recv() => v,
            _ = runtime::sleep(Duration::from_secs(3600)) => None,
        };
        assert_eq!(got, Some(1));
        runtime::set_wait(
            runtime::WaitKind::ChanRecv,
            runtime::SrcLoc::new("t.weft", 1, 1),
        );
        rx.recv().await;
        TaskEnd::Returned
    });
    assert!(
        matches!(out, RunOutcome::Deadlock(ref v) if v.len() == 1),
        "{out:?}"
    );
}

#[test]
fn io_readiness_wakes_a_blocked_task() {
    for workers in [1, 2] {
        let out = Runtime::new(cfg(workers)).run(async {
            let (a, b) = mio::net::UnixStream::pair().unwrap();
            let a = runtime::register_io(a).unwrap();
            let b = Arc::new(Mutex::new(b));
            // Another task writes after a while; until then the reader is
            // blocked in the poller, and no deadlock is reported.
            runtime::spawn(async move {
                runtime::sleep(Duration::from_millis(10)).await;
                b.lock().unwrap().write_all(b"ping").unwrap();
                TaskEnd::Returned
            })
            .unwrap();
            let mut buf = [0u8; 4];
            let n = a.read_with(|mut s| s.read(&mut buf)).await.unwrap();
            assert_eq!(&buf[..n], b"ping");
            TaskEnd::Returned
        });
        assert_eq!(out, RunOutcome::Returned);
    }
}

#[test]
fn now_counts_from_the_start_of_the_run() {
    let out = Runtime::new(cfg(1)).run(async {
        let a = runtime::now_ms();
        assert!((0.0..1000.0).contains(&a));
        runtime::sleep(Duration::from_millis(3)).await;
        assert!(runtime::now_ms() >= a + 3.0);
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
}
