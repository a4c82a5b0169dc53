//! Exploring the schedules of one test (`weft test`,
//! docs/testing-programs.md): which choosers run it, in what order, when
//! exploration stops, and the failing schedule it reports. The test itself
//! is a closure that runs once under a given chooser (`Target`): here
//! nothing is known of the language. Files:
//!
//! | file          | what |
//! |---------------|------|
//! | `strategy.rs` | the sampling choosers: ordinary order, random walk, PCT, select enforcement |
//! | `dpor.rs`     | the bounded exhaustive search (source-DPOR with sleep sets, BPOR's bound) and the signature of an interleaving |
//! | `token.rs`    | replay tokens: `Recorder`, `Replayer`, the text form |
//!
//! The portfolio (the default): schedule 0 runs in the engine's ordinary
//! order; the others take turns, in this order: random walk, PCT of depth
//! 1, 2 and 3, select enforcement (so each of the five gets a fifth of the
//! rest). PCT's step count is the most steps any earlier schedule took.
//! `Plan::only` runs one strategy for every schedule instead.
//! Exploration stops at the first failing schedule; then, if it preempted,
//! the explorer looks for the same failure (same message and places) with
//! fewer preemptions (`minimize`: a small bounded exhaustive search, then
//! up to `MINIMIZE_SAMPLES` more schedules of the plan), and the failing
//! schedule with the fewest preemptions found is the one reported; the
//! index reported is still the first failing schedule's.

pub mod dpor;
pub mod strategy;
pub mod token;

use std::cell::RefCell;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use crate::choice::{Chooser, PickKind, SchedPoint};
use crate::control::{ControlEnd, ControlRun};

pub use dpor::{signature, Dpor, RunKind};
pub use strategy::{mix, Ordinary, Pct, RandomWalk, SelectEnforce};
pub use token::{BadToken, Divergence, Recorder, Replayer, Token};

/// The most runs spent looking for a failure with fewer preemptions ...
pub const MINIMIZE_RUNS: u64 = 100;
/// ... and the most steps those runs may take in all ...
pub const MINIMIZE_STEPS: u64 = 200_000;
/// ... and the longest failing run this search starts from.
pub const MINIMIZE_MAX_STEPS: u64 = 2_000;
/// Further schedules of the plan run after a failure, looking for the
/// same failure with fewer preemptions.
pub const MINIMIZE_SAMPLES: u64 = 20;

/// One run of the test under a chooser.
pub type Target<'a> = dyn FnMut(Rc<RefCell<dyn Chooser>>) -> ControlRun + 'a;

/// How to explore a test.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Schedules to run (sampling), or runs the exhaustive search may take.
    pub schedules: u64,
    /// The seed every schedule's choices derive from.
    pub seed: u64,
    /// `Some(P)`: search every interleaving with at most P preemptions.
    pub exhaustive: Option<u32>,
    /// Sample with this strategy only instead of the portfolio.
    pub only: Option<Strategy>,
}

/// The strategies of the portfolio after schedule 0, in turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    Ordinary,
    RandomWalk,
    Pct(u32),
    SelectEnforce,
}

/// The turn of the portfolio's strategies.
pub const PORTFOLIO: [Strategy; 5] = [
    Strategy::RandomWalk,
    Strategy::Pct(1),
    Strategy::Pct(2),
    Strategy::Pct(3),
    Strategy::SelectEnforce,
];

/// PCT's step estimate before any run of the test was seen (only when
/// PCT alone is asked for: the portfolio runs schedule 0 first).
pub const PCT_FIRST_STEPS: u64 = 50;

impl Strategy {
    /// The strategy a name of `weft test --strategy` names: `ordinary`,
    /// `random`, `pct1`, `pct2`, `pct3` (`pctN` for any depth N from 1),
    /// `select`.
    pub fn from_name(name: &str) -> Option<Strategy> {
        match name {
            "ordinary" => Some(Strategy::Ordinary),
            "random" => Some(Strategy::RandomWalk),
            "select" => Some(Strategy::SelectEnforce),
            _ => {
                let d: u32 = name.strip_prefix("pct")?.parse().ok()?;
                (d >= 1).then_some(Strategy::Pct(d))
            }
        }
    }

    /// The strategy of schedule `i` (from 0) of the portfolio.
    pub fn of_schedule(i: u64) -> Strategy {
        if i == 0 {
            Strategy::Ordinary
        } else {
            PORTFOLIO[((i - 1) % PORTFOLIO.len() as u64) as usize]
        }
    }

    /// A chooser of this strategy for the schedule seeded `seed`; `steps`:
    /// the estimated steps of a run (PCT).
    pub fn chooser(self, seed: u64, steps: u64) -> Box<dyn Chooser> {
        match self {
            Strategy::Ordinary => Box::new(Ordinary::new(seed)),
            Strategy::RandomWalk => Box::new(RandomWalk::new(seed)),
            Strategy::Pct(d) => Box::new(Pct::new(seed, d, steps)),
            Strategy::SelectEnforce => Box::new(SelectEnforce::new(seed)),
        }
    }
}

