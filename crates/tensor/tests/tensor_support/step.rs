//! The training step of examples/train_digits.weft written against the
//! tensor API, shared by the tests that run it on a device and compare it
//! with the CPU (`tensor_gpu.rs`, `tensor_device_hooks.rs`).

use weft_tensor::{self as tensor, BinOp, Tensor};

/// One forward and backward pass of examples/train_digits.weft's
/// `gradients`: the four gradients and the loss.
pub fn step(x: &Tensor, y: &Tensor, w1: &Tensor, b1: &Tensor, w2: &Tensor) -> (Vec<Tensor>, f64) {
    let rows = x.dims()[0] as f64;
    let h0 = tensor::add(tensor::matmul(x, w1).unwrap(), b1.clone()).unwrap();
    let h = tensor::relu(h0.clone()).unwrap();
    let p = tensor::softmax(&tensor::matmul(&h, w2).unwrap()).unwrap();
    let lp = tensor::log(tensor::tensor_scalar(BinOp::Add, p.clone(), 1e-7).unwrap()).unwrap();
    let loss = -tensor::sum(&tensor::mul(lp, y.clone()).unwrap()).unwrap() / rows;
    let dz = tensor::tensor_scalar(BinOp::Div, tensor::sub(p, y.clone()).unwrap(), rows).unwrap();
    let dh = tensor::mul(
        tensor::matmul(&dz, &tensor::transpose(w2).unwrap()).unwrap(),
        tensor::relu_mask(h0).unwrap(),
    )
    .unwrap();
    let grads = vec![
        tensor::matmul(&tensor::transpose(x).unwrap(), &dh).unwrap(),
        tensor::sum_rows(&dh).unwrap(),
        tensor::matmul(&tensor::transpose(&h).unwrap(), &dz).unwrap(),
        tensor::sum_rows(&dz).unwrap(),
    ];
    (grads, loss)
}
