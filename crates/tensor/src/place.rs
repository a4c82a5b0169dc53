//! Devices from the tensor side: `devices()`, `device(t)`, `to(t, dev)`,
//! the device `on "auto"` picks (`auto_device`), and the helpers kernels
//! use to run where their operands live.
//!
//! A kernel first finds the one device all its operands share
//! (`common_device`; operands on different devices are an error). On the
//! host it runs the CPU loop. On a device it offers the work to the
//! backend's hook; when the backend declines (`Ok(None)`), it downloads the
//! operands, runs the CPU loop and uploads the result: a host fallback
//! (`fallback.rs`; `host_kernel` for the kernels that have no hook).

use std::sync::Arc;

use super::fallback;
use super::{transpose_copy, DeviceTransposed, Storage, Tensor, TensorError};
use crate::device::{self, Device, DeviceBuffer, DeviceMem, Rows};

/// `devices()`: the present devices' names, `"cpu"` first.
pub fn devices() -> Vec<String> {
    device::devices()
}

/// The device `go ... on "auto"` places the `turn`-th task so placed on
/// (counting from 0), among `devices` (as `devices()` lists them, `"cpu"`
/// first): the GPUs in turn, or `"cpu"` when there is none
/// (docs/language.md, "Placement").
pub fn auto_device(devices: &[String], turn: usize) -> &str {
    let gpus: Vec<&String> = devices.iter().filter(|d| *d != "cpu").collect();
    match gpus.len() {
        0 => "cpu",
        n => gpus[turn % n],
    }
}

/// `device(t)`: the name of the device holding `t`.
pub fn device(t: &Tensor) -> String {
    t.device_name().to_string()
}

/// `to(t, dev)`: a copy of `t` on the named device. On a GPU the copy is
/// asynchronous; the result's `ready()` (and every kernel using it) waits
/// for it. Fails with `device "NAME" is not present` for an absent device.
pub fn to(t: &Tensor, dev: &str) -> Result<Tensor, TensorError> {
    match device::lookup(dev)? {
        None => t.to_host(),
        Some(d) => to_device(t, &d),
    }
}

/// Copies `t` to a given backend device (also usable with devices that are
/// not in the registry, e.g. test doubles).
pub fn to_device(t: &Tensor, dev: &Arc<dyn Device>) -> Result<Tensor, TensorError> {
    if t.device_name() == dev.name() {
        return Ok(t.clone());
    }
    let host = t.to_host()?;
    let values = host.host_values().unwrap_or(&[]);
    let mem = dev.upload(values)?;
    Ok(wrap(t.shape().clone(), dev, mem))
}

/// A tensor over backend memory on `dev`.
pub(crate) fn wrap(shape: super::Shape, dev: &Arc<dyn Device>, mem: DeviceMem) -> Tensor {
    let len = shape.numel();
    Tensor::on_device(
        shape,
        DeviceBuffer {
            device: dev.clone(),
            mem,
            len,
        },
    )
}

/// The device every operand lives on: `None` for the host.
pub(crate) fn common_device(
    op: &'static str,
    ts: &[&Tensor],
) -> Result<Option<Arc<dyn Device>>, TensorError> {
    let mut found: Option<&Tensor> = None;
    for t in ts {
        match found {
            None => found = Some(t),
            Some(f) if f.device_name() != t.device_name() => {
                return Err(TensorError::DeviceMismatch {
                    op,
                    a: f.device_name().to_string(),
                    b: t.device_name().to_string(),
                })
            }
            Some(_) => {}
        }
    }
    Ok(match found.map(Tensor::storage) {
        Some(Storage::Device(b)) => Some(b.device.clone()),
        Some(Storage::DeviceTransposed(t)) => Some(t.src.device.clone()),
        _ => None,
    })
}

/// The row-major backend memory of a device tensor (`None` on the host);
/// a lazy device transpose is made dense first (once).
pub(crate) fn mem(t: &Tensor) -> Result<Option<DeviceMem>, TensorError> {
    Ok(match t.storage() {
        Storage::Device(b) => Some(b.mem.clone()),
        Storage::DeviceTransposed(tr) => Some(dense(tr)?.mem.clone()),
        Storage::Host(_) | Storage::Transposed(_) => None,
    })
}

/// A device tensor as a matrix product operand: its memory and whether
/// that memory holds the transpose (a lazy device transpose's source).
pub(crate) fn gemm_operand(t: &Tensor) -> Option<(DeviceMem, bool)> {
    match t.storage() {
        Storage::Device(b) => Some((b.mem.clone(), false)),
        Storage::DeviceTransposed(tr) => Some((tr.src.mem.clone(), true)),
        Storage::Host(_) | Storage::Transposed(_) => None,
    }
}

/// The row-major copy of a lazy device transpose, made on first use by the
/// backend's `transpose` hook, or on the host when the backend declines.
fn dense(t: &DeviceTransposed) -> Result<&DeviceBuffer, TensorError> {
    if let Some(b) = t.dense.get() {
        return Ok(b);
    }
    let d = &t.src.device;
    let shape = Rows {
        rows: t.rows,
        cols: t.cols,
    };
    let mem = match d.transpose(&t.src.mem, shape)? {
        Some(m) => m,
        None => {
            let fb = fallback::begin("transpose", d)?;
            let src = t.src.download()?;
            let fb = fb.downloaded();
            let m = d.upload(&transpose_copy(&src, t.rows, t.cols))?;
            fb.uploaded();
            m
        }
    };
    let buf = DeviceBuffer {
        device: d.clone(),
        mem,
        len: t.rows * t.cols,
    };
    // two threads may race here; either copy is correct, the first is kept
    Ok(t.dense.get_or_init(|| buf))
}

/// Runs a host kernel on `t`: as it is for a host tensor; for a device
/// tensor as a fallback (downloaded, run, the result uploaded back).
pub(crate) fn host_kernel(
    op: &'static str,
    t: &Tensor,
    run: impl FnOnce(Tensor) -> Result<Tensor, TensorError>,
) -> Result<Tensor, TensorError> {
    match common_device(op, &[t])? {
        None => run(t.clone()),
        Some(d) => {
            let fb = fallback::begin(op, &d)?;
            let h = t.to_host()?;
            fb.downloaded().upload(run(h)?)
        }
    }
}
