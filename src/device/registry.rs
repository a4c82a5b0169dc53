//! The process-wide device list, probed once on first use.
//!
//! `"cpu"` is always first; then every device each compiled-in backend
//! found. A backend that cannot start (no driver) contributes a note
//! instead of devices, so a machine without a GPU runs CPU-only.

use std::sync::{Arc, OnceLock};

use super::{cuda, Device};
use crate::tensor::TensorError;

struct Registry {
    devices: Vec<Arc<dyn Device>>,
    notes: Vec<String>,
}

fn registry() -> &'static Registry {
    static REG: OnceLock<Registry> = OnceLock::new();
    REG.get_or_init(|| {
        let probe = cuda::probe();
        Registry {
            devices: probe.devices,
            notes: probe.note.into_iter().collect(),
        }
    })
}

/// The names of the present devices, starting with `"cpu"`.
pub fn devices() -> Vec<String> {
    let mut names = vec!["cpu".to_string()];
    names.extend(registry().devices.iter().map(|d| d.name().to_string()));
    names
}

/// Why a backend found no devices (e.g. `cuda: libcuda.so.1 cannot be
/// loaded`), for the command line to show on request.
pub fn backend_notes() -> &'static [String] {
    &registry().notes
}

/// The device of this name: `Ok(None)` for `"cpu"`, an error naming the
/// device when it is not present.
pub fn lookup(name: &str) -> Result<Option<Arc<dyn Device>>, TensorError> {
    if name == "cpu" {
        return Ok(None);
    }
    registry()
        .devices
        .iter()
        .find(|d| d.name() == name)
        .cloned()
        .map(Some)
        .ok_or_else(|| TensorError::DeviceNotPresent(name.to_string()))
}
