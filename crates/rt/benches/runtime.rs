//! Runtime benchmarks, Weft beside tokio and Go in one run (`harness = false`):
//!
//!     cargo bench -p weft-rt --bench runtime                  # all scenarios, table at the end
//!     cargo bench -p weft-rt --bench runtime -- --reps 5 --workers 2
//!     cargo bench -p weft-rt --bench runtime -- --only pingpong   # Weft only, for profiling
//!
//! Scenarios (the Go programs in `benches/go/` do the same):
//! - `blocked_100k`: 100,000 tasks blocked on a channel receive at once;
//!   resident memory added, measured in a fresh child process per runtime.
//! - `spawn_1m`: 1,000,000 short tasks spawned and finished.
//! - `daisy_10k`: a chain of 10,000 tasks passing a value (Pike's whispers)
//!   over unbuffered channels, spawning included.
//! - `pingpong`: two tasks handing a value back and forth over two
//!   unbuffered channels; time per hand-off.
//!
//! Columns: `weft` (Weft's scheduler, `weft_chan`), `tokio+chan` (tokio's
//! multi-thread scheduler running the same code with `weft_chan`: the
//! "build on tokio" alternative), `tokio` (tokio with its own `tokio::sync`
//! channels), `go` (`benches/go`, GOMAXPROCS = workers). Times are the best of
//! `--reps` runs. Nothing here is timed in CI (CI only compiles benches).

use std::future::Future;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use weft_chan::Chan;
use weft_rt::{self as runtime, Config, RunOutcome, Runtime, TaskEnd};

const BLOCKED: usize = 100_000;
const SPAWNED: usize = 1_000_000;
const CHAIN: usize = 10_000;
const ROUNDS: usize = 200_000;

/// Which scheduler and which channels run a scenario.
#[derive(Clone, Copy, PartialEq)]
enum Exec {
    /// Weft's runtime with `weft_chan`.
    Weft,
    /// tokio's runtime with `weft_chan`.
    TokioChan,
    /// tokio's runtime with `tokio::sync`.
    Tokio,
}

/// Runs `f` as the main task of a fresh runtime of `workers` threads.
fn run_on<F>(exec: Exec, workers: usize, f: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    match exec {
        Exec::Weft => {
            let rt = Runtime::new(Config {
                workers,
                seed: 1,
                trace: None,
                max_tasks: None,
            });
            let out = rt.run(async move {
                f.await;
                TaskEnd::Returned
            });
            assert_eq!(out, RunOutcome::Returned);
        }
        Exec::TokioChan | Exec::Tokio => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .build()
                .unwrap();
            // Main runs as a task too, not on the blocking caller thread.
            rt.block_on(async move { tokio::spawn(f).await.unwrap() });
        }
    }
}

fn spawn_on<F>(exec: Exec, f: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    match exec {
        Exec::Weft => {
            runtime::spawn(async move {
                f.await;
                TaskEnd::Returned
            })
            .unwrap();
        }
        Exec::TokioChan | Exec::Tokio => {
            tokio::spawn(f);
        }
    }
}

async fn yield_on(exec: Exec) {
    match exec {
        Exec::Weft => runtime::yield_now().await,
        Exec::TokioChan | Exec::Tokio => tokio::task::yield_now().await,
    }
}

