//! Tensors: immutable f32 arrays with a shape and a device (docs/language.md, "Tensors").
//!
//! Invariants:
//! - A `Tensor` never changes after it is made; `Clone` shares its storage
//!   (an `Arc`). Kernels that take a tensor by value reuse its buffer when
//!   they hold the only reference (copy-on-write), so no holder of a clone
//!   ever sees a write.
//! - Host storage holds exactly `shape.numel()` values in row-major order.
//! - `transpose` of a host matrix is lazy: it shares its operand's buffer
//!   and `matmul` reads it through strides; any other reader gets a
//!   row-major copy made once (`Storage::Transposed`).
//! - A device tensor holds a [`DeviceBuffer`] of the same length, plus the
//!   event its producer recorded; [`Tensor::ready`] waits for that event.
//! - `transpose` of a device matrix is lazy too (`Storage::DeviceTransposed`):
//!   `matmul` hands the untouched buffer to the backend with a transpose
//!   flag (cuBLAS's op flags); any other kernel gets a row-major copy made
//!   once on the device (`place::dense`).
//!
//! Table of contents:
//!
//! | file | what |
//! |---|---|
//! | `create.rs` | zeros, ones, full, randn, tensor_from, shape, numel |
//! | `elementwise.rs` | + - * /, broadcasting, relu, exp, ... |
//! | `mathf.rs` | vectorizable exp and ln |
//! | `reduce.rs` | sum, mean, softmax, argmax_rows, ... |
//! | `linalg.rs` | matmul, transpose |
//! | `index.rs` | rows, gather, get, onehot |
//! | `dataset.rs` | load_dataset |
//! | `files.rs` | load_csv, load_npy, save_npy, values |
//! | `compute.rs` | the compute pool for long kernels |
//! | `place.rs` | devices, to, `auto` placement, and running kernels where their operands live |
//! | `fallback.rs` | soft placement: host fallbacks recorded, or refused when strict |
//! | `builtins.rs` | one async entry point for the interpreter |
//! | `error.rs` | `TensorError`, whose `Display` is the panic message |
//! | `device/` | the `Device` trait, the registry, the CUDA backend |
//!
//! Layering: `device` imports nothing of the crate; `fallback` imports
//! `device`; `place` imports `device` and `fallback`; the kernels
//! (`elementwise`, `reduce`, `linalg`, `index`) import `place`,
//! `fallback` and `device`; `builtins` imports `compute` and `fallback`.
//! No module imports one that imports it.

pub mod builtins;
mod compute;
mod create;
mod dataset;
pub mod device;
mod elementwise;
mod error;
pub mod fallback;
mod files;
mod index;
mod linalg;
mod mathf;
mod place;
mod reduce;

use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::device::DeviceBuffer;

pub use crate::device::{BinOp, UnaryOp};
pub use compute::{compute, kernel_cost, pool_threads, INLINE_COST};
pub use create::{full, numel, ones, randn, shape, tensor_from, zeros};
pub use dataset::{load_dataset, Dataset};
pub use elementwise::{
    add, binary, div, exp, log, mul, neg, relu, relu_mask, scalar_tensor, sub, tensor_scalar, unary,
};
pub use error::TensorError;
pub use index::{gather, get, onehot, onehot_on, rows};
pub use linalg::{matmul, matmul_cost, transpose};
pub use place::{auto_device, device, devices, to, to_device};
pub use reduce::{argmax_rows, mean, softmax, sum, sum_rows};

/// The dimensions of a tensor; cheap to clone. Displays as `[2,3]`.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Shape(Arc<[usize]>);

impl Shape {
    /// A shape with these dimensions.
    pub fn new(dims: &[usize]) -> Shape {
        Shape(dims.into())
    }

    /// The dimensions.
    pub fn dims(&self) -> &[usize] {
        &self.0
    }

