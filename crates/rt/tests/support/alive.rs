//! `Alive`: counts live instances, so a task holding one shows whether its
//! future was dropped. Shared by the runtime's end-of-run tests.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Counts live instances; a task holding one shows whether its future was dropped.
pub struct Alive(Arc<AtomicUsize>);

impl Alive {
    pub fn new(c: &Arc<AtomicUsize>) -> Alive {
        c.fetch_add(1, Ordering::SeqCst);
        Alive(c.clone())
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