fn rss_kb() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// `blocked_100k`, inside a child process: prints the RSS added in KB.
fn blocked(exec: Exec, workers: usize) {
    let before = rss_kb();
    let added = Arc::new(AtomicUsize::new(0));
    let a = added.clone();
    run_on(exec, workers, async move {
        let started = Arc::new(AtomicUsize::new(0));
        let done = Chan::<()>::new(BLOCKED);
        let wait_started = |started: Arc<AtomicUsize>| async move {
            while started.load(Ordering::Relaxed) < BLOCKED {
                yield_on(exec).await;
            }
        };
        if exec == Exec::Tokio {
            let (tx, rx) = tokio::sync::watch::channel(false);
            for _ in 0..BLOCKED {
                let (mut rx, started, done) = (rx.clone(), started.clone(), done.clone());
                spawn_on(exec, async move {
                    started.fetch_add(1, Ordering::Relaxed);
                    rx.changed().await.ok();
                    done.try_send(()).ok();
                });
            }
            wait_started(started).await;
            a.store(rss_kb().saturating_sub(before) as usize, Ordering::Relaxed);
            tx.send(true).ok();
        } else {
            // Every task blocks receiving from one channel; closing it releases them.
            let release = Chan::<()>::new(0);
            for _ in 0..BLOCKED {
                let (release, started, done) = (release.clone(), started.clone(), done.clone());
                spawn_on(exec, async move {
                    started.fetch_add(1, Ordering::Relaxed);
                    release.recv().await;
                    done.try_send(()).ok();
                });
            }
            wait_started(started).await;
            a.store(rss_kb().saturating_sub(before) as usize, Ordering::Relaxed);
            release.close().ok();
        }
        for _ in 0..BLOCKED {
            done.recv().await;
        }
    });
    println!("{}", added.load(Ordering::Relaxed));
}

fn spawn_1m(exec: Exec, workers: usize) -> Duration {
    let t0 = Instant::now();
    run_on(exec, workers, async move {
        let left = Arc::new(AtomicUsize::new(SPAWNED));
        let fin = Chan::<()>::new(1);
        for _ in 0..SPAWNED {
            let (left, fin) = (left.clone(), fin.clone());
            spawn_on(exec, async move {
                if left.fetch_sub(1, Ordering::AcqRel) == 1 {
                    fin.try_send(()).ok();
                }
            });
        }
        fin.recv().await;
    });
    t0.elapsed()
}

fn daisy_10k(exec: Exec, workers: usize) -> Duration {
    let t0 = Instant::now();
    run_on(exec, workers, async move {
        if exec == Exec::Tokio {
            let (first_tx, leftmost) = tokio::sync::oneshot::channel::<usize>();
            let mut left = first_tx;
            for _ in 0..CHAIN {
                let (tx, right) = tokio::sync::oneshot::channel::<usize>();
                spawn_on(exec, async move {
                    if let Ok(v) = right.await {
                        left.send(v + 1).ok();
                    }
                });
                left = tx;
            }
            left.send(1).ok();
            assert_eq!(leftmost.await.ok(), Some(CHAIN + 1));
        } else {
            let leftmost = Chan::<usize>::new(0);
            let mut left = leftmost.clone();
            for _ in 0..CHAIN {
                let right = Chan::<usize>::new(0);
                let r = right.clone();
                spawn_on(exec, async move {
                    if let Some(v) = r.recv().await {
                        left.send(v + 1).await.ok();
                    }
                });
                left = right;
            }
            spawn_on(exec, async move {
                left.send(1).await.ok();
            });
            assert_eq!(leftmost.recv().await, Some(CHAIN + 1));
        }
    });
    t0.elapsed()
}

/// Returns the time per hand-off.
fn pingpong(exec: Exec, workers: usize) -> Duration {
    let el = Arc::new(std::sync::Mutex::new(Duration::ZERO));
    let e = el.clone();
    run_on(exec, workers, async move {
        let t0;
        if exec == Exec::Tokio {
            let (ping_tx, mut ping_rx) = tokio::sync::mpsc::channel::<u64>(1);
            let (pong_tx, mut pong_rx) = tokio::sync::mpsc::channel::<u64>(1);
            spawn_on(exec, async move {
                while let Some(v) = ping_rx.recv().await {
                    if pong_tx.send(v + 1).await.is_err() {
                        break;
                    }
                }
            });
            t0 = Instant::now();
            let mut v = 0;
            for _ in 0..ROUNDS {
                ping_tx.send(v).await.ok();
                v = pong_rx.recv().await.unwrap_or(0);
            }
        } else {
            let (ping, pong) = (Chan::<u64>::new(0), Chan::<u64>::new(0));
            let (pi, po) = (ping.clone(), pong.clone());
            spawn_on(exec, async move {
                while let Some(v) = pi.recv().await {
                    if po.send(v + 1).await.is_err() {
                        break;
                    }
                }
            });
            t0 = Instant::now();
            let mut v = 0;
            for _ in 0..ROUNDS {
                ping.send(v).await.ok();
                v = pong.recv().await.unwrap_or(0);
            }
            ping.close().ok();
        }
        *e.lock().unwrap() = t0.elapsed() / (2 * ROUNDS as u32);
    });
    let d = *el.lock().unwrap();
    d
}

