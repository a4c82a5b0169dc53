//! The Weft-vs-Go benchmark programs (`crates/weft/benches/programs/NAME.weft` beside
//! `NAME.go`, timed by `scripts/bench-vs-go.sh`) run correctly at a small
//! size: each `.weft` program, run through the library with one and with two
//! workers, prints the line the Go version prints for the same arguments.
//! The expected lines below were printed by the Go programs; when `go` is on
//! the PATH the Go programs are run too and must print the same lines, so
//! the two sides cannot drift apart. The scaling program of
//! `scripts/bench-scaling.sh` (`benches/scaling/tensor_tasks.weft`) is run
//! here too. No timing is checked here.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use weft_interp::{render_outcome, run_program, RunConfig, RunOutcome};

/// Program name, its small-size arguments, and what it prints with them.
const CASES: &[(&str, &[&str], &str)] = &[
    ("arith", &["10000"], "iterations 10000 result 450549\n"),
    (
        "daisychain",
        &["100", "3"],
        "chain 100 rounds 3 total 303\n",
    ),
    ("fanin", &["1000"], "received 1000 sum 499500\n"),
    (
        "mpmc",
        &["1000"],
        "mpmc 1000 producers 4 consumers 4 sum 499500\n",
    ),
    ("pingpong", &["1000"], "messages 1000\n"),
    (
        "printlines",
        &["3"],
        "line 0 of 3 true\nline 1 of 3 false\nline 2 of 3 false\n",
    ),
    ("select4", &["1000"], "select4 received 1000 sum 499500\n"),
    ("sieve", &["50"], "prime 50 is 229\n"),
    ("spawn", &["1000"], "spawned 1000 sum 499500\n"),
    ("sprintf", &["1000"], "sprintf 1000 total 28284\n"),
    ("spsc1", &["1000"], "spsc cap 1 received 1000 sum 499500\n"),
    (
        "spsc1024",
        &["1000"],
        "spsc cap 1024 received 1000 sum 499500\n",
    ),
    ("timers", &["10", "3"], "timers 10 sleeps 3 woke 30\n"),
    (
        "wordcount",
        &["1000"],
        "words 1000 bytes 11000 distinct 974 most 3\n",
    ),
    (
        "workerpool",
        &["1000", "4"],
        "jobs 1000 workers 4 total 461500\n",
    ),
];

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/programs")
}

fn run_weft(name: &str, args: &[&str], workers: usize) -> Result<String, String> {
    run_file(&format!("programs/{name}.weft"), args, workers)
}

/// Runs `crates/weft/benches/PATH` and returns what it printed.
fn run_file(path: &str, args: &[&str], workers: usize) -> Result<String, String> {
    let file = format!("crates/weft/benches/{path}");
    let src = fs::read_to_string(dir().join("..").join(path)).map_err(|e| e.to_string())?;
    let prog = weft_lang::compile(&file, &src).map_err(|d| d.render(&src))?;
    let r = run_program(
        &prog,
        RunConfig {
            workers,
            seed: 1,
            args: args.iter().map(|a| a.to_string()).collect(),
            capture: true,
            ..RunConfig::default()
        },
    )
    .map_err(|e| e.to_string())?;
    let out = String::from_utf8(r.output).map_err(|e| e.to_string())?;
    if !matches!(r.outcome, RunOutcome::Returned) {
        return Err(format!(
            "ended with {}after printing {out:?}",
            render_outcome(&r.outcome).stderr
        ));
    }
    Ok(out)
}

#[test]
fn every_program_has_a_go_twin_and_a_case() {
    let mut names: Vec<String> = fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "weft"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let listed: Vec<&str> = CASES.iter().map(|c| c.0).collect();
    assert_eq!(names, listed, "benches/programs and CASES differ");
    for n in &names {
        assert!(dir().join(format!("{n}.go")).is_file(), "{n}.go is missing");
    }
}

#[test]
fn weft_programs_print_what_go_prints() {
    let mut failures = Vec::new();
    for &(name, args, want) in CASES {
        for workers in [1, 2] {
            match run_weft(name, args, workers) {
                Ok(out) if out == want => {}
                Ok(out) => failures.push(format!(
                    "{name} {args:?} --workers {workers}: printed {out:?}, want {want:?}"
                )),
                Err(e) => failures.push(format!("{name} {args:?} --workers {workers}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs the Go twins when a Go toolchain is installed (CI may have none; the
/// expected lines in CASES were taken from these programs).
#[test]
fn go_programs_print_the_expected_lines() {
    if Command::new("go").arg("version").output().is_err() {
        eprintln!("go is not installed: Go twins not run");
        return;
    }
    let mut failures = Vec::new();
    for &(name, args, want) in CASES {
        let out = Command::new("go")
            .arg("run")
            .arg(dir().join(format!("{name}.go")))
            .args(args)
            .output()
            .expect("go run");
        let got = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || got != want {
            failures.push(format!(
                "{name}.go {args:?}: printed {got:?}, want {want:?}; stderr {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `scripts/bench-scaling.sh`'s program: K tasks of small tensor ops, each
/// task's tensor converging to 2.0 everywhere.
#[test]
fn the_scaling_program_computes_the_same_sum_on_any_number_of_workers() {
    for workers in [1, 2, 4] {
        let out = run_file("scaling/tensor_tasks.weft", &["3", "30"], workers).unwrap();
        assert_eq!(out, "tasks 3 ops 180 sum 12288.0\n", "--workers {workers}");
    }
}
