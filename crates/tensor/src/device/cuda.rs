//! The CUDA backend (cargo feature `cuda`), on cudarc with the driver,
//! cuBLAS and NVRTC loaded at run time, so it builds without CUDA.
//!
//! Per device: one context, a compute stream (kernels, cuBLAS) and a copy
//! stream (host-to-device and device-to-host copies), so the copy of batch
//! n+1 overlaps the compute of batch n. Uploads go through page-locked
//! staging buffers (kept per length, a few at a time, reused across a
//! training loop's equal-sized batches), which is what makes the copy truly
//! asynchronous; the event recorded after the copy is the tensor's
//! readiness handle. Every kernel first makes the compute stream wait on its
//! inputs' events, then records its own event after launching. Only `sum`
//! and `argmax_rows` (and downloads) bring values back to the host: one
//! float or one index per row, copied after the kernel on the compute stream.
//!
//! Buffers: a tensor of `len` values is a `CudaSlice<f32>` of `len` values,
//! or of one unused value when `len` is 0 (CUDA cannot allocate zero bytes);
//! every length check compares with `len.max(1)`.
//!
//! Probing (`probe`) never panics on a machine without CUDA: it checks that
//! the driver, cuBLAS and NVRTC libraries can be loaded before touching
//! them (cudarc's loaders panic otherwise), and turns any failure into a
//! note; the engine then runs CPU-only.

use std::any::Any;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use cudarc::cublas::{sys::cublasOperation_t, CudaBlas, Gemm, GemmConfig};
use cudarc::driver::{CudaContext, CudaEvent, CudaSlice, CudaStream, PinnedHostSlice};
use weft_chan::loom::Mutex;

use super::cuda_kernels::{self, alloc_out, alloc_written, Kernels};
use super::{
    BinOp, Device, DeviceError, DeviceMem, Event, KernelCheck, Layout, MatmulDims, Rows, Trans,
    UnaryOp,
};

/// Whether the real backend is compiled in.
pub const BUILT: bool = true;

/// What probing the backend found.
pub struct Probe {
    /// One entry per usable GPU, named `cuda:N`.
    pub devices: Vec<Arc<dyn Device>>,
    /// Why there are none (or fewer than the driver reports).
    pub note: Option<String>,
}

/// Finds the CUDA devices, or says why there are none.
pub fn probe() -> Probe {
    let none = |note: String| Probe {
        devices: Vec::new(),
        note: Some(note),
    };
    // SAFETY: these only try to dlopen the libraries' usual names.
    let (driver, blas, nvrtc) = unsafe {
        (
            cudarc::driver::sys::is_culib_present(),
            cudarc::cublas::sys::is_culib_present(),
            cudarc::nvrtc::sys::is_culib_present(),
        )
    };
    if !driver {
        return none(
            "cuda: the driver library (libcuda.so.1) cannot be loaded; running on cpu only".into(),
        );
    }
    if !blas || !nvrtc {
        let missing = if blas { "libnvrtc" } else { "libcublas" };
        return none(format!(
            "cuda: {missing} cannot be loaded; running on cpu only"
        ));
    }
    // cudarc panics when a symbol is missing from an old driver: report it.
    match catch_unwind(AssertUnwindSafe(open_all)) {
        Ok(Ok(devices)) if devices.is_empty() => none("cuda: no devices found".into()),
        Ok(Ok(devices)) => Probe {
            devices,
            note: None,
        },
        Ok(Err(e)) => none(format!("cuda: {e}; running on cpu only")),
        Err(_) => none("cuda: the driver is too old for this build; running on cpu only".into()),
    }
}

