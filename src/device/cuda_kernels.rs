//! The CUDA backend's elementwise kernels: CUDA C compiled at run time by
//! NVRTC when a device is opened, one kernel per family (`unary`, `binary`,
//! `scalar`) with the operator passed as an integer, and their launches.
//!
//! Operator codes match the order of `UnaryOp` and `BinOp`; layouts match
//! `Layout` (0 same shape, 1 row on the right, 2 row on the left). One
//! thread per output element, 256 threads per block, a grid-stride loop so
//! any length fits in the grid limits.

use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::{compile_ptx, compile_ptx_with_opts, CompileOptions};

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
"#;

/// The loaded kernels of one device.
#[derive(Debug)]
pub struct Kernels {
    unary: CudaFunction,
    binary: CudaFunction,
    scalar: CudaFunction,
}

/// A kernel failure, as text for `DeviceError`.
pub type KernelResult<T> = Result<T, String>;

impl Kernels {
    /// Compiles `SOURCE` with NVRTC for the device's compute capability
    /// (NVRTC's default architecture when it does not know that one) and
    /// loads it into `ctx`.
    pub fn load(ctx: &Arc<CudaContext>) -> KernelResult<Kernels> {
        let for_device = ctx.compute_capability().ok().and_then(|(major, minor)| {
            let opts = CompileOptions {
                options: vec![format!("--gpu-architecture=compute_{major}{minor}")],
                ..CompileOptions::default()
            };
            compile_ptx_with_opts(SOURCE, opts).ok()
        });
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
        })
    }

    /// `out = op(a)` over `a.len()` values.
    pub fn unary(
        &self,
        s: &Arc<CudaStream>,
        op: UnaryOp,
        a: &CudaSlice<f32>,
    ) -> KernelResult<CudaSlice<f32>> {
        let n = len_u32(a.len())?;
        let mut out = s.alloc_zeros::<f32>(a.len()).map_err(|e| e.to_string())?;
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
        let mut out = s.alloc_zeros::<f32>(len).map_err(|e| e.to_string())?;
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
        let mut out = st.alloc_zeros::<f32>(a.len()).map_err(|e| e.to_string())?;
        let (op, left) = (op as i32, i32::from(left));
        let mut l = st.launch_builder(&self.scalar);
        l.arg(&op).arg(&left).arg(a).arg(&s).arg(&mut out).arg(&n);
        // SAFETY: the arguments match weft_scalar's signature; `a` and `out`
        // hold `n` values and no index reaches `n`.
        unsafe { l.launch(config(n)) }.map_err(|e| e.to_string())?;
        Ok(out)
    }
}

fn len_u32(n: usize) -> KernelResult<u32> {
    u32::try_from(n).map_err(|_| format!("{n} elements exceed a kernel's index range"))
}

fn config(n: u32) -> LaunchConfig {
    const THREADS: u32 = 256;
    LaunchConfig {
        grid_dim: (n.div_ceil(THREADS).clamp(1, 65_535), 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}
