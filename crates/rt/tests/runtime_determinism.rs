//! Determinism: with one worker and a fixed seed, a run schedules tasks in
//! the same order every time (the same sequence of trace events, the same
//! interleaving of a program's effects).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use weft_rt::{self as runtime, Config, RunOutcome, Runtime, TaskEnd};

/// A small CSP program: producers, a fan-in, yields, spawns from tasks,
/// and a log of who did what in which order.
async fn program(log: Arc<Mutex<Vec<String>>>) -> TaskEnd {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<(u64, u32)>(2);
    for p in 0..5u32 {
        let tx = tx.clone();
        let log = log.clone();
        runtime::spawn(async move {
            for i in 0..6u32 {
                if (i + p) % 3 == 0 {
                    runtime::yield_now().await;
                }
                let _span = runtime::trace_span("produce");
                tx.send((runtime::current_task(), i)).await.ok();
                log.lock()
                    .unwrap()
                    .push(format!("sent {} {}", runtime::current_task(), i));
                if i == 2 {
                    let log = log.clone();
                    runtime::spawn(async move {
                        log.lock()
                            .unwrap()
                            .push(format!("child of {p} is {}", runtime::current_task()));
                        TaskEnd::Returned
                    })
                    .ok();
                }
            }
            TaskEnd::Returned
        })
        .unwrap();
    }
    drop(tx);
    while let Some((task, i)) = rx.recv().await {
        log.lock()
            .unwrap()
            .push(format!("got {task} {i} seed {}", runtime::run_seed()));
    }
    TaskEnd::Returned
}

fn trace_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("weft-det-{}-{name}.json", std::process::id()))
}

/// The trace's events without timestamps: (name, task, worker) in file order.
fn trace_shape(path: &PathBuf) -> Vec<(String, u64, u64)> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["tid"].as_u64().unwrap(),
                e["args"]["worker"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn one_worker_runs_the_same_way_every_time() {
    let mut logs = Vec::new();
    let mut traces = Vec::new();
    for run in 0..5 {
        let log = Arc::new(Mutex::new(Vec::new()));
        let path = trace_path(&run.to_string());
        let rt = Runtime::new(Config {
            workers: 1,
            seed: 42,
            trace: Some(path.clone()),
            max_tasks: None,
        });
        let out = rt.run(program(log.clone()));
        assert_eq!(out, RunOutcome::Returned);
        assert_eq!(rt.trace_error(), None);
        logs.push(log.lock().unwrap().clone());
        traces.push(trace_shape(&path));
        std::fs::remove_file(&path).ok();
    }
    assert_eq!(logs[0].len(), 30 + 30 + 5);
    assert!(traces[0].iter().any(|(n, _, _)| n == "produce"));
    assert!(traces[0].iter().filter(|(n, _, _)| n == "run").count() > 30);
    for i in 1..5 {
        assert_eq!(logs[i], logs[0], "run {i} differs");
        assert_eq!(traces[i], traces[0], "trace of run {i} differs");
    }
}

#[test]
fn the_seed_is_visible_to_tasks() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let out = Runtime::new(Config {
        workers: 1,
        seed: 99,
        trace: None,
        max_tasks: None,
    })
    .run(program(log.clone()));
    assert_eq!(out, RunOutcome::Returned);
    assert!(log.lock().unwrap().iter().any(|l| l.ends_with("seed 99")));
}

#[test]
fn the_trace_names_task_tracks_and_records_waits_and_spans() {
    let path = trace_path("content");
    let rt = Runtime::new(Config {
        workers: 2,
        seed: 1,
        trace: Some(path.clone()),
        max_tasks: None,
    });
    let out = rt.run(async {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<u32>(1);
        runtime::spawn(async move {
            let _s = runtime::trace_span("matmul");
            runtime::sleep(std::time::Duration::from_millis(2)).await;
            tx.send(1).await.ok();
            TaskEnd::Returned
        })
        .unwrap();
        runtime::set_wait(
            runtime::WaitKind::ChanRecv,
            runtime::SrcLoc::new("t.weft", 1, 1),
        );
        rx.recv().await;
        runtime::clear_wait();
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).ok();
    let events = doc["traceEvents"].as_array().unwrap();
    let has = |ph: &str, name: &str, tid: u64| {
        events.iter().any(|e| {
            e["ph"] == ph && e["tid"] == tid && (e["name"] == name || e["args"]["name"] == name)
        })
    };
    assert!(has("M", "task 1 (main)", 1));
    assert!(has("M", "task 2", 2));
    assert!(has("X", "run", 1));
    assert!(has("X", "wait: chan receive", 1));
    assert!(has("X", "matmul", 2));
    let wait = events
        .iter()
        .find(|e| e["name"] == "wait: chan receive")
        .unwrap();
    assert!(
        wait["dur"].as_f64().unwrap() >= 1000.0,
        "the wait lasted the 2 ms sleep: {wait}"
    );
}
