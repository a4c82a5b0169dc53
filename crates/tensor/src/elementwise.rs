//! Elementwise kernels: `+ - * /` on equal shapes, with a float on either
//! side, and with a row `[n]` broadcast across `[m, n]` (either side); and
//! the maps `neg relu relu_mask exp log`.
//!
//! These take their operands by value: when an operand holds the only
//! reference to its host buffer and has the result's shape, the result is
//! written into that buffer (copy-on-write without the copy). The loops are
//! plain iterator zips over slices, monomorphized per operator, which the
//! compiler turns into SIMD loops (see `benches/tensor.rs`), `exp` and
//! `log` included (`mathf`: branch-free Cephes polynomials, no libm calls).

use super::fallback;
use super::place::{common_device, mem, wrap};
use super::{mathf, Shape, Tensor, TensorError};
use crate::device::{BinOp, Layout, UnaryOp};

/// `a + b`.
pub fn add(a: Tensor, b: Tensor) -> Result<Tensor, TensorError> {
    binary(BinOp::Add, a, b)
}

/// `a - b`.
pub fn sub(a: Tensor, b: Tensor) -> Result<Tensor, TensorError> {
    binary(BinOp::Sub, a, b)
}

/// `a * b` (elementwise).
pub fn mul(a: Tensor, b: Tensor) -> Result<Tensor, TensorError> {
    binary(BinOp::Mul, a, b)
}

/// `a / b` (elementwise; IEEE division, no error on zero).
pub fn div(a: Tensor, b: Tensor) -> Result<Tensor, TensorError> {
    binary(BinOp::Div, a, b)
}

/// `-t`.
pub fn neg(t: Tensor) -> Result<Tensor, TensorError> {
    unary(UnaryOp::Neg, t)
}

/// `relu(t)`: `max(x, 0)`.
pub fn relu(t: Tensor) -> Result<Tensor, TensorError> {
    unary(UnaryOp::Relu, t)
}

/// `relu_mask(t)`: 1 where `x > 0`, else 0.
pub fn relu_mask(t: Tensor) -> Result<Tensor, TensorError> {
    unary(UnaryOp::ReluMask, t)
}

/// `exp(t)`.
pub fn exp(t: Tensor) -> Result<Tensor, TensorError> {
    unary(UnaryOp::Exp, t)
}

/// `log(t)` (natural logarithm; `log(0)` is `-inf`).
pub fn log(t: Tensor) -> Result<Tensor, TensorError> {
    unary(UnaryOp::Log, t)
}

/// How two shapes combine: equal, or a row broadcast across a matrix.
fn layout(op: BinOp, a: &Shape, b: &Shape) -> Result<(Layout, Shape), TensorError> {
    match (a.dims(), b.dims()) {
        (x, y) if x == y => Ok((Layout::Same { len: a.numel() }, a.clone())),
        (&[m, n], &[r]) if r == n => Ok((Layout::RowRight { m, n }, a.clone())),
        (&[r], &[m, n]) if r == n => Ok((Layout::RowLeft { m, n }, b.clone())),
        _ => Err(TensorError::ShapeMismatch {
            op: op.name(),
            sym: op.symbol(),
            a: a.clone(),
            b: b.clone(),
        }),
    }
}

/// `a op b` with broadcasting; see the module comment.
pub fn binary(op: BinOp, a: Tensor, b: Tensor) -> Result<Tensor, TensorError> {
    let (layout, shape) = layout(op, a.shape(), b.shape())?;
    let dev = common_device(op.name(), &[&a, &b])?;
    if let (Some(d), Some(ma), Some(mb)) = (&dev, mem(&a)?, mem(&b)?) {
        if let Some(m) = d.binary(op, &ma, &mb, layout)? {
            return Ok(wrap(shape, d, m));
        }
        let fb = fallback::begin(op.name(), d)?;
        let (ha, hb) = (a.to_host()?, b.to_host()?);
        let fb = fb.downloaded();
        return fb.upload(cpu_binary(op, ha, hb, layout, shape)?);
    }
    cpu_binary(op, a, b, layout, shape)
}

fn cpu_binary(
    op: BinOp,
    mut a: Tensor,
    mut b: Tensor,
    layout: Layout,
    shape: Shape,
) -> Result<Tensor, TensorError> {
    let out = match layout {
        Layout::Same { len } => {
            if a.is_unique_host() {
                let mut out = a.into_unique_host()?;
                zip(op, Dst::Left(&mut out, values(&b)));
                out
            } else if b.is_unique_host() {
                let mut out = b.into_unique_host()?;
                zip(op, Dst::Right(values(&a), &mut out));
                out
            } else {
                let mut out = fresh(op.name(), &shape, len)?;
                zip(op, Dst::New(&mut out, values(&a), values(&b)));
                out
            }
        }
        Layout::RowRight { m, n } => {
            let row = values(&b);
            if a.is_unique_host() {
                let mut out = a.into_unique_host()?;
                for r in out.chunks_exact_mut(n) {
                    zip(op, Dst::Left(r, row));
                }
                out
            } else {
                let mut out = fresh(op.name(), &shape, m * n)?;
                for x in values(&a).chunks_exact(n) {
                    zip(op, Dst::New(&mut out, x, row));
                }
                out
            }
        }
        Layout::RowLeft { m, n } => {
            let row = values(&a);
            if b.is_unique_host() {
                let mut out = b.into_unique_host()?;
                for r in out.chunks_exact_mut(n) {
                    zip(op, Dst::Right(row, r));
                }
                out
            } else {
                let mut out = fresh(op.name(), &shape, m * n)?;
                for y in values(&b).chunks_exact(n) {
                    zip(op, Dst::New(&mut out, row, y));
                }
                out
            }
        }
    };
    Ok(Tensor::host(shape, out))
}

