//! Model-based tests: random programs of sends, receives, try forms,
//! closes, selects and cancellations over several channels and tasks, run on
//! the real channels and checked step by step against the reference model
//! of Go's rules in `chan_model/model.rs`.
//!
//! Why the check is exact: one thread drives everything. Each "task" is a
//! real future (send, receive or select) polled with its own counting waker;
//! after every step the driver polls every blocked task, so the real run and
//! the model see the same interleaving. Every observable is compared: each
//! result (value, ok flag, failure, which case fired), which tasks were
//! woken (exactly the ones the model completed, once each), `len`, and the
//! queue lengths (so no stale waiter survives its party). The only choice Go
//! leaves open, which ready case a select takes, is checked to be one the
//! model says is ready, and the model then follows that choice.
//!
//! A second program shape keeps queues long: 48 tasks on 2 channels, most
//! of them blocking in one direction on each, with many cancellations and
//! selects, so parties leave from the middle of long queues (dropped
//! futures, select losers) between the sends and receives that serve the
//! fronts, and the model checks that the rest are still served in arrival
//! order.
//!
//! A third property runs producers and consumers on real threads and checks
//! what a concurrent run must keep: every value sent is received exactly
//! once, in each producer's order, and failed sends are never received.

#[path = "chan_model/model.rs"]
mod model;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use model::{MCase, MOut, Model};
use proptest::prelude::*;
use weft_chan::{
    Chan, Outcome, RecvFut, Select, SelectFut, Selected, SendFut, TryRecvError, TrySendError,
};

const CHANS: usize = 3;
const TASKS: usize = 4;
/// The long-queue shape (`long_queues_follow_the_model`).
const LONG_CHANS: usize = 2;
const LONG_TASKS: usize = 48;

#[derive(Clone, Debug)]
struct CaseGen {
    ch: Option<usize>,
    send: bool,
}

#[derive(Clone, Debug)]
enum Step {
    Send { task: usize, ch: usize },
    Recv { task: usize, ch: usize },
    Select { task: usize, cases: Vec<CaseGen> },
    TrySelect { cases: Vec<CaseGen> },
    TrySend { ch: usize },
    TryRecv { ch: usize },
    Close { ch: usize },
    Cancel { task: usize },
}

fn case_gen(chans: usize) -> impl Strategy<Value = CaseGen> {
    let ch = prop_oneof![8 => (0..chans).prop_map(Some), 1 => Just(None)];
    (ch, any::<bool>()).prop_map(|(ch, send)| CaseGen { ch, send })
}

/// A select's cases: usually `few` of them; now and then more than fit in
/// a select's packed orders and lock set (8), so the spilled paths run too.
fn cases(chans: usize, few: std::ops::Range<usize>) -> impl Strategy<Value = Vec<CaseGen>> {
    prop_oneof![
        8 => prop::collection::vec(case_gen(chans), few),
        1 => prop::collection::vec(case_gen(chans), 9..13),
    ]
}

/// One step over `tasks` tasks and `chans` channels.
fn step(tasks: usize, chans: usize) -> impl Strategy<Value = Step> {
    let task = 0..tasks;
    let ch = 0..chans;
    prop_oneof![
        4 => (task.clone(), ch.clone()).prop_map(|(task, ch)| Step::Send { task, ch }),
        4 => (task.clone(), ch.clone()).prop_map(|(task, ch)| Step::Recv { task, ch }),
        4 => (task.clone(), cases(chans, 0..5))
            .prop_map(|(task, cases)| Step::Select { task, cases }),
        2 => cases(chans, 0..4).prop_map(|cases| Step::TrySelect { cases }),
        2 => ch.clone().prop_map(|ch| Step::TrySend { ch }),
        2 => ch.clone().prop_map(|ch| Step::TryRecv { ch }),
        1 => ch.prop_map(|ch| Step::Close { ch }),
        1 => task.prop_map(|task| Step::Cancel { task }),
    ]
}

