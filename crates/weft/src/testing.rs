//! `weft test FILE` (docs/language.md, "Testing programs"; the guide is
//! docs/testing-programs.md): runs each `test_` function of a file under
//! many schedules of the controlled executor and reports, per test, `ok`
//! or the first failing schedule with a replay command; `--replay` runs the
//! one schedule a token names.
//!
//! Output: stdout has one line per test (`ok   NAME (...)`, or `--- FAIL:
//! NAME (...)` and `replay: ...`), what tests print with `-v` (before the
//! test's line), and last `PASS` or `FAIL` (`no tests` for a file without
//! any). stderr has each failure as `weft run` reports it, then the
//! failing interleaving: the operations that led to it. Exit code 0 when
//! every test passed, 1 otherwise or when the file does not compile, 64
//! for a bad flag or token, 70 when a failure was an engine bug.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use clap::Args;
use weft_interp::{Program, TestConfig, TestRun};
use weft_rt::explore::{self, Exploration, Plan, Strategy, Token, Verdict};
use weft_rt::{ControlEnd, ControlRun, OpKind, StepRec};

/// Schedules per test unless `--schedules` says otherwise.
pub const DEFAULT_SCHEDULES: u64 = 100;
/// Runs an exhaustive search may take unless `--schedules` says otherwise.
pub const DEFAULT_EXHAUSTIVE_RUNS: u64 = 10_000;
/// The most operations a failing interleaving's listing shows (the last).
const LISTING: usize = 30;

#[derive(Debug, Args)]
pub struct TestArgs {
    /// A `.weft` source file whose `test_` functions to run.
    pub file: PathBuf,
    /// Schedules per test (default 100; with --exhaustive, the most runs
    /// the search may take, default 10000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub schedules: Option<u64>,
    /// Seed of the schedules: the same seed explores the same schedules.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// Run only the tests whose name matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub run: Option<String>,
    /// Run the one schedule this token names (printed by a failure).
    #[arg(long, value_name = "TOKEN")]
    pub replay: Option<String>,
    /// Explore every inequivalent interleaving within the preemption bound.
    #[arg(long, conflicts_with = "replay")]
    pub exhaustive: bool,
    /// The preemption bound of --exhaustive.
    #[arg(long, value_name = "P", default_value_t = 2)]
    pub max_preemptions: u32,
    /// Sample with one strategy instead of the portfolio: ordinary,
    /// random, pct1, pct2, pct3 (pctN: PCT of depth N), select.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["exhaustive", "replay"])]
    pub strategy: Option<String>,
    /// Show what the tests print.
    #[arg(short, long)]
    pub verbose: bool,
    /// With --replay: write a Chrome trace-event timeline of the run.
    #[arg(long, value_name = "OUT.json", requires = "replay")]
    pub trace: Option<PathBuf>,
}

/// A usage error of `weft test` (a bad pattern or token): its message.
#[derive(Debug)]
pub struct Usage(pub String);

/// The flags of `weft test` that can be wrong, checked before the file is
/// read: the `--run` pattern and the `--replay` token.
pub struct Checked {
    pattern: Option<regex::Regex>,
    token: Option<Token>,
    strategy: Option<Strategy>,
}

/// Checks the flags (see `Checked`).
pub fn check_flags(a: &TestArgs) -> Result<Checked, Usage> {
    let pattern = a
        .run
        .as_deref()
        .map(regex::Regex::new)
        .transpose()
        .map_err(|e| Usage(format!("invalid --run pattern: {e}")))?;
    let token = a
        .replay
        .as_deref()
        .map(str::parse::<Token>)
        .transpose()
        .map_err(|e| Usage(e.to_string()))?;
    let strategy = match a.strategy.as_deref() {
        None => None,
        Some(name) => Some(Strategy::from_name(name).ok_or_else(|| {
            Usage(format!(
                "unknown strategy {name:?} (ordinary, random, pct1, pct2, pct3, select)"
            ))
        })?),
    };
    Ok(Checked {
        pattern,
        token,
        strategy,
    })
}

