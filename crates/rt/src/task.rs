//! One task: its number, scheduling state, boxed future, and the wait reason
//! it recorded for deadlock reports. `Arc<Task<S>>` is also the task's waker
//! (`std::task::Wake`), so channels wake tasks knowing nothing of the runtime.
//!
//! The task is generic over its scheduler `S: Schedule` (tokio's
//! `task::Schedule`): a wake that must queue the task calls `S::schedule`,
//! a static call resolved at compile time, so this module imports nothing
//! of the run's shared state (`shared.rs`, `context.rs`) and the wake path
//! has no `dyn` call. The run's scheduler is `Shared` (the alias
//! `shared::Task`); the loom tests use a model scheduler.
//!
//! Invariants:
//! - The body (future and waker) has one owner at a time, which alone
//!   touches it (`with_body`): the worker that moved the state to RUNNING,
//!   until it moves it away; at the end of the run, the worker that took the
//!   task from its own queue (a queued task is SCHEDULED, so nobody polls
//!   it); after every worker was joined, the thread ending the run. The body
//!   is therefore an `UnsafeCell` (the loom facade's, so that the loom
//!   tests check every access), not a lock: a lock cost two atomic
//!   read-modify-writes per poll, about 15% of a ping-pong hand-off (a
//!   profile of `cargo bench --bench runtime -- --only pingpong`).
//! - A task holds its scheduler only weakly: wakers left in channels after
//!   the run ended find nothing to schedule on.
//! - Exactly the wakes for which `TaskState::wake` returns true call
//!   `S::schedule`, so a task is queued at most once (`state.rs`).

use std::future::Future;
use std::mem::ManuallyDrop;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{RawWaker, RawWakerVTable, Wake, Waker};

use super::api::TaskEnd;
use super::state::TaskState;
use crate::loom::{AtomicU64, AtomicUsize, UnsafeCell};

pub(crate) type BoxFuture = Pin<Box<dyn Future<Output = TaskEnd> + Send>>;

/// `Task::slot` of a task not (yet) in the registry (`registry.rs`).
pub(crate) const UNREGISTERED: usize = usize::MAX;

/// Where a woken task goes: implemented by the run's shared state.
pub(crate) trait Schedule: Sized + Send + Sync + 'static {
    /// Queues `task`, which a wake just moved from IDLE to SCHEDULED (so
    /// the caller owns the one queue entry the state machine allows). The
    /// task's scheduler is `task.scheduler`, which may be gone (the run
    /// ended): then the task is dropped.
    fn schedule(task: Arc<Task<Self>>);
}

/// What only the polling worker touches: the future and the task's own
/// waker (made on the first poll, dropped with the future, which breaks the
/// task → waker → task cycle).
pub(crate) struct Body {
    pub future: Option<BoxFuture>,
    pub waker: Option<Waker>,
}

pub(crate) struct Task<S> {
    pub id: u64,
    pub state: TaskState,
    /// Reached only through `with_body` (see the ownership invariant).
    body: UnsafeCell<Body>,
    /// The wait word (`wait.rs`) of the wait the task is blocked in,
    /// published when a poll returned Pending after `set_wait`; 0 when none.
    /// Read by the deadlock report.
    pub wait: AtomicU64,
    /// The run the task belongs to (held weakly, see the invariants).
    pub scheduler: Weak<S>,
    /// Index in the registry's shard (see `registry.rs`); `UNREGISTERED`
    /// until the task first blocks.
    pub slot: AtomicUsize,
}

impl<S> Task<S> {
    pub fn new(id: u64, future: BoxFuture, scheduler: Weak<S>) -> Arc<Task<S>> {
        Arc::new(Task {
            id,
            state: TaskState::new_scheduled(),
            body: UnsafeCell::new(Body {
                future: Some(future),
                waker: None,
            }),
            wait: AtomicU64::new(0),
            scheduler,
            slot: AtomicUsize::new(UNREGISTERED),
        })
    }

    /// Runs `f` on the task's body (its future and waker).
    ///
    /// # Safety
    ///
    /// The caller owns the body (module invariant): it moved the state to
    /// RUNNING and has not moved it away, or it took the task from a queue
    /// when the run ends, or every worker has been joined. `f` must not
    /// reach this task's body again.
    pub unsafe fn with_body<R>(&self, f: impl FnOnce(&mut Body) -> R) -> R {
        self.body.with_mut(|body| {
            // SAFETY: the caller owns the body, so no other reference to it
            // exists while `f` runs.
            f(unsafe { &mut *body })
        })
    }

    /// Marks the task finished and drops its future (the run is ending).
    ///
    /// # Safety
    ///
    /// As for `with_body`: the caller owns the task's body.
    pub unsafe fn abandon(&self) {
        self.state.finish();
        // SAFETY: the caller owns the body. The future and waker are moved
        // out first, so their drop (which may wake tasks) runs outside it.
        let (f, w) = unsafe { self.with_body(|b| (b.future.take(), b.waker.take())) };
        // A future whose drop panics must not make `run` panic.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            drop(f);
            drop(w);
        }));
    }
}

