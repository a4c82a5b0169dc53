//! The CUDA backend's kernels: CUDA C compiled at run time by NVRTC when a
//! device is opened (`SOURCE`, every kernel in one module), and the
//! launches of the elementwise ones; the row-wise kernels' launches are in
//! `cuda_rowwise.rs`.
//!
//! Elementwise: one kernel per family (`unary`, `binary`, `scalar`) with the
//! operator passed as an integer. Operator codes match the order of
//! `UnaryOp` and `BinOp`; layouts match `Layout` (0 same shape, 1 row on the
//! right, 2 row on the left). One thread per output element, 256 threads
//! per block, a grid-stride loop so any length fits in the grid limits.
//!
//! Row-wise (`weft_transpose`, `weft_softmax`, `weft_sum_*`,
//! `weft_sum_rows`, `weft_argmax_rows`, `weft_onehot`): each mirrors its CPU
//! kernel in `crates/tensor/src/` (same order of operations where one thread owns
//! an output; tree reductions in shared memory where a block does). The
//! transpose is the classic 32x32 shared-memory tile with one padding
//! column against bank conflicts (NVIDIA's "An Efficient Matrix Transpose in
//! CUDA C/C++"); block reductions are the shared-memory tree of Harris,
//! "Optimizing Parallel Reduction in CUDA". NVRTC includes no headers, so
//! the source uses only built-ins (`-inf` is spelt `__int_as_float`).

use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg,
    ValidAsZeroBits,
};
use cudarc::nvrtc::{compile_ptx, compile_ptx_with_opts, CompileOptions, Ptx};

use super::{BinOp, Layout, UnaryOp};

/// The CUDA C source of every elementwise kernel.
pub const SOURCE: &str = r#"
__device__ __forceinline__ float weft_bin(int op, float x, float y) {
    switch (op) {
    case 0: return x + y;
    case 1: return x - y;
    case 2: return x * y;
    default: return x / y;
    }
}

extern "C" __global__ void weft_unary(int op, const float* a, float* out, unsigned int n) {
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float x = a[i];
        float r;
        switch (op) {
        case 0: r = -x; break;
        case 1: r = x > 0.0f ? x : 0.0f; break;
        case 2: r = x > 0.0f ? 1.0f : 0.0f; break;
        case 3: r = expf(x); break;
        default: r = logf(x); break;
        }
        out[i] = r;
    }
}

extern "C" __global__ void weft_binary(int op, int layout, const float* a, const float* b,
                                       float* out, unsigned int n, unsigned int cols) {
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float x = layout == 2 ? a[i % cols] : a[i];
        float y = layout == 1 ? b[i % cols] : b[i];
        out[i] = weft_bin(op, x, y);
    }
}

extern "C" __global__ void weft_scalar(int op, int scalar_left, const float* a, float s,
                                       float* out, unsigned int n) {
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = scalar_left ? weft_bin(op, s, a[i]) : weft_bin(op, a[i], s);
    }
}

typedef unsigned long long weft_u64;
#define WEFT_THREADS 256
#define WEFT_TILE 32

/* out [cols, rows] = transpose of a [rows, cols]; blocks of 32 x 8 threads,
   each moving 32x32 tiles (grid-stride over tiles). */
extern "C" __global__ void weft_transpose(const float* a, float* out, unsigned int rows,
                                          unsigned int cols) {
    __shared__ float tile[WEFT_TILE][WEFT_TILE + 1];
    for (weft_u64 ty = blockIdx.y; ty * WEFT_TILE < rows; ty += gridDim.y) {
        for (weft_u64 tx = blockIdx.x; tx * WEFT_TILE < cols; tx += gridDim.x) {
            weft_u64 c = tx * WEFT_TILE + threadIdx.x;
            for (unsigned int j = threadIdx.y; j < WEFT_TILE; j += blockDim.y) {
                weft_u64 r = ty * WEFT_TILE + j;
                if (r < rows && c < cols) tile[j][threadIdx.x] = a[r * cols + c];
            }
            __syncthreads();
            weft_u64 r = ty * WEFT_TILE + threadIdx.x;
            for (unsigned int j = threadIdx.y; j < WEFT_TILE; j += blockDim.y) {
                weft_u64 oc = tx * WEFT_TILE + j;
                if (r < rows && oc < cols) out[oc * rows + r] = tile[threadIdx.x][j];
            }
            __syncthreads();
        }
    }
}

