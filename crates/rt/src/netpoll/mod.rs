//! The poller: one `mio::Poll` (epoll on Linux) plus the timer heap. When no
//! task is runnable, one parked worker blocks here in `epoll_wait` with the
//! next timer's deadline as timeout; other threads interrupt it through a
//! `mio::Waker` (an eventfd). Modelled on tokio's I/O and time drivers,
//! reduced to what Weft needs: timers and readiness of a few sources.
//!
//! Invariants:
//! - At most one thread waits in the poller (the `poll` lock is taken with
//!   `try_lock`; a worker that fails to get it parks on its condition variable).
//! - A wake sent before the waiter reaches `epoll_wait` is not lost: the
//!   eventfd stays readable until the next wait returns.
//! - Adding a timer earlier than the deadline the waiter is sleeping towards
//!   wakes the waiter (Dekker-style: the adder publishes the deadline, then
//!   reads `sleeping_until`; the waiter publishes `sleeping_until`, then
//!   reads the deadline; with SeqCst one of them sees the other).
//!
//! Files: `mod.rs` (the `Driver`: the poll lock, waits and wakes),
//! `timer.rs` (the timer heap), `io.rs` (I/O sources and their readiness).

pub mod io;
pub mod timer;

use std::io as stdio;
use std::time::{Duration, Instant};

use mio::{Events, Poll, Token, Waker};

use crate::loom::{AtomicU64, Mutex, Ordering};
pub use io::{IoRegistry, IoSource};
pub use timer::{TimerAction, TimerHandle, Timers, NO_DEADLINE};

const WAKER_TOKEN: Token = Token(usize::MAX);
/// How late another worker's timers may be before a busy worker fires
/// them (ns): far more than a busy owner takes to reach its next check.
pub const OVERDUE: u64 = 500_000;
/// `sleeping_until` when no thread waits in the poller.
const NOT_SLEEPING: u64 = 0;

/// The poller and timers of one run.
pub struct Driver {
    start: Instant,
    /// The virtual clock of a controlled run (`control.rs`); `None`: the
    /// real one.
    virt: Option<VirtualClock>,
    poll: Mutex<PollState>,
    waker: Waker,
    /// Deadline (ns) the waiter sleeps towards; `NO_DEADLINE` for "forever",
    /// `NOT_SLEEPING` when no thread is in `epoll_wait`.
    sleeping_until: AtomicU64,
    pub timers: Timers,
    pub io: std::sync::Arc<IoRegistry>,
}

/// A controlled run's clock: the program's time (`time`) and the steps
/// taken (`ticks`, for the trace clock).
struct VirtualClock {
    time: AtomicU64,
    ticks: AtomicU64,
}

struct PollState {
    poll: Poll,
    events: Events,
}

impl Driver {
    /// Opens an epoll instance and its waker; one timer shard.
    #[cfg(test)]
    pub fn new() -> stdio::Result<Driver> {
        Driver::with_clock(None, 1)
    }

    /// A driver for `workers` workers: a timer shard each.
    pub fn with_workers(workers: usize) -> stdio::Result<Driver> {
        Driver::with_clock(None, workers)
    }

    /// A driver whose clock is virtual (a controlled run): it stands still
    /// until `advance_to` moves it to a timer's deadline.
    pub fn new_virtual() -> stdio::Result<Driver> {
        Driver::with_clock(
            Some(VirtualClock {
                time: AtomicU64::new(0),
                ticks: AtomicU64::new(0),
            }),
            1,
        )
    }

    fn with_clock(virt: Option<VirtualClock>, shards: usize) -> stdio::Result<Driver> {
        let poll = Poll::new()?;
        let waker = Waker::new(poll.registry(), WAKER_TOKEN)?;
        let io = std::sync::Arc::new(IoRegistry::new(poll.registry().try_clone()?));
        Ok(Driver {
            start: Instant::now(),
            virt,
            poll: Mutex::new(PollState {
                poll,
                events: Events::with_capacity(256),
            }),
            waker,
            sleeping_until: AtomicU64::new(NOT_SLEEPING),
            timers: Timers::sharded(shards),
            io,
        })
    }

    /// Nanoseconds since the driver was created: the clock of the trace.
    /// With a virtual clock, its time plus one microsecond per step the
    /// controlled run took (`tick`), so that a trace's spans have lengths.
    pub fn now(&self) -> u64 {
        match &self.virt {
            None => self.real_now(),
            Some(v) => v
                .time
                .load(Ordering::Relaxed)
                .saturating_add(v.ticks.load(Ordering::Relaxed).saturating_mul(1000)),
        }
    }

    /// The program's clock (timers, `now()`), in nanoseconds: the real one,
    /// or a virtual clock that moves only in `advance_to`.
    pub fn time(&self) -> u64 {
        match &self.virt {
            None => self.real_now(),
            Some(v) => v.time.load(Ordering::Relaxed),
        }
    }

