//! The `Config.trace` timeline: Chrome trace-event JSON that Perfetto and
//! chrome://tracing open. Process 1 ("weft tasks") has one track per task
//! (`tid` = task number), named "NAME #N" after `set_task_name`, else
//! "task N" ("task 1 (main)"); a track whose task named its device
//! (`set_task_device`) carries it in its metadata (`args.device`), and the
//! tracks are sorted by device, then by number (`thread_sort_index`). On it: a span per poll ("run", with the
//! worker in `args`), per wait ("wait: chan receive", ...: from the moment
//! the task parked to the wake that ended it, or to the end of the run for a
//! task still blocked then), per named operation (`trace_span`), a "woken"
//! instant when the task became runnable (`args.by`: the task that woke it,
//! 0 for a timer or another thread), and a "runnable" span from that wake to
//! the next poll: time spent ready but waiting for a worker. Process 2
//! ("weft workers") has a track per worker thread with a span per poll,
//! named after the task polled (`args.task`: its number).
//!
//! Cost when off: one branch on an `Option` per poll, wake and hook. When
//! on, each worker appends to its own buffer (wakes from other threads to a
//! shared one, under a lock); buffers are merged when the run ends, in
//! worker order, events in the order they were recorded (with one worker
//! the file is therefore the same sequence every run, timestamps aside).
//! "runnable" spans, wait spans and worker tracks are derived when the file
//! is written, which streams it (no tree of the whole document in memory).
//!
//! Invariant used to pair a wake with its poll: a wake is stamped before the
//! task is pushed to any queue, and a poll is stamped after the task was
//! taken from one, so the poll a wake led to is the task's first "run" span
//! starting at or after the wake.
//!
//! Waits are recorded as two marks, because the poll that begins a wait and
//! the one that ends it may run on different workers: `WaitBegin` when the
//! task records why it is about to block (`set_wait`, during the poll that
//! parks it) and `WaitEnd` when it clears the record (`clear_wait`, in the
//! poll after the wake). The span drawn starts where the poll that recorded
//! the wait ended (the task parked there; a wait that completed within that
//! poll never parked and is left out) and ends at the task's last wake
//! before `WaitEnd`, or at the end of the run when there is no `WaitEnd`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use crate::loom::Mutex;

