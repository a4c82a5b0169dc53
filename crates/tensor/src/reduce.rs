//! Reductions: `sum mean sum_rows argmax_rows softmax`.
//!
//! `sum` and `mean` accumulate in f64 (the language's float) over f32
//! values. Every sum starts from +0.0, as the GPU kernels do, so the sum of
//! an empty tensor (and of empty rows) is `0.0`, never `-0.0` (Rust's
//! `Iterator::sum` starts from -0.0); NaN and infinities propagate as IEEE
//! addition has them. `softmax` works on rows (a 1-d tensor is one row) and subtracts
//! each row's maximum before `exp`, so large inputs do not overflow.
//! On a device each offers the work to the backend's hook (`Device::sum`,
//! `sum_rows`, `argmax_rows`, `softmax`); `sum` and `argmax_rows` bring
//! back only their result (one float, one index per row). A backend that
//! declines gets the host kernel on downloaded values.

use std::sync::Arc;

use super::fallback;
use super::place::{common_device, host_kernel, mem, wrap};
use super::{alloc, mathf, Shape, Tensor, TensorError};
use crate::device::{Device, DeviceMem, Rows};

fn host(op: &'static str, t: &Tensor) -> Result<Tensor, TensorError> {
    common_device(op, &[t])?;
    t.to_host()
}

/// A device tensor's device and row-major memory.
type OnDevice = (Arc<dyn Device>, DeviceMem);

/// The device and memory of a device tensor, `None` on the host.
fn on_device(op: &'static str, t: &Tensor) -> Result<Option<OnDevice>, TensorError> {
    Ok(match (common_device(op, &[t])?, mem(t)?) {
        (Some(d), Some(m)) => Some((d, m)),
        _ => None,
    })
}

/// `sum(t)`: the sum of all elements, as a float.
pub fn sum(t: &Tensor) -> Result<f64, TensorError> {
    let host_sum = |h: &Tensor| {
        h.host_values()
            .unwrap_or(&[])
            .iter()
            .fold(0.0, |s, &x| s + f64::from(x))
    };
    if let Some((d, m)) = on_device("sum", t)? {
        if let Some(s) = d.sum(&m, t.numel())? {
            return Ok(s);
        }
        let fb = fallback::begin("sum", &d)?;
        let h = t.to_host()?;
        return Ok(fb.downloaded().host(host_sum(&h)));
    }
    Ok(host_sum(&host("sum", t)?))
}

/// `mean(t)`: the mean of all elements (NaN for an empty tensor, as 0/0).
pub fn mean(t: &Tensor) -> Result<f64, TensorError> {
    Ok(sum(t)? / t.numel() as f64)
}

/// The `[m, n]` of a 2-d tensor, or a rank error naming the builtin.
fn matrix(op: &'static str, t: &Tensor) -> Result<(usize, usize), TensorError> {
    match *t.dims() {
        [m, n] => Ok((m, n)),
        _ => Err(TensorError::Rank {
            op,
            expected: "2-d",
            shape: t.shape().clone(),
        }),
    }
}

/// `sum_rows(t)`: adds the `m` rows of `[m, n]`, giving `[n]`.
pub fn sum_rows(t: &Tensor) -> Result<Tensor, TensorError> {
    let (m, n) = matrix("sum_rows", t)?;
    let shape = Shape::new(&[n]);
    if let Some((d, mt)) = on_device("sum_rows", t)? {
        if let Some(out) = d.sum_rows(&mt, Rows { rows: m, cols: n })? {
            return Ok(wrap(shape, &d, out));
        }
    }
    host_kernel("sum_rows", t, |h| {
        let mut out = alloc("sum_rows", &shape, n)?;
        if n > 0 {
            for row in h.host_values().unwrap_or(&[]).chunks_exact(n) {
                for (o, &x) in out.iter_mut().zip(row) {
                    *o += x;
                }
            }
        }
        Ok(Tensor::host(shape, out))
    })
}

/// `argmax_rows(t)`: for each row of `[m, n]`, the index of its largest
/// element (the first one on ties).
pub fn argmax_rows(t: &Tensor) -> Result<Vec<i64>, TensorError> {
    let (m, n) = matrix("argmax_rows", t)?;
    if n == 0 && m > 0 {
        return Err(TensorError::EmptyRows {
            op: "argmax_rows",
            shape: t.shape().clone(),
        });
    }
    let host_argmax = |h: &Tensor| -> Vec<i64> {
        h.host_values()
            .unwrap_or(&[])
            .chunks_exact(n.max(1))
            .map(|row| {
                let mut best = 0;
                for (j, &x) in row.iter().enumerate() {
                    if x > row[best] {
                        best = j;
                    }
                }
                best as i64
            })
            .collect()
    };
    if let Some((d, mt)) = on_device("argmax_rows", t)? {
        if let Some(out) = d.argmax_rows(&mt, Rows { rows: m, cols: n })? {
            return Ok(out);
        }
        let fb = fallback::begin("argmax_rows", &d)?;
        let h = t.to_host()?;
        return Ok(fb.downloaded().host(host_argmax(&h)));
    }
    Ok(host_argmax(&host("argmax_rows", t)?))
}

/// `softmax(t)`: each row of a 2-d tensor (or the one row of a 1-d tensor)
/// mapped to `exp(x - max) / sum(exp(x - max))`.
pub fn softmax(t: &Tensor) -> Result<Tensor, TensorError> {
    let (m, n) = match *t.dims() {
        [n] => (1, n),
        [m, n] => (m, n),
        _ => {
            return Err(TensorError::Rank {
                op: "softmax",
                expected: "1-d or 2-d",
                shape: t.shape().clone(),
            })
        }
    };
    if let Some((d, mt)) = on_device("softmax", t)? {
        if let Some(out) = d.softmax(&mt, Rows { rows: m, cols: n })? {
            return Ok(wrap(t.shape().clone(), &d, out));
        }
    }
    host_kernel("softmax", t, |h| softmax_host(h, n))
}

/// The host kernel of `softmax` over rows of `n` values.
fn softmax_host(t: Tensor, n: usize) -> Result<Tensor, TensorError> {
    let shape = t.shape().clone();
    let mut out = t.into_unique_host()?;
    if n > 0 {
        // Rows are short (10 classes), so each pass runs over the whole
        // buffer where it can: one long `exp` loop vectorizes, ten-element
        // row loops would not.
        for row in out.chunks_exact_mut(n) {
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            for x in row.iter_mut() {
                *x -= max;
            }
        }
        for x in out.iter_mut() {
            *x = mathf::exp(*x);
        }
        for row in out.chunks_exact_mut(n) {
            let inv = 1.0 / row.iter().sum::<f32>();
            for x in row.iter_mut() {
                *x *= inv;
            }
        }
    }
    Ok(Tensor::host(shape, out))
}
