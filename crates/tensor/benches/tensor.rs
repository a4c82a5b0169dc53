//! Tensor kernel benchmarks: the GEMM on the training example's shapes,
//! elementwise loops (against a deliberately scalar loop, to show they
//! vectorize), the compute pool's hand-off cost, and one epoch of the
//! 64-128-10 MLP on digits (batch 32, SGD lr 0.1) straight on the kernels.
//! Numbers are recorded in docs/tensors.md. Run: `cargo bench -p weft-tensor --bench tensor`.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use weft_tensor::{self as tensor, BinOp, Tensor};

#[path = "../tests/tensor_support/mlp.rs"]
mod mlp;

fn randn(dims: &[i64], seed: i64) -> Tensor {
    tensor::randn(dims, seed).unwrap()
}

fn gemm(c: &mut Criterion) {
    let mut g = c.benchmark_group("matmul");
    let shapes: [(&str, [i64; 2], [i64; 2]); 6] = [
        ("fwd1 32x64@64x128", [32, 64], [64, 128]),
        ("fwd2 32x128@128x10", [32, 128], [128, 10]),
        ("dW1 64x32@32x128", [64, 32], [32, 128]),
        ("dW2 128x32@32x10", [128, 32], [32, 10]),
        ("dh 32x10@10x128", [32, 10], [10, 128]),
        ("512x512@512x512", [512, 512], [512, 512]),
    ];
    for (name, a, b) in shapes {
        let (a, b) = (randn(&a, 1), randn(&b, 2));
        g.throughput(Throughput::Elements(tensor::matmul_cost(&a, &b) as u64));
        g.bench_function(name, |bch| {
            bch.iter(|| tensor::matmul(black_box(&a), black_box(&b)).unwrap())
        });
    }
    let t = randn(&[32, 128], 3);
    g.bench_function("transpose 32x128", |bch| {
        bch.iter(|| tensor::transpose(black_box(&t)).unwrap())
    });
    g.finish();
}

/// `out = a + b` one element at a time, kept scalar by `black_box`.
fn scalar_add(a: &[f32], b: &[f32]) -> Vec<f32> {
    let mut out = vec![0.0; a.len()];
    for i in 0..a.len() {
        out[i] = black_box(a[i]) + b[i];
    }
    out
}

fn elementwise(c: &mut Criterion) {
    let mut g = c.benchmark_group("elementwise");
    for n in [4_096i64, 1 << 20] {
        let a = randn(&[n], 1);
        let b = randn(&[n], 2);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("add fresh", n), &n, |bch, _| {
            bch.iter(|| tensor::add(a.clone(), b.clone()).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("add in place", n), &n, |bch, _| {
            bch.iter_batched(
                || Tensor::from_vec(&[n as usize], a.to_vec().unwrap()).unwrap(),
                |own| tensor::add(own, b.clone()).unwrap(),
                criterion::BatchSize::LargeInput,
            )
        });
        let (av, bv) = (a.to_vec().unwrap(), b.to_vec().unwrap());
        g.bench_with_input(BenchmarkId::new("add scalar loop", n), &n, |bch, _| {
            bch.iter(|| scalar_add(&av, &bv))
        });
        g.bench_with_input(BenchmarkId::new("mul by float", n), &n, |bch, _| {
            bch.iter(|| tensor::tensor_scalar(BinOp::Mul, a.clone(), 0.5).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("relu", n), &n, |bch, _| {
            bch.iter(|| tensor::relu(a.clone()).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("exp", n), &n, |bch, _| {
            bch.iter(|| tensor::exp(a.clone()).unwrap())
        });
    }
    let m = randn(&[32, 128], 1);
    let row = randn(&[128], 2);
    g.throughput(Throughput::Elements(32 * 128));
    g.bench_function("row broadcast 32x128 + 128", |bch| {
        bch.iter(|| tensor::add(m.clone(), row.clone()).unwrap())
    });
    let logits = randn(&[32, 10], 3);
    g.bench_function("softmax 32x10", |bch| {
        bch.iter(|| tensor::softmax(black_box(&logits)).unwrap())
    });
    g.finish();
}

struct Unpark(std::thread::Thread);
impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

fn block_on<F: Future>(f: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

fn compute_pool(c: &mut Criterion) {
    let mut g = c.benchmark_group("compute");
    g.bench_function("inline", |b| {
        b.iter(|| block_on(tensor::compute(0, || black_box(1))))
    });
    g.bench_function("pool round trip", |b| {
        b.iter(|| block_on(tensor::compute(usize::MAX, || black_box(1))))
    });
    g.finish();
}

fn mlp_epoch(c: &mut Criterion) {
    let (x, y) = mlp::digits().unwrap();
    let mut net = mlp::Mlp::new(42).unwrap();
    let mut rng = fastrand::Rng::with_seed(1);
    let mut perm: Vec<i64> = (0..y.len() as i64).collect();
    let mut g = c.benchmark_group("mlp");
    g.bench_function("digits epoch 64-128-10 batch 32", |b| {
        b.iter(|| {
            rng.shuffle(&mut perm);
            mlp::epoch(&mut net, &x, &y, &perm, 32, 0.1).unwrap()
        })
    });
    g.finish();
    // a benchmark of a network that does not learn would measure nothing useful
    let acc = net.accuracy(&x, &y).unwrap();
    assert!(
        acc > 0.9,
        "training accuracy after the benchmark epochs: {acc}"
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    targets = gemm, elementwise, compute_pool, mlp_epoch
}
criterion_main!(benches);