/* Block-wide reductions over WEFT_THREADS threads; every thread gets the
   result. `sh` holds WEFT_THREADS values; the block must call these together. */
struct WeftMax {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct WeftAdd {
    template <typename T> __device__ T operator()(T a, T b) const { return a + b; }
};

template <typename T, typename Op>
__device__ T weft_block_reduce(T v, T* sh, Op op) {
    sh[threadIdx.x] = v;
    __syncthreads();
    for (unsigned int s = WEFT_THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] = op(sh[threadIdx.x], sh[threadIdx.x + s]);
        __syncthreads();
    }
    T r = sh[0];
    __syncthreads();
    return r;
}

__device__ float weft_block_max(float v, float* sh) { return weft_block_reduce(v, sh, WeftMax()); }
__device__ float weft_block_sum(float v, float* sh) { return weft_block_reduce(v, sh, WeftAdd()); }
__device__ double weft_block_sum_f64(double v, double* sh) {
    return weft_block_reduce(v, sh, WeftAdd());
}

/* Row-wise softmax, one block per row (grid-stride over rows): the row's
   maximum (fmaxf ignores NaN, as f32::max does), then exp(x - max), then
   each value times 1 / (sum of the exps), as the CPU kernel does. */
extern "C" __global__ void weft_softmax(const float* a, float* out, unsigned int rows,
                                        unsigned int cols) {
    __shared__ float sh[WEFT_THREADS];
    for (weft_u64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* x = a + r * cols;
        float* y = out + r * cols;
        float m = __int_as_float(0xff800000); /* -inf */
        for (unsigned int j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, x[j]);
        m = weft_block_max(m, sh);
        float t = 0.0f;
        for (unsigned int j = threadIdx.x; j < cols; j += blockDim.x) {
            float e = expf(x[j] - m);
            y[j] = e;
            t += e;
        }
        float inv = 1.0f / weft_block_sum(t, sh);
        for (unsigned int j = threadIdx.x; j < cols; j += blockDim.x) y[j] *= inv;
    }
}

/* Sum of all values in f64, pass 1: one partial sum per block. */
extern "C" __global__ void weft_sum_partial(const float* a, double* partial, weft_u64 n) {
    __shared__ double sh[WEFT_THREADS];
    double t = 0.0;
    for (weft_u64 i = (weft_u64)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (weft_u64)gridDim.x * blockDim.x) {
        t += (double)a[i];
    }
    t = weft_block_sum_f64(t, sh);
    if (threadIdx.x == 0) partial[blockIdx.x] = t;
}

/* Pass 2, one block: the sum of the `n` partial sums into out[0]. */
extern "C" __global__ void weft_sum_final(const double* partial, double* out, unsigned int n) {
    __shared__ double sh[WEFT_THREADS];
    double t = 0.0;
    for (unsigned int i = threadIdx.x; i < n; i += blockDim.x) t += partial[i];
    t = weft_block_sum_f64(t, sh);
    if (threadIdx.x == 0) out[0] = t;
}

/* out [cols] = the column sums of a [rows, cols]: one thread per column
   adding the rows in order, as the CPU kernel does (so results match
   exactly); neighbouring threads read neighbouring values. */
extern "C" __global__ void weft_sum_rows(const float* a, float* out, unsigned int rows,
                                         unsigned int cols) {
    for (weft_u64 c = (weft_u64)blockIdx.x * blockDim.x + threadIdx.x; c < cols;
         c += (weft_u64)gridDim.x * blockDim.x) {
        float t = 0.0f;
        for (weft_u64 r = 0; r < rows; r++) t += a[r * cols + c];
        out[c] = t;
    }
}

/* out [rows] = index of each row's largest value, the first on ties; a NaN
   never compares greater, so it wins only in column 0. cols > 0. */
extern "C" __global__ void weft_argmax_rows(const float* a, unsigned int* out,
                                            unsigned int rows, unsigned int cols) {
    for (weft_u64 r = (weft_u64)blockIdx.x * blockDim.x + threadIdx.x; r < rows;
         r += (weft_u64)gridDim.x * blockDim.x) {
        const float* x = a + r * cols;
        unsigned int best = 0;
        float bv = x[0];
        for (unsigned int j = 1; j < cols; j++) {
            if (x[j] > bv) {
                best = j;
                bv = x[j];
            }
        }
        out[r] = best;
    }
}

