//! How the messaging thread waits when a pass over its work found nothing
//! to do (docs/distributed.md, "How it works"). MPI has no way to sleep
//! until a message arrives, so the thread polls; to keep latency low while
//! messages flow and cost next to no CPU while they do not, the wait grows
//! with the time since the last activity: yield the CPU between polls,
//! for the first [`YIELD_US`] while something is in flight (a request
//! waiting for its reply, a collective, a send) and the first
//! [`IDLE_YIELD_US`] while nothing is; then sleep, 20 µs at first,
//! doubling up to [`MAX_SLEEP_US`] while something is in flight and up to
//! [`IDLE_SLEEP_US`] while nothing is. A task that submits work unparks
//! the thread at once, so only messages from other processes wait for the
//! next poll.
//!
//! It never spins without yielding: a spinning thread keeps its core until
//! the scheduler preempts it, and where threads outnumber cores (every
//! process runs its tasks' threads and this one) that delays the very
//! thread the poll waits for, the other process's messaging thread or a
//! task here. A yield costs a system call when nobody else wants the core
//! and gives it away when somebody does. The yielding phase is long (2 ms)
//! while something is in flight because a busy machine deschedules a peer
//! for longer than a few hundred microseconds: with 30 µs of spinning then
//! yielding until 300 µs, an 8-byte all-reduce over 2 processes took 60 to
//! 300 µs on the loaded 2-core development VM, and about 10 µs with this
//! policy. Yielding for 300 µs rather than 2 ms while nothing is in flight
//! made no difference there; not yielding at all then (sleeping at once)
//! made the all-reduce 40 to 77 µs, since the next call's command then
//! finds the thread asleep.

/// Yield between polls until this long after the last activity
/// (microseconds) while something is in flight.
pub(crate) const YIELD_US: u64 = 2000;
/// Yield between polls until this long after the last activity while
/// nothing is in flight.
pub(crate) const IDLE_YIELD_US: u64 = 300;
/// The longest sleep between two polls while something is in flight.
pub(crate) const MAX_SLEEP_US: u64 = 200;
/// The longest sleep between two polls while nothing is.
pub(crate) const IDLE_SLEEP_US: u64 = 1000;
const FIRST_SLEEP_US: u64 = 20;

/// What to do before the next poll.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    Yield,
    /// Park for at most this many microseconds (a submission unparks).
    Sleep(u64),
}

/// The policy's state: when the thread was last busy, the last sleep; how
/// long it yields while something is in flight.
#[derive(Debug)]
pub(crate) struct Backoff {
    idle_since_us: Option<u64>,
    sleep_us: u64,
    yield_us: u64,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff {
            idle_since_us: None,
            sleep_us: 0,
            yield_us: YIELD_US,
        }
    }
}

/// More processes on this machine than cores: each process's threads then
/// take turns at the scheduler's time slices with the others', and a
/// thread that yields for long takes turns it has no use for from threads
/// that have work. `local` is the number of processes the launcher started
/// on this machine, where it says.
fn crowded(local: Option<usize>, cores: usize) -> bool {
    local.is_some_and(|n| n > cores)
}

impl Backoff {
    /// The policy for this process: where the launcher started more
    /// processes on this machine than it has cores (MPICH's Hydra:
    /// `MPI_LOCALNRANKS`; Open MPI: `OMPI_COMM_WORLD_LOCAL_SIZE`), it yields
    /// no longer while something is in flight than while nothing is
    /// (docs/distributed.md, "Speed": 4 processes on 2 cores).
    pub fn for_this_machine() -> Backoff {
        let local = ["MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE"]
            .iter()
            .find_map(|v| std::env::var(v).ok()?.trim().parse().ok());
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut b = Backoff::default();
        if crowded(local, cores) {
            b.yield_us = IDLE_YIELD_US;
        }
        b
    }

    /// The last pass did something.
    pub fn busy(&mut self) {
        self.idle_since_us = None;
        self.sleep_us = 0;
    }

    /// The last pass found nothing, at `now_us`; `in_flight` when the
    /// thread waits for something; `cap_us` bounds a sleep (a timer of the
    /// caller's own).
    pub fn next(&mut self, now_us: u64, in_flight: bool, cap_us: Option<u64>) -> Wait {
        let since = *self.idle_since_us.get_or_insert(now_us);
        let idle = now_us.saturating_sub(since);
        let yield_us = if in_flight {
            self.yield_us
        } else {
            IDLE_YIELD_US
        };
        if idle < yield_us {
            return Wait::Yield;
        }
        let max = if in_flight {
            MAX_SLEEP_US
        } else {
            IDLE_SLEEP_US
        };
        self.sleep_us = if self.sleep_us == 0 {
            FIRST_SLEEP_US
        } else {
            (self.sleep_us * 2).min(max)
        };
        Wait::Sleep(cap_us.map_or(self.sleep_us, |c| c.min(self.sleep_us)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crowded_when_processes_outnumber_cores() {
        assert!(!crowded(None, 2));
        assert!(!crowded(Some(2), 2));
        assert!(crowded(Some(4), 2));
        assert!(!crowded(Some(4), 16));
    }

    #[test]
    fn yields_then_sleeps_longer_up_to_the_cap() {
        let mut b = Backoff::default();
        assert_eq!(b.next(100, false, None), Wait::Yield);
        assert_eq!(b.next(100 + YIELD_US - 1, true, None), Wait::Yield);
        let mut t = 100 + YIELD_US;
        // Waiting for nothing, it sleeps from IDLE_YIELD_US on.
        let mut c = Backoff::default();
        assert_eq!(c.next(100, false, None), Wait::Yield);
        assert_eq!(c.next(100 + IDLE_YIELD_US, false, None), Wait::Sleep(20));
        let mut sleeps = Vec::new();
        for _ in 0..10 {
            if let Wait::Sleep(us) = b.next(t, false, None) {
                sleeps.push(us);
                t += us;
            }
        }
        assert_eq!(sleeps[..3], [20, 40, 80]);
        assert_eq!(sleeps.last(), Some(&IDLE_SLEEP_US));
        // Something in flight: shorter sleeps.
        assert_eq!(b.next(t, true, None), Wait::Sleep(MAX_SLEEP_US));
        assert_eq!(b.next(t, false, Some(5)), Wait::Sleep(5));
        b.busy();
        assert_eq!(b.next(t, false, None), Wait::Yield);
    }
}
