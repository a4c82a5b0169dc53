//! Programs of several processes for the tests, run the same way in
//! memory (`tests/memory.rs`: one thread per process) and under `mpirun`
//! (`tests/mpirun.rs`: one process each). Each process runs its scenario
//! as the main task of a `weft_rt` runtime with the quiescence hook, as
//! the interpreter will: `main` returning waits for every process, a
//! failure ends every process, and a deadlock across processes is found by
//! the detector and reported by rank 0.
#![allow(dead_code)]

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use weft_chan::Chan;
use weft_coll::{Data, Op, Outcome, Reduce};
use weft_mpi::{chan_endpoint, ChanRef, End, Host, Payload, RemoteError, World};
use weft_rt::{
    self as runtime, Config, Quiescence, RunControl, RunOutcome, Runtime, SrcLoc, TaskEnd, WaitKind,
};

/// What one process printed, how it ended, and what its host heard.
#[derive(Debug, Clone)]
pub struct RankOut {
    pub rank: usize,
    pub code: i32,
    pub lines: Vec<String>,
    pub end: Option<End>,
}

/// How a scenario fails on one process.
pub enum Fail {
    Panic(String),
    Exit(i32),
}

pub type Lines = Arc<Mutex<Vec<String>>>;
type BoxFut = Pin<Box<dyn Future<Output = Result<(), Fail>> + Send>>;
pub type Scenario = fn(World, Lines) -> BoxFut;

/// The host of one process: ends its run as the world says.
#[derive(Default)]
pub struct TestHost {
    state: Mutex<(Option<RunControl>, Option<End>)>,
}

impl TestHost {
    fn set_control(&self, c: RunControl) {
        let mut s = self.state.lock().unwrap();
        if let Some(end) = &s.1 {
            c.end(outcome_of(end));
        }
        s.0 = Some(c);
    }

    fn ended(&self) -> Option<End> {
        self.state.lock().unwrap().1.clone()
    }
}

fn outcome_of(end: &End) -> RunOutcome {
    match end {
        End::Finished => RunOutcome::Returned,
        End::Abort { code, .. } => RunOutcome::Exit(*code),
        End::Deadlock { .. } => RunOutcome::Deadlock(Vec::new()),
    }
}

impl Host for TestHost {
    fn blocked(&self) -> Vec<String> {
        let s = self.state.lock().unwrap();
        let Some(c) = &s.0 else {
            return Vec::new();
        };
        c.blocked_tasks()
            .iter()
            .map(|b| format!("task {} [{}]: {}", b.task, b.kind, b.loc))
            .collect()
    }

    fn end(&self, why: End) {
        let mut s = self.state.lock().unwrap();
        if let Some(c) = &s.0 {
            c.end(outcome_of(&why));
        }
        s.1 = Some(why);
    }
}

/// The runtime tells the world when every task is blocked.
struct Hook(World);

impl Quiescence for Hook {
    fn changed(&self, quiescent: bool) {
        self.0.set_quiescent(quiescent);
    }
}

/// A new host for one process.
pub fn host() -> Arc<dyn HostExt> {
    Arc::new(TestHost::default())
}

/// The host as both the world's `Host` and the harness's.
pub trait HostExt: Host {
    fn as_host(self: Arc<Self>) -> Arc<dyn Host>;
    fn test_host(&self) -> &TestHost;
}

impl HostExt for TestHost {
    fn as_host(self: Arc<Self>) -> Arc<dyn Host> {
        self
    }
    fn test_host(&self) -> &TestHost {
        self
    }
}

