//! How runs end: main returning stops the rest, a panic or exit in any task
//! ends the run promptly, every task future is dropped before `run` returns,
//! a runtime can be created, run and dropped many times, and `max_tasks`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use weft_rt::{self as runtime, Config, RunOutcome, Runtime, SpawnError, SrcLoc, TaskEnd};

fn cfg(workers: usize) -> Config {
    Config {
        workers,
        seed: 1,
        trace: None,
        max_tasks: None,
    }
}

#[path = "support/alive.rs"]
mod alive;
use alive::Alive;

#[test]
fn main_returning_stops_blocked_and_busy_tasks_and_drops_them() {
    for workers in [1, 2, 4] {
        let alive = Arc::new(AtomicUsize::new(0));
        let a = alive.clone();
        let out = Runtime::new(cfg(workers)).run(async move {
            let (tx, rx) = tokio::sync::mpsc::channel::<u32>(1);
            for _ in 0..10 {
                let guard = Alive::new(&a);
                let tx = tx.clone();
                runtime::spawn(async move {
                    let _g = guard;
                    // Blocks forever: nobody receives past the first value.
                    loop {
                        if tx.send(1).await.is_err() {
                            break;
                        }
                    }
                    TaskEnd::Returned
                })
                .unwrap();
                let guard = Alive::new(&a);
                runtime::spawn(async move {
                    let _g = guard;
                    loop {
                        runtime::yield_now().await;
                    }
                })
                .unwrap();
            }
            let _keep = rx;
            runtime::yield_now().await;
            TaskEnd::Returned
        });
        assert_eq!(out, RunOutcome::Returned);
        assert_eq!(
            alive.load(Ordering::SeqCst),
            0,
            "task futures leaked with {workers} workers"
        );
    }
}

#[test]
fn a_panic_in_any_task_ends_the_run_with_its_report() {
    for workers in [1, 3] {
        let out = Runtime::new(cfg(workers)).run(async {
            runtime::spawn(async {
                loop {
                    runtime::yield_now().await;
                }
            })
            .unwrap();
            let id = runtime::spawn(async {
                runtime::sleep(Duration::from_millis(2)).await;
                TaskEnd::Panic {
                    msg: "boom".into(),
                    loc: SrcLoc::new("p.weft", 4, 2),
                }
            })
            .unwrap();
            assert_eq!(id, 3);
            std::future::pending::<()>().await;
            TaskEnd::Returned
        });
        assert_eq!(
            out,
            RunOutcome::Panic {
                task: 3,
                msg: "boom".into(),
                loc: SrcLoc::new("p.weft", 4, 2)
            }
        );
    }
}

#[test]
fn exit_from_a_task_ends_the_run_with_its_code() {
    let out = Runtime::new(cfg(2)).run(async {
        runtime::spawn(async { TaskEnd::Exit(7) }).unwrap();
        loop {
            runtime::yield_now().await;
        }
    });
    assert_eq!(out, RunOutcome::Exit(7));
}

#[test]
fn a_rust_panic_inside_a_task_is_reported_not_propagated() {
    let out = Runtime::new(cfg(1)).run(async {
        runtime::spawn(async {
            let v: Vec<u8> = Vec::new();
            let i = v.len() + 3;
            if v.get(i).is_none() {
                std::panic::panic_any("index trouble".to_string());
            }
            TaskEnd::Returned
        })
        .unwrap();
        std::future::pending::<()>().await;
        TaskEnd::Returned
    });
    match out {
        RunOutcome::Panic { task, msg, .. } => {
            assert_eq!(task, 2);
            assert_eq!(msg, "index trouble");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn runtimes_are_created_run_and_dropped_many_times() {
    for i in 0..200 {
        let workers = 1 + i % 3;
        let rt = Runtime::new(cfg(workers));
        let out = rt.run(async move {
            let (tx, rx) = tokio::sync::oneshot::channel();
            runtime::spawn(async move {
                tx.send(i).ok();
                TaskEnd::Returned
            })
            .unwrap();
            assert_eq!(rx.await.ok(), Some(i));
            TaskEnd::Returned
        });
        assert_eq!(out, RunOutcome::Returned);
        drop(rt);
    }
}

#[test]
fn spawn_past_max_tasks_fails_naming_the_limit() {
    let seen = Arc::new(std::sync::Mutex::new(None));
    let s = seen.clone();
    let out = Runtime::new(Config {
        max_tasks: Some(3),
        ..cfg(1)
    })
    .run(async move {
        // Main is one of the three.
        runtime::spawn(std::future::pending()).unwrap();
        runtime::spawn(std::future::pending()).unwrap();
        let err = runtime::spawn(std::future::pending()).unwrap_err();
        *s.lock().unwrap() = Some(err);
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
    let err = seen.lock().unwrap().clone().unwrap();
    assert_eq!(err, SpawnError::Limit { limit: 3 });
    assert!(err.to_string().contains("limit is 3"), "{err}");
}

async fn spawn_when_free() -> u64 {
    loop {
        if let Ok(id) = runtime::spawn(async { TaskEnd::Returned }) {
            return id;
        }
        runtime::yield_now().await;
    }
}

#[test]
fn finished_tasks_free_their_slot_under_max_tasks() {
    let out = Runtime::new(Config {
        max_tasks: Some(2),
        ..cfg(1)
    })
    .run(async {
        for i in 0..100 {
            assert_eq!(spawn_when_free().await, 2 + i);
            // With one worker the task cannot run before main yields.
            assert!(runtime::spawn(std::future::pending()).is_err());
        }
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
}

#[test]
fn spawn_outside_a_runtime_is_an_error() {
    assert_eq!(
        runtime::spawn(async { TaskEnd::Returned }),
        Err(SpawnError::NoRuntime)
    );
    assert_eq!(runtime::current_task(), 0);
}

#[test]
fn task_numbers_follow_creation_order() {
    let out = Runtime::new(cfg(2)).run(async {
        assert_eq!(runtime::current_task(), 1);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        for want in 2..20u64 {
            let tx = tx.clone();
            let got = runtime::spawn(async move {
                tx.send(runtime::current_task()).ok();
                TaskEnd::Returned
            })
            .unwrap();
            assert_eq!(got, want);
        }
        let mut seen = Vec::new();
        for _ in 2..20 {
            seen.push(rx.recv().await.unwrap());
        }
        seen.sort_unstable();
        assert_eq!(seen, (2..20).collect::<Vec<_>>());
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
}

#[test]
fn tasks_never_polled_are_dropped_too() {
    for workers in [1, 2] {
        let alive = Arc::new(AtomicUsize::new(0));
        let a = alive.clone();
        let out = Runtime::new(cfg(workers)).run(async move {
            for _ in 0..1000 {
                let guard = Alive::new(&a);
                runtime::spawn(async move {
                    let _g = guard;
                    std::future::pending::<()>().await;
                    TaskEnd::Returned
                })
                .unwrap();
            }
            // Return at once: most tasks are still queued, never polled.
            TaskEnd::Returned
        });
        assert_eq!(out, RunOutcome::Returned);
        assert_eq!(alive.load(Ordering::SeqCst), 0, "workers {workers}");
    }
}