/// `t op s` (tensor on the left, float on the right).
pub fn tensor_scalar(op: BinOp, t: Tensor, s: f64) -> Result<Tensor, TensorError> {
    scalar(op, t, s as f32, false)
}

/// `s op t` (float on the left, tensor on the right).
pub fn scalar_tensor(op: BinOp, s: f64, t: Tensor) -> Result<Tensor, TensorError> {
    scalar(op, t, s as f32, true)
}

fn scalar(op: BinOp, t: Tensor, s: f32, left: bool) -> Result<Tensor, TensorError> {
    let dev = common_device(op.name(), &[&t])?;
    if let (Some(d), Some(mt)) = (&dev, mem(&t)?) {
        if let Some(m) = d.scalar(op, &mt, s, left, t.numel())? {
            return Ok(wrap(t.shape().clone(), d, m));
        }
        let fb = fallback::begin(op.name(), d)?;
        let h = t.to_host()?;
        let fb = fb.downloaded();
        return fb.upload(scalar(op, h, s, left)?);
    }
    map_host(t, |dst| match (op, left) {
        (BinOp::Add, _) => map(move |x| x + s, dst),
        (BinOp::Mul, _) => map(move |x| x * s, dst),
        (BinOp::Sub, false) => map(move |x| x - s, dst),
        (BinOp::Sub, true) => map(move |x| s - x, dst),
        (BinOp::Div, false) => map(move |x| x / s, dst),
        (BinOp::Div, true) => map(move |x| s / x, dst),
    })
}

/// An elementwise map.
pub fn unary(op: UnaryOp, t: Tensor) -> Result<Tensor, TensorError> {
    let dev = common_device(op.name(), &[&t])?;
    if let (Some(d), Some(mt)) = (&dev, mem(&t)?) {
        if let Some(m) = d.unary(op, &mt, t.numel())? {
            return Ok(wrap(t.shape().clone(), d, m));
        }
        let fb = fallback::begin(op.name(), d)?;
        let h = t.to_host()?;
        let fb = fb.downloaded();
        return fb.upload(unary(op, h)?);
    }
    map_host(t, |dst| match op {
        UnaryOp::Neg => map(|x| -x, dst),
        UnaryOp::Relu => map(|x| if x > 0.0 { x } else { 0.0 }, dst),
        UnaryOp::ReluMask => map(|x| if x > 0.0 { 1.0 } else { 0.0 }, dst),
        UnaryOp::Exp => map(mathf::exp, dst),
        UnaryOp::Log => map(mathf::ln, dst),
    })
}

/// Runs a map on a host tensor, in place when it holds the only reference.
fn map_host(mut t: Tensor, run: impl FnOnce(MapDst<'_>)) -> Result<Tensor, TensorError> {
    let shape = t.shape().clone();
    let out = if t.is_unique_host() {
        let mut out = t.into_unique_host()?;
        run(MapDst::InPlace(&mut out));
        out
    } else {
        let mut out = fresh("map", &shape, shape.numel())?;
        run(MapDst::New(&mut out, values(&t)));
        out
    };
    Ok(Tensor::host(shape, out))
}

fn values(t: &Tensor) -> &[f32] {
    t.host_values().unwrap_or(&[])
}

/// An empty buffer with room for `n` values (grown by `Dst::New` or
/// `MapDst::New`).
fn fresh(op: &'static str, shape: &Shape, n: usize) -> Result<Vec<f32>, TensorError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| TensorError::TooLarge {
        op,
        shape: shape.to_string(),
    })?;
    Ok(v)
}

/// Where a binary kernel writes: appended to a new buffer, or over one operand.
enum Dst<'a> {
    New(&'a mut Vec<f32>, &'a [f32], &'a [f32]),
    Left(&'a mut [f32], &'a [f32]),
    Right(&'a [f32], &'a mut [f32]),
}

fn zip(op: BinOp, d: Dst<'_>) {
    match op {
        BinOp::Add => zip_with(|x, y| x + y, d),
        BinOp::Sub => zip_with(|x, y| x - y, d),
        BinOp::Mul => zip_with(|x, y| x * y, d),
        BinOp::Div => zip_with(|x, y| x / y, d),
    }
}

#[inline(always)]
fn zip_with(f: impl Fn(f32, f32) -> f32, d: Dst<'_>) {
    match d {
        Dst::New(o, a, b) => {
            // a zip of two slices has an exact length: `extend` writes each
            // value once (no zero fill first) and vectorizes
            o.extend(a.iter().zip(b).map(|(&x, &y)| f(x, y)));
        }
        Dst::Left(a, b) => {
            for (x, &y) in a.iter_mut().zip(b) {
                *x = f(*x, y);
            }
        }
        Dst::Right(a, b) => {
            for (&x, y) in a.iter().zip(b.iter_mut()) {
                *y = f(x, *y);
            }
        }
    }
}

/// Where a map writes: over its input, or appended to a new buffer.
enum MapDst<'a> {
    InPlace(&'a mut [f32]),
    New(&'a mut Vec<f32>, &'a [f32]),
}

#[inline(always)]
fn map(f: impl Fn(f32) -> f32, d: MapDst<'_>) {
    match d {
        MapDst::InPlace(a) => {
            for x in a.iter_mut() {
                *x = f(*x);
            }
        }
        MapDst::New(o, a) => {
            o.extend(a.iter().map(|&x| f(x)));
        }
    }
}
