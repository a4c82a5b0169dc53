//! The CUDA backend on a real GPU: uploads, cuBLAS matmul (plain and with
//! transposed operands), the NVRTC elementwise, softmax, reduction, argmax
//! and one-hot kernels, a whole training step, and readiness, each compared
//! with the CPU kernels on random inputs.
//! Without a CUDA device (or in a build without the `cuda` feature) every
//! test prints why it skipped and returns.

use weft_tensor::{self as tensor, BinOp, Tensor, UnaryOp};

#[path = "tensor_support/step.rs"]
mod step;
use step::step;

/// The first GPU's name, or `None` after printing why the test skips.
fn gpu(test: &str) -> Option<String> {
    let devs = tensor::devices();
    match devs.iter().find(|d| d.starts_with("cuda:")) {
        Some(d) => Some(d.clone()),
        None => {
            println!(
                "skipping {test}: no CUDA device present ({})",
                weft_tensor::device::backend_notes().join("; ")
            );
            None
        }
    }
}

fn close(a: &Tensor, b: &Tensor) -> bool {
    let (a, b) = (a.to_vec().unwrap(), b.to_vec().unwrap());
    a.len() == b.len()
        && a.iter()
            .zip(&b)
            .all(|(x, y)| (x - y).abs() <= 1e-3 * (1.0 + y.abs()))
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park_timeout(std::time::Duration::from_millis(10));
    }
}

#[test]
fn gpu_upload_download_round_trip() {
    let Some(dev) = gpu("gpu_upload_download_round_trip") else {
        return;
    };
    let t = tensor::randn(&[300, 17], 3).unwrap();
    let g = tensor::to(&t, &dev).unwrap();
    assert_eq!(tensor::device(&g), dev);
    assert_eq!(g.to_string(), format!("tensor[300,17]@{dev}"));
    block_on(g.ready()).unwrap();
    assert_eq!(g.to_vec().unwrap(), t.to_vec().unwrap());
    assert_eq!(
        tensor::to(&g, "cpu").unwrap().to_vec().unwrap(),
        t.to_vec().unwrap()
    );
}

#[test]
fn gpu_matmul_matches_cpu() {
    let Some(dev) = gpu("gpu_matmul_matches_cpu") else {
        return;
    };
    for (m, k, n) in [(32, 64, 128), (32, 128, 10), (1, 1, 1), (513, 257, 129)] {
        let a = tensor::randn(&[m, k], 1).unwrap();
        let b = tensor::randn(&[k, n], 2).unwrap();
        let want = tensor::matmul(&a, &b).unwrap();
        let got = tensor::matmul(
            &tensor::to(&a, &dev).unwrap(),
            &tensor::to(&b, &dev).unwrap(),
        )
        .unwrap();
        assert_eq!(tensor::device(&got), dev);
        assert!(close(&got, &want), "matmul {m}x{k}x{n}");
    }
}

