//! One step of a group, apart from any waiting: what a member deposits,
//! the checks made on the calling member alone (`local_check`), the
//! checks the last arriver makes on all deposits (`validate`), and the
//! result computed by one member alone (`combine`, the small path). The
//! sliced path for large tensors is `job.rs`.

use std::borrow::Cow;
use std::mem::MaybeUninit;
use std::sync::Arc;

use crate::{kernel, CollError, Data, F32Part, Op, Outcome, Reduce};

/// One member's contribution to a step.
pub(crate) struct Deposit<V> {
    pub(crate) op: Op,
    pub(crate) ty: Cow<'static, str>,
    pub(crate) data: Data<V>,
}

/// The checks that need no other member: the broadcast root is in range,
/// the data is of a kind the op takes, a tensor's buffer fits its shape.
pub(crate) fn local_check<V>(d: &Deposit<V>, size: usize) -> Result<(), CollError> {
    let unsupported = || CollError::Unsupported {
        op: d.op.name(),
        ty: d.ty.clone(),
    };
    match (d.op, &d.data) {
        (Op::Broadcast { root }, _) if root >= size => {
            return Err(CollError::RootRange { root, size });
        }
        (Op::AllReduce(_), Data::Value(_) | Data::Shaped { .. } | Data::Unit) => {
            return Err(unsupported());
        }
        (
            Op::AllGather,
            Data::Int(_) | Data::Float(_) | Data::F32 { .. } | Data::F32s(_) | Data::Unit,
        ) => {
            return Err(unsupported());
        }
        _ => {}
    }
    let check = |shape: &Arc<[usize]>, data: &Arc<Vec<f32>>| {
        let want = shape.iter().try_fold(1usize, |a, &b| a.checked_mul(b));
        if want == Some(data.len()) {
            return Ok(());
        }
        Err(CollError::BadTensor {
            op: d.op.name(),
            shape: shape.clone(),
            len: data.len(),
        })
    };
    match &d.data {
        Data::F32 { shape, data } => check(shape, data),
        Data::F32s(parts) => parts.iter().try_for_each(|p| check(&p.shape, &p.data)),
        _ => Ok(()),
    }
}

/// A list's shapes, for its mismatch message.
fn shapes_of(parts: &[F32Part]) -> Arc<[Arc<[usize]>]> {
    parts.iter().map(|p| p.shape.clone()).collect()
}

/// The checks of the last arriver, in the order docs/language.md gives:
/// the op (rank 0's against the lowest rank that differs), the broadcast
/// root, the type, the shape. A barrier's values are not compared.
pub(crate) fn validate<V>(deps: &[Deposit<V>]) -> Result<(), CollError> {
    let Some((first, rest)) = deps.split_first() else {
        return Ok(());
    };
    let others = || rest.iter().enumerate().map(|(i, d)| (i + 1, d));
    if let Some((rank, d)) = others().find(|(_, d)| d.op.kind() != first.op.kind()) {
        return Err(CollError::OpMismatch {
            first: first.op.name(),
            rank,
            other: d.op.name(),
        });
    }
    if let Some((rank, d)) = others().find(|(_, d)| d.op != first.op) {
        if let (Op::Broadcast { root: a }, Op::Broadcast { root: b }) = (first.op, d.op) {
            return Err(CollError::RootMismatch {
                first: a,
                rank,
                other: b,
            });
        }
    }
    if first.op == Op::Barrier {
        return Ok(());
    }
    if let Some((rank, d)) =
        others().find(|(_, d)| d.ty != first.ty || d.data.kind() != first.data.kind())
    {
        return Err(CollError::TypeMismatch {
            op: first.op.name(),
            first: first.ty.clone(),
            rank,
            other: d.ty.clone(),
        });
    }
    if let Data::F32s(p0) = &first.data {
        let differs = |d: &Deposit<V>| match &d.data {
            Data::F32s(p) => {
                p.len() != p0.len() || p.iter().zip(p0).any(|(a, b)| a.shape != b.shape)
            }
            _ => true,
        };
        if let Some((rank, d)) = others().find(|(_, d)| differs(d)) {
            let other = match &d.data {
                Data::F32s(p) => shapes_of(p),
                _ => Arc::from([]),
            };
            return Err(CollError::ListShapeMismatch {
                op: first.op.name(),
                first: shapes_of(p0),
                rank,
                other,
            });
        }
    }
    if let Some(s0) = first.data.shape() {
        if let Some((rank, d)) = others().find(|(_, d)| d.data.shape() != Some(s0)) {
            return Err(CollError::ShapeMismatch {
                op: first.op.name(),
                first: s0.clone(),
                rank,
                other: d.data.shape().cloned().unwrap_or_else(|| Arc::from([])),
            });
        }
    }
    Ok(())
}

