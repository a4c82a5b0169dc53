//! The interpreter: runs a verified `ProgramDesc` on the runtime.
//!
//! Files, in layers: each may import only the sibling modules in its
//! last column (all of them listed above it), so the modules' imports form
//! no circle. The instruction set (`code.rs`) imports nothing from the
//! lowering or the executor; the dispatch loop (`exec.rs`) does not import
//! the async half (`task.rs`) that calls it: `go` reaches `task::task`
//! through `Shared::spawn`, set here.
//!
//! | file              | what                                                     | may import                 |
//! |-------------------|----------------------------------------------------------|----------------------------|
//! | `fmt_float.rs`    | the printed form of floats                               | nothing                    |
//! | `value.rs`        | run-time values and types, printing, equality, zero values | `fmt_float`              |
//! | `error.rs`        | `RuntimeError` (panic messages) and `InternalError` (engine bugs) | nothing           |
//! | `output.rs`       | the shared, line-atomic stdout                           | nothing                    |
//! | `code.rs`         | the instruction set: instructions over frame slots       | `value`                    |
//! | `ops.rs`          | pure operations on values and their failures             | `code`, `value`, `error`   |
//! | `tensor_ops.rs`   | tensor builtins and operators                            | `code`, `value`, `error`   |
//! | `sprintf.rs`      | `sprintf`: Go's `fmt.Sprintf` verbs and error forms      | `value`, `ops`             |
//! | `lib_ops.rs`      | numbers, strings, lists and files builtins               | `code`, `value`, `error`, `ops`, `sprintf` |
//! | `frame.rs`        | frame helpers: copies without drop glue, callee frames   | `code`, `value`            |
//! | `peephole.rs`     | superinstructions, rewritten in place                    | `code`, `value`            |
//! | `lower_emit.rs`   | the lowering's emitter and state, `LowerError`           | `code`, `value`, `peephole` |
//! | `lower_ops.rs`    | data ops → instructions, chosen by operand types         | `code`, `value`, `lower_emit` |
//! | `lower_select.rs` | a `select` op → its cases and blocks                     | `code`, `value`, `lower_emit` |
//! | `lower.rs`        | `ProgramDesc` → instructions: slots, blocks, control flow | `code`, `value`, `lower_emit`, `lower_ops`, `lower_select` |
//! | `state.rs`        | what tasks run on: `Shared`, `TaskState`, `Wait`, `Failure`, locations | `code`, `value`, `error`, `output`, `tensor_ops` |
//! | `stream.rs`       | `tick` and `lines`: channels filled by the runtime's timers and poller | `value`, `error`, `ops`, `state`, `lib_ops` |
//! | `complete.rs`     | receive and select completion, one for both paths; `FrameCases` | `code`, `value`, `error`, `frame`, `state` |
//! | `jit/`            | the loop JIT: hot integer loops compiled with Cranelift (`region.rs`, `codegen.rs`) | `code`, `value`, `frame`, `state` |
//! | `exec.rs`         | the dispatch loop `step`: hot arms inline, rare ones out of line, short tensor kernels | `code`, `value`, `error`, `output`, `ops`, `tensor_ops`, `lib_ops`, `stream`, `frame`, `state`, `complete`, `jit` |
//! | `control.rs`      | the test-mode half: scheduling points of a controlled run (`weft test`), its `select`, `rand`, `perm` | `code`, `value`, `error`, `state`, `complete`, `exec` |
//! | `coll_ops.rs`     | collectives: values to `weft_coll`'s data and back, tensors without copies | `code`, `value`, `error`, `tensor_ops` |
//! | `task.rs`         | the async half: awaits what `step` stopped for, ends tasks | `code`, `value`, `error`, `tensor_ops`, `coll_ops`, `state`, `complete`, `exec`, `control`, `xproc` |
//! | `xproc.rs`        | several processes: values as bytes, served and remote channels, `world()`'s collectives, the `Host` | `code`, `value`, `error`, `tensor_ops` |
//! | `report.rs`       | `RunOutcome`, and its stderr text and exit code          | `error`                    |
//! | `lib.rs`          | `run_program`: verify, lower, run; the public API        | everything                 |
//!
//! A run: verify, lower once, then run `main` as task 1 on a `Runtime`; each
//! task is an `async` loop (`task`) around the dispatch loop (`exec`). A
//! program's failure is a panic (exit code 2); an engine bug is reported as
//! an internal error (exit code 70). `docs/interpreter.md` explains the
//! design.