#[test]
fn gpu_elementwise_matches_cpu() {
    let Some(dev) = gpu("gpu_elementwise_matches_cpu") else {
        return;
    };
    let a = tensor::randn(&[33, 65], 1).unwrap();
    let b = tensor::tensor_scalar(BinOp::Add, tensor::randn(&[33, 65], 2).unwrap(), 5.0).unwrap();
    let row = tensor::randn(&[65], 3).unwrap();
    let (ga, gb, grow) = (
        tensor::to(&a, &dev).unwrap(),
        tensor::to(&b, &dev).unwrap(),
        tensor::to(&row, &dev).unwrap(),
    );
    for op in [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div] {
        let got = tensor::binary(op, ga.clone(), gb.clone()).unwrap();
        assert_eq!(tensor::device(&got), dev);
        assert!(
            close(&got, &tensor::binary(op, a.clone(), b.clone()).unwrap()),
            "{op:?}"
        );
        let got = tensor::binary(op, ga.clone(), grow.clone()).unwrap();
        assert!(
            close(&got, &tensor::binary(op, a.clone(), row.clone()).unwrap()),
            "{op:?} row right"
        );
        let got = tensor::binary(op, grow.clone(), gb.clone()).unwrap();
        assert!(
            close(&got, &tensor::binary(op, row.clone(), b.clone()).unwrap()),
            "{op:?} row left"
        );
        let got = tensor::scalar_tensor(op, 2.0, gb.clone()).unwrap();
        assert!(
            close(&got, &tensor::scalar_tensor(op, 2.0, b.clone()).unwrap()),
            "{op:?} scalar"
        );
    }
    for op in [
        UnaryOp::Neg,
        UnaryOp::Relu,
        UnaryOp::ReluMask,
        UnaryOp::Exp,
        UnaryOp::Log,
    ] {
        let got = tensor::unary(op, gb.clone()).unwrap();
        assert_eq!(tensor::device(&got), dev);
        assert!(
            close(&got, &tensor::unary(op, b.clone()).unwrap()),
            "{op:?}"
        );
    }
    let sm = tensor::softmax(&ga).unwrap();
    assert_eq!(tensor::device(&sm), dev);
    assert!(close(&sm, &tensor::softmax(&a).unwrap()));
}

fn scaled(dims: &[i64], seed: i64, by: f64) -> Tensor {
    tensor::tensor_scalar(BinOp::Mul, tensor::randn(dims, seed).unwrap(), by).unwrap()
}

#[test]
fn gpu_transposed_matmul_matches_cpu() {
    let Some(dev) = gpu("gpu_transposed_matmul_matches_cpu") else {
        return;
    };
    let on = |t: &Tensor| tensor::to(t, &dev).unwrap();
    let tr = |t: &Tensor| tensor::transpose(t).unwrap();
    for (m, k, n) in [
        (32, 64, 128),
        (64, 32, 128),
        (128, 32, 10),
        (1, 7, 1),
        (300, 129, 65),
    ] {
        // stored shapes: a [k,m] and b [n,k] for the transposed operands
        let a = tensor::randn(&[m, k], 1).unwrap();
        let at = tensor::randn(&[k, m], 2).unwrap();
        let b = tensor::randn(&[k, n], 3).unwrap();
        let bt = tensor::randn(&[n, k], 4).unwrap();
        let cases = [
            (
                "t(a) x b",
                tensor::matmul(&tr(&at), &b),
                tensor::matmul(&tr(&on(&at)), &on(&b)),
            ),
            (
                "a x t(b)",
                tensor::matmul(&a, &tr(&bt)),
                tensor::matmul(&on(&a), &tr(&on(&bt))),
            ),
            (
                "t(a) x t(b)",
                tensor::matmul(&tr(&at), &tr(&bt)),
                tensor::matmul(&tr(&on(&at)), &tr(&on(&bt))),
            ),
        ];
        for (what, want, got) in cases {
            let got = got.unwrap();
            assert_eq!(tensor::device(&got), dev);
            assert!(close(&got, &want.unwrap()), "{what} {m}x{k}x{n}");
        }
    }
    // a transpose read by another kernel is made dense on the device
    let x = tensor::randn(&[67, 33], 5).unwrap();
    let gt = tr(&on(&x));
    assert_eq!(gt.to_string(), format!("tensor[33,67]@{dev}"));
    let got = tensor::relu(gt.clone()).unwrap();
    assert!(close(&got, &tensor::relu(tr(&x)).unwrap()));
    assert!(close(&gt, &tr(&x)));
    assert!(close(&tr(&gt), &x));
}

#[test]
fn gpu_softmax_matches_cpu() {
    let Some(dev) = gpu("gpu_softmax_matches_cpu") else {
        return;
    };
    for (dims, by) in [
        (vec![32, 10], 1.0),
        (vec![32, 10], 40.0),
        (vec![7, 1000], 3.0),
        (vec![1, 1], 1.0),
        (vec![513], 5.0),
        (vec![3, 0], 1.0),
    ] {
        let a = scaled(&dims, 7, by);
        let got = tensor::softmax(&tensor::to(&a, &dev).unwrap()).unwrap();
        assert_eq!(tensor::device(&got), dev);
        assert!(close(&got, &tensor::softmax(&a).unwrap()), "{dims:?} x{by}");
    }
}

