//! Constructors and shape queries: `zeros ones full randn tensor_from shape
//! numel`. Shapes arrive as the language's `[]int` (`i64`); a negative
//! dimension is an error, and so is a shape too large to allocate.
//!
//! `randn` draws standard normals with the Box-Muller transform from a
//! `fastrand` generator seeded with `seed`: the same seed gives the same
//! tensor on every run.

use super::{alloc, Shape, Tensor, TensorError};

/// Checks a language shape: no negative dimension, element count fits.
pub(crate) fn parse_shape(op: &'static str, dims: &[i64]) -> Result<Shape, TensorError> {
    let text = || format!("{dims:?}").replace(' ', "");
    let mut out = Vec::with_capacity(dims.len());
    let mut n: usize = 1;
    for &d in dims {
        let d = usize::try_from(d).map_err(|_| TensorError::InvalidShape { op, shape: text() })?;
        n = n
            .checked_mul(d)
            .filter(|&n| n <= isize::MAX as usize / 4)
            .ok_or_else(|| TensorError::TooLarge { op, shape: text() })?;
        out.push(d);
    }
    Ok(Shape::new(&out))
}

/// `full(shape, v)`: every element `v`.
pub fn full(dims: &[i64], v: f64) -> Result<Tensor, TensorError> {
    filled("full", dims, v as f32)
}

/// `zeros(shape)`.
pub fn zeros(dims: &[i64]) -> Result<Tensor, TensorError> {
    filled("zeros", dims, 0.0)
}

/// `ones(shape)`.
pub fn ones(dims: &[i64]) -> Result<Tensor, TensorError> {
    filled("ones", dims, 1.0)
}

fn filled(op: &'static str, dims: &[i64], v: f32) -> Result<Tensor, TensorError> {
    let shape = parse_shape(op, dims)?;
    let mut data = alloc(op, &shape, shape.numel())?;
    if v != 0.0 {
        data.fill(v);
    }
    Ok(Tensor::host(shape, data))
}

/// `randn(shape, seed)`: independent standard normal values, determined by `seed`.
pub fn randn(dims: &[i64], seed: i64) -> Result<Tensor, TensorError> {
    let shape = parse_shape("randn", dims)?;
    let mut data = alloc("randn", &shape, shape.numel())?;
    let mut rng = fastrand::Rng::with_seed(seed as u64);
    for pair in data.chunks_mut(2) {
        // Box-Muller: u1 in (0, 1] keeps ln finite.
        let u1 = 1.0 - rng.f64();
        let u2 = rng.f64();
        let r = (-2.0 * u1.ln()).sqrt();
        let theta = std::f64::consts::TAU * u2;
        pair[0] = (r * theta.cos()) as f32;
        if let Some(second) = pair.get_mut(1) {
            *second = (r * theta.sin()) as f32;
        }
    }
    Ok(Tensor::host(shape, data))
}

/// `tensor_from(list, shape)`: the list's values in row-major order.
pub fn tensor_from(values: &[f64], dims: &[i64]) -> Result<Tensor, TensorError> {
    let shape = parse_shape("tensor_from", dims)?;
    if values.len() != shape.numel() {
        return Err(TensorError::ListLength {
            len: values.len(),
            shape: shape.to_string(),
        });
    }
    Ok(Tensor::host(
        shape,
        values.iter().map(|&v| v as f32).collect(),
    ))
}

/// `shape(t)` as the language's `[]int`.
pub fn shape(t: &Tensor) -> Vec<i64> {
    t.dims().iter().map(|&d| d as i64).collect()
}

/// `numel(t)`.
pub fn numel(t: &Tensor) -> i64 {
    t.numel() as i64
}
