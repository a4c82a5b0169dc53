//! Tensor builtins and tensor arithmetic (docs/language.md, "Tensors") in the
//! interpreter: a thin adapter over `weft_tensor::builtins`, which owns
//! the builtin table, the kernel dispatch and the compute-pool cost.
//!
//! `run` first checks the memory ceiling with what the op will allocate
//! on the host, known from the operands' shapes (`request`), so a tensor
//! too large for the ceiling is refused before its kernel runs. It then
//! converts the operands (`Value`s, in the registry's argument
//! order) to `builtins::Arg`s, calls `builtins::call_placed` (with the
//! task's placement policy, `Place`), and converts the `Ret` back. Placement
//! (docs/language.md, "Placement"): `to(t)` copies to the task's device,
//! the creating builtins make their tensor there, and the host fallbacks
//! `call_placed` reports are drawn in the trace. `call` runs cheap kernels
//! inline and long ones on the compute pool (the cost comes from
//! `builtins::cost`: every kernel with a device operand goes to the pool,
//! except the launches of `builtins::LAUNCHES` on a GPU, which only queue
//! work), so a long matmul parks only its task, never a worker; the caller
//! (`task.rs`) holds `runtime::external_wait` meanwhile.
//!
//! Readiness (issue 7): an op whose operands are on its own device does not
//! wait for them on the host, because the device orders its own stream. The
//! host waits (`Tensor::ready`) only where values cross to it: the ops that
//! return host values (`get`, `sum`, `mean`, `argmax_rows`, `to(t, "cpu")`),
//! and a tensor received from a channel (`task.rs` waits after the
//! receive). Errors are the tensor crate's `TensorError`s, whose messages
//! are the panic messages.

use std::sync::Arc;

use smallvec::SmallVec;

use weft_rt as runtime;
use weft_rt::memlimit::Ceiling;
use weft_tensor::builtins::{self, Arg, Ret};
use weft_tensor::fallback::HostFallback;

use super::code::TensorOp;
use super::error::RuntimeError;
use super::value::{Value, VALUE_BYTES};

/// Where a tensor op runs from (docs/language.md, "Placement"): the
/// calling task's device, and whether an op with no kernel on its device
/// may run on the host.
#[derive(Clone, Copy, Debug)]
pub struct Place<'a> {
    /// `here()`: where the creating builtins make their tensors and where
    /// `to(t)` copies to.
    pub here: &'a str,
    /// `--strict-placement`: a host fallback is a panic.
    pub strict: bool,
}

/// Runs a tensor op on its operands (in argument order), if what it
/// allocates fits under the memory ceiling. `to(t)` (one operand) copies
/// to `place.here`; the creating builtins make their tensor there (on the
/// host, then copied). In the trace, each op is a span named after it, a
/// copy between devices is a span `copy A→B` (category `copy`), and a host
/// fallback shows as its two copies around the host kernel's span
/// (`OP on cpu (no kernel on DEV)`, category `fallback`).
pub async fn run(
    op: TensorOp,
    mut args: Vec<Value>,
    mem: Ceiling,
    place: Place<'_>,
) -> Result<Value, RuntimeError> {
    if op == TensorOp::To && args.len() == 1 {
        args.push(Value::str(place.here));
    }
    let span = match copy_between(op, &args) {
        Some((from, to)) => runtime::trace_span_in("copy", format!("copy {from}→{to}")),
        None => runtime::trace_span(op.name()),
    };
    mem.check(request(op, &args))?;
    if to_host(op, &args) {
        for a in &args {
            if let Value::Tensor(t) = a {
                t.ready().await?;
            }
        }
    }
    let (ret, fallbacks) =
        builtins::call_placed(op, args_of(args.into_iter())?, place.strict).await?;
    if !fallbacks.is_empty() && runtime::tracing() {
        trace_fallbacks(&fallbacks);
    }
    drop(span);
    let ret = match (creates(op), ret) {
        (true, ret) if place.here != "cpu" => made_here(ret, place.here).await?,
        (_, ret) => ret,
    };
    Ok(value(ret))
}

/// A tensor op whose operands are host values already converted, and
/// whose kernel is long: for the compute pool.
pub struct HostJob {
    op: TensorOp,
    args: Vec<Arg>,
}

