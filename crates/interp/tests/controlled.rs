//! Controlled runs of test functions (`weft test`, docs/testing-programs.md):
//! the bounded exhaustive search against brute force, virtual time,
//! replay, PCT's guarantee.
//!
//! The search's completeness is checked against an enumeration of every
//! schedule within the bound on small random programs: both must reach the
//! same set of interleavings (equivalence classes, `explore::signature`).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;
use std::sync::Arc;

use weft_interp::{lower_for_tests, run_test, Program, TestConfig, TestRun};
use weft_rt::explore::{self, signature, Dpor, Plan, RunKind, Verdict};
use weft_rt::{Chooser, ControlEnd, PickKind, SchedPoint};

/// Compiles a test file and lowers it for tests.
fn program(src: &str) -> (Arc<Program>, Vec<String>) {
    let f = weft_lang::compile_tests("t.weft", src).unwrap_or_else(|d| panic!("{}", d.render(src)));
    let prog = lower_for_tests(f.program.as_ref().expect("tests")).expect("lowers");
    (Arc::new(prog), f.tests)
}

fn run(p: &Arc<Program>, test: &str, chooser: Rc<RefCell<dyn Chooser>>) -> TestRun {
    let id = p.func_id(test).expect("test exists");
    run_test(p, id, &TestConfig::default(), chooser)
}

/// Every schedule within a preemption bound, depth first: each decision
/// tries every option in turn.
struct BruteForce {
    bound: u32,
    /// (options, chosen) of each decision of the current run.
    stack: Vec<(usize, usize)>,
    pos: usize,
    /// Options of each decision, in the run (schedules cut by the bound are
    /// skipped: an option that would exceed it is never taken).
    allowed: Vec<Vec<usize>>,
}

impl BruteForce {
    fn new(bound: u32) -> Self {
        BruteForce {
            bound,
            stack: Vec::new(),
            pos: 0,
            allowed: Vec::new(),
        }
    }

    fn start(&mut self) {
        self.pos = 0;
        self.allowed.truncate(self.stack.len());
    }

    fn decide(&mut self, options: Vec<usize>) -> usize {
        if self.pos < self.stack.len() {
            let (_, k) = self.stack[self.pos];
            self.pos += 1;
            return options[k];
        }
        self.stack.push((options.len(), 0));
        self.allowed.push(options.clone());
        self.pos += 1;
        options[0]
    }

    /// Moves to the next schedule; false when all were run.
    fn next(&mut self) -> bool {
        while let Some((n, k)) = self.stack.pop() {
            self.allowed.pop();
            if k + 1 < n {
                self.stack.push((n, k + 1));
                return true;
            }
        }
        false
    }
}

impl Chooser for BruteForce {
    fn pick_task(&mut self, p: &SchedPoint<'_>) -> Option<usize> {
        let options: Vec<usize> = (0..p.ready.len())
            .filter(|&i| !(p.preempts(i) && p.preemptions >= self.bound))
            .collect();
        Some(self.decide(options))
    }
    fn pick(&mut self, what: PickKind, n: usize) -> usize {
        assert_eq!(what, PickKind::Case, "the programs here use no rand");
        self.decide((0..n).collect())
    }
    fn word(&mut self) -> u64 {
        0
    }
}

