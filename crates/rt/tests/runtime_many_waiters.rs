//! Runs that end with 100,000 tasks blocked on one channel (issue 26): main
//! returning, an exit, a panic and a deadlock each end the run with the
//! right outcome, every task future is dropped, and every channel queue is
//! left empty. The end of such a run withdraws 100,000 waiters from one
//! queue; each withdrawal used to scan the whole queue (200,000 tasks took
//! 100 s to end; `scripts/bench-exit.sh` shows the growth). No timing is
//! asserted here: a quadratic end makes these tests slow, not failing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use weft_chan::{Chan, Select, WaitSlot};
use weft_rt::{self as runtime, Config, RunOutcome, Runtime, SrcLoc, TaskEnd, WaitKind};

const TASKS: usize = 100_000;

fn cfg(workers: usize) -> Config {
    Config {
        workers,
        seed: 3,
        trace: None,
        max_tasks: None,
    }
}

#[path = "support/alive.rs"]
mod alive;
use alive::Alive;

/// How main ends the run once the blocked tasks are spawned.
#[derive(Clone, Copy, Debug)]
enum End {
    Return,
    Exit,
    Panic,
    Deadlock,
}

/// Spawns `TASKS` tasks that block receiving from `c` (as the interpreter
/// does, with a `WaitSlot` and a recorded wait), lets them all block, and
/// ends the run as `end` says. Returns the outcome; checks that every
/// future was dropped and `c`'s queues are empty.
fn run_blocked_receivers(workers: usize, end: End) -> RunOutcome {
    let alive = Arc::new(AtomicUsize::new(0));
    let c: Chan<u64> = Chan::new(0);
    let (a, ch) = (alive.clone(), c.clone());
    let out = Runtime::new(cfg(workers)).run(async move {
        for _ in 0..TASKS {
            let guard = Alive::new(&a);
            let ch = ch.clone();
            runtime::spawn(async move {
                let _g = guard;
                let mut slot = WaitSlot::new();
                runtime::set_wait(WaitKind::ChanRecv, SrcLoc::new("w.weft", 4, 9));
                let got = ch.recv_in(&mut slot).await;
                runtime::clear_wait();
                // Never reached: nobody sends or closes.
                TaskEnd::Panic {
                    msg: format!("received {got:?}"),
                    loc: SrcLoc::new("w.weft", 5, 9),
                }
            })
            .unwrap();
        }
        // Every task blocks before main runs again (queued FIFO behind it).
        runtime::yield_now().await;
        while ch.queued().1 < TASKS {
            runtime::yield_now().await;
        }
        match end {
            End::Return => TaskEnd::Returned,
            End::Exit => TaskEnd::Exit(3),
            End::Panic => TaskEnd::Panic {
                msg: "stop".into(),
                loc: SrcLoc::new("w.weft", 9, 5),
            },
            End::Deadlock => {
                runtime::set_wait(WaitKind::ChanRecv, SrcLoc::new("w.weft", 10, 5));
                ch.recv().await;
                TaskEnd::Returned
            }
        }
    });
    assert_eq!(
        alive.load(Ordering::SeqCst),
        0,
        "{end:?}, {workers} workers: task futures leaked"
    );
    assert_eq!(
        c.queued(),
        (0, 0),
        "{end:?}, {workers} workers: entries left"
    );
    out
}

#[test]
fn main_returning_drops_100k_tasks_blocked_on_one_channel() {
    for workers in [1, 2] {
        assert_eq!(
            run_blocked_receivers(workers, End::Return),
            RunOutcome::Returned
        );
    }
}

#[test]
fn exit_drops_100k_tasks_blocked_on_one_channel() {
    assert_eq!(run_blocked_receivers(2, End::Exit), RunOutcome::Exit(3));
}

#[test]
fn panic_drops_100k_tasks_blocked_on_one_channel() {
    assert_eq!(
        run_blocked_receivers(2, End::Panic),
        RunOutcome::Panic {
            task: 1,
            msg: "stop".into(),
            loc: SrcLoc::new("w.weft", 9, 5),
        }
    );
}

#[test]
fn deadlock_of_100k_tasks_on_one_channel_reports_each_in_task_order() {
    let out = run_blocked_receivers(2, End::Deadlock);
    let RunOutcome::Deadlock(blocked) = out else {
        panic!("not a deadlock: {out:?}");
    };
    assert_eq!(blocked.len(), TASKS + 1);
    for (i, b) in blocked.iter().enumerate() {
        assert_eq!(b.task, i as u64 + 1);
        assert_eq!(b.kind, WaitKind::ChanRecv);
        let line = if i == 0 { 10 } else { 4 };
        assert_eq!(b.loc.line, line, "task {}", b.task);
    }
}

/// Selects withdraw from several queues: 100,000 tasks each in a select
/// over two shared channels (one receive, one send case) end with main
/// returning; every future is dropped and all four queues are empty.
#[test]
fn main_returning_drops_100k_tasks_blocked_in_selects_on_shared_channels() {
    let alive = Arc::new(AtomicUsize::new(0));
    let (c, d): (Chan<u64>, Chan<u64>) = (Chan::new(0), Chan::new(0));
    let (a, c2, d2) = (alive.clone(), c.clone(), d.clone());
    let out = Runtime::new(cfg(2)).run(async move {
        for i in 0..TASKS as u64 {
            let guard = Alive::new(&a);
            let (c, d) = (c2.clone(), d2.clone());
            runtime::spawn(async move {
                let _g = guard;
                let mut rng = fastrand::Rng::with_seed(i);
                let mut sel = Select::new();
                sel.recv_ref(Some(&c));
                sel.send_ref(Some(&d), i);
                let fired = sel.select(&mut rng).await;
                TaskEnd::Panic {
                    msg: format!("case {} fired", fired.index),
                    loc: SrcLoc::new("s.weft", 1, 1),
                }
            })
            .unwrap();
        }
        runtime::yield_now().await;
        while c2.queued().1 < TASKS || d2.queued().0 < TASKS {
            runtime::yield_now().await;
        }
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
    assert_eq!(alive.load(Ordering::SeqCst), 0, "task futures leaked");
    assert_eq!(c.queued(), (0, 0));
    assert_eq!(d.queued(), (0, 0));
}
