//! Bounded exhaustive exploration (`weft test --exhaustive`,
//! docs/testing-programs.md): stateless dynamic partial-order reduction
//! over the dependency "touches the same channel (or the output)", with
//! source sets and sleep sets (Abdulla et al., "Optimal dynamic partial
//! order reduction", POPL 2014: the source-DPOR algorithm), and a bound on
//! preemptions counted as CHESS counts them, made sound with BPOR's
//! conservative backtracking (Coons, Musuvathi, McKinley, OOPSLA 2013).
//!
//! One run follows the stack of decisions of the previous run up to the
//! point to backtrack (`prefix`), then decides anew: a task whose step only
//! computes (`OpKind::is_visible` false) runs at once, without a branch
//! (such steps commute with everything); otherwise the task that ran last
//! goes on if it may, else the lowest-numbered task that is not asleep.
//! After the run, vector clocks over its steps give the races: a step and
//! the last earlier step of another task on one of its objects that is not
//! ordered before it otherwise. For each race the reversal's initials
//! (tasks whose first step in the part not ordered after the first step
//! depends on nothing else there) must meet the backtrack set of the
//! decision before the first step; if they do not, one is added there, and
//! also at the start of the first step's task's run of steps (BPOR's
//! conservative point: a switch there may cost one preemption fewer).
//! Choices of `select` cases are branches of their own (every ready case
//! is tried); `rand` and `perm` come from the seed.
//!
//! Bound: a choice that would exceed `bound` preemptions is not taken,
//! and the subtree it belongs to is marked incomplete; a task enters the
//! sleep set of later siblings only after a complete subtree (a sleep set
//! built from a pruned subtree could hide a bounded interleaving).
//!
//! Counting: two runs are equivalent when every object sees the same steps
//! (task, how many steps the task took before, data choices) in the same
//! order, where tasks are named by how they were started (parent and the
//! parent's step), not by number. `signature` hashes that; the explorer
//! counts distinct signatures of complete runs, so the count is exact
//! whatever redundancy the search has.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};

use crate::choice::{Chooser, Op, OpKind, PickKind, SchedPoint, StepRec};
use crate::control::{ControlEnd, ControlRun};

use super::strategy::mix;

/// The most vector clock entries (steps x tasks) a run's analysis makes.
const MAX_CLOCK_CELLS: usize = 50_000_000;

/// A decision of the stack.
#[derive(Clone, Debug)]
enum Node {
    Sched(Sched),
    /// A data choice among `n` (a `select`'s ready cases).
    Data {
        n: usize,
        chosen: usize,
    },
}

/// A scheduling decision with more than one candidate.
#[derive(Clone, Debug)]
struct Sched {
    /// The ready tasks and their operations (all visible).
    enabled: Vec<(u64, Op)>,
    /// The task a switch away from preempts, if any.
    preemptible: Option<u64>,
    /// Preemptions before this decision.
    preemptions: u32,
    chosen: u64,
    /// Tasks to explore here; those explored.
    backtrack: Vec<u64>,
    explored: Vec<u64>,
    /// Explored with a complete subtree (may sleep in later siblings).
    complete: Vec<u64>,
    /// The sleep set on entry: tasks and their pending operations.
    sleep: Vec<(u64, Op)>,
    /// A choice in the current subtree was cut by the bound.
    pruned: bool,
    /// `SchedPoint::quiescences` at this decision.
    quiescences: u64,
}

impl Sched {
    fn preempts(&self, task: u64) -> bool {
        self.preemptible.is_some_and(|p| p != task)
    }

    fn op_of(&self, task: u64) -> Option<&Op> {
        self.enabled
            .iter()
            .find(|(t, _)| *t == task)
            .map(|(_, o)| o)
    }

    fn asleep(&self, task: u64) -> bool {
        self.sleep.iter().any(|(t, _)| *t == task)
    }
}

/// How the last run ended, for the explorer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunKind {
    /// It ran to its end.
    Complete,
    /// It stopped: every candidate was asleep (a redundant run).
    SleepBlocked,
    /// It stopped: the bound left no candidate.
    Pruned,
}

/// The DPOR chooser; one instance explores one test.
pub struct Dpor {
    bound: u32,
    seed: u64,
    nodes: Vec<Node>,
    /// Position in `nodes` during a run.
    pos: usize,
    /// The stack's length when the run started (decisions replayed).
    prefix: usize,
    /// For each scheduling decision of this run (in order), its node.
    sched_nodes: Vec<usize>,
    /// Scheduling decisions of this run so far (eager ones included), and
    /// for each the node it made (if any).
    picks: Vec<Option<usize>>,
    rand_picks: u64,
    stopped: Option<RunKind>,
    done: bool,
    /// A node's state was inconsistent with the run (should not happen:
    /// runs are deterministic); the search ends unverified.
    broken: bool,
}