/// Runs `weft test` on the source `src` of `a.file`; returns the exit code.
pub fn test(a: &TestArgs, flags: Checked, src: &str) -> i32 {
    let Checked {
        pattern,
        token,
        strategy,
    } = flags;
    let shown = a.file.display().to_string();
    let compiled = match weft_lang::compile_tests(&shown, src) {
        Ok(c) => c,
        Err(diags) => {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(diags.render(src).as_bytes());
            let _ = err.flush();
            return 1;
        }
    };
    let tests: Vec<&String> = compiled
        .tests
        .iter()
        .filter(|t| pattern.as_ref().is_none_or(|p| p.is_match(t)))
        .collect();
    let (Some(desc), false) = (&compiled.program, tests.is_empty()) else {
        out("no tests\n");
        return 0;
    };
    let program = match weft_interp::lower_for_tests(desc) {
        Ok(p) => Arc::new(p),
        Err(e) => {
            eprintln!("weft: {shown}: invalid program: {e}");
            return 1;
        }
    };
    if let Some(path) = &a.trace {
        if let Err(e) = std::fs::File::create(path) {
            eprintln!("weft: cannot write trace {}: {e}", path.display());
            return 1;
        }
    }
    let base = TestConfig {
        trace: None,
        max_tasks: Some(10_000_000),
        max_memory: weft_rt::memlimit::default_limit(),
        limits: weft_rt::ControlConfig::default(),
    };
    let mut all_ok = true;
    let internal = std::cell::Cell::new(false);
    for name in tests {
        let Some(id) = program.func_id(name) else {
            continue;
        };
        let t = Test {
            a,
            strategy,
            shown: &shown,
            name,
            program: &program,
            id,
            cfg: &base,
            internal: &internal,
        };
        let ok = match &token {
            Some(token) => t.replay(token),
            None => t.explore(),
        };
        all_ok &= ok;
    }
    out(if all_ok { "PASS\n" } else { "FAIL\n" });
    if internal.get() {
        // An engine bug, not the program's (docs/language.md, exit codes).
        return weft_interp::EXIT_INTERNAL;
    }
    i32::from(!all_ok)
}

/// One test of the file.
struct Test<'a> {
    a: &'a TestArgs,
    strategy: Option<Strategy>,
    shown: &'a str,
    name: &'a str,
    program: &'a Arc<Program>,
    id: u32,
    cfg: &'a TestConfig,
    /// Set when a reported run met an engine bug (exit code 70).
    internal: &'a std::cell::Cell<bool>,
}