    /// The number of elements (product of the dimensions).
    pub fn numel(&self) -> usize {
        self.0.iter().product()
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

/// Where a tensor's values live.
#[derive(Clone, Debug)]
pub(crate) enum Storage {
    /// In host memory, row-major.
    Host(Arc<Vec<f32>>),
    /// In host memory as the transpose of another tensor's buffer: `matmul`
    /// reads it through strides; every other reader gets the row-major
    /// copy, made once on first use.
    Transposed(Arc<Transposed>),
    /// In a device's memory.
    Device(DeviceBuffer),
    /// In a device's memory as the transpose of another tensor's buffer,
    /// the device twin of `Transposed`.
    DeviceTransposed(Arc<DeviceTransposed>),
}

/// A lazy transpose on a device: the tensor is `[cols, rows]` of the
/// row-major `[rows, cols]` buffer `src`.
#[derive(Debug)]
pub(crate) struct DeviceTransposed {
    pub(crate) src: DeviceBuffer,
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    /// The row-major transpose on the same device, made on first use.
    pub(crate) dense: OnceLock<DeviceBuffer>,
}

impl DeviceTransposed {
    pub(crate) fn new(src: DeviceBuffer, rows: usize, cols: usize) -> DeviceTransposed {
        DeviceTransposed {
            src,
            rows,
            cols,
            dense: OnceLock::new(),
        }
    }

    /// The source values downloaded, as a lazy host transpose.
    fn download(&self) -> Result<Transposed, TensorError> {
        Ok(Transposed::new(
            Arc::new(self.src.download()?),
            self.rows,
            self.cols,
        ))
    }
}

/// A lazy transpose: the tensor is `[cols, rows]` of the row-major
/// `[rows, cols]` buffer `src`.
#[derive(Debug)]
pub(crate) struct Transposed {
    pub(crate) src: Arc<Vec<f32>>,
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    dense: OnceLock<Vec<f32>>,
}

impl Transposed {
    pub(crate) fn new(src: Arc<Vec<f32>>, rows: usize, cols: usize) -> Transposed {
        Transposed {
            src,
            rows,
            cols,
            dense: OnceLock::new(),
        }
    }

    /// The row-major values of the transpose, computed on first use.
    fn dense(&self) -> &[f32] {
        self.dense
            .get_or_init(|| transpose_copy(&self.src, self.rows, self.cols))
    }
}

/// An immutable f32 array with a shape and a device.
///
/// The zero value (`Tensor::default()`) has shape `[0]` on the CPU.
#[derive(Clone)]
pub struct Tensor {
    shape: Shape,
    storage: Storage,
}

impl Default for Tensor {
    fn default() -> Self {
        Tensor::host(Shape::new(&[0]), Vec::new())
    }
}

impl fmt::Debug for Tensor {
    /// The printed form plus up to 8 leading host values (never the whole buffer).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")?;
        if let Some(v) = self.host_values() {
            let head = &v[..v.len().min(8)];
            write!(f, " {head:?}{}", if v.len() > 8 { "..." } else { "" })?;
        }
        Ok(())
    }
}

impl fmt::Display for Tensor {
    /// The printed form of docs/language.md, "Printing values": `tensor[2,3]@cpu`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tensor{}@{}", self.shape, self.device_name())
    }
}

impl Tensor {
    /// A host tensor from row-major values; `values.len()` must equal the
    /// shape's element count.
    pub fn from_vec(dims: &[usize], values: Vec<f32>) -> Result<Tensor, TensorError> {
        let shape = Shape::new(dims);
        if shape.numel() != values.len() {
            return Err(TensorError::ListLength {
                len: values.len(),
                shape: shape.to_string(),
            });
        }
        Ok(Tensor::host(shape, values))
    }

    /// A host tensor over a shared buffer of row-major values (no copy);
    /// `values.len()` must equal the shape's element count. With
    /// [`Tensor::host_buffer`], this lets a value leave and re-enter the
    /// crate without copying its elements (the collectives of weft-coll).
    pub fn from_host_buffer(dims: &[usize], values: Arc<Vec<f32>>) -> Result<Tensor, TensorError> {
        let shape = Shape::new(dims);
        if shape.numel() != values.len() {
            return Err(TensorError::ListLength {
                len: values.len(),
                shape: shape.to_string(),
            });
        }
        Ok(Tensor::from_shared(shape, values))
    }

