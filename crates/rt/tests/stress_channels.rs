//! Stress: 1,000 runtime tasks over 100 channels (capacities 0 to 8) doing
//! random sends, receives, `select`s with and without `default`, `try_`
//! operations and closes, on 4 workers.
//!
//! Half the tasks produce, half consume. Each producer owns 1 to 3 channels
//! and sends its quota of messages, each with a randomly chosen operation;
//! the last producer of a channel to finish closes it. Each consumer reads 1
//! to 3 channels until every one is closed and drained. Checked:
//! - no message is lost or duplicated (a counter per message id);
//! - per consumer, per channel, the messages of one producer arrive in the
//!   order sent (a consumer sees a subsequence of the channel's FIFO order);
//! - every close succeeds once and is seen by every consumer of the channel;
//! - the run ends with `main` returning: not a deadlock, not a hang. A
//!   watchdog thread fails the test with the progress counters if the run
//!   takes too long, instead of hanging CI.
//!
//! Why it cannot deadlock by design: a consumer only blocks on all of its
//! open channels at once (a `select`, or `recv` when one is left), so a
//! producer blocked on channel `c` means every consumer of `c` is running,
//! and a consumer blocked means none of its channels has a value or a
//! waiting sender.
//!
//! Scale: `WEFT_STRESS_MESSAGES` (default 100,000, about a second in debug);
//! the long run is
//! `WEFT_STRESS_MESSAGES=1000000 cargo test --release --test stress_channels`.
//! Also `WEFT_STRESS_SEED` (default 1), `WEFT_STRESS_TIMEOUT_SECS`, and
//! `WEFT_STRESS_TASKS` (default 1,000; channels are a tenth of it) for
//! small runs under Miri.

use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering::Relaxed};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use weft_chan::{Chan, Outcome, Select, Selected, TryRecvError, TrySendError};
use weft_rt::{
    self as runtime, clear_wait, set_wait, yield_now, Config, RunOutcome, Runtime, SrcLoc, TaskEnd,
    WaitKind,
};

const WORKERS: usize = 4;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// A message: producer number in the high half, its sequence number (over
/// all its channels) in the low half.
fn msg(p: usize, k: usize) -> u64 {
    ((p as u64) << 32) | k as u64
}

/// What every task shares: channels, the plan and the counters.
struct World {
    chans: Vec<Chan<u64>>,
    /// Producers of each channel that have not finished yet.
    live_producers: Vec<AtomicUsize>,
    /// First message id of each producer (ids are contiguous per producer).
    first_id: Vec<usize>,
    /// How many times each message id was received.
    got: Vec<AtomicU8>,
    sent: AtomicU64,
    received: AtomicU64,
    closes_seen: AtomicU64,
    double_closes: AtomicU64,
    send_on_closed: AtomicU64,
    out_of_order: AtomicU64,
    tasks_done: AtomicUsize,
    tasks: usize,
}

struct Plan {
    /// Channels of each producer and of each consumer.
    prod: Vec<Vec<usize>>,
    cons: Vec<Vec<usize>>,
    quota: Vec<usize>,
}

fn plan(rng: &mut fastrand::Rng, messages: usize, tasks: usize, channels: usize) -> Plan {
    let (np, nc) = (tasks / 2, tasks - tasks / 2);
    // Channel i % channels first, so every channel has one of each.
    let mut pick = |i: usize| {
        let mut v = vec![i % channels];
        for _ in 0..rng.usize(0..3) {
            let c = rng.usize(0..channels);
            if !v.contains(&c) {
                v.push(c);
            }
        }
        v
    };
    let prod: Vec<Vec<usize>> = (0..np).map(&mut pick).collect();
    let cons: Vec<Vec<usize>> = (0..nc).map(&mut pick).collect();
    let quota = (0..np)
        .map(|i| messages / np + usize::from(i < messages % np))
        .collect();
    Plan { prod, cons, quota }
}

fn loc(task: usize) -> SrcLoc {
    SrcLoc::new("stress_channels", task as u32, 1)
}