/// Runs one process of a scenario to its end.
pub fn run_rank(world: World, host: Arc<dyn HostExt>, scenario: Scenario) -> RankOut {
    let lines: Lines = Arc::default();
    let rt = Runtime::new(Config {
        workers: 2,
        seed: 1,
        trace: None,
        max_tasks: None,
    })
    .with_quiescence(Arc::new(Hook(world.clone())));
    let (w, h, l) = (world.clone(), host.clone(), lines.clone());
    let outcome = rt.run(async move {
        if let Some(c) = runtime::run_control() {
            h.test_host().set_control(c);
        }
        match scenario(w.clone(), l).await {
            Ok(()) => {
                w.main_returned();
                // Until every process's main returned.
                std::future::pending::<()>().await;
                TaskEnd::Returned
            }
            Err(Fail::Panic(msg)) => TaskEnd::Panic {
                msg,
                loc: SrcLoc::new("scn.weft", 1, 1),
            },
            Err(Fail::Exit(c)) => TaskEnd::Exit(c),
        }
    });
    let code = match &outcome {
        RunOutcome::Returned => 0,
        RunOutcome::Exit(c) => *c,
        RunOutcome::Panic { .. } | RunOutcome::Deadlock(_) => 2,
    };
    let end = host.test_host().ended();
    if end.is_none() {
        world.abort(code);
    }
    if let Err(e) = world.finish() {
        panic!("rank {}: finish: {e}", world.rank());
    }
    let lines = lines.lock().unwrap().clone();
    RankOut {
        rank: world.rank(),
        code,
        lines,
        end,
    }
}

// ---- helpers for scenarios ----

fn loc(line: u32) -> SrcLoc {
    SrcLoc::new("scn.weft", line, 1)
}

/// Awaits `f` as a blocked task at `line` with wait `kind`.
async fn blocked<F: Future>(kind: WaitKind, line: u32, f: F) -> F::Output {
    runtime::set_wait(kind, loc(line));
    let r = f.await;
    runtime::clear_wait();
    r
}

fn fail(msg: impl Into<String>) -> Fail {
    Fail::Panic(msg.into())
}

fn ensure(cond: bool, msg: impl FnOnce() -> String) -> Result<(), Fail> {
    if cond {
        Ok(())
    } else {
        Err(fail(msg()))
    }
}

fn say(lines: &Lines, s: impl Into<String>) {
    lines.lock().unwrap().push(s.into());
}

/// A channel of `u64` of this process, served to the others.
fn chan(world: &World, cap: usize) -> (Chan<u64>, ChanRef) {
    let c = Chan::<u64>::new(cap);
    let key = c.id();
    let for_ep = c.clone();
    let r = world.export(key, cap, move || {
        chan_endpoint(
            for_ep,
            |v: u64| Ok(Payload::from_bytes(&v.to_le_bytes())),
            |p: Payload| {
                p.as_slice()
                    .try_into()
                    .map(u64::from_le_bytes)
                    .map_err(|_| "not a u64".to_string())
            },
        )
    });
    (c, r)
}

fn u64_of(p: &Payload) -> Result<u64, Fail> {
    p.as_slice()
        .try_into()
        .map(u64::from_le_bytes)
        .map_err(|_| fail("payload is not a u64"))
}

/// Every process's channel reference, by rank.
async fn share(world: &World, r: ChanRef) -> Result<Vec<ChanRef>, Fail> {
    match world
        .call(
            Op::AllGather,
            "chan".into(),
            Data::Value(r.to_bytes().to_vec()),
        )
        .await
    {
        Ok(Outcome::Gathered(v)) => v
            .iter()
            .map(|b| ChanRef::from_bytes(b).ok_or_else(|| fail("bad ref")))
            .collect(),
        Ok(_) => Err(fail("allgather gave no list")),
        Err(e) => Err(fail(e.to_string())),
    }
}

async fn allreduce(
    world: &World,
    op: Reduce,
    ty: &'static str,
    d: Data<Vec<u8>>,
) -> Result<Outcome<Vec<u8>>, Fail> {
    world
        .call(Op::AllReduce(op), ty.into(), d)
        .await
        .map_err(|e| fail(e.to_string()))
}

fn send_u64(world: &World, to: ChanRef, v: u64) -> weft_mpi::Pending<()> {
    world.send(to, Payload::from_bytes(&v.to_le_bytes()))
}

// ---- the scenarios ----

/// A deterministic input of rank `r`, element `i`: values whose sums
/// depend on the order of addition, NaNs and signed zeros included.
fn input(r: usize, i: usize) -> f32 {
    match (r * 7 + i) % 11 {
        0 => 1.0e8,
        1 => -1.0e8,
        2 => 0.1 * (i as f32 + 1.0),
        3 => -0.0,
        4 => 3.0e-8,
        5 if i % 97 == 5 => f32::NAN,
        _ => (r as f32 + 1.0) * 1.37 - i as f32 * 0.01,
    }
}

