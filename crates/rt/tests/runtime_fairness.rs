//! Preemption and fairness: with one worker, a task looping on `yield_now`
//! or `preempt_point` does not starve others, and two tasks handing a value
//! back and forth through the LIFO slot do not starve the queue; with two,
//! a task left in the LIFO slot by a long poll is run by the other worker,
//! and so is one that a second wake-up moved from the slot to the held
//! tasks, and `hand_off_lifo` hands it over at once.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use weft_rt::{self as runtime, Config, RunOutcome, Runtime, TaskEnd};

fn one_worker() -> Config {
    Config {
        workers: 1,
        seed: 3,
        trace: None,
        max_tasks: None,
    }
}

#[test]
fn a_yielding_busy_loop_does_not_starve_others() {
    let out = Runtime::new(one_worker()).run(async {
        let spins = Arc::new(AtomicU64::new(0));
        let s = spins.clone();
        runtime::spawn(async move {
            loop {
                s.fetch_add(1, Ordering::Relaxed);
                runtime::yield_now().await;
            }
        })
        .unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel();
        runtime::spawn(async move {
            for _ in 0..10 {
                runtime::yield_now().await;
            }
            tx.send(()).ok();
            TaskEnd::Returned
        })
        .unwrap();
        rx.await.ok();
        // Yield is FIFO: the spinner ran about once per turn of the other task.
        let n = spins.load(Ordering::Relaxed);
        assert!((5..=30).contains(&n), "spinner ran {n} times");
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
}

#[test]
fn preemption_points_bound_a_busy_loop() {
    let out = Runtime::new(one_worker()).run(async {
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        runtime::spawn(async move {
            // A loop that never blocks; only its preemption points let others run.
            while !d.load(Ordering::Relaxed) {
                runtime::preempt_point().await;
            }
            TaskEnd::Returned
        })
        .unwrap();
        runtime::yield_now().await;
        done.store(true, Ordering::Relaxed);
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
}

#[test]
fn lifo_hand_offs_do_not_starve_the_queue() {
    let out = Runtime::new(one_worker()).run(async {
        // Two tasks ping-pong forever; each wake lands in the LIFO slot.
        let (a_tx, mut a_rx) = tokio::sync::mpsc::channel::<u64>(1);
        let (b_tx, mut b_rx) = tokio::sync::mpsc::channel::<u64>(1);
        let a_tx2 = a_tx.clone();
        let hand_offs = Arc::new(AtomicU64::new(0));
        let h = hand_offs.clone();
        runtime::spawn(async move {
            while let Some(v) = a_rx.recv().await {
                h.store(v, Ordering::Relaxed);
                if b_tx.send(v + 1).await.is_err() {
                    break;
                }
            }
            TaskEnd::Returned
        })
        .unwrap();
        runtime::spawn(async move {
            while let Some(v) = b_rx.recv().await {
                if a_tx2.send(v + 1).await.is_err() {
                    break;
                }
            }
            TaskEnd::Returned
        })
        .unwrap();
        a_tx.send(0).await.ok();
        // Main sits in the FIFO queue behind the ping-pong and must still run.
        runtime::yield_now().await;
        // The LIFO cap (3 in a row) let main in after a few hand-offs.
        let n = hand_offs.load(Ordering::Relaxed);
        assert!(n < 20, "main waited for {n} hand-offs");
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
}

/// Pends once, leaving its waker in `slot`; ready when polled again.
struct WaitOnce {
    slot: Arc<Mutex<Option<Waker>>>,
    parked: bool,
}

impl Future for WaitOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.parked {
            return Poll::Ready(());
        }
        self.parked = true;
        *self.slot.lock().unwrap() = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// Spawns a task that waits once (`WaitOnce` on `slot`), then records in
/// `ran_on` the thread it resumed on.
fn spawn_wait_once(slot: &Arc<Mutex<Option<Waker>>>, ran_on: &Arc<Mutex<Option<ThreadId>>>) {
    let (s, r) = (slot.clone(), ran_on.clone());
    runtime::spawn(async move {
        WaitOnce {
            slot: s,
            parked: false,
        }
        .await;
        *r.lock().unwrap() = Some(std::thread::current().id());
        TaskEnd::Returned
    })
    .unwrap();
}

fn two_workers(seed: u64) -> Config {
    Config {
        workers: 2,
        seed,
        trace: None,
        max_tasks: None,
    }
}

/// Spawns a task that waits once, lets it block, and wakes it from this
/// task, which puts it in this worker's LIFO slot; returns where it will
/// record the thread it ran on.
async fn wake_a_blocked_task() -> Arc<Mutex<Option<ThreadId>>> {
    let slot = Arc::new(Mutex::new(None::<Waker>));
    let ran_on = Arc::new(Mutex::new(None::<ThreadId>));
    spawn_wait_once(&slot, &ran_on);
    // Wait until the task has blocked (its waker is out, its poll over).
    while slot.lock().unwrap().is_none() {
        runtime::yield_now().await;
    }
    runtime::sleep(Duration::from_millis(5)).await;
    let waker = slot.lock().unwrap().take().unwrap();
    waker.wake();
    ran_on
}

/// Goes on with this poll (sleeping in 1 ms steps, calling
/// `preempt_point` every 50 when `preempt`) until the task of `ran_on`
/// has run or 5 s have passed; then checks that the poll was not
/// interrupted and that the task ran, on another worker.
async fn long_poll_until_it_ran(ran_on: &Mutex<Option<ThreadId>>, preempt: bool) {
    let me = std::thread::current().id();
    let watchdog = Instant::now();
    let mut spins = 0u32;
    while ran_on.lock().unwrap().is_none() && watchdog.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(1));
        spins += 1;
        if preempt && spins.is_multiple_of(50) {
            runtime::preempt_point().await;
        }
    }
    assert_eq!(me, std::thread::current().id(), "the poll was interrupted");
    let other = *ran_on.lock().unwrap();
    assert!(
        other.is_some(),
        "the woken task did not run during the long poll"
    );
    assert_ne!(other, Some(me), "the woken task ran on the busy worker");
}

#[test]
fn a_long_poll_hands_its_lifo_task_to_the_other_worker() {
    let out = Runtime::new(two_workers(5)).run(async {
        // From the wake on this is one long poll: the woken task is in
        // this worker's LIFO slot, and nothing here ends the poll (fewer
        // than 128 preemption points, so none of them yields).
        let ran_on = wake_a_blocked_task().await;
        long_poll_until_it_ran(&ran_on, true).await;
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
}

/// `hand_off_lifo` right after a wake-up: the woken task runs on the other
/// worker while this poll goes on, with no grace period and no further
/// call (this poll makes no preemption point and no `release_lifo` call,
/// so without the hand-off the task would wait in the LIFO slot until the
/// watchdog ends the poll).
#[test]
fn hand_off_lifo_gives_the_woken_task_to_the_other_worker_at_once() {
    let out = Runtime::new(two_workers(9)).run(async {
        let ran_on = wake_a_blocked_task().await;
        runtime::hand_off_lifo();
        long_poll_until_it_ran(&ran_on, false).await;
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
}

/// With one worker `hand_off_lifo` does nothing: the woken task runs when
/// the poll ends, and one-worker schedules stay independent of time.
#[test]
fn hand_off_lifo_with_one_worker_leaves_the_task_in_the_slot() {
    let out = Runtime::new(one_worker()).run(async {
        let slot = Arc::new(Mutex::new(None::<Waker>));
        let ran_on = Arc::new(Mutex::new(None::<ThreadId>));
        spawn_wait_once(&slot, &ran_on);
        while slot.lock().unwrap().is_none() {
            runtime::yield_now().await;
        }
        let waker = slot.lock().unwrap().take().unwrap();
        waker.wake();
        runtime::hand_off_lifo();
        std::thread::sleep(Duration::from_millis(20));
        assert!(ran_on.lock().unwrap().is_none(), "ran during the poll");
        runtime::yield_now().await;
        assert!(ran_on.lock().unwrap().is_some(), "did not run next");
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
}

/// Two tasks woken one after the other during a long poll: the second takes
/// the LIFO slot and the first moves to the local queue without waking an
/// idle worker (so hand-off chains stay on one worker). The LIFO grace
/// check then wakes the other worker, which must find both: neither may be
/// stranded until the long poll ends.
#[test]
fn tasks_displaced_from_the_lifo_slot_reach_the_other_worker() {
    let out = Runtime::new(two_workers(7)).run(async {
        let slots: Vec<Arc<Mutex<Option<Waker>>>> =
            (0..2).map(|_| Arc::new(Mutex::new(None))).collect();
        let ran_on: Vec<Arc<Mutex<Option<ThreadId>>>> =
            (0..2).map(|_| Arc::new(Mutex::new(None))).collect();
        for (s, r) in slots.iter().zip(&ran_on) {
            spawn_wait_once(s, r);
        }
        while slots.iter().any(|s| s.lock().unwrap().is_none()) {
            runtime::yield_now().await;
        }
        runtime::sleep(Duration::from_millis(5)).await;
        // One long poll from here (see the test above).
        for s in &slots {
            let waker = s.lock().unwrap().take().unwrap();
            waker.wake();
        }
        let me = std::thread::current().id();
        let watchdog = Instant::now();
        let mut spins = 0u32;
        let all_ran = || ran_on.iter().all(|r| r.lock().unwrap().is_some());
        while !all_ran() && watchdog.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(1));
            spins += 1;
            if spins.is_multiple_of(50) {
                runtime::preempt_point().await;
            }
        }
        assert_eq!(me, std::thread::current().id(), "the poll was interrupted");
        for r in &ran_on {
            let other = *r.lock().unwrap();
            assert!(
                other.is_some(),
                "a woken task did not run during the long poll"
            );
            assert_ne!(other, Some(me), "a woken task ran on the busy worker");
        }
        TaskEnd::Returned
    });
    assert_eq!(out, RunOutcome::Returned);
}