struct Count(AtomicUsize);
impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A task's operation in flight.
enum Op<'a> {
    Send(SendFut<'a, u32>),
    Recv(RecvFut<'a, u32>),
    Select(Box<SelectFut<'static, u32>>),
}

struct Task<'a> {
    op: Op<'a>,
    wakes: Arc<Count>,
    waker: Waker,
}

impl Task<'_> {
    /// Polls once; the result as (case index, outcome).
    fn poll(&mut self) -> Option<(usize, MOut)> {
        let mut cx = Context::from_waker(&self.waker);
        match &mut self.op {
            Op::Send(f) => match Pin::new(f).poll(&mut cx) {
                Poll::Ready(Ok(())) => Some((0, MOut::Sent)),
                Poll::Ready(Err(e)) => Some((0, MOut::SendClosed(e.0))),
                Poll::Pending => None,
            },
            Op::Recv(f) => match Pin::new(f).poll(&mut cx) {
                Poll::Ready(v) => Some((0, MOut::Received(v))),
                Poll::Pending => None,
            },
            Op::Select(f) => match Pin::new(f).poll(&mut cx) {
                Poll::Ready(s) => Some((s.index, out(s.outcome))),
                Poll::Pending => None,
            },
        }
    }
}

fn out(o: Outcome<u32>) -> MOut {
    match o {
        Outcome::Received(v) => MOut::Received(v),
        Outcome::Sent => MOut::Sent,
        Outcome::SendClosed(v) => MOut::SendClosed(v),
    }
}

fn build_select(
    chans: &[Chan<u32>],
    cases: &[CaseGen],
    next: &mut u32,
) -> (Select<'static, u32>, Vec<MCase>) {
    let mut sel = Select::new();
    let mut m = Vec::new();
    for c in cases {
        let ch = c.ch.map(|i| chans[i].clone());
        if c.send {
            *next += 1;
            sel.send(ch, *next);
            m.push(MCase::Send(c.ch, *next));
        } else {
            sel.recv(ch);
            m.push(MCase::Recv(c.ch));
        }
    }
    (sel, m)
}

/// Checks a real result against the model and applies it there.
fn settle(
    model: &mut Model,
    cases: &[MCase],
    real: Option<(usize, MOut)>,
) -> Result<(), TestCaseError> {
    let ready = model.ready_cases(cases);
    match real {
        None => prop_assert!(
            ready.is_empty(),
            "not ready, but the model has {ready:?} ready"
        ),
        Some((i, got)) => {
            prop_assert!(
                ready.contains(&i),
                "case {i} fired, model ready set {ready:?}"
            );
            let want = model.fire(cases, i, got);
            prop_assert_eq!(got, want, "case {}", i);
        }
    }
    Ok(())
}

