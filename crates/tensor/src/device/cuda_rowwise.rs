//! Launches of the CUDA backend's row-wise kernels (transpose, softmax,
//! reductions, argmax, one-hot); their CUDA C is in `cuda_kernels::SOURCE`.
//!
//! Every launch here is asynchronous on the stream it is given, except the
//! two that return host values (`sum`, `argmax_rows`): those copy their few
//! result values back on the same stream, record an event after the copy
//! and wait for that event only (not for later work on the stream).
//! Launch shapes: block reductions use exactly `WEFT_THREADS` (256) threads
//! per block, as their shared-memory trees assume; grids stay within the
//! 65,535 limit and the kernels loop (grid-stride) over the rest.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg};

use super::cuda_kernels::{alloc_out, alloc_written, config, len_u32, KernelResult, Kernels};

/// Threads per block of the block-reduction kernels (`WEFT_THREADS`).
const THREADS: u32 = 256;
/// Most blocks (and so partial sums) of pass 1 of `sum`.
const SUM_BLOCKS: u32 = 1024;
/// Grid limit used for the grid-stride kernels' y and x dimensions.
const GRID_MAX: u32 = 65_535;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl Kernels {
    /// `out [cols, rows]` = the transpose of `a [rows, cols]`.
    pub fn transpose(
        &self,
        s: &Arc<CudaStream>,
        a: &CudaSlice<f32>,
        rows: usize,
        cols: usize,
    ) -> KernelResult<CudaSlice<f32>> {
        let (r, c) = dims(rows, cols)?;
        let mut out = alloc_written::<f32>(s, rows * cols)?;
        if rows == 0 || cols == 0 {
            return Ok(out);
        }
        let cfg = LaunchConfig {
            grid_dim: (
                c.div_ceil(32).min(GRID_MAX),
                r.div_ceil(32).min(GRID_MAX),
                1,
            ),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        let mut l = s.launch_builder(&self.transpose);
        l.arg(a).arg(&mut out).arg(&r).arg(&c);
        // SAFETY: arguments match weft_transpose(const float*, float*, uint,
        // uint); `a` and `out` hold rows * cols values and every index is
        // checked against rows and cols.
        unsafe { l.launch(cfg) }.map_err(err)?;
        Ok(out)
    }

    /// Row-wise softmax of `a [rows, cols]`.
    pub fn softmax(
        &self,
        s: &Arc<CudaStream>,
        a: &CudaSlice<f32>,
        rows: usize,
        cols: usize,
    ) -> KernelResult<CudaSlice<f32>> {
        let (r, c) = dims(rows, cols)?;
        let mut out = alloc_written::<f32>(s, rows * cols)?;
        if rows == 0 || cols == 0 {
            return Ok(out);
        }
        let mut l = s.launch_builder(&self.softmax);
        l.arg(a).arg(&mut out).arg(&r).arg(&c);
        // SAFETY: arguments match weft_softmax(const float*, float*, uint,
        // uint); both buffers hold rows * cols values; the block size is the
        // WEFT_THREADS its shared-memory reductions assume.
        unsafe { l.launch(blocks(r)) }.map_err(err)?;
        Ok(out)
    }

    /// The sum of the first `len` values of `a`, accumulated in f64, on the host.
    pub fn sum(&self, s: &Arc<CudaStream>, a: &CudaSlice<f32>, len: usize) -> KernelResult<f64> {
        if len == 0 {
            return Ok(0.0);
        }
        let n = len as u64;
        let nblocks = len.div_ceil(THREADS as usize).clamp(1, SUM_BLOCKS as usize) as u32;
        let mut partial = alloc_written::<f64>(s, nblocks as usize)?;
        let mut out = alloc_written::<f64>(s, 1)?;
        let mut l = s.launch_builder(&self.sum_partial);
        l.arg(a).arg(&mut partial).arg(&n);
        // SAFETY: arguments match weft_sum_partial(const float*, double*,
        // u64); `a` holds at least n values (checked by the caller); block b writes partial[b] only, and
        // `partial` has one slot per block of the grid.
        unsafe { l.launch(blocks(nblocks)) }.map_err(err)?;
        let mut l = s.launch_builder(&self.sum_final);
        l.arg(&partial).arg(&mut out).arg(&nblocks);
        // SAFETY: arguments match weft_sum_final(const double*, double*,
        // uint); `partial` holds nblocks values and one block writes out[0].
        unsafe { l.launch(blocks(1)) }.map_err(err)?;
        Ok(download(s, &out)?[0])
    }

    /// The `[cols]` column sums of `a [rows, cols]`.
    pub fn sum_rows(
        &self,
        s: &Arc<CudaStream>,
        a: &CudaSlice<f32>,
        rows: usize,
        cols: usize,
    ) -> KernelResult<CudaSlice<f32>> {
        let (r, c) = dims(rows, cols)?;
        let mut out = alloc_written::<f32>(s, cols)?;
        if cols == 0 {
            return Ok(out);
        }
        let mut l = s.launch_builder(&self.sum_rows);
        l.arg(a).arg(&mut out).arg(&r).arg(&c);
        // SAFETY: arguments match weft_sum_rows(const float*, float*, uint,
        // uint); `a` holds rows * cols values, `out` cols, and thread c
        // writes out[c] only.
        unsafe { l.launch(config(c)) }.map_err(err)?;
        Ok(out)
    }

    /// For each row of `a [rows, cols]` (`cols > 0`), its argmax, on the host.
    pub fn argmax_rows(
        &self,
        s: &Arc<CudaStream>,
        a: &CudaSlice<f32>,
        rows: usize,
        cols: usize,
    ) -> KernelResult<Vec<i64>> {
        let (r, c) = dims(rows, cols)?;
        if rows == 0 {
            return Ok(Vec::new());
        }
        if cols == 0 {
            return Err("argmax_rows of empty rows".into());
        }
        let mut out = alloc_written::<u32>(s, rows)?;
        let mut l = s.launch_builder(&self.argmax_rows);
        l.arg(a).arg(&mut out).arg(&r).arg(&c);
        // SAFETY: arguments match weft_argmax_rows(const float*, uint*, uint,
        // uint); `a` holds rows * cols values with cols > 0, `out` rows.
        unsafe { l.launch(config(r)) }.map_err(err)?;
        Ok(download(s, &out)?.into_iter().map(i64::from).collect())
    }

    /// `[rows, n]` one-hot rows. `labels` is already on the device and
    /// holds `rows` values, each `< n`.
    pub fn onehot(
        &self,
        s: &Arc<CudaStream>,
        labels: &CudaSlice<u32>,
        rows: usize,
        n: usize,
    ) -> KernelResult<CudaSlice<f32>> {
        let (r, c) = dims(rows, n)?;
        let mut out = alloc_out::<f32>(s, rows * n)?;
        if rows == 0 || n == 0 {
            return Ok(out);
        }
        let mut l = s.launch_builder(&self.onehot);
        l.arg(labels).arg(&mut out).arg(&r).arg(&c);
        // SAFETY: arguments match weft_onehot(const uint*, float*, uint,
        // uint); `labels` holds rows values, each < n (checked by the tensor
        // layer), and `out` rows * n.
        unsafe { l.launch(config(r)) }.map_err(err)?;
        Ok(out)
    }
}

/// `(rows, cols)` as kernel arguments; fails when either, or the element
/// count `rows * cols`, exceeds a kernel's `u32` index range.
fn dims(rows: usize, cols: usize) -> KernelResult<(u32, u32)> {
    let elems = rows
        .checked_mul(cols)
        .ok_or_else(|| format!("{rows} x {cols} elements exceed a kernel's index range"))?;
    len_u32(elems)?;
    Ok((len_u32(rows)?, len_u32(cols)?))
}

/// Copies a small result back on stream `s` and waits for that copy only
/// (an event recorded after it), not for later work on the stream.
fn download<T: DeviceRepr>(s: &Arc<CudaStream>, out: &CudaSlice<T>) -> KernelResult<Vec<T>> {
    let host = s.clone_dtoh(out).map_err(err)?;
    s.record_event(None)
        .map_err(err)?
        .synchronize()
        .map_err(err)?;
    Ok(host)
}

/// `n` blocks (at most the grid limit) of `THREADS` threads, for the
/// block-per-row and block-reduction kernels.
fn blocks(n: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.clamp(1, GRID_MAX), 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}