/// A run's steps in short: `task:op[objs]` (`*` a preemption).
fn steps(log: &[weft_rt::StepRec]) -> String {
    log.iter()
        .map(|r| {
            format!(
                "{}{}:{}{:?}",
                if r.preempted { "*" } else { "" },
                r.task,
                r.op.kind.name(),
                r.op.objs.as_slice()
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every class within `bound` with one run of it, by brute force; `None`
/// past 200,000 runs.
fn brute_force_logs(
    p: &Arc<Program>,
    test: &str,
    bound: u32,
) -> Option<std::collections::BTreeMap<(bool, u64), String>> {
    let bf = Rc::new(RefCell::new(BruteForce::new(bound)));
    let mut out = std::collections::BTreeMap::new();
    let mut runs = 0;
    loop {
        bf.borrow_mut().start();
        let r = run(p, test, bf.clone());
        runs += 1;
        if runs > 200_000 {
            return None;
        }
        assert_ne!(r.run.end, ControlEnd::Stopped);
        out.entry(class(&r)).or_insert_with(|| steps(&r.run.log));
        if !bf.borrow_mut().next() {
            return Some(out);
        }
    }
}

/// The class of a run: `(false, signature)`; for a run cut short by a
/// panic (or `exit`), `(true, where it panicked)`. The search must reach
/// every class of runs that end by themselves, and find a panic when some
/// schedule panics (not every one: when two tasks would panic, which one
/// does first is a matter of scheduling).
fn class(r: &TestRun) -> (bool, u64) {
    match &r.run.end {
        ControlEnd::Panic { msg, loc, .. } => {
            use std::hash::{Hash, Hasher};
            let mut h = std::hash::DefaultHasher::new();
            (msg, loc).hash(&mut h);
            (true, h.finish())
        }
        ControlEnd::Exit { code, .. } => (true, *code as u64),
        _ => (false, signature(&r.run.log)),
    }
}

/// The classes of complete runs within `bound`, by the DPOR search.
fn dpor(p: &Arc<Program>, test: &str, bound: u32) -> (BTreeSet<(bool, u64)>, u64) {
    let d = Rc::new(RefCell::new(Dpor::new(bound, 7)));
    let mut out = BTreeSet::new();
    let mut runs = 0;
    while !d.borrow().is_done() {
        d.borrow_mut().start_run();
        let r = run(p, test, d.clone());
        runs += 1;
        assert!(runs < 100_000, "search too large");
        let kind = d.borrow_mut().finish_run(&r.run);
        if std::env::var_os("DPOR_DEBUG").is_some() {
            eprintln!("run {runs} {kind:?}: {}", steps(&r.run.log));
            eprintln!("{}", d.borrow().describe());
        }
        assert!(!d.borrow().is_broken(), "the search lost track of a run");
        if kind == RunKind::Complete {
            assert_ne!(r.run.end, ControlEnd::Stopped);
            out.insert(class(&r));
        }
    }
    (out, runs)
}

/// The most operations per task of `random_program` (`DPOR_OPS`, 3).
fn max_ops() -> usize {
    std::env::var("DPOR_OPS").map_or(3, |n| n.parse().unwrap())
}

/// A small random program: three tasks doing one to three operations on
/// two channels (sends, receives, selects with and without default,
/// prints, `len`), the children started by the test function.
fn random_program(seed: u64) -> String {
    let mut rng = fastrand::Rng::with_seed(seed);
    let body = |rng: &mut fastrand::Rng, me: usize| {
        let mut s = String::new();
        for k in 0..rng.usize(1..=max_ops()) {
            let c = rng.usize(0..2);
            let line = match rng.usize(0..10) {
                0 | 1 => format!("c{c} <- {me}{k}"),
                7 if rng.bool() => format!("close(c{c})"),
                7 | 8 => format!("sleep({})", rng.usize(0..3)),
                9 => format!(
                    "select {{\n\tcase <-c{c}:\n\tcase <-after({}):\n\t\tprint(\"t{me}\")\n\t}}",
                    rng.usize(1..3)
                ),
                2 => format!("x{k} := <-c{c}\n\t_ = x{k}"),
                3 => "select {\n\tcase <-c0:\n\tcase v := <-c1:\n\t\t_ = v\n\t}".to_string(),
                4 => format!(
                    "select {{\n\tcase c{c} <- {me}:\n\tdefault:\n\t\tprint(\"d{me}\")\n\t}}"
                ),
                5 => format!("print({me}{k})"),
                _ => format!("print(len(c{c}))"),
            };
            s.push('\t');
            s.push_str(&line);
            s.push('\n');
        }
        s
    };
    let caps = [rng.usize(0..3), rng.usize(0..3)];
    let b1 = body(&mut rng, 1);
    let b2 = body(&mut rng, 2);
    let b3 = body(&mut rng, 3);
    format!(
        "func child(c0 chan int, c1 chan int) {{\n{b2}}}\n\n\
         func test_x() {{\n\tc0 := make(chan int, {})\n\tc1 := make(chan int, {})\n\
         \tgo child(c0, c1)\n\tgo {{\n{b3}\t}}\n{b1}}}\n",
        caps[0], caps[1]
    )
}

#[test]
fn the_bounded_search_reaches_every_interleaving_brute_force_does() {
    let mut total_bf = 0;
    let mut total_dpor = 0;
    // DPOR_SEED=S checks one program; DPOR_SEEDS=N the first N.
    let seeds: Vec<u64> = match std::env::var("DPOR_SEED") {
        Ok(s) => vec![s.parse().unwrap()],
        Err(_) => (0..std::env::var("DPOR_SEEDS").map_or(40, |n| n.parse().unwrap())).collect(),
    };
    for seed in seeds {
        let src = random_program(seed);
        let (p, _) = program(&src);
        for bound in [0, 1, 2, 3] {
            let Some(want) = brute_force_logs(&p, "test_x", bound) else {
                continue;
            };
            let (got, runs) = dpor(&p, "test_x", bound);
            let missing: Vec<&String> = want
                .iter()
                .filter(|((failed, _), _)| !failed)
                .filter(|(s, _)| !got.contains(s))
                .map(|(_, l)| l)
                .collect();
            let extra = got.iter().any(|c| !want.contains_key(c));
            let fails = |mut it: Box<dyn Iterator<Item = &(bool, u64)> + '_>| it.any(|(f, _)| *f);
            let same_failing = fails(Box::new(got.iter())) == fails(Box::new(want.keys()));
            assert!(
                missing.is_empty() && !extra && same_failing,
                "seed {seed}, bound {bound}: {} classes by DPOR, {} by brute force\n{src}\n\
                 missing:\n{}",
                got.len(),
                want.len(),
                missing
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            total_bf += want.len();
            total_dpor += runs;
        }
    }
    eprintln!("{total_bf} classes; {total_dpor} DPOR runs");
}

#[test]
fn interleaving_counts_match_hand_counts() {
    let src = "
func test_two_senders() {
	c := make(chan int, 2)
	go { c <- 1 }
	go { c <- 2 }
	a := <-c
	b := <-c
	print(a, b)
}

func test_three_printers() {
	go { print(1) }
	go { print(2) }
	go { print(3) }
}

func test_handoff() {
	c := make(chan int)
	go { c <- 1 }
	<-c
}
";
    let (p, _) = program(src);
    // Two sends s1, s2 and two receives r1 < r2 on one channel, r2 after
    // some send: 4!/2 orders less the 2 with r2 before both sends = 10.
    // Without preemptions the test function runs until its first receive
    // blocks, so a send comes first: r1 s s r2, r1 s r2 s, for either
    // sender first: 4. One preemption adds s1 s2 r1 r2, s2 s1 r1 r2,
    // s1 r1 r2 s2, s2 r1 r2 s1: 8.
    for (bound, want) in [(0, 4), (1, 8), (2, 10), (3, 10)] {
        assert_eq!(
            dpor(&p, "test_two_senders", bound).0.len(),
            want,
            "bound {bound}"
        );
    }
    // Three prints in any order, after the test function returned: 3! = 6.
    for bound in [0, 2] {
        assert_eq!(dpor(&p, "test_three_printers", bound).0.len(), 6);
    }
    // The receive blocks first, or (switching away from the test
    // function at its receive: a preemption) the send does: 2.
    // Without preemptions only the receive can block first: 1.
    assert_eq!(dpor(&p, "test_handoff", 0).0.len(), 1);
    assert_eq!(dpor(&p, "test_handoff", 1).0.len(), 2);
    // The same numbers through the explorer, which says "verified".
    let mut target = |c: Rc<RefCell<dyn Chooser>>| run(&p, "test_two_senders", c).run;
    let plan = Plan {
        schedules: 1000,
        seed: 0,
        exhaustive: Some(1),
        only: None,
    };
    match explore::explore(&mut target, &plan).verdict {
        Verdict::Verified {
            interleavings,
            bound,
        } => assert_eq!((interleavings, bound), (8, 1)),
        v => panic!("{v:?}"),
    }
}

/// PCT's guarantee (Burckhardt et al.): a bug of depth `d` among `k` steps
/// of `n` tasks is found with probability at least `1/(n·k^(d-1))` per
/// schedule. Here the bug needs the second task's send between the first
/// task's two sends (depth 2). Each seed gets `40·n·k` schedules, so a seed
/// that misses it has probability at most `e^-40`: the test cannot fail by
/// chance (and is deterministic given the seeds).
#[test]
fn pct_finds_a_depth_two_bug_within_its_bound() {
    let src = "
func test_depth2() {
	c := make(chan int, 3)
	done := make(chan bool, 2)
	go {
		c <- 1
		c <- 2
		done <- true
	}
	go {
		c <- 3
		done <- true
	}
	<-done
	<-done
	a := <-c
	b := <-c
	assert(!(a == 1 && b == 3), \"3 between 1 and 2\")
}
";
    let (p, _) = program(src);
    // The steps of a run (PCT's k is the most any schedule took, and at
    // least PCT_FIRST_STEPS before the first) and its tasks.
    let probe = run(
        &p,
        "test_depth2",
        Rc::new(RefCell::new(explore::Ordinary::new(0))),
    );
    let k = (probe.run.log.len() as u64).max(explore::PCT_FIRST_STEPS);
    let n = 3;
    let budget = 40 * n * k;
    let mut needed = Vec::new();
    for seed in 0..20 {
        let mut target = |c: Rc<RefCell<dyn Chooser>>| run(&p, "test_depth2", c).run;
        let plan = Plan {
            schedules: budget,
            seed,
            exhaustive: None,
            only: Some(explore::Strategy::Pct(2)),
        };
        match explore::explore(&mut target, &plan).verdict {
            Verdict::Failed(f) => needed.push(f.index),
            v => panic!("seed {seed}: not found in {budget} schedules: {v:?}"),
        }
    }
    // On average far fewer than the bound's n·k.
    let mean = needed.iter().sum::<u64>() as f64 / needed.len() as f64;
    eprintln!(
        "PCT d=2: schedules needed {needed:?} (mean {mean}, bound n·k = {})",
        n * k
    );
    assert!(mean <= (n * k) as f64, "{needed:?}");
}

/// `lower_for_tests` puts a scheduling point before each operation the
/// controlled executor must see, and only there; `lower` puts none.
#[test]
fn points_go_before_the_operations_a_schedule_sees() {
    let src = "
func test_t() {
	c := make(chan int, 1)
	c <- 1
	x := <-c
	print(x, len(c))
	go {
		c <- 2
	}
	l := []int{1, 2}
	_ = len(l) + x * 2
	_ = rand(3)
}
";
    let f = weft_lang::compile_tests("t.weft", src).unwrap();
    let desc = f.program.unwrap();
    let points = |p: &Program| {
        p.funcs
            .iter()
            .flat_map(|f| f.code.iter())
            .filter(|i| format!("{i:?}") == "Point")
            .count()
    };
    // make, send, receive, len of the channel, print, go, the go block's
    // send, rand: not `len` of a list, not arithmetic.
    assert_eq!(points(&lower_for_tests(&desc).unwrap()), 8);
    assert_eq!(points(&weft_interp::lower(&desc).unwrap()), 0);
}
