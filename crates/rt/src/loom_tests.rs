//! Loom model checks of the runtime's parking and wake protocols: a
//! notification is never lost (a parked worker always wakes for new work),
//! the deadlock check never fires while work is queued, the task state
//! machine queues a woken task exactly once, and a task's body (its
//! `UnsafeCell`) is only touched by one worker at a time; the same holds
//! for a push to the pusher's own queue notified without the fence (spawn,
//! yield, and the LIFO hand-off of `release_lifo`); a run with a quiescence
//! hook is never reported quiescent while a task woken from outside is
//! queued or running. Unit tests, so that
//! they reach the crate's private modules. Run with:
//!
//!     RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!         cargo test --release -p weft-rt --lib loom_tests

use std::sync::Arc as StdArc;
use std::task::{Context, Wake, Waker};

use ::loom::thread;

use crate::api::TaskEnd;
use crate::idle::{Idle, ParkDecision, Quiescence};
use crate::loom::{fence, Arc, AtomicBool, AtomicUsize, Condvar, Mutex, Ordering};
use crate::park::{ParkDriver, Parker};
use crate::state::TaskState;
use crate::task::{Schedule, Task};

/// A stand-in for the poller: one thread at a time may block in it; a wake
/// is remembered until the next block consumes it (like mio's eventfd).
/// `held` is an atomic flag rather than a `Mutex::try_lock` because loom
/// 0.7 models a `try_lock` racing with a held lock as blocking.
struct ModelDriver {
    held: AtomicBool,
    woken: Mutex<bool>,
    cv: Condvar,
}

impl ModelDriver {
    fn new() -> ModelDriver {
        ModelDriver {
            held: AtomicBool::new(false),
            woken: Mutex::new(false),
            cv: Condvar::new(),
        }
    }
}

impl ParkDriver for ModelDriver {
    fn try_park(&self, enter: &mut dyn FnMut() -> bool) -> bool {
        if self
            .held
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            return false;
        }
        if enter() {
            let mut w = self.woken.lock();
            while !*w {
                w = self.cv.wait(w);
            }
            *w = false;
        }
        self.held.store(false, Ordering::SeqCst);
        true
    }

    fn unpark(&self) {
        *self.woken.lock() = true;
        self.cv.notify_one();
    }
}

#[test]
fn unpark_is_never_lost() {
    ::loom::model(|| {
        let driver = Arc::new(ModelDriver::new());
        let parker = Arc::new(Parker::new());
        let (d, p) = (driver.clone(), parker.clone());
        let t = thread::spawn(move || p.unpark(&*d));
        // Blocks forever (a loom deadlock) if the unpark were lost.
        parker.park(&*driver);
        t.join().unwrap();
    });
}

#[test]
fn two_parkers_share_one_driver() {
    ::loom::model(|| {
        let driver = Arc::new(ModelDriver::new());
        let parkers = Arc::new([Parker::new(), Parker::new()]);
        let mut ts = Vec::new();
        for i in 0..2 {
            let (d, p) = (driver.clone(), parkers.clone());
            ts.push(thread::spawn(move || {
                p[i].park(&*d);
            }));
        }
        parkers[0].unpark(&*driver);
        parkers[1].unpark(&*driver);
        for t in ts {
            t.join().unwrap();
        }
    });
}

/// A model worker: takes items from `queue` until the run shuts down,
/// following the park protocol of `idle.rs` (steps P1-P5).
fn worker(
    i: usize,
    idle: &Idle,
    parkers: &[Parker; 2],
    driver: &ModelDriver,
    queue: &AtomicUsize,
    taken: &AtomicUsize,
) {
    let mut searching = false;
    loop {
        let n = queue.load(Ordering::SeqCst);
        if n > 0 {
            if queue
                .compare_exchange(n, n - 1, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                if searching {
                    searching = false;
                    idle.transition_from_searching();
                }
                taken.fetch_add(1, Ordering::SeqCst);
            }
            continue;
        }
        match idle.transition_to_parked(i, searching, || queue.load(Ordering::SeqCst) == 0) {
            ParkDecision::Shutdown => return,
            ParkDecision::Deadlock => {
                for w in idle.shutdown() {
                    parkers[w].unpark(driver);
                }
                return;
            }
            ParkDecision::Parked => {}
        }
        fence(Ordering::SeqCst);
        if queue.load(Ordering::SeqCst) == 0 {
            parkers[i].park(driver);
        }
        idle.transition_from_parked(i);
        searching = true;
    }
}

