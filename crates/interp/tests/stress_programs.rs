//! Random whole programs, the fuzz targets' generators run on fixed seeds so
//! CI exercises them without libFuzzer:
//! - `random_programs_verify_and_end`: programs from
//!   `fuzz/src/gen/random.rs` (channels, go, select with and without
//!   default, close, loops) verify and end (as a return, exit, panic or
//!   deadlock value) on 1 to 3 workers;
//! - `kahn_programs_agree_across_workers`: programs from `kahn_program`,
//!   whose output cannot depend on scheduling, print the same and end the
//!   same way on 1 worker and on 3 (the `differential` target's property).
//!
//! `WEFT_STRESS_PROGRAMS` sets how many programs each test runs (default 60;
//! a long run: `WEFT_STRESS_PROGRAMS=5000 cargo test --release --test
//! stress_programs`). A failure prints the seed and the program's dump.

#[path = "../../../fuzz/src/gen/mod.rs"]
// `loop_program` is the loop JIT test's (`jit.rs`).
#[allow(dead_code, unused_imports)]
mod gen;

use std::sync::mpsc;
use std::time::Duration;

use arbitrary::Unstructured;
use gen::{kahn_program, random_program, Limits};
use weft_interp::{render_outcome, run_program, RunConfig};
use weft_ir::pb::ProgramDesc;

fn count() -> u64 {
    std::env::var("WEFT_STRESS_PROGRAMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60)
}

/// The first case to run (`WEFT_STRESS_FIRST`, default 0), to rerun a failure.
fn first() -> u64 {
    std::env::var("WEFT_STRESS_FIRST")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Pseudo-random bytes for case `i` (so a failure names a reproducible case).
fn bytes(i: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(i);
    let n = rng.usize(16..1500);
    (0..n).map(|_| rng.u8(..)).collect()
}

/// How long one generated program may run before the test fails (they do
/// a few thousand steps; a hang is a bug).
const RUN_TIMEOUT: Duration = Duration::from_secs(30);

/// (stdout, stderr, exit code) of a run with output captured; fails the
/// test with the program's dump if the run does not end in `RUN_TIMEOUT`.
fn run(p: &ProgramDesc, workers: usize, seed: u64) -> (String, String, i32) {
    let cfg = RunConfig {
        workers,
        seed,
        capture: true,
        max_tasks: Some(gen::MAX_TASKS),
        ..RunConfig::default()
    };
    let (tx, rx) = mpsc::channel();
    let prog = p.clone();
    // Detached: if the run hangs, the test fails and the process exits.
    std::thread::spawn(move || {
        let _ = tx.send(run_program(&prog, cfg));
    });
    let r = match rx.recv_timeout(RUN_TIMEOUT) {
        Ok(r) => r,
        Err(_) => panic!(
            "run did not end within {RUN_TIMEOUT:?} (workers {workers}, seed {seed}); program:\n{}",
            weft_ir::dump(p)
        ),
    };
    let r = r.unwrap_or_else(|e| panic!("program failed to load: {e}\n{}", weft_ir::dump(p)));
    let rep = render_outcome(&r.outcome);
    (
        String::from_utf8_lossy(&r.output).into_owned(),
        rep.stderr,
        rep.code,
    )
}

fn verified(p: &ProgramDesc, i: u64) {
    if let Err(e) = weft_ir::verify(p) {
        panic!(
            "case {i}: generated program does not verify: {e}\n{}",
            weft_ir::dump(p)
        );
    }
}

#[test]
fn random_programs_verify_and_end() {
    let mut ends = [0usize; 3]; // returned/exit, panic, deadlock
    for i in first()..count() {
        let data = bytes(i);
        let Ok(p) = random_program(&mut Unstructured::new(&data), Limits::default()) else {
            continue;
        };
        verified(&p, i);
        let (_, stderr, code) = run(&p, 1 + (i % 3) as usize, i);
        match code {
            0 => ends[0] += 1,
            _ if stderr.starts_with("panic:") => ends[1] += 1,
            _ if stderr.starts_with("fatal error: all tasks are asleep") => ends[2] += 1,
            _ => panic!(
                "case {i}: unexpected end {code}: {stderr}\n{}",
                weft_ir::dump(&p)
            ),
        }
    }
    eprintln!(
        "returned {}, panicked {}, deadlocked {}",
        ends[0], ends[1], ends[2]
    );
}

#[test]
fn kahn_programs_agree_across_workers() {
    let mut with_output = 0;
    for i in first()..count() {
        let data = bytes(i ^ 0x5eed);
        let Ok(p) = kahn_program(&mut Unstructured::new(&data), Limits::default()) else {
            continue;
        };
        verified(&p, i);
        let one = run(&p, 1, i);
        let many = run(&p, 3, i + 1);
        assert_eq!(
            one,
            many,
            "case {i}: 1 worker and 3 workers disagree; program:\n{}",
            weft_ir::dump(&p)
        );
        with_output += usize::from(!one.0.is_empty());
    }
    assert!(with_output > 0, "no generated program printed anything");
}
