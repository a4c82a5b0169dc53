//! The messaging thread: the one thread that talks to the transport (MPI
//! requires it: rsmpi's handles are not shared between threads, and the
//! library is started `MPI_THREAD_FUNNELED` on this thread). Tasks hand it
//! commands through the [`Inbox`]; it sends and receives messages, serves
//! this process's exported channels to other processes, runs collectives
//! one at a time, takes part in the deadlock detection (`detect.rs`), and
//! ends the program. Between passes over its work it waits as `backoff.rs`
//! says. docs/distributed.md, "How it works", tells the protocol.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

use weft_coll::{kernel, Data, Op, Outcome};

use crate::backoff::{Backoff, Wait};
use crate::detect::{Action, Detector};
use crate::header::{
    self, check, mismatch, payload_bytes, shape_of, Check, Desc, Header, Kind, SLOT,
};
use crate::loom::Ordering;
use crate::reduce;
use crate::slot::Completer;
use crate::transport::{Attached, F32Src, Step, StepOut, Transport, TransportError};
use crate::wire::{Msg, Status};
use crate::world::{BoxFuture, Bytes, Cmd, Dir, End, EngineEnd, Host, Inbox};
use crate::{CallError, Payload, RemoteError};

/// All-reduces of tensors up to this many bytes gather every member's
/// tensor and reduce it whole on each process (one step); larger ones
/// reduce-scatter then all-gather (two steps, each process moving about
/// twice the tensor, as MPI's own large all-reduce does).
const SMALL_REDUCE_BYTES: u64 = 64 * 1024;

/// A served send in progress: from, request, the send into the channel.
type SendOp = (usize, u64, BoxFuture<Result<(), RemoteError>>);
/// A served receive in progress: for, request, the receive.
type RecvOp = (usize, u64, BoxFuture<Result<Option<Payload>, RemoteError>>);

/// A channel of this process served to others: the operations waiting in
/// order, and the one in progress.
struct Owned {
    ep: Arc<dyn crate::Endpoint>,
    sends: VecDeque<(usize, u64, Payload)>,
    send_fut: Option<SendOp>,
    recvs: VecDeque<(usize, u64)>,
    recv_fut: Option<RecvOp>,
}

/// A request of this process waiting for its reply.
enum Waiting {
    Send {
        key: (usize, u64),
        done: Completer<Result<(), RemoteError>>,
    },
    Recv(Completer<Result<Option<Payload>, RemoteError>>),
    Close(Completer<Result<(), RemoteError>>),
    Len(Completer<Result<usize, RemoteError>>),
}

/// Sends to one remote channel: at most `window` (its capacity, at least
/// 1) on their way at once; the rest wait here, in order.
struct Credit {
    window: usize,
    in_flight: usize,
    queue: VecDeque<(u64, Payload)>,
}

struct Job {
    op: Op,
    ty: std::borrow::Cow<'static, str>,
    data: Data<Bytes>,
    done: Completer<Result<Outcome<Bytes>, CallError>>,
}

/// What the collective in progress waits for.
#[derive(Debug)]
enum Phase {
    Headers,
    Descs,
    /// Every member's tensor, to reduce whole.
    ReduceAll,
    /// This process's chunk from every member, to reduce.
    ReduceScatter,
    /// Every process's reduced chunk.
    GatherChunks,
    Bcast,
    Gather,
}

struct Run {
    job: Job,
    desc: Desc,
    headers: Vec<Header>,
    phase: Phase,
}

/// Wakes the messaging thread for a served channel's operation.
struct ProxyWake {
    id: u64,
    dir: Dir,
    inbox: Arc<Inbox>,
}

impl Wake for ProxyWake {
    fn wake(self: Arc<Self>) {
        self.inbox.woken.lock().push((self.id, self.dir));
        self.inbox.unpark();
    }
}

pub(crate) struct Engine<T: Transport> {
    t: T,
    rank: usize,
    size: usize,
    inbox: Arc<Inbox>,
    host: Arc<dyn Host>,
    det: Detector,
    clock: Instant,
    owned: HashMap<u64, Owned>,
    next_req: u64,
    waiting: HashMap<u64, Waiting>,
    credits: HashMap<(usize, u64), Credit>,
    jobs: VecDeque<Job>,
    run: Option<Run>,
    /// Rank 0: processes whose `main` returned.
    dones: usize,
    /// The host was told how the program ends (or ended it itself).
    ended: bool,
    /// The detector gave its verdict: detection is over.
    verdict: bool,
    /// Rank 0: each process's blocked-task lines after the verdict.
    report: Option<Vec<Option<Vec<String>>>>,
    finalizing: bool,
    fins: usize,
    /// Collectives this process started.
    started: u64,
    /// The most collectives any process started (known from the `Fin`s).
    max_started: u64,
    /// A step of a collective another process started alone is in
    /// progress here, joined only so that it completes (see `run`).
    filler: bool,
    broken: Option<String>,
    /// Scratch buffers of all-reduces (received pieces, a reduced chunk),
    /// reused by the next one instead of allocated afresh
    /// (docs/distributed.md, "Speed"); at most [`SCRATCH`].
    scratch: Vec<Vec<f32>>,
}