/// Worker 1 parks (or not) while worker 0, running a task, queues one item
/// and notifies (with or without the fence), then goes on as a worker.
fn queued_work_model(with_fence: bool) {
    let mut builder = ::loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(move || {
        let idle = Arc::new(Idle::new(2, None));
        let parkers = Arc::new([Parker::new(), Parker::new()]);
        let driver = Arc::new(ModelDriver::new());
        let queue = Arc::new(AtomicUsize::new(0));
        let taken = Arc::new(AtomicUsize::new(0));

        let w1 = {
            let (idle, parkers, driver, queue, taken) = (
                idle.clone(),
                parkers.clone(),
                driver.clone(),
                queue.clone(),
                taken.clone(),
            );
            thread::spawn(move || worker(1, &idle, &parkers, &driver, &queue, &taken))
        };
        queue.fetch_add(1, Ordering::SeqCst);
        if let Some(w) = idle.worker_to_notify(with_fence) {
            parkers[w].unpark(&*driver);
        }
        worker(0, &idle, &parkers, &driver, &queue, &taken);
        w1.join().unwrap();
        // The run ended by the deadlock check, and only after the item ran.
        assert_eq!(taken.load(Ordering::SeqCst), 1);
    });
}

/// A push no running worker drains by itself (the injection queue): fenced.
#[test]
fn queued_work_wakes_a_parked_worker_and_is_never_a_deadlock() {
    queued_work_model(true);
}

/// A push to the pusher's own queue (a spawn, a yield, a LIFO task handed
/// over by `release_lifo`): no fence; the pusher drains it if the notify is
/// missed, so the item still runs and no false deadlock is reported.
#[test]
fn an_unfenced_local_hand_off_still_runs_and_is_never_a_deadlock() {
    queued_work_model(false);
}

/// The hook of a model run: the last state it was told, with a condition
/// variable to wait for a change.
struct ModelHook {
    quiescent: Mutex<bool>,
    cv: Condvar,
}

impl Quiescence for ModelHook {
    fn changed(&self, quiescent: bool) {
        *self.quiescent.lock() = quiescent;
        self.cv.notify_all();
    }
}

/// Two workers of a run with a quiescence hook go quiescent; an outside
/// thread (one process's messaging thread) waits for that, queues an item
/// and notifies, as a wake from outside does, then waits for quiescence
/// again: by then the item has run. Were the notify not to clear the
/// state, or were quiescence declared while the item is queued, the
/// outside thread would see `true` before the item ran.
#[test]
fn quiescence_is_left_by_an_outside_wake_and_never_hides_queued_work() {
    let mut builder = ::loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(|| {
        let hook = StdArc::new(ModelHook {
            quiescent: Mutex::new(false),
            cv: Condvar::new(),
        });
        let idle = Arc::new(Idle::new(2, Some(hook.clone() as StdArc<dyn Quiescence>)));
        let parkers = Arc::new([Parker::new(), Parker::new()]);
        let driver = Arc::new(ModelDriver::new());
        let queue = Arc::new(AtomicUsize::new(0));
        let taken = Arc::new(AtomicUsize::new(0));
        let workers: Vec<_> = (0..2)
            .map(|i| {
                let (idle, parkers, driver, queue, taken) = (
                    idle.clone(),
                    parkers.clone(),
                    driver.clone(),
                    queue.clone(),
                    taken.clone(),
                );
                thread::spawn(move || worker(i, &idle, &parkers, &driver, &queue, &taken))
            })
            .collect();
        let wait_quiescent = || {
            let mut q = hook.quiescent.lock();
            while !*q {
                q = hook.cv.wait(q);
            }
        };
        wait_quiescent();
        assert_eq!(taken.load(Ordering::SeqCst), 0);
        queue.fetch_add(1, Ordering::SeqCst);
        if let Some(w) = idle.worker_to_notify(true) {
            parkers[w].unpark(&*driver);
        }
        wait_quiescent();
        assert_eq!(taken.load(Ordering::SeqCst), 1);
        // End the run, as the detector's verdict does.
        for w in idle.shutdown() {
            parkers[w].unpark(&*driver);
        }
        for w in workers {
            w.join().unwrap();
        }
    });
}

