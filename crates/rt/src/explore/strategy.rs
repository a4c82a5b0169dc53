//! The sampling strategies (docs/testing-programs.md, "Strategies"): each
//! is a [`Chooser`] seeded per schedule, so the same seed explores the same
//! schedules.
//!
//! - [`Ordinary`]: the engine's ordinary order (the running task goes on
//!   until it blocks, then the task runnable longest); data choices from
//!   the seed.
//! - [`RandomWalk`]: every decision uniform at random.
//! - [`Pct`]: probabilistic concurrency testing (Burckhardt et al., ASPLOS
//!   2010): random task priorities, always the highest-priority runnable
//!   task, and `depth - 1` change points at random steps among the
//!   estimated `k`, where the running task drops below every other. A bug
//!   of depth `d` among `k` steps of `n` tasks is found with probability at
//!   least `1/(n·k^(d-1))` per schedule.
//! - [`SelectEnforce`]: GFuzz's order enforcement without timers: each
//!   `select` waits for a case chosen at random, and takes any other only
//!   when every task is blocked; scheduling in the ordinary order.

use std::collections::HashMap;

use crate::choice::{Chooser, PickKind, SchedPoint};

/// splitmix64: seeds of schedules and of their parts.
pub fn mix(seed: u64, n: u64) -> u64 {
    let mut z = seed ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The engine's ordinary order (schedule 0).
pub struct Ordinary {
    rng: fastrand::Rng,
}

impl Ordinary {
    pub fn new(seed: u64) -> Ordinary {
        Ordinary {
            rng: fastrand::Rng::with_seed(seed),
        }
    }
}

impl Chooser for Ordinary {
    fn pick_task(&mut self, p: &SchedPoint<'_>) -> Option<usize> {
        Some(p.default_choice())
    }
    fn pick(&mut self, _: PickKind, n: usize) -> usize {
        self.rng.usize(..n.max(1))
    }
    fn word(&mut self) -> u64 {
        self.rng.u64(..)
    }
}

/// A uniform random walk.
pub struct RandomWalk {
    rng: fastrand::Rng,
}

impl RandomWalk {
    pub fn new(seed: u64) -> RandomWalk {
        RandomWalk {
            rng: fastrand::Rng::with_seed(seed),
        }
    }
}

impl Chooser for RandomWalk {
    fn pick_task(&mut self, p: &SchedPoint<'_>) -> Option<usize> {
        Some(self.rng.usize(..p.ready.len().max(1)))
    }
    fn pick(&mut self, _: PickKind, n: usize) -> usize {
        self.rng.usize(..n.max(1))
    }
    fn word(&mut self) -> u64 {
        self.rng.u64(..)
    }
}

/// PCT with a given depth and an estimate of the steps of a run.
pub struct Pct {
    rng: fastrand::Rng,
    /// Priorities: higher runs first. New tasks get a random value above
    /// every change point's; a change point sets a value below all.
    prio: HashMap<u64, u64>,
    /// The decision numbers (from 1) at which the running task's priority
    /// drops, with the value it drops to (the i-th point gives `i`).
    changes: Vec<(u64, u64)>,
    decisions: u64,
}

impl Pct {
    /// PCT of `depth >= 1` for runs of about `steps` decisions.
    pub fn new(seed: u64, depth: u32, steps: u64) -> Pct {
        let mut rng = fastrand::Rng::with_seed(seed);
        let k = steps.max(1);
        let changes = (1..depth.max(1))
            .map(|i| (rng.u64(1..=k), u64::from(i)))
            .collect();
        Pct {
            rng,
            prio: HashMap::new(),
            changes,
            decisions: 0,
        }
    }

    fn priority(&mut self, task: u64) -> u64 {
        // Initial priorities are above 2^32: above every change point's.
        let rng = &mut self.rng;
        *self
            .prio
            .entry(task)
            .or_insert_with(|| (1 << 32) + rng.u64(..1 << 40))
    }

    fn highest(&mut self, p: &SchedPoint<'_>) -> usize {
        let mut best = 0;
        let mut best_p = 0;
        for (i, r) in p.ready.iter().enumerate() {
            let pr = self.priority(r.task);
            if i == 0 || pr > best_p {
                best = i;
                best_p = pr;
            }
        }
        best
    }
}

impl Chooser for Pct {
    fn pick_task(&mut self, p: &SchedPoint<'_>) -> Option<usize> {
        self.decisions += 1;
        let mut i = self.highest(p);
        let d = self.decisions;
        let drops: Vec<u64> = self
            .changes
            .iter()
            .filter(|(at, _)| *at == d)
            .map(|(_, v)| *v)
            .collect();
        for v in drops {
            if let Some(r) = p.ready.get(i) {
                self.prio.insert(r.task, v);
            }
            i = self.highest(p);
        }
        Some(i)
    }
    fn pick(&mut self, _: PickKind, n: usize) -> usize {
        self.rng.usize(..n.max(1))
    }
    fn word(&mut self) -> u64 {
        self.rng.u64(..)
    }
}

/// Select-case enforcement (GFuzz's idea) over the ordinary order: a
/// preferred case drawn for every `select` of more than one case.
pub struct SelectEnforce(Ordinary);

impl SelectEnforce {
    pub fn new(seed: u64) -> SelectEnforce {
        SelectEnforce(Ordinary::new(seed))
    }
}

impl Chooser for SelectEnforce {
    fn pick_task(&mut self, p: &SchedPoint<'_>) -> Option<usize> {
        self.0.pick_task(p)
    }
    fn pick(&mut self, what: PickKind, n: usize) -> usize {
        self.0.pick(what, n)
    }
    fn word(&mut self) -> u64 {
        self.0.word()
    }
    fn prefer_case(&mut self, n: usize) -> Option<usize> {
        (n > 1).then(|| self.0.rng.usize(..n))
    }
}
