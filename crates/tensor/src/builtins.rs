//! The builtins of docs/language.md, "Tensors" as one entry point for the interpreter:
//! `call(builtin, args).await`, with arguments and results in the
//! language's types (`Arg`, `Ret`), run inline or on the compute pool
//! according to their cost (`kernel_cost`); `call_placed` also applies the
//! placement policy and reports host fallbacks (`fallback.rs`).
//!
//! The interpreter converts its values to `Arg`s and the `Ret` back; this
//! module owns the mapping from builtin to kernel, the argument shapes and
//! the cost estimate. As in the language, an int is accepted where a float
//! is wanted (`full`'s value, an operator's scalar, `tensor_from`'s values).
//! Wrong argument kinds cannot come from a checked program; they are
//! reported as `TensorError::Arguments`, never panicked.

use smallvec::SmallVec;

use super::compute::{compute, kernel_cost, INLINE_COST};
use super::fallback::{self, HostFallback};
use super::{
    argmax_rows, device, devices, gather, get, load_dataset, matmul, matmul_cost, mean, numel,
    onehot, rows, scalar_tensor, shape, softmax, sum, sum_rows, tensor_from, tensor_scalar, to,
    transpose, unary, BinOp, Dataset, Tensor, TensorError, UnaryOp,
};

/// An argument of a tensor builtin.
#[derive(Clone, Debug)]
pub enum Arg {
    Tensor(Tensor),
    Int(i64),
    Float(f64),
    Str(String),
    /// `[]int`: shapes, labels, indices.
    Ints(Vec<i64>),
    /// `[]float`: `tensor_from`'s values.
    Floats(Vec<f64>),
}

/// The result of a tensor builtin.
#[derive(Clone, Debug)]
pub enum Ret {
    Tensor(Tensor),
    Int(i64),
    Float(f64),
    Str(String),
    Ints(Vec<i64>),
    Strs(Vec<String>),
    Dataset(Dataset),
    /// `values`: `[]float`.
    Floats(Vec<f64>),
    /// No result (`save_npy`).
    Unit,
}

macro_rules! builtins {
    ($($v:ident = $n:literal),* $(,)?) => {
        /// A tensor builtin, or an operator applied to a tensor.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Builtin { $($v),* }

        impl Builtin {
            /// The builtin of this IR op name (`add` ... `neg` for operators).
            pub fn from_name(name: &str) -> Option<Builtin> {
                match name {
                    $($n => Some(Builtin::$v),)*
                    _ => None,
                }
            }

            /// The IR op name.
            pub fn name(self) -> &'static str {
                match self { $(Builtin::$v => $n),* }
            }
        }
    };
}

builtins! {
    Add = "add", Sub = "sub", Mul = "mul", Div = "div", Neg = "neg",
    Zeros = "zeros", Ones = "ones", Full = "full", Randn = "randn",
    TensorFrom = "tensor_from", Shape = "shape", Numel = "numel", Matmul = "matmul",
    Transpose = "transpose", Relu = "relu", ReluMask = "relu_mask", Exp = "exp",
    Log = "log", Softmax = "softmax", Sum = "sum", SumRows = "sum_rows", Mean = "mean",
    ArgmaxRows = "argmax_rows", Onehot = "onehot", Rows = "rows", Gather = "gather",
    Get = "get", Devices = "devices", Device = "device", To = "to",
    LoadDataset = "load_dataset",
    LoadCsv = "load_csv", LoadNpy = "load_npy", SaveNpy = "save_npy", Values = "values",
}