fn rank_order(op: Reduce, size: usize, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| {
            let mut a = input(0, i);
            for r in 1..size {
                let b = input(r, i);
                a = match op {
                    Reduce::Sum => a + b,
                    Reduce::Prod => a * b,
                    Reduce::Max if b > a || b.is_nan() => b,
                    Reduce::Min if b < a || b.is_nan() => b,
                    _ => a,
                };
            }
            a
        })
        .collect()
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// All-reduces of ints, floats and tensors (inline, small and large:
/// every path), broadcasts and all-gathers of small and large values, a
/// barrier: every result is the rank-order fold, bitwise.
pub fn collectives(world: World, lines: Lines) -> BoxFut {
    Box::pin(async move {
        let (r, n) = (world.rank(), world.size());
        let got = allreduce(&world, Reduce::Sum, "int", Data::Int(i64::MAX - r as i64)).await?;
        let want = (0..n).fold(0i64, |a, k| a.wrapping_add(i64::MAX - k as i64));
        ensure(matches!(got, Outcome::Int(x) if x == want), || {
            format!("int sum {got:?}")
        })?;
        let got = allreduce(&world, Reduce::Prod, "int", Data::Int(3 + r as i64)).await?;
        let want = (0..n).fold(1i64, |a, k| a.wrapping_mul(3 + k as i64));
        ensure(matches!(got, Outcome::Int(x) if x == want), || {
            format!("int prod {got:?}")
        })?;
        let xs = [1.0e16, 1.0, -1.0e16, 0.5];
        let got = allreduce(&world, Reduce::Sum, "float", Data::Float(xs[r % 4])).await?;
        let want = (1..n).fold(xs[0], |a, k| a + xs[k % 4]);
        ensure(
            matches!(got, Outcome::Float(x) if x.to_bits() == want.to_bits()),
            || format!("float sum {got:?} want {want}"),
        )?;
        for (op, len) in [
            (Reduce::Sum, 5usize),
            (Reduce::Max, 5),
            (Reduce::Sum, 3000),
            (Reduce::Min, 3000),
            (Reduce::Sum, 100_003),
            (Reduce::Max, 100_003),
            (Reduce::Prod, 40_000),
            // Scratch buffers kept from the larger ones, then grown.
            (Reduce::Min, 3001),
            (Reduce::Sum, 250_001),
            (Reduce::Max, 100_003),
        ] {
            let mine: Vec<f32> = (0..len).map(|i| input(r, i)).collect();
            let d = Data::F32 {
                shape: Arc::from([len]),
                data: Arc::new(mine),
            };
            let got = allreduce(&world, op, "tensor", d).await?;
            let want = rank_order(op, n, len);
            match got {
                Outcome::F32 { data, shape } => {
                    ensure(bits(&data) == bits(&want) && shape[..] == [len], || {
                        format!("tensor {op:?} of {len} differs from the rank-order fold")
                    })?
                }
                other => return Err(fail(format!("tensor result {other:?}"))),
            }
        }
        // Broadcasts: inline and large, any root.
        for (root, len) in [(0usize, 10usize), (n - 1, 1 << 20)] {
            let mine: Vec<u8> = (0..len).map(|i| (i * 31 + r) as u8).collect();
            let got = world
                .call(Op::Broadcast { root }, "[]int".into(), Data::Value(mine))
                .await
                .map_err(|e| fail(e.to_string()))?;
            let want: Vec<u8> = (0..len).map(|i| (i * 31 + root) as u8).collect();
            ensure(matches!(&got, Outcome::Value(v) if *v == want), || {
                format!("broadcast from {root} of {len}")
            })?;
        }
        // All-gathers of values of different sizes (some inline, one not).
        let mine = vec![r as u8; if r == 1 { 5000 } else { r + 1 }];
        let got = world
            .call(Op::AllGather, "[]int".into(), Data::Value(mine))
            .await
            .map_err(|e| fail(e.to_string()))?;
        let ok = match &got {
            Outcome::Gathered(v) => {
                (0..n).all(|k| v[k] == vec![k as u8; if k == 1 { 5000 } else { k + 1 }])
            }
            _ => false,
        };
        ensure(ok, || "allgather".to_string())?;
        world
            .call(Op::Barrier, "".into(), Data::Unit)
            .await
            .map_err(|e| fail(e.to_string()))?;
        say(&lines, "collectives ok");
        Ok(())
    })
}

