//! `matmul` and `transpose` on 2-d tensors.
//!
//! The product goes through faer's matmul (`faer::linalg::matmul`, single
//! threaded: long products are moved off the worker by `compute`, not
//! spread over threads). faer was measured against `matrixmultiply` and
//! `gemm` on the training example's shapes and was fastest on every one;
//! the numbers are in docs/tensors.md. `gemm_into` is the only function
//! that names the crate, so a swap touches nothing else.
//!
//! `transpose` is lazy on the host: it shares its operand's buffer, and
//! `matmul` hands faer the strided view, so the backward pass's
//! `matmul(transpose(h), d)` copies nothing. Other kernels reading a lazy
//! transpose get a copy made once, in 32x32 tiles so both the reads and the
//! writes stay within a few cache lines per tile.

use faer::{Accum, MatMut, MatRef, Par};

use super::place::{back_to, common_device, mem, wrap};
use super::{alloc, Shape, Storage, Tensor, TensorError, Transposed};
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
    gemm_into(&mut out, operand(a), operand(b), MatmulDims { m, k, n });
    Ok(Tensor::host(shape, out))
}

/// A host matrix as a faer view: row-major, or a lazy transpose read
/// through strides (no copy).
fn operand(t: &Tensor) -> MatRef<'_, f32> {
    match (t.storage(), t.dims()) {
        (Storage::Transposed(tr), _) => {
            MatRef::from_row_major_slice(&tr.src[..], tr.rows, tr.cols).transpose()
        }
        (_, &[r, c]) => MatRef::from_row_major_slice(t.host_values().unwrap_or(&[]), r, c),
        _ => MatRef::from_row_major_slice(&[], 0, 0),
    }
}

/// The work of `matmul(a, b)` in multiply-adds (`m*k*n`), for `compute`'s
/// cost argument; 0 when the shapes do not multiply.
pub fn matmul_cost(a: &Tensor, b: &Tensor) -> usize {
    match (a.dims(), b.dims()) {
        (&[m, k], &[_, n]) => m.saturating_mul(k).saturating_mul(n),
        _ => 0,
    }
}

/// `out [m,n] = lhs [m,k] x rhs [k,n]`; `out` is row-major of length `m*n`.
fn gemm_into(out: &mut [f32], lhs: MatRef<'_, f32>, rhs: MatRef<'_, f32>, d: MatmulDims) {
    let MatmulDims { m, k, n } = d;
    if k == 0 {
        out.fill(0.0);
        return;
    }
    let dst = MatMut::from_row_major_slice_mut(out, m, n);
    faer::linalg::matmul::matmul(dst, Accum::Replace, lhs, rhs, 1.0f32, Par::Seq);
}

/// `transpose(t)`: rows become columns, `[m,n]` to `[n,m]`. On the host
/// this is O(1): the result shares `t`'s buffer (see `Storage::Transposed`),
/// and the transpose of a transpose is the original tensor.
pub fn transpose(t: &Tensor) -> Result<Tensor, TensorError> {
    let &[m, n] = t.dims() else {
        return Err(TensorError::Rank {
            op: "transpose",
            expected: "2-d",
            shape: t.shape().clone(),
        });
    };
    let shape = Shape::new(&[n, m]);
    match t.storage() {
        Storage::Host(v) => Ok(Tensor::transposed(shape, Transposed::new(v.clone(), m, n))),
        Storage::Transposed(tr) => Ok(Tensor::from_shared(shape, tr.src.clone())),
        Storage::Device(_) => {
            let dev = common_device("transpose", &[t])?;
            let h = t.to_host()?;
            let out = transpose_copy(h.host_values().unwrap_or(&[]), m, n);
            back_to(Tensor::host(shape, out), &dev)
        }
    }
}

/// The row-major transpose `[n, m]` of the row-major `[m, n]` values `src`,
/// copied in 32x32 tiles.
pub(crate) fn transpose_copy(src: &[f32], m: usize, n: usize) -> Vec<f32> {
    let mut out = vec![0.0; m * n];
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
    out
}
