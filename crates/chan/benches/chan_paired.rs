//! Weft's channels beside crossbeam-channel, measured in interleaved pairs.
//!
//! `benches/chan.rs` (criterion) times all of Weft's samples of a scenario
//! and then all of crossbeam's. On the 2-vCPU development VM the machine
//! itself changes under a run that long: the two vCPUs move between
//! sharing a core complex and not (cache-line transfers 2-5x dearer), and
//! the threads of the blocking scenarios flip between spinning and parking.
//! Both libraries slow down together, but one may be timed in the fast
//! state and the other in the slow one: single criterion ratios of the
//! same code ranged from 0.38 to 2.27.
//!
//! Here every sample of Weft is paired with one of crossbeam taken right
//! beside it (alternating which goes first), and the statistic is the
//! median of the per-pair ratios, with a distribution-free 95% confidence
//! interval (order statistics of the binomial sign test). Both wall time
//! and process CPU time (`CLOCK_PROCESS_CPUTIME_ID`: all threads, spinning
//! included) are reported.
//!
//! Run: `cargo bench -p weft-chan --bench chan_paired -- [NAME ...] [--pairs N]
//! [--sample-ms MS] [--min-reps K] [--rounds R]`. A NAME selects a scenario
//! (`spsc/1`) or a family (`spsc`); none runs all. Defaults: 31 pairs,
//! samples of at least 20 ms and at least 10 iterations where that keeps
//! a sample within 200 ms (a sample repeats the scenario's iteration), one
//! round.
//!
//! Why ten iterations: in the scenarios with more threads than CPUs one
//! iteration runs in one of two states (about 4 ms, when a sender and a
//! receiver hold the two CPUs, and 15-50 ms, when a waiter's yield
//! switches threads about once per two messages), picked afresh each
//! iteration. A sample of one iteration is a draw of that lottery: paired
//! with itself, crossbeam's `mpmc/1` gave intervals of [0.25, 1.40] and
//! [0.31, 1.24], `spsc/1` [0.76, 2.28]; with ten, [0.89, 1.14] and
//! [0.84, 1.23].
//!
//! With `--rounds R` the whole list of scenarios is run R times
//! over and each scenario's statistics pool its pairs from every round:
//! a round of one scenario lasts seconds, within one state of the machine,
//! and R rounds spread it over minutes, so the interval covers the states
//! the machine moved through rather than the one it happened to be in.
//! `--only weft` (or `crossbeam`) runs one side alone, for `perf`.
//! `--same weft` (or `crossbeam`) pairs a library with itself: an A/A run,
//! whose intervals show how far the ratio strays when nothing differs.
//! Results: docs/performance.md.

use std::time::Instant;

mod common;
use common::*;

/// Process CPU time (every thread), seconds.
fn cpu_now() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Wall and CPU seconds of one sample.
type Sample = (f64, f64);

/// One sample: `reps` iterations of `f`, per iteration.
fn sample(f: &dyn Fn(), reps: u32) -> Sample {
    let (t0, c0) = (Instant::now(), cpu_now());
    for _ in 0..reps {
        f();
    }
    let (wall, cpu) = (t0.elapsed().as_secs_f64(), cpu_now() - c0);
    (wall / reps as f64, cpu / reps as f64)
}

/// Iterations per sample, given one takes `secs`: enough for `sample_ms`,
/// and at least `min_reps` as long as that keeps the sample within
/// `10 * sample_ms`.
fn reps_for(sample_ms: f64, min_reps: u32, secs: f64) -> u32 {
    let enough = (sample_ms * 1e-3 / secs).ceil() as u32;
    let cap = (10.0 * sample_ms * 1e-3 / secs) as u32;
    enough.max(min_reps.min(cap)).max(1)
}

/// The median of the wall (`.0`) or CPU (`.1`) column of some samples.
fn median_by(v: &[Sample], f: fn(&Sample) -> f64) -> f64 {
    median(&v.iter().map(f).collect::<Vec<_>>())
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// The largest `k` with P(Binomial(n, 1/2) < k) <= 0.025: the median lies
/// between the k-th smallest and the k-th largest value with at least 95%
/// confidence (for n >= 6; 0 below, where no such interval exists).
fn sign_test_rank(n: usize) -> usize {
    let mut k = 0;
    let mut below = 0.0; // P(X < k + 1) as k grows
    let mut pmf = 0.5f64.powi(n as i32); // P(X = 0)
    for i in 0..n {
        below += pmf;
        if below > 0.025 {
            break;
        }
        k = i + 1;
        pmf *= (n - i) as f64 / (i + 1) as f64;
    }
    k
}

/// `median [lo, hi]` of the ratios, and how many are below 1.
fn summary(ratios: &[f64]) -> String {
    let mut s = ratios.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let k = sign_test_rank(n);
    let ci = if k >= 1 {
        format!("[{:.2}, {:.2}]", s[k - 1], s[n - k])
    } else {
        "-".into()
    };
    let wins = s.iter().filter(|&&r| r < 1.0).count();
    format!("**{:.2}** {ci} | {wins}/{n}", median(&s))
}

/// One side of a pair: `weft` or `crossbeam`.
fn side<'a>(s: &'a Scenario, lib: &str) -> &'a dyn Fn() {
    if lib == "weft" {
        &*s.weft
    } else {
        &*s.crossbeam
    }
}