/// Members that disagree all get the group's error message.
pub fn mismatch(world: World, lines: Lines) -> BoxFut {
    Box::pin(async move {
        let (r, n) = (world.rank(), world.size());
        let d = if r == 0 {
            Data::Int(1)
        } else {
            Data::Float(1.0)
        };
        let ty = if r == 0 { "int" } else { "float" };
        let e = world.call(Op::AllReduce(Reduce::Sum), ty.into(), d).await;
        say(&lines, e.err().map(|e| e.to_string()).unwrap_or_default());
        let shape: Arc<[usize]> = if r == n - 1 {
            Arc::from([3, 2])
        } else {
            Arc::from([2, 3])
        };
        let d = Data::F32 {
            shape,
            data: Arc::new(vec![0.0; 6]),
        };
        let e = world
            .call(Op::AllReduce(Reduce::Sum), "tensor".into(), d)
            .await;
        say(&lines, e.err().map(|e| e.to_string()).unwrap_or_default());
        let op = if r == 1 {
            Op::Broadcast { root: 0 }
        } else {
            Op::AllReduce(Reduce::Sum)
        };
        let e = world.call(op, "int".into(), Data::Int(2)).await;
        say(&lines, e.err().map(|e| e.to_string()).unwrap_or_default());
        Ok(())
    })
}

/// Remote sends keep each sender's order (buffered, several senders);
/// unbuffered remote sends; a remote receiver drains a channel and sees
/// it closed; closing twice and sending after close fail.
pub fn channels(world: World, lines: Lines) -> BoxFut {
    Box::pin(async move {
        let (r, n) = (world.rank(), world.size());
        const PER: u64 = 60;
        let (buf, buf_ref) = chan(&world, 3);
        let (unb, unb_ref) = chan(&world, 0);
        let bufs = share(&world, buf_ref).await?;
        let unbs = share(&world, unb_ref).await?;
        if r == 0 {
            // Everyone else sends PER values to rank 0's buffered channel.
            let mut next = vec![0u64; n];
            for _ in 0..PER * (n as u64 - 1) {
                let v = blocked(WaitKind::ChanRecv, 10, buf.recv())
                    .await
                    .ok_or_else(|| fail("closed"))?;
                let (from, i) = ((v / 1000) as usize, v % 1000);
                ensure(next[from] == i, || {
                    format!("from {from}: got {i}, want {}", next[from])
                })?;
                next[from] += 1;
            }
            // Rank 0 feeds its unbuffered channel for rank 1 to receive
            // remotely, then closes it.
            for i in 0..10u64 {
                blocked(WaitKind::ChanSend, 11, unb.send(100 + i))
                    .await
                    .map_err(|_| fail("send"))?;
            }
            unb.close().map_err(|_| fail("close"))?;
            say(&lines, "rank 0 got every value in order");
        } else {
            for i in 0..PER {
                blocked(
                    WaitKind::ChanSend,
                    20,
                    send_u64(&world, bufs[0], r as u64 * 1000 + i),
                )
                .await
                .map_err(|e| fail(e.to_string()))?;
            }
            if r == 1 {
                let mut got = Vec::new();
                while let Some(p) = blocked(WaitKind::ChanRecv, 21, world.recv(unbs[0]))
                    .await
                    .map_err(|e| fail(e.to_string()))?
                {
                    got.push(u64_of(&p)?);
                }
                ensure(got == (100..110).collect::<Vec<_>>(), || {
                    format!("remote recv {got:?}")
                })?;
                let again = world.close(unbs[0]).await;
                ensure(again == Err(RemoteError::Closed), || {
                    format!("close again {again:?}")
                })?;
                let after = send_u64(&world, unbs[0], 1).await;
                ensure(after == Err(RemoteError::Closed), || {
                    format!("send after close {after:?}")
                })?;
                say(&lines, "rank 1 drained rank 0's channel");
            }
        }
        // Unbuffered remote sends to the last rank, from every other rank.
        let last = n - 1;
        if r == last {
            let mut count = vec![0u64; n];
            for _ in 0..20 * (n as u64 - 1) {
                let v = blocked(WaitKind::ChanRecv, 30, unb.recv())
                    .await
                    .ok_or_else(|| fail("closed"))?;
                let (from, i) = ((v / 1000) as usize, v % 1000);
                ensure(count[from] == i, || format!("unbuffered from {from}: {i}"))?;
                count[from] += 1;
            }
            let len = buf.len();
            say(&lines, format!("last rank done, len {len}"));
        } else if r != last {
            for i in 0..20 {
                blocked(
                    WaitKind::ChanSend,
                    31,
                    send_u64(&world, unbs[last], r as u64 * 1000 + i),
                )
                .await
                .map_err(|e| fail(e.to_string()))?;
            }
        }
        Ok(())
    })
}