/// Compiles the kernel source for `arch` (e.g. `compute_90`) with NVRTC,
/// without a GPU. Never panics: a missing libnvrtc is `Skipped`.
pub fn check_kernels(arch: &str) -> KernelCheck {
    // SAFETY: this only tries to dlopen libnvrtc's usual names.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return KernelCheck::Skipped(
            "libnvrtc (libnvrtc.so.13) cannot be loaded; put its directory on LD_LIBRARY_PATH \
             (scripts/nvrtc-check.sh installs it from the nvidia-cuda-nvrtc wheel)"
                .into(),
        );
    }
    // cudarc panics when a symbol is missing from the library it loaded.
    match catch_unwind(AssertUnwindSafe(|| cuda_kernels::compile(arch))) {
        Ok(Ok(ptx)) => KernelCheck::Compiled {
            ptx: ptx.to_src(),
            entry_points: cuda_kernels::ENTRY_POINTS,
        },
        Ok(Err(e)) => KernelCheck::Failed(e),
        Err(_) => KernelCheck::Skipped(
            "the libnvrtc found lacks a function this build needs (older than cuda 13?)".into(),
        ),
    }
}

fn open_all() -> Result<Vec<Arc<dyn Device>>, String> {
    let n = CudaContext::device_count().map_err(|e| e.to_string())?;
    let mut out: Vec<Arc<dyn Device>> = Vec::new();
    for i in 0..n.max(0) as usize {
        out.push(Arc::new(CudaGpu::open(i)?));
    }
    Ok(out)
}

/// Makes the device's default memory pool (where cudarc's stream-ordered
/// allocations come from) keep the memory its buffers free instead of
/// handing it back to the driver at every synchronization. The pool's
/// default release threshold is 0: every `sum` (which waits for its
/// result) emptied the pool, and every kernel's output was then a fresh
/// mapping from the driver; a training step allocates a few dozen
/// buffers and synchronizes once. The memory stays the process's until
/// it exits, as with PyTorch's caching allocator.
fn keep_pool_memory(ctx: &CudaContext) -> Result<(), cudarc::driver::DriverError> {
    use cudarc::driver::{result, sys};
    if !ctx.has_async_alloc() {
        return Ok(());
    }
    let mut keep: u64 = u64::MAX;
    // SAFETY: `cu_device` is the context's device (a handle the driver gave
    // out); the release threshold is a `cuuint64_t`, which `keep` is.
    unsafe {
        let pool = result::device::get_default_mem_pool(ctx.cu_device())?;
        result::mem_pool::set_attribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut keep as *mut u64).cast(),
        )
    }
}

/// How many page-locked staging buffers a device keeps.
const STAGING_BUFFERS: usize = 4;

/// One GPU.
pub struct CudaGpu {
    name: String,
    ctx: Arc<CudaContext>,
    compute: Arc<CudaStream>,
    copy: Arc<CudaStream>,
    /// cuBLAS on the compute stream; a handle is used by one thread at a time.
    blas: Mutex<CudaBlas>,
    kernels: Kernels,
    /// Page-locked upload buffers, most recently used last.
    staging: Mutex<Vec<PinnedHostSlice<f32>>>,
    /// Readiness events to reuse.
    events: EventPool,
}

impl fmt::Debug for CudaGpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CudaGpu")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// An event recorded on one of a device's streams, and that stream (its
/// handle's address: an identity, never dereferenced).
struct GpuEvent(Arc<Pooled>, usize);

/// The events of a device that no tensor holds any more, for reuse: every
/// kernel's output gets a readiness event, and creating and destroying
/// one each time were two of a launch's driver calls. Recording a reused
/// event again is safe: a wait queued on a stream (`cuStreamWaitEvent`)
/// holds the record it saw, and no one else holds the event.
type EventPool = Arc<Mutex<Vec<CudaEvent>>>;

/// The most events a pool keeps.
const POOLED_EVENTS: usize = 1024;

/// An event that goes back to its pool when dropped.
struct Pooled {
    ev: Option<CudaEvent>,
    pool: EventPool,
}

impl std::ops::Deref for Pooled {
    type Target = CudaEvent;
    fn deref(&self) -> &CudaEvent {
        self.ev.as_ref().expect("present until dropped")
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let Some(ev) = self.ev.take() {
            let mut pool = self.pool.lock();
            if pool.len() < POOLED_EVENTS {
                pool.push(ev);
            }
        }
    }
}