// SAFETY: every field but `body` is `Sync` (`Weak<S>` is, as `S` is `Send`
// and `Sync`). `body` is `Send` (a `Send` future and a `Waker`) and is
// reached only through `with_body`, whose callers own it, so no two threads
// ever touch it at once.
unsafe impl<S: Send + Sync> Sync for Task<S> {}

impl<S: Schedule> Task<S> {
    const VTABLE: RawWakerVTable = RawWakerVTable::new(
        Self::clone_raw,
        Self::wake_raw,
        Self::wake_by_ref_raw,
        Self::drop_raw,
    );

    /// The task's waker: one reference to the task, as `Waker::from` on an
    /// `Arc` would make, except that its clone takes a reference lent by
    /// the worker polling the task instead of counting a new one (see
    /// [`lend`]).
    pub(crate) fn waker(this: &Arc<Self>) -> Waker {
        let p = Arc::into_raw(this.clone()).cast::<()>();
        // SAFETY: the vtable's functions take `p` for the reference that
        // `into_raw` just gave up, and keep that count exact (below).
        unsafe { Waker::from_raw(RawWaker::new(p, &Self::VTABLE)) }
    }

    /// Clones a waker: takes the lent reference if `p` is the task being
    /// polled on this thread and its reference is still lent, else counts
    /// a new one.
    unsafe fn clone_raw(p: *const ()) -> RawWaker {
        if !take_lent(p) {
            // SAFETY: `p` came from `Arc::into_raw` (`waker`) and the waker
            // being cloned holds a reference, so the task is alive.
            unsafe { Arc::increment_strong_count(p.cast::<Self>()) };
        }
        RawWaker::new(p, &Self::VTABLE)
    }

    unsafe fn wake_raw(p: *const ()) {
        // SAFETY: the waker's reference, consumed by the wake.
        let task = unsafe { Arc::from_raw(p.cast::<Self>()) };
        Wake::wake(task);
    }

    unsafe fn wake_by_ref_raw(p: *const ()) {
        // SAFETY: the waker's reference, borrowed (not dropped).
        let task = ManuallyDrop::new(unsafe { Arc::from_raw(p.cast::<Self>()) });
        Wake::wake_by_ref(&task);
    }

    unsafe fn drop_raw(p: *const ()) {
        // SAFETY: the waker's reference, given back.
        drop(unsafe { Arc::from_raw(p.cast::<Self>()) });
    }
}

#[cfg(not(loom))]
std::thread_local! {
    /// The task whose queue reference this thread's running poll lends to
    /// the first clone of the task's waker; null when none (or taken).
    static LENT: std::cell::Cell<*const ()> = const { std::cell::Cell::new(std::ptr::null()) };
}

/// Lends the reference to `task` that the polling worker took from a queue
/// to the first clone of the task's waker made on this thread until
/// [`reclaim`]; returns what to hand `reclaim` (the previous lender, for
/// a run started inside a poll).
///
/// Why: a task that parks stores a clone of its waker (one count up) and
/// the worker then drops the reference it polled with (one count down):
/// two locked instructions a park, about a tenth of a channel hand-off
/// with one worker (docs/performance.md, "Twenty-fourth session"). With
/// the loan, the stored waker owns the worker's reference instead.
///
/// Invariant: while the loan is taken, the worker's `Arc` does not own a
/// count. The task stays alive meanwhile: its own waker (`Body::waker`,
/// dropped only by the body's owner when the task ends) holds a count.
/// The worker gives its `Arc` up uncounted (`mem::forget`) when the task
/// parked, or counts it again ([`restore`]) when it keeps using or
/// queueing it (the task ended, or was woken during its poll).
#[inline]
pub(crate) fn lend<S>(task: &Arc<Task<S>>) -> *const () {
    #[cfg(not(loom))]
    {
        LENT.with(|c| c.replace(Arc::as_ptr(task).cast()))
    }
    #[cfg(loom)]
    {
        // Not modelled: every clone counts (loom's threads share the
        // host's thread-locals).
        let _ = task;
        std::ptr::null()
    }
}

/// Ends the loan [`lend`] made (given what it returned); true when a clone
/// took the reference.
#[inline]
pub(crate) fn reclaim(prev: *const ()) -> bool {
    #[cfg(not(loom))]
    {
        LENT.with(|c| c.replace(prev)).is_null()
    }
    #[cfg(loom)]
    {
        let _ = prev;
        false
    }
}

/// Counts the worker's reference again after a clone took it (`reclaim`
/// said so) and before the worker queues or finishes the task.
#[inline]
pub(crate) fn restore<S>(task: &Arc<Task<S>>) {
    // SAFETY: the task is alive (its own waker holds a count, see `lend`);
    // this gives the worker's `Arc` back the count the clone took.
    unsafe { Arc::increment_strong_count(Arc::as_ptr(task)) };
}