/* out [rows, n], zeroed by the caller: a 1 at each row's label (< n). */
extern "C" __global__ void weft_onehot(const unsigned int* labels, float* out,
                                       unsigned int rows, unsigned int n) {
    for (weft_u64 r = (weft_u64)blockIdx.x * blockDim.x + threadIdx.x; r < rows;
         r += (weft_u64)gridDim.x * blockDim.x) {
        out[r * n + labels[r]] = 1.0f;
    }
}
"#;

/// Every kernel entry point in `SOURCE`, in the order `Kernels::load` loads them.
pub const ENTRY_POINTS: &[&str] = &[
    "weft_unary",
    "weft_binary",
    "weft_scalar",
    "weft_transpose",
    "weft_softmax",
    "weft_sum_partial",
    "weft_sum_final",
    "weft_sum_rows",
    "weft_argmax_rows",
    "weft_onehot",
];

/// The loaded kernels of one device.
#[derive(Debug)]
pub struct Kernels {
    unary: CudaFunction,
    binary: CudaFunction,
    scalar: CudaFunction,
    pub(super) transpose: CudaFunction,
    pub(super) softmax: CudaFunction,
    pub(super) sum_partial: CudaFunction,
    pub(super) sum_final: CudaFunction,
    pub(super) sum_rows: CudaFunction,
    pub(super) argmax_rows: CudaFunction,
    pub(super) onehot: CudaFunction,
}

/// A kernel failure, as text for `DeviceError`.
pub type KernelResult<T> = Result<T, String>;

impl Kernels {
    /// Compiles `SOURCE` with NVRTC for the device's compute capability
    /// (NVRTC's default architecture when it does not know that one) and
    /// loads it into `ctx`.
    pub fn load(ctx: &Arc<CudaContext>) -> KernelResult<Kernels> {
        let for_device = ctx
            .compute_capability()
            .ok()
            .and_then(|(major, minor)| compile(&format!("compute_{major}{minor}")).ok());
        let ptx = match for_device {
            Some(p) => p,
            None => compile_ptx(SOURCE).map_err(|e| format!("nvrtc: {e}"))?,
        };
        let module = ctx
            .load_module(ptx)
            .map_err(|e| format!("load module: {e}"))?;
        let f = |name: &str| {
            module
                .load_function(name)
                .map_err(|e| format!("load {name}: {e}"))
        };
        Ok(Kernels {
            unary: f("weft_unary")?,
            binary: f("weft_binary")?,
            scalar: f("weft_scalar")?,
            transpose: f("weft_transpose")?,
            softmax: f("weft_softmax")?,
            sum_partial: f("weft_sum_partial")?,
            sum_final: f("weft_sum_final")?,
            sum_rows: f("weft_sum_rows")?,
            argmax_rows: f("weft_argmax_rows")?,
            onehot: f("weft_onehot")?,
        })
    }

    /// `out = op(a)` over `a.len()` values (an empty tensor's one unused
    /// value included, which is harmless).
    pub fn unary(
        &self,
        s: &Arc<CudaStream>,
        op: UnaryOp,
        a: &CudaSlice<f32>,
    ) -> KernelResult<CudaSlice<f32>> {
        let n = len_u32(a.len())?;
        let mut out = alloc_written::<f32>(s, a.len())?;
        let code = op as i32;
        let mut b = s.launch_builder(&self.unary);
        b.arg(&code).arg(a).arg(&mut out).arg(&n);
        // SAFETY: the argument list matches weft_unary's signature (int, const
        // float*, float*, unsigned int); `a` and `out` hold `n` values and the
        // grid-stride loop never indexes past `n`.
        unsafe { b.launch(config(n)) }.map_err(|e| e.to_string())?;
        Ok(out)
    }