/// A tensor's buffer on a GPU. Every buffer belongs to the compute stream:
/// it is freed there (`cuMemFreeAsync` on the compute stream, when the
/// last tensor holding it is dropped), so the free comes after every
/// kernel the host queued while it held the buffer. A buffer written by
/// an upload on the copy stream is handed to the compute stream after its
/// copy is queued, and remembers that copy's event: dropping it makes the
/// compute stream wait for the copy before the free (a tensor uploaded and
/// dropped unread). This is the engine's own ordering, in place of
/// cudarc's per-buffer event tracking, which is off (see `CudaGpu::open`).
struct GpuBuf {
    slice: CudaSlice<f32>,
    /// The copy that wrote `slice` on the copy stream, if one did.
    copied: Option<Arc<Pooled>>,
}

impl GpuBuf {
    fn computed(slice: CudaSlice<f32>) -> Arc<dyn Any + Send + Sync> {
        Arc::new(GpuBuf {
            slice,
            copied: None,
        })
    }
}

impl Drop for GpuBuf {
    fn drop(&mut self) {
        if let Some(ev) = &self.copied {
            // An error here means the context is broken; the free that
            // follows reports nothing either (cudarc records it).
            let _ = self.slice.stream().wait(ev);
        }
    }
}

/// `slice`, allocated on another stream of the same context, handed to
/// `to`: from now on it is freed on `to`. The caller has ordered `to`
/// after the allocation and after every write to it.
fn hand_to<T: cudarc::driver::DeviceRepr>(
    slice: CudaSlice<T>,
    to: &Arc<CudaStream>,
) -> CudaSlice<T> {
    let len = slice.len();
    let ptr = slice.leak();
    // SAFETY: `ptr` is a live allocation of `len` values of `T` of this
    // context (leaked above, so nothing else frees it), owned from here on
    // by the returned slice alone.
    unsafe { to.upgrade_device_ptr::<T>(ptr, len) }
}

impl fmt::Debug for GpuEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GpuEvent")
    }
}

impl Event for GpuEvent {
    fn is_complete(&self) -> bool {
        self.0.is_complete()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn wait(&self) -> Result<(), DeviceError> {
        self.0.synchronize().map_err(|e| DeviceError {
            device: "cuda".into(),
            msg: e.to_string(),
        })
    }
}

/// A `[rows, cols]` kernel launcher of `Kernels` (see `CudaGpu::rowwise`).
type RowKernel = fn(
    &Kernels,
    &Arc<CudaStream>,
    &CudaSlice<f32>,
    usize,
    usize,
) -> cuda_kernels::KernelResult<CudaSlice<f32>>;

impl CudaGpu {
    fn open(ordinal: usize) -> Result<CudaGpu, String> {
        let name = format!("cuda:{ordinal}");
        let err = |what: &str, e: &dyn fmt::Display| format!("{name}: {what}: {e}");
        let ctx = CudaContext::new(ordinal).map_err(|e| err("context", &e))?;
        // SAFETY: before any buffer of this context is made. The engine
        // orders its streams itself (`GpuBuf`, `input`): every buffer is
        // allocated on the stream that first writes it and freed on the
        // compute stream after its last use there; a read on another
        // stream waits for the writer's event first, and the copy stream's
        // reads (downloads) finish before `download` returns. cudarc's
        // tracking would add two events a buffer and a wait and a record
        // per argument of every launch: most of a launch's driver calls.
        unsafe { ctx.disable_event_tracking() };
        keep_pool_memory(&ctx).map_err(|e| err("memory pool", &e))?;
        let compute = ctx.new_stream().map_err(|e| err("stream", &e))?;
        let copy = ctx.new_stream().map_err(|e| err("stream", &e))?;
        let blas = CudaBlas::new(compute.clone()).map_err(|e| err("cublas", &e))?;
        let kernels = Kernels::load(&ctx).map_err(|e| err("kernels", &e))?;
        Ok(CudaGpu {
            name,
            ctx,
            compute,
            copy,
            blas: Mutex::new(blas),
            kernels,
            staging: Mutex::new(Vec::new()),
            events: Arc::new(Mutex::new(Vec::new())),
        })
    }