/// True when the step is an all-reduce of tensors among two or more
/// members whose inputs hold at least `min_elems` elements in all
/// (members times elements): the sliced path.
pub(crate) fn sliced<V>(deps: &[Deposit<V>], min_elems: usize) -> bool {
    match (deps.first().map(|d| (d.op, &d.data)), deps.len()) {
        (Some((Op::AllReduce(_), Data::F32 { data, .. })), n) => {
            n >= 2 && data.len().saturating_mul(n) >= min_elems
        }
        _ => false,
    }
}

/// The result of a validated step, computed by the caller alone (the
/// small path; for the sliced path see `job.rs`).
pub(crate) fn combine<V: Clone>(deps: Vec<Deposit<V>>) -> Result<Outcome<V>, CollError> {
    let Some(first) = deps.first() else {
        return Ok(Outcome::Unit);
    };
    let (op, ty) = (first.op, first.ty.clone());
    let unsupported = || CollError::Unsupported {
        op: op.name(),
        ty: ty.clone(),
    };
    match op {
        Op::Barrier => Ok(Outcome::Unit),
        Op::AllReduce(r) => reduce(r, deps).ok_or_else(unsupported),
        Op::Broadcast { root } => {
            let d = deps.into_iter().nth(root).ok_or_else(unsupported)?;
            Ok(match d.data {
                Data::Int(x) => Outcome::Int(x),
                Data::Float(x) => Outcome::Float(x),
                Data::F32 { shape, data } => Outcome::F32 { shape, data },
                Data::F32s(parts) => Outcome::F32s(parts.into()),
                Data::Value(v) | Data::Shaped { value: v, .. } => Outcome::Value(v),
                Data::Unit => Outcome::Unit,
            })
        }
        Op::AllGather => {
            let mut all = Vec::with_capacity(deps.len());
            for d in deps {
                match d.data {
                    Data::Value(v) | Data::Shaped { value: v, .. } => all.push(v),
                    _ => return Err(unsupported()),
                }
            }
            Ok(Outcome::Gathered(Arc::new(all)))
        }
    }
}

/// An all-reduce on the small path; `None` for data it does not take
/// (which `local_check` and `validate` rule out).
fn reduce<V>(op: Reduce, deps: Vec<Deposit<V>>) -> Option<Outcome<V>> {
    let mut it = deps.into_iter().map(|d| d.data);
    match it.next()? {
        Data::Int(mut a) => {
            for d in it {
                let Data::Int(b) = d else { return None };
                a = kernel::int(op, a, b);
            }
            Some(Outcome::Int(a))
        }
        Data::Float(mut a) => {
            for d in it {
                let Data::Float(b) = d else { return None };
                a = kernel::float(op, a, b);
            }
            Some(Outcome::Float(a))
        }
        Data::F32 { shape, data } => {
            let mut inputs = vec![data];
            for d in it {
                let Data::F32 { data, .. } = d else {
                    return None;
                };
                inputs.push(data);
            }
            if inputs.len() == 1 {
                // One member: the result is its own buffer, shared.
                let data = inputs.pop()?;
                return Some(Outcome::F32 { shape, data });
            }
            let slices: Vec<&[f32]> = inputs.iter().map(|v| v.as_slice()).collect();
            Some(Outcome::F32 {
                shape,
                data: Arc::new(reduced(op, &slices)),
            })
        }
        Data::F32s(first) => {
            let mut lists = vec![first];
            for d in it {
                let Data::F32s(parts) = d else {
                    return None;
                };
                lists.push(parts);
            }
            if lists.len() == 1 {
                return lists.pop().map(|parts| Outcome::F32s(parts.into()));
            }
            // Part by part, each reduced like a tensor alone (`validate`
            // made every list as long as the first, with its shapes).
            let mut out = Vec::with_capacity(lists[0].len());
            for (i, part) in lists[0].iter().enumerate() {
                let slices: Vec<&[f32]> = lists
                    .iter()
                    .map(|l| l.get(i).map_or(&[][..], |p| p.data.as_slice()))
                    .collect();
                if slices.iter().any(|s| s.len() != part.data.len()) {
                    return None;
                }
                out.push(F32Part {
                    shape: part.shape.clone(),
                    data: Arc::new(reduced(op, &slices)),
                });
            }
            Some(Outcome::F32s(out.into()))
        }
        Data::Value(_) | Data::Shaped { .. } | Data::Unit => None,
    }
}

/// The elementwise reduction of `inputs`, all of one length, in rank
/// order, into a new buffer.
fn reduced(op: Reduce, inputs: &[&[f32]]) -> Vec<f32> {
    let len = inputs.first().map_or(0, |s| s.len());
    let mut out: Vec<f32> = Vec::with_capacity(len);
    let spare: &mut [MaybeUninit<f32>] = &mut out.spare_capacity_mut()[..len];
    kernel::reduce_f32(op, inputs, spare);
    // SAFETY: `reduce_f32` initialized the first `len` elements (every
    // input has `len` elements: `validate` compared shapes and
    // `local_check` lengths against shapes; the list path checks lengths
    // itself).
    unsafe { out.set_len(len) };
    out
}
