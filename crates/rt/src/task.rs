//! One task: its number, scheduling state, boxed future, and the wait reason
//! it recorded for deadlock reports. `Arc<Task>` is also the task's waker
//! (`std::task::Wake`), so channels wake tasks knowing nothing of the runtime.
//!
//! Invariants:
//! - The body (future and waker) has one owner at a time, which alone
//!   touches it (`with_body`): the worker that moved the state to RUNNING,
//!   until it moves it away; at the end of the run, the worker that took the
//!   task from its own queue (a queued task is SCHEDULED, so nobody polls
//!   it); after every worker was joined, the thread ending the run. The body
//!   is therefore an `UnsafeCell`, not a lock: a lock cost two atomic
//!   read-modify-writes per poll, about 15% of a ping-pong hand-off (a
//!   profile of `cargo bench --bench runtime -- --only pingpong`).
//! - A task holds its run only weakly: wakers left in channels after the run
//!   ended find nothing to schedule on.
//! - Waking routes through `Shared::schedule_woken`: into the current
//!   worker's LIFO slot when the waker runs on a worker of the same run.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Wake, Waker};

use super::api::TaskEnd;
use super::shared::Shared;
use super::state::TaskState;
use super::sync::{AtomicU64, AtomicUsize};
use std::cell::UnsafeCell;

pub(crate) type BoxFuture = Pin<Box<dyn Future<Output = TaskEnd> + Send>>;

/// What only the polling worker touches: the future and the task's own
/// waker (made on the first poll, dropped with the future, which breaks the
/// task → waker → task cycle).
pub(crate) struct Body {
    pub future: Option<BoxFuture>,
    pub waker: Option<Waker>,
}

pub(crate) struct Task {
    pub id: u64,
    pub state: TaskState,
    /// Reached only through `with_body` (see the ownership invariant).
    body: UnsafeCell<Body>,
    /// The wait word (`wait.rs`) of the wait the task is blocked in,
    /// published when a poll returned Pending after `set_wait`; 0 when none.
    /// Read by the deadlock report.
    pub wait: AtomicU64,
    pub shared: Weak<Shared>,
    /// Index in the registry's shard (see `registry.rs`).
    pub slot: AtomicUsize,
}

impl Task {
    pub fn new(id: u64, future: BoxFuture, shared: Weak<Shared>) -> Arc<Task> {
        Arc::new(Task {
            id,
            state: TaskState::new_scheduled(),
            body: UnsafeCell::new(Body {
                future: Some(future),
                waker: None,
            }),
            wait: AtomicU64::new(0),
            shared,
            slot: AtomicUsize::new(super::registry::UNREGISTERED),
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
        // SAFETY: the caller owns the body, so no other reference to it
        // exists while `f` runs.
        f(unsafe { &mut *self.body.get() })
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

// SAFETY: every field but `body` is `Sync`. `body` is `Send` (a `Send`
// future and a `Waker`) and is reached only through `with_body`, whose
// callers own it, so no two threads ever touch it at once.
unsafe impl Sync for Task {}

impl Wake for Task {
    fn wake(self: Arc<Self>) {
        if self.state.wake() {
            Shared::schedule_woken(self);
        }
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.state.wake() {
            Shared::schedule_woken(self.clone());
        }
    }
}
