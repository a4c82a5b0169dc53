//! Devices: where tensor storage lives and where kernels run.
//!
//! Modelled on candle: every accelerator backend implements one trait,
//! [`Device`]; the tensor layer only ever talks to `dyn Device`. The CUDA
//! backend sits behind the cargo feature `cuda`; when it is off, a stand-in
//! module of the same API (`cuda_stub.rs`) reports no devices, so no file
//! outside `crates/tensor/src/device/` needs `cfg`.
//!
//! Invariants:
//! - The CPU is not a `Device` object: host tensors hold a plain
//!   `Arc<Vec<f32>>` so CPU kernels pay no dispatch. `devices()` always
//!   starts with `"cpu"`.
//! - A backend may implement any subset of the kernel hooks; a hook that
//!   returns `Ok(None)` makes the tensor layer download the operands, run the
//!   CPU kernel and upload the result (correct, if slow).
//! - Every [`DeviceMem`] carries the event its producer recorded; consumers
//!   on the same device order themselves after it on the device (stream
//!   waits), the host waits for it through `Event::wait`.
//! - Probing happens once, on first use; a missing driver is not an error,
//!   only a note (`backend_notes`) and no CUDA devices.
//!
//! Files: `mod.rs` (the `Device` trait, buffers, events, operator codes),
//! `registry.rs` (the devices present, probed once), `cuda.rs` (the CUDA
//! backend: cuBLAS, streams, `--features cuda`), `cuda_kernels.rs` (NVRTC
//! kernel sources and launches), `cuda_rowwise.rs` (row-wise reductions),
//! `cuda_stub.rs` (the stand-in without the feature), `sim.rs` (simulated
//! devices for trying placement without a GPU, `WEFT_SIM_DEVICES`).

mod registry;
pub mod sim;

#[cfg(feature = "cuda")]
mod cuda;
#[cfg(not(feature = "cuda"))]
#[path = "cuda_stub.rs"]
mod cuda;
#[cfg(feature = "cuda")]
mod cuda_kernels;
#[cfg(feature = "cuda")]
mod cuda_rowwise;

use std::any::Any;
use std::fmt;
use std::sync::Arc;

pub use cuda::check_kernels;
pub use registry::{backend_notes, devices, lookup, set_note_sink};

/// What compiling the CUDA backend's kernel source with NVRTC found
/// ([`check_kernels`]). NVRTC needs neither a GPU nor a driver, so this
/// checks the kernels on any machine where libnvrtc loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelCheck {
    /// NVRTC compiled the source: the PTX text, and every entry point the
    /// backend loads from it (each must appear in the PTX).
    Compiled {
        ptx: String,
        entry_points: &'static [&'static str],
    },
    /// The check could not run, and why (a build without the `cuda`
    /// feature, or no libnvrtc on the library path).
    Skipped(String),
    /// NVRTC rejected the source: its message and log.
    Failed(String),
}

/// A device backend failure (driver error, out of memory, ...).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{device}: {msg}")]
pub struct DeviceError {
    /// The device's name, e.g. `cuda:0`.
    pub device: String,
    /// What failed, lowercase.
    pub msg: String,
}

/// A device name that names no present device (`lookup`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("device \"{0}\" is not present")]
pub struct NoSuchDevice(pub String);

/// Elementwise binary operators (`+ - * /`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    // The discriminants are the operator codes of the CUDA kernels.
    Add = 0,
    Sub = 1,
    Mul = 2,
    Div = 3,
}

impl BinOp {
    /// The builtin's name (`add`) used in error messages.
    pub fn name(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::Div => "div",
        }
    }

    /// The operator symbol used in shape mismatch messages.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
        }
    }
}

/// Elementwise unary maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    // The discriminants are the operator codes of the CUDA kernels.
    Neg = 0,
    Relu = 1,
    /// 1 where x > 0, else 0.
    ReluMask = 2,
    Exp = 3,
    Log = 4,
}

impl UnaryOp {
    /// The builtin's name.
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Relu => "relu",
            UnaryOp::ReluMask => "relu_mask",
            UnaryOp::Exp => "exp",
            UnaryOp::Log => "log",
        }
    }
}

/// How the two operands of a binary kernel line up. The result has `len`
/// (or `m * n`) elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Equal shapes of `len` elements.
    Same { len: usize },
    /// Left `[m, n]`, right a row `[n]` repeated for every row.
    RowRight { m: usize, n: usize },
    /// Left a row `[n]` repeated for every row, right `[m, n]`.
    RowLeft { m: usize, n: usize },
}

/// Completion of the work that produced a buffer.
pub trait Event: Send + Sync + fmt::Debug {
    /// Whether the work has finished (never blocks).
    fn is_complete(&self) -> bool;
    /// Blocks the calling thread until the work has finished.
    fn wait(&self) -> Result<(), DeviceError>;
    /// The event as `Any`, so its backend can recover its own type.
    fn as_any(&self) -> &dyn Any;
}

/// An event that is already complete (host-side results, finished copies).
#[derive(Debug, Clone, Copy, Default)]
pub struct Complete;

