//! The 64-128-10 MLP of the training example, written directly against the
//! tensor kernels (no interpreter): the floor for the engine's pipeline.
//! Shared by `tests/tensor_mlp.rs` (it learns) and `benches/tensor.rs`
//! (one epoch's time).

use weft_tensor::{self as tensor, BinOp, Tensor, TensorError};

/// Weights and biases of the two layers.
pub struct Mlp {
    pub w1: Tensor,
    pub b1: Tensor,
    pub w2: Tensor,
    pub b2: Tensor,
}

impl Mlp {
    /// Small random weights (scaled normals), zero biases.
    pub fn new(seed: i64) -> Result<Mlp, TensorError> {
        Ok(Mlp {
            w1: tensor::tensor_scalar(BinOp::Mul, tensor::randn(&[64, 128], seed)?, 0.125)?,
            b1: tensor::zeros(&[128])?,
            w2: tensor::tensor_scalar(BinOp::Mul, tensor::randn(&[128, 10], seed + 1)?, 0.088)?,
            b2: tensor::zeros(&[10])?,
        })
    }

    /// Class scores `[batch, 10]` and the hidden pre-activation.
    fn forward(&self, x: &Tensor) -> Result<(Tensor, Tensor, Tensor), TensorError> {
        let z1 = tensor::add(tensor::matmul(x, &self.w1)?, self.b1.clone())?;
        let h = tensor::relu(z1.clone())?;
        let z2 = tensor::add(tensor::matmul(&h, &self.w2)?, self.b2.clone())?;
        Ok((z1, h, z2))
    }

    /// One SGD step on a batch `x [b, 64]`, labels `y`; returns the mean loss.
    pub fn step(&mut self, x: &Tensor, y: &[i64], lr: f64) -> Result<f64, TensorError> {
        let b = y.len() as f64;
        let (z1, h, z2) = self.forward(x)?;
        let p = tensor::softmax(&z2)?;
        let t = tensor::onehot(y, 10)?;
        let loss = -tensor::sum(&tensor::mul(tensor::log(p.clone())?, t.clone())?)? / b;
        let d2 = tensor::tensor_scalar(BinOp::Div, tensor::sub(p, t)?, b)?;
        let dw2 = tensor::matmul(&tensor::transpose(&h)?, &d2)?;
        let db2 = tensor::sum_rows(&d2)?;
        let dh = tensor::matmul(&d2, &tensor::transpose(&self.w2)?)?;
        let d1 = tensor::mul(dh, tensor::relu_mask(z1)?)?;
        let dw1 = tensor::matmul(&tensor::transpose(x)?, &d1)?;
        let db1 = tensor::sum_rows(&d1)?;
        let upd = |w: &mut Tensor, g: Tensor| -> Result<(), TensorError> {
            let w0 = std::mem::take(w);
            *w = tensor::sub(w0, tensor::tensor_scalar(BinOp::Mul, g, lr)?)?;
            Ok(())
        };
        upd(&mut self.w1, dw1)?;
        upd(&mut self.b1, db1)?;
        upd(&mut self.w2, dw2)?;
        upd(&mut self.b2, db2)?;
        Ok(loss)
    }

    /// The fraction of rows of `x` classified as `y`.
    pub fn accuracy(&self, x: &Tensor, y: &[i64]) -> Result<f64, TensorError> {
        let (_, _, z2) = self.forward(x)?;
        let pred = tensor::argmax_rows(&z2)?;
        Ok(pred.iter().zip(y).filter(|(p, y)| p == y).count() as f64 / y.len() as f64)
    }
}

/// The digits set with pixels scaled to [0, 1].
pub fn digits() -> Result<(Tensor, Vec<i64>), TensorError> {
    let d = tensor::load_dataset("digits")?;
    Ok((tensor::tensor_scalar(BinOp::Div, d.x, 16.0)?, d.y))
}

/// One epoch of SGD in batches of `batch` rows in the order `perm`;
/// returns the mean batch loss.
pub fn epoch(
    mlp: &mut Mlp,
    x: &Tensor,
    y: &[i64],
    perm: &[i64],
    batch: usize,
    lr: f64,
) -> Result<f64, TensorError> {
    let mut total = 0.0;
    let mut batches = 0;
    for idx in perm.chunks(batch) {
        let xb = tensor::gather(x, idx)?;
        let yb: Vec<i64> = idx.iter().map(|&i| y[i as usize]).collect();
        total += mlp.step(&xb, &yb, lr)?;
        batches += 1;
    }
    Ok(total / f64::from(batches))
}