impl Dpor {
    /// A search bounded by `bound` preemptions; `seed` gives `rand`/`perm`.
    pub fn new(bound: u32, seed: u64) -> Dpor {
        Dpor {
            bound,
            seed,
            nodes: Vec::new(),
            pos: 0,
            prefix: 0,
            sched_nodes: Vec::new(),
            picks: Vec::new(),
            rand_picks: 0,
            stopped: None,
            done: false,
            broken: false,
        }
    }

    /// Whether every choice was explored.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Whether the search lost track of a run (a bug, or a program whose
    /// runs are not a function of their decisions): not verified then.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// The decision stack in short, one decision a line (for debugging a
    /// search): `chosen` `[backtrack]` `explored` `complete` `sleep` and
    /// `!` when the subtree was cut by the bound.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        for (i, n) in self.nodes.iter().enumerate() {
            match n {
                Node::Sched(x) => {
                    let sleep: Vec<u64> = x.sleep.iter().map(|(t, _)| *t).collect();
                    s.push_str(&format!(
                        "{i}: task {} bt {:?} ex {:?} ok {:?} zz {:?} pre {}{}{}\n",
                        x.chosen,
                        x.backtrack,
                        x.explored,
                        x.complete,
                        sleep,
                        x.preemptions,
                        if x.pruned { " !" } else { "" },
                        x.preemptible
                            .map(|p| format!(" (switch preempts {p})"))
                            .unwrap_or_default()
                    ));
                }
                Node::Data { n, chosen } => s.push_str(&format!("{i}: case {chosen} of {n}\n")),
            }
        }
        s
    }

    /// Prepares the next run (call before each).
    pub fn start_run(&mut self) {
        self.pos = 0;
        self.prefix = self.nodes.len();
        self.sched_nodes.clear();
        self.picks.clear();
        self.rand_picks = 0;
        self.stopped = None;
    }

    /// Marks every node up to `upto` (exclusive) as having a pruned subtree.
    fn mark_pruned(&mut self, upto: usize) {
        for n in self.nodes[..upto].iter_mut() {
            if let Node::Sched(s) = n {
                s.pruned = true;
            }
        }
    }

    /// The sleep set of a new node after the last scheduling node
    /// (empty after a quiescence: the run's own step conflicts with all).
    fn inherited_sleep(&self, quiescences: u64) -> Vec<(u64, Op)> {
        let Some(Node::Sched(parent)) = self
            .nodes
            .iter()
            .rev()
            .find(|n| matches!(n, Node::Sched(_)))
        else {
            return Vec::new();
        };
        if parent.quiescences != quiescences {
            return Vec::new();
        }
        let Some(op) = parent.op_of(parent.chosen) else {
            return Vec::new();
        };
        let mut out: Vec<(u64, Op)> = Vec::new();
        let from_done = parent
            .complete
            .iter()
            .filter(|t| **t != parent.chosen)
            .filter_map(|t| parent.op_of(*t).map(|o| (*t, o.clone())));
        for (t, o) in parent.sleep.iter().cloned().chain(from_done) {
            if t != parent.chosen && !o.conflicts(op) && !out.iter().any(|(u, _)| *u == t) {
                out.push((t, o));
            }
        }
        out
    }

    /// After a run: finds its races, adds backtrack points, and moves to
    /// the next branch. Returns how the run ended.
    ///
    /// The steps the run's still-runnable tasks would have taken next
    /// (`ControlRun::pending`: the run stopped, or a task panicked) count
    /// as steps at the end for the race analysis (classic DPOR looks at
    /// every task's next step). A panic (or `exit`) ends every task, so it
    /// conflicts with each of those steps: each such task is tried before it.
    pub fn finish_run(&mut self, run: &ControlRun) -> RunKind {
        let kind = self.stopped.unwrap_or(RunKind::Complete);
        if self.pos < self.prefix {
            // The run ended before the replayed prefix did: not a function
            // of its decisions. Give up on completeness.
            self.broken = true;
        }
        let mut log = run.log.clone();
        let real = log.len();
        for r in &run.pending {
            log.push(StepRec::new(r.task, r.op.clone()));
        }
        // A panic (or `exit`) ends every task: it conflicts with the step
        // each still-runnable task would have taken.
        let mut forced = Vec::new();
        if matches!(run.end, ControlEnd::Panic { .. } | ControlEnd::Exit { .. }) {
            // The last decided step: the panic's own, or (a panic in a
            // step that only resumed a woken task) the one before.
            let mut decided = 0;
            let mut last = None;
            for (k, r) in log[..real].iter().enumerate() {
                if r.task == 0 {
                    continue;
                }
                if self.picks.get(decided).copied().flatten().is_some() {
                    last = Some(k);
                }
                decided += 1;
            }
            if let Some(last) = last {
                for j in real..log.len() {
                    if log[j].task != log[last].task {
                        forced.push((last, j));
                    }
                }
            }
        }
        self.add_races(&log, real, &forced);
        self.backtrack();
        kind
    }

    /// Adds the backtrack points of the races of `log` (its first `real`
    /// steps ran; the rest are pending steps), and of the pairs `forced`.
    fn add_races(&mut self, log: &[StepRec], real: usize, forced: &[(usize, usize)]) {
        // The node of each step (steps of task 0 and eager steps have none).
        let mut node_of: Vec<Option<usize>> = Vec::with_capacity(log.len());
        let mut k = 0;
        for (x, r) in log.iter().enumerate() {
            if r.task == 0 || x >= real {
                node_of.push(None);
            } else {
                node_of.push(self.picks.get(k).copied().flatten());
                k += 1;
            }
        }
        // Vector clocks cost steps x tasks: past this the race analysis is
        // skipped and the search is not complete (never the case for the
        // small programs an exhaustive search can cover anyway).
        let tasks = log.iter().map(|r| r.task).max().unwrap_or(0) as usize + 1;
        if log.len().saturating_mul(tasks) > MAX_CLOCK_CELLS {
            self.broken = true;
            return;
        }
        let hb = HappensBefore::new(log);
        let mut races = hb.races(log);
        for p in forced {
            if !races.contains(p) {
                races.push(*p);
            }
        }
        for (i, j) in races {
            let Some(ni) = node_of[i] else { continue };
            let initials = hb.initials(log, i, j);
            self.add_backtrack(ni, &initials, log[j].task);
            // BPOR's conservative points: where task(i)'s run of steps
            // began, and the latest decision within that run where a switch
            // away from it is free (after it yielded).
            let ti = log[i].task;
            let mut start = ni;
            let mut free: Option<usize> = None;
            let mut m = i;
            while m > 0 {
                m -= 1;
                let r = &log[m];
                if r.task == 0 {
                    break;
                }
                if r.task != ti {
                    if r.op.kind.is_visible() {
                        break;
                    }
                    continue;
                }
                if let Some(n) = node_of[m] {
                    start = n;
                    let switch_free = match &self.nodes[n] {
                        Node::Sched(s) => s.preemptible != Some(ti),
                        Node::Data { .. } => false,
                    };
                    if free.is_none() && switch_free && n != ni {
                        free = Some(n);
                    }
                }
            }
            if let Some(f) = free {
                self.add_backtrack(f, &initials, log[j].task);
            }
            if start != ni {
                self.add_backtrack(start, &initials, log[j].task);
            }
        }
    }

    /// Adds backtrack points at node `n` for a race whose later step is
    /// `prefer`'s: `prefer` itself when it is enabled and awake there
    /// (classic DPOR's choice, which BPOR's bound argument needs), and,
    /// unless an awake task of `initials` is already in the backtrack set,
    /// the first awake one (source-DPOR's; it matters when `prefer` sleeps).
    /// When no initial is enabled there (the clocks missed a cause), every
    /// awake enabled task.
    fn add_backtrack(&mut self, n: usize, initials: &[u64], prefer: u64) {
        let Some(Node::Sched(s)) = self.nodes.get_mut(n) else {
            return;
        };
        if s.op_of(prefer).is_some() && !s.asleep(prefer) && !s.backtrack.contains(&prefer) {
            s.backtrack.push(prefer);
        }
        let usable: Vec<u64> = initials
            .iter()
            .copied()
            .filter(|t| s.op_of(*t).is_some())
            .collect();
        if usable.is_empty() {
            for (t, _) in s.enabled.clone() {
                if !s.backtrack.contains(&t) && !s.asleep(t) {
                    s.backtrack.push(t);
                }
            }
            return;
        }
        let awake: Vec<u64> = usable.into_iter().filter(|t| !s.asleep(*t)).collect();
        if awake.iter().any(|t| s.backtrack.contains(t)) {
            return;
        }
        if let Some(&q) = awake.first() {
            s.backtrack.push(q);
        }
    }

    /// Moves to the next unexplored branch, or marks the search done.
    fn backtrack(&mut self) {
        while let Some(node) = self.nodes.last_mut() {
            match node {
                Node::Data { n, chosen } => {
                    if *chosen + 1 < *n {
                        *chosen += 1;
                        return;
                    }
                    self.nodes.pop();
                }
                Node::Sched(s) => {
                    if !s.explored.contains(&s.chosen) {
                        s.explored.push(s.chosen);
                    }
                    if !s.pruned && !s.complete.contains(&s.chosen) {
                        s.complete.push(s.chosen);
                    }
                    let mut next = None;
                    let mut cut = false;
                    for &q in &s.backtrack {
                        if s.explored.contains(&q) || s.asleep(q) {
                            continue;
                        }
                        if s.preempts(q) && s.preemptions >= self.bound {
                            cut = true;
                            continue;
                        }
                        next = Some(q);
                        break;
                    }
                    if cut {
                        let at = self.nodes.len() - 1;
                        self.mark_pruned(at);
                    }
                    if let Some(Node::Sched(s)) = self.nodes.last_mut() {
                        if let Some(q) = next {
                            s.chosen = q;
                            s.pruned = false;
                            return;
                        }
                    }
                    self.nodes.pop();
                }
            }
        }
        self.done = true;
    }

    /// The value of the next `rand`: from the seed and its place in the run.
    fn rand_value(&mut self, n: usize) -> u64 {
        self.rand_picks += 1;
        mix(self.seed, self.rand_picks) % (n.max(1) as u64)
    }
}

