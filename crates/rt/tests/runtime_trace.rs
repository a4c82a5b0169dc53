//! The trace's content: named task tracks (`set_task_name`), "woken"
//! instants with the waking task, "runnable" spans from a wake to the poll
//! it led to, a track per worker thread showing which task it polled, and
//! wait spans from the moment a task parked to its wake (or to the end of
//! the run for a task still blocked then).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use weft_chan::Chan;
use weft_rt::{self as runtime, Config, RunOutcome, Runtime, SrcLoc, TaskEnd, WaitKind};

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
        assert_eq!(thread_name(&ev, 1, 1).as_deref(), Some("producer #1"));
        assert_eq!(thread_name(&ev, 1, 2).as_deref(), Some("consumer #2"));
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
        assert!(on_workers.iter().any(|e| e["name"] == "consumer #2"));
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

/// Runs `main` with a trace and returns the outcome and the trace's events.
fn traced<F>(workers: usize, name: &str, main: F) -> (RunOutcome, Vec<Value>)
where
    F: std::future::Future<Output = TaskEnd> + Send + 'static,
{
    let path = trace_path(name);
    let rt = Runtime::new(Config {
        workers,
        seed: 1,
        trace: Some(path.clone()),
        max_tasks: None,
    });
    let out = rt.run(main);
    assert_eq!(rt.trace_error(), None);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).ok();
    (out, doc["traceEvents"].as_array().unwrap().clone())
}

/// The spans on a task's track: (start, end) in µs, by start. The file
/// lists each worker's events together, so a task that ran on both
/// workers has its spans out of order there.
fn spans(ev: &[Value], tid: u64, name: &str) -> Vec<(f64, f64)> {
    let mut v: Vec<(f64, f64)> = ev
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == 1 && e["tid"] == tid && e["name"] == name)
        .map(|e| {
            let ts = e["ts"].as_f64().unwrap();
            (ts, ts + e["dur"].as_f64().unwrap())
        })
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

fn wakes(ev: &[Value], tid: u64) -> Vec<f64> {
    ev.iter()
        .filter(|e| e["ph"] == "i" && e["name"] == "woken" && e["tid"] == tid)
        .map(|e| e["ts"].as_f64().unwrap())
        .collect()
}

/// The end of the last event of the trace.
fn last_end(ev: &[Value]) -> f64 {
    ev.iter()
        .filter_map(|e| Some(e["ts"].as_f64()? + e["dur"].as_f64().unwrap_or(0.0)))
        .fold(0.0, f64::max)
}

/// Sleeps `ms` as the interpreter does: the wait recorded around it.
async fn nap(ms: u64) {
    runtime::set_wait(WaitKind::Sleep, SrcLoc::new("two.weft", 2, 2));
    runtime::sleep(Duration::from_millis(ms)).await;
    runtime::clear_wait();
}

const CLOSE: f64 = 1e-3; // µs: the file's resolution is 1 ns

#[test]
fn both_sleepers_wait_from_the_moment_they_parked() {
    // Issue 26: with one worker the 20 ms sleeper's wait was drawn from the
    // moment the 10 ms sleeper woke (the start was kept per worker).
    for workers in [1, 2] {
        let (out, ev) = traced(workers, &format!("sleepers{workers}"), async {
            let done: weft_chan::Chan<u64> = weft_chan::Chan::new(0);
            for ms in [10, 20] {
                let d = done.clone();
                runtime::spawn(async move {
                    nap(ms).await;
                    d.send(ms).await.ok();
                    TaskEnd::Returned
                })
                .unwrap();
            }
            for _ in 0..2 {
                runtime::set_wait(WaitKind::ChanRecv, SrcLoc::new("two.weft", 9, 2));
                done.recv().await;
                runtime::clear_wait();
            }
            TaskEnd::Returned
        });
        assert_eq!(out, RunOutcome::Returned);
        let mut waits = Vec::new();
        for (task, ms) in [(2, 10.0), (3, 20.0)] {
            let w = spans(&ev, task, "wait: sleep");
            assert_eq!(w.len(), 1, "task {task}: {w:?}");
            let (start, end) = w[0];
            // It starts where the poll that parked it ended...
            let first_run = spans(&ev, task, "run")[0];
            assert!(
                (start - first_run.1).abs() < CLOSE,
                "task {task}: {start} vs {first_run:?}"
            );
            // ...and ends at the wake the timer made.
            assert!(wakes(&ev, task).iter().any(|&t| (t - end).abs() < CLOSE));
            assert!(
                end - start >= ms * 1000.0,
                "task {task} slept {} µs",
                end - start
            );
            waits.push((start, end));
        }
        // Both began before either ended: they slept at the same time.
        assert!(waits[1].0 < waits[0].1, "{waits:?}");
        assert!(waits[0].0 < waits[1].1, "{waits:?}");
        // Main waited twice, each wait ending at a wake by a sleeper.
        let main = spans(&ev, 1, "wait: chan receive");
        assert_eq!(main.len(), 2, "{main:?}");
        assert!(
            main[0].0 < waits[0].1 && main[1].0 >= waits[0].1 - CLOSE,
            "{main:?} {waits:?}"
        );
        // Waits and runnable spans do not overlap: waiting for data, then
        // for a worker.
        for task in 1..=3 {
            for (ws, we) in spans(&ev, task, "wait: sleep").into_iter().chain(spans(
                &ev,
                task,
                "wait: chan receive",
            )) {
                for (rs, re) in spans(&ev, task, "runnable") {
                    assert!(re <= ws + CLOSE || rs >= we - CLOSE, "task {task}");
                }
            }
        }
    }
}

