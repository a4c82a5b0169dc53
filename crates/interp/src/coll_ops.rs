//! Collectives in the interpreter (docs/language.md, "Collectives"): a
//! thin adapter over `weft_coll`, as `tensor_ops` is over `weft_tensor`.
//! `task.rs` calls `data` to turn a member's value into what the backend
//! takes, awaits `Member::call` itself (the wait a deadlock report shows as
//! `[collective]`), and calls `value` to turn the outcome back into the
//! result.
//!
//! Tensors: a host tensor's buffer goes to the backend as it is (an `Arc`,
//! no copy; a lazy transpose is made row-major first), and a reduced
//! buffer comes back as a host tensor over the same `Arc`. A tensor on a
//! device takes the host path: copied to the host, reduced there, and the
//! result copied back to the device of the member's value, so the result
//! always lives where the member's `x` did. `broadcast` and `allgather`
//! move tensors as values (shared, not copied), and copy one to the
//! member's device only when it lives elsewhere.
//!
//! A list of tensors (a bucketed all-reduce, docs/collectives.md, "Lists
//! of tensors") goes to a group as a list of buffers (`Data::F32s`: the
//! tensors' own `Arc`s, no copy), so the members meet once for the whole
//! list, and the result comes back as one buffer a tensor, each made a
//! tensor over its `Arc` on its own input's device. Over `world()`, and
//! where the list is large enough for the group's sliced path (which
//! splits one buffer among the members), it goes as one buffer, the
//! tensors' elements one after the other, and the result is cut back
//! into tensors (two copies). The members must agree on every shape: the
//! list's shapes are part of the type name the backend compares
//! ([`LIST_TY`]), and a mismatch of them is reported as a shape mismatch
//! ([`list_mismatch`]).
//!
//! Memory: what a result allocates is asked of the memory ceiling before
//! the call (a reduced tensor's buffer, a gathered list); device copies
//! go through `tensor_ops::run`, which asks for its own.

use std::borrow::Cow;
use std::sync::Arc;

use weft_coll::{CollError, Data, F32Part, ListDims, Op, Outcome};
use weft_rt::memlimit::Ceiling;
use weft_rt::{self as runtime};
use weft_tensor::Tensor;

use super::code::TensorOp;
use super::error::{ListShapes, RuntimeError};
use super::tensor_ops;
use super::value::{Value, VALUE_BYTES};

/// The placement of the copies here: every one names both devices (so
/// `here` is not used), and `to` has a kernel on every device (so no
/// fallback can happen).
const COPY: tensor_ops::Place<'static> = tensor_ops::Place {
    here: "cpu",
    strict: false,
};

/// Where one tensor of a list all-reduce's result goes: its shape, and
/// its device (`None` for the host).
pub type Part = (Arc<[usize]>, Option<Arc<str>>);

/// Where a member's result must live.
pub enum Home {
    /// One value: `None` for the host, else the device of the member's
    /// tensor.
    One(Option<Arc<str>>),
    /// A list of tensors reduced as one buffer: each tensor's shape and
    /// device, in the list's order.
    Parts(Vec<Part>),
}

/// The start of the type name a list all-reduce gives the backend: the
/// shapes follow (`[]tensor of shapes [[2 3] [4]]`), so that members
/// whose lists differ in a shape, or in length, disagree on the type.
/// No type name of the language starts so.
pub const LIST_TY: &str = "[]tensor of shapes ";

/// What one member hands the backend: the data, the type name it
/// compares, and where the result must live.
pub struct Prepared {
    pub data: Data<Value>,
    pub ty: Cow<'static, str>,
    pub home: Home,
}

/// What the backend takes for `x` (of type `ty`) in `op` on a group of
/// `size` members, and where the result must live. Asks the memory
/// ceiling for what the result will allocate. `parts_below`: a list
/// all-reduce goes as a list of buffers when its elements times `size`
/// are fewer than this (a group's `small_elems`), else as one buffer;
/// `None` (`world()`): always as one buffer.
pub async fn data(
    op: Op,
    ty: Cow<'static, str>,
    x: Option<Value>,
    size: usize,
    mem: Ceiling,
    parts_below: Option<usize>,
) -> Result<Prepared, RuntimeError> {
    let Some(x) = x else {
        let home = Home::One(None);
        return Ok(Prepared {
            data: Data::Unit,
            ty,
            home,
        });
    };
    if let (Op::AllReduce(_), Value::List(items)) = (op, &x) {
        return list(items, size, mem, parts_below).await;
    }
    let home = Home::One(match &x {
        Value::Tensor(t) if t.device_name() != "cpu" => Some(Arc::from(t.device_name())),
        _ => None,
    });
    let data = match (op, x) {
        (Op::Barrier, _) => Data::Unit,
        (Op::AllGather, x) => {
            mem.check(size.saturating_mul(VALUE_BYTES))?;
            shaped(x)
        }
        (Op::AllReduce(_) | Op::Broadcast { .. }, Value::Int(n)) => Data::Int(n),
        (Op::AllReduce(_) | Op::Broadcast { .. }, Value::Float(f)) => Data::Float(f),
        (Op::AllReduce(_), Value::Tensor(t)) => {
            mem.check(t.numel().saturating_mul(F32))?;
            let host = on_host(t, mem).await?;
            Data::F32 {
                shape: Arc::from(host.dims()),
                data: host_buffer(&host)?,
            }
        }
        (_, x) => shaped(x),
    };
    Ok(Prepared { data, ty, home })
}