impl Chooser for Dpor {
    fn pick_task(&mut self, p: &SchedPoint<'_>) -> Option<usize> {
        // Steps that only compute run at once, without a branch; but a
        // yield is a decision: a switch there costs no preemption.
        if let Some(i) = p
            .ready
            .iter()
            .position(|r| !r.op.kind.is_visible() && r.op.kind != OpKind::Yield)
        {
            self.picks.push(None);
            return Some(i);
        }
        if self.pos < self.nodes.len() {
            // Replaying the prefix.
            let chosen = match &self.nodes[self.pos] {
                Node::Sched(s) => s.chosen,
                Node::Data { .. } => {
                    self.broken = true;
                    return None;
                }
            };
            let Some(i) = p.ready.iter().position(|r| r.task == chosen) else {
                self.broken = true;
                return None;
            };
            self.picks.push(Some(self.pos));
            self.sched_nodes.push(self.pos);
            self.pos += 1;
            return Some(i);
        }
        let sleep = self.inherited_sleep(p.quiescences);
        let preemptions = p.preemptions;
        let bound = self.bound;
        let allowed = |i: usize| !(p.preempts(i) && preemptions >= bound);
        let awake = |i: usize| !sleep.iter().any(|(t, _)| *t == p.ready[i].task);
        // A choice that preempts nobody first (the task that goes on, or
        // any after a block, an end or a yield), among those the engine's
        // ordinary choice (after a yield, the task runnable longest), then
        // by number.
        let first = p.default_choice();
        let mut order: Vec<usize> = (0..p.ready.len()).collect();
        order.sort_by_key(|&i| (p.preempts(i), i != first, p.ready[i].task));
        let choice = order.iter().copied().find(|&i| awake(i) && allowed(i));
        let Some(i) = choice else {
            if order.iter().any(|&i| awake(i)) {
                let at = self.nodes.len();
                self.mark_pruned(at);
                self.stopped = Some(RunKind::Pruned);
            } else {
                self.stopped = Some(RunKind::SleepBlocked);
            }
            return None;
        };
        // The bound cuts a switch here: the subtrees this decision is in
        // are not what an unbounded search would explore, so their tasks
        // must not put later siblings to sleep.
        if preemptions >= bound && (0..p.ready.len()).any(|k| k != i && p.preempts(k)) {
            let at = self.nodes.len();
            self.mark_pruned(at);
        }
        let task = p.ready[i].task;
        self.nodes.push(Node::Sched(Sched {
            enabled: p.ready.iter().map(|r| (r.task, r.op.clone())).collect(),
            preemptible: p.preemptible.map(|k| p.ready[k].task),
            preemptions,
            chosen: task,
            backtrack: vec![task],
            explored: Vec::new(),
            complete: Vec::new(),
            sleep,
            pruned: false,
            quiescences: p.quiescences,
        }));
        self.picks.push(Some(self.pos));
        self.sched_nodes.push(self.pos);
        self.pos += 1;
        Some(i)
    }