/// What an event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A span of `dur` ns.
    Span,
    /// The task became runnable, woken by task `by` (0: not a task).
    Wake { by: u64 },
    /// The task recorded a wait; the event's name is the span's
    /// ("wait: chan receive").
    WaitBegin,
    /// The task cleared the wait it recorded.
    WaitEnd,
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

    /// A wait mark on `task`'s track (`name`: the wait span's).
    pub fn wait(ts: u64, task: u64, worker: usize, kind: Kind, name: &'static str) -> Event {
        Event {
            name: Cow::Borrowed(name),
            cat: "wait",
            ts,
            dur: 0,
            task,
            worker: Some(worker),
            kind,
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
    /// The device each task runs on, where the program said (`set_task_device`).
    devices: Mutex<HashMap<u64, Arc<str>>>,
    /// When the last worker stopped (ns): the end of the run.
    end: Mutex<u64>,
}

impl Tracer {
    pub fn new(path: PathBuf) -> Tracer {
        Tracer {
            path,
            events: Mutex::new(Vec::new()),
            outside: Mutex::new(Vec::new()),
            tasks: Mutex::new(Vec::new()),
            names: Mutex::new(HashMap::new()),
            devices: Mutex::new(HashMap::new()),
            end: Mutex::new(0),
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

    /// Notes that a worker stopped at `now` (ns): the run ends with the last.
    pub fn worker_stopped(&self, now: u64) {
        let mut end = self.end.lock();
        *end = (*end).max(now);
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

    /// Records the device task `id` runs on (`set_task_device`); the last wins.
    pub fn place_task(&self, id: u64, device: Arc<str>) {
        self.devices.lock().insert(id, device);
    }

    fn track_name(names: &HashMap<u64, Arc<str>>, id: u64) -> String {
        match (names.get(&id), id) {
            (Some(n), _) => format!("{n} #{id}"),
            (None, 1) => "task 1 (main)".to_string(),
            (None, _) => format!("task {id}"),
        }
    }

    /// Writes the JSON file.
    pub fn write(&self) -> std::io::Result<()> {
        let names = self.names.lock().clone();
        let mut tasks = self.tasks.lock().clone();
        tasks.sort_unstable();
        let events = self.events.lock();
        let outside = self.outside.lock();
        let all: Vec<&Event> = events.iter().flatten().chain(outside.iter()).collect();
        let end_of_run = all
            .iter()
            .map(|e| e.ts.saturating_add(e.dur))
            .fold(*self.end.lock(), u64::max);
        let timeline = Timeline::new(&all, end_of_run);
        let track_names: HashMap<u64, String> = tasks
            .iter()
            .map(|&id| (id, Self::track_name(&names, id)))
            .collect();
        let track_name = |id: u64| match track_names.get(&id) {
            Some(n) => Cow::Borrowed(n.as_str()),
            None => Cow::Owned(Self::track_name(&names, id)),
        };

        // Tracks are sorted by device (devices in the order of their first
        // task), then by task number: each device's tasks show together.
        let devices = self.devices.lock().clone();
        let mut groups: Vec<&Arc<str>> = Vec::new();
        for id in &tasks {
            if let Some(d) = devices.get(id) {
                if !groups.contains(&d) {
                    groups.push(d);
                }
            }
        }
        let sort_index = |id: u64| {
            let group = devices
                .get(&id)
                .and_then(|d| groups.iter().position(|g| *g == d))
                .unwrap_or(0);
            ((group as u64) << 40) | id
        };

        let file = std::fs::File::create(&self.path)?;
        let mut w = JsonEvents::new(std::io::BufWriter::with_capacity(1 << 16, file))?;
        w.raw(r#"{"name":"process_name","ph":"M","pid":1,"args":{"name":"weft tasks"}}"#)?;
        w.raw(r#"{"name":"process_name","ph":"M","pid":2,"args":{"name":"weft workers"}}"#)?;
        for &id in &tasks {
            w.begin()?;
            write!(
                w.out,
                r#"{{"name":"thread_name","ph":"M","pid":1,"tid":{id},"args":{{"name":"#
            )?;
            w.string(&track_name(id))?;
            if let Some(d) = devices.get(&id) {
                write!(w.out, r#","device":"#)?;
                w.string(d)?;
            }
            write!(w.out, "}}}}")?;
            w.raw(&format!(
                r#"{{"name":"thread_sort_index","ph":"M","pid":1,"tid":{id},"args":{{"sort_index":{}}}}}"#,
                sort_index(id)
            ))?;
        }
        for k in 0..timeline.workers {
            w.raw(&format!(
                r#"{{"name":"thread_name","ph":"M","pid":2,"tid":{k},"args":{{"name":"worker {k}"}}}}"#
            ))?;
        }
        for (i, e) in all.iter().enumerate() {
            let worker = e.worker.unwrap_or(0);
            match e.kind {
                Kind::Span => {
                    w.span(&e.name, e.cat, 1, e.task, e.ts, e.dur)?;
                    write!(w.out, r#","args":{{"worker":{worker}}}}}"#)?;
                    if e.cat == "run" {
                        w.span(&track_name(e.task), "worker", 2, worker as u64, e.ts, e.dur)?;
                        write!(
                            w.out,
                            r#","args":{{"worker":{worker},"task":{}}}}}"#,
                            e.task
                        )?;
                    }
                }
                Kind::Wake { by } => {
                    w.begin()?;
                    write!(
                        w.out,
                        r#"{{"name":"woken","cat":"wake","ph":"i","s":"t","pid":1,"tid":{},"ts":{},"args":{{"by":{by}}}}}"#,
                        e.task,
                        Us(e.ts)
                    )?;
                    if let Some((start, wk)) = timeline.next_run(e.task, e.ts) {
                        w.span("runnable", "runnable", 1, e.task, e.ts, start - e.ts)?;
                        write!(w.out, r#","args":{{"worker":{wk},"by":{by}}}}}"#)?;
                    }
                }
                Kind::WaitBegin => {
                    let Some(&(start, end)) = timeline.waits.get(&i) else {
                        continue;
                    };
                    w.span(&e.name, "wait", 1, e.task, start, end - start)?;
                    write!(w.out, r#","args":{{"worker":{worker}}}}}"#)?;
                }
                Kind::WaitEnd => {}
            }
        }
        w.finish()
    }
}

/// What the file's derived spans need, indexed by task.
struct Timeline {
    /// Polls per task: (start, end, worker), by start.
    runs: HashMap<u64, Vec<(u64, u64, usize)>>,
    /// The wait span of each `WaitBegin` that parked, by event index.
    waits: HashMap<usize, (u64, u64)>,
    workers: usize,
}

impl Timeline {
    fn new(all: &[&Event], end_of_run: u64) -> Timeline {
        let mut runs: HashMap<u64, Vec<(u64, u64, usize)>> = HashMap::new();
        let mut wakes: HashMap<u64, Vec<u64>> = HashMap::new();
        // Wait marks per task: (ts, event index).
        let mut marks: HashMap<u64, Vec<(u64, usize)>> = HashMap::new();
        let mut workers = 0;
        for (i, e) in all.iter().enumerate() {
            match e.kind {
                Kind::Span if e.cat == "run" => {
                    let w = e.worker.unwrap_or(0);
                    workers = workers.max(w + 1);
                    let end = e.ts.saturating_add(e.dur);
                    runs.entry(e.task).or_default().push((e.ts, end, w));
                }
                Kind::Span => {}
                Kind::Wake { .. } => wakes.entry(e.task).or_default().push(e.ts),
                Kind::WaitBegin | Kind::WaitEnd => {
                    marks.entry(e.task).or_default().push((e.ts, i));
                }
            }
        }
        for v in runs.values_mut() {
            v.sort_unstable();
        }
        for v in wakes.values_mut() {
            v.sort_unstable();
        }
        let mut waits = HashMap::new();
        for (task, mut m) in marks {
            // A task's marks alternate in time; equal stamps keep the order
            // they were recorded in (one worker's buffer).
            m.sort_unstable();
            let polls = runs.get(&task).map_or(&[][..], Vec::as_slice);
            let woken = wakes.get(&task).map_or(&[][..], Vec::as_slice);
            for (j, &(ts, i)) in m.iter().enumerate() {
                if all[i].kind != Kind::WaitBegin {
                    continue;
                }
                // It parked when the poll that recorded it ended.
                let k = polls.partition_point(|r| r.0 <= ts);
                let parked = match k.checked_sub(1).map(|k| polls[k]) {
                    Some((_, end, _)) if end >= ts => end,
                    _ => ts,
                };
                // Cleared (or replaced) by the next mark; else blocked at the end.
                let (cleared, still_blocked) = match m.get(j + 1) {
                    Some(&(next, _)) => (next, false),
                    None => (end_of_run.max(parked), true),
                };
                if cleared <= parked && !still_blocked {
                    continue; // completed within the poll: never parked
                }
                // Ended by the last wake before it was cleared.
                let k = woken.partition_point(|&w| w <= cleared);
                let end = match k.checked_sub(1).map(|k| woken[k]) {
                    Some(w) if w >= ts => w.max(parked),
                    _ => cleared,
                };
                waits.insert(i, (parked, end));
            }
        }
        Timeline {
            runs,
            waits,
            workers,
        }
    }

    /// The first poll of `task` starting at or after `ts`: (start, worker).
    fn next_run(&self, task: u64, ts: u64) -> Option<(u64, usize)> {
        let v = self.runs.get(&task)?;
        let i = v.partition_point(|r| r.0 < ts);
        v.get(i).map(|r| (r.0, r.2))
    }
}

/// Nanoseconds written as microseconds with three decimals (exact).
struct Us(u64);

impl std::fmt::Display for Us {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
    }
}

/// Writes `{"traceEvents":[...],"displayTimeUnit":"ms"}` one event at a time.
struct JsonEvents<W: Write> {
    out: W,
    first: bool,
}

impl<W: Write> JsonEvents<W> {
    fn new(mut out: W) -> std::io::Result<Self> {
        out.write_all(br#"{"traceEvents":["#)?;
        Ok(JsonEvents { out, first: true })
    }

    /// Starts an event (the separator).
    fn begin(&mut self) -> std::io::Result<()> {
        if !std::mem::take(&mut self.first) {
            self.out.write_all(b",\n")?;
        }
        Ok(())
    }

    /// A whole event given as JSON text.
    fn raw(&mut self, event: &str) -> std::io::Result<()> {
        self.begin()?;
        self.out.write_all(event.as_bytes())
    }

    /// A JSON string.
    fn string(&mut self, s: &str) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.out, s).map_err(std::io::Error::from)
    }

    /// A complete event up to its `args` (the caller writes them and `}`).
    fn span(
        &mut self,
        name: &str,
        cat: &str,
        pid: u32,
        tid: u64,
        ts: u64,
        dur: u64,
    ) -> std::io::Result<()> {
        self.begin()?;
        self.out.write_all(br#"{"name":"#)?;
        self.string(name)?;
        write!(
            self.out,
            r#","cat":"{cat}","ph":"X","pid":{pid},"tid":{tid},"ts":{},"dur":{}"#,
            Us(ts),
            Us(dur)
        )
    }

    fn finish(mut self) -> std::io::Result<()> {
        self.out.write_all(b"],\"displayTimeUnit\":\"ms\"}\n")?;
        self.out.flush()
    }
}
