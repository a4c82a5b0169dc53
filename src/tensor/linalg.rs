//! `matmul` and `transpose` on 2-d tensors.
//!
//! The product goes through faer's matmul (`faer::linalg::matmul`, single
//! threaded: long products are moved off the worker by `compute`, not
//! spread over threads). faer was measured against `matrixmultiply` and
//! `gemm` on the training example's shapes and was fastest on every one;
//! the numbers are in docs/tensors.md. `gemm_into` is the only function
//! that names the crate, so a swap touches nothing else.
//!
//! `transpose` copies in 32x32 tiles so both the reads and the writes stay
//! within a few cache lines per tile.

use faer::{Accum, MatMut, MatRef, Par};

use super::place::{back_to, common_device, mem, wrap};
use super::{alloc, Shape, Tensor, TensorError};
use crate::device::MatmulDims;

/// `matmul(a, b)`: the product of `a [m,k]` and `b [k,n]`, shape `[m,n]`.
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor, TensorError> {
    let mismatch = || TensorError::ShapeMismatch {
        op: "matmul",
        sym: "x",
        a: a.shape().clone(),
        b: b.shape().clone(),
    };
    let (&[m, k], &[k2, n]) = (a.dims(), b.dims()) else {
        return Err(mismatch());
    };
    if k != k2 {
        return Err(mismatch());
    }
    let shape = Shape::new(&[m, n]);
    let dev = common_device("matmul", &[a, b])?;
    if let (Some(d), Some(ma), Some(mb)) = (&dev, mem(a), mem(b)) {
        if let Some(out) = d.matmul(ma, mb, MatmulDims { m, k, n })? {
            return Ok(wrap(shape, d, out));
        }
        return back_to(matmul(&a.to_host()?, &b.to_host()?)?, &dev);
    }
    let mut out = alloc("matmul", &shape, m * n)?;
    gemm_into(
        &mut out,
        a.host_values().unwrap_or(&[]),
        b.host_values().unwrap_or(&[]),
        MatmulDims { m, k, n },
    );
    Ok(Tensor::host(shape, out))
}

/// The work of `matmul(a, b)` in multiply-adds (`m*k*n`), for `compute`'s
/// cost argument; 0 when the shapes do not multiply.
pub fn matmul_cost(a: &Tensor, b: &Tensor) -> usize {
    match (a.dims(), b.dims()) {
        (&[m, k], &[_, n]) => m.saturating_mul(k).saturating_mul(n),
        _ => 0,
    }
}

/// `out [m,n] = a [m,k] x b [k,n]`, all row-major and of exact lengths.
pub(crate) fn gemm_into(out: &mut [f32], a: &[f32], b: &[f32], d: MatmulDims) {
    let MatmulDims { m, k, n } = d;
    if k == 0 {
        out.fill(0.0);
        return;
    }
    let lhs = MatRef::from_row_major_slice(a, m, k);
    let rhs = MatRef::from_row_major_slice(b, k, n);
    let dst = MatMut::from_row_major_slice_mut(out, m, n);
    faer::linalg::matmul::matmul(dst, Accum::Replace, lhs, rhs, 1.0f32, Par::Seq);
}

/// `transpose(t)`: rows become columns, `[m,n]` to `[n,m]`.
pub fn transpose(t: &Tensor) -> Result<Tensor, TensorError> {
    let &[m, n] = t.dims() else {
        return Err(TensorError::Rank {
            op: "transpose",
            expected: "2-d",
            shape: t.shape().clone(),
        });
    };
    let dev = common_device("transpose", &[t])?;
    if dev.is_some() {
        return back_to(transpose(&t.to_host()?)?, &dev);
    }
    let shape = Shape::new(&[n, m]);
    let mut out = alloc("transpose", &shape, m * n)?;
    let src = t.host_values().unwrap_or(&[]);
    const TILE: usize = 32;
    for i0 in (0..m).step_by(TILE) {
        for j0 in (0..n).step_by(TILE) {
            for i in i0..(i0 + TILE).min(m) {
                for j in j0..(j0 + TILE).min(n) {
                    out[j * m + i] = src[i * n + j];
                }
            }
        }
    }
    Ok(Tensor::host(shape, out))
}
