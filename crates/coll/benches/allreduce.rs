//! All-reduce benchmarks (criterion; `harness = false`):
//!
//!     cargo bench -p weft-coll --bench allreduce
//!     cargo bench -p weft-coll --bench allreduce -- 'weft/16MB'   # a subset
//!
//! `scripts/bench-coll.sh` runs this beside MPI and Gloo and prints the
//! table of docs/performance.md ("Collectives").
//!
//! - `weft/<size>/<n>`: a sum all-reduce of `f32` tensors of `size` (4KB,
//!   1MB, 16MB) among `n` members (2, 4, 8), and of one `int` (`8B`).
//!   Members are tasks on a `weft-rt` runtime of 2 workers (this machine's
//!   cores); member 0 is the main task and times `iters` consecutive
//!   all-reduces after one untimed one, so every member is running. The
//!   inputs are built once; each call shares them (`Arc`), as the
//!   interpreter does with tensors.
//! - `floor/copy64MB/<threads>`: this machine's copy bandwidth, a `memcpy`
//!   of 64 MiB (128 MiB of traffic, the footprint of the 16 MB rows) on 1
//!   thread and on 2 threads (each copying half; the threads are started
//!   once per sample and copy `iters` times). `scripts/bench-coll.sh`
//!   takes the faster as the bandwidth `B` (bytes read plus bytes written
//!   per second) and computes the memory floor of each row as
//!   `(n + 1) * size / B`: every input read once and the output written
//!   once. One output, not `n`: the members share one result buffer
//!   (tensors are immutable), so writing it once is all the algorithm must
//!   do. For the small sizes, which live in the caches, this floor is only
//!   indicative; the goal is about 16 MB.
//!
//! `WEFT_COLL_SMALL=<elems>` and `WEFT_COLL_CHUNK=<elems>` override the
//! group's `Tuning` (used to choose the defaults).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use weft_coll::{group_tuned, Data, Op, Reduce, Tuning};
use weft_rt::{Config, Runtime, TaskEnd};

/// (label, bytes); `8B` is one `int`.
const SIZES: [(&str, usize); 4] = [
    ("8B", 8),
    ("4KB", 4 << 10),
    ("1MB", 1 << 20),
    ("16MB", 16 << 20),
];
const MEMBERS: [usize; 3] = [2, 4, 8];
const WORKERS: usize = 2;

fn tuning() -> Tuning {
    let var = |k: &str| std::env::var(k).ok().and_then(|v| v.parse().ok());
    let d = Tuning::default();
    Tuning {
        small_elems: var("WEFT_COLL_SMALL").unwrap_or(d.small_elems),
        chunk_elems: var("WEFT_COLL_CHUNK").unwrap_or(d.chunk_elems),
        progress: Some(weft_rt::release_lifo),
        handoff: Some(weft_rt::hand_off_lifo),
    }
}

/// Member `rank`'s contribution: one `int` for 8 bytes, else a tensor.
fn input(bytes: usize, rank: usize) -> Data<()> {
    if bytes == 8 {
        return Data::Int(rank as i64);
    }
    let len = bytes / 4;
    Data::F32 {
        shape: Arc::from([len]),
        data: Arc::new((0..len).map(|i| (i + rank) as f32).collect()),
    }
}

/// The time of `iters` all-reduces among `n` member tasks.
fn weft(bytes: usize, n: usize, iters: u64) -> Duration {
    let members = group_tuned::<()>(n, 1, tuning()).expect("group");
    let ty: Cow<'static, str> = if bytes == 8 {
        "int".into()
    } else {
        "tensor".into()
    };
    let rt = Runtime::new(Config {
        workers: WORKERS,
        seed: 1,
        trace: None,
        max_tasks: None,
    });
    let elapsed = Arc::new(std::sync::Mutex::new(Duration::ZERO));
    let out = elapsed.clone();
    let op = Op::AllReduce(Reduce::Sum);
    rt.run(async move {
        let mut members = members.into_iter();
        let Some(m0) = members.next() else {
            return TaskEnd::Returned;
        };
        for m in members {
            let (x, ty) = (input(bytes, m.rank()), ty.clone());
            weft_rt::spawn(async move {
                for _ in 0..=iters {
                    let _ = m.call(op, ty.clone(), x.clone()).await;
                }
                TaskEnd::Returned
            })
            .expect("spawn");
        }
        let x = input(bytes, 0);
        let _ = m0.call(op, ty.clone(), x.clone()).await;
        let t = Instant::now();
        for _ in 0..iters {
            let _ = m0.call(op, ty.clone(), x.clone()).await;
        }
        *out.lock().expect("lock") = t.elapsed();
        TaskEnd::Returned
    });
    let d = *elapsed.lock().expect("lock");
    d
}

/// The time of `iters` copies of `src` into `dst` on `threads` threads
/// (1 or 2), each copying a contiguous half; the threads are started once.
fn copies(src: &[u8], dst: &mut [u8], threads: usize, iters: u64) -> Duration {
    let t = Instant::now();
    if threads == 1 {
        for _ in 0..iters {
            dst.copy_from_slice(std::hint::black_box(src));
            std::hint::black_box(&mut *dst);
        }
        return t.elapsed();
    }
    let half = src.len() / 2;
    let (d0, d1) = dst.split_at_mut(half);
    let (s0, s1) = src.split_at(half);
    let run = |d: &mut [u8], s: &[u8]| {
        for _ in 0..iters {
            d.copy_from_slice(std::hint::black_box(s));
            std::hint::black_box(&mut *d);
        }
    };
    std::thread::scope(|sc| {
        sc.spawn(|| run(d1, s1));
        run(d0, s0);
    });
    t.elapsed()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("weft");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    for (label, bytes) in SIZES {
        for n in MEMBERS {
            g.bench_function(BenchmarkId::new(label, n), |b| {
                b.iter_custom(|iters| weft(bytes, n, iters))
            });
        }
    }
    g.finish();

    let mut g = c.benchmark_group("floor");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    let src = vec![1u8; 64 << 20];
    let mut dst = vec![0u8; 64 << 20];
    for threads in [1, 2] {
        g.bench_function(BenchmarkId::new("copy64MB", threads), |b| {
            b.iter_custom(|iters| copies(&src, &mut dst, threads, iters))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