    fn fail(&self, e: impl fmt::Display) -> DeviceError {
        DeviceError {
            device: self.name.clone(),
            msg: e.to_string(),
        }
    }

    /// The backend slice inside `mem`, after ordering `stream` behind its producer.
    fn input<'a>(
        &self,
        mem: &'a DeviceMem,
        stream: &CudaStream,
    ) -> Result<&'a CudaSlice<f32>, DeviceError> {
        let slice = &mem
            .data
            .downcast_ref::<GpuBuf>()
            .ok_or_else(|| self.fail("buffer from another backend"))?
            .slice;
        // A stream runs its work in order: work recorded on `stream`
        // itself needs no wait.
        if let Some(GpuEvent(ev, on)) = event_of(mem) {
            if *on != stream.cu_stream() as usize {
                stream.wait(ev).map_err(|e| self.fail(e))?;
            }
        }
        Ok(slice)
    }

    /// Like `input` on the compute stream, also checking the buffer's length.
    fn checked<'a>(
        &self,
        mem: &'a DeviceMem,
        len: usize,
    ) -> Result<&'a CudaSlice<f32>, DeviceError> {
        let s = self.input(mem, &self.compute)?;
        if s.len() != len.max(1) {
            return Err(self.fail(format!("buffer holds {} values, want {len}", s.len())));
        }
        Ok(s)
    }

    /// Row-major `op(a) [m,k] x op(b) [k,n]` through cuBLAS's column-major
    /// SGEMM. A row-major `[r, c]` buffer is the column-major `[c, r]`
    /// matrix, i.e. the transpose, so row-major `C = A B` is computed as
    /// column-major `C^T = B^T A^T`: the operands swap, and an operand
    /// stored transposed needs `CUBLAS_OP_T` with its own leading dimension.
    fn gemm(
        &self,
        a: &DeviceMem,
        b: &DeviceMem,
        d: MatmulDims,
        t: Trans,
    ) -> Result<Option<DeviceMem>, DeviceError> {
        let MatmulDims { m, k, n } = d;
        let (sa, sb) = (self.checked(a, m * k)?, self.checked(b, k * n)?);
        if m == 0 || n == 0 || k == 0 {
            // An empty product: zeros (k == 0), or no values at all.
            let out = alloc_out::<f32>(&self.compute, m * n).map_err(|e| self.fail(e))?;
            return self.output(out);
        }
        // SGEMM with beta = 0 writes every value of C without reading it.
        let mut out = alloc_written::<f32>(&self.compute, m * n).map_err(|e| self.fail(e))?;
        let cfg = gemm_config(d, t).map_err(|e| self.fail(e))?;
        // SAFETY: `sa` holds m*k values and `sb` k*n (checked above), `out`
        // m*n; with the operations and leading dimensions above cuBLAS reads
        // op(B^T) as n x k and op(A^T) as k x m and writes n x m (column-
        // major), all within those buffers.
        unsafe { self.blas.lock().gemm(cfg, sb, sa, &mut out) }.map_err(|e| self.fail(e))?;
        self.output(out)
    }

    /// Wraps a kernel's output with an event recorded on the compute stream.
    /// Runs a `[rows, cols]` kernel of `Kernels` (transpose, softmax,
    /// sum_rows) on the compute stream and wraps its result.
    fn rowwise(
        &self,
        a: &DeviceMem,
        r: Rows,
        kernel: RowKernel,
    ) -> Result<Option<DeviceMem>, DeviceError> {
        let sa = self.checked(a, r.rows * r.cols)?;
        let out =
            kernel(&self.kernels, &self.compute, sa, r.rows, r.cols).map_err(|e| self.fail(e))?;
        self.output(out)
    }

    /// An event (from the pool, or new) recorded on `stream` now.
    fn record(&self, stream: &CudaStream) -> Result<GpuEvent, DeviceError> {
        let pooled = self.events.lock().pop();
        let ev = match pooled {
            Some(ev) => ev,
            None => self.ctx.new_event(None).map_err(|e| self.fail(e))?,
        };
        ev.record(stream).map_err(|e| self.fail(e))?;
        let ev = Pooled {
            ev: Some(ev),
            pool: self.events.clone(),
        };
        Ok(GpuEvent(Arc::new(ev), stream.cu_stream() as usize))
    }

    fn output(&self, out: CudaSlice<f32>) -> Result<Option<DeviceMem>, DeviceError> {
        let ev = self.record(&self.compute)?;
        Ok(Some(DeviceMem {
            data: GpuBuf::computed(out),
            ready: Arc::new(ev),
        }))
    }

    /// A page-locked buffer of exactly `len` values, reused when one is free.
    fn staging_buffer(&self, len: usize) -> Result<PinnedHostSlice<f32>, DeviceError> {
        let mut pool = self.staging.lock();
        if let Some(i) = pool.iter().position(|p| p.len() == len) {
            return Ok(pool.remove(i));
        }
        drop(pool);
        // SAFETY: the buffer's contents are uninitialised; `upload` writes
        // all `len` values before the copy reads them.
        unsafe { self.ctx.alloc_pinned::<f32>(len) }.map_err(|e| self.fail(e))
    }
}

