//! The scheduling state of one task: a single atomic byte changed by
//! compare-and-swap, so that a task is queued at most once and polled by one
//! worker at a time however many wakers fire. Modelled on async-task's and
//! tokio's task state (simplified: reference counts stay in `Arc`).
//!
//! | state     | wake()                | worker takes it | poll → Pending         | poll → Ready |
//! |-----------|-----------------------|-----------------|------------------------|--------------|
//! | IDLE      | → SCHEDULED, enqueue  | —               | —                      | —            |
//! | SCHEDULED | nothing               | → RUNNING       | —                      | —            |
//! | RUNNING   | → NOTIFIED            | —               | → IDLE                 | → DONE       |
//! | NOTIFIED  | nothing               | —               | → SCHEDULED, enqueue at the back | → DONE |
//! | DONE      | nothing               | —               | —                      | —            |
//!
//! Invariant: exactly the transitions that return `true` below put the task
//! in a queue, so a task is in at most one queue (or LIFO slot) at a time.

use crate::loom::{AtomicU8, Ordering};

const IDLE: u8 = 0;
const SCHEDULED: u8 = 1;
const RUNNING: u8 = 2;
const NOTIFIED: u8 = 3;
const DONE: u8 = 4;

/// The state byte of one task.
#[derive(Debug)]
pub struct TaskState(AtomicU8);

impl TaskState {
    /// A new task starts SCHEDULED: its creator queues it.
    pub fn new_scheduled() -> TaskState {
        TaskState(AtomicU8::new(SCHEDULED))
    }

    /// A wake-up. Returns true when the caller must enqueue the task.
    pub fn wake(&self) -> bool {
        let mut cur = self.0.load(Ordering::Acquire);
        loop {
            let next = match cur {
                IDLE => SCHEDULED,
                RUNNING => NOTIFIED,
                _ => return false,
            };
            match self
                .0
                .compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return next == SCHEDULED,
                Err(actual) => cur = actual,
            }
        }
    }

    /// A worker took the task from a queue. Returns false if the task is
    /// already finished (it is then dropped instead of polled).
    ///
    /// A load and a store, not a compare-and-swap: while the task is
    /// SCHEDULED nobody else writes the byte (`wake` leaves SCHEDULED alone,
    /// and only the queue's taker may `finish` it), so the check cannot be
    /// overtaken. The Acquire load reads the value of the waker's AcqRel
    /// CAS, so what the waker wrote before waking is visible to the poll.
    /// (One locked instruction fewer per poll.)
    pub fn start_running(&self) -> bool {
        if self.0.load(Ordering::Acquire) != SCHEDULED {
            return false;
        }
        self.0.store(RUNNING, Ordering::Release);
        true
    }

    /// The poll returned Pending. Returns true when a wake arrived during
    /// the poll: the task is SCHEDULED again and the caller must enqueue it
    /// at the back of its queue (this is how `yield_now` requeues).
    pub fn stop_running(&self) -> bool {
        match self
            .0
            .compare_exchange(RUNNING, IDLE, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => false,
            Err(_) => {
                // Only a waker changes RUNNING, and only to NOTIFIED.
                self.0.store(SCHEDULED, Ordering::Release);
                true
            }
        }
    }

    /// The poll returned Ready, or the run is ending.
    pub fn finish(&self) {
        self.0.store(DONE, Ordering::Release);
    }

    /// True once the task finished (only the unit tests ask).
    #[cfg(all(test, not(loom)))]
    pub fn is_done(&self) -> bool {
        self.0.load(Ordering::Acquire) == DONE
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn wake_while_idle_enqueues_once() {
        let s = TaskState::new_scheduled();
        assert!(s.start_running());
        assert!(!s.stop_running());
        assert!(s.wake());
        assert!(!s.wake());
        assert!(s.start_running());
    }

    #[test]
    fn wake_while_running_requeues_after_the_poll() {
        let s = TaskState::new_scheduled();
        assert!(s.start_running());
        assert!(!s.wake());
        assert!(!s.wake());
        assert!(s.stop_running());
        assert!(s.start_running());
        s.finish();
        assert!(!s.wake());
        assert!(s.is_done());
    }
}