/// The builtins that, on tensors all on a device whose kernels only queue
/// work (`Device::launches_async`: a GPU), are a kernel launch and nothing
/// more: they neither bring values back nor wait for the device, so they
/// run inline on the task's worker whatever the tensors' sizes. Sending
/// each to the compute pool cost two thread hand-offs per operation, which
/// on a GPU took 30 times the work (docs/gpu.md). `sum`, `mean`,
/// `argmax_rows`, `get`, `values` and `to` wait for results and stay on
/// the pool.
pub const LAUNCHES: &[Builtin] = &[
    Builtin::Add,
    Builtin::Sub,
    Builtin::Mul,
    Builtin::Div,
    Builtin::Neg,
    Builtin::Relu,
    Builtin::ReluMask,
    Builtin::Exp,
    Builtin::Log,
    Builtin::Softmax,
    Builtin::Matmul,
    Builtin::Transpose,
    Builtin::SumRows,
];

/// The cost of a launch on a device that only queues work: below
/// `INLINE_COST`, so it runs inline.
pub const LAUNCH_COST: usize = 1;

/// Runs a builtin on its arguments (in source order), inline when cheap,
/// else on the compute pool.
pub async fn call(b: Builtin, args: Vec<Arg>) -> Result<Ret, TensorError> {
    let cost = cost(b, &args);
    compute(cost, move || exec(b, args)).await
}

/// Runs a builtin like [`call`] under a placement policy (docs/tensors.md,
/// "Soft placement"): with `strict`, a kernel whose device has no
/// implementation of it fails with `TensorError::NoKernel` instead of
/// running on the host; otherwise the host fallbacks the call made come
/// back with its result, in order.
pub async fn call_placed(
    b: Builtin,
    args: Vec<Arg>,
    strict: bool,
) -> Result<(Ret, Vec<HostFallback>), TensorError> {
    let cost = cost(b, &args);
    compute(cost, move || {
        let (r, fallbacks) = fallback::scope(strict, || exec(b, args));
        r.map(|r| (r, fallbacks))
    })
    .await
}

/// [`call_placed`] on the calling thread, when the kernel is cheap enough
/// to run inline anyway (its [`cost`] under `INLINE_COST`): the call's
/// result, or its arguments back for `call_placed` when it is not. A
/// caller with no other reason to wait skips the future and its
/// allocation for the common, short kernel. `during` runs just before
/// the kernel and what it returns (a trace span) is dropped just after,
/// only when the kernel runs here.
#[allow(clippy::type_complexity)]
pub fn call_inline<G>(
    b: Builtin,
    args: Vec<Arg>,
    strict: bool,
    during: impl FnOnce() -> G,
) -> Result<Result<(Ret, Vec<HostFallback>), TensorError>, Vec<Arg>> {
    if cost(b, &args) >= INLINE_COST {
        return Err(args);
    }
    let guard = during();
    let (r, fallbacks) = fallback::scope(strict, || exec(b, args));
    drop(guard);
    Ok(r.map(|r| (r, fallbacks)))
}

/// The `compute` cost of a call: elements touched or multiply-adds, and at
/// least `INLINE_COST` when a tensor argument is on a device, except for
/// [`LAUNCHES`] on tensors all on devices that only queue work: those cost
/// their launch alone (`LAUNCH_COST`) and run inline.
pub fn cost(b: Builtin, args: &[Arg]) -> usize {
    // On the stack: an op has at most a few tensor operands.
    let tensors: SmallVec<[&Tensor; 4]> = args
        .iter()
        .filter_map(|a| match a {
            Arg::Tensor(t) => Some(t),
            _ => None,
        })
        .collect();
    // Where the tensors live first: on the host (the common case) that
    // fails at the first tensor, before the list is looked at.
    if !tensors.is_empty() && tensors.iter().all(|t| t.on_async_device()) && LAUNCHES.contains(&b) {
        return LAUNCH_COST;
    }
    let biggest = tensors.iter().map(|t| t.numel()).max().unwrap_or(0);
    let work = match (b, args) {
        (Builtin::Matmul, [Arg::Tensor(x), Arg::Tensor(y)]) => matmul_cost(x, y),
        (Builtin::Zeros | Builtin::Ones | Builtin::Full | Builtin::Randn, [Arg::Ints(s), ..]) => s
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))
            .unwrap_or(0),
        (Builtin::TensorFrom, [Arg::Floats(v), ..]) => v.len(),
        (Builtin::Onehot, [Arg::Ints(l), Arg::Int(n)]) => l.len().saturating_mul(*n as usize),
        (Builtin::Gather, [Arg::Tensor(t), Arg::Ints(i)]) => i
            .len()
            .saturating_mul(t.numel() / t.dims().first().copied().unwrap_or(1).max(1)),
        // File I/O runs on the compute pool, never on a worker.
        (Builtin::LoadDataset | Builtin::LoadCsv | Builtin::LoadNpy | Builtin::SaveNpy, _) => {
            INLINE_COST.max(biggest)
        }
        (Builtin::Shape | Builtin::Numel | Builtin::Device | Builtin::Devices, _) => 0,
        (Builtin::Get, _) => 1,
        // exp and log cost ~10 elementwise adds each
        (Builtin::Exp | Builtin::Log | Builtin::Softmax, _) => biggest.saturating_mul(10),
        _ => biggest,
    };
    kernel_cost(work, &tensors)
}