const USAGE: &str = "usage: chan_paired [NAME ...] [--pairs N] [--sample-ms MS] [--min-reps K] \
                     [--rounds R] [--only weft|crossbeam] [--same weft|crossbeam]";

/// Bad arguments: says what and how to call, and exits 2.
fn usage(problem: &str) -> ! {
    eprintln!("chan_paired: {problem}\n{USAGE}");
    std::process::exit(2)
}

/// The number after option `opt`.
fn number<T: std::str::FromStr>(opt: &str, v: Option<String>) -> T {
    v.and_then(|v| v.parse().ok())
        .unwrap_or_else(|| usage(&format!("{opt} needs a number")))
}

/// The library named after option `opt`.
fn library(opt: &str, v: Option<String>) -> String {
    match v.as_deref() {
        Some(lib @ ("weft" | "crossbeam")) => lib.to_string(),
        _ => usage(&format!("{opt} needs weft or crossbeam")),
    }
}

fn ms(secs: f64) -> String {
    format!("{:.3}", secs * 1e3)
}

fn main() {
    let mut names = Vec::new();
    let mut pairs = 31usize;
    let mut sample_ms = 20.0f64;
    let mut min_reps = 10u32;
    let mut rounds = 1usize;
    let mut only = None;
    let mut same = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bench" => {}
            "--help" | "-h" => {
                println!("{USAGE}");
                return;
            }
            "--pairs" => pairs = number(&a, args.next()),
            "--sample-ms" => sample_ms = number(&a, args.next()),
            "--min-reps" => min_reps = number(&a, args.next()),
            "--rounds" => rounds = number(&a, args.next()),
            "--only" => only = Some(library(&a, args.next())),
            "--same" => same = Some(library(&a, args.next())),
            _ if a.starts_with("--") => usage(&format!("unknown option {a}")),
            _ => names.push(a),
        }
    }
    let selected = |name: &str| {
        names.is_empty()
            || names
                .iter()
                .any(|n| name == n || name.starts_with(&format!("{n}/")))
    };
    if let Some(lib) = only {
        for s in scenarios().into_iter().filter(|s| selected(&s.name)) {
            let f = side(&s, &lib);
            let reps = reps_for(sample_ms, min_reps, sample(f, 1).0);
            let v: Vec<_> = (0..pairs).map(|_| sample(f, reps)).collect();
            let (wall, cpu) = (median_by(&v, |x| x.0), median_by(&v, |x| x.1));
            println!("{} {lib}: wall {} ms, CPU {} ms", s.name, ms(wall), ms(cpu));
        }
        return;
    }
    // The two sides of every pair: Weft and crossbeam, or with `--same`
    // one library twice (an A/A run: how wide the interval is when nothing
    // differs).
    let a_name = same.as_deref().unwrap_or("weft");
    let b_name = same.as_deref().unwrap_or("crossbeam");
    println!(
        "{pairs} interleaved pairs per scenario and round, {rounds} round(s), samples of >= \
         {sample_ms} ms; ratio = {a_name} / {b_name} per pair: median [95% CI] | pairs where \
         the first was faster\n"
    );
    let chosen: Vec<Scenario> = scenarios()
        .into_iter()
        .filter(|s| selected(&s.name))
        .collect();
    // Per scenario: Weft's and crossbeam's samples, pooled over the rounds.
    let mut taken: Vec<(Vec<Sample>, Vec<Sample>)> = vec![Default::default(); chosen.len()];
    for round in 0..rounds {
        if rounds > 1 {
            eprintln!("round {} of {rounds}", round + 1);
        }
        for (s, (w, c)) in chosen.iter().zip(&mut taken) {
            let (a, b) = (side(s, a_name), side(s, b_name));
            // Warm up both, and size the samples from the slower of the two.
            let mut one = 0.0f64;
            for _ in 0..2 {
                one = one.max(sample(a, 1).0).max(sample(b, 1).0);
            }
            let reps = reps_for(sample_ms, min_reps, one);
            for i in 0..pairs {
                if i % 2 == 0 {
                    w.push(sample(a, reps));
                    c.push(sample(b, reps));
                } else {
                    c.push(sample(b, reps));
                    w.push(sample(a, reps));
                }
            }
        }
    }
    println!(
        "| scenario | {a_name} wall (ms) | {b_name} wall (ms) | wall ratio | first faster | \
         {a_name} CPU (ms) | {b_name} CPU (ms) | CPU ratio | first cheaper |"
    );
    println!("|---|---:|---:|---|---:|---:|---:|---|---:|");
    for (s, (w, c)) in chosen.iter().zip(&taken) {
        let walls: Vec<f64> = w.iter().zip(c).map(|(w, c)| w.0 / c.0).collect();
        let cpus: Vec<f64> = w.iter().zip(c).map(|(w, c)| w.1 / c.1).collect();
        println!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            s.name,
            ms(median_by(w, |x| x.0)),
            ms(median_by(c, |x| x.0)),
            summary(&walls),
            ms(median_by(w, |x| x.1)),
            ms(median_by(c, |x| x.1)),
            summary(&cpus),
        );
    }
}