    fn real_now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX - 1)
    }

    /// Moves a virtual clock forward to `t` (never back); nothing for the
    /// real clock.
    pub fn advance_to(&self, t: u64) {
        if let Some(v) = &self.virt {
            v.time.fetch_max(t, Ordering::Relaxed);
        }
    }

    /// Counts one step of a controlled run on the trace clock (`now`).
    pub fn tick(&self) {
        if let Some(v) = &self.virt {
            v.ticks.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The run's clock at instant `t` (0 for an instant before the start).
    pub fn at(&self, t: Instant) -> u64 {
        let since = t.saturating_duration_since(self.start);
        u64::try_from(since.as_nanos()).unwrap_or(u64::MAX - 1)
    }

    /// Adds a timer `after` from now to shard 0; wakes the poller's waiter
    /// if needed.
    #[cfg(test)]
    pub fn add_timer(&self, after: Duration, action: TimerAction) -> TimerHandle {
        self.add_timer_in(0, after, action)
    }

    /// Adds a timer `after` from now to the shard of worker `shard`; wakes
    /// the poller's waiter if needed.
    pub fn add_timer_in(&self, shard: usize, after: Duration, action: TimerAction) -> TimerHandle {
        let after = u64::try_from(after.as_nanos()).unwrap_or(u64::MAX / 2);
        let deadline = self.time().saturating_add(after).min(NO_DEADLINE - 1);
        let (handle, earliest) = self.timers.add_in(shard, deadline, action);
        if earliest {
            let sleeping = self.sleeping_until.load(Ordering::SeqCst);
            if sleeping != NOT_SLEEPING && deadline < sleeping {
                self.unpark();
            }
        }
        handle
    }

    /// Fires due timers of every shard. Cheap (an atomic load a shard)
    /// when none is queued.
    pub fn fire_timers(&self) -> usize {
        self.fire_timers_from(0)
    }

    /// Fires due timers of every shard, worker `first`'s shard first: what
    /// an idle worker does.
    pub fn fire_timers_from(&self, first: usize) -> usize {
        if self.timers.next_deadline() == NO_DEADLINE {
            return 0;
        }
        self.timers.fire_expired_from(first, self.time())
    }

    /// Fires the due timers of worker `shard`'s own shard, and those of
    /// other shards that are [`OVERDUE`] late: what a busy worker does now
    /// and then. The owner of a shard fires it well within the grace while
    /// it runs; one that sleeps on its condition variable, while another
    /// worker that never parks holds no poller, fires nothing.
    pub fn fire_own_timers(&self, shard: usize) -> usize {
        if self.timers.next_deadline() == NO_DEADLINE {
            return 0;
        }
        let now = self.time();
        self.timers.fire_expired_in(shard, now) + self.timers.fire_overdue(shard, now, OVERDUE)
    }

    /// Polls for I/O without blocking, if no other thread holds the poller
    /// and some source is registered. Busy workers call this now and then.
    pub fn poll_io_now(&self) {
        if self.io.registered() == 0 {
            return;
        }
        if let Some(mut st) = self.poll.try_lock() {
            let st = &mut *st;
            if st.poll.poll(&mut st.events, Some(Duration::ZERO)).is_ok() {
                self.io.dispatch(&st.events, WAKER_TOKEN);
            }
        }
    }

    /// Wakes the thread waiting in the poller, if any (or the next one).
    pub fn unpark(&self) {
        // An error here means the eventfd is gone, which only happens when
        // the driver is being dropped; nobody is waiting then.
        let _ = self.waker.wake();
    }

    /// Takes the poller if no other thread holds it, calls `enter`, and if
    /// that returns true blocks in `epoll_wait` until a wake, an I/O event or
    /// the next timer deadline; dispatches I/O readiness to wakers. Timers
    /// are not fired here (the caller fires them once it counts as running).
    /// Returns whether the poller was taken.
    pub fn try_park(&self, enter: &mut dyn FnMut() -> bool) -> bool {
        let Some(mut st) = self.poll.try_lock() else {
            return false;
        };
        if !enter() {
            return true;
        }
        let st = &mut *st;
        let mut deadline = self.timers.next_deadline();
        self.sleeping_until.store(deadline, Ordering::SeqCst);
        // Re-read after publishing (see the module invariants).
        deadline = deadline.min(self.timers.next_deadline());
        let timeout = (deadline != NO_DEADLINE).then(|| {
            // Round up to the next millisecond: epoll waits in whole ms.
            let ns = deadline.saturating_sub(self.time());
            Duration::from_nanos(ns.div_ceil(1_000_000) * 1_000_000)
        });
        let res = st.poll.poll(&mut st.events, timeout);
        self.sleeping_until.store(NOT_SLEEPING, Ordering::SeqCst);
        if res.is_ok() {
            self.io.dispatch(&st.events, WAKER_TOKEN);
        }
        true
    }

    /// Drops all timers without running them (end of a run).
    pub fn clear(&self) {
        self.timers.clear();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::loom::{AtomicBool, Ordering as O};
    use std::sync::Arc;

    #[test]
    fn park_returns_at_the_timer_deadline() {
        let d = Driver::new().unwrap();
        let fired = Arc::new(AtomicBool::new(false));
        let f = fired.clone();
        d.add_timer(
            Duration::from_millis(5),
            TimerAction::Call(Box::new(move || f.store(true, O::SeqCst))),
        );
        assert_eq!(d.timers.pending(), 1);
        while !fired.load(O::SeqCst) {
            assert!(d.try_park(&mut || true));
            d.fire_timers();
        }
        assert_eq!(d.timers.pending(), 0);
        assert!(d.now() >= 5_000_000);
    }

    #[test]
    fn unpark_before_park_is_not_lost() {
        let d = Driver::new().unwrap();
        d.unpark();
        // Would block forever (no timers) if the wake were lost.
        assert!(d.try_park(&mut || true));
    }

    #[test]
    fn unpark_from_another_thread_interrupts_the_wait() {
        let d = Arc::new(Driver::new().unwrap());
        let d2 = d.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(10));
            d2.unpark();
        });
        assert!(d.try_park(&mut || true));
        t.join().unwrap();
    }
}