fn bad(b: Builtin, want: &'static str) -> TensorError {
    TensorError::Arguments { op: b.name(), want }
}

/// Runs a builtin on the calling thread.
pub fn exec(b: Builtin, args: Vec<Arg>) -> Result<Ret, TensorError> {
    use Arg as A;
    let op = |b: Builtin| match b {
        Builtin::Add => BinOp::Add,
        Builtin::Sub => BinOp::Sub,
        Builtin::Mul => BinOp::Mul,
        _ => BinOp::Div,
    };
    let map = |b: Builtin| match b {
        Builtin::Relu => UnaryOp::Relu,
        Builtin::ReluMask => UnaryOp::ReluMask,
        Builtin::Exp => UnaryOp::Exp,
        Builtin::Log => UnaryOp::Log,
        _ => UnaryOp::Neg,
    };
    let t = Ret::Tensor;
    let mut args = args;
    widen(b, &mut args);
    Ok(match (b, args.as_mut_slice()) {
        (Builtin::Add | Builtin::Sub | Builtin::Mul | Builtin::Div, [x, y]) => {
            match (
                std::mem::replace(x, A::Int(0)),
                std::mem::replace(y, A::Int(0)),
            ) {
                (A::Tensor(x), A::Tensor(y)) => t(super::binary(op(b), x, y)?),
                (A::Tensor(x), A::Float(s)) => t(tensor_scalar(op(b), x, s)?),
                (A::Float(s), A::Tensor(y)) => t(scalar_tensor(op(b), s, y)?),
                _ => return Err(bad(b, "tensor or float, tensor or float")),
            }
        }
        (
            Builtin::Neg | Builtin::Relu | Builtin::ReluMask | Builtin::Exp | Builtin::Log,
            [A::Tensor(x)],
        ) => t(unary(map(b), std::mem::take(x))?),
        (Builtin::Zeros, [A::Ints(s)]) => t(super::zeros(s)?),
        (Builtin::Ones, [A::Ints(s)]) => t(super::ones(s)?),
        (Builtin::Full, [A::Ints(s), A::Float(v)]) => t(super::full(s, *v)?),
        (Builtin::Randn, [A::Ints(s), A::Int(seed)]) => t(super::randn(s, *seed)?),
        (Builtin::TensorFrom, [A::Floats(v), A::Ints(s)]) => t(tensor_from(v, s)?),
        (Builtin::Shape, [A::Tensor(x)]) => Ret::Ints(shape(x)),
        (Builtin::Numel, [A::Tensor(x)]) => Ret::Int(numel(x)),
        (Builtin::Matmul, [A::Tensor(x), A::Tensor(y)]) => t(matmul(x, y)?),
        (Builtin::Transpose, [A::Tensor(x)]) => t(transpose(x)?),
        (Builtin::Softmax, [A::Tensor(x)]) => t(softmax(x)?),
        (Builtin::Sum, [A::Tensor(x)]) => Ret::Float(sum(x)?),
        (Builtin::Mean, [A::Tensor(x)]) => Ret::Float(mean(x)?),
        (Builtin::SumRows, [A::Tensor(x)]) => t(sum_rows(x)?),
        (Builtin::ArgmaxRows, [A::Tensor(x)]) => Ret::Ints(argmax_rows(x)?),
        (Builtin::Onehot, [A::Ints(l), A::Int(n)]) => t(onehot(l, *n)?),
        (Builtin::Rows, [A::Tensor(x), A::Int(s), A::Int(e)]) => t(rows(x, *s, *e)?),
        (Builtin::Gather, [A::Tensor(x), A::Ints(i)]) => t(gather(x, i)?),
        (Builtin::Get, [A::Tensor(x), rest @ ..]) => {
            let mut idx = Vec::with_capacity(rest.len());
            for a in rest.iter() {
                match a {
                    A::Int(i) => idx.push(*i),
                    _ => return Err(bad(b, "tensor, int...")),
                }
            }
            Ret::Float(get(x, &idx)?)
        }
        (Builtin::Devices, []) => Ret::Strs(devices()),
        (Builtin::Device, [A::Tensor(x)]) => Ret::Str(device(x)),
        (Builtin::To, [A::Tensor(x), A::Str(d)]) => t(to(x, d)?),
        (Builtin::LoadDataset, [A::Str(n)]) => Ret::Dataset(load_dataset(n)?),
        (Builtin::LoadCsv, [A::Str(p)]) => t(super::files::load_csv(p)?),
        (Builtin::LoadNpy, [A::Str(p)]) => t(super::files::load_npy(p)?),
        (Builtin::SaveNpy, [A::Str(p), A::Tensor(x)]) => {
            super::files::save_npy(p, x)?;
            Ret::Unit
        }
        (Builtin::Values, [A::Tensor(x)]) => Ret::Floats(super::files::values(x)?),
        _ => return Err(bad(b, signature(b))),
    })
}