/// A list all-reduce: the tensors' buffers as they are (`Data::F32s`),
/// or their elements as one buffer (see [`data`]), and the list's shapes
/// in the type name.
async fn list(
    items: &Arc<Vec<Value>>,
    size: usize,
    mem: Ceiling,
    parts_below: Option<usize>,
) -> Result<Prepared, RuntimeError> {
    let mut total = 0usize;
    for v in items.iter() {
        match v {
            Value::Tensor(t) => total = total.saturating_add(t.numel()),
            other => return Err(RuntimeError::unexpected("a list of tensors", other)),
        }
    }
    let as_parts = parts_below.is_some_and(|below| total.saturating_mul(size) < below);
    // As parts: the reduced buffers. As one buffer: the one sent, the
    // reduced one, and the tensors cut from it.
    let copies = if as_parts { 1 } else { 3 };
    mem.check(total.saturating_mul(copies * F32))?;
    let mut bufs = Vec::with_capacity(items.len());
    let mut homes = Vec::with_capacity(items.len());
    for v in items.iter() {
        let Value::Tensor(t) = v else { continue };
        homes.push((t.device_name() != "cpu").then(|| Arc::from(t.device_name())));
        let host = on_host(t.clone(), mem).await?;
        bufs.push(F32Part {
            shape: Arc::from(host.dims()),
            data: host_buffer(&host)?,
        });
    }
    let shapes: Vec<Arc<[usize]>> = bufs.iter().map(|b| b.shape.clone()).collect();
    let ty = format!("{LIST_TY}{}", ListDims(&shapes));
    let parts = shapes.into_iter().zip(homes).collect();
    let data = if as_parts {
        Data::F32s(bufs)
    } else {
        let mut flat = Vec::with_capacity(total);
        for b in &bufs {
            flat.extend_from_slice(&b.data);
        }
        Data::F32 {
            shape: Arc::from([flat.len()]),
            data: Arc::new(flat),
        }
    };
    Ok(Prepared {
        data,
        ty: Cow::Owned(ty),
        home: Home::Parts(parts),
    })
}

/// `t` itself when it lives on the host, else a host copy of it.
async fn on_host(t: Arc<Tensor>, mem: Ceiling) -> Result<Tensor, RuntimeError> {
    if t.device_name() == "cpu" {
        return Ok(Arc::unwrap_or_clone(t));
    }
    let _hold = runtime::external_wait();
    let cpu = vec![Value::Tensor(t), Value::str("cpu")];
    match tensor_ops::run(TensorOp::To, cpu, mem, COPY).await? {
        Value::Tensor(h) => Ok(Arc::unwrap_or_clone(h)),
        other => Err(RuntimeError::unexpected("to(t, \"cpu\")", &other)),
    }
}

fn host_buffer(host: &Tensor) -> Result<Arc<Vec<f32>>, RuntimeError> {
    host.host_buffer()
        .ok_or_else(|| RuntimeError::unexpected("host tensor", host))
}

/// A backend error of a collective in which some member passed a list of
/// tensors: a type mismatch between two lists is a mismatch of their
/// shapes (`allreduce_sum: shape mismatch: [[2 3] [4]] (rank 0) vs [[3
/// 2] [4]] (rank 1)`), and one between a list and another value names
/// the list's type alone. Other errors pass as they are.
pub fn list_mismatch(e: RuntimeError) -> RuntimeError {
    let RuntimeError::Collective(c) = e else {
        return e;
    };
    match *c {
        CollError::TypeMismatch {
            op,
            first,
            rank,
            other,
        } if first.starts_with(LIST_TY) || other.starts_with(LIST_TY) => {
            match (first.strip_prefix(LIST_TY), other.strip_prefix(LIST_TY)) {
                (Some(a), Some(b)) => RuntimeError::ListShapes(Box::new(ListShapes {
                    op,
                    first: a.into(),
                    rank,
                    other: b.into(),
                })),
                _ => {
                    let plain = |t: Cow<'static, str>| match t.strip_prefix(LIST_TY) {
                        Some(_) => Cow::Borrowed("[]tensor"),
                        None => t,
                    };
                    let e = CollError::TypeMismatch {
                        op,
                        first: plain(first),
                        rank,
                        other: plain(other),
                    };
                    RuntimeError::Collective(Box::new(e))
                }
            }
        }
        c => RuntimeError::Collective(Box::new(c)),
    }
}