    fn pick(&mut self, what: PickKind, n: usize) -> usize {
        if what == PickKind::Rand {
            return self.rand_value(n) as usize;
        }
        if n <= 1 {
            return 0;
        }
        if self.pos < self.nodes.len() {
            let v = match &self.nodes[self.pos] {
                Node::Data { n: m, chosen } if *m == n => *chosen,
                _ => {
                    self.broken = true;
                    0
                }
            };
            self.pos += 1;
            return v;
        }
        self.nodes.push(Node::Data { n, chosen: 0 });
        self.pos += 1;
        0
    }

    fn word(&mut self) -> u64 {
        self.rand_picks += 1;
        mix(self.seed ^ 0x5eed, self.rand_picks)
    }
}

/// Vector clocks over one run's steps.
struct HappensBefore {
    /// Each step's clock (indexed by task number).
    clocks: Vec<Vec<u32>>,
    /// Each step's own component: how many steps its task had taken.
    epoch: Vec<u32>,
}

impl HappensBefore {
    fn new(log: &[StepRec]) -> HappensBefore {
        let tasks = log
            .iter()
            .flat_map(|r| {
                std::iter::once(r.task)
                    .chain(r.woke.iter().copied())
                    .chain(r.spawned.iter().copied())
            })
            .max()
            .unwrap_or(0) as usize
            + 1;
        let mut task_clock: Vec<Vec<u32>> = vec![vec![0; tasks]; tasks];
        let mut pending: Vec<Option<Vec<u32>>> = vec![None; tasks];
        let mut last_obj: HashMap<u64, usize> = HashMap::new();
        let mut barrier: Option<usize> = None;
        let mut global = vec![0u32; tasks];
        let mut clocks: Vec<Vec<u32>> = Vec::with_capacity(log.len());
        let mut epoch = Vec::with_capacity(log.len());
        for (k, r) in log.iter().enumerate() {
            let t = r.task as usize;
            let mut c = if r.op.kind.is_barrier() {
                global.clone()
            } else {
                let mut c = task_clock[t].clone();
                if let Some(w) = pending[t].take() {
                    join(&mut c, &w);
                }
                if let Some(b) = barrier {
                    join(&mut c, &clocks[b]);
                }
                if r.op.kind.is_visible() {
                    for o in r.footprint() {
                        if let Some(&m) = last_obj.get(o) {
                            join(&mut c, &clocks[m]);
                        }
                    }
                }
                c
            };
            c[t] += 1;
            epoch.push(c[t]);
            if r.op.kind.is_barrier() {
                barrier = Some(k);
            } else {
                task_clock[t] = c.clone();
                if r.op.kind.is_visible() {
                    for o in r.footprint() {
                        last_obj.insert(*o, k);
                    }
                }
            }
            for w in r.woke.iter().chain(r.spawned.iter()) {
                let slot = &mut pending[*w as usize];
                match slot {
                    Some(p) => join(p, &c),
                    None => *slot = Some(c.clone()),
                }
            }
            join(&mut global, &c);
            clocks.push(c);
        }
        HappensBefore { clocks, epoch }
    }

