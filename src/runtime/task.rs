//! One task: its number, scheduling state, boxed future, and the wait reason
//! it recorded for deadlock reports. `Arc<Task>` is also the task's waker
//! (`std::task::Wake`), so channels wake tasks knowing nothing of the runtime.
//!
//! Invariants:
//! - The future is polled only by the worker that moved the state to RUNNING
//!   (see `state.rs`); the `future` lock is therefore never contended while
//!   the run goes on, and is only there to keep this file free of `unsafe`.
//! - A task holds its run only weakly: wakers left in channels after the run
//!   ended find nothing to schedule on.
//! - Waking routes through `Shared::schedule_woken`: into the current
//!   worker's LIFO slot when the waker runs on a worker of the same run.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Wake, Waker};

use super::api::{SrcLoc, TaskEnd, WaitKind};
use super::shared::Shared;
use super::state::TaskState;
use super::sync::{lock, AtomicBool, AtomicUsize, Mutex};

pub(crate) type BoxFuture = Pin<Box<dyn Future<Output = TaskEnd> + Send>>;

/// The wait a blocked task recorded with `set_wait`.
#[derive(Clone, Debug)]
pub(crate) struct WaitInfo {
    pub kind: WaitKind,
    pub loc: SrcLoc,
    /// Trace clock (ns) when the wait began; 0 when tracing is off.
    pub since: u64,
}

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
    pub body: Mutex<Body>,
    /// The reason of the wait the task is blocked in, published when a poll
    /// returned Pending after `set_wait` (read by the deadlock report).
    pub wait: Mutex<Option<WaitInfo>>,
    /// Whether `wait` holds a reason (read at the start of each poll).
    pub has_wait: AtomicBool,
    pub shared: Weak<Shared>,
    /// Index in the registry's shard (see `registry.rs`).
    pub slot: AtomicUsize,
}

impl Task {
    pub fn new(id: u64, future: BoxFuture, shared: Weak<Shared>) -> Arc<Task> {
        Arc::new(Task {
            id,
            state: TaskState::new_scheduled(),
            body: Mutex::new(Body {
                future: Some(future),
                waker: None,
            }),
            wait: Mutex::new(None),
            has_wait: AtomicBool::new(false),
            shared,
            slot: AtomicUsize::new(super::registry::UNREGISTERED),
        })
    }

    /// Marks the task finished and drops its future (the run is ending).
    pub fn abandon(&self) {
        self.state.finish();
        // A future whose drop panics must not make `run` panic.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.drop_future()));
    }

    /// Drops the future (the task finished or the run is ending).
    pub fn drop_future(&self) {
        let (f, w) = {
            let mut b = lock(&self.body);
            (b.future.take(), b.waker.take())
        };
        drop(f);
        drop(w);
    }
}

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