/// How many scratch buffers the messaging thread keeps (an all-reduce uses
/// two at once).
const SCRATCH: usize = 2;
/// A scratch buffer larger than this many bytes is not kept: the memory a
/// process holds for all-reduces it has finished stays bounded.
const SCRATCH_MAX_BYTES: usize = 256 << 20;

type Res = Result<(), TransportError>;

impl<T: Transport> Engine<T> {
    pub fn new(t: T, inbox: Arc<Inbox>, host: Arc<dyn Host>) -> Engine<T> {
        let (rank, size) = (t.rank(), t.size());
        Engine {
            t,
            rank,
            size,
            inbox,
            host,
            det: Detector::new(rank, size),
            clock: Instant::now(),
            owned: HashMap::new(),
            next_req: 1,
            waiting: HashMap::new(),
            credits: HashMap::new(),
            jobs: VecDeque::new(),
            run: None,
            dones: 0,
            ended: false,
            verdict: false,
            report: None,
            finalizing: false,
            fins: 0,
            started: 0,
            max_started: 0,
            filler: false,
            broken: None,
            scratch: Vec::new(),
        }
    }

    /// A scratch buffer for `n` elements: the kept one closest in size
    /// among those large enough, else the largest (it grows), else a new
    /// one.
    fn take_scratch(&mut self, n: usize) -> Vec<f32> {
        let fit = (0..self.scratch.len())
            .filter(|&i| self.scratch[i].capacity() >= n)
            .min_by_key(|&i| self.scratch[i].capacity());
        let big = (0..self.scratch.len()).max_by_key(|&i| self.scratch[i].capacity());
        match fit.or(big) {
            Some(i) => self.scratch.swap_remove(i),
            None => Vec::new(),
        }
    }

    /// Keeps a scratch buffer for the next all-reduce (the smallest goes
    /// when there are too many; one over [`SCRATCH_MAX_BYTES`] is freed).
    fn keep_scratch(&mut self, buf: Vec<f32>) {
        if buf.capacity().saturating_mul(4) > SCRATCH_MAX_BYTES {
            return;
        }
        self.scratch.push(buf);
        if self.scratch.len() > SCRATCH {
            let small = (0..self.scratch.len())
                .min_by_key(|&i| self.scratch[i].capacity())
                .unwrap_or(0);
            self.scratch.swap_remove(small);
        }
    }

    fn now_us(&self) -> u64 {
        self.clock.elapsed().as_micros() as u64
    }