/// A buffered remote channel of capacity 2 that nobody receives from:
/// two sends complete, the third blocks; an unbuffered one blocks at
/// once. Every process ends up blocked: rank 0 reports the deadlock.
pub fn credits(world: World, lines: Lines) -> BoxFut {
    Box::pin(async move {
        let r = world.rank();
        let (_buf, buf_ref) = chan(&world, 2);
        let (own, own_ref) = chan(&world, 0);
        let bufs = share(&world, buf_ref).await?;
        let owns = share(&world, own_ref).await?;
        let _ = own;
        match r {
            0 => {
                let (nobody, _) = chan(&world, 0);
                blocked(WaitKind::ChanRecv, 40, nobody.recv()).await;
            }
            1 => {
                for i in 1..=3u64 {
                    blocked(
                        WaitKind::ChanSend,
                        29 + i as u32,
                        send_u64(&world, bufs[0], i),
                    )
                    .await
                    .map_err(|e| fail(e.to_string()))?;
                    say(&lines, format!("sent {i}"));
                }
            }
            _ => {
                // An unbuffered remote send with no receiver.
                blocked(WaitKind::ChanSend, 50, send_u64(&world, owns[0], 9))
                    .await
                    .map_err(|e| fail(e.to_string()))?;
                say(&lines, "unbuffered send completed");
            }
        }
        Ok(())
    })
}

/// A collective that only some processes call, and processes blocked on
/// channels: a deadlock.
pub fn coll_deadlock(world: World, _lines: Lines) -> BoxFut {
    Box::pin(async move {
        let (own, _) = chan(&world, 0);
        if world.rank() == 0 {
            let c = world.call(Op::AllReduce(Reduce::Sum), "int".into(), Data::Int(1));
            blocked(WaitKind::Select, 60, c)
                .await
                .map_err(|e| fail(e.to_string()))?;
        } else {
            blocked(WaitKind::ChanRecv, 61, own.recv()).await;
        }
        Ok(())
    })
}

/// Ping-pong over unbuffered remote channels and many all-reduces: every
/// process is passive whenever a message or collective is on its way, and
/// the detector must never call that a deadlock. Then a large value in
/// flight. The program ends normally.
pub fn busy_wire(world: World, lines: Lines) -> BoxFut {
    Box::pin(async move {
        let (r, n) = (world.rank(), world.size());
        let (own, own_ref) = chan(&world, 0);
        let refs = share(&world, own_ref).await?;
        let (next, prev) = ((r + 1) % n, (r + n - 1) % n);
        for i in 0..150u64 {
            if r == 0 {
                blocked(WaitKind::ChanSend, 70, send_u64(&world, refs[next], i))
                    .await
                    .map_err(|e| fail(e.to_string()))?;
                let v = blocked(WaitKind::ChanRecv, 71, own.recv()).await;
                ensure(v == Some(i), || format!("ring got {v:?}"))?;
            } else {
                let v = blocked(WaitKind::ChanRecv, 72, own.recv())
                    .await
                    .ok_or_else(|| fail("closed"))?;
                blocked(WaitKind::ChanSend, 73, send_u64(&world, refs[next], v))
                    .await
                    .map_err(|e| fail(e.to_string()))?;
            }
        }
        let _ = prev;
        for i in 0..100 {
            let got = allreduce(&world, Reduce::Sum, "int", Data::Int(i)).await?;
            ensure(matches!(got, Outcome::Int(x) if x == i * n as i64), || {
                "sum".into()
            })?;
        }
        // 8 MB to rank 0's channel from the last rank.
        let big = Chan::<Vec<u8>>::new(0);
        let for_ep = big.clone();
        let big_ref = world.export(big.id(), 0, move || {
            chan_endpoint(
                for_ep,
                |v: Vec<u8>| Ok(Payload::from_bytes(&v)),
                |p: Payload| Ok(p.as_slice().to_vec()),
            )
        });
        let bigs = share(&world, big_ref).await?;
        if r == 0 {
            let v = blocked(WaitKind::ChanRecv, 74, big.recv())
                .await
                .unwrap_or_default();
            ensure(v.len() == 8 << 20 && v[12345] == 7, || {
                format!("big value of {}", v.len())
            })?;
        } else if r == n - 1 {
            let mut p = Payload::with_capacity(8 << 20);
            p.extend_from_slice(&vec![7u8; 8 << 20]);
            blocked(WaitKind::ChanSend, 75, world.send(bigs[0], p))
                .await
                .map_err(|e| fail(e.to_string()))?;
        }
        say(&lines, "busy wire done");
        Ok(())
    })
}

