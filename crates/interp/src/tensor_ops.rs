//! Tensor builtins and tensor arithmetic (docs/language.md, "Tensors") in the
//! interpreter: a thin adapter over `weft_tensor::builtins`, which owns
//! the builtin table, the kernel dispatch and the compute-pool cost.
//!
//! `run` converts the operands (`Value`s, in the registry's argument
//! order) to `builtins::Arg`s, calls `builtins::call`, and converts the
//! `Ret` back. `call` runs cheap kernels inline and long ones on the compute
//! pool (the cost comes from `tensor::kernel_cost`, which sends every
//! kernel with a device operand to the pool), so a long matmul parks only
//! its task, never a worker; the caller (`task.rs`) holds
//! `runtime::external_wait` meanwhile.
//!
//! Readiness (issue 7): an op whose operands are on its own device does not
//! wait for them on the host, because the device orders its own stream. The
//! host waits (`Tensor::ready`) only where values cross to it: the ops that
//! return host values (`get`, `sum`, `mean`, `argmax_rows`, `to(t, "cpu")`),
//! and a tensor received from a channel (`task.rs` waits after the
//! receive). Errors are the tensor crate's `TensorError`s, whose messages
//! are the panic messages.

use std::sync::Arc;

use weft_tensor::builtins::{self, Arg, Ret};

use super::code::TensorOp;
use super::error::RuntimeError;
use super::value::Value;

/// Runs a tensor op on its operands (in argument order).
pub async fn run(op: TensorOp, args: Vec<Value>) -> Result<Value, RuntimeError> {
    if to_host(op, &args) {
        for a in &args {
            if let Value::Tensor(t) = a {
                t.ready().await?;
            }
        }
    }
    let mut converted = Vec::with_capacity(args.len());
    for a in args {
        converted.push(arg(a)?);
    }
    Ok(value(builtins::call(op, converted).await?))
}

/// Whether `op` hands its operands' values to the host.
fn to_host(op: TensorOp, args: &[Value]) -> bool {
    match op {
        TensorOp::Get | TensorOp::Sum | TensorOp::Mean | TensorOp::ArgmaxRows => true,
        TensorOp::To => matches!(args.get(1), Some(Value::Str(d)) if &**d == "cpu"),
        _ => false,
    }
}

/// The builtin argument of an operand: a list of ints is `[]int`, a list
/// of numbers with a float is `[]float`.
fn arg(v: Value) -> Result<Arg, RuntimeError> {
    Ok(match v {
        Value::Tensor(t) => Arg::Tensor(*t),
        Value::Int(n) => Arg::Int(n),
        Value::Float(x) => Arg::Float(x),
        Value::Str(s) => Arg::Str(s.to_string()),
        Value::List(l) => match l.iter().map(int_of).collect::<Option<Vec<i64>>>() {
            Some(v) => Arg::Ints(v),
            None => Arg::Floats(
                l.iter()
                    .map(|v| match v {
                        Value::Float(x) => Ok(*x),
                        Value::Int(n) => Ok(*n as f64),
                        other => Err(RuntimeError::unexpected("[]float element", other)),
                    })
                    .collect::<Result<_, _>>()?,
            ),
        },
        other => return Err(RuntimeError::unexpected("tensor operand", &other)),
    })
}

fn int_of(v: &Value) -> Option<i64> {
    match v {
        Value::Int(n) => Some(*n),
        _ => None,
    }
}

fn ints(v: Vec<i64>) -> Value {
    Value::list(v.into_iter().map(Value::Int).collect())
}

/// The interpreter value of a builtin's result (a dataset is the struct
/// `{x tensor, y []int}`).
fn value(r: Ret) -> Value {
    match r {
        Ret::Tensor(t) => Value::Tensor(Box::new(t)),
        Ret::Int(n) => Value::Int(n),
        Ret::Float(x) => Value::Float(x),
        Ret::Str(s) => Value::str(&s),
        Ret::Ints(v) => ints(v),
        Ret::Strs(v) => Value::list(v.iter().map(|s| Value::str(s)).collect()),
        Ret::Dataset(d) => Value::Struct(Arc::new(vec![Value::Tensor(Box::new(d.x)), ints(d.y)])),
    }
}