/// A failing schedule.
#[derive(Clone, Debug)]
pub struct Found {
    /// Which schedule (from 1) first failed; for an exhaustive search,
    /// which interleaving.
    pub index: u64,
    /// The schedules planned.
    pub of: u64,
    /// Found by the exhaustive search.
    pub exhaustive: bool,
    /// The reported schedule (the one with the fewest preemptions found).
    pub token: Token,
    pub preemptions: u32,
    pub end: ControlEnd,
}

/// The result of exploring a test.
#[derive(Clone, Debug)]
pub enum Verdict {
    /// Every schedule passed.
    Passed {
        schedules: u64,
    },
    /// The exhaustive search covered every interleaving within the bound.
    Verified {
        interleavings: u64,
        bound: u32,
    },
    Failed(Box<Found>),
}

/// What exploring a test did.
#[derive(Clone, Debug)]
pub struct Exploration {
    pub verdict: Verdict,
    /// The exhaustive search gave up (after this many runs) and sampled.
    pub fell_back: Option<u64>,
    /// Runs made in all.
    pub runs: u64,
}

/// Whether a run failed.
pub fn failed(end: &ControlEnd) -> bool {
    !matches!(end, ControlEnd::Passed | ControlEnd::Stopped)
}

/// What makes two failures the same: the kind, messages and places
/// (task numbers aside).
pub fn failure_key(end: &ControlEnd) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    match end {
        ControlEnd::Passed | ControlEnd::Stopped => 0u8.hash(&mut h),
        ControlEnd::Panic { msg, loc, .. } => (1u8, msg, loc).hash(&mut h),
        ControlEnd::Exit { code, .. } => (2u8, code).hash(&mut h),
        ControlEnd::Deadlock(b) => {
            let mut v: Vec<_> = b.iter().map(|b| (b.kind, b.loc.clone())).collect();
            v.sort_by_key(|(k, l)| (format!("{k}"), l.to_string()));
            (3u8, v).hash(&mut h);
        }
        ControlEnd::Leaked(l) => {
            let mut v: Vec<_> = l.iter().map(|l| (l.kind, l.loc.clone())).collect();
            v.sort_by_key(|(k, l)| (format!("{k:?}"), l.to_string()));
            (4u8, v).hash(&mut h);
        }
    }
    h.finish()
}

/// Explores a test as `plan` says.
pub fn explore(target: &mut Target<'_>, plan: &Plan) -> Exploration {
    match plan.exhaustive {
        None => sample(target, plan, 0),
        Some(bound) => exhaustive(target, plan, bound),
    }
}

/// Runs schedule `i` of the portfolio (or of `plan.only`); `steps`: the
/// most steps a schedule took so far (PCT's estimate), updated. Returns the
/// run and its token.
fn schedule(target: &mut Target<'_>, plan: &Plan, i: u64, steps: &mut u64) -> (ControlRun, Token) {
    let strategy = plan.only.unwrap_or_else(|| Strategy::of_schedule(i));
    let estimate = if *steps == 0 { PCT_FIRST_STEPS } else { *steps };
    let chooser = strategy.chooser(mix(plan.seed, i), estimate);
    let rec = Rc::new(RefCell::new(Recorder::new(chooser)));
    let run = target(rec.clone());
    *steps = (*steps).max(run.log.len() as u64);
    let token = rec.borrow().token();
    (run, token)
}

/// The portfolio over `plan.schedules` schedules; `runs` made before.
fn sample(target: &mut Target<'_>, plan: &Plan, runs: u64) -> Exploration {
    let mut steps = 0u64;
    for i in 0..plan.schedules {
        let (run, token) = schedule(target, plan, i, &mut steps);
        if failed(&run.end) {
            let found = Found {
                index: i + 1,
                of: plan.schedules,
                exhaustive: false,
                token,
                preemptions: run.preemptions,
                end: run.end,
            };
            let mut next = i + 1;
            let last = plan.schedules.min(i + 1 + MINIMIZE_SAMPLES);
            let more = |t: &mut Target<'_>| -> Option<(Found, u64)> {
                while next < last {
                    let (run, token) = schedule(t, plan, next, &mut steps);
                    next += 1;
                    if failed(&run.end) {
                        let f = Found {
                            index: next,
                            of: plan.schedules,
                            exhaustive: false,
                            token,
                            preemptions: run.preemptions,
                            end: run.end,
                        };
                        return Some((f, 1));
                    }
                }
                None
            };
            let (found, extra) = minimize(target, found, plan.seed, run.log.len() as u64, more);
            return Exploration {
                verdict: Verdict::Failed(Box::new(found)),
                fell_back: None,
                runs: runs + i + 1 + extra,
            };
        }
    }
    Exploration {
        verdict: Verdict::Passed {
            schedules: plan.schedules,
        },
        fell_back: None,
        runs: runs + plan.schedules,
    }
}

