//! Devices: where tensor storage lives and where kernels run.
//!
//! Modelled on candle: every accelerator backend implements one trait,
//! [`Device`]; the tensor layer only ever talks to `dyn Device`. The CUDA
//! backend sits behind the cargo feature `cuda`; when it is off, a stand-in
//! module of the same API (`cuda_stub.rs`) reports no devices, so no file
//! outside `src/device/` needs `cfg`.
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

mod registry;

#[cfg(feature = "cuda")]
mod cuda;
#[cfg(not(feature = "cuda"))]
#[path = "cuda_stub.rs"]
mod cuda;
#[cfg(feature = "cuda")]
mod cuda_kernels;

use std::any::Any;
use std::fmt;
use std::sync::Arc;

pub use registry::{backend_notes, devices, lookup};

/// A device backend failure (driver error, out of memory, ...).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{device}: {msg}")]
pub struct DeviceError {
    /// The device's name, e.g. `cuda:0`.
    pub device: String,
    /// What failed, lowercase.
    pub msg: String,
}

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

/// An accelerator backend. Every kernel hook has a default that returns
/// `Ok(None)` ("not on this device": the tensor layer runs it on the host).
pub trait Device: Send + Sync + fmt::Debug {
    /// The name used by `to(t, name)` and printed forms: `cuda:0`.
    fn name(&self) -> &str;

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
}
