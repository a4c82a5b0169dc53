//! The CUDA backend on a real GPU: uploads, cuBLAS matmul, NVRTC
//! elementwise kernels and readiness, each compared with the CPU kernels.
//! Without a CUDA device (or in a build without the `cuda` feature) every
//! test prints why it skipped and returns.

use weft::tensor::{self, BinOp, Tensor, UnaryOp};

/// The first GPU's name, or `None` after printing why the test skips.
fn gpu(test: &str) -> Option<String> {
    let devs = tensor::devices();
    match devs.iter().find(|d| d.starts_with("cuda:")) {
        Some(d) => Some(d.clone()),
        None => {
            println!(
                "skipping {test}: no CUDA device present ({})",
                weft::device::backend_notes().join("; ")
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
    // host-fallback kernels come back to the device
    let sm = tensor::softmax(&ga).unwrap();
    assert_eq!(tensor::device(&sm), dev);
    assert!(close(&sm, &tensor::softmax(&a).unwrap()));
}