/// A tensor op that must wait, as [`run_inline`] left it: await
/// [`run_work`].
pub enum Work {
    /// Operands that may be on a device, or a copy: [`run`]'s whole path.
    Values(TensorOp, Box<[Value]>),
    /// Host operands, converted, whose kernel goes to the compute pool.
    Pool(Box<HostJob>),
}

/// What [`run_inline`] did with a tensor op.
pub enum Inline {
    /// It ran on the calling thread: its result or its error.
    Done(Result<Value, RuntimeError>),
    /// It must wait (a device, a copy, the compute pool).
    Wait(Work),
}

/// Runs a tensor op at once, on the calling worker, when nothing in it
/// can wait: not `to`, not a creating builtin on a device, every tensor
/// operand on the host (so ready), and a kernel short enough to run
/// inline (`builtins::call_inline`). That is every op of a CPU run but
/// the long kernels, and it costs no future, no allocation beyond the
/// converted operands and the result, and no trip out of the dispatch
/// loop. The memory check, the trace span, the result and the errors are
/// [`run`]'s.
pub fn run_inline(
    op: TensorOp,
    args: SmallVec<[Value; 4]>,
    mem: Ceiling,
    place: Place<'_>,
) -> Inline {
    let waits = op == TensorOp::To
        || (creates(op) && place.here != "cpu")
        || args
            .iter()
            .any(|a| matches!(a, Value::Tensor(t) if !t.is_host()));
    if waits {
        return Inline::Wait(Work::Values(op, args.into_iter().collect()));
    }
    // A kernel may run long: a task woken into this worker's LIFO slot
    // goes where an idle worker can take it meanwhile (as `external`
    // does for the ops that leave `step`).
    runtime::release_lifo();
    if let Err(e) = mem.check(request(op, &args)) {
        return Inline::Done(Err(e.into()));
    }
    let converted = match args_of(args.into_iter()) {
        Ok(c) => c,
        Err(e) => return Inline::Done(Err(e)),
    };
    // The op's trace span covers the kernel run here; one sent to the
    // compute pool gets its span in `run_job`.
    let span = || runtime::trace_span(op.name());
    match builtins::call_inline(op, converted, place.strict, span) {
        Ok(Ok((ret, fallbacks))) => {
            if !fallbacks.is_empty() && runtime::tracing() {
                trace_fallbacks(&fallbacks);
            }
            Inline::Done(Ok(value(ret)))
        }
        Ok(Err(e)) => Inline::Done(Err(e.into())),
        Err(args) => Inline::Wait(Work::Pool(Box::new(HostJob { op, args }))),
    }
}

/// Runs what [`run_inline`] left to wait for.
pub async fn run_work(work: Work, mem: Ceiling, place: Place<'_>) -> Result<Value, RuntimeError> {
    match work {
        Work::Values(op, args) => run(op, args.into_vec(), mem, place).await,
        Work::Pool(job) => run_job(*job, place.strict).await,
    }
}

/// A [`run_inline`] op's long kernel, on the compute pool.
async fn run_job(job: HostJob, strict: bool) -> Result<Value, RuntimeError> {
    let HostJob { op, args } = job;
    let span = runtime::trace_span(op.name());
    let (ret, fallbacks) = builtins::call_placed(op, args, strict).await?;
    if !fallbacks.is_empty() && runtime::tracing() {
        trace_fallbacks(&fallbacks);
    }
    drop(span);
    Ok(value(ret))
}

/// The devices a `to` copies between, when they differ and the run is
/// traced (the names are only needed for the span).
fn copy_between(op: TensorOp, args: &[Value]) -> Option<(String, String)> {
    match (op, args) {
        (TensorOp::To, [Value::Tensor(t), Value::Str(d)])
            if t.device_name().as_bytes() != &**d && runtime::tracing() =>
        {
            let d = String::from_utf8_lossy(d).into_owned();
            Some((t.device_name().to_string(), d))
        }
        _ => None,
    }
}

/// Whether `op` makes a new tensor from host values (or a file's): those
/// make it on `here()`.
fn creates(op: TensorOp) -> bool {
    matches!(
        op,
        TensorOp::Zeros
            | TensorOp::Ones
            | TensorOp::Full
            | TensorOp::Randn
            | TensorOp::TensorFrom
            | TensorOp::LoadDataset
            | TensorOp::LoadCsv
            | TensorOp::LoadNpy
    )
}