/// The channels of a program: each a capacity, and whether its buffer is
/// kept under the lock (`Chan::with_locked_buffer`) instead of a ring.
fn run_program(
    kinds: &[(usize, bool)],
    steps: &[Step],
    seed: u64,
    ntasks: usize,
) -> Result<(), TestCaseError> {
    let chans: Vec<Chan<u32>> = kinds
        .iter()
        .map(|&(c, locked)| {
            if locked {
                Chan::with_locked_buffer(c)
            } else {
                Chan::new(c)
            }
        })
        .collect();
    let caps: Vec<usize> = kinds.iter().map(|&(c, _)| c).collect();
    let caps = &caps[..];
    let mut model = Model::new(caps, ntasks);
    let mut tasks: Vec<Option<Task<'_>>> = (0..ntasks).map(|_| None).collect();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut next = 0u32;

    for step in steps {
        match step {
            Step::Send { task, .. } | Step::Recv { task, .. } | Step::Select { task, .. }
                if tasks[*task].is_some() => {}
            Step::Send { task, .. } | Step::Recv { task, .. } | Step::Select { task, .. } => {
                let (op, cases) = match step {
                    Step::Send { ch, .. } => {
                        next += 1;
                        (
                            Op::Send(chans[*ch].send(next)),
                            vec![MCase::Send(Some(*ch), next)],
                        )
                    }
                    Step::Recv { ch, .. } => {
                        (Op::Recv(chans[*ch].recv()), vec![MCase::Recv(Some(*ch))])
                    }
                    Step::Select { cases, .. } => {
                        let (sel, m) = build_select(&chans, cases, &mut next);
                        (Op::Select(Box::new(sel.select(&mut rng))), m)
                    }
                    _ => unreachable!(),
                };
                let wakes = Arc::new(Count(AtomicUsize::new(0)));
                let mut t = Task {
                    op,
                    waker: Waker::from(wakes.clone()),
                    wakes,
                };
                let real = t.poll();
                settle(&mut model, &cases, real)?;
                if real.is_none() {
                    model.block(*task, &cases);
                    tasks[*task] = Some(t);
                }
            }
            Step::TrySelect { cases } => {
                let (mut sel, m) = build_select(&chans, cases, &mut next);
                let real = sel.try_select(&mut rng).map(|s| (s.index, out(s.outcome)));
                settle(&mut model, &m, real)?;
            }
            Step::TrySend { ch } => {
                next += 1;
                let real = match chans[*ch].try_send(next) {
                    Ok(()) => Some((0, MOut::Sent)),
                    Err(TrySendError::Closed(v)) => Some((0, MOut::SendClosed(v))),
                    Err(TrySendError::Full(v)) => {
                        prop_assert_eq!(v, next);
                        None
                    }
                };
                settle(&mut model, &[MCase::Send(Some(*ch), next)], real)?;
            }
            Step::TryRecv { ch } => {
                let real = match chans[*ch].try_recv() {
                    Ok(v) => Some((0, MOut::Received(Some(v)))),
                    Err(TryRecvError::Closed) => Some((0, MOut::Received(None))),
                    Err(TryRecvError::Empty) => None,
                };
                settle(&mut model, &[MCase::Recv(Some(*ch))], real)?;
            }
            Step::Close { ch } => {
                let real = chans[*ch].close().is_ok();
                prop_assert_eq!(real, model.close(*ch));
            }
            Step::Cancel { task } => {
                if tasks[*task].take().is_some() {
                    model.cancel(*task);
                }
            }
        }
        // Every blocked task: woken exactly when the model completed it.
        for (i, slot) in tasks.iter_mut().enumerate() {
            let Some(t) = slot else { continue };
            let want = model.take_woken(i);
            let wakes = t.wakes.0.load(Ordering::SeqCst);
            prop_assert_eq!(wakes, usize::from(want.is_some()), "task {} wake count", i);
            let got = t.poll();
            match (&got, &want) {
                (None, None) => {}
                (Some(g), Some(w)) => {
                    prop_assert!(w.contains(g), "task {} got {:?}, model {:?}", i, g, w);
                    model.resolve(i, g.0);
                }
                _ => prop_assert!(false, "task {} got {:?}, model {:?}", i, got, want),
            }
            if got.is_some() {
                *slot = None;
            } else {
                prop_assert!(model.is_blocked(i));
            }
        }
        for (c, ch) in chans.iter().enumerate() {
            prop_assert_eq!(ch.len(), model.len(c), "len of chan {}", c);
            prop_assert_eq!(ch.queued(), model.queued(c), "queues of chan {}", c);
            prop_assert_eq!(ch.is_closed(), model.closed(c));
        }
    }
    // Dropping the blocked tasks must leave every queue empty.
    drop(tasks);
    for ch in &chans {
        prop_assert_eq!(ch.queued(), (0, 0));
    }
    Ok(())
}

/// A capacity above the lock-free ring's limit (`RING_MAX`, 2^16): such a
/// channel keeps its buffer under the lock, the other code path.
const DEQUE_CAP: usize = (1 << 16) + 1;

proptest! {
    #![proptest_config(ProptestConfig { cases: 6000, ..ProptestConfig::default() })]

    #[test]
    fn real_channels_follow_the_model(
        caps in prop::collection::vec(
            (prop_oneof![4 => 0usize..3, 1 => Just(DEQUE_CAP)], any::<bool>()),
            CHANS,
        ),
        steps in prop::collection::vec(step(TASKS, CHANS), 1..60),
        seed in any::<u64>(),
    ) {
        run_program(&caps, &steps, seed, TASKS)?;
    }
}

