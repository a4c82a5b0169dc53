//! Tensor builtins and tensor arithmetic: the ops of spec section 8,
//! dispatched to `crate::tensor`.
//!
//! `run` first waits until every tensor operand is ready (a tensor received
//! from another task may still be in flight to a device: "the next use
//! waits"), then runs the kernel through the tensor module's compute pool,
//! which runs cheap kernels inline and long ones on pool threads, so a long
//! matmul parks only its task, never a worker. Operands come in the
//! registry's argument order; errors are the tensor module's panic messages.

use std::sync::Arc;

use crate::tensor::{self, BinOp, Tensor, TensorError, INLINE_COST};

use super::ops::{kind_error, Fail};
use super::value::Value;

macro_rules! tensor_ops {
    ($($v:ident = $n:literal),* $(,)?) => {
        /// A tensor operation (builtin or operator on tensors).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum TensorOp { $($v),* }

        impl TensorOp {
            /// The op for an IR op type, if it is a tensor builtin.
            pub fn from_name(name: &str) -> Option<TensorOp> {
                match name {
                    $($n => Some(TensorOp::$v),)*
                    _ => None,
                }
            }

            /// The builtin's name (operators: `add`, `sub`, ...).
            pub fn name(self) -> &'static str {
                match self { $(TensorOp::$v => $n),* }
            }
        }
    };
}

tensor_ops! {
    Add = "tensor_add", Sub = "tensor_sub", Mul = "tensor_mul", Div = "tensor_div",
    Neg = "tensor_neg",
    Zeros = "zeros", Ones = "ones", Full = "full", Randn = "randn",
    TensorFrom = "tensor_from", Shape = "shape", Numel = "numel", Matmul = "matmul",
    Transpose = "transpose", Relu = "relu", ReluMask = "relu_mask", Exp = "exp",
    Log = "log", Softmax = "softmax", Sum = "sum", SumRows = "sum_rows", Mean = "mean",
    ArgmaxRows = "argmax_rows", Onehot = "onehot", Rows = "rows", Gather = "gather",
    Get = "get", Devices = "devices", Device = "device", To = "to",
    LoadDataset = "load_dataset",
}

/// Runs a tensor op on its operands (in argument order).
pub async fn run(op: TensorOp, args: Vec<Value>) -> Result<Value, Fail> {
    for a in &args {
        if let Value::Tensor(t) = a {
            t.ready().await.map_err(fail)?;
        }
    }
    let cost = cost(op, &args);
    tensor::compute(cost, move || kernel(op, args)).await
}

fn fail(e: TensorError) -> Fail {
    e.to_string()
}

/// Work estimate for the compute pool: elements touched, or multiply-adds.
fn cost(op: TensorOp, args: &[Value]) -> usize {
    match (op, args) {
        (TensorOp::Matmul, [Value::Tensor(a), Value::Tensor(b)]) => tensor::matmul_cost(a, b),
        (TensorOp::LoadDataset, _) => INLINE_COST,
        (
            TensorOp::Zeros | TensorOp::Ones | TensorOp::Full | TensorOp::Randn,
            [Value::List(l), ..],
        ) => l
            .iter()
            .map(|d| match d {
                Value::Int(n) => usize::try_from(*n).unwrap_or(0),
                _ => 0,
            })
            .fold(1usize, usize::saturating_mul),
        _ => args
            .iter()
            .map(|a| match a {
                Value::Tensor(t) => t.numel(),
                Value::List(l) => l.len(),
                _ => 0,
            })
            .fold(0usize, usize::saturating_add),
    }
}

fn tensor_arg(args: &[Value], i: usize) -> Result<&Tensor, Fail> {
    match args.get(i) {
        Some(Value::Tensor(t)) => Ok(t),
        Some(other) => Err(kind_error("tensor operand", other)),
        None => Err("tensor op: missing operand".into()),
    }
}

fn int_arg(args: &[Value], i: usize) -> Result<i64, Fail> {
    match args.get(i) {
        Some(Value::Int(n)) => Ok(*n),
        Some(other) => Err(kind_error("int operand", other)),
        None => Err("tensor op: missing operand".into()),
    }
}

fn float_arg(args: &[Value], i: usize) -> Result<f64, Fail> {
    match args.get(i) {
        Some(Value::Float(x)) => Ok(*x),
        Some(Value::Int(n)) => Ok(*n as f64),
        Some(other) => Err(kind_error("float operand", other)),
        None => Err("tensor op: missing operand".into()),
    }
}

fn str_arg(args: &[Value], i: usize) -> Result<&str, Fail> {
    match args.get(i) {
        Some(Value::Str(s)) => Ok(s),
        Some(other) => Err(kind_error("string operand", other)),
        None => Err("tensor op: missing operand".into()),
    }
}

fn ints_arg(args: &[Value], i: usize) -> Result<Vec<i64>, Fail> {
    match args.get(i) {
        Some(Value::List(l)) => l
            .iter()
            .map(|v| match v {
                Value::Int(n) => Ok(*n),
                other => Err(kind_error("[]int element", other)),
            })
            .collect(),
        Some(other) => Err(kind_error("[]int operand", other)),
        None => Err("tensor op: missing operand".into()),
    }
}

fn floats_arg(args: &[Value], i: usize) -> Result<Vec<f64>, Fail> {
    match args.get(i) {
        Some(Value::List(l)) => l
            .iter()
            .map(|v| match v {
                Value::Float(x) => Ok(*x),
                Value::Int(n) => Ok(*n as f64),
                other => Err(kind_error("[]float element", other)),
            })
            .collect(),
        Some(other) => Err(kind_error("[]float operand", other)),
        None => Err("tensor op: missing operand".into()),
    }
}