/// A channel of payloads as they are, served to the others.
fn payload_chan(world: &World, cap: usize) -> (Chan<Payload>, ChanRef) {
    let c = Chan::<Payload>::new(cap);
    let for_ep = c.clone();
    let r = world.export(c.id(), cap, move || chan_endpoint(for_ep, Ok, Ok));
    (c, r)
}

/// The floats of value `i` from rank `r`, attachment `k`: every bit
/// pattern kind (NaNs, negative zero, subnormals) shows up.
fn floats(r: usize, i: u64, k: usize, len: usize) -> Vec<f32> {
    (0..len)
        .map(|j| {
            f32::from_bits(
                (j as u32).wrapping_mul(2_654_435_761)
                    ^ (r as u32) << 24
                    ^ (i as u32) << 8
                    ^ k as u32,
            )
        })
        .collect()
}

/// Value `i` of rank `r`: every third carries nothing beside its bytes,
/// the others one or two attached buffers (one empty, one large).
fn attached_value(r: usize, i: u64) -> Payload {
    let mut p = Payload::from_bytes(&(r as u64 * 1000 + i).to_le_bytes());
    let shape: &[usize] = match i % 3 {
        0 => &[],
        1 => &[300_000],
        _ => &[0, 70_001],
    };
    for (k, &len) in shape.iter().enumerate() {
        assert!(p.attach(Arc::new(floats(r, i, k, len))));
    }
    p
}

fn check_attached(p: &Payload, r: usize, i: u64) -> Result<(), Fail> {
    let want = attached_value(r, i);
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    ensure(p.as_slice() == want.as_slice(), || {
        format!("bytes of {r}/{i}: {p:?}")
    })?;
    ensure(p.attached().len() == want.attached().len(), || {
        format!("attached of {r}/{i}: {p:?}")
    })?;
    for (a, b) in p.attached().iter().zip(want.attached()) {
        ensure(bits(a) == bits(b), || format!("floats of {r}/{i} differ"))?;
    }
    Ok(())
}

/// Values with attached `f32` buffers (as a large tensor travels), mixed
/// with plain ones, from every other process to rank 0's buffered
/// channel: in order per sender, bitwise. Rank 1 also sends two to a
/// channel and closes it (the close arrives after them), and receives
/// remotely a value rank 0 buffered (a reply with attached buffers).
pub fn attached(world: World, lines: Lines) -> BoxFut {
    Box::pin(async move {
        let (r, n) = (world.rank(), world.size());
        const PER: u64 = 12;
        let (main, main_ref) = payload_chan(&world, 3);
        let (last, last_ref) = payload_chan(&world, 1);
        let (feed, feed_ref) = payload_chan(&world, 1);
        if r == 0 {
            feed.send(attached_value(0, 1))
                .await
                .map_err(|_| fail("feed"))?;
        }
        let mains = share(&world, main_ref).await?;
        let lasts = share(&world, last_ref).await?;
        let feeds = share(&world, feed_ref).await?;
        if r == 0 {
            let mut next = vec![0u64; n];
            for _ in 0..PER * (n as u64 - 1) {
                let p = blocked(WaitKind::ChanRecv, 80, main.recv())
                    .await
                    .ok_or_else(|| fail("closed"))?;
                let v = u64_of(&Payload::from_bytes(&p.as_slice()[..8]))?;
                let (from, i) = ((v / 1000) as usize, v % 1000);
                ensure(next[from] == i, || {
                    format!("from {from}: got {i}, want {}", next[from])
                })?;
                check_attached(&p, from, i)?;
                next[from] += 1;
            }
            for i in [1, 2] {
                let p = blocked(WaitKind::ChanRecv, 81, last.recv())
                    .await
                    .ok_or_else(|| fail("closed early"))?;
                check_attached(&p, 1, i)?;
            }
            let end = blocked(WaitKind::ChanRecv, 82, last.recv()).await;
            ensure(end.is_none(), || "not closed".into())?;
            say(&lines, "rank 0 got every attached value");
        } else {
            for i in 0..PER {
                blocked(
                    WaitKind::ChanSend,
                    83,
                    world.send(mains[0], attached_value(r, i)),
                )
                .await
                .map_err(|e| fail(e.to_string()))?;
            }
            if r == 1 {
                for i in [1, 2] {
                    blocked(
                        WaitKind::ChanSend,
                        84,
                        world.send(lasts[0], attached_value(1, i)),
                    )
                    .await
                    .map_err(|e| fail(e.to_string()))?;
                }
                world
                    .close(lasts[0])
                    .await
                    .map_err(|e| fail(e.to_string()))?;
                let p = blocked(WaitKind::ChanRecv, 85, world.recv(feeds[0]))
                    .await
                    .map_err(|e| fail(e.to_string()))?
                    .ok_or_else(|| fail("feed closed"))?;
                check_attached(&p, 0, 1)?;
                say(&lines, "rank 1 received the fed value");
            }
        }
        Ok(())
    })
}