/// A creating builtin's host result copied to `here` (a traced copy).
async fn made_here(ret: Ret, here: &str) -> Result<Ret, RuntimeError> {
    let up = |t| async move {
        let _span = match runtime::tracing() {
            true => runtime::trace_span_in("copy", format!("copy cpu→{here}")),
            false => runtime::trace_span("to"),
        };
        let dev = Arg::Str(here.to_string());
        match builtins::call(TensorOp::To, vec![Arg::Tensor(t), dev]).await? {
            Ret::Tensor(t) => Ok::<_, RuntimeError>(t),
            other => Err(RuntimeError::unexpected("to", &other)),
        }
    };
    Ok(match ret {
        Ret::Tensor(t) => Ret::Tensor(up(t).await?),
        Ret::Dataset(mut d) => {
            d.x = up(d.x).await?;
            Ret::Dataset(d)
        }
        other => other,
    })
}

/// Draws each host fallback on the task's track: the download, the host
/// kernel and the upload, where they happened.
fn trace_fallbacks(fallbacks: &[HostFallback]) {
    for fb in fallbacks {
        let dev = &fb.device;
        runtime::trace_span_between("copy", format!("copy {dev}→cpu"), fb.start, fb.downloaded);
        let name = format!("{} on cpu (no kernel on {dev})", fb.op);
        runtime::trace_span_between("fallback", name, fb.downloaded, fb.computed);
        if let Some(up) = fb.uploaded {
            runtime::trace_span_between("copy", format!("copy cpu→{dev}"), fb.computed, up);
        }
    }
}

/// The bytes of a host `f32`.
const F32: usize = 4;
/// What a dataset (`load_dataset`, the embedded digits) takes.
const DATASET_BYTES: usize = 1 << 20;

/// The host bytes `op` allocates on these operands, known from their shapes
/// before the kernel runs: the operands' conversion to builtin arguments
/// (lists become `Vec`s of 8-byte numbers) and the result (`numel * 4`
/// bytes for a tensor; a lazy transpose is counted as the copy it becomes
/// when used). Operands the builtin will reject count 0: its own error
/// says what is wrong. Saturates rather than overflows, so an impossible
/// shape is a request no ceiling admits.
pub fn request(op: TensorOp, args: &[Value]) -> usize {
    let lists: usize = args
        .iter()
        .map(|a| match a {
            Value::List(l) => l.len().saturating_mul(8),
            _ => 0,
        })
        .sum();
    lists.saturating_add(result_elems(op, args).saturating_mul(F32))
}