fn t(r: Result<Tensor, TensorError>) -> Result<Value, Fail> {
    r.map(|t| Value::Tensor(Box::new(t))).map_err(fail)
}

fn ints(v: Vec<i64>) -> Value {
    Value::list(v.into_iter().map(Value::Int).collect())
}

/// Takes operand `i` out of `args` as an owned tensor (kernels that take
/// their operand by value reuse its buffer when it is the only reference).
fn take_tensor(args: &mut [Value], i: usize) -> Result<Tensor, Fail> {
    match args.get_mut(i) {
        Some(Value::Tensor(t)) => Ok(std::mem::take(&mut **t)),
        Some(other) => Err(kind_error("tensor operand", other)),
        None => Err("tensor op: missing operand".into()),
    }
}

fn arith(op: BinOp, mut args: Vec<Value>) -> Result<Value, Fail> {
    match (args.first(), args.get(1)) {
        (Some(Value::Tensor(_)), Some(Value::Tensor(_))) => {
            let a = take_tensor(&mut args, 0)?;
            let b = take_tensor(&mut args, 1)?;
            t(tensor::binary(op, a, b))
        }
        (Some(Value::Tensor(_)), Some(_)) => {
            let s = float_arg(&args, 1)?;
            t(tensor::tensor_scalar(op, take_tensor(&mut args, 0)?, s))
        }
        (Some(_), Some(Value::Tensor(_))) => {
            let s = float_arg(&args, 0)?;
            t(tensor::scalar_tensor(op, s, take_tensor(&mut args, 1)?))
        }
        (Some(a), _) => Err(kind_error("tensor arithmetic", a)),
        (None, _) => Err("tensor op: missing operand".into()),
    }
}

/// The kernel of `op` (runs on a worker or a compute pool thread).
fn kernel(op: TensorOp, mut args: Vec<Value>) -> Result<Value, Fail> {
    use TensorOp as O;
    match op {
        O::Add => arith(BinOp::Add, args),
        O::Sub => arith(BinOp::Sub, args),
        O::Mul => arith(BinOp::Mul, args),
        O::Div => arith(BinOp::Div, args),
        O::Neg => t(tensor::neg(take_tensor(&mut args, 0)?)),
        O::Zeros => t(tensor::zeros(&ints_arg(&args, 0)?)),
        O::Ones => t(tensor::ones(&ints_arg(&args, 0)?)),
        O::Full => t(tensor::full(&ints_arg(&args, 0)?, float_arg(&args, 1)?)),
        O::Randn => t(tensor::randn(&ints_arg(&args, 0)?, int_arg(&args, 1)?)),
        O::TensorFrom => t(tensor::tensor_from(
            &floats_arg(&args, 0)?,
            &ints_arg(&args, 1)?,
        )),
        O::Shape => Ok(ints(tensor::shape(tensor_arg(&args, 0)?))),
        O::Numel => Ok(Value::Int(tensor::numel(tensor_arg(&args, 0)?))),
        O::Matmul => t(tensor::matmul(tensor_arg(&args, 0)?, tensor_arg(&args, 1)?)),
        O::Transpose => t(tensor::transpose(tensor_arg(&args, 0)?)),
        O::Relu => t(tensor::relu(take_tensor(&mut args, 0)?)),
        O::ReluMask => t(tensor::relu_mask(take_tensor(&mut args, 0)?)),
        O::Exp => t(tensor::exp(take_tensor(&mut args, 0)?)),
        O::Log => t(tensor::log(take_tensor(&mut args, 0)?)),
        O::Softmax => t(tensor::softmax(tensor_arg(&args, 0)?)),
        O::Sum => tensor::sum(tensor_arg(&args, 0)?)
            .map(Value::Float)
            .map_err(fail),
        O::SumRows => t(tensor::sum_rows(tensor_arg(&args, 0)?)),
        O::Mean => tensor::mean(tensor_arg(&args, 0)?)
            .map(Value::Float)
            .map_err(fail),
        O::ArgmaxRows => tensor::argmax_rows(tensor_arg(&args, 0)?)
            .map(ints)
            .map_err(fail),
        O::Onehot => t(tensor::onehot(&ints_arg(&args, 0)?, int_arg(&args, 1)?)),
        O::Rows => t(tensor::rows(
            tensor_arg(&args, 0)?,
            int_arg(&args, 1)?,
            int_arg(&args, 2)?,
        )),
        O::Gather => t(tensor::gather(tensor_arg(&args, 0)?, &ints_arg(&args, 1)?)),
        O::Get => {
            let idx = (1..args.len())
                .map(|i| int_arg(&args, i))
                .collect::<Result<Vec<i64>, Fail>>()?;
            tensor::get(tensor_arg(&args, 0)?, &idx)
                .map(Value::Float)
                .map_err(fail)
        }
        O::Devices => Ok(Value::list(
            tensor::devices().iter().map(|d| Value::str(d)).collect(),
        )),
        O::Device => Ok(Value::str(&tensor::device(tensor_arg(&args, 0)?))),
        O::To => t(tensor::to(tensor_arg(&args, 0)?, str_arg(&args, 1)?)),
        O::LoadDataset => {
            let d = tensor::load_dataset(str_arg(&args, 0)?).map_err(fail)?;
            Ok(Value::Struct(Arc::new(vec![
                Value::Tensor(Box::new(d.x)),
                ints(d.y),
            ])))
        }
    }
}
