//! Why a task failed: a `RuntimeError`, whose `Display` is the panic message
//! of docs/language.md, "Errors and exit codes" (the report adds `panic: `
//! and the location), or, inside it, an `InternalError`: an engine bug,
//! which the run reports as one (exit code 70, `report.rs`), never as a
//! program panic.
//!
//! Both are small (`RuntimeError` is three words, checked below): they travel
//! in the `Result`s of the dispatch loop's operations, so the rare payloads
//! are boxed.

use weft_coll::CollError;
use weft_rt::memlimit::OutOfMemory;
use weft_rt::SpawnError;
use weft_tensor::TensorError;

/// A run-time failure of a program (a panic), or an engine bug (`Internal`).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RuntimeError {
    #[error("integer divide by zero")]
    DivideByZero,
    #[error("negative shift amount")]
    NegativeShift,
    #[error("index out of range [{index}] with length {len}")]
    IndexOutOfRange { index: i64, len: usize },
    #[error("slice bounds out of range [{}:{}] with length {}", .0.lo, .0.hi, .0.len)]
    SliceOutOfRange(Box<SliceBounds>),
    /// `int(s)` of a string that is not an integer.
    #[error("invalid integer {0:?}")]
    InvalidInt(Box<str>),
    /// `float(s)` of a string that is not a number.
    #[error("invalid float {0:?}")]
    InvalidFloat(Box<str>),
    #[error("float out of int range")]
    FloatOutOfIntRange,
    #[error("send on closed channel")]
    SendOnClosed,
    #[error("assignment to entry in nil map")]
    NilMapWrite,
    #[error("close of closed channel")]
    CloseOfClosed,
    #[error("close of nil channel")]
    CloseOfNil,
    #[error("makechan: size out of range")]
    MakeChanSize,
    #[error("rand: n must be positive")]
    RandNotPositive,
    #[error("perm: n out of range")]
    PermOutOfRange,
    /// A call through a nil func value.
    #[error("call of nil function")]
    NilFuncCall,
    /// A task's call stack passed its limit.
    #[error("stack overflow")]
    StackOverflow,
    /// `panic(msg)`: the message as the program gave it.
    #[error("{0}")]
    Panic(Box<str>),
    /// `assert(cond, msg)` with a false condition.
    #[error("assertion failed: {0}")]
    AssertionFailed(Box<str>),
    /// A library builtin failed (docs/language.md, "The language for real
    /// programs"): the message names the builtin, and the path and reason
    /// for a file (`read_file: PATH: REASON`).
    #[error("{0}")]
    Builtin(Box<str>),
    /// An allocation the program was about to make does not fit under the
    /// memory ceiling (`weft_rt::memlimit::Ceiling::check`); the message
    /// names the limit.
    #[error(transparent)]
    OutOfMemory(OutOfMemory),
    /// `go` past the task limit (`SpawnError::Limit`; the other
    /// `SpawnError` is an engine bug).
    #[error(transparent)]
    TooManyTasks(SpawnError),
    /// `go ... on DEV` with a device that is not present.
    #[error("go: device {0:?} not present")]
    GoDeviceNotPresent(Box<str>),
    /// A tensor builtin or operator failed: the tensor crate's message.
    #[error(transparent)]
    Tensor(Box<TensorError>),
    /// A collective, `rank` or `size` on a nil comm.
    #[error("collective on nil comm")]
    NilComm,
    /// `broadcast` with a root outside the group (negative roots too,
    /// which the backend's `usize` roots cannot hold).
    #[error("broadcast: root {root} out of range for group of size {size}")]
    BroadcastRoot { root: i64, size: usize },
    /// A `select` case on a channel that another process made
    /// (docs/language.md, "Several processes").
    #[error("select on remote channel (owned by rank {0})")]
    SelectRemote(usize),
    /// A value that cannot reach another process: a comm of a group of
    /// tasks (only `world()` spans processes), or a tensor on a device
    /// inside a list or struct (docs/distributed.md, "Limits").
    #[error("{0} cannot be sent to another process")]
    NoCrossing(&'static str),
    /// A collective or `group` failed: the backend's message
    /// (docs/language.md, "Collectives").
    #[error(transparent)]
    Collective(Box<CollError>),
    /// The members of a list all-reduce passed lists of different shapes
    /// (or lengths).
    #[error(transparent)]
    ListShapes(Box<ListShapes>),
    /// Not the program's failure but the engine's: a bug in Weft.
    #[error(transparent)]
    Internal(Box<InternalError>),
}

