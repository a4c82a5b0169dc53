//! The interpreter: runs a verified `ProgramDesc` on the runtime.
//!
//! | file           | what                                                        |
//! |----------------|-------------------------------------------------------------|
//! | `value.rs`     | run-time values and types, printing, equality, zero values  |
//! | `fmt_float.rs` | the printed form of floats                                  |
//! | `code.rs`      | the compact form: instructions over frame slots             |
//! | `lower.rs`     | `ProgramDesc` → compact form: slots, blocks, control flow   |
//! | `lower_ops.rs` | data ops → instructions, chosen by operand types            |
//! | `lower_select.rs` | `select` → one instruction plus its case blocks          |
//! | `exec.rs`      | the task loop: frames, blocking, preemption, failures       |
//! | `ops.rs`       | pure operations on values and their panic messages          |
//! | `tensor_ops.rs`| tensor builtins and operators                               |
//! | `output.rs`    | the shared, line-atomic stdout                              |
//! | `report.rs`    | stderr text and exit code of a run's end                    |
//!
//! A run: verify, lower once, then run `main` as task 1 on a `Runtime`; each
//! task is an `async` loop over instructions (`exec`). `docs/interpreter.md`
//! explains the design.

mod code;
mod exec;
mod fmt_float;
mod frame;
mod lower;
mod lower_ops;
mod lower_select;
mod ops;
mod output;
mod peephole;
mod report;
mod task;
mod tensor_ops;
mod value;

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use weft_ir::pb::ProgramDesc;

use weft_rt::{self as runtime, RunOutcome, Runtime};

pub use code::Program;
pub use fmt_float::format_float;
pub use lower::{lower, LowerError};
pub use report::{render_outcome, Report};
pub use value::{Ty, Value};

use exec::Shared;
use output::Output;

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
    /// The memory ceiling in bytes (None: none). It is enforced only where
    /// `memlimit::CountingAlloc` is the global allocator (the `weft` binary).
    pub max_memory: Option<usize>,
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
        }
    }
}

/// How a run ended, and what it printed when captured.
#[derive(Debug)]
pub struct RunResult {
    pub outcome: RunOutcome,
    /// The program's output when `RunConfig::capture` was set (else empty).
    pub output: Vec<u8>,
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
        prog: program,
        out,
        args,
        seed: cfg.seed,
        int_ty: Arc::new(Ty::Int),
    });
    let rt = Runtime::new(runtime::Config {
        workers: cfg.workers.max(1),
        seed: cfg.seed,
        trace: cfg.trace.clone(),
        max_tasks: cfg.max_tasks,
    })
    .with_wait_sites({
        let sh = sh.clone();
        Arc::new(move |site| task::site_loc(&sh.prog, site))
    });
    weft_rt::memlimit::set_limit(cfg.max_memory);
    let outcome = rt.run(task::task(sh.clone(), entry, Vec::new()));
    weft_rt::memlimit::set_limit(None);
    sh.out.flush();
    let output = std::mem::take(&mut *capture.lock());
    Ok(RunResult { outcome, output })
}