    /// `out = a op b` with the given layout.
    pub fn binary(
        &self,
        s: &Arc<CudaStream>,
        op: BinOp,
        a: &CudaSlice<f32>,
        b: &CudaSlice<f32>,
        layout: Layout,
    ) -> KernelResult<CudaSlice<f32>> {
        let (len, cols, code) = match layout {
            Layout::Same { len } => (len, 1, 0i32),
            Layout::RowRight { m, n } => (m * n, n, 1),
            Layout::RowLeft { m, n } => (m * n, n, 2),
        };
        let (n, cols) = (len_u32(len)?, len_u32(cols.max(1))?);
        let mut out = alloc_written::<f32>(s, len)?;
        let op = op as i32;
        let mut l = s.launch_builder(&self.binary);
        l.arg(&op)
            .arg(&code)
            .arg(a)
            .arg(b)
            .arg(&mut out)
            .arg(&n)
            .arg(&cols);
        // SAFETY: the arguments match weft_binary's signature; for layout 0
        // both inputs hold `n` values, for layout 1 `a` holds `n` and `b`
        // `cols`, for layout 2 the reverse (checked by the tensor layer's
        // shape rules), and every index is `< n` or taken `% cols`.
        unsafe { l.launch(config(n)) }.map_err(|e| e.to_string())?;
        Ok(out)
    }

    /// `out = a op s` (or `s op a`).
    pub fn scalar(
        &self,
        st: &Arc<CudaStream>,
        op: BinOp,
        a: &CudaSlice<f32>,
        s: f32,
        left: bool,
    ) -> KernelResult<CudaSlice<f32>> {
        let n = len_u32(a.len())?;
        let mut out = alloc_written::<f32>(st, a.len())?;
        let (op, left) = (op as i32, i32::from(left));
        let mut l = st.launch_builder(&self.scalar);
        l.arg(&op).arg(&left).arg(a).arg(&s).arg(&mut out).arg(&n);
        // SAFETY: the arguments match weft_scalar's signature; `a` and `out`
        // hold `n` values and no index reaches `n`.
        unsafe { l.launch(config(n)) }.map_err(|e| e.to_string())?;
        Ok(out)
    }
}

/// Compiles `SOURCE` to PTX for a virtual architecture such as `compute_90`.
/// Needs NVRTC only (no GPU, no driver); the caller checked that libnvrtc
/// loads (cudarc panics when it does not).
pub fn compile(arch: &str) -> KernelResult<Ptx> {
    let opts = CompileOptions {
        options: vec![format!("--gpu-architecture={arch}")],
        ..CompileOptions::default()
    };
    compile_ptx_with_opts(SOURCE, opts).map_err(|e| format!("nvrtc: {e}"))
}

/// A zeroed device buffer for `len` values, of at least one value: CUDA
/// cannot allocate zero bytes, so the buffer of an empty tensor holds one
/// unused value (every length check and launch uses the logical length).
pub(super) fn alloc_out<T: DeviceRepr + ValidAsZeroBits>(
    s: &Arc<CudaStream>,
    len: usize,
) -> KernelResult<CudaSlice<T>> {
    s.alloc_zeros::<T>(len.max(1)).map_err(|e| e.to_string())
}

/// A device buffer for `len` values (at least one, as `alloc_out`) whose
/// contents are left as they are: for an output every element of which
/// the kernel that fills it writes (the elementwise maps, transpose,
/// softmax, the reductions, an SGEMM with `beta = 0` and `k > 0`, a copy
/// of the whole buffer). Saves `alloc_out`'s memset, a second driver call
/// and a second operation on the stream for every kernel.
pub(super) fn alloc_written<T: DeviceRepr>(
    s: &Arc<CudaStream>,
    len: usize,
) -> KernelResult<CudaSlice<T>> {
    // SAFETY: the caller's kernel (or copy) writes all `len` values before
    // anything reads them, and the unused value of an empty tensor's
    // buffer is never read; a `T: DeviceRepr` may hold any bits on the
    // device until then (the host never sees them).
    unsafe { s.alloc::<T>(len.max(1)) }.map_err(|e| e.to_string())
}

pub(super) fn len_u32(n: usize) -> KernelResult<u32> {
    u32::try_from(n).map_err(|_| format!("{n} elements exceed a kernel's index range"))
}

pub(super) fn config(n: u32) -> LaunchConfig {
    const THREADS: u32 = 256;
    LaunchConfig {
        grid_dim: (n.div_ceil(THREADS).clamp(1, 65_535), 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}