async fn producer(w: Arc<World>, me: usize, mine: Vec<usize>, quota: usize, seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut k = 0;
    let mut must_block = false;
    while k < quota {
        let v = msg(me, k);
        let op = if must_block {
            rng.u8(0..2)
        } else {
            rng.u8(0..4)
        };
        must_block = false;
        let ok = match op {
            0 => {
                let c = &w.chans[mine[rng.usize(0..mine.len())]];
                set_wait(WaitKind::ChanSend, loc(me));
                let r = c.send(v).await;
                clear_wait();
                r.map_err(|_| ()).map(|_| true)
            }
            1 => {
                let mut s = Select::new();
                for &c in &mine {
                    s.send(Some(w.chans[c].clone()), v);
                }
                set_wait(WaitKind::Select, loc(me));
                let sel = s.select(&mut rng).await;
                clear_wait();
                match sel.outcome {
                    Outcome::Sent => Ok(true),
                    _ => Err(()),
                }
            }
            2 => {
                let mut s = Select::new();
                for &c in &mine {
                    s.send(Some(w.chans[c].clone()), v);
                }
                match s.try_select(&mut rng) {
                    None => Ok(false),
                    Some(sel) if matches!(sel.outcome, Outcome::Sent) => Ok(true),
                    Some(_) => Err(()),
                }
            }
            _ => match w.chans[mine[rng.usize(0..mine.len())]].try_send(v) {
                Ok(()) => Ok(true),
                Err(TrySendError::Full(_)) => Ok(false),
                Err(TrySendError::Closed(_)) => Err(()),
            },
        };
        match ok {
            Ok(true) => {
                k += 1;
                w.sent.fetch_add(1, Relaxed);
            }
            Ok(false) => {
                must_block = true;
                yield_now().await;
            }
            Err(()) => {
                w.send_on_closed.fetch_add(1, Relaxed);
                break;
            }
        }
    }
    for &c in &mine {
        if w.live_producers[c].fetch_sub(1, Relaxed) == 1 && w.chans[c].close().is_err() {
            w.double_closes.fetch_add(1, Relaxed);
        }
    }
}

/// Records message `v` received from channel `c` by a consumer whose last
/// sequence number per (channel, producer) is in `last`.
fn record(
    w: &World,
    last: &mut std::collections::HashMap<(usize, usize), usize>,
    c: usize,
    v: u64,
) {
    let (p, k) = ((v >> 32) as usize, (v & 0xffff_ffff) as usize);
    let id = w.first_id.get(p).map_or(usize::MAX, |f| f + k);
    match w.got.get(id) {
        Some(n) => {
            n.fetch_add(1, Relaxed);
        }
        None => {
            // An id nobody sent: count it as a duplicate of nothing.
            w.out_of_order.fetch_add(1, Relaxed);
        }
    }
    if let Some(prev) = last.insert((c, p), k) {
        if prev >= k {
            w.out_of_order.fetch_add(1, Relaxed);
        }
    }
    w.received.fetch_add(1, Relaxed);
}

async fn consumer(w: Arc<World>, me: usize, mut open: Vec<usize>, seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut last = std::collections::HashMap::new();
    let mut must_block = false;
    while !open.is_empty() {
        let op = if must_block { 0 } else { rng.u8(0..4) };
        must_block = false;
        // (index into `open`, value or None for closed); None: nothing ready.
        let got: Option<(usize, Option<u64>)> = match op {
            0 => {
                if open.len() == 1 {
                    set_wait(WaitKind::ChanRecv, loc(me));
                    let r = w.chans[open[0]].recv().await;
                    clear_wait();
                    Some((0, r))
                } else {
                    let mut s = Select::new();
                    for &c in &open {
                        s.recv(Some(w.chans[c].clone()));
                    }
                    set_wait(WaitKind::Select, loc(me));
                    let sel = s.select(&mut rng).await;
                    clear_wait();
                    match sel.outcome {
                        Outcome::Received(r) => Some((sel.index, r)),
                        _ => unreachable!("a receive case reported a send"),
                    }
                }
            }
            1 | 2 => {
                let mut s = Select::new();
                for &c in &open {
                    s.recv(Some(w.chans[c].clone()));
                }
                match s.try_select(&mut rng) {
                    Some(Selected {
                        index,
                        outcome: Outcome::Received(r),
                    }) => Some((index, r)),
                    Some(_) => unreachable!("a receive case reported a send"),
                    None => None,
                }
            }
            _ => {
                let i = rng.usize(0..open.len());
                match w.chans[open[i]].try_recv() {
                    Ok(v) => Some((i, Some(v))),
                    Err(TryRecvError::Closed) => Some((i, None)),
                    Err(TryRecvError::Empty) => None,
                }
            }
        };
        match got {
            Some((i, Some(v))) => record(&w, &mut last, open[i], v),
            Some((i, None)) => {
                w.closes_seen.fetch_add(1, Relaxed);
                open.swap_remove(i);
            }
            None => {
                must_block = true;
                yield_now().await;
            }
        }
    }
}