    /// The row-major host buffer of a host tensor: shared, not copied; a
    /// lazy transpose is made row-major first (a copy, as any other reader
    /// gets). `None` for a tensor on a device (copy it to `"cpu"` first).
    pub fn host_buffer(&self) -> Option<Arc<Vec<f32>>> {
        match &self.storage {
            Storage::Host(v) => Some(v.clone()),
            Storage::Transposed(t) => Some(Arc::new(t.dense().to_vec())),
            Storage::Device(_) | Storage::DeviceTransposed(_) => None,
        }
    }

    /// Internal constructor; the caller keeps `values.len() == shape.numel()`.
    pub(crate) fn host(shape: Shape, values: Vec<f32>) -> Tensor {
        debug_assert_eq!(shape.numel(), values.len());
        Tensor {
            shape,
            storage: Storage::Host(Arc::new(values)),
        }
    }

    /// A host tensor over an existing buffer of `shape.numel()` values.
    pub(crate) fn from_shared(shape: Shape, values: Arc<Vec<f32>>) -> Tensor {
        debug_assert_eq!(shape.numel(), values.len());
        Tensor {
            shape,
            storage: Storage::Host(values),
        }
    }

    pub(crate) fn transposed(shape: Shape, t: Transposed) -> Tensor {
        Tensor {
            shape,
            storage: Storage::Transposed(Arc::new(t)),
        }
    }

    pub(crate) fn device_transposed(shape: Shape, t: DeviceTransposed) -> Tensor {
        Tensor {
            shape,
            storage: Storage::DeviceTransposed(Arc::new(t)),
        }
    }

    pub(crate) fn on_device(shape: Shape, buf: DeviceBuffer) -> Tensor {
        Tensor {
            shape,
            storage: Storage::Device(buf),
        }
    }

    pub(crate) fn storage(&self) -> &Storage {
        &self.storage
    }

    /// The shape.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The dimensions.
    pub fn dims(&self) -> &[usize] {
        self.shape.dims()
    }

    /// The number of elements.
    pub fn numel(&self) -> usize {
        self.shape.numel()
    }

    /// The device's name: `"cpu"`, `"cuda:0"`, ...
    pub fn device_name(&self) -> &str {
        match &self.storage {
            Storage::Host(_) | Storage::Transposed(_) => "cpu",
            Storage::Device(b) => b.device.name(),
            Storage::DeviceTransposed(t) => t.src.device.name(),
        }
    }

    /// Whether the values are in host memory (a lazy transpose of a host
    /// tensor included), without materializing anything.
    pub fn is_host(&self) -> bool {
        matches!(self.storage, Storage::Host(_) | Storage::Transposed(_))
    }

    /// The values when the tensor is in host memory (`None` on a device).
    pub fn host_values(&self) -> Option<&[f32]> {
        match &self.storage {
            Storage::Host(v) => Some(v),
            Storage::Transposed(t) => Some(t.dense()),
            Storage::Device(_) | Storage::DeviceTransposed(_) => None,
        }
    }

    /// A copy of the values in host memory (downloads from a device).
    pub fn to_vec(&self) -> Result<Vec<f32>, TensorError> {
        match &self.storage {
            Storage::Host(v) => Ok(v.to_vec()),
            Storage::Transposed(t) => Ok(t.dense().to_vec()),
            Storage::Device(b) => Ok(b.download()?),
            Storage::DeviceTransposed(t) => Ok(t.download()?.dense().to_vec()),
        }
    }

    /// Whether both tensors share one storage buffer (copy-on-write not yet done).
    pub fn shares_storage(&self, other: &Tensor) -> bool {
        match (&self.storage, &other.storage) {
            (Storage::Host(a), Storage::Host(b)) => Arc::ptr_eq(a, b),
            (Storage::Transposed(a), Storage::Transposed(b)) => Arc::ptr_eq(&a.src, &b.src),
            (Storage::Transposed(a), Storage::Host(b))
            | (Storage::Host(b), Storage::Transposed(a)) => Arc::ptr_eq(&a.src, b),
            (Storage::Device(a), Storage::Device(b)) => a.same_memory(b),
            (Storage::DeviceTransposed(a), Storage::DeviceTransposed(b)) => {
                a.src.same_memory(&b.src)
            }
            (Storage::DeviceTransposed(a), Storage::Device(b))
            | (Storage::Device(b), Storage::DeviceTransposed(a)) => a.src.same_memory(b),
            _ => false,
        }
    }

