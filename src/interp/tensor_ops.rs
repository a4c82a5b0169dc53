//! Tensor builtins and tensor arithmetic: the ops of spec section 8.
//!
//! Until the tensor module lands, every tensor op fails with
//! `tensor op NAME not available` (a documented gap).

use super::ops::Fail;
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
pub async fn run(op: TensorOp, _args: Vec<Value>) -> Result<Value, Fail> {
    Err(format!("tensor op {} not available", op.name()))
}