/// The cuBLAS arguments of row-major `op(a) [m,k] x op(b) [k,n]` (see
/// `CudaGpu::gemm`): cuBLAS's first operand is `b`, its second `a`.
fn gemm_config(d: MatmulDims, t: Trans) -> Result<GemmConfig<f32>, String> {
    let MatmulDims { m, k, n } = d;
    let dim =
        |x: usize| i32::try_from(x).map_err(|_| format!("dimension {x} too large for cublas"));
    let op = |tr: bool| {
        if tr {
            cublasOperation_t::CUBLAS_OP_T
        } else {
            cublasOperation_t::CUBLAS_OP_N
        }
    };
    Ok(GemmConfig {
        // first operand B^T: b is row-major [k,n] (col-major [n,k] = B^T,
        // ld n), or stored transposed, row-major [n,k] (col-major B, ld k)
        transa: op(t.b),
        // second operand A^T: a is row-major [m,k] (col-major A^T, ld k),
        // or stored transposed, row-major [k,m] (col-major A, ld m)
        transb: op(t.a),
        m: dim(n)?,
        n: dim(m)?,
        k: dim(k)?,
        alpha: 1.0f32,
        lda: dim(if t.b { k } else { n })?,
        ldb: dim(if t.a { m } else { k })?,
        beta: 0.0f32,
        ldc: dim(n)?,
    })
}

fn event_of(mem: &DeviceMem) -> Option<&GpuEvent> {
    mem.ready.as_any().downcast_ref::<GpuEvent>()
}

impl Device for CudaGpu {
    fn name(&self) -> &str {
        &self.name
    }

    fn launches_async(&self) -> bool {
        true
    }

    fn upload(&self, host: &[f32]) -> Result<DeviceMem, DeviceError> {
        if host.is_empty() {
            // Nothing to copy: the buffer's one unused value, on the compute stream.
            let out = alloc_out::<f32>(&self.compute, 0).map_err(|e| self.fail(e))?;
            let ev = self.record(&self.compute)?;
            return Ok(DeviceMem {
                data: GpuBuf::computed(out),
                ready: Arc::new(ev),
            });
        }
        let mut pinned = self.staging_buffer(host.len())?;
        // as_mut_slice waits for the buffer's previous copy to finish
        pinned
            .as_mut_slice()
            .map_err(|e| self.fail(e))?
            .copy_from_slice(host);
        // The copy below writes every value.
        let mut dst = alloc_written::<f32>(&self.copy, host.len()).map_err(|e| self.fail(e))?;
        self.copy
            .memcpy_htod(&pinned, &mut dst)
            .map_err(|e| self.fail(e))?;
        let ev = self.record(&self.copy)?;
        let mut pool = self.staging.lock();
        if pool.len() >= STAGING_BUFFERS {
            pool.remove(0);
        }
        pool.push(pinned);
        // Allocated and written on the copy stream; read (after waiting
        // for `ev`) and freed (after `GpuBuf::drop` waits for it) on the
        // compute stream.
        let buf = GpuBuf {
            slice: hand_to(dst, &self.compute),
            copied: Some(ev.0.clone()),
        };
        Ok(DeviceMem {
            data: Arc::new(buf),
            ready: Arc::new(ev),
        })
    }