/// The last rank panics while the others wait: every process ends.
pub fn panics(world: World, _lines: Lines) -> BoxFut {
    Box::pin(async move {
        let (own, _) = chan(&world, 0);
        if world.rank() == world.size() - 1 {
            return Err(fail("boom"));
        }
        blocked(WaitKind::ChanRecv, 80, own.recv()).await;
        Ok(())
    })
}

/// Rank 0 calls exit(3) while the others wait: every process exits 3.
pub fn exits(world: World, _lines: Lines) -> BoxFut {
    Box::pin(async move {
        let (own, _) = chan(&world, 0);
        if world.rank() == 0 {
            return Err(Fail::Exit(3));
        }
        blocked(WaitKind::ChanRecv, 90, own.recv()).await;
        Ok(())
    })
}

/// Rank 0's main returns at once, but a task of rank 0 keeps serving its
/// channels: the others send to it, then receive the total from it
/// remotely, and return. The program ends when every main has returned.
pub fn late_finish(world: World, lines: Lines) -> BoxFut {
    Box::pin(async move {
        let (r, n) = (world.rank(), world.size());
        let (own, own_ref) = chan(&world, 1);
        let (total, total_ref) = chan(&world, 0);
        let refs = share(&world, own_ref).await?;
        let totals = share(&world, total_ref).await?;
        if r == 0 {
            let out = lines.clone();
            runtime::spawn(async move {
                let mut sum = 0;
                for _ in 0..10 * (n as u64 - 1) {
                    sum += blocked(WaitKind::ChanRecv, 100, own.recv())
                        .await
                        .unwrap_or(0);
                }
                say(&out, format!("served {sum}"));
                for _ in 1..n {
                    let _ = blocked(WaitKind::ChanSend, 102, total.send(sum)).await;
                }
                TaskEnd::Returned
            })
            .map_err(|e| fail(e.to_string()))?;
        } else {
            for i in 0..10 {
                blocked(WaitKind::ChanSend, 101, send_u64(&world, refs[0], i))
                    .await
                    .map_err(|e| fail(e.to_string()))?;
            }
            let p = blocked(WaitKind::ChanRecv, 103, world.recv(totals[0]))
                .await
                .map_err(|e| fail(e.to_string()))?
                .ok_or_else(|| fail("closed"))?;
            say(&lines, format!("total {}", u64_of(&p)?));
        }
        Ok(())
    })
}

/// Every scenario by name (the `mpirun` children pick theirs by name).
pub const SCENARIOS: &[(&str, Scenario)] = &[
    ("collectives", collectives),
    ("mismatch", mismatch),
    ("channels", channels),
    ("credits", credits),
    ("coll_deadlock", coll_deadlock),
    ("busy_wire", busy_wire),
    ("panics", panics),
    ("exits", exits),
    ("late_finish", late_finish),
    ("attached", attached),
];

pub fn scenario(name: &str) -> Scenario {
    SCENARIOS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| *s)
        .unwrap_or_else(|| panic!("no scenario {name}"))
}