    /// Runs until `World::finish`, then shuts the transport down.
    pub fn run(mut self) -> EngineEnd {
        precise_sleeps();
        let mut backoff = Backoff::for_this_machine();
        loop {
            let busy = match self.pass() {
                Ok(b) => b,
                Err(e) => {
                    self.fail(e.0);
                    true
                }
            };
            if self.finalizing {
                if self.broken.is_some() {
                    break;
                }
                let sends = match self.t.sends_in_flight() {
                    Ok(n) => n,
                    Err(e) => {
                        self.fail(e.0);
                        break;
                    }
                };
                if self.fins + 1 >= self.size
                    && sends == 0
                    && self.run.is_none()
                    && !self.filler
                    && self.started >= self.max_started
                {
                    break;
                }
            }
            if busy {
                backoff.busy();
                continue;
            }
            let now = self.now_us();
            let in_flight = self.in_flight();
            match backoff.next(now, in_flight, self.det.wait_us(now)) {
                Wait::Yield => std::thread::yield_now(),
                Wait::Sleep(us) => std::thread::park_timeout(std::time::Duration::from_micros(us)),
            }
        }
        let clean = self.broken.is_none();
        let broken = self.broken.take();
        // Requests still waiting end as `Ended` when dropped.
        self.t.close(clean);
        match broken {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// This process waits for something from another: a reply, a
    /// collective, its own sends, a served operation, the token.
    fn in_flight(&mut self) -> bool {
        !self.waiting.is_empty()
            || self.run.is_some()
            || !self.jobs.is_empty()
            || self.t.sends_in_flight().map_or(true, |n| n > 0)
            || self
                .owned
                .values()
                .any(|o| o.send_fut.is_some() || o.recv_fut.is_some())
    }

    /// The transport failed: end the program here (an internal error).
    fn fail(&mut self, e: String) {
        if self.broken.is_none() {
            self.broken = Some(e);
        }
        self.end_local(End::Abort {
            rank: self.rank,
            code: 70,
        });
    }

    /// One pass over the work; true if anything happened.
    fn pass(&mut self) -> Result<bool, TransportError> {
        let mut busy = false;
        let cmds: Vec<Cmd> = self.inbox.cmds.lock().drain(..).collect();
        for c in cmds {
            busy = true;
            self.on_cmd(c)?;
        }
        let woken: Vec<(u64, Dir)> = std::mem::take(&mut *self.inbox.woken.lock());
        for (id, dir) in woken {
            busy = true;
            self.pump(id, dir)?;
        }
        while let Some((src, buf, attached)) = self.t.try_recv()? {
            busy = true;
            // Sends that completed hand their buffers back (`pool.rs`)
            // before a reply wakes a task that may want one for its next
            // value.
            self.t.sends_in_flight()?;
            self.on_msg(src, buf, attached)?;
        }
        if self.run.is_some() || self.filler {
            if let Some(out) = self.t.test()? {
                busy = true;
                if self.filler {
                    self.filler = false;
                } else {
                    self.on_step(out)?;
                }
            }
        }
        if self.run.is_none() && !self.finalizing {
            if let Some(job) = self.jobs.pop_front() {
                busy = true;
                self.start_job(job)?;
            }
        }
        if self.finalizing
            && self.fins + 1 >= self.size
            && self.run.is_none()
            && !self.filler
            && self.started < self.max_started
        {
            // Every process's run has ended, and some process started a
            // collective this one never joined: join it with a header that
            // reads as corrupt, so that it completes there (its task is
            // gone) and MPI can be shut down cleanly.
            busy = true;
            self.started += 1;
            self.filler = true;
            self.t.start(Step::Gather {
                mine: vec![0; SLOT],
                counts: vec![SLOT; self.size],
            })?;
        }
        if !self.verdict && !self.finalizing && !self.ended && self.size > 1 {
            // The flag first: a wake that happened before it was set left
            // its trace in the inbox (docs/runtime.md, "Quiescence").
            let passive = self.inbox.quiescent.load(Ordering::SeqCst) && self.inbox.is_empty();
            let now = self.now_us();
            match self.det.step(passive, now) {
                Action::Idle => {}
                Action::Pass(to, t) => self.ctrl(to, Msg::Token(t))?,
                Action::Verdict => {
                    busy = true;
                    self.on_verdict()?;
                }
            }
        }
        Ok(busy)
    }

    fn basic(&mut self, to: usize, msg: Msg) -> Res {
        self.det.sent();
        self.ctrl(to, msg)
    }

    fn ctrl(&mut self, to: usize, mut msg: Msg) -> Res {
        let attached = msg.take_attached();
        let (buf, at) = msg.encode();
        self.t.send(to, buf, at, attached)
    }

    fn others(&self) -> impl Iterator<Item = usize> {
        let me = self.rank;
        (0..self.size).filter(move |&r| r != me)
    }

    fn req(&mut self, w: Waiting) -> u64 {
        let r = self.next_req;
        self.next_req += 1;
        self.waiting.insert(r, w);
        r
    }

    fn end_local(&mut self, why: End) {
        if !self.ended {
            self.ended = true;
            self.host.end(why);
        }
    }

    fn on_cmd(&mut self, c: Cmd) -> Res {
        if self.finalizing {
            return Ok(()); // dropped: its completer ends the wait
        }
        match c {
            Cmd::Coll { op, ty, data, done } => self.jobs.push_back(Job { op, ty, data, done }),
            Cmd::Send { ch, payload, done } => {
                let key = (ch.owner, ch.id);
                let req = self.req(Waiting::Send { key, done });
                let cr = self.credits.entry(key).or_insert_with(|| Credit {
                    window: ch.cap.max(1),
                    in_flight: 0,
                    queue: VecDeque::new(),
                });
                if cr.in_flight < cr.window {
                    cr.in_flight += 1;
                    self.basic(
                        ch.owner,
                        Msg::Data {
                            chan: ch.id,
                            req,
                            payload,
                        },
                    )?;
                } else {
                    cr.queue.push_back((req, payload));
                }
            }
            Cmd::Recv { ch, done } => {
                let req = self.req(Waiting::Recv(done));
                self.basic(ch.owner, Msg::Recv { chan: ch.id, req })?;
            }
            Cmd::Close { ch, done } => {
                let req = self.req(Waiting::Close(done));
                self.basic(ch.owner, Msg::Close { chan: ch.id, req })?;
            }
            Cmd::Len { ch, done } => {
                let req = self.req(Waiting::Len(done));
                self.basic(ch.owner, Msg::Len { chan: ch.id, req })?;
            }
            Cmd::MainReturned => {
                if self.rank == 0 {
                    self.dones += 1;
                    self.check_done()?;
                } else {
                    self.ctrl(0, Msg::Done)?;
                }
            }
            Cmd::Abort(code) => {
                self.ended = true;
                for r in self.others().collect::<Vec<_>>() {
                    self.ctrl(
                        r,
                        Msg::End {
                            code,
                            finished: false,
                        },
                    )?;
                }
            }
            Cmd::Finalize => {
                self.finalizing = true;
                // Jobs not started are dropped (their tasks are gone).
                self.jobs.clear();
                let joined = self.started;
                self.max_started = self.max_started.max(joined);
                for r in self.others().collect::<Vec<_>>() {
                    self.ctrl(r, Msg::Fin { joined })?;
                }
            }
        }
        Ok(())
    }

    fn check_done(&mut self) -> Res {
        if self.dones == self.size {
            for r in self.others().collect::<Vec<_>>() {
                self.ctrl(
                    r,
                    Msg::End {
                        code: 0,
                        finished: true,
                    },
                )?;
            }
            self.end_local(End::Finished);
        }
        Ok(())
    }

    fn reply(&mut self, to: usize, req: u64, status: Status, payload: Payload) -> Res {
        self.basic(
            to,
            Msg::Reply {
                req,
                status: status as u8,
                payload,
            },
        )
    }

    fn broken_reply(&mut self, to: usize, req: u64, why: &str) -> Res {
        self.reply(to, req, Status::Broken, Payload::from_bytes(why.as_bytes()))
    }

    /// The served state of channel `id`, made on first use.
    fn owned(&mut self, id: u64) -> Option<&mut Owned> {
        if !self.owned.contains_key(&id) {
            let ep = self.inbox.exports.lock().endpoints.get(&id).cloned()?;
            self.owned.insert(
                id,
                Owned {
                    ep,
                    sends: VecDeque::new(),
                    send_fut: None,
                    recvs: VecDeque::new(),
                    recv_fut: None,
                },
            );
        }
        self.owned.get_mut(&id)
    }

    fn on_msg(&mut self, src: usize, buf: Vec<u8>, attached: Attached) -> Res {
        let mut msg = Msg::decode(buf, 0).map_err(|e| TransportError(e.to_string()))?;
        msg.set_attached(attached)
            .map_err(|e| TransportError(e.to_string()))?;
        if msg.is_basic() {
            self.det.received();
        }
        if self.finalizing {
            // This process sent its `Fin`: it sends nothing more, and only
            // counts the others' (docs/distributed.md, "Ending").
            if let Msg::Fin { joined } = msg {
                self.fins += 1;
                self.max_started = self.max_started.max(joined);
            }
            return Ok(());
        }
        match msg {
            Msg::Data { chan, req, payload } => match self.owned(chan) {
                Some(o) => {
                    o.sends.push_back((src, req, payload));
                    self.pump(chan, Dir::Send)?;
                }
                None => self.broken_reply(src, req, "no such channel")?,
            },
            Msg::Recv { chan, req } => match self.owned(chan) {
                Some(o) => {
                    o.recvs.push_back((src, req));
                    self.pump(chan, Dir::Recv)?;
                }
                None => self.broken_reply(src, req, "no such channel")?,
            },
            Msg::Close { chan, req } => match self.owned(chan).map(|o| o.ep.close()) {
                Some(Ok(())) => self.reply(src, req, Status::Ok, Payload::new())?,
                Some(Err(RemoteError::Closed)) => {
                    self.reply(src, req, Status::Closed, Payload::new())?
                }
                Some(Err(e)) => self.broken_reply(src, req, &e.to_string())?,
                None => self.broken_reply(src, req, "no such channel")?,
            },
            Msg::Len { chan, req } => match self.owned(chan).map(|o| o.ep.len()) {
                Some(n) => {
                    let p = Payload::from_bytes(&(n as u64).to_le_bytes());
                    self.reply(src, req, Status::Ok, p)?
                }
                None => self.broken_reply(src, req, "no such channel")?,
            },
            Msg::Reply {
                req,
                status,
                payload,
            } => self.on_reply(req, Status::from_byte(status), payload)?,
            Msg::Token(t) => {
                if !self.verdict && !self.finalizing {
                    self.det.on_token(t);
                }
            }
            Msg::Verdict => {
                self.verdict = true;
                let lines = self.host.blocked();
                self.ctrl(0, Msg::Report(lines))?;
                self.end_local(End::Deadlock { report: None });
            }
            Msg::Report(lines) => {
                if let Some(slot) = self.report.as_mut().and_then(|r| r.get_mut(src)) {
                    *slot = Some(lines);
                }
                self.maybe_report();
            }
            Msg::Done => {
                self.dones += 1;
                self.check_done()?;
            }
            Msg::End { code, finished } => self.end_local(if finished {
                End::Finished
            } else {
                End::Abort { rank: src, code }
            }),
            Msg::Fin { joined } => {
                self.fins += 1;
                self.max_started = self.max_started.max(joined);
            }
        }
        Ok(())
    }

    fn on_reply(&mut self, req: u64, status: Status, payload: Payload) -> Res {
        let broken =
            |p: &Payload| RemoteError::Broken(String::from_utf8_lossy(p.as_slice()).into());
        match self.waiting.remove(&req) {
            None => {}
            Some(Waiting::Send { key, done }) => {
                done.complete(match status {
                    Status::Ok => Ok(()),
                    Status::Closed => Err(RemoteError::Closed),
                    Status::Broken => Err(broken(&payload)),
                });
                let next = self.credits.get_mut(&key).and_then(|cr| {
                    cr.in_flight = cr.in_flight.saturating_sub(1);
                    let next = cr.queue.pop_front();
                    if next.is_some() {
                        cr.in_flight += 1;
                    }
                    next
                });
                if let Some((req, payload)) = next {
                    self.basic(
                        key.0,
                        Msg::Data {
                            chan: key.1,
                            req,
                            payload,
                        },
                    )?;
                }
            }
            Some(Waiting::Recv(done)) => done.complete(match status {
                Status::Ok => Ok(Some(payload)),
                Status::Closed => Ok(None),
                Status::Broken => Err(broken(&payload)),
            }),
            Some(Waiting::Close(done)) => done.complete(match status {
                Status::Ok => Ok(()),
                Status::Closed => Err(RemoteError::Closed),
                Status::Broken => Err(broken(&payload)),
            }),
            Some(Waiting::Len(done)) => done.complete(match status {
                Status::Ok => payload
                    .as_slice()
                    .try_into()
                    .map(|b| u64::from_le_bytes(b) as usize)
                    .map_err(|_| RemoteError::Broken("bad len reply".into())),
                _ => Err(broken(&payload)),
            }),
        }
        Ok(())
    }

    /// Serves channel `id` in direction `dir`: polls the operation in
    /// progress, replies when it finishes, starts the next one.
    fn pump(&mut self, id: u64, dir: Dir) -> Res {
        let waker = Waker::from(Arc::new(ProxyWake {
            id,
            dir,
            inbox: self.inbox.clone(),
        }));
        let mut cx = Context::from_waker(&waker);
        loop {
            let Some(o) = self.owned.get_mut(&id) else {
                return Ok(());
            };
            let done = match dir {
                Dir::Send => {
                    if o.send_fut.is_none() {
                        let Some((src, req, p)) = o.sends.pop_front() else {
                            return Ok(());
                        };
                        o.send_fut = Some((src, req, o.ep.send(p)));
                    }
                    let Some((src, req, fut)) = o.send_fut.as_mut() else {
                        return Ok(());
                    };
                    match fut.as_mut().poll(&mut cx) {
                        Poll::Pending => return Ok(()),
                        Poll::Ready(r) => {
                            let (src, req) = (*src, *req);
                            o.send_fut = None;
                            match r {
                                Ok(()) => (src, req, Status::Ok, Payload::new()),
                                Err(RemoteError::Closed) => {
                                    (src, req, Status::Closed, Payload::new())
                                }
                                Err(e) => (
                                    src,
                                    req,
                                    Status::Broken,
                                    Payload::from_bytes(e.to_string().as_bytes()),
                                ),
                            }
                        }
                    }
                }
                Dir::Recv => {
                    if o.recv_fut.is_none() {
                        let Some((src, req)) = o.recvs.pop_front() else {
                            return Ok(());
                        };
                        o.recv_fut = Some((src, req, o.ep.recv()));
                    }
                    let Some((src, req, fut)) = o.recv_fut.as_mut() else {
                        return Ok(());
                    };
                    match fut.as_mut().poll(&mut cx) {
                        Poll::Pending => return Ok(()),
                        Poll::Ready(r) => {
                            let (src, req) = (*src, *req);
                            o.recv_fut = None;
                            match r {
                                Ok(Some(p)) => (src, req, Status::Ok, p),
                                Ok(None) => (src, req, Status::Closed, Payload::new()),
                                Err(e) => (
                                    src,
                                    req,
                                    Status::Broken,
                                    Payload::from_bytes(e.to_string().as_bytes()),
                                ),
                            }
                        }
                    }
                }
            };
            let (src, req, status, payload) = done;
            self.reply(src, req, status, payload)?;
        }
    }

    fn on_verdict(&mut self) -> Res {
        self.verdict = true;
        for r in self.others().collect::<Vec<_>>() {
            self.ctrl(r, Msg::Verdict)?;
        }
        let mut report = vec![None; self.size];
        report[0] = Some(self.host.blocked());
        self.report = Some(report);
        self.maybe_report();
        Ok(())
    }

    fn maybe_report(&mut self) {
        let Some(report) = &self.report else {
            return;
        };
        if report.iter().any(Option::is_none) {
            return;
        }
        let lines = report
            .iter()
            .enumerate()
            .flat_map(|(r, ls)| ls.iter().flatten().map(move |l| format!("rank {r} {l}")))
            .collect();
        self.report = None;
        self.end_local(End::Deadlock {
            report: Some(lines),
        });
    }

    // Collectives: see `header.rs` for the first step.

    fn start_job(&mut self, job: Job) -> Res {
        let desc = Desc {
            ty: job.ty.clone(),
            shape: shape_of(&job.data).cloned(),
        };
        let h = Header::new(job.op, &job.ty, &job.data, &desc);
        self.det.joined();
        self.started += 1;
        self.t.start(Step::Gather {
            mine: h.encode().to_vec(),
            counts: vec![SLOT; self.size],
        })?;
        self.run = Some(Run {
            job,
            desc,
            headers: Vec::new(),
            phase: Phase::Headers,
        });
        Ok(())
    }

    fn finish(&mut self, run: Run, r: Result<Outcome<Bytes>, CallError>) {
        self.det.completed();
        run.job.done.complete(r);
    }

    fn broken(&mut self, run: Run, why: &str) {
        self.finish(run, Err(CallError::Broken(why.to_string())));
    }

    fn on_step(&mut self, out: StepOut) -> Res {
        let Some(mut run) = self.run.take() else {
            return Ok(());
        };
        match (&run.phase, out) {
            (Phase::Headers, StepOut::Bytes(b)) => {
                let hs: Option<Vec<Header>> = b.chunks(SLOT).map(Header::decode).collect();
                let Some(hs) = hs.filter(|hs| hs.len() == self.size) else {
                    self.broken(run, "corrupt header");
                    return Ok(());
                };
                run.headers = hs;
                match check(&run.headers) {
                    Check::Fail(e) => self.finish(run, Err(e.into())),
                    Check::NeedDescs => {
                        let counts = run.headers.iter().map(|h| h.desc_len as usize).collect();
                        self.t.start(Step::Gather {
                            mine: run.desc.encode(),
                            counts,
                        })?;
                        run.phase = Phase::Descs;
                        self.run = Some(run);
                    }
                    Check::Agree => self.payload_step(run)?,
                }
            }
            (Phase::Descs, StepOut::Bytes(b)) => {
                let mut descs = Vec::with_capacity(self.size);
                let mut at = 0;
                for h in &run.headers {
                    let end = at + h.desc_len as usize;
                    match b.get(at..end).and_then(Desc::decode) {
                        Some(d) => descs.push(d),
                        None => {
                            self.broken(run, "corrupt descriptor");
                            return Ok(());
                        }
                    }
                    at = end;
                }
                let e = mismatch(&run.headers, &descs);
                self.finish(run, Err(e.into()));
            }
            (Phase::ReduceAll, StepOut::F32(all, _)) => {
                let Op::AllReduce(op) = run.job.op else {
                    self.broken(run, "phase");
                    return Ok(());
                };
                let Data::F32 { shape, data } = &run.job.data else {
                    self.broken(run, "phase");
                    return Ok(());
                };
                let n = data.len();
                if all.len() != n * self.size {
                    self.broken(run, "reduce length");
                    return Ok(());
                }
                let parts: Vec<&[f32]> = all.chunks(n.max(1)).take(self.size).collect();
                let out = reduce::fold_f32(op, &parts, n);
                let shape = shape.clone();
                self.keep_scratch(all);
                self.finish(
                    run,
                    Ok(Outcome::F32 {
                        shape,
                        data: Arc::new(out),
                    }),
                );
            }
            (Phase::ReduceScatter, StepOut::F32(pieces, _)) => {
                let Op::AllReduce(op) = run.job.op else {
                    self.broken(run, "phase");
                    return Ok(());
                };
                let Data::F32 { data, .. } = &run.job.data else {
                    self.broken(run, "phase");
                    return Ok(());
                };
                let n = data.len();
                let own = reduce::chunk(n, self.size, self.rank);
                let mine = own.len();
                if pieces.len() != mine * (self.size - 1) {
                    self.broken(run, "reduce-scatter length");
                    return Ok(());
                }
                // The others' pieces in rank order, this rank's own (from
                // its tensor) in its place.
                let mut parts: Vec<&[f32]> =
                    pieces.chunks(mine.max(1)).take(self.size - 1).collect();
                parts.resize(self.size - 1, &[]);
                parts.insert(self.rank, &data[own]);
                let out = self.take_scratch(mine);
                let out = reduce::fold_f32_into(op, &parts, mine, out);
                self.keep_scratch(pieces);
                let counts = (0..self.size)
                    .map(|j| reduce::chunk(n, self.size, j).len())
                    .collect();
                // The result is the program's (a fresh buffer, never
                // written before MPI fills it).
                self.t.start(Step::GatherF32 {
                    mine: F32Src::Owned(out),
                    range: 0..mine,
                    counts,
                    recv: Vec::new(),
                })?;
                run.phase = Phase::GatherChunks;
                self.run = Some(run);
            }
            (Phase::GatherChunks, StepOut::F32(all, spare)) => {
                if let Some(b) = spare {
                    self.keep_scratch(b);
                }
                let Data::F32 { shape, data } = &run.job.data else {
                    self.broken(run, "phase");
                    return Ok(());
                };
                if all.len() != data.len() {
                    self.broken(run, "all-gather length");
                    return Ok(());
                }
                let shape = shape.clone();
                self.finish(
                    run,
                    Ok(Outcome::F32 {
                        shape,
                        data: Arc::new(all),
                    }),
                );
            }
            (Phase::Bcast, StepOut::Bytes(b)) => {
                let r = outcome_of(&run.job.data, b);
                self.finish(run, r);
            }
            (Phase::Gather, StepOut::Bytes(b)) => {
                let mut vals = Vec::with_capacity(self.size);
                let mut at = 0usize;
                for h in &run.headers {
                    let end = at.saturating_add(h.payload_len as usize);
                    match b.get(at..end) {
                        Some(v) => vals.push(v.to_vec()),
                        None => {
                            self.broken(run, "all-gather length");
                            return Ok(());
                        }
                    }
                    at = end;
                }
                self.finish(run, Ok(Outcome::Gathered(Arc::new(vals))));
            }
            _ => self.broken(run, "unexpected step result"),
        }
        Ok(())
    }

    /// The members agree: finish from the headers, or start the step that
    /// moves the payloads.
    fn payload_step(&mut self, mut run: Run) -> Res {
        let n = self.size;
        let inline_all = run.headers.iter().all(|h| h.inline.is_some());
        match run.job.op {
            Op::Barrier => self.finish(run, Ok(Outcome::Unit)),
            Op::AllReduce(op) => match &run.job.data {
                Data::Int(_) | Data::Float(_) | Data::F32 { .. } if inline_all => {
                    let r = fold_inline(op, &run.headers, &run.job.data);
                    self.finish(run, r);
                }
                Data::F32 { data, .. } => {
                    let len = data.len();
                    let data = data.clone();
                    if 4 * len as u64 <= SMALL_REDUCE_BYTES {
                        let recv = self.take_scratch(len * n);
                        self.t.start(Step::GatherF32 {
                            mine: F32Src::Shared(data),
                            range: 0..len,
                            counts: vec![len; n],
                            recv,
                        })?;
                        run.phase = Phase::ReduceAll;
                    } else {
                        // This rank's own piece is not sent: the fold reads
                        // it from the tensor.
                        let me = self.rank;
                        let ranges = (0..n)
                            .map(|j| {
                                if j == me {
                                    0..0
                                } else {
                                    reduce::chunk(len, n, j)
                                }
                            })
                            .collect();
                        let mine = reduce::chunk(len, n, me).len();
                        let recv_counts: Vec<usize> =
                            (0..n).map(|j| if j == me { 0 } else { mine }).collect();
                        let recv = self.take_scratch(mine * (n - 1));
                        self.t.start(Step::ToAllF32 {
                            send: data,
                            ranges,
                            recv_counts,
                            recv,
                        })?;
                        run.phase = Phase::ReduceScatter;
                    }
                    self.run = Some(run);
                }
                _ => self.broken(run, "all-reduce of a value that is not a number or tensor"),
            },
            Op::Broadcast { root } => {
                let Some(rh) = run.headers.get(root) else {
                    self.broken(run, "root");
                    return Ok(());
                };
                if let Some(p) = rh.inline.clone() {
                    let r = outcome_of(&run.job.data, p);
                    self.finish(run, r);
                } else {
                    let buf = if self.rank == root {
                        payload_bytes(&run.job.data).into_owned()
                    } else {
                        vec![0; rh.payload_len as usize]
                    };
                    self.t.start(Step::Bcast { root, buf })?;
                    run.phase = Phase::Bcast;
                    self.run = Some(run);
                }
            }
            Op::AllGather => {
                if inline_all {
                    let vals = run
                        .headers
                        .iter()
                        .map(|h| h.inline.clone().unwrap_or_default())
                        .collect();
                    self.finish(run, Ok(Outcome::Gathered(Arc::new(vals))));
                } else {
                    let counts = run.headers.iter().map(|h| h.payload_len as usize).collect();
                    self.t.start(Step::Gather {
                        mine: payload_bytes(&run.job.data).into_owned(),
                        counts,
                    })?;
                    run.phase = Phase::Gather;
                    self.run = Some(run);
                }
            }
        }
        Ok(())
    }
}

/// Linux lets a short sleep overrun by its timer slack (50 µs by default),
/// which would dwarf the backoff's 20 µs sleeps: this thread asks for 1 µs.
fn precise_sleeps() {
    #[cfg(target_os = "linux")]
    // SAFETY: `PR_SET_TIMERSLACK` takes one integer argument and changes
    // only this thread's timer slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong);
    }
}

fn le8(b: &[u8]) -> Option<[u8; 8]> {
    b.get(..8)?.try_into().ok()
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_bits(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .collect()
}

/// An all-reduce whose payloads all came inline: fold them in rank order.
fn fold_inline(
    op: weft_coll::Reduce,
    hs: &[Header],
    mine: &Data<Bytes>,
) -> Result<Outcome<Bytes>, CallError> {
    let bad = || CallError::Broken("corrupt inline payload".into());
    let inline: Vec<&[u8]> = hs.iter().filter_map(|h| h.inline.as_deref()).collect();
    match mine {
        Data::Int(_) => {
            let mut vals = inline.iter().map(|b| le8(b).map(i64::from_le_bytes));
            let first = vals.next().flatten().ok_or_else(bad)?;
            vals.try_fold(first, |a, b| Some(kernel::int(op, a, b?)))
                .map(Outcome::Int)
                .ok_or_else(bad)
        }
        Data::Float(_) => {
            let mut vals = inline
                .iter()
                .map(|b| le8(b).map(|x| f64::from_bits(u64::from_le_bytes(x))));
            let first = vals.next().flatten().ok_or_else(bad)?;
            vals.try_fold(first, |a, b| Some(kernel::float(op, a, b?)))
                .map(Outcome::Float)
                .ok_or_else(bad)
        }
        Data::F32 { shape, data } => {
            let parts: Vec<Vec<f32>> = inline.iter().map(|b| f32s(b)).collect();
            if parts.iter().any(|p| p.len() != data.len()) {
                return Err(bad());
            }
            let views: Vec<&[f32]> = parts.iter().map(|p| p.as_slice()).collect();
            let out = reduce::fold_f32(op, &views, data.len());
            Ok(Outcome::F32 {
                shape: shape.clone(),
                data: Arc::new(out),
            })
        }
        _ => Err(bad()),
    }
}

/// A broadcast's result from the root's payload bytes; the kind and shape
/// are this member's own (the members agree on them).
fn outcome_of(mine: &Data<Bytes>, b: Vec<u8>) -> Result<Outcome<Bytes>, CallError> {
    let bad = || CallError::Broken("corrupt broadcast payload".into());
    Ok(match (header::Kind::of(mine), mine) {
        (Kind::Int, _) => Outcome::Int(i64::from_le_bytes(le8(&b).ok_or_else(bad)?)),
        (Kind::Float, _) => {
            Outcome::Float(f64::from_bits(u64::from_le_bytes(le8(&b).ok_or_else(bad)?)))
        }
        (Kind::F32, Data::F32 { shape, data }) => {
            let v = f32s(&b);
            if v.len() != data.len() {
                return Err(bad());
            }
            Outcome::F32 {
                shape: shape.clone(),
                data: Arc::new(v),
            }
        }
        (Kind::Value | Kind::Shaped, _) => Outcome::Value(b),
        (Kind::Unit, _) => Outcome::Unit,
        _ => return Err(bad()),
    })
}
