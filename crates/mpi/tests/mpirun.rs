//! The scenarios of `support/mod.rs` as real processes: each test launches
//! `mpirun -np 2` and `-np 3` on this test binary, whose children (marked
//! by `WEFT_MPI_SCENARIO`) each run one process of the scenario over MPI
//! and print their result. Built only with `--features mpi`. Where
//! `mpirun` is missing the tests say so and pass, except in CI (`CI` set),
//! where they fail.

mod support;

use std::process::Command;

use support::{check, host, run_rank, scenario, RankOut};
use weft_mpi::End;

const SCENARIO_VAR: &str = "WEFT_MPI_SCENARIO";

/// The child's part: one process of the scenario; prints its result and
/// exits with its code.
fn child(name: &str) -> ! {
    let h = host();
    let world = match weft_mpi::launch(h.clone().as_host()) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(70)
        }
    };
    let out = run_rank(world, h, scenario(name));
    println!("{}", encode(&out));
    std::process::exit(out.code)
}

fn encode(o: &RankOut) -> String {
    let end = match &o.end {
        None => "none".to_string(),
        Some(End::Finished) => "finished".to_string(),
        Some(End::Abort { rank, code }) => format!("abort:{rank}:{code}"),
        Some(End::Deadlock { report: None }) => "deadlock".to_string(),
        Some(End::Deadlock { report: Some(l) }) => format!("report:{}", l.join("\u{1e}")),
    };
    format!(
        "WEFT-RESULT\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}",
        o.rank,
        o.code,
        end,
        o.lines.join("\u{1e}")
    )
}

fn decode(line: &str) -> Option<RankOut> {
    // libtest may have written `test NAME ... ` on the same line.
    let at = line.find("WEFT-RESULT\u{1f}")?;
    let mut f = line[at + "WEFT-RESULT\u{1f}".len()..].split('\u{1f}');
    let rank = f.next()?.parse().ok()?;
    let code = f.next()?.parse().ok()?;
    let end = f.next()?;
    let split = |s: &str| -> Vec<String> {
        if s.is_empty() {
            Vec::new()
        } else {
            s.split('\u{1e}').map(String::from).collect()
        }
    };
    let end = match end {
        "none" => None,
        "finished" => Some(End::Finished),
        "deadlock" => Some(End::Deadlock { report: None }),
        e if e.starts_with("abort:") => {
            let mut p = e["abort:".len()..].split(':');
            Some(End::Abort {
                rank: p.next()?.parse().ok()?,
                code: p.next()?.parse().ok()?,
            })
        }
        e => Some(End::Deadlock {
            report: Some(split(e.strip_prefix("report:")?)),
        }),
    };
    Some(RankOut {
        rank,
        code,
        end,
        lines: split(f.next()?),
    })
}

/// `mpirun` and the flags it needs here, or why not.
fn mpirun() -> Option<Vec<String>> {
    let version = Command::new("mpirun").arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&version.stdout).to_string()
        + &String::from_utf8_lossy(&version.stderr);
    let mut cmd = vec!["mpirun".to_string()];
    if text.contains("Open MPI") || text.contains("OpenRTE") {
        // Open MPI refuses root without a flag, and more processes than
        // cores without another (CI has 2 cores).
        cmd.push("--oversubscribe".into());
        // SAFETY: `geteuid` has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            cmd.push("--allow-run-as-root".into());
        }
    }
    Some(cmd)
}

fn run(test: &str, name: &str, n: usize) {
    if let Ok(s) = std::env::var(SCENARIO_VAR) {
        if s == name {
            child(name);
        }
        return;
    }
    let Some(cmd) = mpirun() else {
        if std::env::var_os("CI").is_some() {
            panic!("mpirun is missing (CI must install MPI: .ci/run)");
        }
        eprintln!("skipped: mpirun is missing (apt-get install mpich)");
        return;
    };
    let exe = std::env::current_exe().expect("the test binary");
    let out = Command::new("timeout")
        .arg("300")
        .args(&cmd)
        .args(["-np", &n.to_string()])
        .arg(exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(SCENARIO_VAR, name)
        .output()
        .expect("run mpirun");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut outs: Vec<RankOut> = stdout.lines().filter_map(decode).collect();
    outs.sort_by_key(|o| o.rank);
    assert_eq!(
        outs.len(),
        n,
        "{name} -np {n}: exit {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    check(name, &outs);
    // mpirun exits with the processes' code.
    assert_eq!(out.status.code(), Some(outs[0].code), "stderr:\n{stderr}");
}

macro_rules! mpirun_tests {
    ($($name:ident),*) => {$(
        #[test]
        fn $name() {
            for n in [2, 3] {
                run(stringify!($name), stringify!($name), n);
            }
        }
    )*};
}

mpirun_tests!(
    collectives,
    mismatch,
    channels,
    credits,
    coll_deadlock,
    busy_wire,
    panics,
    exits,
    late_finish,
    attached
);