/// The checks of each scenario on every process's result.
pub fn check(name: &str, outs: &[RankOut]) {
    let n = outs.len();
    let codes: Vec<i32> = outs.iter().map(|o| o.code).collect();
    let lines = |r: usize| outs[r].lines.clone();
    match name {
        "collectives" => {
            assert_eq!(codes, vec![0; n], "{outs:#?}");
            for r in 0..n {
                assert_eq!(lines(r), vec!["collectives ok"]);
            }
        }
        "mismatch" => {
            assert_eq!(codes, vec![0; n], "{outs:#?}");
            let want = vec![
                "allreduce_sum: type mismatch: int (rank 0) vs float (rank 1)".to_string(),
                format!(
                    "allreduce_sum: shape mismatch: [2 3] (rank 0) vs [3 2] (rank {})",
                    n - 1
                ),
                "collective mismatch: rank 0 called allreduce_sum, rank 1 called broadcast"
                    .to_string(),
            ];
            for r in 0..n {
                assert_eq!(lines(r), want, "rank {r}");
            }
        }
        "channels" => {
            assert_eq!(codes, vec![0; n], "{outs:#?}");
            assert!(lines(0).contains(&"rank 0 got every value in order".to_string()));
            assert!(lines(1).contains(&"rank 1 drained rank 0's channel".to_string()));
            assert!(lines(n - 1).contains(&"last rank done, len 0".to_string()));
        }
        "credits" => {
            assert_eq!(codes, vec![2; n], "{outs:#?}");
            assert_eq!(lines(1), vec!["sent 1", "sent 2"]);
            for r in 2..n {
                assert!(lines(r).is_empty(), "rank {r}: {:?}", lines(r));
            }
            let mut want = vec![
                "rank 0 task 1 [chan receive]: scn.weft:40:1".to_string(),
                "rank 1 task 1 [chan send]: scn.weft:32:1".to_string(),
            ];
            for r in 2..n {
                want.push(format!("rank {r} task 1 [chan send]: scn.weft:50:1"));
            }
            assert_eq!(outs[0].end, Some(End::Deadlock { report: Some(want) }));
            for o in &outs[1..] {
                assert_eq!(o.end, Some(End::Deadlock { report: None }));
            }
        }
        "coll_deadlock" => {
            assert_eq!(codes, vec![2; n], "{outs:#?}");
            let mut want = vec!["rank 0 task 1 [select]: scn.weft:60:1".to_string()];
            for r in 1..n {
                want.push(format!("rank {r} task 1 [chan receive]: scn.weft:61:1"));
            }
            assert_eq!(outs[0].end, Some(End::Deadlock { report: Some(want) }));
        }
        "busy_wire" => {
            assert_eq!(codes, vec![0; n], "{outs:#?}");
            for o in outs {
                assert_eq!(o.end, Some(End::Finished));
                assert_eq!(o.lines, vec!["busy wire done"]);
            }
        }
        "panics" => {
            assert_eq!(codes, vec![2; n], "{outs:#?}");
            assert_eq!(outs[n - 1].end, None, "the panicking process ended itself");
            for o in &outs[..n - 1] {
                assert_eq!(
                    o.end,
                    Some(End::Abort {
                        rank: n - 1,
                        code: 2
                    })
                );
            }
        }
        "exits" => {
            assert_eq!(codes, vec![3; n], "{outs:#?}");
            for o in &outs[1..] {
                assert_eq!(o.end, Some(End::Abort { rank: 0, code: 3 }));
            }
        }
        "late_finish" => {
            assert_eq!(codes, vec![0; n], "{outs:#?}");
            assert_eq!(lines(0), vec![format!("served {}", 45 * (n - 1))]);
            for r in 1..n {
                assert_eq!(lines(r), vec![format!("total {}", 45 * (n - 1))]);
            }
            for o in outs {
                assert_eq!(o.end, Some(End::Finished));
            }
        }
        "attached" => {
            assert_eq!(codes, vec![0; n], "{outs:#?}");
            assert_eq!(lines(0), vec!["rank 0 got every attached value"]);
            assert_eq!(lines(1), vec!["rank 1 received the fed value"]);
            for o in outs {
                assert_eq!(o.end, Some(End::Finished));
            }
        }
        other => panic!("no checks for {other}"),
    }
}
