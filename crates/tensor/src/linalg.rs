//! `matmul` and `transpose` on 2-d tensors.
//!
//! The product goes through faer's matmul (`faer::linalg::matmul`, single
//! threaded: long products are moved off the worker by `compute`, not
//! spread over threads). faer was measured against `matrixmultiply` and
//! `gemm` on the training example's shapes and was fastest on every one;
//! the numbers are in docs/tensors.md. `gemm_into` is the only function
//! that names the crate, so a swap touches nothing else.
//!
//! `transpose` is lazy: it shares its operand's buffer, and `matmul` hands
//! faer the strided view (on a device: the backend the buffer with a
//! transpose flag, `Device::matmul_t`), so the backward pass's
//! `matmul(transpose(h), d)` copies nothing. Other kernels reading a lazy
//! transpose get a copy made once, in 32x32 tiles so both the reads and the
//! writes stay within a few cache lines per tile.

use faer::{Accum, MatMut, MatRef, Par};

use super::fallback;
use super::place::{common_device, gemm_operand, mem, wrap};
use super::{alloc, DeviceTransposed, Shape, Storage, Tensor, TensorError, Transposed};
use crate::device::{MatmulDims, Trans};

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
    let dims = MatmulDims { m, k, n };
    if let Some(d) = &dev {
        // a lazy transpose goes to cuBLAS as is, with a transpose flag
        if let (Some((ma, ta)), Some((mb, tb))) = (gemm_operand(a), gemm_operand(b)) {
            let trans = Trans { a: ta, b: tb };
            if ta || tb {
                if let Some(out) = d.matmul_t(&ma, &mb, dims, trans)? {
                    return Ok(wrap(shape, d, out));
                }
            }
        }
        if let (Some(ma), Some(mb)) = (mem(a)?, mem(b)?) {
            if let Some(out) = d.matmul(&ma, &mb, dims)? {
                return Ok(wrap(shape, d, out));
            }
        }
        let fb = fallback::begin("matmul", d)?;
        let (ha, hb) = (a.to_host()?, b.to_host()?);
        return fb.downloaded().upload(matmul(&ha, &hb)?);
    }
    let mut out = alloc("matmul", &shape, m * n)?;
    gemm_into(&mut out, operand(a), operand(b), dims);
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

/// `transpose(t)`: rows become columns, `[m,n]` to `[n,m]`. This is O(1):
/// the result shares `t`'s buffer (see `Storage::Transposed` and, on a
/// device, `Storage::DeviceTransposed`), and the transpose of a transpose
/// is the original tensor.
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
        Storage::Device(b) => Ok(Tensor::device_transposed(
            shape,
            DeviceTransposed::new(b.clone(), m, n),
        )),
        Storage::DeviceTransposed(tr) => Ok(Tensor::on_device(shape, tr.src.clone())),
    }
}