#[test]
fn a_woken_task_is_queued_exactly_once() {
    ::loom::model(|| {
        let state = Arc::new(TaskState::new_scheduled());
        assert!(state.start_running());
        let wakers: Vec<_> = (0..2)
            .map(|_| {
                let s = state.clone();
                thread::spawn(move || s.wake())
            })
            .collect();
        // The poll returns Pending while the wakes race with it.
        let requeued = state.stop_running();
        let enqueued = wakers
            .into_iter()
            .map(|t| t.join().unwrap())
            .filter(|&b| b)
            .count();
        assert_eq!(usize::from(requeued) + enqueued, 1);
    });
}

/// A model scheduler for real `Task`s: one queue under a lock. It counts
/// the pushes (by a waker through `Schedule`, or by a worker that saw a
/// wake during its poll) and the polls. Tasks hold it through a
/// `std::sync::Weak`, as they hold the run's `Shared`.
struct ModelSched {
    queue: Mutex<Vec<StdArc<Task<ModelSched>>>>,
    pushed: AtomicUsize,
    polls: AtomicUsize,
}

impl ModelSched {
    fn push(&self, task: StdArc<Task<ModelSched>>) {
        self.pushed.fetch_add(1, Ordering::SeqCst);
        self.queue.lock().push(task);
    }

    /// Takes a queued task, if any, and polls it once.
    fn run_queued(&self) {
        let task = self.queue.lock().pop();
        if let Some(task) = task {
            self.poll_once(task);
        }
    }

    /// One poll of a task taken from the queue, as `worker::run_task`
    /// does it (see `polled`).
    fn poll_once(&self, task: StdArc<Task<ModelSched>>) {
        if task.state.start_running() {
            self.polled(task);
        }
    }

    /// The rest of a poll after `start_running` succeeded: touch the body
    /// (loom checks that no other thread does meanwhile), give it back
    /// with `stop_running`, and requeue the task if it was woken during
    /// the poll.
    fn polled(&self, task: StdArc<Task<ModelSched>>) {
        self.polls.fetch_add(1, Ordering::SeqCst);
        let mut cx = Context::from_waker(Waker::noop());
        // SAFETY: the caller's `start_running` moved the state to RUNNING,
        // so this thread owns the body until `stop_running` below
        // (`task.rs`).
        let pending = unsafe {
            task.with_body(|b| {
                b.future
                    .as_mut()
                    .is_some_and(|f| f.as_mut().poll(&mut cx).is_pending())
            })
        };
        assert!(pending);
        if task.state.stop_running() {
            self.push(task);
        }
    }
}

impl Schedule for ModelSched {
    fn schedule(task: StdArc<Task<Self>>) {
        if let Some(sched) = task.scheduler.upgrade() {
            sched.push(task);
        }
    }
}

/// A wake races the task's first poll; both threads then act as workers.
/// The task is queued exactly once, polled exactly twice, and never by two
/// threads at once (a concurrent `with_body` is a loom error).
#[test]
fn a_task_body_is_polled_by_one_worker_at_a_time() {
    ::loom::model(|| {
        let sched = StdArc::new(ModelSched {
            queue: Mutex::new(Vec::new()),
            pushed: AtomicUsize::new(0),
            polls: AtomicUsize::new(0),
        });
        let future = Box::pin(std::future::pending::<TaskEnd>());
        let task = Task::new(1, future, StdArc::downgrade(&sched));
        // The task starts SCHEDULED: its creator's worker takes it, so the
        // wake below finds it RUNNING or IDLE and is never absorbed.
        assert!(task.state.start_running());
        let waker = {
            let (task, sched) = (task.clone(), sched.clone());
            thread::spawn(move || {
                task.wake_by_ref();
                drop(task);
                sched.run_queued();
            })
        };
        sched.polled(task);
        sched.run_queued();
        waker.join().unwrap();
        sched.run_queued();
        assert_eq!(sched.pushed.load(Ordering::SeqCst), 1);
        assert_eq!(sched.polls.load(Ordering::SeqCst), 2);
    });
}