impl Test<'_> {
    fn run(&self, cfg: &TestConfig, chooser: Rc<RefCell<dyn weft_rt::Chooser>>) -> TestRun {
        weft_interp::run_test(self.program, self.id, cfg, chooser)
    }

    /// Explores the test's schedules; true when it passed.
    fn explore(&self) -> bool {
        let plan = Plan {
            schedules: self.a.schedules.unwrap_or(if self.a.exhaustive {
                DEFAULT_EXHAUSTIVE_RUNS
            } else {
                DEFAULT_SCHEDULES
            }),
            seed: self.a.seed,
            exhaustive: self.a.exhaustive.then_some(self.a.max_preemptions),
            only: self.strategy,
        };
        // What the first schedule printed, for -v.
        let mut first_output: Option<Vec<u8>> = None;
        let mut target = |chooser: Rc<RefCell<dyn weft_rt::Chooser>>| -> ControlRun {
            let r = self.run(self.cfg, chooser);
            if first_output.is_none() {
                first_output = Some(r.output);
            }
            r.run
        };
        let e: Exploration = explore::explore(&mut target, &plan);
        if let Some(runs) = e.fell_back {
            out(&format!(
                "exhaustive: {}: more than {runs} runs to cover every interleaving with at most {} \
                 preemptions; sampled {} schedules instead\n",
                self.name, self.a.max_preemptions, plan.schedules
            ));
        }
        match e.verdict {
            Verdict::Passed { schedules } => {
                self.show_output(first_output.as_deref());
                out(&format!("ok   {} ({schedules} schedules)\n", self.name));
                true
            }
            Verdict::Verified {
                interleavings,
                bound,
            } => {
                self.show_output(first_output.as_deref());
                let s = if interleavings == 1 { "" } else { "s" };
                let p = if bound == 1 { "" } else { "s" };
                out(&format!(
                    "ok   {} (verified: {interleavings} interleaving{s}, at most {bound} \
                     preemption{p})\n",
                    self.name
                ));
                true
            }
            Verdict::Failed(found) => {
                // The reported schedule once more, for its output and report.
                let rep = Rc::new(RefCell::new(explore::Replayer::new(found.token.clone())));
                let r = self.run(self.cfg, rep.clone());
                self.show_output(Some(&r.output));
                let which = if found.exhaustive {
                    format!("interleaving {}", found.index)
                } else {
                    format!("schedule {} of {}", found.index, found.of)
                };
                out(&format!(
                    "--- FAIL: {} ({which})\nreplay: weft test {} --run '^{}$' --replay {}\n",
                    self.name, self.shown, self.name, found.token
                ));
                if let Err(d) = rep.borrow().finish() {
                    // The engine is not deterministic for this program.
                    eprintln!(
                        "weft: {}: the failing schedule does not replay: {d}",
                        self.name
                    );
                }
                self.report(&r);
                false
            }
        }
    }

    /// Runs the schedule `token` names; true when the test passed in it.
    fn replay(&self, token: &Token) -> bool {
        let cfg = TestConfig {
            trace: self.a.trace.clone(),
            ..self.cfg.clone()
        };
        let rep = Rc::new(RefCell::new(explore::Replayer::new(token.clone())));
        let r = self.run(&cfg, rep.clone());
        self.show_output_always(&r.output);
        if let Some(e) = &r.run.trace_error {
            eprintln!("weft: {e}");
        }
        if let Err(d) = rep.borrow().finish() {
            out(&format!("--- FAIL: {} (replay diverged)\n", self.name));
            eprintln!("weft: {}: {d}", self.name);
            return false;
        }
        if r.internal.is_none() && !explore::failed(&r.run.end) {
            out(&format!("ok   {} (replay)\n", self.name));
            return true;
        }
        out(&format!("--- FAIL: {} (replay)\n", self.name));
        self.report(&r);
        false
    }

    fn show_output(&self, output: Option<&[u8]>) {
        if self.a.verbose {
            if let Some(o) = output {
                self.show_output_always(o);
            }
        }
    }

    fn show_output_always(&self, output: &[u8]) {
        let mut so = std::io::stdout().lock();
        let _ = so.write_all(output);
        let _ = so.flush();
    }

    /// The failure on stderr, as `weft run` reports it, then the listing.
    fn report(&self, r: &TestRun) {
        if r.internal.is_some() {
            self.internal.set(true);
        }
        let mut s = match &r.internal {
            Some(o) => weft_interp::render_outcome(o).stderr,
            None => failure_text(&r.run.end),
        };
        s.push_str(&self.listing(r));
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(s.as_bytes());
        let _ = err.flush();
    }

    /// The failing interleaving: the last operations that led to the
    /// failure (task, operation, channels, place), and the channels' places.
    fn listing(&self, r: &TestRun) -> String {
        let ops: Vec<&StepRec> = r
            .run
            .log
            .iter()
            .filter(|s| s.op.kind.is_visible())
            .collect();
        if ops.is_empty() {
            return String::new();
        }
        let p = r.run.preemptions;
        let shown = &ops[ops.len().saturating_sub(LISTING)..];
        let mut s = format!(
            "interleaving ({} operation{}, {p} preemption{}){}:\n",
            ops.len(),
            if ops.len() == 1 { "" } else { "s" },
            if p == 1 { "" } else { "s" },
            if shown.len() < ops.len() {
                format!(", the last {}", shown.len())
            } else {
                String::new()
            }
        );
        let mut used: Vec<u64> = Vec::new();
        for step in shown {
            let who = if step.task == 0 {
                "      ".to_string()
            } else {
                format!("task {}", step.task)
            };
            let mut what = step.op.kind.name().to_string();
            for o in &step.op.objs {
                // The output, the file system and the collectives are
                // named by the operation itself.
                if ![weft_rt::STDOUT, weft_rt::FILES, weft_rt::COLLECTIVES].contains(o) {
                    let _ = write!(what, " ch{o}");
                    if !used.contains(o) {
                        used.push(*o);
                    }
                }
            }
            let place = if step.op.kind.is_barrier() {
                String::new()
            } else {
                format!(
                    "  {}",
                    weft_interp::site_location(self.program, step.op.site)
                )
            };
            let mut notes = Vec::new();
            if step.preempted {
                notes.push("preempts");
            }
            if step.blocked && step.op.kind != OpKind::Go {
                notes.push("blocks");
            }
            let notes = if notes.is_empty() {
                String::new()
            } else {
                format!("  ({})", notes.join(", "))
            };
            let _ = writeln!(s, "  {who:<8} {what:<22}{place}{notes}");
        }
        used.sort_unstable();
        let made: Vec<String> = used
            .iter()
            .filter_map(|o| {
                let loc = r.chans.get((*o as usize).checked_sub(1)?)?;
                Some(format!("ch{o} made at {loc}"))
            })
            .collect();
        if !made.is_empty() {
            let _ = writeln!(s, "  ({})", made.join(", "));
        }
        s
    }
}

/// A failed run's report, in the form `weft run` gives (docs/language.md):
/// a panic, a deadlock, or the leaked tasks.
pub fn failure_text(end: &ControlEnd) -> String {
    match end {
        ControlEnd::Passed | ControlEnd::Stopped => String::new(),
        ControlEnd::Panic { task, msg, loc } => {
            format!("panic: {msg}\n    at {loc} (task {task})\n")
        }
        ControlEnd::Exit { task, code } => {
            format!("exit({code}) called by task {task} during a test\n")
        }
        ControlEnd::Deadlock(blocked) => {
            let mut s = String::from("fatal error: all tasks are asleep - deadlock!\n");
            let mut b: Vec<_> = blocked.iter().collect();
            b.sort_by_key(|b| b.task);
            for b in b {
                let _ = writeln!(s, "task {} [{}]: {}", b.task, b.kind, b.loc);
            }
            s
        }
        ControlEnd::Leaked(leaks) => {
            let mut s = String::new();
            for l in leaks {
                let tag = l.kind.map_or("running".to_string(), |k| k.to_string());
                let _ = writeln!(s, "leaked: task {} [{tag}]: {}", l.task, l.loc);
            }
            s
        }
    }
}

/// Writes to stdout at once (so it comes before a later stderr report).
fn out(s: &str) {
    let mut so = std::io::stdout().lock();
    let _ = so.write_all(s.as_bytes());
    let _ = so.flush();
}
