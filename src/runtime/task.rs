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
use std::task::Wake;

use super::api::{SrcLoc, TaskEnd, WaitKind};
use super::shared::Shared;
use super::state::TaskState;
use super::sync::{lock, Mutex};

pub(crate) type BoxFuture = Pin<Box<dyn Future<Output = TaskEnd> + Send>>;

/// The wait a blocked task recorded with `set_wait`.
#[derive(Clone, Debug)]
pub(crate) struct WaitInfo {
    pub kind: WaitKind,
    pub loc: SrcLoc,
    /// Trace clock (ns) when the wait began; 0 when tracing is off.
    pub since: u64,
}

pub(crate) struct Task {
    pub id: u64,
    pub state: TaskState,
    pub future: Mutex<Option<BoxFuture>>,
    pub wait: Mutex<Option<WaitInfo>>,
    pub shared: Weak<Shared>,
}

impl Task {
    pub fn new(id: u64, future: BoxFuture, shared: Weak<Shared>) -> Arc<Task> {
        Arc::new(Task {
            id,
            state: TaskState::new_scheduled(),
            future: Mutex::new(Some(future)),
            wait: Mutex::new(None),
            shared,
        })
    }

    /// Drops the future (the task finished or the run is ending).
    pub fn drop_future(&self) {
        let f = lock(&self.future).take();
        drop(f);
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
