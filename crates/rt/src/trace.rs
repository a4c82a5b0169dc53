//! The `Config.trace` timeline: Chrome trace-event JSON that Perfetto and
//! chrome://tracing open. Process 1 ("weft tasks") has one track per task
//! (`tid` = task number, named "task N" or "task N: NAME" after
//! `set_task_name`). On it: a span per poll ("run", with the worker in
//! `args`), per recorded wait ("wait: chan receive", ...), per named
//! operation (`trace_span`), a "woken" instant when the task became runnable
//! (`args.by`: the task that woke it, 0 for a timer or another thread), and
//! a "runnable" span from that wake to the next poll: time spent ready but
//! waiting for a worker. Process 2 ("weft workers") has a track per worker
//! thread with a span per poll, named after the task polled.
//!
//! Cost when off: one branch on an `Option` per poll, wake and hook. When
//! on, each worker appends to its own buffer (wakes from other threads to a
//! shared one, under a lock); buffers are merged when the run ends, in
//! worker order, events in the order they were recorded (with one worker
//! the file is therefore the same sequence every run, timestamps aside).
//! "runnable" spans and worker tracks are derived when the file is written.
//!
//! Invariant used to pair a wake with its poll: a wake is stamped before the
//! task is pushed to any queue, and a poll is stamped after the task was
//! taken from one, so the poll a wake led to is the task's first "run" span
//! starting at or after the wake.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::loom::Mutex;

/// What an event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A span of `dur` ns.
    Span,
    /// The task became runnable, woken by task `by` (0: not a task).
    Wake { by: u64 },
}

/// One event on a task's track.
#[derive(Clone, Debug)]
pub(crate) struct Event {
    pub name: Cow<'static, str>,
    pub cat: &'static str,
    /// Start, ns since the run began.
    pub ts: u64,
    pub dur: u64,
    pub task: u64,
    /// The worker that recorded it; `None` for a wake from another thread.
    pub worker: Option<usize>,
    pub kind: Kind,
}

impl Event {
    /// A "woken" instant on `task`'s track.
    pub fn wake(ts: u64, task: u64, by: u64, worker: Option<usize>) -> Event {
        Event {
            name: Cow::Borrowed("woken"),
            cat: "wake",
            ts,
            dur: 0,
            task,
            worker,
            kind: Kind::Wake { by },
        }
    }
}

/// Collects the events of one run.
pub(crate) struct Tracer {
    path: PathBuf,
    events: Mutex<Vec<Vec<Event>>>,
    /// Wakes recorded on threads that are not workers of the run.
    outside: Mutex<Vec<Event>>,
    tasks: Mutex<Vec<u64>>,
    names: Mutex<HashMap<u64, Arc<str>>>,
}

impl Tracer {
    pub fn new(path: PathBuf) -> Tracer {
        Tracer {
            path,
            events: Mutex::new(Vec::new()),
            outside: Mutex::new(Vec::new()),
            tasks: Mutex::new(Vec::new()),
            names: Mutex::new(HashMap::new()),
        }
    }

    /// Adds a worker's buffer (when the worker stops).
    pub fn flush(&self, worker: usize, buf: Vec<Event>) {
        let mut all = self.events.lock();
        if all.len() <= worker {
            all.resize_with(worker + 1, Vec::new);
        }
        all[worker].extend(buf);
    }

    /// Records an event from a thread that is not a worker.
    pub fn outside(&self, e: Event) {
        self.outside.lock().push(e);
    }

    /// Records that task `id` exists (names its track).
    pub fn task_started(&self, id: u64) {
        self.tasks.lock().push(id);
    }

    /// Names task `id`'s track (`set_task_name`); the last name wins.
    pub fn name_task(&self, id: u64, name: Arc<str>) {
        self.names.lock().insert(id, name);
    }

    fn track_name(names: &HashMap<u64, Arc<str>>, id: u64) -> String {
        match (names.get(&id), id) {
            (Some(n), _) => format!("task {id}: {n}"),
            (None, 1) => "task 1 (main)".to_string(),
            (None, _) => format!("task {id}"),
        }
    }

    /// Writes the JSON file.
    pub fn write(&self) -> std::io::Result<()> {
        let names = self.names.lock().clone();
        let mut out: Vec<Value> = vec![
            json!({"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "weft tasks"}}),
            json!({"name": "process_name", "ph": "M", "pid": 2, "args": {"name": "weft workers"}}),
        ];
        let mut tasks = self.tasks.lock().clone();
        tasks.sort_unstable();
        for &id in &tasks {
            let name = Self::track_name(&names, id);
            out.push(json!({"name": "thread_name", "ph": "M", "pid": 1, "tid": id, "args": {"name": name}}));
            out.push(json!({"name": "thread_sort_index", "ph": "M", "pid": 1, "tid": id, "args": {"sort_index": id}}));
        }
        let events = self.events.lock();
        let outside = self.outside.lock();
        let all = || events.iter().flatten().chain(outside.iter());
        // Poll starts per task, sorted, to pair wakes with the poll they led to.
        let mut runs: HashMap<u64, Vec<(u64, usize)>> = HashMap::new();
        let mut workers = 0;
        for e in all().filter(|e| e.cat == "run") {
            let w = e.worker.unwrap_or(0);
            workers = workers.max(w + 1);
            runs.entry(e.task).or_default().push((e.ts, w));
        }
        for v in runs.values_mut() {
            v.sort_unstable();
        }
        for w in 0..workers {
            out.push(json!({"name": "thread_name", "ph": "M", "pid": 2, "tid": w, "args": {"name": format!("worker {w}")}}));
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        for e in all() {
            let worker = e.worker.unwrap_or(0);
            match e.kind {
                Kind::Span => {
                    out.push(json!({
                        "name": e.name, "cat": e.cat, "ph": "X", "pid": 1, "tid": e.task,
                        "ts": us(e.ts), "dur": us(e.dur), "args": {"worker": worker},
                    }));
                    if e.cat == "run" {
                        out.push(json!({
                            "name": Self::track_name(&names, e.task), "cat": "worker", "ph": "X",
                            "pid": 2, "tid": worker, "ts": us(e.ts), "dur": us(e.dur),
                            "args": {"worker": worker, "task": e.task},
                        }));
                    }
                }
                Kind::Wake { by } => {
                    out.push(json!({
                        "name": e.name, "cat": e.cat, "ph": "i", "s": "t", "pid": 1,
                        "tid": e.task, "ts": us(e.ts), "args": {"by": by},
                    }));
                    let next = runs.get(&e.task).and_then(|v| {
                        let i = v.partition_point(|&(ts, _)| ts < e.ts);
                        v.get(i).copied()
                    });
                    if let Some((start, w)) = next {
                        out.push(json!({
                            "name": "runnable", "cat": "runnable", "ph": "X", "pid": 1,
                            "tid": e.task, "ts": us(e.ts), "dur": us(start - e.ts),
                            "args": {"worker": w, "by": by},
                        }));
                    }
                }
            }
        }
        let doc = json!({"traceEvents": out, "displayTimeUnit": "ms"});
        let mut f = std::io::BufWriter::new(std::fs::File::create(&self.path)?);
        serde_json::to_writer(&mut f, &doc)?;
        f.flush()
    }
}