fn best(reps: usize, mut f: impl FnMut() -> Duration) -> Duration {
    (0..reps).map(|_| f()).min().unwrap_or_default()
}

/// Runs `blocked_100k` for `exec` in a fresh process; KB added.
fn blocked_in_child(exec: &str, workers: usize) -> Option<f64> {
    let exe = std::env::current_exe().ok()?;
    let out = Command::new(exe)
        .args(["--child-blocked", exec, "--workers", &workers.to_string()])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// Builds and runs the Go programs; `name -> value`.
fn go_figures(reps: usize, workers: usize) -> Vec<(String, f64)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = dir.join("target").join("weft-gobench");
    let built = Command::new("go")
        .args(["build", "-o"])
        .arg(&bin)
        .arg(".")
        .current_dir(dir.join("benches/go"))
        .status()
        .is_ok_and(|s| s.success());
    if !built {
        eprintln!("go not available: Go column left empty");
        return Vec::new();
    }
    let Ok(out) = Command::new(&bin)
        .args(["-reps", &reps.to_string()])
        .env("GOMAXPROCS", workers.to_string())
        .output()
    else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            Some((it.next()?.to_string(), it.next()?.parse().ok()?))
        })
        .collect()
}

fn arg_value(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// A timed scenario: name, unit, function.
type Scenario = (&'static str, &'static str, fn(Exec, usize) -> Duration);

/// One table row: scenario, unit, then weft, tokio+chan, tokio.
struct Row {
    name: &'static str,
    unit: &'static str,
    values: [Option<f64>; 3],
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let workers = arg_value(&args, "--workers")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if let Some(exec) = arg_value(&args, "--child-blocked") {
        let exec = match exec.as_str() {
            "tokio" => Exec::Tokio,
            "tokio+chan" => Exec::TokioChan,
            _ => Exec::Weft,
        };
        blocked(exec, workers);
        return;
    }
    let reps: usize = arg_value(&args, "--reps")
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let only = arg_value(&args, "--only");
    println!("workers {workers}, best of {reps}");

    let mut rows = Vec::new();
    if only.is_none() {
        let mb = |e: &str| blocked_in_child(e, workers).map(|kb| kb / 1024.0);
        rows.push(Row {
            name: "blocked_100k_total",
            unit: "MB",
            values: [mb("weft"), mb("tokio+chan"), mb("tokio")],
        });
    }
    let scenarios: [Scenario; 3] = [
        ("spawn_1m", "ms", spawn_1m),
        ("daisy_10k", "ms", daisy_10k),
        ("pingpong", "us/hand-off", pingpong),
    ];
    for (name, unit, f) in scenarios {
        if only.as_ref().is_some_and(|o| o != name) {
            continue;
        }
        let conv = |d: Duration| {
            Some(if unit == "ms" {
                d.as_secs_f64() * 1e3
            } else {
                d.as_secs_f64() * 1e6
            })
        };
        let w = conv(best(reps, || f(Exec::Weft, workers)));
        if only.is_some() {
            println!("{name} weft {w:?} {unit}");
            return;
        }
        let tc = conv(best(reps, || f(Exec::TokioChan, workers)));
        let t = conv(best(reps, || f(Exec::Tokio, workers)));
        rows.push(Row {
            name,
            unit,
            values: [w, tc, t],
        });
    }
    let go = go_figures(reps, workers);
    let fmt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
        _ => "-".to_string(),
    };
    println!("\n| scenario | unit | weft | tokio+chan | tokio | go | weft/go | weft/tokio+chan | weft/tokio |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        let g = go.iter().find(|(n, _)| n == r.name).map(|(_, v)| *v);
        let [w, tc, t] = r.values;
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.name,
            r.unit,
            fmt(w),
            fmt(tc),
            fmt(t),
            fmt(g),
            ratio(w, g),
            ratio(w, tc),
            ratio(w, t)
        );
    }
}