#[test]
fn gpu_reductions_match_cpu() {
    let Some(dev) = gpu("gpu_reductions_match_cpu") else {
        return;
    };
    for dims in [
        vec![32, 10],
        vec![1000, 37],
        vec![1, 1],
        vec![0, 5],
        vec![3, 100_000],
    ] {
        let a = scaled(&dims, 11, 2.0);
        let g = tensor::to(&a, &dev).unwrap();
        let (got, want) = (tensor::sum(&g).unwrap(), tensor::sum(&a).unwrap());
        assert!(
            (got - want).abs() <= 1e-9 * (1.0 + want.abs()),
            "sum {dims:?}: {got} vs {want}"
        );
        let (got, want) = (tensor::mean(&g).unwrap(), tensor::mean(&a).unwrap());
        assert!(
            got == want
                || (got - want).abs() <= 1e-9 * (1.0 + want.abs())
                || (got.is_nan() && want.is_nan()),
            "mean {dims:?}: {got} vs {want}"
        );
        let sr = tensor::sum_rows(&g).unwrap();
        assert_eq!(tensor::device(&sr), dev);
        // one thread per column adds the rows in the CPU's order: exact
        assert_eq!(
            sr.to_vec().unwrap(),
            tensor::sum_rows(&a).unwrap().to_vec().unwrap()
        );
        if dims[1] > 0 {
            assert_eq!(
                tensor::argmax_rows(&g).unwrap(),
                tensor::argmax_rows(&a).unwrap()
            );
        }
    }
    // ties and NaN: the first maximum wins; a NaN only in column 0
    let t = Tensor::from_vec(
        &[3, 3],
        vec![1.0, 5.0, 5.0, f32::NAN, 2.0, 3.0, 0.0, f32::NAN, 1.0],
    )
    .unwrap();
    let g = tensor::to(&t, &dev).unwrap();
    assert_eq!(
        tensor::argmax_rows(&g).unwrap(),
        tensor::argmax_rows(&t).unwrap()
    );
}

#[test]
fn gpu_onehot_matches_cpu() {
    let Some(dev) = gpu("gpu_onehot_matches_cpu") else {
        return;
    };
    let d = weft_tensor::device::lookup(&dev).unwrap().unwrap();
    for (labels, n) in [(vec![3, 0, 9, 3, 1], 10), (vec![], 4), (vec![0], 1)] {
        let got = tensor::onehot_on(&labels, n, &d).unwrap();
        assert_eq!(tensor::device(&got), dev);
        let want = tensor::onehot(&labels, n).unwrap();
        assert_eq!(got.dims(), want.dims());
        assert_eq!(got.to_vec().unwrap(), want.to_vec().unwrap());
    }
}

#[test]
fn gpu_training_step_matches_cpu() {
    let Some(dev) = gpu("gpu_training_step_matches_cpu") else {
        return;
    };
    let labels: Vec<i64> = (0..32).map(|i| (i * 7) % 10).collect();
    let x = scaled(&[32, 64], 1, 0.5);
    let y = tensor::onehot(&labels, 10).unwrap();
    let w1 = scaled(&[64, 128], 2, 0.177);
    let b1 = scaled(&[128], 3, 0.1);
    let w2 = scaled(&[128, 10], 4, 0.088);
    let (want, want_loss) = step(&x, &y, &w1, &b1, &w2);
    let on = |t: &Tensor| tensor::to(t, &dev).unwrap();
    let (got, loss) = step(&on(&x), &on(&y), &on(&w1), &on(&b1), &on(&w2));
    assert!(
        (loss - want_loss).abs() <= 1e-4 * (1.0 + want_loss.abs()),
        "{loss} vs {want_loss}"
    );
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(tensor::device(g), dev);
        assert!(close(g, w), "gradient {k}");
    }
}