/// The bytes of a host `f32`.
const F32: usize = 4;

/// A value moved as it is: a tensor with its shape (members must agree),
/// anything else plain.
fn shaped(x: Value) -> Data<Value> {
    match x {
        Value::Tensor(t) => Data::Shaped {
            shape: Arc::from(t.dims()),
            value: Value::Tensor(t),
        },
        x => Data::Value(x),
    }
}

/// The result of a collective for a member whose value lived at `home`.
pub async fn value(out: Outcome<Value>, home: Home, mem: Ceiling) -> Result<Value, RuntimeError> {
    let home = match home {
        Home::One(h) => h,
        Home::Parts(parts) => return cut(out, parts, mem).await,
    };
    Ok(match out {
        Outcome::Int(n) => Value::Int(n),
        Outcome::Float(f) => Value::Float(f),
        Outcome::Unit => Value::Int(0),
        Outcome::F32 { shape, data } => {
            let t = Tensor::from_host_buffer(&shape, data)?;
            placed(Value::Tensor(Arc::new(t)), &home, mem).await?
        }
        Outcome::F32s(_) => {
            return Err(RuntimeError::unexpected("one value", &"a list of buffers"));
        }
        Outcome::Value(v) => placed(v, &home, mem).await?,
        Outcome::Gathered(list) => {
            if !list.iter().any(|v| needs_move(v, &home)) {
                Value::List(list)
            } else {
                let mut moved = Vec::with_capacity(list.len());
                for v in list.iter() {
                    moved.push(placed(v.clone(), &home, mem).await?);
                }
                Value::list(moved)
            }
        }
    })
}

/// A list all-reduce's result, each tensor placed on its own input's
/// device: one buffer a tensor, each made a tensor as it is, or one
/// buffer cut into the members' shapes.
async fn cut(out: Outcome<Value>, parts: Vec<Part>, mem: Ceiling) -> Result<Value, RuntimeError> {
    let data = match out {
        Outcome::F32 { data, .. } => data,
        Outcome::F32s(bufs) if bufs.len() == parts.len() => {
            let mut items = Vec::with_capacity(parts.len());
            for (buf, (shape, home)) in bufs.iter().zip(parts) {
                let t = Tensor::from_host_buffer(&shape, buf.data.clone())?;
                items.push(placed(Value::Tensor(Arc::new(t)), &home, mem).await?);
            }
            return Ok(Value::list(items));
        }
        _ => return Err(RuntimeError::unexpected("reduced list", &"another outcome")),
    };
    let mut items = Vec::with_capacity(parts.len());
    let mut at = 0usize;
    for (shape, home) in parts {
        let n = shape.iter().product::<usize>();
        let Some(part) = at.checked_add(n).and_then(|end| data.get(at..end)) else {
            return Err(RuntimeError::unexpected("reduced list", &"a short buffer"));
        };
        at += n;
        let t = Tensor::from_vec(&shape, part.to_vec())?;
        items.push(placed(Value::Tensor(Arc::new(t)), &home, mem).await?);
    }
    Ok(Value::list(items))
}

/// Whether `v` is a tensor that lives elsewhere than `home`, or on a
/// device (whose values a member must wait for, as for a tensor received
/// from a channel).
fn needs_move(v: &Value, home: &Option<Arc<str>>) -> bool {
    match v {
        Value::Tensor(t) => home.is_some() || t.device_name() != "cpu",
        _ => false,
    }
}

/// `v` copied to `home` when it is a tensor living elsewhere; a tensor
/// on a device is ready when this returns.
async fn placed(v: Value, home: &Option<Arc<str>>, mem: Ceiling) -> Result<Value, RuntimeError> {
    let Value::Tensor(t) = v else { return Ok(v) };
    let dev = home.as_deref().unwrap_or("cpu");
    let _hold = (t.device_name() != "cpu" || dev != "cpu").then(runtime::external_wait);
    let t = if t.device_name() == dev {
        t
    } else {
        let args = vec![Value::Tensor(t), Value::str(dev)];
        match tensor_ops::run(TensorOp::To, args, mem, COPY).await? {
            Value::Tensor(t) => t,
            other => return Err(RuntimeError::unexpected("to(t, dev)", &other)),
        }
    };
    t.ready().await?;
    Ok(Value::Tensor(t))
}