/// The bounded exhaustive search, falling back to sampling past the
/// budget.
fn exhaustive(target: &mut Target<'_>, plan: &Plan, bound: u32) -> Exploration {
    let dpor = Rc::new(RefCell::new(Dpor::new(bound, plan.seed)));
    let mut seen: HashSet<u64> = HashSet::new();
    let mut runs = 0u64;
    while !dpor.borrow().is_done() {
        if runs >= plan.schedules || dpor.borrow().is_broken() {
            let mut e = sample(target, plan, runs);
            e.fell_back = Some(runs);
            return e;
        }
        dpor.borrow_mut().start_run();
        let rec = Rc::new(RefCell::new(Recorder::new(Shared(dpor.clone()))));
        let run = target(rec.clone());
        runs += 1;
        let kind = dpor.borrow_mut().finish_run(&run);
        if failed(&run.end) {
            let found = Found {
                index: runs,
                of: plan.schedules,
                exhaustive: true,
                token: rec.borrow().token(),
                preemptions: run.preemptions,
                end: run.end,
            };
            let steps = run.log.len() as u64;
            let (found, extra) = minimize(target, found, plan.seed, steps, |_| None);
            return Exploration {
                verdict: Verdict::Failed(Box::new(found)),
                fell_back: None,
                runs: runs + extra,
            };
        }
        if kind == RunKind::Complete && run.end == ControlEnd::Passed {
            seen.insert(signature(&run.log));
        }
    }
    if dpor.borrow().is_broken() {
        let mut e = sample(target, plan, runs);
        e.fell_back = Some(runs);
        return e;
    }
    Exploration {
        verdict: Verdict::Verified {
            interleavings: seen.len() as u64,
            bound,
        },
        fell_back: None,
        runs,
    }
}

/// Looks for the failure of `found` with fewer preemptions. First, when
/// the failing run was short (at most `MINIMIZE_MAX_STEPS` steps), a bounded
/// exhaustive search with bound 0, 1, ... below `found.preemptions`, each
/// bound with an equal share of `MINIMIZE_RUNS` runs and `MINIMIZE_STEPS`
/// steps (the search goes depth first, so in a long run it would spend its
/// budget on the run's last decisions). Then `more` further schedules of
/// the plan (`sample_more`), whose failures count too. Returns the failing
/// schedule with the fewest preemptions and the runs spent.
pub fn minimize(
    target: &mut Target<'_>,
    found: Found,
    seed: u64,
    steps_of_found: u64,
    mut more: impl FnMut(&mut Target<'_>) -> Option<(Found, u64)>,
) -> (Found, u64) {
    let key = failure_key(&found.end);
    let mut runs = 0u64;
    let mut best = found;
    if steps_of_found <= MINIMIZE_MAX_STEPS {
        let share = u64::from(best.preemptions.max(1));
        'bounds: for bound in 0..best.preemptions {
            let dpor = Rc::new(RefCell::new(Dpor::new(bound, seed)));
            let (mut n, mut steps) = (0u64, 0u64);
            while !dpor.borrow().is_done() && !dpor.borrow().is_broken() {
                if n >= MINIMIZE_RUNS / share || steps >= MINIMIZE_STEPS / share {
                    break;
                }
                dpor.borrow_mut().start_run();
                let rec = Rc::new(RefCell::new(Recorder::new(Shared(dpor.clone()))));
                let run = target(rec.clone());
                n += 1;
                steps += run.log.len() as u64;
                dpor.borrow_mut().finish_run(&run);
                if failed(&run.end)
                    && failure_key(&run.end) == key
                    && run.preemptions < best.preemptions
                {
                    best = Found {
                        token: rec.borrow().token(),
                        preemptions: run.preemptions,
                        end: run.end,
                        ..best
                    };
                    runs += n;
                    break 'bounds;
                }
            }
            runs += n;
        }
    }
    while best.preemptions > 0 {
        let Some((f, n)) = more(target) else { break };
        runs += n;
        if failure_key(&f.end) == key && f.preemptions < best.preemptions {
            best = Found {
                token: f.token,
                preemptions: f.preemptions,
                end: f.end,
                ..best
            };
        }
    }
    (best, runs)
}

/// Runs the one schedule `token` names; the run, and whether it followed
/// the token.
pub fn replay(target: &mut Target<'_>, token: &Token) -> (ControlRun, Result<(), Divergence>) {
    let rep = Rc::new(RefCell::new(Replayer::new(token.clone())));
    let run = target(rep.clone());
    let ok = rep.borrow().finish();
    (run, ok)
}

/// A chooser shared between runs (the DPOR search lives across them).
struct Shared<C>(Rc<RefCell<C>>);

impl<C: Chooser> Chooser for Shared<C> {
    fn pick_task(&mut self, p: &SchedPoint<'_>) -> Option<usize> {
        self.0.borrow_mut().pick_task(p)
    }
    fn pick(&mut self, what: PickKind, n: usize) -> usize {
        self.0.borrow_mut().pick(what, n)
    }
    fn word(&mut self) -> u64 {
        self.0.borrow_mut().word()
    }
    fn prefer_case(&mut self, n: usize) -> Option<usize> {
        self.0.borrow_mut().prefer_case(n)
    }
}
