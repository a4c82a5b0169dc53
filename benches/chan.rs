//! Weft's channels beside crossbeam-channel, in the same run, from plain
//! threads (the `_blocking` forms): sequential, SPSC, MPSC, MPMC at capacity
//! 0, 1 and 1024, select over 4 channels (blocking, and with a default
//! when nothing is ready), unbuffered ping-pong.
//! Run: `cargo bench --bench chan` (shorter: append `-- --warm-up-time 0.5
//! --measurement-time 2`). Results and ratios: docs/performance.md.

use std::hint::black_box;
use std::thread;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use weft::chan::{Chan, Outcome, Select};

/// Messages per iteration in the threaded scenarios.
const N: u64 = 20_000;

/// The two implementations behind one face.
trait Flavor {
    const NAME: &'static str;
    type S: Clone + Send + 'static;
    type R: Clone + Send + 'static;
    fn new(cap: usize) -> (Self::S, Self::R);
    fn send(s: &Self::S, v: u64);
    fn try_send(s: &Self::S, v: u64) -> bool;
    fn recv(r: &Self::R) -> Option<u64>;
}

struct Weft;
impl Flavor for Weft {
    const NAME: &'static str = "weft";
    type S = Chan<u64>;
    type R = Chan<u64>;
    fn new(cap: usize) -> (Chan<u64>, Chan<u64>) {
        let c = Chan::new(cap);
        (c.clone(), c)
    }
    fn send(s: &Chan<u64>, v: u64) {
        let _ = s.send_blocking(v);
    }
    fn try_send(s: &Chan<u64>, v: u64) -> bool {
        s.try_send(v).is_ok()
    }
    fn recv(r: &Chan<u64>) -> Option<u64> {
        r.recv_blocking()
    }
}

struct Crossbeam;
impl Flavor for Crossbeam {
    const NAME: &'static str = "crossbeam";
    type S = crossbeam_channel::Sender<u64>;
    type R = crossbeam_channel::Receiver<u64>;
    fn new(cap: usize) -> (Self::S, Self::R) {
        crossbeam_channel::bounded(cap)
    }
    fn send(s: &Self::S, v: u64) {
        let _ = s.send(v);
    }
    fn try_send(s: &Self::S, v: u64) -> bool {
        s.try_send(v).is_ok()
    }
    fn recv(r: &Self::R) -> Option<u64> {
        r.recv().ok()
    }
}

/// One thread: fill up to `cap`, then drain, `N` values in all.
fn sequential<F: Flavor>(cap: usize) {
    let (s, r) = F::new(cap);
    let mut left = N;
    while left > 0 {
        let k = (cap as u64).min(left);
        for i in 0..k {
            F::try_send(&s, i);
        }
        for _ in 0..k {
            black_box(F::recv(&r));
        }
        left -= k;
    }
}

/// `senders` threads send `N` values in all; `receivers` threads take them.
fn mpmc<F: Flavor>(cap: usize, senders: u64, receivers: u64) {
    let (s, r) = F::new(cap);
    thread::scope(|scope| {
        for _ in 0..senders {
            let s = s.clone();
            scope.spawn(move || {
                for i in 0..N / senders {
                    F::send(&s, i);
                }
            });
        }
        for _ in 0..receivers {
            let r = r.clone();
            scope.spawn(move || {
                for _ in 0..N / receivers {
                    black_box(F::recv(&r));
                }
            });
        }
    });
}

/// Two threads bounce one value over two unbuffered channels.
fn ping_pong<F: Flavor>(rounds: u64) {
    let (s1, r1) = F::new(0);
    let (s2, r2) = F::new(0);
    thread::scope(|scope| {
        scope.spawn(move || {
            for _ in 0..rounds {
                if let Some(v) = F::recv(&r1) {
                    F::send(&s2, v);
                }
            }
        });
        for i in 0..rounds {
            F::send(&s1, i);
            black_box(F::recv(&r2));
        }
    });
}

