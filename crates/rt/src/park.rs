//! Parking one worker thread: on its own condition variable, or, for the one
//! worker that gets it, inside the poller (`epoll_wait`). Tokio's
//! `runtime/scheduler/multi_thread/park.rs`, with the driver behind a trait so
//! that loom can check the protocol with a model driver.
//!
//! State of one parker (one atomic byte):
//!
//! | state          | park()                                   | unpark()                        |
//! |----------------|------------------------------------------|---------------------------------|
//! | EMPTY          | → PARKED_DRIVER or PARKED_CONDVAR, block | → NOTIFIED                      |
//! | NOTIFIED       | → EMPTY, return at once                  | stays NOTIFIED                  |
//! | PARKED_CONDVAR | —                                        | → NOTIFIED, lock, notify_one    |
//! | PARKED_DRIVER  | —                                        | → NOTIFIED, driver.unpark()     |
//!
//! Parking protocol:
//! 1. If the state is NOTIFIED, consume it (→ EMPTY) and return.
//! 2. Try to take the driver. If taken: CAS EMPTY → PARKED_DRIVER (if that
//!    fails the state is NOTIFIED: consume it, return); block in the driver;
//!    swap the state back to EMPTY; return.
//! 3. Otherwise lock the condvar mutex, CAS EMPTY → PARKED_CONDVAR (if that
//!    fails: consume NOTIFIED, return), then wait until a CAS NOTIFIED → EMPTY
//!    succeeds (spurious wake-ups loop).
//!
//! Unparking: swap in NOTIFIED; if the old state was PARKED_CONDVAR, lock
//! and release the mutex (so the waiter is inside `wait`) and notify; if it
//! was PARKED_DRIVER, wake the driver. A notification is never lost: it is
//! either seen by step 1/2/3's CAS or delivered to a thread already blocked.

use crate::loom::{AtomicU8, Condvar, Mutex, Ordering};

const EMPTY: u8 = 0;
const PARKED_CONDVAR: u8 = 1;
const PARKED_DRIVER: u8 = 2;
const NOTIFIED: u8 = 3;

/// What a parked worker may block in besides its condition variable.
pub trait ParkDriver {
    /// Takes the driver if free; calls `enter`; if it returns true, blocks
    /// until `unpark` or an event. Returns whether the driver was taken.
    fn try_park(&self, enter: &mut dyn FnMut() -> bool) -> bool;
    /// Ends a `try_park` block in progress, or the next one.
    fn unpark(&self);
}

impl ParkDriver for crate::netpoll::Driver {
    fn try_park(&self, enter: &mut dyn FnMut() -> bool) -> bool {
        crate::netpoll::Driver::try_park(self, enter)
    }
    fn unpark(&self) {
        crate::netpoll::Driver::unpark(self)
    }
}

/// The parking spot of one worker.
#[derive(Debug)]
pub struct Parker {
    state: AtomicU8,
    mutex: Mutex<()>,
    condvar: Condvar,
}

impl Default for Parker {
    fn default() -> Self {
        Parker::new()
    }
}

impl Parker {
    pub fn new() -> Parker {
        Parker {
            state: AtomicU8::new(EMPTY),
            mutex: Mutex::new(()),
            condvar: Condvar::new(),
        }
    }

    /// Blocks until `unpark` (or, in the driver, an event or timer).
    /// Returns whether this thread blocked in the driver.
    pub fn park(&self, driver: &dyn ParkDriver) -> bool {
        // Step 1.
        if self.consume_notification() {
            return false;
        }
        // Step 2.
        let mut entered = false;
        let took = driver.try_park(&mut || match self.state.compare_exchange(
            EMPTY,
            PARKED_DRIVER,
            Ordering::SeqCst,
            Ordering::SeqCst,
        ) {
            Ok(_) => {
                entered = true;
                true
            }
            Err(_) => {
                self.state.swap(EMPTY, Ordering::SeqCst);
                false
            }
        });
        if took {
            if entered {
                self.state.swap(EMPTY, Ordering::SeqCst);
            }
            return true;
        }
        // Step 3.
        let mut g = self.mutex.lock();
        if self
            .state
            .compare_exchange(EMPTY, PARKED_CONDVAR, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            self.state.swap(EMPTY, Ordering::SeqCst);
            return false;
        }
        loop {
            g = self.condvar.wait(g);
            if self.consume_notification() {
                return false;
            }
        }
    }

    /// Wakes the worker parked here, or makes its next `park` return at once.
    pub fn unpark(&self, driver: &dyn ParkDriver) {
        match self.state.swap(NOTIFIED, Ordering::SeqCst) {
            PARKED_CONDVAR => {
                drop(self.mutex.lock());
                self.condvar.notify_one();
            }
            PARKED_DRIVER => driver.unpark(),
            _ => {}
        }
    }

    fn consume_notification(&self) -> bool {
        self.state
            .compare_exchange(NOTIFIED, EMPTY, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }
}