    /// Whether step `a` happens before step `b` (`a < b`).
    fn hb(&self, log: &[StepRec], a: usize, b: usize) -> bool {
        let ta = log[a].task as usize;
        self.clocks[b].get(ta).is_some_and(|&v| v >= self.epoch[a])
    }

    /// The races of the run: pairs `(i, j)`, `i < j`, of visible steps of
    /// different tasks on a common object, `i` the last step on it before
    /// `j`, not ordered before `j` but through that object.
    fn races(&self, log: &[StepRec]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut last_obj: HashMap<u64, usize> = HashMap::new();
        let mut prev_of_task: HashMap<u64, usize> = HashMap::new();
        let mut woken_by: HashMap<u64, Vec<usize>> = HashMap::new();
        let mut barrier: Option<usize> = None;
        for (j, r) in log.iter().enumerate() {
            if r.op.kind.is_visible() && !r.op.kind.is_barrier() {
                // The step's causes other than its objects.
                let mut others: Vec<usize> = Vec::new();
                if let Some(&p) = prev_of_task.get(&r.task) {
                    others.push(p);
                }
                if let Some(ws) = woken_by.get(&r.task) {
                    others.extend(ws.iter().copied());
                }
                if let Some(b) = barrier {
                    others.push(b);
                }
                let objs: Vec<u64> = r.footprint().copied().collect();
                for o in &objs {
                    let Some(&i) = last_obj.get(o) else { continue };
                    if log[i].task == r.task {
                        continue;
                    }
                    let mut causes = others.clone();
                    for o2 in &objs {
                        if o2 != o {
                            if let Some(&m) = last_obj.get(o2) {
                                if m != i {
                                    causes.push(m);
                                }
                            }
                        }
                    }
                    let through_others = causes.iter().any(|&m| m == i || self.hb(log, i, m));
                    if !through_others && !out.contains(&(i, j)) {
                        out.push((i, j));
                    }
                }
            }
            if r.op.kind.is_barrier() {
                barrier = Some(j);
            } else {
                prev_of_task.insert(r.task, j);
                woken_by.remove(&r.task);
                if r.op.kind.is_visible() {
                    for o in r.footprint() {
                        last_obj.insert(*o, j);
                    }
                }
            }
            for w in r.woke.iter().chain(r.spawned.iter()) {
                woken_by.entry(*w).or_default().push(j);
            }
        }
        out
    }

