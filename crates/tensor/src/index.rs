//! Row selection and element access: `rows gather get onehot` (and
//! `onehot_on`, which builds the one-hot rows on a device).
//!
//! Rows are the first dimension: a `[m, ...]` tensor has `m` rows, each a
//! contiguous run of the other dimensions' product. Index errors reuse the
//! wording of the language's list errors where one fits.

use std::sync::Arc;

use super::create::parse_shape;
use super::place::{common_device, host_kernel, to_device, wrap};
use super::{alloc, Shape, Tensor, TensorError};
use crate::device::Device;

/// `(rows, row length)` of a tensor of rank 1 or more.
fn row_layout(op: &'static str, t: &Tensor) -> Result<(usize, usize), TensorError> {
    match t.dims().split_first() {
        Some((&m, rest)) => Ok((m, rest.iter().product())),
        None => Err(TensorError::Rank {
            op,
            expected: "1-d or higher",
            shape: t.shape().clone(),
        }),
    }
}

fn with_rows(t: &Tensor, m: usize) -> Shape {
    let mut dims = t.dims().to_vec();
    dims[0] = m;
    Shape::new(&dims)
}

/// `rows(t, start, end)`: rows `start..end` (end exclusive).
pub fn rows(t: &Tensor, start: i64, end: i64) -> Result<Tensor, TensorError> {
    let (m, w) = row_layout("rows", t)?;
    if start < 0 || end < start || end as u64 > m as u64 {
        return Err(TensorError::RowsOutOfRange { start, end, len: m });
    }
    let (s, e) = (start as usize, end as usize);
    host_kernel("rows", t, |h| {
        let values = h.host_values().unwrap_or(&[]);
        Ok(Tensor::host(
            with_rows(t, e - s),
            values[s * w..e * w].to_vec(),
        ))
    })
}

/// `gather(t, idx)`: the rows listed in `idx`, in that order (repeats allowed).
pub fn gather(t: &Tensor, idx: &[i64]) -> Result<Tensor, TensorError> {
    let (m, w) = row_layout("gather", t)?;
    if let Some(&bad) = idx.iter().find(|&&i| i < 0 || i as u64 >= m as u64) {
        return Err(TensorError::IndexOutOfRange {
            op: "gather",
            index: bad,
            len: m,
        });
    }
    host_kernel("gather", t, |h| {
        let values = h.host_values().unwrap_or(&[]);
        let shape = with_rows(t, idx.len());
        let mut out = Vec::new();
        out.try_reserve_exact(shape.numel())
            .map_err(|_| TensorError::TooLarge {
                op: "gather",
                shape: shape.to_string(),
            })?;
        for &i in idx {
            let i = i as usize;
            out.extend_from_slice(&values[i * w..(i + 1) * w]);
        }
        Ok(Tensor::host(shape, out))
    })
}

/// `get(t, i...)`: one element, as a float; one index per dimension.
pub fn get(t: &Tensor, index: &[i64]) -> Result<f64, TensorError> {
    let out_of_range = || TensorError::GetOutOfRange {
        index: format!("{index:?}").replace(' ', ""),
        shape: t.shape().clone(),
    };
    if index.len() != t.dims().len() {
        return Err(out_of_range());
    }
    let mut flat = 0usize;
    for (&i, &d) in index.iter().zip(t.dims()) {
        if i < 0 || i as u64 >= d as u64 {
            return Err(out_of_range());
        }
        flat = flat * d + i as usize;
    }
    common_device("get", &[t])?;
    let h = t.to_host()?;
    Ok(f64::from(h.host_values().unwrap_or(&[])[flat]))
}

/// `onehot(labels, n)`: `[len(labels), n]` with a 1 in each row's label column.
pub fn onehot(labels: &[i64], n: i64) -> Result<Tensor, TensorError> {
    let shape = onehot_shape(labels, n)?;
    let n = n as usize;
    let mut out = alloc("onehot", &shape, shape.numel())?;
    for (row, &l) in labels.iter().enumerate() {
        out[row * n + l as usize] = 1.0;
    }
    Ok(Tensor::host(shape, out))
}

/// `onehot(labels, n)` built on a device (the backend's `onehot` hook; only
/// the labels cross to it), or on the host and uploaded when the backend
/// declines. The language's `onehot` has no device argument and builds on
/// the host; this is for Rust callers that place batches themselves.
pub fn onehot_on(labels: &[i64], n: i64, dev: &Arc<dyn Device>) -> Result<Tensor, TensorError> {
    let shape = onehot_shape(labels, n)?;
    match dev.onehot(labels, n as usize)? {
        Some(m) => Ok(wrap(shape, dev, m)),
        None => to_device(&onehot(labels, n)?, dev),
    }
}

/// The shape `[len(labels), n]`, after checking every label is in `0..n`.
fn onehot_shape(labels: &[i64], n: i64) -> Result<Shape, TensorError> {
    let shape = parse_shape("onehot", &[labels.len() as i64, n])?;
    if let Some(&bad) = labels.iter().find(|&&l| l < 0 || l >= n) {
        return Err(TensorError::LabelOutOfRange { label: bad, n });
    }
    Ok(shape)
}