#[test]
fn thousand_tasks_hundred_channels() {
    let messages = env_u64("WEFT_STRESS_MESSAGES", 100_000) as usize;
    let seed = env_u64("WEFT_STRESS_SEED", 1);
    let timeout = env_u64("WEFT_STRESS_TIMEOUT_SECS", 60 + messages as u64 / 2_000);
    let tasks = env_u64("WEFT_STRESS_TASKS", 1_000).max(2) as usize;
    let channels = (tasks / 10).max(1);
    let mut rng = fastrand::Rng::with_seed(seed);
    let plan = plan(&mut rng, messages, tasks, channels);
    let caps: Vec<usize> = (0..channels).map(|_| rng.usize(0..=8)).collect();
    let mut producers_of = vec![0usize; channels];
    for cs in &plan.prod {
        for &c in cs {
            producers_of[c] += 1;
        }
    }
    let consumers_of: usize = plan.cons.iter().map(Vec::len).sum();
    let first_id = plan
        .quota
        .iter()
        .scan(0, |acc, q| {
            let f = *acc;
            *acc += q;
            Some(f)
        })
        .collect();
    let w = Arc::new(World {
        chans: caps.iter().map(|&c| Chan::new(c)).collect(),
        live_producers: producers_of.iter().map(|&n| AtomicUsize::new(n)).collect(),
        first_id,
        got: (0..messages).map(|_| AtomicU8::new(0)).collect(),
        sent: AtomicU64::new(0),
        received: AtomicU64::new(0),
        closes_seen: AtomicU64::new(0),
        double_closes: AtomicU64::new(0),
        send_on_closed: AtomicU64::new(0),
        out_of_order: AtomicU64::new(0),
        tasks_done: AtomicUsize::new(0),
        tasks,
    });

    let (done_tx, done_rx) = mpsc::channel();
    let wm = w.clone();
    let runner = std::thread::spawn(move || {
        let rt = Runtime::new(Config {
            workers: WORKERS,
            seed,
            trace: None,
            max_tasks: None,
        });
        let outcome = rt.run(async move {
            let done: Chan<()> = Chan::new(tasks);
            let mut task_seed = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            for t in 0..tasks {
                task_seed = task_seed.wrapping_add(1);
                let (w, done, s) = (wm.clone(), done.clone(), task_seed);
                let (p, is_prod) = if t < plan.prod.len() {
                    (t, true)
                } else {
                    (t - plan.prod.len(), false)
                };
                let (mine, quota) = if is_prod {
                    (plan.prod[p].clone(), plan.quota[p])
                } else {
                    (plan.cons[p].clone(), 0)
                };
                runtime::spawn(async move {
                    if is_prod {
                        producer(w.clone(), p, mine, quota, s).await;
                    } else {
                        consumer(w.clone(), p, mine, s).await;
                    }
                    w.tasks_done.fetch_add(1, Relaxed);
                    let _ = done.send(()).await;
                    TaskEnd::Returned
                })
                .expect("spawn");
            }
            for _ in 0..tasks {
                set_wait(
                    WaitKind::ChanRecv,
                    SrcLoc::new("stress_channels main", 0, 0),
                );
                done.recv().await;
                clear_wait();
            }
            TaskEnd::Returned
        });
        let _ = done_tx.send(outcome);
    });

    let outcome = match done_rx.recv_timeout(Duration::from_secs(timeout)) {
        Ok(o) => o,
        Err(_) => panic!(
            "watchdog: no end after {timeout} s; {}; channels (len, closed): {:?}",
            progress(&w),
            w.chans
                .iter()
                .map(|c| (c.len(), c.is_closed()))
                .collect::<Vec<_>>()
        ),
    };
    runner.join().expect("runner thread");
    match outcome {
        RunOutcome::Returned => {}
        RunOutcome::Deadlock(b) => panic!(
            "deadlock with {} tasks blocked (first: {:?}); {}",
            b.len(),
            b.iter()
                .take(5)
                .map(|t| format!("task {} [{}] {}", t.task, t.kind, t.loc))
                .collect::<Vec<_>>(),
            progress(&w)
        ),
        other => panic!("run ended with {other:?}; {}", progress(&w)),
    }
    let lost: Vec<usize> = (0..messages)
        .filter(|&i| w.got[i].load(Relaxed) == 0)
        .take(5)
        .collect();
    let dup: Vec<usize> = (0..messages)
        .filter(|&i| w.got[i].load(Relaxed) > 1)
        .take(5)
        .collect();
    assert!(
        lost.is_empty(),
        "lost messages (ids) {lost:?}; {}",
        progress(&w)
    );
    assert!(
        dup.is_empty(),
        "duplicated messages (ids) {dup:?}; {}",
        progress(&w)
    );
    assert_eq!(w.sent.load(Relaxed), messages as u64, "{}", progress(&w));
    assert_eq!(
        w.received.load(Relaxed),
        messages as u64,
        "{}",
        progress(&w)
    );
    assert_eq!(w.out_of_order.load(Relaxed), 0, "{}", progress(&w));
    assert_eq!(w.double_closes.load(Relaxed), 0, "{}", progress(&w));
    assert_eq!(w.send_on_closed.load(Relaxed), 0, "{}", progress(&w));
    assert_eq!(
        w.closes_seen.load(Relaxed),
        consumers_of as u64,
        "{}",
        progress(&w)
    );
    assert!(
        w.chans.iter().all(Chan::is_closed),
        "a channel was never closed"
    );
}

fn progress(w: &World) -> String {
    let tasks = w.tasks;
    format!(
        "sent {}, received {}, closes seen {}, tasks done {}/{tasks}, out of order {}, double closes {}, sends on closed {}",
        w.sent.load(Relaxed),
        w.received.load(Relaxed),
        w.closes_seen.load(Relaxed),
        w.tasks_done.load(Relaxed),
        w.out_of_order.load(Relaxed),
        w.double_closes.load(Relaxed),
        w.send_on_closed.load(Relaxed),
    )
}