    /// The initials of the reversal of race `(i, j)`: the tasks whose first
    /// step among those after `i` not ordered after `i` (and `j`) depends
    /// on no other step there.
    fn initials(&self, log: &[StepRec], i: usize, j: usize) -> Vec<u64> {
        let v: Vec<usize> = (i + 1..j)
            .filter(|&k| log[k].task != 0 && !self.hb(log, i, k))
            .chain(std::iter::once(j))
            .collect();
        let mut seen: Vec<u64> = Vec::new();
        let mut out = Vec::new();
        for (x, &k) in v.iter().enumerate() {
            let t = log[k].task;
            if seen.contains(&t) {
                continue;
            }
            seen.push(t);
            let free = v[..x].iter().all(|&m| !self.hb(log, m, k));
            if free && log[k].op.kind.is_visible() {
                out.push(t);
            }
        }
        out
    }
}

fn join(a: &mut [u32], b: &[u32]) {
    for (x, y) in a.iter_mut().zip(b) {
        if *y > *x {
            *x = *y;
        }
    }
}

/// The equivalence class of a run (see the module doc): equal for runs
/// whose objects see the same steps in the same order. Tasks are named by
/// the step that started them, objects by the step that made them, so the
/// numbering (creation order) does not matter.
pub fn signature(log: &[StepRec]) -> u64 {
    let named = |h: u64, (a, b, c): (u64, u32, usize)| {
        let mut x = std::hash::DefaultHasher::new();
        (h, a, b, c).hash(&mut x);
        x.finish()
    };
    let mut name: HashMap<u64, u64> = HashMap::new();
    name.insert(1, 1);
    let mut obj: HashMap<u64, u64> = HashMap::new();
    let mut count: HashMap<u64, u32> = HashMap::new();
    let mut per_obj: BTreeMap<u64, Vec<(u64, u32, u64)>> = BTreeMap::new();
    let mut barriers: Vec<Vec<(u64, u32)>> = Vec::new();
    for r in log {
        if r.op.kind.is_barrier() {
            let mut at: Vec<(u64, u32)> = count
                .iter()
                .map(|(t, c)| (name.get(t).copied().unwrap_or(*t), *c))
                .collect();
            at.sort_unstable();
            barriers.push(at);
            continue;
        }
        let me = name.get(&r.task).copied().unwrap_or(r.task);
        let c = count.entry(r.task).or_insert(0);
        let idx = *c;
        *c += 1;
        for (k, s) in r.spawned.iter().enumerate() {
            name.insert(*s, named(1, (me, idx, k)));
        }
        for (k, o) in r.made.iter().enumerate() {
            obj.insert(*o, named(2, (me, idx, k)));
        }
        if r.op.kind.is_visible() {
            let mut h = std::hash::DefaultHasher::new();
            r.picks.hash(&mut h);
            r.op.kind.hash(&mut h);
            let picks = h.finish();
            for o in r.footprint() {
                let o = obj.get(o).copied().unwrap_or(*o);
                per_obj.entry(o).or_default().push((me, idx, picks));
            }
        }
    }
    let mut h = std::hash::DefaultHasher::new();
    per_obj.hash(&mut h);
    barriers.hash(&mut h);
    h.finish()
}