mod code;
mod coll_ops;
mod complete;
mod control;
mod error;
mod exec;
mod fmt_float;
mod frame;
mod jit;
mod lib_ops;
mod lower;
mod lower_emit;
mod lower_ops;
mod lower_select;
mod ops;
mod output;
mod peephole;
mod report;
mod sprintf;
mod state;
mod stream;
mod task;
mod tensor_ops;
mod value;
mod xproc;

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use weft_chan::loom::{AtomicUsize, Mutex};
use weft_ir::pb::ProgramDesc;

use weft_rt::memlimit::Ceiling;
use weft_rt::{self as runtime, Chooser, ControlConfig, ControlRun, Runtime, SrcLoc};

pub use code::Program;
pub use error::{InternalError, RuntimeError, SliceBounds};
pub use fmt_float::format_float;
/// Whether the environment leaves the loop JIT on (unless `WEFT_JIT=0`):
/// `RunConfig::default()`'s `jit`.
pub use jit::enabled as jit_enabled;
pub use lower::{lower, lower_for_tests, LowerError};
pub use report::{render_outcome, Report, RunOutcome, EXIT_INTERNAL};
pub use value::{Ty, Value};
pub use xproc::ProcHost;

use output::Output;
use state::{InternalFailure, Shared, TestState};
use value::CommVal;
use weft_mpi::{End, World};

/// How to run a program.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Worker threads (at least 1).
    pub workers: usize,
    /// The run's seed (`select`, `rand`, `perm`).
    pub seed: u64,
    /// Where to write a Chrome trace of the run.
    pub trace: Option<PathBuf>,
    /// `args()`: the words after `--`.
    pub args: Vec<String>,
    /// Collect `print` output in `RunResult::output` instead of stdout.
    pub capture: bool,
    /// The most tasks that may exist at once (None: no limit).
    pub max_tasks: Option<usize>,
    /// The memory ceiling in bytes (None: none), checked before every
    /// allocation the program causes, with the size about to be allocated
    /// (docs/interpreter.md, "Memory"). The bytes already held count only
    /// where `memlimit::CountingAlloc` is the global allocator (the `weft`
    /// binary); elsewhere only a single allocation larger than the ceiling
    /// is refused. Each run has its own: runs at once in one process (tests)
    /// do not share it.
    pub max_memory: Option<usize>,
    /// A tensor op with no kernel on its device panics (naming the op and
    /// the device) instead of running on the host (`--strict-placement`,
    /// docs/language.md, "Placement").
    pub strict_placement: bool,
    /// This process's place in a program of several (docs/distributed.md):
    /// `None` runs alone, as rank 0 of 1. The `weft` command joins what
    /// `mpirun` started ([`join_processes`]); tests join simulated
    /// processes (`weft_mpi::in_memory`).
    pub joined: Option<Joined>,
    /// Compile hot integer loops to machine code (the loop JIT,
    /// docs/interpreter.md): on by default, off when the environment has
    /// `WEFT_JIT=0`. Off, the interpreter runs everything; the output and
    /// failures are the same either way.
    pub jit: bool,
}

/// One process of a program of several: its member of `world()`, and the
/// host through which the world ends its run.
#[derive(Clone)]
pub struct Joined {
    pub world: World,
    pub host: Arc<ProcHost>,
}

impl std::fmt::Debug for Joined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Joined(rank {} of {})",
            self.world.rank(),
            self.world.size()
        )
    }
}

