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
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Wake, Waker};

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
