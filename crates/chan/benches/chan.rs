//! Weft's channels beside crossbeam-channel, in the same run, from plain
//! threads (the `_blocking` forms): sequential, SPSC, MPSC, MPMC at capacity
//! 0, 1 and 1024, select over 4 channels (blocking, and with a default
//! when nothing is ready), unbuffered ping-pong.
//! Run: `cargo bench -p weft-chan --bench chan` (shorter: append `-- --warm-up-time 0.5
//! --measurement-time 2`). Results and ratios: docs/performance.md.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

mod common;
use common::*;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("chan");
    for s in scenarios() {
        let elements = if s.name == "pingpong" {
            PING_PONG_ROUNDS
        } else {
            N
        };
        g.throughput(Throughput::Elements(elements));
        // "spsc/1" -> "chan/spsc/weft/1" and "chan/spsc/crossbeam/1".
        let (kind, cap) = match s.name.split_once('/') {
            Some((kind, cap)) => (kind, format!("/{cap}")),
            None => (s.name.as_str(), String::new()),
        };
        for (lib, f) in [("weft", &s.weft), ("crossbeam", &s.crossbeam)] {
            g.bench_function(format!("{kind}/{lib}{cap}"), |b| b.iter(f));
        }
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