/// A step of the long-queue shape: receives on channel 0 and sends on
/// channel 1 mostly block, so both queues grow; the opposite operations
/// serve their fronts; selects queue on both (one fires, its entry on the
/// other channel is withdrawn from wherever it is); cancellations withdraw
/// parties from anywhere.
fn long_step() -> impl Strategy<Value = Step> {
    let task = 0..LONG_TASKS;
    let case = prop_oneof![
        4 => Just(CaseGen { ch: Some(0), send: false }),
        4 => Just(CaseGen { ch: Some(1), send: true }),
        1 => Just(CaseGen { ch: Some(0), send: true }),
        1 => Just(CaseGen { ch: Some(1), send: false }),
        1 => Just(CaseGen { ch: None, send: false }),
    ];
    prop_oneof![
        6 => task.clone().prop_map(|task| Step::Recv { task, ch: 0 }),
        6 => task.clone().prop_map(|task| Step::Send { task, ch: 1 }),
        5 => (task.clone(), prop::collection::vec(case, 1..4))
            .prop_map(|(task, cases)| Step::Select { task, cases }),
        2 => task.clone().prop_map(|task| Step::Send { task, ch: 0 }),
        2 => task.clone().prop_map(|task| Step::Recv { task, ch: 1 }),
        1 => Just(Step::TrySend { ch: 0 }),
        1 => Just(Step::TryRecv { ch: 1 }),
        6 => task.prop_map(|task| Step::Cancel { task }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Long queues (up to 48 parties on 2 channels) with parties leaving
    /// from the middle: cancelled sends, receives and selects, and selects
    /// won on one channel leaving an entry on the other; closes are rare so
    /// that queues grow. After every step the model says which party each
    /// send or receive served (FIFO) and how long each queue is.
    #[test]
    fn long_queues_follow_the_model(
        caps in prop::collection::vec(
            (prop_oneof![4 => 0usize..2, 1 => Just(DEQUE_CAP)], any::<bool>()),
            LONG_CHANS,
        ),
        steps in prop::collection::vec(long_step(), 1..400)
            .prop_flat_map(|steps| {
                // At most one close, late in the program.
                let n = steps.len();
                (Just(steps), prop::option::of((n * 3 / 4..=n, 0..LONG_CHANS)))
            })
            .prop_map(|(mut steps, close)| {
                if let Some((at, ch)) = close {
                    steps.insert(at, Step::Close { ch });
                }
                steps
            }),
        seed in any::<u64>(),
    ) {
        run_program(&caps, &steps, seed, LONG_TASKS)?;
    }
}

/// How a thread sends or receives.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Blocking,
    Select,
    Spin,
}

fn mode() -> impl Strategy<Value = Mode> {
    prop_oneof![Just(Mode::Blocking), Just(Mode::Select), Just(Mode::Spin)]
}

/// Sends `v` in `mode`; false once the channel is closed.
fn send_with(ch: &Chan<u32>, v: u32, mode: Mode, rng: &mut fastrand::Rng) -> bool {
    match mode {
        Mode::Blocking => ch.send_blocking(v).is_ok(),
        Mode::Select => {
            let mut s = Select::new();
            s.recv(None);
            s.send(Some(ch.clone()), v);
            let got = s.select_blocking(rng);
            got.index == 1 && got.outcome == Outcome::Sent
        }
        Mode::Spin => loop {
            match ch.try_send(v) {
                Ok(()) => return true,
                Err(TrySendError::Closed(_)) => return false,
                Err(TrySendError::Full(_)) => std::thread::yield_now(),
            }
        },
    }
}

/// Receives in `mode`; `None` once closed and drained.
fn recv_with(ch: &Chan<u32>, mode: Mode, rng: &mut fastrand::Rng) -> Option<u32> {
    match mode {
        Mode::Blocking => ch.recv_blocking(),
        Mode::Select => {
            let mut s = Select::new();
            s.send(None, 0);
            s.recv(Some(ch.clone()));
            match s.select_blocking(rng) {
                Selected {
                    index: 1,
                    outcome: Outcome::Received(v),
                } => v,
                other => panic!("impossible case {other:?}"),
            }
        }
        Mode::Spin => loop {
            match ch.try_recv() {
                Ok(v) => return Some(v),
                Err(TryRecvError::Closed) => return None,
                Err(TryRecvError::Empty) => std::thread::yield_now(),
            }
        },
    }
}

/// Producers and consumers on threads, on a channel of capacity `cap` (its
/// buffer under the lock when `locked`); returns (values each producer got
/// through, what each consumer received in order).
fn run_threads(
    (cap, locked): (usize, bool),
    producers: &[(Mode, u32)],
    consumers: &[Mode],
    close_early: Option<u32>,
) -> (Vec<u32>, Vec<Vec<u32>>) {
    let ch = if locked {
        Chan::<u32>::with_locked_buffer(cap)
    } else {
        Chan::<u32>::new(cap)
    };
    let prod: Vec<_> = producers
        .iter()
        .enumerate()
        .map(|(p, &(mode, n))| {
            let ch = ch.clone();
            std::thread::spawn(move || {
                let mut rng = fastrand::Rng::with_seed(p as u64);
                (0..n)
                    .take_while(|&i| send_with(&ch, (p as u32) << 16 | i, mode, &mut rng))
                    .count() as u32
            })
        })
        .collect();
    let cons: Vec<_> = consumers
        .iter()
        .enumerate()
        .map(|(c, &mode)| {
            let ch = ch.clone();
            std::thread::spawn(move || {
                let mut rng = fastrand::Rng::with_seed(100 + c as u64);
                std::iter::from_fn(|| recv_with(&ch, mode, &mut rng)).collect::<Vec<_>>()
            })
        })
        .collect();
    if let Some(spins) = close_early {
        for _ in 0..spins {
            std::thread::yield_now();
        }
        ch.close().expect("first close");
    }
    let sent: Vec<u32> = prod
        .into_iter()
        .map(|h| h.join().expect("producer"))
        .collect();
    if close_early.is_none() {
        ch.close().expect("first close");
    }
    let got = cons
        .into_iter()
        .map(|h| h.join().expect("consumer"))
        .collect();
    (sent, got)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    #[test]
    fn threads_lose_nothing_and_keep_order(
        cap in (prop_oneof![Just(0usize), Just(1), Just(4), Just(DEQUE_CAP)], any::<bool>()),
        producers in prop::collection::vec((mode(), 0u32..60), 1..4),
        consumers in prop::collection::vec(mode(), 1..4),
        close_early in prop::option::of(0u32..40),
    ) {
        // Two non-blocking parties never meet on an unbuffered channel (Go
        // too), so one consumer always blocks.
        let mut consumers = consumers;
        consumers[0] = Mode::Blocking;
        let (sent, got) = run_threads(cap, &producers, &consumers, close_early);
        let mut all: Vec<u32> = Vec::new();
        for seq in &got {
            // Each consumer sees each producer's values in the order sent.
            for p in 0..producers.len() as u32 {
                let mine: Vec<u32> = seq.iter().copied().filter(|v| v >> 16 == p).collect();
                prop_assert!(mine.windows(2).all(|w| w[0] < w[1]), "order broken: {:?}", mine);
            }
            all.extend(seq);
        }
        all.sort_unstable();
        // Exactly the successfully sent values, each once.
        let mut want: Vec<u32> = Vec::new();
        for (p, &n) in sent.iter().enumerate() {
            want.extend((0..n).map(|i| (p as u32) << 16 | i));
        }
        prop_assert_eq!(all, want);
        if close_early.is_none() {
            for (p, &(_, n)) in producers.iter().enumerate() {
                prop_assert_eq!(sent[p], n);
            }
        }
    }
}
