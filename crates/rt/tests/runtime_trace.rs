//! The trace's content: named task tracks (`set_task_name`), "woken"
//! instants with the waking task, "runnable" spans from a wake to the poll
//! it led to, and a track per worker thread showing which task it polled.

use std::path::PathBuf;

use serde_json::Value;
use weft_chan::Chan;
use weft_rt::{self as runtime, Config, RunOutcome, Runtime, TaskEnd};

fn trace_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("weft-trace-{}-{name}.json", std::process::id()))
}

/// Runs a main that names itself, spawns a named consumer and sends it two
/// values (the second from a plain thread), and returns the trace events.
fn traced_run(workers: usize, name: &str) -> Vec<Value> {
    let path = trace_path(name);
    let rt = Runtime::new(Config {
        workers,
        seed: 1,
        trace: Some(path.clone()),
        max_tasks: None,
    });
    let out = rt.run(async {
        assert!(runtime::tracing());
        runtime::set_task_name("producer");
        let ch: Chan<u32> = Chan::new(0);
        let done: Chan<u32> = Chan::new(0);
        let (rx, tx_done) = (ch.clone(), done.clone());
        runtime::spawn(async move {
            runtime::set_task_name(String::from("consumer"));
            let mut sum = 0;
            while let Some(v) = rx.recv().await {
                sum += v;
            }
            tx_done.send(sum).await.ok();
            TaskEnd::Returned
        })
        .unwrap();
        // Send only once the consumer waits, so that this send wakes it
        // (by task 1) whatever the schedule.
        while ch.queued().1 == 0 {
            runtime::yield_now().await;
        }
        ch.send(1).await.ok();
        let outside = ch.clone();
        let _hold = runtime::external_wait();
        std::thread::spawn(move || {
            // Likewise, the plain thread (by 0) sends and closes only while
            // the consumer waits: a wake-up from outside the runtime.
            let consumer_waits = || {
                while outside.queued().1 == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            };
            consumer_waits();
            outside.send_blocking(2).ok();
            consumer_waits();
            outside.close().ok();
        });
        assert_eq!(done.recv().await, Some(3));
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
    assert_eq!(rt.trace_error(), None);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).ok();
    doc["traceEvents"].as_array().unwrap().clone()
}

fn thread_name(events: &[Value], pid: u64, tid: u64) -> Option<String> {
    events
        .iter()
        .find(|e| {
            e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == pid && e["tid"] == tid
        })
        .map(|e| e["args"]["name"].as_str().unwrap().to_string())
}

#[test]
fn tracks_are_named_and_wakes_are_visible() {
    for workers in [1, 2] {
        let ev = traced_run(workers, &format!("w{workers}"));
        assert_eq!(thread_name(&ev, 1, 1).as_deref(), Some("task 1: producer"));
        assert_eq!(thread_name(&ev, 1, 2).as_deref(), Some("task 2: consumer"));
        assert_eq!(thread_name(&ev, 2, 0).as_deref(), Some("worker 0"));
        // The consumer was woken by main's send, and from the plain thread.
        let wakes: Vec<u64> = ev
            .iter()
            .filter(|e| e["ph"] == "i" && e["name"] == "woken" && e["tid"] == 2)
            .map(|e| e["args"]["by"].as_u64().unwrap())
            .collect();
        assert!(wakes.contains(&1), "wakes of task 2: {wakes:?}");
        assert!(wakes.contains(&0), "wakes of task 2: {wakes:?}");
        // Each wake led to a poll: a runnable span that ends where a run starts.
        let starts: Vec<f64> = ev
            .iter()
            .filter(|e| e["ph"] == "X" && e["name"] == "run" && e["tid"] == 2)
            .map(|e| e["ts"].as_f64().unwrap())
            .collect();
        let runnable: Vec<&Value> = ev
            .iter()
            .filter(|e| e["name"] == "runnable" && e["tid"] == 2)
            .collect();
        assert_eq!(runnable.len(), wakes.len());
        for r in runnable {
            let end = r["ts"].as_f64().unwrap() + r["dur"].as_f64().unwrap();
            assert!(
                starts.iter().any(|s| (s - end).abs() < 1e-3),
                "runnable span ending at {end} matches no run of task 2"
            );
        }
        // Every poll appears again on its worker's track, named after the task.
        let runs = ev.iter().filter(|e| e["cat"] == "run").count();
        let on_workers: Vec<&Value> = ev.iter().filter(|e| e["cat"] == "worker").collect();
        assert_eq!(on_workers.len(), runs);
        assert!(on_workers
            .iter()
            .all(|e| e["pid"] == 2 && e["tid"] == e["args"]["worker"]));
        assert!(on_workers.iter().any(|e| e["name"] == "task 2: consumer"));
    }
}

#[test]
fn naming_outside_a_traced_run_does_nothing() {
    runtime::set_task_name("nobody");
    assert!(!runtime::tracing());
    let out = Runtime::new(Config {
        workers: 1,
        seed: 1,
        trace: None,
        max_tasks: None,
    })
    .run(async {
        runtime::set_task_name("main");
        assert!(!runtime::tracing());
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
}