/// The elements of `op`'s result on these operands (see `request`).
fn result_elems(op: TensorOp, args: &[Value]) -> usize {
    let tensor = |i: usize| match args.get(i) {
        Some(Value::Tensor(t)) => Some(&**t),
        _ => None,
    };
    let numel = |i: usize| tensor(i).map_or(0, |t| t.numel());
    let int = |i: usize| match args.get(i) {
        Some(Value::Int(n)) => usize::try_from(*n).unwrap_or(0),
        _ => 0,
    };
    let len = |i: usize| match args.get(i) {
        Some(Value::List(l)) => l.len(),
        _ => 0,
    };
    // The elements of one row of an `[m, ...]` tensor.
    let row = |i: usize| {
        tensor(i).map_or(0, |t| match t.dims().first() {
            Some(&m) if m > 0 => t.numel() / m,
            _ => 0,
        })
    };
    match op {
        TensorOp::Add | TensorOp::Sub | TensorOp::Mul | TensorOp::Div => numel(0).max(numel(1)),
        TensorOp::Neg
        | TensorOp::Relu
        | TensorOp::ReluMask
        | TensorOp::Exp
        | TensorOp::Log
        | TensorOp::Softmax
        | TensorOp::Transpose
        | TensorOp::To => numel(0),
        TensorOp::Zeros | TensorOp::Ones | TensorOp::Full | TensorOp::Randn => match args.first() {
            Some(Value::List(dims)) => shape_elems(dims),
            _ => 0,
        },
        TensorOp::TensorFrom => len(0),
        TensorOp::Matmul => match (tensor(0).map(|t| t.dims()), tensor(1).map(|t| t.dims())) {
            (Some(&[m, _]), Some(&[_, n])) => m.saturating_mul(n),
            _ => 0,
        },
        TensorOp::SumRows => tensor(0)
            .and_then(|t| t.dims().get(1).copied())
            .unwrap_or(0),
        // An `[]int` result: a `Vec<i64>`, then a list of values.
        TensorOp::ArgmaxRows => tensor(0)
            .and_then(|t| t.dims().first().copied())
            .unwrap_or(0)
            .saturating_mul((8 + VALUE_BYTES) / F32),
        TensorOp::Onehot => len(0).saturating_mul(int(1)),
        TensorOp::Rows => int(2).saturating_sub(int(1)).saturating_mul(row(0)),
        TensorOp::Gather => len(1).saturating_mul(row(0)),
        TensorOp::LoadDataset => DATASET_BYTES / F32,
        // A file's values: at most its size in f32s (a CSV number takes
        // two bytes or more, an .npy value four or eight).
        TensorOp::LoadCsv | TensorOp::LoadNpy => match args.first() {
            Some(Value::Str(p)) => {
                use std::os::unix::ffi::OsStrExt;
                std::fs::metadata(std::ffi::OsStr::from_bytes(p)).map_or(0, |m| m.len() as usize)
            }
            _ => 0,
        },
        TensorOp::SaveNpy => numel(1),
        // A `[]float`: an f64 each, then a list of values.
        TensorOp::Values => numel(0).saturating_mul((8 + VALUE_BYTES) / F32),
        TensorOp::Shape
        | TensorOp::Numel
        | TensorOp::Sum
        | TensorOp::Mean
        | TensorOp::Get
        | TensorOp::Devices
        | TensorOp::Device => 0,
    }
}

/// The elements of a tensor of shape `dims` (0 if a dimension is negative,
/// which the builtin reports; saturating).
fn shape_elems(dims: &[Value]) -> usize {
    let mut n: usize = 1;
    for d in dims {
        match d {
            Value::Int(d) if *d >= 0 => n = n.saturating_mul(*d as usize),
            _ => return 0,
        }
    }
    n
}

/// Whether `op` hands its operands' values to the host.
fn to_host(op: TensorOp, args: &[Value]) -> bool {
    match op {
        TensorOp::Get
        | TensorOp::Sum
        | TensorOp::Mean
        | TensorOp::ArgmaxRows
        | TensorOp::SaveNpy
        | TensorOp::Values => true,
        TensorOp::To => matches!(args.get(1), Some(Value::Str(d)) if &**d == b"cpu"),
        _ => false,
    }
}

/// The builtin arguments of the operands, in a vector of their number (a
/// `collect` through `Result` cannot size it and grows it instead).
fn args_of(values: impl ExactSizeIterator<Item = Value>) -> Result<Vec<Arg>, RuntimeError> {
    let mut converted = Vec::with_capacity(values.len());
    for v in values {
        converted.push(arg(v)?);
    }
    Ok(converted)
}

/// The builtin argument of an operand: a list of ints is `[]int`, a list
/// of numbers with a float is `[]float`.
fn arg(v: Value) -> Result<Arg, RuntimeError> {
    Ok(match v {
        Value::Tensor(t) => Arg::Tensor(Arc::unwrap_or_clone(t)),
        Value::Int(n) => Arg::Int(n),
        Value::Float(x) => Arg::Float(x),
        Value::Str(s) => Arg::Str(String::from_utf8_lossy(&s).into_owned()),
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
        Ret::Tensor(t) => Value::Tensor(Arc::new(t)),
        Ret::Int(n) => Value::Int(n),
        Ret::Float(x) => Value::Float(x),
        Ret::Str(s) => Value::str(&s),
        Ret::Ints(v) => ints(v),
        Ret::Strs(v) => Value::list(v.iter().map(|s| Value::str(s)).collect()),
        Ret::Dataset(d) => Value::Struct(Arc::new(vec![Value::Tensor(Arc::new(d.x)), ints(d.y)])),
        Ret::Floats(v) => Value::list(v.into_iter().map(Value::Float).collect()),
        Ret::Unit => Value::Int(0),
    }
}