    fn download(&self, mem: &DeviceMem, len: usize) -> Result<Vec<f32>, DeviceError> {
        let src = self.input(mem, &self.copy)?;
        if src.len() != len.max(1) {
            return Err(self.fail(format!("buffer holds {} values, want {len}", src.len())));
        }
        if len == 0 {
            return Ok(Vec::new());
        }
        let out = self.copy.clone_dtoh(src).map_err(|e| self.fail(e))?;
        self.copy.synchronize().map_err(|e| self.fail(e))?;
        Ok(out)
    }

    fn matmul(
        &self,
        a: &DeviceMem,
        b: &DeviceMem,
        d: MatmulDims,
    ) -> Result<Option<DeviceMem>, DeviceError> {
        self.gemm(a, b, d, Trans::default())
    }

    fn matmul_t(
        &self,
        a: &DeviceMem,
        b: &DeviceMem,
        d: MatmulDims,
        t: Trans,
    ) -> Result<Option<DeviceMem>, DeviceError> {
        self.gemm(a, b, d, t)
    }

    fn transpose(&self, a: &DeviceMem, r: Rows) -> Result<Option<DeviceMem>, DeviceError> {
        self.rowwise(a, r, Kernels::transpose)
    }

    fn softmax(&self, a: &DeviceMem, r: Rows) -> Result<Option<DeviceMem>, DeviceError> {
        self.rowwise(a, r, Kernels::softmax)
    }

    fn sum(&self, a: &DeviceMem, len: usize) -> Result<Option<f64>, DeviceError> {
        let sa = self.checked(a, len)?;
        let s = self
            .kernels
            .sum(&self.compute, sa, len)
            .map_err(|e| self.fail(e))?;
        Ok(Some(s))
    }

    fn sum_rows(&self, a: &DeviceMem, r: Rows) -> Result<Option<DeviceMem>, DeviceError> {
        self.rowwise(a, r, Kernels::sum_rows)
    }

    fn argmax_rows(&self, a: &DeviceMem, r: Rows) -> Result<Option<Vec<i64>>, DeviceError> {
        let sa = self.checked(a, r.rows * r.cols)?;
        let out = self
            .kernels
            .argmax_rows(&self.compute, sa, r.rows, r.cols)
            .map_err(|e| self.fail(e))?;
        Ok(Some(out))
    }

    fn onehot(&self, labels: &[i64], n: usize) -> Result<Option<DeviceMem>, DeviceError> {
        let Ok(labels) = labels
            .iter()
            .map(|&l| u32::try_from(l))
            .collect::<Result<Vec<u32>, _>>()
        else {
            return Ok(None);
        };
        // The labels travel on the copy stream, like any upload; the
        // compute stream waits for them, reads them, and frees them after
        // the kernel (`hand_to`).
        let dl = if labels.is_empty() {
            alloc_out::<u32>(&self.copy, 0)
        } else {
            self.copy.clone_htod(&labels).map_err(|e| e.to_string())
        }
        .map_err(|e| self.fail(e))?;
        let ev = self.copy.record_event(None).map_err(|e| self.fail(e))?;
        self.compute.wait(&ev).map_err(|e| self.fail(e))?;
        let dl = hand_to(dl, &self.compute);
        let out = self
            .kernels
            .onehot(&self.compute, &dl, labels.len(), n)
            .map_err(|e| self.fail(e))?;
        self.output(out)
    }