#[test]
fn blocked_tasks_wait_until_the_run_ends() {
    // Deadlock: main and a helper both wait forever.
    let (out, ev) = traced(1, "deadlock", async {
        let never: weft_chan::Chan<u32> = weft_chan::Chan::new(0);
        let rx = never.clone();
        runtime::spawn(async move {
            runtime::set_wait(WaitKind::ChanRecv, SrcLoc::new("d.weft", 3, 2));
            rx.recv().await;
            runtime::clear_wait();
            TaskEnd::Returned
        })
        .unwrap();
        runtime::yield_now().await;
        let stuck: weft_chan::Chan<u32> = weft_chan::Chan::new(0);
        runtime::set_wait(WaitKind::ChanSend, SrcLoc::new("d.weft", 5, 2));
        stuck.send(1).await.ok();
        runtime::clear_wait();
        TaskEnd::Returned
    });
    assert!(
        matches!(out, RunOutcome::Deadlock(ref b) if b.len() == 2),
        "{out:?}"
    );
    let end = last_end(&ev);
    for (task, name) in [(1, "wait: chan send"), (2, "wait: chan receive")] {
        let w = spans(&ev, task, name);
        assert_eq!(w.len(), 1, "task {task}: {w:?}");
        let last_run = *spans(&ev, task, "run").last().unwrap();
        assert!((w[0].0 - last_run.1).abs() < CLOSE, "task {task}");
        assert!((w[0].1 - end).abs() < CLOSE, "task {task} waits to the end");
    }

    // Main returns while a task still waits: its wait lasts to the end too.
    let (out, ev) = traced(2, "left", async {
        let never: weft_chan::Chan<u32> = weft_chan::Chan::new(0);
        let rx = never.clone();
        runtime::spawn(async move {
            runtime::set_wait(WaitKind::ChanRecv, SrcLoc::new("d.weft", 3, 2));
            rx.recv().await;
            runtime::clear_wait();
            TaskEnd::Returned
        })
        .unwrap();
        while never.queued().1 == 0 {
            runtime::yield_now().await;
        }
        TaskEnd::Exit(3)
    });
    assert_eq!(out, RunOutcome::Exit(3));
    let w = spans(&ev, 2, "wait: chan receive");
    assert_eq!(w.len(), 1, "{w:?}");
    let main_end = spans(&ev, 1, "run").last().unwrap().1;
    assert!(w[0].1 >= main_end - CLOSE && (w[0].1 - last_end(&ev)).abs() < CLOSE);
}

#[test]
fn a_wait_that_completes_within_its_poll_is_not_drawn() {
    let (out, ev) = traced(1, "nowait", async {
        let ch: weft_chan::Chan<u32> = weft_chan::Chan::new(1);
        ch.try_send(5).ok();
        runtime::set_wait(WaitKind::ChanRecv, SrcLoc::new("n.weft", 1, 1));
        assert_eq!(ch.recv().await, Some(5));
        runtime::clear_wait();
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
    assert!(spans(&ev, 1, "wait: chan receive").is_empty());
    assert!(ev.iter().all(|e| e["cat"] != "wait"));
}

/// Tasks that name their device (`set_task_device`) carry it in their
/// track's metadata and sort by device, then by number; `trace_span_in`
/// gives a span its category, and `trace_span_between` records a span at
/// instants taken elsewhere (clipped to the run's start).
#[test]
fn tracks_carry_their_device_and_spans_their_category() {
    let path = trace_path("devices");
    let rt = Runtime::new(Config {
        workers: 1,
        seed: 1,
        trace: Some(path.clone()),
        max_tasks: None,
    });
    let before = std::time::Instant::now();
    let out = rt.run(async move {
        runtime::set_task_device("cpu");
        let done: Chan<u32> = Chan::new(8);
        for dev in ["gpu:1", "gpu:0", "gpu:1"] {
            let d = done.clone();
            runtime::spawn(async move {
                runtime::set_task_device(dev);
                {
                    let _s = runtime::trace_span_in("copy", "copy cpu→dev");
                }
                let t = std::time::Instant::now();
                runtime::trace_span_between("fallback", "late", t, t + Duration::from_millis(1));
                runtime::trace_span_between("fallback", "early", before, t);
                d.send(1).await.ok();
                TaskEnd::Returned
            })
            .unwrap();
        }
        for _ in 0..3 {
            done.recv().await;
        }
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).ok();
    let ev = doc["traceEvents"].as_array().unwrap();
    let meta = |name: &str, tid: u64| {
        ev.iter()
            .find(|e| e["ph"] == "M" && e["name"] == name && e["pid"] == 1 && e["tid"] == tid)
            .map(|e| e["args"].clone())
            .unwrap()
    };
    let devices: Vec<String> = (1..=4)
        .map(|t| {
            meta("thread_name", t)["device"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(devices, ["cpu", "gpu:1", "gpu:0", "gpu:1"]);
    let mut by_sort: Vec<u64> = (1..=4).collect();
    by_sort.sort_by_key(|&t| meta("thread_sort_index", t)["sort_index"].as_u64().unwrap());
    assert_eq!(by_sort, [1, 2, 4, 3]);
    let span = |tid: u64, name: &str| {
        ev.iter()
            .find(|e| e["ph"] == "X" && e["tid"] == tid && e["pid"] == 1 && e["name"] == name)
            .cloned()
            .unwrap()
    };
    for tid in 2..=4 {
        assert_eq!(span(tid, "copy cpu→dev")["cat"], "copy");
        let late = span(tid, "late");
        assert_eq!(late["cat"], "fallback");
        assert_eq!(late["dur"].as_f64().unwrap(), 1000.0);
        let early = span(tid, "early");
        assert_eq!(early["ts"].as_f64().unwrap(), 0.0);
        assert!(early["ts"].as_f64().unwrap() <= late["ts"].as_f64().unwrap());
    }
}
