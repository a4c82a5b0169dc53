//! A `weft` built without the `mpi` feature but started by `mpirun`
//! (docs/distributed.md, "Install, build, launch"): each process runs
//! alone as rank 0 of 1, and the one the launcher gave rank 0 says once,
//! on stderr, that the binary has no MPI and how to build one that has.
//! `mpirun` is not needed: the tests set the variables launchers set.
#![cfg(not(feature = "mpi"))]

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Every variable `weft_mpi` reads to tell whether a launcher started it.
const LAUNCHER_VARS: [&str; 6] = [
    "PMI_SIZE",
    "PMI_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_UNIVERSE_SIZE",
    "PMIX_RANK",
];

const PROGRAM: &str = r#"func main() {
	w := world()
	print("rank", rank(w), "size", size(w), "sum", allreduce_sum(w, 5))
}
"#;

/// The program in a file of its own for each run (tests run in parallel).
fn program() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("weft-mpi-not-built-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join(format!(
        "world{}.weft",
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&f, PROGRAM).unwrap();
    f
}

/// `weft run` with exactly these launcher variables set.
fn run(vars: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_weft"));
    for v in LAUNCHER_VARS {
        cmd.env_remove(v);
    }
    cmd.envs(vars.iter().copied())
        .arg("run")
        .arg(program())
        .output()
        .expect("run weft")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn warnings(out: &Output) -> Vec<String> {
    text(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("weft: warning:"))
        .map(str::to_string)
        .collect()
}

/// Runs as one process of rank 0, whatever the launcher said.
fn assert_alone(out: &Output) {
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "rank 0 size 1 sum 5\n");
}

#[test]
fn launcher_rank_0_warns_once_and_runs_alone() {
    let out = run(&[("PMI_SIZE", "2"), ("PMI_RANK", "0")]);
    assert_alone(&out);
    assert_eq!(
        warnings(&out),
        [
            "weft: warning: launched by mpirun with 2 processes, but this weft was built \
          without MPI, so each process runs alone as rank 0 of 1: rebuild with \
          `cargo build --release --features mpi` (needs the MPI headers and libclang: \
          `apt-get install mpich libmpich-dev libclang-dev`)"
        ]
    );
    // The warning is the only thing on stderr.
    assert_eq!(text(&out.stderr).lines().count(), 1);
}

#[test]
fn other_launcher_ranks_run_alone_silently() {
    let out = run(&[("PMI_SIZE", "2"), ("PMI_RANK", "1")]);
    assert_alone(&out);
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn open_mpi_variables_are_read_too() {
    let out = run(&[("OMPI_COMM_WORLD_SIZE", "3"), ("OMPI_COMM_WORLD_RANK", "0")]);
    assert_alone(&out);
    assert_eq!(warnings(&out).len(), 1);
    assert!(warnings(&out)[0].contains("with 3 processes"));
    let out = run(&[("OMPI_COMM_WORLD_SIZE", "3"), ("OMPI_COMM_WORLD_RANK", "2")]);
    assert_alone(&out);
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn a_launcher_that_names_no_rank_gets_the_warning_from_every_process() {
    let out = run(&[("PMI_SIZE", "2")]);
    assert_alone(&out);
    assert_eq!(warnings(&out).len(), 1);
}

#[test]
fn one_process_or_no_launcher_is_silent() {
    for vars in [&[("PMI_SIZE", "1"), ("PMI_RANK", "0")][..], &[]] {
        let out = run(vars);
        assert_alone(&out);
        assert_eq!(text(&out.stderr), "");
    }
}