impl Event for Complete {
    fn is_complete(&self) -> bool {
        true
    }
    fn wait(&self) -> Result<(), DeviceError> {
        Ok(())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Backend-owned memory plus the event that marks its values ready. The
/// backend downcasts `data` to its own buffer type.
#[derive(Clone, Debug)]
pub struct DeviceMem {
    /// The backend's buffer (e.g. a `CudaSlice<f32>`).
    pub data: Arc<dyn Any + Send + Sync>,
    /// Recorded by the producer after its last write.
    pub ready: Arc<dyn Event>,
}

/// A tensor's storage on a device: the device, its memory and the length.
#[derive(Clone, Debug)]
pub struct DeviceBuffer {
    pub device: Arc<dyn Device>,
    pub mem: DeviceMem,
    pub len: usize,
}

impl DeviceBuffer {
    /// Copies the values to host memory (waits for the producer).
    pub fn download(&self) -> Result<Vec<f32>, DeviceError> {
        self.device.download(&self.mem, self.len)
    }

    /// Whether both buffers are the same allocation.
    pub fn same_memory(&self, other: &DeviceBuffer) -> bool {
        Arc::ptr_eq(&self.mem.data, &other.mem.data)
    }
}

/// Shape of a matrix product `[m, k] x [k, n]`, all operands row-major.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatmulDims {
    pub m: usize,
    pub k: usize,
    pub n: usize,
}

/// Which operands of a matrix product are stored transposed: `a` holds
/// `[k, m]` (row-major) when `a` is set, `b` holds `[n, k]` when `b` is set.
/// The product is still `[m, k] x [k, n]` as given by [`MatmulDims`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Trans {
    pub a: bool,
    pub b: bool,
}

/// A row-major matrix of `rows x cols` values, the shape argument of the
/// row-wise hooks. A 1-d tensor of `n` values is one row of `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rows {
    pub rows: usize,
    pub cols: usize,
}

/// An accelerator backend. Every kernel hook has a default that returns
/// `Ok(None)` ("not on this device": the tensor layer runs it on the host).
pub trait Device: Send + Sync + fmt::Debug {
    /// The name used by `to(t, name)` and printed forms: `cuda:0`.
    fn name(&self) -> &str;

    /// Whether the kernels below only queue work and return before it runs
    /// (a GPU's stream), so that a call's CPU cost is its launch alone and
    /// it never waits for the device, whatever the tensor's size. The
    /// tensor layer then calls them inline on the task's worker rather
    /// than through the compute pool (docs/tensors.md, "Long kernels").
    /// `sum`, `argmax_rows` and `download` bring values back and wait
    /// whatever this says.
    fn launches_async(&self) -> bool {
        false
    }

    /// Starts copying `host` to the device; the returned memory's event
    /// completes when the copy has landed.
    fn upload(&self, host: &[f32]) -> Result<DeviceMem, DeviceError>;

    /// Copies `len` values back to the host, after the producer's event.
    fn download(&self, mem: &DeviceMem, len: usize) -> Result<Vec<f32>, DeviceError>;

    /// `a [m,k] x b [k,n]`.
    fn matmul(
        &self,
        _a: &DeviceMem,
        _b: &DeviceMem,
        _dims: MatmulDims,
    ) -> Result<Option<DeviceMem>, DeviceError> {
        Ok(None)
    }

    /// Elementwise map over `len` values.
    fn unary(
        &self,
        _op: UnaryOp,
        _a: &DeviceMem,
        _len: usize,
    ) -> Result<Option<DeviceMem>, DeviceError> {
        Ok(None)
    }

    /// Elementwise `a op b` with the given layout.
    fn binary(
        &self,
        _op: BinOp,
        _a: &DeviceMem,
        _b: &DeviceMem,
        _layout: Layout,
    ) -> Result<Option<DeviceMem>, DeviceError> {
        Ok(None)
    }

    /// `a op s` (or `s op a` when `scalar_left`) over `len` values.
    fn scalar(
        &self,
        _op: BinOp,
        _a: &DeviceMem,
        _s: f32,
        _scalar_left: bool,
        _len: usize,
    ) -> Result<Option<DeviceMem>, DeviceError> {
        Ok(None)
    }

    /// `op(a) x op(b)` with either operand stored transposed (see [`Trans`]),
    /// so `matmul(transpose(x), y)` needs no transposed copy. When this
    /// declines, the tensor layer materializes the transposes (`transpose`)
    /// and calls `matmul`.
    fn matmul_t(
        &self,
        _a: &DeviceMem,
        _b: &DeviceMem,
        _dims: MatmulDims,
        _trans: Trans,
    ) -> Result<Option<DeviceMem>, DeviceError> {
        Ok(None)
    }

    /// The row-major `[cols, rows]` transpose of the row-major `a`.
    fn transpose(&self, _a: &DeviceMem, _shape: Rows) -> Result<Option<DeviceMem>, DeviceError> {
        Ok(None)
    }

    /// Row-wise `exp(x - max) / sum(exp(x - max))` (the CPU kernel's order
    /// of operations; a row's maximum ignores NaNs as `f32::max` does).
    fn softmax(&self, _a: &DeviceMem, _shape: Rows) -> Result<Option<DeviceMem>, DeviceError> {
        Ok(None)
    }

    /// The sum of `len` values, accumulated in f64, copied to the host.
    fn sum(&self, _a: &DeviceMem, _len: usize) -> Result<Option<f64>, DeviceError> {
        Ok(None)
    }

    /// The `[cols]` column sums of `[rows, cols]` (rows added in order).
    fn sum_rows(&self, _a: &DeviceMem, _shape: Rows) -> Result<Option<DeviceMem>, DeviceError> {
        Ok(None)
    }

    /// For each row, the index of its largest value (the first on ties; a
    /// NaN never wins unless it is first), copied to the host. `cols > 0`.
    fn argmax_rows(&self, _a: &DeviceMem, _shape: Rows) -> Result<Option<Vec<i64>>, DeviceError> {
        Ok(None)
    }

    /// `[labels.len(), n]` with a 1 in each row's label column; every label
    /// is in `0..n` (checked by the tensor layer).
    fn onehot(&self, _labels: &[i64], _n: usize) -> Result<Option<DeviceMem>, DeviceError> {
        Ok(None)
    }
}