#[inline]
fn take_lent(p: *const ()) -> bool {
    #[cfg(not(loom))]
    {
        LENT.with(|c| {
            if c.get() == p {
                c.set(std::ptr::null());
                true
            } else {
                false
            }
        })
    }
    #[cfg(loom)]
    {
        let _ = p;
        false
    }
}

impl<S: Schedule> Wake for Task<S> {
    fn wake(self: Arc<Self>) {
        if self.state.wake() {
            S::schedule(self);
        }
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.state.wake() {
            S::schedule(self.clone());
        }
    }
}

/// The loan of a polled task's reference to its waker (`lend`): every
/// path of a poll keeps the count exact, so every task is freed when the
/// run ends (a count too many leaks the task, which holds the run's state
/// weakly; one too few frees it while in use).
#[cfg(all(test, not(loom)))]
pub(crate) mod lend_tests {
    use std::cell::Cell;
    use std::future::poll_fn;
    use std::task::Poll;

    use weft_chan::Chan;

    use crate::{spawn, yield_now, Config, RunOutcome, Runtime, TaskEnd};

    std::thread_local! {
        /// Weak references to the last run's state left when `run`
        /// returned on this thread: tasks not freed.
        pub(crate) static TASKS_LEFT: Cell<usize> = const { Cell::new(usize::MAX) };
    }

    fn run(workers: usize, main: impl std::future::Future<Output = TaskEnd> + Send + 'static) {
        let cfg = Config {
            workers,
            seed: 7,
            trace: None,
            max_tasks: None,
        };
        assert_eq!(Runtime::new(cfg).run(main), RunOutcome::Returned);
        assert_eq!(TASKS_LEFT.get(), 0, "tasks left alive ({workers} workers)");
    }

    #[test]
    fn every_task_is_freed_however_its_polls_end() {
        for workers in [1, 2, 4] {
            run(workers, async {
                let done = Chan::new(0);
                // Parks and wakes: the stored waker takes the loan.
                for _ in 0..20 {
                    let (ping, pong) = (Chan::new(0), Chan::new(0));
                    let (p2, q2, d) = (ping.clone(), pong.clone(), done.clone());
                    spawn(async move {
                        while let Some(v) = p2.recv().await {
                            let _ = q2.send(v + 1).await;
                        }
                        let _ = d.send(0).await;
                        TaskEnd::Returned
                    })
                    .unwrap();
                    let d = done.clone();
                    spawn(async move {
                        for i in 0..200u64 {
                            let _ = ping.send(i).await;
                            assert_eq!(pong.recv().await, Some(i + 1));
                        }
                        let _ = ping.close();
                        let _ = d.send(0).await;
                        TaskEnd::Returned
                    })
                    .unwrap();
                }
                // Woken during its own poll: requeued with the loan taken.
                for _ in 0..10 {
                    let d = done.clone();
                    spawn(async move {
                        for _ in 0..50 {
                            yield_now().await;
                        }
                        let _ = d.send(0).await;
                        TaskEnd::Returned
                    })
                    .unwrap();
                }
                // A clone made and dropped in the poll that ends the task,
                // and one woken by value in a pending poll.
                for _ in 0..10 {
                    let d = done.clone();
                    spawn(async move {
                        let mut woke = false;
                        poll_fn(|cx| {
                            if woke {
                                return Poll::Ready(());
                            }
                            woke = true;
                            // A clone woken by value (it takes the loan).
                            #[allow(clippy::waker_clone_wake)]
                            cx.waker().clone().wake();
                            Poll::Pending
                        })
                        .await;
                        let _ = d.send(0).await;
                        poll_fn(|cx| {
                            drop(cx.waker().clone());
                            Poll::Ready(TaskEnd::Returned)
                        })
                        .await
                    })
                    .unwrap();
                }
                // A task whose one poll takes the loan and ends: never
                // registered, so its own waker is its last count but the
                // worker's (counted again before that waker is dropped).
                for _ in 0..20 {
                    spawn(poll_fn(|cx| {
                        drop(cx.waker().clone());
                        Poll::Ready(TaskEnd::Returned)
                    }))
                    .unwrap();
                }
                for _ in 0..60 {
                    done.recv().await;
                }
                TaskEnd::Returned
            });
        }
    }

    #[test]
    fn tasks_still_blocked_when_main_returns_are_freed() {
        for workers in [1, 2] {
            run(workers, async {
                let never: Chan<u8> = Chan::new(0);
                for _ in 0..50 {
                    let n = never.clone();
                    spawn(async move {
                        n.recv().await;
                        TaskEnd::Returned
                    })
                    .unwrap();
                }
                yield_now().await;
                TaskEnd::Returned
            });
        }
    }
}