/// Joins the processes `mpirun` started (built with `--features mpi`):
/// `None` when this process runs alone. A binary built without MPI but
/// started by `mpirun` warns on stderr and runs alone.
pub fn join_processes() -> Result<Option<Joined>, String> {
    if let Some(w) = weft_mpi::not_built_warning() {
        eprintln!("weft: warning: {w}");
    }
    let host = Arc::new(ProcHost::default());
    match weft_mpi::launch(host.clone()) {
        Ok(world) if world.is_distributed() => Ok(Some(Joined { world, host })),
        Ok(_) => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            seed: 0,
            trace: None,
            args: Vec::new(),
            capture: false,
            max_tasks: None,
            max_memory: None,
            strict_placement: false,
            joined: None,
            jit: jit::enabled(),
        }
    }
}

/// How a run ended, and what it printed when captured.
#[derive(Debug)]
pub struct RunResult {
    pub outcome: RunOutcome,
    /// This process's rank when several processes run (a panic report's
    /// lines then start with `[rank R] `: [`render_result`]).
    pub rank: Option<usize>,
    /// The program's output when `RunConfig::capture` was set (else empty).
    pub output: Vec<u8>,
    /// How many loops the JIT compiled during the run (0 with it off).
    pub jit_regions: usize,
}

/// Why a program could not start.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("invalid program: {0}")]
    Verify(#[from] weft_ir::VerifyError),
    #[error("invalid program: {0}")]
    Lower(#[from] LowerError),
}

/// Lowers and runs `prog` until `main` returns, a task panics or exits, or
/// every task is blocked. All output is flushed before this returns, so a
/// report written afterwards comes after the program's last line.
pub fn run_program(prog: &ProgramDesc, cfg: RunConfig) -> Result<RunResult, LoadError> {
    weft_ir::verify(prog)?;
    let program = lower(prog)?;
    run_lowered(program, cfg)
}

/// Runs an already lowered program (see `run_program`).
pub fn run_lowered(program: Program, cfg: RunConfig) -> Result<RunResult, LoadError> {
    let capture = Arc::new(Mutex::new(Vec::new()));
    let out = if cfg.capture {
        Output::Capture(capture.clone())
    } else {
        Output::stdout()
    };
    let args = Value::list(cfg.args.iter().map(|a| Value::str(a)).collect());
    let entry = program.entry;
    let sh = Arc::new(Shared {
        prog: Arc::new(program),
        out,
        args,
        seed: cfg.seed,
        int_ty: Arc::new(Ty::Int),
        spawn: task::task,
        internal: Mutex::new(None),
        mem: Ceiling::new(cfg.max_memory),
        task_bytes: task::task_bytes(),
        test: None,
        strict_placement: cfg.strict_placement,
        jit: cfg.jit,
        auto_turn: AtomicUsize::new(0),
        world: match &cfg.joined {
            Some(j) => Some(Arc::new(CommVal::World(xproc::procs(j.world.clone())))),
            None => world_of_one(),
        },
    });
    let rt = Runtime::new(runtime::Config {
        workers: cfg.workers.max(1),
        seed: cfg.seed,
        trace: cfg.trace.clone(),
        max_tasks: cfg.max_tasks,
    })
    .with_wait_sites({
        let sh = sh.clone();
        Arc::new(move |site| state::site_loc(&sh.prog, site))
    });
    let main = task::task(sh.clone(), entry, Vec::new(), Arc::from("cpu"));
    let outcome = match &cfg.joined {
        None => rt.run(main),
        Some(j) => {
            // One process of several: the runtime tells the world's
            // deadlock detector when every task is blocked, and the program
            // ends when every process's main has returned.
            let (host, world) = (j.host.clone(), j.world.clone());
            rt.with_quiescence(Arc::new(xproc::Quiet(world.clone())))
                .run(async move {
                    if let Some(c) = runtime::run_control() {
                        host.set_control(c);
                    }
                    let end = main.await;
                    if end == runtime::TaskEnd::Returned {
                        world.main_returned();
                        std::future::pending::<()>().await;
                    }
                    end
                })
        }
    };
    sh.out.flush();
    // An engine bug ends the run as a panic would; it is reported as what
    // it is, whatever else the runtime saw.
    let mut outcome = match sh.internal.lock().take() {
        Some(InternalFailure { task, error, loc }) => RunOutcome::Internal { task, error, loc },
        None => outcome.into(),
    };
    if let Some(j) = &cfg.joined {
        match j.host.ended() {
            // This process ended the program (a panic, `exit`, an engine
            // bug): every other process ends with its exit code.
            None => j.world.abort(render_outcome(&outcome).code),
            Some(End::Deadlock {
                report: Some(lines),
            }) => outcome = RunOutcome::WorldDeadlock(lines),
            Some(End::Deadlock { report: None }) => outcome = RunOutcome::Exit(2),
            Some(End::Finished | End::Abort { .. }) => {}
        }
        if let Err(e) = j.world.finish() {
            eprintln!("weft: {e}");
        }
    }
    let output = std::mem::take(&mut *capture.lock());
    let rank = cfg
        .joined
        .as_ref()
        .filter(|j| j.world.size() > 1)
        .map(|j| j.world.rank());
    Ok(RunResult {
        outcome,
        rank,
        output,
        jit_regions: jit::compiled(&sh.prog),
    })
}

/// `world()` of a run that is the only process: the one member of a group
/// of 1 (`None` only if the group could not be made, an engine bug).
fn world_of_one() -> Option<Arc<CommVal>> {
    weft_coll::group(1, weft_ir::registry::DEFAULT_RINGS as usize)
        .ok()
        .and_then(|g| g.into_iter().next())
        .map(|m| Arc::new(CommVal::Group(m)))
}

/// The stderr text and exit code of a run: [`render_outcome`], with
/// `[rank R] ` before each line of a panic report when several processes
/// run (docs/language.md, "Several processes").
pub fn render_result(r: &RunResult) -> Report {
    let mut rep = render_outcome(&r.outcome);
    if let (Some(rank), RunOutcome::Panic { .. } | RunOutcome::Internal { .. }) =
        (r.rank, &r.outcome)
    {
        rep.stderr = rep
            .stderr
            .lines()
            .map(|l| format!("[rank {rank}] {l}\n"))
            .collect();
    }
    rep
}

/// How to run one schedule of a test (`weft test`).
#[derive(Clone, Debug, Default)]
pub struct TestConfig {
    /// Where to write a Chrome trace of the run (on the virtual clock).
    pub trace: Option<PathBuf>,
    /// The most tasks that may exist at once (None: no limit).
    pub max_tasks: Option<usize>,
    /// The memory ceiling in bytes (None: none), as `RunConfig::max_memory`.
    pub max_memory: Option<usize>,
    /// The runtime's limits on a controlled run (its step budget).
    pub limits: ControlConfig,
}

/// One schedule of a test: how the controlled run went, and what the
/// program printed.
#[derive(Debug)]
pub struct TestRun {
    /// The run: how it ended, every step, its preemptions.
    pub run: ControlRun,
    /// Everything the test printed, in order.
    pub output: Vec<u8>,
    /// Where each channel was made, by number (channel `n` at `n - 1`).
    pub chans: Vec<SrcLoc>,
    /// An engine bug met during the run (reported as what it is).
    pub internal: Option<RunOutcome>,
}

/// Runs test function `test` of `program` (lowered with `lower_for_tests`)
/// once, as task 1 of a controlled run whose every decision `chooser`
/// makes (docs/testing-programs.md). Output is captured.
pub fn run_test(
    program: &Arc<Program>,
    test: code::FuncId,
    cfg: &TestConfig,
    chooser: Rc<RefCell<dyn Chooser>>,
) -> TestRun {
    let capture = Arc::new(Mutex::new(Vec::new()));
    let sh = Arc::new(Shared {
        prog: program.clone(),
        out: Output::Capture(capture.clone()),
        args: Value::list(Vec::new()),
        seed: 0,
        int_ty: Arc::new(Ty::Int),
        spawn: task::task,
        internal: Mutex::new(None),
        mem: Ceiling::new(cfg.max_memory),
        task_bytes: task::task_bytes(),
        strict_placement: false,
        jit: jit::enabled(),
        auto_turn: AtomicUsize::new(0),
        world: world_of_one(),
        test: Some(TestState::default()),
    });
    let rt = Runtime::new(runtime::Config {
        workers: 1,
        seed: 0,
        trace: cfg.trace.clone(),
        max_tasks: cfg.max_tasks,
    })
    .with_wait_sites({
        let sh = sh.clone();
        Arc::new(move |site| state::site_loc(&sh.prog, site))
    });
    let run = rt.run_controlled(
        task::task(sh.clone(), test, Vec::new(), Arc::from("cpu")),
        chooser,
        &cfg.limits,
    );
    let internal = sh
        .internal
        .lock()
        .take()
        .map(|InternalFailure { task, error, loc }| RunOutcome::Internal { task, error, loc });
    let chans = sh
        .test
        .as_ref()
        .map(|t| {
            let mut c = t.chans.lock();
            c.by_id.clear();
            std::mem::take(&mut c.made)
                .into_iter()
                .map(|(_, loc)| loc)
                .collect()
        })
        .unwrap_or_default();
    let output = std::mem::take(&mut *capture.lock());
    TestRun {
        run,
        output,
        chans,
        internal,
    }
}

/// The source location of a site of a controlled run's step
/// (`weft_rt::Op::site`) in `program`.
pub fn site_location(program: &Program, site: u64) -> SrcLoc {
    state::site_loc(program, site)
}

#[cfg(test)]
mod tests {
    use weft_rt::SrcLoc;

    use super::code::{Func, Instr};
    use super::*;

    /// A program of one function, `main`, with this code: not one that
    /// lowering makes, so it can reach what a verified program cannot.
    fn program(code: Vec<Instr>) -> Program {
        let loc = SrcLoc {
            file: Arc::from("t.weft"),
            line: 2,
            col: 3,
        };
        Program {
            funcs: vec![Func {
                name: Arc::from("main"),
                template: Arc::from(vec![Value::Int(0)]),
                entry: Arc::from(vec![Value::Int(0)]),
                entry_scalar: true,
                junk: Some(0),
                params: Vec::new(),
                locs: vec![loc; code.len().max(1)],
                code,
                scalar_frame: true,
            }],
            structs: Vec::new(),
            jit: Default::default(),
            entry: 0,
        }
    }

    fn run(code: Vec<Instr>) -> Report {
        let cfg = RunConfig {
            workers: 1,
            capture: true,
            ..RunConfig::default()
        };
        let r = run_lowered(program(code), cfg).expect("runs");
        render_outcome(&r.outcome)
    }

    /// An engine bug ends the run as an internal error with exit code 70,
    /// never as a program panic.
    #[test]
    fn engine_bugs_end_the_run_as_internal_errors() {
        let rep = run(Vec::new());
        assert_eq!(
            rep,
            Report {
                stderr: "weft: internal error: program counter out of range; this is a bug \
                         in Weft, please report it\n    at t.weft:2:3 (task 1)\n"
                    .into(),
                code: EXIT_INTERNAL,
            }
        );
        let rep = run(vec![
            Instr::Call {
                func: 7,
                args: Box::new([]),
                out: None,
            },
            Instr::End,
        ]);
        assert_eq!(rep.code, 70);
        assert!(
            rep.stderr
                .starts_with("weft: internal error: unknown function 7; this is a bug in Weft"),
            "{}",
            rep.stderr
        );
        // An operand of the wrong kind (the verifier rules it out).
        let rep = run(vec![
            Instr::Const {
                out: 0,
                val: Value::str("s"),
            },
            Instr::AddInt { x: 0, y: 0, out: 0 },
            Instr::End,
        ]);
        assert_eq!(rep.code, 70);
        assert!(
            rep.stderr
                .starts_with("weft: internal error: int op: unexpected operand s;"),
            "{}",
            rep.stderr
        );
    }

    /// A program's own failure is still a panic, exit code 2.
    #[test]
    fn program_failures_are_panics() {
        let rep = run(vec![
            Instr::Const {
                out: 0,
                val: Value::str("boom"),
            },
            Instr::Panic { msg: 0 },
        ]);
        assert_eq!(
            rep,
            Report {
                stderr: "panic: boom\n    at t.weft:2:3 (task 1)\n".into(),
                code: 2,
            }
        );
    }
}
