//! Shared code of Weft's fuzz targets: the program generators ([`gen`]) and
//! a way to run a program with its output captured under a watchdog.
//!
//! | target          | input | property |
//! |-----------------|-------|----------|
//! | `decode_verify` | bytes | `decode` never panics; a decoded program dumps, re-encodes to itself, and lowers when it verifies |
//! | `frontend`      | UTF-8 text | `weft_lang::compile` gives a program that verifies, or diagnostics that render; never a panic or hang |
//! | `run_random`    | bytes driving [`gen::random_program`] | the program verifies and its run ends (return, exit, panic or deadlock as values) within [`RUN_TIMEOUT`] |
//! | `differential`  | bytes driving [`gen::kahn_program`] | one worker and several print the same and end the same way |
//! | `jit`           | bytes driving [`gen::loop_program`] | the loop JIT on and off print the same and end the same way |
//!
//! The watchdog turns a hang into an abort with the program's dump on
//! stderr, which libFuzzer saves as a crash (its own `-timeout` is the
//! second line of defence).

pub mod gen;

use std::sync::mpsc;
use std::time::Duration;

use weft_interp::{render_outcome, run_program, RunConfig};
use weft_ir::ProgramDesc;

/// How long one run of a generated program may take before the watchdog
/// aborts the process (generated programs do a few thousand steps).
pub const RUN_TIMEOUT: Duration = Duration::from_secs(20);

/// What a run printed and how it ended, as the CLI would show it.
#[derive(Debug, PartialEq, Eq)]
pub struct Observed {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

/// Runs a verified program with `workers` threads and `seed`, output
/// captured, under a watchdog that aborts (with the program's dump) after
/// [`RUN_TIMEOUT`]. A program that verifies must load: a load error panics.
pub fn run_watched(p: &ProgramDesc, workers: usize, seed: u64) -> Observed {
    run_watched_with(p, workers, seed, weft_interp::jit_enabled())
}

/// [`run_watched`] with the loop JIT on or off (`RunConfig::jit`).
pub fn run_watched_with(p: &ProgramDesc, workers: usize, seed: u64, jit: bool) -> Observed {
    let cfg = RunConfig {
        workers,
        seed,
        capture: true,
        max_tasks: Some(gen::MAX_TASKS),
        jit,
        ..RunConfig::default()
    };
    let (done, wait) = mpsc::channel::<()>();
    let dump = weft_ir::dump(p);
    let dog = std::thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(RUN_TIMEOUT) {
            eprintln!(
                "watchdog: run did not end within {RUN_TIMEOUT:?} (workers {workers}, seed {seed}); program:\n{dump}"
            );
            std::process::abort();
        }
    });
    let r = run_program(p, cfg);
    let _ = done.send(());
    let _ = dog.join();
    let r = r.unwrap_or_else(|e| {
        panic!(
            "a verified program failed to load: {e}\n{}",
            weft_ir::dump(p)
        )
    });
    let rep = render_outcome(&r.outcome);
    Observed {
        stdout: String::from_utf8_lossy(&r.output).into_owned(),
        stderr: rep.stderr,
        code: rep.code,
    }
}

/// Panics with the verifier's message and the dump when `p` does not verify
/// (a generator or verifier bug).
pub fn expect_verified(p: &ProgramDesc) {
    if let Err(e) = weft_ir::verify(p) {
        panic!(
            "generated program does not verify: {e}\n{}",
            weft_ir::dump(p)
        );
    }
}
