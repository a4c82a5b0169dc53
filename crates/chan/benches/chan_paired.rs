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
//! [--sample-ms MS] [--rounds R]`. A NAME selects a scenario (`spsc/1`) or
//! a family (`spsc`); none runs all. Defaults: 31 pairs, samples of at
//! least 20 ms (a sample repeats the scenario's iteration until then), one
//! round. With `--rounds R` the whole list of scenarios is run R times
//! over and each scenario's statistics pool its pairs from every round:
//! a round of one scenario lasts seconds, within one state of the machine,
//! and R rounds spread it over minutes, so the interval covers the states
//! the machine moved through rather than the one it happened to be in.
//! `--only weft` (or `crossbeam`) runs one side alone, for `perf`. Results:
//! docs/performance.md.

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

/// Iterations per sample: enough for `sample_ms`, given one takes `secs`.
fn reps_for(sample_ms: f64, secs: f64) -> u32 {
    ((sample_ms * 1e-3 / secs).ceil() as u32).max(1)
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

fn ms(secs: f64) -> String {
    format!("{:.3}", secs * 1e3)
}

fn main() {
    let mut names = Vec::new();
    let mut pairs = 31usize;
    let mut sample_ms = 20.0f64;
    let mut rounds = 1usize;
    let mut only = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bench" => {}
            "--pairs" => pairs = args.next().and_then(|v| v.parse().ok()).expect("--pairs N"),
            "--sample-ms" => {
                sample_ms = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--sample-ms MS")
            }
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--rounds N")
            }
            "--only" => only = Some(args.next().expect("--only weft|crossbeam")),
            _ if a.starts_with("--") => panic!("unknown option {a}"),
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
            let f = match lib.as_str() {
                "weft" => &s.weft,
                "crossbeam" => &s.crossbeam,
                _ => panic!("--only weft|crossbeam"),
            };
            let reps = reps_for(sample_ms, sample(&**f, 1).0);
            let v: Vec<_> = (0..pairs).map(|_| sample(&**f, reps)).collect();
            let (wall, cpu) = (median_by(&v, |x| x.0), median_by(&v, |x| x.1));
            println!("{} {lib}: wall {} ms, CPU {} ms", s.name, ms(wall), ms(cpu));
        }
        return;
    }
    println!(
        "{pairs} interleaved pairs per scenario and round, {rounds} round(s), samples of >= \
         {sample_ms} ms; ratio = weft / crossbeam per pair: median [95% CI] | pairs where weft \
         was faster\n"
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
            // Warm up both, and size the samples from the slower of the two.
            let mut one = 0.0f64;
            for _ in 0..2 {
                one = one
                    .max(sample(&*s.weft, 1).0)
                    .max(sample(&*s.crossbeam, 1).0);
            }
            let reps = reps_for(sample_ms, one);
            for i in 0..pairs {
                if i % 2 == 0 {
                    w.push(sample(&*s.weft, reps));
                    c.push(sample(&*s.crossbeam, reps));
                } else {
                    c.push(sample(&*s.crossbeam, reps));
                    w.push(sample(&*s.weft, reps));
                }
            }
        }
    }
    println!(
        "| scenario | weft wall (ms) | crossbeam wall (ms) | wall ratio | weft faster | \
         weft CPU (ms) | crossbeam CPU (ms) | CPU ratio | weft cheaper |"
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