/// Widens ints to floats where `b` wants floats.
fn widen(b: Builtin, args: &mut [Arg]) {
    let floats: &mut [Arg] = match (b, &mut *args) {
        (Builtin::Add | Builtin::Sub | Builtin::Mul | Builtin::Div, a) => a,
        (Builtin::Full, [_, v]) => std::slice::from_mut(v),
        (Builtin::TensorFrom, [v, _]) => std::slice::from_mut(v),
        _ => return,
    };
    for a in floats {
        match a {
            Arg::Int(n) => *a = Arg::Float(*n as f64),
            Arg::Ints(v) => *a = Arg::Floats(v.iter().map(|&n| n as f64).collect()),
            _ => {}
        }
    }
}

/// The argument kinds a builtin takes, for `TensorError::Arguments`.
fn signature(b: Builtin) -> &'static str {
    match b {
        Builtin::Add | Builtin::Sub | Builtin::Mul | Builtin::Div => {
            "tensor or float, tensor or float"
        }
        Builtin::Zeros | Builtin::Ones => "[]int",
        Builtin::Full => "[]int, float",
        Builtin::Randn => "[]int, int",
        Builtin::TensorFrom => "[]float, []int",
        Builtin::Matmul => "tensor, tensor",
        Builtin::Onehot => "[]int, int",
        Builtin::Rows => "tensor, int, int",
        Builtin::Gather => "tensor, []int",
        Builtin::Get => "tensor, int...",
        Builtin::Devices => "",
        Builtin::To => "tensor, string",
        Builtin::LoadDataset | Builtin::LoadCsv | Builtin::LoadNpy => "string",
        Builtin::SaveNpy => "string, tensor",
        _ => "tensor",
    }
}