    fn unary(
        &self,
        op: UnaryOp,
        a: &DeviceMem,
        _len: usize,
    ) -> Result<Option<DeviceMem>, DeviceError> {
        let sa = self.input(a, &self.compute)?;
        let out = self
            .kernels
            .unary(&self.compute, op, sa)
            .map_err(|e| self.fail(e))?;
        self.output(out)
    }

    fn binary(
        &self,
        op: BinOp,
        a: &DeviceMem,
        b: &DeviceMem,
        layout: Layout,
    ) -> Result<Option<DeviceMem>, DeviceError> {
        let (sa, sb) = (self.input(a, &self.compute)?, self.input(b, &self.compute)?);
        let out = self
            .kernels
            .binary(&self.compute, op, sa, sb, layout)
            .map_err(|e| self.fail(e))?;
        self.output(out)
    }

    fn scalar(
        &self,
        op: BinOp,
        a: &DeviceMem,
        s: f32,
        left: bool,
        _len: usize,
    ) -> Result<Option<DeviceMem>, DeviceError> {
        let sa = self.input(a, &self.compute)?;
        let out = self
            .kernels
            .scalar(&self.compute, op, sa, s, left)
            .map_err(|e| self.fail(e))?;
        self.output(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Column-major SGEMM as cuBLAS defines it, `C = op(A) op(B)` with
    /// alpha 1 and beta 0: the reference the arguments are checked against.
    fn sgemm(c: &GemmConfig<f32>, a: &[f32], b: &[f32]) -> Vec<f32> {
        let (m, n, k) = (c.m as usize, c.n as usize, c.k as usize);
        let (lda, ldb, ldc) = (c.lda as usize, c.ldb as usize, c.ldc as usize);
        let ta = c.transa == cublasOperation_t::CUBLAS_OP_T;
        let tb = c.transb == cublasOperation_t::CUBLAS_OP_T;
        // op(A) is m x k, op(B) is k x n
        let at = |i: usize, p: usize| if ta { a[p + i * lda] } else { a[i + p * lda] };
        let bt = |p: usize, j: usize| if tb { b[j + p * ldb] } else { b[p + j * ldb] };
        let mut out = vec![0.0; ldc * n];
        for j in 0..n {
            for i in 0..m {
                out[i + j * ldc] = (0..k).map(|p| at(i, p) * bt(p, j)).sum();
            }
        }
        out
    }

    fn row_major_transpose(v: &[f32], rows: usize, cols: usize) -> Vec<f32> {
        let mut out = vec![0.0; v.len()];
        for r in 0..rows {
            for c in 0..cols {
                out[c * rows + r] = v[r * cols + c];
            }
        }
        out
    }

    #[test]
    fn gemm_arguments_compute_the_row_major_product_for_every_transpose() {
        let (m, k, n) = (3, 4, 5);
        let a: Vec<f32> = (0..m * k).map(|x| x as f32 * 0.5 - 2.0).collect();
        let b: Vec<f32> = (0..k * n).map(|x| 1.0 - x as f32 * 0.25).collect();
        let mut want = vec![0.0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                want[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
            }
        }
        for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
            // an operand with its flag set is stored transposed
            let sa = if ta {
                row_major_transpose(&a, m, k)
            } else {
                a.clone()
            };
            let sb = if tb {
                row_major_transpose(&b, k, n)
            } else {
                b.clone()
            };
            let cfg = gemm_config(MatmulDims { m, k, n }, Trans { a: ta, b: tb }).unwrap();
            // cuBLAS's first operand is b, its second a (see CudaGpu::gemm)
            let got = sgemm(&cfg, &sb, &sa);
            assert_eq!(got, want, "ta {ta} tb {tb}");
        }
    }

    #[test]
    fn gemm_rejects_dimensions_past_i32() {
        let d = MatmulDims {
            m: 1 << 31,
            k: 1,
            n: 1,
        };
        assert_eq!(
            gemm_config(d, Trans::default()).unwrap_err(),
            "dimension 2147483648 too large for cublas"
        );
    }
}