    /// Whether the tensor lives on a device whose kernels only queue work
    /// ([`device::Device::launches_async`]).
    pub fn on_async_device(&self) -> bool {
        match &self.storage {
            Storage::Host(_) | Storage::Transposed(_) => false,
            Storage::Device(b) => b.device.launches_async(),
            Storage::DeviceTransposed(t) => t.src.device.launches_async(),
        }
    }

    /// Whether the tensor's values are computed: always on the CPU; on a
    /// device, whether the event its producer recorded has completed (never
    /// blocks). A receiver waits with [`Tensor::ready`] only for tensors
    /// that are not.
    pub fn is_ready(&self) -> bool {
        match &self.storage {
            Storage::Host(_) | Storage::Transposed(_) => true,
            Storage::Device(b) => b.mem.ready.is_complete(),
            Storage::DeviceTransposed(t) => t.src.mem.ready.is_complete(),
        }
    }

    /// Waits until the tensor's values are computed: at once on the CPU; on a
    /// device, until the event its producer recorded has completed (without
    /// blocking the worker: the wait runs on the compute pool).
    pub async fn ready(&self) -> Result<(), TensorError> {
        let b = match &self.storage {
            Storage::Host(_) | Storage::Transposed(_) => return Ok(()),
            Storage::Device(b) => b,
            Storage::DeviceTransposed(t) => &t.src,
        };
        if b.mem.ready.is_complete() {
            return Ok(());
        }
        let ev = b.mem.ready.clone();
        Ok(compute(usize::MAX, move || ev.wait()).await?)
    }

    /// This tensor with host values, downloading from a device if needed.
    pub(crate) fn to_host(&self) -> Result<Tensor, TensorError> {
        match &self.storage {
            Storage::Host(_) | Storage::Transposed(_) => Ok(self.clone()),
            Storage::Device(b) => Ok(Tensor::host(self.shape.clone(), b.download()?)),
            Storage::DeviceTransposed(t) => {
                Ok(Tensor::transposed(self.shape.clone(), t.download()?))
            }
        }
    }

    /// The host values as a uniquely owned buffer: reused when this is the
    /// only reference, else copied (the copy-on-write step).
    pub(crate) fn into_unique_host(self) -> Result<Vec<f32>, TensorError> {
        match self.storage {
            Storage::Host(v) => Ok(Arc::try_unwrap(v).unwrap_or_else(|v| v.to_vec())),
            Storage::Transposed(t) => Ok(t.dense().to_vec()),
            Storage::Device(b) => Ok(b.download()?),
            Storage::DeviceTransposed(t) => Ok(t.download()?.dense().to_vec()),
        }
    }

    /// Whether the host buffer may be written in place (sole reference).
    pub(crate) fn is_unique_host(&mut self) -> bool {
        match &mut self.storage {
            Storage::Host(v) => Arc::get_mut(v).is_some(),
            Storage::Transposed(_) | Storage::Device(_) | Storage::DeviceTransposed(_) => false,
        }
    }
}

/// Allocates `n` zeroed values, reporting an allocation failure as an error.
pub(crate) fn alloc(op: &'static str, shape: &Shape, n: usize) -> Result<Vec<f32>, TensorError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| TensorError::TooLarge {
        op,
        shape: shape.to_string(),
    })?;
    v.resize(n, 0.0);
    Ok(v)
}

/// The row-major transpose `[n, m]` of the row-major `[m, n]` values `src`,
/// copied in 32x32 tiles.
pub(crate) fn transpose_copy(src: &[f32], m: usize, n: usize) -> Vec<f32> {
    let mut out = vec![0.0; m * n];
    const TILE: usize = 32;
    for i0 in (0..m).step_by(TILE) {
        for j0 in (0..n).step_by(TILE) {
            for i in i0..(i0 + TILE).min(m) {
                for j in j0..(j0 + TILE).min(n) {
                    out[j * m + i] = src[i * n + j];
                }
            }
        }
    }
    out
}
