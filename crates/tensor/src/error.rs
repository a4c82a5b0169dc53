//! `TensorError`: why a tensor builtin failed. Its `Display` is the runtime
//! panic message (docs/language.md, "Tensors"): lowercase, no trailing period, naming both
//! shapes or the device involved, e.g. `matmul: shape mismatch [2,3] x [4,5]`.

use super::Shape;
use crate::device::{DeviceError, NoSuchDevice};

/// A failed tensor builtin. `op` fields hold the builtin's name.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TensorError {
    /// Operand shapes do not fit together; `sym` is the operator (`+`, `x`, ...).
    #[error("{op}: shape mismatch {a} {sym} {b}")]
    ShapeMismatch {
        op: &'static str,
        sym: &'static str,
        a: Shape,
        b: Shape,
    },
    /// A shape argument with a negative dimension.
    #[error("{op}: invalid shape {shape}")]
    InvalidShape { op: &'static str, shape: String },
    /// A shape whose element count does not fit in memory.
    #[error("{op}: shape {shape} is too large")]
    TooLarge { op: &'static str, shape: String },
    /// The operand has the wrong number of dimensions.
    #[error("{op}: expected a {expected} tensor, got shape {shape}")]
    Rank {
        op: &'static str,
        expected: &'static str,
        shape: Shape,
    },
    /// `tensor_from`: the list does not fill the shape exactly.
    #[error("tensor_from: {len} values do not fill shape {shape}")]
    ListLength { len: usize, shape: String },
    /// A row index (`gather`) out of range, worded as the list index error of docs/language.md.
    #[error("{op}: index out of range [{index}] with length {len}")]
    IndexOutOfRange {
        op: &'static str,
        index: i64,
        len: usize,
    },
    /// `rows(t, start, end)` with bounds outside the rows.
    #[error("rows: slice bounds out of range [{start}:{end}] with length {len}")]
    RowsOutOfRange { start: i64, end: i64, len: usize },
    /// `get(t, i...)` with the wrong number of indices or one out of range.
    #[error("get: index {index} out of range for shape {shape}")]
    GetOutOfRange { index: String, shape: Shape },
    /// `onehot` with a label outside `[0, n)` or a negative `n`.
    #[error("onehot: label {label} out of range [0, {n})")]
    LabelOutOfRange { label: i64, n: i64 },
    /// A reduction over rows that have no elements.
    #[error("{op}: rows of shape {shape} are empty")]
    EmptyRows { op: &'static str, shape: Shape },
    /// A device name that names no present device.
    #[error("device \"{0}\" is not present")]
    DeviceNotPresent(String),
    /// Operands on different devices.
    #[error("{op}: tensors on different devices \"{a}\" and \"{b}\"")]
    DeviceMismatch {
        op: &'static str,
        a: String,
        b: String,
    },
    /// `load_dataset` with an unknown name.
    #[error("unknown dataset \"{0}\" (available: digits)")]
    UnknownDataset(String),
    /// A shipped dataset that does not parse (a build defect, reported, not panicked).
    #[error("dataset {name}: {reason}")]
    BadDataset { name: String, reason: String },
    /// A file builtin (`load_csv`, `load_npy`, `save_npy`) failed: the
    /// path and the reason (`no such file or directory`, `line 3: invalid
    /// number "x"`).
    #[error("{op}: {path}: {reason}")]
    File {
        op: &'static str,
        path: String,
        reason: String,
    },
    /// A builtin called with argument kinds it does not take (a checked
    /// program never does this).
    #[error("{op}: bad arguments, want ({want})")]
    Arguments {
        op: &'static str,
        want: &'static str,
    },
    /// A kernel with no implementation on its operands' device, under
    /// strict placement (`weft run --strict-placement`), where it may not
    /// run on the host instead (docs/tensors.md, "Soft placement").
    #[error("strict placement: {op} has no kernel on {device}")]
    NoKernel { op: &'static str, device: String },
    /// A device backend failed (driver error, out of device memory).
    #[error(transparent)]
    Device(#[from] DeviceError),
}

impl From<NoSuchDevice> for TensorError {
    fn from(e: NoSuchDevice) -> Self {
        TensorError::DeviceNotPresent(e.0)
    }
}