/// Four sender threads on four channels; the main thread selects.
fn select_weft(cap: usize) {
    let chans: Vec<Chan<u64>> = (0..4).map(|_| Chan::new(cap)).collect();
    thread::scope(|scope| {
        for c in &chans {
            scope.spawn(move || {
                for i in 0..N / 4 {
                    let _ = c.send_blocking(i);
                }
            });
        }
        let mut rng = fastrand::Rng::with_seed(1);
        for _ in 0..N {
            let mut sel = Select::new();
            for c in &chans {
                sel.recv_ref(Some(c));
            }
            let got = sel.select_blocking(&mut rng);
            assert!(matches!(got.outcome, Outcome::Received(Some(_))));
        }
    });
}

fn select_crossbeam(cap: usize) {
    let chans: Vec<_> = (0..4)
        .map(|_| crossbeam_channel::bounded::<u64>(cap))
        .collect();
    thread::scope(|scope| {
        for (s, _) in &chans {
            scope.spawn(move || {
                for i in 0..N / 4 {
                    let _ = s.send(i);
                }
            });
        }
        for _ in 0..N {
            let mut sel = crossbeam_channel::Select::new();
            for (_, r) in &chans {
                sel.recv(r);
            }
            let op = sel.select();
            let i = op.index();
            black_box(op.recv(&chans[i].1).ok());
        }
    });
}

/// One thread: `N` selects with a default over 4 empty buffered channels
/// (nothing is ever ready: the cost of finding that out).
fn try_select_empty_weft() {
    let chans: Vec<Chan<u64>> = (0..4).map(|_| Chan::new(1024)).collect();
    let mut rng = fastrand::Rng::with_seed(1);
    for _ in 0..N {
        let mut sel = Select::new();
        for c in &chans {
            sel.recv_ref(Some(c));
        }
        assert!(black_box(sel.try_select(&mut rng)).is_none());
    }
}

fn try_select_empty_crossbeam() {
    let chans: Vec<_> = (0..4)
        .map(|_| crossbeam_channel::bounded::<u64>(1024))
        .collect();
    for _ in 0..N {
        let mut sel = crossbeam_channel::Select::new();
        for (_, r) in &chans {
            sel.recv(r);
        }
        assert!(black_box(sel.try_select()).is_err());
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("chan");
    g.throughput(Throughput::Elements(N));
    for cap in [1usize, 1024] {
        g.bench_function(BenchmarkId::new(format!("seq/{}", Weft::NAME), cap), |b| {
            b.iter(|| sequential::<Weft>(cap))
        });
        g.bench_function(
            BenchmarkId::new(format!("seq/{}", Crossbeam::NAME), cap),
            |b| b.iter(|| sequential::<Crossbeam>(cap)),
        );
    }
    for (name, s, r) in [("spsc", 1, 1), ("mpsc", 4, 1), ("mpmc", 4, 4)] {
        for cap in [0usize, 1, 1024] {
            g.bench_function(
                BenchmarkId::new(format!("{name}/{}", Weft::NAME), cap),
                |b| b.iter(|| mpmc::<Weft>(cap, s, r)),
            );
            g.bench_function(
                BenchmarkId::new(format!("{name}/{}", Crossbeam::NAME), cap),
                |b| b.iter(|| mpmc::<Crossbeam>(cap, s, r)),
            );
        }
    }
    for cap in [0usize, 1024] {
        g.bench_function(BenchmarkId::new("select4/weft", cap), |b| {
            b.iter(|| select_weft(cap))
        });
        g.bench_function(BenchmarkId::new("select4/crossbeam", cap), |b| {
            b.iter(|| select_crossbeam(cap))
        });
    }
    g.bench_function(BenchmarkId::new("tryselect4/weft", 1024), |b| {
        b.iter(try_select_empty_weft)
    });
    g.bench_function(BenchmarkId::new("tryselect4/crossbeam", 1024), |b| {
        b.iter(try_select_empty_crossbeam)
    });
    g.finish();
    let mut g = c.benchmark_group("chan");
    const ROUNDS: u64 = 2_000;
    g.throughput(Throughput::Elements(ROUNDS));
    g.bench_function("pingpong/weft", |b| b.iter(|| ping_pong::<Weft>(ROUNDS)));
    g.bench_function("pingpong/crossbeam", |b| {
        b.iter(|| ping_pong::<Crossbeam>(ROUNDS))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