/// Members of a list all-reduce whose lists differ in a shape or in
/// length: rank 0's shapes and those of the lowest rank that differs, as
/// `[[2 3] [4]]`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{op}: shape mismatch: {first} (rank 0) vs {other} (rank {rank})")]
pub struct ListShapes {
    pub op: &'static str,
    pub first: Box<str>,
    pub rank: usize,
    pub other: Box<str>,
}

/// The operands of a failed slice expression `x[lo:hi]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SliceBounds {
    pub lo: i64,
    pub hi: i64,
    pub len: usize,
}

/// An engine bug: something a verified program cannot cause (the verifier
/// and lowering rule it out). Its `Display` says what went wrong, for the
/// bug report.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InternalError {
    /// The program counter left the function's code (every function ends
    /// in `Ret` or `End`, and jump targets are in range).
    #[error("program counter out of range")]
    PcOutOfRange,
    /// A function index names no function.
    #[error("unknown function {0}")]
    NoFunction(u32),
    /// The instruction a task waited at is not the one that made it wait.
    #[error("{0}: lost its instruction")]
    LostInstruction(&'static str),
    /// The channel a parked send or receive waits on is gone from its slot.
    #[error("{0}: lost its channel")]
    LostChannel(&'static str),
    /// The select protocol chose a case the instruction does not have.
    #[error("select: bad case index {index} of {cases}")]
    BadCaseIndex { index: usize, cases: usize },
    /// A struct field index past the struct's fields.
    #[error("{op}: field index {idx} out of range")]
    FieldOutOfRange { op: &'static str, idx: u32 },
    /// An operand of a kind the instruction does not take (the checker and
    /// the verifier rule it out).
    #[error("{what}: unexpected operand {operand}")]
    UnexpectedOperand { what: &'static str, operand: String },
    /// `spawn` refused for a reason other than the task limit.
    #[error(transparent)]
    Spawn(SpawnError),
    /// The collectives backend refused what the interpreter gave it (a
    /// value of a kind the op does not take, a tensor whose buffer does
    /// not fit its shape), or failed on its own (`CollError::Internal`).
    #[error(transparent)]
    Collective(CollError),
    /// The processes of a run could not exchange a value or a request
    /// (docs/distributed.md).
    #[error("across processes: {0}")]
    CrossProcess(Box<str>),
}

impl RuntimeError {
    /// An operand of an unexpected kind: an engine bug (out of line: every
    /// arm of the dispatch loop has such a branch).
    #[cold]
    #[inline(never)]
    pub fn unexpected(what: &'static str, operand: &impl std::fmt::Debug) -> Self {
        InternalError::UnexpectedOperand {
            what,
            operand: format!("{operand:?}"),
        }
        .into()
    }

    /// The failure of a `spawn`.
    #[cold]
    pub fn spawn(e: SpawnError) -> Self {
        match e {
            SpawnError::Limit { .. } => RuntimeError::TooManyTasks(e),
            other => InternalError::Spawn(other).into(),
        }
    }

    /// A slice expression out of bounds.
    #[cold]
    pub fn slice_bounds(lo: i64, hi: i64, len: usize) -> Self {
        RuntimeError::SliceOutOfRange(Box::new(SliceBounds { lo, hi, len }))
    }

    /// The engine bug this is, if it is one.
    pub fn internal(&self) -> Option<&InternalError> {
        match self {
            RuntimeError::Internal(e) => Some(e),
            _ => None,
        }
    }
}

impl From<CollError> for RuntimeError {
    /// The program's failure (a mismatch between members, a root or
    /// group size out of range), or, for what a checked program cannot
    /// cause, an engine bug.
    #[cold]
    fn from(e: CollError) -> Self {
        match e {
            CollError::Unsupported { .. }
            | CollError::BadTensor { .. }
            | CollError::Internal(_) => InternalError::Collective(e).into(),
            e => RuntimeError::Collective(Box::new(e)),
        }
    }
}

impl From<InternalError> for RuntimeError {
    #[cold]
    fn from(e: InternalError) -> Self {
        RuntimeError::Internal(Box::new(e))
    }
}

impl From<OutOfMemory> for RuntimeError {
    #[cold]
    fn from(e: OutOfMemory) -> Self {
        RuntimeError::OutOfMemory(e)
    }
}

impl From<TensorError> for RuntimeError {
    #[cold]
    fn from(e: TensorError) -> Self {
        RuntimeError::Tensor(Box::new(e))
    }
}

/// Kept at three words, so the `Result`s of the dispatch loop's operations
/// are no wider than they were with a `String` message.
const _: () = assert!(std::mem::size_of::<RuntimeError>() <= 24);

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages are the panic messages of docs/language.md, "Errors
    /// and exit codes", unchanged (the golden files check them end to end).
    #[test]
    fn display_is_the_panic_message() {
        let cases: Vec<(RuntimeError, &str)> = vec![
            (RuntimeError::DivideByZero, "integer divide by zero"),
            (RuntimeError::NegativeShift, "negative shift amount"),
            (
                RuntimeError::IndexOutOfRange { index: 3, len: 1 },
                "index out of range [3] with length 1",
            ),
            (
                RuntimeError::slice_bounds(2, 1, 3),
                "slice bounds out of range [2:1] with length 3",
            ),
            (
                RuntimeError::InvalidInt("a\"b".into()),
                "invalid integer \"a\\\"b\"",
            ),
            (
                RuntimeError::InvalidFloat("x".into()),
                "invalid float \"x\"",
            ),
            (RuntimeError::FloatOutOfIntRange, "float out of int range"),
            (RuntimeError::SendOnClosed, "send on closed channel"),
            (RuntimeError::NilMapWrite, "assignment to entry in nil map"),
            (RuntimeError::CloseOfClosed, "close of closed channel"),
            (RuntimeError::CloseOfNil, "close of nil channel"),
            (RuntimeError::MakeChanSize, "makechan: size out of range"),
            (RuntimeError::RandNotPositive, "rand: n must be positive"),
            (RuntimeError::PermOutOfRange, "perm: n out of range"),
            (RuntimeError::NilFuncCall, "call of nil function"),
            (RuntimeError::StackOverflow, "stack overflow"),
            (RuntimeError::Panic("boom".into()), "boom"),
            (
                RuntimeError::AssertionFailed("x > 0".into()),
                "assertion failed: x > 0",
            ),
            (
                RuntimeError::spawn(SpawnError::Limit { limit: 5 }),
                "too many tasks: the limit is 5 tasks alive at once (--max-tasks)",
            ),
            (
                weft_rt::memlimit::Ceiling::new(Some(64 << 20))
                    .exceeded()
                    .into(),
                "out of memory: the program uses more than 64 MiB (--max-memory)",
            ),
            (
                TensorError::LabelOutOfRange { label: 3, n: 2 }.into(),
                "onehot: label 3 out of range [0, 2)",
            ),
            (RuntimeError::NilComm, "collective on nil comm"),
            (
                RuntimeError::BroadcastRoot { root: -1, size: 4 },
                "broadcast: root -1 out of range for group of size 4",
            ),
            (CollError::GroupSize.into(), "group: size out of range"),
            (
                RuntimeError::ListShapes(Box::new(ListShapes {
                    op: "allreduce_sum",
                    first: "[[2 3] [4]]".into(),
                    rank: 2,
                    other: "[[3 2] [4]]".into(),
                })),
                "allreduce_sum: shape mismatch: [[2 3] [4]] (rank 0) vs [[3 2] [4]] (rank 2)",
            ),
            (
                CollError::RootRange { root: 5, size: 4 }.into(),
                "broadcast: root 5 out of range for group of size 4",
            ),
            (
                CollError::OpMismatch {
                    first: "allreduce_sum",
                    rank: 1,
                    other: "broadcast",
                }
                .into(),
                "collective mismatch: rank 0 called allreduce_sum, rank 1 called broadcast",
            ),
        ];
        for (e, want) in cases {
            assert_eq!(e.to_string(), want);
            assert!(e.internal().is_none(), "{e:?}");
        }
    }

    #[test]
    fn engine_bugs_are_internal() {
        let e = RuntimeError::unexpected("int op", &"s");
        assert_eq!(e.to_string(), "int op: unexpected operand \"s\"");
        assert!(e.internal().is_some());
        let e = RuntimeError::spawn(SpawnError::NoRuntime);
        assert!(matches!(e.internal(), Some(InternalError::Spawn(_))));
        let e: RuntimeError = InternalError::LostInstruction("select").into();
        assert_eq!(e.to_string(), "select: lost its instruction");
        let e: RuntimeError = CollError::Unsupported {
            op: "allgather",
            ty: "int".into(),
        }
        .into();
        assert!(e.internal().is_some(), "{e:?}");
    }
}
