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
//! Memory: what a result allocates is asked of the memory ceiling before
//! the call (a reduced tensor's buffer, a gathered list); device copies
//! go through `tensor_ops::run`, which asks for its own.

use std::sync::Arc;

use weft_coll::{Data, Op, Outcome};
use weft_rt::memlimit::Ceiling;
use weft_rt::{self as runtime};
use weft_tensor::Tensor;

use super::code::TensorOp;
use super::error::RuntimeError;
use super::tensor_ops;
use super::value::{Value, VALUE_BYTES};

/// The placement of the copies here: every one names both devices (so
/// `here` is not used), and `to` has a kernel on every device (so no
/// fallback can happen).
const COPY: tensor_ops::Place<'static> = tensor_ops::Place {
    here: "cpu",
    strict: false,
};

/// Where a member's result must live: `None` for the host, else the
/// device of the member's tensor.
pub type Home = Option<Arc<str>>;

/// What the backend takes for `x` in `op` on a group of `size` members,
/// and where the result must live. Asks the memory ceiling for what the
/// result will allocate.
pub async fn data(
    op: Op,
    x: Option<Value>,
    size: usize,
    mem: Ceiling,
) -> Result<(Data<Value>, Home), RuntimeError> {
    let Some(x) = x else {
        return Ok((Data::Unit, None));
    };
    let home = match &x {
        Value::Tensor(t) if t.device_name() != "cpu" => Some(Arc::from(t.device_name())),
        _ => None,
    };
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
            let host = match &home {
                None => *t,
                Some(_) => {
                    let _hold = runtime::external_wait();
                    let cpu = vec![Value::Tensor(t), Value::str("cpu")];
                    match tensor_ops::run(TensorOp::To, cpu, mem, COPY).await? {
                        Value::Tensor(h) => *h,
                        other => return Err(RuntimeError::unexpected("to(t, \"cpu\")", &other)),
                    }
                }
            };
            match host.host_buffer() {
                Some(data) => Data::F32 {
                    shape: Arc::from(host.dims()),
                    data,
                },
                None => return Err(RuntimeError::unexpected("host tensor", &host)),
            }
        }
        (_, x) => shaped(x),
    };
    Ok((data, home))
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
    Ok(match out {
        Outcome::Int(n) => Value::Int(n),
        Outcome::Float(f) => Value::Float(f),
        Outcome::Unit => Value::Int(0),
        Outcome::F32 { shape, data } => {
            let t = Tensor::from_host_buffer(&shape, data)?;
            placed(Value::Tensor(Box::new(t)), &home, mem).await?
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

/// Whether `v` is a tensor that lives elsewhere than `home`, or on a
/// device (whose values a member must wait for, as for a tensor received
/// from a channel).
fn needs_move(v: &Value, home: &Home) -> bool {
    match v {
        Value::Tensor(t) => home.is_some() || t.device_name() != "cpu",
        _ => false,
    }
}

/// `v` copied to `home` when it is a tensor living elsewhere; a tensor
/// on a device is ready when this returns.
async fn placed(v: Value, home: &Home, mem: Ceiling) -> Result<Value, RuntimeError> {
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
