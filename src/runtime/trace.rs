//! The `Config.trace` timeline: Chrome trace-event JSON ("X" complete events)
//! that Perfetto and chrome://tracing open. One track per task (`tid` = task
//! number, named "task N"); spans for each poll ("run", with the worker in
//! `args`), for each recorded wait ("wait: chan receive", ...) and for named
//! operations the interpreter reports through `trace_span`.
//!
//! Cost when off: one branch on an `Option` per poll and per hook. When on,
//! each worker appends to its own buffer; buffers are merged when the run
//! ends, in worker order, events in the order they were recorded (with one
//! worker the file is therefore the same sequence every run, timestamps
//! aside).

use std::borrow::Cow;
use std::io::Write;
use std::path::PathBuf;

use serde_json::{json, Value};

use super::sync::{lock, Mutex};

/// One span on a task's track.
#[derive(Clone, Debug)]
pub(crate) struct Event {
    pub name: Cow<'static, str>,
    pub cat: &'static str,
    /// Start, ns since the run began.
    pub ts: u64,
    pub dur: u64,
    pub task: u64,
    pub worker: usize,
}

/// Collects the events of one run.
pub(crate) struct Tracer {
    path: PathBuf,
    events: Mutex<Vec<Vec<Event>>>,
    tasks: Mutex<Vec<u64>>,
}

impl Tracer {
    pub fn new(path: PathBuf) -> Tracer {
        Tracer {
            path,
            events: Mutex::new(Vec::new()),
            tasks: Mutex::new(Vec::new()),
        }
    }

    /// Adds a worker's buffer (when the worker stops).
    pub fn flush(&self, worker: usize, buf: Vec<Event>) {
        let mut all = lock(&self.events);
        if all.len() <= worker {
            all.resize_with(worker + 1, Vec::new);
        }
        all[worker].extend(buf);
    }

    /// Records that task `id` exists (names its track).
    pub fn task_started(&self, id: u64) {
        lock(&self.tasks).push(id);
    }

    /// Writes the JSON file.
    pub fn write(&self) -> std::io::Result<()> {
        let mut out: Vec<Value> = Vec::new();
        out.push(json!({"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "weft"}}));
        let mut tasks = lock(&self.tasks).clone();
        tasks.sort_unstable();
        for id in tasks {
            let name = if id == 1 {
                "task 1 (main)".to_string()
            } else {
                format!("task {id}")
            };
            out.push(json!({"name": "thread_name", "ph": "M", "pid": 1, "tid": id, "args": {"name": name}}));
            out.push(json!({"name": "thread_sort_index", "ph": "M", "pid": 1, "tid": id, "args": {"sort_index": id}}));
        }
        for buf in lock(&self.events).iter() {
            for e in buf {
                out.push(json!({
                    "name": e.name, "cat": e.cat, "ph": "X", "pid": 1, "tid": e.task,
                    "ts": e.ts as f64 / 1000.0, "dur": e.dur as f64 / 1000.0,
                    "args": {"worker": e.worker},
                }));
            }
        }
        let doc = json!({"traceEvents": out, "displayTimeUnit": "ms"});
        let mut f = std::io::BufWriter::new(std::fs::File::create(&self.path)?);
        serde_json::to_writer(&mut f, &doc)?;
        f.flush()
    }
}
